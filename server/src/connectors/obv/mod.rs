//! The OpenBesluitvorming connector (`obv`): search, read a document or meeting, the
//! list of sources, and the load status ("Laadstatus", refreshed by BesluitBron's own
//! maintenance as the system session, R-L7).
//!
//! Costs are the platform's own (a search `max(1, ceil(limit / 24))` units, everything
//! else 1); the platform's `RateLimit-*` headers go back to the fair queue as feedback.
//! Buffer classes: sources are a reference list (kept long), searches and the status are
//! short-lived, documents are kept for weeks. Rendering lives in [`render`], as pure
//! functions of the kept answers.

pub mod ids;
mod lists;
pub mod names;
pub mod offers;
pub mod page;
pub mod render;

use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::PlatformId;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::dedup::Fold;
use besluitbron_core::path::Served;
use rmcp::schemars;
use serde::Deserialize;

use super::ask::{AskArg, Resolver};
use super::ids::{Claim, IdForm, IdReader, Paging, Reading};
use super::search::{Asked, Asking, Keyword, KeywordTool};
use super::tool::{ToolSpec, client};
use super::vocabulary::Listing;
use super::{ConnectorSpec, Maintenance, MaintenanceFuture, Sample, http_config};
use crate::call::{
    AnswerError, Call, Client, Context, PlatformCall, ReadResult, Rendered, Reply, Who, replied, tool_error,
};
use crate::config::{Config, PlatformDefaults};
use crate::platforms::http::PlatformError;
use crate::platforms::obv::{EntityType, OTHER_CALL_COST, ObvClient, SearchParams, SortOrder};
use lists::{feedback, sources_call};
use render::{DocumentAnswer, SearchAnswer, Searched, StatusAnswer};

const PLATFORM: PlatformId = crate::platforms::obv::PLATFORM;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "obv",
    platform: PLATFORM,
    defaults: PlatformDefaults::new(
        PLATFORM,
        "https://openbesluitvorming.nl",
        &[crate::platforms::obv::SERVICE],
    ),
    instructions: INSTRUCTIONS,
    guide: GUIDE,
    lists: &[&SOURCES_TOOL, &STATUS_TOOL],
    reads: Some(&READER),
    tools: TOOLS,
    open,
    maintenance: Some(Maintenance {
        name: "OpenBesluitvorming load status refresh",
        every: |config| (config.status_refresh_secs > 0).then(|| Duration::from_secs(config.status_refresh_secs)),
        run: refresh_status,
    }),
    samples: &[
        Sample::new("obv_search", r#"{"query": "woningbouw", "limit": 10}"#),
        Sample::new(
            "obv_document",
            r#"{"id": "motion:notubiz:provincie:noord-brabant:80501"}"#,
        ),
        Sample::new("obv_sources", r#"{"organization_type": "province"}"#),
        Sample::system("obv_status", "{}"),
    ],
    offers: &offers::OFFERS,
    page: &page::PAGE,
    status: Some(&page::STATUS),
    search: crate::connectors::search::KeywordSearch::Tool(&Keyword::<ObvSearch>::SEARCH),
};

/// What OpenBesluitvorming reads.
pub const READER: IdReader = IdReader {
    // Every record it reads has a public page (`fetch`'s `url`).
    public_pages: true,
    paged: &[&DOCUMENT_TOOL],
    forms: &[
        IdForm {
            what: "an OpenBesluitvorming id (document, meeting, motion)",
            example: "document:notubiz:gemeente:soest:12345",
            sample: Some("motion:notubiz:provincie:noord-brabant:80501"),
        },
        IdForm {
            what: "a link to a record on openbesluitvorming.nl",
            example: "openbesluitvorming.nl/?organization=soest&view=document:notubiz:gemeente:soest:12345",
            sample: Some(
                "openbesluitvorming.nl/?organization=noord-brabant&view=motion:notubiz:provincie:noord-brabant:80501",
            ),
        },
    ],
    read,
};

/// Reads an OpenBesluitvorming id with `obv_document`.
fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let id = ids::entity_id(id)?;
    let args = DocumentArgs {
        id: id.clone(),
        offset: paging.offset,
        length: paging.length,
    };
    Some(Ok(Reading::new(id, Claim::Home, &DOCUMENT_TOOL, move |ctx, call| {
        Box::pin(obv_read(ctx, call, args))
    })))
}

