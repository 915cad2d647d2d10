//! What a lookup decides, as data: [`Lookup`] and [`StaleLookup`], and the one
//! function, [`classify`], that every store uses to judge the bytes it found.
//!
//! Invariants:
//! - The version is judged before the expiry: an entry written by another BesluitBron
//!   version is [`Classified::OtherVersion`] however fresh it is, and is never answered,
//!   not even stale (R-C3).
//! - An entry is fresh while `now < expires_at`; at `expires_at` it is expired.
//! - A stale answer is only given for a same-version entry whose class has a non-zero
//!   stale-if-error window, while `now < expires_at + stale_if_error_ms`.
//!
//! This module decides; the store acts (deletes, touches, counts).

use crate::WallTime;
use crate::cache::entry::{CachedValue, DecodeError, decode_entry};
use crate::cache::key::CacheKey;
use crate::cache::policy::{CacheVersion, PlatformCachePolicy};

/// The answer to "is this request buffered?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// A fresh entry written by this version: answer it, the platform is not asked.
    Hit(CachedValue),
    /// An entry of this version exists but expired at `expired_at`: ask the platform.
    /// The entry stays (reference lists may still be served stale on failure).
    Expired {
        /// When the entry stopped being fresh.
        expired_at: WallTime,
    },
    /// An entry written by another version was found and has been deleted: ask the platform.
    OtherVersion {
        /// The version that wrote it.
        written_by: CacheVersion,
    },
    /// Nothing is stored under the key: ask the platform.
    Miss,
}

/// The answer to "the platform failed; may a buffered answer stand in?".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum StaleLookup {
    /// The entry is still fresh (it may have been written since the caller's lookup).
    Fresh(CachedValue),
    /// The entry expired less than its class's stale-if-error window ago: answer it, marked stale.
    Stale(CachedValue),
    /// Nothing may be answered.
    Unavailable,
}

/// How the bytes under a key were judged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Classified {
    /// No bytes under the key.
    Absent,
    /// Same version, `now < expires_at`.
    Fresh(CachedValue),
    /// Same version, `now >= expires_at`.
    Expired(CachedValue),
    /// Written by another version; the store deletes it now.
    OtherVersion(CacheVersion),
    /// Bytes that do not decode, or a class that does not match the key; the store deletes them now.
    Corrupt(DecodeError),
}

/// Judges `raw`, the bytes stored under `key`, at `now` for a store of `version`.
pub fn classify(key: &CacheKey, raw: Option<Vec<u8>>, now: WallTime, version: &CacheVersion) -> Classified {
    let Some(raw) = raw else {
        return Classified::Absent;
    };
    let value = match decode_entry(raw) {
        Ok(value) => value,
        Err(e) => return Classified::Corrupt(e),
    };
    let header = value.header();
    if header.class != key.class() {
        return Classified::Corrupt(DecodeError::ClassMismatch {
            expected: key.class(),
            found: header.class,
        });
    }
    if header.version != *version {
        return Classified::OtherVersion(header.version.clone());
    }
    if now < header.expires_at {
        Classified::Fresh(value)
    } else {
        Classified::Expired(value)
    }
}

/// What a store may answer for a key judged `classified` when the platform failed: a
/// fresh entry, an expired one still inside its class's stale-if-error window, or
/// nothing. Both stores answer `lookup_stale_if_error` through this.
pub fn stale_lookup(classified: Classified, now: WallTime, policy: &PlatformCachePolicy) -> StaleLookup {
    match classified {
        Classified::Fresh(value) => StaleLookup::Fresh(value),
        Classified::Expired(value) if may_serve_stale(&value, now, policy) => StaleLookup::Stale(value),
        _ => StaleLookup::Unavailable,
    }
}

/// Whether an expired same-version `value` may be answered stale at `now` under `policy`.
pub fn may_serve_stale(value: &CachedValue, now: WallTime, policy: &PlatformCachePolicy) -> bool {
    let window_ms = policy.class(value.header().class).stale_if_error_ms;
    window_ms > 0 && now.unix_millis() < value.header().expires_at.unix_millis().saturating_add(window_ms)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::entry::{EntryHeader, encode_entry};
    use crate::cache::policy::DataClass;
    use crate::platform::examples;

    const DAY_MS: u64 = 24 * 3600 * 1000;

    fn v(s: &str) -> CacheVersion {
        CacheVersion::new(s).unwrap()
    }

    fn entry(class: DataClass, version: &str, stored_at: u64, ttl_ms: u64) -> Vec<u8> {
        let header = EntryHeader {
            class,
            version: v(version),
            stored_at: WallTime(stored_at),
            expires_at: WallTime(stored_at + ttl_ms),
        };
        encode_entry(&header, b"payload")
    }

    fn key(class: DataClass) -> CacheKey {
        CacheKey::new(examples::TK, class, "op")
    }

    #[test]
    fn fresh_until_the_expiry_instant() {
        let k = key(DataClass::Search);
        let raw = || Some(entry(DataClass::Search, "1.5.0", 1_000, 600_000));
        assert!(matches!(
            classify(&k, raw(), WallTime(600_999), &v("1.5.0")),
            Classified::Fresh(_)
        ));
        assert!(matches!(
            classify(&k, raw(), WallTime(601_000), &v("1.5.0")),
            Classified::Expired(_)
        ));
    }

    #[test]
    fn another_version_loses_even_when_fresh() {
        let k = key(DataClass::Document);
        let raw = Some(entry(DataClass::Document, "1.4.9", 0, 21 * DAY_MS));
        assert_eq!(
            classify(&k, raw, WallTime(1), &v("1.5.0")),
            Classified::OtherVersion(v("1.4.9"))
        );
    }

    #[test]
    fn a_class_that_does_not_match_the_key_is_corrupt() {
        let k = key(DataClass::Search);
        let raw = Some(entry(DataClass::Document, "1.5.0", 0, 1_000));
        assert!(matches!(
            classify(&k, raw, WallTime(1), &v("1.5.0")),
            Classified::Corrupt(DecodeError::ClassMismatch { .. })
        ));
    }

    #[test]
    fn stale_window_applies_to_reference_lists_only_by_default() {
        let policy = PlatformCachePolicy::default();
        let reference = decode_entry(entry(DataClass::Reference, "1.5.0", 0, 30 * DAY_MS)).unwrap();
        assert!(may_serve_stale(&reference, WallTime(37 * DAY_MS - 1), &policy));
        assert!(!may_serve_stale(&reference, WallTime(37 * DAY_MS), &policy));
        let search = decode_entry(entry(DataClass::Search, "1.5.0", 0, 600_000)).unwrap();
        assert!(!may_serve_stale(&search, WallTime(600_001), &policy));
    }
}
