//! `besluitbron-sim plan`: a capacity question answered. A traffic model — sessions per
//! day over so many days (with a daily and weekly rhythm), rounds and calls per round per
//! session, the platform mix, the replicas — becomes a generated workload, runs under the
//! fair policy (the server's own path) with every invariant checked, and its aggregates
//! answer, per upstream service (each limit BesluitBron keeps, whose budget the platforms
//! that call the service share) and per platform: how long calls wait for their turn
//! (p50, p99, max) and the share of the time calls waited for a limit, over the whole
//! period and hour by hour. The answer is a table, JSON ([`PlanAnswer`]) or a page
//! ([`html::render`]).
//!
//! Replicas share each service's budget (one owner per budget group holds the lease,
//! every other replica forwards to it), so the waits are those of one process whatever
//! the replicas; the answer says which share of the calls a follower forwards.
//!
//! Invariants: the answer is made from the run's aggregates alone (memory follows the
//! calls in flight, never the calls made); a model reproduces its answer exactly (its
//! seed). A service's line counts the calls that reached it, whichever platform's; a
//! platform's line its own calls, at whichever of its services, and the time any of them
//! waited for a limit.
//!
//! What it does not model: BesluitBron's own CPU and memory, the network between replicas
//! and to the platforms (each platform's latency model stands for the whole answer time),
//! a replica's handover, the buffer's hits (every call a distinct question), client
//! limits.

pub mod html;

use std::path::Path;
use std::time::Duration;

use besluitbron_core::{LimitConfig, PlatformId, Units};
use serde::{Deserialize, Serialize};

use crate::aggregate::{Scope, ScopeSummary, Summary};
use crate::engine::{Failure, Footprint, RunOptions, RunOutcome, run_with};
use crate::policy::PolicyKind;
use crate::scenario::{GroupSpec, InputError, PlatformSpec, RhythmSpec, Scenario, ServiceSpec};

/// A day in milliseconds.
const DAY_MS: u64 = 86_400_000;

/// A traffic model (TOML): what a capacity question is about.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrafficModel {
    /// One line.
    pub description: String,
    /// The seed the traffic is drawn with.
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Replicas serving the traffic (default one).
    #[serde(default = "default_replicas")]
    pub replicas: u32,
    /// The traffic.
    pub traffic: Traffic,
    /// Platforms as a scenario lists them (limits, latency, faults), for those of the mix
    /// that are not as the real platforms are; the others run with their defaults.
    #[serde(default, rename = "platform")]
    pub platforms: Vec<PlatformSpec>,
    /// Services as a scenario lists them (`[[service]]`: the limit of a service several
    /// platforms of the mix call), for those that are not as the real ones are.
    #[serde(default, rename = "service")]
    pub services: Vec<ServiceSpec>,
}

/// The sessions of a traffic model.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Traffic {
    /// How many days.
    pub days: u32,
    /// Sessions starting per day, on average.
    pub sessions_per_day: u32,
    /// Rounds per session, uniform in the inclusive range.
    pub rounds: [u32; 2],
    /// Calls per round (at once), uniform in the inclusive range.
    #[serde(default = "default_fan_out")]
    pub fan_out: [u32; 2],
    /// Think time after a round's answers, uniform in the inclusive range.
    pub think_ms: [u64; 2],
    /// A call still waiting this long is withdrawn (the client gave up).
    pub cancel_after_ms: Option<u64>,
    /// Units per call, one picked uniformly per round (default 1).
    #[serde(default = "default_costs")]
    pub costs: Vec<Units>,
    /// Each platform's share of the rounds (relative weights).
    #[serde(deserialize_with = "crate::ids::deserialize_weights")]
    pub mix: Vec<(PlatformId, u32)>,
    /// When sessions start: by the hour of the day and the day of the week (day 0 a
    /// Monday); default uniformly over the days.
    pub rhythm: Option<RhythmSpec>,
}

fn default_seed() -> u64 {
    1
}

fn default_replicas() -> u32 {
    1
}

fn default_fan_out() -> [u32; 2] {
    [1, 1]
}

fn default_costs() -> Vec<Units> {
    vec![Units::ONE]
}

impl TrafficModel {
    /// Parses a model (`path` names it in errors).
    pub fn parse(text: &str, path: &str) -> Result<TrafficModel, InputError> {
        let model: TrafficModel = toml::from_str(text).map_err(|source| InputError::Toml {
            path: path.to_owned(),
            source: Box::new(source),
        })?;
        let bad = |m: &str| Err(InputError::Invalid(format!("{path}: {m}")));
        let t = &model.traffic;
        if model.replicas == 0 {
            return bad("replicas must be at least 1");
        }
        if t.days == 0 || t.sessions_per_day == 0 {
            return bad("traffic.days and traffic.sessions_per_day must be at least 1");
        }
        if t.days.checked_mul(t.sessions_per_day).is_none() {
            return bad("fewer than 2^32 sessions, please");
        }
        if let Some(p) = model
            .platforms
            .iter()
            .find(|p| !t.mix.iter().any(|(id, _)| *id == p.id))
        {
            return bad(&format!("platform `{}` is listed but not in traffic.mix", p.id));
        }
        // What else can be wrong, the scenario it makes says.
        model
            .scenario()
            .validate()
            .map_err(|e| InputError::Invalid(format!("{path}: {e}")))?;
        Ok(model)
    }

