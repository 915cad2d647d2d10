//! Property tests of the shell around the path (`besluitbron_core::path::Shell`) against
//! a simple model of the lease gate and the requests' lives: random requests, give-ups,
//! platform answers, sends made late, a lease engine that refuses for a while,
//! ownership messages that reach the shell late (the server's lease task talks to its
//! platform task over a channel) and pauses of the whole process — in one process (no
//! lease) or as a replica.
//!
//! After every step the shell's invariants hold (checked after each step, no
//! `InvariantBroken` action), and against the model:
//! - a request enters exactly when the model's gate says so: no lease, or the shell has
//!   taken over the lease's current acquisition and the lease admits;
//! - an attempt goes out exactly when the model's gate says so at the instant it is
//!   confirmed (the acquisition taken over, `may_send` for its admission); every other
//!   one is counted as dropped;
//! - every attempt carries the data of the request that led its flight;
//! - every request ends exactly once: refused or answered at arrival, one delivery, one
//!   move at the end of an ownership, or its own give-up first; a move comes only with
//!   the end of an ownership, and then every request still waiting moves, and nothing is
//!   admitted for them meanwhile;
//! - when everything has come back and the ownership ended, nothing is left.

use besluitbron_core::platform::examples;
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, CachePolicy, CacheVersion, DataClass, MemoryStore};
use besluitbron_core::cluster::{Lease, LeaseAnswer, LeaseConfig, LeaseEvent};
use besluitbron_core::dedup::{FlightId, WaiterId};
use besluitbron_core::path::{
    Action, Arrival, Attempt, Feedback, Lane, NotOwner, Outcome, Outgoing, PathConfig, PendingSend, PlatformPath,
    Request, Shell, StoreBuffer,
};
use besluitbron_core::{Instant, LimitConfig, SchedulerConfig, SessionKey, Units, WallTime};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

type P = Arc<[u8]>;
/// Waiters carry their own id, flights the id of the request that led them.
type TestShell = Shell<StoreBuffer<MemoryStore>, u8, u64, u64>;

const LEASE: LeaseConfig = LeaseConfig {
    ttl: Duration::from_secs(6),
    margin: Duration::from_secs(1),
};

#[derive(Clone, Copy, Debug)]
enum Op {
    /// A request for key `key` by session `session`.
    Request { key: u8, session: u8 },
    /// The `nth` request so far gives up.
    Leave { nth: u8 },
    /// The oldest attempt out gets its answer (`kind`: ok, retryable, failed, 429).
    Answer { kind: u8 },
    /// The oldest attempt admitted is sent now (or dropped).
    Confirm,
    /// The lease engine answers every request with a refusal from now on (or grants).
    Engine { up: bool },
    /// The lease's events so far reach the shell (the ownership channel).
    Tell,
    /// The process stops for `ms` (nothing is driven meanwhile), then looks at its
    /// lease first and tells the shell, before its path.
    Pause { ms: u32 },
}

#[derive(Clone, Debug)]
struct Workload {
    leased: bool,
    limited: bool,
    /// (gap in ms after the previous op, op)
    ops: Vec<(u32, Op)>,
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        match u8::arbitrary(g) % 15 {
            0..=4 => Op::Request {
                key: u8::arbitrary(g) % 5,
                session: u8::arbitrary(g) % 3,
            },
            5 => Op::Leave { nth: u8::arbitrary(g) },
            6..=8 => Op::Answer {
                kind: u8::arbitrary(g) % 6,
            },
            9 | 10 => Op::Confirm,
            11 => Op::Engine {
                up: u8::arbitrary(g) % 3 != 0,
            },
            12 | 13 => Op::Tell,
            _ => Op::Pause {
                ms: *g.choose(&[2_000, 6_000, 9_000]).expect("menu"),
            },
        }
    }
}

