//! Fake OpenBesluitvorming (PLATFORMS.md §2): `/api/search`, `/api/entities/{id}`,
//! `/api/sources` and `/api/status` over a generated corpus, behind the platform's
//! weighted token bucket.
//!
//! Invariants:
//! - Every `/api/*` response, including errors and 429s, carries `RateLimit-Limit`,
//!   `RateLimit-Remaining` (floor of the tokens left) and `RateLimit-Reset` (seconds
//!   until the bucket is full).
//! - A request is charged before it is answered: a search costs
//!   [`ObvCost::search_cost`] of its (capped) limit, every other call 1 unit. Over the
//!   limit the answer is 429 with `Retry-After` ≥ 1 and the documented JSON body (which
//!   has no `code` field), and nothing is charged. A rate-limit storm
//!   ([`FakeConfig::rate_limit_storm`](crate::FakeConfig::rate_limit_storm)) answers the
//!   same 429 with `Retry-After: 1` before the bucket is consulted.
//! - Buckets are kept per client: the rightmost `X-Forwarded-For` entry, else the peer's
//!   IP address. At most [`MAX_CLIENTS`] buckets are kept; full buckets are forgotten first.
//! - Each bucket is exact arithmetic on tokio's clock (the core's GCRA bucket,
//!   `besluitbron_core::scheduler::Bucket`, the same the simulator's platforms use), so
//!   under tokio's paused clock the fake counts exactly as the simulator's platform model
//!   does: what the differential test relies on.
//! - Invalid parameters give 400 with `{code, error}`; they are never silently ignored.
//!
//! Its own settings ([`ObvSettings`], declared here and named by its registry line through
//! `Fake`): the bucket's size, the cost formula, and hostile titles for escaping tests;
//! change them with [`FakeHandle::update_own`](crate::FakeHandle::update_own).
//!
//! What this fake does not do: PDF page images, exports, stats, the raw search
//! endpoint, or a relevance model beyond counting matched words. A query matches the
//! words of an entity's title and summary (not its full text). A search without a
//! query and without an organisation is refused with the code `missing_query`, a code
//! the real platform's documentation does not name.

use besluitbron_core::{Platform, PlatformId};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, Response, StatusCode};
use axum::middleware::{self, Next};
use axum::routing::get;
use besluitbron_core::scheduler::Bucket;
use besluitbron_core::{LimitConfig, Units};
use serde_json::{Value, json};
use tokio::time::Instant;

use crate::config::FakeConfig;
use crate::fake::FakePlatform;
use crate::faults::{self, FaultReplies, Faults, STORM_RETRY_AFTER_S};
use crate::obv_corpus::suppliers;
pub use crate::obv_corpus::{LONG_DOCUMENT_BYTES, LONG_DOCUMENT_EVERY, ObvCorpus, ObvEntity, ObvSource, normalise};
use crate::own::OwnSettings;
use crate::shared::Shared;
use crate::{encode_component, parse_date};

/// Client buckets kept at most; beyond this, buckets that have refilled are dropped.
pub const MAX_CLIENTS: usize = 10_000;

/// The OpenBesluitvorming fake's data, generated once per process.
pub fn obv_corpus() -> &'static ObvCorpus {
    static CORPUS: OnceLock<ObvCorpus> = OnceLock::new();
    CORPUS.get_or_init(ObvCorpus::generate)
}

/// What the OpenBesluitvorming fake does beyond the faults every fake applies; the
/// default is the real platform. Change it while running with
/// [`FakeHandle::update_own`](crate::FakeHandle::update_own)`::<ObvSettings>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ObvSettings {
    /// The bucket's capacity, refilled over one minute (default 60). A change starts
    /// every client's bucket full again.
    pub rate_limit_per_min: u32,
    /// Which search-cost formula the bucket charges.
    pub cost: ObvCost,
    /// Hostile platform data: every search hit's title carries HTML markup with a
    /// `<script>` and an attribute break-out (`"><img onerror=…>`), and its download
    /// link is a `javascript:` URL; so do a document's title and text, and each source's
    /// label and error message in the load status (for the pages' escaping tests).
    pub hostile_titles: bool,
}

