//! The follower's path and the owner's internal endpoint (several replicas).
//!
//! ```text
//! follower: tools/call ─▶ tool ─▶ fetch: memory-layer hit? answered here
//!                                      └ Reply::Elsewhere(platform) ─▶ route layer ─▶ Node (a Route)
//!   route: GET besluitbron:lease:<budget of the platform> (cached briefly)
//!          ├ another replica ─▶ POST <its InternalUrl>/internal/v1/call (Secret)
//!          │                     ◀ {"progress":…}\n … {"result": CallToolResult}\n
//!          │                     ◀ {"not_owner":true}\n: look up again (bounded)
//!          ├ this replica (its lease is starting): run the tool here once it admits
//!          └ no owner / Redis unreachable until the routing time is up: fail closed
//! owner:   the endpoint runs the tool call through its own stack below the route
//!          (`Calls::call_here`: arguments, time-out, the tool) as that caller (its
//!          fairness key), so the buffer, coalescing, the fair queue, refunds and the
//!          travel margin hold at the owner by construction; a forward is never
//!          forwarded on.
//! ```
//!
//! What is forwarded is the **tool call** (tool name, arguments, the caller's fairness
//! key and address, how long it has been routed, the cache version), not the platform
//! request: a platform call is a closure a tool builds from its typed arguments, and the
//! tool call is its serializable recipe (`docs/replicas.md`). A
//! forward whose client goes away is dropped at the owner too: its request future is
//! dropped there, which withdraws it from the path.

use std::collections::{BTreeMap, HashMap};

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use besluitbron_core::cluster::{LeaseConfig, LeaseState};
use besluitbron_core::{PlatformId, SessionKey};
use rmcp::model::{CallToolResult, JsonObject};
use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

use crate::call::{Call, Document, Progress, Report, ToolResult, tool_error};
use crate::connectors::page_spec::Hits;
use crate::connectors::vocabulary::Listing;
use crate::driver::lease::{lease_key, owner_url};
use crate::driver::{LeaseGate, QueuePosition};
use crate::engine::{Engine, EngineError};
use crate::identity::Caller;
use crate::mcp::route::{Answer, Rerun, Route, RouteFuture, Want};
use crate::mcp::{Calls, ToolRequest};
use crate::metrics::{Metrics, PlatformLabel};
use crate::telemetry::{context, spans};

/// The internal endpoint's path.
pub const CALL_PATH: &str = "/internal/v1/call";

/// How long an owner lookup is believed.
const OWNER_CACHE: Duration = Duration::from_millis(250);

/// How often routing looks again while there is no owner to reach.
const ROUTE_RETRY: Duration = Duration::from_millis(100);

/// Most forwards of one call that an owner took and gave back ("not owner", or broken
/// off after it had answered something). A replica that cannot be reached at all (a
/// killed owner whose lease has not run out yet) is tried again until the routing time
/// is up instead: refused connections come back in a millisecond, and counting them
/// ended a call long before a dead owner's lease could run out.
const MAX_ROUTES: u32 = 32;

/// The largest answer a forward reads (a tool's result with its structured content).
const MAX_ANSWER_BYTES: usize = 64 << 20;

/// One forwarded call on the wire.
#[derive(Debug, Serialize, Deserialize)]
struct ForwardRequest {
    platform: String,
    tool: String,
    arguments: Option<JsonObject>,
    /// The caller's fairness key; `None`: BesluitBron's system session.
    session: Option<String>,
    address: String,
    /// How long the call was routed before this forward (informational: the owner's
    /// path has no arrival time to set).
    waited_ms: u64,
    cache_version: String,
    /// Always 1: a forward is never forwarded on. On the wire for replicas of the
    /// previous release, which require it.
    #[serde(default)]
    hops: u8,
    /// The user this replica's guard resolved from an access token (its opaque key, never
    /// the token); absent without one, and from replicas of the previous release.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    user: Option<String>,
    /// A part of `search`: the tool's question answered as a listing, not its result.
    /// Absent (false) from replicas of the previous release, which forward results only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    listing: bool,
    /// A search of the search page: the tool's question answered as the page's hits.
    /// Absent (false) from replicas of earlier releases.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    hits: bool,
    /// `fetch` with a reading tool's own arguments: the record answered as a document.
    /// Absent (false) from replicas of earlier releases.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    document: bool,
}

