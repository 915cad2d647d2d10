//! One platform's whole call path, owned once: [`PlatformPath`].
//!
//! ```text
//! request ─▶ buffer hit? ──yes──▶ Arrival::Cached
//!               │ no
//!               ▼
//!          a flight for this key? ──yes──▶ join it (the session gets its own entry in the
//!               │ no                        lane's fair queue, so the call goes at the
//!               ▼                           best position among its waiters)
//!          lead a new flight: the lane's fair queue (or at once, for a lane without a
//!          kept limit) ─▶ Effect::Send ─▶ the shell calls the platform ─▶ on_outcome:
//!            success  ─▶ feedback to the queue, keep it, Deliver to every waiter
//!            429      ─▶ Retry-After to the queue, refund the charge, the waiters that may
//!                        wait once more do (behind the Retry-After), the rest get the refusal
//!            retryable ─▶ back off, then through the fair queue again (a counted attempt)
//!            failure  ─▶ a stale answer where the data class allows, else the error
//! ```
//!
//! Sans-IO in the quinn-proto shape: inputs are method calls that take `now`
//! ([`PlatformPath::request`], [`PlatformPath::leave`], [`PlatformPath::on_outcome`],
//! [`PlatformPath::handle_timeout`]), outputs are the [`Arrival`] of a request and the
//! [`Effect`]s drained with [`PlatformPath::poll_effect`], and
//! [`PlatformPath::poll_timeout`] says when to call again. The server drives one path
//! per platform from one task; the simulator drives the very same type on virtual time.
//! Both do so through [`Shell`] ([`shell`]): the lease gate, the waiters' values, the
//! effects turned into sends and deliveries, the invariant checks — what every shell
//! would otherwise write around the path itself.
//! Every input admits whatever became due at its `now` before returning, so a shell only
//! has to call [`PlatformPath::handle_timeout`] when its timer fires.
//!
//! Invariants (checked by [`PlatformPath::check_invariants`]):
//! - at most one upstream call per cache key at a time (one flight per key);
//! - every attempt that leaves is an admission of the lane's scheduler when the lane
//!   keeps a limit (R-L8), retries included;
//! - a failure is never stored (R-C5, R-D8): only [`Outcome::Success`] reaches
//!   [`Buffer::store`];
//! - every waiter gets exactly one [`Effect::Deliver`], unless it left first;
//! - a call nobody waits for any more while it is still queued is withdrawn and costs
//!   nothing; while a queued call has waiters, at least one scheduler entry stands for it;
//! - a charge the platform refused (429) is refunded exactly once (the type moves).
//!
//! Rooms: the vocabulary (configuration, inputs, outputs, events) is in `types.rs`; the
//! path's state, its inputs and what it tells are here; a flight's arrival, withdrawal and
//! end in `flights.rs`; what an outcome does in `outcome.rs`; the lanes' places, queues
//! and sends in `lanes.rs`; the invariant checks in `invariants.rs`, backoff in `retry.rs`,
//! the buffer's interface in `buffer.rs`, and the shell around it all in `shell.rs`.
//!
//! What this module does not do: I/O. It never calls a platform, reads a clock or
//! touches a file; the shells do, and report back.

pub mod buffer;
mod flights;
mod invariants;
mod lanes;
mod outcome;
mod retry;
pub mod shell;
mod types;

#[cfg(test)]
mod tests;

use std::collections::{BTreeSet, HashMap, VecDeque};
use std::time::Duration;

pub use buffer::{Buffer, Keep, StaleAnswer, StoreBuffer};
pub use retry::RetryPolicy;
pub use shell::{Action, NotOwner, Outgoing, PendingSend, Shell, ShellStats, Unsent, UnsentWhy};
pub use types::{
    Arrival, Attempt, Delivery, Effect, Failure, Feedback, Lane, LaneConfig, Outcome, OutcomeKind, PathConfig,
    PathConfigError, PathEvent, PathStats, Position, Request, Served,
};

