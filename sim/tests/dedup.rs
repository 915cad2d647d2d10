//! Request deduplication in the simulator (R-D3, R-D4, R-D8): calls with keys run the
//! production path (buffer, flight table, fair scheduler with `join`/`cancel_flight`),
//! and the flight invariants are checked after every event of every run here.

use besluitbron_sim::engine::{CallState, Served};
use besluitbron_sim::scenario::{Scenario, parse_trace};
use besluitbron_sim::{PolicyKind, Report, RunOptions, RunOutcome, Workload, run, run_canonical};

fn run_ok(name: &str, policy: PolicyKind, seed: Option<u64>) -> RunOutcome {
    run_canonical(name, policy, seed).unwrap_or_else(|f| panic!("{f}"))
}

fn run_workload(name: &str, workload: &Workload, policy: PolicyKind) -> RunOutcome {
    let opts = RunOptions {
        policy,
        seed: 1,
        keep_trace: false,
        progress: false,
    };
    run(name, workload, opts).unwrap_or_else(|f| panic!("{f}"))
}

fn run_inline(toml: &str, policy: PolicyKind) -> RunOutcome {
    let scenario = Scenario::parse(toml, "inline").unwrap();
    run_workload("inline", &scenario.workload(scenario.seed), policy)
}

fn run_inline_traced(toml: &str) -> RunOutcome {
    let scenario = Scenario::parse(toml, "inline").unwrap();
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: 1,
        keep_trace: true,
        progress: false,
    };
    run("inline", &scenario.workload(scenario.seed), opts).unwrap_or_else(|f| panic!("{f}"))
}

fn session_index(run: &RunOutcome, name: &str) -> u32 {
    run.sessions.iter().position(|s| s.name == name).unwrap() as u32
}

fn keyed<'r>(run: &'r RunOutcome, q: &str) -> Vec<&'r besluitbron_sim::engine::CallRecord> {
    run.calls
        .iter()
        .filter(|c| {
            c.key
                .as_ref()
                .is_some_and(|k| k.params().get("q").map(String::as_str) == Some(q))
        })
        .collect()
}

/// The fairness rule of joining: a fresh session asking what a heavy session has queued
/// gets the call at its own position (not ~40 s away at the heavy session's pace), and
/// only the fresh session is charged for the one upstream call.
#[test]
fn coalesced_join_goes_at_the_fresh_sessions_position_and_charges_it_alone() {
    let fair = run_ok("coalesced-join", PolicyKind::Fair, None);
    let fresh = session_index(&fair, "fresh");
    let q = keyed(&fair, "Q");
    assert_eq!(q.len(), 2, "heavy and fresh each ask Q once");
    let fresh_q = q.iter().find(|c| c.session == fresh).unwrap();
    assert_eq!(fresh_q.served, Some(Served::Coalesced));
    let waited = fresh_q.admitted_at.unwrap().saturating_since(fresh_q.submitted_at);
    assert!(waited.as_millis() <= 2_000, "fresh waited {waited:?} for Q");
    let paid: Vec<u32> = q.iter().filter(|c| c.paid).map(|c| c.session).collect();
    assert_eq!(paid, vec![fresh], "exactly one session, the fresh one, pays for Q");
    assert!(q.iter().all(|c| c.state == CallState::Done), "both get the answer");
    let report = Report::of(&fair);
    assert_eq!(
        report.services[0].dedup.unwrap().upstream,
        101,
        "100 distinct calls and Q once"
    );
    assert_eq!(report.session("heavy").unwrap().calls, 100);
    assert_eq!(report.session("fresh").unwrap().calls, 1);

    let legacy = run_ok("coalesced-join", PolicyKind::Legacy, None);
    let q = keyed(&legacy, "Q");
    assert_eq!(
        q.iter().filter(|c| c.paid).count(),
        2,
        "legacy has no coalescing: Q runs twice"
    );
    let fresh_q = q.iter().find(|c| c.session == fresh).unwrap();
    let legacy_wait = fresh_q.admitted_at.unwrap().saturating_since(fresh_q.submitted_at);
    assert!(legacy_wait > waited, "legacy {legacy_wait:?} vs fair {waited:?}");
}

