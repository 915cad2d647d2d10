//! The faults every fake applies from the common configuration ([`FakeConfig`]), on the
//! state the fake shares with its handle (`shared.rs`).
//!
//! Every fake's router runs two layers from here around its own routes:
//! - [`on_arrival`] (outermost): counts the request, then the pathological faults that
//!   strike before the platform looks at the request at all — [`FakeConfig::stall`],
//!   [`FakeConfig::reset_every`], [`FakeConfig::rate_limit_storm`], in that order;
//! - [`on_accepted`] (innermost, after the platform's own rate limit if it has one): the
//!   ordinary faults of an answer — [`FakeConfig::latency`], [`FakeConfig::fail_every`],
//!   [`FakeConfig::garbage`], [`FakeConfig::oversize`], in that order, then
//!   [`FakeConfig::hostile`] (`hostile.rs`) around the platform's own answer.
//!
//! The arrival layer also keeps the path and query of the last [`RECENT_PATHS`](crate::shared::RECENT_PATHS) requests,
//! so a test can see exactly what a client sent.
//!
//! Invariants:
//! - Every fault is applied here, for every fake alike; a fake supplies only its own
//!   error bodies ([`FaultReplies`]).
//! - A fault that strikes on arrival charges nothing: OpenBesluitvorming's bucket never
//!   sees a stalled-then-reset, reset or storm-refused request.
//! - Counters only ever go up, and each counts one kind of event once.
//! - Which request a counted fault strikes depends only on its position in the count, so
//!   a test knows in advance which requests fail.
//!
//! What this module does not do: rate-limit (OpenBesluitvorming's bucket lives in
//! `obv.rs`), close the connection itself (it marks the answer, `serve.rs` drops the
//! connection), or draw faults at random.

use std::convert::Infallible;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes, HttpBody};
use axum::extract::{Request, State};
use axum::http::{Response, StatusCode};
use axum::middleware::Next;
use hyper::body::{Frame, SizeHint};

use crate::config::{FakeConfig, Oversize};
use crate::own::OwnSettings;
use crate::raw_response;
use crate::serve::dropped_connection;
use crate::shared::{FakeShared, Shared};

/// The `Retry-After` of a rate-limit storm's 429s, in seconds.
pub(crate) const STORM_RETRY_AFTER_S: u64 = 1;

/// How one fake (with the own settings `S`) words the answers its faults give, in its
/// platform's own error shapes.
#[derive(Debug)]
pub(crate) struct FaultReplies<S> {
    /// The JSON body of a deliberate 500.
    pub(crate) failure: &'static str,
    /// A storm's 429 (body and headers; `Retry-After` is set by the caller) under the
    /// fake's settings at the request's arrival.
    pub(crate) storm: fn(&FakeConfig, &S) -> Response<Body>,
}

impl FakeShared {
    /// Applies latency and the ordinary faults to a request the platform accepted (for
    /// OpenBesluitvorming: one that passed the rate limit): `Some(response)` replaces the
    /// real answer.
    pub(crate) async fn faults(self: &Arc<Self>, failure: &'static str) -> Option<Response<Body>> {
        let n = self.passed.fetch_add(1, Ordering::Relaxed) + 1;
        let (latency, fail_every, garbage, oversize) = {
            let c = &self.settings().common;
            (c.latency, c.fail_every, c.garbage, c.oversize)
        };
        if !latency.is_zero() {
            tokio::time::sleep(latency).await;
        }
        if every_nth(n, fail_every) {
            self.failures_injected.fetch_add(1, Ordering::Relaxed);
            return Some(raw_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "application/json",
                failure,
            ));
        }
        if garbage {
            self.garbage_answers.fetch_add(1, Ordering::Relaxed);
            return Some(raw_response(
                StatusCode::OK,
                "text/html; charset=utf-8",
                "<html><body>BesluitBron fake platform: this is not JSON</body></html>",
            ));
        }
        if let Some(oversize) = oversize {
            let body = OversizeBody::new(oversize, Arc::clone(self));
            let mut response = Response::new(Body::new(body));
            response
                .headers_mut()
                .insert("content-type", "application/json".parse().expect("a header value"));
            return Some(response);
        }
        None
    }
}

