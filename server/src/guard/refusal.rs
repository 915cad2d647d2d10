//! The answers the guard refuses with: a JSON-RPC error object with its HTTP status and,
//! where waiting helps, a `Retry-After`.
//!
//! What it does not do: decide to refuse (the steps do).

use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde_json::json;

use super::state::GuardState;

/// A JSON-RPC error answer (id null) with `status`, and `Retry-After: retry_after` when
/// given.
pub fn json_error(status: StatusCode, code: i64, message: String, retry_after: Option<u64>) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    let mut response = (status, axum::Json(body)).into_response();
    if let Some(secs) = retry_after
        && let Ok(v) = HeaderValue::from_str(&secs.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

/// 503 for a request only the shared engine can decide, while it does not answer.
pub(super) fn shared_state_unreachable(
    state: &GuardState,
    op: &'static str,
    error: &crate::engine::EngineError,
) -> Response {
    tracing::warn!(%error, "the shared engine is unreachable");
    state.metrics.shared_state.fell_back(op, "sessions");
    json_error(
        StatusCode::SERVICE_UNAVAILABLE,
        -32000,
        "BesluitBron's shared state (Redis) is unreachable, and this MCP session is held by another replica; \
         retry in a few seconds"
            .into(),
        Some(5),
    )
}

/// 413 for a body over `limit` bytes.
pub(super) fn too_large(limit: usize) -> Response {
    json_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        -32600,
        format!("the request body exceeds {limit} bytes"),
        None,
    )
}
