//! The local regulations connector (`cvdr`): regulations of municipalities, provinces
//! and water boards (verordeningen, beleidsregels, …) from the Centrale Voorziening
//! Decentrale Regelgeving, searched by words, organisation and date in force, and one
//! regulation read, paged by characters, with what the record says of the decision that
//! set it.
//!
//! An `organization` is resolved before anything is asked ([`orgs`]): the platform names
//! an organisation by its bare name and its kind, so `Utrecht` is two organisations and
//! the caller chooses; an unknown or ambiguous name is a tool error listing the closest.
//!
//! Two platform calls for a read, each through the one path and its limit (KOOP's SRU
//! service, `cvdr`'s own lane): the version's record (kept ten minutes when asked by a
//! work id and a date, since a new version can be published for today; a versioned id's
//! record does not change and is kept for weeks), then its XML (kept for weeks under the
//! versioned id). Searches are kept ten minutes.

pub mod ids;
pub mod offers;
pub mod orgs;

use std::fmt::Write as _;
use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Served};
use besluitbron_core::{PlatformId, Units};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::tool::ToolSpec;
use super::{ConnectorSpec, Sample, http_config};
use crate::call::{Call, Client, Context, PlatformCall, Rendered, Reply, Structure, provenance, tool_error};
use crate::config::{Config, PlatformDefaults};
use crate::connectors::pages::TextPage;
use crate::connectors::regulation::{
    self, OutlineEntry, date_arg, length_schema, limit_schema, offset_schema, read_length, regulation_page,
    text_offset_schema,
};
use crate::connectors::vocabulary::{Item, Listing, Tally};
use crate::platforms::cvdr::{CvdrClient, CvdrRecord, CvdrSearch, MAX_LIMIT, Regulation, is_cvdr_id};
use crate::platforms::http::PlatformError;

const PLATFORM: PlatformId = crate::platforms::cvdr::PLATFORM;
/// Every SRU request and every regulation's XML counts one call.
const COST: Units = Units::ONE;
/// Records `cvdr_search` shows by default.
const DEFAULT_LIMIT: usize = 10;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "cvdr",
    platform: PLATFORM,
    defaults: PlatformDefaults::new(
        PLATFORM,
        "https://zoekservice.overheid.nl/sru/Search",
        &[crate::platforms::koop::ZOEKSERVICE, crate::platforms::koop::REPOSITORY],
    ),
    instructions: INSTRUCTIONS,
    guide: GUIDE,
    reads: Some(&ids::READER),
    tools: TOOLS,
    open,
    maintenance: None,
    samples: &[
        Sample::new(
            "cvdr_search",
            r#"{"query": "parkeren", "organization": "gemeente-utrecht", "date": "2025-01-01"}"#,
        ),
        Sample::new("cvdr_read", r#"{"id": "CVDR700001", "date": "2025-01-01"}"#).asking(2),
    ],
    offers: &offers::OFFERS,
    page: &super::page_spec::PageSpec::Without {
        nl: "Lokale regelgeving (de CVDR) is er voor assistenten: cvdr_search en cvdr_read.",
        en: "Local regulations (the CVDR) are for assistants: cvdr_search and cvdr_read.",
    },
    status: None,
    search: crate::connectors::search::KeywordSearch::Tool(&SEARCH),
};

/// What an assistant is told about these tools in the server's instructions (short:
/// every address's instructions stay within the hosts' limit).
const INSTRUCTIONS: &str = "Lokale regelgeving (cvdr_*): regulations of municipalities, provinces and water boards as in force; cvdr_read reads one by its CVDR id.";

/// What an assistant is told about these tools in depth (the guide resource).
const GUIDE: &str = "Lokale regelgeving (cvdr_* tools): regulations of Dutch municipalities, provinces and \
water boards (verordeningen, beleidsregels) as in force, from lokaleregelgeving.overheid.nl's data. cvdr_search finds \
them by words, organisation and date in force (default today); cvdr_read gives one regulation's text and what its \
record says of the decision that set it.";

