//! The Rechtspraak connector (`rechtspraak`) over the open-data service: find rulings by
//! court, area of law, procedure, type and dates; read one ruling's metadata and text;
//! the value lists of courts, areas and procedures.
//!
//! The service has **no keyword search**: `rechtspraak_search` filters, and words are
//! refused with advice rather than sent (the service would ignore them and return every
//! ruling). Courts, areas and procedures are taken by name or abbreviation and resolved
//! through the value lists (kept a month) to the identifiers the service needs
//! ([`resolve`]). The service filters courts and top-level areas itself; a sub-area
//! (courts often tag only the top level) and a procedure (not a search parameter at all)
//! are checked on each result's metadata, one small call per result, kept for weeks.
//!
//! Buffer classes: value lists are reference data, searches are short-lived, a ruling's
//! text and metadata are documents (the expensive path, R-U2). Every call costs one
//! unit of the limit configured for `rechtspraak`, through its fair queue.

pub mod ids;
mod lists;
pub mod offers;
pub mod render;
pub mod resolve;

use std::sync::Arc;

use besluitbron_core::PlatformId;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::Feedback;
use rmcp::schemars;
use serde::Deserialize;

use super::ask::{AskArg, Resolver};
use super::ids::{Claim, IdForm, IdReader, Paging, Reading};
use super::tool::ToolSpec;
use super::{ConnectorSpec, Sample, http_config};
use crate::call::{AnswerError, Call, Client, Context, PlatformCall, ReadResult, Reply, Who, replied, tool_error};
use crate::config::{Config, PlatformDefaults};
use crate::platforms::http::PlatformError;
use crate::platforms::rechtspraak::{Day, Ecli, Feed, Moment, PageSize, RsClient, RsSearch, Ruling, RulingType, Sort};
use lists::{COST, areas_call, courts_call, procedures_call};
use render::{
    AreasOutput, CourtsOutput, DEFAULT_LIST_LIMIT, Hit, ListPage, MAX_LIST_LIMIT, ProceduresOutput, RulingOutput,
    SearchOutput, SearchPage,
};

const PLATFORM: PlatformId = crate::platforms::rechtspraak::PLATFORM;

/// Results per search by default, and at most.
const DEFAULT_LIMIT: u32 = 10;
const MAX_LIMIT: u32 = 100;
/// At most this many results per search when each is checked on its metadata (one call
/// per result).
const MAX_CHECKED_LIMIT: u32 = 25;
/// The largest offset accepted.
const MAX_OFFSET: u32 = 10_000_000;
/// Text characters per `rechtspraak_ruling` call by default (the default answer stays
/// within the answer budget), and at most.
const DEFAULT_LENGTH: usize = 10_000;
const MAX_LENGTH: usize = 100_000;

