//! The workload a scenario or a trace becomes: its sessions, the calls whose instants are
//! fixed in advance (a trace's calls, a scenario's bursts and steady rates as series), the
//! agent loops, the generated groups, and what a recording brings besides; and a scenario
//! expanded into it ([`Scenario::workload`]).
//!
//! Invariants: every random choice is drawn from the workload sub-seed (the keys from a
//! stream of their own), before the run starts or as a group's round begins, so both
//! policies see the same offered sessions. What it does not do: run anything.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::identity::IdentityRule;
use besluitbron_core::record::{FollowUp, RecordedAttempt};
use besluitbron_core::{Instant, PlatformId, SessionKey, Units};

use crate::rng::{Component, sim_rng};

use super::groups::pool_key;
use super::{
    AgentStep, GroupPlan, LimitOverride, LimitTarget, PlatformSpec, RunServices, Scenario, ServiceSpec, SessionSpec,
};

impl Scenario {
    /// The calls and agent loops the scenario offers, every random choice drawn from the
    /// workload and keys sub-seeds of `seed`: bursts and steady rates as series, expanded
    /// as the run reaches them; named agent loops round by round; generated groups as
    /// plans whose rounds are drawn when they begin ([`GroupPlan`]).
    pub fn workload(&self, seed: u64) -> Workload {
        let mut w = Workload::new(self.platforms.clone(), self.legacy_slip_probability);
        w.services.clone_from(&self.services);
        // Keys come from their own stream, so a scenario without keys draws exactly what
        // it drew before keys existed.
        let mut key_rng = sim_rng(seed, Component::Keys);
        for s in &self.sessions {
            let who = self.identity.who(
                Some(s.user.as_deref().unwrap_or(&s.name)),
                Some(&s.name),
                s.address.as_deref().unwrap_or(&s.name),
            );
            let key = match self.identity {
                // Each session its own caller, named as it always was.
                IdentityRule::PerSession => None,
                _ => Some(who.fairness_key()),
            };
            let session = w.add_session_as(&s.name, key, s.cancel_after_ms.map(Duration::from_millis));
            let op: Option<Arc<str>> = s.op.as_deref().map(Arc::from);
            let mut keys = KeySource::of_session(s);
            // `validate` made sure every call names a listed platform.
            let default = self.session_platform(s);
            let platform = |entry: Option<PlatformId>| entry.or(default).expect("validated: a listed platform");
            for b in &s.burst {
                let instants = match (b.every_ms, b.until_ms) {
                    (Some(every), Some(until)) if every > 0 => until.saturating_sub(b.at_ms).div_ceil(every).max(1),
                    _ => 1,
                };
                let mut series = OpenSeries {
                    session,
                    platform: platform(b.platform),
                    cost: b.cost.unwrap_or(s.cost),
                    op: op.clone(),
                    first_at: Instant::from_millis(b.at_ms),
                    every: Duration::from_millis(b.every_ms.unwrap_or(0)),
                    instants: u32::try_from(instants).unwrap_or(u32::MAX),
                    per_instant: b.calls,
                    keys: SeriesKeys::Distinct,
                };
                series.keys = keys.for_series(b.key.as_deref(), series.len(), &mut key_rng);
                w.series.push(series);
            }
            for st in &s.steady {
                let instants = st.to_ms.saturating_sub(st.from_ms).div_ceil(st.every_ms);
                let mut series = OpenSeries {
                    session,
                    platform: platform(st.platform),
                    cost: st.cost.unwrap_or(s.cost),
                    op: op.clone(),
                    first_at: Instant::from_millis(st.from_ms),
                    every: Duration::from_millis(st.every_ms),
                    instants: u32::try_from(instants).unwrap_or(u32::MAX),
                    per_instant: 1,
                    keys: SeriesKeys::Distinct,
                };
                series.keys = keys.for_series(st.key.as_deref(), series.len(), &mut key_rng);
                w.series.push(series);
            }
            for a in &s.agent {
                let fan_out = a.fan_out.unwrap_or(1).max(1);
                let steps = (0..a.calls)
                    .map(|_| AgentStep {
                        platform: platform(a.platform),
                        cost: a.cost.unwrap_or(s.cost),
                        fan_out,
                        think: Duration::from_millis(a.think_ms),
                        op: op.clone(),
                        keys: (0..fan_out)
                            .map_while(|_| a.key.clone().or_else(|| keys.next(&mut key_rng)))
                            .collect(),
                    })
                    .collect();
                w.agents.push(AgentPlan {
                    session,
                    start_at: Instant::from_millis(a.at_ms),
                    steps,
                });
            }
        }
        let mut rng = sim_rng(seed, Component::Workload);
        let mut first_session = u32::try_from(w.sessions.len()).expect("fewer than 2^32 sessions");
        for (index, g) in self.groups.iter().enumerate() {
            let index = u16::try_from(index).expect("validated: at most 65,535 groups");
            let plan = GroupPlan::new(g, index, first_session, seed, &mut rng, &mut key_rng);
            first_session = first_session.checked_add(g.sessions).expect("fewer than 2^32 sessions");
            w.groups.push(plan);
        }
        w
    }
}

