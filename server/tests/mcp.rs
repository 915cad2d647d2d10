//! The MCP server end to end over loopback: the fake platforms, the real server, a
//! hand-rolled JSON-RPC client.

use crate::support;

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use besluitbron_server::app::App;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, search_groups, structured, temp_dir};
use tower::ServiceExt;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_address_lists_its_connectors_tools_with_descriptions_and_annotations() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("list"))).await;
    let per_connector: Vec<(&str, Vec<&str>)> = vec![
        (
            "/mcp/obv",
            vec!["obv_document", "obv_search", "obv_sources", "obv_status"],
        ),
        (
            "/mcp/tk",
            vec![
                "tk_committees",
                "tk_debate",
                "tk_debates",
                "tk_document",
                "tk_document_text",
                "tk_factions",
                "tk_search",
                "tk_votes",
            ],
        ),
        (
            "/mcp/rechtspraak",
            vec![
                "rechtspraak_areas",
                "rechtspraak_courts",
                "rechtspraak_procedures",
                "rechtspraak_ruling",
                "rechtspraak_search",
            ],
        ),
        (
            "/mcp/opentk",
            vec!["opentk_activity", "opentk_document", "opentk_search", "opentk_status"],
        ),
        ("/mcp/ori", vec!["ori_document", "ori_search", "ori_sources"]),
        ("/mcp/ob", vec!["ob_document", "ob_search"]),
        ("/mcp/bwb", vec!["bwb_read", "bwb_search"]),
        ("/mcp/cvdr", vec!["cvdr_read", "cvdr_search"]),
    ];
    // `/mcp` lists every connector's tools but those `search` and `fetch` stand in for
    // (`surface.rs` holds the rule), and `search` and `fetch`, in name order.
    let stood_in = [
        "bwb_search",
        "cvdr_search",
        "ob_document",
        "ob_search",
        "obv_document",
        "obv_search",
        "opentk_search",
        "ori_document",
        "rechtspraak_ruling",
        "tk_document_text",
        "tk_search",
    ];
    let mut all: Vec<&str> = per_connector
        .iter()
        .flat_map(|(_, t)| t.iter().copied())
        .filter(|t| !stood_in.contains(t))
        .collect();
    all.push("search");
    all.push("fetch");
    all.sort_unstable();
    for (path, expected) in per_connector.into_iter().chain([("/mcp", all)]) {
        let mut c = Mcp::initialize(server.url(path)).await;
        let tools = c.list_tools().await;
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, expected, "{path}");
        for t in &tools {
            assert!(t["description"].as_str().is_some_and(|d| d.len() > 80), "{t}");
            assert_eq!(t["annotations"]["readOnlyHint"], Value::Bool(true));
            assert_eq!(t["annotations"]["openWorldHint"], Value::Bool(true));
            assert_eq!(t["inputSchema"]["type"], "object");
        }
    }
    server.stop().await;
}

