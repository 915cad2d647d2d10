//! BesluitBron's server: the production shell around `besluitbron-core`.
//!
//! - [`config`]: the TOML file and `BesluitBron__…` environment overrides.
//! - [`gate`]: one task per rate-limited platform owns its fair scheduler.
//! - [`identity`]: whose request it is (session, or client address grouped per /64).
//! - [`metrics`]: the Prometheus registry behind `/metrics`.
//! - [`platforms`]: HTTP clients for the public platforms.
//! - [`store`]: the persistent buffer, one redb file per platform (R-C1, R-C4).
//!
//! The `besluitbron` binary (`src/main.rs`) wires these into the HTTP server and the CLI.

pub mod config;
pub mod gate;
pub mod identity;
pub mod metrics;
pub mod platforms;
pub mod store;
