//! The running server: configuration in, an axum router out.
//!
//! ```text
//! request ─▶ guard of its route (who it is — decided once —; client limits: process,
//!            connector, session/address; JSON-RPC shape; body size; initialize per
//!            address; session cap)
//!        ─▶ /mcp/<connector> | /mcp  (rmcp Streamable HTTP, one service per route)
//!        ─▶ the tool call's stack (crate::mcp) ─▶ the tool ─▶ the call layer
//!        ─▶ the platform's task (core path) ─▶ clients
//! ```
//!
//! The one module that imports every other and is imported by none: it wires the
//! layers. Routes, the guards' connector layer, maintenance tasks and tool lists all
//! come from the connector registry (`crate::connectors`). Also `/healthz` (the process
//! runs), `/readyz` (it accepts calls: not shutting down) and `/metrics` (Prometheus
//! text).
//!
//! Shutdown ([`App::serve`]): stop accepting, let running tool calls finish and their
//! answers reach the client (up to a drain time), then close the MCP streams and
//! sessions, stop the platforms' tasks and wait (bounded) for their buffer writes.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use besluitbron_core::PlatformId;
use besluitbron_core::cache::{CachePolicy, CacheVersion};
use besluitbron_core::dedup::IdempotencyConfig;
use besluitbron_core::limits::{ClientLimitConfig, ClientLimits, RateLimit};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use crate::call::Context;
use crate::clock::Clock;
use crate::cluster::forward::Node;
use crate::config::Config;
use crate::connectors::{CONNECTORS, ConnectorSpec};
use crate::driver::{self, DriverOptions, Platforms, Recorder, SendObserver, ServerBuffer};
use crate::engine::Engine;
use crate::engine::limits::SharedLimits;
use crate::engine::sessions::RestoreGate;
use crate::engine::tasks::SharedTasks;
use crate::guard::{GuardState, Guarded, RouteGuard};
use crate::mcp::replay::Replays;
use crate::mcp::tasks::TASK_TTL_MS;
use crate::mcp::{Calls, Handler, Scope};
use crate::metrics::{Metrics, PlatformLabel};
use crate::page::PageState;
use crate::store::{self, RedbStore};

/// The server's state: every layer's, as the wiring made it.
pub struct AppState {
    /// What the request guards share (settings, limits, the drain's counters).
    pub guard: Arc<GuardState>,
    /// Every tool call's shared state.
    pub calls: Arc<Calls>,
    /// The pages' state.
    pub page: Arc<PageState>,
    /// The buffers that opened.
    stores: BTreeMap<PlatformId, Arc<RedbStore>>,
    /// The accept loop's handle, once serving.
    connections: std::sync::OnceLock<crate::listen::Connections>,
    /// Several replicas: this replica's node.
    node: Option<Arc<Node>>,
    /// The administrative address, bound (`AdminListen`), when set.
    admin_addr: Option<std::net::SocketAddr>,
    /// Recording the platform calls (the `Recording` setting), when on.
    recorder: Option<Recorder>,
}

/// Test and operator hooks into a server being built.
#[derive(Clone, Default)]
pub struct Hooks {
    /// Told of every platform call that goes out (for logs and tests).
    pub on_send: Option<SendObserver>,
}

/// A built server: its router and the handles to stop it.
pub struct App {
    /// The routes; [`App::serve`] serves them through BesluitBron's accept loop
    /// (`listen.rs`), which puts each connection's `ConnectInfo<SocketAddr>` on its requests.
    pub router: Router,
    /// The state, for tests and metrics.
    pub state: Arc<AppState>,
    /// Cancelled at the end of shutdown: closes MCP streams and stops background tasks.
    pub cancel: CancellationToken,
    /// The platforms' tasks, awaited at the end of shutdown (their buffer writes).
    tasks: Vec<tokio::task::JoinHandle<()>>,
    /// The administrative address's listener and routes (`AdminListen`), when set.
    admin: Option<(tokio::net::TcpListener, Router)>,
}

impl AppState {
    /// Every platform's task.
    pub fn platforms(&self) -> &Platforms {
        &self.calls.ctx.platforms
    }

    /// The recorder of the platform calls, when recording is on.
    pub fn recorder(&self) -> Option<&Recorder> {
        self.recorder.as_ref()
    }

    /// The buffers that opened.
    pub fn stores(&self) -> &BTreeMap<PlatformId, Arc<RedbStore>> {
        &self.stores
    }

    /// Client retries answered from the first result, and request keys reused for other
    /// requests, since start.
    pub fn replay_counts(&self) -> (u64, u64) {
        self.calls.replays.counts()
    }