    /// Reads and parses a model file.
    pub fn load(path: &Path) -> Result<TrafficModel, InputError> {
        let text = std::fs::read_to_string(path).map_err(|source| InputError::Read {
            path: path.display().to_string(),
            source,
        })?;
        TrafficModel::parse(&text, &path.display().to_string())
    }

    /// The scenario the model is: its mix's platforms (as listed, else the real ones), one
    /// group of generated agent sessions.
    pub fn scenario(&self) -> Scenario {
        let t = &self.traffic;
        let platforms = t
            .mix
            .iter()
            .map(|(id, _)| {
                self.platforms
                    .iter()
                    .find(|p| p.id == *id)
                    .cloned()
                    .unwrap_or_else(|| PlatformSpec::default_for(*id))
            })
            .collect();
        Scenario {
            description: self.description.clone(),
            seed: self.seed,
            legacy_slip_probability: 0.0,
            identity: Default::default(),
            platforms,
            services: self.services.clone(),
            sessions: Vec::new(),
            groups: vec![GroupSpec {
                prefix: "session".to_owned(),
                sessions: t.days * t.sessions_per_day,
                start_ms: [0, u64::from(t.days) * DAY_MS],
                calls: t.rounds,
                think_ms: t.think_ms,
                fan_out: Some(t.fan_out),
                platforms: t.mix.clone(),
                costs: t.costs.clone(),
                op: Some("tool-call".to_owned()),
                cancel_after_ms: t.cancel_after_ms,
                key_pool: None,
                rhythm: t.rhythm.clone(),
            }],
        }
    }
}

/// One service's or platform's answer.
#[derive(Clone, Debug, Serialize)]
pub struct ScopeAnswer {
    /// `service` or `platform`.
    pub kind: &'static str,
    /// Its id: `koop-zoekservice`, `bwb`.
    pub scope: String,
    /// Its name for people: a service's (with the platforms that call it), a platform's
    /// public name.
    pub name: String,
    /// A service's limit BesluitBron keeps there: units per window (seconds); a
    /// platform's: none (its services say).
    pub limit: Option<(f64, f64)>,
    /// Calls admitted (each waited, if only zero seconds).
    pub calls: u64,
    /// The median wait for a turn, in seconds (within the histogram's precision).
    pub wait_p50_s: f64,
    /// The 99th percentile, in seconds (within the histogram's precision).
    pub wait_p99_s: f64,
    /// The longest, in seconds (exact).
    pub wait_max_s: f64,
    /// The share of the period during which calls waited for the limit (a platform's: for
    /// any limit of its services).
    pub at_limit: f64,
    /// Over time: each stretch's start (s), its share of time at the limit, its calls'
    /// mean wait (s) and calls admitted.
    pub series: Vec<Stretch>,
}

/// One stretch of a limit's time series.
#[derive(Clone, Copy, Debug, Serialize)]
pub struct Stretch {
    /// Its start, seconds into the period.
    pub from_s: f64,
    /// Its length, seconds.
    pub width_s: f64,
    /// Share of it during which calls waited for the limit.
    pub at_limit: f64,
    /// Its admitted calls' mean wait, seconds.
    pub mean_wait_s: f64,
    /// Calls admitted in it.
    pub calls: u64,
}

/// The answer to a traffic model.
#[derive(Clone, Debug, Serialize)]
pub struct PlanAnswer {
    /// The model's name (its file's stem).
    pub name: String,
    /// Its description.
    pub description: String,
    /// The seed.
    pub seed: u64,
    /// Replicas.
    pub replicas: u32,
    /// Of the calls, the share a follower forwards to the owner (`(N − 1) / N` of them,
    /// spread by a hash over N replicas); each such call takes a round trip between
    /// replicas more.
    pub forwarded: f64,
    /// Days, sessions and calls made.
    pub days: u32,
    /// Sessions in the period.
    pub sessions: u32,
    /// Calls made.
    pub calls: u64,
    /// Calls withdrawn because their client gave up waiting.
    pub gave_up: u64,
    /// The period simulated, seconds (to the last answer).
    pub period_s: f64,
    /// Per service that got calls, in the run's order (every platform's first service in
    /// the mix's order, then their text services).
    pub services: Vec<ScopeAnswer>,
    /// Per platform of the mix, in its order.
    pub platforms: Vec<ScopeAnswer>,
    /// Events checked against every invariant.
    pub events: u64,
}

