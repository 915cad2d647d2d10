//! Open Raadsinformatie client (PLATFORMS.md §1 and §10.4): the classic ORI
//! Elasticsearch 7 proxy, switched off on 1 November 2026.
//!
//! Two ways it can answer, both handled here:
//! - **retired** (the real platform since 1 November 2026): a connection or DNS failure,
//!   a 404/410/5xx without an Elasticsearch body, or a body that is not an Elasticsearch
//!   answer all become [`PlatformError::Gone`], naming `obv_search` (the same councils
//!   on OpenBesluitvorming). The client then holds that answer for a while
//!   ([`OriClient::held_retired`]), so a retired platform costs nothing per call.
//! - **live**: an operator points the base URL at a still-running ORI-compatible proxy;
//!   then `_search` (simple_query_string, a source's indices, a date range on
//!   `last_discussed_at`, highlights), `_doc/{id}`, `_cat/indices` and `_aliases` work.
//!
//! Invariants: the search body is built as a JSON value ([`search_body`]), never by
//! pasting text, so a query cannot change its structure; index names and ids put into a
//! path are validated to one safe segment ([`parse_source`], [`parse_doc_ref`]); the
//! only POST is to `_search` (what the proxy allows), marked idempotent; a missing
//! index (`_shards.total: 0`) is told apart from "no hits". Every parser is a `pub`
//! function from bytes to a value or an error.
//!
//! What this module does not do: scroll, `search_after`, aggregations beyond the
//! index list, or the legacy RDF resolver.

mod wire;

use std::sync::Mutex;
use std::time::Duration;

use besluitbron_core::{Platform, PlatformId, Service, ServiceId};
use reqwest::Url;
use serde_json::{Value, json};

use super::http::{self, Fetched, HttpConfig, PlatformError, PlatformHttp, PlatformRequest};
pub use wire::{AliasEntry, Aliases, CatIndex, DocReply, Hit, Hits, SearchReply, Shards};

/// The upstream service its connector calls, with the limit BesluitBron keeps there by
/// default: None observed: calls pass straight through.
pub const SERVICE: ServiceId = ServiceId::of(&Service {
    id: "ori",
    name: "Open Raadsinformatie's Elasticsearch API (api.openraadsinformatie.nl)",
    limit: None,
    max_in_flight: None,
});

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "ori",
    name: "Open Raadsinformatie",
});

/// When the classic API was switched off.
pub const RETIRED_ON: &str = "1 November 2026";

/// What the assistant reads when the platform is found switched off (after its name).
pub const RETIRED_NOTICE: &str = "was retired on 1 November 2026; its data lives on at OpenBesluitvorming: search \
the same councils, provinces and water boards with `obv_search` (and read documents with `obv_document`)";

/// The indices searched when no source is named: every municipality, province and
/// water board.
pub const ALL_SOURCES: &str = "ori_*,osi_*,owi_*";

/// Fields searched with `simple_query_string`.
pub const SEARCH_FIELDS: [&str; 4] = ["text", "title", "description", "name"];

/// The retired answer.
pub fn retired() -> PlatformError {
    PlatformError::Gone {
        platform: PLATFORM,
        notice: RETIRED_NOTICE,
    }
}

/// True when `error` means the classic API is gone (§10.4): no connection, a 404/410 or
/// 5xx without an Elasticsearch body, or a body that is not an Elasticsearch answer.
/// A time-out is not: a slow mirror is a slow mirror.
pub fn means_retired(error: &PlatformError) -> bool {
    match error {
        PlatformError::Unreachable { .. }
        | PlatformError::Garbage { .. }
        | PlatformError::Overloaded { .. }
        | PlatformError::Gone { .. } => true,
        PlatformError::Upstream { status, .. } => *status == 404 || *status == 410 || *status >= 500,
        _ => false,
    }
}

