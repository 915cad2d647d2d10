//! The running server: configuration in, an axum router out.
//!
//! ```text
//! request ─▶ guard (client limits: process, connector, session/address; JSON-RPC shape;
//!            body size; initialize per address; session cap)
//!        ─▶ /mcp/obv | /mcp/tk | /mcp  (rmcp Streamable HTTP, one service per connector)
//!        ─▶ tools ─▶ fetcher (buffer, coalescing, platform gates) ─▶ platform clients
//! ```
//!
//! Also `/healthz` (the process runs), `/readyz` (it accepts calls: not shutting down)
//! and `/metrics` (Prometheus text). The maintenance task refreshes OpenBesluitvorming's
//! load status as the system session (R-L7).
//!
//! Shutdown ([`App::shutdown`]): stop accepting, let running tool calls finish (up to a
//! drain time), then close the MCP streams and sessions.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::serve::ListenerExt;
use besluitbron_core::PlatformId;
use besluitbron_core::cache::{CachePolicy, CacheVersion};
use besluitbron_core::dedup::{DuplicateMonitor, IdempotencyConfig, MonitorConfig};
use besluitbron_core::limits::{ClientLimitConfig, ClientLimits, RateLimit};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::config::Config;
use crate::fetch::Fetcher;
use crate::gate::{Clock, PlatformGate};
use crate::identity;
use crate::mcp::{Besluit, Connector, Shared, replay::Replays};
use crate::metrics::{self, LayerLabel, Metrics, PlatformLabel};
use crate::platforms::http::{HttpConfig, RetryPolicy};
use crate::platforms::obv::ObvClient;
use crate::platforms::tk::TkClient;
use crate::store::{self, RedbStore};

/// The server's shared state.
pub struct AppState {
    config: Config,
    clock: Clock,
    metrics: Arc<Metrics>,
    limits: Mutex<ClientLimits>,
    initializes: Mutex<ClientLimits>,
    session_managers: Vec<Arc<LocalSessionManager>>,
    shared: Arc<Shared>,
    accepting: AtomicBool,
}

/// A built server: its router and the handles to stop it.
pub struct App {
    /// The routes; serve with `into_make_service_with_connect_info::<SocketAddr>()`.
    pub router: Router,
    /// The state, for tests and metrics.
    pub state: Arc<AppState>,
    /// Cancelled at the end of shutdown: closes MCP streams and stops background tasks.
    pub cancel: CancellationToken,
}

impl AppState {
    /// The fetcher (buffer, coalescing, gates).
    pub fn fetcher(&self) -> &Arc<Fetcher> {
        &self.shared.fetcher
    }

    /// Client retries answered from the first result, and request keys reused for other
    /// requests, since start.
    pub fn replay_counts(&self) -> (u64, u64) {
        self.shared.replays.counts()
    }

    /// Tool calls running now.
    pub fn running_calls(&self) -> usize {
        self.shared.in_flight.load(Ordering::SeqCst)
    }

    /// Open MCP sessions over all connectors.
    pub async fn open_sessions(&self) -> usize {
        let mut n = 0;
        for sm in &self.session_managers {
            n += sm.sessions.read().await.len();
        }
        n
    }
}

fn http_config(config: &Config, platform: PlatformId) -> HttpConfig {
    let pc = config.platform(platform);
    HttpConfig {
        contact: config.contact.clone(),
        request_timeout_ms: pc.timeout_ms,
        retry: RetryPolicy {
            max_attempts: pc.attempts,
            deadline_ms: pc.timeout_ms.saturating_mul(3),
            ..RetryPolicy::default()
        },
        ..HttpConfig::default()
    }
}

