//! The event loop over virtual time.
//!
//! Events sit in a [`BinaryHeap`] keyed by (instant, rank, sequence number): the sequence
//! number is assigned when an event is scheduled, so events at the same instant run in
//! the order they were scheduled and a run never depends on heap internals. A recording
//! ranks the events the server's task took (its requests and its attempts' outcomes, by
//! their `step`): at one instant those run first, in the server's order, and every other
//! event after them ([`UNRANKED`]) — so a replay takes a millisecond's arrivals and
//! answers in the order the server's path saw them. After every
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
//! The run's platforms are the workload's ([`Workload::platforms`], in its order), and its
//! stations the upstream services they call ([`crate::scenario::RunServices`]): as in
//! the server, platforms that call one service form a budget group with one path (fair),
//! a lane per service, and each service has one simulated service and (legacy) one gate,
//! so platforms that share a service share its budget and its fair queue. A call goes to
//! its platform's first service, or with `op = "text"` to its second; a call to a
//! platform the workload does not list fails the run before it starts.
//!
//! **Memory follows the calls in flight, not the calls made.** The events known before the
//! run (open-loop arrivals, agent loops' first rounds) come from a feed that holds one next
//! event per source (`feed.rs`); a generated session's rounds are drawn when they begin
//! (`agents.rs`); a call's record lives while the call does (`calls.rs`) and is aggregated
//! when it ends ([`crate::aggregate`]): the report, the checks and the snapshots come from
//! the aggregates. A run keeps every call's record only when asked ([`Footprint`]).
//!
//! Rooms: the loop and the calls' life here; what a run gives back in `outcome.rs`; from a
//! workload to paths and limits in `setup.rs`; the fair policy's sends, deliveries and path
//! events in `fair.rs`; the legacy model's in `legacy.rs`; agent loops in `agents.rs`; the
//! known events in `feed.rs`; the call table in `calls.rs`.
//!
//! What this module does not do: read the wall clock or any ambient randomness, or
//! decide anything the server's path decides.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::dedup::WaiterId;
use besluitbron_core::path::{Attempt, RetryPolicy, Shell};
use besluitbron_core::{BudgetGroup, Instant, LimitConfig, PlatformId, SessionKey, Units, WallTime};
use rand::RngExt;

pub use besluitbron_core::path::Served;

use crate::aggregate::{Aggregator, Scope};
use crate::check::{CallView, Checker};
use crate::platform::{Host, SimService};
use crate::policy::{CallId, Gate, GateEvent, PolicyKind};
use crate::rng::SimRng;
use crate::scenario::{RunServices, Workload};
use crate::trace::Trace;

mod agents;
mod calls;
mod fair;
mod feed;
mod finish;
mod legacy;
mod live;
mod outcome;
mod restart;
mod setup;
mod timeouts;

pub use crate::call_record::{CallRecord, CallState};
use crate::dense::IdMap;
use calls::Calls;
use feed::{Feed, Start, UNRANKED};
use live::{LiveAgent, LiveSession};
pub use outcome::{
    AdmissionLine, Failure, Footprint, PATH_CHECK_SPACING, PathChecks, PlatformCalls, RunOptions, RunOutcome,
    ServiceOutcome, SimError,
};
pub use setup::TEXT_OP;
use setup::{Built, FlightData, SimShell, Station, build};
use timeouts::Timeouts;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Event {
    Arrive(CallId),
    AgentRound(u32),
    /// A path (fair) or a station's gate (legacy) is due.
    Wake(u8),
    /// A service's answer to an attempt of a path arrives (`ok`: not a failure), with the
    /// service's `RateLimit-*` report if it sends one.
    Answer {
        path: u8,
        /// The path's process when the attempt went ([`FairState::eras`]).
        era: u16,
        attempt: Attempt,
        ok: bool,
        /// A failure (`ok` false) worth another attempt.
        retryable: bool,
        remaining: Option<(Units, Duration)>,
    },
    /// A recorded 429 arrives, its recorded latency after the attempt went.
    Refused {
        path: u8,
        era: u16,
        station: u8,
        attempt: Attempt,
        retry_after: Duration,
    },
    /// The legacy model's answer to a call.
    LegacyAnswer(CallId),
    /// The server's process restarted (a recording says so).
    Restart,
    Timeout(CallId),
}

