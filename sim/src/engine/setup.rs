//! From a workload's platforms to what a run drives, built as the server builds its own:
//! the upstream services its platforms call ([`RunServices`]), the budget groups they
//! form ([`besluitbron_core::budget_groups`]: platforms that share a service, and the
//! services they call), one path per group with a lane per service, a station per
//! service (its simulated service, the limit BesluitBron keeps there, the legacy model's
//! gate) and a host per platform and service (how long its answers there take).
//!
//! What this module does not do: decide which platforms a run has (the workload lists
//! them, [`Workload::platforms`](crate::scenario::Workload::platforms)) or what a service
//! is like (the scenario and the table say, [`RunServices`]).

use std::time::Duration;

use besluitbron_core::cache::{CachePolicy, CacheVersion, MemoryStore};
use besluitbron_core::path::{Lane, LaneConfig, PathConfig, PlatformPath, RetryPolicy, Shell, StoreBuffer};
use besluitbron_core::scheduler::MAX_REQUEUE_WAIT;
use besluitbron_core::{
    BudgetGroup, LimitConfig, PlatformId, SchedulerConfig, ServiceId, SessionKey, Units, budget_groups,
};

use super::outcome::{RunOptions, SimError};
use crate::group_buffer::{GroupBuffer, SimBuffer};
use crate::platform::{Host, SimService};
use crate::policy::{CallId, Gate, LegacyGate, OpenGate, PolicyKind};
use crate::rng::{Component, SimRng, host_stream, sim_rng};
use crate::scenario::{PlatformSpec, RunService, RunServices, Workload};

/// A budget group's path and the shell's part around it: waiters are calls (their id is
/// the waiter id), a flight's data is what its leading call brought.
pub(super) type SimShell = Shell<GroupBuffer, SimError, (), FlightData>;

/// What a flight keeps of the call that led it, for as long as the flight is under way
/// (the call itself may have left meanwhile).
#[derive(Clone, Debug)]
pub(super) struct FlightData {
    /// The leading call.
    pub(super) leader: CallId,
    /// Its platform.
    pub(super) platform: PlatformId,
    /// The station (service) its attempts are counted at.
    pub(super) station: usize,
    /// The leading call's cost.
    pub(super) cost: Units,
    /// Whether the calls of the flight carry a key of the workload's.
    pub(super) keyed: bool,
    /// The leading call's session.
    pub(super) session: SessionKey,
}

/// One upstream service of the run, where its calls are counted: its path (the budget
/// group's) and its lane there.
#[derive(Clone, Copy, Debug)]
pub(super) struct Station {
    /// The service.
    pub(super) id: ServiceId,
    /// Its budget group: the index of its path.
    pub(super) group: usize,
    /// Its lane on that path.
    pub(super) lane: Lane,
}

pub use crate::scenario::TEXT_OP;

