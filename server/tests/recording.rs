//! Recording: the server records its platform calls in the simulator's trace
//! format, and the simulator replays the file.
//!
//! The real server runs in process under tokio's paused clock (as the differential
//! test), with recording on, against the fake OpenBesluitvorming over loopback (a fixed
//! latency, its exact token bucket, its `RateLimit-*` headers). The workload is the
//! 106-second case asked from both protocol eras: a busy client of the stateless
//! 2026-07-28 era fires 166 searches, a second client opens a 2025-11-25 session and asks
//! one; a third asks what the busy one asked first (a buffer hit); for a second and a
//! half in the middle the platform answers every call 429 (its own storm).
//!
//! The recorded file is then what the simulator replays, with the recorded latencies and
//! outcomes:
//! - **fidelity**: the simulator admits the same flights in the same order as the
//!   server did, each within [`TOLERANCE_MS`] of the server's instant;
//! - **what-if**: the legacy policy on the same traffic makes the session-era client wait
//!   over 100 s (the fair policy: under 2 s); with the platform at half its limit
//!   (`obv=30/60s`) the busy client's last call goes after 270 s.
//!
//! The tolerance. Under the paused clock there is no network or scheduling jitter: every
//! arrival is at a whole millisecond and the fake answers after exactly its latency. What
//! is left is the trace's resolution: the server writes each instant as whole
//! milliseconds (arrival, send, latency), rounded down. An admission happens at an
//! arrival (an empty queue) or at a refill of the bucket, which the simulator computes
//! from the admissions before it; the bucket runs on both sides on the same exact
//! arithmetic, and one rounding of one recorded instant moves what depends on it by less
//! than 1 ms. Written down to the millisecond on both sides, two instants less than 1 ms
//! apart differ by at most 1 ms: the tolerance is 1 ms, and no more is needed here. (The
//! soak, on a real clock, adds the loopback's travel time and the runtime's scheduling to
//! each instant; its check would have to add their measured spread.)

use crate::support;

use std::collections::BTreeMap;
use std::time::Duration;

use besluitbron_core::record::{AttemptOutcome, CallEnd, TraceLine};
use besluitbron_fakes::serve_registry_on;
use besluitbron_server::app::App;
use besluitbron_server::config::LimitSetting;
use besluitbron_server::driver::record::trace_files;
use besluitbron_sim::fidelity;
use besluitbron_sim::scenario::{LimitOverride, Workload, parse_trace};
use besluitbron_sim::{PolicyKind, RunOptions, RunOutcome, run};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

/// See the module's documentation.
const TOLERANCE_MS: u64 = 1;

const LATENCY_MS: u64 = 100;

/// A 2025-11-25 request: `initialize`, or a request of the session `session`.
fn session_request(body: &Value, session: Option<&str>, address: &str) -> axum::http::Request<axum::body::Body> {
    let mut request = axum::http::Request::post("/mcp/obv")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .header("x-forwarded-for", address);
    if let Some(s) = session {
        request = request.header("mcp-session-id", s);
    }
    let mut request = request
        .body(axum::body::Body::from(body.to_string()))
        .expect("a request");
    request
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(std::net::SocketAddr::from((
            [127, 0, 0, 1],
            40_001,
        ))));
    request
}

async fn answer(
    router: &axum::Router,
    request: axum::http::Request<axum::body::Body>,
) -> (u16, String, Option<String>) {
    let response = router.clone().oneshot(request).await.expect("the router answers");
    let status = response.status().as_u16();
    let session = response
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let body = response.into_body().collect().await.expect("a body").to_bytes();
    (status, String::from_utf8_lossy(&body).into_owned(), session)
}

/// Opens a 2025-11-25 session at the router.
async fn open_session(router: &axum::Router, address: &str) -> String {
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "besluitbron-tests", "version": "1"}}});
    let (status, text, session) = answer(router, session_request(&init, None, address)).await;
    assert_eq!(status, 200, "initialize: {text}");
    let session = session.expect("a session id");
    let note = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    let (status, text, _) = answer(router, session_request(&note, Some(&session), address)).await;
    assert!(status == 202 || status == 200, "initialized: {status} {text}");
    session
}

/// What the server recorded, and the trace's text.
struct Recording {
    text: String,
    lines: Vec<TraceLine>,
}

