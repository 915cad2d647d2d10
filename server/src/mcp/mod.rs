//! The MCP side: one handler type serving a connector's tools over rmcp's Streamable
//! HTTP transport.
//!
//! Each connector (`/mcp/obv`, `/mcp/tk`) and the combined address (`/mcp`) is its own
//! rmcp service with its own tool router; the tools themselves live in [`obv`] and
//! [`tk`] and share the [`Shared`] state: the platform clients and the [`Fetcher`].
//!
//! Every tool call:
//! 1. is a replay candidate ([`replay`]): a repeated JSON-RPC id within an MCP session,
//!    or an `Idempotency-Key`, gets the first result (R-D2);
//! 2. validates its arguments into the platform client's own parameter types (a clear
//!    tool error on bad input, never a panic);
//! 3. asks the [`Fetcher`] with a canonical cache key and the cost as the platform counts
//!    it; progress notifications report the place in the platform queue while it waits,
//!    and a cancelled request withdraws its queued call;
//! 4. answers with structured content plus a short text.
//!
//! What this module does not do: HTTP-level limits (see `crate::app`), or talk to a
//! platform directly (the clients in `crate::platforms` do).

pub mod obv;
pub mod replay;
pub mod tk;

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use besluitbron_core::SessionKey;
use besluitbron_core::dedup::DuplicateKind;
use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::tool::ToolCallContext;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value;

use crate::fetch::{Answer, FetchError, Fetcher, ProgressSink, Served};
use crate::gate::QueuePosition;
use crate::identity;
use crate::metrics::RequestLabels;
use crate::platforms::obv::ObvClient;
use crate::platforms::tk::TkClient;

/// Which tools an MCP address offers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Connector {
    /// `/mcp/obv`: OpenBesluitvorming.
    Obv,
    /// `/mcp/tk`: Tweede Kamer.
    Tk,
    /// `/mcp`: every connector's tools.
    All,
}

impl Connector {
    /// The connector's name in limits and metrics.
    pub const fn as_str(self) -> &'static str {
        match self {
            Connector::Obv => "obv",
            Connector::Tk => "tk",
            Connector::All => "all",
        }
    }
}

/// State every tool call shares.
pub struct Shared {
    /// The OpenBesluitvorming client.
    pub obv: Arc<ObvClient>,
    /// The Tweede Kamer client.
    pub tk: Arc<TkClient>,
    /// Buffer, coalescing, gates.
    pub fetcher: Arc<Fetcher>,
    /// Proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Client retries (R-D2).
    pub replays: replay::Replays,
    /// Tool calls running now (the shutdown drain waits for them).
    pub in_flight: AtomicUsize,
    /// The longest one tool call may take.
    pub request_timeout: std::time::Duration,
}

/// The MCP handler of one connector.
#[derive(Clone)]
pub struct Besluit {
    shared: Arc<Shared>,
    connector: Connector,
    /// Built once per connector and shared: rmcp asks for a fresh handler for every
    /// session and for every stateless request, and building the router means building
    /// every tool's definition and schema.
    tool_router: Arc<ToolRouter<Besluit>>,
}

impl Besluit {
    /// The handler for `connector`.
    pub fn new(shared: Arc<Shared>, connector: Connector) -> Besluit {
        let tool_router = match connector {
            Connector::Obv => Besluit::obv_router(),
            Connector::Tk => Besluit::tk_router(),
            Connector::All => Besluit::obv_router() + Besluit::tk_router(),
        };
        Besluit {
            shared,
            connector,
            tool_router: Arc::new(tool_router),
        }
    }

    /// The tools this handler offers, sorted by name.
    pub fn tools(&self) -> Vec<rmcp::model::Tool> {
        self.tool_router.list_all()
    }
}

/// Who made a request, from the HTTP request rmcp hands to the tool.
pub struct Caller {
    /// The fairness key: the MCP session, else the client address.
    pub session: SessionKey,
    /// The MCP session id, if the request has one.
    pub session_id: Option<String>,
    /// The client address (IPv6 per /64).
    pub address: String,
    /// The `Idempotency-Key` header, if sent.
    pub idempotency_key: Option<String>,
}

impl Caller {
    /// The caller of a tool call: the one [`Besluit::call_tool`] read and left in the
    /// request's extensions, or read now (a tool run some other way).
    pub fn of_call(ctx: &RequestContext<RoleServer>, trusted_proxies: &[std::net::IpAddr]) -> Arc<Caller> {
        match ctx.extensions.get::<Arc<Caller>>() {
            Some(caller) => Arc::clone(caller),
            None => Arc::new(Caller::of(ctx, trusted_proxies)),
        }
    }

    /// Reads the caller from a request context.
    pub fn of(ctx: &RequestContext<RoleServer>, trusted_proxies: &[std::net::IpAddr]) -> Caller {
        let parts = ctx.extensions.get::<axum::http::request::Parts>();
        let empty = axum::http::HeaderMap::new();
        let headers = parts.map_or(&empty, |p| &p.headers);
        let peer = parts
            .and_then(|p| p.extensions.get::<axum::extract::ConnectInfo<SocketAddr>>())
            .map_or(SocketAddr::from(([0, 0, 0, 0], 0)), |c| c.0);
        let address = identity::client_address(peer, headers, trusted_proxies);
        let session_id = identity::session_id(headers).map(str::to_owned);
        let idempotency_key = headers
            .get("idempotency-key")
            .and_then(|v| v.to_str().ok())
            .filter(|k| !k.is_empty() && k.len() <= 256)
            .map(str::to_owned);
        Caller {
            session: identity::fairness_key(session_id.as_deref(), &address),
            session_id,
            address,
            idempotency_key,
        }
    }
}

