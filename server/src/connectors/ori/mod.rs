//! The Open Raadsinformatie connector (`ori`): the classic ORI Elasticsearch API,
//! switched off on 1 November 2026.
//!
//! Its tools exist and say so: when the platform does not answer as Elasticsearch
//! (no connection, 404/410/5xx, an HTML page), every tool answers that ORI was retired
//! and that the same councils are searchable with `obv_search`. That answer is held
//! for `Platforms.ori.RetiredHoldSecs` (default 60 s) without asking again, so a
//! retired platform costs nothing per call; it is a tool error, never stored in the
//! buffer, and `/readyz` does not depend on it. Where an operator points the base URL at
//! a still-running ORI-compatible proxy, the tools work: search, one document with its
//! text, and the sources with their live index, size and freshness.

pub mod ids;
pub mod offers;
pub mod render;

use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::Feedback;
use besluitbron_core::{PlatformId, Units};
use rmcp::schemars;
use serde::Deserialize;
use serde_json::Value;

use super::ids::{Claim, IdForm, IdReader, Paging, Reading};
use super::tool::ToolSpec;
use super::{ConnectorSpec, Sample, http_config};
use crate::call::{Call, Client, Context, PlatformCall, ReadResult, Reply, Who, replied, tool_error};
use crate::config::{Config, PlatformDefaults};
use crate::platforms::http::PlatformError;
use crate::platforms::ori::{self, ALL_SOURCES, OriClient, OriSearch};
use render::{DocumentAnswer, DocumentOutput, Hit, SearchAnswer, SourcesAnswer, SourcesOutput};

/// Text characters per `ori_document` call by default (the default answer stays within
/// the answer budget), and at most.
const DEFAULT_LENGTH: usize = 10_000;
const MAX_LENGTH: usize = 100_000;
/// Sources per `ori_sources` answer by default, and at most.
const DEFAULT_SOURCES: usize = 50;
const MAX_SOURCES: usize = 500;

const PLATFORM: PlatformId = crate::platforms::ori::PLATFORM;

/// Every ORI call counts one (no limit is kept).
const COST: Units = Units::ONE;

/// The deepest page Elasticsearch serves (`from + size` ≤ 10,000).
const MAX_WINDOW: u32 = 10_000;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "ori",
    platform: PLATFORM,
    defaults: PlatformDefaults {
        // Retired on 1 November 2026: once found switched off, said so for a minute
        // without asking again.
        retired_hold_secs: Some(60),
        // Nothing advertises it unless `Platforms.ori.BaseUrl` names a mirror.
        switched_off: true,
        ..PlatformDefaults::new(
            PLATFORM,
            "https://api.openraadsinformatie.nl/v1/elastic",
            &[crate::platforms::ori::SERVICE],
        )
    },
    instructions: INSTRUCTIONS,
    guide: GUIDE,
    lists: &[&SOURCES_TOOL],
    reads: Some(&READER),
    tools: TOOLS,
    open,
    maintenance: None,
    samples: &[
        Sample::new("ori_search", r#"{"query": "woningbouw", "limit": 5}"#),
        Sample::new("ori_document", r#"{"id": "ori_heemskerk_20250506181303/1001"}"#),
        Sample::new("ori_sources", "{}"),
    ],
    offers: &offers::OFFERS,
    page: &crate::connectors::page_spec::PageSpec::Without {
        nl: "Open Raadsinformatie is uitgezet (1 november 2026); de raadsinformatie staat nu bij OpenBesluitvorming.",
        en: "Open Raadsinformatie was switched off (1 November 2026); council information is now at OpenBesluitvorming.",
    },
    status: None,
    search: crate::connectors::search::KeywordSearch::Without(
        "Open Raadsinformatie was switched off on 1 November 2026; its council records live on at \
         OpenBesluitvorming, which this search asks",
    ),
};

/// What an assistant is told about these tools in the server's instructions (short:
/// every address's instructions stay within the hosts' limit).
const INSTRUCTIONS: &str = "Open Raadsinformatie (ori_*): the classic council search, switched off on 1 November 2026 and served only with a mirror; prefer obv_search.";

/// What an assistant is told about these tools in depth (the guide resource).
const GUIDE: &str = "Open Raadsinformatie (ori_* tools): the classic ORI search over council documents. \
ORI was switched off on 1 November 2026; its data lives on at OpenBesluitvorming, so prefer obv_search. These \
tools only work where BesluitBron's operator points them at a still-running ORI-compatible mirror; otherwise \
they say ORI was retired.";

fn open(config: &Config) -> Result<Client, PlatformError> {
    let hold = Duration::from_secs(config.platform(PLATFORM).retired_hold_secs.unwrap_or(0));
    let client = OriClient::new(
        &config.platform(PLATFORM).base_url,
        &http_config(config, PLATFORM),
        hold,
    )?;
    Ok(Arc::new(client))
}

/// Arguments of `ori_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words (all must match); `"phrase"`, `-word` and `word*` work (at most 500 characters).
    #[schemars(length(max = 500))]
    pub query: String,
    /// One source: its alias from ori_sources (`ori_heemskerk`) or its name (`heemskerk`).
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub source: Option<String>,
    /// First day (of `last_discussed_at`), YYYY-MM-DD, e.g. `2025-01-01`.
    #[serde(default)]
    #[schemars(length(max = 10), extend("format" = "date"))]
    pub date_from: Option<String>,
    /// Last day (inclusive), YYYY-MM-DD, e.g. `2025-12-31`.
    #[serde(default)]
    #[schemars(length(max = 10), extend("format" = "date"))]
    pub date_to: Option<String>,
    /// Hits per page, 1 to 50 (default 10).
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// Hits to skip (paging), up to 9,950: the `offset` the answer names for the next page.
    #[serde(default)]
    #[schemars(range(max = 9950))]
    pub offset: Option<u32>,
}