/// A session of the workload.
#[derive(Clone, Debug)]
pub struct SessionPlan {
    /// Its name as written.
    pub name: String,
    /// Its key at the scheduler (`system` becomes [`SessionKey::System`]).
    pub key: SessionKey,
    /// Queued calls are withdrawn after this long.
    pub cancel_after: Option<Duration>,
}

/// A call whose submission instant is fixed in advance (bursts, steady rates, traces).
#[derive(Clone, Debug)]
pub struct OpenCall {
    /// Submission instant.
    pub at: Instant,
    /// Index into [`Workload::sessions`].
    pub session: u32,
    /// Platform.
    pub platform: PlatformId,
    /// Requested cost.
    pub cost: Units,
    /// Operation label.
    pub op: Option<String>,
    /// What the call asks; `None`: a distinct call.
    pub key: Option<String>,
    /// The call made when this one is answered.
    pub then: Option<FollowUp>,
    /// A recorded call whose caller gave up while it waited: when, after its arrival,
    /// the replay withdraws it (if it still waits then).
    pub leave_after: Option<Duration>,
    /// A recorded call: its place in the order the server's task took its group's
    /// requests and outcomes (the line's `step`), which orders it among the events of its
    /// instant; `None`: after them, in trace order.
    pub rank: Option<u64>,
}

/// A closed-loop session: the next round starts `think` after the previous one's answers.
#[derive(Clone, Debug)]
pub struct AgentPlan {
    /// Index into [`Workload::sessions`].
    pub session: u32,
    /// When the first round goes.
    pub start_at: Instant,
    /// The rounds.
    pub steps: Vec<AgentStep>,
}

/// Calls whose instants are fixed in advance by a pattern — a scenario's bursts and
/// steady rates — expanded one call at a time as the run reaches them: `per_instant`
/// calls at each of `instants` instants, `every` apart from `first_at`.
#[derive(Clone, Debug)]
pub struct OpenSeries {
    /// Index into the workload's sessions.
    pub session: u32,
    /// Platform.
    pub platform: PlatformId,
    /// Requested cost.
    pub cost: Units,
    /// Operation label (shared by every call that carries it).
    pub op: Option<Arc<str>>,
    /// The first instant.
    pub first_at: Instant,
    /// Between instants.
    pub every: Duration,
    /// How many instants.
    pub instants: u32,
    /// Calls at each instant.
    pub per_instant: u32,
    /// What the calls ask.
    pub keys: SeriesKeys,
}

/// What a series' calls ask.
#[derive(Clone, Debug)]
pub enum SeriesKeys {
    /// Nothing: every call distinct.
    Distinct,
    /// The same key, every call.
    Same(String),
    /// One key per call, in order (drawn from a pool or cycled through a list before the
    /// run, in the order the calls are listed).
    Each(Vec<String>),
}

impl OpenSeries {
    /// How many calls.
    pub fn len(&self) -> u64 {
        u64::from(self.instants) * u64::from(self.per_instant)
    }

