//! Hardening: one regression test per finding, each through the
//! server as a hostile client or a hostile platform would meet it, and each failing
//! without its fix.
//!
//! - 5: a platform answer over its cap is refused, naming the platform, the size and
//!   the cap, and is never read whole (the fake counts what it handed the connection);
//! - 6: an over-long argument is refused locally, briefly, without echoing it; no tool
//!   error carries an internal address;
//! - 7: an id is exactly one path segment (`.` and `..` refused, the rest encoded, as the
//!   fake sees it);
//! - 8: `tk_search` accepts only continuations BesluitBron issued (still read for one
//!   release), and asks a later page from the typed search and its own `$skip`;
//! - 9: malformed-but-JSON messages get 400 with a JSON-RPC error; DELETE of an unknown
//!   session is 404; `/healthz`, `/readyz` and `/metrics` check the Host; a 404 answering
//!   a search is not "not found"; logs to a pipe carry no colour codes, and JSON logs
//!   are one object per line.

use crate::support;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::Duration;

use besluitbron_fakes::Oversize;
use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, structured, temp_dir, tool_error_text};

/// Waits (on the condition, at most 10 s) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn platform_call_lines(server: &Server) -> Vec<String> {
    server
        .state
        .metrics()
        .render()
        .lines()
        .filter(|l| l.contains("platform_calls") && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

const CAP: u64 = 64 * 1024;
const HUGE: u64 = 256 * 1024 * 1024;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_11_item_5_an_oversized_answer_is_refused_and_never_read_whole() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("oversize"));
    cfg.platforms.get_mut("obv").expect("obv").max_body_bytes = CAP;
    let server = Server::start(cfg).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/obv")).await;
    let id = "motion:notubiz:provincie:noord-brabant:80501";

    // Chunked, size unknown: reading stops at the cap.
    f.obv.set_oversize(Some(Oversize {
        bytes: HUGE,
        announce_length: false,
    }));
    let before = f.obv.requests();
    let text = tool_error_text(&mcp.call("obv_document", json!({"id": id})).await);
    assert!(
        text.starts_with("OpenBesluitvorming sent an answer of more than 65536 bytes, more than the 65536 bytes"),
        "{text}"
    );
    assert_eq!(f.obv.requests(), before + 1, "not retried");
    until("the fake's oversized body is dropped", || {
        f.obv.oversize_bodies_open() == 0
    })
    .await;
    let sent = f.obv.oversize_bytes_sent();
    assert!(
        sent < HUGE / 8,
        "BesluitBron stopped reading at its cap: the fake handed over {sent} of {HUGE} bytes"
    );

    // Announced: refused before the body is read, naming the size.
    f.obv.set_oversize(Some(Oversize {
        bytes: HUGE,
        announce_length: true,
    }));
    let text = tool_error_text(&mcp.call("obv_document", json!({"id": id})).await);
    assert!(
        text.starts_with("OpenBesluitvorming sent an answer of 268435456 bytes, more than the 65536 bytes"),
        "{text}"
    );
    until("the announced body is dropped", || f.obv.oversize_bodies_open() == 0).await;
    assert!(f.obv.oversize_bytes_sent() - sent < HUGE / 8);

    // Nothing failed was kept: the platform answers again, and so does the tool.
    f.obv.set_oversize(None);
    structured(&mcp.call("obv_document", json!({"id": id})).await);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_11_item_6_long_arguments_are_refused_locally_and_errors_carry_no_address() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("long-arguments"));
    // Tweede Kamer at a loopback port nobody listens on: its errors are connection errors.
    cfg.platforms.get_mut("tk").expect("tk").base_url = "http://127.0.0.1:1/tk/OData/v4/2.0".to_owned();
    let server = Server::start(cfg).await;
    let mut mcp = Mcp::initialize(server.url("/mcp")).await;

    let (requests, calls) = (f.obv.requests(), platform_call_lines(&server));
    let reply = mcp.call("obv_search", json!({"query": "x".repeat(1_000_000)})).await;
    let text = tool_error_text(&reply);
    assert_eq!(
        text,
        "obv_search: `query` is 1000000 characters long; at most 500 are accepted: shorten it (nothing asked of \
         OpenBesluitvorming; see the tool's inputSchema)"
    );
    assert_eq!(f.obv.requests(), requests, "no platform request");
    assert_eq!(platform_call_lines(&server), calls, "not counted as a platform call");

    // A value of the wrong type is not echoed either, whoever reports it.
    let reply = mcp
        .call("obv_search", json!({"query": "fiets", "limit": "9".repeat(100_000)}))
        .await;
    assert!(reply.text.len() < 2_000, "a short answer: {} bytes", reply.text.len());
    assert!(!reply.text.contains("99999999"), "{}", reply.text);
    let reply = mcp
        .call("obv_search", json!({"query": "fiets", "limit": "9".repeat(1000)}))
        .await;
    assert!(
        reply.text.len() < 2_000 && !reply.text.contains(&"9".repeat(200)),
        "{}",
        reply.text
    );

    // A platform's connection error names neither its address nor the request URL.
    let text = tool_error_text(&mcp.call("tk_search", json!({"query": "stikstof"})).await);
    assert!(text.starts_with("Tweede Kamer is unreachable"), "{text}");
    assert!(!text.contains("127.0.0.1") && !text.contains("http"), "{text}");
    assert!(text.contains("<address>") || !text.contains("url"), "{text}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_11_item_7_an_id_is_exactly_one_path_segment_at_the_platform() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("segments"))).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/obv")).await;
    for id in [".", "..", " .. "] {
        let before = f.obv.requests();
        let text = tool_error_text(&mcp.call("obv_document", json!({"id": id})).await);
        assert!(text.contains("invalid_id"), "`{id}`: {text}");
        assert_eq!(f.obv.requests(), before, "`{id}`: nothing sent");
    }
    for (id, path) in [
        ("a/b?c#d", "/api/entities/a%2Fb%3Fc%23d"),
        ("...", "/api/entities/..."),
        ("../../api/sources", "/api/entities/..%2F..%2Fapi%2Fsources"),
    ] {
        let text = tool_error_text(&mcp.call("obv_document", json!({"id": id})).await);
        assert!(text.contains("has no entity"), "`{id}`: {text}");
        assert_eq!(f.obv.recent_paths().last().map(String::as_str), Some(path), "`{id}`");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_11_item_8_tk_search_accepts_only_continuations_it_issued() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("continuations"))).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/tk")).await;
    let base = f.tk.base_url().to_owned();
    let root = base.trim_end_matches("/tk/OData/v4/2.0").to_owned();
    for forged in [
        format!("{base}/Document?$filter=true&$top=100000"),
        format!("{base}/Document?$filter=true&$top=100000&$expand=*"),
        format!("{base}/Document?$expand=*"),
        format!("{base}/Document?$apply=groupby((Soort),aggregate($count%20as%20n))"),
        format!("{base}/Document?$skip=250"),
        "http://example.org/OData/v4/2.0/Document?$skip=250".to_owned(),
        format!("{root}/obv/api/sources"),
        format!("{base}/Zaak?$skip=250"),
        "tk1.eyJzZXQiOiJEb2N1bWVudCJ9".to_owned(),
    ] {
        let before = f.tk.requests();
        let text = tool_error_text(
            &mcp.call("tk_search", json!({"query": "stikstof", "continuation": forged}))
                .await,
        );
        assert!(
            text.starts_with("Tweede Kamer continuation refused"),
            "{forged}: {text}"
        );
        assert!(!text.contains("http"), "{forged}: {text}");
        assert_eq!(f.tk.requests(), before, "{forged}: nothing sent");
    }
    // A later page is asked from the typed search and a `$skip` BesluitBron computes.
    let first = structured(&mcp.call("tk_search", json!({"query": "stikstof", "limit": 250})).await);
    assert_eq!(first["next_offset"], 250, "{first}");
    let second = structured(
        &mcp.call("tk_search", json!({"query": "stikstof", "offset": 250, "limit": 250}))
            .await,
    );
    assert_ne!(first["results"], second["results"], "the next page");
    let asked = f.tk.recent_paths().pop().expect("a request");
    assert!(asked.contains("%24skip=250"), "{asked}");
    for option in ["%24top", "%24expand", "%24apply"] {
        assert!(!asked.contains(option), "{asked}");
    }
    let before = f.tk.requests();
    let text = tool_error_text(
        &mcp.call("tk_search", json!({"query": "stikstof", "offset": 20_000_000}))
            .await,
    );
    assert!(text.contains("`offset`"), "{text}");
    assert_eq!(f.tk.requests(), before, "a far offset is refused before any request");
    server.stop().await;
}

