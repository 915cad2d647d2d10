//! The recorder's tests: files, hashes, and the lines of calls and flights.

use besluitbron_core::cache::DataClass;

use super::*;

fn config(dir: &Path, max_file_bytes: u64, max_files: u32) -> RecordingConfig {
    RecordingConfig {
        enabled: true,
        dir: dir.to_path_buf(),
        max_file_bytes,
        max_files,
        salt: "fixed".into(),
        ..RecordingConfig::default()
    }
}

fn line(r: &Recorder, i: u64) -> TraceLine {
    let key = CacheKey::new(crate::platforms::obv::PLATFORM, DataClass::Search, "search")
        .param("query", format!("stikstof {i}"));
    let mut l = r.line(i, Some(i), &SessionKey::client("192.0.2.7"), &key, Units::ONE, false);
    l.served = Some(CallEnd::Fetched);
    l
}

/// Every line in the trace files under `dir`, oldest file first.
fn written(dir: &Path) -> Vec<TraceLine> {
    trace_files(dir)
        .iter()
        .flat_map(|f| {
            std::fs::read_to_string(f)
                .expect("read")
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .map(|l| serde_json::from_str(&l).expect("a trace line"))
        .collect()
}

/// The lines under `dir` that end a request (not the open ones).
fn ended(dir: &Path) -> Vec<TraceLine> {
    written(dir).into_iter().filter(|l| !l.open).collect()
}

#[test]
fn files_rotate_at_the_cap_and_the_oldest_go() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let r = Recorder::start(&config(dir.path(), 4096, 3), dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    for i in 0..400 {
        r.write(&line(&r, i));
        if i % 50 == 0 {
            r.sync();
        }
    }
    r.sync();
    let files = trace_files(dir.path());
    assert_eq!(files.len(), 3, "{files:?}");
    let mut kept = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("read");
        assert!(text.len() <= 4096, "{} bytes", text.len());
        for l in text.lines() {
            let parsed: TraceLine = serde_json::from_str(l).expect("a trace line");
            assert!(!l.contains("stikstof") && !l.contains("192.0.2."), "hashed: {l}");
            assert_eq!(parsed.session, r.session(&SessionKey::client("192.0.2.7")));
            kept += 1;
        }
    }
    // The newest lines are kept; the oldest went with their files.
    let last = std::fs::read_to_string(files.last().unwrap()).expect("read");
    assert!(last.lines().last().unwrap().contains("\"at_ms\":399"));
    assert!(kept < 400 && kept > 60);
    assert_eq!(metrics.trace_lines.get(), 400);
    assert_eq!(metrics.trace_dropped.get(), 0);
}

#[test]
fn a_call_that_left_says_how_long_it_waited() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let r = Recorder::start(&config(dir.path(), 1 << 20, 2), dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    let mut notes = Notes::new(r.clone(), vec![crate::platforms::obv::PLATFORM]);
    let arrived = Instant::from_millis(10_000);
    for (waiter, i) in [(WaiterId(1), 1), (WaiterId(2), 2)] {
        let mut l = line(&r, i);
        l.served = None;
        notes.waiting(waiter, l, FlightId(7), arrived);
    }
    notes.left(WaiterId(1), Instant::from_millis(12_345));
    notes.ended(WaiterId(2), CallEnd::Fetched);
    r.sync();
    // The flight's first request's open line at its arrival, then the two ends.
    let lines = written(dir.path());
    assert_eq!(lines.len(), 3);
    assert!(lines[0].open && lines[0].attempts.is_empty(), "{:?}", lines[0]);
    let lines = &lines[1..];
    assert_eq!(
        (lines[0].served, lines[0].left_after_ms),
        (Some(CallEnd::Left), Some(2_345))
    );
    assert_eq!(
        (lines[1].served, lines[1].left_after_ms),
        (Some(CallEnd::Fetched), None)
    );
}

/// Found replaying the soak's recording: a flight at the platform whose only caller
/// left was written without its attempts, so the trace said the server admitted
/// nothing the replay admitted.
#[test]
fn a_flight_whose_callers_left_keeps_its_attempts() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let r = Recorder::start(&config(dir.path(), 1 << 20, 2), dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    let mut notes = Notes::new(r.clone(), vec![crate::platforms::obv::PLATFORM]);
    let mut l = line(&r, 1);
    l.served = None;
    notes.waiting(WaiterId(1), l, FlightId(9), Instant::from_millis(1_000));
    let attempt = Attempt {
        flight: FlightId(9),
        number: 1,
    };
    notes.sent(attempt, 1_000);
    notes.left(WaiterId(1), Instant::from_millis(1_200));
    r.sync();
    assert!(ended(dir.path()).is_empty(), "only the open line of the attempt out");
    let answer: Outcome<(), ()> = Outcome::Success {
        payload: (),
        feedback: Default::default(),
    };
    notes.outcome(attempt, 1_900, &answer);
    r.sync();
    let lines = ended(dir.path());
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0].served, Some(CallEnd::Left));
    assert_eq!(lines[0].left_after_ms, Some(200));
    assert_eq!(lines[0].attempts.len(), 1);
    assert_eq!(
        (lines[0].attempts[0].latency_ms, lines[0].attempts[0].outcome),
        (900, AttemptOutcome::Ok)
    );
    assert!(notes.flights.is_empty() && notes.calls.is_empty(), "nothing kept");
}

