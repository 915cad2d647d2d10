//! From a workload's platforms to the stations a run drives: each platform's enforced
//! limits, and the core's path built for it exactly as the server builds its own.
//!
//! What this module does not do: decide which platforms a run has (the workload lists
//! them, [`Workload::platforms`](crate::scenario::Workload::platforms)).

use std::time::Duration;

use besluitbron_core::cache::{CachePolicy, CacheVersion, MemoryStore};
use besluitbron_core::path::{LaneConfig, PathConfig, PlatformPath, RetryPolicy, Shell, StoreBuffer};
use besluitbron_core::scheduler::MAX_REQUEUE_WAIT;
use besluitbron_core::{LimitConfig, SchedulerConfig, Units};

use super::outcome::SimError;
use super::FlightData;
use crate::scenario::{LatencySpec, PlatformSpec, Workload};

/// A platform's path and the shell's part around it: waiters are calls (their id is the
/// waiter id), a flight's data is what its leading call brought.
pub(super) type SimShell = Shell<StoreBuffer<MemoryStore>, SimError, (), FlightData>;

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
    let mut policy = CachePolicy::default().for_platform(id);
    if let Some(ttl_ms) = spec.search_ttl_ms {
        policy.search.ttl_ms = ttl_ms;
    }
    let buffer = StoreBuffer::new(MemoryStore::new(id, policy, CacheVersion::current()));
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
