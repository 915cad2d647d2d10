//! Recording the platform calls as a trace the simulator replays (`Recording` setting).
//!
//! The platform's task notes, where it applies its path's effects, each request's arrival
//! and how it ended, and each flight's attempts: when each went, how long the platform
//! took, what it answered. One line per call ([`TraceLine`], the simulator's own format)
//! is written when the call ends; the line of a flight's last caller carries the
//! flight's attempts. A fresh answer from the buffer's memory layer, served in the
//! caller's task, is written there.
//!
//! Invariants:
//! - recording never slows or fails a call: a line goes to a bounded queue with
//!   `try_send`; a full queue, or a write the disk refuses, drops the line and counts it
//!   (`besluitbron_trace_dropped_lines_total`);
//! - the files are bounded: each closes at `MaxFileBytes`, and at most `MaxFiles` are
//!   kept (the oldest goes);
//! - no query text and no session name is written unless the operator turned that on:
//!   `key` and `session` are salted SHA-256 hashes (equal requests stay equal within
//!   one salt), the system session stays `system`;
//! - the notes are bounded by the requests and flights in the path: a call's note goes
//!   when it ends, a flight's when its last waiter ends.
//!
//! What this module does not do: decide anything about a call, or read files back.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc::{Receiver, SyncSender, TrySendError};

use besluitbron_core::cache::CacheKey;
use besluitbron_core::dedup::{FlightId, WaiterId};
use besluitbron_core::path::{Attempt, Outcome};
use besluitbron_core::record::{AttemptOutcome, CallEnd, RecordedAttempt, RecordedRemaining, TraceLine};
use besluitbron_core::{Instant, PlatformId, SessionKey, Units};
use sha2::{Digest, Sha256};

use crate::config::RecordingConfig;
use crate::metrics::Metrics;

/// The prefix and suffix of a trace file's name: `trace-<unix ms>-<n>.jsonl`.
const FILE_PREFIX: &str = "trace-";
const FILE_SUFFIX: &str = ".jsonl";

/// Writes trace lines off the call path. Cheap to clone.
#[derive(Clone)]
pub struct Recorder {
    inner: Arc<Inner>,
}

/// What the writer is given: a line, or a request to say when everything before it is
/// written and flushed.
enum Msg {
    Line(String),
    Synced(std::sync::mpsc::Sender<()>),
}

struct Inner {
    lines: SyncSender<Msg>,
    salt: Vec<u8>,
    queries: bool,
    sessions: bool,
    dir: PathBuf,
    metrics: Arc<Metrics>,
}

impl std::fmt::Debug for Recorder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Recorder({})", self.inner.dir.display())
    }
}

impl Recorder {
    /// Starts the writer (a thread of its own) for `config` in `data_dir`; `None` when
    /// recording is off. The writer stops when the last clone is dropped, after writing
    /// what it was given.
    pub fn start(
        config: &RecordingConfig,
        data_dir: &Path,
        metrics: Arc<Metrics>,
    ) -> std::io::Result<Option<Recorder>> {
        if !config.enabled {
            return Ok(None);
        }
        let dir = config.dir_in(data_dir);
        std::fs::create_dir_all(&dir)?;
        let salt = if config.salt.is_empty() {
            // std's random hash keys: 128 bits of this process's own.
            let state = std::hash::RandomState::new();
            let a = std::hash::BuildHasher::hash_one(&state, 1u8);
            let b = std::hash::BuildHasher::hash_one(&state, 2u8);
            [a.to_le_bytes(), b.to_le_bytes()].concat()
        } else {
            config.salt.as_bytes().to_vec()
        };
        let (lines, rx) = std::sync::mpsc::sync_channel(config.queue_lines);
        let writer = Writer {
            dir: dir.clone(),
            max_file_bytes: config.max_file_bytes,
            max_files: config.max_files as usize,
            file: None,
            written: 0,
            serial: 0,
            metrics: Arc::clone(&metrics),
        };
        std::thread::Builder::new()
            .name("besluitbron-trace".into())
            .spawn(move || writer.run(&rx))?;
        Ok(Some(Recorder {
            inner: Arc::new(Inner {
                lines,
                salt,
                queries: config.queries,
                sessions: config.sessions,
                dir,
                metrics,
            }),
        }))
    }

    /// Blocks until every line queued before this call is written and flushed (for
    /// tests and tools, never on a call's path: it waits for room in the queue).
    pub fn sync(&self) {
        let (tx, rx) = std::sync::mpsc::channel();
        if self.inner.lines.send(Msg::Synced(tx)).is_ok() {
            let _ = rx.recv();
        }
    }

