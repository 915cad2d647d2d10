//! The platform's token bucket, kept as a theoretical arrival time (GCRA form).
//!
//! A bucket of C units refilled at C per W is stored as one instant, `full_at`: the
//! moment the bucket would be full again if nothing more were taken. The bucket holds
//! `C × (W − (full_at − now)) / W` units at `now`; taking `c` units moves `full_at`
//! forward by `c × W / C`, rounded *up* to the nanosecond, so rounding can only make
//! BesluitBron slower than the platform, never faster.
//!
//! Invariant: `full_at ≤ now + W` after every debit of an admitted call (the bucket
//! never goes below zero), except through platform feedback, which may push it
//! further when the platform says it is empty for longer.

use std::time::Duration;

use crate::platform::LimitConfig;
use crate::time::{Instant, duration_nanos};
use crate::units::Units;

/// A continuously refilled token bucket on the injected clock.
#[derive(Clone, Debug)]
pub struct Bucket {
    capacity: Units,
    window_ns: u64,
    full_at: Instant,
}

impl Bucket {
    /// A full bucket with the given limit. `capacity` and `window` must be non-zero
    /// (the scheduler's constructor checks this).
    pub fn new(limit: LimitConfig) -> Bucket {
        Bucket {
            capacity: limit.capacity,
            window_ns: duration_nanos(limit.window),
            full_at: Instant::ZERO,
        }
    }

    /// C, the most the bucket holds.
    pub fn capacity(&self) -> Units {
        self.capacity
    }

    /// W in nanoseconds.
    pub fn window_ns(&self) -> u64 {
        self.window_ns
    }

    /// The time it takes to refill `cost` units: `ceil(cost × W / C)` nanoseconds.
    pub fn refill_ns(&self, cost: Units) -> u64 {
        let num = u128::from(cost.as_milli()) * u128::from(self.window_ns);
        let den = u128::from(self.capacity.as_milli());
        u64::try_from(num.div_ceil(den)).unwrap_or(u64::MAX)
    }

    /// The earliest instant at which a call needing `refill_ns` fits.
    pub fn earliest_fit(&self, refill_ns: u64) -> Instant {
        Instant::from_nanos(
            self.full_at
                .as_nanos()
                .saturating_add(refill_ns)
                .saturating_sub(self.window_ns),
        )
    }

    /// Takes a call needing `refill_ns` out of the bucket at `now`.
    pub fn debit(&mut self, now: Instant, refill_ns: u64) {
        let from = self.full_at.max(now);
        self.full_at = Instant::from_nanos(from.as_nanos().saturating_add(refill_ns));
    }

    /// The instant at which the bucket is full again.
    pub fn full_at(&self) -> Instant {
        self.full_at
    }

    /// Makes sure the bucket holds no more than `units` at `now`.
    pub fn cap_at(&mut self, now: Instant, units: Units) {
        let missing = self.capacity.saturating_sub(units);
        let full_at = now + Duration::from_nanos(self.refill_ns(missing));
        self.full_at = self.full_at.max(full_at);
    }

    /// Makes sure the bucket is not full before `full_at`.
    pub fn full_no_earlier_than(&mut self, full_at: Instant) {
        self.full_at = self.full_at.max(full_at);
    }

    /// The units in the bucket at `now`, rounded down to a thousandth.
    pub fn tokens(&self, now: Instant) -> Units {
        let debt_ns = self
            .full_at
            .as_nanos()
            .saturating_sub(now.as_nanos())
            .min(self.window_ns);
        let room_ns = u128::from(self.window_ns - debt_ns);
        let milli = room_ns * u128::from(self.capacity.as_milli()) / u128::from(self.window_ns);
        Units::from_milli(u64::try_from(milli).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obv() -> Bucket {
        Bucket::new(LimitConfig::new(Units::whole(60), Duration::from_secs(60)))
    }

    #[test]
    fn starts_full_and_refills_one_unit_per_second() {
        let mut b = obv();
        let t0 = Instant::from_secs(100);
        assert_eq!(b.tokens(t0), Units::whole(60));
        for _ in 0..60 {
            assert!(b.earliest_fit(b.refill_ns(Units::ONE)) <= t0);
            b.debit(t0, b.refill_ns(Units::ONE));
        }
        assert_eq!(b.tokens(t0), Units::ZERO);
        assert_eq!(b.earliest_fit(b.refill_ns(Units::ONE)), Instant::from_secs(101));
        assert_eq!(b.tokens(Instant::from_millis(100_500)), Units::from_milli(500));
    }

    #[test]
    fn refill_time_rounds_up() {
        let b = Bucket::new(LimitConfig::new(Units::whole(3), Duration::from_nanos(10)));
        // 1 unit of 3 over 10 ns is 3.33 ns: the bucket charges 4.
        assert_eq!(b.refill_ns(Units::ONE), 4);
    }

    #[test]
    fn platform_feedback_only_lowers_the_level() {
        let mut b = obv();
        let now = Instant::from_secs(10);
        b.cap_at(now, Units::whole(10));
        assert_eq!(b.tokens(now), Units::whole(10));
        b.cap_at(now, Units::whole(30));
        assert_eq!(b.tokens(now), Units::whole(10));
    }
}
