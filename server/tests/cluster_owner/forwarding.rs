//! A follower forwards a call for a platform it does not own to the owner, which alone
//! asks the platform: one replica owns, the platform's limit holds over all three, one
//! question asked on several replicas reaches the platform once, the internal endpoint
//! wants the secret, and a forwarded call waits its fair turn. A task made on one replica
//! is read and cancelled on another.

use crate::support;

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use besluitbron_fakes::ObvSettings;
use serde_json::{Value, json};
use support::redis::RedisServer;
use support::{Mcp, eventually, fakes, structured};

use super::{Admitted, Replica, SECRET, World, obv_lane, one_owner, owners, search, three};

/// The client capabilities that declare the Tasks extension, in a request's `_meta`.
fn declaring_tasks() -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}}})
}

/// `tools/call` of `tool` from a client that declares the Tasks extension: its result.
async fn task_call(c: &Mcp, id: i64, tool: &str, arguments: Value) -> Value {
    let reply = c
        .post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": tool, "arguments": arguments, "_meta": declaring_tasks()}}))
        .await;
    reply.message.as_ref().expect("an answer")["result"].clone()
}

/// `tasks/get` or `tasks/cancel` of `task_id`: its result, or its error.
async fn task_get(c: &Mcp, id: i64, method: &str, task_id: &str) -> Value {
    let mut client = Mcp::modern(c.url.clone());
    client.extra_headers.push(("mcp-name".to_owned(), task_id.to_owned()));
    let reply = client
        .post(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": {
            "taskId": task_id, "_meta": declaring_tasks()}}))
        .await;
    let message = reply.message.expect("an answer");
    message
        .get("result")
        .or(message.get("error"))
        .cloned()
        .unwrap_or(message)
}

/// `search` is a tool call like any other: on a follower, its part of a
/// platform another replica owns goes to that owner, as the platform's own tool would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_on_a_follower_asks_openbesluitvorming_at_its_owner() {
    let redis = RedisServer::start("own-search");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-search").await;
    let owner = one_owner(&rs).await;
    let follower = (owner + 1) % 3;
    let mut c = Mcp::modern(rs[follower].url("/mcp"));
    let reply = c.call("search", json!({"query": "gemeenteraad", "limit": 2})).await;
    let platforms = structured(&reply)["platforms"].as_array().cloned().expect("platforms");
    let obv = platforms
        .iter()
        .find(|p| p["platform"] == "obv")
        .expect("OpenBesluitvorming's part");
    assert_eq!(obv["status"], "ok", "{obv}");
    // The owner's answer is the part's listing itself, its tally with it.
    assert!(obv["total"].is_u64() && obv["total_is_exact"] == true, "{obv}");
    let m = rs[follower].metrics().await;
    assert!(
        m.contains("besluitbron_forwarded_calls_total{platform=\"obv\"} 1"),
        "the follower forwarded its obv part:\n{m}"
    );
    assert_eq!(rs[owner].sent.load(Ordering::SeqCst), 1, "the owner asked the platform");
    assert_eq!(rs[follower].sent.load(Ordering::SeqCst), 0, "the follower did not");
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);

    // A task runs in the replica that made it and is kept where every replica reads it:
    // made on the follower, polled on the owner until it carries the whole search.
    let made = task_call(&c, 77, "search", json!({"query": "gemeenteraad", "limit": 2})).await;
    assert_eq!(made["resultType"], "task", "{made}");
    let task_id = made["taskId"].as_str().expect("a task id").to_owned();
    let elsewhere = Mcp::modern(rs[owner].url("/mcp"));
    let mut got = Value::Null;
    let mut id = 80;
    let done = eventually(Duration::from_secs(30), async || {
        id += 1;
        got = task_get(&elsewhere, id, "tasks/get", &task_id).await;
        got["status"] == "completed"
    })
    .await;
    assert!(done, "the task read at another replica completes: {got}");
    assert!(got["result"]["structuredContent"]["platforms"].is_array(), "{got}");
    // At another address it is no task of theirs.
    let other = task_get(&Mcp::modern(rs[owner].url("/mcp/obv")), 99, "tasks/get", &task_id).await;
    assert_eq!(other["code"], -32602, "{other}");

    // Cancelled at another replica: the replica running it hears of it.
    f.obv.set_latency(Duration::from_secs(30));
    let made = task_call(&c, 100, "search", json!({"query": "traag en duur"})).await;
    let task_id = made["taskId"].as_str().expect("a task id").to_owned();
    let ack = task_get(&elsewhere, 101, "tasks/cancel", &task_id).await;
    assert!(ack.get("code").is_none(), "{ack}");
    let mut id = 110;
    let cancelled = eventually(Duration::from_secs(30), async || {
        id += 1;
        got = task_get(&c, id, "tasks/get", &task_id).await;
        got["status"] == "cancelled"
    })
    .await;
    assert!(cancelled, "the task cancelled at another replica ends cancelled: {got}");
    f.obv.set_latency(Duration::ZERO);
    for r in rs {
        r.stop().await;
    }
}

