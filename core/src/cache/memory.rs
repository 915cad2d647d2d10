//! [`MemoryStore`]: a buffer store in process memory, for the simulator and tests.
//!
//! It keeps the same contract as the persistent store (see [`crate::cache::store`]) and
//! stores the same encoded entries, so a lookup runs the same decode-and-judge path.
//! A "restart" is [`MemoryStore::reopen`]: the entries survive, the counters start over,
//! and the new process may be another version.
//!
//! Invariants: `bytes_used` equals the sum of [`stored_bytes`] over the entries and is at
//! most the budget after every `put`; the expiry and access indexes hold exactly one row
//! per entry.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Mutex, MutexGuard};

use crate::cache::decision::{Classified, Lookup, StaleLookup, classify, stale_lookup};
use crate::cache::key::CacheKey;
use crate::cache::policy::{CacheVersion, DataClass, PlatformCachePolicy};
use crate::cache::store::{
    CacheEvent, CacheStats, CacheStore, PreparedEntry, PutOutcome, StoreError, Success, prepare_entry, stored_bytes,
};
use crate::{PlatformId, WallTime};

/// One platform's buffer in memory.
#[derive(Debug)]
pub struct MemoryStore {
    platform: PlatformId,
    policy: PlatformCachePolicy,
    version: CacheVersion,
    inner: Mutex<Inner>,
}

#[derive(Debug)]
struct Slot {
    raw: Vec<u8>,
    class: DataClass,
    expires_at_ms: u64,
    seq: u64,
}

#[derive(Debug)]
struct Inner {
    entries: BTreeMap<Vec<u8>, Slot>,
    by_expiry: BTreeSet<(u64, Vec<u8>)>,
    by_access: BTreeSet<(u64, Vec<u8>)>,
    next_seq: u64,
    stats: CacheStats,
}

impl Inner {
    fn remove(&mut self, key: &[u8]) -> Option<Slot> {
        let slot = self.entries.remove(key)?;
        self.by_expiry.remove(&(slot.expires_at_ms, key.to_vec()));
        self.by_access.remove(&(slot.seq, key.to_vec()));
        let class = self.stats.class_mut(slot.class);
        class.entries -= 1;
        class.bytes_used -= stored_bytes(key.len(), slot.raw.len());
        Some(slot)
    }

    fn touch(&mut self, key: &[u8]) {
        let seq = self.next_seq;
        if let Some(slot) = self.entries.get_mut(key) {
            self.next_seq += 1;
            self.by_access.remove(&(slot.seq, key.to_vec()));
            slot.seq = seq;
            self.by_access.insert((seq, key.to_vec()));
        }
    }

    /// The entry to evict next at `now`: the earliest expired, else the least recently used.
    fn victim(&self, now: WallTime) -> Option<Vec<u8>> {
        match self.by_expiry.first() {
            Some((expires_at_ms, key)) if *expires_at_ms <= now.unix_millis() => Some(key.clone()),
            _ => self.by_access.first().map(|(_, key)| key.clone()),
        }
    }
}

impl MemoryStore {
    /// An empty buffer for `platform` under `policy`, stamping entries with `version`.
    pub fn new(platform: PlatformId, policy: PlatformCachePolicy, version: CacheVersion) -> MemoryStore {
        MemoryStore {
            platform,
            policy,
            version,
            inner: Mutex::new(Inner {
                entries: BTreeMap::new(),
                by_expiry: BTreeSet::new(),
                by_access: BTreeSet::new(),
                next_seq: 0,
                stats: CacheStats::new(platform, policy.budget_bytes),
            }),
        }
    }

    /// The same entries, as a restarted process of `version` would find them: counters reset.
    pub fn reopen(self, version: CacheVersion) -> MemoryStore {
        let mut inner = self.inner.into_inner().expect("no panic while holding the buffer lock");
        for class in &mut inner.stats.classes {
            *class = crate::cache::store::ClassStats {
                entries: class.entries,
                bytes_used: class.bytes_used,
                ..Default::default()
            };
        }
        MemoryStore {
            platform: self.platform,
            policy: self.policy,
            version,
            inner: Mutex::new(inner),
        }
    }

    /// The version this store stamps on entries and accepts on reads.
    pub fn version(&self) -> &CacheVersion {
        &self.version
    }

    /// Whether any entry (of any version, fresh or not) is stored under `key`, without judging it.
    pub fn contains(&self, key: &CacheKey) -> bool {
        self.lock().entries.contains_key(&key.encode())
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // Store methods do not panic while holding the lock; a poisoned lock is a bug.
        self.inner.lock().expect("no panic while holding the buffer lock")
    }

    fn check(&self, key: &CacheKey) -> Result<Vec<u8>, StoreError> {
        if key.platform() != self.platform {
            return Err(StoreError::WrongPlatform {
                store: self.platform,
                key: key.platform(),
            });
        }
        Ok(key.encode())
    }

