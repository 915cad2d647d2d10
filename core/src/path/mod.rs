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
//! Rooms: the vocabulary (configuration, inputs, outputs, events) is in `types.rs`, the
//! stepping of a flight here, the invariant checks in `invariants.rs`, backoff in `retry.rs`,
//! the buffer's interface in `buffer.rs`, and the shell around it all in `shell.rs`.
//!
//! What this module does not do: I/O. It never calls a platform, reads a clock or
//! touches a file; the shells do, and report back.

pub mod buffer;
mod invariants;
mod retry;
pub mod shell;
mod types;

#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, BTreeSet, VecDeque};
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
use crate::scheduler::{
    AdmissionRecord, CallTicket, Charge, EntryTicket, FairScheduler, SessionKey, Submission, queued_again,
};
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
    /// Queued calls of this lane → their flights.
    flights: BTreeMap<CallTicket, FlightId>,
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
    previous: BTreeMap<FlightId, B::Payload>,
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
                flights: BTreeMap::new(),
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
            previous: BTreeMap::new(),
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

    fn arrive(&mut self, now: Instant, wall: WallTime, req: Request) -> Arrival<B::Payload> {
        if let Some(payload) = self.buffer.lookup(&req.key, wall) {
            self.stats.hits += 1;
            self.event(|| PathEvent::Hit {
                at: now,
                session: req.session.clone(),
                key: req.key.clone(),
            });
            return Arrival::Cached(payload);
        }
        let lane = self.lane_index(req.lane);
        if let Some(flight) = self.flights.flight_of(&req.key) {
            return self.join(now, flight, req);
        }
        let previous = self.buffer.expired(&req.key, wall);
        if !self.lanes[lane].has_room(false) {
            // The lane's places are taken: wait at its gate, in arrival order.
            self.stats.led += 1;
            self.stats.gated += 1;
            let id = self.begin_flight(now, &req, lane, CallState::Gated, previous);
            self.lanes[lane].gate.push_back(id);
            return Arrival::Waiting { flight: id, led: true };
        }
        // A new flight: its call goes to the lane first, so a full queue leaves nothing behind.
        let call = match self.lanes[lane].scheduler.as_mut() {
            None => CallState::Sent { charge: None },
            Some(s) => match s.submit(now, &req.session, req.cost) {
                Submission::Admitted(a) => {
                    let record = a.record();
                    self.stats.led += 1;
                    let id = self.begin_flight(now, &req, lane, CallState::Sent { charge: Some(a.charge) }, previous);
                    self.sent(now, id, Some(record));
                    return Arrival::Waiting { flight: id, led: true };
                }
                Submission::Queued { call, entry } => {
                    self.stats.led += 1;
                    let id = self.begin_flight(now, &req, lane, CallState::Queued { call }, previous);
                    self.lanes[lane].flights.insert(call, id);
                    if let Some(f) = self.flights.get_mut(id)
                        && let Some(w) = f.waiters.get_mut(&req.waiter)
                    {
                        w.entry = Some(entry);
                    }
                    let session = req.session.clone();
                    self.event(|| PathEvent::Queue {
                        lane: req.lane,
                        at: now,
                        session,
                        entry,
                        call,
                        joined: false,
                        cost: req.cost,
                    });
                    return Arrival::Waiting { flight: id, led: true };
                }
                Submission::Refused { reason, retry_at } => {
                    self.stats.refused += 1;
                    self.event(|| PathEvent::Refuse {
                        lane: req.lane,
                        at: now,
                        session: req.session.clone(),
                        reason,
                        retry_at,
                    });
                    return Arrival::Refused { reason, retry_at };
                }
            },
        };
        self.stats.led += 1;
        let id = self.begin_flight(now, &req, lane, call, previous);
        self.sent(now, id, None);
        Arrival::Waiting { flight: id, led: true }
    }

    /// Starts a flight for `req` in `call` state (no flight exists for its key), with the
    /// expired copy it may revalidate.
    fn begin_flight(
        &mut self,
        now: Instant,
        req: &Request,
        lane: usize,
        call: CallState,
        previous: Option<B::Payload>,
    ) -> FlightId {
        if call.holds_place() {
            self.lanes[lane].holding += 1;
        }
        let state = FlightState {
            lane: Lane(u8::try_from(lane).unwrap_or(u8::MAX)),
            cost: req.cost,
            session: req.session.clone(),
            call,
            attempts: 0,
            failures: 0,
            first_sent_at: None,
        };
        // The caller checked that no flight exists for the key; waiter ids are the shell's
        // to keep unique.
        let id = match self.flights.lead(&req.key, req.waiter, &req.session, state) {
            Ok(id) => id,
            Err(bug) => panic!("a shell broke the path's contract: {bug}"),
        };
        if let Some(previous) = previous {
            self.previous.insert(id, previous);
        }
        self.event(|| PathEvent::Lead {
            at: now,
            session: req.session.clone(),
            flight: id,
            key: req.key.clone(),
        });
        id
    }

    fn join(&mut self, now: Instant, flight: FlightId, req: Request) -> Arrival<B::Payload> {
        if let Err(bug) = self.flights.join(flight, req.waiter, &req.session) {
            panic!("a shell broke the path's contract: {bug}");
        }
        self.stats.coalesced += 1;
        // Present: the flight was found under the key just now.
        let f = self.flights.get(flight).expect("the key's flight");
        let lane = usize::from(f.state.lane.0);
        let queued = match f.state.call {
            CallState::Queued { call } => Some(call),
            _ => None,
        };
        self.event(|| PathEvent::Coalesce {
            at: now,
            session: req.session.clone(),
            flight,
            queued: queued.is_some(),
        });
        if let Some(call) = queued {
            // A full queue: the joiner waits for the call at its current position.
            if let Some(entry) = self.join_entry(now, lane, call, &req.session) {
                self.set_entry(flight, &req.session, entry);
            }
        }
        Arrival::Waiting { flight, led: false }
    }

    /// `session`'s entry for the queued `call` of lane `lane` (an existing one, or a new
    /// one joined now), or `None` when the queue is full.
    fn join_entry(&mut self, now: Instant, lane: usize, call: CallTicket, session: &SessionKey) -> Option<EntryTicket> {
        let s = self.lanes[lane].scheduler.as_mut()?;
        let existing = s.entries_of(call).len();
        let entry = s.join(now, session, call).ok()?;
        let joined = s.entries_of(call).len() > existing;
        if joined {
            let cost = self.flights_cost(call, lane);
            self.event(|| PathEvent::Queue {
                lane: Lane(u8::try_from(lane).unwrap_or(u8::MAX)),
                at: now,
                session: session.clone(),
                entry,
                call,
                joined: true,
                cost,
            });
        }
        Some(entry)
    }

    fn flights_cost(&self, call: CallTicket, lane: usize) -> Units {
        self.lanes[lane]
            .flights
            .get(&call)
            .and_then(|&id| self.flights.get(id))
            .map_or(Units::ZERO, |f| f.state.cost)
    }

    /// Every waiter of `session` in `flight` stands on `entry`.
    fn set_entry(&mut self, flight: FlightId, session: &SessionKey, entry: EntryTicket) {
        if let Some(f) = self.flights.get_mut(flight) {
            for w in f.waiters.values_mut() {
                if &w.session == session {
                    w.entry = Some(entry);
                }
            }
        }
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

    /// `waiter` leaves its flight; what nobody waits for any more is withdrawn. Admits
    /// nothing (the caller drives).
    fn withdraw(&mut self, now: Instant, waiter: WaiterId) {
        let Some((id, gone)) = self.flights.leave(waiter) else {
            return;
        };
        self.stats.left += 1;
        // Present: `leave` returns only flights in the table.
        let f = self.flights.get(id).expect("the waiter's flight");
        let lane = usize::from(f.state.lane.0);
        let nobody = f.waiters.is_empty();
        match f.state.call {
            CallState::Sent { .. } => {
                // The call is out: it completes, and a success is still kept.
            }
            CallState::Backoff { until } => {
                if nobody {
                    self.backoffs.remove(&(until, id));
                    self.stats.withdrawn += 1;
                    self.end_flight(id);
                }
            }
            CallState::Gated => {
                if nobody {
                    self.stats.withdrawn += 1;
                    self.end_flight(id);
                }
            }
            CallState::Queued { call } => {
                if nobody {
                    if let Some(s) = self.lanes[lane].scheduler.as_mut() {
                        s.cancel_call(now, call);
                    }
                    self.lanes[lane].flights.remove(&call);
                    self.stats.withdrawn += 1;
                    self.event(|| PathEvent::CancelCall {
                        lane: Lane(u8::try_from(lane).unwrap_or(u8::MAX)),
                        at: now,
                        call,
                    });
                    self.end_flight(id);
                } else if let Some(entry) = gone.entry {
                    self.withdraw_entry(now, id, lane, call, entry);
                }
            }
        }
    }

    /// The leaver's `entry` of the queued `call` stands for nobody unless another waiter of
    /// its session shares it; withdraw it, but never the call's last place while others wait
    /// (give another waiter's session a place first).
    fn withdraw_entry(&mut self, now: Instant, id: FlightId, lane: usize, call: CallTicket, entry: EntryTicket) {
        // Present: the caller found the flight.
        let f = self.flights.get(id).expect("flight");
        if f.waiters.values().any(|w| w.entry == Some(entry)) {
            return;
        }
        if f.waiters.values().all(|w| w.entry.is_none()) {
            let session = f.waiters.values().next().map(|w| w.session.clone());
            if let Some(session) = session
                && let Some(e) = self.join_entry(now, lane, call, &session)
            {
                self.set_entry(id, &session, e);
            }
        }
        let f = self.flights.get(id).expect("flight");
        if f.waiters.values().any(|w| w.entry.is_some())
            && let Some(s) = self.lanes[lane].scheduler.as_mut()
            && s.cancel(now, entry)
        {
            self.event(|| PathEvent::Cancel {
                lane: Lane(u8::try_from(lane).unwrap_or(u8::MAX)),
                at: now,
                entry,
            });
        }
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

    fn outcome(&mut self, now: Instant, wall: WallTime, attempt: Attempt, outcome: Outcome<B::Payload, E>) {
        let id = attempt.flight;
        let Some(f) = self.flights.get_mut(id) else {
            return;
        };
        let CallState::Sent { charge } = &mut f.state.call else {
            return;
        };
        if f.state.attempts != attempt.number {
            return;
        }
        let charge = charge.take();
        let lane = usize::from(f.state.lane.0);
        let first_sent_at = f.state.first_sent_at.unwrap_or(now);
        let anyone = !f.waiters.is_empty();
        let key = f.key.clone();
        match outcome {
            Outcome::Success { payload, feedback } => {
                if let (Some(s), Some(remaining)) = (self.lanes[lane].scheduler.as_mut(), feedback.remaining) {
                    s.on_remaining(now, remaining, feedback.reset);
                }
                if feedback.revalidated {
                    self.stats.revalidated += 1;
                }
                self.buffer.store(&key, &payload, feedback.keep, wall);
                self.finish(now, id, OutcomeKind::Ok, |leader| Delivery::Answer {
                    payload: payload.clone(),
                    served: if leader { Served::Fetched } else { Served::Coalesced },
                });
            }
            Outcome::RateLimited { retry_after, error } => self.rate_limited(now, id, lane, charge, retry_after, error),
            Outcome::Retryable { error, retry_after } => {
                let failed = match self.flights.get_mut(id) {
                    Some(f) => {
                        f.state.failures += 1;
                        f.state.failures
                    }
                    None => return,
                };
                if let (Some(s), Some(wait)) = (self.lanes[lane].scheduler.as_mut(), retry_after) {
                    // The platform asks everyone to back off, not only this call.
                    s.on_retry_after(now, wait);
                }
                let deadline = first_sent_at + self.retry.deadline();
                let wait = retry_after.unwrap_or_else(|| self.jitter.apply(self.retry.backoff(failed)));
                let until = now + wait;
                // Nobody waits any more: another attempt would spend the platform's budget
                // for no one.
                if failed < self.retry.max_attempts && until < deadline && anyone {
                    self.set_call(id, CallState::Backoff { until });
                    self.backoffs.insert((until, id));
                    self.event(|| PathEvent::Retry {
                        at: now,
                        flight: id,
                        failed,
                        until,
                    });
                } else {
                    self.fail(now, wall, id, error);
                }
            }
            Outcome::Failed { error } => self.fail(now, wall, id, error),
        }
    }

    /// The platform refused flight `id` with 429.
    fn rate_limited(
        &mut self,
        now: Instant,
        id: FlightId,
        lane: usize,
        charge: Option<Charge>,
        retry_after: Duration,
        error: E,
    ) {
        let lane_id = Lane(u8::try_from(lane).unwrap_or(u8::MAX));
        let limited = match self.lanes[lane].scheduler.as_mut() {
            Some(s) => {
                s.on_retry_after(now, retry_after);
                if let Some(charge) = charge {
                    let (session, cost) = (charge.session().clone(), charge.cost());
                    s.refund(now, charge);
                    self.stats.refunds += 1;
                    self.event(|| PathEvent::Refund {
                        lane: lane_id,
                        at: now,
                        flight: id,
                        session,
                        cost,
                    });
                }
                true
            }
            None => false,
        };
        // Who waits once more (`queued_again`), each waiter on its own.
        let mut again = Vec::new();
        let mut refused = Vec::new();
        // Present: the caller found the flight.
        let f = self.flights.get(id).expect("flight");
        for (&w, waiter) in &f.waiters {
            let may = queued_again(
                limited,
                retry_after,
                self.requeue_wait_max,
                waiter.requeued,
                &waiter.session,
            );
            if may { again.push(w) } else { refused.push(w) }
        }
        if again.is_empty() {
            self.finish(now, id, OutcomeKind::RateLimited, |_| {
                Delivery::Failed(Failure::Platform(error.clone()))
            });
            return;
        }
        for &w in &refused {
            self.flights.leave(w);
            self.effects.push_back(Effect::Deliver {
                waiter: w,
                delivery: Delivery::Failed(Failure::Platform(error.clone())),
            });
        }
        let waiters = refused.len();
        self.event(|| PathEvent::Outcome {
            at: now,
            flight: id,
            kind: OutcomeKind::RateLimited,
            waiters,
            again: again.clone(),
        });
        if let Some(f) = self.flights.get_mut(id) {
            for w in f.waiters.values_mut() {
                w.requeued = true;
            }
        }
        self.stats.requeues += 1;
        self.resubmit(now, id);
    }

    /// Flight `id` failed for good: a stale answer where the data class allows, else `error`.
    fn fail(&mut self, now: Instant, wall: WallTime, id: FlightId, error: E) {
        // Present: the callers found the flight.
        let key = self.flights.get(id).expect("flight").key.clone();
        match self.buffer.stale(&key, wall) {
            Some(StaleAnswer::Fresh(payload)) => {
                self.finish(now, id, OutcomeKind::Ok, |_| Delivery::Answer {
                    payload: payload.clone(),
                    served: Served::Cached,
                });
            }
            Some(StaleAnswer::Stale(payload)) => {
                self.stats.stale_served += 1;
                self.finish(now, id, OutcomeKind::Stale, |_| Delivery::Answer {
                    payload: payload.clone(),
                    served: Served::Stale,
                });
            }
            None => {
                self.stats.failed += 1;
                self.finish(now, id, OutcomeKind::Failed, |_| {
                    Delivery::Failed(Failure::Platform(error.clone()))
                });
            }
        }
    }

    /// The flight's call goes to its lane again (a retry after backoff, or after a 429),
    /// for its waiters' sessions.
    fn resubmit(&mut self, now: Instant, id: FlightId) {
        // Present: the callers found the flight.
        let f = self.flights.get(id).expect("flight");
        let lane = usize::from(f.state.lane.0);
        let lane_id = f.state.lane;
        let cost = f.state.cost;
        let Some(session) = f.waiters.values().next().map(|w| w.session.clone()) else {
            // Nobody waits: nothing to ask for.
            self.stats.withdrawn += 1;
            self.end_flight(id);
            return;
        };
        let sessions: Vec<SessionKey> = f
            .waiters
            .values()
            .map(|w| w.session.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let (holds, from_gate) = (f.state.call.holds_place(), matches!(f.state.call, CallState::Gated));
        if !holds && !self.lanes[lane].has_room(from_gate) {
            // No place free: wait at the gate (a flight taken from the gate always has one).
            self.stats.gated += 1;
            self.set_call(id, CallState::Gated);
            self.lanes[lane].gate.push_back(id);
            return;
        }
        let Some(s) = self.lanes[lane].scheduler.as_mut() else {
            self.set_call(id, CallState::Sent { charge: None });
            self.sent(now, id, None);
            return;
        };
        let submitted = s.submit(now, &session, cost);
        self.flights.get_mut(id).expect("flight").state.session = session.clone();
        match submitted {
            Submission::Admitted(a) => {
                let record = a.record();
                self.set_call(id, CallState::Sent { charge: Some(a.charge) });
                self.sent(now, id, Some(record));
            }
            Submission::Queued { call, entry } => {
                self.set_call(id, CallState::Queued { call });
                self.lanes[lane].flights.insert(call, id);
                self.set_entry(id, &session, entry);
                self.event(|| PathEvent::Queue {
                    lane: lane_id,
                    at: now,
                    session: session.clone(),
                    entry,
                    call,
                    joined: false,
                    cost,
                });
                for other in sessions.into_iter().filter(|s| s != &session) {
                    if let Some(e) = self.join_entry(now, lane, call, &other) {
                        self.set_entry(id, &other, e);
                    }
                }
            }
            Submission::Refused { reason, retry_at } => {
                self.stats.refused += 1;
                self.event(|| PathEvent::Refuse {
                    lane: lane_id,
                    at: now,
                    session,
                    reason,
                    retry_at,
                });
                self.finish(now, id, OutcomeKind::Refused, |_| {
                    Delivery::Failed(Failure::QueueFull { reason, retry_at })
                });
            }
        }
    }

    /// Flight `id` ends with `kind`: each remaining waiter gets `delivery(is_leader)`.
    fn finish(
        &mut self,
        now: Instant,
        id: FlightId,
        kind: OutcomeKind,
        delivery: impl Fn(bool) -> Delivery<B::Payload, E>,
    ) {
        let Some(f) = self.flights.finish(id) else {
            return;
        };
        self.release(id, usize::from(f.state.lane.0), &f.state.call);
        let n = f.waiters.len();
        for &w in f.waiters.keys() {
            self.effects.push_back(Effect::Deliver {
                waiter: w,
                delivery: delivery(w == f.leader),
            });
        }
        self.effects.push_back(Effect::Ended { flight: id });
        self.event(|| PathEvent::Outcome {
            at: now,
            flight: id,
            kind,
            waiters: n,
            again: Vec::new(),
        });
    }

    /// Flight `id` ends without anyone to tell (withdrawn).
    fn end_flight(&mut self, id: FlightId) {
        if let Some(f) = self.flights.finish(id) {
            self.release(id, usize::from(f.state.lane.0), &f.state.call);
            self.effects.push_back(Effect::Ended { flight: id });
        }
    }

    /// Flight `id`, on lane `lane` in state `call`, is over: its place (or its spot at the
    /// gate) and its revalidation copy go.
    fn release(&mut self, id: FlightId, lane: usize, call: &CallState) {
        let l = &mut self.lanes[lane];
        if call.holds_place() {
            l.holding = l.holding.saturating_sub(1);
        } else if matches!(call, CallState::Gated) {
            l.gate.retain(|&g| g != id);
        }
        self.previous.remove(&id);
    }

    /// Moves flight `id` to `call`, taking or giving back its lane's place.
    fn set_call(&mut self, id: FlightId, call: CallState) {
        let Some(f) = self.flights.get_mut(id) else {
            return;
        };
        let (before, after) = (f.state.call.holds_place(), call.holds_place());
        let lane = &mut self.lanes[usize::from(f.state.lane.0)];
        match (before, after) {
            (false, true) => lane.holding += 1,
            (true, false) => lane.holding = lane.holding.saturating_sub(1),
            _ => {}
        }
        f.state.call = call;
    }

    /// Flight `id` goes out now (its state is already `Sent`).
    fn sent(&mut self, now: Instant, id: FlightId, admission: Option<AdmissionRecord>) {
        // Present: the callers just set the flight's state.
        let f = self.flights.get_mut(id).expect("flight");
        f.state.attempts += 1;
        f.state.first_sent_at.get_or_insert(now);
        for w in f.waiters.values_mut() {
            w.entry = None;
        }
        let attempt = Attempt {
            flight: id,
            number: f.state.attempts,
        };
        let key = f.key.clone();
        let (lane, cost) = (f.state.lane, f.state.cost);
        if let Some(a) = &admission {
            // The entry that went decides who pays (a session that joined may have won).
            f.state.session = a.session.clone();
        }
        let session = f.state.session.clone();
        self.stats.attempts += 1;
        if attempt.number > 1 {
            self.stats.retries += 1;
        }
        self.event(|| PathEvent::Send {
            lane,
            at: now,
            session,
            attempt,
            cost,
            admission: admission.clone(),
        });
        let previous = self.previous.get(&id).cloned();
        self.effects.push_back(Effect::Send {
            attempt,
            lane,
            key,
            admission,
            previous,
        });
    }

    /// Admits everything due at `now` on every lane, and starts the due retries.
    fn drive(&mut self, now: Instant) {
        while let Some(&(until, id)) = self.backoffs.first() {
            if until > now {
                break;
            }
            self.backoffs.pop_first();
            self.resubmit(now, id);
        }
        for lane in 0..self.lanes.len() {
            while self.lanes[lane].has_room(true)
                && let Some(id) = self.lanes[lane].gate.pop_front()
            {
                // Still `Gated` (and off the gate): it takes the place now.
                self.resubmit(now, id);
            }
        }
        for lane in 0..self.lanes.len() {
            while let Some(a) = self.lanes[lane].scheduler.as_mut().and_then(|s| s.poll_admission(now)) {
                let Some(id) = self.lanes[lane].flights.remove(&a.call) else {
                    // Every queued call belongs to a flight; an unknown one is a bug that
                    // `check_invariants` reports. It is charged, and goes nowhere.
                    debug_assert!(false, "admitted call {} has no flight", a.call);
                    continue;
                };
                let record = a.record();
                self.set_call(id, CallState::Sent { charge: Some(a.charge) });
                self.sent(now, id, Some(record));
            }
        }
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
