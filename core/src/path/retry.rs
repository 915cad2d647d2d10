//! When a failed attempt is tried again: the [`RetryPolicy`] and its seeded jitter.
//!
//! Only an attempt the platform client marked retryable (a connection error or a 5xx of
//! an idempotent read) is tried again, and every new attempt goes through the lane's
//! fair queue like a new call, so it is counted (R-L8). A 429 is not a retry: it is fed
//! back to the queue and the call waits out the Retry-After (see the path).
//!
//! The jitter is SplitMix64 from a seed in the configuration: runs are reproducible and
//! the core reads no ambient randomness.

use std::time::Duration;

/// Retry of idempotent reads after connection errors and 5xx answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included (1 disables retrying).
    pub max_attempts: u32,
    /// Backoff before the second attempt; doubled for each further attempt.
    pub backoff_base_ms: u64,
    /// Backoff never exceeds this (before jitter).
    pub backoff_max_ms: u64,
    /// No attempt starts later than this after the first one was sent.
    pub deadline_ms: u64,
    /// Seed of the jitter generator.
    pub jitter_seed: u64,
}

impl Default for RetryPolicy {
    /// Three attempts, 250 ms doubling up to 4 s, within 45 s of the first.
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 3,
            backoff_base_ms: 250,
            backoff_max_ms: 4_000,
            deadline_ms: 45_000,
            jitter_seed: 0x00B3_5101_7B40_0000,
        }
    }
}

impl RetryPolicy {
    /// The backoff before attempt `failed + 1` (`failed` ≥ 1 attempts failed so far),
    /// before jitter: `base × 2^(failed−1)`, capped at the maximum.
    pub fn backoff(&self, failed: u32) -> Duration {
        let factor = 1u64 << failed.saturating_sub(1).min(20);
        Duration::from_millis(self.backoff_base_ms.saturating_mul(factor).min(self.backoff_max_ms))
    }

    /// The deadline as a duration.
    pub fn deadline(&self) -> Duration {
        Duration::from_millis(self.deadline_ms)
    }
}

/// SplitMix64: a small, seeded, deterministic generator for the jitter.
#[derive(Clone, Debug)]
pub(crate) struct Jitter(u64);

impl Jitter {
    pub(crate) fn new(seed: u64) -> Jitter {
        Jitter(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// `base` scaled by a factor drawn uniformly from [0.5, 1.0] in thousandths.
    pub(crate) fn apply(&mut self, base: Duration) -> Duration {
        let permille = 500 + u32::try_from(self.next() % 501).unwrap_or(500);
        base * permille / 1000
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy {
            backoff_base_ms: 100,
            backoff_max_ms: 500,
            ..RetryPolicy::default()
        };
        let got: Vec<u128> = (1..=5).map(|a| p.backoff(a).as_millis()).collect();
        assert_eq!(got, [100, 200, 400, 500, 500]);
    }

    #[test]
    fn jitter_is_seeded_and_within_half_to_full() {
        let (mut a, mut b) = (Jitter::new(7), Jitter::new(7));
        let base = Duration::from_millis(1000);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..200 {
            let (x, y) = (a.apply(base), b.apply(base));
            assert_eq!(x, y, "same seed, same jitter");
            assert!((Duration::from_millis(500)..=base).contains(&x), "{x:?}");
            seen.insert(x);
        }
        assert!(seen.len() > 50, "the jitter varies");
    }
}
