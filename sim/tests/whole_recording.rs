//! A recording compared over its whole length: across a process killed with requests open
//! (the server's open lines say what it admitted for them) and up to a clean stop that cut
//! requests (`served: cut`) — and a divergence in that late part still caught.

use besluitbron_core::Units;
use besluitbron_core::record::{AttemptOutcome, CallEnd, RecordedAttempt, TraceLine};
use besluitbron_sim::fidelity::{Matched, check};
use besluitbron_sim::scenario::parse_trace;
use besluitbron_sim::{PolicyKind, RunOptions, run};

/// The recording's clock: Unix ms of its first call.
const T0: u64 = 1_780_000_000_000;

/// A bwb search of session `s-a…`, arriving at `at` ms (from `T0`) with request number
/// `seq` and key `key`, as the server writes it: its step is its number.
fn line(at: u64, seq: u64, key: &str) -> TraceLine {
    TraceLine {
        at_ms: T0 + at,
        session: "s-aaaaaaaaaaaa".to_owned(),
        platform: "bwb".to_owned(),
        cost: Units::ONE,
        op: Some("search".to_owned()),
        key: Some(key.to_owned()),
        then: None,
        served: None,
        left_after_ms: None,
        seq: Some(seq),
        step: None,
        attempts: Vec::new(),
        open: false,
        dropped_before: None,
        query: None,
    }
}

/// An attempt sent at `at` (from `T0`): with its outcome taken `latency` ms later, or
/// (`None`) still out.
fn attempt(at: u64, latency: Option<u64>, outcome: AttemptOutcome) -> RecordedAttempt {
    RecordedAttempt {
        at_ms: T0 + at,
        latency_ms: latency.unwrap_or(0),
        outcome,
        retry_after_ms: (outcome == AttemptOutcome::RateLimited).then_some(2_000),
        remaining: None,
        // The server sets it when it takes the outcome.
        step: latency.map(|l| at + l),
    }
}

/// A request answered by its own flight: one attempt at arrival, answered in 5 ms.
fn fetched(at: u64, seq: u64) -> TraceLine {
    let mut l = line(at, seq, &format!("k{at}"));
    l.served = Some(CallEnd::Fetched);
    l.attempts = vec![attempt(at, Some(5), AttemptOutcome::Ok)];
    l
}

/// An open line: the request waits, its flight's attempts so far.
fn open(at: u64, seq: u64, attempts: Vec<RecordedAttempt>) -> TraceLine {
    let mut l = line(at, seq, &format!("k{at}"));
    l.open = true;
    l.attempts = attempts;
    l
}

/// The recording as the server writes it: one line per call when it ends, open lines as
/// attempts go; the file's order is the order of writing, not of arrival.
fn recording() -> Vec<TraceLine> {
    let mut lines = Vec::new();
    // The first process: twenty searches answered, then three open when it was killed
    // (just after 1,104 ms): one at the platform, one joined to it (no line: it admitted
    // nothing), one refused with 429 and waiting behind the Retry-After.
    for seq in 0..20 {
        lines.push(fetched(seq * 50, seq));
    }
    lines.push(open(1_000, 20, vec![attempt(1_000, None, AttemptOutcome::Ok)]));
    lines.push(open(1_100, 22, vec![attempt(1_100, None, AttemptOutcome::Ok)]));
    lines.push(open(
        1_100,
        22,
        vec![attempt(1_100, Some(4), AttemptOutcome::RateLimited)],
    ));
    // The second process, from 5 s: ten answered, and one at the platform when the server
    // was stopped at 6,500 ms: cut, its attempt taken to end at the stop.
    for seq in 0..10 {
        lines.push(fetched(5_000 + seq * 100, seq));
    }
    lines.push(open(6_000, 10, vec![attempt(6_000, None, AttemptOutcome::Ok)]));
    let mut cut = line(6_000, 10, "k6000");
    cut.served = Some(CallEnd::Cut);
    cut.left_after_ms = Some(500);
    cut.attempts = vec![attempt(6_000, None, AttemptOutcome::Failed)];
    cut.attempts[0].latency_ms = 500;
    lines.push(cut);
    lines
}

