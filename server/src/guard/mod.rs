//! The guard every MCP request passes before rmcp sees it: shutting down, the access
//! token (with `BesluitBron.Auth`), the body's size, time and shape, who the request is
//! (decided here once: its user, else its session, else its address), the client limits, the
//! session cap, and the caps on standalone event streams (per session, per address). It wraps each route's MCP service directly ([`Guarded`]): one tower
//! service, no middleware stack, so a request costs no more service clones or boxes
//! than rmcp's own service does.
//!
//! Invariants:
//! - a request refused here never reaches rmcp, and costs nothing at the limit layers
//!   that did not refuse it;
//! - who the request is travels on as a [`Caller`] in its extensions; nothing later
//!   reads the identity headers again;
//! - the body is read once, bounded by `max_body_bytes`, and handed on unchanged;
//! - a session opened with a token is its user's: a request of another user (or of
//!   none) naming it is answered as for an unknown session (404).
//!
//! What this module does not do: parse the JSON-RPC message beyond its envelope (rmcp
//! does), or decide anything about a platform (the core path does).
#![expect(
    clippy::result_large_err,
    reason = "the guard's steps return their refusal, the response itself, as `Err`: it is answered at once, \
              and boxing it would cost an allocation per refusal for nothing"
)]

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::Body;
use axum::extract::{ConnectInfo, Request};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::{SessionId, SessionManager};
use serde_json::json;
use tower::{Service, ServiceExt};

use besluitbron_core::limits::ClientLimits;

use crate::auth::{Auth, Verdict};
use crate::clock::Clock;
use crate::config::Config;
use crate::engine::limits::{Asking, SessionStatus, SharedLimits};
use crate::engine::sessions::{RedisSessionStore, RestoreGate};
use crate::identity::{self, Caller};
use crate::metrics::{LayerLabel, Metrics};

/// What the guards of every route share: the settings, the client limits, the sessions
/// the cap counts, and what the shutdown drain reads.
pub struct GuardState {
    /// The server's settings.
    pub config: Config,
    /// The clock of the limits.
    pub clock: Clock,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// The client limits (R-I1): process, connector, client address, session.
    pub limits: std::sync::Mutex<ClientLimits>,
    /// `initialize` per client address.
    pub initializes: std::sync::Mutex<ClientLimits>,
    /// Client limits on the shared engine, with several replicas.
    pub shared_limits: Option<SharedLimits>,
    /// Every route's MCP sessions (the session cap counts them).
    pub session_managers: Vec<Arc<RestoreGate>>,
    /// False once shutdown has begun: new requests are answered 503.
    pub accepting: std::sync::atomic::AtomicBool,
    /// MCP messages (POSTs) under way, from the guard's admission to their answer's last
    /// byte: the drain waits for these, so no answer is cut off after its call ended.
    pub answering: std::sync::atomic::AtomicUsize,
    /// Standalone event streams open now, per session and per client address.
    pub streams: std::sync::Mutex<StreamCounts>,
    /// The access-token checks, with `BesluitBron.Auth.Mode` other than off.
    pub auth: Option<Arc<Auth>>,
    /// The user each session opened with a token belongs to (session id → user key).
    pub session_users: std::sync::Mutex<HashMap<String, String>>,
}

impl GuardState {
    /// False once shutdown has begun.
    pub fn is_accepting(&self) -> bool {
        self.accepting.load(Ordering::SeqCst)
    }

    /// MCP messages (POSTs) under way now.
    pub fn answers_under_way(&self) -> usize {
        self.answering.load(Ordering::SeqCst)
    }

    /// Standalone event streams open now.
    pub fn open_streams(&self) -> usize {
        self.streams.lock().expect("stream counts lock").total()
    }

    /// Whether `user` (or no user) may use session `id`: a session opened with a token
    /// only by that token's user, any other as before.
    fn may_use_session(&self, id: &str, user: Option<&str>) -> bool {
        let owners = self.session_users.lock().expect("session users lock");
        owners.get(id).is_none_or(|owner| Some(owner.as_str()) == user)
    }

