//! The scheduler's unit tests: each rule of the module documentation, one case at a time.

use super::*;
use crate::platform::LimitConfig;

fn obv() -> FairScheduler {
    FairScheduler::new(SchedulerConfig::with_limit(LimitConfig::new(
        Units::whole(60),
        Duration::from_secs(60),
    )))
    .expect("valid")
}

fn queued(s: Submission) -> CallTicket {
    match s {
        Submission::Queued { call, .. } => call,
        other => panic!("expected a queued call, got {other:?}"),
    }
}

fn admitted(s: Submission) -> Admission {
    match s {
        Submission::Admitted(a) => a,
        other => panic!("expected an admission, got {other:?}"),
    }
}

#[test]
fn a_flight_whose_own_ticket_was_withdrawn_leaves_no_bookkeeping_behind() {
    // Found in review: a join after the call's own ticket was withdrawn put the
    // ticket back into the entry → flight map, where nothing removed it again.
    let mut s = obv();
    let a = SessionKey::client("a");
    for _ in 0..60 {
        s.submit(Instant::ZERO, &a, Units::ONE);
    }
    let flight = queued(s.submit(Instant::ZERO, &a, Units::ONE));
    let b_entry = s.join(Instant::ZERO, &SessionKey::client("b"), flight).expect("joined");
    assert!(s.cancel(Instant::ZERO, flight.first_entry()));
    let c_entry = s.join(Instant::ZERO, &SessionKey::client("c"), flight).expect("joined");
    assert!(s.is_waiting(flight));
    s.check_invariants().expect("consistent after joins and a cancel");
    let admitted = s.poll_admission(Instant::from_secs(1)).expect("admitted");
    assert_eq!(admitted.call, flight);
    assert!([b_entry, c_entry].contains(&admitted.entry));
    assert!(
        s.poll_admission(Instant::from_secs(2)).is_none(),
        "the other entry was withdrawn"
    );
    assert_eq!(s.calls.len(), 0, "no entry is left indexed");
    s.check_invariants().expect("consistent after the admission");
}

#[test]
fn bad_configuration_is_refused_with_a_reason() {
    let mut c = SchedulerConfig::with_limit(LimitConfig::new(Units::ZERO, Duration::from_secs(1)));
    assert_eq!(FairScheduler::new(c.clone()).unwrap_err(), ConfigError::ZeroCapacity);
    c.limit = LimitConfig::new(Units::ONE, Duration::ZERO);
    assert_eq!(FairScheduler::new(c.clone()).unwrap_err(), ConfigError::ZeroWindow);
    c.limit = LimitConfig::new(Units::ONE, Duration::from_secs(1));
    c.max_queued = 0;
    assert_eq!(FairScheduler::new(c).unwrap_err(), ConfigError::ZeroQueue);
}

#[test]
fn estimate_is_exact_for_a_lone_session() {
    let mut s = obv();
    let a = SessionKey::client("a");
    for _ in 0..60 {
        assert!(matches!(
            s.submit(Instant::ZERO, &a, Units::ONE),
            Submission::Admitted(_)
        ));
    }
    let first = queued(s.submit(Instant::ZERO, &a, Units::ONE));
    let third = {
        queued(s.submit(Instant::ZERO, &a, Units::ONE));
        queued(s.submit(Instant::ZERO, &a, Units::ONE))
    };
    let e = s.estimate(Instant::ZERO, first).expect("waiting");
    assert_eq!(
        (e.admit_at, e.ahead_in_session, e.waiting_sessions),
        (Instant::from_secs(1), 0, 1)
    );
    assert_eq!(
        s.estimate(Instant::ZERO, third).expect("waiting").admit_at,
        Instant::from_secs(3)
    );
    // The estimate matches what actually happens.
    assert_eq!(s.poll_timeout(Instant::ZERO), Some(Instant::from_secs(1)));
    assert_eq!(s.poll_admission(Instant::from_secs(1)).map(|a| a.call), Some(first));
}

