//! The members of the Tweede Kamer as a reference list, and a member's name resolved
//! against it: what `tk_debates`'s `speaker` is checked with before any meeting is asked
//! for (PLATFORMS.md §3: `Persoon` with `FractieZetelPersoon`).
//!
//! The list is every seat a person held in a faction (`FractieZetelPersoon` with its
//! `Persoon` and `FractieZetel/Fractie`), page by page as the platform links them (at
//! most [`MAX_MEMBER_PAGES`]), each page its own admitted call kept a month; seats are
//! grouped per person ([`members_of`]).
//!
//! A name resolves ([`resolve`]) when exactly one member's name holds every word of it
//! (a whole word each, case and accents ignored: `van dijk`, `Olger van Dijk`, `Kröger`),
//! or one member's full name is exactly it; more is ambiguous (the candidates with their
//! factions are the answer), none is unknown (the closest surnames are). A member
//! is found in a report ([`Member::spoke_as`]) by surname with its prefix and first name
//! (VLOS object ids are not the OData ids).
//!
//! What this module does not do: ask the platform itself (the tool does, through the call
//! layer), or know who spoke where.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::platforms::tk::FractieZetelPersoon;
use crate::platforms::tk::vlos::Speaker;

/// Pages of seats followed for the members list (250 seats a page).
pub const MAX_MEMBER_PAGES: usize = 40;

/// A member: a person with the factions they sat for.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Member {
    /// The `Persoon` GUID.
    pub id: String,
    /// First name (`Roepnaam`).
    pub first_name: Option<String>,
    /// Surname prefix (`van`, `van der`).
    pub prefix: Option<String>,
    /// Surname without prefix.
    pub surname: String,
    /// The factions sat for (abbreviations), latest seat first.
    pub factions: Vec<String>,
    /// Seated now (a seat without an end).
    pub seated: bool,
}

impl Member {
    /// `Olger van Dijk`.
    pub fn name(&self) -> String {
        [&self.first_name, &self.prefix, &Some(self.surname.clone())]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// `Olger van Dijk (NSC)`, with every faction sat for.
    pub fn label(&self) -> String {
        if self.factions.is_empty() {
            self.name()
        } else {
            format!("{} ({})", self.name(), self.factions.join(", "))
        }
    }

    /// Whether `speaker`, as a report names them, is this member: the same surname with
    /// its prefix (the report writes `Dijk van`) and, where both give one, the same
    /// first name.
    pub fn spoke_as(&self, speaker: &Speaker) -> bool {
        let mine = sorted_words(&format!("{} {}", self.prefix.as_deref().unwrap_or(""), self.surname));
        let theirs = match &speaker.surname {
            Some(s) => sorted_words(s),
            None => return false,
        };
        if mine.is_empty() || mine != theirs {
            return false;
        }
        match (&self.first_name, &speaker.first_name) {
            (Some(a), Some(b)) => folded(a) == folded(b),
            _ => true,
        }
    }
}

/// `text` lower case without accents (`Kröger` → `kroger`), so a name typed plainly finds
/// the member.
pub fn folded(text: &str) -> String {
    text.chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'à' | 'á' | 'â' | 'ã' | 'ä' | 'å' => 'a',
            'è' | 'é' | 'ê' | 'ë' => 'e',
            'ì' | 'í' | 'î' | 'ï' => 'i',
            'ò' | 'ó' | 'ô' | 'õ' | 'ö' => 'o',
            'ù' | 'ú' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            'ğ' => 'g',
            'ş' => 's',
            'ı' => 'i',
            other => other,
        })
        .collect()
}