/// A tool error the assistant reads: `isError: true` with the message as text.
pub fn tool_error(message: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(message.to_string())])
}

/// Structured content plus a one-paragraph text summary.
///
/// Built from `success` rather than `CallToolResult::structured`, which serializes the
/// whole structured value into a text block that the summary would then replace.
pub fn tool_answer(structured: Value, summary: String) -> CallToolResult {
    let mut result = CallToolResult::success(vec![ContentBlock::text(summary)]);
    result.structured_content = Some(structured);
    result
}

/// A progress sink that sends MCP progress notifications, if the client asked for them.
pub fn progress_sink(ctx: &RequestContext<RoleServer>, platform: &'static str) -> Option<ProgressSink> {
    let token = ctx.meta.get_progress_token()?;
    let peer = ctx.peer.clone();
    let mut step = 0u32;
    Some(Box::new(move |p: QueuePosition| {
        step += 1;
        let message = format!(
            "waiting for {platform}: {} call(s) queued by {} session(s), about {} s",
            p.queued_calls,
            p.waiting_sessions,
            p.estimated_wait.as_secs_f64().ceil()
        );
        let param = ProgressNotificationParam::new(token.clone(), f64::from(step)).with_message(message);
        let peer = peer.clone();
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }))
}

/// Runs a fetch and stops it when the client cancels the request.
pub async fn fetch_or_cancel(
    ctx: &RequestContext<RoleServer>,
    fetch: impl std::future::Future<Output = Result<Answer, FetchError>>,
) -> Result<Answer, FetchError> {
    tokio::select! {
        answer = fetch => answer,
        () = ctx.ct.cancelled() => Err(FetchError::Cancelled),
    }
}

/// Parses a buffered answer back into JSON.
pub fn answer_json(answer: &Answer) -> Result<Value, CallToolResult> {
    if let Some(parsed) = &answer.parsed {
        return Ok(parsed.as_ref().clone());
    }
    serde_json::from_slice(&answer.payload)
        .map_err(|e| tool_error(format!("a buffered answer could not be read ({e}); ask again")))
}

/// A note on where the answer came from, for the text summary (R-U1).
pub fn provenance(served: Served) -> &'static str {
    match served {
        Served::Cached => " (from BesluitBron's buffer)",
        Served::Coalesced => " (shared with an identical request in progress)",
        Served::Stale => " (the platform failed; this is an older copy from BesluitBron's buffer)",
        Served::Fetched => "",
    }
}

impl ServerHandler for Besluit {
    fn get_info(&self) -> ServerConfig {
        let instructions = match self.connector {
            Connector::Obv => OBV_INSTRUCTIONS.to_owned(),
            Connector::Tk => TK_INSTRUCTIONS.to_owned(),
            Connector::All => format!("{OBV_INSTRUCTIONS}\n\n{TK_INSTRUCTIONS}"),
        };
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("besluitbron", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tool_router.list_all()))
    }

    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        self.tool_router.get(name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        mut context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.shared.in_flight.fetch_add(1, Ordering::SeqCst);
        let _running = RunningCall(&self.shared.in_flight);
        let caller = Arc::new(Caller::of(&context, &self.shared.trusted_proxies));
        // Only a request with a replay key is compared with an earlier one.
        let keyed = replay::keys(&caller, &context.id).map(|key| (key, replay::fingerprint(&request)));
        // The tool's fetch reads the caller from here instead of from the headers again.
        context.extensions.insert(caller);
        let tool = self.tool_router.get(&request.name).map(|t| t.name.clone());
        let (result, replayed) = self
            .shared
            .replays
            .run(keyed, || async {
                let tcc = ToolCallContext::new(self, request, context);
                let limit = self.shared.request_timeout;
                match tokio::time::timeout(limit, self.tool_router.call(tcc)).await {
                    Ok(result) => result,
                    Err(_) => Ok(tool_error(format!(
                        "BesluitBron gave up after {} s: the platform is slow or its queue is long; try a narrower \
                         question or try again later",
                        limit.as_secs()
                    ))
                    .into()),
                }
            })
            .await;
        if let (true, Some(tool)) = (replayed, tool) {
            let platform = if tool.starts_with("tk_") { "tk" } else { "obv" };
            let labels = RequestLabels {
                platform,
                tool: tool.to_string(),
                kind: DuplicateKind::Replay.as_str(),
            };
            self.shared.fetcher.metrics().requests.get_or_create(&labels).inc();
        }
        result
    }
}

struct RunningCall<'a>(&'a AtomicUsize);

impl Drop for RunningCall<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

const OBV_INSTRUCTIONS: &str = "OpenBesluitvorming (obv_* tools): council and provincial decision making of 331 \
sources (municipalities, provinces, water boards). Start with obv_search (titles and summaries, cheap), restricted \
to one organization when the question allows (obv_sources lists the keys): searching all sources is slower. Read \
full text with obv_document only for the documents you need (slow and the most expensive call). The platform \
allows 60 units per minute for all BesluitBron users together; a search with limit above 24 costs more than one \
unit. A first question on a subject is slower than a follow-up, which is often answered from BesluitBron's buffer.";

const TK_INSTRUCTIONS: &str = "Tweede Kamer (tk_* tools): parliamentary documents and cases (Kamerstukken, \
moties, vragen) from the Tweede Kamer's open data portal. tk_search finds documents or cases by words in their \
title or subject (no full-text search); tk_document gives one document's metadata and the link to its file; \
tk_factions and tk_committees are reference lists that rarely change and are answered from the buffer.";
