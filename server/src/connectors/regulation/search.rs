//! A collection's search tool (`bwb_search`, `cvdr_search`), its part in `search` on
//! `/mcp`, and its answer: the regulations in force on a day that match what its
//! arguments ask, a page at a time.
//!
//! Invariants:
//! - One platform call per search, kept ten minutes under the query, the offset and the
//!   limit; a search that asks nothing but its day is the tool's error saying what to
//!   give, before anything is asked.
//! - The tool and its part in `search` ask the same platform call and read the same kept
//!   answer (one [`KeywordTool`] declaration), each result a [`Hit`] in the shared vocabulary.
//!
//! What this module does not do: decide what the arguments ask (the collection does), or
//! pass the shared question's dates on (they are publication dates, which a version in
//! force is not).

use std::fmt::Write as _;
use std::marker::PhantomData;
use std::sync::Arc;

use besluitbron_core::Units;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Served};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::args::{MAX_LIMIT, date_arg};
use super::collection::{Collection, Record, SearchArguments};
use crate::call::{Call, Context, PlatformCall, Rendered, Reply, Structure, provenance, tool_error};
use crate::connectors::pages::Page;
use crate::connectors::search::{Asked, Asking, Keyword, KeywordTool, SearchSpec};
use crate::connectors::tool::ToolSpec;
use crate::connectors::vocabulary::{Item, Listing, Tally};
use crate::platforms::http::PlatformError;
use crate::platforms::koop::zoekservice::{RegulationClient, RegulationCollection};

/// Every search counts one call.
const COST: Units = Units::ONE;
/// Records a search shows by default.
const DEFAULT_LIMIT: u32 = 10;

/// One regulation in a search's results: the shared [`Item`] (its `date` the day the
/// version in force began) and when that version ends.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hit {
    /// The regulation.
    #[serde(flatten)]
    pub item: Item,
    /// The day the version in force ends, as the record writes it.
    pub valid_until: Option<String>,
}

impl Hit {
    fn of<C: Collection>(record: &Record<C>) -> Hit {
        let v = C::version(record);
        Hit {
            item: Item::new(C::PLATFORM, C::SPEC.read.name, v.id, v.title)
                .dated(v.from)
                .kind(v.kind)
                .of(v.organization)
                .at(Some(v.url)),
            valid_until: v.until,
        }
    }
}

/// What a search keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchAnswer<R> {
    /// The records of the page.
    pub records: Vec<R>,
    /// Matches in all.
    pub total: u64,
    /// The next page's offset.
    pub next_offset: Option<u64>,
}

/// A search's structured content.
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

/// The search tool of collection `C`.
pub const fn tool<C: Collection>() -> ToolSpec {
    Keyword::<SearchTool<C>>::TOOL
}

/// Collection `C`'s search tool, declared once: the tool and its part in `search` on
/// `/mcp` (regulations in force today holding the words).
pub struct SearchTool<C>(PhantomData<C>);

impl<C: Collection> SearchTool<C> {
    /// Its part in `search` on `/mcp`.
    pub const KEYWORDS: &'static SearchSpec = &Keyword::<Self>::SEARCH;
}

impl<C: Collection> KeywordTool for SearchTool<C> {
    const NAME: &'static str = C::SPEC.search.name;
    const TITLE: &'static str = C::SPEC.search.title;
    const DESCRIPTION: &'static str = C::SPEC.search.description;
    const ASKS: &'static [crate::connectors::ask::AskArg] = C::ASKS;
    type Args = C::SearchArgs;
    type Output = SearchShown;
    /// The kept answer, what it asked in words and its offset.
    type Found = Asking<SearchAnswer<Record<C>>, (String, u64)>;

    async fn find(ctx: &Context, call: &Call, args: C::SearchArgs) -> Result<Self::Found, Reply> {
        let (pc, searched, offset) = question::<C>(ctx, args)?;
        let kept = ctx.fetch_kept(call, pc).await?;
        Ok(Asking {
            kept,
            asked: (searched, offset),
        })
    }

