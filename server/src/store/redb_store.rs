//! [`RedbStore`]: one platform's buffer in one redb database file.
//!
//! Tables:
//!
//! | table | key | value | purpose |
//! |---|---|---|---|
//! | `entries` | encoded [`CacheKey`] | encoded entry (header + payload) | the answers |
//! | `index` | encoded key | (access seq, expires_at ms, stored bytes, class tag) | find an entry's index rows |
//! | `by_access` | (access seq, key) | () | least recently used first |
//! | `by_expiry` | (expires_at ms, key) | () | earliest expiry first |
//! | `meta` | name | u64 | `next_seq`, entries and bytes per class |
//! | `info` | name | text | the platform the file belongs to |
//!
//! Invariants, kept by doing every change in one write transaction:
//! - `entries`, `index`, `by_access` and `by_expiry` hold the same set of keys, and the
//!   `meta` per-class counts and bytes are their sums.
//! - After every `put` commits, the bytes used are at most the budget; eviction happens
//!   inside the same transaction as the insert, so no reader or crash sees it over.
//! - `put` commits with [`Durability::Immediate`]: when it returns, the entry survives a
//!   crash (R-C4). A crash mid-commit leaves the previous commit: redb's commits are
//!   checksummed and atomic.
//!
//! Reads are cheap: a hit is a read transaction (MVCC, no lock against the writer) plus
//! an in-memory note of the access. Access notes are applied to `by_access` at the start
//! of the next write transaction, or in a non-durable commit when many pile up, or when
//! the store is dropped. A crash loses only those notes, which makes the LRU order
//! slightly less exact, never wrong about content.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

use besluitbron_core::cache::conformance::Reopen;
use besluitbron_core::cache::{
    CacheEvent, CacheKey, CacheStats, CacheStore, CacheVersion, CachedValue, Classified, DataClass, Lookup,
    PlatformCachePolicy, PreparedEntry, PutOutcome, StaleLookup, StoreError, Success, classify, prepare_entry,
    stale_lookup, stored_bytes,
};
use besluitbron_core::{PlatformId, WallTime};
use redb::{Database, Durability, ReadableDatabase, ReadableTable, Table, TableDefinition, WriteTransaction};

const ENTRIES: TableDefinition<&[u8], &[u8]> = TableDefinition::new("entries");
const INDEX: TableDefinition<&[u8], (u64, u64, u64, u8)> = TableDefinition::new("index");
const BY_ACCESS: TableDefinition<(u64, &[u8]), ()> = TableDefinition::new("by_access");
const BY_EXPIRY: TableDefinition<(u64, &[u8]), ()> = TableDefinition::new("by_expiry");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");
const INFO: TableDefinition<&str, &str> = TableDefinition::new("info");

const NEXT_SEQ: &str = "next_seq";
/// Access notes kept in memory before they are written in a non-durable commit.
const TOUCHES_MAX: usize = 4096;

fn meta_entries(class: DataClass) -> String {
    format!("entries.{}", class.as_str())
}

fn meta_bytes(class: DataClass) -> String {
    format!("bytes.{}", class.as_str())
}

fn backend(e: impl Into<redb::Error>) -> StoreError {
    StoreError::Backend(Box::new(e.into()))
}

/// A buffer file that could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum OpenError {
    /// The directory for the file could not be created.
    #[error("creating buffer directory {path}: {source}")]
    Dir {
        /// The directory.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// redb could not open or initialise the file (locked by another process, damaged, unreadable).
    #[error("opening buffer file {path}: {source}")]
    Database {
        /// The file.
        path: PathBuf,
        /// Why.
        source: Box<redb::Error>,
    },
    /// The file belongs to another platform's buffer.
    #[error("buffer file {path} belongs to platform `{found}`, not `{expected}`")]
    WrongPlatform {
        /// The file.
        path: PathBuf,
        /// The platform it was opened for.
        expected: PlatformId,
        /// The platform it records.
        found: String,
    },
}

/// Counters since open and access notes not yet written.
#[derive(Debug)]
struct Volatile {
    events: CacheStats,
    touches: Vec<(Vec<u8>, u64)>,
}

