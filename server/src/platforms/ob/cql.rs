//! The CQL of an Officiële Bekendmakingen search, built from typed parts, never pasted
//! ([`ObSearch::cql`]).
//!
//! The SRU service parses CQL strictly (PLATFORMS.md §10.1): several bare words are a
//! syntax error, `{` or `}` anywhere is an HTTP 500 (even inside quotes), an inner `+`
//! between letters rejects the query, `*` and `?` are masks, and sorting lives inside
//! the query (`sortBy dt.available/sort.descending`). So:
//!
//! Invariants:
//! - Every value from a caller is one quoted CQL string ([`quote`]): characters that
//!   would change the query's structure or its meaning as a term (`"`, `\`, `{`, `}`,
//!   `*`, `?`, `^`, control characters) are dropped and `+` becomes a space, so no
//!   argument text can add a clause, an operator or a mask.
//! - Terms are AND-joined; a quoted phrase stays one term; a term left empty after
//!   cleaning is dropped.
//! - Dates go out only as `YYYY-MM-DD` of digits ([`CqlError::Date`] otherwise); whether
//!   the day exists is the tool's check (the platform drops an impossible day with a
//!   warning, which the reader reports).
//! - The collection clause `c.product-area=="officielepublicaties"` always comes first.
//!
//! What this module does not do: send anything, or check lengths (the tools bound every
//! argument before it gets here).

use std::fmt::Write as _;

use rmcp::schemars;

/// The journals and series of Officiële Bekendmakingen (`w.publicatienaam`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub enum Publication {
    /// Municipal gazette.
    Gemeenteblad,
    /// Provincial gazette.
    #[serde(rename = "Provinciaal blad")]
    ProvinciaalBlad,
    /// Water-board gazette.
    Waterschapsblad,
    /// Gazette of joint arrangements.
    #[serde(rename = "Blad gemeenschappelijke regeling")]
    BladGemeenschappelijkeRegeling,
    /// The State gazette (ministries, independent bodies).
    Staatscourant,
    /// Bulletin of Acts and Decrees.
    Staatsblad,
    /// Treaty series.
    Tractatenblad,
    /// Parliamentary papers.
    Kamerstuk,
    /// Parliamentary proceedings.
    Handelingen,
    /// Written questions with their answers (Aanhangsel van de Handelingen).
    #[serde(rename = "Kamervragen (Aanhangsel)")]
    KamervragenAanhangsel,
    /// Written questions not (yet) answered.
    #[serde(rename = "Kamervragen zonder antwoord")]
    KamervragenZonderAntwoord,
    /// Parliamentary documents outside a dossier.
    #[serde(rename = "Niet-dossierstuk")]
    NietDossierstuk,
    /// Agendas.
    Agenda,
}

impl Publication {
    /// Every journal, in the schema's order.
    pub const ALL: [Publication; 13] = [
        Publication::Gemeenteblad,
        Publication::ProvinciaalBlad,
        Publication::Waterschapsblad,
        Publication::BladGemeenschappelijkeRegeling,
        Publication::Staatscourant,
        Publication::Staatsblad,
        Publication::Tractatenblad,
        Publication::Kamerstuk,
        Publication::Handelingen,
        Publication::KamervragenAanhangsel,
        Publication::KamervragenZonderAntwoord,
        Publication::NietDossierstuk,
        Publication::Agenda,
    ];

    /// The name as the platform writes it (`w.publicatienaam`).
    pub const fn as_str(self) -> &'static str {
        match self {
            Publication::Gemeenteblad => "Gemeenteblad",
            Publication::ProvinciaalBlad => "Provinciaal blad",
            Publication::Waterschapsblad => "Waterschapsblad",
            Publication::BladGemeenschappelijkeRegeling => "Blad gemeenschappelijke regeling",
            Publication::Staatscourant => "Staatscourant",
            Publication::Staatsblad => "Staatsblad",
            Publication::Tractatenblad => "Tractatenblad",
            Publication::Kamerstuk => "Kamerstuk",
            Publication::Handelingen => "Handelingen",
            Publication::KamervragenAanhangsel => "Kamervragen (Aanhangsel)",
            Publication::KamervragenZonderAntwoord => "Kamervragen zonder antwoord",
            Publication::NietDossierstuk => "Niet-dossierstuk",
            Publication::Agenda => "Agenda",
        }
    }
}

/// A chamber of the States General, as the platform names it in a parliamentary item's
/// creator (`dcterms:creator scheme="OVERHEID.StatenGeneraal"`, PLATFORMS.md §12a.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Chamber {
    /// The Tweede Kamer (House of Representatives).
    TweedeKamer,
    /// The Eerste Kamer (Senate).
    EersteKamer,
    /// Both chambers in joint session.
    VerenigdeVergadering,
}

