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
//! **Deduplication** (fair policy, calls with a key): each call first asks the platform's
//! buffer (a core `MemoryStore`), then the core `FlightTable`. A leader's call goes to
//! the gate as above; a joiner of a flight that still waits in the fair queue adds its
//! own entry with `FairScheduler::join`, so the call goes at the best position among
//! its joiners and the session whose entry is admitted pays. A success is stored and
//! goes to every waiter; a failure (429, throttling, `fail_rate`) goes to that flight's
//! waiters only and is never stored. As in the server's tools, a waiter whose flight the
//! platform refused with 429 at a fair gate (not the system session's) asks once more (buffer, flight, gate) when
//! the Retry-After is at most [`MAX_REQUEUE_WAIT`]; the waiters that ask again coalesce
//! into one new flight, which the gate holds behind the Retry-After. When the last waiter
//! of a queued flight gives up, the flight is withdrawn (`cancel_flight`). This mirrors
//! `server/src/fetch.rs` and the tools' fetch in `server/src/mcp/obv.rs`.
//!
//! What this module does not do: read the wall clock or any ambient randomness.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt;
use std::time::Duration;

use besluitbron_core::cache::{
    CacheKey, CachePolicy, CacheStore, CacheVersion, DataClass, Lookup, MemoryStore, Success,
};
use besluitbron_core::dedup::{Begin, FlightId, FlightTable, Leave, WaiterId};
use besluitbron_core::scheduler::MAX_REQUEUE_WAIT;
use besluitbron_core::{
    Charge, Instant, LimitConfig, PlatformId, SchedulerConfig, SessionKey, Ticket, Units, WallTime,
};
use rand::RngExt;

use crate::check::{CallView, Checker};
use crate::platform::{Answer, PlatformCounters, Refusal, SimPlatform};
use crate::policy::{CallId, FairGate, Gate, GateEvent, LegacyGate, PolicyKind};
use crate::rng::{Component, SimRng, sim_rng};
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
    /// Its flight went out and failed (a 429 or a failed answer); nothing was stored.
    Failed,
}

/// How a call with a key was answered (deduplication, fair policy only).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Served {
    /// It led a flight: its own upstream call (which another joiner's entry may have paid).
    Fetched,
    /// It joined another call's flight (coalesced).
    Coalesced,
    /// From the buffer.
    Cached,
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
    /// What it asks; `None`: a distinct call.
    pub key: Option<CacheKey>,
    /// How it was answered, when deduplication ran.
    pub served: Option<Served>,
    /// Its gate entry was admitted and its session charged `charged` (for a flight: the
    /// one entry that went, whichever waiter it belonged to).
    pub paid: bool,
    /// It asked once more after its flight was refused with 429 (it does so only once).
    pub requeued: bool,
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
    /// Calls sent to the platform (each 429 retry counts again).
    pub upstream: u64,
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
    /// Calls carry keys: reports show the deduplication columns.
    pub keyed: bool,
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

/// One flight's record on the engine side: what the channel of the server holds.
#[derive(Clone, Debug)]
struct FlightRecord {
    platform: usize,
    key: CacheKey,
    cost: Units,
    sent: bool,
    ok: bool,
    /// Every call that led or joined it, in order.
    participants: Vec<CallId>,
}

/// The production path's state (fair policy with keys): one buffer per platform and
/// one flight table, as in the server's `Fetcher`.
struct DedupState {
    stores: Vec<MemoryStore>,
    flights: FlightTable<CacheKey>,
    records: BTreeMap<FlightId, FlightRecord>,
    call_flight: BTreeMap<CallId, FlightId>,
}

/// How a flight ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum FlightEnd {
    Ok,
    Failed,
    Refused,
    /// The platform answered 429 with this Retry-After.
    RateLimited(Duration),
}

/// The buffer's clock: virtual milliseconds.
fn wall(now: Instant) -> WallTime {
    WallTime(now.as_millis())
}

