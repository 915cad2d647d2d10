//! `rechtspraak_search`'s answer: the hits of one page of the feed, each as the shared
//! vocabulary's item, what was searched, the next page, and for an empty page how to
//! widen the search by the arguments it was given.
//!
//! Invariants: a hit's summary is cut to `SUMMARY_CHARS`; the next page is offered only
//! while the platform's total says more follow. What it does not do: ask the platform.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use crate::call::{Rendered, provenance};
use crate::connectors::vocabulary::{Item, Tally};
use crate::platforms::rechtspraak::{Feed, FeedEntry};

use super::{SUMMARY_CHARS, own, ruling_title, ruling_url, trim_chars};

/// One search hit as shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Hit {
    /// The ECLI (pass it to `rechtspraak_ruling`).
    pub ecli: String,
    /// The court.
    pub court: String,
    /// Decision date.
    pub date: Option<String>,
    /// Case number(s).
    pub case_number: Option<String>,
    /// `Uitspraak` or `Conclusie`, where known.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    /// The inhoudsindicatie, trimmed.
    pub summary: Option<String>,
    /// The ruling's page on the website.
    pub link: Option<String>,
    /// `doc` or `ecli` when withdrawn.
    pub withdrawn: Option<String>,
}

impl Hit {
    /// A feed entry as a hit, with its type when the search fixed it.
    pub fn from_entry(e: &FeedEntry, kind: Option<&str>) -> Hit {
        Hit {
            ecli: e.ecli.clone(),
            court: e.court.clone(),
            date: e.date.clone(),
            case_number: e.case_number.clone(),
            kind: kind.map(str::to_owned),
            summary: e.summary.as_deref().map(|s| trim_chars(s, SUMMARY_CHARS)),
            link: e.link.clone(),
            withdrawn: e.deleted.clone(),
        }
    }
}

/// One page of a search, as shown.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchPage {
    /// What was searched, in words.
    pub searched: String,
    /// All matches at the platform (before any check on the metadata).
    pub total: Option<u64>,
    /// The offset asked.
    pub offset: u32,
    /// The hits shown.
    pub hits: Vec<Hit>,
    /// Entries the platform returned on this page (before any check).
    pub returned: usize,
    /// The offset of the next page, when there are more.
    pub next_offset: Option<u32>,
    /// A note on a check made on each result's metadata.
    pub note: Option<String>,
    /// The filter arguments the search was given (for the advice on an empty result).
    pub filters: Vec<&'static str>,
}

impl SearchPage {
    /// The page of `feed` asked at `offset`, showing `hits`.
    pub fn new(feed: &Feed, searched: String, offset: u32, hits: Vec<Hit>, note: Option<String>) -> SearchPage {
        let returned = feed.entries.len();
        let seen = u64::from(offset) + returned as u64;
        let next_offset = (returned > 0 && feed.total.is_some_and(|t| seen < t))
            .then(|| u32::try_from(seen).ok())
            .flatten();
        SearchPage {
            searched,
            total: feed.total,
            offset,
            hits,
            returned,
            next_offset,
            note,
            filters: Vec::new(),
        }
    }

    /// The same page, naming the filter arguments it was searched with.
    pub fn with_filters(mut self, filters: Vec<&'static str>) -> SearchPage {
        self.filters = filters;
        self
    }
}

/// One ruling as `rechtspraak_search` shows it: the shared [`Item`] (`id`: the ECLI;
/// `organization`: the court; `title`: the start of the inhoudsindicatie) and more.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Found {
    /// The ruling.
    #[serde(flatten)]
    pub item: Item,
    /// Case number(s).
    pub case_number: Option<String>,
    /// The inhoudsindicatie, trimmed.
    pub summary: Option<String>,
    /// `doc` or `ecli` when withdrawn.
    pub withdrawn: Option<String>,
}

impl Found {
    fn of(h: &Hit) -> Found {
        Found {
            item: Item::new(
                crate::platforms::rechtspraak::PLATFORM,
                "rechtspraak_ruling",
                h.ecli.clone(),
                ruling_title(h.summary.as_deref(), &h.court, h.case_number.as_deref()),
            )
            .dated(h.date.clone())
            .kind(h.kind.clone())
            .of(Some(h.court.clone()))
            .at(Some(h.link.clone().unwrap_or_else(|| ruling_url(&h.ecli)))),
            case_number: h.case_number.clone(),
            summary: h.summary.clone(),
            withdrawn: h.withdrawn.clone(),
        }
    }
}

/// `rechtspraak_search`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchOutput {
    /// What was searched, in words.
    pub searched: String,
    /// The rulings shown.
    pub results: Vec<Found>,
    /// All matches at the platform (before any check on the metadata), and the next page.
    #[serde(flatten)]
    pub tally: Tally,
    /// Entries the platform returned on this page (before any check).
    pub returned: usize,
    /// A note on a check made on each result's metadata.
    pub note: Option<String>,
}

