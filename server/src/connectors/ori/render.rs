//! What the Open Raadsinformatie tools keep and show: typed answers and pure render
//! functions, snapshot-tested below.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::call::Structure;
use crate::call::{Head, Rendered, provenance};
use crate::connectors::vocabulary::{Item, Tally};
use crate::platforms::ori::SourceIndex;

/// One hit as BesluitBron keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
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

/// One hit as `ori_search` shows it: the shared [`Item`] (`id`: `index/id`; `kind`: its
/// `@type`) and its highlights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    /// The record.
    #[serde(flatten)]
    pub item: Item,
    /// Highlighted fragments, marked `**like this**`.
    pub highlights: Vec<String>,
}

/// `ori_search`'s structured content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchShown {
    /// The query.
    pub query: String,
    /// The indices searched.
    pub indices: String,
    /// The hits.
    pub results: Vec<Found>,
    /// Total matches (not exact when a shard ran out of time), and the next page.
    #[serde(flatten)]
    pub tally: Tally,
    /// True when a shard ran out of time.
    pub timed_out: bool,
}

/// What `ori_search` keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
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
    let end = u64::from(answer.offset) + answer.hits.len() as u64;
    let next_offset = answer
        .total
        .filter(|t| end < *t && !answer.hits.is_empty())
        .map(|_| end);
    if let (Some(total), Some(next)) = (answer.total, next_offset) {
        let _ = write!(
            text,
            "\n{} more: ask again with `offset` {next} for the next page.",
            total - next
        );
    }
    let shown = SearchShown {
        query: answer.query.clone(),
        indices: answer.indices.clone(),
        results: answer
            .hits
            .iter()
            .map(|h| Found {
                item: Item::new(
                    crate::platforms::ori::PLATFORM,
                    "ori_document",
                    h.id.clone(),
                    h.name.clone().unwrap_or_default(),
                )
                .dated(h.date.clone())
                .kind(h.kind.clone())
                .of(h.organization.clone()),
                highlights: h.highlights.clone(),
            })
            .collect(),
        tally: Tally {
            total: answer.total,
            total_is_exact: answer.total.is_some() && !answer.timed_out,
            next_offset,
        },
        timed_out: answer.timed_out,
    };
    Rendered {
        text,
        structured: Structure::Own(serde_json::to_value(&shown).unwrap_or_default()),
    }
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

/// `ori_document`'s structured content: the record and where the page of text is. The
/// page itself is in the text content only (never twice): its last `text_length`
/// characters.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct DocumentOutput {
    /// `index/id` (`ori_document` `id`).
    pub id: String,
    /// Its name.
    pub title: String,
    /// `last_discussed_at`.
    pub date: Option<String>,
    /// `@type`.
    pub kind: Option<String>,
    /// The original file.
    pub url: Option<String>,
    /// `ori`.
    pub platform: String,
    /// The character offset the page of text starts at.
    pub text_offset: usize,
    /// Characters of text in this answer: the last `text_length` characters of the text
    /// content.
    pub text_length: usize,
    /// Characters of text in the whole document.
    pub total_length: usize,
    /// The `offset` that asks for the rest of the text, when there is more.
    pub next_offset: Option<usize>,
    /// True when more text follows this page.
    pub has_more: bool,
}

/// The document as a person knows it: its name and its original file.
pub fn head(answer: &DocumentAnswer) -> Head {
    Head::new(answer.name.clone().unwrap_or_default(), answer.original_url.clone())
}

/// `ori_document`'s result: the record, then `length` characters of the text from
/// `offset`, at the end of the text content.
pub fn document(answer: &DocumentAnswer, served: Served, offset: usize, length: usize) -> Rendered {
    let total = answer.text.chars().count();
    let start = offset.min(total);
    let page: String = answer.text.chars().skip(start).take(length).collect();
    let shown = page.chars().count();
    let end = start + shown;
    let next = (end < total).then_some(end);
    let mut text = format!(
        "{} {} — {}{}.",
        answer.kind.as_deref().unwrap_or(""),
        answer.id,
        answer.name.as_deref().unwrap_or("(no name)"),
        provenance(served),
    );
    if let Some(url) = &answer.original_url {
        let _ = write!(text, "\nOriginal file: {url}");
    }
    if answer.text.is_empty() {
        text.push_str("\nThe record holds no extracted text.");
    } else {
        let _ = write!(
            text,
            "\nText, characters {start}–{end} of {total}{}:\n\n{page}",
            match next {
                Some(next) => format!(
                    "; {} more: ask again with `offset` {next} (and a `length` up to 100000)",
                    total - end
                ),
                None if start >= total => format!("; the text ends before `offset` {offset}"),
                None => String::new(),
            }
        );
    }
    let out = DocumentOutput {
        id: answer.id.clone(),
        title: answer.name.clone().unwrap_or_default(),
        date: answer.date.clone(),
        kind: answer.kind.clone(),
        url: answer.original_url.clone(),
        platform: crate::platforms::ori::PLATFORM.as_str().to_owned(),
        text_offset: start,
        text_length: shown,
        total_length: total,
        next_offset: next,
        has_more: next.is_some(),
    };
    Rendered {
        text,
        // A plain struct of strings, numbers and a JSON value: serializing it cannot fail.
        structured: Structure::Own(serde_json::to_value(&out).unwrap_or_default()),
    }
}

