//! A regulation's XML as KOOP publishes it — a toestand of the Basiswettenbestand (root
//! `toestand`) or a local regulation of the CVDR (root `cvdr`) — read whole, in document
//! order, as blocks an assistant reads ([`read_regulation`]; PLATFORMS.md §11).
//!
//! What is read: the full title (`intitule`) and the citation title; every division
//! headed by a `kop` (`boek`, `hoofdstuk`, `titeldeel`, `afdeling`, `paragraaf`,
//! `divisie`, … — any element whose `kop` is not an article's), with the text written
//! directly in it (chapters without articles, `structuurtekst`); every article, its
//! `lid`s, lists and tables, labelled by its number, or by its place when it has none,
//! and marked when it has lapsed (`vervallen`) or is not yet in force; the named parts
//! outside the articles ([`PARTS`]: the aanhef with the legal basis, the closing formula
//! and the ondertekening, annexes, the explanatory note); notes and editorial remarks
//! where they stand. Tables (CALS: `table/tgroup/thead/tbody/row/entry`) are rows of
//! cells separated by ` | `, the header row first, with a note where a cell spans
//! columns or rows. An element this reader does not know contributes its text.
//!
//! What is deliberately not read ([`LEFT_OUT`], each with its reason): metadata — the
//! publication data (`meta-data`) the Basiswettenbestand puts inside the title, every
//! article and more; its processing data; a CVDR file's record (`meta`). Their words
//! never reach a title or a text.
//!
//! Invariants: any input gives a result or an error, never a panic; only a complete,
//! well-formed document is read ([`crate::xml`]); nesting deeper than
//! [`MAX_DEPTH`], more than [`MAX_BLOCKS`] blocks or more than [`MAX_TEXT_BYTES`] of text
//! is an error; a document without the expected root, or with no text at all, is an
//! error, never an empty regulation.
//!
//! What this module does not do: resolve references between articles (`intref`,
//! `extref` are read as their text), or show images (`illustratie`).

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use serde::{Deserialize, Serialize};

use crate::xml::{WellFormed, XmlFault, resolve_reference};

/// Deepest element nesting read.
pub const MAX_DEPTH: usize = 128;
/// Most blocks (divisions, articles, parts, passages) read.
pub const MAX_BLOCKS: usize = 40_000;
/// Most text read, in bytes.
pub const MAX_TEXT_BYTES: usize = 16 * 1024 * 1024;

/// Elements whose whole content is left out, and why.
pub const LEFT_OUT: &[(&str, &str)] = &[
    (
        "meta-data",
        "the Basiswettenbestand's publication data of the element it stands in (sources, dates, numbers, jci \
         references), not the regulation's text",
    ),
    ("bwb-inputbestand", "the Basiswettenbestand's processing data"),
    ("bwb-wijzigingen", "the Basiswettenbestand's processing data"),
    ("redactionele-correcties", "the Basiswettenbestand's processing data"),
    (
        "meta",
        "a CVDR file's record (organisation, dates, legal basis), which the search's record gives as metadata",
    ),
];

/// The parts outside the articles, each a block of its own with this heading (unless the
/// part has a `kop`), when it does not stand inside an article or another part.
pub const PARTS: &[(&str, &str)] = &[
    ("aanhef", "Aanhef"),
    ("wetsluiting", "Slotformulier en ondertekening"),
    ("regeling-sluiting", "Slotformulier en ondertekening"),
    ("slotformulering", "Slotformulier"),
    ("ondertekening", "Ondertekening"),
    ("uitgifte", "Uitgifte"),
    ("bijlage", "Bijlage"),
    ("nota-toelichting", "Nota van toelichting"),
    ("toelichting", "Toelichting"),
    ("noten", "Noten"),
];

/// The kinds of article.
const ARTICLES: [&str; 2] = ["artikel", "enig-artikel"];

/// Elements whose text runs on inside a line (no space or break around them).
const INLINE: &[&str] = &[
    "nadruk",
    "extref",
    "intref",
    "sup",
    "inf",
    "cursief",
    "vet",
    "onderstreept",
    "redactie",
    "nootref",
    "afkorting",
    "span",
];

/// Elements that start a line of their own.
const LINES: &[&str] = &[
    "al",
    "lidnr",
    "li.nr",
    "lid",
    "li",
    "lijst",
    "tussenkop",
    "row",
    "table",
    "tgroup",
    "title",
    "wij",
    "considerans",
    "considerans.al",
    "afkondiging",
    "slotformulering",
    "gegeven",
    "dagtekening",
    "plaats",
    "koning",
    "functie",
    "naam",
    "structuurtekst",
    "p",
    "noot",
    "noot.al",
    "definitielijst",
    "definitie-item",
    "term",
    "definitie",
    "plaatje",
    "tekst",
    "uitgifte",
    "ondertekening",
];

