//! `obv_status`'s answer: OpenBesluitvorming's load status as kept — per supplier and per
//! source, how current its data is — and the part a filter (one source, a state) asks for.
//!
//! Invariants: a source the filter names that the status lacks is no answer (`None`),
//! never an empty one. What it does not do: fetch the status.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::Structure;
use crate::call::{Rendered, provenance};
use crate::connectors::pages::Window;
use crate::connectors::vocabulary::{Item, Tally};
use crate::platforms::obv::Status;

/// One supplier's load status, as `obv_status` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SupplierEntry {
    /// Supplier id.
    pub supplier: String,
    /// Name.
    pub label: String,
    /// `ok`, `degraded`, `down` or `idle`.
    pub state: String,
    /// Its sources.
    pub source_count: u32,
    /// Of which `ok`.
    pub ok_source_count: u32,
}

/// One source's load status, as `obv_status` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceStatusEntry {
    /// The source key.
    pub source_key: String,
    /// Name.
    pub label: String,
    /// `ok`, `stale`, `failing`, ….
    pub state: String,
    /// Last successful import.
    pub last_success_at: Option<String>,
    /// Newest content held.
    pub latest_content_date: Option<String>,
    /// Last error.
    pub last_error_message: Option<String>,
    /// Documents the platform holds of the supplier's, when it checked (`coverage`).
    #[serde(default)]
    pub held_documents: Option<u64>,
    /// Documents the supplier has, when the platform checked.
    #[serde(default)]
    pub supplier_documents: Option<u64>,
}

/// What `obv_status` keeps: the load status (Laadstatus).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusAnswer {
    /// When the platform computed it.
    pub generated_at: String,
    /// Per supplier.
    pub suppliers: Vec<SupplierEntry>,
    /// Per source.
    pub sources: Vec<SourceStatusEntry>,
}

impl From<Status> for StatusAnswer {
    fn from(status: Status) -> StatusAnswer {
        StatusAnswer {
            generated_at: status.generated_at,
            suppliers: status
                .suppliers
                .into_iter()
                .map(|s| SupplierEntry {
                    supplier: s.supplier,
                    label: s.label,
                    state: s.state,
                    source_count: s.source_count,
                    ok_source_count: s.ok_source_count,
                })
                .collect(),
            sources: status
                .sources
                .into_iter()
                .map(|s| SourceStatusEntry {
                    source_key: s.source_key,
                    label: s.label,
                    state: s.state,
                    last_success_at: s.last_success_at,
                    latest_content_date: s.latest_content_date,
                    last_error_message: s.last_error_message,
                    held_documents: s.coverage.as_ref().and_then(|c| c.held_documents),
                    supplier_documents: s.coverage.as_ref().and_then(|c| c.supplier_documents),
                })
                .collect(),
        }
    }
}

/// Which sources `obv_status` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StatusFilter {
    /// Only this source key (then `state` is not applied).
    pub source: Option<String>,
    /// Only sources in this state (`not_ok`, `any` or a state name).
    pub state: &'static str,
    /// Matching sources skipped.
    pub offset: usize,
    /// The most shown.
    pub limit: usize,
}

/// `obv_status`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct StatusShown {
    /// When the platform computed it.
    pub generated_at: String,
    /// Per supplier.
    pub suppliers: Vec<SupplierEntry>,
    /// The sources shown: each an [`Item`] (`id`: the source key) with its state.
    pub results: Vec<SourceStatusShown>,
    /// Matching sources in all, and the next page.
    #[serde(flatten)]
    pub tally: Tally,
    /// The state asked for (`not_ok`, `any`, a state name), or `source` for one source.
    pub state: String,
    /// Sources in the status in all.
    pub sources_in_all: usize,
    /// Sources whose state is not `ok`.
    pub not_ok: usize,
}