/// One platform's persistent buffer.
pub struct RedbStore {
    db: Database,
    path: PathBuf,
    platform: PlatformId,
    policy: PlatformCachePolicy,
    version: CacheVersion,
    next_seq: AtomicU64,
    volatile: Mutex<Volatile>,
}

impl std::fmt::Debug for RedbStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedbStore")
            .field("path", &self.path)
            .field("platform", &self.platform)
            .field("version", &self.version)
            .finish_non_exhaustive()
    }
}

/// The tables of one write transaction, with the per-class usage loaded from `meta`.
struct Tables<'t> {
    entries: Table<'t, &'static [u8], &'static [u8]>,
    index: Table<'t, &'static [u8], (u64, u64, u64, u8)>,
    by_access: Table<'t, (u64, &'static [u8]), ()>,
    by_expiry: Table<'t, (u64, &'static [u8]), ()>,
    meta: Table<'t, &'static str, u64>,
    /// (entries, bytes) per class, indexed by [`DataClass::index`].
    usage: [(u64, u64); 3],
}

impl<'t> Tables<'t> {
    fn open(txn: &'t WriteTransaction) -> Result<Tables<'t>, redb::Error> {
        let meta = txn.open_table(META)?;
        let mut usage = [(0, 0); 3];
        for class in DataClass::ALL {
            let entries = meta.get(meta_entries(class).as_str())?.map_or(0, |g| g.value());
            let bytes = meta.get(meta_bytes(class).as_str())?.map_or(0, |g| g.value());
            usage[class.index()] = (entries, bytes);
        }
        Ok(Tables {
            entries: txn.open_table(ENTRIES)?,
            index: txn.open_table(INDEX)?,
            by_access: txn.open_table(BY_ACCESS)?,
            by_expiry: txn.open_table(BY_EXPIRY)?,
            meta,
            usage,
        })
    }

    fn bytes_used(&self) -> u64 {
        self.usage.iter().map(|(_, bytes)| bytes).sum()
    }

    fn save(&mut self, next_seq: u64) -> Result<(), redb::Error> {
        for class in DataClass::ALL {
            let (entries, bytes) = self.usage[class.index()];
            self.meta.insert(meta_entries(class).as_str(), entries)?;
            self.meta.insert(meta_bytes(class).as_str(), bytes)?;
        }
        self.meta.insert(NEXT_SEQ, next_seq)?;
        Ok(())
    }

    /// Removes the entry under `key` and its index rows; its class, if there was one.
    fn remove(&mut self, key: &[u8]) -> Result<Option<DataClass>, redb::Error> {
        let Some((seq, expires_at_ms, bytes, tag)) = self.index.remove(key)?.map(|g| g.value()) else {
            return Ok(None);
        };
        self.entries.remove(key)?;
        self.by_access.remove((seq, key))?;
        self.by_expiry.remove((expires_at_ms, key))?;
        // The tag was written by `insert` from a DataClass; anything else is a damaged index,
        // whose bytes are then charged to no class (they were removed all the same).
        if let Some(class) = DataClass::from_tag(tag) {
            let usage = &mut self.usage[class.index()];
            usage.0 = usage.0.saturating_sub(1);
            usage.1 = usage.1.saturating_sub(bytes);
        }
        Ok(DataClass::from_tag(tag))
    }

    fn insert(
        &mut self,
        key: &[u8],
        raw: &[u8],
        class: DataClass,
        expires_at_ms: u64,
        seq: u64,
    ) -> Result<(), redb::Error> {
        let bytes = stored_bytes(key.len(), raw.len());
        self.entries.insert(key, raw)?;
        self.index.insert(key, (seq, expires_at_ms, bytes, class.tag()))?;
        self.by_access.insert((seq, key), ())?;
        self.by_expiry.insert((expires_at_ms, key), ())?;
        let usage = &mut self.usage[class.index()];
        usage.0 += 1;
        usage.1 += bytes;
        Ok(())
    }

    /// Moves `key` to access sequence `seq`, if it is still stored and `seq` is newer.
    fn touch(&mut self, key: &[u8], seq: u64) -> Result<(), redb::Error> {
        let Some((old_seq, expires_at_ms, bytes, tag)) = self.index.get(key)?.map(|g| g.value()) else {
            return Ok(());
        };
        if old_seq >= seq {
            return Ok(());
        }
        self.by_access.remove((old_seq, key))?;
        self.by_access.insert((seq, key), ())?;
        self.index.insert(key, (seq, expires_at_ms, bytes, tag))?;
        Ok(())
    }

    /// The entry to evict next at `now`: the earliest expired, else the least recently used.
    fn victim(&self, now: WallTime) -> Result<Option<Vec<u8>>, redb::Error> {
        if let Some((k, _)) = self.by_expiry.first()? {
            let (expires_at_ms, key) = k.value();
            if expires_at_ms <= now.unix_millis() {
                return Ok(Some(key.to_vec()));
            }
        }
        Ok(self.by_access.first()?.map(|(k, _)| k.value().1.to_vec()))
    }
}

impl RedbStore {
    /// Opens (creating if needed) `platform`'s buffer file at `path`, stamping and
    /// accepting entries of `version`. Only opens: no sweep, no scan.
    pub fn open(
        path: impl AsRef<Path>,
        platform: PlatformId,
        policy: PlatformCachePolicy,
        version: CacheVersion,
    ) -> Result<RedbStore, OpenError> {
        let path = path.as_ref().to_path_buf();
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| OpenError::Dir {
                path: dir.to_path_buf(),
                source,
            })?;
        }
        let db_err = |e: redb::Error| OpenError::Database {
            path: path.clone(),
            source: Box::new(e),
        };
        let db = Database::create(&path).map_err(|e| db_err(e.into()))?;
        let next_seq = Self::initialise(&db, platform).map_err(|e| match e {
            InitError::Redb(e) => db_err(e),
            InitError::WrongPlatform(found) => OpenError::WrongPlatform {
                path: path.clone(),
                expected: platform,
                found,
            },
        })?;
        Ok(RedbStore {
            db,
            path,
            platform,
            policy,
            version,
            next_seq: AtomicU64::new(next_seq),
            volatile: Mutex::new(Volatile {
                events: CacheStats::new(platform, policy.budget_bytes),
                touches: Vec::new(),
            }),
        })
    }

    /// Creates the tables of a new file and records its platform; checks it on an old one.
    fn initialise(db: &Database, platform: PlatformId) -> Result<u64, InitError> {
        let txn = db.begin_write().map_err(redb::Error::from)?;
        let next_seq = {
            let mut info = txn.open_table(INFO).map_err(redb::Error::from)?;
            let found = info
                .get("platform")
                .map_err(redb::Error::from)?
                .map(|g| g.value().to_owned());
            match found {
                Some(found) if found != platform.as_str() => return Err(InitError::WrongPlatform(found)),
                Some(_) => {}
                None => {
                    info.insert("platform", platform.as_str()).map_err(redb::Error::from)?;
                }
            }
            let tables = Tables::open(&txn)?;
            tables
                .meta
                .get(NEXT_SEQ)
                .map_err(redb::Error::from)?
                .map_or(0, |g| g.value())
        };
        txn.commit().map_err(redb::Error::from)?;
        Ok(next_seq)
    }

    /// The file this store lives in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The version this store stamps on entries and accepts on reads.
    pub fn version(&self) -> &CacheVersion {
        &self.version
    }

    /// Whether any entry (of any version, fresh or not) is stored under `key`, without judging it.
    pub fn contains(&self, key: &CacheKey) -> Result<bool, StoreError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let entries = txn.open_table(ENTRIES).map_err(backend)?;
        Ok(entries.get(key.encode().as_slice()).map_err(backend)?.is_some())
    }

    /// Runs redb's full integrity check on the file (checksums of every page and the
    /// allocator state) after writing pending access notes; whether the file was clean.
    pub fn check_integrity(&mut self) -> Result<bool, StoreError> {
        self.flush_touches(Durability::Immediate)?;
        self.db.check_integrity().map_err(backend)
    }

    fn lock(&self) -> MutexGuard<'_, Volatile> {
        // Store methods do not panic while holding the lock; a poisoned lock is a bug.
        self.volatile.lock().expect("no panic while holding the buffer lock")
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

    /// Runs `f` in one write transaction after applying pending access notes, saves the
    /// usage counters, and commits with `durability`.
    fn write<R>(
        &self,
        durability: Durability,
        f: impl FnOnce(&mut Tables<'_>) -> Result<R, redb::Error>,
    ) -> Result<R, StoreError> {
        let touches = std::mem::take(&mut self.lock().touches);
        let mut txn = self.db.begin_write().map_err(backend)?;
        txn.set_durability(durability).map_err(backend)?;
        let result = {
            let mut tables = Tables::open(&txn).map_err(backend)?;
            for (key, seq) in &touches {
                tables.touch(key, *seq).map_err(backend)?;
            }
            let result = f(&mut tables).map_err(backend)?;
            tables.save(self.next_seq.load(Ordering::SeqCst)).map_err(backend)?;
            result
        };
        txn.commit().map_err(backend)?;
        Ok(result)
    }

    fn flush_touches(&self, durability: Durability) -> Result<(), StoreError> {
        if self.lock().touches.is_empty() {
            return Ok(());
        }
        self.write(durability, |_| Ok(()))
    }

    fn read_raw(&self, key: &[u8]) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self.db.begin_read().map_err(backend)?;
        let entries = txn.open_table(ENTRIES).map_err(backend)?;
        let raw = entries.get(key).map_err(backend)?.map(|g| g.value().to_vec());
        Ok(raw)
    }

    /// Reads and judges the entry under `key`, deleting it when it is another version's or corrupt.
    fn judge(&self, key: &CacheKey, kb: &[u8], now: WallTime) -> Result<Classified, StoreError> {
        let verdict = classify(key, self.read_raw(kb)?, now, &self.version);
        let event = match &verdict {
            Classified::OtherVersion(_) => CacheEvent::VersionDiscard,
            Classified::Corrupt(_) => CacheEvent::CorruptDiscard,
            Classified::Absent | Classified::Fresh(_) | Classified::Expired(_) => return Ok(verdict),
        };
        // Judge again inside the write transaction: a put of a fresh entry may have
        // landed since the read, and that entry must not be deleted with the old one.
        let version = &self.version;
        self.write(Durability::Immediate, |t| {
            let raw = t.entries.get(kb)?.map(|g| g.value().to_vec());
            match classify(key, raw, now, version) {
                Classified::OtherVersion(_) | Classified::Corrupt(_) => t.remove(kb).map(|_| ()),
                Classified::Absent | Classified::Fresh(_) | Classified::Expired(_) => Ok(()),
            }
        })?;
        self.lock().events.class_mut(key.class()).count(event);
        match verdict {
            Classified::Corrupt(e) => Err(StoreError::Corrupt(e)),
            other => Ok(other),
        }
    }

    /// Notes an access to `key` now; written with the next write transaction.
    fn note_access(&self, kb: Vec<u8>) -> Result<(), StoreError> {
        let seq = self.next_seq.fetch_add(1, Ordering::SeqCst);
        let pending = {
            let mut v = self.lock();
            v.touches.push((kb, seq));
            v.touches.len()
        };
        if pending >= TOUCHES_MAX {
            self.flush_touches(Durability::None)?;
        }
        Ok(())
    }
}

