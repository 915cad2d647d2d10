//! `obv_document`'s answer: an entity (meeting, document, motion, recording) as kept,
//! with its agenda and motions, shown as one page of its text and its metadata.
//!
//! Invariants: the page of text is in the text content only, never repeated in the
//! structured content, which says where it starts and what is left. What it does not do:
//! fetch the entity or its text.

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::Structure;
use crate::call::{Head, Rendered, provenance};
use crate::connectors::obv::ids::page_url;
use crate::connectors::pages::{TextPage, text_page};
use crate::platforms::obv::{Entity, iso_day};

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

/// The record `obv_document` read, as a person knows it: its title, and its file, else
/// its page on openbesluitvorming.nl (what the structured content's `url` says).
pub fn head(answer: &DocumentAnswer) -> Head {
    Head::new(
        answer.title.clone(),
        answer.download_url.clone().or_else(|| page_url(&answer.entity_id)),
    )
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
        url: head(answer).url,
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

#[cfg(test)]
mod tests {
    use crate::connectors::render_test::{snapshot, structured};

    use super::*;

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
}
