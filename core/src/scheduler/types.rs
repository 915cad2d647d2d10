//! The scheduler's vocabulary: who a call is for ([`SessionKey`]), its tickets, the
//! configuration, and what the scheduler answers ([`Submission`], [`Admission`],
//! [`Estimate`], [`SchedulerStats`]).
//!
//! What this module does not do: decide anything (`mod.rs` does).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::platform::LimitConfig;
use crate::time::Instant;
use crate::units::Units;

/// A hasher with a fixed seed (foldhash, as the flight tables): lookups only, never
/// iterated for decisions, and no ambient randomness in the core.
pub(super) type FixedState = foldhash::fast::FixedState;

/// Who a call is made for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SessionKey {
    /// The search page and BesluitBron's own maintenance (fetching the Laadstatus):
    /// one session whose usage never lowers its weight (R-L7).
    System,
    /// A client session: an MCP session id, or a client address before a session exists.
    Client(Arc<str>),
}

impl SessionKey {
    /// A client session key.
    pub fn client(id: &str) -> SessionKey {
        SessionKey::Client(Arc::from(id))
    }

    /// The key as text (`system` for the system session), as [`fmt::Display`] writes it.
    pub fn as_str(&self) -> &str {
        match self {
            SessionKey::System => "system",
            SessionKey::Client(id) => id,
        }
    }
}

impl fmt::Display for SessionKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One call waiting at (or admitted by) a scheduler: what several sessions may join.
///
/// Unique within one scheduler and increasing in submission order. A call's first entry
/// carries the same number ([`CallTicket::first_entry`]); entries made by
/// [`FairScheduler::join`](super::FairScheduler::join) get numbers of their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CallTicket(pub u64);

/// One session's place in the queue for a call: what is cancelled, admitted and
/// charged. A call has one entry per session that waits for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EntryTicket(pub u64);

impl CallTicket {
    /// The entry the call was submitted with.
    pub const fn first_entry(self) -> EntryTicket {
        EntryTicket(self.0)
    }
}

impl fmt::Display for CallTicket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

impl fmt::Display for EntryTicket {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "#{}", self.0)
    }
}

/// How one platform's scheduler is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SchedulerConfig {
    /// The platform's limit: C units per W.
    pub limit: LimitConfig,
    /// Most calls waiting at this platform at once.
    pub max_queued: usize,
    /// Most calls one session may have waiting at this platform.
    pub max_queued_per_session: usize,
    /// How long after its last call a session's usage is forgotten (R-L6: 30 minutes).
    pub forget_after: Duration,
}

impl SchedulerConfig {
    /// The defaults around a limit: 10,000 waiting calls per platform, 256 per
    /// session, usage forgotten after 30 minutes.
    pub fn with_limit(limit: LimitConfig) -> SchedulerConfig {
        SchedulerConfig {
            limit,
            max_queued: 10_000,
            max_queued_per_session: 256,
            forget_after: Duration::from_secs(30 * 60),
        }
    }
}

/// A configuration the scheduler cannot work with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// C must be positive.
    #[error("a platform limit needs a capacity above zero units")]
    ZeroCapacity,
    /// W must be positive.
    #[error("a platform limit needs a refill window above zero")]
    ZeroWindow,
    /// The queue bounds must admit at least one waiting call.
    #[error("the queue bounds must allow at least one waiting call (platform and session)")]
    ZeroQueue,
}

/// Which rule admitted a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AdmitRule {
    /// Nobody was waiting and the bucket had room (R-L2).
    Direct,
    /// The smallest start tag (R-L3).
    Fair,
    /// A deadline had to be kept (R-L4).
    Deadline,
}

impl AdmitRule {
    /// `direct`, `fair` or `deadline`.
    pub const fn as_str(self) -> &'static str {
        match self {
            AdmitRule::Direct => "direct",
            AdmitRule::Fair => "fair",
            AdmitRule::Deadline => "deadline",
        }
    }
}

/// A call that may go out now. Producing one has debited the bucket (R-L8).
///
/// Not `Clone`: it carries the one [`Charge`] a refund can consume. Copy what is needed
/// with [`Admission::record`].
#[derive(Debug, PartialEq, Eq)]
pub struct Admission {
    /// The call (also for direct admissions, which never queued).
    pub call: CallTicket,
    /// The entry that was admitted: the call's first entry, or the entry of a session
    /// that joined it ([`FairScheduler::join`](super::FairScheduler::join)) and came first.
    pub entry: EntryTicket,
    /// The session it was made for (the admitted entry's), which pays.
    pub session: SessionKey,
    /// The units charged: the requested cost, or C when it asked more (R-L5).
    pub cost: Units,
    /// The units the caller asked for.
    pub requested: Units,
    /// When the call was submitted.
    pub submitted_at: Instant,
    /// When it was admitted.
    pub admitted_at: Instant,
    /// Units left in the bucket right after the debit.
    pub tokens_after: Units,
    /// The rule that admitted it.
    pub rule: AdmitRule,
    /// Exactly what this admission charged its session, for [`FairScheduler::refund`](super::FairScheduler::refund)
    /// should the platform refuse the call. Moved out, it can be refunded once.
    pub charge: Charge,
}

