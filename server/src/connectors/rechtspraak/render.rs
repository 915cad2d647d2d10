//! What the Rechtspraak tools keep and show: typed answers and pure render functions,
//! snapshot-tested below.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::resolve::passes;
use crate::mcp::call::Structure;
use crate::mcp::{Rendered, provenance};
use crate::platforms::rechtspraak::{Area, Court, Feed, FeedEntry, Procedure, Ruling};

/// Characters of an inhoudsindicatie shown in a search hit.
pub const SUMMARY_CHARS: usize = 300;
/// Entries of a value list shown in the text (the structured content holds all matches).
pub const LIST_LINES: usize = 60;

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
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
        }
    }
}

/// `rechtspraak_search`'s result.
pub fn search(page: &SearchPage, served: Served) -> Rendered {
    let total = page.total.map(|t| format!(" of {t} found")).unwrap_or_default();
    let mut text = if page.hits.is_empty() {
        let mut t = if page.total.is_some_and(|t| u64::from(page.offset) >= t && t > 0) {
            format!(
                "No rulings at offset {} for {}: the service found {} in all{}. Ask with a smaller offset.",
                page.offset,
                page.searched,
                page.total.unwrap_or(0),
                provenance(served)
            )
        } else {
            format!(
                "No rulings found for {}{}. Widen the search: drop a filter, widen the dates, or set with_text to \
                 false to include rulings published without a text.",
                page.searched,
                provenance(served)
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
        let _ = write!(text, "\nMore results: ask again with offset {next}.");
    }
    Rendered {
        text,
        structured: Structure::Own(json!({
            "searched": page.searched,
            "total": page.total,
            "offset": page.offset,
            "returned": page.returned,
            "next_offset": page.next_offset,
            "note": page.note,
            "rulings": page.hits,
        })),
    }
}

/// `rechtspraak_ruling`'s result: the metadata, the inhoudsindicatie, and `length`
/// characters of the text from `offset`.
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
    let names =
        |v: &[crate::platforms::rechtspraak::Labeled]| v.iter().map(|l| l.name.clone()).collect::<Vec<_>>().join("; ");
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
    let (page, total, has_more, images) = match &r.text {
        None => {
            text.push_str("\n\nNo published text: this ECLI is published with its metadata only.");
            (String::new(), 0, false, 0)
        }
        Some(t) => {
            let total = t.text.chars().count();
            let page: String = t.text.chars().skip(offset).take(length).collect();
            let end = offset.saturating_add(length).min(total);
            let has_more = end < total;
            let _ = write!(
                text,
                "\n\nText ({}), characters {}–{} of {}{}:\n\n{}",
                t.element,
                offset.min(total),
                end,
                total,
                if has_more {
                    format!("; ask again with offset {end} for the rest")
                } else {
                    String::new()
                },
                page
            );
            (page, total, has_more, t.images)
        }
    };
    Rendered {
        text,
        structured: Structure::Own(json!({
            "ecli": r.ecli,
            "type": r.kind,
            "court": r.court,
            "date": r.date,
            "issued": r.issued,
            "modified": r.modified,
            "case_numbers": r.case_numbers,
            "procedures": r.procedures,
            "areas": r.areas,
            "relations": r.relations,
            "vindplaatsen": r.vindplaatsen,
            "replaces": r.replaces,
            "summary": r.summary,
            "has_text": r.text.is_some(),
            "text": page,
            "text_offset": offset,
            "total_length": total,
            "has_more": has_more,
            "images": images,
        })),
    }
}

/// `rechtspraak_courts`'s result: the courts passing `filter` (ended ones only when
/// `include_ended`).
pub fn courts(answer: &CourtsAnswer, served: Served, filter: Option<&str>, include_ended: bool) -> Rendered {
    let matching: Vec<&Court> = answer
        .courts
        .iter()
        .filter(|c| include_ended || c.end.is_none())
        .filter(|c| {
            passes(
                filter,
                &[
                    &c.name,
                    c.abbreviation.as_deref().unwrap_or(""),
                    c.kind.as_deref().unwrap_or(""),
                ],
            )
        })
        .collect();
    let ended = answer.courts.iter().filter(|c| c.end.is_some()).count();
    let mut text = format!(
        "{} of {} courts{}{}{}.",
        matching.len(),
        answer.courts.len(),
        filter
            .map(|f| format!(" match `{}`", super::resolve::echo(f)))
            .unwrap_or_default(),
        if include_ended {
            String::new()
        } else {
            format!(" ({ended} ended courts left out; include_ended shows them)")
        },
        provenance(served)
    );
    for c in matching.iter().take(LIST_LINES) {
        let _ = write!(
            text,
            "\n- {} ({}){}",
            c.name,
            c.abbreviation.as_deref().unwrap_or("-"),
            c.end.as_deref().map(|e| format!(", ended {e}")).unwrap_or_default()
        );
    }
    more(&mut text, matching.len());
    Rendered {
        text,
        structured: Structure::Own(json!({"count": matching.len(), "courts": matching})),
    }
}

/// `rechtspraak_areas`'s result: the areas passing `filter`, with their parent's name.
pub fn areas(answer: &AreasAnswer, served: Served, filter: Option<&str>) -> Rendered {
    let parent_name = |a: &Area| {
        a.parent
            .as_ref()
            .and_then(|p| answer.areas.iter().find(|x| &x.identifier == p))
            .map(|p| p.name.clone())
    };
    let matching: Vec<(&Area, Option<String>)> = answer
        .areas
        .iter()
        .map(|a| (a, parent_name(a)))
        .filter(|(a, parent)| passes(filter, &[&a.name, parent.as_deref().unwrap_or(""), &a.identifier]))
        .collect();
    let mut text = format!(
        "{} of {} areas of law{}{}. Search by a top-level area: courts often tag only the top level, so \
         rechtspraak_search sends the top level and checks a sub-area on each result's metadata.",
        matching.len(),
        answer.areas.len(),
        filter
            .map(|f| format!(" match `{}`", super::resolve::echo(f)))
            .unwrap_or_default(),
        provenance(served)
    );
    for (a, parent) in matching.iter().take(LIST_LINES) {
        match parent {
            Some(p) => {
                let _ = write!(text, "\n  - {} (under {p})", a.name);
            }
            None => {
                let _ = write!(text, "\n- {}", a.name);
            }
        }
    }
    more(&mut text, matching.len());
    let list: Vec<serde_json::Value> = matching
        .iter()
        .map(|(a, parent)| json!({"identifier": a.identifier, "name": a.name, "parent": parent}))
        .collect();
    Rendered {
        text,
        structured: Structure::Own(json!({"count": list.len(), "areas": list})),
    }
}

/// `rechtspraak_procedures`'s result.
pub fn procedures(answer: &ProceduresAnswer, served: Served, filter: Option<&str>) -> Rendered {
    let matching: Vec<&Procedure> = answer
        .procedures
        .iter()
        .filter(|p| passes(filter, &[&p.name, &p.identifier]))
        .collect();
    let mut text = format!(
        "{} of {} kinds of procedure{}{}.",
        matching.len(),
        answer.procedures.len(),
        filter
            .map(|f| format!(" match `{}`", super::resolve::echo(f)))
            .unwrap_or_default(),
        provenance(served)
    );
    for p in matching.iter().take(LIST_LINES) {
        let _ = write!(text, "\n- {}", p.name);
    }
    more(&mut text, matching.len());
    Rendered {
        text,
        structured: Structure::Own(json!({"count": matching.len(), "procedures": matching})),
    }
}

fn more(text: &mut String, matching: usize) {
    if matching > LIST_LINES {
        let _ = write!(
            text,
            "\n… and {} more in the structured content; pass `filter` to narrow.",
            matching - LIST_LINES
        );
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
        let page = SearchPage::new(&feed, "area Strafrecht".into(), 0, Vec::new(), None);
        let r = search(&page, Served::Cached);
        assert!(
            r.text
                .starts_with("No rulings found for area Strafrecht (from BesluitBron's buffer). Widen")
        );
        assert_eq!(page.next_offset, None);
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
        let r = courts(&answer, Served::Cached, Some("rechtbank"), false);
        snapshot("rechtspraak_courts", &r);
        let all = courts(&answer, Served::Cached, Some("rechtbank"), true);
        assert!(all.text.starts_with("2 of 2 courts match"));
    }
}
