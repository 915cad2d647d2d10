//! `--report FILE.html`: one self-contained HTML page (inline SVG and CSS, no script)
//! that shows a run the way a reader wants it, per limited upstream service (whose budget
//! the platforms that call it share):
//!
//! - **lanes**: one row per session, each call a bar from its submission to its
//!   admission (its wait) and a tick when it went; with both policies, legacy and fair
//!   side by side on the same time axis;
//! - **waits**: median, p95 and max per policy, drawn as bars against the scheduler's
//!   starvation bound (`FairScheduler::starvation_bound` for a one-unit call), which the
//!   fair policy keeps and the legacy one does not;
//! - **budget**: the service's bucket over time under each policy (units left, from the
//!   calls it accepted, whichever platform's), against its capacity.
//!
//! Every element carries a class naming what it is (`lane`, `wait`, `admit`, `bound`,
//! `budget`, …), so the page's structure can be checked without pixels
//! ([`svg_structure`]).
//!
//! Invariants: the page depends only on the runs (no clock, no randomness); sizes are
//! bounded — at most [`MAX_ROWS`] session rows per lane chart (the busiest; the others
//! are counted in a note) and [`MAX_MARKS`] calls drawn per chart.
//!
//! What this module does not do: load anything from elsewhere, or run anything.

use std::collections::BTreeMap;
use std::fmt::{self, Write as _};
use std::time::Duration;

use maud::{DOCTYPE, Markup, PreEscaped, Render, html};

use besluitbron_core::scheduler::{FairScheduler, SchedulerConfig};
use besluitbron_core::{Instant, LimitConfig, ServiceId, Units};

use crate::engine::{RunOutcome, ServiceOutcome};

/// Session rows drawn per lane chart.
pub const MAX_ROWS: usize = 40;
/// Calls drawn per lane chart.
pub const MAX_MARKS: usize = 5_000;

const WIDTH: f64 = 470.0;
const LEFT: f64 = 100.0;
const ROW: f64 = 14.0;
/// The width of every chart.
const CHART: f64 = LEFT + WIDTH + 10.0;

/// A coordinate or a length, written with one decimal.
#[derive(Clone, Copy)]
struct At(f64);

impl Render for At {
    fn render_to(&self, out: &mut String) {
        let _ = write!(out, "{:.1}", self.0);
    }
}

/// Seconds, written with one decimal and the unit.
struct Secs(f64);

impl fmt::Display for Secs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.1} s", self.0)
    }
}

fn secs_of_ms(ms: u64) -> Secs {
    Secs(ms as f64 / 1000.0)
}

/// The whole page for `runs` (one per policy, in the order asked: legacy first).
pub fn render_report(title: &str, runs: &[&RunOutcome]) -> String {
    let policies: Vec<&str> = runs.iter().map(|r| r.policy.as_str()).collect();
    let end = runs
        .iter()
        .map(|r| r.end_at)
        .max()
        .unwrap_or(Instant::ZERO)
        .max(Instant::from_millis(1000));
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                title { (title) }
                style { (PreEscaped(STYLE)) }
            }
            body {
                h1 { (title) }
                p.lede {
                    "Policies: " (policies.join(" and ")) ". Seed " (runs.first().map_or(0, |r| r.seed)) ". "
                    "Each row is a session; a bar is a call's wait from its submission to the instant it \
                     went to the platform, the tick the instant it went; red is a session's wait for its \
                     turn (since its call came or its previous call went) past the fair scheduler's \
                     starvation bound. The bound is the fair queue's promise while the waiting sessions' \
                     next calls together fit in the platform's budget and no Retry-After runs; the \
                     simulator checks every fair wait under those conditions against it."
                }
                @for id in stations(runs) {
                    (station(runs, id, &policies, end))
                }
            }
        }
    };
    page.into_string()
}

