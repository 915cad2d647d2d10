//! [`ExtractPool`]: runs [`super::extract`] off the async runtime, at most `workers` at
//! once, each on its own thread under `catch_unwind` and a deadline.
//!
//! Invariants:
//! - At most `workers` extractions run at any moment; the others wait for a permit in
//!   arrival order (tokio's semaphore is fair). A permit is released when the thread
//!   really ends, so a slow file never lets more than `workers` threads run.
//! - A panic inside a reader (`pdf-extract` panics on some malformed PDFs by design)
//!   becomes [`TextError::Failed`]; it never reaches the runtime or the process. The
//!   release profile keeps `panic = "unwind"` for this (`Cargo.toml`).
//! - A caller waits at most the caps' time plus a grace second: past it the answer is
//!   [`TextError::TimedOut`], whatever the thread still does (the readers check their
//!   deadline at every glyph and step, so it ends soon after).
//!
//! What this does not do: fetch, keep or decide anything about the text.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::{Semaphore, oneshot};

use super::{Caps, Text, TextError};

/// Stack of an extraction thread: deep (but capped) nesting in a PDF's objects is
/// parsed recursively.
const STACK_BYTES: usize = 32 * 1024 * 1024;

/// Time a caller waits past the caps' own, for the reader to notice its deadline.
const GRACE: Duration = Duration::from_secs(1);

/// The pool of extraction threads.
#[derive(Debug)]
pub struct ExtractPool {
    permits: Arc<Semaphore>,
    workers: usize,
    caps: Caps,
}

static SHARED: OnceLock<ExtractPool> = OnceLock::new();

impl ExtractPool {
    /// A pool of `workers` threads (0: one per core) reading under `caps`.
    pub fn new(workers: usize, caps: Caps) -> ExtractPool {
        let workers = if workers == 0 {
            std::thread::available_parallelism().map_or(2, |n| n.get())
        } else {
            workers
        };
        ExtractPool {
            permits: Arc::new(Semaphore::new(workers)),
            workers,
            caps,
        }
    }

    /// The process's one pool, made from the first configuration that asks (every
    /// connector shares it, so the bound holds for the process).
    pub fn shared(workers: usize, caps: Caps) -> &'static ExtractPool {
        SHARED.get_or_init(|| ExtractPool::new(workers, caps))
    }

    /// The number of extractions that may run at once.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The caps every extraction keeps.
    pub fn caps(&self) -> &Caps {
        &self.caps
    }

    /// Extractions running now.
    pub fn running(&self) -> usize {
        self.workers - self.permits.available_permits()
    }

    /// The text of `bytes` (see [`super::extract`]), read on a pool thread.
    pub async fn extract(&self, bytes: Arc<[u8]>) -> Result<Text, TextError> {
        let permit = Arc::clone(&self.permits)
            .acquire_owned()
            .await
            .map_err(|_| TextError::Failed {
                detail: "the text pool is closed".into(),
            })?;
        let caps = self.caps;
        let (tx, rx) = oneshot::channel();
        let spawned = std::thread::Builder::new()
            .name("besluitbron-text".into())
            .stack_size(STACK_BYTES)
            .spawn(move || {
                let result = catch_unwind(AssertUnwindSafe(|| super::extract(&bytes, &caps))).unwrap_or_else(|panic| {
                    Err(TextError::Failed {
                        detail: panic_detail(&panic),
                    })
                });
                drop(permit);
                let _ = tx.send(result);
            });
        if let Err(e) = spawned {
            return Err(TextError::Failed {
                detail: format!("no thread could be started: {e}"),
            });
        }
        let wait = Duration::from_millis(caps.max_millis) + GRACE;
        match tokio::time::timeout(wait, rx).await {
            Ok(Ok(result)) => result,
            Ok(Err(_)) => Err(TextError::Failed {
                detail: "the reader's thread ended without an answer".into(),
            }),
            Err(_) => Err(TextError::TimedOut {
                limit_ms: caps.max_millis,
            }),
        }
    }
}

/// A short description of a caught panic (its message, at most 120 characters).
fn panic_detail(panic: &Box<dyn std::any::Any + Send>) -> String {
    let message = panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    format!("it panicked: {}", message.chars().take(120).collect::<String>())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn errors_come_back_and_permits_are_released() {
        let pool = ExtractPool::new(1, Caps::default());
        for _ in 0..3 {
            let got = pool.extract(Arc::from(&b"\x00\x01 random"[..])).await;
            assert_eq!(got, Err(TextError::Unrecognised));
        }
        let legacy: &[u8] = &[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0];
        assert_eq!(
            pool.extract(Arc::from(legacy)).await,
            Err(TextError::Unsupported {
                format: super::super::Format::Doc
            })
        );
        // The permit goes back when the thread ends, just after it answers.
        for _ in 0..1000 {
            if pool.running() == 0 {
                break;
            }
            tokio::task::yield_now().await;
            std::thread::yield_now();
        }
        assert_eq!(pool.running(), 0);
    }

    #[test]
    fn a_panic_is_described_briefly() {
        let caught = catch_unwind(|| panic!("{}", "x".repeat(500))).unwrap_err();
        let detail = panic_detail(&caught);
        assert!(
            detail.starts_with("it panicked: xxx") && detail.chars().count() < 140,
            "{detail}"
        );
    }
}
