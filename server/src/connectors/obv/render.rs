//! What OpenBesluitvorming's tools keep and show: the typed answers stored in the buffer,
//! and pure functions from an answer (and the tool's arguments) to text and structured
//! content. Snapshot-tested below on fixed answers.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::Structure;
use crate::call::{Rendered, provenance};
use crate::connectors::obv::ids::page_url;
use crate::connectors::pages::{TextPage, Window, text_page};
use crate::connectors::vocabulary::{Item, Listing, Tally};
use crate::platforms::obv::{Entity, SearchPage, Source, Status, iso_day};

/// One hit of `obv_search`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hit {
    /// Composite id, for obv_document.
    pub entity_id: String,
    /// `Meeting`, `Document`, `Motion` or `Recording`.
    pub entity_type: String,
    /// Title.
    pub title: String,
    /// The organisation's name.
    pub organization: String,
    /// The date, as the platform writes it.
    pub date: String,
    /// A short summary.
    pub summary: String,
    /// Where the file is.
    pub download_url: Option<String>,
}

/// What `obv_search` keeps: one page of hits.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchAnswer {
    /// The hits.
    pub results: Vec<Hit>,
    /// About how many match.
    pub total_count: u64,
    /// Whether the count is an estimate.
    pub total_is_approximate: bool,
    /// Whether there are more pages.
    pub has_more: bool,
}

impl From<SearchPage> for SearchAnswer {
    fn from(page: SearchPage) -> SearchAnswer {
        SearchAnswer {
            results: page
                .results
                .into_iter()
                .map(|h| Hit {
                    entity_id: h.entity_id,
                    entity_type: h.entity_type,
                    title: h.title,
                    organization: h.organization,
                    date: h.date,
                    summary: h.summary,
                    download_url: h.download_url,
                })
                .collect(),
            total_count: page.total_count,
            total_is_approximate: page.total_is_approximate,
            has_more: page.has_more,
        }
    }
}

/// What a search asked (its answer says so, and an empty one says how to widen it).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Searched {
    /// The words.
    pub query: Option<String>,
    /// The source key.
    pub organization: Option<String>,
    /// The kind of entity.
    pub entity_type: Option<String>,
    /// First day.
    pub date_from: Option<String>,
    /// Last day.
    pub date_to: Option<String>,
    /// The order.
    pub sort: String,
    /// Hits skipped.
    pub offset: u32,
    /// Hits per page.
    pub limit: u32,
}

impl Searched {
    /// The search in words: "`woningbouw` in gemeente-utrecht, motions, from … to …".
    fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(q) = &self.query {
            parts.push(format!("`{q}`"));
        }
        parts.push(match &self.organization {
            Some(o) => format!("in source `{o}`"),
            None => "in all 331 sources".to_owned(),
        });
        if let Some(t) = &self.entity_type {
            parts.push(format!("entity_type {t}"));
        }
        match (&self.date_from, &self.date_to) {
            (Some(f), Some(t)) => parts.push(format!("from {f} to {t}")),
            (Some(f), None) => parts.push(format!("from {f}")),
            (None, Some(t)) => parts.push(format!("until {t}")),
            (None, None) => {}
        }
        parts.join(", ")
    }

    /// How to find more when nothing matched.
    fn widen(&self) -> String {
        let mut steps = Vec::new();
        if self.offset > 0 {
            steps.push("lower `offset` (the search has fewer hits than that)".to_owned());
        }
        if self.entity_type.is_some() {
            steps.push("drop `entity_type`".to_owned());
        }
        if self.date_from.is_some() || self.date_to.is_some() {
            steps.push("widen or drop `date_from`/`date_to`".to_owned());
        }
        if self.organization.is_some() {
            steps.push("drop `organization` to search all sources (check the key with obv_sources)".to_owned());
        }
        if self.query.is_some() {
            steps.push("use fewer or other words (all words must occur)".to_owned());
        }
        steps.push(
            "for the Tweede Kamer use tk_search or opentk_search; a council's decision as published in the \
             Gemeenteblad (and every other official publication) is found with ob_search"
                .to_owned(),
        );
        steps.join("; ")
    }
}

/// One result of `obv_search`: the shared [`Item`] and its short summary.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    /// The record (`kind`: `Meeting`, `Document`, `Motion` or `Recording`; `date`:
    /// YYYY-MM-DD; `url`: its file, else its page on openbesluitvorming.nl).
    #[serde(flatten)]
    pub item: Item,
    /// A short summary.
    pub summary: String,
}