impl Chamber {
    /// Every chamber, in the schema's order.
    pub const ALL: [Chamber; 3] = [
        Chamber::TweedeKamer,
        Chamber::EersteKamer,
        Chamber::VerenigdeVergadering,
    ];

    /// The name the tools take and show.
    pub const fn as_str(self) -> &'static str {
        match self {
            Chamber::TweedeKamer => "tweede-kamer",
            Chamber::EersteKamer => "eerste-kamer",
            Chamber::VerenigdeVergadering => "verenigde-vergadering",
        }
    }

    /// The creator the platform writes for the chamber (`dt.creator==`, exact). The
    /// Tweede and Eerste Kamer's are in real records; the joint session's is read from
    /// the platform's HTML metadata by third parties (not yet seen in an SRU record).
    pub const fn creator(self) -> &'static str {
        match self {
            Chamber::TweedeKamer => "Tweede Kamer der Staten-Generaal",
            Chamber::EersteKamer => "Eerste Kamer der Staten-Generaal",
            Chamber::VerenigdeVergadering => "Verenigde Vergadering der Staten-Generaal",
        }
    }

    /// The chamber of a publication, from its creators (exact), else from its identifier's
    /// prefix, which carries the chamber for Handelingen, their Aanhangsel, Kamervragen
    /// and agendas (`h-ek-…`, `ah-tk-…`, `kv-ek-…`, `ag-tk-…`). `None` when neither says
    /// (a Kamerstuk's `kst-…` does not).
    pub fn of(identifier: &str, creators: &[String]) -> Option<Chamber> {
        if let Some(c) = Chamber::ALL
            .into_iter()
            .find(|c| creators.iter().any(|n| n == c.creator()))
        {
            return Some(c);
        }
        let mut parts = identifier.splitn(3, '-');
        let (series, house) = (parts.next()?, parts.next()?);
        if !matches!(series, "h" | "ah" | "kv" | "ag") || parts.next().is_none() {
            return None;
        }
        match house {
            "tk" => Some(Chamber::TweedeKamer),
            "ek" => Some(Chamber::EersteKamer),
            _ => None,
        }
    }

    /// Whether items of `publication` have a chamber: the parliamentary series.
    pub const fn applies_to(publication: Publication) -> bool {
        matches!(
            publication,
            Publication::Kamerstuk
                | Publication::Handelingen
                | Publication::KamervragenAanhangsel
                | Publication::KamervragenZonderAntwoord
                | Publication::NietDossierstuk
                | Publication::Agenda
        )
    }
}

/// Which date a range applies to.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DateField {
    /// The publication date (`dt.available`, publicatiedatum).
    #[default]
    Published,
    /// The document's own date (`dt.date`, dagtekening).
    Document,
}

impl DateField {
    /// The CQL index.
    pub const fn index(self) -> &'static str {
        match self {
            DateField::Published => "dt.available",
            DateField::Document => "dt.date",
        }
    }
}

/// The order of the results.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum SortOrder {
    /// Newest publication first (`sortBy dt.available/sort.descending`).
    #[default]
    Newest,
    /// The platform's relevance order (no `sortBy`).
    Relevance,
}

/// One search term: a word, or a phrase kept together.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Term {
    /// One word.
    Word(String),
    /// Words that must occur together, in this order.
    Phrase(String),
}

impl Term {
    /// The term's text.
    pub fn text(&self) -> &str {
        match self {
            Term::Word(t) | Term::Phrase(t) => t,
        }
    }
}

/// Splits a caller's query into terms: a double-quoted part is a phrase, everything else
/// is split on whitespace into words. An unclosed quote runs to the end.
pub fn terms(query: &str) -> Vec<Term> {
    let mut out = Vec::new();
    for (i, part) in query.split('"').enumerate() {
        if i % 2 == 1 {
            let phrase = part.split_whitespace().collect::<Vec<_>>().join(" ");
            if !phrase.is_empty() {
                out.push(Term::Phrase(phrase));
            }
        } else {
            out.extend(part.split_whitespace().map(|w| Term::Word(w.to_owned())));
        }
    }
    out
}

/// `terms` as the set they are when ANDed: sorted (words, then phrases), each once. The
/// words' case is kept (the full-text index's folding of case is not documented).
pub fn and_set(mut terms: Vec<Term>) -> Vec<Term> {
    terms.sort_by(|a, b| match (a, b) {
        (Term::Word(x), Term::Word(y)) | (Term::Phrase(x), Term::Phrase(y)) => x.cmp(y),
        (Term::Word(_), Term::Phrase(_)) => std::cmp::Ordering::Less,
        (Term::Phrase(_), Term::Word(_)) => std::cmp::Ordering::Greater,
    });
    terms.dedup();
    terms
}