fn text(lines: &[TraceLine]) -> String {
    lines
        .iter()
        .map(|l| serde_json::to_string(l).expect("a line") + "\n")
        .collect()
}

/// Replays `lines` and compares them within `tolerance_ms`.
fn compared(lines: &[TraceLine], tolerance_ms: u64) -> Result<Vec<Matched>, String> {
    let workload = parse_trace(&text(lines), "whole").expect("a recorded trace");
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: 1,
        keep_trace: false,
        progress: false,
    };
    let fair = run("whole", &workload, opts).unwrap_or_else(|f| panic!("{f}"));
    check(&workload, &fair, tolerance_ms).map_err(|d| d.to_string())
}

#[test]
fn a_kill_with_requests_open_and_a_stop_that_cut_one_are_compared_to_the_end() {
    let lines = recording();
    let workload = parse_trace(&text(&lines), "whole").expect("a recorded trace");
    let recorded = workload.recorded.as_ref().expect("recorded");
    assert_eq!(recorded.restarts, [5_000]);
    assert_eq!(
        recorded.ends[0], 1_104,
        "the first process was last heard of at the 429"
    );
    assert!(
        recorded.segments.values().flatten().all(|s| s.blind.is_none()),
        "{:?}",
        recorded.segments
    );
    // Each request once: the open lines of a request that ended give way to its line.
    assert_eq!(workload.open_calls.len(), 20 + 2 + 10 + 1);
    let matched = compared(&lines, 0).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(matched.len(), 1);
    let m = &matched[0];
    assert_eq!(m.admissions, 22 + 11, "{m}");
    assert!(m.whole(), "{m}");
    assert!(m.to_string().ends_with("compared over the whole recording"), "{m}");
}

/// Without its open lines (a server that did not write them) the recording does not say
/// what the killed process admitted: it stops speaking for it from its last request. So it
/// does where the killed process's writer dropped lines.
#[test]
fn without_open_lines_or_with_lines_dropped_the_kill_is_a_blind_spot() {
    let blind = |lines: &[TraceLine]| {
        let workload = parse_trace(&text(lines), "blind").expect("a recorded trace");
        let recorded = workload.recorded.expect("recorded");
        let bwb = besluitbron_sim::ids::platform("bwb").unwrap();
        recorded.segments[&bwb][0].blind.clone()
    };
    let without: Vec<TraceLine> = recording().into_iter().filter(|l| !l.open).collect();
    let spot = blind(&without).expect("blind without open lines");
    assert_eq!(spot.at_ms, 950, "{spot:?}");
    assert!(spot.why.contains("open when the server stopped"), "{spot:?}");
    let mut dropped = recording();
    dropped[5].dropped_before = Some(1);
    let spot = blind(&dropped).expect("blind with lines dropped");
    assert!(spot.why.contains("request 21 of bwb"), "{spot:?}");
    assert!(blind(&recording()).is_none());
}

/// The late part is compared, not passed: an admission moved in the killed process's last
/// moment, or at the stop, is a divergence.
#[test]
fn a_late_admission_moved_is_a_divergence() {
    // The 429'd request of the killed process let go 300 ms later than the replay does.
    let mut killed = recording();
    for l in &mut killed[21..23] {
        l.attempts[0].at_ms += 300;
    }
    let d = compared(&killed, 250).expect_err("a divergence before the kill");
    assert!(d.contains("bwb") && d.contains("diverges"), "{d}");
    // The request the stop cut, sent 300 ms late.
    let mut stopped = recording();
    let n = stopped.len();
    for l in &mut stopped[n - 2..] {
        l.attempts[0].at_ms += 300;
        l.attempts[0].latency_ms = 200;
    }
    let d = compared(&stopped, 250).expect_err("a divergence before the stop");
    assert!(d.contains("diverges"), "{d}");
    // An admission of the killed process the replay would not make: one more attempt
    // sent after the 429, before the Retry-After.
    let mut extra = recording();
    extra[22].attempts.push(attempt(1_104, None, AttemptOutcome::Ok));
    let d = compared(&extra, 250).expect_err("an admission the replay did not make");
    assert!(d.contains("diverges"), "{d}");
}