/// Arguments of `ori_document`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentArgs {
    /// The id from ori_search (`index/id`, e.g. `ori_heemskerk_20250506181303/1001`), or a
    /// bare document id.
    #[schemars(length(max = 170))]
    pub id: String,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters (default 10000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100_000))]
    pub length: Option<usize>,
}

/// Arguments of `ori_sources`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourcesArgs {
    /// Only sources whose name contains this, e.g. `utrecht`, `ori_`.
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub filter: Option<String>,
    /// Sources per answer, 1 to 500 (default 50).
    #[serde(default)]
    #[schemars(range(min = 1, max = 500))]
    pub limit: Option<usize>,
    /// Matching sources to skip: the answer's `next_offset` for the next page.
    #[serde(default)]
    #[schemars(range(max = 100_000))]
    pub offset: Option<usize>,
}

fn short(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push('…');
    }
    s
}

/// The search asked, or the tool's error message.
fn search_of(args: &SearchArgs) -> Result<OriSearch, String> {
    let query = args.query.trim();
    if query.is_empty() || query.chars().count() > 500 {
        return Err("`query` must hold 1 to 500 characters".to_owned());
    }
    let indices = match args.source.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        None => ALL_SOURCES.to_owned(),
        Some(s) => ori::parse_source(s).ok_or_else(|| {
            format!(
                "`source` `{}` is not a source name (lower-case letters, digits, `_`, `-`; see ori_sources)",
                short(s)
            )
        })?,
    };
    for (name, date) in [("date_from", &args.date_from), ("date_to", &args.date_to)] {
        if let Some(d) = date
            && !crate::calendar::is_day(d)
        {
            return Err(format!(
                "`{name}` must be a date written YYYY-MM-DD, not `{}`",
                short(d)
            ));
        }
    }
    let size = args.limit.unwrap_or(10);
    if !(1..=50).contains(&size) {
        return Err(format!("`limit` must be 1 to 50, not {size}"));
    }
    let from = args.offset.unwrap_or(0);
    if from + size > MAX_WINDOW {
        return Err(format!(
            "`offset` + `limit` must stay within {MAX_WINDOW}; narrow the search instead"
        ));
    }
    Ok(OriSearch {
        query: query.to_owned(),
        indices,
        date_from: args.date_from.clone(),
        date_to: args.date_to.clone(),
        size,
        from,
    })
}

fn text_field(source: &serde_json::Map<String, Value>, names: &[&str]) -> Option<String> {
    crate::platforms::http::text_field(&Value::Object(source.clone()), names)
}

fn search_answer(search: &OriSearch, reply: ori::SearchReply) -> SearchAnswer {
    let hits = reply
        .hits
        .hits
        .iter()
        .map(|h| Hit {
            id: format!("{}/{}", h.index, h.id),
            kind: text_field(&h.source, &["@type"]),
            name: text_field(&h.source, &["name", "title"]),
            date: text_field(&h.source, &["last_discussed_at", "start_date", "date_modified"]),
            organization: text_field(&h.source, &["has_organization_name"]),
            highlights: h
                .highlight
                .values()
                .flatten()
                .map(|f| crate::connectors::vocabulary::readable_snippet(f, "<mark>", "</mark>"))
                .take(3)
                .collect(),
        })
        .collect();
    SearchAnswer {
        query: search.query.clone(),
        indices: search.indices.clone(),
        total: reply.hits.total().map(|(t, _)| t),
        offset: search.from,
        hits,
        timed_out: reply.timed_out,
    }
}

