//! What every shell of a [`PlatformPath`] does around it, written once: [`Shell`].
//!
//! ```text
//!  request(lease) ─▶ may admit? ──no──▶ Err(NotOwner)
//!                       │ yes
//!                       ▼
//!                 path.request ─▶ Arrival (the waiter's value and the leader's flight data kept)
//!
//!  poll_action ◀── path effects:  Send    ─▶ Action::Send(PendingSend) ─▶ confirm_send(lease):
//!                                                 may send? yes ─▶ Outgoing (the shell calls the platform)
//!                                                           no  ─▶ dropped: a retryable failure to the path
//!                                 Deliver ─▶ Action::Deliver (the waiter's value and its answer)
//!                                 Ended   ─▶ the flight's data dropped
//!  end_ownership ─▶ every waiter withdrawn ─▶ Action::Moved (the waiter's value)
//! ```
//!
//! The server's platform task, the simulator's engine and the cluster simulator all run a
//! [`PlatformPath`] the same way: they gate requests on the platform's lease, keep a value
//! per waiting request (the server: the channel its answer goes down; the simulators: the
//! call), keep the data the request that leads a flight brought for its attempts (the
//! server: the closure that calls the platform), turn the path's effects into sends and
//! deliveries, drop admissions the lease no longer allows, hand the waiting requests back
//! when ownership ends, and check the invariants. This type is that part, once; the
//! shells only do I/O and keep time.
//!
//! **The lease gate** (several replicas, [`crate::cluster`]): the lease stays with
//! whoever drives it (the server's lease task shares it behind a lock; the cluster
//! simulator keeps it in its replica), so every step that asks it takes it as
//! `Option<&Lease>`; `None` is one process, which always admits and sends. With a lease,
//! a request is admitted only while this shell has taken over the lease's current
//! acquisition ([`Shell::take_over`] with its `epoch`) and [`Lease::may_admit`] holds; an
//! attempt is sent only while [`Lease::may_send`] holds for its admission at the instant
//! the shell sends it ([`Shell::confirm_send`]). An attempt that may not go is never
//! sent: it is counted ([`ShellStats::dropped`]) and reported to the path as a failure
//! worth another attempt (by then nobody waits here, or the new owner's rules apply).
//!
//! **Ownership end** ([`Shell::end_ownership`]): the path and its buffer stay; every
//! waiting request is withdrawn from the path, all at once (nothing is admitted for them
//! meanwhile; a queued call nobody waits for costs nothing), and handed back as
//! [`Action::Moved`], for the shell to send to the next owner; attempts already out
//! finish, and a success is still kept in the buffer. The next [`Shell::take_over`]
//! starts the next ownership on the same path.
//!
//! **Invariant checks**: after every step in debug builds and tests; in release builds
//! every [`RELEASE_CHECK_EVERY`]-th step and whenever the shell says it is idle while the
//! path holds no request ([`Shell::idle`]). A check runs once the step's effects are all
//! taken ([`Shell::poll_action`] answered `None`): only then do the shell and the path
//! agree. A broken invariant is an [`Action::InvariantBroken`] for the shell to count and
//! log (the simulators stop the run), never a panic.
//!
//! Invariants (checked by [`Shell::check_invariants`], with the path's own):
//! - the waiters kept here are exactly the requests waiting in the path, each under the
//!   flight the path has it wait for;
//! - the flights kept here are exactly the flights under way in the path, each listing
//!   its waiters in arrival order;
//! - every attempt handed to the shell comes with the data of the request that led its
//!   flight;
//! - every request that entered ends exactly once: answered or refused at arrival, one
//!   [`Action::Deliver`], one [`Action::Moved`], or a [`Shell::leave`] first.
//!
//! What this module does not do: I/O, time or decisions. It never calls a platform,
//! reads a clock, drives the lease or decides anything the path decides (who pays, the
//! 429 requeue, refunds, retries); the shells call the platform and report back, and
//! read the path's decisions from its [`crate::path::PathEvent`]s.

use std::collections::{HashMap, VecDeque};
use std::fmt;