/// What `ori_sources` keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourcesAnswer {
    /// The sources.
    pub sources: Vec<SourceIndex>,
}

/// `ori_sources`'s structured content.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SourcesOutput {
    /// The sources of this page (`id`: what ori_search's `source` takes).
    pub results: Vec<SourceShown>,
    /// Sources matching the filter (all pages), and the next page.
    #[serde(flatten)]
    pub tally: Tally,
}

/// One source as `ori_sources` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct SourceShown {
    /// The source (`date`: when its live index was built).
    #[serde(flatten)]
    pub item: Item,
    /// The live index behind it.
    pub index: String,
    /// Documents in the live index.
    pub documents: Option<u64>,
    /// Older copies of the same source still present (searchable by name).
    pub older_copies: Vec<String>,
}

/// `ori_sources`'s result: the sources whose name contains `filter`, `limit` of them
/// from `offset`.
pub fn sources(answer: &SourcesAnswer, served: Served, filter: Option<&str>, offset: usize, limit: usize) -> Rendered {
    let needle = filter.map(str::to_lowercase);
    let matching: Vec<&SourceIndex> = answer
        .sources
        .iter()
        .filter(|s| needle.as_deref().is_none_or(|n| s.source.to_lowercase().contains(n)))
        .collect();
    let start = offset.min(matching.len());
    let end = start.saturating_add(limit).min(matching.len());
    let shown = &matching[start..end];
    let next = (end < matching.len()).then_some(end);
    let mut text = format!(
        "{} of {} Open Raadsinformatie sources{}{}:",
        matching.len(),
        answer.sources.len(),
        filter.map(|f| format!(" match `{}`", short(f))).unwrap_or_default(),
        provenance(served)
    );
    for s in shown {
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
    if let Some(next) = next {
        let _ = write!(
            text,
            "\n{} more: ask again with `offset` {next}, or pass `filter` (e.g. `utrecht`) to narrow.",
            matching.len() - next
        );
    } else if matching.is_empty() && filter.is_some() {
        text.push_str(
            "\nNo source matches: try a shorter part of the name, or leave out `filter`; the same councils are \
             listed by obv_sources (OpenBesluitvorming).",
        );
    }
    let out = SourcesOutput {
        results: shown
            .iter()
            .map(|s| SourceShown {
                item: Item::reference(crate::platforms::ori::PLATFORM, s.source.clone(), s.source.clone())
                    .dated(s.built_at.clone()),
                index: s.index.clone(),
                documents: s.documents,
                older_copies: s.older_copies.clone(),
            })
            .collect(),
        tally: Tally {
            total: Some(matching.len() as u64),
            total_is_exact: true,
            next_offset: next.map(|n| n as u64),
        },
    };
    Rendered {
        text,
        structured: Structure::Own(serde_json::to_value(&out).unwrap_or_default()),
    }
}

/// At most 40 characters of an assistant's text, for a message.
fn short(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push('…');
    }
    s
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
        let r = search(&empty, Served::Fetched);
        assert!(r.text.contains("`obv_search`"), "{}", r.text);
        snapshot("ori_search_empty", &r, &empty);
        let doc = DocumentAnswer {
            id: "ori_heemskerk_20250506181303/1001".into(),
            kind: Some("MediaObject".into()),
            name: Some("Raadsvoorstel woningbouw".into()),
            date: Some("2026-05-12T19:30:00".into()),
            original_url: Some("https://example.invalid/1001.pdf".into()),
            text: "De raad besluit ...".into(),
            record: json!({"name": "Raadsvoorstel woningbouw"}),
        };
        snapshot("ori_document", &document(&doc, Served::Cached, 3, 10), &doc);
        let list = SourcesAnswer {
            sources: vec![SourceIndex {
                source: "ori_heemskerk".into(),
                index: "ori_heemskerk_20250506181303".into(),
                documents: Some(120),
                built_at: Some("2025-05-06 18:13:03".into()),
                older_copies: vec!["ori_heemskerk_20240101000000".into()],
            }],
        };
        snapshot("ori_sources", &sources(&list, Served::Fetched, None, 0, 50), &list);
        let none = sources(&list, Served::Fetched, Some("nergensdorp"), 0, 50);
        assert!(none.text.contains("obv_sources"), "{}", none.text);
    }
}
