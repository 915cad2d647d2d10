//! [`RequestCounters`]: every tool call counts itself (R-D9:
//! `besluitbron_requests_total{platform, tool, kind}`).
//!
//! Finding the series in the metric family hashes its three labels and takes the
//! family's lock on every call; the table finds the tool once (one foldhash lookup) and
//! keeps each series' counter, which is the family's own (a shared atomic), from the
//! call that made it on.
//!
//! Invariants: a series appears in the family only when a call of that tool and kind
//! was counted (none at start-up); a count for a platform other than the tool's own goes
//! to the family directly, so no count is lost or filed under the wrong labels.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use besluitbron_core::PlatformId;
use besluitbron_core::dedup::DuplicateKind;
use prometheus_client::metrics::counter::Counter;

use crate::metrics::{Metrics, RequestLabels};

/// Where a tool's counter of `kind` is kept.
const fn slot(kind: DuplicateKind) -> usize {
    match kind {
        DuplicateKind::Fresh => 0,
        DuplicateKind::Coalesced => 1,
        DuplicateKind::CacheHit => 2,
        DuplicateKind::Replay => 3,
        DuplicateKind::Canonical => 4,
    }
}

/// One tool's platform and its counters, one per duplicate kind.
struct Entry {
    platform: PlatformId,
    counters: [OnceLock<Counter>; 5],
}

/// Every tool's request counters, by name.
pub struct RequestCounters(HashMap<&'static str, Entry, foldhash::fast::RandomState>);

impl RequestCounters {
    /// Counters for `tools`, each with the platform it asks.
    pub fn new(tools: impl IntoIterator<Item = (&'static str, PlatformId)>) -> RequestCounters {
        let mut table = HashMap::default();
        for (tool, platform) in tools {
            let earlier = table.insert(
                tool,
                Entry {
                    platform,
                    counters: Default::default(),
                },
            );
            debug_assert!(earlier.is_none(), "two tools named {tool}");
        }
        RequestCounters(table)
    }

    /// Counts one call of `tool` at `platform`, of `kind`, in `metrics`.
    pub fn count(&self, metrics: &Metrics, tool: &str, platform: PlatformId, kind: DuplicateKind) {
        let labels = || RequestLabels {
            platform: platform.as_str(),
            tool: Cow::Owned(tool.to_owned()),
            kind: kind.as_str(),
        };
        match self.0.get(tool) {
            Some(entry) if entry.platform == platform => entry.counters[slot(kind)]
                .get_or_init(|| metrics.requests.get_or_create(&labels()).clone())
                .inc(),
            _ => metrics.requests.get_or_create(&labels()).inc(),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn value(metrics: &Metrics, tool: &str, platform: PlatformId, kind: DuplicateKind) -> u64 {
        metrics
            .requests
            .get_or_create(&RequestLabels {
                platform: platform.as_str(),
                tool: Cow::Owned(tool.to_owned()),
                kind: kind.as_str(),
            })
            .get()
    }

    #[test]
    fn every_count_reaches_the_familys_series_of_its_labels() {
        let table = RequestCounters::new([("obv_search", crate::platforms::obv::PLATFORM)]);
        let metrics = Metrics::new();
        let (tool, platform) = ("obv_search", crate::platforms::obv::PLATFORM);
        for _ in 0..3 {
            table.count(&metrics, tool, platform, DuplicateKind::CacheHit);
        }
        table.count(&metrics, tool, platform, DuplicateKind::Fresh);
        assert_eq!(value(&metrics, tool, platform, DuplicateKind::CacheHit), 3);
        assert_eq!(value(&metrics, tool, platform, DuplicateKind::Fresh), 1);
        assert_eq!(value(&metrics, tool, platform, DuplicateKind::Replay), 0);
        // Another platform's count of the same tool is its own series, never the tool's.
        table.count(&metrics, tool, crate::platforms::tk::PLATFORM, DuplicateKind::CacheHit);
        assert_eq!(
            value(&metrics, tool, crate::platforms::tk::PLATFORM, DuplicateKind::CacheHit),
            1
        );
        assert_eq!(value(&metrics, tool, platform, DuplicateKind::CacheHit), 3);
    }

    #[test]
    fn no_series_exists_before_its_first_count() {
        let table = RequestCounters::new([("obv_search", crate::platforms::obv::PLATFORM)]);
        let metrics = Metrics::new();
        assert!(!metrics.render().contains("obv_search"));
        table.count(
            &metrics,
            "obv_search",
            crate::platforms::obv::PLATFORM,
            DuplicateKind::CacheHit,
        );
        let text = metrics.render();
        assert!(
            text.contains(r#"tool="obv_search""#) && text.contains(r#"kind="cache_hit""#),
            "{text}"
        );
    }
}