impl Default for ObvSettings {
    fn default() -> ObvSettings {
        ObvSettings {
            rate_limit_per_min: 60,
            cost: ObvCost::Code,
            hostile_titles: false,
        }
    }
}

/// No textual names: the fake's settings are reached through its handle only.
impl OwnSettings for ObvSettings {}

/// How OpenBesluitvorming's fake weighs a search (PLATFORMS.md §2 documents two formulas).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ObvCost {
    /// The code of 2026-08-21: `max(1, ceil(limit / 24))`, so `limit=100` costs 5.
    #[default]
    Code,
    /// The later API.md revision: `1 + (limit - 24) / 250` (exact thousandths), so
    /// `limit=100` costs 1.304.
    Doc,
}

impl ObvCost {
    /// The cost of one search with this (already capped) `limit`.
    pub fn search_cost(self, limit: u32) -> Units {
        match self {
            ObvCost::Code => Units::whole(u64::from(limit.div_ceil(24).max(1))),
            ObvCost::Doc => Units::from_milli(1000 + u64::from(limit.saturating_sub(24)) * 1000 / 250),
        }
    }
}

/// The OpenBesluitvorming fake, as its registry line names it.
pub(crate) struct Fake;

/// The platform this fake imitates (its short id and public name, as the server's
/// connector declares them).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "obv",
    name: "OpenBesluitvorming",
});

impl FakePlatform for Fake {
    type Own = ObvSettings;

    fn router(shared: Shared<ObvSettings>, base_url: String) -> Router {
        router(shared, base_url)
    }
}

/// State of one running OpenBesluitvorming fake.
struct ObvState {
    shared: Shared<ObvSettings>,
    base_url: String,
    buckets: Mutex<Buckets>,
    /// The fake's epoch: its buckets run on tokio's clock from here (virtual time under
    /// tokio's paused test clock).
    origin: Instant,
}

/// Every client's bucket, for one setting of the limit (a change of
/// [`ObvSettings::rate_limit_per_min`] starts them all full again).
struct Buckets {
    per_min: u32,
    by_client: BTreeMap<String, Bucket>,
}

/// The OpenBesluitvorming routes, to be served at the root or nested under a prefix.
fn router(shared: Shared<ObvSettings>, base_url: String) -> Router {
    let faults = Faults::new(shared.clone(), &REPLIES);
    let state = Arc::new(ObvState {
        shared,
        base_url,
        buckets: Mutex::new(Buckets {
            per_min: 0,
            by_client: BTreeMap::new(),
        }),
        origin: Instant::now(),
    });
    Router::new()
        .route("/api/search", get(search))
        .route("/api/entities/{id}", get(entity))
        .route("/api/sources", get(sources))
        .route("/api/status", get(status))
        .fallback(|| async { error(StatusCode::NOT_FOUND, "not_found", "Deze route bestaat niet.") })
        .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
        .layer(middleware::from_fn_with_state(state.clone(), rate_limit))
        .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
        .with_state(state)
}

/// OpenBesluitvorming's words for the faults of `faults.rs`.
static REPLIES: FaultReplies<ObvSettings> = FaultReplies {
    failure: r#"{"code":"search_failed","error":"Zoeken is mislukt.","request_id":"fake-0001"}"#,
    storm: storm_reply,
};

/// A storm's 429: the platform's own 429, with `RateLimit-*` headers claiming an empty
/// bucket that is worth asking again after the storm's `Retry-After` (the caller's real
/// bucket is neither read nor charged).
fn storm_reply(_config: &FakeConfig, own: &ObvSettings) -> Response<Body> {
    let per_min = own.rate_limit_per_min.max(1);
    let mut response = too_many_requests(per_min, STORM_RETRY_AFTER_S);
    let headers = response.headers_mut();
    headers.insert("ratelimit-limit", HeaderValue::from(per_min));
    headers.insert("ratelimit-remaining", HeaderValue::from(0u32));
    headers.insert("ratelimit-reset", HeaderValue::from(STORM_RETRY_AFTER_S));
    response
}