use crate::cache::CacheKey;
pub use crate::cluster::UsageCheckpoint;
use crate::dedup::{FlightId, FlightTable, WaiterId};
use crate::scheduler::{CallTicket, Charge, FairScheduler, SessionKey};
use crate::time::{Instant, WallTime};
use crate::units::Units;

/// Where a flight's call stands.
#[derive(Debug)]
enum CallState {
    /// Waiting in its lane's fair queue.
    Queued { call: CallTicket },
    /// Waiting to be sent again after a failed attempt.
    Backoff { until: Instant },
    /// Out at the platform; the charge is kept for a refund should it answer 429.
    Sent { charge: Option<Charge> },
    /// Waiting at its lane's gate for a place ([`LaneConfig::max_in_flight`]), before
    /// the fair queue.
    Gated,
}

impl CallState {
    /// True when the call takes one of its lane's places: in the fair queue or out.
    fn holds_place(&self) -> bool {
        matches!(self, CallState::Queued { .. } | CallState::Sent { .. })
    }
}

/// The path's state of one flight.
#[derive(Debug)]
struct FlightState {
    lane: Lane,
    cost: Units,
    /// The session its call was last submitted under (the payer, once admitted).
    session: SessionKey,
    call: CallState,
    /// Attempts sent so far (the number of the current one).
    attempts: u32,
    /// Attempts that failed in a way another attempt may mend (the retry policy counts
    /// these; an attempt refused with 429 is not one).
    failures: u32,
    /// When the first attempt went out (the retry deadline counts from there).
    first_sent_at: Option<Instant>,
}

struct LaneState {
    name: &'static str,
    scheduler: Option<FairScheduler>,
    /// Queued calls of this lane → their flights (looked up, never listed).
    flights: HashMap<CallTicket, FlightId, foldhash::fast::FixedState>,
    /// Most flights holding a place (queued or out) at once; `None`: no bound.
    max_in_flight: Option<usize>,
    /// Flights holding a place now.
    holding: usize,
    /// Flights waiting for a place, in arrival order.
    gate: VecDeque<FlightId>,
}

impl LaneState {
    /// True when a flight that holds no place yet may take one now: the bound leaves
    /// room, and nobody waits at the gate ahead of it (unless it comes from the gate).
    fn has_room(&self, from_gate: bool) -> bool {
        self.max_in_flight
            .is_none_or(|max| self.holding < max && (from_gate || self.gate.is_empty()))
    }
}

/// One platform's call path. See the module documentation.
pub struct PlatformPath<B: Buffer, E> {
    name: &'static str,
    buffer: B,
    lanes: Vec<LaneState>,
    flights: FlightTable<CacheKey, FlightState>,
    backoffs: BTreeSet<(Instant, FlightId)>,
    retry: RetryPolicy,
    jitter: retry::Jitter,
    requeue_wait_max: Duration,
    effects: VecDeque<Effect<B::Payload, E>>,
    /// The expired copy each flight may revalidate (see [`Buffer::expired`]).
    previous: HashMap<FlightId, B::Payload, foldhash::fast::FixedState>,
    events: Option<VecDeque<PathEvent>>,
    last_now: Instant,
    stats: PathStats,
}

impl<B: Buffer, E: Clone> PlatformPath<B, E> {
    /// A path over `buffer`, with empty queues and full buckets.
    pub fn new(config: PathConfig, buffer: B) -> Result<PlatformPath<B, E>, PathConfigError> {
        if config.lanes.is_empty() {
            return Err(PathConfigError::NoLane);
        }
        if config.lanes.len() > 256 {
            return Err(PathConfigError::TooManyLanes);
        }
        if config.retry.max_attempts == 0 {
            return Err(PathConfigError::NoAttempt);
        }
        let mut lanes = Vec::with_capacity(config.lanes.len());
        for lane in config.lanes {
            let scheduler = match lane.scheduler {
                Some(c) => {
                    Some(FairScheduler::new(c).map_err(|error| PathConfigError::Scheduler { lane: lane.name, error })?)
                }
                None => None,
            };
            lanes.push(LaneState {
                name: lane.name,
                scheduler,
                flights: HashMap::with_hasher(foldhash::fast::FixedState::with_seed(0x6c61_6e65)),
                max_in_flight: lane.max_in_flight.map(|m| m.max(1)),
                holding: 0,
                gate: VecDeque::new(),
            });
        }
        Ok(PlatformPath {
            name: config.name,
            buffer,
            lanes,
            flights: FlightTable::new(),
            backoffs: BTreeSet::new(),
            jitter: retry::Jitter::new(config.retry.jitter_seed),
            retry: config.retry,
            requeue_wait_max: config.requeue_wait_max,
            effects: VecDeque::new(),
            previous: HashMap::with_hasher(foldhash::fast::FixedState::with_seed(0x7072_6576)),
            events: config.record_events.then(VecDeque::new),
            last_now: Instant::ZERO,
            stats: PathStats::default(),
        })
    }