/// A buffer hit's finished answer is kept and handed out again, but only to a call that
/// asked the same: another page or filter of the same kept list is rendered for itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kept_answer_is_handed_out_again_only_to_the_same_question() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("shown"))).await;
    let c = Mcp::modern(server.url("/mcp/obv"));
    let first = structured(&c.call_with_id(1, "obv_sources", json!({})).await);
    let before = f.obv.requests();
    // The first buffer hit keeps its result; the second is that result again.
    let hit = structured(&c.call_with_id(2, "obv_sources", json!({})).await);
    assert_eq!(structured(&c.call_with_id(3, "obv_sources", json!({})).await), hit);
    assert_eq!(hit["results"], first["results"]);
    let next = structured(
        &c.call_with_id(4, "obv_sources", json!({"offset": 10, "limit": 5}))
            .await,
    );
    assert_eq!(next["results"].as_array().map(Vec::len), Some(5), "{next}");
    assert_eq!(
        next["results"][0], first["results"][10],
        "the page asked for, not the kept one"
    );
    let utrecht = structured(&c.call_with_id(5, "obv_sources", json!({"name": "utrecht"})).await);
    let names = utrecht["results"].as_array().expect("results");
    assert!(!names.is_empty() && names.len() < 50, "{utrecht}");
    for s in names {
        let text = s.to_string().to_lowercase();
        assert!(text.contains("utrecht"), "{s}");
    }
    // Searches alike: two different questions on one kept answer each get their own.
    let a = structured(
        &c.call_with_id(6, "obv_search", json!({"query": "begroting", "limit": 3}))
            .await,
    );
    let a_hit = structured(
        &c.call_with_id(7, "obv_search", json!({"query": "begroting", "limit": 3}))
            .await,
    );
    assert_eq!(a_hit["searched"], a["searched"]);
    assert_eq!(
        f.obv.requests(),
        before + 1,
        "only the first search reached the platform"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_matches_the_platform_and_a_repeat_comes_from_the_buffer() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("search"))).await;
    let mut c = Mcp::initialize(server.url("/mcp/obv")).await;
    let sources = structured(&c.call("obv_sources", json!({})).await);
    assert_eq!(sources["total"], 331);
    let key = sources["results"][0]["id"].as_str().unwrap().to_owned();
    let before = f.obv.requests();
    let first = structured(&c.call("obv_search", json!({"organization": key, "limit": 5})).await);
    assert_eq!(f.obv.requests(), before + 1);
    assert!(!first["results"].as_array().unwrap().is_empty(), "{first}");
    let second = c.call("obv_search", json!({"organization": key, "limit": 5})).await;
    assert_eq!(structured(&second), first);
    assert_eq!(f.obv.requests(), before + 1, "the repeat did not reach the platform");
    let text = second.message.unwrap()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("buffer"), "{text}");
    // A stateless (2026-07-28) client gets the same answer, as plain JSON.
    let modern = Mcp::modern(server.url("/mcp/obv"));
    let third = modern
        .call_with_id(1, "obv_search", json!({"organization": key, "limit": 5}))
        .await;
    assert_eq!(third.headers["content-type"], "application/json", "{}", third.text);
    assert_eq!(structured(&third), first);
    assert_eq!(f.obv.requests(), before + 1);
    // The third is shown from the kept result of the second: the same text, word for word.
    let third_text = serde_json::from_str::<serde_json::Value>(&third.text).unwrap()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(third_text, text);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_buffer_survives_a_restart_and_a_new_version_asks_again() {
    let f = fakes().await;
    let dir = temp_dir("restart");
    let server = Server::start(config(&f, &dir)).await;
    let mut c = Mcp::initialize(server.url("/mcp/tk")).await;
    let first = structured(&c.call("tk_factions", json!({})).await);
    let after_first = f.tk.requests();
    server.stop().await;

    let server = Server::start(config(&f, &dir)).await;
    let mut c = Mcp::initialize(server.url("/mcp/tk")).await;
    assert_eq!(structured(&c.call("tk_factions", json!({})).await), first);
    assert_eq!(f.tk.requests(), after_first, "answered from the buffer kept on disk");
    server.stop().await;

    let mut upgraded = config(&f, &dir);
    upgraded.cache_version = "99.0.0-upgrade-test".to_owned();
    let server = Server::start(upgraded).await;
    let mut c = Mcp::initialize(server.url("/mcp/tk")).await;
    assert_eq!(structured(&c.call("tk_factions", json!({})).await), first);
    assert!(
        f.tk.requests() > after_first,
        "another version's entry is not used: the platform is asked again"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_input_gets_a_clear_error_and_the_server_keeps_serving() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("bad-input"));
    cfg.max_body_bytes = 64 * 1024;
    let server = Server::start(cfg).await;
    let mut c = Mcp::initialize(server.url("/mcp/obv")).await;

    let r = c
        .post_raw(b"{\"jsonrpc\": \"2.0\", \"id\": 1, \"method\": ".to_vec())
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.message.as_ref().unwrap()["error"]["code"], -32700, "{}", r.text);

    let r = c.post(json!({"hello": "world"})).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.message.as_ref().unwrap()["error"]["code"], -32600, "{}", r.text);

    let r = c.post(json!([1, 2, 3])).await;
    assert_eq!(r.status, 400, "{}", r.text);

    let r = c.call("obv_delete_everything", json!({})).await;
    assert!(
        r.message.as_ref().unwrap()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tool"),
        "{}",
        r.text
    );

    let r = c.call("obv_search", json!({"query": "fiets", "limit": 500})).await;
    assert!(support::tool_error_text(&r).contains("limit"), "{}", r.text);
    // A whole number is read as its digits (assistants send them); a fraction or a boolean is refused.
    let r = c.call("obv_search", json!({"query": 4.5})).await;
    assert!(support::tool_error_text(&r).contains("`query` must be"), "{}", r.text);
    let r = c.call("obv_search", json!({"query": true})).await;
    assert!(!support::tool_error_text(&r).is_empty());
    let r = c.call("obv_search", json!({"query": "fiets", "colour": "red"})).await;
    assert!(support::tool_error_text(&r).contains("colour"), "{}", r.text);
    let r = c.call("obv_document", json!({"id": ""})).await;
    assert!(support::tool_error_text(&r).contains("id"));

    let huge = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/call\",\"params\":{{\"name\":\"obv_search\",\"arguments\":{{\"query\":\"{}\"}}}}}}",
        "x".repeat(100_000)
    );
    let r = c.post_raw(huge.into_bytes()).await;
    assert_eq!(r.status, 413, "{}", r.text);

    let mut stranger = Mcp::new(server.url("/mcp/obv"));
    stranger.session = Some("no-such-session".to_owned());
    let r = stranger.call("obv_sources", json!({})).await;
    assert_eq!(r.status, 404, "{}", r.text);

    // Still serving.
    assert_eq!(structured(&c.call("obv_sources", json!({})).await)["total"], 331);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_platform_gives_a_clear_tool_error_and_the_other_connector_keeps_answering() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("failing"));
    cfg.platforms.get_mut("obv").unwrap().timeout_ms = 500;
    cfg.platforms.get_mut("obv").unwrap().attempts = 1;
    let server = Server::start(cfg).await;
    let mut obv = Mcp::initialize(server.url("/mcp/obv")).await;
    let mut tk = Mcp::initialize(server.url("/mcp/tk")).await;

    f.obv.set_garbage(true);
    let text = support::tool_error_text(&obv.call("obv_search", json!({"query": "garbage"})).await);
    assert!(
        text.contains("OpenBesluitvorming") && text.contains("unreadable"),
        "{text}"
    );
    assert_eq!(structured(&tk.call("tk_factions", json!({})).await)["total"], 16);
    f.obv.set_garbage(false);

    f.obv.set_latency(std::time::Duration::from_secs(3));
    let text = support::tool_error_text(&obv.call("obv_search", json!({"query": "slow"})).await);
    assert!(
        text.contains("OpenBesluitvorming") && text.contains("did not answer"),
        "{text}"
    );
    let current = besluitbron_fakes::tk_corpus()
        .set("Commissie")
        .unwrap()
        .0
        .iter()
        .filter(|c| c["Verwijderd"] != json!(true))
        .count();
    assert_eq!(structured(&tk.call("tk_committees", json!({})).await)["total"], current);
    f.obv.set_latency(std::time::Duration::ZERO);

    // A platform that is down: nothing listens at its address.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let mut cfg = config(&f, &temp_dir("down"));
    cfg.platforms.get_mut("obv").unwrap().base_url = format!("http://{closed}/obv");
    cfg.platforms.get_mut("obv").unwrap().attempts = 1;
    let down = Server::start(cfg).await;
    let mut obv = Mcp::initialize(down.url("/mcp/obv")).await;
    let text = support::tool_error_text(&obv.call("obv_search", json!({"query": "down"})).await);
    assert!(
        text.contains("OpenBesluitvorming") && text.contains("unreachable"),
        "{text}"
    );
    let mut tk = Mcp::initialize(down.url("/mcp/tk")).await;
    assert_eq!(structured(&tk.call("tk_factions", json!({})).await)["total"], 16);
    // Nothing failed was kept: once the platform answers again, so does BesluitBron.
    server.stop().await;
    down.stop().await;
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_over_the_request_time_out_names_the_platform_it_waited_for() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("request-timeout"));
    cfg.request_timeout_secs = 1;
    let server = Server::start(cfg).await;
    f.obv.set_latency(std::time::Duration::from_millis(2_500));
    let c = Mcp::modern(server.url("/mcp"));
    let text = support::tool_error_text(&c.call_with_id(1, "obv_search", json!({"query": "haven"})).await);
    assert!(text.contains("gave up after 1 s"), "{text}");
    assert!(text.contains("OpenBesluitvorming"), "the platform is named: {text}");
    f.obv.set_latency(std::time::Duration::ZERO);
    server.stop().await;
}

