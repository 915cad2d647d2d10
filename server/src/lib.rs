//! BesluitBron's server library: the I/O shell around `besluitbron-core`.
//!
//! - [`store`]: the persistent buffer, one redb file per platform (R-C1, R-C4).
//!
//! The `besluitbron` binary (`src/main.rs`) wires these into the HTTP server and the CLI.

pub mod store;