    /// Starts this path as a platform's new owner at `now` ([`crate::cluster`] rule 3):
    /// every limited lane's bucket is taken to be empty (the previous owner may have
    /// spent all of it), and the sessions' usage comes from `checkpoint` when one is
    /// given (lane `i` from `checkpoint.lanes[i]`). Call it at the start of each ownership,
    /// before its first request (a replica that owns again keeps its path: the usage it saw
    /// itself wins over the checkpoint's).
    pub fn take_over(&mut self, now: Instant, checkpoint: Option<&UsageCheckpoint>) {
        let now = self.advance(now);
        for (i, lane) in self.lanes.iter_mut().enumerate() {
            let Some(scheduler) = lane.scheduler.as_mut() else {
                continue;
            };
            scheduler.assume_empty(now);
            if let Some(usage) = checkpoint.and_then(|c| c.lanes.get(i)) {
                for (session, used) in usage {
                    scheduler.restore_usage(now, session, *used);
                }
            }
        }
    }

    /// The sessions' usage at every lane: what a next owner starts from.
    pub fn usage_checkpoint(&self) -> UsageCheckpoint {
        UsageCheckpoint {
            lanes: self
                .lanes
                .iter()
                .map(|l| l.scheduler.as_ref().map(FairScheduler::usage).unwrap_or_default())
                .collect(),
        }
    }

    /// The path's name ([`PathConfig::name`]).
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// A request arrives at `now` (`wall`: the wall clock, for the buffer's expiry).
    pub fn request(&mut self, now: Instant, wall: WallTime, req: Request) -> Arrival<B::Payload> {
        let now = self.advance(now);
        let arrival = self.arrive(now, wall, req);
        self.drive(now);
        arrival
    }

    /// The request `waiter` gives up (cancelled, timed out, disconnected).
    pub fn leave(&mut self, now: Instant, waiter: WaiterId) {
        let now = self.advance(now);
        self.withdraw(now, waiter);
        self.drive(now);
    }

    /// The requests `waiters` all give up at once (a replica's ownership ended: they go
    /// to the next owner). Unlike one [`PlatformPath::leave`] after another, nothing is
    /// admitted until all are gone: a call queued for a waiter still to be withdrawn
    /// never goes.
    pub fn leave_all(&mut self, now: Instant, waiters: impl IntoIterator<Item = WaiterId>) {
        let now = self.advance(now);
        for waiter in waiters {
            self.withdraw(now, waiter);
        }
        self.drive(now);
    }

