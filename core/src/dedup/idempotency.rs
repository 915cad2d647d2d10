//! Idempotent replays (R-D2, R-D6): a retry of one operation gets the first result.
//!
//! A request key is scoped: to an MCP session (where the protocol forbids reusing a
//! JSON-RPC id, so a repeated id *is* a retry), or to a client address for an explicit
//! `Idempotency-Key` header without a session. The table remembers, per scoped key, the
//! request's fingerprint (its canonical form) and its state:
//!
//! - in flight: a retry with the same fingerprint joins it;
//! - done: a retry with the same fingerprint within the window gets the stored result;
//! - either, with another fingerprint: a conflict — the key was reused for another
//!   request, answered with a clear error as the IETF Idempotency-Key draft does.
//!
//! A failure (429, 5xx, time-out upstream) releases the key, so a retry really runs
//! again (R-D8). Operations that must happen every time are never given a key (R-D6);
//! that choice is the caller's, by not calling this table.
//!
//! Invariants: at most `max_entries` keys and at most `max_bytes` of kept results (as
//! weighed by the caller); a done entry is never returned after its window; nothing is
//! stored for a failure.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use crate::time::Instant;

/// Whose key space a request key belongs to.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ReplayScope {
    /// An MCP session (`Mcp-Session-Id`).
    Session(Arc<str>),
    /// A client address, for `Idempotency-Key` requests without a session.
    Client(Arc<str>),
}

/// How long results are kept and how many keys at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdempotencyConfig {
    /// How long a completed request's result answers retries.
    pub window: Duration,
    /// Most keys remembered at once; past it the oldest completed entries go first.
    pub max_entries: usize,
    /// Most bytes of kept results at once (see [`IdempotencyTable::complete_sized`]);
    /// past it the oldest completed entries go first.
    pub max_bytes: u64,
}

impl Default for IdempotencyConfig {
    /// Ten minutes, 100,000 keys, 256 MiB of results.
    fn default() -> Self {
        IdempotencyConfig {
            window: Duration::from_secs(600),
            max_entries: 100_000,
            max_bytes: 256 << 20,
        }
    }
}

/// What [`IdempotencyTable::begin`] decided.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum IdempotentStart<V> {
    /// A new key: run the request, then call [`IdempotencyTable::complete`].
    Fresh,
    /// The same request runs now: wait for its outcome.
    InFlight,
    /// The same request completed within the window: this is its result.
    Replay(V),
    /// The key was used for another request: refuse with a clear error.
    Conflict,
    /// The table is full of requests in flight: run the request without replay
    /// protection (it is not remembered).
    Untracked,
}

#[derive(Clone, Debug)]
enum State<V> {
    InFlight,
    Done { value: V, expires_at: Instant, bytes: u64 },
}

#[derive(Clone, Debug)]
struct Entry<V> {
    fingerprint: String,
    state: State<V>,
}

type Key = (ReplayScope, String);

/// Request keys per scope, with their fingerprints and results.
#[derive(Clone, Debug)]
pub struct IdempotencyTable<V: Clone> {
    config: IdempotencyConfig,
    entries: BTreeMap<Key, Entry<V>>,
    expiry: BTreeSet<(Instant, Key)>,
    /// Bytes of the results kept now.
    bytes: u64,
    replays: u64,
    conflicts: u64,
}

impl<V: Clone> IdempotencyTable<V> {
    /// An empty table.
    pub fn new(config: IdempotencyConfig) -> Self {
        IdempotencyTable {
            config,
            entries: BTreeMap::new(),
            expiry: BTreeSet::new(),
            bytes: 0,
            replays: 0,
            conflicts: 0,
        }
    }