/// One line of a forward's answer.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ForwardLine {
    Progress {
        ahead_in_session: usize,
        waiting_sessions: usize,
        queued_calls: usize,
        estimated_wait_ms: u64,
    },
    Result(Box<CallToolResult>),
    /// The listing a part of `search` asked for.
    Listed(Box<Listing>),
    /// The hits a search of the search page asked for.
    Hits(Box<Hits>),
    /// The record `fetch` asked a reading tool for.
    Document(Box<Document>),
    NotOwner,
    /// Sent every [`HEARTBEAT`] while the owner works on the call: a forward that hears
    /// nothing for [`SILENCE`] is given up (a frozen owner, a half-open link) and routed
    /// again.
    Alive,
}

/// How often the owner says a forwarded call is still being worked on.
const HEARTBEAT: Duration = Duration::from_secs(1);

/// How long a follower waits for any line of a forward's answer.
const SILENCE: Duration = Duration::from_secs(5);

/// How one round of routing a call ended.
enum Routed {
    /// The owner answered.
    Answer(Answer),
    /// This replica owns the platform now: run the call here.
    Local,
    /// No owner could be reached in time: fail closed.
    Closed,
}

/// What became of one forward.
enum Forward {
    Answer(Answer),
    NotOwner,
    /// The forward failed; `heard`: the owner had taken the call (its answer began).
    Broken {
        why: String,
        heard: bool,
    },
}

/// This replica in a cluster: its identity, its leases, owner lookups and forwards.
pub struct Node {
    engine: Engine,
    clock: crate::clock::Clock,
    url: String,
    listen: std::net::SocketAddr,
    secret: String,
    replica: String,
    lease: LeaseConfig,
    cache_version: String,
    http: reqwest::Client,
    metrics: Arc<Metrics>,
    /// Each platform's budget (its budget group's name, the lease's key).
    budgets: BTreeMap<PlatformId, &'static str>,
    gates: BTreeMap<PlatformId, LeaseGate>,
    owners: Mutex<HashMap<PlatformId, (tokio::time::Instant, Option<String>)>>,
    /// Cancelled for a graceful shutdown: the lease tasks hand over.
    shutdown: CancellationToken,
    /// Cancelled when the replica is killed (tests): forwards in progress end at once.
    killed: CancellationToken,
    tasks: Mutex<Vec<tokio::task::JoinHandle<()>>>,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Node({} at {})", self.replica, self.url)
    }
}

/// A fresh random replica id (no RNG crate needed: the std hasher's random keys).
fn replica_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_nanos(),
    );
    format!("{:016x}", h.finish())
}

/// Compares two secrets in time independent of where they differ.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    if given.len() != expected.len() {
        return false;
    }
    given.iter().zip(expected).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
}

