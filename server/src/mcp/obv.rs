//! The OpenBesluitvorming tools: search, read a document or meeting, the list of
//! sources, and the load status ("Laadstatus").
//!
//! Costs are the platform's own (a search `max(1, ceil(limit / 24))` units, everything
//! else 1); the platform's `RateLimit-*` headers and 429s are fed back to the gate by
//! the fetcher. Buffer classes: sources are a reference list (kept long), searches and
//! the status are short-lived, documents are kept for weeks.

use std::fmt::Write as _;
use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::dedup::Fold;
use besluitbron_core::scheduler::MAX_REQUEUE_WAIT;
use besluitbron_core::{PlatformId, SessionKey, Units};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, schemars, tool, tool_router};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::{Besluit, Caller, answer_json, fetch_or_cancel, progress_sink, provenance, tool_answer, tool_error};
use crate::fetch::{Request, Upstream};
use crate::platforms::obv::{EntityType, OTHER_CALL_COST, SearchParams, SortOrder};

const PLATFORM: PlatformId = PlatformId::Obv;

/// Arguments of `obv_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all occur (a "quoted phrase" is allowed). Required unless
    /// `organization` is given.
    #[serde(default)]
    pub query: Option<String>,
    /// Restrict to one source: a key from obv_sources, e.g. `gemeente_utrecht`. Much
    /// faster than searching all 331 sources.
    #[serde(default)]
    pub organization: Option<String>,
    /// Only this kind: Meeting, Document, Motion or Recording.
    #[serde(default)]
    pub entity_type: Option<String>,
    /// First day, YYYY-MM-DD.
    #[serde(default)]
    pub date_from: Option<String>,
    /// Last day (inclusive), YYYY-MM-DD.
    #[serde(default)]
    pub date_to: Option<String>,
    /// date_desc (default), date_asc, title_asc or relevance.
    #[serde(default)]
    pub sort: Option<String>,
    /// Hits per page, 1 to 100 (default 24). Above 24 costs more platform capacity.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Hits to skip, for the next page.
    #[serde(default)]
    pub offset: Option<u32>,
}

impl SearchArgs {
    fn params(&self) -> Result<SearchParams, String> {
        let mut p = SearchParams::query(self.query.clone().unwrap_or_default());
        // R-D5: OpenBesluitvorming splits the query on whitespace and ANDs the words, so
        // runs of whitespace are safe to fold; letter case and punctuation are not folded.
        p.query = self
            .query
            .as_deref()
            .map(|q| Fold::Whitespace.apply(q))
            .filter(|q| !q.is_empty());
        p.organization = self.organization.clone().filter(|o| !o.is_empty());
        p.entity_type = match &self.entity_type {
            Some(t) => Some(t.parse::<EntityType>().map_err(|e| e.to_string())?),
            None => None,
        };
        p.sort = match &self.sort {
            Some(s) => s.parse::<SortOrder>().map_err(|e| e.to_string())?,
            None => SortOrder::default(),
        };
        p.date_from = self.date_from.clone();
        p.date_to = self.date_to.clone();
        p.limit = self.limit.unwrap_or(24);
        p.offset = self.offset.unwrap_or(0);
        p.validate().map_err(|e| e.to_string())?;
        Ok(p)
    }
}

/// One hit of `obv_search`.
#[derive(Debug, Serialize, Deserialize)]
pub struct Hit {
    entity_id: String,
    entity_type: String,
    title: String,
    organization: String,
    date: String,
    summary: String,
    download_url: Option<String>,
}

/// Arguments of `obv_document`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentArgs {
    /// The entity id from a search hit, e.g. `document:notubiz:gemeente:soest:12345`.
    pub id: String,
    /// Where to start in the text, in characters (default 0).
    #[serde(default)]
    pub offset: Option<usize>,
    /// How many characters to return (default 20000, at most 100000).
    #[serde(default)]
    pub length: Option<usize>,
}