    /// The folder the files go to.
    pub fn dir(&self) -> &Path {
        &self.inner.dir
    }

    fn hash(&self, domain: u8, bytes: &[u8]) -> String {
        let mut h = Sha256::new();
        h.update(&self.inner.salt);
        h.update([domain]);
        h.update(bytes);
        let digest = h.finalize();
        digest[..8].iter().map(|b| format!("{b:02x}")).collect()
    }

    /// How a session is written: `system`, its name (when the operator asked), or a
    /// salted hash.
    pub fn session(&self, session: &SessionKey) -> String {
        match session {
            SessionKey::System => "system".to_owned(),
            SessionKey::Client(name) if self.inner.sessions => name.to_string(),
            SessionKey::Client(name) => format!("s-{}", &self.hash(1, name.as_bytes())[..12]),
        }
    }

    /// A call as a line, before it ends: arrival, session, platform, lane/operation,
    /// cost, the key's hash (and its text when the operator asked).
    pub fn line(
        &self,
        at_ms: u64,
        seq: Option<u64>,
        session: &SessionKey,
        key: &CacheKey,
        cost: Units,
        text: bool,
    ) -> TraceLine {
        let op = if text { "text" } else { key.operation() };
        TraceLine {
            at_ms,
            session: self.session(session),
            platform: key.platform().as_str().to_owned(),
            cost,
            op: Some(op.to_owned()),
            key: Some(self.hash(0, &key.encode())),
            then: None,
            served: None,
            left_after_ms: None,
            seq,
            step: None,
            attempts: Vec::new(),
            query: self.inner.queries.then(|| query_text(key)),
        }
    }

    /// Queues `line` for the writer; drops it (counted) when the writer is behind.
    pub fn write(&self, line: &TraceLine) {
        let text = match serde_json::to_string(line) {
            Ok(text) => text,
            Err(_) => {
                self.inner.metrics.trace_dropped.inc();
                return;
            }
        };
        match self.inner.lines.try_send(Msg::Line(text)) {
            Ok(()) => {}
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                self.inner.metrics.trace_dropped.inc();
            }
        }
    }
}

/// What a key asks, in clear: its operation and parameters.
fn query_text(key: &CacheKey) -> String {
    let params: Vec<String> = key.params().iter().map(|(k, v)| format!("{k}={v}")).collect();
    format!("{} {}", key.operation(), params.join("&"))
}

/// The writer thread: appends lines, rotates at the size cap, keeps the newest files.
struct Writer {
    dir: PathBuf,
    max_file_bytes: u64,
    max_files: usize,
    file: Option<BufWriter<File>>,
    written: u64,
    serial: u64,
    metrics: Arc<Metrics>,
}

impl Writer {
    fn run(mut self, lines: &Receiver<Msg>) {
        // Write what arrives; flush whenever nothing more waits, so a reader sees each
        // line soon after its call ended.
        while let Ok(first) = lines.recv() {
            let mut synced = Vec::new();
            let mut next = Some(first);
            while let Some(msg) = next {
                match msg {
                    Msg::Line(line) => self.write(&line),
                    Msg::Synced(tx) => synced.push(tx),
                }
                next = lines.try_recv().ok();
            }
            self.flush();
            for tx in synced {
                let _ = tx.send(());
            }
        }
        self.flush();
    }

    fn write(&mut self, line: &str) {
        let len = line.len() as u64 + 1;
        if self.file.is_some() && self.written + len > self.max_file_bytes {
            self.flush();
            self.file = None;
        }
        if self.file.is_none() {
            match self.open() {
                Ok(file) => {
                    self.file = Some(file);
                    self.written = 0;
                    self.prune();
                }
                Err(error) => {
                    tracing::warn!(dir = %self.dir.display(), %error, "cannot open a trace file; lines are dropped");
                    self.metrics.trace_dropped.inc();
                    return;
                }
            }
        }
        let Some(file) = self.file.as_mut() else { return };
        match file.write_all(line.as_bytes()).and_then(|()| file.write_all(b"\n")) {
            Ok(()) => {
                self.written += len;
                self.metrics.trace_lines.inc();
            }
            Err(error) => {
                tracing::warn!(dir = %self.dir.display(), %error, "a trace line could not be written");
                self.metrics.trace_dropped.inc();
                // Begin a new file with the next line.
                self.file = None;
            }
        }
    }

    fn flush(&mut self) {
        if let Some(file) = self.file.as_mut()
            && file.flush().is_err()
        {
            self.file = None;
        }
    }

