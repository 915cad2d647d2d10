//! Limits on clients (R-I1 to R-I3): BesluitBron protecting itself.
//!
//! The MCP addresses have no authentication, so every request passes four limits: one
//! for the whole process, one per connector (a rush on one connector does not crowd out
//! another), one per client address over all its sessions (one address opening many
//! sessions does not use up a connector for everyone), and one per session — or, before
//! a session exists, per client address.
//! Each limit is a rate of `requests_per_minute` with bursts of up to `burst` requests:
//! per key, one [`Bucket`] (the core's one GCRA, the same the scheduler keeps a
//! platform's limit with) of `burst` units, refilled over `burst × 60 s / rpm`, where a
//! request costs one unit.
//!
//! [`ClientLimits::check`] looks at all four layers and commits to none unless all
//! pass, so a request refused by one layer costs nothing at the others. A refusal
//! carries the layer and an honest `Retry-After` in whole seconds: the largest wait
//! among the failing layers, rounded *up*, at least 1. (Common middleware rounds down,
//! which invites a client to come back too early.)
//!
//! Invariants: keyed state is bounded — a key whose allowance is full again carries no
//! information and is dropped, and at most `max_keys` keys are held (the one closest to
//! full goes first).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::bucket::Bucket;
use crate::platform::LimitConfig;
use crate::time::Instant;
use crate::units::Units;

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
    /// The bucket of this rate: `burst` units, refilled over `burst × 60 s / rpm`
    /// (rounded up to the nanosecond, so never faster than the rate).
    fn bucket(self) -> Bucket {
        let burst = u64::from(self.burst.max(1));
        let rpm = u64::from(self.requests_per_minute.max(1));
        let window_ns =
            u64::try_from((u128::from(burst) * 60_000_000_000).div_ceil(u128::from(rpm))).unwrap_or(u64::MAX);
        Bucket::new(LimitConfig::new(Units::whole(burst), Duration::from_nanos(window_ns)))
    }
}

/// The four layers' limits and the bound on keyed state (`BesluitBron:McpRateLimit`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "PascalCase", default)]
pub struct ClientLimitConfig {
    /// The whole process.
    pub process: RateLimit,
    /// Each connector (`/mcp/obv`, `/mcp/tk`, `/mcp`).
    pub per_connector: RateLimit,
    /// Each client address, over all its sessions and connectors.
    pub per_address: RateLimit,
    /// Each session, or each client address before a session exists.
    pub per_session: RateLimit,
    /// Each authenticated user (an access token's issuer and subject), over all its
    /// sessions, connectors and addresses; in place of `per_address` for its requests.
    pub per_user: RateLimit,
    /// Most sessions and addresses tracked at once (each layer).
    pub max_tracked: usize,
}

