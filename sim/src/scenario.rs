//! Scenario files (`sim/scenarios/*.toml`) and JSON Lines traces: the simulator's two
//! public input formats, parsed into one [`Workload`].
//!
//! A scenario lists the run's platforms (the services they call, limit model, latency,
//! throttling faults, whether answers state the budget), the services where it says more
//! than a platform's entry can (`[[service]]`: a service several platforms call), and the
//! sessions: bursts (n calls at one instant), steady
//! rates (one call every x ms), agent loops (call, wait for the answer, think, call again)
//! and generated groups of agent sessions. A trace is one call per line
//! (`{"at_ms":0,"session":"a","platform":"obv","cost":1,"op":"search"}`). Both formats are
//! documented in `sim/README.md`.
//!
//! Invariants: parsing is strict (unknown fields are errors, and so is a call to a
//! platform the scenario does not list); a run's platforms are the scenario's, in its
//! order, or a trace's, those its calls name, never every platform the core has an id
//! for; every random choice a scenario makes is drawn here from the workload sub-seed,
//! before the run starts, so both policies see the same offered sessions. Nothing here
//! depends on the policy.
//!
//! What this module does not do: it does not run anything or read the clock.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::identity::IdentityRule;
use besluitbron_core::{Instant, PlatformId, ServiceId, SessionKey, Units};
use serde::Deserialize;

use crate::rng::{Component, sim_rng};

mod groups;
mod services;
mod specs;

use groups::pool_key;
pub use groups::{AgentStep, GroupCursor, GroupPlan, GroupSession, GroupSpec, RhythmSpec, RoundDraw, Starts};
pub use services::{RunService, RunServices, TEXT_OP};
pub use specs::{LatencySpec, LimitModel, PlatformSpec, ServiceSpec, ThrottleSpec, states_its_budget_by_default};

/// A scenario or trace that cannot be used, with the place it went wrong.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
    /// The scenario is not valid TOML for the format.
    #[error("{path}: {source}")]
    Toml {
        /// The file.
        path: String,
        /// The parser's message (with line and column).
        source: Box<toml::de::Error>,
    },
    /// A trace line is not valid JSON for the format.
    #[error("{path}:{line}: {source}")]
    Json {
        /// The file.
        path: String,
        /// 1-based line number.
        line: usize,
        /// The parser's message.
        source: serde_json::Error,
    },
    /// The input parsed but describes something the simulator cannot run.
    #[error("{0}")]
    Invalid(String),
}

/// `n` calls at one instant, and again every `every_ms` until `until_ms` when given (a
/// flood that comes back: a harvester's nightly run, a client retrying in bulk).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BurstSpec {
    /// When.
    pub at_ms: u64,
    /// How many calls.
    pub calls: u32,
    /// The burst comes again this long after the previous one (with `until_ms`).
    pub every_ms: Option<u64>,
    /// No burst at or after this instant (with `every_ms`).
    pub until_ms: Option<u64>,
    /// Cost per call; default the session's.
    pub cost: Option<Units>,
    /// Platform; default the session's.
    #[serde(default, deserialize_with = "crate::ids::deserialize_option")]
    pub platform: Option<PlatformId>,
    /// What every call of this entry asks (its cache key); default the session's keys.
    pub key: Option<String>,
}

/// One call every `every_ms` from `from_ms` (inclusive) to `to_ms` (exclusive).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SteadySpec {
    /// Spacing.
    pub every_ms: u64,
    /// First call.
    pub from_ms: u64,
    /// End (exclusive).
    pub to_ms: u64,
    /// Cost per call; default the session's.
    pub cost: Option<Units>,
    /// Platform; default the session's.
    #[serde(default, deserialize_with = "crate::ids::deserialize_option")]
    pub platform: Option<PlatformId>,
    /// What every call of this entry asks (its cache key); default the session's keys.
    pub key: Option<String>,
}

/// A closed loop: `calls` times, send `fan_out` calls, wait for all answers, think.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentSpec {
    /// When the first call goes.
    pub at_ms: u64,
    /// How many rounds.
    pub calls: u32,
    /// Think time after each round's answers.
    #[serde(default)]
    pub think_ms: u64,
    /// Calls per round (default 1).
    pub fan_out: Option<u32>,
    /// Cost per call; default the session's.
    pub cost: Option<Units>,
    /// Platform; default the session's.
    #[serde(default, deserialize_with = "crate::ids::deserialize_option")]
    pub platform: Option<PlatformId>,
    /// What every call of this entry asks (its cache key); default the session's keys.
    pub key: Option<String>,
}

