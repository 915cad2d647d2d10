//! What the Open Raadsinformatie tools keep and show: typed answers and pure render
//! functions, snapshot-tested below.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::mcp::{Rendered, provenance};
use crate::platforms::ori::SourceIndex;

/// One hit as BesluitBron keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hit {
    /// `index/id`, the id for `ori_document`.
    pub id: String,
    /// `@type`, e.g. `MediaObject`, `Meeting`.
    pub kind: Option<String>,
    /// Its name or title.
    pub name: Option<String>,
    /// `last_discussed_at`.
    pub date: Option<String>,
    /// The organisation.
    pub organization: Option<String>,
    /// Highlighted fragments, marked `**like this**`.
    pub highlights: Vec<String>,
}

/// What `ori_search` keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SearchAnswer {
    /// The query.
    pub query: String,
    /// The indices searched.
    pub indices: String,
    /// Total matches, and whether exact.
    pub total: Option<u64>,
    /// Hits skipped.
    pub offset: u32,
    /// The hits.
    pub hits: Vec<Hit>,
    /// True when a shard ran out of time.
    pub timed_out: bool,
}

/// `ori_search`'s result.
pub fn search(answer: &SearchAnswer, served: Served) -> Rendered {
    let mut text = if answer.hits.is_empty() {
        format!(
            "Open Raadsinformatie found nothing for `{}` in {}{}. To widen: fewer words, no date range, or all \
             sources (leave out `source`); the same councils are also on OpenBesluitvorming (`obv_search`).",
            answer.query,
            answer.indices,
            provenance(served)
        )
    } else {
        format!(
            "{} hits{} from {} for `{}` in {}{}.",
            answer.hits.len(),
            answer.total.map(|t| format!(" of {t}")).unwrap_or_default(),
            answer.offset + 1,
            answer.query,
            answer.indices,
            provenance(served)
        )
    };
    if answer.timed_out {
        text.push_str("\nMay be incomplete: the search ran out of time at the platform; narrow it.");
    }
    for h in &answer.hits {
        let _ = write!(
            text,
            "\n- {} {} {} — {} (id {})",
            h.date.as_deref().unwrap_or(""),
            h.kind.as_deref().unwrap_or(""),
            h.organization.as_deref().unwrap_or(""),
            h.name.as_deref().unwrap_or(""),
            h.id
        );
        if let Some(first) = h.highlights.first() {
            let _ = write!(text, "\n  {first}");
        }
    }
    if let Some(total) = answer.total
        && u64::from(answer.offset) + (answer.hits.len() as u64) < total
    {
        let _ = write!(
            text,
            "\nMore: pass `offset` {} for the next page.",
            answer.offset as usize + answer.hits.len()
        );
    }
    Rendered::answer(text)
}

/// What `ori_document` keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DocumentAnswer {
    /// `index/id`.
    pub id: String,
    /// `@type`.
    pub kind: Option<String>,
    /// Its name.
    pub name: Option<String>,
    /// `last_discussed_at`.
    pub date: Option<String>,
    /// The original file.
    pub original_url: Option<String>,
    /// Its text (`text`, `md_text` or `text_pages`).
    pub text: String,
    /// The record without its text fields.
    pub record: Value,
}

/// `ori_document`'s result.
pub fn document(answer: &DocumentAnswer, served: Served) -> Rendered {
    let mut text = format!(
        "{} {} — {}{} ({} characters of text).",
        answer.kind.as_deref().unwrap_or(""),
        answer.id,
        answer.name.as_deref().unwrap_or("(no name)"),
        provenance(served),
        answer.text.chars().count()
    );
    if let Some(url) = &answer.original_url {
        let _ = write!(text, "\nOriginal file: {url}");
    }
    if answer.text.is_empty() {
        text.push_str("\nThe record holds no extracted text.");
    } else {
        let _ = write!(text, "\n\n{}", answer.text);
    }
    Rendered::answer(text)
}

/// What `ori_sources` keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourcesAnswer {
    /// The sources.
    pub sources: Vec<SourceIndex>,
}

/// `ori_sources`'s result.
pub fn sources(answer: &SourcesAnswer, served: Served) -> Rendered {
    let mut text = format!("{} sources{}:", answer.sources.len(), provenance(served));
    for s in answer.sources.iter().take(50) {
        let _ = write!(
            text,
            "\n- {} ({} documents, built {}{})",
            s.source,
            s.documents.map_or("?".to_owned(), |d| d.to_string()),
            s.built_at.as_deref().unwrap_or("?"),
            if s.older_copies.is_empty() {
                String::new()
            } else {
                format!(", {} older copies", s.older_copies.len())
            }
        );
    }
    if answer.sources.len() > 50 {
        text.push_str("\n(more in the structured content)");
    }
    Rendered::answer(text)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn snapshot(name: &str, r: &Rendered, answer: &impl Serialize) {
        let payload = crate::driver::Payload::from_bytes(serde_json::to_vec(answer).expect("encodes"));
        let text = format!(
            "{}\n---\n{}",
            r.text,
            serde_json::to_string_pretty(&r.structured_value(&payload).expect("a structure")).expect("json")
        );
        insta::with_settings!({snapshot_path => "../../../../snapshots/render", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(name, text);
        });
    }

    #[test]
    fn search_document_and_sources() {
        let answer = SearchAnswer {
            query: "woningbouw".into(),
            indices: "ori_heemskerk".into(),
            total: Some(31),
            offset: 0,
            hits: vec![Hit {
                id: "ori_heemskerk_20250506181303/1001".into(),
                kind: Some("MediaObject".into()),
                name: Some("Raadsvoorstel woningbouw".into()),
                date: Some("2026-05-12T19:30:00".into()),
                organization: Some("Heemskerk".into()),
                highlights: vec!["plan voor **woningbouw** aan de …".into()],
            }],
            timed_out: false,
        };
        snapshot("ori_search", &search(&answer, Served::Fetched), &answer);
        let empty = SearchAnswer {
            hits: Vec::new(),
            total: Some(0),
            ..answer
        };
        assert!(search(&empty, Served::Fetched).text.contains("`obv_search`"));
        let doc = DocumentAnswer {
            id: "ori_heemskerk_20250506181303/1001".into(),
            kind: Some("MediaObject".into()),
            name: Some("Raadsvoorstel woningbouw".into()),
            date: Some("2026-05-12T19:30:00".into()),
            original_url: Some("https://example.invalid/1001.pdf".into()),
            text: "De raad besluit ...".into(),
            record: json!({"name": "Raadsvoorstel woningbouw"}),
        };
        snapshot("ori_document", &document(&doc, Served::Cached), &doc);
        let list = SourcesAnswer {
            sources: vec![SourceIndex {
                source: "ori_heemskerk".into(),
                index: "ori_heemskerk_20250506181303".into(),
                documents: Some(120),
                built_at: Some("2025-05-06 18:13:03".into()),
                older_copies: vec!["ori_heemskerk_20240101000000".into()],
            }],
        };
        snapshot("ori_sources", &sources(&list, Served::Fetched), &list);
    }
}
