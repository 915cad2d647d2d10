//! The path's vocabulary: its configuration, what goes in (a [`Request`], an
//! [`Outcome`]) and what comes out ([`Arrival`], [`Effect`], [`PathEvent`], [`PathStats`]).

use std::fmt;
use std::time::Duration;

use super::{Keep, RetryPolicy};
use crate::cache::CacheKey;
use crate::dedup::{FlightId, WaiterId};
use crate::scheduler::{
    AdmissionRecord, CallTicket, EntryTicket, MAX_REQUEUE_WAIT, QueueFull, SchedulerConfig, SessionKey,
};
use crate::time::Instant;
use crate::units::Units;

/// Which of a platform's lanes a call goes through. Lane 0 always exists; a platform
/// whose hosts keep separate limits (Officiële Bekendmakingen's search and its text host)
/// has one lane per limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Lane(pub u8);

impl Lane {
    /// The first lane.
    pub const MAIN: Lane = Lane(0);
}

/// One lane: its name (for metrics and traces) and the limit BesluitBron keeps there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LaneConfig {
    /// A short name, e.g. `search` or `text`.
    pub name: &'static str,
    /// The fair scheduler's configuration; `None` passes calls straight through.
    pub scheduler: Option<SchedulerConfig>,
    /// Most calls of this lane in the fair queue or out at the platform at once; the
    /// rest wait in arrival order before the queue ([`PlatformPath`]'s gate). `None`:
    /// no bound. For a platform without a published limit whose requests are expensive
    /// for it (OpenTK's searches).
    pub max_in_flight: Option<usize>,
}

/// How one path is set up.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathConfig {
    /// The path's name in events, checks and logs: the upstream service it serves first
    /// (the server's), or the platform (the simulator's).
    pub name: &'static str,
    /// Its lanes; lane `i` is `lanes[i]`. At least one.
    pub lanes: Vec<LaneConfig>,
    /// When a retryable failure is tried again.
    pub retry: RetryPolicy,
    /// A call the platform refused with 429 waits once more behind the Retry-After when
    /// it is at most this long (and the lane keeps a limit): [`MAX_REQUEUE_WAIT`].
    pub requeue_wait_max: Duration,
    /// Keep a [`PathEvent`] for every decision, drained with [`PlatformPath::poll_event`]
    /// (the simulator's trace; off in production).
    pub record_events: bool,
}

impl PathConfig {
    /// One lane, limited by `scheduler` or not, with the default retry policy.
    pub fn single(name: &'static str, scheduler: Option<SchedulerConfig>) -> PathConfig {
        PathConfig {
            name,
            lanes: vec![LaneConfig {
                name: "main",
                scheduler,
                max_in_flight: None,
            }],
            retry: RetryPolicy::default(),
            requeue_wait_max: MAX_REQUEUE_WAIT,
            record_events: false,
        }
    }
}

/// A configuration the path cannot work with.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PathConfigError {
    /// No lane at all.
    #[error("a platform path needs at least one lane")]
    NoLane,
    /// More lanes than a [`Lane`] can name.
    #[error("a platform path has at most 256 lanes")]
    TooManyLanes,
    /// A lane's scheduler configuration is invalid.
    #[error("lane `{lane}`: {error}")]
    Scheduler {
        /// The lane's name.
        lane: &'static str,
        /// What is wrong.
        error: crate::scheduler::ConfigError,
    },
    /// The retry policy allows no attempt.
    #[error("the retry policy needs at least one attempt")]
    NoAttempt,
}

/// One request on the path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Request {
    /// The shell's id for the request, unique among the requests waiting on this path.
    pub waiter: WaiterId,
    /// The buffer key: platform, class, operation, canonical parameters, scope.
    pub key: CacheKey,
    /// Who it is for (fairness).
    pub session: SessionKey,
    /// What the call costs at the platform.
    pub cost: Units,
    /// Which lane it goes through.
    pub lane: Lane,
}

/// What became of a request at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arrival<P> {
    /// A fresh buffered answer; nothing else happens for this request.
    Cached(P),
    /// The request waits for a flight (its own new one, or another request's): its
    /// answer comes as one [`Effect::Deliver`].
    Waiting {
        /// The flight.
        flight: FlightId,
        /// Whether this request started it.
        led: bool,
    },
    /// BesluitBron's own queue for the lane is full; nothing waits.
    Refused {
        /// Which bound.
        reason: QueueFull,
        /// When a retry makes sense.
        retry_at: Instant,
    },
}

