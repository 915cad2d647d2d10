//! What each platform did lately, for the status page: every attempt's outcome and
//! latency and every admission's wait over the last hour, the last success and the last
//! failure with its reason, and the 429s received since start.
//!
//! Recorded by the platform tasks (`crate::driver`) where an attempt ends and where an
//! admission is sent; read only by the status page. Bounded: at most [`MAX_EVENTS`] of
//! each kind per platform, none older than [`WINDOW_MS`].

use std::collections::{BTreeMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use besluitbron_core::PlatformId;
use besluitbron_core::WallTime;

/// How an attempt ended, as the status page tells it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AttemptEnd {
    /// The platform answered (anything, a refusal included): not a connection failure,
    /// a time-out or a failure inside BesluitBron.
    pub reached: bool,
    /// Why it failed, as a person may read it (bounded, without addresses); `None` for
    /// a success.
    pub failure: Option<String>,
    /// The platform refused it for its limit (HTTP 429 or its own overload signal).
    pub rate_limited: bool,
}

/// The window of latencies and waits: an hour.
pub const WINDOW_MS: u64 = 3_600_000;

/// The most attempts and waits kept per platform.
pub const MAX_EVENTS: usize = 4096;

/// Every platform's recent activity: a platform gets its row with its first event (the
/// registry, not this type, knows which platforms there are).
#[derive(Default)]
pub struct Activity {
    platforms: Mutex<BTreeMap<PlatformId, Recent>>,
}

#[derive(Default)]
struct Recent {
    /// (when, latency in ms, whether the platform answered at all).
    attempts: VecDeque<(u64, u32, bool)>,
    /// (when, wait in ms).
    waits: VecDeque<(u64, u32)>,
    last_success: Option<u64>,
    last_failure: Option<(u64, String)>,
    last_reached: Option<bool>,
    rate_limited: u64,
}

fn prune<T>(q: &mut VecDeque<T>, at: impl Fn(&T) -> u64, now: u64) {
    while q.front().is_some_and(|e| at(e).saturating_add(WINDOW_MS) < now) || q.len() > MAX_EVENTS {
        q.pop_front();
    }
}

fn millis(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

/// One platform's last hour, as the status page shows it.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct RecentSummary {
    /// Whether the last attempt reached the platform (any HTTP answer); `None` before
    /// the first attempt.
    pub reachable: Option<bool>,
    /// When the last attempt succeeded (Unix ms).
    pub last_success_ms: Option<u64>,
    /// When the last attempt failed (Unix ms), and why.
    pub last_failure_ms: Option<u64>,
    /// Why the last failure failed.
    pub last_failure: Option<String>,
    /// Attempts in the last hour.
    pub attempts_last_hour: usize,
    /// Median latency of those attempts, ms.
    pub latency_median_ms: Option<u32>,
    /// 95th percentile latency, ms.
    pub latency_p95_ms: Option<u32>,
    /// 429s (and overload signals) received since start.
    pub rate_limited: u64,
    /// Waits in the fair queue in the last hour: (Unix ms, wait ms), oldest first.
    #[serde(skip)]
    pub waits: Vec<(u64, u32)>,
    /// The longest of those waits, ms.
    pub wait_max_ms: Option<u32>,
}

/// The `q`-th quantile (0..=1) of sorted `v`, nearest rank.
pub fn quantile(sorted: &[u32], q: f64) -> Option<u32> {
    if sorted.is_empty() {
        return None;
    }
    let rank = (q * sorted.len() as f64).ceil() as usize;
    Some(sorted[rank.clamp(1, sorted.len()) - 1])
}

impl Activity {
    fn with(&self, platform: PlatformId, f: impl FnOnce(&mut Recent)) {
        let mut platforms = self.platforms.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        f(platforms.entry(platform).or_default());
    }

    /// An admission of `platform` sent at `now` after waiting `waited`.
    pub fn waited(&self, platform: PlatformId, now: WallTime, waited: Duration) {
        let now = now.unix_millis();
        self.with(platform, |r| {
            r.waits.push_back((now, millis(waited)));
            prune(&mut r.waits, |e| e.0, now);
        });
    }

    /// An attempt of `platform` that ended at `now` after `took`, as `end` says.
    pub fn attempt(&self, platform: PlatformId, now: WallTime, took: Duration, end: AttemptEnd) {
        let now = now.unix_millis();
        let AttemptEnd {
            reached,
            failure,
            rate_limited,
        } = end;
        self.with(platform, |r| {
            r.attempts.push_back((now, millis(took), reached));
            prune(&mut r.attempts, |e| e.0, now);
            r.last_reached = Some(reached);
            match failure {
                None => r.last_success = Some(now),
                Some(text) => r.last_failure = Some((now, text)),
            }
            if rate_limited {
                r.rate_limited += 1;
            }
        });
    }

    /// `platform`'s last hour as of `now`.
    pub fn summary(&self, platform: PlatformId, now: WallTime) -> RecentSummary {
        let now = now.unix_millis();
        let mut out = RecentSummary::default();
        self.with(platform, |r| {
            prune(&mut r.attempts, |e| e.0, now);
            prune(&mut r.waits, |e| e.0, now);
            let mut latencies: Vec<u32> = r.attempts.iter().map(|e| e.1).collect();
            latencies.sort_unstable();
            out = RecentSummary {
                reachable: r.last_reached,
                last_success_ms: r.last_success,
                last_failure_ms: r.last_failure.as_ref().map(|f| f.0),
                last_failure: r.last_failure.as_ref().map(|f| f.1.clone()),
                attempts_last_hour: latencies.len(),
                latency_median_ms: quantile(&latencies, 0.5),
                latency_p95_ms: quantile(&latencies, 0.95),
                rate_limited: r.rate_limited,
                waits: r.waits.iter().copied().collect(),
                wait_max_ms: r.waits.iter().map(|w| w.1).max(),
            };
        });
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_are_nearest_rank() {
        assert_eq!(quantile(&[], 0.5), None);
        assert_eq!(quantile(&[7], 0.95), Some(7));
        let v: Vec<u32> = (1..=100).collect();
        assert_eq!(quantile(&v, 0.5), Some(50));
        assert_eq!(quantile(&v, 0.95), Some(95));
    }

    #[test]
    fn old_events_leave_the_window_and_failures_keep_their_reason() {
        let a = Activity::default();
        let p = crate::platforms::obv::PLATFORM;
        a.waited(p, WallTime(1_000), Duration::from_millis(1500));
        let failed = AttemptEnd {
            reached: true,
            failure: Some("OpenBesluitvorming answered HTTP 500".to_owned()),
            rate_limited: false,
        };
        a.attempt(p, WallTime(2_000), Duration::from_millis(40), failed);
        let s = a.summary(p, WallTime(3_000));
        assert_eq!(s.waits, vec![(1_000, 1500)]);
        assert_eq!(s.reachable, Some(true));
        assert_eq!(s.last_failure_ms, Some(2_000));
        assert!(s.last_failure.as_deref().unwrap_or("").contains("500"), "{s:?}");
        assert_eq!(s.latency_median_ms, Some(40));
        let later = a.summary(p, WallTime(2_000 + WINDOW_MS + 1));
        assert!(later.waits.is_empty() && later.attempts_last_hour == 0, "{later:?}");
        assert_eq!(
            later.last_failure_ms,
            Some(2_000),
            "the last failure outlives the window"
        );
    }
}
