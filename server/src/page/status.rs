//! The status page (`/status`) and its JSON (`/status.json`): per platform whether it is
//! reachable, its last success and failure, latency, the limit kept and the bucket, the
//! queue, the estimated wait for a new call, the buffer and its hit rate, the duplicate
//! rate (R-D9) and the 429s received — read from the state the server keeps (the
//! platforms' tasks, the metrics, the buffers), nothing asked of a platform for it. Then
//! each connector's own section ([`StatusSection`]: OpenBesluitvorming's Laadstatus per
//! source, OpenTK's harvester freshness), made by its tools as the system session
//! (answered from the buffer the maintenance keeps). Nothing here names a connector.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::sync::Arc;

use axum::extract::{Query, State};
use axum::response::{Html, IntoResponse, Response};
use besluitbron_core::PlatformId;
use besluitbron_core::cache::CacheStore;
use maud::{Markup, html};
use serde::Serialize;
use serde_json::Value;

use super::html::{frame, t, trusted};
use super::{Lang, PageState};
use crate::connectors::page_spec::{StatusColumn, StatusSection};
use crate::metrics::RequestLabels;
use crate::metrics::activity::RecentSummary;

/// One platform's state.
#[derive(Clone, Debug, Serialize)]
pub struct PlatformStatus {
    /// Its id.
    pub id: &'static str,
    /// Its name.
    pub name: &'static str,
    /// The upstream service its searches go to, whose budget (limit, bucket, queue)
    /// the fields below show: shared with every platform calling that service.
    pub service: Option<&'static str>,
    /// Whether BesluitBron keeps a limit for it.
    pub limited: bool,
    /// The limit kept: units per window.
    pub limit_units: Option<f64>,
    /// The limit's window, seconds.
    pub limit_window_secs: Option<u64>,
    /// Units in the bucket now.
    pub bucket_units: Option<f64>,
    /// Calls waiting in its queue.
    pub queue_length: usize,
    /// Sessions waiting.
    pub waiting_sessions: usize,
    /// About how long a new call waits now, seconds.
    pub estimated_wait_secs: f64,
    /// Flights under way.
    pub in_flight: usize,
    /// Entries in its buffer.
    pub buffer_entries: Option<u64>,
    /// Requests answered from the buffer, of all its requests.
    pub hit_rate: Option<f64>,
    /// Requests answered without a call of their own (buffer, a shared flight, a
    /// replay), of all its requests (R-D9).
    pub duplicate_rate: Option<f64>,
    /// Duplicates by cause since start (R-D9): `exact` (a repeat written alike, from the
    /// buffer), `coalesced` (joined a flight of the same request), `canonical` (shared
    /// only through level-1 folding, R-D5) and `replay` (a client's retry of one id).
    pub duplicates: BTreeMap<&'static str, u64>,
    /// Requests since start.
    pub requests: u64,
    /// The last hour.
    #[serde(flatten)]
    pub recent: RecentSummary,
}

/// The whole status.
#[derive(Debug, Serialize)]
pub struct Status {
    /// When (Unix ms).
    pub generated_at_ms: u64,
    /// Per platform.
    pub platforms: Vec<PlatformStatus>,
    /// Duplicate-rate spikes since start (R-D9): how many by likely cause, and the last.
    pub duplicate_spikes: SpikesStatus,
    /// Recording (the `Recording` setting), when on: where, and how to replay the last hour.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recording: Option<RecordingStatus>,
    /// Each connector's section, under its id: its rows, or why there are none.
    #[serde(flatten)]
    pub sections: BTreeMap<&'static str, Result<Vec<Value>, String>>,
}

/// Duplicate-rate spikes: a client whose duplicate rate jumped far above its usual level
/// (the log names the client; the status never does).
#[derive(Debug, Serialize)]
pub struct SpikesStatus {
    /// Spikes flagged since start, by likely cause (`retry_loop`, `short_timeout`,
    /// `unknown`).
    pub by_cause: BTreeMap<&'static str, u64>,
    /// The last one, if any.
    pub last: Option<crate::call::SpikeNote>,
}