    /// Whether it has no call.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// When its `k`-th call arrives.
    pub fn at(&self, k: u64) -> Instant {
        let instant = k / u64::from(self.per_instant.max(1));
        let offset = u64::try_from(self.every.as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_mul(instant);
        Instant::from_nanos(self.first_at.as_nanos().saturating_add(offset))
    }

    /// What its `k`-th call asks.
    pub fn key(&self, k: u64) -> Option<&str> {
        match &self.keys {
            SeriesKeys::Distinct => None,
            SeriesKeys::Same(key) => Some(key),
            SeriesKeys::Each(keys) => usize::try_from(k).ok().and_then(|k| keys.get(k)).map(String::as_str),
        }
    }
}

/// Everything a run offers, independent of the policy.
///
/// Sessions are numbered: those named one by one ([`Workload::sessions`]: a scenario's
/// `[[session]]`s, a trace's sessions) first, then each generated group's, group after
/// group ([`GroupPlan::first_session`]); a generated session is known by its number and
/// named `<prefix>-<n>`, never kept as a plan of its own.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The run's platforms, each once, in order: a scenario's as it lists them, a
    /// trace's those its calls name, with their defaults, in the order of their ids.
    /// Reports show them in this order; a call to a platform not listed here is an error
    /// of the run.
    pub platforms: Vec<PlatformSpec>,
    /// What the workload says of the services its platforms call beyond the table and
    /// the platforms' own entries (a scenario's `[[service]]`, a what-if's `--limit`).
    pub services: Vec<ServiceSpec>,
    /// The legacy model's slip probability.
    pub legacy_slip_probability: f64,
    /// Sessions named one by one, in the order first named.
    pub sessions: Vec<SessionPlan>,
    /// A trace's calls; call `i` has index `open_call_index[i]` when that is set (the
    /// line number), else `i`.
    pub open_calls: Vec<OpenCall>,
    /// Line numbers of trace calls.
    pub open_call_index: Vec<u64>,
    /// A scenario's bursts and steady rates, in the order listed; their calls are numbered
    /// after [`Workload::open_calls`], series after series.
    pub series: Vec<OpenSeries>,
    /// Named sessions' agent loops; their calls are numbered after all open-loop calls,
    /// in submission order.
    pub agents: Vec<AgentPlan>,
    /// Generated groups, in the order listed.
    pub groups: Vec<GroupPlan>,
    /// A trace the server recorded: its base instant and the platforms' recorded answers.
    pub recorded: Option<Recorded>,
}

impl RunServices {
    /// The services of `workload`'s platforms, or why they cannot be run.
    pub fn of(workload: &Workload) -> Result<RunServices, String> {
        RunServices::of_parts(&workload.platforms, &workload.services)
    }
}

impl Workload {
    pub(super) fn new(platforms: Vec<PlatformSpec>, legacy_slip_probability: f64) -> Workload {
        Workload {
            platforms,
            services: Vec::new(),
            legacy_slip_probability,
            sessions: Vec::new(),
            open_calls: Vec::new(),
            open_call_index: Vec::new(),
            series: Vec::new(),
            agents: Vec::new(),
            groups: Vec::new(),
            recorded: None,
        }
    }

    pub(super) fn add_session(&mut self, name: &str, cancel_after: Option<Duration>) -> u32 {
        self.add_session_as(name, None, cancel_after)
    }

    /// A session whose calls queue under `key` (default: its name), the fairness key
    /// the core's identity rule gives it.
    fn add_session_as(&mut self, name: &str, key: Option<SessionKey>, cancel_after: Option<Duration>) -> u32 {
        let key = if name == "system" {
            SessionKey::System
        } else {
            key.unwrap_or_else(|| SessionKey::client(name))
        };
        self.sessions.push(SessionPlan {
            name: name.to_owned(),
            key,
            cancel_after,
        });
        u32::try_from(self.sessions.len() - 1).expect("fewer than 2^32 sessions")
    }

    /// How many sessions: the named ones and every group's.
    pub fn session_count(&self) -> u32 {
        let named = u32::try_from(self.sessions.len()).expect("fewer than 2^32 sessions");
        self.groups.iter().fold(named, |n, g| n.saturating_add(g.sessions))
    }

    /// The group session `s` belongs to, with its number there (`None`: a named session).
    pub fn group_of(&self, s: u32) -> Option<(&GroupPlan, u32)> {
        self.groups
            .iter()
            .find(|g| s >= g.first_session && s - g.first_session < g.sessions)
            .map(|g| (g, s - g.first_session))
    }

