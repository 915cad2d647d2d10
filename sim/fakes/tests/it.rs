//! The fakes' integration tests, built as one binary: each file beside this one is a
//! module here (linking a binary per file cost more than running the tests). Every test
//! starts its own fakes on `127.0.0.1:0`, so they share one process and run side by side.
//!
//! A new test file is added as a `mod` line below; `server/tests/test_binaries.rs` fails
//! on a file in `tests/` that is built by no binary.

mod control;
mod faults;
mod registry;
