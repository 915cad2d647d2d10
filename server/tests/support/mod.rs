//! Test harness: the fake platforms and a BesluitBron server on loopback, and a small
//! JSON-RPC client that speaks MCP's Streamable HTTP by hand (so tests can also send
//! what no well-behaved client would). The official Python SDK is exercised separately
//! (`scripts/e2e`).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use besluitbron_fakes::{FakeHandle, serve_registry_on};
use besluitbron_server::app::App;
use besluitbron_server::config::Config;
use serde_json::{Value, json};

pub mod redis;
use tokio::sync::oneshot;

/// A 2026-07-28 `tools/call` of `tool` with `arguments` to `path`, as a request for the
/// router itself (no socket: the client address is loopback, as the listener would
/// set it), with `headers` added.
pub fn stateless_call(
    path: &str,
    id: usize,
    tool: &str,
    arguments: Value,
    headers: &[(&str, &str)],
) -> axum::http::Request<axum::body::Body> {
    let body = json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": arguments,
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}
    });
    let mut request = axum::http::Request::post(path)
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let mut request = request
        .body(axum::body::Body::from(body.to_string()))
        .expect("a request");
    request
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(SocketAddr::from(([127, 0, 0, 1], 40_000))));
    request
}

/// The fake platforms: every fake of the registry on one listener, with the two the
/// tests talk to by name.
pub struct Fakes {
    pub obv: FakeHandle,
    pub tk: FakeHandle,
    pub all: besluitbron_fakes::Fakes,
}

pub async fn fakes() -> Fakes {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind fakes");
    let all = serve_registry_on(listener).await.expect("serve fakes");
    let obv = all
        .get(besluitbron_server::platforms::obv::PLATFORM)
        .expect("obv fake")
        .clone();
    let tk = all
        .get(besluitbron_server::platforms::tk::PLATFORM)
        .expect("tk fake")
        .clone();
    Fakes { obv, tk, all }
}

/// A configuration pointing at the fakes, with a fresh data directory.
pub fn config(fakes: &Fakes, data_dir: &std::path::Path) -> Config {
    let mut c = besluitbron_server::connectors::load_config(None, Vec::new()).expect("defaults");
    c.data_dir = data_dir.to_path_buf();
    c.status_refresh_secs = 0;
    for (id, url) in fakes.all.base_urls() {
        let p = c.platforms.get_mut(id.as_str()).expect("platform");
        p.base_url = url;
        p.timeout_ms = 10_000;
        p.attempts = 2;
    }
    // The retired ORI is answered from a hold of its own (not the buffer) for a minute;
    // the tests that ask a platform again right after a fault need every call to reach
    // it. `ori_connector.rs` tests the hold itself.
    if let Some(ori) = c.platforms.get_mut("ori") {
        ori.retired_hold_secs = None;
    }
    c
}

/// A running server.
pub struct Server {
    pub addr: SocketAddr,
    pub state: std::sync::Arc<besluitbron_server::app::AppState>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
}

impl Server {
    pub async fn start(config: Config) -> Server {
        Server::serve(App::build(config).expect("build app"), Duration::from_secs(5)).await
    }

    /// Serves a built `app` on a fresh loopback port; a shutdown drains for `drain`.
    pub async fn serve(app: App, drain: Duration) -> Server {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind server");
        let addr = listener.local_addr().expect("addr");
        let state = app.state.clone();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(app.serve(
            listener,
            async {
                let _ = stopped.await;
            },
            drain,
        ));
        Server {
            addr,
            state,
            stop: Some(stop),
            task: Some(task),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Stops the server and waits until it has let go of everything (buffer files).
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            task.await.expect("server task").expect("server ran");
        }
        drop(self.state);
        // Background tasks holding the buffers end with the cancellation.
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits until `f` holds, up to `limit` (on the wall clock), polling every 20 ms.
pub async fn eventually<F: AsyncFnMut() -> bool>(limit: Duration, mut f: F) -> bool {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if f().await {
            return true;
        }
        if tokio::time::Instant::now() > deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A free loopback port: bound, then released for a child process to take.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind a free port")
        .local_addr()
        .expect("addr")
        .port()
}

/// A fresh temporary directory.
pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "besluitbron-test-{name}-{}-{}",
        std::process::id(),
        rand_suffix()
    ));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

fn rand_suffix() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::Relaxed)
}

/// The outcome of one HTTP exchange.
pub struct Reply {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    /// The JSON-RPC message answering the request (from JSON or SSE), if any.
    pub message: Option<Value>,
    pub text: String,
}

/// A hand-rolled MCP client.
pub struct Mcp {
    http: reqwest::Client,
    pub url: String,
    pub session: Option<String>,
    pub extra_headers: Vec<(String, String)>,
    /// Speaks the stateless 2026-07-28 protocol: metadata and routing headers on every
    /// request, no session.
    pub modern: bool,
    next_id: i64,
}

impl Mcp {
    pub fn new(url: String) -> Mcp {
        Mcp {
            http: reqwest::Client::new(),
            url,
            session: None,
            extra_headers: Vec::new(),
            modern: false,
            next_id: 1,
        }
    }

    /// A stateless 2026-07-28 client: no handshake.
    pub fn modern(url: String) -> Mcp {
        Mcp {
            modern: true,
            ..Mcp::new(url)
        }
    }

