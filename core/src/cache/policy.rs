//! What is kept how long: data classes, their lifetimes per platform, the byte budget,
//! and the BesluitBron version that stamps every entry.
//!
//! Lifetimes are configuration with documented defaults (R-C2), never constants in a
//! store. The defaults:
//!
//! | class | lifetime | stale-if-error window |
//! |---|---|---|
//! | [`DataClass::Reference`] (organisations, committees, factions, value lists) | 30 days | 7 days |
//! | [`DataClass::Search`] (search results) | 10 minutes | none |
//! | [`DataClass::Document`] (full document text) | 21 days | none |
//!
//! and a budget of 256 MiB per platform.
//!
//! Invariant: an entry's expiry is fixed when it is written (`stored_at + ttl_ms`);
//! changing the policy later does not move the expiry of entries already stored.

use std::collections::BTreeMap;
use std::fmt;

use crate::PlatformId;

const MINUTE_MS: u64 = 60 * 1000;
const DAY_MS: u64 = 24 * 60 * MINUTE_MS;

/// The kind of data an answer is; the kind decides how long it is kept (R-C2).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DataClass {
    /// Lists that change on the order of months: source organisations, committees,
    /// factions, Rechtspraak value lists. Kept long; may be served stale on failure.
    Reference,
    /// Search results: kept briefly, so a question repeated within one conversation
    /// does not reach the platform twice.
    Search,
    /// Full document text: the most expensive fetch, kept for weeks.
    Document,
}

impl DataClass {
    /// All three, in a fixed order (for deterministic output).
    pub const ALL: [DataClass; 3] = [DataClass::Reference, DataClass::Search, DataClass::Document];

    /// The lowercase name used in keys, metrics and the CLI.
    pub const fn as_str(self) -> &'static str {
        match self {
            DataClass::Reference => "reference",
            DataClass::Search => "search",
            DataClass::Document => "document",
        }
    }

    /// The class named `name`, if any.
    pub fn from_name(name: &str) -> Option<DataClass> {
        DataClass::ALL.into_iter().find(|c| c.as_str() == name)
    }

    /// The one-byte tag in an entry header.
    pub const fn tag(self) -> u8 {
        match self {
            DataClass::Reference => 1,
            DataClass::Search => 2,
            DataClass::Document => 3,
        }
    }

    /// The class with header tag `tag`, if any.
    pub fn from_tag(tag: u8) -> Option<DataClass> {
        DataClass::ALL.into_iter().find(|c| c.tag() == tag)
    }

    /// Position in [`DataClass::ALL`], for per-class arrays.
    pub const fn index(self) -> usize {
        match self {
            DataClass::Reference => 0,
            DataClass::Search => 1,
            DataClass::Document => 2,
        }
    }
}

impl fmt::Display for DataClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How long one class of data is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ClassPolicy {
    /// Lifetime of a fresh entry, in milliseconds after it was stored.
    pub ttl_ms: u64,
    /// How long after expiry a same-version entry may still be answered, marked stale,
    /// when the platform fails. Zero: never served stale.
    pub stale_if_error_ms: u64,
}

/// The buffer policy for one platform: a lifetime per class and a byte budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PlatformCachePolicy {
    /// Reference lists: 30 days, served stale for up to 7 days more on failure.
    pub reference: ClassPolicy,
    /// Search results: 10 minutes, never stale.
    pub search: ClassPolicy,
    /// Full document text: 21 days, never stale.
    pub document: ClassPolicy,
    /// Most bytes (keys plus encoded entries) the platform's buffer holds: 256 MiB.
    pub budget_bytes: u64,
}

impl Default for PlatformCachePolicy {
    fn default() -> PlatformCachePolicy {
        PlatformCachePolicy {
            reference: ClassPolicy {
                ttl_ms: 30 * DAY_MS,
                stale_if_error_ms: 7 * DAY_MS,
            },
            search: ClassPolicy {
                ttl_ms: 10 * MINUTE_MS,
                stale_if_error_ms: 0,
            },
            document: ClassPolicy {
                ttl_ms: 21 * DAY_MS,
                stale_if_error_ms: 0,
            },
            budget_bytes: 256 * 1024 * 1024,
        }
    }
}

