//! The JSON-RPC envelope the guard reads of a POST's body: whether it is one JSON-RPC 2.0
//! message object, whether it is `initialize`, and the protocol version its `_meta` names;
//! and the answer to a message whose envelope is sound but which rmcp cannot read.
//!
//! Invariants: the body is checked as UTF-8 and JSON whole, but no JSON tree of it is
//! built and nothing of it is copied on the common path. What it does not do: parse the
//! message beyond its envelope (rmcp does).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

use crate::identity;

use super::refusal::json_error;

/// The fields of a JSON-RPC message the guard needs; rmcp parses the rest.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
    /// Only its type matters; a deeply nested id is refused by the parser's depth limit.
    #[serde(default)]
    id: Option<serde_json::Value>,
    #[serde(borrow, default)]
    params: Option<ParamsMeta<'a>>,
}

/// The request's own protocol version, if its `_meta` carries one (2026-07-28).
#[derive(serde::Deserialize)]
struct ParamsMeta<'a> {
    #[serde(borrow, default, rename = "_meta")]
    meta: Option<MetaVersion<'a>>,
}

#[derive(serde::Deserialize)]
struct MetaVersion<'a> {
    #[serde(borrow, default, rename = "io.modelcontextprotocol/protocolVersion")]
    protocol_version: Option<std::borrow::Cow<'a, str>>,
}

/// What the guard takes from a message on every request (nothing of it is copied).
#[derive(Clone, Copy, Default)]
pub(super) struct EnvelopeFacts {
    pub(super) initialize: bool,
    /// Whether the request's own protocol version (its `_meta`'s, 2026-07-28) is one of
    /// the stateless era; `None` when it names none.
    pub(super) stateless_version: Option<bool>,
}

impl EnvelopeFacts {
    fn of(envelope: &Envelope<'_>) -> EnvelopeFacts {
        EnvelopeFacts {
            initialize: envelope.method.as_deref() == Some("initialize"),
            stateless_version: protocol_version(envelope).map(identity::is_stateless_version),
        }
    }
}

/// What the guard takes from `body`'s envelope, or the answer refusing a body that is not
/// one JSON-RPC 2.0 message object.
pub(super) fn facts(body: &[u8]) -> Result<EnvelopeFacts, Response> {
    read_envelope(body)
        .map(|envelope| EnvelopeFacts::of(&envelope))
        .map_err(BadBody::response)
}

/// The protocol version a message's `_meta` names.
fn protocol_version<'a>(envelope: &'a Envelope<'_>) -> Option<&'a str> {
    envelope
        .params
        .as_ref()
        .and_then(|p| p.meta.as_ref())
        .and_then(|m| m.protocol_version.as_deref())
}

/// The answer to a JSON-RPC message (`body`) whose envelope is sound but which rmcp
/// cannot read: 400 with -32600 for an id of a type JSON-RPC does not allow, else -32602
/// (the params do not fit the method), with the id when it is one (a string of at most
/// 200 characters, or an integer). The envelope is read again here, on this rare path,
/// so that the common one copies nothing out of it.
pub(super) fn unreadable_message(body: &[u8]) -> Response {
    let envelope = match read_envelope(body) {
        Ok(envelope) => envelope,
        Err(bad) => return bad.response(),
    };
    let (id, bad_id) = match &envelope.id {
        None | Some(serde_json::Value::Null) => (serde_json::Value::Null, false),
        Some(serde_json::Value::String(s)) if s.chars().count() <= 200 => (json!(s), false),
        Some(serde_json::Value::Number(n)) if n.is_i64() || n.is_u64() => (json!(n), false),
        Some(_) => (serde_json::Value::Null, true),
    };
    let method = envelope.method.as_deref().filter(|m| m.len() <= 64);
    let (code, message) = match (bad_id, method) {
        (true, _) => (
            -32600,
            "invalid request: `id` must be a string or an integer".to_owned(),
        ),
        (false, Some(method)) => (
            -32602,
            format!("invalid params: `params` does not have the shape `{method}` takes"),
        ),
        (false, None) => (
            -32600,
            "invalid request: not a JSON-RPC request, notification or response BesluitBron reads".to_owned(),
        ),
    };
    let body = json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}});
    (StatusCode::BAD_REQUEST, axum::Json(body)).into_response()
}

/// Why a body is not one JSON-RPC 2.0 message object.
enum BadBody {
    /// Not JSON at all (-32700).
    NotJson(serde_json::Error),
    /// JSON of another shape (-32600).
    NotJsonRpc,
    /// Not UTF-8 from this byte on (-32700).
    NotUtf8(usize),
}

impl BadBody {
    fn response(self) -> Response {
        match self {
            BadBody::NotJson(e) => json_error(
                StatusCode::BAD_REQUEST,
                -32700,
                format!("parse error: the body is not JSON ({e})"),
                None,
            ),
            BadBody::NotUtf8(at) => json_error(
                StatusCode::BAD_REQUEST,
                -32700,
                format!("parse error: the body is not UTF-8 (at byte {at})"),
                None,
            ),
            BadBody::NotJsonRpc => json_error(
                StatusCode::BAD_REQUEST,
                -32600,
                "invalid request: expected one JSON-RPC 2.0 message object with \"jsonrpc\": \"2.0\"".into(),
                None,
            ),
        }
    }
}

