//! The Officiële Bekendmakingen connector (`ob`): search every official publication
//! over SRU 2.0 and read one publication's text.
//!
//! Two upstream services, each with its budget: searches and records go to KOOP's SRU
//! service ([`crate::platforms::koop::SRU`]), text fetches to the publication host
//! ([`crate::platforms::koop::PUBLICATIONS`], default 10 per 30 s); both are fair queues.
//! Every call costs one unit. Buffer classes: searches are short-lived (and a page with a
//! platform warning is kept a minute at most), records and text are kept for weeks.
//! An overloaded service ([`PlatformError::Busy`]) is fed back to the queue as a
//! back-off and asked once more, then reported with a retry time, never as zero results.
//! Rendering lives in [`render`], as pure functions of the kept answers.

pub mod ids;
pub mod offers;
pub mod page;
pub mod render;

use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Keep, Served};
use besluitbron_core::{PlatformId, Units};
use rmcp::schemars;
use serde::Deserialize;

use super::ids::{Claim, IdForm, IdReader, Paging, Reading};
use super::search::{Asked as Shared, Asking, Keyword, KeywordTool};
use super::tool::ToolSpec;
use super::vocabulary::Listing;
use super::{ConnectorSpec, Sample, http_config};
use crate::calendar;
use crate::call::{Call, Client, Context, PlatformCall, Read, ReadResult, Rendered, Reply, Who, replied, tool_error};
use crate::config::{Config, PlatformDefaults};
use crate::platforms::http::PlatformError;
use crate::platforms::ob::{
    Chamber, DEFAULT_LIMIT, DateField, MAX_LIMIT, ObClient, ObSearch, Publication, SortOrder, Term, check_start, cql,
};
use crate::text::{Caps, TextError, read_xml};
pub use ids::{MAX_ID_CHARS, is_identifier};
use render::{Asked, Hit, RecordAnswer, SearchAnswer, TextAnswer, TextSource};

const PLATFORM: PlatformId = crate::platforms::ob::PLATFORM;

/// Every SRU request and every rendition fetch counts one call.
const COST: Units = Units::ONE;

/// A search page with a platform warning is kept at most this long (a clause was dropped:
/// the answer is not the one asked for).
const WARNED_KEEP_MS: u64 = 60_000;

/// Longest `query`, in characters.
pub const MAX_QUERY_CHARS: usize = 500;
/// Most terms in a `query`.
pub const MAX_TERMS: usize = 20;
/// Longest filter value, in characters.
pub const MAX_FILTER_CHARS: usize = 200;
/// Text characters per `ob_document` call by default (the default answer stays within
/// the answer budget), and at most.
const DEFAULT_LENGTH: usize = 10_000;
const MAX_LENGTH: usize = 100_000;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "ob",
    platform: PLATFORM,
    defaults: PlatformDefaults::new(
        PLATFORM,
        "https://repository.overheid.nl/sru",
        &[crate::platforms::koop::SRU, crate::platforms::koop::PUBLICATIONS],
    ),
    instructions: INSTRUCTIONS,
    guide: GUIDE,
    lists: &[],
    reads: Some(&READER),
    tools: TOOLS,
    open,
    maintenance: None,
    samples: &[
        Sample::new("ob_search", r#"{"query": "omgevingsvisie", "limit": 5}"#),
        Sample::new("ob_document", r#"{"id": "gmb-2026-10000"}"#).asking(2),
    ],
    offers: &offers::OFFERS,
    page: &page::PAGE,
    status: None,
    search: crate::connectors::search::KeywordSearch::Tool(&Keyword::<ObSearchTool>::SEARCH),
};

/// What an assistant is told about these tools in the server's instructions (short:
/// every address's instructions stay within the hosts' limit).
const INSTRUCTIONS: &str = "Officiële Bekendmakingen (ob_*): every official publication (Staatsblad, Staatscourant, Gemeenteblad, Kamerstukken…); ob_document reads one (stb-2018-84, kst-36200-VII-5).";

/// What an assistant is told about these tools in depth (the guide resource).
const GUIDE: &str = "Officiële Bekendmakingen (ob_* tools): every official publication of Dutch government \
— Gemeenteblad, Provinciaal blad, Waterschapsblad, Staatscourant, Staatsblad, Tractatenblad, Kamerstukken, \
Handelingen and Kamervragen — the publication that made a decision law. ob_search finds publications by words and \
filters (journal, organisation, document type, dossier, chamber, dates); ob_document reads one publication's full text, the \
expensive path, kept for weeks once read.";

fn open(config: &Config) -> Result<Client, PlatformError> {
    let pool = crate::text::ExtractPool::shared(config.text.workers, crate::text::Caps::configured(&config.text));
    let client =
        ObClient::new(&config.platform(PLATFORM).base_url, &http_config(config, PLATFORM))?.with_text_pool(pool);
    Ok(Arc::new(client))
}

/// The journals by name, as `publication` takes them (the platform's own spelling).
const PUBLICATIONS: [&str; 13] = [
    "Gemeenteblad",
    "Provinciaal blad",
    "Waterschapsblad",
    "Blad gemeenschappelijke regeling",
    "Staatscourant",
    "Staatsblad",
    "Tractatenblad",
    "Kamerstuk",
    "Handelingen",
    "Kamervragen (Aanhangsel)",
    "Kamervragen zonder antwoord",
    "Niet-dossierstuk",
    "Agenda",
];

/// `value` of argument `name` as one of `choices` (case-insensitive), or the message
/// listing them.
fn one_of<T: Copy>(name: &str, value: &str, choices: &[(&str, T)]) -> Result<T, String> {
    choices
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(value.trim()))
        .map(|(_, t)| *t)
        .ok_or_else(|| {
            let names: Vec<String> = choices.iter().map(|(n, _)| format!("`{n}`")).collect();
            format!("`{name}` must be one of {}", names.join(", "))
        })
}

