//! The differential test: the proof that the simulator speaks for the server.
//!
//! Each scripted workload runs twice:
//! - through the real server, in process, under tokio's paused clock: MCP `tools/call`
//!   requests through its router (guard, rmcp, the per-call helper, the platform's
//!   task and the core path), the fake OpenBesluitvorming over loopback with a fixed
//!   latency, its exact token bucket and its `RateLimit-*` headers;
//! - through the simulator, on virtual time, with the same platform: the same limit,
//!   latency, headers and throttling.
//!
//! Both give the same admission log: which session's call went to the platform at which
//! instant, to the millisecond. Both shells drive the same `PlatformPath` through the
//! same `Shell`, so any difference is a second implementation somewhere — a shell
//! deciding something the core should. The workloads: the 106-second case, a coalesced
//! join across sessions, a 429 during a burst (the platform throttled by someone else for
//! a moment), and Officiële Bekendmakingen's two lanes (searches on one, publication
//! text on the other with its own service, KOOP's publications; `ob_document` asks for a
//! record, then its text: a trace line with a follow-up in the simulator), and the
//! Basiswettenbestand's and the local regulations' searches at the one service both call,
//! KOOP's zoekservice: one budget group, one bucket and one fair queue for both
//! platforms, in both shells (with a budget each, the simulator would let the second
//! platform's burst go at once). Both logs name each admission's service. A lease
//! handover between two replicas is in `mod handover` below.
//!
//! Calls of a script never share an instant (ties between concurrent requests would be
//! ordered by the runtime in the server and by the script in the simulator).

use crate::support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use besluitbron_core::cache::CacheKey;
use besluitbron_core::dedup::Fold;
use besluitbron_fakes::ob::{ObPublication, Renditions, ob_corpus};
use besluitbron_fakes::serve_registry_on;
use besluitbron_server::app::{App, Hooks};
use besluitbron_server::config::LimitSetting;
use besluitbron_server::driver::SentCall;
use besluitbron_sim::engine::AdmissionLine;
use besluitbron_sim::scenario::{LatencySpec, PlatformSpec, ThrottleSpec, parse_trace};
use besluitbron_sim::{PolicyKind, RunOptions, run};
use http_body_util::BodyExt;
use serde_json::json;
use tower::ServiceExt;

/// What a scripted call asks.
#[derive(Clone, Debug)]
enum Ask {
    /// `obv_search` for this query.
    Obv(String),
    /// `ob_search` for this word.
    ObSearch(String),
    /// `ob_document` of this publication: its record (search lane), then its text (text
    /// lane).
    ObDocument(String),
    /// `bwb_search` for this word.
    BwbSearch(String),
    /// `cvdr_search` for this word.
    CvdrSearch(String),
}

impl Ask {
    /// The trace line's platform, operation, key and follow-up.
    fn trace(&self) -> serde_json::Value {
        match self {
            // The trace's key is the request's canonical form: what the
            // server keys the buffer, its flights and replays by.
            Ask::Obv(key) => json!({"platform": "obv", "key": Fold::AndWordsCaseless.apply(key)}),
            Ask::ObSearch(word) => json!({"platform": "ob", "key": word}),
            Ask::ObDocument(id) => json!({
                "platform": "ob", "op": "record", "key": format!("record:{id}"),
                "then": {"cost": 1, "op": "text", "key": format!("text:{id}")},
            }),
            Ask::BwbSearch(word) => json!({"platform": "bwb", "key": word}),
            Ask::CvdrSearch(word) => json!({"platform": "cvdr", "key": word}),
        }
    }

    /// The route, tool and arguments of the MCP call.
    fn tool(&self) -> (&'static str, &'static str, serde_json::Value) {
        match self {
            Ask::Obv(key) => ("/mcp/obv", "obv_search", json!({"query": key})),
            Ask::ObSearch(word) => ("/mcp/ob", "ob_search", json!({"query": word})),
            Ask::ObDocument(id) => ("/mcp/ob", "ob_document", json!({"id": id})),
            Ask::BwbSearch(word) => ("/mcp/bwb", "bwb_search", json!({"query": word})),
            Ask::CvdrSearch(word) => ("/mcp/cvdr", "cvdr_search", json!({"query": word})),
        }
    }
}

/// A scripted workload: calls (`at_ms`, `session`, what they ask), and the periods in
/// which someone else's traffic makes OpenBesluitvorming answer 429.
struct Script {
    name: &'static str,
    calls: Vec<(u64, &'static str, Ask)>,
    throttle: Vec<(u64, u64)>,
}

const LATENCY_MS: u64 = 100;

impl Script {
    fn trace(&self) -> String {
        self.calls
            .iter()
            .map(|(at, session, ask)| {
                let mut line = ask.trace();
                line["at_ms"] = json!(at);
                line["session"] = json!(session);
                line["cost"] = json!(1);
                line.to_string() + "\n"
            })
            .collect()
    }