    /// Client connections open now; `None` before the server serves.
    pub fn open_connections(&self) -> Option<usize> {
        self.connections.get().map(crate::listen::Connections::open)
    }

    /// Standalone event streams open now.
    pub fn open_streams(&self) -> usize {
        self.guard.open_streams()
    }

    /// False once shutdown has begun: new requests are answered 503.
    pub fn is_accepting(&self) -> bool {
        self.guard.is_accepting()
    }

    /// Tool calls running now, and search parts still asking after their search answered
    /// (the shutdown drain waits for both).
    pub fn running_calls(&self) -> usize {
        self.calls.running()
    }

    /// Buffer hits' rendered results kept now (the render cache, `mcp::tool_call::render_store`).
    pub fn renders_kept(&self) -> usize {
        self.calls.render_store().len()
    }

    /// MCP messages (POSTs) under way now: admitted by the guard, their answer not yet
    /// sent to its last byte. A tool call's answer is still under way after the call.
    pub fn answers_under_way(&self) -> usize {
        self.guard.answers_under_way()
    }

    /// Open MCP sessions over all routes.
    pub async fn open_sessions(&self) -> usize {
        self.guard.open_sessions().await
    }

    /// The sessions the session cap counts: over all replicas with several (the local
    /// count while the shared engine does not answer), else this process's.
    pub async fn sessions_for_cap(&self) -> usize {
        self.guard.sessions_for_cap().await
    }

    /// The metrics registry.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.guard.metrics
    }

    /// Several replicas: this replica's node (leases, owner lookups, forwards).
    pub fn cluster(&self) -> Option<&Arc<Node>> {
        self.node.as_ref()
    }

    /// The administrative address as bound (`AdminListen`; port 0 picks one), when set:
    /// `/metrics` and `/status.json` are served there and not on `Listen`.
    pub fn admin_address(&self) -> Option<std::net::SocketAddr> {
        self.admin_addr
    }
}

impl App {
    /// Builds the server from `config` with every connector of the registry
    /// ([`crate::connectors::CONNECTORS`]): opens the buffers, starts the platforms' tasks
    /// and the maintenance tasks. Must run inside a tokio runtime.
    pub fn build(config: Config) -> anyhow::Result<App> {
        App::builder(config).build()
    }

    /// As [`App::build`], with `hooks`.
    pub fn build_with(config: Config, hooks: Hooks) -> anyhow::Result<App> {
        App::builder(config).hooks(hooks).build()
    }

    /// As [`App::build_with`]; `gated: false` restores sessions from the shared engine
    /// without the restore gate (rmcp 3.11's own behaviour): only the test that shows
    /// the race asks for that.
    #[doc(hidden)]
    pub fn build_gated(config: Config, hooks: Hooks, gated: bool) -> anyhow::Result<App> {
        App::builder(config).hooks(hooks).gated(gated).build()
    }

    /// A server to build from `config`, with every connector of the registry unless
    /// [`AppBuilder::connectors`] names others.
    pub fn builder(config: Config) -> AppBuilder {
        AppBuilder {
            config,
            hooks: Hooks::default(),
            gated: true,
            connectors: CONNECTORS.iter().collect(),
        }
    }
}

/// A server being put together: its configuration, its connectors (the registry is a
/// value the server is built from: a connector defined elsewhere, say in a test, is
/// served like the registry's own), and its hooks.
pub struct AppBuilder {
    config: Config,
    hooks: Hooks,
    gated: bool,
    connectors: Vec<&'static ConnectorSpec>,
}

impl AppBuilder {
    /// The connectors served, in the order their tools are listed at `/mcp`. The
    /// configuration must have been loaded with their platforms' defaults
    /// ([`crate::config::Config::load`]).
    pub fn connectors(mut self, connectors: impl IntoIterator<Item = &'static ConnectorSpec>) -> AppBuilder {
        self.connectors = connectors.into_iter().collect();
        self
    }

    /// Test and operator hooks.
    pub fn hooks(mut self, hooks: Hooks) -> AppBuilder {
        self.hooks = hooks;
        self
    }

    /// `false`: sessions restore without the restore gate ([`App::build_gated`]).
    #[doc(hidden)]
    pub fn gated(mut self, gated: bool) -> AppBuilder {
        self.gated = gated;
        self
    }