/// Arguments of `ob_search`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all occur (full text and metadata); a "phrase" stays together; at
    /// most 20 terms. Empty: every publication the filters allow.
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub query: Option<String>,
    /// Only this journal or series.
    #[serde(default)]
    #[schemars(length(max = 40), extend("enum" = ["Gemeenteblad", "Provinciaal blad", "Waterschapsblad",
        "Blad gemeenschappelijke regeling", "Staatscourant", "Staatsblad", "Tractatenblad", "Kamerstuk",
        "Handelingen", "Kamervragen (Aanhangsel)", "Kamervragen zonder antwoord", "Niet-dossierstuk", "Agenda",
        null]))]
    pub publication: Option<String>,
    /// Only organisations of this type, e.g. `gemeente`, `provincie`, `waterschap`,
    /// `ministerie`.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub organization_type: Option<String>,
    /// Only publications whose organisation contains this (case- and accent-insensitive
    /// containment: `Utrecht` also finds `Provincie Utrecht`).
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub organization: Option<String>,
    /// Only this kind of document, e.g. `Verordening`, `Besluit`, `Regeling`, `Motie`.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub document_type: Option<String>,
    /// Only this parliamentary dossier number, e.g. `36600`.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub dossier: Option<String>,
    /// Only parliamentary items (Kamerstukken, Handelingen, Kamervragen, agendas) of
    /// this chamber; `verenigde-vergadering` is the joint session.
    #[serde(default)]
    #[schemars(length(max = 24), extend("enum" = ["tweede-kamer", "eerste-kamer", "verenigde-vergadering", null]))]
    pub chamber: Option<String>,
    /// First day.
    #[serde(default)]
    #[schemars(length(max = 10), extend("format" = "date"))]
    pub date_from: Option<String>,
    /// Last day (inclusive).
    #[serde(default)]
    #[schemars(length(max = 10), extend("format" = "date"))]
    pub date_to: Option<String>,
    /// Which date the range applies to: `published` (default) or `document` (the
    /// document's own date).
    #[serde(default)]
    #[schemars(length(max = 16), extend("enum" = ["published", "document", null]))]
    pub date_field: Option<String>,
    /// `newest` publication first (default) or `relevance`.
    #[serde(default)]
    #[schemars(length(max = 16), extend("enum" = ["newest", "relevance", null]))]
    pub sort: Option<String>,
    /// Default 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[serde(default)]
    #[schemars(range(max = 9998))]
    pub offset: Option<u64>,
}

/// Arguments of `ob_document`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentArgs {
    /// The publication's identifier from ob_search, e.g. `gmb-2026-104512`,
    /// `stcrt-2026-10001`, `kst-26100-1`.
    #[schemars(length(max = 80))]
    pub id: String,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters (default 10,000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100_000))]
    pub length: Option<usize>,
}