/// One named session.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SessionSpec {
    /// The session's name; `system` is BesluitBron's own session (R-L7).
    pub name: String,
    /// The authenticated user it calls as (with `identity = "per-user"`); default its name.
    pub user: Option<String>,
    /// The client address it calls from (with `identity = "per-address"` or
    /// `"per-user"`); default its name.
    pub address: Option<String>,
    /// Default platform of its calls; default: the first platform the scenario lists.
    #[serde(default, deserialize_with = "crate::ids::deserialize_option")]
    pub platform: Option<PlatformId>,
    /// Default cost of its calls.
    #[serde(default = "default_cost")]
    pub cost: Units,
    /// Operation label for the admissions log.
    pub op: Option<String>,
    /// A queued call still waiting this long after submission is withdrawn.
    pub cancel_after_ms: Option<u64>,
    /// What every call asks: one key for all calls. Calls without a key are all distinct.
    pub key: Option<String>,
    /// Keys the calls ask in turn (cycled in the order the calls are listed).
    #[serde(default)]
    pub keys: Vec<String>,
    /// Each call asks a key drawn uniformly from `k0` .. `k{N-1}` (seeded).
    pub key_pool: Option<u32>,
    /// Bursts.
    #[serde(default)]
    pub burst: Vec<BurstSpec>,
    /// Steady rates.
    #[serde(default)]
    pub steady: Vec<SteadySpec>,
    /// Agent loops.
    #[serde(default)]
    pub agent: Vec<AgentSpec>,
}

fn default_cost() -> Units {
    Units::ONE
}

/// A scenario file.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// One line for `besluitbron-sim list`.
    pub description: String,
    /// The seed used when the command line gives none.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// The legacy model's probability that a second waker slips through uncounted.
    #[serde(default = "default_slip")]
    pub legacy_slip_probability: f64,
    /// Who a session is to the fair queues, by the core's rule
    /// ([`besluitbron_core::identity`]): `per-session` (the default: each session its
    /// own caller), `per-address` (sessions of one `address` are one caller, as callers
    /// without a session or a token) or `per-user` (each `user` is one caller).
    #[serde(default)]
    pub identity: IdentityRule,
    /// The run's platforms, in the order listed: a session or group may call only
    /// these, and reports show them in this order.
    #[serde(default, rename = "platform")]
    pub platforms: Vec<PlatformSpec>,
    /// What the scenario says of the services its platforms call, beyond the table and
    /// the platforms' own entries (a service several platforms call is set here).
    #[serde(default, rename = "service")]
    pub services: Vec<ServiceSpec>,
    /// Named sessions.
    #[serde(default, rename = "session")]
    pub sessions: Vec<SessionSpec>,
    /// Generated sessions.
    #[serde(default, rename = "group")]
    pub groups: Vec<GroupSpec>,
}

/// Why a scenario's `who` may not call `id`.
fn unlisted(who: &str, id: PlatformId) -> String {
    format!("{who} calls `{id}`, which the scenario does not list (add a [[platform]] with id = \"{id}\")")
}

fn default_seed() -> u64 {
    1
}

fn default_slip() -> f64 {
    0.02
}

impl Scenario {
    /// Parses a scenario from TOML text; `path` only names it in errors.
    pub fn parse(text: &str, path: &str) -> Result<Scenario, InputError> {
        let scenario: Scenario = toml::from_str(text).map_err(|source| InputError::Toml {
            path: path.to_owned(),
            source: Box::new(source),
        })?;
        scenario.validate()?;
        Ok(scenario)
    }

    /// Reads and parses a scenario file.
    pub fn load(path: &Path) -> Result<Scenario, InputError> {
        let text = read(path)?;
        Scenario::parse(&text, &path.display().to_string())
    }

