//! What the platform task runs for a flight: a platform call's attempts and what each
//! returns, as the path wants it. Types only, shared by the task and its attempts.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use besluitbron_core::path::Outcome;

use super::payload::SharedPayload;
use crate::platforms::http::PlatformError;

/// What a platform call returns, as the path wants it.
pub type UpstreamOutcome = Outcome<SharedPayload, PlatformError>;

/// One attempt of a platform call.
pub type UpstreamFuture = Pin<Box<dyn Future<Output = UpstreamOutcome> + Send>>;

/// Makes an attempt of a flight's platform call; called once per attempt (retries call
/// it again), with the expired copy the buffer holds for the key when it holds one (the
/// call may ask the platform to confirm it, and answer with it when it is current).
pub type Upstream = Arc<dyn Fn(Option<SharedPayload>) -> UpstreamFuture + Send + Sync>;