/// Arguments of `obv_sources`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourcesArgs {
    /// Only sources of this organisation type, e.g. `municipality`, `province`, `water`.
    #[serde(default)]
    pub organization_type: Option<String>,
}

/// Arguments of `obv_status`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// Only this source key.
    #[serde(default)]
    pub source: Option<String>,
}

const DEFAULT_LENGTH: usize = 20_000;
const MAX_LENGTH: usize = 100_000;

#[tool_router(router = obv_router, vis = "pub(crate)")]
impl Besluit {
    /// Search OpenBesluitvorming.
    #[tool(
        name = "obv_search",
        description = "Search council, provincial and water-board decision making (meetings, documents, motions, \
                       recordings) at OpenBesluitvorming. Returns titles and short summaries (cheap). Give \
                       `organization` (a key from obv_sources) whenever the question is about one municipality, \
                       province or water board: searching all 331 sources is slower. A first search on a subject \
                       is slower than a repeat, which is answered from BesluitBron's buffer for ten minutes. \
                       limit above 24 costs extra platform capacity.",
        annotations(
            title = "Search OpenBesluitvorming",
            read_only_hint = true,
            open_world_hint = true,
            idempotent_hint = true,
            destructive_hint = false
        )
    )]
    pub async fn obv_search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let params = match args.params() {
            Ok(p) => p,
            Err(e) => return Ok(tool_error(e)),
        };
        let mut key = CacheKey::new(PLATFORM, DataClass::Search, "search")
            .param("sort", params.sort.as_str())
            .param("limit", params.limit.to_string())
            .param("offset", params.offset.to_string());
        for (name, value) in [
            ("query", &params.query),
            ("organization", &params.organization),
            ("date_from", &params.date_from),
            ("date_to", &params.date_to),
        ] {
            if let Some(v) = value {
                key = key.param(name, v.clone());
            }
        }
        if let Some(t) = params.entity_type {
            key = key.param("entity_type", t.as_str());
        }
        let cost = params.cost();
        let client = self.shared.obv.clone();
        let answer = self
            .fetch(&ctx, key, cost, "obv_search", move || async move {
                let (page, rate) = client.search(&params).await?;
                let hits: Vec<Hit> = page
                    .results
                    .into_iter()
                    .map(|h| Hit {
                        entity_id: h.entity_id,
                        entity_type: h.entity_type,
                        title: h.title,
                        organization: h.organization,
                        date: h.date,
                        summary: h.summary,
                        download_url: h.download_url,
                    })
                    .collect();
                let out = json!({
                    "results": hits,
                    "total_count": page.total_count,
                    "total_is_approximate": page.total_is_approximate,
                    "has_more": page.has_more,
                });
                Ok(Upstream {
                    payload: serde_json::to_vec(&out).unwrap_or_default(),
                    rate: Some(rate),
                })
            })
            .await;
        Ok(match answer {
            Err(result) => result,
            Ok((value, served)) => {
                let hits = value["results"].as_array().map_or(&[][..], Vec::as_slice);
                let mut text = format!(
                    "{} of about {} hits{}.",
                    hits.len(),
                    value["total_count"].as_u64().unwrap_or(0),
                    provenance(served)
                );
                // One line per hit, appended piece by piece: every cached search renders
                // this, and the formatting machinery cost more than the strings.
                for hit in hits.iter().take(10) {
                    let field = |name: &str| hit.get(name).and_then(Value::as_str).unwrap_or("");
                    for (before, part) in [
                        ("\n- ", field("title")),
                        (" (", field("organization")),
                        (", ", field("date")),
                        (") id=", field("entity_id")),
                    ] {
                        text.push_str(before);
                        text.push_str(part);
                    }
                }
                tool_answer(value, text)
            }
        })
    }

    /// Read one document or meeting.
    #[tool(
        name = "obv_document",
        description = "Read one OpenBesluitvorming document, meeting or motion by its id (from obv_search): \
                       metadata plus the full text, in pages of `length` characters from `offset`. Full text is \
                       slow and the most expensive call BesluitBron makes; use it only for documents the answer \
                       needs, and prefer search summaries when they suffice. Once read, a document is kept in \
                       BesluitBron's buffer for weeks, so rereading and paging are fast.",
        annotations(
            title = "Read an OpenBesluitvorming document",
            read_only_hint = true,
            open_world_hint = true,
            idempotent_hint = true,
            destructive_hint = false
        )
    )]
    pub async fn obv_document(
        &self,
        Parameters(args): Parameters<DocumentArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let id = args.id.trim().to_owned();
        if id.is_empty() || id.len() > 512 {
            return Ok(tool_error(
                "`id` must be an entity id from obv_search (1 to 512 characters)",
            ));
        }
        let length = args.length.unwrap_or(DEFAULT_LENGTH);
        if length == 0 || length > MAX_LENGTH {
            return Ok(tool_error(format!(
                "`length` must be between 1 and {MAX_LENGTH} characters"
            )));
        }
        let offset = args.offset.unwrap_or(0);
        let key = CacheKey::new(PLATFORM, DataClass::Document, "entity").param("id", id.clone());
        let client = self.shared.obv.clone();
        let answer = self
            .fetch(&ctx, key, OTHER_CALL_COST, "obv_document", move || async move {
                let (e, rate) = client.entity(&id).await?;
                let out = json!({
                    "entity_id": e.entity_id,
                    "entity_type": e.entity_type,
                    "title": e.title,
                    "organization": e.organization,
                    "date": e.date,
                    "text": e.markdown_text.unwrap_or_default(),
                    "download_url": e.download_url,
                    "pdf_url": e.pdf_url,
                    "meeting_id": e.meeting_id,
                    "agenda": e.agenda.iter().map(|a| json!({"id": a.id, "number": a.number, "title": a.title,
                        "documents": a.documents.iter().map(|d| json!({"id": d.id, "name": d.name})).collect::<Vec<_>>()})).collect::<Vec<_>>(),
                    "motions": e.motions.iter().map(|m| json!({"id": m.id, "name": m.name, "result": m.result,
                        "in_favour": m.tally.in_favour, "against": m.tally.against})).collect::<Vec<_>>(),
                    "motion": e.motion.as_ref().map(|m| json!({"name": m.name, "result": m.result, "status": m.status,
                        "in_favour": m.tally.in_favour, "against": m.tally.against})),
                });
                Ok(Upstream { payload: serde_json::to_vec(&out).unwrap_or_default(), rate: Some(rate) })
            })
            .await;
        Ok(match answer {
            Err(result) => result,
            Ok((mut value, served)) => {
                let text = value["text"].as_str().unwrap_or("").to_owned();
                let total = text.chars().count();
                let page: String = text.chars().skip(offset).take(length).collect();
                let has_more = offset.saturating_add(length) < total;
                value["text"] = json!(page);
                value["text_offset"] = json!(offset);
                value["total_length"] = json!(total);
                value["has_more"] = json!(has_more);
                let summary = format!(
                    "{} — {} ({}), characters {}–{} of {}{}{}.",
                    value["title"].as_str().unwrap_or(""),
                    value["organization"].as_str().unwrap_or(""),
                    value["date"].as_str().unwrap_or(""),
                    offset.min(total),
                    (offset + length).min(total),
                    total,
                    if has_more {
                        "; ask again with a larger offset for the rest"
                    } else {
                        ""
                    },
                    provenance(served)
                );
                tool_answer(value, format!("{summary}\n\n{page}"))
            }
        })
    }

    /// The list of sources.
    #[tool(
        name = "obv_sources",
        description = "List OpenBesluitvorming's 331 sources (municipalities, provinces, water boards) with the \
                       key to pass as `organization` to obv_search. A reference list that changes over months: \
                       answered from BesluitBron's buffer almost always.",
        annotations(
            title = "OpenBesluitvorming sources",
            read_only_hint = true,
            open_world_hint = true,
            idempotent_hint = true,
            destructive_hint = false
        )
    )]
    pub async fn obv_sources(
        &self,
        Parameters(args): Parameters<SourcesArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let key = CacheKey::new(PLATFORM, DataClass::Reference, "sources");
        let client = self.shared.obv.clone();
        let answer = self
            .fetch(&ctx, key, OTHER_CALL_COST, "obv_sources", move || async move {
                let (sources, rate) = client.sources().await?;
                let list: Vec<_> = sources
                    .into_iter()
                    .map(|s| {
                        json!({"key": s.key, "label": s.label, "supplier": s.supplier,
                        "organization_type": s.organization_type, "implemented": s.implemented})
                    })
                    .collect();
                Ok(Upstream {
                    payload: serde_json::to_vec(&json!({ "sources": list })).unwrap_or_default(),
                    rate: Some(rate),
                })
            })
            .await;
        Ok(match answer {
            Err(result) => result,
            Ok((mut value, served)) => {
                let wanted = args.organization_type.as_deref().map(str::to_lowercase);
                // Moved out of the parsed answer, not cloned: the list is the whole answer.
                let sources: Vec<Value> = match value.get_mut("sources").map(Value::take) {
                    Some(Value::Array(all)) => all
                        .into_iter()
                        .filter(|s| {
                            wanted
                                .as_deref()
                                .is_none_or(|w| s["organization_type"].as_str().is_some_and(|t| t.to_lowercase() == w))
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                let count = sources.len();
                let mut text = format!("{count} sources{}.", provenance(served));
                for s in sources.iter().take(20) {
                    let _ = write!(
                        text,
                        "\n- {} ({})",
                        s["label"].as_str().unwrap_or(""),
                        s["key"].as_str().unwrap_or("")
                    );
                }
                // Built by hand: `json!` would serialize the list into a second copy.
                let mut structured = serde_json::Map::new();
                structured.insert("sources".to_owned(), Value::Array(sources));
                structured.insert("count".to_owned(), Value::from(count));
                tool_answer(Value::Object(structured), text)
            }
        })
    }

    /// The load status.
    #[tool(
        name = "obv_status",
        description = "OpenBesluitvorming's load status (Laadstatus): per source whether its imports succeed, \
                       when it last did, and how current its content is. Use it to judge whether a source's \
                       results are complete and up to date. BesluitBron refreshes it itself every ten minutes.",
        annotations(
            title = "OpenBesluitvorming load status",
            read_only_hint = true,
            open_world_hint = true,
            idempotent_hint = true,
            destructive_hint = false
        )
    )]
    pub async fn obv_status(
        &self,
        Parameters(args): Parameters<StatusArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let answer = match fetch_status(self, Some(&ctx)).await {
            Ok(answer) => answer,
            Err(e) => return Ok(tool_error(e)),
        };
        let value = match answer_json(&answer) {
            Ok(v) => v,
            Err(result) => return Ok(result),
        };
        let sources: Vec<_> = value["sources"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|s| {
                args.source
                    .as_deref()
                    .is_none_or(|k| s["source_key"].as_str() == Some(k))
            })
            .cloned()
            .collect();
        if let Some(k) = &args.source
            && sources.is_empty()
        {
            return Ok(tool_error(format!(
                "OpenBesluitvorming reports no source `{k}`; obv_sources lists the keys"
            )));
        }
        let not_ok: Vec<_> = sources.iter().filter(|s| s["state"].as_str() != Some("ok")).collect();
        let mut text = format!(
            "Status of {}: {} sources, {} not ok{}.",
            value["generated_at"].as_str().unwrap_or("?"),
            sources.len(),
            not_ok.len(),
            provenance(answer.served)
        );
        for s in not_ok.iter().take(15) {
            let _ = write!(
                text,
                "\n- {} ({}): {}",
                s["label"].as_str().unwrap_or(""),
                s["source_key"].as_str().unwrap_or(""),
                s["state"].as_str().unwrap_or("")
            );
        }
        let out = json!({
            "generated_at": value["generated_at"],
            "suppliers": value["suppliers"],
            "sources": sources,
        });
        Ok(tool_answer(out, text))
    }
}