/// A string argument, trimmed, refused when longer than `max` characters (without
/// echoing it); an empty one is absent.
fn bounded(name: &str, value: &Option<String>, max: usize) -> Result<Option<String>, String> {
    match value.as_deref().map(str::trim) {
        None | Some("") => Ok(None),
        Some(v) if v.chars().count() > max => Err(format!("`{name}` is longer than {max} characters")),
        Some(v) => Ok(Some(v.to_owned())),
    }
}

impl SearchArgs {
    /// The filter arguments given, by name.
    pub fn filters(&self) -> Vec<String> {
        let given = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.trim().is_empty());
        [
            ("query", given(&self.query)),
            ("publication", given(&self.publication)),
            ("organization_type", given(&self.organization_type)),
            ("organization", given(&self.organization)),
            ("document_type", given(&self.document_type)),
            ("dossier", given(&self.dossier)),
            ("chamber", given(&self.chamber)),
            ("date_from", given(&self.date_from)),
            ("date_to", given(&self.date_to)),
            (
                "date_field",
                self.date_field
                    .as_deref()
                    .is_some_and(|f| f.trim().eq_ignore_ascii_case("document")),
            ),
        ]
        .into_iter()
        .filter(|(_, given)| *given)
        .map(|(name, _)| name.to_owned())
        .collect()
    }

    /// The typed search, with its offset and limit, or the message for the assistant.
    pub fn search(&self) -> Result<(ObSearch, u64, u32), String> {
        let query = bounded("query", &self.query, MAX_QUERY_CHARS)?;
        let terms = query.as_deref().map(cql::terms).unwrap_or_default();
        if terms.len() > MAX_TERMS {
            return Err(format!("`query` holds {} terms; use at most {MAX_TERMS}", terms.len()));
        }
        let mut dates = [None, None];
        for (i, (name, value)) in [("date_from", &self.date_from), ("date_to", &self.date_to)]
            .into_iter()
            .enumerate()
        {
            if let Some(d) = bounded(name, value, 10)? {
                if !calendar::is_day(&d) {
                    return Err(format!("`{name}` must be a real day written YYYY-MM-DD"));
                }
                dates[i] = Some(d);
            }
        }
        if let [Some(from), Some(to)] = &dates
            && from > to
        {
            return Err("`date_from` is after `date_to`".to_owned());
        }
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(format!("`limit` must be between 1 and {MAX_LIMIT}"));
        }
        let offset = self.offset.unwrap_or(0);
        check_start(offset).map_err(|e| match e {
            PlatformError::BadRequest { message, .. } => message,
            other => other.to_string(),
        })?;
        let [date_from, date_to] = dates;
        let publication = match bounded("publication", &self.publication, 40)? {
            None => None,
            Some(p) => {
                let choices: Vec<(&str, Publication)> = PUBLICATIONS.iter().copied().zip(Publication::ALL).collect();
                Some(one_of("publication", &p, &choices)?)
            }
        };
        let chamber = match bounded("chamber", &self.chamber, 24)? {
            None => None,
            Some(c) => {
                let choices: Vec<(&str, Chamber)> = Chamber::ALL.iter().map(|c| (c.as_str(), *c)).collect();
                Some(one_of("chamber", &c, &choices)?)
            }
        };
        if let (Some(c), Some(p)) = (chamber, publication)
            && !Chamber::applies_to(p)
        {
            return Err(format!(
                "`chamber` {} narrows parliamentary publications (Kamerstuk, Handelingen, Kamervragen, \
                 Niet-dossierstuk, Agenda), not {}: drop `chamber` or choose one of those",
                c.as_str(),
                p.as_str()
            ));
        }
        let date_field = match bounded("date_field", &self.date_field, 16)? {
            None => DateField::Published,
            Some(f) => one_of(
                "date_field",
                &f,
                &[("published", DateField::Published), ("document", DateField::Document)],
            )?,
        };
        let sort = match bounded("sort", &self.sort, 16)? {
            None => SortOrder::Newest,
            Some(f) => one_of(
                "sort",
                &f,
                &[("newest", SortOrder::Newest), ("relevance", SortOrder::Relevance)],
            )?,
        };
        // R-D5, level 1: the terms are ANDed (PLATFORMS.md §10), so newest first their
        // order and repeats do not change the answer; by relevance they are kept as asked.
        let terms = match sort {
            SortOrder::Newest => cql::and_set(terms),
            SortOrder::Relevance => terms,
        };
        let search = ObSearch {
            terms,
            publication,
            organization_type: bounded("organization_type", &self.organization_type, MAX_FILTER_CHARS)?,
            organization: bounded("organization", &self.organization, MAX_FILTER_CHARS)?,
            document_type: bounded("document_type", &self.document_type, MAX_FILTER_CHARS)?,
            dossier: bounded("dossier", &self.dossier, MAX_FILTER_CHARS)?,
            chamber,
            date_from,
            date_to,
            date_field,
            sort,
        };
        Ok((search, offset, limit))
    }
}