/// What kind of block.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockKind {
    /// A division's heading and the text written directly in it.
    Division,
    /// An article.
    Article,
    /// A named part outside the articles ([`PARTS`]).
    Part,
    /// Text that stands after an article or part inside a division or part, or at the
    /// top (the titles).
    Passage,
}

/// Whether an article or division is in force in this version.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Standing {
    /// In force (or the document says nothing).
    #[default]
    InForce,
    /// Lapsed (`status="vervallen"`).
    Lapsed,
    /// Not yet in force (`status="nogniet"`).
    NotYet,
}

/// One block of the regulation, in document order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Block {
    /// What it is.
    pub kind: BlockKind,
    /// How deep it stands: the divisions and parts around it.
    pub depth: usize,
    /// Its heading: `Hoofdstuk 1 Algemene bepalingen`, `Artikel 2 Verbod`, `Aanhef`,
    /// `Bijlage 1 …`; empty for a passage.
    pub heading: String,
    /// An article's number, as compared by `article` (`2`, `1:3`; `#12` for the 12th
    /// article when the text gives it none).
    pub number: Option<String>,
    /// Whether it is in force.
    #[serde(default)]
    pub standing: Standing,
    /// Its text: paragraphs, list items and table rows on lines of their own.
    pub text: String,
}

impl Block {
    /// The heading and the text, as the assistant reads the block.
    pub fn rendered(&self) -> String {
        match (self.heading.is_empty(), self.text.is_empty()) {
            (true, _) => self.text.clone(),
            (false, true) => self.heading.clone(),
            (false, false) => format!("{}\n{}", self.heading, self.text),
        }
    }
}

/// A regulation as one XML file gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Regulation {
    /// The root's `bwb-id`, when it has one.
    pub id: Option<String>,
    /// The citation title (`citeertitel`).
    pub citation_title: Option<String>,
    /// The full title (`intitule`).
    pub intitule: Option<String>,
    /// The document, block by block.
    pub blocks: Vec<Block>,
}

/// One entry of a regulation's outline.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutlineEntry<'a> {
    /// The block's heading.
    pub label: &'a str,
    /// An article's number.
    pub article: Option<&'a str>,
    /// How deep it stands.
    pub depth: usize,
}

impl Regulation {
    /// The articles, in order.
    pub fn articles(&self) -> impl Iterator<Item = &Block> {
        self.blocks.iter().filter(|b| b.kind == BlockKind::Article)
    }

    /// The article numbered `number` (`2`, `1:3`; `artikel 2`, `Art. 2` are read as
    /// `2`; `#12` the twelfth unnumbered one), compared without case and spaces.
    pub fn article(&self, number: &str) -> Option<&Block> {
        let want = normalise_number(number);
        self.articles()
            .find(|a| a.number.as_deref().map(normalise_number).as_deref() == Some(want.as_str()))
    }

    /// Divisions, articles and parts in order: what the outline shows.
    pub fn outline(&self) -> impl Iterator<Item = OutlineEntry<'_>> {
        self.blocks
            .iter()
            .filter(|b| b.kind != BlockKind::Passage && !b.heading.is_empty())
            .map(|b| OutlineEntry {
                label: &b.heading,
                article: b.number.as_deref(),
                depth: b.depth,
            })
    }

    /// The whole text: the blocks in order (the titles where the document has them), a
    /// blank line between them.
    pub fn full_text(&self) -> String {
        let mut out = String::new();
        for b in &self.blocks {
            let r = b.rendered();
            if r.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push_str("\n\n");
            }
            out.push_str(&r);
        }
        out
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

/// Which document a reader expects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Root {
    /// A toestand of the Basiswettenbestand.
    Toestand,
    /// A local regulation of the CVDR.
    Cvdr,
}

impl Root {
    fn name(self) -> &'static str {
        match self {
            Root::Toestand => "toestand",
            Root::Cvdr => "cvdr",
        }
    }
}

/// Why a regulation could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RegulationError {
    /// Not well-formed XML.
    #[error("not well-formed XML at byte {position}: {detail}")]
    Xml {
        /// Where reading stopped.
        position: u64,
        /// What the reader said.
        detail: String,
    },
    /// Not a complete document (cut off, declarations, an undeclared entity).
    #[error("{0}")]
    Incomplete(XmlFault),
    /// Well-formed, but not a regulation of the kind asked, or one without any text.
    #[error("not a regulation's XML ({0})")]
    NotRegulation(String),
    /// Bigger or deeper than BesluitBron reads.
    #[error("the regulation exceeds what BesluitBron reads ({0})")]
    TooBig(&'static str),
}

