//! The guard's steps, each a function from what the request has shown so far to what the
//! next step needs, or to its refusal (`Err`, the response itself): the client's address,
//! shutting down, the access token, the page's own Origin, ending an unknown session, the
//! body and its envelope, another user's session, the client limits, and a new session's
//! limits and cap.
//!
//! Invariants: a step that refuses takes nothing from a limit layer after it; the body is
//! read once, within `max_body_bytes` and the body-read time. What it does not do: put the
//! steps in order (`service.rs` does) or read the envelope's fields (`envelope.rs`).

use std::net::SocketAddr;
use std::sync::atomic::Ordering;
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{Method, StatusCode, header};
use axum::response::Response;
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};

use crate::auth::Verdict;
use crate::engine::limits::{Asking, SessionStatus};
use crate::identity::Caller;
use crate::metrics::LayerLabel;

use super::envelope::{self, EnvelopeFacts};
use super::origin::own_loopback_origin;
use super::refusal::{json_error, shared_state_unreachable, too_large};
use super::state::{GuardState, RouteGuard};

/// The client's socket address, which the listener puts in every request.
pub(super) fn client_peer(request: &Request) -> Result<SocketAddr, Response> {
    let Some(ConnectInfo(peer)) = request.extensions().get::<ConnectInfo<SocketAddr>>().copied() else {
        // Only a listener serving with connect info reaches here; anything else is a bug.
        return Err(json_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            -32603,
            "BesluitBron could not tell the client's address".into(),
            None,
        ));
    };
    Ok(peer)
}

/// 503 once shutdown has begun.
pub(super) fn refuse_while_shutting_down(state: &GuardState) -> Result<(), Response> {
    if !state.accepting.load(Ordering::SeqCst) {
        return Err(json_error(
            StatusCode::SERVICE_UNAVAILABLE,
            -32000,
            "BesluitBron is shutting down; retry shortly".into(),
            Some(5),
        ));
    }
    Ok(())
}

/// The user of the request's access token, or none; the refusal of a token not valid
/// where one is asked for.
pub(super) async fn authenticate(
    state: &GuardState,
    headers: &axum::http::HeaderMap,
    path: &str,
) -> Result<Option<String>, Response> {
    // The access token, before anything else is read: without a valid one (where one is
    // asked for) nothing of the request is looked at.
    match &state.auth {
        Some(auth) => match auth.check(headers).await {
            Verdict::Anonymous => Ok(None),
            Verdict::User(user) => Ok(Some(user.as_str().to_owned())),
            Verdict::Refused(refusal) => {
                state
                    .metrics
                    .throttled
                    .get_or_create(&LayerLabel { layer: "auth" })
                    .inc();
                Err(auth.refuse(&refusal, path))
            }
        },
        None => Ok(None),
    }
}

/// Drops the Origin of a page of this server's own loopback address.
pub(super) fn pass_own_loopback_origin(state: &GuardState, request: &mut Request) {
    // A page of this server's own loopback address is no cross-origin caller: its Origin
    // has been judged here, so rmcp's Origin check (configured origins, or none) does not
    // see it. Every other Origin goes on to that check unchanged.
    let listening = request
        .extensions()
        .get::<crate::listen::Listening>()
        .map_or(state.config.listen, |l| l.0);
    if own_loopback_origin(request.headers(), listening) {
        request.headers_mut().remove(header::ORIGIN);
    }
}

/// 404 for a DELETE of a session no replica holds.
pub(super) async fn refuse_ending_an_unknown_session(
    route: &RouteGuard,
    method: &Method,
    named_session: Option<&str>,
) -> Result<(), Response> {
    // Ending a session that does not exist here (never did, or already ended) is a 404,
    // as for any other request naming it; rmcp would accept it.
    if method == Method::DELETE
        && let Some(id) = named_session
        && !route.sessions.holds(id).await
    {
        // With several replicas, a session another replica holds is ended here too.
        let elsewhere = match &route.store {
            Some(store) => match store.exists(id).await {
                Ok(exists) => exists,
                Err(error) => return Err(shared_state_unreachable(&route.state, "session_exists", &error)),
            },
            None => false,
        };
        if !elsewhere {
            return Err(json_error(
                StatusCode::NOT_FOUND,
                -32600,
                "no such MCP session at this address (it ended, or never existed)".into(),
                None,
            ));
        }
    }
    Ok(())
}

