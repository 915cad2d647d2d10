//! Request deduplication on the server's fetch path (R-D3, R-D7, R-D8): coalescing of
//! identical requests, failures kept to their own flight, withdrawal when nobody waits,
//! the fairness rule for a joined call, and scopes that never share.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, DataClass, Scope};
use besluitbron_core::dedup::{DuplicateMonitor, MonitorConfig};
use besluitbron_core::{LimitConfig, PlatformId, SchedulerConfig, SessionKey, Units};
use besluitbron_server::fetch::{Answer, FetchError, Fetcher, Request, Served, Upstream};
use besluitbron_server::gate::{Clock, PlatformGate};
use besluitbron_server::metrics::Metrics;
use besluitbron_server::platforms::http::PlatformError;

fn fetcher(limited: bool) -> Arc<Fetcher> {
    let clock = Clock::start();
    let mut gates = BTreeMap::new();
    if limited {
        let config = SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60)));
        gates.insert(
            PlatformId::Obv,
            PlatformGate::spawn(PlatformId::Obv, config, clock).unwrap(),
        );
    }
    Fetcher::new(
        gates,
        BTreeMap::new(),
        DuplicateMonitor::new(MonitorConfig::default()),
        Arc::new(Metrics::new()),
        clock,
    )
}

/// `session` takes all 60 units of the obv bucket, so the next call queues.
async fn empty_bucket(gate: &PlatformGate, session: &str) {
    for _ in 0..60 {
        gate.acquire(&SessionKey::client(session), Units::ONE).await.unwrap();
    }
}

fn request(key: &CacheKey, session: &str) -> Request {
    Request {
        key: key.clone(),
        cost: Units::ONE,
        session: SessionKey::client(session),
        client: session.to_owned(),
        tool: "obv_search",
    }
}

fn key(q: &str) -> CacheKey {
    CacheKey::new(PlatformId::Obv, DataClass::Search, "search").param("query", q)
}

/// A request of `session` for `key` on its own task, with an instant upstream that
/// counts its calls in `calls`.
fn spawn_fetch(
    f: &Arc<Fetcher>,
    key: &CacheKey,
    session: &'static str,
    calls: &Arc<AtomicUsize>,
) -> tokio::task::JoinHandle<Result<Answer, FetchError>> {
    let (f, key, upstream) = (Arc::clone(f), key.clone(), upstream(calls, Duration::ZERO, false));
    tokio::spawn(async move { f.fetch(request(&key, session), None, upstream).await })
}

/// An upstream that counts its calls, takes `delay`, and answers `payload` or fails.
fn upstream(
    calls: &Arc<AtomicUsize>,
    delay: Duration,
    fail: bool,
) -> impl FnOnce() -> std::pin::Pin<Box<dyn Future<Output = Result<Upstream, PlatformError>> + Send>> + Send + 'static {
    let calls = Arc::clone(calls);
    move || {
        Box::pin(async move {
            calls.fetch_add(1, Ordering::SeqCst);
            tokio::time::sleep(delay).await;
            if fail {
                Err(PlatformError::Upstream {
                    platform: PlatformId::Obv,
                    status: 503,
                })
            } else {
                Ok(Upstream {
                    payload: b"{\"answer\":42}".to_vec(),
                    rate: None,
                })
            }
        })
    }
}

