//! One trace from the assistant to the platform (docs/tracing.md): `besluitbron serve` with
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` pointing at a collector on loopback, which decodes
//! each `ExportTraceServiceRequest` with the official OpenTelemetry protobuf definitions
//! (`opentelemetry-proto`'s prost messages). A tool call with a `traceparent` in
//! `params._meta` is one tree under the client's trace id: request → platform call →
//! buffer lookup, queue wait, attempt → HTTP request; asked again, the buffer answers; a
//! malformed `traceparent` starts a trace of its own.

use crate::support;

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::routing::post;
use opentelemetry_proto::tonic::collector::trace::v1::{ExportTraceServiceRequest, ExportTraceServiceResponse};
use opentelemetry_proto::tonic::common::v1::any_value::Value as AnyValue;
use opentelemetry_proto::tonic::trace::v1::Span;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use prost::Message as _;
use serde_json::json;
use support::{Mcp, fakes, temp_dir};
use tokio::sync::watch;

const CLIENT_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CLIENT_SPAN: &str = "00f067aa0ba902b7";

/// A collector on loopback: every span it was sent, and a count that changes with each
/// batch (the test waits on it, never on time).
struct Collector {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
    batches: watch::Receiver<usize>,
}

type Received = (Arc<Mutex<Vec<Span>>>, Arc<watch::Sender<usize>>);

async fn collect(
    State((spans, batches)): State<Received>,
    body: Bytes,
) -> ([(&'static str, &'static str); 1], Vec<u8>) {
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf trace export");
    let mut kept = spans.lock().unwrap();
    for resource in request.resource_spans {
        for scope in resource.scope_spans {
            kept.extend(scope.spans);
        }
    }
    batches.send_modify(|n| *n += 1);
    let answer = ExportTraceServiceResponse::default().encode_to_vec();
    ([("content-type", "application/x-protobuf")], answer)
}

async fn collector() -> Collector {
    let spans = Arc::new(Mutex::new(Vec::new()));
    let (tx, rx) = watch::channel(0);
    let app = axum::Router::new()
        .route("/v1/traces", post(collect))
        .with_state((Arc::clone(&spans), Arc::new(tx)));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the collector");
    let url = format!("http://{}/v1/traces", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("collector") });
    Collector {
        url,
        spans,
        batches: rx,
    }
}

impl Collector {
    /// Waits (20 s at most) until the spans received hold what `want` finds, and returns it.
    async fn until<T>(&mut self, what: &str, want: impl Fn(&[Span]) -> Option<T>) -> T {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(found) = want(&self.spans.lock().unwrap()) {
                return found;
            }
            let changed = tokio::time::timeout_at(deadline, self.batches.changed()).await;
            assert!(matches!(changed, Ok(Ok(()))), "the collector never received {what}");
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A span's attributes as text.
fn attributes(span: &Span) -> BTreeMap<String, String> {
    span.attributes
        .iter()
        .map(|kv| {
            let value = match kv.value.as_ref().and_then(|v| v.value.as_ref()) {
                Some(AnyValue::StringValue(s)) => s.clone(),
                Some(AnyValue::IntValue(i)) => i.to_string(),
                Some(AnyValue::BoolValue(b)) => b.to_string(),
                Some(AnyValue::DoubleValue(d)) => d.to_string(),
                other => format!("{other:?}"),
            };
            (kv.key.clone(), value)
        })
        .collect()
}

fn attribute(span: &Span, key: &str) -> Option<String> {
    attributes(span).remove(key)
}

/// The one span named `name` whose parent is `parent`.
fn child<'a>(spans: &'a [Span], parent: &Span, name: &str) -> Option<&'a Span> {
    spans
        .iter()
        .find(|s| s.name == name && s.parent_span_id == parent.span_id)
}

/// The server span of the `tools/call` whose JSON-RPC id is `id`.
fn request(spans: &[Span], id: &str) -> Option<Span> {
    spans
        .iter()
        .find(|s| s.name == "tools/call obv_search" && attribute(s, "jsonrpc.request.id").as_deref() == Some(id))
        .cloned()
}

/// One call's tree, every span of it received: the request, its platform call, and below
/// that what `below` names.
fn tree(spans: &[Span], id: &str, below: &[&str]) -> Option<(Span, Span, BTreeMap<String, Span>)> {
    let request = request(spans, id)?;
    let call = child(spans, &request, "besluitbron.platform_call")?.clone();
    let mut under = BTreeMap::new();
    for name in below {
        under.insert((*name).to_owned(), child(spans, &call, name)?.clone());
    }
    Some((request, call, under))
}

struct Served {
    child: Child,
    mcp: Mcp,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn serve_traced(f: &support::Fakes, collector: &Collector, name: &str) -> Served {
    let port = support::free_port();
    let dir = temp_dir(name);
    let child = Command::new(env!("CARGO_BIN_EXE_besluitbron"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(&dir)
        .arg("--platform-url")
        .arg(format!("obv={}", f.obv.base_url()))
        .env("BesluitBron__StatusRefreshSecs", "0")
        .env("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", &collector.url)
        // Batches every 50 ms, so the test's wait for them is short.
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .env_remove("OTEL_EXPORTER_OTLP_ENDPOINT")
        .env_remove("OTEL_SDK_DISABLED")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start besluitbron");
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while reqwest::get(format!("{base}/healthz")).await.is_err() {
        assert!(Instant::now() < deadline, "the server did not come up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let mcp = Mcp::initialize(format!("{base}/mcp/obv")).await;
    Served { child, mcp }
}

fn call_traced(id: i64, query: &str, traceparent: &str) -> serde_json::Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "obv_search",
        "arguments": {"query": query, "limit": 2},
        "_meta": {"traceparent": traceparent, "tracestate": "client=1"},
    }})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_call_is_one_tree_under_the_clients_trace_and_a_second_is_a_buffer_hit() {
    let f = fakes().await;
    let mut collector = collector().await;
    let served = serve_traced(&f, &collector, "traces").await;
    let traceparent = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let first = served.mcp.post(call_traced(7, "woningbouw", &traceparent)).await;
    assert_eq!(first.status, 200, "{}", first.text);
    let below = [
        "besluitbron.buffer_lookup",
        "besluitbron.queue_wait",
        "besluitbron.attempt",
    ];
    let (request, call, under) = collector
        .until("the first call's tree", |spans| tree(spans, "7", &below))
        .await;

    // The request: the server span of the MCP conventions, under the client's span.
    assert_eq!(hex(&request.trace_id), CLIENT_TRACE, "the client's trace");
    assert_eq!(
        hex(&request.parent_span_id),
        CLIENT_SPAN,
        "the client's span is its parent"
    );
    assert_eq!(request.kind, SpanKind::Server as i32);
    let a = attributes(&request);
    assert_eq!(a["mcp.method.name"], "tools/call");
    assert_eq!(a["gen_ai.tool.name"], "obv_search");
    assert_eq!(a["gen_ai.operation.name"], "execute_tool");
    assert_eq!(a["jsonrpc.request.id"], "7");
    assert_eq!(a["mcp.protocol.version"], "2025-06-18");
    assert_eq!(a["network.transport"], "tcp");
    let session = served.mcp.session.clone().expect("a session");
    assert_eq!(a["mcp.session.id"].len(), 16, "a digest of the session id");
    assert!(!session.contains(&a["mcp.session.id"]), "never the session id itself");

    // The platform call, asked; every span in the one trace.
    assert_eq!(attribute(&call, "besluitbron.platform").as_deref(), Some("obv"));
    assert_eq!(attribute(&call, "besluitbron.served").as_deref(), Some("asked"));
    for span in under.values() {
        assert_eq!(hex(&span.trace_id), CLIENT_TRACE, "{} in the client's trace", span.name);
    }
    let lookup = &under["besluitbron.buffer_lookup"];
    assert_eq!(attribute(lookup, "besluitbron.buffer.layer").as_deref(), Some("memory"));
    assert_eq!(attribute(lookup, "besluitbron.buffer.hit").as_deref(), Some("false"));
    let queue = &under["besluitbron.queue_wait"];
    assert_eq!(
        attribute(queue, "besluitbron.queue.outcome").as_deref(),
        Some("admitted")
    );
    assert!(
        attribute(queue, "besluitbron.queue.position").is_some(),
        "{:?}",
        attributes(queue)
    );
    let attempt = &under["besluitbron.attempt"];
    assert_eq!(attribute(attempt, "besluitbron.attempt.number").as_deref(), Some("1"));
    assert_eq!(attribute(attempt, "besluitbron.attempt.outcome").as_deref(), Some("ok"));

    // The attempt's HTTP request: the client span of the HTTP conventions.
    let get = collector
        .until("the attempt's HTTP span", |spans| child(spans, attempt, "GET").cloned())
        .await;
    assert_eq!(get.kind, SpanKind::Client as i32);
    let h = attributes(&get);
    assert_eq!(h["http.request.method"], "GET");
    assert_eq!(h["http.response.status_code"], "200");
    assert_eq!(h["server.address"], "127.0.0.1");
    assert!(h["url.full"].starts_with(f.obv.base_url()), "{}", h["url.full"]);
    assert!(!h.contains_key("error.type"), "{h:?}");

    // The same question again: the buffer answers, nothing goes to the platform.
    let again = format!("00-{CLIENT_TRACE}-{}-01", "1111111111111111");
    let second = served.mcp.post(call_traced(8, "woningbouw", &again)).await;
    assert_eq!(second.status, 200, "{}", second.text);
    let (_, call, under) = collector
        .until("the second call's tree", |spans| {
            tree(spans, "8", &["besluitbron.buffer_lookup"])
        })
        .await;
    assert_eq!(attribute(&call, "besluitbron.served").as_deref(), Some("buffer_hit"));
    let lookup = &under["besluitbron.buffer_lookup"];
    assert_eq!(attribute(lookup, "besluitbron.buffer.hit").as_deref(), Some("true"));
    let spans = collector.spans.lock().unwrap().clone();
    assert!(
        child(&spans, &call, "besluitbron.attempt").is_none(),
        "a buffer hit makes no attempt"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_malformed_traceparent_starts_a_trace_of_its_own() {
    let f = fakes().await;
    let mut collector = collector().await;
    let served = serve_traced(&f, &collector, "traces-malformed").await;
    let malformed = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}");
    let answer = served.mcp.post(call_traced(3, "dijkversterking", &malformed)).await;
    assert_eq!(answer.status, 200, "never an error: {}", answer.text);
    assert!(answer.text.contains("\"result\""), "{}", answer.text);
    let request = collector
        .until("the call's request span", |spans| request(spans, "3"))
        .await;
    assert_ne!(hex(&request.trace_id), CLIENT_TRACE);
    assert_eq!(request.trace_id.len(), 16, "a trace id of its own");
    assert!(
        request.parent_span_id.is_empty(),
        "a root: {}",
        hex(&request.parent_span_id)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_is_an_attempt_that_is_queued_again_and_the_next_attempt_answers() {
    let f = fakes().await;
    let mut collector = collector().await;
    let served = serve_traced(&f, &collector, "traces-429").await;
    f.obv.set_rate_limit_storm(true);
    let traceparent = format!("00-{CLIENT_TRACE}-{CLIENT_SPAN}-01");
    let mut mcp = Mcp::new(served.mcp.url.clone());
    mcp.session = served.mcp.session.clone();
    let call = tokio::spawn(async move { mcp.post(call_traced(5, "hoogwater", &traceparent)).await });
    // The first attempt ends with the platform's 429: the call waits in the queue again.
    let refused = collector
        .until("an attempt the platform refused", |spans| {
            spans
                .iter()
                .find(|s| {
                    s.name == "besluitbron.attempt"
                        && attribute(s, "besluitbron.attempt.outcome").as_deref() == Some("rate_limited")
                })
                .cloned()
        })
        .await;
    assert_eq!(attribute(&refused, "error.type").as_deref(), Some("rate_limited"));
    assert_eq!(attribute(&refused, "besluitbron.attempt.number").as_deref(), Some("1"));
    let get = collector
        .until("the refused attempt's HTTP span", |spans| {
            child(spans, &refused, "GET").cloned()
        })
        .await;
    assert_eq!(attribute(&get, "http.response.status_code").as_deref(), Some("429"));
    f.obv.set_rate_limit_storm(false);
    let answer = call.await.expect("the call");
    assert_eq!(answer.status, 200, "{}", answer.text);
    let (_, call, _) = collector.until("the call's tree", |spans| tree(spans, "5", &[])).await;
    assert_eq!(attribute(&call, "besluitbron.served").as_deref(), Some("asked"));
    assert_eq!(
        refused.parent_span_id, call.span_id,
        "the refused attempt is the call's"
    );
    let answered = collector
        .until("the attempt that answered", |spans| {
            spans
                .iter()
                .find(|s| {
                    s.name == "besluitbron.attempt"
                        && s.parent_span_id == call.span_id
                        && attribute(s, "besluitbron.attempt.outcome").as_deref() == Some("ok")
                })
                .cloned()
        })
        .await;
    let number: u32 = attribute(&answered, "besluitbron.attempt.number")
        .and_then(|n| n.parse().ok())
        .expect("a number");
    assert!(number >= 2, "asked again after the 429: attempt {number}");
}