impl Default for ClientLimitConfig {
    /// Generous: an assistant makes a handful of calls per question; these allow
    /// 600 requests per minute per session (bursts of 120), 1,200 per client address
    /// over all its sessions (bursts of 240: two busy sessions, or many quiet ones),
    /// 3,000 per connector and 6,000 for the process.
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
            per_address: RateLimit {
                requests_per_minute: 1_200,
                burst: 240,
            },
            per_session: RateLimit {
                requests_per_minute: 600,
                burst: 120,
            },
            per_user: RateLimit {
                requests_per_minute: 1_200,
                burst: 240,
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
    /// The client address, over all its sessions.
    Address,
    /// The session or client address.
    Session,
    /// The authenticated user, over all its sessions and addresses.
    User,
}

impl LimitLayer {
    /// `process`, `connector`, `address`, `session` or `user` (a metric label value).
    pub const fn as_str(self) -> &'static str {
        match self {
            LimitLayer::Process => "process",
            LimitLayer::Connector => "connector",
            LimitLayer::Address => "address",
            LimitLayer::Session => "session",
            LimitLayer::User => "user",
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

/// One bucket per key, with bounded state.
///
/// Keys are filed by the instant their bucket is full again, lazily: a request only
/// debits its key's bucket (one hash lookup, no tree touched), so a key's filing may be
/// earlier than its bucket's real full-again instant, never later. The sweep and the
/// eviction re-file a key whose filing turns out early when it reaches the front; a key
/// whose filing is exact is the one closest to full of all.
#[derive(Clone, Debug)]
struct Keyed {
    /// A full bucket of the layer's rate, cloned for a key's first request.
    fresh: Bucket,
    /// Each key's bucket, and the instant it is filed under in `by_full_at` (at most
    /// the bucket's `full_at`). The hasher has a fixed seed, so nothing depends on a
    /// random one, and is foldhash's: every request looks up each layer's key twice,
    /// and SipHash cost more than the rest of the check.
    buckets: HashMap<Arc<str>, (Bucket, Instant), foldhash::fast::FixedState>,
    /// Each key, once, by the instant it is filed under.
    by_full_at: BTreeSet<(Instant, Arc<str>)>,
    max_keys: usize,
    /// The next [`Keyed::sweep_due`] sweeps no earlier than this.
    next_sweep: Instant,
}

/// How often the keys whose allowance is full again are dropped: a full key carries no
/// information (its probe is a fresh bucket's), so holding it a little longer changes
/// no answer, and a key in steady use is not re-filed on every request.
const SWEEP_EVERY: Duration = Duration::from_secs(1);

impl Keyed {
    fn new(limit: RateLimit, max_keys: usize) -> Keyed {
        Keyed {
            fresh: limit.bucket(),
            buckets: HashMap::default(),
            by_full_at: BTreeSet::new(),
            max_keys: max_keys.max(1),
            next_sweep: Instant::ZERO,
        }
    }

    /// Sweeps at most once per [`SWEEP_EVERY`].
    fn sweep_due(&mut self, now: Instant) {
        if now >= self.next_sweep {
            self.sweep(now);
            self.next_sweep = now + SWEEP_EVERY;
        }
    }

    /// Takes the front key off the filing if its filing is exact and returns it;
    /// otherwise files it again under its bucket's real instant and returns `None`.
    fn pop_exact_front(&mut self) -> Option<(Instant, Arc<str>)> {
        let (filed, key) = self.by_full_at.pop_first()?;
        // Every filed key has a bucket: they are added and removed together.
        let entry = self.buckets.get_mut(&key).expect("a filed key has a bucket");
        let full_at = entry.0.full_at();
        if full_at == filed {
            return Some((filed, key));
        }
        entry.1 = full_at;
        self.by_full_at.insert((full_at, key));
        None
    }

    /// Drops keys whose bucket is full again at `now`: they carry no information.
    fn sweep(&mut self, now: Instant) {
        while let Some((filed, _)) = self.by_full_at.first() {
            if *filed > now {
                break;
            }
            if let Some((_, key)) = self.pop_exact_front() {
                self.buckets.remove(&key);
            }
        }
    }

    /// The wait before `key` may make a request at `now` (zero: now).
    fn probe(&self, now: Instant, key: &str) -> Duration {
        let bucket = self.buckets.get(key).map_or(&self.fresh, |(b, _)| b);
        bucket.earliest_fit(Units::ONE).saturating_since(now)
    }

    /// Takes one request out of `key`'s bucket at `now`.
    fn commit(&mut self, now: Instant, key: &str) {
        if let Some((bucket, _filed)) = self.buckets.get_mut(key) {
            // Its bucket is full later than before: the filing stays early, as allowed.
            bucket.debit(now, Units::ONE);
            return;
        }
        // At the cap, the key closest to full goes (a full one not yet swept first).
        while self.buckets.len() >= self.max_keys && !self.by_full_at.is_empty() {
            if let Some((_, closest)) = self.pop_exact_front() {
                self.buckets.remove(&closest);
            }
        }
        let key: Arc<str> = Arc::from(key);
        let mut bucket = self.fresh;
        bucket.debit(now, Units::ONE);
        let full_at = bucket.full_at();
        self.by_full_at.insert((full_at, Arc::clone(&key)));
        self.buckets.insert(key, (bucket, full_at));
    }

    /// Checks the filing's invariants: each key filed once, no later than its bucket
    /// is full again.
    #[cfg(test)]
    fn check_invariants(&self) -> Result<(), String> {
        if self.by_full_at.len() != self.buckets.len() {
            return Err(format!(
                "{} filed, {} buckets",
                self.by_full_at.len(),
                self.buckets.len()
            ));
        }
        for (filed, key) in &self.by_full_at {
            let Some((bucket, at)) = self.buckets.get(key) else {
                return Err(format!("{key} is filed without a bucket"));
            };
            if at != filed || *filed > bucket.full_at() {
                return Err(format!(
                    "{key} is filed at {filed:?}, its bucket full at {:?}",
                    bucket.full_at()
                ));
            }
        }
        Ok(())
    }
}

/// Who the client layer of the limits counts a request under: its address, or the
/// authenticated user it carries ([`crate::identity::Who::client`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client<'a> {
    /// A client address, at the per-address rate.
    Address(&'a str),
    /// An authenticated user's key, at the per-user rate.
    User(&'a str),
}

/// The four layers of client limits.
#[derive(Clone, Debug)]
pub struct ClientLimits {
    /// One bucket: a full one and a fresh one are the same, so nothing is swept.
    process: Bucket,
    connectors: Keyed,
    addresses: Keyed,
    /// The client layer of requests that carry a user.
    users: Keyed,
    sessions: Keyed,
    refused: BTreeMap<LimitLayer, u64>,
}

impl ClientLimits {
    /// Limits with no history.
    pub fn new(config: ClientLimitConfig) -> ClientLimits {
        ClientLimits {
            process: config.process.bucket(),
            connectors: Keyed::new(config.per_connector, 1_000),
            addresses: Keyed::new(config.per_address, config.max_tracked),
            users: Keyed::new(config.per_user, config.max_tracked),
            sessions: Keyed::new(config.per_session, config.max_tracked),
            refused: BTreeMap::new(),
        }
    }

    /// A request for `connector` from `session` (a session id, or the client address
    /// before a session exists) of client `address` at `now`. Commits to all four
    /// layers, or to none.
    pub fn check(&mut self, now: Instant, connector: &str, session: &str, address: &str) -> Result<(), Throttled> {
        self.check_client(now, connector, session, Client::Address(address))
    }

    /// As [`ClientLimits::check`], with the client layer counting `client`: an address
    /// at the per-address rate, or a user at the per-user rate.
    pub fn check_client(
        &mut self,
        now: Instant,
        connector: &str,
        session: &str,
        client: Client<'_>,
    ) -> Result<(), Throttled> {
        self.connectors.sweep_due(now);
        self.addresses.sweep_due(now);
        self.users.sweep_due(now);
        self.sessions.sweep_due(now);
        let (client_layer, clients, client_key) = match client {
            Client::Address(a) => (LimitLayer::Address, &mut self.addresses, a),
            Client::User(u) => (LimitLayer::User, &mut self.users, u),
        };
        let probes = [
            (
                LimitLayer::Process,
                self.process.earliest_fit(Units::ONE).saturating_since(now),
            ),
            (LimitLayer::Connector, self.connectors.probe(now, connector)),
            (client_layer, clients.probe(now, client_key)),
            (LimitLayer::Session, self.sessions.probe(now, session)),
        ];
        let worst = probes.iter().filter(|p| !p.1.is_zero()).max_by_key(|p| (p.1, p.0));
        if let Some(&(layer, wait)) = worst {
            *self.refused.entry(layer).or_default() += 1;
            let retry_after_secs = wait.as_nanos().div_ceil(1_000_000_000).max(1) as u64;
            return Err(Throttled {
                layer,
                retry_after_secs,
                wait,
            });
        }
        self.process.debit(now, Units::ONE);
        self.connectors.commit(now, connector);
        clients.commit(now, client_key);
        self.sessions.commit(now, session);
        Ok(())
    }

    /// Requests refused per layer since the limits were made.
    pub fn refused(&self, layer: LimitLayer) -> u64 {
        self.refused.get(&layer).copied().unwrap_or(0)
    }

    /// Sessions and addresses holding state now.
    pub fn tracked_sessions(&self) -> usize {
        self.sessions.buckets.len()
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
            per_address: RateLimit {
                requests_per_minute: 60,
                burst: 5,
            },
            per_session: RateLimit {
                requests_per_minute: 60,
                burst: 3,
            },
            per_user: RateLimit {
                requests_per_minute: 60,
                burst: 4,
            },
            max_tracked: 4,
        }
    }

    #[test]
    fn two_users_behind_one_address_are_limited_apart_and_one_user_everywhere_once() {
        use crate::identity::Who;
        let mut l = ClientLimits::new(ClientLimitConfig {
            max_tracked: 100,
            per_session: RateLimit {
                requests_per_minute: 600,
                burst: 100,
            },
            ..tiny()
        });
        let ask = |l: &mut ClientLimits, who: Who<'_>| {
            l.check_client(Instant::ZERO, "obv", &who.session_limit_key(), who.client())
        };
        let heavy = Who {
            user: Some("heavy"),
            session: None,
            address: "10.0.0.1",
        };
        let light = Who {
            user: Some("light"),
            ..heavy
        };
        for _ in 0..4 {
            ask(&mut l, heavy).expect("the user's burst");
        }
        let refused = ask(&mut l, heavy).unwrap_err();
        assert_eq!(refused.layer, LimitLayer::User);
        ask(&mut l, light).expect("another user behind the same address is served");
        // The heavy user from another address is still the heavy user.
        let moved = Who {
            address: "10.9.9.9",
            ..heavy
        };
        assert_eq!(ask(&mut l, moved).unwrap_err().layer, LimitLayer::User);
        assert_eq!(l.refused(LimitLayer::User), 2);
        assert_eq!(
            l.refused(LimitLayer::Address),
            0,
            "users never count at the address layer"
        );
    }

    #[test]
    fn many_sessions_of_one_address_do_not_use_up_the_connector() {
        let mut l = ClientLimits::new(ClientLimitConfig {
            max_tracked: 100,
            ..tiny()
        });
        let mut passed = 0;
        for i in 0..40 {
            match l.check(Instant::ZERO, "obv", &format!("s{i}"), "10.0.0.1") {
                Ok(()) => passed += 1,
                Err(t) => assert_eq!(t.layer, LimitLayer::Address),
            }
        }
        assert_eq!(passed, 5, "the address's burst, however many sessions it opens");
        l.check(Instant::ZERO, "obv", "elsewhere", "10.0.0.2")
            .expect("another address still gets in");
        assert_eq!(l.refused(LimitLayer::Address), 35);
    }

    #[test]
    fn a_session_gets_its_burst_then_an_honest_retry_after() {
        let mut l = ClientLimits::new(tiny());
        for _ in 0..3 {
            l.check(Instant::ZERO, "obv", "s1", "s1").expect("within the burst");
        }
        let t = l.check(Instant::ZERO, "obv", "s1", "s1").unwrap_err();
        assert_eq!((t.layer, t.retry_after_secs), (LimitLayer::Session, 1));
        // Waiting exactly that long gets in.
        l.check(Instant::from_secs(t.retry_after_secs), "obv", "s1", "s1")
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
        l.check(Instant::ZERO, "obv", "s", "s").expect("first");
        let t = l.check(Instant::from_millis(100), "obv", "s", "s").unwrap_err();
        assert_eq!(t.wait, Duration::from_millis(1400));
        assert_eq!(t.retry_after_secs, 2, "1.4 s rounds up");
        assert!(l.check(Instant::from_millis(1499), "obv", "s", "s").is_err());
        assert!(l.check(Instant::from_millis(1500), "obv", "s", "s").is_ok());
    }

    #[test]
    fn a_refusal_at_one_layer_costs_nothing_at_the_others() {
        let mut l = ClientLimits::new(tiny());
        for _ in 0..3 {
            l.check(Instant::ZERO, "obv", "flood", "flood").expect("burst");
        }
        for _ in 0..50 {
            assert!(l.check(Instant::ZERO, "obv", "flood", "flood").is_err());
        }
        // The connector layer only counted the three that passed.
        for i in 0..17 {
            l.check(Instant::ZERO, "obv", &format!("other{i}"), &format!("other{i}"))
                .expect("connector burst left");
        }
    }

    #[test]
    fn a_flood_on_one_connector_leaves_another_alone() {
        let mut l = ClientLimits::new(tiny());
        let mut refused_at = None;
        for i in 0..100 {
            if let Err(t) = l.check(Instant::ZERO, "obv", &format!("s{i}"), &format!("s{i}")) {
                refused_at = Some(t.layer);
                break;
            }
        }
        assert_eq!(refused_at, Some(LimitLayer::Connector));
        l.check(Instant::ZERO, "tk", "someone", "someone")
            .expect("the other connector still answers");
    }

    #[test]
    fn tracked_state_stays_bounded_and_full_allowances_are_dropped() {
        let mut l = ClientLimits::new(tiny());
        for i in 0..10 {
            l.check(Instant::from_millis(i), "obv", &format!("s{i}"), &format!("s{i}"))
                .expect("fresh session");
        }
        assert!(l.tracked_sessions() <= 4);
        l.check(Instant::from_secs(3600), "obv", "late", "late").expect("fresh");
        assert_eq!(l.tracked_sessions(), 1, "an hour later only the newcomer holds state");
    }

    /// The reference for the lazy filing: every key filed eagerly by its bucket's real
    /// full-again instant (as the store did before), swept and evicted from the front.
    #[derive(Default)]
    struct Eager {
        buckets: BTreeMap<String, Bucket>,
    }

    impl Eager {
        fn front(&self) -> Option<String> {
            self.buckets
                .iter()
                .min_by_key(|(k, b)| (b.full_at(), (*k).clone()))
                .map(|(k, _)| k.clone())
        }

        fn sweep(&mut self, now: Instant) {
            self.buckets.retain(|_, b| b.full_at() > now);
        }

        fn commit(&mut self, fresh: Bucket, max_keys: usize, now: Instant, key: &str) {
            if !self.buckets.contains_key(key) {
                if self.buckets.len() >= max_keys {
                    self.sweep(now);
                }
                while self.buckets.len() >= max_keys {
                    let Some(k) = self.front() else { break };
                    self.buckets.remove(&k);
                }
                self.buckets.insert(key.to_owned(), fresh);
            }
            self.buckets.get_mut(key).expect("present").debit(now, Units::ONE);
        }
    }

    #[test]
    fn qc_lazy_filing_keeps_and_drops_what_eager_filing_does() {
        fn prop(rate: u8, burst: u8, max_keys: u8, steps: Vec<(u16, u8, bool)>) -> quickcheck::TestResult {
            let limit = RateLimit {
                requests_per_minute: [6, 60, 600][usize::from(rate) % 3],
                burst: u32::from(burst % 4) + 1,
            };
            let max_keys = usize::from(max_keys % 5) + 1;
            let mut lazy = Keyed::new(limit, max_keys);
            let mut eager = Eager::default();
            let mut now = Instant::ZERO;
            for (gap_ms, key, sweep) in steps {
                now = now + Duration::from_millis(u64::from(gap_ms % 4000));
                let key = format!("k{}", key % 7);
                if sweep {
                    lazy.sweep_due(now);
                    eager.sweep(now);
                }
                if lazy.probe(now, &key).is_zero() {
                    lazy.commit(now, &key);
                    eager.commit(limit.bucket(), max_keys, now, &key);
                }
                if let Err(e) = lazy.check_invariants() {
                    return quickcheck::TestResult::error(e);
                }
                // What carries information: the keys not full again (a full one probes
                // as a fresh bucket, kept or not).
                let kept: BTreeMap<String, Instant> = lazy
                    .buckets
                    .iter()
                    .filter(|(_, (b, _))| b.full_at() > now)
                    .map(|(k, (b, _))| (k.to_string(), b.full_at()))
                    .collect();
                let want: BTreeMap<String, Instant> = eager
                    .buckets
                    .iter()
                    .filter(|(_, b)| b.full_at() > now)
                    .map(|(k, b)| (k.clone(), b.full_at()))
                    .collect();
                if kept != want {
                    return quickcheck::TestResult::error(format!("at {now:?}: kept {kept:?}, eager keeps {want:?}"));
                }
            }
            quickcheck::TestResult::passed()
        }
        quickcheck::QuickCheck::new()
            .tests(500)
            .quickcheck(prop as fn(u8, u8, u8, Vec<(u16, u8, bool)>) -> quickcheck::TestResult);
    }

    /// The reference: a naive token bucket per key in exact integers (a request is
    /// 60e9 units; `rpm` units flow in per nanosecond, up to `burst` requests' worth).
    #[derive(Default)]
    struct Naive {
        level_at: BTreeMap<String, (u128, u64)>,
    }

    impl Naive {
        fn check(&mut self, limit: RateLimit, now_ns: u64, key: &str) -> Result<(), Duration> {
            const ONE: u128 = 60_000_000_000;
            let cap = ONE * u128::from(limit.burst);
            let rpm = u128::from(limit.requests_per_minute);
            let (level, at) = self.level_at.get(key).copied().unwrap_or((cap, now_ns));
            let level = (level + u128::from(now_ns - at) * rpm).min(cap);
            if level >= ONE {
                self.level_at.insert(key.to_owned(), (level - ONE, now_ns));
                Ok(())
            } else {
                self.level_at.insert(key.to_owned(), (level, now_ns));
                Err(Duration::from_nanos(((ONE - level).div_ceil(rpm)) as u64))
            }
        }
    }

    #[test]
    fn qc_the_session_layer_is_the_naive_token_bucket() {
        // Rates that divide a minute into whole nanoseconds, so the bucket's window is exact.
        const RPMS: [u32; 8] = [1, 3, 8, 40, 60, 120, 600, 1_000];
        fn prop(rate: u8, burst: u8, steps: Vec<(u16, u8)>) -> bool {
            let limit = RateLimit {
                requests_per_minute: RPMS[usize::from(rate) % RPMS.len()],
                burst: u32::from(burst % 6) + 1,
            };
            let roomy = RateLimit {
                requests_per_minute: 6_000_000,
                burst: 1_000_000,
            };
            let mut l = ClientLimits::new(ClientLimitConfig {
                process: roomy,
                per_connector: roomy,
                per_address: roomy,
                per_session: limit,
                per_user: roomy,
                max_tracked: 1_000,
            });
            let mut naive = Naive::default();
            let mut now = Instant::ZERO;
            for (dt_ms, who) in steps {
                now = now + Duration::from_millis(u64::from(dt_ms % 5_000));
                let key = format!("s{}", who % 3);
                let got = l.check(now, "obv", &key, &key).map_err(|t| t.wait);
                if got != naive.check(limit, now.as_nanos(), &key) {
                    return false;
                }
            }
            true
        }
        quickcheck::QuickCheck::new()
            .tests(500)
            .quickcheck(prop as fn(u8, u8, Vec<(u16, u8)>) -> bool);
    }

    #[test]
    fn qc_all_four_layers_together_are_naive_token_buckets() {
        const RPMS: [u32; 6] = [3, 8, 40, 60, 120, 600];
        fn prop(rates: (u8, u8, u8, u8), bursts: (u8, u8, u8, u8), steps: Vec<(u16, u8, u8)>) -> bool {
            let limit = |r: u8, b: u8| RateLimit {
                requests_per_minute: RPMS[usize::from(r) % RPMS.len()],
                burst: u32::from(b % 6) + 1,
            };
            let layers = [
                limit(rates.0, bursts.0),
                limit(rates.1, bursts.1),
                limit(rates.2, bursts.2),
                limit(rates.3, bursts.3),
            ];
            let mut l = ClientLimits::new(ClientLimitConfig {
                process: layers[0],
                per_connector: layers[1],
                per_address: layers[2],
                per_session: layers[3],
                per_user: layers[2],
                max_tracked: 1_000,
            });
            let mut naive: [Naive; 4] = Default::default();
            let mut now = Instant::ZERO;
            for (dt_ms, c, who) in steps {
                now = now + Duration::from_millis(u64::from(dt_ms % 3_000));
                let connector_key = if c % 2 == 0 { "obv" } else { "tk" };
                // Sessions s0..s5 of two addresses: s0, s2, s4 at a0; s1, s3, s5 at a1.
                let session_key = format!("s{}", who % 6);
                let address_key = format!("a{}", who % 2);
                let got = l.check(now, connector_key, &session_key, &address_key).is_ok();
                // The reference commits to all four only when all four allow.
                let before: Vec<_> = naive.iter().map(|n| n.level_at.clone()).collect();
                let keys = ["", connector_key, &address_key, &session_key];
                let mut allowed = true;
                for ((n, layer), key) in naive.iter_mut().zip(layers).zip(keys) {
                    allowed &= n.check(layer, now.as_nanos(), key).is_ok();
                }
                if !allowed {
                    for (n, b) in naive.iter_mut().zip(before) {
                        n.level_at = b;
                    }
                }
                if got != allowed {
                    return false;
                }
            }
            true
        }
        quickcheck::QuickCheck::new()
            .tests(500)
            .quickcheck(prop as fn((u8, u8, u8, u8), (u8, u8, u8, u8), Vec<(u16, u8, u8)>) -> bool);
    }
}