/// What an assistant is told about these tools in the server's instructions (short:
/// every address's instructions stay within the hosts' limit).
const INSTRUCTIONS: &str = "OpenBesluitvorming (obv_*): council decisions of 331 municipalities, provinces and water boards. obv_search first, for one organization where you can (cheap); obv_document reads full text (costly: 60 units a minute shared).";

/// What an assistant is told about these tools in depth (the guide resource).
const GUIDE: &str = "OpenBesluitvorming (obv_* tools): council and provincial decision making of 331 \
sources (municipalities, provinces, water boards). Start with obv_search (titles and summaries, cheap), restricted \
to one organization when the question allows (obv_sources lists the keys): searching all sources is slower. Read \
full text with obv_document only for the documents you need (slow and the most expensive call). The platform \
allows 60 units per minute for all BesluitBron users together; a search with limit above 24 costs more than one \
unit. A first question on a subject is slower than a follow-up, which is often answered from BesluitBron's buffer.";

fn open(config: &Config) -> Result<Client, PlatformError> {
    let client = ObvClient::new(&config.platform(PLATFORM).base_url, &http_config(config, PLATFORM))?;
    Ok(Arc::new(client))
}

/// Kinds of entity a search can be restricted to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
pub enum EntityTypeArg {
    /// Meetings (a recording matches as its meeting).
    Meeting,
    /// Documents.
    Document,
    /// Motions.
    Motion,
    /// Recordings.
    Recording,
}

impl From<EntityTypeArg> for EntityType {
    fn from(t: EntityTypeArg) -> EntityType {
        match t {
            EntityTypeArg::Meeting => EntityType::Meeting,
            EntityTypeArg::Document => EntityType::Document,
            EntityTypeArg::Motion => EntityType::Motion,
            EntityTypeArg::Recording => EntityType::Recording,
        }
    }
}

/// Orders of a search.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum SortArg {
    /// Newest first (the default).
    DateDesc,
    /// Oldest first.
    DateAsc,
    /// By title.
    TitleAsc,
    /// Best match first.
    Relevance,
}

impl From<SortArg> for SortOrder {
    fn from(s: SortArg) -> SortOrder {
        match s {
            SortArg::DateDesc => SortOrder::DateDesc,
            SortArg::DateAsc => SortOrder::DateAsc,
            SortArg::TitleAsc => SortOrder::TitleAsc,
            SortArg::Relevance => SortOrder::Relevance,
        }
    }
}

/// Arguments of `obv_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all occur (a "quoted phrase" is allowed), e.g. `woningbouw` or
    /// `"sociale huur"`. Required unless `organization` is given.
    #[schemars(length(max = 500))]
    #[serde(default)]
    pub query: Option<String>,
    /// One source: its key from obv_sources (`gemeente-utrecht`) or name (`Gemeente
    /// Utrecht`; one that fits several is answered with their keys).
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub organization: Option<String>,
    /// Only this kind of entity.
    #[serde(default, deserialize_with = "entity_type_arg")]
    #[schemars(with = "Option<EntityTypeArg>")]
    pub entity_type: Option<EntityTypeArg>,
    /// First day.
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_from: Option<String>,
    /// Last day (inclusive).
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_to: Option<String>,
    /// The order of the hits (default date_desc, newest first).
    #[serde(default, deserialize_with = "sort_arg")]
    #[schemars(with = "Option<SortArg>")]
    pub sort: Option<SortArg>,
    /// Default 24; above 24 costs more platform capacity.
    #[schemars(range(min = 1, max = 100))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<u32>,
}