/// Fetches the load status as BesluitBron's own maintenance: the system session (R-L7).
/// Used by the `obv_status` tool and by the periodic refresh.
pub async fn fetch_status(
    handler: &Besluit,
    ctx: Option<&RequestContext<RoleServer>>,
) -> Result<crate::fetch::Answer, crate::fetch::FetchError> {
    let key = CacheKey::new(PLATFORM, DataClass::Search, "status");
    let client = handler.shared.obv.clone();
    let request = Request {
        key,
        cost: OTHER_CALL_COST,
        session: SessionKey::System,
        client: "besluitbron".to_owned(),
        tool: "obv_status",
    };
    let fetch = handler.shared.fetcher.fetch(request, None, move || async move {
        let (status, rate) = client.status().await?;
        let out = json!({
            "generated_at": status.generated_at,
            "suppliers": status.suppliers.iter().map(|s| json!({"supplier": s.supplier, "label": s.label,
                "state": s.state, "source_count": s.source_count, "ok_source_count": s.ok_source_count})).collect::<Vec<_>>(),
            "sources": status.sources.iter().map(|s| json!({"source_key": s.source_key, "label": s.label,
                "state": s.state, "last_success_at": s.last_success_at, "latest_content_date": s.latest_content_date,
                "last_error_message": s.last_error_message})).collect::<Vec<_>>(),
        });
        Ok(Upstream { payload: serde_json::to_vec(&out).unwrap_or_default(), rate: Some(rate) })
    });
    match ctx {
        Some(ctx) => fetch_or_cancel(ctx, fetch).await,
        None => fetch.await,
    }
}

