//! The event loop over virtual time.
//!
//! Events sit in a [`BinaryHeap`] keyed by (instant, sequence number): the sequence
//! number is assigned when an event is scheduled, so events at the same instant run in
//! the order they were scheduled and a run never depends on heap internals. The loop
//! pops an event, lets the gates (fair scheduler or legacy model) decide, sends admitted
//! calls to the simulated platforms, feeds their 429s back (`on_retry_after`), and asks
//! each touched gate when to wake it next (`poll_timeout`). After every event the
//! [`Checker`] runs; the first broken invariant ends the run with a [`Failure`].
//!
//! Invariants: virtual time never goes backwards; every loop is bounded by the events
//! in the heap, and every event either finishes a call or schedules strictly later work
//! (a gate is never re-woken at the instant it was just polled without progress).
//!
//! What this module does not do: read the wall clock or any ambient randomness.

use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::fmt;
use std::time::Duration;

use besluitbron_core::{Instant, LimitConfig, PlatformId, SchedulerConfig, Units};

use crate::check::{CallView, Checker};
use crate::platform::{Answer, PlatformCounters, Refusal, SimPlatform};
use crate::policy::{CallId, FairGate, Gate, GateEvent, LegacyGate, PolicyKind};
use crate::rng::{Component, sim_rng};
use crate::scenario::{LimitModel, PlatformSpec, SessionPlan, Workload};
use crate::trace::Trace;

/// How to run.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// The policy at every limited platform.
    pub policy: PolicyKind,
    /// The root seed.
    pub seed: u64,
    /// Keep every trace line (for `--trace`).
    pub keep_trace: bool,
    /// Print a `\r` progress line on stderr (the caller checks it is a terminal).
    pub progress: bool,
}

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
    /// Operation label.
    pub op: Option<String>,
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
    agent: Option<u32>,
}

/// One platform's results.
#[derive(Clone, Debug)]
pub struct PlatformOutcome {
    /// Which platform.
    pub id: PlatformId,
    /// How it enforced its limit.
    pub model: LimitModel,
    /// The limit it enforced.
    pub limit: Option<LimitConfig>,
    /// The limit BesluitBron kept locally.
    pub local_limit: Option<LimitConfig>,
    /// Its counters.
    pub counters: PlatformCounters,
    /// The most units accepted in any window of length W.
    pub max_units_in_window: Units,
    /// Calls the gate let out uncounted (legacy defect).
    pub uncounted: u64,
    /// Calls submitted to it.
    pub calls: u64,
}

/// Everything a finished run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// The scenario or trace name.
    pub name: String,
    /// The policy.
    pub policy: PolicyKind,
    /// The root seed.
    pub seed: u64,
    /// Sessions, as planned.
    pub sessions: Vec<SessionPlan>,
    /// Calls, in creation order.
    pub calls: Vec<CallRecord>,
    /// Platforms that received calls, in [`PlatformId::ALL`] order.
    pub platforms: Vec<PlatformOutcome>,
    /// The instant of the last event.
    pub end_at: Instant,
    /// Events processed.
    pub events: u64,
    /// Admissions checked against the starvation bound.
    pub bound_checked: u64,
    /// The trace hash.
    pub trace_hash: u64,
    /// Trace lines.
    pub trace_lines: u64,
    /// Every trace line, when kept.
    pub trace: Vec<String>,
}

/// A broken invariant: the run stops at the first one.
#[derive(Debug)]
pub struct Failure {
    /// The scenario or trace name.
    pub name: String,
    /// The policy.
    pub policy: PolicyKind,
    /// The root seed.
    pub seed: u64,
    /// When.
    pub at: Instant,
    /// What.
    pub what: String,
    /// The last trace lines before it.
    pub recent: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "invariant broken in {} (policy {}, seed {}) at t={}: {}",
            self.name,
            self.policy.as_str(),
            self.seed,
            self.at,
            self.what
        )?;
        writeln!(f, "last events:")?;
        for line in &self.recent {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Arrive(CallId),
    AgentRound(u32),
    Wake(u8),
    Answer(CallId),
    Timeout(CallId),
}

