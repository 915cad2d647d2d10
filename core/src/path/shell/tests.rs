//! The shell's rules, one scripted case each; the randomized workloads are in
//! `core/tests/shell_props.rs`.

use crate::platform::examples;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::cache::{CachePolicy, CacheVersion, DataClass, MemoryStore};
use crate::cluster::{LeaseAnswer, LeaseConfig, LeaseEvent};
use crate::path::{Failure, Feedback, Lane, PathConfig, StoreBuffer};
use crate::platform::LimitConfig;
use crate::scheduler::{SchedulerConfig, SessionKey};
use crate::units::Units;

type P = Arc<[u8]>;
/// Waiters carry a name, flights the name of the request that led them.
type TestShell = Shell<StoreBuffer<MemoryStore>, &'static str, &'static str, &'static str>;

const LEASE: LeaseConfig = LeaseConfig {
    ttl: Duration::from_secs(6),
    margin: Duration::from_secs(1),
};

fn shell(limited: bool) -> TestShell {
    let scheduler =
        limited.then(|| SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60))));
    let config = PathConfig::single("obv", scheduler);
    let buffer = StoreBuffer::new(MemoryStore::new(
        examples::OBV,
        CachePolicy::default().for_platform(examples::OBV),
        CacheVersion::current(),
    ));
    Shell::new(PlatformPath::new(config, buffer).expect("valid"), |u| match u.why {
        UnsentWhy::LeaseEnded => "lease ended",
        UnsentWhy::NoFlightData => "no flight data",
    })
    .with_check_every(1)
}

fn req(waiter: u64, session: &str, q: &str) -> Request {
    Request {
        waiter: WaiterId(waiter),
        key: CacheKey::new(examples::OBV, DataClass::Search, "search").param("q", q),
        session: SessionKey::client(session),
        cost: Units::ONE,
        lane: Lane::MAIN,
    }
}

fn at(ms: u64) -> Instant {
    Instant::from_millis(ms)
}

fn wall(ms: u64) -> WallTime {
    WallTime(1_000_000 + ms)
}

fn ok(body: &str) -> Outcome<P, &'static str> {
    Outcome::Success {
        payload: Arc::from(body.as_bytes()),
        feedback: Feedback::default(),
    }
}

/// Every action now, as text; a broken invariant fails the test.
fn actions(s: &mut TestShell) -> Vec<Action<P, &'static str, &'static str, &'static str>> {
    let out: Vec<_> = std::iter::from_fn(|| s.poll_action()).collect();
    for a in &out {
        if let Action::InvariantBroken { what, .. } = a {
            panic!("broken invariant: {what}");
        }
    }
    out
}

fn text(a: &Action<P, &'static str, &'static str, &'static str>) -> String {
    match a {
        Action::Send(p) => format!("send {} for {}", p.key().params()["q"], p.flight()),
        Action::Deliver { value, delivery, .. } => match delivery {
            Delivery::Answer { payload, served } => {
                format!(
                    "deliver {value}: {} {}",
                    served.as_str(),
                    String::from_utf8_lossy(payload)
                )
            }
            Delivery::Failed(Failure::Platform(e)) => format!("deliver {value}: error {e}"),
            Delivery::Failed(Failure::QueueFull { .. }) => format!("deliver {value}: queue full"),
        },
        Action::Moved { value, .. } => format!("moved {value}"),
        Action::InvariantBroken { what, .. } => format!("broken {what}"),
    }
}

fn texts(s: &mut TestShell) -> Vec<String> {
    actions(s).iter().map(text).collect()
}

fn pending(s: &mut TestShell) -> Vec<PendingSend<P, &'static str>> {
    actions(s)
        .into_iter()
        .map(|a| match a {
            Action::Send(p) => p,
            other => panic!("expected a send, got {}", text(&other)),
        })
        .collect()
}