enum InitError {
    Redb(redb::Error),
    WrongPlatform(String),
}

impl From<redb::Error> for InitError {
    fn from(e: redb::Error) -> InitError {
        InitError::Redb(e)
    }
}

impl Drop for RedbStore {
    fn drop(&mut self) {
        // Best effort: access notes only refine the LRU order; losing them loses no data.
        if let Err(e) = self.flush_touches(Durability::Immediate) {
            tracing::warn!(platform = %self.platform, error = %e, "buffer access notes not written on close");
        }
    }
}

impl CacheStore for RedbStore {
    fn platform(&self) -> PlatformId {
        self.platform
    }

    fn lookup(&self, key: &CacheKey, now: WallTime) -> Result<Lookup, StoreError> {
        let kb = self.check(key)?;
        let (lookup, event) = match self.judge(key, &kb, now)? {
            Classified::Absent => (Lookup::Miss, Some(CacheEvent::Miss)),
            Classified::Fresh(value) => {
                self.note_access(kb)?;
                (Lookup::Hit(value), Some(CacheEvent::Hit))
            }
            Classified::Expired(value) => (
                Lookup::Expired {
                    expired_at: value.header().expires_at,
                },
                Some(CacheEvent::Expired),
            ),
            // Counted as a discard in `judge`.
            Classified::OtherVersion(written_by) => (Lookup::OtherVersion { written_by }, None),
            Classified::Corrupt(_) => unreachable!("judge returns corrupt entries as errors"),
        };
        if let Some(event) = event {
            self.lock().events.class_mut(key.class()).count(event);
        }
        Ok(lookup)
    }

