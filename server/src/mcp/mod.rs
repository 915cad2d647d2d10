//! The MCP side: one handler type serving a set of connectors' tools over rmcp's
//! Streamable HTTP transport.
//!
//! Each connector in the registry (`crate::connectors`) is served at `/mcp/<id>` with its
//! own tool router, and every connector's tools together at `/mcp`. The tools live in
//! their connector's module and share the [`Shared`] state: the platform clients and
//! the platforms' tasks.
//!
//! Every tool call:
//! 1. is a replay candidate ([`replay`]): a repeated JSON-RPC id within an MCP session,
//!    or an `Idempotency-Key`, gets the first result (R-D2);
//! 2. validates its arguments into the platform client's own parameter types (a clear
//!    tool error on bad input, never a panic);
//! 3. asks its platform through the one per-call helper ([`call`]): a canonical cache
//!    key, the cost as the platform counts it, a typed platform call, and a pure render
//!    function from the typed answer to text and structured content.
//!
//! What this module does not do: HTTP-level limits and who a request is (see
//! `crate::app`, which decides it once and hands it on as a [`Caller`]), or talk to a
//! platform directly (the clients in `crate::platforms` do).

pub mod arguments;
pub mod call;
pub mod memo;
pub mod offers;
pub mod replay;
pub mod schema;
pub mod tools;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use besluitbron_core::dedup::{DuplicateKind, DuplicateMonitor};
use besluitbron_core::path::Served;
use besluitbron_core::{PlatformId, SessionKey};
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult,
    ContentBlock, GetPromptRequestParams, GetPromptResponse, Implementation, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, PaginatedRequestParams,
    ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

pub use call::{CallScope, PlatformCall, Rendered, provenance, tool_error};

use crate::clock::Clock;
use crate::connectors::{CONNECTORS, Clients, ConnectorSpec};
use crate::driver::Platforms;
use crate::identity;
use crate::metrics::Metrics;
use replay::Replayed;

/// Which connectors an MCP address serves.
#[derive(Clone, Copy, Debug)]
pub enum Scope {
    /// One connector, at `/mcp/<id>`.
    One(&'static ConnectorSpec),
    /// Every connector, at `/mcp`.
    All,
}

impl Scope {
    /// The name in client limits and metrics: the connector's id, or `all`.
    pub fn id(self) -> &'static str {
        match self {
            Scope::One(c) => c.id,
            Scope::All => "all",
        }
    }

    /// True when the connector `id`'s tools are served here.
    pub fn serves(self, id: &str) -> bool {
        match self {
            Scope::One(c) => c.id == id,
            Scope::All => true,
        }
    }

    /// The connectors served.
    pub fn connectors(self) -> Vec<&'static ConnectorSpec> {
        match self {
            Scope::One(c) => vec![c],
            Scope::All => CONNECTORS.iter().collect(),
        }
    }
}

/// State every tool call shares.
pub struct Shared {
    /// The platform clients, opened from the registry.
    pub clients: Clients,
    /// Every platform's task (buffer, coalescing, fair queues).
    pub platforms: Platforms,
    /// Proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Client retries (R-D2).
    pub replays: replay::Replays,
    /// Repeats of a call whose answer is fresh in the buffer.
    pub repeats: memo::Repeats,
    /// Tool calls running now (the shutdown drain waits for them).
    pub in_flight: AtomicUsize,
    /// The longest one tool call may take.
    pub request_timeout: std::time::Duration,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// The duplicate rate per client (R-D9).
    pub duplicates: Mutex<DuplicateMonitor>,
    /// The clock.
    pub clock: Clock,
    /// Every tool's platform and request counters.
    pub tools: tools::ToolTable,
    /// The shared engine, when several replicas are configured (`BesluitBron:Cluster`).
    pub engine: Option<crate::cluster::Engine>,
    /// Several replicas: this replica's leases, owner lookups and forwards.
    pub cluster: Option<Arc<crate::cluster::forward::Node>>,
}