impl Node {
    /// A node advertising `url`, with each platform's lease gate (its budget's, shared by
    /// the platforms of one budget group) and budget name; an error when its HTTP
    /// client for forwards cannot be built (never a client without its time-out).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        engine: Engine,
        clock: crate::clock::Clock,
        url: String,
        listen: std::net::SocketAddr,
        secret: String,
        lease: LeaseConfig,
        cache_version: String,
        metrics: Arc<Metrics>,
        gates: BTreeMap<PlatformId, LeaseGate>,
        budgets: BTreeMap<PlatformId, &'static str>,
    ) -> Result<Node, reqwest::Error> {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(2))
            .build()?;
        Ok(Node {
            engine,
            clock,
            url,
            listen,
            secret,
            replica: replica_id(),
            lease,
            cache_version,
            http,
            metrics,
            gates,
            budgets,
            owners: Mutex::new(HashMap::new()),
            shutdown: CancellationToken::new(),
            killed: CancellationToken::new(),
            tasks: Mutex::new(Vec::new()),
        })
    }

    /// This replica's id.
    pub fn replica(&self) -> &str {
        &self.replica
    }

    /// How the other replicas reach this one.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Where the internal endpoint listens (the bound address).
    pub fn internal_addr(&self) -> std::net::SocketAddr {
        self.listen
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The lease's timing.
    pub fn lease_config(&self) -> LeaseConfig {
        self.lease
    }

    /// Whether this replica owns `platform` and admits now, by its own clock.
    pub fn owns(&self, platform: PlatformId, now: besluitbron_core::Instant) -> bool {
        self.gates
            .get(&platform)
            .is_some_and(|g| g.lock().expect("lease lock").may_admit(now))
    }

    /// Whether this replica owns `platform` and admits now.
    pub fn owns_now(&self, platform: PlatformId) -> bool {
        self.owns(platform, self.clock.now())
    }

    /// Where this replica stands for `platform`.
    pub fn lease_state(&self, platform: PlatformId, now: besluitbron_core::Instant) -> Option<LeaseState> {
        self.gates
            .get(&platform)
            .map(|g| g.lock().expect("lease lock").state(now))
    }

    pub(crate) fn add_task(&self, task: tokio::task::JoinHandle<()>) {
        self.tasks.lock().expect("task lock").push(task);
    }

    pub(crate) fn shutdown_token(&self) -> CancellationToken {
        self.shutdown.clone()
    }

    /// Forgets the cached owner of `platform`.
    pub fn forget_owner(&self, platform: PlatformId) {
        self.owners.lock().expect("owner cache lock").remove(&platform);
    }

    /// A graceful shutdown: every lease is handed over (no new admissions, admissions
    /// made may go for m, then the lease is released), bounded in time.
    pub async fn shutdown(&self) {
        self.shutdown.cancel();
        let tasks: Vec<_> = std::mem::take(&mut *self.tasks.lock().expect("task lock"));
        let bound = self.lease.margin + crate::engine::CONNECT_TIMEOUT * 2 + crate::engine::RESPONSE_TIMEOUT * 2;
        let all = async {
            for t in tasks {
                let _ = t.await;
            }
        };
        if tokio::time::timeout(bound, all).await.is_err() {
            tracing::warn!("the leases were not all handed over in time; they run out by themselves");
        }
    }

    /// Stops this replica's cluster part abruptly, as a crash would (tests): the lease
    /// tasks end without releasing anything, forwards being answered here break off.
    pub fn kill(&self) {
        self.killed.cancel();
        for t in self.tasks.lock().expect("task lock").drain(..) {
            t.abort();
        }
    }

    /// The owner of `platform` as the engine names it: `Ok(None)` when nobody holds
    /// the lease.
    async fn owner(&self, platform: PlatformId) -> Result<Option<String>, EngineError> {
        let now = tokio::time::Instant::now();
        if let Some((at, owner)) = self.owners.lock().expect("owner cache lock").get(&platform)
            && now < *at + OWNER_CACHE
        {
            return Ok(owner.clone());
        }
        let looked = async {
            let mut c = self.engine.connection().await?;
            let budget = self.budgets.get(&platform).copied().unwrap_or(platform.as_str());
            let value: Option<String> = redis::cmd("GET").arg(lease_key(budget)).query_async(&mut c).await?;
            Ok::<_, EngineError>(value)
        };
        let value = tokio::time::timeout(crate::engine::RESPONSE_TIMEOUT * 2, looked)
            .await
            .map_err(|_| EngineError("the owner lookup timed out".to_owned()))??;
        let owner = value.as_deref().and_then(owner_url).map(str::to_owned);
        self.owners
            .lock()
            .expect("owner cache lock")
            .insert(platform, (now, owner.clone()));
        Ok(owner)
    }

    /// How long a call is routed before it fails closed: long enough for a dead owner's
    /// lease to run out and a new owner's start wait (2·TTL + 2·m).
    fn routing_budget(&self) -> Duration {
        self.lease.ttl * 2 + self.lease.margin * 2
    }

    /// The tool error of a call that found no owner in time (fail closed: never a call
    /// to the platform outside a lease).
    pub fn closed_error(&self, platform: PlatformId) -> CallToolResult {
        let retry = (self.lease.ttl + self.lease.margin).as_secs_f64().ceil();
        tool_error(format!(
            "BesluitBron's replicas cannot agree on who may call {} now (shared state unreachable); retry in {retry} s",
            platform.display_name()
        ))
    }

    /// One round of routing: the owner's answer, word that this replica owns the
    /// platform now, or that no owner could be reached by `deadline`. Time a call spent
    /// at an owner that had taken it (waiting its turn in the owner's fair queue) is not
    /// routing time: when such a forward breaks off, the call gets a whole routing
    /// budget from then on to find the next owner.
    async fn route_once(
        &self,
        platform: PlatformId,
        deadline: tokio::time::Instant,
        (call, arguments, want): (&Call, &JsonObject, Want),
        started: tokio::time::Instant,
    ) -> Routed {
        let mut deadline = deadline;
        let mut forwards = 0;
        while tokio::time::Instant::now() < deadline && forwards < MAX_ROUTES {
            let owner = match self.owner(platform).await {
                Ok(Some(owner)) => owner,
                Ok(None) | Err(_) => {
                    self.forget_owner(platform);
                    tokio::time::sleep(ROUTE_RETRY).await;
                    continue;
                }
            };
            if owner == self.url {
                // The lease is this replica's: run here once its start wait is over.
                if self.wait_until_admitting(platform, deadline).await {
                    return Routed::Local;
                }
                // The engine still names this replica for a lease it no longer holds.
                self.forget_owner(platform);
                tokio::time::sleep(ROUTE_RETRY).await;
                continue;
            }
            self.metrics
                .forwarded_calls
                .get_or_create(&PlatformLabel {
                    platform: platform.as_str(),
                })
                .inc();
            let waited = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
            // Traced: the forward's span, whose `traceparent` the owner's spans join.
            let span = spans::forward_client(platform.as_str(), &owner);
            let forward = self
                .forward(
                    &owner,
                    platform,
                    (call, arguments, want),
                    waited,
                    context::traceparent(&span),
                )
                .instrument(span);
            let forward = tokio::select! {
                biased;
                f = forward => f,
                // The client gave up: the forward is dropped, which withdraws it at the owner.
                () = call.ct.cancelled() => {
                    return Routed::Answer(Answer::Result(tool_error("the request was cancelled").into()));
                }
                () = self.killed.cancelled() => std::future::pending().await,
            };
            match forward {
                Forward::Answer(r) => return Routed::Answer(r),
                Forward::NotOwner => {
                    forwards += 1;
                    self.forget_owner(platform);
                    tokio::time::sleep(ROUTE_RETRY / 2).await;
                }
                Forward::Broken { why, heard } => {
                    tracing::debug!(%platform, %owner, %why, heard, "forward failed; looking the owner up again");
                    if heard {
                        forwards += 1;
                        deadline = deadline.max(tokio::time::Instant::now() + self.routing_budget());
                        self.forget_owner(platform);
                    }
                    // An unreachable owner is looked up again when the cached answer
                    // runs out (`OWNER_CACHE`): every waiting call asking Redis ten
                    // times a second while a dead owner's lease runs out is load for
                    // nothing.
                    tokio::time::sleep(ROUTE_RETRY).await;
                }
            }
        }
        Routed::Closed
    }

    /// Waits (until `deadline`) while this replica holds `platform`'s lease and its start
    /// wait runs; true once it admits.
    async fn wait_until_admitting(&self, platform: PlatformId, deadline: tokio::time::Instant) -> bool {
        let Some(gate) = self.gates.get(&platform) else {
            return false;
        };
        loop {
            let (admits, state) = {
                let g = gate.lock().expect("lease lock");
                let now = self.clock.now();
                (g.may_admit(now), g.state(now))
            };
            if admits {
                return true;
            }
            match state {
                LeaseState::Waiting { .. } | LeaseState::Owner { .. } if tokio::time::Instant::now() < deadline => {
                    tokio::time::sleep(ROUTE_RETRY / 2).await;
                }
                _ => return false,
            }
        }
    }

    async fn forward(
        &self,
        owner: &str,
        platform: PlatformId,
        (call, arguments, want): (&Call, &JsonObject, Want),
        waited_ms: u64,
        traceparent: Option<String>,
    ) -> Forward {
        let body = ForwardRequest {
            platform: platform.as_str().to_owned(),
            tool: call.tool.to_owned(),
            arguments: Some(arguments.clone()),
            session: match &call.caller.session {
                SessionKey::System => None,
                SessionKey::Client(id) => Some(id.to_string()),
            },
            address: call.caller.address.clone(),
            waited_ms,
            cache_version: self.cache_version.clone(),
            hops: 1,
            user: call.caller.user.clone(),
            listing: want == Want::Listing,
            hits: want == Want::Hits,
            document: want == Want::Document,
        };
        let broken = |why: String, heard: bool| Forward::Broken { why, heard };
        let Ok(body) = serde_json::to_vec(&body) else {
            return broken("the call could not be encoded".to_owned(), false);
        };
        let mut post = self
            .http
            .post(format!("{owner}{CALL_PATH}"))
            .header(header::AUTHORIZATION, format!("Bearer {}", self.secret))
            .header(header::CONTENT_TYPE, "application/json");
        // The trace goes with the call (a replica of the previous release ignores it).
        if let Some(traceparent) = traceparent {
            post = post.header(context::TRACEPARENT, traceparent);
        }
        let sent = post.body(body).send();
        // The owner answers its headers at once and streams the rest.
        let mut resp = match tokio::time::timeout(SILENCE, sent).await {
            Ok(Ok(r)) if r.status().is_success() => r,
            Ok(Ok(r)) => return broken(format!("the owner answered HTTP {}", r.status().as_u16()), false),
            Ok(Err(e)) => return broken(format!("the owner is unreachable: {e}"), false),
            Err(_) => return broken(format!("the owner said nothing for {} s", SILENCE.as_secs()), false),
        };
        // From here the owner has taken the call.
        let mut buf: Vec<u8> = Vec::new();
        loop {
            let chunk = match tokio::time::timeout(SILENCE, resp.chunk()).await {
                Ok(Ok(Some(c))) => c,
                Ok(Ok(None)) => return broken("the owner's answer ended early".to_owned(), true),
                Ok(Err(e)) => return broken(format!("the owner's answer broke off: {e}"), true),
                Err(_) => return broken(format!("the owner said nothing for {} s", SILENCE.as_secs()), true),
            };
            buf.extend_from_slice(&chunk);
            if buf.len() > MAX_ANSWER_BYTES {
                return broken("the owner's answer is too large".to_owned(), true);
            }
            while let Some(end) = buf.iter().position(|&b| b == b'\n') {
                let line: Vec<u8> = buf.drain(..=end).collect();
                match serde_json::from_slice::<ForwardLine>(&line) {
                    Ok(ForwardLine::Progress {
                        ahead_in_session,
                        waiting_sessions,
                        queued_calls,
                        estimated_wait_ms,
                    }) => {
                        if let Some(progress) = &call.progress {
                            progress(Report::Queued(
                                platform,
                                QueuePosition {
                                    ahead_in_session,
                                    waiting_sessions,
                                    queued_calls,
                                    estimated_wait: Duration::from_millis(estimated_wait_ms),
                                },
                            ));
                        }
                    }
                    Ok(ForwardLine::Result(r)) => return Forward::Answer(Answer::Result(ToolResult::Own(*r))),
                    Ok(ForwardLine::Listed(listing)) => return Forward::Answer(Answer::Listed(listing)),
                    Ok(ForwardLine::Hits(hits)) => return Forward::Answer(Answer::Hits(hits)),
                    Ok(ForwardLine::Document(document)) => return Forward::Answer(Answer::Document(document)),
                    Ok(ForwardLine::NotOwner) => return Forward::NotOwner,
                    Ok(ForwardLine::Alive) => {}
                    Err(e) => return broken(format!("the owner's answer is unreadable: {e}"), true),
                }
            }
        }
    }
}