/// Longest court, area or procedure name accepted.
const MAX_NAME: usize = 200;
/// Longest date or moment accepted.
const MAX_DATE: usize = 32;
/// Longest list filter accepted.
const MAX_FILTER: usize = 100;
/// Longest text in the refused `query`.
const MAX_QUERY: usize = 500;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "rechtspraak",
    platform: PLATFORM,
    defaults: PlatformDefaults::new(
        PLATFORM,
        "https://data.rechtspraak.nl",
        &[crate::platforms::rechtspraak::SERVICE],
    ),
    instructions: INSTRUCTIONS,
    guide: GUIDE,
    lists: &[&COURTS_TOOL, &AREAS_TOOL, &PROCEDURES_TOOL],
    reads: Some(&READER),
    tools: TOOLS,
    open,
    maintenance: None,
    // The value lists come first: a search that names an area reads its list from the
    // buffer then, and each sample asks the platform for something of its own.
    samples: &[
        Sample::new("rechtspraak_courts", r#"{"filter": "Hoge Raad"}"#),
        Sample::new("rechtspraak_areas", r#"{"filter": "recht"}"#),
        Sample::new("rechtspraak_procedures", "{}"),
        Sample::new(
            "rechtspraak_search",
            r#"{"area": "strafrecht", "date_from": "2026-06-01", "date_to": "2026-06-30"}"#,
        ),
        // The longest ruling of the fake: its default answer is one page of many.
        Sample::new("rechtspraak_ruling", r#"{"id": "ECLI:NL:PHR:2026:400"}"#),
    ],
    offers: &offers::OFFERS,
    page: &crate::connectors::page_spec::PageSpec::Without {
        nl: "De Rechtspraak heeft geen zoekfunctie op woorden; zoek uitspraken per instantie en datum met de MCP-tool rechtspraak_search.",
        en: "Rechtspraak has no keyword search; find rulings by court and date with the MCP tool rechtspraak_search.",
    },
    status: None,
    search: crate::connectors::search::KeywordSearch::Without(
        "Rechtspraak's open data has no search by words: find rulings with rechtspraak_search by court \
         (rechtspraak_courts), area of law (rechtspraak_areas), procedure and dates, or read one by its ECLI with \
         rechtspraak_ruling",
    ),
};

/// What Rechtspraak reads.
pub const READER: IdReader = IdReader {
    // Every record it reads has a public page (`fetch`'s `url`).
    public_pages: true,
    paged: &[&RULING_TOOL],
    forms: &[
        IdForm {
            what: "an ECLI",
            example: "ECLI:NL:RVS:2015:3394",
            sample: Some("ECLI:NL:CBB:2020:1"),
        },
        IdForm {
            what: "a link to a ruling on uitspraken.rechtspraak.nl",
            example: "uitspraken.rechtspraak.nl/details?id=ECLI:NL:HR:2019:2006",
            sample: Some("uitspraken.rechtspraak.nl/details?id=ECLI:NL:GHAMS:2020:3025"),
        },
    ],
    read,
};

/// Reads an ECLI, or a link to a ruling, with `rechtspraak_ruling`.
fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let ecli = ids::ecli_of(id)?;
    let args = RulingArgs {
        id: Some(ecli.as_str().to_owned()),
        ecli: None,
        offset: paging.offset,
        length: paging.length,
    };
    Some(Ok(Reading::new(
        ecli.as_str(),
        Claim::Home,
        &RULING_TOOL,
        move |ctx, call| Box::pin(ruling_read(ctx, call, args)),
    )))
}

/// What an assistant is told about these tools in the server's instructions (short:
/// every address's instructions stay within the hosts' limit).
const INSTRUCTIONS: &str = "Rechtspraak (rechtspraak_*): court rulings. NO keyword search: rechtspraak_search filters by court, area of law, procedure and dates; rechtspraak_ruling reads one by its ECLI.";

/// What an assistant is told about these tools in depth (the guide resource).
const GUIDE: &str = "Rechtspraak (rechtspraak_* tools): Dutch court rulings (uitspraken) and advocate \
general opinions (conclusies) from the judiciary's open-data service. It has NO keyword search: find rulings with \
rechtspraak_search by court, area of law, procedure, type and dates (names such as \"Hoge Raad\", \"HR\", \
\"Rechtbank Amsterdam\", \"strafrecht\" are resolved through the value lists), read the summaries it returns, then \
read the ones you need with rechtspraak_ruling (full text: slower, kept for weeks). rechtspraak_courts, \
rechtspraak_areas and rechtspraak_procedures list the names; they rarely change and come from BesluitBron's buffer.";

fn open(config: &Config) -> Result<Client, PlatformError> {
    let client = RsClient::new(&config.platform(PLATFORM).base_url, &http_config(config, PLATFORM))?;
    Ok(Arc::new(client))
}

/// Arguments of `rechtspraak_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// A court by name or abbreviation: "Hoge Raad", "HR", "Rechtbank Amsterdam",
    /// "RBAMS" (rechtspraak_courts lists them).
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub court: Option<String>,
    /// An area of law by name, e.g. "strafrecht", "omgevingsrecht" (rechtspraak_areas
    /// lists them).
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub area: Option<String>,
    /// A kind of procedure by name: "Hoger beroep", "Kort geding", "Cassatie"
    /// (rechtspraak_procedures lists them); checked on each result's metadata.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub procedure: Option<String>,
    /// `Uitspraak` (a judgment) or `Conclusie` (an advocate general's opinion); both
    /// when left out.
    #[serde(default, rename = "type")]
    #[schemars(length(max = 20), extend("enum" = ["Uitspraak", "Conclusie", null]))]
    pub kind: Option<String>,
    /// First decision day.
    #[serde(default)]
    #[schemars(length(max = 32), extend("format" = "date"))]
    pub date_from: Option<String>,
    /// Last decision day (inclusive).
    #[serde(default)]
    #[schemars(length(max = 32), extend("format" = "date"))]
    pub date_to: Option<String>,
    /// Only rulings new or changed since this day or moment (YYYY-MM-DD or
    /// YYYY-MM-DDThh:mm:ss).
    #[serde(default)]
    #[schemars(length(max = 32))]
    pub modified_since: Option<String>,
    /// Only rulings published with a text (default true).
    #[serde(default)]
    pub with_text: Option<bool>,
    /// By the date a ruling was last modified (the only order the service offers), `newest` first by default.
    #[serde(default)]
    #[schemars(length(max = 16), extend("enum" = ["newest", "oldest", null]))]
    pub sort: Option<String>,
    /// Default 10 (at most 25 when a sub-area or procedure is checked on the metadata).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[serde(default)]
    #[schemars(range(max = 10_000_000))]
    pub offset: Option<u32>,
    /// Not supported: the service has no keyword search; words are refused, never sent.
    #[serde(default)]
    #[schemars(length(max = 500))]
    pub query: Option<String>,
}