impl Arbitrary for Workload {
    fn arbitrary(g: &mut Gen) -> Workload {
        let n = 1 + usize::arbitrary(g) % 80;
        Workload {
            leased: bool::arbitrary(g),
            limited: bool::arbitrary(g),
            ops: (0..n)
                .map(|_| {
                    (
                        *g.choose(&[0, 1, 100, 700, 1_500, 4_000]).expect("menu"),
                        Op::arbitrary(g),
                    )
                })
                .collect(),
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Workload>> {
        let base = self.clone();
        Box::new(
            self.ops
                .clone()
                .shrink()
                .map(move |ops| Workload { ops, ..base.clone() }),
        )
    }
}

/// Where a request stands in the model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Life {
    Waiting,
    /// Ended: refused or answered at arrival, delivered, moved or given up.
    Ended,
}

struct World {
    shell: TestShell,
    lease: Option<Lease>,
    engine_up: bool,
    /// Lease events not yet told to the shell.
    untold: VecDeque<LeaseEvent>,
    /// The model's gate: the acquisition the shell was told to take over.
    owning: Option<u64>,
    now: Instant,
    lives: BTreeMap<u64, Life>,
    /// Each flight's leader.
    leaders: BTreeMap<FlightId, u64>,
    pending: VecDeque<PendingSend<P, u64>>,
    out: VecDeque<Outgoing<P, u64>>,
    dropped: u64,
    next_waiter: u64,
}

fn key(k: u8) -> CacheKey {
    CacheKey::new(examples::OBV, DataClass::Search, "search").param("q", k.to_string())
}

fn wall(now: Instant) -> WallTime {
    WallTime(1_000_000 + now.as_millis())
}

impl World {
    fn new(w: &Workload) -> World {
        let scheduler = w
            .limited
            .then(|| SchedulerConfig::with_limit(LimitConfig::new(Units::whole(4), Duration::from_secs(4))));
        let config = PathConfig::single("obv", scheduler);
        let buffer = StoreBuffer::new(MemoryStore::new(
            examples::OBV,
            CachePolicy::default().for_platform(examples::OBV),
            CacheVersion::current(),
        ));
        let path = PlatformPath::new(config, buffer).expect("valid");
        World {
            shell: Shell::new(path, |_| 99).with_check_every(1),
            lease: w.leased.then(|| Lease::new(LEASE, Instant::ZERO).expect("valid")),
            engine_up: true,
            untold: VecDeque::new(),
            owning: None,
            now: Instant::ZERO,
            lives: BTreeMap::new(),
            leaders: BTreeMap::new(),
            pending: VecDeque::new(),
            out: VecDeque::new(),
            dropped: 0,
            next_waiter: 0,
        }
    }

    /// The lease (and its engine) at `now`; its events wait to be told.
    fn drive_lease(&mut self) {
        let Some(l) = self.lease.as_mut() else { return };
        l.handle_timeout(self.now);
        while let Some(r) = l.poll_request(self.now) {
            let answer = if self.engine_up {
                LeaseAnswer::Granted
            } else {
                LeaseAnswer::Refused
            };
            l.on_answer(self.now, r.id, answer);
        }
        while let Some(e) = l.poll_event() {
            self.untold.push_back(e);
        }
    }

    /// The ownership messages reach the shell.
    fn tell(&mut self) -> Result<(), String> {
        while let Some(e) = self.untold.pop_front() {
            match e {
                LeaseEvent::StartAdmitting { epoch } => {
                    self.shell.take_over(self.now, epoch, None);
                    self.owning = Some(epoch);
                }
                LeaseEvent::Lost { .. } | LeaseEvent::HandingOver { .. } | LeaseEvent::Stopped => {
                    self.shell.end_ownership(self.now);
                    self.owning = None;
                    let sends = self.pending.len();
                    self.take_actions()?;
                    if self.pending.len() > sends {
                        return Err("the end of the ownership admitted a call".to_owned());
                    }
                    if let Some((w, _)) = self.lives.iter().find(|(_, l)| **l == Life::Waiting) {
                        return Err(format!("request {w} still waits after the end of the ownership"));
                    }
                    continue;
                }
                LeaseEvent::Acquired { .. } => {}
            }
            self.take_actions()?;
        }
        Ok(())
    }

    fn model_admits(&self) -> bool {
        self.lease
            .as_ref()
            .is_none_or(|l| self.owning.is_some() && l.epoch() == self.owning && l.may_admit(self.now))
    }

    fn model_sends(&self, admitted_at: Instant) -> bool {
        self.lease
            .as_ref()
            .is_none_or(|l| self.owning.is_some() && l.epoch() == self.owning && l.may_send(self.now, admitted_at))
    }

