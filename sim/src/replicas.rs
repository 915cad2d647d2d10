//! A replayed trace behind several replicas: "would a third replica have helped?"
//!
//! Per limited platform, the trace's calls to its main limit become the scripted calls of
//! a cluster run ([`crate::cluster`]): the same arrival instants, sessions and questions
//! (equal keys coalesce), each call landing at the replica a load balancer hashing on the
//! session would give it. The cluster simulator runs the replicas' leases, the owner's
//! [`PlatformPath`](besluitbron_core::path::PlatformPath) and the forwards between
//! replicas, and checks its invariants after every event. The same calls behind one
//! replica, in the same model, are the baseline, so the two rows differ only in the
//! replicas.
//!
//! What it does not do: replay the recorded answers (the cluster simulator's platform
//! answers by the trace's latency model, every answer a success), charge more than one
//! unit a call, run a text host's lane, withdraw a call whose client gave up, or make a
//! call's follow-up; the result counts each of those calls, so a reader knows. Each
//! platform runs with its own limit, latency, buffer policy and rate-limit headers (as
//! the workload says); every session (also `system`) is a client session. Platforms come
//! in the workload's order ([`Workload::platforms`]).

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use besluitbron_core::{LimitConfig, PlatformId, Units};

use crate::cluster::{Balancer, CallEnd, ClusterOutcome, ClusterScenario, ScriptedCall, run_cluster};
use crate::engine::{Enforced, TEXT_OP};
use crate::scenario::Workload;

/// The server's default lease TTL (`cluster.lease_ttl_ms`).
pub const LEASE_TTL_MS: u64 = 5_000;
/// One way between replicas and to the lease engine (a local network).
pub const FORWARD_MS: u64 = 3;
const ENGINE_MS: u64 = 1;
/// A call waits for its answer this long at most (longer than any wait a replay shows, so
/// that no give-up cuts a wait short).
const GIVE_UP_S: u64 = 3_600;

/// One platform's calls behind `replicas` replicas, and behind one.
#[derive(Debug)]
pub struct ReplicaWhatIf {
    /// The platform.
    pub platform: PlatformId,
    /// Its limit, as it enforces it and BesluitBron keeps it.
    pub limit: LimitConfig,
    /// Calls replayed.
    pub calls: usize,
    /// Calls of its text host, left out.
    pub text_calls: usize,
    /// Calls that asked another cost than one unit, charged one.
    pub other_cost: usize,
    /// Calls whose client gave up while they waited (in the recording): here they wait on.
    pub left: usize,
    /// Follow-up calls the trace makes once a call is answered: not made here.
    pub follow_ups: usize,
    /// Behind one replica, then behind the asked number.
    pub runs: Vec<ClusterOutcome>,
}

/// Runs each limited platform the workload calls behind one and behind `replicas`
/// replicas, in the workload's order.
pub fn what_if(workload: &Workload, replicas: usize, seed: u64) -> Result<Vec<ReplicaWhatIf>, String> {
    if replicas == 0 {
        return Err("--replicas needs at least one replica".to_owned());
    }
    let margin_ms = workload
        .recorded
        .as_ref()
        .map_or(1_000, |r| u64::try_from(r.margin.as_millis()).unwrap_or(u64::MAX));
    let mut out = Vec::new();
    for spec in &workload.platforms {
        let platform = spec.id;
        let Enforced {
            limit: Some(limit),
            text,
            latency,
            states_its_budget,
        } = Enforced::of(spec)
        else {
            continue;
        };
        if !workload.open_calls.iter().any(|c| c.platform == platform) {
            continue;
        }
        let milli = limit.capacity.as_milli();
        if milli % 1_000 != 0 || limit.window.subsec_nanos() != 0 {
            return Err(format!(
                "{platform}: --replicas needs a limit of whole units per whole seconds, not {}/{}s",
                limit.capacity.compact(),
                limit.window.as_secs_f64()
            ));
        }
        let (mut text_calls, mut other_cost, mut left, mut follow_ups) = (0, 0, 0, 0);
        // Equal requests: one operation, one key (as the recording groups them).
        let mut keys: BTreeMap<(Option<&str>, &str), u64> = BTreeMap::new();
        let mut fresh = 0u64;
        let mut calls = Vec::new();
        for c in workload.open_calls.iter().filter(|c| c.platform == platform) {
            if text.is_some() && c.op.as_deref() == Some(TEXT_OP) {
                text_calls += 1;
                continue;
            }
            other_cost += usize::from(c.cost != Units::ONE);
            left += usize::from(c.leave_after.is_some());
            follow_ups += usize::from(c.then.is_some());
            let next = keys.len() as u64;
            let key = match &c.key {
                Some(k) => *keys.entry((c.op.as_deref(), k.as_str())).or_insert(next),
                // A distinct call: a question nobody else asks.
                None => {
                    fresh += 1;
                    u64::MAX - fresh
                }
            };
            let session = workload.sessions[c.session as usize].name.clone();
            calls.push((c.at.as_millis(), session, key));
        }
        let mut runs = Vec::new();
        for n in [1, replicas] {
            let scenario = ClusterScenario {
                description: format!("{platform}'s calls of the trace behind {n} replica(s)"),
                seed,
                replicas: n,
                drift_ppm: vec![0; n],
                offset_ms: Vec::new(),
                ttl_ms: LEASE_TTL_MS,
                margin_ms,
                balancer: Balancer::Hash,
                forward_ms: FORWARD_MS,
                engine_ms: ENGINE_MS,
                platform,
                rate_limit_headers: Some(states_its_budget),
                capacity: milli / 1_000,
                window_s: limit.window.as_secs(),
                latency,
                sessions: 0,
                calls_per_session: 0,
                think_ms: 0,
                ramp_s: 0.0,
                key_pool: 1,
                give_up_s: GIVE_UP_S,
                faults: Vec::new(),
                send_delay_ms: 5,
                calls: calls
                    .iter()
                    .map(|(at_ms, session, key)| ScriptedCall {
                        at_ms: *at_ms,
                        session: session.clone(),
                        key: *key,
                        // Where the balancer (a hash of the session) sends it.
                        replica: None,
                    })
                    .collect(),
            };
            runs.push(run_cluster(&format!("{platform}×{n}"), &scenario).map_err(|e| format!("{platform}: {e}"))?);
            if replicas == 1 {
                break;
            }
        }
        out.push(ReplicaWhatIf {
            platform,
            limit,
            calls: calls.len(),
            text_calls,
            other_cost,
            left,
            follow_ups,
            runs,
        });
    }
    Ok(out)
}

impl fmt::Display for ReplicaWhatIf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{} ({}/{}s): {} calls{}{}",
            self.platform,
            self.limit.capacity.compact(),
            self.limit.window.as_secs(),
            self.calls,
            if self.text_calls > 0 {
                format!("; {} calls of its text host left out", self.text_calls)
            } else {
                String::new()
            },
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
