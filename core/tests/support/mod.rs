//! A discrete-event driver for scheduler tests, and the plain reference models the
//! properties compare against.
//!
//! The driver jumps virtual time to the next arrival or the scheduler's next wake-up
//! (`poll_timeout`), admits everything due, then applies the actions at that instant.
#![allow(dead_code)]

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use besluitbron_core::{
    Admission, AdmissionRecord, CallTicket, Charge, FairScheduler, Instant, LimitConfig, SchedulerConfig,
    SchedulerEvent, SessionKey, Submission, Units,
};

/// Something a test does to the scheduler at an instant.
#[derive(Clone, Debug)]
pub enum Action {
    /// Offer a call.
    Submit { session: SessionKey, cost: Units },
    /// Withdraw the call made by the `nth` Submit action (0-based), if it still waits.
    Cancel { nth: usize },
    /// The platform answered 429 with this Retry-After.
    RetryAfter(Duration),
    /// The platform reported this many units left.
    Remaining(Units),
    /// The platform refused the call made by the `nth` Submit action (0-based) with 429,
    /// if it was admitted and not yet refunded: its charge goes back to its session.
    Refund { nth: usize },
}

/// One scripted step.
#[derive(Clone, Debug)]
pub struct Step {
    pub at: Instant,
    pub action: Action,
}

pub fn submit(at_ms: u64, session: &str, cost: Units) -> Step {
    let session = if session == "system" {
        SessionKey::System
    } else {
        SessionKey::client(session)
    };
    Step {
        at: Instant::from_millis(at_ms),
        action: Action::Submit { session, cost },
    }
}

/// What happened during a run.
#[derive(Debug, Default)]
pub struct Run {
    /// Every admission, in order, with the index of the Submit action it answers.
    pub admissions: Vec<(usize, AdmissionRecord)>,
    /// Submit actions refused at once.
    pub refused: Vec<usize>,
    /// Submit actions cancelled while queued.
    pub cancelled: Vec<usize>,
    /// The trace, one event per line.
    pub events: Vec<SchedulerEvent>,
    /// Per Submit action, whether the scheduler queued it.
    pub queued_at_submit: Vec<bool>,
    /// Findings of the invariant checks made during the run.
    pub findings: Vec<String>,
    /// Retry-After blocks: (from, until).
    pub blocks: Vec<(Instant, Instant)>,
    /// Submit actions whose charge was refunded.
    pub refunded: Vec<usize>,
}

impl Run {
    /// The trace as text.
    pub fn trace(&self) -> String {
        self.events.iter().map(|e| format!("{e}\n")).collect()
    }
}

/// A scheduler with this limit and the default bounds.
pub fn scheduler(capacity: Units, window: Duration) -> FairScheduler {
    FairScheduler::new(SchedulerConfig::with_limit(LimitConfig::new(capacity, window))).expect("valid config")
}

/// Runs `steps` (sorted by time, stable) against `s` until nothing waits, or until
/// `until` if given. Checks, at every instant: work conservation (4) against the
/// reference bucket.
pub fn drive(s: &mut FairScheduler, steps: &[Step], until: Option<Instant>) -> Run {
    let mut steps: Vec<(usize, &Step)> = steps.iter().enumerate().collect();
    steps.sort_by_key(|(i, st)| (st.at, *i));
    let mut d = Driver::new(s, &steps);
    let mut next = 0;
    let mut now = Instant::ZERO;
    loop {
        let wake = d.s.poll_timeout(now);
        let act = steps.get(next).map(|(_, st)| st.at);
        let target = match (wake, act) {
            (None, None) => break,
            (Some(w), None) => w,
            (None, Some(a)) => a,
            (Some(w), Some(a)) => w.min(a),
        };
        if until.is_some_and(|u| target > u) {
            break;
        }
        now = target;
        d.admit_due(now);
        while let Some((i, st)) = steps.get(next).filter(|(_, st)| st.at == now) {
            next += 1;
            d.act(now, *i, &st.action);
            if let Err(e) = d.s.check_invariants() {
                d.run.findings.push(format!("t={now}: after {:?}: {e}", st.action));
            }
        }
        // Admit again: actions at `now` may have made something admissible.
        d.admit_due(now);
        if let Err(e) = d.s.check_invariants() {
            d.run.findings.push(format!("t={now}: after the admissions: {e}"));
        }
        d.check_work_conservation(now);
    }
    d.run
}