/// The internal endpoint: the owner's side of a forward.
struct Endpoint {
    node: Arc<Node>,
    calls: Arc<Calls>,
}

/// Serves the internal endpoint on `listener`, running forwarded calls through `calls`,
/// until the node is killed or `cancel` is cancelled.
pub(crate) fn serve_internal(
    listener: tokio::net::TcpListener,
    calls: Arc<Calls>,
    node: Arc<Node>,
    cancel: CancellationToken,
) -> tokio::task::JoinHandle<()> {
    let endpoint = Arc::new(Endpoint {
        node: Arc::clone(&node),
        calls,
    });
    let router = Router::new().route(CALL_PATH, post(call)).with_state(endpoint);
    let killed = node.killed.clone();
    tokio::spawn(async move {
        let stop = async move {
            tokio::select! {
                () = cancel.cancelled() => {}
                () = killed.cancelled() => {}
            }
        };
        // Small NDJSON lines (progress, heartbeats, a short result) go out at once: no
        // Nagle delay on top of the peer's delayed ACK.
        let listener = axum::serve::ListenerExt::tap_io(listener, |tcp: &mut tokio::net::TcpStream| {
            let _ = tcp.set_nodelay(true);
        });
        if let Err(error) = axum::serve(listener, router).with_graceful_shutdown(stop).await {
            tracing::error!(%error, "the internal endpoint stopped");
        }
    })
}

