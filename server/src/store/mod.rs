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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use besluitbron_core::PlatformId;
use besluitbron_core::cache::{CachePolicy, CacheStats, CacheVersion, DataClass};

pub use redb_store::{OpenError, RedbStore};

/// The directory under the data directory that holds the buffer files.
pub const CACHE_DIR: &str = "cache";

/// Where `platform`'s buffer lives under `data_dir`: `<data_dir>/cache/<platform>.redb`.
pub fn store_path(data_dir: &Path, platform: PlatformId) -> PathBuf {
    data_dir.join(CACHE_DIR).join(format!("{}.redb", platform.as_str()))
}

/// Opens every platform's buffer under `data_dir`, each on its own: a platform whose
/// file cannot be opened is reported and left out, the others open regardless (R-C1).
pub fn open_all(
    data_dir: &Path,
    platforms: &[PlatformId],
    policy: &CachePolicy,
    version: &CacheVersion,
) -> (BTreeMap<PlatformId, RedbStore>, Vec<(PlatformId, OpenError)>) {
    let mut stores = BTreeMap::new();
    let mut failures = Vec::new();
    for &platform in platforms {
        let path = store_path(data_dir, platform);
        match RedbStore::open(path, platform, policy.for_platform(platform), version.clone()) {
            Ok(store) => {
                stores.insert(platform, store);
            }
            Err(e) => failures.push((platform, e)),
        }
    }
    (stores, failures)
}

/// Prometheus text for buffer statistics, one series per platform, class and event, in
/// the order given and [`DataClass::ALL`] order (deterministic).
pub fn render_prometheus(stats: &[CacheStats]) -> String {
    let mut out = String::from(
        "# HELP besluitbron_cache_events_total Buffer lookups and removals since the server started.\n\
         # TYPE besluitbron_cache_events_total counter\n",
    );
    for s in stats {
        for class in DataClass::ALL {
            let c = s.class(class);
            for (event, n) in [
                ("hit", c.hits),
                ("miss", c.misses),
                ("expired", c.expired),
                ("version_discard", c.version_discards),
                ("corrupt_discard", c.corrupt_discards),
                ("eviction", c.evictions),
                ("stale_served", c.stale_served),
            ] {
                out.push_str(&format!(
                    "besluitbron_cache_events_total{{platform=\"{}\",class=\"{class}\",event=\"{event}\"}} {n}\n",
                    s.platform
                ));
            }
        }
    }
    out.push_str(
        "# HELP besluitbron_cache_entries Entries stored in the buffer.\n\
         # TYPE besluitbron_cache_entries gauge\n",
    );
    for s in stats {
        for class in DataClass::ALL {
            out.push_str(&format!(
                "besluitbron_cache_entries{{platform=\"{}\",class=\"{class}\"}} {}\n",
                s.platform,
                s.class(class).entries
            ));
        }
    }
    out.push_str(
        "# HELP besluitbron_cache_bytes Bytes (keys plus entries) stored in the buffer.\n\
         # TYPE besluitbron_cache_bytes gauge\n",
    );
    for s in stats {
        for class in DataClass::ALL {
            out.push_str(&format!(
                "besluitbron_cache_bytes{{platform=\"{}\",class=\"{class}\"}} {}\n",
                s.platform,
                s.class(class).bytes_used
            ));
        }
    }
    out.push_str(
        "# HELP besluitbron_cache_budget_bytes Byte budget of a platform's buffer.\n\
         # TYPE besluitbron_cache_budget_bytes gauge\n",
    );
    for s in stats {
        out.push_str(&format!(
            "besluitbron_cache_budget_bytes{{platform=\"{}\"}} {}\n",
            s.platform, s.budget_bytes
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_text_has_one_series_per_platform_class_and_event() {
        let mut obv = CacheStats::new(crate::platforms::obv::PLATFORM, 1000);
        obv.class_mut(DataClass::Search).hits = 3;
        obv.class_mut(DataClass::Document).bytes_used = 512;
        let text = render_prometheus(&[obv, CacheStats::new(crate::platforms::tk::PLATFORM, 2000)]);
        assert!(text.contains("besluitbron_cache_events_total{platform=\"obv\",class=\"search\",event=\"hit\"} 3\n"));
        assert!(text.contains("besluitbron_cache_bytes{platform=\"obv\",class=\"document\"} 512\n"));
        assert!(text.contains("besluitbron_cache_budget_bytes{platform=\"tk\"} 2000\n"));
        assert_eq!(text.matches("besluitbron_cache_events_total{").count(), 2 * 3 * 7);
    }

    #[test]
    fn one_unopenable_platform_does_not_stop_the_others() {
        let dir = tempfile::tempdir().unwrap();
        // A directory where obv's file should be: that one platform cannot open.
        std::fs::create_dir_all(store_path(dir.path(), crate::platforms::obv::PLATFORM)).unwrap();
        let (stores, failures) = open_all(
            dir.path(),
            &crate::connectors::platforms(),
            &CachePolicy::default(),
            &CacheVersion::current(),
        );
        assert_eq!(failures.len(), 1);
        assert_eq!(failures[0].0, crate::platforms::obv::PLATFORM);
        assert_eq!(stores.len(), crate::connectors::platforms().len() - 1);
        assert!(!stores.contains_key(&crate::platforms::obv::PLATFORM));
    }
}