/// Found replaying the soak's recording: a flight whose attempt failed with a 5xx and
/// whose only caller left during the retry's backoff was written without that
/// attempt, so the trace said the server admitted nothing where it had.
#[test]
fn regression_a_caller_leaving_during_a_backoff_keeps_the_failed_attempt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let r = Recorder::start(&config(dir.path(), 1 << 20, 2), dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    let mut notes = Notes::new(r.clone(), vec![crate::platforms::rechtspraak::PLATFORM]);
    let mut l = line(&r, 1);
    l.platform = "rechtspraak".to_owned();
    l.served = None;
    notes.waiting(WaiterId(1), l, FlightId(4), Instant::from_millis(1_000));
    let attempt = Attempt {
        flight: FlightId(4),
        number: 1,
    };
    notes.sent(attempt, 1_000);
    let failed: Outcome<(), ()> = Outcome::Retryable {
        error: (),
        retry_after: None,
    };
    notes.outcome(attempt, 1_001, &failed);
    notes.left(WaiterId(1), Instant::from_millis(1_091));
    r.sync();
    let lines = ended(dir.path());
    assert_eq!(lines.len(), 1);
    assert_eq!(
        (lines[0].served, lines[0].left_after_ms),
        (Some(CallEnd::Left), Some(91))
    );
    assert_eq!(lines[0].attempts.len(), 1, "the attempt that went: {:?}", lines[0]);
    assert_eq!(lines[0].attempts[0].outcome, AttemptOutcome::Retryable);
    assert!(notes.flights.is_empty() && notes.calls.is_empty(), "nothing kept");
}

#[test]
fn a_failing_disk_drops_lines_and_counts_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let trace = dir.path().join("trace");
    let metrics = Arc::new(Metrics::new());
    let r = Recorder::start(&config(&trace, 4096, 3), dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    // The folder disappears and a file stands where it was: no file can be opened.
    std::fs::remove_dir_all(&trace).expect("remove");
    std::fs::write(&trace, b"not a folder").expect("a file in the way");
    for i in 0..10 {
        r.write(&line(&r, i));
    }
    r.sync();
    assert_eq!(metrics.trace_dropped.get(), 10);
    assert_eq!(metrics.trace_lines.get(), 0);
}

#[test]
fn with_a_queue_of_one_every_line_is_written_or_counted() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let mut c = config(dir.path(), 1 << 20, 2);
    c.queue_lines = 1;
    let r = Recorder::start(&c, dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    // 5,000 lines as fast as they come at a queue of one: a write never waits for the
    // writer (`try_send`), and each line is either written or counted as dropped.
    for i in 0..5_000 {
        r.write(&line(&r, i));
    }
    r.sync();
    assert_eq!(metrics.trace_lines.get() + metrics.trace_dropped.get(), 5_000);
    let written: usize = trace_files(dir.path())
        .iter()
        .map(|f| std::fs::read_to_string(f).expect("read").lines().count())
        .sum();
    assert_eq!(
        written as u64,
        metrics.trace_lines.get(),
        "the count is what the files hold"
    );
}