use super::{Arrival, Attempt, Buffer, Delivery, Effect, Lane, Outcome, PlatformPath, Position, Request};
use crate::cache::CacheKey;
use crate::cluster::{Lease, UsageCheckpoint};
use crate::dedup::{FlightId, WaiterId};
use crate::platform::PlatformId;
use crate::scheduler::AdmissionRecord;
use crate::time::{Instant, WallTime};

/// The shell's hasher: foldhash with a fixed seed, the same every run.
type Fixed = foldhash::fast::FixedState;

fn fixed() -> Fixed {
    foldhash::fast::FixedState::with_seed(0x7368_656c_6c5f_6964)
}

/// In release builds, the invariants are checked every this many steps (and whenever the
/// shell is idle with nothing waiting or out, [`Shell::idle`]). A check is linear in what
/// the path holds: with 10,000 calls queued (the default bound of a lane) it costs as
/// much as about 9,000 steps, so one check per 2^20 steps keeps it under 1 % of the work
/// even then, and under 0.1 % with 1,000 queued (`benches/README.md`, "Shell").
pub const RELEASE_CHECK_EVERY: u32 = 1 << 20;

/// Steps between invariant checks by default: every step in debug builds and tests,
/// [`RELEASE_CHECK_EVERY`] in release builds.
pub const DEFAULT_CHECK_EVERY: u32 = if cfg!(debug_assertions) { 1 } else { RELEASE_CHECK_EVERY };

/// A request arrived while this replica may not admit: it goes to the platform's owner.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NotOwner;

/// Why an attempt the path asked for was never sent; the shell turns it into its error
/// type ([`Shell::new`]'s `unsent`), which the path hears as a failure.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Unsent {
    /// The platform whose request it was.
    pub platform: PlatformId,
    /// Why.
    pub why: UnsentWhy,
}

/// Why an attempt was never sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnsentWhy {
    /// Its admission outlived this replica's lease ([`Lease::may_send`]): too old, or the
    /// lease is gone. Reported as a failure worth another attempt.
    LeaseEnded,
    /// Its flight had no data from a leading request (a broken invariant, also reported
    /// as one). Reported as a failure.
    NoFlightData,
}

impl fmt::Display for Unsent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.why {
            UnsentWhy::LeaseEnded => f.write_str("the call's admission outlived this replica's lease; ask again"),
            UnsentWhy::NoFlightData => f.write_str("a call was admitted without its platform request"),
        }
    }
}

/// An attempt the path admitted, not yet sent: the shell sends it only through
/// [`Shell::confirm_send`], at the instant it would send it.
#[derive(Clone, Debug)]
pub struct PendingSend<P, F> {
    attempt: Attempt,
    lane: Lane,
    key: CacheKey,
    admission: Option<AdmissionRecord>,
    previous: Option<P>,
    flight: F,
}

impl<P, F> PendingSend<P, F> {
    /// Which attempt.
    pub fn attempt(&self) -> Attempt {
        self.attempt
    }

    /// The lane it goes out on (the upstream service it reaches).
    pub fn lane(&self) -> Lane {
        self.lane
    }

    /// What it asks.
    pub fn key(&self) -> &CacheKey {
        &self.key
    }

    /// The admission that let it go, on a lane that keeps a limit.
    pub fn admission(&self) -> Option<&AdmissionRecord> {
        self.admission.as_ref()
    }

    /// The data the request that leads the flight brought.
    pub fn flight(&self) -> &F {
        &self.flight
    }
}

/// An attempt to send now: the lease allowed it ([`Shell::confirm_send`]).
#[derive(Clone, Debug)]
pub struct Outgoing<P, F> {
    /// Which attempt; report its outcome with [`Shell::on_outcome`].
    pub attempt: Attempt,
    /// The lane it goes out on (the upstream service it reaches).
    pub lane: Lane,
    /// What it asks.
    pub key: CacheKey,
    /// The admission that let it go, on a lane that keeps a limit.
    pub admission: Option<AdmissionRecord>,
    /// The expired copy the buffer holds for the key, to revalidate
    /// ([`super::Effect::Send::previous`]).
    pub previous: Option<P>,
    /// The data the request that leads the flight brought.
    pub flight: F,
}