/// A search of Officiële Bekendmakingen, as typed parts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct ObSearch {
    /// Terms that must all occur (full text and indexes).
    pub terms: Vec<Term>,
    /// Only this journal.
    pub publication: Option<Publication>,
    /// Only organisations of this type (`w.organisatietype`, e.g. `gemeente`).
    pub organization_type: Option<String>,
    /// Only publications whose creator contains this (`dt.creator`, containment).
    pub organization: Option<String>,
    /// Only this kind of document (`dt.type`).
    pub document_type: Option<String>,
    /// Only this dossier number (`w.dossiernummer`).
    pub dossier: Option<String>,
    /// Only parliamentary items of this chamber (`dt.creator==`, exact).
    pub chamber: Option<Chamber>,
    /// First day, `YYYY-MM-DD`.
    pub date_from: Option<String>,
    /// Last day (inclusive), `YYYY-MM-DD`.
    pub date_to: Option<String>,
    /// Which date the range applies to.
    pub date_field: DateField,
    /// The order.
    pub sort: SortOrder,
}

/// A search the builder cannot express.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CqlError {
    /// A date that is not `YYYY-MM-DD` of digits.
    #[error("`{field}` must be a date written YYYY-MM-DD")]
    Date {
        /// The argument.
        field: &'static str,
    },
}

/// The collection clause every query starts with.
pub const COLLECTION: &str = "c.product-area==\"officielepublicaties\"";

/// `text` as one quoted CQL string: structure-changing and mask characters dropped
/// (`"`, `\`, `{`, `}`, `*`, `?`, `^`, control characters), `+` read as a space,
/// whitespace collapsed. Returns `None` when no letter or digit is left (a term of
/// punctuation alone finds nothing and may confuse the platform's parser).
pub fn quote(text: &str) -> Option<String> {
    let cleaned: String = text
        .chars()
        .map(|c| if c == '+' { ' ' } else { c })
        .filter(|c| !matches!(c, '"' | '\\' | '{' | '}' | '*' | '?' | '^') && !c.is_control())
        .collect();
    let words: Vec<&str> = cleaned.split_whitespace().collect();
    if !words.iter().any(|w| w.chars().any(char::is_alphanumeric)) {
        return None;
    }
    Some(format!("\"{}\"", words.join(" ")))
}

