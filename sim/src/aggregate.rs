//! Outcomes aggregated as a run goes: per session, for the run as a whole and per scope
//! (an upstream service, whose budget several platforms may spend, and a platform), so
//! that a run keeps what its calls in flight need and never a record per call made.
//!
//! Counts, units and maxima are exact. Waits (from a call's first submission to its
//! admission, in microseconds) go into HDR histograms of [`WAIT_SIGFIG`] significant
//! digits; a quantile is the histogram's (the highest value equivalent to the one at that
//! rank, within 10^-3 of it), capped at the exact maximum. A session keeps its waits as a
//! list while it has few and in a histogram after; either way its quantiles are the
//! histogram's, so the report is the same whichever it held. A session's row is made when
//! its last call has ended and its aggregate is dropped then.
//!
//! **Scopes**: a call counts in the scope of the service it went to ([`Scope::Service`],
//! the budget it was counted against) and in its platform's ([`Scope::Platform`]); the
//! engine says which scopes a call counts in, and nothing here assumes one scope per
//! call. A service's time at the limit is the time calls waited in its fair queue; a
//! platform's, the time calls waited at any service it calls.
//!
//! Invariants: a call is aggregated once, when it ends, from its final record; a session
//! is finished once; which session rows are kept ([`SessionRows`]) changes what the
//! summary lists, never a figure in it; nothing depends on hash-map iteration order.
//!
//! What this module does not do: decide anything, or read the clock.

use std::time::Duration;

use besluitbron_core::path::Served;
use besluitbron_core::{Instant, PlatformId, ServiceId, Units};
use hdrhistogram::Histogram;

use crate::call_record::{CallRecord, CallState};
use crate::dense::IdMap;

/// Significant digits of every wait histogram: a quantile is within 10^-3 of the wait at
/// its rank.
pub const WAIT_SIGFIG: u8 = 3;

/// A session keeps at most this many waits as a list; beyond, a histogram.
const SESSION_WAITS_LISTED: usize = 512;

/// Buckets of a time series at most; beyond, two neighbours become one (the width
/// doubles).
pub const SERIES_BUCKETS_MAX: usize = 1024;

/// The width a time series starts with.
pub const SERIES_FIRST_WIDTH: Duration = Duration::from_secs(60);

/// Sessions shown one by one in the human table; beyond this, an aggregate row and the
/// sessions that waited longest (and a run keeps only theirs unless asked for every row).
pub const SESSION_ROWS_MAX: usize = 20;
/// Sessions shown in the human table beyond [`SESSION_ROWS_MAX`]: the longest waiters.
pub const LONGEST_WAITERS_SHOWN: usize = 10;

/// A histogram of waits with its exact count and maximum. Its counts are 32-bit (no
/// bucket of a run holds 2^32 waits): half the memory of 64-bit ones.
#[derive(Clone, Debug)]
pub struct Waits {
    hist: Histogram<u32>,
    max_us: u64,
}

impl Default for Waits {
    fn default() -> Waits {
        Waits::new()
    }
}

impl Waits {
    /// No waits yet.
    pub fn new() -> Waits {
        Waits {
            // Auto-resizing: creation cannot fail for 3 significant digits.
            hist: Histogram::new(WAIT_SIGFIG).expect("3 significant digits is valid"),
            max_us: 0,
        }
    }

    /// One wait of `us` microseconds.
    pub fn record(&mut self, us: u64) {
        self.max_us = self.max_us.max(us);
        // Auto-resizing: recording fails only beyond the u64 range.
        self.hist.record(us).expect("auto-resizing histogram");
    }

    /// Waits recorded.
    pub fn count(&self) -> u64 {
        self.hist.len()
    }

    /// The longest, exact.
    pub fn max_us(&self) -> u64 {
        self.max_us
    }

    /// The wait at `quantile` (0 when none), within the histogram's precision and never
    /// above the exact maximum.
    pub fn quantile_us(&self, quantile: f64) -> u64 {
        if self.hist.is_empty() {
            0
        } else {
            self.hist.value_at_quantile(quantile).min(self.max_us)
        }
    }
}

/// The value the histogram reports for a wait of `us` at a quantile (its bucket's highest
/// equivalent): what a session's list of waits gives, so that a list and a histogram
/// answer alike.
fn as_histogram_reports(us: u64) -> u64 {
    thread_local! {
        static REFERENCE: Histogram<u32> = Histogram::new(WAIT_SIGFIG).expect("3 significant digits is valid");
    }
    REFERENCE.with(|h| h.highest_equivalent(us))
}

