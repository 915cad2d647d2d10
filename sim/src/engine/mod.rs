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
//! The run's platforms are the workload's ([`Workload::platforms`], in its order): one
//! path (fair) or gate (legacy) and one simulated platform each, then one per text host;
//! a call to a platform the workload does not list fails the run before it starts.
//!
//! Rooms: the loop and the calls' life here; what a run gives back in `outcome.rs`; from a
//! workload to paths and limits in `setup.rs`; the fair policy's sends, deliveries and path
//! events in `fair.rs`; the legacy model's in `legacy.rs`.
//!
//! What this module does not do: read the wall clock or any ambient randomness, or
//! decide anything the server's path decides.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, DataClass, MemoryStore};
use besluitbron_core::dedup::WaiterId;
use besluitbron_core::path::{Attempt, Feedback, Keep, Lane, Outcome, Shell};
use besluitbron_core::{Instant, LimitConfig, PlatformId, SessionKey, Units, WallTime};
use rand::RngExt;

pub use besluitbron_core::path::Served;

use crate::check::{CallView, Checker};
use crate::platform::SimPlatform;
use crate::policy::{CallId, Gate, GateEvent, LegacyGate, OpenGate, PolicyKind};
use crate::rng::{Component, SimRng, host_stream, sim_rng};
use crate::scenario::{PlatformSpec, Workload};
use crate::trace::Trace;

mod fair;
mod legacy;
mod outcome;
mod setup;

pub use outcome::{AdmissionLine, CallRecord, CallState, Failure, PlatformOutcome, RunOptions, RunOutcome, SimError};
pub use setup::Enforced;
use setup::{SimShell, check_platforms, limit_of, path_for};

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
    /// Per station: a platform's main limit (one per platform of the run, in the order
    /// of [`Workload::platforms`]) or its text host's (after them); `local_limits`,
    /// `platforms`, `used`, `upstream`, `fail_rate`, `fail_retryable`, the gates, the
    /// wakes of the legacy gates and the checker's state are per station, the fair paths
    /// per platform.
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
    /// The platform.
    id: PlatformId,
    /// The platform's index in [`Workload::platforms`]: its path, and its main station.
    platform: usize,
    /// The path's lane.
    lane: Lane,
}

/// The lane of text fetches, where a platform's text host keeps a limit of its own (as
/// the server's `TEXT_LANE`).
pub const TEXT_LANE: Lane = Lane(1);

/// The operation label of a text fetch (`op = "text"` in scenarios and traces).
pub const TEXT_OP: &str = "text";

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
    check_platforms(workload).map_err(failure)?;
    let specs = &workload.platforms;
    let (stations, text_station, text_limits) = stations_of(specs);
    let mut hosts = Hosts::default();
    // A recorded trace: the bucket the server kept, its margin held back.
    let margin = workload.recorded.as_ref().map_or(Duration::ZERO, |r| r.margin);
    for (i, spec) in specs.iter().enumerate() {
        let text = text_station[i].map(|s| text_limits[s - specs.len()].with_margin(margin));
        hosts.add_main(workload, opts, spec, margin, text).map_err(failure)?;
    }
    // The text hosts: their own bucket at the platform and, locally, their own lane (the
    // legacy model: a gate of its own). No throttling, failures or rate-limit headers.
    for (k, station) in stations.iter().enumerate().skip(specs.len()) {
        hosts.add_text(workload, opts, station, text_limits[k - specs.len()]);
    }
    let n = stations.len();
    let Hosts {
        gates,
        paths,
        platforms,
        local_limits,
    } = hosts;
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
    let (fail_rate, fail_retryable) = failures_of(specs, opts.seed, n);
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
        checker: Checker::new(
            opts.policy,
            stations.iter().map(|s| station_name(*s)).collect(),
            specs.iter().map(|p| p.id).collect(),
        ),
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

/// The stations of `specs`: each platform's main one, in order, then a text host's for
/// each platform whose text host keeps a limit; per platform, its text station; and
/// those text hosts' limits, in their stations' order.
fn stations_of(specs: &[PlatformSpec]) -> (Vec<Station>, Vec<Option<usize>>, Vec<LimitConfig>) {
    let mut stations: Vec<Station> = specs
        .iter()
        .enumerate()
        .map(|(platform, spec)| Station {
            id: spec.id,
            platform,
            lane: Lane::MAIN,
        })
        .collect();
    let mut text_station = vec![None; specs.len()];
    let mut text_limits = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        if let Some(limit) = Enforced::of(spec).text {
            text_station[i] = Some(stations.len());
            stations.push(Station {
                id: spec.id,
                platform: i,
                lane: TEXT_LANE,
            });
            text_limits.push(limit);
        }
    }
    (stations, text_station, text_limits)
}

/// What a run builds per station: the simulated platform (host), the limit BesluitBron
/// keeps there, and per policy the legacy gate or the fair policy's path (one per
/// platform, its text lane inside).
#[derive(Default)]
struct Hosts {
    gates: Vec<Gate>,
    paths: Vec<SimShell>,
    platforms: Vec<SimPlatform>,
    local_limits: Vec<Option<LimitConfig>>,
}