fn open(config: &Config) -> Result<Client, PlatformError> {
    let client = CvdrClient::new(&config.platform(PLATFORM).base_url, &http_config(config, PLATFORM))?;
    Ok(Arc::new(client))
}

/// Arguments of `cvdr_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all occur in the regulation, e.g. `parkeren`.
    #[schemars(length(max = 200))]
    #[serde(default)]
    pub query: Option<String>,
    /// Municipality, province or water board: a key (`gemeente-utrecht`) or a name.
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub organization: Option<String>,
    /// In force on this day (default today).
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date: Option<String>,
    /// Default 10.
    #[schemars(schema_with = "limit_schema")]
    #[serde(default)]
    pub limit: Option<u32>,
    #[schemars(schema_with = "offset_schema")]
    #[serde(default)]
    pub offset: Option<u32>,
}

/// Arguments of `cvdr_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// `CVDR123456_2` (that version) or `CVDR123456` (the one in force on `date`).
    #[schemars(length(max = 20))]
    pub id: String,
    /// For an id without version (default today).
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date: Option<String>,
    /// Only this article, by its number: `2`, `1.3`, `artikel 2a` (many beleidsregels
    /// have none: read them whole).
    #[schemars(length(max = 30))]
    #[serde(default)]
    pub article: Option<String>,
    /// From `next_offset`.
    #[schemars(schema_with = "text_offset_schema")]
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters (default 10000).
    #[schemars(schema_with = "length_schema")]
    #[serde(default)]
    pub length: Option<usize>,
}

/// The page for people: `https://lokaleregelgeving.overheid.nl/CVDR123456/2`.
pub fn public_url(id: &str) -> String {
    match id.split_once('_') {
        Some((work, version)) => format!("https://lokaleregelgeving.overheid.nl/{work}/{version}"),
        None => format!("https://lokaleregelgeving.overheid.nl/{id}"),
    }
}

/// The record's page, as it gives it or as it is written from the id.
fn page_url(r: &CvdrRecord) -> String {
    r.page_url
        .clone()
        .filter(|u| u.starts_with("https://lokaleregelgeving.overheid.nl/"))
        .unwrap_or_else(|| public_url(&r.identifier))
}

/// One regulation in a search's results: the shared [`Item`] (its `date` the day this
/// version came into force) and when that version ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hit {
    /// The regulation.
    #[serde(flatten)]
    pub item: Item,
    /// The day this version ends, when one is set.
    pub valid_until: Option<String>,
}

impl Hit {
    fn of(r: &CvdrRecord) -> Hit {
        Hit {
            item: Item::new(PLATFORM, "cvdr_read", r.identifier.clone(), r.title.clone())
                .dated(r.in_force_from.clone())
                .kind(r.kind())
                .of(r.organisation())
                .at(Some(page_url(r))),
            valid_until: r.in_force_until.clone(),
        }
    }
}

/// What `cvdr_search` keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchAnswer {
    /// The records of the page.
    pub records: Vec<CvdrRecord>,
    /// Matches in all.
    pub total: u64,
    /// The next page's offset.
    pub next_offset: Option<u64>,
}

/// `cvdr_search`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchShown {
    /// What was searched, in words.
    pub searched: String,
    /// The regulations.
    pub results: Vec<Hit>,
    /// Matches in all (exact) and the next page.
    #[serde(flatten)]
    pub tally: Tally,
}

/// What `cvdr_read` keeps of the version lookup: the record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionAnswer {
    /// The version's record.
    pub record: CvdrRecord,
}

/// What `cvdr_read` keeps of the text: the regulation read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextAnswer {
    /// The regulation, read whole.
    pub text: Regulation,
}

/// What the record says of the decision that set this version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Decision {
    /// The day it was set (`dcterms:issued`).
    pub date: Option<String>,
    /// The publication that made it known, e.g. `Gemeenteblad 2023, 12345`.
    pub published_in: Option<String>,
    /// The organisation's reference (often the council's RIS number).
    pub reference: Option<String>,
    /// What this version changed.
    pub concerns: Option<String>,
    /// Its legal basis.
    pub legal_basis: Vec<String>,
}

