//! The national measures the Netherlands notified for a directive (CELLAR's NIM,
//! PLATFORMS.md §12b.3): the query ([`query`]), its rows read as a [`Transposition`]
//! ([`read`]), and where BesluitBron reads a measure ([`Measure::resolved`]).
//!
//! A measure is its own CELLAR work, linked to the directive by
//! `cdm:measure_national_implementing_implements_resource_legal` and to the country by
//! `…_implemented_by_country`; CELLAR gives no BWB id and no link, only the official
//! journal's name, number and date (and a local id, whose content is not documented).
//!
//! Invariants:
//! - The CELEX number reaches the query only after [`sparql::is_celex`], as a literal.
//! - One row per measure (`GROUP BY`, as OPTIONALs multiply rows), at most [`MAX_MEASURES`]
//!   and one more to tell that more exist.
//! - A measure is resolved only from what CELLAR says of it (a BWB id as its local id, or
//!   a Staatsblad/Staatscourant name with a number and a year); never guessed from its
//!   kind alone. Every measure is kept, resolved or not.
//!
//! What this module does not do: send the query (the client does) or say what a measure
//! is in words (the connector does).

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::sparql::{self, Row, literal, value};

/// The most measures an answer lists.
pub const MAX_MEASURES: u32 = 200;

/// The Netherlands in the Publications Office's country authority.
pub const NLD: &str = "http://publications.europa.eu/resource/authority/country/NLD";

/// One national measure, as CELLAR gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Measure {
    /// Its CELEX number (sector 7, e.g. `72019L1937NLD_202500001`).
    pub celex: String,
    /// Its title.
    pub title: Option<String>,
    /// The kind of act (`Wet`, `Regeling`, `Bekendmaking`…).
    pub type_act: Option<String>,
    /// The official journal's name (`Staatsblad`, `Staatscourant`).
    pub journal: Option<String>,
    /// Its number in that journal.
    pub number: Option<String>,
    /// The journal's date, YYYY-MM-DD.
    pub journal_date: Option<String>,
    /// When it was notified to the Commission, YYYY-MM-DD.
    pub notified: Option<String>,
    /// CELLAR's local id of the measure.
    pub local_id: Option<String>,
}

/// What CELLAR says of a directive's Dutch transposition.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transposition {
    /// The directive's CELEX number.
    pub celex: String,
    /// Its resource type's code (`DIR`, `DIR_IMPL`…), when CELLAR gives it.
    pub kind: Option<String>,
    /// The measures, newest journal date first.
    pub measures: Vec<Measure>,
    /// More than [`MAX_MEASURES`] were found: the list is cut there.
    pub more: bool,
}

impl Measure {
    /// The id BesluitBron reads this measure by (`fetch`): a BWB id given as its local
    /// id, or the publication `stb-{year}-{number}` / `stcrt-{year}-{number}` of its
    /// Staatsblad or Staatscourant number; `None` when CELLAR's fields name neither.
    pub fn resolved(&self) -> Option<String> {
        if let Some(local) = self.local_id.as_deref().map(str::trim) {
            let upper = local.to_ascii_uppercase();
            if is_bwb_id(&upper) {
                return Some(upper);
            }
            if is_publication_id(local) {
                return Some(local.to_ascii_lowercase());
            }
        }
        let journal = self.journal.as_deref()?.to_lowercase();
        let kind = if journal.contains("staatsblad") || journal.split_whitespace().any(|w| w == "stb" || w == "stb.") {
            "stb"
        } else if journal.contains("staatscourant") || journal.split_whitespace().any(|w| w == "stcrt" || w == "stcrt.")
        {
            "stcrt"
        } else {
            return None;
        };
        let number = self.number.as_deref()?.trim();
        let year = self.journal_date.as_deref()?.get(..4)?;
        let digits = |t: &str| !t.is_empty() && t.len() <= 8 && t.bytes().all(|b| b.is_ascii_digit());
        let number = number.trim_start_matches('0');
        (digits(number) && digits(year) && year.len() == 4).then(|| format!("{kind}-{year}-{number}"))
    }
}