/// The platform's 429: `Retry-After` and the documented JSON body (no `code` field).
fn too_many_requests(per_min: u32, retry_after_s: u64) -> Response<Body> {
    let body = json!({
        "error": "Te veel verzoeken. Wacht even en probeer het opnieuw.",
        "limit_per_minute": per_min,
        "retry_after_seconds": retry_after_s,
        "hint": "Zoekopdrachten kosten meer naarmate limit hoger is; limit=100 kost 5.",
        "documentation": "https://openbesluitvorming.nl/API.md#rate-limit",
    });
    let mut response = json_response(StatusCode::TOO_MANY_REQUESTS, &body);
    response
        .headers_mut()
        .insert("retry-after", HeaderValue::from(retry_after_s));
    response
}

/// A JSON error body `{code, error}` with its status.
fn error(status: StatusCode, code: &str, message: &str) -> Response<Body> {
    json_response(status, &json!({ "code": code, "error": message }))
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    crate::raw_response(status, "application/json", value.to_string())
}

/// The weighted token bucket (between the two fault layers: faults of arrival come
/// before it, the faults of an answer after it).
async fn rate_limit(State(state): State<Arc<ObvState>>, request: Request, next: Next) -> Response<Body> {
    let path = request.uri().path().to_owned();
    if !path.starts_with("/api/") || path.starts_with("/api/admin/") {
        return next.run(request).await;
    }
    let own = state.shared.own();
    let (per_min, cost_formula) = (own.rate_limit_per_min.max(1), own.cost);
    let limit = LimitConfig::new(Units::whole(u64::from(per_min)), Duration::from_secs(60));
    let cost = if path == "/api/search" {
        cost_formula.search_cost(search_limit_for_cost(request.uri().query().unwrap_or("")))
    } else {
        Units::ONE
    }
    .min(limit.capacity);
    let client = client_key(request.headers(), request.extensions().get::<ConnectInfo<SocketAddr>>());
    let now =
        besluitbron_core::Instant::from_nanos(u64::try_from(state.origin.elapsed().as_nanos()).unwrap_or(u64::MAX));
    let (admitted, tokens_after, full_in, fits_in) = {
        let mut buckets = state.buckets.lock().unwrap_or_else(|p| p.into_inner());
        if buckets.per_min != per_min {
            buckets.per_min = per_min;
            buckets.by_client.clear();
        }
        if buckets.by_client.len() >= MAX_CLIENTS && !buckets.by_client.contains_key(&client) {
            buckets.by_client.retain(|_, b| b.tokens(now) < limit.capacity);
        }
        let bucket = buckets.by_client.entry(client).or_insert_with(|| Bucket::new(limit));
        let admitted = bucket.earliest_fit(cost) <= now;
        if admitted {
            bucket.debit(now, cost);
        }
        (
            admitted,
            bucket.tokens(now),
            bucket.full_at().saturating_since(now),
            bucket.earliest_fit(cost).saturating_since(now),
        )
    };
    let reset_s = whole_seconds_up(full_in);
    let mut response = if admitted {
        state.shared.charge(cost);
        next.run(request).await
    } else {
        state.shared.count_rate_limited();
        too_many_requests(per_min, whole_seconds_up(fits_in).max(1))
    };
    let headers = response.headers_mut();
    headers.insert("ratelimit-limit", HeaderValue::from(per_min));
    headers.insert("ratelimit-remaining", HeaderValue::from(tokens_after.as_milli() / 1000));
    headers.insert("ratelimit-reset", HeaderValue::from(reset_s));
    response
}

