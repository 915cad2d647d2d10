//! The Rechtspraak fake's data: the value lists (about two hundred courts, most of them
//! ended, historic identifiers in the psi form with spaces; nested areas of law; kinds of
//! procedure) and a corpus of rulings generated from a fixed seed, with the XML the real
//! service answers for each.
//!
//! Shape of the corpus (what tests rely on):
//! - [`BUSY_DAY`] has [`BUSY_DAY_RULINGS`] rulings (more than one page of 1000);
//! - [`FOOTNOTES_ECLI`] is a Hoge Raad judgment with footnotes, a table, lists, a quote,
//!   an image and an element the reader does not know; [`METADATA_ONLY_ECLI`] has no text;
//!   [`LONG_ECLI`], the advocate general's conclusie to it, is long (about 45,000
//!   characters: many pages of a ruling's text);
//! - courts tag every ruling with a top-level area, and only some also with a sub-area
//!   (the platform's quirk: a sub-area filter misses most rulings);
//! - some entries are withdrawn (`deleted="doc"` or `deleted="ecli"`), some rulings have
//!   no text, a few replace an old LJN; Hoge Raad judgments come with the advocate
//!   general's conclusie, related both ways.
//!
//! Its rooms: what the corpus holds (`records.rs`), the value lists (`lists.rs`), the
//! ruling generator (`generator.rs`), the corpus and its queries (`corpus.rs`), and the
//! XML the service answers (`xml.rs`).

mod corpus;
mod generator;
mod lists;
mod records;
mod xml;

pub(crate) use records::esc;
pub use records::{
    BUSY_DAY, BUSY_DAY_RULINGS, FOOTNOTES_ECLI, LONG_ECLI, METADATA_ONLY_ECLI, RsArea, RsCorpus, RsCourt, RsProcedure,
    RsQuery, RsRelation, RsRuling, dutch_date,
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_has_its_promised_shape() {
        let c = RsCorpus::generate();
        assert!(c.courts.len() >= 150, "{} courts", c.courts.len());
        assert!(c.courts.iter().filter(|c| c.end.is_some()).count() > 100);
        assert!(c.courts.iter().any(|c| c.identifier.ends_with("/AG DH")));
        let busy = c.rulings.iter().filter(|r| r.date == BUSY_DAY).count();
        assert_eq!(
            busy,
            BUSY_DAY_RULINGS
                + c.rulings
                    .iter()
                    .filter(|r| r.date == BUSY_DAY && r.kind == "Conclusie")
                    .count()
        );
        assert!(c.ruling(FOOTNOTES_ECLI).is_some_and(|r| r.has_text));
        assert!(c.ruling(METADATA_ONLY_ECLI).is_some_and(|r| !r.has_text));
        let long = c.ruling(LONG_ECLI).expect("the long conclusie");
        assert!(long.has_text && long.kind == "Conclusie");
        assert!(c.content_xml(long, false).len() > 50_000, "far longer than a page");
        let eclis: std::collections::BTreeSet<&str> = c.rulings.iter().map(|r| r.ecli.as_str()).collect();
        assert_eq!(eclis.len(), c.rulings.len(), "ECLIs are unique");
        let ids: std::collections::BTreeSet<&str> = c.courts.iter().map(|c| c.identifier.as_str()).collect();
        assert_eq!(ids.len(), c.courts.len(), "court identifiers are unique");
        let abbreviations: std::collections::BTreeSet<&str> =
            c.courts.iter().map(|c| c.abbreviation.as_str()).collect();
        assert_eq!(abbreviations.len(), c.courts.len(), "abbreviations are unique");
        let tagged_sub = c.rulings.iter().filter(|r| r.areas.len() > 1).count();
        assert!(
            tagged_sub * 2 < c.rulings.len(),
            "most rulings carry only a top-level area"
        );
    }
}
