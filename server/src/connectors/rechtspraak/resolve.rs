//! Names to identifiers: a court, an area of law or a procedure as an assistant writes
//! it ("Hoge Raad", "HR", "Rechtbank Amsterdam", "strafrecht", "omgevingsrecht") resolved
//! through the value lists to the identifier the service needs.
//!
//! Matching is exact after folding case, accents and whitespace, on the name, the
//! abbreviation, the identifier itself, or the readable tail of the identifier
//! (`Hoge_Raad_der_Nederlanden`, `rechtsgebied#strafrecht`). Anything else is an error
//! listing the closest names (Jaro–Winkler similarity, with a bonus for a name that
//! contains what was asked), so an assistant can correct a typo in one step. Where
//! several entries match, a court that still exists wins over an ended one and a
//! top-level area over a sub-area; otherwise the error lists the candidates.
//!
//! Pure functions of the lists; no platform call is made here.

use crate::connectors::ask::{Resolution, of_candidates};
use crate::connectors::offers::{Choice, words};
use crate::platforms::rechtspraak::{Area, Court, Procedure};

/// Names shown in a "closest matches" error.
pub const CLOSEST: usize = 5;
/// Characters of the asked name repeated in an error.
const ECHO_CHARS: usize = 60;

/// Folds case, common accents, underscores and whitespace.
pub fn fold(text: &str) -> String {
    let mapped: String = text
        .chars()
        .map(|c| match c {
            'á' | 'à' | 'ä' | 'â' | 'Á' | 'À' | 'Ä' | 'Â' => 'a',
            'é' | 'è' | 'ë' | 'ê' | 'É' | 'È' | 'Ë' | 'Ê' => 'e',
            'í' | 'ì' | 'ï' | 'î' | 'Í' | 'Ì' | 'Ï' | 'Î' => 'i',
            'ó' | 'ò' | 'ö' | 'ô' | 'Ó' | 'Ò' | 'Ö' | 'Ô' => 'o',
            'ú' | 'ù' | 'ü' | 'û' | 'Ú' | 'Ù' | 'Ü' | 'Û' => 'u',
            'ç' | 'Ç' => 'c',
            '_' => ' ',
            c => c,
        })
        .collect();
    mapped.to_lowercase().split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The asked name as it may appear in an error: trimmed, at most [`ECHO_CHARS`] characters.
pub fn echo(text: &str) -> String {
    let text = text.trim();
    let mut out: String = text.chars().take(ECHO_CHARS).collect();
    if text.chars().count() > ECHO_CHARS {
        out.push('…');
    }
    out
}

/// One entry of a value list as the matcher sees it.
struct Candidate<'a, T> {
    item: &'a T,
    /// Folded keys that match exactly.
    keys: Vec<String>,
    /// Folded names compared for closeness.
    names: Vec<String>,
    /// How it is shown in an error.
    label: String,
    /// Preferred when several match (a court that exists, a top-level area).
    preferred: bool,
}

/// The most choices a person is offered.
const MAX_CHOICES: usize = 8;

/// What `asked` names among `candidates`, for asking back: one exact match (or one
/// preferred among several) is exact, as [`resolve`] reads it; several exact matches
/// are the choices; with none, the entries whose names hold the asked words as whole
/// words are, when there are two or more ("Den Haag", "internationaal"). Preferred
/// entries first, each labelled, its value what `value` makes of it (a key [`resolve`]
/// takes exactly).
fn several<T>(asked: &str, candidates: Vec<Candidate<'_, T>>, value: impl Fn(&T) -> String) -> Resolution {
    let q = fold(asked);
    if q.is_empty() {
        return Resolution::Unknown;
    }
    let exact: Vec<&Candidate<'_, T>> = candidates.iter().filter(|c| c.keys.contains(&q)).collect();
    let preferred = exact.iter().filter(|c| c.preferred).count();
    if exact.len() == 1 || preferred == 1 {
        return Resolution::Exact;
    }
    let wanted = words(asked);
    let holds = |c: &&Candidate<'_, T>| {
        !wanted.is_empty()
            && c.names
                .iter()
                .any(|n| format!(" {} ", words(n)).contains(&format!(" {wanted} ")))
    };
    let mut fits: Vec<&Candidate<'_, T>> = if exact.is_empty() {
        candidates.iter().filter(holds).collect()
    } else {
        exact
    };
    if fits.len() < 2 {
        return Resolution::Unknown;
    }
    fits.sort_by_key(|c| !c.preferred);
    fits.truncate(MAX_CHOICES);
    of_candidates(
        fits.into_iter()
            .map(|c| Choice {
                value: value(c.item),
                label: c.label.clone(),
            })
            .collect(),
    )
}

