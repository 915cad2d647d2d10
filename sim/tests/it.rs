//! The simulator's integration tests, built as one binary: each file beside this one is a
//! module here (linking a binary per file cost more than running the tests). None of them
//! touches process-wide state: runs are on virtual time, and the command-line tests start
//! the `besluitbron-sim` binary as a child of their own.
//!
//! A new test file is added as a `mod` line below; `server/tests/test_binaries.rs` fails
//! on a file in `tests/` that is built by no binary.

mod aggregate;
mod cli;
mod cluster;
mod dedup;
mod determinism;
mod fairness;
mod plan;
mod platforms;
mod recorded;
mod report_html;
mod scenarios;
mod services;
mod virtual_time;
mod whole_recording;