/// A duration in whole seconds, rounded up.
fn whole_seconds_up(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// The limit a search is charged for: the requested limit capped to 1..=100, or the
/// default 24 when it is absent or invalid (an invalid search is still charged).
fn search_limit_for_cost(query: &str) -> u32 {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .find(|(k, _)| *k == "limit")
        .and_then(|(_, v)| v.parse::<u32>().ok())
        .filter(|&l| l >= 1)
        .map_or(24, |l| l.min(100))
}

/// The rightmost `X-Forwarded-For` entry, else the peer's IP address.
fn client_key(headers: &HeaderMap, peer: Option<&ConnectInfo<SocketAddr>>) -> String {
    let forwarded = headers
        .get_all("x-forwarded-for")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .rfind(|v| !v.is_empty());
    match (forwarded, peer) {
        (Some(f), _) => f.to_owned(),
        (None, Some(ConnectInfo(addr))) => addr.ip().to_string(),
        (None, None) => "unknown".to_owned(),
    }
}

/// Validated search parameters.
struct SearchQuery {
    terms: Vec<String>,
    organization: Option<usize>,
    entity_type: Option<&'static str>,
    sort: &'static str,
    date_from: Option<String>,
    date_to: Option<String>,
    offset: usize,
    limit: usize,
}

const ENTITY_TYPES: [&str; 4] = ["Meeting", "Document", "Motion", "Recording"];
const SORTS: [&str; 4] = ["date_desc", "date_asc", "title_asc", "relevance"];

/// A refused parameter: the machine code and the (Dutch) message.
type Refusal = (&'static str, &'static str);

fn parse_search(params: &[(String, String)]) -> Result<SearchQuery, Refusal> {
    let bad = |code: &'static str, message: &'static str| (code, message);
    let get = |name: &str| params.iter().rev().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let limit = match get("limit") {
        None => 24,
        Some(v) => match v.parse::<u64>() {
            Ok(l) if l >= 1 => l.min(100) as usize,
            _ => return Err(bad("invalid_limit", "limit moet een geheel getal van minstens 1 zijn.")),
        },
    };
    let offset = match get("offset") {
        None => 0,
        Some(v) => v
            .parse::<usize>()
            .map_err(|_| bad("invalid_offset", "offset moet een geheel getal van 0 of meer zijn."))?,
    };
    let entity_type = match get("entityType") {
        None | Some("") => None,
        Some(v) => Some(
            *ENTITY_TYPES
                .iter()
                .find(|t| **t == v)
                .ok_or_else(|| bad("unknown_entity_type", "Onbekend entityType."))?,
        ),
    };
    let sort = match get("sort") {
        None | Some("") => "date_desc",
        Some(v) => SORTS
            .iter()
            .find(|s| **s == v)
            .ok_or_else(|| bad("unknown_sort", "Onbekende sortering."))?,
    };
    let date = |name: &str| -> Result<Option<String>, Refusal> {
        match get(name) {
            None | Some("") => Ok(None),
            Some(v) => parse_date(v)
                .map(|_| Some(v.to_owned()))
                .ok_or_else(|| bad("invalid_date", "Gebruik een datum als JJJJ-MM-DD.")),
        }
    };
    let (date_from, date_to) = (date("dateFrom")?, date("dateTo")?);
    let organization = match get("organization") {
        None | Some("") => None,
        Some(key) => Some(
            obv_corpus()
                .source_by_key(key)
                .ok_or_else(|| bad("unknown_organization", "Onbekende organisatie."))?
                .0,
        ),
    };
    let query = get("query").unwrap_or("").trim();
    let terms = parse_terms(query).map_err(|()| {
        bad(
            "unsupported_phrase_slop",
            "Zoeken op woorden binnen een afstand (\"a b\"~n) wordt niet ondersteund.",
        )
    })?;
    if terms.is_empty() && organization.is_none() {
        return Err(bad("missing_query", "Geef een zoekterm of een organisatie op."));
    }
    Ok(SearchQuery {
        terms,
        organization,
        entity_type,
        sort,
        date_from,
        date_to,
        offset,
        limit,
    })
}

/// Splits a query into normalised words and quoted phrases; `Err` on a proximity phrase.
fn parse_terms(query: &str) -> Result<Vec<String>, ()> {
    let mut terms = Vec::new();
    let mut rest = query;
    while let Some(start) = rest.find('"') {
        terms.extend(
            normalise(&rest[..start])
                .split(' ')
                .filter(|w| !w.is_empty())
                .map(str::to_owned),
        );
        let after = &rest[start + 1..];
        let Some(end) = after.find('"') else {
            rest = after;
            break;
        };
        let phrase = normalise(&after[..end]);
        rest = &after[end + 1..];
        if rest.starts_with('~') {
            return Err(());
        }
        if !phrase.is_empty() {
            terms.push(phrase);
        }
    }
    terms.extend(normalise(rest).split(' ').filter(|w| !w.is_empty()).map(str::to_owned));
    Ok(terms)
}

/// How often the terms occur in title (weight 2) and summary (weight 1); `None` when a term is missing.
fn relevance(entity: &ObvEntity, terms: &[String]) -> Option<usize> {
    let title = format!(" {} ", normalise(&entity.title));
    let summary = format!(" {} ", normalise(&entity.summary));
    let mut score = 0;
    for term in terms {
        let needle = format!(" {term} ");
        let hits = 2 * title.matches(&needle).count() + summary.matches(&needle).count();
        if hits == 0 {
            return None;
        }
        score += hits;
    }
    Some(score)
}

async fn search(State(state): State<Arc<ObvState>>, Query(params): Query<Vec<(String, String)>>) -> Response<Body> {
    let q = match parse_search(&params) {
        Ok(q) => q,
        Err((code, message)) => return error(StatusCode::BAD_REQUEST, code, message),
    };
    let corpus = obv_corpus();
    let hostile = state.shared.own().hostile_titles;
    let mut hits: Vec<(usize, &ObvEntity)> = corpus
        .entities()
        .iter()
        .filter(|e| q.organization.is_none_or(|o| e.source == o))
        .filter(|e| q.entity_type.is_none_or(|t| e.entity_type == t))
        .filter(|e| q.date_from.as_deref().is_none_or(|d| e.day() >= d))
        .filter(|e| q.date_to.as_deref().is_none_or(|d| e.day() <= d))
        .filter_map(|e| relevance(e, &q.terms).map(|score| (score, e)))
        .collect();
    // Ties are broken by entity id so every order is total and repeatable.
    match q.sort {
        "date_asc" => hits.sort_by(|a, b| (&a.1.sort_date, &a.1.entity_id).cmp(&(&b.1.sort_date, &b.1.entity_id))),
        "title_asc" => hits.sort_by(|a, b| (&a.1.title, &a.1.entity_id).cmp(&(&b.1.title, &b.1.entity_id))),
        "relevance" => hits.sort_by(|a, b| {
            b.0.cmp(&a.0)
                .then_with(|| b.1.sort_date.cmp(&a.1.sort_date))
                .then_with(|| a.1.entity_id.cmp(&b.1.entity_id))
        }),
        _ => hits.sort_by(|a, b| {
            b.1.sort_date
                .cmp(&a.1.sort_date)
                .then_with(|| a.1.entity_id.cmp(&b.1.entity_id))
        }),
    }
    let total = hits.len();
    let results: Vec<Value> = hits
        .iter()
        .skip(q.offset)
        .take(q.limit)
        .map(|(_, e)| hit_json(&state.base_url, corpus, e, &q.terms))
        .map(|mut h| {
            if hostile {
                h["title"] = Value::from(hostile_text(h["title"].as_str().unwrap_or("")));
                h["downloadUrl"] = Value::from("javascript:alert(1)");
            }
            h
        })
        .collect();
    json_response(
        StatusCode::OK,
        &json!({
            "results": results,
            "totalCount": total,
            "totalIsApproximate": false,
            "hasMore": q.offset.saturating_add(q.limit) < total,
        }),
    )
}

fn type_label(entity_type: &str) -> &'static str {
    match entity_type {
        "Meeting" => "Vergadering",
        "Motion" => "Motie",
        "Recording" => "Opname",
        _ => "Document",
    }
}