/// Runs the server with recording on over the workload; returns the recorded trace.
async fn record() -> Recording {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the fakes");
    let fakes = serve_registry_on(listener).await.expect("serve the fakes");
    let obv = fakes
        .get(besluitbron_server::platforms::obv::PLATFORM)
        .expect("the obv fake")
        .clone();
    obv.set_latency(Duration::from_millis(LATENCY_MS));

    let dir = tempfile::tempdir().expect("temp dir");
    let config = recording_config(&fakes, &dir);
    let app = App::build(config).expect("build the server");
    let router = app.router.clone();
    let second = open_session(&router, "192.0.2.2").await;
    let origin = tokio::time::Instant::now();

    play_both_eras(&router, &obv, &second, origin).await;
    let (text, files) = the_written_trace(&app, &dir).await;
    the_status_page_gives_the_replay_command(&router, &files).await;
    // Kept for `besluitbron-sim replay target/recording/recorded.jsonl …`.
    let keep = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/recording");
    std::fs::create_dir_all(&keep).expect("target/recording");
    std::fs::write(keep.join("recorded.jsonl"), &text).expect("keep the trace");
    let all: Vec<TraceLine> = text
        .lines()
        .map(|l| serde_json::from_str::<TraceLine>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    let (open, lines): (Vec<TraceLine>, Vec<TraceLine>) = all.into_iter().partition(|l| l.open);
    // Nothing was open at the end: every request with open lines (its flight's attempts
    // as they went) ended with a line of its own, which stands for it.
    assert!(!open.is_empty(), "open lines while flights were out");
    for o in &open {
        assert!(
            lines.iter().any(|l| l.platform == o.platform && l.seq == o.seq),
            "an open line without its request's line: {o:?}"
        );
    }
    Recording { text, lines }
}

/// The server's settings for the recording: the fakes' addresses, every client limit
/// out of the way, recording on, and OpenBesluitvorming's limit with no margin.
fn recording_config(fakes: &besluitbron_fakes::Fakes, dir: &tempfile::TempDir) -> besluitbron_server::config::Config {
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
    config.recording.enabled = true;
    for (platform, url) in fakes.base_urls() {
        let p = config.platforms.get_mut(platform.as_str()).expect("platform settings");
        p.base_url = url;
        p.timeout_ms = 600_000;
    }
    // The simulator's platforms count calls as they leave (no travel time): no margin.
    config.services.get_mut("obv").expect("obv").limit = Some(LimitSetting {
        capacity: besluitbron_core::Units::whole(60),
        window_secs: 60.0,
        margin_secs: 0.0,
    });
    config
}

/// Plays both eras from `origin`: the stateless era's busy client and a third asking
/// what the busy one asked first, the session era's one search (session `second`), and
/// the platform's own storm, which refuses a call.
async fn play_both_eras(
    router: &axum::Router,
    obv: &besluitbron_fakes::FakeHandle,
    second: &str,
    origin: tokio::time::Instant,
) {
    let mut tasks = Vec::new();
    // The stateless era: the busy client, then a third asking what the busy one asked first.
    let mut stateless: Vec<(u64, &str, String)> = (0..166).map(|i| (i, "192.0.2.1", format!("busy-{i}"))).collect();
    stateless.push((600, "192.0.2.3", "busy-0".to_owned()));
    for (i, (at, address, query)) in stateless.into_iter().enumerate() {
        let (router, address) = (router.clone(), address.to_owned());
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(origin + Duration::from_millis(at)).await;
            let request = support::stateless_call(
                "/mcp/obv",
                i + 1,
                "obv_search",
                json!({"query": query}),
                &[("x-forwarded-for", &address)],
            );
            let (status, text, _) = answer(&router, request).await;
            assert!(
                status == 200 && !text.contains("\"isError\":true"),
                "{query}: {status} {text}"
            );
        }));
    }
    // The session era: one search at 0.5 s.
    {
        let (router, second) = (router.clone(), second.to_owned());
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(origin + Duration::from_millis(500)).await;
            let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "obv_search", "arguments": {"query": "second-0"}}});
            let (status, text, _) = answer(&router, session_request(&call, Some(&second), "192.0.2.2")).await;
            assert!(
                status == 200 && !text.contains("\"isError\":true"),
                "second-0: {status} {text}"
            );
        }));
    }
    // The platform's own storm: every call 429 for 1.5 s.
    {
        let obv = obv.clone();
        tasks.push(tokio::spawn(async move {
            tokio::time::sleep_until(origin + Duration::from_millis(30_000)).await;
            obv.set_rate_limit_storm(true);
            tokio::time::sleep_until(origin + Duration::from_millis(31_500)).await;
            obv.set_rate_limit_storm(false);
        }));
    }
    for t in tasks {
        t.await.expect("a scripted call");
    }
    assert!(obv.rate_limited() > 0, "the storm refused a call");
}