/// The MCP handler of one address.
#[derive(Clone)]
pub struct Besluit {
    shared: Arc<Shared>,
    scope: Scope,
    /// Built once per address and shared: rmcp asks for a fresh handler for every
    /// session and for every stateless request, and building the router means building
    /// every tool's definition and schema.
    tool_router: Arc<ToolRouter<Besluit>>,
    /// What `initialize` and every stateless request are told (capabilities, name,
    /// instructions): built once per address, as the tools are.
    info: Arc<ServerConfig>,
}

impl Besluit {
    /// The handler for `scope`.
    pub fn new(shared: Arc<Shared>, scope: Scope) -> Besluit {
        let connectors = scope.connectors();
        let mut router = ToolRouter::new();
        for c in &connectors {
            router += (c.tools)();
        }
        let instructions: Vec<&str> = connectors.iter().map(|c| c.instructions).collect();
        let mut handler = Besluit {
            shared,
            scope,
            tool_router: Arc::new(router),
            info: Arc::new(ServerConfig::new(ServerCapabilities::default())),
        };
        handler.info = Arc::new(handler.server_config(instructions.join("\n\n")));
        handler
    }

    fn server_config(&self, instructions: String) -> ServerConfig {
        let (resources, prompts, completions) = self.offered();
        let mut capabilities = ServerCapabilities::builder().enable_tools().build();
        if resources {
            capabilities.resources = Some(Default::default());
        }
        if prompts {
            capabilities.prompts = Some(Default::default());
        }
        if completions {
            capabilities.completions = Some(Default::default());
        }
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("besluitbron", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions)
    }

    /// The tools this handler offers, sorted by name.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }

    /// The shared state.
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }

    /// The address's scope.
    pub fn scope(&self) -> Scope {
        self.scope
    }
}

/// Who made a request. Decided once, by the request guard, from what it can check: an
/// MCP session that exists at this address (session era), otherwise the client address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The fairness key: the MCP session, else the client address.
    pub session: SessionKey,
    /// The MCP session id, when the request belongs to an existing session.
    pub session_id: Option<String>,
    /// The client address (IPv6 per /64).
    pub address: String,
    /// The `Idempotency-Key` header, if sent.
    pub idempotency_key: Option<String>,
}

impl Caller {
    /// The caller for a request of an existing `session_id` (or none) from `address`.
    pub fn new(session_id: Option<String>, address: String, idempotency_key: Option<String>) -> Caller {
        let session = identity::fairness_key(session_id.as_deref(), &address);
        Caller::keyed(session_id, address, idempotency_key, session)
    }

    /// As [`Caller::new`] with its fairness key already made (by the guard, which asked
    /// the client limits with it): `session` is `identity::fairness_key` of the two.
    pub fn keyed(
        session_id: Option<String>,
        address: String,
        idempotency_key: Option<String>,
        session: SessionKey,
    ) -> Caller {
        debug_assert_eq!(session, identity::fairness_key(session_id.as_deref(), &address));
        Caller {
            session,
            session_id,
            address,
            idempotency_key,
        }
    }

    /// The caller of a tool call, as the guard decided it (carried in the HTTP request's
    /// extensions). A call that did not pass the guard (a test driving a handler
    /// directly) is its client address, never a session it only names.
    pub fn of_call(ctx: &RequestContext<RoleServer>, trusted_proxies: &[std::net::IpAddr]) -> Arc<Caller> {
        let parts = ctx.extensions.get::<axum::http::request::Parts>();
        if let Some(caller) = parts.and_then(|p| p.extensions.get::<Arc<Caller>>()) {
            return Arc::clone(caller);
        }
        let empty = axum::http::HeaderMap::new();
        let headers = parts.map_or(&empty, |p| &p.headers);
        let peer = parts
            .and_then(|p| p.extensions.get::<axum::extract::ConnectInfo<SocketAddr>>())
            .map_or(SocketAddr::from(([0, 0, 0, 0], 0)), |c| c.0);
        let address = identity::client_address(peer, headers, trusted_proxies);
        Arc::new(Caller::new(None, address, identity::idempotency_key(headers)))
    }
}