/// Sends `body` as a JSON POST within `session`, returning status, content type and JSON.
async fn post_json(url: &str, session: &str, body: Vec<u8>) -> (u16, String, Option<Value>) {
    let r = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", session)
        .body(body)
        .send()
        .await
        .expect("send");
    let status = r.status().as_u16();
    let content_type = r
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_owned();
    let text = r.text().await.unwrap_or_default();
    (status, content_type, serde_json::from_str(&text).ok())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_11_item_9_malformed_messages_sessions_hosts_and_search_404s() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("item-9"));
    // Tweede Kamer at a path of the fakes' listener that answers 404 to everything.
    let root = f.tk.base_url().trim_end_matches("/tk/OData/v4/2.0").to_owned();
    cfg.platforms.get_mut("tk").expect("tk").base_url = format!("{root}/moved/OData/v4/2.0");
    let server = Server::start(cfg).await;
    let url = server.url("/mcp/obv");
    let mcp = Mcp::initialize(url.clone()).await;
    let session = mcp.session.clone().expect("a session");

    let deep = format!("{}1{}", "[".repeat(5000), "]".repeat(5000));
    let mut not_utf8 = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"x":""#.to_vec();
    not_utf8.extend_from_slice(&[0xff, 0xfe]);
    not_utf8.extend_from_slice(br#""}}"#);
    let cases: Vec<(&str, Vec<u8>, &[i64])> = vec![
        ("an object id", br#"{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}"#.to_vec(), &[-32600]),
        ("a fractional id", br#"{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}"#.to_vec(), &[-32600]),
        ("a boolean id", br#"{"jsonrpc":"2.0","id":true,"method":"tools/list"}"#.to_vec(), &[-32600]),
        (
            "string params",
            br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":"obv_search"}"#.to_vec(),
            &[-32600, -32602],
        ),
        (
            "array params",
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":[1,2]}"#.to_vec(),
            &[-32600, -32602],
        ),
        (
            "numeric params",
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":5}"#.to_vec(),
            &[-32600, -32602],
        ),
        (
            "deep nesting",
            format!(r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"obv_search","arguments":{{"query":{deep}}}}}}}"#)
                .into_bytes(),
            &[-32600, -32602, -32700],
        ),
        ("invalid UTF-8", not_utf8, &[-32700]),
    ];
    for (what, body, codes) in cases {
        let (status, content_type, message) = post_json(&url, &session, body).await;
        assert_eq!(status, 400, "{what}");
        assert!(content_type.starts_with("application/json"), "{what}: {content_type}");
        let message = message.unwrap_or_else(|| panic!("{what}: a JSON-RPC error"));
        assert_eq!(message["jsonrpc"], "2.0", "{what}: {message}");
        let code = message["error"]["code"].as_i64().unwrap_or(0);
        assert!(codes.contains(&code), "{what}: code {code} in {codes:?}: {message}");
    }

    // DELETE: of an unknown session 404, of this one accepted, of it again 404.
    let delete = |id: String| {
        let url = url.clone();
        async move {
            reqwest::Client::new()
                .delete(url)
                .header("mcp-session-id", id)
                .header("mcp-protocol-version", "2025-06-18")
                .send()
                .await
                .expect("delete")
                .status()
                .as_u16()
        }
    };
    assert_eq!(delete("no-such-session".to_owned()).await, 404);
    let ended = delete(session.clone()).await;
    assert!((200..300).contains(&ended), "the session's own DELETE: {ended}");
    assert_eq!(delete(session).await, 404, "an already-deleted session");

    // The routes beside MCP's check the Host as MCP's do.
    let http = reqwest::Client::new();
    for path in ["/healthz", "/readyz", "/metrics", "/mcp/obv"] {
        let evil = http
            .get(server.url(path))
            .header("host", "evil.example")
            .send()
            .await
            .expect("get");
        assert_eq!(evil.status().as_u16(), 403, "{path} with another Host");
    }
    for path in ["/healthz", "/readyz", "/metrics"] {
        let own = http.get(server.url(path)).send().await.expect("get");
        assert_eq!(own.status().as_u16(), 200, "{path} with its own Host");
    }

    // A 404 answering a search is the platform's trouble, not a missing record.
    let mut tk = Mcp::initialize(server.url("/mcp/tk")).await;
    let text = tool_error_text(
        &tk.call("tk_search", json!({"query": "stikstof", "kind": "cases"}))
            .await,
    );
    assert!(text.contains("Tweede Kamer answered HTTP 404"), "{text}");
    assert!(!text.contains("has no ") && !text.contains("check the id"), "{text}");
    server.stop().await;
}