    pub(crate) fn validate(&self) -> Result<(), InputError> {
        let bad = |m: String| Err(InputError::Invalid(m));
        if !(0.0..=1.0).contains(&self.legacy_slip_probability) {
            return bad("legacy_slip_probability must be between 0 and 1".into());
        }
        let seen = self.validate_platforms()?;
        let mut names = std::collections::BTreeSet::new();
        for s in &self.sessions {
            if !names.insert(s.name.as_str()) {
                return bad(format!("session `{}` is listed twice", s.name));
            }
            if s.steady.iter().any(|st| st.every_ms == 0) {
                return bad(format!("session `{}`: steady every_ms must be above zero", s.name));
            }
            if s.burst
                .iter()
                .any(|b| b.every_ms.is_some() != b.until_ms.is_some() || b.every_ms == Some(0))
            {
                return bad(format!(
                    "session `{}`: a repeated burst gives every_ms (above zero) and until_ms together",
                    s.name
                ));
            }
            let sources =
                usize::from(s.key.is_some()) + usize::from(!s.keys.is_empty()) + usize::from(s.key_pool.is_some());
            if sources > 1 {
                return bad(format!("session `{}`: give one of key, keys and key_pool", s.name));
            }
            if s.key_pool == Some(0) {
                return bad(format!("session `{}`: key_pool must be at least 1", s.name));
            }
            let named = s.burst.iter().map(|b| b.platform);
            let named = named.chain(s.steady.iter().map(|st| st.platform));
            for platform in named.chain(s.agent.iter().map(|a| a.platform)) {
                match platform.or(self.session_platform(s)) {
                    None => return bad(format!("session `{}`: the scenario lists no platform to call", s.name)),
                    Some(id) if !seen.contains(&id) => return bad(unlisted(&format!("session `{}`", s.name), id)),
                    Some(_) => {}
                }
            }
        }
        if self.groups.len() > usize::from(u16::MAX) {
            return bad("at most 65,535 groups".into());
        }
        for g in &self.groups {
            if g.start_ms[0] > g.start_ms[1] || g.calls[0] > g.calls[1] || g.think_ms[0] > g.think_ms[1] {
                return bad(format!("group `{}`: a range has its ends swapped", g.prefix));
            }
            if g.key_pool == Some(0) {
                return bad(format!("group `{}`: key_pool must be at least 1", g.prefix));
            }
            if g.platforms.iter().all(|&(_, w)| w == 0) || g.costs.is_empty() {
                return bad(format!("group `{}`: needs a platform weight and a cost", g.prefix));
            }
            if let Some(&(id, _)) = g.platforms.iter().find(|(id, _)| !seen.contains(id)) {
                return bad(unlisted(&format!("group `{}`", g.prefix), id));
            }
            if let Some([lo, hi]) = g.fan_out
                && (lo == 0 || lo > hi)
            {
                return bad(format!("group `{}`: fan_out must be a range of at least 1", g.prefix));
            }
            if let Some(why) = g.rhythm.as_ref().and_then(RhythmSpec::invalid) {
                return bad(format!("group `{}`: {why}", g.prefix));
            }
        }
        Ok(())
    }

    /// The platform a session's calls go to unless an entry names another: its own, else
    /// the first the scenario lists.
    /// What `validate` checks of the platforms and services: each listed once, sound
    /// windows, latencies, failure rates and throttle periods, services that fit together;
    /// the platforms listed.
    fn validate_platforms(&self) -> Result<std::collections::BTreeSet<PlatformId>, InputError> {
        let bad = |m: String| Err(InputError::Invalid(m));
        let mut seen = std::collections::BTreeSet::new();
        for p in &self.platforms {
            if !seen.insert(p.id) {
                return bad(format!("platform `{}` is listed twice", p.id));
            }
            for w in [p.window_s, p.local_window_s].into_iter().flatten() {
                if !(w.is_finite() && w > 0.0) {
                    return bad(format!("platform `{}`: windows must be positive seconds", p.id));
                }
            }
            if let LatencySpec::Uniform { min_ms, max_ms } = p.latency
                && min_ms > max_ms
            {
                return bad(format!("platform `{}`: latency min_ms exceeds max_ms", p.id));
            }
            if let Some(r) = p.fail_rate
                && !(0.0..=1.0).contains(&r)
            {
                return bad(format!("platform `{}`: fail_rate must be between 0 and 1", p.id));
            }
            for t in &p.throttle {
                if t.from_ms >= t.to_ms {
                    return bad(format!(
                        "platform `{}`: a throttle period must end after it starts",
                        p.id
                    ));
                }
            }
        }
        let mut given = std::collections::BTreeSet::new();
        for entry in &self.services {
            if !given.insert(entry.id) {
                return bad(format!("service `{}` is listed twice", entry.id));
            }
            if let Some(why) = entry.invalid() {
                return bad(why);
            }
        }
        RunServices::of_parts(&self.platforms, &self.services).map_err(InputError::Invalid)?;
        Ok(seen)
    }

