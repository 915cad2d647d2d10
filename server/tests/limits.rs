//! Client limits (R-I1 to R-I3) and fair waiting at a platform (R-L3, R-L9) through the
//! real server.

use crate::support;

use std::time::{Duration, Instant};

use besluitbron_core::limits::RateLimit;
use besluitbron_fakes::ObvSettings;
use serde_json::json;
use support::{Mcp, Server, config, fakes, structured, temp_dir};

fn roomy() -> RateLimit {
    RateLimit {
        requests_per_minute: 60_000,
        burst: 10_000,
    }
}

/// A tools/list from a client at `address` (the test connects through a "proxy" the
/// server trusts, 127.0.0.1, so each address is its own client) without a session.
async fn list_from(c: &Mcp, address: &str) -> support::Reply {
    let mut c2 = Mcp::new(c.url.clone());
    c2.session = c.session.clone();
    c2.extra_headers = vec![("x-forwarded-for".to_owned(), address.to_owned())];
    c2.post(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await
}

fn retry_after(r: &support::Reply) -> u64 {
    assert_eq!(r.status, 429, "{}", r.text);
    r.headers
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After")
}

/// The running server's OpenBesluitvorming fair queue, with the path's invariants checked.
async fn obv_lane(server: &Server) -> besluitbron_server::driver::LaneSnapshot {
    let snap = server
        .state
        .platforms()
        .get(besluitbron_server::platforms::obv::PLATFORM)
        .expect("obv has a task")
        .snapshot(true)
        .await
        .expect("running");
    assert_eq!(snap.invariants, Ok(()), "the path's invariants hold");
    snap.lanes[0].clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_layer_answers_429_with_an_honest_retry_after() {
    let f = fakes().await;
    for layer in ["session", "connector", "process"] {
        let mut cfg = config(&f, &temp_dir("limits"));
        cfg.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
        cfg.mcp_rate_limit.process = roomy();
        cfg.mcp_rate_limit.per_connector = roomy();
        cfg.mcp_rate_limit.per_address = roomy();
        cfg.mcp_rate_limit.per_session = roomy();
        let tight = RateLimit {
            requests_per_minute: 60,
            burst: 3,
        };
        match layer {
            "session" => cfg.mcp_rate_limit.per_session = tight,
            "connector" => cfg.mcp_rate_limit.per_connector = tight,
            _ => cfg.mcp_rate_limit.process = tight,
        }
        let server = Server::start(cfg).await;
        let c = Mcp::new(server.url("/mcp/tk"));
        // Three different clients for the shared layers, one client for the session layer.
        let who = |i: usize| {
            if layer == "session" {
                "192.0.2.1".to_owned()
            } else {
                format!("192.0.2.{}", i + 1)
            }
        };
        for i in 0..3 {
            assert_ne!(
                list_from(&c, &who(i)).await.status,
                429,
                "{layer}: request {i} is within the burst"
            );
        }
        let refused = list_from(&c, &who(3)).await;
        let wait = retry_after(&refused);
        assert_eq!(wait, 1, "{layer}: one request per second refills in 1 s");
        let body = refused.message.as_ref().unwrap();
        assert!(
            body["error"]["message"].as_str().unwrap().contains(layer),
            "{layer}: {body}"
        );
        tokio::time::sleep(Duration::from_secs(wait)).await;
        assert_ne!(
            list_from(&c, &who(3)).await.status,
            429,
            "{layer}: waiting Retry-After is enough"
        );
        let metrics = reqwest::get(server.url("/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            metrics.contains(&format!("besluitbron_client_throttled_total{{layer=\"{layer}\"}} 1")),
            "{metrics}"
        );
        server.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_on_one_connector_or_from_one_session_leaves_the_others_alone() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("flood"));
    cfg.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    cfg.mcp_rate_limit.process = roomy();
    cfg.mcp_rate_limit.per_connector = RateLimit {
        requests_per_minute: 600,
        burst: 40,
    };
    cfg.mcp_rate_limit.per_session = RateLimit {
        requests_per_minute: 60,
        burst: 5,
    };
    let server = Server::start(cfg).await;
    let obv = Mcp::new(server.url("/mcp/obv"));
    let tk = Mcp::new(server.url("/mcp/tk"));

    // One client floods: its own limit stops it; another client is unaffected.
    let mut refused = 0;
    for _ in 0..20 {
        if list_from(&obv, "198.51.100.7").await.status == 429 {
            refused += 1;
        }
    }
    assert_eq!(refused, 15, "five pass, the rest are refused");
    assert_ne!(list_from(&obv, "198.51.100.8").await.status, 429);

    // Many clients flood one connector: it is refused there, the other connector answers.
    let mut connector_refusals = 0;
    for i in 0..60 {
        let r = list_from(&obv, &format!("203.0.113.{i}")).await;
        if r.status == 429 && r.text.contains("connector") {
            connector_refusals += 1;
        }
    }
    assert!(connector_refusals > 0, "the obv connector's own limit was reached");
    assert_ne!(list_from(&tk, "203.0.113.200").await.status, 429, "tk is unaffected");
    server.stop().await;
}

/// Issue "Hardening…" item 4: eight sessions from one address used up `/mcp/obv`'s
/// connector limit, and a client elsewhere got 429. The address layer holds all sessions
/// of one address together.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_many_sessions_of_one_address_leave_the_connector_to_others() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("address"));
    cfg.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    cfg.mcp_rate_limit.process = roomy();
    cfg.mcp_rate_limit.per_connector = RateLimit {
        requests_per_minute: 60,
        burst: 40,
    };
    cfg.mcp_rate_limit.per_session = roomy();
    cfg.mcp_rate_limit.per_address = RateLimit {
        requests_per_minute: 60,
        burst: 30,
    };
    let server = Server::start(cfg).await;
    let url = server.url("/mcp/obv");
    let mut sessions = Vec::new();
    for _ in 0..8 {
        sessions.push(Mcp::initialize(url.clone()).await);
    }
    let mut address_refusals = 0;
    for round in 0..10 {
        for s in &sessions {
            let r = s
                .post(json!({"jsonrpc": "2.0", "id": 10 + round, "method": "tools/list"}))
                .await;
            if r.status == 429 {
                assert!(r.text.contains("address"), "{}", r.text);
                address_refusals += 1;
            }
        }
    }
    assert!(address_refusals > 0, "the address's own limit held its sessions");
    assert_ne!(
        list_from(&sessions[0], "192.0.2.9").await.status,
        429,
        "a client elsewhere still reaches the connector"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_session_is_not_starved_behind_a_flooding_one() {
    // The seed's measurement, live and shortened: `busy` fires 75 searches at once at
    // OpenBesluitvorming (60 units per minute, one per second refill); a second session's
    // one search half a second later completes within about a second, not behind all of
    // busy's 15 waiting searches. The platform itself never has to refuse anything.
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("starvation"))).await;
    let url = server.url("/mcp/obv");
    let busy = Mcp::initialize(url.clone()).await;
    let busy = std::sync::Arc::new(busy);
    let mut flood = Vec::new();
    for i in 0..75 {
        let busy = std::sync::Arc::clone(&busy);
        flood.push(tokio::spawn(async move {
            busy.call_with_id(100 + i, "obv_search", json!({"query": format!("onderwerp{i}")}))
                .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let mut second = Mcp::initialize(url).await;
    let asked = Instant::now();
    let answer = second.call("obv_search", json!({"query": "tweede"})).await;
    let waited = asked.elapsed();
    structured(&answer);
    assert!(waited < Duration::from_secs(3), "the second session waited {waited:?}");
    let mut done = 0;
    for task in flood {
        let r = task.await.unwrap();
        structured(&r);
        done += 1;
    }
    assert_eq!(done, 75);
    assert_eq!(
        f.obv.rate_limited(),
        0,
        "BesluitBron kept to the platform's limit: no 429 from the platform"
    );
    server.stop().await;
}

/// Empties OpenBesluitvorming's bucket with 60 different searches (60 units).
async fn drain(c: &Mcp, round: i64) {
    for i in 0..60 {
        let query = format!("vul{round}x{i}");
        structured(
            &c.call_with_id(10_000 * (round + 1) + i, "obv_search", json!({"query": query}))
                .await,
        );
    }
}

/// Waits until obv's lane meets `cond` (polling its snapshot), and returns that snapshot;
/// panics naming `what` when it does not within 30 s.
async fn until_lane(
    server: &Server,
    what: &str,
    cond: impl Fn(&besluitbron_server::driver::LaneSnapshot) -> bool,
) -> besluitbron_server::driver::LaneSnapshot {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let lane = obv_lane(server).await;
        if cond(&lane) {
            return lane;
        }
        assert!(Instant::now() < deadline, "obv's lane never got {what}: {lane:?}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Sends `busy`'s calls one by one until `n` of them wait in obv's queue: whatever
/// refilled while the bucket was drained is used up first, so the next call waits.
async fn queue_behind(
    server: &Server,
    busy: &std::sync::Arc<Mcp>,
    n: usize,
    first_id: i64,
    word: &str,
) -> Vec<tokio::task::JoinHandle<support::Reply>> {
    let mut ahead = Vec::new();
    for i in 0.. {
        let before = obv_lane(server).await;
        if before.queued >= n {
            break;
        }
        let busy = std::sync::Arc::clone(busy);
        let query = format!("{word}{i}");
        ahead.push(tokio::spawn(async move {
            busy.call_with_id(first_id + i, "obv_search", json!({"query": query}))
                .await
        }));
        until_lane(server, "the call admitted or queued", |l| {
            l.admitted_calls > before.admitted_calls || l.queued > before.queued
        })
        .await;
    }
    ahead
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_waiting_call_reports_progress_and_a_cancelled_one_is_withdrawn() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("progress"))).await;
    let url = server.url("/mcp/obv");
    let busy = std::sync::Arc::new(Mcp::initialize(url.clone()).await);
    drain(&busy, 0).await;
    // Three more of busy's calls wait ahead, so the next call waits about four seconds.
    let ahead = queue_behind(&server, &busy, 3, 20_000, "voor").await;
    let r = busy
        .post(
            json!({"jsonrpc": "2.0", "id": 30_000, "method": "tools/call", "params": {
            "name": "obv_search", "arguments": {"query": "voortgang"}, "_meta": {"progressToken": "p-1"}}}),
        )
        .await;
    structured(&r);
    let progress: Vec<&str> = r
        .text
        .lines()
        .filter(|l| l.contains("notifications/progress"))
        .collect();
    assert!(!progress.is_empty(), "progress while waiting: {}", r.text);
    assert!(
        progress[0].contains("waiting for OpenBesluitvorming"),
        "{}",
        progress[0]
    );
    for a in ahead {
        structured(&a.await.unwrap());
    }
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"),
        "a session's answer is streamed"
    );

    a_stateless_call_that_waits_streams_its_progress(&server, &url).await;
    a_cancelled_call_is_withdrawn(&server, &busy).await;
    server.stop().await;
}

/// A stateless (2026-07-28) call that waits streams its progress too, although a
/// stateless answer is otherwise plain JSON. Its own earlier calls wait ahead of it
/// (a stateless client is one session per address, FIFO within it), so it waits
/// seconds, past the first progress tick, whatever the other sessions do.
async fn a_stateless_call_that_waits_streams_its_progress(server: &Server, url: &str) {
    let before = obv_lane(server).await;
    let mut ahead = Vec::new();
    for i in 0..3 {
        let earlier = Mcp::modern(url.to_owned());
        ahead.push(tokio::spawn(async move {
            earlier
                .call_with_id(21_000 + i, "obv_search", json!({"query": format!("nog{i}")}))
                .await
        }));
    }
    let sent = before.admitted_calls + before.queued as u64 + 3;
    until_lane(server, "the three earlier calls in", |l| {
        l.admitted_calls + l.queued as u64 >= sent
    })
    .await;
    let modern = Mcp::modern(url.to_owned());
    let r = modern
        .post(
            json!({"jsonrpc": "2.0", "id": 31_000, "method": "tools/call", "params": {
            "name": "obv_search", "arguments": {"query": "zonder sessie"}, "_meta": {"progressToken": "p-2"}}}),
        )
        .await;
    structured(&r);
    assert!(
        r.headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/event-stream"),
        "progress needs a stream: {:?}",
        r.headers
    );
    assert!(
        r.text.contains("notifications/progress") && r.text.contains("waiting for OpenBesluitvorming"),
        "{}",
        r.text
    );
    for a in ahead {
        structured(&a.await.unwrap());
    }
    let quick = modern
        .call_with_id(31_001, "obv_search", json!({"query": "zonder sessie"}))
        .await;
    structured(&quick);
    assert_eq!(
        quick.headers["content-type"], "application/json",
        "an answer with nothing before it is plain JSON"
    );
}

/// A call the client cancels while it waits is withdrawn from the queue (the bucket
/// is empty again: the calls above just used what had refilled).
async fn a_cancelled_call_is_withdrawn(server: &Server, busy: &std::sync::Arc<Mcp>) {
    // Two of busy's calls wait ahead (whatever refilled is used first), so the call to
    // cancel waits behind them, seconds from its turn.
    let base = obv_lane(server).await;
    let filling = queue_behind(server, busy, 2, 41_000, "vul").await;
    let sent = base.admitted_calls + filling.len() as u64 + 1;
    let waiting = {
        let busy = std::sync::Arc::clone(busy);
        tokio::spawn(async move {
            busy.call_with_id(40_000, "obv_search", json!({"query": "laat maar"}))
                .await
        })
    };
    until_lane(server, "the call to cancel queued", |l| {
        l.admitted_calls + l.queued as u64 == sent
    })
    .await;
    let n = busy
        .post(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 40_000}}))
        .await;
    assert!(n.status == 202 || n.status == 200, "{}", n.text);
    let after = until_lane(server, "the call withdrawn", |l| {
        l.cancelled_calls > base.cancelled_calls
    })
    .await;
    assert_eq!(after.cancelled_calls, base.cancelled_calls + 1);
    waiting.abort();
    for f in filling {
        structured(&f.await.unwrap());
    }
    let after = until_lane(server, "an empty queue", |l| l.queued == 0).await;
    assert_eq!(after.admitted_calls, sent - 1, "the withdrawn call costs nothing");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_platform_refusal_queues_the_call_once_more_instead_of_failing() {
    // Another client behind the same address empties OpenBesluitvorming's bucket, unknown
    // to BesluitBron. Its next search meets a 429 with Retry-After; the call waits that
    // out in BesluitBron's queue and then succeeds, instead of returning the refusal.
    let f = fakes().await;
    // A platform limit of 6 per minute (one unit per 10 s): the bucket stays empty long
    // after the other client drained it, however slow the machine is.
    f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 6);
    let server = Server::start(config(&f, &temp_dir("refusal"))).await;
    let other = reqwest::Client::new();
    for _ in 0..6 {
        let r = other
            .get(format!("{}/api/status", f.obv.base_url()))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 200, "the other client's calls fit the platform's bucket");
    }
    let mut c = Mcp::initialize(server.url("/mcp/obv")).await;
    let asked = Instant::now();
    let answer = c.call("obv_search", json!({"query": "tweede poging"})).await;
    let waited = asked.elapsed();
    structured(&answer);
    assert_eq!(f.obv.rate_limited(), 1, "refused once, then admitted");
    assert!(
        waited >= Duration::from_millis(500),
        "the call waited for the platform's Retry-After: {waited:?}"
    );
    // Admitted twice, paid once: the refused admission's charge went back to the session.
    let stats = obv_lane(&server).await;
    assert_eq!((stats.admitted_calls, stats.refunded_calls), (2, 1));
    server.stop().await;
}

/// The live defect: a stateless (2026-07-28) client that puts a fresh made-up
/// `Mcp-Session-Id` on every request was a new session each time, so it slipped past the
/// per-session limit (and held the process limit for everyone). Who a request is, is now
/// decided once from what exists: such requests are their client address.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_a_made_up_session_id_is_the_client_address() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("made-up"));
    cfg.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    cfg.mcp_rate_limit.process = roomy();
    cfg.mcp_rate_limit.per_connector = roomy();
    // One request a minute after a burst of five: nothing refills during the test.
    cfg.mcp_rate_limit.per_session = RateLimit {
        requests_per_minute: 1,
        burst: 5,
    };
    let server = Server::start(cfg).await;
    for era in ["stateless", "session"] {
        let mut passed = 0;
        for i in 0..20 {
            let mut c = if era == "stateless" {
                Mcp::modern(server.url("/mcp/tk"))
            } else {
                Mcp::new(server.url("/mcp/tk"))
            };
            c.session = Some(format!("made-up-{era}-{i}"));
            // Each era is its own client address.
            let address = if era == "stateless" { "192.0.2.10" } else { "192.0.2.11" };
            c.extra_headers = vec![("x-forwarded-for".to_owned(), address.to_owned())];
            let r = c.post(json!({"jsonrpc": "2.0", "id": i, "method": "tools/list"})).await;
            if r.status != 429 {
                passed += 1;
            }
        }
        assert_eq!(
            passed, 5,
            "{era}: twenty requests with twenty made-up session ids are one client: five pass"
        );
    }
    server.stop().await;
}