    /// A request with `key` in `scope` and canonical form `fingerprint` arrives at `now`.
    pub fn begin(&mut self, now: Instant, scope: &ReplayScope, key: &str, fingerprint: &str) -> IdempotentStart<V> {
        self.expire(now);
        let k = (scope.clone(), key.to_owned());
        if let Some(e) = self.entries.get(&k) {
            if e.fingerprint != fingerprint {
                self.conflicts += 1;
                return IdempotentStart::Conflict;
            }
            return match &e.state {
                State::InFlight => {
                    self.replays += 1;
                    IdempotentStart::InFlight
                }
                State::Done { value, .. } => {
                    self.replays += 1;
                    IdempotentStart::Replay(value.clone())
                }
            };
        }
        if self.entries.len() >= self.config.max_entries {
            // Make room by dropping the completed entry closest to its end.
            if !self.drop_oldest_done() {
                return IdempotentStart::Untracked;
            }
        }
        self.entries.insert(
            k,
            Entry {
                fingerprint: fingerprint.to_owned(),
                state: State::InFlight,
            },
        );
        IdempotentStart::Fresh
    }

    /// The request with `key` in `scope` finished: `Some(value)` on success keeps it
    /// for the window; `None` (a failure) releases the key so a retry runs again.
    pub fn complete(&mut self, now: Instant, scope: &ReplayScope, key: &str, outcome: Option<V>) {
        self.complete_sized(now, scope, key, outcome.map(|v| (v, 0)));
    }

    /// As [`complete`](Self::complete), with the kept value's size in bytes: while the
    /// kept results weigh more than `max_bytes`, the oldest completed entries go (this
    /// one too, if it alone is too large — its retries then run again).
    pub fn complete_sized(&mut self, now: Instant, scope: &ReplayScope, key: &str, outcome: Option<(V, u64)>) {
        let k = (scope.clone(), key.to_owned());
        let Some(entry) = self.entries.get_mut(&k) else {
            return;
        };
        if let State::Done { expires_at, bytes, .. } = entry.state {
            self.expiry.remove(&(expires_at, k.clone()));
            self.bytes -= bytes;
        }
        match outcome {
            Some((value, bytes)) => {
                let expires_at = now + self.config.window;
                entry.state = State::Done {
                    value,
                    expires_at,
                    bytes,
                };
                self.expiry.insert((expires_at, k));
                self.bytes += bytes;
                while self.bytes > self.config.max_bytes && self.drop_oldest_done() {}
            }
            None => {
                self.entries.remove(&k);
            }
        }
    }

    /// Bytes of the results kept now.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// Keys remembered now.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Retries answered (joined or replayed) since the table was made.
    pub fn replays(&self) -> u64 {
        self.replays
    }

    /// Keys reused for another request since the table was made.
    pub fn conflicts(&self) -> u64 {
        self.conflicts
    }

    fn expire(&mut self, now: Instant) {
        while let Some((at, _)) = self.expiry.first() {
            if *at > now {
                break;
            }
            self.drop_oldest_done();
        }
    }