async fn call(State(ep): State<Arc<Endpoint>>, headers: HeaderMap, body: Bytes) -> Response {
    if let Err(refused) = check_secret(&ep, &headers) {
        return refused;
    }
    let (request, platform) = match read_forward(&ep, &body) {
        Ok(read) => read,
        Err(refused) => return refused,
    };
    let (tx, rx) = mpsc::channel::<Bytes>(64);
    // The forwarding replica's trace, continued here (docs/tracing.md).
    let span = spans::forwarded(&request.tool, &context::incoming((None, None), Some(&headers)));
    tokio::spawn(answer_forward(Arc::clone(&ep), request, platform, tx).instrument(span));
    let stream = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|b| (Ok::<Bytes, std::convert::Infallible>(b), rx))
    });
    (
        [(header::CONTENT_TYPE, "application/x-ndjson")],
        Body::from_stream(stream),
    )
        .into_response()
}

/// 401 for a forward without the cluster's secret.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the response itself, answered at once"
)]
fn check_secret(ep: &Endpoint, headers: &HeaderMap) -> Result<(), Response> {
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    if !same_secret(given.as_bytes(), ep.node.secret.as_bytes()) {
        return Err((
            StatusCode::UNAUTHORIZED,
            "the internal endpoint needs the cluster's secret\n",
        )
            .into_response());
    }
    Ok(())
}