    /// The client address each session's requests come from (through a trusted proxy).
    fn addresses(&self) -> BTreeMap<&'static str, String> {
        let mut out = BTreeMap::new();
        for (_, session, _) in &self.calls {
            let n = out.len() + 1;
            out.entry(*session).or_insert_with(|| format!("192.0.2.{n}"));
        }
        out
    }

    /// The name of what `key` asks, as the simulator's admission log names it (its `q`).
    fn label(&self, key: &CacheKey) -> String {
        let params = key.params();
        match (key.platform().as_str(), key.operation()) {
            ("ob", "record") => format!("record:{}", params["id"]),
            ("ob", "text" | "pdf-text") => format!("text:{}", params["id"]),
            ("ob" | "bwb" | "cvdr", _) => {
                let cql = params.get("cql").map_or("", String::as_str);
                self.calls
                    .iter()
                    .find_map(|(_, _, ask)| match ask {
                        Ask::ObSearch(word) | Ask::BwbSearch(word) | Ask::CvdrSearch(word)
                            if cql.contains(word.as_str()) =>
                        {
                            Some(word.clone())
                        }
                        _ => None,
                    })
                    .unwrap_or_else(|| format!("unscripted {key:?}"))
            }
            _ => params.get("query").cloned().unwrap_or_default(),
        }
    }
}

fn obv(key: String) -> Ask {
    Ask::Obv(key)
}