/// Many sessions asking from a small pool: fewer upstream calls than requests, and every
/// flight invariant holds (the run fails otherwise) for several seeds.
#[test]
fn duplicate_pool_saves_upstream_calls_for_several_seeds() {
    for seed in 1..=6 {
        let run = run_ok("duplicate-pool", PolicyKind::Fair, Some(seed));
        let report = Report::of(&run);
        let obv = &report.services[0];
        let d = obv.dedup.unwrap();
        assert!(
            d.upstream < obv.calls,
            "seed {seed}: {} upstream for {} requests",
            d.upstream,
            obv.calls
        );
        assert!(
            d.joins > 0 && d.hits > 0,
            "seed {seed}: joins {} hits {}",
            d.joins,
            d.hits
        );
        assert_eq!(obv.violations, 0, "seed {seed}");
        // 5 % of answers fail with a 5xx; the path tries them again through the fair
        // queue, as the server does, so they are mended.
        let stats = run.platforms[0].path.expect("fair runs keep the path's counters");
        assert!(stats.retries > 0, "seed {seed}: the scenario's failures are retried");
    }
}

/// A 5xx is tried again, each attempt admitted and charged like a new call (R-L8), up to
/// the server's three attempts; then the failure reaches every waiter.
#[test]
fn a_failing_platform_is_asked_three_times_each_attempt_counted() {
    let run = run_inline(
        r#"
description = "every answer is a 5xx"
[[platform]]
id = "obv"
latency = { kind = "fixed", ms = 200 }
fail_rate = 1.0
[[session]]
name = "a"
key = "Q"
burst = [{ at_ms = 0, calls = 2 }]
"#,
        PolicyKind::Fair,
    );
    let q = keyed(&run, "Q");
    assert!(q.iter().all(|c| c.state == CallState::Failed), "{q:?}");
    let obv = &run.services[0];
    assert_eq!(obv.upstream, 3, "three attempts for the one flight");
    assert_eq!(obv.counters.accepted_calls, 3, "the platform counted every attempt");
    assert_eq!(run.platforms[0].upstream, 3, "its platform's attempts");
    let stats = run.platforms[0].path.expect("fair run");
    assert_eq!((stats.attempts, stats.retries, stats.failed), (3, 2, 1));
}

/// A failed flight is never buffered: with every answer failing, each request for the
/// same key starts a new flight, and all waiters of a flight get its failure.
#[test]
fn failures_reach_their_waiters_and_are_never_stored() {
    let run = run_inline(
        r#"
description = "every answer fails"
[[platform]]
id = "obv"
latency = { kind = "fixed", ms = 200 }
fail_rate = 1.0
fail_retryable = false
[[session]]
name = "a"
key = "Q"
burst = [{ at_ms = 0, calls = 3 }, { at_ms = 1000, calls = 2 }]
[[session]]
name = "b"
key = "Q"
burst = [{ at_ms = 100, calls = 1 }]
"#,
        PolicyKind::Fair,
    );
    let q = keyed(&run, "Q");
    assert_eq!(q.len(), 6);
    assert!(
        q.iter().all(|c| c.state == CallState::Failed),
        "every waiter gets the failure"
    );
    assert!(q.iter().all(|c| c.served != Some(Served::Cached)), "nothing was stored");
    let d = Report::of(&run).services[0].dedup.unwrap();
    assert_eq!(
        (d.upstream, d.joins, d.hits),
        (2, 4, 0),
        "one flight at 0 s, a new one at 1 s"
    );
}

/// When every waiter of a queued flight gives up, the flight is withdrawn: it never goes
/// out and nobody is charged.
#[test]
fn a_queued_flight_everyone_left_is_withdrawn_free_of_charge() {
    let run = run_inline(
        r#"
description = "two impatient sessions ask Q behind a busy one"
[[platform]]
id = "obv"
latency = { kind = "fixed", ms = 200 }
# Without RateLimit-* feedback the next room is exactly 1 s after the burst.
rate_limit_headers = false
[[session]]
name = "busy"
burst = [{ at_ms = 0, calls = 100 }]
# The next room is at t=2 s; `b` (a joiner with its own entry) gives up at 1.3 s, the
# leader `a` at 1.4 s: the flight is withdrawn.
[[session]]
name = "a"
key = "Q"
cancel_after_ms = 300
burst = [{ at_ms = 1100, calls = 1 }]
[[session]]
name = "b"
key = "Q"
cancel_after_ms = 100
burst = [{ at_ms = 1200, calls = 1 }]
"#,
        PolicyKind::Fair,
    );
    let q = keyed(&run, "Q");
    assert_eq!(q.len(), 2);
    assert!(q.iter().all(|c| c.state == CallState::Cancelled && !c.paid), "{q:?}");
    let d = Report::of(&run).services[0].dedup.unwrap();
    assert_eq!(d.upstream, 100, "Q never went out");
}

