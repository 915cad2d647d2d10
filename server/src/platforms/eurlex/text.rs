//! An EU act's text as CELLAR serves it, read into the regulation family's model
//! ([`Regulation`]: blocks of divisions, articles and parts in document order), so the
//! family's outline, article paging and rendering read it as they read a Dutch law
//! (PLATFORMS.md §12b.6):
//! - Formex 4 ([`read_formex`]): an `ACT` (`TITLE`, `PREAMBLE`, `ENACTING.TERMS` with
//!   `DIVISION`s and `ARTICLE`s — `TI.ART`, `STI.ART`, `PARAG`/`ALINEA`, `LIST`/`ITEM`/`NP`
//!   —, `FINAL` with `SIGNATURE`), an `ANNEX`, in the older formex-04 and the newer
//!   schemas alike; a `DOC` manifest holds no text and is read for its data only
//!   ([`read_manifest`]); a zip of those (an `fmx4` item) is read file by file in the
//!   manifest's order ([`read_formex_zip`]);
//! - XHTML with ELI classes ([`read_xhtml`]): `div#tit_1` (the title), `#pbl_1` (the
//!   preamble: citations, recitals, enacting formula), `#cpt_…` chapters, articles
//!   `div.eli-subdivision#art_N` (`p.oj-ti-art`, `div.eli-title`, paragraphs),
//!   `#fnp_1` (the final part), annexes `#anx_N`; older acts without the `eli-*`
//!   containers (`p.ti-art` headings) are read as passages with their headings.
//!
//! Footnotes are read where they stand (Formex `NOTE` inline, in brackets; XHTML's
//! `p.oj-note` at the end). The `BIB.INSTANCE` of an act (its bibliographic data) and an
//! XHTML `head` are left out: no word of theirs reaches the text.
//!
//! Invariants: any input gives a result or an error, never a panic; only a complete,
//! well-formed document is read ([`crate::xml`]); more than [`MAX_NODES`] nodes, nesting
//! deeper than [`MAX_DEPTH`] or more than [`MAX_TEXT_BYTES`] of text is an error; a
//! document with no text is an error, never an empty act.
//!
//! What this module does not do: fetch anything, or resolve references between acts.

use std::io::Read as _;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::super::koop::regulation::{Block, BlockKind, Regulation, Standing};
use crate::xml::{WellFormed, XmlFault, resolve_reference};

/// Deepest element nesting read.
pub const MAX_DEPTH: usize = 256;
/// Most elements and text nodes read.
pub const MAX_NODES: usize = 400_000;
/// Most text read, in bytes.
pub const MAX_TEXT_BYTES: usize = 16 * 1024 * 1024;
/// Most files read from one Formex zip, and most bytes unpacked from it.
pub const MAX_ZIP_FILES: usize = 64;
/// Most bytes unpacked from one Formex zip.
pub const MAX_ZIP_BYTES: u64 = 64 * 1024 * 1024;

/// Why an act's text could not be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ActError {
    /// Not well-formed XML.
    #[error("not well-formed XML at byte {position}: {detail}")]
    Xml {
        /// Where reading stopped.
        position: u64,
        /// What the reader said.
        detail: String,
    },
    /// Not a complete document.
    #[error("{0}")]
    Incomplete(XmlFault),
    /// Well-formed, but not an act's text.
    #[error("not an EU act's text ({0})")]
    NotAct(String),
    /// Bigger or deeper than BesluitBron reads.
    #[error("the act exceeds what BesluitBron reads ({0})")]
    TooBig(&'static str),
}

/// An element of the document, as the readers walk it.
#[derive(Debug, Default)]
struct Node {
    name: String,
    id: Option<String>,
    class: Option<String>,
    identifier: Option<String>,
    children: Vec<Child>,
}

#[derive(Debug)]
enum Child {
    Element(Node),
    Text(String),
}

impl Node {
    fn has_class(&self, class: &str) -> bool {
        self.class
            .as_deref()
            .is_some_and(|c| c.split_whitespace().any(|x| x == class))
    }