    fn open(&mut self) -> std::io::Result<BufWriter<File>> {
        self.serial += 1;
        let name = format!(
            "{FILE_PREFIX}{:013}-{:04}{FILE_SUFFIX}",
            crate::clock::wall_now().unix_millis(),
            self.serial
        );
        let file = OpenOptions::new().create(true).append(true).open(self.dir.join(name))?;
        Ok(BufWriter::new(file))
    }

    /// Deletes the oldest trace files beyond the cap (names sort by their start).
    fn prune(&self) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| {
                p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.starts_with(FILE_PREFIX) && n.ends_with(FILE_SUFFIX))
            })
            .collect();
        files.sort();
        let excess = files.len().saturating_sub(self.max_files);
        for old in &files[..excess] {
            let _ = std::fs::remove_file(old);
        }
    }
}

/// The command that replays the trace files in `dir` written in the last `within`
/// (by their modification time; the newest file always), or `None` when there are none.
pub fn replay_command(dir: &Path, within: std::time::Duration) -> Option<String> {
    let now = std::time::SystemTime::now();
    let files = trace_files(dir);
    let newest = files.last().cloned();
    let mut recent: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| {
            std::fs::metadata(f)
                .and_then(|m| m.modified())
                .is_ok_and(|m| now.duration_since(m).unwrap_or_default() <= within)
        })
        .collect();
    if recent.is_empty() {
        recent.extend(newest);
    }
    if recent.is_empty() {
        return None;
    }
    let names: Vec<String> = recent.iter().map(|f| shell_word(&f.display().to_string())).collect();
    Some(format!(
        "cat {} > last-hour.jsonl && besluitbron-sim replay last-hour.jsonl --policy both --report last-hour.html",
        names.join(" ")
    ))
}

/// `s` as one shell word.
fn shell_word(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+:=".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

/// The trace files in `dir`, oldest first.
pub fn trace_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(FILE_PREFIX) && n.ends_with(FILE_SUFFIX))
        })
        .collect();
    files.sort();
    files
}

/// What the platform's task notes while calls and flights are under way.
pub(super) struct Notes {
    recorder: Recorder,
    /// The budget group's platforms.
    platforms: Vec<PlatformId>,
    calls: HashMap<WaiterId, CallNote>,
    flights: HashMap<FlightId, FlightNote>,
    /// The requests and outcomes the task took so far, in this process (the next
    /// [`TraceLine::step`]).
    steps: u64,
}

struct CallNote {
    line: TraceLine,
    flight: FlightId,
    arrived: Instant,
}

#[derive(Default)]
struct FlightNote {
    /// Each attempt by its number.
    attempts: Vec<(u32, RecordedAttempt)>,
    waiters: usize,
    written: bool,
    /// Attempts sent whose outcome has not come back.
    open: usize,
    /// The line of the last waiter, which left while the flight was at the platform: it
    /// is written with the flight's attempts when their outcome comes, so the trace
    /// keeps what the platform was asked (a flight's attempts were lost with its callers).
    orphan: Option<TraceLine>,
}

impl Notes {
    pub(super) fn new(recorder: Recorder, platforms: Vec<PlatformId>) -> Notes {
        Notes {
            recorder,
            platforms,
            calls: HashMap::new(),
            flights: HashMap::new(),
            steps: 0,
        }
    }

    /// The place of what the task takes now (a request, an attempt's outcome) in the order
    /// it takes them: the group's path sees them in this order, and a replay takes the
    /// events of one millisecond in it.
    pub(super) fn step(&mut self) -> u64 {
        self.steps += 1;
        self.steps - 1
    }

    pub(super) fn recorder(&self) -> &Recorder {
        &self.recorder
    }

    /// A request ended on arrival (from the buffer, refused, not this replica's).
    pub(super) fn ended_at_once(&self, mut line: TraceLine, end: CallEnd) {
        line.served = Some(end);
        self.recorder.write(&line);
    }

    /// A request waits for `flight` from `now`.
    pub(super) fn waiting(&mut self, waiter: WaiterId, line: TraceLine, flight: FlightId, now: Instant) {
        self.flights.entry(flight).or_default().waiters += 1;
        self.calls.insert(
            waiter,
            CallNote {
                line,
                flight,
                arrived: now,
            },
        );
    }

    /// A waiting request's caller gave up at `now`: the line says how long it waited.
    pub(super) fn left(&mut self, waiter: WaiterId, now: Instant) {
        if let Some(note) = self.calls.get_mut(&waiter) {
            let waited = now.saturating_since(note.arrived).as_millis();
            note.line.left_after_ms = Some(waited.try_into().unwrap_or(u64::MAX));
        }
        self.ended(waiter, CallEnd::Left);
    }

