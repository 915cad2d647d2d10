//! The capacity answer as one self-contained page (inline SVG and CSS, no script): the
//! tables of waits and time at the limit per service (each limit kept) and per platform,
//! and for each a chart over the period — bars for the share of each stretch spent at the
//! limit, a line for its calls' mean wait.
//!
//! Every element carries a class naming what it is (`stretch`, `mean-wait`, `axis`), so
//! the page's structure can be checked without pixels.
//!
//! Invariants: the page depends only on the answer; it draws at most one bar per stretch
//! of the aggregates' series (bounded by [`crate::aggregate::SERIES_BUCKETS_MAX`]).
//!
//! What this module does not do: run anything.

use std::fmt::Write as _;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::{PlanAnswer, ScopeAnswer};

const WIDTH: f64 = 720.0;
const HEIGHT: f64 = 160.0;
const LEFT: f64 = 40.0;
const BOTTOM: f64 = 20.0;

/// The page for `answer`.
pub fn render(answer: &PlanAnswer) -> String {
    let title = format!("Capacity plan: {}", answer.name);
    html! {
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
                    (answer.description) ". " (answer.days) " days, " (answer.sessions) " sessions, "
                    (answer.calls) " calls (seed " (answer.seed) "), under the fair policy — the server's \
                    own path, every invariant checked after each of " (answer.events) " events. "
                    (answer.replicas) " replica(s) share each service's budget: one owner holds it, and "
                    (format!("{:.0}%", answer.forwarded * 100.0)) " of the calls reach it forwarded."
                }
                p.lede {
                    "A wait is a call's time from its arrival to the instant it went to the service. \
                     Platforms that call one service share its budget: a service's line counts the calls \
                     that reached it, whichever platform's; a platform's line its own calls, and the time \
                     any of them waited for a limit. Not modelled: BesluitBron's own CPU and memory, the \
                     network between replicas and to the services (each platform's latency model stands \
                     for its answer time), a replica's handover, the buffer's hits, client limits."
                }
                @for (heading, list) in [("service", &answer.services), ("platform", &answer.platforms)] {
                    table {
                        tr { th { (heading) } th { "kept" } th { "calls" } th { "wait p50" } th { "wait p99" }
                             th { "wait max" } th { "time at the limit" } }
                        @for s in list {
                            tr {
                                td.name { (s.scope) " (" (s.name) ")" }
                                td { (kept(s)) }
                                td { (s.calls) }
                                td { (format!("{:.3} s", s.wait_p50_s)) }
                                td { (format!("{:.3} s", s.wait_p99_s)) }
                                td { (format!("{:.3} s", s.wait_max_s)) }
                                td { (format!("{:.1}%", s.at_limit * 100.0)) }
                            }
                        }
                    }
                }
                p { (answer.gave_up) " calls gave up waiting." }
                @for s in answer.services.iter().chain(&answer.platforms) {
                    section.scope id=(format!("{}-{}", s.kind, s.scope)) {
                        h2 { (s.name) " — " (s.kind) " " (s.scope) }
                        (chart(s, answer.period_s))
                    }
                }
            }
        }
    }
    .into_string()
}

fn kept(s: &ScopeAnswer) -> String {
    match s.limit {
        Some((c, w)) => format!("{c} per {w} s"),
        None => "none".to_owned(),
    }
}

/// Bars for the share of each stretch at the limit (full height: all of it), a line for
/// the stretches' mean wait (full height: the longest mean).
fn chart(s: &ScopeAnswer, period_s: f64) -> Markup {
    let period = period_s.max(1.0);
    let x = |t: f64| LEFT + WIDTH * (t / period).clamp(0.0, 1.0);
    let y = |share: f64| HEIGHT - HEIGHT * share.clamp(0.0, 1.0);
    let longest = s.series.iter().map(|b| b.mean_wait_s).fold(0.0, f64::max);
    let mut line = String::new();
    for b in s.series.iter().filter(|b| b.calls > 0) {
        let share = if longest > 0.0 { b.mean_wait_s / longest } else { 0.0 };
        let _ = write!(line, "{:.1},{:.1} ", x(b.from_s + b.width_s / 2.0), y(share));
    }
    let days = (period / 86_400.0).ceil() as u32;
    html! {
        figure {
            figcaption {
                "Bars: share of each " (format!("{:.0}", s.series.first().map_or(0.0, |b| b.width_s / 60.0)))
                "-minute stretch spent at the limit. Line: the stretch's mean wait (top: "
                (format!("{longest:.1} s")) ")."
            }
            svg width=(LEFT + WIDTH + 10.0) height=(HEIGHT + BOTTOM) {
                line.axis x1=(LEFT) y1=(HEIGHT) x2=(LEFT + WIDTH) y2=(HEIGHT) {}
                @for b in s.series.iter().filter(|b| b.at_limit > 0.0) {
                    rect.stretch x=(format!("{:.1}", x(b.from_s))) y=(format!("{:.1}", y(b.at_limit)))
                        width=(format!("{:.2}", (x(b.from_s + b.width_s) - x(b.from_s)).max(0.5)))
                        height=(format!("{:.1}", HEIGHT - y(b.at_limit))) {}
                }
                polyline.mean-wait points=(line) {}
                @for d in (0..=days).step_by(usize::try_from(days / 10 + 1).unwrap_or(1)) {
                    text x=(format!("{:.1}", x(f64::from(d) * 86_400.0))) y=(HEIGHT + 14.0) { "day " (d) }
                }
            }
        }
    }
}

const STYLE: &str = "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222;max-width:1100px}\
h2{margin-top:2em;border-bottom:1px solid #ccc}figure{margin:0}figcaption{font-weight:600}\
svg{background:#fff;border:1px solid #ddd}svg text{font:11px system-ui,sans-serif;fill:#333}\
.axis{stroke:#888}.stretch{fill:#e08a00;opacity:.7}.mean-wait{fill:none;stroke:#1f5fa8;stroke-width:1.2}\
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}\
td.name{text-align:left}";