    fn lookup_stale_if_error(&self, key: &CacheKey, now: WallTime) -> Result<StaleLookup, StoreError> {
        let kb = self.check(key)?;
        let found = stale_lookup(self.judge(key, &kb, now)?, now, &self.policy);
        if matches!(found, StaleLookup::Stale(_)) {
            self.lock().events.class_mut(key.class()).count(CacheEvent::StaleServed);
        }
        Ok(found)
    }

    fn lookup_expired(&self, key: &CacheKey, now: WallTime) -> Result<Option<CachedValue>, StoreError> {
        let kb = self.check(key)?;
        Ok(match self.judge(key, &kb, now)? {
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
        let evicted = self.write(Durability::Immediate, |t| {
            t.remove(&kb)?;
            let mut evicted = Vec::new();
            while t.bytes_used() + size_bytes > budget_bytes {
                let Some(victim) = t.victim(now)? else {
                    // Usage says bytes are stored but no index row exists: the counters
                    // drifted (a damaged file). Reset them rather than loop forever.
                    t.usage = [(0, 0); 3];
                    break;
                };
                if let Some(class) = t.remove(&victim)? {
                    evicted.push(class);
                }
            }
            let seq = self.next_seq.fetch_add(1, Ordering::SeqCst);
            t.insert(&kb, &raw, class, expires_at.unix_millis(), seq)?;
            Ok(evicted)
        })?;
        let mut v = self.lock();
        for class in &evicted {
            v.events.class_mut(*class).count(CacheEvent::Eviction);
        }
        Ok(PutOutcome::Stored {
            evicted: evicted.len() as u64,
        })
    }

    fn delete(&self, key: &CacheKey) -> Result<bool, StoreError> {
        let kb = self.check(key)?;
        self.write(Durability::Immediate, |t| Ok(t.remove(&kb)?.is_some()))
    }

    fn clear(&self) -> Result<(), StoreError> {
        self.lock().touches.clear();
        let txn = self.db.begin_write().map_err(backend)?;
        txn.delete_table(ENTRIES).map_err(backend)?;
        txn.delete_table(INDEX).map_err(backend)?;
        txn.delete_table(BY_ACCESS).map_err(backend)?;
        txn.delete_table(BY_EXPIRY).map_err(backend)?;
        {
            let mut tables = Tables::open(&txn).map_err(backend)?;
            tables.usage = [(0, 0); 3];
            tables.save(self.next_seq.load(Ordering::SeqCst)).map_err(backend)?;
        }
        txn.commit().map_err(backend)?;
        Ok(())
    }

    fn stats(&self) -> Result<CacheStats, StoreError> {
        let mut stats = self.lock().events;
        let txn = self.db.begin_read().map_err(backend)?;
        let meta = txn.open_table(META).map_err(backend)?;
        for class in DataClass::ALL {
            let c = stats.class_mut(class);
            c.entries = meta
                .get(meta_entries(class).as_str())
                .map_err(backend)?
                .map_or(0, |g| g.value());
            c.bytes_used = meta
                .get(meta_bytes(class).as_str())
                .map_err(backend)?
                .map_or(0, |g| g.value());
        }
        Ok(stats)
    }
}

impl Reopen for RedbStore {
    fn reopen_as(self, version: CacheVersion) -> Result<RedbStore, StoreError> {
        let (path, platform, policy) = (self.path.clone(), self.platform, self.policy);
        drop(self);
        RedbStore::open(path, platform, policy, version).map_err(|e| StoreError::Backend(Box::new(e)))
    }
}