/// The buffer key of a call: (platform, search, operation, q = key), public scope.
pub fn cache_key(platform: PlatformId, op: Option<&str>, key: &str) -> CacheKey {
    CacheKey::new(platform, DataClass::Search, op.unwrap_or("search")).param("q", key)
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
    dedup: Option<DedupState>,
    fail_rate: Vec<Option<(f64, SimRng)>>,
    upstream: Vec<u64>,
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
    let keyed = workload.has_keys();
    let dedup = (keyed && opts.policy == PolicyKind::Fair).then(|| DedupState {
        stores: PlatformId::ALL
            .iter()
            .map(|&id| {
                let mut policy = CachePolicy::default().for_platform(id);
                if let Some(ttl_ms) = spec_for(workload, id).search_ttl_ms {
                    policy.search.ttl_ms = ttl_ms;
                }
                MemoryStore::new(id, policy, CacheVersion::current())
            })
            .collect(),
        flights: FlightTable::new(),
        records: BTreeMap::new(),
        call_flight: BTreeMap::new(),
    });
    let fail_rate = PlatformId::ALL
        .iter()
        .enumerate()
        .map(|(i, &id)| {
            let p = u8::try_from(i).expect("seven platforms");
            spec_for(workload, id)
                .fail_rate
                .filter(|&r| r > 0.0)
                .map(|r| (r, sim_rng(opts.seed, Component::Failures(p))))
        })
        .collect();
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
        dedup,
        fail_rate,
        upstream: vec![0; PlatformId::ALL.len()],
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
        // A gate entry of a flight asks the flight's cost, whichever call owns it.
        let requested = self
            .flight_of(call)
            .and_then(|id| self.dedup.as_ref()?.records.get(&id))
            .map_or(c.cost, |r| r.cost);
        CallView {
            session: c.session,
            platform: platform_index(c.platform),
            requested,
            queued_at: c.queued_at,
        }
    }

    /// The flight `call` led or joined, when deduplication runs.
    fn flight_of(&self, call: CallId) -> Option<FlightId> {
        self.dedup.as_ref()?.call_flight.get(&call).copied()
    }

    fn new_call(
        &mut self,
        index: u64,
        session: u32,
        platform: PlatformId,
        cost: Units,
        op: Option<String>,
        key: Option<&str>,
    ) -> CallId {
        let key = key.map(|k| cache_key(platform, op.as_deref(), k));
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
            key,
            served: None,
            paid: false,
            requeued: false,
            agent: None,
        });
        CallId::try_from(self.calls.len() - 1).expect("fewer than 2^32 calls")
    }

    fn run(mut self) -> Result<RunOutcome, Box<Failure>> {
        let w = self.workload;
        for (i, oc) in w.open_calls.iter().enumerate() {
            let call = self.new_call(
                w.open_index(i),
                oc.session,
                oc.platform,
                oc.cost,
                oc.op.clone(),
                oc.key.as_deref(),
            );
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
            if let Some(d) = &self.dedup {
                self.checker.flights.after_event(&d.stores).map_err(|e| self.fail(e))?;
            }
            self.checker.note_precondition(self.now, &self.gates);
        }
        if self.opts.progress {
            eprint!("\r{:60}\r", "");
        }
        self.checker.at_end().map_err(|e| self.fail(e))?;
        self.checker.flights.at_end().map_err(|e| self.fail(e))?;
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
                // The whole round is outstanding before any call is submitted: a call can
                // be answered inside `submit` (a buffer hit, a refusal), and the round
                // ends only when all of its calls are answered.
                self.agents[a as usize].outstanding += step.fan_out;
                for k in 0..step.fan_out as usize {
                    let index = self.next_agent_index;
                    self.next_agent_index += 1;
                    let key = step.keys.get(k).map(String::as_str);
                    let call = self.new_call(index, session, step.platform, step.cost, step.op.clone(), key);
                    self.calls[call as usize].agent = Some(a);
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
                if let Some(id) = self.flight_of(call) {
                    let ok = self
                        .dedup
                        .as_ref()
                        .and_then(|d| d.records.get(&id))
                        .is_some_and(|r| r.ok);
                    return self.finish_flight(id, if ok { FlightEnd::Ok } else { FlightEnd::Failed });
                }
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
                if let Some(id) = self.flight_of(call) {
                    return self.leave_flight(id, call);
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
        if first && self.dedup.is_some() && self.calls[call as usize].key.is_some() {
            return self.submit_keyed(call, true);
        }
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
                    GateEvent::Admitted {
                        call,
                        charged,
                        counted,
                        charge,
                    } => {
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
                        self.send(call, charged, charge, p)?;
                    }
                    GateEvent::Refused { call } => {
                        let v = self.view(call);
                        self.checker.on_leave(call, v);
                        if let Some(id) = self.flight_of(call) {
                            self.finish_flight(id, FlightEnd::Refused)?;
                            continue;
                        }
                        self.calls[call as usize].state = CallState::Refused;
                        self.finish_call(call);
                    }
                    GateEvent::Withdrawn { call } => {
                        let v = self.view(call);
                        self.checker.on_leave(call, v);
                    }
                }
            }
        }
        Ok(())
    }

    fn send(&mut self, call: CallId, charged: Units, charge: Option<Charge>, p: usize) -> Result<(), Box<Failure>> {
        if let Some(id) = self.flight_of(call) {
            return self.send_flight(id, call, charged, charge, p);
        }
        let now = self.now;
        self.upstream[p] += 1;
        let c = &mut self.calls[call as usize];
        c.admitted_at = Some(now);
        c.charged = charged;
        c.paid = true;
        c.state = CallState::Sent;
        let cost = c.cost;
        match self.platforms[p].receive(now, cost) {
            Answer::Ok { latency } => {
                // A failed answer changes nothing for a call without a key: nobody else
                // waits for it and nothing is stored; the draw is made all the same, so
                // the failure stream does not depend on which calls carry keys.
                self.draws_failure(p);
                self.schedule(now + latency, Event::Answer(call));
            }
            Answer::TooMany { refusal, retry_after } => {
                self.platform_refused(call, None, cost, refusal, retry_after, charge);
                // The call is retried: it goes back to the gate, which now waits out the
                // Retry-After before anything else goes to this platform.
                self.submit_again(call)?;
            }
        }
        Ok(())
    }

    /// The platform answered `call` (of `flight`, if deduplicated) with 429: the trace
    /// line, the checker, and the gate's feedback — the Retry-After, and the charge back
    /// to the session that paid, as the server's gate does.
    fn platform_refused(
        &mut self,
        call: CallId,
        flight: Option<FlightId>,
        cost: Units,
        refusal: Refusal,
        retry_after: Duration,
        charge: Option<Charge>,
    ) {
        let now = self.now;
        let p = platform_index(self.calls[call as usize].platform);
        self.calls[call as usize].platform_429s += 1;
        let reason = match refusal {
            Refusal::OverLimit => "over-limit",
            Refusal::Throttled => "throttled",
        };
        let session = self.session_key(call);
        let flight = flight.map_or_else(String::new, |id| format!(" flight={}", id.0));
        self.trace.push(format!(
            "t={now} session={session} platform-429 reason={reason} retry_after={}s cost={}{flight} platform={}",
            retry_after.as_secs(),
            cost.compact(),
            PlatformId::ALL[p],
        ));
        self.checker.on_retry_after(p, now + retry_after);
        self.gates[p].on_retry_after(now, retry_after);
        self.gates[p].refund(now, &session, charge, &mut self.trace);
    }

    fn submit_again(&mut self, call: CallId) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &mut self.calls[call as usize];
        c.queued_at = now;
        c.state = CallState::Waiting;
        c.paid = false;
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
                    upstream: self.upstream[p],
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
            keyed: self.workload.has_keys(),
        }
    }

    /// Whether the platform's answer to the call just accepted fails (`fail_rate`).
    fn draws_failure(&mut self, p: usize) -> bool {
        match &mut self.fail_rate[p] {
            Some((rate, rng)) => rng.random_bool(*rate),
            None => false,
        }
    }

    fn session_key(&self, call: CallId) -> besluitbron_core::SessionKey {
        self.workload.sessions[self.calls[call as usize].session as usize]
            .key
            .clone()
    }

    /// The production path for a call with a key: buffer, flight, gate (fetch.rs). `first`
    /// is false when the call asks once more after a 429 (its give-up time still counts
    /// from the first time).
    fn submit_keyed(&mut self, call: CallId, first: bool) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &mut self.calls[call as usize];
        if first {
            c.submitted_at = now;
        }
        c.queued_at = now;
        c.state = CallState::Waiting;
        c.paid = false;
        let p = platform_index(c.platform);
        let cost = c.cost;
        let key = c.key.clone().expect("submit_keyed is only called for keyed calls");
        if first {
            self.used[p] += 1;
            if let Some(after) = self.workload.sessions[self.calls[call as usize].session as usize].cancel_after {
                self.schedule(now + after, Event::Timeout(call));
            }
        }
        let session = self.session_key(call);
        let d = self.dedup.as_mut().expect("deduplication runs");
        // A buffer that cannot answer (another version, corrupt) is a miss, as in the server.
        if let Ok(Lookup::Hit(value)) = d.stores[p].lookup(&key, wall(now)) {
            let c = &mut self.calls[call as usize];
            c.served = Some(Served::Cached);
            c.state = CallState::Done;
            self.trace.push(format!(
                "t={now} session={session} hit key={} platform={}",
                key_text(&key),
                PlatformId::ALL[p]
            ));
            self.checker
                .flights
                .on_hit(call, &key, value.payload())
                .map_err(|e| self.fail(e))?;
            self.finish_call(call);
            return Ok(());
        }
        let waiter = WaiterId(u64::from(call));
        match d.flights.begin(&key, waiter, &session) {
            Begin::Lead(id) => {
                d.records.insert(
                    id,
                    FlightRecord {
                        platform: p,
                        key: key.clone(),
                        cost,
                        sent: false,
                        ok: false,
                        participants: vec![call],
                    },
                );
                d.call_flight.insert(call, id);
                self.calls[call as usize].served = Some(Served::Fetched);
                self.trace.push(format!(
                    "t={now} session={session} lead flight={} key={} platform={}",
                    id.0,
                    key_text(&key),
                    PlatformId::ALL[p]
                ));
                self.checker.flights.on_begin(id, key, call);
                let v = self.view(call);
                self.checker.on_submit(call, v);
                let ticket = self.gates[p].submit(now, call, &session, cost, &mut self.trace, &mut self.out);
                if let Some(ticket) = ticket {
                    self.dedup
                        .as_mut()
                        .expect("deduplication runs")
                        .flights
                        .queued(id, ticket);
                }
                self.apply_gate_events(p)?;
                self.settle(p)
            }
            Begin::Join { flight, queued } => {
                d.call_flight.insert(call, flight);
                // Present: a flight in the table has its record (both end together).
                d.records
                    .get_mut(&flight)
                    .expect("record of a live flight")
                    .participants
                    .push(call);
                self.calls[call as usize].served = Some(Served::Coalesced);
                self.trace.push(format!(
                    "t={now} session={session} coalesce flight={} queued={} platform={}",
                    flight.0,
                    queued.is_some(),
                    PlatformId::ALL[p]
                ));
                self.checker.flights.on_join(flight, call).map_err(|e| self.fail(e))?;
                if let (Some(ticket), Some(fair)) = (queued, self.gates[p].fair_mut()) {
                    // A full queue: the joiner waits at the flight's current position.
                    if let Ok((entry, new)) = fair.join(now, call, &session, ticket, &mut self.trace) {
                        let d = self.dedup.as_mut().expect("deduplication runs");
                        // As in the server: an entry kept for a waiter that left is
                        // withdrawn once this one stands.
                        let orphan = d.flights.joined_entry(flight, waiter, entry);
                        if new {
                            let v = self.view(call);
                            self.checker.on_submit(call, v);
                        }
                        if let Some(orphan) = orphan {
                            self.withdraw_entry(p, orphan);
                        }
                    }
                    self.settle(p)?;
                }
                Ok(())
            }
        }
    }

    /// The entry owned by `call` was admitted: the flight's one upstream call goes out,
    /// charged to `call`'s session.
    fn send_flight(
        &mut self,
        id: FlightId,
        call: CallId,
        charged: Units,
        charge: Option<Charge>,
        p: usize,
    ) -> Result<(), Box<Failure>> {
        let now = self.now;
        self.upstream[p] += 1;
        let d = self.dedup.as_mut().expect("deduplication runs");
        d.flights.sent(id);
        let rec = d.records.get_mut(&id).expect("record of an admitted flight");
        rec.sent = true;
        let (cost, key) = (rec.cost, rec.key.clone());
        let participants = rec.participants.clone();
        let payer = &mut self.calls[call as usize];
        payer.charged = charged;
        payer.paid = true;
        let payer_session = payer.session;
        for &w in &participants {
            let c = &mut self.calls[w as usize];
            if c.state == CallState::Waiting {
                c.state = CallState::Sent;
                c.admitted_at = Some(now);
            }
        }
        self.checker
            .flights
            .on_sent(id, &key, call, payer_session)
            .map_err(|e| self.fail(e))?;
        match self.platforms[p].receive(now, cost) {
            Answer::Ok { latency } => {
                let ok = !self.draws_failure(p);
                if let Some(rec) = self.dedup.as_mut().and_then(|d| d.records.get_mut(&id)) {
                    rec.ok = ok;
                }
                self.schedule(now + latency, Event::Answer(call));
                Ok(())
            }
            Answer::TooMany { refusal, retry_after } => {
                self.platform_refused(call, Some(id), cost, refusal, retry_after, charge);
                // As in the server: the 429 is the flight's outcome and nothing is stored;
                // a waiter that may still ask once more does (see `finish_flight`).
                self.finish_flight(id, FlightEnd::RateLimited(retry_after))
            }
        }
    }

    /// The flight's outcome is known: store a success, hand the outcome to every waiter.
    fn finish_flight(&mut self, id: FlightId, end: FlightEnd) -> Result<(), Box<Failure>> {
        let now = self.now;
        let d = self.dedup.as_mut().expect("deduplication runs");
        let Some(rec) = d.records.remove(&id) else {
            return Ok(());
        };
        let ok = end == FlightEnd::Ok;
        if ok {
            let payload = format!("flight={}", id.0).into_bytes();
            // The in-memory store fails only for a key of another platform, which
            // `cache_key` never builds.
            d.stores[rec.platform]
                .put(&rec.key, &Success::new(payload), wall(now))
                .expect("the platform's own key");
            self.checker.flights.on_stored(&rec.key, id);
        }
        let mut waiters: Vec<CallId> = d
            .flights
            .finish(id)
            .into_iter()
            .map(|w| CallId::try_from(w.0).expect("waiter ids are call ids"))
            .collect();
        // As the server's tools do: after a 429 at a fair gate, each waiter that has not
        // done so yet asks once more if the Retry-After is short enough; it leaves this
        // flight without its outcome.
        let mut again = Vec::new();
        if let FlightEnd::RateLimited(retry_after) = end
            && retry_after <= MAX_REQUEUE_WAIT
            && self.gates[rec.platform].fair().is_some()
        {
            let (calls, sessions) = (&self.calls, &self.workload.sessions);
            // BesluitBron's own maintenance (the system session) reports the refusal, as
            // the server's status refresh does.
            let (retry, rest): (Vec<CallId>, Vec<CallId>) = waiters.into_iter().partition(|&w| {
                let c = &calls[w as usize];
                !c.requeued && sessions[c.session as usize].key != SessionKey::System
            });
            waiters = rest;
            again = retry;
            for &w in &again {
                self.checker.flights.on_left(id, w);
            }
        }
        for &w in &waiters {
            self.calls[w as usize].state = match end {
                FlightEnd::Ok => CallState::Done,
                FlightEnd::Failed | FlightEnd::RateLimited(_) => CallState::Failed,
                FlightEnd::Refused => CallState::Refused,
            };
        }
        let paid: Vec<(CallId, bool)> = rec
            .participants
            .iter()
            .map(|&c| (c, self.calls[c as usize].paid))
            .collect();
        self.checker
            .flights
            .on_outcome(id, ok, rec.sent, &waiters, &paid)
            .map_err(|e| self.fail(e))?;
        let outcome = match end {
            FlightEnd::Ok => "ok",
            FlightEnd::Failed => "failed",
            FlightEnd::Refused => "refused",
            FlightEnd::RateLimited(_) => "rate-limited",
        };
        let asking_again = if again.is_empty() {
            String::new()
        } else {
            format!(" again={}", again.len())
        };
        self.trace.push(format!(
            "t={now} outcome={outcome} flight={} waiters={}{asking_again} platform={}",
            id.0,
            waiters.len(),
            PlatformId::ALL[rec.platform]
        ));
        for w in waiters {
            self.finish_call(w);
        }
        for w in again {
            self.calls[w as usize].requeued = true;
            self.submit_keyed(w, false)?;
        }
        Ok(())
    }

    /// Withdraws one entry of a queued flight that stands for nobody any more; its
    /// owner's call leaves the checker's mirror of the queue.
    fn withdraw_entry(&mut self, p: usize, entry: Ticket) {
        let now = self.now;
        if let Some(fair) = self.gates[p].fair_mut()
            && let Some(owner) = fair.cancel_entry(now, entry, &mut self.trace)
        {
            let v = self.view(owner);
            self.checker.on_leave(owner, v);
        }
    }

    /// A waiter of a flight that still waits gives up (`cancel_after_ms`).
    fn leave_flight(&mut self, id: FlightId, call: CallId) -> Result<(), Box<Failure>> {
        let now = self.now;
        let p = platform_index(self.calls[call as usize].platform);
        let d = self.dedup.as_mut().expect("deduplication runs");
        let leave = d.flights.leave(id, WaiterId(u64::from(call)));
        self.calls[call as usize].state = CallState::Cancelled;
        self.checker.flights.on_left(id, call);
        match leave {
            Leave::Others {
                cancel_entry: Some(entry),
            } => self.withdraw_entry(p, entry),
            Leave::Withdraw { ticket } => {
                if let (Some(ticket), Some(fair)) = (ticket, self.gates[p].fair_mut()) {
                    for owner in fair.cancel_flight(now, ticket, &mut self.trace) {
                        let v = self.view(owner);
                        self.checker.on_leave(owner, v);
                    }
                }
            }
            Leave::Others { cancel_entry: None } | Leave::Orphaned | Leave::Unknown => {}
        }
        if let Leave::Withdraw { .. } = leave {
            self.dedup.as_mut().expect("deduplication runs").records.remove(&id);
            self.checker.flights.on_withdrawn(id).map_err(|e| self.fail(e))?;
        }
        self.finish_call(call);
        self.settle(p)
    }
}

/// The `q` parameter of a simulated key, for trace lines.
fn key_text(key: &CacheKey) -> &str {
    key.params().get("q").map_or("", String::as_str)
}

fn platform_index(id: PlatformId) -> usize {
    PlatformId::ALL
        .iter()
        .position(|&p| p == id)
        .expect("every platform is in ALL")
}
