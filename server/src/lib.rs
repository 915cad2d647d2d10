//! BesluitBron's server: the production shell around `besluitbron-core`.
//!
//! Its modules form layers: each imports only those below it, and [`app`] alone wires
//! them together (the tidy tests in `tidy/` check ARCHITECTURE.md's layer table against the
//! code). From the bottom:
//!
//! 1. [`clock`], [`config`], [`identity`] (who asks: the [`identity::Caller`]),
//!    [`metrics`] (with each platform's recent activity), [`xml`], [`calendar`];
//! 2. [`text`] (document text, bounded), [`store`] (the persistent buffer, R-C1, R-C4),
//!    [`engine`] (the state several replicas share in Redis), [`listen`] (the accept loop);
//! 3. [`platforms`] (HTTP clients of the public platforms);
//! 4. [`driver`]: one task per platform drives its core path (buffer, coalescing, fair
//!    queues, retries, feedback), and with several replicas its lease; [`auth`] (who an
//!    access token says is asking);
//! 5. [`call`]: what a tool does with its platforms, written once;
//! 6. [`connectors`]: the registry — each connector's tools, client, offers and page;
//! 7. [`mcp`]: the MCP handler and the one entry point every tool call goes through, and
//!    [`guard`] (the request guard);
//! 8. [`page`] (the search and status pages) and [`cluster`] (forwarding calls between
//!    replicas) around them;
//! 9. [`app`]: the running server.
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
pub mod telemetry;
pub mod text;
pub mod xml;
