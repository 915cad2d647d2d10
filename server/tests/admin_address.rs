//! `/metrics` and `/status.json` answer whatever `Origin` a
//! request carries, so an installation may serve them on an administrative address of
//! their own (`AdminListen`) and nowhere else; the pages, `/healthz` and `/readyz` stay
//! on `Listen`, and the administrative address checks the Host as every route does.

use crate::support;

use support::{Server, config, fakes, temp_dir};

async fn get(url: &str, headers: &[(&str, &str)]) -> (u16, String) {
    let mut request = reqwest::Client::new().get(url);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let r = request.send().await.expect("get");
    let status = r.status().as_u16();
    (status, r.text().await.unwrap_or_default())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_metrics_and_status_json_move_to_the_administrative_address() {
    let f = fakes().await;
    let origin = [("origin", "https://evil.example")];

    // Without the setting: on `Listen`, as before, whatever the Origin.
    let server = Server::start(config(&f, &temp_dir("admin-off"))).await;
    assert_eq!(server.state.admin_address(), None);
    let (status, text) = get(&server.url("/metrics"), &origin).await;
    assert_eq!(status, 200, "{text}");
    assert_eq!(get(&server.url("/status.json"), &origin).await.0, 200);
    server.stop().await;

    // With it: there only.
    let mut cfg = config(&f, &temp_dir("admin-on"));
    cfg.admin_listen = Some("127.0.0.1:0".parse().unwrap());
    let server = Server::start(cfg).await;
    let admin = server
        .state
        .admin_address()
        .expect("the administrative address is bound");
    assert_ne!(admin.port(), 0);
    assert_ne!(admin, server.addr);
    let admin_url = |path: &str| format!("http://{admin}{path}");
    for path in ["/metrics", "/status.json"] {
        let (status, text) = get(&server.url(path), &origin).await;
        assert_eq!(status, 404, "{path} is not on Listen: {text}");
        let (status, text) = get(&server.url(path), &[]).await;
        assert_eq!(status, 404, "{path} is not on Listen, with no Origin either: {text}");
    }
    let (status, metrics) = get(&admin_url("/metrics"), &[]).await;
    assert_eq!(status, 200, "{metrics}");
    assert!(metrics.contains("besluitbron_"), "{metrics}");
    let (status, json) = get(&admin_url("/status.json"), &[]).await;
    assert_eq!(status, 200, "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert!(v["platforms"].as_array().is_some_and(|p| !p.is_empty()), "{v}");
    for path in ["/healthz", "/readyz"] {
        assert_eq!(get(&admin_url(path), &[]).await.0, 200, "{path} on the admin address");
        assert_eq!(get(&server.url(path), &[]).await.0, 200, "{path} on Listen");
    }
    // The pages stay where people reach them.
    assert_eq!(get(&server.url("/status"), &[]).await.0, 200);
    assert_eq!(get(&server.url("/"), &[]).await.0, 200);
    // The administrative address checks the Host (DNS rebinding) as every route does.
    let (status, _) = get(&admin_url("/metrics"), &[("host", "evil.example")]).await;
    assert_eq!(status, 403);
    server.stop().await;
    // Stopped with the server.
    assert!(
        reqwest::get(admin_url("/metrics")).await.is_err(),
        "the administrative address closes on shutdown"
    );

    // It must be an address of its own.
    let mut same = config(&f, &temp_dir("admin-same"));
    same.admin_listen = Some(same.listen);
    let error = same.validated().expect_err("AdminListen equal to Listen is refused");
    assert!(error.to_string().contains("AdminListen"), "{error}");
}

/// Fails the test instead of hanging; no answer is timed against it.
const HANG: std::time::Duration = std::time::Duration::from_secs(60);

async fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + HANG;
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "never: {what}");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
}

/// A 2026-07-28 (stateless) `tools/call` of `obv_search` to `url`: its HTTP status, or 0
/// when the connection was refused or closed.
async fn flood_call(http: reqwest::Client, url: String, n: usize) -> u16 {
    let body = serde_json::json!({
        "jsonrpc": "2.0", "id": n, "method": "tools/call",
        "params": {"name": "obv_search", "arguments": {"query": format!("vloed{n}"), "limit": 1},
            "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                      "io.modelcontextprotocol/clientCapabilities": {}}}
    });
    let sent = http
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "obv_search")
        .header("content-type", "application/json")
        .body(body.to_string())
        .send()
        .await;
    match sent {
        Ok(r) => r.status().as_u16(),
        Err(_) => 0,
    }
}