    /// Builds the server: opens the buffers, starts the platforms' tasks and the
    /// maintenance tasks. Must run inside a tokio runtime.
    pub fn build(self) -> anyhow::Result<App> {
        let (config, hooks, connectors) = (self.config, self.hooks, self.connectors);
        // The connectors offered: every one, but a switched-off platform's only with a mirror.
        let registry: Vec<&'static ConnectorSpec> = connectors
            .iter()
            .copied()
            .filter(|c| c.defaults.offered(&config))
            .collect();
        let clock = Clock::start();
        let metrics = Arc::new(Metrics::new());
        let cancel = CancellationToken::new();
        let version = cache_version(&config)?;
        let policy = CachePolicy::default();
        // The platforms served: the connectors'.
        let served: Vec<PlatformId> = connectors.iter().map(|c| c.platform).collect();
        let stores = open_buffers(&config, &served, &policy, &version);
        // Several replicas: a lease per budget group, shared by the group's task and its
        // lease task, and the internal endpoint's listener (its address is advertised).
        let cluster = prepare_cluster(&config, &served, clock)?;
        // Recording (off by default): one writer thread, a bounded queue.
        let recorder = Recorder::start(&config.recording, &config.data_dir, Arc::clone(&metrics))
            .map_err(|e| anyhow::anyhow!("BesluitBron.Recording: {e}"))?;
        let platforms = PlatformSetup {
            served: &served,
            config: &config,
            hooks: &hooks,
            stores: &stores,
            policy: &policy,
            clock,
            metrics: &metrics,
            cancel: &cancel,
            recorder: &recorder,
        };
        let (handles, tasks) = platforms.spawn_tasks(cluster.as_ref())?;
        let clients = crate::connectors::open_clients(&config, &connectors)?;
        let engine = shared_engine(&config)?;
        let node = match (&cluster, &engine, &config.cluster) {
            (Some(prepared), Some(engine), Some(c)) => {
                Some(prepared.node(engine.clone(), c, version.to_string(), Arc::clone(&metrics))?)
            }
            _ => None,
        };
        let ctx = Arc::new(Context::new(
            clients,
            Platforms::new(handles),
            Arc::clone(&metrics),
            clock,
            connectors
                .iter()
                .flat_map(|c| c.tools.iter().map(|t| (t.name, c.platform))),
            node.is_some(),
        ));
        let calls = Arc::new(Calls::new(
            Arc::clone(&ctx),
            registry.clone(),
            replays(&config, clock, engine.as_ref(), &metrics),
            Duration::from_secs(config.request_timeout_secs.max(1)),
            config.trusted_proxies.clone(),
        ));
        if let (Some(prepared), Some(node)) = (cluster, &node) {
            prepared.start(&calls, node, cancel.child_token());
        }
        let routes = mcp_routes(&config, &registry, &calls, &cancel, engine.as_ref(), self.gated);
        // Access tokens (`BesluitBron.Auth`): the checks, and the issuer's keys read when
        // the first token arrives.
        let auth = crate::auth::Auth::new(&config.auth, &config.contact, clock)?.map(Arc::new);
        let guard = guard_state(config, auth.clone(), clock, metrics, engine.as_ref(), &routes);
        let page = Arc::new(PageState::new(Arc::clone(&guard), Arc::clone(&calls), stores.clone()));
        let admin_listener = bind_admin(&guard.config)?;
        let admin_addr = admin_listener.as_ref().map(|l| l.local_addr()).transpose()?;
        let state = Arc::new(AppState {
            guard: Arc::clone(&guard),
            calls: Arc::clone(&calls),
            page: Arc::clone(&page),
            stores,
            connections: std::sync::OnceLock::new(),
            node,
            admin_addr,
            recorder,
        });
        let router = mcp_router(&guard, auth.as_ref(), routes);
        let (router, admin) = with_other_routes(router, &guard, &state, &page, admin_listener);
        start_maintenance(&registry, &ctx, &state, &cancel);
        Ok(App {
            router,
            state,
            cancel,
            tasks,
            admin,
        })
    }
}