/// `rechtspraak_search`'s result.
pub fn search(page: &SearchPage, served: Served) -> Rendered {
    let total = page.total.map(|t| format!(" of {t} found")).unwrap_or_default();
    let mut text = if page.hits.is_empty() {
        let mut t = if page.total.is_some_and(|t| u64::from(page.offset) >= t && t > 0) {
            format!(
                "No rulings at offset {} for {}: Rechtspraak found {} in all{}. Ask with a smaller `offset` \
                 (0 for the first page).",
                page.offset,
                page.searched,
                page.total.unwrap_or(0),
                provenance(served)
            )
        } else {
            format!(
                "No rulings found at Rechtspraak for {}{}. {}",
                page.searched,
                provenance(served),
                widen(&page.filters)
            )
        };
        if page.returned > 0 {
            t.push_str(&format!(
                " (The platform returned {} on this page; none passed the check described below.)",
                page.returned
            ));
        }
        t
    } else {
        format!(
            "{} rulings{total} for {}, from offset {}{}.",
            page.hits.len(),
            page.searched,
            page.offset,
            provenance(served)
        )
    };
    for h in &page.hits {
        let _ = write!(
            text,
            "\n- {} — {}, {}{}{}",
            h.ecli,
            h.court,
            h.date.as_deref().unwrap_or("date unknown"),
            h.case_number.as_deref().map(|c| format!(", {c}")).unwrap_or_default(),
            h.kind.as_deref().map(|k| format!(" ({k})")).unwrap_or_default(),
        );
        if let Some(w) = &h.withdrawn {
            let _ = write!(text, " [withdrawn: {w}]");
        }
        if let Some(s) = &h.summary {
            let _ = write!(text, ": {}", trim_chars(s, 160));
        }
    }
    if let Some(note) = &page.note {
        let _ = write!(text, "\n{note}");
    }
    if let Some(next) = page.next_offset {
        let more = page
            .total
            .map(|t| format!("{} more", t.saturating_sub(u64::from(next))))
            .unwrap_or_else(|| "more".to_owned());
        let _ = write!(
            text,
            "\n{more} at the platform: ask again with `offset` {next} for the next page."
        );
    }
    Rendered {
        text,
        structured: own(&SearchOutput {
            searched: page.searched.clone(),
            results: page.hits.iter().map(Found::of).collect(),
            tally: Tally {
                total: page.total,
                // The platform's count is exact, but results failing the metadata check
                // are not shown.
                total_is_exact: page.total.is_some() && page.note.is_none(),
                next_offset: page.next_offset.map(u64::from),
            },
            returned: page.returned,
            note: page.note.clone(),
        }),
    }
}

/// How to widen a search that found nothing, naming the arguments it was given.
fn widen(filters: &[&str]) -> String {
    let names = |kinds: &[&str]| -> Vec<String> {
        filters
            .iter()
            .filter(|f| kinds.contains(f))
            .map(|f| format!("`{f}`"))
            .collect()
    };
    let mut steps = Vec::new();
    let dropped = names(&["court", "area", "procedure", "type", "modified_since"]);
    if !dropped.is_empty() {
        steps.push(format!("leave out {}", dropped.join(" or ")));
    }
    let dates = names(&["date_from", "date_to"]);
    if !dates.is_empty() {
        steps.push(format!("widen {}", dates.join(" and ")));
    }
    if filters.contains(&"with_text") {
        steps.push("leave `with_text` out".to_owned());
    } else {
        steps.push("set `with_text` false to include rulings published without a text".to_owned());
    }
    if filters.contains(&"court") {
        steps.push("check the court's name with rechtspraak_courts".to_owned());
    }
    format!(
        "To widen: {}. The service has no keyword search; publications in the official journals are found with \
         ob_search.",
        steps.join("; ")
    )
}

#[cfg(test)]
mod tests {
    use super::super::test_support::snapshot;
    use super::*;

    fn entry(n: u32) -> FeedEntry {
        FeedEntry {
            ecli: format!("ECLI:NL:RBAMS:2026:{n}"),
            court: "Rechtbank Amsterdam".into(),
            date: Some("2026-11-03".into()),
            case_number: Some(format!("C/13/{n}")),
            summary: Some("Huurrecht. ".repeat(40)),
            updated: Some("2026-11-04T10:00:00+01:00".into()),
            link: Some(format!(
                "https://uitspraken.rechtspraak.nl/InzienDocument?id=ECLI:NL:RBAMS:2026:{n}"
            )),
            deleted: (n == 2).then(|| "doc".to_owned()),
        }
    }

    #[test]
    fn a_search_page_says_how_to_get_the_next_one() {
        let feed = Feed {
            total: Some(1200),
            entries: (1..=3).map(entry).collect(),
        };
        let hits = feed
            .entries
            .iter()
            .map(|e| Hit::from_entry(e, Some("Uitspraak")))
            .collect();
        let page = SearchPage::new(
            &feed,
            "court Rechtbank Amsterdam, decided 2026-11-03".into(),
            997,
            hits,
            None,
        );
        assert_eq!(page.next_offset, Some(1000));
        snapshot("rechtspraak_search", &search(&page, Served::Fetched));
    }

    #[test]
    fn an_empty_search_says_what_was_searched_and_how_to_widen_it() {
        let feed = Feed {
            total: Some(0),
            entries: Vec::new(),
        };
        let page = SearchPage::new(
            &feed,
            "court Hoge Raad, area Strafrecht, decided 2026-06-01 to 2026-06-30, with a published text".into(),
            0,
            Vec::new(),
            None,
        )
        .with_filters(vec!["court", "area", "date_from", "date_to"]);
        let r = search(&page, Served::Cached);
        assert!(
            r.text.starts_with(
                "No rulings found at Rechtspraak for court Hoge Raad, area Strafrecht, decided 2026-06-01 to \
                 2026-06-30, with a published text (from BesluitBron's buffer). To widen: leave out `court` or `area`"
            ),
            "{}",
            r.text
        );
        assert_eq!(page.next_offset, None);
        snapshot("rechtspraak_search_empty", &r);
        // Nothing to leave out: the advice is about the text and other sources only.
        let bare = search(
            &SearchPage::new(&feed, "all rulings".into(), 0, Vec::new(), None),
            Served::Fetched,
        );
        assert!(!bare.text.contains("leave out"), "{}", bare.text);
        assert!(bare.text.contains("set `with_text` false"), "{}", bare.text);
    }
}
