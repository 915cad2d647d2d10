//! What the path asks of a platform's buffer, and [`StoreBuffer`], the adapter over any
//! [`CacheStore`] (the simulator's [`crate::MemoryStore`], tests' stores).
//!
//! The trait is synchronous: the path calls it inside its own step. A shell whose
//! storage is slow to write (the server's redb file commits with fsync) makes the entry
//! visible in memory at once and writes it behind; a lookup must then already see it.
//! What an entry means (fresh, expired, another version's, within its stale-if-error
//! window) is decided by the store through [`crate::cache::classify`] and
//! [`crate::cache::stale_lookup`], both in this crate.

use std::sync::Arc;

use crate::WallTime;
use crate::cache::{CacheKey, CacheStore, Lookup, StaleLookup, StoreError, Success};

/// How long an answer may be kept.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Keep {
    /// As long as its data class allows.
    #[default]
    Normal,
    /// At most this long (or its class's lifetime when shorter): the platform marked the
    /// answer incomplete, or it carries a warning.
    Briefly {
        /// The cap, in milliseconds.
        ttl_ms: u64,
    },
    /// Not at all: the answer goes to its waiters only.
    Never,
}

/// What may stand in for a failed platform call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StaleAnswer<P> {
    /// A fresh entry (stored since the request's lookup).
    Fresh(P),
    /// An expired entry inside its class's stale-if-error window.
    Stale(P),
}

/// One platform's buffer as the path uses it.
pub trait Buffer {
    /// What an answer is held as (bytes, or bytes with a parsed form).
    type Payload: Clone;

    /// A fresh answer for `key` at `now`, if one is kept.
    fn lookup(&mut self, key: &CacheKey, now: WallTime) -> Option<Self::Payload>;

    /// After the platform failed: a fresh entry, or an expired one its data class allows
    /// to be served stale; never another version's.
    fn stale(&mut self, key: &CacheKey, now: WallTime) -> Option<StaleAnswer<Self::Payload>>;

    /// Keeps a success (never anything else: the path calls this only for successes).
    fn store(&mut self, key: &CacheKey, payload: &Self::Payload, keep: Keep, now: WallTime);

    /// An expired entry of this version for `key` that the platform may be asked to
    /// confirm (a conditional request); `None` by default, and never another version's.
    fn expired(&mut self, _key: &CacheKey, _now: WallTime) -> Option<Self::Payload> {
        None
    }
}

/// A [`Buffer`] over a [`CacheStore`], holding answers as shared bytes. Store failures
/// never turn an answer into a failure: they are counted and kept for inspection.
#[derive(Debug)]
pub struct StoreBuffer<S> {
    store: S,
    errors: Vec<String>,
}

impl<S: CacheStore> StoreBuffer<S> {
    /// The adapter over `store`.
    pub fn new(store: S) -> StoreBuffer<S> {
        StoreBuffer {
            store,
            errors: Vec::new(),
        }
    }

    /// The store underneath.
    pub fn store(&self) -> &S {
        &self.store
    }

    /// Store failures met so far, in order (each already handled: a miss, or not kept).
    pub fn errors(&self) -> &[String] {
        &self.errors
    }

    fn note(&mut self, e: StoreError) {
        self.errors.push(e.to_string());
    }
}

impl<S: CacheStore> Buffer for StoreBuffer<S> {
    type Payload = Arc<[u8]>;

    fn lookup(&mut self, key: &CacheKey, now: WallTime) -> Option<Arc<[u8]>> {
        match self.store.lookup(key, now) {
            Ok(Lookup::Hit(value)) => Some(Arc::from(value.into_payload())),
            Ok(Lookup::Expired { .. } | Lookup::OtherVersion { .. } | Lookup::Miss) => None,
            Err(e) => {
                self.note(e);
                None
            }
        }
    }

    fn stale(&mut self, key: &CacheKey, now: WallTime) -> Option<StaleAnswer<Arc<[u8]>>> {
        match self.store.lookup_stale_if_error(key, now) {
            Ok(StaleLookup::Fresh(v)) => Some(StaleAnswer::Fresh(Arc::from(v.into_payload()))),
            Ok(StaleLookup::Stale(v)) => Some(StaleAnswer::Stale(Arc::from(v.into_payload()))),
            Ok(StaleLookup::Unavailable) => None,
            Err(e) => {
                self.note(e);
                None
            }
        }
    }

    fn expired(&mut self, key: &CacheKey, now: WallTime) -> Option<Arc<[u8]>> {
        match self.store.lookup_expired(key, now) {
            Ok(found) => found.map(|v| Arc::from(v.into_payload())),
            Err(e) => {
                self.note(e);
                None
            }
        }
    }

    fn store(&mut self, key: &CacheKey, payload: &Arc<[u8]>, keep: Keep, now: WallTime) {
        let success = match keep {
            Keep::Never => return,
            Keep::Normal => Success::new(payload.to_vec()),
            Keep::Briefly { ttl_ms } => Success::new(payload.to_vec()).kept_at_most(ttl_ms),
        };
        if let Err(e) = self.store.put(key, &success, now) {
            self.note(e);
        }
    }
}