impl SearchArgs {
    fn params(&self) -> Result<SearchParams, String> {
        let mut p = SearchParams::query(self.query.clone().unwrap_or_default());
        p.sort = self.sort.map(SortOrder::from).unwrap_or_default();
        p.query = self
            .query
            .as_deref()
            .map(|q| query_fold(p.sort).apply(q))
            .filter(|q| !q.is_empty());
        p.organization = self.organization.clone().filter(|o| !o.is_empty());
        p.entity_type = self.entity_type.map(EntityType::from);
        p.date_from = self.date_from.clone();
        p.date_to = self.date_to.clone();
        p.limit = self.limit.unwrap_or(24);
        p.offset = self.offset.unwrap_or(0);
        // Checked here, before anything is sent: said as BesluitBron's own check.
        p.validate().map_err(|e| match e {
            crate::platforms::http::PlatformError::BadRequest { message, .. } => {
                format!("obv_search: {message} (nothing was asked of OpenBesluitvorming)")
            }
            other => format!("obv_search: {other}"),
        })?;
        Ok(p)
    }
}

/// How a search's `query` is folded (R-D5, level 1): OpenBesluitvorming strips
/// punctuation, folds case and ANDs the words (PLATFORMS.md §2), so in an order by date
/// or title the words' order, repeats, case and punctuation do not change the answer —
/// the query is sent, and kept, as its sorted lower-case words. By relevance a repeated
/// word may weigh more: there only whitespace is folded. A phrase is kept as written.
fn query_fold(sort: SortOrder) -> Fold {
    match sort {
        SortOrder::Relevance => Fold::Whitespace,
        _ => Fold::AndWordsCaseless,
    }
}

/// The buffer key of a search: every parameter that changes the answer.
fn search_key(params: &SearchParams) -> CacheKey {
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
    key
}

/// What a search asked, as its answer reports it.
fn searched(params: &SearchParams) -> Searched {
    Searched {
        query: params.query.clone(),
        organization: params.organization.clone(),
        entity_type: params.entity_type.map(|t| t.as_str().to_owned()),
        date_from: params.date_from.clone(),
        date_to: params.date_to.clone(),
        sort: params.sort.as_str().to_owned(),
        offset: params.offset,
        limit: params.limit,
    }
}

/// Arguments of `obv_document`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentArgs {
    /// The entity id from a search hit, e.g. `document:notubiz:gemeente:soest:12345`.
    #[schemars(length(max = 512))]
    pub id: String,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters (default 8000).
    #[schemars(range(min = 1, max = 100_000))]
    #[serde(default)]
    pub length: Option<usize>,
}

/// Organisation types of the sources.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum OrganizationTypeArg {
    /// Municipalities (gemeenten).
    Municipality,
    /// Provinces.
    Province,
    /// Water boards (waterschappen).
    WaterBoard,
}

impl OrganizationTypeArg {
    /// The platform's `organizationType`.
    pub const fn as_str(self) -> &'static str {
        match self {
            OrganizationTypeArg::Municipality => "municipality",
            OrganizationTypeArg::Province => "province",
            OrganizationTypeArg::WaterBoard => "water_board",
        }
    }
}

/// Arguments of `obv_sources`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SourcesArgs {
    /// Only sources of this organisation type.
    #[serde(default, deserialize_with = "organization_type_arg")]
    #[schemars(with = "Option<OrganizationTypeArg>")]
    pub organization_type: Option<OrganizationTypeArg>,
    /// Only sources whose name or key contains this text (any case), e.g. `utrecht`.
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub name: Option<String>,
    /// Default 50.
    #[schemars(range(min = 1, max = 400))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
}

/// Which sources a load-status answer shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StateArg {
    /// Every source whose state is not `ok` (the default).
    #[default]
    NotOk,
    /// Every source.
    Any,
    /// Importing normally.
    Ok,
    /// Imports succeed but the content is old.
    Stale,
    /// Imports fail.
    Failing,
    /// Never imported.
    NeverImported,
    /// Not implemented by the platform.
    NotImplemented,
    /// The organisation no longer exists (merged).
    Discontinued,
}

