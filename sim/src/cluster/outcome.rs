//! What a cluster run gives back: each call's end, who owned the lease when, the admissions,
//! and the report printed from them.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};

use besluitbron_core::Units;
use besluitbron_core::path::Served;

use crate::engine::AdmissionLine;

use super::ClusterScenario;

/// One admission a replica sent, as the differential test compares it with the server's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterAdmission {
    /// The replica that sent it.
    pub replica: usize,
    /// When it was admitted (by the replica's clock), the session charged, what it asks.
    pub line: AdmissionLine,
}

impl fmt::Display for ClusterAdmission {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "replica={} {}", self.replica, self.line)
    }
}

/// How a call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CallEnd {
    /// Answered.
    Answered(Served),
    /// Refused by the owner's queue bound.
    Refused,
    /// The platform failed it.
    Failed,
    /// The client gave up.
    GaveUp,
}

/// One ownership period, in true time.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ownership {
    /// The replica.
    pub replica: usize,
    /// Its process generation (a restart is a new one) and acquisition.
    pub epoch: (u32, u64),
    /// When the lease was granted (ms).
    pub acquired_ms: u64,
    /// When it started admitting (ms), if it did.
    pub admitting_ms: Option<u64>,
    /// When it ended (ms) and why.
    pub ended: Option<(u64, &'static str)>,
}

/// The result of a cluster run.
#[derive(Debug)]
pub struct ClusterOutcome {
    /// The scenario's name.
    pub name: String,
    /// The scenario.
    pub scenario: ClusterScenario,
    /// Calls made.
    pub calls: u64,
    /// How they ended.
    pub ends: BTreeMap<CallEnd, u64>,
    /// Forwards from a follower to the owner.
    pub forwarded: u64,
    /// Calls asked again at a new owner after theirs lost the lease or died.
    pub rerouted: u64,
    /// Admissions dropped because they were older than the margin or the lease was gone.
    pub dropped: u64,
    /// Calls sent to the platform.
    pub upstream: u64,
    /// Distinct questions sent upstream.
    pub upstream_keys: u64,
    /// The platform's accepted calls and its 429s for exceeding its limit.
    pub accepted: u64,
    /// 429s over the limit (must be 0).
    pub over_limit: u64,
    /// The most units the platform accepted in any window.
    pub max_units_in_window: Units,
    /// Ownership periods in order.
    pub owners: Vec<Ownership>,
    /// Answer times (ms) of answered calls.
    pub latencies: Latencies,
    /// Events processed, sends checked, instants the overlap check ran.
    pub events: u64,
    /// The last event (ms).
    pub end_ms: u64,
    /// The most replicas that could admit at one instant (must be ≤ 1).
    pub max_admitting: usize,
    /// Every admission sent, in order, when the run kept them
    /// ([`run_cluster`](super::run_cluster)); else empty.
    pub admissions: Vec<ClusterAdmission>,
}

/// Answer times in whole milliseconds, counted per millisecond: exact, and bounded by the
/// longest answer (a client gives up after `give_up_s`), not by the calls answered.
#[derive(Clone, Debug, Default)]
pub struct Latencies {
    counts: Vec<u64>,
    n: u64,
}

impl Latencies {
    /// One answer after `ms`.
    pub fn record(&mut self, ms: u64) {
        let i = usize::try_from(ms).expect("an answer time fits in memory");
        if self.counts.len() <= i {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.n += 1;
    }

    /// Answers counted.
    pub fn len(&self) -> u64 {
        self.n
    }

    /// Whether none was.
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The answer time at 0-based rank `rank` in ascending order (0 when there is none).
    pub fn at_rank(&self, rank: u64) -> u64 {
        let mut below = 0;
        for (ms, &count) in self.counts.iter().enumerate() {
            below += count;
            if below > rank {
                return ms as u64;
            }
        }
        0
    }

    /// The longest answer time (0 when none).
    pub fn max_ms(&self) -> u64 {
        self.counts.iter().rposition(|&c| c > 0).map_or(0, |i| i as u64)
    }
}

impl ClusterOutcome {
    /// The answer time (ms) of answered calls at percentile `p` (nearest rank below), 0
    /// when none was answered.
    pub fn answer_time_ms(&self, p: usize) -> u64 {
        self.latencies
            .at_rank(self.latencies.len().saturating_sub(1) * p as u64 / 100)
    }

    /// The report, as snapshotted.
    pub fn render(&self) -> String {
        let s = &self.scenario;
        let mut out = String::new();
        let _ = writeln!(out, "cluster scenario {} (seed {})", self.name, s.seed);
        let _ = writeln!(out, "  {}", s.description);
        let _ = writeln!(
            out,
            "replicas: {}, lease TTL {} ms, margin {} ms, drift {:?} ppm (bound {} ppm), balancer {:?}",
            s.replicas,
            s.ttl_ms,
            s.margin_ms,
            s.drift_ppm,
            s.lease_config().max_drift_ppm(),
            s.balancer
        );
        let _ = writeln!(out, "faults:");
        for f in &s.faults {
            let _ = writeln!(out, "  {f:?}");
        }
        let _ = writeln!(out, "calls: {}", self.calls);
        for (end, n) in &self.ends {
            let label = match end {
                CallEnd::Answered(how) => format!("answered ({})", how.as_str()),
                CallEnd::Refused => "refused (queue full)".to_owned(),
                CallEnd::Failed => "failed at the platform".to_owned(),
                CallEnd::GaveUp => "given up by the client".to_owned(),
            };
            let _ = writeln!(out, "  {label}: {n}");
        }
        let _ = writeln!(
            out,
            "forwarded to the owner: {}; re-routed after a handover: {}; admissions dropped: {}",
            self.forwarded, self.rerouted, self.dropped
        );
        let _ = writeln!(
            out,
            "upstream: {} calls for {} distinct questions; platform accepted {}, over its limit {}",
            self.upstream, self.upstream_keys, self.accepted, self.over_limit
        );
        let _ = writeln!(
            out,
            "most units in any {} s window: {} (limit {})",
            s.window_s, self.max_units_in_window, s.capacity
        );
        let _ = writeln!(out, "ownership:");
        for o in &self.owners {
            let admitting = o
                .admitting_ms
                .map_or("never admitted".to_owned(), |a| format!("admitting from {}", secs(a)));
            let ended = o.ended.map_or("to the end".to_owned(), |(at, why)| {
                format!("until {} ({why})", secs(at))
            });
            let _ = writeln!(
                out,
                "  replica {} (process {}, lease {}): granted {}, {admitting}, {ended}",
                o.replica,
                o.epoch.0,
                o.epoch.1,
                secs(o.acquired_ms)
            );
        }
        let _ = writeln!(
            out,
            "answer time: p50 {} ms, p99 {} ms, max {} ms",
            self.answer_time_ms(50),
            self.answer_time_ms(99),
            self.latencies.max_ms()
        );
        let _ = writeln!(
            out,
            "checked after {} events (ended {}): at most {} replica admitting at once, one upstream call per \
             question, the platform's bucket never below zero",
            self.events,
            secs(self.end_ms),
            self.max_admitting
        );
        out
    }
}

pub(super) fn secs(ms: u64) -> String {
    format!("{}.{:03}s", ms / 1000, ms % 1000)
}
