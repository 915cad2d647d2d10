//! What the Tweede Kamer tools keep and show: typed answers and pure render functions,
//! snapshot-tested below.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::Structure;
use crate::call::{Rendered, provenance};
use crate::connectors::pages::Window;
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

/// Which records of a kept page `tk_search` shows, and how to go on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchView {
    /// `documents` or `cases`.
    pub kind: &'static str,
    /// The search in words.
    pub searched: String,
    /// The first record of the page shown.
    pub from: usize,
    /// One past the last shown.
    pub to: usize,
    /// The continuation for the records that follow.
    pub continuation: Option<String>,
    /// Whether the page is a later one (its records are not the first of the search).
    pub later_page: bool,
}

/// A record `tk_search` finds (the output schema's items: a document or a case).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum Record {
    /// A document.
    Document(Document),
    /// A case.
    Case(Zaak),
}

/// `tk_search`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchShown {
    /// `documents` or `cases`.
    pub kind: String,
    /// What was searched, in words.
    pub searched: String,
    /// The records shown.
    pub items: Vec<Record>,
    /// How many records match in all, when the platform says.
    pub count: Option<u64>,
    /// The continuation for the records that follow: pass it as `continuation`.
    pub continuation: Option<String>,
}

#[derive(Serialize)]
struct SearchShownOf<'a, T> {
    kind: &'a str,
    searched: &'a str,
    items: &'a [T],
    count: Option<u64>,
    continuation: Option<&'a str>,
}

/// `tk_search`'s result (`view.kind`: `documents` or `cases`): the records `view` picks
/// of the kept page, each as a line, and how to get the ones that follow; for no records,
/// what was searched and how to widen it.
pub fn search<T: Listed + Serialize>(answer: &PageAnswer<T>, served: Served, view: &SearchView) -> Rendered {
    let shown = &answer.items[view.from.min(answer.items.len())..view.to.min(answer.items.len())];
    let kind = view.kind;
    let mut text = if answer.items.is_empty() && !view.later_page {
        format!(
            "The Tweede Kamer has no {kind} whose title or subject holds {}{}. To widen: use fewer or other words \
             (each must occur in the title or subject, as written), drop or correct `soort` (it must match exactly, \
             e.g. `Motie`, `Brief regering`), widen or drop the dates, or try kind `{}`; for words anywhere in the \
             text use opentk_search, for the official publication ob_search.",
            view.searched,
            provenance(served),
            if kind == "documents" { "cases" } else { "documents" }
        )
    } else if shown.is_empty() {
        format!(
            "No more {kind} for {}{}: the search has no records past this point.",
            view.searched,
            provenance(served)
        )
    } else {
        format!(
            "{kind} {}–{} of this page of up to 250{} for {}{}.",
            view.from + 1,
            view.to,
            answer.count.map(|c| format!(" ({c} match in all)")).unwrap_or_default(),
            view.searched,
            provenance(served)
        )
    };
    for item in shown {
        let _ = write!(text, "\n- {} {} (Id {})", item.number(), item.title(), item.id());
    }
    if let Some(next) = &view.continuation {
        let _ = write!(
            text,
            "\nMore {kind}: call tk_search again with `continuation` \"{next}\" (and a `limit` up to 250)."
        );
    }
    let value = SearchShownOf {
        kind,
        searched: &view.searched,
        items: shown,
        count: answer.count,
        continuation: view.continuation.as_deref(),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(value)),
    }
}

/// Where a document lives on the platform.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Links {
    /// The record.
    pub record_url: String,
    /// The file (PDF or Word).
    pub resource_url: String,
}

/// What `tk_document` keeps.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
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

/// `tk_factions`'s structured content: the kept list and its count.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FactionsShown {
    /// The factions.
    pub factions: Vec<Fractie>,
    /// How many.
    pub count: usize,
}

/// `tk_factions`'s result.
pub fn factions(answer: &FactionsAnswer, served: Served) -> Rendered {
    let count = answer.factions.len();
    let mut text = format!("{count} factions{}.", provenance(served));
    for f in &answer.factions {
        let _ = write!(
            text,
            "\n- {} ({}){}",
            f.naam_nl.as_deref().unwrap_or(""),
            f.afkorting.as_deref().unwrap_or(""),
            f.aantal_zetels.map(|z| format!(", {z} seats")).unwrap_or_default()
        );
    }
    if count == 0 {
        text.push_str("\nThe Tweede Kamer listed no factions; ask again later.");
    }
    // The kept answer is the list itself (`{"factions": [...]}`), with its count.
    Rendered {
        text,
        structured: Structure::Answer(vec![("count", json!(count))]),
    }
}

