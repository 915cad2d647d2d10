//! The one-line-per-event trace and its hash.
//!
//! Every event of a run becomes one line (`t=1.000s session=b admit cost=1 tokens=0.000
//! via=fair waited=0.500s platform=obv`). The scheduler's own events use the core's
//! [`besluitbron_core::SchedulerEvent`] format with the platform appended; the simulator's
//! events (answers, 429s, legacy sleeps) follow the same `t=… key=value` shape.
//!
//! Invariants: the hash (64-bit FNV-1a over every line and its newline) is computed
//! whether or not lines are kept, so two runs with the same seed can be compared by hash
//! alone; the last [`RECENT_LINES`] lines are always kept for failure reports. A line is
//! formatted into a buffer the trace reuses ([`Trace::push_fmt`]), so a run that keeps no
//! lines allocates none.

use std::collections::VecDeque;
use std::fmt;

/// Lines kept for the context of a failure report.
pub const RECENT_LINES: usize = 24;

/// The trace of one run.
#[derive(Debug)]
pub struct Trace {
    hash: u64,
    lines: u64,
    keep_all: bool,
    kept: Vec<String>,
    recent: VecDeque<String>,
}

impl Trace {
    /// An empty trace; `keep_all` keeps every line (for `--trace`).
    pub fn new(keep_all: bool) -> Trace {
        Trace {
            hash: 0xcbf2_9ce4_8422_2325,
            lines: 0,
            keep_all,
            kept: Vec::new(),
            recent: VecDeque::with_capacity(RECENT_LINES),
        }
    }

    /// Appends one line.
    pub fn push(&mut self, line: String) {
        self.push_fmt(format_args!("{line}"));
    }

    /// Appends one line, formatted from `args` into the oldest recent line's buffer.
    pub fn push_fmt(&mut self, args: fmt::Arguments<'_>) {
        let mut line = if self.recent.len() == RECENT_LINES {
            self.recent.pop_front().unwrap_or_default()
        } else {
            String::new()
        };
        line.clear();
        // Writing into a String cannot fail.
        let _ = fmt::Write::write_fmt(&mut line, args);
        for b in line.bytes().chain(std::iter::once(b'\n')) {
            self.hash ^= u64::from(b);
            self.hash = self.hash.wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.lines += 1;
        if self.keep_all {
            self.kept.push(line.clone());
        }
        self.recent.push_back(line);
    }

    /// FNV-1a 64 over every line.
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// Number of lines.
    pub fn len(&self) -> u64 {
        self.lines
    }

    /// True when nothing happened.
    pub fn is_empty(&self) -> bool {
        self.lines == 0
    }

    /// Every line, when kept.
    pub fn lines(&self) -> &[String] {
        &self.kept
    }

    /// The last lines.
    pub fn recent(&self) -> impl Iterator<Item = &String> {
        self.recent.iter()
    }

    /// Takes the kept lines.
    pub fn into_lines(self) -> Vec<String> {
        self.kept
    }
}
