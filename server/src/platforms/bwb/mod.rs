//! The Basiswettenbestand client (`bwb`): national legislation searched over KOOP's SRU
//! service (`x-connection=BWB`, SRU 1.2) and read as in force on a date from its
//! toestand XML (`docs/platforms.md`, "National legislation").
//!
//! Invariants:
//! - The CQL is built here from typed, bounded arguments ([`BwbSearch::cql`]): words go
//!   into one quoted `overheidbwb.titel all "…"` clause with everything but letters,
//!   digits, spaces, `-`, `'` and `.` removed, so no text can change the query's
//!   structure; identifiers and dates are checked before they are written.
//! - Searches are the shared service's ([`COLLECTION`], [`crate::platforms::koop`]): an
//!   answer with diagnostics and no count is the service rejecting the query, or
//!   overload; never "no results"; an answer cut short is an error, never a short page.
//! - A toestand is fetched only from the record's `locatie_toestand` on the search
//!   host or on KOOP's repository host ([`koop::REPOSITORY_HOST`]), under `/bwb/`.
//!
//! What this module does not do: list a regulation's versions, or read its wti and
//! manifest files.

pub mod wire;

use std::time::Duration;

use besluitbron_core::{Platform, PlatformId};
use reqwest::Url;

use super::http::{self, HttpConfig, PlatformError};
pub use super::koop::regulation::{Block, Regulation, RegulationError};
use super::koop::regulation::{Root, read_regulation};
use super::koop::{self, Collection, FileLink, SruService, SruVersion};
pub use wire::BwbRecord;

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "bwb",
    name: "Basiswettenbestand",
});

const TOESTAND_LINK: FileLink = FileLink {
    dir: "/bwb/",
    not_a_url: "the toestand's location is not a URL",
    elsewhere: "the toestand lies on another host",
    not_a_file: "the toestand's location is not a BWB file",
};

/// The Basiswettenbestand as a collection of KOOP's search service.
pub static COLLECTION: Collection = Collection {
    platform: PLATFORM,
    version: SruVersion::V1_2,
    connection: Some("BWB"),
    max_records: MAX_LIMIT,
    advice: "Use fewer or plainer words of the title, or drop a filter",
    narrow: "more words of the title, a kind or a ministry",
    overload_backoff: Duration::from_secs(5),
};

/// Most records per page.
pub const MAX_LIMIT: u32 = 50;

/// A search of the Basiswettenbestand.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BwbSearch {
    /// Words that must all occur in the title.
    pub words: Option<String>,
    /// The kind (`dcterms.type`): `wet`, `AMvB`, `ministeriele-regeling`, ….
    pub kind: Option<String>,
    /// The ministry (`overheid.authority`), by containment.
    pub authority: Option<String>,
    /// In force on this day, YYYY-MM-DD.
    pub in_force_on: String,
}

/// True for a BWB identifier: `BWBR`, `BWBV` or `BWBW` and seven digits.
pub fn is_bwb_id(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 11
        && b.starts_with(b"BWB")
        && matches!(b[3], b'R' | b'V' | b'W')
        && b[4..].iter().all(u8::is_ascii_digit)
}

impl BwbSearch {
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
        if let Some(words) = self.words.as_deref().map(koop::clean_words).filter(|w| !w.is_empty()) {
            clauses.push(format!("overheidbwb.titel all \"{words}\""));
        }
        if let Some(kind) = self.kind.as_deref().map(koop::clean_words).filter(|w| !w.is_empty()) {
            clauses.push(format!("dcterms.type==\"{kind}\""));
        }
        if let Some(authority) = self
            .authority
            .as_deref()
            .map(koop::clean_words)
            .filter(|w| !w.is_empty())
        {
            clauses.push(format!("overheid.authority=\"{authority}\""));
        }
        if clauses.is_empty() {
            return Err(bad(
                "nothing_to_search",
                "give words of the title, a kind or a ministry".to_owned(),
            ));
        }
        clauses.push(format!("overheidbwb.geldigheidsdatum=={}", self.in_force_on));
        Ok(clauses.join(" and "))
    }
}

/// One page of a search.
pub type SearchPage = koop::SearchPage<BwbRecord>;

/// A toestand (root `toestand`), read whole.
pub fn read_toestand(bytes: &[u8]) -> Result<Regulation, RegulationError> {
    read_regulation(bytes, Root::Toestand)
}

/// The Basiswettenbestand client.
#[derive(Debug)]
pub struct BwbClient {
    service: SruService,
}

impl BwbClient {
    /// A client for the SRU endpoint at `base_url` (e.g.
    /// `https://zoekservice.overheid.nl/sru/Search`).
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<BwbClient, PlatformError> {
        Ok(BwbClient {
            service: SruService::new(&COLLECTION, base_url, config)?,
        })
    }

    /// The page of `search` from `offset` (0-based), at most `limit` records.
    pub async fn search(&self, search: &BwbSearch, offset: u64, limit: u32) -> Result<SearchPage, PlatformError> {
        self.service.search(&search.cql()?, offset, limit).await
    }

