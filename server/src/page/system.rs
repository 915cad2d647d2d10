//! The page's tool calls: a `tools/call` through the one entry point for tools
//! ([`Calls::call`]), as a resource read is, asked as BesluitBron's system session
//! (R-L7). So a page search has the tool's argument checks, buffer key, coalescing, fair
//! queue, limits, time limit and metrics; there is no second way to a platform.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use rmcp::model::JsonObject;
use serde_json::Value;

use crate::connectors::page_spec::{Hits, SystemTools};
use crate::identity::Caller;
use crate::mcp::route::Answer;
use crate::mcp::{Calls, ToolRequest};

/// Calls tools for the page.
pub struct SystemCalls {
    calls: Arc<Calls>,
    system: Arc<Caller>,
}

/// A tool's answer as the page reads it: its structured content, or the tool's error
/// message (bounded; it names the platform and what to do).
pub type ToolAnswer = Result<Value, String>;

impl SystemCalls {
    /// Calls over every connector's tools.
    pub fn new(calls: Arc<Calls>) -> SystemCalls {
        SystemCalls {
            calls,
            system: Arc::new(Caller::system()),
        }
    }

    /// The calls.
    pub fn calls(&self) -> &Arc<Calls> {
        &self.calls
    }

    /// Calls `tool` with `arguments` as the system session.
    pub async fn call(&self, tool: &str, arguments: JsonObject) -> ToolAnswer {
        let request = ToolRequest::internal(tool, arguments, Arc::clone(&self.system));
        let result = match self.calls.call(request).await {
            Ok(result) => result,
            Err(e) => return Err(e.message.to_string()),
        };
        if result.is_error == Some(true) {
            return Err(error_text(&result));
        }
        let mut structured = result
            .structured_content
            .ok_or_else(|| format!("{tool} gave no structured answer"))?;
        with_page_text(&mut structured, &result.content);
        Ok(structured)
    }
}

impl SystemCalls {
    /// Calls the search tool `tool` with `arguments` as the system session, answered as
    /// the search page's hits (typed, never read back from the tool's JSON), or the
    /// tool's error message.
    pub async fn hits(&self, tool: &str, arguments: JsonObject) -> Result<Hits, String> {
        match self.calls.hits(tool, arguments, Arc::clone(&self.system)).await {
            Ok(Answer::Hits(hits)) => Ok(*hits),
            Ok(Answer::Result(result)) if result.is_error == Some(true) => Err(error_text(&result)),
            // A result that stands for hits (an `organization` that is no one source,
            // answered with the candidates): nothing to show.
            Ok(Answer::Result(_)) => Ok(Hits::default()),
            Ok(Answer::Listed(_) | Answer::Document(_)) => {
                Err(format!("{tool} answered no hits where hits were asked"))
            }
            Err(e) => Err(e.message.to_string()),
        }
    }
}

/// A tool error's message (bounded; it names the platform and what to do).
fn error_text(result: &rmcp::model::CallToolResult) -> String {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    crate::platforms::http::bounded_text(&text.join(" "))
}

impl SystemTools for SystemCalls {
    fn call<'a>(
        &'a self,
        tool: &'static str,
        arguments: JsonObject,
    ) -> Pin<Box<dyn Future<Output = ToolAnswer> + Send + 'a>> {
        Box::pin(SystemCalls::call(self, tool, arguments))
    }
}

/// A document tool sends its page of text once, as the last `text_length` characters of
/// its text content (the structured content says where the page is); the page's views
/// read it as the structured content's `text`.
fn with_page_text(structured: &mut Value, content: &[rmcp::model::ContentBlock]) {
    let Some(length) = structured.get("text_length").and_then(Value::as_u64) else {
        return;
    };
    let Some(object) = structured.as_object_mut().filter(|o| !o.contains_key("text")) else {
        return;
    };
    let text: String = content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    let chars = text.chars().count();
    let skip = chars.saturating_sub(usize::try_from(length).unwrap_or(usize::MAX));
    object.insert("text".to_owned(), Value::String(text.chars().skip(skip).collect()));
}