/// What was searched, in words, for the answer's first line.
fn describe(search: &ObSearch) -> String {
    let mut parts = Vec::new();
    if !search.terms.is_empty() {
        let terms: Vec<String> = search
            .terms
            .iter()
            .map(|t| match t {
                Term::Word(w) => w.clone(),
                Term::Phrase(p) => format!("\"{p}\""),
            })
            .collect();
        parts.push(format!("the words `{}`", terms.join(" ")));
    } else {
        parts.push("all publications".to_owned());
    }
    if let Some(p) = search.publication {
        parts.push(format!("in {}", p.as_str()));
    }
    if let Some(c) = search.chamber {
        parts.push(format!("of the {}", c.creator()));
    }
    for (label, value) in [
        ("organisation type", &search.organization_type),
        ("organisation", &search.organization),
        ("document type", &search.document_type),
        ("dossier", &search.dossier),
    ] {
        if let Some(v) = value {
            parts.push(format!("{label} `{v}`"));
        }
    }
    let field = match search.date_field {
        DateField::Published => "published",
        DateField::Document => "dated",
    };
    match (&search.date_from, &search.date_to) {
        (Some(f), Some(t)) => parts.push(format!("{field} {f} to {t}")),
        (Some(f), None) => parts.push(format!("{field} from {f}")),
        (None, Some(t)) => parts.push(format!("{field} until {t}")),
        (None, None) => {}
    }
    parts.join(", ")
}

/// The `ob_document` tool (its spec is what `fetch` runs for this connector's ids).
pub(crate) const DOCUMENT_TOOL: ToolSpec = crate::tool! {
    name: "ob_document",
    title: "Read an official publication",
    description: "Read one publication of Officiële Bekendmakingen by its identifier from ob_search: its metadata \
                  and full text in pages (from the XML rendition, else the PDF); `next_offset` reads on. The publication host keeps a stricter limit than search: read only what \
                  the answer needs. Kept for weeks once read.",
    arguments: DocumentArgs,
    output: render::DocumentOutput,
    run: ob_document,
    read: ob_read,
};

/// The `ob_search` tool (its spec is what `search` runs for this connector).
pub(crate) const SEARCH_TOOL: ToolSpec = Keyword::<ObSearchTool>::TOOL;

/// `ob_search`, declared once: the tool and its part in `search` on `/mcp` (every
/// official publication, full text).
pub(crate) struct ObSearchTool;

impl KeywordTool for ObSearchTool {
    const NAME: &'static str = "ob_search";
    const TITLE: &'static str = "Search Officiële Bekendmakingen";
    const DESCRIPTION: &'static str = "Search Officiële Bekendmakingen: every official publication (Gemeenteblad … \
        Staatsblad, Kamerstukken, Handelingen), full text, newest first. Only the first 9,999 hits of a search are \
        reachable: narrow with filters rather than page deep. A council's own meeting records are at obv_search; \
        ob_document reads a hit's text. Repeats: buffered 10 min.";
    type Args = SearchArgs;
    type Output = render::SearchShown;
    type Found = Asking<SearchAnswer, Asked>;

    async fn find(ctx: &Context, call: &Call, args: SearchArgs) -> Result<Self::Found, Reply> {
        let (pc, asked) = search_question(ctx, &args)?;
        let kept = ctx.fetch_kept(call, pc).await?;
        Ok(Asking { kept, asked })
    }

    fn render(found: &Self::Found) -> Rendered {
        render::search(&found.kept.answer, found.kept.served, &found.asked)
    }

