//! From a workload to the stations a run drives: each platform's settings, its enforced
//! limits, and the core's path built for it exactly as the server builds its own.

use std::time::Duration;

use besluitbron_core::cache::{CachePolicy, CacheVersion, MemoryStore};
use besluitbron_core::path::{LaneConfig, PathConfig, PlatformPath, RetryPolicy, Shell, StoreBuffer};
use besluitbron_core::scheduler::MAX_REQUEUE_WAIT;
use besluitbron_core::{LimitConfig, PlatformId, SchedulerConfig, Units};

use super::{SimError, SimShell};
use crate::scenario::{LatencySpec, PlatformSpec, Workload};

/// The platform settings for `id`: the workload's, or the documented defaults.
pub(super) fn spec_for(workload: &Workload, id: PlatformId) -> PlatformSpec {
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

/// The path a fair run drives for `id`: the scenario's limit, bounds and buffer
/// lifetimes, the server's retry policy and requeue rule, events recorded for the trace.
pub(super) fn path_for(
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
