//! The platform task under tokio's paused clock: the core path driven by the server's
//! shell in virtual time (R-D3, R-D8, R-L2 to R-L9). Coalescing of identical requests,
//! failures kept to their own flight, withdrawal when nobody waits, the fairness rule
//! for a joined call, scopes that never share, the 106-second case, retries that are
//! counted admissions, progress and a full queue.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, CachePolicy, CacheVersion, DataClass, Scope};
use besluitbron_core::path::{Feedback, Outcome, PathConfig, Served};
use besluitbron_core::{LimitConfig, SchedulerConfig, SessionKey, Units};
use besluitbron_server::clock::Clock;
use besluitbron_server::driver::{
    self, CallError, CallRequest, DriverOptions, LaneSnapshot, Payload, PlatformHandle, QueuePosition, ServerBuffer,
    SharedPayload, Upstream,
};
use besluitbron_server::metrics::Metrics;
use besluitbron_server::platforms::http::PlatformError;
use besluitbron_server::store::RedbStore;
use tokio_util::sync::CancellationToken;

/// OpenBesluitvorming's task: 60 units a minute (or no kept limit), over a buffer file
/// of its own.
fn platform(limit: Option<SchedulerConfig>) -> PlatformHandle {
    let policy = CachePolicy::default().for_platform(besluitbron_server::platforms::obv::PLATFORM);
    let dir = tempfile::tempdir().expect("temp dir").keep();
    let store = RedbStore::open(
        dir.join("obv.redb"),
        besluitbron_server::platforms::obv::PLATFORM,
        policy,
        CacheVersion::current(),
    )
    .expect("a fresh buffer file");
    let buffer = ServerBuffer::new(
        besluitbron_server::platforms::obv::PLATFORM,
        Some(Arc::new(store)),
        policy,
    );
    let options = DriverOptions {
        clock: Clock::start(),
        metrics: Arc::new(Metrics::new()),
        attempt_timeout: Duration::from_secs(30),
        observer: None,
        cancel: CancellationToken::new(),
        recorder: None,
    };
    driver::task::spawn_one(PathConfig::single("obv", limit), buffer, options, None)
        .expect("valid")
        .0
}

fn obv_limit() -> Option<SchedulerConfig> {
    Some(SchedulerConfig::with_limit(LimitConfig::new(
        Units::whole(60),
        Duration::from_secs(60),
    )))
}

fn key(q: &str) -> CacheKey {
    CacheKey::new(
        besluitbron_server::platforms::obv::PLATFORM,
        DataClass::Search,
        "search",
    )
    .param("query", q)
}

fn request(key: &CacheKey, session: &str) -> CallRequest {
    CallRequest {
        key: key.clone(),
        session: SessionKey::client(session),
        cost: Units::ONE,
        service: None,
    }
}

/// An upstream that counts its calls, takes `delay`, and answers or fails as `fail` says
/// for the n-th call (1-based).
fn upstream(calls: &Arc<AtomicUsize>, delay: Duration, fail: fn(usize) -> Option<PlatformError>) -> Upstream {
    let calls = Arc::clone(calls);
    Arc::new(move |_previous| {
        let calls = Arc::clone(&calls);
        Box::pin(async move {
            let n = calls.fetch_add(1, Ordering::SeqCst) + 1;
            tokio::time::sleep(delay).await;
            match fail(n) {
                Some(error) => besluitbron_server::call::classify(error),
                None => Outcome::Success {
                    payload: Payload::from_bytes(b"{\"answer\":42}".to_vec()),
                    feedback: Feedback::default(),
                },
            }
        })
    })
}

fn never(_: usize) -> Option<PlatformError> {
    None
}

fn always_503(_: usize) -> Option<PlatformError> {
    Some(PlatformError::Upstream {
        platform: besluitbron_server::platforms::obv::PLATFORM,
        status: 503,
        retry: besluitbron_server::platforms::http::Retry::Yes { after: None },
    })
}

fn call(
    p: &PlatformHandle,
    key: &CacheKey,
    session: &str,
    up: Upstream,
) -> impl Future<Output = Result<(SharedPayload, Served), CallError>> + Send + 'static {
    let (p, req) = (p.clone(), request(key, session));
    async move { p.call(req, move || up, None).await }
}

