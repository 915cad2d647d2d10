//! The speakers of a report: each once in the report's list, by what the report says of
//! it, and placed where it stands (a turn's speaker, a case's submitter, an activity's
//! listed speaker).
//!
//! Invariants: a speaker without a `verslagnaam` is named by its first name and surname;
//! the list holds at most 20,000. What it does not do: match VLOS object ids to OData ids.

use super::reading::Reading;
use super::{Speaker, VlosError};

impl Reading {
    /// The position of `speaker` in the report's list, adding it when new.
    pub(super) fn intern(&mut self, mut speaker: Speaker) -> Result<u32, VlosError> {
        speaker.name = speaker.name.trim().to_owned();
        if speaker.name.is_empty() {
            speaker.name = [&speaker.first_name, &speaker.surname]
                .into_iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .join(" ");
        }
        if let Some(i) = self.out.speakers.iter().position(|s| *s == speaker) {
            return Ok(i as u32);
        }
        if self.out.speakers.len() >= 20_000 {
            return Err(VlosError::TooBig("too many speakers"));
        }
        self.out.speakers.push(speaker);
        Ok(self.out.speakers.len() as u32 - 1)
    }

    /// A speaker read: whose it is, by where it stands.
    pub(super) fn place_speaker(&mut self, index: u32) {
        match (self.parent(0), self.parent(1)) {
            (Some("woordvoerder" | "interrumpant"), _) => {
                if let Some(t) = self.turns_open.last_mut() {
                    t.speaker = Some(index);
                }
            }
            (Some("sprekers"), Some("zaak")) => {
                if let Some(c) = self.case.as_mut() {
                    c.submitters.push(index);
                }
            }
            (Some("sprekers"), Some("activiteit" | "activiteithoofd")) => {
                if let Some(a) = self.activity()
                    && !a.listed_speakers.contains(&index)
                {
                    a.listed_speakers.push(index);
                }
            }
            _ => {}
        }
    }
}
