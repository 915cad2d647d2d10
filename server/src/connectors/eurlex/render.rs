//! What `eurlex_search` and `eurlex_read` answer: pure functions from the kept answers to
//! text and structured content in the shared vocabulary (`results` of [`Item`]s and a
//! [`Tally`]); an act's text through the regulation family's outline and paging.
//!
//! What this module does not do: ask CELLAR anything.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::{Head, Rendered, Structure, provenance};
use crate::connectors::pages::{TextPage, text_page};
use crate::connectors::regulation::{OutlineEntry, outline, regulation_page};
use crate::connectors::vocabulary::{Item, Tally};
use crate::platforms::eurlex::sparql::kind_name;
use crate::platforms::eurlex::{Act, PLATFORM, Regulation, SearchPage};
use crate::platforms::koop::regulation::BlockKind;

/// The reading tool, which every result names.
pub const READ_TOOL: &str = "eurlex_read";

/// An act's page on EUR-Lex, in `language` (`nl`, `en`).
pub fn public_url(celex: &str, language: &str) -> String {
    format!(
        "https://eur-lex.europa.eu/legal-content/{}/TXT/?uri=CELEX:{celex}",
        language.to_ascii_uppercase()
    )
}

/// Whether an act is in force, in words.
fn force_words(in_force: Option<bool>) -> &'static str {
    match in_force {
        Some(true) => "in force",
        Some(false) => "not in force",
        None => "in force: not said",
    }
}

/// A search's structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchShown {
    /// What was searched, in words.
    pub searched: String,
    /// The acts.
    pub results: Vec<Item>,
    /// The next page (CELLAR gives no count: `total` is absent).
    #[serde(flatten)]
    pub tally: Tally,
}

/// The page's acts as items.
pub fn items(page: &SearchPage, language: &str) -> Vec<Item> {
    page.hits
        .iter()
        .map(|h| {
            Item::new(PLATFORM, READ_TOOL, h.celex.clone(), h.title.clone())
                .dated(h.date.clone())
                .kind(h.kind.as_deref().map(kind_name))
                .at(Some(public_url(&h.celex, language)))
        })
        .collect()
}

/// The page's tally: no total (CELLAR's searches give none), the next page if any.
pub fn tally(page: &SearchPage) -> Tally {
    Tally {
        total: None,
        total_is_exact: false,
        next_offset: page.next_offset,
    }
}

/// A search's answer: what was found, one line per act, the next page.
pub fn search(page: &SearchPage, served: Served, searched: &str, offset: u64, language: &str) -> Rendered {
    let results = items(page, language);
    let mut text = if results.is_empty() && offset == 0 {
        format!(
            "EUR-Lex has no act for {searched}{}. To widen: use fewer or other words of the title (each must occur \
             in the {language} title), drop `kind`, `in_force` or the dates, or search the titles in the other \
             `language`.",
            provenance(served)
        )
    } else if results.is_empty() {
        format!(
            "No more acts for {searched}{}: this offset is past them.",
            provenance(served)
        )
    } else {
        format!(
            "Acts {}–{} for {searched}{}, newest first:",
            offset + 1,
            offset + results.len() as u64,
            provenance(served)
        )
    };
    for (item, hit) in results.iter().zip(&page.hits) {
        let _ = write!(
            text,
            "\n- {} {} ({}, {}; {}) — {}",
            item.id,
            item.title,
            item.kind.as_deref().unwrap_or("kind not said"),
            item.date.as_deref().unwrap_or("no date"),
            force_words(hit.in_force),
            item.url.as_deref().unwrap_or("")
        );
    }
    if let Some(next) = page.next_offset {
        let _ = write!(text, "\nMore: call eurlex_search again with `offset` {next}.");
    }
    let shown = SearchShown {
        searched: searched.to_owned(),
        results,
        tally: tally(page),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    }
}

/// `eurlex_read`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReadShown {
    /// The CELEX number.
    pub id: String,
    /// The title in the language read.
    pub title: String,
    /// The kind of act.
    pub kind: Option<String>,
    /// The document's date.
    pub date: Option<String>,
    /// Whether it is in force (absent: CELLAR does not say).
    pub in_force: Option<bool>,
    /// Days it entered into force.
    pub entry_into_force: Vec<String>,
    /// The day its validity ends, when one is set.
    pub end_of_validity: Option<String>,
    /// The acts it is based on (CELEX numbers).
    pub legal_basis: Vec<String>,
    /// The acts that amend it (CELEX numbers).
    pub amended_by: Vec<String>,
    /// Its ELI.
    pub eli: Option<String>,
    /// Its page on EUR-Lex.
    pub url: String,
    /// The platform's id.
    pub platform: String,
    /// The language read (`nl`, `en`).
    pub language: String,
    /// The article or annex read, when one was asked.
    pub article: Option<String>,
    /// Articles in the act.
    pub articles: usize,
    /// Preamble, divisions, articles, final part and annexes in order (the first 60).
    pub outline: Vec<OutlineEntry>,
    /// Entries of the whole outline.
    pub outline_entries: usize,
    /// Where the page of text is.
    #[serde(flatten)]
    pub page: TextPage,
}

