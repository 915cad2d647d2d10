//! What the Rechtspraak fake's corpus holds: its shape's promises (the busy day, the
//! rulings with footnotes, without a text, the long conclusie), the namespaces its XML
//! names, the records of courts, areas, procedures and rulings, a query, and the small
//! helpers the other rooms share (a day as text, a Dutch date, XML escaping).
//!
//! What it does not do: generate or render anything.

use std::collections::HashMap;

use chrono::NaiveDate;

/// A day with more rulings than one page holds.
pub const BUSY_DAY: &str = "2026-11-03";
/// Rulings on [`BUSY_DAY`].
pub const BUSY_DAY_RULINGS: usize = 1_200;
/// Rulings on other days (before the conclusies that come with Hoge Raad judgments).
pub const OTHER_RULINGS: usize = 1_400;
/// A judgment with footnotes, a table and the rest of the element vocabulary.
pub const FOOTNOTES_ECLI: &str = "ECLI:NL:HR:2026:1500";
/// A ruling published without a text.
pub const METADATA_ONLY_ECLI: &str = "ECLI:NL:RBAMS:2026:9999";
/// A long conclusie (many pages of text), the one [`FOOTNOTES_ECLI`] relates to.
pub const LONG_ECLI: &str = "ECLI:NL:PHR:2026:400";
/// Numbered paragraphs of [`LONG_ECLI`]'s text.
pub const LONG_PARAGRAPHS: usize = 120;

pub(super) const OWMS: &str = "http://standaarden.overheid.nl/owms/terms/";
pub(super) const PSI: &str = "http://psi.rechtspraak.nl/";
pub(super) const AREA: &str = "http://psi.rechtspraak.nl/rechtsgebied#";
pub(super) const PROCEDURE: &str = "http://psi.rechtspraak.nl/procedure#";

/// A court of the Instanties list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsCourt {
    /// Its identifier (trimmed; the XML holds it with whitespace around).
    pub identifier: String,
    /// Its name.
    pub name: String,
    /// Its abbreviation (the ECLI court code for courts that publish).
    pub abbreviation: String,
    /// Its kind.
    pub kind: &'static str,
    /// First day.
    pub begin: &'static str,
    /// Last day, for ended courts.
    pub end: Option<&'static str>,
}

/// An area of law.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsArea {
    /// Its identifier.
    pub identifier: String,
    /// Its name.
    pub name: String,
    /// The index of its parent area.
    pub parent: Option<usize>,
}

/// A kind of procedure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsProcedure {
    /// Its identifier.
    pub identifier: String,
    /// Its name.
    pub name: String,
}

/// A formal relation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsRelation {
    /// The other ECLI.
    pub ecli: String,
    /// `psi:type`'s last part.
    pub kind: &'static str,
    /// `eerdereAanleg` or `latereAanleg`.
    pub direction: &'static str,
    /// The platform's wording.
    pub label: String,
}

/// One ruling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsRuling {
    /// The ECLI.
    pub ecli: String,
    /// Index of its court.
    pub court: usize,
    /// Decision date, `YYYY-MM-DD`.
    pub date: String,
    /// Publication date.
    pub issued: String,
    /// Last modified, `YYYY-MM-DDThh:mm:ss`.
    pub modified: String,
    /// `Uitspraak` or `Conclusie`.
    pub kind: &'static str,
    /// Indices of its areas (a top-level one first, maybe a sub-area).
    pub areas: Vec<usize>,
    /// Index of its procedure.
    pub procedure: usize,
    /// Case number.
    pub case_number: String,
    /// Whether a text is published.
    pub has_text: bool,
    /// `doc` or `ecli` when withdrawn.
    pub deleted: Option<&'static str>,
    /// The inhoudsindicatie; `None` is published as `-`.
    pub summary: Option<String>,
    /// Formal relations.
    pub relations: Vec<RsRelation>,
    /// Vindplaatsen.
    pub vindplaatsen: Vec<String>,
    /// The old LJN it replaces.
    pub replaces: Option<String>,
}

/// The whole fake service's data.
#[derive(Debug)]
pub struct RsCorpus {
    /// The Instanties list.
    pub courts: Vec<RsCourt>,
    /// The Rechtsgebieden list, flattened (parents before their children).
    pub areas: Vec<RsArea>,
    /// The Proceduresoorten list.
    pub procedures: Vec<RsProcedure>,
    /// The rulings, in generation order.
    pub rulings: Vec<RsRuling>,
    pub(super) by_ecli: HashMap<String, usize>,
}

/// A search as the service reads it (only the parameters it honours).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RsQuery {
    /// `type` values (any of them).
    pub types: Vec<String>,
    /// `creator` values (any of them).
    pub creators: Vec<String>,
    /// `subject` values (any of them).
    pub subjects: Vec<String>,
    /// `date`: one day, or an inclusive range.
    pub date: Option<(String, String)>,
    /// `modified`: since, or an inclusive range.
    pub modified: Option<(String, Option<String>)>,
    /// `return=DOC`.
    pub with_doc: bool,
    /// `replaces`.
    pub replaces: Option<String>,
    /// `sort=DESC`.
    pub descending: bool,
}

pub(super) fn day_string(day: NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}

pub(super) const SEED: u64 = 0x5253_2026;

/// `yyyy-mm-dd` as `dd-mm-yyyy`.
pub fn dutch_date(iso: &str) -> String {
    format!("{}-{}-{}", &iso[8..10], &iso[5..7], &iso[0..4])
}

/// XML-escapes text and attribute values.
pub(crate) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}