fn spikes(state: &PageState) -> SpikesStatus {
    let by_cause = ["retry_loop", "short_timeout", "unknown"]
        .into_iter()
        .map(|cause| {
            let n = state
                .guard
                .metrics
                .duplicate_spikes
                .get_or_create(&crate::metrics::CauseLabels { cause })
                .get();
            (cause, n)
        })
        .collect();
    SpikesStatus {
        by_cause,
        last: state.calls.ctx.last_spike(),
    }
}

/// Recording's part of the status.
#[derive(Debug, Serialize)]
pub struct RecordingStatus {
    /// The folder of the trace files.
    pub dir: String,
    /// The command that takes the last hour's trace to the simulator, once a file exists.
    pub replay_command: Option<String>,
}

/// Where recording writes, and the command for the last hour's files; `None` when off.
fn recording(state: &PageState) -> Option<RecordingStatus> {
    let config = &state.guard.config;
    if !config.recording.enabled {
        return None;
    }
    let dir = config.recording.dir_in(&config.data_dir);
    Some(RecordingStatus {
        replay_command: crate::driver::record::replay_command(&dir, std::time::Duration::from_secs(3600)),
        dir: dir.display().to_string(),
    })
}

async fn platforms(state: &PageState) -> Vec<PlatformStatus> {
    let stores: Vec<_> = state.stores.values().cloned().collect();
    let stats = tokio::task::spawn_blocking(move || stores.iter().filter_map(|s| s.stats().ok()).collect::<Vec<_>>())
        .await
        .unwrap_or_default();
    let entries: HashMap<PlatformId, u64> = stats
        .iter()
        .map(|s| (s.platform, s.classes.iter().map(|c| c.entries).sum()))
        .collect();
    let mut tools: BTreeMap<PlatformId, Vec<&str>> = BTreeMap::new();
    for t in state.calls.tools().iter() {
        if let Some(platform) = t.platform {
            tools.entry(platform).or_default().push(t.name);
        }
    }
    let wall = state.guard.clock.wall();
    let mut out = Vec::new();
    for (platform, handle) in state.calls.ctx.platforms.iter() {
        if !state.calls.registry().iter().any(|c| c.platform == platform) {
            continue;
        }
        let snap = handle.snapshot(false).await;
        // The budget its searches go to: its first service's, shared with every platform
        // calling that service.
        let lane = snap
            .as_ref()
            .and_then(|s| s.lanes.get(handle.main_lane()).filter(|l| l.limited).cloned());
        let config = &state.guard.config;
        let service = config.first_service(platform);
        let limit = service.and_then(|s| config.service(s).limit);
        let (mut fresh, mut hits, mut dup) = (0u64, 0u64, 0u64);
        let mut duplicates: BTreeMap<&'static str, u64> = ["exact", "coalesced", "canonical", "replay"]
            .into_iter()
            .map(|c| (c, 0))
            .collect();
        for tool in tools.get(&platform).into_iter().flatten() {
            for kind in ["fresh", "cache_hit", "coalesced", "replay", "canonical"] {
                let n = state
                    .guard
                    .metrics
                    .requests
                    .get_or_create(&RequestLabels {
                        platform: platform.as_str(),
                        tool: Cow::Owned((*tool).to_owned()),
                        kind,
                    })
                    .get();
                match kind {
                    "fresh" => fresh += n,
                    "cache_hit" => {
                        hits += n;
                        dup += n;
                        *duplicates.entry("exact").or_default() += n;
                    }
                    other => {
                        dup += n;
                        *duplicates.entry(other).or_default() += n;
                    }
                }
            }
        }
        let total = fresh + dup;
        let rate = |n: u64| (total > 0).then(|| n as f64 / total as f64);
        let estimated_wait_secs = match (&lane, limit) {
            (Some(l), Some(limit)) => {
                let capacity = limit.capacity.as_milli() as f64 / 1000.0;
                let per_sec = capacity / limit.window_secs.max(0.001);
                let needed = (l.queued as f64 + 1.0) - l.tokens.as_milli() as f64 / 1000.0;
                (needed.max(0.0) / per_sec.max(1e-9) * 10.0).ceil() / 10.0
            }
            _ => 0.0,
        };
        out.push(PlatformStatus {
            id: platform.as_str(),
            name: platform.display_name(),
            service: service.map(|s| s.as_str()),
            limited: lane.is_some(),
            limit_units: limit.map(|l| l.capacity.as_milli() as f64 / 1000.0),
            limit_window_secs: limit.map(|l| l.window_secs as u64),
            bucket_units: lane.as_ref().map(|l| l.tokens.as_milli() as f64 / 1000.0),
            queue_length: lane.as_ref().map_or(0, |l| l.queued),
            waiting_sessions: lane.as_ref().map_or(0, |l| l.waiting_sessions),
            estimated_wait_secs,
            in_flight: snap.as_ref().map_or(0, |s| s.in_flight),
            buffer_entries: entries.get(&platform).copied(),
            hit_rate: rate(hits),
            duplicate_rate: rate(dup),
            duplicates,
            requests: total,
            recent: state.guard.metrics.activity.summary(platform, wall),
        });
    }
    out
}