/// The administrative address answers `/metrics` and `/status.json` while the
/// public address is flooded beyond its limits — every connection it allows held by a
/// silent client, more refused with 503, and a burst of tool calls beyond the client
/// limits refused with 429 — because it is a listener of its own, outside the public
/// address's caps.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_administrative_address_answers_while_the_public_one_is_flooded() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let f = fakes().await;
    let mut cfg = config(&f, &temp_dir("admin-flood"));
    cfg.admin_listen = Some("127.0.0.1:0".parse().unwrap());
    cfg.connections.max_connections = 24;
    cfg.connections.max_connections_per_address = 24;
    cfg.connections.header_read_timeout_secs = 600;
    cfg.mcp_rate_limit.process.requests_per_minute = 60;
    cfg.mcp_rate_limit.process.burst = 10;
    let server = Server::start(cfg).await;
    let admin = server
        .state
        .admin_address()
        .expect("the administrative address is bound");
    let admin_get = |path: &str| {
        let url = format!("http://{admin}{path}");
        async move {
            let r = tokio::time::timeout(HANG, reqwest::Client::new().get(url).send())
                .await
                .expect("the administrative address answers")
                .expect("a response");
            (r.status().as_u16(), r.text().await.unwrap_or_default())
        }
    };

    // Requests beyond the client limits: a burst of tool calls, most refused with 429.
    let http = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let calls: Vec<_> = (0..60)
        .map(|n| tokio::spawn(flood_call(http.clone(), server.url("/mcp/obv"), n)))
        .collect();
    let mut statuses = Vec::new();
    for c in calls {
        statuses.push(c.await.expect("a flood call"));
    }
    // Each answered or refused clearly: 429 over the client limits, 503 over the
    // connection caps.
    assert!(
        statuses.iter().all(|s| [200, 429, 503].contains(s))
            && statuses.iter().filter(|s| **s != 200).count() >= 40
            && statuses.contains(&429),
        "the burst went beyond the client limits: {statuses:?}"
    );

    // Connections beyond the caps: every one allowed held by a silent client, more refused.
    let mut held = Vec::new();
    for _ in 0..24 {
        held.push(tokio::net::TcpStream::connect(server.addr).await.expect("connect"));
    }
    wait_for("every connection the public address allows is held", || {
        server.state.open_connections() == Some(24)
    })
    .await;
    let mut refused = 0;
    for _ in 0..16 {
        let mut more = tokio::net::TcpStream::connect(server.addr).await.expect("connect");
        more.write_all(format!("GET /healthz HTTP/1.1\r\nHost: {}\r\n\r\n", server.addr).as_bytes())
            .await
            .ok();
        let mut answer = Vec::new();
        let _ = tokio::time::timeout(HANG, more.read_to_end(&mut answer))
            .await
            .expect("a refused connection is closed");
        let answer = String::from_utf8_lossy(&answer);
        refused += usize::from(answer.starts_with("HTTP/1.1 503"));
    }
    assert_eq!(refused, 16, "every connection beyond the cap is refused with 503");

    // Meanwhile the administrative address answers, and says what the public one holds.
    let (status, metrics) = admin_get("/metrics").await;
    assert_eq!(status, 200, "{metrics}");
    assert!(metrics.contains("besluitbron_"), "{metrics}");
    let (status, json) = admin_get("/status.json").await;
    assert_eq!(status, 200, "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert!(v["platforms"].as_array().is_some_and(|p| !p.is_empty()), "{v}");
    for path in ["/healthz", "/readyz"] {
        assert_eq!(admin_get(path).await.0, 200, "{path} on the administrative address");
    }
    assert_eq!(
        server.state.open_connections(),
        Some(24),
        "the public address was still full while the administrative one answered"
    );

    // Once the flood lets go, the public address answers again.
    drop(held);
    wait_for("the held connections are let go", || {
        server.state.open_connections() == Some(0)
    })
    .await;
    assert_eq!(get(&server.url("/healthz"), &[]).await.0, 200);
    server.stop().await;
}
