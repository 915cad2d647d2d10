//! The contract every buffer store keeps and the counters it reports. The caller path
//! that turns a platform call into a buffered answer is the core's `path`
//! ([`crate::path::StoreBuffer`] over a store).
//!
//! **API boundary.** A store holds one platform's entries (R-C1). It is written to only
//! with a [`Success`]: the store API has no way to express an error, a time-out, a 429
//! or a parse failure, and the path stores only the `Ok` side of a platform's outcome
//! (R-C5, R-D8).
//!
//! Invariants every implementation keeps (checked against each other by property tests):
//! - `lookup` deletes an other-version or corrupt entry at the moment it reads it, and
//!   nothing else; no store sweeps or scans versions in advance (R-C3).
//! - After every `put`, the bytes held (keys plus encoded entries) are at most the
//!   budget. To make room, expired entries go first (earliest expiry first), then the
//!   least recently used (oldest access sequence first); ties break on key bytes.
//! - A `put` larger than the whole budget stores nothing and evicts nothing.

use crate::cache::decision::{Lookup, StaleLookup};
use crate::cache::entry::DecodeError;
use crate::cache::key::CacheKey;
use crate::cache::policy::DataClass;
use crate::{PlatformId, WallTime};

/// A platform answer that succeeded and parsed: the only thing a buffer accepts.
///
/// A connector builds one from a 2xx response it has parsed; errors, time-outs, 429s and
/// parse failures are the `Err` side of its result and have no way into a store.
///
/// Storing a success compiles:
///
/// ```
/// use besluitbron_core::cache::{CacheKey, CacheStore, CacheVersion, DataClass, MemoryStore, PlatformCachePolicy, Success};
/// use besluitbron_core::WallTime;
/// use besluitbron_core::platform::examples;
/// let store = MemoryStore::new(examples::OBV, PlatformCachePolicy::default(), CacheVersion::current());
/// let key = CacheKey::new(examples::OBV, DataClass::Search, "search").param("q", "stikstof");
/// let answer: Result<Success, String> = Ok(Success::new(b"[]".to_vec()));
/// store.put(&key, answer.as_ref().unwrap(), WallTime(0)).unwrap();
/// ```
///
/// Storing the platform's result as it came does not: a failure is not a `Success`.
///
/// ```compile_fail
/// use besluitbron_core::cache::{CacheKey, CacheStore, CacheVersion, DataClass, MemoryStore, PlatformCachePolicy, Success};
/// use besluitbron_core::WallTime;
/// use besluitbron_core::platform::examples;
/// let store = MemoryStore::new(examples::OBV, PlatformCachePolicy::default(), CacheVersion::current());
/// let key = CacheKey::new(examples::OBV, DataClass::Search, "search").param("q", "stikstof");
/// let answer: Result<Success, String> = Err("429 Too Many Requests".into());
/// store.put(&key, &answer, WallTime(0)).unwrap();
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Success {
    payload: Vec<u8>,
    ttl_cap_ms: Option<u64>,
}

impl Success {
    /// Wraps the bytes of a successful, parsed answer.
    pub fn new(payload: Vec<u8>) -> Success {
        Success {
            payload,
            ttl_cap_ms: None,
        }
    }

    /// The same answer kept at most `ttl_ms` (its class's lifetime when that is shorter):
    /// for an answer the platform marked incomplete or that carries a warning.
    pub fn kept_at_most(mut self, ttl_ms: u64) -> Success {
        self.ttl_cap_ms = Some(self.ttl_cap_ms.map_or(ttl_ms, |cap| cap.min(ttl_ms)));
        self
    }

    /// The cap on the lifetime, if any.
    pub fn ttl_cap_ms(&self) -> Option<u64> {
        self.ttl_cap_ms
    }

    /// The answer's bytes.
    pub fn payload(&self) -> &[u8] {
        &self.payload
    }

    /// The answer's bytes, owned.
    pub fn into_payload(self) -> Vec<u8> {
        self.payload
    }
}

