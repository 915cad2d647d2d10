//! The duplicate rate as a diagnosis (R-D9).
//!
//! Per client, the share of requests that were duplicates (coalesced joins, buffer hits
//! of a repeat, idempotent replays) is tracked in one-minute buckets over the last five
//! minutes, against the client's usual level (an exponentially weighted average of its
//! completed minutes). When the five-minute rate rises far above the usual level the
//! monitor returns a [`DuplicateSpike`] for the shell to log: the likely causes are a
//! client retrying too eagerly, or a time-out set below the operation's real latency.
//!
//! Invariants: at most `max_clients` clients are tracked (the one whose last request lies
//! furthest back, to the minute, goes first); at most one spike per client per five
//! minutes.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use crate::time::Instant;

const MINUTE: Duration = Duration::from_secs(60);
const WINDOW_MINUTES: usize = 5;

/// What kind of duplicate a request was, if any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum DuplicateKind {
    /// Not a duplicate: it did its own work.
    Fresh,
    /// It joined a flight in progress.
    Coalesced,
    /// The buffer answered it.
    CacheHit,
    /// It was a client retry answered from the first result.
    Replay,
    /// The buffer or a flight answered it, for a request written otherwise than any
    /// before it with that key: shared only through level-1 folding (R-D5).
    Canonical,
}

impl DuplicateKind {
    /// `fresh`, `coalesced`, `cache_hit`, `replay` or `canonical` (metric label values).
    pub const fn as_str(self) -> &'static str {
        match self {
            DuplicateKind::Fresh => "fresh",
            DuplicateKind::Coalesced => "coalesced",
            DuplicateKind::CacheHit => "cache_hit",
            DuplicateKind::Replay => "replay",
            DuplicateKind::Canonical => "canonical",
        }
    }
}

/// When to speak up.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MonitorConfig {
    /// Requests a client must have made in five minutes before its rate means anything.
    pub min_requests: u32,
    /// The five-minute rate must exceed the usual level times this factor …
    pub factor: u32,
    /// … and the usual level plus this many percentage points.
    pub margin_percent: u32,
    /// Most clients tracked at once.
    pub max_clients: usize,
}

impl Default for MonitorConfig {
    /// 20 requests, 3× and +25 points, 10,000 clients.
    fn default() -> Self {
        MonitorConfig {
            min_requests: 20,
            factor: 3,
            margin_percent: 25,
            max_clients: 10_000,
        }
    }
}

/// A client whose duplicate rate rose far above its usual level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DuplicateSpike {
    /// The client.
    pub client: Arc<str>,
    /// Requests in the last five minutes.
    pub requests: u32,
    /// Duplicates among them.
    pub duplicates: u32,
    /// The client's usual duplicate rate, in percent.
    pub usual_percent: u32,
    /// What its repeats look like.
    pub cause: SpikeCause,
}

/// The likely cause of a spike, read from when the client's repeats came: a repeat is
/// the same request (its id or `Idempotency-Key`, else the same tool and arguments)
/// again, and its delay the time since the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpikeCause {
    /// Repeats within seconds of the first (median delay under [`LOOP_DELAY`]): a
    /// retry loop.
    RetryLoop {
        /// The median delay.
        median: Duration,
    },
    /// Repeats at one fixed interval after the first (all within a fifth of their
    /// median, or half a second): a client time-out shorter than the platform's
    /// latency, resending at that interval.
    ShortTimeout {
        /// The interval.
        after: Duration,
    },
    /// Too few timed repeats, or no pattern in them.
    Unknown,
}

/// Repeats faster than this (median) are read as a retry loop.
pub const LOOP_DELAY: Duration = Duration::from_secs(3);

/// Timed repeats needed before a pattern is named.
const MIN_TIMED_REPEATS: usize = 3;

impl SpikeCause {
    /// The cause of repeats that came `delays` after their first requests.
    pub fn of(delays: &[Duration]) -> SpikeCause {
        if delays.len() < MIN_TIMED_REPEATS {
            return SpikeCause::Unknown;
        }
        let mut sorted = delays.to_vec();
        sorted.sort();
        let median = sorted[sorted.len() / 2];
        let spread = sorted[sorted.len() - 1] - sorted[0];
        if median < LOOP_DELAY {
            SpikeCause::RetryLoop { median }
        } else if spread <= (median / 5).max(Duration::from_millis(500)) {
            SpikeCause::ShortTimeout { after: median }
        } else {
            SpikeCause::Unknown
        }
    }

