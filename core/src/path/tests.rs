//! The path's rules, one scripted case each; the randomized workloads are in
//! `core/tests/path_props.rs`.

use crate::platform::examples;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::cache::{CachePolicy, CacheVersion, DataClass, MemoryStore};
use crate::platform::LimitConfig;
use crate::scheduler::{QueueFull, SchedulerConfig};

type P = Arc<[u8]>;
type TestPath = PlatformPath<StoreBuffer<MemoryStore>, &'static str>;

fn store() -> StoreBuffer<MemoryStore> {
    StoreBuffer::new(MemoryStore::new(
        examples::OBV,
        CachePolicy::default().for_platform(examples::OBV),
        CacheVersion::current(),
    ))
}

/// OpenBesluitvorming's path: 60 units per minute, or passing straight through.
fn path(limited: bool) -> TestPath {
    let scheduler =
        limited.then(|| SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60))));
    let mut config = PathConfig::single("obv", scheduler);
    config.record_events = true;
    PlatformPath::new(config, store()).expect("valid")
}

fn key(q: &str) -> CacheKey {
    CacheKey::new(examples::OBV, DataClass::Search, "search").param("q", q)
}

fn reference(q: &str) -> CacheKey {
    CacheKey::new(examples::OBV, DataClass::Reference, "sources").param("q", q)
}

fn req(waiter: u64, session: &str, k: &CacheKey) -> Request {
    Request {
        waiter: WaiterId(waiter),
        key: k.clone(),
        session: if session == "system" {
            SessionKey::System
        } else {
            SessionKey::client(session)
        },
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

/// Every effect now, checking the invariants first.
fn effects(p: &mut TestPath) -> Vec<Effect<P, &'static str>> {
    p.check_invariants().expect("invariants");
    std::iter::from_fn(|| p.poll_effect()).collect()
}

fn sends(effects: &[Effect<P, &'static str>]) -> Vec<Attempt> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send { attempt, .. } => Some(*attempt),
            _ => None,
        })
        .collect()
}

fn delivered(effects: &[Effect<P, &'static str>]) -> Vec<(u64, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Deliver { waiter, delivery } => Some((
                waiter.0,
                match delivery {
                    Delivery::Answer { payload, served } => {
                        format!("{} {}", served.as_str(), String::from_utf8_lossy(payload))
                    }
                    Delivery::Failed(Failure::Platform(e)) => format!("error {e}"),
                    Delivery::Failed(Failure::QueueFull { .. }) => "queue full".to_owned(),
                },
            )),
            _ => None,
        })
        .collect()
}

/// `session` takes the whole bucket, so the next call queues.
fn drain_bucket(p: &mut TestPath, session: &str) {
    for i in 0..60 {
        let k = key(&format!("drain-{session}-{i}"));
        p.request(at(0), wall(0), req(10_000 + i, session, &k));
        for a in sends(&effects(p)) {
            p.on_outcome(at(0), wall(0), a, ok("x"));
        }
    }
    effects(p);
}

#[test]
fn a_repeat_is_answered_from_the_buffer_and_identical_requests_share_one_call() {
    let mut p = path(false);
    let k = key("stikstof");
    assert!(matches!(
        p.request(at(0), wall(0), req(1, "a", &k)),
        Arrival::Waiting { led: true, .. }
    ));
    assert!(matches!(
        p.request(at(1), wall(1), req(2, "b", &k)),
        Arrival::Waiting { led: false, .. }
    ));
    let out = effects(&mut p);
    let attempts = sends(&out);
    assert_eq!(attempts.len(), 1, "one upstream call for two requests");
    p.on_outcome(at(50), wall(50), attempts[0], ok("42"));
    let out = effects(&mut p);
    assert_eq!(
        delivered(&out),
        [(1, "fetched 42".to_owned()), (2, "coalesced 42".to_owned())]
    );
    assert!(matches!(out.last(), Some(Effect::Ended { .. })));
    match p.request(at(60), wall(60), req(3, "c", &k)) {
        Arrival::Cached(payload) => assert_eq!(&*payload, b"42"),
        other => panic!("expected a buffer hit, got {other:?}"),
    }
    assert_eq!((p.stats().hits, p.stats().led, p.stats().coalesced), (1, 1, 1));
}

