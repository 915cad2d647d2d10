//! Recording the order a budget group's task takes its events in: the platforms that share
//! an upstream service (bwb and cvdr at KOOP's zoekservice) share one task, one fair queue
//! and one bucket, and a replay must take the events of one millisecond in the order that
//! task took them — its requests and its attempts' outcomes — or one session's calls at
//! the two platforms wait in another order than the server's.
//!
//! The group's task runs under tokio's paused clock with recording on (no platform over
//! the network: each attempt's answer is scripted, and where two must come back in one
//! instant in a given order, the test releases them in that order). The recorded trace is replayed by the
//! simulator and its admissions compared with the server's within 1 ms (see
//! `recording.rs` for why 1 ms suffices under the paused clock). Both cases were found in
//! the soak's recordings.

use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, CachePolicy, DataClass};
use besluitbron_core::path::{Feedback, Outcome};
use besluitbron_core::record::TraceLine;
use besluitbron_core::{PlatformId, SessionKey, Units};
use besluitbron_server::clock::Clock;
use besluitbron_server::config::{Config, LimitSetting};
use besluitbron_server::driver::record::trace_files;
use besluitbron_server::driver::{
    self, CallRequest, DriverOptions, Payload, PlatformHandle, Recorder, ServerBuffer, Upstream,
};
use besluitbron_server::metrics::Metrics;
use besluitbron_server::platforms::http::{PlatformError, Retry};
use besluitbron_server::platforms::{bwb, cvdr};
use besluitbron_sim::fidelity;
use besluitbron_sim::scenario::{LimitOverride, parse_trace};
use besluitbron_sim::{PolicyKind, RunOptions, run};
use futures::FutureExt;
use tokio::sync::Semaphore;
use tokio_util::sync::CancellationToken;

/// Instants under the paused clock are exact; the trace writes whole milliseconds.
const TOLERANCE_MS: u64 = 1;

/// The zoekservice's kept limit in these tests: two units a two-second window (one a
/// second), no margin, so that a few calls fill it.
const LIMIT: &str = "koop-zoekservice=2/2s";

/// The group of bwb and cvdr, started with recording on in `dir`: their handles and the
/// recorder.
fn group(dir: &std::path::Path) -> (PlatformHandle, PlatformHandle, Recorder) {
    let mut config: Config = besluitbron_server::connectors::load_config(None, Vec::new()).expect("defaults");
    config.data_dir = dir.to_path_buf();
    config.recording.enabled = true;
    config.recording.salt = "fixed".into();
    config
        .services
        .get_mut("koop-zoekservice")
        .expect("the zoekservice")
        .limit = Some(LimitSetting {
        capacity: Units::whole(2),
        window_secs: 2.0,
        margin_secs: 0.0,
    });
    let metrics = Arc::new(Metrics::new());
    let recorder = Recorder::start(&config.recording, &config.data_dir, Arc::clone(&metrics))
        .expect("the recorder starts")
        .expect("recording is on");
    let group = config
        .budget_groups()
        .expect("groups")
        .into_iter()
        .find(|g| g.platforms.contains(&bwb::PLATFORM))
        .expect("bwb's group");
    assert!(group.platforms.contains(&cvdr::PLATFORM), "bwb and cvdr share a task");
    let members = [bwb::PLATFORM, cvdr::PLATFORM]
        .into_iter()
        .map(|platform| driver::task::Member {
            buffer: ServerBuffer::new(platform, None, CachePolicy::default().for_platform(platform)),
            first: config.first_service(platform).expect("a first service"),
        })
        .collect();
    let options = DriverOptions {
        clock: Clock::start(),
        metrics,
        attempt_timeout: Duration::from_secs(30),
        observer: None,
        cancel: CancellationToken::new(),
        recorder: Some(recorder.clone()),
    };
    let (handles, _task) =
        driver::task::spawn(&group, driver::path_config(&config, &group), members, options).expect("the group's task");
    let of = |p: PlatformId| handles.iter().find(|h| h.platform() == p).expect("a handle").clone();
    (of(bwb::PLATFORM), of(cvdr::PLATFORM), recorder)
}

