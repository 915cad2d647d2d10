//! The EUR-Lex connector (`eurlex`): EU law through CELLAR, the Publications Office's
//! repository behind EUR-Lex. `eurlex_search` finds acts by words of their title (in
//! Dutch or English), CELEX number, kind, dates and force; `eurlex_read` reads one act in
//! Dutch (default) or English — its metadata (dates, force, legal basis, amended by), its
//! outline, and its text whole and paged, one article or its annexes — through the
//! regulation family's outline and paging (`connectors::regulation`), the text read from
//! CELLAR's XHTML or Formex items (`platforms::eurlex::text`).
//!
//! Calls: a search is one SPARQL query (kept ten minutes); a reading is one SPARQL query
//! for the act (kept ten minutes) and one call for its text items (kept for weeks, one
//! unit per item). Every query is bounded by `Platforms.eurlex.QueryTimeoutSecs` and a
//! row cap; a query that runs out of time is an error saying so.

pub mod ids;
pub mod render;
pub mod transposition;

use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::Units;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::Feedback;
use rmcp::schemars;
use serde::Deserialize;
use serde_json::{Map, Value};

use super::ids::{Claim, IdForm, IdReader, Paging, Reading, own};
use super::pages::Page;
use super::regulation::read_length;
use super::search::{self, Asking, Keyword, KeywordSearch, KeywordTool};
use super::tool::{self, ToolSpec};
use super::vocabulary::Listing;
use super::{ConnectorSpec, Offers, Sample, http_config};
use crate::call::{Call, Client, Context, PlatformCall, ReadResult, Reply, Who, replied, tool_error};
use crate::config::{Config, PlatformDefaults};
use crate::connectors::regulation::read::TextAnswer;
use crate::platforms::eurlex::sparql::{self, Force, Kind, Language, MAX_ROWS};
use crate::platforms::eurlex::{
    Act, BASE_URL, DEFAULT_QUERY_TIMEOUT_SECS, EurlexClient, PLATFORM, SERVICE, SearchPage,
};
use crate::platforms::http::{PlatformError, brief};

