//! A publication's record in KOOP's SRU answer (`gzd` record schema), as Officiële
//! Bekendmakingen gives it (PLATFORMS.md §10.1): [`ObRecord`], read field by field from
//! the envelope the shared service reads ([`crate::platforms::koop::sru`]).
//!
//! Invariant: a field is taken by its local name inside the container it belongs to —
//! `owmskern`, `owmsmantel` or `tpmeta` (whatever their namespace prefixes: the service
//! mixes `dcterms:`, `overheidwetgeving:` and `c:`) — or, for the links, inside
//! `enrichedData`; a field elsewhere (a nested value) is not mistaken for one of these.
//! Repeatable fields keep at most [`MAX_VALUES`] values.
//!
//! What this module does not do: read the envelope, or the text renditions.

use serde::{Deserialize, Serialize};

use crate::platforms::koop::{Field, SruRecord};

/// Most values kept of a repeatable field (creators, subjects, renditions).
const MAX_VALUES: usize = 64;

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

impl SruRecord for ObRecord {
    fn take(&mut self, f: Field<'_>) {
        let value = f.value;
        let v = || Some(value.to_owned());
        let push = |list: &mut Vec<String>| {
            if list.len() < MAX_VALUES {
                list.push(value.to_owned());
            }
        };
        match (f.parent, f.name) {
            ("owmskern", "identifier") => self.identifier = value.to_owned(),
            ("owmskern", "title") => self.title = value.to_owned(),
            ("owmskern", "type") => self.document_type = v(),
            ("owmskern", "creator") => push(&mut self.creators),
            ("owmskern", "modified") => self.modified = v(),
            ("owmsmantel", "date") => self.date = v(),
            ("owmsmantel", "available") => self.available = v(),
            ("owmsmantel", "subject") => push(&mut self.subjects),
            ("owmsmantel", "abstract") => self.summary = v(),
            ("tpmeta", "publicatienaam") => self.publication = v(),
            ("tpmeta", "publicatienummer") => self.number = v(),
            ("tpmeta", "jaargang") => self.volume = v(),
            ("tpmeta", "organisatietype") => self.organization_type = v(),
            ("tpmeta", "dossiernummer") => self.dossier = v(),
            ("tpmeta", "ondernummer") => self.subnumber = v(),
            ("tpmeta", "vergaderjaar") => self.session_year = v(),
            ("enrichedData", "preferredUrl") => self.preferred_url = v(),
            ("enrichedData", "url") => self.pdf_url = v(),
            ("enrichedData", "itemUrl") if self.manifestations.len() < MAX_VALUES => {
                self.manifestations.push(Manifestation {
                    kind: f.attribute("manifestation").unwrap_or_default().to_owned(),
                    url: value.to_owned(),
                });
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::koop::{SruVersion, parse_sru};

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
        let r = parse_sru::<ObRecord>(SruVersion::V2_0, PAGE.as_bytes()).unwrap();
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
}
