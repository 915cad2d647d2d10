//! A replayed trace behind several replicas: "would a third replica have helped?"
//!
//! Per limited upstream service, the trace's calls that reach it — of every platform that
//! calls it, as the replay routes them (a platform's first service, or its second for
//! `op = "text"`) — become the scripted calls of a cluster run ([`crate::cluster`]): one
//! budget group behind one lease, the same arrival instants, sessions and questions
//! (equal keys of one platform coalesce), each call landing at the replica a load
//! balancer hashing on the session would give it. The cluster simulator runs the
//! replicas' leases, the owner's [`PlatformPath`](besluitbron_core::path::PlatformPath)
//! and the forwards between replicas, and checks its invariants after every event. The
//! same calls behind one replica, in the same model, are the baseline, so the two rows
//! differ only in the replicas.
//!
//! What it does not do: replay the recorded answers (the cluster simulator's service
//! answers by the latency model of the service's first platform, every answer a
//! success), charge more than one unit a call, withdraw a call whose client gave up, or
//! make a call's follow-up; the result counts each of those calls, so a reader knows.
//! Each service runs with its own limit, buffer policies and rate-limit headers (as the
//! workload says); every session (also `system`) is a client session. Services come in
//! the run's order ([`RunServices`]).

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use besluitbron_core::{LimitConfig, PlatformId, ServiceId, Units};

use crate::cluster::{Balancer, CallEnd, ClusterOutcome, ClusterScenario, ScriptedCall, run_cluster};
use crate::scenario::{LatencySpec, RunService, RunServices, Workload};

/// The server's default lease TTL (`cluster.lease_ttl_ms`).
pub const LEASE_TTL_MS: u64 = 5_000;
/// One way between replicas and to the lease engine (a local network).
pub const FORWARD_MS: u64 = 3;
const ENGINE_MS: u64 = 1;
/// A call waits for its answer this long at most (longer than any wait a replay shows, so
/// that no give-up cuts a wait short).
const GIVE_UP_S: u64 = 3_600;

/// One service's calls behind `replicas` replicas, and behind one.
#[derive(Debug)]
pub struct ReplicaWhatIf {
    /// The service.
    pub service: ServiceId,
    /// The service and the platforms whose calls reached it (`koop-zoekservice (bwb,
    /// cvdr)`).
    pub label: String,
    /// Its limit, as it enforces it and BesluitBron keeps it.
    pub limit: LimitConfig,
    /// Calls replayed.
    pub calls: usize,
    /// Calls that asked another cost than one unit, charged one.
    pub other_cost: usize,
    /// Calls whose client gave up while they waited (in the recording): here they wait on.
    pub left: usize,
    /// Follow-up calls the trace makes once a call is answered: not made here.
    pub follow_ups: usize,
    /// Behind one replica, then behind the asked number.
    pub runs: Vec<ClusterOutcome>,
}

/// Runs each limited service the workload's calls reach behind one and behind `replicas`
/// replicas, in the run's order of services.
pub fn what_if(workload: &Workload, replicas: usize, seed: u64) -> Result<Vec<ReplicaWhatIf>, String> {
    if replicas == 0 {
        return Err("--replicas needs at least one replica".to_owned());
    }
    let margin_ms = workload
        .recorded
        .as_ref()
        .map_or(1_000, |r| u64::try_from(r.margin.as_millis()).unwrap_or(u64::MAX));
    let services = RunServices::of(workload)?;
    let mut out = Vec::new();
    for (i, service) in services.services.iter().enumerate() {
        let Some(limit) = service.limit else { continue };
        let replayed = Replayed::of(workload, &services, i);
        if replayed.calls.is_empty() {
            continue;
        }
        let id = service.id;
        if limit.capacity.as_milli() % 1_000 != 0 || limit.window.subsec_nanos() != 0 {
            return Err(format!(
                "{id}: --replicas needs a limit of whole units per whole seconds, not {}/{}s",
                limit.capacity.compact(),
                limit.window.as_secs_f64()
            ));
        }
        let label = replayed.label(id);
        let mut runs = Vec::new();
        for n in [1, replicas] {
            let scenario = scenario(service, limit, &replayed, &label, n, seed, margin_ms);
            runs.push(run_cluster(&format!("{id}×{n}"), &scenario).map_err(|e| format!("{id}: {e}"))?);
            if replicas == 1 {
                break;
            }
        }
        out.push(ReplicaWhatIf {
            service: id,
            label,
            limit,
            calls: replayed.calls.len(),
            other_cost: replayed.other_cost,
            left: replayed.left,
            follow_ups: replayed.follow_ups,
            runs,
        });
    }
    Ok(out)
}

/// One service's calls of a trace, of every platform that reaches it, as the cluster
/// simulator replays them, and what it leaves out or changes, counted.
struct Replayed {
    /// The platforms whose calls reach the service, in the run's order.
    platforms: Vec<PlatformId>,
    /// The latency model of the first of them (every platform's calls there answer alike
    /// here).
    latency: LatencySpec,
    /// (arrival in ms, session, question, platform): equal questions of one platform
    /// share a key.
    calls: Vec<(u64, String, u64, PlatformId)>,
    other_cost: usize,
    left: usize,
    follow_ups: usize,
}