/// One source's load status, as `obv_status` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SourceStatusShown {
    /// The source.
    #[serde(flatten)]
    pub item: Item,
    /// `ok`, `stale`, `failing`, ….
    pub state: String,
    /// Last successful import.
    pub last_success_at: Option<String>,
    /// Newest content held.
    pub latest_content_date: Option<String>,
    /// Last error.
    pub last_error_message: Option<String>,
    /// Documents the platform holds of the supplier's, when it checked.
    pub held_documents: Option<u64>,
    /// Documents the supplier has, when the platform checked.
    pub supplier_documents: Option<u64>,
}

impl SourceStatusShown {
    fn of(s: &SourceStatusEntry) -> SourceStatusShown {
        SourceStatusShown {
            item: Item::reference(crate::platforms::obv::PLATFORM, s.source_key.clone(), s.label.clone()),
            state: s.state.clone(),
            last_success_at: s.last_success_at.clone(),
            latest_content_date: s.latest_content_date.clone(),
            last_error_message: s.last_error_message.clone(),
            held_documents: s.held_documents,
            supplier_documents: s.supplier_documents,
        }
    }
}

/// `obv_status`'s result for `filter`; `None` when the one source asked for is not in the
/// status.
pub fn status(answer: &StatusAnswer, served: Served, filter: &StatusFilter) -> Option<Rendered> {
    let state = StatusFilterState::of(filter);
    let matching: Vec<&SourceStatusEntry> = answer.sources.iter().filter(|s| state.admits(s)).collect();
    if filter.source.is_some() && matching.is_empty() {
        return None;
    }
    let not_ok = answer.sources.iter().filter(|s| s.state != "ok").count();
    let window = Window::new(matching.len(), filter.offset, filter.limit);
    let shown: Vec<SourceStatusEntry> = window.of(&matching).iter().map(|s| (*s).clone()).collect();
    let generated = if answer.generated_at.is_empty() {
        "?"
    } else {
        &answer.generated_at
    };
    let mut text = format!(
        "Status of {generated}: {} sources, {not_ok} not ok{}.",
        answer.sources.len(),
        provenance(served)
    );
    let label = filter
        .source
        .as_deref()
        .map_or_else(|| format!("state {}", filter.state), |s| format!("source `{s}`"));
    if matching.is_empty() {
        let _ = write!(
            text,
            "\nNo source has {label}. Use `state` any (or another state) to see others."
        );
    } else {
        let _ = write!(text, "\nSources with {label}: {}.", window.note());
    }
    for s in &shown {
        let _ = write!(text, "\n- {} ({}): {}", s.label, s.source_key, s.state);
        if let Some(date) = s.latest_content_date.as_deref().filter(|_| s.state == "stale") {
            let _ = write!(text, ", newest content {date}");
        }
        if let (Some(held), Some(of)) = (s.held_documents, s.supplier_documents)
            && held < of
        {
            let _ = write!(text, ", holds {held} of the supplier's {of} documents");
        }
        if let Some(e) = s.last_error_message.as_deref().filter(|e| !e.is_empty()) {
            let _ = write!(text, " — {e}");
        }
    }
    let value = StatusShown {
        generated_at: answer.generated_at.clone(),
        suppliers: answer.suppliers.clone(),
        results: shown.iter().map(SourceStatusShown::of).collect(),
        tally: window.tally(),
        state: filter.source.as_ref().map_or(filter.state, |_| "source").to_owned(),
        sources_in_all: answer.sources.len(),
        not_ok,
    };
    Some(Rendered {
        text,
        structured: Structure::Own(json!(value)),
    })
}

/// The one test a status source passes to be shown.
enum StatusFilterState<'a> {
    Source(&'a str),
    State(&'a str),
}

impl<'a> StatusFilterState<'a> {
    fn of(filter: &'a StatusFilter) -> StatusFilterState<'a> {
        match &filter.source {
            Some(s) => StatusFilterState::Source(s),
            None => StatusFilterState::State(filter.state),
        }
    }

    fn admits(&self, s: &SourceStatusEntry) -> bool {
        match self {
            StatusFilterState::Source(key) => s.source_key == *key,
            StatusFilterState::State("any") => true,
            StatusFilterState::State("not_ok") => s.state != "ok",
            StatusFilterState::State(state) => s.state == *state,
        }
    }
}