#[test]
fn a_failure_reaches_its_own_waiters_only_and_is_never_kept() {
    let mut p = path(false);
    let k = key("storing");
    p.request(at(0), wall(0), req(1, "a", &k));
    p.request(at(0), wall(0), req(2, "b", &k));
    let a = sends(&effects(&mut p))[0];
    p.on_outcome(at(10), wall(10), a, Outcome::Failed { error: "boom" });
    assert_eq!(
        delivered(&effects(&mut p)),
        [(1, "error boom".to_owned()), (2, "error boom".to_owned())]
    );
    // Not kept: the next request asks the platform again.
    assert!(matches!(
        p.request(at(20), wall(20), req(3, "a", &k)),
        Arrival::Waiting { led: true, .. }
    ));
    assert_eq!(sends(&effects(&mut p)).len(), 1);
    assert!(p.buffer().errors().is_empty());
}

#[test]
fn a_queued_call_nobody_waits_for_is_withdrawn_and_costs_nothing() {
    let mut p = path(true);
    drain_bucket(&mut p, "a");
    let k = key("late");
    p.request(at(0), wall(0), req(1, "a", &k));
    p.request(at(0), wall(0), req(2, "b", &k));
    assert!(sends(&effects(&mut p)).is_empty(), "the bucket is empty");
    p.leave(at(100), WaiterId(1));
    p.leave(at(200), WaiterId(2));
    let out = effects(&mut p);
    assert!(matches!(out.as_slice(), [Effect::Ended { .. }]), "{out:?}");
    let s = p.scheduler(Lane::MAIN).expect("limited");
    assert_eq!((s.queued(), s.stats().admitted_calls), (0, 60));
    p.handle_timeout(at(120_000));
    assert!(effects(&mut p).is_empty(), "nothing goes out for nobody");
}

#[test]
fn a_fresh_session_joining_a_heavy_sessions_call_moves_it_forward_and_pays() {
    let mut p = path(true);
    drain_bucket(&mut p, "heavy");
    // The heavy session queues ten calls; the fresh one asks the same as its last.
    for i in 0..10 {
        p.request(at(0), wall(0), req(i, "heavy", &key(&format!("h{i}"))));
    }
    p.request(at(0), wall(0), req(100, "fresh", &key("h9")));
    effects(&mut p);
    // One unit per second: the joined call goes first, charged to the fresh session.
    p.handle_timeout(at(1_000));
    let out = effects(&mut p);
    let Some(Effect::Send {
        key: sent,
        admission: Some(a),
        ..
    }) = out.first()
    else {
        panic!("one call at t=1s: {out:?}");
    };
    assert_eq!((sent, &a.session), (&key("h9"), &SessionKey::client("fresh")));
    assert_eq!(
        p.scheduler(Lane::MAIN).map(|s| s.queued()),
        Some(9),
        "the heavy session's entry was withdrawn"
    );
}

#[test]
fn a_leader_that_gives_up_leaves_the_call_to_the_session_that_joined() {
    let mut p = path(true);
    drain_bucket(&mut p, "heavy");
    let k = key("shared");
    for i in 0..5 {
        p.request(at(0), wall(0), req(i, "heavy", &key(&format!("h{i}"))));
    }
    p.request(at(0), wall(0), req(10, "heavy", &k));
    p.request(at(0), wall(0), req(11, "fresh", &k));
    effects(&mut p);
    assert_eq!(p.scheduler(Lane::MAIN).map(|s| s.queued()), Some(7));
    p.leave(at(10), WaiterId(10));
    let out = effects(&mut p);
    assert!(out.is_empty(), "the call still waits for the fresh session: {out:?}");
    assert_eq!(
        p.scheduler(Lane::MAIN).map(|s| s.queued()),
        Some(6),
        "the leader's entry was withdrawn; the fresh session's stands"
    );
    p.handle_timeout(at(1_000));
    let out = effects(&mut p);
    let Some(Effect::Send { admission: Some(a), .. }) = out.first() else {
        panic!("the joined call goes first: {out:?}");
    };
    assert_eq!(a.session, SessionKey::client("fresh"));
}