/// Drives `l` from `from` to `to` in steps of 100 ms, the engine granting every request
/// at once; the events it gave.
fn keep(l: &mut Lease, from: Instant, to: Instant) -> Vec<LeaseEvent> {
    let mut now = from;
    loop {
        l.handle_timeout(now);
        while let Some(r) = l.poll_request(now) {
            l.on_answer(now, r.id, LeaseAnswer::Granted);
        }
        if now >= to {
            break;
        }
        now = (now + Duration::from_millis(100)).min(to);
    }
    std::iter::from_fn(|| l.poll_event()).collect()
}

/// A lease acquired at 0 and kept until it admits (`TTL + m` later); the events it gave.
fn lease() -> (Lease, Vec<LeaseEvent>) {
    let mut l = Lease::new(LEASE, at(0)).expect("valid");
    let events = keep(&mut l, at(0), at(0) + LEASE.start_wait());
    (l, events)
}

#[test]
fn one_process_admits_sends_with_the_leaders_data_and_delivers_to_each_waiters_value() {
    let mut s = shell(false);
    let a = s.request(at(0), wall(0), None, req(1, "a", "stikstof"), "first", "led by first");
    assert!(matches!(a, Ok(Arrival::Waiting { led: true, .. })), "{a:?}");
    let b = s.request(at(1), wall(1), None, req(2, "b", "stikstof"), "second", "led by second");
    assert!(matches!(b, Ok(Arrival::Waiting { led: false, .. })), "{b:?}");
    let sends = pending(&mut s);
    assert_eq!(sends.len(), 1, "one call for two requests");
    assert_eq!(
        *sends[0].flight(),
        "led by first",
        "the data of the request that led the flight"
    );
    let flight = sends[0].attempt().flight;
    assert_eq!(s.flight(flight), Some(&"led by first"));
    assert_eq!(
        s.waiters_of(flight).map(|(w, v)| (w.0, *v)).collect::<Vec<_>>(),
        [(1, "first"), (2, "second")]
    );
    let out = s.confirm_send(at(1), wall(1), None, sends.into_iter().next().expect("one"));
    let out = out.expect("one process always sends");
    s.on_outcome(at(50), wall(50), out.attempt, ok("42"));
    assert_eq!(
        texts(&mut s),
        ["deliver first: fetched 42", "deliver second: coalesced 42"]
    );
    assert_eq!(s.flight(flight), None, "the flight's data goes with the flight");
    let hit = s.request(at(60), wall(60), None, req(3, "c", "stikstof"), "third", "-");
    assert!(matches!(hit, Ok(Arrival::Cached(_))), "{hit:?}");
    assert!(texts(&mut s).is_empty());
    s.check_invariants().expect("invariants");
}

#[test]
fn a_leaver_gets_its_value_back_and_hears_nothing_more() {
    let mut s = shell(false);
    s.request(at(0), wall(0), None, req(1, "a", "q"), "first", "f")
        .expect("admitted");
    s.request(at(0), wall(0), None, req(2, "b", "q"), "second", "f")
        .expect("admitted");
    let send = pending(&mut s).remove(0);
    assert_eq!(s.leave(at(5), WaiterId(1)), Some("first"));
    assert_eq!(s.leave(at(5), WaiterId(1)), None, "only once");
    let out = s.confirm_send(at(5), wall(5), None, send).expect("sent");
    s.on_outcome(at(9), wall(9), out.attempt, ok("x"));
    assert_eq!(texts(&mut s), ["deliver second: coalesced x"]);
}

