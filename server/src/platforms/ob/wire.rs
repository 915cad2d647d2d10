//! The SRU 2.0 answer of Officiële Bekendmakingen, read with namespaces
//! ([`parse_sru`]): the count, the `gzd` records and the diagnostics (PLATFORMS.md §10.1).
//!
//! Invariants:
//! - The structure is recognised by namespace and local name, never by prefix: the root
//!   must be `searchRetrieveResponse` in the SRU 2.0 response namespace (an SRU 1.2
//!   answer, an HTML page or another document is [`SruError`]); records are
//!   `gzd:gzd` in `http://standaarden.overheid.nl/sru`; diagnostics are
//!   `diag:diagnostic` in the OASIS diagnostic namespace. The fields inside `owmskern`,
//!   `owmsmantel` and `tpmeta` are read by local name whatever their namespace (the
//!   platform mixes `dcterms:`, `overheidwetgeving:` and `c:` there).
//! - Nothing here decides what an answer means (rejected, warning, overload): the client
//!   does, from [`SruResponse`]. A missing count stays `None`, never 0.
//! - Any input gives a result or an error, never a panic; nesting deeper than
//!   [`MAX_DEPTH`] and more than [`MAX_RECORDS`] records are errors, so a hostile answer
//!   cannot make the reader hold more than the body cap already allows.
//!
//! What this module does not do: read the text renditions (the XML of a publication
//! itself), or talk HTTP.

use quick_xml::NsReader;
use quick_xml::events::{BytesRef, BytesStart, Event};
use quick_xml::name::ResolveResult;
use serde::{Deserialize, Serialize};

/// The SRU 2.0 response namespace.
pub const SRU_NS: &str = "http://docs.oasis-open.org/ns/search-ws/sruResponse";
/// The SRU diagnostics namespace.
pub const DIAG_NS: &str = "http://docs.oasis-open.org/ns/search-ws/diagnostic";
/// The namespace of the `gzd` record schema.
pub const GZD_NS: &str = "http://standaarden.overheid.nl/sru";
/// The namespace of `overheidwetgeving:meta`.
pub const WETGEVING_NS: &str = "http://standaarden.overheid.nl/wetgeving/";
/// The SRU 1.2 namespace (`version=1.2` answers): refused.
pub const SRU12_NS: &str = "http://www.loc.gov/zing/srw/";

/// Deepest element nesting read.
pub const MAX_DEPTH: usize = 64;
/// Most records read from one answer (the platform sends at most 100 per page).
pub const MAX_RECORDS: usize = 1000;
/// Longest text kept of one field, in bytes (titles and abstracts are far shorter).
const MAX_FIELD_BYTES: usize = 16 * 1024;
/// Most values kept of a repeatable field (creators, subjects, renditions).
const MAX_VALUES: usize = 64;

/// One SRU diagnostic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `info:srw/diagnostic/1/10` or a platform's own code.
    pub uri: String,
    /// What it is about (the clause, the parameter).
    pub details: Option<String>,
    /// The platform's message.
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

/// A rendition of a publication (`gzd:itemUrl manifestation="…"`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Manifestation {
    /// `xml`, `html`, `pdf`, `odt`, `metadata`, `metadataowms`.
    pub kind: String,
    /// Where it is.
    pub url: String,
}

