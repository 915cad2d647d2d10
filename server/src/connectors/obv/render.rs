//! What OpenBesluitvorming's tools keep and show: the typed answers stored in the buffer,
//! and pure functions from an answer (and the tool's arguments) to text and structured
//! content. Snapshot-tested below on fixed answers.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::mcp::call::Structure;
use crate::mcp::{Rendered, provenance};
use crate::platforms::obv::{Entity, SearchPage, Source, Status};

/// One hit of `obv_search`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// `obv_search`'s result.
pub fn search(answer: &SearchAnswer, served: Served) -> Rendered {
    let mut text = format!(
        "{} of about {} hits{}.",
        answer.results.len(),
        answer.total_count,
        provenance(served)
    );
    for hit in answer.results.iter().take(10) {
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
    Rendered::answer(text)
}

/// An agenda item of a meeting, as `obv_document` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgendaDocumentEntry {
    /// Id, for obv_document.
    pub id: String,
    /// Name.
    pub name: String,
}

/// A motion of a meeting, as `obv_document` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// `obv_document`'s result: the characters `offset..offset + length` of the text.
pub fn document(answer: &DocumentAnswer, served: Served, offset: usize, length: usize) -> Rendered {
    let total = answer.text.chars().count();
    let page: String = answer.text.chars().skip(offset).take(length).collect();
    let has_more = offset.saturating_add(length) < total;
    let summary = format!(
        "{} — {} ({}), characters {}–{} of {}{}{}.",
        answer.title,
        answer.organization,
        answer.date,
        offset.min(total),
        (offset + length).min(total),
        total,
        if has_more {
            "; ask again with a larger offset for the rest"
        } else {
            ""
        },
        provenance(served)
    );
    Rendered {
        text: format!("{summary}\n\n{page}"),
        structured: Structure::Answer(vec![
            ("text", json!(page)),
            ("text_offset", json!(offset)),
            ("total_length", json!(total)),
            ("has_more", json!(has_more)),
        ]),
    }
}

/// One source, as `obv_sources` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// `obv_sources`'s result, only sources of `organization_type` when given (any case).
pub fn sources(answer: &SourcesAnswer, served: Served, organization_type: Option<&str>) -> Rendered {
    let wanted = organization_type.map(str::to_lowercase);
    let chosen: Vec<&SourceEntry> = answer
        .sources
        .iter()
        .filter(|s| {
            wanted
                .as_deref()
                .is_none_or(|w| s.organization_type.to_lowercase() == w)
        })
        .collect();
    let count = chosen.len();
    let mut text = format!("{count} sources{}.", provenance(served));
    for s in chosen.iter().take(20) {
        let _ = write!(text, "\n- {} ({})", s.label, s.key);
    }
    // The whole list is the kept answer itself; a selection is a value of its own.
    let structured = if wanted.is_none() {
        Structure::Answer(vec![("count", json!(count))])
    } else {
        Structure::Own(json!({ "sources": chosen, "count": count }))
    };
    Rendered { text, structured }
}

/// One supplier's load status, as `obv_status` keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
}

/// What `obv_status` keeps: the load status (Laadstatus).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
                })
                .collect(),
        }
    }
}

/// `obv_status`'s result, only the source `source` when given; `None` when that
/// source is not in the status.
pub fn status(answer: &StatusAnswer, served: Served, source: Option<&str>) -> Option<Rendered> {
    let sources: Vec<&SourceStatusEntry> = answer
        .sources
        .iter()
        .filter(|s| source.is_none_or(|k| s.source_key == k))
        .collect();
    if source.is_some() && sources.is_empty() {
        return None;
    }
    let not_ok: Vec<&&SourceStatusEntry> = sources.iter().filter(|s| s.state != "ok").collect();
    let mut text = format!(
        "Status of {}: {} sources, {} not ok{}.",
        if answer.generated_at.is_empty() {
            "?"
        } else {
            &answer.generated_at
        },
        sources.len(),
        not_ok.len(),
        provenance(served)
    );
    for s in not_ok.iter().take(15) {
        let _ = write!(text, "\n- {} ({}): {}", s.label, s.source_key, s.state);
    }
    Some(Rendered {
        text,
        structured: Structure::Own(json!({
            "generated_at": answer.generated_at,
            "suppliers": answer.suppliers,
            "sources": sources,
        })),
    })
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

    #[test]
    fn search_lists_ten_hits_and_says_where_the_answer_came_from() {
        let answer = SearchAnswer {
            results: (1..=12).map(hit).collect(),
            total_count: 140,
            total_is_approximate: true,
            has_more: true,
        };
        snapshot("obv_search", &search(&answer, Served::Cached), &answer);
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
        assert_eq!(structured(&r, &answer)["text"], "twee drie");
        assert_eq!(structured(&r, &answer)["total_length"], 23);
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
        let r = sources(&answer, Served::Cached, Some("MUNICIPALITY"));
        assert_eq!(structured(&r, &answer)["count"], 2);
        snapshot("obv_sources", &r, &answer);
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
            }],
        };
        assert!(status(&status_answer, Served::Fetched, Some("gemeente-zeist")).is_none());
        let r = status(&status_answer, Served::Fetched, None).expect("all sources");
        snapshot("obv_status", &r, &status_answer);
    }
}
