//! Retries and identical requests: a retried request id gets the first result (a reused
//! one is refused), a retry sent while the first runs waits for it, only what is safe to
//! fold makes two requests one, the metrics show a flight and its waiters, and a reused id
//! or key never crosses sessions or addresses.

use crate::support;

use std::time::Duration;

use serde_json::json;
use support::{Mcp, Server, config, fakes, structured, temp_dir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_request_id_gets_the_first_result_and_a_reused_id_is_refused() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("replay"))).await;
    let c = Mcp::initialize(server.url("/mcp/obv")).await;
    let first = c
        .call_with_id(5, "obv_search", json!({"query": "begroting", "limit": 3}))
        .await;
    let first_result = first.message.as_ref().unwrap()["result"].clone();
    let first = structured(&first);
    let (replays_before, _) = server.state.replay_counts();
    let asked = f.obv.requests();
    let retry = c
        .call_with_id(5, "obv_search", json!({"limit": 3, "query": "begroting"}))
        .await;
    assert_eq!(structured(&retry), first);
    // The whole first result, its text too: it came from the platform, and the retry
    // says so as well (not "from the buffer", which a fresh run would say now).
    assert_eq!(retry.message.as_ref().unwrap()["result"], first_result);
    assert!(!first_result.to_string().contains("buffer"), "{first_result}");
    assert_eq!(f.obv.requests(), asked, "the retry did not reach the platform");
    assert_eq!(
        server.state.replay_counts().0,
        replays_before + 1,
        "answered as a replay"
    );

    let reused = c.call_with_id(5, "obv_search", json!({"query": "andere vraag"})).await;
    let error = &reused.message.as_ref().unwrap()["error"];
    assert_eq!(error["code"], -32600, "{}", reused.text);
    assert!(
        error["message"].as_str().unwrap().contains("different request"),
        "{error}"
    );

    // A failure is not replayed: the key is released and the retry really runs.
    f.obv.set_garbage(true);
    let failed = c.call_with_id(7, "obv_search", json!({"query": "herhaal"})).await;
    support::tool_error_text(&failed);
    f.obv.set_garbage(false);
    let again = c.call_with_id(7, "obv_search", json!({"query": "herhaal"})).await;
    structured(&again);

    // Without a session (stateless clients) the id means nothing: never merged.
    let stateless = Mcp::new(server.url("/mcp/obv"));
    let a = stateless.call_with_id(5, "obv_sources", json!({})).await;
    assert_eq!(
        a.status, 400,
        "a legacy request without a session is refused by the protocol: {}",
        a.text
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_sent_while_the_first_runs_waits_for_it_and_gets_its_result() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("replay-wait"))).await;
    // Two requests with one Idempotency-Key: a client retrying over a new connection.
    let client = || {
        let mut c = Mcp::modern(server.url("/mcp/obv"));
        c.extra_headers
            .push(("idempotency-key".into(), "zoek-begroting-1".into()));
        c
    };
    f.obv.set_latency(std::time::Duration::from_millis(400));
    let asked = f.obv.requests();
    let (replays_before, _) = server.state.replay_counts();
    let first = {
        let c = client();
        tokio::spawn(async move { c.call_with_id(1, "obv_search", json!({"query": "begroting"})).await })
    };
    // The first is at the platform: the retry comes now, while it runs.
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while f.obv.requests() == asked {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the first call reached the platform"
        );
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    let retry = client()
        .call_with_id(2, "obv_search", json!({"query": "begroting"}))
        .await;
    let first = first.await.expect("the first call");
    assert_eq!(structured(&retry), structured(&first));
    // The first's whole result, its text too (a call that only shared the first's
    // platform request would say so).
    let text = |r: &support::Reply| r.message.as_ref().unwrap()["result"]["content"][0]["text"].clone();
    assert_eq!(text(&retry), text(&first));
    assert_eq!(f.obv.requests(), asked + 1, "one request reached the platform");
    assert_eq!(
        server.state.replay_counts().0,
        replays_before + 1,
        "the retry is a replay"
    );
    f.obv.set_latency(std::time::Duration::ZERO);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_what_is_safe_to_fold_makes_two_requests_one() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("fold"))).await;
    let mut c = Mcp::initialize(server.url("/mcp/obv")).await;
    let before = f.obv.requests();
    let a = structured(&c.call("obv_search", json!({"query": "woningbouw  Utrecht"})).await);
    let b = structured(&c.call("obv_search", json!({"query": " woningbouw Utrecht "})).await);
    assert_eq!(a, b);
    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(
        f.obv.requests(),
        before + 1,
        "extra whitespace is the same request: {metrics}"
    );
    // Newest first, the platform's case folding and ANDed words make these one request.
    structured(&c.call("obv_search", json!({"query": "Utrecht, Woningbouw"})).await);
    assert_eq!(
        f.obv.requests(),
        before + 1,
        "case, punctuation and order are folded by date"
    );
    // By relevance a word's weight may depend on how it is asked: only whitespace folds.
    structured(
        &c.call(
            "obv_search",
            json!({"query": "woningbouw  Utrecht", "sort": "relevance"}),
        )
        .await,
    );
    structured(
        &c.call(
            "obv_search",
            json!({"query": "Woningbouw Utrecht", "sort": "relevance"}),
        )
        .await,
    );
    assert_eq!(f.obv.requests(), before + 3, "letter case is not folded by relevance");
    structured(&c.call("obv_search", json!({"query": "\"Woningbouw Utrecht\""})).await);
    assert_eq!(f.obv.requests(), before + 4, "a phrase is another question");
    server.stop().await;
}

