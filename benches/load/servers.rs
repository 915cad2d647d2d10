//! The three servers a run measures, all in this process on loopback: BesluitBron itself
//! on the fake platforms of the registry, "rmcp alone" (the SDK answering BesluitBron's
//! result with none of BesluitBron's work) and the bare axum JSON echo.
//!
//! Invariants: BesluitBron's client limits are raised so they cannot throttle the run and
//! its maintenance traffic is off, so the fake OpenBesluitvorming sees only the run's own
//! calls; rmcp alone uses BesluitBron's transport settings; nothing binds anything but
//! `127.0.0.1`.
//!
//! What this module does not do: drive the servers or check their answers.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing;
use axum::serve::ListenerExt;
use besluitbron_fakes::{FakeHandle, Fakes, serve_registry_on};
use besluitbron_server::app::{App, AppState, Hooks};
use besluitbron_server::config::Config;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ListToolsResult, PaginatedRequestParams,
    ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// The echo's address.
pub(crate) const ECHO_PATH: &str = "/echo";

/// The fake platforms and the real BesluitBron server on them, running.
pub(crate) struct BesluitBron {
    /// Where the server listens.
    pub(crate) addr: SocketAddr,
    /// The Host values the server accepts (rmcp alone accepts the same).
    pub(crate) allowed_hosts: Vec<String>,
    /// The server's idle time-out for MCP sessions (rmcp alone uses the same).
    pub(crate) idle_timeout: Duration,
    /// The fake platforms, whose request counters prove every call a buffer hit.
    fakes: Fakes,
    server: Running,
}

impl BesluitBron {
    /// Starts the fakes of the registry and the server on a fresh data directory.
    pub(crate) async fn start() -> anyhow::Result<BesluitBron> {
        BesluitBron::start_with(Hooks::default()).await
    }

    /// [`BesluitBron::start`], the server built with `hooks`.
    pub(crate) async fn start_with(hooks: Hooks) -> anyhow::Result<BesluitBron> {
        let fakes_listener = TcpListener::bind("127.0.0.1:0").await.context("bind the fakes")?;
        let fakes = serve_registry_on(fakes_listener).await.context("serve the fakes")?;
        let data_dir = tempfile::tempdir().context("temporary data directory")?;
        let server_config = config(&fakes, data_dir.path())?;
        let allowed_hosts = server_config.hosts();
        let idle_timeout = Duration::from_secs(server_config.sessions.idle_timeout_secs.max(1));
        let server = Running::start(server_config, data_dir, hooks).await?;
        Ok(BesluitBron {
            addr: server.addr,
            allowed_hosts,
            idle_timeout,
            fakes,
            server,
        })
    }

    /// The configuration of another server on the same fakes (a replica), with its own
    /// fresh data directory, which it returns too.
    pub(crate) fn config_on_the_fakes(&self) -> anyhow::Result<(Config, tempfile::TempDir)> {
        let data_dir = tempfile::tempdir().context("temporary data directory")?;
        Ok((config(&self.fakes, data_dir.path())?, data_dir))
    }

    /// Requests the fake platforms have received so far, together.
    pub(crate) fn upstream_requests(&self) -> u64 {
        self.fakes.iter().map(FakeHandle::requests).sum()
    }

    /// 429s the fake platforms have answered so far, together.
    pub(crate) fn rate_limited(&self) -> u64 {
        self.fakes.iter().map(FakeHandle::rate_limited).sum()
    }

    /// Stops the server and waits for it to finish.
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        self.server.stop().await
    }
}

/// One BesluitBron server serving on a loopback port of its own, with its data directory.
pub(crate) struct Running {
    /// Where the server listens.
    pub(crate) addr: SocketAddr,
    /// Its state (the cluster node and the metrics, for the several-replica run).
    pub(crate) state: Arc<AppState>,
    /// The server's buffers; removed when the server has stopped.
    data_dir: tempfile::TempDir,
    stop: oneshot::Sender<()>,
    serving: JoinHandle<anyhow::Result<()>>,
    /// Stops the server's background tasks (the platforms' tasks, MCP streams).
    cancel: tokio_util::sync::CancellationToken,
}

impl Running {
    /// Builds the server from `config` (whose data directory is `data_dir`) with `hooks`
    /// and serves it.
    pub(crate) async fn start(config: Config, data_dir: tempfile::TempDir, hooks: Hooks) -> anyhow::Result<Running> {
        let server = TcpListener::bind("127.0.0.1:0").await.context("bind the server")?;
        let addr = server.local_addr()?;
        let app = App::build_with(config, hooks).context("build the server")?;
        let state = Arc::clone(&app.state);
        let cancel = app.cancel.clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let serving = tokio::spawn(app.serve(
            server,
            async {
                let _ = stopped.await;
            },
            Duration::from_secs(5),
        ));
        Ok(Running {
            addr,
            state,
            data_dir,
            stop,
            serving,
            cancel,
        })
    }

    /// Dies as `kill -9` would leave it: its leases are not released (they run out), its
    /// listeners close, forwards it was answering break off, its platforms' tasks stop.
    pub(crate) fn kill(&self) {
        if let Some(node) = self.state.cluster() {
            node.kill();
        }
        self.serving.abort();
        self.cancel.cancel();
    }

    /// Stops the server and waits for it to finish.
    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        let _ = self.stop.send(());
        self.serving.await.context("server task")?.context("server")?;
        drop(self.data_dir);
        Ok(())
    }
}

