//! What the Rechtspraak tools keep and show: typed answers and pure render functions,
//! snapshot-tested below.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use super::resolve::passes;
use crate::call::Structure;
use crate::call::{Rendered, provenance};
use crate::connectors::vocabulary::{Item, Tally};
use crate::platforms::rechtspraak::{Area, Court, Feed, FeedEntry, Labeled, Procedure, Relation, Ruling};

/// Characters of an inhoudsindicatie shown in a search hit.
pub const SUMMARY_CHARS: usize = 300;
/// Entries of a value list per answer by default, and at most.
pub const DEFAULT_LIST_LIMIT: usize = 40;
pub const MAX_LIST_LIMIT: usize = 200;

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

/// The public page of a ruling.
pub fn ruling_url(ecli: &str) -> String {
    format!("https://uitspraken.rechtspraak.nl/details?id={ecli}")
}

/// A ruling's title for a list: the start of its inhoudsindicatie, else its court and
/// case number.
fn ruling_title(summary: Option<&str>, court: &str, case_number: Option<&str>) -> String {
    match summary.map(str::trim).filter(|s| !s.is_empty()) {
        Some(s) => trim_chars(s, 120),
        None => match case_number {
            Some(n) => format!("{court}, {n}"),
            None => court.to_owned(),
        },
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

/// A formal relation to another ruling, as `rechtspraak_ruling` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RelationShown {
    /// The other ruling's ECLI.
    pub id: String,
    /// Its kind (e.g. `conclusie`, `cassatie`, `hogerBeroep`).
    pub kind: Option<String>,
    /// Which way (`eerdereAanleg`, `latereAanleg`).
    pub direction: Option<String>,
    /// The outcome, when given.
    pub outcome: Option<String>,
    /// The platform's own wording.
    pub label: String,
}

impl RelationShown {
    fn of(r: &Relation) -> RelationShown {
        RelationShown {
            id: r.ecli.clone(),
            kind: r.kind.clone(),
            direction: r.direction.clone(),
            outcome: r.outcome.clone(),
            label: r.label.clone(),
        }
    }
}

/// A value list's count (exact) and next page.
fn list_tally(matching: usize, next: Option<usize>) -> Tally {
    Tally {
        total: Some(matching as u64),
        total_is_exact: true,
        next_offset: next.map(|n| n as u64),
    }
}

/// Structured content of its own, from a value the output schema describes.
fn own<T: Serialize>(value: &T) -> Structure {
    // These are plain structs of strings and numbers: serializing them cannot fail.
    Structure::Own(serde_json::to_value(value).unwrap_or_default())
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

/// `rechtspraak_ruling`'s structured content: the metadata and where the page of text
/// is. The page itself is in the text content only (never twice): its last
/// `text_length` characters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RulingOutput {
    /// The ECLI (`rechtspraak_ruling` `id`).
    pub id: String,
    /// The start of the inhoudsindicatie, else the court and case number.
    pub title: String,
    /// `Uitspraak` or `Conclusie`.
    pub kind: Option<String>,
    /// The court's name.
    pub organization: Option<String>,
    /// The ruling's public page.
    pub url: String,
    /// `rechtspraak`.
    pub platform: String,
    /// The court, with its identifier.
    pub court: Option<Labeled>,
    /// The decision date.
    pub date: Option<String>,
    /// The publication date.
    pub issued: Option<String>,
    /// Last modified.
    pub modified: Option<String>,
    /// Case numbers.
    pub case_numbers: Vec<String>,
    /// Procedures.
    pub procedures: Vec<Labeled>,
    /// Areas of law.
    pub areas: Vec<Labeled>,
    /// Formal relations to other rulings (each `id` an ECLI rechtspraak_ruling reads).
    pub relations: Vec<RelationShown>,
    /// Where it is published.
    pub vindplaatsen: Vec<String>,
    /// The LJNs it replaces.
    pub replaces: Vec<String>,
    /// The inhoudsindicatie.
    pub summary: Option<String>,
    /// False when the ECLI is published with its metadata only.
    pub has_text: bool,
    /// The character offset the page of text starts at.
    pub text_offset: usize,
    /// Characters of text in this answer: the last `text_length` characters of the text
    /// content.
    pub text_length: usize,
    /// Characters of text in the whole ruling.
    pub total_length: usize,
    /// The `offset` that asks for the rest of the text, when there is more.
    pub next_offset: Option<usize>,
    /// True when more text follows this page (`next_offset` asks for it).
    pub has_more: bool,
    /// Images the text mentions (not shown).
    pub images: u32,
}

/// `rechtspraak_ruling`'s result: the metadata, the inhoudsindicatie, and `length`
/// characters of the text from `offset`, at the end of the text content.
pub fn ruling(r: &Ruling, served: Served, offset: usize, length: usize) -> Rendered {
    let court = r.court.as_ref().map_or("unknown court", |c| c.name.as_str());
    let mut text = format!(
        "{} — {} of {}, decided {}{}{}.",
        r.ecli,
        r.kind.as_deref().unwrap_or("ruling"),
        court,
        r.date.as_deref().unwrap_or("on an unknown date"),
        r.issued
            .as_deref()
            .map(|d| format!(", published {d}"))
            .unwrap_or_default(),
        provenance(served)
    );
    if !r.case_numbers.is_empty() {
        let _ = write!(text, "\nCase number(s): {}", r.case_numbers.join(", "));
    }
    let names = |v: &[Labeled]| v.iter().map(|l| l.name.clone()).collect::<Vec<_>>().join("; ");
    if !r.procedures.is_empty() {
        let _ = write!(text, "\nProcedure: {}", names(&r.procedures));
    }
    if !r.areas.is_empty() {
        let _ = write!(text, "\nAreas of law: {}", names(&r.areas));
    }
    for rel in &r.relations {
        let _ = write!(
            text,
            "\nRelated: {} ({}{})",
            rel.ecli,
            rel.kind.as_deref().unwrap_or("relation"),
            rel.direction.as_deref().map(|d| format!(", {d}")).unwrap_or_default()
        );
    }
    if !r.vindplaatsen.is_empty() {
        let _ = write!(text, "\nPublished in: {}", r.vindplaatsen.join("; "));
    }
    if !r.replaces.is_empty() {
        let _ = write!(text, "\nReplaces LJN: {}", r.replaces.join(", "));
    }
    if let Some(s) = &r.summary {
        let _ = write!(text, "\n\nInhoudsindicatie: {s}");
    }
    let (start, shown, total, next_offset, images) = match &r.text {
        None => {
            text.push_str("\n\nNo published text: this ECLI is published with its metadata only.");
            (0, 0, 0, None, 0)
        }
        Some(t) => {
            let total = t.text.chars().count();
            let start = offset.min(total);
            let page: String = t.text.chars().skip(start).take(length).collect();
            let shown = page.chars().count();
            let end = start + shown;
            let next_offset = (end < total).then_some(end);
            let _ = write!(
                text,
                "\n\nText ({}), characters {start}–{end} of {total}{}:\n\n{page}",
                t.element,
                match next_offset {
                    Some(next) => format!(
                        "; {} more: ask again with `offset` {next} (and a `length` up to 100000)",
                        total - end
                    ),
                    None if start >= total && total > 0 => format!("; the text ends before `offset` {offset}"),
                    None => String::new(),
                },
            );
            (start, shown, total, next_offset, t.images)
        }
    };
    Rendered {
        text,
        structured: own(&RulingOutput {
            id: r.ecli.clone(),
            title: ruling_title(r.summary.as_deref(), court, r.case_numbers.first().map(String::as_str)),
            kind: r.kind.clone(),
            organization: r.court.as_ref().map(|c| c.name.clone()),
            url: ruling_url(&r.ecli),
            platform: crate::platforms::rechtspraak::PLATFORM.as_str().to_owned(),
            court: r.court.clone(),
            date: r.date.clone(),
            issued: r.issued.clone(),
            modified: r.modified.clone(),
            case_numbers: r.case_numbers.clone(),
            procedures: r.procedures.clone(),
            areas: r.areas.clone(),
            relations: r.relations.iter().map(RelationShown::of).collect(),
            vindplaatsen: r.vindplaatsen.clone(),
            replaces: r.replaces.clone(),
            summary: r.summary.clone(),
            has_text: r.text.is_some(),
            text_offset: start,
            text_length: shown,
            total_length: total,
            next_offset,
            has_more: next_offset.is_some(),
            images,
        }),
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
            .map(|f| format!(" match `{}`", super::resolve::echo(f)))
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

/// `text` cut to `max` characters, with `…` when cut.
pub fn trim_chars(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(max).collect();
    out.push('…');
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::rechtspraak::{Labeled, Relation, RulingText};

    fn snapshot(name: &str, r: &Rendered) {
        let structured = match &r.structured {
            Structure::Own(v) => v.clone(),
            Structure::Answer(_) => panic!("own structure"),
        };
        let text = format!(
            "{}\n---\n{}",
            r.text,
            serde_json::to_string_pretty(&structured).expect("json")
        );
        insta::with_settings!({snapshot_path => "../../../../snapshots/render", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(name, text);
        });
    }

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

    #[test]
    fn a_ruling_with_metadata_text_pages_and_no_text() {
        let mut r = Ruling {
            ecli: "ECLI:NL:HR:2026:1500".into(),
            court: Some(Labeled {
                id: Some("http://standaarden.overheid.nl/owms/terms/Hoge_Raad_der_Nederlanden".into()),
                name: "Hoge Raad".into(),
            }),
            date: Some("2026-06-12".into()),
            issued: Some("2026-06-12".into()),
            modified: Some("2026-06-15T09:30:00".into()),
            case_numbers: vec!["25/01234".into()],
            kind: Some("Uitspraak".into()),
            procedures: vec![Labeled {
                id: None,
                name: "Cassatie".into(),
            }],
            areas: vec![Labeled {
                id: None,
                name: "Civiel recht".into(),
            }],
            relations: vec![Relation {
                ecli: "ECLI:NL:PHR:2026:400".into(),
                kind: Some("conclusie".into()),
                direction: Some("eerdereAanleg".into()),
                outcome: None,
                label: "Conclusie: ECLI:NL:PHR:2026:400".into(),
            }],
            vindplaatsen: vec!["Rechtspraak.nl".into(), "NJ 2026/201".into()],
            replaces: vec![],
            summary: Some("Onrechtmatige daad.".into()),
            text: Some(RulingText {
                element: "uitspraak".into(),
                text: "## 1 Het geding\n\n1.1 Eiseres heeft beroep ingesteld[^1].\n\nFootnotes\n[^1] Procesinleiding."
                    .into(),
                images: 0,
            }),
        };
        snapshot("rechtspraak_ruling", &ruling(&r, Served::Fetched, 0, 40));
        r.text = None;
        let bare = ruling(&r, Served::Cached, 0, 40);
        assert!(
            bare.text
                .ends_with("No published text: this ECLI is published with its metadata only.")
        );
    }

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