    /// `retry_loop`, `short_timeout` or `unknown` (log and metric values).
    pub const fn as_str(self) -> &'static str {
        match self {
            SpikeCause::RetryLoop { .. } => "retry_loop",
            SpikeCause::ShortTimeout { .. } => "short_timeout",
            SpikeCause::Unknown => "unknown",
        }
    }
}

impl std::fmt::Display for DuplicateSpike {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "client {} sent {} duplicates in {} requests over five minutes (usually {}%): ",
            self.client, self.duplicates, self.requests, self.usual_percent
        )?;
        match self.cause {
            SpikeCause::RetryLoop { median } => write!(
                f,
                "a retry loop (the same request again {:.1} s after the first, at the median)",
                median.as_secs_f64()
            ),
            SpikeCause::ShortTimeout { after } => write!(
                f,
                "a client time-out below the operation's real latency (the same request again every {:.0} s)",
                after.as_secs_f64()
            ),
            SpikeCause::Unknown => {
                f.write_str("a client retrying too eagerly, or a time-out set below the operation's real latency")
            }
        }
    }
}

#[derive(Clone, Debug)]
struct ClientRate {
    /// (minute index, requests, duplicates), newest last, at most five.
    minutes: VecDeque<(u64, u32, u32)>,
    /// Usual rate in 1/1000, from completed minutes.
    usual_milli: u32,
    /// The minute index of the last request (the order of eviction).
    last_seen: u64,
    quiet_until: Instant,
    /// Recent requests (a hash of each) and when each was first seen, oldest first.
    firsts: VecDeque<(u64, Instant)>,
    /// Repeats of them: (when, delay since the first), oldest first.
    repeats: VecDeque<(Instant, Duration)>,
}

/// Requests whose first time is remembered per client, and timed repeats kept.
const TIMED_PER_CLIENT: usize = 64;

/// Duplicate rates per client.
#[derive(Clone, Debug)]
pub struct DuplicateMonitor {
    config: MonitorConfig,
    clients: BTreeMap<Arc<str>, ClientRate>,
    /// (minute of the last request, client): the client seen longest ago first.
    by_last_seen: BTreeSet<(u64, Arc<str>)>,
}

impl DuplicateMonitor {
    /// A monitor with no history.
    pub fn new(config: MonitorConfig) -> Self {
        DuplicateMonitor {
            config,
            clients: BTreeMap::new(),
            by_last_seen: BTreeSet::new(),
        }
    }

    /// Records one request of `client` at `now`; returns a spike to report, if any.
    pub fn record(&mut self, now: Instant, client: &str, kind: DuplicateKind) -> Option<DuplicateSpike> {
        let minute = now.as_nanos() / MINUTE.as_nanos() as u64;
        if !self.clients.contains_key(client) {
            if self.clients.len() >= self.config.max_clients
                && let Some((_, oldest)) = self.by_last_seen.pop_first()
            {
                self.clients.remove(&oldest);
            }
            let k: Arc<str> = Arc::from(client);
            self.clients.insert(
                k.clone(),
                ClientRate {
                    minutes: VecDeque::new(),
                    usual_milli: 50,
                    last_seen: minute,
                    quiet_until: Instant::ZERO,
                    firsts: VecDeque::new(),
                    repeats: VecDeque::new(),
                },
            );
            self.by_last_seen.insert((minute, k));
        }
        // Present: inserted above when missing.
        let rate = self.clients.get_mut(client).expect("tracked client");
        // The order of eviction moves once a minute per client, not on every request.
        if rate.last_seen != minute {
            let before = std::mem::replace(&mut rate.last_seen, minute);
            if let Some((key, _)) = self.clients.get_key_value(client) {
                let key = key.clone();
                self.by_last_seen.remove(&(before, key.clone()));
                self.by_last_seen.insert((minute, key));
            }
        }
        let rate = self.clients.get_mut(client).expect("tracked client");

        if rate.minutes.back().is_none_or(|m| m.0 != minute) {
            // Completed minutes feed the usual level as they leave the newest slot.
            if let Some(&(_, req, dup)) = rate.minutes.back()
                && req > 0
            {
                let observed = dup * 1000 / req;
                rate.usual_milli = (rate.usual_milli * 9 + observed) / 10;
            }
            rate.minutes.push_back((minute, 0, 0));
        }
        while rate
            .minutes
            .front()
            .is_some_and(|m| m.0 + WINDOW_MINUTES as u64 <= minute)
        {
            rate.minutes.pop_front();
        }
        // Present: pushed above for this minute.
        let current = rate.minutes.back_mut().expect("current minute");
        current.1 += 1;
        if kind != DuplicateKind::Fresh {
            current.2 += 1;
        }
        let (requests, duplicates) = rate.minutes.iter().fold((0, 0), |(r, d), m| (r + m.1, d + m.2));
        if requests < self.config.min_requests || now < rate.quiet_until {
            return None;
        }
        let rate_milli = duplicates * 1000 / requests;
        let threshold = (rate.usual_milli * self.config.factor).max(rate.usual_milli + self.config.margin_percent * 10);
        if rate_milli <= threshold {
            return None;
        }
        rate.quiet_until = now + MINUTE * WINDOW_MINUTES as u32;
        let window = MINUTE * WINDOW_MINUTES as u32;
        let delays: Vec<Duration> = rate
            .repeats
            .iter()
            .filter(|(at, _)| now.saturating_since(*at) <= window)
            .map(|(_, d)| *d)
            .collect();
        Some(DuplicateSpike {
            client: Arc::from(client),
            requests,
            duplicates,
            usual_percent: rate.usual_milli / 10,
            cause: SpikeCause::of(&delays),
        })
    }

