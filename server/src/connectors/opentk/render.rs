//! What the OpenTK tools keep and show: typed answers and pure render functions,
//! snapshot-tested below.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use crate::call::Structure;
use crate::call::{Head, Rendered, provenance};
use crate::connectors::pages::{TextPage, text_page};
use crate::connectors::vocabulary::{Item, Listing, Tally};

/// One search hit as BesluitBron keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Hit {
    /// Document number, e.g. `2026D12345` (the id for `opentk_document`), or an
    /// activity's, e.g. `2026A01234` (kind `Activiteit`: the id for `opentk_activity`).
    pub number: String,
    /// Date.
    pub date: Option<String>,
    /// Kind, e.g. `Motie`.
    pub kind: Option<String>,
    /// Subject.
    pub subject: Option<String>,
    /// A snippet, highlights marked `**like this**`.
    pub snippet: Option<String>,
    /// The document's page at OpenTK.
    pub link: Option<String>,
}

/// What `opentk_search` keeps: every hit OpenTK gave (at most 280).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchAnswer {
    /// The query as sent.
    pub query: String,
    /// The kind searched.
    pub kind: String,
    /// Whether only the last two months were searched.
    pub recent: bool,
    /// The hits, newest indexed first.
    pub hits: Vec<Hit>,
    /// How long OpenTK took, in milliseconds.
    pub milliseconds: Option<f64>,
    /// Why the answer may be incomplete, if it may be.
    pub incomplete: Option<String>,
}

/// One hit as `opentk_search` shows it: the shared [`Item`] (`id`: the document number,
/// or an activity's, read with the `tool` named) and its snippet.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    /// The document or activity.
    #[serde(flatten)]
    pub item: Item,
    /// A snippet, highlights marked `**like this**`.
    pub snippet: Option<String>,
}

impl Found {
    fn of(h: &Hit) -> Found {
        let tool = if is_activity(h) {
            "opentk_activity"
        } else {
            "opentk_document"
        };
        Found {
            item: Item::new(
                crate::platforms::opentk::PLATFORM,
                tool,
                h.number.clone(),
                h.subject.clone().unwrap_or_default(),
            )
            .dated(h.date.clone())
            .kind(h.kind.clone())
            .of(Some("Tweede Kamer"))
            .at(h.link.clone()),
            snippet: h.snippet.clone(),
        }
    }
}

/// `opentk_search`'s structured content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SearchShown {
    /// The query as sent.
    pub query: String,
    /// The kind searched.
    pub kind: String,
    /// Whether only the last two months were searched.
    pub recent: bool,
    /// The hits shown.
    pub results: Vec<Found>,
    /// Hits OpenTK gave in all (at most 280: not exact when `incomplete`), and the next page.
    #[serde(flatten)]
    pub tally: Tally,
    /// How long OpenTK took, in milliseconds.
    pub milliseconds: Option<f64>,
    /// Why the answer may be incomplete, if it may be.
    pub incomplete: Option<String>,
}

/// Whether a hit is an activity (read with `opentk_activity`, not `opentk_document`).
pub fn is_activity(hit: &Hit) -> bool {
    hit.kind.as_deref() == Some("Activiteit")
}