/// The words of `text`, folded: letters and digits, `'` and `-` kept inside a word.
pub fn words(text: &str) -> Vec<String> {
    folded(text)
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

fn sorted_words(text: &str) -> Vec<String> {
    let mut w = words(text);
    w.sort();
    w
}

/// The members from seats: one per person (not deleted), their factions latest seat
/// first, sorted by surname and name.
pub fn members_of(seats: &[FractieZetelPersoon]) -> Vec<Member> {
    let mut by_person: BTreeMap<String, (Member, Vec<(String, String)>)> = BTreeMap::new();
    for seat in seats.iter().filter(|s| !s.verwijderd) {
        let Some(p) = seat.persoon.as_ref().filter(|p| !p.verwijderd) else {
            continue;
        };
        let Some(surname) = p.achternaam.clone().filter(|s| !s.trim().is_empty()) else {
            continue;
        };
        let entry = by_person.entry(p.id.to_ascii_lowercase()).or_insert_with(|| {
            (
                Member {
                    id: p.id.to_ascii_lowercase(),
                    first_name: p.roepnaam.clone().filter(|s| !s.trim().is_empty()),
                    prefix: p.tussenvoegsel.clone().filter(|s| !s.trim().is_empty()),
                    surname: surname.trim().to_owned(),
                    ..Member::default()
                },
                Vec::new(),
            )
        });
        if seat.tot_en_met.is_none() {
            entry.0.seated = true;
        }
        let faction = seat
            .fractie_zetel
            .as_ref()
            .and_then(|z| z.fractie.as_ref())
            .and_then(|f| f.afkorting.clone().or_else(|| f.naam_nl.clone()));
        if let Some(faction) = faction {
            // Latest seat first: a seat still held sorts after every end date.
            let until = seat.tot_en_met.clone().unwrap_or_else(|| "9999".to_owned());
            entry.1.push((until, faction));
        }
    }
    let mut members: Vec<Member> = by_person
        .into_values()
        .map(|(mut m, mut seats)| {
            seats.sort_by(|a, b| b.0.cmp(&a.0));
            for (_, f) in seats {
                if !m.factions.contains(&f) {
                    m.factions.push(f);
                }
            }
            m
        })
        .collect();
    members.sort_by_key(|m| (folded(&m.surname), m.name()));
    members
}

/// What a name is in the members list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resolved<'a> {
    /// One member.
    One(&'a Member),
    /// Several fit (at most ten, seated members first).
    Ambiguous(Vec<&'a Member>),
    /// None fits; the closest by surname (at most five).
    Unknown(Vec<&'a Member>),
}

/// Resolves `name` against `members`.
pub fn resolve<'a>(members: &'a [Member], name: &str) -> Resolved<'a> {
    let asked = words(name);
    if asked.is_empty() {
        return Resolved::Unknown(Vec::new());
    }
    let fits: Vec<&Member> = members
        .iter()
        .filter(|m| {
            let theirs = words(&m.name());
            asked.iter().all(|w| theirs.contains(w))
        })
        .collect();
    let exact: Vec<&Member> = fits.iter().copied().filter(|m| words(&m.name()) == asked).collect();
    match (fits.len(), exact.len()) {
        (1, _) => Resolved::One(fits[0]),
        (_, 1) => Resolved::One(exact[0]),
        (0, _) => {
            let last = asked.last().cloned().unwrap_or_default();
            let mut close: Vec<(usize, &Member)> = members
                .iter()
                .map(|m| (distance(&folded(&m.surname), &last), m))
                .filter(|(d, _)| *d <= 2)
                .collect();
            close.sort_by_key(|(d, m)| (*d, !m.seated));
            Resolved::Unknown(close.into_iter().take(5).map(|(_, m)| m).collect())
        }
        _ => {
            let mut fits = fits;
            fits.sort_by_key(|m| !m.seated);
            fits.truncate(10);
            Resolved::Ambiguous(fits)
        }
    }
}

/// Edit distance (Levenshtein), on characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (row[j + 1] + 1).min(row[j] + 1).min(prev + usize::from(ca != *cb));
            prev = here;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::tk::{Fractie, FractieZetel, Persoon};

    fn seat(
        id: &str,
        first: &str,
        prefix: Option<&str>,
        surname: &str,
        faction: &str,
        until: Option<&str>,
    ) -> FractieZetelPersoon {
        FractieZetelPersoon {
            id: format!("seat-{id}-{faction}"),
            tot_en_met: until.map(str::to_owned),
            persoon: Some(Persoon {
                id: id.to_owned(),
                achternaam: Some(surname.to_owned()),
                tussenvoegsel: prefix.map(str::to_owned),
                roepnaam: Some(first.to_owned()),
                ..Persoon::default()
            }),
            fractie_zetel: Some(FractieZetel {
                fractie: Some(Fractie {
                    afkorting: Some(faction.to_owned()),
                    ..Fractie::default()
                }),
                ..FractieZetel::default()
            }),
            ..FractieZetelPersoon::default()
        }
    }

    fn members() -> Vec<Member> {
        members_of(&[
            seat("1", "Olger", Some("van"), "Dijk", "NSC", None),
            seat("2", "Inge", Some("van"), "Dijk", "CDA", None),
            seat("3", "Jimmy", None, "Dijk", "SP", None),
            seat("4", "Suzanne", None, "Kröger", "GroenLinks-PvdA", None),
            seat("4", "Suzanne", None, "Kröger", "GL", Some("2023-12-05")),
            seat("5", "Joeri", None, "Pool", "PVV", None),
        ])
    }

    #[test]
    fn a_name_resolves_to_one_member_or_lists_the_candidates() {
        let m = members();
        assert!(matches!(resolve(&m, "Olger van Dijk"), Resolved::One(x) if x.id == "1"));
        assert!(matches!(resolve(&m, "kroger"), Resolved::One(x) if x.factions == ["GroenLinks-PvdA", "GL"]));
        match resolve(&m, "van Dijk") {
            Resolved::Ambiguous(c) => assert_eq!(c.len(), 2),
            other => panic!("{other:?}"),
        }
        match resolve(&m, "Dijk") {
            Resolved::Ambiguous(c) => assert_eq!(c.len(), 3),
            other => panic!("{other:?}"),
        }
        match resolve(&m, "Poll") {
            Resolved::Unknown(close) => assert_eq!(close[0].surname, "Pool"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_member_is_found_in_a_report_by_surname_prefix_and_first_name() {
        let m = members();
        let olger = m.iter().find(|x| x.id == "1").unwrap();
        let speaker = |first: &str, surname: &str| Speaker {
            name: "x".into(),
            first_name: Some(first.into()),
            surname: Some(surname.into()),
            ..Speaker::default()
        };
        assert!(olger.spoke_as(&speaker("Olger", "Dijk van")));
        assert!(!olger.spoke_as(&speaker("Inge", "Dijk van")));
        assert!(!olger.spoke_as(&speaker("Olger", "Dijk")));
        let kroger = m.iter().find(|x| x.id == "4").unwrap();
        assert!(kroger.spoke_as(&speaker("Suzanne", "Kröger")));
    }
}
