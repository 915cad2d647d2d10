//! The token bucket, kept as a theoretical arrival time (GCRA form): the one rate
//! algorithm of the core. The scheduler keeps a platform's limit with it, the client
//! limits keep each layer's allowance with it (a burst of B requests refilled at R per
//! minute is a bucket of B units refilled over `B × 60 s / R`), and the simulator's
//! platforms and the fake OpenBesluitvorming count with it.
//!
//! A bucket of C units refilled at C per W is stored as one instant, `full_at`: the
//! moment the bucket would be full again if nothing more were taken. The bucket holds
//! `C × (W − (full_at − now)) / W` units at `now`; taking `c` units moves `full_at`
//! forward by `c × W / C`.
//!
//! `full_at` is kept exactly, in units of `1 / C` nanosecond (C in thousandths), so a
//! debit adds the whole number `c × W` and a long run of calls never drifts from the
//! platform's own bucket. Only answers given as an [`Instant`] are rounded, and always
//! *up* to the nanosecond, so rounding can only make BesluitBron later than the
//! platform, never earlier.
//!
//! Invariant: `full_at ≤ now + W` after every debit of an admitted call (the bucket
//! never goes below zero), except through platform feedback, which may push it
//! further when the platform says it is empty for longer.

use crate::platform::LimitConfig;
use crate::time::{Instant, duration_nanos};
use crate::units::Units;

/// A continuously refilled token bucket on the injected clock.
#[derive(Clone, Copy, Debug)]
pub struct Bucket {
    capacity: Units,
    /// C in thousandths, the scale of `full_at_scaled`.
    capacity_milli: u128,
    window_ns: u64,
    /// `full_at` in nanoseconds × C (in thousandths): exact, never rounded.
    full_at_scaled: u128,
}

impl Bucket {
    /// A full bucket with the given limit. `capacity` and `window` must be non-zero
    /// (the scheduler's constructor checks this).
    pub fn new(limit: LimitConfig) -> Bucket {
        Bucket {
            capacity: limit.capacity,
            capacity_milli: u128::from(limit.capacity.as_milli()).max(1),
            window_ns: duration_nanos(limit.window),
            full_at_scaled: 0,
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
    /// For estimates and bounds; the bucket itself never rounds.
    pub fn refill_ns(&self, cost: Units) -> u64 {
        u64::try_from(self.scaled_cost(cost).div_ceil(self.capacity_milli)).unwrap_or(u64::MAX)
    }

    /// The earliest instant at which a call of `cost` fits: the first whole
    /// nanosecond at which the bucket holds at least `cost`.
    pub fn earliest_fit(&self, cost: Units) -> Instant {
        let full_scaled = self.capacity_milli * u128::from(self.window_ns);
        let at = (self.full_at_scaled + self.scaled_cost(cost)).saturating_sub(full_scaled);
        self.instant_up(at)
    }

    /// Takes `cost` units out of the bucket at `now`.
    pub fn debit(&mut self, now: Instant, cost: Units) {
        let from = self.full_at_scaled.max(self.scaled(now));
        self.full_at_scaled = from + self.scaled_cost(cost);
    }

    /// The instant at which the bucket is full again, rounded up to the nanosecond.
    pub fn full_at(&self) -> Instant {
        self.instant_up(self.full_at_scaled)
    }

    /// Makes sure the bucket holds no more than `units` at `now`.
    pub fn cap_at(&mut self, now: Instant, units: Units) {
        let missing = self.capacity.saturating_sub(units);
        let full_at = self.scaled(now) + self.scaled_cost(missing);
        self.full_at_scaled = self.full_at_scaled.max(full_at);
    }

    /// Makes sure the bucket is not full before `full_at`.
    pub fn full_no_earlier_than(&mut self, full_at: Instant) {
        self.full_at_scaled = self.full_at_scaled.max(self.scaled(full_at));
    }

    /// The units in the bucket at `now`, rounded down to a thousandth.
    pub fn tokens(&self, now: Instant) -> Units {
        let full_scaled = self.capacity_milli * u128::from(self.window_ns);
        let debt = self.full_at_scaled.saturating_sub(self.scaled(now)).min(full_scaled);
        let milli = (full_scaled - debt) / u128::from(self.window_ns.max(1));
        Units::from_milli(u64::try_from(milli).unwrap_or(u64::MAX))
    }

    /// `cost × W`, the time `cost` takes to refill, in the bucket's scale.
    fn scaled_cost(&self, cost: Units) -> u128 {
        u128::from(cost.as_milli()) * u128::from(self.window_ns)
    }

    fn scaled(&self, at: Instant) -> u128 {
        u128::from(at.as_nanos()) * self.capacity_milli
    }

    fn instant_up(&self, scaled: u128) -> Instant {
        Instant::from_nanos(u64::try_from(scaled.div_ceil(self.capacity_milli)).unwrap_or(u64::MAX))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

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
            assert!(b.earliest_fit(Units::ONE) <= t0);
            b.debit(t0, Units::ONE);
        }
        assert_eq!(b.tokens(t0), Units::ZERO);
        assert_eq!(b.earliest_fit(Units::ONE), Instant::from_secs(101));
        assert_eq!(b.tokens(Instant::from_millis(100_500)), Units::from_milli(500));
    }

    #[test]
    fn refill_time_rounds_up() {
        let b = Bucket::new(LimitConfig::new(Units::whole(3), Duration::from_nanos(10)));
        // 1 unit of 3 over 10 ns is 3.33 ns: the bucket charges 4.
        assert_eq!(b.refill_ns(Units::ONE), 4);
    }

    #[test]
    fn many_small_debits_do_not_drift_from_the_exact_bucket() {
        // 1 unit of 60 per second takes 16,666,666⅔ ns to refill: rounding each debit up
        // to the nanosecond would make the bucket full 3 ns late after three calls.
        let mut b = Bucket::new(LimitConfig::new(Units::whole(60), Duration::from_secs(1)));
        let t0 = Instant::from_millis(436);
        for _ in 0..3 {
            b.debit(t0, Units::ONE);
        }
        assert_eq!(b.full_at(), Instant::from_millis(486));
        assert_eq!(b.earliest_fit(Units::whole(60)), Instant::from_millis(486));
        assert_eq!(b.tokens(Instant::from_millis(486)), Units::whole(60));
        // A single third of a unit's refill rounds up, never down.
        let mut b = Bucket::new(LimitConfig::new(Units::whole(60), Duration::from_secs(1)));
        b.debit(Instant::ZERO, Units::ONE);
        assert_eq!(b.full_at(), Instant::from_nanos(16_666_667));
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
