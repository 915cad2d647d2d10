//! Client state shared by several replicas on one Redis (issue "Several replicas…"):
//! legacy MCP sessions wherever their requests land, a DELETE ending a session on every
//! replica, client limits across replicas (and their local fallback), the replay table
//! and the session cap. Each test starts its own `redis-server` and in-process replicas
//! against the counting fake platforms.

use crate::support;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::limits::{ClientLimitConfig, ClientLimits, RateLimit};
use besluitbron_core::time::Instant;
use besluitbron_server::app::{App, Hooks};
use besluitbron_server::config::{ClusterConfig, Config};
use besluitbron_server::engine::Engine;
use besluitbron_server::engine::limits::{Asking, SharedLimits};
use serde_json::json;
use support::redis::RedisServer;
use support::{Fakes, Mcp, Server, config, eventually, fakes, structured, temp_dir};

/// One in-process replica.
type Replica = Server;

/// Starts a replica of `config`; `gated: false` leaves rmcp's restore race open.
async fn replica(config: Config, gated: bool) -> Replica {
    let app = App::build_gated(config, Hooks::default(), gated).expect("build app");
    Server::serve(app, Duration::from_secs(2)).await
}

/// The sum of the metric lines of `r` that start with `needle`.
fn metric(r: &Replica, needle: &str) -> f64 {
    let text = r.state.metrics().render();
    text.lines()
        .filter(|l| l.starts_with(needle))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// A replica's configuration: the fakes, its own data directory, the test's Redis.
fn replica_config(f: &Fakes, redis: &RedisServer, name: &str) -> Config {
    let mut c = config(f, &temp_dir(name));
    c.cluster = Some(ClusterConfig {
        redis: redis.url(),
        internal_listen: SocketAddr::from(([127, 0, 0, 1], 0)),
        secret: "a-test-secret-of-enough-length".to_owned(),
        ..ClusterConfig::default()
    });
    c
}

async fn replicas(f: &Fakes, redis: &RedisServer, n: usize, edit: impl Fn(&mut Config)) -> Vec<Replica> {
    let mut out = Vec::new();
    for i in 0..n {
        let mut c = replica_config(f, redis, &format!("replica-{i}"));
        edit(&mut c);
        out.push(replica(c, true).await);
    }
    out
}

/// Ends `session` with a DELETE at `url`; the status.
async fn delete(url: &str, session: &str) -> u16 {
    reqwest::Client::new()
        .delete(url)
        .header("mcp-session-id", session)
        .header("mcp-protocol-version", "2025-06-18")
        .send()
        .await
        .expect("delete")
        .status()
        .as_u16()
}

async fn tools_list(c: &Mcp, id: i64) -> support::Reply {
    c.post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_whose_requests_alternate_between_replicas_works_throughout() {
    let redis = RedisServer::start("alternate");
    let f = fakes().await;
    let rs = replicas(&f, &redis, 3, |_| {}).await;
    let mut c = Mcp::initialize(rs[0].url("/mcp/obv")).await;
    for round in 0..9 {
        let r = &rs[round % 3];
        c.url = r.url("/mcp/obv");
        let listed = tools_list(&c, 1000 + round as i64).await;
        assert_eq!(listed.status, 200, "round {round}: {}", listed.text);
        let tools = listed.message.expect("answer")["result"]["tools"]
            .as_array()
            .cloned()
            .expect("tools");
        assert!(!tools.is_empty(), "round {round}");
        let answered = c
            .call("obv_search", json!({"query": format!("begroting {round}"), "limit": 2}))
            .await;
        assert_eq!(answered.status, 200, "round {round}: {}", answered.text);
        structured(&answered);
    }
    for r in &rs {
        assert_eq!(r.state.open_sessions().await, 1, "each replica holds its copy");
    }
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delete_on_one_replica_ends_the_session_on_all() {
    let redis = RedisServer::start("delete");
    let f = fakes().await;
    let rs = replicas(&f, &redis, 3, |_| {}).await;
    let mut c = Mcp::initialize(rs[0].url("/mcp/obv")).await;
    let session = c.session.clone().expect("a session");
    // C holds a copy too (restored on its first request).
    c.url = rs[2].url("/mcp/obv");
    assert_eq!(tools_list(&c, 1).await.status, 200);
    // B never saw the session, and ends it.
    assert_eq!(delete(&rs[1].url("/mcp/obv"), &session).await, 200);
    for (i, r) in [(0, &rs[0]), (2, &rs[2])] {
        c.url = r.url("/mcp/obv");
        let after = tools_list(&c, 10 + i).await;
        assert_eq!(after.status, 404, "replica {i} no longer serves it: {}", after.text);
        assert!(
            eventually(Duration::from_secs(5), async || r.state.open_sessions().await == 0).await,
            "replica {i} closed its copy"
        );
    }
    assert_eq!(delete(&rs[0].url("/mcp/obv"), &session).await, 404, "ended already");
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_per_session_limit_holds_across_replicas() {
    let redis = RedisServer::start("limit");
    let f = fakes().await;
    // Five requests at once, then one a minute: within this test, exactly five.
    let limit = |c: &mut Config| {
        c.mcp_rate_limit.per_session = RateLimit {
            requests_per_minute: 1,
            burst: 5,
        }
    };
    let rs = replicas(&f, &redis, 3, limit).await;
    let mut c = Mcp::initialize(rs[0].url("/mcp/obv")).await;
    // The initialized notification was the first of the five.
    let mut allowed = 1;
    let mut refused = 0;
    for i in 0..12 {
        c.url = rs[i % 3].url("/mcp/obv");
        let r = tools_list(&c, 100 + i as i64).await;
        match r.status {
            200 => allowed += 1,
            429 => {
                refused += 1;
                let retry: u64 = r.headers["retry-after"].to_str().unwrap().parse().unwrap();
                assert!((1..=60).contains(&retry), "an honest Retry-After: {retry}");
                assert!(r.text.contains("session request limit"), "{}", r.text);
            }
            other => panic!("unexpected {other}: {}", r.text),
        }
    }
    assert_eq!(allowed, 5, "three replicas allow what one does");
    assert_eq!(refused, 8);
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_on_another_replica_gets_the_first_result_without_a_second_platform_call() {
    let redis = RedisServer::start("replay");
    let f = fakes().await;
    let rs = replicas(&f, &redis, 2, |_| {}).await;
    // A JSON-RPC id within a legacy session.
    let mut c = Mcp::initialize(rs[0].url("/mcp/obv")).await;
    let first = c
        .call_with_id(7, "obv_search", json!({"query": "begroting", "limit": 3}))
        .await;
    let first_result = first.message.as_ref().expect("answer")["result"].clone();
    structured(&first);
    let asked = f.obv.requests();
    c.url = rs[1].url("/mcp/obv");
    let retry = c
        .call_with_id(7, "obv_search", json!({"limit": 3, "query": "begroting"}))
        .await;
    assert_eq!(retry.message.as_ref().expect("answer")["result"], first_result);
    assert_eq!(f.obv.requests(), asked, "the retry did not reach the platform");
    assert_eq!(rs[1].state.replay_counts().0, 1, "answered as a replay");
    let reused = c.call_with_id(7, "obv_search", json!({"query": "iets anders"})).await;
    assert_eq!(
        reused.message.as_ref().expect("answer")["error"]["code"],
        -32600,
        "{}",
        reused.text
    );

    // An Idempotency-Key of a stateless client.
    let mut a = Mcp::modern(rs[0].url("/mcp/obv"));
    a.extra_headers.push(("idempotency-key".into(), "retry-me-1".into()));
    let first = a
        .call_with_id(1, "obv_search", json!({"query": "subsidie", "limit": 2}))
        .await;
    let first_result = first.message.as_ref().expect("answer")["result"].clone();
    structured(&first);
    let asked = f.obv.requests();
    a.url = rs[1].url("/mcp/obv");
    let retry = a
        .call_with_id(2, "obv_search", json!({"query": "subsidie", "limit": 2}))
        .await;
    assert_eq!(retry.message.as_ref().expect("answer")["result"], first_result);
    assert_eq!(f.obv.requests(), asked, "the keyed retry did not reach the platform");
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_cap_counts_sessions_over_all_replicas() {
    let redis = RedisServer::start("cap");
    let f = fakes().await;
    let rs = replicas(&f, &redis, 3, |c| c.sessions.max_sessions = 2).await;
    let _a = Mcp::initialize(rs[0].url("/mcp/obv")).await;
    let _b = Mcp::initialize(rs[1].url("/mcp/tk")).await;
    let third = Mcp::new(rs[2].url("/mcp/obv"))
        .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .await;
    assert_eq!(third.status, 503, "{}", third.text);
    assert!(third.text.contains("as many MCP sessions"), "{}", third.text);
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn initialize_per_address_is_limited_across_replicas() {
    let redis = RedisServer::start("initialize");
    let f = fakes().await;
    // Twelve a minute: bursts of three.
    let rs = replicas(&f, &redis, 3, |c| c.sessions.initialize_per_minute = 12).await;
    let mut statuses = Vec::new();
    for i in 0..6 {
        let r = Mcp::new(rs[i % 3].url("/mcp/obv"))
            .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
            .await;
        statuses.push(r.status);
    }
    assert_eq!(statuses, [200, 200, 200, 429, 429, 429], "one burst over all replicas");
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_killed_limits_fall_back_to_local_ones_and_recover_after_a_restart() {
    let mut redis = RedisServer::start("fallback");
    let f = fakes().await;
    let rs = replicas(&f, &redis, 2, |_| {}).await;
    let c = Mcp::modern(rs[0].url("/mcp/obv"));
    assert_eq!(tools_list(&c, 1).await.status, 200);
    redis.kill();
    for i in 0..3 {
        let r = tools_list(&c, 10 + i).await;
        assert_eq!(r.status, 200, "served with the local limits: {}", r.text);
    }
    assert!(
        metric(&rs[0], "besluitbron_shared_state_fallbacks_total{what=\"limits\"}") >= 3.0,
        "{}",
        rs[0].state.metrics().render()
    );
    // A session opened before stays usable on its replica.
    redis.restart();
    assert!(
        eventually(Duration::from_secs(10), async || {
            tools_list(&c, 99).await.status == 200
                && redis.command::<i64>(&["EXISTS", "besluitbron:limit:connector:obv"]) == 1
        })
        .await,
        "the shared limits are used again after the restart"
    );
    let fallbacks = metric(&rs[0], "besluitbron_shared_state_fallbacks_total{what=\"limits\"}");
    assert_eq!(tools_list(&c, 100).await.status, 200);
    assert_eq!(
        metric(&rs[0], "besluitbron_shared_state_fallbacks_total{what=\"limits\"}"),
        fallbacks,
        "no fallback once Redis answers"
    );
    for r in rs {
        r.stop().await;
    }
}

/// Fires `n` concurrent first requests of each of `sessions` sessions (opened on `a`) at
/// the fresh replica `b`; the requests that failed, and the sessions `b` lost.
async fn restore_burst(a: &Replica, b: &Replica, sessions: usize, n: usize) -> (usize, usize) {
    let mut failed = 0;
    let mut lost = 0;
    for s in 0..sessions {
        let mut c = Mcp::initialize(a.url("/mcp/obv")).await;
        c.url = b.url("/mcp/obv");
        let c = Arc::new(c);
        let mut tasks = Vec::new();
        for i in 0..n {
            let c = Arc::clone(&c);
            tasks.push(tokio::spawn(async move {
                // Spread the arrivals over the restore's handshake (a few milliseconds).
                tokio::time::sleep(Duration::from_micros(100 * (i % 4) as u64)).await;
                let r = tools_list(&c, 10 + i as i64).await;
                (r.status, r.text)
            }));
        }
        for t in tasks {
            let (status, text) = t.await.expect("request task");
            if status != 200 {
                eprintln!("a first request failed: {status} {text}");
                failed += 1;
            }
        }
        if tools_list(&c, 1_000 + s as i64).await.status != 200 {
            lost += 1;
        }
    }
    (failed, lost)
}

/// rmcp 3.11 puts a restored session into its map before replaying the handshake; a
/// concurrent request of that session then reaches the session worker too early (500 or
/// 404, and the replica's copy is closed). The restore gate holds such requests until
/// the handshake is through.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_concurrent_first_requests_of_a_session_at_a_fresh_replica_all_succeed() {
    let redis = RedisServer::start("restore-race");
    let f = fakes().await;
    let ungated = std::env::var_os("BESLUITBRON_SHOW_RESTORE_RACE").is_some();
    // Hundreds of requests from one address in a second: roomy limits.
    let roomy = |name: &str| {
        let mut c = replica_config(&f, &redis, name);
        let r = RateLimit {
            requests_per_minute: 600_000,
            burst: 10_000,
        };
        c.mcp_rate_limit = ClientLimitConfig {
            process: r,
            per_connector: r,
            per_address: r,
            per_session: r,
            per_user: r,
            max_tracked: 10_000,
        };
        c.sessions.initialize_per_minute = 10_000;
        c
    };
    let a = replica(roomy("race-a"), true).await;
    let b = replica(roomy("race-b"), !ungated).await;
    let (failed, lost) = restore_burst(&a, &b, 40, 32).await;
    assert_eq!(
        (failed, lost),
        (0, 0),
        "of 40 × 32 concurrent first requests, none failed and no session was lost"
    );
    a.stop().await;
    b.stop().await;
}

/// The script's answers are the local limits' answers: allowed or not, the refusing
/// layer, the wait and `Retry-After` (times given to the script in place of `TIME`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qc_the_shared_limits_answer_as_the_local_limits() {
    let redis = RedisServer::start("gcra");
    let engine = Engine::new(&redis.url()).expect("url");
    const RPMS: [u32; 6] = [3, 8, 40, 60, 120, 600];
    let mut gen_state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move |m: u64| {
        gen_state ^= gen_state << 13;
        gen_state ^= gen_state >> 7;
        gen_state ^= gen_state << 17;
        gen_state % m
    };
    for case in 0..60 {
        let mut limit = || RateLimit {
            requests_per_minute: RPMS[next(RPMS.len() as u64) as usize],
            burst: next(6) as u32 + 1,
        };
        let config = ClientLimitConfig {
            process: limit(),
            per_connector: limit(),
            per_address: limit(),
            per_session: limit(),
            // Users are not asked here: the script's user layer is the address layer's.
            per_user: RateLimit {
                requests_per_minute: 600,
                burst: 6,
            },
            max_tracked: 1_000,
        };
        let roomy = RateLimit {
            requests_per_minute: 6_000_000,
            burst: 1_000_000,
        };
        let shared = SharedLimits::new(engine.clone(), config, roomy);
        let mut local = ClientLimits::new(config);
        let _: String = redis.command(&["FLUSHALL"]);
        let base_us: u64 = 1_700_000_000_000_000;
        let mut now_ms = 0u64;
        for step in 0..40 {
            now_ms += next(3_000);
            let connector = if next(2) == 0 { "obv" } else { "tk" };
            let who = next(6);
            let session = format!("s{who}");
            let address = format!("a{}", who % 2);
            let now = Instant::from_millis(now_ms);
            let want = local.check(
                now,
                connector,
                besluitbron_server::identity::fairness_key(Some(&session), &address).as_str(),
                &address,
            );
            let got = shared
                .admit_at(
                    Some(base_us + now_ms * 1_000),
                    now,
                    &Asking {
                        route: "obv",
                        connector,
                        session: Some(&session),
                        held: true,
                        address: &address,
                        user: None,
                        idle_ms: 60_000,
                    },
                )
                .await
                .expect("redis answers")
                .verdict;
            assert_eq!(got, want, "case {case} step {step}: {config:?}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_on_another_replica_while_the_first_runs_waits_for_its_result() {
    let redis = RedisServer::start("replay-wait");
    let f = fakes().await;
    let rs = replicas(&f, &redis, 2, |_| {}).await;
    let client = |url: String| {
        let mut c = Mcp::modern(url);
        c.extra_headers.push(("idempotency-key".into(), "zoek-elders-1".into()));
        c
    };
    f.obv.set_latency(Duration::from_millis(400));
    let asked = f.obv.requests();
    let first = {
        let c = client(rs[0].url("/mcp/obv"));
        tokio::spawn(async move { c.call_with_id(1, "obv_search", json!({"query": "begroting"})).await })
    };
    assert!(
        eventually(Duration::from_secs(10), async || f.obv.requests() > asked).await,
        "the first call reached the platform"
    );
    let retry = client(rs[1].url("/mcp/obv"))
        .call_with_id(2, "obv_search", json!({"query": "begroting"}))
        .await;
    let first = first.await.expect("the first call");
    assert_eq!(
        retry.message.as_ref().expect("answer")["result"],
        first.message.as_ref().expect("answer")["result"]
    );
    assert_eq!(f.obv.requests(), asked + 1, "one request reached the platform");
    assert_eq!(rs[1].state.replay_counts().0, 1, "the retry is a replay");
    f.obv.set_latency(Duration::ZERO);
    for r in rs {
        r.stop().await;
    }
}
