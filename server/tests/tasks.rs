//! The Tasks extension (`server/src/mcp/tasks.rs`) end to end with raw 2026-07-28
//! requests against the fakes on loopback: `/mcp` declares it in `server/discover`; a
//! `search` from a client that declares it answers `resultType: "task"`, and `tasks/get`
//! says which platforms answered and which are pending until it carries the whole result
//! (a slow platform's answer included, asked of it once); `tasks/cancel` ends a task as
//! cancelled; an unknown id is invalid params; a client that does not declare the
//! extension gets today's answer. A read of a record (`fetch`, a reading tool) is a task
//! in the same way.

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

/// A read of a record is a task too, at `/mcp` (`fetch`) and at its connector's address
/// (its reading tool, where the extension is declared as well): polled until the slow
/// platform has answered, its result the read a client that does not declare the
/// extension gets whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_of_a_record_as_a_task_is_polled_until_it_is_read() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("tasks-read"))).await;
    let id = "motion:notubiz:provincie:noord-brabant:80501";
    let obv = Mcp::modern(server.url("/mcp/obv"));
    let discovered = result(&request(&obv, 1, "server/discover", json!({}), json!({})).await);
    assert!(
        discovered["capabilities"]["extensions"]
            .get("io.modelcontextprotocol/tasks")
            .is_some(),
        "/mcp/obv declares the extension: {discovered}"
    );
    f.obv.set_latency(Duration::from_secs(2));
    let mut n = 10;
    for (mcp, tool, arguments) in [
        (Mcp::modern(server.url("/mcp")), "fetch", json!({"id": id})),
        (obv, "obv_document", json!({"id": id, "length": 500})),
    ] {
        n += 1;
        let made = result(
            &request(
                &mcp,
                n,
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
                declares_tasks(),
            )
            .await,
        );
        assert_eq!(made["resultType"], "task", "{tool}: {made}");
        let task_id = made["taskId"].as_str().expect("a task id").to_owned();
        let mut done = Value::Null;
        let finished = support::eventually(Duration::from_secs(60), async || {
            n += 1;
            done = result(&request(&mcp, n, "tasks/get", json!({"taskId": task_id}), declares_tasks()).await);
            done["status"] == "completed"
        })
        .await;
        assert!(finished, "{tool}: the task completes: {done}");
        assert_eq!(done["statusMessage"], "read", "{tool}: {done}");
        n += 1;
        let whole = result(
            &request(
                &mcp,
                n,
                "tools/call",
                json!({"name": tool, "arguments": arguments}),
                json!({}),
            )
            .await,
        );
        assert!(whole.get("resultType").is_none_or(|t| t == "complete"), "{whole}");
        let text = |r: &Value| {
            r["content"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .replace(" (from BesluitBron's buffer)", "")
        };
        assert!(!text(&whole).is_empty(), "{tool}: {whole}");
        assert_eq!(
            text(&done["result"]),
            text(&whole),
            "{tool}: the task's result is the read"
        );
    }
    server.stop().await;
}

/// OpenBesluitvorming's path as it stands.
async fn obv_path(server: &Server) -> besluitbron_server::driver::PathSnapshot {
    let snap = server
        .state
        .platforms()
        .get(besluitbron_server::platforms::obv::PLATFORM)
        .expect("obv has a task")
        .snapshot(true)
        .await
        .expect("running");
    assert_eq!(snap.invariants, Ok(()), "the path's invariants hold");
    snap
}

/// Waits until obv's path meets `cond`, and returns it; panics naming `what` otherwise.
async fn until_obv(
    server: &Server,
    what: &str,
    cond: impl Fn(&besluitbron_server::driver::PathSnapshot) -> bool,
) -> besluitbron_server::driver::PathSnapshot {
    let mut last = None;
    let met = support::eventually(Duration::from_secs(30), async || {
        let snap = obv_path(server).await;
        let ok = cond(&snap);
        last = Some(snap);
        ok
    })
    .await;
    let last = last.expect("a snapshot");
    assert!(met, "obv's path never got {what}: {:?}", last.stats);
    last
}

