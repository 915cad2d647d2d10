//! Short hand-written scenarios, rendered one line per event and compared with insta
//! snapshots in `snapshots/core/`. A change in any decision shows up as a diff.

use crate::support;

use std::time::Duration;

use besluitbron_core::{FairScheduler, LimitConfig, SchedulerConfig, Units};
use support::{Action, Step, drive, scheduler, submit};

fn check(name: &str, mut s: FairScheduler, steps: &[Step]) -> support::Run {
    let run = drive(&mut s, steps, None);
    assert!(run.findings.is_empty(), "{name}: {:?}", run.findings);
    insta::with_settings!({ snapshot_path => "../../snapshots/core", prepend_module_to_snapshot => false }, {
        insta::assert_snapshot!(name, run.trace());
    });
    run
}

fn obv() -> FairScheduler {
    scheduler(Units::whole(60), Duration::from_secs(60))
}

#[test]
fn second_session_overtakes_a_busy_one() {
    // The seed's measurement, shortened: `busy` empties the bucket and queues ten more;
    // `second` arrives half a second later and goes as soon as one unit has refilled.
    let mut steps: Vec<Step> = (0..70).map(|_| submit(0, "busy", Units::ONE)).collect();
    steps.push(submit(500, "second", Units::ONE));
    let run = check("second_session_overtakes_a_busy_one", obv(), &steps);
    let second = run
        .admissions
        .iter()
        .find(|(_, a)| a.session.to_string() == "second")
        .expect("admitted");
    assert_eq!(second.1.waited(), Duration::from_millis(500));
}

#[test]
fn heavy_session_gets_a_third_after_120_units() {
    // Four units per four seconds makes every refill visible. `heavy` has used twice
    // the limit (at OpenBesluitvorming: 120 units), so its weight is 1/3; `fresh` starts
    // from nothing. The platform reports an empty bucket, so both must queue.
    let s = scheduler(Units::whole(4), Duration::from_secs(4));
    let mut steps: Vec<Step> = (0..8).map(|i| submit(i * 1000, "heavy", Units::ONE)).collect();
    steps.push(Step {
        at: besluitbron_core::Instant::from_millis(8_000),
        action: Action::Remaining(Units::ZERO),
    });
    for _ in 0..8 {
        steps.push(submit(8_000, "heavy", Units::ONE));
        steps.push(submit(8_000, "fresh", Units::ONE));
    }
    check("heavy_session_gets_a_third_after_120_units", s, &steps);
}

#[test]
fn oversize_call_waits_for_a_full_bucket_and_costs_the_whole_limit() {
    let steps = [
        submit(0, "a", Units::whole(3)),
        submit(100, "b", Units::whole(100)),
        submit(200, "a", Units::ONE),
    ];
    let run = check(
        "oversize_call_waits_for_a_full_bucket_and_costs_the_whole_limit",
        scheduler(Units::whole(10), Duration::from_secs(10)),
        &steps,
    );
    let big = &run.admissions.iter().find(|(n, _)| *n == 1).expect("admitted").1;
    assert_eq!(big.cost, Units::whole(10));
    assert_eq!(big.requested, Units::whole(100));
}

#[test]
fn retry_after_from_the_platform_stops_everything_until_it_passes() {
    let mut steps = vec![submit(0, "a", Units::ONE), submit(0, "b", Units::ONE)];
    steps.push(Step {
        at: besluitbron_core::Instant::from_millis(10),
        action: Action::RetryAfter(Duration::from_secs(5)),
    });
    steps.push(submit(20, "a", Units::ONE));
    steps.push(submit(30, "b", Units::ONE));
    let run = check(
        "retry_after_from_the_platform_stops_everything_until_it_passes",
        scheduler(Units::whole(10), Duration::from_secs(10)),
        &steps,
    );
    assert!(
        run.admissions
            .iter()
            .skip(2)
            .all(|(_, a)| a.admitted_at.as_millis() >= 5_010)
    );
}

#[test]
fn cancelled_calls_cost_nothing() {
    let mut steps: Vec<Step> = (0..4).map(|_| submit(0, "a", Units::ONE)).collect();
    steps.push(submit(0, "b", Units::ONE));
    steps.push(submit(0, "b", Units::ONE));
    steps.push(Step {
        at: besluitbron_core::Instant::from_millis(100),
        action: Action::Cancel { nth: 3 },
    });
    steps.push(Step {
        at: besluitbron_core::Instant::from_millis(100),
        action: Action::Cancel { nth: 4 },
    });
    check(
        "cancelled_calls_cost_nothing",
        scheduler(Units::whole(2), Duration::from_secs(2)),
        &steps,
    );
}

