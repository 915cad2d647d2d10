//! The search page (`/`), its document view and the status page (`/status`,
//! `/status.json`): server-rendered HTML (maud; every value escaped), usable without
//! JavaScript; a small script of ours only fills in a platform that was still searching.
//!
//! ```text
//! GET /?q=…            ─▶ page guard (Host, URL cap, client limits per address, headers)
//!                      ─▶ each connector's page search (its `PageSpec`, in parallel)
//!                      ─▶ SystemCalls: a tools/call through the one entry point, as the system session
//!                      ─▶ the one path (buffer, dedup, fair queue, limits, metrics)
//! ```
//!
//! A platform that has not answered within [`GROUP_DEADLINE`] is shown "nog bezig" with
//! a link to its own group (`/zoek/groep/<id>?…`), which the script fetches; its search
//! goes on meanwhile, so that fetch joins it or finds it in the buffer.
//!
//! What this module does not do: decide a platform call (the path does) or know a
//! connector's answer shape (its `page.rs` does).

mod html;
mod parts;
mod status;
pub mod system;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{ConnectInfo, Path, Query, Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;

use crate::connectors::ConnectorSpec;
use crate::connectors::page_spec::{DocView, PageQuery, PageSearch, PageSpec};
use crate::guard::GuardState;
use crate::identity;
use crate::mcp::Calls;
use crate::metrics::LayerLabel;
use crate::store::RedbStore;
pub use parts::{Group, Lang, MAX_ORGANISATION_CHARS, MAX_QUERY_CHARS};
use system::SystemCalls;

/// What the pages read: the guards' state (settings, limits, the clock, metrics), the
/// tool calls, and the buffers (for their sizes).
pub struct PageState {
    /// The guards' state.
    pub guard: Arc<GuardState>,
    /// Every tool call's shared state.
    pub calls: Arc<Calls>,
    /// The page's tool calls, as the system session.
    pub system: SystemCalls,
    /// The buffers that opened.
    pub stores: std::collections::BTreeMap<besluitbron_core::PlatformId, Arc<RedbStore>>,
}

impl PageState {
    /// The pages' state over `guard`, `calls` and `stores`.
    pub fn new(
        guard: Arc<GuardState>,
        calls: Arc<Calls>,
        stores: std::collections::BTreeMap<besluitbron_core::PlatformId, Arc<RedbStore>>,
    ) -> PageState {
        PageState {
            guard,
            system: SystemCalls::new(Arc::clone(&calls)),
            calls,
            stores,
        }
    }

    fn connector(&self, id: &str) -> Option<&'static ConnectorSpec> {
        self.calls.registry().iter().find(|c| c.id == id).copied()
    }
}

/// How long the page waits for a platform before showing it as still searching.
pub const GROUP_DEADLINE: Duration = Duration::from_millis(2_500);

/// The longest request target (path and query) the page accepts, in bytes.
pub const MAX_URL_BYTES: usize = 2_048;

/// The longest next-page token or document id, in bytes.
pub const MAX_TOKEN_BYTES: usize = 600;

/// The page's Content-Security-Policy: nothing but our own script and style sheet.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; \
                       connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

const CSS: &str = include_str!("assets/page.css");
const JS: &str = include_str!("assets/page.js");

/// The routes of the pages, behind the page guard; `/status.json` among them when
/// `with_status_json` (else it is on the administrative address, [`status_json_route`]).
pub fn routes(state: &Arc<PageState>, with_status_json: bool) -> Router {
    let mut guarded = Router::new()
        .route("/", get(search_page))
        .route("/zoek/groep/{connector}", get(group_fragment))
        .route("/document/{connector}/{id}", get(document_page))
        .route("/status", get(status::page));
    if with_status_json {
        guarded = guarded.route("/status.json", get(status::json));
    }
    let guarded = guarded.route_layer(axum::middleware::from_fn_with_state(Arc::clone(state), page_guard));
    let assets = Router::new()
        .route(
            "/assets/page.css",
            get(|| async { asset("text/css; charset=utf-8", CSS) }),
        )
        .route(
            "/assets/page.js",
            get(|| async { asset("text/javascript; charset=utf-8", JS) }),
        );
    guarded
        .merge(assets)
        .route_layer(axum::middleware::from_fn(security_headers))
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state.guard),
            crate::guard::host_check,
        ))
        .with_state(Arc::clone(state))
}

/// `/status.json` alone, for the administrative address (`AdminListen`): the Host check,
/// no page guard (the address is the operator's, not the clients').
pub fn status_json_route(state: &Arc<PageState>) -> Router {
    Router::new()
        .route("/status.json", get(status::json))
        .route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state.guard),
            crate::guard::host_check,
        ))
        .with_state(Arc::clone(state))
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}

