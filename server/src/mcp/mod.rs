//! The MCP side: one handler type serving the registry's connectors over rmcp's
//! Streamable HTTP transport, and the one entry point every tool call goes through.
//!
//! Each connector of the registry is served at `/mcp/<id>` ([`Scope::One`]), and every
//! connector's tools together at `/mcp` ([`Scope::All`]). A `tools/call` — from an MCP
//! client, a resource read, the search page or another replica — is a short stack of
//! layers ([`Calls::call`], see [`tool_call`]), each a function from request to result:
//!
//! ```text
//! arguments ─▶ replay ─▶ route ─▶ time-out ─▶ the tool (crate::connectors, over crate::call)
//! ```
//!
//! What this module does not do: HTTP-level limits and who a request is (the request
//! guard decides it once and hands it on as a [`Caller`]), talk to a platform (the call
//! layer and the clients do), or know of replicas (a [`route::Route`] is handed in).

pub mod arguments;
pub mod ask;
pub mod fetch;
pub mod ground;
pub mod listing;
pub mod lists;
pub mod offers;
mod passed;
pub mod progress;
pub mod replay;
pub mod route;
#[cfg(test)]
mod scale_test;
mod scope;
pub mod search;
pub mod stack;
pub mod tasks;
pub mod tool_call;
pub mod tools;
pub mod toolsets;
mod traced;
pub mod views;

use std::net::SocketAddr;
use std::sync::Arc;

use rmcp::model::{
    CacheScope, CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams, CompleteResult,
    CustomRequest, CustomResult, GetPromptRequestParams, GetPromptResponse, GetTaskParams, GetTaskResult,
    Implementation, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult, ListToolsResult,
    PaginatedRequestParams, ReadResourceRequestParams, ReadResourceResponse, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};

pub use listing::MAX_INSTRUCTIONS_CHARS;
pub use scope::Scope;
pub use tool_call::{Calls, ToolRequest};
use tools::ToolEntry;

/// How long a client may keep a list that never changes while the server runs (the tool,
/// prompt, resource and template lists): an hour, so a new release is seen soon.
pub const LIST_TTL_MS: u64 = 3_600_000;

use crate::identity::{self, Caller};

/// The MCP handler of one address.
#[derive(Clone)]
pub struct Handler {
    calls: Arc<Calls>,
    scope: Scope,
    /// This address's tools, sorted by name: built once per address and shared, as rmcp
    /// asks for a fresh handler for every session and every stateless request.
    tools: Arc<Vec<Tool>>,
    /// What `initialize` and every stateless request are told (capabilities, name,
    /// instructions): built once per address, as the tools are.
    info: Arc<ServerConfig>,
    /// The tasks made at this address ([`tasks`]).
    tasks: Arc<tasks::Tasks>,
}

impl Handler {
    /// The handler for `scope` over `calls`.
    pub fn new(calls: Arc<Calls>, scope: Scope) -> Handler {
        let tools = listing::tools(calls.tools(), scope, &[]);
        let instructions = listing::instructions(calls.tools(), calls.registry(), scope);
        let mut handler = Handler {
            calls,
            scope,
            tools: Arc::new(tools),
            info: Arc::new(ServerConfig::new(ServerCapabilities::default())),
            tasks: Arc::new(tasks::Tasks::default()),
        };
        handler.info = Arc::new(handler.server_config(instructions));
        handler
    }

