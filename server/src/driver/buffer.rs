//! [`ServerBuffer`]: one platform's buffer as its path uses it — the redb file, a
//! bounded in-memory layer of recently used answers (typed, so a repeat skips the
//! database, the checksum and the JSON parse), and writes behind.
//!
//! Only the platform's task touches it (the path owns it), so nothing here locks.
//!
//! Invariants:
//! - a lookup sees every answer stored before it, whether or not its write has reached
//!   the file (the memory layer or the pending writes hold it meanwhile);
//! - the memory layer keeps each answer's own expiry, computed exactly as the file's
//!   entry (`now` + the class's lifetime, capped by the answer's [`Keep`]), and holds at
//!   most [`HOT_BYTES_MAX`] bytes of payload;
//! - a write that fails is logged and dropped: a buffer failure never turns an answer
//!   into a failure (and never stores a failure, R-C5: the path only stores successes);
//! - [`ServerBuffer::flush`] waits for every write, so a graceful stop loses nothing.
//!
//! The file's reads run on the platform's task: redb serves them from its page cache
//! in microseconds. Its writes commit with fsync and run on the blocking pool.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, CacheStore, Lookup, PlatformCachePolicy, StaleLookup, Success};
use besluitbron_core::path::{Buffer, Keep, StaleAnswer};
use besluitbron_core::{PlatformId, WallTime};
use tokio::task::JoinSet;

use super::payload::{Payload, SharedPayload};
use crate::store::RedbStore;

/// What one platform's memory layer may hold, in payload bytes.
pub const HOT_BYTES_MAX: usize = 24 << 20;

/// An answer larger than this share of the memory layer is not kept there (it would
/// push out everything else); its pending write still makes it visible until written.
const HOT_ENTRY_MAX: usize = HOT_BYTES_MAX / 8;

/// One platform's buffer: the file, the memory layer and the writes under way.
pub struct ServerBuffer {
    platform: PlatformId,
    store: Option<Arc<RedbStore>>,
    policy: PlatformCachePolicy,
    hot: Hot,
    /// Answers whose write has not finished: (write number, answer, expiry).
    pending: HashMap<CacheKey, (u64, SharedPayload, WallTime)>,
    writes: JoinSet<(CacheKey, u64)>,
    next_write: u64,
}

struct Hot {
    entries: HashMap<CacheKey, (SharedPayload, WallTime, u64)>,
    order: BTreeMap<u64, CacheKey>,
    bytes: usize,
    next: u64,
}

impl Hot {
    fn get(&mut self, key: &CacheKey, now: WallTime) -> Option<SharedPayload> {
        let (payload, expires_at, seq) = self.entries.get(key)?;
        if now >= *expires_at {
            self.remove(key);
            return None;
        }
        let (payload, seq) = (Arc::clone(payload), *seq);
        // Most recently used last.
        self.order.remove(&seq);
        let fresh = self.next;
        self.next += 1;
        self.order.insert(fresh, key.clone());
        if let Some(e) = self.entries.get_mut(key) {
            e.2 = fresh;
        }
        Some(payload)
    }

    fn put(&mut self, key: &CacheKey, payload: SharedPayload, expires_at: WallTime) {
        self.remove(key);
        let size = payload.bytes().len();
        if size > HOT_ENTRY_MAX {
            return;
        }
        while self.bytes + size > HOT_BYTES_MAX {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some((p, ..)) = self.entries.remove(&oldest) {
                self.bytes -= p.bytes().len();
            }
        }
        let seq = self.next;
        self.next += 1;
        self.bytes += size;
        self.order.insert(seq, key.clone());
        self.entries.insert(key.clone(), (payload, expires_at, seq));
    }

    fn remove(&mut self, key: &CacheKey) {
        if let Some((p, _, seq)) = self.entries.remove(key) {
            self.bytes -= p.bytes().len();
            self.order.remove(&seq);
        }
    }
}

impl ServerBuffer {
    /// The buffer of `platform` over its file (`None`: the file could not be opened, so
    /// nothing is kept), with the file's `policy`.
    pub fn new(platform: PlatformId, store: Option<Arc<RedbStore>>, policy: PlatformCachePolicy) -> ServerBuffer {
        ServerBuffer {
            platform,
            store,
            policy,
            hot: Hot {
                entries: HashMap::new(),
                order: BTreeMap::new(),
                bytes: 0,
                next: 0,
            },
            pending: HashMap::new(),
            writes: JoinSet::new(),
            next_write: 0,
        }
    }

