//! One call's record while it runs (and after, when a run keeps records): what it asks,
//! when it came, was admitted and ended, how it was answered and who paid.
//!
//! Invariants: a record is final once its call has ended ([`CallState`] is then `Done`,
//! `Failed`, `Cancelled` or `Refused`); `paid` holds exactly for the one call of a flight
//! whose session was charged and not refunded.
//!
//! The engine writes records and the aggregates read them: a record is neither's, so it
//! lives below both.
//!
//! What this module does not do: decide a call's fate (the path does, the engine records).

use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::CacheKey;
use besluitbron_core::path::Served;
use besluitbron_core::{Instant, PlatformId, Units};

use crate::scenario::FollowUp;

/// Where a call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum CallState {
    /// Not yet submitted.
    Planned,
    /// Submitted, waiting at its gate.
    Waiting,
    /// Sent; the answer is on its way.
    Sent,
    /// Answered.
    Done,
    /// Withdrawn while waiting (`cancel_after_ms`).
    Cancelled,
    /// Refused by a queue bound.
    Refused,
    /// Its flight went out and failed (a 429 or a failed answer); nothing was stored.
    Failed,
}

/// One call of a run.
#[derive(Clone, Debug)]
pub struct CallRecord {
    /// Trace line number or open-call index; agent calls follow the open calls.
    pub index: u64,
    /// Session index.
    pub session: u32,
    /// Platform.
    pub platform: PlatformId,
    /// Units asked.
    pub cost: Units,
    /// Operation label (shared with the other calls of its kind).
    pub op: Option<Arc<str>>,
    /// First submission.
    pub submitted_at: Instant,
    /// Latest submission (a 429 resubmits the call).
    pub queued_at: Instant,
    /// When it was (finally) admitted.
    pub admitted_at: Option<Instant>,
    /// Units charged by the gate.
    pub charged: Units,
    /// Where it stands.
    pub state: CallState,
    /// Times the platform answered it with 429.
    pub platform_429s: u32,
    /// What it asks; `None`: a distinct call.
    pub key: Option<Box<CacheKey>>,
    /// How it was answered, under the fair policy.
    pub served: Option<Served>,
    /// Its session was charged `charged` for the call that went (for a flight: the one
    /// entry that went, whichever call of the payer's session it belonged to).
    pub paid: bool,
    /// It waited once more after its flight was refused with 429 (it does so only once).
    pub requeued: bool,
    pub(crate) agent: Option<u32>,
    /// The call its session makes when this one is answered.
    pub(crate) then: Option<Box<FollowUp>>,
    /// When after its arrival the call leaves if it still waits (a recorded call whose
    /// caller gave up).
    pub(crate) leave_after: Option<Duration>,
}

impl CallRecord {
    /// Whether the call holds its session open until it ends: an open-loop or follow-up
    /// call does, an agent loop's call does not (its loop does).
    pub(crate) fn holds_session(&self) -> bool {
        self.agent.is_none()
    }
}
