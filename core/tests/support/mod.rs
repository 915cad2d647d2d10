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
    let limit = s.config().limit;
    let mut steps: Vec<(usize, &Step)> = steps.iter().enumerate().collect();
    steps.sort_by_key(|(i, st)| (st.at, *i));
    let mut run = Run::default();
    let mut tickets: BTreeMap<CallTicket, usize> = BTreeMap::new();
    let mut submit_index: Vec<Option<CallTicket>> = Vec::new();
    let mut charges: BTreeMap<usize, Charge> = BTreeMap::new();
    let mut nth_of_step: BTreeMap<usize, usize> = BTreeMap::new();
    for (i, st) in &steps {
        if matches!(st.action, Action::Submit { .. }) {
            let n = nth_of_step.len();
            nth_of_step.insert(*i, n);
        }
    }
    submit_index.resize(nth_of_step.len(), None);
    run.queued_at_submit.resize(nth_of_step.len(), false);
    let mut reference = ReferenceBucket::new(limit);
    // The driver's own model of what waits: per session, (nth, cost) in order.
    let mut waiting: BTreeMap<SessionKey, VecDeque<(usize, Units)>> = BTreeMap::new();
    let mut blocked_until = Instant::ZERO;
    let mut next = 0;
    let mut now = Instant::ZERO;
    loop {
        let wake = s.poll_timeout(now);
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
        while let Some(a) = s.poll_admission(now) {
            let nth = tickets[&a.call];
            record_admission(&mut run, &mut reference, &mut waiting, nth, a, &mut charges);
        }
        while let Some((i, st)) = steps.get(next).filter(|(_, st)| st.at == now) {
            next += 1;
            match &st.action {
                Action::Submit { session, cost } => {
                    let nth = nth_of_step[i];
                    match s.submit(now, session, *cost) {
                        Submission::Admitted(a) => {
                            tickets.insert(a.call, nth);
                            submit_index[nth] = Some(a.call);
                            record_admission(&mut run, &mut reference, &mut waiting, nth, a, &mut charges);
                        }
                        Submission::Queued { call: t, .. } => {
                            tickets.insert(t, nth);
                            submit_index[nth] = Some(t);
                            run.queued_at_submit[nth] = true;
                            let charged = (*cost).min(limit.capacity);
                            waiting.entry(session.clone()).or_default().push_back((nth, charged));
                            run.events.push(SchedulerEvent::Queue {
                                at: now,
                                session: session.clone(),
                                entry: t.first_entry(),
                                cost: *cost,
                            });
                        }
                        Submission::Refused { reason, retry_at } => {
                            run.refused.push(nth);
                            run.events.push(SchedulerEvent::Refuse {
                                at: now,
                                session: session.clone(),
                                reason,
                                retry_at,
                            });
                        }
                    }
                }
                Action::Cancel { nth } => {
                    if let Some(t) = submit_index.get(*nth).copied().flatten()
                        && s.cancel_call(now, t)
                    {
                        run.cancelled.push(*nth);
                        for q in waiting.values_mut() {
                            q.retain(|(n, _)| n != nth);
                        }
                        run.events.push(SchedulerEvent::Cancel {
                            at: now,
                            entry: t.first_entry(),
                        });
                    }
                }
                Action::RetryAfter(d) => {
                    s.on_retry_after(now, *d);
                    blocked_until = blocked_until.max(now + *d);
                    run.blocks.push((now, now + *d));
                    reference.empty_at(now);
                }
                Action::Remaining(u) => {
                    s.on_remaining(now, *u, None);
                    reference.cap_at(now, *u);
                }
                Action::Refund { nth } => {
                    // The platform counted nothing: the reference bucket is not refilled
                    // (a 429 empties it), only the session's usage goes back.
                    if let Some(charge) = charges.remove(nth) {
                        s.refund(now, charge);
                        run.refunded.push(*nth);
                    }
                }
            }
            if let Err(e) = s.check_invariants() {
                run.findings.push(format!("t={now}: after {:?}: {e}", st.action));
            }
        }
        // Admit again: actions at `now` may have made something admissible.
        while let Some(a) = s.poll_admission(now) {
            let nth = tickets[&a.call];
            record_admission(&mut run, &mut reference, &mut waiting, nth, a, &mut charges);
        }
        if let Err(e) = s.check_invariants() {
            run.findings.push(format!("t={now}: after the admissions: {e}"));
        }
        // (4) Work conservation: if every waiting head fits, nothing may still wait.
        let heads: Vec<Units> = waiting.values().filter_map(|q| q.front().map(|h| h.1)).collect();
        if !heads.is_empty() && now >= blocked_until && heads.iter().all(|&c| reference.fits(now, c)) {
            run.findings
                .push(format!("t={now}: idle while every waiting head fits ({heads:?})"));
        }
    }
    run
}

fn record_admission(
    run: &mut Run,
    reference: &mut ReferenceBucket,
    waiting: &mut BTreeMap<SessionKey, VecDeque<(usize, Units)>>,
    nth: usize,
    admission: Admission,
    charges: &mut BTreeMap<usize, Charge>,
) {
    let a = admission.record();
    charges.insert(nth, admission.charge);
    if !reference.take(a.admitted_at, a.cost) {
        run.findings
            .push(format!("t={}: bucket below zero after admitting #{nth}", a.admitted_at));
    }
    if let Some(q) = waiting.get_mut(&a.session) {
        match q.front() {
            Some(&(head, _)) if head == nth => {
                q.pop_front();
            }
            Some(&(head, _)) if run.queued_at_submit[nth] => {
                run.findings.push(format!(
                    "t={}: #{nth} admitted before its session's head #{head}",
                    a.admitted_at
                ));
                q.retain(|(n, _)| *n != nth);
            }
            _ => {}
        }
    }
    run.events.push(SchedulerEvent::Admit(a.clone()));
    run.admissions.push((nth, a));
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