/// The driver's state over a run: the scheduler, what it found, and its own model of
/// what was submitted, what waits and what the reference bucket holds.
struct Driver<'s> {
    s: &'s mut FairScheduler,
    limit: LimitConfig,
    run: Run,
    tickets: BTreeMap<CallTicket, usize>,
    submit_index: Vec<Option<CallTicket>>,
    charges: BTreeMap<usize, Charge>,
    /// Step index → which Submit action (0-based) it is.
    nth_of_step: BTreeMap<usize, usize>,
    reference: ReferenceBucket,
    /// The driver's own model of what waits: per session, (nth, cost) in order.
    waiting: BTreeMap<SessionKey, VecDeque<(usize, Units)>>,
    blocked_until: Instant,
}

impl<'s> Driver<'s> {
    /// A driver of `s` for the sorted `steps`, each Submit numbered in order.
    fn new(s: &'s mut FairScheduler, steps: &[(usize, &Step)]) -> Driver<'s> {
        let limit = s.config().limit;
        let mut nth_of_step: BTreeMap<usize, usize> = BTreeMap::new();
        for (i, st) in steps {
            if matches!(st.action, Action::Submit { .. }) {
                let n = nth_of_step.len();
                nth_of_step.insert(*i, n);
            }
        }
        let mut run = Run::default();
        run.queued_at_submit.resize(nth_of_step.len(), false);
        Driver {
            s,
            limit,
            run,
            tickets: BTreeMap::new(),
            submit_index: vec![None; nth_of_step.len()],
            charges: BTreeMap::new(),
            nth_of_step,
            reference: ReferenceBucket::new(limit),
            waiting: BTreeMap::new(),
            blocked_until: Instant::ZERO,
        }
    }

    /// Takes every admission due at `now`.
    fn admit_due(&mut self, now: Instant) {
        while let Some(a) = self.s.poll_admission(now) {
            let nth = self.tickets[&a.call];
            self.record_admission(nth, a);
        }
    }

    /// Step `i`'s `action` at `now`.
    fn act(&mut self, now: Instant, i: usize, action: &Action) {
        match action {
            Action::Submit { session, cost } => self.submit(now, i, session, *cost),
            Action::Cancel { nth } => {
                if let Some(t) = self.submit_index.get(*nth).copied().flatten()
                    && self.s.cancel_call(now, t)
                {
                    self.run.cancelled.push(*nth);
                    for q in self.waiting.values_mut() {
                        q.retain(|(n, _)| n != nth);
                    }
                    self.run.events.push(SchedulerEvent::Cancel {
                        at: now,
                        entry: t.first_entry(),
                    });
                }
            }
            Action::RetryAfter(d) => {
                self.s.on_retry_after(now, *d);
                self.blocked_until = self.blocked_until.max(now + *d);
                self.run.blocks.push((now, now + *d));
                self.reference.empty_at(now);
            }
            Action::Remaining(u) => {
                self.s.on_remaining(now, *u, None);
                self.reference.cap_at(now, *u);
            }
            Action::Refund { nth } => {
                // The platform counted nothing: the reference bucket is not refilled
                // (a 429 empties it), only the session's usage goes back.
                if let Some(charge) = self.charges.remove(nth) {
                    self.s.refund(now, charge);
                    self.run.refunded.push(*nth);
                }
            }
        }
    }

    /// Step `i`, a Submit of `session`'s call costing `cost`, at `now`.
    fn submit(&mut self, now: Instant, i: usize, session: &SessionKey, cost: Units) {
        let nth = self.nth_of_step[&i];
        match self.s.submit(now, session, cost) {
            Submission::Admitted(a) => {
                self.tickets.insert(a.call, nth);
                self.submit_index[nth] = Some(a.call);
                self.record_admission(nth, a);
            }
            Submission::Queued { call: t, .. } => {
                self.tickets.insert(t, nth);
                self.submit_index[nth] = Some(t);
                self.run.queued_at_submit[nth] = true;
                let charged = cost.min(self.limit.capacity);
                self.waiting
                    .entry(session.clone())
                    .or_default()
                    .push_back((nth, charged));
                self.run.events.push(SchedulerEvent::Queue {
                    at: now,
                    session: session.clone(),
                    entry: t.first_entry(),
                    cost,
                });
            }
            Submission::Refused { reason, retry_at } => {
                self.run.refused.push(nth);
                self.run.events.push(SchedulerEvent::Refuse {
                    at: now,
                    session: session.clone(),
                    reason,
                    retry_at,
                });
            }
        }
    }

    /// (4) Work conservation: if every waiting head fits, nothing may still wait.
    fn check_work_conservation(&mut self, now: Instant) {
        let heads: Vec<Units> = self.waiting.values().filter_map(|q| q.front().map(|h| h.1)).collect();
        if !heads.is_empty() && now >= self.blocked_until && heads.iter().all(|&c| self.reference.fits(now, c)) {
            self.run
                .findings
                .push(format!("t={now}: idle while every waiting head fits ({heads:?})"));
        }
    }

    /// Records the admission of the `nth` Submit: the reference bucket pays, and it must
    /// be its session's head when it was queued.
    fn record_admission(&mut self, nth: usize, admission: Admission) {
        let a = admission.record();
        self.charges.insert(nth, admission.charge);
        if !self.reference.take(a.admitted_at, a.cost) {
            self.run
                .findings
                .push(format!("t={}: bucket below zero after admitting #{nth}", a.admitted_at));
        }
        if let Some(q) = self.waiting.get_mut(&a.session) {
            match q.front() {
                Some(&(head, _)) if head == nth => {
                    q.pop_front();
                }
                Some(&(head, _)) if self.run.queued_at_submit[nth] => {
                    self.run.findings.push(format!(
                        "t={}: #{nth} admitted before its session's head #{head}",
                        a.admitted_at
                    ));
                    q.retain(|(n, _)| *n != nth);
                }
                _ => {}
            }
        }
        self.run.events.push(SchedulerEvent::Admit(a.clone()));
        self.run.admissions.push((nth, a));
    }
}

/// A plain token bucket with exact rational arithmetic: the level is kept in
/// thousandths × nanoseconds, refilled by C per nanosecond and drained by W per
/// thousandth. No GCRA, no rounding.
#[derive(Debug, Clone)]
pub struct ReferenceBucket {
    capacity_milli: i128,
    window_ns: i128,
    level: i128,
    at: Instant,
}

impl ReferenceBucket {
    pub fn new(limit: LimitConfig) -> ReferenceBucket {
        let capacity_milli = i128::from(limit.capacity.as_milli());
        let window_ns = limit.window.as_nanos() as i128;
        ReferenceBucket {
            capacity_milli,
            window_ns,
            level: capacity_milli * window_ns,
            at: Instant::ZERO,
        }
    }

