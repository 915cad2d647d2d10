//! Answers kept in the buffer: a repeat comes from the buffer, a kept answer is handed
//! out again only to the same question, the buffer survives a restart (a new version
//! asks again), and a repeat is its kept result until the answer expires.

use crate::support;

use std::time::Duration;

use axum::body::Body;
use axum::http::Request;
use besluitbron_server::app::App;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, structured, temp_dir};
use tower::ServiceExt;

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
/// rendered for it the first time (the render cache, `mcp::tool_call::render_store`), word for word
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
    assert_eq!(state.renders_kept(), 0, "a fetched answer's result is not kept");
    let hit = call_in(&router, "obv_search", asked.clone()).await;
    assert_eq!(state.renders_kept(), 1, "a buffer hit's result is kept");
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