fn request(platform: PlatformId, query: &str, session: &str) -> CallRequest {
    CallRequest {
        key: CacheKey::new(platform, DataClass::Search, "search").param("q", query),
        session: SessionKey::client(session),
        cost: Units::ONE,
        service: None,
    }
}

/// An upstream that answers every attempt after 1 ms; or (`refusal`) whose first attempt
/// waits until the test releases it (a permit of `refusal`) and is then refused with 429
/// (Retry-After 1 s), its later attempts answered at once.
fn upstream(platform: PlatformId, refusal: Option<Arc<Semaphore>>) -> Upstream {
    let attempts = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Arc::new(move |_previous| {
        let n = attempts.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let refusal = refusal.clone();
        Box::pin(async move {
            match refusal {
                Some(released) if n == 0 => {
                    released.acquire().await.expect("open").forget();
                    Outcome::RateLimited {
                        retry_after: Duration::from_secs(1),
                        error: PlatformError::Upstream {
                            platform,
                            status: 429,
                            retry: Retry::Wait {
                                after: Duration::from_secs(1),
                            },
                        },
                    }
                }
                _ => {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                    Outcome::Success {
                        payload: Payload::from_bytes(b"{}".to_vec()),
                        feedback: Feedback::default(),
                    }
                }
            }
        })
    })
}

/// Calls `handle` for `query` as `session`, in a task of its own; the task ends with the
/// call.
fn spawn_call(
    handle: &PlatformHandle,
    query: &str,
    session: &str,
    refusal: Option<Arc<Semaphore>>,
) -> tokio::task::JoinHandle<()> {
    let (handle, req) = (handle.clone(), request(handle.platform(), query, session));
    let up = upstream(handle.platform(), refusal);
    tokio::spawn(async move {
        handle.call(req, move || up, None).await.expect("answered");
    })
}

/// Every line the recorder wrote in `dir` that ends a request (not the open lines written
/// while requests waited), once written.
async fn recorded(recorder: Recorder, dir: &std::path::Path) -> (String, Vec<TraceLine>) {
    tokio::task::spawn_blocking(move || recorder.sync())
        .await
        .expect("the writer synced");
    let mut text = String::new();
    for file in trace_files(&dir.join("trace")) {
        text.push_str(&std::fs::read_to_string(file).expect("a trace file"));
    }
    let lines = text
        .lines()
        .map(|l| serde_json::from_str::<TraceLine>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|l| !l.open)
        .collect();
    (text, lines)
}

/// The simulator replays `text` at the tests' limit; every zoekservice admission of the
/// recording is compared and found as recorded.
fn replays_as_recorded(text: &str, admissions: usize) {
    let mut workload = parse_trace(text, "recorded").expect("the recording parses");
    workload.recorded.as_mut().expect("recorded").margin = Duration::ZERO;
    workload
        .set_limit(LIMIT.parse::<LimitOverride>().expect("a limit"))
        .expect("the zoekservice is in the recording");
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: 1,
        keep_trace: false,
        progress: false,
    };
    let replay = run("recorded", &workload, opts).unwrap_or_else(|f| panic!("{f}"));
    let matched = fidelity::check(&workload, &replay, TOLERANCE_MS).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(matched.len(), 1, "one limited service: {matched:?}");
    assert_eq!(
        (matched[0].admissions, matched[0].whole()),
        (admissions, true),
        "every admission compared, over the whole recording: {matched:?}"
    );
}

