//! A route's MCP service behind its guard ([`Guarded`]): one tower service wrapping
//! rmcp's directly, no middleware stack, so a request costs no more service clones or
//! boxes than rmcp's own service does; and the guard's steps in their order, ending in
//! rmcp's answer as clients expect it.
//!
//! Invariants: a refusal ends the steps and never reaches rmcp; the [`Caller`] travels on
//! in the request's extensions; a stream's permit or an answer's place in the drain is
//! held until the answer's body has been sent. What it does not do: the steps themselves
//! (`steps.rs`).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::body::Body;
use axum::extract::Request;
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use tower::{Service, ServiceExt};

use crate::identity::{self, Caller};

use super::envelope::unreadable_message;
use super::permits::{AnswerUnderWay, StreamPermit, open_event_stream};
use super::state::RouteGuard;
use super::steps::{
    admit_new_session, authenticate, client_peer, pass_own_loopback_origin, read_message, refuse_another_users_session,
    refuse_ending_an_unknown_session, refuse_throttled, refuse_while_shutting_down, take_client_limits,
};

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
    let (mut parts, body) = request.into_parts();
    let ending_session = parts.method == Method::DELETE;
    let resuming = super::resume::advance(&parts.method, &mut parts.headers);
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
    if resuming {
        let response = super::resume::answered(response).await;
        return Ok(answer_as_clients_expect(
            response,
            sent,
            ending_session,
            stream,
            under_way,
        ));
    }
    Ok(answer_as_clients_expect(
        response,
        sent,
        ending_session,
        stream,
        under_way,
    ))
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