/// An empty buffer for platform `spec`, with its lifetimes (`search_ttl_ms` when given).
pub(super) fn fresh_buffer(spec: &PlatformSpec) -> SimBuffer {
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

/// The scheduler of a lane keeping `limit` at `service`, with its bounds.
fn scheduler_of(service: &RunService, limit: LimitConfig) -> SchedulerConfig {
    let mut config = SchedulerConfig::with_limit(limit);
    if let Some(n) = service.max_queued {
        config.max_queued = n;
    }
    if let Some(n) = service.max_queued_per_session {
        config.max_queued_per_session = n;
    }
    if let Some(s) = service.forget_after_s {
        config.forget_after = Duration::from_secs(s);
    }
    config
}

/// The path a fair run drives for budget group `group` over `buffers` (its platforms'):
/// a lane per service, each keeping its `local` limit (`None`: none) with the service's
/// bounds, `retry` (the server's), its requeue rule, events recorded for the trace.
pub(super) fn path_over(
    group: &BudgetGroup,
    services: &RunServices,
    local: &[Option<LimitConfig>],
    retry: RetryPolicy,
    buffers: Vec<(PlatformId, SimBuffer)>,
) -> Result<SimShell, String> {
    let lanes = group
        .services
        .iter()
        .map(|&id| {
            let i = services.index_of(id).expect("a group's services are the run's");
            let service = &services.services[i];
            LaneConfig {
                name: id.as_str(),
                scheduler: local[i].map(|l| scheduler_of(service, l)),
                max_in_flight: service.max_in_flight,
            }
        })
        .collect();
    let config = PathConfig {
        name: group.name(),
        lanes,
        retry,
        requeue_wait_max: MAX_REQUEUE_WAIT,
        record_events: true,
    };
    let path = PlatformPath::new(config, GroupBuffer::new(buffers)).map_err(|e| format!("{}: {e}", group.name()))?;
    // One process: no lease, so no attempt is ever dropped. The engine checks the
    // invariants itself, once a step's effects are all taken (`Engine::check_path`).
    Ok(Shell::new(path, |_| SimError::Failed).with_check_every(u32::MAX))
}

/// What a run drives, built from its workload.
pub(super) struct Built {
    /// The services and each platform's routes to them.
    pub(super) services: RunServices,
    /// Per service: its path and lane.
    pub(super) stations: Vec<Station>,
    /// The budget groups, one path each.
    pub(super) groups: Vec<BudgetGroup>,
    /// Per platform: its group.
    pub(super) group_of: Vec<usize>,
    /// Per service: the limit BesluitBron keeps there (a recording's margin held back).
    pub(super) local_limits: Vec<Option<LimitConfig>>,
    /// Per service: the simulated service.
    pub(super) upstreams: Vec<SimService>,
    /// Per platform, per service it calls (in its own order): how long its answers take.
    pub(super) hosts: Vec<Vec<Host>>,
    /// Per group (fair policy).
    pub(super) paths: Vec<SimShell>,
    /// Per service (legacy policy).
    pub(super) gates: Vec<Gate>,
    /// Per platform: failed answers at its first service.
    pub(super) fail_rate: Vec<Option<(f64, SimRng)>>,
    /// Per platform: whether such a failure is retried.
    pub(super) fail_retryable: Vec<bool>,
    /// The paths' retries: the server's defaults, or those of the server that made a
    /// recording.
    pub(super) retry: RetryPolicy,
    /// Per group, the station of each of its path's lanes.
    pub(super) lane_stations: Vec<Vec<usize>>,
}

/// The budget groups of `services`' platforms (each with the services it calls).
pub(super) fn groups_of(specs: &[PlatformSpec], services: &RunServices) -> Result<Vec<BudgetGroup>, String> {
    let lists: Vec<Vec<ServiceId>> = services
        .routes
        .iter()
        .map(|r| r.iter().map(|&i| services.services[i].id).collect())
        .collect();
    let given: Vec<(PlatformId, &[ServiceId])> = specs.iter().zip(&lists).map(|(p, l)| (p.id, l.as_slice())).collect();
    budget_groups(&given)
}

/// Builds the stations, services, hosts, paths or gates of a run of `workload` under `opts`.
pub(super) fn build(workload: &Workload, opts: RunOptions) -> Result<Built, String> {
    check_platforms(workload)?;
    let specs = &workload.platforms;
    let services = RunServices::of(workload)?;
    let groups = groups_of(specs, &services)?;
    let group_of: Vec<usize> = specs
        .iter()
        .map(|p| {
            groups
                .iter()
                .position(|g| g.platforms.contains(&p.id))
                .expect("every platform is in a group")
        })
        .collect();
    let stations = stations_of(&services, &groups)?;
    let lane_stations = lane_stations(&groups, &stations);
    // A recorded trace: the bucket the server kept, its margin held back.
    let margin = workload.recorded.as_ref().map_or(Duration::ZERO, |r| r.margin);
    let retry = workload
        .recorded
        .as_ref()
        .map_or_else(RetryPolicy::default, |r| r.retry());
    let local_limits: Vec<Option<LimitConfig>> = services
        .services
        .iter()
        .map(|s| s.local.map(|l| l.with_margin(margin)))
        .collect();
    let upstreams = services
        .services
        .iter()
        .map(|s| {
            SimService::new(s.id, s.limit, s.model, s.throttle.clone()).with_rate_limit_headers(s.states_its_budget)
        })
        .collect();
    let hosts = hosts_of(specs, &services, opts.seed);
    let mut paths = Vec::new();
    let mut gates = Vec::new();
    match opts.policy {
        PolicyKind::Fair => {
            for g in &groups {
                let buffers = g
                    .platforms
                    .iter()
                    .map(|&p| {
                        let spec = specs
                            .iter()
                            .find(|s| s.id == p)
                            .expect("a group's platforms are the run's");
                        (p, fresh_buffer(spec))
                    })
                    .collect();
                paths.push(path_over(g, &services, &local_limits, retry, buffers)?);
            }
        }
        PolicyKind::Legacy => {
            for (s, local) in services.services.iter().zip(&local_limits) {
                gates.push(match local {
                    None => Gate::Open(OpenGate::new(s.id)),
                    Some(limit) => Gate::Legacy(Box::new(LegacyGate::new(
                        s.id,
                        *limit,
                        workload.legacy_slip_probability,
                        sim_rng(opts.seed, Component::Faults(s.stream)),
                    ))),
                });
            }
        }
    }
    // Failures are drawn at a platform's first service only.
    let fail_rate = specs
        .iter()
        .map(|spec| {
            spec.fail_rate
                .filter(|&r| r > 0.0)
                .map(|r| (r, sim_rng(opts.seed, Component::Failures(host_stream(spec.id, false)))))
        })
        .collect();
    let fail_retryable = specs.iter().map(|spec| spec.fail_retryable.unwrap_or(true)).collect();
    Ok(Built {
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
    })
}

/// The stations of a run: one per service of `services`, on its budget group's path (of
/// `groups`) and its lane there.
fn stations_of(services: &RunServices, groups: &[BudgetGroup]) -> Result<Vec<Station>, String> {
    let mut stations = Vec::with_capacity(services.services.len());
    for s in &services.services {
        let group = groups
            .iter()
            .position(|g| g.services.contains(&s.id))
            .expect("every service is in a group");
        let lane = groups[group].lane_of(s.id).expect("the group has it");
        let lane = u8::try_from(lane).map_err(|_| format!("{}: more than 255 services in one group", s.id))?;
        stations.push(Station {
            id: s.id,
            group,
            lane: Lane(lane),
        });
    }
    Ok(stations)
}

/// Per platform of `specs`, per service it calls: its latency there, drawn from its host's
/// stream (its first service's the platform's own, its second's its text host's).
fn hosts_of(specs: &[PlatformSpec], services: &RunServices, seed: u64) -> Vec<Vec<Host>> {
    specs
        .iter()
        .zip(&services.routes)
        .map(|(spec, route)| {
            (0..route.len())
                .map(|k| {
                    let stream = host_stream(spec.id, k > 0);
                    Host::new(spec.latency, sim_rng(seed, Component::Latency(stream)))
                })
                .collect()
        })
        .collect()
}

/// Per budget group of `groups`, the station of each lane of its path.
fn lane_stations(groups: &[BudgetGroup], stations: &[Station]) -> Vec<Vec<usize>> {
    groups
        .iter()
        .enumerate()
        .map(|(g, group)| {
            (0..group.services.len())
                .map(|lane| {
                    stations
                        .iter()
                        .position(|s| s.group == g && usize::from(s.lane.0) == lane)
                        .expect("every lane is a station")
                })
                .collect()
        })
        .collect()
}

/// Per path (budget group), when the server sent the recorded attempts of the group's
/// platforms, in ms from the recording's start, in order; nothing without a recording.
pub(super) fn recorded_sends(workload: &Workload, groups: &[BudgetGroup]) -> Vec<Vec<u64>> {
    let Some(recorded) = workload.recorded.as_ref() else {
        return Vec::new();
    };
    groups
        .iter()
        .map(|g| {
            let mut sends: Vec<u64> = recorded
                .flights
                .iter()
                .filter(|((platform, _, _), _)| g.platforms.iter().any(|q| q == platform))
                .flat_map(|(_, flights)| flights.iter().flatten().map(|a| a.at_ms))
                .collect();
            sends.sort_unstable();
            sends
        })
        .collect()
}
