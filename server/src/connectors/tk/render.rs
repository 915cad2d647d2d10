//! What the Tweede Kamer tools keep and show: typed answers and pure render functions,
//! snapshot-tested below.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::mcp::call::Structure;
use crate::mcp::{Rendered, provenance};
use crate::platforms::tk::{Commissie, Document, Fractie, TkPage, Zaak};

/// What `tk_search` keeps: one page of records, with the opaque continuation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageAnswer<T> {
    /// The records.
    pub items: Vec<T>,
    /// Total matches, when known.
    pub count: Option<u64>,
    /// The next page's continuation.
    pub continuation: Option<String>,
}

impl<T> From<TkPage<T>> for PageAnswer<T> {
    fn from(page: TkPage<T>) -> PageAnswer<T> {
        PageAnswer {
            items: page.items,
            count: page.count,
            continuation: page.next.map(|c| c.as_str().to_owned()),
        }
    }
}

/// A record as a search hit line: number, title (or subject), id.
pub trait Listed {
    /// `DocumentNummer` or `Nummer`.
    fn number(&self) -> &str;
    /// `Titel`, else `Onderwerp`.
    fn title(&self) -> &str;
    /// The GUID.
    fn id(&self) -> &str;
}

impl Listed for Document {
    fn number(&self) -> &str {
        self.document_nummer.as_deref().unwrap_or("")
    }
    fn title(&self) -> &str {
        self.titel.as_deref().or(self.onderwerp.as_deref()).unwrap_or("")
    }
    fn id(&self) -> &str {
        &self.id
    }
}

impl Listed for Zaak {
    fn number(&self) -> &str {
        self.nummer.as_deref().unwrap_or("")
    }
    fn title(&self) -> &str {
        self.titel.as_deref().or(self.onderwerp.as_deref()).unwrap_or("")
    }
    fn id(&self) -> &str {
        &self.id
    }
}

/// `tk_search`'s result (`kind`: `documents` or `cases`).
pub fn search<T: Listed + Serialize>(answer: &PageAnswer<T>, served: Served, kind: &str) -> Rendered {
    let mut text = format!(
        "{} {kind}{}{}.",
        answer.items.len(),
        answer.count.map(|c| format!(" of {c}")).unwrap_or_default(),
        provenance(served)
    );
    for item in answer.items.iter().take(10) {
        let _ = write!(text, "\n- {} {} (Id {})", item.number(), item.title(), item.id());
    }
    if answer.continuation.is_some() {
        text.push_str("\nMore results: pass `continuation` for the next page.");
    }
    Rendered::answer(text)
}

/// Where a document lives on the platform.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Links {
    /// The record.
    pub record_url: String,
    /// The file (PDF or Word).
    pub resource_url: String,
}

/// What `tk_document` keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DocumentAnswer {
    /// The record.
    pub document: Document,
    /// Its links.
    pub links: Links,
}

/// `tk_document`'s result.
pub fn document(answer: &DocumentAnswer, served: Served) -> Rendered {
    let d = &answer.document;
    let text = format!(
        "{} {} — {} ({}){}. File: {}",
        d.soort.as_deref().unwrap_or(""),
        d.document_nummer.as_deref().unwrap_or(""),
        d.title(),
        d.datum.as_deref().unwrap_or(""),
        provenance(served),
        answer.links.resource_url
    );
    Rendered::answer(text)
}

/// What `tk_factions` keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FactionsAnswer {
    /// The factions.
    pub factions: Vec<Fractie>,
}

/// What `tk_committees` keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CommitteesAnswer {
    /// The committees.
    pub committees: Vec<Commissie>,
}

/// `tk_factions`'s result.
pub fn factions(answer: &FactionsAnswer, served: Served) -> Rendered {
    let names = answer
        .factions
        .iter()
        .map(|f| (f.naam_nl.as_deref().unwrap_or(""), f.afkorting.as_deref().unwrap_or("")));
    reference("factions", names, answer.factions.len(), served)
}

/// `tk_committees`'s result.
pub fn committees(answer: &CommitteesAnswer, served: Served) -> Rendered {
    let names = answer
        .committees
        .iter()
        .map(|c| (c.naam.as_deref().unwrap_or(""), c.afkorting.as_deref().unwrap_or("")));
    reference("committees", names, answer.committees.len(), served)
}

fn reference<'a>(
    field: &str,
    names: impl Iterator<Item = (&'a str, &'a str)>,
    count: usize,
    served: Served,
) -> Rendered {
    let mut text = format!("{count} {field}{}.", provenance(served));
    for (name, abbreviation) in names.take(30) {
        let _ = write!(text, "\n- {name} ({abbreviation})");
    }
    // The kept answer is the list itself (`{"factions": [...]}`), with its count.
    Rendered {
        text,
        structured: Structure::Answer(vec![("count", json!(count))]),
    }
}

#[cfg(test)]
mod tests {

    use super::*;

    use crate::connectors::render_test::{snapshot, structured};

    fn doc(n: u32) -> Document {
        Document {
            id: format!("00000000-0000-0000-0000-{n:012}"),
            soort: Some("Motie".into()),
            document_nummer: Some(format!("2026D{n:05}")),
            titel: Some("Stikstofbeleid".into()),
            onderwerp: Some(format!("Motie over stikstof {n}")),
            datum: Some("2026-11-12T00:00:00+01:00".into()),
            vergaderjaar: Some("2026-2027".into()),
            ..Document::default()
        }
    }

    #[test]
    fn a_search_page_says_how_to_get_the_next_one() {
        let answer = PageAnswer {
            items: (1..=3).map(doc).collect(),
            count: Some(480),
            continuation: Some("Document?$skip=250".into()),
        };
        snapshot("tk_search", &search(&answer, Served::Fetched, "documents"), &answer);
    }

    #[test]
    fn a_document_and_the_reference_lists() {
        let answer = DocumentAnswer {
            document: doc(7),
            links: Links {
                record_url: "https://example.invalid/Document(7)".into(),
                resource_url: "https://example.invalid/Document(7)/resource".into(),
            },
        };
        snapshot("tk_document", &document(&answer, Served::Cached), &answer);
        let list = FactionsAnswer {
            factions: vec![Fractie {
                id: "f".into(),
                afkorting: Some("VVD".into()),
                naam_nl: Some("Volkspartij voor Vrijheid en Democratie".into()),
                aantal_zetels: Some(24),
                ..Fractie::default()
            }],
        };
        let r = factions(&list, Served::Cached);
        assert_eq!(structured(&r, &list)["count"], 1);
        snapshot("tk_factions", &r, &list);
    }
}