/// What an open element is to the reader.
#[derive(Debug)]
enum Role {
    /// Left out with everything in it.
    Skip,
    /// The root, or an element without a role of its own.
    Plain { breaks: Break },
    /// A title field (`citeertitel`, `intitule`).
    Title { citation: bool },
    /// An element with a `kop` that is not an article: a division (known once its kop
    /// closes; until then any element may become one).
    Container,
    /// An article.
    Article,
    /// A named part.
    Part,
    /// A `kop`.
    Kop,
    /// A part of a `kop`.
    KopPart(KopField),
    /// A table cell.
    Cell,
    /// A table row.
    Row,
}

/// How an element's edges separate its text from what is around it (an element of no
/// known kind is a [`Role::Container`]: a space).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Break {
    /// Nothing: inline markup.
    None,
    /// A new line.
    Line,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum KopField {
    Label,
    Nr,
    Titel,
}

/// An open element.
#[derive(Debug)]
struct Frame {
    name: String,
    role: Role,
    /// Articles, parts and containers: the block it fills now (`None`: closed by a
    /// child block; further text opens a passage).
    block: Option<usize>,
    /// Articles, parts and divisions: their own block.
    own: Option<usize>,
    /// Articles, parts and containers: its kop's fields as read so far.
    kop: [String; 3],
    /// A container: whether its kop made it a division.
    division: bool,
    /// Articles and divisions: its `status` attribute read.
    standing: Standing,
    /// A row: whether a cell was read.
    cells: usize,
    /// An article: its `label` attribute (`Artikel 10`), for one whose kop has no
    /// number.
    label: Option<String>,
    /// A cell with a span note: the block and its text's length before and after the
    /// note (a cell left empty drops its note).
    note: Option<(usize, usize, usize)>,
}

impl Frame {
    fn new(name: String, role: Role) -> Frame {
        Frame {
            name,
            role,
            block: None,
            own: None,
            kop: Default::default(),
            division: false,
            standing: Standing::InForce,
            cells: 0,
            label: None,
            note: None,
        }
    }

    fn owns_blocks(&self) -> bool {
        matches!(self.role, Role::Article | Role::Part | Role::Title { .. })
            || matches!(self.role, Role::Container if self.division)
    }
}

/// The reader's state.
struct Reading {
    out: Regulation,
    stack: Vec<Frame>,
    text_bytes: usize,
    /// Articles read, for labelling one without a number.
    articles: usize,
    /// A line break is due before the next text of the current block.
    line_due: bool,
    /// The last text ended a list or paragraph number (`li.nr`, `lidnr`): its text
    /// follows on the same line.
    numbered: bool,
    /// The column names of each table group open (`colspec colname`), innermost last.
    columns: Vec<Vec<String>>,
}

/// Reads a regulation whose root is `root`.
pub fn read_regulation(bytes: &[u8], root: Root) -> Result<Regulation, RegulationError> {
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    let mut checks = WellFormed::new(MAX_DEPTH);
    let mut r = Reading {
        out: Regulation::default(),
        stack: Vec::new(),
        text_bytes: 0,
        articles: 0,
        line_due: false,
        numbered: false,
        columns: Vec::new(),
    };
    let mut buf = Vec::new();
    loop {
        let position = reader.buffer_position();
        let event = reader.read_event_into(&mut buf).map_err(|e| RegulationError::Xml {
            position,
            detail: e.to_string(),
        })?;
        checks.see(&event).map_err(|fault| match fault {
            XmlFault::TooDeep(_) => RegulationError::TooBig("elements nested too deeply"),
            XmlFault::NoRoot => RegulationError::NotRegulation("no root element".to_owned()),
            other => RegulationError::Incomplete(other),
        })?;
        match &event {
            Event::Start(start) => r.open(start, root)?,
            Event::Empty(start) => {
                r.open(start, root)?;
                r.close()?;
            }
            Event::End(_) => r.close()?,
            Event::Text(t) => r.text(&t.xml10_content())?,
            Event::CData(c) => r.text(&c.xml10_content())?,
            Event::GeneralRef(g) => r.text(&resolve_reference(g).map_err(RegulationError::Incomplete)?)?,
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => {}
        }
        buf.clear();
    }
    let mut out = r.out;
    let fold = |t: &mut Option<String>| {
        *t = t
            .take()
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|v| !v.is_empty());
    };
    fold(&mut out.citation_title);
    fold(&mut out.intitule);
    for b in &mut out.blocks {
        b.text = tidy(&b.text);
        b.heading = b.heading.split_whitespace().collect::<Vec<_>>().join(" ");
    }
    // A passage, or a part without a kop of its own, with nothing in it (an empty aanhef,
    // an empty title) says nothing.
    out.blocks.retain(|b| match b.kind {
        BlockKind::Passage => !(b.text.is_empty() || b.text == "Citeertitel:"),
        BlockKind::Part => !b.text.is_empty() || !PARTS.iter().any(|(_, heading)| *heading == b.heading),
        BlockKind::Division | BlockKind::Article => true,
    });
    if out.blocks.iter().all(|b| b.text.is_empty()) && out.citation_title.is_none() && out.intitule.is_none() {
        return Err(RegulationError::NotRegulation(format!(
            "a {} document without any text",
            root.name()
        )));
    }
    Ok(out)
}