#[derive(Clone, Copy, Debug)]
struct AgentState {
    next_step: usize,
    outstanding: u32,
}

struct Engine<'w> {
    workload: &'w Workload,
    opts: RunOptions,
    name: String,
    now: Instant,
    seq: u64,
    heap: BinaryHeap<Reverse<(Instant, u64, Event)>>,
    calls: Vec<CallRecord>,
    agents: Vec<AgentState>,
    next_agent_index: u64,
    gates: Vec<Gate>,
    wake_at: Vec<Option<Instant>>,
    platforms: Vec<SimPlatform>,
    used: Vec<u64>,
    checker: Checker,
    trace: Trace,
    out: Vec<GateEvent>,
    events: u64,
}

/// The platform settings for `id`: the workload's, or the documented defaults.
fn spec_for(workload: &Workload, id: PlatformId) -> PlatformSpec {
    workload
        .platforms
        .iter()
        .find(|p| p.id == id)
        .cloned()
        .unwrap_or_else(|| PlatformSpec::default_for(id))
}

fn limit_of(capacity: Option<Units>, window_s: Option<f64>, default: Option<LimitConfig>) -> Option<LimitConfig> {
    match (capacity, window_s, default) {
        (None, None, d) => d,
        (c, w, d) => Some(LimitConfig::new(
            c.or(d.map(|d| d.capacity)).unwrap_or(Units::whole(60)),
            w.map(Duration::from_secs_f64)
                .or(d.map(|d| d.window))
                .unwrap_or(Duration::from_secs(60)),
        )),
    }
}

/// Runs `workload` under `opts`; `name` names it in reports and failures.
pub fn run(name: &str, workload: &Workload, opts: RunOptions) -> Result<RunOutcome, Box<Failure>> {
    let mut gates = Vec::new();
    let mut platforms = Vec::new();
    for (i, &id) in PlatformId::ALL.iter().enumerate() {
        let spec = spec_for(workload, id);
        let enforced = limit_of(spec.capacity, spec.window_s, id.default_limit());
        let local = limit_of(
            spec.local_capacity.or(enforced.map(|l| l.capacity)),
            spec.local_window_s.or(enforced.map(|l| l.window.as_secs_f64())),
            enforced,
        );
        let p = u8::try_from(i).expect("seven platforms");
        platforms.push(SimPlatform::new(
            id,
            enforced,
            spec.model,
            spec.latency,
            spec.throttle.clone(),
            sim_rng(opts.seed, Component::Latency(p)),
        ));
        let gate = match (local, opts.policy) {
            (None, _) => Gate::Open(id),
            (Some(limit), PolicyKind::Fair) => {
                let mut config = SchedulerConfig::with_limit(limit);
                if let Some(n) = spec.max_queued {
                    config.max_queued = n;
                }
                if let Some(n) = spec.max_queued_per_session {
                    config.max_queued_per_session = n;
                }
                if let Some(s) = spec.forget_after_s {
                    config.forget_after = Duration::from_secs(s);
                }
                match FairGate::new(id, config) {
                    Ok(g) => Gate::Fair(Box::new(g)),
                    Err(e) => {
                        return Err(Box::new(Failure {
                            name: name.to_owned(),
                            policy: opts.policy,
                            seed: opts.seed,
                            at: Instant::ZERO,
                            what: format!("platform {id}: {e}"),
                            recent: Vec::new(),
                        }));
                    }
                }
            }
            (Some(limit), PolicyKind::Legacy) => Gate::Legacy(Box::new(LegacyGate::new(
                id,
                limit,
                workload.legacy_slip_probability,
                sim_rng(opts.seed, Component::Faults(p)),
            ))),
        };
        gates.push(gate);
    }
    let engine = Engine {
        workload,
        opts,
        name: name.to_owned(),
        now: Instant::ZERO,
        seq: 0,
        heap: BinaryHeap::new(),
        calls: Vec::with_capacity(workload.open_calls.len()),
        agents: vec![
            AgentState {
                next_step: 0,
                outstanding: 0
            };
            workload.agents.len()
        ],
        next_agent_index: workload.first_agent_index(),
        gates,
        wake_at: vec![None; PlatformId::ALL.len()],
        platforms,
        used: vec![0; PlatformId::ALL.len()],
        checker: Checker::new(opts.policy),
        trace: Trace::new(opts.keep_trace),
        out: Vec::new(),
        events: 0,
    };
    engine.run()
}

