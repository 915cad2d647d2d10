//! BesluitBron's server: the production shell around `besluitbron-core`.
//!
//! Its modules form layers: each imports only those below it, and [`app`] alone wires
//! them together (`tests/layers.rs` fails on a cycle). From the bottom:
//!
//! 1. [`clock`], [`config`], [`identity`] (who asks: the [`identity::Caller`]),
//!    [`metrics`] (with each platform's recent activity), [`listen`] (the accept loop);
//! 2. [`platforms`] (HTTP clients of the public platforms), [`auth`] (who an access
//!    token says is asking), [`text`] (document text,
//!    bounded), [`store`] (the persistent buffer, R-C1, R-C4), [`engine`] (the state
//!    several replicas share in Redis);
//! 3. [`driver`]: one task per platform drives its core path (buffer, coalescing, fair
//!    queues, retries, feedback), and with several replicas its lease;
//! 4. [`call`]: what a tool does with its platforms, written once;
//! 5. [`connectors`]: the registry — each connector's tools, client, offers and page;
//! 6. [`mcp`]: the MCP handler and the one entry point every tool call goes through;
//! 7. [`guard`] (the request guard), [`page`] (the search and status pages) and
//!    [`cluster`] (forwarding calls between replicas) around it;
//! 8. [`app`]: the running server.
//!
//! The `besluitbron` binary (`src/main.rs`) wires these into the HTTP server and the CLI.

pub mod app;
pub mod auth;
pub mod calendar;
pub mod call;
pub mod clock;
pub mod cluster;
pub mod config;
pub mod connectors;
pub mod driver;
pub mod engine;
#[cfg(fuzzing)]
#[doc(hidden)]
pub mod fuzzing;
pub mod guard;
pub mod identity;
pub mod listen;
pub mod mcp;
pub mod metrics;
pub mod page;
pub mod platforms;
pub mod store;
pub mod text;
pub mod xml;
