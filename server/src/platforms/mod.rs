//! Clients for the public platforms BesluitBron reads, one module per platform (its
//! client in `mod.rs`, the platform's JSON as Rust types in `wire.rs`), over a shared
//! HTTP layer ([`http`]).
//!
//! **API boundary.** A client turns one typed request into one (or, for reference
//! lists, a bounded number of) HTTP requests and one typed answer or [`PlatformError`].
//! Callers decide when a call may go out: the core scheduler admits it, the caller
//! then awaits the client. For platforms with a limit the answer carries what the
//! platform said about the limit (e.g. [`obv::RateInfo`]) so the caller can feed it back.
//!
//! Invariants: a client sends GETs, and POSTs only where a platform takes a read no
//! other way, marked idempotent by the connector ([`http::PlatformRequest`]); only
//! idempotent requests are retried, and nothing here sleeps except between those
//! retries; no answer is read past its platform's body cap; a client never follows a
//! link outside its configured base URL; the status → error mapping is the same for
//! every client ([`http::status_error`]); nothing a platform sends can make a client
//! panic.
//!
//! What this module does not do: schedule, cache, deduplicate or speak MCP. Clients for
//! the other four platforms arrive with their issues.

pub mod bwb;
pub mod cvdr;
pub mod eurlex;
pub mod http;
pub mod koop;
pub mod ob;
pub mod obv;
pub mod opentk;
pub mod ori;
pub mod rechtspraak;
pub mod tk;

pub use http::{HttpConfig, PlatformError, PlatformRequest, Retry};
pub use ob::{ObClient, ObError};
pub use obv::{ObvClient, ObvError};
pub use rechtspraak::{RsClient, RsError};
pub use tk::{TkClient, TkError};