/// `opentk_search`'s result: the hits `offset..offset + limit`.
pub fn search(answer: &SearchAnswer, served: Served, offset: usize, limit: usize) -> Rendered {
    let start = offset.min(answer.hits.len());
    let shown: Vec<Hit> = answer.hits.iter().skip(start).take(limit).cloned().collect();
    let end = start + shown.len();
    let next_offset = (end < answer.hits.len()).then_some(end);
    let scope = format!(
        "`{}` (kind {}{})",
        answer.query,
        answer.kind,
        if answer.recent { ", last two months" } else { "" }
    );
    let mut text = if answer.hits.is_empty() {
        format!(
            "OpenTK found nothing for {scope}{}. To widen: drop `recent`, use kind `alles`, use fewer words, \
             a prefix (`stikst*`) or `OR` between alternatives; hyphenated words belong in quotes. tk_search \
             finds Tweede Kamer records by title and subject; ob_search finds the official publications.",
            provenance(served)
        )
    } else if shown.is_empty() {
        format!(
            "OpenTK gave {} hits for {scope}{}; `offset` {offset} is past them: use an `offset` below {}.",
            answer.hits.len(),
            provenance(served),
            answer.hits.len()
        )
    } else {
        format!(
            "Hits {}–{end} of {} for {scope}{}.",
            start + 1,
            answer.hits.len(),
            provenance(served)
        )
    };
    if let Some(why) = &answer.incomplete {
        let _ = write!(
            text,
            "\nMay be incomplete: {why}. Narrow the query (more words, a phrase, `recent`) for a complete list."
        );
    }
    if shown.iter().any(is_activity) {
        text.push_str("\nActivities (kind Activiteit, numbers like 2026A01234) are read with opentk_activity; documents with opentk_document.");
    }
    for h in &shown {
        let _ = write!(
            text,
            "\n- {} {} {} — {}",
            h.number,
            h.date.as_deref().unwrap_or(""),
            h.kind.as_deref().unwrap_or(""),
            h.subject.as_deref().unwrap_or("")
        );
        if let Some(s) = h.snippet.as_deref().filter(|s| !s.is_empty()) {
            let _ = write!(text, "\n  {s}");
        }
    }
    if let Some(next) = next_offset {
        let _ = write!(
            text,
            "\n{} more hits: call again with `offset` {next} (and a `limit` up to 100).",
            answer.hits.len() - next
        );
    }
    let value = SearchShown {
        query: answer.query.clone(),
        kind: answer.kind.clone(),
        recent: answer.recent,
        results: shown.iter().map(Found::of).collect(),
        tally: search_tally(answer, next_offset),
        milliseconds: answer.milliseconds,
        incomplete: answer.incomplete.clone(),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(value)),
    }
}

/// How many hits OpenTK gave (all of them, unless it says the list may be incomplete) and
/// where the next page starts.
fn search_tally(answer: &SearchAnswer, next_offset: Option<usize>) -> Tally {
    Tally {
        total: Some(answer.hits.len() as u64),
        total_is_exact: answer.incomplete.is_none(),
        next_offset: next_offset.map(|n| n as u64),
    }
}

/// `opentk_search`'s hits `offset..offset + limit` as the shared vocabulary's listing:
/// what its structured content holds of them, typed.
pub fn listing(answer: &SearchAnswer, offset: usize, limit: usize) -> Listing {
    let start = offset.min(answer.hits.len());
    let shown: Vec<&Hit> = answer.hits.iter().skip(start).take(limit).collect();
    let end = start + shown.len();
    Listing {
        results: shown.into_iter().map(|h| Found::of(h).item).collect(),
        tally: search_tally(answer, (end < answer.hits.len()).then_some(end)),
    }
}

/// What `opentk_document` keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DocumentAnswer {
    /// The document number.
    pub number: String,
    /// Its title.
    pub title: Option<String>,
    /// The text of its HTML rendition.
    pub text: String,
    /// Characters of the rendition's text (before any cut).
    pub text_chars: usize,
    /// True when `text` was cut at [`MAX_TEXT_CHARS`].
    pub truncated: bool,
    /// The platform's `ETag` for the rendition.
    pub etag: Option<String>,
    /// The document's page.
    pub page_url: String,
    /// The HTML rendition.
    pub html_url: String,
    /// The original file (PDF or DOCX).
    pub raw_url: String,
    /// What to know about the original file.
    pub raw_note: String,
    /// True when `text` was read from the original file (`source` file), not from the
    /// HTML rendition.
    #[serde(default)]
    pub from_file: bool,
}

/// What `opentk_document` keeps of a document's original file (`source` file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum FileText {
    /// The file's text, read by the document-text extractor.
    Text {
        /// The text.
        text: String,
    },
    /// A PDF without a text layer (a scan).
    NoTextLayer {
        /// Its pages.
        pages: u32,
    },
}

impl DocumentAnswer {
    /// The same document with the text of its original file instead of the rendition's.
    pub fn with_file_text(&self, file: &FileText) -> DocumentAnswer {
        let (text, note) = match file {
            FileText::Text { text } => (text.clone(), FILE_NOTE.to_owned()),
            FileText::NoTextLayer { pages } => (
                String::new(),
                format!(
                    "The original file is a PDF of {pages} pages without a text layer (a scan): BesluitBron cannot \
                     read it; the HTML rendition (`source` rendition) may have its text."
                ),
            ),
        };
        let text_chars = text.chars().count();
        DocumentAnswer {
            text_chars,
            truncated: false,
            text,
            raw_note: note,
            from_file: true,
            ..self.clone()
        }
    }
}

/// The note on a text read from the original file.
pub const FILE_NOTE: &str = "The text above is read from the original file (PDF or Word) at `raw_url` by \
BesluitBron's document-text extractor.";

/// The most text an answer holds (characters).
pub const MAX_TEXT_CHARS: usize = 200_000;