/// One search.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct OriSearch {
    /// Words in `simple_query_string` syntax.
    pub query: String,
    /// The indices: a source's (see [`parse_source`]) or [`ALL_SOURCES`].
    pub indices: String,
    /// First day of `last_discussed_at`, `YYYY-MM-DD`.
    pub date_from: Option<String>,
    /// Last day, inclusive.
    pub date_to: Option<String>,
    /// Hits per page.
    pub size: u32,
    /// Hits skipped.
    pub from: u32,
}

/// The index pattern for a source: `ori_heemskerk` (an alias or index as `ori_sources`
/// lists it) stays as it is; a bare slug (`heemskerk`) covers its municipality,
/// province and water-board indices. Lower-case letters, digits, `_` and `-` only, at
/// most 100 characters; anything else is refused.
pub fn parse_source(text: &str) -> Option<String> {
    let t = text.trim();
    let ok = !t.is_empty()
        && t.len() <= 100
        && t.as_bytes()[0].is_ascii_alphanumeric()
        && t.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-');
    if !ok {
        return None;
    }
    if ["ori_", "osi_", "owi_"].iter().any(|p| t.starts_with(p)) {
        Some(t.to_owned())
    } else {
        Some(format!("ori_{t},osi_{t},owi_{t}"))
    }
}

/// A document reference: `index/id` (as `ori_search` gives it) or a bare id. Each part
/// is letters, digits, `_` and `-` (the index lower-case), so it is one path segment.
pub fn parse_doc_ref(text: &str) -> Option<(Option<String>, String)> {
    let t = text.trim();
    let (index, id) = match t.split_once('/') {
        Some((index, id)) => (Some(index), id),
        None => (None, t),
    };
    let id_ok =
        !id.is_empty() && id.len() <= 64 && id.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    let index_ok = index.is_none_or(|i| {
        !i.is_empty()
            && i.len() <= 100
            && i.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' || b == b'-')
    });
    (id_ok && index_ok).then(|| (index.map(str::to_owned), id.to_owned()))
}

/// The `_search` body for `search`: a `simple_query_string` over [`SEARCH_FIELDS`]
/// (all words must match), a `range` on `last_discussed_at`, `<mark>` highlights of 100
/// characters, the large text fields left out of `_source`, and the exact total.
pub fn search_body(search: &OriSearch) -> Value {
    let mut filter = Vec::new();
    if search.date_from.is_some() || search.date_to.is_some() {
        let mut range = serde_json::Map::new();
        if let Some(from) = &search.date_from {
            range.insert("gte".into(), json!(from));
        }
        if let Some(to) = &search.date_to {
            range.insert("lte".into(), json!(to));
        }
        filter.push(json!({"range": {"last_discussed_at": range}}));
    }
    let highlight: serde_json::Map<String, Value> =
        SEARCH_FIELDS.iter().map(|f| ((*f).to_owned(), json!({}))).collect();
    json!({
        "query": {"bool": {
            "must": [{"simple_query_string": {
                "query": search.query,
                "fields": SEARCH_FIELDS,
                "default_operator": "and"
            }}],
            "filter": filter
        }},
        "from": search.from,
        "size": search.size,
        "track_total_hits": true,
        "_source": {"excludes": ["text", "md_text", "text_pages"]},
        "highlight": {
            "pre_tags": ["<mark>"],
            "post_tags": ["</mark>"],
            "fragment_size": 100,
            "number_of_fragments": 2,
            "fields": highlight
        }
    })
}

/// Reads a `_search` answer; anything that is not one is [`PlatformError::Garbage`].
pub fn parse_search(body: &[u8]) -> Result<SearchReply, PlatformError> {
    http::parse_json(PLATFORM, body, "an Elasticsearch search answer")
}

/// Reads a `_doc/{id}` answer (found or not).
pub fn parse_doc(body: &[u8]) -> Result<DocReply, PlatformError> {
    http::parse_json(PLATFORM, body, "an Elasticsearch document answer")
}