impl PlatformCachePolicy {
    /// The policy for `class`.
    pub const fn class(&self, class: DataClass) -> ClassPolicy {
        match class {
            DataClass::Reference => self.reference,
            DataClass::Search => self.search,
            DataClass::Document => self.document,
        }
    }
}

/// The buffer policy of all platforms: one default and per-platform overrides.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CachePolicy {
    /// Used for every platform without an override.
    pub default: PlatformCachePolicy,
    /// Platform-specific policies (a `BTreeMap`, so iteration order is fixed).
    pub overrides: BTreeMap<PlatformId, PlatformCachePolicy>,
}

impl CachePolicy {
    /// The policy in force for `platform`.
    pub fn for_platform(&self, platform: PlatformId) -> PlatformCachePolicy {
        self.overrides.get(&platform).copied().unwrap_or(self.default)
    }
}

/// The BesluitBron version that wrote an entry (R-C3).
///
/// Invariant: non-empty, at most 255 bytes, no control characters.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CacheVersion(String);

/// A version string that cannot stamp an entry.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid BesluitBron version `{0}`: must be 1 to 255 bytes without control characters")]
pub struct InvalidVersion(pub String);

impl CacheVersion {
    /// The version of this build (`CARGO_PKG_VERSION`, fixed at compile time).
    pub fn current() -> CacheVersion {
        CacheVersion(env!("CARGO_PKG_VERSION").to_owned())
    }

    /// A version given explicitly (tests, the simulator, an operator override).
    pub fn new(version: impl Into<String>) -> Result<CacheVersion, InvalidVersion> {
        let version = version.into();
        if version.is_empty() || version.len() > 255 || version.chars().any(char::is_control) {
            return Err(InvalidVersion(version));
        }
        Ok(CacheVersion(version))
    }

    /// The version text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for CacheVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platform::examples;

    #[test]
    fn defaults_match_the_documented_table() {
        let p = PlatformCachePolicy::default();
        assert_eq!(p.class(DataClass::Reference).ttl_ms, 30 * 24 * 3600 * 1000);
        assert_eq!(p.class(DataClass::Reference).stale_if_error_ms, 7 * 24 * 3600 * 1000);
        assert_eq!(p.class(DataClass::Search).ttl_ms, 10 * 60 * 1000);
        assert_eq!(p.class(DataClass::Document).ttl_ms, 21 * 24 * 3600 * 1000);
        let stale: Vec<_> = DataClass::ALL
            .into_iter()
            .filter(|c| p.class(*c).stale_if_error_ms > 0)
            .collect();
        assert_eq!(stale, [DataClass::Reference], "only reference lists are served stale");
    }

    #[test]
    fn overrides_apply_to_their_platform_only() {
        let mut policy = CachePolicy::default();
        let mut obv = PlatformCachePolicy::default();
        obv.search.ttl_ms = 1;
        policy.overrides.insert(examples::OBV, obv);
        assert_eq!(policy.for_platform(examples::OBV).search.ttl_ms, 1);
        assert_eq!(policy.for_platform(examples::TK).search.ttl_ms, 10 * 60 * 1000);
    }

    #[test]
    fn class_names_and_tags_round_trip() {
        for c in DataClass::ALL {
            assert_eq!(DataClass::from_name(c.as_str()), Some(c));
            assert_eq!(DataClass::from_tag(c.tag()), Some(c));
            assert_eq!(DataClass::ALL[c.index()], c);
        }
        assert_eq!(DataClass::from_tag(0), None);
    }

    #[test]
    fn versions_are_validated() {
        assert_eq!(CacheVersion::current().as_str(), env!("CARGO_PKG_VERSION"));
        assert!(CacheVersion::new("1.5.1").is_ok());
        assert!(CacheVersion::new("").is_err());
        assert!(CacheVersion::new("1.5\n").is_err());
        assert!(CacheVersion::new("x".repeat(256)).is_err());
    }
}