/// `cvdr_read`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadShown {
    /// The CVDR id with its version.
    pub id: String,
    /// The regulation's title.
    pub title: String,
    /// The day this version came into force.
    pub date: Option<String>,
    /// The regulation's kind.
    pub kind: Option<String>,
    /// The organisation that set it.
    pub organization: Option<String>,
    /// Its page on lokaleregelgeving.overheid.nl.
    pub url: String,
    /// `cvdr`.
    pub platform: String,
    /// The day this version ends (absent: no end set).
    pub valid_until: Option<String>,
    /// The decision that set it, as the record gives it.
    pub decision: Decision,
    /// Articles in the version (0 for one written in chapters or parts without them).
    pub articles: usize,
    /// The article read, when one was asked.
    pub article: Option<String>,
    /// Chapters, articles and parts (aanhef, ondertekening, annexes), in order (the
    /// first 60).
    pub outline: Vec<OutlineEntry>,
    /// Entries of the whole outline.
    pub outline_entries: usize,
    /// Where the page of text is (the text itself is the answer's text content).
    #[serde(flatten)]
    pub page: TextPage,
}

/// Its part in `search` on `/mcp`: local regulations in force today holding the words
/// (the shared question's dates are publication dates, which a regulation's version is
/// not, so they are not passed on).
const SEARCH: crate::connectors::search::SearchSpec = crate::connectors::search::SearchSpec {
    tool: &SEARCH_TOOL,
    list: crate::listing!(SearchArgs, cvdr_listed),
    arguments: |asked| {
        let mut args = serde_json::Map::new();
        args.insert("query".into(), asked.query.clone().into());
        args.insert("limit".into(), asked.limit.into());
        args
    },
};

/// The `cvdr_read` tool (its spec is what `fetch` runs for this connector's ids).
pub(crate) const READ_TOOL: ToolSpec = crate::tool! {
    name: "cvdr_read",
    title: "Read a local regulation",
    description: "One local regulation by CVDR id: its text in pages (text content; `next_offset` reads on), \
                  organisation, dates in force, the decision that set it, link. Two calls, then kept for weeks.",
    arguments: ReadArgs,
    output: ReadShown,
    run: cvdr_read,
};

/// The `cvdr_search` tool (its spec is what `search` runs for this connector).
pub(crate) const SEARCH_TOOL: ToolSpec = crate::tool! {
    name: "cvdr_search",
    title: "Search local regulations",
    description: "Local regulations (verordeningen, beleidsregels) of Dutch municipalities, provinces and water \
                  boards in force on `date`, by words and organisation. One call, kept ten minutes.",
    arguments: SearchArgs,
    output: SearchShown,
    run: cvdr_search,
};

/// The tools.
const TOOLS: &[ToolSpec] = &[SEARCH_TOOL, READ_TOOL];

/// Search local regulations.
async fn cvdr_search(ctx: &Context, call: &Call, args: SearchArgs) -> Reply {
    match search_question(ctx, args) {
        Ok((pc, searched, offset)) => {
            ctx.answer(call, pc, |a, served| render_search(a, served, &searched, offset))
                .await
        }
        Err(reply) => reply,
    }
}

/// `cvdr_search`'s question answered as a listing (its part in `search` on `/mcp`).
async fn cvdr_listed(ctx: &Context, call: &Call, args: SearchArgs) -> Result<Listing, Reply> {
    let (pc, _, _) = search_question(ctx, args)?;
    let (answer, _) = ctx.fetch(crate::call::Who::Caller, call, pc).await?;
    Ok(Listing {
        results: answer.records.iter().map(|r| Hit::of(r).item).collect(),
        tally: tally(&answer),
    })
}

