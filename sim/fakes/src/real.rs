//! The real files the fakes serve beside their generated data: the corpus of real platform
//! answers and documents in `corpus/` (gathered from public sources, byte for byte, with
//! their provenance in `corpus/index.toml`), and the little XML reading the fakes need to
//! describe them in their records ([`parse`], [`Element`]).
//!
//! The files are compiled in (`include_bytes!`), not read from the repository at run time:
//! the fakes also run as `besluitbron-sim fakes`, a binary that must serve the same answers
//! wherever it is started (no checkout or working directory to depend on); cargo rebuilds
//! when a file changes; and what is served is the file's bytes by construction. The cost
//! is about 12.2 MB in each binary that links the fakes (2.8 MB of it the VLOS reports).
//!
//! Invariants:
//! - A real file is served as its bytes, never edited, re-encoded or cut; what a fake says
//!   about it (a record) is read from the file itself, or from the corpus's own metadata
//!   file of the same publication.
//! - Each table lists every file of its folder of `corpus/` (a test compares them with
//!   the folder and the bytes with the files), so a file added to the corpus is served
//!   or the test says so.
//! - [`parse`] reads any input without panicking; it resolves only the predefined and
//!   character references and refuses a document type with declarations.
//!
//! What this module does not do: check the files against the index's checksums (the
//! server's corpus test does), or serve anything itself (each fake serves its own).

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

/// One real file of the corpus.
#[derive(Debug, PartialEq, Eq)]
pub struct RealFile {
    /// Its path under `corpus/`, e.g. `bwb/BWBR0018451_2025-01-01_0.xml`.
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

macro_rules! real_files {
    ($($path:literal),* $(,)?) => {
        &[$(RealFile { path: $path, bytes: include_bytes!(concat!("../../../corpus/", $path)) }),*]
    };
}

/// Every BWB toestand of the corpus.
pub static BWB: &[RealFile] = real_files![
    "bwb/BWBR0001821_1998-01-01_0.xml",
    "bwb/BWBR0002365_1978-02-04_0.xml",
    "bwb/BWBR0002458_2014-01-01_1.xml",
    "bwb/BWBR0002629_2013-01-01_0.xml",
    "bwb/BWBR0003984_1986-06-26_0.xml",
    "bwb/BWBR0004627_2025-08-01_0.xml",
    "bwb/BWBR0008326_2011-01-01_0.xml",
    "bwb/BWBR0009127_2000-12-24_0.xml",
    "bwb/BWBR0015703_2026-01-01_0.xml",
    "bwb/BWBR0018450_2025-07-05_0.xml",
    "bwb/BWBR0018451_2025-01-01_0.xml",
    "bwb/BWBR0018472_2025-01-01_0.xml",
    "bwb/BWBR0035917_2025-07-05_0.xml",
    "bwb/BWBR0038456_2023-10-01_0.xml",
    "bwb/BWBR0045754_2022-05-01_0.xml",
    "bwb/BWBV0001109_2004-12-28_0.xml",
    "bwb/BWBV0004110_2005-07-24_0.xml",
    "bwb/BWBV0005862_2022-07-31_0.xml",
];

/// Every CVDR regulation of the corpus (old and new export formats).
pub static CVDR: &[RealFile] = real_files!["cvdr/112779_1.xml", "cvdr/CVDR100394_2.xml", "cvdr/CVDR680781_1.xml",];

/// Every Officiële Bekendmakingen file of the corpus: the XML renditions and, for two of
/// them, their `metadata.xml` and `metadata_owms.xml`.
pub static OB: &[RealFile] = real_files![
    "ob/ah-tk-20202021-3235.metadata.xml",
    "ob/ah-tk-20202021-3235.metadata_owms.xml",
    "ob/ah-tk-20202021-3235.xml",
    "ob/bgr-2024-715.xml",
    "ob/gmb-2017-100002.xml",
    "ob/kst-32545-143.metadata.xml",
    "ob/kst-32545-143.metadata_owms.xml",
    "ob/kst-32545-143.xml",
    "ob/prb-2017-1003.xml",
    "ob/stb-2018-84.xml",
    "ob/stcrt-2015-47076.xml",
];

/// Every `/uitspraken/content` answer of the corpus, named by its ECLI with `_` for `:`.
pub static RECHTSPRAAK: &[RealFile] = real_files![
    "rechtspraak/ECLI_NL_CBB_2020_1.xml",
    "rechtspraak/ECLI_NL_GHAMS_2007_AZ8310.xml",
    "rechtspraak/ECLI_NL_GHAMS_2007_BC1110.xml",
    "rechtspraak/ECLI_NL_GHAMS_2020_3025.xml",
    "rechtspraak/ECLI_NL_PHR_2011_BP5608.xml",
    "rechtspraak/ECLI_NL_RBAMS_2007_YB0083.xml",
];

/// Every VLOS report of the corpus (`Verslag({id})/resource`), named by its `Verslag` id.
pub static VLOS: &[RealFile] = real_files![
    "tk/vlos/2a27783d-3d6b-4e26-9fcf-52c17a41f6bf.xml",
    "tk/vlos/604b6f07-0077-4e6c-bd09-03509b9b8849.xml",
    "tk/vlos/66ab0b76-d942-425b-9c34-30e39f7946a7.xml",
    "tk/vlos/93758182-978b-4899-9d4d-1776c7baeab3.xml",
    "tk/vlos/b5130467-a6c2-4f83-99c3-65ec778e5a24.xml",
    "tk/vlos/d5130a6f-0400-4b03-b8d3-8daed02dc4af.xml",
    "tk/vlos/fb28c35e-af8d-49ee-8905-ad41eb41e4de.xml",
    "tk/vlos/vergadering-03686ab6_2014-10-15.xml",
];

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
    use std::collections::BTreeSet;
    use std::path::Path;

    use super::*;

    #[test]
    fn every_table_is_its_corpus_folder_byte_for_byte() {
        let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../corpus");
        for (dir, table) in [
            ("bwb", BWB),
            ("cvdr", CVDR),
            ("ob", OB),
            ("rechtspraak", RECHTSPRAAK),
            ("tk/vlos", VLOS),
        ] {
            let on_disk: BTreeSet<String> = std::fs::read_dir(corpus.join(dir))
                .unwrap()
                .map(|e| format!("{dir}/{}", e.unwrap().file_name().to_string_lossy()))
                .collect();
            let listed: BTreeSet<String> = table.iter().map(|f| f.path.to_owned()).collect();
            assert_eq!(listed, on_disk, "corpus/{dir}");
            for f in table {
                assert_eq!(f.bytes, std::fs::read(corpus.join(f.path)).unwrap(), "{}", f.path);
            }
        }
    }

    #[test]
    fn every_real_file_parses_and_text_leaves_out_what_it_is_told() {
        for f in BWB.iter().chain(CVDR).chain(OB).chain(RECHTSPRAAK).chain(VLOS) {
            parse(f.bytes).unwrap_or_else(|e| panic!("{}: {e}", f.path));
        }
        let doc = parse(b"<a>Wet <i>op</i> de<m>x&amp;y</m> zorg&#116;oeslag <b/></a>").unwrap();
        assert_eq!(doc.text_without(&["m"], ""), "Wet op de zorgtoeslag");
        assert_eq!(doc.text_without(&[], " "), "Wet op de x&y zorgtoeslag");
        assert_eq!(BWB[10].stem(), "BWBR0018451_2025-01-01_0");
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
