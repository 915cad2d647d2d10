//! Reports of a run: per session, per upstream service (its budget, whichever platforms
//! spent it) and per platform (its calls), as a human table or JSON, plus the admissions
//! log (one JSON line per call).
//!
//! Everything here comes from the run's aggregates ([`crate::aggregate::Summary`]), never
//! from per-call records: a run of millions of calls reports as a run of ten does.
//!
//! Invariants: rows come out in a fixed order (sessions in the order the workload names
//! them, services in the run's order — every platform's first service in the workload's
//! order, then their text services — platforms in the workload's order); nothing printed
//! depends on hash-map iteration. The human table lists the platforms apart only where
//! they are not the services already listed (a service shared, or named otherwise than
//! its one platform, or a platform calling two): otherwise each row would repeat one. Waits are measured from a call's first submission to
//! its admission, in microseconds, through an HDR histogram of 3 significant digits
//! (quantiles are capped at the exact maximum). A report of a run that kept only the rows
//! of the sessions that waited longest ([`crate::aggregate::SessionRows::Longest`]) lists
//! those; its table is the same as with every row.
//!
//! When calls carry keys (identical requests exist), a session's `calls` and `units` are
//! what it was charged (a coalesced call is charged to one session), its waits are those
//! of calls that led or joined a flight (from submission until the flight went out), and
//! the tables gain deduplication columns: per session and platform hits and joins, per
//! service upstream calls, joins, hits and the duplicate rate (R-D9). Without keys the report is
//! exactly what it was before deduplication was simulated.

use std::fmt::Write as _;
use std::io::{self, Write};
use std::time::Duration;

use besluitbron_core::{Instant, LimitConfig, PlatformId, ServiceId, Units};
use serde::Serialize;

use crate::aggregate::{Scope, SessionRow, Waits};
use crate::engine::{CallState, RunOutcome};

pub use crate::aggregate::{LONGEST_WAITERS_SHOWN, SESSION_ROWS_MAX};

/// One session's figures.
#[derive(Clone, Debug, Serialize)]
pub struct SessionReport {
    /// Name.
    pub session: String,
    /// Calls admitted.
    pub calls: u64,
    /// Units charged for them.
    pub units: Units,
    /// Share of all units charged, in percent.
    pub share_pct: f64,
    /// Calls withdrawn while waiting.
    pub cancelled: u64,
    /// Calls refused by a queue bound.
    pub refused: u64,
    /// Median wait in milliseconds.
    pub wait_p50_ms: f64,
    /// 99th percentile wait in milliseconds.
    pub wait_p99_ms: f64,
    /// Longest wait in milliseconds (exact).
    pub wait_max_ms: f64,
    /// Requests answered from the buffer (only when calls carry keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
    /// Requests that joined another request's flight (only when calls carry keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joins: Option<u64>,
}

/// One upstream service's figures: its budget.
#[derive(Clone, Debug, Serialize)]
pub struct ServiceReport {
    /// Service id.
    pub service: ServiceId,
    /// The platforms that call it.
    pub platforms: Vec<PlatformId>,
    /// The service and its platforms as the table names it (`koop-zoekservice (bwb,
    /// cvdr)`; `obv` for a service of one platform named as the platform).
    pub label: String,
    /// How the service enforced its limit.
    pub model: &'static str,
    /// The enforced limit (`60/60s`), or `none`.
    pub limit: String,
    /// The limit BesluitBron kept (`60/60s`), or `none`.
    pub local_limit: String,
    /// Calls submitted.
    pub calls: u64,
    /// Units the platform accepted.
    pub units_admitted: Units,
    /// The most units in any window of length W (sliding).
    pub max_units_in_window: Units,
    /// 429s because BesluitBron exceeded the limit (violations).
    pub violations: u64,
    /// 429s from throttling faults.
    pub throttled: u64,
    /// Calls let out uncounted (legacy defect).
    pub uncounted: u64,
    /// Deduplication figures (only when calls carry keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dedup: Option<DedupReport>,
}

/// One platform's figures: its calls, at whichever of its services.
#[derive(Clone, Debug, Serialize)]
pub struct PlatformReport {
    /// Platform id.
    pub platform: PlatformId,
    /// The services it calls: its first takes its calls, its second its text.
    pub services: Vec<ServiceId>,
    /// Calls made.
    pub calls: u64,
    /// Attempts sent for them (each retry counts again).
    pub upstream: u64,
    /// Median wait in milliseconds.
    pub wait_p50_ms: f64,
    /// 99th percentile wait in milliseconds.
    pub wait_p99_ms: f64,
    /// Longest wait in milliseconds (exact).
    pub wait_max_ms: f64,
    /// Requests answered from the buffer (only when calls carry keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hits: Option<u64>,
    /// Requests that joined another request's flight (only when calls carry keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joins: Option<u64>,
}