/// What the shell must do.
#[derive(Debug)]
pub enum Action<P, E, W, F> {
    /// Send this attempt, through [`Shell::confirm_send`] at the instant it would go.
    Send(PendingSend<P, F>),
    /// Hand a waiter its answer.
    Deliver {
        /// The waiter.
        waiter: WaiterId,
        /// The shell's value for it.
        value: W,
        /// Its answer.
        delivery: Delivery<P, E>,
    },
    /// Ownership ended while the request waited: it goes to the next owner.
    Moved {
        /// The waiter.
        waiter: WaiterId,
        /// The shell's value for it.
        value: W,
    },
    /// A check found a broken invariant: count it and log it (a simulator stops).
    InvariantBroken {
        /// What is broken.
        what: String,
        /// After how many steps of this shell.
        step: u64,
    },
}

/// Counters since the shell was made.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShellStats {
    /// Steps taken (requests, leaves, outcomes, time-outs, ownership changes, sends
    /// dropped).
    pub steps: u64,
    /// Invariant checks run.
    pub checks: u64,
    /// Checks that found a broken invariant.
    pub broken: u64,
    /// Requests refused because this replica did not admit ([`NotOwner`]).
    pub not_owner: u64,
    /// Admissions the lease no longer allowed to send: dropped, never sent.
    pub dropped: u64,
    /// Waiting requests handed back at the end of an ownership.
    pub moved: u64,
}

/// One flight as the shell keeps it.
#[derive(Debug)]
struct FlightEntry<F> {
    /// What the leading request brought.
    data: F,
    /// Its waiters, in arrival order.
    waiters: Vec<WaiterId>,
}

/// A [`PlatformPath`] with the lease gate, the waiters' values and the flights' data
/// around it. `W` is the shell's value per waiting request, `F` the data per flight that
/// the leading request brings. See the module documentation.
pub struct Shell<B: Buffer, E, W, F> {
    path: PlatformPath<B, E>,
    /// By id; hashed with a fixed seed (no decision depends on their order: ownership's
    /// end hands the waiters back sorted by id).
    waiters: HashMap<WaiterId, (FlightId, W), Fixed>,
    flights: HashMap<FlightId, FlightEntry<F>, Fixed>,
    /// The lease's acquisition this shell has taken over (several replicas only).
    owning: Option<u64>,
    unsent: fn(Unsent) -> E,
    actions: VecDeque<Action<B::Payload, E, W, F>>,
    check_every: u32,
    since_check: u32,
    stats: ShellStats,
    /// The latest instants an input brought (for a failure the shell reports itself).
    last_now: Instant,
    last_wall: WallTime,
}

impl<B: Buffer, E: Clone, W, F: Clone> Shell<B, E, W, F> {
    /// A shell around `path`; `unsent` makes the error the path hears for an attempt
    /// that was never sent. Invariants are checked every [`DEFAULT_CHECK_EVERY`] steps.
    pub fn new(path: PlatformPath<B, E>, unsent: fn(Unsent) -> E) -> Shell<B, E, W, F> {
        Shell {
            path,
            waiters: HashMap::with_hasher(fixed()),
            flights: HashMap::with_hasher(fixed()),
            owning: None,
            unsent,
            actions: VecDeque::new(),
            check_every: DEFAULT_CHECK_EVERY,
            since_check: 0,
            stats: ShellStats::default(),
            last_now: Instant::ZERO,
            last_wall: WallTime(0),
        }
    }

    /// The same shell, checking its invariants every `steps` steps (1: after each).
    pub fn with_check_every(mut self, steps: u32) -> Shell<B, E, W, F> {
        self.check_every = steps.max(1);
        self
    }

    /// The path, to read (its lanes, counters, positions, usage checkpoint).
    pub fn path(&self) -> &PlatformPath<B, E> {
        &self.path
    }

