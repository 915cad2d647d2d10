//! The Basiswettenbestand connector (`bwb`): national legislation — laws, AMvB's,
//! ministerial regulations — searched by title words, kind and ministry as in force on a
//! date, and one regulation read as in force on a date (default today), whole or one
//! article, paged by characters.
//!
//! Two platform calls for a read, each through the one path and its limit (KOOP's SRU
//! service, `bwb`'s own lane): the version in force on the date (the SRU record: its
//! validity and the location of its toestand; kept ten minutes, since a new version can
//! be published for today), then the toestand itself (kept for weeks under the
//! regulation's id and the version's start date, so a newer version is read anew).
//! Searches are kept ten minutes.

pub mod ids;
pub mod offers;

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
use crate::platforms::bwb::{BwbClient, BwbRecord, BwbSearch, MAX_LIMIT, Regulation, is_bwb_id};
use crate::platforms::http::PlatformError;

const PLATFORM: PlatformId = crate::platforms::bwb::PLATFORM;
/// Every SRU request and every toestand counts one call.
const COST: Units = Units::ONE;
/// Records `bwb_search` shows by default.
const DEFAULT_LIMIT: usize = 10;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "bwb",
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
        Sample::new("bwb_search", r#"{"query": "vuurwerk", "date": "2025-01-01"}"#),
        Sample::new(
            "bwb_read",
            r#"{"id": "BWBR0047001", "date": "2025-01-01", "article": "2"}"#,
        )
        .asking(2),
    ],
    offers: &offers::OFFERS,
    page: &super::page_spec::PageSpec::Without {
        nl: "Wetgeving (het Basiswettenbestand) is er voor assistenten: bwb_search en bwb_read.",
        en: "National legislation (the Basiswettenbestand) is for assistants: bwb_search and bwb_read.",
    },
    status: None,
    search: crate::connectors::search::KeywordSearch::Tool(&SEARCH),
};

/// What an assistant is told about these tools in the server's instructions (short:
/// every address's instructions stay within the hosts' limit).
const INSTRUCTIONS: &str = "Basiswettenbestand (bwb_*): national legislation as in force on a date; bwb_read reads a regulation by its BWB id (BWBR0018451), whole or one `article`.";

/// What an assistant is told about these tools in depth (the guide resource).
const GUIDE: &str = "Basiswettenbestand (bwb_* tools): Dutch national legislation as in force — laws (wet), \
AMvB's, ministerial regulations — from wetten.overheid.nl's data. bwb_search finds regulations by words of their \
title, kind and ministry as in force on a date (default today); bwb_read gives one regulation as in force on a date \
(default today): its citation title, validity, outline and text, or one article by its number (`2`, `1:3`).";

fn open(config: &Config) -> Result<Client, PlatformError> {
    let client = BwbClient::new(&config.platform(PLATFORM).base_url, &http_config(config, PLATFORM))?;
    Ok(Arc::new(client))
}

/// Arguments of `bwb_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all occur in the regulation's title, e.g. `vuurwerk`.
    #[schemars(length(max = 200))]
    #[serde(default)]
    pub query: Option<String>,
    /// The kind, as the Basiswettenbestand writes it: `wet`, `AMvB`,
    /// `ministeriele-regeling`, `rijkswet`, `KB`, ….
    #[schemars(length(max = 40))]
    #[serde(default)]
    pub kind: Option<String>,
    /// The ministry responsible (part of its name), e.g. `Justitie en Veiligheid`.
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
    /// From `next_offset`.
    #[schemars(schema_with = "offset_schema")]
    #[serde(default)]
    pub offset: Option<u32>,
}

/// Arguments of `bwb_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The regulation's BWB id, e.g. `BWBR0005537` (from bwb_search).
    #[schemars(length(max = 20))]
    pub id: String,
    /// As in force on this day (default today).
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date: Option<String>,
    /// Only this article, by its number: `2`, `1:3`, `artikel 2a`.
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