/// A session's waits while it runs: a list while it has few, a histogram after.
#[derive(Clone, Debug)]
enum SessionWaits {
    List(Vec<u64>),
    Hist(Box<Waits>),
}

impl SessionWaits {
    fn record(&mut self, us: u64) {
        match self {
            SessionWaits::List(list) if list.len() < SESSION_WAITS_LISTED => list.push(us),
            SessionWaits::List(list) => {
                let mut waits = Waits::new();
                for &w in list.iter() {
                    waits.record(w);
                }
                waits.record(us);
                *self = SessionWaits::Hist(Box::new(waits));
            }
            SessionWaits::Hist(waits) => waits.record(us),
        }
    }

    /// The median and the 99th percentile, as the histogram gives them, capped at `max`.
    fn quantiles_us(&mut self, max_us: u64) -> (u64, u64) {
        match self {
            SessionWaits::Hist(w) => (w.quantile_us(0.5), w.quantile_us(0.99)),
            SessionWaits::List(list) if list.is_empty() => (0, 0),
            SessionWaits::List(list) => {
                list.sort_unstable();
                let at = |q: f64| {
                    // The histogram's rank: ceil(q × n), at least 1.
                    let rank = ((q * list.len() as f64).ceil() as usize).clamp(1, list.len());
                    as_histogram_reports(list[rank - 1]).min(max_us)
                };
                (at(0.5), at(0.99))
            }
        }
    }
}

/// What one session did, while it runs.
#[derive(Clone, Debug)]
struct SessionAcc {
    calls: u64,
    units: Units,
    cancelled: u64,
    refused: u64,
    hits: u64,
    joins: u64,
    max_us: u64,
    waits: SessionWaits,
    /// Calls and agent loops still to end before the session is finished.
    pending: u64,
}

impl SessionAcc {
    fn new(pending: u64) -> SessionAcc {
        SessionAcc {
            calls: 0,
            units: Units::ZERO,
            cancelled: 0,
            refused: 0,
            hits: 0,
            joins: 0,
            max_us: 0,
            waits: SessionWaits::List(Vec::new()),
            pending,
        }
    }

    fn row(mut self, session: u32) -> SessionRow {
        let (p50, p99) = self.waits.quantiles_us(self.max_us);
        SessionRow {
            session,
            calls: self.calls,
            units: self.units,
            cancelled: self.cancelled,
            refused: self.refused,
            hits: self.hits,
            joins: self.joins,
            wait_p50_us: p50,
            wait_p99_us: p99,
            wait_max_us: self.max_us,
        }
    }
}

/// One finished session's figures.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionRow {
    /// The session's index in the workload.
    pub session: u32,
    /// Calls it was charged for (admitted, not given back by a refund).
    pub calls: u64,
    /// Units charged for them.
    pub units: Units,
    /// Calls withdrawn while waiting.
    pub cancelled: u64,
    /// Calls refused by a queue bound.
    pub refused: u64,
    /// Requests answered from the buffer (fresh or stale).
    pub hits: u64,
    /// Requests that joined another request's flight.
    pub joins: u64,
    /// The median wait (the histogram's).
    pub wait_p50_us: u64,
    /// The 99th percentile wait (the histogram's).
    pub wait_p99_us: u64,
    /// The longest wait, exact.
    pub wait_max_us: u64,
}

impl SessionRow {
    /// A session that made no call.
    pub fn empty(session: u32) -> SessionRow {
        SessionAcc::new(0).row(session)
    }

    /// Waited longer than `other`, or as long and comes first in the workload: the order
    /// of "the sessions that waited longest".
    fn longer_than(&self, other: &SessionRow) -> bool {
        (std::cmp::Reverse(self.wait_max_us), self.session) < (std::cmp::Reverse(other.wait_max_us), other.session)
    }
}

/// Which session rows a run keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionRows {
    /// Every session's, in the workload's order (reports that list every session).
    All,
    /// Those of the sessions that waited longest, this many at most, longest first;
    /// every session's when there are at most [`SESSION_ROWS_MAX`].
    Longest(usize),
}

/// The figures of the run as a whole.
#[derive(Clone, Debug, Default)]
pub struct Totals {
    /// Calls charged.
    pub calls: u64,
    /// Units charged.
    pub units: Units,
    /// Calls withdrawn while waiting.
    pub cancelled: u64,
    /// Calls refused by a queue bound.
    pub refused: u64,
    /// Requests answered from the buffer (fresh or stale).
    pub hits: u64,
    /// Requests that joined a flight.
    pub joins: u64,
    /// Every admitted call's wait.
    pub waits: Waits,
}