    fn elements(&self) -> impl Iterator<Item = &Node> {
        self.children.iter().filter_map(|c| match c {
            Child::Element(n) => Some(n),
            Child::Text(_) => None,
        })
    }

    /// All its text, whitespace folded.
    fn text(&self) -> String {
        let mut out = String::new();
        self.collect(&mut out);
        fold(&out)
    }

    fn collect(&self, out: &mut String) {
        for c in &self.children {
            match c {
                Child::Text(t) => out.push_str(t),
                Child::Element(n) => {
                    out.push(' ');
                    n.collect(out);
                }
            }
        }
    }
}

/// Whitespace folded to single spaces, trimmed.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
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

/// The document's root element, read whole within the bounds.
fn parse(bytes: &[u8]) -> Result<Node, ActError> {
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    let mut checks = WellFormed::new(MAX_DEPTH);
    let mut stack: Vec<Node> = vec![Node::default()];
    let (mut nodes, mut text_bytes) = (0usize, 0usize);
    let mut buf = Vec::new();
    loop {
        let position = reader.buffer_position();
        let event = reader.read_event_into(&mut buf).map_err(|e| ActError::Xml {
            position,
            detail: e.to_string(),
        })?;
        checks.see(&event).map_err(|fault| match fault {
            XmlFault::TooDeep(_) => ActError::TooBig("elements nested too deeply"),
            XmlFault::NoRoot => ActError::NotAct("no root element".to_owned()),
            other => ActError::Incomplete(other),
        })?;
        nodes += 1;
        if nodes > MAX_NODES {
            return Err(ActError::TooBig("too many elements"));
        }
        let text = match &event {
            Event::Start(s) | Event::Empty(s) => {
                let name = s.local_name().into_inner().to_owned();
                let node = Node {
                    name,
                    id: attribute(s, "id"),
                    class: attribute(s, "class"),
                    identifier: attribute(s, "IDENTIFIER"),
                    children: Vec::new(),
                };
                if matches!(event, Event::Start(_)) {
                    stack.push(node);
                } else if let Some(parent) = stack.last_mut() {
                    parent.children.push(Child::Element(node));
                }
                None
            }
            Event::End(_) => {
                if stack.len() > 1
                    && let Some(node) = stack.pop()
                    && let Some(parent) = stack.last_mut()
                {
                    parent.children.push(Child::Element(node));
                }
                None
            }
            Event::Text(t) => Some(t.xml10_content().into_owned()),
            Event::CData(c) => Some(c.xml10_content().into_owned()),
            Event::GeneralRef(g) => Some(resolve_reference(g).map_err(ActError::Incomplete)?),
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => None,
        };
        if let Some(text) = text {
            text_bytes += text.len();
            if text_bytes > MAX_TEXT_BYTES {
                return Err(ActError::TooBig("too much text"));
            }
            if let Some(node) = stack.last_mut() {
                node.children.push(Child::Text(text));
            }
        }
        buf.clear();
    }
    let mut top = stack.pop().unwrap_or_default();
    top.children
        .drain(..)
        .find_map(|c| match c {
            Child::Element(n) => Some(n),
            Child::Text(_) => None,
        })
        .ok_or_else(|| ActError::NotAct("no root element".to_owned()))
}

/// What an element is to a format's reader.
enum Role {
    /// Left out with everything in it.
    Skip,
    /// Opens a block of this kind, whose heading its heading children give (they are
    /// not read again as text); an article's number.
    Block(BlockKind, Option<String>),
    /// Its text stands on a line of its own.
    Line,
    /// Its text runs on in the line (`prefix` and `suffix` around it).
    Inline(&'static str, &'static str),
    /// A paragraph's or point's number (`1.`, `(a)`): what follows stays on its line.
    Number,
    /// A footnote read where it stands, in brackets, on the line of its text.
    Note,
}

/// A format: what each element is, and which children give a block's heading.
trait Format {
    fn role(&self, node: &Node) -> Role;
    fn is_heading(&self, node: &Node, block: &Node) -> bool;
    /// The heading of a block without heading children (a part: `Preamble`).
    fn part_heading(&self, _node: &Node) -> Option<&'static str> {
        None
    }
}

