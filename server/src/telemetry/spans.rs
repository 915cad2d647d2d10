//! The spans of one call, from the assistant's request to the platform, named and
//! attributed per OpenTelemetry's MCP and HTTP semantic conventions (docs/tracing.md lists
//! them):
//!
//! ```text
//! tools/call <tool>            server  the MCP request (mcp_request)
//! └ besluitbron.platform_call  internal  one platform answer a tool asks for: how it was served
//!   ├ besluitbron.buffer_lookup          the buffer: memory layer, then the store
//!   ├ besluitbron.queue_wait             the fair queue, from arrival to admission
//!   └ besluitbron.attempt                one admitted attempt and its outcome (each retry one)
//!     └ GET                    client  the HTTP request to the platform
//! ```
//!
//! Every span but the request's is at DEBUG under [`super::TARGET`]: the log's default
//! filter leaves them out, so with exporting off they are never made (a disabled span is a
//! constant check). The request span is at INFO and carries `trace_id`, so every log line
//! written while a request runs names its trace. Attributes only an exporter reads are
//! set through `OpenTelemetrySpanExt`, and only when exporting is on ([`super::exporting`]).

use opentelemetry::trace::{TraceContextExt, TraceId};
use opentelemetry_sdk::trace::{IdGenerator, RandomIdGenerator};
use tracing::Span;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

use super::context::Incoming;
use super::{TARGET, exporting};

/// What the server span of one MCP request says of it.
#[derive(Clone, Debug, Default)]
pub struct McpRequest<'a> {
    /// The JSON-RPC method (`tools/call`).
    pub method: &'static str,
    /// The tool (or prompt) it names, the span name's target.
    pub target: Option<&'a str>,
    /// The JSON-RPC request id, as text.
    pub request_id: Option<String>,
    /// The legacy session's id (`Mcp-Session-Id`); exported only as a digest.
    pub session: Option<&'a str>,
    /// The protocol version the request was made in.
    pub protocol_version: Option<String>,
    /// The client's address, as the guard decided it.
    pub client_address: Option<&'a str>,
    /// The resource a `resources/read` names.
    pub resource_uri: Option<&'a str>,
}