/// Every connector's section, gathered at once.
async fn sections(state: &PageState) -> BTreeMap<&'static str, Result<Vec<Value>, String>> {
    let gathering = state
        .calls
        .registry()
        .iter()
        .filter_map(|c| c.status)
        .map(|section| async move { (section.id, (section.rows)(&state.system).await) });
    futures::future::join_all(gathering).await.into_iter().collect()
}

async fn gather(state: &PageState) -> Status {
    let (platforms, sections) = tokio::join!(platforms(state), sections(state));
    Status {
        generated_at_ms: state.guard.clock.wall().unix_millis(),
        platforms,
        duplicate_spikes: spikes(state),
        recording: recording(state),
        sections,
    }
}

/// `GET /status.json`.
pub async fn json(State(state): State<Arc<PageState>>) -> Response {
    axum::Json(gather(&state).await).into_response()
}

/// `GET /status`, with the filters a section offers (e.g. `state` and `type` on the
/// Laadstatus).
pub async fn page(State(state): State<Arc<PageState>>, Query(params): Query<HashMap<String, String>>) -> Response {
    let lang = Lang::of(&params);
    let status = gather(&state).await;
    let sections: Vec<&'static StatusSection> = state.calls.registry().iter().filter_map(|c| c.status).collect();
    Html(render(lang, &status, &sections, &params).into_string()).into_response()
}

fn when(ms: Option<u64>) -> String {
    ms.map_or_else(|| "—".to_owned(), crate::calendar::utc_moment)
}

fn ms(v: Option<u32>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| format!("{v} ms"))
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_owned(), |v| format!("{:.0} %", v * 100.0))
}

/// An inline SVG of the waits over the last hour (numbers only; drawn here).
pub fn wait_chart(p: &PlatformStatus, now_ms: u64) -> String {
    const W: f64 = 300.0;
    const H: f64 = 60.0;
    let max = f64::from(p.recent.wait_max_ms.unwrap_or(0).max(1000));
    let mut svg = format!(
        "<svg class=\"chart\" role=\"img\" viewBox=\"0 0 {W} {H}\" width=\"{W}\" height=\"{H}\" \
         aria-label=\"waits at {} over the last hour, at most {:.1} s\"><rect x=\"0\" y=\"0\" width=\"{W}\" \
         height=\"{H}\" fill=\"#f4f4f4\"/>",
        p.id,
        max / 1000.0
    );
    for (at, wait) in &p.recent.waits {
        let age = now_ms.saturating_sub(*at) as f64;
        let x = W - age / crate::metrics::activity::WINDOW_MS as f64 * W;
        let h = (f64::from(*wait) / max * (H - 2.0)).max(1.0);
        let _ = write!(
            svg,
            "<rect x=\"{:.1}\" y=\"{:.1}\" width=\"2\" height=\"{h:.1}\" fill=\"#1f4e99\"/>",
            x.clamp(0.0, W - 2.0),
            H - h
        );
    }
    svg.push_str("</svg>");
    svg
}

