//! The value lists' answers: `rechtspraak_courts`, `rechtspraak_areas` and
//! `rechtspraak_procedures`, each the whole list as kept, one page of the entries a filter
//! matches as shown.
//!
//! Invariants: a count is exact (the whole list is kept); a page past the end says so
//! and an empty filter says how to widen it. What it does not do: fetch the lists.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use crate::call::{Rendered, provenance};
use crate::connectors::vocabulary::{Item, Tally};
use crate::platforms::rechtspraak::{Area, Court, Procedure};

use super::super::resolve::passes;
use super::{DEFAULT_LIST_LIMIT, own};

/// What `rechtspraak_courts` keeps: the whole list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CourtsAnswer {
    /// The courts, in the list's order.
    pub courts: Vec<Court>,
}

/// What `rechtspraak_areas` keeps: the whole list, flattened.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AreasAnswer {
    /// The areas, parents before their sub-areas.
    pub areas: Vec<Area>,
}

/// What `rechtspraak_procedures` keeps: the whole list.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProceduresAnswer {
    /// The procedures.
    pub procedures: Vec<Procedure>,
}

/// A value list's count (exact) and next page.
fn list_tally(matching: usize, next: Option<usize>) -> Tally {
    Tally {
        total: Some(matching as u64),
        total_is_exact: true,
        next_offset: next.map(|n| n as u64),
    }
}

/// Which part of a value list an answer shows: the entries matching `filter`, from
/// `offset`, at most `limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ListPage<'a> {
    /// Only entries whose name contains this.
    pub filter: Option<&'a str>,
    /// Matching entries to skip.
    pub offset: usize,
    /// Entries to show.
    pub limit: usize,
}

impl Default for ListPage<'_> {
    fn default() -> Self {
        ListPage {
            filter: None,
            offset: 0,
            limit: DEFAULT_LIST_LIMIT,
        }
    }
}

impl ListPage<'_> {
    /// The shown part of `matching`, and the `offset` of the next part when there is one.
    fn cut<'t, T>(&self, matching: &'t [T]) -> (&'t [T], Option<usize>) {
        let start = self.offset.min(matching.len());
        let end = start.saturating_add(self.limit).min(matching.len());
        (&matching[start..end], (end < matching.len()).then_some(end))
    }

    /// ` match `filter`` for the first line.
    fn matching(&self) -> String {
        self.filter
            .map(|f| format!(" match `{}`", super::super::resolve::echo(f)))
            .unwrap_or_default()
    }

    /// The last lines: how to get the rest, or how to widen an empty answer.
    fn close(&self, text: &mut String, list: &str, shown: usize, matching: usize, next: Option<usize>, example: &str) {
        if let Some(next) = next {
            let _ = write!(
                text,
                "\n{} more: ask again with `offset` {next}, or pass `filter` to narrow (e.g. {example}).",
                matching - next
            );
        } else if matching == 0 && self.filter.is_some() {
            let _ = write!(
                text,
                "\nNothing in the {list} matches: try a shorter part of the name (e.g. {example}), or leave out \
                 `filter` to page through all of them."
            );
        } else if shown == 0 && matching > 0 {
            let _ = write!(text, "\n`offset` {} is past the end: ask with `offset` 0.", self.offset);
        }
    }
}

/// `rechtspraak_courts`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CourtsOutput {
    /// The courts of this page (`id`: the identifier; `title`: the name, which
    /// rechtspraak_search's `court` takes, as it takes `abbreviation`).
    pub results: Vec<CourtShown>,
    /// Courts matching the filter (all pages), and the next page.
    #[serde(flatten)]
    pub tally: Tally,
}

/// A court as `rechtspraak_courts` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct CourtShown {
    /// The court (`kind`: e.g. `Rechtbank`; `date`: its first day).
    #[serde(flatten)]
    pub item: Item,
    /// Its abbreviation, e.g. `RBAMS`.
    pub abbreviation: Option<String>,
    /// Its last day, for a court that no longer exists.
    pub ended: Option<String>,
}

