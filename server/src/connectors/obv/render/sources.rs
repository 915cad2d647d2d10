//! `obv_sources`'s answer: the whole list of OpenBesluitvorming's sources as kept, and
//! one page of those a filter (kind of organisation, part of a name) matches.
//!
//! Invariants: the kind is compared in any case; the count is exact, the whole list being
//! kept. What it does not do: resolve a name to a source (`names.rs`).

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::Structure;
use crate::call::{Rendered, provenance};
use crate::connectors::pages::Window;
use crate::connectors::vocabulary::{Item, Tally};
use crate::platforms::obv::Source;

/// One source, as `obv_sources` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceEntry {
    /// The key to pass as `organization`.
    pub key: String,
    /// Its name.
    pub label: String,
    /// The supplier of its data.
    pub supplier: String,
    /// `municipality`, `province`, `water`, ….
    pub organization_type: String,
    /// Whether the platform imports it.
    pub implemented: bool,
}

/// What `obv_sources` keeps: the whole list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourcesAnswer {
    /// The sources, in the platform's order.
    pub sources: Vec<SourceEntry>,
}

impl From<Vec<Source>> for SourcesAnswer {
    fn from(sources: Vec<Source>) -> SourcesAnswer {
        SourcesAnswer {
            sources: sources
                .into_iter()
                .map(|s| SourceEntry {
                    key: s.key,
                    label: s.label,
                    supplier: s.supplier,
                    organization_type: s.organization_type,
                    implemented: s.implemented,
                })
                .collect(),
        }
    }
}

/// Which sources `obv_sources` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourcesFilter {
    /// Only this `organizationType`.
    pub organization_type: Option<&'static str>,
    /// Only names or keys containing this (any case).
    pub name: Option<String>,
    /// Matching sources skipped.
    pub offset: usize,
    /// The most shown.
    pub limit: usize,
}

/// One source `obv_sources` shows: the shared [`Item`] (`id`: the key to pass as
/// `organization`; `kind`: `municipality`, `province`, `water`, …) and its supplier.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceShown {
    /// The source.
    #[serde(flatten)]
    pub item: Item,
    /// The supplier of its data.
    pub supplier: String,
    /// Whether the platform imports it.
    pub implemented: bool,
}

impl SourceShown {
    fn of(s: &SourceEntry) -> SourceShown {
        SourceShown {
            item: Item::reference(crate::platforms::obv::PLATFORM, s.key.clone(), s.label.clone())
                .kind(Some(s.organization_type.clone())),
            supplier: s.supplier.clone(),
            implemented: s.implemented,
        }
    }
}

/// `obv_sources`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourcesShown {
    /// The sources shown, in the platform's order.
    pub results: Vec<SourceShown>,
    /// Matching sources in all, and the next page.
    #[serde(flatten)]
    pub tally: Tally,
    /// How many sources the platform has in all.
    pub sources_in_all: usize,
}

/// `obv_sources`'s result: the sources that match `filter`, a window of them.
pub fn sources(answer: &SourcesAnswer, served: Served, filter: &SourcesFilter) -> Rendered {
    let name = filter.name.as_deref().map(str::to_lowercase);
    let matching: Vec<&SourceEntry> = answer
        .sources
        .iter()
        .filter(|s| {
            filter
                .organization_type
                .is_none_or(|t| s.organization_type.eq_ignore_ascii_case(t))
        })
        .filter(|s| {
            name.as_deref()
                .is_none_or(|n| s.label.to_lowercase().contains(n) || s.key.to_lowercase().contains(n))
        })
        .collect();
    let window = Window::new(matching.len(), filter.offset, filter.limit);
    let shown: Vec<SourceEntry> = window.of(&matching).iter().map(|s| (*s).clone()).collect();
    let mut asked = Vec::new();
    if let Some(t) = filter.organization_type {
        asked.push(format!("organization_type {t}"));
    }
    if let Some(n) = &filter.name {
        asked.push(format!("name containing `{n}`"));
    }
    let mut text = if matching.is_empty() {
        format!(
            "No OpenBesluitvorming source matches {}{} (of {} sources). To widen: use a shorter part of the name \
             (e.g. `utrecht`), or drop `name` or `organization_type`.",
            asked.join(" and "),
            provenance(served),
            answer.sources.len()
        )
    } else {
        format!(
            "OpenBesluitvorming sources{}{}: {}. Pass a key as `organization` to obv_search.",
            if asked.is_empty() {
                String::new()
            } else {
                format!(" matching {}", asked.join(" and "))
            },
            provenance(served),
            window.note()
        )
    };
    for s in &shown {
        let _ = write!(text, "\n- {} ({})", s.label, s.key);
    }
    let value = SourcesShown {
        results: shown.iter().map(SourceShown::of).collect(),
        tally: window.tally(),
        sources_in_all: answer.sources.len(),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(value)),
    }
}

#[cfg(test)]
mod tests {
    use crate::connectors::render_test::{snapshot, structured};

    use super::super::status::{SourceStatusEntry, StatusAnswer, StatusFilter, status};
    use super::*;

    #[test]
    fn sources_filter_by_type_in_any_case_and_a_missing_status_source_is_none() {
        let answer = SourcesAnswer {
            sources: ["municipality", "province", "Municipality"]
                .iter()
                .enumerate()
                .map(|(i, t)| SourceEntry {
                    key: format!("source-{i}"),
                    label: format!("Bron {i}"),
                    supplier: "notubiz".into(),
                    organization_type: (*t).into(),
                    implemented: true,
                })
                .collect(),
        };
        let filter = SourcesFilter {
            organization_type: Some("municipality"),
            name: None,
            offset: 0,
            limit: 1,
        };
        let r = sources(&answer, Served::Cached, &filter);
        assert_eq!(structured(&r, &answer)["total"], 2);
        assert_eq!(structured(&r, &answer)["next_offset"], 1);
        snapshot("obv_sources", &r, &answer);
        let none = sources(
            &answer,
            Served::Cached,
            &SourcesFilter {
                name: Some("utrecht".into()),
                ..filter
            },
        );
        assert!(
            none.text.starts_with("No OpenBesluitvorming source matches"),
            "{}",
            none.text
        );
        let status_answer = StatusAnswer {
            generated_at: "2026-11-30T10:00:00Z".into(),
            suppliers: Vec::new(),
            sources: vec![SourceStatusEntry {
                source_key: "gemeente-soest".into(),
                label: "Soest".into(),
                state: "stale".into(),
                last_success_at: None,
                latest_content_date: Some("2026-10-01".into()),
                last_error_message: None,
                held_documents: Some(950),
                supplier_documents: Some(1000),
            }],
        };
        let filter = |source: Option<&str>| StatusFilter {
            source: source.map(str::to_owned),
            state: "not_ok",
            offset: 0,
            limit: 25,
        };
        assert!(status(&status_answer, Served::Fetched, &filter(Some("gemeente-zeist"))).is_none());
        let r = status(&status_answer, Served::Fetched, &filter(None)).expect("all sources");
        snapshot("obv_status", &r, &status_answer);
    }
}
