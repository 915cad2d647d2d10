//! The upstream services of a run: which services its platforms call, and what each is
//! like — its limit, how it enforces it, what BesluitBron keeps there, its queue bounds,
//! its faults — from three layers, the last that says winning: the simulator's table of
//! real services (`sim/platforms.toml`), a platform's own entry (its limit fields speak
//! for its first service, `text_capacity`/`text_window_s` for its second), and a
//! `[[service]]` entry.
//!
//! A platform's calls go to its first service; a call with `op = "text"` goes to its
//! second when it has one (the server's `PlatformCall::at`: Officiële Bekendmakingen's
//! text, the regulations' files). Platforms that call one service share its limit and its
//! fair queue: the server's budget groups ([`besluitbron_core::budget_groups`]).
//!
//! Invariants: services come in a fixed order — every platform's first service in the
//! run's order of platforms, then their second ones, each once — which is the order of
//! the run's stations and reports; a service called by several platforms of a run takes
//! its settings from its `[[service]]` entry or the table, never from one platform's
//! entry (that would be refused: the others call it too); every `[[service]]` entry names
//! a service some platform of the run calls.
//!
//! What this module does not do: run anything, or decide who goes first at a service (the
//! path does).

use std::time::Duration;

use besluitbron_core::{LimitConfig, PlatformId, ServiceId, Units};

use super::specs::{LimitModel, PlatformSpec, ServiceSpec, ThrottleSpec};

/// The operation label of a text fetch (`op = "text"` in scenarios and traces): it goes to
/// its platform's second service, where the platform has one.
pub const TEXT_OP: &str = "text";

/// One upstream service of a run, everything said.
#[derive(Clone, Debug)]
pub struct RunService {
    /// Which service.
    pub id: ServiceId,
    /// The run's platforms that call it, in the run's order.
    pub platforms: Vec<PlatformId>,
    /// The limit it enforces (`None`: it keeps none).
    pub limit: Option<LimitConfig>,
    /// How it enforces it.
    pub model: LimitModel,
    /// The limit BesluitBron keeps there (`None`: none; before a recording's margin).
    pub local: Option<LimitConfig>,
    /// The scheduler's bound on waiting calls.
    pub max_queued: Option<usize>,
    /// The scheduler's bound on one session's waiting calls.
    pub max_queued_per_session: Option<usize>,
    /// When a quiet session's usage is forgotten, in seconds.
    pub forget_after_s: Option<u64>,
    /// Most calls queued or out at once.
    pub max_in_flight: Option<usize>,
    /// Throttled periods.
    pub throttle: Vec<ThrottleSpec>,
    /// Whether its answers carry `RateLimit-Remaining` and `RateLimit-Reset`.
    pub states_its_budget: bool,
    /// The random stream its faults are drawn from (the legacy model's slips): the host
    /// stream of the first platform that calls it, as that platform's main or text host
    /// ([`crate::rng::host_stream`]), so a service of one platform draws what that
    /// platform's host always drew.
    pub stream: u8,
}

/// The services of a run and which of them each platform calls.
#[derive(Clone, Debug)]
pub struct RunServices {
    /// The services, in the run's order (see the module's notes).
    pub services: Vec<RunService>,
    /// Per platform of the run (in [`Workload::platforms`]' order), the index of each
    /// service it calls, in its own order.
    pub routes: Vec<Vec<usize>>,
}

impl RunServices {
    /// The services of platforms `specs` with the entries `entries`, or why they cannot be
    /// run.
    pub fn of_parts(specs: &[PlatformSpec], entries: &[ServiceSpec]) -> Result<RunServices, String> {
        let lists: Vec<Vec<ServiceId>> = specs.iter().map(PlatformSpec::service_ids).collect();
        for (spec, list) in specs.iter().zip(&lists) {
            if list.is_empty() {
                return Err(format!("platform `{}` names no service", spec.id));
            }
            if let Some(dup) = list.iter().enumerate().find(|(i, s)| list[..*i].contains(s)) {
                return Err(format!("platform `{}` names service `{}` twice", spec.id, dup.1));
            }
            if list.len() < 2 && (spec.text_capacity.is_some() || spec.text_window_s.is_some()) {
                return Err(format!(
                    "platform `{}` calls one service: its text goes there too, so text_capacity has nothing to \
                     set (name its text service in `services = [...]`)",
                    spec.id
                ));
            }
        }
        // Every platform's first service, then their second ones, …, each once.
        let mut order: Vec<ServiceId> = Vec::new();
        let longest = lists.iter().map(Vec::len).max().unwrap_or(0);
        for k in 0..longest {
            for list in &lists {
                if let Some(&s) = list.get(k)
                    && !order.contains(&s)
                {
                    order.push(s);
                }
            }
        }
        if let Some(e) = entries.iter().find(|e| !order.contains(&e.id)) {
            return Err(format!(
                "service `{}` is given, but no platform of the run calls it",
                e.id
            ));
        }
        let services = order
            .iter()
            .map(|&id| resolve(id, specs, &lists, entries))
            .collect::<Result<Vec<_>, String>>()?;
        let routes = lists
            .iter()
            .map(|list| {
                list.iter()
                    .map(|s| {
                        order
                            .iter()
                            .position(|o| o == s)
                            .expect("every service is in the order")
                    })
                    .collect()
            })
            .collect();
        Ok(RunServices { services, routes })
    }