/// What a reading asked of the text.
#[derive(Clone, Debug)]
pub struct Asked {
    /// One article (`3`), or an annex (`annex`, `annex 2`).
    pub article: Option<String>,
    /// The first character.
    pub offset: usize,
    /// Characters.
    pub length: usize,
}

/// The annex asked (`annex`, `annex 2`, `bijlage 2`): `Some(None)` for all annexes,
/// `Some(Some(n))` for the n-th; `None` when an article is asked.
fn annex_asked(article: &str) -> Option<Option<usize>> {
    let lower = article.trim().to_lowercase();
    let rest = lower.strip_prefix("annex").or_else(|| lower.strip_prefix("bijlage"))?;
    let rest = rest
        .strip_prefix("es")
        .or_else(|| rest.strip_prefix(['s', 'n']))
        .unwrap_or(rest)
        .trim();
    if rest.is_empty() {
        return Some(None);
    }
    rest.parse::<usize>().ok().filter(|n| *n > 0).map(Some)
}

/// The page of the annexes asked.
fn annex_page(
    t: &Regulation,
    which: Option<usize>,
    asked: &Asked,
    about: &str,
) -> Result<(String, TextPage, String), String> {
    let annexes: Vec<String> = t
        .blocks
        .iter()
        .filter(|b| b.kind == BlockKind::Part && b.heading == "Annex")
        .map(|b| b.rendered())
        .collect();
    let (body, label) = match which {
        None if !annexes.is_empty() => (annexes.join("\n\n"), "annexes".to_owned()),
        Some(n) if n <= annexes.len() => (annexes[n - 1].clone(), format!("annex {n}")),
        _ => {
            return Err(format!(
                "{about} has {} annex{}; ask `annex` for all{}",
                annexes.len(),
                if annexes.len() == 1 { "" } else { "es" },
                if annexes.len() > 1 { " or `annex 1`…" } else { "" }
            ));
        }
    };
    let (text, at) = text_page(&body, asked.offset, asked.length);
    Ok((text, at, label))
}

/// A reading's answer: the act in a line, its metadata, then the page asked.
pub fn read(t: &Regulation, act: &Act, served: Served, asked: &Asked) -> Result<(Head, Rendered), String> {
    let title = act
        .title
        .clone()
        .or_else(|| t.citation_title.clone())
        .unwrap_or_else(|| act.celex.clone());
    let about = format!("{} ({})", act.celex, act.language);
    let (page_text, at, article) = match asked.article.as_deref() {
        Some(a) if annex_asked(a).is_some() => {
            let (text, at, label) = annex_page(t, annex_asked(a).flatten(), asked, &about)?;
            (text, at, Some(label))
        }
        article => {
            let page = regulation_page(t, article, asked.offset, asked.length, &about)?;
            (page.text, page.at, page.article)
        }
    };
    let articles = t.articles().count();
    let kind = act.kind.as_deref().map(kind_name).map(str::to_owned);
    let url = public_url(&act.celex, &act.language);
    let mut text = format!(
        "{title} ({}, {}, {}; {}){}. {articles} articles. {url}",
        act.celex,
        kind.as_deref().unwrap_or("kind not said"),
        act.date.as_deref().unwrap_or("no date"),
        force_words(act.in_force),
        provenance(served)
    );
    let lists = [
        ("Entry into force", &act.entry_into_force),
        ("Legal basis", &act.legal_basis),
        ("Amended by", &act.amended_by),
    ];
    for (what, list) in lists {
        if !list.is_empty() {
            let _ = write!(text, "\n{what}: {}.", list.join(", "));
        }
    }
    let end = act.end_of_validity.clone().filter(|e| e != "9999-12-31");
    if let Some(e) = &end {
        let _ = write!(text, "\nEnd of validity: {e}.");
    }
    match &article {
        Some(a) => {
            let _ = write!(text, "\n{a}, {}.", at.note());
        }
        None => {
            let _ = write!(text, "\nThe text ({}), {}.", act.language, at.note());
        }
    }
    if at.text_length == 0 && at.total_length > 0 {
        text.push_str(" This offset is past the end of the text.");
    }
    text.push_str("\n\n");
    text.push_str(&page_text);
    let (outline, outline_entries) = outline(t);
    let head = Head::new(title.clone(), Some(url.clone()));
    let shown = ReadShown {
        id: act.celex.clone(),
        title,
        kind,
        date: act.date.clone(),
        in_force: act.in_force,
        entry_into_force: act.entry_into_force.clone(),
        end_of_validity: end,
        legal_basis: act.legal_basis.clone(),
        amended_by: act.amended_by.clone(),
        eli: act.eli.clone(),
        url,
        platform: PLATFORM.as_str().to_owned(),
        language: act.language.clone(),
        article,
        articles,
        outline,
        outline_entries,
        page: at,
    };
    let rendered = Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    };
    Ok((head, rendered))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_annex_is_asked_by_word_and_number() {
        assert_eq!(annex_asked("annex"), Some(None));
        assert_eq!(annex_asked("Annexes"), Some(None));
        assert_eq!(annex_asked("bijlage 2"), Some(Some(2)));
        assert_eq!(annex_asked("annex II"), None);
        assert_eq!(annex_asked("3"), None);
    }
}
