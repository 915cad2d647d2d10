//! The measured request: which call the run makes (`--call`, `--protocol`), its bodies,
//! and the cheap checks of its answers.
//!
//! Invariants: the request is chosen once, before any client starts ([`CALL`]), and every
//! body of the run is built from it; JSON-RPC ids are never reused within a session (a
//! reused id would be answered from BesluitBron's replay table).
//!
//! What this module does not do: send anything (see `conn.rs`).

use serde_json::Value;

/// The MCP protocol version of the legacy (session) handshake.
pub(crate) const PROTOCOL_VERSION: &str = "2025-06-18";
/// The stateless protocol version: no handshake, no session, metadata on every request.
pub(crate) const STATELESS_VERSION: &str = "2026-07-28";
/// The `_meta` every stateless request carries.
pub(crate) const STATELESS_META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// The measured request, chosen once from `--call` and `--protocol`.
#[derive(Clone, Copy)]
pub(crate) struct Call {
    /// The connector's route the clients use (`/mcp/obv`).
    pub(crate) path: &'static str,
    /// The tool called, or `None` for `tools/list`.
    pub(crate) tool: Option<&'static str>,
    /// The tool's arguments, as JSON.
    pub(crate) arguments: &'static str,
    /// Whether the run speaks the stateless protocol (`--protocol 2026-07-28`).
    pub(crate) stateless: bool,
}

/// The measured request, set once by `main` before any client starts; [`call`] reads it.
pub(crate) static CALL: std::sync::OnceLock<Call> = std::sync::OnceLock::new();

impl Call {
    /// What the measured request asks.
    pub(crate) fn asks(self) -> Asks {
        self.tool.map_or(Asks::List, Asks::Call)
    }
}

/// What a request body asks, for the stateless era's routing headers (SEP-2243), which
/// must match the body.
#[derive(Clone, Copy)]
pub(crate) enum Asks {
    /// `tools/list`.
    List,
    /// `tools/call` of this tool.
    Call(&'static str),
    /// The legacy handshake (`initialize`, `notifications/initialized`): no routing headers.
    Handshake,
}

/// The measured request: what `main` set in [`CALL`], or the default (`obv_sources` over
/// the 2025-06-18 protocol) before that.
pub(crate) fn call() -> Call {
    CALL.get().copied().unwrap_or(Call {
        path: "/mcp/obv",
        tool: Some("obv_sources"),
        arguments: "{}",
        stateless: false,
    })
}

/// A `tools/list` request with JSON-RPC id `id`.
pub(crate) fn list_body(id: u64) -> Vec<u8> {
    if call().stateless {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list","params":{{{STATELESS_META}}}}}"#).into_bytes()
    } else {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#).into_bytes()
    }
}

/// The measured `tools/call` (see `--call`) with JSON-RPC id `id` (ids are never reused
/// within a session: a reused id would be answered from the replay table).
pub(crate) fn call_body(id: u64) -> Vec<u8> {
    let call = call();
    let meta = if call.stateless { STATELESS_META } else { "" };
    match call.tool {
        // Not a tool call: the MCP stack's own cost per request, for comparison.
        None => list_body(id),
        Some(tool) => {
            let sep = if meta.is_empty() { "" } else { "," };
            let arguments = call.arguments;
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}{sep}{meta}}}}}"#
            )
            .into_bytes()
        }
    }
}

/// The JSON-RPC message in a JSON or SSE body (the last `data:` line with an answer).
pub(crate) fn jsonrpc_message(body: &[u8]) -> Option<Value> {
    let text = std::str::from_utf8(body).ok()?;
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .rfind(|v| v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some()))
}

/// A cheap check of every answer in the run (a full parse would cost the client more CPU
/// than the echo server spends): a JSON-RPC result that is not a tool error.
pub(crate) fn answer_ok(body: &[u8]) -> bool {
    contains(body, br#""result":"#) && !contains(body, br#""isError":true"#)
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}
