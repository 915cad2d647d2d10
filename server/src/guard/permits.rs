//! What a request holds while its answer is under way: a standalone event stream's
//! place in [`StreamCounts`](super::state::StreamCounts) (a GET's, capped per session and per address), and an MCP
//! message's place among the answers the shutdown's drain waits for (a POST's).
//!
//! Invariants: each is released when dropped, which is when its answer's body has been
//! sent or the client went. What it does not do: count (`StreamCounts` does) or answer.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::http::{Method, StatusCode};
use axum::response::Response;

use crate::identity::Caller;

use super::refusal::json_error;
use super::state::GuardState;

/// A standalone event stream's permit (a GET's), or the 429 when its caps are reached.
pub(super) fn open_event_stream(
    state: &Arc<GuardState>,
    method: &Method,
    caller: &Caller,
) -> Result<Option<StreamPermit>, Response> {
    // A standalone event stream (GET) holds a connection for as long as it is open: a
    // few per session (a reconnect may overlap the old one) and per address.
    if method != Method::GET {
        return Ok(None);
    }
    match StreamPermit::take(state, caller.session_id.as_deref(), &caller.address) {
        Ok(permit) => Ok(Some(permit)),
        Err(message) => Err(json_error(StatusCode::TOO_MANY_REQUESTS, -32000, message, Some(5))),
    }
}

/// One MCP message under way (a POST), from the guard's admission to its answer's last
/// byte; counted in `GuardState::answering`, which the shutdown's drain waits on.
pub(super) struct AnswerUnderWay(Arc<GuardState>);

impl AnswerUnderWay {
    pub(super) fn begin(state: &Arc<GuardState>) -> AnswerUnderWay {
        state.answering.fetch_add(1, Ordering::SeqCst);
        AnswerUnderWay(Arc::clone(state))
    }
}

impl Drop for AnswerUnderWay {
    fn drop(&mut self) {
        self.0.answering.fetch_sub(1, Ordering::SeqCst);
    }
}

/// One open event stream's place in [`StreamCounts`](super::state::StreamCounts); released on drop.
pub(super) struct StreamPermit {
    state: Arc<GuardState>,
    session: Option<String>,
    address: String,
}

impl StreamPermit {
    fn take(state: &Arc<GuardState>, session: Option<&str>, address: &str) -> Result<StreamPermit, String> {
        let caps = state.config.connections;
        state
            .streams
            .lock()
            .expect("stream counts lock")
            .open(caps, session, address)?;
        Ok(StreamPermit {
            state: Arc::clone(state),
            session: session.map(str::to_owned),
            address: address.to_owned(),
        })
    }
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut counts = self.state.streams.lock().expect("stream counts lock");
        counts.close(self.session.as_ref(), &self.address);
    }
}
