//! From a workload's platforms to the stations a run drives: each platform's enforced
//! limits, and the core's path built for it exactly as the server builds its own.
//!
//! What this module does not do: decide which platforms a run has (the workload lists
//! them, [`Workload::platforms`](crate::scenario::Workload::platforms)).

use std::time::Duration;

use besluitbron_core::cache::{CachePolicy, CacheVersion, MemoryStore};
use besluitbron_core::path::{Lane, LaneConfig, PathConfig, PlatformPath, RetryPolicy, Shell, StoreBuffer};
use besluitbron_core::scheduler::MAX_REQUEUE_WAIT;
use besluitbron_core::{LimitConfig, PlatformId, SchedulerConfig, SessionKey, Units};

use super::outcome::{RunOptions, SimError};
use crate::platform::SimPlatform;
use crate::policy::{CallId, Gate, LegacyGate, OpenGate, PolicyKind};
use crate::rng::{Component, SimRng, host_stream, sim_rng};
use crate::scenario::{LatencySpec, PlatformSpec, Workload};

/// A platform's path and the shell's part around it: waiters are calls (their id is the
/// waiter id), a flight's data is what its leading call brought.
pub(super) type SimShell = Shell<StoreBuffer<MemoryStore>, SimError, (), FlightData>;

/// What a flight keeps of the call that led it, for as long as the flight is under way
/// (the call itself may have left meanwhile).
#[derive(Clone, Debug)]
pub(super) struct FlightData {
    /// The leading call.
    pub(super) leader: CallId,
    /// The station its attempts are counted at.
    pub(super) station: usize,
    /// The leading call's cost.
    pub(super) cost: Units,
    /// Whether the calls of the flight carry a key of the workload's.
    pub(super) keyed: bool,
    /// The leading call's session.
    pub(super) session: SessionKey,
}

/// One limit a call can be counted against: a platform's main one, or its text host's.
#[derive(Clone, Copy, Debug)]
pub(super) struct Station {
    /// The platform.
    pub(super) id: PlatformId,
    /// The platform's index in [`Workload::platforms`]: its path, and its main station.
    pub(super) platform: usize,
    /// The path's lane.
    pub(super) lane: Lane,
}

/// The lane of text fetches, where a platform's text host keeps a limit of its own (as
/// the server's `TEXT_LANE`).
pub const TEXT_LANE: Lane = Lane(1);

/// The operation label of a text fetch (`op = "text"` in scenarios and traces).
pub const TEXT_OP: &str = "text";

/// An empty buffer for platform `spec`, with its lifetimes (`search_ttl_ms` when given).
pub(super) fn fresh_buffer(spec: &PlatformSpec) -> StoreBuffer<MemoryStore> {
    let mut policy = CachePolicy::default().for_platform(spec.id);
    if let Some(ttl_ms) = spec.search_ttl_ms {
        policy.search.ttl_ms = ttl_ms;
    }
    StoreBuffer::new(MemoryStore::new(spec.id, policy, CacheVersion::current()))
}

/// Whether `workload` can run: it lists each platform once, and every call names one it
/// lists.
pub(super) fn check_platforms(workload: &Workload) -> Result<(), String> {
    if let Some(id) = workload.unlisted_platform() {
        return Err(format!("a call names {id}, which the workload's platforms do not list"));
    }
    let specs = &workload.platforms;
    match specs
        .iter()
        .enumerate()
        .find(|(i, p)| specs[..*i].iter().any(|q| q.id == p.id))
    {
        Some((_, spec)) => Err(format!("{} is listed twice among the workload's platforms", spec.id)),
        None => Ok(()),
    }
}

/// What a platform is in a run: its spec's limits, else its defaults.
#[derive(Clone, Copy, Debug)]
pub struct Enforced {
    /// The limit it enforces (`None`: it keeps none).
    pub limit: Option<LimitConfig>,
    /// Its text host's, when it has one of its own (calls with `op = "text"` go there).
    pub text: Option<LimitConfig>,
    /// The latency model it answers with.
    pub latency: LatencySpec,
    /// Whether its answers carry `RateLimit-Remaining` and `RateLimit-Reset`.
    pub states_its_budget: bool,
}

impl Enforced {
    /// What the platform `spec` describes enforces.
    pub fn of(spec: &PlatformSpec) -> Enforced {
        let id = spec.id;
        Enforced {
            limit: limit_of(
                spec.capacity,
                spec.window_s,
                crate::ids::known(id).and_then(|k| k.limit()),
            ),
            text: limit_of(
                spec.text_capacity,
                spec.text_window_s,
                crate::ids::known(id).and_then(|k| k.text_limit()),
            ),
            latency: spec.latency,
            states_its_budget: spec.states_its_budget(),
        }
    }
}

