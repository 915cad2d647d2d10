//! BesluitBron's server: the production shell around `besluitbron-core`.
//!
//! - [`app`]: the running server — routes, request guard, maintenance, shutdown.
//! - [`config`]: the TOML file and `BesluitBron__…` environment overrides.
//! - [`clock`]: tokio's clock and the wall clock as core values, read at the edge.
//! - [`connectors`]: the connector registry — each connector's tools, client and
//!   maintenance — from which routes, limits, metrics and tests are built.
//! - [`driver`]: one task per platform drives its core path (buffer, coalescing, fair
//!   queues, retries, feedback) and runs the platform calls it asks for.
//! - [`identity`]: whose request it is (session, or client address grouped per /64).
//! - [`mcp`]: the MCP handler and the one per-call helper every tool goes through.
//! - [`metrics`]: the Prometheus registry behind `/metrics`.
//! - [`platforms`]: HTTP clients for the public platforms.
//! - [`store`]: the persistent buffer, one redb file per platform (R-C1, R-C4).
//! - [`text`]: document text from the files the platforms serve, bounded.
//!
//! The `besluitbron` binary (`src/main.rs`) wires these into the HTTP server and the CLI.

pub mod app;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod connectors;
pub mod driver;
#[doc(hidden)]
pub mod fuzzing;
mod guard;
pub mod identity;
pub mod listen;
pub mod mcp;
pub mod metrics;
pub mod page;
pub mod platforms;
pub mod store;
pub mod text;
