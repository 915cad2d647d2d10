//! The page's tool calls: a `tools/call` of the handler itself (as `resources/read` is),
//! asked as BesluitBron's system session (R-L7). So a page search has the tool's
//! argument checks, buffer key, coalescing, fair queue, limits, time limit and metrics;
//! there is no second way to a platform.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use rmcp::model::{CallToolRequestParams, CallToolResponse, JsonObject, NumberOrString};
use rmcp::service::{Peer, RequestContext, RunningService};
use rmcp::{RoleServer, ServerHandler};
use serde_json::Value;
use tokio::io::DuplexStream;

use crate::mcp::{Besluit, Caller, Scope, Shared};

/// Calls tools for the page.
pub struct SystemCalls {
    handler: Besluit,
    /// A request context needs a peer. The page asks for no progress, so nothing is ever
    /// sent to it; the idle service behind it holds the peer's channel open.
    peer: Peer<RoleServer>,
    _service: RunningService<RoleServer, Besluit>,
    _other_end: DuplexStream,
    next_id: AtomicI64,
}

/// A tool's answer as the page reads it: its structured content, or the tool's error
/// message (bounded; it names the platform and what to do).
pub type ToolAnswer = Result<Value, String>;

impl SystemCalls {
    /// Calls over every connector's tools. Must run inside a tokio runtime.
    pub fn new(shared: Arc<Shared>) -> SystemCalls {
        let handler = Besluit::new(shared, Scope::All);
        let (ours, other_end) = tokio::io::duplex(1024);
        let service = rmcp::service::serve_directly(handler.clone(), ours, None);
        let peer = service.peer().clone();
        SystemCalls {
            handler,
            peer,
            _service: service,
            _other_end: other_end,
            next_id: AtomicI64::new(1),
        }
    }

    /// The handler's tools.
    pub fn handler(&self) -> &Besluit {
        &self.handler
    }

    /// Calls `tool` with `arguments` as the system session.
    pub async fn call(&self, tool: &'static str, arguments: JsonObject) -> ToolAnswer {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut context = RequestContext::new(NumberOrString::Number(id), self.peer.clone());
        let (mut parts, ()) = axum::http::Request::new(()).into_parts();
        parts.extensions.insert(Arc::new(Caller::system()));
        context.extensions.insert(parts);
        let request = CallToolRequestParams::new(tool).with_arguments(arguments);
        let result = match self.handler.call_tool(request, context).await {
            Ok(CallToolResponse::Complete(result)) => result,
            Ok(_) => return Err(format!("{tool} did not answer")),
            Err(e) => return Err(e.message.to_string()),
        };
        if result.is_error == Some(true) {
            let text: Vec<&str> = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                .collect();
            return Err(crate::platforms::http::bounded_text(&text.join(" ")));
        }
        let mut structured = result
            .structured_content
            .ok_or_else(|| format!("{tool} gave no structured answer"))?;
        with_page_text(&mut structured, &result.content);
        Ok(structured)
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