/// The note on the raw file, for a text read from the HTML rendition.
pub const RAW_NOTE: &str = "The text above is OpenTK's HTML rendition. The original file (PDF or Word) is at \
`raw_url`; `source` file reads its text instead.";

/// `opentk_document`'s structured content: the document without its text (the page is
/// the text content), and where the page is.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DocumentShown {
    /// The document number (`opentk_document` `id`).
    pub id: String,
    /// Its title.
    pub title: String,
    /// The document's page at OpenTK.
    pub url: String,
    /// `opentk`.
    pub platform: String,
    /// Characters of the rendition's text (before any cut at 200,000).
    pub text_chars: usize,
    /// True when BesluitBron kept only the first 200,000 characters.
    pub truncated: bool,
    /// The document's page.
    pub page_url: String,
    /// The HTML rendition.
    pub html_url: String,
    /// The original file (PDF or DOCX).
    pub raw_url: String,
    /// What to know about the original file.
    pub raw_note: String,
    /// True when the text is the original file's (`source` file), not the rendition's.
    #[serde(default)]
    pub from_file: bool,
    /// Where the page of text is.
    #[serde(flatten)]
    pub page: TextPage,
}

/// The document as a person knows it: its title and its page at OpenTK.
pub fn head(answer: &DocumentAnswer) -> Head {
    Head::new(answer.title.clone().unwrap_or_default(), Some(answer.page_url.clone()))
}

/// `opentk_document`'s result: the characters `offset..offset + length` of the kept text.
pub fn document(answer: &DocumentAnswer, served: Served, offset: usize, length: usize) -> Rendered {
    let (page, at) = text_page(&answer.text, offset, length);
    let mut text = format!(
        "{} — {}{} ({} characters of text{}; {}).\nPage: {}\nOriginal file: {}\n{}",
        answer.number,
        answer.title.as_deref().unwrap_or("(no title)"),
        provenance(served),
        answer.text_chars,
        if answer.truncated { ", kept up to 200,000" } else { "" },
        at.note(),
        answer.page_url,
        answer.raw_url,
        answer.raw_note,
    );
    if answer.text.is_empty() && answer.from_file {
        text.push_str("\nThe original file holds no text BesluitBron can read.");
    } else if answer.text.is_empty() {
        text.push_str("\nThe HTML rendition holds no text; ask again with `source` file to read the original file.");
    } else {
        let _ = write!(text, "\n\n{page}");
    }
    let shown = DocumentShown {
        id: answer.number.clone(),
        title: answer.title.clone().unwrap_or_default(),
        url: answer.page_url.clone(),
        platform: crate::platforms::opentk::PLATFORM.as_str().to_owned(),
        text_chars: answer.text_chars,
        truncated: answer.truncated,
        page_url: answer.page_url.clone(),
        html_url: answer.html_url.clone(),
        raw_url: answer.raw_url.clone(),
        raw_note: answer.raw_note.clone(),
        from_file: answer.from_file,
        page: at,
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    }
}

/// A document linked from an activity.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct DocRef {
    /// Its number.
    pub number: Option<String>,
    /// Its kind.
    pub kind: Option<String>,
    /// Its subject or title.
    pub subject: Option<String>,
}

/// An agenda point.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgendaPoint {
    /// Its subject.
    pub subject: Option<String>,
    /// Documents on it (its own and its cases').
    pub documents: Vec<DocRef>,
}

/// What `opentk_activity` keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActivityAnswer {
    /// The activity's number.
    pub number: String,
    /// Its kind, e.g. `Commissiedebat`.
    pub kind: Option<String>,
    /// Its subject.
    pub subject: Option<String>,
    /// When it starts.
    pub start: Option<String>,
    /// When it ends.
    pub end: Option<String>,
    /// Where.
    pub room: Option<String>,
    /// The committees taking part.
    pub committees: Vec<String>,
    /// The agenda.
    pub agenda: Vec<AgendaPoint>,
    /// The activity's own documents.
    pub documents: Vec<DocRef>,
    /// Commitments made (toezeggingen).
    pub commitments: Vec<String>,
    /// The video.
    pub video_url: Option<String>,
    /// The activity's own record as OpenTK gave it.
    pub record: Value,
}