/// What a platform said about its limit next to an answer, and whether to keep the answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Feedback {
    /// Units left at the platform (`RateLimit-Remaining`), if it said.
    pub remaining: Option<Units>,
    /// Time until the platform's bucket is full again (`RateLimit-Reset`), if it said.
    pub reset: Option<Duration>,
    /// How long the answer may be kept: shorter when it is incomplete or carries a warning.
    pub keep: Keep,
    /// The platform said the copy the shell revalidated ([`Effect::Send::previous`]) is
    /// still current (HTTP 304): the answer is that copy, renewed without a download.
    pub revalidated: bool,
}

/// How one attempt ended, as the shell reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome<P, E> {
    /// An answer.
    Success {
        /// The answer, as the buffer keeps it.
        payload: P,
        /// The platform's feedback.
        feedback: Feedback,
    },
    /// The platform refused the call because its limit is used up (HTTP 429).
    RateLimited {
        /// How long it asks to wait.
        retry_after: Duration,
        /// The error to hand a waiter that does not wait again.
        error: E,
    },
    /// A failure worth another attempt: a connection error or a 5xx of an idempotent read.
    Retryable {
        /// The error, should no attempt be left.
        error: E,
        /// The platform's `Retry-After` on a 5xx: an overload back-off for the whole lane.
        retry_after: Option<Duration>,
    },
    /// A failure another attempt would not mend (a time-out, a bad request, garbage).
    Failed {
        /// The error.
        error: E,
    },
}

/// One attempt of a flight: what [`Effect::Send`] asks the shell to make and
/// [`PlatformPath::on_outcome`] reports on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Attempt {
    /// The flight.
    pub flight: FlightId,
    /// 1 for the first attempt, 2 for the first retry, ….
    pub number: u32,
}

/// How an answer was obtained (also the duplicate kind of the request, R-D9).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Served {
    /// From the buffer.
    Cached,
    /// From the platform, by this request's own flight.
    Fetched,
    /// From the platform, by another identical request's flight.
    Coalesced,
    /// The platform failed; an expired entry its data class allows stood in.
    Stale,
}

impl Served {
    /// `cached`, `fetched`, `coalesced` or `stale`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Served::Cached => "cached",
            Served::Fetched => "fetched",
            Served::Coalesced => "coalesced",
            Served::Stale => "stale",
        }
    }
}

/// Why a request got no answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Failure<E> {
    /// The platform failed or refused (its error, as the shell reported it).
    Platform(E),
    /// BesluitBron's own queue for the lane was full when the call had to queue again.
    QueueFull {
        /// Which bound.
        reason: QueueFull,
        /// When a retry makes sense.
        retry_at: Instant,
    },
}

/// A request's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery<P, E> {
    /// An answer and how it was obtained.
    Answer {
        /// The answer.
        payload: P,
        /// How.
        served: Served,
    },
    /// No answer.
    Failed(Failure<E>),
}

/// What the shell must do.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Effect<P, E> {
    /// Call the platform for this flight now (its first attempt or a retry).
    Send {
        /// Which attempt; report its outcome with this.
        attempt: Attempt,
        /// The lane it goes out on (the upstream service it reaches).
        lane: Lane,
        /// What is asked.
        key: CacheKey,
        /// The admission that let it go, on a lane that keeps a limit.
        admission: Option<AdmissionRecord>,
        /// The expired copy the buffer still holds for the key, when it has one
        /// ([`Buffer::expired`]): the shell may ask the platform whether it is still
        /// current (`If-None-Match`) and answer with it ([`Feedback::revalidated`]).
        previous: Option<P>,
    },
    /// Hand a waiter its answer.
    Deliver {
        /// The waiter.
        waiter: WaiterId,
        /// The answer.
        delivery: Delivery<P, E>,
    },
    /// The flight is over: nothing more will be asked or delivered for it.
    Ended {
        /// The flight.
        flight: FlightId,
    },
}

/// Where a waiting request stands, for progress reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Best guess of when its call goes.
    pub admit_at: Instant,
    /// Its session's own calls ahead of it at the lane.
    pub ahead_in_session: usize,
    /// Sessions waiting at the lane.
    pub waiting_sessions: usize,
    /// Calls waiting at the lane.
    pub queued_calls: usize,
}