impl Found {
    fn of(hit: &Hit) -> Found {
        Found {
            item: Item::new(
                crate::platforms::obv::PLATFORM,
                "obv_document",
                hit.entity_id.clone(),
                hit.title.clone(),
            )
            .dated(iso_day(&hit.date))
            .kind(Some(hit.entity_type.clone()))
            .of(Some(hit.organization.clone()))
            .at(hit.download_url.clone().or_else(|| page_url(&hit.entity_id))),
            summary: hit.summary.clone(),
        }
    }
}

/// `obv_search`'s structured content: the page's results, what was asked, the total
/// and where the next page starts.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchShown {
    /// What was searched.
    pub searched: Searched,
    /// The results.
    pub results: Vec<Found>,
    /// How many match (OpenBesluitvorming may estimate), and the next page.
    #[serde(flatten)]
    pub tally: Tally,
    /// When `organization` is no one source: the sources it may be (each `id` a key for
    /// `organization`); no search was made.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub candidates: Vec<Item>,
}

/// `obv_search`'s answer when its `organization` fits no single source (`message` says
/// which it may be): no search was made, no results, the sources as `candidates`.
pub fn candidates(searched: &Searched, message: String, sources: &[SourceEntry]) -> Rendered {
    let shown = SearchShown {
        searched: searched.clone(),
        results: Vec::new(),
        tally: Tally::default(),
        candidates: sources
            .iter()
            .map(|s| {
                Item::reference(crate::platforms::obv::PLATFORM, s.key.clone(), s.label.clone())
                    .kind(Some(s.organization_type.clone()))
            })
            .collect(),
    };
    Rendered {
        text: message,
        structured: Structure::Own(json!(shown)),
    }
}

/// `obv_search`'s result: every hit of the page as a line, what was searched, and how to
/// get the next page (or, for no hits, how to widen the search).
pub fn search(answer: &SearchAnswer, served: Served, searched: &Searched) -> Rendered {
    let shown = u32::try_from(answer.results.len()).unwrap_or(u32::MAX);
    let next_offset = answer.has_more.then(|| searched.offset.saturating_add(shown));
    let mut text = if answer.results.is_empty() {
        format!(
            "OpenBesluitvorming found nothing for {}{}. To widen: {}.",
            searched.describe(),
            provenance(served),
            searched.widen()
        )
    } else {
        format!(
            "Hits {}–{} of {}{} for {}{}.",
            searched.offset + 1,
            searched.offset.saturating_add(shown),
            if answer.total_is_approximate { "about " } else { "" },
            answer.total_count,
            searched.describe(),
            provenance(served)
        )
    };
    for hit in &answer.results {
        for (before, part) in [
            ("\n- ", hit.title.as_str()),
            (" (", hit.organization.as_str()),
            (", ", hit.date.as_str()),
            (") id=", hit.entity_id.as_str()),
        ] {
            text.push_str(before);
            text.push_str(part);
        }
    }
    if let Some(next) = next_offset {
        let _ = write!(text, "\nMore hits: call again with `offset` {next}.");
    }
    Rendered {
        text,
        structured: Structure::Own(json!(search_shown(answer, searched))),
    }
}

/// `obv_search`'s structured content.
fn search_shown(answer: &SearchAnswer, searched: &Searched) -> SearchShown {
    let shown = u32::try_from(answer.results.len()).unwrap_or(u32::MAX);
    SearchShown {
        searched: searched.clone(),
        results: answer.results.iter().map(Found::of).collect(),
        tally: Tally {
            total: Some(answer.total_count),
            total_is_exact: !answer.total_is_approximate,
            next_offset: answer
                .has_more
                .then(|| u64::from(searched.offset.saturating_add(shown))),
        },
        candidates: Vec::new(),
    }
}

/// `obv_search`'s results as the shared vocabulary's listing: what its structured
/// content holds of it, typed.
pub fn listing(answer: &SearchAnswer, searched: &Searched) -> Listing {
    let shown = search_shown(answer, searched);
    Listing {
        results: shown.results.into_iter().map(|f| f.item).collect(),
        tally: shown.tally,
    }
}

/// An agenda item of a meeting, as `obv_document` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgendaEntry {
    /// Id.
    pub id: String,
    /// Its number on the agenda.
    pub number: String,
    /// Title.
    pub title: String,
    /// Its documents (id, name).
    pub documents: Vec<AgendaDocumentEntry>,
}

/// A document on an agenda item.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct AgendaDocumentEntry {
    /// Id, for obv_document.
    pub id: String,
    /// Name.
    pub name: String,
}

