//! The event loop over virtual time.
//!
//! Events sit in a [`BinaryHeap`] keyed by (instant, sequence number): the sequence
//! number is assigned when an event is scheduled, so events at the same instant run in
//! the order they were scheduled and a run never depends on heap internals. After every
//! event the [`Checker`] runs; the first broken invariant ends the run with a
//! [`Failure`].
//!
//! **The fair policy is the server's own path.** Every call goes through the core's
//! [`PlatformPath`] — the very type the server's platform tasks drive: buffer,
//! in-flight coalescing, the fair queue, retries, the 429 requeue and refunds — inside
//! the core's [`Shell`], as in the server (one process: no lease). This module only does
//! the I/O and keeps time: it turns [`Action::Send`] into a call to a simulated platform,
//! feeds the outcome back with [`Shell::on_outcome`], hands deliveries to calls, and
//! wakes the path at [`Shell::poll_timeout`]. What the path decided — who paid for an
//! attempt, a refund after a 429, who waits once more — it reads from the path's
//! [`PathEvent`]s, never derives again. A call without a key is a distinct request: it gets a
//! key of its own (`q=#<index>`), so it never coalesces and is never answered from the
//! buffer. The legacy policy (≤ 1.4.5) is a model of the old version and lives in
//! [`crate::policy`].
//!
//! Invariants: virtual time never goes backwards; every loop is bounded by the events
//! in the heap, and every event either finishes a call or schedules strictly later work
//! (a path or gate is never re-woken at the instant it was just polled without progress).
//!
//! What this module does not do: read the wall clock or any ambient randomness, or
//! decide anything the server's path decides.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, CachePolicy, CacheVersion, DataClass, MemoryStore};
use besluitbron_core::dedup::{FlightId, WaiterId};
use besluitbron_core::path::{
    Action, Arrival, Attempt, Delivery, Failure as PathFailure, Feedback, Keep, Lane, LaneConfig, Outcome, OutcomeKind,
    PathConfig, PathEvent, PathStats, PendingSend, PlatformPath, Request, RetryPolicy, Shell, StoreBuffer,
};
use besluitbron_core::scheduler::{AdmitRule, MAX_REQUEUE_WAIT, queued_again};
use besluitbron_core::{
    Instant, LimitConfig, PlatformId, SchedulerConfig, SchedulerEvent, SessionKey, Units, WallTime,
};
use rand::RngExt;

pub use besluitbron_core::path::Served;

use crate::check::{CallView, Checker};
use crate::platform::{Answer, PlatformCounters, Refusal, SimPlatform};
use crate::policy::{CallId, Gate, GateEvent, LegacyGate, OpenGate, PolicyKind};
use crate::rng::{Component, SimRng, sim_rng};
use crate::scenario::{
    AttemptOutcome, FollowUp, LatencySpec, LimitModel, PlatformSpec, RecordedAttempt, SessionPlan, Workload,
};
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
    /// How it was answered, under the fair policy.
    pub served: Option<Served>,
    /// Its session was charged `charged` for the call that went (for a flight: the one
    /// entry that went, whichever call of the payer's session it belonged to).
    pub paid: bool,
    /// It waited once more after its flight was refused with 429 (it does so only once).
    pub requeued: bool,
    agent: Option<u32>,
    /// The call its session makes when this one is answered.
    then: Option<FollowUp>,
    /// When after its arrival the call leaves if it still waits (a recorded call whose
    /// caller gave up).
    leave_after: Option<Duration>,
}

/// One platform's results.
#[derive(Clone, Debug)]
pub struct PlatformOutcome {
    /// Which platform.
    pub id: PlatformId,
    /// Which of its limits: `None` for its main one, `Some("text")` for its text host's.
    pub lane: Option<&'static str>,
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
    /// The path's counters (fair policy).
    pub path: Option<PathStats>,
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
    /// Platforms (and text hosts, after all platforms) that received calls, in
    /// [`PlatformId::ALL`] order.
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
    /// Every admission under the fair policy, in order: (platform, session, call index,
    /// instant). The server's shell gives the same list for the same workload (the
    /// differential test).
    pub admissions: Vec<AdmissionLine>,
}

/// One admission of a fair run: what the differential test compares with the server.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct AdmissionLine {
    /// When, in milliseconds.
    pub at_ms: u64,
    /// The platform.
    pub platform: PlatformId,
    /// The session charged.
    pub session: String,
    /// What went out: the call's key text (`q`).
    pub call: String,
    /// The rule that admitted it: whether the call went at once or from the queue.
    pub rule: AdmitRule,
}

impl fmt::Display for AdmissionLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t={}ms platform={} session={} call={} rule={}",
            self.at_ms,
            self.platform,
            self.session,
            self.call,
            self.rule.as_str()
        )
    }
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

/// What a simulated platform answered, as the path's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimError {
    /// 429.
    RateLimited,
    /// A failed answer (a 5xx).
    Failed,
}

/// A platform's path and the shell's part around it: waiters are calls (their id is the
/// waiter id), a flight's data is the call that led it.
type SimShell = Shell<StoreBuffer<MemoryStore>, SimError, (), CallId>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Arrive(CallId),
    AgentRound(u32),
    Wake(u8),
    /// A platform's answer to an attempt arrives (`ok`: not a failure), with the
    /// platform's `RateLimit-*` report if it sends one.
    Answer {
        platform: u8,
        attempt: Attempt,
        ok: bool,
        /// A failure (`ok` false) worth another attempt.
        retryable: bool,
        remaining: Option<(Units, Duration)>,
    },
    /// A recorded 429 arrives, its recorded latency after the attempt went.
    Refused {
        platform: u8,
        station: u8,
        attempt: Attempt,
        retry_after: Duration,
    },
    /// The legacy model's answer to a call.
    LegacyAnswer(CallId),
    Timeout(CallId),
}

#[derive(Clone, Copy, Debug)]
struct AgentState {
    next_step: usize,
    outstanding: u32,
}

/// The buffer's clock: virtual milliseconds.
fn wall(now: Instant) -> WallTime {
    WallTime(now.as_millis())
}