fn render(lang: Lang, s: &Status, sections: &[&'static StatusSection], params: &HashMap<String, String>) -> Markup {
    let en = lang == Lang::En;
    let l = |nl: &'static str, e: &'static str| if en { e } else { nl };
    let body = html! {
        h1 { (t(lang, "status")) }
        p { (l("Bijgewerkt", "As of")) " " (when(Some(s.generated_at_ms))) ". " a href="/status.json" { "JSON" } }
        div.table {
            table {
                caption { (l("Per platform, het afgelopen uur", "Per platform, the last hour")) }
                thead { tr {
                    th scope="col" { "platform" }
                    th scope="col" { (l("bereikbaar", "reachable")) }
                    th scope="col" { (l("laatste succes", "last success")) }
                    th scope="col" { (l("laatste fout", "last failure")) }
                    th scope="col" { (l("latentie mediaan / p95", "latency median / p95")) }
                    th scope="col" { (l("limiet", "limit")) }
                    th scope="col" { (l("emmer", "bucket")) }
                    th scope="col" { (l("wachtrij / sessies", "queue / sessions")) }
                    th scope="col" { (l("geschatte wachttijd", "estimated wait")) }
                    th scope="col" { (l("buffer / trefkans", "buffer / hit rate")) }
                    th scope="col" { (l("dubbel", "duplicates")) }
                    th scope="col" { "429" }
                } }
                tbody {
                    @for p in &s.platforms {
                        tr {
                            th scope="row" { (p.name) }
                            td { (match p.recent.reachable { Some(true) => l("ja", "yes"), Some(false) => l("nee", "no"), None => "—" }) }
                            td { (when(p.recent.last_success_ms)) }
                            td { (when(p.recent.last_failure_ms)) @if let Some(why) = &p.recent.last_failure { br; small { (why) } } }
                            td { (ms(p.recent.latency_median_ms)) " / " (ms(p.recent.latency_p95_ms)) }
                            td { @if let (Some(u), Some(w)) = (p.limit_units, p.limit_window_secs) { (u) " / " (w) " s" @if let Some(s) = p.service.filter(|s| *s != p.id) { " (" (s) ")" } } @else { (l("geen", "none")) } }
                            td { @if let Some(b) = p.bucket_units { (format!("{b:.1}")) } @else { "—" } }
                            td { (p.queue_length) " / " (p.waiting_sessions) }
                            td { (format!("{:.1} s", p.estimated_wait_secs)) }
                            td { (p.buffer_entries.map_or_else(|| "—".to_owned(), |n| n.to_string())) " / " (pct(p.hit_rate)) }
                            td title=(p.duplicates.iter().map(|(c, n)| format!("{c} {n}")).collect::<Vec<_>>().join(", ")) {
                                (pct(p.duplicate_rate))
                                @if let Some(n) = p.duplicates.get("canonical").filter(|n| **n > 0) {
                                    br; small { (n) " " (l("na normalisatie", "after folding")) }
                                }
                            }
                            td { (p.recent.rate_limited) }
                        }
                    }
                }
            }
        }
        h2 { (l("Wachttijden per begrensd platform", "Waits per limited platform")) }
        div.charts {
            @for p in s.platforms.iter().filter(|p| p.limited) {
                figure {
                    (trusted(wait_chart(p, s.generated_at_ms)))
                    figcaption { (p.name) ": " (p.recent.waits.len()) " " (l("toelatingen, langste wachttijd", "admissions, longest wait")) " " (ms(p.recent.wait_max_ms)) }
                }
            }
        }
        h2 id="spikes" { (l("Pieken in dubbele verzoeken", "Duplicate-rate spikes")) }
        @match &s.duplicate_spikes.last {
            None => p { (l("Geen sinds de start.", "None since start.")) }
            Some(last) => p {
                (s.duplicate_spikes.by_cause.iter().filter(|(_, n)| **n > 0).map(|(c, n)| format!("{} {n}", cause_text(lang, c))).collect::<Vec<_>>().join(", "))
                ". " (l("De laatste", "The last")) " " (when(Some(last.at_ms))) ": "
                (last.duplicates) " " (l("dubbele van", "duplicates in")) " " (last.requests) " " (l("verzoeken van één client, waarschijnlijk", "requests of one client, likely")) " "
                (cause_text(lang, last.cause)) "."
            },
        }
        @if let Some(r) = &s.recording {
            h2 id="recording" { (l("Opname voor de simulator", "Recording for the simulator")) }
            p { (l("Elke platformaanroep wordt opgenomen in", "Every platform call is recorded in")) " " code { (r.dir) } "." }
            @if let Some(command) = &r.replay_command {
                p { (l("Het afgelopen uur in de simulator (beide beleidsregels, met rapport):",
                       "The last hour in the simulator (both policies, with a report):")) }
                pre { code { (command) } }
            } @else {
                p { (l("Nog niets opgenomen.", "Nothing recorded yet.")) }
            }
        }
        @for section in sections {
            (render_section(lang, section, s.sections.get(section.id), params))
        }
    };
    frame(lang, t(lang, "status"), body)
}

/// A spike's likely cause, in words.
fn cause_text(lang: Lang, cause: &str) -> &'static str {
    match (cause, lang == Lang::En) {
        ("retry_loop", false) => "een herhaallus",
        ("retry_loop", true) => "a retry loop",
        ("short_timeout", false) => "een time-out korter dan de wachttijd",
        ("short_timeout", true) => "a time-out shorter than the wait",
        (_, false) => "oorzaak onbekend",
        (_, true) => "cause unknown",
    }
}

