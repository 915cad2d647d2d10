//! The guard every MCP request passes before rmcp sees it: shutting down, the access
//! token (with `BesluitBron.Auth`), the body's size, time and shape, who the request is
//! (decided here once: its user, else its session, else its address), the client limits, the
//! session cap, and the caps on standalone event streams (per session, per address). It wraps
//! each route's MCP service directly ([`Guarded`]): one tower service, no middleware stack,
//! so a request costs no more service clones or boxes than rmcp's own service does.
//!
//! Invariants:
//! - a request refused here never reaches rmcp, and costs nothing at the limit layers
//!   that did not refuse it;
//! - who the request is travels on as a [`Caller`](crate::identity::Caller) in its extensions; nothing later
//!   reads the identity headers again;
//! - the body is read once, bounded by `max_body_bytes`, and handed on unchanged;
//! - a session opened with a token is its user's: a request of another user (or of
//!   none) naming it is answered as for an unknown session (404).
//!
//! What this module does not do: parse the JSON-RPC message beyond its envelope (rmcp
//! does), or decide anything about a platform (the core path does).
//!
//! Its rooms: the service and the steps in order (`service.rs`), each step (`steps.rs`),
//! the JSON-RPC envelope (`envelope.rs`), a resumed event stream (`resume.rs`), the Host and Origin checks (`origin.rs`), what a
//! request holds while answered (`permits.rs`), the shared state (`state.rs`) and the
//! refusals' shape (`refusal.rs`).
#![expect(
    clippy::result_large_err,
    reason = "the guard's steps return their refusal, the response itself, as `Err`: it is answered at once, \
              and boxing it would cost an allocation per refusal for nothing"
)]

mod envelope;
mod origin;
mod permits;
mod refusal;
mod resume;
mod service;
mod state;
mod steps;

#[cfg(any(test, fuzzing))]
pub use envelope::envelope_of;
pub use origin::{host_allowed, host_check, own_loopback_origin};
pub use refusal::json_error;
pub use service::Guarded;
pub use state::{GuardState, RouteGuard, StreamCounts};
