//! Protocol plumbing the official conformance suite checks
//! (`scripts/conformance`), one regression test per item, each through the real server:
//!
//! - a browser page on the server's own loopback origin (`Host: 127.0.0.1:PORT`,
//!   `Origin: http://127.0.0.1:PORT`, also `localhost` and `[::1]`) is served in both
//!   protocol eras, while every foreign origin is still refused (DNS rebinding), and
//!   configured origins work as before;
//! - `DELETE` of a live session answers 200, as the reference servers do (rmcp's 202 made
//!   the Python SDK report "Session termination failed: 202"); the session is gone after it;
//! - arguments of a known tool that do not deserialize are a tool error the assistant can
//!   mend (naming the tool, what is wrong, and that no platform was asked), in both eras;
//!   an unknown tool stays a protocol error.

use crate::support;

use serde_json::json;
use support::{Mcp, Server, config, fakes, temp_dir};

/// The HTTP status of `tools/list` from a client in `era` that sends these `Host` and
/// `Origin` headers; for the session era, the status of its `initialize`.
async fn status_with(server: &Server, modern: bool, host: &str, origin: Option<&str>) -> u16 {
    let url = server.url("/mcp");
    let mut client = if modern { Mcp::modern(url) } else { Mcp::new(url) };
    client.extra_headers.push(("host".into(), host.to_owned()));
    if let Some(origin) = origin {
        client.extra_headers.push(("origin".into(), origin.to_owned()));
    }
    let body = if modern {
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    } else {
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "besluitbron-tests", "version": "1"}}})
    };
    let reply = client.post(body).await;
    if reply.status != 200 && reply.status != 403 {
        panic!("Host {host}, Origin {origin:?}: HTTP {} {}", reply.status, reply.text);
    }
    reply.status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_16_own_loopback_origin_is_served_and_foreign_origins_are_refused() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("origin"));
    // Every case of the session era opens a session.
    cfg.sessions.initialize_per_minute = 10_000;
    let server = Server::start(cfg).await;
    let port = server.addr.port();
    for modern in [false, true] {
        let era = if modern { "2026-07-28" } else { "2025-11-25" };
        for name in ["127.0.0.1", "localhost", "[::1]", "LOCALHOST"] {
            let own = format!("{name}:{port}");
            assert_eq!(
                status_with(&server, modern, &own, Some(&format!("http://{own}"))).await,
                200,
                "{era}: a page of {own} itself"
            );
        }
        // Without an Origin (not a browser), as before.
        let own = format!("127.0.0.1:{port}");
        assert_eq!(status_with(&server, modern, &own, None).await, 200, "{era}: no Origin");
        let refused = [
            // DNS rebinding: another site's page, whatever Host it reaches us with.
            (own.clone(), "http://evil.example".to_owned()),
            ("evil.example".to_owned(), "http://evil.example".to_owned()),
            (format!("evil.example:{port}"), format!("http://evil.example:{port}")),
            // Another port of this machine is another origin (another local program).
            (own.clone(), format!("http://127.0.0.1:{}", port.wrapping_add(1))),
            (own.clone(), "http://127.0.0.1".to_owned()),
            (own.clone(), "http://localhost:3000".to_owned()),
            // The same name and port, but not what the browser connected to, or not
            // this scheme, or not an origin at all.
            (own.clone(), format!("http://localhost:{port}")),
            (own.clone(), format!("https://127.0.0.1:{port}")),
            (own.clone(), format!("http://user@127.0.0.1:{port}")),
            (own.clone(), format!("http://127.0.0.1:{port}/page")),
            (own.clone(), "null".to_owned()),
        ];
        for (host, origin) in refused {
            assert_eq!(
                status_with(&server, modern, &host, Some(&origin)).await,
                403,
                "{era}: Host {host}, Origin {origin}"
            );
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_16_configured_origins_work_as_before_beside_the_own_origin() {
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("origin-configured"));
    cfg.allowed_origins = vec!["https://assistant.example".to_owned()];
    let server = Server::start(cfg).await;
    let own = format!("127.0.0.1:{}", server.addr.port());
    for modern in [false, true] {
        let cases = [
            ("https://assistant.example".to_owned(), 200),
            (format!("http://{own}"), 200),
            ("https://other.example".to_owned(), 403),
            ("http://evil.example".to_owned(), 403),
        ];
        for (origin, want) in cases {
            assert_eq!(
                status_with(&server, modern, &own, Some(&origin)).await,
                want,
                "modern {modern}: Origin {origin}"
            );
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_16_delete_of_a_live_session_answers_200_and_ends_it() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("delete"))).await;
    for path in ["/mcp", "/mcp/obv"] {
        let mcp = Mcp::initialize(server.url(path)).await;
        let session = mcp.session.clone().expect("a session");
        assert_eq!(
            mcp.post(json!({"jsonrpc": "2.0", "id": 5, "method": "ping"}))
                .await
                .status,
            200
        );
        let delete = || async {
            reqwest::Client::new()
                .delete(server.url(path))
                .header("mcp-session-id", &session)
                .header("mcp-protocol-version", "2025-11-25")
                .send()
                .await
                .expect("delete")
        };
        let ended = delete().await;
        assert_eq!(ended.status().as_u16(), 200, "{path}: the session's own DELETE");
        assert_eq!(ended.text().await.expect("body"), "", "{path}: no body");
        // The session is gone: named again, it is unknown.
        let after = mcp.post(json!({"jsonrpc": "2.0", "id": 6, "method": "ping"})).await;
        assert_eq!(
            after.status, 404,
            "{path}: a request of the ended session: {}",
            after.text
        );
        assert_eq!(delete().await.status().as_u16(), 404, "{path}: DELETE once more");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_16_arguments_that_do_not_deserialize_are_a_tool_error_naming_the_tool() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("bad-arguments"))).await;
    for modern in [false, true] {
        let url = server.url("/mcp");
        let mut mcp = if modern {
            Mcp::modern(url)
        } else {
            Mcp::initialize(url).await
        };
        let before = f.obv.requests();
        for (what, args, says) in [
            ("a negative limit", json!({"query": "woningbouw", "limit": -1}), "limit"),
            (
                "a string limit",
                json!({"query": "woningbouw", "limit": "ten"}),
                "limit",
            ),
            (
                "an unknown argument",
                json!({"query": "woningbouw", "colour": "red"}),
                "colour",
            ),
        ] {
            let reply = mcp.call("obv_search", args).await;
            let message = reply
                .message
                .unwrap_or_else(|| panic!("{what}: an answer: {}", reply.text));
            assert!(
                message.get("error").is_none(),
                "{what}: a tool error, not a protocol error: {message}"
            );
            let result = &message["result"];
            assert_eq!(result["isError"], json!(true), "{what}: {result}");
            let text = result["content"][0]["text"].as_str().unwrap_or("");
            assert!(text.starts_with("obv_search: "), "{what}: names the tool: {text}");
            assert!(text.contains(says), "{what}: says what is wrong: {text}");
            assert!(
                text.contains("inputSchema"),
                "{what}: says where the right form is: {text}"
            );
            assert!(
                text.contains("nothing asked of OpenBesluitvorming"),
                "{what}: says nothing was asked of the platform: {text}"
            );
        }
        assert_eq!(
            f.obv.requests(),
            before,
            "no platform request for arguments that do not fit"
        );
        // An unknown tool is the protocol's error.
        let reply = mcp.call("obv_nothing", json!({})).await;
        let message = reply.message.expect("an answer");
        assert!(
            message.get("error").is_some(),
            "an unknown tool is a protocol error: {message}"
        );
    }
    server.stop().await;
}
