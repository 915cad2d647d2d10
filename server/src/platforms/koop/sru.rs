//! The SRU envelope KOOP's search service answers in, read once for every collection
//! ([`parse_sru`]): the count, the `gzd` records, the next position and the
//! diagnostics, in SRU 1.2 (`x-connection=BWB`, `cvdr`) or SRU 2.0 (the officiële
//! publicaties at `repository.overheid.nl/sru`) — PLATFORMS.md §10.1.
//!
//! Invariants:
//! - The structure is recognised by namespace and local name, never by prefix: the root
//!   must be `searchRetrieveResponse` in the namespace of the version asked (an answer
//!   in the other version, an HTML page or another document is [`SruError`]); records
//!   are `gzd` in `http://standaarden.overheid.nl/sru`; diagnostics are `diagnostic` in
//!   the version's diagnostic namespace. A record's fields are offered to its
//!   collection's [`SruRecord`] by local name, with their parent's local name and their
//!   attributes, whatever their namespace (the service mixes `dcterms:`, `overheid:`,
//!   `overheidbwb:`, `overheidwetgeving:` and unprefixed ones).
//! - Only a complete, well-formed answer is read ([`crate::xml`]): one cut
//!   off after a complete record, a document type with declarations or an undeclared
//!   entity is an error, never a shorter page.
//! - Nothing here decides what an answer means (rejected, warning, overload): the
//!   service's reading does ([`super::read_answer`]). A missing count stays `None`,
//!   never 0.
//! - Any input gives a result or an error, never a panic; nesting deeper than
//!   [`MAX_DEPTH`] and more than [`MAX_RECORDS`] records are errors, so a hostile answer
//!   cannot make the reader hold more than the body cap already allows.
//!
//! What this module does not do: read the documents the records point to, or talk HTTP.

use quick_xml::NsReader;
use quick_xml::events::{BytesStart, Event};
use quick_xml::name::ResolveResult;
use serde::{Deserialize, Serialize};

use crate::xml::{WellFormed, XmlFault, resolve_reference};

/// The SRU 2.0 response namespace.
pub const SRU20_NS: &str = "http://docs.oasis-open.org/ns/search-ws/sruResponse";
/// The SRU 2.0 diagnostics namespace.
pub const DIAG20_NS: &str = "http://docs.oasis-open.org/ns/search-ws/diagnostic";
/// The SRU 1.2 namespace.
pub const SRU12_NS: &str = "http://www.loc.gov/zing/srw/";
/// The SRU 1.2 diagnostics namespace.
pub const DIAG12_NS: &str = "http://www.loc.gov/zing/srw/diagnostic/";
/// The namespace of the `gzd` record schema.
pub const GZD_NS: &str = "http://standaarden.overheid.nl/sru";

/// Deepest element nesting read.
pub const MAX_DEPTH: usize = 64;
/// Most records read from one answer (the service sends at most 100 per page).
pub const MAX_RECORDS: usize = 1000;
/// Longest text kept of one field, in bytes (titles and abstracts are far shorter).
const MAX_FIELD_BYTES: usize = 16 * 1024;
/// Most attributes kept of one element of a record, and their longest value.
const MAX_ATTRIBUTES: usize = 8;
const MAX_ATTRIBUTE_BYTES: usize = 256;

/// The SRU version a collection is asked in, and so the namespaces of its answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SruVersion {
    /// SRU 1.2 (`http://www.loc.gov/zing/srw/`).
    V1_2,
    /// SRU 2.0 (the OASIS search-ws namespaces).
    V2_0,
}

impl SruVersion {
    /// `1.2` or `2.0`, as the request's `version` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            SruVersion::V1_2 => "1.2",
            SruVersion::V2_0 => "2.0",
        }
    }

    fn namespaces(self) -> (&'static str, &'static str) {
        match self {
            SruVersion::V1_2 => (SRU12_NS, DIAG12_NS),
            SruVersion::V2_0 => (SRU20_NS, DIAG20_NS),
        }
    }
}