    /// The same, its tasks kept in `shared` for every replica (several replicas) under
    /// its `address`.
    pub fn tasks_shared(mut self, shared: Option<crate::engine::tasks::SharedTasks>, address: &str) -> Handler {
        if let Some(shared) = shared {
            self.tasks = Arc::new(tasks::Tasks::shared(shared, address.to_owned()));
        }
        self
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
        // Where a tool runs as a task for a client that declares the extension.
        let table = self.calls.tools();
        if self
            .tools
            .iter()
            .any(|t| table.get(&t.name).is_some_and(ToolEntry::runs_as_task))
        {
            capabilities
                .extensions
                .get_or_insert_with(Default::default)
                .insert(rmcp::model::TASKS_EXTENSION_ID.to_owned(), JsonObject::new());
        }
        views::declare(&mut capabilities);
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("besluitbron", env!("CARGO_PKG_VERSION")))
            .with_instructions(instructions)
    }

    /// The tools this handler offers, sorted by name.
    pub fn tools(&self) -> Vec<Tool> {
        (*self.tools).clone()
    }

    /// The tools this handler offers and every tool of the platforms `sets` names, sorted
    /// by name.
    pub fn tools_with(&self, sets: &[&str]) -> Vec<Tool> {
        listing::tools(self.calls.tools(), self.scope, sets)
    }

    /// What `initialize` tells a client: the server's instructions at this address.
    pub fn instructions(&self) -> &str {
        self.info.instructions.as_deref().unwrap_or_default()
    }

    /// The calls every address shares.
    pub fn calls(&self) -> &Arc<Calls> {
        &self.calls
    }

    /// The address's scope.
    pub fn scope(&self) -> Scope {
        self.scope
    }

    /// The tool call of an MCP request: `request` as the guard's caller, with its
    /// progress (`notifier`, flushed by the caller before it answers) and the client's
    /// cancellation.
    fn request(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        notifier: Option<&progress::Notifier>,
    ) -> ToolRequest {
        let caller = caller_of(context, &self.calls.trusted_proxies);
        let replay = replay::keys(&caller, &context.id);
        ToolRequest {
            name: request.name,
            arguments: request.arguments,
            caller,
            replay,
            progress: notifier.map(progress::Notifier::progress),
            ct: context.ct.clone(),
        }
    }
}