/// Acts a search shows by default, and at most.
const DEFAULT_LIMIT: u32 = 10;
const MAX_LIMIT: u32 = 50;
/// The furthest offset a search reaches.
const MAX_OFFSET: u32 = 10_000;
/// Most title words a search takes.
const MAX_WORDS: usize = 8;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "eurlex",
    platform: PLATFORM,
    defaults: PlatformDefaults {
        query_timeout_secs: Some(DEFAULT_QUERY_TIMEOUT_SECS),
        ..PlatformDefaults::new(PLATFORM, BASE_URL, &[SERVICE])
    },
    instructions: "EUR-Lex (eurlex_*): EU law from CELLAR. eurlex_search finds acts by title words, CELEX, kind, \
                   dates; eurlex_read reads one in Dutch (or `language` en), whole or one `article`; \
                   eurlex_transposition lists a directive's Dutch measures with ids fetch reads.",
    guide: GUIDE,
    reads: Some(&READER),
    tools: TOOLS,
    open,
    maintenance: None,
    samples: &[
        Sample::new(
            "eurlex_search",
            r#"{"query": "interoperabiliteit", "kind": "regulation"}"#,
        ),
        Sample::new("eurlex_read", r#"{"id": "32024R0903", "article": "1"}"#).asking(2),
        Sample::new("eurlex_transposition", r#"{"id": "32019L1937"}"#),
    ],
    offers: &Offers::NONE,
    page: &super::page_spec::PageSpec::Without {
        nl: "EU-recht (EUR-Lex) is er voor assistenten: eurlex_search en eurlex_read.",
        en: "EU law (EUR-Lex) is for assistants: eurlex_search and eurlex_read.",
    },
    status: None,
    search: KeywordSearch::Tool(&Keyword::<EurlexSearch>::SEARCH),
    lists: &[],
};

const GUIDE: &str = "EUR-Lex (eurlex_* tools): EU law — regulations, directives, decisions and Court rulings — from \
CELLAR, the EU Publications Office's repository behind EUR-Lex. eurlex_search finds acts by words of their title in \
Dutch (or `language` en), a CELEX number, the kind, the document's dates and whether it is in force; each result's \
`id` is its CELEX number. Title words are matched by scanning titles at CELLAR, which can take tens of seconds: \
add a kind or dates when you can; a query that runs out of time says so. eurlex_read gives one act by its CELEX \
number (32016R0679), ELI or EUR-Lex link: title, kind, dates, whether in force, legal basis and amending acts, its \
outline, and its text in Dutch by default (`language` en for English), whole in pages (`offset`), one `article`, or \
its annexes (`article`: `annex`). eurlex_transposition lists the national measures the Netherlands notified for \
a directive, each with the id `fetch` reads (a Staatsblad or Staatscourant publication, or a BWB law) where CELLAR's \
journal name, number and date name one; a measure CELLAR describes otherwise is listed as given and marked not \
resolved. CELLAR publishes no rate: BesluitBron keeps a small budget of its own.";

/// The tools, in the order `tools/list` shows them.
const TOOLS: &[ToolSpec] = &[SEARCH_TOOL, READ_TOOL, transposition::TOOL];

const SEARCH_TOOL: ToolSpec = Keyword::<EurlexSearch>::TOOL;

/// EUR-Lex's keyword search, declared once: the tool and its part in `search`.
pub(crate) struct EurlexSearch;

impl KeywordTool for EurlexSearch {
    const NAME: &'static str = "eurlex_search";
    const TITLE: &'static str = "Search EU law";
    const DESCRIPTION: &'static str = "Search EU law (EUR-Lex, through CELLAR): regulations, directives, decisions, \
        Court rulings, by words of the title (Dutch by default), CELEX number, `kind`, the document's dates and \
        `in_force`. Newest first; each result's `id` (its CELEX number) is read by eurlex_read. Title words are \
        matched by a scan at CELLAR: slow (up to the query time-out) without a kind or dates. Kept ten minutes.";
    type Args = SearchArgs;
    type Output = render::SearchShown;
    /// The kept answer, and what was asked: in words, its offset and language.
    type Found = Asking<SearchPage, (String, u64, Language)>;

    async fn find(ctx: &Context, call: &Call, args: SearchArgs) -> Result<Self::Found, Reply> {
        let (pc, said, offset, language) = question(ctx, &args)?;
        let kept = ctx.fetch_kept(call, pc).await?;
        Ok(Asking {
            kept,
            asked: (said, offset, language),
        })
    }

    fn render(found: &Self::Found) -> crate::call::Rendered {
        let (said, offset, language) = &found.asked;
        render::search(&found.kept.answer, found.kept.served, said, *offset, language.short())
    }

    fn listing(found: &Self::Found) -> Listing {
        let (_, _, language) = &found.asked;
        Listing {
            results: render::items(&found.kept.answer, language.short()),
            tally: render::tally(&found.kept.answer),
        }
    }

    fn arguments(asked: &search::Asked) -> Map<String, Value> {
        let mut args = Map::new();
        args.insert("query".into(), asked.query.clone().into());
        args.insert("limit".into(), asked.limit.min(MAX_LIMIT).into());
        search::dates(asked, &mut args);
        args
    }
}

const READ_TOOL: ToolSpec = crate::tool! {
    name: "eurlex_read",
    title: "Read an EU act",
    description: "One EU act by its CELEX number (32016R0679), ELI or EUR-Lex link: title, kind, dates, in force or \
                  not, legal basis, amending acts, outline, and its text in Dutch (or `language` en) in pages, one \
                  `article`, or its annexes (`article`: `annex`); `next_offset` reads on. Text kept for weeks.",
    arguments: ReadArgs,
    output: render::ReadShown,
    run: eurlex_read,
    read: act_read,
};

/// What EUR-Lex reads.
const READER: IdReader = IdReader {
    // Every record it reads has a public page (`fetch`'s `url`).
    public_pages: true,
    paged: &[&READ_TOOL],
    forms: &[
        IdForm {
            what: "a CELEX number, with `CELEX:` and `#article` if wanted",
            example: "32024R0903#1",
            sample: None,
        },
        IdForm {
            what: "an ELI of a regulation, directive or decision",
            example: "data.europa.eu/eli/reg/2024/903/oj",
            sample: None,
        },
        IdForm {
            what: "a link to an act on EUR-Lex",
            example: "eur-lex.europa.eu/legal-content/NL/TXT/?uri=CELEX:32024R0903",
            sample: None,
        },
    ],
    read: reading,
};

fn open(config: &Config) -> Result<Client, PlatformError> {
    let settings = config.platform(PLATFORM);
    let timeout = Duration::from_secs(settings.query_timeout_secs.unwrap_or(DEFAULT_QUERY_TIMEOUT_SECS).max(1));
    let client = EurlexClient::new(&settings.base_url, &http_config(config, PLATFORM), timeout)?;
    Ok(Arc::new(client))
}

/// Arguments of `eurlex_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must each occur in the title, e.g. `klokkenluiders`.
    #[serde(default)]
    #[schemars(length(max = 200))]
    pub query: Option<String>,
    /// One act by its CELEX number, e.g. `32016R0679`.
    #[serde(default)]
    #[schemars(length(max = 30))]
    pub celex: Option<String>,
    /// The kind of act.
    #[serde(default)]
    pub kind: Option<Kind>,
    /// The document's first day.
    #[serde(default)]
    #[schemars(length(max = 10), extend("format" = "date"))]
    pub date_from: Option<String>,
    /// The document's last day (inclusive).
    #[serde(default)]
    #[schemars(length(max = 10), extend("format" = "date"))]
    pub date_to: Option<String>,
    /// Only acts in force (true) or no longer in force (false).
    #[serde(default)]
    pub in_force: Option<bool>,
    /// The titles' language (default `nl`).
    #[serde(default)]
    pub language: Option<Language>,
    /// Default 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[serde(default)]
    #[schemars(range(max = 10_000))]
    pub offset: Option<u32>,
}

