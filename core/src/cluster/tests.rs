use std::time::Duration;

use super::*;

fn ms(n: u64) -> Instant {
    Instant::from_millis(n)
}

fn lease() -> Lease {
    Lease::new(LeaseConfig::DEFAULT, ms(0)).unwrap()
}

/// Acquires at `at` with an answer `rtt` later; returns the acquisition's epoch.
fn acquire(l: &mut Lease, at: u64, rtt: u64) -> u64 {
    let r = l.poll_request(ms(at)).expect("an acquisition is due");
    assert_eq!(r.call, LeaseCall::Acquire);
    l.on_answer(ms(at + rtt), r.id, LeaseAnswer::Granted);
    match l.poll_event() {
        Some(LeaseEvent::Acquired { epoch, .. }) => epoch,
        other => panic!("expected Acquired, got {other:?}"),
    }
}

/// Drives the lease up to `until`, the engine granting every request at once; returns
/// the events.
fn drive(l: &mut Lease, until: Instant) -> Vec<LeaseEvent> {
    let mut events = Vec::new();
    while let Some(t) = l.poll_timeout().filter(|&t| t <= until) {
        l.handle_timeout(t);
        while let Some(r) = l.poll_request(t) {
            l.on_answer(t, r.id, LeaseAnswer::Granted);
        }
        events.extend(std::iter::from_fn(|| l.poll_event()));
    }
    events
}

fn renew(l: &mut Lease, at: u64, rtt: u64, answer: LeaseAnswer) -> LeaseRequest {
    let r = l.poll_request(ms(at)).expect("a renewal is due");
    assert_eq!(r.call, LeaseCall::Renew);
    l.on_answer(ms(at + rtt), r.id, answer);
    r
}

#[test]
fn the_default_needs_drift_below_one_eleventh() {
    assert_eq!(LeaseConfig::DEFAULT.max_drift_ppm(), 90_909);
    assert_eq!(LeaseConfig::DEFAULT.renew_every(), Duration::from_nanos(1_666_666_666));
    assert_eq!(
        LeaseConfig {
            ttl: Duration::from_millis(1500),
            margin: Duration::from_secs(1)
        }
        .validate(),
        Err(LeaseConfigError::TtlTooShort)
    );
}

#[test]
fn a_new_owner_waits_ttl_plus_margin_after_the_grant_then_starts_empty() {
    let mut l = lease();
    assert_eq!(l.state(ms(0)), LeaseState::Follower);
    let r = l.poll_request(ms(0)).unwrap();
    assert_eq!(l.state(ms(0)), LeaseState::Acquiring);
    assert!(l.poll_request(ms(1)).is_none(), "one request out at a time");
    l.on_answer(ms(40), r.id, LeaseAnswer::Granted);
    assert_eq!(
        l.poll_event(),
        Some(LeaseEvent::Acquired {
            epoch: 1,
            admit_from: ms(6040)
        })
    );
    assert_eq!(l.state(ms(100)), LeaseState::Waiting { until: ms(6040) });
    // Validity counts from the send: 5 s − 1 s after t = 0.
    assert_eq!(l.valid_until(), Some(ms(4000)));
    assert!(!l.may_admit(ms(100)));
    // Renewals every TTL/3 keep it valid through the wait.
    assert!(drive(&mut l, ms(6039)).is_empty());
    assert!(!l.may_admit(ms(6039)));
    assert_eq!(drive(&mut l, ms(6040)), vec![LeaseEvent::StartAdmitting { epoch: 1 }]);
    assert!(l.may_admit(ms(6040)));
    assert!(matches!(l.state(ms(6040)), LeaseState::Owner { .. }));
}

#[test]
fn an_owner_admits_only_while_valid_by_its_own_clock() {
    let mut l = lease();
    acquire(&mut l, 0, 0);
    // Renew without answers (engine unreachable): validity from the last good send.
    let r = renew(&mut l, 1667, 0, LeaseAnswer::Granted);
    assert_eq!(r.token, 1);
    assert_eq!(l.valid_until(), Some(ms(5667)));
    renew(&mut l, 3334, 500, LeaseAnswer::Unreachable);
    renew(&mut l, 4668, 500, LeaseAnswer::Unreachable);
    // The lease lapses at 5667, before the start wait (6000) is even over.
    l.handle_timeout(ms(5667));
    assert_eq!(
        l.poll_event(),
        Some(LeaseEvent::Lost {
            epoch: 1,
            was_admitting: false
        })
    );
    assert!(!l.may_admit(ms(6000)));
    assert_eq!(l.state(ms(5667)), LeaseState::Follower);
    // It must acquire again, with a new token.
    let r = l.poll_request(ms(5667)).unwrap();
    assert_eq!(r.call, LeaseCall::Acquire);
    assert_ne!(r.token, 1);
}

#[test]
fn regression_a_renewal_answered_after_the_lapse_does_not_revive_the_lease() {
    let mut l = lease();
    acquire(&mut l, 0, 0);
    // Sent at 1667 while valid, answered at 4100, after the lease ran out at 4000 (the
    // replica was paused): the answer is ignored, the lease must be acquired again.
    let r = l.poll_request(ms(1667)).unwrap();
    l.on_answer(ms(4100), r.id, LeaseAnswer::Granted);
    assert_eq!(
        l.poll_event(),
        Some(LeaseEvent::Lost {
            epoch: 1,
            was_admitting: false
        })
    );
    assert_eq!(l.valid_until(), None);
    assert!(!l.may_admit(ms(4100)));
}

