//! Request deduplication (R-D1 to R-D9): recognise a request that repeats one in flight
//! or already done, and hand out the existing result instead of doing the work again.
//!
//! Three mechanisms, each a small pure table driven with an injected `now`:
//!
//! - [`flights`]: in-flight coalescing (R-D3). Identical platform requests (same cache
//!   key: platform, operation, canonical parameters, scope) become one upstream call whose
//!   outcome goes to every waiter. A flight ends with its outcome; a failure goes to that
//!   flight's waiters only and is never kept (R-D8), so the next request tries again.
//! - [`idempotency`]: client retries (R-D2, R-D6). A repeated request id within one scope
//!   (an MCP session, or a client address with an `Idempotency-Key`) with the same
//!   arguments gets the first result; with other arguments it gets a clear conflict.
//!   Failures release the key.
//! - [`fold`]: conservative normalisation (R-D5, level 1). Exact match by default; a
//!   connector folds per parameter what its platform ignores (whitespace; the order,
//!   repeats, case and punctuation of ANDed words; an identifier's case), so requests
//!   the platform answers identically share one key.
//!
//! [`forms`] tells an exact repeat from a request shared only through folding, and
//! [`near`] finds near-duplicate searches (level 2: counted, never merged), for the
//! diagnosis. [`rate`] measures (R-D9): counters per platform, tool and client, and a warning when
//! one client's duplicate rate rises far above its usual level.
//!
//! What this module does not do: hold results in memory for a long time (that is the
//! buffer's job, R-D4), answer one question with another's result when the platform might answer them
//! differently (near-duplicates are measured, never merged),
//! or wait: the shells own the channels that carry results to waiters.

pub mod flights;
pub mod fold;
pub mod forms;
pub mod idempotency;
pub mod near;
pub mod rate;

pub use flights::{Flight, FlightId, FlightTable, Refused, Waiter, WaiterId, Waiters};
pub use fold::Fold;
pub use forms::{FormSeen, FormTable};
pub use idempotency::{IdempotencyConfig, IdempotencyTable, IdempotentStart, ReplayScope};
pub use near::{NearDuplicate, NearTable};
pub use rate::{DuplicateKind, DuplicateMonitor, DuplicateSpike, MonitorConfig, SpikeCause};