impl App {
    /// Builds the server from `config`: opens the buffers, starts the platform gates and
    /// the maintenance task. Must run inside a tokio runtime.
    pub fn build(config: Config) -> anyhow::Result<App> {
        let clock = Clock::start();
        let metrics = Arc::new(Metrics::new());
        let cancel = CancellationToken::new();

        let version = if config.cache_version.is_empty() {
            CacheVersion::current()
        } else {
            CacheVersion::new(config.cache_version.clone())
                .map_err(|e| anyhow::anyhow!("BesluitBron.CacheVersion: {e}"))?
        };
        let (stores, failures) = store::open_all(&config.data_dir, &CachePolicy::default(), &version);
        for (platform, error) in &failures {
            tracing::error!(%platform, %error, "buffer unavailable; this platform runs without one");
        }
        let stores: BTreeMap<PlatformId, Arc<RedbStore>> = stores.into_iter().map(|(p, s)| (p, Arc::new(s))).collect();

        let mut gates = BTreeMap::new();
        for platform in PlatformId::ALL {
            if let Some(scheduler) = config.scheduler(platform) {
                gates.insert(platform, PlatformGate::spawn(platform, scheduler, clock)?);
            }
        }
        let fetcher = Fetcher::new(
            gates,
            stores,
            DuplicateMonitor::new(MonitorConfig::default()),
            Arc::clone(&metrics),
            clock,
        );
        let obv = ObvClient::new(
            &config.platform(PlatformId::Obv).base_url,
            &http_config(&config, PlatformId::Obv),
        )?;
        let tk = TkClient::new(
            &config.platform(PlatformId::Tk).base_url,
            &http_config(&config, PlatformId::Tk),
        )?;
        let shared = Arc::new(Shared {
            obv: Arc::new(obv),
            tk: Arc::new(tk),
            fetcher,
            trusted_proxies: config.trusted_proxies.clone(),
            // Retries come within seconds to a minute; two minutes, 10,000 results and
            // 64 MiB keep the memory a busy server spends on them bounded (with 45 KB
            // answers, 10,000 results alone were 450 MB). Under more load than that, the
            // oldest results go first and a late retry runs again.
            replays: Replays::new(
                IdempotencyConfig {
                    window: Duration::from_secs(120),
                    max_entries: 10_000,
                    max_bytes: 64 << 20,
                },
                clock,
            ),
            in_flight: Default::default(),
            request_timeout: Duration::from_secs(config.request_timeout_secs.max(1)),
        });

        let mut router = Router::new();
        let mut session_managers = Vec::new();
        for (path, connector) in [
            ("/mcp/obv", Connector::Obv),
            ("/mcp/tk", Connector::Tk),
            ("/mcp", Connector::All),
        ] {
            let mut sm = LocalSessionManager::default();
            sm.session_config.keep_alive = Some(Duration::from_secs(config.sessions.idle_timeout_secs.max(1)));
            // rmcp keeps each completed answer this long for a client that resumes a broken
            // stream; a minute of large answers under load is gigabytes. Ten seconds covers
            // a reconnect; a client that missed more retries the call (a replay).
            sm.session_config.completed_cache_ttl = Duration::from_secs(10);
            let sm = Arc::new(sm);
            session_managers.push(Arc::clone(&sm));
            let mut mcp_config = StreamableHttpServerConfig::default()
                .with_cancellation_token(cancel.child_token())
                .with_allowed_hosts(config.hosts())
                .with_max_request_body_bytes(config.max_body_bytes)
                // A stateless (2026-07-28) call that emits nothing before its answer gets
                // a plain JSON body; one that reports progress while queued is still
                // streamed as SSE, so no notification is lost.
                .with_json_response(true)
                .enforce_origin_validation();
            if !config.allowed_origins.is_empty() {
                mcp_config = mcp_config.with_allowed_origins(config.allowed_origins.clone());
            }
            // One handler per connector; each session and each stateless request gets a
            // clone (two `Arc`s), not a newly built set of tools.
            let handler = Besluit::new(Arc::clone(&shared), connector);
            let service = StreamableHttpService::new(move || Ok(handler.clone()), sm, mcp_config);
            router = router.nest_service(path, service);
        }

        let limits = ClientLimits::new(config.mcp_rate_limit);
        let per_minute = config.sessions.initialize_per_minute.max(1);
        let initializes = ClientLimits::new(ClientLimitConfig {
            process: RateLimit {
                requests_per_minute: u32::MAX / 2,
                burst: u32::MAX / 2,
            },
            per_connector: RateLimit {
                requests_per_minute: u32::MAX / 2,
                burst: u32::MAX / 2,
            },
            per_session: RateLimit {
                requests_per_minute: per_minute,
                burst: per_minute.div_ceil(4).max(2),
            },
            max_tracked: config.mcp_rate_limit.max_tracked,
        });
        let state = Arc::new(AppState {
            config,
            clock,
            metrics,
            limits: Mutex::new(limits),
            initializes: Mutex::new(initializes),
            session_managers,
            shared,
            accepting: AtomicBool::new(true),
        });

        let router = router
            .layer(axum::middleware::from_fn_with_state(Arc::clone(&state), guard))
            .route("/healthz", get(|| async { "ok\n" }))
            .route("/readyz", get(readyz))
            .route("/metrics", get(metrics_text))
            .with_state(Arc::clone(&state));

        if state.config.status_refresh_secs > 0 {
            tokio::spawn(maintenance(Arc::clone(&state), cancel.child_token()));
        }
        Ok(App { router, state, cancel })
    }