impl StateArg {
    /// The argument's name.
    pub const fn as_str(self) -> &'static str {
        match self {
            StateArg::NotOk => "not_ok",
            StateArg::Any => "any",
            StateArg::Ok => "ok",
            StateArg::Stale => "stale",
            StateArg::Failing => "failing",
            StateArg::NeverImported => "never_imported",
            StateArg::NotImplemented => "not_implemented",
            StateArg::Discontinued => "discontinued",
        }
    }
}

/// Arguments of `obv_status`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StatusArgs {
    /// Only this source key (from obv_sources), e.g. `gemeente-utrecht`; `state` is then
    /// ignored.
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub source: Option<String>,
    /// Only sources in this state (default not_ok: every source with a problem).
    #[serde(default, deserialize_with = "state_arg")]
    #[schemars(with = "Option<StateArg>")]
    pub state: Option<StateArg>,
    /// Default 25.
    #[schemars(range(min = 1, max = 100))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
}

fn entity_type_arg<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<EntityTypeArg>, D::Error> {
    super::pages::choice("entity_type", d)
}

fn sort_arg<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<SortArg>, D::Error> {
    super::pages::choice("sort", d)
}

fn organization_type_arg<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<OrganizationTypeArg>, D::Error> {
    super::pages::choice("organization_type", d)
}

fn state_arg<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<StateArg>, D::Error> {
    super::pages::choice("state", d)
}

/// The `obv_document` tool (its spec is what `fetch` runs for this connector's ids).
pub(crate) const DOCUMENT_TOOL: ToolSpec = crate::tool! {
    name: "obv_document",
    title: "Read an OpenBesluitvorming document",
    description: "Read one OpenBesluitvorming document, meeting or motion by its id (from obv_search): \
                  metadata and the full text in pages. Full text is the slowest and most expensive call: read \
                  only what the answer needs, and prefer search summaries when they suffice. `next_offset` reads \
                  on. Kept for weeks once read.",
    arguments: DocumentArgs,
    output: render::DocumentShown,
    run: obv_document,
    read: obv_read,
};

/// The `obv_search` tool (its spec is what `search` runs for this connector).
pub(crate) const SEARCH_TOOL: ToolSpec = Keyword::<ObvSearch>::TOOL;

/// `obv_search`, declared once: the tool and its part in `search` on `/mcp`.
pub(crate) struct ObvSearch;

impl KeywordTool for ObvSearch {
    const NAME: &'static str = "obv_search";
    const ASKS: &'static [AskArg] = &[AskArg {
        argument: "organization",
        names: "sources",
        resolver: Resolver::Listed {
            tool: "obv_sources",
            resolve: lists::organization,
        },
    }];
    const TITLE: &'static str = "Search OpenBesluitvorming";
    const DESCRIPTION: &'static str = "Search council, provincial and water-board decision making (meetings, \
        documents, motions, recordings) at OpenBesluitvorming: titles and short summaries (cheap). Give \
        `organization` whenever the question is about one municipality, province or water board: searching all \
        sources is slower (`limit` above 24 costs more). Repeats: buffered 10 min.";
    type Args = SearchArgs;
    type Output = render::SearchShown;
    type Found = Asking<SearchAnswer, Searched>;

    async fn find(ctx: &Context, call: &Call, args: SearchArgs) -> Result<Self::Found, Reply> {
        let (pc, asked) = search_question(ctx, call, args).await?;
        let kept = ctx.fetch_kept(call, pc).await?;
        Ok(Asking { kept, asked })
    }

    fn render(found: &Self::Found) -> Rendered {
        render::search(&found.kept.answer, found.kept.served, &found.asked)
    }

    fn listing(found: &Self::Found) -> Listing {
        render::listing(&found.kept.answer, &found.asked)
    }

    fn arguments(asked: &Asked) -> serde_json::Map<String, serde_json::Value> {
        let mut args = serde_json::Map::new();
        args.insert("query".into(), asked.query.clone().into());
        args.insert("limit".into(), asked.limit.into());
        crate::connectors::search::dates(asked, &mut args);
        args
    }
}

