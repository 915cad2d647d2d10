//! What the connectors of KOOP's regulation collections share (`bwb`, `cvdr`; vector's
//! shape: a family of platforms behind one service keeps its shared parts in one
//! place, each connector only what is its own): the argument schemas of their searches
//! and reads, the day a regulation is read as in force on, and one regulation's text as
//! an assistant reads it — whole or one article, paged by characters, with its outline.
//!
//! What this module does not do: name a connector, build a query, or render a record
//! (each connector does, from its own record).

use besluitbron_core::WallTime;
use rmcp::schemars;
use serde::{Deserialize, Serialize};

use crate::calendar;
use crate::connectors::pages::{TextPage, text_page};
use crate::platforms::http::brief;
use crate::platforms::koop::regulation::Regulation;

/// The most records a search shows.
pub const MAX_LIMIT: u32 = 50;
/// Characters of text per read by default, and at most.
pub const DEFAULT_LENGTH: usize = 10_000;
/// The most characters of text a read gives at once.
pub const MAX_LENGTH: usize = 100_000;
/// Entries of the outline shown in the structured content at most (a long law's whole
/// outline would not fit the answer budget; `outline_entries` says how many there are).
pub const MAX_OUTLINE: usize = 60;

/// A plain integer 1–50.
pub fn limit_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT})
}

/// A plain integer from 0 within the reachable hits.
pub fn offset_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 0, "maximum": crate::platforms::koop::MAX_OFFSET})
}

/// A plain integer 1–100000.
pub fn length_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 1, "maximum": MAX_LENGTH})
}

/// A plain integer from 0 (characters).
pub fn text_offset_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 0})
}

/// The day of `wall` (UTC), YYYY-MM-DD.
pub fn day_of(wall: WallTime) -> String {
    calendar::utc_day(wall.0)
}

/// The date asked, or `today`; an invalid one is the tool's error message.
pub fn date_arg(tool: &str, date: Option<&str>, today: WallTime) -> Result<String, String> {
    match date.map(str::trim).filter(|d| !d.is_empty()) {
        None => Ok(day_of(today)),
        Some(d) if calendar::is_day(d) => Ok(d.to_owned()),
        Some(d) => Err(format!(
            "{tool}: `date` must be a day written YYYY-MM-DD, not `{}`",
            brief(d)
        )),
    }
}

/// The checked `length` of a read, or the tool's error message.
pub fn read_length(tool: &str, length: Option<usize>) -> Result<usize, String> {
    let length = length.unwrap_or(DEFAULT_LENGTH);
    if length == 0 || length > MAX_LENGTH {
        return Err(format!(
            "{tool}: `length` must be 1 to {MAX_LENGTH} characters (default {DEFAULT_LENGTH})"
        ));
    }
    Ok(length)
}

/// One entry of a regulation's outline.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct OutlineEntry {
    /// `Artikel 1:3 …`, a division's heading, or a part (`Aanhef`, `Bijlage 1 …`).
    pub label: String,
    /// The article's number, for `article`.
    pub article: Option<String>,
    /// How deep it stands (0 outermost).
    pub depth: usize,
}

/// The first [`MAX_OUTLINE`] entries of `r`'s outline, and how many there are.
pub fn outline(r: &Regulation) -> (Vec<OutlineEntry>, usize) {
    let mut entries = 0;
    let shown = r
        .outline()
        .inspect(|_| entries += 1)
        .take(MAX_OUTLINE)
        .map(|e| OutlineEntry {
            label: e.label.to_owned(),
            article: e.article.map(str::to_owned),
            depth: e.depth,
        })
        .collect::<Vec<_>>();
    let entries = entries + r.outline().skip(MAX_OUTLINE).count();
    (shown, entries)
}

/// A page of a regulation's text as asked: one article, or the whole text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegulationPage {
    /// The page's characters.
    pub text: String,
    /// Where the page is.
    pub at: TextPage,
    /// The article read, when one was asked.
    pub article: Option<String>,
}

/// The page `offset..offset + length` of `r`'s text, or of its article `article`; a
/// missing article is the error naming the ones there are (`about` says which
/// regulation, e.g. `Wet X (BWBR…) as in force on 2025-01-01`).
pub fn regulation_page(
    r: &Regulation,
    article: Option<&str>,
    offset: usize,
    length: usize,
    about: &str,
) -> Result<RegulationPage, String> {
    let (body, number) = match article {
        Some(asked) => match r.article(asked) {
            Some(a) => (a.rendered(), a.number.clone()),
            None => {
                let numbers: Vec<&str> = r.articles().filter_map(|a| a.number.as_deref()).take(40).collect();
                let more = r.articles().count() > 40;
                return Err(if numbers.is_empty() {
                    format!(
                        "{about} has no articles (it is written in chapters or parts without them); read it \
                         without `article`"
                    )
                } else {
                    format!(
                        "{about} has no article `{}`; its articles are {}{}",
                        brief(asked),
                        numbers.join(", "),
                        if more { ", …" } else { "" }
                    )
                });
            }
        },
        None => (r.full_text(), None),
    };
    let (text, at) = text_page(&body, offset, length);
    Ok(RegulationPage {
        text,
        at,
        article: number,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::koop::regulation::{Root, read_regulation};

    #[test]
    fn a_day_is_the_wall_clocks_utc_day_and_a_bad_date_is_refused() {
        assert_eq!(day_of(WallTime(0)), "1970-01-01");
        assert_eq!(day_of(WallTime(1_796_601_599_000)), "2026-12-06");
        let today = WallTime(1_796_428_800_000);
        assert_eq!(date_arg("t", Some("2025-01-01"), today).unwrap(), "2025-01-01");
        assert!(
            date_arg("t", Some("2025-02-30"), today)
                .unwrap_err()
                .contains("YYYY-MM-DD")
        );
        assert_eq!(date_arg("t", None, today).unwrap(), "2026-12-05");
        assert_eq!(date_arg("t", Some("  "), today).unwrap(), "2026-12-05");
    }

    #[test]
    fn an_article_is_read_exactly_and_a_missing_one_names_the_ones_there_are() {
        let xml = r#"<toestand bwb-id="BWBR0000001"><wetgeving><citeertitel>Wet</citeertitel><wet-besluit><wettekst>
            <artikel><kop><label>Artikel</label><nr>1</nr></kop><al>Een.</al></artikel>
            <artikel><kop><label>Artikel</label><nr>2a</nr></kop><al>Twee a.</al></artikel>
            </wettekst></wet-besluit></wetgeving></toestand>"#;
        let r = read_regulation(xml.as_bytes(), Root::Toestand).unwrap();
        let page = regulation_page(&r, Some("artikel 2A"), 0, 100, "Wet").unwrap();
        assert_eq!(
            (page.text.as_str(), page.article.as_deref()),
            ("Artikel 2a\nTwee a.", Some("2a"))
        );
        let e = regulation_page(&r, Some("7"), 0, 100, "Wet").unwrap_err();
        assert_eq!(e, "Wet has no article `7`; its articles are 1, 2a");
        let whole = regulation_page(&r, None, 0, 100_000, "Wet").unwrap();
        assert_eq!(whole.text, "Citeertitel: Wet\n\nArtikel 1\nEen.\n\nArtikel 2a\nTwee a.");
        let (entries, count) = outline(&r);
        assert_eq!((entries.len(), count), (2, 2));
        assert_eq!(entries[1].article.as_deref(), Some("2a"));
    }
}