impl App {
    /// Serves on `listener` until `stop` resolves, then drains: new requests are answered
    /// 503 with `Retry-After` (and `/readyz` 503) while running tool calls, and the
    /// messages under way, get up to `drain` to finish and be answered; then the MCP
    /// streams are closed, every connection is asked to finish, and after `Connections.ShutdownGraceSecs` whatever is left is dropped —
    /// a client holding a half-sent request cannot hold the exit.
    pub async fn serve(
        self,
        listener: tokio::net::TcpListener,
        stop: impl std::future::Future<Output = ()> + Send + 'static,
        drain: Duration,
    ) -> anyhow::Result<()> {
        let App {
            router,
            state,
            cancel,
            tasks,
            admin,
        } = self;
        if let Some((listener, routes)) = admin {
            let stop = cancel.clone();
            tokio::spawn(async move {
                let served = axum::serve(listener, routes)
                    .with_graceful_shutdown(async move { stop.cancelled().await })
                    .await;
                if let Err(error) = served {
                    tracing::error!(%error, "the administrative address stopped");
                }
            });
        }
        let connections_config = state.guard.config.connections;
        let (connections, accepting) = crate::listen::spawn(
            listener,
            router,
            connections_config,
            state.guard.config.trusted_proxies.clone(),
        );
        let _ = state.connections.set(connections.clone());
        stop.await;
        state.guard.accepting.store(false, Ordering::SeqCst);
        tracing::info!(
            running = state.running_calls(),
            "shutting down: draining running tool calls"
        );
        let deadline = tokio::time::Instant::now() + drain;
        // A call's answer is sent after the call ends; cancelling before its last byte
        // would cut it off, so the drain waits for the answers as well as the calls.
        let busy = || state.running_calls() > 0 || state.answers_under_way() > 0;
        while busy() && tokio::time::Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        // Several replicas: hand every lease over (after m) before the platforms stop.
        if let Some(node) = &state.node {
            node.shutdown().await;
        }
        cancel.cancel();
        connections.close_gracefully();
        let grace = tokio::time::Instant::now() + Duration::from_secs(connections_config.shutdown_grace_secs);
        while connections.open() > 0 && tokio::time::Instant::now() < grace {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if connections.open() > 0 {
            tracing::info!(
                open = connections.open(),
                "closing the connections left after the grace"
            );
        }
        connections.close_all();
        let _ = accepting.await;
        cancel.cancel();
        // The platforms' tasks finish their buffer writes; a stuck disk does not hold the
        // exit for more than a few seconds.
        let flushed = async {
            for task in tasks {
                let _ = task.await;
            }
        };
        if tokio::time::timeout(Duration::from_secs(5), flushed).await.is_err() {
            tracing::warn!("buffer writes did not finish within 5 s of shutdown");
        }
        Ok(())
    }
}

/// The cache version the buffers are keyed by: the configured one, else this build's.
fn cache_version(config: &Config) -> anyhow::Result<CacheVersion> {
    if config.cache_version.is_empty() {
        Ok(CacheVersion::current())
    } else {
        CacheVersion::new(config.cache_version.clone()).map_err(|e| anyhow::anyhow!("BesluitBron.CacheVersion: {e}"))
    }
}

/// The platforms' buffers that open; a platform whose buffer does not runs without one.
fn open_buffers(
    config: &Config,
    served: &[PlatformId],
    policy: &CachePolicy,
    version: &CacheVersion,
) -> BTreeMap<PlatformId, Arc<RedbStore>> {
    let (stores, failures) = store::open_all(&config.data_dir, served, policy, version);
    for (platform, error) in &failures {
        tracing::error!(%platform, %error, "buffer unavailable; this platform runs without one");
    }
    stores.into_iter().map(|(p, s)| (p, Arc::new(s))).collect()
}

/// Several replicas: the leases and the internal endpoint's listener, when set.
fn prepare_cluster(
    config: &Config,
    served: &[PlatformId],
    clock: Clock,
) -> anyhow::Result<Option<crate::cluster::setup::Prepared>> {
    match &config.cluster {
        Some(c) => {
            let groups = config
                .budget_groups()
                .map_err(|e| anyhow::anyhow!("BesluitBron.Services: {e}"))?;
            Ok(Some(crate::cluster::setup::prepare(c, &groups, served, clock)?))
        }
        None => Ok(None),
    }
}

/// Several replicas: the shared engine (Redis), when set.
fn shared_engine(config: &Config) -> anyhow::Result<Option<Engine>> {
    match &config.cluster {
        Some(c) => Ok(Some(
            Engine::new(&c.redis).map_err(|e| anyhow::anyhow!("BesluitBron.Cluster.Redis: {e}"))?,
        )),
        None => Ok(None),
    }
}

/// Every platform's handle, and the join handles of their tasks.
type PlatformTasks = (
    BTreeMap<PlatformId, driver::PlatformHandle>,
    Vec<tokio::task::JoinHandle<()>>,
);

/// What every platform's task is started with.
struct PlatformSetup<'a> {
    /// The platforms served (the connector registry's).
    served: &'a [PlatformId],
    config: &'a Config,
    hooks: &'a Hooks,
    stores: &'a BTreeMap<PlatformId, Arc<RedbStore>>,
    policy: &'a CachePolicy,
    clock: Clock,
    metrics: &'a Arc<Metrics>,
    cancel: &'a CancellationToken,
    recorder: &'a Option<Recorder>,
}

