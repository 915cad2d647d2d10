//! [`PlatformCall`]: one platform request a tool makes — its buffer key, its cost as the
//! platform counts it, the upstream service it goes to, and a typed attempt — and how the attempt's outcome
//! reaches the platform path: encoded for the buffer, its error classified as its
//! producer classified it ([`classify`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use besluitbron_core::cache::CacheKey;
use besluitbron_core::path::{Feedback, Outcome};
use besluitbron_core::{PlatformId, ServiceId, Units};
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::driver::{Payload, SharedPayload, Upstream};
use crate::platforms::http::{PlatformError, Retry};

/// A boxed typed platform attempt.
pub type TypedFuture<T> = Pin<Box<dyn Future<Output = Result<(T, Feedback), PlatformError>> + Send>>;

/// A typed platform call's attempt, given the expired copy it may revalidate.
type TypedFetch<T> = Arc<dyn Fn(Option<Arc<T>>) -> TypedFuture<T> + Send + Sync>;

/// One platform request a tool makes.
pub struct PlatformCall<T> {
    pub(super) key: CacheKey,
    pub(super) cost: Units,
    /// The upstream service it goes to; `None`: its platform's first.
    pub(super) service: Option<ServiceId>,
    /// The request as the assistant wrote it, when the key is a folded form of it
    /// (R-D5 level 1): the diagnosis tells an exact repeat from a canonical one by it.
    pub(super) written: Option<String>,
    fetch: TypedFetch<T>,
}

impl<T: Serialize + Send + Sync + 'static> PlatformCall<T> {
    /// A call for `key` costing `cost` at its platform's first service; `fetch` makes one attempt (it
    /// is called again for a retry) and returns the typed answer with the platform's
    /// feedback.
    pub fn new<F, Fut>(key: CacheKey, cost: Units, fetch: F) -> PlatformCall<T>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(T, Feedback), PlatformError>> + Send + 'static,
    {
        PlatformCall {
            key,
            cost,
            service: None,
            written: None,
            fetch: Arc::new(move |_| Box::pin(fetch())),
        }
    }

    /// As [`PlatformCall::new`], for a platform that answers conditional requests:
    /// `fetch` gets the expired copy the buffer still holds for `key` (when it holds one
    /// of this answer's type) and may ask the platform whether it is current; it answers
    /// with that copy and [`Feedback::revalidated`] when the platform says so (HTTP 304),
    /// which renews the copy in the buffer without a download.
    pub fn revalidating<F, Fut>(key: CacheKey, cost: Units, fetch: F) -> PlatformCall<T>
    where
        T: DeserializeOwned,
        F: Fn(Option<Arc<T>>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(T, Feedback), PlatformError>> + Send + 'static,
    {
        PlatformCall {
            key,
            cost,
            service: None,
            written: None,
            fetch: Arc::new(move |previous| Box::pin(fetch(previous))),
        }
    }

    /// The same call, whose key folds `written` (the parameters as the assistant wrote
    /// them, in any stable text form): a repeat written otherwise is counted as a
    /// canonical duplicate (R-D9).
    pub fn written_as(mut self, written: String) -> PlatformCall<T> {
        self.written = Some(written);
        self
    }

    /// The same call to another of the services its platform calls (its files' host,
    /// a text service): it is limited and queued under that service's budget.
    pub fn at(mut self, service: ServiceId) -> PlatformCall<T> {
        self.service = Some(service);
        self
    }

    /// The platform asked.
    pub fn platform(&self) -> PlatformId {
        self.key.platform()
    }

    /// The upstream the platform's task runs: the typed call, encoded for the buffer,
    /// its error classified for the path.
    pub(super) fn upstream(&self) -> Upstream
    where
        T: DeserializeOwned,
    {
        let (fetch, platform) = (Arc::clone(&self.fetch), self.key.platform());
        Arc::new(move |previous: Option<SharedPayload>| {
            // A copy of another shape (an older build's) is no copy to revalidate.
            let previous = previous.and_then(|p| p.typed::<T>().ok());
            let attempt = fetch(previous);
            Box::pin(async move {
                match attempt.await {
                    Ok((value, feedback)) => match Payload::encode(value) {
                        Ok(payload) => Outcome::Success { payload, feedback },
                        Err(e) => Outcome::Failed {
                            error: PlatformError::Internal {
                                platform,
                                detail: format!("the answer could not be encoded: {e}"),
                            },
                        },
                    },
                    Err(error) => classify(error),
                }
            })
        })
    }
}

/// A platform error as the path needs to know it, as its producer classified it
/// ([`PlatformError::retry`]): a wait in the fair queue (a 429, or an overload the
/// platform signals its own way), a failure another attempt may mend, or a failure.
pub fn classify(error: PlatformError) -> Outcome<SharedPayload, PlatformError> {
    match error.retry() {
        Retry::Wait { after } => Outcome::RateLimited {
            retry_after: after,
            error,
        },
        Retry::Yes { after } => Outcome::Retryable {
            retry_after: after,
            error,
        },
        Retry::No => Outcome::Failed { error },
    }
}