/// One limited station's section: lanes per policy, the waits as a table and a chart, and
/// the service's budget.
fn station(runs: &[&RunOutcome], id: ServiceId, policies: &[&str], end: Instant) -> Markup {
    let outcomes: Vec<&ServiceOutcome> = runs
        .iter()
        .filter_map(|r| r.services.iter().find(|p| p.id == id))
        .collect();
    let platforms: Vec<&str> = outcomes
        .first()
        .map(|o| o.platforms.iter().map(|p| p.display_name()).collect())
        .unwrap_or_default();
    let name = format!("{} — {}", id.display_name(), platforms.join(", "));
    let local_limit = outcomes.iter().find_map(|p| p.local_limit.or(p.limit));
    let bound = local_limit.and_then(starvation_bound);
    let limit = outcomes.iter().find_map(|p| p.limit);
    html! {
        section.platform id=(id.as_str()) {
            h2 { (name) }
            @if let (Some(l), Some(b)) = (local_limit, bound) {
                p {
                    "Limit " (l.capacity.compact()) " units per " (l.window.as_secs_f64()) " s; "
                    "starvation bound for a one-unit call: " (Secs(b.as_secs_f64())) "."
                }
            }
            div.side-by-side {
                @for run in runs {
                    figure {
                        figcaption { (run.policy.as_str()) " policy" }
                        (lanes_svg(run, id, end, bound))
                    }
                }
            }
            (waits_table(runs, id, bound))
            div.side-by-side {
                figure {
                    figcaption { "Waits per policy: of the calls, and a session's longest wait for its turn" }
                    (waits_svg(runs, id, bound))
                }
                @if let Some(l) = limit {
                    figure {
                        figcaption { "The service's budget: units left over time (" (policies.join(" and ")) ")" }
                        (budget_svg(runs, id, l, end))
                    }
                }
            }
        }
    }
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1300px}\
h2{margin-top:2em;border-bottom:1px solid #ccc}.side-by-side{display:flex;gap:1em;flex-wrap:wrap}\
figure{margin:0}figcaption{font-weight:600}svg{background:#fff;border:1px solid #ddd}\
svg text{font:11px system-ui,sans-serif;fill:#333}.wait{stroke:#e08a00;stroke-width:6}\
.wait.over{stroke:#c00}.admit{stroke:#1f5fa8;stroke-width:2}.bound{stroke:#c00;stroke-dasharray:4 3;stroke-width:1.5}\
.axis{stroke:#888}.budget{fill:none;stroke-width:1.5}.budget.fair{stroke:#1f5fa8}\
.budget.legacy{stroke:#e08a00}.capacity{stroke:#888;stroke-dasharray:2 2}.bar.fair{fill:#1f5fa8}\
.bar.legacy{fill:#e08a00}table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;\
padding:2px 8px;text-align:right}.note{fill:#666}";

/// The limited services that any run used, in the runs' order of services.
fn stations(runs: &[&RunOutcome]) -> Vec<ServiceId> {
    let mut out: Vec<ServiceId> = Vec::new();
    for r in runs {
        for s in &r.services {
            if s.local_limit.is_some() && !out.contains(&s.id) {
                out.push(s.id);
            }
        }
    }
    out
}

/// The core's starvation bound for a one-unit call at a lane keeping `limit`.
fn starvation_bound(limit: LimitConfig) -> Option<Duration> {
    let scheduler = FairScheduler::new(SchedulerConfig::with_limit(limit)).ok()?;
    Some(scheduler.starvation_bound(Units::ONE))
}

/// Whether a call of `run` was counted at service `id`.
fn at_station(run: &RunOutcome, call: usize, id: ServiceId) -> bool {
    run.service_of(&run.calls[call]) == Some(id)
}

/// One call admitted at a station.
#[derive(Clone, Copy)]
struct Admitted {
    session: u32,
    submitted: Instant,
    admitted: Instant,
    /// When the session's turn began: the later of the call's submission and the
    /// session's previous admission here (the checker's wait start, which the
    /// starvation bound limits).
    turn: Instant,
}

/// The calls admitted at the station, in admission order.
fn admitted(run: &RunOutcome, id: ServiceId) -> Vec<Admitted> {
    let mut calls: Vec<Admitted> = (0..run.calls.len())
        .filter(|&i| at_station(run, i, id))
        .filter_map(|i| {
            let c = &run.calls[i];
            c.admitted_at.map(|a| Admitted {
                session: c.session,
                submitted: c.submitted_at,
                admitted: a,
                turn: c.submitted_at,
            })
        })
        .collect();
    calls.sort_by_key(|c| (c.admitted, c.submitted));
    let mut last: BTreeMap<u32, Instant> = BTreeMap::new();
    for c in &mut calls {
        if let Some(&prev) = last.get(&c.session) {
            c.turn = c.submitted.max(prev);
        }
        last.insert(c.session, c.admitted);
    }
    calls
}

fn x_of(at: Instant, end: Instant) -> f64 {
    LEFT + at.as_nanos() as f64 / end.as_nanos().max(1) as f64 * WIDTH
}

fn lanes_svg(run: &RunOutcome, id: ServiceId, end: Instant, bound: Option<Duration>) -> Markup {
    let calls = admitted(run, id);
    // Rows: the sessions that waited longest first (ties: by name), at most MAX_ROWS.
    let mut longest: BTreeMap<u32, Duration> = BTreeMap::new();
    for c in &calls {
        let w = longest.entry(c.session).or_default();
        *w = (*w).max(c.admitted.saturating_since(c.submitted));
    }
    let mut rows: Vec<(u32, Duration)> = longest.into_iter().collect();
    rows.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| run.sessions[a.0 as usize].name.cmp(&run.sessions[b.0 as usize].name))
    });
    let hidden = rows.len().saturating_sub(MAX_ROWS);
    rows.truncate(MAX_ROWS);
    let row_of: BTreeMap<u32, usize> = rows.iter().enumerate().map(|(i, &(s, _))| (s, i)).collect();
    let height = 40.0 + ROW * rows.len().max(1) as f64 + if hidden > 0 { 16.0 } else { 0.0 };
    let axis_y = 20.0 + ROW * rows.len().max(1) as f64;
    let row_y = |row: usize| 20.0 + ROW * row as f64 + ROW / 2.0;
    let policy = run.policy.as_str();
    html! {
        svg xmlns="http://www.w3.org/2000/svg" class={ "lanes " (policy) } width=(CHART) height=(height)
            viewBox={ "0 0 " (CHART) " " (height) } role="img"
            aria-label={ (policy) " policy: each session's calls over time" } {
            line.axis x1=(LEFT) y1=(axis_y) x2=(LEFT + WIDTH) y2=(axis_y) {}
            @for k in 0..=4u64 {
                @let at = Instant::from_nanos(end.as_nanos() / 4 * k);
                text.tick x=(At(x_of(at, end))) y=(At(axis_y + 14.0)) text-anchor=(if k == 4 { "end" } else { "middle" }) {
                    (format!("{:.0} s", at.as_millis() as f64 / 1000.0))
                }
            }
            @for (i, &(s, w)) in rows.iter().enumerate() {
                @let session = &run.sessions[s as usize].name;
                text.session x=(At(LEFT - 6.0)) y=(At(row_y(i) + 4.0)) text-anchor="end" { (short(session)) }
                title { (session) " waited at most " (Secs(w.as_secs_f64())) }
            }
            @for c in calls.iter().filter(|c| row_of.contains_key(&c.session)).take(MAX_MARKS) {
                @let y = At(row_y(row_of[&c.session]));
                @let (x0, x1) = (x_of(c.submitted, end), x_of(c.admitted, end));
                // The part of a wait past the starvation bound, counted from the session's
                // turn, is drawn apart (class `over`).
                @let xb = bound.map_or(x1, |b| x_of(c.turn + b, end).clamp(x0, x1));
                @if xb - x0 >= 0.5 {
                    line.wait x1=(At(x0)) y1=(y) x2=(At(xb)) y2=(y) {}
                }
                @if x1 - xb >= 0.5 {
                    line.wait.over x1=(At(xb)) y1=(y) x2=(At(x1)) y2=(y) {}
                }
                line.admit x1=(At(x1)) y1=(At(y.0 - 5.0)) x2=(At(x1)) y2=(At(y.0 + 5.0)) {}
            }
            @if hidden > 0 {
                text.note x=(LEFT) y=(At(height - 4.0)) { (hidden) " more sessions not drawn" }
            }
        }
    }
}

/// Waits in milliseconds of the calls admitted at the station, sorted: from each call's
/// submission, and from its session's turn.
fn waits(run: &RunOutcome, id: ServiceId) -> (Vec<u64>, Vec<u64>) {
    let calls = admitted(run, id);
    let ms = |from: Instant, to: Instant| to.saturating_since(from).as_millis() as u64;
    let mut call: Vec<u64> = calls.iter().map(|c| ms(c.submitted, c.admitted)).collect();
    let mut turn: Vec<u64> = calls.iter().map(|c| ms(c.turn, c.admitted)).collect();
    call.sort_unstable();
    turn.sort_unstable();
    (call, turn)
}

/// (median, p95, max) of sorted `w` (nearest rank).
fn summary(w: &[u64]) -> Option<(u64, u64, u64)> {
    let n = w.len();
    if n == 0 {
        return None;
    }
    let rank = |q: f64| w[((q * n as f64).ceil() as usize).clamp(1, n) - 1];
    Some((rank(0.5), rank(0.95), w[n - 1]))
}

fn waits_table(runs: &[&RunOutcome], id: ServiceId, bound: Option<Duration>) -> Markup {
    html! {
        table.waits {
            tr {
                th { "policy" } th { "calls" } th { "median wait" } th { "p95" } th { "max" }
                th { "longest wait for a turn" } th { "turns over the bound" }
            }
            @for r in runs {
                @let (w, turns) = waits(r, id);
                @let longest_turn = turns.last().copied().unwrap_or(0);
                @let over = bound.map_or(0, |b| turns.iter().filter(|&&x| x > b.as_millis() as u64).count());
                @if let Some((med, p95, max)) = summary(&w) {
                    tr {
                        td { (r.policy.as_str()) }
                        td { (w.len()) }
                        td { (secs_of_ms(med)) }
                        td { (secs_of_ms(p95)) }
                        td { (secs_of_ms(max)) }
                        td { (secs_of_ms(longest_turn)) }
                        td { (over) }
                    }
                }
            }
        }
    }
}

fn waits_svg(runs: &[&RunOutcome], id: ServiceId, bound: Option<Duration>) -> Markup {
    let stats: Vec<(&str, (u64, u64, u64), u64)> = runs
        .iter()
        .filter_map(|r| {
            let (calls, turns) = waits(r, id);
            summary(&calls).map(|s| (r.policy.as_str(), s, turns.last().copied().unwrap_or(0)))
        })
        .collect();
    let top = stats
        .iter()
        .map(|(_, s, _)| s.2)
        .chain(bound.map(|b| b.as_millis() as u64))
        .max()
        .unwrap_or(1)
        .max(1) as f64
        * 1.1;
    let height = 30.0 + 4.0 * 16.0 * stats.len() as f64 + 20.0;
    let x = |ms: u64| LEFT + ms as f64 / top * WIDTH;
    // One bar per (policy, measure), 16 units apart from y = 20.
    let bars: Vec<(f64, &str, &str, u64)> = stats
        .iter()
        .flat_map(|&(policy, (med, p95, max), turn)| {
            [("median", med), ("p95", p95), ("max", max), ("turn", turn)].map(|(label, v)| (policy, label, v))
        })
        .enumerate()
        .map(|(i, (policy, label, v))| (20.0 + 16.0 * i as f64, policy, label, v))
        .collect();
    let below = 20.0 + 16.0 * bars.len() as f64;
    html! {
        svg xmlns="http://www.w3.org/2000/svg" class="waits" width=(CHART) height=(height)
            viewBox={ "0 0 " (CHART) " " (height) } role="img"
            aria-label="waits per policy against the starvation bound" {
            @for &(y, policy, label, v) in &bars {
                text.label x=(At(LEFT - 6.0)) y=(At(y + 9.0)) text-anchor="end" { (policy) " " (label) }
                rect class={ "bar " (policy) } x=(LEFT) y=(At(y)) width=(At((x(v) - LEFT).max(1.0))) height="11" {}
                text.value x=(At(x(v) + 4.0)) y=(At(y + 9.0)) { (secs_of_ms(v)) }
            }
            @if let Some(b) = bound {
                @let bx = At(x(b.as_millis() as u64));
                line.bound x1=(bx) y1="10" x2=(bx) y2=(At(below)) {}
                text.bound-label x=(At(bx.0 + 4.0)) y=(At(below + 12.0)) {
                    "starvation bound " (Secs(b.as_secs_f64()))
                }
            }
        }
    }
}

/// The platform's bucket over time under each policy: what it accepted, replayed through
/// a bucket of its limit (full at the start), sampled at every acceptance.
fn budget_svg(runs: &[&RunOutcome], id: ServiceId, limit: LimitConfig, end: Instant) -> Markup {
    let height = 160.0;
    let (top, bottom) = (15.0, height - 25.0);
    let c = limit.capacity.as_milli() as f64;
    let y_of = |milli: f64| bottom - (milli / c).clamp(0.0, 1.0) * (bottom - top);
    let window_ns = limit.window.as_nanos() as f64;
    let lines: Vec<(&str, String)> = runs
        .iter()
        .map(|r| {
            let mut charges: Vec<(Instant, f64)> = (0..r.calls.len())
                .filter(|&i| at_station(r, i, id))
                .filter_map(|i| {
                    let call = &r.calls[i];
                    call.admitted_at.map(|a| (a, call.charged.as_milli() as f64))
                })
                .collect();
            charges.sort_by_key(|&(a, _)| a);
            let mut level = c;
            let mut last = Instant::ZERO;
            let mut points = vec![format!("{LEFT:.1},{:.1}", y_of(level))];
            for (at, charge) in charges.into_iter().take(MAX_MARKS) {
                let refill = at.saturating_since(last).as_nanos() as f64 / window_ns * c;
                level = (level + refill).min(c);
                points.push(format!("{:.1},{:.1}", x_of(at, end), y_of(level)));
                level = (level - charge).max(0.0);
                points.push(format!("{:.1},{:.1}", x_of(at, end), y_of(level)));
                last = at;
            }
            let refill = end.saturating_since(last).as_nanos() as f64 / window_ns * c;
            points.push(format!("{:.1},{:.1}", x_of(end, end), y_of((level + refill).min(c))));
            (r.policy.as_str(), points.join(" "))
        })
        .collect();
    html! {
        svg xmlns="http://www.w3.org/2000/svg" class="budget-chart" width=(CHART) height=(height)
            viewBox={ "0 0 " (CHART) " " (height) } role="img" aria-label="the platform's budget over time" {
            line.capacity x1=(LEFT) y1=(top) x2=(LEFT + WIDTH) y2=(top) {}
            text.label x=(At(LEFT - 6.0)) y=(At(top + 4.0)) text-anchor="end" { (limit.capacity.compact()) " units" }
            line.axis x1=(LEFT) y1=(bottom) x2=(LEFT + WIDTH) y2=(bottom) {}
            text.label x=(At(LEFT - 6.0)) y=(At(bottom + 4.0)) text-anchor="end" { "0" }
            @for (policy, points) in &lines {
                polyline class={ "budget " (policy) } points=(points) {
                    title { (policy) " policy: units left" }
                }
            }
        }
    }
}

/// A session name short enough for a row label.
fn short(name: &str) -> String {
    if name.chars().count() <= 16 {
        name.to_owned()
    } else {
        let head: String = name.chars().take(15).collect();
        format!("{head}…")
    }
}

/// The structure of the page's SVG, without coordinates: one line per chart with its
/// classes and how many elements of each class it holds. What the snapshot tests keep.
pub fn svg_structure(html: &str) -> String {
    let mut out = String::new();
    let mut rest = html;
    while let Some(start) = rest.find("<svg") {
        let Some(len) = rest[start..].find("</svg>") else { break };
        let svg = &rest[start..start + len];
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        let mut chart = String::new();
        for (i, tag) in svg.split('<').skip(1).enumerate() {
            let name: String = tag.chars().take_while(|c| c.is_ascii_alphanumeric()).collect();
            if name.is_empty() {
                continue;
            }
            let class = tag
                .split("class=\"")
                .nth(1)
                .and_then(|c| c.split('"').next())
                .unwrap_or("");
            let label = if class.is_empty() {
                name
            } else {
                format!("{name}.{}", class.replace(' ', "."))
            };
            if i == 0 {
                chart = label;
            } else {
                *counts.entry(label).or_default() += 1;
            }
        }
        let _ = write!(out, "{chart}:");
        for (label, n) in counts {
            let _ = write!(out, " {label}×{n}");
        }
        out.push('\n');
        rest = &rest[start + len..];
    }
    out
}