impl PlatformSetup<'_> {
    /// One task per budget group, limited or not: every platform's handle and the join
    /// handles.
    fn spawn_tasks(&self, cluster: Option<&crate::cluster::setup::Prepared>) -> anyhow::Result<PlatformTasks> {
        let config = self.config;
        let mut handles = BTreeMap::new();
        let mut tasks = Vec::new();
        for group in config
            .budget_groups()
            .map_err(|e| anyhow::anyhow!("BesluitBron.Services: {e}"))?
        {
            let platforms: Vec<PlatformId> = group
                .platforms
                .iter()
                .copied()
                .filter(|p| self.served.contains(p))
                .collect();
            if platforms.is_empty() {
                continue;
            }
            let members = platforms
                .iter()
                .map(|&platform| driver::task::Member {
                    buffer: ServerBuffer::new(
                        platform,
                        self.stores.get(&platform).cloned(),
                        self.policy.for_platform(platform),
                    ),
                    first: config.first_service(platform).unwrap_or(group.services[0]),
                })
                .collect();
            let slowest = platforms
                .iter()
                .map(|&p| config.platform(p).timeout_ms)
                .max()
                .unwrap_or(15_000);
            let options = DriverOptions {
                clock: self.clock,
                metrics: Arc::clone(self.metrics),
                attempt_timeout: Duration::from_millis(slowest.saturating_mul(2)),
                observer: self.hooks.on_send.clone(),
                cancel: self.cancel.child_token(),
                recorder: self.recorder.clone(),
            };
            let gate = cluster.and_then(|c| c.gate(group.name()));
            let (group_handles, task) =
                driver::task::spawn_leased(&group, driver::path_config(config, &group), members, options, gate)
                    .map_err(|e| anyhow::anyhow!("BesluitBron.Services.{}: {e}", group.name()))?;
            for handle in group_handles {
                handles.insert(handle.platform(), handle);
            }
            tasks.push(task);
        }
        Ok((handles, tasks))
    }
}

/// The table of client retries answered from the first result (idempotency keys).
fn replays(config: &Config, clock: Clock, engine: Option<&Engine>, metrics: &Arc<Metrics>) -> Replays {
    // Retries come within seconds to a minute; two minutes, 10,000 results and 64 MiB
    // keep the memory a busy server spends on them bounded. Under more load than that,
    // the oldest results go first and a late retry runs again.
    Replays::new(
        IdempotencyConfig {
            window: Duration::from_secs(120),
            max_entries: 10_000,
            max_bytes: 64 << 20,
            // A seed of this process's own (std's random hash keys), unknown to the
            // clients whose request ids are the table's keys.
            seed: std::hash::BuildHasher::hash_one(&std::hash::RandomState::new(), 0u8),
        },
        clock,
    )
    .shared(engine.map(|e| {
        // The same window as the local table; a first attempt holds its key for the
        // request time-out and a margin at most.
        let running_for = Duration::from_secs(config.request_timeout_secs.max(1) + 5);
        crate::engine::replays::SharedReplays::new(e.clone(), Duration::from_secs(120), running_for)
    }))
    .with_metrics(Arc::clone(metrics))
}

/// The request guard's state over `routes`: access tokens, the client limits (local, and on
/// the shared engine with several replicas), the sessions' managers.
fn guard_state(
    config: Config,
    auth: Option<Arc<crate::auth::Auth>>,
    clock: Clock,
    metrics: Arc<Metrics>,
    engine: Option<&Engine>,
    routes: &[McpRoute],
) -> Arc<GuardState> {
    Arc::new(GuardState {
        auth,
        session_users: Mutex::default(),
        limits: Mutex::new(ClientLimits::new(config.mcp_rate_limit)),
        initializes: Mutex::new(initialize_limits(&config)),
        shared_limits: shared_limits(&config, engine),
        config,
        clock,
        metrics,
        session_managers: routes.iter().map(|r| Arc::clone(&r.sessions)).collect(),
        accepting: AtomicBool::new(true),
        answering: AtomicUsize::new(0),
        streams: Mutex::default(),
    })
}

/// The client limits on the shared engine, with several replicas.
fn shared_limits(config: &Config, engine: Option<&Engine>) -> Option<SharedLimits> {
    let per_minute = config.sessions.initialize_per_minute.max(1);
    engine.map(|e| {
        SharedLimits::new(
            e.clone(),
            config.mcp_rate_limit,
            RateLimit {
                requests_per_minute: per_minute,
                burst: per_minute.div_ceil(4).max(2),
            },
        )
    })
}