/// One publication as the SRU answer describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ObRecord {
    /// `dcterms:identifier`: `gmb-2026-104512`, `kst-26100-1`, ….
    pub identifier: String,
    /// `dcterms:title`.
    pub title: String,
    /// `dcterms:type`: the kind of document.
    pub document_type: Option<String>,
    /// `dcterms:creator`: the organisation(s).
    pub creators: Vec<String>,
    /// `dcterms:date`: the document's own date (dagtekening).
    pub date: Option<String>,
    /// `dcterms:available`: the publication date.
    pub available: Option<String>,
    /// `dcterms:modified`.
    pub modified: Option<String>,
    /// `dcterms:subject`.
    pub subjects: Vec<String>,
    /// `dcterms:abstract`.
    pub summary: Option<String>,
    /// `tpmeta/publicatienaam`: the journal.
    pub publication: Option<String>,
    /// `tpmeta/publicatienummer`.
    pub number: Option<String>,
    /// `tpmeta/jaargang`.
    pub volume: Option<String>,
    /// `tpmeta/organisatietype`.
    pub organization_type: Option<String>,
    /// `tpmeta/dossiernummer`.
    pub dossier: Option<String>,
    /// `tpmeta/ondernummer`.
    pub subnumber: Option<String>,
    /// `tpmeta/vergaderjaar`.
    pub session_year: Option<String>,
    /// `gzd:preferredUrl`: the page for people.
    pub preferred_url: Option<String>,
    /// `gzd:url`: the PDF.
    pub pdf_url: Option<String>,
    /// `gzd:itemUrl`, one per rendition.
    pub manifestations: Vec<Manifestation>,
}

impl ObRecord {
    /// The URL of rendition `kind`, if the record lists it.
    pub fn rendition(&self, kind: &str) -> Option<&str> {
        self.manifestations
            .iter()
            .find(|m| m.kind == kind)
            .map(|m| m.url.as_str())
    }
}

/// An SRU `searchRetrieveResponse`, as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SruResponse {
    /// `numberOfRecords`; `None` when absent (a rejected query, or an overload).
    pub number_of_records: Option<u64>,
    /// The records of this page.
    pub records: Vec<ObRecord>,
    /// `nextRecordPosition`, when sent.
    pub next_record_position: Option<u64>,
    /// Every diagnostic, in order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Why an answer is not a readable SRU 2.0 response.
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
    /// Well-formed, but not an SRU 2.0 `searchRetrieveResponse`.
    #[error("not an SRU 2.0 searchRetrieveResponse ({0})")]
    NotSru(String),
    /// Bigger or deeper than BesluitBron reads.
    #[error("the answer exceeds what BesluitBron reads ({0})")]
    TooBig(&'static str),
}

/// Which namespace an element is in, as far as this reader cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ns {
    Sru,
    Diag,
    Gzd,
    Wetgeving,
    Other,
}

fn ns_of(resolved: &ResolveResult<'_>) -> Ns {
    match resolved {
        ResolveResult::Bound(ns) => match ns.as_ref() {
            n if n == SRU_NS => Ns::Sru,
            n if n == DIAG_NS => Ns::Diag,
            n if n == GZD_NS => Ns::Gzd,
            n if n == WETGEVING_NS => Ns::Wetgeving,
            _ => Ns::Other,
        },
        _ => Ns::Other,
    }
}

/// An element on the reader's stack.
#[derive(Clone, Debug)]
struct Open {
    ns: Ns,
    local: String,
}

/// Reads an SRU 2.0 answer: bytes in, the response or why it is not one.
pub fn parse_sru(bytes: &[u8]) -> Result<SruResponse, SruError> {
    let mut reader = NsReader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    let mut stack: Vec<Open> = Vec::new();
    let mut text = String::new();
    let mut out = SruResponse::default();
    let mut record: Option<ObRecord> = None;
    let mut diagnostic: Option<Diagnostic> = None;
    let mut item_kind: Option<String> = None;
    let mut seen_root = false;
    loop {
        let position = reader.buffer_position();
        let (resolved, event) = reader.read_resolved_event().map_err(|e| SruError::Xml {
            position,
            detail: e.to_string(),
        })?;
        match event {
            Event::Start(start) => {
                let open = open(ns_of(&resolved), &start);
                if !seen_root {
                    check_root(&resolved, &open)?;
                    seen_root = true;
                }
                if stack.len() >= MAX_DEPTH {
                    return Err(SruError::TooBig("elements nested too deeply"));
                }
                begin(&open, &start, &mut record, &mut diagnostic, &mut item_kind, &out)?;
                stack.push(open);
                text.clear();
            }
            Event::Empty(start) => {
                let open = open(ns_of(&resolved), &start);
                if !seen_root {
                    check_root(&resolved, &open)?;
                    seen_root = true;
                }
                begin(&open, &start, &mut record, &mut diagnostic, &mut item_kind, &out)?;
                stack.push(open);
                text.clear();
                end(&stack, "", &mut out, &mut record, &mut diagnostic, &mut item_kind);
                stack.pop();
            }
            Event::End(_) => {
                let value = text.trim().to_owned();
                end(&stack, &value, &mut out, &mut record, &mut diagnostic, &mut item_kind);
                stack.pop();
                text.clear();
            }
            Event::Text(t) => push_bounded(&mut text, &t.xml10_content()),
            Event::CData(c) => push_bounded(&mut text, &c.xml10_content()),
            Event::GeneralRef(r) => {
                let resolved = resolve_reference(&r).map_err(|detail| SruError::Xml { position, detail })?;
                push_bounded(&mut text, &resolved);
            }
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => {}
        }
    }
    if !seen_root {
        return Err(SruError::NotSru("no root element".to_owned()));
    }
    Ok(out)
}

