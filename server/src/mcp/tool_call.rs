//! A tool call as a short stack of small layers, each a function from request to result:
//!
//! ```text
//! Calls::call
//!   arguments  the tool, served at this address; its arguments within their schema
//!   replay     a retry of a call run or running gets its result (R-D2)
//!   route      a call whose platform another replica owns goes there (several replicas)
//!   time-out   the longest one call may take
//!   the tool   its function over the call layer (crate::call)
//! ```
//!
//! Each layer returns what it has to say in its value: the tool a [`Reply`] (its result,
//! or that its platform is owned elsewhere), the replay layer whether the result was a
//! replay. Nothing is written into shared state for an outer layer to read.
//!
//! Each call carries this side's render cache ([`render_store`]) down to the call layer: buffer
//! hits' rendered results, kept on the MCP side, which hands them out.
//!
//! [`Calls::call`] is the one entry point for tools: an MCP `tools/call`, a resource
//! read, the search page and a forward from another replica ([`Calls::call_here`], the
//! stack below the route) all come through it.

pub mod render_store;

use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject};
use tokio_util::sync::CancellationToken;

use super::ground::{GroundRef, Running, Stack};
use super::replay::{self, Replayed, Replays};
use super::route::{Answer, Answered, Route, Want};
use super::stack;
use super::tools::{self, ToolEntry, ToolTable};
use crate::call::render_cache::RenderCache;
use crate::call::{Call, Context, Progress, ToolResult};
use crate::connectors::ConnectorSpec;
use crate::identity::Caller;
use render_store::RenderStore;

/// One tool call as it enters the stack.
pub struct ToolRequest {
    /// The tool's name, as the client wrote it.
    pub name: std::borrow::Cow<'static, str>,
    /// Its arguments.
    pub arguments: Option<JsonObject>,
    /// Who asks.
    pub caller: Arc<Caller>,
    /// Its replay key, when it has one ([`replay::keys`]).
    pub replay: Option<replay::Key>,
    /// Where progress goes.
    pub progress: Option<Progress>,
    /// Cancelled when the client gives up.
    pub ct: CancellationToken,
}

impl ToolRequest {
    /// A call BesluitBron makes for one of its own (the search page, a forward from
    /// another replica): as `caller`, no replay key, no progress.
    pub fn internal(name: &str, arguments: JsonObject, caller: Arc<Caller>) -> ToolRequest {
        ToolRequest {
            name: name.to_owned().into(),
            arguments: Some(arguments),
            caller,
            replay: None,
            progress: None,
            ct: CancellationToken::new(),
        }
    }
}

/// What every tool call at every address shares: the call layer's context, the tools,
/// the replay table, the render cache, the time limit, and (several replicas) where
/// calls are routed.
pub struct Calls {
    /// The call layer's context: platform clients and tasks, metrics, the clock.
    pub ctx: Arc<Context>,
    /// The connectors served: the registry's that the configuration offers.
    registry: Vec<&'static ConnectorSpec>,
    /// Every tool of the registry.
    tools: Arc<ToolTable>,
    /// The same table, as the stack below replay that a tool's own calls of other tools
    /// go through (`search`'s parts).
    stack: Arc<dyn Stack>,
    /// Client retries (R-D2).
    pub replays: Replays,
    /// Buffer hits' rendered results, handed down in every call.
    render_store: Arc<RenderStore>,
    /// Tool calls running now, and the tasks of theirs that outlive them (the shutdown
    /// drain waits for them).
    in_flight: Arc<AtomicUsize>,
    /// The longest one tool call may take.
    request_timeout: Duration,
    /// Proxies whose `X-Forwarded-For` is believed.
    pub trusted_proxies: Vec<IpAddr>,
    /// Several replicas: where a call goes whose platform another replica owns. Set once,
    /// after the replica's node is made (it serves calls through these very `Calls`).
    route: OnceLock<Arc<dyn Route>>,
}

impl Calls {
    /// The calls of `registry`'s tools over `ctx`.
    pub fn new(
        ctx: Arc<Context>,
        registry: Vec<&'static ConnectorSpec>,
        replays: Replays,
        request_timeout: Duration,
        trusted_proxies: Vec<IpAddr>,
    ) -> Calls {
        let served: Vec<_> = ctx.platforms.iter().map(|(platform, _)| platform).collect();
        let tools = Arc::new(ToolTable::new(&registry, &served));
        Calls {
            stack: Arc::clone(&tools) as Arc<dyn Stack>,
            tools,
            ctx,
            registry,
            replays,
            render_store: Arc::new(RenderStore::default()),
            in_flight: Arc::new(AtomicUsize::new(0)),
            request_timeout,
            trusted_proxies,
            route: OnceLock::new(),
        }
    }

