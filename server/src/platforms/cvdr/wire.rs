//! A local regulation version's record in KOOP's SRU answer of the CVDR
//! (`x-connection=cvdr`): [`CvdrRecord`], read field by field by local name from the
//! envelope the shared service reads ([`crate::platforms::koop::sru`]), whatever the
//! fields' namespaces (`dcterms:`, `overheidrg:`, and the enriched data unprefixed), its
//! dates as days.
//!
//! What this module does not do: read the envelope, or the regulation's XML
//! ([`crate::platforms::koop::regulation`]).

use serde::{Deserialize, Serialize};

use crate::platforms::koop::{Field, SruRecord};

/// One version of a local regulation as the search describes it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CvdrRecord {
    /// `dcterms:identifier`: `CVDR112779_1`, the regulation and its version.
    pub identifier: String,
    /// `dcterms:title`.
    pub title: String,
    /// `dcterms:type`, every value (`regeling`, then a kind such as `beleidsregel`).
    pub types: Vec<String>,
    /// `dcterms:creator`: the organisation's name as the platform writes it.
    pub creator: Option<String>,
    /// `organisatietype`: `Gemeente`, `Provincie`, `Waterschap`, ….
    pub organisation_type: Option<String>,
    /// `dcterms:issued`: the day the regulation was set.
    pub issued: Option<String>,
    /// `dcterms:modified`.
    pub modified: Option<String>,
    /// `dcterms:isFormatOf`: the publication that made it known (e.g. a Gemeenteblad).
    pub published_in: Option<String>,
    /// `dcterms:source`: its legal basis.
    pub legal_basis: Vec<String>,
    /// `inwerkingtredingDatum`: this version in force from.
    pub in_force_from: Option<String>,
    /// `uitwerkingtredingDatum`: … until (absent while no end is set).
    pub in_force_until: Option<String>,
    /// `betreft`: what this version changed.
    pub concerns: Option<String>,
    /// `kenmerk`: the organisation's reference of the decision (often its RIS number).
    pub reference: Option<String>,
    /// `onderwerp`, `dcterms:subject`.
    pub subjects: Vec<String>,
    /// `publicatieurl_xml`: the version's XML.
    pub text_url: Option<String>,
    /// `preferred_url`: the version's page on lokaleregelgeving.overheid.nl.
    pub page_url: Option<String>,
}

/// A date as the service writes it (`2026-07-21` or `2026-07-21Z`), as YYYY-MM-DD when it
/// is one.
fn day(value: &str) -> String {
    let head = value.get(..10).unwrap_or(value);
    if crate::calendar::is_day(head) {
        head.to_owned()
    } else {
        value.to_owned()
    }
}

impl SruRecord for CvdrRecord {
    fn take(&mut self, field: Field<'_>) {
        let value = field.value;
        match field.name {
            "identifier" => field.first(&mut self.identifier),
            "title" => field.first(&mut self.title),
            "type" => field.push(&mut self.types, 8),
            "creator" if self.creator.is_none() => self.creator = field.text(),
            "organisatietype" => self.organisation_type = field.text(),
            "issued" => self.issued = Some(day(value)),
            "modified" => self.modified = Some(day(value)),
            "isFormatOf" if self.published_in.is_none() => self.published_in = field.text(),
            "source" => field.push(&mut self.legal_basis, 16),
            "inwerkingtredingDatum" => self.in_force_from = Some(day(value)),
            "uitwerkingtredingDatum" => self.in_force_until = Some(day(value)),
            "betreft" => self.concerns = field.text(),
            "kenmerk" => self.reference = field.text(),
            "onderwerp" | "subject" if !self.subjects.iter().any(|s| s == value) => {
                field.push(&mut self.subjects, 16);
            }
            "publicatieurl_xml" => self.text_url = field.text(),
            "preferred_url" => self.page_url = field.text(),
            _ => {}
        }
    }
}

impl CvdrRecord {
    /// The regulation's kind: the first `dcterms:type` other than the generic
    /// `regeling`, else `regeling`.
    pub fn kind(&self) -> Option<String> {
        self.types
            .iter()
            .find(|t| !t.eq_ignore_ascii_case("regeling"))
            .or_else(|| self.types.first())
            .cloned()
    }