/// One SRU diagnostic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `info:srw/diagnostic/1/10` or the service's own code.
    pub uri: String,
    /// What it is about (the clause, the parameter).
    pub details: Option<String>,
    /// The service's message.
    pub message: Option<String>,
}

impl Diagnostic {
    /// The number of a standard SRU diagnostic (`info:srw/diagnostic/1/N`), if it is one.
    pub fn standard_number(&self) -> Option<u32> {
        self.uri.trim().strip_prefix("info:srw/diagnostic/1/")?.parse().ok()
    }

    /// The diagnostic as one line: message, details and code.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = self.message.as_deref().filter(|m| !m.is_empty()) {
            parts.push(m.to_owned());
        }
        if let Some(d) = self.details.as_deref().filter(|d| !d.is_empty()) {
            parts.push(format!("({d})"));
        }
        parts.push(format!("[{}]", self.uri));
        parts.join(" ")
    }
}

/// A field of a record as the envelope offers it: an element inside the `gzd` record
/// whose text is not empty.
#[derive(Clone, Copy, Debug)]
pub struct Field<'a> {
    /// Its local name: `identifier`, `title`, `locatie_toestand`, `itemUrl`.
    pub name: &'a str,
    /// Its parent's local name: `owmskern`, `tpmeta`, `enrichedData`, ….
    pub parent: &'a str,
    /// Its attributes (local name, value), at most a few.
    pub attributes: &'a [(String, String)],
    /// Its text, trimmed.
    pub value: &'a str,
}

impl Field<'_> {
    /// The value of the attribute with local name `name`.
    pub fn attribute(&self, name: &str) -> Option<&str> {
        self.attributes.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    /// Its text, owned.
    pub fn text(&self) -> Option<String> {
        Some(self.value.to_owned())
    }

    /// Puts its text in `slot` unless `slot` holds one already: the first of a repeated
    /// field is the record's.
    pub fn first(&self, slot: &mut String) {
        if slot.is_empty() {
            self.value.clone_into(slot);
        }
    }

    /// Adds its text to `list` while `list` holds fewer than `max` (a record's lists are
    /// bounded).
    pub fn push(&self, list: &mut Vec<String>, max: usize) {
        if list.len() < max {
            list.push(self.value.to_owned());
        }
    }
}

/// A collection's record, as its fields are read: each field is offered in document
/// order.
pub trait SruRecord: Default {
    /// Takes one field.
    fn take(&mut self, field: Field<'_>);
}

/// An SRU `searchRetrieveResponse`, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SruResponse<R> {
    /// `numberOfRecords`; `None` when absent (a rejected query, or an overload).
    pub number_of_records: Option<u64>,
    /// The records of this page.
    pub records: Vec<R>,
    /// `nextRecordPosition`, when sent.
    pub next_record_position: Option<u64>,
    /// Every diagnostic, in order.
    pub diagnostics: Vec<Diagnostic>,
}

impl<R> Default for SruResponse<R> {
    fn default() -> Self {
        SruResponse {
            number_of_records: None,
            records: Vec::new(),
            next_record_position: None,
            diagnostics: Vec::new(),
        }
    }
}

