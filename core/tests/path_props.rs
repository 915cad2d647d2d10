//! Property tests of the platform path (`besluitbron_core::path`) against a simple
//! reference model: random requests over a small pool of keys from a few sessions
//! (the system session among them), random give-ups, and random platform outcomes —
//! answers with and without remaining-budget feedback and with every `Keep`, 429s with
//! short and long Retry-Afters, retryable failures and final failures.
//!
//! After every step the path's own invariants hold (`check_invariants`), and against the
//! model:
//! - at most one attempt per key is out at a time (R-D3);
//! - every request ends exactly once: answered from the buffer or refused at arrival,
//!   one delivery, or it left first — never a delivery after leaving, never two;
//! - a buffered answer is always the payload of an earlier success of its key that was
//!   allowed to be kept — a failure is never stored (R-C5);
//! - on a limited lane every attempt is an admission and the admissions, replayed
//!   through a plain token bucket (emptied by each Retry-After, capped by each reported
//!   remainder), never take it below zero (R-L8, R-L1);
//! - "fetched" goes only to the request that started the flight;
//! - when every outcome has come back, nothing is left: no flight, no waiter, no queue.

use crate::support;

use besluitbron_core::platform::examples;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, CachePolicy, CacheVersion, DataClass, MemoryStore};
use besluitbron_core::dedup::WaiterId;
use besluitbron_core::path::{
    Arrival, Attempt, Delivery, Effect, Feedback, Keep, Lane, Outcome, PathConfig, PlatformPath, Request, Served,
    StoreBuffer,
};
use besluitbron_core::{Instant, LimitConfig, SchedulerConfig, SessionKey, Units, WallTime};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};
use support::ReferenceBucket;

type P = Arc<[u8]>;
type TestPath = PlatformPath<StoreBuffer<MemoryStore>, u8>;

#[derive(Clone, Copy, Debug)]
enum Op {
    /// A request for key `key` by session `session` (0 = system).
    Request { key: u8, session: u8 },
    /// The `nth` request so far gives up.
    Leave { nth: u8 },
}

/// What the platform answers to the attempts, in order.
#[derive(Clone, Copy, Debug)]
enum Answer {
    Ok { keep: u8, remaining: Option<u8> },
    RateLimited { retry_after_ms: u32 },
    Retryable,
    Failed,
}

#[derive(Clone, Debug)]
struct Workload {
    limited: bool,
    /// (gap in ms after the previous op, op)
    ops: Vec<(u32, Op)>,
    /// The platform's answers, in the order attempts go out; the last repeats.
    answers: Vec<Answer>,
    latency_ms: u32,
}

impl Arbitrary for Answer {
    fn arbitrary(g: &mut Gen) -> Answer {
        match u8::arbitrary(g) % 8 {
            0..=3 => Answer::Ok {
                keep: u8::arbitrary(g) % 3,
                remaining: bool::arbitrary(g).then(|| u8::arbitrary(g) % 4),
            },
            4 => Answer::RateLimited {
                retry_after_ms: *g.choose(&[500, 2_000, 90_000]).expect("menu"),
            },
            5 | 6 => Answer::Retryable,
            _ => Answer::Failed,
        }
    }
}