    /// Serves on `listener` until `stop` resolves, then drains: running tool calls get
    /// up to `drain` to finish before the MCP streams are closed.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
        drain: Duration,
    ) -> anyhow::Result<()> {
        let App { router, state, cancel } = self;
        let shutdown = {
            let state = Arc::clone(&state);
            let cancel = cancel.clone();
            async move {
                stop.await;
                state.accepting.store(false, Ordering::SeqCst);
                tracing::info!(
                    running = state.running_calls(),
                    "shutting down: draining running tool calls"
                );
                let deadline = tokio::time::Instant::now() + drain;
                while state.running_calls() > 0 && tokio::time::Instant::now() < deadline {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                cancel.cancel();
            }
        };
        // Answers go out as SSE in several writes; without TCP_NODELAY, Nagle's algorithm
        // and the client's delayed ACK hold each answer back by about 40 ms.
        let listener = listener.tap_io(|tcp| {
            if let Err(error) = tcp.set_nodelay(true) {
                tracing::debug!(%error, "could not set TCP_NODELAY");
            }
        });
        axum::serve(listener, router.into_make_service_with_connect_info::<SocketAddr>())
            .with_graceful_shutdown(shutdown)
            .await?;
        Ok(())
    }
}

/// Refreshes the load status every `status_refresh_secs` as BesluitBron's own
/// maintenance (the system session), so `obv_status` answers from the buffer.
async fn maintenance(state: Arc<AppState>, cancel: CancellationToken) {
    let handler = Besluit::new(Arc::clone(&state.shared), Connector::Obv);
    let every = Duration::from_secs(state.config.status_refresh_secs);
    loop {
        if let Err(error) = crate::mcp::obv::fetch_status(&handler, None).await {
            tracing::warn!(%error, "load status refresh failed");
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
    }
}

fn json_error(status: StatusCode, code: i64, message: String, retry_after: Option<u64>) -> Response {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}});
    let mut response = (status, axum::Json(body)).into_response();
    if let Some(secs) = retry_after
        && let Ok(v) = HeaderValue::from_str(&secs.to_string())
    {
        response.headers_mut().insert(header::RETRY_AFTER, v);
    }
    response
}

/// The checks every MCP request passes before rmcp sees it.
async fn guard(
    State(state): State<Arc<AppState>>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    request: Request,
    next: Next,
) -> Response {
    let path = request.uri().path();
    let connector = if path.starts_with("/mcp/obv") {
        "obv"
    } else if path.starts_with("/mcp/tk") {
        "tk"
    } else {
        "all"
    };
    if !state.accepting.load(Ordering::SeqCst) {
        return json_error(
            StatusCode::SERVICE_UNAVAILABLE,
            -32000,
            "BesluitBron is shutting down; retry shortly".into(),
            Some(5),
        );
    }
    let address = identity::client_address(peer, request.headers(), &state.config.trusted_proxies);
    let session = identity::session_id(request.headers()).map(str::to_owned);
    let key = match &session {
        Some(id) => format!("session:{id}"),
        None => format!("addr:{address}"),
    };
    let now = state.clock.now();
    if let Err(t) = state.limits.lock().expect("limits lock").check(now, connector, &key) {
        state
            .metrics
            .throttled
            .get_or_create(&LayerLabel {
                layer: t.layer.as_str(),
            })
            .inc();
        return json_error(
            StatusCode::TOO_MANY_REQUESTS,
            -32000,
            format!("BesluitBron: {t}"),
            Some(t.retry_after_secs),
        );
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }

    // Read the body once (bounded) to answer malformed JSON-RPC clearly and to spot
    // `initialize`, which is limited per address and by the session cap.
    let limit = state.config.max_body_bytes;
    if request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|n| n > limit)
    {
        return json_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            -32600,
            format!("the request body exceeds {limit} bytes"),
            None,
        );
    }
    let (parts, body) = request.into_parts();
    let bytes = match axum::body::to_bytes(body, limit).await {
        Ok(b) => b,
        Err(_) => {
            return json_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                -32600,
                format!("the request body exceeds {limit} bytes"),
                None,
            );
        }
    };
    let is_initialize = match read_envelope(&bytes) {
        Ok(envelope) => envelope.method.as_deref() == Some("initialize"),
        Err(bad) => return bad.response(),
    };
    if is_initialize && session.is_none() {
        if let Err(t) = state
            .initializes
            .lock()
            .expect("limits lock")
            .check(now, connector, &address)
        {
            state
                .metrics
                .throttled
                .get_or_create(&LayerLabel { layer: "initialize" })
                .inc();
            return json_error(
                StatusCode::TOO_MANY_REQUESTS,
                -32000,
                format!(
                    "BesluitBron: too many new sessions from this address; retry after {} s",
                    t.retry_after_secs
                ),
                Some(t.retry_after_secs),
            );
        }
        if state.open_sessions().await >= state.config.sessions.max_sessions {
            return json_error(
                StatusCode::SERVICE_UNAVAILABLE,
                -32000,
                "BesluitBron has as many MCP sessions open as it allows; retry later, or use the stateless protocol"
                    .into(),
                Some(30),
            );
        }
    }
    next.run(Request::from_parts(parts, Body::from(bytes))).await
}