#[tokio::test(start_paused = true)]
async fn a_thousand_concurrent_identical_requests_make_one_upstream_call() {
    let f = fetcher(true);
    let calls = Arc::new(AtomicUsize::new(0));
    let k = key("stikstof");
    let mut tasks = Vec::new();
    for i in 0..1000 {
        let (f, k, calls) = (Arc::clone(&f), k.clone(), Arc::clone(&calls));
        tasks.push(tokio::spawn(async move {
            f.fetch(
                request(&k, &format!("s{}", i % 7)),
                None,
                upstream(&calls, Duration::from_millis(50), false),
            )
            .await
        }));
    }
    let mut served = BTreeMap::new();
    for t in tasks {
        let answer = t.await.unwrap().expect("every waiter gets the answer");
        assert_eq!(answer.payload.as_slice(), b"{\"answer\":42}");
        *served.entry(format!("{:?}", answer.served)).or_insert(0) += 1;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1, "one upstream call");
    assert_eq!(served.get("Fetched"), Some(&1));
    assert_eq!(served.get("Coalesced"), Some(&999));
    assert_eq!(f.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_failure_reaches_its_own_flights_waiters_only_and_the_next_request_tries_again() {
    let f = fetcher(false);
    let calls = Arc::new(AtomicUsize::new(0));
    let k = key("storing");
    let mut tasks = Vec::new();
    for i in 0..10 {
        let (f, k, calls) = (Arc::clone(&f), k.clone(), Arc::clone(&calls));
        tasks.push(tokio::spawn(async move {
            f.fetch(
                request(&k, &format!("s{i}")),
                None,
                upstream(&calls, Duration::from_millis(100), true),
            )
            .await
        }));
    }
    for t in tasks {
        match t.await.unwrap() {
            Err(FetchError::Platform(PlatformError::Upstream { status: 503, .. })) => {}
            other => panic!("expected the flight's failure, got {other:?}"),
        }
    }
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // Not kept: the next request calls upstream again, and succeeds.
    let answer = f
        .fetch(
            request(&k, "later"),
            None,
            upstream(&calls, Duration::from_millis(10), false),
        )
        .await;
    assert_eq!(answer.unwrap().served, Served::Fetched);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

#[tokio::test(start_paused = true)]
async fn a_queued_call_nobody_waits_for_is_withdrawn_and_costs_nothing() {
    let f = fetcher(true);
    let gate = f.gate(PlatformId::Obv).unwrap().clone();
    empty_bucket(&gate, "busy").await;
    let calls = Arc::new(AtomicUsize::new(0));
    let k = key("wachtrij");
    let mut tasks = Vec::new();
    for i in 0..3 {
        let (f, k, calls) = (Arc::clone(&f), k.clone(), Arc::clone(&calls));
        tasks.push(tokio::spawn(async move {
            f.fetch(
                request(&k, &format!("w{i}")),
                None,
                upstream(&calls, Duration::ZERO, false),
            )
            .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(
        gate.snapshot().await.unwrap().queued,
        3,
        "the leader's call and two joined entries wait"
    );
    for t in &tasks {
        t.abort();
    }
    tokio::time::sleep(Duration::from_millis(50)).await;
    let snap = gate.snapshot().await.unwrap();
    assert_eq!(snap.queued, 0, "withdrawn");
    assert_eq!(snap.admitted_calls, 60, "nothing charged");
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(calls.load(Ordering::SeqCst), 0, "never sent");
    assert_eq!(f.in_flight(), 0);
}

#[tokio::test(start_paused = true)]
async fn a_fresh_session_joining_a_heavy_sessions_queued_call_gets_it_at_its_own_pace() {
    let f = fetcher(true);
    let gate = f.gate(PlatformId::Obv).unwrap().clone();
    let calls = Arc::new(AtomicUsize::new(0));
    // `heavy` empties the bucket and queues ten different searches.
    empty_bucket(&gate, "heavy").await;
    let start = tokio::time::Instant::now();
    let mut heavy = Vec::new();
    for i in 0..10 {
        let (f, calls) = (Arc::clone(&f), Arc::clone(&calls));
        heavy.push(tokio::spawn(async move {
            let k = key(&format!("q{i}"));
            f.fetch(request(&k, "heavy"), None, upstream(&calls, Duration::ZERO, false))
                .await
                .unwrap();
            tokio::time::Instant::now()
        }));
        tokio::task::yield_now().await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // `fresh` asks heavy's eighth question: without the rule it would wait ~8 s.
    let answer = f
        .fetch(
            request(&key("q7"), "fresh"),
            None,
            upstream(&calls, Duration::ZERO, false),
        )
        .await
        .unwrap();
    let waited = start.elapsed();
    assert_eq!(answer.served, Served::Coalesced);
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
    assert_eq!(gate.snapshot().await.unwrap().admitted_calls, 70, "charged once");
}

#[tokio::test(start_paused = true)]
async fn a_leader_that_gives_up_withdraws_its_place_and_the_session_that_joined_gets_the_call() {
    let f = fetcher(true);
    let gate = f.gate(PlatformId::Obv).unwrap().clone();
    empty_bucket(&gate, "busy").await;
    let calls = Arc::new(AtomicUsize::new(0));
    let k = key("opgegeven");
    let leader = spawn_fetch(&f, &k, "leader", &calls);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let joiner = spawn_fetch(&f, &k, "joiner", &calls);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        gate.snapshot().await.unwrap().queued,
        2,
        "the call and the joined entry"
    );
    leader.abort();
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        gate.snapshot().await.unwrap().queued,
        1,
        "the leader's place is withdrawn; only the joiner's entry stands for the call"
    );
    let answer = joiner.await.unwrap().unwrap();
    assert_eq!(answer.served, Served::Coalesced);
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let snap = gate.snapshot().await.unwrap();
    assert_eq!(
        (snap.admitted_calls, snap.queued),
        (61, 0),
        "charged once, nothing left"
    );
}

#[tokio::test(start_paused = true)]
async fn different_scopes_never_share_an_answer() {
    let f = fetcher(false);
    let calls = Arc::new(AtomicUsize::new(0));
    let public = key("rapport");
    let tenant = key("rapport").scoped(Scope::Tenant {
        tenant: "gemeente-a".to_owned(),
        user: "medewerker-1".to_owned(),
    });
    let (f1, f2) = (Arc::clone(&f), Arc::clone(&f));
    let (c1, c2) = (Arc::clone(&calls), Arc::clone(&calls));
    let a = tokio::spawn(async move {
        f1.fetch(
            request(&public, "a"),
            None,
            upstream(&c1, Duration::from_millis(50), false),
        )
        .await
    });
    let b = tokio::spawn(async move {
        f2.fetch(
            request(&tenant, "b"),
            None,
            upstream(&c2, Duration::from_millis(50), false),
        )
        .await
    });
    assert_eq!(a.await.unwrap().unwrap().served, Served::Fetched);
    assert_eq!(b.await.unwrap().unwrap().served, Served::Fetched);
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}