/// The `ori_document` tool (its spec is what `fetch` runs for this connector's ids).
pub(crate) const DOCUMENT_TOOL: ToolSpec = crate::tool! {
    name: "ori_document",
    title: "Open Raadsinformatie document (retired)",
    description: "One Open Raadsinformatie document or meeting by its id from ori_search (`index/id`): its \
                  record and its text in pages of `length` characters from `offset` (10000 by default, up to 100000; \
                  the answer says how many remain and the next `offset`; the page is in the text content \
                  only, the structured content says where it is). ORI was retired on 1 November 2026: unless BesluitBron's operator runs it \
                  against a mirror, this tool says so — use obv_document instead. Kept for weeks.",
    arguments: DocumentArgs,
    output: DocumentOutput,
    run: ori_document,
    read: ori_read,
};

/// The `ori_sources` tool: one of the connector's lists.
pub(crate) const SOURCES_TOOL: ToolSpec = crate::tool! {
    name: "ori_sources",
    title: "Open Raadsinformatie sources (retired)",
    description: "The sources (municipalities ori_, provinces osi_, water boards owi_) of Open Raadsinformatie \
                  with their live index, document count and when it was last rebuilt (a freshness hint), \
                  and older copies still present; 50 per answer by default (`limit` up to 500, `offset` pages \
                  on, `filter` narrows by name). ORI was retired on 1 November 2026: unless BesluitBron's \
                  operator runs it against a mirror, this tool says so — use obv_sources instead.",
    arguments: SourcesArgs,
    output: SourcesOutput,
    run: ori_sources,
};

/// The tools.
const TOOLS: &[ToolSpec] = &[
    crate::tool! {
        name: "ori_search",
        title: "Search Open Raadsinformatie (retired)",
        description: "Search the classic Open Raadsinformatie (council, provincial and water-board documents and \
                      meetings) by words over text, title, description and name, optionally in one source and a \
                      date range (last_discussed_at), with highlights; paged by `offset`/`limit` (up to 50). ORI was \
                      retired on 1 November 2026: unless BesluitBron's operator runs it against a mirror, this tool \
                      says so — use obv_search (OpenBesluitvorming, the same councils) instead.",
        arguments: SearchArgs,
        output: render::SearchShown,
        run: ori_search,
    },
    DOCUMENT_TOOL,
    SOURCES_TOOL,
];

/// Search Open Raadsinformatie (retired; a mirror only).
async fn ori_search(ctx: &Context, call: &Call, args: SearchArgs) -> Reply {
    let search = match search_of(&args) {
        Ok(s) => s,
        Err(message) => return tool_error(message).into(),
    };
    let client = match ctx.clients.get::<OriClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    if let Some(retired) = client.held_retired() {
        return tool_error(retired).into();
    }
    let mut key = CacheKey::new(PLATFORM, DataClass::Search, "search")
        .param("query", search.query.clone())
        .param("indices", search.indices.clone())
        .param("size", search.size.to_string())
        .param("from", search.from.to_string());
    for (name, v) in [("date_from", &search.date_from), ("date_to", &search.date_to)] {
        if let Some(v) = v {
            key = key.param(name, v.clone());
        }
    }
    let named = args.source.is_some();
    let search = Arc::new(search);
    let pc = PlatformCall::new(key, COST, move || {
        let (client, search) = (Arc::clone(&client), Arc::clone(&search));
        async move {
            let reply = client.judge(client.search(&search).await)?;
            if named && reply.shards.total == 0 {
                return Err(PlatformError::NotFound {
                    platform: PLATFORM,
                    what: format!("source `{}` (see ori_sources)", search.indices),
                });
            }
            Ok((search_answer(&search, reply), Feedback::default()))
        }
    });
    ctx.answer(call, pc, render::search).await
}

/// One Open Raadsinformatie document (retired; a mirror only).
async fn ori_document(ctx: &Context, call: &Call, args: DocumentArgs) -> Reply {
    replied(ori_read(ctx, call, args).await)
}