/// The blocks being written.
struct Builder {
    blocks: Vec<Block>,
    depth: usize,
    current: Option<usize>,
    line_due: bool,
    /// A number was written: the next text follows it on its line.
    numbered: bool,
    /// Notes open around the text now (their lines run on).
    in_note: usize,
}

impl Builder {
    fn text(&mut self, text: &str) {
        let folded = fold(text);
        if folded.is_empty() {
            // Whitespace between words of two inline elements still separates them.
            if !text.is_empty()
                && let Some(b) = self.current.and_then(|i| self.blocks.get_mut(i))
                && !b.text.ends_with([' ', '\n'])
                && !b.text.is_empty()
            {
                b.text.push(' ');
            }
            return;
        }
        let index = match self.current {
            Some(i) => i,
            None => {
                self.blocks.push(Block {
                    kind: BlockKind::Passage,
                    depth: self.depth,
                    heading: String::new(),
                    number: None,
                    standing: Standing::InForce,
                    text: String::new(),
                });
                self.line_due = false;
                let i = self.blocks.len() - 1;
                self.current = Some(i);
                i
            }
        };
        let block = &mut self.blocks[index];
        if self.line_due && !block.text.is_empty() {
            block.text.push('\n');
        } else if text.starts_with(char::is_whitespace) && !block.text.is_empty() && !block.text.ends_with('\n') {
            block.text.push(' ');
        }
        self.line_due = false;
        self.numbered = false;
        block.text.push_str(&folded);
        if text.ends_with(char::is_whitespace) {
            block.text.push(' ');
        }
    }

    fn walk(&mut self, node: &Node, format: &dyn Format) {
        match format.role(node) {
            Role::Skip => {}
            Role::Block(kind, number) => {
                let heading = match format.part_heading(node) {
                    Some(h) if kind == BlockKind::Part => h.to_owned(),
                    _ => fold(
                        &node
                            .elements()
                            .filter(|c| format.is_heading(c, node))
                            .map(Node::text)
                            .collect::<Vec<_>>()
                            .join(" "),
                    ),
                };
                self.blocks.push(Block {
                    kind,
                    depth: self.depth,
                    heading,
                    number,
                    standing: Standing::InForce,
                    text: String::new(),
                });
                let outer = self.depth;
                self.current = Some(self.blocks.len() - 1);
                self.line_due = false;
                self.numbered = false;
                if matches!(kind, BlockKind::Division | BlockKind::Part) {
                    self.depth += 1;
                }
                for child in &node.children {
                    match child {
                        Child::Element(c) if format.is_heading(c, node) && format.part_heading(node).is_none() => {}
                        Child::Element(c) => self.walk(c, format),
                        Child::Text(t) => self.text(t),
                    }
                }
                self.depth = outer;
                // Text after a block inside its parent opens a passage.
                self.current = None;
                self.line_due = true;
            }
            Role::Line if self.in_note > 0 => self.children(node, format),
            Role::Note => {
                self.in_note += 1;
                self.text(" (");
                self.children(node, format);
                self.text(")");
                self.in_note -= 1;
            }
            Role::Line => {
                if !self.numbered {
                    self.line_due = true;
                }
                self.children(node, format);
                self.line_due = true;
            }
            Role::Number => {
                self.line_due = true;
                self.children(node, format);
                self.text(" ");
                self.numbered = true;
            }
            Role::Inline(prefix, suffix) => {
                if !prefix.is_empty() {
                    self.text(prefix);
                }
                self.children(node, format);
                if !suffix.is_empty() {
                    self.text(suffix);
                }
            }
        }
    }

    fn children(&mut self, node: &Node, format: &dyn Format) {
        for child in &node.children {
            match child {
                Child::Element(c) => self.walk(c, format),
                Child::Text(t) => self.text(t),
            }
        }
    }
}