fn entity_url(base_url: &str, id: &str) -> String {
    format!("{base_url}/api/entities/{}", encode_component(id))
}

fn download_url(entity: &ObvEntity) -> String {
    format!(
        "https://documenten.example.invalid/{}.pdf",
        entity.entity_id.rsplit(':').next().unwrap_or("0")
    )
}

/// Wraps every matched word of `text` in `<b>`.
fn highlight(text: &str, terms: &[String]) -> String {
    let words: Vec<&str> = terms.iter().flat_map(|t| t.split(' ')).collect();
    text.split(' ')
        .map(|w| {
            if words.iter().any(|t| normalise(w) == *t) {
                format!("<b>{w}</b>")
            } else {
                w.to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn hit_json(base_url: &str, corpus: &ObvCorpus, e: &ObvEntity, terms: &[String]) -> Value {
    let is_doc = e.entity_type == "Document";
    json!({
        "entityId": e.entity_id,
        "entityType": e.entity_type,
        "entityTypeLabel": type_label(e.entity_type),
        "organization": corpus.source_of(e).label,
        "date": e.date_nl,
        "sortDate": e.sort_date,
        "title": e.title,
        "summary": e.summary,
        "summaryHtml": highlight(&e.summary, terms),
        "downloadUrl": if is_doc { Value::from(download_url(e)) } else { Value::Null },
        "matchedPage": if is_doc && !terms.is_empty() { Value::from(1) } else { Value::Null },
        "pageCount": if is_doc { Value::from(e.page_count) } else { Value::Null },
        "previewImageUrl": if is_doc {
            Value::from(format!("{}/pdf/page/1?scale=1", entity_url(base_url, &e.entity_id)))
        } else {
            Value::Null
        },
    })
}

/// `text` with the markup of [`ObvSettings::hostile_titles`] after it.
fn hostile_text(text: &str) -> String {
    format!("{text} <script>alert('x')</script>\"><img src=x onerror=alert(1)>")
}

/// Makes the string `field` of `v` hostile ([`hostile_text`]), if it has one.
fn make_hostile(v: &mut Value, field: &str) {
    if let Some(text) = v[field].as_str() {
        v[field] = Value::from(hostile_text(text));
    }
}

async fn entity(State(state): State<Arc<ObvState>>, Path(id): Path<String>) -> Response<Body> {
    let corpus = obv_corpus();
    let Some(e) = corpus.entity(&id) else {
        return error(StatusCode::NOT_FOUND, "entity_not_found", "Dit item bestaat niet.");
    };
    let mut v = entity_json(&state.base_url, corpus, e);
    if state.shared.own().hostile_titles {
        make_hostile(&mut v, "title");
        make_hostile(&mut v, "markdownText");
    }
    json_response(StatusCode::OK, &v)
}

/// The detail document `/api/entities/{id}` answers for an entity.
pub fn entity_json(base_url: &str, corpus: &ObvCorpus, e: &ObvEntity) -> Value {
    let mut v = json!({
        "entityId": e.entity_id,
        "entityType": e.entity_type,
        "entityTypeLabel": type_label(e.entity_type),
        "title": e.title,
        "organization": corpus.source_of(e).label,
        "date": e.date_nl,
        "sortDate": e.sort_date,
    });
    let obj = v.as_object_mut().expect("json! of an object literal is an object");
    match e.entity_type {
        "Document" => {
            obj.insert("markdownText".into(), e.markdown_text(corpus).into());
            obj.insert("downloadUrl".into(), download_url(e).into());
            obj.insert("contentType".into(), "application/pdf".into());
            obj.insert(
                "pdfUrl".into(),
                format!("{}/pdf", entity_url(base_url, &e.entity_id)).into(),
            );
            obj.insert("meetingId".into(), e.meeting_id.clone().into());
        }
        "Meeting" => {
            let agenda: Vec<Value> = e
                .attachments
                .iter()
                .filter_map(|id| corpus.entity(id))
                .enumerate()
                .map(|(i, item)| {
                    json!({
                        "id": format!("agenda_item:{}:{}", e.entity_id, i + 1),
                        "title": item.title,
                        "number": (i + 1).to_string(),
                        "documents": if item.entity_type == "Document" {
                            vec![json!({"id": item.entity_id, "name": item.title, "original_url": download_url(item)})]
                        } else {
                            Vec::new()
                        },
                        "agenda_items": [],
                    })
                })
                .collect();
            let motions: Vec<Value> = e
                .attachments
                .iter()
                .filter_map(|id| corpus.entity(id))
                .filter(|m| m.entity_type == "Motion")
                .map(|m| {
                    let (result, in_favour, against) = corpus.motion_outcome(m);
                    json!({
                        "id": m.entity_id,
                        "name": m.title,
                        "result": result,
                        "tally": {"in_favour": in_favour, "against": against},
                        "votes": [],
                        "agenda_item": format!("agenda_item:{}:{}", e.entity_id, e.attachments.len()),
                        "attachment_id": m.entity_id,
                        "download_url": download_url(m),
                    })
                })
                .collect();
            obj.insert("agenda".into(), agenda.into());
            obj.insert("motions".into(), motions.into());
            obj.insert("recordings".into(), Value::Array(Vec::new()));
        }
        _ => {
            let (result, in_favour, against) = corpus.motion_outcome(e);
            obj.insert(
                "motion".into(),
                json!({
                    "name": e.title,
                    "motion_type": "motie",
                    "status": "afgehandeld",
                    "result": result,
                    "tally": {"in_favour": in_favour, "against": against},
                    "votes": [],
                }),
            );
            obj.insert(
                "pdfUrl".into(),
                format!("{}/pdf", entity_url(base_url, &e.entity_id)).into(),
            );
            obj.insert("downloadUrl".into(), download_url(e).into());
            obj.insert("pdfEntityId".into(), e.entity_id.clone().into());
            obj.insert("meetingId".into(), e.meeting_id.clone().into());
        }
    }
    v
}

async fn sources(Query(params): Query<Vec<(String, String)>>) -> Response<Body> {
    let only_implemented = params.iter().any(|(k, v)| k == "implemented" && v == "true");
    let list: Vec<Value> = obv_corpus()
        .sources()
        .iter()
        .filter(|s| !only_implemented || s.implemented)
        .map(|s| {
            json!({
                "key": s.key,
                "label": s.label,
                "supplier": s.supplier,
                "organizationType": s.organization_type,
                "implemented": s.implemented,
                "isAggregate": false,
            })
        })
        .collect();
    json_response(StatusCode::OK, &json!({ "sources": list }))
}

/// The fixed moment the fake's status document claims to describe.
pub const STATUS_GENERATED_AT: &str = "2026-09-01T06:00:00Z";

async fn status(State(state): State<Arc<ObvState>>) -> Response<Body> {
    let mut v = status_json();
    if state.shared.own().hostile_titles {
        for source in v["sources"].as_array_mut().into_iter().flatten() {
            make_hostile(source, "label");
            make_hostile(source, "lastErrorMessage");
        }
    }
    json_response(StatusCode::OK, &v)
}

/// The `/api/status` document (load status per supplier and per source).
pub fn status_json() -> Value {
    let corpus = obv_corpus();
    let suppliers: Vec<Value> = suppliers()
        .iter()
        .map(|(id, label)| {
            let of_supplier: Vec<&ObvSource> = corpus.sources().iter().filter(|s| s.supplier == *id).collect();
            let ok = of_supplier.iter().filter(|s| s.state == "ok").count();
            let failing = of_supplier.iter().filter(|s| s.state == "failing").count();
            let state = if failing > 0 && ok == 0 { "down" } else { "ok" };
            json!({
                "supplier": id,
                "label": label,
                "state": state,
                "sourceCount": of_supplier.len(),
                "okSourceCount": ok,
                "runCount": of_supplier.len() * 3,
                "succeededCount": ok * 3,
                "failedCount": (of_supplier.len() - ok) * 3,
                "lastSuccessAt": if ok > 0 { Value::from("2026-09-01T04:00:00Z") } else { Value::Null },
                "lastErrorMessage": if state == "down" {
                    Value::from(format!("{label} blocks requests from this host (403)"))
                } else {
                    Value::Null
                },
            })
        })
        .collect();
    let sources: Vec<Value> = corpus
        .sources()
        .iter()
        .map(|s| {
            let imported = matches!(s.state, "ok" | "stale");
            json!({
                "sourceKey": s.key,
                "sourceRef": format!("{}:{}:{}", s.supplier, s.org_type_nl, s.slug),
                "label": s.label,
                "supplier": s.supplier,
                "organizationType": s.organization_type,
                "cbsId": s.cbs_id,
                "state": s.state,
                "lastSuccessAt": if imported { Value::from("2026-09-01T04:00:00Z") } else { Value::Null },
                "lastRunAt": if s.implemented { Value::from("2026-09-01T04:00:00Z") } else { Value::Null },
                "lastRunStatus": match s.state { "ok" | "stale" => "succeeded", "failing" => "failed", _ => "none" },
                "lastErrorMessage": if s.state == "failing" { Value::from("HTTP 403 from supplier") } else { Value::Null },
                "latestContentDate": if s.state == "stale" { Value::from("2025-11-30") } else if imported { Value::from("2026-08-31") } else { Value::Null },
                "lastIndexedAt": if imported { Value::from("2026-09-01T04:10:00Z") } else { Value::Null },
                // The completeness check, for imported sources only (optional on the
                // platform): a stale source misses a tenth of its supplier's documents.
                "coverage": if imported { coverage(s.key.len(), s.state == "stale") } else { Value::Null },
            })
        })
        .collect();
    json!({
        "generatedAt": STATUS_GENERATED_AT,
        "windowHours": 36,
        "indexActivityAvailable": true,
        "suppliers": suppliers,
        "sources": sources,
    })
}

/// A source's `coverage` object, as `/api/status` writes it, from a stable seed.
fn coverage(seed: usize, stale: bool) -> Value {
    let supplier = 800 + (seed * 37) % 400;
    let missing = if stale { supplier / 10 } else { seed % 3 };
    let held = supplier - missing;
    json!({
        "supplierDocuments": supplier,
        "heldDocuments": held,
        "missingDocuments": missing,
        "ratio": held as f64 / supplier as f64,
        "windowFrom": "2026-06-01",
        "windowTo": "2026-08-31",
        "checkedAt": "2026-09-01T04:20:00Z",
        "missingSample": [],
        "lowerBound": false,
        "error": null,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terms_split_words_and_phrases_and_refuse_slop() {
        assert_eq!(parse_terms("Stikstof, woningbouw").unwrap(), ["stikstof", "woningbouw"]);
        assert_eq!(
            parse_terms("\"een nieuw fietspad\" kanaal").unwrap(),
            ["een nieuw fietspad", "kanaal"]
        );
        assert!(parse_terms("\"a b\"~10").is_err());
    }

    #[test]
    fn cost_limit_is_capped_and_defaults_to_24() {
        assert_eq!(search_limit_for_cost("query=x&limit=100"), 100);
        assert_eq!(search_limit_for_cost("limit=500"), 100);
        assert_eq!(search_limit_for_cost("limit=abc"), 24);
        assert_eq!(search_limit_for_cost(""), 24);
    }

    #[test]
    fn client_key_takes_the_rightmost_forwarded_entry() {
        let mut headers = HeaderMap::new();
        headers.insert("x-forwarded-for", HeaderValue::from_static("10.0.0.1, 10.0.0.2"));
        assert_eq!(client_key(&headers, None), "10.0.0.2");
        let peer = ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 4000)));
        assert_eq!(client_key(&HeaderMap::new(), Some(&peer)), "127.0.0.1");
    }

    #[test]
    fn both_cost_formulas_match_platforms_md() {
        assert_eq!(ObvCost::Code.search_cost(100), Units::whole(5));
        assert_eq!(ObvCost::Code.search_cost(24), Units::whole(1));
        assert_eq!(ObvCost::Code.search_cost(25), Units::whole(2));
        assert_eq!(ObvCost::Code.search_cost(1), Units::whole(1));
        assert_eq!(ObvCost::Doc.search_cost(100), Units::from_milli(1304));
        assert_eq!(ObvCost::Doc.search_cost(10), Units::whole(1));
    }
}