/// The buffer's clock: virtual milliseconds.
fn wall(now: Instant) -> WallTime {
    WallTime(now.as_millis())
}

/// The buffer key of a call: (platform, search, operation, q = key), public scope.
pub fn cache_key(platform: PlatformId, op: Option<&str>, key: &str) -> CacheKey {
    CacheKey::new(platform, DataClass::Search, op.unwrap_or("search")).param("q", key)
}

/// The buffer key of a distinct call (no key in the workload): its operation followed by
/// `#<index>` and no parameter, so it equals no other call's key and costs no parameter
/// map; it is kept in no buffer.
pub fn distinct_key(platform: PlatformId, op: Option<&str>, index: u64) -> CacheKey {
    // Put together without the formatting machinery: every distinct call makes one.
    let op = op.unwrap_or("search");
    let mut operation = String::with_capacity(op.len() + 21);
    operation.push_str(op);
    operation.push('#');
    operation.push_str(crate::trace::decimal(index, &mut [0; 20]));
    CacheKey::new(platform, DataClass::Search, operation)
}

/// Whether `key` is a distinct call's ([`distinct_key`]).
fn is_distinct(key: &CacheKey) -> bool {
    !key.params().contains_key("q")
}

/// The fair policy's state: one path per budget group in the core's shell, which keeps
/// which calls wait for which flight.
struct FairState {
    shells: Vec<SimShell>,
    /// Attempts of a path out at a service: what they ask (looked up, never listed).
    out: HashMap<(usize, Attempt), CacheKey, foldhash::fast::FixedState>,
    /// Each named session's index, by key.
    session_index: BTreeMap<SessionKey, u32>,
    /// Each running generated session's index, by key (asked before the named ones).
    generated_index: HashMap<SessionKey, u32, foldhash::fast::FixedState>,
    /// Every admission, when the run keeps them (per-call records, or a recording to
    /// compare with).
    admissions: Option<Vec<AdmissionLine>>,
    /// Per path, the shell's step count at its last invariant check.
    checked_at: Vec<u64>,
    /// Invariant checks of the paths run.
    path_checks: u64,
    /// Per path, the server's process it belongs to: a recording's restart begins a new
    /// one, and an answer to an attempt of an earlier one reaches nobody.
    eras: Vec<u16>,
}

impl FairState {
    /// The fair policy's state over `shells`, one per budget group of `workload`.
    fn new(workload: &Workload, keep: Footprint, shells: Vec<SimShell>) -> FairState {
        let platforms = shells.len();
        FairState {
            shells,
            out: HashMap::default(),
            session_index: workload
                .sessions
                .iter()
                .enumerate()
                .map(|(i, s)| (s.key.clone(), u32::try_from(i).expect("fewer than 2^32 sessions")))
                .collect(),
            generated_index: HashMap::default(),
            admissions: (keep.calls || workload.recorded.is_some()).then(Vec::new),
            checked_at: vec![0; platforms],
            path_checks: 0,
            eras: vec![0; platforms],
        }
    }

    /// The index of the session whose fairness key is `key`.
    fn session_of(&self, key: &SessionKey) -> Option<u32> {
        self.generated_index
            .get(key)
            .or_else(|| self.session_index.get(key))
            .copied()
    }
}