#[test]
fn a_replica_admits_only_under_the_acquisition_it_took_over() {
    let mut s = shell(true);
    let (l, events) = lease();
    assert!(
        matches!(events.last(), Some(LeaseEvent::StartAdmitting { epoch: 1 })),
        "{events:?}"
    );
    let start = at(0) + LEASE.start_wait();
    // The lease admits, but this shell has not taken it over yet.
    let r = s.request(start, wall(0), Some(&l), req(1, "a", "q1"), "w1", "f1");
    assert_eq!(r, Err(NotOwner));
    // Taken over for another acquisition (a message that came late): still not.
    s.take_over(start, 7, None);
    let r = s.request(start, wall(0), Some(&l), req(1, "a", "q1"), "w1", "f1");
    assert_eq!(r, Err(NotOwner));
    s.take_over(start, 1, None);
    let r = s.request(start, wall(0), Some(&l), req(1, "a", "q1"), "w1", "f1");
    assert!(matches!(r, Ok(Arrival::Waiting { led: true, .. })), "{r:?}");
    assert_eq!(s.stats().not_owner, 2);
    // One process: no lease, always admits.
    let mut one = shell(true);
    assert!(one.request(at(0), wall(0), None, req(1, "a", "q"), "w", "f").is_ok());
}

#[test]
fn a_new_owner_starts_with_an_empty_bucket() {
    let mut s = shell(true);
    let (l, _) = lease();
    let start = at(0) + LEASE.start_wait();
    s.take_over(start, 1, None);
    s.request(start, wall(0), Some(&l), req(1, "a", "q1"), "w1", "f1")
        .expect("admitted");
    assert!(texts(&mut s).is_empty(), "nothing goes before a unit refills");
    let refill = start + Duration::from_secs(1);
    assert_eq!(s.poll_timeout(start), Some(refill));
    s.handle_timeout(refill);
    assert_eq!(texts(&mut s), ["send q1 for f1"]);
}

#[test]
fn an_admission_older_than_the_margin_is_dropped_and_asked_again() {
    let mut s = shell(true);
    let (mut l, _) = lease();
    let start = at(0) + LEASE.start_wait();
    s.take_over(start, 1, None);
    s.request(start, wall(0), Some(&l), req(1, "a", "q1"), "w1", "f1")
        .expect("admitted");
    let refill = start + Duration::from_secs(1);
    s.handle_timeout(refill);
    let send = pending(&mut s).remove(0);
    // Sent more than m after its admission: never sent.
    let late = refill + LEASE.margin + Duration::from_millis(1);
    assert!(s.confirm_send(late, wall(0), Some(&l), send).is_none());
    assert_eq!(s.stats().dropped, 1);
    // The path heard a failure worth another attempt: the call queues again (its charge
    // spent: the platform may have counted nothing, but the bucket cannot know).
    assert!(texts(&mut s).is_empty(), "nobody hears of it");
    assert_eq!(s.path().stats().attempts, 1);
    let mut now = late;
    let send = loop {
        keep(&mut l, now, now);
        if let Some(Action::Send(p)) = s.poll_action() {
            break p;
        }
        now = s.poll_timeout(now).expect("the retry waits on time");
        s.handle_timeout(now);
    };
    assert_eq!(send.attempt().number, 2);
    let out = s.confirm_send(now, wall(0), Some(&l), send).expect("in time");
    s.on_outcome(now, wall(0), out.attempt, ok("x"));
    assert_eq!(texts(&mut s), ["deliver w1: fetched x"]);
}

