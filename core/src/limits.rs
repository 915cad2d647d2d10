//! Limits on clients (R-I1 to R-I3): BesluitBron protecting itself.
//!
//! The MCP addresses have no authentication, so every request passes three limits: one
//! for the whole process, one per connector (a rush on one connector does not crowd out
//! another), and one per session — or, before a session exists, per client address.
//! Each limit is a GCRA (generic cell rate algorithm): a rate of `requests_per_minute`
//! with bursts of up to `burst` requests, kept as one "theoretical arrival time" per key
//! on the injected clock.
//!
//! [`ClientLimits::check`] looks at all three layers and commits to none unless all
//! pass, so a request refused by one layer costs nothing at the others. A refusal
//! carries the layer and an honest `Retry-After` in whole seconds: the largest wait
//! among the failing layers, rounded *up*, at least 1. (Common middleware rounds down,
//! which invites a client to come back too early.)
//!
//! Invariants: keyed state is bounded — a key whose allowance is full again carries no
//! information and is dropped, and at most `max_keys` keys are held (the one closest to
//! full goes first).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

use crate::time::Instant;

/// One layer's rate: `requests_per_minute`, with bursts of up to `burst` requests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "PascalCase")]
pub struct RateLimit {
    /// Sustained requests per minute.
    pub requests_per_minute: u32,
    /// Requests allowed at once after a quiet period.
    pub burst: u32,
}

impl RateLimit {
    /// The time between requests at the sustained rate, in nanoseconds.
    fn emission_ns(self) -> u64 {
        60_000_000_000 / u64::from(self.requests_per_minute.max(1))
    }

    /// How far ahead of `now` the arrival time may run: room for `burst − 1` more.
    fn tolerance_ns(self) -> u64 {
        self.emission_ns() * u64::from(self.burst.max(1) - 1)
    }
}

/// The three layers' limits and the bound on keyed state (`BesluitBron:McpRateLimit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ClientLimitConfig {
    /// The whole process.
    pub process: RateLimit,
    /// Each connector (`/mcp/obv`, `/mcp/tk`, `/mcp`).
    pub per_connector: RateLimit,
    /// Each session, or each client address before a session exists.
    pub per_session: RateLimit,
    /// Most sessions and addresses tracked at once.
    pub max_tracked: usize,
}

impl Default for ClientLimitConfig {
    /// Generous: an assistant makes a handful of calls per question; these allow
    /// 600 requests per minute per session (bursts of 120), 3,000 per connector and
    /// 6,000 for the process.
    fn default() -> Self {
        ClientLimitConfig {
            process: RateLimit {
                requests_per_minute: 6_000,
                burst: 1_000,
            },
            per_connector: RateLimit {
                requests_per_minute: 3_000,
                burst: 500,
            },
            per_session: RateLimit {
                requests_per_minute: 600,
                burst: 120,
            },
            max_tracked: 100_000,
        }
    }
}

/// Which limit refused a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LimitLayer {
    /// The whole process.
    Process,
    /// The connector.
    Connector,
    /// The session or client address.
    Session,
}

impl LimitLayer {
    /// `process`, `connector` or `session` (a metric label value).
    pub const fn as_str(self) -> &'static str {
        match self {
            LimitLayer::Process => "process",
            LimitLayer::Connector => "connector",
            LimitLayer::Session => "session",
        }
    }
}

/// A refused request: answer HTTP 429 with `Retry-After: retry_after_secs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Throttled {
    /// The layer with the longest wait.
    pub layer: LimitLayer,
    /// Whole seconds to wait, rounded up, at least 1.
    pub retry_after_secs: u64,
    /// The exact wait.
    pub wait: Duration,
}

impl fmt::Display for Throttled {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "the {} request limit is reached; retry after {} s",
            self.layer.as_str(),
            self.retry_after_secs
        )
    }
}

/// One GCRA per key, with bounded state.
#[derive(Clone, Debug)]
struct Keyed {
    limit: RateLimit,
    tat: BTreeMap<String, Instant>,
    by_tat: BTreeSet<(Instant, String)>,
    max_keys: usize,
}

impl Keyed {
    fn new(limit: RateLimit, max_keys: usize) -> Keyed {
        Keyed {
            limit,
            tat: BTreeMap::new(),
            by_tat: BTreeSet::new(),
            max_keys: max_keys.max(1),
        }
    }

    /// Drops keys whose allowance is full again at `now`.
    fn sweep(&mut self, now: Instant) {
        while let Some((tat, _)) = self.by_tat.first() {
            if *tat > now {
                break;
            }
            // Present: just looked at it.
            let (_, key) = self.by_tat.pop_first().expect("first key");
            self.tat.remove(&key);
        }
    }

    /// The wait before `key` may make a request at `now` (zero: now), and the arrival
    /// time to store if it does.
    fn probe(&self, now: Instant, key: &str) -> (Duration, Instant) {
        let tat = self.tat.get(key).copied().unwrap_or(now).max(now);
        let allowed_at = tat.saturating_sub(Duration::from_nanos(self.limit.tolerance_ns()));
        let next = tat + Duration::from_nanos(self.limit.emission_ns());
        (allowed_at.saturating_since(now), next)
    }

    fn commit(&mut self, key: &str, next: Instant) {
        if let Some(old) = self.tat.get(key).copied() {
            self.by_tat.remove(&(old, key.to_owned()));
        } else if self.tat.len() >= self.max_keys
            && let Some((_, closest)) = self.by_tat.pop_first()
        {
            self.tat.remove(&closest);
        }
        self.tat.insert(key.to_owned(), next);
        self.by_tat.insert((next, key.to_owned()));
    }
}

