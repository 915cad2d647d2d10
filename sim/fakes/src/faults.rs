//! The state a running fake shares with its [`FakeHandle`](crate::FakeHandle): its
//! configuration, its counters, and the faults applied from that configuration.
//!
//! Invariants:
//! - Every fault is applied here, for every fake alike; a fake supplies only the words of
//!   its own error bodies.
//! - Counters only ever go up, and each counts one kind of event once.
//!
//! What this module does not do: rate-limit (OpenBesluitvorming's bucket lives in
//! `obv.rs`), or choose which requests a fault strikes by anything but its position in
//! the count — faults are deterministic.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use axum::body::Body;
use axum::http::{Response, StatusCode};
use besluitbron_core::Units;

use crate::{FakeConfig, raw_response};

/// State shared between a running fake and its [`FakeHandle`](crate::FakeHandle).
#[derive(Debug, Default)]
pub(crate) struct FakeShared {
    config: Mutex<FakeConfig>,
    pub(crate) requests: AtomicU64,
    passed: AtomicU64,
    pub(crate) rate_limited: AtomicU64,
    pub(crate) failures_injected: AtomicU64,
    pub(crate) units_charged_milli: AtomicU64,
}

impl FakeShared {
    pub(crate) fn new(config: FakeConfig) -> FakeShared {
        FakeShared {
            config: Mutex::new(config),
            ..FakeShared::default()
        }
    }

    pub(crate) fn config(&self) -> MutexGuard<'_, FakeConfig> {
        // A panic while holding this lock can only come from a bug in a test closure;
        // the configuration itself is always valid, so recover it.
        self.config.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn count_request(&self) {
        self.requests.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn count_rate_limited(&self) {
        self.rate_limited.fetch_add(1, Ordering::Relaxed);
    }

    pub(crate) fn charge(&self, cost: Units) {
        self.units_charged_milli.fetch_add(cost.as_milli(), Ordering::Relaxed);
    }

    /// Applies latency and the configured faults to a request that passed the rate
    /// limit: `Some(response)` replaces the real answer.
    pub(crate) async fn faults(&self, failure_body: &'static str) -> Option<Response<Body>> {
        let n = self.passed.fetch_add(1, Ordering::Relaxed) + 1;
        let (latency, fail_every, garbage) = {
            let c = self.config();
            (c.latency, c.fail_every, c.garbage)
        };
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        if fail_every.is_some_and(|every| every > 0 && n.is_multiple_of(u64::from(every))) {
            self.failures_injected.fetch_add(1, Ordering::Relaxed);
            return Some(raw_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "application/json",
                failure_body,
            ));
        }
        if garbage {
            return Some(raw_response(
                StatusCode::OK,
                "text/html; charset=utf-8",
                "<html><body>BesluitBron fake platform: this is not JSON</body></html>",
            ));
        }
        None
    }
}