#[test]
fn a_heavy_session_still_gets_one_call_per_window() {
    // Three fresh sessions keep the platform busy; `heavy` has used 40 units of a
    // 4-unit limit, so its weight is 1/11 and the fair rule alone would let it through
    // about once in 30 calls. All four heads fit in the bucket, so the deadline rule
    // lets it through at least once per W + one unit's refill (4 s + 1 s).
    let s = scheduler(Units::whole(4), Duration::from_secs(4));
    let mut steps: Vec<Step> = (0..40).map(|i| submit(i * 1000, "heavy", Units::ONE)).collect();
    steps.push(Step {
        at: besluitbron_core::Instant::from_millis(40_000),
        action: Action::Remaining(Units::ZERO),
    });
    for _ in 0..4 {
        steps.push(submit(40_000, "heavy", Units::ONE));
    }
    for _ in 0..8 {
        for f in ["f1", "f2", "f3"] {
            steps.push(submit(40_000, f, Units::ONE));
        }
    }
    let run = check("a_heavy_session_still_gets_one_call_per_window", s, &steps);
    assert!(
        run.admissions
            .iter()
            .any(|(_, a)| a.rule == besluitbron_core::AdmitRule::Deadline)
    );
    let heavy: Vec<_> = run
        .admissions
        .iter()
        .filter(|(_, a)| a.session.to_string() == "heavy")
        .collect();
    for pair in heavy.windows(2).skip(40) {
        let gap = pair[1].1.admitted_at.saturating_since(pair[0].1.admitted_at);
        assert!(gap <= Duration::from_secs(5), "heavy waited {gap:?} between admissions");
    }
}

#[test]
fn usage_is_forgotten_thirty_minutes_after_the_last_call() {
    let s = scheduler(Units::whole(2), Duration::from_secs(2));
    let steps = [
        submit(0, "a", Units::whole(2)),
        submit(1, "b", Units::ONE),
        // 30 minutes after its last call, `a` is forgotten: it competes as new.
        submit(1_800_000, "c", Units::whole(2)),
        submit(1_800_001, "a", Units::ONE),
        submit(1_800_002, "c", Units::ONE),
    ];
    check("usage_is_forgotten_thirty_minutes_after_the_last_call", s, &steps);
}

#[test]
fn a_full_queue_refuses_the_newcomer_never_a_waiter() {
    let config = SchedulerConfig {
        max_queued: 3,
        max_queued_per_session: 2,
        ..SchedulerConfig::with_limit(LimitConfig::new(Units::ONE, Duration::from_secs(1)))
    };
    let s = FairScheduler::new(config).expect("valid");
    let steps = [
        submit(0, "a", Units::ONE),
        submit(0, "a", Units::ONE),
        submit(0, "a", Units::ONE),
        submit(0, "a", Units::ONE),
        submit(0, "b", Units::ONE),
        submit(0, "c", Units::ONE),
    ];
    let run = check("a_full_queue_refuses_the_newcomer_never_a_waiter", s, &steps);
    assert_eq!(run.refused, vec![3, 5]);
}

#[test]
fn a_newcomer_at_a_takeover_goes_before_busy_sessions_it_ties_with() {
    // A new owner's bucket is empty (the platform never sees a burst at a handover):
    // six busy sessions queue five calls each at once and one unit comes per second.
    // Five seconds in, five of them have had one call; the sixth has used nothing, as
    // has the newcomer, and both carry the virtual time as start tag. The newcomer asks
    // one search, the busy session five: the newcomer goes first.
    let mut steps = vec![Step {
        at: besluitbron_core::Instant::from_millis(0),
        action: Action::Remaining(Units::ZERO),
    }];
    for session in ["busy0", "busy1", "busy2", "busy3", "busy4", "busy5"] {
        steps.extend((0..5).map(|_| submit(0, session, Units::ONE)));
    }
    steps.push(submit(5_500, "late", Units::ONE));
    let run = check(
        "a_newcomer_at_a_takeover_goes_before_busy_sessions_it_ties_with",
        obv(),
        &steps,
    );
    let late = 30; // the 31st submit
    let position = run
        .admissions
        .iter()
        .position(|(n, _)| *n == late)
        .expect("the newcomer is admitted");
    let before: Vec<String> = run.admissions[..position]
        .iter()
        .map(|(_, a)| a.session.to_string())
        .collect();
    assert_eq!(before.len(), 5, "admitted before the newcomer: {before:?}");
    assert!(!before.contains(&"busy5".to_owned()), "{before:?}");
    assert_eq!(run.admissions[position].1.waited(), Duration::from_millis(500));
}