/// `cvdr_search`'s platform call, what it asks in words and its offset, or the refusal
/// that stands for it.
fn search_question(ctx: &Context, args: SearchArgs) -> Result<(PlatformCall<SearchAnswer>, String, u64), Reply> {
    let limit = super::pages::list_limit("cvdr_search", args.limit, DEFAULT_LIMIT, MAX_LIMIT as usize)
        .map_err(|message| Reply::from(tool_error(message)))?;
    let date = date_arg("cvdr_search", args.date.as_deref(), ctx.clock.wall())
        .map_err(|message| Reply::from(tool_error(message)))?;
    let organisation = match args.organization.as_deref().map(str::trim).filter(|o| !o.is_empty()) {
        None => None,
        Some(asked) => {
            let resolved = orgs::resolve(asked);
            if let Some(message) = orgs::refusal("cvdr_search", asked, &resolved) {
                return Err(tool_error(message).into());
            }
            match resolved {
                orgs::Resolved::One(org) => Some(org),
                _ => None,
            }
        }
    };
    let offset = u64::from(args.offset.unwrap_or(0));
    let search = CvdrSearch {
        words: args.query.clone(),
        organisation: organisation.as_ref().map(|o| o.platform.clone()),
        in_force_on: date,
    };
    let cql = match search.cql() {
        Ok(cql) => cql,
        Err(PlatformError::BadRequest { code, .. }) if code == "nothing_to_search" => {
            return Err(tool_error(
                "cvdr_search: give `query` (words) or `organization` (a municipality, province or water board)",
            )
            .into());
        }
        Err(e) => return Err(tool_error(e).into()),
    };
    let client = ctx.clients.get::<CvdrClient>(PLATFORM)?;
    let key = CacheKey::new(PLATFORM, DataClass::Search, "search")
        .param("cql", cql)
        .param("offset", offset.to_string())
        .param("limit", limit.to_string());
    let searched = describe(&search, organisation.as_ref());
    let search = Arc::new(search);
    let pc = PlatformCall::new(key, COST, move || {
        let (client, search) = (Arc::clone(&client), Arc::clone(&search));
        async move {
            let page = client.search(&search, offset, limit as u32).await?;
            let answer = SearchAnswer {
                records: page.records,
                total: page.total,
                next_offset: page.next_offset,
            };
            Ok((answer, Feedback::default()))
        }
    });
    Ok((pc, searched, offset))
}

/// A search in words.
fn describe(s: &CvdrSearch, org: Option<&orgs::Org>) -> String {
    let mut parts = Vec::new();
    if let Some(w) = s.words.as_deref().filter(|w| !w.trim().is_empty()) {
        parts.push(format!("words `{}`", w.trim()));
    }
    if let Some(o) = org {
        parts.push(format!("{} (`{}`)", o.label, o.key));
    }
    parts.push(format!("in force on {}", s.in_force_on));
    parts.join(", ")
}

/// How many regulations match and where the next page starts.
fn tally(answer: &SearchAnswer) -> Tally {
    Tally {
        total: Some(answer.total),
        total_is_exact: true,
        next_offset: answer.next_offset,
    }
}

/// `cvdr_search`'s result.
pub fn render_search(answer: &SearchAnswer, served: Served, searched: &str, offset: u64) -> Rendered {
    let hits: Vec<Hit> = answer.records.iter().map(Hit::of).collect();
    let mut text = if hits.is_empty() && offset == 0 {
        format!(
            "The CVDR has no local regulation for {searched}{}. To widen: use fewer or other words (each must occur \
             in the regulation), drop `organization`, or try another `date` (a regulation not yet or no longer in \
             force is not found on this one).",
            provenance(served)
        )
    } else if hits.is_empty() {
        format!(
            "No more local regulations for {searched}{}: {} match, this offset is past them.",
            provenance(served),
            answer.total
        )
    } else {
        format!(
            "Local regulations {}–{} of {} for {searched}{}.",
            offset + 1,
            offset + hits.len() as u64,
            answer.total,
            provenance(served)
        )
    };
    for Hit { item: h, valid_until } in &hits {
        let _ = write!(
            text,
            "\n- {} {} ({}{}; in force from {}{}) — {}",
            h.id,
            h.title,
            h.kind.as_deref().unwrap_or("kind unknown"),
            h.organization.as_deref().map(|o| format!(", {o}")).unwrap_or_default(),
            h.date.as_deref().unwrap_or("?"),
            valid_until
                .as_deref()
                .map(|u| format!(" until {u}"))
                .unwrap_or_default(),
            h.url.as_deref().unwrap_or("")
        );
    }
    if let Some(next) = answer.next_offset {
        let _ = write!(text, "\nMore: call cvdr_search again with `offset` {next}.");
    }
    let shown = SearchShown {
        searched: searched.to_owned(),
        results: hits,
        tally: tally(answer),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    }
}

