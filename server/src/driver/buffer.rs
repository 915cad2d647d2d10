//! [`ServerBuffer`]: one platform's buffer as its path uses it — the redb file, a
//! bounded in-memory layer of recently used answers (typed, so a repeat skips the
//! database, the checksum and the JSON parse), and writes behind.
//!
//! Only the platform's task writes it (the path owns it). The memory layer is also read
//! by the platform's handles: a fresh answer there is served in the caller's own task,
//! by the same lookup the path would make, without the trip through the task's channel
//! (two cross-thread wake-ups per cached call). A miss goes to the task, whose path
//! decides everything else. The layer's lock is held for one map operation.
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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

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
    hot: MemoryLayer,
    /// Answers whose write has not finished: (write number, answer, expiry).
    pending: HashMap<CacheKey, (u64, SharedPayload, WallTime)>,
    writes: JoinSet<(CacheKey, u64)>,
    /// Writes whose commit has not returned yet. `writes` also holds finished writes
    /// until they are reaped (at the next lookup or store), so it cannot say this.
    unfinished: Arc<AtomicUsize>,
    next_write: u64,
}

/// Counts one write as finished when dropped: after its commit, or if it panicked.
struct WriteDone(Arc<AtomicUsize>);

impl Drop for WriteDone {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// The memory layer of one platform's buffer, shared by its task and its handles.
#[derive(Clone)]
pub struct MemoryLayer(Arc<Mutex<Hot>>);

impl std::fmt::Debug for MemoryLayer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MemoryLayer")
    }
}

