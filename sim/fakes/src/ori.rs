//! Fake Open Raadsinformatie (PLATFORMS.md §1 and §10.4): the read-only Elasticsearch 7
//! proxy under `/v1/elastic` — `{indices}/_search` (GET or POST, a JSON body with a
//! `simple_query_string` or an `ids` query, a `range` on `last_discussed_at`,
//! `from`/`size`, `<mark>` highlights), `{index}/_doc/{id}`, `_cat/indices` and
//! `_aliases` — and, with its own setting [`OriSettings::retired`] (declared here and
//! named by its registry line through `Fake`; `ori:retired=html` in the textual form),
//! the switched-off platform in one of its shapes.
//!
//! Invariants:
//! - Index patterns are comma-separated names or aliases with `*` wildcards; a pattern
//!   matching nothing is skipped (as with `ignore_unavailable`), and `_shards.total` is
//!   the number of indices searched, so 0 means "no such index", not "no hits".
//! - POST is accepted only on `_search`; PUT, DELETE and other POSTs are 403, as the
//!   proxy's nginx answers.
//! - One source carries an older copy without alias (`ori_heemskerk_20240101000000`)
//!   next to its live, aliased one, as re-ingested sources do.

use besluitbron_core::{Platform, PlatformId};
use std::sync::OnceLock;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::{Method, Response, StatusCode};
use axum::middleware::{self, Next};
use serde_json::{Value, json};

use crate::fake::FakePlatform;
use crate::faults::{self, FaultReplies, Faults};
use crate::own::{OwnChange, OwnSettings};
use crate::setting_text::FaultParseError;
use crate::shared::Shared;
use crate::{pick, raw_response};

/// The path the proxy lives under.
pub const PREFIX: &str = "/v1/elastic";

/// The indices: (name, alias, documents).
pub const INDICES: [(&str, Option<&str>, usize); 5] = [
    ("ori_heemskerk_20250506181303", Some("ori_heemskerk"), 30),
    ("ori_heemskerk_20240101000000", None, 12),
    ("ori_soest_20251101120000", Some("ori_soest"), 20),
    ("osi_utrecht_20251001000000", Some("osi_utrecht"), 15),
    ("owi_rijnland_20250901000000", Some("owi_rijnland"), 10),
];

const TOPICS: [&str; 6] = [
    "woningbouw",
    "begroting",
    "verkeer",
    "duurzaamheid",
    "jeugdzorg",
    "sport",
];

/// One document of the fake's corpus.
#[derive(Clone, Debug, PartialEq)]
pub struct OriDocument {
    /// Its index.
    pub index: String,
    /// Its id (`1001`, …, per index).
    pub id: String,
    /// Its `_source`.
    pub source: Value,
}

/// Every document, index by index, generated once per process.
pub fn ori_corpus() -> &'static [OriDocument] {
    static CORPUS: OnceLock<Vec<OriDocument>> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let mut out = Vec::new();
        for (k, (index, _, n)) in INDICES.iter().enumerate() {
            let org = index.split('_').nth(1).unwrap_or("");
            for i in 0..*n {
                let topic = TOPICS[pick(51 + k as u64, i as u64, TOPICS.len())];
                let date = format!("2025-{:02}-{:02}T19:30:00", 1 + i % 12, 1 + i % 28);
                out.push(OriDocument {
                    index: (*index).to_owned(),
                    id: format!("{}", 1001 + i),
                    source: json!({
                        "@type": if i % 5 == 0 { "Meeting" } else { "MediaObject" },
                        "@id": format!("{}", 1001 + i),
                        "name": format!("Raadsvoorstel {topic} {org} {i}"),
                        "last_discussed_at": date,
                        "has_organization_name": org,
                        "original_url": format!("https://example.invalid/{org}/{}.pdf", 1001 + i),
                        "text": text_of(k, i, org, topic),
                    }),
                });
            }
        }
        out
    })
}