/// One service's deduplication figures (R-D9).
#[derive(Clone, Copy, Debug, Serialize)]
pub struct DedupReport {
    /// Calls sent to the platform.
    pub upstream: u64,
    /// Requests that joined a flight under way.
    pub joins: u64,
    /// Requests answered from the buffer.
    pub hits: u64,
    /// (joins + hits) / requests, in percent.
    pub duplicate_pct: f64,
}

/// A whole run's report.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// Scenario or trace name.
    pub scenario: String,
    /// `fair` or `legacy`.
    pub policy: &'static str,
    /// Root seed.
    pub seed: u64,
    /// Simulated time at the last event, in milliseconds.
    pub simulated_ms: u64,
    /// Events processed (each followed by an invariant check).
    pub events: u64,
    /// Admissions whose wait the starvation bound covered.
    pub bound_checked: u64,
    /// FNV-1a 64 of the trace, in hex.
    pub trace_hash: String,
    /// Trace lines.
    pub trace_lines: u64,
    /// All sessions' waits together.
    pub all_sessions: SessionReport,
    /// Per session (those the run kept: every session, or the longest waiters).
    pub sessions: Vec<SessionReport>,
    /// Per service.
    pub services: Vec<ServiceReport>,
    /// Per platform.
    pub platforms: Vec<PlatformReport>,
    /// Sessions in the workload (listed or not in [`Report::sessions`]).
    #[serde(skip)]
    pub sessions_total: u32,
}

/// Micro- to milliseconds, as the report prints them.
fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

/// A share of `total` in percent, to one decimal.
fn share(units: Units, total: Units) -> f64 {
    if total.is_zero() {
        0.0
    } else {
        (units.as_milli() as f64 * 1000.0 / total.as_milli() as f64).round() / 10.0
    }
}

impl SessionReport {
    fn of_row(session: String, r: &SessionRow, total: Units, keyed: bool) -> SessionReport {
        SessionReport {
            session,
            calls: r.calls,
            units: r.units,
            share_pct: share(r.units, total),
            cancelled: r.cancelled,
            refused: r.refused,
            wait_p50_ms: ms(r.wait_p50_us),
            wait_p99_ms: ms(r.wait_p99_us),
            wait_max_ms: ms(r.wait_max_us),
            hits: keyed.then_some(r.hits),
            joins: keyed.then_some(r.joins),
        }
    }
}

/// Waits' median, 99th percentile and maximum in milliseconds.
fn wait_ms(w: &Waits) -> (f64, f64, f64) {
    (ms(w.quantile_us(0.5)), ms(w.quantile_us(0.99)), ms(w.max_us()))
}

fn limit_text(l: Option<LimitConfig>) -> String {
    match l {
        Some(l) => format!("{}/{}s", l.capacity.compact(), trim_secs(l.window)),
        None => "none".to_owned(),
    }
}

fn trim_secs(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(1000) {
        (ms / 1000).to_string()
    } else {
        format!("{}", ms as f64 / 1000.0)
    }
}

impl Report {
    /// The report of a finished run, from its aggregates.
    pub fn of(run: &RunOutcome) -> Report {
        let sum = &run.summary;
        let total = sum.totals.units;
        let sessions = sum
            .rows
            .iter()
            .map(|r| SessionReport::of_row(run.session_name(r.session).into_owned(), r, total, run.keyed))
            .collect();
        let t = &sum.totals;
        let (p50, p99, max) = wait_ms(&t.waits);
        let all_sessions = SessionReport {
            session: format!("all ({} sessions)", sum.sessions_total),
            calls: t.calls,
            units: t.units,
            share_pct: share(t.units, total),
            cancelled: t.cancelled,
            refused: t.refused,
            wait_p50_ms: p50,
            wait_p99_ms: p99,
            wait_max_ms: max,
            hits: run.keyed.then_some(t.hits),
            joins: run.keyed.then_some(t.joins),
        };
        let scope = |scope: Scope| sum.scope(&scope);
        let services = run
            .services
            .iter()
            .map(|p| ServiceReport {
                service: p.id,
                platforms: p.platforms.clone(),
                label: p.label(),
                model: if p.limit.is_some() { p.model.as_str() } else { "none" },
                limit: limit_text(p.limit),
                local_limit: limit_text(p.local_limit),
                calls: p.calls,
                units_admitted: p.counters.accepted_units,
                max_units_in_window: p.max_units_in_window,
                violations: p.counters.over_limit,
                throttled: p.counters.throttled,
                uncounted: p.uncounted,
                dedup: run.keyed.then(|| {
                    let (joins, hits) = scope(Scope::Service(p.id)).map_or((0, 0), |s| (s.joins, s.hits));
                    DedupReport {
                        upstream: p.upstream,
                        joins,
                        hits,
                        duplicate_pct: if p.calls == 0 {
                            0.0
                        } else {
                            ((joins + hits) as f64 * 1000.0 / p.calls as f64).round() / 10.0
                        },
                    }
                }),
            })
            .collect();
        let platforms = run
            .platforms
            .iter()
            .filter(|p| p.calls > 0)
            .map(|p| {
                let figures = scope(Scope::Platform(p.id));
                let (p50, p99, max) = figures.map_or((0.0, 0.0, 0.0), |s| wait_ms(&s.waits));
                PlatformReport {
                    platform: p.id,
                    services: p.services.clone(),
                    calls: p.calls,
                    upstream: p.upstream,
                    wait_p50_ms: p50,
                    wait_p99_ms: p99,
                    wait_max_ms: max,
                    hits: run.keyed.then(|| figures.map_or(0, |s| s.hits)),
                    joins: run.keyed.then(|| figures.map_or(0, |s| s.joins)),
                }
            })
            .collect();
        Report {
            scenario: run.name.clone(),
            policy: run.policy.as_str(),
            seed: run.seed,
            simulated_ms: run.end_at.as_millis(),
            events: run.events,
            bound_checked: run.bound_checked,
            trace_hash: format!("{:016x}", run.trace_hash),
            trace_lines: run.trace_lines,
            all_sessions,
            sessions,
            services,
            platforms,
            sessions_total: sum.sessions_total,
        }
    }

