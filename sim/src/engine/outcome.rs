//! What a run gives back: its calls, per upstream service and per platform what happened,
//! the admissions, and a broken invariant as a [`Failure`].

use std::fmt;

use besluitbron_core::path::PathStats;
use besluitbron_core::scheduler::AdmitRule;
use besluitbron_core::{Instant, LimitConfig, PlatformId, ServiceId, Units};

use crate::aggregate::{SessionRows, Summary};
use crate::call_record::CallRecord;
use crate::platform::PlatformCounters;
use crate::policy::PolicyKind;
use crate::scenario::{LimitModel, SessionPlan};

/// How to run.
#[derive(Clone, Copy, Debug)]
pub struct RunOptions {
    /// The policy at every limited platform.
    pub policy: PolicyKind,
    /// The root seed.
    pub seed: u64,
    /// Keep every trace line (for `--trace`).
    pub keep_trace: bool,
    /// Print a `\r` progress line on stderr (the caller checks it is a terminal).
    pub progress: bool,
}

/// What a run holds and spends besides its aggregates ([`crate::aggregate::Summary`],
/// always kept).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Footprint {
    /// Every call's record ([`RunOutcome::calls`]) and every admission
    /// ([`RunOutcome::admissions`]): memory then grows with the calls made. Needed for
    /// the admissions log, the plot, the HTML page and the differential tests.
    pub calls: bool,
    /// Which session rows.
    pub sessions: SessionRows,
    /// How often the paths' own invariants are checked.
    pub path_checks: PathChecks,
}

/// How often a run checks its paths' own invariants (the shell's, the path's and every
/// lane scheduler's, [`besluitbron_core::path::Shell::check_invariants`]). A check is
/// linear in what the path holds (requests waiting or out, sessions remembered), so
/// checking after every step makes a long, busy run quadratic. The simulator's own
/// checker (the limit, FIFO, the starvation bound, the mirror of the queues, the flights)
/// runs after every event whatever this says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PathChecks {
    /// After every step (tests, snapshots and small runs).
    EveryStep,
    /// After every step while a path holds at most one thing, else after every
    /// [`PATH_CHECK_SPACING`] × `held` steps: a fraction of one held thing's worth of
    /// checking per step, whatever the run's size. A run's last steps are always checked.
    Bounded,
}

/// How many steps per thing a path holds go between two checks of its invariants under
/// [`PathChecks::Bounded`]: a check costs about as much as four steps of a busy run.
pub const PATH_CHECK_SPACING: u64 = 4;

impl Footprint {
    /// Every call's record, every session's row, a check after every step.
    pub const fn everything() -> Footprint {
        Footprint {
            calls: true,
            sessions: SessionRows::All,
            path_checks: PathChecks::EveryStep,
        }
    }

    /// The aggregates and the rows of the sessions that waited longest (the human
    /// table's), nothing per call, the paths checked at bounded cost: memory follows the
    /// calls in flight and time the calls made.
    pub const fn lean() -> Footprint {
        Footprint {
            calls: false,
            sessions: SessionRows::Longest(crate::aggregate::LONGEST_WAITERS_SHOWN),
            path_checks: PathChecks::Bounded,
        }
    }
}

/// One upstream service's results: its budget, whichever platforms spent it.
#[derive(Clone, Debug)]
pub struct ServiceOutcome {
    /// Which service.
    pub id: ServiceId,
    /// The run's platforms that call it, in the run's order.
    pub platforms: Vec<PlatformId>,
    /// How it enforced its limit.
    pub model: LimitModel,
    /// The limit it enforced.
    pub limit: Option<LimitConfig>,
    /// The limit BesluitBron kept locally.
    pub local_limit: Option<LimitConfig>,
    /// Its counters.
    pub counters: PlatformCounters,
    /// The most units accepted in any window of length W.
    pub max_units_in_window: Units,
    /// Calls the gate let out uncounted (legacy defect).
    pub uncounted: u64,
    /// Calls submitted to it.
    pub calls: u64,
    /// Calls sent to the service (each 429 retry counts again).
    pub upstream: u64,
}

impl ServiceOutcome {
    /// `koop-zoekservice (bwb, cvdr)`; a service of one platform named as the platform is
    /// its id alone (`obv`).
    pub fn label(&self) -> String {
        match self.platforms.as_slice() {
            [only] if only.as_str() == self.id.as_str() => self.id.to_string(),
            list => {
                let names: Vec<&str> = list.iter().map(|p| p.as_str()).collect();
                format!("{} ({})", self.id, names.join(", "))
            }
        }
    }
}

/// One platform's calls: how many it made, at which services, and its path.
#[derive(Clone, Debug)]
pub struct PlatformCalls {
    /// Which platform.
    pub id: PlatformId,
    /// The services it calls: its first takes its calls, its second its text.
    pub services: Vec<ServiceId>,
    /// Calls it made.
    pub calls: u64,
    /// Attempts sent for its calls (each retry counts again).
    pub upstream: u64,
    /// The counters of its budget group's path (fair policy), which platforms sharing a
    /// service share.
    pub path: Option<PathStats>,
}