    /// Which of platform `p`'s services a call with operation `op` goes to: its place in
    /// the platform's own list (0: its first).
    pub fn lane_of_call(&self, p: usize, op: Option<&str>) -> usize {
        match op {
            Some(TEXT_OP) if self.routes[p].len() > 1 => 1,
            _ => 0,
        }
    }

    /// The service (its index) a call of platform `p` with operation `op` goes to.
    pub fn service_of(&self, p: usize, op: Option<&str>) -> usize {
        self.routes[p][self.lane_of_call(p, op)]
    }

    /// The index of service `id`, if the run has it.
    pub fn index_of(&self, id: ServiceId) -> Option<usize> {
        self.services.iter().position(|s| s.id == id)
    }
}

/// Service `id` as a run of `specs` (each calling `lists`' services) with `entries` has it:
/// the table's defaults, under the one platform's own fields that call it (refused where
/// several platforms of the run call it), under its `[[service]]` entry.
fn resolve(
    id: ServiceId,
    specs: &[PlatformSpec],
    lists: &[Vec<ServiceId>],
    entries: &[ServiceSpec],
) -> Result<RunService, String> {
    let callers: Vec<(usize, usize)> = lists
        .iter()
        .enumerate()
        .filter_map(|(p, list)| list.iter().position(|&s| s == id).map(|k| (p, k)))
        .collect();
    // A platform's own fields speak for this service only where it alone calls it.
    let mut merged = ServiceSpec::of(id);
    for &(p, k) in &callers {
        let (own, says) = ServiceSpec::from_platform(&specs[p], k, id);
        if !says {
            continue;
        }
        if let Some(&(q, _)) = callers.iter().find(|&&(q, _)| q != p) {
            return Err(format!(
                "platform `{}` sets the limits of service `{id}`, which `{}` calls too: set them once, under \
                 [[service]] id = \"{id}\"",
                specs[p].id, specs[q].id
            ));
        }
        merged = merged.under(&own);
    }
    if let Some(entry) = entries.iter().find(|e| e.id == id) {
        merged = merged.under(entry);
    }
    let known = crate::ids::known_service(id);
    let limit = limit_of(merged.capacity, merged.window_s, id.default_limit());
    let local = limit_of(
        merged.local_capacity.or(limit.map(|l| l.capacity)),
        merged.local_window_s.or(limit.map(|l| l.window.as_secs_f64())),
        limit,
    );
    let (first, k) = callers[0];
    Ok(RunService {
        id,
        platforms: callers.iter().map(|&(p, _)| specs[p].id).collect(),
        limit,
        model: merged.model.unwrap_or_default(),
        local,
        max_queued: merged.max_queued,
        max_queued_per_session: merged.max_queued_per_session,
        forget_after_s: merged.forget_after_s,
        max_in_flight: merged.max_in_flight.or(id.default_max_in_flight()),
        throttle: merged.throttle,
        states_its_budget: merged
            .rate_limit_headers
            .unwrap_or_else(|| known.is_some_and(|k| k.rate_limit_headers)),
        stream: crate::rng::host_stream(specs[first].id, k > 0),
    })
}

/// A limit from a capacity and a window given (or not), over `default`: both missing is
/// the default; one missing takes the default's, else 60 units or 60 seconds.
pub(crate) fn limit_of(
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

impl PlatformSpec {
    /// The services the platform calls: as the scenario says, else the table's.
    pub fn service_ids(&self) -> Vec<ServiceId> {
        self.services
            .clone()
            .unwrap_or_else(|| crate::ids::services_of(self.id))
    }
}