    /// The session's row, by name.
    pub fn session(&self, name: &str) -> Option<&SessionReport> {
        self.sessions.iter().find(|s| s.session == name)
    }

    /// Violations (over-limit 429s) over all services.
    pub fn violations(&self) -> u64 {
        self.services.iter().map(|p| p.violations).sum()
    }

    /// Whether the platforms are other than the services listed: a service several call,
    /// or one named otherwise than its one platform, or a platform that calls two.
    fn platforms_differ(&self) -> bool {
        self.services
            .iter()
            .any(|s| !matches!(s.platforms.as_slice(), [only] if only.as_str() == s.service.as_str()))
    }

    /// The human table.
    pub fn render(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(
            out,
            "scenario {} · policy {} · seed {} · simulated {}",
            self.scenario,
            self.policy,
            self.seed,
            Instant::from_millis(self.simulated_ms)
        );
        out.push('\n');
        self.render_sessions(&mut out);
        out.push('\n');
        self.render_services(&mut out);
        out.push('\n');
        if self.platforms_differ() {
            self.render_platforms(&mut out);
            out.push('\n');
        }
        let _ = writeln!(
            out,
            "invariants held after each of {} events ({} waits within the starvation bound's scope)",
            self.events, self.bound_checked
        );
        let _ = writeln!(out, "trace: {} lines, fnv1a64 {}", self.trace_lines, self.trace_hash);
        out
    }

    /// The sessions' table: every session, or with many the sum of all and those that
    /// waited longest.
    fn render_sessions(&self, out: &mut String) {
        let keyed = self.all_sessions.hits.is_some();
        let mut header = vec![
            "session",
            "calls",
            "units",
            "share",
            "cancelled",
            "refused",
            "wait p50",
            "wait p99",
            "wait max",
        ];
        if keyed {
            header.extend(["hits", "joins"]);
        }
        let row = |s: &SessionReport| {
            let mut cells = vec![
                s.session.clone(),
                s.calls.to_string(),
                s.units.to_string(),
                format!("{:.1}%", s.share_pct),
                s.cancelled.to_string(),
                s.refused.to_string(),
                secs(s.wait_p50_ms),
                secs(s.wait_p99_ms),
                secs(s.wait_max_ms),
            ];
            cells.extend(s.hits.into_iter().chain(s.joins).map(|n| n.to_string()));
            cells
        };
        let mut rows: Vec<Vec<String>> = Vec::new();
        let mut note = None;
        if self.sessions_total as usize <= SESSION_ROWS_MAX {
            rows.extend(self.sessions.iter().map(row));
        } else {
            rows.push(row(&self.all_sessions));
            let mut longest: Vec<&SessionReport> = self.sessions.iter().collect();
            // Longest wait first; equal waits keep the workload's order (stable sort).
            longest.sort_by(|a, b| b.wait_max_ms.total_cmp(&a.wait_max_ms));
            rows.extend(longest.iter().take(LONGEST_WAITERS_SHOWN).map(|s| row(s)));
            note = Some(format!(
                "(the {LONGEST_WAITERS_SHOWN} sessions that waited longest; all {} are in --json)",
                self.sessions_total
            ));
        }
        table(out, &header, &rows);
        if let Some(note) = note {
            let _ = writeln!(out, "{note}");
        }
    }

