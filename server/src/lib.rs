//! BesluitBron's server library: the parts of the `besluitbron` binary that tests and
//! other crates reach directly.
//!
//! - [`platforms`]: HTTP clients for the public platforms.

pub mod platforms;