#[test]
fn recording_off_starts_nothing_and_the_salt_decides_the_hashes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let off = RecordingConfig::default();
    assert!(
        Recorder::start(&off, dir.path(), Arc::clone(&metrics))
            .expect("start")
            .is_none()
    );
    assert!(trace_files(&dir.path().join("trace")).is_empty());
    let a = Recorder::start(&config(dir.path(), 4096, 1), dir.path(), Arc::clone(&metrics))
        .unwrap()
        .unwrap();
    let b = Recorder::start(&config(dir.path(), 4096, 1), dir.path(), Arc::clone(&metrics))
        .unwrap()
        .unwrap();
    let mut other = config(dir.path(), 4096, 1);
    other.salt = "another".into();
    let c = Recorder::start(&other, dir.path(), Arc::clone(&metrics))
        .unwrap()
        .unwrap();
    let s = SessionKey::client("session-1");
    assert_eq!(a.session(&s), b.session(&s));
    assert_ne!(a.session(&s), c.session(&s));
    assert_eq!(a.session(&SessionKey::System), "system");
    let mut clear = config(dir.path(), 4096, 1);
    clear.sessions = true;
    clear.queries = true;
    let d = Recorder::start(&clear, dir.path(), metrics).unwrap().unwrap();
    assert_eq!(d.session(&s), "session-1");
    assert!(line(&d, 1).query.is_some_and(|q| q.contains("stikstof 1")));
}

/// Found re-recording the soak: two callers waited for a flight refused with 429
/// twice; the first (already asked once more) failed, the second waited once more and
/// the third attempt answered it. The failed caller's line carried the first two
/// attempts and the third was never written, so the trace said the server admitted one
/// call fewer than it had.
#[test]
fn regression_a_flight_that_goes_on_after_a_caller_failed_keeps_every_attempt() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let r = Recorder::start(&config(dir.path(), 1 << 20, 2), dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    let mut notes = Notes::new(r.clone(), vec![crate::platforms::obv::PLATFORM]);
    for (waiter, i) in [(WaiterId(1), 1), (WaiterId(2), 2)] {
        let mut l = line(&r, i);
        l.served = None;
        notes.waiting(waiter, l, FlightId(3), Instant::from_millis(1_000));
    }
    let refused: Outcome<(), ()> = Outcome::RateLimited {
        error: (),
        retry_after: std::time::Duration::from_secs(1),
    };
    for (number, at) in [(1, 1_000), (2, 2_000)] {
        let attempt = Attempt {
            flight: FlightId(3),
            number,
        };
        notes.sent(attempt, at);
        notes.outcome(attempt, at + 5, &refused);
    }
    notes.ended(WaiterId(1), CallEnd::Failed);
    let third = Attempt {
        flight: FlightId(3),
        number: 3,
    };
    notes.sent(third, 3_000);
    let answer: Outcome<(), ()> = Outcome::Success {
        payload: (),
        feedback: Default::default(),
    };
    notes.outcome(third, 3_050, &answer);
    notes.ended(WaiterId(2), CallEnd::Coalesced);
    r.sync();
    let lines = ended(dir.path());
    assert_eq!(lines.len(), 2);
    assert_eq!((lines[0].served, lines[0].attempts.len()), (Some(CallEnd::Failed), 0));
    let at: Vec<(u64, AttemptOutcome)> = lines[1].attempts.iter().map(|a| (a.at_ms, a.outcome)).collect();
    assert_eq!(
        at,
        [
            (1_000, AttemptOutcome::RateLimited),
            (2_000, AttemptOutcome::RateLimited),
            (3_000, AttemptOutcome::Ok)
        ],
        "every attempt, on the last caller's line"
    );
    assert!(notes.flights.is_empty() && notes.calls.is_empty(), "nothing kept");
}

