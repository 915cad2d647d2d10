//! `--report FILE.html`: one self-contained HTML page (inline SVG and CSS, no script)
//! that shows a run the way a reader wants it, per limited platform:
//!
//! - **lanes**: one row per session, each call a bar from its submission to its
//!   admission (its wait) and a tick when it went; with both policies, legacy and fair
//!   side by side on the same time axis;
//! - **waits**: median, p95 and max per policy, drawn as bars against the scheduler's
//!   starvation bound (`FairScheduler::starvation_bound` for a one-unit call), which the
//!   fair policy keeps and the legacy one does not;
//! - **budget**: the platform's bucket over time under each policy (units left, from the
//!   calls it accepted), against its capacity.
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
use std::fmt::Write as _;
use std::time::Duration;

use besluitbron_core::scheduler::{FairScheduler, SchedulerConfig};
use besluitbron_core::{Instant, LimitConfig, PlatformId, Units};

use crate::engine::{PlatformOutcome, RunOutcome, TEXT_OP};

/// Session rows drawn per lane chart.
pub const MAX_ROWS: usize = 40;
/// Calls drawn per lane chart.
pub const MAX_MARKS: usize = 5_000;

const WIDTH: f64 = 470.0;
const LEFT: f64 = 100.0;
const ROW: f64 = 14.0;