    fn listing(found: &Self::Found) -> Listing {
        render::listing(&found.kept.answer)
    }

    fn hits(found: &Self::Found) -> crate::connectors::page_spec::Hits {
        page::search_hits(&found.kept.answer)
    }

    fn arguments(asked: &Shared) -> serde_json::Map<String, serde_json::Value> {
        let mut args = serde_json::Map::new();
        args.insert("query".into(), asked.query.clone().into());
        args.insert("limit".into(), asked.limit.into());
        crate::connectors::search::dates(asked, &mut args);
        args
    }
}

/// The tools.
const TOOLS: &[ToolSpec] = &[SEARCH_TOOL, DOCUMENT_TOOL];

/// `ob_search`'s platform call and what it asks in its asker's words, or the refusal
/// that stands for it.
fn search_question(ctx: &Context, args: &SearchArgs) -> Result<(PlatformCall<SearchAnswer>, Asked), Reply> {
    let (search, offset, limit) = match args.search() {
        Ok(s) => s,
        Err(message) => return Err(tool_error(message).into()),
    };
    let query = match search.cql() {
        Ok(q) => q,
        Err(e) => return Err(tool_error(e).into()),
    };
    let client = ctx.clients.get::<ObClient>(PLATFORM)?;
    let key = CacheKey::new(PLATFORM, DataClass::Search, "search")
        .param("cql", query)
        .param("offset", offset.to_string())
        .param("limit", limit.to_string());
    // What this asker asked, in its own words: the kept page is shared by every wording
    // of the same canonical search (`written_as`), so it holds none of them.
    let asked = Asked {
        searched: describe(&search),
        filters: args.filters(),
    };
    let search = Arc::new(search);
    let pc = PlatformCall::new(key, COST, move || {
        let (client, search) = (Arc::clone(&client), Arc::clone(&search));
        async move {
            let page = client.search(&search, offset, limit).await?;
            let keep = if page.warnings.is_empty() {
                Keep::Normal
            } else {
                Keep::Briefly { ttl_ms: WARNED_KEEP_MS }
            };
            Ok((
                SearchAnswer::new(offset, page),
                Feedback {
                    keep,
                    ..Feedback::default()
                },
            ))
        }
    })
    .written_as(args.query.clone().unwrap_or_default());
    Ok((pc, asked))
}

/// Read one publication.
async fn ob_document(ctx: &Context, call: &Call, args: DocumentArgs) -> Reply {
    replied(ob_read(ctx, call, args).await)
}

/// One publication read, typed (`ob_document`'s answer, and `fetch`'s).
async fn ob_read(ctx: &Context, call: &Call, args: DocumentArgs) -> ReadResult {
    // The id as `fetch` and `search` write it, or a link to the publication.
    let given = crate::connectors::ids::own(PLATFORM, &args.id);
    let id = ids::identifier(given).unwrap_or_else(|| given.to_owned());
    if !is_identifier(&id) {
        return Err(tool_error(format!(
            "`id` must be a publication identifier from ob_search, such as gmb-2026-104512 or kst-26100-1 \
             (letters, digits and hyphens, at most {MAX_ID_CHARS} characters)"
        ))
        .into());
    }
    let length = args.length.unwrap_or(DEFAULT_LENGTH);
    if length == 0 || length > MAX_LENGTH {
        return Err(tool_error(format!("`length` must be between 1 and {MAX_LENGTH} characters")).into());
    }
    let offset = args.offset.unwrap_or(0);
    let client = match ctx.clients.get::<ObClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return Err(e.into()),
    };
    let key = CacheKey::new(PLATFORM, DataClass::Document, "record").param("id", id.clone());
    let shared_id: Arc<str> = Arc::from(id.as_str());
    let record_call = {
        let (client, id) = (Arc::clone(&client), Arc::clone(&shared_id));
        PlatformCall::new(key, COST, move || {
            let (client, id) = (Arc::clone(&client), Arc::clone(&id));
            async move { Ok((fetch_record(&client, &id).await?, Feedback::default())) }
        })
    };
    let (record, record_served) = match ctx.fetch(Who::Caller, call, record_call).await {
        Ok(fetched) => fetched,
        Err(e) => return Err(e.into()),
    };
    // The text: the XML rendition, else (a PDF-only publication) the PDF through the
    // document-text extractor; on the text lane, kept as a document.
    let (kind, url, from_pdf) = match (record.xml_url.clone(), record.pdf_item_url.clone()) {
        (Some(url), _) => ("text", url, false),
        (None, Some(url)) => ("pdf-text", url, true),
        (None, None) => {
            let rendered = render::document(&record, TextSource::None, record_served, offset, length);
            return Ok(Read::own(PLATFORM, render::head(&record), rendered));
        }
    };
    let key = CacheKey::new(PLATFORM, DataClass::Document, kind).param("id", id.clone());
    let text_call = PlatformCall::new(key, COST, move || {
        let (client, url, id) = (Arc::clone(&client), url.clone(), Arc::clone(&shared_id));
        async move { Ok((read_text(&client, &url, &id, from_pdf).await?, Feedback::default())) }
    })
    .at(crate::platforms::koop::PUBLICATIONS);
    ctx.read_for(Who::Caller, call, text_call, |text, served| {
        // From the buffer only when both parts were.
        let served = if served == Served::Cached {
            record_served
        } else {
            served
        };
        let rendered = render::document(&record, TextSource::Read(text), served, offset, length);
        Ok((render::head(&record), rendered))
    })
    .await
}