/// The text of an entity or character reference (`&amp;`, `&#233;`).
pub fn resolve_reference(r: &BytesRef<'_>) -> Result<String, String> {
    if r.is_char_ref() {
        return match r.resolve_char_ref() {
            Ok(Some(c)) => Ok(c.to_string()),
            Ok(None) => Err("an empty character reference".to_owned()),
            Err(e) => Err(e.to_string()),
        };
    }
    let name = r.xml10_content();
    quick_xml::escape::resolve_predefined_entity(&name)
        .map(str::to_owned)
        .ok_or_else(|| {
            format!(
                "unknown entity `&{}{};`",
                name.chars().take(20).collect::<String>(),
                if name.chars().count() > 20 { "…" } else { "" }
            )
        })
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

fn open(ns: Ns, start: &BytesStart<'_>) -> Open {
    Open {
        ns,
        local: start.local_name().into_inner().to_owned(),
    }
}

fn check_root(resolved: &ResolveResult<'_>, root: &Open) -> Result<(), SruError> {
    if root.ns == Ns::Sru && root.local == "searchRetrieveResponse" {
        return Ok(());
    }
    let ns = match resolved {
        ResolveResult::Bound(ns) => ns.as_ref().to_owned(),
        _ => "no namespace".to_owned(),
    };
    if ns == SRU12_NS {
        return Err(SruError::NotSru(
            "an SRU 1.2 answer; BesluitBron asks for 2.0".to_owned(),
        ));
    }
    let mut shown: String = root.local.chars().take(40).collect();
    if ns.len() <= 100 {
        shown = format!("{shown} in {ns}");
    }
    Err(SruError::NotSru(format!("the root is {shown}")))
}

/// An element opens: start a record, a diagnostic or a rendition.
fn begin(
    open: &Open,
    start: &BytesStart<'_>,
    record: &mut Option<ObRecord>,
    diagnostic: &mut Option<Diagnostic>,
    item_kind: &mut Option<String>,
    out: &SruResponse,
) -> Result<(), SruError> {
    match (open.ns, open.local.as_str()) {
        (Ns::Gzd, "gzd") => {
            if out.records.len() >= MAX_RECORDS {
                return Err(SruError::TooBig("too many records"));
            }
            *record = Some(ObRecord::default());
        }
        (Ns::Diag, "diagnostic") => *diagnostic = Some(Diagnostic::default()),
        (Ns::Gzd, "itemUrl") => {
            *item_kind = start.try_get_attribute("manifestation").ok().flatten().and_then(|a| {
                a.normalized_value(quick_xml::XmlVersion::Implicit1_0)
                    .ok()
                    .map(|v| v.trim().to_owned())
            });
        }
        _ => {}
    }
    Ok(())
}

/// The element on top of `stack` closes with `value` as its text.
fn end(
    stack: &[Open],
    value: &str,
    out: &mut SruResponse,
    record: &mut Option<ObRecord>,
    diagnostic: &mut Option<Diagnostic>,
    item_kind: &mut Option<String>,
) {
    let Some(top) = stack.last() else { return };
    let parent = stack.len().checked_sub(2).map(|i| &stack[i]);
    let some = || (!value.is_empty()).then(|| value.to_owned());
    match (top.ns, top.local.as_str()) {
        (Ns::Sru, "numberOfRecords") if parent.is_some_and(|p| p.ns == Ns::Sru) => {
            out.number_of_records = value.parse().ok();
        }
        (Ns::Sru, "nextRecordPosition") if parent.is_some_and(|p| p.ns == Ns::Sru) => {
            out.next_record_position = value.parse().ok();
        }
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
        (Ns::Diag, field) => {
            if let Some(d) = diagnostic.as_mut() {
                match field {
                    "uri" => d.uri = value.to_owned(),
                    "details" => d.details = some(),
                    "message" => d.message = some(),
                    _ => {}
                }
            }
        }
        (Ns::Gzd, "preferredUrl") => set(record, |r| r.preferred_url = some()),
        (Ns::Gzd, "url") => set(record, |r| r.pdf_url = some()),
        (Ns::Gzd, "itemUrl") => {
            let kind = item_kind.take().unwrap_or_default();
            set(record, |r| {
                if !value.is_empty() && r.manifestations.len() < MAX_VALUES {
                    r.manifestations.push(Manifestation {
                        kind,
                        url: value.to_owned(),
                    });
                }
            });
        }
        (_, field) => {
            // A metadata field: its container decides what it is.
            let Some(container) =
                stack.iter().rev().skip(1).find(|o| {
                    o.ns == Ns::Wetgeving && matches!(o.local.as_str(), "owmskern" | "owmsmantel" | "tpmeta")
                })
            else {
                return;
            };
            let in_container = parent.is_some_and(|p| std::ptr::eq(p, container));
            if !in_container {
                return;
            }
            set(record, |r| metadata_field(r, &container.local, field, value));
        }
    }
}

fn set(record: &mut Option<ObRecord>, f: impl FnOnce(&mut ObRecord)) {
    if let Some(r) = record.as_mut() {
        f(r);
    }
}

fn metadata_field(r: &mut ObRecord, container: &str, field: &str, value: &str) {
    if value.is_empty() {
        return;
    }
    let v = || Some(value.to_owned());
    let push = |list: &mut Vec<String>| {
        if list.len() < MAX_VALUES {
            list.push(value.to_owned());
        }
    };
    match (container, field) {
        ("owmskern", "identifier") => r.identifier = value.to_owned(),
        ("owmskern", "title") => r.title = value.to_owned(),
        ("owmskern", "type") => r.document_type = v(),
        ("owmskern", "creator") => push(&mut r.creators),
        ("owmskern", "modified") => r.modified = v(),
        ("owmsmantel", "date") => r.date = v(),
        ("owmsmantel", "available") => r.available = v(),
        ("owmsmantel", "subject") => push(&mut r.subjects),
        ("owmsmantel", "abstract") => r.summary = v(),
        ("tpmeta", "publicatienaam") => r.publication = v(),
        ("tpmeta", "publicatienummer") => r.number = v(),
        ("tpmeta", "jaargang") => r.volume = v(),
        ("tpmeta", "organisatietype") => r.organization_type = v(),
        ("tpmeta", "dossiernummer") => r.dossier = v(),
        ("tpmeta", "ondernummer") => r.subnumber = v(),
        ("tpmeta", "vergaderjaar") => r.session_year = v(),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    pub(crate) const PAGE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<sru:searchRetrieveResponse xmlns:sru="http://docs.oasis-open.org/ns/search-ws/sruResponse">
  <sru:version>2.0</sru:version>
  <sru:numberOfRecords>2</sru:numberOfRecords>
  <sru:records>
    <sru:record>
      <sru:recordSchema>http://standaarden.overheid.nl/sru/</sru:recordSchema>
      <sru:recordPacking>xml</sru:recordPacking>
      <sru:recordData>
        <gzd:gzd xmlns:gzd="http://standaarden.overheid.nl/sru">
          <gzd:originalData>
            <overheidwetgeving:meta xmlns:overheidwetgeving="http://standaarden.overheid.nl/wetgeving/"
                xmlns:dcterms="http://purl.org/dc/terms/" xmlns:c="http://standaarden.overheid.nl/collectie/">
              <overheidwetgeving:owmskern>
                <dcterms:identifier>gmb-2026-104512</dcterms:identifier>
                <dcterms:title>Verordening parkeren &amp; laden 2026 &#8212; Utrecht</dcterms:title>
                <dcterms:type scheme="overheid:Informatietype">Verordening</dcterms:type>
                <dcterms:creator scheme="overheid:Gemeente">Utrecht</dcterms:creator>
                <dcterms:language>nl</dcterms:language>
                <dcterms:modified>2026-03-04</dcterms:modified>
              </overheidwetgeving:owmskern>
              <overheidwetgeving:owmsmantel>
                <dcterms:date>2026-02-26</dcterms:date>
                <dcterms:available>2026-03-04</dcterms:available>
                <dcterms:subject>verkeer</dcterms:subject>
                <dcterms:subject>ruimtelijke ordening</dcterms:subject>
              </overheidwetgeving:owmsmantel>
              <overheidwetgeving:tpmeta>
                <c:product-area>officielepublicaties</c:product-area>
                <overheidwetgeving:organisatietype>gemeente</overheidwetgeving:organisatietype>
                <overheidwetgeving:publicatienaam>Gemeenteblad</overheidwetgeving:publicatienaam>
                <overheidwetgeving:publicatienummer>104512</overheidwetgeving:publicatienummer>
                <overheidwetgeving:jaargang>2026</overheidwetgeving:jaargang>
              </overheidwetgeving:tpmeta>
            </overheidwetgeving:meta>
          </gzd:originalData>
          <gzd:enrichedData>
            <gzd:url>https://repository.overheid.nl/frbr/officielepublicaties/gmb/2026/gmb-2026-104512/1/pdf/gmb-2026-104512.pdf</gzd:url>
            <gzd:preferredUrl>https://zoek.officielebekendmakingen.nl/gmb-2026-104512.html</gzd:preferredUrl>
            <gzd:itemUrl manifestation="xml">https://repository.overheid.nl/frbr/officielepublicaties/gmb/2026/gmb-2026-104512/1/xml/gmb-2026-104512.xml</gzd:itemUrl>
            <gzd:itemUrl manifestation="pdf">https://repository.overheid.nl/frbr/officielepublicaties/gmb/2026/gmb-2026-104512/1/pdf/gmb-2026-104512.pdf</gzd:itemUrl>
            <gzd:timestamp>2026-03-04T09:12:00Z</gzd:timestamp>
          </gzd:enrichedData>
        </gzd:gzd>
      </sru:recordData>
      <sru:recordPosition>1</sru:recordPosition>
    </sru:record>
    <sru:record>
      <sru:recordData>
        <g:gzd xmlns:g="http://standaarden.overheid.nl/sru"><g:originalData>
          <w:meta xmlns:w="http://standaarden.overheid.nl/wetgeving/" xmlns:d="http://purl.org/dc/terms/">
            <w:owmskern><d:identifier>kst-26100-1</d:identifier><d:title><![CDATA[Brief <regering>]]></d:title></w:owmskern>
            <w:tpmeta><w:dossiernummer>26100</w:dossiernummer><w:ondernummer>1</w:ondernummer></w:tpmeta>
          </w:meta></g:originalData></g:gzd>
      </sru:recordData>
    </sru:record>
  </sru:records>
  <sru:nextRecordPosition>3</sru:nextRecordPosition>
</sru:searchRetrieveResponse>"#;

    #[test]
    fn records_are_read_by_namespace_whatever_the_prefixes() {
        let r = parse_sru(PAGE.as_bytes()).unwrap();
        assert_eq!(r.number_of_records, Some(2));
        assert_eq!(r.next_record_position, Some(3));
        assert!(r.diagnostics.is_empty());
        assert_eq!(r.records.len(), 2);
        let first = &r.records[0];
        assert_eq!(first.identifier, "gmb-2026-104512");
        assert_eq!(first.title, "Verordening parkeren & laden 2026 \u{2014} Utrecht");
        assert_eq!(first.document_type.as_deref(), Some("Verordening"));
        assert_eq!(first.creators, ["Utrecht"]);
        assert_eq!(first.date.as_deref(), Some("2026-02-26"));
        assert_eq!(first.available.as_deref(), Some("2026-03-04"));
        assert_eq!(first.subjects, ["verkeer", "ruimtelijke ordening"]);
        assert_eq!(first.publication.as_deref(), Some("Gemeenteblad"));
        assert_eq!(first.number.as_deref(), Some("104512"));
        assert_eq!(first.organization_type.as_deref(), Some("gemeente"));
        assert!(first.rendition("xml").unwrap().ends_with("/1/xml/gmb-2026-104512.xml"));
        assert!(first.rendition("html").is_none());
        assert_eq!(
            first.preferred_url.as_deref(),
            Some("https://zoek.officielebekendmakingen.nl/gmb-2026-104512.html")
        );
        let second = &r.records[1];
        assert_eq!(second.identifier, "kst-26100-1");
        assert_eq!(second.title, "Brief <regering>");
        assert_eq!(
            (second.dossier.as_deref(), second.subnumber.as_deref()),
            (Some("26100"), Some("1"))
        );
    }

    #[test]
    fn diagnostics_are_read_and_a_missing_count_stays_missing() {
        let body = r#"<sru:searchRetrieveResponse xmlns:sru="http://docs.oasis-open.org/ns/search-ws/sruResponse">
            <sru:version>2.0</sru:version>
            <sru:diagnostics><diag:diagnostic xmlns:diag="http://docs.oasis-open.org/ns/search-ws/diagnostic">
              <diag:uri>info:srw/diagnostic/1/10</diag:uri><diag:details>a b</diag:details>
              <diag:message>Query syntax error</diag:message></diag:diagnostic></sru:diagnostics>
          </sru:searchRetrieveResponse>"#;
        let r = parse_sru(body.as_bytes()).unwrap();
        assert_eq!(r.number_of_records, None);
        assert_eq!(r.diagnostics.len(), 1);
        assert_eq!(r.diagnostics[0].standard_number(), Some(10));
        assert_eq!(
            r.diagnostics[0].describe(),
            "Query syntax error (a b) [info:srw/diagnostic/1/10]"
        );
    }

    #[test]
    fn other_documents_are_refused() {
        for (body, why) in [
            ("<html><body>Fout</body></html>", "the root is html"),
            (
                r#"<srw:searchRetrieveResponse xmlns:srw="http://www.loc.gov/zing/srw/"/>"#,
                "SRU 1.2",
            ),
            ("", "no root"),
            ("not xml at all", "no root"),
        ] {
            let e = parse_sru(body.as_bytes()).unwrap_err();
            assert!(e.to_string().contains(why), "{body}: {e}");
        }
        assert!(matches!(
            parse_sru(b"<sru:searchRetrieveResponse xmlns:sru=\"http://docs.oasis-open.org/ns/search-ws/sruResponse\"><a></b>"),
            Err(SruError::Xml { .. })
        ));
        let deep = format!(
            "<sru:searchRetrieveResponse xmlns:sru=\"{SRU_NS}\">{}",
            "<a>".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(
            parse_sru(deep.as_bytes()),
            Err(SruError::TooBig("elements nested too deeply"))
        );
    }
}