/// Why an answer is not a readable SRU response.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SruError {
    /// Not well-formed XML.
    #[error("not well-formed XML at byte {position}: {detail}")]
    Xml {
        /// Where reading stopped.
        position: u64,
        /// What the reader said.
        detail: String,
    },
    /// Well-formed as far as it goes, but not a complete answer (cut off, declarations).
    #[error("{0}")]
    Incomplete(XmlFault),
    /// Well-formed, but not an SRU `searchRetrieveResponse` of the version asked.
    #[error("not an SRU {0} searchRetrieveResponse ({1})")]
    NotSru(&'static str, String),
    /// Bigger or deeper than BesluitBron reads.
    #[error("the answer exceeds what BesluitBron reads ({0})")]
    TooBig(&'static str),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ns {
    Sru,
    Diag,
    Gzd,
    Other,
}

/// An element on the reader's stack.
#[derive(Clone, Debug)]
struct Open {
    ns: Ns,
    local: String,
    /// Its attributes, kept only inside a record.
    attributes: Vec<(String, String)>,
}

/// Reads an SRU answer of `version` with records of kind `R`: bytes in, the response or
/// why it is not one.
pub fn parse_sru<R: SruRecord>(version: SruVersion, bytes: &[u8]) -> Result<SruResponse<R>, SruError> {
    let (sru_ns, diag_ns) = version.namespaces();
    let ns_of = |resolved: &ResolveResult<'_>| match resolved {
        ResolveResult::Bound(ns) => match ns.as_ref() {
            n if n == sru_ns => Ns::Sru,
            n if n == diag_ns => Ns::Diag,
            n if n == GZD_NS => Ns::Gzd,
            _ => Ns::Other,
        },
        _ => Ns::Other,
    };
    let mut reader = NsReader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    let mut checks = WellFormed::new(MAX_DEPTH);
    let mut stack: Vec<Open> = Vec::new();
    let mut text = String::new();
    let mut out = SruResponse::<R>::default();
    let mut record: Option<R> = None;
    let mut diagnostic: Option<Diagnostic> = None;
    loop {
        let position = reader.buffer_position();
        let (resolved, event) = reader.read_resolved_event().map_err(|e| SruError::Xml {
            position,
            detail: e.to_string(),
        })?;
        checks.see(&event).map_err(|fault| match fault {
            XmlFault::TooDeep(_) => SruError::TooBig("elements nested too deeply"),
            XmlFault::NoRoot => SruError::NotSru(version.as_str(), "no root element".to_owned()),
            other => SruError::Incomplete(other),
        })?;
        match &event {
            Event::Start(start) | Event::Empty(start) => {
                let ns = ns_of(&resolved);
                if stack.is_empty() {
                    check_root(version, &resolved, ns, start)?;
                }
                let open = begin(ns, start, &mut record, &mut diagnostic, &out)?;
                stack.push(open);
                text.clear();
                if matches!(event, Event::Empty(_)) {
                    end(&stack, "", &mut out, &mut record, &mut diagnostic);
                    stack.pop();
                }
            }
            Event::End(_) => {
                let value = text.trim().to_owned();
                end(&stack, &value, &mut out, &mut record, &mut diagnostic);
                stack.pop();
                text.clear();
            }
            Event::Text(t) => push_bounded(&mut text, &t.xml10_content()),
            Event::CData(c) => push_bounded(&mut text, &c.xml10_content()),
            Event::GeneralRef(r) => push_bounded(&mut text, &resolve_reference(r).map_err(SruError::Incomplete)?),
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => {}
        }
    }
    Ok(out)
}

fn push_bounded(text: &mut String, more: &str) {
    if text.len() < MAX_FIELD_BYTES {
        let room = MAX_FIELD_BYTES - text.len();
        let mut cut = more.len().min(room);
        while !more.is_char_boundary(cut) {
            cut -= 1;
        }
        text.push_str(&more[..cut]);
    }
}

fn check_root(
    version: SruVersion,
    resolved: &ResolveResult<'_>,
    ns: Ns,
    root: &BytesStart<'_>,
) -> Result<(), SruError> {
    let local = root.local_name().into_inner().to_owned();
    if ns == Ns::Sru && local == "searchRetrieveResponse" {
        return Ok(());
    }
    let namespace = match resolved {
        ResolveResult::Bound(ns) => ns.as_ref().to_owned(),
        _ => "no namespace".to_owned(),
    };
    let other = match version {
        SruVersion::V1_2 => (SRU20_NS, "2.0"),
        SruVersion::V2_0 => (SRU12_NS, "1.2"),
    };
    if namespace == other.0 {
        return Err(SruError::NotSru(
            version.as_str(),
            format!("an SRU {} answer; BesluitBron asks for {}", other.1, version.as_str()),
        ));
    }
    let mut shown: String = local.chars().take(40).collect();
    if namespace.len() <= 100 {
        shown = format!("{shown} in {namespace}");
    }
    Err(SruError::NotSru(version.as_str(), format!("the root is {shown}")))
}

