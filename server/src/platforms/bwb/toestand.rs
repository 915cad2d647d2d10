//! A regulation's toestand XML (the version in force over one period) as its structure
//! and text, article by article ([`read_toestand`]).
//!
//! The document: `toestand` → `wetgeving` (`citeertitel`, `intitule`) → `wet-besluit` →
//! `wettekst` → divisions (`boek`, `deel`, `hoofdstuk`, `titeldeel`, `afdeling`,
//! `paragraaf`, `sub-paragraaf`), each headed by a `kop` (`label`, `nr`, `titel`) →
//! `artikel` (`kop` with `label` "Artikel" and `nr` such as "1:3"; `lid` with `lidnr`
//! and `al`; `lijst`/`li` with `li.nr`). Elements are read by local name whatever their
//! namespace; an element this reader does not know contributes its text.
//!
//! Invariants: any input gives a result or an error, never a panic; nesting deeper than
//! [`MAX_DEPTH`], more than [`MAX_ARTICLES`] articles or more than [`MAX_TEXT_BYTES`] of
//! text is an error; a document without a `toestand` root is an error, never an empty
//! regulation.
//!
//! What this module does not do: resolve references between articles (`intref`,
//! `extref` are read as their text), or read tables as more than their cells' text.

use quick_xml::Reader;
use quick_xml::events::Event;
use serde::{Deserialize, Serialize};

use crate::platforms::ob::wire::resolve_reference;

/// Deepest element nesting read.
pub const MAX_DEPTH: usize = 96;
/// Most articles read.
pub const MAX_ARTICLES: usize = 20_000;
/// Most text read, in bytes.
pub const MAX_TEXT_BYTES: usize = 8 * 1024 * 1024;

/// Elements that divide a regulation, each headed by a `kop`.
const DIVISIONS: [&str; 8] = [
    "boek",
    "deel",
    "hoofdstuk",
    "titeldeel",
    "afdeling",
    "paragraaf",
    "sub-paragraaf",
    "bijlage",
];

/// One article.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Article {
    /// Its number as the regulation writes it: `1`, `1:3`, `2a`.
    pub number: String,
    /// Its heading's title, if it has one.
    pub title: Option<String>,
    /// The divisions it stands in, outermost first: `Hoofdstuk 1 Algemene bepalingen`.
    pub path: Vec<String>,
    /// Its text: paragraphs (`lid`, `al`, list items) on lines of their own.
    pub text: String,
}

/// A regulation as one toestand gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Toestand {
    /// `bwb-id` of the root.
    pub bwb_id: Option<String>,
    /// The citation title (`citeertitel`).
    pub citation_title: Option<String>,
    /// The full title (`intitule`).
    pub intitule: Option<String>,
    /// Every division's heading, in order, with the depth it stands at (0 outermost).
    pub divisions: Vec<(usize, String)>,
    /// The articles, in order.
    pub articles: Vec<Article>,
}

impl Toestand {
    /// The article numbered `number` (`2`, `1:3`; `artikel 2`, `Art. 2` are read as `2`),
    /// compared without case and spaces.
    pub fn article(&self, number: &str) -> Option<&Article> {
        let want = normalise_number(number);
        self.articles.iter().find(|a| normalise_number(&a.number) == want)
    }

    /// The whole text: headings and articles, one per paragraph.
    pub fn full_text(&self) -> String {
        let mut out = String::new();
        let mut path: Vec<String> = Vec::new();
        for a in &self.articles {
            for (depth, heading) in a.path.iter().enumerate() {
                if path.get(depth) != Some(heading) {
                    path.truncate(depth);
                    path.push(heading.clone());
                    out.push_str(heading);
                    out.push_str("\n\n");
                }
            }
            path.truncate(a.path.len());
            out.push_str(&article_heading(a));
            out.push('\n');
            out.push_str(&a.text);
            out.push_str("\n\n");
        }
        out.truncate(out.trim_end().len());
        out
    }
}

/// `Artikel 1:3 Begripsbepalingen`.
pub fn article_heading(a: &Article) -> String {
    match &a.title {
        Some(t) => format!("Artikel {} {t}", a.number),
        None => format!("Artikel {}", a.number),
    }
}