/// What a scope aggregate is kept for.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Scope {
    /// An upstream service: the calls counted against its budget, whichever platform's.
    Service(ServiceId),
    /// A platform: its calls, at whichever of its services.
    Platform(PlatformId),
}

impl Scope {
    /// The service's or the platform's id (`koop-zoekservice`, `bwb`).
    pub fn label(&self) -> String {
        match self {
            Scope::Service(s) => s.to_string(),
            Scope::Platform(p) => p.to_string(),
        }
    }
}

/// One stretch of a time series.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Bucket {
    /// Calls admitted in it.
    pub admitted: u64,
    /// Of those, calls that waited at all.
    pub waited: u64,
    /// Their waits together, in microseconds.
    pub wait_sum_us: u64,
    /// The longest wait of a call admitted in it.
    pub wait_max_us: u64,
    /// Time in it during which calls waited for the limit, in nanoseconds.
    pub at_limit_ns: u64,
}

/// A scope's figures over time: buckets of one width from instant 0, the width doubling
/// (two neighbours merged) whenever more than [`SERIES_BUCKETS_MAX`] would be needed.
#[derive(Clone, Debug)]
pub struct Series {
    width_ns: u64,
    buckets: Vec<Bucket>,
}

impl Default for Series {
    fn default() -> Series {
        Series {
            width_ns: u64::try_from(SERIES_FIRST_WIDTH.as_nanos()).unwrap_or(u64::MAX),
            buckets: Vec::new(),
        }
    }
}

impl Series {
    /// The width of a bucket.
    pub fn width(&self) -> Duration {
        Duration::from_nanos(self.width_ns)
    }

    /// The buckets, from instant 0.
    pub fn buckets(&self) -> &[Bucket] {
        &self.buckets
    }

    fn bucket(&mut self, at: Instant) -> &mut Bucket {
        let mut i = at.as_nanos() / self.width_ns;
        while i >= SERIES_BUCKETS_MAX as u64 {
            self.double();
            i = at.as_nanos() / self.width_ns;
        }
        let i = usize::try_from(i).expect("below the bucket bound");
        if self.buckets.len() <= i {
            self.buckets.resize(i + 1, Bucket::default());
        }
        &mut self.buckets[i]
    }

    fn double(&mut self) {
        self.width_ns = self.width_ns.saturating_mul(2);
        self.buckets = self
            .buckets
            .chunks(2)
            .map(|pair| {
                pair.iter().fold(Bucket::default(), |a, b| Bucket {
                    admitted: a.admitted + b.admitted,
                    waited: a.waited + b.waited,
                    wait_sum_us: a.wait_sum_us + b.wait_sum_us,
                    wait_max_us: a.wait_max_us.max(b.wait_max_us),
                    at_limit_ns: a.at_limit_ns + b.at_limit_ns,
                })
            })
            .collect();
    }

    fn admitted(&mut self, at: Instant, wait_us: u64) {
        let b = self.bucket(at);
        b.admitted += 1;
        b.waited += u64::from(wait_us > 0);
        b.wait_sum_us += wait_us;
        b.wait_max_us = b.wait_max_us.max(wait_us);
    }

    /// Calls waited for the limit from `from` until `to`, split over the buckets.
    fn at_limit(&mut self, from: Instant, to: Instant) {
        let mut at = from.as_nanos();
        let end = to.as_nanos();
        while at < end {
            // The bucket may double while this runs: its edge is taken afresh each time.
            self.bucket(Instant::from_nanos(at));
            let edge = (at / self.width_ns + 1).saturating_mul(self.width_ns).min(end);
            let i = usize::try_from(at / self.width_ns).expect("below the bucket bound");
            self.buckets[i].at_limit_ns += edge - at;
            at = edge;
        }
    }
}

/// One scope's figures.
#[derive(Clone, Debug)]
pub struct ScopeSummary {
    /// What it is.
    pub scope: Scope,
    /// Waits of its calls that were admitted.
    pub waits: Waits,
    /// Requests answered from the buffer fresh (not stale).
    pub hits: u64,
    /// Requests that joined a flight.
    pub joins: u64,
    /// Time during which calls waited for its limit.
    pub at_limit: Duration,
    /// Over time.
    pub series: Series,
    /// Calls wait for its limit since this instant (while the run goes).
    waiting_since: Option<Instant>,
}

impl ScopeSummary {
    fn new(scope: Scope) -> ScopeSummary {
        ScopeSummary {
            scope,
            waits: Waits::new(),
            hits: 0,
            joins: 0,
            at_limit: Duration::ZERO,
            series: Series::default(),
            waiting_since: None,
        }
    }