/// `rechtspraak_courts`'s result: the courts passing `filter` (ended ones only when
/// `include_ended`), one page of them.
pub fn courts(answer: &CourtsAnswer, served: Served, page: ListPage<'_>, include_ended: bool) -> Rendered {
    let matching: Vec<&Court> = answer
        .courts
        .iter()
        .filter(|c| include_ended || c.end.is_none())
        .filter(|c| {
            passes(
                page.filter,
                &[
                    &c.name,
                    c.abbreviation.as_deref().unwrap_or(""),
                    c.kind.as_deref().unwrap_or(""),
                ],
            )
        })
        .collect();
    let (shown, next) = page.cut(&matching);
    let ended = answer.courts.iter().filter(|c| c.end.is_some()).count();
    let mut text = format!(
        "{} of {} Rechtspraak courts{}{}{}{}.",
        matching.len(),
        answer.courts.len(),
        page.matching(),
        if include_ended {
            String::new()
        } else {
            format!(" ({ended} ended courts left out; include_ended shows them)")
        },
        showing(page.offset, shown.len(), matching.len()),
        provenance(served)
    );
    for c in shown {
        let _ = write!(
            text,
            "\n- {} ({}){}",
            c.name,
            c.abbreviation.as_deref().unwrap_or("-"),
            c.end.as_deref().map(|e| format!(", ended {e}")).unwrap_or_default()
        );
    }
    page.close(
        &mut text,
        "courts",
        shown.len(),
        matching.len(),
        next,
        "`Amsterdam`, `Gerechtshof`, `RBAMS`",
    );
    Rendered {
        text,
        structured: own(&CourtsOutput {
            results: shown
                .iter()
                .map(|c| CourtShown {
                    item: Item::reference(
                        crate::platforms::rechtspraak::PLATFORM,
                        c.identifier.clone(),
                        c.name.clone(),
                    )
                    .kind(c.kind.clone())
                    .dated(c.begin.clone()),
                    abbreviation: c.abbreviation.clone(),
                    ended: c.end.clone(),
                })
                .collect(),
            tally: list_tally(matching.len(), next),
        }),
    }
}

/// `, showing a–b` when a page shows part of the matches.
fn showing(offset: usize, shown: usize, matching: usize) -> String {
    if shown == matching || shown == 0 {
        String::new()
    } else {
        format!(", showing {}–{}", offset + 1, offset + shown)
    }
}

/// One area of law as `rechtspraak_areas` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AreaEntry {
    /// The identifier the search sends.
    pub identifier: String,
    /// Its name; rechtspraak_search's `area` takes it.
    pub name: String,
    /// The name of the top-level area it belongs to; `null` for a top-level area.
    pub parent: Option<String>,
}

/// `rechtspraak_areas`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AreasOutput {
    /// The areas of this page, parents before their sub-areas (`id`: the identifier;
    /// `title`: the name, which rechtspraak_search's `area` takes).
    pub results: Vec<AreaShown>,
    /// Areas matching the filter (all pages), and the next page.
    #[serde(flatten)]
    pub tally: Tally,
}

/// An area of law as `rechtspraak_areas` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct AreaShown {
    /// The area.
    #[serde(flatten)]
    pub item: Item,
    /// The name of the top-level area it belongs to; absent for a top-level area.
    pub parent: Option<String>,
}

