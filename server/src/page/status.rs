//! The status page (`/status`) and its JSON (`/status.json`): per platform whether it is
//! reachable, its last success and failure, latency, the limit kept and the bucket, the
//! queue, the estimated wait for a new call, the buffer and its hit rate, the duplicate
//! rate (R-D9) and the 429s received — read from the state the server keeps (the
//! platforms' tasks, the metrics, the buffers), nothing asked of a platform for it. Then
//! OpenBesluitvorming's Laadstatus per source and OpenTK's harvester freshness, through
//! their tools as the system session (answered from the buffer the maintenance keeps).

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
use serde_json::json;

use super::Lang;
use super::html::{frame, t, trusted};
use crate::app::AppState;
use crate::connectors::CONNECTORS;
use crate::connectors::obv::render::{SourcesShown, StatusShown as ObvStatus};
use crate::connectors::opentk::render::StatusAnswer as OpenTkStatus;
use crate::metrics::RequestLabels;
use crate::metrics::activity::RecentSummary;
use crate::page::spec::object;

/// One platform's state.
#[derive(Clone, Debug, Serialize)]
pub struct PlatformStatus {
    /// Its id.
    pub id: &'static str,
    /// Its name.
    pub name: &'static str,
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
    /// OpenBesluitvorming's Laadstatus per source.
    pub obv_sources: Result<Vec<SourceRow>, String>,
    /// OpenTK's harvesters.
    pub opentk_harvesters: Result<Vec<HarvesterRow>, String>,
}

/// One source of OpenBesluitvorming's Laadstatus.
#[derive(Clone, Debug, Serialize)]
pub struct SourceRow {
    /// The key.
    pub key: String,
    /// The name.
    pub label: String,
    /// The organisation type.
    pub organisation_type: Option<String>,
    /// The load state.
    pub state: String,
    /// The last successful load.
    pub last_success_at: Option<String>,
    /// The latest content date.
    pub latest_content_date: Option<String>,
    /// Documents held of the supplier's, when the platform checked (`coverage`).
    pub coverage: Option<String>,
    /// The last error.
    pub last_error: Option<String>,
}

/// One OpenTK harvester.
#[derive(Clone, Debug, Serialize)]
pub struct HarvesterRow {
    /// Its name.
    pub name: String,
    /// Seconds since it last updated.
    pub seconds_ago: Option<i64>,
}

async fn platforms(state: &Arc<AppState>) -> Vec<PlatformStatus> {
    let stores: Vec<_> = state.stores.values().cloned().collect();
    let stats = tokio::task::spawn_blocking(move || stores.iter().filter_map(|s| s.stats().ok()).collect::<Vec<_>>())
        .await
        .unwrap_or_default();
    let entries: HashMap<PlatformId, u64> = stats
        .iter()
        .map(|s| (s.platform, s.classes.iter().map(|c| c.entries).sum()))
        .collect();
    let mut tools: BTreeMap<PlatformId, Vec<&str>> = BTreeMap::new();
    for (tool, p) in state.shared.tools.iter() {
        tools.entry(p).or_default().push(tool);
    }
    let wall = state.clock.wall();
    let mut out = Vec::new();
    for (platform, handle) in state.shared.platforms.iter() {
        if !CONNECTORS.iter().any(|c| c.platform == platform) {
            continue;
        }
        let snap = handle.snapshot(false).await;
        let lane = snap
            .as_ref()
            .and_then(|s| s.lanes.first().filter(|l| l.limited).cloned());
        let limit = state.config.platform(platform).limit;
        let (mut fresh, mut hits, mut dup) = (0u64, 0u64, 0u64);
        for tool in tools.get(&platform).into_iter().flatten() {
            for kind in ["fresh", "cache_hit", "coalesced", "replay"] {
                let n = state
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
                    }
                    _ => dup += n,
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
            requests: total,
            recent: state.metrics.activity.summary(platform, wall),
        });
    }
    out
}