/// What the guard read of a request's body: the bytes (a POST's), what its envelope
/// says, and whether it was sent as JSON.
pub(super) struct Message {
    pub(super) bytes: Option<axum::body::Bytes>,
    pub(super) facts: EnvelopeFacts,
    pub(super) json_body: bool,
}

/// A POST's body, read once within `max_body_bytes` and the body-read time, and its
/// envelope checked; other methods carry none.
pub(super) async fn read_message(
    state: &GuardState,
    parts: &axum::http::request::Parts,
    body: Body,
) -> Result<Message, Response> {
    if parts.method != Method::POST {
        return Ok(Message {
            bytes: None,
            facts: EnvelopeFacts::default(),
            json_body: false,
        });
    }
    let limit = state.config.max_body_bytes;
    if parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > limit)
    {
        drain(body).await;
        return Err(too_large(limit));
    }
    let within = Duration::from_secs(state.config.connections.body_read_timeout_secs);
    let bytes = match tokio::time::timeout(within, axum::body::to_bytes(body, limit)).await {
        Ok(Ok(b)) => b,
        Ok(Err(_)) => return Err(too_large(limit)),
        Err(_) => {
            return Err(json_error(
                StatusCode::REQUEST_TIMEOUT,
                -32600,
                format!("the request body did not arrive within {} s", within.as_secs()),
                None,
            ));
        }
    };
    let facts = envelope::facts(&bytes)?;
    Ok(Message {
        bytes: Some(bytes),
        facts,
        json_body: is_json_content_type(&parts.headers),
    })
}

/// At most this much of a refused body is read and dropped before the refusal is sent.
const DRAIN_BYTES: usize = 4 << 20;
/// And for at most this long.
const DRAIN_WITHIN: Duration = Duration::from_secs(2);