/// Found in the soak: one session's `search` asked cvdr and then bwb within one
/// millisecond, both queued behind a full bucket. The server kept the session's order
/// (cvdr first); the recording numbered each platform's requests apart (cvdr's 3rd,
/// bwb's 1st), and the replay, ordering a millisecond's arrivals by those numbers,
/// admitted bwb first.
#[tokio::test(start_paused = true)]
async fn regression_two_platforms_requests_of_one_millisecond_replay_in_the_tasks_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (bwb, cvdr, recorder) = group(dir.path());
    let origin = tokio::time::Instant::now();
    // Session a fills the bucket with two cvdr searches.
    let mut calls = vec![spawn_call(&cvdr, "a1", "a", None), spawn_call(&cvdr, "a2", "a", None)];
    tokio::time::sleep_until(origin + Duration::from_millis(100)).await;
    // Session b asks cvdr and then bwb in the same instant: the first is in the task's
    // channel before the second is made.
    let mut first = Box::pin(cvdr.call(
        request(cvdr::PLATFORM, "b1", "b"),
        || upstream(cvdr::PLATFORM, None),
        None,
    ));
    assert!(first.as_mut().now_or_never().is_none(), "b1 waits");
    let second = bwb.call(
        request(bwb::PLATFORM, "b2", "b"),
        || upstream(bwb::PLATFORM, None),
        None,
    );
    let (b1, b2) = tokio::join!(first, second);
    b1.expect("b1 answered");
    b2.expect("b2 answered");
    for c in calls.drain(..) {
        c.await.expect("a call");
    }
    let (text, lines) = recorded(recorder, dir.path()).await;
    let step_of = |platform: &str, n: usize| {
        let mut of: Vec<&TraceLine> = lines.iter().filter(|l| l.platform == platform).collect();
        of.sort_by_key(|l| l.seq);
        of[n].step.expect("a step")
    };
    assert!(
        step_of("cvdr", 2) < step_of("bwb", 0),
        "b1 was taken before b2, whatever each platform's numbers: {text}"
    );
    replays_as_recorded(&text, 4);
}

/// Found in the soak: one session's bwb and cvdr searches went at once and were both
/// refused (429) within one millisecond, cvdr's answer taken first though its attempt
/// went later; both queued once more, cvdr's first. The replay, taking answers of one
/// millisecond in the order their attempts went, queued bwb's first.
#[tokio::test(start_paused = true)]
async fn regression_two_refusals_of_one_millisecond_replay_in_the_tasks_order() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (bwb, cvdr, recorder) = group(dir.path());
    let origin = tokio::time::Instant::now();
    // bwb's attempt goes at 10 ms, cvdr's at 11 ms; at 12 ms cvdr's refusal comes back,
    // then bwb's, in that order and in the same instant.
    let (bwb_refused, cvdr_refused) = (Arc::new(Semaphore::new(0)), Arc::new(Semaphore::new(0)));
    tokio::time::sleep_until(origin + Duration::from_millis(10)).await;
    let x = spawn_call(&bwb, "x", "s", Some(Arc::clone(&bwb_refused)));
    tokio::time::sleep_until(origin + Duration::from_millis(11)).await;
    let y = spawn_call(&cvdr, "y", "s", Some(Arc::clone(&cvdr_refused)));
    tokio::time::sleep_until(origin + Duration::from_millis(12)).await;
    cvdr_refused.add_permits(1);
    // The task took cvdr's refusal (its call waits once more) before bwb's is released;
    // no time passes while the task has work.
    while bwb.snapshot(false).await.expect("running").lanes[0].queued == 0 {
        tokio::task::yield_now().await;
    }
    bwb_refused.add_permits(1);
    x.await.expect("x");
    y.await.expect("y");
    let (text, lines) = recorded(recorder, dir.path()).await;
    let refusal = |platform: &str| {
        let line = lines.iter().find(|l| l.platform == platform).expect("a line");
        assert_eq!(line.attempts.len(), 2, "refused, then answered: {line:?}");
        line.attempts[0]
    };
    let (bx, cy) = (refusal("bwb"), refusal("cvdr"));
    assert_eq!(
        (bx.at_ms + bx.latency_ms, cy.at_ms + cy.latency_ms),
        (bx.at_ms + 2, bx.at_ms + 2),
        "both refusals are taken in one millisecond: {text}"
    );
    assert!(cy.step < bx.step, "cvdr's refusal was taken first: {text}");
    // The second attempts: cvdr's a unit before bwb's (one unit a second).
    let (bx2, cy2) = (
        lines.iter().find(|l| l.platform == "bwb").unwrap().attempts[1],
        lines.iter().find(|l| l.platform == "cvdr").unwrap().attempts[1],
    );
    assert!(cy2.at_ms + 900 < bx2.at_ms, "{text}");
    replays_as_recorded(&text, 4);
}
