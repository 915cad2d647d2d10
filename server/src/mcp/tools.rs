//! [`ToolTable`]: every tool of the connector registry, by name — its connector, its
//! platform, the rules its arguments are checked by, and its request counters once they
//! exist.
//!
//! Every tool call counts itself (R-D9: `besluitbron_requests_total{platform, tool,
//! kind}`). Finding the series in the metric family hashes its three labels and takes
//! the family's lock on every call; the table finds the tool once (one foldhash lookup)
//! and keeps each series' counter, which is the family's own (a shared atomic), from
//! the call that made it on.
//!
//! Invariants: a series appears in the family only when a call of that tool and kind
//! was counted (none at start-up, as before); a count for a platform other than the
//! tool's own (never made today) goes to the family directly, so no count is lost or
//! filed under the wrong labels.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::OnceLock;

use besluitbron_core::PlatformId;
use besluitbron_core::dedup::DuplicateKind;
use prometheus_client::metrics::counter::Counter;

use crate::connectors::ConnectorSpec;
use crate::mcp::arguments::Rules;
use crate::metrics::{Metrics, RequestLabels};

/// Where a tool's counter of `kind` is kept.
const fn slot(kind: DuplicateKind) -> usize {
    match kind {
        DuplicateKind::Fresh => 0,
        DuplicateKind::Coalesced => 1,
        DuplicateKind::CacheHit => 2,
        DuplicateKind::Replay => 3,
    }
}

/// One tool: its connector, platform, argument rules and its counters, one per
/// duplicate kind.
struct ToolEntry {
    connector: &'static str,
    platform: PlatformId,
    rules: Rules,
    counters: [OnceLock<Counter>; 4],
}

/// What a tool call needs to know of its tool, found with one lookup.
#[derive(Clone, Copy)]
pub struct ToolInfo<'a> {
    /// The tool's name.
    pub name: &'a str,
    /// The id of the connector it belongs to.
    pub connector: &'static str,
    /// The platform it asks.
    pub platform: PlatformId,
    /// The rules its arguments are checked by (read from its input schema once).
    pub rules: &'a Rules,
}

/// Every tool of the registry, by name.
pub struct ToolTable(HashMap<String, ToolEntry, foldhash::fast::RandomState>);

impl ToolTable {
    /// The tools of `connectors`.
    pub fn new(connectors: &[ConnectorSpec]) -> ToolTable {
        let mut tools = HashMap::default();
        for c in connectors {
            for tool in (c.tools)().list_all() {
                let entry = ToolEntry {
                    connector: c.id,
                    platform: c.platform,
                    rules: Rules::of(&tool.input_schema),
                    counters: Default::default(),
                };
                let earlier = tools.insert(tool.name.to_string(), entry);
                debug_assert!(earlier.is_none(), "two tools named {}", tool.name);
            }
        }
        ToolTable(tools)
    }

    /// `tool`, if it is one of the registry's tools.
    pub fn get(&self, tool: &str) -> Option<ToolInfo<'_>> {
        self.0.get_key_value(tool).map(|(name, t)| ToolInfo {
            name,
            connector: t.connector,
            platform: t.platform,
            rules: &t.rules,
        })
    }

    /// Every tool and its platform.
    pub fn iter(&self) -> impl Iterator<Item = (&str, PlatformId)> {
        self.0.iter().map(|(name, t)| (name.as_str(), t.platform))
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
    use crate::connectors::CONNECTORS;

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
        let table = ToolTable::new(CONNECTORS);
        let metrics = Metrics::new();
        let (tool, platform) = table
            .iter()
            .find(|(t, _)| *t == "obv_search")
            .expect("obv_search listed");
        for _ in 0..3 {
            table.count(&metrics, tool, platform, DuplicateKind::CacheHit);
        }
        table.count(&metrics, tool, platform, DuplicateKind::Fresh);
        assert_eq!(value(&metrics, tool, platform, DuplicateKind::CacheHit), 3);
        assert_eq!(value(&metrics, tool, platform, DuplicateKind::Fresh), 1);
        assert_eq!(value(&metrics, tool, platform, DuplicateKind::Replay), 0);
        // Another platform's count of the same tool is its own series, never the tool's.
        let other = CONNECTORS
            .iter()
            .map(|c| c.platform)
            .find(|p| *p != platform)
            .expect("a second platform");
        table.count(&metrics, tool, other, DuplicateKind::CacheHit);
        assert_eq!(value(&metrics, tool, other, DuplicateKind::CacheHit), 1);
        assert_eq!(value(&metrics, tool, platform, DuplicateKind::CacheHit), 3);
    }

    #[test]
    fn every_tool_of_every_connector_is_found_under_its_own_connector() {
        let table = ToolTable::new(CONNECTORS);
        let mut listed = 0;
        for c in CONNECTORS {
            for tool in (c.tools)().list_all() {
                listed += 1;
                let info = table.get(&tool.name).expect("in the table");
                assert_eq!(
                    (info.name, info.connector, info.platform),
                    (&*tool.name, c.id, c.platform)
                );
            }
        }
        assert_eq!(table.iter().count(), listed, "no two tools share a name");
        assert!(table.get("no_such_tool").is_none());
    }

    #[test]
    fn no_series_exists_before_its_first_count() {
        let table = ToolTable::new(CONNECTORS);
        let metrics = Metrics::new();
        assert!(!metrics.render().contains("obv_search"));
        table.count(&metrics, "obv_search", PlatformId::Obv, DuplicateKind::CacheHit);
        let text = metrics.render();
        assert!(
            text.contains(r#"tool="obv_search""#) && text.contains(r#"kind="cache_hit""#),
            "{text}"
        );
    }
}