/// A decision, for traces (see [`PathConfig::record_events`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathEvent {
    /// A request was answered from the buffer.
    Hit {
        /// When.
        at: Instant,
        /// For whom.
        session: SessionKey,
        /// What.
        key: CacheKey,
    },
    /// A request started a flight.
    Lead {
        /// When.
        at: Instant,
        /// For whom.
        session: SessionKey,
        /// The new flight.
        flight: FlightId,
        /// What.
        key: CacheKey,
    },
    /// A request joined a flight.
    Coalesce {
        /// When.
        at: Instant,
        /// For whom.
        session: SessionKey,
        /// The flight.
        flight: FlightId,
        /// Whether the flight's call still waited in the lane's queue.
        queued: bool,
    },
    /// A call (or a session's entry for it) was queued at a lane.
    Queue {
        /// Which lane.
        lane: Lane,
        /// When.
        at: Instant,
        /// For whom.
        session: SessionKey,
        /// The entry.
        entry: EntryTicket,
        /// The call it stands for.
        call: CallTicket,
        /// Whether it joined an existing call (another session's entry stood first).
        joined: bool,
        /// Units requested.
        cost: Units,
    },
    /// A call goes out.
    Send {
        /// Which lane.
        lane: Lane,
        /// When.
        at: Instant,
        /// For whom (the payer on a limited lane).
        session: SessionKey,
        /// Which attempt.
        attempt: Attempt,
        /// Units asked.
        cost: Units,
        /// The admission, on a lane that keeps a limit.
        admission: Option<AdmissionRecord>,
    },
    /// A waiting entry was withdrawn (its waiter left; others still wait).
    Cancel {
        /// Which lane.
        lane: Lane,
        /// When.
        at: Instant,
        /// The entry.
        entry: EntryTicket,
    },
    /// A waiting call was withdrawn whole: nobody waits for it.
    CancelCall {
        /// Which lane.
        lane: Lane,
        /// When.
        at: Instant,
        /// The call.
        call: CallTicket,
    },
    /// A lane's queue was full.
    Refuse {
        /// Which lane.
        lane: Lane,
        /// When.
        at: Instant,
        /// For whom.
        session: SessionKey,
        /// Which bound.
        reason: QueueFull,
        /// When a retry makes sense.
        retry_at: Instant,
    },
    /// A refused call's charge went back to its session.
    Refund {
        /// Which lane.
        lane: Lane,
        /// When.
        at: Instant,
        /// The flight whose attempt the platform refused.
        flight: FlightId,
        /// The session.
        session: SessionKey,
        /// Units given back.
        cost: Units,
    },
    /// A failed attempt will be tried again.
    Retry {
        /// When.
        at: Instant,
        /// The flight.
        flight: FlightId,
        /// The attempt that failed.
        failed: u32,
        /// When the next attempt queues.
        until: Instant,
    },
    /// A flight's outcome reached its waiters.
    Outcome {
        /// When.
        at: Instant,
        /// The flight.
        flight: FlightId,
        /// What happened.
        kind: OutcomeKind,
        /// Waiters handed the outcome.
        waiters: usize,
        /// Waiters that wait once more behind a Retry-After instead, in id order.
        again: Vec<WaiterId>,
    },
}

/// How a flight ended, for [`PathEvent::Outcome`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutcomeKind {
    /// An answer.
    Ok,
    /// A failure (after any retries).
    Failed,
    /// A failure, answered from an older copy.
    Stale,
    /// A 429.
    RateLimited,
    /// BesluitBron's own queue was full when it had to queue again.
    Refused,
}

impl OutcomeKind {
    /// `ok`, `failed`, `stale`, `rate-limited` or `refused`.
    pub const fn as_str(self) -> &'static str {
        match self {
            OutcomeKind::Ok => "ok",
            OutcomeKind::Failed => "failed",
            OutcomeKind::Stale => "stale",
            OutcomeKind::RateLimited => "rate-limited",
            OutcomeKind::Refused => "refused",
        }
    }
}

impl fmt::Display for Lane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// Counters since the path was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PathStats {
    /// Requests answered from the buffer.
    pub hits: u64,
    /// Requests that started a flight.
    pub led: u64,
    /// Requests that joined a flight.
    pub coalesced: u64,
    /// Requests refused because a lane's queue was full.
    pub refused: u64,
    /// Attempts sent.
    pub attempts: u64,
    /// Of those, retries after a retryable failure.
    pub retries: u64,
    /// Flights queued once more after a 429.
    pub requeues: u64,
    /// Charges given back after a 429.
    pub refunds: u64,
    /// Queued flights withdrawn because nobody waited.
    pub withdrawn: u64,
    /// Failures answered from an older copy.
    pub stale_served: u64,
    /// Flights that ended without an answer.
    pub failed: u64,
    /// Requests that left before their answer.
    pub left: u64,
    /// Answers renewed by the platform's "not modified" instead of a download.
    pub revalidated: u64,
    /// Flights that waited at a lane's gate for a free place ([`LaneConfig::max_in_flight`]).
    pub gated: u64,
}