/// `opentk_activity`'s structured content: the activity as a record of the shared
/// vocabulary (`id` its number, `title` its subject, `date` its start), its agenda and
/// its documents, each readable with `opentk_document`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct ActivityShown {
    /// The activity.
    #[serde(flatten)]
    pub item: Item,
    /// When it ends.
    pub end: Option<String>,
    /// Where.
    pub room: Option<String>,
    /// The committees taking part.
    pub committees: Vec<String>,
    /// The agenda: each point's subject and documents.
    pub agenda: Vec<AgendaShown>,
    /// The activity's own documents.
    pub documents: Vec<Item>,
    /// Commitments made (toezeggingen).
    pub commitments: Vec<String>,
    /// The video.
    pub video_url: Option<String>,
}

/// An agenda point as `opentk_activity` shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AgendaShown {
    /// Its subject.
    pub subject: Option<String>,
    /// Documents on it (its own and its cases').
    pub documents: Vec<Item>,
}

/// Documents linked from an activity, as records `opentk_document` reads (those
/// without a number cannot be read, and are only counted in the text).
fn doc_items(docs: &[DocRef]) -> Vec<Item> {
    docs.iter()
        .filter_map(|d| {
            let number = d.number.clone().filter(|n| !n.is_empty())?;
            Some(
                Item::new(
                    crate::platforms::opentk::PLATFORM,
                    "opentk_document",
                    number,
                    d.subject.clone().unwrap_or_default(),
                )
                .kind(d.kind.clone())
                .of(Some("Tweede Kamer")),
            )
        })
        .collect()
}

/// `opentk_activity`'s result.
pub fn activity(answer: &ActivityAnswer, served: Served) -> Rendered {
    let mut text = format!(
        "{} {} — {}{}.\nWhen: {} to {}; where: {}; committees: {}.",
        answer.kind.as_deref().unwrap_or("Activity"),
        answer.number,
        answer.subject.as_deref().unwrap_or("(no subject)"),
        provenance(served),
        answer.start.as_deref().unwrap_or("?"),
        answer.end.as_deref().unwrap_or("?"),
        answer.room.as_deref().unwrap_or("?"),
        if answer.committees.is_empty() {
            "none listed".to_owned()
        } else {
            answer.committees.join(", ")
        },
    );
    let _ = write!(text, "\nAgenda ({} points):", answer.agenda.len());
    for (i, p) in answer.agenda.iter().enumerate() {
        let _ = write!(
            text,
            "\n{}. {} ({} documents)",
            i + 1,
            p.subject.as_deref().unwrap_or(""),
            p.documents.len()
        );
    }
    let _ = write!(text, "\nDocuments: {}.", answer.documents.len());
    if answer.commitments.is_empty() {
        text.push_str("\nCommitments (toezeggingen): none recorded.");
    } else {
        let _ = write!(text, "\nCommitments (toezeggingen), {}:", answer.commitments.len());
        for c in &answer.commitments {
            let _ = write!(text, "\n- {c}");
        }
    }
    if let Some(v) = &answer.video_url {
        let _ = write!(text, "\nVideo: {v}");
    }
    let shown = ActivityShown {
        item: Item::new(
            crate::platforms::opentk::PLATFORM,
            "opentk_activity",
            answer.number.clone(),
            answer.subject.clone().unwrap_or_default(),
        )
        .dated(answer.start.clone())
        .kind(answer.kind.clone())
        .of(Some("Tweede Kamer")),
        end: answer.end.clone(),
        room: answer.room.clone(),
        committees: answer.committees.clone(),
        agenda: answer
            .agenda
            .iter()
            .map(|p| AgendaShown {
                subject: p.subject.clone(),
                documents: doc_items(&p.documents),
            })
            .collect(),
        documents: doc_items(&answer.documents),
        commitments: answer.commitments.clone(),
        video_url: answer.video_url.clone(),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    }
}

/// One harvester's last update.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Harvester {
    /// Its name, e.g. `tkgetxml`.
    pub name: String,
    /// When it last updated, Unix seconds.
    pub updated_at_unix: Option<i64>,
    /// How long before OpenTK answered, in seconds.
    pub seconds_ago: Option<i64>,
}

/// What `opentk_status` keeps.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StatusAnswer {
    /// The harvesters, by name.
    pub harvesters: Vec<Harvester>,
}