    /// Writes not yet reported done.
    pub fn pending_writes(&self) -> usize {
        self.writes.len()
    }

    /// Waits for every write under way.
    pub async fn flush(&mut self) {
        while let Some(done) = self.writes.join_next().await {
            self.finished(done);
        }
    }

    fn reap(&mut self) {
        while let Some(done) = self.writes.try_join_next() {
            self.finished(done);
        }
    }

    fn finished(&mut self, done: Result<(CacheKey, u64), tokio::task::JoinError>) {
        match done {
            Ok((key, seq)) => {
                if self.pending.get(&key).is_some_and(|(s, ..)| *s == seq) {
                    self.pending.remove(&key);
                }
            }
            Err(error) => tracing::warn!(platform = %self.platform, %error, "a buffer write did not finish"),
        }
    }

    fn expires_at(&self, key: &CacheKey, keep: Keep, now: WallTime) -> WallTime {
        let ttl_ms = self.policy.class(key.class()).ttl_ms;
        let ttl_ms = match keep {
            Keep::Briefly { ttl_ms: cap } => cap.min(ttl_ms),
            Keep::Normal | Keep::Never => ttl_ms,
        };
        WallTime(now.unix_millis().saturating_add(ttl_ms))
    }
}

impl Buffer for ServerBuffer {
    type Payload = SharedPayload;

    fn lookup(&mut self, key: &CacheKey, now: WallTime) -> Option<SharedPayload> {
        self.reap();
        if let Some(p) = self.hot.get(key, now) {
            return Some(p);
        }
        // Too large for the memory layer and not yet written: the file still holds an
        // older entry or none.
        if let Some((_, p, expires_at)) = self.pending.get(key)
            && now < *expires_at
        {
            return Some(Arc::clone(p));
        }
        let store = self.store.as_ref()?;
        match store.lookup(key, now) {
            Ok(Lookup::Hit(value)) => {
                let expires_at = value.header().expires_at;
                let payload = Payload::from_bytes(value.into_payload());
                self.hot.put(key, Arc::clone(&payload), expires_at);
                Some(payload)
            }
            Ok(Lookup::Expired { .. } | Lookup::OtherVersion { .. } | Lookup::Miss) => None,
            Err(error) => {
                tracing::warn!(platform = %self.platform, %error, "buffer lookup failed; asking the platform");
                None
            }
        }
    }

    fn stale(&mut self, key: &CacheKey, now: WallTime) -> Option<StaleAnswer<SharedPayload>> {
        self.reap();
        let store = self.store.as_ref()?;
        match store.lookup_stale_if_error(key, now) {
            Ok(StaleLookup::Fresh(v)) => Some(StaleAnswer::Fresh(Payload::from_bytes(v.into_payload()))),
            Ok(StaleLookup::Stale(v)) => Some(StaleAnswer::Stale(Payload::from_bytes(v.into_payload()))),
            Ok(StaleLookup::Unavailable) => None,
            Err(error) => {
                tracing::warn!(platform = %self.platform, %error, "buffer lookup failed after a platform failure");
                None
            }
        }
    }

    fn store(&mut self, key: &CacheKey, payload: &SharedPayload, keep: Keep, now: WallTime) {
        self.reap();
        let Some(store) = self.store.clone() else {
            return;
        };
        let success = match keep {
            Keep::Never => return,
            Keep::Normal => Success::new(payload.bytes().to_vec()),
            Keep::Briefly { ttl_ms } => Success::new(payload.bytes().to_vec()).kept_at_most(ttl_ms),
        };
        let expires_at = self.expires_at(key, keep, now);
        self.hot.put(key, Arc::clone(payload), expires_at);
        let seq = self.next_write;
        self.next_write += 1;
        self.pending.insert(key.clone(), (seq, Arc::clone(payload), expires_at));
        let key = key.clone();
        let platform = self.platform;
        self.writes.spawn_blocking(move || {
            if let Err(error) = store.put(&key, &success, now) {
                tracing::warn!(%platform, %error, "could not buffer an answer");
            }
            (key, seq)
        });
    }
}