impl Admission {
    /// How long the call waited.
    pub fn waited(&self) -> Duration {
        self.admitted_at.saturating_since(self.submitted_at)
    }

    /// Everything about the admission but its charge, to keep or print.
    pub fn record(&self) -> AdmissionRecord {
        AdmissionRecord {
            call: self.call,
            entry: self.entry,
            session: self.session.clone(),
            cost: self.cost,
            requested: self.requested,
            submitted_at: self.submitted_at,
            admitted_at: self.admitted_at,
            tokens_after: self.tokens_after,
            rule: self.rule,
        }
    }
}

/// A copy of an [`Admission`] without its charge: for traces, logs and tests.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AdmissionRecord {
    /// See [`Admission::call`].
    pub call: CallTicket,
    /// See [`Admission::entry`].
    pub entry: EntryTicket,
    /// See [`Admission::session`].
    pub session: SessionKey,
    /// See [`Admission::cost`].
    pub cost: Units,
    /// See [`Admission::requested`].
    pub requested: Units,
    /// See [`Admission::submitted_at`].
    pub submitted_at: Instant,
    /// See [`Admission::admitted_at`].
    pub admitted_at: Instant,
    /// See [`Admission::tokens_after`].
    pub tokens_after: Units,
    /// See [`Admission::rule`].
    pub rule: AdmitRule,
}

impl AdmissionRecord {
    /// How long the call waited.
    pub fn waited(&self) -> Duration {
        self.admitted_at.saturating_since(self.submitted_at)
    }
}

/// What one admission charged its session: the units and what they added to the
/// session's finish tag. Kept so a refund takes back exactly that, even after later
/// admissions of the same session.
///
/// Neither `Clone` nor `Copy`: [`FairScheduler::refund`](super::FairScheduler::refund) consumes it, so one admission
/// can be refunded at most once.
#[derive(Debug, PartialEq, Eq)]
pub struct Charge {
    pub(super) session: SessionKey,
    pub(super) cost: Units,
    pub(super) finish_increment: u128,
}

impl Charge {
    /// The session charged.
    pub fn session(&self) -> &SessionKey {
        &self.session
    }

    /// The units charged.
    pub fn cost(&self) -> Units {
        self.cost
    }
}

/// Why an arrival was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueFull {
    /// The platform's queue holds `max_queued` calls.
    Platform,
    /// The session has `max_queued_per_session` calls waiting.
    Session,
}

/// Why [`FairScheduler::join`](super::FairScheduler::join) could not add an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JoinError {
    /// The call no longer waits: it was admitted (it is in flight) or withdrawn.
    #[error("the call is not waiting any more")]
    NotQueued,
    /// A queue bound is reached; the joiner waits for the call at its current position.
    #[error("the queue is full")]
    QueueFull,
}

/// The answer to [`FairScheduler::submit`](super::FairScheduler::submit).
#[derive(Debug, PartialEq, Eq)]
pub enum Submission {
    /// The call may go out now.
    Admitted(Admission),
    /// The call waits; poll for its [`Admission`], let other sessions [`FairScheduler::join`](super::FairScheduler::join)
    /// it, or withdraw it ([`FairScheduler::cancel_call`](super::FairScheduler::cancel_call), or its entry with
    /// [`FairScheduler::cancel`](super::FairScheduler::cancel)).
    Queued {
        /// The call.
        call: CallTicket,
        /// Its first entry, the submitting session's place.
        entry: EntryTicket,
    },
    /// The call was not accepted; a retry makes sense from `retry_at`.
    Refused {
        /// Which bound was reached.
        reason: QueueFull,
        /// The earliest instant at which the scheduler expects room in the queue.
        retry_at: Instant,
    },
}

/// Where a queued call stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Estimate {
    /// Best guess of the admission instant (a fluid model of the weighted shares,
    /// capped by the starvation bound); exact when nobody else waits.
    pub admit_at: Instant,
    /// The session's own calls before this one.
    pub ahead_in_session: usize,
    /// Sessions with calls waiting at this platform, this one included.
    pub waiting_sessions: usize,
    /// Calls waiting at this platform.
    pub queued_calls: usize,
}

/// Counters since the scheduler was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedulerStats {
    /// Calls admitted by any rule.
    pub admitted_calls: u64,
    /// Units charged for them.
    pub admitted_units: Units,
    /// Of those, admitted inside `submit`.
    pub direct_admissions: u64,
    /// Of those, admitted to keep a deadline.
    pub deadline_admissions: u64,
    /// Arrivals refused because a queue was full.
    pub refused_calls: u64,
    /// Queued calls withdrawn.
    pub cancelled_calls: u64,
    /// Sessions forgotten after their quiet period.
    pub forgotten_sessions: u64,
    /// Admitted calls the platform refused and whose charge went back to their session.
    pub refunded_calls: u64,
}