/// The text pages of document `i` of index `k`: two short pages, and many long ones for
/// the first document of the first index (`ori_heemskerk_…/1001`, a long council
/// proposal).
fn text_of(k: usize, i: usize, org: &str, topic: &str) -> Vec<String> {
    let mut pages = vec![
        format!("De raad van {org} besluit over {topic}."),
        format!("Punt {i} van de agenda."),
    ];
    if k == 0 && i == 0 {
        for n in 1..=LONG_PAGES {
            pages.push(format!(
                "Pagina {n}. Het college stelt voor het plan voor {topic} vast te stellen. De kosten worden gedekt \
                 uit de reserve; de raad wordt over de voortgang per kwartaal ingelicht. De commissie heeft het \
                 voorstel besproken en adviseert het als hamerstuk te behandelen, met de toezeggingen die de \
                 wethouder in de vergadering heeft gedaan over de planning en de participatie."
            ));
        }
    }
    pages
}

/// Long pages of the first document's text (about 40,000 characters in all).
pub const LONG_PAGES: usize = 100;

/// The index names a comma-separated pattern list covers (names, aliases, `*`).
pub fn resolve(patterns: &str) -> Vec<&'static str> {
    let mut out = Vec::new();
    for p in patterns.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        for (index, alias, _) in INDICES {
            let hit = wildcard(p, index) || alias.is_some_and(|a| wildcard(p, a));
            if hit && !out.contains(&index) {
                out.push(index);
            }
        }
    }
    out
}

fn wildcard(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((head, tail)) => {
            name.len() >= head.len() && name.starts_with(head) && wildcard_rest(tail, &name[head.len()..])
        }
    }
}

fn wildcard_rest(tail: &str, rest: &str) -> bool {
    if tail.is_empty() {
        return true;
    }
    (0..=rest.len()).any(|i| rest.is_char_boundary(i) && wildcard(tail, &rest[i..]))
}

/// The hits of a search body over `indices`, and the total (before `from`/`size`).
pub fn search(indices: &[&str], body: &Value) -> (usize, Vec<&'static OriDocument>) {
    let query = &body["query"];
    let ids: Option<Vec<&str>> = query["ids"]["values"]
        .as_array()
        .map(|v| v.iter().filter_map(Value::as_str).collect());
    let text = query["bool"]["must"][0]["simple_query_string"]["query"]
        .as_str()
        .or_else(|| query["simple_query_string"]["query"].as_str())
        .unwrap_or("");
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| w.trim_matches(|c| c == '"' || c == '*').to_lowercase())
        .filter(|w| !w.is_empty())
        .collect();
    let range = &query["bool"]["filter"][0]["range"]["last_discussed_at"];
    let (gte, lte) = (range["gte"].as_str(), range["lte"].as_str());
    let matched: Vec<&OriDocument> = ori_corpus()
        .iter()
        .filter(|d| indices.contains(&d.index.as_str()))
        .filter(|d| ids.as_ref().is_none_or(|ids| ids.contains(&d.id.as_str())))
        .filter(|d| {
            let hay = format!("{} {}", d.source["name"], d.source["text"]).to_lowercase();
            words.iter().all(|w| hay.contains(w.as_str()))
        })
        .filter(|d| {
            let date = d.source["last_discussed_at"].as_str().unwrap_or("");
            let day = &date[..date.len().min(10)];
            gte.is_none_or(|g| day >= g) && lte.is_none_or(|l| day <= l)
        })
        .collect();
    let from = body["from"].as_u64().unwrap_or(0) as usize;
    let size = body["size"].as_u64().unwrap_or(10) as usize;
    let total = matched.len();
    (total, matched.into_iter().skip(from).take(size).collect())
}

/// What the Open Raadsinformatie fake does beyond the faults every fake applies; the
/// default is the live platform. Change it while running with
/// [`FakeHandle::update_own`](crate::FakeHandle::update_own)`::<OriSettings>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OriSettings {
    /// Answer every request as the switched-off platform does, in this shape; `None`:
    /// the live Elasticsearch API. Textual form: `retired=404|410|502|html|off`.
    pub retired: Option<Retired>,
}

