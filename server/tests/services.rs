//! One budget per upstream service: `bwb` and `cvdr` both search KOOP's zoekservice, so
//! their searches share its one token bucket and fair queue. Under concurrent distinct
//! searches on both, the calls BesluitBron sends the service never exceed what one bucket
//! allows: its burst plus its refill over any interval — on one process, and across three
//! replicas, where one lease per service makes one owner spend its budget. With a budget
//! per connector (as before) the two bursts together are twice that at the start.
//!
//! The simulator knows the same services: its table (`sim/platforms.toml`) is held here
//! to the connectors' declarations, platform by platform and service by service, so that
//! what it proves of a shared budget is about the server's. The simulator's side of the
//! same property is `sim/tests/services.rs`; the differential test compares both shells'
//! admissions at the shared zoekservice call by call.

use crate::support;

use std::sync::{Arc, Mutex};

use besluitbron_core::{Instant, Units};
use besluitbron_server::app::{App, Hooks};
use besluitbron_server::config::LimitSetting;
use serde_json::json;
use support::{Mcp, Server, config, fakes, temp_dir};

/// The zoekservice's limit in this test: a burst of 4, refilled at 4 a second.
const BURST: u64 = 4;
const WINDOW_SECS: f64 = 1.0;

/// The most admissions one bucket allows between the first and the last of `at` (sorted):
/// its burst plus its refill over the interval, and `slack` seconds of refill more.
fn over_the_bucket_by(at: &[Instant], slack: f64) -> Option<String> {
    let rate = BURST as f64 / WINDOW_SECS;
    for i in 0..at.len() {
        for j in i..at.len() {
            let span = at[j].saturating_since(at[i]).as_secs_f64();
            let allowed = BURST as f64 + rate * (span + slack) + 1e-6;
            let sent = (j - i + 1) as f64;
            if sent > allowed {
                return Some(format!(
                    "{sent} calls within {span:.3} s, one bucket allows {allowed:.3}"
                ));
            }
        }
    }
    None
}

/// As [`over_the_bucket_by`], exactly.
fn over_the_bucket(at: &[Instant]) -> Option<String> {
    over_the_bucket_by(at, 0.0)
}

/// The zoekservice's limit of this test, on `config`; room for its 24 sessions from one
/// address.
fn small_zoekservice(config: &mut besluitbron_server::config::Config) {
    config.sessions.initialize_per_minute = 6_000;
    config
        .services
        .get_mut("koop-zoekservice")
        .expect("KOOP's zoekservice")
        .limit = Some(LimitSetting {
        capacity: Units::whole(BURST),
        window_secs: WINDOW_SECS,
        margin_secs: 0.0,
    });
}

/// 24 distinct searches at once, half `bwb_search`, half `cvdr_search`, each its own
/// session, at the addresses `url(i)` gives; every one answered.
async fn searches_on_both(url: impl Fn(u32, &str) -> String) {
    let mut calls = Vec::new();
    for i in 0..24u32 {
        let (path, tool) = if i % 2 == 0 {
            ("/mcp/bwb", "bwb_search")
        } else {
            ("/mcp/cvdr", "cvdr_search")
        };
        let url = url(i, path);
        calls.push(tokio::spawn(async move {
            let mut mcp = Mcp::initialize(url).await;
            mcp.call(tool, json!({"query": format!("verordening{i}")})).await
        }));
    }
    for call in calls {
        let reply = call.await.expect("a call");
        assert_eq!(reply.status, 200, "{}", reply.text);
        let result = &reply.message.as_ref().expect("an answer")["result"];
        assert_ne!(result["isError"], json!(true), "{result}");
    }
}