    /// Routes calls whose platform another replica owns through `route` (several
    /// replicas). Set once; a second route is refused.
    pub fn set_route(&self, route: Arc<dyn Route>) -> Result<(), Arc<dyn Route>> {
        self.route.set(route)
    }

    /// Whether calls may be routed to other replicas (several replicas share the work).
    pub fn replicated(&self) -> bool {
        self.route.get().is_some()
    }

    /// The connectors served.
    pub fn registry(&self) -> &[&'static ConnectorSpec] {
        &self.registry
    }

    /// Every tool.
    pub fn tools(&self) -> &ToolTable {
        &self.tools
    }

    /// Buffer hits' rendered results.
    pub fn render_store(&self) -> &RenderStore {
        &self.render_store
    }

    /// The render cache as a call carries it down to the call layer.
    fn render_cache_for_call(&self) -> Option<Arc<dyn RenderCache>> {
        Some(Arc::clone(&self.render_store) as Arc<dyn RenderCache>)
    }

    /// Tool calls (and fetched completions, and search parts still asking after their
    /// search answered) running now.
    pub fn running(&self) -> usize {
        self.in_flight.load(Ordering::SeqCst)
    }

    /// The longest one tool call may take.
    pub fn request_timeout(&self) -> Duration {
        self.request_timeout
    }

    /// Counts a call as running until the guard is dropped (the shutdown drain waits).
    pub(super) fn running_guard(&self) -> Running {
        Running::count(&self.in_flight)
    }

    /// A tool call at an address: the whole stack. Any tool BesluitBron serves answers
    /// by name at every address, listed there or not (a client may remember a tool from
    /// another address); an unknown name is the protocol's error, naming it and the
    /// nearest tools and where they are listed. Everything else is a tool result.
    pub async fn call(&self, request: ToolRequest) -> Result<CallToolResult, ErrorData> {
        let ToolRequest {
            name,
            arguments,
            caller,
            replay: replay_key,
            progress,
            ct,
        } = request;
        let (tool, arguments) = match self.admit(&name, arguments)? {
            Admitted::Run(tool, arguments) => (tool, arguments),
            Admitted::Refused(refusal) => return Ok(refusal),
        };
        let _running = self.running_guard();
        let call = self.call_of(tool, caller, arguments.as_ref(), progress, ct);
        let arguments = arguments.unwrap_or_default();
        // The request's identity for the duplicate diagnosis: its replay key, else its
        // tool and arguments.
        match &replay_key {
            Some((_, id)) => self.ctx.note_request(&call.caller, id),
            None => self.ctx.note_request(&call.caller, &call.form),
        }
        // Replay.
        let keyed = replay_key.map(|key| (key, &*call.form));
        let ground = self.ground();
        let routed = || async {
            stack::routed(ground, tool, &call, arguments, Want::Result)
                .await
                .into_result()
        };
        let (result, replayed) = self.replays.run(keyed, routed).await;
        // A replayed fetch is not counted: which platform its id named is the first
        // call's to know.
        if replayed == Replayed::Yes
            && let Some(platform) = tool.platform
        {
            self.ctx.count_replay(tool.name, platform, &call.caller);
        }
        // rmcp sends a result it owns: a copy when the render cache keeps it too.
        result.map(ToolResult::into_result)
    }

    /// The search page's search of `name` with `arguments` for `caller`, answered as its
    /// hits, typed: the stack as for [`Calls::call`] without a replay key (arguments,
    /// route, time-out, the tool's question asked of its platform), wanting
    /// [`Want::Hits`] rather than a result.
    pub async fn hits(&self, name: &str, arguments: JsonObject, caller: Arc<Caller>) -> Result<Answer, ErrorData> {
        let (tool, arguments) = match self.admit(name, Some(arguments))? {
            Admitted::Run(tool, arguments) => (tool, arguments),
            Admitted::Refused(refusal) => return Ok(Answer::Result(refusal.into())),
        };
        let _running = self.running_guard();
        let call = self.call_of(tool, caller, arguments.as_ref(), None, CancellationToken::new());
        self.ctx.note_request(&call.caller, &call.form);
        let ground = self.ground();
        Ok(stack::routed(ground, tool, &call, arguments.unwrap_or_default(), Want::Hits).await)
    }