/// A publication's record, with the renditions BesluitBron reads its text from.
async fn fetch_record(client: &ObClient, id: &str) -> Result<RecordAnswer, PlatformError> {
    let record = client.record(id).await?;
    let xml_url = record.rendition("xml").map(str::to_owned);
    if let Some(url) = &xml_url {
        // Refused now, not when the text is asked for: a record pointing
        // elsewhere is not kept, and nothing is fetched from there.
        // The refusal's detail names the configured host: not repeated.
        client.rendition_url(url).map_err(|_| PlatformError::Garbage {
            platform: PLATFORM,
            detail: format!("the record of `{id}` puts its XML rendition off the platform's own host"),
        })?;
    }
    // A PDF-only publication's text is its PDF, read when it is on the
    // platform's own host (an address elsewhere is only shown).
    let pdf_item_url = match &xml_url {
        Some(_) => None,
        None => record
            .rendition("pdf")
            .filter(|url| client.rendition_url(url).is_ok())
            .map(str::to_owned),
    };
    Ok(RecordAnswer {
        publication: Hit::from(&record),
        xml_url,
        pdf_item_url,
    })
}

/// A publication's text: its XML rendition, or (`from_pdf`) its PDF through the
/// document-text extractor.
async fn read_text(client: &ObClient, url: &str, id: &str, from_pdf: bool) -> Result<TextAnswer, PlatformError> {
    let what = if from_pdf {
        format!("PDF of `{id}`")
    } else {
        format!("XML rendition of `{id}`")
    };
    // The body is already within the platform's cap (the HTTP layer's).
    let body = client.rendition(url, &what).await?.body;
    let read = if from_pdf {
        client.text_pool().extract(Arc::from(body)).await
    } else {
        read_xml(&body, &Caps::default())
    };
    match read {
        Ok(text) => Ok(TextAnswer::Text {
            text: text.text,
            from_pdf,
        }),
        Err(TextError::EmptyRendition) if !from_pdf => Ok(TextAnswer::EmptyTemplate),
        Err(TextError::NoTextLayer { pages }) if from_pdf => Ok(TextAnswer::NoTextLayer { pages }),
        Err(e) => Err(PlatformError::Garbage {
            platform: PLATFORM,
            detail: format!("the {what}: {e}"),
        }),
    }
}

/// What Officiële Bekendmakingen reads.
pub const READER: IdReader = IdReader {
    // Every record it reads has a public page (`fetch`'s `url`).
    public_pages: true,
    paged: &[&DOCUMENT_TOOL],
    forms: &[
        IdForm {
            what: "an Officiële Bekendmakingen id (Staatsblad, Kamerstuk, Gemeenteblad, …)",
            example: "kst-36200-VII-5",
            sample: Some("stb-2018-84"),
        },
        IdForm {
            what: "a link to zoek.officielebekendmakingen.nl",
            example: "zoek.officielebekendmakingen.nl/stb-2018-84.html",
            sample: None,
        },
    ],
    read,
};

fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let id = ids::identifier(id)?;
    let args = DocumentArgs {
        id: id.clone(),
        offset: paging.offset,
        length: paging.length,
    };
    Some(Ok(Reading::new(id, Claim::Home, &DOCUMENT_TOOL, move |ctx, call| {
        Box::pin(ob_read(ctx, call, args))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_one_safe_token() {
        for ok in [
            "gmb-2026-104512",
            "stcrt-2026-10001",
            "kst-26100-1",
            "h-tk-20242025-42-4",
            "kst-37020-IX",
        ] {
            assert!(is_identifier(ok), "{ok}");
        }
        for bad in [
            ".",
            "..",
            "gmb..x-1",
            "x",
            "gmb 2026",
            "gmb/2026-1",
            "1-2",
            "gmb-2026-1\"",
            &"a-".repeat(41),
        ] {
            assert!(!is_identifier(bad), "{bad}");
        }
    }

    #[test]
    fn arguments_are_bounded_and_checked_before_any_call() {
        let long = SearchArgs {
            query: Some("x".repeat(MAX_QUERY_CHARS + 1)),
            ..SearchArgs::default()
        };
        let message = long.search().unwrap_err();
        assert_eq!(message, "`query` is longer than 500 characters");
        let many = SearchArgs {
            query: Some((0..21).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ")),
            ..SearchArgs::default()
        };
        assert!(many.search().unwrap_err().contains("21 terms"));
        let impossible = SearchArgs {
            date_to: Some("2026-02-29".into()),
            ..SearchArgs::default()
        };
        assert!(impossible.search().unwrap_err().contains("real day"));
        let deep = SearchArgs {
            offset: Some(9_999),
            ..SearchArgs::default()
        };
        assert!(deep.search().unwrap_err().contains("narrow the search"));
        let (search, offset, limit) = SearchArgs {
            query: Some("parkeren \"betaald parkeren\"".into()),
            publication: Some("gemeenteblad".into()),
            ..SearchArgs::default()
        }
        .search()
        .unwrap();
        assert_eq!((offset, limit), (0, DEFAULT_LIMIT));
        assert_eq!(
            describe(&search),
            "the words `parkeren \"betaald parkeren\"`, in Gemeenteblad"
        );
        let schema = serde_json::to_value(schemars::schema_for!(SearchArgs)).unwrap();
        assert_eq!(schema["properties"]["query"]["maxLength"], 500, "{schema}");
        let schema = rmcp::handler::server::tool::schema_for_type::<SearchArgs>();
        let p = &schema["properties"];
        assert_eq!(
            p["publication"]["enum"].as_array().map(Vec::len),
            Some(14),
            "13 journals and null"
        );
        assert_eq!(p["date_from"]["format"], "date");
        assert_eq!(p["limit"]["maximum"], 100);
        let wrong = SearchArgs {
            sort: Some("oldest".into()),
            ..SearchArgs::default()
        };
        assert_eq!(
            wrong.search().unwrap_err(),
            "`sort` must be one of `newest`, `relevance`"
        );
        let journal = SearchArgs {
            publication: Some("Gemeentebald".into()),
            ..SearchArgs::default()
        };
        assert!(journal.search().unwrap_err().contains("`Provinciaal blad`"));
        assert_eq!(
            p["chamber"]["enum"],
            serde_json::json!(["tweede-kamer", "eerste-kamer", "verenigde-vergadering", null])
        );
        let (senate, _, _) = SearchArgs {
            chamber: Some("Eerste-Kamer".into()),
            publication: Some("Handelingen".into()),
            ..SearchArgs::default()
        }
        .search()
        .unwrap();
        assert_eq!(senate.chamber, Some(Chamber::EersteKamer));
        assert_eq!(
            describe(&senate),
            "all publications, in Handelingen, of the Eerste Kamer der Staten-Generaal"
        );
        let unknown = SearchArgs {
            chamber: Some("senaat".into()),
            ..SearchArgs::default()
        };
        assert_eq!(
            unknown.search().unwrap_err(),
            "`chamber` must be one of `tweede-kamer`, `eerste-kamer`, `verenigde-vergadering`"
        );
        let municipal = SearchArgs {
            chamber: Some("tweede-kamer".into()),
            publication: Some("Gemeenteblad".into()),
            ..SearchArgs::default()
        };
        assert!(municipal.search().unwrap_err().contains("not Gemeenteblad"));
    }
}