fn resolve<'a, T>(
    what: &str,
    list_tool: &str,
    asked: &str,
    candidates: Vec<Candidate<'a, T>>,
) -> Result<&'a T, String> {
    let q = fold(asked);
    if q.is_empty() {
        return Err(format!("`{what}` is empty; {list_tool} lists the names"));
    }
    let exact: Vec<&Candidate<'a, T>> = candidates.iter().filter(|c| c.keys.contains(&q)).collect();
    let preferred: Vec<&&Candidate<'a, T>> = exact.iter().filter(|c| c.preferred).collect();
    match (exact.as_slice(), preferred.as_slice()) {
        ([only], _) => return Ok(only.item),
        (_, [only]) => return Ok(only.item),
        ([], _) => {}
        (several, _) => {
            let labels: Vec<&str> = several.iter().take(CLOSEST).map(|c| c.label.as_str()).collect();
            return Err(format!(
                "`{}` names several {what}s: {}; give the identifier",
                echo(asked),
                labels.join("; ")
            ));
        }
    }
    let mut scored: Vec<(f64, &str)> = candidates
        .iter()
        .map(|c| {
            let score = c
                .names
                .iter()
                .map(|n| {
                    let bonus = if n.contains(&q) || (q.len() > 3 && q.contains(n.as_str())) {
                        0.2
                    } else {
                        0.0
                    };
                    strsim::jaro_winkler(&q, n) + bonus
                })
                .fold(0.0, f64::max);
            (score, c.label.as_str())
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let closest: Vec<&str> = scored.iter().take(CLOSEST).map(|(_, l)| *l).collect();
    Err(format!(
        "no {what} is named `{}`; the closest are: {}. Use one of these, or {list_tool} to look it up",
        echo(asked),
        closest.join("; ")
    ))
}

/// The readable tail of an identifier: after the last `#` or `/`.
fn tail(identifier: &str) -> &str {
    identifier.rsplit(['#', '/']).next().unwrap_or(identifier)
}

/// The court named `asked` (name, abbreviation or identifier).
pub fn court<'a>(courts: &'a [Court], asked: &str) -> Result<&'a Court, String> {
    resolve("court", "rechtspraak_courts", asked, court_candidates(courts))
}

/// What `asked` names among `courts`, for asking back: the courts it names alike, each
/// by its identifier.
pub fn court_choices(courts: &[Court], asked: &str) -> Resolution {
    several(asked, court_candidates(courts), |c| c.identifier.clone())
}

fn court_candidates(courts: &[Court]) -> Vec<Candidate<'_, Court>> {
    courts
        .iter()
        .map(|c| {
            let mut names = vec![fold(&c.name)];
            let mut keys = vec![fold(&c.name), fold(&c.identifier), fold(tail(&c.identifier))];
            if let Some(a) = &c.abbreviation {
                keys.push(fold(a));
                names.push(fold(a));
            }
            let label = match (&c.abbreviation, &c.end) {
                (Some(a), None) => format!("{} ({a})", c.name),
                (Some(a), Some(end)) => format!("{} ({a}, ended {end})", c.name),
                (None, Some(end)) => format!("{} (ended {end})", c.name),
                (None, None) => c.name.clone(),
            };
            Candidate {
                item: c,
                keys,
                names,
                label,
                preferred: c.end.is_none(),
            }
        })
        .collect()
}

/// An area of law as the search can use it: the top-level area to send, and the
/// sub-area to check on each result's metadata when a sub-area was asked for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AreaChoice<'a> {
    /// The top-level area sent as `subject`.
    pub top: &'a Area,
    /// The sub-area asked for, if any.
    pub sub: Option<&'a Area>,
}

