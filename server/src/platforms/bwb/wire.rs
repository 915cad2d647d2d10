//! The Basiswettenbestand's SRU 1.2 answer (`x-connection=BWB`), read with namespaces
//! ([`parse_sru`]): the count, the records and the diagnostics.
//!
//! Invariants:
//! - The root must be `searchRetrieveResponse` in the SRU 1.2 namespace
//!   (`http://www.loc.gov/zing/srw/`): an HTML page, an SRU 2.0 answer or another
//!   document is [`SruError`]. Diagnostics are `diagnostic` in the SRU 1.2 diagnostic
//!   namespace. A record is a `gzd` element in `http://standaarden.overheid.nl/sru`; its
//!   fields are read by local name whatever their namespace (the service mixes
//!   `dcterms:`, `overheid:` and `overheidbwb:` and leaves some unprefixed).
//! - A missing count stays `None`, never 0: the client decides what that means.
//! - Any input gives a result or an error, never a panic; nesting deeper than
//!   [`MAX_DEPTH`] and more than [`MAX_RECORDS`] records are errors.
//!
//! What this module does not do: read the toestand (`toestand.rs`), or talk HTTP.

use quick_xml::NsReader;
use quick_xml::events::Event;
use quick_xml::name::ResolveResult;
use serde::{Deserialize, Serialize};

use crate::platforms::ob::wire::resolve_reference;

/// The SRU 1.2 namespace.
pub const SRU12_NS: &str = "http://www.loc.gov/zing/srw/";
/// The SRU 1.2 diagnostics namespace.
pub const DIAG12_NS: &str = "http://www.loc.gov/zing/srw/diagnostic/";
/// The namespace of the `gzd` record schema.
pub const GZD_NS: &str = "http://standaarden.overheid.nl/sru";

/// Deepest element nesting read.
pub const MAX_DEPTH: usize = 64;
/// Most records read from one answer.
pub const MAX_RECORDS: usize = 1000;
/// Longest text kept of one field, in bytes.
const MAX_FIELD_BYTES: usize = 8 * 1024;

/// One SRU diagnostic.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Diagnostic {
    /// `info:srw/diagnostic/1/10` or the service's own code.
    pub uri: String,
    /// What it is about.
    pub details: Option<String>,
    /// The service's message.
    pub message: Option<String>,
}

impl Diagnostic {
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

/// One regulation version (toestand) as the search describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BwbRecord {
    /// `dcterms:identifier`: `BWBR0005537`.
    pub identifier: String,
    /// `dcterms:title`.
    pub title: String,
    /// `dcterms:type`: `wet`, `AMvB`, `ministeriele-regeling`, ….
    pub kind: Option<String>,
    /// `overheid:authority`: the ministry.
    pub authority: Option<String>,
    /// `dcterms:modified`.
    pub modified: Option<String>,
    /// `overheidbwb:rechtsgebied`.
    pub areas: Vec<String>,
    /// `overheidbwb:toestand`: the version's identity.
    pub toestand: Option<String>,
    /// `overheidbwb:geldigheidsperiode_startdatum`: in force from.
    pub valid_from: Option<String>,
    /// `overheidbwb:geldigheidsperiode_einddatum`: in force until (`9999-12-31`: open).
    pub valid_until: Option<String>,
    /// `overheidbwb:locatie_toestand`: the toestand XML.
    pub toestand_url: Option<String>,
}

/// A record of KOOP's SRU 1.2 service as its fields are read: each element inside a
/// `gzd` record that has text is offered by its local name, in document order.
pub trait SruRecord: Default {
    /// Takes the text `value` (not empty) of the element named `local`.
    fn take(&mut self, local: &str, value: &str);
}

impl SruRecord for BwbRecord {
    fn take(&mut self, field: &str, value: &str) {
        let some = || Some(value.to_owned());
        match field {
            "identifier" if self.identifier.is_empty() => self.identifier = value.to_owned(),
            "title" if self.title.is_empty() => self.title = value.to_owned(),
            "type" => self.kind = some(),
            "authority" => self.authority = some(),
            "modified" => self.modified = some(),
            "rechtsgebied" if self.areas.len() < 32 => self.areas.push(value.to_owned()),
            "toestand" => self.toestand = some(),
            "geldigheidsperiode_startdatum" => self.valid_from = some(),
            "geldigheidsperiode_einddatum" => self.valid_until = some(),
            "locatie_toestand" => self.toestand_url = some(),
            _ => {}
        }
    }
}