impl Engine<'_> {
    fn schedule(&mut self, at: Instant, event: Event) {
        debug_assert!(at >= self.now, "events are never scheduled in the past");
        self.heap.push(Reverse((at, self.seq, event)));
        self.seq += 1;
    }

    fn fail(&self, what: String) -> Box<Failure> {
        Box::new(Failure {
            name: self.name.clone(),
            policy: self.opts.policy,
            seed: self.opts.seed,
            at: self.now,
            what,
            recent: self.trace.recent().cloned().collect(),
        })
    }

    fn view(&self, call: CallId) -> CallView {
        let c = &self.calls[call as usize];
        CallView {
            session: c.session,
            platform: platform_index(c.platform),
            requested: c.cost,
            queued_at: c.queued_at,
        }
    }

    fn new_call(&mut self, index: u64, session: u32, platform: PlatformId, cost: Units, op: Option<String>) -> CallId {
        self.calls.push(CallRecord {
            index,
            session,
            platform,
            cost,
            op,
            submitted_at: Instant::ZERO,
            queued_at: Instant::ZERO,
            admitted_at: None,
            charged: Units::ZERO,
            state: CallState::Planned,
            platform_429s: 0,
            agent: None,
        });
        CallId::try_from(self.calls.len() - 1).expect("fewer than 2^32 calls")
    }

    fn run(mut self) -> Result<RunOutcome, Box<Failure>> {
        let w = self.workload;
        for (i, oc) in w.open_calls.iter().enumerate() {
            let call = self.new_call(w.open_index(i), oc.session, oc.platform, oc.cost, oc.op.clone());
            self.schedule(oc.at, Event::Arrive(call));
        }
        for (a, plan) in w.agents.iter().enumerate() {
            if !plan.steps.is_empty() {
                self.schedule(plan.start_at, Event::AgentRound(a as u32));
            }
        }
        while let Some(Reverse((at, _, event))) = self.heap.pop() {
            debug_assert!(at >= self.now);
            self.now = at;
            self.events += 1;
            if self.opts.progress && self.events.is_multiple_of(1 << 16) {
                eprint!("\rsimulated {} ({} events)", self.now, self.events);
            }
            self.checker.note_precondition(self.now, &self.gates);
            self.handle(event)?;
            let over_limit: u64 = self.platforms.iter().map(|p| p.counters.over_limit).sum();
            self.checker
                .after_event(self.now, &self.gates, over_limit)
                .map_err(|e| self.fail(e))?;
            self.checker.note_precondition(self.now, &self.gates);
        }
        if self.opts.progress {
            eprint!("\r{:60}\r", "");
        }
        self.checker.at_end().map_err(|e| self.fail(e))?;
        Ok(self.finish())
    }

    fn handle(&mut self, event: Event) -> Result<(), Box<Failure>> {
        match event {
            Event::Arrive(call) => self.submit(call, true),
            Event::AgentRound(a) => {
                let plan = &self.workload.agents[a as usize];
                let state = self.agents[a as usize];
                let step = &plan.steps[state.next_step];
                let session = plan.session;
                for _ in 0..step.fan_out {
                    let index = self.next_agent_index;
                    self.next_agent_index += 1;
                    let call = self.new_call(index, session, step.platform, step.cost, step.op.clone());
                    self.calls[call as usize].agent = Some(a);
                    self.agents[a as usize].outstanding += 1;
                    self.submit(call, true)?;
                }
                Ok(())
            }
            Event::Wake(p) => {
                if self.wake_at[p as usize] == Some(self.now) {
                    self.wake_at[p as usize] = None;
                    self.settle(p as usize)?;
                }
                Ok(())
            }
            Event::Answer(call) => {
                let c = &mut self.calls[call as usize];
                c.state = CallState::Done;
                let line = format!(
                    "t={} session={} answer platform={}",
                    self.now, self.workload.sessions[c.session as usize].key, c.platform
                );
                self.trace.push(line);
                self.finish_call(call);
                Ok(())
            }
            Event::Timeout(call) => {
                if self.calls[call as usize].state != CallState::Waiting {
                    return Ok(());
                }
                let p = platform_index(self.calls[call as usize].platform);
                if self.gates[p].cancel(self.now, call, &mut self.trace) {
                    self.calls[call as usize].state = CallState::Cancelled;
                    let v = self.view(call);
                    self.checker.on_leave(call, v);
                    self.finish_call(call);
                    self.settle(p)?;
                }
                Ok(())
            }
        }
    }

    /// Offers `call` to its gate at `now`; `first` when this is not a resubmission.
    fn submit(&mut self, call: CallId, first: bool) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &mut self.calls[call as usize];
        if first {
            c.submitted_at = now;
        }
        c.queued_at = now;
        c.state = CallState::Waiting;
        let p = platform_index(c.platform);
        let cost = c.cost;
        let session = c.session;
        if first {
            self.used[p] += 1;
            if let Some(after) = self.workload.sessions[session as usize].cancel_after {
                self.schedule(now + after, Event::Timeout(call));
            }
        }
        let v = self.view(call);
        self.checker.on_submit(call, v);
        let key = &self.workload.sessions[session as usize].key;
        self.gates[p].submit(now, call, key, cost, &mut self.trace, &mut self.out);
        self.apply_gate_events(p)?;
        self.settle(p)
    }

    /// Polls gate `p` until it has nothing due, then schedules its next wake.
    fn settle(&mut self, p: usize) -> Result<(), Box<Failure>> {
        // Bounded: each pass that admits something sends at least one call, and a call
        // can only come back (after a 429) behind a Retry-After, which is in the future.
        loop {
            self.gates[p].poll(self.now, &mut self.trace, &mut self.out);
            if self.out.is_empty() {
                break;
            }
            self.apply_gate_events(p)?;
        }
        let next = self.gates[p].next_wake(self.now);
        if next != self.wake_at[p] {
            if let Some(at) = next {
                if at <= self.now {
                    return Err(self.fail(format!(
                        "{}: the gate asked to be woken at {at} but admitted nothing at {}",
                        PlatformId::ALL[p],
                        self.now
                    )));
                }
                self.schedule(at, Event::Wake(p as u8));
            }
            self.wake_at[p] = next;
        }
        Ok(())
    }

    fn apply_gate_events(&mut self, p: usize) -> Result<(), Box<Failure>> {
        // A 429 puts its call back into the gate, which may add events while a batch is
        // applied; they are taken in the next pass.
        while !self.out.is_empty() {
            let batch = std::mem::take(&mut self.out);
            for e in batch {
                match e {
                    GateEvent::Admitted { call, charged, counted } => {
                        if call as usize >= self.calls.len() {
                            return Err(self.fail(format!(
                                "{}: the scheduler admitted a ticket no call was waiting for",
                                PlatformId::ALL[p]
                            )));
                        }
                        let v = self.view(call);
                        self.checker
                            .on_admit(self.now, call, v, charged, counted, &self.gates[p])
                            .map_err(|e| self.fail(e))?;
                        self.send(call, charged, p)?;
                    }
                    GateEvent::Refused { call } => {
                        let v = self.view(call);
                        self.checker.on_leave(call, v);
                        self.calls[call as usize].state = CallState::Refused;
                        self.finish_call(call);
                    }
                }
            }
        }
        Ok(())
    }

    fn send(&mut self, call: CallId, charged: Units, p: usize) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &mut self.calls[call as usize];
        c.admitted_at = Some(now);
        c.charged = charged;
        c.state = CallState::Sent;
        let cost = c.cost;
        match self.platforms[p].receive(now, cost) {
            Answer::Ok { latency } => self.schedule(now + latency, Event::Answer(call)),
            Answer::TooMany { refusal, retry_after } => {
                let c = &mut self.calls[call as usize];
                c.platform_429s += 1;
                let reason = match refusal {
                    Refusal::OverLimit => "over-limit",
                    Refusal::Throttled => "throttled",
                };
                let line = format!(
                    "t={now} session={} platform-429 reason={reason} retry_after={}s cost={} platform={}",
                    self.workload.sessions[c.session as usize].key,
                    retry_after.as_secs(),
                    cost.compact(),
                    PlatformId::ALL[p],
                );
                self.trace.push(line);
                self.checker.on_retry_after(p, now + retry_after);
                self.gates[p].on_retry_after(now, retry_after);
                // The call is retried: it goes back to the gate, which now waits out the
                // Retry-After before anything else goes to this platform.
                self.submit_again(call)?;
            }
        }
        Ok(())
    }

    fn submit_again(&mut self, call: CallId) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &mut self.calls[call as usize];
        c.queued_at = now;
        c.state = CallState::Waiting;
        let p = platform_index(c.platform);
        let (cost, session) = (c.cost, c.session);
        let v = self.view(call);
        self.checker.on_submit(call, v);
        let key = &self.workload.sessions[session as usize].key;
        // Gate decisions are applied by the caller's loop in `settle`/`apply_gate_events`.
        self.gates[p].submit(now, call, key, cost, &mut self.trace, &mut self.out);
        Ok(())
    }

    fn finish_call(&mut self, call: CallId) {
        let Some(a) = self.calls[call as usize].agent else {
            return;
        };
        let state = &mut self.agents[a as usize];
        state.outstanding -= 1;
        if state.outstanding > 0 {
            return;
        }
        let plan = &self.workload.agents[a as usize];
        let think = plan.steps[state.next_step].think;
        state.next_step += 1;
        if state.next_step < plan.steps.len() {
            self.schedule(self.now + think, Event::AgentRound(a));
        }
    }

    fn finish(self) -> RunOutcome {
        let platforms = PlatformId::ALL
            .iter()
            .enumerate()
            .filter(|&(p, _)| self.used[p] > 0)
            .map(|(p, &id)| {
                let sp = &self.platforms[p];
                PlatformOutcome {
                    id,
                    model: sp.model,
                    limit: sp.limit,
                    local_limit: self.gates[p].local_limit(),
                    counters: sp.counters,
                    max_units_in_window: sp.limit.map_or(Units::ZERO, |l| sp.max_units_in_window(l.window)),
                    uncounted: match &self.gates[p] {
                        Gate::Legacy(g) => g.uncounted,
                        _ => 0,
                    },
                    calls: self.used[p],
                }
            })
            .collect();
        RunOutcome {
            name: self.name,
            policy: self.opts.policy,
            seed: self.opts.seed,
            sessions: self.workload.sessions.clone(),
            calls: self.calls,
            platforms,
            end_at: self.now,
            events: self.events,
            bound_checked: self.checker.bound_checked,
            trace_hash: self.trace.hash(),
            trace_lines: self.trace.len(),
            trace: self.trace.into_lines(),
        }
    }
}

fn platform_index(id: PlatformId) -> usize {
    PlatformId::ALL
        .iter()
        .position(|&p| p == id)
        .expect("every platform is in ALL")
}
