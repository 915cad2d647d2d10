//! The KOOP publication XML (officielepublicaties: Kamerstukken, Handelingen,
//! Staatscourant, …) as plain text: [`read_xml`]. The same vocabulary serves the `xml`
//! manifestation of Officiële Bekendmakingen and the Tweede Kamer's `DocumentPublicatie`
//! renditions (PLATFORMS.md §10.1, §10.5).
//!
//! How elements are read:
//! - `metadata` and `meta` are dropped with everything inside them;
//! - blocks (`al`, `titel`, `kop`, `tussenkop`, `li`, `lid`, `ondertekening`, …) are
//!   paragraphs; a list item's number (`li.nr`, `lidnr`) opens its paragraph;
//! - a table `row` is a paragraph, its `entry` cells separated by ` | `;
//! - a footnote (`noot`) leaves its mark in the text (`[1]`), and its text goes to a
//!   closing "Noten" section in order;
//! - inline markup (`nadruk`, `extref`, `sup`, …) is read through without a break;
//!   any other element boundary counts as a space (the platform's rule: "treat element
//!   boundaries as spaces").
//!
//! Invariants: bounded by [`Caps`] (input bytes, text characters, element depth); only a
//! complete, well-formed document is read ([`crate::xml`]): mismatched or
//! truncated markup, a document type that declares entities and a reference to an
//! undeclared entity are [`TextError::Malformed`] (no DTD is ever read, so an entity
//! bomb is refused, not expanded); a rendition that is an empty template is
//! [`TextError::EmptyRendition`], never an empty text.

use std::borrow::Cow;

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use super::build::{Gap, TextBuilder};
use super::types::{Caps, Format, Text, TextError};
use crate::xml::{WellFormed, resolve_reference};

/// What a template without text says instead (PLATFORMS.md §10.1).
const NOT_AVAILABLE: &str = "niet beschikbaar in HTML-formaat";

/// Dropped with their content.
const SKIPPED: &[&str] = &["metadata", "meta", "colspec", "spanspec"];

/// Paragraphs.
const BLOCKS: &[&str] = &[
    "al",
    "titel",
    "kop",
    "tussenkop",
    "subtitel",
    "li",
    "lid",
    "row",
    "ondertekening",
    "datumtekst",
    "wat",
    "wij",
    "considerans.al",
    "vraag",
    "antwoord",
    "label",
    "term",
    "definitie",
    "kamervraagomschrijving",
    "kamervraagonderwerp",
    "kamervraagnummer",
    "dossier",
    "stuk",
    "stuknr",
    "divisie",
    "artikel",
    "aanhef",
    "afkondiging",
    "slotformulering",
    "table",
    "plaatje",
    "p",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "div",
    "para",
    "title",
];

/// Read through without a break.
const INLINE: &[&str] = &[
    "nadruk",
    "extref",
    "intref",
    "dossierref",
    "sup",
    "inf",
    "unl",
    "nootref",
    "span",
    "a",
    "b",
    "i",
    "u",
    "em",
    "strong",
    "emphasis",
];

/// Numbers that open a paragraph, followed by a space.
const NUMBERS: &[&str] = &["li.nr", "lidnr"];

/// The text of the KOOP publication XML in `bytes`, in paragraphs.
///
/// Errors: over a cap ([`TextError::TooLarge`], [`TextError::TooLong`],
/// [`TextError::TooDeep`]); not well-formed or not text ([`TextError::Malformed`]);
/// an empty template ([`TextError::EmptyRendition`]).
pub fn read_xml(bytes: &[u8], caps: &Caps) -> Result<Text, TextError> {
    if bytes.len() > caps.max_input_bytes {
        return Err(TextError::TooLarge {
            limit_bytes: caps.max_input_bytes as u64,
        });
    }
    let source = decode(bytes)?;
    let mut reader = Reader::from_str(&source);
    reader.config_mut().check_end_names = true;
    let mut walk = Walk::new(caps);
    // The walk bounds the depth itself (its own error); the checks see the rest.
    let mut checks = WellFormed::new(usize::MAX);
    loop {
        let event = reader.read_event().map_err(|e| malformed(&e.to_string()))?;
        checks.see(&event).map_err(|fault| malformed(&fault.to_string()))?;
        match event {
            Event::Start(e) => walk.open(&e)?,
            Event::Empty(e) => {
                walk.open(&e)?;
                walk.close(e.local_name().into_inner())?;
            }
            Event::End(e) => walk.close(e.local_name().into_inner())?,
            Event::Text(t) => walk.text(&t.xml10_content())?,
            Event::CData(t) => walk.text(&t.xml10_content())?,
            Event::GeneralRef(r) => {
                let resolved = resolve_reference(&r).map_err(|fault| malformed(&fault.to_string()))?;
                walk.text(&resolved)?;
            }
            Event::Eof => break,
            Event::Comment(_) | Event::Decl(_) | Event::PI(_) | Event::DocType(_) => {}
        }
    }
    if walk.depth != 0 {
        return Err(malformed("the document ends inside an element"));
    }
    if !walk.seen_root {
        return Err(malformed("no root element"));
    }
    let text = walk.finish()?;
    if text.trim().is_empty() || text.contains(NOT_AVAILABLE) {
        return Err(TextError::EmptyRendition);
    }
    Ok(Text {
        text,
        format: Format::Xml,
        pages: None,
    })
}

