//! BesluitBron's server: the production shell around `besluitbron-core`.
//!
//! - [`gate`]: one task per rate-limited platform owns its fair scheduler.

pub mod gate;