impl MemoryLayer {
    fn new() -> MemoryLayer {
        MemoryLayer(Arc::new(Mutex::new(Hot::new(HOT_BYTES_MAX, HOT_ENTRY_MAX))))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Hot> {
        // Nothing panics while holding the lock; if something ever did, the maps are
        // still consistent between operations, so the layer stays usable.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh answer for `key` at `now`, if the layer holds one (an expired one is
    /// dropped on the way).
    pub fn get(&self, key: &CacheKey, now: WallTime) -> Option<SharedPayload> {
        self.lock().get(key, now)
    }

    fn put(&self, key: &CacheKey, payload: SharedPayload, expires_at: WallTime) {
        self.lock().put(key, payload, expires_at);
    }

    /// Payload bytes held now (at most [`HOT_BYTES_MAX`]).
    pub fn bytes(&self) -> usize {
        self.lock().bytes
    }
}

struct Hot {
    /// The most payload bytes held, and the largest one payload taken.
    max_bytes: usize,
    max_entry: usize,
    /// foldhash, not SipHash: a hit hashes its key (platform, operation and every
    /// parameter) once, and this lookup is on every cached call.
    entries: HashMap<CacheKey, HotEntry, foldhash::fast::RandomState>,
    /// Keys by the use they were filed under; a key used since is filed again, lazily,
    /// when it reaches the front (so a hit touches no tree and clones no key).
    order: BTreeMap<u64, CacheKey>,
    bytes: usize,
    next: u64,
}

struct HotEntry {
    payload: SharedPayload,
    expires_at: WallTime,
    /// The use `order` files this entry under.
    filed: u64,
    /// Its latest use.
    used: u64,
}

impl Hot {
    fn new(max_bytes: usize, max_entry: usize) -> Hot {
        Hot {
            max_bytes,
            max_entry,
            entries: HashMap::default(),
            order: BTreeMap::new(),
            bytes: 0,
            next: 0,
        }
    }

    fn get(&mut self, key: &CacheKey, now: WallTime) -> Option<SharedPayload> {
        let entry = self.entries.get_mut(key)?;
        if now >= entry.expires_at {
            self.remove(key);
            return None;
        }
        entry.used = self.next;
        self.next += 1;
        Some(Arc::clone(&entry.payload))
    }

    fn put(&mut self, key: &CacheKey, payload: SharedPayload, expires_at: WallTime) {
        self.remove(key);
        let size = payload.bytes().len();
        if size > self.max_entry {
            return;
        }
        while self.bytes + size > self.max_bytes {
            let Some((filed, oldest)) = self.order.pop_first() else {
                break;
            };
            // Least recently filed; if it was used since, file it under that use and
            // look again: what leaves is the least recently used.
            let Some(entry) = self.entries.get_mut(&oldest) else {
                continue;
            };
            if entry.used > filed {
                entry.filed = entry.used;
                self.order.insert(entry.used, oldest);
                continue;
            }
            if let Some(gone) = self.entries.remove(&oldest) {
                self.bytes -= gone.payload.bytes().len();
            }
        }
        let seq = self.next;
        self.next += 1;
        self.bytes += size;
        self.order.insert(seq, key.clone());
        self.entries.insert(
            key.clone(),
            HotEntry {
                payload,
                expires_at,
                filed: seq,
                used: seq,
            },
        );
    }

    fn remove(&mut self, key: &CacheKey) {
        if let Some(gone) = self.entries.remove(key) {
            self.bytes -= gone.payload.bytes().len();
            self.order.remove(&gone.filed);
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
            hot: MemoryLayer::new(),
            pending: HashMap::new(),
            writes: JoinSet::new(),
            unfinished: Arc::new(AtomicUsize::new(0)),
            next_write: 0,
        }
    }

    /// The platform whose buffer this is.
    pub fn platform(&self) -> PlatformId {
        self.platform
    }

    /// The memory layer, for the platform's handles.
    pub fn memory_layer(&self) -> MemoryLayer {
        self.hot.clone()
    }

    /// Writes whose commit has not returned yet (0 once every answer stored is on disk).
    pub fn pending_writes(&self) -> usize {
        self.unfinished.load(Ordering::SeqCst)
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

impl ServerBuffer {
    /// A fresh answer for `key`: the memory layer, a write still pending, the file.
    fn look(&mut self, key: &CacheKey, now: WallTime) -> Option<SharedPayload> {
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
}

impl Buffer for ServerBuffer {
    type Payload = SharedPayload;

    fn lookup(&mut self, key: &CacheKey, now: WallTime) -> Option<SharedPayload> {
        // Traced only inside a traced call (the platform task enters the asking call's
        // span): a lookup of the task's own is no trace of its own.
        if tracing::Span::current().is_none() {
            return self.look(key, now);
        }
        let span = crate::telemetry::spans::buffer_lookup("store");
        let found = span.in_scope(|| self.look(key, now));
        crate::telemetry::spans::found(&span, found.is_some());
        found
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

    fn expired(&mut self, key: &CacheKey, now: WallTime) -> Option<SharedPayload> {
        self.reap();
        // A write still pending is the newest copy; the file may hold an older one.
        if let Some((_, p, expires_at)) = self.pending.get(key) {
            return (now >= *expires_at).then(|| Arc::clone(p));
        }
        let store = self.store.as_ref()?;
        match store.lookup_expired(key, now) {
            Ok(found) => found.map(|v| Payload::from_bytes(v.into_payload())),
            Err(error) => {
                tracing::warn!(platform = %self.platform, %error, "buffer lookup of an expired copy failed");
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
        self.unfinished.fetch_add(1, Ordering::SeqCst);
        let done = WriteDone(Arc::clone(&self.unfinished));
        self.writes.spawn_blocking(move || {
            let _done = done;
            if let Err(error) = store.put(&key, &success, now) {
                tracing::warn!(%platform, %error, "could not buffer an answer");
            }
            (key, seq)
        });
    }
}

#[cfg(test)]
mod tests {
    use besluitbron_core::cache::DataClass;
    use quickcheck::{QuickCheck, TestResult};

    use super::*;

    fn key(k: u8) -> CacheKey {
        CacheKey::new(crate::platforms::obv::PLATFORM, DataClass::Search, "search").param("k", k.to_string())
    }

    /// The reference: keys from least to most recently used, and their sizes.
    #[derive(Default)]
    struct Lru {
        order: Vec<(u8, usize)>,
    }

    impl Lru {
        fn get(&mut self, k: u8) -> bool {
            match self.order.iter().position(|e| e.0 == k) {
                Some(i) => {
                    let e = self.order.remove(i);
                    self.order.push(e);
                    true
                }
                None => false,
            }
        }

        fn put(&mut self, k: u8, size: usize, max_bytes: usize, max_entry: usize) {
            self.order.retain(|e| e.0 != k);
            if size > max_entry {
                return;
            }
            while self.order.iter().map(|e| e.1).sum::<usize>() + size > max_bytes && !self.order.is_empty() {
                self.order.remove(0);
            }
            self.order.push((k, size));
        }
    }

    #[test]
    fn qc_the_memory_layer_keeps_the_most_recently_used_within_its_bytes() {
        fn prop(ops: Vec<(bool, u8, u8)>) -> TestResult {
            let (max_bytes, max_entry) = (100, 40);
            let mut hot = Hot::new(max_bytes, max_entry);
            let mut lru = Lru::default();
            let now = WallTime(0);
            let later = WallTime(u64::MAX);
            for (put, k, size) in ops {
                let k = k % 8;
                if put {
                    let size = usize::from(size % 45) + 1;
                    hot.put(&key(k), Payload::from_bytes(vec![b' '; size]), later);
                    lru.put(k, size, max_bytes, max_entry);
                } else if hot.get(&key(k), now).is_some() != lru.get(k) {
                    return TestResult::error(format!("get {k} disagrees"));
                }
                let held: usize = lru.order.iter().map(|e| e.1).sum();
                if hot.bytes != held || hot.entries.len() != lru.order.len() || hot.bytes > max_bytes {
                    return TestResult::error(format!(
                        "held {} in {} entries, expected {held} in {}",
                        hot.bytes,
                        hot.entries.len(),
                        lru.order.len()
                    ));
                }
            }
            TestResult::passed()
        }
        QuickCheck::new()
            .tests(500)
            .quickcheck(prop as fn(Vec<(bool, u8, u8)>) -> TestResult);
    }

    #[test]
    fn an_expired_answer_is_dropped_on_read() {
        let mut hot = Hot::new(100, 40);
        hot.put(&key(1), Payload::from_bytes(b"[]".to_vec()), WallTime(10));
        assert!(hot.get(&key(1), WallTime(9)).is_some());
        assert!(hot.get(&key(1), WallTime(10)).is_none());
        assert_eq!((hot.bytes, hot.entries.len(), hot.order.len()), (0, 0, 0));
    }
}