fn attribute(start: &BytesStart<'_>, name: &str) -> Option<String> {
    start
        .try_get_attribute(name)
        .ok()
        .flatten()
        .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok())
        .map(|v| v.trim().to_owned())
        .filter(|v| !v.is_empty())
}

fn standing(start: &BytesStart<'_>) -> Standing {
    match attribute(start, "status").as_deref() {
        Some("vervallen") => Standing::Lapsed,
        Some("nogniet") => Standing::NotYet,
        _ => Standing::InForce,
    }
}

impl Reading {
    fn skipping(&self) -> bool {
        self.stack.iter().any(|f| matches!(f.role, Role::Skip))
    }

    fn inside(&self, role: fn(&Role) -> bool) -> bool {
        self.stack.iter().any(|f| role(&f.role))
    }

    /// Depth of a block opened now: the divisions and parts around it.
    fn depth(&self) -> usize {
        self.stack
            .iter()
            .filter(|f| matches!(f.role, Role::Part) || matches!(f.role, Role::Container if f.division))
            .count()
    }

    fn push_block(&mut self, kind: BlockKind, heading: String, depth: usize) -> Result<usize, RegulationError> {
        if self.out.blocks.len() >= MAX_BLOCKS {
            return Err(RegulationError::TooBig("too many articles and parts"));
        }
        // A new block closes the blocks its ancestors were filling.
        for f in &mut self.stack {
            f.block = None;
        }
        self.out.blocks.push(Block {
            kind,
            depth,
            heading,
            number: None,
            standing: Standing::InForce,
            text: String::new(),
        });
        self.line_due = false;
        self.numbered = false;
        Ok(self.out.blocks.len() - 1)
    }