/// The page for people: `https://wetten.overheid.nl/{id}/{date}`.
fn public_url(id: &str, date: Option<&str>) -> String {
    match date {
        Some(d) => format!("https://wetten.overheid.nl/{id}/{d}"),
        None => format!("https://wetten.overheid.nl/{id}"),
    }
}

/// One regulation in a search's results: the shared [`Item`] (its `date` the day the
/// version in force began, its `organization` the ministry) and when that version ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hit {
    /// The regulation.
    #[serde(flatten)]
    pub item: Item,
    /// The day the version in force ends (`9999-12-31`: no end set).
    pub valid_until: Option<String>,
}

impl Hit {
    fn of(r: &BwbRecord) -> Hit {
        Hit {
            item: Item::new(
                crate::platforms::bwb::PLATFORM,
                "bwb_read",
                r.identifier.clone(),
                r.title.clone(),
            )
            .dated(r.valid_from.clone())
            .kind(r.kind.clone())
            .of(r.authority.clone())
            .at(Some(public_url(&r.identifier, r.valid_from.as_deref()))),
            valid_until: r.valid_until.clone(),
        }
    }
}

/// What `bwb_search` keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchAnswer {
    /// The records of the page.
    pub records: Vec<BwbRecord>,
    /// Matches in all.
    pub total: u64,
    /// The next page's offset.
    pub next_offset: Option<u64>,
}

/// `bwb_search`'s structured content.
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

/// What `bwb_read` keeps of the version lookup: the record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionAnswer {
    /// The version's record.
    pub record: BwbRecord,
}

/// What `bwb_read` keeps of the text: the regulation read.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextAnswer {
    /// The toestand, read whole.
    pub toestand: Regulation,
}

/// `bwb_read`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct ReadShown {
    /// The BWB id.
    pub id: String,
    /// The citation title (or the record's title).
    pub title: String,
    /// The regulation's kind.
    pub kind: Option<String>,
    /// The ministry responsible.
    pub organization: Option<String>,
    /// The day asked.
    pub asked_date: String,
    /// The version read is in force from this day.
    pub valid_from: Option<String>,
    /// … until this day (`9999-12-31`: no end set).
    pub valid_until: Option<String>,
    /// Its page on wetten.overheid.nl, as in force then.
    pub url: String,
    /// `bwb`.
    pub platform: String,
    /// The article read, when one was asked.
    pub article: Option<String>,
    /// Articles in the version.
    pub articles: usize,
    /// Divisions, articles and parts (aanhef, ondertekening, annexes), in order (the
    /// first 60).
    pub outline: Vec<OutlineEntry>,
    /// Entries of the whole outline (more than shown when the law is long: read on by
    /// `article`, or page the text).
    pub outline_entries: usize,
    /// Where the page of text is (the text itself is the answer's text content).
    #[serde(flatten)]
    pub page: TextPage,
}

/// Its part in `search` on `/mcp`: laws and regulations by words in their title, as in
/// force today (the shared question's dates are publication dates, which a law's version
/// is not, so they are not passed on).
const SEARCH: crate::connectors::search::SearchSpec = crate::connectors::search::SearchSpec {
    tool: &SEARCH_TOOL,
    list: crate::listing!(SearchArgs, bwb_listed),
    arguments: |asked| {
        let mut args = serde_json::Map::new();
        args.insert("query".into(), asked.query.clone().into());
        args.insert("limit".into(), asked.limit.into());
        args
    },
};

/// The `bwb_read` tool (its spec is what `fetch` runs for this connector's ids).
pub(crate) const READ_TOOL: ToolSpec = crate::tool! {
    name: "bwb_read",
    title: "Read a regulation as in force",
    description: "One Dutch national regulation as in force on `date`, by its BWB id: citation title, kind, \
                  ministry, the version's validity, its link on wetten.overheid.nl, its outline, and its text in pages, or only the `article` asked; `next_offset` reads on. Kept for weeks (a newer version is read anew).",
    arguments: ReadArgs,
    output: ReadShown,
    run: bwb_read,
};