/// A motion of a meeting, as `obv_document` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MotionEntry {
    /// Id.
    pub id: String,
    /// Name.
    pub name: String,
    /// `aangenomen`, `verworpen`, ….
    pub result: String,
    /// Votes in favour.
    pub in_favour: u32,
    /// Votes against.
    pub against: u32,
}

/// The motion an entity is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MotionSummary {
    /// Name.
    pub name: String,
    /// `aangenomen`, `verworpen`, ….
    pub result: String,
    /// The platform's status text.
    pub status: Option<String>,
    /// Votes in favour.
    pub in_favour: u32,
    /// Votes against.
    pub against: u32,
}

/// What `obv_document` keeps: an entity with its whole text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DocumentAnswer {
    /// Composite id.
    pub entity_id: String,
    /// Its type.
    pub entity_type: String,
    /// Title.
    pub title: String,
    /// The organisation's name.
    pub organization: String,
    /// The date, as the platform writes it.
    pub date: String,
    /// The whole text (markdown).
    pub text: String,
    /// Where the file is.
    pub download_url: Option<String>,
    /// The PDF.
    pub pdf_url: Option<String>,
    /// The meeting it belongs to.
    pub meeting_id: Option<String>,
    /// A meeting's agenda.
    pub agenda: Vec<AgendaEntry>,
    /// A meeting's motions.
    pub motions: Vec<MotionEntry>,
    /// A motion's own result.
    pub motion: Option<MotionSummary>,
}

impl From<Entity> for DocumentAnswer {
    fn from(e: Entity) -> DocumentAnswer {
        DocumentAnswer {
            entity_id: e.entity_id,
            entity_type: e.entity_type,
            title: e.title,
            organization: e.organization,
            date: e.date,
            text: e.markdown_text.unwrap_or_default(),
            download_url: e.download_url,
            pdf_url: e.pdf_url,
            meeting_id: e.meeting_id,
            agenda: e
                .agenda
                .into_iter()
                .map(|a| AgendaEntry {
                    id: a.id,
                    number: a.number,
                    title: a.title,
                    documents: a
                        .documents
                        .into_iter()
                        .map(|d| AgendaDocumentEntry { id: d.id, name: d.name })
                        .collect(),
                })
                .collect(),
            motions: e
                .motions
                .into_iter()
                .map(|m| MotionEntry {
                    id: m.id,
                    name: m.name,
                    result: m.result,
                    in_favour: m.tally.in_favour,
                    against: m.tally.against,
                })
                .collect(),
            motion: e.motion.map(|m| MotionSummary {
                name: m.name,
                result: m.result,
                status: m.status,
                in_favour: m.tally.in_favour,
                against: m.tally.against,
            }),
        }
    }
}

/// `obv_document`'s structured content: the entity without its text, and where the
/// page shown as text content is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DocumentShown {
    /// Composite id (`obv_document` `id`).
    pub id: String,
    /// Title.
    pub title: String,
    /// The day, YYYY-MM-DD (the platform's words where they name no day).
    pub date: String,
    /// Its type: `Meeting`, `Document`, `Motion` or `Recording`.
    pub kind: String,
    /// The organisation's name.
    pub organization: String,
    /// Where the file is, else the record's page on openbesluitvorming.nl.
    pub url: Option<String>,
    /// `obv`.
    pub platform: String,
    /// The PDF.
    pub pdf_url: Option<String>,
    /// The meeting it belongs to.
    pub meeting_id: Option<String>,
    /// A meeting's agenda.
    pub agenda: Vec<AgendaEntry>,
    /// A meeting's motions.
    pub motions: Vec<MotionEntry>,
    /// A motion's own result.
    pub motion: Option<MotionSummary>,
    /// Where the page of text is.
    #[serde(flatten)]
    pub page: TextPage,
}

/// `obv_document`'s result: the characters `offset..offset + length` of the text as the
/// text content, the metadata and the page's place as structured content.
pub fn document(answer: &DocumentAnswer, served: Served, offset: usize, length: usize) -> Rendered {
    let (page, at) = text_page(&answer.text, offset, length);
    let summary = format!(
        "{} — {} ({}), {}{}.",
        answer.title,
        answer.organization,
        answer.date,
        at.note(),
        provenance(served)
    );
    let body = if answer.text.is_empty() {
        "OpenBesluitvorming holds no text for this entity; its file (download_url / pdf_url) may have it.".to_owned()
    } else {
        page
    };
    let shown = DocumentShown {
        id: answer.entity_id.clone(),
        title: answer.title.clone(),
        date: iso_day(&answer.date).unwrap_or_else(|| answer.date.clone()),
        kind: answer.entity_type.clone(),
        organization: answer.organization.clone(),
        url: answer.download_url.clone().or_else(|| page_url(&answer.entity_id)),
        platform: crate::platforms::obv::PLATFORM.as_str().to_owned(),
        pdf_url: answer.pdf_url.clone(),
        meeting_id: answer.meeting_id.clone(),
        agenda: answer.agenda.clone(),
        motions: answer.motions.clone(),
        motion: answer.motion.clone(),
        page: at,
    };
    Rendered {
        text: format!("{summary}\n\n{body}"),
        structured: Structure::Own(json!(shown)),
    }
}

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