/// R-L8, the live defect: a 5xx was retried inside one admission, so OpenBesluitvorming
/// counted requests BesluitBron never charged (a burst against a platform failing every
/// second request drew 429s). Every attempt that reaches the platform is now an
/// admission of its fair queue.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_every_request_that_reaches_the_platform_was_admitted() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("counted"));
    cfg.mcp_rate_limit.process = roomy();
    cfg.mcp_rate_limit.per_connector = roomy();
    cfg.mcp_rate_limit.per_address = roomy();
    cfg.mcp_rate_limit.per_session = roomy();
    let server = Server::start(cfg).await;
    f.obv.set_fail_every(Some(2));
    let before = f.obv.requests();
    let calls: Vec<_> = (0..20)
        .map(|i| {
            let mut c = Mcp::modern(server.url("/mcp/obv"));
            tokio::spawn(async move { c.call("obv_search", json!({"query": format!("vraag {i}")})).await })
        })
        .collect();
    for c in calls {
        c.await.unwrap();
    }
    let reached = f.obv.requests() - before;
    let lane = obv_lane(&server).await;
    assert!(f.obv.failures_injected() > 0, "the platform failed some requests");
    assert_eq!(
        lane.admitted_calls, reached,
        "every request that reached the platform, retries included, was admitted and charged"
    );
    assert_eq!(f.obv.rate_limited(), 0, "the platform never had to refuse BesluitBron");
    server.stop().await;
}