/// One 2026-07-28 `tools/call` straight into `router` (no socket); the JSON-RPC result.
async fn call_in(router: &axum::Router, tool: &str, arguments: Value) -> Value {
    let request = support::stateless_call("/mcp/obv", 1, tool, arguments, &[]);
    let response = router.clone().oneshot(request).await.expect("the router answers");
    assert!(response.status().is_success(), "{}", response.status());
    let bytes = response.into_body().collect().await.expect("a body").to_bytes();
    let mut message: Value = serde_json::from_slice(&bytes).expect("a JSON-RPC answer");
    assert_ne!(message["result"]["isError"], Value::Bool(true), "{message}");
    message["result"].take()
}

/// A repeat of a call whose answer is fresh in the buffer is answered with the result
/// rendered for it the first time (the render cache, `mcp::call::shown`), word for word
/// what the tool gives and counted as a buffer hit; another question on the same kept
/// answer is rendered for itself; once the answer expires, the platform is asked again.
#[tokio::test(start_paused = true)]
async fn a_repeat_is_its_kept_result_until_the_answer_expires() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("repeats"));
    // Under the paused clock a waiting socket lets time run on: no limit may lapse.
    cfg.request_timeout_secs = 3_600;
    for p in cfg.platforms.values_mut() {
        p.timeout_ms = 600_000;
    }
    let app = App::build(cfg).expect("build app");
    let (router, state) = (app.router.clone(), app.state.clone());
    let counted = async || {
        let request = Request::get("/metrics")
            .header("host", "127.0.0.1")
            .body(Body::empty())
            .unwrap();
        let response = router.clone().oneshot(request).await.unwrap();
        let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
        let line = "besluitbron_requests_total{platform=\"obv\",tool=\"obv_search\",kind=\"cache_hit\"} ";
        text.lines()
            .find_map(|l| l.strip_prefix(line))
            .map_or(0.0, |n| n.parse::<f64>().unwrap())
    };
    let asked = json!({"query": "begroting", "limit": 3});
    let fetched = call_in(&router, "obv_search", asked.clone()).await;
    let requests = f.obv.requests();
    assert_eq!(state.shown_kept(), 0, "a fetched answer's result is not kept");
    let hit = call_in(&router, "obv_search", asked.clone()).await;
    assert_eq!(state.shown_kept(), 1, "a buffer hit's result is kept");
    assert_eq!(
        hit["structuredContent"]["results"],
        fetched["structuredContent"]["results"]
    );
    assert_eq!(counted().await, 1.0);
    // The same call, its arguments in another order: the repeat, the tool's result.
    let repeat = call_in(&router, "obv_search", json!({"limit": 3, "query": "begroting"})).await;
    assert_eq!(repeat, hit, "word for word the tool's own result");
    assert_eq!(counted().await, 2.0, "counted as a buffer hit");
    assert_eq!(f.obv.requests(), requests, "nothing asked of the platform");
    // Another question on the same kept list is rendered for itself.
    let all = call_in(&router, "obv_sources", json!({})).await;
    call_in(&router, "obv_sources", json!({})).await;
    assert_eq!(
        call_in(&router, "obv_sources", json!({})).await["structuredContent"]["results"],
        all["structuredContent"]["results"]
    );
    let page = call_in(&router, "obv_sources", json!({"offset": 10, "limit": 5})).await;
    assert_eq!(
        page["structuredContent"]["results"].as_array().map(Vec::len),
        Some(5),
        "{page}"
    );
    assert_eq!(
        page["structuredContent"]["results"][0],
        all["structuredContent"]["results"][10]
    );
    // Its repeat too: the answer's kept result is the first question's, not this one's.
    for _ in 0..2 {
        let again = call_in(&router, "obv_sources", json!({"offset": 10, "limit": 5})).await;
        assert_eq!(again, page);
    }
    // Past the search's ten minutes the answer is gone: the platform is asked again,
    // and the answer no longer says it came from the buffer.
    tokio::time::advance(Duration::from_secs(11 * 60)).await;
    let again = call_in(&router, "obv_search", asked.clone()).await;
    assert_eq!(
        f.obv.requests(),
        requests + 2,
        "the expired search (and only it, with the sources) asked again"
    );
    assert!(
        !again["content"][0]["text"].as_str().unwrap().contains("buffer"),
        "{again}"
    );
}