/// Reads `_cat/indices?format=json`.
pub fn parse_cat_indices(body: &[u8]) -> Result<Vec<CatIndex>, PlatformError> {
    http::parse_json(PLATFORM, body, "an Elasticsearch index list")
}

/// Reads `_aliases`.
pub fn parse_aliases(body: &[u8]) -> Result<Aliases, PlatformError> {
    http::parse_json(PLATFORM, body, "an Elasticsearch alias map")
}

/// A document's text: `text`, else `md_text`, else `text_pages` (each page's `text`),
/// joined by blank lines.
pub fn document_text(source: &serde_json::Map<String, Value>) -> String {
    fn strings(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) if !s.trim().is_empty() => out.push(s.trim().to_owned()),
            Value::Array(items) => items.iter().for_each(|i| strings(i, out)),
            Value::Object(o) => {
                if let Some(t) = o.get("text") {
                    strings(t, out);
                }
            }
            _ => {}
        }
    }
    for field in ["text", "md_text", "text_pages"] {
        let mut out = Vec::new();
        if let Some(v) = source.get(field) {
            strings(v, &mut out);
        }
        if !out.is_empty() {
            return out.join("\n\n");
        }
    }
    String::new()
}

/// One source as `ori_sources` lists it.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize, rmcp::schemars::JsonSchema)]
#[schemars(crate = "rmcp::schemars")]
pub struct SourceIndex {
    /// The stable alias (`ori_heemskerk`), or the index itself when it has none.
    pub source: String,
    /// The live index behind it.
    pub index: String,
    /// Documents in the live index.
    pub documents: Option<u64>,
    /// When the live index was (re)built, from its name (`YYYY-MM-DD hh:mm:ss`).
    pub built_at: Option<String>,
    /// Older copies of the same source still present (searchable by name).
    pub older_copies: Vec<String>,
}

/// The sources from the index list and the alias map: one per alias (or per index
/// without alias and without a newer copy), newest copy first among the rest.
pub fn sources(indices: &[CatIndex], aliases: &Aliases) -> Vec<SourceIndex> {
    use std::collections::BTreeMap;
    // Group the indices by their source stem (`ori_heemskerk` of `ori_heemskerk_2025…`).
    let mut by_stem: BTreeMap<String, Vec<&CatIndex>> = BTreeMap::new();
    for i in indices {
        if i.index.starts_with('.') {
            continue;
        }
        by_stem.entry(stem(&i.index).to_owned()).or_default().push(i);
    }
    let mut out = Vec::new();
    for (stem, mut copies) in by_stem {
        // Newest first: the timestamp sorts as text.
        copies.sort_by(|a, b| b.index.cmp(&a.index));
        let live_pos = copies
            .iter()
            .position(|c| aliases.get(&c.index).is_some_and(|a| !a.aliases.is_empty()))
            .unwrap_or(0);
        let live = copies[live_pos];
        let alias = aliases
            .get(&live.index)
            .and_then(|a| a.aliases.keys().next().cloned())
            .unwrap_or_else(|| stem.clone());
        out.push(SourceIndex {
            source: alias,
            index: live.index.clone(),
            documents: live.docs_count.as_deref().and_then(|d| d.trim().parse().ok()),
            built_at: built_at(&live.index),
            older_copies: copies
                .iter()
                .enumerate()
                .filter(|(i, _)| *i != live_pos)
                .map(|(_, c)| c.index.clone())
                .collect(),
        });
    }
    out
}

/// `ori_heemskerk` of `ori_heemskerk_20250506181303`; the name itself without a stamp.
fn stem(index: &str) -> &str {
    match index.rsplit_once('_') {
        Some((stem, stamp)) if stamp.len() == 14 && stamp.bytes().all(|b| b.is_ascii_digit()) => stem,
        _ => index,
    }
}

