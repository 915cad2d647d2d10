//! A small element tree over quick-xml: every Rechtspraak answer (an Atom feed, a value
//! list, the RDF and body of a ruling) is read into [`Element`]s with resolved namespaces,
//! then walked by the parsers in `wire.rs` and `body.rs`.
//!
//! Invariants: building a tree never panics and never recurses (the reader is iterative,
//! the stack is a `Vec`); nesting deeper than [`MAX_DEPTH`] is refused, so walking a tree
//! recursively afterwards is bounded too. Only a complete, well-formed answer is read
//! ([`crate::xml`]): one that ends before its root closes, declares entities
//! in its document type or refers to an undeclared entity is an error, never a tree.
//! Character references and the five predefined entities are resolved.
//!
//! What this module does not do: validate against a schema, or read DTDs.

use quick_xml::NsReader;
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;

use crate::xml::{WellFormed, XmlFault, resolve_reference};

/// Deepest nesting accepted. Real rulings nest a dozen levels; a deeper answer is garbage.
pub const MAX_DEPTH: usize = 200;

/// The Atom namespace.
pub const ATOM: &str = "http://www.w3.org/2005/Atom";
/// RDF.
pub const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
/// Dublin Core terms.
pub const DCTERMS: &str = "http://purl.org/dc/terms/";
/// Rechtspraak's own metadata terms.
pub const PSI: &str = "http://psi.rechtspraak.nl/";
/// The ECLI terms (formal relations name their ECLI in this namespace).
pub const ECLI: &str = "https://e-justice.europa.eu/ecli";
/// The namespace of `open-rechtspraak`, `uitspraak`, `conclusie` and their body.
pub const RECHTSPRAAK: &str = "http://www.rechtspraak.nl/schema/rechtspraak-1.0";

/// One attribute: its namespace (`""` for none), local name and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Attr {
    /// Namespace URI, or empty.
    pub ns: String,
    /// Local name.
    pub name: String,
    /// Value, references resolved.
    pub value: String,
}

/// A child of an element.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// A nested element.
    Element(Element),
    /// Text (CDATA included), references resolved, line ends normalised.
    Text(String),
}

/// An element with its namespace, attributes and children.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Element {
    /// Namespace URI, or empty.
    pub ns: String,
    /// Local name.
    pub name: String,
    /// Attributes (namespace declarations left out).
    pub attrs: Vec<Attr>,
    /// Children in document order.
    pub children: Vec<Node>,
}

impl Element {
    /// True when this element is `name` in namespace `ns`.
    pub fn is(&self, ns: &str, name: &str) -> bool {
        self.ns == ns && self.name == name
    }

    /// The child elements.
    pub fn elements(&self) -> impl Iterator<Item = &Element> {
        self.children.iter().filter_map(|c| match c {
            Node::Element(e) => Some(e),
            Node::Text(_) => None,
        })
    }

    /// The first child element `name` in `ns`.
    pub fn child(&self, ns: &str, name: &str) -> Option<&Element> {
        self.elements().find(|e| e.is(ns, name))
    }

    /// Every child element `name` in `ns`.
    pub fn children_named<'a>(&'a self, ns: &'a str, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.elements().filter(move |e| e.is(ns, name))
    }

    /// The first child element with local name `name`, whatever its namespace.
    pub fn child_local(&self, name: &str) -> Option<&Element> {
        self.elements().find(|e| e.name == name)
    }

    /// The value of attribute `name` in `ns` (`""`: no namespace).
    pub fn attr(&self, ns: &str, name: &str) -> Option<&str> {
        self.attrs
            .iter()
            .find(|a| a.ns == ns && a.name == name)
            .map(|a| a.value.as_str())
    }

    /// The value of the first attribute with local name `name`, whatever its namespace.
    pub fn attr_local(&self, name: &str) -> Option<&str> {
        self.attrs.iter().find(|a| a.name == name).map(|a| a.value.as_str())
    }

    /// All text below this element, concatenated.
    pub fn text(&self) -> String {
        let mut out = String::new();
        let mut stack: Vec<std::slice::Iter<'_, Node>> = vec![self.children.iter()];
        while let Some(top) = stack.last_mut() {
            match top.next() {
                Some(Node::Text(t)) => out.push_str(t),
                Some(Node::Element(e)) => stack.push(e.children.iter()),
                None => {
                    stack.pop();
                }
            }
        }
        out
    }

    /// All text below this element with runs of whitespace folded to one space and the
    /// ends trimmed (the value lists hold newlines inside `Identifier`).
    pub fn trimmed_text(&self) -> String {
        fold_space(&self.text())
    }
}

