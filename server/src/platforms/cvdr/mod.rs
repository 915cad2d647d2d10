//! The client of the Centrale Voorziening Decentrale Regelgeving (`cvdr`): local
//! regulations of municipalities, provinces and water boards, searched over KOOP's SRU
//! service (`x-connection=cvdr`, SRU 1.2, the host `bwb` asks too) and read from each
//! version's XML (`docs/platforms.md`, "Local regulations").
//!
//! Invariants:
//! - The CQL is built here from typed, bounded arguments ([`CvdrSearch::cql`]): words go
//!   into one quoted `keyword all "…"` clause, lower-cased (the service reads `AND`, `OR`
//!   and `NOT` as operators even inside quotes) with everything but letters, digits,
//!   spaces, `-`, `'` and `.` removed; an organisation is written only as resolved by
//!   the connector from its own list ([`Organisation`]), never from the caller's text;
//!   identifiers and dates are checked before they are written.
//! - Searches are the shared service's ([`COLLECTION`], [`crate::platforms::koop`]): an
//!   answer with diagnostics and no count is the service rejecting the query, or
//!   overload; never "no results"; an answer cut short is an error, never a short page.
//! - A regulation's text is fetched only from the record's `publicatieurl_xml` on the
//!   search host or on KOOP's repository host ([`koop::REPOSITORY_HOST`]), under
//!   `/cvdr/`.
//!
//! What this module does not do: list a regulation's versions, read its external
//! attachments (bijlagen outside the XML), or resolve organisation names (the connector
//! does, before anything is asked).

use std::time::Duration;

use besluitbron_core::{Platform, PlatformId};
use reqwest::Url;
use serde::{Deserialize, Serialize};

use super::http::{self, HttpConfig, PlatformError};
pub use super::koop::regulation::{Regulation, RegulationError};
use super::koop::regulation::{Root, read_regulation};
use super::koop::{self, Collection, Field, FileLink, SruRecord, SruService, SruVersion, clean_words};

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "cvdr",
    name: "Lokale regelgeving (CVDR)",
});

const TEXT_LINK: FileLink = FileLink {
    dir: "/cvdr/",
    not_a_url: "the regulation's location is not a URL",
    elsewhere: "the regulation's XML lies on another host",
    not_a_file: "the regulation's location is not a CVDR file",
};

/// Local regulations as a collection of KOOP's search service.
pub static COLLECTION: Collection = Collection {
    platform: PLATFORM,
    version: SruVersion::V1_2,
    connection: Some("cvdr"),
    max_records: MAX_LIMIT,
    advice: "Use fewer or plainer words, or drop the organisation",
    narrow: "more words or an organisation",
    overload_backoff: Duration::from_secs(5),
};

/// One page of a search.
pub type SearchPage = koop::SearchPage<CvdrRecord>;

/// Most records per page.
pub const MAX_LIMIT: u32 = 50;

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
        let some = || Some(value.to_owned());
        match field.name {
            "identifier" if self.identifier.is_empty() => self.identifier = value.to_owned(),
            "title" if self.title.is_empty() => self.title = value.to_owned(),
            "type" if self.types.len() < 8 => self.types.push(value.to_owned()),
            "creator" if self.creator.is_none() => self.creator = some(),
            "organisatietype" => self.organisation_type = some(),
            "issued" => self.issued = Some(day(value)),
            "modified" => self.modified = Some(day(value)),
            "isFormatOf" if self.published_in.is_none() => self.published_in = some(),
            "source" if self.legal_basis.len() < 16 => self.legal_basis.push(value.to_owned()),
            "inwerkingtredingDatum" => self.in_force_from = Some(day(value)),
            "uitwerkingtredingDatum" => self.in_force_until = Some(day(value)),
            "betreft" => self.concerns = some(),
            "kenmerk" => self.reference = some(),
            "onderwerp" | "subject" if self.subjects.len() < 16 && !self.subjects.iter().any(|s| s == value) => {
                self.subjects.push(value.to_owned());
            }
            "publicatieurl_xml" => self.text_url = some(),
            "preferred_url" => self.page_url = some(),
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

/// An organisation as the platform names it: its `organisatieType` and its
/// `dcterms:creator` (resolved by the connector from its list).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Organisation {
    /// `Gemeente`, `Provincie` or `Waterschap`.
    pub kind: &'static str,
    /// The creator's name: `Utrecht`, `'s-Gravenhage`, `Waterschap Rivierenland`.
    pub name: &'static str,
}

/// A search of local regulations.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CvdrSearch {
    /// Words that must all occur in the regulation (its title or text).
    pub words: Option<String>,
    /// The organisation that set it.
    pub organisation: Option<Organisation>,
    /// In force on this day, YYYY-MM-DD.
    pub in_force_on: String,
}