/// Makes a `search` task for `query`; its id.
async fn search_task(mcp: &Mcp, id: i64, query: &str) -> String {
    let made = result(
        &request(
            mcp,
            id,
            "tools/call",
            json!({"name": "search", "arguments": {"query": query}}),
            declares_tasks(),
        )
        .await,
    );
    made["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("a task id: {made}"))
        .to_owned()
}

/// Cancels task `task_id` and waits until `tasks/get` says it is cancelled.
async fn cancel(mcp: &Mcp, id: i64, task_id: &str) {
    let ack = request(mcp, id, "tasks/cancel", json!({"taskId": task_id}), declares_tasks()).await;
    assert!(
        ack.message.as_ref().is_some_and(|m| m.get("result").is_some()),
        "{}",
        ack.text
    );
    let mut last = Value::Null;
    let cancelled = support::eventually(Duration::from_secs(20), async || {
        last = result(&request(mcp, id + 1, "tasks/get", json!({"taskId": task_id}), declares_tasks()).await);
        last["status"] == "cancelled"
    })
    .await;
    assert!(cancelled, "{last}");
}

/// A server whose OpenBesluitvorming (slow: 30 s an answer) takes one request at a time,
/// that one place held by another caller's search.
struct Held {
    server: Server,
    /// obv's path before the other caller's search.
    base: besluitbron_server::driver::PathSnapshot,
    /// The platform's requests before it.
    sent: u64,
    /// The other caller's search.
    blocker: tokio::task::JoinHandle<Reply>,
}

async fn obv_held(f: &support::Fakes, name: &str) -> Held {
    let mut c = config(f, &temp_dir(name));
    // One request at OpenBesluitvorming at a time: the next waits at the gate.
    c.services.get_mut("obv").expect("obv's service").max_concurrent = Some(1);
    let server = Server::start(c).await;
    f.obv.set_latency(Duration::from_secs(30));
    let base = obv_path(&server).await;

    // Another caller's slow request holds OpenBesluitvorming's one place.
    let sent = f.obv.requests();
    let blocker = {
        let mut session = Mcp::initialize(server.url("/mcp/obv")).await;
        tokio::spawn(async move { session.call("obv_search", json!({"query": "blokkade"})).await })
    };
    until_obv(&server, "the other caller's request sent", |s| {
        s.stats.led == base.stats.led + 1
    })
    .await;
    Held {
        server,
        base,
        sent,
        blocker,
    }
}

/// A task's own platform request still waiting for its turn is withdrawn when the task
/// is cancelled, and counted; one another caller also waits on runs on for them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_task_withdraws_its_own_queued_request_but_not_a_shared_one() {
    let f = fakes().await;
    let Held {
        server,
        base,
        sent,
        blocker,
    } = obv_held(&f, "tasks-withdraw").await;
    assert!(
        support::eventually(Duration::from_secs(30), async || f.obv.requests() == sent + 1).await,
        "the other caller's request reached the platform"
    );

    // The task's own request waits behind it; cancelled, it is withdrawn unsent.
    let mcp = Mcp::modern(server.url("/mcp"));
    let own = search_task(&mcp, 1, "begroting").await;
    until_obv(&server, "the task's request waiting", |s| {
        s.stats.gated == base.stats.gated + 1
    })
    .await;
    cancel(&mcp, 2, &own).await;
    let after = until_obv(&server, "the task's request withdrawn", |s| {
        s.stats.withdrawn == base.stats.withdrawn + 1
    })
    .await;
    assert_eq!(
        f.obv.requests(),
        sent + 1,
        "the withdrawn request never reached the platform"
    );
    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("metrics text");
    let line = format!(
        "besluitbron_platform_withdrawn_calls_total{{platform=\"obv\"}} {}",
        after.stats.withdrawn
    );
    assert!(metrics.contains(&line), "{line} in the metrics");

    // A request another caller also waits on is theirs: the task's cancel leaves it.
    let other = {
        let plain = Mcp::modern(server.url("/mcp"));
        tokio::spawn(async move {
            request(
                &plain,
                10,
                "tools/call",
                json!({"name": "search", "arguments": {"query": "stikstof"}}),
                json!({}),
            )
            .await
        })
    };
    until_obv(&server, "the other caller's second request waiting", |s| {
        s.stats.gated == after.stats.gated + 1
    })
    .await;
    let shared = search_task(&mcp, 20, "stikstof").await;
    let joined = until_obv(&server, "the task joining it", |s| {
        s.stats.coalesced > after.stats.coalesced
    })
    .await;
    cancel(&mcp, 21, &shared).await;
    let left = until_obv(&server, "the task leaving it", |s| s.stats.left > joined.stats.left).await;
    assert_eq!(
        left.stats.withdrawn, after.stats.withdrawn,
        "the shared request is not withdrawn"
    );
    assert!(left.waiting >= 1, "the other caller still waits on it: {left:?}");
    other.abort();
    blocker.abort();
    server.stop().await;
}

/// Not only a task: a `search` whose client cancels it (`notifications/cancelled`, in a
/// session) while it waits withdraws its own platform request still waiting for its turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cancelled_search_withdraws_its_own_queued_request() {
    let f = fakes().await;
    let Held {
        server,
        base,
        sent,
        blocker,
    } = obv_held(&f, "search-withdraw").await;
    let session = std::sync::Arc::new(Mcp::initialize(server.url("/mcp")).await);
    let waiting = {
        let session = std::sync::Arc::clone(&session);
        tokio::spawn(async move {
            session
                .call_with_id(7_000, "search", json!({"query": "begroting"}))
                .await
        })
    };
    until_obv(&server, "the search's request waiting", |s| {
        s.stats.gated == base.stats.gated + 1
    })
    .await;
    let n = session
        .post(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7_000}}))
        .await;
    assert!(n.status == 202 || n.status == 200, "{}", n.text);
    until_obv(&server, "the search's request withdrawn", |s| {
        s.stats.withdrawn == base.stats.withdrawn + 1
    })
    .await;
    assert!(
        support::eventually(Duration::from_secs(30), async || f.obv.requests() == sent + 1).await,
        "only the other caller's request reached the platform"
    );
    waiting.abort();
    blocker.abort();
    server.stop().await;
}
