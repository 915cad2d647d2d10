//! Traces: one trace from the assistant through BesluitBron's queue to the platform
//! (docs/tracing.md). W3C trace context comes in with a request ([`context`]); the
//! request, the platform call, the buffer, the fair queue, each attempt and each HTTP
//! request are spans ([`spans`]); they are exported over OTLP/HTTP only when an endpoint
//! is configured ([`export`]).
//!
//! What it does not do: decide anything. Spans read what the layers already know (the
//! core's `Served`, an attempt's `Outcome`); core/ stays without them. Off (the default),
//! nothing is exported and no task runs; the request span alone remains, for the trace id
//! in the log lines.

pub mod context;
pub mod export;
pub mod spans;

use std::sync::atomic::{AtomicBool, Ordering};

/// The target of every span BesluitBron makes for traces: the exporting layer takes these
/// and nothing else (no log event, no other crate's span).
pub const TARGET: &str = "besluitbron::trace";

/// Set once exporting starts ([`export::layer`]).
static EXPORTING: AtomicBool = AtomicBool::new(false);

/// Whether spans are exported: attributes only an exporter reads are made only then.
pub fn exporting() -> bool {
    EXPORTING.load(Ordering::Relaxed)
}
