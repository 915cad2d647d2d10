//! The real files the fakes serve beside their generated data: the corpus of real platform
//! answers and documents (kept beside the project, found and checked by [`crate::corpus`];
//! their provenance in `corpus/index.toml`), and the little XML reading the fakes need to
//! describe them in their records ([`parse`], [`Element`]).
//!
//! The files are read when a fake starts ([`load`], through the `CORPUS` folders its
//! `FakePlatform` names), each checked against its sha256 in the catalogue: a fake whose
//! files are missing or different does not start, and says which. Once read, a folder's
//! table lives as long as the process (`&'static`), so the generated corpora can hold
//! references into it as they did when the files were compiled in.
//!
//! Invariants:
//! - A real file is served as its bytes, never edited, re-encoded or cut; what a fake says
//!   about it (a record) is read from the file itself, or from the corpus's own metadata
//!   file of the same publication.
//! - A folder's table is every file the catalogue lists in that folder, sorted by path (a
//!   corpus test holds the catalogue to the folders on disk), so a file added to the
//!   catalogue is served or a test says so.
//! - [`parse`] reads any input without panicking; it resolves only the predefined and
//!   character references and refuses a document type with declarations.
//!
//! What this module does not do: find the corpus or judge a file (`corpus.rs` does), or
//! serve anything itself (each fake serves its own).

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::corpus::{self, CorpusError};

/// One real file of the corpus.
#[derive(Debug, PartialEq, Eq)]
pub struct RealFile {
    /// Its path under the corpus root, e.g. `bwb/BWBR0018451_2025-01-01_0.xml`.
    pub path: &'static str,
    /// Its bytes, exactly.
    pub bytes: &'static [u8],
}

impl RealFile {
    /// The file's name without folder and `.xml`: `BWBR0018451_2025-01-01_0`.
    pub fn stem(&self) -> &'static str {
        let name = self.path.rsplit('/').next().unwrap_or(self.path);
        name.strip_suffix(".xml").unwrap_or(name)
    }
}

/// The folders read so far, each once per process.
fn loaded() -> &'static Mutex<BTreeMap<String, &'static [RealFile]>> {
    static LOADED: OnceLock<Mutex<BTreeMap<String, &'static [RealFile]>>> = OnceLock::new();
    LOADED.get_or_init(Default::default)
}

/// Every catalogued file of `folder` (`bwb`, `tk/vlos`), read and checked; the error names
/// each file that is missing or different. Read once per process.
pub fn load(folder: &str) -> Result<&'static [RealFile], CorpusError> {
    let mut loaded = loaded().lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(files) = loaded.get(folder) {
        return Ok(files);
    }
    let entries = corpus::folder(folder);
    let paths: Vec<&str> = entries.iter().map(|e| e.path.as_str()).collect();
    let bytes = corpus::read_all(&paths)?;
    let files: Vec<RealFile> = entries
        .iter()
        .zip(bytes)
        .map(|(e, b)| RealFile {
            path: e.path.as_str(),
            bytes: Vec::leak(b),
        })
        .collect();
    let files: &'static [RealFile] = Vec::leak(files);
    loaded.insert(folder.to_owned(), files);
    Ok(files)
}

/// The files of `folder`, for the fakes' corpora once the fake started.
///
/// A fake reads its folders when it starts and refuses to start without them, so a
/// running fake finds them here; code that builds a fake's corpus without starting it (a
/// test) fails here with the same message naming the files.
pub(crate) fn served(folder: &str) -> &'static [RealFile] {
    load(folder).unwrap_or_else(|e| panic!("{e}"))
}

/// Every BWB toestand of the corpus.
pub(crate) fn bwb() -> &'static [RealFile] {
    served("bwb")
}

/// Every CVDR regulation of the corpus (old and new export formats).
pub(crate) fn cvdr() -> &'static [RealFile] {
    served("cvdr")
}

/// Every Officiële Bekendmakingen file of the corpus: the XML renditions and, for two of
/// them, their `metadata.xml` and `metadata_owms.xml`.
pub(crate) fn ob() -> &'static [RealFile] {
    served("ob")
}

/// Every parliamentary record of the corpus (`corpus/ob-chamber/`): SRU records and
/// `metadata_owms` files of Tweede and Eerste Kamer items.
pub(crate) fn ob_chamber() -> &'static [RealFile] {
    served("ob-chamber")
}

/// Every `/uitspraken/content` answer of the corpus, named by its ECLI with `_` for `:`.
pub(crate) fn rechtspraak() -> &'static [RealFile] {
    served("rechtspraak")
}

/// Every VLOS report of the corpus (`Verslag({id})/resource`), named by its `Verslag` id.
pub(crate) fn vlos() -> &'static [RealFile] {
    served("tk/vlos")
}

/// A node of a parsed document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// An element.
    Element(Element),
    /// Text (references resolved).
    Text(String),
}