/// The duplicate kind of an answer (R-D9).
pub fn duplicate_kind(served: Served) -> DuplicateKind {
    match served {
        Served::Cached | Served::Stale => DuplicateKind::CacheHit,
        Served::Fetched => DuplicateKind::Fresh,
        Served::Coalesced => DuplicateKind::Coalesced,
    }
}

impl ServerHandler for Besluit {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // The list never changes while the server runs and holds nothing of the caller.
        Ok(ListToolsResult::with_all_items(self.tool_router.list_all())
            .with_ttl_ms(offers::LIST_TTL_MS)
            .with_cache_scope(CacheScope::Public))
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        Ok(self.resource_list())
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        Ok(self.template_list())
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        // Boxed, as `call_tool` is: rmcp awaits every handler inline in one request
        // future, as large as the largest of them, and moves that future around.
        Box::pin(self.resource_read(request, context)).await.map(Into::into)
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        Ok(self.prompt_list())
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.prompt_get(&request).map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Box::pin(self.completion(request, context)).await
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The call's state (replay slot, time limit, tool future, several replicas'
        // forwarding) is several KB; rmcp moves the future it gets from here into each
        // request's task and through its stages, so it gets a pointer, not the state.
        Box::pin(self.run_tool_call(request, context)).await
    }
}

impl Besluit {
    /// A tool call: arguments checked against the schema, replay table, time limit, the
    /// tool itself and, with several replicas, its forwarding to the platform's owner.
    async fn run_tool_call(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // Arguments longer than their schema allows are refused here, for every tool,
        // before anything is parsed or asked (no platform call, no replay slot).
        // The tool, if this address serves it (its router holds exactly the tools of
        // its connectors); an unknown one is rmcp's to refuse.
        let route = self
            .shared
            .tools
            .get(&request.name)
            .filter(|t| self.scope.serves(t.connector));
        let platform = route.map(|t| t.platform);
        if let Some(tool) = route
            && let Err(message) = tool.rules.check(request.arguments.as_ref())
        {
            return Ok(tool_error(invalid_arguments(tool.name, platform, &message)).into());
        }
        self.shared.in_flight.fetch_add(1, Ordering::SeqCst);
        let _running = RunningCall(&self.shared.in_flight);
        let caller = Caller::of_call(&context, &self.shared.trusted_proxies);
        // The call's canonical form, for a tool this address serves: a request with a
        // replay key is compared with an earlier one by it, and a repeat is found by it.
        let form = route.map(|_| replay::fingerprint(&request));
        let form = form.as_deref();
        let keyed = replay::keys(&caller, &context.id).zip(form);
        let tool = route.map(|t| t.name);
        let (result, replayed) = self
            .shared
            .replays
            .run(keyed, |slot| async move {
                // A repeat of a call whose answer is fresh in the buffer, and shown for
                // this very question: its kept result (`memo`), without the tool. A retry
                // that replays its first attempt's answer runs the tool with it.
                let form = form.filter(|f| f.len() <= memo::MAX_FORM_BYTES);
                let repeated = match form {
                    Some(form) if slot.as_ref().is_none_or(|s| !s.replays()) => {
                        self.repeat(form, &caller, slot.as_ref())
                    }
                    _ => call::Repeated::Kept,
                };
                if let call::Repeated::Answered(result) = repeated {
                    return Ok(result.into());
                }
                let mut scope = CallScope::of(&context, caller, slot);
                scope.wants_repeat = matches!(repeated, call::Repeated::NotKept);
                let scope = Arc::new(scope);
                context.extensions.insert(Arc::clone(&scope));
                // Several replicas: a call that finds a platform owned elsewhere goes to
                // its owner (`crate::cluster::forward`), within the same time limit.
                let again = self.shared.cluster.as_ref().map(|_| (request.clone(), context.clone()));
                let tcc = ToolCallContext::new(self, request, context);
                let limit = self.shared.request_timeout;
                let run = async {
                    let first = self.tool_router.call(tcc).await;
                    let (Some(node), Some((request, context))) = (&self.shared.cluster, again) else {
                        return first;
                    };
                    let forwarded = context.extensions.get::<crate::cluster::forward::Forwarded>().cloned();
                    let rerun = || {
                        let tcc = ToolCallContext::new(self, request.clone(), context.clone());
                        self.tool_router.call(tcc)
                    };
                    // Boxed: the forwarding's state (2 KB) would otherwise sit in every
                    // call's future, moved with it, for the few calls that need it.
                    Box::pin(node.route_call(&scope, first, &request, forwarded.as_ref(), rerun)).await
                };
                let result = match tokio::time::timeout(limit, run).await {
                    Ok(result) => result,
                    // The assistant learns which platform held the call up, as every
                    // other failure of a platform call says.
                    Err(_) => Ok(tool_error(format!(
                        "BesluitBron gave up after {} s waiting for {}: the platform is slow or its queue is \
                         long; try a narrower question or try again later",
                        limit.as_secs(),
                        platform.map_or("the platform", |p| p.display_name())
                    ))
                    .into()),
                };
                if let Some(form) = form
                    && let Some(repeat) = scope.take_repeat()
                {
                    self.shared.repeats.keep(form.to_owned(), repeat);
                }
                result
            })
            .await;
        // rmcp's own errors (arguments that do not deserialize, an unknown tool) quote
        // what they were given; the assistant gets them bounded.
        let result = match result {
            Ok(CallToolResponse::Complete(r)) if r.is_error == Some(true) => {
                let name = tool.unwrap_or_default();
                Ok(CallToolResponse::Complete(CallToolResult::error(
                    r.content.iter().map(|b| bounded_block(name, platform, b)).collect(),
                )))
            }
            Ok(other) => Ok(other),
            // Arguments of a known tool that do not deserialize (a wrong type, a number
            // out of range, an unknown name) are the assistant's to mend: a tool error it
            // reads, as the protocol asks for input validation errors, not a protocol
            // error. An unknown tool stays a protocol error.
            Err(e) if e.code == rmcp::model::ErrorCode::INVALID_PARAMS && tool.is_some() => {
                let name = tool.unwrap_or_default();
                Ok(tool_error(invalid_arguments(name, platform, &e.message)).into())
            }
            Err(mut e) => {
                e.message = crate::platforms::http::bounded_text(&e.message).into();
                Err(e)
            }
        };
        if let (Replayed::Yes(kept), Some(tool)) = (replayed, tool) {
            // The platform of the answer the first attempt kept, else the tool's own.
            if let Some(platform) = kept.or(platform) {
                self.shared
                    .tools
                    .count(&self.shared.metrics, tool, platform, DuplicateKind::Replay);
            }
        }
        result
    }
}