#[test]
fn the_last_place_of_a_call_is_kept_while_anyone_waits() {
    let mut c = SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60)));
    c.max_queued = 2;
    let mut config = PathConfig::single("obv", Some(c));
    config.record_events = true;
    let mut p: TestPath = PlatformPath::new(config, store()).expect("valid");
    drain_bucket(&mut p, "a");
    let k = key("full");
    p.request(at(0), wall(0), req(1, "a", &k));
    p.request(at(0), wall(0), req(2, "x", &key("other")));
    // The queue is full: b joins without a place of its own.
    p.request(at(0), wall(0), req(3, "b", &k));
    effects(&mut p);
    p.leave(at(5), WaiterId(1));
    effects(&mut p);
    assert_eq!(
        p.scheduler(Lane::MAIN).map(|s| s.queued()),
        Some(2),
        "a's entry stays: b has none"
    );
    p.handle_timeout(at(1_000));
    p.handle_timeout(at(2_000));
    let attempts = sends(&effects(&mut p));
    assert_eq!(attempts.len(), 2, "both calls went");
}

#[test]
fn a_429_refunds_the_charge_and_the_waiters_wait_once_more_behind_the_retry_after() {
    let mut p = path(true);
    let k = key("refused");
    p.request(at(0), wall(0), req(1, "a", &k));
    p.request(at(0), wall(0), req(2, "system", &k));
    let a = sends(&effects(&mut p))[0];
    p.on_outcome(
        at(100),
        wall(100),
        a,
        Outcome::RateLimited {
            retry_after: Duration::from_secs(10),
            error: "429",
        },
    );
    let out = effects(&mut p);
    // The system session (BesluitBron's maintenance) reports the refusal; `a` waits again.
    assert_eq!(delivered(&out), [(2, "error 429".to_owned())]);
    assert!(sends(&out).is_empty(), "held behind the Retry-After");
    let s = p.scheduler(Lane::MAIN).expect("limited");
    assert_eq!(
        (s.stats().refunded_calls, s.session_usage(&SessionKey::client("a"))),
        (1, Some(Units::ZERO))
    );
    assert_eq!(p.poll_timeout(at(100)), Some(at(10_100)));
    p.handle_timeout(at(10_100));
    let again = sends(&effects(&mut p));
    assert_eq!(
        again,
        [Attempt {
            flight: a.flight,
            number: 2
        }]
    );
    // A second refusal reaches the waiter: it waits once only.
    p.on_outcome(
        at(10_200),
        wall(10_200),
        again[0],
        Outcome::RateLimited {
            retry_after: Duration::from_secs(1),
            error: "429 again",
        },
    );
    assert_eq!(delivered(&effects(&mut p)), [(1, "error 429 again".to_owned())]);
    assert_eq!(p.stats().refunds, 2);
}

#[test]
fn a_long_retry_after_or_an_unlimited_lane_reports_the_429() {
    for (limited, retry_after) in [(true, Duration::from_secs(61)), (false, Duration::from_secs(5))] {
        let mut p = path(limited);
        let k = key("x");
        p.request(at(0), wall(0), req(1, "a", &k));
        let a = sends(&effects(&mut p))[0];
        p.on_outcome(
            at(1),
            wall(1),
            a,
            Outcome::RateLimited {
                retry_after,
                error: "429",
            },
        );
        assert_eq!(
            delivered(&effects(&mut p)),
            [(1, "error 429".to_owned())],
            "limited: {limited}"
        );
    }
}

#[test]
fn a_retry_is_a_counted_admission_of_the_fair_queue() {
    let mut p = path(true);
    let k = key("flaky");
    p.request(at(0), wall(0), req(1, "a", &k));
    let first = sends(&effects(&mut p))[0];
    p.on_outcome(
        at(100),
        wall(100),
        first,
        Outcome::Retryable {
            error: "503",
            retry_after: None,
        },
    );
    assert!(sends(&effects(&mut p)).is_empty(), "it backs off first");
    let wake = p.poll_timeout(at(100)).expect("a retry timer");
    assert!((at(225)..=at(350)).contains(&wake), "250 ms with jitter: {wake}");
    p.handle_timeout(wake);
    let out = effects(&mut p);
    let [
        Effect::Send {
            attempt,
            admission: Some(_),
            ..
        },
    ] = out.as_slice()
    else {
        panic!("the retry goes out through the queue: {out:?}");
    };
    assert_eq!(attempt.number, 2);
    let s = p.scheduler(Lane::MAIN).expect("limited");
    assert_eq!(s.stats().admitted_calls, 2, "both attempts were admitted and charged");
    // Out of attempts: the error reaches the waiter.
    p.on_outcome(
        wake,
        wall(500),
        *attempt,
        Outcome::Retryable {
            error: "503",
            retry_after: None,
        },
    );
    let wake = p.poll_timeout(wake).expect("a retry timer");
    p.handle_timeout(wake);
    let third = sends(&effects(&mut p));
    assert_eq!(third.len(), 1);
    p.on_outcome(
        wake,
        wall(900),
        third[0],
        Outcome::Retryable {
            error: "503",
            retry_after: None,
        },
    );
    assert_eq!(delivered(&effects(&mut p)), [(1, "error 503".to_owned())]);
    assert_eq!(p.stats().retries, 2);
}