#[test]
fn a_renewal_that_finds_another_token_loses_the_lease_at_once() {
    let mut l = lease();
    acquire(&mut l, 0, 0);
    assert_eq!(drive(&mut l, ms(6000)), vec![LeaseEvent::StartAdmitting { epoch: 1 }]);
    let at = l.poll_timeout().unwrap().as_millis() + 1;
    assert!(l.may_admit(ms(at)));
    renew(&mut l, at, 3, LeaseAnswer::Refused);
    assert_eq!(
        l.poll_event(),
        Some(LeaseEvent::Lost {
            epoch: 1,
            was_admitting: true
        })
    );
    assert!(!l.may_admit(ms(at + 3)));
    assert!(!l.may_send(ms(at + 3), ms(at)));
}

#[test]
fn admissions_older_than_the_margin_are_dropped() {
    let mut l = lease();
    acquire(&mut l, 0, 0);
    for t in [1667, 3334, 5001] {
        renew(&mut l, t, 0, LeaseAnswer::Granted);
    }
    l.handle_timeout(ms(6000));
    assert!(l.may_admit(ms(6000)));
    assert!(l.may_send(ms(7000), ms(6000)), "exactly m old may still go");
    assert!(!l.may_send(ms(7001), ms(6000)));
    assert!(!l.may_send(ms(6500), ms(5999)), "not admitted before the start");
    assert!(!l.may_send(ms(6500), ms(6600)), "not from the future");
}

#[test]
fn a_graceful_shutdown_stops_admitting_lets_the_last_admissions_go_then_releases_after_m() {
    let mut l = lease();
    acquire(&mut l, 0, 0);
    for t in [1667, 3334, 5001] {
        renew(&mut l, t, 0, LeaseAnswer::Granted);
    }
    l.handle_timeout(ms(6000));
    while l.poll_event().is_some() {}
    l.shutdown(ms(6200));
    assert_eq!(l.poll_event(), Some(LeaseEvent::HandingOver { epoch: 1 }));
    assert_eq!(l.state(ms(6200)), LeaseState::HandingOver { release_at: ms(7200) });
    assert!(!l.may_admit(ms(6200)));
    assert!(l.may_send(ms(6300), ms(6100)), "made before the shutdown, under m old");
    assert!(!l.may_send(ms(6300), ms(6250)), "made after the shutdown");
    assert!(l.poll_request(ms(7199)).is_none());
    let r = l.poll_request(ms(7200)).unwrap();
    assert_eq!((r.call, r.token), (LeaseCall::Release, 1));
    l.on_answer(ms(7210), r.id, LeaseAnswer::Granted);
    assert_eq!(l.poll_event(), Some(LeaseEvent::Stopped));
    assert_eq!(l.state(ms(7210)), LeaseState::Stopped);
    assert!(l.poll_request(ms(9000)).is_none());
    assert_eq!(l.poll_timeout(), None);
}

#[test]
fn a_shutdown_while_acquiring_releases_what_it_gets_at_once() {
    let mut l = lease();
    let r = l.poll_request(ms(0)).unwrap();
    l.shutdown(ms(10));
    l.on_answer(ms(20), r.id, LeaseAnswer::Granted);
    assert!(matches!(l.poll_event(), Some(LeaseEvent::Acquired { .. })));
    assert!(!l.may_admit(ms(7000)));
    let r = l.poll_request(ms(20)).unwrap();
    assert_eq!(r.call, LeaseCall::Release);
    l.on_answer(ms(30), r.id, LeaseAnswer::Unreachable);
    assert_eq!(l.state(ms(30)), LeaseState::Stopped);
}

#[test]
fn a_refused_acquisition_retries_after_a_sixth_of_the_ttl() {
    let mut l = lease();
    let r = l.poll_request(ms(0)).unwrap();
    l.on_answer(ms(5), r.id, LeaseAnswer::Refused);
    assert_eq!(l.state(ms(5)), LeaseState::Follower);
    assert_eq!(l.poll_timeout(), Some(ms(5) + Duration::from_secs(5) / 6));
    assert!(l.poll_request(ms(800)).is_none());
    assert!(l.poll_request(ms(839)).is_some());
    // An answer to a request it no longer waits for changes nothing.
    l.on_answer(ms(900), r.id, LeaseAnswer::Granted);
    assert_eq!(l.state(ms(900)), LeaseState::Acquiring);
}

#[test]
fn a_follower_tries_again_when_the_holders_lease_runs_out() {
    let mut l = lease();
    let r = l.poll_request(ms(0)).unwrap();
    l.on_answer(ms(2), r.id, LeaseAnswer::HeldFor(Duration::from_millis(300)));
    assert_eq!(l.poll_timeout(), Some(ms(302)));
    // A far expiry still retries after TTL/6 (a lost key is noticed that soon).
    let r = l.poll_request(ms(302)).unwrap();
    l.on_answer(ms(304), r.id, LeaseAnswer::HeldFor(Duration::from_secs(5)));
    assert_eq!(l.poll_timeout(), Some(ms(304) + Duration::from_secs(5) / 6));
}