impl OwnSettings for OriSettings {
    const NAMES: &'static [&'static str] = &["retired"];

    fn parse(name: &str, value: &str) -> Option<Result<OwnChange<OriSettings>, FaultParseError>> {
        if name != "retired" {
            return None;
        }
        let shape = match value {
            "404" => Some(Retired::NotFound),
            "410" => Some(Retired::Gone),
            "502" => Some(Retired::BadGateway),
            "html" => Some(Retired::Html),
            "off" => None,
            _ => {
                return Some(Err(FaultParseError::new(format!(
                    "retired takes 404, 410, 502, html or off, not `{value}`"
                ))));
            }
        };
        Some(Ok(OwnChange::new(move |s: &mut OriSettings| s.retired = shape)))
    }
}

/// How a switched-off platform answers (Open Raadsinformatie since 1 November 2026).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Retired {
    /// 404 with an HTML page (a web server without the API behind it).
    NotFound,
    /// 410 Gone.
    Gone,
    /// 502 Bad Gateway (a proxy whose backend is gone).
    BadGateway,
    /// 200 with an HTML page saying the service ended.
    Html,
}

/// The Open Raadsinformatie fake, as its registry line names it.
pub(crate) struct Fake;

/// The platform this fake imitates (its short id and public name, as the server's
/// connector declares them).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "ori",
    name: "Open Raadsinformatie",
});

impl FakePlatform for Fake {
    type Own = OriSettings;

    fn router(shared: Shared<OriSettings>, base_url: String) -> Router {
        router(shared, base_url)
    }
}

/// The ORI routes, to be served at the root or nested under a prefix.
fn router(shared: Shared<OriSettings>, _base_url: String) -> Router {
    let faults = Faults::new(shared.clone(), &REPLIES);
    Router::new()
        .fallback(elastic)
        .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
        .layer(middleware::from_fn_with_state(shared, retired))
        .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
}

static REPLIES: FaultReplies<OriSettings> = FaultReplies {
    failure: r#"{"error":{"type":"internal_error","reason":"fake failure"},"status":500}"#,
    storm: |_, _| {
        raw_response(
            StatusCode::TOO_MANY_REQUESTS,
            "application/json",
            r#"{"error":{"type":"too_many_requests","reason":"fake storm"},"status":429}"#,
        )
    },
};

/// The switched-off platform: every request gets the configured shape.
async fn retired(State(shared): State<Shared<OriSettings>>, request: Request, next: Next) -> Response<Body> {
    let shape = shared.own().retired;
    let page = "<!DOCTYPE html><html><head><title>Open Raadsinformatie</title></head><body>Deze dienst is \
                beëindigd. Gebruik OpenBesluitvorming.</body></html>";
    match shape {
        None => next.run(request).await,
        Some(Retired::NotFound) => raw_response(StatusCode::NOT_FOUND, "text/html", page),
        Some(Retired::Gone) => raw_response(StatusCode::GONE, "text/html", page),
        Some(Retired::BadGateway) => raw_response(StatusCode::BAD_GATEWAY, "text/html", "<html>502 Bad Gateway</html>"),
        Some(Retired::Html) => raw_response(StatusCode::OK, "text/html; charset=utf-8", page),
    }
}

fn es_json(status: StatusCode, v: &Value) -> Response<Body> {
    raw_response(status, "application/json; charset=UTF-8", v.to_string())
}

fn forbidden() -> Response<Body> {
    raw_response(StatusCode::FORBIDDEN, "text/html", "<html>403 Forbidden</html>")
}