/// The server's configuration: the fakes, a fresh data directory, no maintenance
/// traffic, and client limits far above anything the run can send.
fn config(fakes: &Fakes, data_dir: &std::path::Path) -> anyhow::Result<Config> {
    let mut c = besluitbron_server::connectors::load_config(None, Vec::new())?;
    c.data_dir = data_dir.to_path_buf();
    c.status_refresh_secs = 0;
    for (id, url) in fakes.base_urls() {
        let p = c.platforms.get_mut(id.as_str()).context("platform in the defaults")?;
        p.base_url = url;
    }
    let unlimited = besluitbron_core::limits::RateLimit {
        requests_per_minute: u32::MAX / 2,
        burst: u32::MAX / 2,
    };
    c.mcp_rate_limit.process = unlimited;
    c.mcp_rate_limit.per_connector = unlimited;
    c.mcp_rate_limit.per_address = unlimited;
    // The clients keep their connections across the servers' turns (idle for the other
    // servers' turns and warm-ups): longer than the default idle time-out of 5 s.
    c.connections.header_read_timeout_secs = 3_600;
    // Every client is on loopback, one address: `--late-session` opens a connection per
    // call of its flood (240).
    c.connections.max_connections_per_address = c.connections.max_connections;
    // and its last calls wait their turn at 60 a minute for about three minutes.
    c.request_timeout_secs = 600;
    c.mcp_rate_limit.per_session = unlimited;
    c.sessions.initialize_per_minute = u32::MAX / 2;
    Ok(c.validated()?)
}

/// Starts rmcp alone at `path` on a free loopback port; returns its address and task.
pub(crate) async fn start_sdk_alone(
    path: &'static str,
    handler: SdkAlone,
    allowed_hosts: Vec<String>,
    idle_timeout: Duration,
) -> anyhow::Result<(SocketAddr, JoinHandle<std::io::Result<()>>)> {
    let sdk_alone = TcpListener::bind("127.0.0.1:0").await.context("bind the SDK alone")?;
    let sdk_addr = sdk_alone.local_addr()?;
    let task = tokio::spawn(serve_sdk_alone(sdk_alone, path, handler, allowed_hosts, idle_timeout));
    Ok((sdk_addr, task))
}

/// Starts the echo at [`ECHO_PATH`] on a free loopback port, answering `result` padded to
/// `pad_to` bytes; returns its address and task.
pub(crate) async fn start_echo(
    result: Value,
    pad_to: usize,
) -> anyhow::Result<(SocketAddr, JoinHandle<std::io::Result<()>>)> {
    let echo = TcpListener::bind("127.0.0.1:0").await.context("bind the echo")?;
    let echo_addr = echo.local_addr()?;
    let echo_state = Arc::new(EchoState { result, pad_to });
    let echo_app = Router::new()
        .route(ECHO_PATH, routing::post(echo_handler))
        .with_state(echo_state);
    let task =
        tokio::spawn(
            async move { axum::serve(echo, echo_app.into_make_service_with_connect_info::<SocketAddr>()).await },
        );
    Ok((echo_addr, task))
}

/// The echo's fixed part: the MCP answer's result and its body size.
struct EchoState {
    result: Value,
    pad_to: usize,
}

/// `POST /echo`: parse the request, answer `{"jsonrpc","id","result"}` with the MCP
/// answer's result serialized afresh, padded with spaces to the MCP body's size.
async fn echo_handler(State(state): State<Arc<EchoState>>, body: Bytes) -> Response {
    let request: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(_) => return StatusCode::BAD_REQUEST.into_response(),
    };
    let mut out = Vec::with_capacity(state.pad_to);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    let id = request.get("id").cloned().unwrap_or(Value::Null);
    // Writing JSON values into a Vec cannot fail.
    serde_json::to_writer(&mut out, &id).expect("serialize id");
    out.extend_from_slice(br#","result":"#);
    serde_json::to_writer(&mut out, &state.result).expect("serialize result");
    out.push(b'}');
    if out.len() < state.pad_to {
        out.resize(state.pad_to, b' ');
    }
    ([(header::CONTENT_TYPE, "application/json")], out).into_response()
}

/// The SDK alone: an rmcp server offering BesluitBron's tools (same names and schemas)
/// whose tool call answers a clone of the result BesluitBron gave for the warm-up call.
/// No client limits, no replay table, no buffer, no rendering: what the same answer
/// costs through rmcp's Streamable HTTP transport with BesluitBron's settings.
#[derive(Clone)]
pub(crate) struct SdkAlone {
    pub(crate) tools: Arc<Vec<Tool>>,
    /// `None` when the measured request is `tools/list`.
    pub(crate) answer: Option<Arc<CallToolResult>>,
}

impl ServerHandler for SdkAlone {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.as_ref().clone()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        match &self.answer {
            Some(answer) if self.tools.iter().any(|t| t.name == request.name) => {
                Ok(CallToolResponse::Complete(answer.as_ref().clone()))
            }
            _ => Err(ErrorData::invalid_params(format!("no tool {}", request.name), None)),
        }
    }
}

/// Serves [`SdkAlone`] at `path` with the transport settings BesluitBron's `App` uses:
/// sessions with the same idle time-out and completed-answer cache, plain JSON answers
/// for stateless calls, Host and Origin validation, `TCP_NODELAY`.
async fn serve_sdk_alone(
    listener: TcpListener,
    path: &'static str,
    handler: SdkAlone,
    allowed_hosts: Vec<String>,
    idle_timeout: Duration,
) -> std::io::Result<()> {
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(idle_timeout);
    sessions.session_config.completed_cache_ttl = Duration::from_secs(10);
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(allowed_hosts)
        .with_json_response(true)
        .enforce_origin_validation();
    let service = StreamableHttpService::new(move || Ok(handler.clone()), Arc::new(sessions), config);
    let app = Router::new().nest_service(path, service);
    let listener = listener.tap_io(|tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, app.into_make_service_with_connect_info::<SocketAddr>()).await
}
