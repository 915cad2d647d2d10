//! A connector's part in `search` on `/mcp` (one question over every platform with a
//! keyword search): [`KeywordSearch`] says which of its tools answers words, how the
//! shared question becomes that tool's arguments, and how the tool's structured content
//! reads as [`Found`] results in the shared vocabulary — or why it has no keyword search
//! and how to search it instead.
//!
//! The platform's own field names stay in the connector: a connector's `read` function
//! is the one place that knows them.

use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;
use serde_json::{Map, Value};

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
    /// The tool asked.
    pub tool: &'static str,
    /// Its arguments for the shared question.
    pub arguments: fn(&Asked) -> Map<String, Value>,
    /// The tool's structured content as results; `None` if it is not the tool's shape.
    pub read: fn(&Value) -> Option<Found>,
}

/// One platform's results, in the shared vocabulary.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct Found {
    /// Every result of the question at the platform, when it says.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// Whether `total` is exact (else the platform's estimate).
    pub total_is_exact: bool,
    /// The results shown.
    pub results: Vec<FoundItem>,
}

/// One result.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct FoundItem {
    /// What `tool` takes as `id`.
    pub id: String,
    /// The tool that reads it.
    pub tool: &'static str,
    /// Its title.
    pub title: String,
    /// Its date, as the platform writes it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub date: Option<String>,
    /// What kind of record it is, in the platform's words.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    /// The organisation it is of, where known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub organization: Option<String>,
    /// The original, where the platform gives an address.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// A string field of `v`.
pub fn text(v: &Value, field: &str) -> Option<String> {
    v.get(field)
        .and_then(Value::as_str)
        .map(str::to_owned)
        .filter(|s| !s.is_empty())
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