    /// The version of the regulation `id` in force on `date` (YYYY-MM-DD).
    pub async fn in_force(&self, id: &str, date: &str) -> Result<BwbRecord, PlatformError> {
        let bad = |code: &str, message: String| PlatformError::BadRequest {
            sent: false,
            platform: PLATFORM,
            code: code.to_owned(),
            message,
        };
        if !is_bwb_id(id) {
            return Err(bad(
                "invalid_id",
                format!("`{}` is not a BWB id (such as BWBR0005537)", http::brief(id)),
            ));
        }
        if !crate::calendar::is_day(date) {
            return Err(bad(
                "invalid_date",
                format!("`{}` is not a date written YYYY-MM-DD", http::brief(date)),
            ));
        }
        let query = format!("dcterms.identifier=={id} and overheidbwb.geldigheidsdatum=={date}");
        let page: SearchPage = self.service.search(&query, 0, 10).await?;
        page.records
            .into_iter()
            .find(|r| r.identifier == id)
            .ok_or_else(|| PlatformError::NotFound {
                platform: PLATFORM,
                what: format!("version of {id} in force on {date} (it may not have been in force then)"),
            })
    }

    /// Accepts a toestand's URL only on the search host or KOOP's repository host, under
    /// a `/bwb/` path, without credentials, query or fragment.
    pub fn toestand_url(&self, url: &str) -> Result<Url, PlatformError> {
        koop::file_url(PLATFORM, self.service.base(), url, &TOESTAND_LINK)
    }

    /// The toestand at `url` (from a record's `locatie_toestand`), read.
    pub async fn toestand(&self, url: &str) -> Result<Regulation, PlatformError> {
        let url = self.toestand_url(url)?;
        let fetched = self.service.http().get(url).await?;
        if !fetched.status.is_success() {
            return Err(http::status_error(
                PLATFORM,
                &fetched,
                "regulation text",
                &self.service.refusals(),
            ));
        }
        read_toestand(&fetched.body).map_err(|e| PlatformError::Garbage {
            platform: PLATFORM,
            detail: e.to_string(),
        })
    }

    /// The SRU request for `query`.
    pub fn search_url(&self, query: &str, start_record: u64, limit: u32) -> Url {
        self.service.search_url(query, start_record, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(words: &str) -> BwbSearch {
        BwbSearch {
            words: Some(words.to_owned()),
            in_force_on: "2025-01-01".to_owned(),
            ..BwbSearch::default()
        }
    }

    #[test]
    fn the_query_is_built_from_clean_words_and_checked_values() {
        let s = BwbSearch {
            kind: Some("wet".into()),
            authority: Some("Justitie en Veiligheid".into()),
            ..search("vuurwerk \" or dcterms.identifier=x) (")
        };
        assert_eq!(
            s.cql().unwrap(),
            "overheidbwb.titel all \"vuurwerk or dcterms.identifier x\" and dcterms.type==\"wet\" and \
             overheid.authority=\"Justitie en Veiligheid\" and overheidbwb.geldigheidsdatum==2025-01-01"
        );
        assert!(matches!(
            BwbSearch { in_force_on: "2025-02-30".into(), ..search("x") }.cql(),
            Err(PlatformError::BadRequest { code, .. }) if code == "invalid_date"
        ));
        assert!(matches!(
            search(" \" ( ").cql(),
            Err(PlatformError::BadRequest { code, .. }) if code == "nothing_to_search"
        ));
        assert!(is_bwb_id("BWBR0005537") && !is_bwb_id("BWBR000553") && !is_bwb_id("CVDR112779"));
    }

    #[test]
    fn qc_no_words_change_the_querys_structure() {
        fn prop(words: String) -> bool {
            let cql = match search(&words).cql() {
                Ok(cql) => cql,
                Err(_) => return true,
            };
            // One quoted clause, then the date: exactly two quotes, no parenthesis.
            cql.matches('"').count() == 2 && !cql.contains('(') && cql.ends_with("geldigheidsdatum==2025-01-01")
        }
        quickcheck::QuickCheck::new()
            .tests(2_000)
            .quickcheck(prop as fn(String) -> bool);
    }

    #[test]
    fn a_toestand_is_read_only_from_a_bwb_file_on_the_known_hosts() {
        let c = BwbClient::new("http://127.0.0.1:9/bwb/sru/Search", &HttpConfig::default()).unwrap();
        for ok in [
            "http://127.0.0.1:9/bwb/bwb/BWBR0005537/2024-01-01_0/xml/BWBR0005537_2024-01-01_0.xml",
            "https://repository.officiele-overheidspublicaties.nl/bwb/BWBR0005537/2024-01-01_0/xml/BWBR0005537_2024-01-01_0.xml",
        ] {
            assert!(c.toestand_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.org/bwb/x.xml",
            "http://repository.officiele-overheidspublicaties.nl/bwb/x.xml",
            "http://127.0.0.1:10/bwb/x.xml",
            "http://127.0.0.1:9/other/x.xml",
            "http://127.0.0.1:9/bwb/x.xml?a=b",
            "http://u:p@127.0.0.1:9/bwb/x.xml",
            "not a url",
        ] {
            assert!(
                matches!(c.toestand_url(bad), Err(PlatformError::ForeignLink { .. })),
                "{bad}"
            );
        }
    }
}
