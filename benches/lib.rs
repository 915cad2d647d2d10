//! Shared helpers for the benchmarks live in the bench files; this crate has no library code.