/// What a `put` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PutOutcome {
    /// Stored, after evicting `evicted` other entries to stay within the budget.
    Stored {
        /// Entries evicted to make room.
        evicted: u64,
    },
    /// Larger than the whole budget: nothing stored, nothing evicted.
    TooLarge {
        /// Key plus encoded entry.
        size_bytes: u64,
        /// The platform's budget.
        budget_bytes: u64,
    },
}

/// A store operation that could not be carried out.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The key names another platform than the store holds (a wiring bug).
    #[error("a key for platform `{key}` was given to the `{store}` buffer")]
    WrongPlatform {
        /// The store's platform.
        store: PlatformId,
        /// The key's platform.
        key: PlatformId,
    },
    /// The entry under the key was unreadable; it has been deleted. Ask the platform.
    #[error("corrupt buffer entry deleted: {0}")]
    Corrupt(#[from] DecodeError),
    /// The storage underneath failed (disk full, I/O error, a damaged database file).
    #[error("buffer storage failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

/// Counters and contents of one data class in one platform's buffer.
///
/// Event counters (`hits` .. `stale_served`) count since the store was opened; `entries`
/// and `bytes_used` describe what is stored now.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClassStats {
    /// Lookups answered from the buffer.
    pub hits: u64,
    /// Lookups that found nothing.
    pub misses: u64,
    /// Lookups that found an expired entry of this version.
    pub expired: u64,
    /// Entries of another version deleted on read.
    pub version_discards: u64,
    /// Unreadable entries deleted on read.
    pub corrupt_discards: u64,
    /// Entries evicted to stay within the byte budget.
    pub evictions: u64,
    /// Expired entries answered, marked stale, because the platform failed.
    pub stale_served: u64,
    /// Entries stored now.
    pub entries: u64,
    /// Bytes (keys plus encoded entries) stored now.
    pub bytes_used: u64,
}

/// One event a store counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheEvent {
    /// See [`ClassStats::hits`].
    Hit,
    /// See [`ClassStats::misses`].
    Miss,
    /// See [`ClassStats::expired`].
    Expired,
    /// See [`ClassStats::version_discards`].
    VersionDiscard,
    /// See [`ClassStats::corrupt_discards`].
    CorruptDiscard,
    /// See [`ClassStats::evictions`].
    Eviction,
    /// See [`ClassStats::stale_served`].
    StaleServed,
}

impl ClassStats {
    /// Adds one `event`.
    pub fn count(&mut self, event: CacheEvent) {
        let counter = match event {
            CacheEvent::Hit => &mut self.hits,
            CacheEvent::Miss => &mut self.misses,
            CacheEvent::Expired => &mut self.expired,
            CacheEvent::VersionDiscard => &mut self.version_discards,
            CacheEvent::CorruptDiscard => &mut self.corrupt_discards,
            CacheEvent::Eviction => &mut self.evictions,
            CacheEvent::StaleServed => &mut self.stale_served,
        };
        *counter += 1;
    }
}

/// Counters and contents of one platform's buffer, per data class.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CacheStats {
    /// The platform.
    pub platform: PlatformId,
    /// The byte budget in force.
    pub budget_bytes: u64,
    /// Per class, indexed by [`DataClass::index`].
    pub classes: [ClassStats; 3],
}

impl CacheStats {
    /// Empty statistics for `platform`.
    pub fn new(platform: PlatformId, budget_bytes: u64) -> CacheStats {
        CacheStats {
            platform,
            budget_bytes,
            classes: [ClassStats::default(); 3],
        }
    }

    /// The statistics of `class`.
    pub fn class(&self, class: DataClass) -> &ClassStats {
        &self.classes[class.index()]
    }

    /// The statistics of `class`, mutable.
    pub fn class_mut(&mut self, class: DataClass) -> &mut ClassStats {
        &mut self.classes[class.index()]
    }

    /// Bytes stored over all classes.
    pub fn bytes_used(&self) -> u64 {
        self.classes.iter().map(|c| c.bytes_used).sum()
    }

    /// Entries stored over all classes.
    pub fn entries(&self) -> u64 {
        self.classes.iter().map(|c| c.entries).sum()
    }
}