    /// The path alone, the shell's waiters and flight data dropped (a shell that stops:
    /// its waiters' values go with it).
    pub fn into_path(self) -> PlatformPath<B, E> {
        self.path
    }

    /// The buffer, to flush it.
    pub fn buffer_mut(&mut self) -> &mut B {
        self.path.buffer_mut()
    }

    /// The path's next recorded decision ([`super::PathConfig::record_events`]).
    pub fn poll_event(&mut self) -> Option<super::PathEvent> {
        self.path.poll_event()
    }

    /// The counters.
    pub fn stats(&self) -> ShellStats {
        self.stats
    }

    /// The acquisition this shell has taken over, while it owns.
    pub fn owning(&self) -> Option<u64> {
        self.owning
    }

    /// The data flight `id`'s leading request brought, while the flight is under way.
    pub fn flight(&self, id: FlightId) -> Option<&F> {
        self.flights.get(&id).map(|f| &f.data)
    }

    /// Flight `id`'s waiters in arrival order, with their values.
    pub fn waiters_of(&self, id: FlightId) -> impl Iterator<Item = (WaiterId, &W)> {
        self.flights
            .get(&id)
            .into_iter()
            .flat_map(|f| f.waiters.iter())
            .filter_map(|w| self.waiters.get(w).map(|(_, value)| (*w, value)))
    }

    /// Whether a request may enter at `now`: always without a lease (one process); with
    /// one, while this shell has taken over its current acquisition and it admits.
    pub fn may_admit(&self, now: Instant, lease: Option<&Lease>) -> bool {
        lease.is_none_or(|l| self.owning.is_some() && l.epoch() == self.owning && l.may_admit(now))
    }

    /// Whether an admission made at `admitted_at` may be sent at `now` (always without a
    /// lease).
    pub fn may_send(&self, now: Instant, lease: Option<&Lease>, admitted_at: Instant) -> bool {
        lease.is_none_or(|l| self.owning.is_some() && l.epoch() == self.owning && l.may_send(now, admitted_at))
    }

    /// Starts ownership of the lease's acquisition `epoch` at `now`: the path takes over
    /// (an empty bucket on every limited lane, the sessions' usage from `checkpoint`) and
    /// requests are admitted while the lease allows.
    pub fn take_over(&mut self, now: Instant, epoch: u64, checkpoint: Option<&UsageCheckpoint>) {
        self.path.take_over(now, checkpoint);
        self.owning = Some(epoch);
        self.stepped();
    }

    /// Ends ownership at `now`: nothing more is admitted; every waiting request is
    /// withdrawn from the path and handed back as [`Action::Moved`], in waiter order.
    /// Attempts already out finish (a success is still kept).
    pub fn end_ownership(&mut self, now: Instant) {
        self.owning = None;
        let mut waiters: Vec<_> = std::mem::take(&mut self.waiters).into_iter().collect();
        waiters.sort_unstable_by_key(|&(w, _)| w);
        // All at once: leaving one by one would admit (and then drop) the calls of the
        // waiters still to go, whenever the bucket has room.
        self.path.leave_all(now, waiters.iter().map(|&(w, _)| w));
        for (waiter, (flight, value)) in waiters {
            self.unlist(flight, waiter);
            self.stats.moved += 1;
            self.actions.push_back(Action::Moved { waiter, value });
        }
        self.stepped();
    }

    /// A request arrives at `now` (`wall` for the buffer's expiry): refused when this
    /// replica may not admit (`value` and `flight` dropped), else the path's [`Arrival`].
    /// While it waits, `value` is kept for its [`Action::Deliver`] or [`Action::Moved`];
    /// when it leads a new flight, `flight` goes with every attempt of it.
    pub fn request(
        &mut self,
        now: Instant,
        wall: WallTime,
        lease: Option<&Lease>,
        req: Request,
        value: W,
        flight: F,
    ) -> Result<Arrival<B::Payload>, NotOwner> {
        self.saw(now, wall);
        if !self.may_admit(now, lease) {
            self.stats.not_owner += 1;
            return Err(NotOwner);
        }
        let waiter = req.waiter;
        let arrival = self.path.request(now, wall, req);
        if let Arrival::Waiting { flight: id, led } = arrival {
            if led {
                self.flights.insert(
                    id,
                    FlightEntry {
                        data: flight,
                        waiters: vec![waiter],
                    },
                );
            } else if let Some(f) = self.flights.get_mut(&id) {
                f.waiters.push(waiter);
            }
            // A flight joined without an entry here is reported by the next check.
            self.waiters.insert(waiter, (id, value));
        }
        self.stepped();
        Ok(arrival)
    }

