//! What every tool promises an assistant about the shape and size of its answers.
//!
//! - [`ANSWER_BUDGET_BYTES`]: a tool's default answer — the whole `tools/call` result,
//!   text and structured content together, as compact JSON — fits in 16 KB, so a list of
//!   titles never costs a model a large share of its context. Going further is the
//!   assistant's choice (`limit`, `offset`, a continuation, a text page's `length`), and
//!   the text says how many more there are and how to get them.
//! - [`output`]: every tool declares an `outputSchema`, and its `structuredContent`
//!   validates against it (`server/tests/answers.rs` checks both on the fakes, for every
//!   connector's tools).
//!
//! What this module does not do: cut answers (each tool pages its own answer, with its
//! platform's paging).

use std::sync::Arc;

use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;

/// The most a tool's default answer may take, as compact JSON of the whole result.
pub const ANSWER_BUDGET_BYTES: usize = 16 * 1024;

/// The output schema of a tool whose `structuredContent` is a `T` (the serialized form:
/// what `Serialize` writes, draft 2020-12, as rmcp publishes schemas).
pub fn output<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::tool::schema_for_output::<T>()
}