/// The limits of `initialize` per client address (its "session" layer); the other
/// layers do not limit it.
fn initialize_limits(config: &Config) -> ClientLimits {
    let per_minute = config.sessions.initialize_per_minute.max(1);
    ClientLimits::new(ClientLimitConfig {
        process: RateLimit {
            requests_per_minute: u32::MAX / 2,
            burst: u32::MAX / 2,
        },
        per_connector: RateLimit {
            requests_per_minute: u32::MAX / 2,
            burst: u32::MAX / 2,
        },
        per_address: RateLimit {
            requests_per_minute: u32::MAX / 2,
            burst: u32::MAX / 2,
        },
        per_session: RateLimit {
            requests_per_minute: per_minute,
            burst: per_minute.div_ceil(4).max(2),
        },
        per_user: RateLimit {
            requests_per_minute: u32::MAX / 2,
            burst: u32::MAX / 2,
        },
        max_tracked: config.mcp_rate_limit.max_tracked,
    })
}

/// One MCP route: its address, what it offers, its sessions and its service.
struct McpRoute {
    path: String,
    /// The same service at addresses ending in `/mcp` (`/<id>/mcp`), which clients that
    /// recognise an MCP endpoint by its path (the Inspector's) reach as is.
    aliases: Vec<String>,
    scope: Scope,
    sessions: Arc<RestoreGate>,
    /// The route's sessions in the shared engine, with several replicas.
    store: Option<Arc<crate::engine::sessions::RedisSessionStore>>,
    service: StreamableHttpService<Handler, RestoreGate>,
}

