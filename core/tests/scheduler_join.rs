//! Coalesced calls in the scheduler (R-D3 meets R-L3): a session joining a waiting call
//! moves it to the best position among the sessions that joined, exactly one session
//! pays, and a call nobody waits for any more costs nothing.

use std::collections::BTreeSet;
use std::time::Duration;

use besluitbron_core::{
    Admission, CallTicket, FairScheduler, Instant, JoinError, LimitConfig, SchedulerConfig, SessionKey, Submission,
    Units,
};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

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

/// Polls until nothing waits; returns every admission.
fn drain(s: &mut FairScheduler, mut now: Instant) -> Vec<Admission> {
    let mut out = Vec::new();
    while let Some(t) = s.poll_timeout(now) {
        now = t;
        while let Some(a) = s.poll_admission(now) {
            out.push(a);
        }
    }
    out
}

/// `heavy` empties the bucket and queues ten more searches; returns their tickets.
fn heavy_backlog(s: &mut FairScheduler) -> Vec<CallTicket> {
    let heavy = SessionKey::client("heavy");
    for _ in 0..60 {
        assert!(matches!(
            s.submit(Instant::ZERO, &heavy, Units::ONE),
            Submission::Admitted(_)
        ));
    }
    (0..10)
        .map(|_| queued(s.submit(Instant::ZERO, &heavy, Units::ONE)))
        .collect()
}

#[test]
fn a_fresh_session_joining_a_heavy_sessions_call_moves_it_to_its_own_position() {
    let fresh = SessionKey::client("fresh");
    let at = Instant::from_millis(500);

    // Reference: `fresh` asks its own (different) question at 0.5 s.
    let mut own = obv();
    heavy_backlog(&mut own);
    let mine = queued(own.submit(at, &fresh, Units::ONE));
    let own_log = drain(&mut own, at);
    let own_at = own_log.iter().find(|a| a.call == mine).expect("admitted").admitted_at;

    // The same question as heavy's eighth call: joining makes it go at fresh's position.
    let mut joined = obv();
    let tickets = heavy_backlog(&mut joined);
    let flight = tickets[7];
    let entry = joined.join(at, &fresh, flight).expect("the call waits");
    assert_ne!(entry, flight.first_entry());
    let log = drain(&mut joined, at);
    let out: Vec<&Admission> = log.iter().filter(|a| a.call == flight).collect();
    assert_eq!(out.len(), 1, "the call went out exactly once: {out:?}");
    assert_eq!(out[0].admitted_at, own_at, "at the fresh session's own position");
    assert_eq!(out[0].admitted_at, Instant::from_secs(1));
    assert_eq!(out[0].session, fresh, "the session whose turn admitted it pays");
    assert_eq!(
        joined.session_usage(&SessionKey::client("heavy")),
        Some(Units::whole(69))
    );
    assert_eq!(
        joined.stats().admitted_units,
        Units::whole(70),
        "charged once: 60 + 9 + 1"
    );
}

#[test]
fn joining_a_call_that_already_went_out_is_refused() {
    let mut s = obv();
    let a = SessionKey::client("a");
    let Submission::Admitted(adm) = s.submit(Instant::ZERO, &a, Units::ONE) else {
        panic!("room")
    };
    assert_eq!(
        s.join(Instant::ZERO, &SessionKey::client("b"), adm.call),
        Err(JoinError::NotQueued)
    );
}

#[test]
fn joining_twice_from_one_session_keeps_one_entry() {
    let mut s = obv();
    let tickets = heavy_backlog(&mut s);
    let b = SessionKey::client("b");
    let first = s.join(Instant::ZERO, &b, tickets[3]).expect("waits");
    assert_eq!(s.join(Instant::ZERO, &b, tickets[3]), Ok(first));
    assert_eq!(
        s.join(Instant::ZERO, &SessionKey::client("heavy"), tickets[3]),
        Ok(tickets[3].first_entry())
    );
    assert_eq!(s.queued(), 11);
}