/// Read one local regulation.
async fn cvdr_read(ctx: &Context, call: &Call, args: ReadArgs) -> Reply {
    // The id as `fetch` and `search` write it, a link to its page, or `#` and an article
    // (the `article` argument, where given, decides).
    let (id, article_in_id) = ids::asked(crate::connectors::ids::own(PLATFORM, &args.id))
        .unwrap_or_else(|| (args.id.trim().to_ascii_uppercase(), None));
    let args = ReadArgs {
        article: args.article.or(article_in_id),
        ..args
    };
    if !is_cvdr_id(&id) {
        return tool_error(format!(
            "cvdr_read: `{}` is not a CVDR id (CVDR and digits, with `_` and a version or without, such as \
             CVDR123456_2; cvdr_search finds them)",
            crate::platforms::http::brief(&args.id)
        ))
        .into();
    }
    let versioned = id.contains('_');
    let date = match date_arg("cvdr_read", args.date.as_deref(), ctx.clock.wall()) {
        Ok(date) => date,
        Err(message) => return tool_error(message).into(),
    };
    let length = match read_length("cvdr_read", args.length) {
        Ok(length) => length,
        Err(message) => return tool_error(message).into(),
    };
    let article = args
        .article
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_owned);
    let offset = args.offset.unwrap_or(0);
    let client = match ctx.clients.get::<CvdrClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    // 1. The version's record: a versioned id's never changes; a work id's depends on the day.
    let key = if versioned {
        CacheKey::new(PLATFORM, DataClass::Document, "version").param("id", id.clone())
    } else {
        CacheKey::new(PLATFORM, DataClass::Search, "in_force")
            .param("id", id.clone())
            .param("date", date.clone())
    };
    let version = {
        let (client, id, date) = (
            Arc::clone(&client),
            Arc::<str>::from(id.as_str()),
            Arc::<str>::from(date.as_str()),
        );
        PlatformCall::new(key, COST, move || {
            let (client, id, date) = (Arc::clone(&client), Arc::clone(&id), Arc::clone(&date));
            async move {
                let record = client.version(&id, &date).await?;
                Ok((VersionAnswer { record }, Feedback::default()))
            }
        })
    };
    let (version, _) = match ctx.fetch(crate::call::Who::Caller, call, version).await {
        Ok(v) => v,
        Err(e) => return e.into(),
    };
    let record = version.record.clone();
    let Some(location) = record.text_url.clone() else {
        return tool_error(format!(
            "The CVDR lists {} without the location of its text; open {} instead",
            record.identifier,
            page_url(&record)
        ))
        .into();
    };
    // 2. Its text, kept under the versioned id.
    let key = CacheKey::new(PLATFORM, DataClass::Document, "text").param("id", record.identifier.clone());
    let text = {
        let location: Arc<str> = Arc::from(location.as_str());
        PlatformCall::new(key, COST, move || {
            let (client, location) = (Arc::clone(&client), Arc::clone(&location));
            async move {
                let text = client.text(&location).await?;
                Ok((TextAnswer { text }, Feedback::default()))
            }
        })
        .at(crate::platforms::koop::REPOSITORY)
    };
    let asked = Asked {
        record,
        date: (!versioned).then_some(date),
        article,
        offset,
        length,
    };
    ctx.answer_for(crate::call::Who::Caller, call, text, |answer, served| {
        render_read(answer, served, &asked)
    })
    .await
}