/// The trace the recorder wrote under the data directory's `trace/`, synced: its text
/// and its files; every line written, none dropped.
async fn the_written_trace(app: &App, dir: &tempfile::TempDir) -> (String, Vec<std::path::PathBuf>) {
    let recorder = app.state.recorder().expect("recording is on").clone();
    let trace_dir = recorder.dir().to_path_buf();
    assert_eq!(trace_dir, dir.path().join("trace"), "the data directory's trace/");
    tokio::task::spawn_blocking(move || recorder.sync())
        .await
        .expect("the writer synced");
    let metrics = app.state.metrics().render();
    let counted: usize = metrics
        .lines()
        .find_map(|l| l.strip_prefix("besluitbron_trace_lines_total "))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("the lines written are counted: {metrics}"));
    assert!(
        !metrics.contains("besluitbron_trace_dropped_lines_total 1")
            && metrics.contains("besluitbron_trace_dropped_lines_total 0"),
        "nothing dropped"
    );
    let mut text = String::new();
    let files = trace_files(&trace_dir);
    for file in &files {
        text.push_str(&std::fs::read_to_string(file).expect("a trace file"));
    }
    // One line per call (168, `the_lines_say_what_they_may`) and the open lines.
    assert_eq!(text.lines().count(), counted, "every line counted is in the files");
    (text, files)
}

/// `/status` says how to take the last hour to the simulator.
async fn the_status_page_gives_the_replay_command(router: &axum::Router, files: &[std::path::PathBuf]) {
    let mut request = axum::http::Request::get("/status.json")
        .header("host", "127.0.0.1")
        .body(axum::body::Body::empty())
        .expect("a request");
    request
        .extensions_mut()
        .insert(axum::extract::ConnectInfo(std::net::SocketAddr::from((
            [127, 0, 0, 1],
            40_002,
        ))));
    let (status, body, _) = answer(router, request).await;
    assert_eq!(status, 200, "{body}");
    let status: Value = serde_json::from_str(&body).expect("status JSON");
    let command = status["recording"]["replay_command"]
        .as_str()
        .expect("a replay command");
    assert!(
        command.contains("besluitbron-sim replay") && command.contains(&files[0].display().to_string()),
        "{command}"
    );
}

fn replay(workload: &Workload, policy: PolicyKind) -> RunOutcome {
    let opts = RunOptions {
        policy,
        seed: 1,
        keep_trace: false,
        progress: false,
    };
    run("recorded", workload, opts).unwrap_or_else(|f| panic!("{f}"))
}

/// The longest wait of a session's calls (submission to admission), in milliseconds.
fn longest_wait(outcome: &RunOutcome, session: &str) -> u64 {
    let s = outcome
        .sessions
        .iter()
        .position(|p| p.name == session)
        .unwrap_or_else(|| panic!("session {session} replayed"));
    outcome
        .calls
        .iter()
        .filter(|c| c.session as usize == s)
        .filter_map(|c| {
            c.admitted_at
                .map(|a| a.saturating_since(c.submitted_at).as_millis() as u64)
        })
        .max()
        .unwrap_or(0)
}

#[tokio::test(start_paused = true)]
async fn the_server_records_both_eras_and_the_simulator_replays_the_file() {
    let recording = record().await;
    let (busy_name, second_name, refused) = the_lines_say_what_they_may(&recording);
    the_simulator_replays_it(&recording, &busy_name, &second_name, refused);
}

