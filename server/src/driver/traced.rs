//! The platform task's part of a call's trace (docs/tracing.md): the leading call's span
//! travels with its flight, so the queue wait and each attempt hang under the call that
//! asked; a joining call (coalesced) has its platform-call span and no attempt of its own.
//!
//! What it does not do: change anything the path decides. Untraced (exporting off, the
//! default), a flight carries a disabled span and no queue slot: no allocation, no lock.

use std::sync::{Arc, Mutex};

use besluitbron_core::path::{Outcome, Position};
use tracing::Span;

use super::upstream::{Upstream, UpstreamOutcome};
use crate::telemetry::spans;

/// The queue-wait span of a flight's leading call, until the flight is sent.
type QueueSlot = Arc<Mutex<Option<Span>>>;

/// A flight's data: the platform request its leading call brought, and that call's span.
#[derive(Clone)]
pub(super) struct Flight {
    /// Makes each attempt.
    pub(super) upstream: Upstream,
    /// The leading call's platform-call span (disabled when untraced).
    span: Span,
    /// Its queue wait, while it waits (only when traced).
    queue: Option<QueueSlot>,
}

impl Flight {
    /// The flight `upstream` would lead, for the call whose span is `span`.
    pub(super) fn new(upstream: Upstream, span: Span) -> Flight {
        let queue = (!span.is_disabled()).then(QueueSlot::default);
        Flight { upstream, span, queue }
    }

    /// The call's span (its store lookup and log lines run in it in the platform task).
    pub(super) fn span(&self) -> &Span {
        &self.span
    }

    /// Where the queue wait goes should this flight wait ([`Flight::queued`]).
    pub(super) fn queue_slot(&self) -> Option<QueueSlot> {
        self.queue.clone()
    }

    /// The leading call waits at `lane` (where `position` says): its queue wait begins.
    pub(super) fn queued(slot: Option<&QueueSlot>, span: &Span, lane: &'static str, position: Option<Position>) {
        let Some(slot) = slot else { return };
        // No place in the queue: admitted at its arrival (sent once this step's effects run).
        let wait = spans::queue_wait(
            span,
            lane,
            position.map_or(0, |p| p.queued_calls),
            position.map_or(0, |p| p.waiting_sessions),
        );
        *slot.lock().expect("queue span lock") = Some(wait);
    }

    /// An attempt goes out, after `waited_ms` in the queue: the first ends the queue wait;
    /// the attempt's span (`number`), under the leading call's.
    pub(super) fn sent(&self, number: u32, waited_ms: Option<u64>) -> Span {
        if let Some(wait) = self
            .queue
            .as_ref()
            .and_then(|q| q.lock().expect("queue span lock").take())
        {
            spans::admitted(&wait, waited_ms);
        }
        spans::attempt(&self.span, number, waited_ms)
    }
}

/// An attempt's outcome as the metrics and the trace name it.
pub(super) fn outcome_label(outcome: &UpstreamOutcome) -> &'static str {
    match outcome {
        // A copy the platform confirmed (HTTP 304): counted apart.
        Outcome::Success { feedback, .. } if feedback.revalidated => "revalidated",
        Outcome::Success { .. } => "ok",
        Outcome::RateLimited { .. } => "rate_limited",
        Outcome::Retryable { error, .. } | Outcome::Failed { error } => error.label(),
    }
}

/// How an attempt ended, on its span.
pub(super) fn attempt_ended(span: &Span, outcome: &UpstreamOutcome) {
    let (how, error) = match outcome {
        Outcome::Success { feedback, .. } if feedback.revalidated => ("revalidated", None),
        Outcome::Success { .. } => ("ok", None),
        Outcome::RateLimited { error, .. } => ("rate_limited", Some(error.label())),
        Outcome::Retryable { error, .. } => ("retryable", Some(error.label())),
        Outcome::Failed { error } => ("failed", Some(error.label())),
    };
    spans::attempt_outcome(span, how, error);
}
