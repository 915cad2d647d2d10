//! Replaying a trace the server recorded: instants from the first call, the recorded
//! flights' latencies and outcomes as the platforms' answers, and what-if limits.

use besluitbron_sim::scenario::{LimitOverride, LimitTarget, load_trace, parse_trace};
use besluitbron_sim::{PolicyKind, RunOptions, RunOutcome, Workload, run};

fn replay(workload: &Workload, policy: PolicyKind) -> RunOutcome {
    let opts = RunOptions {
        policy,
        seed: 1,
        keep_trace: false,
        progress: false,
    };
    run("recorded", workload, opts).unwrap_or_else(|f| panic!("{f}"))
}

/// Two recorded calls on Unix-epoch instants: a flight refused once with a 2 s
/// Retry-After, then answered in 250 ms; an identical request joins it.
const RECORDED: &str = r#"{"at_ms":1780000000500,"session":"s-bbbbbbbbbbbb","platform":"obv","cost":1,"op":"search","key":"00000000000000aa","served":"coalesced","seq":1}
{"at_ms":1780000000000,"session":"s-aaaaaaaaaaaa","platform":"obv","cost":1,"op":"search","key":"00000000000000aa","served":"fetched","seq":0,"attempts":[{"at_ms":1780000000000,"latency_ms":3,"outcome":"rate-limited","retry_after_ms":2000},{"at_ms":1780000002003,"latency_ms":250,"outcome":"ok"}]}
"#;

#[test]
fn a_recorded_trace_starts_at_its_first_call_and_replays_its_platform_answers() {
    let workload = parse_trace(RECORDED, "recorded").expect("a recorded trace");
    let recorded = workload.recorded.as_ref().expect("recorded");
    assert_eq!(recorded.base_ms, 1_780_000_000_000);
    // Arrival order, not the file's (lines are written when calls end).
    assert_eq!(workload.open_calls[0].at.as_millis(), 0);
    assert_eq!(workload.open_calls[1].at.as_millis(), 500);
    assert_eq!(workload.open_index(0), 1, "a call keeps its line number");
    let fair = replay(&workload, PolicyKind::Fair);
    let obv = fair
        .services
        .iter()
        .find(|p| p.id == besluitbron_sim::ids::service("obv").unwrap())
        .unwrap();
    assert_eq!(obv.counters.throttled, 1, "the recorded 429 is the replay's");
    assert_eq!(obv.counters.accepted_calls, 1, "one flight for both calls");
    let at: Vec<u64> = fair.admissions.iter().map(|a| a.at_ms).collect();
    assert_eq!(
        at,
        vec![0, 2003],
        "the retry behind the recorded Retry-After, counted from the 429's arrival"
    );
    assert_eq!(fair.end_at.as_millis(), 2253, "answered after the recorded latency");
}

#[test]
fn the_latency_model_replaces_the_recorded_answers_when_asked() {
    let mut workload = parse_trace(RECORDED, "recorded").expect("a recorded trace");
    workload.forget_recorded_answers();
    let fair = replay(&workload, PolicyKind::Fair);
    let obv = fair
        .services
        .iter()
        .find(|p| p.id == besluitbron_sim::ids::service("obv").unwrap())
        .unwrap();
    assert_eq!(obv.counters.throttled, 0);
    assert_eq!(fair.admissions.len(), 1);
}

#[test]
fn a_hand_written_trace_keeps_its_instants() {
    let text = r#"{"at_ms":5000,"session":"a","platform":"obv","cost":1}"#;
    let workload = parse_trace(text, "hand").expect("a trace");
    assert!(workload.recorded.is_none());
    assert_eq!(workload.open_calls[0].at.as_millis(), 5000);
}