    /// Session `id`, just opened by `user`, is that user's. Entries of sessions no route
    /// holds any more are dropped once there are twice as many as the session cap.
    async fn bind_session(&self, id: &str, user: &str) {
        let full = {
            let mut owners = self.session_users.lock().expect("session users lock");
            owners.insert(id.to_owned(), user.to_owned());
            owners.len() > 2 * self.config.sessions.max_sessions.max(1)
        };
        if full {
            let ids: Vec<String> = self
                .session_users
                .lock()
                .expect("session users lock")
                .keys()
                .cloned()
                .collect();
            let mut gone = Vec::new();
            for id in ids {
                let mut held = false;
                for sm in &self.session_managers {
                    held |= sm.holds(&id).await;
                }
                if !held {
                    gone.push(id);
                }
            }
            let mut owners = self.session_users.lock().expect("session users lock");
            for id in gone {
                owners.remove(&id);
            }
        }
    }

    /// Open MCP sessions over all routes of this process.
    pub async fn open_sessions(&self) -> usize {
        let mut n = 0;
        for sm in &self.session_managers {
            n += sm.len().await;
        }
        n
    }

    /// The sessions the session cap counts: over all replicas with several (the local
    /// count while the shared engine does not answer), else this process's.
    pub async fn sessions_for_cap(&self) -> usize {
        if let Some(shared) = &self.shared_limits {
            match crate::engine::sessions::count(shared.engine()).await {
                Ok(n) => return n,
                Err(_) => self.metrics.shared_state.fell_back("session_count", "session_cap"),
            }
        }
        self.open_sessions().await
    }
}

/// A route's MCP service behind its guard.
///
/// axum clones the service it routes to for every request; this one clones only an
/// `Arc` then, and the inner service once, when it is made ready, the same one clone
/// axum makes of an unguarded service.
pub struct Guarded<S> {
    route: RouteGuard,
    template: Arc<S>,
    ready: Option<S>,
}

impl<S> Guarded<S> {
    /// `inner` behind `route`'s guard.
    pub fn new(route: RouteGuard, inner: S) -> Guarded<S> {
        Guarded {
            route,
            template: Arc::new(inner),
            ready: None,
        }
    }
}

impl<S> Clone for Guarded<S> {
    fn clone(&self) -> Self {
        Guarded {
            route: self.route.clone(),
            template: Arc::clone(&self.template),
            ready: None,
        }
    }
}

impl<S, B> Service<Request> for Guarded<S>
where
    S: Service<Request, Response = axum::http::Response<B>, Error = Infallible> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + Unpin + 'static,
    B::Error: Into<axum::BoxError>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        if self.ready.is_none() {
            self.ready = Some((*self.template).clone());
        }
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request) -> Self::Future {
        // `call` follows `poll_ready`; a caller that skips it still gets a fresh clone.
        let inner = self.ready.take().unwrap_or_else(|| (*self.template).clone());
        let route = self.route.clone();
        Box::pin(async move { Ok(guard(route, request, inner).await) })
    }
}

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

/// What a route's guard knows: the server, its connector's name in the limits, and the
/// sessions of its MCP service.
#[derive(Clone)]
pub struct RouteGuard {
    pub state: Arc<GuardState>,
    pub connector: &'static str,
    pub sessions: Arc<RestoreGate>,
    /// The route's sessions in the shared engine, with several replicas.
    pub store: Option<Arc<RedisSessionStore>>,
}