    /// What a tool runs on, for one call.
    fn ground(&self) -> GroundRef<'_> {
        GroundRef {
            ctx: &self.ctx,
            running: &self.in_flight,
            route: self.route.get(),
            limit: self.request_timeout,
            stack: &self.stack,
        }
    }

    /// A call forwarded here by another replica, answering what it `want`s: arguments,
    /// time-out and the tool, and the platform when this replica does not own it either
    /// (the forwarding replica looks again; a forward is never forwarded on).
    pub async fn call_here(&self, request: ToolRequest, want: Want) -> Result<Answered, ErrorData> {
        // Any tool: the forwarding replica's address served it.
        let (tool, arguments) = match self.admit(&request.name, request.arguments)? {
            Admitted::Run(tool, arguments) => (tool, arguments),
            Admitted::Refused(refusal) => return Ok(Ok(Answer::Result(refusal.into()))),
        };
        let _running = self.running_guard();
        let call = self.call_of(tool, request.caller, arguments.as_ref(), request.progress, request.ct);
        Ok(stack::timed(self.ground(), tool, &call, arguments.unwrap_or_default(), want).await)
    }

    /// Arguments, the stack's first layer, written once for a call and a forward: the
    /// tool `name`, if it is one (else the protocol's error, [`unknown_tool`]); numbers
    /// sent as strings read as numbers; arguments longer than their schema allows are
    /// refused before anything is parsed or asked (no platform call, no replay slot).
    fn admit(&self, name: &str, mut arguments: Option<JsonObject>) -> Result<Admitted<'_>, ErrorData> {
        let Some(tool) = self.tools.get(name) else {
            return Err(ErrorData::invalid_params(unknown_tool(name, self.tools.iter()), None));
        };
        Ok(match tool.admit(&mut arguments) {
            Ok(()) => Admitted::Run(tool, arguments),
            Err(refusal) => Admitted::Refused(refusal),
        })
    }

    /// The call of `tool` with `arguments` for `caller`: its canonical form, and the
    /// render cache it brings.
    fn call_of(
        &self,
        tool: &ToolEntry,
        caller: Arc<Caller>,
        arguments: Option<&JsonObject>,
        progress: Option<Progress>,
        ct: CancellationToken,
    ) -> Call {
        Call {
            tool: tool.name,
            platform: tool.platform,
            caller,
            form: Arc::from(replay::fingerprint(tool.name, arguments)),
            progress,
            ct,
            render_cache: self.render_cache_for_call(),
        }
    }
}

/// What the arguments layer decided.
enum Admitted<'a> {
    /// The tool runs, with its arguments as read.
    Run(&'a ToolEntry, Option<JsonObject>),
    /// Its arguments do not fit: the tool error that says so.
    Refused(CallToolResult),
}

/// The protocol error's text for a tool `name` BesluitBron does not serve: the name (cut
/// to 64 characters), the nearest of `tools` by spelling (at most three) with the
/// addresses that list them, and where every tool is listed.
pub fn unknown_tool<'a>(name: &str, tools: impl Iterator<Item = &'a ToolEntry>) -> String {
    let shown: String = name.chars().take(64).collect();
    let mut near: Vec<(f64, &ToolEntry)> = tools
        .map(|t| (strsim::jaro_winkler(&name.to_lowercase(), t.name), t))
        .filter(|(score, _)| *score >= 0.75)
        .collect();
    near.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.name.cmp(b.1.name)));
    let near: Vec<String> = near
        .iter()
        .take(3)
        .map(|(_, t)| match t.connector {
            tools::ALL => format!("`{}` (listed at /mcp)", t.name),
            id => format!(
                "`{}` (listed at /mcp/{id} and /{id}/mcp, callable by name at /mcp)",
                t.name
            ),
        })
        .collect();
    let nearest = if near.is_empty() {
        String::new()
    } else {
        format!(" Nearest: {}.", near.join(", "))
    };
    format!("tool not found: `{shown}` is no tool of BesluitBron.{nearest} Every tool is listed by tools/list at /mcp.")
}