    fn refill(&mut self, now: Instant) {
        let dt = i128::from(now.as_nanos().saturating_sub(self.at.as_nanos()));
        self.level = (self.level + dt * self.capacity_milli).min(self.capacity_milli * self.window_ns);
        self.at = self.at.max(now);
    }

    /// Whether `cost` fits at `now` (without taking it).
    pub fn fits(&mut self, now: Instant, cost: Units) -> bool {
        self.refill(now);
        self.level >= i128::from(cost.as_milli()) * self.window_ns
    }

    /// Takes `cost`; false when the level went below zero.
    pub fn take(&mut self, now: Instant, cost: Units) -> bool {
        self.refill(now);
        self.level -= i128::from(cost.as_milli()) * self.window_ns;
        self.level >= 0
    }

    pub fn empty_at(&mut self, now: Instant) {
        self.refill(now);
        self.level = self.level.min(0);
    }

    pub fn cap_at(&mut self, now: Instant, units: Units) {
        self.refill(now);
        self.level = self.level.min(i128::from(units.as_milli()) * self.window_ns);
    }
}

/// The ideal weighted share (R-L3) as a fluid model: every backlogged session's
/// normalised service `Φ(used) = ∫ (1 + x / C) dx` grows at the same pace (the system
/// session's at `Φ = used`). Given each session's prior usage and the units handed out
/// while all were backlogged, returns each session's ideal units.
pub fn fluid_shares(capacity: f64, prior: &[(f64, bool)], total: f64) -> Vec<f64> {
    let units_at = |phi: f64, p: f64, system: bool| -> f64 {
        if system {
            return phi;
        }
        // Solve u + ((p+u)² − p²) / 2C = φ for u ≥ 0.
        let a = 1.0 / (2.0 * capacity);
        let b = 1.0 + p / capacity;
        (-b + (b * b + 4.0 * a * phi).sqrt()) / (2.0 * a)
    };
    let (mut lo, mut hi) = (0.0_f64, total * 10.0 + 1.0);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        let sum: f64 = prior.iter().map(|&(p, sys)| units_at(mid, p, sys)).sum();
        if sum < total { lo = mid } else { hi = mid }
    }
    prior.iter().map(|&(p, sys)| units_at(lo, p, sys)).collect()
}