    fn open(&mut self, start: &BytesStart<'_>, root: Root) -> Result<(), RegulationError> {
        let name = start.local_name().into_inner().to_owned();
        if self.stack.is_empty() {
            if name != root.name() {
                let shown: String = name.chars().take(40).collect();
                return Err(RegulationError::NotRegulation(format!("the root is {shown}")));
            }
            self.out.id = attribute(start, "bwb-id");
            self.stack.push(Frame::new(name, Role::Plain { breaks: Break::Line }));
            return Ok(());
        }
        if self.skipping() {
            self.stack.push(Frame::new(name, Role::Skip));
            return Ok(());
        }
        let in_article_or_part = self.inside(|r| matches!(r, Role::Article | Role::Part));
        let role = if LEFT_OUT.iter().any(|(n, _)| *n == name) {
            Role::Skip
        } else if name == "kop" {
            Role::Kop
        } else if matches!(self.stack.last().map(|f| &f.role), Some(Role::Kop)) {
            match name.as_str() {
                "label" => Role::KopPart(KopField::Label),
                "nr" => Role::KopPart(KopField::Nr),
                _ => Role::KopPart(KopField::Titel),
            }
        } else if (name == "citeertitel" || name == "intitule") && !in_article_or_part {
            Role::Title {
                citation: name == "citeertitel",
            }
        } else if ARTICLES.contains(&name.as_str()) && !self.inside(|r| matches!(r, Role::Article)) {
            Role::Article
        } else if PARTS.iter().any(|(n, _)| *n == name) && !in_article_or_part {
            Role::Part
        } else if name == "entry" {
            Role::Cell
        } else if name == "row" {
            Role::Row
        } else if INLINE.contains(&name.as_str()) {
            Role::Plain { breaks: Break::None }
        } else if LINES.contains(&name.as_str()) {
            Role::Plain { breaks: Break::Line }
        } else {
            Role::Container
        };
        let mut frame = Frame::new(name, role);
        match frame.role {
            Role::Article => {
                let depth = self.depth();
                let index = self.push_block(BlockKind::Article, String::new(), depth)?;
                self.out.blocks[index].standing = standing(start);
                frame.block = Some(index);
                frame.own = Some(index);
                frame.standing = standing(start);
                frame.label = attribute(start, "label");
            }
            Role::Part => {
                let heading = PARTS
                    .iter()
                    .find(|(n, _)| *n == frame.name)
                    .map(|(_, h)| (*h).to_owned())
                    .unwrap_or_default();
                let depth = self.depth();
                let index = self.push_block(BlockKind::Part, heading, depth)?;
                frame.block = Some(index);
                frame.own = Some(index);
            }
            Role::Container if frame.name == "colspec" => {
                if let (Some(columns), Some(name)) = (self.columns.last_mut(), attribute(start, "colname")) {
                    columns.push(name);
                }
            }
            Role::Container if frame.name == "verdrag" && attribute(start, "xml:lang").is_some_and(|l| l != "nl") => {
                // A treaty's text in another language (the French or German authentic
                // text beside the Dutch one): a division of its own, so its articles are
                // never taken for the Dutch ones (`article` finds the first).
                let lang = attribute(start, "xml:lang").unwrap_or_default();
                let authentic = attribute(start, "tekst").is_some_and(|t| t == "authentiek");
                let heading = format!(
                    "Verdragtekst in {}{}",
                    language_name(&lang),
                    if authentic { " (authentiek)" } else { "" }
                );
                let depth = self.depth();
                let index = self.push_block(BlockKind::Division, heading, depth)?;
                frame.division = true;
                frame.block = Some(index);
                frame.own = Some(index);
            }
            Role::Container => {
                frame.standing = standing(start);
                self.space()?;
            }
            Role::Title { citation } => {
                // Where the document has it, as a passage of its own.
                let depth = self.depth();
                let index = self.push_block(BlockKind::Passage, String::new(), depth)?;
                if citation {
                    self.out.blocks[index].text.push_str("Citeertitel: ");
                }
                frame.block = Some(index);
                frame.own = Some(index);
            }
            Role::Row => {
                // A row starts its line now: a break due inside it is a cell's.
                self.line_due = false;
                self.numbered = false;
                if let Some(block) = self.current_block()
                    && !self.out.blocks[block].text.is_empty()
                    && !self.stack.iter().any(|f| matches!(f.role, Role::Cell))
                {
                    self.out.blocks[block].text.push('\n');
                }
            }
            Role::Cell => {
                if let Some(row) = self.stack.iter_mut().rev().find(|f| matches!(f.role, Role::Row)) {
                    row.cells += 1;
                    if row.cells > 1 {
                        // The next cell of the row: on the same line, whatever the last
                        // cell's paragraphs asked for.
                        self.line_due = false;
                        self.text(" | ")?;
                    }
                }
                let note = self.span_note(start);
                if !note.is_empty() {
                    // Said before the cell's text, so it stays with its cell.
                    let before = self.current_block().map(|b| self.out.blocks[b].text.len());
                    self.text(&format!("({note}) "))?;
                    if let Some(block) = self.current_block() {
                        let after = self.out.blocks[block].text.len();
                        frame.note = Some((block, before.unwrap_or(0).min(after), after));
                    }
                }
            }
            Role::Plain { breaks: Break::Line } => {
                self.line();
                if frame.name == "tgroup" {
                    self.columns.push(Vec::new());
                }
                // A list item numbered by its `nr` attribute (as local regulations write
                // their paragraphs: `<li nr="1.">`) starts its line with the number.
                if frame.name == "li"
                    && let Some(nr) = attribute(start, "nr")
                {
                    self.text(&format!("{nr} "))?;
                    self.numbered = true;
                }
            }
            _ => {}
        }
        self.stack.push(frame);
        Ok(())
    }

    fn close(&mut self) -> Result<(), RegulationError> {
        let Some(frame) = self.stack.pop() else {
            return Ok(());
        };
        match frame.role {
            Role::Kop => self.kop_closed(),
            Role::KopPart(_) | Role::Skip => {}
            Role::Title { .. } => self.after_block(),
            Role::Article => {
                let Some(index) = frame.own else {
                    return Ok(());
                };
                // An article without a kop is labelled now.
                if self.out.blocks[index].number.is_none() {
                    self.label_article(index, &frame.kop, frame.label.as_deref());
                }
                self.after_block();
            }
            Role::Part | Role::Container if frame.owns_blocks() => self.after_block(),
            Role::Plain { breaks: Break::Line } => {
                if frame.name == "tgroup" {
                    self.columns.pop();
                }
                if matches!(frame.name.as_str(), "li.nr" | "lidnr") {
                    self.append(" ")?;
                    self.numbered = true;
                } else {
                    self.line();
                }
            }
            Role::Cell => {
                if let Some((block, before, after)) = frame.note
                    && self.out.blocks[block].text.len() == after
                {
                    self.out.blocks[block].text.truncate(before);
                }
            }
            Role::Plain { breaks: Break::None } => {}
            Role::Container if frame.name == "colspec" => {}
            Role::Container | Role::Part => self.space()?,
            Role::Row => self.line(),
        }
        Ok(())
    }