/// Everything a finished run produced.
#[derive(Debug)]
pub struct RunOutcome {
    /// The scenario or trace name.
    pub name: String,
    /// The policy.
    pub policy: PolicyKind,
    /// The root seed.
    pub seed: u64,
    /// Sessions, as planned: every session when per-call records are kept
    /// ([`Footprint::calls`]), else the named ones only (a generated session is known by its
    /// number: [`RunOutcome::session_name`]).
    pub sessions: Vec<SessionPlan>,
    /// The generated groups' names: (prefix, first session, sessions).
    pub(crate) generated: Vec<(String, u32, u32)>,
    /// Calls, in creation order, when kept ([`Footprint::calls`]); else empty.
    pub calls: Vec<CallRecord>,
    /// What the run aggregated as it went: the report, the checks' figures and the
    /// capacity answer come from here.
    pub summary: Summary,
    /// The upstream services that received calls, in the run's order
    /// ([`RunServices`](crate::scenario::RunServices): every platform's first service in
    /// the workload's order, then their text services).
    pub services: Vec<ServiceOutcome>,
    /// Every platform of the run, in the workload's order
    /// ([`Workload::platforms`](crate::scenario::Workload::platforms)).
    pub platforms: Vec<PlatformCalls>,
    /// The instant of the last event.
    pub end_at: Instant,
    /// Events processed.
    pub events: u64,
    /// Admissions checked against the starvation bound.
    pub bound_checked: u64,
    /// Checks of the paths' own invariants (fair policy): after every step while a path
    /// holds little, at bounded cost per step while it holds much.
    pub path_checks: u64,
    /// The trace hash.
    pub trace_hash: u64,
    /// Trace lines.
    pub trace_lines: u64,
    /// Every trace line, when kept.
    pub trace: Vec<String>,
    /// Calls carry keys: reports show the deduplication columns.
    pub keyed: bool,
    /// Every admission under the fair policy, in order: (instant, platform, service,
    /// session, what), when per-call records are kept or the workload is a recording. The
    /// server's shell gives the same list for the same workload (the differential test).
    pub admissions: Vec<AdmissionLine>,
}

impl RunOutcome {
    /// Session `s`'s name.
    pub fn session_name(&self, s: u32) -> std::borrow::Cow<'_, str> {
        if let Some(plan) = self.sessions.get(s as usize) {
            return std::borrow::Cow::Borrowed(plan.name.as_str());
        }
        let name = self
            .generated
            .iter()
            .find(|(_, first, n)| s >= *first && s - first < *n)
            .map_or_else(
                || format!("#{s}"),
                |(prefix, first, _)| format!("{prefix}-{}", s - first),
            );
        std::borrow::Cow::Owned(name)
    }

    /// Sessions in the workload.
    pub fn session_count(&self) -> u32 {
        self.summary.sessions_total
    }

    /// The service call `c` went to: its platform's second for a text fetch where it has
    /// one, else its first.
    pub fn service_of(&self, c: &CallRecord) -> Option<ServiceId> {
        let p = self.platforms.iter().find(|p| p.id == c.platform)?;
        let text = c.op.as_deref() == Some(crate::scenario::TEXT_OP) && p.services.len() > 1;
        p.services.get(usize::from(text)).copied()
    }
}

/// One admission of a fair run: what the differential test compares with the server.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct AdmissionLine {
    /// When, in milliseconds.
    pub at_ms: u64,
    /// The platform.
    pub platform: PlatformId,
    /// The upstream service it went to, whose budget it spent.
    pub service: ServiceId,
    /// The session charged.
    pub session: String,
    /// What went out: the call's key text (`q`).
    pub call: String,
    /// The rule that admitted it: whether the call went at once or from the queue.
    pub rule: AdmitRule,
}

impl fmt::Display for AdmissionLine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "t={}ms platform={} service={} session={} call={} rule={}",
            self.at_ms,
            self.platform,
            self.service,
            self.session,
            self.call,
            self.rule.as_str()
        )
    }
}

/// A broken invariant: the run stops at the first one.
#[derive(Debug)]
pub struct Failure {
    /// The scenario or trace name.
    pub name: String,
    /// The policy.
    pub policy: PolicyKind,
    /// The root seed.
    pub seed: u64,
    /// When.
    pub at: Instant,
    /// What.
    pub what: String,
    /// The last trace lines before it.
    pub recent: Vec<String>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "invariant broken in {} (policy {}, seed {}) at t={}: {}",
            self.name,
            self.policy.as_str(),
            self.seed,
            self.at,
            self.what
        )?;
        writeln!(f, "last events:")?;
        for line in &self.recent {
            writeln!(f, "  {line}")?;
        }
        Ok(())
    }
}

/// What a simulated platform answered, as the path's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimError {
    /// 429.
    RateLimited,
    /// A failed answer (a 5xx).
    Failed,
}
