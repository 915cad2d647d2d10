//! A connector's part in `search` on `/mcp` (one question over every platform with a
//! keyword search): [`KeywordSearch`] says which of its tools answers words, how the
//! shared question becomes that tool's arguments, and how the tool's own question is
//! answered as a [`Listing`] (the shared vocabulary, typed: read from the tool's kept
//! answer, never from its rendered JSON) — or why it has no keyword search and how to
//! search it instead.

use std::future::Future;
use std::pin::Pin;

use rmcp::model::JsonObject;
use serde_json::{Map, Value};

use super::tool::ToolSpec;
use super::vocabulary::Listing;
use crate::call::{Call, Context, Reply};

/// A keyword search running: its listing, or the reply that stands for it (a tool error,
/// or the platform owned by another replica).
pub type ListingFuture<'a> = Pin<Box<dyn Future<Output = Result<Listing, Reply>> + Send + 'a>>;

/// Runs a search tool's question (its arguments, a JSON object) and answers it as a
/// listing: the same platform call as the tool's (its buffer entry, fair queue and
/// counters), its answer read typed.
pub type ListTool = for<'a> fn(&'a Context, &'a Call, JsonObject) -> ListingFuture<'a>;

/// The [`ListTool`] of a typed function `run(ctx, call, arguments)` whose arguments are
/// `$arguments` (the search tool's own type): arguments that do not fit are the tool's
/// error, as [`tool!`](crate::tool) makes it.
#[macro_export]
macro_rules! listing {
    ($arguments:ty, $run:path $(,)?) => {
        |ctx, call, arguments| {
            Box::pin(async move {
                let arguments = $crate::connectors::tool::arguments::<$arguments>(call, arguments)?;
                $run(ctx, call, arguments).await
            })
        }
    };
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