/// An element of a parsed document, by local name (prefixes dropped).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Element {
    /// Its local name.
    pub name: String,
    /// Its attributes (local name, value).
    pub attributes: Vec<(String, String)>,
    /// Its children, in order.
    pub children: Vec<Node>,
}

impl Element {
    /// The value of the attribute with local name `name`.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// The child elements, in order.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|c| match c {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    /// The first element named `name` at or below this one, in document order.
    pub fn find(&self, name: &str) -> Option<&Element> {
        if self.name == name {
            return Some(self);
        }
        self.elements().find_map(|e| e.find(name))
    }

    /// Every element named `name` at or below this one, in document order.
    pub fn find_all<'a>(&'a self, name: &str, out: &mut Vec<&'a Element>) {
        if self.name == name {
            out.push(self);
        }
        for e in self.elements() {
            e.find_all(name, out);
        }
    }

    /// Its text, leaving out the elements named in `skip`, with runs of white space made
    /// one space and the ends trimmed; `boundary` is put between the texts of elements
    /// (a space for words, nothing for a title).
    pub fn text_without(&self, skip: &[&str], boundary: &str) -> String {
        let mut raw = String::new();
        self.collect(skip, boundary, &mut raw);
        raw.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    fn collect(&self, skip: &[&str], boundary: &str, out: &mut String) {
        for child in &self.children {
            match child {
                Node::Text(t) => out.push_str(t),
                Node::Element(e) if skip.contains(&e.name.as_str()) => {}
                Node::Element(e) => {
                    out.push_str(boundary);
                    e.collect(skip, boundary, out);
                    out.push_str(boundary);
                }
            }
        }
    }
}

/// Deepest nesting [`parse`] reads (the corpus's deepest file nests about 20).
const MAX_DEPTH: usize = 200;

/// Reads a whole document into its root element, or says why it cannot.
pub fn parse(bytes: &[u8]) -> Result<Element, String> {
    read(bytes, Wanted::Root)?.ok_or_else(|| "no root element".to_owned())
}

/// The first element named `name`, read whole, without reading the document beyond it
/// (a title near the start of a large toestand costs what it is long); `None` when there
/// is none. What is read must be well-formed.
pub fn first_element(bytes: &[u8], name: &str) -> Result<Option<Element>, String> {
    read(bytes, Wanted::Element(name))
}

/// The start tag of the first element named `name` (its attributes, no children), read
/// without going further; `None` when there is none.
pub fn first_tag(bytes: &[u8], name: &str) -> Result<Option<Element>, String> {
    read(bytes, Wanted::Tag(name))
}

/// What [`read`] is after.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wanted<'a> {
    /// The whole document.
    Root,
    /// The first element of this name, whole.
    Element(&'a str),
    /// The start tag of the first element of this name.
    Tag(&'a str),
}

impl Wanted<'_> {
    /// Whether an element named `name`, outside anything being built, is the one wanted.
    fn starts(self, name: &str) -> bool {
        match self {
            Wanted::Root => true,
            Wanted::Element(w) | Wanted::Tag(w) => name == w,
        }
    }
}

fn read(bytes: &[u8], wanted: Wanted<'_>) -> Result<Option<Element>, String> {
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    // The elements being built, the wanted one at the bottom; the open elements around it.
    let mut stack: Vec<Element> = Vec::new();
    let mut outside = 0usize;
    let mut root: Option<Element> = None;
    loop {
        let at = reader.buffer_position();
        let event = reader.read_event().map_err(|e| format!("at byte {at}: {e}"))?;
        let opens = matches!(event, Event::Start(_));
        match event {
            Event::Start(start) | Event::Empty(start) if stack.is_empty() && !wanted.starts(local(&start)) => {
                if opens {
                    outside += 1;
                }
            }
            Event::Start(start) => {
                if stack.len() + outside >= MAX_DEPTH {
                    return Err(format!("nested deeper than {MAX_DEPTH}"));
                }
                let e = element(&start)?;
                if matches!(wanted, Wanted::Tag(_)) {
                    return Ok(Some(e));
                }
                stack.push(e);
            }
            Event::Empty(start) => {
                let e = element(&start)?;
                if matches!(wanted, Wanted::Tag(_)) {
                    return Ok(Some(e));
                }
                if let Some(done) = close(e, &mut stack, &mut root, wanted)? {
                    return Ok(Some(done));
                }
            }
            Event::End(_) => match stack.pop() {
                Some(e) => {
                    if let Some(done) = close(e, &mut stack, &mut root, wanted)? {
                        return Ok(Some(done));
                    }
                }
                None => outside = outside.checked_sub(1).ok_or("an end tag without a start")?,
            },
            Event::Text(t) => push_text(&mut stack, &t.xml10_content()),
            Event::CData(c) => push_text(&mut stack, &c.xml10_content()),
            Event::GeneralRef(r) => {
                let text = if r.is_char_ref() {
                    r.resolve_char_ref()
                        .ok()
                        .flatten()
                        .map(String::from)
                        .ok_or("a bad character reference")?
                } else {
                    let name = r.xml10_content();
                    quick_xml::escape::resolve_predefined_entity(&name)
                        .map(str::to_owned)
                        .ok_or_else(|| format!("the undeclared entity &{name};"))?
                };
                push_text(&mut stack, &text);
            }
            Event::DocType(d) if d.xml10_content().contains('[') => {
                return Err("a document type with declarations".to_owned());
            }
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => {}
        }
    }
    if !stack.is_empty() || outside > 0 {
        return Err("the document ends before its root closes".to_owned());
    }
    Ok(root)
}