/// The three layers of client limits.
#[derive(Clone, Debug)]
pub struct ClientLimits {
    process: Keyed,
    connectors: Keyed,
    sessions: Keyed,
    refused: BTreeMap<LimitLayer, u64>,
}

impl ClientLimits {
    /// Limits with no history.
    pub fn new(config: ClientLimitConfig) -> ClientLimits {
        ClientLimits {
            process: Keyed::new(config.process, 1),
            connectors: Keyed::new(config.per_connector, 1_000),
            sessions: Keyed::new(config.per_session, config.max_tracked),
            refused: BTreeMap::new(),
        }
    }

    /// A request for `connector` from `session` (a session id, or a client address
    /// before a session exists) at `now`. Commits to all three layers, or to none.
    pub fn check(&mut self, now: Instant, connector: &str, session: &str) -> Result<(), Throttled> {
        self.process.sweep(now);
        self.connectors.sweep(now);
        self.sessions.sweep(now);
        let probes = [
            (LimitLayer::Process, self.process.probe(now, "")),
            (LimitLayer::Connector, self.connectors.probe(now, connector)),
            (LimitLayer::Session, self.sessions.probe(now, session)),
        ];
        let worst = probes.iter().filter(|p| !p.1.0.is_zero()).max_by_key(|p| (p.1.0, p.0));
        if let Some(&(layer, (wait, _))) = worst {
            *self.refused.entry(layer).or_default() += 1;
            let retry_after_secs = wait.as_nanos().div_ceil(1_000_000_000).max(1) as u64;
            return Err(Throttled {
                layer,
                retry_after_secs,
                wait,
            });
        }
        self.process.commit("", probes[0].1.1);
        self.connectors.commit(connector, probes[1].1.1);
        self.sessions.commit(session, probes[2].1.1);
        Ok(())
    }

    /// Requests refused per layer since the limits were made.
    pub fn refused(&self, layer: LimitLayer) -> u64 {
        self.refused.get(&layer).copied().unwrap_or(0)
    }

    /// Sessions and addresses holding state now.
    pub fn tracked_sessions(&self) -> usize {
        self.sessions.tat.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny() -> ClientLimitConfig {
        ClientLimitConfig {
            process: RateLimit {
                requests_per_minute: 600,
                burst: 100,
            },
            per_connector: RateLimit {
                requests_per_minute: 120,
                burst: 20,
            },
            per_session: RateLimit {
                requests_per_minute: 60,
                burst: 3,
            },
            max_tracked: 4,
        }
    }

    #[test]
    fn a_session_gets_its_burst_then_an_honest_retry_after() {
        let mut l = ClientLimits::new(tiny());
        for _ in 0..3 {
            l.check(Instant::ZERO, "obv", "s1").expect("within the burst");
        }
        let t = l.check(Instant::ZERO, "obv", "s1").unwrap_err();
        assert_eq!((t.layer, t.retry_after_secs), (LimitLayer::Session, 1));
        // Waiting exactly that long gets in.
        l.check(Instant::from_secs(t.retry_after_secs), "obv", "s1")
            .expect("honest Retry-After");
        assert_eq!(l.refused(LimitLayer::Session), 1);
    }

    #[test]
    fn retry_after_rounds_up_and_is_at_least_one_second() {
        let mut l = ClientLimits::new(ClientLimitConfig {
            per_session: RateLimit {
                requests_per_minute: 40,
                burst: 1,
            },
            ..tiny()
        });
        l.check(Instant::ZERO, "obv", "s").expect("first");
        let t = l.check(Instant::from_millis(100), "obv", "s").unwrap_err();
        assert_eq!(t.wait, Duration::from_millis(1400));
        assert_eq!(t.retry_after_secs, 2, "1.4 s rounds up");
        assert!(l.check(Instant::from_millis(1499), "obv", "s").is_err());
        assert!(l.check(Instant::from_millis(1500), "obv", "s").is_ok());
    }

    #[test]
    fn a_refusal_at_one_layer_costs_nothing_at_the_others() {
        let mut l = ClientLimits::new(tiny());
        for _ in 0..3 {
            l.check(Instant::ZERO, "obv", "flood").expect("burst");
        }
        for _ in 0..50 {
            assert!(l.check(Instant::ZERO, "obv", "flood").is_err());
        }
        // The connector layer only counted the three that passed.
        for i in 0..17 {
            l.check(Instant::ZERO, "obv", &format!("other{i}"))
                .expect("connector burst left");
        }
    }

    #[test]
    fn a_flood_on_one_connector_leaves_another_alone() {
        let mut l = ClientLimits::new(tiny());
        let mut refused_at = None;
        for i in 0..100 {
            if let Err(t) = l.check(Instant::ZERO, "obv", &format!("s{i}")) {
                refused_at = Some(t.layer);
                break;
            }
        }
        assert_eq!(refused_at, Some(LimitLayer::Connector));
        l.check(Instant::ZERO, "tk", "someone")
            .expect("the other connector still answers");
    }

    #[test]
    fn tracked_state_stays_bounded_and_full_allowances_are_dropped() {
        let mut l = ClientLimits::new(tiny());
        for i in 0..10 {
            l.check(Instant::from_millis(i), "obv", &format!("s{i}"))
                .expect("fresh session");
        }
        assert!(l.tracked_sessions() <= 4);
        l.check(Instant::from_secs(3600), "obv", "late").expect("fresh");
        assert_eq!(l.tracked_sessions(), 1, "an hour later only the newcomer holds state");
    }
}
