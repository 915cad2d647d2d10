//! BesluitBron's server: the production shell around `besluitbron-core`.
//!
//! - [`config`]: the TOML file and `BesluitBron__…` environment overrides.
//! - [`gate`]: one task per rate-limited platform owns its fair scheduler.

pub mod config;
pub mod gate;