#[test]
fn a_5xx_retry_after_holds_the_whole_lane_back() {
    let mut p = path(true);
    p.request(at(0), wall(0), req(1, "a", &key("one")));
    let first = sends(&effects(&mut p))[0];
    p.on_outcome(
        at(0),
        wall(0),
        first,
        Outcome::Retryable {
            error: "503",
            retry_after: Some(Duration::from_secs(20)),
        },
    );
    p.request(at(1), wall(1), req(2, "b", &key("two")));
    assert!(sends(&effects(&mut p)).is_empty(), "overload: nobody goes");
    p.handle_timeout(at(20_000));
    assert_eq!(sends(&effects(&mut p)).len(), 2);
}

#[test]
fn stale_if_error_follows_the_policy_of_the_data_class() {
    let mut p = path(false);
    let (list, search) = (reference("sources"), key("search"));
    for (i, k) in [&list, &search].into_iter().enumerate() {
        p.request(at(0), wall(0), req(i as u64, "a", k));
    }
    for a in sends(&effects(&mut p)) {
        p.on_outcome(at(0), wall(0), a, ok("old"));
    }
    effects(&mut p);
    // Both expired (a reference list after 30 days, a search after 10 minutes); the
    // platform fails. The reference list is within its stale-if-error window.
    let later = 31 * 24 * 3600 * 1000;
    for (i, k) in [&list, &search].into_iter().enumerate() {
        assert!(matches!(
            p.request(at(1), wall(later), req(10 + i as u64, "a", k)),
            Arrival::Waiting { .. }
        ));
    }
    for a in sends(&effects(&mut p)) {
        p.on_outcome(at(2), wall(later), a, Outcome::Failed { error: "down" });
    }
    let mut got = delivered(&effects(&mut p));
    got.sort();
    assert_eq!(got, [(10, "stale old".to_owned()), (11, "error down".to_owned())]);
    assert_eq!(p.stats().stale_served, 1);
}

#[test]
fn an_incomplete_answer_is_kept_briefly_and_one_marked_never_not_at_all() {
    let mut p = path(false);
    let (brief, never) = (key("brief"), key("never"));
    for (i, (k, keep)) in [(&brief, Keep::Briefly { ttl_ms: 1_000 }), (&never, Keep::Never)]
        .into_iter()
        .enumerate()
    {
        p.request(at(0), wall(0), req(i as u64, "a", k));
        let a = sends(&effects(&mut p))[0];
        let outcome = Outcome::Success {
            payload: Arc::from(&b"partial"[..]),
            feedback: Feedback {
                keep,
                ..Feedback::default()
            },
        };
        p.on_outcome(at(0), wall(0), a, outcome);
        effects(&mut p);
    }
    assert!(matches!(
        p.request(at(1), wall(500), req(10, "a", &brief)),
        Arrival::Cached(_)
    ));
    assert!(matches!(
        p.request(at(2), wall(1_000), req(11, "a", &brief)),
        Arrival::Waiting { .. }
    ));
    assert!(matches!(
        p.request(at(3), wall(1), req(12, "a", &never)),
        Arrival::Waiting { .. }
    ));
}

