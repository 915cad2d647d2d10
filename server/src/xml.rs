//! Only complete, well-formed XML is read: the checks every reader of a platform's XML
//! answer makes on the events it reads ([`WellFormed`]), written once.
//!
//! Invariants (for a reader that shows [`WellFormed::see`] every event before acting
//! on it and resolves every reference with [`resolve_reference`]):
//! - a body that ends before its root element closes is [`XmlFault::EndsEarly`], never a
//!   shorter success — the shape of an answer cut off after a complete record, with an
//!   honest `Content-Length`;
//! - a document type with an internal subset (entity or element declarations) is
//!   [`XmlFault::Declarations`]; a plain `<!DOCTYPE x>` or one naming an external DTD
//!   is harmless and passes (nothing is ever fetched);
//! - a reference to an entity other than the five predefined ones is
//!   [`XmlFault::UndeclaredEntity`], never text;
//! - a second root element is [`XmlFault::AfterRoot`], text outside the root
//!   [`XmlFault::OutsideRoot`];
//! - nesting deeper than the reader's bound is [`XmlFault::TooDeep`].
//!
//! What this module does not do: parse (quick-xml does; mismatched end tags are its
//! `check_end_names`), or know what any platform's elements mean.

use quick_xml::events::{BytesRef, Event};

/// Why an XML answer is not read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum XmlFault {
    /// The body ends inside an element.
    #[error("the answer ends before its root element closes (cut off after {open} open elements)")]
    EndsEarly {
        /// Elements still open at the end.
        open: usize,
    },
    /// The body holds no element at all.
    #[error("the answer holds no XML element")]
    NoRoot,
    /// A document type with declarations (an internal subset).
    #[error("the answer declares entities or elements in its document type, which BesluitBron does not read")]
    Declarations,
    /// A reference to an entity nobody declared.
    #[error("the answer refers to an undeclared entity `&{0};`")]
    UndeclaredEntity(String),
    /// A character reference that names no character.
    #[error("the answer holds a broken character reference ({0})")]
    BadCharacter(String),
    /// Another element after the root element closed.
    #[error("the answer goes on after its root element")]
    AfterRoot,
    /// Text outside the root element.
    #[error("the answer holds text outside its root element")]
    OutsideRoot,
    /// Nested deeper than the reader reads.
    #[error("the answer nests elements deeper than {0}")]
    TooDeep(usize),
}

/// The checks of one document's events, in order.
#[derive(Clone, Debug)]
pub struct WellFormed {
    depth: usize,
    max_depth: usize,
    seen_root: bool,
    root_closed: bool,
}

impl WellFormed {
    /// Checks for a document nested at most `max_depth` elements deep.
    pub fn new(max_depth: usize) -> WellFormed {
        WellFormed {
            depth: 0,
            max_depth,
            seen_root: false,
            root_closed: false,
        }
    }

    /// Elements open now (the root counts one).
    pub fn depth(&self) -> usize {
        self.depth
    }