/// An element opens: start a record or a diagnostic; inside a record keep its attributes.
fn begin<R: SruRecord>(
    ns: Ns,
    start: &BytesStart<'_>,
    record: &mut Option<R>,
    diagnostic: &mut Option<Diagnostic>,
    out: &SruResponse<R>,
) -> Result<Open, SruError> {
    let local = start.local_name().into_inner().to_owned();
    let mut attributes = Vec::new();
    match (ns, local.as_str()) {
        (Ns::Gzd, "gzd") => {
            if out.records.len() >= MAX_RECORDS {
                return Err(SruError::TooBig("too many records"));
            }
            *record = Some(R::default());
        }
        (Ns::Diag, "diagnostic") => *diagnostic = Some(Diagnostic::default()),
        _ if record.is_some() => {
            for attribute in start.attributes().flatten().take(MAX_ATTRIBUTES) {
                let name = attribute.key.local_name().into_inner().to_owned();
                let Ok(value) = attribute.normalized_value(quick_xml::XmlVersion::Implicit1_0) else {
                    continue;
                };
                if value.len() <= MAX_ATTRIBUTE_BYTES {
                    attributes.push((name, value.trim().to_owned()));
                }
            }
        }
        _ => {}
    }
    Ok(Open { ns, local, attributes })
}