/// `text` with every run of whitespace folded to one space, trimmed.
pub fn fold_space(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Reads `bytes` (UTF-8) into its root element, or says why it cannot.
pub fn parse(bytes: &[u8]) -> Result<Element, String> {
    let text = std::str::from_utf8(bytes).map_err(|e| format!("not UTF-8: {e}"))?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut reader = NsReader::from_str(text);
    let mut checks = WellFormed::new(MAX_DEPTH);
    let mut stack: Vec<Element> = Vec::new();
    let mut root: Option<Element> = None;
    loop {
        let event = reader
            .read_event()
            .map_err(|e| format!("not well-formed XML at byte {}: {e}", reader.buffer_position()))?;
        checks.see(&event).map_err(|fault| match fault {
            XmlFault::TooDeep(_) => format!("nested deeper than {MAX_DEPTH} elements"),
            other => other.to_string(),
        })?;
        match event {
            Event::Start(ref start) | Event::Empty(ref start) => {
                let (ns, local) = reader.resolver().resolve_element(start.name());
                let mut element = Element {
                    ns: namespace(ns),
                    name: local.into_inner().to_owned(),
                    ..Element::default()
                };
                for attr in start.attributes() {
                    let attr = attr.map_err(|e| format!("a broken attribute: {e}"))?;
                    let key = attr.key.into_inner();
                    if key == "xmlns" || key.starts_with("xmlns:") {
                        continue;
                    }
                    let (ans, alocal) = reader.resolver().resolve_attribute(attr.key);
                    let value = attr
                        .normalized_value(quick_xml::XmlVersion::Implicit1_0)
                        .map_err(|e| format!("a broken attribute value: {e}"))?
                        .into_owned();
                    element.attrs.push(Attr {
                        ns: namespace(ans),
                        name: alocal.into_inner().to_owned(),
                        value,
                    });
                }
                if matches!(event, Event::Empty(_)) {
                    attach(&mut stack, &mut root, element);
                } else {
                    stack.push(element);
                }
            }
            Event::End(_) => {
                let element = stack.pop().ok_or("an end tag without a start")?;
                attach(&mut stack, &mut root, element);
            }
            Event::Text(t) => push_text(&mut stack, &t.xml10_content())?,
            Event::CData(c) => push_text(&mut stack, &c)?,
            Event::GeneralRef(r) => push_text(&mut stack, &resolve_reference(&r).map_err(|e| e.to_string())?)?,
            Event::Eof => break,
            _ => {}
        }
    }
    root.ok_or_else(|| "no root element".to_owned())
}

fn namespace(ns: ResolveResult<'_>) -> String {
    match ns {
        ResolveResult::Bound(ns) => ns.into_inner().to_owned(),
        ResolveResult::Unbound | ResolveResult::Unknown(_) => String::new(),
    }
}

fn attach(stack: &mut [Element], root: &mut Option<Element>, element: Element) {
    match stack.last_mut() {
        Some(parent) => parent.children.push(Node::Element(element)),
        None => *root = Some(element),
    }
}

fn push_text(stack: &mut [Element], text: &str) -> Result<(), String> {
    match stack.last_mut() {
        Some(parent) => {
            if let Some(Node::Text(last)) = parent.children.last_mut() {
                last.push_str(text);
            } else {
                parent.children.push(Node::Text(text.to_owned()));
            }
            Ok(())
        }
        None if text.trim().is_empty() => Ok(()),
        None => Err("text outside the root element".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespaces_references_and_whitespace() {
        let root = parse(
            "\u{feff}<?xml version=\"1.0\"?>\n<a xmlns=\"urn:x\" xmlns:p=\"urn:p\" p:k=\"v&amp;w\"><p:b>x &lt; &#233;y</p:b><c/></a>"
                .as_bytes(),
        )
        .unwrap();
        assert!(root.is("urn:x", "a"));
        assert_eq!(root.attr("urn:p", "k"), Some("v&w"));
        assert_eq!(root.child("urn:p", "b").unwrap().text(), "x < éy");
        assert!(root.child("urn:x", "c").is_some());
        assert_eq!(fold_space("\n   http://x/y \n  "), "http://x/y");
    }

    #[test]
    fn broken_and_hostile_input_is_an_error() {
        for bad in [
            &b"<a><b></a>"[..],
            b"<a>",
            b"",
            b"plain text",
            b"<a/><b/>",
            b"\xff\xfe<a/>",
            b"<a>&nbsp;</a>",
            b"<!DOCTYPE a [<!ENTITY xxe \"boo\">]><a>&xxe;</a>",
            b"<feed><entry>1</entry><entry>2</entry>",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
        let deep = format!("{}{}", "<a>".repeat(MAX_DEPTH + 1), "</a>".repeat(MAX_DEPTH + 1));
        assert!(parse(deep.as_bytes()).unwrap_err().contains("deeper"));
        let ok = format!("{}{}", "<a>".repeat(MAX_DEPTH), "</a>".repeat(MAX_DEPTH));
        assert!(parse(ok.as_bytes()).is_ok());
    }
}