/// An SRU `searchRetrieveResponse`, as read, with records of the collection's kind
/// (the Basiswettenbestand's by default).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SruResponse<R = BwbRecord> {
    /// `numberOfRecords`; `None` when absent.
    pub number_of_records: Option<u64>,
    /// The records of this page.
    pub records: Vec<R>,
    /// Every diagnostic, in order.
    pub diagnostics: Vec<Diagnostic>,
}

/// Why an answer is not a readable SRU 1.2 response.
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
    /// Well-formed, but not an SRU 1.2 `searchRetrieveResponse`.
    #[error("not an SRU 1.2 searchRetrieveResponse ({0})")]
    NotSru(String),
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

fn ns_of(resolved: &ResolveResult<'_>) -> Ns {
    match resolved {
        ResolveResult::Bound(ns) => match ns.as_ref() {
            n if n == SRU12_NS => Ns::Sru,
            n if n == DIAG12_NS => Ns::Diag,
            n if n == GZD_NS => Ns::Gzd,
            _ => Ns::Other,
        },
        _ => Ns::Other,
    }
}

/// Reads an SRU 1.2 answer of the BWB collection.
pub fn parse_sru(bytes: &[u8]) -> Result<SruResponse, SruError> {
    parse_sru_of::<BwbRecord>(bytes)
}