    /// Takes every action, checking each against the model.
    fn take_actions(&mut self) -> Result<(), String> {
        while let Some(a) = self.shell.poll_action() {
            match a {
                Action::Send(p) => {
                    let leader = self.leaders.get(&p.attempt().flight).copied();
                    if leader != Some(*p.flight()) {
                        return Err(format!(
                            "attempt {:?} carries the data of {}, its flight was led by {leader:?}",
                            p.attempt(),
                            p.flight()
                        ));
                    }
                    self.pending.push_back(p);
                }
                Action::Deliver { waiter, value, .. } | Action::Moved { waiter, value } => {
                    if waiter.0 != value {
                        return Err(format!("waiter {waiter:?} came with the value of {value}"));
                    }
                    match self.lives.get(&value) {
                        Some(Life::Waiting) => {
                            self.lives.insert(value, Life::Ended);
                        }
                        other => return Err(format!("request {value} ended again (it was {other:?})")),
                    }
                }
                Action::InvariantBroken { what, step } => return Err(format!("step {step}: {what}")),
            }
        }
        Ok(())
    }

    fn request(&mut self, k: u8, session: u8) -> Result<(), String> {
        let waiter = self.next_waiter;
        self.next_waiter += 1;
        let admits = self.model_admits();
        let req = Request {
            waiter: WaiterId(waiter),
            key: key(k),
            session: SessionKey::client(&format!("s{session}")),
            cost: Units::ONE,
            lane: Lane::MAIN,
        };
        let arrival = self
            .shell
            .request(self.now, wall(self.now), self.lease.as_ref(), req, waiter, waiter);
        match (arrival, admits) {
            (Err(NotOwner), false) => {
                self.lives.insert(waiter, Life::Ended);
            }
            (Ok(Arrival::Waiting { flight, led }), true) => {
                if led {
                    self.leaders.insert(flight, waiter);
                }
                self.lives.insert(waiter, Life::Waiting);
            }
            (Ok(Arrival::Cached(_) | Arrival::Refused { .. }), true) => {
                self.lives.insert(waiter, Life::Ended);
            }
            (arrival, admits) => {
                return Err(format!("request {waiter}: {arrival:?}, the model admits: {admits}"));
            }
        }
        self.take_actions()
    }

    fn leave(&mut self, nth: u8) -> Result<(), String> {
        if self.next_waiter == 0 {
            return Ok(());
        }
        let waiter = u64::from(nth) % self.next_waiter;
        let kept = self.shell.leave(self.now, WaiterId(waiter));
        let waiting = self.lives.get(&waiter) == Some(&Life::Waiting);
        if kept.is_some() != waiting || kept.is_some_and(|v| v != waiter) {
            return Err(format!(
                "request {waiter} left with {kept:?}, waiting in the model: {waiting}"
            ));
        }
        self.lives.insert(waiter, Life::Ended);
        self.take_actions()
    }

    fn answer(&mut self, kind: u8) -> Result<(), String> {
        let Some(out) = self.out.pop_front() else {
            return Ok(());
        };
        let outcome = match kind {
            0..=2 => Outcome::Success {
                payload: Arc::from(&b"x"[..]),
                feedback: Feedback::default(),
            },
            3 => Outcome::Retryable {
                error: 1,
                retry_after: None,
            },
            4 => Outcome::Failed { error: 2 },
            _ => Outcome::RateLimited {
                retry_after: Duration::from_secs(1),
                error: 3,
            },
        };
        self.shell.on_outcome(self.now, wall(self.now), out.attempt, outcome);
        self.take_actions()
    }

    fn confirm(&mut self) -> Result<(), String> {
        let Some(p) = self.pending.pop_front() else {
            return Ok(());
        };
        let admitted_at = p.admission().map_or(self.now, |a| a.admitted_at);
        let sends = self.model_sends(admitted_at);
        let attempt: Attempt = p.attempt();
        match self
            .shell
            .confirm_send(self.now, wall(self.now), self.lease.as_ref(), p)
        {
            Some(out) if sends => {
                if out.attempt != attempt || self.leaders.get(&attempt.flight) != Some(&out.flight) {
                    return Err(format!(
                        "attempt {attempt:?} went out as {:?} for {}",
                        out.attempt, out.flight
                    ));
                }
                self.out.push_back(out);
            }
            None if !sends => self.dropped += 1,
            sent => {
                return Err(format!(
                    "attempt {attempt:?}: sent {}, the model sends: {sends}",
                    sent.is_some()
                ));
            }
        }
        if self.shell.stats().dropped != self.dropped {
            return Err(format!(
                "{} dropped, the model counts {}",
                self.shell.stats().dropped,
                self.dropped
            ));
        }
        self.take_actions()
    }