/// What `cvdr_read` was asked, with the version found.
struct Asked {
    record: CvdrRecord,
    /// The day asked, for a work id.
    date: Option<String>,
    article: Option<String>,
    offset: usize,
    length: usize,
}

/// `cvdr_read`'s result: a summary, then the page of text (the article asked, or the
/// whole regulation); a missing article is the tool's error naming the ones there are.
fn render_read(answer: &TextAnswer, served: Served, asked: &Asked) -> Result<Rendered, String> {
    let t = &answer.text;
    let r = &asked.record;
    let title = t
        .citation_title
        .clone()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| r.title.clone());
    let about = format!("{title} ({})", r.identifier);
    let page = regulation_page(t, asked.article.as_deref(), asked.offset, asked.length, &about)?;
    let at = page.at;
    let articles = t.articles().count();
    let url = page_url(r);
    let organisation = r.organisation();
    let until = r
        .in_force_until
        .as_deref()
        .map(|u| format!(" until {u}"))
        .unwrap_or_else(|| " (no end set)".to_owned());
    let mut text = format!(
        "{title} ({}, {}{}){}: the version in force from {}{until}{}. {}. {url}",
        r.identifier,
        r.kind().as_deref().unwrap_or("kind unknown"),
        organisation.as_deref().map(|o| format!(", {o}")).unwrap_or_default(),
        asked
            .date
            .as_deref()
            .map(|d| format!(" as in force on {d}"))
            .unwrap_or_default(),
        r.in_force_from.as_deref().unwrap_or("?"),
        provenance(served),
        if articles == 0 {
            "No articles: it is written in chapters or parts".to_owned()
        } else {
            format!("{articles} articles")
        },
    );
    let decision = Decision {
        date: r.issued.clone(),
        published_in: r.published_in.clone(),
        reference: r.reference.clone(),
        concerns: r.concerns.clone(),
        legal_basis: r.legal_basis.clone(),
    };
    let mut set = Vec::new();
    if let Some(d) = &decision.date {
        set.push(format!("set on {d}"));
    }
    if let Some(p) = &decision.published_in {
        set.push(format!("published in {p}"));
    }
    if let Some(k) = &decision.reference {
        set.push(format!("reference {k}"));
    }
    if let Some(c) = &decision.concerns {
        set.push(format!("this version: {c}"));
    }
    if !set.is_empty() {
        let _ = write!(text, "\nThe decision: {}.", set.join("; "));
    }
    match &page.article {
        Some(n) => {
            let _ = write!(text, "\nArticle {n}, {}.", at.note());
        }
        None => {
            let _ = write!(text, "\nThe text, {}.", at.note());
        }
    }
    if at.text_length == 0 && at.total_length > 0 {
        let _ = write!(text, " This offset is past the end of the text.");
    }
    text.push_str("\n\n");
    text.push_str(&page.text);
    let (outline, outline_entries) = regulation::outline(t);
    let shown = ReadShown {
        id: r.identifier.clone(),
        title,
        date: r.in_force_from.clone(),
        kind: r.kind(),
        organization: organisation,
        url,
        platform: PLATFORM.as_str().to_owned(),
        valid_until: r.in_force_until.clone(),
        decision,
        articles,
        article: page.article,
        outline,
        outline_entries,
        page: at,
    };
    Ok(Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_page_is_written_from_the_versioned_id() {
        assert_eq!(
            public_url("CVDR625849_3"),
            "https://lokaleregelgeving.overheid.nl/CVDR625849/3"
        );
        assert_eq!(
            public_url("CVDR625849"),
            "https://lokaleregelgeving.overheid.nl/CVDR625849"
        );
        let foreign = CvdrRecord {
            identifier: "CVDR1_2".into(),
            page_url: Some("https://example.org/x".into()),
            ..CvdrRecord::default()
        };
        assert_eq!(page_url(&foreign), "https://lokaleregelgeving.overheid.nl/CVDR1/2");
    }
}
