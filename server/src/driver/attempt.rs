//! One attempt of a platform call as the platform task runs it: to its end, whatever the
//! call does (a panic or a deadline passing is a failure naming the platform), and how it
//! ended for the status page.

use std::time::Duration;

use besluitbron_core::PlatformId;
use besluitbron_core::path::Outcome;

use super::upstream::{UpstreamFuture, UpstreamOutcome};
use crate::metrics::activity::AttemptEnd;
use crate::platforms::http::{PlatformError, bounded_text};

/// One attempt of a platform call, to its end: the platform's outcome; a panic in the call
/// (caught where it runs, no task of its own) or the attempt's deadline passing are failures
/// that name the platform. A call past its deadline is dropped, which cancels it.
pub(super) async fn run_attempt(platform: PlatformId, call: UpstreamFuture, limit: Duration) -> UpstreamOutcome {
    use futures::FutureExt as _;
    match tokio::time::timeout(limit, std::panic::AssertUnwindSafe(call).catch_unwind()).await {
        Ok(Ok(outcome)) => outcome,
        Ok(Err(panic)) => Outcome::Failed {
            error: PlatformError::Internal {
                platform,
                detail: format!(
                    "the platform call panicked: {}",
                    panic
                        .downcast_ref::<&str>()
                        .copied()
                        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
                        .unwrap_or("(no message)")
                ),
            },
        },
        Err(_) => Outcome::Failed {
            error: PlatformError::Timeout {
                platform,
                after_ms: u64::try_from(limit.as_millis()).unwrap_or(u64::MAX),
            },
        },
    }
}

/// How an attempt ended, for the status page's activity.
pub(super) fn attempt_end(outcome: &UpstreamOutcome) -> AttemptEnd {
    let (reached, failure, rate_limited) = match outcome {
        Outcome::Success { .. } => (true, None, false),
        Outcome::RateLimited { error, .. } => (true, Some(error), true),
        Outcome::Retryable { error, .. } | Outcome::Failed { error } => (
            !matches!(
                error,
                PlatformError::Unreachable { .. } | PlatformError::Timeout { .. } | PlatformError::Internal { .. }
            ),
            Some(error),
            false,
        ),
    };
    AttemptEnd {
        reached,
        // Bounded and without addresses, as every error a person reads.
        failure: failure.map(|e| bounded_text(&e.to_string())),
        rate_limited,
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;

    use super::*;

    fn failed_with(outcome: UpstreamOutcome) -> PlatformError {
        match outcome {
            Outcome::Failed { error } => error,
            _ => panic!("expected a failure"),
        }
    }

    #[tokio::test]
    async fn a_panicking_platform_call_is_a_failure_naming_the_platform() {
        let call: UpstreamFuture = Box::pin(async { panic!("reader broke on byte 7") });
        let error = failed_with(run_attempt(crate::platforms::obv::PLATFORM, call, Duration::from_secs(30)).await);
        match error {
            PlatformError::Internal { platform, detail } => {
                assert_eq!(platform, crate::platforms::obv::PLATFORM);
                assert!(detail.contains("reader broke on byte 7"), "{detail}");
            }
            other => panic!("expected an internal error, got {other:?}"),
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_past_its_deadline_is_a_timeout_and_is_dropped() {
        struct Dropped(Arc<std::sync::atomic::AtomicBool>);
        impl Drop for Dropped {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let guard = Dropped(Arc::clone(&dropped));
        let call: UpstreamFuture = Box::pin(async move {
            let _guard = guard;
            std::future::pending::<UpstreamOutcome>().await
        });
        let error = failed_with(run_attempt(crate::platforms::tk::PLATFORM, call, Duration::from_secs(20)).await);
        assert!(
            matches!(
                error,
                PlatformError::Timeout {
                    platform,
                    after_ms: 20_000
                } if platform == crate::platforms::tk::PLATFORM
            ),
            "{error:?}"
        );
        assert!(
            dropped.load(Ordering::SeqCst),
            "the call is cancelled, not left running"
        );
    }
}
