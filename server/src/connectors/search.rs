//! A connector's part in `search` on `/mcp` (one question over every platform with a
//! keyword search): [`KeywordSearch`] says which of its tools answers words and how the
//! shared question becomes that tool's arguments — or why it has no keyword search and
//! how to search it instead. The tool's answer needs no reading of its own: every tool
//! answers in the shared vocabulary ([`crate::connectors::vocabulary`]).

use serde_json::{Map, Value};

use super::tool::ToolSpec;

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
    /// The tool asked: `search` runs its function, as a call of that tool.
    pub tool: &'static ToolSpec,
    /// Its arguments for the shared question, in the tool's own words: checked by its
    /// schema's rules and read by its function here, or carried to the platform's owner
    /// when another replica owns it.
    pub arguments: fn(&Asked) -> Map<String, Value>,
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
