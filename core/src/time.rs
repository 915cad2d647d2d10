//! Time as an input.
//!
//! The core never reads a clock. Every call that needs the time takes a `now: Instant`
//! from its caller: the server converts tokio's monotonic clock at its edge, the
//! simulator passes virtual time. An [`Instant`] is a count of nanoseconds since an
//! epoch the caller chooses; only differences between instants mean anything.
//!
//! Invariants: arithmetic saturates instead of wrapping, so a far-future deadline
//! stays far in the future rather than becoming the past.

use std::fmt;
use std::ops::{Add, Sub};
use std::time::Duration;

/// A point in time, in nanoseconds since an epoch the caller chooses.
///
/// Monotonic by contract: callers pass non-decreasing values to one scheduler.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant(u64);

impl Instant {
    /// The epoch itself.
    pub const ZERO: Instant = Instant(0);
    /// The last representable instant; used as "never".
    pub const MAX: Instant = Instant(u64::MAX);

    /// An instant `nanos` nanoseconds after the epoch.
    pub const fn from_nanos(nanos: u64) -> Instant {
        Instant(nanos)
    }

    /// An instant `millis` milliseconds after the epoch (saturating).
    pub const fn from_millis(millis: u64) -> Instant {
        Instant(millis.saturating_mul(1_000_000))
    }

    /// An instant `secs` seconds after the epoch (saturating).
    pub const fn from_secs(secs: u64) -> Instant {
        Instant(secs.saturating_mul(1_000_000_000))
    }

    /// Nanoseconds since the epoch.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Whole milliseconds since the epoch, rounded down.
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }

    /// The time from `earlier` to `self`, or zero when `earlier` is later.
    pub fn saturating_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, saturating at [`Instant::MAX`].
    pub fn saturating_add(self, d: Duration) -> Instant {
        Instant(self.0.saturating_add(duration_nanos(d)))
    }

    /// `self - d`, saturating at [`Instant::ZERO`].
    pub fn saturating_sub(self, d: Duration) -> Instant {
        Instant(self.0.saturating_sub(duration_nanos(d)))
    }
}

/// A duration in nanoseconds, saturating at `u64::MAX` (about 584 years).
pub fn duration_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, rhs: Duration) -> Instant {
        self.saturating_add(rhs)
    }
}

impl Sub<Duration> for Instant {
    type Output = Instant;
    fn sub(self, rhs: Duration) -> Instant {
        self.saturating_sub(rhs)
    }
}

impl fmt::Display for Instant {
    /// Seconds with millisecond precision, e.g. `1.500s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let millis = self.0 / 1_000_000;
        write!(f, "{}.{:03}s", millis / 1000, millis % 1000)
    }
}

/// Wall-clock time: milliseconds since the Unix epoch, supplied by the caller.
///
/// Used where an instant must survive a restart (cache expiry). Monotonic
/// [`Instant`]s do not: their epoch is the process start.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct WallTime(pub u64);

impl WallTime {
    /// Milliseconds since the Unix epoch.
    pub const fn unix_millis(self) -> u64 {
        self.0
    }

    /// `self + d`, saturating.
    pub fn saturating_add(self, d: Duration) -> WallTime {
        WallTime(self.0.saturating_add(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_at_both_ends() {
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(Instant::ZERO - Duration::from_secs(1), Instant::ZERO);
        assert_eq!(
            Instant::from_secs(1).saturating_since(Instant::from_secs(2)),
            Duration::ZERO
        );
    }

    #[test]
    fn display_shows_seconds_with_millis() {
        assert_eq!(Instant::from_millis(61_250).to_string(), "61.250s");
        assert_eq!(Instant::ZERO.to_string(), "0.000s");
    }
}