impl Arbitrary for Workload {
    fn arbitrary(g: &mut Gen) -> Workload {
        let n = 1 + usize::arbitrary(g) % 40;
        let ops = (0..n)
            .map(|_| {
                let gap = u32::arbitrary(g) % 1_500;
                let op = if u8::arbitrary(g) % 5 == 0 {
                    Op::Leave { nth: u8::arbitrary(g) }
                } else {
                    Op::Request {
                        key: u8::arbitrary(g) % 4,
                        session: u8::arbitrary(g) % 4,
                    }
                };
                (gap, op)
            })
            .collect();
        let answers = (0..1 + usize::arbitrary(g) % 12)
            .map(|_| Answer::arbitrary(g))
            .collect();
        Workload {
            limited: bool::arbitrary(g),
            ops,
            answers,
            latency_ms: 1 + u32::arbitrary(g) % 800,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Workload>> {
        let base = self.clone();
        let ops = self.ops.clone().shrink().map({
            let base = base.clone();
            move |ops| Workload { ops, ..base.clone() }
        });
        let answers = self
            .answers
            .clone()
            .shrink()
            .filter(|a| !a.is_empty())
            .map(move |answers| Workload {
                answers,
                ..base.clone()
            });
        Box::new(ops.chain(answers))
    }
}

impl Arbitrary for Op {
    fn arbitrary(g: &mut Gen) -> Op {
        Op::Request {
            key: u8::arbitrary(g) % 4,
            session: u8::arbitrary(g) % 4,
        }
    }
}

fn limit() -> LimitConfig {
    LimitConfig::new(Units::whole(3), Duration::from_secs(3))
}

fn path(limited: bool) -> TestPath {
    let scheduler = limited.then(|| {
        let mut c = SchedulerConfig::with_limit(limit());
        c.max_queued = 16;
        c.max_queued_per_session = 6;
        c
    });
    let buffer = StoreBuffer::new(MemoryStore::new(
        examples::OBV,
        CachePolicy::default().for_platform(examples::OBV),
        CacheVersion::current(),
    ));
    PlatformPath::new(PathConfig::single("obv", scheduler), buffer).expect("valid")
}

fn key(k: u8) -> CacheKey {
    CacheKey::new(examples::OBV, DataClass::Search, "search").param("q", k.to_string())
}

fn session(s: u8) -> SessionKey {
    if s == 0 {
        SessionKey::System
    } else {
        SessionKey::client(&format!("s{s}"))
    }
}

/// The model's view of one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fate {
    Waiting,
    Done,
    Left,
}

struct Model {
    fates: BTreeMap<u64, Fate>,
    key_of: BTreeMap<u64, u8>,
    leaders: BTreeSet<u64>,
    out: BTreeMap<Attempt, u8>,
    kept: BTreeMap<u8, BTreeSet<Vec<u8>>>,
    bucket: ReferenceBucket,
    limited: bool,
}

fn run(w: &Workload) -> Result<(), String> {
    let mut p = path(w.limited);
    let mut m = Model {
        fates: BTreeMap::new(),
        key_of: BTreeMap::new(),
        leaders: BTreeSet::new(),
        out: BTreeMap::new(),
        kept: BTreeMap::new(),
        bucket: ReferenceBucket::new(limit()),
        limited: w.limited,
    };
    let mut platform = Platform {
        due: BTreeMap::new(),
        next_answer: 0,
        answers: &w.answers,
        latency: Duration::from_millis(u64::from(w.latency_ms)),
    };
    let mut now = Instant::ZERO;
    let mut ops = w.ops.iter();
    let mut op_at = Instant::ZERO;
    let mut pending_op = ops.next();
    if let Some((gap, _)) = pending_op {
        op_at = Instant::from_millis(u64::from(*gap));
    }
    let mut steps = 0;
    loop {
        steps += 1;
        if steps > 100_000 {
            return Err("the run does not end".into());
        }
        let wake = p.poll_timeout(now);
        let answer_at = platform.due.keys().next().map(|&(at, _)| at);
        let candidates = [pending_op.map(|_| op_at), answer_at, wake];
        let Some(next) = candidates.into_iter().flatten().min() else {
            break;
        };
        now = now.max(next);
        let wall = WallTime(now.as_millis());
        if answer_at == Some(now) {
            let (&(at, attempt), &answer) = platform.due.iter().next().expect("due");
            platform.due.remove(&(at, attempt));
            let k = m
                .out
                .remove(&attempt)
                .ok_or("an answer for an attempt that is not out")?;
            let outcome = m.outcome(now, attempt, k, answer);
            p.on_outcome(now, wall, attempt, outcome);
        } else if pending_op.is_some() && op_at == now {
            let (_, op) = pending_op.expect("pending");
            m.apply(&mut p, now, wall, *op)?;
            pending_op = ops.next();
            if let Some((gap, _)) = pending_op {
                op_at = now + Duration::from_millis(u64::from(*gap));
            }
        } else {
            p.handle_timeout(now);
        }
        m.take_effects(&mut p, &mut platform, now)?;
        p.check_invariants().map_err(|e| format!("t={now}: {e}"))?;
    }
    m.all_ended(&p)
}

/// The platform as the run plays it: the answers due, (at, attempt), and the workload's
/// answers, given in turn.
struct Platform<'w> {
    due: BTreeMap<(Instant, Attempt), Answer>,
    next_answer: usize,
    answers: &'w [Answer],
    latency: Duration,
}

impl Model {
    /// The outcome the platform's `answer` to `attempt` (for key `k`) is, at `now`; what it
    /// keeps and what it says of the limit go into the model.
    fn outcome(&mut self, now: Instant, attempt: Attempt, k: u8, answer: Answer) -> Outcome<P, u8> {
        match answer {
            Answer::Ok { keep, remaining } => {
                let payload: P = Arc::from(format!("{k}:{}:{}", attempt.flight.0, attempt.number).into_bytes());
                let keep = match keep {
                    0 => Keep::Normal,
                    1 => Keep::Briefly { ttl_ms: 700 },
                    _ => Keep::Never,
                };
                if keep != Keep::Never {
                    self.kept.entry(k).or_default().insert(payload.to_vec());
                }
                let remaining = remaining.map(|r| Units::whole(u64::from(r)));
                if let (true, Some(r)) = (self.limited, remaining) {
                    self.bucket.cap_at(now, r);
                }
                Outcome::Success {
                    payload,
                    feedback: Feedback {
                        remaining,
                        reset: None,
                        keep,
                        revalidated: false,
                    },
                }
            }
            Answer::RateLimited { retry_after_ms } => {
                if self.limited {
                    self.bucket.empty_at(now);
                }
                Outcome::RateLimited {
                    retry_after: Duration::from_millis(u64::from(retry_after_ms)),
                    error: 42,
                }
            }
            Answer::Retryable => Outcome::Retryable {
                error: 5,
                retry_after: None,
            },
            Answer::Failed => Outcome::Failed { error: 4 },
        }
    }

