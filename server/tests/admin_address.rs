//! Issue 31 (the second probe): `/metrics` and `/status.json` answer whatever `Origin` a
//! request carries, so an installation may serve them on an administrative address of
//! their own (`AdminListen`) and nowhere else; the pages, `/healthz` and `/readyz` stay
//! on `Listen`, and the administrative address checks the Host as every route does.

mod support;

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
