//! A tool as its connector declares it: [`ToolSpec`] — its name, its definition (the
//! schemas an assistant reads) and the function that runs it.
//!
//! A tool is a plain async function from the shared [`Context`], its [`Call`] and its
//! typed arguments to a [`Reply`]. The [`tool!`](crate::tool) macro makes its
//! `ToolSpec`: the input schema from the arguments' type, the output schema from the
//! structured content's type, the annotations every BesluitBron tool shares (it reads,
//! not destroying anything, and reaches other services), and the step from the
//! arguments as JSON to their type (a clear tool error for arguments that do not fit).
//!
//! What this module does not do: check arguments against their schema's bounds before
//! the tool runs (the MCP layer does, for every tool at once), or serve the tool.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use rmcp::schemars::JsonSchema;
use serde::de::DeserializeOwned;

use super::ask::AskArg;
use crate::call::{Call, Context, ReadResult, Reply, tool_error};

/// A running tool.
pub type ToolFuture<'a> = Pin<Box<dyn Future<Output = Reply> + Send + 'a>>;

/// Runs a tool for a call with its arguments (a JSON object).
pub type RunTool = for<'a> fn(&'a Context, &'a Call, JsonObject) -> ToolFuture<'a>;

/// A reading tool running: its answer typed ([`crate::call::Read`]), or the reply that
/// stands for it.
pub type ReadFuture<'a> = Pin<Box<dyn Future<Output = ReadResult> + Send + 'a>>;

/// Runs a reading tool for a call with its arguments (a JSON object), answering its read
/// typed: what `fetch` on `/mcp` answers from, with or without the tool's own arguments.
pub type ReadTool = for<'a> fn(&'a Context, &'a Call, JsonObject) -> ReadFuture<'a>;

/// One tool of a connector.
pub struct ToolSpec {
    /// Its name, unique over every connector. A connector served under another id than its
    /// module's (a copy) names its tools anew: their definitions and the references between
    /// them are renamed to these names where they are served.
    pub name: &'static str,
    /// What `tools/list` says of it.
    pub definition: fn() -> Tool,
    /// The tool itself.
    pub run: RunTool,
    /// A reading tool's typed core: the record it read, before it is made its result
    /// (`None` for a tool that reads no one record).
    pub read: Option<ReadTool>,
    /// Its arguments whose value may name several things, and how each is resolved to
    /// choices a person can be asked to make (empty for most tools).
    pub asks: &'static [AskArg],
}

impl std::fmt::Debug for ToolSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "tool {}", self.name)
    }
}

/// The definition of a tool that takes `A` and whose structured content is an `S`:
/// every BesluitBron tool reads, reaches another service, and may be asked twice.
///
/// # Panics
///
/// When `A`'s schema is not one an MCP input schema may be (not an object): a defect
/// of the tool's declaration, found by every test that lists the tools.
pub fn definition<A: JsonSchema + 'static, S: JsonSchema + 'static>(
    name: &'static str,
    title: &'static str,
    description: &'static str,
) -> Tool {
    let input = rmcp::handler::server::common::schema_for_input::<A>()
        .unwrap_or_else(|e| panic!("{name}: its arguments' schema is not an input schema: {e}"));
    Tool::new_with_raw(name, Some(description.into()), input)
        .with_raw_output_schema(rmcp::handler::server::tool::schema_for_output::<S>())
        .with_annotations(ToolAnnotations::from_raw(
            Some(title.to_owned()),
            Some(true),
            Some(false),
            // The specification: `idempotentHint` "is meaningful only when readOnlyHint ==
            // false"; 22 bytes a tool in tools/list, said by `readOnlyHint` already.
            None,
            Some(true),
        ))
}

/// The arguments of `call` as its tool's type, or the tool error that says why they
/// are not (serde's words: which argument, what was expected).
pub fn arguments<A: DeserializeOwned>(call: &Call, arguments: JsonObject) -> Result<A, Reply> {
    serde_json::from_value(serde_json::Value::Object(arguments))
        .map_err(|e| tool_error(invalid_arguments(call.tool, call.platform, &e.to_string())).into())
}

/// The tool error for arguments of `tool` that do not fit (`detail` says which and
/// why): what is wrong and where the right form is written (`platform`: the one the tool
/// asks, `None` for `fetch`).
pub fn invalid_arguments(tool: &str, platform: Option<besluitbron_core::PlatformId>, detail: &str) -> String {
    let asked = platform.map_or("any platform", |p| p.display_name());
    format!("{tool}: {detail} (nothing asked of {asked}; see the tool's inputSchema)")
}

/// Boxes a tool's future (the step [`tool!`](crate::tool) takes for every tool).
pub fn boxed<'a>(future: impl Future<Output = Reply> + Send + 'a) -> ToolFuture<'a> {
    Box::pin(future)
}

/// Shared by the tools of a connector: its client, from the context.
pub fn client<T: Send + Sync + 'static>(
    ctx: &Context,
    platform: besluitbron_core::PlatformId,
) -> Result<Arc<T>, Reply> {
    ctx.clients.get::<T>(platform).map_err(Reply::from)
}

/// The [`ToolSpec`] of a tool function `run(ctx, call, args)`:
///
/// ```ignore
/// tool! {
///     name: "obv_search",
///     title: "Search OpenBesluitvorming",
///     description: "…",
///     arguments: SearchArgs,
///     output: render::SearchShown,
///     run: obv_search,
///     read: obv_read, // optional: a reading tool's typed core, `run`'s read
///     asks: &[…], // optional: the arguments a person may be asked to settle
/// }
/// ```
#[macro_export]
macro_rules! tool {
    (@asks) => {
        &[]
    };
    (@asks $asks:expr) => {
        $asks
    };
    (@read $arguments:ty;) => {
        None
    };
    (@read $arguments:ty; $read:path) => {
        Some(|ctx, call, arguments| {
            Box::pin(async move {
                let arguments = $crate::connectors::tool::arguments::<$arguments>(call, arguments)?;
                $read(ctx, call, arguments).await
            })
        })
    };
    (
        name: $name:literal,
        title: $title:literal,
        description: $description:expr,
        arguments: $arguments:ty,
        output: $output:ty,
        run: $run:path
        $(, read: $read:path)?
        $(, asks: $asks:expr)? $(,)?
    ) => {
        $crate::connectors::tool::ToolSpec {
            name: $name,
            definition: || $crate::connectors::tool::definition::<$arguments, $output>($name, $title, $description),
            run: |ctx, call, arguments| {
                $crate::connectors::tool::boxed(async move {
                    match $crate::connectors::tool::arguments::<$arguments>(call, arguments) {
                        Ok(arguments) => $run(ctx, call, arguments).await,
                        Err(reply) => reply,
                    }
                })
            },
            read: $crate::tool!(@read $arguments; $($read)?),
            asks: $crate::tool!(@asks $($asks)?),
        }
    };
}