/// Headers on every page answer: the CSP and its companions.
async fn security_headers(request: Request, next: axum::middleware::Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP));
    h.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    h.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    response
}

/// The page guard: the URL cap and the client limits per address (the page's connector
/// layer is `page`), as the MCP addresses have them.
async fn page_guard(State(state): State<Arc<PageState>>, request: Request, next: axum::middleware::Next) -> Response {
    let state = &state.guard;
    if !state.is_accepting() {
        return (
            StatusCode::SERVICE_UNAVAILABLE,
            [(header::RETRY_AFTER, "5")],
            "BesluitBron is shutting down\n",
        )
            .into_response();
    }
    let target = request.uri().path_and_query().map_or(0, |p| p.as_str().len());
    if target > MAX_URL_BYTES {
        return (
            StatusCode::URI_TOO_LONG,
            format!("the address is longer than {MAX_URL_BYTES} bytes; use fewer words\n"),
        )
            .into_response();
    }
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map_or(SocketAddr::from(([0, 0, 0, 0], 0)), |c| c.0);
    let address = identity::client_address(peer, request.headers(), &state.config.trusted_proxies);
    let now = state.clock.now();
    let checked = state
        .limits
        .lock()
        .expect("limits lock")
        .check(now, "page", &address, &address);
    if let Err(t) = checked {
        state
            .metrics
            .throttled
            .get_or_create(&LayerLabel {
                layer: t.layer.as_str(),
            })
            .inc();
        let mut response = (
            StatusCode::TOO_MANY_REQUESTS,
            Html(html::busy(Lang::Nl, t.retry_after_secs).into_string()),
        )
            .into_response();
        if let Ok(v) = HeaderValue::from_str(&t.retry_after_secs.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return response;
    }
    next.run(request).await
}

/// A query checked, or what is wrong with it.
fn page_query(params: &HashMap<String, String>) -> Result<PageQuery, String> {
    let get = |k: &str| params.get(k).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    let q = get("q").unwrap_or_default();
    if q.chars().count() > MAX_QUERY_CHARS {
        return Err(format!("de zoekvraag is langer dan {MAX_QUERY_CHARS} tekens"));
    }
    let date = |k: &str| -> Result<Option<String>, String> {
        match get(k) {
            None => Ok(None),
            Some(d) if is_date(&d) => Ok(Some(d)),
            Some(_) => Err("een datum is JJJJ-MM-DD".to_owned()),
        }
    };
    let organisation = get("org");
    if organisation
        .as_ref()
        .is_some_and(|o| o.chars().count() > MAX_ORGANISATION_CHARS)
    {
        return Err(format!("de organisatie is langer dan {MAX_ORGANISATION_CHARS} tekens"));
    }
    Ok(PageQuery {
        q,
        date_from: date("from")?,
        date_to: date("to")?,
        organisation,
        next: None,
    })
}

fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && b.iter()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
}

/// The next-page token of `connector` in the query.
fn next_of(params: &HashMap<String, String>, connector: &str) -> Result<Option<String>, String> {
    match params.get(&format!("n_{connector}")).filter(|t| !t.is_empty()) {
        None => Ok(None),
        Some(t) if t.len() <= MAX_TOKEN_BYTES => Ok(Some(t.clone())),
        Some(_) => Err("this next-page link was not made by BesluitBron".to_owned()),
    }
}

