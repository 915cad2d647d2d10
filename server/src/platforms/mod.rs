//! Clients for the public platforms BesluitBron reads, one module per platform, over a
//! shared HTTP layer ([`http`]).
//!
//! **API boundary.** A client turns one typed request into one (or, for reference
//! lists, a bounded number of) HTTP reads and one typed answer or [`PlatformError`].
//! Callers decide when a call may go out: the core scheduler admits it, the caller
//! then awaits the client. For platforms with a limit the answer carries what the
//! platform said about the limit (e.g. [`obv::RateInfo`]) so the caller can feed it back.
//!
//! Invariants: only GET is sent; nothing here sleeps except between retries of a failed
//! read; a client never follows a link outside its configured base URL; nothing a
//! platform sends can make a client panic.
//!
//! What this module does not do: schedule, cache, deduplicate or speak MCP. Clients for
//! the other five platforms arrive with their issues.

pub mod http;
pub mod obv;
pub mod tk;

pub use http::{HttpConfig, PlatformError, RetryPolicy};
pub use obv::{ObvClient, ObvError};
pub use tk::{TkClient, TkError};