/// 503 for a request only the shared engine can decide, while it does not answer.
fn shared_state_unreachable(state: &GuardState, op: &'static str, error: &crate::engine::EngineError) -> Response {
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

/// The checks every MCP request passes before rmcp sees it. Who the request is, is
/// decided here once: an existing MCP session of this route (session era), otherwise its
/// client address; the [`Caller`] travels on in the request's extensions.
async fn guard<S, B>(route: RouteGuard, request: Request, inner: S) -> Response
where
    S: Service<Request, Response = axum::http::Response<B>, Error = Infallible>,
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + Unpin + 'static,
    B::Error: Into<axum::BoxError>,
{
    match admit_and_answer(&route, request, inner).await {
        Ok(response) | Err(response) => response,
    }
}

/// [`guard`]'s steps, in order; a refusal is the `Err` answer, and ends them.
async fn admit_and_answer<S, B>(route: &RouteGuard, mut request: Request, inner: S) -> Result<Response, Response>
where
    S: Service<Request, Response = axum::http::Response<B>, Error = Infallible>,
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + Unpin + 'static,
    B::Error: Into<axum::BoxError>,
{
    let state = &route.state;
    let peer = client_peer(&request)?;
    refuse_while_shutting_down(state)?;
    let user = authenticate(state, request.headers(), request.uri().path()).await?;
    // A message admitted before the drain is answered in full: the drain waits for it.
    let under_way = (request.method() == Method::POST).then(|| AnswerUnderWay::begin(state));
    pass_own_loopback_origin(state, &mut request);
    let address = identity::client_address(peer, request.headers(), &state.config.trusted_proxies);
    let named_session = identity::session_id(request.headers()).map(str::to_owned);
    refuse_ending_an_unknown_session(route, request.method(), named_session.as_deref()).await?;

    // Read the body once (bounded) to answer malformed JSON-RPC clearly, to see which
    // protocol era the request speaks, and to spot `initialize`, which is limited per
    // address and by the session cap.
    let (parts, body) = request.into_parts();
    let ending_session = parts.method == Method::DELETE;
    let message = read_message(state, &parts, body).await?;
    let facts = message.facts;
    let stateless = !facts.initialize
        && facts
            .stateless_version
            .unwrap_or_else(|| identity::protocol_version(&parts.headers).is_some_and(identity::is_stateless_version));
    // A session is believed only when it exists at this route, and only in the session
    // era: a 2026-07-28 request is served statelessly whatever its header says.
    let named = named_session.filter(|_| !stateless);
    let held = match &named {
        Some(id) => route.sessions.holds(id).await,
        None => false,
    };
    refuse_another_users_session(state, named.as_deref(), user.as_deref())?;
    let now = state.clock.now();
    let (session, verdict, key) = take_client_limits(route, now, named, held, &address, user.as_deref()).await?;
    let idempotency_key = identity::idempotency_key(&parts.headers);
    let caller = Arc::new(match key {
        // The limits were asked with this key: it is the caller's.
        Some(key) => Caller::keyed(user, session, address, idempotency_key, key),
        None => Caller::of_user(user, session, address, idempotency_key),
    });
    refuse_throttled(state, verdict)?;
    if facts.initialize && caller.session_id.is_none() {
        admit_new_session(route, now, &caller.address).await?;
    }
    let stream = open_event_stream(state, &parts.method, &caller)?;
    // The body again for the rare answer below (a clone of `Bytes` shares them).
    let sent = message.bytes.clone().filter(|_| message.json_body);
    let mut request = match message.bytes {
        Some(bytes) => Request::from_parts(parts, Body::from(bytes)),
        None => Request::from_parts(parts, Body::empty()),
    };
    let opened_by = caller.user.clone().filter(|_| facts.initialize);
    request.extensions_mut().insert(caller);
    let response = match inner.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    // A session opened with a token belongs to its user from its first answer on.
    if let Some(user) = opened_by
        && let Some(id) = response
            .headers()
            .get(&identity::SESSION_HEADER)
            .and_then(|v| v.to_str().ok())
    {
        state.bind_session(id, &user).await;
    }
    Ok(answer_as_clients_expect(
        response,
        sent,
        ending_session,
        stream,
        under_way,
    ))
}

/// The client's socket address, which the listener puts in every request.
fn client_peer(request: &Request) -> Result<SocketAddr, Response> {
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
fn refuse_while_shutting_down(state: &GuardState) -> Result<(), Response> {
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
async fn authenticate(
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
fn pass_own_loopback_origin(state: &GuardState, request: &mut Request) {
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
async fn refuse_ending_an_unknown_session(
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
struct Message {
    bytes: Option<axum::body::Bytes>,
    facts: EnvelopeFacts,
    json_body: bool,
}

/// A POST's body, read once within `max_body_bytes` and the body-read time, and its
/// envelope checked; other methods carry none.
async fn read_message(state: &GuardState, parts: &axum::http::request::Parts, body: Body) -> Result<Message, Response> {
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
    let facts = match read_envelope(&bytes) {
        Ok(envelope) => EnvelopeFacts::of(&envelope),
        Err(bad) => return Err(bad.response()),
    };
    Ok(Message {
        bytes: Some(bytes),
        facts,
        json_body: is_json_content_type(&parts.headers),
    })
}

/// 404 for a session opened with another user's token (or with one, asked without).
fn refuse_another_users_session(state: &GuardState, named: Option<&str>, user: Option<&str>) -> Result<(), Response> {
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
type Admission = (
    Option<String>,
    Result<(), besluitbron_core::limits::Throttled>,
    Option<besluitbron_core::SessionKey>,
);

/// The client limits, taken for the request in session `named` (`held` here or not).
async fn take_client_limits(
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
fn refuse_throttled(
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
async fn admit_new_session(route: &RouteGuard, now: besluitbron_core::Instant, address: &str) -> Result<(), Response> {
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

/// A standalone event stream's permit (a GET's), or the 429 when its caps are reached.
fn open_event_stream(
    state: &Arc<GuardState>,
    method: &Method,
    caller: &Caller,
) -> Result<Option<StreamPermit>, Response> {
    // A standalone event stream (GET) holds a connection for as long as it is open: a
    // few per session (a reconnect may overlap the old one) and per address.
    if method != Method::GET {
        return Ok(None);
    }
    match StreamPermit::take(state, caller.session_id.as_deref(), &caller.address) {
        Ok(permit) => Ok(Some(permit)),
        Err(message) => Err(json_error(StatusCode::TOO_MANY_REQUESTS, -32000, message, Some(5))),
    }
}

/// rmcp's answer as clients expect it, holding the stream's permit or the answer's place
/// in the drain until its body has been sent.
fn answer_as_clients_expect<B>(
    response: axum::http::Response<B>,
    sent: Option<axum::body::Bytes>,
    ending_session: bool,
    stream: Option<StreamPermit>,
    under_way: Option<AnswerUnderWay>,
) -> Response
where
    B: axum::body::HttpBody<Data = axum::body::Bytes> + Send + Unpin + 'static,
    B::Error: Into<axum::BoxError>,
{
    // rmcp answers a JSON body it cannot read as one of its messages (an id of another
    // type, params of the wrong type) with 415 and plain text; for a body sent as JSON
    // that is a bad request, answered as JSON-RPC.
    if let Some(sent) = sent
        && response.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE
    {
        return unreadable_message(&sent);
    }
    // rmcp answers the end of a session with 202; the reference servers, and the clients
    // written against them (the Python SDK reports "Session termination failed: 202"),
    // expect 200.
    if ending_session && response.status() == StatusCode::ACCEPTED {
        return StatusCode::OK.into_response();
    }
    match (stream, under_way) {
        // The permit lives as long as the stream's body: released when the client
        // goes or the stream ends.
        (Some(permit), _) if response.status().is_success() => response.map(|body| {
            Body::new(crate::listen::Holding {
                inner: body,
                _held: permit,
            })
        }),
        // The answer is under way until its body has been sent (or the client went).
        (_, Some(under_way)) => response.map(|body| {
            Body::new(crate::listen::Holding {
                inner: body,
                _held: under_way,
            })
        }),
        _ => response.map(Body::new),
    }
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

/// One MCP message under way (a POST), from the guard's admission to its answer's last
/// byte; counted in `GuardState::answering`, which the shutdown's drain waits on.
struct AnswerUnderWay(Arc<GuardState>);

impl AnswerUnderWay {
    fn begin(state: &Arc<GuardState>) -> AnswerUnderWay {
        state.answering.fetch_add(1, Ordering::SeqCst);
        AnswerUnderWay(Arc::clone(state))
    }
}

impl Drop for AnswerUnderWay {
    fn drop(&mut self) {
        self.0.answering.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Standalone event streams open now.
#[derive(Default)]
pub struct StreamCounts {
    per_session: HashMap<String, usize>,
    per_address: HashMap<String, usize>,
}

impl StreamCounts {
    /// Streams open now, over all addresses.
    pub(crate) fn total(&self) -> usize {
        self.per_address.values().sum()
    }
}

/// One open event stream's place in [`StreamCounts`]; released on drop.
struct StreamPermit {
    state: Arc<GuardState>,
    session: Option<String>,
    address: String,
}

impl StreamPermit {
    fn take(state: &Arc<GuardState>, session: Option<&str>, address: &str) -> Result<StreamPermit, String> {
        let caps = state.config.connections;
        let mut counts = state.streams.lock().expect("stream counts lock");
        if counts.per_address.get(address).copied().unwrap_or(0) >= caps.max_streams_per_address {
            return Err(format!(
                "BesluitBron allows {} open event streams per client address; close one first",
                caps.max_streams_per_address
            ));
        }
        if let Some(s) = session
            && counts.per_session.get(s).copied().unwrap_or(0) >= caps.max_streams_per_session
        {
            return Err(format!(
                "BesluitBron allows {} open event streams per session; close the old one first",
                caps.max_streams_per_session
            ));
        }
        *counts.per_address.entry(address.to_owned()).or_default() += 1;
        if let Some(s) = session {
            *counts.per_session.entry(s.to_owned()).or_default() += 1;
        }
        Ok(StreamPermit {
            state: Arc::clone(state),
            session: session.map(str::to_owned),
            address: address.to_owned(),
        })
    }
}

impl Drop for StreamPermit {
    fn drop(&mut self) {
        let mut counts = self.state.streams.lock().expect("stream counts lock");
        let StreamCounts {
            per_session,
            per_address,
        } = &mut *counts;
        for (map, key) in [(per_address, Some(&self.address)), (per_session, self.session.as_ref())] {
            if let Some(key) = key
                && let Some(n) = map.get_mut(key)
            {
                *n -= 1;
                if *n == 0 {
                    map.remove(key);
                }
            }
        }
    }
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

/// The Host check of the MCP routes, for every other route (`/healthz`, `/readyz`,
/// `/metrics`): a page on another site that rebinds its name to this address must not
/// read them. Same rule as rmcp's: the Host's name (any case, IPv6 without brackets) is
/// one of `allowed`, and its port too when that entry names one.
pub fn host_allowed(headers: &axum::http::HeaderMap, allowed: &[String]) -> bool {
    let Some(host) = headers.get(header::HOST).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let Some((name, port)) = authority(host) else {
        return false;
    };
    allowed
        .iter()
        .filter_map(|a| authority(a))
        .any(|(allowed_name, allowed_port)| allowed_name == name && allowed_port.is_none_or(|p| port == Some(p)))
}

/// True when `headers` carry the Origin of a page served by this very server on loopback:
/// the server listens on a loopback address (`listening`), and the Origin is
/// `http://NAME:PORT` with a loopback NAME (`localhost`, `127.0.0.1`, `[::1]`) and the
/// listening PORT, the same origin the Host header names. A page of another site (DNS
/// rebinding), of another port on this machine, over `https`, or reaching a server that
/// listens on a public address is not.
pub fn own_loopback_origin(headers: &axum::http::HeaderMap, listening: SocketAddr) -> bool {
    if !listening.ip().is_loopback() {
        return false;
    }
    let (Some(origin), Some(host)) = (
        headers.get(header::ORIGIN).and_then(|v| v.to_str().ok()),
        headers.get(header::HOST).and_then(|v| v.to_str().ok()),
    ) else {
        return false;
    };
    let origin = origin.trim();
    let Some(rest) = origin
        .get(..7)
        .filter(|scheme| scheme.eq_ignore_ascii_case("http://"))
        .and_then(|_| origin.get(7..))
    else {
        return false;
    };
    // An origin is a scheme, a host and a port: nothing else may follow or precede them.
    if rest.contains(['/', '@', '?', '#']) {
        return false;
    }
    let (Some((name, port)), Some((host_name, host_port))) = (strict_authority(rest), strict_authority(host)) else {
        return false;
    };
    let (port, host_port) = (port.unwrap_or(80), host_port.unwrap_or(80));
    let loopback = name == "localhost" || name.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    loopback && name == host_name && port == host_port && port == listening.port()
}

/// A `host[:port]` that parses as an authority without user information, as its lower-case
/// name without brackets and its port.
fn strict_authority(text: &str) -> Option<(String, Option<u16>)> {
    let a = axum::http::uri::Authority::try_from(text.trim()).ok()?;
    if a.as_str().contains('@') || a.host().is_empty() {
        return None;
    }
    Some((a.host().trim_matches(['[', ']']).to_ascii_lowercase(), a.port_u16()))
}

/// A `host[:port]` as its lower-case name without brackets and its port.
fn authority(text: &str) -> Option<(String, Option<u16>)> {
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let (name, port) = match axum::http::uri::Authority::try_from(text) {
        Ok(a) => (a.host().to_owned(), a.port_u16()),
        Err(_) => (text.to_owned(), None),
    };
    Some((name.trim_matches(['[', ']']).to_ascii_lowercase(), port))
}

/// The layer of [`host_allowed`] around the routes that are not MCP's.
pub async fn host_check(
    axum::extract::State(state): axum::extract::State<Arc<GuardState>>,
    request: Request,
    next: axum::middleware::Next,
) -> Response {
    if host_allowed(request.headers(), &state.config.hosts()) {
        next.run(request).await
    } else {
        (StatusCode::FORBIDDEN, "Forbidden: Host header is not allowed").into_response()
    }
}

fn too_large(limit: usize) -> Response {
    json_error(
        StatusCode::PAYLOAD_TOO_LARGE,
        -32600,
        format!("the request body exceeds {limit} bytes"),
        None,
    )
}

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
struct EnvelopeFacts {
    initialize: bool,
    /// Whether the request's own protocol version (its `_meta`'s, 2026-07-28) is one of
    /// the stateless era; `None` when it names none.
    stateless_version: Option<bool>,
}

impl EnvelopeFacts {
    fn of(envelope: &Envelope<'_>) -> EnvelopeFacts {
        EnvelopeFacts {
            initialize: envelope.method.as_deref() == Some("initialize"),
            stateless_version: protocol_version(envelope).map(identity::is_stateless_version),
        }
    }
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
fn unreadable_message(body: &[u8]) -> Response {
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

/// Checks that `bytes` is one JSON-RPC 2.0 message object, without building a JSON tree of
/// the whole body (rmcp parses it next).
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

    fn host_and_origin(host: &str, origin: &str) -> axum::http::HeaderMap {
        let mut h = axum::http::HeaderMap::new();
        h.insert(header::HOST, HeaderValue::from_str(host).expect("host"));
        h.insert(header::ORIGIN, HeaderValue::from_str(origin).expect("origin"));
        h
    }

    #[test]
    fn the_own_origin_is_the_listening_loopback_address_as_the_host_names_it() {
        let v4: SocketAddr = "127.0.0.1:8080".parse().expect("addr");
        let v6: SocketAddr = "[::1]:8080".parse().expect("addr");
        for listening in [v4, v6] {
            for (host, origin) in [
                ("127.0.0.1:8080", "http://127.0.0.1:8080"),
                ("localhost:8080", "http://localhost:8080"),
                ("[::1]:8080", "http://[::1]:8080"),
                ("LocalHost:8080", "HTTP://localhost:8080"),
            ] {
                assert!(
                    own_loopback_origin(&host_and_origin(host, origin), listening),
                    "{host} {origin}"
                );
            }
        }
        // Port 80 may be left out on both sides.
        let eighty: SocketAddr = "127.0.0.1:80".parse().expect("addr");
        assert!(own_loopback_origin(
            &host_and_origin("localhost", "http://localhost:80"),
            eighty
        ));
        for (host, origin) in [
            ("127.0.0.1:8080", "http://127.0.0.1:8081"),
            ("127.0.0.1:8081", "http://127.0.0.1:8081"),
            ("127.0.0.1:8080", "http://localhost:8080"),
            ("127.0.0.1:8080", "https://127.0.0.1:8080"),
            ("evil.example:8080", "http://evil.example:8080"),
            ("127.0.0.1:8080", "http://127.0.0.1:8080/"),
            ("127.0.0.1:8080", "http://a@127.0.0.1:8080"),
            ("127.0.0.1:8080", "null"),
            ("127.0.0.1:8080", "http://"),
        ] {
            assert!(
                !own_loopback_origin(&host_and_origin(host, origin), v4),
                "{host} {origin}"
            );
        }
        // A server listening on every address, or on a public one, keeps to the
        // configured origins only.
        for listening in ["0.0.0.0:8080", "[::]:8080", "192.0.2.7:8080"] {
            let listening: SocketAddr = listening.parse().expect("addr");
            let own = host_and_origin("127.0.0.1:8080", "http://127.0.0.1:8080");
            assert!(!own_loopback_origin(&own, listening), "{listening}");
        }
        assert!(!own_loopback_origin(&axum::http::HeaderMap::new(), v4));
    }

    #[test]
    fn headers_without_a_body_are_a_session_era_request() {
        let h = axum::http::HeaderMap::new();
        assert_eq!(identity::protocol_version(&h), None);
    }
}