async fn obv_sources(state: &Arc<AppState>) -> Result<Vec<SourceRow>, String> {
    // Every source, in windows of the largest `limit` obv_status takes: one platform
    // answer (the kept status), read as often as it has windows.
    let mut sources = Vec::new();
    let mut offset = 0;
    loop {
        let arguments = object([
            ("state", Some(json!("any"))),
            ("limit", Some(json!(100))),
            ("offset", Some(json!(offset))),
        ]);
        let window: ObvStatus = serde_json::from_value(state.page.call("obv_status", arguments).await?)
            .map_err(|e| format!("the Laadstatus could not be read ({e})"))?;
        sources.extend(window.sources);
        match window.window.next_offset {
            Some(next) if next > offset => offset = next,
            _ => break,
        }
    }
    // The organisation types come from the source list (kept for days), all of it.
    let all = object([("limit", Some(json!(400)))]);
    let types: HashMap<String, String> = match state.page.call("obv_sources", all).await {
        Ok(v) => serde_json::from_value::<SourcesShown>(v)
            .map(|s| s.sources.into_iter().map(|s| (s.key, s.organization_type)).collect())
            .unwrap_or_default(),
        Err(_) => HashMap::new(),
    };
    Ok(sources
        .into_iter()
        .map(|s| SourceRow {
            organisation_type: types.get(&s.source_key).cloned(),
            coverage: coverage(s.held_documents, s.supplier_documents),
            key: s.source_key,
            label: s.label,
            state: s.state,
            last_success_at: s.last_success_at,
            latest_content_date: s.latest_content_date,
            last_error: s.last_error_message,
        })
        .collect())
}

/// "held of the supplier's (percent)", when the platform checked it.
fn coverage(held: Option<u64>, supplier: Option<u64>) -> Option<String> {
    let (held, supplier) = (held?, supplier?);
    if supplier == 0 {
        return Some(format!("{held} / 0"));
    }
    let percent = (held as f64 / supplier as f64 * 100.0).round();
    Some(format!("{held} / {supplier} ({percent} %)"))
}

async fn opentk_harvesters(state: &Arc<AppState>) -> Result<Vec<HarvesterRow>, String> {
    let status: OpenTkStatus = serde_json::from_value(state.page.call("opentk_status", Default::default()).await?)
        .map_err(|e| format!("the harvester status could not be read ({e})"))?;
    Ok(status
        .harvesters
        .into_iter()
        .map(|h| HarvesterRow {
            name: h.name,
            seconds_ago: h.seconds_ago,
        })
        .collect())
}

async fn gather(state: &Arc<AppState>) -> Status {
    let (platforms, obv, opentk) = tokio::join!(platforms(state), obv_sources(state), opentk_harvesters(state));
    Status {
        generated_at_ms: state.clock.wall().unix_millis(),
        platforms,
        obv_sources: obv,
        opentk_harvesters: opentk,
    }
}

/// `GET /status.json`.
pub async fn json(State(state): State<Arc<AppState>>) -> Response {
    axum::Json(gather(&state).await).into_response()
}

/// `GET /status`, with `state` and `type` filters on the Laadstatus.
pub async fn page(State(state): State<Arc<AppState>>, Query(params): Query<HashMap<String, String>>) -> Response {
    let lang = Lang::of(&params);
    let status = gather(&state).await;
    let want_state = params.get("state").map(|s| s.trim()).filter(|s| !s.is_empty());
    let want_type = params.get("type").map(|s| s.trim()).filter(|s| !s.is_empty());
    Html(render(lang, &status, want_state, want_type).into_string()).into_response()
}

fn when(ms: Option<u64>) -> String {
    ms.map_or_else(
        || "—".to_owned(),
        |ms| {
            let secs = ms / 1000;
            let (days, rem) = (secs / 86_400, secs % 86_400);
            let (y, m, d) = civil(days as i64);
            format!(
                "{y:04}-{m:02}-{d:02} {:02}:{:02}:{:02} UTC",
                rem / 3600,
                rem % 3600 / 60,
                rem % 60
            )
        },
    )
}