#[test]
fn a_flight_nobody_waits_for_is_withdrawn_and_costs_nothing() {
    let mut s = obv();
    let tickets = heavy_backlog(&mut s);
    s.join(Instant::ZERO, &SessionKey::client("b"), tickets[2])
        .expect("waits");
    s.join(Instant::ZERO, &SessionKey::client("c"), tickets[2])
        .expect("waits");
    assert!(s.cancel_call(Instant::from_millis(10), tickets[2]));
    assert!(!s.cancel_call(Instant::from_millis(10), tickets[2]));
    let log = drain(&mut s, Instant::from_millis(10));
    assert!(log.iter().all(|a| a.call != tickets[2]));
    assert_eq!(s.stats().admitted_units, Units::whole(69));
    assert_eq!(s.session_usage(&SessionKey::client("b")), Some(Units::ZERO));
}

#[test]
fn when_one_joiner_leaves_the_others_keep_the_call() {
    let mut s = obv();
    let tickets = heavy_backlog(&mut s);
    let b = s
        .join(Instant::ZERO, &SessionKey::client("b"), tickets[9])
        .expect("waits");
    assert!(s.cancel(Instant::ZERO, b));
    let log = drain(&mut s, Instant::ZERO);
    let out: Vec<&Admission> = log.iter().filter(|a| a.call == tickets[9]).collect();
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].session, SessionKey::client("heavy"));
}

// ---- property: with random joins, every flight goes out at most once, is charged once,
// and never later than its earliest entry would have alone ----

#[derive(Clone, Debug)]
struct Joins {
    /// (at in ms, session 0..4, join the n-th earlier call instead of submitting a new one)
    ops: Vec<(u64, u8, Option<u8>)>,
}

impl Arbitrary for Joins {
    fn arbitrary(g: &mut Gen) -> Joins {
        let n = 1 + usize::arbitrary(g) % 40;
        let ops = (0..n)
            .map(|_| {
                let join = if bool::arbitrary(g) {
                    Some(u8::arbitrary(g))
                } else {
                    None
                };
                (u64::arbitrary(g) % 8_000, u8::arbitrary(g) % 4, join)
            })
            .collect();
        Joins { ops }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Joins>> {
        Box::new(self.ops.clone().shrink().map(|ops| Joins { ops }))
    }
}

fn prop_joins(j: Joins) -> TestResult {
    let mut s = FairScheduler::new(SchedulerConfig::with_limit(LimitConfig::new(
        Units::whole(2),
        Duration::from_secs(2),
    )))
    .expect("valid");
    let mut ops = j.ops.clone();
    ops.sort_by_key(|o| o.0);
    let mut flights: Vec<CallTicket> = Vec::new();
    let mut log: Vec<Admission> = Vec::new();
    let mut now = Instant::ZERO;
    for &(at, who, join) in &ops {
        let at = Instant::from_millis(at);
        while let Some(t) = s.poll_timeout(now).filter(|&t| t <= at) {
            now = t;
            while let Some(a) = s.poll_admission(now) {
                log.push(a);
            }
        }
        now = at;
        let session = SessionKey::client(&format!("s{who}"));
        match join.filter(|_| !flights.is_empty()) {
            Some(n) => {
                let flight = flights[n as usize % flights.len()];
                let _ = s.join(now, &session, flight);
                if let Err(e) = s.check_invariants() {
                    return TestResult::error(format!("after a join: {e}"));
                }
            }
            None => match s.submit(now, &session, Units::ONE) {
                Submission::Admitted(a) => {
                    flights.push(a.call);
                    log.push(a);
                }
                Submission::Queued { call, .. } => flights.push(call),
                Submission::Refused { .. } => {}
            },
        }
    }
    log.extend(drain(&mut s, now));
    let mut seen = BTreeSet::new();
    for a in &log {
        if !seen.insert(a.call) {
            return TestResult::error(format!("call {} went out twice: {log:#?}", a.call));
        }
    }
    if seen.len() != flights.len() {
        return TestResult::error(format!("{} flights, {} went out", flights.len(), seen.len()));
    }
    let charged: u64 = log.iter().map(|a| a.cost.as_milli()).sum();
    if s.stats().admitted_units.as_milli() != charged || charged != 1000 * flights.len() as u64 {
        return TestResult::error(format!("charged {charged} for {} flights", flights.len()));
    }
    if s.queued() != 0 {
        return TestResult::error(format!("{} entries left behind", s.queued()));
    }
    TestResult::passed()
}

#[test]
fn qc_joined_flights_go_out_once_and_are_charged_once() {
    QuickCheck::new()
        .tests(400)
        .quickcheck(prop_joins as fn(Joins) -> TestResult);
}