/// The server span of one MCP request, joined to the client's trace when `incoming`
/// names one. Its `trace_id` field (in every log line under it) is the trace's id: the
/// client's, else the one the exporter gave it, else one made here for the log alone.
pub fn mcp_request(request: &McpRequest<'_>, incoming: &Incoming) -> Span {
    let name = match request.target {
        Some(target) => format!("{} {target}", request.method),
        None => request.method.to_owned(),
    };
    let span = tracing::info_span!(
        target: TARGET,
        "mcp.request",
        otel.name = %name,
        otel.kind = "server",
        trace_id = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    rooted(&span, incoming);
    if exporting() {
        mcp_attributes(&span, request);
    }
    span
}

/// `span` joined to the trace `incoming` names, its `trace_id` field recorded.
fn rooted(span: &Span, incoming: &Incoming) {
    if incoming.source.is_some() {
        // Only fails when the span is not traced (exporting off): then its id is the client's.
        let _ = span.set_parent(incoming.context.clone());
    }
    let exported = span.context().span().span_context().trace_id();
    let trace_id = [Some(exported), incoming.trace_id()]
        .into_iter()
        .flatten()
        .find(|id| *id != TraceId::INVALID)
        .unwrap_or_else(|| RandomIdGenerator::default().new_trace_id());
    span.record("trace_id", tracing::field::display(trace_id));
}

/// A tool call forwarded to the replica that owns `platform` (several replicas): the
/// client span on the forwarding side; its `traceparent` goes with the forward.
pub fn forward_client(platform: &str, owner: &str) -> Span {
    tracing::debug_span!(
        target: TARGET,
        "besluitbron.forward",
        otel.kind = "client",
        besluitbron.platform = platform,
        server.address = owner,
    )
}

/// The owner's side of a forward: the server span of `tool`'s call, joined to the
/// forwarding replica's trace (`incoming`, from the forward's `traceparent`), its
/// `trace_id` in every log line under it.
pub fn forwarded(tool: &str, incoming: &Incoming) -> Span {
    let span = tracing::info_span!(
        target: TARGET,
        "besluitbron.forwarded",
        otel.kind = "server",
        besluitbron.tool = tool,
        trace_id = Empty,
    );
    if !span.is_disabled() {
        rooted(&span, incoming);
    }
    span
}

fn mcp_attributes(span: &Span, request: &McpRequest<'_>) {
    span.set_attribute("mcp.method.name", request.method);
    span.set_attribute("network.transport", "tcp");
    span.set_attribute("network.protocol.name", "http");
    if let Some(target) = request.target {
        span.set_attribute("gen_ai.tool.name", target.to_owned());
        span.set_attribute("gen_ai.operation.name", "execute_tool");
    }
    if let Some(id) = &request.request_id {
        span.set_attribute("jsonrpc.request.id", id.clone());
    }
    if let Some(session) = request.session {
        span.set_attribute("mcp.session.id", session_digest(session));
    }
    if let Some(version) = &request.protocol_version {
        span.set_attribute("mcp.protocol.version", version.clone());
    }
    if let Some(address) = request.client_address {
        span.set_attribute("client.address", address.to_owned());
    }
    if let Some(uri) = request.resource_uri {
        span.set_attribute("mcp.resource.uri", uri.to_owned());
    }
}

/// A session id as exported: the first 16 hex digits of its SHA-256. A session id lets
/// whoever holds it speak in the session, so a trace store never gets it whole.
fn session_digest(session: &str) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(session.as_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// How an MCP request ended, on its span: `error_type` (`tool_error` for a tool result
/// marked as an error, the JSON-RPC code's name for a protocol error) and the JSON-RPC
/// error code when the answer was one.
pub fn mcp_outcome(span: &Span, error_type: Option<&'static str>, rpc_code: Option<i32>) {
    if !exporting() {
        return;
    }
    if let Some(error_type) = error_type {
        span.set_attribute("error.type", error_type);
        span.set_status(opentelemetry::trace::Status::error(error_type));
    }
    if let Some(code) = rpc_code {
        span.set_attribute("rpc.response.status_code", code.to_string());
    }
}

/// One platform answer a tool asks for; [`served`] says how it was served.
pub fn platform_call(platform: &str, tool: &str) -> Span {
    tracing::debug_span!(
        target: TARGET,
        "besluitbron.platform_call",
        besluitbron.platform = platform,
        besluitbron.tool = tool,
        besluitbron.served = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    )
}

/// How a platform call was served: `buffer_hit`, `asked`, `coalesced`, `stale`; or how it
/// failed (`refused` by BesluitBron's full queue, `failed` at the platform with its
/// `error_type`, `moved` to another replica, `cancelled`).
pub fn served(span: &Span, how: &'static str, error_type: Option<&'static str>) {
    span.record("besluitbron.served", how);
    if let Some(error_type) = error_type {
        span.record("error.type", error_type);
        span.record("otel.status_code", "ERROR");
    }
}

/// A look into the buffer: `layer` is `memory` (in the caller's task) or `store` (the
/// platform's task, the persistent buffer behind it). Record the finding with [`found`].
pub fn buffer_lookup(layer: &'static str) -> Span {
    tracing::debug_span!(
        target: TARGET,
        "besluitbron.buffer_lookup",
        besluitbron.buffer.layer = layer,
        besluitbron.buffer.hit = Empty,
    )
}

/// What a buffer lookup found.
pub fn found(span: &Span, hit: bool) {
    span.record("besluitbron.buffer.hit", hit);
}

/// Where a call waits in its lane's fair queue, from its arrival: `ahead` calls queued at
/// the lane, `sessions` sessions waiting there. Ended by [`admitted`].
pub fn queue_wait(parent: &Span, lane: &'static str, ahead: usize, sessions: usize) -> Span {
    tracing::debug_span!(
        target: TARGET,
        parent: parent,
        "besluitbron.queue_wait",
        besluitbron.queue.lane = lane,
        besluitbron.queue.position = ahead,
        besluitbron.queue.waiting_sessions = sessions,
        besluitbron.queue.outcome = "queued",
        besluitbron.queue.waited_ms = Empty,
    )
}

/// The queue let the call go after `waited_ms` (none on a lane without a limit).
pub fn admitted(span: &Span, waited_ms: Option<u64>) {
    span.record("besluitbron.queue.outcome", "admitted");
    if let Some(ms) = waited_ms {
        span.record("besluitbron.queue.waited_ms", ms);
    }
}

/// One admitted attempt of a platform call (`number` 1, then each retry and each ask
/// again after a 429), after `waited_ms` in the queue. Its outcome: [`attempt_outcome`].
pub fn attempt(parent: &Span, number: u32, waited_ms: Option<u64>) -> Span {
    tracing::debug_span!(
        target: TARGET,
        parent: parent,
        "besluitbron.attempt",
        besluitbron.attempt.number = number,
        besluitbron.queue.waited_ms = waited_ms,
        besluitbron.attempt.outcome = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    )
}

/// How an attempt ended: `ok`, `revalidated` (the platform confirmed the copy kept),
/// `rate_limited` (a 429 or the platform's own overload signal: queued again), `retryable`
/// (another attempt follows when the policy allows) or `failed`.
pub fn attempt_outcome(span: &Span, outcome: &'static str, error_type: Option<&'static str>) {
    span.record("besluitbron.attempt.outcome", outcome);
    if let Some(error_type) = error_type {
        span.record("error.type", error_type);
        span.record("otel.status_code", "ERROR");
    }
}

/// The HTTP client span of one request to a platform: `method` to `url` (its credentials
/// and query secrets redacted, [`url_full`]).
pub fn http_client(method: &'static str, url: &reqwest::Url) -> Span {
    let span = tracing::debug_span!(
        target: TARGET,
        "http.client",
        otel.name = method,
        otel.kind = "client",
        http.request.method = method,
        url.full = Empty,
        server.address = url.host_str().unwrap_or_default(),
        server.port = url.port_or_known_default(),
        http.response.status_code = Empty,
        error.type = Empty,
        otel.status_code = Empty,
    );
    if !span.is_disabled() {
        span.record("url.full", url_full(url));
    }
    span
}

/// The platform's answer: its status (an error from 400 on, as the HTTP conventions have
/// it for a client), or the failure that left none (`error_type`).
pub fn http_outcome(span: &Span, status: Option<u16>, error_type: Option<&'static str>) {
    if let Some(status) = status {
        span.record("http.response.status_code", status);
        if status >= 400 {
            span.record("error.type", status.to_string());
            span.record("otel.status_code", "ERROR");
        }
    }
    if let Some(error_type) = error_type {
        span.record("error.type", error_type);
        span.record("otel.status_code", "ERROR");
    }
}

/// Query parameters whose values are secrets (the HTTP conventions' list and the usual
/// names of keys and tokens), compared without case.
const SECRET_PARAMETERS: [&str; 11] = [
    "awsaccesskeyid",
    "signature",
    "sig",
    "x-goog-signature",
    "key",
    "api_key",
    "apikey",
    "token",
    "access_token",
    "secret",
    "password",
];

/// `url` as `url.full` records it: credentials as `REDACTED:REDACTED`, the values of
/// secret query parameters as `REDACTED`, no fragment.
pub fn url_full(url: &reqwest::Url) -> String {
    let mut out = url.clone();
    out.set_fragment(None);
    if !out.username().is_empty() || out.password().is_some() {
        let _ = out.set_username("REDACTED");
        let _ = out.set_password(Some("REDACTED"));
    }
    let secret = |name: &str| SECRET_PARAMETERS.iter().any(|s| s.eq_ignore_ascii_case(name));
    if url.query_pairs().any(|(name, _)| secret(&name)) {
        let pairs: Vec<(String, String)> = url
            .query_pairs()
            .map(|(name, value)| {
                let value = if secret(&name) { "REDACTED".into() } else { value };
                (name.into_owned(), value.into_owned())
            })
            .collect();
        out.query_pairs_mut().clear().extend_pairs(pairs);
    }
    out.to_string()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// What a log writes, kept.
    #[derive(Clone, Default)]
    struct Lines(Arc<Mutex<Vec<u8>>>);

    impl std::io::Write for Lines {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().expect("lines lock").extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn every_log_line_under_a_request_names_its_trace() {
        let lines = Lines::default();
        let writer = lines.clone();
        let log = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        let client = "0af7651916cd43dd8448eb211c80319c";
        tracing::subscriber::with_default(log, || {
            let request = McpRequest {
                method: "tools/call",
                target: Some("obv_search"),
                ..McpRequest::default()
            };
            let traceparent = format!("00-{client}-b7ad6b7169203331-01");
            let incoming = super::super::context::incoming((Some(&traceparent), None), None);
            mcp_request(&request, &incoming).in_scope(|| tracing::warn!("the platform is slow"));
            mcp_request(&request, &Incoming::root()).in_scope(|| tracing::warn!("a call of its own"));
        });
        let text = String::from_utf8(lines.0.lock().expect("lines lock").clone()).expect("utf-8");
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 2, "{text}");
        assert!(lines[0].contains(&format!("trace_id={client}")), "{}", lines[0]);
        let own = lines[1]
            .split("trace_id=")
            .nth(1)
            .expect("a trace id")
            .get(..32)
            .expect("32 digits");
        assert!(
            own.chars().all(|c| c.is_ascii_hexdigit()) && own != client,
            "{}",
            lines[1]
        );
    }

    #[test]
    fn url_full_hides_credentials_and_query_secrets_only() {
        let url = |s: &str| reqwest::Url::parse(s).expect("url");
        assert_eq!(
            url_full(&url("https://user:pw@api.example/x?q=raad&api_key=s3cret&Sig=abc#frag")),
            "https://REDACTED:REDACTED@api.example/x?q=raad&api_key=REDACTED&Sig=REDACTED"
        );
        let plain = "https://data.example/zoek?query=motie+woningbouw&page=2";
        assert_eq!(url_full(&url(plain)), plain);
    }

    #[test]
    fn a_session_is_exported_as_a_digest() {
        let digest = session_digest("6f1c2d3e-session");
        assert_eq!(digest.len(), 16);
        assert!(!digest.contains("session"));
        assert_eq!(digest, session_digest("6f1c2d3e-session"));
    }
}
