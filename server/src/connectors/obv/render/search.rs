//! `obv_search`'s answer: one page of hits as kept, what was searched, each hit as the
//! shared vocabulary's item, the next page, and for no hits how to widen the search; and
//! the answer when `organization` fits no single source (its candidates, no search).
//!
//! Invariants: the next page is offered only when the platform says it has more; a total
//! the platform estimates is said with "about". What it does not do: ask the platform.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::Structure;
use crate::call::{Rendered, provenance};
use crate::connectors::obv::ids::page_url;
use crate::connectors::vocabulary::{Item, Listing, Tally};
use crate::platforms::obv::{SearchPage, iso_day};

use super::sources::SourceEntry;

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

#[cfg(test)]
mod tests {
    use crate::connectors::render_test::{snapshot, structured};

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
}