/// A BWB id (`BWBR0005537`).
fn is_bwb_id(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 11
        && b.starts_with(b"BWB")
        && matches!(b[3], b'R' | b'V' | b'W')
        && b[4..].iter().all(u8::is_ascii_digit)
}

/// A Staatsblad or Staatscourant publication id (`stb-2018-401`).
fn is_publication_id(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let Some(rest) = lower.strip_prefix("stb-").or_else(|| lower.strip_prefix("stcrt-")) else {
        return false;
    };
    let mut parts = rest.split('-');
    let (Some(year), Some(number), None) = (parts.next(), parts.next(), parts.next()) else {
        return false;
    };
    year.len() == 4
        && year.bytes().all(|b| b.is_ascii_digit())
        && !number.is_empty()
        && number.len() <= 8
        && number.bytes().all(|b| b.is_ascii_digit())
}

/// The query of the Dutch measures for the act `celex` (checked with
/// [`sparql::is_celex`]): one row per measure, and one row without `?nimcelex` when the
/// act exists but has none; no row when CELLAR has no act with that number.
pub fn query(celex: &str) -> String {
    let field = |p: &str, v: &str| format!("  OPTIONAL {{ ?nim cdm:measure_national_implementing_{p} ?{v} }}\n");
    let mut q = String::from(
        "PREFIX cdm: <http://publications.europa.eu/ontology/cdm#>\n\
         PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n\
         SELECT ?nimcelex (SAMPLE(?type) AS ?kind) (SAMPLE(?t) AS ?title) (SAMPLE(?ta) AS ?typeAct) \
         (SAMPLE(?o) AS ?oj) (SAMPLE(?on) AS ?ojnum) (MAX(?od) AS ?ojdate) (MAX(?nd) AS ?notif) \
         (SAMPLE(?loc) AS ?local) WHERE {\n",
    );
    let _ = writeln!(q, "?w cdm:resource_legal_id_celex {}^^xsd:string .", literal(celex));
    q.push_str("OPTIONAL { ?w cdm:work_has_resource-type ?type }\n");
    let _ = writeln!(
        q,
        "OPTIONAL {{\n  ?nim cdm:measure_national_implementing_implements_resource_legal ?w ;\n    \
         cdm:measure_national_implementing_implemented_by_country <{NLD}> ;\n    cdm:resource_legal_id_celex ?nimcelex .\n  \
         OPTIONAL {{ ?nim cdm:work_title ?t }}\n  OPTIONAL {{ ?nim cdm:resource_legal_id_local ?loc }}"
    );
    q.push_str(&field("type_act", "ta"));
    q.push_str(&field("name_official_journal", "o"));
    q.push_str(&field("number_official_journal", "on"));
    q.push_str(&field("date_official_journal", "od"));
    q.push_str(&field("date_notification", "nd"));
    let _ = write!(
        q,
        "}}\n}}\nGROUP BY ?nimcelex\nORDER BY DESC(?ojdate) ?nimcelex\nLIMIT {}\n",
        (MAX_MEASURES + 1).min(sparql::MAX_ROWS)
    );
    q
}