/// A client that keeps its connection after a 404 from an address that serves nothing
/// sends its next request on it: the server read the first request's body before it
/// answered, so the connection stays open (the e2e lost one request in three to
/// "Server disconnected" when the body arrived after the answer had been decided).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_42_a_404_at_an_unknown_address_keeps_the_connection() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let f = fakes().await;
    let dir = temp_dir("mcp-unknown-keepalive");
    let server = Server::start(config(&f, &dir)).await;
    let address = server
        .url("")
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .to_owned();
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let head = |path: &str| {
        format!(
            "POST {path} HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n",
            body.len()
        )
    };
    // One answer: its head up to the blank line, then `Content-Length` bytes.
    async fn answer(conn: &mut tokio::net::TcpStream) -> Option<String> {
        let mut got = Vec::new();
        let mut byte = [0u8; 1];
        while !got.ends_with(b"\r\n\r\n") {
            if conn.read(&mut byte).await.ok()? == 0 {
                return None;
            }
            got.push(byte[0]);
        }
        let head = String::from_utf8_lossy(&got).to_string();
        let length: usize = head
            .lines()
            .find_map(|l| {
                l.to_ascii_lowercase()
                    .strip_prefix("content-length:")
                    .map(|v| v.trim().to_owned())
            })?
            .parse()
            .ok()?;
        let mut rest = vec![0u8; length];
        conn.read_exact(&mut rest).await.ok()?;
        Some(head)
    }
    for round in 0..40 {
        let mut conn = tokio::net::TcpStream::connect(&address).await.expect("connects");
        conn.set_nodelay(true).expect("nodelay");
        for path in ["/mcp/nope", "/mcp/obv/extra"] {
            // The head and the body in two writes, as many clients send them.
            conn.write_all(head(path).as_bytes()).await.expect("head");
            conn.write_all(body.as_bytes()).await.expect("body");
            let got = answer(&mut conn).await;
            assert!(
                got.as_deref().is_some_and(|h| h.starts_with("HTTP/1.1 404")),
                "round {round}, {path}: {got:?}"
            );
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_address_that_serves_nothing_is_404_with_the_addresses_that_do() {
    let f = fakes().await;
    let dir = temp_dir("mcp-unknown-address");
    let server = Server::start(config(&f, &dir)).await;
    let http = reqwest::Client::new();
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let list = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}});
    for path in ["/mcp/nope", "/mcp/OBV", "/mcp/obv/extra", "/mcp/obv/"] {
        for (era, body) in [("2025-06-18", &init), ("2026-07-28", &list)] {
            let r = http
                .post(server.url(path))
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", era)
                .body(body.to_string())
                .send()
                .await
                .expect("answered");
            assert_eq!(r.status(), 404, "POST {path} ({era})");
            let text = r.text().await.expect("a body");
            assert!(
                text.contains("/mcp/obv") && text.contains("/mcp/tk") && !text.contains("obv_search"),
                "POST {path}: the addresses, not a tool list: {text}"
            );
        }
        for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
            let r = http
                .request(method.clone(), server.url(path))
                .header("accept", "text/event-stream")
                .send()
                .await
                .expect("answered");
            assert_eq!(r.status(), 404, "{method} {path}");
        }
    }
    // The real addresses still answer.
    let mut obv = Mcp::initialize(server.url("/mcp/obv")).await;
    assert!(
        obv.list_tools()
            .await
            .iter()
            .all(|t| t["name"].as_str().is_some_and(|n| n.starts_with("obv_")))
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_switched_off_ori_is_offered_only_with_a_mirror() {
    let f = fakes().await;
    // At its real (switched-off) address: nothing advertises it, and nothing asks it.
    let dir = temp_dir("mcp-ori-off");
    let mut c = config(&f, &dir);
    let real = besluitbron_server::connectors::by_id("ori")
        .expect("ori")
        .defaults
        .base_url;
    c.platforms.get_mut("ori").expect("ori").base_url = real.to_owned();
    let server = Server::start(c).await;
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let names: Vec<String> = all
        .list_tools()
        .await
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    assert!(names.iter().any(|n| n == "obv_sources"), "{names:?}");
    assert!(!names.iter().any(|n| n.starts_with("ori_")), "{names:?}");
    let resources = all.request("resources/list", json!({})).await;
    let templates = all.request("resources/templates/list", json!({})).await;
    let offered = format!("{:?} {:?}", resources.message, templates.message);
    assert!(!offered.contains("besluitbron://ori"), "{offered}");
    let call = all.call("ori_search", json!({"query": "woningbouw"})).await;
    assert!(
        call.message.as_ref().is_some_and(|m| m.get("error").is_some()),
        "an unknown tool: {:?}",
        call.message
    );
    let r = reqwest::Client::new()
        .post(server.url("/mcp/ori"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#)
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), 404);
    assert_eq!(
        f.all
            .get(besluitbron_server::platforms::ori::PLATFORM)
            .expect("ori fake")
            .requests(),
        0
    );
    server.stop().await;

    // With a mirror (the fake): listed and served.
    let dir = temp_dir("mcp-ori-mirror");
    let server = Server::start(config(&f, &dir)).await;
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let tools = all.list_tools().await;
    assert!(tools.iter().any(|t| t["name"] == "ori_search"));
    let mut ori = Mcp::initialize(server.url("/mcp/ori")).await;
    assert_eq!(ori.list_tools().await.len(), 3);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tk_search_takes_query_and_its_old_name_words_with_a_note() {
    let f = fakes().await;
    let dir = temp_dir("mcp-tk-words");
    let server = Server::start(config(&f, &dir)).await;
    let mut tk = Mcp::initialize(server.url("/mcp/tk")).await;
    let by_query = tk.call("tk_search", json!({"query": "stikstof", "limit": "2"})).await;
    let by_words = tk.call("tk_search", json!({"words": "stikstof", "limit": 2})).await;
    assert_eq!(
        structured(&by_query)["results"],
        structured(&by_words)["results"],
        "the same search"
    );
    let text = |r: &support::Reply| {
        r.message
            .as_ref()
            .map(|m| m["result"]["content"][0]["text"].to_string())
            .unwrap_or_default()
    };
    assert!(!text(&by_query).contains("now called `query`"), "{}", text(&by_query));
    assert!(
        text(&by_words).contains("`words` is now called `query`"),
        "{}",
        text(&by_words)
    );
    let none = support::tool_error_text(&tk.call("tk_search", json!({"limit": 2})).await);
    assert!(none.contains("give `query`"), "{none}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_organization_name_is_resolved_before_openbesluitvorming_is_asked() {
    let f = fakes().await;
    let dir = temp_dir("mcp-obv-names");
    let server = Server::start(config(&f, &dir)).await;
    let mut obv = Mcp::initialize(server.url("/mcp/obv")).await;
    let text = |r: &support::Reply| {
        r.message.as_ref().expect("message")["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    let candidates = |r: &support::Reply| -> Vec<String> {
        structured(r)["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["id"].as_str().map(str::to_owned))
            .collect()
    };
    // The first call reads the list of sources from the platform: it does not say that
    // nothing was asked, and answers (no tool error: Inspector 2 exits on a result
    // without the structured content its schema promises) with the candidates.
    let before = f.obv.requests();
    let first = obv
        .call(
            "obv_search",
            json!({"query": "fietsparkeren", "organization": "Utrecht"}),
        )
        .await;
    assert_eq!(f.obv.requests(), before + 1, "the list of sources, no search");
    assert!(
        !text(&first).contains("nothing was asked") && text(&first).contains("list of sources was read"),
        "{}",
        text(&first)
    );
    assert_eq!(candidates(&first), ["gemeente-utrecht", "provincie-utrecht"]);
    assert_eq!(structured(&first)["results"], json!([]));
    // The list of sources, kept.
    let listed = obv.call("obv_sources", json!({"name": "utrecht"})).await;
    assert!(structured(&listed)["results"].as_array().is_some_and(|s| s.len() >= 2));
    let before = f.obv.requests();
    let ambiguous = obv
        .call(
            "obv_search",
            json!({"query": "fietsparkeren", "organization": "Utrecht"}),
        )
        .await;
    assert!(
        text(&ambiguous).contains("`gemeente-utrecht` (Gemeente Utrecht)")
            && text(&ambiguous).contains("`provincie-utrecht` (Provincie Utrecht)")
            && text(&ambiguous).contains("nothing was asked"),
        "{}",
        text(&ambiguous)
    );
    assert_eq!(candidates(&ambiguous), ["gemeente-utrecht", "provincie-utrecht"]);
    let unknown = obv
        .call(
            "obv_search",
            json!({"query": "fietsparkeren", "organization": "gemeente Utrech"}),
        )
        .await;
    assert!(
        candidates(&unknown).contains(&"gemeente-utrecht".to_owned()),
        "the nearest: {}",
        text(&unknown)
    );
    assert_eq!(
        f.obv.requests(),
        before,
        "no platform request for a name it would refuse"
    );
    // A name of one source is that source's key.
    let by_name = obv
        .call(
            "obv_search",
            json!({"query": "begroting", "organization": "Gemeente Utrecht", "limit": 3}),
        )
        .await;
    let by_key = obv
        .call(
            "obv_search",
            json!({"query": "begroting", "organization": "gemeente-utrecht", "limit": 3}),
        )
        .await;
    assert_eq!(structured(&by_name)["results"], structured(&by_key)["results"]);
    assert_eq!(f.obv.requests(), before + 1, "one search, the second from the buffer");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_asks_every_keyword_platform_once_and_each_result_reads_with_fetch() {
    let f = fakes().await;
    let dir = temp_dir("mcp-search");
    let server = Server::start(config(&f, &dir)).await;
    let mut one = Mcp::initialize(server.url("/mcp/obv")).await;
    assert!(
        !one.list_tools().await.iter().any(|t| t["name"] == "search"),
        "only at /mcp"
    );
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    assert!(all.list_tools().await.iter().any(|t| t["name"] == "search"));
    let before: Vec<u64> = f.all.iter().map(|h| h.requests()).collect();
    let r = all.call("search", json!({"query": "stikstof", "limit": "3"})).await;
    let groups = search_groups(&r);
    let ok: Vec<&String> = groups
        .iter()
        .filter(|(_, g)| g["status"] == "ok")
        .map(|(p, _)| p)
        .collect();
    assert!(ok.len() >= 4, "at least four platforms answered: {groups:?}");
    assert_eq!(groups["rechtspraak"]["status"], "no_keyword_search");
    assert!(
        groups["rechtspraak"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("rechtspraak_search"))
    );
    // One list; the first result of each platform reads with `fetch` by the id given.
    let results = structured(&r)["results"].as_array().cloned().expect("results");
    let mut read = 0;
    for (platform, g) in &groups {
        let mine: Vec<&Value> = results.iter().filter(|x| x["platform"] == json!(platform)).collect();
        assert_eq!(
            Some(mine.len() as u64),
            g["shown"].as_u64(),
            "{platform}: its results are in the list"
        );
        for item in mine.into_iter().take(2) {
            let id = item["id"].as_str().expect("an id");
            let opened = all.call("fetch", json!({ "id": id })).await;
            let message = opened.message.clone().unwrap_or_default();
            if message.to_string().contains("no text layer") {
                continue; // a scan: the reading tool's own answer, passed on
            }
            assert!(
                message["result"]["isError"] != json!(true),
                "{platform}: fetch reads `{id}`: {message}"
            );
            assert_eq!(
                message["result"]["structuredContent"]["metadata"]["platform"],
                json!(platform),
                "{platform}: `{id}` is read on its own platform"
            );
            // The platform's own reading tool reads the same id.
            let tool = item["tool"].as_str().expect("a reading tool");
            let own = all.call(tool, json!({ "id": id })).await;
            let own = own.message.clone().unwrap_or_default();
            assert!(
                own["result"]["isError"] != json!(true),
                "{platform}: {tool} reads `{id}`: {own}"
            );
            read += 1;
            break;
        }
    }
    assert!(read >= 4, "a result of each answering platform was read");
    // Asked again: every answer from the buffer, nothing asked of any platform.
    let after_first: Vec<u64> = f.all.iter().map(|h| h.requests()).collect();
    assert_ne!(before, after_first);
    let again = all.call("search", json!({"query": "stikstof", "limit": 3})).await;
    assert_eq!(search_groups(&again).len(), groups.len());
    let after_second: Vec<u64> = f.all.iter().map(|h| h.requests()).collect();
    let reads = read as u64;
    assert!(
        after_second.iter().sum::<u64>() == after_first.iter().sum::<u64>(),
        "the repeat is answered from the buffer ({reads} reads in between were before it)"
    );
    server.stop().await;
}

/// `search` is a tool call like any other: a retry of its request id gets the
/// first result from the replay table, and its arguments are checked by the stack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_search_gets_the_first_result_and_bad_arguments_are_the_stacks_error() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("mcp-search-replay"))).await;
    let mut c = Mcp::initialize(server.url("/mcp")).await;
    let first = c
        .call_with_id(11, "search", json!({"query": "woningbouw", "limit": 2}))
        .await;
    let first_result = first.message.as_ref().expect("answer")["result"].clone();
    structured(&first);
    let (replays_before, _) = server.state.replay_counts();
    let asked: u64 = f.all.iter().map(|h| h.requests()).sum();
    let retry = c
        .call_with_id(11, "search", json!({"limit": 2, "query": "woningbouw"}))
        .await;
    assert_eq!(retry.message.as_ref().expect("answer")["result"], first_result);
    assert_eq!(
        server.state.replay_counts().0,
        replays_before + 1,
        "answered as a replay"
    );
    assert_eq!(f.all.iter().map(|h| h.requests()).sum::<u64>(), asked);
    // Outside its schema: refused before any platform is asked, naming the tool.
    let long = "x".repeat(501);
    let refused = c.call("search", json!({ "query": long })).await;
    let text = support::tool_error_text(&refused);
    assert!(text.contains("search") && text.contains("query"), "{text}");
    assert_eq!(f.all.iter().map(|h| h.requests()).sum::<u64>(), asked);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_reports_a_slow_platform_as_pending_and_a_failing_one_by_name() {
    let f = fakes().await;
    let dir = temp_dir("mcp-search-pending");
    let mut c = config(&f, &dir);
    c.request_timeout_secs = 3; // search waits 1 s for the slowest
    let server = Server::start(c).await;
    f.obv.set_latency(Duration::from_secs(2));
    f.all
        .get(besluitbron_server::platforms::ob::PLATFORM)
        .expect("ob")
        .set_fail_every(Some(1));
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let r = all.call("search", json!({"query": "begroting"})).await;
    let groups = search_groups(&r);
    assert_eq!(groups["obv"]["status"], "pending", "{groups:?}");
    assert!(
        groups["obv"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("asking again"))
    );
    assert_eq!(groups["ob"]["status"], "failed");
    assert!(
        groups["ob"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Officiële Bekendmakingen")),
        "{groups:?}"
    );
    assert_eq!(groups["tk"]["status"], "ok");
    // The slow search went on and landed in the buffer: asked again, it is there.
    let obv_requests = f.obv.requests();
    assert!(
        support::eventually(Duration::from_secs(10), async || {
            let again = all.call("search", json!({"query": "begroting"})).await;
            search_groups(&again)["obv"]["status"] == "ok"
        })
        .await,
        "the pending search's answer is served once it arrived"
    );
    assert_eq!(f.obv.requests(), obv_requests, "from the buffer, not asked again");
    let bad = support::tool_error_text(
        &all.call("search", json!({"query": "x", "date_from": "1 januari 2026"}))
            .await,
    );
    assert!(bad.contains("YYYY-MM-DD"), "{bad}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_refused_by_besluitbron_itself_does_not_blame_the_platform() {
    let f = fakes().await;
    let dir = temp_dir("mcp-obv-empty-args");
    let server = Server::start(config(&f, &dir)).await;
    let mut obv = Mcp::initialize(server.url("/mcp/obv")).await;
    let before = f.obv.requests();
    let text = support::tool_error_text(&obv.call("obv_search", json!({})).await);
    assert!(
        text.contains("give a query, an organization, or both")
            && text.contains("nothing was asked of OpenBesluitvorming")
            && !text.contains("refused"),
        "{text}"
    );
    assert_eq!(f.obv.requests(), before);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rechtspraak_without_filters_says_it_searched_all_rulings() {
    let f = fakes().await;
    let dir = temp_dir("mcp-rs-all");
    let server = Server::start(config(&f, &dir)).await;
    let mut rs = Mcp::initialize(server.url("/mcp/rechtspraak")).await;
    let r = rs.call("rechtspraak_search", json!({})).await;
    let text = r
        .message
        .as_ref()
        .map(|m| m["result"]["content"][0]["text"].to_string())
        .unwrap_or_default();
    assert!(
        text.contains("for all rulings with a published text") && !text.contains("for with"),
        "{text}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activity_found_by_opentk_search_opens_with_opentk_activity() {
    let f = fakes().await;
    let dir = temp_dir("mcp-opentk-activities");
    let server = Server::start(config(&f, &dir)).await;
    let mut c = Mcp::initialize(server.url("/mcp/opentk")).await;
    let r = c
        .call("opentk_search", json!({"query": "Kamer", "kind": "activiteiten"}))
        .await;
    let text = r
        .message
        .as_ref()
        .map(|m| m["result"]["content"][0]["text"].to_string())
        .unwrap_or_default();
    assert!(text.contains("read with opentk_activity"), "{text}");
    let hits = structured(&r)["results"].as_array().expect("results").clone();
    assert!(!hits.is_empty(), "{text}");
    for h in hits.iter().take(2) {
        let number = h["id"].as_str().expect("a number");
        assert!(number.contains('A'), "an activity's number: {number}");
        assert_eq!(h["tool"], "opentk_activity", "{h}");
        let opened = c.call("opentk_activity", json!({"id": number})).await;
        assert_ne!(structured(&opened), Value::Null, "{number} opens: {:?}", opened.message);
    }
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

/// The progress notifications in an answer's stream, and whether each came before the
/// result (the line holding `"result"`).
fn progress_before_result(text: &str) -> (Vec<String>, bool) {
    let mut progress = Vec::new();
    let mut seen_result = false;
    let mut all_before = true;
    for line in text.lines().filter(|l| l.starts_with("data:")) {
        let Ok(message) = serde_json::from_str::<Value>(line.trim_start_matches("data:").trim()) else {
            continue;
        };
        if message["method"] == "notifications/progress" {
            all_before &= !seen_result;
            progress.push(message["params"]["message"].as_str().unwrap_or_default().to_owned());
        } else if message.get("result").is_some() {
            seen_result = true;
        }
    }
    (progress, all_before && seen_result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_42_every_progress_of_a_search_comes_on_its_own_stream_before_its_result() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("search-progress"))).await;
    let url = server.url("/mcp");
    let call = |id: i64, token: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": "begroting", "limit": 1},
            "_meta": {"progressToken": token}}})
    };
    // 2025 era: a session; the notifications of the request are on the POST's own stream
    // (not the session's standing GET stream), before the result, the last ("6 of 6")
    // included.
    let session = Mcp::initialize(url.clone()).await;
    let r = session.post(call(1, "p-legacy")).await;
    structured(&r);
    let (progress, before) = progress_before_result(&r.text);
    assert!(before, "every notification before the result: {}", r.text);
    assert_eq!(progress.len(), 6, "one per keyword platform: {progress:?}");
    assert!(progress.last().is_some_and(|m| m.ends_with("(6 of 6)")), "{progress:?}");
    // 2026-07-28 era: stateless; the answer becomes a stream carrying all of them, then
    // the result.
    let modern = Mcp::modern(url);
    let r = modern.post(call(2, "p-modern")).await;
    structured(&r);
    let (progress, before) = progress_before_result(&r.text);
    assert!(before, "every notification before the result: {}", r.text);
    assert_eq!(progress.len(), 6, "{progress:?}");
    assert!(progress.last().is_some_and(|m| m.ends_with("(6 of 6)")), "{progress:?}");
}

/// The JSON-RPC messages of an answer (plain JSON, or the `data:` lines of a stream).
fn messages(text: &str) -> Vec<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return vec![v];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_42_instructions_fit_the_hosts_limit_at_every_address_and_point_to_the_guide() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("instructions"))).await;
    let mut longest = (0, String::new());
    for path in [
        "/mcp",
        "/mcp/obv",
        "/mcp/tk",
        "/mcp/rechtspraak",
        "/mcp/opentk",
        "/mcp/ori",
        "/mcp/ob",
        "/mcp/bwb",
        "/mcp/cvdr",
    ] {
        let c = Mcp::new(server.url(path));
        let r = c
            .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            .await;
        let result = messages(&r.text)
            .into_iter()
            .find_map(|m| m.get("result").cloned())
            .expect("initialized");
        let instructions = result["instructions"].as_str().expect("instructions");
        let chars = instructions.chars().count();
        assert!(
            chars <= besluitbron_server::mcp::MAX_INSTRUCTIONS_CHARS,
            "{path}: {chars} characters: {instructions}"
        );
        assert!(instructions.contains("besluitbron://guide"), "{path}");
        if chars > longest.0 {
            longest = (chars, path.to_owned());
        }
        // The guide holds what the instructions left out, for this address's platforms.
        let mut s = Mcp::modern(server.url(path));
        let read = s.request("resources/read", json!({"uri": "besluitbron://guide"})).await;
        let guide = messages(&read.text)
            .into_iter()
            .find_map(|m| m["result"]["contents"][0]["text"].as_str().map(str::to_owned))
            .expect("the guide reads");
        assert!(guide.contains("## "), "{path}: {guide}");
        if path == "/mcp/obv" || path == "/mcp" {
            assert!(
                guide.contains("60 units per minute"),
                "{path}: obv's guidance moved here"
            );
        }
        if path == "/mcp/tk" {
            assert!(!guide.contains("OpenBesluitvorming"), "only this address's platforms");
        }
    }
    assert_eq!(
        longest.1, "/mcp",
        "every connector's line and the search preamble: {longest:?}"
    );
    server.stop().await;
}

/// The text of a tool result (its text items joined).
fn result_text(r: &support::Reply) -> String {
    let result = messages(&r.text)
        .into_iter()
        .find_map(|m| m.get("result").cloned())
        .expect("a result");
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_reads_each_platforms_ids_with_the_text_its_own_tool_gives() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("fetch"))).await;
    let mut c = Mcp::initialize(server.url("/mcp")).await;
    // (fetch's id, the platform tool and its arguments, the platform): ids the fakes serve.
    let cases = [
        (
            "ECLI:NL:PHR:2026:400",
            "rechtspraak_ruling",
            json!({"id": "ECLI:NL:PHR:2026:400"}),
            "rechtspraak",
        ),
        ("gmb-2026-10000", "ob_document", json!({"id": "gmb-2026-10000"}), "ob"),
        (
            "opentk:2026D10001",
            "opentk_document",
            json!({"id": "2026D10001"}),
            "opentk",
        ),
        ("BWBR0047001", "bwb_read", json!({"id": "BWBR0047001"}), "bwb"),
        ("CVDR700001", "cvdr_read", json!({"id": "CVDR700001"}), "cvdr"),
        (
            "72f7ab9b-dc59-4e67-8a04-798a744c256e",
            "tk_document_text",
            json!({"id": "72f7ab9b-dc59-4e67-8a04-798a744c256e"}),
            "tk",
        ),
        // Real ids and links (the fakes serve the corpus's real files under them).
        (
            "ECLI:NL:CBB:2020:1",
            "rechtspraak_ruling",
            json!({"id": "ECLI:NL:CBB:2020:1"}),
            "rechtspraak",
        ),
        (
            "https://uitspraken.rechtspraak.nl/inziendocument?id=ECLI:NL:GHAMS:2020:3025",
            "rechtspraak_ruling",
            json!({"id": "ECLI:NL:GHAMS:2020:3025"}),
            "rechtspraak",
        ),
        ("stb-2018-84", "ob_document", json!({"id": "stb-2018-84"}), "ob"),
        (
            "https://zoek.officielebekendmakingen.nl/stcrt-2015-47076.html",
            "ob_document",
            json!({"id": "stcrt-2015-47076"}),
            "ob",
        ),
        (
            "BWBR0018451@2025-06-01#2",
            "bwb_read",
            json!({"id": "BWBR0018451", "date": "2025-06-01", "article": "2"}),
            "bwb",
        ),
        (
            "https://wetten.overheid.nl/BWBR0008326/2011-01-01",
            "bwb_read",
            json!({"id": "BWBR0008326", "date": "2011-01-01"}),
            "bwb",
        ),
        ("CVDR100394_2", "cvdr_read", json!({"id": "CVDR100394_2"}), "cvdr"),
        (
            "https://lokaleregelgeving.overheid.nl/CVDR680781/1",
            "cvdr_read",
            json!({"id": "CVDR680781_1"}),
            "cvdr",
        ),
        // A meeting and an activity number: the debate's report (the corpus's real
        // committee debate on the MIVD); OpenTK's activity (agenda, video) by its prefix.
        (
            "vergadering:29d8cf68-423e-4ae9-b4f0-7e908c7f5311",
            "tk_debate",
            json!({"id": "vergadering:29d8cf68-423e-4ae9-b4f0-7e908c7f5311"}),
            "tk",
        ),
        ("2025A04496", "tk_debate", json!({"id": "2025A04496"}), "tk"),
        (
            "opentk:2026A00007",
            "opentk_activity",
            json!({"id": "2026A00007"}),
            "opentk",
        ),
    ];
    for (id, tool, args, platform) in cases {
        // Asked twice, so that the tool's answer comes from the buffer, as fetch's does.
        structured(&c.call(tool, args.clone()).await);
        let own = c.call(tool, args).await;
        let own_text = result_text(&own);
        let fetched = c.call("fetch", json!({"id": id})).await;
        let shown = structured(&fetched);
        assert_eq!(
            shown["text"].as_str(),
            Some(own_text.as_str()),
            "{id}: the tool's own text"
        );
        assert_eq!(shown["metadata"]["platform"], platform, "{id}");
        assert_eq!(shown["metadata"]["tool"], tool, "{id}");
        assert!(
            shown["id"]
                .as_str()
                .is_some_and(|i| i.starts_with(&format!("{platform}:"))),
            "{shown}"
        );
        assert!(shown["title"].as_str().is_some_and(|t| !t.is_empty()), "{id}");
        let text: Value = serde_json::from_str(&result_text(&fetched)).expect("the text item is JSON");
        assert_eq!(text, shown, "{id}: the text item is the structured content");
        for (name, part) in [
            ("text", result_text(&fetched).len()),
            ("structured", shown.to_string().len()),
        ] {
            assert!(part <= 16 * 1024, "{id}: {name} is {part} bytes");
        }
    }
    // An unknown form is an error listing the forms read; nothing asked.
    let r = c.call("fetch", json!({"id": "hello world"})).await;
    let e = support::tool_error_text(&r);
    assert!(
        e.contains("ECLI") && e.contains("wetten.overheid.nl") && e.contains("platform:id"),
        "{e}"
    );
    server.stop().await;
}