/// `rechtspraak_areas`'s result: the areas passing `filter`, with their parent's name.
pub fn areas(answer: &AreasAnswer, served: Served, page: ListPage<'_>) -> Rendered {
    let parent_name = |a: &Area| {
        a.parent
            .as_ref()
            .and_then(|p| answer.areas.iter().find(|x| &x.identifier == p))
            .map(|p| p.name.clone())
    };
    let matching: Vec<AreaEntry> = answer
        .areas
        .iter()
        .map(|a| AreaEntry {
            identifier: a.identifier.clone(),
            name: a.name.clone(),
            parent: parent_name(a),
        })
        .filter(|a| {
            passes(
                page.filter,
                &[&a.name, a.parent.as_deref().unwrap_or(""), &a.identifier],
            )
        })
        .collect();
    let (shown, next) = page.cut(&matching);
    let mut text = format!(
        "{} of {} Rechtspraak areas of law{}{}{}. Search by a top-level area: courts often tag only the top level, \
         so rechtspraak_search sends the top level and checks a sub-area on each result's metadata.",
        matching.len(),
        answer.areas.len(),
        page.matching(),
        showing(page.offset, shown.len(), matching.len()),
        provenance(served)
    );
    for a in shown {
        match &a.parent {
            Some(p) => {
                let _ = write!(text, "\n  - {} (under {p})", a.name);
            }
            None => {
                let _ = write!(text, "\n- {}", a.name);
            }
        }
    }
    page.close(
        &mut text,
        "areas of law",
        shown.len(),
        matching.len(),
        next,
        "`straf`, `omgeving`",
    );
    Rendered {
        text,
        structured: own(&AreasOutput {
            results: shown
                .iter()
                .map(|a| AreaShown {
                    item: Item::reference(
                        crate::platforms::rechtspraak::PLATFORM,
                        a.identifier.clone(),
                        a.name.clone(),
                    ),
                    parent: a.parent.clone(),
                })
                .collect(),
            tally: list_tally(matching.len(), next),
        }),
    }
}

/// `rechtspraak_procedures`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ProceduresOutput {
    /// The procedures of this page (`title`: the name, which rechtspraak_search's
    /// `procedure` takes).
    pub results: Vec<Item>,
    /// Procedures matching the filter (all pages), and the next page.
    #[serde(flatten)]
    pub tally: Tally,
}

/// `rechtspraak_procedures`'s result.
pub fn procedures(answer: &ProceduresAnswer, served: Served, page: ListPage<'_>) -> Rendered {
    let matching: Vec<&Procedure> = answer
        .procedures
        .iter()
        .filter(|p| passes(page.filter, &[&p.name, &p.identifier]))
        .collect();
    let (shown, next) = page.cut(&matching);
    let mut text = format!(
        "{} of {} Rechtspraak kinds of procedure{}{}{}.",
        matching.len(),
        answer.procedures.len(),
        page.matching(),
        showing(page.offset, shown.len(), matching.len()),
        provenance(served)
    );
    for p in shown {
        let _ = write!(text, "\n- {}", p.name);
    }
    page.close(
        &mut text,
        "kinds of procedure",
        shown.len(),
        matching.len(),
        next,
        "`beroep`, `kort`",
    );
    Rendered {
        text,
        structured: own(&ProceduresOutput {
            results: shown
                .iter()
                .map(|p| {
                    Item::reference(
                        crate::platforms::rechtspraak::PLATFORM,
                        p.identifier.clone(),
                        p.name.clone(),
                    )
                })
                .collect(),
            tally: list_tally(matching.len(), next),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::snapshot;
    use super::*;

    #[test]
    fn value_lists_filter_and_leave_ended_courts_out_by_default() {
        let answer = CourtsAnswer {
            courts: vec![
                Court {
                    identifier: "http://standaarden.overheid.nl/owms/terms/Rechtbank_Amsterdam".into(),
                    name: "Rechtbank Amsterdam".into(),
                    abbreviation: Some("RBAMS".into()),
                    kind: Some("Rechtbank".into()),
                    begin: Some("2013-01-01".into()),
                    end: None,
                },
                Court {
                    identifier: "http://standaarden.overheid.nl/owms/terms/Rechtbank_Alkmaar".into(),
                    name: "Rechtbank Alkmaar".into(),
                    abbreviation: Some("RBALK".into()),
                    kind: Some("Rechtbank".into()),
                    begin: None,
                    end: Some("2013-01-01".into()),
                },
            ],
        };
        let page = ListPage {
            filter: Some("rechtbank"),
            ..ListPage::default()
        };
        let r = courts(&answer, Served::Cached, page, false);
        snapshot("rechtspraak_courts", &r);
        let all = courts(&answer, Served::Cached, page, true);
        assert!(all.text.starts_with("2 of 2 Rechtspraak courts match"), "{}", all.text);
    }
}