#[test]
fn what_if_limits_parse_and_apply() {
    let l: LimitOverride = "obv=30/60s".parse().expect("a limit");
    let platform = |id: &str| besluitbron_sim::ids::platform(id).unwrap();
    assert_eq!(
        (l.target, l.capacity.as_milli(), l.window_s),
        (
            LimitTarget::Platform {
                platform: platform("obv"),
                text: false
            },
            30_000,
            60.0
        )
    );
    let t: LimitOverride = "ob/text=2.5/30".parse().expect("a text limit");
    assert_eq!(
        (t.target, t.capacity.as_milli(), t.window_s),
        (
            LimitTarget::Platform {
                platform: platform("ob"),
                text: true
            },
            2_500,
            30.0
        )
    );
    let z: LimitOverride = "koop-zoekservice=15/30s".parse().expect("a service's limit");
    assert_eq!(
        z.target,
        LimitTarget::Service(besluitbron_sim::ids::service("koop-zoekservice").unwrap())
    );
    for bad in [
        "obv",
        "obv=30",
        "obv=0/60s",
        "obv=30/0s",
        "xyz=1/1s",
        "ob/pdf=1/1s",
        "obv=a/60s",
        "obv=30/-1s",
        "koop-zoekservice/text=1/1s",
    ] {
        assert!(bad.parse::<LimitOverride>().is_err(), "{bad}");
    }
    // A platform's text limit where it has no text service, or a service nobody of the
    // run calls, is refused by name.
    let mut one = parse_trace(r#"{"at_ms":0,"session":"a","platform":"obv","cost":1}"#, "one").unwrap();
    let err = one
        .set_limit("obv/text=1/1s".parse().unwrap())
        .expect_err("obv calls one service");
    assert!(err.contains("obv calls one service"), "{err}");
    let err = one.set_limit(z).expect_err("nobody calls it");
    assert!(err.contains("koop-zoekservice"), "{err}");
    // 90 calls at once at 30 per 60 s: the last goes two minutes later (a little more:
    // the platform's `RateLimit-*` answers, in whole units and seconds, are followed).
    let text: String = (0..90)
        .map(|i| {
            format!(
                "{{\"at_ms\":0,\"session\":\"s{}\",\"platform\":\"obv\",\"cost\":1}}\n",
                i % 3
            )
        })
        .collect();
    let mut workload = parse_trace(&text, "burst").expect("a trace");
    workload.set_limit(l).expect("obv is called");
    let fair = replay(&workload, PolicyKind::Fair);
    let last = fair.admissions.iter().map(|a| a.at_ms).max().unwrap();
    assert!((120_000..125_000).contains(&last), "{last}");
    let obv = fair
        .services
        .iter()
        .find(|p| p.id == besluitbron_sim::ids::service("obv").unwrap())
        .unwrap();
    assert_eq!(obv.counters.over_limit, 0);
}

#[test]
fn the_fidelity_check_holds_for_a_faithful_recording_and_names_a_divergence() {
    let workload = parse_trace(RECORDED, "recorded").expect("a recorded trace");
    let fair = replay(&workload, PolicyKind::Fair);
    let matched = besluitbron_sim::fidelity::check(&workload, &fair, 0).expect("faithful");
    let counts: Vec<_> = matched
        .iter()
        .map(|m| (m.service, m.admissions, m.blind.is_some()))
        .collect();
    assert_eq!(counts, vec![(besluitbron_sim::ids::service("obv").unwrap(), 2, false)]);
    // The server said its retry went 5 ms after it was due: a late wake-up of its task, which
    // the replay takes from the recording (it wakes at the recorded send), so the two agree.
    let late = RECORDED.replace("1780000002003", "1780000002008");
    let workload = parse_trace(&late, "late").expect("a recorded trace");
    let fair = replay(&workload, PolicyKind::Fair);
    assert!(
        besluitbron_sim::fidelity::check(&workload, &fair, 0).is_ok(),
        "a wake-up 5 ms late is the server's lateness, not a divergence"
    );
    // 100 ms later is more than a late wake-up: the replay sends it when due.
    let moved = RECORDED.replace("1780000002003", "1780000002103");
    let workload = parse_trace(&moved, "moved").expect("a recorded trace");
    let fair = replay(&workload, PolicyKind::Fair);
    assert!(
        besluitbron_sim::fidelity::check(&workload, &fair, 100).is_ok(),
        "within 100 ms"
    );
    let d = besluitbron_sim::fidelity::check(&workload, &fair, 99).expect_err("beyond 99 ms");
    assert_eq!((d.service.as_str(), d.at), ("obv", 1));
    let text = d.to_string();
    assert!(
        text.contains("server:") && text.contains("simulator:") && text.contains("> #1"),
        "{text}"
    );
}

/// Found replaying the soak's recording: each limited platform's path numbers its
/// flights from zero, and the recorded flight a number took was kept by the number alone,
/// so rechtspraak's second flight (yy, recorded once) was given obv's second flight's slot
/// (bb's second recording) and the replay panicked on the index.
#[test]
fn regression_flights_of_two_platforms_with_one_number_take_their_own_recordings() {
    let line = |at: u64, platform: &str, key: &str, latency: u64, outcome: &str| {
        format!(
            r#"{{"at_ms":{at},"session":"s-aaaaaaaaaaaa","platform":"{platform}","cost":1,"op":"search","key":"{key}","served":"fetched","seq":0,"attempts":[{{"at_ms":{at},"latency_ms":{latency},"outcome":"{outcome}"}}]}}"#
        )
    };
    let base = 1_780_000_000_000;
    // bb's first flight fails (nothing kept), so its second is obv's flight 1.
    let text = [
        line(base, "obv", "00000000000000bb", 10, "failed"),
        line(base + 1_000, "obv", "00000000000000bb", 20, "ok"),
        line(base + 2_000, "rechtspraak", "00000000000000xx", 30, "ok"),
        line(base + 3_000, "rechtspraak", "00000000000000yy", 40, "ok"),
    ]
    .join("\n");
    let workload = parse_trace(&text, "recorded").expect("a recorded trace");
    let fair = replay(&workload, PolicyKind::Fair);
    assert_eq!(fair.admissions.len(), 4, "each fetched flight admitted");
    assert_eq!(
        fair.end_at.as_millis(),
        3_040,
        "yy answered after its own recorded 40 ms"
    );
}

/// A caller that gave up while it waited is withdrawn in the replay when it left (found
/// replaying the soak's recording: the simulator admitted the calls the server had seen
/// leave, 23 more admissions at OpenBesluitvorming than the server made).
#[test]
fn a_recorded_call_that_left_is_withdrawn_when_it_left() {
    let base = 1_780_000_000_000_u64;
    let fetched = format!(
        r#"{{"at_ms":{base},"session":"s-aaaaaaaaaaaa","platform":"obv","cost":1,"op":"search","key":"00000000000000aa","served":"fetched","seq":0,"attempts":[{{"at_ms":{base},"latency_ms":50,"outcome":"ok"}}]}}"#
    );
    let left = |key: &str, after: u64| {
        format!(
            r#"{{"at_ms":{base},"session":"s-bbbbbbbbbbbb","platform":"obv","cost":1,"op":"search","key":"{key}","served":"left","left_after_ms":{after},"seq":1}}"#
        )
    };
    let text = [fetched, left("00000000000000bb", 1_000)].join("\n");
    let mut workload = parse_trace(&text, "left").expect("a recorded trace");
    // One unit a minute: the second call would wait a minute; its caller left after 1 s.
    workload
        .set_limit("obv=1/60s".parse().expect("a limit"))
        .expect("obv is called");
    let fair = replay(&workload, PolicyKind::Fair);
    assert_eq!(fair.admissions.len(), 1, "the call that left is never admitted");
    assert!(
        besluitbron_sim::fidelity::check(&workload, &fair, 0).is_ok(),
        "the replay admits what the server admitted"
    );
}

/// An answer's `RateLimit-Remaining` is part of the recording: the server lowered its
/// bucket to it, so the replay does too (found replaying the soak's recording, where the
/// simulator's own platform model still had budget the real platform had said was gone).
#[test]
fn the_budget_an_answer_reported_is_the_replays() {
    let base = 1_780_000_000_000_u64;
    let line = |at: u64, key: &str, remaining: &str| {
        format!(
            r#"{{"at_ms":{},"session":"s-aaaaaaaaaaaa","platform":"obv","cost":1,"op":"search","key":"{key}","served":"fetched","seq":0,"attempts":[{{"at_ms":{},"latency_ms":50,"outcome":"ok"{remaining}}}]}}"#,
            base + at,
            base + at
        )
    };
    let admitted_b = |remaining: &str| {
        let text = [
            line(0, "00000000000000aa", remaining),
            line(100, "00000000000000bb", ""),
        ]
        .join("\n");
        let workload = parse_trace(&text, "remaining").expect("a recorded trace");
        let fair = replay(&workload, PolicyKind::Fair);
        assert_eq!(fair.admissions.len(), 2);
        fair.admissions[1].at_ms
    };
    assert_eq!(admitted_b(""), 100, "a full bucket: at once");
    let emptied = admitted_b(r#","remaining":{"units":0,"reset_ms":60000}"#);
    assert!(emptied >= 1_000, "the platform said its budget was gone: {emptied} ms");
}

/// A recorded trace is replayed with the bucket the server kept: its default margin (1 s)
/// held back of OpenBesluitvorming's burst, 59 of 60 units (found replaying the soak's
/// recording, where the replay had one unit more than the server all along).
#[test]
fn a_recording_is_replayed_with_the_servers_margin() {
    let base = 1_780_000_000_000_u64;
    let text: Vec<String> = (0..60)
        .map(|i| {
            format!(
                r#"{{"at_ms":{base},"session":"s-{i:012}","platform":"obv","cost":1,"op":"search","key":"{i:016x}","served":"fetched","seq":{i},"attempts":[{{"at_ms":{base},"latency_ms":10,"outcome":"ok"}}]}}"#
            )
        })
        .collect();
    let mut workload = parse_trace(&text.join("\n"), "burst").expect("a recorded trace");
    let last = |w: &Workload| {
        replay(w, PolicyKind::Fair)
            .admissions
            .iter()
            .map(|a| a.at_ms)
            .max()
            .unwrap()
    };
    assert!(last(&workload) >= 1_000, "the 60th unit was held back");
    workload.recorded.as_mut().unwrap().margin = std::time::Duration::ZERO;
    assert_eq!(last(&workload), 0, "without a margin, the whole burst at once");
}

/// Three recorded calls to OpenTK-like `tk` (no kept limit): `a` refused with a 1 s
/// Retry-After, `b` refused as well when it went, `c` answered.
const OPEN_429S: &str = r#"{"at_ms":1780000000000,"session":"s-aaaaaaaaaaaa","platform":"tk","cost":1,"op":"search","key":"00000000000000a1","served":"failed","seq":0,"attempts":[{"at_ms":1780000000000,"latency_ms":1,"outcome":"rate-limited","retry_after_ms":1000}]}
{"at_ms":1780000000500,"session":"s-bbbbbbbbbbbb","platform":"tk","cost":1,"op":"search","key":"00000000000000b2","served":"failed","seq":1,"attempts":[{"at_ms":1780000000500,"latency_ms":1,"outcome":"rate-limited","retry_after_ms":1000}]}
{"at_ms":1780000000600,"session":"s-cccccccccccc","platform":"tk","cost":1,"op":"search","key":"00000000000000c3","served":"fetched","seq":2,"attempts":[{"at_ms":1780000000600,"latency_ms":40,"outcome":"ok"}]}
"#;

/// Found replaying the soak's recording under `--policy both`: the legacy model asked
/// again after every 429, and a recording repeats its last answer for attempts it does not
/// hold, so a call whose only recorded answer was a 429 was asked every second forever
/// and the replay never ended. It now asks again as the fair path does (once, on a
/// platform with a kept limit): on `tk` the 429 is the call's answer.
#[test]
fn regression_a_recorded_final_429_ends_the_call_under_legacy() {
    let workload = parse_trace(OPEN_429S, "open-429s").expect("a recorded trace");
    let legacy = replay(&workload, PolicyKind::Legacy);
    let states: Vec<_> = legacy.calls.iter().map(|c| (c.state, c.platform_429s)).collect();
    use besluitbron_sim::CallState::{Done, Failed};
    assert_eq!(states, vec![(Failed, 1), (Failed, 1), (Done, 0)]);
    assert!(legacy.end_at.as_millis() < 2_000, "ended at {}", legacy.end_at);
}

/// Found with the one above: ≤ 1.4.5 held `b` and `c` behind `a`'s Retry-After and let
/// both go at once when it ended. `b`'s 429 came back at that instant, and the checker
/// took `c`, sent in the same batch before any answer, as sent during `b`'s Retry-After.
/// A batch is now checked against what was known when it went.
#[test]
fn regression_a_legacy_batch_is_checked_against_what_was_known_when_it_went() {
    let workload = parse_trace(OPEN_429S, "open-429s").expect("a recorded trace");
    let legacy = replay(&workload, PolicyKind::Legacy);
    let admitted: Vec<_> = legacy
        .calls
        .iter()
        .map(|c| c.admitted_at.map(|at| at.as_millis()))
        .collect();
    assert_eq!(
        admitted,
        vec![Some(0), Some(1_000), Some(1_000)],
        "b and c waited out a's Retry-After and went together"
    );
    let tk = legacy
        .platforms
        .iter()
        .find(|p| p.id == besluitbron_sim::ids::platform("tk").unwrap())
        .unwrap();
    assert_eq!(tk.upstream, 3, "the 429s end their calls: nothing asked again");
}

/// Found checking the soak's recording: a caller that left while its flight waited out a
/// retry's backoff (its first attempt answered 5xx) withdrew the flight at the server, but
/// the replay let callers leave only while queued, and sent the retry.
#[test]
fn regression_a_recorded_caller_leaving_during_a_backoff_withdraws_the_retry() {
    let text = r#"{"at_ms":1780000000000,"session":"s-aaaaaaaaaaaa","platform":"bwb","cost":1,"op":"search","key":"00000000000000d4","served":"left","left_after_ms":200,"seq":0,"attempts":[{"at_ms":1780000000000,"latency_ms":1,"outcome":"retryable"}]}
"#;
    let workload = parse_trace(text, "backoff").expect("a recorded trace");
    let fair = replay(&workload, PolicyKind::Fair);
    let at: Vec<u64> = fair.admissions.iter().map(|a| a.at_ms).collect();
    assert_eq!(
        at,
        vec![0],
        "the first attempt only: the retry's backoff outlasts the caller"
    );
    assert_eq!(fair.calls[0].state, besluitbron_sim::CallState::Cancelled);
    let matched = besluitbron_sim::fidelity::check(&workload, &fair, 0).expect("as recorded");
    assert_eq!(matched[0].admissions, 1);
}

/// A recorded line of a fetched search at `platform`, arriving at `at` ms with request
/// number `seq`, its one attempt going at once and answered in 5 ms.
fn fetched_line(at: u64, seq: u64, platform: &str) -> String {
    format!(
        "{{\"at_ms\":{},\"session\":\"s-aaaaaaaaaaaa\",\"platform\":\"{platform}\",\"cost\":1,\"op\":\"search\",\
         \"key\":\"{:016x}\",\"served\":\"fetched\",\"seq\":{seq},\"attempts\":[{{\"at_ms\":{},\
         \"latency_ms\":5,\"outcome\":\"ok\"}}]}}\n",
        1_780_000_000_000 + at,
        at,
        1_780_000_000_000 + at
    )
}

/// Request numbers say where a recording stops speaking for the server: a number missing
/// in a process (a call open at a kill), the last request of a process that was killed;
/// and where the server restarted (the numbers begin again), where each platform's next
/// stretch begins.
#[test]
fn blind_spots_come_from_missing_request_numbers_and_restarts_split_the_recording() {
    // obv: 0, 1, 3 (2 missing) in the first process; bwb: 0..=19 complete, then a restart.
    let mut text = String::new();
    for (at, seq) in [(0, 0), (1_000, 1), (3_000, 3)] {
        text += &fetched_line(at, seq, "obv");
    }
    for seq in 0..20 {
        text += &fetched_line(100 + seq * 200, seq, "bwb");
    }
    for seq in 0..3 {
        text += &fetched_line(10_000 + seq * 100, seq, "bwb");
    }
    let workload = parse_trace(&text, "blind").expect("a recorded trace");
    let recorded = workload.recorded.as_ref().expect("recorded");
    assert_eq!(recorded.restarts, [10_000], "the new process's first request");
    let segments = |p: &str| &recorded.segments[&besluitbron_sim::ids::platform(p).unwrap()];
    let stretches = |p: &str| segments(p).iter().map(|s| (s.from_ms, s.until_ms)).collect::<Vec<_>>();
    assert_eq!(
        stretches("obv"),
        [(0, Some(10_000)), (10_000, None)],
        "every platform restarts"
    );
    assert_eq!(stretches("bwb"), stretches("obv"));
    let obv = segments("obv")[0].blind.as_ref().expect("a missing number");
    assert_eq!(obv.at_ms, 1_000, "from the arrival of request 1: {obv:?}");
    assert!(obv.why.contains("request 2 of obv"), "{}", obv.why);
    let bwb = segments("bwb")[0].blind.as_ref().expect("killed");
    assert_eq!(bwb.at_ms, 3_900, "from the first process's last request: {bwb:?}");
    assert!(segments("bwb")[1].blind.is_none(), "the last process is complete");
    // A complete recording of one process has none, also when its oldest files were
    // rotated away (the numbers start in the middle).
    for first in [0, 5_000] {
        let whole: String = (first..first + 5)
            .map(|seq| fetched_line(seq * 100, seq, "obv"))
            .collect();
        let workload = parse_trace(&whole, "whole").expect("a recorded trace");
        let recorded = workload.recorded.as_ref().expect("recorded");
        assert!(recorded.restarts.is_empty(), "from {first}");
        assert!(
            recorded.segments.values().flatten().all(|s| s.blind.is_none()),
            "from {first}"
        );
    }
}

/// Across a restart the replay does what the server did: the new process's paths start
/// with full buckets and empty queues (the old one's bucket is gone), so a burst the new
/// process let go at once is let go at once in the replay too, and the whole recording is
/// compared. The platform's own bucket goes on: what the recording says it accepted is
/// accepted, also where the model's bucket would have refused.
#[test]
fn a_replay_restarts_where_the_server_did_and_compares_both_processes() {
    // bwb keeps 29 of its 30 per 30 s (the margin): 29 at once, then 29 at once again in
    // the new process ten seconds later.
    let mut text = String::new();
    for seq in 0..29 {
        text += &fetched_line(seq, seq, "bwb");
    }
    for seq in 0..29 {
        text += &fetched_line(10_000 + seq, seq, "bwb");
    }
    let workload = parse_trace(&text, "restart").expect("a recorded trace");
    let fair = replay(&workload, PolicyKind::Fair);
    let matched = besluitbron_sim::fidelity::check(&workload, &fair, 0).unwrap_or_else(|d| panic!("{d}"));
    assert_eq!(matched.len(), 1);
    assert_eq!(matched[0].admissions, 58, "{}", matched[0]);
    assert!(matched[0].whole(), "{}", matched[0]);
    assert!(matched[0].to_string().ends_with("compared over the whole recording"));
    let bwb = &fair.services[0];
    assert_eq!(bwb.id.as_str(), "koop-zoekservice");
    assert_eq!(bwb.counters.over_limit, 0);
    assert!(
        bwb.counters.beyond_model > 0,
        "the platform had less left than the new bucket"
    );
    // Without the restart the old bucket would have let ten go and the rest a second apart.
    let mut no_restart = workload.clone();
    no_restart.recorded.as_mut().expect("recorded").restarts.clear();
    let fair = replay(&no_restart, PolicyKind::Fair);
    assert!(besluitbron_sim::fidelity::check(&no_restart, &fair, 0).is_err());
}

/// The soak's recording kept with the crate (`sim/traces/soak.jsonl`): replayed with its
/// latencies and answers, every limited service admits as the server did — the
/// Basiswettenbestand's and the local regulations' searches in one budget at KOOP's
/// zoekservice, their files in one at KOOP's repository — within the soak's tolerance
/// (`FIDELITY_TOLERANCE_MS` in `tests/soak/soak.py`), in both of its processes (the kill
/// in the soak's middle), each up to where the recording stops speaking for the server.
#[test]
fn the_soaks_recording_replays_as_the_server_ran_it() {
    let mut workload = load_trace(&besluitbron_sim::soak_trace_path()).expect("the soak's recording");
    // The soak's server tries a platform for 4 s (`ATTEMPT_TIMEOUT_MS`): it retries a
    // flight within 12 s of its first attempt, and so does the replay.
    workload.recorded.as_mut().expect("recorded").timeout = std::time::Duration::from_secs(4);
    let fair = replay(&workload, PolicyKind::Fair);
    let matched = besluitbron_sim::fidelity::check(&workload, &fair, 250).unwrap_or_else(|d| panic!("{d}"));
    let services: Vec<&str> = matched.iter().map(|m| m.label.as_str()).collect();
    assert_eq!(
        services,
        [
            "obv",
            "koop-sru (ob)",
            "rechtspraak",
            "koop-zoekservice (bwb, cvdr)",
            "koop-publications (ob)",
            "koop-repository (bwb, cvdr)"
        ]
    );
    // Both processes are compared (the kill at 42 s of 152 s): each service on more
    // admissions than its first process holds (obv 99, KOOP's SRU service 71, rechtspraak
    // 98, the zoekservice 66, the publications 15, the repository 12), and rechtspraak and
    // both file services over the whole recording.
    let compared: Vec<usize> = matched.iter().map(|m| m.admissions).collect();
    for (m, first_process) in matched.iter().zip([99, 71, 98, 66, 15, 12]) {
        assert!(m.admissions > first_process, "{m}");
    }
    for whole in [2, 4, 5] {
        assert!(matched[whole].whole(), "{}", matched[whole]);
    }
    assert!(compared.iter().sum::<usize>() >= 760, "{compared:?}");
}

/// `replay --replicas 3` on the soak's recording: per limited service the calls that
/// reached it (of every platform that calls it) behind one replica and behind three, every
/// call answered once, the followers forwarding to the owner, and the service never given
/// more than its limit.
#[test]
fn the_soaks_recording_behind_three_replicas_against_one() {
    let workload = load_trace(&besluitbron_sim::soak_trace_path()).expect("the soak's recording");
    let results = besluitbron_sim::replicas::what_if(&workload, 3, 1).unwrap_or_else(|e| panic!("{e}"));
    let services: Vec<&str> = results.iter().map(|r| r.label.as_str()).collect();
    assert_eq!(
        services,
        [
            "obv",
            "koop-sru (ob)",
            "rechtspraak",
            "koop-zoekservice (bwb, cvdr)",
            "koop-publications (ob)",
            "koop-repository (bwb, cvdr)"
        ]
    );
    let services = besluitbron_sim::scenario::RunServices::of(&workload).expect("the recording's services");
    for r in &results {
        let replicas: Vec<usize> = r.runs.iter().map(|run| run.scenario.replicas).collect();
        assert_eq!(replicas, [1, 3], "{r}");
        let s = services.index_of(r.service).expect("a service of the run");
        let reaching = workload
            .open_calls
            .iter()
            .filter(|c| {
                let p = workload.platforms.iter().position(|p| p.id == c.platform).unwrap();
                services.service_of(p, c.op.as_deref()) == s
            })
            .count();
        assert_eq!(r.calls, reaching, "{r}");
        assert!(r.calls > 50, "{r}");
        for run in &r.runs {
            assert_eq!(run.calls as usize, r.calls, "{r}");
            assert_eq!(run.ends.values().sum::<u64>(), run.calls, "every call ended once: {r}");
            assert!(run.max_units_in_window <= r.limit.capacity, "{r}");
            assert_eq!(run.over_limit, 0, "{r}");
            // The service's own path: its platforms' keys, one budget.
            assert!(run.admissions.iter().all(|a| a.line.service == r.service), "{r}");
        }
        assert_eq!(r.runs[0].forwarded, 0, "one replica forwards nothing: {r}");
        // One owner keeps one budget: the same questions go upstream, the waits alike.
        assert_eq!(r.runs[0].upstream, r.runs[1].upstream, "{r}");
        // The p95 of the waits; where few questions go upstream (the regulations' files:
        // 17), the p95 falls among the start-up's few waits, so the longest answer is
        // compared instead.
        let (three, one) = if r.runs[0].upstream >= 30 {
            (r.runs[1].answer_time_ms(95), r.runs[0].answer_time_ms(95))
        } else {
            (r.runs[1].latencies.max_ms(), r.runs[0].latencies.max_ms())
        };
        let ratio = three as f64 / one as f64;
        assert!((0.9..=1.1).contains(&ratio), "three against one {ratio:.2}: {r}");
        assert!(
            r.runs[1].forwarded > 0,
            "two of three replicas forward to the owner: {r}"
        );
    }
    // The regulations' searches: both platforms behind one lease.
    let zoek = &results[3].runs[1];
    let platforms: std::collections::BTreeSet<&str> =
        zoek.admissions.iter().map(|a| a.line.platform.as_str()).collect();
    assert_eq!(platforms.into_iter().collect::<Vec<_>>(), ["bwb", "cvdr"]);
}

/// Identical requests of two sessions coalesce behind several replicas too: one call
/// upstream for the two.
#[test]
fn identical_requests_coalesce_behind_replicas() {
    let workload = parse_trace(RECORDED, "recorded.jsonl").expect("trace");
    let results = besluitbron_sim::replicas::what_if(&workload, 2, 1).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(results.len(), 1);
    for run in &results[0].runs {
        assert_eq!(run.calls, 2);
        assert_eq!(run.upstream_keys, 1, "{}", results[0]);
    }
}