/// The `obv_sources` tool: one of the connector's lists.
pub(crate) const SOURCES_TOOL: ToolSpec = crate::tool! {
    name: "obv_sources",
    title: "OpenBesluitvorming sources",
    description: "List OpenBesluitvorming's sources (municipalities, provinces, water boards) with the key \
                  obv_search takes as `organization`; narrow with `name` and `organization_type`. Cheap: buffered.",
    arguments: SourcesArgs,
    output: render::SourcesShown,
    run: obv_sources,
};

/// The `obv_status` tool: one of the connector's lists.
pub(crate) const STATUS_TOOL: ToolSpec = crate::tool! {
    name: "obv_status",
    title: "OpenBesluitvorming load status",
    description: "OpenBesluitvorming's load status: per source whether its imports succeed, when they last did \
                  and how current its content is, to judge whether a source's results are complete. By default \
                  the sources with a problem; `source` gives one. BesluitBron refreshes it every ten minutes.",
    arguments: StatusArgs,
    output: render::StatusShown,
    run: obv_status,
};

/// The tools.
const TOOLS: &[ToolSpec] = &[SEARCH_TOOL, DOCUMENT_TOOL, SOURCES_TOOL, STATUS_TOOL];

/// `obv_search`'s platform call and what it asks, or the reply that stands for it (the
/// arguments refused, or an `organization` that is no one source).
async fn search_question(
    ctx: &Context,
    call: &Call,
    args: SearchArgs,
) -> Result<(PlatformCall<SearchAnswer>, Searched), Reply> {
    let mut params = args.params().map_err(|e| Reply::from(tool_error(e)))?;
    let client = client::<ObvClient>(ctx, PLATFORM)?;
    // A name becomes its key, read against the list of sources (kept for a day), so the
    // platform is never asked for a key it will refuse.
    if let Some(asked) = params.organization.clone() {
        match ctx.fetch(Who::Caller, call, sources_call(Arc::clone(&client))).await {
            Ok((sources, served)) => {
                let resolved = names::resolve(&sources, &asked);
                let list_read = matches!(served, Served::Fetched | Served::Coalesced);
                // Not one source: an answer (not an error) naming the candidates, with
                // the structured content its schema promises, and no search made.
                if let Some((message, candidates)) = names::refusal("obv_search", &asked, &resolved, list_read) {
                    return Err(render::candidates(&searched(&params), message, &candidates)
                        .into_own_result()
                        .into());
                }
                if let names::Resolved::Key(key) = resolved {
                    params.organization = Some(key);
                }
            }
            Err(AnswerError::Elsewhere(platform)) => return Err(Reply::Elsewhere(platform)),
            // The list is out of reach: the platform judges the key itself.
            Err(_) => {}
        }
    }
    let (key, cost) = (search_key(&params), params.cost());
    let asked = searched(&params);
    let params = Arc::new(params);
    let pc = PlatformCall::new(key, cost, move || {
        let (client, params) = (Arc::clone(&client), Arc::clone(&params));
        async move {
            let (page, rate) = client.search(&params).await?;
            Ok((SearchAnswer::from(page), feedback(rate)))
        }
    })
    .written_as(args.query.clone().unwrap_or_default());
    Ok((pc, asked))
}

/// Read one document or meeting.
async fn obv_document(ctx: &Context, call: &Call, args: DocumentArgs) -> Reply {
    replied(obv_read(ctx, call, args).await)
}