async fn lane(p: &PlatformHandle) -> LaneSnapshot {
    let snap = p.snapshot(true).await.expect("running");
    assert_eq!(snap.invariants, Ok(()), "the path's invariants hold");
    snap.lanes[0].clone()
}

/// `session` takes all 60 units of the bucket, so the next call queues.
async fn empty_bucket(p: &PlatformHandle, session: &str) {
    let calls = Arc::new(AtomicUsize::new(0));
    for i in 0..60 {
        call(
            p,
            &key(&format!("drain-{session}-{i}")),
            session,
            upstream(&calls, Duration::ZERO, never),
        )
        .await
        .expect("room");
    }
}

#[tokio::test(start_paused = true)]
async fn a_thousand_concurrent_identical_requests_make_one_upstream_call() {
    let p = platform(obv_limit());
    let calls = Arc::new(AtomicUsize::new(0));
    let k = key("stikstof");
    let tasks: Vec<_> = (0..1000)
        .map(|i| {
            tokio::spawn(call(
                &p,
                &k,
                &format!("s{}", i % 7),
                upstream(&calls, Duration::from_millis(50), never),
            ))
        })
        .collect();
    let mut served = BTreeMap::new();
    for t in tasks {
        let (payload, how) = t.await.unwrap().expect("every waiter gets the answer");
        assert_eq!(payload.bytes(), b"{\"answer\":42}");
        *served.entry(how.as_str()).or_insert(0) += 1;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "one upstream call");
    assert_eq!(served.get("fetched"), Some(&1));
    assert_eq!(served.get("coalesced"), Some(&999));
    let snap = p.snapshot(true).await.expect("running");
    assert_eq!((snap.in_flight, snap.waiting, snap.invariants), (0, 0, Ok(())));
    // A repeat comes from the buffer: no call.
    let (_, how) = call(&p, &k, "late", upstream(&calls, Duration::ZERO, never))
        .await
        .unwrap();
    assert_eq!((how, calls.load(Ordering::SeqCst)), (Served::Cached, 1));
}