    fn session_platform(&self, s: &SessionSpec) -> Option<PlatformId> {
        s.platform.or(self.platforms.first().map(|p| p.id))
    }

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

pub use besluitbron_core::record::{AttemptOutcome, FollowUp, RecordedAttempt, TraceLine};

/// Parses a JSON Lines trace. Blank lines are skipped but keep their number, so a call's
/// index is always its 0-based line number. The run's platforms are those the calls name,
/// with their defaults, in the order of their streams ([`crate::ids::stream`]).
///
/// A trace the server recorded (its lines say how each call ended) starts at its first
/// call: every instant is taken relative to the earliest `at_ms`
/// ([`Workload::recorded`] keeps that base); its calls are submitted in arrival order
/// (`at_ms`, then the server's `seq`), and the flights' attempts become the platforms'
/// answers in the replay ([`Recorded::flights`]).
pub fn parse_trace(text: &str, path: &str) -> Result<Workload, InputError> {
    let mut w = Workload::new(Vec::new(), default_slip());
    let mut sessions: BTreeMap<String, u32> = BTreeMap::new();
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let t: TraceLine = serde_json::from_str(line).map_err(|source| InputError::Json {
            path: path.to_owned(),
            line: i + 1,
            source,
        })?;
        crate::ids::platform(&t.platform).map_err(|m| InputError::Invalid(format!("{path}:{}: {m}", i + 1)))?;
        lines.push((i, t));
    }
    let recorded = lines.iter().any(|(_, t)| t.is_recorded());
    if recorded {
        let base = lines.iter().map(|(_, t)| t.at_ms).min().unwrap_or(0);
        // Arrival order: the server writes a line when its call ends.
        lines.sort_by_key(|(i, t)| (t.at_ms, t.seq.unwrap_or(0), *i));
        let (restarts, segments) = segments_of(lines.iter().map(|(_, t)| t), base);
        let mut r = Recorded {
            base_ms: base,
            flights: BTreeMap::new(),
            margin: SERVER_MARGIN,
            timeout: SERVER_TIMEOUT,
            restarts,
            segments,
        };
        for (_, t) in &lines {
            if !t.attempts.is_empty() {
                let op = t.op.clone().unwrap_or_else(|| "search".to_owned());
                let key = (platform_of(t), op, t.key.clone().unwrap_or_default());
                let attempts = t
                    .attempts
                    .iter()
                    .map(|a| RecordedAttempt {
                        at_ms: a.at_ms.saturating_sub(base),
                        ..*a
                    })
                    .collect();
                r.flights.entry(key).or_default().push(attempts);
            }
        }
        w.recorded = Some(r);
    }
    let base = w.recorded.as_ref().map_or(0, |r| r.base_ms);
    for (i, t) in lines {
        let session = match sessions.get(&t.session) {
            Some(&s) => s,
            None => {
                let s = w.add_session(&t.session, None);
                sessions.insert(t.session.clone(), s);
                s
            }
        };
        let platform = platform_of(&t);
        w.open_call_index.push(i as u64);
        w.open_calls.push(OpenCall {
            at: Instant::from_millis(t.at_ms - base),
            session,
            platform,
            cost: t.cost,
            op: t.op,
            key: t.key,
            then: t.then,
            leave_after: t.left_after_ms.map(Duration::from_millis),
        });
        if !w.platforms.iter().any(|p| p.id == platform) {
            w.platforms.push(PlatformSpec::default_for(platform));
        }
    }
    // Nobody lists a trace's platforms: the order of their streams (the real platforms'
    // table order, `sim/platforms.toml`), then their ids, whichever call came first.
    w.platforms.sort_by_key(|p| (crate::ids::stream(p.id), p.id));
    Ok(w)
}