/// The forwarded call and its platform, or 400 for a body that is neither.
#[expect(
    clippy::result_large_err,
    reason = "the refusal is the response itself, answered at once"
)]
fn read_forward(ep: &Endpoint, body: &[u8]) -> Result<(ForwardRequest, PlatformId), Response> {
    let Ok(request) = serde_json::from_slice::<ForwardRequest>(body) else {
        return Err((StatusCode::BAD_REQUEST, "not a forwarded call\n").into_response());
    };
    let Some(platform) = ep.node.gates.keys().copied().find(|p| p.as_str() == request.platform) else {
        return Err((StatusCode::BAD_REQUEST, "unknown platform\n").into_response());
    };
    if request.cache_version != ep.node.cache_version {
        // A rolling upgrade: this owner answers with its own code and stores under its
        // own version, never under the forwarding replica's.
        tracing::debug!(theirs = %request.cache_version, ours = %ep.node.cache_version, "a forward of another cache version");
    }
    Ok((request, platform))
}

/// Runs the forwarded call here and sends its lines to `tx`: heartbeats and progress
/// while it runs, then its answer.
async fn answer_forward(ep: Arc<Endpoint>, request: ForwardRequest, platform: PlatformId, tx: mpsc::Sender<Bytes>) {
    // The heartbeat, until this task ends (the guard cancels it).
    let _beating = heartbeat(tx.clone());
    let relay = relay_progress(tx.clone());
    let caller = Caller {
        session: request
            .session
            .as_deref()
            .map_or(SessionKey::System, SessionKey::client),
        user: request.user.clone(),
        session_id: None,
        address: request.address.clone(),
        idempotency_key: None,
    };
    // A lease whose start wait runs: wait for it rather than send the caller round.
    if let Some(LeaseState::Waiting { until }) = ep.node.lease_state(platform, ep.calls.ctx.clock.now()) {
        let at = ep.calls.ctx.clock.to_tokio(until);
        tokio::select! {
            () = tokio::time::sleep_until(at) => {}
            () = tx.closed() => return,
        }
    }
    let ct = CancellationToken::new();
    let want = match (request.listing, request.hits, request.document) {
        (true, _, _) => Want::Listing,
        (false, true, _) => Want::Hits,
        (false, false, true) => Want::Document,
        (false, false, false) => Want::Result,
    };
    let call = ToolRequest {
        name: request.tool.into(),
        arguments: request.arguments,
        caller: Arc::new(caller),
        replay: None,
        progress: Some(relay),
        ct: ct.clone(),
    };
    let answered = tokio::select! {
        r = ep.calls.call_here(call, want) => r,
        () = tx.closed() => {
            // The forwarding replica let go: the call is dropped here (its path entry leaves).
            ct.cancel();
            return;
        }
        () = ep.node.killed.cancelled() => return,
    };
    let line = match answered {
        Ok(Ok(Answer::Result(r))) => ForwardLine::Result(Box::new(r.into_result())),
        Ok(Ok(Answer::Listed(listing))) => ForwardLine::Listed(listing),
        Ok(Ok(Answer::Hits(hits))) => ForwardLine::Hits(hits),
        Ok(Ok(Answer::Document(document))) => ForwardLine::Document(document),
        // This replica does not own the platform either: the forwarding replica
        // looks the owner up again (it holds the caller's time).
        Ok(Err(_)) => ForwardLine::NotOwner,
        Err(e) => ForwardLine::Result(Box::new(tool_error(e.message))),
    };
    // An answer that does not encode is an error naming the platform, never an
    // empty line; if even that does not encode, the stream ends early and the
    // forwarding replica reports a broken forward.
    let encoded = encode_line(&line).or_else(|error| {
        encode_line(&ForwardLine::Result(Box::new(tool_error(format!(
            "BesluitBron could not pass on {}'s answer between its replicas ({error}); try again",
            platform.display_name()
        )))))
    });
    if let Ok(encoded) = encoded {
        let _ = tx.send(encoded).await;
    }
}