/// Arguments of `rechtspraak_ruling`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RulingArgs {
    /// The ruling's ECLI (needed), e.g. `ECLI:NL:HR:2026:1500`: a search result's `id`.
    #[schemars(length(max = 64))]
    #[serde(default)]
    pub id: Option<String>,
    /// `id`'s earlier name, accepted for one release (the answer says so).
    #[schemars(skip)]
    #[serde(default)]
    pub ecli: Option<String>,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters (default 10000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100_000))]
    pub length: Option<usize>,
}

/// Arguments of `rechtspraak_courts`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CourtsArgs {
    /// Only courts whose name, abbreviation or kind contains this, e.g. "Amsterdam",
    /// "Gerechtshof", "HR".
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub filter: Option<String>,
    /// Also list courts that no longer exist (default false; the search still resolves them).
    #[serde(default)]
    pub include_ended: Option<bool>,
    /// Default 40.
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<usize>,
    /// From `next_offset`.
    #[serde(default)]
    #[schemars(range(max = 100_000))]
    pub offset: Option<usize>,
}

/// Arguments of `rechtspraak_areas` and `rechtspraak_procedures`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListArgs {
    /// Only entries whose name contains this, e.g. `straf`, `beroep`.
    #[serde(default)]
    #[schemars(length(max = 100))]
    pub filter: Option<String>,
    /// Default 40.
    #[serde(default)]
    #[schemars(range(min = 1, max = 200))]
    pub limit: Option<usize>,
    /// From `next_offset`.
    #[serde(default)]
    #[schemars(range(max = 100_000))]
    pub offset: Option<usize>,
}

/// The page of a value list the arguments ask for, or the message refusing them.
fn list_page<'a>(filter: Option<&'a str>, limit: Option<usize>, offset: Option<usize>) -> Result<ListPage<'a>, String> {
    bounded("filter", filter, MAX_FILTER)?;
    let limit = limit.unwrap_or(DEFAULT_LIST_LIMIT);
    if !(1..=MAX_LIST_LIMIT).contains(&limit) {
        return Err(format!("`limit` must be between 1 and {MAX_LIST_LIMIT}"));
    }
    let offset = offset.unwrap_or(0);
    if offset > 100_000 {
        return Err("`offset` must be at most 100000".to_owned());
    }
    Ok(ListPage {
        filter: filter.map(str::trim).filter(|f| !f.is_empty()),
        offset,
        limit,
    })
}

/// Refuses `value` of argument `name` over `max` characters, without repeating it.
fn bounded(name: &str, value: Option<&str>, max: usize) -> Result<(), String> {
    match value {
        Some(v) if v.chars().count() > max => Err(format!("`{name}` is longer than {max} characters; shorten it")),
        _ => Ok(()),
    }
}

/// What a search checks on each result's metadata (the service cannot filter on it).
#[derive(Clone, Debug, Default)]
struct Check {
    /// A sub-area's identifier and name.
    area: Option<(String, String)>,
    /// A procedure's identifier and name.
    procedure: Option<(String, String)>,
}

impl Check {
    fn any(&self) -> bool {
        self.area.is_some() || self.procedure.is_some()
    }

    fn passes(&self, meta: &Ruling) -> bool {
        let has = |list: &[crate::platforms::rechtspraak::Labeled], (id, name): &(String, String)| {
            list.iter()
                .any(|l| l.id.as_deref() == Some(id.as_str()) || resolve::fold(&l.name).ends_with(&resolve::fold(name)))
        };
        self.area.as_ref().is_none_or(|a| has(&meta.areas, a))
            && self.procedure.as_ref().is_none_or(|p| has(&meta.procedures, p))
    }

    fn note(&self, checked: usize, kept: usize) -> String {
        let what: Vec<String> = [
            self.area.as_ref().map(|(_, n)| format!("area {n}")),
            self.procedure.as_ref().map(|(_, n)| format!("procedure {n}")),
        ]
        .into_iter()
        .flatten()
        .collect();
        format!(
            "The service cannot filter on {}: BesluitBron checked the metadata of the {checked} results on this page \
             and kept {kept}. Courts often tag only the top-level area, so a sub-area check misses rulings tagged \
             that way; leave it out to see them all.",
            what.join(" and ")
        )
    }
}

/// The search the arguments ask for (names still to resolve), or the message refusing them.
struct Asked {
    search: RsSearch,
    kind: Option<RulingType>,
    court: Option<String>,
    area: Option<String>,
    procedure: Option<String>,
    limit: u32,
    /// The filter arguments given, by name.
    filters: Vec<&'static str>,
}