    /// The services' table, one row per service (named with the platforms that call it
    /// where they are other than its namesake).
    fn render_services(&self, out: &mut String) {
        let keyed = self.all_sessions.hits.is_some();
        let mut header = vec![
            "service",
            "model",
            "limit",
            "kept",
            "calls",
            "units",
            "max units/W",
            "violations",
            "throttled",
            "uncounted",
        ];
        if keyed {
            header.extend(["upstream", "joins", "hits", "dup rate"]);
        }
        let rows: Vec<Vec<String>> = self
            .services
            .iter()
            .map(|p| {
                let mut cells = vec![
                    p.label.clone(),
                    p.model.to_owned(),
                    p.limit.clone(),
                    p.local_limit.clone(),
                    p.calls.to_string(),
                    p.units_admitted.to_string(),
                    p.max_units_in_window.to_string(),
                    p.violations.to_string(),
                    p.throttled.to_string(),
                    p.uncounted.to_string(),
                ];
                if let Some(d) = p.dedup {
                    cells.extend([
                        d.upstream.to_string(),
                        d.joins.to_string(),
                        d.hits.to_string(),
                        format!("{:.1}%", d.duplicate_pct),
                    ]);
                }
                cells
            })
            .collect();
        table(out, &header, &rows);
    }

    /// The platforms' table, where they are other than the services: one row per
    /// platform, the services it calls, its calls and their waits.
    fn render_platforms(&self, out: &mut String) {
        let keyed = self.all_sessions.hits.is_some();
        let mut header = vec![
            "platform", "services", "calls", "upstream", "wait p50", "wait p99", "wait max",
        ];
        if keyed {
            header.extend(["hits", "joins"]);
        }
        let rows: Vec<Vec<String>> = self
            .platforms
            .iter()
            .map(|p| {
                let services: Vec<&str> = p.services.iter().map(|s| s.as_str()).collect();
                let mut cells = vec![
                    p.platform.to_string(),
                    services.join(", "),
                    p.calls.to_string(),
                    p.upstream.to_string(),
                    secs(p.wait_p50_ms),
                    secs(p.wait_p99_ms),
                    secs(p.wait_max_ms),
                ];
                cells.extend(p.hits.into_iter().chain(p.joins).map(|n| n.to_string()));
                cells
            })
            .collect();
        table(out, &header, &rows);
    }

    /// The JSON report (pretty, stable field order).
    pub fn to_json(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).expect("a report serialises")
    }
}

fn secs(ms: f64) -> String {
    format!("{:.3}s", ms / 1000.0)
}

fn table(out: &mut String, header: &[&str], rows: &[Vec<String>]) {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |out: &mut String, cells: Vec<&str>| {
        let mut text = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = w - cell.chars().count();
            if i > 0 {
                text.push_str("  ");
            }
            if i == 0 {
                text.push_str(cell);
                text.push_str(&" ".repeat(pad));
            } else {
                text.push_str(&" ".repeat(pad));
                text.push_str(cell);
            }
        }
        let _ = writeln!(out, "{}", text.trim_end());
    };
    line(out, header.to_vec());
    for r in rows {
        line(out, r.iter().map(String::as_str).collect());
    }
}

/// One line of the admissions log.
#[derive(Clone, Debug, Serialize, serde::Deserialize, PartialEq)]
pub struct AdmissionLine {
    /// The call's index (trace line number for replays).
    pub call: u64,
    /// Session name.
    pub session: String,
    /// Platform.
    #[serde(deserialize_with = "crate::ids::deserialize")]
    pub platform: PlatformId,
    /// Units asked.
    pub cost: Units,
    /// First submission, ms.
    pub submitted_ms: u64,
    /// Admission, ms; `null` when the call never went (cancelled or refused).
    pub admitted_ms: Option<u64>,
}

/// The admissions log: one JSON line per call, ordered by call index.
pub fn write_admissions(run: &RunOutcome, mut w: impl Write) -> io::Result<()> {
    let mut calls: Vec<_> = run.calls.iter().collect();
    calls.sort_by_key(|c| c.index);
    for c in calls {
        let line = AdmissionLine {
            call: c.index,
            session: run.session_name(c.session).into_owned(),
            platform: c.platform,
            cost: c.cost,
            submitted_ms: c.submitted_at.as_millis(),
            admitted_ms: match c.state {
                CallState::Done | CallState::Sent | CallState::Failed => c.admitted_at.map(Instant::as_millis),
                _ => None,
            },
        };
        serde_json::to_writer(&mut w, &line)?;
        w.write_all(b"\n")?;
    }
    Ok(())
}