    /// Notes that `client` sent the request `what` (a hash of its id, or of its tool
    /// and arguments) at `now`: a repeat of one seen in the last five minutes is timed
    /// (for the spike's cause). Call it before [`DuplicateMonitor::record`] of the same
    /// request; a client not yet tracked is not timed.
    pub fn note(&mut self, now: Instant, client: &str, what: u64) {
        let Some(rate) = self.clients.get_mut(client) else {
            return;
        };
        let window = MINUTE * WINDOW_MINUTES as u32;
        while rate
            .firsts
            .front()
            .is_some_and(|(_, at)| now.saturating_since(*at) > window)
        {
            rate.firsts.pop_front();
        }
        match rate.firsts.iter().find(|(w, _)| *w == what) {
            Some((_, first)) => {
                rate.repeats.push_back((now, now.saturating_since(*first)));
                if rate.repeats.len() > TIMED_PER_CLIENT {
                    rate.repeats.pop_front();
                }
            }
            None => {
                rate.firsts.push_back((what, now));
                if rate.firsts.len() > TIMED_PER_CLIENT {
                    rate.firsts.pop_front();
                }
            }
        }
    }

    /// Clients tracked now.
    pub fn clients(&self) -> usize {
        self.clients.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_that_starts_retrying_is_reported_once() {
        let mut m = DuplicateMonitor::new(MonitorConfig::default());
        let mut t = Instant::ZERO;
        // Ten quiet minutes: 30 requests a minute, one in ten a cache hit of a repeat.
        for i in 0..300 {
            let kind = if i % 10 == 0 {
                DuplicateKind::CacheHit
            } else {
                DuplicateKind::Fresh
            };
            assert_eq!(m.record(t, "10.0.0.1", kind), None, "normal use at request {i}");
            t = t + Duration::from_secs(2);
        }
        // Then every request is sent three times.
        let mut spikes = Vec::new();
        for i in 0..300 {
            let kind = if i % 3 == 0 {
                DuplicateKind::Fresh
            } else {
                DuplicateKind::Replay
            };
            spikes.extend(m.record(t, "10.0.0.1", kind));
            t = t + Duration::from_millis(500);
        }
        assert_eq!(spikes.len(), 1, "one warning per five minutes: {spikes:?}");
        assert!(spikes[0].to_string().contains("retrying too eagerly"));
        assert_eq!(spikes[0].cause, SpikeCause::Unknown, "no timed repeats");
        assert!(spikes[0].usual_percent <= 10);
    }

    /// Ten quiet minutes of a client, then `burst` requests: (what, duplicate kind).
    fn spike_after(burst: impl Iterator<Item = (Instant, u64, DuplicateKind)>) -> Vec<DuplicateSpike> {
        let mut m = DuplicateMonitor::new(MonitorConfig::default());
        for i in 0..300u64 {
            let t = Instant::from_secs(i * 2);
            m.record(t, "c", DuplicateKind::Fresh);
            m.note(t, "c", 1_000_000 + i);
        }
        let mut spikes = Vec::new();
        for (t, what, kind) in burst {
            m.note(t, "c", what);
            spikes.extend(m.record(t, "c", kind));
        }
        spikes
    }

    #[test]
    fn repeats_within_seconds_are_named_a_retry_loop() {
        // From minute 10: each request, then the same again 0.5 s and 1 s later.
        let start = 600_000u64;
        let burst = (0..240u64).map(|i| {
            let (n, again) = (i / 3, i % 3);
            let t = Instant::from_millis(start + n * 2_000 + again * 500);
            let kind = if again == 0 {
                DuplicateKind::Fresh
            } else {
                DuplicateKind::Replay
            };
            (t, n, kind)
        });
        let spikes = spike_after(burst);
        assert_eq!(spikes.len(), 1, "{spikes:?}");
        assert!(
            matches!(spikes[0].cause, SpikeCause::RetryLoop { .. }),
            "{:?}",
            spikes[0].cause
        );
        assert!(spikes[0].to_string().contains("a retry loop"), "{}", spikes[0]);
    }

    #[test]
    fn repeats_at_a_fixed_interval_are_named_a_short_time_out() {
        // Every request is sent again exactly 10 s after the first (a 10 s time-out).
        let start = 600_000u64;
        let mut burst = Vec::new();
        for n in 0..90u64 {
            let t = start + n * 1_000;
            burst.push((Instant::from_millis(t), n, DuplicateKind::Fresh));
            burst.push((Instant::from_millis(t + 10_000), n, DuplicateKind::Coalesced));
        }
        burst.sort_by_key(|(t, ..)| *t);
        let spikes = spike_after(burst.into_iter());
        assert_eq!(spikes.len(), 1, "{spikes:?}");
        assert_eq!(
            spikes[0].cause,
            SpikeCause::ShortTimeout {
                after: Duration::from_secs(10)
            }
        );
        assert!(spikes[0].to_string().contains("every 10 s"), "{}", spikes[0]);
    }

    #[test]
    fn scattered_repeats_name_no_cause() {
        assert_eq!(
            SpikeCause::of(&[
                Duration::from_secs(5),
                Duration::from_secs(40),
                Duration::from_secs(200)
            ]),
            SpikeCause::Unknown
        );
        assert_eq!(
            SpikeCause::of(&[Duration::from_millis(100)]),
            SpikeCause::Unknown,
            "too few"
        );
    }

    #[test]
    fn a_client_that_always_repeats_itself_is_not_news() {
        let mut m = DuplicateMonitor::new(MonitorConfig {
            min_requests: 10,
            ..MonitorConfig::default()
        });
        let mut t = Instant::ZERO;
        let mut spikes = 0;
        for i in 0..2000 {
            let kind = if i % 2 == 0 {
                DuplicateKind::Fresh
            } else {
                DuplicateKind::Coalesced
            };
            spikes += usize::from(m.record(t, "steady", kind).is_some());
            t = t + Duration::from_secs(1);
        }
        // Its usual level climbs to 50% within the first minutes; after that, no news.
        assert!(spikes <= 1, "{spikes} warnings for a steady client");
    }

    #[test]
    fn tracked_clients_stay_bounded() {
        let mut m = DuplicateMonitor::new(MonitorConfig {
            max_clients: 3,
            ..MonitorConfig::default()
        });
        for i in 0..10u64 {
            m.record(Instant::from_secs(i), &format!("c{i}"), DuplicateKind::Fresh);
        }
        assert_eq!(m.clients(), 3);
    }

    #[test]
    fn the_client_seen_longest_ago_is_the_one_forgotten() {
        let mut m = DuplicateMonitor::new(MonitorConfig {
            max_clients: 3,
            ..MonitorConfig::default()
        });
        for c in ["c0", "c1", "c2"] {
            m.record(Instant::from_secs(1), c, DuplicateKind::Fresh);
        }
        m.record(Instant::from_secs(70), "c0", DuplicateKind::Fresh);
        m.record(Instant::from_secs(71), "c2", DuplicateKind::Fresh);
        m.record(Instant::from_secs(130), "c3", DuplicateKind::Fresh);
        assert_eq!(m.clients(), 3);
        assert!(!m.clients.contains_key("c1"), "c1 was last seen in minute 0");
        for c in ["c0", "c2", "c3"] {
            assert!(m.clients.contains_key(c), "{c} is kept");
        }
        assert_eq!(m.by_last_seen.len(), 3, "one place per tracked client");
    }
}