#[test]
fn at_the_end_of_ownership_waiters_move_in_order_and_calls_out_finish_and_are_kept() {
    let mut s = shell(true);
    let (mut l, _) = lease();
    let start = at(0) + LEASE.start_wait();
    s.take_over(start, 1, None);
    let refill = start + Duration::from_secs(1);
    s.request(start, wall(0), Some(&l), req(3, "a", "out"), "w3", "f3")
        .expect("admitted");
    s.handle_timeout(refill);
    let send = pending(&mut s).remove(0);
    let out = s.confirm_send(refill, wall(0), Some(&l), send).expect("sent");
    s.request(refill, wall(0), Some(&l), req(1, "b", "queued"), "w1", "f1")
        .expect("admitted");
    s.request(refill, wall(0), Some(&l), req(2, "c", "out"), "w2", "f2")
        .expect("admitted");
    assert!(texts(&mut s).is_empty());
    // The lease is lost (a renewal refused): the shell hears it and ends its ownership.
    let lost = keep(&mut l, refill, refill);
    assert!(lost.is_empty(), "{lost:?}");
    let renew_at = l.poll_timeout().expect("a renewal is due");
    let renewal = l.poll_request(renew_at).expect("a renewal");
    let end = renew_at + Duration::from_millis(1);
    l.on_answer(end, renewal.id, LeaseAnswer::Refused);
    s.end_ownership(end);
    assert_eq!(texts(&mut s), ["moved w1", "moved w2", "moved w3"]);
    assert_eq!(s.stats().moved, 3);
    assert_eq!(s.path().waiting(), 0);
    assert_eq!(
        s.path().scheduler(Lane::MAIN).expect("limited").queued(),
        0,
        "the queued call withdrawn"
    );
    // Nothing enters now.
    let r = s.request(end, wall(2), Some(&l), req(4, "d", "q"), "w4", "f4");
    assert_eq!(r, Err(NotOwner));
    // The call out finishes; its answer is kept for the next ownership.
    let answered = end + Duration::from_millis(100);
    s.on_outcome(answered, wall(100), out.attempt, ok("kept"));
    assert!(texts(&mut s).is_empty());
    assert_eq!(s.path().in_flight(), 0);
    let r = s.request(answered, wall(200), None, req(5, "e", "out"), "w5", "f5");
    assert!(matches!(r, Ok(Arrival::Cached(_))), "{r:?}");
}

#[test]
fn invariants_are_checked_every_n_steps_and_when_idle() {
    let mut s = shell(false).with_check_every(3);
    let mut sends = Vec::new();
    for i in 0..7 {
        s.request(at(i), wall(i), None, req(i, "a", &format!("q{i}")), "w", "f")
            .expect("admitted");
        // Checked once the step's effects are taken.
        sends.extend(pending(&mut s));
    }
    assert_eq!(s.stats().steps, 7);
    assert_eq!(s.stats().checks, 2);
    s.idle();
    assert_eq!(s.stats().checks, 2, "not idle while calls are out");
    for p in sends {
        let out = s.confirm_send(at(10), wall(10), None, p).expect("sent");
        s.on_outcome(at(10), wall(10), out.attempt, ok("x"));
        actions(&mut s);
    }
    assert_eq!(s.stats().steps, 14);
    assert_eq!(s.stats().checks, 4);
    s.idle();
    assert_eq!(s.stats().checks, 5, "idle with steps since the last check");
    s.idle();
    assert_eq!(s.stats().checks, 5, "nothing since");
    assert_eq!(s.stats().broken, 0);
}

#[test]
fn a_release_build_checks_rarely_and_a_debug_build_always() {
    const { assert!(RELEASE_CHECK_EVERY > 1) };
    let expected = if cfg!(debug_assertions) { 1 } else { RELEASE_CHECK_EVERY };
    assert_eq!(DEFAULT_CHECK_EVERY, expected);
}

#[test]
fn the_end_of_ownership_admits_nothing_for_the_waiters_it_moves() {
    let mut s = shell(true);
    let (mut l, _) = lease();
    let start = at(0) + LEASE.start_wait();
    s.take_over(start, 1, None);
    for (i, session) in ["a", "b", "c"].into_iter().enumerate() {
        s.request(start, wall(0), Some(&l), req(i as u64, session, session), "w", "f")
            .expect("admitted");
    }
    assert!(texts(&mut s).is_empty(), "an empty bucket: all three queue");
    // Five units refill before the task hears that the lease is gone (it was paused).
    let end = start + Duration::from_secs(5);
    keep(&mut l, end, end);
    s.end_ownership(end);
    assert_eq!(
        texts(&mut s),
        ["moved w", "moved w", "moved w"],
        "nothing admitted, nothing sent"
    );
    assert_eq!(s.path().stats().attempts, 0);
}