fn malformed(detail: &str) -> TextError {
    let detail: String = detail.chars().take(120).collect();
    TextError::Malformed {
        format: Format::Xml,
        detail,
    }
}

/// The bytes as text: UTF-8 (a byte-order mark dropped), UTF-16 with its byte-order
/// mark, or ISO-8859-1 / Windows-1252 when the declaration says so.
fn decode(bytes: &[u8]) -> Result<Cow<'_, str>, TextError> {
    if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        return std::str::from_utf8(rest)
            .map(Cow::Borrowed)
            .map_err(|_| malformed("not valid UTF-8"));
    }
    for (bom, big_endian) in [(b"\xFE\xFF", true), (b"\xFF\xFE", false)] {
        if let Some(rest) = bytes.strip_prefix(bom) {
            let units = rest.chunks_exact(2).map(|p| {
                if big_endian {
                    u16::from_be_bytes([p[0], p[1]])
                } else {
                    u16::from_le_bytes([p[0], p[1]])
                }
            });
            return char::decode_utf16(units)
                .collect::<Result<String, _>>()
                .map(Cow::Owned)
                .map_err(|_| malformed("not valid UTF-16"));
        }
    }
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(Cow::Borrowed(s)),
        Err(_) => {
            let head = String::from_utf8_lossy(&bytes[..bytes.len().min(200)]).to_ascii_lowercase();
            let declared = head.starts_with("<?xml")
                && ["iso-8859-1", "iso-8859-15", "windows-1252", "latin1"]
                    .iter()
                    .any(|name| head.split("?>").next().is_some_and(|decl| decl.contains(name)));
            if declared {
                Ok(Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()))
            } else {
                Err(malformed("not valid UTF-8"))
            }
        }
    }
}

/// The walk over the elements: where it is, and the text so far.
struct Walk {
    body: TextBuilder,
    notes: TextBuilder,
    max_depth: usize,
    depth: usize,
    /// Depth of the skipped element being read through, if any.
    skipping: Option<usize>,
    /// Depth of the footnote being read, if any.
    in_note: Option<usize>,
    /// Whether the current footnote's number was written.
    note_numbered: bool,
    /// Inside a footnote number.
    in_note_number: bool,
    /// Cells of the current table row so far.
    row_cells: usize,
    /// Inside a list number (written, then a space).
    in_number: bool,
    /// A list number was just written: the block it numbers continues its paragraph.
    after_number: bool,
    seen_root: bool,
}

impl Walk {
    fn new(caps: &Caps) -> Walk {
        Walk {
            body: TextBuilder::new(caps.max_text_chars),
            notes: TextBuilder::new(caps.max_text_chars),
            max_depth: caps.max_depth,
            depth: 0,
            skipping: None,
            in_note: None,
            note_numbered: false,
            in_note_number: false,
            row_cells: 0,
            in_number: false,
            after_number: false,
            seen_root: false,
        }
    }

    fn out(&mut self) -> &mut TextBuilder {
        if self.in_note.is_some() {
            &mut self.notes
        } else {
            &mut self.body
        }
    }

    fn open(&mut self, e: &BytesStart<'_>) -> Result<(), TextError> {
        if self.depth == 0 && self.seen_root {
            return Err(malformed("more than one root element"));
        }
        self.seen_root = true;
        self.depth += 1;
        if self.depth > self.max_depth {
            return Err(TextError::TooDeep { limit: self.max_depth });
        }
        if self.skipping.is_some() {
            return Ok(());
        }
        let name = e.local_name();
        let name: &str = name.into_inner();
        if SKIPPED.contains(&name) {
            self.skipping = Some(self.depth);
            return Ok(());
        }
        match name {
            "noot" if self.in_note.is_none() => {
                self.in_note = Some(self.depth);
                self.note_numbered = false;
                self.notes.paragraph();
            }
            "noot.nr" if self.in_note.is_some() => self.in_note_number = true,
            "noot.al" => self.out().gap(Gap::Space),
            "row" => {
                self.row_cells = 0;
                self.out().paragraph();
            }
            "entry" => {
                if self.row_cells > 0 {
                    self.out().gap(Gap::Cell);
                }
                self.row_cells += 1;
            }
            "br" => self.out().gap(Gap::Line),
            n if NUMBERS.contains(&n) => {
                self.in_number = true;
                self.out().paragraph();
            }
            n if BLOCKS.contains(&n) && self.after_number => {
                self.after_number = false;
                self.out().gap(Gap::Space);
            }
            n if BLOCKS.contains(&n) => self.out().paragraph(),
            n if INLINE.contains(&n) => {}
            _ => self.out().gap(Gap::Space),
        }
        Ok(())
    }