/// The buffer key of a call: (platform, search, operation, q = key), public scope.
pub fn cache_key(platform: PlatformId, op: Option<&str>, key: &str) -> CacheKey {
    CacheKey::new(platform, DataClass::Search, op.unwrap_or("search")).param("q", key)
}

/// The fair policy's state: one path per platform in the core's shell, which keeps which
/// calls wait for which flight.
struct FairState {
    shells: Vec<SimShell>,
    /// Attempts out at a platform: what they ask.
    out: BTreeMap<(usize, Attempt), CacheKey>,
    /// Each session's index, by key.
    session_index: BTreeMap<SessionKey, u32>,
    admissions: Vec<AdmissionLine>,
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
    /// The legacy policy's gates (`None` under the fair policy).
    gates: Vec<Gate>,
    fair: Option<FairState>,
    /// Per station: a platform's main limit (stations 0..9, in [`PlatformId::ALL`]
    /// order) or its text host's (after them); `local_limits`, `platforms`, `used`,
    /// `upstream`, `fail_rate`, `fail_retryable`, the gates, the wakes of the legacy
    /// gates and the checker's state are per station, the fair paths per platform.
    stations: Vec<Station>,
    /// The text station of each platform, if it has one.
    text_station: Vec<Option<usize>>,
    local_limits: Vec<Option<LimitConfig>>,
    wake_at: Vec<Option<Instant>>,
    platforms: Vec<SimPlatform>,
    used: Vec<u64>,
    checker: Checker,
    trace: Trace,
    out: Vec<GateEvent>,
    events: u64,
    fail_rate: Vec<Option<(f64, SimRng)>>,
    fail_retryable: Vec<bool>,
    upstream: Vec<u64>,
    /// A recorded trace's answers: which recorded flight each replayed flight (or legacy
    /// call) takes its attempts from, and how many flights of each key have begun.
    /// Keyed by platform too: each platform's path numbers its flights on its own.
    replay_slot: BTreeMap<(PlatformId, u64), Option<usize>>,
    replay_next: BTreeMap<(PlatformId, String, String), usize>,
}

/// One limit a call can be counted against: a platform's main one, or its text host's.
#[derive(Clone, Copy, Debug)]
struct Station {
    /// The platform's index in [`PlatformId::ALL`].
    platform: usize,
    /// The path's lane.
    lane: Lane,
}

/// The lane of text fetches, where a platform's text host keeps a limit of its own (as
/// the server's `TEXT_LANE`).
pub const TEXT_LANE: Lane = Lane(1);

/// The operation label of a text fetch (`op = "text"` in scenarios and traces).
pub const TEXT_OP: &str = "text";

/// The platform settings for `id`: the workload's, or the documented defaults.
fn spec_for(workload: &Workload, id: PlatformId) -> PlatformSpec {
    workload
        .platforms
        .iter()
        .find(|p| p.id == id)
        .cloned()
        .unwrap_or_else(|| PlatformSpec::default_for(id))
}

/// What platform `id` is in a run of `workload`: its spec's limits, else its defaults.
#[derive(Clone, Copy, Debug)]
pub struct Enforced {
    /// The limit it enforces (`None`: it keeps none).
    pub limit: Option<LimitConfig>,
    /// Its text host's, when it has one of its own (calls with `op = "text"` go there).
    pub text: Option<LimitConfig>,
    /// The latency model it answers with.
    pub latency: LatencySpec,
}