impl Besluit {
    /// Runs one platform request for a tool, with the caller's identity and progress.
    /// Returns the answer as JSON and how it was served, or the tool error to answer.
    pub(crate) async fn fetch<F, Fut>(
        &self,
        ctx: &RequestContext<RoleServer>,
        key: CacheKey,
        cost: Units,
        tool: &'static str,
        upstream: F,
    ) -> Result<(serde_json::Value, crate::fetch::Served), CallToolResult>
    where
        F: FnOnce() -> Fut + Clone + Send + 'static,
        Fut: std::future::Future<Output = Result<Upstream, crate::platforms::http::PlatformError>> + Send + 'static,
    {
        let caller = Caller::of_call(ctx, &self.shared.trusted_proxies);
        let platform = key.platform();
        let fetcher: &Arc<crate::fetch::Fetcher> = &self.shared.fetcher;
        // A retry of a call whose answer was kept renders that answer again.
        if let Some(answer) = super::replay::replayed_answer() {
            return answer_json(&answer).map(|v| (v, answer.served));
        }
        let mut requeued = false;
        loop {
            let request = Request {
                key: key.clone(),
                cost,
                session: caller.session.clone(),
                client: caller.address.clone(),
                tool,
            };
            let progress = progress_sink(ctx, platform.display_name());
            match fetch_or_cancel(ctx, fetcher.fetch(request, progress, upstream.clone())).await {
                Ok(answer) => {
                    super::replay::record_answer(&answer);
                    return answer_json(&answer).map(|v| (v, answer.served));
                }
                // The platform refused although BesluitBron kept its limit (another client
                // behind the same address, a limit lowered upstream). Its Retry-After has
                // already reached the gate, so the call queues once more behind it instead
                // of failing; a second refusal is reported.
                Err(crate::fetch::FetchError::Platform(crate::platforms::http::PlatformError::RateLimited {
                    retry_after,
                    ..
                })) if !requeued && fetcher.gate(platform).is_some() && retry_after <= MAX_REQUEUE_WAIT => {
                    requeued = true;
                }
                Err(e) => return Err(tool_error(e)),
            }
        }
    }
}