/// The bytes an entry occupies against the budget: its key plus its encoded entry.
pub const fn stored_bytes(key_len: usize, entry_len: usize) -> u64 {
    (key_len + entry_len) as u64
}

/// A new entry ready to store: the encoded bytes and what they occupy against the budget.
pub struct PreparedEntry {
    /// The encoded entry (header and payload).
    pub raw: Vec<u8>,
    /// Key plus entry bytes, as counted against the budget.
    pub size_bytes: u64,
    /// When the entry expires.
    pub expires_at: WallTime,
}

/// Encodes `value` for `key` (whose encoding is `key_len` bytes) as an entry written by
/// `version` at `now`, expiring after its class's lifetime. Every store's `put` starts
/// here; an entry that could never fit the budget is refused with
/// [`PutOutcome::TooLarge`] before anything is evicted.
pub fn prepare_entry(
    key: &CacheKey,
    key_len: usize,
    value: &Success,
    now: WallTime,
    version: &crate::cache::policy::CacheVersion,
    policy: &crate::cache::policy::PlatformCachePolicy,
) -> Result<PreparedEntry, PutOutcome> {
    let class = key.class();
    let header = crate::cache::entry::EntryHeader {
        class,
        version: version.clone(),
        stored_at: now,
        expires_at: WallTime(
            now.unix_millis().saturating_add(
                value
                    .ttl_cap_ms()
                    .map_or(policy.class(class).ttl_ms, |cap| cap.min(policy.class(class).ttl_ms)),
            ),
        ),
    };
    let raw = crate::cache::entry::encode_entry(&header, value.payload());
    let size_bytes = stored_bytes(key_len, raw.len());
    if size_bytes > policy.budget_bytes {
        return Err(PutOutcome::TooLarge {
            size_bytes,
            budget_bytes: policy.budget_bytes,
        });
    }
    Ok(PreparedEntry {
        raw,
        size_bytes,
        expires_at: header.expires_at,
    })
}

/// One platform's buffer. Synchronous: the server calls it from a blocking thread, the
/// simulator and tests call it directly. Methods take `&self`; stores synchronise inside.
pub trait CacheStore: Send + Sync {
    /// The platform whose entries this store holds.
    fn platform(&self) -> PlatformId;

    /// Judges the entry under `key` at `now`. Deletes it first if another version wrote
    /// it ([`Lookup::OtherVersion`]) or it is unreadable (`Err(StoreError::Corrupt)`).
    /// A hit marks the entry as recently used.
    fn lookup(&self, key: &CacheKey, now: WallTime) -> Result<Lookup, StoreError>;

    /// After the platform failed: a fresh entry, or an expired same-version entry within
    /// its class's stale-if-error window, or nothing. Never another version's entry
    /// (which is deleted, as in `lookup`).
    fn lookup_stale_if_error(&self, key: &CacheKey, now: WallTime) -> Result<StaleLookup, StoreError>;

    /// The expired same-version entry under `key`, to ask the platform whether it is
    /// still current (a conditional request): `Some` only for an entry that is expired
    /// at `now`, never a fresh one or another version's. Counts nothing. The default
    /// keeps no such entry.
    fn lookup_expired(&self, _key: &CacheKey, _now: WallTime) -> Result<Option<crate::cache::CachedValue>, StoreError> {
        Ok(None)
    }

    /// Stores `value` under `key`, written at `now` by this store's version, expiring
    /// after its class's lifetime. Replaces whatever the key held. Evicts as needed to
    /// stay within the budget, in the same atomic step.
    fn put(&self, key: &CacheKey, value: &Success, now: WallTime) -> Result<PutOutcome, StoreError>;

    /// Deletes the entry under `key`; whether there was one.
    fn delete(&self, key: &CacheKey) -> Result<bool, StoreError>;

    /// Deletes every entry of this platform (and of no other).
    fn clear(&self) -> Result<(), StoreError>;

    /// Counters since open, and what is stored now.
    fn stats(&self) -> Result<CacheStats, StoreError>;
}