    /// Session `s`'s name.
    pub fn session_name(&self, s: u32) -> std::borrow::Cow<'_, str> {
        match self.sessions.get(s as usize) {
            Some(plan) => std::borrow::Cow::Borrowed(plan.name.as_str()),
            None => std::borrow::Cow::Owned(self.group_of(s).map_or_else(String::new, |(g, n)| g.name(n))),
        }
    }

    /// Session `s` as a plan: a named session's own, a generated one's made up.
    pub fn session_plan(&self, s: u32) -> SessionPlan {
        match self.sessions.get(s as usize) {
            Some(plan) => plan.clone(),
            None => {
                let (name, cancel_after) = self
                    .group_of(s)
                    .map_or_else(|| (String::new(), None), |(g, n)| (g.name(n), g.cancel_after));
                SessionPlan {
                    key: SessionKey::client(&name),
                    name,
                    cancel_after,
                }
            }
        }
    }

    /// Every session as a plan, in order (for small runs: a generated session's plan is
    /// made up here).
    pub fn session_plans(&self) -> Vec<SessionPlan> {
        (0..self.session_count()).map(|s| self.session_plan(s)).collect()
    }

    /// Open-loop calls: a trace's and the series'.
    pub fn open_total(&self) -> u64 {
        self.open_calls.len() as u64 + self.series.iter().map(OpenSeries::len).sum::<u64>()
    }

    /// Whether any call carries a key, so that identical requests exist (deduplication
    /// is simulated, and reports show its columns).
    pub fn has_keys(&self) -> bool {
        self.open_calls
            .iter()
            .any(|c| c.key.is_some() || c.then.as_ref().is_some_and(|t| t.key.is_some()))
            || self
                .series
                .iter()
                .any(|s| !matches!(s.keys, SeriesKeys::Distinct) && !s.is_empty())
            || self.agents.iter().any(|a| a.steps.iter().any(|s| !s.keys.is_empty()))
            || self.groups.iter().any(|g| g.draw.keyed() && g.sessions > 0)
    }

    /// The first platform a call names that [`Workload::platforms`] does not list.
    pub fn unlisted_platform(&self) -> Option<PlatformId> {
        let named = self.open_calls.iter().map(|c| c.platform);
        let named = named.chain(self.series.iter().map(|s| s.platform));
        let named = named.chain(self.groups.iter().flat_map(|g| g.draw.platforms()));
        let mut named = named.chain(self.agents.iter().flat_map(|a| a.steps.iter().map(|s| s.platform)));
        named.find(|&id| !self.platforms.iter().any(|p| p.id == id))
    }

    /// The index reported for open-loop call `i`.
    pub fn open_index(&self, i: usize) -> u64 {
        self.open_call_index.get(i).copied().unwrap_or(i as u64)
    }

    /// The highest index an open-loop call uses, plus one: agent calls start here.
    pub fn first_agent_index(&self) -> u64 {
        self.open_call_index
            .iter()
            .max()
            .map_or(self.open_total(), |&m| (m + 1).max(self.open_total()))
    }
}

/// Where a session's calls get their keys.
enum KeySource {
    None,
    One(String),
    Cycle(Vec<String>, usize),
    Pool(u32),
}

impl KeySource {
    fn of_session(s: &SessionSpec) -> KeySource {
        match (&s.key, s.keys.is_empty(), s.key_pool) {
            (Some(k), _, _) => KeySource::One(k.clone()),
            (None, false, _) => KeySource::Cycle(s.keys.clone(), 0),
            (None, true, Some(n)) => KeySource::Pool(n),
            (None, true, None) => KeySource::None,
        }
    }

    /// What the `len` calls of a series ask: the entry's own key, else the session's,
    /// drawn now and in order from a pool or a list.
    fn for_series(&mut self, entry: Option<&str>, len: u64, rng: &mut crate::rng::SimRng) -> SeriesKeys {
        match (entry, &*self) {
            (Some(key), _) => SeriesKeys::Same(key.to_owned()),
            (None, KeySource::None) => SeriesKeys::Distinct,
            (None, KeySource::One(key)) => SeriesKeys::Same(key.clone()),
            (None, _) => SeriesKeys::Each((0..len).filter_map(|_| self.next(rng)).collect()),
        }
    }

    fn next(&mut self, rng: &mut crate::rng::SimRng) -> Option<String> {
        match self {
            KeySource::None => None,
            KeySource::One(k) => Some(k.clone()),
            KeySource::Cycle(keys, i) => {
                let k = keys[*i % keys.len()].clone();
                *i += 1;
                Some(k)
            }
            KeySource::Pool(n) => Some(pool_key(rng, *n)),
        }
    }
}

