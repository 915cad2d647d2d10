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
//!
//! Rooms: the scenario file, its parts and their checks here; what a platform's and a
//! service's entries say (`specs.rs`); the services of a run, made of the table and those
//! entries (`services.rs`); generated groups, drawn round by round as the run reaches them
//! (`groups.rs`); the workload a scenario expands into, and what a recording brings
//! (`workload.rs`); the trace's lines (`trace.rs`).
//!
//! What this module does not do: it does not run anything or read the clock.

use std::path::Path;

use besluitbron_core::identity::IdentityRule;
use besluitbron_core::{PlatformId, ServiceId, Units};
use serde::Deserialize;

mod groups;
mod services;
mod specs;
mod trace;
mod workload;

pub use groups::{AgentStep, GroupCursor, GroupPlan, GroupSession, GroupSpec, RhythmSpec, RoundDraw, Starts};
pub use services::{RunService, RunServices, TEXT_OP};
pub use specs::{LatencySpec, LimitModel, PlatformSpec, ServiceSpec, ThrottleSpec, states_its_budget_by_default};
pub use trace::{SERVER_MARGIN, SERVER_TIMEOUT, load_trace, parse_trace};
pub use workload::{AgentPlan, BlindSpot, OpenCall, OpenSeries, Recorded, Segment, SeriesKeys, SessionPlan, Workload};

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

    /// The platform a session's calls go to unless an entry names another: its own, else
    /// the first the scenario lists.
    fn session_platform(&self, s: &SessionSpec) -> Option<PlatformId> {
        s.platform.or(self.platforms.first().map(|p| p.id))
    }
}

pub use besluitbron_core::record::{AttemptOutcome, FollowUp, RecordedAttempt, TraceLine};

fn read(path: &Path) -> Result<String, InputError> {
    std::fs::read_to_string(path).map_err(|source| InputError::Read {
        path: path.display().to_string(),
        source,
    })
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