/// The first `n` lines the server writes to stderr (a pipe) with `args`.
fn first_log_lines(args: &[&str], n: usize) -> Vec<String> {
    let dir = temp_dir("logs");
    let mut child = Command::new(env!("CARGO_BIN_EXE_besluitbron"))
        .args(args)
        .args(["serve", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(&dir)
        .args(["--platform-url", "obv=http://127.0.0.1:1/obv"])
        .args(["--platform-url", "tk=http://127.0.0.1:1/tk/OData/v4/2.0"])
        .env("BesluitBron__StatusRefreshSecs", "0")
        .env("RUST_LOG", "info,rmcp=warn")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the server");
    let stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok).take(n) {
            let _ = tx.send(line);
        }
    });
    // A server that logs nowhere else must not hang the test: at most 30 s for the lines.
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let mut lines = Vec::new();
    while lines.len() < n {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => lines.push(line),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(lines.len(), n, "{n} log lines on stderr: {lines:?}");
    lines
}

#[test]
fn regression_issue_11_item_9_logs_to_a_pipe_are_plain_and_json_logs_are_one_object_per_line() {
    let text = first_log_lines(&[], 1);
    assert!(text[0].contains("besluitbron listening"), "{text:?}");
    assert!(!text[0].contains('\u{1b}'), "no colour codes in a pipe: {text:?}");
    let json = first_log_lines(&["--log-format", "json"], 1);
    let line: Value = serde_json::from_str(&json[0]).unwrap_or_else(|e| panic!("{e}: {json:?}"));
    assert_eq!(line["level"], "INFO", "{line}");
    assert!(
        line["fields"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("besluitbron listening")),
        "{line}"
    );
}