/// What the recording's lines say, and what they must not: no query text or address,
/// three sessions hashed apart, a buffer hit, each flight's attempts with the storm's
/// 429s. The busy client's and the session-era client's session names, and how many
/// attempts the storm refused.
fn the_lines_say_what_they_may(recording: &Recording) -> (String, String, usize) {
    let lines = &recording.lines;
    assert_eq!(lines.len(), 168, "one line per call");

    // What a line says, and what it must not.
    assert!(
        !recording.text.contains("busy-") && !recording.text.contains("second-0"),
        "no query text without the setting"
    );
    assert!(
        !recording.text.contains("192.0.2."),
        "no client address without the setting"
    );
    let mut sessions: BTreeMap<&str, Vec<&TraceLine>> = BTreeMap::new();
    for l in lines {
        assert_eq!(l.platform, "obv");
        assert_eq!(l.op.as_deref(), Some("search"));
        assert!(l.key.as_ref().is_some_and(|k| k.len() == 16), "a key hash: {l:?}");
        assert!(
            l.session.starts_with("s-") && l.session.len() == 14,
            "a session hash: {l:?}"
        );
        sessions.entry(&l.session).or_default().push(l);
    }
    assert_eq!(sessions.len(), 3, "three sessions, hashed apart: {:?}", sessions.keys());
    let by_count = |n: usize| {
        sessions
            .iter()
            .filter(|(_, ls)| ls.len() == n)
            .map(|(s, ls)| (s.to_string(), ls.clone()))
            .collect::<Vec<_>>()
    };
    let busy = by_count(166);
    assert_eq!(busy.len(), 1, "the busy client is one session");
    let (busy_name, busy_lines) = &busy[0];
    let singles = by_count(1);
    // The session-era client asked second-0 at 0.5 s; the third asked busy-0 at 0.6 s and
    // was answered from the buffer.
    let base = lines.iter().map(|l| l.at_ms).min().unwrap();
    let at = |ls: &[&TraceLine]| ls[0].at_ms - base;
    let second = singles
        .iter()
        .find(|(_, ls)| at(ls) == 500)
        .expect("the session-era call");
    let third = singles.iter().find(|(_, ls)| at(ls) == 600).expect("the third call");
    assert_eq!(third.1[0].served, Some(CallEnd::Cached), "{:?}", third.1[0]);
    assert!(third.1[0].attempts.is_empty());
    let busy0 = busy_lines.iter().find(|l| l.at_ms == base).expect("busy-0");
    assert_eq!(busy0.key, third.1[0].key, "the same request hashes alike");
    assert_eq!(second.1[0].served, Some(CallEnd::Fetched));
    assert!(busy_lines.iter().all(|l| l.served == Some(CallEnd::Fetched)));
    // Each flight's attempts: when, how long, what; the storm's 429 and the retry.
    for l in busy_lines.iter().chain(&second.1) {
        assert!(
            !l.attempts.is_empty(),
            "a fetched call carries its flight's attempts: {l:?}"
        );
        let last = l.attempts.last().unwrap();
        assert_eq!(last.outcome, AttemptOutcome::Ok);
        assert!(
            l.attempts
                .iter()
                .all(|a| a.at_ms >= l.at_ms && (a.latency_ms == LATENCY_MS || a.outcome != AttemptOutcome::Ok)),
            "{l:?}"
        );
    }
    let refused: Vec<_> = busy_lines
        .iter()
        .flat_map(|l| &l.attempts)
        .filter(|a| a.outcome == AttemptOutcome::RateLimited)
        .collect();
    assert!(!refused.is_empty(), "the storm is in the recording");
    assert!(refused.iter().all(|a| a.retry_after_ms == Some(1000)));
    (busy_name.clone(), second.0.clone(), refused.len())
}

/// The simulator replays the recording with its latencies and outcomes, admitting alike
/// within the tolerance; and what if the legacy policy ran it, or the platform halved
/// its limit.
fn the_simulator_replays_it(recording: &Recording, busy_name: &str, second_name: &str, refused: usize) {
    // The simulator replays the file with the recorded latencies and outcomes.
    let mut workload = parse_trace(&recording.text, "recorded").expect("the recording parses as a trace");
    // This server held back no margin (above), so neither does its replay.
    workload.recorded.as_mut().expect("a recorded trace").margin = std::time::Duration::ZERO;
    let fair = replay(&workload, PolicyKind::Fair);
    // Fidelity: the same admissions, in the same order, within the tolerance.
    let matched = fidelity::check(&workload, &fair, TOLERANCE_MS).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(matched.len(), 1, "one limited service: {matched:?}");
    assert!(
        matched[0].admissions > 167 && matched[0].blind.is_none(),
        "every flight and the storm's retries: {matched:?}"
    );
    let fair_platform = fair
        .services
        .iter()
        .find(|p| p.id == besluitbron_server::platforms::obv::SERVICE)
        .unwrap();
    assert_eq!(
        fair_platform.counters.throttled, refused as u64,
        "the recording's 429s are the replay's"
    );
    assert_eq!(fair_platform.counters.over_limit, 0);
    assert!(
        longest_wait(&fair, second_name) < 2_000,
        "fair: the session-era client at once"
    );

    // What if: the legacy policy on the same traffic.
    let legacy = replay(&workload, PolicyKind::Legacy);
    let waited = longest_wait(&legacy, second_name);
    assert!(
        waited > 100_000,
        "legacy: the 106-second case from a recording ({waited} ms)"
    );

    // What if: the platform halved its limit.
    let mut halved = workload.clone();
    halved
        .set_limit("obv=30/60s".parse::<LimitOverride>().expect("a limit"))
        .expect("obv is in the recording");
    let slow = replay(&halved, PolicyKind::Fair);
    let last = slow
        .calls
        .iter()
        .filter_map(|c| c.admitted_at)
        .max()
        .expect("admissions");
    assert!(
        last.as_millis() > 270_000,
        "at 30/60 s the last call goes after 270 s: {last}"
    );
    assert!(
        longest_wait(&slow, second_name) < 3_000,
        "fair still serves the second client"
    );
    let busy_wait = longest_wait(&slow, busy_name);
    assert!(
        busy_wait > 200_000,
        "the busy client pays for its burst: {busy_wait} ms"
    );
}