/// `fetch` with a reading tool's own arguments is that tool's call: on a replica that
/// does not own the law's platform it goes to the owner, which answers the record read as
/// a document; every replica answers the tool's own text.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fetch_with_the_readers_arguments_is_answered_by_the_laws_owner() {
    let redis = RedisServer::start("own-fetch");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-fetch").await;
    let bwb = besluitbron_server::platforms::bwb::PLATFORM;
    let owns = |i: usize| rs[i].node().owns_now(bwb);
    assert!(
        eventually(Duration::from_secs(30), async || (0..3).filter(|&i| owns(i)).count()
            == 1)
        .await,
        "one replica owns the laws' platform"
    );
    let owner = (0..3).find(|&i| owns(i)).expect("an owner");
    let args = json!({"id": "BWBR0018451", "date": "2025-06-01", "article": "2"});
    let own = Mcp::modern(rs[owner].url("/mcp")).call("bwb_read", args.clone()).await;
    structured(&own);
    let own_text: Vec<String> = support::result(&own)["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str().map(str::to_owned))
        .collect();
    // The buffer's word aside (the owner's read was the platform's, the others' buffered).
    let unbuffered = |text: &str| text.replace(" (from BesluitBron's buffer)", "");
    let own_text = unbuffered(&own_text.join("\n"));
    assert!(own_text.contains("Artikel 2"), "the article read: {own_text}");
    for (i, r) in rs.iter().enumerate() {
        let fetched = Mcp::modern(r.url("/mcp"))
            .call(
                "fetch",
                json!({"id": "BWBR0018451", "date": "2025-06-01", "article": "2"}),
            )
            .await;
        let shown = structured(&fetched);
        assert_eq!(
            shown["text"].as_str().map(unbuffered),
            Some(own_text.clone()),
            "replica {i}: {shown}"
        );
        assert_eq!(shown["id"], "BWBR0018451", "replica {i}");
        assert_eq!(shown["metadata"]["tool"], "bwb_read", "replica {i}");
        let forwarded = r
            .metrics()
            .await
            .contains("besluitbron_forwarded_calls_total{platform=\"bwb\"} 1");
        assert_eq!(
            forwarded,
            i != owner,
            "replica {i} forwarded its read iff it does not own bwb"
        );
    }
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_one_replica_owns_obv_and_the_others_forward_to_it() {
    let redis = RedisServer::start("own-one");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-one").await;
    let owner = one_owner(&rs).await;
    let lease: String = redis.command(&["GET", "besluitbron:lease:obv"]);
    assert!(
        lease.contains(rs[owner].node().url()),
        "the lease names the owner's URL: {lease}"
    );
    for (i, r) in rs.iter().enumerate() {
        let reply = search(r.url("/mcp/obv"), i, format!("eigenaar {i}")).await;
        structured(&reply);
    }
    for (i, r) in rs.iter().enumerate() {
        let m = r.metrics().await;
        let owned = format!(
            "besluitbron_platform_owned{{platform=\"obv\"}} {}",
            u8::from(i == owner)
        );
        assert!(m.contains(&owned), "replica {i}: {owned} in\n{m}");
        let forwarded = m.contains("besluitbron_forwarded_calls_total{platform=\"obv\"} 1");
        assert_eq!(
            forwarded,
            i != owner,
            "replica {i} forwarded its call iff it is not the owner"
        );
    }
    assert_eq!(rs[owner].sent.load(Ordering::SeqCst), 3, "the owner sent every call");
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    // A repeated question on a follower is the owner's buffer hit (the owner's buffer is
    // the shared tier); its latency is one forward.
    let follower = (owner + 1) % 3;
    let mut took = Vec::new();
    for _ in 0..50 {
        let asked = Instant::now();
        let reply = search(rs[follower].url("/mcp/obv"), 0, format!("eigenaar {owner}")).await;
        took.push(asked.elapsed());
        let text = reply.message.as_ref().expect("answer")["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(text.contains("from BesluitBron's buffer"), "{text}");
    }
    took.sort();
    eprintln!(
        "a forwarded buffer hit (debug build): p50 {:?}, p99 {:?}",
        took[took.len() / 2],
        took[took.len() * 99 / 100]
    );
    assert_eq!(rs[owner].sent.load(Ordering::SeqCst), 3, "repeats reach no platform");
    // Every other platform has one owner too (ownership is what makes one call per
    // question across replicas, limited or not).
    for p in [
        besluitbron_server::platforms::tk::PLATFORM,
        besluitbron_server::platforms::obv::PLATFORM,
    ] {
        assert!(
            eventually(Duration::from_secs(5), async || rs
                .iter()
                .filter(|r| r.node().owns_now(p))
                .count()
                == 1)
            .await,
            "{p} has one owner"
        );
    }
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_over_three_replicas_keeps_the_platforms_limit() {
    let redis = RedisServer::start("own-flood");
    let f = fakes().await;
    f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 600);
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-flood").await;
    let owner = one_owner(&rs).await;
    let before = f.obv.requests();
    let mut calls = Vec::new();
    for i in 0..60 {
        let url = rs[i % 3].url("/mcp/obv");
        calls.push(tokio::spawn(search(url, i % 20, format!("vloed {i}"))));
    }
    for c in calls {
        structured(&c.await.unwrap());
    }
    assert_eq!(
        f.obv.requests() - before,
        60,
        "every distinct search reached the platform once"
    );
    assert_eq!(f.obv.rate_limited(), 0, "the platform never had to refuse BesluitBron");
    assert_eq!(rs[owner].sent.load(Ordering::SeqCst), 60, "only the owner sent");
    assert_eq!(
        world.overlaps.load(Ordering::SeqCst),
        0,
        "no send while another replica admits"
    );
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_questions_on_different_replicas_reach_the_platform_once() {
    let redis = RedisServer::start("own-same");
    let f = fakes().await;
    f.obv.update(|c| c.latency = Duration::from_millis(300));
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-same").await;
    one_owner(&rs).await;
    let before = f.obv.requests();
    let mut calls = Vec::new();
    for i in 0..9 {
        calls.push(tokio::spawn(search(
            rs[i % 3].url("/mcp/obv"),
            i,
            "dezelfde vraag".to_owned(),
        )));
    }
    for c in calls {
        structured(&c.await.unwrap());
    }
    assert_eq!(
        f.obv.requests() - before,
        1,
        "nine identical questions, one platform call"
    );
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_internal_endpoint_wants_the_secret() {
    let redis = RedisServer::start("own-secret");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let r = Replica::start(&world, &f, &redis.url(), "own-secret").await;
    let url = format!("{}{}", r.node().url(), besluitbron_server::cluster::forward::CALL_PATH);
    let http = reqwest::Client::new();
    for auth in [
        None,
        Some("Bearer wrong-secret-of-the-cluster"),
        Some("Bearer a-test-secret-of-the-cluste"),
    ] {
        let mut req = http.post(&url).body("{}");
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        assert_eq!(req.send().await.unwrap().status().as_u16(), 401, "{auth:?}");
    }
    let ok = http
        .post(&url)
        .header("authorization", format!("Bearer {SECRET}"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(
        ok.status().as_u16(),
        400,
        "the secret lets a request in (this one is malformed)"
    );
    r.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_call_waits_fairly_reports_progress_and_is_withdrawn_when_cancelled() {
    // OpenBesluitvorming's own limit (60 a minute): the new owner starts with an empty
    // bucket, so every call waits its turn at one unit a second.
    let redis = RedisServer::start("own-fair");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let mut rs = Vec::new();
    for i in 0..3 {
        rs.push(Replica::start_platform_limit(&world, &f, &redis.url(), &format!("own-fair-{i}")).await);
    }
    let owner = one_owner(&rs).await;
    let (a, b) = ((owner + 1) % 3, (owner + 2) % 3);
    // A busy session floods through replica a.
    let busy = Arc::new(Mcp::initialize(rs[a].url("/mcp/obv")).await);
    let mut flood = Vec::new();
    for i in 0..12 {
        let busy = Arc::clone(&busy);
        flood.push(tokio::spawn(async move {
            busy.call_with_id(100 + i, "obv_search", json!({"query": format!("druk {i}")}))
                .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A late session on replica b is served within the single-process starvation bound,
    // and hears where it stands while it waits (progress relayed from the owner).
    let late = Mcp::initialize(rs[b].url("/mcp/obv")).await;
    let asked = Instant::now();
    let r = late
        .post(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "obv_search", "arguments": {"query": "laat"}, "_meta": {"progressToken": "p-late"}}}))
        .await;
    let waited = asked.elapsed();
    structured(&r);
    eprintln!("the late session waited {waited:?} behind a flood on another replica");
    assert!(waited < Duration::from_secs(3), "the late session waited {waited:?}");
    assert!(
        r.text.contains("notifications/progress") && r.text.contains("waiting for OpenBesluitvorming"),
        "progress from the owner reaches the assistant: {}",
        r.text
    );
    // A forwarded call the client cancels is withdrawn at the owner.
    let before = obv_lane(&rs[owner]).await;
    let waiting = {
        let busy = Arc::clone(&busy);
        tokio::spawn(async move {
            busy.call_with_id(900, "obv_search", json!({"query": "laat maar"}))
                .await
        })
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    while obv_lane(&rs[owner]).await.queued == before.queued && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        obv_lane(&rs[owner]).await.queued,
        before.queued + 1,
        "the forwarded call waits at the owner"
    );
    let n = busy
        .post(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 900}}))
        .await;
    assert!(n.status == 202 || n.status == 200, "{}", n.text);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut after = obv_lane(&rs[owner]).await;
    while after.cancelled_calls == before.cancelled_calls && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        after = obv_lane(&rs[owner]).await;
    }
    assert_eq!(
        after.cancelled_calls,
        before.cancelled_calls + 1,
        "the dropped forward was withdrawn at the owner"
    );
    waiting.abort();
    for t in flood {
        structured(&t.await.unwrap());
    }
    assert_eq!(f.obv.rate_limited(), 0);
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    rs[owner].kill();
    for (i, r) in rs.into_iter().enumerate() {
        if i != owner {
            r.stop().await;
        }
    }
}

/// Late sessions across replicas wait behind no flood sent as the SDKs send it. Six legacy
/// sessions each send 40 distinct searches at once over one HTTP client (a pool of
/// connections), spread over the three replicas (session i on replica i mod 3); the owner
/// is new (its bucket starts empty, a unit a second), so the flood waits there from the
/// start. Then five late sessions, one after another, each a new legacy session on a
/// follower asking one search. Counted from the owner's admissions, for each late call:
/// no flood call is admitted while it waits in the owner's fair queue (the order the
/// owner decides), and at most one between the moment it is sent and its admission (a
/// unit the owner gave while the late call was still on its way, which one process has
/// too, over a shorter way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_sessions_on_a_follower_go_before_a_flood_sent_as_the_sdks_send_it() {
    let redis = RedisServer::start("own-late");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let mut rs = Vec::new();
    for i in 0..3 {
        rs.push(Replica::start_platform_limit(&world, &f, &redis.url(), &format!("own-late-{i}")).await);
    }
    let owner = one_owner(&rs).await;
    let mut flood = tokio::task::JoinSet::new();
    for s in 0..6 {
        let client = Arc::new(Mcp::initialize(rs[s % 3].url("/mcp/obv")).await);
        for j in 0..40 {
            let client = Arc::clone(&client);
            flood.spawn(async move {
                client
                    .call_with_id(100 + j, "obv_search", json!({"query": format!("druk{s}x{j}")}))
                    .await
            });
        }
    }
    assert!(
        eventually(Duration::from_secs(30), async || world.admitted.lock().unwrap().len()
            >= 3)
        .await,
        "the owner admits the flood"
    );
    let follower = (owner + 1) % 3;
    for n in 0..5 {
        let mut late = Mcp::initialize(rs[follower].url("/mcp/obv")).await;
        let late_key = format!("session:{}", late.session.clone().expect("a legacy session"));
        let before = world.admitted.lock().unwrap().len();
        let reply = late.call("obv_search", json!({"query": format!("laat{n}")})).await;
        structured(&reply);
        let admitted = world.admitted.lock().unwrap().clone();
        let at = admitted
            .iter()
            .position(|a| a.session == late_key)
            .expect("the late call was admitted at the owner");
        assert!(at >= before, "late session {n} went after it was sent");
        let mine = &admitted[at];
        // Admitted after the late call reached the owner's queue, and before it.
        let passed_over: Vec<&Admitted> = admitted[before..at]
            .iter()
            .filter(|a| a.admitted_at > mine.queued_at)
            .collect();
        assert!(
            passed_over.is_empty(),
            "late session {n}: flood calls admitted while it waited in the owner's queue: {passed_over:?}"
        );
        let on_its_way = &admitted[before..at];
        assert!(
            on_its_way.len() <= 1,
            "late session {n}: flood calls admitted after it was sent: {on_its_way:?}"
        );
    }
    assert_eq!(owners(&rs), [owner], "the owner stayed the same");
    assert!(
        world.admitted.lock().unwrap().len() < 240,
        "the flood still waits: the late calls did not come after it"
    );
    flood.abort_all();
    for r in rs {
        r.stop().await;
    }
}