/// The rows of [`query`] as the transposition of `celex`; `None` when CELLAR has no act
/// with that number (no row at all).
pub fn read(celex: &str, rows: &[Row]) -> Option<Transposition> {
    if rows.is_empty() {
        return None;
    }
    let text = |row: &Row, name: &str| {
        value(row, name)
            .map(|v| v.split_whitespace().collect::<Vec<_>>().join(" "))
            .filter(|v| !v.is_empty())
    };
    let day = |row: &Row, name: &str| text(row, name).map(|d| d.chars().take(10).collect::<String>());
    let mut t = Transposition {
        celex: celex.to_owned(),
        ..Transposition::default()
    };
    for row in rows {
        if t.kind.is_none() {
            t.kind = value(row, "kind").map(|k| k.rsplit('/').next().unwrap_or(k).to_owned());
        }
        let Some(nim) = text(row, "nimcelex") else { continue };
        if t.measures.iter().any(|m| m.celex == nim) {
            continue;
        }
        t.measures.push(Measure {
            celex: nim,
            title: text(row, "title"),
            type_act: text(row, "typeAct"),
            journal: text(row, "oj"),
            number: text(row, "ojnum"),
            journal_date: day(row, "ojdate"),
            notified: day(row, "notif"),
            local_id: text(row, "local"),
        });
    }
    t.more = t.measures.len() > MAX_MEASURES as usize;
    t.measures.truncate(MAX_MEASURES as usize);
    Some(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measure(journal: Option<&str>, number: Option<&str>, date: Option<&str>, local: Option<&str>) -> Measure {
        Measure {
            celex: "72019L1937NLD_1".into(),
            journal: journal.map(Into::into),
            number: number.map(Into::into),
            journal_date: date.map(Into::into),
            local_id: local.map(Into::into),
            ..Measure::default()
        }
    }

    #[test]
    fn a_measure_resolves_only_from_what_cellar_says_of_it() {
        let cases = [
            (
                measure(Some("Staatsblad"), Some("401"), Some("2018-10-30"), None),
                Some("stb-2018-401"),
            ),
            (
                measure(Some("Stb."), Some("0401"), Some("2018-10-30"), None),
                Some("stb-2018-401"),
            ),
            (
                measure(Some("Staatscourant"), Some("10004"), Some("2026-07-03"), None),
                Some("stcrt-2026-10004"),
            ),
            (measure(None, None, None, Some("bwbr0005537")), Some("BWBR0005537")),
            (measure(None, None, None, Some("stb-2018-401")), Some("stb-2018-401")),
            (measure(Some("Staatsblad"), None, Some("2018-10-30"), None), None),
            (measure(Some("Staatsblad"), Some("401"), None, None), None),
            (measure(Some("Staatsblad"), Some("4a1"), Some("2018-10-30"), None), None),
            (
                measure(Some("Gemeenteblad"), Some("401"), Some("2018-10-30"), None),
                None,
            ),
            (measure(None, Some("401"), Some("2018-10-30"), Some("WET-123")), None),
        ];
        for (m, expected) in cases {
            assert_eq!(m.resolved().as_deref(), expected, "{m:?}");
        }
    }

    #[test]
    fn the_query_holds_the_celex_as_a_literal_and_a_limit() {
        let q = query("32019L1937");
        assert!(q.contains("\"32019L1937\"^^xsd:string"), "{q}");
        assert!(q.contains("GROUP BY ?nimcelex") && q.contains("LIMIT 201"), "{q}");
        assert!(q.contains(NLD));
    }

    #[test]
    fn rows_read_as_measures_and_no_row_is_no_act() {
        let row = |pairs: &[(&str, &str)]| -> Row {
            pairs
                .iter()
                .map(|(k, v)| {
                    (
                        (*k).to_owned(),
                        sparql::Term {
                            kind: "literal".into(),
                            value: (*v).to_owned(),
                        },
                    )
                })
                .collect()
        };
        assert_eq!(read("32019L1937", &[]), None);
        let none = read("32019L1937", &[row(&[("kind", "http://x/resource-type/DIR")])]).unwrap();
        assert_eq!(none.kind.as_deref(), Some("DIR"));
        assert!(none.measures.is_empty());
        let t = read(
            "32019L1937",
            &[
                row(&[
                    ("nimcelex", "72019L1937NLD_1"),
                    ("oj", "Staatsblad"),
                    ("ojnum", "8"),
                    ("ojdate", "2023-02-01"),
                ]),
                row(&[("nimcelex", "72019L1937NLD_1")]),
                row(&[("nimcelex", "72019L1937NLD_2"), ("title", "  Besluit\n x ")]),
            ],
        )
        .unwrap();
        assert_eq!(t.measures.len(), 2);
        assert_eq!(t.measures[0].resolved().as_deref(), Some("stb-2023-8"));
        assert_eq!(t.measures[1].title.as_deref(), Some("Besluit x"));
        assert!(!t.more);
    }
}