/// What the guard reads of a request body: `Ok((initialize, protocol version))`, or
/// the JSON-RPC error code it answers with (the fuzz target's entry point).
#[cfg(any(test, fuzzing))]
pub fn envelope_of(bytes: &[u8]) -> Result<(bool, Option<String>), i64> {
    match read_envelope(bytes) {
        Ok(envelope) => Ok((
            EnvelopeFacts::of(&envelope).initialize,
            protocol_version(&envelope).map(str::to_owned),
        )),
        Err(BadBody::NotJson(_) | BadBody::NotUtf8(_)) => Err(-32700),
        Err(BadBody::NotJsonRpc) => Err(-32600),
    }
}

/// Checks that `bytes` is one JSON-RPC 2.0 message object, without building a JSON tree of
/// the whole body (rmcp parses it next).
fn read_envelope(bytes: &[u8]) -> Result<Envelope<'_>, BadBody> {
    // JSON text is UTF-8; the envelope's reader skips the fields it does not name
    // without looking inside their strings, so the whole body is checked first.
    let text = std::str::from_utf8(bytes).map_err(|e| BadBody::NotUtf8(e.valid_up_to()))?;
    if text.trim_start().as_bytes().first() != Some(&b'{') {
        return Err(not_json_rpc(text));
    }
    match serde_json::from_str::<Envelope<'_>>(text) {
        Ok(envelope) if envelope.jsonrpc.as_deref() == Some("2.0") => Ok(envelope),
        Ok(_) => Err(BadBody::NotJsonRpc),
        // A field of the wrong type stops the reading before the rest is seen: the whole
        // body decides whether it is JSON at all.
        Err(e) if e.classify() == serde_json::error::Category::Data => Err(not_json_rpc(text)),
        Err(e) => Err(BadBody::NotJson(e)),
    }
}

/// Why `text`, which is not a JSON-RPC message, is refused: not JSON's grammar, or JSON
/// of another shape.
fn not_json_rpc(text: &str) -> BadBody {
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Ok(_) => BadBody::NotJsonRpc,
        Err(e) => BadBody::NotJson(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_names_the_method_and_the_requests_own_protocol_version() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":[1,2]},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        assert_eq!(envelope_of(body), Ok((false, Some("2026-07-28".to_owned()))));
        let facts = EnvelopeFacts::of(&read_envelope(body).ok().expect("valid"));
        assert_eq!((facts.initialize, facts.stateless_version), (false, Some(true)));
        let init = br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#;
        assert_eq!(envelope_of(init), Ok((true, None)));
        let facts = EnvelopeFacts::of(&read_envelope(init).ok().expect("valid"));
        assert_eq!((facts.initialize, facts.stateless_version), (true, None));
        assert!(matches!(
            read_envelope(br#"{"jsonrpc":"2.0","params":[1]}"#),
            Err(BadBody::NotJsonRpc)
        ));
        assert!(matches!(read_envelope(b"{nope"), Err(BadBody::NotJson(_))));
    }

    /// Found by the `envelope` fuzz target: invalid UTF-8 inside a key. Not JSON (-32700),
    /// although a grammar-only reader skips over it.
    #[test]
    fn regression_invalid_utf8_in_a_key_is_not_json() {
        let body = b"{\"jsonrpc\":\"2.0\",\"id\xff\xff\xff\xff\xff\xff\xff\xff\xff\":0,\"method\":\"initialize\"}";
        assert_eq!(envelope_of(body), Err(-32700));
    }

    /// Found by the `envelope` fuzz target: a field of the wrong type in a body that is
    /// cut short is not JSON (-32700), not "another shape" (-32600).
    #[test]
    fn regression_a_wrong_field_type_in_broken_json_is_not_json() {
        assert_eq!(envelope_of(br#"{"jsonrpc":{""2"#), Err(-32700));
        assert_eq!(envelope_of(br#"{"jsonrpc":{"a":2}}"#), Err(-32600));
        assert_eq!(envelope_of(b"\"\xff\""), Err(-32700));
    }

    /// Found by the `envelope` fuzz target: invalid UTF-8 in a string of a field the
    /// guard does not read was let through to rmcp (which answered 415 in plain text).
    #[test]
    fn regression_invalid_utf8_anywhere_in_the_body_is_not_json() {
        let body = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"clientInfo\":{\"version\":\"1\xee\"}}}";
        assert_eq!(envelope_of(body), Err(-32700));
    }

    #[test]
    fn headers_without_a_body_are_a_session_era_request() {
        let h = axum::http::HeaderMap::new();
        assert_eq!(identity::protocol_version(&h), None);
    }
}