/// See [`Enforced`].
pub fn enforced(workload: &Workload, id: PlatformId) -> Enforced {
    let spec = spec_for(workload, id);
    Enforced {
        limit: limit_of(spec.capacity, spec.window_s, id.default_limit()),
        text: limit_of(spec.text_capacity, spec.text_window_s, id.default_text_limit()),
        latency: spec.latency,
    }
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

/// The path a fair run drives for `id`: the scenario's limit, bounds and buffer
/// lifetimes, the server's retry policy and requeue rule, events recorded for the trace.
fn path_for(
    workload: &Workload,
    id: PlatformId,
    local: Option<LimitConfig>,
    text: Option<LimitConfig>,
) -> Result<SimShell, String> {
    let spec = spec_for(workload, id);
    let scheduler_of = |limit: LimitConfig| {
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
        config
    };
    let mut lanes = vec![LaneConfig {
        name: "main",
        scheduler: local.map(scheduler_of),
        max_in_flight: None,
    }];
    if let Some(text) = text {
        lanes.push(LaneConfig {
            name: "text",
            scheduler: Some(scheduler_of(text)),
            max_in_flight: None,
        });
    }
    let mut policy = CachePolicy::default().for_platform(id);
    if let Some(ttl_ms) = spec.search_ttl_ms {
        policy.search.ttl_ms = ttl_ms;
    }
    let buffer = StoreBuffer::new(MemoryStore::new(id, policy, CacheVersion::current()));
    let config = PathConfig {
        platform: id,
        lanes,
        retry: RetryPolicy::default(),
        requeue_wait_max: MAX_REQUEUE_WAIT,
        record_events: true,
    };
    let path = PlatformPath::new(config, buffer).map_err(|e| format!("platform {id}: {e}"))?;
    // One process: no lease, so no attempt is ever dropped. The invariants are checked
    // after every step, as the checker runs after every event.
    Ok(Shell::new(path, |_| SimError::Failed).with_check_every(1))
}

/// Runs `workload` under `opts`; `name` names it in reports and failures.
pub fn run(name: &str, workload: &Workload, opts: RunOptions) -> Result<RunOutcome, Box<Failure>> {
    let failure = |what: String| {
        Box::new(Failure {
            name: name.to_owned(),
            policy: opts.policy,
            seed: opts.seed,
            at: Instant::ZERO,
            what,
            recent: Vec::new(),
        })
    };
    let mut gates = Vec::new();
    let mut paths = Vec::new();
    let mut platforms = Vec::new();
    let mut local_limits = Vec::new();
    let mut stations: Vec<Station> = (0..PlatformId::ALL.len())
        .map(|platform| Station {
            platform,
            lane: Lane::MAIN,
        })
        .collect();
    let mut text_station = vec![None; PlatformId::ALL.len()];
    let mut text_limits = Vec::new();
    for (i, &id) in PlatformId::ALL.iter().enumerate() {
        if let Some(limit) = enforced(workload, id).text {
            text_station[i] = Some(stations.len());
            stations.push(Station {
                platform: i,
                lane: TEXT_LANE,
            });
            text_limits.push(limit);
        }
    }
    for (i, &id) in PlatformId::ALL.iter().enumerate() {
        let spec = spec_for(workload, id);
        let limit = enforced(workload, id).limit;
        let local = limit_of(
            spec.local_capacity.or(limit.map(|l| l.capacity)),
            spec.local_window_s.or(limit.map(|l| l.window.as_secs_f64())),
            limit,
        );
        // A recorded trace: the bucket the server kept, its margin held back.
        let margin = workload.recorded.as_ref().map_or(Duration::ZERO, |r| r.margin);
        let local = local.map(|l| l.with_margin(margin));
        local_limits.push(local);
        let p = u8::try_from(i).expect("nine platforms");
        platforms.push(
            SimPlatform::new(
                id,
                limit,
                spec.model,
                spec.latency,
                spec.throttle.clone(),
                sim_rng(opts.seed, Component::Latency(p)),
            )
            .with_rate_limit_headers(spec.rate_limit_headers.unwrap_or(SimPlatform::states_its_budget(id))),
        );
        let text = text_station[i].map(|s| text_limits[s - PlatformId::ALL.len()].with_margin(margin));
        match opts.policy {
            PolicyKind::Fair => paths.push(path_for(workload, id, local, text).map_err(failure)?),
            PolicyKind::Legacy => gates.push(match local {
                None => Gate::Open(OpenGate::new(id)),
                Some(limit) => Gate::Legacy(Box::new(LegacyGate::new(
                    id,
                    limit,
                    workload.legacy_slip_probability,
                    sim_rng(opts.seed, Component::Faults(p)),
                ))),
            }),
        }
    }
    // The text hosts: their own bucket at the platform and, locally, their own lane (the
    // legacy model: a gate of its own). No throttling, failures or rate-limit headers.
    for (k, station) in stations.iter().enumerate().skip(PlatformId::ALL.len()) {
        let id = PlatformId::ALL[station.platform];
        let spec = spec_for(workload, id);
        let limit = text_limits[k - PlatformId::ALL.len()];
        let s = u8::try_from(k).expect("fewer than 256 stations");
        local_limits.push(Some(limit));
        platforms.push(SimPlatform::new(
            id,
            Some(limit),
            spec.model,
            spec.latency,
            Vec::new(),
            sim_rng(opts.seed, Component::Latency(s)),
        ));
        if opts.policy == PolicyKind::Legacy {
            gates.push(Gate::Legacy(Box::new(LegacyGate::new(
                id,
                limit,
                workload.legacy_slip_probability,
                sim_rng(opts.seed, Component::Faults(s)),
            ))));
        }
    }
    let n = stations.len();
    let fair = (opts.policy == PolicyKind::Fair).then(|| FairState {
        shells: paths,
        out: BTreeMap::new(),
        session_index: workload
            .sessions
            .iter()
            .enumerate()
            .map(|(i, s)| (s.key.clone(), u32::try_from(i).expect("fewer than 2^32 sessions")))
            .collect(),
        admissions: Vec::new(),
    });
    let mut fail_rate: Vec<Option<(f64, SimRng)>> = PlatformId::ALL
        .iter()
        .enumerate()
        .map(|(i, &id)| {
            let p = u8::try_from(i).expect("nine platforms");
            spec_for(workload, id)
                .fail_rate
                .filter(|&r| r > 0.0)
                .map(|r| (r, sim_rng(opts.seed, Component::Failures(p))))
        })
        .collect();
    fail_rate.resize_with(n, || None);
    let mut fail_retryable: Vec<bool> = PlatformId::ALL
        .iter()
        .map(|&id| spec_for(workload, id).fail_retryable.unwrap_or(true))
        .collect();
    fail_retryable.resize(n, true);
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
        fair,
        stations: stations.clone(),
        text_station,
        local_limits,
        wake_at: vec![None; n],
        platforms,
        used: vec![0; n],
        checker: Checker::new(opts.policy, stations.iter().map(|s| station_name(*s)).collect()),
        trace: Trace::new(opts.keep_trace),
        out: Vec::new(),
        events: 0,
        fail_rate,
        fail_retryable,
        upstream: vec![0; n],
        replay_slot: BTreeMap::new(),
        replay_next: BTreeMap::new(),
    };
    engine.run()
}

/// A station's name in traces and failures: the platform, or `ob/text`.
fn station_name(s: Station) -> String {
    let id = PlatformId::ALL[s.platform];
    if s.lane == Lane::MAIN {
        id.to_string()
    } else {
        format!("{id}/text")
    }
}

