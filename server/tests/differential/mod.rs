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
//! handover between two replicas is in `handover.rs`.
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

mod handover;
