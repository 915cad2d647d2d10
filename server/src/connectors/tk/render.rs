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
use crate::connectors::tk::ids::{case_page, document_page};
use crate::connectors::vocabulary::{Item, Listing, Tally};
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

/// A record as a search finds it: its number, title (or subject), id, and the record in
/// the shared vocabulary.
pub trait Listed {
    /// `DocumentNummer` or `Nummer`.
    fn number(&self) -> &str;
    /// `Titel`, else `Onderwerp`.
    fn title(&self) -> &str;
    /// The GUID.
    fn id(&self) -> &str;
    /// The record as a result: a document is read by `tk_document` (its GUID), a case's
    /// decisions and votes by `tk_votes` (its number).
    fn item(&self) -> Item;
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
    fn item(&self) -> Item {
        Item::new(
            crate::platforms::tk::PLATFORM,
            "tk_document",
            self.id.clone(),
            self.title(),
        )
        .dated(self.datum.as_deref().map(day))
        .kind(self.soort.clone())
        .of(Some("Tweede Kamer"))
        .at(document_page(self.number()))
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
    fn item(&self) -> Item {
        Item::new(crate::platforms::tk::PLATFORM, "tk_votes", self.number(), self.title())
            .dated(self.gestart_op.as_deref().map(day))
            .kind(self.soort.clone())
            .of(Some("Tweede Kamer"))
            .at(case_page(self.number()))
    }
}

/// The day of an OData date-time (`2025-03-04T00:00:00+01:00` → `2025-03-04`), or the
/// value as given when it starts with none.
fn day(datetime: &str) -> &str {
    crate::calendar::leading_day(datetime).unwrap_or(datetime)
}

/// Which records of a kept page `tk_search` shows, and where the search goes on.
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
    /// The search's position of the kept page's first record.
    pub base: u64,
    /// The `offset` of the records that follow, when there are more.
    pub next_offset: Option<u64>,
    /// Whether the page is a later one (its records are not the first of the search).
    pub later_page: bool,
}

/// One record `tk_search` finds: the shared [`Item`] and its number (`DocumentNummer`,
/// e.g. `2025D12345`, or the case's `Nummer`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    /// The document or case.
    #[serde(flatten)]
    pub item: Item,
    /// Its number at the Kamer.
    pub number: Option<String>,
}

/// `tk_search`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchShown {
    /// `documents` or `cases`.
    pub kind: String,
    /// What was searched, in words.
    pub searched: String,
    /// The records shown.
    pub results: Vec<Found>,
    /// How many records match in all (exact, when the platform says), and the next page.
    #[serde(flatten)]
    pub tally: Tally,
}

/// `tk_search`'s result (`view.kind`: `documents` or `cases`): the records `view` picks
/// of the kept page, each as a line, and how to get the ones that follow; for no records,
/// what was searched and how to widen it.
pub fn search<T: Listed>(answer: &PageAnswer<T>, served: Served, view: &SearchView) -> Rendered {
    let shown = &answer.items[view.from.min(answer.items.len())..view.to.min(answer.items.len())];
    let kind = view.kind;
    let first = view.base + view.from as u64;
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
            "No more {kind} for {}{}: the search has no records past offset {first}{}.",
            view.searched,
            provenance(served),
            answer.count.map(|c| format!(" ({c} match in all)")).unwrap_or_default(),
        )
    } else {
        format!(
            "{kind} {}–{}{} for {}{}.",
            first + 1,
            first + shown.len() as u64,
            answer.count.map(|c| format!(" of {c}")).unwrap_or_default(),
            view.searched,
            provenance(served)
        )
    };
    for item in shown {
        let _ = write!(text, "\n- {} {} (id {})", item.number(), item.title(), item.item().id);
    }
    if let Some(next) = view.next_offset {
        let _ = write!(
            text,
            "\nMore {kind}: call tk_search again with `offset` {next} (and a `limit` up to 250)."
        );
    }
    let value = SearchShown {
        kind: kind.to_owned(),
        searched: view.searched.clone(),
        results: shown
            .iter()
            .map(|r| Found {
                item: r.item(),
                number: Some(r.number().to_owned()).filter(|n| !n.is_empty()),
            })
            .collect(),
        tally: search_tally(answer, view),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(value)),
    }
}

/// How many records match, when the Kamer counted them, and where the next page starts.
fn search_tally<T>(answer: &PageAnswer<T>, view: &SearchView) -> Tally {
    Tally {
        total: answer.count,
        total_is_exact: answer.count.is_some(),
        next_offset: view.next_offset,
    }
}