/// The whole page for `runs` (one per policy, in the order asked: legacy first).
pub fn render_report(title: &str, runs: &[&RunOutcome]) -> String {
    let mut html = String::new();
    let _ = write!(
        html,
        "<!doctype html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n\
         <style>{STYLE}</style>\n</head>\n<body>\n<h1>{}</h1>\n",
        esc(title),
        esc(title)
    );
    let policies: Vec<&str> = runs.iter().map(|r| r.policy.as_str()).collect();
    let _ = writeln!(
        html,
        "<p class=\"lede\">Policies: {}. Seed {}. Each row is a session; a bar is a call's wait from its \
         submission to the instant it went to the platform, the tick the instant it went; red is a \
         session's wait for its turn (since its call came or its previous call went) past the fair \
         scheduler's starvation bound. The bound is the fair queue's promise while the waiting \
         sessions' next calls together fit in the platform's budget and no Retry-After runs; \
         the simulator checks every fair wait under those conditions against it.</p>",
        policies.join(" and "),
        runs.first().map_or(0, |r| r.seed)
    );
    for (id, lane) in stations(runs) {
        let name = match lane {
            Some(l) => format!("{} ({l})", id.display_name()),
            None => id.display_name().to_owned(),
        };
        let _ = writeln!(html, "<section class=\"platform\" id=\"{}\">", station_id(id, lane));
        let _ = writeln!(html, "<h2>{}</h2>", esc(&name));
        let outcomes: Vec<Option<&PlatformOutcome>> = runs
            .iter()
            .map(|r| r.platforms.iter().find(|p| p.id == id && p.lane == lane))
            .collect();
        let limit = outcomes.iter().flatten().find_map(|p| p.local_limit.or(p.limit));
        let bound = limit.and_then(starvation_bound);
        if let (Some(l), Some(b)) = (limit, bound) {
            let _ = writeln!(
                html,
                "<p>Limit {} units per {} s; starvation bound for a one-unit call: {:.1} s.</p>",
                l.capacity.compact(),
                l.window.as_secs_f64(),
                b.as_secs_f64()
            );
        }
        let end = runs
            .iter()
            .map(|r| r.end_at)
            .max()
            .unwrap_or(Instant::ZERO)
            .max(Instant::from_millis(1000));
        html.push_str("<div class=\"side-by-side\">\n");
        for run in runs {
            let _ = writeln!(
                html,
                "<figure><figcaption>{} policy</figcaption>\n{}</figure>",
                run.policy.as_str(),
                lanes_svg(run, id, lane, end, bound)
            );
        }
        html.push_str("</div>\n");
        html.push_str(&waits_table(runs, id, lane, bound));
        html.push_str("<div class=\"side-by-side\">\n");
        let _ = writeln!(
            html,
            "<figure><figcaption>Waits per policy: of the calls, and a session's longest wait for its \
             turn</figcaption>\n{}</figure>",
            waits_svg(runs, id, lane, bound)
        );
        if let Some(l) = outcomes.iter().flatten().find_map(|p| p.limit) {
            let _ = writeln!(
                html,
                "<figure><figcaption>The platform's budget: units left over time ({})</figcaption>\n{}</figure>",
                policies.join(" and "),
                budget_svg(runs, id, lane, l, end)
            );
        }
        html.push_str("</div>\n");
        html.push_str("</section>\n");
    }
    html.push_str("</body>\n</html>\n");
    html
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

/// The limited stations (platform, lane) that any run used, in platform order.
fn stations(runs: &[&RunOutcome]) -> Vec<(PlatformId, Option<&'static str>)> {
    let mut out: Vec<(PlatformId, Option<&'static str>)> = Vec::new();
    for r in runs {
        for p in &r.platforms {
            if p.local_limit.is_some() && !out.contains(&(p.id, p.lane)) {
                out.push((p.id, p.lane));
            }
        }
    }
    out.sort_by_key(|&(id, lane)| (PlatformId::ALL.iter().position(|&p| p == id), lane));
    out
}

fn station_id(id: PlatformId, lane: Option<&str>) -> String {
    match lane {
        Some(l) => format!("{id}-{l}"),
        None => id.to_string(),
    }
}

/// The core's starvation bound for a one-unit call at a lane keeping `limit`.
fn starvation_bound(limit: LimitConfig) -> Option<Duration> {
    let scheduler = FairScheduler::new(SchedulerConfig::with_limit(limit)).ok()?;
    Some(scheduler.starvation_bound(Units::ONE))
}

/// Whether a call of `run` was counted at this station.
fn at_station(run: &RunOutcome, call: usize, id: PlatformId, lane: Option<&str>) -> bool {
    let c = &run.calls[call];
    let text = c.op.as_deref() == Some(TEXT_OP) && run.platforms.iter().any(|p| p.id == id && p.lane == Some("text"));
    c.platform == id && (lane == Some("text")) == text
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
fn admitted(run: &RunOutcome, id: PlatformId, lane: Option<&str>) -> Vec<Admitted> {
    let mut calls: Vec<Admitted> = (0..run.calls.len())
        .filter(|&i| at_station(run, i, id, lane))
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

fn lanes_svg(run: &RunOutcome, id: PlatformId, lane: Option<&str>, end: Instant, bound: Option<Duration>) -> String {
    let calls = admitted(run, id, lane);
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
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"lanes {}\" width=\"{}\" height=\"{height}\" \
         viewBox=\"0 0 {} {height}\" role=\"img\" aria-label=\"{} policy: each session's calls over time\">",
        run.policy.as_str(),
        LEFT + WIDTH + 10.0,
        LEFT + WIDTH + 10.0,
        run.policy.as_str()
    );
    let axis_y = 20.0 + ROW * rows.len().max(1) as f64;
    let _ = write!(
        svg,
        "<line class=\"axis\" x1=\"{LEFT}\" y1=\"{axis_y}\" x2=\"{}\" y2=\"{axis_y}\"/>",
        LEFT + WIDTH
    );
    for k in 0..=4u64 {
        let at = Instant::from_nanos(end.as_nanos() / 4 * k);
        let _ = write!(
            svg,
            "<text class=\"tick\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"{}\">{:.0} s</text>",
            x_of(at, end),
            axis_y + 14.0,
            if k == 4 { "end" } else { "middle" },
            at.as_millis() as f64 / 1000.0
        );
    }
    for (i, &(s, w)) in rows.iter().enumerate() {
        let y = 20.0 + ROW * i as f64 + ROW / 2.0;
        let _ = write!(
            svg,
            "<text class=\"session\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{}</text>",
            LEFT - 6.0,
            y + 4.0,
            esc(&short(&run.sessions[s as usize].name))
        );
        let _ = write!(
            svg,
            "<title>{} waited at most {:.1} s</title>",
            esc(&run.sessions[s as usize].name),
            w.as_secs_f64()
        );
    }
    for c in calls.iter().filter(|c| row_of.contains_key(&c.session)).take(MAX_MARKS) {
        let y = 20.0 + ROW * row_of[&c.session] as f64 + ROW / 2.0;
        let (x0, x1) = (x_of(c.submitted, end), x_of(c.admitted, end));
        // The part of a wait past the starvation bound, counted from the session's turn,
        // is drawn apart (class `over`).
        let xb = bound.map_or(x1, |b| x_of(c.turn + b, end).clamp(x0, x1));
        if xb - x0 >= 0.5 {
            let _ = write!(
                svg,
                "<line class=\"wait\" x1=\"{x0:.1}\" y1=\"{y:.1}\" x2=\"{xb:.1}\" y2=\"{y:.1}\"/>"
            );
        }
        if x1 - xb >= 0.5 {
            let _ = write!(
                svg,
                "<line class=\"wait over\" x1=\"{xb:.1}\" y1=\"{y:.1}\" x2=\"{x1:.1}\" y2=\"{y:.1}\"/>"
            );
        }
        let _ = write!(
            svg,
            "<line class=\"admit\" x1=\"{x1:.1}\" y1=\"{:.1}\" x2=\"{x1:.1}\" y2=\"{:.1}\"/>",
            y - 5.0,
            y + 5.0
        );
    }
    if hidden > 0 {
        let _ = write!(
            svg,
            "<text class=\"note\" x=\"{LEFT}\" y=\"{:.1}\">{hidden} more sessions not drawn</text>",
            height - 4.0
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// Waits in milliseconds of the calls admitted at the station, sorted: from each call's
/// submission, and from its session's turn.
fn waits(run: &RunOutcome, id: PlatformId, lane: Option<&str>) -> (Vec<u64>, Vec<u64>) {
    let calls = admitted(run, id, lane);
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

fn waits_table(runs: &[&RunOutcome], id: PlatformId, lane: Option<&str>, bound: Option<Duration>) -> String {
    let mut t = String::from(
        "<table class=\"waits\"><tr><th>policy</th><th>calls</th><th>median wait</th><th>p95</th><th>max</th>\
         <th>longest wait for a turn</th><th>turns over the bound</th></tr>\n",
    );
    for r in runs {
        let (w, turns) = waits(r, id, lane);
        let longest_turn = turns.last().copied().unwrap_or(0);
        let over = bound.map_or(0, |b| turns.iter().filter(|&&x| x > b.as_millis() as u64).count());
        if let Some((med, p95, max)) = summary(&w) {
            let _ = writeln!(
                t,
                "<tr><td>{}</td><td>{}</td><td>{:.1} s</td><td>{:.1} s</td><td>{:.1} s</td><td>{:.1} s</td>\
                 <td>{over}</td></tr>",
                r.policy.as_str(),
                w.len(),
                med as f64 / 1000.0,
                p95 as f64 / 1000.0,
                max as f64 / 1000.0,
                longest_turn as f64 / 1000.0
            );
        }
    }
    t.push_str("</table>\n");
    t
}

fn waits_svg(runs: &[&RunOutcome], id: PlatformId, lane: Option<&str>, bound: Option<Duration>) -> String {
    let stats: Vec<(&str, (u64, u64, u64), u64)> = runs
        .iter()
        .filter_map(|r| {
            let (calls, turns) = waits(r, id, lane);
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
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"waits\" width=\"{}\" height=\"{height}\" \
         viewBox=\"0 0 {} {height}\" role=\"img\" aria-label=\"waits per policy against the starvation bound\">",
        LEFT + WIDTH + 10.0,
        LEFT + WIDTH + 10.0
    );
    let x = |ms: u64| LEFT + ms as f64 / top * WIDTH;
    let mut y = 20.0;
    for (policy, (med, p95, max), turn) in &stats {
        for (label, v) in [("median", med), ("p95", p95), ("max", max), ("turn", turn)] {
            let _ = write!(
                svg,
                "<text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{policy} {label}</text>\
                 <rect class=\"bar {policy}\" x=\"{LEFT}\" y=\"{:.1}\" width=\"{:.1}\" height=\"11\"/>\
                 <text class=\"value\" x=\"{:.1}\" y=\"{:.1}\">{:.1} s</text>",
                LEFT - 6.0,
                y + 9.0,
                y,
                (x(*v) - LEFT).max(1.0),
                x(*v) + 4.0,
                y + 9.0,
                *v as f64 / 1000.0
            );
            y += 16.0;
        }
    }
    if let Some(b) = bound {
        let bx = x(b.as_millis() as u64);
        let _ = write!(
            svg,
            "<line class=\"bound\" x1=\"{bx:.1}\" y1=\"10\" x2=\"{bx:.1}\" y2=\"{:.1}\"/>\
             <text class=\"bound-label\" x=\"{:.1}\" y=\"{:.1}\">starvation bound {:.1} s</text>",
            y,
            bx + 4.0,
            y + 12.0,
            b.as_secs_f64()
        );
    }
    svg.push_str("</svg>\n");
    svg
}

/// The platform's bucket over time under each policy: what it accepted, replayed through
/// a bucket of its limit (full at the start), sampled at every acceptance.
fn budget_svg(runs: &[&RunOutcome], id: PlatformId, lane: Option<&str>, limit: LimitConfig, end: Instant) -> String {
    let height = 160.0;
    let (top, bottom) = (15.0, height - 25.0);
    let c = limit.capacity.as_milli() as f64;
    let y_of = |milli: f64| bottom - (milli / c).clamp(0.0, 1.0) * (bottom - top);
    let mut svg = String::new();
    let _ = write!(
        svg,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"budget-chart\" width=\"{}\" height=\"{height}\" \
         viewBox=\"0 0 {} {height}\" role=\"img\" aria-label=\"the platform's budget over time\">",
        LEFT + WIDTH + 10.0,
        LEFT + WIDTH + 10.0
    );
    let _ = write!(
        svg,
        "<line class=\"capacity\" x1=\"{LEFT}\" y1=\"{top}\" x2=\"{}\" y2=\"{top}\"/>\
         <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{} units</text>\
         <line class=\"axis\" x1=\"{LEFT}\" y1=\"{bottom}\" x2=\"{}\" y2=\"{bottom}\"/>\
         <text class=\"label\" x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">0</text>",
        LEFT + WIDTH,
        LEFT - 6.0,
        top + 4.0,
        limit.capacity.compact(),
        LEFT + WIDTH,
        LEFT - 6.0,
        bottom + 4.0
    );
    let window_ns = limit.window.as_nanos() as f64;
    for r in runs {
        let mut charges: Vec<(Instant, f64)> = (0..r.calls.len())
            .filter(|&i| at_station(r, i, id, lane))
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
        let _ = write!(
            svg,
            "<polyline class=\"budget {}\" points=\"{}\"><title>{} policy: units left</title></polyline>",
            r.policy.as_str(),
            points.join(" "),
            r.policy.as_str()
        );
    }
    svg.push_str("</svg>\n");
    svg
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

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
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