/// Which committees `tk_committees` shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CommitteesFilter {
    /// Only names or abbreviations containing this (any case).
    pub name: Option<String>,
    /// Matching committees skipped.
    pub offset: usize,
    /// The most shown.
    pub limit: usize,
}

/// `tk_committees`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommitteesShown {
    /// The committees shown.
    pub committees: Vec<Commissie>,
    /// How many committees the list has in all.
    pub total: usize,
    /// Which of the matching committees are shown.
    #[serde(flatten)]
    pub window: Window,
}

/// `tk_committees`'s result: the committees matching `filter`, a window of them.
pub fn committees(answer: &CommitteesAnswer, served: Served, filter: &CommitteesFilter) -> Rendered {
    let name = filter.name.as_deref().map(str::to_lowercase);
    let matching: Vec<&Commissie> = answer
        .committees
        .iter()
        .filter(|c| {
            name.as_deref().is_none_or(|n| {
                [&c.naam, &c.afkorting]
                    .iter()
                    .any(|f| f.as_deref().is_some_and(|f| f.to_lowercase().contains(n)))
            })
        })
        .collect();
    let window = Window::new(matching.len(), filter.offset, filter.limit);
    let shown: Vec<Commissie> = window.of(&matching).iter().map(|c| (*c).clone()).collect();
    let mut text = match (&filter.name, matching.is_empty()) {
        (Some(n), true) => format!(
            "No Tweede Kamer committee's name or abbreviation contains `{n}`{} (of {}). To widen: use a shorter part \
             of the name (e.g. `landbouw`), or drop `name`.",
            provenance(served),
            answer.committees.len()
        ),
        (Some(n), false) => format!(
            "Tweede Kamer committees with `{n}` in the name or abbreviation{}: {}.",
            provenance(served),
            window.note()
        ),
        (None, _) => format!("Tweede Kamer committees{}: {}.", provenance(served), window.note()),
    };
    for c in &shown {
        let _ = write!(
            text,
            "\n- {} ({})",
            c.naam.as_deref().unwrap_or(""),
            c.afkorting.as_deref().unwrap_or("")
        );
    }
    let value = CommitteesShown {
        committees: shown,
        total: answer.committees.len(),
        window,
    };
    Rendered {
        text,
        structured: Structure::Own(json!(value)),
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
            continuation: Some("tk1.next-page".into()),
        };
        let view = SearchView {
            kind: "documents",
            searched: "words `stikstof`".into(),
            from: 0,
            to: 2,
            continuation: Some("tk1.same-page-from-2".into()),
            later_page: false,
        };
        let r = search(&answer, Served::Fetched, &view);
        assert_eq!(structured(&r, &answer)["items"].as_array().map(Vec::len), Some(2));
        snapshot("tk_search", &r, &answer);
        let empty = PageAnswer::<Document> {
            items: Vec::new(),
            count: Some(0),
            continuation: None,
        };
        let none = SearchView {
            searched: "words `stikstof windmolen`, soort `Motie`, from 2026-01-01".into(),
            to: 0,
            continuation: None,
            ..view
        };
        let r = search(&empty, Served::Fetched, &none);
        assert!(
            r.text.contains("opentk_search") && r.text.contains("`soort`"),
            "{}",
            r.text
        );
        snapshot("tk_search_empty", &r, &empty);
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
        let committees_list = CommitteesAnswer {
            committees: [
                ("vaste commissie voor Landbouw", "LVVN"),
                ("vaste commissie voor Financiën", "FIN"),
            ]
            .iter()
            .map(|(naam, afkorting)| Commissie {
                id: (*afkorting).into(),
                naam: Some((*naam).into()),
                afkorting: Some((*afkorting).into()),
                verwijderd: false,
            })
            .collect(),
        };
        let filter = CommitteesFilter {
            name: Some("lvvn".into()),
            offset: 0,
            limit: 50,
        };
        let r = committees(&committees_list, Served::Cached, &filter);
        assert_eq!(structured(&r, &committees_list)["count"], 1);
        snapshot("tk_committees", &r, &committees_list);
        let none = committees(
            &committees_list,
            Served::Cached,
            &CommitteesFilter {
                name: Some("ruimtevaart".into()),
                ..filter
            },
        );
        assert!(none.text.starts_with("No Tweede Kamer committee"), "{}", none.text);
    }
}
