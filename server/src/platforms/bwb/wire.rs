//! A regulation version's record in KOOP's SRU answer of the Basiswettenbestand
//! (`x-connection=BWB`): [`BwbRecord`], read field by field by local name from the
//! envelope the shared service reads ([`crate::platforms::koop::sru`]), whatever the
//! fields' namespaces (the service mixes `dcterms:`, `overheid:` and `overheidbwb:` and
//! leaves some unprefixed).
//!
//! What this module does not do: read the envelope, or the toestand
//! ([`crate::platforms::koop::regulation`]).

use serde::{Deserialize, Serialize};

use crate::platforms::koop::{Field, SruRecord};

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

impl SruRecord for BwbRecord {
    fn take(&mut self, field: Field<'_>) {
        match field.name {
            "identifier" => field.first(&mut self.identifier),
            "title" => field.first(&mut self.title),
            "type" => self.kind = field.text(),
            "authority" => self.authority = field.text(),
            "modified" => self.modified = field.text(),
            "rechtsgebied" => field.push(&mut self.areas, 32),
            "toestand" => self.toestand = field.text(),
            "geldigheidsperiode_startdatum" => self.valid_from = field.text(),
            "geldigheidsperiode_einddatum" => self.valid_until = field.text(),
            "locatie_toestand" => self.toestand_url = field.text(),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::koop::{SruVersion, parse_sru};

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
        let r = parse_sru::<BwbRecord>(SruVersion::V1_2, PAGE.as_bytes()).unwrap();
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

    /// Issue 41: an answer cut off right after a complete record was a shorter page.
    #[test]
    fn regression_issue_41_an_answer_cut_after_its_record_is_no_page() {
        let cut = PAGE.find("</record>").unwrap() + "</record>".len();
        assert!(parse_sru::<BwbRecord>(SruVersion::V1_2, &PAGE.as_bytes()[..cut]).is_err());
        let cut = PAGE.rfind("</searchRetrieveResponse>").unwrap();
        assert!(parse_sru::<BwbRecord>(SruVersion::V1_2, &PAGE.as_bytes()[..cut]).is_err());
    }
}