    /// An attempt went at `wall_ms` (on the trace's clock).
    pub(super) fn sent(&mut self, attempt: Attempt, wall_ms: u64) {
        if let Some(f) = self.flights.get_mut(&attempt.flight) {
            f.open += 1;
            f.attempts.push((
                attempt.number,
                RecordedAttempt {
                    at_ms: wall_ms,
                    latency_ms: 0,
                    outcome: AttemptOutcome::Failed,
                    retry_after_ms: None,
                    remaining: None,
                    step: None,
                },
            ));
        }
    }

    /// An attempt's outcome was taken at `wall_ms`, the task's next step: the latency is
    /// counted between the two whole milliseconds (so that the attempt's `at_ms` plus its
    /// latency is the millisecond the outcome was taken in, as a replay schedules it).
    pub(super) fn outcome<P, E>(&mut self, attempt: Attempt, wall_ms: u64, outcome: &Outcome<P, E>) {
        let step = self.step();
        let Some(f) = self.flights.get_mut(&attempt.flight) else {
            return;
        };
        let Some((_, a)) = f.attempts.iter_mut().find(|(n, _)| *n == attempt.number) else {
            return;
        };
        a.latency_ms = wall_ms.saturating_sub(a.at_ms);
        a.step = Some(step);
        if let Outcome::Success { feedback, .. } = outcome {
            a.remaining = feedback.remaining.map(|units| RecordedRemaining {
                units,
                reset_ms: feedback.reset.map(|d| d.as_millis().try_into().unwrap_or(u64::MAX)),
            });
        }
        let (kind, retry_after) = match outcome {
            Outcome::Success { .. } => (AttemptOutcome::Ok, None),
            Outcome::RateLimited { retry_after, .. } => (AttemptOutcome::RateLimited, Some(*retry_after)),
            Outcome::Retryable { retry_after, .. } => (AttemptOutcome::Retryable, *retry_after),
            Outcome::Failed { .. } => (AttemptOutcome::Failed, None),
        };
        a.outcome = kind;
        a.retry_after_ms = retry_after.map(|d| d.as_millis().try_into().unwrap_or(u64::MAX));
        f.open = f.open.saturating_sub(1);
        if f.open == 0
            && f.waiters == 0
            && let Some(mut line) = f.orphan.take()
        {
            line.attempts = f.attempts.iter().map(|(_, a)| *a).collect();
            self.flights.remove(&attempt.flight);
            self.recorder.write(&line);
        }
    }

    /// A waiting request ended: answered or failed, gave up, or moved to another replica.
    /// The line of a flight's last caller carries its attempts: an earlier caller may end
    /// while the flight goes on (a 429 fails the callers that may not wait once more, and
    /// the others wait for its next attempt).
    pub(super) fn ended(&mut self, waiter: WaiterId, end: CallEnd) {
        let Some(CallNote { mut line, flight, .. }) = self.calls.remove(&waiter) else {
            return;
        };
        line.served = Some(end);
        if let Some(f) = self.flights.get_mut(&flight) {
            let last = f.waiters <= 1;
            let finished = !matches!(end, CallEnd::Left | CallEnd::Moved);
            // The flight's last caller leaving while no attempt is out (a retry's backoff
            // after a 5xx): the flight ends here, and so its attempts are written here.
            let none_out = f.open == 0;
            if last && (finished || none_out) && !f.written && !f.attempts.is_empty() {
                line.attempts = f.attempts.iter().map(|(_, a)| *a).collect();
                f.written = true;
            }
            f.waiters = f.waiters.saturating_sub(1);
            if f.waiters == 0 {
                if end == CallEnd::Left && !f.written && f.open > 0 {
                    // Out at the platform with nobody waiting: the line waits for the answer.
                    f.orphan = Some(line);
                    return;
                }
                self.flights.remove(&flight);
            }
        }
        debug_assert!(self.platforms.iter().any(|p| p.as_str() == line.platform));
        self.recorder.write(&line);
    }
}

#[cfg(test)]
mod tests {
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
        let lines = written(dir.path());
        assert_eq!(lines.len(), 2);
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
        assert!(
            trace_files(dir.path())
                .iter()
                .all(|f| std::fs::read_to_string(f).expect("read").is_empty())
        );
        let answer: Outcome<(), ()> = Outcome::Success {
            payload: (),
            feedback: Default::default(),
        };
        notes.outcome(attempt, 1_900, &answer);
        r.sync();
        let lines = written(dir.path());
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
        let lines = written(dir.path());
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
        let lines = written(dir.path());
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
}