/// The local name of a start tag.
fn local<'a>(start: &'a BytesStart<'_>) -> &'a str {
    start.local_name().into_inner()
}

fn element(start: &BytesStart<'_>) -> Result<Element, String> {
    let mut attributes = Vec::new();
    for attribute in start.attributes() {
        let attribute = attribute.map_err(|e| e.to_string())?;
        let key = attribute.key.local_name().into_inner().to_owned();
        let value = attribute
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|e| e.to_string())?;
        attributes.push((key, value.into_owned()));
    }
    Ok(Element {
        name: local(start).to_owned(),
        attributes,
        children: Vec::new(),
    })
}

/// An element is complete: it joins its parent, or it is what was wanted (returned), or
/// the document's root.
fn close(
    e: Element,
    stack: &mut [Element],
    root: &mut Option<Element>,
    wanted: Wanted<'_>,
) -> Result<Option<Element>, String> {
    match stack.last_mut() {
        Some(parent) => parent.children.push(Node::Element(e)),
        None if wanted != Wanted::Root => return Ok(Some(e)),
        None if root.is_none() => *root = Some(e),
        None => return Err("a second root element".to_owned()),
    }
    Ok(None)
}

fn push_text(stack: &mut [Element], text: &str) {
    // Text outside what is built (white space, a byte order mark, the rest of a document
    // around a wanted element) belongs to nothing read.
    if let Some(parent) = stack.last_mut() {
        match parent.children.last_mut() {
            Some(Node::Text(t)) => t.push_str(text),
            _ => parent.children.push(Node::Text(text.to_owned())),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_table_is_its_catalogued_folder_byte_for_byte() {
        for (dir, table) in [
            ("bwb", bwb()),
            ("cvdr", cvdr()),
            ("ob", ob()),
            ("rechtspraak", rechtspraak()),
            ("tk/vlos", vlos()),
        ] {
            let listed: Vec<&str> = table.iter().map(|f| f.path).collect();
            let catalogued: Vec<&str> = corpus::folder(dir).iter().map(|e| e.path.as_str()).collect();
            assert_eq!(listed, catalogued, "{dir}");
            assert!(!table.is_empty(), "{dir}");
            for f in table {
                assert_eq!(
                    corpus::sha256_hex(f.bytes),
                    corpus::entry(f.path).unwrap().sha256,
                    "{}",
                    f.path
                );
            }
            assert!(std::ptr::eq(table, load(dir).unwrap()), "{dir} is read once");
        }
    }

    #[test]
    fn every_real_file_parses_and_text_leaves_out_what_it_is_told() {
        for f in bwb()
            .iter()
            .chain(cvdr())
            .chain(ob())
            .chain(rechtspraak())
            .chain(vlos())
        {
            parse(f.bytes).unwrap_or_else(|e| panic!("{}: {e}", f.path));
        }
        let doc = parse(b"<a>Wet <i>op</i> de<m>x&amp;y</m> zorg&#116;oeslag <b/></a>").unwrap();
        assert_eq!(doc.text_without(&["m"], ""), "Wet op de zorgtoeslag");
        assert_eq!(doc.text_without(&[], " "), "Wet op de x&y zorgtoeslag");
        assert_eq!(bwb()[10].stem(), "BWBR0018451_2025-01-01_0");
        let doc = b"<r><x a='1'><y>one</y></x><y>two</y><open>";
        assert_eq!(first_element(doc, "y").unwrap().unwrap().text_without(&[], ""), "one");
        assert_eq!(first_tag(doc, "x").unwrap().unwrap().attribute("a"), Some("1"));
        assert_eq!(first_element(b"<r><x/></r>", "y").unwrap(), None);
        assert!(first_element(doc, "z").is_err(), "a document that ends early");
    }

    #[test]
    fn broken_documents_are_errors_not_panics() {
        for bad in [
            &b""[..],
            b"<a>",
            b"<a></b>",
            b"<a/><b/>",
            b"<a>&xxe;</a>",
            b"<!DOCTYPE a [<!ENTITY e \"x\">]><a>&e;</a>",
            b"\xff\xfe<a>",
        ] {
            assert!(parse(bad).is_err(), "{}", String::from_utf8_lossy(bad));
        }
    }
}