/// Found by `duplicate-pool`: a buffer hit answers a call inside `submit`, which ended an
/// agent round before its other calls were sent (and then ran past the last round).
#[test]
fn regression_buffer_hit_inside_an_agent_round_keeps_the_round_together() {
    let run = run_inline(
        r#"
description = "an agent whose round is answered from the buffer"
[[platform]]
id = "obv"
latency = { kind = "fixed", ms = 200 }
[[session]]
name = "first"
key = "Q"
burst = [{ at_ms = 0, calls = 1 }]
[[session]]
name = "agent"
agent = [{ at_ms = 5000, calls = 2, fan_out = 3, think_ms = 100, key = "Q" }]
"#,
        PolicyKind::Fair,
    );
    let agent = session_index(&run, "agent");
    let calls: Vec<_> = run.calls.iter().filter(|c| c.session == agent).collect();
    assert_eq!(calls.len(), 6, "two rounds of three");
    assert!(
        calls
            .iter()
            .all(|c| c.served == Some(Served::Cached) && c.state == CallState::Done)
    );
}

/// Trace replay: the optional `key` field makes identical requests; lines without it stay
/// distinct, as before.
#[test]
fn trace_keys_coalesce_identical_requests() {
    let trace = r#"{"at_ms": 0, "session": "a", "platform": "obv", "cost": 1, "key": "stikstof"}
{"at_ms": 0, "session": "b", "platform": "obv", "cost": 1, "key": "stikstof"}
{"at_ms": 10, "session": "c", "platform": "obv", "cost": 1, "op": "search"}
{"at_ms": 10, "session": "c", "platform": "obv", "cost": 1, "op": "search"}
{"at_ms": 5000, "session": "c", "platform": "obv", "cost": 1, "key": "stikstof"}
"#;
    let workload = parse_trace(trace, "inline.jsonl").unwrap();
    let fair = Report::of(&run_workload("trace", &workload, PolicyKind::Fair));
    let d = fair.services[0].dedup.unwrap();
    assert_eq!((d.upstream, d.joins, d.hits), (3, 1, 1));
    let legacy = Report::of(&run_workload("trace", &workload, PolicyKind::Legacy));
    assert_eq!(legacy.services[0].dedup.unwrap().upstream, 5);
}

/// As the server's tools do after a 429 at a fair gate: every waiter of the refused
/// flight asks once more; they coalesce into one new flight, which waits out the
/// Retry-After (the throttle's end) and is answered. Before, the simulator handed the
/// 429 to the waiters as a failure while the server queued them again.
#[test]
fn a_flight_refused_with_429_asks_once_more_behind_the_retry_after_as_the_server_does() {
    let run = run_inline_traced(&throttled("throttle = [{ from_ms = 1000, to_ms = 4000 }]"));
    let q = keyed(&run, "Q");
    assert_eq!(q.len(), 3);
    // The refused admission's charge went back to the session that paid it (a: neither
    // had used anything, and a's entry is the older), as the server's gate does on a 429.
    let refunds: Vec<&String> = run.trace.iter().filter(|l| l.contains(" refund ")).collect();
    assert_eq!(refunds.len(), 1, "{refunds:?}");
    assert!(
        refunds[0].starts_with("t=1.000s session=a refund cost=1"),
        "{refunds:?}"
    );
    assert!(q.iter().all(|c| c.state == CallState::Done && c.requeued), "{q:?}");
    assert!(
        q.iter()
            .all(|c| c.admitted_at == Some(besluitbron_core::Instant::from_secs(4))),
        "the new flight went when the Retry-After ended: {q:?}"
    );
    assert_eq!(q.iter().filter(|c| c.paid).count(), 1, "one payer: {q:?}");
    assert_eq!(run.services[0].counters.throttled, 1);
    let d = Report::of(&run).services[0].dedup.unwrap();
    assert_eq!(
        d.upstream, 62,
        "busy's 60, the refused flight and the one that asked again"
    );
}