/// The area named `asked` (name, identifier or its `#` part).
pub fn area<'a>(areas: &'a [Area], asked: &str) -> Result<AreaChoice<'a>, String> {
    let found = resolve("area of law", "rechtspraak_areas", asked, area_candidates(areas))?;
    match &found.parent {
        None => Ok(AreaChoice { top: found, sub: None }),
        Some(parent) => {
            let top = areas
                .iter()
                .find(|a| &a.identifier == parent)
                .ok_or_else(|| format!("the area `{}` names a parent the list does not hold", found.name))?;
            Ok(AreaChoice { top, sub: Some(found) })
        }
    }
}

/// What `asked` names among `areas`, for asking back: the areas it names alike, each
/// by its identifier.
pub fn area_choices(areas: &[Area], asked: &str) -> Resolution {
    several(asked, area_candidates(areas), |a| a.identifier.clone())
}

fn area_candidates(areas: &[Area]) -> Vec<Candidate<'_, Area>> {
    areas
        .iter()
        .map(|a| {
            let fragment = tail(&a.identifier);
            let sub_part = fragment.split_once('_').map_or(fragment, |(_, s)| s);
            Candidate {
                item: a,
                keys: vec![fold(&a.name), fold(&a.identifier), fold(fragment), fold(sub_part)],
                names: vec![fold(&a.name)],
                label: match &a.parent {
                    Some(parent) => format!(
                        "{} (under {})",
                        a.name,
                        areas
                            .iter()
                            .find(|p| &p.identifier == parent)
                            .map_or(tail(parent), |p| p.name.as_str())
                    ),
                    None => a.name.clone(),
                },
                preferred: a.parent.is_none(),
            }
        })
        .collect()
}

/// The procedure named `asked` (name or identifier).
pub fn procedure<'a>(procedures: &'a [Procedure], asked: &str) -> Result<&'a Procedure, String> {
    resolve(
        "procedure",
        "rechtspraak_procedures",
        asked,
        procedure_candidates(procedures),
    )
}

/// What `asked` names among `procedures`, for asking back: the procedures it names
/// alike, each by its identifier.
pub fn procedure_choices(procedures: &[Procedure], asked: &str) -> Resolution {
    several(asked, procedure_candidates(procedures), |p| p.identifier.clone())
}

fn procedure_candidates(procedures: &[Procedure]) -> Vec<Candidate<'_, Procedure>> {
    procedures
        .iter()
        .map(|p| Candidate {
            item: p,
            keys: vec![fold(&p.name), fold(&p.identifier), fold(tail(&p.identifier))],
            names: vec![fold(&p.name)],
            label: p.name.clone(),
            preferred: true,
        })
        .collect()
}