    /// The workload's `op` at `now`: a request arrives (a buffer hit must be a kept
    /// success of its key), or a request gives up.
    fn apply(&mut self, p: &mut TestPath, now: Instant, wall: WallTime, op: Op) -> Result<(), String> {
        match op {
            Op::Request { key: k, session: s } => {
                let waiter = self.fates.len() as u64;
                self.fates.insert(waiter, Fate::Waiting);
                self.key_of.insert(waiter, k);
                let req = Request {
                    waiter: WaiterId(waiter),
                    key: key(k),
                    session: session(s),
                    cost: Units::ONE,
                    lane: Lane::MAIN,
                };
                match p.request(now, wall, req) {
                    Arrival::Cached(payload) => {
                        if !self.kept.get(&k).is_some_and(|kept| kept.contains(&payload.to_vec())) {
                            return Err(format!(
                                "request {waiter} was answered from the buffer with {:?}, no kept success of key {k}",
                                String::from_utf8_lossy(&payload)
                            ));
                        }
                        self.fates.insert(waiter, Fate::Done);
                    }
                    Arrival::Refused { .. } => {
                        self.fates.insert(waiter, Fate::Done);
                    }
                    Arrival::Waiting { led, .. } => {
                        if led {
                            self.leaders.insert(waiter);
                        }
                    }
                }
            }
            Op::Leave { nth } => {
                if !self.fates.is_empty() {
                    let waiter = u64::from(nth) % self.fates.len() as u64;
                    if self.fates[&waiter] == Fate::Waiting {
                        self.fates.insert(waiter, Fate::Left);
                    }
                    p.leave(now, WaiterId(waiter));
                }
            }
        }
        Ok(())
    }

    /// The path's effects at `now`, each checked: one attempt per key at a time, each on
    /// a limited lane an admission the reference bucket allows (its answer then due on
    /// `platform`); one delivery per waiting request, `Fetched` exactly for a leader.
    fn take_effects(&mut self, p: &mut TestPath, platform: &mut Platform<'_>, now: Instant) -> Result<(), String> {
        while let Some(effect) = p.poll_effect() {
            match effect {
                Effect::Send {
                    attempt,
                    key: sent,
                    admission,
                    ..
                } => {
                    let k: u8 = sent.params()["q"].parse().map_err(|_| "a key of the pool")?;
                    if self.out.values().any(|&o| o == k) {
                        return Err(format!("two attempts for key {k} at once"));
                    }
                    self.out.insert(attempt, k);
                    match (self.limited, admission) {
                        (true, Some(a)) => {
                            if !self.bucket.take(now, a.cost) {
                                return Err(format!("the reference bucket went below zero at {now}"));
                            }
                        }
                        (true, None) => return Err("an attempt on a limited lane without an admission".into()),
                        (false, Some(_)) => return Err("an admission on a lane without a limit".into()),
                        (false, None) => {}
                    }
                    let answer = platform.answers[platform.next_answer.min(platform.answers.len() - 1)];
                    platform.next_answer += 1;
                    platform.due.insert((now + platform.latency, attempt), answer);
                }
                Effect::Deliver { waiter, delivery } => {
                    let fate = self.fates.get(&waiter.0).copied();
                    match fate {
                        Some(Fate::Waiting) => {
                            self.fates.insert(waiter.0, Fate::Done);
                        }
                        other => return Err(format!("request {} got a delivery while {other:?}", waiter.0)),
                    }
                    if let Delivery::Answer { served, .. } = delivery
                        && (served == Served::Fetched) != self.leaders.contains(&waiter.0)
                    {
                        return Err(format!("request {} was told {served:?}", waiter.0));
                    }
                }
                Effect::Ended { .. } => {}
            }
        }
        Ok(())
    }

    /// At the end every request has ended, and nothing is left in flight or queued.
    fn all_ended(&self, p: &TestPath) -> Result<(), String> {
        if let Some((w, f)) = self.fates.iter().find(|(_, f)| **f == Fate::Waiting) {
            return Err(format!("request {w} never ended ({f:?})"));
        }
        if p.in_flight() != 0 || p.waiting() != 0 {
            return Err(format!("{} flights and {} waiters left", p.in_flight(), p.waiting()));
        }
        if p.scheduler(Lane::MAIN).is_some_and(|s| s.queued() != 0) {
            return Err("calls left in the queue".into());
        }
        Ok(())
    }
}

fn prop(w: Workload) -> TestResult {
    match run(&w) {
        Ok(()) => TestResult::passed(),
        Err(e) => TestResult::error(e),
    }
}

#[test]
fn qc_the_path_keeps_its_promises_against_the_model() {
    QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(Workload) -> TestResult);
}
