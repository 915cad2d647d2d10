//! A connector's keyword search, declared once ([`KeywordTool`]): its arguments, how
//! they become one platform call's typed answer ([`KeywordTool::find`]), and two pure
//! functions of that answer — the tool's result ([`KeywordTool::render`]) and the
//! [`Listing`] in the shared vocabulary ([`KeywordTool::listing`]) — with how the shared
//! question of `search` on `/mcp` becomes its arguments. From that one declaration
//! [`Keyword`] derives the tool (`Keyword::<S>::TOOL`, what `tools/call` runs) and its
//! part in `search` (`Keyword::<S>::SEARCH`): both ask the same platform call (its
//! buffer entry, fair queue and counters) and read the same typed answer, never its
//! rendered JSON. A connector without a keyword search says why and how to search it
//! instead ([`KeywordSearch::Without`]).

use std::future::Future;
use std::marker::PhantomData;
use std::pin::Pin;

use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use super::ask::AskArg;
use super::page_spec::Hits;
use super::tool::{self, ToolFuture, ToolSpec};
use super::vocabulary::Listing;
use crate::call::{Call, Context, Kept, KeptRef, Rendered, Reply};

/// A keyword search running: its listing, or the reply that stands for it (a tool error,
/// or the platform owned by another replica).
pub type ListingFuture<'a> = Pin<Box<dyn Future<Output = Result<Listing, Reply>> + Send + 'a>>;

/// Runs a search tool's question (its arguments, a JSON object) and answers it as a
/// listing: the same platform call as the tool's (its buffer entry, fair queue and
/// counters), its answer read typed.
pub type ListTool = for<'a> fn(&'a Context, &'a Call, JsonObject) -> ListingFuture<'a>;

/// A keyword search's hits for the search page running: its hits, or the reply that
/// stands for them.
pub type HitsFuture<'a> = Pin<Box<dyn Future<Output = Result<Hits, Reply>> + Send + 'a>>;

/// Runs a search tool's question (its arguments) and answers it as the search page's
/// hits: the same platform call as the tool's, its answer read typed.
pub type HitsTool = for<'a> fn(&'a Context, &'a Call, JsonObject) -> HitsFuture<'a>;

/// A connector's keyword search, declared once: [`Keyword`] makes its tool and its part
/// in `search` from it.
pub trait KeywordTool: Sync + 'static {
    /// The tool's name, unique over every connector.
    const NAME: &'static str;
    /// Its title.
    const TITLE: &'static str;
    /// What `tools/list` says of it.
    const DESCRIPTION: &'static str;
    /// Its arguments whose value may name several things ([`ToolSpec::asks`]).
    const ASKS: &'static [AskArg] = &[];
    /// Its arguments.
    type Args: DeserializeOwned + JsonSchema + Send + 'static;
    /// Its structured content's type (the output schema).
    type Output: JsonSchema + 'static;
    /// Its typed answer: the platform call's kept answer, how it was served and what the
    /// call asked (made from its arguments).
    type Found: Found + Send + Sync + 'static;

    /// The one platform call `args` ask, answered typed; or the reply that stands for it
    /// (arguments refused, a name that is no one organisation, the platform owned by
    /// another replica).
    fn find<'a>(
        ctx: &'a Context,
        call: &'a Call,
        args: Self::Args,
    ) -> impl Future<Output = Result<Self::Found, Reply>> + Send + 'a;

    /// The tool's result: a plain function of the typed answer.
    fn render(found: &Self::Found) -> Rendered;

    /// Its results in the shared vocabulary: a plain function of the typed answer.
    fn listing(found: &Self::Found) -> Listing;

    /// The shared question of `search` as its arguments, in the tool's own words.
    fn arguments(asked: &Asked) -> Map<String, Value>;

    /// Its hits on the search page: by default its listing's.
    fn hits(found: &Self::Found) -> Hits {
        Hits::of(Self::listing(found))
    }
}

/// A keyword search's typed answer, as the call layer kept it.
pub trait Found {
    /// The kept answer's payload and how it was served ([`Context::render_kept`]).
    fn kept(&self) -> KeptRef<'_>;
}