    /// What a cell spans beyond itself: `spans 3 columns`, `spans 2 rows`; empty when
    /// it spans nothing.
    fn span_note(&self, cell: &BytesStart<'_>) -> String {
        let mut note = Vec::new();
        if let (Some(from), Some(to)) = (attribute(cell, "namest"), attribute(cell, "nameend")) {
            let columns = self.columns.last();
            let at = |name: &str| columns.and_then(|c| c.iter().position(|n| n == name));
            match (at(&from), at(&to)) {
                (Some(a), Some(b)) if b > a => note.push(format!("spans {} columns", b - a + 1)),
                (Some(_), Some(_)) => {}
                _ if from != to => note.push(format!("spans columns {from} to {to}")),
                _ => {}
            }
        }
        if let Some(rows) = attribute(cell, "morerows").and_then(|n| n.parse::<u32>().ok())
            && rows > 0
        {
            note.push(format!("spans {} rows", rows + 1));
        }
        note.join(", ")
    }

    /// After a block's element ends, the next text starts on a new line.
    fn after_block(&mut self) {
        self.line_due = true;
        self.numbered = false;
    }

    /// A kop closed: its owner (the element it stands in) gets its heading.
    fn kop_closed(&mut self) {
        let Some(owner) = self.stack.last_mut() else { return };
        let kop = std::mem::take(&mut owner.kop);
        match owner.role {
            Role::Article => {
                if let Some(index) = owner.own {
                    let label = owner.label.clone();
                    self.label_article(index, &kop, label.as_deref());
                }
            }
            Role::Part => {
                let heading = kop_heading(&kop);
                if let Some(index) = owner.own
                    && !heading.is_empty()
                {
                    let part = &mut self.out.blocks[index];
                    // `Bijlage` and its own label: the kop says it in full.
                    part.heading = heading;
                }
            }
            Role::Container | Role::Plain { .. } => {
                let heading = kop_heading(&kop);
                let standing = owner.standing;
                owner.role = Role::Container;
                owner.division = true;
                // Its depth: the divisions and parts around it, itself not counted.
                let depth = self
                    .stack
                    .iter()
                    .rev()
                    .skip(1)
                    .filter(|f| matches!(f.role, Role::Part) || matches!(f.role, Role::Container if f.division))
                    .count();
                let heading = with_standing(heading, standing);
                if let Ok(index) = self.push_block(BlockKind::Division, heading, depth)
                    && let Some(owner) = self.stack.last_mut()
                {
                    owner.block = Some(index);
                    owner.own = Some(index);
                }
            }
            _ => {}
        }
    }

    /// Labels an article from its kop: `Artikel 2 Titel`. Without a number in the kop,
    /// the number is the one its label writes (`<label>Artikel 3a</label>`, as lapsed
    /// articles have it), else its `label` attribute's, else its place (`#12`).
    fn label_article(&mut self, index: usize, kop: &[String; 3], label_attribute: Option<&str>) {
        self.articles += 1;
        let [label, nr, titel] = kop.clone().map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "));
        let after_word = |text: &str| {
            text.split_once(' ')
                .map(|(_, rest)| rest.trim().to_owned())
                .filter(|rest| !rest.is_empty())
        };
        let (number, shown) = if !nr.is_empty() {
            let label = if label.is_empty() { "Artikel".to_owned() } else { label };
            (nr.clone(), format!("{label} {nr}"))
        } else if let Some(number) = after_word(&label) {
            (number, label)
        } else if let Some(number) = label_attribute.and_then(after_word) {
            let label = if label.is_empty() { "Artikel".to_owned() } else { label };
            (number.clone(), format!("{label} {number}"))
        } else {
            let label = if label.is_empty() { "Artikel".to_owned() } else { label };
            let place = format!("#{}", self.articles);
            (place.clone(), format!("{label} {place} (without a number in the text)"))
        };
        let block = &mut self.out.blocks[index];
        let heading = if titel.is_empty() {
            shown
        } else {
            format!("{shown} {titel}")
        };
        block.heading = with_standing(heading, block.standing);
        block.number = Some(number);
    }