#[test]
fn remaining_budget_feedback_lowers_the_lanes_bucket() {
    let mut p = path(true);
    p.request(at(0), wall(0), req(1, "a", &key("one")));
    let a = sends(&effects(&mut p))[0];
    let outcome = Outcome::Success {
        payload: Arc::from(&b"x"[..]),
        feedback: Feedback {
            remaining: Some(Units::ZERO),
            reset: Some(Duration::from_secs(60)),
            keep: Keep::Normal,
            revalidated: false,
        },
    };
    p.on_outcome(at(10), wall(10), a, outcome);
    effects(&mut p);
    p.request(at(10), wall(10), req(2, "a", &key("two")));
    assert!(sends(&effects(&mut p)).is_empty(), "the platform said nothing is left");
    assert_eq!(
        p.poll_timeout(at(10)),
        Some(at(1_010)),
        "one unit a second from nothing"
    );
}

#[test]
fn a_full_queue_refuses_the_newcomer_and_leaves_nothing_behind() {
    let mut c = SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60)));
    c.max_queued_per_session = 1;
    let mut p: TestPath = PlatformPath::new(PathConfig::single("obv", Some(c)), store()).expect("valid");
    drain_bucket(&mut p, "a");
    p.request(at(0), wall(0), req(1, "a", &key("first")));
    let refused = p.request(at(0), wall(0), req(2, "a", &key("second")));
    assert!(
        matches!(
            refused,
            Arrival::Refused {
                reason: QueueFull::Session,
                ..
            }
        ),
        "{refused:?}"
    );
    assert_eq!((p.in_flight(), p.waiting()), (1, 1));
    effects(&mut p);
}

#[test]
fn position_reports_the_queue_and_the_backoff() {
    let mut p = path(true);
    drain_bucket(&mut p, "a");
    p.request(at(0), wall(0), req(1, "a", &key("q")));
    let pos = p.position(at(0), WaiterId(1)).expect("waiting");
    assert_eq!(
        (pos.admit_at, pos.queued_calls, pos.waiting_sessions),
        (at(1_000), 1, 1)
    );
    assert_eq!(p.position(at(0), WaiterId(99)), None);
}

#[test]
fn the_events_tell_the_story_of_a_flight() {
    let mut p = path(false);
    let k = key("trace");
    p.request(at(0), wall(0), req(1, "a", &k));
    let a = sends(&effects(&mut p))[0];
    p.on_outcome(at(5), wall(5), a, ok("t"));
    effects(&mut p);
    let kinds: Vec<&str> = std::iter::from_fn(|| p.poll_event())
        .map(|e| match e {
            PathEvent::Lead { .. } => "lead",
            PathEvent::Send { .. } => "send",
            PathEvent::Outcome { kind, .. } => kind.as_str(),
            other => panic!("unexpected {other:?}"),
        })
        .collect();
    assert_eq!(kinds, ["lead", "send", "ok"]);
}

/// A lane without a kept limit whose places are bounded by `max`.
fn bounded(max: usize) -> TestPath {
    let mut config = PathConfig::single("obv", None);
    config.lanes[0].max_in_flight = Some(max);
    PlatformPath::new(config, store()).expect("valid")
}

fn sent_keys(effects: &[Effect<P, &'static str>]) -> Vec<(Attempt, String)> {
    effects
        .iter()
        .filter_map(|e| match e {
            Effect::Send { attempt, key, .. } => Some((*attempt, key.params()["q"].clone())),
            _ => None,
        })
        .collect()
}

fn never_kept(body: &str) -> Outcome<P, &'static str> {
    Outcome::Success {
        payload: Arc::from(body.as_bytes()),
        feedback: Feedback {
            keep: Keep::Never,
            ..Feedback::default()
        },
    }
}

#[test]
fn a_bounded_lane_lets_its_places_out_and_the_rest_wait_in_arrival_order() {
    let mut p = bounded(2);
    for (w, q) in [(1, "a"), (2, "b"), (3, "c"), (4, "d")] {
        p.request(at(0), wall(0), req(w, "s", &key(q)));
    }
    let out = sent_keys(&effects(&mut p));
    assert_eq!(out.iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>(), ["a", "b"]);
    assert_eq!(p.stats().gated, 2);
    // A joiner of a gated call waits with it; the one who asked for `d` leaves.
    p.request(at(1), wall(1), req(5, "t", &key("c")));
    p.leave(at(1), WaiterId(4));
    assert!(effects(&mut p).iter().all(|e| !matches!(e, Effect::Send { .. })));
    p.on_outcome(at(2), wall(2), out[0].0, never_kept("A"));
    let next = effects(&mut p);
    assert_eq!(
        sent_keys(&next).iter().map(|(_, k)| k.as_str()).collect::<Vec<_>>(),
        ["c"]
    );
    assert_eq!(delivered(&next), [(1, "fetched A".to_owned())]);
    p.on_outcome(at(3), wall(3), out[1].0, Outcome::Failed { error: "boom" });
    // `d` was withdrawn: nothing else goes.
    assert!(sent_keys(&effects(&mut p)).is_empty());
    assert_eq!(p.in_flight(), 1);
}