/// True when `entry` passes `filter` (folded substring of any of `fields`).
pub fn passes(filter: Option<&str>, fields: &[&str]) -> bool {
    match filter.map(fold).filter(|f| !f.is_empty()) {
        None => true,
        Some(f) => fields.iter().any(|field| fold(field).contains(&f)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn court_(name: &str, abbr: &str, id: &str, end: Option<&str>) -> Court {
        Court {
            identifier: id.into(),
            name: name.into(),
            abbreviation: Some(abbr.into()),
            kind: None,
            begin: None,
            end: end.map(Into::into),
        }
    }

    fn courts() -> Vec<Court> {
        vec![
            court_(
                "Hoge Raad",
                "HR",
                "http://standaarden.overheid.nl/owms/terms/Hoge_Raad_der_Nederlanden",
                None,
            ),
            court_(
                "Rechtbank Amsterdam",
                "RBAMS",
                "http://standaarden.overheid.nl/owms/terms/Rechtbank_Amsterdam",
                None,
            ),
            court_(
                "Rechtbank Alkmaar",
                "RBALK",
                "http://standaarden.overheid.nl/owms/terms/Rechtbank_Alkmaar",
                Some("2013-01-01"),
            ),
            court_(
                "Ambtenarengerecht Den Haag",
                "AGDH",
                "http://psi.rechtspraak.nl/AG DH",
                Some("1994-01-01"),
            ),
        ]
    }

    #[test]
    fn courts_by_name_abbreviation_identifier_and_tail() {
        let c = courts();
        for asked in [
            "Hoge Raad",
            "HR",
            "hr",
            " hoge   raad ",
            "Hoge Raad der Nederlanden",
            "http://standaarden.overheid.nl/owms/terms/Hoge_Raad_der_Nederlanden",
        ] {
            assert_eq!(court(&c, asked).unwrap().abbreviation.as_deref(), Some("HR"), "{asked}");
        }
        assert_eq!(
            court(&c, "Rechtbank Amsterdam").unwrap().abbreviation.as_deref(),
            Some("RBAMS")
        );
        assert_eq!(
            court(&c, "http://psi.rechtspraak.nl/AG DH").unwrap().name,
            "Ambtenarengerecht Den Haag"
        );
    }

    #[test]
    fn a_name_several_courts_hold_is_a_choice_of_identifiers_current_first() {
        let mut c = courts();
        c.push(court_(
            "Rechtbank Den Haag",
            "RBDHA",
            "http://standaarden.overheid.nl/owms/terms/Rechtbank_Den_Haag",
            None,
        ));
        let Resolution::Choices(fits) = court_choices(&c, "den haag") else {
            panic!("a choice: {:?}", court_choices(&c, "den haag"));
        };
        let values: Vec<&str> = fits.iter().map(|f| f.value.as_str()).collect();
        assert_eq!(
            values,
            [
                "http://standaarden.overheid.nl/owms/terms/Rechtbank_Den_Haag",
                "http://psi.rechtspraak.nl/AG DH"
            ]
        );
        for f in &fits {
            assert_eq!(
                court(&c, &f.value).unwrap().identifier,
                f.value,
                "each value is one court"
            );
        }
        assert_eq!(fits[1].label, "Ambtenarengerecht Den Haag (AGDH, ended 1994-01-01)");
        assert_eq!(court_choices(&c, "HR"), Resolution::Exact);
        assert_eq!(
            court_choices(&c, "Amsterdam"),
            Resolution::Unknown,
            "one holds it: the tool says"
        );
        assert_eq!(court_choices(&c, "Rechtbank Amsterdm"), Resolution::Unknown);
        assert_eq!(court_choices(&c, "  "), Resolution::Unknown);
        // Two courts of one abbreviation, neither current.
        c.push(court_("Rechtbank Alkmaar-Oud", "RBALK", "urn:oud", Some("1900-01-01")));
        assert!(matches!(court_choices(&c, "RBALK"), Resolution::Choices(f) if f.len() == 2));
    }

    #[test]
    fn a_typo_lists_the_closest_names() {
        let e = court(&courts(), "Rechtbank Amsterdm").unwrap_err();
        assert!(
            e.starts_with("no court is named `Rechtbank Amsterdm`; the closest are: Rechtbank Amsterdam (RBAMS)"),
            "{e}"
        );
        assert!(e.contains("rechtspraak_courts"));
        let long = "x".repeat(500);
        assert!(
            court(&courts(), &long).unwrap_err().len() < 400,
            "the input is not echoed whole"
        );
    }

    #[test]
    fn areas_resolve_to_their_top_level_with_the_sub_area_kept() {
        let areas = vec![
            Area {
                identifier: "http://psi.rechtspraak.nl/rechtsgebied#bestuursrecht".into(),
                name: "Bestuursrecht".into(),
                parent: None,
            },
            Area {
                identifier: "http://psi.rechtspraak.nl/rechtsgebied#bestuursrecht_omgevingsrecht".into(),
                name: "Omgevingsrecht".into(),
                parent: Some("http://psi.rechtspraak.nl/rechtsgebied#bestuursrecht".into()),
            },
            Area {
                identifier: "http://psi.rechtspraak.nl/rechtsgebied#strafrecht".into(),
                name: "Strafrecht".into(),
                parent: None,
            },
        ];
        let s = area(&areas, "strafrecht").unwrap();
        assert_eq!((s.top.name.as_str(), s.sub), ("Strafrecht", None));
        let o = area(&areas, "omgevingsrecht").unwrap();
        assert_eq!(o.top.name, "Bestuursrecht");
        assert_eq!(o.sub.unwrap().name, "Omgevingsrecht");
        assert_eq!(area(&areas, "bestuursrecht_omgevingsrecht").unwrap().sub, o.sub);
        assert!(
            area(&areas, "strafrehct")
                .unwrap_err()
                .contains("closest are: Strafrecht")
        );
    }

    #[test]
    fn filters_fold_case_and_accents() {
        assert!(passes(Some("curacao"), &["Gerecht in eerste aanleg van Curaçao"]));
        assert!(passes(None, &["x"]));
        assert!(!passes(Some("zwolle"), &["Rechtbank Amsterdam", "RBAMS"]));
    }
}