pub(super) fn limit_of(
    capacity: Option<Units>,
    window_s: Option<f64>,
    default: Option<LimitConfig>,
) -> Option<LimitConfig> {
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

/// The path a fair run drives for the platform `spec` describes: the scenario's limit,
/// bounds and buffer lifetimes, the server's retry policy and requeue rule, events
/// recorded for the trace.
pub(super) fn path_for(
    spec: &PlatformSpec,
    local: Option<LimitConfig>,
    text: Option<LimitConfig>,
) -> Result<SimShell, String> {
    path_over(spec, local, text, None)
}

/// [`path_for`] over `buffer` (a restarted process's: the buffer outlives it), or a fresh
/// one.
pub(super) fn path_over(
    spec: &PlatformSpec,
    local: Option<LimitConfig>,
    text: Option<LimitConfig>,
    buffer: Option<StoreBuffer<MemoryStore>>,
) -> Result<SimShell, String> {
    let id = spec.id;
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
    let buffer = buffer.unwrap_or_else(|| fresh_buffer(spec));
    let config = PathConfig {
        name: id.as_str(),
        lanes,
        retry: RetryPolicy::default(),
        requeue_wait_max: MAX_REQUEUE_WAIT,
        record_events: true,
    };
    let path = PlatformPath::new(config, buffer).map_err(|e| format!("platform {id}: {e}"))?;
    // One process: no lease, so no attempt is ever dropped. The engine checks the
    // invariants itself, once a step's effects are all taken (`Engine::check_path`).
    Ok(Shell::new(path, |_| SimError::Failed).with_check_every(u32::MAX))
}

/// What a run drives, built from its workload: the stations (each platform's main limit in
/// the workload's order, then the text hosts), the simulated platforms and the limits
/// BesluitBron keeps at each, and the paths (fair) or gates (legacy).
pub(super) struct Built {
    pub(super) stations: Vec<Station>,
    pub(super) text_station: Vec<Option<usize>>,
    pub(super) local_limits: Vec<Option<LimitConfig>>,
    pub(super) platforms: Vec<SimPlatform>,
    pub(super) paths: Vec<SimShell>,
    pub(super) gates: Vec<Gate>,
    pub(super) fail_rate: Vec<Option<(f64, SimRng)>>,
    pub(super) fail_retryable: Vec<bool>,
}

/// Builds the stations, platforms, paths or gates of a run of `workload` under `opts`.
pub(super) fn build(workload: &Workload, opts: RunOptions) -> Result<Built, String> {
    check_platforms(workload)?;
    let specs = &workload.platforms;
    let mut gates = Vec::new();
    let mut paths = Vec::new();
    let mut platforms = Vec::new();
    let mut local_limits = Vec::new();
    let (stations, text_station, text_limits) = stations_of(specs);
    // A recorded trace: the bucket the server kept, its margin held back.
    let margin = workload.recorded.as_ref().map_or(Duration::ZERO, |r| r.margin);
    for (i, spec) in specs.iter().enumerate() {
        let id = spec.id;
        let limit = Enforced::of(spec).limit;
        let local = limit_of(
            spec.local_capacity.or(limit.map(|l| l.capacity)),
            spec.local_window_s.or(limit.map(|l| l.window.as_secs_f64())),
            limit,
        )
        .map(|l| l.with_margin(margin));
        local_limits.push(local);
        let stream = host_stream(id, false);
        platforms.push(
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
        let text = text_station[i].map(|s| text_limits[s - specs.len()].with_margin(margin));
        match opts.policy {
            PolicyKind::Fair => paths.push(path_for(spec, local, text)?),
            PolicyKind::Legacy => gates.push(match local {
                None => Gate::Open(OpenGate::new(id)),
                Some(limit) => Gate::Legacy(Box::new(LegacyGate::new(
                    id,
                    limit,
                    workload.legacy_slip_probability,
                    sim_rng(opts.seed, Component::Faults(stream)),
                ))),
            }),
        }
    }
    text_hosts(
        workload,
        opts,
        &stations,
        &text_limits,
        &mut local_limits,
        &mut platforms,
        &mut gates,
    );
    // Failures are drawn at a platform's main host only.
    let mut fail_rate: Vec<Option<(f64, SimRng)>> = specs
        .iter()
        .map(|spec| {
            spec.fail_rate
                .filter(|&r| r > 0.0)
                .map(|r| (r, sim_rng(opts.seed, Component::Failures(host_stream(spec.id, false)))))
        })
        .collect();
    fail_rate.resize_with(stations.len(), || None);
    let mut fail_retryable: Vec<bool> = specs.iter().map(|spec| spec.fail_retryable.unwrap_or(true)).collect();
    fail_retryable.resize(stations.len(), true);
    Ok(Built {
        stations,
        text_station,
        local_limits,
        platforms,
        paths,
        gates,
        fail_rate,
        fail_retryable,
    })
}

/// The stations of a run over `specs`: each platform's main limit in order, then the text
/// hosts of those that keep one of their own; each platform's text station; the text
/// hosts' limits in the order of their stations.
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

/// The text hosts' simulated platforms, kept limits and (legacy) gates, after the
/// platforms' own.
fn text_hosts(
    workload: &Workload,
    opts: RunOptions,
    stations: &[Station],
    text_limits: &[LimitConfig],
    local_limits: &mut Vec<Option<LimitConfig>>,
    platforms: &mut Vec<SimPlatform>,
    gates: &mut Vec<Gate>,
) {
    let specs = &workload.platforms;
    // Their own bucket at the platform and, locally, their own lane (the
    // legacy model: a gate of its own). No throttling, failures or rate-limit headers.
    for (k, station) in stations.iter().enumerate().skip(specs.len()) {
        let (id, spec) = (station.id, &specs[station.platform]);
        let limit = text_limits[k - specs.len()];
        let stream = host_stream(id, true);
        local_limits.push(Some(limit));
        platforms.push(SimPlatform::new(
            id,
            Some(limit),
            spec.model,
            spec.latency,
            Vec::new(),
            sim_rng(opts.seed, Component::Latency(stream)),
        ));
        if opts.policy == PolicyKind::Legacy {
            gates.push(Gate::Legacy(Box::new(LegacyGate::new(
                id,
                limit,
                workload.legacy_slip_probability,
                sim_rng(opts.seed, Component::Faults(stream)),
            ))));
        }
    }
}