    fn render(found: &Self::Found) -> Rendered {
        let (searched, offset) = &found.asked;
        render::<C>(&found.kept.answer, found.kept.served, searched, *offset)
    }

    fn listing(found: &Self::Found) -> Listing {
        let answer = &found.kept.answer;
        Listing {
            results: answer.records.iter().map(|r| Hit::of::<C>(r).item).collect(),
            tally: tally(answer),
        }
    }

    /// The shared question in a search tool's words: its words, as many as asked.
    fn arguments(asked: &Asked) -> Map<String, Value> {
        let mut args = Map::new();
        args.insert("query".into(), asked.query.clone().into());
        args.insert("limit".into(), asked.limit.into());
        args
    }
}

/// A search's platform call, what it asks in words and its offset.
type Question<C> = (PlatformCall<SearchAnswer<Record<C>>>, String, u64);

/// A search's question, or the refusal that stands for it.
fn question<C: Collection>(ctx: &Context, args: C::SearchArgs) -> Result<Question<C>, Reply> {
    let name = C::SPEC.search.name;
    let refuse = |message: String| Reply::from(tool_error(message));
    let page = Page::asked(name, args.limit(), args.offset(), DEFAULT_LIMIT, MAX_LIMIT).map_err(refuse)?;
    let day = date_arg(name, args.date(), ctx.clock.wall()).map_err(refuse)?;
    let (search, mut searched) = C::search(&args, &day).map_err(refuse)?;
    let (limit, offset) = (page.limit, u64::from(page.offset));
    let cql = match C::Platform::cql(&search) {
        Ok(cql) => cql,
        Err(PlatformError::BadRequest { code, .. }) if code == "nothing_to_search" => {
            return Err(refuse(format!("{name}: give {}", C::SPEC.words.give)));
        }
        Err(e) => return Err(tool_error(e).into()),
    };
    let client = ctx.clients.get::<RegulationClient<C::Platform>>(C::PLATFORM)?;
    let key = CacheKey::new(C::PLATFORM, DataClass::Search, "search")
        .param("cql", cql)
        .param("offset", offset.to_string())
        .param("limit", limit.to_string());
    searched.push(format!("in force on {day}"));
    let search = Arc::new(search);
    let pc = PlatformCall::new(key, COST, move || {
        let (client, search) = (Arc::clone(&client), Arc::clone(&search));
        async move {
            let page = client.search(&search, offset, limit).await?;
            let answer = SearchAnswer {
                records: page.records,
                total: page.total,
                next_offset: page.next_offset,
            };
            Ok((answer, Feedback::default()))
        }
    });
    Ok((pc, searched.join(", "), offset))
}

/// How many regulations match and where the next page starts.
fn tally<R>(answer: &SearchAnswer<R>) -> Tally {
    Tally {
        total: Some(answer.total),
        total_is_exact: true,
        next_offset: answer.next_offset,
    }
}

/// `text` with its first letter in capitals.
fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

/// A search's result: how many of how many match, then one line per regulation.
pub fn render<C: Collection>(
    answer: &SearchAnswer<Record<C>>,
    served: Served,
    searched: &str,
    offset: u64,
) -> Rendered {
    let words = &C::SPEC.words;
    let hits: Vec<Hit> = answer.records.iter().map(Hit::of::<C>).collect();
    let mut text = if hits.is_empty() && offset == 0 {
        format!(
            "{} has no {} for {searched}{}. To widen: {}",
            words.the_collection,
            words.one,
            provenance(served),
            words.widen
        )
    } else if hits.is_empty() {
        format!(
            "No more {} for {searched}{}: {} match, this offset is past them.",
            words.many,
            provenance(served),
            answer.total
        )
    } else {
        format!(
            "{} {}–{} of {} for {searched}{}.",
            capitalised(words.many),
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
            words
                .end(valid_until.as_deref())
                .map(|u| format!(" until {u}"))
                .unwrap_or_default(),
            h.url.as_deref().unwrap_or("")
        );
    }
    if let Some(next) = answer.next_offset {
        let _ = write!(text, "\nMore: call {} again with `offset` {next}.", C::SPEC.search.name);
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