impl<T> Found for Kept<T> {
    fn kept(&self) -> KeptRef<'_> {
        Kept::kept(self)
    }
}

/// An answer as kept and what the call asked beside it: the typed answer of most
/// keyword searches.
pub struct Asking<T, Q> {
    /// The kept answer.
    pub kept: Kept<T>,
    /// What the call asked, made from its arguments.
    pub asked: Q,
}

impl<T, Q> Found for Asking<T, Q> {
    fn kept(&self) -> KeptRef<'_> {
        self.kept.kept()
    }
}

/// The tool and the part in `search` of keyword search `S`.
pub struct Keyword<S>(PhantomData<S>);

impl<S: KeywordTool> Keyword<S> {
    /// The tool.
    pub const TOOL: ToolSpec = ToolSpec {
        name: S::NAME,
        definition: definition::<S>,
        run: run::<S>,
        read: None,
        asks: S::ASKS,
    };
    /// Its part in `search` on `/mcp`.
    pub const SEARCH: SearchSpec = SearchSpec {
        tool: &Self::TOOL,
        arguments: S::arguments,
        list: list::<S>,
        hits: hits::<S>,
    };
}

fn definition<S: KeywordTool>() -> rmcp::model::Tool {
    tool::definition::<S::Args, S::Output>(S::NAME, S::TITLE, S::DESCRIPTION)
}

fn run<'a, S: KeywordTool>(ctx: &'a Context, call: &'a Call, arguments: JsonObject) -> ToolFuture<'a> {
    tool::boxed(async move {
        let found = match tool::arguments::<S::Args>(call, arguments) {
            Ok(args) => S::find(ctx, call, args).await,
            Err(reply) => return reply,
        };
        match found {
            Ok(found) => ctx.render_kept(call, found.kept(), || S::render(&found)),
            Err(reply) => reply,
        }
    })
}

fn list<'a, S: KeywordTool>(ctx: &'a Context, call: &'a Call, arguments: JsonObject) -> ListingFuture<'a> {
    Box::pin(async move {
        let args = tool::arguments::<S::Args>(call, arguments)?;
        S::find(ctx, call, args).await.map(|found| S::listing(&found))
    })
}

fn hits<'a, S: KeywordTool>(ctx: &'a Context, call: &'a Call, arguments: JsonObject) -> HitsFuture<'a> {
    Box::pin(async move {
        let args = tool::arguments::<S::Args>(call, arguments)?;
        S::find(ctx, call, args).await.map(|found| S::hits(&found))
    })
}

/// The shared question, as `search` was asked it.
#[derive(Debug, Clone, Default)]
pub struct Asked {
    /// Words that must occur.
    pub query: String,
    /// Results per platform.
    pub limit: u32,
    /// First day, YYYY-MM-DD.
    pub date_from: Option<String>,
    /// Last day (inclusive), YYYY-MM-DD.
    pub date_to: Option<String>,
}

/// What a connector's keyword search is.
#[derive(Debug, Clone, Copy)]
pub enum KeywordSearch {
    /// This tool answers words.
    Tool(&'static SearchSpec),
    /// None: why, and how to search the platform instead (for the assistant).
    Without(&'static str),
}

/// A connector's keyword search.
#[derive(Debug)]
pub struct SearchSpec {
    /// The tool asked: a part of `search` is a call of that tool.
    pub tool: &'static ToolSpec,
    /// Its arguments for the shared question, in the tool's own words: checked by its
    /// schema's rules and read by [`SearchSpec::list`] here, or carried to the platform's
    /// owner when another replica owns it.
    pub arguments: fn(&Asked) -> Map<String, Value>,
    /// The tool's question answered as a listing.
    pub list: ListTool,
    /// The tool's question answered as the search page's hits.
    pub hits: HitsTool,
}

/// The shared question's dates as arguments named `date_from` and `date_to`.
pub fn dates(asked: &Asked, args: &mut Map<String, Value>) {
    if let Some(d) = &asked.date_from {
        args.insert("date_from".into(), Value::from(d.clone()));
    }
    if let Some(d) = &asked.date_to {
        args.insert("date_to".into(), Value::from(d.clone()));
    }
}