/// Arguments of `eurlex_read`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadArgs {
    /// The act's CELEX number (from eurlex_search), ELI or EUR-Lex link.
    #[schemars(length(max = 200))]
    pub id: String,
    /// The text's language (default `nl`).
    #[serde(default)]
    pub language: Option<Language>,
    /// Only this article (`3`), or the annexes (`annex`, `annex 2`).
    #[serde(default)]
    #[schemars(length(max = 30))]
    pub article: Option<String>,
    /// From `next_offset`.
    #[serde(default)]
    #[schemars(range(min = 0))]
    pub offset: Option<usize>,
    /// Characters (default 10000).
    #[serde(default)]
    #[schemars(range(min = 1, max = 100_000))]
    pub length: Option<usize>,
}

/// The shared question in `eurlex_search`'s words.
/// A day argument, checked.
fn day(name: &str, value: Option<&str>) -> Result<Option<String>, String> {
    match value.map(str::trim).filter(|d| !d.is_empty()) {
        None => Ok(None),
        Some(d) if crate::calendar::is_day(d) => Ok(Some(d.to_owned())),
        Some(d) => Err(format!(
            "eurlex_search: `{name}` must be a day written YYYY-MM-DD, not `{}`",
            brief(d)
        )),
    }
}

/// The checked search `args` ask, and what it asks in words.
fn checked(args: &SearchArgs) -> Result<(sparql::Search, String), String> {
    let words: Vec<String> = args
        .query
        .as_deref()
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_lowercase)
        .collect();
    if words.len() > MAX_WORDS {
        return Err(format!("eurlex_search: at most {MAX_WORDS} words in `query`"));
    }
    let celex = match args.celex.as_deref().map(str::trim).filter(|c| !c.is_empty()) {
        None => None,
        Some(c) => match ids::asked(c) {
            Some(a) => Some(a.celex),
            None => {
                return Err(format!(
                    "eurlex_search: `celex` `{}` is not a CELEX number (such as 32016R0679)",
                    brief(c)
                ));
            }
        },
    };
    let language = args.language.unwrap_or_default();
    let search = sparql::Search {
        words,
        celex,
        kind: args.kind,
        from: day("date_from", args.date_from.as_deref())?,
        to: day("date_to", args.date_to.as_deref())?,
        force: args.in_force.map(|f| if f { Force::In } else { Force::Not }),
        language,
    };
    if search.words.is_empty() && search.celex.is_none() && search.kind.is_none() && search.from.is_none() {
        return Err("eurlex_search: give `query` (title words), `celex`, `kind` or `date_from`".to_owned());
    }
    let mut said = Vec::new();
    if !search.words.is_empty() {
        said.push(format!(
            "title words `{}` ({})",
            search.words.join(" "),
            language.short()
        ));
    }
    if let Some(c) = &search.celex {
        said.push(format!("CELEX {c}"));
    }
    if let Some(k) = search.kind {
        said.push(format!("kind {}", sparql::kind_name(k.types()[0])));
    }
    match (&search.from, &search.to) {
        (Some(f), Some(t)) => said.push(format!("dated {f} to {t}")),
        (Some(f), None) => said.push(format!("dated from {f}")),
        (None, Some(t)) => said.push(format!("dated until {t}")),
        (None, None) => {}
    }
    if let Some(f) = args.in_force {
        said.push(if f { "in force" } else { "not in force" }.to_owned());
    }
    Ok((search, said.join(", ")))
}

/// A search's platform call, what it asks in words, its offset and language.
type Question = (PlatformCall<SearchPage>, String, u64, Language);