    /// The share of `over` during which calls waited for the limit, in [0, 1].
    pub fn at_limit_share(&self, over: Duration) -> f64 {
        if over.is_zero() {
            0.0
        } else {
            (self.at_limit.as_secs_f64() / over.as_secs_f64()).clamp(0.0, 1.0)
        }
    }
}

/// What a finished run aggregated.
#[derive(Clone, Debug)]
pub struct Summary {
    /// Sessions in the workload.
    pub sessions_total: u32,
    /// The run as a whole.
    pub totals: Totals,
    /// Session rows kept ([`SessionRows`]): every session's in the workload's order, or
    /// the longest waiters', longest first.
    pub rows: Vec<SessionRow>,
    /// Which rows were kept.
    pub kept: SessionRows,
    /// Per scope: the run's services in its order of stations, then its platforms in the
    /// workload's order.
    pub scopes: Vec<ScopeSummary>,
}

impl Summary {
    /// The scope of `scope`, if the run has it.
    pub fn scope(&self, scope: &Scope) -> Option<&ScopeSummary> {
        self.scopes.iter().find(|s| &s.scope == scope)
    }
}

/// Collects a run's aggregates while it goes.
#[derive(Debug)]
pub struct Aggregator {
    kept: SessionRows,
    sessions_total: u32,
    /// Sessions still running, by index.
    live: IdMap<u32, SessionAcc>,
    /// Sessions finished, one bit each.
    finished: Vec<u64>,
    rows: Vec<SessionRow>,
    totals: Totals,
    scopes: Vec<ScopeSummary>,
}

impl Aggregator {
    /// An aggregator for `sessions_total` sessions over `scopes`, keeping `kept` rows.
    pub fn new(kept: SessionRows, sessions_total: u32, scopes: Vec<Scope>) -> Aggregator {
        let kept = match kept {
            SessionRows::Longest(_) if sessions_total as usize <= SESSION_ROWS_MAX => SessionRows::All,
            k => k,
        };
        Aggregator {
            kept,
            sessions_total,
            live: IdMap::default(),
            finished: vec![0; (sessions_total as usize).div_ceil(64)],
            rows: Vec::new(),
            totals: Totals::default(),
            scopes: scopes.into_iter().map(ScopeSummary::new).collect(),
        }
    }

    /// Session `s` has `n` more calls or agent loops to end before it is finished.
    pub fn expect(&mut self, s: u32, n: u64) {
        self.live.entry(s).or_insert_with(|| SessionAcc::new(0)).pending += n;
    }

    /// One of session `s`'s calls or agent loops ended: when it was the last, the session
    /// is finished.
    pub fn ended(&mut self, s: u32) {
        let Some(acc) = self.live.get_mut(&s) else { return };
        acc.pending = acc.pending.saturating_sub(1);
        if acc.pending == 0 {
            let acc = self.live.remove(&s).expect("just found");
            self.finish_session(acc.row(s));
        }
    }

    /// Call `c` ended (its record is final); it counted in `scopes` (its service's and its
    /// platform's). A call that holds its session open (not an agent's: the agent loop
    /// does) ends there too.
    pub fn call(&mut self, c: &CallRecord, scopes: &[usize]) {
        let wait_us = match (c.admitted_at, c.state) {
            (Some(at), CallState::Done | CallState::Sent | CallState::Failed) => {
                Some(u64::try_from(at.saturating_since(c.submitted_at).as_micros()).unwrap_or(u64::MAX))
            }
            _ => None,
        };
        let acc = self.live.entry(c.session).or_insert_with(|| SessionAcc::new(0));
        let t = &mut self.totals;
        match c.state {
            CallState::Cancelled => {
                acc.cancelled += 1;
                t.cancelled += 1;
            }
            CallState::Refused => {
                acc.refused += 1;
                t.refused += 1;
            }
            _ => {}
        }
        match c.served {
            Some(Served::Cached | Served::Stale) => {
                acc.hits += 1;
                t.hits += 1;
            }
            Some(Served::Coalesced) => {
                acc.joins += 1;
                t.joins += 1;
            }
            Some(Served::Fetched) | None => {}
        }
        // Without keys, `paid` is exactly "admitted and not sent back by a 429".
        if c.paid {
            acc.calls += 1;
            acc.units += c.charged;
            t.calls += 1;
            t.units += c.charged;
        }
        for &scope in scopes {
            let sc = &mut self.scopes[scope];
            match c.served {
                Some(Served::Cached) => sc.hits += 1,
                Some(Served::Coalesced) => sc.joins += 1,
                _ => {}
            }
            if let (Some(us), Some(at)) = (wait_us, c.admitted_at) {
                sc.waits.record(us);
                sc.series.admitted(at, us);
            }
        }
        if let Some(us) = wait_us {
            acc.max_us = acc.max_us.max(us);
            acc.waits.record(us);
            t.waits.record(us);
        }
        if c.holds_session() {
            self.ended(c.session);
        }
    }