/// True for a CVDR id: `CVDR` and 1 to 9 digits, optionally `_` and a version of 1 to
/// 4 digits.
pub fn is_cvdr_id(text: &str) -> bool {
    let Some(rest) = text.strip_prefix("CVDR") else {
        return false;
    };
    let (work, version) = match rest.split_once('_') {
        Some((w, v)) => (w, Some(v)),
        None => (rest, None),
    };
    let digits = |s: &str, max: usize| !s.is_empty() && s.len() <= max && s.bytes().all(|b| b.is_ascii_digit());
    digits(work, 9) && version.is_none_or(|v| digits(v, 4))
}

/// `text` usable inside a quoted CQL value: no quote, backslash or control character.
fn quotable(text: &str) -> bool {
    !text.is_empty() && !text.chars().any(|c| c == '"' || c == '\\' || c.is_control())
}

impl CvdrSearch {
    /// The CQL, or why it cannot be written (nothing to search for, a bad date).
    pub fn cql(&self) -> Result<String, PlatformError> {
        let bad = |code: &str, message: String| PlatformError::BadRequest {
            sent: false,
            platform: PLATFORM,
            code: code.to_owned(),
            message,
        };
        if !crate::calendar::is_day(&self.in_force_on) {
            return Err(bad(
                "invalid_date",
                format!("`{}` is not a date written YYYY-MM-DD", http::brief(&self.in_force_on)),
            ));
        }
        let mut clauses = Vec::new();
        if let Some(words) = self
            .words
            .as_deref()
            .map(|w| clean_words(w).to_lowercase())
            .filter(|w| !w.is_empty())
        {
            clauses.push(format!("keyword all \"{words}\""));
        }
        if let Some(org) = &self.organisation {
            if !(quotable(org.name) && quotable(org.kind)) {
                return Err(bad(
                    "invalid_organisation",
                    format!("`{}` cannot be written into a query", http::brief(org.name)),
                ));
            }
            clauses.push(format!(
                "dcterms.creator=\"{}\" and organisatieType=\"{}\"",
                org.name, org.kind
            ));
        }
        if clauses.is_empty() {
            return Err(bad("nothing_to_search", "give words or an organisation".to_owned()));
        }
        clauses.push(format!("overheidrg.datumGeldendOp={}", self.in_force_on));
        Ok(clauses.join(" and "))
    }
}

/// The query that finds the version `id` names: with a version (`CVDR123456_2`) that
/// version, without one the version in force on `date`.
pub fn version_cql(id: &str, date: &str) -> Result<String, PlatformError> {
    let bad = |code: &str, message: String| PlatformError::BadRequest {
        sent: false,
        platform: PLATFORM,
        code: code.to_owned(),
        message,
    };
    if !is_cvdr_id(id) {
        return Err(bad(
            "invalid_id",
            format!(
                "`{}` is not a CVDR id (such as CVDR123456 or CVDR123456_2)",
                http::brief(id)
            ),
        ));
    }
    if id.contains('_') {
        return Ok(format!("dcterms.identifier=\"{id}\""));
    }
    if !crate::calendar::is_day(date) {
        return Err(bad(
            "invalid_date",
            format!("`{}` is not a date written YYYY-MM-DD", http::brief(date)),
        ));
    }
    Ok(format!("workid=\"{id}\" and overheidrg.datumGeldendOp={date}"))
}

/// The CVDR client.
#[derive(Debug)]
pub struct CvdrClient {
    service: SruService,
}

impl CvdrClient {
    /// A client for the SRU endpoint at `base_url` (e.g.
    /// `https://zoekservice.overheid.nl/sru/Search`).
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<CvdrClient, PlatformError> {
        Ok(CvdrClient {
            service: SruService::new(&COLLECTION, base_url, config)?,
        })
    }

    /// The page of `search` from `offset` (0-based), at most `limit` records.
    pub async fn search(&self, search: &CvdrSearch, offset: u64, limit: u32) -> Result<SearchPage, PlatformError> {
        self.service.search(&search.cql()?, offset, limit).await
    }

    /// The version `id` names (see [`version_cql`]): with a version that one, without one
    /// the version in force on `date` (YYYY-MM-DD).
    pub async fn version(&self, id: &str, date: &str) -> Result<CvdrRecord, PlatformError> {
        let query = version_cql(id, date)?;
        let page: SearchPage = self.service.search(&query, 0, 10).await?;
        let work = id.split('_').next().unwrap_or(id);
        let of_work =
            |r: &CvdrRecord| r.identifier == id || r.identifier.split('_').next() == Some(work) && !id.contains('_');
        // Of several versions, the one that came into force last.
        page.records
            .into_iter()
            .filter(of_work)
            .max_by(|a, b| a.in_force_from.cmp(&b.in_force_from))
            .ok_or_else(|| PlatformError::NotFound {
                platform: PLATFORM,
                what: if id.contains('_') {
                    format!("regulation version {id}")
                } else {
                    format!("version of {id} in force on {date} (it may not have been in force then)")
                },
            })
    }