impl SearchArgs {
    fn asked(&self) -> Result<Asked, String> {
        for (name, value, max) in [
            ("court", &self.court, MAX_NAME),
            ("area", &self.area, MAX_NAME),
            ("procedure", &self.procedure, MAX_NAME),
            ("type", &self.kind, 20),
            ("date_from", &self.date_from, MAX_DATE),
            ("date_to", &self.date_to, MAX_DATE),
            ("modified_since", &self.modified_since, MAX_DATE),
            ("sort", &self.sort, 16),
            ("query", &self.query, MAX_QUERY),
        ] {
            bounded(name, value.as_deref(), max)?;
        }
        if self.query.as_deref().is_some_and(|q| !q.trim().is_empty()) {
            return Err(
                "The Rechtspraak open-data service has no keyword search, so BesluitBron did not send \
                        these words (the service would ignore them and return every ruling). Search by court, \
                        area, procedure, type and dates instead, read the summaries, then read rulings with \
                        rechtspraak_ruling."
                    .to_owned(),
            );
        }
        let present = |v: &Option<String>| v.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned);
        let kind = match present(&self.kind) {
            None => None,
            Some(k) => Some(
                RulingType::parse(&k)
                    .ok_or("`type` must be Uitspraak (a judgment) or Conclusie (an advocate general's opinion)")?,
            ),
        };
        let day = |name: &str, v: &Option<String>| -> Result<Option<Day>, String> {
            match present(v) {
                None => Ok(None),
                Some(d) => Day::parse(&d)
                    .map(Some)
                    .ok_or_else(|| format!("`{name}` must be a real day written YYYY-MM-DD")),
            }
        };
        let date_from = day("date_from", &self.date_from)?;
        let date_to = day("date_to", &self.date_to)?;
        if let (Some(f), Some(t)) = (&date_from, &date_to)
            && f.as_str() > t.as_str()
        {
            return Err("`date_from` is after `date_to`".to_owned());
        }
        let modified_since = match present(&self.modified_since) {
            None => None,
            Some(m) => Some(Moment::parse(&m).ok_or("`modified_since` must be YYYY-MM-DD or YYYY-MM-DDThh:mm:ss")?),
        };
        let sort = match present(&self.sort).as_deref() {
            None | Some("newest") => Sort::NewestFirst,
            Some("oldest") => Sort::OldestFirst,
            Some(_) => return Err("`sort` must be `newest` or `oldest` (by last modification)".to_owned()),
        };
        let limit = self.limit.unwrap_or(DEFAULT_LIMIT);
        if !(1..=MAX_LIMIT).contains(&limit) {
            return Err(format!("`limit` must be between 1 and {MAX_LIMIT}"));
        }
        let offset = self.offset.unwrap_or(0);
        if offset > MAX_OFFSET {
            return Err(format!("`offset` must be at most {MAX_OFFSET}"));
        }
        let filters = [
            ("court", present(&self.court).is_some()),
            ("area", present(&self.area).is_some()),
            ("procedure", present(&self.procedure).is_some()),
            ("type", kind.is_some()),
            ("date_from", date_from.is_some()),
            ("date_to", date_to.is_some()),
            ("modified_since", modified_since.is_some()),
            ("with_text", self.with_text.is_some()),
        ]
        .into_iter()
        .filter_map(|(name, given)| given.then_some(name))
        .collect();
        Ok(Asked {
            search: RsSearch {
                types: kind.into_iter().collect(),
                date_from,
                date_to,
                modified_since,
                with_text: self.with_text.unwrap_or(true),
                sort,
                from: offset,
                max: Some(PageSize::clamped(limit)),
                ..RsSearch::default()
            },
            kind,
            court: present(&self.court),
            area: present(&self.area),
            procedure: present(&self.procedure),
            limit,
            filters,
        })
    }
}

/// The buffer key of a search: every parameter that changes the answer.
fn search_key(search: &RsSearch) -> CacheKey {
    let mut key = CacheKey::new(PLATFORM, DataClass::Search, "search")
        .param("sort", search.sort.as_str())
        .param("from", search.from.to_string())
        .param("max", search.max.map_or(0, PageSize::get).to_string())
        .param("with_text", search.with_text.to_string());
    for t in &search.types {
        key = key.param("type", t.as_str());
    }
    for c in &search.creators {
        key = key.param("creator", c.clone());
    }
    for s in &search.subjects {
        key = key.param("subject", s.clone());
    }
    for (name, value) in [
        ("date_from", search.date_from.as_ref().map(Day::as_str)),
        ("date_to", search.date_to.as_ref().map(Day::as_str)),
        ("modified_since", search.modified_since.as_ref().map(Moment::as_str)),
        ("replaces", search.replaces.as_deref()),
    ] {
        if let Some(v) = value {
            key = key.param(name, v.to_owned());
        }
    }
    key
}

