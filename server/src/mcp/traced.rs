//! The server span of an MCP request ([`crate::telemetry::spans::mcp_request`]), from what
//! the request says: its trace context (`params._meta`, else the HTTP headers), its
//! JSON-RPC id, its session and protocol version, and the caller the guard decided.
//!
//! What it does not do: decide anything about the request. A request without trace
//! context, or with a malformed one, starts a trace of its own.

use rmcp::model::{CallToolResponse, MetaObject, ReadResourceRequestParams};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use tracing::Span;

use crate::identity::Caller;
use crate::telemetry::context;
use crate::telemetry::spans::{self, McpRequest};

/// The span of a `resources/read`.
pub fn resource_span(
    request: &ReadResourceRequestParams,
    context: &RequestContext<RoleServer>,
    caller: &Caller,
) -> Span {
    let meta = request.meta.as_deref();
    spans_of("resources/read", (None, Some(&request.uri)), meta, context, caller)
}

/// The span of a `method` request naming `target` (a tool), with its params' `_meta`.
pub fn request_span(
    method: &'static str,
    target: Option<&str>,
    meta: Option<&MetaObject>,
    context: &RequestContext<RoleServer>,
    caller: &Caller,
) -> Span {
    spans_of(method, (target, None), meta, context, caller)
}

/// The span of a `method` request naming `target` (a tool) or `resource` (a URI).
fn spans_of(
    method: &'static str,
    (target, resource): (Option<&str>, Option<&str>),
    meta: Option<&MetaObject>,
    context: &RequestContext<RoleServer>,
    caller: &Caller,
) -> Span {
    let headers = context
        .extensions
        .get::<axum::http::request::Parts>()
        .map(|p| &p.headers);
    // rmcp keeps the request's `_meta` on the context; the params' own is read too.
    let from_meta = match pair(&context.meta) {
        (None, _) => meta.map_or((None, None), pair),
        found => found,
    };
    let incoming = context::incoming(from_meta, headers);
    let request = McpRequest {
        method,
        target,
        request_id: Some(context.id.to_string()),
        session: caller.session_id.as_deref(),
        protocol_version: context.protocol_version().map(|v| v.to_string()),
        client_address: Some(&caller.address),
        resource_uri: resource,
    };
    spans::mcp_request(&request, &incoming)
}

/// A `_meta`'s `traceparent` and `tracestate`.
fn pair(meta: &MetaObject) -> (Option<&str>, Option<&str>) {
    (meta.get_traceparent(), meta.get_tracestate())
}

/// How a `tools/call` ended, on its span: a tool result marked as an error is
/// `tool_error` (the MCP conventions' word), a protocol error its JSON-RPC code.
pub fn call_outcome(span: &Span, answer: &Result<CallToolResponse, ErrorData>) {
    match answer {
        Ok(CallToolResponse::Complete(result)) if result.is_error == Some(true) => {
            spans::mcp_outcome(span, Some("tool_error"), None);
        }
        Ok(_) => {}
        Err(error) => spans::mcp_outcome(span, Some(rpc_error_type(error.code.0)), Some(error.code.0)),
    }
}

/// The JSON-RPC error code's name, as `error.type`.
fn rpc_error_type(code: i32) -> &'static str {
    match code {
        -32700 => "parse_error",
        -32600 => "invalid_request",
        -32601 => "method_not_found",
        -32602 => "invalid_params",
        -32603 => "internal_error",
        _ => "jsonrpc_error",
    }
}
