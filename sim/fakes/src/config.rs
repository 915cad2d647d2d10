//! What a fake platform does: its faults and, for OpenBesluitvorming, its limit.
//!
//! Invariants: the default configuration is a healthy platform (no fault on, the real
//! platform's limit), and every field can be changed while the fake runs
//! ([`FakeHandle::update`](crate::FakeHandle::update)); the next request sees the change.
//!
//! What this module does not do: apply the faults (see `faults.rs`) or keep counters.

use std::time::Duration;

use besluitbron_core::Units;

/// How OpenBesluitvorming's fake weighs a search (PLATFORMS.md §2 documents two formulas).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ObvCost {
    /// The code of 2026-08-21: `max(1, ceil(limit / 24))`, so `limit=100` costs 5.
    #[default]
    Code,
    /// The later API.md revision: `1 + (limit - 24) / 250` (exact thousandths), so
    /// `limit=100` costs 1.304.
    Doc,
}

impl ObvCost {
    /// The cost of one search with this (already capped) `limit`.
    pub fn search_cost(self, limit: u32) -> Units {
        match self {
            ObvCost::Code => Units::whole(u64::from(limit.div_ceil(24).max(1))),
            ObvCost::Doc => Units::from_milli(1000 + u64::from(limit.saturating_sub(24)) * 1000 / 250),
        }
    }
}

/// The behaviour of one fake platform; change it while running with [`FakeHandle::update`](crate::FakeHandle::update).
///
/// Every fault is off by default. The faults of an answer (`latency`, `fail_every`,
/// `garbage`) model a platform that works but badly; the faults of arrival (`stall`,
/// `reset_every`, `rate_limit_storm`) model one that does not, and strike before the
/// platform looks at the request, so they charge nothing to OpenBesluitvorming's bucket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeConfig {
    /// Normal slowness: added before every answer the platform gives (after the rate
    /// limit has been applied, so a 429 of the bucket comes at once). Zero: none.
    pub latency: Duration,
    /// Answer HTTP 500 to every n-th request that passes the rate limit (counted from the
    /// fake's start, [`FakeHandle::failures_injected`](crate::FakeHandle::failures_injected));
    /// `None` never.
    pub fail_every: Option<u32>,
    /// Answer every request with a 200 whose body is HTML, not JSON.
    pub garbage: bool,
    /// Drop the connection without any answer on every n-th request received (counted
    /// as [`FakeHandle::requests`](crate::FakeHandle::requests) counts them, from the
    /// fake's start): no status line, no headers; the client sees the connection closed
    /// before a response (reqwest: "connection closed before message completed").
    /// Counted in [`FakeHandle::connections_reset`](crate::FakeHandle::connections_reset).
    /// `None` never.
    pub reset_every: Option<u32>,
    /// A pathological hang: hold every request this long on arrival, before anything
    /// else happens to it, to make clients time out. Unlike `latency` it is not the
    /// platform being slow at answering but not answering for a while; a stalled request
    /// then goes on as any other (it may still be reset, refused or answered). Counted in
    /// [`FakeHandle::stalled`](crate::FakeHandle::stalled). `None` never.
    pub stall: Option<Duration>,
    /// A rate-limit storm: answer every request 429 with `Retry-After: 1`, whatever the
    /// caller's bucket holds, in the platform's own 429 shape (OpenBesluitvorming: its JSON
    /// body and `RateLimit-*` headers claiming an empty bucket; Tweede Kamer: an OData
    /// error). Nothing is charged; each refusal is counted in
    /// [`FakeHandle::rate_limited`](crate::FakeHandle::rate_limited).
    pub rate_limit_storm: bool,
    /// OpenBesluitvorming only: bucket capacity, refilled over one minute (default 60).
    pub rate_limit_per_min: u32,
    /// OpenBesluitvorming only: which search-cost formula the bucket charges.
    pub obv_cost: ObvCost,
}

impl Default for FakeConfig {
    fn default() -> FakeConfig {
        FakeConfig {
            latency: Duration::ZERO,
            fail_every: None,
            garbage: false,
            reset_every: None,
            stall: None,
            rate_limit_storm: false,
            rate_limit_per_min: 60,
            obv_cost: ObvCost::Code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_cost_formulas_match_platforms_md() {
        assert_eq!(ObvCost::Code.search_cost(100), Units::whole(5));
        assert_eq!(ObvCost::Code.search_cost(24), Units::whole(1));
        assert_eq!(ObvCost::Code.search_cost(25), Units::whole(2));
        assert_eq!(ObvCost::Code.search_cost(1), Units::whole(1));
        assert_eq!(ObvCost::Doc.search_cost(100), Units::from_milli(1304));
        assert_eq!(ObvCost::Doc.search_cost(10), Units::whole(1));
    }
}