/// One ruling's content: the text and metadata (`metadata_only` false, kept as the
/// document) or the metadata alone (for checks on search results).
fn ruling_call(client: &Arc<RsClient>, ecli: Ecli, metadata_only: bool) -> PlatformCall<Ruling> {
    let operation = if metadata_only { "metadata" } else { "ruling" };
    let key = CacheKey::new(PLATFORM, DataClass::Document, operation).param("ecli", ecli.as_str().to_owned());
    let (client, ecli) = (Arc::clone(client), Arc::new(ecli));
    PlatformCall::new(key, COST, move || {
        let (client, ecli) = (Arc::clone(&client), Arc::clone(&ecli));
        async move { Ok((client.ruling(&ecli, metadata_only).await?, Feedback::default())) }
    })
}

/// The `rechtspraak_ruling` tool (its spec is what `fetch` runs for this connector's ids).
pub(crate) const RULING_TOOL: ToolSpec = crate::tool! {
    name: "rechtspraak_ruling",
    title: "Read a Dutch court ruling",
    description: "Read one Dutch court ruling by its ECLI (from rechtspraak_search): court, dates, case \
                  numbers, procedure, areas of law, related ECLIs, where it is published, the summary, and the \
                  full text in pages; `next_offset` reads on. Full text is the slow call: use the search \
                  summaries when they suffice. Kept for weeks once read.",
    arguments: RulingArgs,
    output: RulingOutput,
    run: rechtspraak_ruling,
    read: ruling_read,
};

/// The `rechtspraak_courts` tool: one of the connector's lists.
pub(crate) const COURTS_TOOL: ToolSpec = crate::tool! {
    name: "rechtspraak_courts",
    title: "Rechtspraak courts",
    description: "The courts of the Rechtspraak value list (former ones too) with their abbreviations; narrow with `filter` \
                  rather than pulling all. rechtspraak_search takes a name or abbreviation from here. Cheap: buffered.",
    arguments: CourtsArgs,
    output: CourtsOutput,
    run: rechtspraak_courts,
};

/// The `rechtspraak_areas` tool: one of the connector's lists.
pub(crate) const AREAS_TOOL: ToolSpec = crate::tool! {
    name: "rechtspraak_areas",
    title: "Rechtspraak areas of law",
    description: "The areas of law of the Rechtspraak value list (Bestuursrecht, Civiel recht, Strafrecht, … \
                  and their sub-areas); narrow with `filter`. Courts often tag only the top level, so search \
                  by a top-level area where you can. Cheap: buffered.",
    arguments: ListArgs,
    output: AreasOutput,
    run: rechtspraak_areas,
};

/// The `rechtspraak_procedures` tool: one of the connector's lists.
pub(crate) const PROCEDURES_TOOL: ToolSpec = crate::tool! {
    name: "rechtspraak_procedures",
    title: "Rechtspraak procedures",
    description: "The kinds of procedure of the Rechtspraak value list (Hoger beroep, Kort geding, Cassatie, \
                  …); rechtspraak_search takes a name from here. Answered from BesluitBron's buffer almost \
                  always.",
    arguments: ListArgs,
    output: ProceduresOutput,
    run: rechtspraak_procedures,
};

/// The tools.
const TOOLS: &[ToolSpec] = &[
    crate::tool! {
        name: "rechtspraak_search",
        title: "Search Dutch court rulings",
        description: "Find Dutch court rulings by court, area of law, procedure, type and dates. There is NO search \
                      by words here (`query` is refused, never sent): pick filters, read the summaries it returns, \
                      then read a ruling with rechtspraak_ruling. Courts, areas and procedures by name or \
                      abbreviation; an unknown name gives the closest. Newest first; repeats: buffered 10 min.",
        arguments: SearchArgs,
        output: SearchOutput,
        run: rechtspraak_search,
        asks: &[
            AskArg {
                argument: "court",
                names: "courts",
                resolver: Resolver::Listed {
                    tool: "rechtspraak_courts",
                    resolve: offers::court_asked,
                },
            },
            AskArg {
                argument: "area",
                names: "areas of law",
                resolver: Resolver::Listed {
                    tool: "rechtspraak_areas",
                    resolve: offers::area_asked,
                },
            },
            AskArg {
                argument: "procedure",
                names: "kinds of procedure",
                resolver: Resolver::Listed {
                    tool: "rechtspraak_procedures",
                    resolve: offers::procedure_asked,
                },
            },
        ],
    },
    RULING_TOOL,
    COURTS_TOOL,
    AREAS_TOOL,
    PROCEDURES_TOOL,
];