    /// Accepts a regulation's XML only on the search host or KOOP's repository host,
    /// under a `/cvdr/` path, without credentials, query or fragment.
    pub fn text_url(&self, url: &str) -> Result<Url, PlatformError> {
        koop::file_url(PLATFORM, self.service.base(), url, &TEXT_LINK)
    }

    /// The regulation at `url` (from a record's `publicatieurl_xml`), read.
    pub async fn text(&self, url: &str) -> Result<Regulation, PlatformError> {
        let url = self.text_url(url)?;
        let fetched = self.service.http().get(url).await?;
        if !fetched.status.is_success() {
            return Err(http::status_error(
                PLATFORM,
                &fetched,
                "regulation text",
                &self.service.refusals(),
            ));
        }
        read_text(&fetched.body).map_err(|e| PlatformError::Garbage {
            platform: PLATFORM,
            detail: e.to_string(),
        })
    }

    /// The SRU request for `query`.
    pub fn search_url(&self, query: &str, start_record: u64, limit: u32) -> Url {
        self.service.search_url(query, start_record, limit)
    }
}

/// A regulation's XML (root `cvdr`), read whole.
pub fn read_text(bytes: &[u8]) -> Result<Regulation, RegulationError> {
    read_regulation(bytes, Root::Cvdr)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(words: &str) -> CvdrSearch {
        CvdrSearch {
            words: Some(words.to_owned()),
            in_force_on: "2025-01-01".to_owned(),
            ..CvdrSearch::default()
        }
    }

    #[test]
    fn the_query_is_built_from_clean_words_and_a_resolved_organisation() {
        let s = CvdrSearch {
            organisation: Some(Organisation {
                kind: "Gemeente",
                name: "'s-Gravenhage",
            }),
            ..search("Parkeren OR \" dcterms.creator=x) (")
        };
        assert_eq!(
            s.cql().unwrap(),
            "keyword all \"parkeren or dcterms.creator x\" and dcterms.creator=\"'s-Gravenhage\" and \
             organisatieType=\"Gemeente\" and overheidrg.datumGeldendOp=2025-01-01"
        );
        assert!(matches!(
            CvdrSearch { in_force_on: "2025-02-30".into(), ..search("x") }.cql(),
            Err(PlatformError::BadRequest { code, .. }) if code == "invalid_date"
        ));
        assert!(matches!(
            search(" \" ( ").cql(),
            Err(PlatformError::BadRequest { code, .. }) if code == "nothing_to_search"
        ));
        for ok in ["CVDR112779", "CVDR112779_1", "CVDR1_1234"] {
            assert!(is_cvdr_id(ok), "{ok}");
        }
        for bad in [
            "CVDR",
            "CVDR_1",
            "CVDR12_",
            "CVDR12_12345",
            "cvdr12",
            "BWBR0005537",
            "CVDR1234567890",
        ] {
            assert!(!is_cvdr_id(bad), "{bad}");
        }
        assert_eq!(
            version_cql("CVDR112779_2", "x").unwrap(),
            "dcterms.identifier=\"CVDR112779_2\""
        );
        assert_eq!(
            version_cql("CVDR112779", "2025-01-01").unwrap(),
            "workid=\"CVDR112779\" and overheidrg.datumGeldendOp=2025-01-01"
        );
    }

    #[test]
    fn qc_no_words_change_the_querys_structure() {
        fn prop(words: String) -> bool {
            let cql = match search(&words).cql() {
                Ok(cql) => cql,
                Err(_) => return true,
            };
            cql.matches('"').count() == 2
                && !cql.contains('(')
                && !cql.contains(" AND ")
                && cql.ends_with("datumGeldendOp=2025-01-01")
        }
        quickcheck::QuickCheck::new()
            .tests(2_000)
            .quickcheck(prop as fn(String) -> bool);
    }

    #[test]
    fn a_text_is_read_only_from_a_cvdr_file_on_the_known_hosts() {
        let c = CvdrClient::new("http://127.0.0.1:9/cvdr/sru/Search", &HttpConfig::default()).unwrap();
        for ok in [
            "http://127.0.0.1:9/cvdr/cvdr/CVDR1/1/xml/CVDR1_1.xml",
            "https://repository.officiele-overheidspublicaties.nl/cvdr/CVDR625849/3/xml/CVDR625849_3.xml",
        ] {
            assert!(c.text_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.org/cvdr/x.xml",
            "http://repository.officiele-overheidspublicaties.nl/cvdr/x.xml",
            "https://repository.officiele-overheidspublicaties.nl/bwb/x.xml",
            "http://127.0.0.1:9/cvdr/x.xml?a=b",
            "not a url",
        ] {
            assert!(
                matches!(c.text_url(bad), Err(PlatformError::ForeignLink { .. })),
                "{bad}"
            );
        }
    }

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