async fn elastic(request: Request) -> Response<Body> {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let Some(rest) = path.strip_prefix(PREFIX).map(|r| r.trim_start_matches('/').to_owned()) else {
        return raw_response(StatusCode::NOT_FOUND, "text/html", "<html>404</html>");
    };
    let rest = percent_decode(&rest);
    if method != Method::GET && method != Method::HEAD && !(method == Method::POST && rest.ends_with("_search")) {
        return forbidden();
    }
    let body = to_bytes(request.into_body(), 1 << 20).await.unwrap_or_default();
    let parts: Vec<&str> = rest.split('/').collect();
    match parts.as_slice() {
        ["_cat", "indices"] => {
            let rows: Vec<Value> = INDICES
                .iter()
                .map(|(i, _, n)| json!({"health": "green", "status": "open", "index": i, "docs.count": n.to_string()}))
                .collect();
            es_json(StatusCode::OK, &Value::Array(rows))
        }
        ["_aliases"] => {
            let map: serde_json::Map<String, Value> = INDICES
                .iter()
                .map(|(i, a, _)| {
                    let aliases: serde_json::Map<String, Value> =
                        a.iter().map(|a| ((*a).to_owned(), json!({}))).collect();
                    ((*i).to_owned(), json!({"aliases": aliases}))
                })
                .collect();
            es_json(StatusCode::OK, &Value::Object(map))
        }
        [patterns, "_search"] => {
            let query: Value = if body.is_empty() {
                json!({})
            } else {
                match serde_json::from_slice(&body) {
                    Ok(v) => v,
                    Err(_) => {
                        return es_json(
                            StatusCode::BAD_REQUEST,
                            &json!({"error": {"type": "parsing_exception"}, "status": 400}),
                        );
                    }
                }
            };
            let indices = resolve(patterns);
            let (total, hits) = search(&indices, &query);
            let first = query["query"]["bool"]["must"][0]["simple_query_string"]["query"]
                .as_str()
                .and_then(|q| q.split_whitespace().next())
                .unwrap_or("")
                .to_lowercase();
            let hits: Vec<Value> = hits
                .iter()
                .map(|d| {
                    let mut source = d.source.clone();
                    if let Some(o) = source.as_object_mut() {
                        o.remove("text");
                    }
                    let name = d.source["name"].as_str().unwrap_or("");
                    let marked = if first.is_empty() { name.to_owned() } else { name.replace(&first, &format!("<mark>{first}</mark>")) };
                    json!({"_index": d.index, "_id": d.id, "_score": 1.0, "_source": source, "highlight": {"name": [marked]}})
                })
                .collect();
            es_json(
                StatusCode::OK,
                &json!({
                    "took": 3,
                    "timed_out": false,
                    "_shards": {"total": indices.len(), "successful": indices.len(), "skipped": 0, "failed": 0},
                    "hits": {"total": {"value": total, "relation": "eq"}, "max_score": 1.0, "hits": hits}
                }),
            )
        }
        [index, "_doc", id] => {
            let indices = resolve(index);
            match ori_corpus()
                .iter()
                .find(|d| indices.contains(&d.index.as_str()) && d.id == *id)
            {
                Some(d) => es_json(
                    StatusCode::OK,
                    &json!({"_index": d.index, "_id": d.id, "_version": 1, "found": true, "_source": d.source}),
                ),
                None => es_json(
                    StatusCode::NOT_FOUND,
                    &json!({"_index": index, "_type": "_doc", "_id": id, "found": false}),
                ),
            }
        }
        _ => es_json(
            StatusCode::BAD_REQUEST,
            &json!({"error": {"type": "illegal_argument_exception", "reason": "unknown path"}, "status": 400}),
        ),
    }
}

/// `%2C` and friends back to text (index lists may arrive encoded).
fn percent_decode(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%'
            && i + 2 < b.len()
            && let Ok(v) = u8::from_str_radix(std::str::from_utf8(&b[i + 1..i + 3]).unwrap_or("zz"), 16)
        {
            out.push(v);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_resolve_names_aliases_and_wildcards() {
        assert_eq!(resolve("ori_heemskerk"), vec!["ori_heemskerk_20250506181303"]);
        assert_eq!(resolve("ori_*").len(), 3);
        assert_eq!(resolve("ori_*,osi_*,owi_*").len(), 5);
        assert!(resolve("ori_nowhere").is_empty());
        assert_eq!(resolve("ori_heemskerk,ori_heemskerk_2024*").len(), 2);
    }
}