/// The `bwb_search` tool (its spec is what `search` runs for this connector).
pub(crate) const SEARCH_TOOL: ToolSpec = crate::tool! {
    name: "bwb_search",
    title: "Search national legislation",
    description: "Search Dutch national legislation (the Basiswettenbestand: laws, AMvB's, ministerial \
                  regulations) by words in the title, kind and ministry, as in force on `date`. Each result gives \
                  the BWB id for bwb_read and the validity of the version in force. Kept ten minutes.",
    arguments: SearchArgs,
    output: SearchShown,
    run: bwb_search,
};

/// The tools.
const TOOLS: &[ToolSpec] = &[SEARCH_TOOL, READ_TOOL];

/// Search national legislation.
async fn bwb_search(ctx: &Context, call: &Call, args: SearchArgs) -> Reply {
    match search_question(ctx, args) {
        Ok((pc, searched, offset)) => {
            ctx.answer(call, pc, |a, served| render_search(a, served, &searched, offset))
                .await
        }
        Err(reply) => reply,
    }
}

/// `bwb_search`'s question answered as a listing (its part in `search` on `/mcp`).
async fn bwb_listed(ctx: &Context, call: &Call, args: SearchArgs) -> Result<Listing, Reply> {
    let (pc, _, _) = search_question(ctx, args)?;
    let (answer, _) = ctx.fetch(crate::call::Who::Caller, call, pc).await?;
    Ok(Listing {
        results: answer.records.iter().map(|r| Hit::of(r).item).collect(),
        tally: tally(&answer),
    })
}

