//! BesluitBron's server: the production shell around `besluitbron-core`.
//!
//! - [`app`]: the running server — routes, request guard, maintenance, shutdown.
//! - [`config`]: the TOML file and `BesluitBron__…` environment overrides.
//! - [`gate`]: one task per rate-limited platform owns its fair scheduler.
//! - [`fetch`]: one platform request's path — buffer, coalescing, gate, call, feedback.
//! - [`identity`]: whose request it is (session, or client address grouped per /64).
//! - [`mcp`]: the MCP handler and the connectors' tools.
//! - [`metrics`]: the Prometheus registry behind `/metrics`.
//! - [`platforms`]: HTTP clients for the public platforms.
//! - [`store`]: the persistent buffer, one redb file per platform (R-C1, R-C4).
//!
//! The `besluitbron` binary (`src/main.rs`) wires these into the HTTP server and the CLI.

pub mod app;
pub mod config;
pub mod fetch;
pub mod gate;
pub mod identity;
pub mod mcp;
pub mod metrics;
pub mod platforms;
pub mod store;