/// The element on top of `stack` closes with `value` as its text.
fn end<R: SruRecord>(
    stack: &[Open],
    value: &str,
    out: &mut SruResponse<R>,
    record: &mut Option<R>,
    diagnostic: &mut Option<Diagnostic>,
) {
    let Some(top) = stack.last() else { return };
    let parent = stack.len().checked_sub(2).map(|i| &stack[i]);
    let some = || (!value.is_empty()).then(|| value.to_owned());
    let at_top = parent.is_some_and(|p| p.ns == Ns::Sru) && stack.len() == 2;
    match (top.ns, top.local.as_str()) {
        (Ns::Sru, "numberOfRecords") if at_top => out.number_of_records = value.parse().ok(),
        (Ns::Sru, "nextRecordPosition") if at_top => out.next_record_position = value.parse().ok(),
        (Ns::Gzd, "gzd") => {
            if let Some(r) = record.take() {
                out.records.push(r);
            }
        }
        (Ns::Diag, "diagnostic") => {
            if let Some(d) = diagnostic.take() {
                out.diagnostics.push(d);
            }
        }
        (Ns::Diag, field) if record.is_none() => {
            if let Some(d) = diagnostic.as_mut() {
                match field {
                    "uri" => d.uri = value.to_owned(),
                    "details" => d.details = some(),
                    "message" => d.message = some(),
                    _ => {}
                }
            }
        }
        (_, name) => {
            let Some(r) = record.as_mut() else { return };
            if !value.is_empty() {
                r.take(Field {
                    name,
                    parent: parent.map_or("", |p| p.local.as_str()),
                    attributes: &top.attributes,
                    value,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A record that keeps every field it is offered, as `parent/name=value`.
    #[derive(Default, Debug, PartialEq)]
    struct Fields(Vec<String>);

    impl SruRecord for Fields {
        fn take(&mut self, f: Field<'_>) {
            let attributes: Vec<String> = f.attributes.iter().map(|(n, v)| format!("@{n}={v}")).collect();
            self.0
                .push(format!("{}/{}={}{}", f.parent, f.name, f.value, attributes.join("")));
        }
    }

    const PAGE_20: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<sru:searchRetrieveResponse xmlns:sru="http://docs.oasis-open.org/ns/search-ws/sruResponse">
  <sru:version>2.0</sru:version>
  <sru:numberOfRecords>2</sru:numberOfRecords>
  <sru:records>
    <sru:record><sru:recordData>
        <gzd:gzd xmlns:gzd="http://standaarden.overheid.nl/sru"><gzd:originalData>
          <w:meta xmlns:w="http://standaarden.overheid.nl/wetgeving/" xmlns:d="http://purl.org/dc/terms/">
            <w:owmskern><d:identifier>gmb-2026-104512</d:identifier><d:title>Parkeren &amp; laden &#8212; Utrecht</d:title></w:owmskern>
          </w:meta></gzd:originalData>
          <gzd:enrichedData><gzd:itemUrl manifestation="xml">https://x/1.xml</gzd:itemUrl></gzd:enrichedData>
        </gzd:gzd>
    </sru:recordData></sru:record>
    <sru:record><sru:recordData>
        <g:gzd xmlns:g="http://standaarden.overheid.nl/sru"><g:originalData><title><![CDATA[Brief <regering>]]></title></g:originalData></g:gzd>
    </sru:recordData></sru:record>
  </sru:records>
  <sru:nextRecordPosition>3</sru:nextRecordPosition>
</sru:searchRetrieveResponse>"#;

    #[test]
    fn records_are_offered_field_by_field_with_parent_and_attributes() {
        let r = parse_sru::<Fields>(SruVersion::V2_0, PAGE_20.as_bytes()).unwrap();
        assert_eq!((r.number_of_records, r.next_record_position), (Some(2), Some(3)));
        assert_eq!(
            r.records,
            [
                Fields(vec![
                    "owmskern/identifier=gmb-2026-104512".into(),
                    "owmskern/title=Parkeren & laden \u{2014} Utrecht".into(),
                    "enrichedData/itemUrl=https://x/1.xml@manifestation=xml".into(),
                ]),
                Fields(vec!["originalData/title=Brief <regering>".into()]),
            ]
        );
    }

    #[test]
    fn the_version_asked_decides_the_namespaces() {
        let e = parse_sru::<Fields>(SruVersion::V1_2, PAGE_20.as_bytes()).unwrap_err();
        assert!(
            e.to_string().contains("an SRU 2.0 answer; BesluitBron asks for 1.2"),
            "{e}"
        );
        let v12 = r#"<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><numberOfRecords>0</numberOfRecords>
            <diagnostics><diagnostic xmlns="http://www.loc.gov/zing/srw/diagnostic/"><uri>info:srw/diagnostic/1/10</uri>
            <message>Query syntax error</message></diagnostic></diagnostics></searchRetrieveResponse>"#;
        let r = parse_sru::<Fields>(SruVersion::V1_2, v12.as_bytes()).unwrap();
        assert_eq!(r.number_of_records, Some(0));
        assert_eq!(
            r.diagnostics[0].describe(),
            "Query syntax error [info:srw/diagnostic/1/10]"
        );
        assert_eq!(r.diagnostics[0].standard_number(), Some(10));
        assert!(parse_sru::<Fields>(SruVersion::V2_0, v12.as_bytes()).is_err());
    }

    #[test]
    fn an_answer_cut_off_after_a_complete_record_is_not_a_shorter_page() {
        let cut = PAGE_20.find("</sru:record>").unwrap() + "</sru:record>".len();
        let e = parse_sru::<Fields>(SruVersion::V2_0, &PAGE_20.as_bytes()[..cut]).unwrap_err();
        assert!(matches!(e, SruError::Incomplete(XmlFault::EndsEarly { .. })), "{e}");
    }

    #[test]
    fn other_documents_are_refused() {
        for (body, why) in [
            ("<html><body>Fout</body></html>", "the root is html"),
            ("", "no root"),
            ("not xml at all", "outside its root"),
        ] {
            let e = parse_sru::<Fields>(SruVersion::V2_0, body.as_bytes()).unwrap_err();
            assert!(e.to_string().contains(why), "{body}: {e}");
        }
        let deep = format!(
            "<sru:searchRetrieveResponse xmlns:sru=\"{SRU20_NS}\">{}",
            "<a>".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(
            parse_sru::<Fields>(SruVersion::V2_0, deep.as_bytes()),
            Err(SruError::TooBig("elements nested too deeply"))
        );
        let entity =
            format!("<!DOCTYPE x [<!ENTITY e \"boo\">]><sru:searchRetrieveResponse xmlns:sru=\"{SRU20_NS}\"/>");
        assert!(matches!(
            parse_sru::<Fields>(SruVersion::V2_0, entity.as_bytes()),
            Err(SruError::Incomplete(XmlFault::Declarations))
        ));
    }
}