    /// The organisation as people name it: `Gemeente Utrecht`, `Waterschap Rivierenland`.
    pub fn organisation(&self) -> Option<String> {
        let name = self.creator.clone()?;
        match self.organisation_type.as_deref() {
            Some(kind @ ("Gemeente" | "Provincie" | "Waterschap"))
                if !name.to_lowercase().starts_with(&kind.to_lowercase()) =>
            {
                Some(format!("{kind} {name}"))
            }
            _ => Some(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::platforms::cvdr::{COLLECTION, SearchPage};
    use crate::platforms::koop::{self, SruVersion};

    #[test]
    fn a_record_is_read_by_local_names() {
        let body = r#"<searchRetrieveResponse xmlns="http://www.loc.gov/zing/srw/"><version>1.2</version>
  <numberOfRecords>1</numberOfRecords><records><record><recordData>
  <gzd xmlns="http://standaarden.overheid.nl/sru" xmlns:dcterms="http://purl.org/dc/terms/"
       xmlns:overheidrg="http://standaarden.overheid.nl/cvdr/terms/">
    <originalData><overheidrg:meta><owmskern>
      <dcterms:identifier>CVDR625849_3</dcterms:identifier>
      <dcterms:title>Parkeerverordening 2024</dcterms:title>
      <dcterms:type scheme="overheid:Informatietype">regeling</dcterms:type>
      <dcterms:type scheme="overheidrg:Rubriek">verordening</dcterms:type>
      <dcterms:creator scheme="overheid:Gemeente">Utrecht</dcterms:creator>
      <dcterms:modified>2024-02-01Z</dcterms:modified>
    </owmskern><owmsmantel>
      <dcterms:issued>2023-12-14</dcterms:issued>
      <dcterms:isFormatOf resourceIdentifier="https://zoek.officielebekendmakingen.nl/gmb-2023-1">Gemeenteblad 2023, 1</dcterms:isFormatOf>
      <dcterms:source>Gemeentewet, art. 225</dcterms:source>
    </owmsmantel><cvdripm>
      <overheidrg:inwerkingtredingDatum>2024-01-01</overheidrg:inwerkingtredingDatum>
      <overheidrg:betreft>nieuwe regeling</overheidrg:betreft>
      <overheidrg:kenmerk>RIS 123</overheidrg:kenmerk>
    </cvdripm></overheidrg:meta></originalData>
    <enrichedData><organisatietype>Gemeente</organisatietype>
      <publicatieurl_xml>https://repository.officiele-overheidspublicaties.nl/cvdr/CVDR625849/3/xml/CVDR625849_3.xml</publicatieurl_xml>
      <preferred_url>https://lokaleregelgeving.overheid.nl/CVDR625849/3</preferred_url></enrichedData>
  </gzd></recordData></record></records></searchRetrieveResponse>"#;
        let page: SearchPage = koop::read_answer(
            &COLLECTION,
            koop::parse_sru(SruVersion::V1_2, body.as_bytes()).unwrap(),
            1,
        )
        .unwrap();
        let r = &page.records[0];
        assert_eq!(r.identifier, "CVDR625849_3");
        assert_eq!(r.kind().as_deref(), Some("verordening"));
        assert_eq!(r.organisation().as_deref(), Some("Gemeente Utrecht"));
        assert_eq!(r.modified.as_deref(), Some("2024-02-01"));
        assert_eq!(r.published_in.as_deref(), Some("Gemeenteblad 2023, 1"));
        assert_eq!(r.legal_basis, ["Gemeentewet, art. 225"]);
        assert_eq!(
            (r.in_force_from.as_deref(), r.in_force_until.as_deref()),
            (Some("2024-01-01"), None)
        );
        assert_eq!(r.reference.as_deref(), Some("RIS 123"));
        assert!(r.text_url.as_deref().unwrap().ends_with("CVDR625849_3.xml"));
    }
}