/// The build time in an index name's `_YYYYMMDDhhmmss`.
fn built_at(index: &str) -> Option<String> {
    let (_, s) = index.rsplit_once('_')?;
    (s.len() == 14 && s.bytes().all(|b| b.is_ascii_digit())).then(|| {
        format!(
            "{}-{}-{} {}:{}:{}",
            &s[0..4],
            &s[4..6],
            &s[6..8],
            &s[8..10],
            &s[10..12],
            &s[12..14]
        )
    })
}

/// The ORI client, with the retired hold.
#[derive(Debug)]
pub struct OriClient {
    http: PlatformHttp,
    base: Url,
    hold: Duration,
    retired_until: Mutex<Option<tokio::time::Instant>>,
}

impl OriClient {
    /// A client for `base_url` (e.g. `https://api.openraadsinformatie.nl/v1/elastic`)
    /// that, once it found the platform retired, answers so for `hold` without asking.
    pub fn new(base_url: &str, config: &HttpConfig, hold: Duration) -> Result<OriClient, PlatformError> {
        Ok(OriClient {
            http: PlatformHttp::new(PLATFORM, config, "application/json")?,
            base: http::parse_base_url(PLATFORM, base_url)?,
            hold,
            retired_until: Mutex::new(None),
        })
    }

    /// The retired answer while it is held (found retired less than the hold ago).
    pub fn held_retired(&self) -> Option<PlatformError> {
        let until = *self.retired_until.lock().unwrap_or_else(|p| p.into_inner());
        until.filter(|u| tokio::time::Instant::now() < *u).map(|_| retired())
    }

    /// The outcome of a call, with the retired rule applied: an error that means
    /// retired becomes [`retired`] and starts the hold; a success ends it.
    pub fn judge<T>(&self, outcome: Result<T, PlatformError>) -> Result<T, PlatformError> {
        let mut until = self.retired_until.lock().unwrap_or_else(|p| p.into_inner());
        match outcome {
            Ok(v) => {
                *until = None;
                Ok(v)
            }
            Err(e) if means_retired(&e) => {
                if !self.hold.is_zero() {
                    *until = Some(tokio::time::Instant::now() + self.hold);
                }
                Err(retired())
            }
            Err(e) => Err(e),
        }
    }

    /// Searches.
    pub async fn search(&self, search: &OriSearch) -> Result<SearchReply, PlatformError> {
        let url = http::with_query(
            http::join(PLATFORM, &self.base, &format!("{}/_search", search.indices))?,
            [("ignore_unavailable", "true"), ("allow_no_indices", "true")],
        );
        let request = PlatformRequest::post_json(url, search_body(search)).idempotent();
        let fetched = self.http.send(&request).await?;
        let reply = parse_search(&self.success(&fetched, "search")?.body)?;
        Ok(reply)
    }

    /// One document: `_doc/{id}` in its index, or by id over every index.
    pub async fn document(&self, index: Option<&str>, id: &str) -> Result<DocReply, PlatformError> {
        let not_found = || PlatformError::NotFound {
            platform: PLATFORM,
            what: format!("document {id}"),
        };
        match index {
            Some(index) => {
                let url = http::join(
                    PLATFORM,
                    &self.base,
                    &format!("{index}/_doc/{}", http::encode_segment(id)),
                )?;
                let fetched = self.http.get(url).await?;
                // A 404 with Elasticsearch's own body is "no such document"; without, retired.
                if fetched.status == reqwest::StatusCode::NOT_FOUND
                    && let Ok(doc) = parse_doc(&fetched.body)
                {
                    debug_assert!(!doc.found);
                    return Err(not_found());
                }
                let doc = parse_doc(&self.success(&fetched, "document")?.body)?;
                if doc.found { Ok(doc) } else { Err(not_found()) }
            }
            None => {
                let url = http::with_query(
                    http::join(PLATFORM, &self.base, &format!("{ALL_SOURCES}/_search"))?,
                    [("ignore_unavailable", "true"), ("allow_no_indices", "true")],
                );
                let body = json!({"query": {"ids": {"values": [id]}}, "size": 1});
                let fetched = self
                    .http
                    .send(&PlatformRequest::post_json(url, body).idempotent())
                    .await?;
                let reply = parse_search(&self.success(&fetched, "document")?.body)?;
                let hit = reply.hits.hits.into_iter().next().ok_or_else(not_found)?;
                Ok(DocReply {
                    index: hit.index,
                    id: hit.id,
                    found: true,
                    source: hit.source,
                })
            }
        }
    }

