//! One regulation's text as an assistant reads it, for every collection of the family:
//! whole or one article, paged by characters, with its outline ([`regulation_page`],
//! [`outline`]).
//!
//! Invariants: a page is a window of the characters of exactly what was asked (the
//! article, or the whole text); an article asked that the version does not hold is an
//! error naming the articles it does hold (at most 40), or saying it has none.
//!
//! What this module does not do: read the XML ([`crate::platforms::koop::regulation`]).

use rmcp::schemars;
use serde::{Deserialize, Serialize};

use crate::connectors::pages::{TextPage, text_page};
use crate::platforms::http::brief;
use crate::platforms::koop::regulation::Regulation;

/// Entries of the outline shown in the structured content at most (a long law's whole
/// outline would not fit the answer budget; `outline_entries` says how many there are).
pub const MAX_OUTLINE: usize = 60;

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