impl Hosts {
    /// Platform `spec`'s main host, kept with `margin` held back, with `text`, the limit
    /// its text lane keeps (if any).
    fn add_main(
        &mut self,
        workload: &Workload,
        opts: RunOptions,
        spec: &PlatformSpec,
        margin: Duration,
        text: Option<LimitConfig>,
    ) -> Result<(), String> {
        let id = spec.id;
        let limit = Enforced::of(spec).limit;
        let local = limit_of(
            spec.local_capacity.or(limit.map(|l| l.capacity)),
            spec.local_window_s.or(limit.map(|l| l.window.as_secs_f64())),
            limit,
        )
        .map(|l| l.with_margin(margin));
        self.local_limits.push(local);
        let stream = host_stream(id, false);
        self.platforms.push(
            SimPlatform::new(
                id,
                limit,
                spec.model,
                spec.latency,
                spec.throttle.clone(),
                sim_rng(opts.seed, Component::Latency(stream)),
            )
            .with_rate_limit_headers(spec.states_its_budget()),
        );
        match opts.policy {
            PolicyKind::Fair => self.paths.push(path_for(spec, local, text)?),
            PolicyKind::Legacy => self.gates.push(match local {
                None => Gate::Open(OpenGate::new(id)),
                Some(limit) => Gate::Legacy(Box::new(LegacyGate::new(
                    id,
                    limit,
                    workload.legacy_slip_probability,
                    sim_rng(opts.seed, Component::Faults(stream)),
                ))),
            }),
        }
        Ok(())
    }

    /// The text host of `station`, enforcing and keeping `limit`.
    fn add_text(&mut self, workload: &Workload, opts: RunOptions, station: &Station, limit: LimitConfig) {
        let (id, spec) = (station.id, &workload.platforms[station.platform]);
        let stream = host_stream(id, true);
        self.local_limits.push(Some(limit));
        self.platforms.push(SimPlatform::new(
            id,
            Some(limit),
            spec.model,
            spec.latency,
            Vec::new(),
            sim_rng(opts.seed, Component::Latency(stream)),
        ));
        if opts.policy == PolicyKind::Legacy {
            self.gates.push(Gate::Legacy(Box::new(LegacyGate::new(
                id,
                limit,
                workload.legacy_slip_probability,
                sim_rng(opts.seed, Component::Faults(stream)),
            ))));
        }
    }
}

/// Per station (`n` of them), the failure rate drawn with its own stream and whether a
/// failure is worth another attempt; failures are drawn at a platform's main host only.
fn failures_of(specs: &[PlatformSpec], seed: u64, n: usize) -> (Vec<Option<(f64, SimRng)>>, Vec<bool>) {
    let mut fail_rate: Vec<Option<(f64, SimRng)>> = specs
        .iter()
        .map(|spec| {
            spec.fail_rate
                .filter(|&r| r > 0.0)
                .map(|r| (r, sim_rng(seed, Component::Failures(host_stream(spec.id, false)))))
        })
        .collect();
    fail_rate.resize_with(n, || None);
    let mut fail_retryable: Vec<bool> = specs.iter().map(|spec| spec.fail_retryable.unwrap_or(true)).collect();
    fail_retryable.resize(n, true);
    (fail_rate, fail_retryable)
}

/// A station's name in traces and failures: the platform, or `ob/text`.
fn station_name(s: Station) -> String {
    if s.lane == Lane::MAIN {
        s.id.to_string()
    } else {
        format!("{}/text", s.id)
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
        let p = self.platform_index(c.platform);
        match (c.op.as_deref(), self.text_station[p]) {
            (Some(TEXT_OP), Some(s)) => s,
            _ => p,
        }
    }

    /// The index of platform `id` among the run's: its path and its main station.
    fn platform_index(&self, id: PlatformId) -> usize {
        self.stations
            .iter()
            .position(|s| s.id == id)
            .expect("run() refuses a call to a platform the workload does not list")
    }

    /// The platform of path `p`.
    fn platform_id(&self, p: usize) -> PlatformId {
        self.stations[p].id
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
                        path.name(),
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
            Event::AgentRound(a) => self.agent_round(a),
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
            } => self.answer_arrives(usize::from(platform), attempt, ok, retryable, remaining),
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
            Event::Timeout(call) => self.time_out(call),
        }
    }

    /// Agent `a`'s next round: its calls, all outstanding before the first is submitted.
    fn agent_round(&mut self, a: u32) -> Result<(), Box<Failure>> {
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

    /// Platform `p`'s answer to `attempt` arrives (`ok`: not a failure; `retryable`: a
    /// failure worth another attempt), with the platform's `RateLimit-*` report if any.
    fn answer_arrives(
        &mut self,
        p: usize,
        attempt: Attempt,
        ok: bool,
        retryable: bool,
        remaining: Option<(Units, Duration)>,
    ) -> Result<(), Box<Failure>> {
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

    /// Call `call`'s caller stops waiting: a recorded caller when the recording says,
    /// whatever its flight was doing (out at the platform, or in a retry's backoff: the
    /// server's path then withdraws the flight); a scenario's `cancel_after` gives up
    /// waiting in the queue only.
    fn time_out(&mut self, call: CallId) -> Result<(), Box<Failure>> {
        let c = &self.calls[call as usize];
        let recorded_leave = c.leave_after.is_some() && c.state == CallState::Sent && self.fair.is_some();
        if c.state != CallState::Waiting && !recorded_leave {
            return Ok(());
        }
        let p = self.platform_index(self.calls[call as usize].platform);
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

    /// A call arrives.
    fn submit(&mut self, call: CallId) -> Result<(), Box<Failure>> {
        let now = self.now;
        let c = &mut self.calls[call as usize];
        c.submitted_at = now;
        c.queued_at = now;
        c.state = CallState::Waiting;
        let (platform, session, leave_after) = (c.platform, c.session, c.leave_after);
        let p = self.platform_index(platform);
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
                    id: station.id,
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