/// The two fields of a JSON-RPC message the guard needs; rmcp parses the rest.
#[derive(serde::Deserialize)]
struct Envelope<'a> {
    #[serde(borrow, default)]
    jsonrpc: Option<std::borrow::Cow<'a, str>>,
    #[serde(borrow, default)]
    method: Option<std::borrow::Cow<'a, str>>,
}

/// Why a body is not one JSON-RPC 2.0 message object.
enum BadBody {
    /// Not JSON at all (-32700).
    NotJson(serde_json::Error),
    /// JSON of another shape (-32600).
    NotJsonRpc,
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
fn read_envelope(bytes: &[u8]) -> Result<Envelope<'_>, BadBody> {
    if bytes.iter().find(|b| !b.is_ascii_whitespace()) != Some(&b'{') {
        return match serde_json::from_slice::<serde::de::IgnoredAny>(bytes) {
            Ok(_) => Err(BadBody::NotJsonRpc),
            Err(e) => Err(BadBody::NotJson(e)),
        };
    }
    match serde_json::from_slice::<Envelope<'_>>(bytes) {
        Ok(envelope) if envelope.jsonrpc.as_deref() == Some("2.0") => Ok(envelope),
        Ok(_) => Err(BadBody::NotJsonRpc),
        Err(e) if e.classify() == serde_json::error::Category::Data => Err(BadBody::NotJsonRpc),
        Err(e) => Err(BadBody::NotJson(e)),
    }
}

async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if state.accepting.load(Ordering::SeqCst) {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response()
    }
}

async fn metrics_text(State(state): State<Arc<AppState>>) -> Response {
    let m = &state.metrics;
    for (platform, gate) in state.shared.fetcher.gates() {
        if let Some(snap) = gate.snapshot().await {
            let label = PlatformLabel {
                platform: platform.as_str(),
            };
            m.queue_length
                .get_or_create(&label)
                .set(i64::try_from(snap.queued).unwrap_or(i64::MAX));
            m.waiting_sessions
                .get_or_create(&label)
                .set(i64::try_from(snap.waiting_sessions).unwrap_or(i64::MAX));
            m.bucket_units
                .get_or_create(&label)
                .set(snap.tokens.as_milli() as f64 / 1000.0);
        }
    }
    m.sessions_open
        .set(i64::try_from(state.open_sessions().await).unwrap_or(i64::MAX));
    let mut out = m.render();
    let stores: Vec<Arc<RedbStore>> = state.shared.fetcher.stores().values().cloned().collect();
    let stats = tokio::task::spawn_blocking(move || {
        use besluitbron_core::cache::CacheStore;
        stores.iter().filter_map(|s| s.stats().ok()).collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    out.push_str(&store::render_prometheus(&stats));
    ([(header::CONTENT_TYPE, metrics::CONTENT_TYPE)], out).into_response()
}