/// Sends an `Alive` line every [`HEARTBEAT`] until the returned guard is dropped (or the
/// stream is gone).
fn heartbeat(tx: mpsc::Sender<Bytes>) -> tokio_util::sync::DropGuard {
    let done = CancellationToken::new();
    let beating = done.clone().drop_guard();
    tokio::spawn(async move {
        let mut every = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
        loop {
            tokio::select! {
                () = done.cancelled() => return,
                _ = every.tick() => {
                    let Ok(alive) = encode_line(&ForwardLine::Alive) else { return };
                    if tx.try_send(alive).is_err() && tx.is_closed() {
                        return;
                    }
                }
            }
        }
    });
    beating
}

/// The call's queue positions, passed on to the forwarding replica as progress lines
/// (a forward is one platform's tool: it has no other report to pass on).
fn relay_progress(tx: mpsc::Sender<Bytes>) -> Progress {
    Arc::new(move |report: Report| {
        let Report::Queued(_, p) = report else {
            return;
        };
        let line = ForwardLine::Progress {
            ahead_in_session: p.ahead_in_session,
            waiting_sessions: p.waiting_sessions,
            queued_calls: p.queued_calls,
            estimated_wait_ms: u64::try_from(p.estimated_wait.as_millis()).unwrap_or(u64::MAX),
        };
        // A full channel drops a progress line, never the answer; so does one that
        // does not encode.
        if let Ok(line) = encode_line(&line) {
            let _ = tx.try_send(line);
        }
    })
}

/// One line of a forward's answer; an error when the line does not encode (never an
/// empty line the forwarding replica would have to guess at).
fn encode_line(line: &ForwardLine) -> Result<Bytes, serde_json::Error> {
    let mut v = serde_json::to_vec(line)?;
    v.push(b'\n');
    Ok(Bytes::from(v))
}