    /// Reads and judges the entry under `key`, deleting it when it is another version's or corrupt.
    fn judge(&self, inner: &mut Inner, key: &CacheKey, kb: &[u8], now: WallTime) -> Result<Classified, StoreError> {
        let raw = inner.entries.get(kb).map(|slot| slot.raw.clone());
        let verdict = classify(key, raw, now, &self.version);
        match &verdict {
            Classified::OtherVersion(_) => {
                inner.remove(kb);
                inner.stats.class_mut(key.class()).count(CacheEvent::VersionDiscard);
            }
            Classified::Corrupt(e) => {
                inner.remove(kb);
                inner.stats.class_mut(key.class()).count(CacheEvent::CorruptDiscard);
                return Err(StoreError::Corrupt(e.clone()));
            }
            Classified::Absent | Classified::Fresh(_) | Classified::Expired(_) => {}
        }
        Ok(verdict)
    }
}

impl CacheStore for MemoryStore {
    fn platform(&self) -> PlatformId {
        self.platform
    }

    fn lookup(&self, key: &CacheKey, now: WallTime) -> Result<Lookup, StoreError> {
        let kb = self.check(key)?;
        let mut inner = self.lock();
        let lookup = match self.judge(&mut inner, key, &kb, now)? {
            Classified::Absent => Lookup::Miss,
            Classified::Fresh(value) => {
                inner.touch(&kb);
                Lookup::Hit(value)
            }
            Classified::Expired(value) => Lookup::Expired {
                expired_at: value.header().expires_at,
            },
            Classified::OtherVersion(written_by) => Lookup::OtherVersion { written_by },
            Classified::Corrupt(_) => unreachable!("judge returns corrupt entries as errors"),
        };
        let event = match &lookup {
            Lookup::Hit(_) => CacheEvent::Hit,
            Lookup::Miss => CacheEvent::Miss,
            Lookup::Expired { .. } => CacheEvent::Expired,
            // Counted as a discard in `judge`.
            Lookup::OtherVersion { .. } => return Ok(lookup),
        };
        inner.stats.class_mut(key.class()).count(event);
        Ok(lookup)
    }

    fn lookup_stale_if_error(&self, key: &CacheKey, now: WallTime) -> Result<StaleLookup, StoreError> {
        let kb = self.check(key)?;
        let mut inner = self.lock();
        let found = stale_lookup(self.judge(&mut inner, key, &kb, now)?, now, &self.policy);
        if matches!(found, StaleLookup::Stale(_)) {
            inner.stats.class_mut(key.class()).count(CacheEvent::StaleServed);
        }
        Ok(found)
    }

    fn lookup_expired(&self, key: &CacheKey, now: WallTime) -> Result<Option<crate::cache::CachedValue>, StoreError> {
        let kb = self.check(key)?;
        let mut inner = self.lock();
        Ok(match self.judge(&mut inner, key, &kb, now)? {
            Classified::Expired(value) => Some(value),
            _ => None,
        })
    }

    fn put(&self, key: &CacheKey, value: &Success, now: WallTime) -> Result<PutOutcome, StoreError> {
        let kb = self.check(key)?;
        let class = key.class();
        let PreparedEntry {
            raw,
            size_bytes,
            expires_at,
        } = match prepare_entry(key, kb.len(), value, now, &self.version, &self.policy) {
            Ok(prepared) => prepared,
            Err(refused) => return Ok(refused),
        };
        let budget_bytes = self.policy.budget_bytes;
        let mut inner = self.lock();
        inner.remove(&kb);
        let mut evicted = 0;
        while inner.stats.bytes_used() + size_bytes > budget_bytes {
            // The loop only runs while something is stored: bytes_used > 0.
            let victim = inner.victim(now).expect("over budget means something is stored");
            let slot = inner.remove(&victim).expect("indexed entries exist");
            inner.stats.class_mut(slot.class).count(CacheEvent::Eviction);
            evicted += 1;
        }
        let seq = inner.next_seq;
        inner.next_seq += 1;
        let expires_at_ms = expires_at.unix_millis();
        inner.by_expiry.insert((expires_at_ms, kb.clone()));
        inner.by_access.insert((seq, kb.clone()));
        let stats = inner.stats.class_mut(class);
        stats.entries += 1;
        stats.bytes_used += size_bytes;
        inner.entries.insert(
            kb,
            Slot {
                raw,
                class,
                expires_at_ms,
                seq,
            },
        );
        Ok(PutOutcome::Stored { evicted })
    }

    fn delete(&self, key: &CacheKey) -> Result<bool, StoreError> {
        let kb = self.check(key)?;
        Ok(self.lock().remove(&kb).is_some())
    }

    fn clear(&self) -> Result<(), StoreError> {
        let mut inner = self.lock();
        let keys: Vec<Vec<u8>> = inner.entries.keys().cloned().collect();
        for key in keys {
            inner.remove(&key);
        }
        Ok(())
    }

    fn stats(&self) -> Result<CacheStats, StoreError> {
        Ok(self.lock().stats)
    }
}