    /// The request `waiter` gives up at `now`; its value, if it still waited.
    pub fn leave(&mut self, now: Instant, waiter: WaiterId) -> Option<W> {
        let kept = self.waiters.remove(&waiter).map(|(flight, value)| {
            self.unlist(flight, waiter);
            value
        });
        self.path.leave(now, waiter);
        self.stepped();
        kept
    }

    /// The outcome of an attempt the shell sent.
    pub fn on_outcome(&mut self, now: Instant, wall: WallTime, attempt: Attempt, outcome: Outcome<B::Payload, E>) {
        self.saw(now, wall);
        self.path.on_outcome(now, wall, attempt, outcome);
        self.stepped();
    }

    /// Time has come to `now` ([`Shell::poll_timeout`]).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.path.handle_timeout(now);
        self.stepped();
    }

    /// When to call [`Shell::handle_timeout`]; `None` when nothing waits on time.
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        self.path.poll_timeout(now)
    }

    /// Where `waiter`'s call stands, for progress reports.
    pub fn position(&self, now: Instant, waiter: WaiterId) -> Option<Position> {
        self.path.position(now, waiter)
    }

    /// The shell has nothing else to do now (every action taken): checks the invariants
    /// if any step came since the last check and the path holds no request (waiting or
    /// out), when a check is cheapest (a release build checks a busy path only every
    /// [`RELEASE_CHECK_EVERY`] steps). A broken one is the next action.
    pub fn idle(&mut self) {
        let quiet = self.path.waiting() == 0 && self.path.in_flight() == 0;
        if quiet && self.since_check > 0 && self.actions.is_empty() && !self.path.has_effects() {
            self.check();
        }
    }

    /// The next thing to do, in order. When everything is done (`None`), the invariants
    /// are checked if a check is due: the path and the shell agree only once the shell
    /// has taken every effect.
    pub fn poll_action(&mut self) -> Option<Action<B::Payload, E, W, F>> {
        loop {
            if let Some(action) = self.actions.pop_front() {
                return Some(action);
            }
            let Some(effect) = self.path.poll_effect() else {
                if self.since_check >= self.check_every {
                    self.check();
                }
                return self.actions.pop_front();
            };
            match effect {
                Effect::Send {
                    attempt,
                    lane,
                    key,
                    admission,
                    previous,
                } => match self.flights.get(&attempt.flight) {
                    Some(f) => {
                        return Some(Action::Send(PendingSend {
                            attempt,
                            lane,
                            key,
                            admission,
                            previous,
                            flight: f.data.clone(),
                        }));
                    }
                    None => self.no_flight_data(attempt, key.platform()),
                },
                Effect::Deliver { waiter, delivery } => match self.waiters.remove(&waiter) {
                    Some((flight, value)) => {
                        self.unlist(flight, waiter);
                        return Some(Action::Deliver {
                            waiter,
                            value,
                            delivery,
                        });
                    }
                    None => self.broken(format!(
                        "the path delivered to waiter {waiter:?}, which the shell does not keep"
                    )),
                },
                Effect::Ended { flight } => {
                    if let Some(f) = self.flights.remove(&flight)
                        && !f.waiters.is_empty()
                    {
                        self.broken(format!("flight {flight:?} ended with waiters {:?} kept", f.waiters));
                    }
                }
            }
        }
    }

    /// The shell is about to send `pending` at `now`: the attempt to send, or `None` when
    /// the lease no longer allows it — then it is never sent, counted as dropped, and the
    /// path hears of it as a failure worth another attempt.
    pub fn confirm_send(
        &mut self,
        now: Instant,
        wall: WallTime,
        lease: Option<&Lease>,
        pending: PendingSend<B::Payload, F>,
    ) -> Option<Outgoing<B::Payload, F>> {
        self.saw(now, wall);
        let admitted_at = pending.admission.as_ref().map_or(now, |a| a.admitted_at);
        if self.may_send(now, lease, admitted_at) {
            return Some(Outgoing {
                attempt: pending.attempt,
                lane: pending.lane,
                key: pending.key,
                admission: pending.admission,
                previous: pending.previous,
                flight: pending.flight,
            });
        }
        self.stats.dropped += 1;
        let error = (self.unsent)(Unsent {
            platform: pending.key.platform(),
            why: UnsentWhy::LeaseEnded,
        });
        self.path.on_outcome(
            now,
            wall,
            pending.attempt,
            Outcome::Retryable {
                error,
                retry_after: None,
            },
        );
        self.stepped();
        None
    }

    /// Checks the shell's invariants and the path's; the first broken one is described.
    /// O(flights + waiters + queued calls).
    pub fn check_invariants(&self) -> Result<(), String> {
        self.path.check_invariants()?;
        if self.waiters.len() != self.path.waiting() {
            return Err(format!(
                "the shell keeps {} waiters for {} requests waiting in the path",
                self.waiters.len(),
                self.path.waiting()
            ));
        }
        if self.flights.len() != self.path.in_flight() {
            return Err(format!(
                "the shell keeps data of {} flights for {} under way",
                self.flights.len(),
                self.path.in_flight()
            ));
        }
        let mut listed = 0;
        for (&id, f) in &self.flights {
            listed += f.waiters.len();
            for w in &f.waiters {
                match self.waiters.get(w) {
                    Some((flight, _)) if *flight == id => {}
                    _ => return Err(format!("flight {id:?} lists waiter {w:?}, which does not wait for it")),
                }
            }
        }
        if listed != self.waiters.len() {
            return Err(format!(
                "the flights list {listed} waiters for {} kept",
                self.waiters.len()
            ));
        }
        for (&w, (flight, _)) in &self.waiters {
            if self.path.flight_of(w) != Some(*flight) {
                return Err(format!(
                    "waiter {w:?} is kept under flight {flight:?}, the path has it under {:?}",
                    self.path.flight_of(w)
                ));
            }
        }
        Ok(())
    }

    /// Removes `waiter` from `flight`'s list.
    fn unlist(&mut self, flight: FlightId, waiter: WaiterId) {
        if let Some(f) = self.flights.get_mut(&flight) {
            f.waiters.retain(|&w| w != waiter);
        }
    }

    /// An attempt of a flight without data: a broken invariant, and a failure for the
    /// path (nothing could be sent).
    fn no_flight_data(&mut self, attempt: Attempt, platform: PlatformId) {
        self.broken(format!("attempt {attempt:?} has no data of its flight"));
        let error = (self.unsent)(Unsent {
            platform,
            why: UnsentWhy::NoFlightData,
        });
        // At the latest instants an input brought: nothing else is known here.
        let (now, wall) = (self.last_now, self.last_wall);
        self.path.on_outcome(now, wall, attempt, Outcome::Failed { error });
    }

    fn saw(&mut self, now: Instant, wall: WallTime) {
        self.last_now = self.last_now.max(now);
        self.last_wall = WallTime(self.last_wall.0.max(wall.0));
    }

    /// One step was taken (checked once its effects are taken, [`Shell::poll_action`]).
    fn stepped(&mut self) {
        self.stats.steps += 1;
        self.since_check = self.since_check.saturating_add(1);
    }

    fn check(&mut self) {
        self.since_check = 0;
        self.stats.checks += 1;
        if let Err(what) = self.check_invariants() {
            self.broken(what);
        }
    }

    fn broken(&mut self, what: String) {
        self.stats.broken += 1;
        self.actions.push_back(Action::InvariantBroken {
            what,
            step: self.stats.steps,
        });
    }
}

#[cfg(test)]
mod tests;
