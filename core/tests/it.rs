//! The core's integration tests, built as one binary: each file beside this one is a
//! module here (linking a binary per file cost more than running the tests). None of them
//! touches process-wide state (the core reads no clock, environment or file of its own),
//! so they share one process and run side by side.
//!
//! A new test file is added as a `mod` line below; `server/tests/test_binaries.rs` fails
//! on a file in `tests/` that is built by no binary.

mod support;

mod lease_props;
mod path_props;
mod purity;
mod scheduler_join;
mod scheduler_props;
mod scheduler_snapshots;
mod shell_props;