/// The value of the metric line that starts with `series` (name and labels), if any.
fn metric(text: &str, series: &str) -> Option<f64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series))
        .and_then(|rest| rest.trim().parse().ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_show_a_flight_and_its_waiters_while_at_the_platform_and_none_after() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("flight-gauges"))).await;
    let scrape = || async {
        reqwest::get(server.url("/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap()
    };
    let gauges = |text: &str| {
        [
            "besluitbron_platform_in_flight{platform=\"obv\"}",
            "besluitbron_platform_flight_waiters{platform=\"obv\"}",
        ]
        .map(|series| metric(text, series))
    };
    assert_eq!(gauges(&scrape().await), [Some(0.0), Some(0.0)], "idle at the start");
    f.obv.set_latency(std::time::Duration::from_millis(600));
    let asked = f.obv.requests();
    let calls: Vec<_> = (0..2)
        .map(|_| {
            let c = Mcp::modern(server.url("/mcp/obv"));
            tokio::spawn(async move { c.call_with_id(1, "obv_search", json!({"query": "haven"})).await })
        })
        .collect();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let text = scrape().await;
        if gauges(&text) == [Some(1.0), Some(2.0)] {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "never one flight with two waiters: {:?}",
            gauges(&text)
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for call in calls {
        structured(&call.await.unwrap());
    }
    assert_eq!(f.obv.requests(), asked + 1, "the two calls were one flight");
    let text = scrape().await;
    assert_eq!(gauges(&text), [Some(0.0), Some(0.0)], "nothing left behind");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    while metric(&scrape().await, "besluitbron_buffer_pending_writes{platform=\"obv\"}") != Some(0.0) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the buffer write never finished"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    f.obv.set_latency(std::time::Duration::ZERO);
    server.stop().await;
}

/// A JSON-RPC id or an `Idempotency-Key` reused by another
/// session or another client address is that caller's own request: it runs (or is
/// refused for its own reasons) and never gets the first caller's result, while the
/// first caller's own retry still does. Each first call is held at the platform while the
/// other caller's comes, so a cross-caller replay would have something to wait for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_a_reused_id_or_key_never_crosses_sessions_or_addresses() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("replay-cross"));
    cfg.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    let server = Server::start(cfg).await;
    let query = |r: &support::Reply| structured(r)["searched"]["query"].clone();
    let key = ("idempotency-key".to_owned(), "gedeelde-sleutel".to_owned());

    // Sessions: A's id 5 and key, then B (another session, another address) with both.
    let mut a = Mcp::initialize(server.url("/mcp/obv")).await;
    a.extra_headers.push(key.clone());
    let mut b = Mcp::initialize(server.url("/mcp/obv")).await;
    b.extra_headers.push(key.clone());
    b.extra_headers.push(("x-forwarded-for".into(), "192.0.2.20".into()));
    f.obv.set_latency(Duration::from_millis(400));
    let asked = f.obv.requests();
    let first = tokio::spawn(async move {
        let r = a.call_with_id(5, "obv_search", json!({"query": "woningbouw"})).await;
        (a, r)
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while f.obv.requests() == asked {
        assert!(tokio::time::Instant::now() < deadline, "A's call reached the platform");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (replays, _) = server.state.replay_counts();
    let other = b.call_with_id(5, "obv_search", json!({"query": "stikstof"})).await;
    assert_eq!(query(&other), json!("stikstof"), "B's own search: {}", other.text);
    let mut c = Mcp::initialize(server.url("/mcp/obv")).await;
    c.extra_headers.push(key.clone());
    let same = c.call_with_id(5, "obv_search", json!({"query": "woningbouw"})).await;
    let (a, first) = first.await.expect("A's call");
    assert_eq!(query(&first), json!("woningbouw"));
    assert_eq!(server.state.replay_counts().0, replays, "B got nothing of A's");
    // C asked A's question under A's id and key: its own call (it shares the platform's
    // answer through the flight or the buffer, never A's kept result).
    assert_eq!(query(&same), json!("woningbouw"));
    // A's own retry is a replay: the mechanism works, it only never crosses callers.
    let retry = a.call_with_id(5, "obv_search", json!({"query": "woningbouw"})).await;
    assert_eq!(
        retry.message.as_ref().unwrap()["result"],
        first.message.as_ref().unwrap()["result"]
    );
    assert_eq!(server.state.replay_counts().0, replays + 1, "A's retry is a replay");

    // Stateless clients: one key from two addresses.
    let stateless = |address: &str| {
        let mut c = Mcp::modern(server.url("/mcp/obv"));
        c.extra_headers
            .push(("idempotency-key".into(), "stateless-sleutel".into()));
        c.extra_headers.push(("x-forwarded-for".into(), address.into()));
        c
    };
    let asked = f.obv.requests();
    let first = {
        let c = stateless("192.0.2.30");
        tokio::spawn(async move { c.call_with_id(1, "obv_search", json!({"query": "begroting"})).await })
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while f.obv.requests() == asked {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the first call reached the platform"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (replays, _) = server.state.replay_counts();
    let other = stateless("192.0.2.31")
        .call_with_id(1, "obv_search", json!({"query": "parkeren"}))
        .await;
    assert_eq!(query(&other), json!("parkeren"), "{}", other.text);
    let first = first.await.expect("the first call");
    assert_eq!(query(&first), json!("begroting"));
    assert_eq!(server.state.replay_counts().0, replays, "no replay across addresses");
    // The same address's retry is one.
    let retry = stateless("192.0.2.30")
        .call_with_id(2, "obv_search", json!({"query": "begroting"}))
        .await;
    assert_eq!(query(&retry), json!("begroting"));
    assert_eq!(server.state.replay_counts().0, replays + 1);
    // A session and a stateless client of one address with one key: apart as well.
    let mut s = Mcp::initialize(server.url("/mcp/obv")).await;
    s.extra_headers
        .push(("idempotency-key".into(), "stateless-sleutel".into()));
    s.extra_headers.push(("x-forwarded-for".into(), "192.0.2.30".into()));
    let mixed = s.call_with_id(1, "obv_search", json!({"query": "fietspad"})).await;
    assert_eq!(query(&mixed), json!("fietspad"), "{}", mixed.text);
    assert_eq!(server.state.replay_counts().0, replays + 1);
    f.obv.set_latency(Duration::ZERO);
    server.stop().await;
}