/// True for `YYYY-MM-DD` written with digits (the day itself is not checked here).
fn date_shaped(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

impl ObSearch {
    /// The CQL query: the collection, every term and filter AND-joined, then the sort.
    pub fn cql(&self) -> Result<String, CqlError> {
        let mut clauses = vec![COLLECTION.to_owned()];
        for term in &self.terms {
            if let Some(q) = quote(term.text()) {
                clauses.push(format!("cql.textAndIndexes={q}"));
            }
        }
        if let Some(p) = self.publication {
            // Publication names are ours (an enum), but quoted like any value.
            clauses.push(format!("w.publicatienaam=\"{}\"", p.as_str()));
        }
        if let Some(c) = self.chamber {
            // The creator's name is ours (an enum), quoted like any value.
            clauses.push(format!("dt.creator==\"{}\"", c.creator()));
        }
        let filters = [
            ("w.organisatietype", "=", &self.organization_type),
            ("dt.creator", "=", &self.organization),
            ("dt.type", "=", &self.document_type),
            ("w.dossiernummer", "==", &self.dossier),
        ];
        for (index, relation, value) in filters {
            if let Some(q) = value.as_deref().and_then(quote) {
                clauses.push(format!("{index}{relation}{q}"));
            }
        }
        let index = self.date_field.index();
        for (field, value, relation) in [("date_from", &self.date_from, ">="), ("date_to", &self.date_to, "<=")] {
            if let Some(date) = value {
                if !date_shaped(date) {
                    return Err(CqlError::Date { field });
                }
                clauses.push(format!("{index}{relation}{date}"));
            }
        }
        let mut query = clauses.join(" AND ");
        if self.sort == SortOrder::Newest {
            let _ = write!(query, " sortBy dt.available/sort.descending");
        }
        Ok(query)
    }
}

/// The CQL that finds one publication by its exact identifier.
pub fn identifier_query(id: &str) -> Option<String> {
    quote(id).map(|q| format!("{COLLECTION} AND dt.identifier=={q}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_and_joined_and_a_quoted_phrase_stays_one_term() {
        let search = ObSearch {
            terms: terms(r#"omgevingsvisie "zonne-energie op daken" 's-Gravenhage"#),
            ..ObSearch::default()
        };
        assert_eq!(
            search.cql().unwrap(),
            "c.product-area==\"officielepublicaties\" AND cql.textAndIndexes=\"omgevingsvisie\" AND \
             cql.textAndIndexes=\"zonne-energie op daken\" AND cql.textAndIndexes=\"'s-Gravenhage\" \
             sortBy dt.available/sort.descending"
        );
    }

    #[test]
    fn filters_are_quoted_and_dates_go_on_the_chosen_field() {
        let search = ObSearch {
            terms: vec![Term::Word("parkeren".into())],
            publication: Some(Publication::KamervragenAanhangsel),
            organization_type: Some("gemeente".into()),
            organization: Some("Utrecht (gemeente)".into()),
            document_type: Some("Verordening".into()),
            dossier: Some("36600".into()),
            chamber: Some(Chamber::EersteKamer),
            date_from: Some("2026-01-01".into()),
            date_to: Some("2026-06-30".into()),
            date_field: DateField::Document,
            sort: SortOrder::Relevance,
        };
        assert_eq!(
            search.cql().unwrap(),
            "c.product-area==\"officielepublicaties\" AND cql.textAndIndexes=\"parkeren\" AND \
             w.publicatienaam=\"Kamervragen (Aanhangsel)\" AND dt.creator==\"Eerste Kamer der Staten-Generaal\" AND \
             w.organisatietype=\"gemeente\" AND \
             dt.creator=\"Utrecht (gemeente)\" AND dt.type=\"Verordening\" AND w.dossiernummer==\"36600\" AND \
             dt.date>=2026-01-01 AND dt.date<=2026-06-30"
        );
    }

    #[test]
    fn metacharacters_never_reach_the_query_as_structure() {
        let search = ObSearch {
            terms: terms(r#"a{b} c+d e* f? g\"h" ) OR dt.title="x"#),
            ..ObSearch::default()
        };
        let cql = search.cql().unwrap();
        assert!(!cql.contains('{') && !cql.contains('}') && !cql.contains('+') && !cql.contains('*'));
        assert_eq!(
            cql,
            "c.product-area==\"officielepublicaties\" AND cql.textAndIndexes=\"ab\" AND \
             cql.textAndIndexes=\"c d\" AND cql.textAndIndexes=\"e\" AND cql.textAndIndexes=\"f\" AND \
             cql.textAndIndexes=\"g\" AND cql.textAndIndexes=\"h\" AND cql.textAndIndexes=\"OR\" AND \
             cql.textAndIndexes=\"dt.title=\" AND cql.textAndIndexes=\"x\" sortBy dt.available/sort.descending"
        );
        assert_eq!(quote("{*?}"), None, "nothing left: no term");
    }

    #[test]
    fn dates_must_be_shaped_like_dates() {
        let bad = ObSearch {
            date_from: Some("2026-1-1".into()),
            ..ObSearch::default()
        };
        assert_eq!(bad.cql(), Err(CqlError::Date { field: "date_from" }));
        let impossible = ObSearch {
            date_to: Some("2026-02-29".into()),
            ..ObSearch::default()
        };
        assert!(impossible.cql().unwrap().contains("dt.available<=2026-02-29"));
    }

    #[test]
    fn a_chamber_is_read_from_the_creator_else_the_identifier() {
        let tk = vec!["Tweede Kamer der Staten-Generaal".to_owned()];
        let ek = vec!["Eerste Kamer der Staten-Generaal".to_owned()];
        assert_eq!(Chamber::of("kst-35842-4", &tk), Some(Chamber::TweedeKamer));
        assert_eq!(Chamber::of("kst-35842-A", &ek), Some(Chamber::EersteKamer));
        assert_eq!(Chamber::of("h-ek-20202021-1-1", &[]), Some(Chamber::EersteKamer));
        assert_eq!(Chamber::of("ah-tk-20202021-3235", &[]), Some(Chamber::TweedeKamer));
        assert_eq!(Chamber::of("kv-ek-215160000", &[]), Some(Chamber::EersteKamer));
        assert_eq!(
            Chamber::of("kst-35842-4", &[]),
            None,
            "a Kamerstuk's id says no chamber"
        );
        assert_eq!(Chamber::of("kv-2989900822", &[]), None);
        assert_eq!(Chamber::of("h-ek", &[]), None);
        assert_eq!(Chamber::of("gmb-2026-1", &["Utrecht".to_owned()]), None);
        assert!(Chamber::applies_to(Publication::Handelingen));
        assert!(!Chamber::applies_to(Publication::Gemeenteblad));
    }

    #[test]
    fn an_identifier_is_one_exact_quoted_value() {
        assert_eq!(
            identifier_query("gmb-2026-104512").unwrap(),
            "c.product-area==\"officielepublicaties\" AND dt.identifier==\"gmb-2026-104512\""
        );
    }
}
