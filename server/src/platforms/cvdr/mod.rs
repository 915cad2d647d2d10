//! The Centrale Voorziening Decentrale Regelgeving (`cvdr`): local regulations of
//! municipalities, provinces and water boards as a collection of KOOP's regulation
//! collections ([`koop::zoekservice`]), searched over KOOP's zoekservice
//! (`x-connection=cvdr`, SRU 1.2, the host `bwb` asks too) and read from each version's XML
//! (`docs/platforms.md`, "Local regulations"). What is its own: its record
//! ([`CvdrRecord`]), the CQL of its searches ([`CvdrSearch`]) and of a version, its ids
//! ([`is_cvdr_id`]), and where its files lie.
//!
//! Invariants:
//! - The CQL is built from typed, bounded arguments: words go into one quoted
//!   `keyword all "…"` clause, lower-cased (the service reads `AND`, `OR` and `NOT` as
//!   operators even inside quotes) with everything but letters, digits, spaces, `-`, `'`
//!   and `.` removed; an organisation is written only as resolved by the connector from
//!   its own list ([`Organisation`]), never from the caller's text; identifiers and dates
//!   are checked before they are written.
//! - A regulation's text is fetched only from the record's `publicatieurl_xml` on the
//!   search host or on KOOP's repository host ([`koop::REPOSITORY_HOST`]), under
//!   `/cvdr/`.
//!
//! What this module does not do: list a regulation's versions, read its external
//! attachments (bijlagen outside the XML), or resolve organisation names (the connector
//! does, before anything is asked).

pub mod wire;

use besluitbron_core::{Platform, PlatformId};

use super::http::{self, PlatformError};
pub use super::koop::regulation::{Regulation, RegulationError};
use super::koop::regulation::{Root, read_regulation};
use super::koop::zoekservice::{self, RegulationClient, RegulationCollection, in_force_day, in_force_query, unsent};
use super::koop::{self, Collection, FileLink, clean_words};
pub use wire::CvdrRecord;

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "cvdr",
    name: "Lokale regelgeving (CVDR)",
});

/// Local regulations as a collection of KOOP's search service.
pub static COLLECTION: Collection = zoekservice::collection(
    PLATFORM,
    "cvdr",
    "Use fewer or plainer words, or drop the organisation",
    "more words or an organisation",
);

/// One page of a search.
pub type SearchPage = koop::SearchPage<CvdrRecord>;

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

/// A regulation's XML (root `cvdr`), read whole.
pub fn read_text(bytes: &[u8]) -> Result<Regulation, RegulationError> {
    read_regulation(bytes, Root::Cvdr)
}

/// The CVDR among KOOP's regulation collections.
#[derive(Debug)]
pub struct Cvdr;

impl RegulationCollection for Cvdr {
    type Record = CvdrRecord;
    type Search = CvdrSearch;
    const COLLECTION: &'static Collection = &COLLECTION;
    const FILES: FileLink = FileLink::new("/cvdr/", "regulation", "CVDR");
    const ROOT: Root = Root::Cvdr;
    const ID: &'static str = "a CVDR id (such as CVDR123456 or CVDR123456_2)";

    fn is_id(text: &str) -> bool {
        is_cvdr_id(text)
    }

    fn file(record: &CvdrRecord) -> Option<&str> {
        record.text_url.as_deref()
    }

    /// Words in one quoted clause, lower-cased, and the organisation resolved, then the
    /// day.
    fn cql(search: &CvdrSearch) -> Result<String, PlatformError> {
        let day = in_force_day(PLATFORM, &search.in_force_on)?;
        let words = search
            .words
            .as_deref()
            .map(|w| clean_words(w).to_lowercase())
            .filter(|w| !w.is_empty());
        let organisation = match &search.organisation {
            Some(org) if !(quotable(org.name) && quotable(org.kind)) => {
                return Err(unsent(
                    PLATFORM,
                    "invalid_organisation",
                    format!("`{}` cannot be written into a query", http::brief(org.name)),
                ));
            }
            Some(org) => Some(format!(
                "dcterms.creator=\"{}\" and organisatieType=\"{}\"",
                org.name, org.kind
            )),
            None => None,
        };
        let clauses = [words.map(|words| format!("keyword all \"{words}\"")), organisation];
        in_force_query(
            PLATFORM,
            clauses.into_iter().flatten(),
            format!("overheidrg.datumGeldendOp={day}"),
            "give words or an organisation",
        )
    }

    /// With a version (`CVDR123456_2`) that version, without one the version in force on
    /// `day`.
    fn version_cql(id: &str, day: &str) -> Result<String, PlatformError> {
        if Cvdr::versioned(id) {
            return Ok(format!("dcterms.identifier=\"{id}\""));
        }
        let day = in_force_day(PLATFORM, day)?;
        Ok(format!("workid=\"{id}\" and overheidrg.datumGeldendOp={day}"))
    }

    /// The version a versioned id names; of a work's versions in force on the day, the
    /// one that came into force last.
    fn version_of(records: Vec<CvdrRecord>, id: &str) -> Option<CvdrRecord> {
        let work = id.split('_').next().unwrap_or(id);
        let of_work =
            |r: &CvdrRecord| r.identifier == id || r.identifier.split('_').next() == Some(work) && !id.contains('_');
        records
            .into_iter()
            .filter(of_work)
            .max_by(|a, b| a.in_force_from.cmp(&b.in_force_from))
    }

    fn versioned(id: &str) -> bool {
        id.contains('_')
    }
}

/// The CVDR client.
pub type CvdrClient = RegulationClient<Cvdr>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_built_from_clean_words_and_a_resolved_organisation() {
        let s = CvdrSearch {
            words: Some("Parkeren OR \" dcterms.creator=x) (".to_owned()),
            organisation: Some(Organisation {
                kind: "Gemeente",
                name: "'s-Gravenhage",
            }),
            in_force_on: "2025-01-01".to_owned(),
        };
        assert_eq!(
            Cvdr::cql(&s).unwrap(),
            "keyword all \"parkeren or dcterms.creator x\" and dcterms.creator=\"'s-Gravenhage\" and \
             organisatieType=\"Gemeente\" and overheidrg.datumGeldendOp=2025-01-01"
        );
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
            Cvdr::version_cql("CVDR112779_2", "x").unwrap(),
            "dcterms.identifier=\"CVDR112779_2\""
        );
        assert_eq!(
            Cvdr::version_cql("CVDR112779", "2025-01-01").unwrap(),
            "workid=\"CVDR112779\" and overheidrg.datumGeldendOp=2025-01-01"
        );
    }
}