/// An article number as compared: lower case, no spaces, a leading `artikel`/`art.`
/// dropped.
pub fn normalise_number(text: &str) -> String {
    let lower = text.trim().to_lowercase();
    let rest = lower
        .strip_prefix("artikel")
        .or_else(|| lower.strip_prefix("art."))
        .or_else(|| lower.strip_prefix("art "))
        .unwrap_or(&lower);
    rest.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Why a toestand could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ToestandError {
    /// Not well-formed XML.
    #[error("not well-formed XML at byte {position}: {detail}")]
    Xml {
        /// Where reading stopped.
        position: u64,
        /// What the reader said.
        detail: String,
    },
    /// Well-formed, but not a regulation of the kind asked.
    #[error("not a regulation's XML ({0})")]
    NotToestand(String),
    /// Bigger or deeper than BesluitBron reads.
    #[error("the regulation exceeds what BesluitBron reads ({0})")]
    TooBig(&'static str),
}

/// What the reader is inside of.
#[derive(Debug)]
enum Frame {
    /// A division: its `kop` parts as read so far.
    Division { label: String, nr: String, titel: String },
    /// An article; `numbered` while its text ends with a paragraph's number (`lidnr`,
    /// `li.nr`), whose paragraph follows on the same line.
    Article {
        nr: String,
        titel: String,
        text: String,
        numbered: bool,
    },
    /// A `kop` (of the nearest division or article).
    Kop,
    /// A part of a `kop`: `label`, `nr`, `titel`.
    KopPart(String),
    /// A paragraph-like element (`al`, `lidnr`, `li.nr`, `citeertitel`, `intitule`, …).
    Other(String),
}

/// Reads a toestand.
pub fn read_toestand(bytes: &[u8]) -> Result<Toestand, ToestandError> {
    read_regulation(bytes, "toestand")
}

/// Reads a regulation whose root element is `root` (`toestand` for the
/// Basiswettenbestand, `cvdr` for a local regulation): the same `kop`, `artikel`, `lid`,
/// `al` and list elements; the text outside articles (a preamble, a note) is not read.
pub fn read_regulation(bytes: &[u8], root: &str) -> Result<Toestand, ToestandError> {
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    let mut out = Toestand::default();
    let mut stack: Vec<Frame> = Vec::new();
    let mut headings: Vec<String> = Vec::new();
    let mut seen_root = false;
    let mut text_bytes = 0usize;
    let mut buf = Vec::new();
    loop {
        let position = reader.buffer_position();
        let event = reader.read_event_into(&mut buf).map_err(|e| ToestandError::Xml {
            position,
            detail: e.to_string(),
        })?;
        match event {
            Event::Start(start) => {
                let local = start.local_name().into_inner().to_owned();
                if !seen_root {
                    if local != root {
                        let shown: String = local.chars().take(40).collect();
                        return Err(ToestandError::NotToestand(format!("the root is {shown}")));
                    }
                    seen_root = true;
                    out.bwb_id = start.try_get_attribute("bwb-id").ok().flatten().and_then(|a| {
                        a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                            .ok()
                            .map(|v| v.trim().to_owned())
                    });
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(ToestandError::TooBig("elements nested too deeply"));
                }
                let frame = match local.as_str() {
                    d if DIVISIONS.contains(&d) => Frame::Division {
                        label: String::new(),
                        nr: String::new(),
                        titel: String::new(),
                    },
                    "artikel" => {
                        if out.articles.len() >= MAX_ARTICLES {
                            return Err(ToestandError::TooBig("too many articles"));
                        }
                        Frame::Article {
                            nr: String::new(),
                            titel: String::new(),
                            text: String::new(),
                            numbered: false,
                        }
                    }
                    "kop" => Frame::Kop,
                    "label" | "nr" | "titel" if matches!(stack.last(), Some(Frame::Kop)) => Frame::KopPart(local),
                    _ => Frame::Other(local),
                };
                // A paragraph starts on a new line of its article.
                if let Frame::Other(name) = &frame
                    && matches!(name.as_str(), "al" | "lidnr" | "li.nr" | "lid" | "li")
                {
                    paragraph_break(&mut stack);
                }
                // A list item numbered by its `nr` attribute (as local regulations write
                // their paragraphs: `<li nr="1.">`) starts its line with the number.
                let numbered_by_attribute = matches!(&frame, Frame::Other(name) if name == "li")
                    .then(|| start.try_get_attribute("nr").ok().flatten())
                    .flatten()
                    .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok())
                    .map(|v| v.trim().to_owned())
                    .filter(|v| !v.is_empty());
                stack.push(frame);
                if let Some(nr) = numbered_by_attribute {
                    append(&mut stack, &format!("{nr} "));
                    if let Some(Frame::Article { numbered, .. }) =
                        stack.iter_mut().rev().find(|f| matches!(f, Frame::Article { .. }))
                    {
                        *numbered = true;
                    }
                }
            }
            Event::End(_) => {
                let Some(frame) = stack.pop() else { continue };
                match frame {
                    Frame::Division { label, nr, titel } => {
                        // Its heading was pushed when its kop closed.
                        if !format!("{label}{nr}{titel}").trim().is_empty() {
                            headings.pop();
                        }
                    }
                    Frame::Article { nr, titel, text, .. } => {
                        let text = tidy(&text);
                        out.articles.push(Article {
                            number: nr.trim().to_owned(),
                            title: Some(titel.trim().to_owned()).filter(|t| !t.is_empty()),
                            path: headings.clone(),
                            text,
                        });
                    }
                    Frame::Kop => {
                        if let Some(Frame::Division { label, nr, titel }) = stack.last() {
                            let heading = [label.trim(), nr.trim(), titel.trim()]
                                .into_iter()
                                .filter(|p| !p.is_empty())
                                .collect::<Vec<_>>()
                                .join(" ");
                            if !heading.is_empty() {
                                out.divisions.push((headings.len(), heading.clone()));
                                headings.push(heading);
                            }
                        }
                    }
                    Frame::KopPart(_) => {}
                    Frame::Other(name) => {
                        if matches!(name.as_str(), "lidnr" | "li.nr") {
                            append(&mut stack, " ");
                            if let Some(Frame::Article { numbered, .. }) =
                                stack.iter_mut().rev().find(|f| matches!(f, Frame::Article { .. }))
                            {
                                *numbered = true;
                            }
                        }
                    }
                }
            }
            Event::Empty(_) => {}
            Event::Text(t) => {
                let s = t.xml10_content();
                text_bytes += s.len();
                if text_bytes > MAX_TEXT_BYTES {
                    return Err(ToestandError::TooBig("too much text"));
                }
                take_text(&mut stack, &mut out, &s);
            }
            Event::CData(c) => {
                let s = c.xml10_content();
                text_bytes += s.len();
                take_text(&mut stack, &mut out, &s);
            }
            Event::GeneralRef(r) => {
                let s = resolve_reference(&r).map_err(|detail| ToestandError::Xml { position, detail })?;
                take_text(&mut stack, &mut out, &s);
            }
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => {}
        }
        buf.clear();
    }
    if !seen_root {
        return Err(ToestandError::NotToestand("no root element".to_owned()));
    }
    Ok(out)
}

/// Text goes to the kop part it is in, the title fields, or the nearest article.
fn take_text(stack: &mut [Frame], out: &mut Toestand, s: &str) {
    let innermost = stack.iter().rev().find_map(|f| match f {
        Frame::Other(name) if name == "citeertitel" || name == "intitule" => Some(name.clone()),
        _ => None,
    });
    if let Some(name) = innermost
        && !stack.iter().any(|f| matches!(f, Frame::Article { .. }))
    {
        let field = if name == "citeertitel" {
            &mut out.citation_title
        } else {
            &mut out.intitule
        };
        let v = field.get_or_insert_with(String::new);
        v.push_str(s);
        *v = v.split_whitespace().collect::<Vec<_>>().join(" ");
        return;
    }
    // A kop part: to the kop's owner (the nearest division or article below the kop).
    if let Some(Frame::KopPart(part)) = stack.last() {
        let part = part.clone();
        let owner = stack
            .iter_mut()
            .rev()
            .find(|f| matches!(f, Frame::Division { .. } | Frame::Article { .. }));
        match owner {
            Some(Frame::Division { label, nr, titel }) => match part.as_str() {
                "label" => label.push_str(s),
                "nr" => nr.push_str(s),
                _ => titel.push_str(s),
            },
            Some(Frame::Article { nr, titel, .. }) => match part.as_str() {
                "nr" => nr.push_str(s),
                "titel" => titel.push_str(s),
                _ => {}
            },
            _ => {}
        }
        return;
    }
    if matches!(stack.last(), Some(Frame::Kop)) {
        return;
    }
    append(stack, s);
}

/// Appends to the nearest article's text; the source's own line breaks are layout, so
/// they become spaces (lines are the paragraphs this reader starts).
fn append(stack: &mut [Frame], s: &str) {
    if let Some(Frame::Article { text, .. }) = stack.iter_mut().rev().find(|f| matches!(f, Frame::Article { .. })) {
        text.push_str(&s.replace(['\n', '\r'], " "));
    }
}

/// Starts a new line in the nearest article, unless it is at one.
fn paragraph_break(stack: &mut [Frame]) {
    if let Some(Frame::Article { text, numbered, .. }) =
        stack.iter_mut().rev().find(|f| matches!(f, Frame::Article { .. }))
    {
        if std::mem::take(numbered) {
            return;
        }
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
    }
}

/// Spaces collapsed within lines, empty lines dropped.
fn tidy(text: &str) -> String {
    text.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LAW: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<toestand bwb-id="BWBR0047001" inwerkingtreding="2024-01-01"><wetgeving soort="wet">
<intitule>Wet van 12 juni 2023, houdende regels over vuurwerk</intitule>
<citeertitel status="officieel">Wet consumentenvuurwerk</citeertitel>
<wet-besluit><wettekst>
<hoofdstuk><kop><label>Hoofdstuk</label><nr>1</nr><titel>Algemene bepalingen</titel></kop>
<artikel><kop><label>Artikel</label><nr>1:1</nr><titel>Begrippen</titel></kop>
<al>In deze wet wordt verstaan onder:</al>
<lijst><li><li.nr>a.</li.nr><al>consumentenvuurwerk: vuurwerk voor particulieren;</al></li></lijst></artikel>
</hoofdstuk>
<hoofdstuk><kop><label>Hoofdstuk</label><nr>2</nr><titel>Verbod</titel></kop>
<artikel><kop><label>Artikel</label><nr>2</nr></kop>
<lid><lidnr>1</lidnr><al>Het is verboden consumentenvuurwerk tot ontbranding te brengen.</al></lid>
<lid><lidnr>2</lidnr><al>Het eerste lid geldt niet op 31 december na 18.00 uur &amp; 1 januari.</al></lid>
</artikel></hoofdstuk>
</wettekst></wet-besluit></wetgeving></toestand>"#;

    #[test]
    fn articles_are_read_with_their_numbers_headings_and_paragraphs() {
        let t = read_toestand(LAW.as_bytes()).unwrap();
        assert_eq!(t.bwb_id.as_deref(), Some("BWBR0047001"));
        assert_eq!(t.citation_title.as_deref(), Some("Wet consumentenvuurwerk"));
        assert_eq!(t.articles.len(), 2);
        let first = &t.articles[0];
        assert_eq!(
            (first.number.as_str(), first.title.as_deref()),
            ("1:1", Some("Begrippen"))
        );
        assert_eq!(first.path, ["Hoofdstuk 1 Algemene bepalingen"]);
        assert_eq!(
            first.text,
            "In deze wet wordt verstaan onder:\na. consumentenvuurwerk: vuurwerk voor particulieren;"
        );
        let second = t.article("artikel 2").expect("asked by number");
        assert_eq!(
            second.text,
            "1 Het is verboden consumentenvuurwerk tot ontbranding te brengen.\n2 Het eerste lid geldt niet op 31 \
             december na 18.00 uur & 1 januari."
        );
        assert_eq!(second.path, ["Hoofdstuk 2 Verbod"]);
        assert!(t.article("Art. 1:1").is_some() && t.article("3").is_none());
        let full = t.full_text();
        assert!(
            full.starts_with("Hoofdstuk 1 Algemene bepalingen\n\nArtikel 1:1 Begrippen\n"),
            "{full}"
        );
        assert!(full.contains("\n\nHoofdstuk 2 Verbod\n\nArtikel 2\n1 Het is"), "{full}");
    }

    #[test]
    fn other_documents_are_refused_without_panicking() {
        for bad in ["<html/>", "", "<toestand><a></toestand>", "<cvdr><body/></cvdr>"] {
            assert!(read_toestand(bad.as_bytes()).is_err(), "{bad}");
        }
        let deep = format!("<toestand>{}", "<a>".repeat(MAX_DEPTH + 1));
        assert_eq!(
            read_toestand(deep.as_bytes()),
            Err(ToestandError::TooBig("elements nested too deeply"))
        );
    }
}