    /// Takes the next event; an error says why the document is not read. At
    /// [`Event::Eof`] it checks that the root element was there and closed.
    pub fn see(&mut self, event: &Event<'_>) -> Result<(), XmlFault> {
        match event {
            Event::Start(_) => {
                self.element()?;
                self.depth += 1;
                if self.depth > self.max_depth {
                    return Err(XmlFault::TooDeep(self.max_depth));
                }
            }
            Event::Empty(_) => {
                self.element()?;
                if self.depth == 0 {
                    self.root_closed = true;
                }
            }
            Event::End(_) => {
                // quick-xml refuses an end tag without its start (check_end_names).
                self.depth = self.depth.saturating_sub(1);
                if self.depth == 0 {
                    self.root_closed = true;
                }
            }
            Event::Text(t)
                if self.depth == 0
                    && !t
                        .trim_matches(|c: char| c.is_whitespace() || c == '\u{feff}')
                        .is_empty() =>
            {
                return Err(XmlFault::OutsideRoot);
            }
            Event::CData(_) | Event::GeneralRef(_) if self.depth == 0 => return Err(XmlFault::OutsideRoot),
            Event::DocType(d) if declares(d) => return Err(XmlFault::Declarations),
            Event::Eof => {
                if !self.seen_root {
                    return Err(XmlFault::NoRoot);
                }
                if self.depth > 0 {
                    return Err(XmlFault::EndsEarly { open: self.depth });
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn element(&mut self) -> Result<(), XmlFault> {
        if self.root_closed {
            return Err(XmlFault::AfterRoot);
        }
        self.seen_root = true;
        Ok(())
    }
}

/// True when a document type's text holds declarations: an internal subset (`[`).
fn declares(doctype: &str) -> bool {
    doctype.contains('[') || doctype.contains("<!")
}

/// The text of a character reference or one of the five predefined entities; any
/// other entity is undeclared (this reader reads no declarations).
pub fn resolve_reference(r: &BytesRef<'_>) -> Result<String, XmlFault> {
    if r.is_char_ref() {
        return match r.resolve_char_ref() {
            Ok(Some(c)) => Ok(c.to_string()),
            Ok(None) => Err(XmlFault::BadCharacter("an empty character reference".to_owned())),
            Err(e) => Err(XmlFault::BadCharacter(e.to_string())),
        };
    }
    let name = r.xml10_content();
    quick_xml::escape::resolve_predefined_entity(&name)
        .map(str::to_owned)
        .ok_or_else(|| {
            let mut shown: String = name.chars().take(20).collect();
            if name.chars().count() > 20 {
                shown.push('…');
            }
            XmlFault::UndeclaredEntity(shown)
        })
}

#[cfg(test)]
mod tests {
    use quick_xml::Reader;

    use super::*;

    /// Reads `xml` to the end through the checks: the text it holds, or the fault.
    fn read(xml: &str) -> Result<String, String> {
        let mut reader = Reader::from_str(xml);
        let mut checks = WellFormed::new(8);
        let mut text = String::new();
        loop {
            let event = reader.read_event().map_err(|e| e.to_string())?;
            checks.see(&event).map_err(|e| e.to_string())?;
            match event {
                Event::Text(t) => text.push_str(&t.xml10_content()),
                Event::GeneralRef(r) => text.push_str(&resolve_reference(&r).map_err(|e| e.to_string())?),
                Event::Eof => return Ok(text),
                _ => {}
            }
        }
    }

    #[test]
    fn a_complete_document_is_read_with_its_references() {
        assert_eq!(
            read("<?xml version=\"1.0\"?>\n<a><b>x &amp; &#233;</b><c/></a>\n").unwrap(),
            "\nx & é\n"
        );
        assert_eq!(read("<a/>").unwrap(), "");
        assert!(read("<!DOCTYPE a><a/>").is_ok(), "a plain document type is harmless");
        assert!(read("<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" \"x.dtd\"><html/>").is_ok());
    }

    #[test]
    fn a_body_cut_off_after_a_complete_record_is_an_error() {
        let e = read("<records><record>1</record><record>2</record>").unwrap_err();
        assert!(e.contains("ends before its root element closes"), "{e}");
        assert!(read("").unwrap_err().contains("no XML element"));
        assert!(read("   ").unwrap_err().contains("no XML element"));
    }

    #[test]
    fn declarations_and_undeclared_entities_are_refused() {
        let e = read("<!DOCTYPE a [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]><a>&xxe;</a>").unwrap_err();
        assert!(e.contains("declares entities"), "{e}");
        let e = read("<a>&xxe;XXEMARK</a>").unwrap_err();
        assert!(e.contains("undeclared entity `&xxe;`"), "{e}");
        assert!(read("<a>&#0;</a>").is_err());
    }

    #[test]
    fn nothing_goes_on_after_the_root_and_nesting_is_bounded() {
        assert!(read("<a/><b/>").unwrap_err().contains("goes on after"));
        assert!(read("<a></a>text").unwrap_err().contains("outside its root"));
        assert!(read("garbage<a></a>").unwrap_err().contains("outside its root"));
        assert!(read("<a></a>\n  \n").is_ok());
        assert!(read(&format!("{}{}", "<a>".repeat(8), "</a>".repeat(8))).is_ok());
        assert!(
            read(&format!("{}{}", "<a>".repeat(9), "</a>".repeat(9)))
                .unwrap_err()
                .contains("deeper than 8")
        );
    }
}