/// The platform of a trace line whose id [`parse_trace`] checked when it read the line.
fn platform_of(t: &TraceLine) -> PlatformId {
    crate::ids::platform(&t.platform).unwrap_or_else(|e| panic!("checked when the line was read: {e}"))
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
    /// Per platform, the stretches between restarts ([`Segment`]), each with where the
    /// recording may lack what that process did.
    pub segments: BTreeMap<PlatformId, Vec<Segment>>,
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

/// The restarts of a recording and, per platform, its [`Segment`]s, from its lines in
/// arrival order.
///
/// The server numbers each platform's requests from 0 in each process (`seq`) and writes
/// one line per request when it ends, so a number missing from a process's lines is a
/// request whose line is not in the recording — open when the process was killed (its
/// attempts charged the server's bucket all the same), or dropped by a writer that fell
/// behind. From the arrival of the request numbered just before it, the recording may lack
/// an admission. A process that ended before the recording did (the numbers begin again:
/// the server restarted) may have had requests after its last line. A restart is the
/// first arrival of a new process at any platform; every platform's k-th process is taken
/// to be the server's k-th (a recording at a platform that had no request in a process
/// would be misread).
fn segments_of<'a>(
    lines: impl Iterator<Item = &'a TraceLine>,
    base: u64,
) -> (Vec<u64>, BTreeMap<PlatformId, Vec<Segment>>) {
    // Requests of one millisecond may reach the task out of number order; a drop by more
    // than this is a new process.
    const REORDER: u64 = 16;
    #[derive(Default)]
    struct Process {
        /// Arrival of each numbered request.
        seen: BTreeMap<u64, u64>,
        max: u64,
    }
    let mut processes: BTreeMap<PlatformId, Vec<Process>> = BTreeMap::new();
    for t in lines {
        let Some(seq) = t.seq else { continue };
        let at = t.at_ms.saturating_sub(base);
        let list = processes.entry(platform_of(t)).or_default();
        if list.last().is_none_or(|p| seq + REORDER < p.max) {
            list.push(Process::default());
        }
        let p = list.last_mut().expect("pushed");
        p.seen.entry(seq).or_insert(at);
        p.max = p.max.max(seq);
    }
    let first_at = |p: &Process| p.seen.values().copied().min().unwrap_or(0);
    // The k-th restart: the earliest first arrival of any platform's process k.
    let mut restarts: Vec<u64> = Vec::new();
    for list in processes.values() {
        for (k, p) in list.iter().enumerate().skip(1) {
            match restarts.get_mut(k - 1) {
                Some(r) => *r = (*r).min(first_at(p)),
                None => restarts.push(first_at(p)),
            }
        }
    }
    let mut out = BTreeMap::new();
    for (platform, list) in processes {
        // Every platform restarts with the server: as many stretches as processes.
        let segments = (0..=restarts.len())
            .map(|i| Segment {
                from_ms: if i == 0 { 0 } else { restarts[i - 1] },
                until_ms: restarts.get(i).copied(),
                blind: list
                    .get(i)
                    .and_then(|p| process_blind_spot(platform, &p.seen, p.max, i < restarts.len())),
            })
            .collect();
        out.insert(platform, segments);
    }
    (restarts, out)
}

/// From where one process's lines at `platform` (the arrival of each numbered request
/// seen, the highest number) may lack an admission: the request before the first number
/// missing, or (`ended`: a later process followed) the last request, after which requests
/// were open when it stopped.
fn process_blind_spot(platform: PlatformId, seen: &BTreeMap<u64, u64>, max: u64, ended: bool) -> Option<BlindSpot> {
    let first_at = seen.values().copied().min().unwrap_or(0);
    let mut spot: Option<BlindSpot> = None;
    let mut consider = |at_ms: u64, why: String| {
        if spot.as_ref().is_none_or(|s| at_ms < s.at_ms) {
            spot = Some(BlindSpot { at_ms, why });
        }
    };
    // From the first number recorded: a recording whose oldest files were rotated away
    // starts in the middle of a process.
    let from = seen.keys().next().copied().unwrap_or(0);
    if let Some(n) = (from..max).find(|n| !seen.contains_key(n)) {
        let after = seen.range(..n).next_back().map_or(first_at, |(_, &at)| at);
        consider(
            after,
            format!(
                "request {n} of {platform} is not in the recording (open when the server stopped, or dropped \
                 by its writer); its attempts charged the server's bucket"
            ),
        );
    }
    if ended {
        let at = seen.get(&max).copied().unwrap_or(first_at);
        consider(
            at,
            format!("{platform}'s requests after {max} were open when the server stopped"),
        );
    }
    spot
}

