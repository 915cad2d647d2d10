//! What a hostile client can hold, and for how long (issue "Hardening…", items 1–3):
//! silent and half-sent connections are closed after their time-out, connections and
//! event streams are capped, and shutdown ends even while a client holds a half-sent
//! request. Each test failed against `axum::serve` without timers or caps.
//!
//! Time-outs are set to a second or two here; the waits are bounded by a generous
//! `tokio::time::timeout` only so that a regression fails instead of hanging.

use crate::support;

use std::time::Duration;

use serde_json::json;
use support::{Mcp, Server, config, fakes, temp_dir};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Fails the test instead of hanging when a connection is held past any reasonable bound.
const HANG: Duration = Duration::from_secs(30);

/// Reads until the server closes the connection; returns what it sent.
async fn read_to_close(tcp: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let read = tokio::time::timeout(HANG, tcp.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server held the connection open past {HANG:?}");
    String::from_utf8_lossy(&out).into_owned()
}

fn host(server: &Server) -> String {
    format!("Host: {}\r\n", server.addr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_silent_and_half_sent_headers_are_closed_after_the_header_time_out() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("slowloris"));
    cfg.connections.header_read_timeout_secs = 1;
    let server = Server::start(cfg).await;

    // A connection that never sends a byte.
    let mut silent = TcpStream::connect(server.addr).await.unwrap();
    // A slowloris: a request line and part of the headers, then nothing.
    let mut slow = TcpStream::connect(server.addr).await.unwrap();
    slow.write_all(format!("POST /mcp HTTP/1.1\r\n{}X-Slow: ", host(&server)).as_bytes())
        .await
        .unwrap();
    read_to_close(&mut silent).await;
    read_to_close(&mut slow).await;

    // A keep-alive connection goes idle after an answer: closed the same way.
    let mut idle = TcpStream::connect(server.addr).await.unwrap();
    idle.write_all(format!("GET /healthz HTTP/1.1\r\n{}\r\n", host(&server)).as_bytes())
        .await
        .unwrap();
    let answered = read_to_close(&mut idle).await;
    assert!(answered.starts_with("HTTP/1.1 200"), "{answered}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_header_time_out_counts_from_the_last_answer_and_spares_a_long_one() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("idle-timer"));
    cfg.connections.header_read_timeout_secs = 1;
    let server = Server::start(cfg).await;

    // An event stream is one long answer: open for longer than the time-out, it stays.
    let url = server.url("/mcp/obv");
    let session = Mcp::initialize(url.clone()).await;
    let stream = reqwest::Client::new()
        .get(&session.url)
        .header("accept", "text/event-stream")
        .header("mcp-session-id", session.session.clone().unwrap())
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .unwrap();
    assert_eq!(stream.status(), 200);
    wait_for(|| server.state.open_streams() == 1).await;

    // A keep-alive connection that asks again within the time-out of each answer is
    // served for well past the time-out since it opened.
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    let ask = format!("GET /healthz HTTP/1.1\r\n{}\r\n", host(&server));
    let mut answered = 0;
    for _ in 0..4 {
        tcp.write_all(ask.as_bytes()).await.unwrap();
        let mut buf = [0u8; 512];
        let n = tokio::time::timeout(HANG, tcp.read(&mut buf)).await.unwrap().unwrap();
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
        answered += 1;
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    assert_eq!(answered, 4);
    // Then silent: closed after the time-out.
    assert!(read_to_close(&mut tcp).await.is_empty());
    assert_eq!(server.state.open_streams(), 1, "the stream outlived the time-out");
    drop(stream);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_a_body_without_its_last_chunk_is_answered_408() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("chunked"));
    cfg.connections.body_read_timeout_secs = 1;
    let server = Server::start(cfg).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    let head = format!(
        "POST /mcp HTTP/1.1\r\n{}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         Transfer-Encoding: chunked\r\n\r\n5\r\n{{\"jso\r\n",
        host(&server)
    );
    tcp.write_all(head.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let n = tokio::time::timeout(HANG, tcp.read(&mut buf))
        .await
        .expect("answered, not held")
        .unwrap();
    let answer = String::from_utf8_lossy(&buf[..n]);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("did not arrive within 1 s"), "{answer}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_connections_are_capped_per_address_and_overall_with_a_clear_refusal() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("conncap"));
    cfg.connections.header_read_timeout_secs = 60;
    cfg.connections.max_connections_per_address = 3;
    let server = Server::start(cfg).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(TcpStream::connect(server.addr).await.unwrap());
    }
    // The server counts a connection once it has accepted it: wait for all three.
    wait_for(|| server.state.open_connections() == Some(3)).await;
    let mut fourth = TcpStream::connect(server.addr).await.unwrap();
    fourth
        .write_all(format!("GET /healthz HTTP/1.1\r\n{}\r\n", host(&server)).as_bytes())
        .await
        .unwrap();
    let refused = read_to_close(&mut fourth).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.to_lowercase().contains("retry-after: 5"), "{refused}");
    assert!(refused.contains("3 open connections per client address"), "{refused}");
    // One of the three goes: the address may connect again.
    drop(held.pop());
    wait_for(|| server.state.open_connections() == Some(2)).await;
    let r = reqwest::get(server.url("/healthz")).await.unwrap();
    assert_eq!(r.status(), 200);
    drop(held);
    server.stop().await;

    let mut cfg = config(&f, &temp_dir("conncap-total"));
    cfg.connections.header_read_timeout_secs = 60;
    cfg.connections.max_connections = 2;
    let server = Server::start(cfg).await;
    let held: Vec<_> = [
        TcpStream::connect(server.addr).await.unwrap(),
        TcpStream::connect(server.addr).await.unwrap(),
    ]
    .into();
    wait_for(|| server.state.open_connections() == Some(2)).await;
    let mut third = TcpStream::connect(server.addr).await.unwrap();
    third
        .write_all(format!("GET /healthz HTTP/1.1\r\n{}\r\n", host(&server)).as_bytes())
        .await
        .unwrap();
    let refused = read_to_close(&mut third).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(
        refused.contains("as many connections open as it allows (2)"),
        "{refused}"
    );
    drop(held);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_shutdown_ends_while_a_client_holds_a_half_sent_request() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("halfsent"));
    cfg.connections.header_read_timeout_secs = 120;
    cfg.connections.body_read_timeout_secs = 120;
    cfg.connections.shutdown_grace_secs = 1;
    let server = Server::start(cfg).await;
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\n{}Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{{\"jsonrpc\"",
            host(&server)
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    wait_for(|| server.state.open_connections() == Some(1)).await;
    let stopped = tokio::time::timeout(HANG, server.stop()).await;
    assert!(stopped.is_ok(), "the half-sent request held the shutdown");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn during_the_drain_new_requests_get_503_with_retry_after_and_readyz_fails() {
    let f = fakes().await;
    f.obv.set_latency(Duration::from_secs(3));
    let server = Server::start(config(&f, &temp_dir("drain"))).await;
    let url = server.url("/mcp/obv");
    let mut slow = Mcp::modern(url.clone());
    let running = tokio::spawn(async move { slow.call("obv_search", json!({"query": "traag"})).await });
    wait_for(|| server.state.running_calls() == 1).await;
    let state = std::sync::Arc::clone(&server.state);
    let addr = server.addr;
    let stopping = tokio::spawn(server.stop());
    wait_for(|| !state.is_accepting()).await;
    // A new connection during the drain is served, and told to come back.
    let late = Mcp::modern(format!("http://{addr}/mcp/obv"));
    let r = late
        .post(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"}))
        .await;
    assert_eq!(r.status, 503, "{}", r.text);
    assert!(r.headers.contains_key("retry-after"));
    let ready = reqwest::get(format!("http://{addr}/readyz")).await.unwrap();
    assert_eq!(ready.status(), 503);
    // The running call finishes within the drain.
    let answer = running.await.unwrap();
    support::structured(&answer);
    tokio::time::timeout(HANG, stopping)
        .await
        .expect("shutdown ended")
        .unwrap();
}

/// A `search` answers when its time is up and leaves a slow platform's part asking; the
/// drain once ended without it (only tool calls were counted), so a shutdown right after
/// the answer cut that platform request off and its answer never reached the buffer: the
/// restarted server asked the platform again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_the_drain_waits_for_a_search_part_still_asking_after_the_answer() {
    let f = fakes().await;
    let dir = temp_dir("drainsearch");
    let mut cfg = config(&f, &dir);
    cfg.request_timeout_secs = 5; // search waits 3 s for the slowest
    f.obv.set_latency(Duration::from_secs(4));
    let server = Server::start(cfg.clone()).await;
    let mut c = Mcp::modern(server.url("/mcp"));
    let r = c.call("search", json!({"query": "nagekomen"})).await;
    assert_eq!(support::search_groups(&r)["obv"]["status"], "pending");
    assert_eq!(
        server.state.running_calls(),
        1,
        "obv's part asks on after the search answered, and counts as running"
    );
    let asked = f.obv.requests();
    tokio::time::timeout(HANG, server.stop()).await.expect("shutdown ended");
    // Started again on the same buffers: obv's answer is there, obv is not asked again.
    f.obv.set_latency(Duration::ZERO);
    let server = Server::start(cfg).await;
    let mut c = Mcp::modern(server.url("/mcp"));
    let r = c.call("search", json!({"query": "nagekomen"})).await;
    let groups = support::search_groups(&r);
    assert_eq!(groups["obv"]["status"], "ok", "{groups:?}");
    assert_eq!(f.obv.requests(), asked, "obv's answer came from the buffer");
    server.stop().await;
}

/// The drain once ended as soon as no tool call ran; a message admitted before it, whose
/// answer was not yet sent (its call just ended, or its body still arriving), was then
/// cut off by the shutdown with rmcp's 500 "no response message received from handler".
/// A CI run hit the first case; the second one fails without the wait every time.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_a_message_admitted_before_the_drain_is_answered_in_full() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("drainbody"))).await;
    let body = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {
        "name": "obv_search", "arguments": {"query": "onderweg"},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let (first, rest) = body.split_at(body.len() / 2);
    let mut tcp = TcpStream::connect(server.addr).await.unwrap();
    tcp.write_all(
        format!(
            "POST /mcp/obv HTTP/1.1\r\n{}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
             MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: obv_search\r\n\
             Connection: close\r\nContent-Length: {}\r\n\r\n{first}",
            host(&server),
            body.len()
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    wait_for(|| server.state.answers_under_way() == 1).await;
    assert_eq!(
        server.state.running_calls(),
        0,
        "the call has not begun: its body is on its way"
    );
    let state = std::sync::Arc::clone(&server.state);
    let stopping = tokio::spawn(server.stop());
    wait_for(|| !state.is_accepting()).await;
    tcp.write_all(rest.as_bytes()).await.unwrap();
    let answer = read_to_close(&mut tcp).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        answer.contains("\"result\"") && !answer.contains("\"error\""),
        "{answer}"
    );
    assert!(answer.contains("onderweg"), "the answer is the search's own: {answer}");
    tokio::time::timeout(HANG, stopping)
        .await
        .expect("shutdown ended")
        .unwrap();
    assert_eq!(state.answers_under_way(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_event_streams_are_capped_per_session_and_per_address() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("streams"));
    cfg.connections.max_streams_per_session = 2;
    cfg.connections.max_streams_per_address = 3;
    let server = Server::start(cfg).await;
    let url = server.url("/mcp/obv");
    let a = Mcp::initialize(url.clone()).await;
    let b = Mcp::initialize(url.clone()).await;
    let open = |c: &Mcp| {
        let request = reqwest::Client::new()
            .get(&c.url)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", c.session.clone().unwrap())
            .header("mcp-protocol-version", "2025-06-18");
        async move { request.send().await.unwrap() }
    };
    let s1 = open(&a).await;
    let s2 = open(&a).await;
    assert_eq!((s1.status().as_u16(), s2.status().as_u16()), (200, 200));
    let s3 = open(&a).await;
    assert_eq!(s3.status(), 429);
    assert!(s3.text().await.unwrap().contains("2 open event streams per session"));
    // Another session of the same address: one more fits the address's three.
    let t1 = open(&b).await;
    assert_eq!(t1.status(), 200);
    let t2 = open(&b).await;
    assert_eq!(t2.status(), 429);
    assert!(
        t2.text()
            .await
            .unwrap()
            .contains("3 open event streams per client address")
    );
    // A stream that goes frees its place.
    drop(s1);
    wait_for(|| server.state.open_streams() == 2).await;
    let again = open(&b).await;
    assert_eq!(again.status(), 200);
    drop((s2, t1, again));
    server.stop().await;
}

#[test]
fn the_open_files_limit_is_raised_to_what_the_system_allows() {
    let before = rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap();
    let now = besluitbron_server::listen::raise_open_files_limit().expect("raised or kept");
    assert!(now >= before.0, "never lowered: {now} < {}", before.0);
    assert_eq!(rlimit::getrlimit(rlimit::Resource::NOFILE).unwrap().0, now);
}

/// Waits until `condition` holds, checking every few milliseconds; fails after [`HANG`].
async fn wait_for(mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + HANG;
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "the condition never held");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}