/// Answers `model` (named `name`); a broken invariant is the run's [`Failure`].
pub fn answer(name: &str, model: &TrafficModel, progress: bool) -> Result<PlanAnswer, Box<Failure>> {
    let scenario = model.scenario();
    let workload = scenario.workload(model.seed);
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: model.seed,
        keep_trace: false,
        progress,
    };
    let run = run_with(name, &workload, opts, Footprint::lean())?;
    Ok(answer_of(name, model, &run))
}

fn answer_of(name: &str, model: &TrafficModel, run: &RunOutcome) -> PlanAnswer {
    let period = run.end_at.as_nanos() as f64 / 1e9;
    let s: &Summary = &run.summary;
    let over = Duration::from_nanos(run.end_at.as_nanos());
    // The services that got calls (a text service no call of the mix used has nothing to
    // say), and every platform.
    let services = s
        .scopes
        .iter()
        .filter_map(|sc| match &sc.scope {
            Scope::Service(id) => run
                .services
                .iter()
                .find(|o| o.id == *id)
                .map(|o| scope_answer(sc, "service", o.label(), o.local_limit, over)),
            Scope::Platform(_) => None,
        })
        .collect();
    let platforms = s
        .scopes
        .iter()
        .filter_map(|sc| match &sc.scope {
            Scope::Platform(id) => Some(scope_answer(sc, "platform", id.display_name().to_owned(), None, over)),
            Scope::Service(_) => None,
        })
        .collect();
    PlanAnswer {
        name: name.to_owned(),
        description: model.description.clone(),
        seed: model.seed,
        replicas: model.replicas,
        forwarded: f64::from(model.replicas - 1) / f64::from(model.replicas),
        days: model.traffic.days,
        sessions: s.sessions_total,
        calls: run.platforms.iter().map(|p| p.calls).sum(),
        gave_up: s.totals.cancelled,
        period_s: period,
        services,
        platforms,
        events: run.events,
    }
}

fn scope_answer(
    sc: &ScopeSummary,
    kind: &'static str,
    name: String,
    limit: Option<LimitConfig>,
    over: Duration,
) -> ScopeAnswer {
    let width = sc.series.width();
    let series = sc
        .series
        .buckets()
        .iter()
        .enumerate()
        .map(|(i, b)| Stretch {
            from_s: width.as_secs_f64() * i as f64,
            width_s: width.as_secs_f64(),
            at_limit: (b.at_limit_ns as f64 / 1e9 / width.as_secs_f64()).clamp(0.0, 1.0),
            mean_wait_s: if b.admitted == 0 {
                0.0
            } else {
                b.wait_sum_us as f64 / b.admitted as f64 / 1e6
            },
            calls: b.admitted,
        })
        .collect();
    let secs = |us: u64| us as f64 / 1e6;
    ScopeAnswer {
        kind,
        scope: sc.scope.label(),
        name,
        limit: limit.map(|l| (l.capacity.as_milli() as f64 / 1000.0, l.window.as_secs_f64())),
        calls: sc.waits.count(),
        wait_p50_s: secs(sc.waits.quantile_us(0.5)),
        wait_p99_s: secs(sc.waits.quantile_us(0.99)),
        wait_max_s: secs(sc.waits.max_us()),
        at_limit: sc.at_limit_share(over),
        series,
    }
}

impl PlanAnswer {
    /// The answer as a table.
    pub fn render(&self) -> String {
        use std::fmt::Write as _;
        let mut out = String::new();
        let _ = writeln!(out, "plan {} · seed {} · {}", self.name, self.seed, self.description);
        let _ = writeln!(
            out,
            "{} days, {} sessions, {} calls; {} replica(s): one budget per service, {:.0}% of the calls \
             forwarded to its owner",
            self.days,
            self.sessions,
            self.calls,
            self.replicas,
            self.forwarded * 100.0
        );
        let _ = writeln!(out);
        for (heading, list) in [("service", &self.services), ("platform", &self.platforms)] {
            let _ = writeln!(
                out,
                "{:<18} {:>10} {:>9} {:>9} {:>10} {:>9}",
                heading, "calls", "wait p50", "wait p99", "wait max", "at limit"
            );
            for s in list {
                let _ = writeln!(
                    out,
                    "{:<18} {:>10} {:>8.3}s {:>8.3}s {:>9.3}s {:>8.1}%",
                    s.scope,
                    s.calls,
                    s.wait_p50_s,
                    s.wait_p99_s,
                    s.wait_max_s,
                    s.at_limit * 100.0
                );
            }
            let _ = writeln!(out);
        }
        let _ = writeln!(
            out,
            "{} calls gave up waiting; invariants held after each of {} events",
            self.gave_up, self.events
        );
        out
    }
}
