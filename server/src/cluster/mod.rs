//! Several replicas on one shared engine (Redis), when `BesluitBron:Cluster` is
//! configured; nothing here runs otherwise.
//!
//! The design (ARCHITECTURE.md, "Several replicas"): each platform has at most one
//! owner replica, holding a lease in the engine ([`besluitbron_core::cluster::Lease`]
//! decides; this module talks to Redis for it); the owner runs the platform's whole
//! path, the others forward their platform calls to it over the internal endpoint.
//! Client limits, the replay table and legacy MCP sessions live in the engine too.
//!
//! Redis is soft state for the platforms' limits: a lost key or a restarted engine can
//! make two replicas believe they own a platform, and the lease rules (validity from
//! the send, a new owner's wait of TTL + m, an empty bucket) keep them apart anyway.
//! When the engine cannot be reached, platform calls that need the platform fail
//! closed (buffer hits are still served) and client limits fall back to local ones.

pub mod engine;
pub mod forward;
pub mod lease;
pub mod limits;
pub mod replays;
pub mod sessions;

pub use engine::{Engine, EngineError};

pub mod setup;
