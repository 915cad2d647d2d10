//! The Basiswettenbestand (`bwb`): national legislation as a collection of KOOP's regulation
//! collections ([`koop::zoekservice`]), searched over KOOP's zoekservice
//! (`x-connection=BWB`, SRU 1.2) and read as in force on a date from its toestand XML
//! (`docs/platforms.md`, "National legislation"). What is its own: its record
//! ([`BwbRecord`]), the CQL of its searches ([`BwbSearch`]) and of a version in force,
//! its ids ([`is_bwb_id`]), and where its toestanden lie.
//!
//! Invariants:
//! - The CQL is built from typed, bounded arguments: words go into one quoted
//!   `overheidbwb.titel all "…"` clause with everything but letters, digits, spaces, `-`,
//!   `'` and `.` removed, so no text can change the query's structure; identifiers and
//!   dates are checked before they are written.
//! - A toestand is fetched only from the record's `locatie_toestand` on the search host or
//!   on KOOP's repository host ([`koop::REPOSITORY_HOST`]), under `/bwb/`.
//!
//! What this module does not do: list a regulation's versions, or read its wti and
//! manifest files.

pub mod wire;

use besluitbron_core::{Platform, PlatformId};

use super::http::PlatformError;
pub use super::koop::regulation::{Block, Regulation, RegulationError};
use super::koop::regulation::{Root, read_regulation};
use super::koop::zoekservice::{self, RegulationClient, RegulationCollection, in_force_day, in_force_query};
use super::koop::{self, Collection, FileLink};
pub use wire::BwbRecord;

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "bwb",
    name: "Basiswettenbestand",
});

/// The Basiswettenbestand as a collection of KOOP's search service.
pub static COLLECTION: Collection = zoekservice::collection(
    PLATFORM,
    "BWB",
    "Use fewer or plainer words of the title, or drop a filter",
    "more words of the title, a kind or a ministry",
);

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

/// One page of a search.
pub type SearchPage = koop::SearchPage<BwbRecord>;

/// A toestand (root `toestand`), read whole.
pub fn read_toestand(bytes: &[u8]) -> Result<Regulation, RegulationError> {
    read_regulation(bytes, Root::Toestand)
}

/// The Basiswettenbestand among KOOP's regulation collections.
#[derive(Debug)]
pub struct Bwb;

impl RegulationCollection for Bwb {
    type Record = BwbRecord;
    type Search = BwbSearch;
    const COLLECTION: &'static Collection = &COLLECTION;
    const FILES: FileLink = FileLink::new("/bwb/", "toestand", "BWB");
    const ROOT: Root = Root::Toestand;
    const ID: &'static str = "a BWB id (such as BWBR0005537)";

    fn is_id(text: &str) -> bool {
        is_bwb_id(text)
    }

    fn file(record: &BwbRecord) -> Option<&str> {
        record.toestand_url.as_deref()
    }

    /// Words of the title in one quoted clause, the kind and the ministry, then the day.
    fn cql(search: &BwbSearch) -> Result<String, PlatformError> {
        let day = in_force_day(PLATFORM, &search.in_force_on)?;
        let clean = |text: &Option<String>| text.as_deref().map(koop::clean_words).filter(|w| !w.is_empty());
        let clauses = [
            clean(&search.words).map(|words| format!("overheidbwb.titel all \"{words}\"")),
            clean(&search.kind).map(|kind| format!("dcterms.type==\"{kind}\"")),
            clean(&search.authority).map(|authority| format!("overheid.authority=\"{authority}\"")),
        ];
        in_force_query(
            PLATFORM,
            clauses.into_iter().flatten(),
            format!("overheidbwb.geldigheidsdatum=={day}"),
            "give words of the title, a kind or a ministry",
        )
    }

    /// The version in force on `day`: the regulation's record on that day.
    fn version_cql(id: &str, day: &str) -> Result<String, PlatformError> {
        let day = in_force_day(PLATFORM, day)?;
        Ok(format!(
            "dcterms.identifier=={id} and overheidbwb.geldigheidsdatum=={day}"
        ))
    }

    fn version_of(records: Vec<BwbRecord>, id: &str) -> Option<BwbRecord> {
        records.into_iter().find(|r| r.identifier == id)
    }
}

/// The Basiswettenbestand client.
pub type BwbClient = RegulationClient<Bwb>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_query_is_built_from_clean_words_and_checked_values() {
        let s = BwbSearch {
            words: Some("vuurwerk \" or dcterms.identifier=x) (".to_owned()),
            kind: Some("wet".into()),
            authority: Some("Justitie en Veiligheid".into()),
            in_force_on: "2025-01-01".to_owned(),
        };
        assert_eq!(
            Bwb::cql(&s).unwrap(),
            "overheidbwb.titel all \"vuurwerk or dcterms.identifier x\" and dcterms.type==\"wet\" and \
             overheid.authority=\"Justitie en Veiligheid\" and overheidbwb.geldigheidsdatum==2025-01-01"
        );
        assert_eq!(
            Bwb::version_cql("BWBR0005537", "2025-01-01").unwrap(),
            "dcterms.identifier==BWBR0005537 and overheidbwb.geldigheidsdatum==2025-01-01"
        );
        assert!(is_bwb_id("BWBR0005537") && !is_bwb_id("BWBR000553") && !is_bwb_id("CVDR112779"));
    }
}