#[test]
fn an_expired_copy_goes_out_with_the_attempt_and_a_revalidation_renews_it() {
    let mut p = path(false);
    let k = key("etag");
    p.request(at(0), wall(0), req(1, "s", &k));
    let first = effects(&mut p);
    assert!(matches!(first.as_slice(), [Effect::Send { previous: None, .. }]));
    p.on_outcome(at(0), wall(0), sends(&first)[0], ok("v1"));
    effects(&mut p);
    // Search results live ten minutes; eleven minutes on, the copy is expired but held.
    let later = wall(11 * 60 * 1000);
    p.request(at(1), later, req(2, "s", &k));
    let again = effects(&mut p);
    let [
        Effect::Send {
            attempt,
            previous: Some(previous),
            ..
        },
    ] = again.as_slice()
    else {
        panic!("a revalidating attempt: {again:?}");
    };
    assert_eq!(&previous[..], b"v1");
    let renewed = Outcome::Success {
        payload: Arc::clone(previous),
        feedback: Feedback {
            revalidated: true,
            ..Feedback::default()
        },
    };
    p.on_outcome(at(2), later, *attempt, renewed);
    assert_eq!(delivered(&effects(&mut p)), [(2, "fetched v1".to_owned())]);
    assert_eq!(p.stats().revalidated, 1);
    assert!(matches!(p.request(at(3), later, req(3, "s", &k)), Arrival::Cached(_)));
}

/// One step of a workload on a bounded lane.
#[derive(Clone, Debug)]
enum GateOp {
    /// A request for key `0..6`.
    Ask(u8),
    /// The `i`-th call out (mod their number) answers: success or failure.
    Answer(u8, bool),
    /// The `i`-th waiting request (mod their number) leaves.
    Leave(u8),
}

impl quickcheck::Arbitrary for GateOp {
    fn arbitrary(g: &mut quickcheck::Gen) -> GateOp {
        match u8::arbitrary(g) % 3 {
            0 => GateOp::Ask(u8::arbitrary(g) % 6),
            1 => GateOp::Answer(u8::arbitrary(g), bool::arbitrary(g)),
            _ => GateOp::Leave(u8::arbitrary(g)),
        }
    }
}

/// The reference: a FIFO semaphore of `max` places over distinct keys. A key asked for
/// while it is out or waiting joins it; a waiting key nobody waits for any more leaves
/// the line; an answered key frees its place for the oldest waiting key.
#[derive(Default)]
struct Semaphore {
    max: usize,
    out: Vec<u8>,
    line: VecDeque<u8>,
    waiters: BTreeMap<u64, u8>,
    sent: Vec<u8>,
}

impl Semaphore {
    fn ask(&mut self, w: u64, k: u8) {
        self.waiters.insert(w, k);
        if self.out.contains(&k) || self.line.contains(&k) {
            return;
        }
        if self.out.len() < self.max {
            self.out.push(k);
            self.sent.push(k);
        } else {
            self.line.push_back(k);
        }
    }

    fn answered(&mut self, k: u8) {
        self.out.retain(|&o| o != k);
        self.waiters.retain(|_, wk| *wk != k);
        if let Some(next) = self.line.pop_front() {
            self.out.push(next);
            self.sent.push(next);
        }
    }

    fn leave(&mut self, w: u64) {
        let Some(k) = self.waiters.remove(&w) else { return };
        if !self.waiters.values().any(|&o| o == k) {
            self.line.retain(|&l| l != k);
        }
    }
}

