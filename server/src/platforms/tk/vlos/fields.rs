//! The fields of a report: an element's text (`titel`, `datum`, `fractie`, …) set on
//! what it stands in — a speaker, a case, a committee, a vote, a turn's chair flag, the
//! meeting or an activity.
//!
//! Invariants: timestamps are kept as the report gives them, and the `0001-01-01` of an
//! unfinished report is a time not known yet ([`moment`]); an empty field is none. What it
//! does not do: say which elements are fields (`reading.rs`).

use super::reading::Reading;
use super::{Part, UNFINISHED, Vote};

/// A timestamp as the report gives it (local time, no zone), or `None` for the
/// `0001-01-01T00:00:00` an unfinished report holds where a time is not known yet.
fn moment(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.starts_with(UNFINISHED))
}

impl Reading {
    /// Sets the field `name` read as `value` on what it stands in.
    pub(super) fn set_field(&mut self, name: &str, value: String) {
        let value = Some(value).filter(|v| !v.is_empty());
        if let Some(s) = self.speaker.as_mut() {
            let s = &mut s.speaker;
            match name {
                "verslagnaam" => s.name = value.unwrap_or_default(),
                "voornaam" => s.first_name = value,
                "achternaam" => s.surname = value,
                "fractie" => s.faction = value,
                "functie" => s.function = value,
                "aanhef" => s.salutation = value,
                _ => {}
            }
            return;
        }
        if let Some(c) = self.case.as_mut() {
            match name {
                "titel" => c.title = value,
                "onderwerp" => c.subject = value,
                "dossiernummer" => c.dossier = value,
                "stuknummer" => c.number = value,
                _ => {}
            }
            return;
        }
        if let Some(c) = self.committee.as_mut() {
            match name {
                "afkorting" => c.abbreviation = value,
                "verslagnaam" => c.name = value,
                _ => {}
            }
            return;
        }
        let parent = self.parent(0).map(str::to_owned);
        match (parent.as_deref(), name) {
            (Some("stemming"), "fractie") => self.ballot.0 = value,
            (Some("stemming"), "stem") => self.ballot.1 = value,
            (Some("activiteititem"), "besluitvorm") => self.vote.get_or_insert_with(Vote::default).form = value,
            (Some("activiteititem"), "uitslag") => self.vote.get_or_insert_with(Vote::default).result = value,
            (Some("woordvoerder" | "interrumpant"), "isvoorzitter") => {
                if let Some(t) = self.turns_open.last_mut() {
                    t.chair = value.as_deref().is_some_and(|v| v.eq_ignore_ascii_case("true"));
                }
            }
            (Some("vergadering"), _) => {
                let m = &mut self.out.meeting;
                match name {
                    "titel" => m.title = value,
                    "zaal" => m.room = value,
                    "vergaderjaar" => m.year = value,
                    "vergaderingnummer" => m.number = value,
                    "datum" => m.date = moment(value),
                    "aanvangstijd" => m.opened_at = moment(value),
                    "sluiting" => {
                        m.unfinished = value.as_deref().is_some_and(|v| v.starts_with(UNFINISHED));
                        m.closed_at = moment(value);
                    }
                    _ => {}
                }
            }
            (Some("activiteit"), _) => {
                if let Some(a) = self.out.activities.last_mut() {
                    match name {
                        "titel" => a.title = value,
                        "onderwerp" => a.subject = value,
                        "parlisid" => a.number = value,
                        "aanvangstijd" => a.starts_at = moment(value),
                        "eindtijd" => a.ends_at = moment(value),
                        "voortzetting" => {
                            a.continued = value.as_deref().is_some_and(|v| v.eq_ignore_ascii_case("true"))
                        }
                        _ => {}
                    }
                }
            }
            (Some("activiteithoofd"), "titel") => {
                if let Some(title) = value {
                    let _ = self.push_part(Part::Heading { title });
                }
            }
            _ => {}
        }
    }
}