/// The act `root` holds, read by `format`; the title is `title`'s text.
fn build(root: &Node, format: &dyn Format, title: Option<String>) -> Result<Regulation, ActError> {
    let mut b = Builder {
        blocks: Vec::new(),
        depth: 0,
        current: None,
        line_due: false,
        numbered: false,
        in_note: 0,
    };
    b.walk(root, format);
    for block in &mut b.blocks {
        block.text = block
            .text
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect::<Vec<_>>()
            .join("\n");
    }
    b.blocks.retain(|x| !(x.text.is_empty() && x.heading.is_empty()));
    if b.blocks.iter().all(|x| x.text.is_empty()) {
        return Err(ActError::NotAct(format!("a `{}` document without any text", root.name)));
    }
    Ok(Regulation {
        id: None,
        citation_title: title.filter(|t| !t.is_empty()),
        intitule: None,
        blocks: b.blocks,
    })
}

/// An article's number from its heading (`Article 12`, `Artikel 12 bis`) or, failing
/// that, from `fallback` (`012`, `art_12`).
fn article_number(heading: &str, fallback: Option<&str>) -> Option<String> {
    let words: Vec<&str> = heading.split_whitespace().collect();
    let from_heading = match words.as_slice() {
        [label, rest @ ..] if !rest.is_empty() && label.chars().all(char::is_alphabetic) => Some(rest.join(" ")),
        _ => None,
    };
    from_heading.or_else(|| {
        fallback
            .map(|f| f.trim_start_matches("art_").trim_start_matches('0').to_owned())
            .filter(|f| !f.is_empty())
    })
}

/// Formex 4.
struct Formex;

impl Format for Formex {
    fn role(&self, node: &Node) -> Role {
        match node.name.as_str() {
            "BIB.INSTANCE" | "BIB.DOC" | "PUBLICATION.REF" | "FMX" | "PAPER" | "PDF" => Role::Skip,
            "ARTICLE" => {
                let heading = node
                    .elements()
                    .find(|c| c.name == "TI.ART")
                    .map(Node::text)
                    .unwrap_or_default();
                Role::Block(BlockKind::Article, article_number(&heading, node.identifier.as_deref()))
            }
            "DIVISION" => Role::Block(BlockKind::Division, None),
            "PREAMBLE" | "FINAL" | "ANNEX" => Role::Block(BlockKind::Part, None),
            "TITLE" => Role::Block(BlockKind::Passage, None),
            "NOTE" => Role::Note,
            "HT" | "DATE" | "REF.DOC.OJ" | "QUOT.START" | "QUOT.END" | "FT" | "IE" | "NO.DOC.C" | "REF.DOC" => {
                Role::Inline("", "")
            }
            "NO.P" | "NO.PARAG" => Role::Number,
            _ => Role::Line,
        }
    }

    fn is_heading(&self, node: &Node, block: &Node) -> bool {
        match block.name.as_str() {
            "ARTICLE" => matches!(node.name.as_str(), "TI.ART" | "STI.ART"),
            "DIVISION" => matches!(node.name.as_str(), "TITLE"),
            _ => false,
        }
    }

    fn part_heading(&self, node: &Node) -> Option<&'static str> {
        match node.name.as_str() {
            "PREAMBLE" => Some("Preamble"),
            "FINAL" => Some("Final part"),
            "ANNEX" => Some("Annex"),
            _ => None,
        }
    }
}

/// Reads one Formex 4 file: an `ACT` or an `ANNEX` (a `DOC` manifest holds no text: it
/// is [`ActError::NotAct`]; read it with [`read_manifest`]).
pub fn read_formex(bytes: &[u8]) -> Result<Regulation, ActError> {
    let root = parse(bytes)?;
    if !matches!(root.name.as_str(), "ACT" | "ANNEX" | "CONS.ACT" | "CONS.ANNEX") {
        return Err(ActError::NotAct(format!(
            "a Formex `{}`, not an act or annex",
            root.name
        )));
    }
    let title = root.elements().find(|c| c.name == "TITLE").map(|t| t.text());
    build(&root, &Formex, title)
}

/// What a Formex `DOC` manifest says: its ELI, the files of the act and its annexes in
/// order, the title.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Manifest {
    /// The act's ELI (`NO.ELI ID`), when given.
    pub eli: Option<String>,
    /// The files (`REF.PHYS FILE`) of the main act, then its annexes.
    pub files: Vec<String>,
    /// The title, when the manifest holds it.
    pub title: Option<String>,
}

