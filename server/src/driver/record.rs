//! Recording the platform calls as a trace the simulator replays (`Recording` setting).
//!
//! The platform's task notes, where it applies its path's effects, each request's arrival
//! and how it ended, and each flight's attempts: when each went, how long the platform
//! took, what it answered. One line per call ([`TraceLine`], the simulator's own format)
//! is written when the call ends; the line of a flight's last caller carries the
//! flight's attempts. A fresh answer from the buffer's memory layer, served in the
//! caller's task, is written there. While a request waits, each attempt of its flight that
//! goes, and each that comes back with the flight going on, writes an *open* line (the
//! request and the flight's attempts so far, [`TraceLine::open`]), so that a process
//! killed with requests open leaves what it admitted in the recording; the task's stop
//! writes the requests it cut (`served: cut`).
//!
//! Invariants:
//! - recording never slows or fails a call: a line goes to a bounded queue with
//!   `try_send`; a full queue, or a write the disk refuses, drops the line and counts it
//!   (`besluitbron_trace_dropped_lines_total`), and the next line written says how many
//!   went before it (`dropped_before`), so a replay knows the recording lacks requests;
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
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};

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
    /// Lines dropped since the last line queued (said on the next one).
    unwritten: AtomicU64,
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
                unwritten: AtomicU64::new(0),
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
            open: false,
            dropped_before: None,
            query: self.inner.queries.then(|| query_text(key)),
        }
    }

    /// Queues `line` for the writer; drops it (counted) when the writer is behind. A line
    /// queued after drops says how many went before it.
    pub fn write(&self, line: &TraceLine) {
        let before = self.inner.unwritten.swap(0, Ordering::Relaxed);
        let text = if before == 0 {
            serde_json::to_string(line)
        } else {
            let mut line = line.clone();
            line.dropped_before = Some(before);
            serde_json::to_string(&line)
        };
        let queued = text.ok().map(|text| self.inner.lines.try_send(Msg::Line(text)));
        if !matches!(queued, Some(Ok(()))) {
            self.dropped(before);
        }
    }

    /// This line, and the `before` it was to tell of, were dropped.
    fn dropped(&self, before: u64) {
        self.inner.metrics.trace_dropped.inc();
        self.inner.unwritten.fetch_add(before + 1, Ordering::Relaxed);
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
    /// The requests waiting for it, in the order they came.
    callers: Vec<WaiterId>,
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

    /// A request waits for `flight` from `now`. The first request of a flight writes an
    /// open line at once: one that waits its turn at the platform takes part in the fair
    /// queue's choices before anything of it is sent, and a process killed while it waits
    /// leaves it in the recording.
    pub(super) fn waiting(&mut self, waiter: WaiterId, line: TraceLine, flight: FlightId, now: Instant) {
        let f = self.flights.entry(flight).or_default();
        f.waiters += 1;
        f.callers.push(waiter);
        let first = f.callers.len() == 1 && f.attempts.is_empty();
        self.calls.insert(
            waiter,
            CallNote {
                line,
                flight,
                arrived: now,
            },
        );
        if first {
            self.write_open(flight);
        }
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
        self.write_open(attempt.flight);
    }

    /// An open line for `flight`: its first caller still waiting, with the flight's
    /// attempts so far (what the process admitted for it, should it be killed before the
    /// request ends).
    fn write_open(&self, flight: FlightId) {
        let Some(f) = self.flights.get(&flight) else { return };
        let Some(note) = f.callers.first().and_then(|w| self.calls.get(w)) else {
            return;
        };
        let mut line = note.line.clone();
        line.open = true;
        line.attempts = f.attempts.iter().map(|(_, a)| *a).collect();
        self.recorder.write(&line);
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
        // A retry may follow (at once, or behind a backoff or a Retry-After): what came
        // back is in the recording should the process be killed before the flight ends.
        let goes_on = matches!(kind, AttemptOutcome::RateLimited | AttemptOutcome::Retryable) && f.waiters > 0;
        if f.open == 0
            && f.waiters == 0
            && let Some(mut line) = f.orphan.take()
        {
            line.attempts = f.attempts.iter().map(|(_, a)| *a).collect();
            self.flights.remove(&attempt.flight);
            self.recorder.write(&line);
        }
        if goes_on {
            self.write_open(attempt.flight);
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
            f.callers.retain(|w| *w != waiter);
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

    /// The task stopped at `now` (`wall_ms` on the trace's clock) with requests waiting:
    /// each is written cut (`served: cut`), with how long it waited; a flight's attempts go
    /// on its last caller's line, one still out taken to have ended at the stop.
    pub(super) fn stopped(&mut self, now: Instant, wall_ms: u64) {
        let mut open: Vec<WaiterId> = self.calls.keys().copied().collect();
        open.sort_by_key(|w| self.calls.get(w).map(|n| n.line.step));
        for f in self.flights.values_mut() {
            for (_, a) in f.attempts.iter_mut().filter(|(_, a)| a.step.is_none()) {
                a.latency_ms = wall_ms.saturating_sub(a.at_ms);
            }
        }
        for waiter in open {
            if let Some(note) = self.calls.get_mut(&waiter) {
                let waited = now.saturating_since(note.arrived).as_millis();
                note.line.left_after_ms = Some(waited.try_into().unwrap_or(u64::MAX));
            }
            self.ended(waiter, CallEnd::Cut);
        }
        // Flights whose callers all left while an attempt was out.
        for (_, f) in std::mem::take(&mut self.flights) {
            if let Some(mut line) = f.orphan {
                line.attempts = f.attempts.iter().map(|(_, a)| *a).collect();
                self.recorder.write(&line);
            }
        }
    }
}

#[cfg(test)]
mod tests;