/// A process killed with a flight out leaves what it admitted: each attempt that went
/// (and each refusal after which the flight went on) writes an open line of the request
/// still waiting, the flight's attempts so far, the one out without a `step`. The
/// request's own line, when it ends, carries the same attempts.
#[test]
fn a_flight_out_writes_open_lines_that_its_callers_end_supersedes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let r = Recorder::start(&config(dir.path(), 1 << 20, 2), dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    let mut notes = Notes::new(r.clone(), vec![crate::platforms::obv::PLATFORM]);
    for (waiter, i) in [(WaiterId(1), 1), (WaiterId(2), 2)] {
        let mut l = line(&r, i);
        l.served = None;
        notes.waiting(waiter, l, FlightId(5), Instant::from_millis(1_000));
    }
    let first = Attempt {
        flight: FlightId(5),
        number: 1,
    };
    notes.sent(first, 1_000);
    let refused: Outcome<(), ()> = Outcome::RateLimited {
        error: (),
        retry_after: std::time::Duration::from_secs(1),
    };
    notes.outcome(first, 1_004, &refused);
    // The first caller may not wait once more: the second is the flight's now.
    notes.ended(WaiterId(1), CallEnd::Failed);
    let second = Attempt {
        flight: FlightId(5),
        number: 2,
    };
    notes.sent(second, 2_004);
    r.sync();
    let lines = written(dir.path());
    // Open, number, end, attempts.
    type Shape = (bool, Option<u64>, Option<CallEnd>, usize);
    let shape: Vec<Shape> = lines
        .iter()
        .map(|l| (l.open, l.seq, l.served, l.attempts.len()))
        .collect();
    assert_eq!(
        shape,
        [
            (true, Some(1), None, 0),
            (true, Some(1), None, 1),
            (true, Some(1), None, 1),
            (false, Some(1), Some(CallEnd::Failed), 0),
            (true, Some(2), None, 2)
        ],
        "{lines:?}"
    );
    assert_eq!(lines[1].attempts[0].step, None, "out: no outcome yet");
    assert_eq!(lines[2].attempts[0].outcome, AttemptOutcome::RateLimited);
    assert!(lines[2].attempts[0].step.is_some());
    assert_eq!(lines[4].attempts[1].step, None);
    // Answered: the request's own line carries both attempts.
    let answer: Outcome<(), ()> = Outcome::Success {
        payload: (),
        feedback: Default::default(),
    };
    notes.outcome(second, 2_100, &answer);
    notes.ended(WaiterId(2), CallEnd::Fetched);
    r.sync();
    let lines = written(dir.path());
    assert_eq!(lines.len(), 6, "no open line for an answer: {lines:?}");
    assert_eq!((lines[5].open, lines[5].attempts.len()), (false, 2));
    assert!(notes.flights.is_empty() && notes.calls.is_empty(), "nothing kept");
}

/// The task's stop with requests waiting: each is written cut, with how long it waited;
/// the flight's attempt still out is taken to have ended at the stop.
#[test]
fn a_stop_writes_the_requests_it_cut() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let r = Recorder::start(&config(dir.path(), 1 << 20, 2), dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    let mut notes = Notes::new(r.clone(), vec![crate::platforms::obv::PLATFORM]);
    for (waiter, flight, i) in [(WaiterId(1), FlightId(1), 1), (WaiterId(2), FlightId(2), 2)] {
        let mut l = line(&r, i);
        l.served = None;
        l.step = Some(i);
        notes.waiting(waiter, l, flight, Instant::from_millis(1_000));
    }
    let attempt = Attempt {
        flight: FlightId(1),
        number: 1,
    };
    notes.sent(attempt, 1_500);
    notes.stopped(Instant::from_millis(3_000), 3_000);
    r.sync();
    let ended: Vec<TraceLine> = written(dir.path()).into_iter().filter(|l| !l.open).collect();
    // Number, end, waited, attempts.
    type Shape = (Option<u64>, Option<CallEnd>, Option<u64>, usize);
    let shape: Vec<Shape> = ended
        .iter()
        .map(|l| (l.seq, l.served, l.left_after_ms, l.attempts.len()))
        .collect();
    assert_eq!(
        shape,
        [
            (Some(1), Some(CallEnd::Cut), Some(2_000), 1),
            (Some(2), Some(CallEnd::Cut), Some(2_000), 0)
        ]
    );
    assert_eq!(ended[0].attempts[0].latency_ms, 1_500, "out until the stop");
    assert!(notes.flights.is_empty() && notes.calls.is_empty(), "nothing kept");
}

/// Lines dropped at a full queue are said on the next line written, so a replay knows the
/// recording lacks requests.
#[test]
fn the_line_after_drops_says_how_many() {
    let dir = tempfile::tempdir().expect("temp dir");
    let metrics = Arc::new(Metrics::new());
    let mut c = config(dir.path(), 1 << 20, 2);
    c.queue_lines = 1;
    let r = Recorder::start(&c, dir.path(), Arc::clone(&metrics))
        .expect("start")
        .expect("on");
    for i in 0..2_000 {
        r.write(&line(&r, i));
    }
    r.sync();
    // The queue has room again: this line tells of whatever went before it.
    r.write(&line(&r, 2_000));
    r.sync();
    let lines = written(dir.path());
    let told: u64 = lines.iter().filter_map(|l| l.dropped_before).sum();
    assert_eq!(told, metrics.trace_dropped.get(), "every drop is told");
    assert_eq!(lines.len() as u64 + told, 2_001);
}
