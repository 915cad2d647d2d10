//! The persistent buffer: one redb database file per platform under
//! `<data-dir>/cache/<platform>.redb` (R-C1, R-C4).
//!
//! The policy (keys, lifetimes, versions, the entry format, what a lookup decides)
//! lives in `besluitbron_core::cache`; this module only stores bytes and keeps the
//! indexes the policy needs. [`RedbStore`] implements the same
//! [`CacheStore`](besluitbron_core::CacheStore) contract as the in-memory store, and
//! both run the same conformance checks.
//!
//! **Architecture invariant.** Each platform's buffer is its own file with its own lock
//! and its own budget: a slow, failing, full or cleared platform store never touches
//! another. Nothing here runs at start-up beyond opening the file: there is no sweep and
//! no version scan; entries of an older version are judged when they are read (R-C3).

mod redb_store;
pub mod stress;

use std::path::{Path, PathBuf};

use besluitbron_core::PlatformId;

pub use redb_store::{OpenError, RedbStore};

/// The directory under the data directory that holds the buffer files.
pub const CACHE_DIR: &str = "cache";

/// Where `platform`'s buffer lives under `data_dir`: `<data_dir>/cache/<platform>.redb`.
pub fn store_path(data_dir: &Path, platform: PlatformId) -> PathBuf {
    data_dir.join(CACHE_DIR).join(format!("{}.redb", platform.as_str()))
}