#[tokio::test(start_paused = true)]
async fn a_failure_reaches_its_own_flights_waiters_only_and_the_next_request_tries_again() {
    let p = platform(None);
    let calls = Arc::new(AtomicUsize::new(0));
    let k = key("storing");
    let failing = |_: usize| {
        Some(PlatformError::BadRequest {
            sent: true,
            platform: besluitbron_server::platforms::obv::PLATFORM,
            code: "invalid_date".into(),
            message: "no".into(),
        })
    };
    let tasks: Vec<_> = (0..10)
        .map(|i| {
            tokio::spawn(call(
                &p,
                &k,
                &format!("s{i}"),
                upstream(&calls, Duration::from_millis(100), failing),
            ))
        })
        .collect();
    for t in tasks {
        match t.await.unwrap() {
            Err(CallError::Platform(PlatformError::BadRequest { .. })) => {}
            other => panic!("expected the flight's failure, got {other:?}"),
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Not kept: the next request calls upstream again, and succeeds.
    let (_, how) = call(&p, &k, "later", upstream(&calls, Duration::from_millis(10), never))
        .await
        .unwrap();
    assert_eq!((how, calls.load(Ordering::SeqCst)), (Served::Fetched, 2));
}

/// R-L8, the live defect: a 5xx was retried inside one admission, so OpenBesluitvorming
/// counted attempts BesluitBron never charged. Each attempt is now an admission.
#[tokio::test(start_paused = true)]
async fn regression_every_retry_of_a_5xx_is_an_admission_of_the_fair_queue() {
    let p = platform(obv_limit());
    let calls = Arc::new(AtomicUsize::new(0));
    match call(
        &p,
        &key("flaky"),
        "a",
        upstream(&calls, Duration::from_millis(20), always_503),
    )
    .await
    {
        Err(CallError::Platform(PlatformError::Upstream { status: 503, .. })) => {}
        other => panic!("expected the 503 after the retries, got {other:?}"),
    }
    assert_eq!(calls.load(Ordering::SeqCst), 3, "three attempts");
    let lane = lane(&p).await;
    assert_eq!(
        (lane.admitted_calls, lane.admitted_units),
        (3, Units::whole(3)),
        "every attempt that left was admitted and charged"
    );
    // One failure, then an answer: two attempts, both counted.
    let flaky_once = |n: usize| (n == 4).then(|| always_503(n)).flatten();
    let (_, how) = call(&p, &key("once"), "a", upstream(&calls, Duration::ZERO, flaky_once))
        .await
        .unwrap();
    assert_eq!((how, calls.load(Ordering::SeqCst)), (Served::Fetched, 5));
    assert_eq!(lane_of(&p).await.admitted_calls, 5);
}

async fn lane_of(p: &PlatformHandle) -> LaneSnapshot {
    lane(p).await
}

#[tokio::test(start_paused = true)]
async fn a_queued_call_nobody_waits_for_is_withdrawn_and_costs_nothing() {
    let p = platform(obv_limit());
    empty_bucket(&p, "busy").await;
    let calls = Arc::new(AtomicUsize::new(0));
    let k = key("wachtrij");
    let tasks: Vec<_> = (0..3)
        .map(|i| tokio::spawn(call(&p, &k, &format!("w{i}"), upstream(&calls, Duration::ZERO, never))))
        .collect();
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        lane(&p).await.queued,
        3,
        "the leader's call and two joined entries wait"
    );
    for t in &tasks {
        t.abort();
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let snap = lane(&p).await;
    assert_eq!(snap.queued, 0, "withdrawn");
    assert_eq!(snap.admitted_calls, 60, "nothing charged");
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 0, "never sent");
    assert_eq!(p.snapshot(true).await.unwrap().in_flight, 0);
}

#[tokio::test(start_paused = true)]
async fn a_fresh_session_joining_a_heavy_sessions_queued_call_gets_it_at_its_own_pace() {
    let p = platform(obv_limit());
    let calls = Arc::new(AtomicUsize::new(0));
    empty_bucket(&p, "heavy").await;
    let start = tokio::time::Instant::now();
    let mut heavy = Vec::new();
    for i in 0..10 {
        let c = call(
            &p,
            &key(&format!("q{i}")),
            "heavy",
            upstream(&calls, Duration::ZERO, never),
        );
        heavy.push(tokio::spawn(async move {
            c.await.unwrap();
            tokio::time::Instant::now()
        }));
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // `fresh` asks heavy's eighth question: without the rule it would wait ~8 s.
    let (_, how) = call(&p, &key("q7"), "fresh", upstream(&calls, Duration::ZERO, never))
        .await
        .unwrap();
    let waited = start.elapsed();
    assert_eq!(how, Served::Coalesced);
    assert!(
        waited <= Duration::from_millis(1_600),
        "fresh got the answer after {waited:?}"
    );
    let mut finished = Vec::new();
    for h in heavy {
        finished.push(h.await.unwrap() - start);
    }
    assert!(
        finished[7] <= Duration::from_millis(1_600),
        "the joined call went at fresh's position: {finished:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 10, "q7 went out once");
    assert_eq!(lane(&p).await.admitted_calls, 70, "charged once");
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_gives_up_withdraws_its_place_and_the_session_that_joined_gets_the_call() {
    let p = platform(obv_limit());
    empty_bucket(&p, "busy").await;
    let calls = Arc::new(AtomicUsize::new(0));
    let k = key("opgegeven");
    let leader = tokio::spawn(call(&p, &k, "leader", upstream(&calls, Duration::ZERO, never)));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let joiner = tokio::spawn(call(&p, &k, "joiner", upstream(&calls, Duration::ZERO, never)));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(lane(&p).await.queued, 2, "the call and the joined entry");
    leader.abort();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        lane(&p).await.queued,
        1,
        "the leader's place is withdrawn; only the joiner's entry stands for the call"
    );
    let (_, how) = joiner.await.unwrap().unwrap();
    assert_eq!(how, Served::Coalesced);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let snap = lane(&p).await;
    assert_eq!(
        (snap.admitted_calls, snap.queued),
        (61, 0),
        "charged once, nothing left"
    );
}

#[tokio::test(start_paused = true)]
async fn different_scopes_never_share_an_answer() {
    let p = platform(None);
    let calls = Arc::new(AtomicUsize::new(0));
    let public = key("rapport");
    let tenant = key("rapport").scoped(Scope::Tenant {
        tenant: "gemeente-a".to_owned(),
        user: "medewerker-1".to_owned(),
    });
    let a = tokio::spawn(call(
        &p,
        &public,
        "a",
        upstream(&calls, Duration::from_millis(50), never),
    ));
    let b = tokio::spawn(call(
        &p,
        &tenant,
        "b",
        upstream(&calls, Duration::from_millis(50), never),
    ));
    assert_eq!(a.await.unwrap().unwrap().1, Served::Fetched);
    assert_eq!(b.await.unwrap().unwrap().1, Served::Fetched);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn the_106_second_case_second_session_waits_about_a_second() {
    let p = platform(obv_limit());
    let start = tokio::time::Instant::now();
    let calls = Arc::new(AtomicUsize::new(0));
    let flood: Vec<_> = (0..166)
        .map(|i| {
            tokio::spawn(call(
                &p,
                &key(&format!("busy-{i}")),
                "busy",
                upstream(&calls, Duration::ZERO, never),
            ))
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let asked = tokio::time::Instant::now();
    call(&p, &key("second"), "second", upstream(&calls, Duration::ZERO, never))
        .await
        .expect("answered");
    let waited = asked.elapsed();
    assert!(waited <= Duration::from_secs(1), "second waited {waited:?}");
    for f in flood {
        f.await.unwrap().expect("answered");
    }
    // 166 + 1 units through a 60-unit bucket at one per second: 107 s after the start.
    let total = start.elapsed();
    assert!(
        total >= Duration::from_secs(107) && total < Duration::from_secs(108),
        "took {total:?}"
    );
    let snap = lane(&p).await;
    assert_eq!((snap.admitted_calls, snap.queued), (167, 0));
}

#[tokio::test(start_paused = true)]
async fn progress_reports_the_place_in_the_queue_each_second() {
    let p = platform(obv_limit());
    empty_bucket(&p, "a").await;
    let calls = Arc::new(AtomicUsize::new(0));
    let reports = Arc::new(std::sync::Mutex::new(Vec::<QueuePosition>::new()));
    let sink = {
        let reports = Arc::clone(&reports);
        Box::new(move |q: QueuePosition| reports.lock().unwrap().push(q))
    };
    let mut req = request(&key("drie"), "a");
    req.cost = Units::whole(3);
    let up = upstream(&calls, Duration::ZERO, never);
    p.call(req, move || up, Some(sink)).await.expect("answered");
    let reports = reports.lock().unwrap().clone();
    assert!(reports.len() >= 3, "reports: {reports:?}");
    assert_eq!(reports[0].estimated_wait, Duration::from_secs(3));
    assert!(reports.windows(2).all(|w| w[1].estimated_wait < w[0].estimated_wait));
}

#[tokio::test(start_paused = true)]
async fn a_full_queue_is_refused_with_a_retry_time() {
    let config = SchedulerConfig {
        max_queued_per_session: 2,
        ..SchedulerConfig::with_limit(LimitConfig::new(Units::ONE, Duration::from_secs(2)))
    };
    let p = platform(Some(config));
    let calls = Arc::new(AtomicUsize::new(0));
    call(&p, &key("0"), "a", upstream(&calls, Duration::ZERO, never))
        .await
        .expect("room");
    let _w1 = tokio::spawn(call(&p, &key("1"), "a", upstream(&calls, Duration::ZERO, never)));
    let _w2 = tokio::spawn(call(&p, &key("2"), "a", upstream(&calls, Duration::ZERO, never)));
    tokio::time::sleep(Duration::from_millis(1)).await;
    match call(&p, &key("3"), "a", upstream(&calls, Duration::ZERO, never)).await {
        Err(CallError::QueueFull { retry_after_secs, .. }) => assert!(retry_after_secs >= 1),
        other => panic!("expected a refusal, got {other:?}"),
    }
}