    /// Legacy (2025-06-18) handshake: initialize, then the initialized notification.
    pub async fn initialize(url: String) -> Mcp {
        let mut c = Mcp::new(url);
        let r = c
            .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "besluitbron-tests", "version": "1"}}}))
            .await;
        assert_eq!(r.status, 200, "initialize: {}", r.text);
        c.session = r
            .headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        assert!(c.session.is_some(), "a session id");
        let n = c
            .post(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        assert!(
            n.status == 202 || n.status == 200,
            "initialized: {} {}",
            n.status,
            n.text
        );
        c
    }

    pub async fn post(&self, mut body: Value) -> Reply {
        if !self.modern {
            return self.post_raw(body.to_string().into_bytes()).await;
        }
        let method = body["method"].as_str().unwrap_or("").to_owned();
        // The routing header names the tool or prompt, or the resource read.
        let name = body["params"]["name"]
            .as_str()
            .or_else(|| body["params"]["uri"].as_str().filter(|_| method == "resources/read"))
            .map(str::to_owned);
        if body.get("id").is_some() {
            let params = body
                .as_object_mut()
                .expect("a JSON-RPC object")
                .entry("params")
                .or_insert_with(|| json!({}));
            let meta = params
                .as_object_mut()
                .expect("params object")
                .entry("_meta")
                .or_insert_with(|| json!({}));
            meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
            // A request may declare capabilities of its own (elicitation, an extension).
            meta.as_object_mut()
                .expect("_meta object")
                .entry("io.modelcontextprotocol/clientCapabilities")
                .or_insert_with(|| json!({}));
        }
        let mut headers = vec![("mcp-method".to_owned(), method)];
        headers.extend(name.map(|n| ("mcp-name".to_owned(), n)));
        self.send(body.to_string().into_bytes(), &headers).await
    }

    pub async fn post_raw(&self, body: Vec<u8>) -> Reply {
        self.send(body, &[]).await
    }

    async fn send(&self, body: Vec<u8>, headers: &[(String, String)]) -> Reply {
        let version = if self.modern { "2026-07-28" } else { "2025-06-18" };
        let mut req = self
            .http
            .post(&self.url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", version)
            .body(body);
        for (k, v) in headers {
            req = req.header(k, v);
        }
        if let Some(s) = &self.session {
            req = req.header("mcp-session-id", s);
        }
        for (k, v) in &self.extra_headers {
            req = req.header(k, v);
        }
        let resp = req.send().await.expect("send");
        let status = resp.status().as_u16();
        let headers = resp.headers().clone();
        let text = resp.text().await.unwrap_or_default();
        let message = parse_message(&text);
        Reply {
            status,
            headers,
            message,
            text,
        }
    }

    /// `tools/call` with a fresh id; returns the JSON-RPC response.
    pub async fn call(&mut self, tool: &str, args: Value) -> Reply {
        let id = self.next_id;
        self.next_id += 1;
        self.call_with_id(id, tool, args).await
    }

    pub async fn call_with_id(&self, id: i64, tool: &str, args: Value) -> Reply {
        self.post(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": tool, "arguments": args}}),
        )
        .await
    }

    /// A request `method` with `params` and a fresh id; returns the reply.
    pub async fn request(&mut self, method: &str, params: Value) -> Reply {
        let id = self.next_id;
        self.next_id += 1;
        self.post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await
    }

    pub async fn list_tools(&mut self) -> Vec<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let r = self
            .post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}))
            .await;
        r.message.expect("tools/list answer")["result"]["tools"]
            .as_array()
            .cloned()
            .expect("tools")
    }
}

/// The last JSON-RPC message with an `id` in a JSON or SSE body.
fn parse_message(text: &str) -> Option<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return Some(v);
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str::<Value>(d.trim()).ok())
        .rfind(|v| v.get("id").is_some() && (v.get("result").is_some() || v.get("error").is_some()))
}

/// The JSON-RPC `result` of an answer (panics naming the status and body where there is none).
pub fn result(r: &Reply) -> Value {
    r.message
        .as_ref()
        .unwrap_or_else(|| panic!("no answer: {} {}", r.status, r.text))["result"]
        .clone()
}

/// The structured result of a successful tool call (panics with the reply otherwise).
pub fn structured(r: &Reply) -> Value {
    let m = r
        .message
        .as_ref()
        .unwrap_or_else(|| panic!("no JSON-RPC message: {} {}", r.status, r.text));
    let result = &m["result"];
    assert!(result.get("isError") != Some(&Value::Bool(true)), "tool error: {m}");
    result["structuredContent"].clone()
}

/// `search`'s structured results per platform id.
pub fn search_groups(r: &Reply) -> std::collections::BTreeMap<String, Value> {
    structured(r)["platforms"]
        .as_array()
        .expect("platforms")
        .iter()
        .map(|g| (g["platform"].as_str().expect("an id").to_owned(), g.clone()))
        .collect()
}

/// The text of a tool error (panics if the call succeeded).
pub fn tool_error_text(r: &Reply) -> String {
    let m = r.message.as_ref().expect("message");
    assert_eq!(m["result"]["isError"], Value::Bool(true), "expected a tool error: {m}");
    m["result"]["content"][0]["text"].as_str().unwrap_or("").to_owned()
}