/// The 106-second case (R-L9): a busy session fires 166 searches, a second session one.
fn starvation() -> Script {
    let mut calls: Vec<(u64, &'static str, Ask)> = (0..166).map(|i| (i, "busy", obv(format!("busy-{i}")))).collect();
    calls.push((500, "second", obv("second-0".into())));
    Script {
        name: "106-second case",
        calls,
        throttle: Vec::new(),
    }
}

/// A fresh session asks what a heavy session has queued: one call, at the best position.
fn coalesced_join() -> Script {
    let mut calls: Vec<(u64, &'static str, Ask)> = (0..75).map(|i| (i, "heavy", obv(format!("heavy-{i}")))).collect();
    calls.push((1_500, "fresh", obv("heavy-70".into())));
    calls.push((2_500, "late", obv("heavy-72".into())));
    Script {
        name: "coalesced join",
        calls,
        throttle: Vec::new(),
    }
}

/// A burst meets a platform that someone else's traffic has used up for a moment: its
/// 429 is fed back, refunded, and the call waits once more behind the Retry-After.
fn burst_with_429() -> Script {
    let mut calls: Vec<(u64, &'static str, Ask)> = (0..70).map(|i| (i, "a", obv(format!("a-{i}")))).collect();
    calls.extend((0..6).map(|i| (2_000 + i, "b", obv(format!("b-{i}")))));
    Script {
        name: "429 during a burst",
        calls,
        throttle: vec![(5_500, 6_300)],
    }
}

/// Officiële Bekendmakingen's two lanes: a harvester reads 14 publications' text (records
/// on the search lane, 30 a half minute, then text on the text lane, 10 a half minute), a
/// searcher fires 25 searches into what is left of the search lane, and a reader asks
/// for 3 more publications while both lanes queue: its records and its text go first
/// on each lane (it has used neither).
fn ob_two_lanes() -> Script {
    let readable: Vec<&ObPublication> = ob_corpus()
        .publications
        .iter()
        .filter(|p| p.renditions == Renditions::Full)
        .take(17)
        .collect();
    assert_eq!(readable.len(), 17, "the fake's corpus has publications with text");
    let document = |p: &ObPublication| Ask::ObDocument(p.identifier.clone());
    let mut calls: Vec<(u64, &'static str, Ask)> = (0..14)
        .map(|i| (i, "harvester", document(readable[i as usize])))
        .collect();
    calls.extend((0..25).map(|i| (200 + i, "searcher", Ask::ObSearch(format!("zoek{i:02}")))));
    calls.extend((0..3).map(|i| (1_500 + i, "reader", document(readable[14 + i as usize]))));
    Script {
        name: "ob search and text lanes",
        calls,
        throttle: Vec::new(),
    }
}

/// The Basiswettenbestand and the local regulations at KOOP's zoekservice, one budget of
/// 30 per 30 s: a harvester of laws fires 40 searches (30 go at once, the rest queue), a
/// municipality's assistant 12 searches of local regulations into the queue, and a reader
/// one more search of regulations a second later: the queue interleaves the platforms'
/// calls by their sessions' usage, whichever platform each is of.
fn regulations_share_the_zoekservice() -> Script {
    let mut calls: Vec<(u64, &'static str, Ask)> = (0..40)
        .map(|i| (i, "laws", Ask::BwbSearch(format!("wet{i:02}"))))
        .collect();
    calls.extend((0..12).map(|i| (100 + i, "regulations", Ask::CvdrSearch(format!("regeling{i:02}")))));
    calls.push((1_200, "reader", Ask::CvdrSearch("verordening00".into())));
    Script {
        name: "bwb and cvdr share KOOP's zoekservice",
        calls,
        throttle: Vec::new(),
    }
}

fn sim_log(script: &Script) -> Vec<AdmissionLine> {
    let mut workload = parse_trace(&script.trace(), script.name).expect("the script is a trace");
    workload.platforms = vec![
        PlatformSpec {
            latency: LatencySpec::Fixed { ms: LATENCY_MS },
            throttle: script
                .throttle
                .iter()
                .map(|&(from_ms, to_ms)| ThrottleSpec { from_ms, to_ms })
                .collect(),
            rate_limit_headers: Some(true),
            ..PlatformSpec::default_for(besluitbron_server::platforms::obv::PLATFORM)
        },
        PlatformSpec {
            latency: LatencySpec::Fixed { ms: LATENCY_MS },
            ..PlatformSpec::default_for(besluitbron_server::platforms::ob::PLATFORM)
        },
        PlatformSpec {
            latency: LatencySpec::Fixed { ms: LATENCY_MS },
            ..PlatformSpec::default_for(besluitbron_server::platforms::bwb::PLATFORM)
        },
        PlatformSpec {
            latency: LatencySpec::Fixed { ms: LATENCY_MS },
            ..PlatformSpec::default_for(besluitbron_server::platforms::cvdr::PLATFORM)
        },
    ];
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: 1,
        keep_trace: false,
        progress: false,
    };
    run(script.name, &workload, opts)
        .unwrap_or_else(|f| panic!("{f}"))
        .admissions
}

async fn server_log(script: &Script) -> Vec<AdmissionLine> {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the fakes");
    let fakes = serve_registry_on(listener).await.expect("serve the fakes");
    let obv = fakes
        .get(besluitbron_server::platforms::obv::PLATFORM)
        .expect("the obv fake")
        .clone();
    obv.set_latency(Duration::from_millis(LATENCY_MS));
    let ob = fakes
        .get(besluitbron_server::platforms::ob::PLATFORM)
        .expect("the ob fake")
        .clone();
    ob.set_latency(Duration::from_millis(LATENCY_MS));
    for platform in [
        besluitbron_server::platforms::bwb::PLATFORM,
        besluitbron_server::platforms::cvdr::PLATFORM,
    ] {
        fakes
            .get(platform)
            .expect("the regulations' fakes")
            .set_latency(Duration::from_millis(LATENCY_MS));
    }

    let dir = tempfile::tempdir().expect("temp dir");
    let config = differential_config(&fakes, &dir);
    let addresses = script.addresses();
    let log: Arc<Mutex<Vec<AdmissionLine>>> = Arc::default();
    let hooks = admissions_logged(script, &addresses, &log);
    let app = App::build_with(config, hooks).expect("build the server");
    play(script, &app, &addresses, &obv).await;
    assert_eq!(obv.rate_limited() > 0, !script.throttle.is_empty(), "{}", script.name);
    let metrics = app.state.metrics().render();
    assert!(
        !metrics.contains("besluitbron_path_invariant_failures_total{"),
        "{}: a path's invariants broke: {metrics}",
        script.name
    );
    log.lock().unwrap().clone()
}

/// The server's settings for a differential run: the fakes' addresses, every client
/// limit out of the way, and the simulator's service limits with no margin.
fn differential_config(
    fakes: &besluitbron_fakes::Fakes,
    dir: &tempfile::TempDir,
) -> besluitbron_server::config::Config {
    let mut config = besluitbron_server::connectors::load_config(None, Vec::new()).expect("defaults");
    config.data_dir = dir.path().to_path_buf();
    config.status_refresh_secs = 0;
    config.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    let roomy = besluitbron_core::limits::RateLimit {
        requests_per_minute: 600_000,
        burst: 100_000,
    };
    config.mcp_rate_limit.process = roomy;
    config.mcp_rate_limit.per_connector = roomy;
    config.mcp_rate_limit.per_address = roomy;
    config.mcp_rate_limit.per_session = roomy;
    config.request_timeout_secs = 3_600;
    for (platform, url) in fakes.base_urls() {
        let p = config.platforms.get_mut(platform.as_str()).expect("platform settings");
        p.base_url = url;
        p.timeout_ms = 600_000;
    }
    // The simulator's platforms count calls as they leave (no travel time): no margin.
    let setting = |capacity: u64, window_secs: f64| LimitSetting {
        capacity: besluitbron_core::Units::whole(capacity),
        window_secs,
        margin_secs: 0.0,
    };
    config.services.get_mut("obv").expect("obv").limit = Some(setting(60, 60.0));
    config.services.get_mut("koop-sru").expect("KOOP's SRU service").limit = Some(setting(30, 30.0));
    config
        .services
        .get_mut("koop-publications")
        .expect("KOOP's publications")
        .limit = Some(setting(10, 30.0));
    config
        .services
        .get_mut("koop-zoekservice")
        .expect("KOOP's zoekservice")
        .limit = Some(setting(30, 30.0));
    config
}

/// The hooks that log each admission the server makes, its session named as the
/// script names it (`addresses`: session → client address) and its call labelled.
fn admissions_logged(
    script: &Script,
    addresses: &BTreeMap<&'static str, String>,
    log: &Arc<Mutex<Vec<AdmissionLine>>>,
) -> Hooks {
    let names: BTreeMap<String, &'static str> = addresses
        .iter()
        .map(|(name, addr)| (format!("addr:{addr}"), *name))
        .collect();
    let labels: Arc<Script> = Arc::new(Script {
        name: script.name,
        calls: script.calls.clone(),
        throttle: Vec::new(),
    });
    Hooks {
        on_send: Some({
            let log = Arc::clone(log);
            Arc::new(move |sent: &SentCall| {
                if let Some(a) = &sent.admission {
                    let session = names
                        .get(&a.session.to_string())
                        .map_or_else(|| a.session.to_string(), |n| (*n).to_owned());
                    log.lock().unwrap().push(AdmissionLine {
                        at_ms: a.admitted_at.as_millis(),
                        platform: sent.platform,
                        service: sent.service.expect("a budget group's task knows its services"),
                        session,
                        call: labels.label(&sent.key),
                        rule: a.rule,
                    });
                }
            })
        }),
    }
}

/// Plays `script` against `app`: each call at its instant from its session's address,
/// and each throttling window at the obv fake.
async fn play(
    script: &Script,
    app: &App,
    addresses: &BTreeMap<&'static str, String>,
    obv: &besluitbron_fakes::FakeHandle,
) {
    let router = app.router.clone();
    let origin = tokio::time::Instant::now();
    let mut tasks = Vec::new();
    for (i, (at, session, ask)) in script.calls.iter().enumerate() {
        let (router, address, ask, at) = (router.clone(), addresses[session].clone(), ask.clone(), *at);
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(origin + Duration::from_millis(at)).await;
            let (route, tool, arguments) = ask.tool();
            let request = support::stateless_call(route, i, tool, arguments, &[("x-forwarded-for", &address)]);
            let response = router.oneshot(request).await.expect("the router answers");
            let status = response.status();
            let text = response.into_body().collect().await.expect("a body").to_bytes();
            let text = String::from_utf8_lossy(&text).into_owned();
            assert!(
                status.is_success() && !text.contains("\"isError\":true"),
                "{ask:?}: {status} {text}"
            );
        }));
    }
    for &(from, to) in &script.throttle {
        let obv = obv.clone();
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(origin + Duration::from_millis(from)).await;
            obv.set_rate_limit_storm(true);
            tokio::time::sleep_until(origin + Duration::from_millis(to)).await;
            obv.set_rate_limit_storm(false);
        }));
    }
    for t in tasks {
        t.await.expect("a scripted call");
    }
}