#[test]
fn estimate_accounts_for_a_lighter_competitor() {
    let mut s = obv();
    let heavy = SessionKey::client("heavy");
    let fresh = SessionKey::client("fresh");
    for _ in 0..60 {
        s.submit(Instant::ZERO, &heavy, Units::ONE);
    }
    let h = queued(s.submit(Instant::ZERO, &heavy, Units::ONE));
    let alone = s.estimate(Instant::ZERO, h).expect("waiting").admit_at;
    queued(s.submit(Instant::ZERO, &fresh, Units::ONE));
    let shared = s.estimate(Instant::ZERO, h).expect("waiting").admit_at;
    assert!(
        shared > alone,
        "a competitor with a larger weight delays the estimate ({alone} vs {shared})"
    );
}

#[test]
fn remaining_and_reset_from_the_platform_lower_the_bucket() {
    let mut s = obv();
    let a = SessionKey::client("a");
    s.on_remaining(Instant::from_secs(1), Units::whole(2), Some(Duration::from_secs(58)));
    assert_eq!(s.tokens(Instant::from_secs(1)), Units::whole(2));
    assert!(matches!(
        s.submit(Instant::from_secs(1), &a, Units::whole(2)),
        Submission::Admitted(_)
    ));
    assert!(matches!(
        s.submit(Instant::from_secs(1), &a, Units::ONE),
        Submission::Queued { .. }
    ));
    assert_eq!(s.poll_timeout(Instant::from_secs(1)), Some(Instant::from_secs(2)));
}

#[test]
fn a_refusal_names_an_honest_retry_instant() {
    let mut c = SchedulerConfig::with_limit(LimitConfig::new(Units::ONE, Duration::from_secs(1)));
    c.max_queued = 1;
    let mut s = FairScheduler::new(c).expect("valid");
    let (a, b) = (SessionKey::client("a"), SessionKey::client("b"));
    assert!(matches!(
        s.submit(Instant::ZERO, &a, Units::ONE),
        Submission::Admitted(_)
    ));
    queued(s.submit(Instant::ZERO, &a, Units::ONE));
    let Submission::Refused { reason, retry_at } = s.submit(Instant::ZERO, &b, Units::ONE) else {
        panic!("the platform queue is full");
    };
    assert_eq!((reason, retry_at), (QueueFull::Platform, Instant::from_secs(1)));
    // At that instant the waiter goes and the retry is accepted.
    assert!(s.poll_admission(retry_at).is_some());
    assert!(matches!(s.submit(retry_at, &b, Units::ONE), Submission::Queued { .. }));
    assert_eq!(s.tracked_sessions(), 2);
}

#[test]
fn cancelling_an_unknown_or_admitted_ticket_is_a_no_op() {
    let mut s = obv();
    let a = SessionKey::client("a");
    let Submission::Admitted(adm) = s.submit(Instant::ZERO, &a, Units::ONE) else {
        panic!("room")
    };
    assert!(!s.cancel(Instant::ZERO, adm.entry));
    assert!(!s.cancel(Instant::ZERO, EntryTicket(999)));
    assert!(!s.cancel_call(Instant::ZERO, CallTicket(999)));
    assert_eq!(s.stats().cancelled_calls, 0);
}

#[test]
fn time_going_backwards_is_clamped() {
    let mut s = obv();
    let a = SessionKey::client("a");
    for _ in 0..60 {
        s.submit(Instant::from_secs(10), &a, Units::ONE);
    }
    queued(s.submit(Instant::from_secs(10), &a, Units::ONE));
    // An earlier `now` neither admits early nor panics.
    assert!(s.poll_admission(Instant::from_secs(5)).is_none());
    assert_eq!(s.poll_timeout(Instant::from_secs(5)), Some(Instant::from_secs(11)));
}

#[test]
fn the_system_session_keeps_weight_one() {
    let mut s = obv();
    for _ in 0..60 {
        s.submit(Instant::ZERO, &SessionKey::System, Units::ONE);
    }
    let sys = s.index[&SessionKey::System];
    assert_eq!(s.weight_q32(s.state(sys)), 1 << 32);
    assert_eq!(s.session_usage(&SessionKey::System), Some(Units::whole(60)));
}