/// Search Dutch court rulings.
async fn rechtspraak_search(ctx: &Context, call: &Call, args: SearchArgs) -> Reply {
    let mut asked = match args.asked() {
        Ok(asked) => asked,
        Err(message) => return tool_error(message).into(),
    };
    let client = match ctx.clients.get::<RsClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    let mut searched = Vec::new();
    let check = match resolve_names(ctx, call, &client, &mut asked, &mut searched).await {
        Ok(check) => check,
        Err(reply) => return reply,
    };
    if check.any() && asked.limit > MAX_CHECKED_LIMIT {
        asked.search.max = Some(PageSize::clamped(MAX_CHECKED_LIMIT));
    }
    let searched = searched_words(searched, &asked);
    let s = &asked.search;
    let (offset, kind) = (s.from, asked.kind.map(RulingType::as_str));
    let filters = asked.filters;
    let key = search_key(s);
    let search = Arc::new(asked.search);
    let fetch = {
        let (client, search) = (Arc::clone(&client), Arc::clone(&search));
        move || {
            let (client, search) = (Arc::clone(&client), Arc::clone(&search));
            async move { Ok((client.search(&search).await?, Feedback::default())) }
        }
    };
    let pc = PlatformCall::new(key, COST, fetch);
    if !check.any() {
        return ctx
            .answer_for(Who::Caller, call, pc, |feed, served| {
                let hits = feed.entries.iter().map(|e| Hit::from_entry(e, kind)).collect();
                Ok(render::search(
                    &SearchPage::new(feed, searched, offset, hits, None).with_filters(filters),
                    served,
                ))
            })
            .await;
    }
    let (feed, served) = match ctx.fetch(Who::Caller, call, pc).await {
        Ok(fetched) => fetched,
        Err(e) => return e.into(),
    };
    let (hits, checked) = match checked_hits(ctx, call, &client, &feed, &check, kind).await {
        Ok(found) => found,
        Err(e) => return e.into(),
    };
    let note = check.note(checked, hits.len());
    let page = SearchPage::new(&feed, searched, offset, hits, Some(note)).with_filters(filters);
    render::search(&page, served).into_own_result().into()
}

/// The court, area and procedure `asked` names, resolved on their value lists (each
/// list asked for only when its name is given): the court and a top-level area go into
/// the search, a sub-area and a procedure become what each result's metadata is checked
/// for. Each resolved name is added to `searched`; a name that resolves to none is the
/// tool's error.
async fn resolve_names(
    ctx: &Context,
    call: &Call,
    client: &Arc<RsClient>,
    asked: &mut Asked,
    searched: &mut Vec<String>,
) -> Result<Check, Reply> {
    let mut check = Check::default();
    if let Some(name) = &asked.court {
        let (courts, _) = ctx.fetch(Who::Caller, call, courts_call(client)).await?;
        let court = resolve::court(&courts.courts, name).map_err(|message| Reply::from(tool_error(message)))?;
        asked.search.creators.push(court.identifier.clone());
        searched.push(format!("court {}", court.name));
    }
    if let Some(name) = &asked.area {
        let (areas, _) = ctx.fetch(Who::Caller, call, areas_call(client)).await?;
        let choice = resolve::area(&areas.areas, name).map_err(|message| Reply::from(tool_error(message)))?;
        asked.search.subjects.push(choice.top.identifier.clone());
        match choice.sub {
            None => searched.push(format!("area {}", choice.top.name)),
            Some(sub) => {
                searched.push(format!("area {} (within {})", sub.name, choice.top.name));
                check.area = Some((sub.identifier.clone(), sub.name.clone()));
            }
        }
    }
    if let Some(name) = &asked.procedure {
        let (procedures, _) = ctx.fetch(Who::Caller, call, procedures_call(client)).await?;
        let p = resolve::procedure(&procedures.procedures, name).map_err(|message| Reply::from(tool_error(message)))?;
        searched.push(format!("procedure {}", p.name));
        check.procedure = Some((p.identifier.clone(), p.name.clone()));
    }
    Ok(check)
}

/// What was searched, in words: the resolved names in `searched`, then the type, the
/// dates and whether only rulings with a text were asked for.
fn searched_words(mut searched: Vec<String>, asked: &Asked) -> String {
    if let Some(k) = asked.kind {
        searched.push(format!("type {}", k.as_str()));
    }
    let s = &asked.search;
    match (&s.date_from, &s.date_to) {
        (Some(f), Some(t)) if f == t => searched.push(format!("decided {}", f.as_str())),
        (Some(f), Some(t)) => searched.push(format!("decided {} to {}", f.as_str(), t.as_str())),
        (Some(f), None) => searched.push(format!("decided from {}", f.as_str())),
        (None, Some(t)) => searched.push(format!("decided until {}", t.as_str())),
        (None, None) => {}
    }
    if let Some(m) = &s.modified_since {
        searched.push(format!("modified since {}", m.as_str()));
    }
    if s.with_text {
        // "… for all rulings with a published text", not "… for with a published text".
        let text = if searched.is_empty() {
            "all rulings with a published text"
        } else {
            "with a published text"
        };
        searched.push(text.to_owned());
    }
    if searched.is_empty() {
        "all rulings".to_owned()
    } else {
        searched.join(", ")
    }
}