fn compare(script: &Script, server: &[AdmissionLine], sim: &[AdmissionLine]) {
    if server == sim {
        return;
    }
    let first = server
        .iter()
        .zip(sim)
        .position(|(a, b)| a != b)
        .unwrap_or(server.len().min(sim.len()));
    let show = |log: &[AdmissionLine]| {
        log.iter()
            .skip(first.saturating_sub(3))
            .take(8)
            .map(|l| format!("  {l}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    panic!(
        "{}: the server and the simulator admitted differently from line {first} \
         ({} vs {} admissions)\nserver:\n{}\nsimulator:\n{}",
        script.name,
        server.len(),
        sim.len(),
        show(server),
        show(sim)
    );
}

async fn check(script: Script) {
    let sim = sim_log(&script);
    let server = server_log(&script).await;
    let asked: std::collections::BTreeSet<String> = script
        .calls
        .iter()
        .flat_map(|(_, _, ask)| match ask {
            Ask::Obv(key) => vec![Fold::AndWordsCaseless.apply(key)],
            Ask::ObSearch(key) => vec![key.clone()],
            Ask::ObDocument(id) => vec![format!("record:{id}"), format!("text:{id}")],
            Ask::BwbSearch(word) | Ask::CvdrSearch(word) => vec![word.clone()],
        })
        .collect();
    let admitted: std::collections::BTreeSet<String> = sim.iter().map(|l| l.call.clone()).collect();
    assert!(
        asked.is_subset(&admitted),
        "{}: every distinct call was admitted: {:?}",
        script.name,
        asked.difference(&admitted).collect::<Vec<_>>()
    );
    compare(&script, &server, &sim);
}

#[tokio::test(start_paused = true)]
async fn the_106_second_case_is_admitted_alike_by_server_and_simulator() {
    check(starvation()).await;
}

#[tokio::test(start_paused = true)]
async fn a_coalesced_join_is_admitted_alike_by_server_and_simulator() {
    check(coalesced_join()).await;
}

#[tokio::test(start_paused = true)]
async fn a_429_during_a_burst_is_admitted_alike_by_server_and_simulator() {
    check(burst_with_429()).await;
}

#[tokio::test(start_paused = true)]
async fn obs_search_and_text_lanes_are_admitted_alike_by_server_and_simulator() {
    check(ob_two_lanes()).await;
}

#[tokio::test(start_paused = true)]
async fn bwb_and_cvdr_at_one_zoekservice_are_admitted_alike_by_server_and_simulator() {
    let script = regulations_share_the_zoekservice();
    let sim = sim_log(&script);
    // One bucket for both: 30 at once (all the laws' first), then one a second, the
    // regulations' calls among them; every admission at KOOP's zoekservice.
    assert!(sim.iter().all(|l| l.service.as_str() == "koop-zoekservice"), "{sim:#?}");
    assert_eq!(sim.iter().filter(|l| l.at_ms < 1_000).count(), 30, "one burst, not two");
    let cvdr_first = sim
        .iter()
        .find(|l| l.platform.as_str() == "cvdr")
        .map(|l| l.at_ms)
        .expect("cvdr admitted");
    assert!(
        cvdr_first >= 1_000,
        "the regulations waited for the shared bucket: {cvdr_first} ms"
    );
    check(script).await;
}

mod handover {
    //! A lease handover in the middle of a burst: two replicas' platform tasks in one
    //! process (`driver::task::spawn_leased`, each with its own `LeaseGate`), fed by one
    //! scripted lease engine and asked by the followers' routing, against the cluster
    //! simulator (`sim/src/cluster.rs`) on the same script.
    //!
    //! Replica 0 takes the lease at once; replica 1's acquisitions are refused (the
    //! engine answers the holder's remaining time) until the engine loses the key in the
    //! middle of a burst. Replica 1 then takes it, replica 0's next renewal is refused:
    //! its waiting calls are handed back and asked again, and replica 1 admits them once
    //! its start wait is over, from an empty bucket and replica 0's usage checkpoint.
    //! Every call lands at replica 1, which forwards it while it does not own.
    //!
    //! The lease engine, the lease tasks and the routing here follow the simulator's
    //! rules step by step (the engine: `SET NX` with the holder's `PTTL` on a refusal,
    //! renewals that write the owner's checkpoint; a follower: ask the owner the engine
    //! names, again after 250 ms when nobody admits or the owner refused the call, at
    //! once when the owner handed it back); the platform tasks are the server's own.
    //! No call reaches a replica at the instant its lease or its path changes.

    use std::cmp::Reverse;
    use std::collections::{BTreeMap, BinaryHeap};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use besluitbron_core::cache::{CacheKey, CachePolicy, DataClass};
    use besluitbron_core::cluster::{Lease, LeaseAnswer, LeaseCall, LeaseEvent, UsageCheckpoint};
    use besluitbron_core::path::{Feedback, Outcome, PathConfig};
    use besluitbron_core::{Instant, LimitConfig, SchedulerConfig, SessionKey, Units};
    use besluitbron_fakes::serve_registry_on;
    use besluitbron_server::call::classify;
    use besluitbron_server::clock::Clock;
    use besluitbron_server::driver::lease::lease_config;
    use besluitbron_server::driver::{
        self, CallError, CallRequest, DriverOptions, LeaseGate, Ownership, Payload, PlatformHandle, SentCall,
        ServerBuffer, Upstream,
    };
    use besluitbron_server::metrics::Metrics;
    use besluitbron_server::platforms::http::HttpConfig;
    use besluitbron_server::platforms::obv::{ObvClient, SearchParams};
    use besluitbron_sim::cluster::{
        Balancer, CLIENT_RETRY_MS, ClusterAdmission, ClusterFault, ClusterScenario, REROUTE_BACKOFF_MS, ScriptedCall,
        run_cluster,
    };
    use besluitbron_sim::engine::AdmissionLine;
    use besluitbron_sim::scenario::LatencySpec;
    use tokio_util::sync::CancellationToken;

    const REPLICAS: usize = 2;
    /// A TTL whose thirds and sixths are whole milliseconds (renewals every 2,100 ms,
    /// refused acquisitions tried again after 1,050 ms), m = 1 s as the server takes it.
    const TTL_MS: u64 = 6_300;
    const ENGINE_MS: u64 = 1;
    const KEY_LOSS_MS: u64 = 13_600;
    const LATENCY_MS: u64 = 100;
    const MS: u64 = 1_000_000;

    /// Sessions a, b, c and d: a burst while replica 0 waits to start, more while it
    /// admits (c asking one question a has queued: a join), and more after the key loss.
    fn script() -> Vec<ScriptedCall> {
        let call = |at_ms: u64, session: &str, key: u64| ScriptedCall {
            at_ms,
            session: session.to_owned(),
            key,
            replica: Some(1),
            platform: None,
        };
        let mut calls: Vec<ScriptedCall> = (0..30).map(|i| call(1_017 + i, "a", i)).collect();
        calls.extend((0..10).map(|i| call(9_031 + i, "b", 100 + i)));
        calls.extend((0..5).map(|i| call(12_541 + i, "c", 200 + i)));
        calls.push(call(12_551, "c", 29));
        calls.extend((0..5).map(|i| call(16_007 + i, "d", 300 + i)));
        calls
    }

    fn scenario() -> ClusterScenario {
        ClusterScenario {
            description: "a lease handover in the middle of a burst (the differential test)".to_owned(),
            seed: 1,
            replicas: REPLICAS,
            drift_ppm: vec![0; REPLICAS],
            offset_ms: Vec::new(),
            ttl_ms: TTL_MS,
            margin_ms: lease_config(Duration::from_millis(TTL_MS)).margin.as_millis() as u64,
            balancer: Balancer::Hash,
            forward_ms: 0,
            engine_ms: ENGINE_MS,
            platform: besluitbron_server::platforms::obv::PLATFORM,
            shared_with: Vec::new(),
            service: None,
            rate_limit_headers: None,
            capacity: 60,
            window_s: 60,
            latency: LatencySpec::Fixed { ms: LATENCY_MS },
            sessions: 0,
            calls_per_session: 0,
            think_ms: 0,
            ramp_s: 0.0,
            key_pool: 1,
            give_up_s: 3_600,
            faults: vec![ClusterFault::KeyLoss {
                at_s: KEY_LOSS_MS as f64 / 1_000.0,
            }],
            send_delay_ms: 0,
            calls: script(),
        }
    }

    /// The lease engine: one key (its holder, token and expiry, in ns) and the usage
    /// checkpoint the owner writes with each renewal.
    #[derive(Default)]
    struct Engine {
        key: Option<(usize, u64, u64)>,
        checkpoint: Option<UsageCheckpoint>,
    }

    impl Engine {
        /// The replica the engine names as the owner at `t`.
        fn holder(&self, t: u64) -> Option<usize> {
            self.key.filter(|k| k.2 > t).map(|k| k.0)
        }
    }

    /// What the followers' routing reads: the engine, and which replicas own (their
    /// platform task was told to start and not yet to end).
    struct World {
        engine: Mutex<Engine>,
        owning: Mutex<[bool; REPLICAS]>,
        handles: Vec<PlatformHandle>,
        origin: tokio::time::Instant,
    }

    impl World {
        fn now_ns(&self) -> u64 {
            u64::try_from(self.origin.elapsed().as_nanos()).expect("a short test")
        }
    }

    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
    enum Ev {
        Wake(usize),
        Apply {
            replica: usize,
            id: u64,
            call: LeaseCall,
            token: u64,
        },
        Answer {
            replica: usize,
            id: u64,
            answer: LeaseAnswer,
        },
        KeyLoss,
    }

    /// The replicas' lease tasks and the engine, as the simulator runs them: events in
    /// (instant, order of scheduling), each replica's lease told at each of its events,
    /// its changes told to its platform task.
    async fn leases(world: Arc<World>, gates: Vec<LeaseGate>) {
        let mut heap: BinaryHeap<Reverse<(u64, u64, Ev)>> = BinaryHeap::new();
        let mut seq = 0;
        let mut push = |heap: &mut BinaryHeap<Reverse<(u64, u64, Ev)>>, at: u64, ev: Ev| {
            seq += 1;
            heap.push(Reverse((at, seq, ev)));
        };
        let mut wakes: [Option<u64>; REPLICAS] = [Some(0); REPLICAS];
        for r in 0..REPLICAS {
            push(&mut heap, 0, Ev::Wake(r));
        }
        push(&mut heap, KEY_LOSS_MS * MS, Ev::KeyLoss);
        while let Some(Reverse((t, _, ev))) = heap.pop() {
            tokio::time::sleep_until(world.origin + Duration::from_nanos(t)).await;
            let now = Instant::from_nanos(t);
            {
                let mut engine = world.engine.lock().unwrap();
                if engine.key.is_some_and(|k| k.2 <= t) {
                    engine.key = None;
                }
            }
            let stepped = match ev {
                Ev::Wake(r) => {
                    if wakes[r].is_some_and(|w| w <= t) {
                        wakes[r] = None;
                        gates[r].lock().unwrap().handle_timeout(now);
                        Some(r)
                    } else {
                        None
                    }
                }
                Ev::Apply {
                    replica,
                    id,
                    call,
                    token,
                } => {
                    let answer = engine_answers(&world, replica, call, token, t).await;
                    push(&mut heap, t + ENGINE_MS * MS, Ev::Answer { replica, id, answer });
                    None
                }
                Ev::Answer { replica, id, answer } => {
                    gates[replica].lock().unwrap().on_answer(now, id, answer);
                    Some(replica)
                }
                Ev::KeyLoss => {
                    world.engine.lock().unwrap().key = None;
                    None
                }
            };
            let Some(r) = stepped else { continue };
            // The lease task's step: requests to the engine, changes to the platform task.
            let (requests, events, next) = {
                let mut gate = gates[r].lock().unwrap();
                let requests: Vec<_> = std::iter::from_fn(|| gate.poll_request(now)).collect();
                let events: Vec<_> = std::iter::from_fn(|| gate.poll_event()).collect();
                (requests, events, gate.poll_timeout())
            };
            for request in requests {
                push(
                    &mut heap,
                    t + ENGINE_MS * MS,
                    Ev::Apply {
                        replica: r,
                        id: request.id,
                        call: request.call,
                        token: request.token,
                    },
                );
            }
            tell_the_platform_task(&world, r, events);
            if let Some(next) = next {
                let at = next.as_nanos().max(t + 1);
                if wakes[r].is_none_or(|p| p <= t || p > at) {
                    wakes[r] = Some(at);
                    push(&mut heap, at, Ev::Wake(r));
                }
            }
        }
    }

    /// The lease engine applies `call` of `replica` with `token` at true `t` (a renewal
    /// by the owner also stores its usage checkpoint), and answers.
    async fn engine_answers(world: &World, replica: usize, call: LeaseCall, token: u64, t: u64) -> LeaseAnswer {
        let ttl = TTL_MS * MS;
        let owning = world.owning.lock().unwrap()[replica];
        let checkpoint = if owning && call == LeaseCall::Renew {
            world.handles[replica].usage_checkpoint().await
        } else {
            None
        };
        let mut engine = world.engine.lock().unwrap();
        let mine = engine.key.is_some_and(|k| k.0 == replica && k.1 == token);
        let held_for = engine.key.map(|k| Duration::from_nanos(k.2.saturating_sub(t)));
        let granted = match call {
            LeaseCall::Acquire if engine.key.is_none() => {
                engine.key = Some((replica, token, t + ttl));
                true
            }
            LeaseCall::Renew if mine => {
                engine.key = Some((replica, token, t + ttl));
                if owning {
                    engine.checkpoint = checkpoint;
                }
                true
            }
            LeaseCall::Release if mine => {
                engine.key = None;
                true
            }
            _ => false,
        };
        match (granted, call, held_for) {
            (true, ..) => LeaseAnswer::Granted,
            (false, LeaseCall::Acquire, Some(d)) => LeaseAnswer::HeldFor(d),
            (false, ..) => LeaseAnswer::Refused,
        }
    }

    /// The lease task tells the platform task of replica `r` what its lease's `events`
    /// mean: ownership starts (with the engine's checkpoint) or ends.
    fn tell_the_platform_task(world: &World, r: usize, events: Vec<LeaseEvent>) {
        for event in events {
            match event {
                LeaseEvent::StartAdmitting { epoch } => {
                    let checkpoint = world.engine.lock().unwrap().checkpoint.clone();
                    world.handles[r].ownership(Ownership::Start { epoch, checkpoint });
                    world.owning.lock().unwrap()[r] = true;
                }
                LeaseEvent::Lost { .. } | LeaseEvent::HandingOver { .. } | LeaseEvent::Stopped => {
                    world.handles[r].ownership(Ownership::End);
                    world.owning.lock().unwrap()[r] = false;
                }
                LeaseEvent::Acquired { .. } => {}
            }
        }
    }

    /// The platform call: an OpenBesluitvorming search for `k<key>` by the server's
    /// client, its `RateLimit-*` headers as feedback.
    fn upstream(client: Arc<ObvClient>, key: u64) -> Upstream {
        Arc::new(move |_previous| {
            let client = Arc::clone(&client);
            Box::pin(async move {
                match client.search(&SearchParams::query(format!("k{key}"))).await {
                    Ok((_page, rate)) => Outcome::Success {
                        payload: Payload::from_bytes(b"{\"answer\":1}".to_vec()),
                        feedback: Feedback {
                            remaining: rate.remaining,
                            reset: rate.reset,
                            ..Feedback::default()
                        },
                    },
                    Err(error) => classify(error),
                }
            })
        })
    }

    /// One scripted call, routed as the simulator's followers route it.
    async fn ask(world: Arc<World>, client: Arc<ObvClient>, call: ScriptedCall) {
        tokio::time::sleep_until(world.origin + Duration::from_millis(call.at_ms)).await;
        let request = CallRequest {
            key: CacheKey::new(
                besluitbron_server::platforms::obv::PLATFORM,
                DataClass::Search,
                "search",
            )
            .param("q", format!("k{}", call.key)),
            session: SessionKey::client(&call.session),
            cost: Units::ONE,
            service: None,
        };
        let origin = call.replica.expect("the script names each call's replica");
        loop {
            let target = if world.owning.lock().unwrap()[origin] {
                Some(origin)
            } else {
                let t = world.now_ns();
                world.engine.lock().unwrap().holder(t).filter(|&h| h != origin)
            };
            let Some(h) = target else {
                tokio::time::sleep(Duration::from_millis(REROUTE_BACKOFF_MS)).await;
                continue;
            };
            let asked_at = tokio::time::Instant::now();
            let client = Arc::clone(&client);
            match world.handles[h]
                .call(request.clone(), || upstream(client, call.key), None)
                .await
            {
                Ok(_) => return,
                // Refused as it arrived: not (or not yet) admitting.
                Err(CallError::NotOwner(_)) if tokio::time::Instant::now() == asked_at => {
                    tokio::time::sleep(Duration::from_millis(REROUTE_BACKOFF_MS)).await;
                }
                // Handed back at the end of the ownership: its own client asks again, a
                // follower at once.
                Err(CallError::NotOwner(_)) => {
                    if h == origin {
                        tokio::time::sleep(Duration::from_millis(CLIENT_RETRY_MS)).await;
                    }
                }
                Err(e) => panic!("k{}: {e}", call.key),
            }
        }
    }

    async fn server_log() -> Vec<ClusterAdmission> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the fakes");
        let fakes = serve_registry_on(listener).await.expect("serve the fakes");
        let obv = fakes
            .get(besluitbron_server::platforms::obv::PLATFORM)
            .expect("the obv fake")
            .clone();
        obv.set_latency(Duration::from_millis(LATENCY_MS));
        let base_url = fakes
            .base_urls()
            .into_iter()
            .find(|(p, _)| *p == besluitbron_server::platforms::obv::PLATFORM)
            .expect("obv's URL")
            .1;
        let client = Arc::new(ObvClient::new(&base_url, &HttpConfig::default()).expect("a client"));

        let clock = Clock::start();
        let origin = tokio::time::Instant::now();
        let lease = lease_config(Duration::from_millis(TTL_MS));
        let limit = LimitConfig::new(Units::whole(60), Duration::from_secs(60)).with_margin(lease.margin);
        let metrics = Arc::new(Metrics::new());
        let log: Arc<Mutex<Vec<ClusterAdmission>>> = Arc::default();
        let mut gates = Vec::new();
        let mut handles = Vec::new();
        for replica in 0..REPLICAS {
            let gate: LeaseGate = Arc::new(Mutex::new(Lease::new(lease, clock.now()).expect("valid")));
            let log = Arc::clone(&log);
            let options = DriverOptions {
                clock,
                metrics: Arc::clone(&metrics),
                attempt_timeout: Duration::from_secs(30),
                observer: Some(Arc::new(move |sent: &SentCall| {
                    if let Some(a) = &sent.admission {
                        log.lock().unwrap().push(ClusterAdmission {
                            replica,
                            line: AdmissionLine {
                                at_ms: a.admitted_at.as_millis(),
                                platform: sent.platform,
                                service: besluitbron_server::platforms::obv::SERVICE,
                                session: a.session.to_string(),
                                call: sent.key.params().get("q").cloned().unwrap_or_default(),
                                rule: a.rule,
                            },
                        });
                    }
                })),
                cancel: CancellationToken::new(),
                recorder: None,
            };
            let (handle, _task) = driver::task::spawn_one(
                PathConfig::single("obv", Some(SchedulerConfig::with_limit(limit))),
                ServerBuffer::new(
                    besluitbron_server::platforms::obv::PLATFORM,
                    None,
                    CachePolicy::default().for_platform(besluitbron_server::platforms::obv::PLATFORM),
                ),
                options,
                Some(Arc::clone(&gate)),
            )
            .expect("valid");
            gates.push(gate);
            handles.push(handle);
        }
        let world = Arc::new(World {
            engine: Mutex::new(Engine::default()),
            owning: Mutex::new([false; REPLICAS]),
            handles,
            origin,
        });
        let leases = tokio::spawn(leases(Arc::clone(&world), gates));
        let calls: Vec<_> = script()
            .into_iter()
            .map(|call| tokio::spawn(ask(Arc::clone(&world), Arc::clone(&client), call)))
            .collect();
        for call in calls {
            call.await.expect("a scripted call");
        }
        leases.abort();
        let text = metrics.render();
        assert!(
            !text.contains("besluitbron_path_invariant_failures_total{"),
            "a path's invariants broke: {text}"
        );
        log.lock().unwrap().clone()
    }

    #[tokio::test(start_paused = true)]
    async fn a_lease_handover_in_a_burst_is_admitted_alike_by_two_server_replicas_and_the_cluster_simulator() {
        let sim = run_cluster("handover", &scenario()).unwrap_or_else(|e| panic!("{e}"));
        // The script does what it says: a refused acquisition, an owner change.
        assert_eq!(sim.owners.len(), 2, "{:#?}", sim.owners);
        assert_eq!(
            (sim.owners[0].replica, sim.owners[1].replica),
            (0, 1),
            "{:#?}",
            sim.owners
        );
        assert!(sim.rerouted > 0, "calls waiting at replica 0 went to replica 1");
        let replicas: BTreeMap<usize, usize> = sim.admissions.iter().fold(BTreeMap::new(), |mut m, a| {
            *m.entry(a.replica).or_default() += 1;
            m
        });
        assert!(replicas.len() == 2, "both replicas admitted: {replicas:?}");
        let server = server_log().await;
        if server != sim.admissions {
            let first = server
                .iter()
                .zip(&sim.admissions)
                .position(|(a, b)| a != b)
                .unwrap_or(server.len().min(sim.admissions.len()));
            let show = |log: &[ClusterAdmission]| {
                log.iter()
                    .skip(first.saturating_sub(3))
                    .take(8)
                    .map(|l| format!("  {l}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            };
            panic!(
                "the server's replicas and the cluster simulator admitted differently from line {first} ({} vs \
                 {} admissions)\nserver:\n{}\nsimulator:\n{}",
                server.len(),
                sim.admissions.len(),
                show(&server),
                show(&sim.admissions)
            );
        }
    }
}