/// A cell of a section's row: the field's text, a number as written, `—` for none.
fn cell(row: &Value, field: &str) -> String {
    match row.get(field) {
        None | Some(Value::Null) => "—".to_owned(),
        Some(Value::String(text)) if text.is_empty() => "—".to_owned(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    }
}

/// A connector's section: its table, with a filter on each column that offers one.
fn render_section(
    lang: Lang,
    section: &StatusSection,
    rows: Option<&Result<Vec<Value>, String>>,
    params: &HashMap<String, String>,
) -> Markup {
    let en = lang == Lang::En;
    let l = |(nl, e): (&'static str, &'static str)| if en { e } else { nl };
    let wanted = |name: &str| params.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    html! {
        h2 id=(section.anchor) { (l(section.title)) }
        @match rows {
            None => p.error { (l(("niet gevraagd", "not asked"))) }
            Some(Err(e)) => p.error { (e) }
            Some(Ok(rows)) => {
                @let filters: Vec<(&str, &StatusColumn)> = section.columns.iter().filter_map(|c| c.filter.map(|f| (f, c))).collect();
                @if !filters.is_empty() {
                    form.filters method="get" action=(format!("/status#{}", section.anchor)) {
                        @if en { input type="hidden" name="lang" value="en"; }
                        @for (name, column) in &filters {
                            div.field {
                                label for=(name) { (l(column.title)) }
                                select id=(name) name=(name) {
                                    option value="" { (l(("alle", "all"))) }
                                    @for value in distinct(rows.iter().map(|r| cell(r, column.field))) {
                                        option value=(value) selected[wanted(name) == Some(value.as_str())] { (value) }
                                    }
                                }
                            }
                        }
                        div.field { button type="submit" { (l(("Filteren", "Filter"))) } }
                    }
                }
                @let shown: Vec<&Value> = rows.iter()
                    .filter(|r| filters.iter().all(|(name, c)| wanted(name).is_none_or(|w| cell(r, c.field) == w)))
                    .collect();
                p { (shown.len()) " " (l(("van", "of"))) " " (rows.len()) " " (l(section.noun)) }
                div.table { table {
                    thead { tr { @for c in section.columns { th scope="col" { (l(c.title)) } } } }
                    tbody { @for r in shown { tr {
                        @for (i, c) in section.columns.iter().enumerate() {
                            @if i == 0 { th scope="row" { (cell(r, c.field)) } } @else { td { (cell(r, c.field)) } }
                        }
                    } } }
                } }
            }
        }
    }
}

fn distinct(values: impl Iterator<Item = String>) -> Vec<String> {
    let mut v: Vec<String> = values.filter(|v| v != "—").collect();
    v.sort_unstable();
    v.dedup();
    v
}