struct Engine<'w> {
    workload: &'w Workload,
    opts: RunOptions,
    keep: Footprint,
    name: String,
    now: Instant,
    seq: u64,
    heap: BinaryHeap<Reverse<(Instant, u64, u64, Event)>>,
    /// Calls' time-outs, by length ([`Timeouts`]).
    timeouts: Timeouts,
    /// The events known before the run, one next event per source.
    feed: Feed<'w>,
    calls: Calls,
    /// The first call id of each series.
    series_first: Vec<u64>,
    /// Agent loops under way, by id: a named one's place in [`Workload::agents`], a
    /// generated session's after them ([`Engine::group_agent_base`]).
    agents: IdMap<u32, LiveAgent>,
    /// Per group, the agent id of its session number 0.
    group_agent_base: Vec<u32>,
    /// Generated sessions under way, by index.
    live_sessions: IdMap<u32, LiveSession>,
    next_agent_index: u64,
    /// What the run aggregates as it goes.
    agg: Aggregator,
    /// Per station, the scope its calls count in; per platform, its own scope.
    scope_of: Vec<usize>,
    platform_scope: Vec<usize>,
    /// The legacy policy's gates (`None` under the fair policy).
    gates: Vec<Gate>,
    fair: Option<FairState>,
    /// The services the run's platforms call, and each platform's routes to them.
    services: RunServices,
    /// Per station, one per service of the run (in [`RunServices`]' order):
    /// `local_limits`, `upstreams`, `used`, `upstream`, the gates and the checker's
    /// state; the fair paths are per budget group (`groups`), `hosts`, `fail_rate` and
    /// `fail_retryable` per platform (in the order of [`Workload::platforms`]).
    stations: Vec<Station>,
    /// Each station's name in traces and failures: its service's id.
    station_names: Vec<String>,
    /// The budget groups, one per path; each platform's group; per group, the station of
    /// each of its path's lanes.
    groups: Vec<BudgetGroup>,
    group_of: Vec<usize>,
    lane_stations: Vec<Vec<usize>>,
    local_limits: Vec<Option<LimitConfig>>,
    /// Pending wakes: of a path (fair) or a station's gate (legacy).
    wake_at: Vec<Option<Instant>>,
    /// A recorded trace: per path, when the server's task sent its recorded attempts.
    recorded_sends: Vec<Vec<u64>>,
    /// Whether calls wait at each station after the last event (kept to spare an
    /// allocation per event).
    waiting_now: Vec<bool>,
    upstreams: Vec<SimService>,
    hosts: Vec<Vec<Host>>,
    used: Vec<u64>,
    /// Per platform: calls made, and attempts sent.
    platform_used: Vec<u64>,
    platform_upstream: Vec<u64>,
    checker: Checker,
    trace: Trace,
    out: Vec<GateEvent>,
    events: u64,
    fail_rate: Vec<Option<(f64, SimRng)>>,
    fail_retryable: Vec<bool>,
    /// The paths' retries (a restart's new paths take them too).
    retry: RetryPolicy,
    upstream: Vec<u64>,
    /// A recorded trace's answers: which recorded flight each replayed flight (or legacy
    /// call) takes its attempts from, and how many flights of each key have begun.
    /// Keyed by platform too: each platform's path numbers its flights on its own.
    replay_slot: BTreeMap<(PlatformId, u64), Option<usize>>,
    replay_next: BTreeMap<(PlatformId, String, String), usize>,
}

/// Runs `workload` under `opts`, keeping every call's record and every session's row
/// ([`Footprint::everything`]); `name` names it in reports and failures.
pub fn run(name: &str, workload: &Workload, opts: RunOptions) -> Result<RunOutcome, Box<Failure>> {
    run_with(name, workload, opts, Footprint::everything())
}

