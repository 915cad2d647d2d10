//! When something fails: bad input gets a clear error and the server keeps serving, a
//! failing platform is named in the tool error while another connector answers, and a
//! call over the request time-out names the platform it waited for.

use crate::support;

use serde_json::json;
use support::{Mcp, Server, config, fakes, structured, temp_dir};

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