/// Reads a Formex `DOC` manifest.
pub fn read_manifest(bytes: &[u8]) -> Result<Manifest, ActError> {
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    let mut checks = WellFormed::new(MAX_DEPTH);
    let mut out = Manifest::default();
    let mut root = None;
    let mut buf = Vec::new();
    loop {
        let position = reader.buffer_position();
        let event = reader.read_event_into(&mut buf).map_err(|e| ActError::Xml {
            position,
            detail: e.to_string(),
        })?;
        checks.see(&event).map_err(ActError::Incomplete)?;
        match &event {
            Event::Start(s) | Event::Empty(s) => {
                let name = s.local_name().into_inner().to_owned();
                root.get_or_insert_with(|| name.clone());
                match name.as_str() {
                    "NO.ELI" => out.eli = attribute(s, "ID"),
                    "REF.PHYS" => out.files.extend(attribute(s, "FILE")),
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    if root.as_deref() != Some("DOC") {
        return Err(ActError::NotAct("not a Formex DOC manifest".to_owned()));
    }
    Ok(out)
}

/// Reads the Formex files of one act in order — a `DOC` manifest (for its order) and the
/// act and annex files it names, each as `(name, bytes)` — into one act: the act's blocks,
/// then each annex's.
pub fn read_formex_files(files: &[(String, Vec<u8>)]) -> Result<Regulation, ActError> {
    let manifest = files.iter().find_map(|(_, b)| read_manifest(b).ok());
    let mut order: Vec<&(String, Vec<u8>)> = files.iter().collect();
    if let Some(m) = &manifest {
        order.sort_by_key(|(name, _)| {
            m.files
                .iter()
                .position(|f| f == name || name.ends_with(&format!("/{f}")))
                .unwrap_or(usize::MAX)
        });
    }
    let mut act: Option<Regulation> = None;
    let mut last_error = None;
    for (_, bytes) in order {
        match read_formex(bytes) {
            Ok(part) => match &mut act {
                None => act = Some(part),
                Some(a) => a.blocks.extend(part.blocks),
            },
            Err(e) => last_error = Some(e),
        }
    }
    act.ok_or_else(|| last_error.unwrap_or_else(|| ActError::NotAct("no Formex act among the files".to_owned())))
}

/// Reads a Formex zip (an `fmx4` item): every `.xml` file in it, as
/// [`read_formex_files`] does; more than [`MAX_ZIP_FILES`] files or [`MAX_ZIP_BYTES`]
/// unpacked is an error.
pub fn read_formex_zip(bytes: &[u8]) -> Result<Regulation, ActError> {
    let bad = |e: zip::result::ZipError| ActError::NotAct(format!("not a readable Formex zip: {e}"));
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(bad)?;
    if archive.len() > MAX_ZIP_FILES {
        return Err(ActError::TooBig("too many files in the zip"));
    }
    let mut files = Vec::new();
    let mut total = 0u64;
    for i in 0..archive.len() {
        let file = archive.by_index(i).map_err(bad)?;
        let name = file.name().map(|n| n.into_owned()).unwrap_or_default();
        if !name.ends_with(".xml") {
            continue;
        }
        let mut data = Vec::new();
        file.take(MAX_ZIP_BYTES - total + 1)
            .read_to_end(&mut data)
            .map_err(|e| ActError::NotAct(format!("not a readable Formex zip: {e}")))?;
        total += data.len() as u64;
        if total > MAX_ZIP_BYTES {
            return Err(ActError::TooBig("the zip unpacks to too much"));
        }
        files.push((name, data));
    }
    read_formex_files(&files)
}

/// XHTML with ELI classes.
struct Xhtml;

impl Format for Xhtml {
    fn role(&self, node: &Node) -> Role {
        let id = node.id.as_deref().unwrap_or("");
        match node.name.as_str() {
            "head" | "script" | "style" | "img" => return Role::Skip,
            "div" if id.starts_with("art_") && !id.contains('.') => {
                let heading = node
                    .elements()
                    .find(|c| c.has_class("oj-ti-art") || c.has_class("ti-art"))
                    .map(Node::text)
                    .unwrap_or_default();
                return Role::Block(BlockKind::Article, article_number(&heading, Some(id)));
            }
            "div"
                if (id.starts_with("cpt_") || id.starts_with("tis_") || id.starts_with("prt_"))
                    && !id.contains('.') =>
            {
                return Role::Block(BlockKind::Division, None);
            }
            "div" if id == "pbl_1" || id == "fnp_1" || (id.starts_with("anx_") && !id.contains('.')) => {
                return Role::Block(BlockKind::Part, None);
            }
            "div" if id == "tit_1" => return Role::Block(BlockKind::Passage, None),
            _ => {}
        }
        match node.name.as_str() {
            "p" | "div" | "tr" | "li" | "h1" | "h2" | "h3" | "h4" | "br" | "hr" | "table" | "tbody" | "body" => {
                Role::Line
            }
            "td" | "th" => Role::Inline(" ", " "),
            _ => Role::Inline("", ""),
        }
    }

    fn is_heading(&self, node: &Node, block: &Node) -> bool {
        let id = block.id.as_deref().unwrap_or("");
        if id.starts_with("art_") {
            return node.has_class("oj-ti-art") || node.has_class("ti-art") || node.has_class("eli-title");
        }
        if id.starts_with("cpt_") || id.starts_with("tis_") || id.starts_with("prt_") {
            return node.has_class("eli-title")
                || node
                    .class
                    .as_deref()
                    .is_some_and(|c| c.starts_with("oj-ti-section") || c.starts_with("ti-section"));
        }
        false
    }

    fn part_heading(&self, node: &Node) -> Option<&'static str> {
        let id = node.id.as_deref().unwrap_or("");
        match id {
            "pbl_1" => Some("Preamble"),
            "fnp_1" => Some("Final part"),
            _ if id.starts_with("anx_") => Some("Annex"),
            _ => None,
        }
    }
}

/// Reads an XHTML manifestation (ELI classes, or the older markup without them).
pub fn read_xhtml(bytes: &[u8]) -> Result<Regulation, ActError> {
    let root = parse(bytes)?;
    if root.name != "html" {
        return Err(ActError::NotAct(format!("an XML `{}`, not an XHTML page", root.name)));
    }
    let title = find(&root, &|n| n.id.as_deref() == Some("tit_1"))
        .or_else(|| find(&root, &|n| n.has_class("oj-doc-ti") || n.has_class("doc-ti")))
        .map(Node::text);
    build(&root, &Xhtml, title)
}

fn find<'a>(node: &'a Node, want: &dyn Fn(&Node) -> bool) -> Option<&'a Node> {
    if want(node) {
        return Some(node);
    }
    node.elements().find_map(|c| find(c, want))
}

/// Reads an item's bytes as what they are: a zip (Formex), an XHTML page, or a Formex file.
pub fn read_item(bytes: &[u8]) -> Result<Regulation, ActError> {
    if bytes.starts_with(b"PK\x03\x04") {
        return read_formex_zip(bytes);
    }
    let head = &bytes[..bytes.len().min(2048)];
    let head = String::from_utf8_lossy(head);
    if head.contains("<html") || head.contains("<!DOCTYPE html") {
        read_xhtml(bytes)
    } else {
        read_formex(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_formex_act_gives_its_articles_with_numbers_headings_and_paragraphs() {
        let xml = br#"<ACT><BIB.INSTANCE><NO.DOC>secret bib</NO.DOC></BIB.INSTANCE><TITLE><TI><P>Regulation X</P></TI></TITLE>
            <PREAMBLE><PREAMBLE.INIT>THE COUNCIL,</PREAMBLE.INIT><GR.VISA><VISA>Having regard<NOTE NOTE.ID="E1"><P>OJ C 1</P></NOTE>,</VISA></GR.VISA></PREAMBLE>
            <ENACTING.TERMS><DIVISION><TITLE><TI><P>CHAPTER I</P></TI><STI><P>General</P></STI></TITLE>
            <ARTICLE IDENTIFIER="001"><TI.ART>Article 1</TI.ART><STI.ART><P>Subject</P></STI.ART>
            <PARAG IDENTIFIER="001.001"><NO.PARAG>1.</NO.PARAG><ALINEA>This <HT TYPE="ITALIC">Regulation</HT> applies.</ALINEA></PARAG>
            <PARAG><NO.PARAG>2.</NO.PARAG><ALINEA><P>It lists:</P><LIST><ITEM><NP><NO.P>(a)</NO.P><TXT>one;</TXT></NP></ITEM></LIST></ALINEA></PARAG>
            </ARTICLE></DIVISION></ENACTING.TERMS><FINAL><P>Binding.</P></FINAL></ACT>"#;
        let r = read_formex(xml).unwrap();
        assert_eq!(r.citation_title.as_deref(), Some("Regulation X"));
        let a = r.article("1").expect("article 1");
        assert_eq!(a.heading, "Article 1 Subject");
        assert_eq!(a.text, "1. This Regulation applies.\n2. It lists:\n(a) one;");
        let text = r.full_text();
        assert!(text.contains("Having regard (OJ C 1),"), "{text}");
        assert!(!text.contains("secret"), "{text}");
        let outline: Vec<&str> = r.outline().map(|e| e.label).collect();
        assert_eq!(
            outline,
            ["Preamble", "CHAPTER I General", "Article 1 Subject", "Final part"]
        );
    }

    #[test]
    fn xhtml_with_eli_classes_gives_its_articles() {
        let html = br#"<?xml version="1.0"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML//EN" "xhtml-strict.dtd"><html xmlns="http://www.w3.org/1999/xhtml"><head><title>L_1.fmx.xml</title></head><body>
            <div class="eli-main-title" id="tit_1"><p class="oj-doc-ti">Regulation Y</p></div>
            <div class="eli-subdivision" id="pbl_1"><p class="oj-normal">THE COUNCIL,</p></div>
            <div id="cpt_1"><p class="oj-ti-section-1">CHAPTER 1</p><div class="eli-title" id="cpt_1.tit_1"><p class="oj-ti-section-2">General</p></div>
            <div class="eli-subdivision" id="art_1"><p class="oj-ti-art">Article 1</p><div class="eli-title" id="art_1.tit_1"><p class="oj-sti-art">Subject</p></div>
            <div id="001.001"><p class="oj-normal">1.   It applies.</p></div>
            <table><tbody><tr><td><p class="oj-normal">(a)</p></td><td><p class="oj-normal">one;</p></td></tr></tbody></table></div></div>
            <div class="eli-container" id="anx_1"><p class="oj-doc-ti">ANNEX</p><p class="oj-normal">Table.</p></div></body></html>"#;
        let r = read_xhtml(html).unwrap();
        assert_eq!(r.citation_title.as_deref(), Some("Regulation Y"));
        let a = r.article("1").expect("article 1");
        assert_eq!(a.heading, "Article 1 Subject");
        assert_eq!(a.text, "1. It applies.\n(a)\none;");
        let outline: Vec<&str> = r.outline().map(|e| e.label).collect();
        assert_eq!(outline, ["Preamble", "CHAPTER 1 General", "Article 1 Subject", "Annex"]);
        assert!(!r.full_text().contains("L_1.fmx"));
    }

    #[test]
    fn hostile_and_empty_documents_are_errors_never_acts() {
        assert!(matches!(read_formex(b"<ACT></ACT>"), Err(ActError::NotAct(_))));
        assert!(matches!(read_formex(b"<ACT><TITLE>cut"), Err(ActError::Incomplete(_))));
        assert!(read_formex(b"<!DOCTYPE a [<!ENTITY x \"y\">]><ACT>&x;</ACT>").is_err());
        assert!(read_item(b"PK\x03\x04garbage").is_err());
        assert!(read_item(b"{\"not\": \"xml\"}").is_err());
        let deep = "<ACT>".repeat(MAX_DEPTH + 2);
        assert!(matches!(read_formex(deep.as_bytes()), Err(ActError::TooBig(_))));
        assert!(matches!(
            read_formex(b"<DOC><BIB.DOC/></DOC>"),
            Err(ActError::NotAct(_))
        ));
    }
}