fn question(ctx: &Context, args: &SearchArgs) -> Result<Question, Reply> {
    let refuse = |message: String| Reply::from(tool_error(message));
    let page = Page::asked("eurlex_search", args.limit, args.offset, DEFAULT_LIMIT, MAX_LIMIT).map_err(refuse)?;
    if page.offset > MAX_OFFSET {
        return Err(refuse(format!(
            "eurlex_search: `offset` reaches {MAX_OFFSET} at most; narrow the search"
        )));
    }
    let (search, said) = checked(args).map_err(refuse)?;
    let client = tool::client::<EurlexClient>(ctx, PLATFORM)?;
    let (offset, limit) = (u64::from(page.offset), page.limit.min(MAX_ROWS - 1));
    let query = sparql::search_query(&search, offset, limit);
    let key = CacheKey::new(PLATFORM, DataClass::Search, "search").param("query", query);
    let language = search.language;
    let search = Arc::new(search);
    let pc = PlatformCall::new(key, Units::ONE, move || {
        let (client, search) = (Arc::clone(&client), Arc::clone(&search));
        async move { Ok((client.search(&search, offset, limit).await?, Feedback::default())) }
    });
    Ok((pc, said, offset, language))
}

/// What `fetch` reads as an act.
fn reading(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let asked = ids::asked(id)?;
    let mut shown = asked.celex.clone();
    if let Some(a) = &asked.article {
        shown.push_str(&format!("#{a}"));
    }
    let args = ReadArgs {
        id: asked.celex,
        language: asked.language,
        article: asked.article,
        offset: paging.offset,
        length: paging.length,
    };
    Some(Ok(Reading::new(shown, Claim::Home, &READ_TOOL, move |ctx, call| {
        Box::pin(act_read(ctx, call, args))
    })))
}

/// The act's metadata call.
fn act_call(client: &Arc<EurlexClient>, celex: &str, language: Language) -> PlatformCall<Act> {
    let key = CacheKey::new(PLATFORM, DataClass::Search, "act")
        .param("celex", celex.to_owned())
        .param("language", language.short().to_owned());
    let (client, celex) = (Arc::clone(client), Arc::<str>::from(celex));
    PlatformCall::new(key, Units::ONE, move || {
        let (client, celex) = (Arc::clone(&client), Arc::clone(&celex));
        async move { Ok((client.act(&celex, language).await?, Feedback::default())) }
    })
}

async fn eurlex_read(ctx: &Context, call: &Call, args: ReadArgs) -> Reply {
    replied(act_read(ctx, call, args).await)
}

/// One act read, typed (`eurlex_read`'s answer, and `fetch`'s).
async fn act_read(ctx: &Context, call: &Call, args: ReadArgs) -> ReadResult {
    let Some(asked) = ids::asked(own(PLATFORM, &args.id)) else {
        return Err(tool_error(format!(
            "eurlex_read: `{}` is not a CELEX number (such as 32016R0679), an ELI or a EUR-Lex link; eurlex_search \
             finds acts",
            brief(&args.id)
        ))
        .into());
    };
    let language = args.language.or(asked.language).unwrap_or_default();
    let article = args
        .article
        .or(asked.article)
        .map(|a| a.trim().to_owned())
        .filter(|a| !a.is_empty());
    let length = match read_length("eurlex_read", args.length) {
        Ok(length) => length,
        Err(message) => return Err(tool_error(message).into()),
    };
    let client = match tool::client::<EurlexClient>(ctx, PLATFORM) {
        Ok(c) => c,
        Err(reply) => return Err(reply),
    };
    let act = match ctx
        .fetch(Who::Caller, call, act_call(&client, &asked.celex, language))
        .await
    {
        Ok((act, _)) => act,
        Err(e) => return Err(e.into()),
    };
    let items: Vec<crate::platforms::eurlex::Item> = act.text_items().into_iter().cloned().collect();
    if items.is_empty() {
        let other = match language {
            Language::Nl => "en",
            Language::En => "nl",
        };
        return Err(tool_error(format!(
            "EUR-Lex (CELLAR) lists no XHTML or Formex text of {} in `{}`; try `language` {other}, or open {}",
            act.celex,
            language.short(),
            render::public_url(&act.celex, language.short())
        ))
        .into());
    }
    let key = CacheKey::new(PLATFORM, DataClass::Document, "text").param(
        "items",
        items.iter().map(|i| i.cellar.as_str()).collect::<Vec<_>>().join(" "),
    );
    let cost = Units::whole(items.len() as u64);
    let items = Arc::new(items);
    let text = PlatformCall::new(key, cost, move || {
        let (client, items) = (Arc::clone(&client), Arc::clone(&items));
        async move {
            Ok((
                TextAnswer {
                    text: client.text(&items).await?,
                },
                Feedback::default(),
            ))
        }
    });
    let asked = render::Asked {
        article,
        offset: args.offset.unwrap_or(0),
        length,
    };
    ctx.read_for(Who::Caller, call, text, |answer: &TextAnswer, served| {
        render::read(&answer.text, &act, served, &asked)
    })
    .await
}