fn gate_matches_the_semaphore(max: u8, ops: Vec<GateOp>) -> Result<(), String> {
    let max = usize::from(max % 3) + 1;
    let mut p = bounded(max);
    let mut model = Semaphore {
        max,
        ..Semaphore::default()
    };
    let mut out: Vec<(Attempt, u8)> = Vec::new();
    let mut sent: Vec<u8> = Vec::new();
    let mut next_waiter = 1u64;
    for (step, op) in ops.into_iter().enumerate() {
        let now = at(step as u64);
        match op {
            GateOp::Ask(k) => {
                let w = next_waiter;
                next_waiter += 1;
                p.request(now, wall(0), req(w, &format!("s{}", w % 3), &key(&k.to_string())));
                model.ask(w, k);
            }
            GateOp::Answer(i, success) => {
                if out.is_empty() {
                    continue;
                }
                let (attempt, k) = out.remove(usize::from(i) % out.len());
                let outcome = if success {
                    never_kept("x")
                } else {
                    Outcome::Failed { error: "no" }
                };
                p.on_outcome(now, wall(0), attempt, outcome);
                model.answered(k);
            }
            GateOp::Leave(i) => {
                if model.waiters.is_empty() {
                    continue;
                }
                let w = *model
                    .waiters
                    .keys()
                    .nth(usize::from(i) % model.waiters.len())
                    .expect("a waiter");
                p.leave(now, WaiterId(w));
                model.leave(w);
            }
        }
        p.check_invariants().map_err(|e| format!("step {step}: {e}"))?;
        while let Some(e) = p.poll_effect() {
            if let Effect::Send { attempt, key, .. } = e {
                let k: u8 = key.params()["q"].parse().map_err(|_| "a key of the pool")?;
                out.push((attempt, k));
                sent.push(k);
            }
        }
        if out.len() > max {
            return Err(format!("step {step}: {} calls out, more than {max}", out.len()));
        }
        if sent != model.sent {
            return Err(format!(
                "step {step}: sent {sent:?}, the semaphore sends {:?}",
                model.sent
            ));
        }
    }
    Ok(())
}

#[test]
fn qc_a_bounded_lane_behaves_as_a_fifo_semaphore() {
    fn prop(max: u8, ops: Vec<GateOp>) -> quickcheck::TestResult {
        match gate_matches_the_semaphore(max, ops) {
            Ok(()) => quickcheck::TestResult::passed(),
            Err(e) => quickcheck::TestResult::error(e),
        }
    }
    quickcheck::QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(u8, Vec<GateOp>) -> quickcheck::TestResult);
}

/// A new owner ([`PlatformPath::take_over`]) starts with an empty bucket: its first call
/// waits a unit's refill instead of going at once, and the sessions' usage from the
/// previous owner's checkpoint weighs as before.
#[test]
fn a_new_owner_starts_with_an_empty_bucket_and_the_checkpointed_usage() {
    let mut old = path(true);
    for i in 0..10 {
        let _ = old.request(at(0), wall(0), req(i, "heavy", &key(&format!("h{i}"))));
    }
    let checkpoint = old.usage_checkpoint();
    assert_eq!(
        checkpoint.lanes[0],
        vec![(SessionKey::client("heavy"), Units::whole(10))]
    );

    let mut new = path(true);
    new.take_over(at(5_000), Some(&checkpoint));
    let s = new.scheduler(Lane::MAIN).unwrap();
    assert_eq!(s.tokens(at(5_000)), Units::ZERO);
    assert_eq!(s.session_usage(&SessionKey::client("heavy")), Some(Units::whole(10)));
    match new.request(at(5_000), wall(5_000), req(100, "fresh", &key("f"))) {
        Arrival::Waiting { led: true, .. } => {}
        other => panic!("expected a queued lead, got {other:?}"),
    }
    assert!(
        !std::iter::from_fn(|| new.poll_effect()).any(|e| matches!(e, Effect::Send { .. })),
        "nothing goes before a unit has refilled"
    );
    new.handle_timeout(at(6_000));
    assert!(std::iter::from_fn(|| new.poll_effect()).any(|e| matches!(e, Effect::Send { .. })));
    new.check_invariants().unwrap();

    // Without a checkpoint only the bucket is emptied.
    let mut bare = path(true);
    bare.take_over(at(0), None);
    assert_eq!(bare.scheduler(Lane::MAIN).unwrap().tracked_sessions(), 0);
    assert_eq!(bare.scheduler(Lane::MAIN).unwrap().tokens(at(0)), Units::ZERO);
}