/// The caller of a request, as the guard decided it (carried in the HTTP request's
/// extensions). A request that did not pass the guard (a test driving a handler
/// directly) is its client address, never a session it only names.
fn caller_of(context: &RequestContext<RoleServer>, trusted_proxies: &[std::net::IpAddr]) -> Arc<Caller> {
    let parts = context.extensions.get::<axum::http::request::Parts>();
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

impl ServerHandler for Handler {
    fn get_info(&self) -> ServerConfig {
        (*self.info).clone()
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let parts = context.extensions.get::<axum::http::request::Parts>();
        let served: Vec<&'static str> = self.calls.registry().iter().map(|c| c.id).collect();
        let tools = match toolsets::chosen(parts, &served) {
            None => self.tools(),
            Some(Ok(sets)) => self.tools_with(&sets),
            Some(Err(message)) => return Err(ErrorData::invalid_params(message, None)),
        };
        // The list never changes while the server runs and holds nothing of the caller
        // (a choice of tool sets is in the request's address or headers).
        Ok(ListToolsResult::with_all_items(tools)
            .with_ttl_ms(LIST_TTL_MS)
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
        // A read may ask a platform: its span, as a tool call's (docs/tracing.md).
        let caller = caller_of(&context, &self.calls.trusted_proxies);
        let span = traced::resource_span(&request, &context, &caller);
        // Boxed, as `call_tool` is: rmcp awaits every handler inline in one request
        // future, as large as the largest of them, and moves that future around.
        let read = Box::pin(self.resource_read(request, context));
        tracing::Instrument::instrument(read, span).await.map(Into::into)
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
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        Box::pin(self.prompt_get(&request, &context)).await.map(Into::into)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        Box::pin(self.completion(request, context)).await
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    /// rmcp hands a request here when no typed request fits it: an unknown method, or
    /// one of MCP's methods whose params do not fit it (`resources/read` with a number
    /// as its `uri`). The latter is invalid params, not an unknown method; neither
    /// echoes more than 64 characters of the method.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        let version = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.headers.get("mcp-protocol-version"))
            .and_then(|v| v.to_str().ok())
            .unwrap_or("");
        Err(custom_request_error(&request.method, version))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The request's span (docs/tracing.md): everything below runs in it, the log lines
        // name its trace, and a traced platform call hangs under it.
        let caller = caller_of(&context, &self.calls.trusted_proxies);
        let span = traced::request_span(
            "tools/call",
            Some(&request.name),
            request.meta.as_deref(),
            &context,
            &caller,
        );
        let answer = tracing::Instrument::instrument(Box::pin(self.tool_call(request, context)), span.clone()).await;
        traced::call_outcome(&span, &answer);
        answer
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        self.tasks
            .get(&request.task_id, task_user(self, &context).as_deref())
            .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.tasks
            .cancel(&request.task_id, task_user(self, &context).as_deref())
            .await
    }
}

impl Handler {
    /// A `tools/call`, in its request's span.
    async fn tool_call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        // The call's state (replay, time limit, tool future) is several KB; rmcp moves the
        // future it gets from here into each request's task and through its stages, so
        // it gets a pointer, not the state. Every progress notification is handed over
        // before the result ([`progress`]).
        let mut request = request;
        // A name that fits several things is put to the person first, where the client
        // can be asked ([`ask`]); nothing below runs for that answer.
        let caller = caller_of(&context, &self.calls.trusted_proxies);
        let wait = self.calls.request_timeout();
        let asked = Box::pin(ask::before(&self.calls, &caller, &mut request, &context, wait)).await?;
        if let ask::Before::Ask(result) = asked {
            return Ok(CallToolResponse::InputRequired(result));
        }
        // A `search` or a read of a record from a client that declares the Tasks extension
        // answers at once with its task, which `tasks/get` reads ([`tasks`]). With several
        // replicas (where `tasks/get` may reach another) only where every replica reads
        // the tasks; otherwise the call answers whole, as the extension allows.
        let declares_tasks = context.client_capabilities().is_some_and(|c| c.supports_tasks());
        if declares_tasks
            && (!self.calls.replicated() || self.tasks.everywhere())
            && self.info.capabilities.supports_tasks()
            && self
                .calls
                .tools()
                .get(&request.name)
                .is_some_and(ToolEntry::runs_as_task)
        {
            let request = self.request(request, &context, None);
            return Ok(CallToolResponse::Task(
                self.tasks.start(Arc::clone(&self.calls), request),
            ));
        }
        let notifier = progress::Notifier::of(&context);
        let request = self.request(request, &context, notifier.as_ref());
        let result = Box::pin(self.calls.call(request)).await;
        progress::flush(notifier).await;
        result.map(CallToolResponse::Complete)
    }
}

/// Who may read a task: the user a request's token vouched for (with authorization on).
fn task_user(handler: &Handler, context: &RequestContext<RoleServer>) -> Option<String> {
    caller_of(context, &handler.calls.trusted_proxies).user.clone()
}

/// The methods of MCP a client may send a server (2025-06-18 to 2026-07-28).
const MCP_METHODS: [&str; 13] = [
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "resources/templates/list",
    "resources/subscribe",
    "resources/unsubscribe",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
];

/// The methods the stateless era (2026-07-28) removed: there they are unknown methods
/// (HTTP 404, -32601), whatever their params.
const REMOVED_IN_2026_07_28: [&str; 4] = [
    "initialize",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// The error for a request no typed request of rmcp fits (see
/// [`ServerHandler::on_custom_request`] on [`Handler`]), asked at protocol `version`.
fn custom_request_error(method: &str, version: &str) -> ErrorData {
    let removed = version >= "2026-07-28" && REMOVED_IN_2026_07_28.contains(&method);
    if MCP_METHODS.contains(&method) && !removed {
        return ErrorData::invalid_params(
            format!("invalid params: `params` does not have the shape `{method}` takes"),
            None,
        );
    }
    let shown: String = method.chars().take(64).collect();
    let more = if shown.len() < method.len() { "…" } else { "" };
    ErrorData::new(
        rmcp::model::ErrorCode::METHOD_NOT_FOUND,
        format!("method not found: `{shown}{more}`"),
        None,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn regression_methods_the_stateless_era_removed_are_unknown_there() {
        let code = |method: &str, version: &str| custom_request_error(method, version).code.0;
        for method in REMOVED_IN_2026_07_28 {
            assert_eq!(code(method, "2026-07-28"), -32601, "{method} in 2026-07-28");
            assert_eq!(
                code(method, "2025-11-25"),
                -32602,
                "{method} in 2025-11-25: params that do not fit"
            );
        }
        assert_eq!(code("resources/read", "2026-07-28"), -32602);
        assert_eq!(code("no/such", "2025-06-18"), -32601);
    }
}