    /// The live index per source, with document counts and build times.
    pub async fn sources(&self) -> Result<Vec<SourceIndex>, PlatformError> {
        let url = http::with_query(http::join(PLATFORM, &self.base, "_cat/indices")?, [("format", "json")]);
        let fetched = self.http.get(url).await?;
        let indices = parse_cat_indices(&self.success(&fetched, "index list")?.body)?;
        let url = http::join(PLATFORM, &self.base, "_aliases")?;
        let fetched = self.http.get(url).await?;
        let aliases = parse_aliases(&self.success(&fetched, "alias map")?.body)?;
        Ok(sources(&indices, &aliases))
    }

    fn success<'a>(&self, fetched: &'a Fetched, what: &str) -> Result<&'a Fetched, PlatformError> {
        if fetched.status.is_success() {
            return Ok(fetched);
        }
        // 404/410 without an Elasticsearch body: the shared mapping gives Upstream/NotFound;
        // both read as retired here.
        match fetched.status.as_u16() {
            404 | 410 => Err(PlatformError::Upstream {
                platform: PLATFORM,
                status: fetched.status.as_u16(),
                retry: http::Retry::No,
            }),
            _ => Err(http::status_error(
                PLATFORM,
                fetched,
                what,
                &http::RefusalFormat::OPAQUE,
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use quickcheck::quickcheck;

    use super::*;

    #[test]
    fn every_failure_shape_of_a_switched_off_platform_means_retired() {
        let p = PLATFORM;
        for e in [
            PlatformError::Unreachable {
                platform: p,
                detail: "dns error".into(),
                retry: http::Retry::Yes { after: None },
            },
            PlatformError::Upstream {
                platform: p,
                status: 404,
                retry: http::Retry::No,
            },
            PlatformError::Upstream {
                platform: p,
                status: 410,
                retry: http::Retry::No,
            },
            PlatformError::Upstream {
                platform: p,
                status: 502,
                retry: http::Retry::No,
            },
            PlatformError::Garbage {
                platform: p,
                detail: "html".into(),
            },
        ] {
            assert!(means_retired(&e), "{e:?}");
        }
        for e in [
            PlatformError::Timeout {
                platform: p,
                after_ms: 10,
            },
            PlatformError::NotFound {
                platform: p,
                what: "document 1".into(),
            },
            PlatformError::AccessDenied {
                platform: p,
                status: 403,
            },
        ] {
            assert!(!means_retired(&e), "{e:?}");
        }
        let text = retired().to_string();
        assert!(
            text.contains("Open Raadsinformatie was retired on 1 November 2026"),
            "{text}"
        );
        assert!(text.contains("`obv_search`"), "{text}");
    }

    #[test]
    fn html_and_foreign_json_are_not_elasticsearch() {
        assert!(parse_search(b"<!DOCTYPE html><html>gone</html>").is_err());
        assert!(parse_search(br#"{"results":[]}"#).is_err());
        let ok = parse_search(br#"{"took":1,"timed_out":false,"_shards":{"total":0},"hits":{"total":{"value":0,"relation":"eq"},"hits":[]}}"#).unwrap();
        assert_eq!(ok.shards.total, 0);
        assert_eq!(ok.hits.total(), Some((0, true)));
        assert!(parse_doc(br#"{"_index":"ori_a","_id":"1","found":false}"#).is_ok_and(|d| !d.found));
    }

    #[test]
    fn sources_are_one_segment_and_ids_too() {
        assert_eq!(
            parse_source("heemskerk").as_deref(),
            Some("ori_heemskerk,osi_heemskerk,owi_heemskerk")
        );
        assert_eq!(parse_source("ori_heemskerk").as_deref(), Some("ori_heemskerk"));
        for bad in ["", "..", "a/b", "ori_*", "a,b", "Heemskerk", "_all", "-x", "a b"] {
            assert_eq!(parse_source(bad), None, "{bad}");
        }
        assert_eq!(
            parse_doc_ref("ori_a_20250101000000/123"),
            Some((Some("ori_a_20250101000000".into()), "123".into()))
        );
        assert_eq!(parse_doc_ref("123"), Some((None, "123".into())));
        for bad in ["", "..", "a/../b", "a/b/c", "../1", "1 2", "ORI/1"] {
            assert_eq!(parse_doc_ref(bad), None, "{bad}");
        }
    }

    #[test]
    fn the_live_index_is_the_aliased_one() {
        let cat = |i: &str, n: &str| CatIndex {
            index: i.into(),
            docs_count: Some(n.into()),
            health: None,
        };
        let indices = vec![
            cat("ori_heemskerk_20250506181303", "120"),
            cat("ori_heemskerk_20240101000000", "100"),
            cat("osi_utrecht_20251001000000", "7"),
            cat(".kibana", "1"),
        ];
        let aliases: Aliases = serde_json::from_str(
            r#"{"ori_heemskerk_20240101000000":{"aliases":{"ori_heemskerk":{}}},"ori_heemskerk_20250506181303":{"aliases":{}}}"#,
        )
        .unwrap();
        let s = sources(&indices, &aliases);
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].source, "ori_heemskerk");
        assert_eq!(s[0].index, "ori_heemskerk_20240101000000");
        assert_eq!(s[0].documents, Some(100));
        assert_eq!(s[0].built_at.as_deref(), Some("2024-01-01 00:00:00"));
        assert_eq!(s[0].older_copies, vec!["ori_heemskerk_20250506181303".to_owned()]);
        assert_eq!(s[1].source, "osi_utrecht");
    }

    #[test]
    fn text_comes_from_text_then_md_text_then_pages() {
        let source = |v: Value| v.as_object().cloned().unwrap();
        assert_eq!(document_text(&source(json!({"text": ["a", "b"]}))), "a\n\nb");
        assert_eq!(document_text(&source(json!({"text": [], "md_text": "m"}))), "m");
        assert_eq!(
            document_text(&source(
                json!({"text_pages": [{"page_number": 1, "text": "p1"}, {"text": "p2"}]})
            )),
            "p1\n\np2"
        );
        assert_eq!(document_text(&source(json!({"name": "x"}))), "");
    }

    quickcheck! {
        fn qc_the_search_body_is_well_formed_json(query: String, from: Option<String>, to: Option<String>, size: u32, skip: u32) -> bool {
            let search = OriSearch { query: query.clone(), indices: ALL_SOURCES.into(), date_from: from.clone(), date_to: to.clone(), size, from: skip };
            let body = search_body(&search);
            let text = body.to_string();
            let back: Value = match serde_json::from_str(&text) { Ok(v) => v, Err(_) => return false };
            let sqs = &back["query"]["bool"]["must"][0]["simple_query_string"];
            let range = &back["query"]["bool"]["filter"][0]["range"]["last_discussed_at"];
            back == body
                && sqs["query"] == json!(query)
                && sqs["fields"] == json!(SEARCH_FIELDS)
                && back["size"] == json!(size)
                && back["from"] == json!(skip)
                && back.as_object().map(|o| o.len()) == Some(6)
                && range["gte"] == json!(from)
                && range["lte"] == json!(to)
        }
    }
}