/// How rmcp starts its message for tool arguments that did not deserialize.
const DESERIALIZE_PREFIX: &str = "failed to deserialize parameters:";

/// The tool error for arguments of `tool` that did not deserialize (rmcp's `message`
/// says which and why): what is wrong and where the right form is written.
fn invalid_arguments(tool: &str, platform: Option<PlatformId>, message: &str) -> String {
    let detail = message
        .strip_prefix(DESERIALIZE_PREFIX)
        .map_or(message, str::trim_start);
    let asked = platform.map_or(String::new(), |p| format!("nothing asked of {}; ", p.display_name()));
    format!("{tool}: {detail} ({asked}see the tool's inputSchema)")
}

/// A content block of a tool error, its text bounded ([`crate::platforms::http::bounded_text`]).
///
/// rmcp's own tool error for arguments that did not deserialize says only serde's words;
/// it is told as [`invalid_arguments`] (naming the tool and where the right form is).
fn bounded_block(tool: &str, platform: Option<PlatformId>, block: &ContentBlock) -> ContentBlock {
    match block.as_text() {
        Some(text) if text.text.starts_with(DESERIALIZE_PREFIX) => ContentBlock::text(
            crate::platforms::http::bounded_text(&invalid_arguments(tool, platform, &text.text)),
        ),
        Some(text) => ContentBlock::text(crate::platforms::http::bounded_text(&text.text)),
        None => block.clone(),
    }
}

struct RunningCall<'a>(&'a AtomicUsize);

impl Drop for RunningCall<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