    fn line(&mut self) {
        if !std::mem::take(&mut self.numbered) {
            self.line_due = true;
        }
    }

    fn space(&mut self) -> Result<(), RegulationError> {
        if !self.numbered {
            self.append(" ")?;
        }
        Ok(())
    }

    fn text(&mut self, s: &str) -> Result<(), RegulationError> {
        if self.skipping() {
            return Ok(());
        }
        self.text_bytes += s.len();
        if self.text_bytes > MAX_TEXT_BYTES {
            return Err(RegulationError::TooBig("too much text"));
        }
        // Inside a kop (whatever markup is inside its parts): to the kop's owner, the
        // element the kop stands in.
        if let Some(at) = self.stack.iter().rposition(|f| matches!(f.role, Role::Kop)) {
            let field = match self.stack.get(at + 1).map(|f| &f.role) {
                Some(Role::KopPart(field)) => *field,
                _ => KopField::Titel,
            };
            if let Some(owner) = at.checked_sub(1).and_then(|o| self.stack.get_mut(o)) {
                owner.kop[field as usize].push_str(s);
            }
            return Ok(());
        }
        if let Some(citation) = self.stack.iter().rev().find_map(|f| match f.role {
            Role::Title { citation } => Some(citation),
            _ => None,
        }) {
            let field = if citation {
                &mut self.out.citation_title
            } else {
                &mut self.out.intitule
            };
            field.get_or_insert_with(String::new).push_str(s);
        }
        if s.trim().is_empty() {
            // Layout between elements: a space at most.
            if !s.is_empty() && !self.numbered {
                self.append(" ")?;
            }
            return Ok(());
        }
        if std::mem::take(&mut self.line_due) {
            self.append("\n")?;
        }
        self.numbered = false;
        self.append(&s.replace(['\n', '\r', '\t'], " "))
    }

    /// The block being filled now, if one is.
    fn current_block(&self) -> Option<usize> {
        match self.stack.iter().rev().find(|f| f.owns_blocks()) {
            Some(owner) => owner.block,
            None => self.stack.first().and_then(|root| root.block),
        }
    }

    /// Appends to the block being filled, opening a passage where none is.
    fn append(&mut self, s: &str) -> Result<(), RegulationError> {
        let index = match self.current_block() {
            Some(index) => index,
            None => {
                if s.trim().is_empty() {
                    return Ok(());
                }
                let depth = self.depth();
                let index = self.push_block(BlockKind::Passage, String::new(), depth)?;
                match self.stack.iter_mut().rev().find(|f| f.owns_blocks()) {
                    Some(owner) => owner.block = Some(index),
                    None => {
                        if let Some(root) = self.stack.first_mut() {
                            root.block = Some(index);
                        }
                    }
                }
                index
            }
        };
        let in_cell = self.stack.iter().any(|f| matches!(f.role, Role::Cell));
        let text = &mut self.out.blocks[index].text;
        if in_cell && s == "\n" {
            text.push(' ');
        } else {
            text.push_str(s);
        }
        Ok(())
    }
}

/// A language as a treaty's heading names it (`fr`: het Frans); another code as itself.
fn language_name(code: &str) -> String {
    match code {
        "fr" => "het Frans".to_owned(),
        "en" => "het Engels".to_owned(),
        "de" => "het Duits".to_owned(),
        "es" => "het Spaans".to_owned(),
        "it" => "het Italiaans".to_owned(),
        "pt" => "het Portugees".to_owned(),
        other => format!("de taal `{other}`"),
    }
}