/// Runs `workload` under `opts`, keeping what `keep` says besides the aggregates: memory
/// then follows the calls in flight, plus what is kept.
pub fn run_with(
    name: &str,
    workload: &Workload,
    opts: RunOptions,
    keep: Footprint,
) -> Result<RunOutcome, Box<Failure>> {
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
    let Built {
        services,
        stations,
        groups,
        group_of,
        local_limits,
        upstreams,
        hosts,
        paths,
        gates,
        fail_rate,
        fail_retryable,
        retry,
        lane_stations,
    } = build(workload, opts).map_err(failure)?;
    let specs = &workload.platforms;
    let n = stations.len();
    let fair = (opts.policy == PolicyKind::Fair).then(|| FairState::new(workload, keep, paths));
    let feed = Feed::new(workload);
    let mut calls = Calls::new(keep.calls);
    calls.reserve_ids(workload.open_total());
    let agg = aggregator_for(workload, keep, &stations);
    let station_names: Vec<String> = stations.iter().map(|s| s.id.to_string()).collect();
    let checker = Checker::new(
        opts.policy,
        station_names.clone(),
        &local_limits,
        specs.iter().map(|p| p.id).collect(),
    );
    let mut engine = Engine {
        workload,
        opts,
        keep,
        name: name.to_owned(),
        now: Instant::ZERO,
        seq: feed.scheduled_from(),
        heap: BinaryHeap::new(),
        timeouts: Timeouts::default(),
        feed,
        calls,
        series_first: series_first(workload),
        agents: IdMap::default(),
        group_agent_base: group_agent_base(workload),
        live_sessions: IdMap::default(),
        next_agent_index: workload.first_agent_index(),
        agg,
        scope_of: (0..n).collect(),
        platform_scope: (n..n + specs.len()).collect(),
        gates,
        fair,
        services,
        stations,
        station_names,
        wake_at: vec![None; n.max(groups.len())],
        recorded_sends: setup::recorded_sends(workload, &groups),
        waiting_now: Vec::with_capacity(n),
        groups,
        group_of,
        lane_stations,
        local_limits,
        upstreams,
        hosts,
        used: vec![0; n],
        platform_used: vec![0; specs.len()],
        platform_upstream: vec![0; specs.len()],
        checker,
        trace: Trace::new(opts.keep_trace),
        out: Vec::new(),
        events: 0,
        fail_rate,
        fail_retryable,
        retry,
        upstream: vec![0; n],
        replay_slot: BTreeMap::new(),
        replay_next: BTreeMap::new(),
    };
    for at in restarts(workload) {
        engine.schedule(at, Event::Restart);
    }
    engine.run()
}

/// When a recording's restarts are replayed: as the old process ends, just after it was
/// last heard of, and at the latest just before the new process's first request.
fn restarts(workload: &Workload) -> Vec<Instant> {
    let Some(r) = &workload.recorded else {
        return Vec::new();
    };
    r.restarts
        .iter()
        .enumerate()
        .map(|(k, &restart)| {
            let ms = r.ends.get(k).map_or(restart, |&end| restart.min(end + 1));
            Instant::from_nanos((ms * 1_000_000).saturating_sub(1))
        })
        .collect()
}

/// The first call id of each of `workload`'s series: after the open calls, series after
/// series.
fn series_first(workload: &Workload) -> Vec<u64> {
    let mut first = workload.open_calls.len() as u64;
    workload
        .series
        .iter()
        .map(|series| {
            let this = first;
            first += series.len();
            this
        })
        .collect()
}

/// Per group of `workload`, the agent id of its session number 0: after the named
/// sessions' loops, group after group.
fn group_agent_base(workload: &Workload) -> Vec<u32> {
    let agent_count = u32::try_from(workload.agents.len()).expect("fewer than 2^32 agents");
    workload
        .groups
        .iter()
        .scan(agent_count, |next, g| {
            let base = *next;
            *next = next.saturating_add(g.sessions);
            Some(base)
        })
        .collect()
}

/// The aggregator of a run of `workload` over `stations`, each a scope, then each
/// platform a scope, knowing what ends each named session: its open-loop calls and agent
/// loops.
fn aggregator_for(workload: &Workload, keep: Footprint, stations: &[Station]) -> Aggregator {
    let scopes = stations
        .iter()
        .map(|s| Scope::Service(s.id))
        .chain(workload.platforms.iter().map(|p| Scope::Platform(p.id)))
        .collect();
    let mut agg = Aggregator::new(keep.sessions, workload.session_count(), scopes);
    for c in &workload.open_calls {
        agg.expect(c.session, 1);
    }
    for series in &workload.series {
        agg.expect(series.session, series.len());
    }
    for a in workload.agents.iter().filter(|a| !a.steps.is_empty()) {
        agg.expect(a.session, 1);
    }
    agg
}