/// Only once, and only for a Retry-After BesluitBron is willing to wait out
/// (`MAX_REQUEUE_WAIT`): a second refusal, or a longer wait, reaches the waiters.
#[test]
fn a_second_refusal_or_a_long_retry_after_reaches_the_waiters() {
    let twice = run_inline(
        &throttled("throttle = [{ from_ms = 1000, to_ms = 2000 }, { from_ms = 2000, to_ms = 4000 }]"),
        PolicyKind::Fair,
    );
    let q = keyed(&twice, "Q");
    assert!(q.iter().all(|c| c.state == CallState::Failed && c.requeued), "{q:?}");
    assert_eq!(twice.services[0].counters.throttled, 2);
    assert_eq!(Report::of(&twice).services[0].dedup.unwrap().upstream, 62);

    let long = run_inline(
        &throttled("throttle = [{ from_ms = 1000, to_ms = 91000 }]"),
        PolicyKind::Fair,
    );
    let q = keyed(&long, "Q");
    assert!(q.iter().all(|c| c.state == CallState::Failed && !c.requeued), "{q:?}");
    assert_eq!(Report::of(&long).services[0].dedup.unwrap().upstream, 61);
}

/// `busy` empties the bucket at 0 s, so a flight for Q (asked twice by `a` and once by
/// `b` at 0.1 s) waits in the queue until the next unit at 1 s, with all three waiting.
fn throttled(throttle: &str) -> String {
    format!(
        r#"
description = "a flight three calls wait for meets a throttled platform"
[[platform]]
id = "obv"
latency = {{ kind = "fixed", ms = 200 }}
rate_limit_headers = false
{throttle}
[[session]]
name = "busy"
burst = [{{ at_ms = 0, calls = 60 }}]
[[session]]
name = "a"
key = "Q"
burst = [{{ at_ms = 100, calls = 2 }}]
[[session]]
name = "b"
key = "Q"
burst = [{{ at_ms = 100, calls = 1 }}]
"#
    )
}

/// A trace line's follow-up (`then`) is the request's second platform call: made by the
/// same session when the first is answered (a document's record, then its text on the
/// text host's lane), not when the first failed; a repeat of the first from the buffer
/// still makes it.
#[test]
fn a_follow_up_call_goes_when_its_first_call_is_answered() {
    let trace = concat!(
        r#"{"at_ms": 0, "session": "reader", "platform": "ob", "cost": 1, "op": "record", "key": "r1", "then": {"cost": 1, "op": "text", "key": "t1"}}"#,
        "\n",
        r#"{"at_ms": 5000, "session": "reader", "platform": "ob", "cost": 1, "op": "record", "key": "r1", "then": {"cost": 1, "op": "text", "key": "t2"}}"#,
        "\n",
    );
    let mut workload = parse_trace(trace, "follow-up").unwrap();
    workload.platforms = vec![besluitbron_sim::scenario::PlatformSpec {
        latency: besluitbron_sim::scenario::LatencySpec::Fixed { ms: 300 },
        ..besluitbron_sim::scenario::PlatformSpec::default_for(besluitbron_sim::ids::platform("ob").unwrap())
    }];
    let run = run_workload("follow-up", &workload, PolicyKind::Fair);
    assert!(run.keyed);
    let at = |q: &str| {
        let c = keyed(&run, q);
        assert_eq!(c.len(), 1, "{q}: {c:?}");
        (
            c[0].submitted_at.as_millis(),
            c[0].admitted_at.map(|a| a.as_millis()),
            c[0].state,
        )
    };
    assert_eq!(
        at("t1"),
        (300, Some(300), CallState::Done),
        "asked when the record's answer came"
    );
    // The second record is a buffer hit: its text is asked at once.
    assert_eq!(at("t2"), (5_000, Some(5_000), CallState::Done));
    let texts: Vec<_> = run
        .services
        .iter()
        .filter(|s| s.id.as_str() == "koop-publications")
        .collect();
    assert_eq!(
        texts.len(),
        1,
        "the text calls went to the publications' service, a lane of its own"
    );
    assert_eq!(texts[0].calls, 2);
    assert_eq!(run.services.len(), 2, "ob's search service and its publications");
}