/// `opentk_status`'s result.
pub fn status(answer: &StatusAnswer, served: Served) -> Rendered {
    let mut text = format!("OpenTK's harvesters{}:", provenance(served));
    for h in &answer.harvesters {
        let ago = match h.seconds_ago {
            Some(s) if s < 3_600 => format!("{} minutes ago", s / 60),
            Some(s) if s < 172_800 => format!("{} hours ago", s / 3_600),
            Some(s) => format!("{} days ago", s / 86_400),
            None => "unknown".to_owned(),
        };
        let _ = write!(text, "\n- {}: {ago}", h.name);
    }
    if answer.harvesters.is_empty() {
        text.push_str("\nOpenTK listed no harvesters: its freshness is unknown.");
    }
    Rendered::answer(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectors::vocabulary::readable_snippet;

    use crate::connectors::render_test::{snapshot, structured};

    fn hit(n: u32) -> Hit {
        Hit {
            number: format!("2026D{n:05}"),
            date: Some("2026-11-12".into()),
            kind: Some("Motie".into()),
            subject: Some(format!("Motie over stikstof {n}")),
            snippet: Some(readable_snippet("de <b>stikstof</b> &amp; natuur", "<b>", "</b>")),
            link: Some(format!("https://example.invalid/document.html?nummer=2026D{n:05}")),
        }
    }

    #[test]
    fn snippets_keep_their_highlights_readable() {
        assert_eq!(
            readable_snippet("de <b>stikstof</b>-\n<i>uitstoot</i> &amp; meer", "<b>", "</b>"),
            "de **stikstof**- uitstoot & meer"
        );
    }

    #[test]
    fn a_search_flags_an_incomplete_answer_and_an_empty_one_says_how_to_widen() {
        let answer = SearchAnswer {
            query: "stikstof".into(),
            kind: "moties".into(),
            recent: true,
            hits: (1..=3).map(hit).collect(),
            milliseconds: Some(42.0),
            incomplete: Some("OpenTK applies the kind `moties` after cutting the hits at 280".into()),
        };
        let r = search(&answer, Served::Fetched, 0, 2);
        assert_eq!(structured(&r, &answer)["results"].as_array().map(Vec::len), Some(2));
        assert_eq!(structured(&r, &answer)["next_offset"], 2);
        snapshot("opentk_search", &r, &answer);
        let empty = SearchAnswer {
            hits: Vec::new(),
            incomplete: None,
            ..answer
        };
        let text = search(&empty, Served::Fetched, 0, 20).text;
        assert!(
            text.contains("found nothing for `stikstof`") && text.contains("drop `recent`"),
            "{text}"
        );
    }

    #[test]
    fn a_document_an_activity_and_the_status() {
        let doc = DocumentAnswer {
            number: "2026D12345".into(),
            title: Some("Motie van het lid X".into()),
            text: "De Kamer, gehoord de beraadslaging, ...".into(),
            text_chars: 40,
            truncated: false,
            etag: Some("\"abc\"".into()),
            page_url: "https://example.invalid/document.html?nummer=2026D12345".into(),
            html_url: "https://example.invalid/getdoc/2026D12345".into(),
            raw_url: "https://example.invalid/getraw/2026D12345".into(),
            raw_note: RAW_NOTE.into(),
            from_file: false,
        };
        let r = document(&doc, Served::Cached, 0, 8_000);
        assert!(structured(&r, &doc).get("text").is_none(), "the text is not repeated");
        snapshot("opentk_document", &r, &doc);
        let act = ActivityAnswer {
            number: "2026A01234".into(),
            kind: Some("Commissiedebat".into()),
            subject: Some("Stikstof".into()),
            start: Some("2026-11-20T10:00:00".into()),
            end: Some("2026-11-20T13:00:00".into()),
            room: Some("Thorbeckezaal".into()),
            committees: vec!["Landbouw, Visserij, Voedselzekerheid en Natuur".into()],
            agenda: vec![AgendaPoint {
                subject: Some("Stikstofbeleid".into()),
                documents: vec![DocRef {
                    number: Some("2026D11111".into()),
                    kind: Some("Brief regering".into()),
                    subject: Some("Voortgang".into()),
                }],
            }],
            documents: Vec::new(),
            commitments: vec!["De minister stuurt voor de zomer een brief.".into()],
            video_url: Some("https://example.invalid/video/1".into()),
            record: json!({"nummer": "2026A01234"}),
        };
        snapshot("opentk_activity", &activity(&act, Served::Fetched), &act);
        let st = StatusAnswer {
            harvesters: vec![
                Harvester {
                    name: "tkgetxml".into(),
                    updated_at_unix: Some(1_795_000_000),
                    seconds_ago: Some(600),
                },
                Harvester {
                    name: "oppull".into(),
                    updated_at_unix: Some(1_794_900_000),
                    seconds_ago: Some(100_600),
                },
            ],
        };
        snapshot("opentk_status", &status(&st, Served::Fetched), &st);
    }
}