impl Engine<'_> {
    fn schedule(&mut self, at: Instant, event: Event) {
        self.schedule_ranked(at, UNRANKED, event);
    }

    /// Schedules `event` at `at` with `rank` among the events of that instant (a
    /// recording's order, [`UNRANKED`] otherwise).
    fn schedule_ranked(&mut self, at: Instant, rank: u64, event: Event) {
        debug_assert!(at >= self.now, "events are never scheduled in the past");
        self.heap.push(Reverse((at, rank, self.seq, event)));
        self.seq += 1;
    }

    /// The station (service) a call is counted at: its platform's second service for a
    /// text fetch where the platform has one, else its first.
    fn station_of(&self, call: CallId) -> usize {
        self.station_of_record(&self.calls[call])
    }

    /// The station call `c` is counted at.
    fn station_of_record(&self, c: &CallRecord) -> usize {
        let p = self.platform_index(c.platform);
        self.services.service_of(p, c.op.as_deref())
    }

    /// Session `s`'s key at the fair queues: a named session's own, a running generated
    /// session's.
    fn session_key(&self, s: u32) -> &SessionKey {
        match self.workload.sessions.get(s as usize) {
            Some(plan) => &plan.key,
            None => {
                &self
                    .live_sessions
                    .get(&s)
                    .expect("a generated session runs while its calls do")
                    .key
            }
        }
    }

    /// When session `s`'s queued calls are withdrawn.
    fn cancel_after(&self, s: u32) -> Option<Duration> {
        match self.workload.sessions.get(s as usize) {
            Some(plan) => plan.cancel_after,
            None => self.live_sessions.get(&s).and_then(|l| l.cancel_after),
        }
    }

    /// The index of platform `id` among the run's ([`Workload::platforms`]).
    fn platform_index(&self, id: PlatformId) -> usize {
        self.workload
            .platforms
            .iter()
            .position(|s| s.id == id)
            .expect("run() refuses a call to a platform the workload does not list")
    }

    /// The name of path `g` in failures: its budget group's (its first service's id).
    fn path_name(&self, g: usize) -> &'static str {
        self.groups[g].name()
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

    /// Makes call `id` (an open-loop call's fixed id, or [`Calls::next_id`]).
    #[allow(clippy::too_many_arguments)]
    fn new_call(
        &mut self,
        id: CallId,
        index: u64,
        session: u32,
        platform: PlatformId,
        cost: Units,
        op: Option<Arc<str>>,
        key: Option<&str>,
    ) -> CallId {
        let key = key.map(|k| Box::new(cache_key(platform, op.as_deref(), k)));
        self.calls.insert(
            id,
            CallRecord {
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
            },
        );
        id
    }

    /// The next event: the feed's, the heap's or a time-out, whichever comes first by
    /// (instant, number).
    fn next_event(&mut self) -> Option<(Instant, Result<Event, Start>)> {
        let heap = self.heap.peek().map(|Reverse((at, rank, seq, _))| (*at, *rank, *seq));
        let feed = self.feed.peek();
        let timeout = self.timeouts.peek();
        let first = [heap, feed, timeout.map(|(at, seq, _)| (at, UNRANKED, seq))]
            .into_iter()
            .flatten()
            .min()?;
        if heap == Some(first) {
            self.heap.pop().map(|Reverse((at, _, _, event))| (at, Ok(event)))
        } else if feed == Some(first) {
            self.feed.pop().map(|(at, start)| (at, Err(start)))
        } else {
            let (_, _, i) = timeout.expect("the earliest is a time-out");
            self.timeouts.pop(i).map(|(at, call)| (at, Ok(Event::Timeout(call))))
        }
    }

    /// Schedules `call`'s time-out `after` from now: in its length's queue, or the heap.
    fn schedule_timeout(&mut self, after: Duration, call: CallId) {
        let at = self.now + after;
        if !self.timeouts.push(after, at, self.seq, call) {
            self.heap.push(Reverse((at, UNRANKED, self.seq, Event::Timeout(call))));
        }
        self.seq += 1;
    }

    /// Whether `event` changes nothing when it comes: a wake-up superseded by a later one,
    /// or the time-out of a call that no longer waits for it.
    fn changes_nothing(&self, event: &Event) -> bool {
        match *event {
            Event::Wake(p) => self.wake_at[usize::from(p)] != Some(self.now),
            Event::Timeout(call) => match self.calls.get(call).filter(|_| self.calls.is_live(call)) {
                None => true,
                Some(c) => {
                    let recorded_leave = c.leave_after.is_some() && c.state == CallState::Sent && self.fair.is_some();
                    c.state != CallState::Waiting && !recorded_leave
                }
            },
            _ => false,
        }
    }

    fn run(mut self) -> Result<RunOutcome, Box<Failure>> {
        while let Some((at, event)) = self.next_event() {
            debug_assert!(at >= self.now);
            self.now = at;
            self.events += 1;
            // A run that keeps going long after its calls is a bug (a call asked again
            // forever): fail it rather than hang. Runs take a few events per call.
            let bound = 1_000 * (self.calls.made() + 1) + 1_000_000;
            if self.events > bound {
                return Err(self.fail(format!(
                    "the run does not end: {} events for {} calls",
                    self.events,
                    self.calls.made()
                )));
            }
            if self.opts.progress && self.events.is_multiple_of(1 << 16) {
                eprint!("\rsimulated {} ({} events)", self.now, self.events);
            }
            self.note_precondition();
            // An event that changes nothing leaves every invariant that does not depend on
            // the time as it was after the last one: only those that do are checked again.
            let changed = match event {
                Ok(event) if self.changes_nothing(&event) => false,
                Ok(event) => {
                    self.handle(event)?;
                    true
                }
                Err(start) => {
                    self.start(start)?;
                    true
                }
            };
            self.after_event(changed)?;
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
        if self.calls.live() > 0 {
            return Err(self.fail(format!("{} calls have not ended at the end", self.calls.live())));
        }
        // The paths' last steps are checked whatever their interval.
        for p in 0..self.fair.as_ref().map_or(0, |f| f.shells.len()) {
            let fair = self.fair.as_mut().expect("counted above");
            if fair.shells[p].stats().steps > fair.checked_at[p] {
                fair.checked_at[p] = fair.shells[p].stats().steps;
                fair.path_checks += 1;
                if let Err(what) = fair.shells[p].check_invariants() {
                    return Err(self.fail(format!("{}: {what}", self.path_name(p))));
                }
            }
        }
        Ok(self.finish())
    }

    /// An event known before the run: an open-loop call arrives, or an agent loop's first
    /// round.
    fn start(&mut self, start: Start) -> Result<(), Box<Failure>> {
        let w = self.workload;
        match start {
            Start::TraceCall(i) => {
                let oc = &w.open_calls[i];
                let id = CallId::try_from(i).expect("fewer than 2^32 calls");
                let call = self.new_call(
                    id,
                    w.open_index(i),
                    oc.session,
                    oc.platform,
                    oc.cost,
                    oc.op.as_deref().map(Arc::from),
                    oc.key.as_deref(),
                );
                self.calls[call].then = oc.then.clone().map(Box::new);
                self.calls[call].leave_after = oc.leave_after;
                self.submit(call)
            }
            Start::SeriesCall { series, k } => {
                let sr = &w.series[series];
                let index = self.series_first[series] + k;
                let id = CallId::try_from(index).expect("fewer than 2^32 calls");
                let call = self.new_call(id, index, sr.session, sr.platform, sr.cost, sr.op.clone(), sr.key(k));
                self.submit(call)
            }
            Start::Agent(a) => {
                let plan = &w.agents[a as usize];
                self.agents
                    .insert(a, LiveAgent::listed(plan.session, a, plan.steps.len()));
                self.round(a)
            }
            Start::Session { group, session } => self.start_session(group, session),
        }
    }

    fn note_precondition(&mut self) {
        let now = self.now;
        self.checker.note_precondition(now);
    }

    /// The checks after an event (`changed`: it changed the run's state), and whether
    /// calls wait for each limit now.
    fn after_event(&mut self, changed: bool) -> Result<(), Box<Failure>> {
        let now = self.now;
        let Some(fair) = &self.fair else {
            let over_limit: u64 = self.upstreams.iter().map(|p| p.counters.over_limit).sum();
            self.checker
                .after_event(now, |_| None, over_limit, changed)
                .map_err(|e| self.fail(e))?;
            if changed {
                let mut waiting = std::mem::take(&mut self.waiting_now);
                waiting.clear();
                waiting.extend(self.gates.iter().map(Gate::waiting));
                self.note_waiting(&waiting, now);
                self.waiting_now = waiting;
            }
            return Ok(());
        };
        // The paths' own invariants are checked after their steps (`check_path`).
        let stations = &self.stations;
        let schedulers = |s: usize| fair.shells[stations[s].group].path().scheduler(stations[s].lane);
        let over_limit: u64 = if changed {
            self.upstreams.iter().map(|p| p.counters.over_limit).sum()
        } else {
            0
        };
        let verdict = self.checker.after_event(now, schedulers, over_limit, changed);
        let verdict = verdict.and_then(|()| {
            let (specs, group_of) = (&self.workload.platforms, &self.group_of);
            let stores = |p: usize| fair.shells[group_of[p]].path().buffer().store_of(specs[p].id);
            self.checker.flights.after_event(stores)
        });
        verdict.map_err(|e| self.fail(e))?;
        if changed {
            // Whether calls wait for each limit now: the share of time at the limit.
            let mut waiting = std::mem::take(&mut self.waiting_now);
            waiting.clear();
            waiting.extend((0..stations.len()).map(|s| schedulers(s).is_some_and(|q| q.queued() > 0)));
            self.note_waiting(&waiting, now);
            self.waiting_now = waiting;
        }
        Ok(())
    }

    /// Calls wait at the stations `waiting` says after the event at `now`: each service's
    /// scope hears it, and each platform's, which waits while any service it calls does.
    fn note_waiting(&mut self, waiting: &[bool], now: Instant) {
        for (station, &w) in waiting.iter().enumerate() {
            self.agg.waiting(self.scope_of[station], w, now);
        }
        for (p, route) in self.services.routes.iter().enumerate() {
            let w = route.iter().any(|&s| waiting[s]);
            self.agg.waiting(self.platform_scope[p], w, now);
        }
    }

    fn handle(&mut self, event: Event) -> Result<(), Box<Failure>> {
        match event {
            Event::Arrive(call) => self.submit(call),
            Event::AgentRound(a) => self.round(a),
            Event::Wake(p) => {
                if self.wake_at[p as usize] == Some(self.now) {
                    self.wake_at[p as usize] = None;
                    // A budget group's path (fair), or a station's gate (legacy).
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
                path,
                era,
                attempt,
                ok,
                retryable,
                remaining,
            } => self.answer_arrives(usize::from(path), era, attempt, ok, retryable, remaining),
            Event::Refused {
                path,
                era,
                station,
                attempt,
                retry_after,
            } => {
                let p = usize::from(path);
                if self.fair.as_ref().is_some_and(|f| f.eras[p] != era) {
                    return Ok(());
                }
                let key = self.fair.as_mut().and_then(|f| f.out.remove(&(p, attempt)));
                if let Some(key) = key {
                    self.refusal_arrives(p, usize::from(station), attempt, &key, retry_after);
                }
                self.settle(p)
            }
            Event::LegacyAnswer(call) => {
                let c = &mut self.calls[call];
                c.state = CallState::Done;
                let (session, platform) = (c.session, c.platform);
                let key = self.session_key(session).clone();
                self.trace
                    .push_fmt(format_args!("t={} session={key} answer platform={platform}", self.now));
                self.finish_call(call);
                Ok(())
            }
            Event::Restart => self.restart(),
            Event::Timeout(call) => {
                // The call may have ended long before its time-out.
                let Some(c) = self.calls.get(call).filter(|_| self.calls.is_live(call)) else {
                    return Ok(());
                };
                // A recorded caller left when the recording says, whatever its flight was
                // doing (out at the platform, or in a retry's backoff: the server's path
                // then withdraws the flight); a scenario's `cancel_after` gives up waiting
                // in the queue only.
                let recorded_leave = c.leave_after.is_some() && c.state == CallState::Sent && self.fair.is_some();
                if c.state != CallState::Waiting && !recorded_leave {
                    return Ok(());
                }
                let p = self.group_of[self.platform_index(self.calls[call].platform)];
                let now = self.now;
                if let Some(fair) = self.fair.as_mut() {
                    fair.shells[p].leave(now, WaiterId(u64::from(call)));
                    self.calls[call].state = CallState::Cancelled;
                    self.checker.flights.on_left(call);
                    self.finish_call(call);
                    return self.settle(p);
                }
                let s = self.station_of(call);
                if self.gates[s].cancel(now, call, &mut self.trace) {
                    self.calls[call].state = CallState::Cancelled;
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
        let c = &mut self.calls[call];
        c.submitted_at = now;
        c.queued_at = now;
        c.state = CallState::Waiting;
        let (platform, session, leave_after) = (c.platform, c.session, c.leave_after);
        let platform = self.platform_index(platform);
        let p = self.group_of[platform];
        let s = self.station_of(call);
        self.used[s] += 1;
        self.platform_used[platform] += 1;
        let leave = [leave_after, self.cancel_after(session)];
        if let Some(after) = leave.into_iter().flatten().min() {
            self.schedule_timeout(after, call);
        }
        if self.fair.is_some() {
            return self.submit_fair(call, p);
        }
        let c = &self.calls[call];
        let cost = c.cost;
        let v = self.view(call);
        self.checker.on_submit(call, v);
        let key = self.session_key(session).clone();
        self.gates[s].submit(now, call, &key, cost, &mut self.trace, &mut self.out);
        self.apply_gate_events(s)?;
        self.settle_legacy(s)
    }

    // ---- the legacy policy ----

    fn view(&self, call: CallId) -> CallView {
        let c = &self.calls[call];
        CallView {
            session: c.session,
            platform: self.station_of(call),
            requested: c.cost,
            queued_at: c.queued_at,
        }
    }

    /// Call `call` ended: its follow-up is made, it is aggregated (its record kept when the
    /// run keeps records), and its agent loop goes on.
    fn finish_call(&mut self, call: CallId) {
        let mut record = self.calls.retire(call);
        if record.state == CallState::Done
            && let Some(then) = record.then.take()
        {
            // The request's second call: asked once the current event is done, as a tool
            // asks its platform again once its first answer reached it.
            let (session, platform) = (record.session, record.platform);
            let index = self.next_agent_index;
            self.next_agent_index += 1;
            let id = self.calls.next_id();
            let op = then.op.as_deref().map(Arc::from);
            let next = self.new_call(id, index, session, platform, then.cost, op, then.key.as_deref());
            self.agg.expect(session, 1);
            self.schedule(self.now, Event::Arrive(next));
        }
        let scope = self.scope_of[self.station_of_record(&record)];
        let platform = self.platform_scope[self.platform_index(record.platform)];
        self.agg.call(&record, &[scope, platform]);
        let agent = record.agent;
        self.calls.keep(call, record);
        if let Some(a) = agent {
            self.agent_call_ended(a);
        }
    }

    /// Whether the answer to platform `p`'s call just accepted at its `k`-th service fails
    /// (`fail_rate`: drawn at its first service only).
    fn draws_failure(&mut self, p: usize, k: usize) -> bool {
        match &mut self.fail_rate[p] {
            Some((rate, rng)) if k == 0 => rng.random_bool(*rate),
            _ => false,
        }
    }

    /// Platform `p`'s place of station `s` in its own list of services (0: its first).
    fn place_of(&self, p: usize, s: usize) -> usize {
        self.services.routes[p].iter().position(|&x| x == s).unwrap_or(0)
    }
}

/// What a simulated key asks, for trace lines and the admissions: its `q` parameter, or
/// a distinct call's `#<index>`.
fn key_text(key: &CacheKey) -> &str {
    match key.params().get("q") {
        Some(q) => q,
        None => {
            let op = key.operation();
            op.find('#').map_or("", |i| &op[i..])
        }
    }
}