impl Replayed {
    /// The calls of `workload` that reach service `i` of `services` (a platform's first
    /// service, or its second for `op = "text"`).
    fn of(workload: &Workload, services: &RunServices, i: usize) -> Replayed {
        let index_of = |p: PlatformId| workload.platforms.iter().position(|s| s.id == p);
        let reaching: Vec<_> = workload
            .open_calls
            .iter()
            .filter(|c| index_of(c.platform).is_some_and(|p| services.service_of(p, c.op.as_deref()) == i))
            .collect();
        let platforms: Vec<PlatformId> = services.services[i]
            .platforms
            .iter()
            .copied()
            .filter(|p| reaching.iter().any(|c| c.platform == *p))
            .collect();
        let latency = platforms
            .first()
            .and_then(|first| workload.platforms.iter().find(|p| p.id == *first))
            .map(|p| p.latency)
            .unwrap_or_default();
        let mut r = Replayed {
            platforms,
            latency,
            calls: Vec::new(),
            other_cost: 0,
            left: 0,
            follow_ups: 0,
        };
        // Equal requests: one platform, one operation, one key (as the recording groups
        // them).
        let mut keys: BTreeMap<(PlatformId, Option<&str>, &str), u64> = BTreeMap::new();
        let mut fresh = 0u64;
        for c in &reaching {
            r.other_cost += usize::from(c.cost != Units::ONE);
            r.left += usize::from(c.leave_after.is_some());
            r.follow_ups += usize::from(c.then.is_some());
            let next = keys.len() as u64;
            let key = match &c.key {
                Some(k) => *keys.entry((c.platform, c.op.as_deref(), k.as_str())).or_insert(next),
                // A distinct call: a question nobody else asks.
                None => {
                    fresh += 1;
                    u64::MAX - fresh
                }
            };
            let session = workload.sessions[c.session as usize].name.clone();
            r.calls.push((c.at.as_millis(), session, key, c.platform));
        }
        r
    }

    /// How service `id` is named in the result: its id, with the platforms whose calls
    /// reached it where that is not only its namesake (`koop-zoekservice (bwb, cvdr)`).
    fn label(&self, id: ServiceId) -> String {
        if self.platforms.len() == 1 && self.platforms[0].as_str() == id.as_str() {
            id.to_string()
        } else {
            let names: Vec<&str> = self.platforms.iter().map(|p| p.as_str()).collect();
            format!("{id} ({})", names.join(", "))
        }
    }
}

/// The cluster scenario of `replayed`'s calls at `service` behind `n` replicas, at
/// `limit`, the burst's `margin_ms` held back: one budget group, its first platform the
/// scenario's and the others sharing it.
fn scenario(
    service: &RunService,
    limit: LimitConfig,
    replayed: &Replayed,
    label: &str,
    n: usize,
    seed: u64,
    margin_ms: u64,
) -> ClusterScenario {
    ClusterScenario {
        description: format!("{label}: the trace's calls behind {n} replica(s)"),
        seed,
        replicas: n,
        drift_ppm: vec![0; n],
        offset_ms: Vec::new(),
        ttl_ms: LEASE_TTL_MS,
        margin_ms,
        balancer: Balancer::Hash,
        forward_ms: FORWARD_MS,
        engine_ms: ENGINE_MS,
        platform: replayed.platforms[0],
        shared_with: replayed.platforms[1..].to_vec(),
        service: Some(service.id),
        rate_limit_headers: Some(service.states_its_budget),
        capacity: limit.capacity.as_milli() / 1_000,
        window_s: limit.window.as_secs(),
        latency: replayed.latency,
        sessions: 0,
        calls_per_session: 0,
        think_ms: 0,
        ramp_s: 0.0,
        key_pool: 1,
        give_up_s: GIVE_UP_S,
        faults: Vec::new(),
        send_delay_ms: 5,
        calls: replayed
            .calls
            .iter()
            .map(|(at_ms, session, key, platform)| ScriptedCall {
                at_ms: *at_ms,
                session: session.clone(),
                key: *key,
                // Where the balancer (a hash of the session) sends it.
                replica: None,
                platform: Some(*platform),
            })
            .collect(),
    }
}

impl fmt::Display for ReplicaWhatIf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} ({}/{}s): {} calls{}",
            self.label,
            self.limit.capacity.compact(),
            self.limit.window.as_secs(),
            self.calls,
            if self.other_cost > 0 {
                format!("; {} calls that asked another cost charged one unit", self.other_cost)
            } else {
                String::new()
            },
        )?;
        if self.left + self.follow_ups > 0 {
            writeln!(
                f,
                "  ({} calls whose client gave up wait on here; {} follow-up calls not made)",
                self.left, self.follow_ups
            )?;
        }
        writeln!(
            f,
            "  replicas  answered  failed  refused  gave-up  answer p50 ms  p95 ms   max ms   forwards  upstream  \
             most units in a window  first admission"
        )?;
        for run in &self.runs {
            let ended =
                |pick: fn(&CallEnd) -> bool| run.ends.iter().filter(|(e, _)| pick(e)).map(|(_, n)| n).sum::<u64>();
            let mut line = String::new();
            let _ = write!(
                line,
                "  {:>8}  {:>8}  {:>6}  {:>7}  {:>7}  {:>13}  {:>6}  {:>7}  {:>9}  {:>8}  {:>22}  {}",
                run.scenario.replicas,
                ended(|e| matches!(e, CallEnd::Answered(_))),
                ended(|e| *e == CallEnd::Failed),
                ended(|e| *e == CallEnd::Refused),
                ended(|e| *e == CallEnd::GaveUp),
                run.answer_time_ms(50),
                run.answer_time_ms(95),
                run.latencies.max_ms(),
                run.forwarded,
                run.upstream,
                run.max_units_in_window.compact(),
                run.owners
                    .iter()
                    .filter_map(|o| o.admitting_ms)
                    .min()
                    .map_or("none".to_owned(), |ms| format!("{:.1} s", ms as f64 / 1_000.0)),
            );
            writeln!(f, "{line}")?;
        }
        Ok(())
    }
}