    fn close(&mut self, name: &str) -> Result<(), TextError> {
        let depth = self.depth;
        self.depth = self.depth.saturating_sub(1);
        if let Some(at) = self.skipping {
            if at == depth {
                self.skipping = None;
            }
            return Ok(());
        }
        if self.in_note == Some(depth) {
            self.in_note = None;
            self.in_note_number = false;
            return Ok(());
        }
        match name {
            "noot.nr" => self.in_note_number = false,
            "entry" => {}
            n if NUMBERS.contains(&n) => {
                self.in_number = false;
                self.after_number = true;
                self.out().gap(Gap::Space);
            }
            n if BLOCKS.contains(&n) => self.out().paragraph(),
            n if INLINE.contains(&n) => {}
            _ => self.out().gap(Gap::Space),
        }
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), TextError> {
        if self.skipping.is_some() {
            return Ok(());
        }
        if self.in_note_number {
            let number = text.trim();
            if number.is_empty() {
                return Ok(());
            }
            self.body.glued(&format!("[{number}]"))?;
            self.notes.text(&format!("[{number}]"))?;
            self.notes.gap(Gap::Space);
            self.note_numbered = true;
            return Ok(());
        }
        if self.in_number {
            return self.out().text(text);
        }
        if !text.trim().is_empty() {
            self.after_number = false;
        }
        self.out().text(text)
    }