#[test]
fn the_bucket_check_finds_two_bursts_at_once() {
    let t0 = Instant::ZERO;
    let burst: Vec<Instant> = (0..BURST).map(|_| t0).collect();
    assert_eq!(over_the_bucket(&burst), None);
    let two: Vec<Instant> = (0..2 * BURST).map(|_| t0).collect();
    assert!(over_the_bucket(&two).is_some());
    let paced: Vec<Instant> = (0..12u64)
        .map(|i| t0 + std::time::Duration::from_millis(i.saturating_sub(BURST - 1) * 250))
        .collect();
    assert_eq!(over_the_bucket(&paced), None, "{paced:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bwb_and_cvdr_searches_share_the_zoekservices_one_bucket() {
    let fakes = fakes().await;
    let dir = temp_dir("services-zoekservice");
    let mut c = config(&fakes, &dir);
    small_zoekservice(&mut c);
    let admitted: Arc<Mutex<Vec<(&'static str, Instant)>>> = Arc::default();
    let seen = Arc::clone(&admitted);
    let hooks = Hooks {
        on_send: Some(Arc::new(move |call| {
            let platform = call.platform.as_str();
            if let (Some(a), "bwb" | "cvdr") = (&call.admission, platform) {
                seen.lock().unwrap().push((platform, a.admitted_at));
            }
        })),
    };
    let server = Server::serve(
        App::build_with(c, hooks).expect("build"),
        std::time::Duration::from_secs(5),
    )
    .await;
    searches_on_both(|_, path| server.url(path)).await;
    let mut at = admitted.lock().unwrap().clone();
    assert!(
        at.iter().any(|(p, _)| *p == "bwb") && at.iter().any(|(p, _)| *p == "cvdr"),
        "both platforms searched: {at:?}"
    );
    assert!(at.len() >= 24, "every distinct search went out: {at:?}");
    at.sort_by_key(|(_, t)| *t);
    let instants: Vec<Instant> = at.iter().map(|(_, t)| *t).collect();
    assert_eq!(over_the_bucket(&instants), None, "{at:?}");
    server.stop().await;
}

/// Across three replicas: the calls of both platforms go to the one owner of the
/// zoekservice's budget, wherever they arrive, and what all replicas send together stays
/// within one bucket (times from one monotonic clock of the test's process, as each send
/// goes; a few milliseconds of slack for the hook running just after the admission).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn across_three_replicas_bwb_and_cvdr_share_one_owner_and_one_bucket() {
    let redis = support::redis::RedisServer::start("services-replicas");
    let fakes = fakes().await;
    let origin = std::time::Instant::now();
    // Each send: the replica, the platform, when.
    type Sends = Vec<(usize, &'static str, Instant)>;
    let sent: Arc<Mutex<Sends>> = Arc::default();
    let mut servers = Vec::new();
    for r in 0..3 {
        let mut c = config(&fakes, &temp_dir(&format!("services-replica-{r}")));
        small_zoekservice(&mut c);
        c.cluster = Some(besluitbron_server::config::ClusterConfig {
            redis: redis.url(),
            internal_listen: "127.0.0.1:0".parse().unwrap(),
            internal_url: String::new(),
            secret: "a-test-secret-of-the-services".to_owned(),
            lease_ttl_ms: 1_000,
        });
        let seen = Arc::clone(&sent);
        let hooks = Hooks {
            on_send: Some(Arc::new(move |call| {
                let platform = call.platform.as_str();
                if matches!(platform, "bwb" | "cvdr") && call.admission.is_some() {
                    let at = Instant::ZERO + origin.elapsed();
                    seen.lock().unwrap().push((r, platform, at));
                }
            })),
        };
        let app = App::build_with(c, hooks).expect("build a replica");
        servers.push(Server::serve(app, std::time::Duration::from_secs(2)).await);
    }
    searches_on_both(|i, path| servers[i as usize % 3].url(path)).await;
    let mut at = sent.lock().unwrap().clone();
    assert!(at.len() >= 24, "every distinct search went out: {at:?}");
    let senders: std::collections::BTreeSet<usize> = at.iter().map(|(r, ..)| *r).collect();
    assert_eq!(
        senders.len(),
        1,
        "one replica owns the zoekservice and sends for both: {at:?}"
    );
    at.sort_by_key(|(.., t)| *t);
    let instants: Vec<Instant> = at.iter().map(|(.., t)| *t).collect();
    assert_eq!(over_the_bucket_by(&instants, 0.02), None, "{at:?}");
    for s in servers {
        s.stop().await;
    }
}

/// Every connector's platform is in the simulator's table, naming the services the
/// connector declares in its order, each with the declared default limit, in-flight bound
/// and name: the simulator's defaults are the server's, not a second list that drifts.
#[test]
fn the_simulators_table_declares_the_servers_services() {
    for defaults in besluitbron_server::connectors::platform_defaults() {
        let platform = defaults.platform;
        let known = besluitbron_sim::ids::table()
            .iter()
            .find(|k| k.id == platform.as_str())
            .unwrap_or_else(|| panic!("sim/platforms.toml lists no {platform}"));
        assert_eq!(known.name, platform.display_name(), "{platform}'s name");
        let ids: Vec<&str> = defaults.services.iter().map(|s| s.as_str()).collect();
        assert_eq!(known.services, ids, "{platform}'s services, in order");
        for &service in defaults.services {
            let sim = besluitbron_sim::ids::services_table()
                .iter()
                .find(|k| k.id == service.as_str())
                .unwrap_or_else(|| panic!("sim/platforms.toml declares no service {service}"));
            assert_eq!(sim.name, service.display_name(), "{service}'s name");
            assert_eq!(sim.limit(), service.default_limit(), "{service}'s default limit");
            assert_eq!(
                sim.max_in_flight,
                service.default_max_in_flight(),
                "{service}'s in-flight bound"
            );
        }
    }
    // The budget groups the simulator forms are the server's.
    let server: Vec<(String, Vec<String>)> = besluitbron_server::connectors::platform_defaults()
        .iter()
        .map(|d| {
            (
                d.platform.to_string(),
                d.services.iter().map(|s| s.to_string()).collect(),
            )
        })
        .collect();
    let sim: Vec<(String, Vec<String>)> = server
        .iter()
        .map(|(p, _)| {
            let id = besluitbron_sim::ids::platform(p).expect("a platform id");
            (
                p.clone(),
                besluitbron_sim::ids::services_of(id)
                    .iter()
                    .map(|s| s.to_string())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(sim, server);
}