/// Reads and drops what a client still sends of a body refused by its declared length
/// (bounded by `DRAIN_BYTES` and `DRAIN_WITHIN`): a connection closed with unread bytes is
/// reset, and a client still writing would then see a broken connection instead of the 413.
async fn drain(body: Body) {
    use futures_util::StreamExt;
    let mut data = body.into_data_stream();
    let reading = async {
        let mut read = 0usize;
        while let Some(Ok(chunk)) = data.next().await {
            read += chunk.len();
            if read > DRAIN_BYTES {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(DRAIN_WITHIN, reading).await;
}

/// 404 for a session opened with another user's token (or with one, asked without).
pub(super) fn refuse_another_users_session(
    state: &GuardState,
    named: Option<&str>,
    user: Option<&str>,
) -> Result<(), Response> {
    // A session opened with a token is its user's alone: to anyone else it does not exist.
    if let Some(id) = named
        && !state.may_use_session(id, user)
    {
        return Err(json_error(
            StatusCode::NOT_FOUND,
            -32600,
            "no such MCP session at this address (it ended, or never existed)".into(),
            None,
        ));
    }
    Ok(())
}

/// The session the request is in (if any), the client limits' verdict, and the fairness
/// key when the local limits gave it.
pub(super) type Admission = (
    Option<String>,
    Result<(), besluitbron_core::limits::Throttled>,
    Option<besluitbron_core::SessionKey>,
);

/// The client limits, taken for the request in session `named` (`held` here or not).
pub(super) async fn take_client_limits(
    route: &RouteGuard,
    now: besluitbron_core::Instant,
    named: Option<String>,
    held: bool,
    address: &str,
    user: Option<&str>,
) -> Result<Admission, Response> {
    let state = &route.state;
    // With several replicas, one round trip to the shared engine both reads the session
    // (another replica's, to restore here; or ended by a DELETE elsewhere) and takes the
    // client limits; the local limits answer while the engine does not.
    let (Some(shared), Some(store)) = (&state.shared_limits, &route.store) else {
        let session = named.filter(|_| held);
        let (key, verdict) = local_limits(state, now, route.connector, user, session.as_deref(), address);
        return Ok((session, verdict, Some(key)));
    };
    let asking = Asking {
        route: store.route(),
        connector: route.connector,
        session: named.as_deref(),
        held,
        address,
        user,
        idle_ms: store.idle_ms(),
    };
    let admitted = shared.admit(now, &asking).await;
    match admitted {
        Ok(a) if a.status == SessionStatus::Ended && named.is_some() => {
            if let Some(id) = &named
                && held
            {
                let _ = route.sessions.close_session(&SessionId::from(id.as_str())).await;
            }
            Err(json_error(
                StatusCode::NOT_FOUND,
                -32600,
                "no such MCP session at this address (it was ended)".into(),
                None,
            ))
        }
        Ok(a) => {
            let session = named.filter(|_| held || a.status == SessionStatus::Present);
            Ok((session, a.verdict, None))
        }
        Err(error) => {
            if named.is_some() && !held {
                // Only the shared engine knows that session; rmcp would fail on it.
                return Err(shared_state_unreachable(state, "admit", &error));
            }
            if shared.failed() {
                tracing::warn!(%error, "the shared engine is unreachable: client limits are this replica's own until it answers");
            }
            state.metrics.shared_state.fell_back("admit", "limits");
            let session = named.filter(|_| held);
            let (key, verdict) = local_limits(state, now, route.connector, user, session.as_deref(), address);
            Ok((session, verdict, Some(key)))
        }
    }
}

/// 429 when a client limit throttled the request, counted by its layer.
pub(super) fn refuse_throttled(
    state: &GuardState,
    verdict: Result<(), besluitbron_core::limits::Throttled>,
) -> Result<(), Response> {
    if let Err(t) = verdict {
        state
            .metrics
            .throttled
            .get_or_create(&LayerLabel {
                layer: t.layer.as_str(),
            })
            .inc();
        return Err(json_error(
            StatusCode::TOO_MANY_REQUESTS,
            -32000,
            format!("BesluitBron: {t}"),
            Some(t.retry_after_secs),
        ));
    }
    Ok(())
}

/// An `initialize` outside a session: limited per address, and by the session cap.
pub(super) async fn admit_new_session(
    route: &RouteGuard,
    now: besluitbron_core::Instant,
    address: &str,
) -> Result<(), Response> {
    let state = &route.state;
    let shared_initialize = match &state.shared_limits {
        Some(shared) => match shared.initialize(address).await {
            Ok(verdict) => Some(verdict),
            Err(_) => {
                state.metrics.shared_state.fell_back("initialize", "initialize");
                None
            }
        },
        None => None,
    };
    let initialize = match shared_initialize {
        Some(verdict) => verdict,
        None => state
            .initializes
            .lock()
            .expect("limits lock")
            .check(now, route.connector, address, address),
    };
    if let Err(t) = initialize {
        state
            .metrics
            .throttled
            .get_or_create(&LayerLabel { layer: "initialize" })
            .inc();
        return Err(json_error(
            StatusCode::TOO_MANY_REQUESTS,
            -32000,
            format!(
                "BesluitBron: too many new sessions from this address; retry after {} s",
                t.retry_after_secs
            ),
            Some(t.retry_after_secs),
        ));
    }
    if state.sessions_for_cap().await >= state.config.sessions.max_sessions {
        return Err(json_error(
            StatusCode::SERVICE_UNAVAILABLE,
            -32000,
            "BesluitBron has as many MCP sessions open as it allows; retry later, or use the stateless protocol".into(),
            Some(30),
        ));
    }
    Ok(())
}

/// The local client limits asked for a request of `user` (a valid token's) or none, in
/// `session` (one that exists) or none, from `address`: the core's identity rule makes
/// the fairness key (returned) and the limits' keys.
fn local_limits(
    state: &GuardState,
    now: besluitbron_core::Instant,
    connector: &str,
    user: Option<&str>,
    session: Option<&str>,
    address: &str,
) -> (
    besluitbron_core::SessionKey,
    Result<(), besluitbron_core::limits::Throttled>,
) {
    let who = Caller::who(user, session, address);
    let verdict =
        state
            .limits
            .lock()
            .expect("limits lock")
            .check_client(now, connector, &who.session_limit_key(), who.client());
    (who.fairness_key(), verdict)
}

/// True when the `Content-Type` is `application/json` (parameters aside), as rmcp reads it.
fn is_json_content_type(headers: &axum::http::HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or("")
                .trim()
                .eq_ignore_ascii_case("application/json")
        })
}