    /// The earliest instant at which [`PlatformPath::handle_timeout`] has something to
    /// do; `None` when nothing waits on time.
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        let now = now.max(self.last_now);
        let lanes = self
            .lanes
            .iter()
            .filter_map(|l| l.scheduler.as_ref()?.poll_timeout(now));
        let backoff = self.backoffs.first().map(|&(at, _)| at.max(now));
        lanes.chain(backoff).min()
    }

    /// Time has come to `now`: admit what is due, start the retries that are due.
    pub fn handle_timeout(&mut self, now: Instant) {
        let now = self.advance(now);
        self.drive(now);
    }

    /// The outcome of `attempt`, as the shell saw it. An outcome for an attempt that is
    /// not the flight's current one is ignored.
    pub fn on_outcome(&mut self, now: Instant, wall: WallTime, attempt: Attempt, outcome: Outcome<B::Payload, E>) {
        let now = self.advance(now);
        self.outcome(now, wall, attempt, outcome);
        self.drive(now);
    }

    /// The flight `waiter` waits for, while it waits.
    pub fn flight_of(&self, waiter: WaiterId) -> Option<FlightId> {
        self.flights.flight_of_waiter(waiter)
    }

    /// Where `waiter`'s call stands; `None` when it is not waiting in a queue or backoff.
    pub fn position(&self, now: Instant, waiter: WaiterId) -> Option<Position> {
        let id = self.flights.flight_of_waiter(waiter)?;
        let f = self.flights.get(id)?;
        let lane = &self.lanes[usize::from(f.state.lane.0)];
        match f.state.call {
            CallState::Queued { call } => {
                let e = lane.scheduler.as_ref()?.estimate(now, call)?;
                Some(Position {
                    admit_at: e.admit_at,
                    ahead_in_session: e.ahead_in_session,
                    waiting_sessions: e.waiting_sessions,
                    queued_calls: e.queued_calls,
                })
            }
            CallState::Backoff { until } => {
                let (sessions, calls) = lane
                    .scheduler
                    .as_ref()
                    .map_or((0, 0), |s| (s.waiting_sessions(), s.queued()));
                Some(Position {
                    admit_at: until.max(now),
                    ahead_in_session: 0,
                    waiting_sessions: sessions,
                    queued_calls: calls,
                })
            }
            CallState::Gated => Some(Position {
                admit_at: now,
                ahead_in_session: 0,
                waiting_sessions: lane.gate.len(),
                queued_calls: lane.gate.iter().position(|&g| g == id).unwrap_or(0),
            }),
            CallState::Sent { .. } => None,
        }
    }

    /// Whether effects wait to be taken with [`PlatformPath::poll_effect`].
    pub fn has_effects(&self) -> bool {
        !self.effects.is_empty()
    }

    /// The next thing the shell must do, in order.
    pub fn poll_effect(&mut self) -> Option<Effect<B::Payload, E>> {
        self.effects.pop_front()
    }

    /// The next recorded decision (only with [`PathConfig::record_events`]).
    pub fn poll_event(&mut self) -> Option<PathEvent> {
        self.events.as_mut()?.pop_front()
    }

    /// A lane's scheduler, when the lane keeps a limit.
    pub fn scheduler(&self, lane: Lane) -> Option<&FairScheduler> {
        self.lanes.get(usize::from(lane.0))?.scheduler.as_ref()
    }

    /// The lanes: their names and whether they keep a limit, in lane order.
    pub fn lanes(&self) -> impl Iterator<Item = (Lane, &'static str, Option<&FairScheduler>)> {
        self.lanes
            .iter()
            .enumerate()
            .map(|(i, l)| (Lane(u8::try_from(i).unwrap_or(u8::MAX)), l.name, l.scheduler.as_ref()))
    }

    /// The buffer.
    pub fn buffer(&self) -> &B {
        &self.buffer
    }

    /// The buffer, to flush it (the path keeps no reference into it between steps).
    pub fn buffer_mut(&mut self) -> &mut B {
        &mut self.buffer
    }

    /// Flights under way.
    pub fn in_flight(&self) -> usize {
        self.flights.in_flight()
    }

    /// Requests waiting for a flight.
    pub fn waiting(&self) -> usize {
        self.flights.waiting()
    }

    /// The counters.
    pub fn stats(&self) -> PathStats {
        self.stats
    }

    fn lane_index(&self, lane: Lane) -> usize {
        // A lane that does not exist is the shell's mistake; the main lane serves it.
        let i = usize::from(lane.0);
        if i < self.lanes.len() { i } else { 0 }
    }

    fn advance(&mut self, now: Instant) -> Instant {
        self.last_now = self.last_now.max(now);
        self.last_now
    }

    fn event(&mut self, make: impl FnOnce() -> PathEvent) {
        if let Some(events) = self.events.as_mut() {
            events.push_back(make());
        }
    }
}