    /// Drops the completed entry closest to its end; false when there is none.
    fn drop_oldest_done(&mut self) -> bool {
        let Some((_, k)) = self.expiry.pop_first() else {
            return false;
        };
        if let Some(Entry {
            state: State::Done { bytes, .. },
            ..
        }) = self.entries.remove(&k)
        {
            self.bytes -= bytes;
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str) -> ReplayScope {
        ReplayScope::Session(Arc::from(id))
    }

    #[test]
    fn a_retry_joins_then_replays_and_other_arguments_conflict() {
        let mut t: IdempotencyTable<&str> = IdempotencyTable::new(IdempotencyConfig::default());
        let s = session("s1");
        assert_eq!(t.begin(Instant::ZERO, &s, "7", "search{q=a}"), IdempotentStart::Fresh);
        assert_eq!(
            t.begin(Instant::ZERO, &s, "7", "search{q=a}"),
            IdempotentStart::InFlight
        );
        assert_eq!(
            t.begin(Instant::ZERO, &s, "7", "search{q=b}"),
            IdempotentStart::Conflict
        );
        t.complete(Instant::from_secs(1), &s, "7", Some("result"));
        assert_eq!(
            t.begin(Instant::from_secs(2), &s, "7", "search{q=a}"),
            IdempotentStart::Replay("result")
        );
        assert_eq!(
            t.begin(Instant::from_secs(2), &s, "7", "search{q=b}"),
            IdempotentStart::Conflict
        );
        assert_eq!((t.replays(), t.conflicts()), (2, 2));
    }

    #[test]
    fn scopes_are_separate_key_spaces() {
        let mut t: IdempotencyTable<u32> = IdempotencyTable::new(IdempotencyConfig::default());
        assert_eq!(t.begin(Instant::ZERO, &session("a"), "1", "x"), IdempotentStart::Fresh);
        assert_eq!(t.begin(Instant::ZERO, &session("b"), "1", "y"), IdempotentStart::Fresh);
        let client = ReplayScope::Client(Arc::from("192.0.2.1"));
        assert_eq!(t.begin(Instant::ZERO, &client, "1", "z"), IdempotentStart::Fresh);
    }

    #[test]
    fn a_failure_releases_the_key() {
        let mut t: IdempotencyTable<u32> = IdempotencyTable::new(IdempotencyConfig::default());
        let s = session("s");
        t.begin(Instant::ZERO, &s, "k", "x");
        t.complete(Instant::ZERO, &s, "k", None);
        assert_eq!(
            t.begin(Instant::ZERO, &s, "k", "x"),
            IdempotentStart::Fresh,
            "the retry runs again"
        );
        assert!(!t.is_empty());
    }

    #[test]
    fn results_end_with_their_window() {
        let mut t: IdempotencyTable<u32> = IdempotencyTable::new(IdempotencyConfig {
            window: Duration::from_secs(60),
            max_entries: 10,
            max_bytes: u64::MAX,
        });
        let s = session("s");
        t.begin(Instant::ZERO, &s, "k", "x");
        t.complete(Instant::ZERO, &s, "k", Some(1));
        assert_eq!(
            t.begin(Instant::from_secs(59), &s, "k", "x"),
            IdempotentStart::Replay(1)
        );
        assert_eq!(t.begin(Instant::from_secs(60), &s, "k", "x"), IdempotentStart::Fresh);
    }

    #[test]
    fn the_table_stays_bounded() {
        let mut t: IdempotencyTable<u32> = IdempotencyTable::new(IdempotencyConfig {
            window: Duration::from_secs(60),
            max_entries: 2,
            max_bytes: u64::MAX,
        });
        let s = session("s");
        t.begin(Instant::ZERO, &s, "a", "x");
        t.complete(Instant::ZERO, &s, "a", Some(1));
        t.begin(Instant::ZERO, &s, "b", "x");
        assert_eq!(
            t.begin(Instant::ZERO, &s, "c", "x"),
            IdempotentStart::Fresh,
            "the completed `a` makes room"
        );
        assert_eq!(t.len(), 2);
        assert_eq!(
            t.begin(Instant::ZERO, &s, "d", "x"),
            IdempotentStart::Untracked,
            "both in flight"
        );
    }

    #[test]
    fn kept_results_stay_within_their_byte_budget() {
        let mut t: IdempotencyTable<u32> = IdempotencyTable::new(IdempotencyConfig {
            window: Duration::from_secs(60),
            max_entries: 100,
            max_bytes: 100,
        });
        let s = session("s");
        for (i, key) in ["a", "b", "c"].into_iter().enumerate() {
            let at = Instant::from_secs(i as u64);
            t.begin(at, &s, key, "x");
            t.complete_sized(at, &s, key, Some((1, 40)));
        }
        // 120 bytes: the oldest result (`a`) went, `b` and `c` are replayed.
        assert_eq!(t.bytes(), 80);
        assert_eq!(t.begin(Instant::from_secs(3), &s, "a", "x"), IdempotentStart::Fresh);
        assert_eq!(t.begin(Instant::from_secs(3), &s, "b", "x"), IdempotentStart::Replay(1));
        // A result larger than the whole budget is not kept at all.
        t.begin(Instant::from_secs(3), &s, "big", "x");
        t.complete_sized(Instant::from_secs(3), &s, "big", Some((2, 101)));
        assert_eq!(t.bytes(), 0, "everything older went first, then the result itself");
        assert_eq!(t.begin(Instant::from_secs(4), &s, "big", "x"), IdempotentStart::Fresh);
        // Expiry gives the bytes back too.
        t.complete_sized(Instant::from_secs(4), &s, "big", Some((3, 10)));
        t.begin(Instant::from_secs(100), &s, "z", "x");
        assert_eq!(t.bytes(), 0);
    }
}
