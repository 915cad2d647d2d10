//! The Tasks extension (`server/src/mcp/tasks.rs`) end to end with raw 2026-07-28
//! requests against the fakes on loopback: `/mcp` declares it in `server/discover`; a
//! `search` from a client that declares it answers `resultType: "task"`, and `tasks/get`
//! says which platforms answered and which are pending until it carries the whole result
//! (a slow platform's answer included, asked of it once); `tasks/cancel` ends a task as
//! cancelled; an unknown id is invalid params; a client that does not declare the
//! extension gets today's answer.

use std::time::Duration;

use crate::support;

use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, result, temp_dir};

/// The client capabilities that declare the Tasks extension.
fn declares_tasks() -> Value {
    json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// A 2026-07-28 request `method` with `params`, declaring `capabilities` (a task's
/// request names its task in `Mcp-Name`).
async fn request(mcp: &Mcp, id: i64, method: &str, mut params: Value, capabilities: Value) -> Reply {
    params["_meta"] = json!({"io.modelcontextprotocol/clientCapabilities": capabilities});
    let mut client = Mcp::modern(mcp.url.clone());
    if let Some(task) = params["taskId"].as_str() {
        client.extra_headers.push(("mcp-name".to_owned(), task.to_owned()));
    }
    client
        .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .await
}

/// Each platform's status in a `search` result.
fn statuses(search: &Value) -> std::collections::BTreeMap<String, String> {
    search["structuredContent"]["platforms"]
        .as_array()
        .unwrap_or_else(|| panic!("platforms: {search}"))
        .iter()
        .map(|p| {
            (
                p["platform"].as_str().unwrap_or_default().to_owned(),
                p["status"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_as_a_task_is_polled_until_the_slow_platform_has_answered() {
    let f = fakes().await;
    let mut c = config(&f, &temp_dir("tasks-slow"));
    c.request_timeout_secs = 3; // a search round waits 1 s for the slowest
    let server = Server::start(c).await;
    f.obv.set_latency(Duration::from_secs(2));
    let mcp = Mcp::modern(server.url("/mcp"));

    let discovered = result(&request(&mcp, 1, "server/discover", json!({}), json!({})).await);
    assert!(
        discovered["capabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some(),
        "/mcp declares the extension: {discovered}"
    );
    let obv_before = f.obv.requests();
    let made = result(
        &request(
            &mcp,
            2,
            "tools/call",
            json!({"name": "search", "arguments": {"query": "begroting"}}),
            declares_tasks(),
        )
        .await,
    );
    assert_eq!(made["resultType"], "task", "{made}");
    let task_id = made["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task id: {made}"))
        .to_owned();
    assert!(task_id.len() >= 32, "an unguessable id: {task_id}");

    let mut seen: Vec<String> = Vec::new();
    let mut done = Value::Null;
    let mut id = 3;
    let finished = support::eventually(Duration::from_secs(60), async || {
        id += 1;
        let got = result(&request(&mcp, id, "tasks/get", json!({"taskId": task_id}), declares_tasks()).await);
        if let Some(message) = got["statusMessage"].as_str() {
            seen.push(message.to_owned());
        }
        let status = got["status"].as_str().unwrap_or_default().to_owned();
        assert!(status == "working" || status == "completed", "{got}");
        done = got;
        status == "completed"
    })
    .await;
    assert!(finished, "the task completes: {done}");
    assert!(
        seen.iter()
            .any(|m| m.contains("; 1 pending") || m.contains("pending: OpenBesluitvorming")),
        "tasks/get named the pending platform: {seen:?}"
    );
    let whole = &done["result"];
    let standing = statuses(whole);
    assert_eq!(standing.get("obv").map(String::as_str), Some("ok"), "{standing:?}");
    assert!(!standing.values().any(|s| s == "pending"), "{standing:?}");
    assert_eq!(
        f.obv.requests(),
        obv_before + 1,
        "the slow platform asked once (the rounds coalesce)"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_ends_cancelled_and_an_unknown_one_is_invalid_params() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("tasks-cancel"))).await;
    f.obv.set_latency(Duration::from_secs(30));
    let mcp = Mcp::modern(server.url("/mcp"));
    let made = result(
        &request(
            &mcp,
            1,
            "tools/call",
            json!({"name": "search", "arguments": {"query": "stikstof"}}),
            declares_tasks(),
        )
        .await,
    );
    let task_id = made["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task id: {made}"))
        .to_owned();
    let ack = request(&mcp, 2, "tasks/cancel", json!({"taskId": task_id}), declares_tasks()).await;
    assert!(
        ack.message.as_ref().is_some_and(|m| m.get("result").is_some()),
        "{}",
        ack.text
    );
    let mut id = 2;
    let mut last = Value::Null;
    let cancelled = support::eventually(Duration::from_secs(20), async || {
        id += 1;
        last = result(&request(&mcp, id, "tasks/get", json!({"taskId": task_id}), declares_tasks()).await);
        last["status"] == "cancelled"
    })
    .await;
    assert!(cancelled, "{last}");

    let unknown = request(
        &mcp,
        50,
        "tasks/get",
        json!({"taskId": "00000000-0000-4000-8000-000000000000"}),
        declares_tasks(),
    )
    .await;
    let error = &unknown.message.as_ref().expect("an answer")["error"];
    assert_eq!(error["code"], -32602, "{}", unknown.text);

    // A client that does not declare the extension gets the search's answer itself.
    f.obv.set_latency(Duration::ZERO);
    let plain = result(
        &request(
            &mcp,
            51,
            "tools/call",
            json!({"name": "search", "arguments": {"query": "stikstof"}}),
            json!({}),
        )
        .await,
    );
    assert!(plain.get("resultType").is_none_or(|t| t == "complete"), "{plain}");
    assert!(plain["structuredContent"]["results"].is_array(), "{plain}");
    server.stop().await;
}