impl Engine<'_> {
    fn schedule(&mut self, at: Instant, event: Event) {
        debug_assert!(at >= self.now, "events are never scheduled in the past");
        self.heap.push(Reverse((at, self.seq, event)));
        self.seq += 1;
    }

    /// The station a call is counted at: its platform's text host for a text fetch
    /// where the platform has one, else the platform.
    fn station_of(&self, call: CallId) -> usize {
        let c = &self.calls[call as usize];
        let p = platform_index(c.platform);
        match (c.op.as_deref(), self.text_station[p]) {
            (Some(TEXT_OP), Some(s)) => s,
            _ => p,
        }
    }

    /// The station of lane `lane` at platform `p`.
    fn station(&self, p: usize, lane: Lane) -> usize {
        if lane == Lane::MAIN {
            p
        } else {
            self.text_station[p].unwrap_or(p)
        }
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
            then: None,
            leave_after: None,
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
            self.calls[call as usize].then = oc.then.clone();
            self.calls[call as usize].leave_after = oc.leave_after;
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
            // A run that keeps going long after its calls is a bug (a call asked again
            // forever): fail it rather than hang. Runs take a few events per call.
            let bound = 1_000 * (self.calls.len() as u64 + 1) + 1_000_000;
            if self.events > bound {
                return Err(self.fail(format!(
                    "the run does not end: {} events for {} calls",
                    self.events,
                    self.calls.len()
                )));
            }
            if self.opts.progress && self.events.is_multiple_of(1 << 16) {
                eprint!("\rsimulated {} ({} events)", self.now, self.events);
            }
            self.note_precondition();
            self.handle(event)?;
            self.after_event()?;
            self.note_precondition();
        }
        if self.opts.progress {
            eprint!("\r{:60}\r", "");
        }
        self.checker.at_end().map_err(|e| self.fail(e))?;
        self.checker.flights.at_end().map_err(|e| self.fail(e))?;
        if let Some(fair) = &self.fair {
            for path in fair.shells.iter().map(Shell::path) {
                if path.in_flight() > 0 || path.waiting() > 0 {
                    return Err(self.fail(format!(
                        "{}: {} flights and {} requests are left at the end",
                        path.platform(),
                        path.in_flight(),
                        path.waiting()
                    )));
                }
            }
        }
        Ok(self.finish())
    }

    fn note_precondition(&mut self) {
        let now = self.now;
        self.checker.note_precondition(now, &self.local_limits);
    }

    fn after_event(&mut self) -> Result<(), Box<Failure>> {
        let over_limit: u64 = self.platforms.iter().map(|p| p.counters.over_limit).sum();
        let now = self.now;
        let verdict = match &self.fair {
            Some(fair) => {
                // The paths' own invariants: each shell checks them after every step.
                let schedulers: Vec<_> = self
                    .stations
                    .iter()
                    .map(|s| fair.shells[s.platform].path().scheduler(s.lane))
                    .collect();
                self.checker.after_event(now, &schedulers, over_limit).and_then(|()| {
                    let used = |p: usize| self.used[p] + self.text_station[p].map_or(0, |s| self.used[s]);
                    let stores: Vec<Option<&MemoryStore>> = fair
                        .shells
                        .iter()
                        .enumerate()
                        .map(|(p, shell)| (used(p) > 0).then(|| shell.path().buffer().store()))
                        .collect();
                    self.checker.flights.after_event(&stores)
                })
            }
            None => self.checker.after_event(now, &[], over_limit),
        };
        verdict.map_err(|e| self.fail(e))
    }

    fn handle(&mut self, event: Event) -> Result<(), Box<Failure>> {
        match event {
            Event::Arrive(call) => self.submit(call),
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
                    self.submit(call)?;
                }
                Ok(())
            }
            Event::Wake(p) => {
                if self.wake_at[p as usize] == Some(self.now) {
                    self.wake_at[p as usize] = None;
                    // A platform's path (fair), or a station's gate (legacy).
                    let p = usize::from(p);
                    if let Some(fair) = self.fair.as_mut() {
                        fair.shells[p].handle_timeout(self.now);
                        self.settle(p)?;
                    } else {
                        self.settle_legacy(p)?;
                    }
                }
                Ok(())
            }
            Event::Answer {
                platform,
                attempt,
                ok,
                retryable,
                remaining,
            } => {
                let p = usize::from(platform);
                let key = self.fair.as_mut().and_then(|f| f.out.remove(&(p, attempt)));
                // A distinct call (no key of its own in the workload) is never asked again:
                // its answer is not kept, so the buffer holds only what can be asked twice.
                let distinct = key.as_ref().is_none_or(|k| key_text(k).starts_with('#'));
                let payload: Arc<[u8]> = Arc::from(format!("flight={}", attempt.flight.0).into_bytes());
                let outcome = if ok {
                    Outcome::Success {
                        payload,
                        feedback: Feedback {
                            remaining: remaining.map(|(units, _)| units),
                            reset: remaining.map(|(_, reset)| reset),
                            keep: if distinct { Keep::Never } else { Keep::Normal },
                            revalidated: false,
                        },
                    }
                } else if retryable {
                    Outcome::Retryable {
                        error: SimError::Failed,
                        retry_after: None,
                    }
                } else {
                    Outcome::Failed {
                        error: SimError::Failed,
                    }
                };
                if let (true, false, Some(key)) = (ok, distinct, &key) {
                    self.checker.flights.on_stored(key, attempt.flight, p);
                }
                if let Some(key) = &key {
                    self.checker.flights.on_answered(key);
                }
                let (now, wall) = (self.now, wall(self.now));
                if let Some(fair) = self.fair.as_mut() {
                    fair.shells[p].on_outcome(now, wall, attempt, outcome);
                }
                self.settle(p)
            }
            Event::Refused {
                platform,
                station,
                attempt,
                retry_after,
            } => {
                let p = usize::from(platform);
                let key = self.fair.as_mut().and_then(|f| f.out.remove(&(p, attempt)));
                if let Some(key) = key {
                    self.refusal_arrives(p, usize::from(station), attempt, &key, retry_after);
                }
                self.settle(p)
            }
            Event::LegacyAnswer(call) => {
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
                let c = &self.calls[call as usize];
                // A recorded caller left when the recording says, whatever its flight was
                // doing (out at the platform, or in a retry's backoff: the server's path
                // then withdraws the flight); a scenario's `cancel_after` gives up waiting
                // in the queue only.
                let recorded_leave = c.leave_after.is_some() && c.state == CallState::Sent && self.fair.is_some();
                if c.state != CallState::Waiting && !recorded_leave {
                    return Ok(());
                }
                let p = platform_index(self.calls[call as usize].platform);
                let now = self.now;
                if let Some(fair) = self.fair.as_mut() {
                    fair.shells[p].leave(now, WaiterId(u64::from(call)));
                    self.calls[call as usize].state = CallState::Cancelled;
                    self.checker.flights.on_left(call);
                    self.finish_call(call);
                    return self.settle(p);
                }
                let s = self.station_of(call);
                if self.gates[s].cancel(now, call, &mut self.trace) {
                    self.calls[call as usize].state = CallState::Cancelled;
                    let v = self.view(call);
                    self.checker.on_leave(call, v);
                    self.finish_call(call);
                    self.settle_legacy(s)?;
                }
                Ok(())
            }
        }
    }

    /// A call arrives.
    fn submit(&mut self, call: CallId) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &mut self.calls[call as usize];
        c.submitted_at = now;
        c.queued_at = now;
        c.state = CallState::Waiting;
        let p = platform_index(c.platform);
        let session = c.session;
        let leave_after = c.leave_after;
        let s = self.station_of(call);
        self.used[s] += 1;
        let leave = [leave_after, self.workload.sessions[session as usize].cancel_after];
        if let Some(after) = leave.into_iter().flatten().min() {
            self.schedule(now + after, Event::Timeout(call));
        }
        if self.fair.is_some() {
            return self.submit_fair(call, p);
        }
        let c = &self.calls[call as usize];
        let cost = c.cost;
        let v = self.view(call);
        self.checker.on_submit(call, v);
        let key = &self.workload.sessions[session as usize].key;
        self.gates[s].submit(now, call, key, cost, &mut self.trace, &mut self.out);
        self.apply_gate_events(s)?;
        self.settle_legacy(s)
    }

    /// The fair policy: the call goes through its platform's path, as in the server.
    fn submit_fair(&mut self, call: CallId, p: usize) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &self.calls[call as usize];
        // A call without a key is a distinct request, asked under a key of its own.
        let key = c
            .key
            .clone()
            .unwrap_or_else(|| cache_key(c.platform, c.op.as_deref(), &format!("#{}", c.index)));
        let request = Request {
            waiter: WaiterId(u64::from(call)),
            key: key.clone(),
            session: self.workload.sessions[c.session as usize].key.clone(),
            cost: c.cost,
            lane: self.stations[self.station_of(call)].lane,
        };
        let fair = self.fair.as_mut().expect("the fair policy");
        // One process: no lease, so every request enters.
        let Ok(arrival) = fair.shells[p].request(now, wall(now), None, request, (), call) else {
            return Err(self.fail(format!("{}: a request was refused without a lease", PlatformId::ALL[p])));
        };
        match arrival {
            Arrival::Cached(payload) => {
                let c = &mut self.calls[call as usize];
                c.served = Some(Served::Cached);
                c.state = CallState::Done;
                self.checker
                    .flights
                    .on_hit(call, &key, &payload)
                    .map_err(|e| self.fail(e))?;
                self.drain_events(p)?;
                self.finish_call(call);
            }
            Arrival::Waiting { led, .. } => {
                self.calls[call as usize].served = Some(if led { Served::Fetched } else { Served::Coalesced });
                self.checker.flights.on_wait(call);
            }
            Arrival::Refused { .. } => {
                self.calls[call as usize].state = CallState::Refused;
                self.drain_events(p)?;
                self.finish_call(call);
            }
        }
        self.settle(p)
    }

    /// Takes path `p`'s actions and events until it has none, then schedules its wake.
    fn settle(&mut self, p: usize) -> Result<(), Box<Failure>> {
        // Bounded: each pass sends, delivers or ends at least one flight's step, and a call
        // can only come back (after a 429 or a failure) behind a later instant.
        loop {
            self.drain_events(p)?;
            let Some(action) = self.fair.as_mut().and_then(|f| f.shells[p].poll_action()) else {
                break;
            };
            match action {
                Action::Send(pending) => self.send(p, pending)?,
                Action::Deliver { waiter, delivery, .. } => self.deliver(waiter, delivery)?,
                Action::Moved { waiter, .. } => {
                    return Err(self.fail(format!(
                        "{}: waiter {waiter:?} moved without a lease",
                        PlatformId::ALL[p]
                    )));
                }
                Action::InvariantBroken { what, .. } => {
                    return Err(self.fail(format!("{}: {what}", PlatformId::ALL[p])));
                }
            }
        }
        let next = self.fair.as_ref().and_then(|f| f.shells[p].poll_timeout(self.now));
        self.set_wake(p, next)
    }

    fn set_wake(&mut self, p: usize, next: Option<Instant>) -> Result<(), Box<Failure>> {
        if next != self.wake_at[p] {
            if let Some(at) = next {
                if at <= self.now {
                    return Err(self.fail(format!(
                        "{}: asked to be woken at {at} but nothing went at {}",
                        station_name(self.stations[p]),
                        self.now
                    )));
                }
                self.schedule(at, Event::Wake(p as u8));
            }
            self.wake_at[p] = next;
        }
        Ok(())
    }

    /// The first call of `session` still waiting for `flight` of path `p`: the one marked
    /// as having paid for the flight's attempt (or as refunded).
    fn payer(&self, p: usize, flight: FlightId, session: &SessionKey) -> Option<CallId> {
        let fair = self.fair.as_ref()?;
        let s = fair.session_index.get(session).copied()?;
        fair.shells[p]
            .waiters_of(flight)
            .map(|(w, ())| CallId::try_from(w.0).expect("waiter ids are call ids"))
            .find(|&c| self.calls[c as usize].session == s)
    }

    /// An attempt goes out to the simulated platform. Who pays for it, a refund and a
    /// requeue are the path's decisions, read from its events (`drain_events`).
    fn send(&mut self, p: usize, pending: PendingSend<Arc<[u8]>, CallId>) -> Result<(), Box<Failure>> {
        let now = self.now;
        let fair = self.fair.as_mut().expect("the fair policy");
        let Some(out) = fair.shells[p].confirm_send(now, wall(now), None, pending) else {
            return Err(self.fail(format!(
                "{}: an attempt was dropped without a lease",
                PlatformId::ALL[p]
            )));
        };
        let (attempt, key, admission) = (out.attempt, out.key, out.admission);
        // Where the attempt is counted: the flight's calls all ask one key, so one station,
        // the leading call's.
        let leader = out.flight;
        let station = self.station_of(leader);
        self.upstream[station] += 1;
        let cost = admission.as_ref().map_or(self.calls[leader as usize].cost, |a| a.cost);
        if let (Some(a), Some(fair)) = (&admission, self.fair.as_mut()) {
            fair.admissions.push(AdmissionLine {
                at_ms: now.as_millis(),
                platform: PlatformId::ALL[p],
                session: a.session.to_string(),
                call: key.params().get("q").cloned().unwrap_or_default(),
                rule: a.rule,
            });
        }
        self.checker
            .flights
            .on_sent(&key, attempt, p)
            .map_err(|e| self.fail(e))?;
        let recorded = self.recorded_attempt(&key, attempt.flight.0, attempt.number);
        let answer = match &recorded {
            Some(r) => self.platforms[station].receive_recorded(now, cost, r),
            None => self.platforms[station].receive(now, cost),
        };
        match answer {
            Answer::Ok { latency, remaining } => {
                let (ok, retryable) = match recorded {
                    Some(r) => (r.outcome == AttemptOutcome::Ok, r.outcome != AttemptOutcome::Failed),
                    None => (!self.draws_failure(station), self.fail_retryable[station]),
                };
                if let Some(fair) = self.fair.as_mut() {
                    fair.out.insert((p, attempt), key);
                }
                self.schedule(
                    now + latency,
                    Event::Answer {
                        platform: p as u8,
                        attempt,
                        ok,
                        retryable,
                        remaining,
                    },
                );
            }
            Answer::TooMany { refusal, retry_after } => {
                let session = admission.as_ref().map(|a| a.session.clone());
                let payer = match &session {
                    Some(s) => self.payer(p, attempt.flight, s),
                    None => Some(leader),
                };
                if let Some(payer) = payer {
                    self.calls[payer as usize].platform_429s += 1;
                }
                let reason = match refusal {
                    Refusal::OverLimit => "over-limit",
                    Refusal::Throttled => "throttled",
                };
                let session = session.map_or_else(|| "-".to_owned(), |s| s.to_string());
                self.trace.push(format!(
                    "t={now} session={session} platform-429 reason={reason} retry_after={}s cost={} flight={} \
                     platform={}",
                    retry_after.as_secs(),
                    cost.compact(),
                    attempt.flight.0,
                    station_name(self.stations[station]),
                ));
                // A recorded refusal comes back after its recorded latency, as it did.
                let latency = recorded
                    .filter(|r| r.outcome == AttemptOutcome::RateLimited)
                    .map_or(0, |r| r.latency_ms);
                if latency > 0 {
                    let fair = self.fair.as_mut().expect("the fair policy");
                    fair.out.insert((p, attempt), key);
                    self.schedule(
                        now + Duration::from_millis(latency),
                        Event::Refused {
                            platform: p as u8,
                            station: station as u8,
                            attempt,
                            retry_after,
                        },
                    );
                } else {
                    self.refusal_arrives(p, station, attempt, &key, retry_after);
                }
            }
        }
        Ok(())
    }

    /// A 429 reaches the path: nothing goes to the station before its Retry-After.
    fn refusal_arrives(&mut self, p: usize, station: usize, attempt: Attempt, key: &CacheKey, retry_after: Duration) {
        let now = self.now;
        self.checker.on_retry_after(station, now + retry_after);
        self.checker.flights.on_answered(key);
        let outcome = Outcome::RateLimited {
            retry_after,
            error: SimError::RateLimited,
        };
        let fair = self.fair.as_mut().expect("the fair policy");
        fair.shells[p].on_outcome(now, wall(now), attempt, outcome);
    }

    /// The recorded answer to attempt `number` of replayed flight `token` (a flight id, or
    /// a legacy call's id above 2^63) asking `key`: the k-th flight of the key in the
    /// replay takes the k-th recorded flight's attempts (none when the recording had
    /// fewer: the latency model answers); an attempt beyond the recorded ones is
    /// answered as the flight's last was.
    fn recorded_attempt(&mut self, key: &CacheKey, token: u64, number: u32) -> Option<RecordedAttempt> {
        let flights = self.workload.recorded.as_ref().map(|r| &r.flights)?;
        let id = (key.platform(), key.operation().to_owned(), key_text(key).to_owned());
        let recorded = flights.get(&id)?;
        // A flight's first attempt takes the key's next recorded flight, its later attempts
        // the same one. Each platform's path numbers its flights on its own, so the slot is
        // kept per platform and number, and taken afresh by every first attempt.
        let slot = if number <= 1 {
            let next = self.replay_next.entry(id).or_insert(0);
            *next += 1;
            let slot = (*next - 1 < recorded.len()).then_some(*next - 1);
            self.replay_slot.insert((key.platform(), token), slot);
            slot
        } else {
            self.replay_slot.get(&(key.platform(), token)).copied().flatten()
        };
        let attempts = &recorded[slot?];
        let i = usize::try_from(number.saturating_sub(1)).unwrap_or(usize::MAX);
        attempts.get(i).or_else(|| attempts.last()).copied()
    }

    /// A call gets its answer (or its failure) from the path.
    fn deliver(&mut self, waiter: WaiterId, delivery: Delivery<Arc<[u8]>, SimError>) -> Result<(), Box<Failure>> {
        let call = CallId::try_from(waiter.0).expect("waiter ids are call ids");
        let c = &mut self.calls[call as usize];
        match delivery {
            Delivery::Answer { served, .. } => {
                c.state = CallState::Done;
                if served == Served::Stale {
                    c.served = Some(Served::Stale);
                }
            }
            Delivery::Failed(PathFailure::Platform(_)) => c.state = CallState::Failed,
            Delivery::Failed(PathFailure::QueueFull { .. }) => c.state = CallState::Refused,
        }
        self.checker.flights.on_delivered(call).map_err(|e| self.fail(e))?;
        self.finish_call(call);
        Ok(())
    }

    /// Turns path `p`'s recorded decisions into trace lines, checker notes and the calls'
    /// records: who paid for an attempt (the session of `PathEvent::Send`), whose charge
    /// came back (`PathEvent::Refund`), who waits once more after a 429
    /// (`PathEvent::Outcome`'s `again`).
    fn drain_events(&mut self, p: usize) -> Result<(), Box<Failure>> {
        let platform = PlatformId::ALL[p];
        let mut failure: Option<String> = None;
        while let Some(event) = self.fair.as_mut().and_then(|f| f.shells[p].poll_event()) {
            self.record(p, &event);
            let fair = self.fair.as_ref().expect("events come from the fair policy's paths");
            // The call that led a flight: its data in the shell while the flight is under way.
            let leader = |flight: FlightId| fair.shells[p].flight(flight).copied();
            let keyed_flight =
                |calls: &[CallRecord], flight: FlightId| leader(flight).is_none_or(|c| calls[c as usize].key.is_some());
            let line = match &event {
                PathEvent::Hit { at, session, key } => Some(format!(
                    "t={at} session={session} hit key={} platform={platform}",
                    key_text(key)
                )),
                PathEvent::Lead {
                    at,
                    session,
                    flight,
                    key,
                } => (!key_text(key).starts_with('#')).then(|| {
                    format!(
                        "t={at} session={session} lead flight={} key={} platform={platform}",
                        flight.0,
                        key_text(key)
                    )
                }),
                PathEvent::Coalesce {
                    at,
                    session,
                    flight,
                    queued,
                } => Some(format!(
                    "t={at} session={session} coalesce flight={} queued={queued} platform={platform}",
                    flight.0
                )),
                PathEvent::Queue {
                    lane,
                    at,
                    session,
                    entry,
                    call,
                    joined,
                    cost,
                } => {
                    let station = self.station(p, *lane);
                    let platform = station_name(self.stations[station]);
                    if let Some(&s) = fair.session_index.get(session) {
                        self.checker.on_queue(station, s, *entry, *call, *cost, *at);
                    }
                    Some(if *joined {
                        format!("t={at} session={session} join ticket={entry} flight={call} platform={platform}")
                    } else {
                        let e = SchedulerEvent::Queue {
                            at: *at,
                            session: session.clone(),
                            entry: *entry,
                            cost: *cost,
                        };
                        format!("{e} platform={platform}")
                    })
                }
                PathEvent::Send {
                    lane,
                    at,
                    session,
                    cost,
                    admission,
                    ..
                } => match admission {
                    Some(a) => {
                        let station = self.station(p, *lane);
                        let platform = station_name(self.stations[station]);
                        let s = fair.session_index.get(&a.session).copied();
                        let scheduler = fair.shells[p].path().scheduler(*lane);
                        if let Err(e) = self.checker.on_admit(station, s, a, scheduler) {
                            failure.get_or_insert(e);
                        }
                        Some(format!("{} platform={platform}", SchedulerEvent::Admit(a.clone())))
                    }
                    None => Some(format!(
                        "t={at} session={session} admit cost={} via=unlimited waited=0.000s platform={platform}",
                        cost.compact()
                    )),
                },
                PathEvent::Cancel { lane, at, entry, .. } => {
                    let station = self.station(p, *lane);
                    let platform = station_name(self.stations[station]);
                    self.checker.on_cancel(station, *entry);
                    Some(format!(
                        "{} platform={platform}",
                        SchedulerEvent::Cancel { at: *at, entry: *entry }
                    ))
                }
                PathEvent::CancelCall { lane, at, call, .. } => {
                    let station = self.station(p, *lane);
                    let platform = station_name(self.stations[station]);
                    self.checker.on_cancel_call(station, *call);
                    Some(format!("t={at} cancel-flight flight={call} platform={platform}"))
                }
                PathEvent::Refuse {
                    at,
                    session,
                    reason,
                    retry_at,
                    ..
                } => Some(format!(
                    "{} platform={platform}",
                    SchedulerEvent::Refuse {
                        at: *at,
                        session: session.clone(),
                        reason: *reason,
                        retry_at: *retry_at,
                    }
                )),
                PathEvent::Refund { at, session, cost, .. } => Some(format!(
                    "t={at} session={session} refund cost={} platform={platform}",
                    cost.compact()
                )),
                PathEvent::Retry {
                    at,
                    flight,
                    failed,
                    until,
                } => Some(format!(
                    "t={at} retry flight={} failed={failed} until={until} platform={platform}",
                    flight.0
                )),
                PathEvent::Outcome {
                    at,
                    flight,
                    kind,
                    waiters,
                    again,
                } => {
                    if keyed_flight(&self.calls, *flight) {
                        let again = if again.is_empty() {
                            String::new()
                        } else {
                            format!(" again={}", again.len())
                        };
                        Some(format!(
                            "t={at} outcome={} flight={} waiters={waiters}{again} platform={platform}",
                            kind.as_str(),
                            flight.0
                        ))
                    } else {
                        leader(*flight).filter(|_| *kind == OutcomeKind::Ok).map(|c| {
                            format!(
                                "t={at} session={} answer platform={platform}",
                                self.workload.sessions[self.calls[c as usize].session as usize].key
                            )
                        })
                    }
                }
            };
            if let Some(line) = line {
                self.trace.push(line);
            }
        }
        match failure {
            Some(e) => Err(self.fail(e)),
            None => Ok(()),
        }
    }

    /// The calls' records after decision `event` of path `p`.
    fn record(&mut self, p: usize, event: &PathEvent) {
        match event {
            PathEvent::Send {
                at,
                session,
                attempt,
                cost,
                admission,
                ..
            } => {
                // The payer: the first call of the admitted entry's session (the leader's
                // on a lane without a kept limit); every call of the flight is out now.
                if let Some(payer) = self.payer(p, attempt.flight, session) {
                    let c = &mut self.calls[payer as usize];
                    c.paid = true;
                    c.charged = admission.as_ref().map_or(*cost, |a| a.cost);
                }
                let Some(fair) = self.fair.as_ref() else { return };
                let waiting: Vec<CallId> = fair.shells[p]
                    .waiters_of(attempt.flight)
                    .map(|(w, ())| CallId::try_from(w.0).expect("waiter ids are call ids"))
                    .collect();
                for w in waiting {
                    let c = &mut self.calls[w as usize];
                    if c.state == CallState::Waiting {
                        c.state = CallState::Sent;
                        c.admitted_at = Some(*at);
                    }
                }
            }
            PathEvent::Refund { flight, session, .. } => {
                // The path gave the charge back: the session did not pay for it.
                if let Some(payer) = self.payer(p, *flight, session) {
                    let c = &mut self.calls[payer as usize];
                    c.paid = false;
                    c.charged = Units::ZERO;
                }
            }
            PathEvent::Outcome { at, again, .. } => {
                // The waiters that wait once more after a 429.
                for w in again {
                    let c = &mut self.calls[usize::try_from(w.0).expect("waiter ids are call ids")];
                    c.requeued = true;
                    if c.state == CallState::Sent {
                        c.state = CallState::Waiting;
                        c.queued_at = *at;
                        c.admitted_at = None;
                    }
                }
            }
            _ => {}
        }
    }

    // ---- the legacy policy ----

    fn view(&self, call: CallId) -> CallView {
        let c = &self.calls[call as usize];
        CallView {
            session: c.session,
            platform: self.station_of(call),
            requested: c.cost,
            queued_at: c.queued_at,
        }
    }

    /// Polls legacy gate `p` until it has nothing due, then schedules its next wake.
    fn settle_legacy(&mut self, p: usize) -> Result<(), Box<Failure>> {
        loop {
            self.gates[p].poll(self.now, &mut self.trace, &mut self.out);
            if self.out.is_empty() {
                break;
            }
            self.apply_gate_events(p)?;
        }
        let next = self.gates[p].next_wake(self.now);
        self.set_wake(p, next)
    }

    fn apply_gate_events(&mut self, p: usize) -> Result<(), Box<Failure>> {
        // A 429 puts its call back into the gate, which may add events while a batch is
        // applied; they are taken in the next pass.
        while !self.out.is_empty() {
            let batch = std::mem::take(&mut self.out);
            // The gate let the whole batch out at once, before any of its answers came
            // back: each admission is checked against what was known then, so a 429 to
            // the batch's first call does not count against the second.
            for e in &batch {
                if let &GateEvent::Admitted { call, counted, .. } = e {
                    let v = self.view(call);
                    self.checker
                        .on_legacy_admit(self.now, call, v, counted)
                        .map_err(|e| self.fail(e))?;
                }
            }
            for e in batch {
                match e {
                    GateEvent::Admitted { call, charged, .. } => self.send_legacy(call, charged, p)?,
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

    fn send_legacy(&mut self, call: CallId, charged: Units, p: usize) -> Result<(), Box<Failure>> {
        let now = self.now;
        self.upstream[p] += 1;
        let c = &mut self.calls[call as usize];
        c.admitted_at = Some(now);
        c.charged = charged;
        c.paid = true;
        c.state = CallState::Sent;
        let cost = c.cost;
        let attempt = c.platform_429s + 1;
        let recorded = match c.key.clone() {
            Some(key) => self.recorded_attempt(&key, (1 << 63) | u64::from(call), attempt),
            None => None,
        };
        let answer = match &recorded {
            Some(r) => self.platforms[p].receive_recorded(now, cost, r),
            None => self.platforms[p].receive(now, cost),
        };
        match answer {
            Answer::Ok { latency, .. } => {
                // A failed answer changes nothing here: nobody else waits for it and
                // nothing is stored; the draw is made all the same, so the failure stream
                // is the fair run's.
                self.draws_failure(p);
                self.schedule(now + latency, Event::LegacyAnswer(call));
            }
            Answer::TooMany { refusal, retry_after } => {
                let c = &mut self.calls[call as usize];
                c.platform_429s += 1;
                c.queued_at = now;
                c.state = CallState::Waiting;
                c.paid = false;
                let reason = match refusal {
                    Refusal::OverLimit => "over-limit",
                    Refusal::Throttled => "throttled",
                };
                let session = self.workload.sessions[c.session as usize].key.clone();
                self.trace.push(format!(
                    "t={now} session={session} platform-429 reason={reason} retry_after={}s cost={} platform={}",
                    retry_after.as_secs(),
                    cost.compact(),
                    station_name(self.stations[p]),
                ));
                self.checker.on_retry_after(p, now + retry_after);
                self.gates[p].on_retry_after(now, retry_after);
                // Asked again as the fair path asks again (`queued_again`), so that the
                // policies differ only in the waiting; otherwise the 429 is the call's answer.
                let again = queued_again(
                    matches!(self.gates[p], Gate::Legacy(_)),
                    retry_after,
                    MAX_REQUEUE_WAIT,
                    self.calls[call as usize].platform_429s > 1,
                    &session,
                );
                if !again {
                    self.calls[call as usize].state = CallState::Failed;
                    self.trace.push(format!(
                        "t={now} session={session} failed after platform-429 platform={}",
                        station_name(self.stations[p]),
                    ));
                    self.finish_call(call);
                    return Ok(());
                }
                // Back to the gate, which waits out the Retry-After before anything else
                // goes to this platform.
                let v = self.view(call);
                self.checker.on_submit(call, v);
                self.gates[p].submit(now, call, &session, cost, &mut self.trace, &mut self.out);
            }
        }
        Ok(())
    }

    fn finish_call(&mut self, call: CallId) {
        if self.calls[call as usize].state == CallState::Done
            && let Some(then) = self.calls[call as usize].then.take()
        {
            // The request's second call: asked once the current event is done, as a tool
            // asks its platform again once its first answer reached it.
            let (session, platform) = (self.calls[call as usize].session, self.calls[call as usize].platform);
            let index = self.next_agent_index;
            self.next_agent_index += 1;
            let next = self.new_call(index, session, platform, then.cost, then.op, then.key.as_deref());
            self.schedule(self.now, Event::Arrive(next));
        }
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
        let platforms = self
            .stations
            .iter()
            .enumerate()
            .filter(|&(p, _)| self.used[p] > 0)
            .map(|(p, station)| {
                let sp = &self.platforms[p];
                let main = station.lane == Lane::MAIN;
                PlatformOutcome {
                    id: PlatformId::ALL[station.platform],
                    lane: (!main).then_some("text"),
                    model: sp.model,
                    limit: sp.limit,
                    local_limit: self.local_limits[p],
                    counters: sp.counters,
                    max_units_in_window: sp.limit.map_or(Units::ZERO, |l| sp.max_units_in_window(l.window)),
                    uncounted: match self.gates.get(p) {
                        Some(Gate::Legacy(g)) => g.uncounted,
                        _ => 0,
                    },
                    calls: self.used[p],
                    upstream: self.upstream[p],
                    path: self
                        .fair
                        .as_ref()
                        .filter(|_| main)
                        .map(|f| f.shells[station.platform].path().stats()),
                }
            })
            .collect();
        let admissions = self.fair.map(|f| f.admissions).unwrap_or_default();
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
            admissions,
        }
    }

    /// Whether the platform's answer to the call just accepted fails (`fail_rate`).
    fn draws_failure(&mut self, p: usize) -> bool {
        match &mut self.fail_rate[p] {
            Some((rate, rng)) => rng.random_bool(*rate),
            None => false,
        }
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