fn search_of(c: &'static ConnectorSpec) -> Option<&'static PageSearch> {
    match c.page {
        PageSpec::Search(s) => Some(s),
        PageSpec::Without { .. } => None,
    }
}

/// One connector's search, run to its end (so a late answer lands in the buffer).
async fn run_search(state: Arc<PageState>, c: &'static ConnectorSpec, query: PageQuery) -> Group {
    let Some(search) = search_of(c) else {
        return Group::Failed(String::new());
    };
    if query.q.is_empty() && !(search.organisation && query.organisation.is_some()) {
        return Group::Failed(String::new());
    }
    let mut query = query;
    if !search.organisation {
        query.organisation = None;
    }
    if !search.dates {
        query.date_from = None;
        query.date_to = None;
    }
    let arguments = match (search.arguments)(&query) {
        Ok(a) => a,
        Err(e) => return Group::Failed(e),
    };
    match state.system.hits(search.tool, arguments).await {
        Ok(hits) => match (search.hits)(hits, &query, &state.calls.ctx.clients) {
            Ok(hits) => Group::Done(hits),
            Err(e) => Group::Failed(format!(
                "the answer of {} could not be read ({})",
                c.platform.display_name(),
                crate::platforms::http::brief(&e)
            )),
        },
        Err(e) => Group::Failed(e),
    }
}

/// Every connector's group for `params`, each waited for up to `deadline`.
async fn groups(
    state: &Arc<PageState>,
    params: &HashMap<String, String>,
    query: &PageQuery,
    deadline: Duration,
) -> Vec<(&'static ConnectorSpec, Group)> {
    let lang = Lang::of(params);
    let mut running = Vec::new();
    for &c in state.calls.registry() {
        let group = match c.page {
            PageSpec::Without { nl, en } => Some(Group::Without(if lang == Lang::En { en } else { nl })),
            PageSpec::Search(_) => None,
        };
        if let Some(g) = group {
            running.push((c, Err(g)));
            continue;
        }
        let mut q = query.clone();
        q.next = match next_of(params, c.id) {
            Ok(n) => n,
            Err(e) => {
                running.push((c, Err(Group::Failed(e))));
                continue;
            }
        };
        running.push((c, Ok(tokio::spawn(run_search(Arc::clone(state), c, q)))));
    }
    let until = tokio::time::Instant::now() + deadline;
    let mut out = Vec::new();
    for (c, r) in running {
        let group = match r {
            Err(g) => g,
            Ok(mut task) => match crate::mcp::ground::until(until, &mut task).await {
                Some(Ok(g)) => g,
                Some(Err(_)) => Group::Failed(format!("the search of {} failed", c.platform.display_name())),
                // The task goes on: its answer lands in the buffer for the follow-up.
                None => Group::Pending,
            },
        };
        out.push((c, group));
    }
    out
}

async fn search_page(State(state): State<Arc<PageState>>, Query(params): Query<HashMap<String, String>>) -> Response {
    let lang = Lang::of(&params);
    let query = match page_query(&params) {
        Ok(q) => q,
        Err(e) => {
            return (
                StatusCode::BAD_REQUEST,
                Html(html::search(lang, &params, &PageQuery::default(), None, Some(&e)).into_string()),
            )
                .into_response();
        }
    };
    if query.q.is_empty() && query.organisation.is_none() {
        return Html(html::search(lang, &params, &query, None, None).into_string()).into_response();
    }
    let groups = groups(&state, &params, &query, GROUP_DEADLINE).await;
    Html(html::search(lang, &params, &query, Some(&groups), None).into_string()).into_response()
}

async fn group_fragment(
    State(state): State<Arc<PageState>>,
    Path(connector): Path<String>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let lang = Lang::of(&params);
    let Some(c) = state.connector(&connector).filter(|c| search_of(c).is_some()) else {
        return (StatusCode::NOT_FOUND, "no such platform on the page\n").into_response();
    };
    let query = match page_query(&params) {
        Ok(q) => q,
        Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
    };
    let mut q = query.clone();
    q.next = match next_of(&params, c.id) {
        Ok(n) => n,
        Err(e) => return (StatusCode::BAD_REQUEST, e).into_response(),
    };
    let group = run_search(Arc::clone(&state), c, q).await;
    Html(html::group(lang, &params, c, &group).into_string()).into_response()
}

async fn document_page(
    State(state): State<Arc<PageState>>,
    Path((connector, id)): Path<(String, String)>,
    Query(params): Query<HashMap<String, String>>,
) -> Response {
    let lang = Lang::of(&params);
    let c = state.connector(&connector);
    let doc = c.and_then(search_of).and_then(|s| s.document.as_ref());
    let (Some(c), Some(doc)) = (c, doc) else {
        return (
            StatusCode::NOT_FOUND,
            Html(html::document(lang, None, Err("BesluitBron has no such document view")).into_string()),
        )
            .into_response();
    };
    if id.is_empty() || id.len() > MAX_TOKEN_BYTES {
        return (
            StatusCode::BAD_REQUEST,
            Html(html::document(lang, Some(c), Err("this is not a document id")).into_string()),
        )
            .into_response();
    }
    let offset = match params.get("offset").map(|o| o.parse::<usize>()) {
        None => 0,
        Some(Ok(o)) if o <= 100_000_000 => o,
        Some(_) => {
            return (
                StatusCode::BAD_REQUEST,
                Html(html::document(lang, Some(c), Err("the offset is a number of characters")).into_string()),
            )
                .into_response();
        }
    };
    let view: Result<DocView, String> = match state.system.call(doc.tool, (doc.arguments)(&id, offset)).await {
        Ok(v) => (doc.view)(v, offset, &state.calls.ctx.clients),
        Err(e) => Err(e),
    };
    let status = if view.is_ok() {
        StatusCode::OK
    } else {
        StatusCode::BAD_GATEWAY
    };
    let page = match &view {
        Ok(v) => html::document(lang, Some(c), Ok((&id, v))),
        Err(e) => html::document(lang, Some(c), Err(e)),
    };
    (status, Html(page.into_string())).into_response()
}