/// The hits of `feed` whose metadata passes `check` (each ruling's metadata its own
/// call), and how many were checked.
async fn checked_hits(
    ctx: &Context,
    call: &Call,
    client: &Arc<RsClient>,
    feed: &Feed,
    check: &Check,
    kind: Option<&str>,
) -> Result<(Vec<Hit>, usize), AnswerError> {
    let mut hits = Vec::new();
    let mut checked = 0;
    for entry in feed.entries.iter().filter(|e| e.deleted.is_none()) {
        let Some(ecli) = Ecli::parse(&entry.ecli) else {
            continue;
        };
        checked += 1;
        let (meta, _) = ctx.fetch(Who::Caller, call, ruling_call(client, ecli, true)).await?;
        if check.passes(&meta) {
            let mut hit = Hit::from_entry(entry, kind);
            hit.kind = hit.kind.or_else(|| meta.kind.clone());
            hits.push(hit);
        }
    }
    Ok((hits, checked))
}

/// Read one ruling.
async fn rechtspraak_ruling(ctx: &Context, call: &Call, args: RulingArgs) -> Reply {
    replied(ruling_read(ctx, call, args).await)
}

/// One ruling read, typed (`rechtspraak_ruling`'s answer, and `fetch`'s).
async fn ruling_read(ctx: &Context, call: &Call, args: RulingArgs) -> ReadResult {
    let used_ecli = args.id.is_none() && args.ecli.is_some();
    let Some(asked) = args.id.as_deref().or(args.ecli.as_deref()) else {
        return Err(tool_error(
            "rechtspraak_ruling: give `id`, the ruling's ECLI (e.g. ECLI:NL:HR:2026:1500, a rechtspraak_search \
             result's `id`); nothing asked of Rechtspraak",
        )
        .into());
    };
    let Some(ecli) = ids::ecli_of(crate::connectors::ids::own(PLATFORM, asked)) else {
        return Err(tool_error(format!(
            "`{}` is not an ECLI (ECLI:NL:court:year:number, e.g. ECLI:NL:HR:2026:1500)",
            resolve::echo(asked)
        ))
        .into());
    };
    let length = args.length.unwrap_or(DEFAULT_LENGTH);
    if length == 0 || length > MAX_LENGTH {
        return Err(tool_error(format!("`length` must be between 1 and {MAX_LENGTH} characters")).into());
    }
    let offset = args.offset.unwrap_or(0);
    let client = match ctx.clients.get::<RsClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return Err(e.into()),
    };
    let pc = ruling_call(&client, ecli, false);
    ctx.read_for(Who::Caller, call, pc, |r, served| {
        let mut rendered = render::ruling(r, served, offset, length);
        if used_ecli {
            rendered.text = format!(
                "Note: rechtspraak_ruling's `ecli` is now called `id` (as in every reading tool); `ecli` is \
                 accepted until the next release.\n{}",
                rendered.text
            );
        }
        Ok((render::head(r), rendered))
    })
    .await
}

/// The courts.
async fn rechtspraak_courts(ctx: &Context, call: &Call, args: CourtsArgs) -> Reply {
    let page = match list_page(args.filter.as_deref(), args.limit, args.offset) {
        Ok(page) => page,
        Err(message) => return tool_error(message).into(),
    };
    let client = match ctx.clients.get::<RsClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    let ended = args.include_ended.unwrap_or(false);
    ctx.answer_for(Who::Caller, call, courts_call(&client), |a, served| {
        Ok(render::courts(a, served, page, ended))
    })
    .await
}

/// The areas of law.
async fn rechtspraak_areas(ctx: &Context, call: &Call, args: ListArgs) -> Reply {
    let page = match list_page(args.filter.as_deref(), args.limit, args.offset) {
        Ok(page) => page,
        Err(message) => return tool_error(message).into(),
    };
    let client = match ctx.clients.get::<RsClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    ctx.answer_for(Who::Caller, call, areas_call(&client), |a, served| {
        Ok(render::areas(a, served, page))
    })
    .await
}

