//! Several replicas, one owner per platform: forwarding a call to its platform's owner,
//! when `BesluitBron:Cluster` is configured; nothing here runs otherwise.
//!
//! The design (ARCHITECTURE.md, "Several replicas"): each platform has at most one
//! owner replica, holding a lease in the shared engine (`crate::driver::lease` keeps
//! it; [`besluitbron_core::cluster::Lease`] decides); the owner runs the platform's whole
//! path, the others forward the calls whose platform they do not own to it over the
//! internal endpoint ([`forward`]). This module is the route layer's [`Route`]
//! (`crate::mcp::route`) and the owner's endpoint; the state the replicas share in Redis
//! (client limits, the replay table, legacy MCP sessions) is `crate::engine`'s.
//!
//! [`Route`]: crate::mcp::route::Route

pub mod forward;
pub mod setup;