impl<S: OwnSettings> Shared<S> {
    /// Counts a request as it arrives and applies the faults that strike before the
    /// platform looks at it: `Some(response)` replaces everything the platform would do
    /// (a [`dropped_connection`] marker, or a storm's 429).
    pub(crate) async fn faults_on_arrival(&self, replies: &FaultReplies<S>) -> Option<Response<Body>> {
        let n = self.requests.fetch_add(1, Ordering::Relaxed) + 1;
        // The request sees the settings of its arrival, even if they change during a stall.
        let (config, own) = self.snapshot();
        if let Some(stall) = config.stall.filter(|s| !s.is_zero()) {
            self.stalled.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(stall).await;
        }
        if every_nth(n, config.reset_every) {
            self.connections_reset.fetch_add(1, Ordering::Relaxed);
            return Some(dropped_connection());
        }
        if !config.rate_limit_storm {
            return None;
        }
        let mut refusal = (replies.storm)(&config, &own);
        self.count_rate_limited();
        self.storm_rate_limited.fetch_add(1, Ordering::Relaxed);
        refusal.headers_mut().insert("retry-after", STORM_RETRY_AFTER_S.into());
        Some(refusal)
    }
}

/// One 64 KiB chunk of an oversized body, the same every time.
static OVERSIZE_CHUNK: [u8; 64 * 1024] = [b'x'; 64 * 1024];

/// An oversized body ([`FakeConfig::oversize`]), made chunk by chunk as the connection
/// takes it and counted as it goes.
struct OversizeBody {
    left: u64,
    size: Option<u64>,
    shared: Arc<FakeShared>,
}

impl OversizeBody {
    fn new(oversize: Oversize, shared: Arc<FakeShared>) -> OversizeBody {
        shared.oversize_open.fetch_add(1, Ordering::SeqCst);
        OversizeBody {
            left: oversize.bytes,
            size: oversize.announce_length.then_some(oversize.bytes),
            shared,
        }
    }
}

impl HttpBody for OversizeBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(mut self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        if self.left == 0 {
            return Poll::Ready(None);
        }
        let n = self.left.min(OVERSIZE_CHUNK.len() as u64);
        self.left -= n;
        self.shared.oversize_sent.fetch_add(n, Ordering::SeqCst);
        let chunk = Bytes::from_static(&OVERSIZE_CHUNK[..n as usize]);
        Poll::Ready(Some(Ok(Frame::data(chunk))))
    }

    fn is_end_stream(&self) -> bool {
        self.left == 0
    }

    fn size_hint(&self) -> SizeHint {
        match self.size {
            Some(size) => SizeHint::with_exact(size),
            None => SizeHint::default(),
        }
    }
}

impl Drop for OversizeBody {
    fn drop(&mut self) {
        self.shared.oversize_open.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Whether the `n`-th event (1-based) is one that `every` strikes (`None` or 0: never).
fn every_nth(n: u64, every: Option<u32>) -> bool {
    every.is_some_and(|every| every > 0 && n.is_multiple_of(u64::from(every)))
}

/// The state of the two fault layers: the fake's shared state and its replies.
pub(crate) struct Faults<S: 'static> {
    shared: Shared<S>,
    replies: &'static FaultReplies<S>,
}

impl<S: 'static> Clone for Faults<S> {
    fn clone(&self) -> Faults<S> {
        Faults {
            shared: self.shared.clone(),
            replies: self.replies,
        }
    }
}

impl<S: OwnSettings> Faults<S> {
    pub(crate) fn new(shared: Shared<S>, replies: &'static FaultReplies<S>) -> Faults<S> {
        Faults { shared, replies }
    }
}

/// The outer fault layer (see the module documentation): every fake's outermost middleware.
pub(crate) async fn on_arrival<S: OwnSettings>(
    State(faults): State<Faults<S>>,
    request: Request,
    next: Next,
) -> Response<Body> {
    let path = request.uri().path_and_query().map_or("", |p| p.as_str());
    faults.shared.record_path(path);
    faults.shared.record_headers(request.headers());
    match faults.shared.faults_on_arrival(faults.replies).await {
        Some(response) => response,
        None => next.run(request).await,
    }
}

/// The inner fault layer (see the module documentation): right around the fake's routes.
pub(crate) async fn on_accepted<S: OwnSettings>(
    State(faults): State<Faults<S>>,
    request: Request,
    next: Next,
) -> Response<Body> {
    let shared = faults.shared.erased();
    if let Some(response) = shared.faults(faults.replies.failure).await {
        return response;
    }
    let hostile = shared.settings().common.hostile;
    match hostile {
        Some(kind) => {
            shared.hostile_answers.fetch_add(1, Ordering::Relaxed);
            crate::hostile::answer(kind, &shared.off_host_arrivals, request, next).await
        }
        None => next.run(request).await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_nth_strikes_multiples_only_and_never_for_none_or_zero() {
        let struck: Vec<u64> = (1..=7).filter(|&n| every_nth(n, Some(3))).collect();
        assert_eq!(struck, [3, 6]);
        assert!((1..=7).all(|n| every_nth(n, Some(1))));
        assert!((1..=7).all(|n| !every_nth(n, None) && !every_nth(n, Some(0))));
    }
}
