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
//! written into a buffer the trace reuses, so a run that keeps no lines allocates none:
//! formatted ([`Trace::push_fmt`]), or, for the lines every call writes, put together
//! piece by piece ([`Trace::line`]) exactly as the pieces' `Display` writes them, without
//! the formatting machinery.

use std::collections::VecDeque;
use std::fmt;

use besluitbron_core::{Instant, Units};

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
        let mut line = self.buffer();
        // Writing into a String cannot fail.
        let _ = fmt::Write::write_fmt(&mut line, args);
        self.end(line);
    }

    /// A line to put together piece by piece; it is appended by [`Line::end`].
    pub fn line(&mut self) -> Line<'_> {
        let buf = self.buffer();
        Line { trace: self, buf }
    }

    /// An empty buffer: the oldest recent line's once there are enough of them.
    fn buffer(&mut self) -> String {
        let mut line = if self.recent.len() == RECENT_LINES {
            self.recent.pop_front().unwrap_or_default()
        } else {
            String::new()
        };
        line.clear();
        line
    }

    fn end(&mut self, line: String) {
        let mut hash = self.hash;
        for &b in line.as_bytes().iter().chain(b"\n") {
            hash = (hash ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
        }
        self.hash = hash;
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

/// A trace line being put together: each piece is written as its `Display` writes it
/// (an [`Instant`] as `1.500s`, [`Units`] as `60.000` or, compact, `60`), so a line
/// equals the one `format!` would give and the trace's hash does not move.
#[must_use = "a line is appended by `end`"]
pub struct Line<'t> {
    trace: &'t mut Trace,
    buf: String,
}

impl Line<'_> {
    /// Text as it is.
    pub fn str(mut self, s: &str) -> Self {
        self.buf.push_str(s);
        self
    }

    /// A whole number in decimal.
    pub fn uint(mut self, n: u64) -> Self {
        push_uint(&mut self.buf, n);
        self
    }

    /// An instant: seconds with three decimals and `s`.
    pub fn instant(mut self, at: Instant) -> Self {
        let millis = at.as_nanos() / 1_000_000;
        push_uint(&mut self.buf, millis / 1000);
        self.buf.push('.');
        push_three_digits(&mut self.buf, millis % 1000);
        self.buf.push('s');
        self
    }

    /// Units with three decimals ([`Units`]' `Display`).
    pub fn units(mut self, u: Units) -> Self {
        push_uint(&mut self.buf, u.as_milli() / 1000);
        self.buf.push('.');
        push_three_digits(&mut self.buf, u.as_milli() % 1000);
        self
    }

    /// Units without trailing zeros ([`Units::compact`]).
    pub fn compact(mut self, u: Units) -> Self {
        push_uint(&mut self.buf, u.as_milli() / 1000);
        let mut frac = u.as_milli() % 1000;
        if frac > 0 {
            self.buf.push('.');
            let mut digits = 3;
            while frac.is_multiple_of(10) {
                frac /= 10;
                digits -= 1;
            }
            for d in (0..digits).rev() {
                self.buf.push(char::from(b'0' + (frac / 10u64.pow(d) % 10) as u8));
            }
        }
        self
    }

    /// Appends the line to the trace.
    pub fn end(self) {
        let Line { trace, buf } = self;
        trace.end(buf);
    }
}

/// `n` in decimal, written into `digits` (the formatting machinery is a cost at a line
/// per call).
pub fn decimal(mut n: u64, digits: &mut [u8; 20]) -> &str {
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    std::str::from_utf8(&digits[i..]).expect("ASCII digits")
}

/// `n` in decimal.
fn push_uint(buf: &mut String, n: u64) {
    buf.push_str(decimal(n, &mut [0; 20]));
}

/// `n` (below 1000) in three digits, zeros in front.
fn push_three_digits(buf: &mut String, n: u64) {
    for d in [n / 100, n / 10 % 10, n % 10] {
        buf.push(char::from(b'0' + d as u8));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each piece is written exactly as its `Display` writes it.
    #[test]
    fn a_line_put_together_equals_the_formatted_one() {
        let instants = [0, 1, 999_999, 1_000_000, 1_500_000_000, 86_400_123_456_789, u64::MAX];
        let units = [
            0,
            1,
            10,
            100,
            125,
            500,
            1000,
            1300,
            60_000,
            60_010,
            123_456_789,
            u64::MAX,
        ];
        let numbers = [0, 7, 10, 99, 100, 12_345, u64::MAX];
        for (i, &at) in instants.iter().enumerate() {
            let at = Instant::from_nanos(at);
            let u = Units::from_milli(units[i % units.len()]);
            let v = Units::from_milli(units[(i * 5 + 3) % units.len()]);
            let n = numbers[i % numbers.len()];
            let mut by_pieces = Trace::new(true);
            by_pieces
                .line()
                .str("t=")
                .instant(at)
                .str(" cost=")
                .compact(u)
                .str(" tokens=")
                .units(v)
                .str(" n=")
                .uint(n)
                .end();
            let mut formatted = Trace::new(true);
            formatted.push_fmt(format_args!("t={at} cost={} tokens={v} n={n}", u.compact()));
            assert_eq!(by_pieces.lines(), formatted.lines());
            assert_eq!(by_pieces.hash(), formatted.hash());
        }
        for milli in 0..5_000 {
            let mut t = Trace::new(true);
            t.line().compact(Units::from_milli(milli)).end();
            assert_eq!(t.lines()[0], Units::from_milli(milli).compact(), "{milli}");
        }
    }
}