/// The server's default `MarginSecs`: what a recorded trace is replayed with unless told.
pub const SERVER_MARGIN: Duration = Duration::from_secs(1);

/// The server's default platform `TimeoutMs`: what a recorded trace is replayed with unless
/// told (its retries stop three times this after a flight's first attempt).
pub const SERVER_TIMEOUT: Duration = Duration::from_secs(15);

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

/// Reads and parses a JSON Lines trace file.
pub fn load_trace(path: &Path) -> Result<Workload, InputError> {
    let text = read(path)?;
    parse_trace(&text, &path.display().to_string())
}

fn read(path: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(path).map_err(|source| InputError::Read {
        path: path.display().to_string(),
        source,
    })
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
    fn new(platforms: Vec<PlatformSpec>, legacy_slip_probability: f64) -> Workload {
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

    fn add_session(&mut self, name: &str, cancel_after: Option<Duration>) -> u32 {
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

/// The scenarios in `dir` as (name, description), sorted by name.
pub fn scenarios_dir_entries(dir: &Path) -> Result<Vec<(String, String)>, InputError> {
    let entries = std::fs::read_dir(dir).map_err(|source| InputError::Read {
        path: dir.display().to_string(),
        source,
    })?;
    let mut list = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|source| InputError::Read {
                path: dir.display().to_string(),
                source,
            })?
            .path();
        if path.extension().is_some_and(|e| e == "toml") {
            let scenario = Scenario::load(&path)?;
            let name = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            list.push((name, scenario.description));
        }
    }
    list.sort();
    Ok(list)
}

/// A what-if limit for a replay or run (`--limit obv=30/60s`, `--limit ob/text=5/30s`,
/// `--limit koop-zoekservice=15/30s`): the service enforces C per W and BesluitBron keeps
/// the same.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LimitOverride {
    /// Which service.
    pub target: LimitTarget,
    /// C.
    pub capacity: Units,
    /// W in seconds.
    pub window_s: f64,
}

/// What a what-if limit names: a platform's first service (its text service with
/// `/text`), or a service by its id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LimitTarget {
    /// A platform's first service, or its second (`text`).
    Platform {
        /// The platform.
        platform: PlatformId,
        /// Its text service instead of its first.
        text: bool,
    },
    /// A service by its id.
    Service(ServiceId),
}

impl std::str::FromStr for LimitOverride {
    type Err = String;

    fn from_str(s: &str) -> Result<LimitOverride, String> {
        let usage = || {
            format!(
                "`{s}`: a limit is PLATFORM=C/W or SERVICE=C/W, e.g. obv=30/60s, ob/text=5/30s or \
                 koop-zoekservice=15/30s"
            )
        };
        let (target, limit) = s.split_once('=').ok_or_else(usage)?;
        let target = target.trim();
        // A what-if names a real platform or service (`sim/platforms.toml`): one a trace
        // can hold.
        let real_platform = |p: &str| crate::ids::platform(p).ok().filter(|p| crate::ids::known(*p).is_some());
        let target = match target.split_once('/') {
            Some((p, "text")) => LimitTarget::Platform {
                platform: real_platform(p.trim()).ok_or_else(usage)?,
                text: true,
            },
            Some(_) => return Err(usage()),
            None => match real_platform(target) {
                Some(platform) => LimitTarget::Platform { platform, text: false },
                None => LimitTarget::Service(
                    crate::ids::service(target)
                        .ok()
                        .filter(|s| crate::ids::known_service(*s).is_some())
                        .ok_or_else(usage)?,
                ),
            },
        };
        let (c, w) = limit.split_once('/').ok_or_else(usage)?;
        let capacity = Units::from_decimal_str(c.trim()).map_err(|_| usage())?;
        let w = w.trim();
        let window_s: f64 = w.strip_suffix('s').unwrap_or(w).parse().map_err(|_| usage())?;
        if capacity.is_zero() || !(window_s.is_finite() && window_s > 0.0) {
            return Err(format!("`{s}`: C and W must be above zero"));
        }
        Ok(LimitOverride {
            target,
            capacity,
            window_s,
        })
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