/// Days since 1970-01-01 to a civil date (Howard Hinnant's algorithm).
fn civil(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(m <= 2), m, d)
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

fn render(lang: Lang, s: &Status, want_state: Option<&str>, want_type: Option<&str>) -> Markup {
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
                            td { @if let (Some(u), Some(w)) = (p.limit_units, p.limit_window_secs) { (u) " / " (w) " s" } @else { (l("geen", "none")) } }
                            td { @if let Some(b) = p.bucket_units { (format!("{b:.1}")) } @else { "—" } }
                            td { (p.queue_length) " / " (p.waiting_sessions) }
                            td { (format!("{:.1} s", p.estimated_wait_secs)) }
                            td { (p.buffer_entries.map_or_else(|| "—".to_owned(), |n| n.to_string())) " / " (pct(p.hit_rate)) }
                            td { (pct(p.duplicate_rate)) }
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
        h2 #laadstatus { "OpenBesluitvorming — Laadstatus" }
        @match &s.obv_sources {
            Err(e) => p.error { (e) }
            Ok(rows) => {
                form.filters method="get" action="/status#laadstatus" {
                    @if en { input type="hidden" name="lang" value="en"; }
                    div.field {
                        label for="state" { (l("Status", "State")) }
                        select #state name="state" {
                            option value="" { (l("alle", "all")) }
                            @for st in distinct(rows.iter().map(|r| r.state.as_str())) {
                                option value=(st) selected[want_state == Some(st)] { (st) }
                            }
                        }
                    }
                    div.field {
                        label for="type" { (l("Soort organisatie", "Organisation type")) }
                        select #type name="type" {
                            option value="" { (l("alle", "all")) }
                            @for ty in distinct(rows.iter().filter_map(|r| r.organisation_type.as_deref())) {
                                option value=(ty) selected[want_type == Some(ty)] { (ty) }
                            }
                        }
                    }
                    div.field { button type="submit" { (l("Filteren", "Filter")) } }
                }
                @let shown: Vec<&SourceRow> = rows.iter()
                    .filter(|r| want_state.is_none_or(|w| r.state == w))
                    .filter(|r| want_type.is_none_or(|w| r.organisation_type.as_deref() == Some(w)))
                    .collect();
                p { (shown.len()) " " (l("van", "of")) " " (rows.len()) " " (l("bronnen", "sources")) }
                div.table { table {
                    thead { tr {
                        th scope="col" { (l("bron", "source")) }
                        th scope="col" { (l("soort", "type")) }
                        th scope="col" { (l("status", "state")) }
                        th scope="col" { (l("laatste succes", "last success")) }
                        th scope="col" { (l("nieuwste inhoud", "latest content")) }
                        th scope="col" { (l("dekking", "coverage")) }
                        th scope="col" { (l("laatste fout", "last error")) }
                    } }
                    tbody { @for r in shown { tr {
                        th scope="row" { (r.label) }
                        td { (r.organisation_type.as_deref().unwrap_or("—")) }
                        td { (r.state) }
                        td { (r.last_success_at.as_deref().unwrap_or("—")) }
                        td { (r.latest_content_date.as_deref().unwrap_or("—")) }
                        td { (r.coverage.as_deref().unwrap_or("—")) }
                        td { (r.last_error.as_deref().unwrap_or("")) }
                    } } }
                } }
            }
        }
        h2 { (l("OpenTK — versheid van de verzamelaars", "OpenTK — harvester freshness")) }
        @match &s.opentk_harvesters {
            Err(e) => p.error { (e) }
            Ok(rows) => ul { @for h in rows {
                li { (h.name) ": " @if let Some(s) = h.seconds_ago { (s) " s " (l("geleden", "ago")) } @else { "—" } }
            } }
        }
    };
    frame(lang, t(lang, "status"), body)
}

fn distinct<'a>(values: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut v: Vec<&str> = values.collect();
    v.sort_unstable();
    v.dedup();
    v
}
