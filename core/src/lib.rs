//! BesluitBron's core: the pure, clock-injected heart shared by the MCP server and the
//! discrete-event simulator.
//!
//! - [`cache`]: the buffer policy (data-class lifetimes, version stamps, keys, the
//!   store contract and an in-memory store), requirements R-C1 to R-C5.
//! - [`scheduler`]: the fair platform scheduler (token bucket + usage-weighted fair
//!   queue with a starvation deadline), requirements R-L1 to R-L8.
//! - [`dedup`]: request deduplication — in-flight coalescing, idempotent replays,
//!   conservative normalisation and the duplicate rate (R-D1 to R-D9).
//! - [`path`]: one platform's whole call path — buffer decision, in-flight coalescing,
//!   the fair queue per lane, retries, the 429 requeue and refund — as one sans-IO type
//!   that the server and the simulator both drive.
//! - [`cluster`]: several replicas, one owner per platform: the lease and handover
//!   rules as a pure state machine ([`cluster::Lease`]).
//! - [`identity`]: who is asking — user, session or address — as the keys of
//!   fairness and of the client limits.
//! - [`limits`]: the three layers of limits on clients (process, connector, session),
//!   R-I1 to R-I3.
//! - [`bucket`]: the one exact token bucket (GCRA form) behind both the platforms'
//!   limits in the scheduler and the client limits.
//! - [`platform`]: platforms and upstream services as the shells declare them, and limits.
//! - [`record`]: the trace format the server records and the simulator replays.
//! - [`time`] and [`units`]: injected time and exact fixed-point costs.
//!
//! **Architecture invariant.** Nothing in this crate reads a clock, the environment,
//! the network or an unseeded random source, and nothing depends on tokio, axum,
//! reqwest or hyper. `now` is an argument. `core/clippy.toml` makes a clock read a lint
//! error and `tests/purity.rs` checks the dependency list. The server and the simulator
//! drive these same types; there is no second implementation "for the simulator".
//!
//! What this crate will not do: perform I/O, spawn tasks, sleep, or log.

pub mod bucket;
pub mod cache;
pub mod cluster;
pub mod dedup;
pub mod identity;
pub mod limits;
pub mod path;
pub mod platform;
pub mod record;
pub mod scheduler;
pub mod time;
pub mod units;

pub use cache::{CacheKey, CachePolicy, CacheStore, CacheVersion, DataClass, Lookup, MemoryStore, Scope, Success};
pub use platform::{BudgetGroup, LimitConfig, Platform, PlatformId, Service, ServiceId, budget_groups};
pub use scheduler::{
    Admission, AdmissionRecord, AdmitRule, CallTicket, Charge, EntryTicket, Estimate, FairScheduler, JoinError,
    QueueFull, SchedulerConfig, SchedulerEvent, SchedulerStats, SessionKey, Submission,
};
pub use time::{Instant, WallTime};
pub use units::Units;