/// `tk_search`'s records that `view` picks as the shared vocabulary's listing: what its
/// structured content holds of them, typed.
pub fn listing<T: Listed>(answer: &PageAnswer<T>, view: &SearchView) -> Listing {
    let shown = &answer.items[view.from.min(answer.items.len())..view.to.min(answer.items.len())];
    Listing {
        results: shown.iter().map(Listed::item).collect(),
        tally: search_tally(answer, view),
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

/// `tk_document`'s structured content: the document as a record of the shared
/// vocabulary (`url`: its file) and what the Kamer adds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct DocumentShown {
    /// The document.
    #[serde(flatten)]
    pub item: Item,
    /// Its number, e.g. `2024D39058` (opentk_document reads it by this).
    pub number: Option<String>,
    /// Its subject.
    pub subject: Option<String>,
    /// The parliamentary year, e.g. `2024-2025`.
    pub parliamentary_year: Option<String>,
    /// Its record at the platform.
    pub record_url: String,
    /// The file's content type.
    pub content_type: Option<String>,
    /// When the platform last changed it.
    pub changed_at: Option<String>,
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
    let shown = DocumentShown {
        item: d.item().at(Some(answer.links.resource_url.clone())),
        number: d.document_nummer.clone(),
        subject: d.onderwerp.clone(),
        parliamentary_year: d.vergaderjaar.clone(),
        record_url: answer.links.record_url.clone(),
        content_type: d.content_type.clone(),
        changed_at: d.gewijzigd_op.clone(),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    }
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

/// One faction as `tk_factions` shows it: the shared [`Item`] (`id`: its GUID; `title`:
/// its Dutch name; `date`: active since) and its seats.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FactionShown {
    /// The faction.
    #[serde(flatten)]
    pub item: Item,
    /// Its abbreviation, e.g. `VVD`.
    pub abbreviation: Option<String>,
    /// Its English name.
    pub name_en: Option<String>,
    /// Its seats.
    pub seats: Option<i64>,
    /// Inactive since (absent while active).
    pub inactive_since: Option<String>,
}

/// `tk_factions`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FactionsShown {
    /// The factions.
    pub results: Vec<FactionShown>,
    /// How many (all shown).
    #[serde(flatten)]
    pub tally: Tally,
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
    let shown = FactionsShown {
        results: answer
            .factions
            .iter()
            .map(|f| FactionShown {
                item: Item::reference(
                    crate::platforms::tk::PLATFORM,
                    f.id.clone(),
                    f.naam_nl.clone().unwrap_or_default(),
                )
                .dated(f.datum_actief.as_deref().map(day)),
                abbreviation: f.afkorting.clone(),
                name_en: f.naam_en.clone(),
                seats: f.aantal_zetels,
                inactive_since: f.datum_inactief.as_deref().map(|d| day(d).to_owned()),
            })
            .collect(),
        tally: Tally::all(count),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
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
    /// The committees shown (`id`: the GUID; `title`: the name).
    pub results: Vec<CommitteeShown>,
    /// Matching committees in all, and the next page.
    #[serde(flatten)]
    pub tally: Tally,
    /// How many committees the list has in all.
    pub committees_in_all: usize,
}

/// One committee as `tk_committees` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct CommitteeShown {
    /// The committee.
    #[serde(flatten)]
    pub item: Item,
    /// Its abbreviation, e.g. `LVVN`.
    pub abbreviation: Option<String>,
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
        results: shown
            .iter()
            .map(|c| CommitteeShown {
                item: Item::reference(
                    crate::platforms::tk::PLATFORM,
                    c.id.clone(),
                    c.naam.clone().unwrap_or_default(),
                ),
                abbreviation: c.afkorting.clone(),
            })
            .collect(),
        tally: window.tally(),
        committees_in_all: answer.committees.len(),
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
            base: 0,
            next_offset: Some(2),
            later_page: false,
        };
        let r = search(&answer, Served::Fetched, &view);
        let v = structured(&r, &answer);
        assert_eq!(v["results"].as_array().map(Vec::len), Some(2));
        assert_eq!(v["results"][0]["tool"], "tk_document");
        assert_eq!(v["next_offset"], 2);
        assert_eq!(v["total"], 480);
        snapshot("tk_search", &r, &answer);
        let empty = PageAnswer::<Document> {
            items: Vec::new(),
            count: Some(0),
            continuation: None,
        };
        let none = SearchView {
            searched: "words `stikstof windmolen`, soort `Motie`, from 2026-01-01".into(),
            to: 0,
            next_offset: None,
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
        assert_eq!(structured(&r, &list)["total"], 1);
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
        assert_eq!(structured(&r, &committees_list)["total"], 1);
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