    fn finish(self) -> Result<String, TextError> {
        let mut body = self.body;
        if !self.notes.is_empty() {
            body.paragraph();
            body.text("Noten")?;
            for note in self.notes.as_str().split("\n\n") {
                body.paragraph();
                body.text(note)?;
            }
        }
        Ok(body.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(xml: &str) -> Result<String, TextError> {
        read_xml(xml.as_bytes(), &Caps::default()).map(|t| t.text)
    }

    /// A Kamerstuk in the officielepublicaties vocabulary, as the platforms serve it.
    const KAMERSTUK: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<officiele-publicatie xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <metadata>
    <meta name="DC.title" content="Klimaatbeleid; Brief regering"/>
    <meta name="OVERHEIDop.dossiernummer" content="32813"/>
  </metadata>
  <kamerstuk>
    <kamerstukkop>
      <kamer nummer="2">Tweede Kamer der Staten-Generaal</kamer>
      <vergaderjaar>Vergaderjaar 2024–2025</vergaderjaar>
    </kamerstukkop>
    <dossier>
      <dossiernummer><dossiernr>32 813</dossiernr></dossiernummer>
      <titel>Kabinetsaanpak Klimaatbeleid</titel>
    </dossier>
    <stuk>
      <stuknr><ondernummer>1412</ondernummer></stuknr>
      <titel>BRIEF VAN DE MINISTER VAN KLIMAAT EN GROENE GROEI</titel>
      <algemeen>
        <kop><titel>Inleiding</titel></kop>
        <al>Hierbij informeer ik uw Kamer over de <nadruk type="cur">voortgang</nadruk> van het
          klimaatbeleid in Noord-Brabant en Friesland.<noot id="ID-1" type="voet"><noot.nr>1</noot.nr><noot.al>Kamerstuk 32 813, nr. 1400.</noot.al></noot> De ĳzeren
          voorraad is geëvalueerd &amp; gecontroleerd.</al>
        <tussenkop>Maatregelen</tussenkop>
        <lijst type="expliciet">
          <li><li.nr>1.</li.nr><al>subsidie voor warmtepompen;</al></li>
          <li><li.nr>2.</li.nr><al>een <extref doc="http://example.invalid">regeling</extref> voor isolatie.</al></li>
        </lijst>
        <table><tgroup cols="2"><colspec colname="c1"/><colspec colname="c2"/>
          <thead><row><entry>Jaar</entry><entry>Uitstoot (Mt)</entry></row></thead>
          <tbody><row><entry>2023</entry><entry>155,6</entry></row></tbody>
        </tgroup></table>
        <ondertekening><al>De Minister van Klimaat en Groene Groei,</al><al><naam><achternaam>Hermans</achternaam></naam></al></ondertekening>
      </algemeen>
    </stuk>
  </kamerstuk>
</officiele-publicatie>"#;

    #[test]
    fn a_kamerstuk_reads_as_paragraphs_with_lists_tables_and_notes() {
        let text = read(KAMERSTUK).unwrap();
        let expected = "Tweede Kamer der Staten-Generaal Vergaderjaar 2024–2025\n\n\
            32 813\n\n\
            Kabinetsaanpak Klimaatbeleid\n\n\
            1412\n\n\
            BRIEF VAN DE MINISTER VAN KLIMAAT EN GROENE GROEI\n\n\
            Inleiding\n\n\
            Hierbij informeer ik uw Kamer over de voortgang van het klimaatbeleid in Noord-Brabant en \
            Friesland.[1] De ĳzeren voorraad is geëvalueerd & gecontroleerd.\n\n\
            Maatregelen\n\n\
            1. subsidie voor warmtepompen;\n\n\
            2. een regeling voor isolatie.\n\n\
            Jaar | Uitstoot (Mt)\n\n\
            2023 | 155,6\n\n\
            De Minister van Klimaat en Groene Groei,\n\n\
            Hermans\n\n\
            Noten\n\n\
            [1] Kamerstuk 32 813, nr. 1400.";
        assert_eq!(text, expected);
        assert!(!text.contains("DC.title"), "metadata is dropped");
    }

    #[test]
    fn empty_templates_are_not_text() {
        let only_metadata =
            r#"<officiele-publicatie><metadata><meta name="x" content="y"/></metadata></officiele-publicatie>"#;
        assert_eq!(read(only_metadata), Err(TextError::EmptyRendition));
        let not_available = "<kamerstuk><al>Dit document is niet beschikbaar in HTML-formaat.</al></kamerstuk>";
        assert_eq!(read(not_available), Err(TextError::EmptyRendition));
    }

    #[test]
    fn broken_markup_is_malformed_never_text() {
        for bad in [
            "<kamerstuk><al>afgebroken",
            "<kamerstuk><al>verkeerd</titel></kamerstuk>",
            "<a/><b/>",
            "",
            "gewoon tekst",
            "<al>&#xD800;</al>",
        ] {
            assert!(
                matches!(
                    read(bad),
                    Err(TextError::Malformed {
                        format: Format::Xml,
                        ..
                    })
                ),
                "{bad:?} gave {:?}",
                read(bad)
            );
        }
    }

    #[test]
    fn caps_hold_depth_characters_and_bytes() {
        let deep = format!("{}x{}", "<a>".repeat(300), "</a>".repeat(300));
        assert_eq!(read(&deep), Err(TextError::TooDeep { limit: 256 }));
        let caps = Caps {
            max_text_chars: 10,
            ..Caps::default()
        };
        assert_eq!(
            read_xml(b"<al>elf tekens!</al>", &caps),
            Err(TextError::TooLong { limit_chars: 10 })
        );
        let caps = Caps {
            max_input_bytes: 8,
            ..Caps::default()
        };
        assert_eq!(
            read_xml(b"<al>negen</al>", &caps),
            Err(TextError::TooLarge { limit_bytes: 8 })
        );
    }

    #[test]
    fn entities_of_a_dtd_are_refused_never_expanded() {
        let bomb = r#"<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<al>a &lol2; b &#233; c</al>"#;
        assert!(matches!(
            read_xml(bomb.as_bytes(), &Caps::default()),
            Err(TextError::Malformed { .. })
        ));
        let undeclared = "<al>a &lol2; b</al>";
        assert!(matches!(
            read_xml(undeclared.as_bytes(), &Caps::default()),
            Err(TextError::Malformed { .. })
        ));
        assert_eq!(read("<!DOCTYPE al><al>a &#233; &amp; b</al>").unwrap(), "a é & b");
    }

    #[test]
    fn latin1_and_utf16_declarations_are_read() {
        let latin1: Vec<u8> = b"<?xml version=\"1.0\" encoding=\"ISO-8859-1\"?><al>Caf\xE9 \xEBn</al>".to_vec();
        assert_eq!(read_xml(&latin1, &Caps::default()).unwrap().text, "Café ën");
        let mut utf16 = vec![0xFF, 0xFE];
        for unit in "<al>ĳs</al>".encode_utf16() {
            utf16.extend_from_slice(&unit.to_le_bytes());
        }
        assert_eq!(read_xml(&utf16, &Caps::default()).unwrap().text, "ĳs");
        assert!(matches!(
            read_xml(b"<al>\xFF</al>", &Caps::default()),
            Err(TextError::Malformed { .. })
        ));
    }
}