/// Found in review of the 429 path: a call the platform refused was charged at its
/// admission and again when it was queued once more. The refund gives the session its
/// usage back and its finish tag with it, so its call asked again goes at its old place
/// — also when that call was already waiting when the refund came (the head moves).
#[test]
fn a_call_the_platform_refused_is_refunded_to_its_session() {
    let limit = LimitConfig::new(Units::whole(3), Duration::from_secs(3));
    let (a, b) = (SessionKey::client("a"), SessionKey::client("b"));
    for queued_before_refund in [false, true] {
        let mut order = Vec::new();
        for refund in [true, false] {
            let mut s = FairScheduler::new(SchedulerConfig::with_limit(limit)).expect("valid");
            // `b` and `a` use a unit each (equal usage: their tie is the tickets'); `a`
            // takes the rest of the bucket and the platform refuses that call.
            admitted(s.submit(Instant::ZERO, &b, Units::whole(1)));
            admitted(s.submit(Instant::ZERO, &a, Units::whole(1)));
            let refused = admitted(s.submit(Instant::ZERO, &a, Units::whole(1)));
            s.on_retry_after(Instant::ZERO, Duration::from_secs(1));
            let ask_again = |s: &mut FairScheduler| {
                queued(s.submit(Instant::ZERO, &a, Units::whole(1)));
                queued(s.submit(Instant::ZERO, &b, Units::whole(1)))
            };
            let b_ticket = queued_before_refund.then(|| ask_again(&mut s));
            if refund {
                s.refund(Instant::ZERO, refused.charge);
                assert_eq!(s.session_usage(&a), s.session_usage(&b));
                assert_eq!(s.stats().refunded_calls, 1);
            } else {
                assert_eq!(s.session_usage(&a), Some(Units::whole(2)));
            }
            let b_ticket = b_ticket.unwrap_or_else(|| ask_again(&mut s));
            assert_eq!((s.queued(), s.waiting_sessions()), (2, 2));
            assert!(s.estimate(Instant::ZERO, b_ticket).is_some());
            let first = s
                .poll_admission(Instant::from_secs(1))
                .expect("room after the Retry-After");
            order.push(first.session);
        }
        // Refunded, `a`'s tag and usage are back where its first call left them — equal
        // to `b`'s — and its earlier ticket goes first; charged twice, it would wait
        // behind `b`.
        assert_eq!(
            order,
            vec![a.clone(), b.clone()],
            "queued before the refund: {queued_before_refund}"
        );
    }
}

/// The refund takes back what the refused call added, not what a call would add now:
/// a later admission of the same session keeps its own charge.
#[test]
fn a_refund_takes_back_exactly_the_refused_calls_charge() {
    let mut s = obv();
    let a = SessionKey::client("a");
    let first = admitted(s.submit(Instant::ZERO, &a, Units::whole(30)));
    let second = admitted(s.submit(Instant::ZERO, &a, Units::whole(20)));
    // Units 30 × (C + 0) for the first, 20 × (C + 30) for the second, in milli-units.
    let c = 60_000u128;
    assert_eq!(first.charge.finish_increment, 30_000 * c);
    assert_eq!(second.charge.finish_increment, 20_000 * (c + 30_000));
    let second_increment = second.charge.finish_increment;
    s.refund(Instant::ZERO, first.charge);
    assert_eq!(s.session_usage(&a), Some(Units::whole(20)));
    let slot = s.index[&a];
    assert_eq!(s.state(slot).last_finish, second_increment);
}

#[test]
fn a_refund_never_goes_below_nothing_and_ignores_an_unknown_session() {
    let mut s = obv();
    let a = SessionKey::client("a");
    // Charges made by another scheduler: `a` is unknown here, then used less.
    let foreign = || admitted(obv().submit(Instant::ZERO, &a, Units::whole(5))).charge;
    s.refund(Instant::ZERO, foreign());
    assert_eq!(s.session_usage(&a), None);
    let mine = admitted(s.submit(Instant::ZERO, &a, Units::whole(1))).charge;
    s.refund(Instant::ZERO, foreign());
    s.refund(Instant::ZERO, mine);
    assert_eq!(s.session_usage(&a), Some(Units::ZERO));
    assert_eq!(s.state(s.index[&a]).last_finish, 0);
    s.check_invariants().expect("consistent after refunds");
}