#[cfg(test)]
mod tests {

    use super::*;

    fn hit(n: u32) -> Hit {
        Hit {
            entity_id: format!("document:notubiz:gemeente:soest:{n}"),
            entity_type: "Document".into(),
            title: format!("Raadsvoorstel begroting {n}"),
            organization: "Gemeente Soest".into(),
            date: "12 maart 2026".into(),
            summary: "De raad stelt de begroting vast.".into(),
            download_url: Some(format!("https://example.invalid/{n}.pdf")),
        }
    }

    use crate::connectors::render_test::{snapshot, structured};

    fn searched(query: Option<&str>, organization: Option<&str>) -> Searched {
        Searched {
            query: query.map(str::to_owned),
            organization: organization.map(str::to_owned),
            entity_type: None,
            date_from: None,
            date_to: None,
            sort: "date_desc".into(),
            offset: 0,
            limit: 24,
        }
    }

    #[test]
    fn search_lists_every_hit_and_says_how_to_get_the_next_page() {
        let answer = SearchAnswer {
            results: (1..=12).map(hit).collect(),
            total_count: 140,
            total_is_approximate: true,
            has_more: true,
        };
        let r = search(
            &answer,
            Served::Cached,
            &searched(Some("begroting"), Some("gemeente-soest")),
        );
        assert_eq!(structured(&r, &answer)["next_offset"], 12);
        snapshot("obv_search", &r, &answer);
    }

    #[test]
    fn an_exact_total_is_said_without_about() {
        let mut answer = SearchAnswer {
            results: (1..=3).map(hit).collect(),
            total_count: 3,
            total_is_approximate: false,
            has_more: false,
        };
        let asked = searched(Some("begroting"), Some("gemeente-soest"));
        let r = search(&answer, Served::Fetched, &asked);
        assert!(r.text.starts_with("Hits 1–3 of 3 for"), "{}", r.text);
        answer.total_is_approximate = true;
        let r = search(&answer, Served::Fetched, &asked);
        assert!(r.text.starts_with("Hits 1–3 of about 3 for"), "{}", r.text);
    }

    #[test]
    fn an_empty_search_says_what_was_searched_and_how_to_widen_it() {
        let answer = SearchAnswer {
            results: Vec::new(),
            total_count: 0,
            total_is_approximate: false,
            has_more: false,
        };
        let asked = Searched {
            entity_type: Some("Motion".into()),
            date_from: Some("2026-01-01".into()),
            ..searched(Some("windmolens"), Some("gemeente-utrecht"))
        };
        let r = search(&answer, Served::Fetched, &asked);
        assert!(
            r.text.contains("drop `organization`") && r.text.contains("ob_search") && !r.text.contains("ori_"),
            "{}",
            r.text
        );
        snapshot("obv_search_empty", &r, &answer);
    }

    #[test]
    fn a_document_page_says_what_is_left() {
        let answer = DocumentAnswer {
            entity_id: "document:notubiz:gemeente:soest:7".into(),
            entity_type: "Document".into(),
            title: "Besluitenlijst".into(),
            organization: "Gemeente Soest".into(),
            date: "1 april 2026".into(),
            text: "Eén twee drie vier vijf".into(),
            download_url: None,
            pdf_url: None,
            meeting_id: Some("meeting:notubiz:gemeente:soest:3".into()),
            agenda: Vec::new(),
            motions: Vec::new(),
            motion: None,
        };
        let r = document(&answer, Served::Fetched, 4, 9);
        assert!(r.text.ends_with("\n\ntwee drie"), "{}", r.text);
        assert_eq!(structured(&r, &answer)["total_length"], 23);
        assert_eq!(structured(&r, &answer)["next_offset"], 13);
        assert!(
            structured(&r, &answer).get("text").is_none(),
            "the text is not repeated"
        );
        snapshot("obv_document", &r, &answer);
    }

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
