//! The platform gate under tokio's paused clock: the scheduler task in virtual time.

use std::time::Duration;

use besluitbron_core::{LimitConfig, PlatformId, SchedulerConfig, SessionKey, Units};
use besluitbron_server::gate::{Clock, GateError, PlatformGate, Queued};

fn obv_gate() -> PlatformGate {
    let config = SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60)));
    PlatformGate::spawn(PlatformId::Obv, config, Clock::start()).expect("valid config")
}

/// `session` takes all 60 units of the bucket, so the next call queues.
async fn empty_bucket(gate: &PlatformGate, session: &SessionKey) {
    for _ in 0..60 {
        gate.acquire(session, Units::ONE).await.expect("room");
    }
}

#[tokio::test(start_paused = true)]
async fn the_106_second_case_second_session_waits_about_a_second() {
    let gate = obv_gate();
    let start = tokio::time::Instant::now();
    let busy = SessionKey::client("busy");
    let mut flood = Vec::new();
    for _ in 0..166 {
        let gate = gate.clone();
        let busy = busy.clone();
        flood.push(tokio::spawn(async move { gate.acquire(&busy, Units::ONE).await }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let asked = tokio::time::Instant::now();
    let admission = gate
        .acquire(&SessionKey::client("second"), Units::ONE)
        .await
        .expect("admitted");
    let waited = asked.elapsed();
    assert!(waited <= Duration::from_secs(1), "second waited {waited:?}");
    assert_eq!(admission.session, SessionKey::client("second"));
    for f in flood {
        f.await.expect("task").expect("admitted");
    }
    // 166 + 1 units through a 60-unit bucket at one per second: 107 s after the start.
    let total = start.elapsed();
    assert!(
        total >= Duration::from_secs(107) && total < Duration::from_secs(108),
        "took {total:?}"
    );
    let snap = gate.snapshot().await.expect("running");
    assert_eq!((snap.admitted_calls, snap.queued), (167, 0));
}

#[tokio::test(start_paused = true)]
async fn dropping_a_waiting_call_withdraws_it_and_costs_nothing() {
    let gate = obv_gate();
    let a = SessionKey::client("a");
    empty_bucket(&gate, &a).await;
    let waiting = tokio::time::timeout(Duration::from_millis(200), gate.acquire(&a, Units::ONE)).await;
    assert!(waiting.is_err(), "no room yet, so the call waited and was dropped");
    tokio::task::yield_now().await;
    let snap = gate.snapshot().await.expect("running");
    assert_eq!((snap.queued, snap.cancelled_calls, snap.admitted_calls), (0, 1, 60));
}

#[tokio::test(start_paused = true)]
async fn progress_reports_the_place_in_the_queue() {
    let gate = obv_gate();
    let a = SessionKey::client("a");
    empty_bucket(&gate, &a).await;
    let mut reports = Vec::new();
    let mut ticket = None;
    gate.acquire_with(&a, Units::whole(3), Duration::from_secs(1), |q| match q {
        Queued::Ticket(t) => ticket = Some(t),
        Queued::Position(p) => reports.push(p),
    })
    .await
    .expect("admitted");
    assert!(ticket.is_some());
    assert!(reports.len() >= 3, "reports: {reports:?}");
    assert_eq!(reports[0].estimated_wait, Duration::from_secs(3));
    assert!(reports.windows(2).all(|w| w[1].estimated_wait < w[0].estimated_wait));
}

#[tokio::test(start_paused = true)]
async fn a_retry_after_from_the_platform_holds_every_call_back() {
    let gate = obv_gate();
    gate.retry_after(Duration::from_secs(30));
    let asked = tokio::time::Instant::now();
    gate.acquire(&SessionKey::client("a"), Units::ONE)
        .await
        .expect("admitted");
    assert!(asked.elapsed() >= Duration::from_secs(30));
}

#[tokio::test(start_paused = true)]
async fn a_full_queue_is_refused_with_a_retry_after() {
    let config = SchedulerConfig {
        max_queued_per_session: 2,
        ..SchedulerConfig::with_limit(LimitConfig::new(Units::ONE, Duration::from_secs(2)))
    };
    let gate = PlatformGate::spawn(PlatformId::Obv, config, Clock::start()).expect("valid");
    let a = SessionKey::client("a");
    gate.acquire(&a, Units::ONE).await.expect("room");
    let g1 = gate.clone();
    let g2 = gate.clone();
    let (a1, a2) = (a.clone(), a.clone());
    let _w1 = tokio::spawn(async move { g1.acquire(&a1, Units::ONE).await });
    let _w2 = tokio::spawn(async move { g2.acquire(&a2, Units::ONE).await });
    tokio::task::yield_now().await;
    tokio::time::sleep(Duration::from_millis(1)).await;
    match gate.acquire(&a, Units::ONE).await {
        Err(GateError::QueueFull { retry_after_secs, .. }) => assert!(retry_after_secs >= 1),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test(start_paused = true)]
async fn a_join_whose_caller_left_before_the_answer_leaves_no_entry_behind() {
    let gate = obv_gate();
    let a = SessionKey::client("a");
    empty_bucket(&gate, &a).await;
    let (ticket_tx, ticket_rx) = tokio::sync::oneshot::channel();
    let leader = {
        let gate = gate.clone();
        let a = a.clone();
        tokio::spawn(async move {
            let mut ticket_tx = Some(ticket_tx);
            gate.acquire_with(&a, Units::ONE, Duration::MAX, move |q| {
                if let (Queued::Ticket(t), Some(tx)) = (q, ticket_tx.take()) {
                    let _ = tx.send(t);
                }
            })
            .await
        })
    };
    let flight = ticket_rx.await.expect("queued");
    // The join is sent, then its caller gives up before the gate answers.
    let gone = tokio::time::timeout(Duration::ZERO, gate.join(&SessionKey::client("c"), flight)).await;
    assert!(gone.is_err(), "the caller left before the answer");
    let snap = gate.snapshot().await.expect("running");
    assert_eq!(
        snap.queued, 1,
        "only the call itself waits; the orphan entry was withdrawn"
    );
    // A join that is answered adds its entry.
    gate.join(&SessionKey::client("d"), flight).await.expect("joined");
    assert_eq!(gate.snapshot().await.expect("running").queued, 2);
    let admission = leader.await.expect("task").expect("admitted");
    assert_eq!(admission.flight, flight);
    let snap = gate.snapshot().await.expect("running");
    assert_eq!((snap.queued, snap.admitted_calls), (0, 61));
}
