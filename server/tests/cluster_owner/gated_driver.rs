//! The platform task under a lease, in tokio's paused clock, with a stand-in engine
//! that grants every request until it is "down": the task admits nothing before the
//! start, starts with an empty bucket, sends nothing once the lease has lapsed (an
//! admission made after is dropped, not sent), and hands its waiting calls back.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, CachePolicy, DataClass};
use besluitbron_core::cluster::{Lease, LeaseAnswer, LeaseEvent};
use besluitbron_core::path::{Feedback, Outcome, PathConfig};
use besluitbron_core::{Instant, LimitConfig, SchedulerConfig, SessionKey, Units};
use besluitbron_server::clock::Clock;
use besluitbron_server::driver::lease::lease_config;
use besluitbron_server::driver::{
    self, CallError, CallRequest, DriverOptions, LeaseGate, Ownership, Payload, PlatformHandle, ServerBuffer, Upstream,
};
use besluitbron_server::metrics::Metrics;
use tokio_util::sync::CancellationToken;

fn request(q: &str) -> CallRequest {
    CallRequest {
        key: CacheKey::new(
            besluitbron_server::platforms::obv::PLATFORM,
            DataClass::Search,
            "search",
        )
        .param("query", q),
        session: SessionKey::client("s"),
        cost: Units::ONE,
        service: None,
    }
}

fn answer() -> Upstream {
    Arc::new(|_| {
        Box::pin(async {
            Outcome::Success {
                payload: Payload::from_bytes(b"{\"answer\":1}".to_vec()),
                feedback: Feedback::default(),
            }
        })
    })
}

/// The engine stand-in: drives `gate` like the lease task, granting while `up`;
/// `Lost` reaches the platform's task `late` after it happened (a lease task stuck
/// on a slow engine call).
fn engine(gate: LeaseGate, handle: PlatformHandle, clock: Clock, up: Arc<AtomicBool>, late: Duration) {
    tokio::spawn(async move {
        loop {
            let now = clock.now();
            let mut events = Vec::new();
            {
                let mut g = gate.lock().unwrap();
                g.handle_timeout(now);
                if let Some(r) = g.poll_request(now) {
                    let a = if up.load(Ordering::SeqCst) {
                        LeaseAnswer::Granted
                    } else {
                        LeaseAnswer::Unreachable
                    };
                    g.on_answer(now, r.id, a);
                }
                while let Some(e) = g.poll_event() {
                    events.push(e);
                }
            }
            for e in events {
                match e {
                    LeaseEvent::StartAdmitting { epoch } => handle.ownership(Ownership::Start {
                        epoch,
                        checkpoint: None,
                    }),
                    LeaseEvent::Lost { .. } => {
                        tokio::time::sleep(late).await;
                        handle.ownership(Ownership::End);
                    }
                    _ => {}
                }
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
}

#[tokio::test(start_paused = true)]
async fn the_task_admits_and_sends_only_under_its_lease() {
    let clock = Clock::start();
    let lease = lease_config(Duration::from_millis(1_000));
    let gate: LeaseGate = Arc::new(Mutex::new(Lease::new(lease, clock.now()).unwrap()));
    let sends: Arc<Mutex<Vec<Instant>>> = Arc::default();
    let s = Arc::clone(&sends);
    let metrics = Arc::new(Metrics::new());
    let policy = CachePolicy::default().for_platform(besluitbron_server::platforms::obv::PLATFORM);
    let options = DriverOptions {
        clock,
        metrics: Arc::clone(&metrics),
        attempt_timeout: Duration::from_secs(30),
        observer: Some(Arc::new(move |_| s.lock().unwrap().push(clock.now()))),
        cancel: CancellationToken::new(),
        recorder: None,
    };
    let limit = SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60)));
    let (handle, _task) = driver::task::spawn_one(
        PathConfig::single("obv", Some(limit)),
        ServerBuffer::new(besluitbron_server::platforms::obv::PLATFORM, None, policy),
        options,
        Some(Arc::clone(&gate)),
    )
    .unwrap();

    // Before the lease: nothing is admitted, the call goes elsewhere.
    let r = handle.call(request("voor"), answer, None).await;
    assert!(
        matches!(r, Err(CallError::NotOwner(p)) if p == besluitbron_server::platforms::obv::PLATFORM),
        "{r:?}"
    );

    let up = Arc::new(AtomicBool::new(true));
    engine(
        Arc::clone(&gate),
        handle.clone(),
        clock,
        Arc::clone(&up),
        Duration::from_secs(3),
    );
    // The start wait (TTL + m), then the first call waits for a unit to refill: the
    // new owner's bucket starts empty.
    tokio::time::sleep(lease.start_wait() + Duration::from_millis(50)).await;
    let started = clock.now();
    handle.call(request("eerste"), answer, None).await.expect("admitted");
    let first = sends.lock().unwrap()[0];
    assert!(
        first.saturating_since(started) >= Duration::from_millis(900),
        "an empty bucket at the start: the first call waited {:?}",
        first.saturating_since(started)
    );

    // Queue calls, then the engine goes down: the lease lapses by the task's clock.
    let mut waiting = Vec::new();
    for i in 0..5 {
        let h = handle.clone();
        waiting.push(tokio::spawn(async move {
            h.call(request(&format!("q{i}")), answer, None).await
        }));
    }
    tokio::time::sleep(Duration::from_millis(10)).await;
    up.store(false, Ordering::SeqCst);
    let valid_until = gate.lock().unwrap().valid_until().expect("held");
    let mut ends = Vec::new();
    for w in waiting {
        ends.push(w.await.unwrap());
    }
    let sent = sends.lock().unwrap().clone();
    assert!(
        sent.iter().all(|&t| t < valid_until),
        "nothing sent after the lease lapsed at {valid_until:?}: {sent:?}"
    );
    assert!(
        ends.iter().any(|e| matches!(e, Err(CallError::NotOwner(_)))),
        "the calls left waiting go to the next owner: {ends:?}"
    );
    let text = metrics.render();
    assert!(
        text.contains("besluitbron_dropped_admissions_total{platform=\"obv\"}"),
        "an admission made after the lapse was dropped, not sent: {text}"
    );
    // After the end: refused at once.
    let r = handle.call(request("na"), answer, None).await;
    assert!(matches!(r, Err(CallError::NotOwner(_))), "{r:?}");
}