    /// Whether calls wait at scope `scope` (for its limit, or a limit of its platform's)
    /// after the event at `now`.
    pub fn waiting(&mut self, scope: usize, waiting: bool, now: Instant) {
        let sc = &mut self.scopes[scope];
        match (sc.waiting_since, waiting) {
            (None, true) => sc.waiting_since = Some(now),
            (Some(since), false) => {
                sc.waiting_since = None;
                sc.at_limit += now.saturating_since(since);
                sc.series.at_limit(since, now);
            }
            _ => {}
        }
    }

    fn finish_session(&mut self, row: SessionRow) {
        let s = row.session as usize;
        if let Some(word) = self.finished.get_mut(s / 64) {
            *word |= 1 << (s % 64);
        }
        match self.kept {
            SessionRows::All => self.rows.push(row),
            SessionRows::Longest(n) => {
                let at = self.rows.partition_point(|r| r.longer_than(&row));
                if at < n {
                    self.rows.insert(at, row);
                    self.rows.truncate(n);
                }
            }
        }
    }

    /// The summary at `end`: sessions still open are finished as they stand, sessions
    /// that never made a call get empty rows.
    pub fn finish(mut self, end: Instant) -> Summary {
        for i in 0..self.scopes.len() {
            self.waiting(i, false, end);
        }
        let mut open: Vec<u32> = self.live.keys().copied().collect();
        open.sort_unstable();
        for s in open {
            let acc = self.live.remove(&s).expect("listed");
            self.finish_session(acc.row(s));
        }
        for s in 0..self.sessions_total {
            let i = s as usize;
            if self.finished.get(i / 64).is_none_or(|w| w & (1 << (i % 64)) == 0) {
                self.finish_session(SessionRow::empty(s));
            }
        }
        if self.kept == SessionRows::All {
            self.rows.sort_by_key(|r| r.session);
        }
        Summary {
            sessions_total: self.sessions_total,
            totals: self.totals,
            rows: self.rows,
            kept: self.kept,
            scopes: self.scopes,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A session's list of waits answers what a histogram of the same waits answers.
    #[test]
    fn a_list_of_waits_reports_the_histograms_quantiles() {
        let waits: Vec<u64> = (0..300).map(|i| (i * 7_919 + 13) % 120_000_000).collect();
        let mut list = SessionWaits::List(Vec::new());
        let mut hist = Waits::new();
        for &w in &waits {
            list.record(w);
            hist.record(w);
        }
        let max = hist.max_us();
        assert_eq!(list.quantiles_us(max), (hist.quantile_us(0.5), hist.quantile_us(0.99)));
        // Beyond the list's bound it becomes a histogram and answers the same.
        let mut long = SessionWaits::List(Vec::new());
        for i in 0..(SESSION_WAITS_LISTED as u64 + 10) {
            long.record(i * 1_003);
        }
        assert!(matches!(long, SessionWaits::Hist(_)));
    }

    #[test]
    fn a_series_doubles_its_width_and_keeps_its_sums() {
        let mut s = Series::default();
        for minute in 0..3_000u64 {
            s.admitted(Instant::from_millis(minute * 60_000), 5);
        }
        assert!(s.buckets().len() <= SERIES_BUCKETS_MAX);
        assert_eq!(s.width(), Duration::from_secs(240));
        assert_eq!(s.buckets().iter().map(|b| b.admitted).sum::<u64>(), 3_000);
        s.at_limit(Instant::from_millis(100), Instant::from_millis(1_000_000));
        assert_eq!(
            s.buckets().iter().map(|b| b.at_limit_ns).sum::<u64>(),
            999_900 * 1_000_000
        );
    }

    #[test]
    fn the_longest_waiters_are_kept_longest_first_ties_by_workload_order() {
        let mut a = Aggregator::new(SessionRows::Longest(3), 100, Vec::new());
        for (s, max) in [(5u32, 10u64), (1, 30), (7, 30), (2, 5), (9, 40)] {
            let mut row = SessionRow::empty(s);
            row.wait_max_us = max;
            a.finish_session(row);
        }
        let kept: Vec<u32> = a.rows.iter().map(|r| r.session).collect();
        assert_eq!(kept, [9, 1, 7]);
    }
}