/// `bwb_search`'s platform call, what it asks in words and its offset, or the refusal
/// that stands for it.
fn search_question(ctx: &Context, args: SearchArgs) -> Result<(PlatformCall<SearchAnswer>, String, u64), Reply> {
    let limit = super::pages::list_limit("bwb_search", args.limit, DEFAULT_LIMIT, MAX_LIMIT as usize)
        .map_err(|message| Reply::from(tool_error(message)))?;
    let date = date_arg("bwb_search", args.date.as_deref(), ctx.clock.wall())
        .map_err(|message| Reply::from(tool_error(message)))?;
    let offset = u64::from(args.offset.unwrap_or(0));
    let search = BwbSearch {
        words: args.query.clone(),
        kind: args.kind.clone(),
        authority: args.organization.clone(),
        in_force_on: date,
    };
    let cql = match search.cql() {
        Ok(cql) => cql,
        Err(PlatformError::BadRequest { code, .. }) if code == "nothing_to_search" => {
            return Err(tool_error(
                "bwb_search: give `query` (words of the title), `kind` or `organization` (a ministry)",
            )
            .into());
        }
        Err(e) => return Err(tool_error(e).into()),
    };
    let client = ctx.clients.get::<BwbClient>(PLATFORM)?;
    let key = CacheKey::new(PLATFORM, DataClass::Search, "search")
        .param("cql", cql)
        .param("offset", offset.to_string())
        .param("limit", limit.to_string());
    let searched = describe(&search);
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
fn describe(s: &BwbSearch) -> String {
    let mut parts = Vec::new();
    if let Some(w) = s.words.as_deref().filter(|w| !w.trim().is_empty()) {
        parts.push(format!("title words `{}`", w.trim()));
    }
    if let Some(k) = s.kind.as_deref().filter(|w| !w.trim().is_empty()) {
        parts.push(format!("kind `{}`", k.trim()));
    }
    if let Some(a) = s.authority.as_deref().filter(|w| !w.trim().is_empty()) {
        parts.push(format!("ministry `{}`", a.trim()));
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

/// `bwb_search`'s result.
pub fn render_search(answer: &SearchAnswer, served: Served, searched: &str, offset: u64) -> Rendered {
    let hits: Vec<Hit> = answer.records.iter().map(Hit::of).collect();
    let mut text = if hits.is_empty() && offset == 0 {
        format!(
            "The Basiswettenbestand has no regulation for {searched}{}. To widen: use fewer or other title words \
             (each must occur in the title), drop or correct `kind` (e.g. `wet`, `AMvB`, \
             `ministeriele-regeling`) or `organization`, or try another date (a regulation not yet or no longer in \
             force is not found on this one).",
            provenance(served)
        )
    } else if hits.is_empty() {
        format!(
            "No more regulations for {searched}{}: {} match, this offset is past them.",
            provenance(served),
            answer.total
        )
    } else {
        format!(
            "Regulations {}–{} of {} for {searched}{}.",
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
                .filter(|u| *u != "9999-12-31")
                .map(|u| format!(" until {u}"))
                .unwrap_or_default(),
            h.url.as_deref().unwrap_or("")
        );
    }
    if let Some(next) = answer.next_offset {
        let _ = write!(text, "\nMore: call bwb_search again with `offset` {next}.");
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

/// Read one regulation as in force on a date.
async fn bwb_read(ctx: &Context, call: &Call, args: ReadArgs) -> Reply {
    // The id as `fetch` and `search` write it, a link to wetten.overheid.nl, or with
    // `@day` and `#article` (the `date` and `article` arguments, where given, decide).
    let (id, args) = match ids::asked(crate::connectors::ids::own(PLATFORM, &args.id)) {
        Some(asked) => (
            asked.id,
            ReadArgs {
                date: args.date.or(asked.date),
                article: args.article.or(asked.article),
                ..args
            },
        ),
        None => (args.id.trim().to_ascii_uppercase(), args),
    };
    if !is_bwb_id(&id) {
        return tool_error(format!(
            "bwb_read: `{}` is not a BWB id (BWBR and seven digits, such as BWBR0005537; bwb_search finds them)",
            crate::platforms::http::brief(&args.id)
        ))
        .into();
    }
    let date = match date_arg("bwb_read", args.date.as_deref(), ctx.clock.wall()) {
        Ok(date) => date,
        Err(message) => return tool_error(message).into(),
    };
    let length = match read_length("bwb_read", args.length) {
        Ok(length) => length,
        Err(message) => return tool_error(message).into(),
    };
    let offset = args.offset.unwrap_or(0);
    let article = args
        .article
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_owned);
    let client = match ctx.clients.get::<BwbClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    // 1. The version in force on the date.
    let key = CacheKey::new(PLATFORM, DataClass::Search, "in_force")
        .param("id", id.clone())
        .param("date", date.clone());
    let version = {
        let (client, id, date) = (
            Arc::clone(&client),
            Arc::<str>::from(id.as_str()),
            Arc::<str>::from(date.as_str()),
        );
        PlatformCall::new(key, COST, move || {
            let (client, id, date) = (Arc::clone(&client), Arc::clone(&id), Arc::clone(&date));
            async move {
                let record = client.in_force(&id, &date).await?;
                Ok((VersionAnswer { record }, Feedback::default()))
            }
        })
    };
    let (version, _) = match ctx.fetch(crate::call::Who::Caller, call, version).await {
        Ok(v) => v,
        Err(e) => return e.into(),
    };
    let record = version.record.clone();
    let Some(location) = record.toestand_url.clone() else {
        return tool_error(format!(
            "The Basiswettenbestand lists the version of {id} in force on {date} without the location of its text; \
             open {} instead",
            public_url(&id, record.valid_from.as_deref())
        ))
        .into();
    };
    // 2. Its text, kept under the version's start.
    let key = CacheKey::new(PLATFORM, DataClass::Document, "toestand")
        .param("id", id.clone())
        .param("valid_from", record.valid_from.clone().unwrap_or_default());
    let text = {
        let location: Arc<str> = Arc::from(location.as_str());
        PlatformCall::new(key, COST, move || {
            let (client, location) = (Arc::clone(&client), Arc::clone(&location));
            async move {
                let toestand = client.toestand(&location).await?;
                Ok((TextAnswer { toestand }, Feedback::default()))
            }
        })
        .at(crate::platforms::koop::REPOSITORY)
    };
    let asked = Asked {
        record,
        date,
        article,
        offset,
        length,
    };
    ctx.answer_for(crate::call::Who::Caller, call, text, |answer, served| {
        render_read(answer, served, &asked)
    })
    .await
}

/// What `bwb_read` was asked, with the version found.
struct Asked {
    record: BwbRecord,
    date: String,
    article: Option<String>,
    offset: usize,
    length: usize,
}

/// `bwb_read`'s result: a summary, then the page of text (the article asked, or the
/// whole regulation); a missing article is the tool's error naming the ones there are.
fn render_read(answer: &TextAnswer, served: Served, asked: &Asked) -> Result<Rendered, String> {
    let t = &answer.toestand;
    let r = &asked.record;
    let title = t.citation_title.clone().unwrap_or_else(|| r.title.clone());
    let about = format!("{title} ({}) as in force on {}", r.identifier, asked.date);
    let page = regulation_page(t, asked.article.as_deref(), asked.offset, asked.length, &about)?;
    let url = public_url(&r.identifier, r.valid_from.as_deref());
    let until = r
        .valid_until
        .as_deref()
        .filter(|u| *u != "9999-12-31")
        .map(|u| format!(" until {u}"))
        .unwrap_or_else(|| " (no end set)".to_owned());
    let articles = t.articles().count();
    let mut text = format!(
        "{title} ({}, {}{}) as in force on {}: the version valid from {}{until}{}. {articles} articles. {}",
        r.identifier,
        r.kind.as_deref().unwrap_or("kind unknown"),
        r.authority.as_deref().map(|a| format!(", {a}")).unwrap_or_default(),
        asked.date,
        r.valid_from.as_deref().unwrap_or("?"),
        provenance(served),
        url
    );
    match &page.article {
        Some(n) => {
            let _ = write!(text, "\nArticle {n}, {}.", page.at.note());
        }
        None => {
            let _ = write!(text, "\nThe text, {}.", page.at.note());
        }
    }
    if page.at.text_length == 0 && page.at.total_length > 0 {
        let _ = write!(text, " This offset is past the end of the text.");
    }
    text.push_str("\n\n");
    text.push_str(&page.text);
    let (outline, outline_entries) = regulation::outline(t);
    let shown = ReadShown {
        id: r.identifier.clone(),
        title,
        kind: r.kind.clone(),
        organization: r.authority.clone(),
        asked_date: asked.date.clone(),
        valid_from: r.valid_from.clone(),
        valid_until: r.valid_until.clone(),
        url,
        platform: "bwb".to_owned(),
        article: page.article,
        articles,
        outline,
        outline_entries,
        page: page.at,
    };
    Ok(Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::bwb::read_toestand;

    #[test]
    fn an_article_missing_from_the_version_is_said_with_the_ones_there_are() {
        let toestand = read_toestand(
            br#"<toestand bwb-id="BWBR0047001"><wetgeving><citeertitel>Wet consumentenvuurwerk</citeertitel>
            <wet-besluit><wettekst><artikel><kop><label>Artikel</label><nr>1</nr></kop><al>Tekst.</al></artikel>
            </wettekst></wet-besluit></wetgeving></toestand>"#,
        )
        .unwrap();
        let asked = Asked {
            record: BwbRecord {
                identifier: "BWBR0047001".into(),
                ..BwbRecord::default()
            },
            date: "2025-01-01".into(),
            article: Some("7".into()),
            offset: 0,
            length: 100,
        };
        let answer = TextAnswer { toestand };
        let e = render_read(&answer, Served::Fetched, &asked).unwrap_err();
        assert!(e.contains("has no article `7`; its articles are 1"), "{e}");
        let asked = Asked {
            article: Some("artikel 1".into()),
            ..asked
        };
        let r = render_read(&answer, Served::Fetched, &asked).unwrap();
        assert!(r.text.ends_with("\n\nArtikel 1\nTekst."), "{}", r.text);
    }
}