/// A kop's heading: label, number and title.
fn kop_heading(kop: &[String; 3]) -> String {
    kop.iter()
        .map(|p| p.split_whitespace().collect::<Vec<_>>().join(" "))
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// A heading marked when what it heads is not in force.
fn with_standing(heading: String, standing: Standing) -> String {
    match standing {
        Standing::InForce => heading,
        Standing::Lapsed => format!("{heading} (vervallen)"),
        Standing::NotYet => format!("{heading} (not yet in force)"),
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

    fn read(xml: &str) -> Regulation {
        read_regulation(xml.as_bytes(), Root::Toestand).unwrap()
    }

    #[test]
    fn metadata_never_reaches_a_title_or_a_text() {
        let r = read(
            r#"<toestand bwb-id="BWBR0018451"><bwb-inputbestand>BWBR0018451_2024</bwb-inputbestand><wetgeving>
            <citeertitel>Wet op de zorgtoeslag<meta-data><brondata><publicatienr>369</publicatienr>
            <uitgiftedatum>26-07-2005</uitgiftedatum></brondata></meta-data></citeertitel><wet-besluit><wettekst>
            <artikel><kop><label>Artikel</label><nr>2</nr></kop><al>… is overgelegd.</al><meta-data><jcis>
            <jci verwijzing="x">2011</jci></jcis></meta-data></artikel></wettekst></wet-besluit></wetgeving></toestand>"#,
        );
        assert_eq!(r.citation_title.as_deref(), Some("Wet op de zorgtoeslag"));
        assert_eq!(r.article("2").unwrap().text, "… is overgelegd.");
        assert!(!r.full_text().contains("369") && !r.full_text().contains("BWBR0018451_2024"));
    }

    #[test]
    fn articles_are_labelled_by_number_label_or_place_and_their_standing_shown() {
        let r = read(
            r#"<toestand><wetgeving><wet-besluit><wettekst>
            <artikel status="vervallen"><kop><label>Artikel 3a</label></kop><al><redactie>Vervallen</redactie></al></artikel>
            <artikel label="Artikel 10"><kop><label>Artikel</label></kop><al>Tien.</al></artikel>
            <artikel><kop><label/></kop><al>Zonder.</al></artikel>
            <artikel status="nogniet"><kop><label>Artikel</label><nr>8a</nr><titel>Later</titel></kop><al>Straks.</al></artikel>
            </wettekst></wet-besluit></wetgeving></toestand>"#,
        );
        let headings: Vec<&str> = r.articles().map(|a| a.heading.as_str()).collect();
        assert_eq!(
            headings,
            [
                "Artikel 3a (vervallen)",
                "Artikel 10",
                "Artikel #3 (without a number in the text)",
                "Artikel 8a Later (not yet in force)"
            ]
        );
        assert_eq!(r.article("3a").unwrap().standing, Standing::Lapsed);
        assert_eq!(r.article("#3").unwrap().text, "Zonder.");
    }

    #[test]
    fn chapters_without_articles_parts_and_tables_are_read_in_order() {
        let xml = r#"<cvdr xmlns="http://standaarden.overheid.nl/cvdr/terms/"><meta><owmskern><title>Record</title>
            </owmskern></meta><body><intitule>Beleidsregel parkeren</intitule><regeling><aanhef><preambule>
            <al>Gelet op artikel 160 van de Gemeentewet;</al></preambule></aanhef><regeling-tekst>
            <hoofdstuk><kop><nr>1.</nr><titel>Doel</titel></kop><structuurtekst><al>Eerste.</al></structuurtekst></hoofdstuk>
            </regeling-tekst><bijlage><kop><label>Bijlage</label><nr>1</nr></kop><table><tgroup cols="3">
            <colspec colname="c1"/><colspec colname="c2"/><colspec colname="c3"/><thead><row><entry>Zone</entry>
            <entry>Tarief</entry><entry>Tijd</entry></row></thead><tbody><row><entry namest="c1" nameend="c2">A</entry>
            <entry morerows="1"><al>€ 2</al><al>per uur</al></entry></row></tbody></tgroup></table></bijlage></regeling>
            </body></cvdr>"#;
        let r = read_regulation(xml.as_bytes(), Root::Cvdr).unwrap();
        assert_eq!(r.articles().count(), 0);
        assert_eq!(
            r.full_text(),
            "Beleidsregel parkeren\n\nAanhef\nGelet op artikel 160 van de Gemeentewet;\n\n1. Doel\nEerste.\n\n\
             Bijlage 1\nZone | Tarief | Tijd\n(spans 2 columns) A | (spans 2 rows) € 2 per uur"
        );
        let outline: Vec<&str> = r.outline().map(|e| e.label).collect();
        assert_eq!(outline, ["Aanhef", "1. Doel", "Bijlage 1"]);
        assert!(!r.full_text().contains("Record"));
    }

    #[test]
    fn other_and_incomplete_documents_are_refused() {
        for bad in [
            "<html/>",
            "",
            "<toestand><a></toestand>",
            "<cvdr><body/></cvdr>",
            "<toestand><wetgeving><wettekst><artikel><al>Een.</al></artikel>",
            "<!DOCTYPE t [<!ENTITY e \"x\">]><toestand><al>&e;</al></toestand>",
            "<toestand><al>&nbsp;</al></toestand>",
            "<toestand><meta-data>only</meta-data></toestand>",
        ] {
            assert!(read_regulation(bad.as_bytes(), Root::Toestand).is_err(), "{bad}");
        }
        let deep = format!("<toestand>{}", "<a>".repeat(MAX_DEPTH + 1));
        assert!(read_regulation(deep.as_bytes(), Root::Toestand).is_err());
    }
}