/// One document read, typed (`ori_document`'s answer, and `fetch`'s).
async fn ori_read(ctx: &Context, call: &Call, args: DocumentArgs) -> ReadResult {
    let length = args.length.unwrap_or(DEFAULT_LENGTH);
    if length == 0 || length > MAX_LENGTH {
        return Err(tool_error(format!("`length` must be between 1 and {MAX_LENGTH} characters")).into());
    }
    let offset = args.offset.unwrap_or(0);
    let Some((index, id)) = ori::parse_doc_ref(crate::connectors::ids::own(PLATFORM, &args.id)) else {
        return Err(tool_error(format!(
            "`{}` is not an ORI document id (`index/id` from ori_search)",
            short(&args.id)
        ))
        .into());
    };
    let client = match ctx.clients.get::<OriClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return Err(e.into()),
    };
    if let Some(retired) = client.held_retired() {
        return Err(tool_error(retired).into());
    }
    let key = CacheKey::new(PLATFORM, DataClass::Document, "document")
        .param("index", index.clone().unwrap_or_default())
        .param("id", id.clone());
    let asked = Arc::new((index, id));
    let pc = PlatformCall::new(key, COST, move || {
        let (client, asked) = (Arc::clone(&client), Arc::clone(&asked));
        async move {
            let doc = client.judge(client.document(asked.0.as_deref(), &asked.1).await)?;
            let text = ori::document_text(&doc.source);
            let mut record = doc.source.clone();
            for big in ["text", "md_text", "text_pages"] {
                record.remove(big);
            }
            let answer = DocumentAnswer {
                id: format!("{}/{}", doc.index, doc.id),
                kind: text_field(&doc.source, &["@type"]),
                name: text_field(&doc.source, &["name", "title"]),
                date: text_field(&doc.source, &["last_discussed_at", "start_date"]),
                original_url: text_field(&doc.source, &["original_url", "url"]),
                text,
                record: Value::Object(record),
            };
            Ok((answer, Feedback::default()))
        }
    });
    ctx.read_for(Who::Caller, call, pc, |answer, served| {
        Ok((render::head(answer), render::document(answer, served, offset, length)))
    })
    .await
}

/// Open Raadsinformatie's sources (retired; a mirror only).
async fn ori_sources(ctx: &Context, call: &Call, args: SourcesArgs) -> Reply {
    let limit = args.limit.unwrap_or(DEFAULT_SOURCES);
    if !(1..=MAX_SOURCES).contains(&limit) {
        return tool_error(format!("`limit` must be 1 to {MAX_SOURCES}, not {limit}")).into();
    }
    let offset = args.offset.unwrap_or(0);
    let filter = args.filter.map(|f| f.trim().to_owned()).filter(|f| !f.is_empty());
    let client = match ctx.clients.get::<OriClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    if let Some(retired) = client.held_retired() {
        return tool_error(retired).into();
    }
    let key = CacheKey::new(PLATFORM, DataClass::Reference, "sources");
    let pc = PlatformCall::new(key, COST, move || {
        let client = Arc::clone(&client);
        async move {
            let sources = client.judge(client.sources().await)?;
            Ok((SourcesAnswer { sources }, Feedback::default()))
        }
    });
    ctx.answer_for(Who::Caller, call, pc, |answer, served| {
        Ok(render::sources(answer, served, filter.as_deref(), offset, limit))
    })
    .await
}

/// What ORI reads.
pub const READER: IdReader = IdReader {
    // A mirror: a record's original is where its source put it, if anywhere.
    public_pages: false,
    paged: &[&DOCUMENT_TOOL],
    forms: &[IdForm {
        what: "an ORI document as `index/id` (a mirror only)",
        example: "ori_heemskerk_20250506181303/1001",
        sample: None,
    }],
    read,
};

fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let id = ids::document_id(id)?;
    let args = DocumentArgs {
        id: id.to_owned(),
        offset: paging.offset,
        length: paging.length,
    };
    Some(Ok(Reading::new(id, Claim::Home, &DOCUMENT_TOOL, move |ctx, call| {
        Box::pin(ori_read(ctx, call, args))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_and_id_is_ori_and_a_link_is_not() {
        assert!(read("ori_heemskerk_20250506181303/1001", Paging::default()).is_some());
        assert!(read("https://wetten.overheid.nl/BWBR0018451", Paging::default()).is_none());
        assert!(read("kst-35510-16", Paging::default()).is_none());
    }

    fn args(query: &str) -> SearchArgs {
        SearchArgs {
            query: query.to_owned(),
            source: None,
            date_from: None,
            date_to: None,
            limit: None,
            offset: None,
        }
    }

    #[test]
    fn arguments_are_refused_before_any_call_without_echoing_them() {
        assert_eq!(search_of(&args("woningbouw")).unwrap().indices, ALL_SOURCES);
        let long = "x".repeat(5_000);
        assert!(search_of(&args(&long)).unwrap_err().len() < 80);
        let bad_source = SearchArgs {
            source: Some(format!("../{long}")),
            ..args("a")
        };
        assert!(search_of(&bad_source).unwrap_err().len() < 160);
        let bad_date = SearchArgs {
            date_from: Some("2026-02-30".into()),
            ..args("a")
        };
        assert!(search_of(&bad_date).unwrap_err().contains("date_from"));
        let deep = SearchArgs {
            offset: Some(9_995),
            limit: Some(10),
            ..args("a")
        };
        assert!(search_of(&deep).is_err());
    }
}
