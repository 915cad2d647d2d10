//! A hostile platform while replicas run: three in-process replicas on one
//! redis-server of the test's own; a follower forwards its OpenBesluitvorming calls to
//! the owner, whose platform answers garbage. The follower's client gets the tool error
//! naming the platform, short and without addresses; nothing of the failure is kept on
//! either replica (once the platform is itself again, the same question reaches it and
//! is answered); another platform is served on the follower meanwhile; the process's
//! memory stays bounded.
//!
//! A test binary of its own (`Cargo.toml`): it asserts the peak resident memory of its
//! process, which the other tests would add to in a shared one.

mod support;

use std::time::Duration;

use besluitbron_fakes::HostileBody;
use besluitbron_server::config::ClusterConfig;
use serde_json::json;
use support::redis::RedisServer;
use support::{Fakes, Mcp, Server, eventually, fakes, structured, temp_dir, tool_error_text};

const TTL_MS: u64 = 1_000;

async fn replica(f: &Fakes, redis: &RedisServer, name: &str) -> Server {
    let mut config = support::config(f, &temp_dir(name));
    config.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    config.cluster = Some(ClusterConfig {
        redis: redis.url(),
        internal_listen: "127.0.0.1:0".parse().unwrap(),
        internal_url: String::new(),
        secret: "a-test-secret-of-the-cluster".to_owned(),
        lease_ttl_ms: TTL_MS,
    });
    for p in config.platforms.values_mut() {
        // Long enough for a healthy answer on a busy machine; a drip runs out of it.
        p.timeout_ms = 3_000;
    }
    Server::start(config).await
}

fn owns(s: &Server) -> bool {
    s.state
        .cluster()
        .expect("a cluster node")
        .owns_now(besluitbron_server::platforms::obv::PLATFORM)
}

/// Peak and current resident memory of this whole test process, in KiB (as
/// `hostile_platforms.rs` reads it; the soak reads `VmRSS` the same way).
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status is readable");
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("{name} in /proc/self/status"))
    };
    (field("VmHWM:"), field("VmRSS:"))
}

async fn call(url: String, client: usize, tool: &str, args: serde_json::Value) -> support::Reply {
    let mut c = Mcp::modern(url);
    c.extra_headers = vec![("x-forwarded-for".to_owned(), format!("198.51.100.{client}"))];
    c.call(tool, args).await
}

fn forwarded(metrics: &str) -> u64 {
    metrics
        .lines()
        .find_map(|l| l.strip_prefix("besluitbron_forwarded_calls_total{platform=\"obv\"} "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_forwarding_to_an_owner_whose_platform_answers_garbage() {
    let redis = RedisServer::start("hostile-owner");
    let f = fakes().await;
    let mut rs = Vec::new();
    for i in 0..3 {
        rs.push(replica(&f, &redis, &format!("hostile-owner-{i}")).await);
    }
    assert!(
        eventually(Duration::from_secs(3 * TTL_MS / 1000 + 5), async || rs
            .iter()
            .filter(|r| owns(r))
            .count()
            == 1)
        .await,
        "one replica owns obv"
    );
    let owner = rs.iter().position(owns).expect("an owner");
    let follower = &rs[(owner + 1) % 3];
    let url = follower.url("/mcp/obv");
    let name = besluitbron_server::platforms::obv::PLATFORM.display_name();

    let attacks = [
        ("garbage", None),
        ("an error object under a 200", Some(HostileBody::ErrorObject)),
        ("a truncated gzip", Some(HostileBody::TruncatedGzip)),
        ("an answer cut after a record", Some(HostileBody::CutAfterRecord)),
        ("a body dripping a byte a second", Some(HostileBody::Drip)),
    ];
    for (n, (what, hostile)) in attacks.into_iter().enumerate() {
        let args = json!({"query": format!("vijandig{n}"), "limit": 3});
        let forwarded_before = forwarded(
            &reqwest::get(follower.url("/metrics"))
                .await
                .unwrap()
                .text()
                .await
                .unwrap(),
        );
        match hostile {
            None => f.obv.set_garbage(true),
            Some(h) => f.obv.set_hostile(Some(h)),
        }
        let asked = f.obv.requests();
        let attacked = tokio::spawn(call(url.clone(), 10 + n, "obv_search", args.clone()));
        // Another platform is served on the follower meanwhile.
        let canary = call(
            follower.url("/mcp/tk"),
            100 + n,
            "tk_search",
            json!({"query": format!("kanarie{n}"), "limit": 1}),
        )
        .await;
        structured(&canary);
        let reply = attacked.await.expect("the attacked call");
        f.obv.set_garbage(false);
        f.obv.set_hostile(None);
        assert!(f.obv.requests() > asked, "{what}: the platform was asked");
        let text = tool_error_text(&reply);
        assert!(text.contains(name), "{what}: the error names {name}: {text}");
        assert!(
            text.len() <= 1_000 && !text.contains("127.0.0.1") && !text.contains(besluitbron_fakes::OFF_HOST),
            "{what}: a short error without addresses: {text}"
        );
        let metrics = reqwest::get(follower.url("/metrics"))
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        assert!(
            forwarded(&metrics) > forwarded_before,
            "{what}: the follower forwarded the call to the owner"
        );

        // Nothing of the failure was kept, on the follower or the owner: the same question
        // reaches the platform again and is answered.
        let asked = f.obv.requests();
        let again = call(url.clone(), 10 + n, "obv_search", args.clone()).await;
        let answer = structured(&again);
        assert!(answer["results"].is_array(), "{what}: answered after healing: {answer}");
        assert!(f.obv.requests() > asked, "{what}: the error was not replayed");
        let on_owner = call(rs[owner].url("/mcp/obv"), 200 + n, "obv_search", args).await;
        assert_eq!(structured(&on_owner), answer, "{what}: the owner says the same");
    }
    let (peak, now) = memory_kib();
    println!("peak RSS {peak} KiB, now {now} KiB");
    // Bodies are capped at `MaxBodyBytes` (16 MiB) per call, one call out at a time.
    assert!(
        peak < 1024 * 1024,
        "peak RSS {peak} KiB (now {now} KiB) stays under 1 GiB"
    );
    for r in rs {
        r.stop().await;
    }
}