impl Workload {
    /// Applies a what-if limit: the service it names enforces it and BesluitBron keeps it.
    /// A platform the workload does not list joins its platforms, last, with no calls; a
    /// service none of its platforms calls, or a text service of a platform with one
    /// service, is refused.
    pub fn set_limit(&mut self, l: LimitOverride) -> Result<(), String> {
        let service = match l.target {
            LimitTarget::Service(id) => {
                if !self.platforms.iter().any(|p| p.service_ids().contains(&id)) {
                    return Err(format!("--limit {id}: no platform of the run calls it"));
                }
                id
            }
            LimitTarget::Platform { platform, text } => {
                if !self.platforms.iter().any(|p| p.id == platform) {
                    self.platforms.push(PlatformSpec::default_for(platform));
                }
                let spec = self.platforms.iter().find(|p| p.id == platform).expect("listed above");
                let services = spec.service_ids();
                match services.get(usize::from(text)) {
                    Some(&s) => s,
                    None => return Err(format!("--limit {platform}/text: {platform} calls one service")),
                }
            }
        };
        let entry = match self.services.iter().position(|e| e.id == service) {
            Some(i) => &mut self.services[i],
            None => {
                self.services.push(ServiceSpec::of(service));
                self.services.last_mut().expect("just pushed")
            }
        };
        entry.capacity = Some(l.capacity);
        entry.window_s = Some(l.window_s);
        entry.local_capacity = Some(l.capacity);
        entry.local_window_s = Some(l.window_s);
        Ok(())
    }

    /// Drops a recording's answers: the platforms' latency models answer instead.
    pub fn forget_recorded_answers(&mut self) {
        if let Some(r) = self.recorded.as_mut() {
            r.flights.clear();
        }
    }
}

/// What a recorded trace brings besides its calls.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// The earliest `at_ms` of the recording: instant 0 of the replay.
    pub base_ms: u64,
    /// Per (platform, operation (default `search`), key): the attempts of each of its flights, in the
    /// order the flights' first calls arrived, instants relative to `base_ms`.
    pub flights: BTreeMap<(PlatformId, String, String), Vec<Vec<RecordedAttempt>>>,
    /// The margin the server held back of each limit's burst (its `MarginSecs`, 1 s by
    /// default: `C × margin / W` units), so the replay keeps the bucket the server kept.
    pub margin: Duration,
    /// The server's platform time-out (its `TimeoutMs`, 15 s by default): a flight is tried
    /// again only within three times this of its first attempt, in the server and so in
    /// the replay.
    pub timeout: Duration,
    /// When the server's process restarted (ms from the recording's first call): each
    /// platform's requests are numbered afresh from there. The replay restarts its paths
    /// there too.
    pub restarts: Vec<u64>,
    /// The last instant each process was heard of (ms from the recording's first call;
    /// one per process, the last included): a process that was killed ended just after,
    /// and the replay ends its paths there, not at the restart, as the server's ended.
    pub ends: Vec<u64>,
    /// Per platform, the stretches between restarts ([`Segment`]), each with where the
    /// recording may lack what that process did.
    pub segments: BTreeMap<PlatformId, Vec<Segment>>,
}

impl Recorded {
    /// The retries of the server that made the recording: its attempts (three), within
    /// three times its platform time-out of a flight's first attempt, as its paths retry.
    pub fn retry(&self) -> besluitbron_core::path::RetryPolicy {
        besluitbron_core::path::RetryPolicy {
            deadline_ms: u64::try_from(self.timeout.as_millis().saturating_mul(3)).unwrap_or(u64::MAX),
            ..besluitbron_core::path::RetryPolicy::default()
        }
    }
}

/// One process's stretch of a recording at one platform: from its start (the recording's,
/// or a restart) to the next restart (or the end), and from where in it the recording may
/// lack what the process did ([`BlindSpot`]): the fidelity check takes a divergence from
/// there on as explained, not as a failure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Segment {
    /// Its start, ms from the recording's first call.
    pub from_ms: u64,
    /// The next restart, if there is one.
    pub until_ms: Option<u64>,
    /// From where the recording may lack an admission of this process.
    pub blind: Option<BlindSpot>,
}

/// From where a recording no longer holds everything one platform's task did, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlindSpot {
    /// The instant, ms from the recording's first call.
    pub at_ms: u64,
    /// Why, in a sentence.
    pub why: String,
}