/// One MCP service per route: each connector, and all of them at `/mcp`.
fn mcp_routes(
    config: &Config,
    registry: &[&'static ConnectorSpec],
    calls: &Arc<Calls>,
    cancel: &CancellationToken,
    engine: Option<&Engine>,
    gated: bool,
) -> Vec<McpRoute> {
    let routes: Vec<(String, Vec<String>, Scope)> = registry
        .iter()
        .map(|&c| (format!("/mcp/{}", c.id), vec![format!("/{}/mcp", c.id)], Scope::One(c)))
        .chain([("/mcp".to_owned(), Vec::new(), Scope::All)])
        .collect();
    let mut services = Vec::new();
    for (path, aliases, scope) in routes {
        let mut sm = LocalSessionManager::default();
        sm.session_config.keep_alive = Some(Duration::from_secs(config.sessions.idle_timeout_secs.max(1)));
        // rmcp keeps each completed answer this long for a client that resumes a broken
        // stream; a minute of large answers under load is gigabytes. Ten seconds covers
        // a reconnect; a client that missed more retries the call (a replay).
        sm.session_config.completed_cache_ttl = Duration::from_secs(10);
        let sm = Arc::new(if gated {
            RestoreGate::new(sm)
        } else {
            RestoreGate::ungated(sm)
        });
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
        // With several replicas, legacy sessions live in the shared engine too: a
        // request of a session another replica opened is restored here.
        let store = engine.map(|e| {
            let idle = Duration::from_secs(config.sessions.idle_timeout_secs.max(1));
            Arc::new(
                crate::engine::sessions::RedisSessionStore::new(e.clone(), scope.id(), idle).gated_by(sm.restoring()),
            )
        });
        if let Some(store) = &store {
            mcp_config.session_store =
                Some(Arc::clone(store)
                    as Arc<
                        dyn rmcp::transport::streamable_http_server::session::SessionStore,
                    >);
        }
        // One handler per route; each session and each stateless request gets a
        // clone (two `Arc`s), not a newly built set of tools.
        let shared_tasks = engine.map(|e| SharedTasks::new(e.clone(), Duration::from_millis(TASK_TTL_MS)));
        let handler = Handler::new(Arc::clone(calls), scope).tasks_shared(shared_tasks, &path);
        let service = StreamableHttpService::new(move || Ok(handler.clone()), Arc::clone(&sm), mcp_config);
        services.push(McpRoute {
            path,
            aliases,
            scope,
            sessions: sm,
            store,
            service,
        });
    }
    services
}

/// The administrative address's listener (`AdminListen`), when set.
fn bind_admin(config: &Config) -> anyhow::Result<Option<tokio::net::TcpListener>> {
    match config.admin_listen {
        Some(addr) => {
            let listener =
                crate::listen::bind(addr).map_err(|e| anyhow::anyhow!("BesluitBron.AdminListen {addr}: {e}"))?;
            Ok(Some(listener))
        }
        None => Ok(None),
    }
}

/// The MCP routes, each behind its guard, and the answer to any other address under `/mcp/`.
fn mcp_router(guard: &Arc<GuardState>, auth: Option<&Arc<crate::auth::Auth>>, routes: Vec<McpRoute>) -> Router {
    // The addresses served, for the answer to any other under `/mcp/`.
    let addresses: Arc<str> = Arc::from(unknown_mcp_address_text(
        &routes.iter().map(|r| r.path.as_str()).collect::<Vec<_>>(),
    ));
    let mut router = Router::new();
    if let Some(auth) = auth {
        let paths = routes.iter().flat_map(|r| std::iter::once(&r.path).chain(&r.aliases));
        router = protected_resource_metadata(router, auth, paths.map(String::as_str));
    }
    for McpRoute {
        path,
        aliases,
        scope,
        sessions,
        store,
        service,
    } in routes
    {
        let route = RouteGuard {
            state: Arc::clone(guard),
            connector: scope.id(),
            sessions,
            store,
        };
        // Exactly these addresses: `/mcp/nope` or `/mcp/obv/extra` is no MCP server.
        let guarded = Guarded::new(route, service);
        for address in std::iter::once(&path).chain(&aliases) {
            router = router.merge(Router::new().route_service(address, guarded.clone()));
        }
    }
    router.route(
        "/mcp/{*rest}",
        any(move |body: axum::body::Body| {
            let addresses = Arc::clone(&addresses);
            async move {
                // The request's body is read (up to 64 KiB) before the answer: an answer
                // to a request whose body is still arriving closes the connection
                // after it, and a client that reuses the connection loses its next
                // request ("Server disconnected", about one time in three).
                let _ = axum::body::to_bytes(body, 64 * 1024).await;
                (
                    StatusCode::NOT_FOUND,
                    [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
                    addresses.to_string(),
                )
            }
        }),
    )
}

/// The MCP router with the routes beside it (health, metrics, pages), and the
/// administrative address's listener and routes when there is one.
fn with_other_routes(
    router: Router,
    guard: &Arc<GuardState>,
    state: &Arc<AppState>,
    page: &Arc<PageState>,
    admin_listener: Option<tokio::net::TcpListener>,
) -> (Router, Option<(tokio::net::TcpListener, Router)>) {
    // The routes beside MCP's get the same Host check (DNS rebinding); the MCP routes
    // have rmcp's own.
    // With an administrative address, `/metrics` and `/status.json` are served there
    // only.
    let health = || {
        Router::new()
            .route("/healthz", get(|| async { "ok\n" }))
            .route("/readyz", get(readyz))
    };
    let host_checked = |r: Router<Arc<AppState>>| {
        r.route_layer(axum::middleware::from_fn_with_state(
            Arc::clone(guard),
            crate::guard::host_check,
        ))
        .with_state(Arc::clone(state))
    };
    let with_metrics = || health().route("/metrics", get(metrics_text));
    let (others, admin) = match admin_listener {
        Some(listener) => {
            let admin = host_checked(with_metrics()).merge(crate::page::status_json_route(page));
            (host_checked(health()), Some((listener, admin)))
        }
        None => (host_checked(with_metrics()), None),
    };
    let router = router.merge(others).merge(crate::page::routes(page, admin.is_none()));
    (router, admin)
}

/// The offered connectors' maintenance tasks, each at the interval its settings give.
fn start_maintenance(
    registry: &[&'static ConnectorSpec],
    ctx: &Arc<Context>,
    state: &Arc<AppState>,
    cancel: &CancellationToken,
) {
    for c in registry {
        if let Some(m) = c.maintenance
            && let Some(every) = (m.every)(&state.guard.config)
        {
            tokio::spawn(maintenance(
                Arc::clone(ctx),
                state.node.clone(),
                c.platform,
                m,
                every,
                cancel.child_token(),
            ));
        }
    }
}

/// Runs a connector's maintenance every `every`, as BesluitBron's own system session.
async fn maintenance(
    ctx: Arc<Context>,
    node: Option<Arc<Node>>,
    platform: PlatformId,
    m: crate::connectors::Maintenance,
    every: Duration,
    cancel: CancellationToken,
) {
    loop {
        // Several replicas: the platform's owner does it; the others look again each TTL.
        if let Some(node) = &node
            && !node.owns_now(platform)
        {
            tokio::select! {
                () = cancel.cancelled() => return,
                () = tokio::time::sleep(node.lease_config().ttl) => continue,
            }
        }
        if let Err(error) = (m.run)(&ctx).await {
            tracing::warn!(%error, "{} failed", m.name);
        }
        tokio::select! {
            () = cancel.cancelled() => return,
            () = tokio::time::sleep(every) => {}
        }
    }
}

async fn readyz(State(state): State<Arc<AppState>>) -> Response {
    if state.is_accepting() {
        (StatusCode::OK, "ready\n").into_response()
    } else {
        (StatusCode::SERVICE_UNAVAILABLE, "shutting down\n").into_response()
    }
}

async fn metrics_text(State(state): State<Arc<AppState>>) -> Response {
    let m = state.metrics();
    let mut services_seen = std::collections::BTreeSet::new();
    for (platform, handle) in state.platforms().iter() {
        let Some(snap) = handle.snapshot(false).await else {
            continue;
        };
        let label = PlatformLabel {
            platform: platform.as_str(),
        };
        let gauge = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        m.in_flight.get_or_create(&label).set(gauge(snap.in_flight));
        m.flight_waiters.get_or_create(&label).set(gauge(snap.waiting));
        // A counter of the path's own count: it only grows, so the difference is added
        // (one scrape at a time, so two never add the same difference).
        {
            static REFRESH: std::sync::Mutex<()> = std::sync::Mutex::new(());
            let _one = REFRESH.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
            let withdrawn = m.withdrawn_calls.get_or_create(&label);
            withdrawn.inc_by(snap.stats.withdrawn.saturating_sub(withdrawn.get()));
        }
        m.pending_writes.get_or_create(&label).set(gauge(snap.pending_writes));
        m.memory_bytes.get_or_create(&label).set(gauge(snap.memory_bytes));
        // Each service's budget once, however many platforms call it.
        for lane in snap.lanes.iter().filter(|l| l.limited) {
            if services_seen.insert(lane.name) {
                let service = crate::metrics::ServiceLabel { service: lane.name };
                m.service_queue_length.get_or_create(&service).set(gauge(lane.queued));
                m.service_waiting_sessions
                    .get_or_create(&service)
                    .set(gauge(lane.waiting_sessions));
                m.service_bucket_units
                    .get_or_create(&service)
                    .set(lane.tokens.as_milli() as f64 / 1000.0);
            }
        }
        // The platform's own row: the budget its searches go to (its first service's).
        let Some(lane) = snap.lanes.get(handle.main_lane()).filter(|l| l.limited) else {
            continue;
        };
        m.queue_length.get_or_create(&label).set(gauge(lane.queued));
        m.waiting_sessions
            .get_or_create(&label)
            .set(gauge(lane.waiting_sessions));
        m.bucket_units
            .get_or_create(&label)
            .set(lane.tokens.as_milli() as f64 / 1000.0);
    }
    m.sessions_open
        .set(i64::try_from(state.open_sessions().await).unwrap_or(i64::MAX));
    let mut out = m.render();
    let stores: Vec<Arc<RedbStore>> = state.stores.values().cloned().collect();
    let stats = tokio::task::spawn_blocking(move || {
        use besluitbron_core::cache::CacheStore;
        stores.iter().filter_map(|s| s.stats().ok()).collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    out.push_str(&store::render_prometheus(&stats));
    ([(header::CONTENT_TYPE, crate::metrics::CONTENT_TYPE)], out).into_response()
}

/// Protected Resource Metadata (RFC 9728) at `/.well-known/oauth-protected-resource`
/// and its path-suffixed form for each MCP address (`…/oauth-protected-resource/mcp`,
/// `…/mcp/obv`): one document, one resource for every address. Public metadata, so
/// readable from any origin.
fn protected_resource_metadata<S: Clone + Send + Sync + 'static>(
    mut router: Router<S>,
    auth: &crate::auth::Auth,
    mcp_paths: impl Iterator<Item = impl AsRef<str>>,
) -> Router<S> {
    let document: Arc<str> = Arc::from(auth.metadata().to_string());
    let serve = move || {
        let document = Arc::clone(&document);
        get(move || async move {
            (
                [
                    (header::CONTENT_TYPE, "application/json"),
                    (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
                    (header::CACHE_CONTROL, "max-age=3600"),
                ],
                document.to_string(),
            )
        })
    };
    router = router.route(crate::auth::METADATA_PATH, serve());
    for path in mcp_paths {
        router = router.route(&format!("{}{}", crate::auth::METADATA_PATH, path.as_ref()), serve());
    }
    router
}

/// The answer to an address under `/mcp/` that serves nothing: which ones do.
fn unknown_mcp_address_text(paths: &[&str]) -> String {
    let mut paths = paths.to_vec();
    paths.sort_unstable();
    format!(
        "No MCP server at this address. BesluitBron serves MCP at {} (`/mcp`: every platform's tools; \
         `/mcp/<id>`, also at `/<id>/mcp`: one platform's).\n",
        paths.join(", ")
    )
}