    /// Time moves to `now`: the lease, then the path.
    fn advance(&mut self, now: Instant) -> Result<(), String> {
        // Every wake-up of the path in between, in order (each one makes progress).
        let mut wakes = 0;
        while let Some(at) = self.shell.poll_timeout(self.now).filter(|&at| at <= now) {
            wakes += 1;
            if wakes > 10_000 {
                return Err(format!("the path asks to be woken at {at} for ever"));
            }
            self.now = self.now.max(at);
            self.drive_lease();
            self.shell.handle_timeout(self.now);
            self.take_actions()?;
        }
        self.now = now;
        self.drive_lease();
        self.shell.handle_timeout(self.now);
        self.take_actions()
    }
}

fn run(w: &Workload) -> Result<(), String> {
    let mut world = World::new(w);
    for &(gap, op) in &w.ops {
        let now = world.now + Duration::from_millis(u64::from(gap));
        world.advance(now)?;
        match op {
            Op::Request { key, session } => world.request(key, session)?,
            Op::Leave { nth } => world.leave(nth)?,
            Op::Answer { kind } => world.answer(kind)?,
            Op::Confirm => world.confirm()?,
            Op::Engine { up } => world.engine_up = up,
            Op::Tell => world.tell()?,
            Op::Pause { ms } => {
                world.now = world.now + Duration::from_millis(u64::from(ms));
                world.drive_lease();
                world.tell()?;
            }
        }
    }
    // The end: every message told, the ownership ended, everything sent or dropped and
    // answered, every wake-up taken.
    world.tell()?;
    if world.owning.is_some() {
        world.shell.end_ownership(world.now);
        world.owning = None;
        world.take_actions()?;
    }
    for _ in 0..10_000 {
        if !world.pending.is_empty() {
            world.confirm()?;
        } else if !world.out.is_empty() {
            world.answer(0)?;
        } else if let Some(at) = world.shell.poll_timeout(world.now) {
            world.advance(at.max(world.now + Duration::from_millis(1)))?;
        } else {
            break;
        }
    }
    if let Some((w, _)) = world.lives.iter().find(|(_, l)| **l == Life::Waiting) {
        return Err(format!("request {w} never ended"));
    }
    let path = world.shell.path();
    if path.in_flight() > 0 || path.waiting() > 0 {
        return Err(format!(
            "{} flights and {} requests left at the end",
            path.in_flight(),
            path.waiting()
        ));
    }
    if let Some(f) = world.leaders.keys().find(|f| world.shell.flight(**f).is_some()) {
        return Err(format!("the data of flight {f:?} outlived it"));
    }
    world.shell.check_invariants()
}

#[test]
fn qc_the_shell_gates_sends_and_ends_every_request_as_the_model_says() {
    fn prop(w: Workload) -> TestResult {
        match run(&w) {
            Ok(()) => TestResult::passed(),
            Err(e) => TestResult::error(format!("{e}\n{w:?}")),
        }
    }
    QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(Workload) -> TestResult);
}

#[test]
fn a_replica_whose_ownership_message_comes_late_admits_nothing_meanwhile() {
    // The lease (acquired at 0, driven every second) admits from 7 s; the shell is told
    // only at 8 s.
    let mut ops: Vec<(u32, Op)> = (0..8)
        .map(|i| (if i == 0 { 0 } else { 1_000 }, Op::Engine { up: true }))
        .collect();
    ops.extend([
        (100, Op::Request { key: 1, session: 1 }),
        (900, Op::Tell),
        (0, Op::Request { key: 1, session: 1 }),
        (1_000, Op::Confirm),
        (0, Op::Answer { kind: 0 }),
    ]);
    let w = Workload {
        leased: true,
        limited: true,
        ops,
    };
    run(&w).unwrap_or_else(|e| panic!("{e}"));
}

/// Found by the cluster simulator (a replica paused past its lease) and then by
/// `qc_the_shell_gates_sends_and_ends_every_request_as_the_model_says` once it paused
/// processes: withdrawing the waiters one leave at a time drove the path after each, and
/// with units refilled during the pause the first leaves admitted the calls of the waiters
/// still to go (which the lease then dropped). `PlatformPath::leave_all` withdraws them
/// all first.
#[test]
fn regression_a_paused_replica_admitted_calls_for_the_waiters_it_handed_back() {
    let w = Workload {
        leased: true,
        limited: true,
        ops: vec![
            (0, Op::Request { key: 0, session: 2 }),
            (3_000, Op::Request { key: 0, session: 1 }),
            (4_000, Op::Tell),
            (0, Op::Request { key: 0, session: 0 }),
            (0, Op::Request { key: 0, session: 0 }),
            (0, Op::Pause { ms: 6_000 }),
        ],
    };
    run(&w).unwrap_or_else(|e| panic!("{e}"));
}