/// Reads an SRU 1.2 answer of KOOP's service with records of kind `R`.
pub fn parse_sru_of<R: SruRecord>(bytes: &[u8]) -> Result<SruResponse<R>, SruError> {
    let mut reader = NsReader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    let mut stack: Vec<(Ns, String)> = Vec::new();
    let mut text = String::new();
    let mut out = SruResponse::<R> {
        number_of_records: None,
        records: Vec::new(),
        diagnostics: Vec::new(),
    };
    let mut record: Option<R> = None;
    let mut diagnostic: Option<Diagnostic> = None;
    let mut seen_root = false;
    loop {
        let position = reader.buffer_position();
        let (resolved, event) = reader.read_resolved_event().map_err(|e| SruError::Xml {
            position,
            detail: e.to_string(),
        })?;
        let (start, empty) = match &event {
            Event::Start(s) => (Some(s.clone()), false),
            Event::Empty(s) => (Some(s.clone()), true),
            _ => (None, false),
        };
        if let Some(start) = start {
            let ns = ns_of(&resolved);
            let local = start.local_name().into_inner().to_owned();
            if !seen_root {
                if ns != Ns::Sru || local != "searchRetrieveResponse" {
                    let shown: String = local.chars().take(40).collect();
                    return Err(SruError::NotSru(format!("the root is {shown}")));
                }
                seen_root = true;
            }
            if stack.len() >= MAX_DEPTH {
                return Err(SruError::TooBig("elements nested too deeply"));
            }
            match (ns, local.as_str()) {
                (Ns::Gzd, "gzd") => {
                    if out.records.len() >= MAX_RECORDS {
                        return Err(SruError::TooBig("too many records"));
                    }
                    record = Some(R::default());
                }
                (Ns::Diag, "diagnostic") => diagnostic = Some(Diagnostic::default()),
                _ => {}
            }
            stack.push((ns, local));
            text.clear();
            if !empty {
                continue;
            }
        }
        match event {
            Event::Start(_) => {}
            Event::Empty(_) | Event::End(_) => {
                let value = text.trim().to_owned();
                end(&stack, &value, &mut out, &mut record, &mut diagnostic);
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

/// The element on top of `stack` closes with `value` as its text.
fn end<R: SruRecord>(
    stack: &[(Ns, String)],
    value: &str,
    out: &mut SruResponse<R>,
    record: &mut Option<R>,
    diagnostic: &mut Option<Diagnostic>,
) {
    let Some((ns, local)) = stack.last() else { return };
    let parent = stack.len().checked_sub(2).map(|i| &stack[i]);
    let some = || (!value.is_empty()).then(|| value.to_owned());
    match (*ns, local.as_str()) {
        (Ns::Sru, "numberOfRecords") if parent.is_some_and(|p| p.0 == Ns::Sru) => {
            out.number_of_records = value.parse().ok();
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
        (_, field) => {
            let Some(r) = record.as_mut() else { return };
            if !value.is_empty() {
                r.take(field, value);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/">
  <version>1.2</version>
  <numberOfRecords>1</numberOfRecords>
  <records><record><recordSchema>http://standaarden.overheid.nl/sru/</recordSchema><recordData>
    <gzd xmlns="http://standaarden.overheid.nl/sru" xmlns:dcterms="http://purl.org/dc/terms/"
         xmlns:overheid="http://standaarden.overheid.nl/owms/terms/" xmlns:overheidbwb="http://standaarden.overheid.nl/bwb/terms/">
      <originalData><overheidbwb:meta><owmskern>
        <dcterms:identifier>BWBR0005537</dcterms:identifier>
        <dcterms:title>Algemene wet bestuursrecht</dcterms:title>
        <dcterms:type>wet</dcterms:type>
        <overheid:authority>Justitie en Veiligheid</overheid:authority>
        <dcterms:modified>2026-08-01</dcterms:modified>
      </owmskern><bwbipm>
        <overheidbwb:toestand>http://wetten.overheid.nl/id/BWBR0005537/2026-08-01/0</overheidbwb:toestand>
        <overheidbwb:rechtsgebied>Bestuursrecht</overheidbwb:rechtsgebied>
        <overheidbwb:geldigheidsperiode_startdatum>2026-08-01</overheidbwb:geldigheidsperiode_startdatum>
        <overheidbwb:geldigheidsperiode_einddatum>9999-12-31</overheidbwb:geldigheidsperiode_einddatum>
      </bwbipm></overheidbwb:meta></originalData>
      <enrichedData><overheidbwb:locatie_toestand>https://repository.officiele-overheidspublicaties.nl/bwb/BWBR0005537/2026-08-01_0/xml/BWBR0005537_2026-08-01_0.xml</overheidbwb:locatie_toestand></enrichedData>
    </gzd></recordData></record></records>
</searchRetrieveResponse>"#;

    #[test]
    fn a_record_is_read_by_local_names() {
        let r = parse_sru(PAGE.as_bytes()).unwrap();
        assert_eq!(r.number_of_records, Some(1));
        let rec = &r.records[0];
        assert_eq!(rec.identifier, "BWBR0005537");
        assert_eq!(rec.kind.as_deref(), Some("wet"));
        assert_eq!(rec.authority.as_deref(), Some("Justitie en Veiligheid"));
        assert_eq!(rec.areas, ["Bestuursrecht"]);
        assert_eq!(
            (rec.valid_from.as_deref(), rec.valid_until.as_deref()),
            (Some("2026-08-01"), Some("9999-12-31"))
        );
        assert!(rec.toestand_url.as_deref().unwrap().ends_with("_2026-08-01_0.xml"));
    }

    #[test]
    fn a_diagnostic_is_read_and_other_documents_refused() {
        let body = r#"<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><version>1.2</version>
            <diagnostics><diagnostic xmlns="http://www.loc.gov/zing/srw/diagnostic/">
            <uri>info:srw/diagnostic/1/16</uri><details>dcterms.title</details><message>Unsupported index</message>
            </diagnostic></diagnostics></searchRetrieveResponse>"#;
        let r = parse_sru(body.as_bytes()).unwrap();
        assert_eq!(r.number_of_records, None);
        assert_eq!(
            r.diagnostics[0].describe(),
            "Unsupported index (dcterms.title) [info:srw/diagnostic/1/16]"
        );
        for bad in ["<html/>", "", "<a><b></a>"] {
            assert!(parse_sru(bad.as_bytes()).is_err(), "{bad}");
        }
    }
}