impl Route for Node {
    /// To the owner, or here again once this replica owns the platform (`rerun`), or a
    /// fail-closed error: never a platform call outside a lease.
    fn route<'a>(
        &'a self,
        call: &'a Call,
        arguments: &'a JsonObject,
        (platform, want): (PlatformId, Want),
        rerun: Rerun<'a>,
    ) -> RouteFuture<'a, Answer> {
        Box::pin(async move {
            let mut platform = platform;
            let started = tokio::time::Instant::now();
            let mut deadline = started + self.routing_budget();
            for _ in 0..MAX_ROUTES {
                match self
                    .route_once(platform, deadline, (call, arguments, want), started)
                    .await
                {
                    Routed::Answer(answer) => return answer,
                    Routed::Closed => return Answer::Result(self.closed_error(platform).into()),
                    Routed::Local => match rerun().await {
                        Ok(answer) => return answer,
                        Err(p) => {
                            // This replica's platform task has not started admitting yet.
                            tokio::time::sleep(ROUTE_RETRY / 2).await;
                            if p != platform {
                                platform = p;
                                deadline = tokio::time::Instant::now() + self.routing_budget();
                            }
                        }
                    },
                }
            }
            Answer::Result(self.closed_error(platform).into())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secrets_compare_whole() {
        assert!(same_secret(b"0123456789abcdef", b"0123456789abcdef"));
        assert!(!same_secret(b"0123456789abcdeX", b"0123456789abcdef"));
        assert!(!same_secret(b"0123456789abcde", b"0123456789abcdef"));
        assert!(!same_secret(b"", b"0123456789abcdef"));
    }

    #[test]
    fn forward_lines_read_back() {
        let line = encode_line(&ForwardLine::NotOwner).expect("encodes");
        assert!(matches!(serde_json::from_slice(&line), Ok(ForwardLine::NotOwner)));
        let line = encode_line(&ForwardLine::Result(Box::new(tool_error("x")))).expect("encodes");
        assert!(matches!(serde_json::from_slice(&line), Ok(ForwardLine::Result(r)) if r.is_error == Some(true)));
        let listing = Listing {
            results: vec![crate::connectors::vocabulary::Item::new(
                crate::platforms::obv::PLATFORM,
                "obv_document",
                "document:notubiz:gemeente:soest:830424",
                "Raadsvoorstel",
            )],
            tally: crate::connectors::vocabulary::Tally::exact(7, 0, 1),
        };
        let line = encode_line(&ForwardLine::Listed(Box::new(listing.clone()))).expect("encodes");
        assert!(matches!(serde_json::from_slice(&line), Ok(ForwardLine::Listed(l)) if *l == listing));
        let mut hits = Hits::of(listing);
        hits.note = Some("may be incomplete".to_owned());
        let line = encode_line(&ForwardLine::Hits(Box::new(hits.clone()))).expect("encodes");
        assert!(matches!(serde_json::from_slice(&line), Ok(ForwardLine::Hits(h)) if *h == hits));
        let mut metadata = serde_json::Map::new();
        metadata.insert("platform_id".into(), serde_json::Value::from("BWBR0005416"));
        let document = Document {
            title: "Gemeentewet".to_owned(),
            url: Some("https://wetten.overheid.nl/BWBR0005416".to_owned()),
            text: "Artikel 1".to_owned(),
            metadata,
        };
        let line = encode_line(&ForwardLine::Document(Box::new(document.clone()))).expect("encodes");
        assert!(matches!(serde_json::from_slice(&line), Ok(ForwardLine::Document(d)) if *d == document));
    }

    #[test]
    fn a_forward_asks_for_what_is_wanted_and_an_earlier_request_for_a_result() {
        let request: ForwardRequest = serde_json::from_value(serde_json::json!({
            "platform": "obv", "tool": "obv_search", "address": "127.0.0.1", "waited_ms": 0, "cache_version": "v",
            "hops": 1
        }))
        .expect("an earlier release's request reads");
        assert!(!request.listing && !request.hits && !request.document);
        let request: ForwardRequest = serde_json::from_value(serde_json::json!({
            "platform": "obv", "tool": "obv_search", "address": "127.0.0.1", "waited_ms": 0, "cache_version": "v",
            "hops": 1,
            "hits": true
        }))
        .expect("a page search's request reads");
        assert!(request.hits && !request.listing);
        let request: ForwardRequest = serde_json::from_value(serde_json::json!({
            "platform": "bwb", "tool": "bwb_read", "address": "127.0.0.1", "waited_ms": 0, "cache_version": "v",
            "hops": 1,
            "document": true
        }))
        .expect("a fetch's request reads");
        assert!(request.document && !request.hits && !request.listing);
    }
}