/// The kinds of procedure.
async fn rechtspraak_procedures(ctx: &Context, call: &Call, args: ListArgs) -> Reply {
    let page = match list_page(args.filter.as_deref(), args.limit, args.offset) {
        Ok(page) => page,
        Err(message) => return tool_error(message).into(),
    };
    let client = match ctx.clients.get::<RsClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    ctx.answer_for(Who::Caller, call, procedures_call(&client), |a, served| {
        Ok(render::procedures(a, served, page))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(json: &str) -> SearchArgs {
        serde_json::from_str(json).expect("arguments")
    }

    #[test]
    fn words_are_refused_and_nothing_is_sent() {
        let e = args(r#"{"query": "huurrecht"}"#).asked().err().unwrap();
        assert!(
            e.starts_with("The Rechtspraak open-data service has no keyword search"),
            "{e}"
        );
        let long = format!(r#"{{"court": "{}"}}"#, "x".repeat(MAX_NAME + 1));
        let e = args(&long).asked().err().unwrap();
        assert_eq!(e, "`court` is longer than 200 characters; shorten it");
    }

    #[test]
    fn arguments_become_a_search_of_honoured_parameters() {
        let a = args(
            r#"{"type": "conclusie", "date_from": "2026-01-01", "date_to": "2026-01-31", "sort": "oldest",
                "limit": 30, "offset": 990, "with_text": false, "modified_since": "2026-01-02"}"#,
        )
        .asked()
        .unwrap();
        assert_eq!(a.search.types, vec![RulingType::Conclusie]);
        assert_eq!(a.search.from, 990);
        assert_eq!(a.search.max, Some(PageSize::clamped(30)));
        assert_eq!(a.search.sort, Sort::OldestFirst);
        assert!(!a.search.with_text);
        assert!(args(r#"{}"#).asked().unwrap().search.with_text, "with_text defaults on");
        for bad in [
            r#"{"type": "vonnis"}"#,
            r#"{"date_from": "2026-02-30"}"#,
            r#"{"date_from": "2026-02-02", "date_to": "2026-02-01"}"#,
            r#"{"limit": 0}"#,
            r#"{"limit": 101}"#,
            r#"{"sort": "relevance"}"#,
        ] {
            assert!(args(bad).asked().is_err(), "{bad}");
        }
    }

    #[test]
    fn schemas_bound_every_string() {
        let schema = serde_json::to_value(schemars::schema_for!(SearchArgs)).unwrap();
        for name in [
            "court",
            "area",
            "procedure",
            "type",
            "date_from",
            "date_to",
            "modified_since",
            "sort",
            "query",
        ] {
            let p = &schema["properties"][name];
            let max = p["maxLength"].as_u64().or_else(|| p["anyOf"][0]["maxLength"].as_u64());
            assert!(max.is_some(), "{name}: {p}");
        }
        let schema = serde_json::to_value(schemars::schema_for!(RulingArgs)).unwrap();
        assert_eq!(schema["properties"]["id"]["maxLength"], 64);
    }

    #[test]
    fn schemas_name_closed_sets_ranges_and_dates() {
        // As rmcp publishes them in tools/list.
        let schema = rmcp::handler::server::tool::schema_for_type::<SearchArgs>();
        let p = &schema["properties"];
        assert_eq!(
            p["type"]["enum"],
            serde_json::json!(["Uitspraak", "Conclusie", null]),
            "{p}"
        );
        assert_eq!(p["sort"]["enum"], serde_json::json!(["newest", "oldest", null]), "{p}");
        assert_eq!(p["date_from"]["format"], "date");
        assert_eq!(p["date_to"]["format"], "date");
        assert_eq!(
            (p["limit"]["minimum"].as_u64(), p["limit"]["maximum"].as_u64()),
            (Some(1), Some(100))
        );
        let schema = rmcp::handler::server::tool::schema_for_type::<RulingArgs>();
        assert_eq!(schema["properties"]["length"]["maximum"], 100_000);
        let schema = rmcp::handler::server::tool::schema_for_type::<CourtsArgs>();
        assert_eq!(schema["properties"]["limit"]["maximum"], 200);
        // A value outside the set is refused by the tool with the allowed ones.
        let e = args(r#"{"type": "vonnis"}"#).asked().err().unwrap();
        assert!(e.contains("Uitspraak") && e.contains("Conclusie"), "{e}");
    }

    #[test]
    fn an_ecli_and_links_to_a_ruling_read_as_its_ecli() {
        // Real rulings: the Raad van State's (an id assistants were seen to give) and the Hoge Raad's Urgenda ruling.
        for (given, ecli) in [
            ("ECLI:NL:RVS:2015:3394", "ECLI:NL:RVS:2015:3394"),
            ("ecli:nl:hr:2019:2006", "ECLI:NL:HR:2019:2006"),
            (
                "https://uitspraken.rechtspraak.nl/details?id=ECLI:NL:HR:2019:2006",
                "ECLI:NL:HR:2019:2006",
            ),
            (
                "https://uitspraken.rechtspraak.nl/inziendocument?id=ECLI:NL:HR:2019:2006",
                "ECLI:NL:HR:2019:2006",
            ),
            (
                "https://data.rechtspraak.nl/uitspraken/content?id=ECLI:NL:RVS:2015:3394",
                "ECLI:NL:RVS:2015:3394",
            ),
        ] {
            let reading = read(given, Paging::default()).expect("read").expect("fits");
            assert_eq!(
                (reading.id.as_str(), reading.tool.name),
                (ecli, "rechtspraak_ruling"),
                "{given}"
            );
        }
        assert!(read("https://uitspraken.rechtspraak.nl/", Paging::default()).is_none());
        assert!(read("BWBR0018451", Paging::default()).is_none());
    }
}