/// One document or meeting read, typed (`obv_document`'s answer, and `fetch`'s).
async fn obv_read(ctx: &Context, call: &Call, args: DocumentArgs) -> ReadResult {
    // A link to the record's page, or the id as `fetch` and `search` write it, reads as
    // the id; anything else goes to the platform as given.
    let given = crate::connectors::ids::own(PLATFORM, &args.id);
    let id = ids::entity_id(given).unwrap_or_else(|| given.to_owned());
    if id.is_empty() || id.len() > 512 {
        return Err(tool_error(
            "obv_document: `id` must be an entity id from obv_search (its `entity_id`, 1 to 512 characters)",
        )
        .into());
    }
    // The id becomes one path segment; `.` and `..` cannot be one. Refused here, before
    // the call is queued, so it costs no unit of the platform's limit.
    if let Err(e) = crate::platforms::http::path_segment(PLATFORM, &id) {
        return Err(tool_error(e).into());
    }
    let length = match super::pages::text_length("obv_document", args.length) {
        Ok(length) => length,
        Err(message) => return Err(tool_error(message).into()),
    };
    let offset = args.offset.unwrap_or(0);
    let client = match client::<ObvClient>(ctx, PLATFORM) {
        Ok(c) => c,
        Err(reply) => return Err(reply),
    };
    let key = CacheKey::new(PLATFORM, DataClass::Document, "entity").param("id", id.clone());
    let id: Arc<str> = Arc::from(id);
    let pc = PlatformCall::new(key, OTHER_CALL_COST, move || {
        let (client, id) = (Arc::clone(&client), Arc::clone(&id));
        async move {
            let (entity, rate) = client.entity(&id).await?;
            Ok((DocumentAnswer::from(entity), feedback(rate)))
        }
    });
    ctx.read_for(Who::Caller, call, pc, |answer, served| {
        Ok((render::head(answer), render::document(answer, served, offset, length)))
    })
    .await
}

/// The list of sources.
async fn obv_sources(ctx: &Context, call: &Call, args: SourcesArgs) -> Reply {
    let client = match client::<ObvClient>(ctx, PLATFORM) {
        Ok(c) => c,
        Err(reply) => return reply,
    };
    let pc = sources_call(client);
    let limit = match super::pages::list_limit("obv_sources", args.limit, 50, 400) {
        Ok(limit) => limit,
        Err(message) => return tool_error(message).into(),
    };
    let filter = render::SourcesFilter {
        organization_type: args.organization_type.map(|t| t.as_str()),
        name: args.name.filter(|n| !n.trim().is_empty()),
        offset: args.offset.unwrap_or(0),
        limit,
    };
    ctx.answer_kept_asked(call, pc, filter, render::sources).await
}

/// The load status.
async fn obv_status(ctx: &Context, call: &Call, args: StatusArgs) -> Reply {
    let pc = match status_call(ctx) {
        Ok(c) => c,
        Err(reply) => return reply,
    };
    // The load status is BesluitBron's own maintenance: asked as the system session,
    // whoever asks (R-L7).
    let limit = match super::pages::list_limit("obv_status", args.limit, 25, 100) {
        Ok(limit) => limit,
        Err(message) => return tool_error(message).into(),
    };
    let filter = render::StatusFilter {
        source: args.source.filter(|s| !s.trim().is_empty()),
        state: args.state.unwrap_or_default().as_str(),
        offset: args.offset.unwrap_or(0),
        limit,
    };
    ctx.answer_for(Who::System, call, pc, |answer, served| {
        render::status(answer, served, &filter).ok_or_else(|| {
            format!(
                "OpenBesluitvorming's load status has no source `{}`; obv_sources (with `name`) lists the keys",
                crate::platforms::http::brief(filter.source.as_deref().unwrap_or_default())
            )
        })
    })
    .await
}

/// The load-status request, as the system session asks it.
fn status_call(ctx: &Context) -> Result<PlatformCall<StatusAnswer>, Reply> {
    let client = client::<ObvClient>(ctx, PLATFORM)?;
    let key = CacheKey::new(PLATFORM, DataClass::Search, "status");
    Ok(PlatformCall::new(key, OTHER_CALL_COST, move || {
        let client = Arc::clone(&client);
        async move {
            let (status, rate) = client.status().await?;
            Ok((StatusAnswer::from(status), feedback(rate)))
        }
    }))
}

/// One round of the periodic refresh: the load status, as the system session, so
/// `obv_status` answers from the buffer.
fn refresh_status(ctx: &Context) -> MaintenanceFuture<'_> {
    Box::pin(async move {
        let pc = status_call(ctx).map_err(|_| "OpenBesluitvorming has no client".to_owned())?;
        ctx.fetch(Who::System, &Call::system("obv_status", PLATFORM), pc)
            .await
            .map(|_| ())
            .map_err(|e| e.to_string())
    })
}
