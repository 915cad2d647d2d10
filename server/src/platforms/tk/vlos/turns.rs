//! Who speaks, turn by turn: a `woordvoerder`'s speech, an `interrumpant`'s
//! interruption of it, and the next speech of the item as the reply to the last
//! interrupter who is not the chair; and where a closed text goes (the open turn's, or a
//! note where it stands).
//!
//! Invariants: a turn is written out once, when something after its text begins or it
//! ends, and counts towards [`MAX_TURNS`]; a text after its turn was written out is kept,
//! as the speaker going on or a note. What it does not do: read the speakers
//! (`speakers.rs`).

use super::reading::Reading;
use super::text::TextBuf;
use super::{MAX_TURNS, Part, Role, Turn, VlosError};

impl Reading {
    /// Writes out the open turn once something after its text begins (or it ends).
    pub(super) fn flush_turn(&mut self) -> Result<(), VlosError> {
        let answer_due = self.answer_due;
        let Some(turn) = self.turns_open.last_mut() else {
            return Ok(());
        };
        if turn.flushed {
            return Ok(());
        }
        turn.flushed = true;
        let Some(speaker) = turn.speaker else {
            // A turn without a speaker (not seen in real reports): its text is a note.
            if let Some(text) = turn.text.take().filter(|t| !t.is_empty()) {
                return self.push_part(Part::Note { kind: None, text });
            }
            return Ok(());
        };
        let role = if turn.interrumpant {
            // The speaker interrupted: the `woordvoerder` around it.
            let host = self.turns_open.iter().rev().nth(1).and_then(|t| t.speaker);
            match host {
                Some(of) if !self.turns_open.last().is_some_and(|t| t.chair) => Role::Interruption { of },
                _ => Role::Speech,
            }
        } else {
            match answer_due {
                Some(to) if !turn.chair => Role::Reply { to },
                _ => Role::Speech,
            }
        };
        let turn = self.turns_open.last_mut().expect("checked above");
        let text = turn.text.take().unwrap_or_default();
        let chair = turn.chair;
        self.turns += 1;
        if self.turns > MAX_TURNS {
            return Err(VlosError::TooBig("too many turns"));
        }
        self.push_part(Part::Turn(Turn {
            speaker,
            chair,
            role,
            text,
        }))
    }

    pub(super) fn close_text(&mut self, buf: TextBuf) -> Result<(), VlosError> {
        match self.parent(0) {
            Some("woordvoerder" | "interrumpant") => {
                let name = self
                    .turns_open
                    .last()
                    .and_then(|t| t.speaker)
                    .and_then(|s| self.out.speakers.get(s as usize))
                    .map(|s| s.name.clone())
                    .unwrap_or_default();
                let chair = self.turns_open.last().is_some_and(|t| t.chair);
                let text = buf.into_text(Some((&name, chair)));
                let Some(turn) = self.turns_open.last_mut() else {
                    return Ok(());
                };
                match (turn.flushed, turn.speaker) {
                    // A text after the turn was written out (not seen in real reports):
                    // the speaker goes on.
                    (true, Some(speaker)) if !text.is_empty() => {
                        let chair = turn.chair;
                        self.push_part(Part::Turn(Turn {
                            speaker,
                            chair,
                            role: Role::Speech,
                            text,
                        }))
                    }
                    (true, _) if !text.is_empty() => self.push_part(Part::Note { kind: None, text }),
                    (true, _) => Ok(()),
                    (false, _) => {
                        match turn.text.as_mut() {
                            Some(t) if !t.is_empty() => {
                                t.push('\n');
                                t.push_str(&text);
                            }
                            _ => turn.text = Some(text),
                        }
                        Ok(())
                    }
                }
            }
            Some("draadboekfragment" | "activiteit" | "activiteithoofd" | "activiteitdeel" | "activiteititem") => {
                let kind = if self.parent(0) == Some("draadboekfragment") {
                    self.fragments.last().cloned().flatten()
                } else {
                    None
                };
                let text = buf.into_text(None);
                if text.is_empty() {
                    return Ok(());
                }
                self.flush_turn()?;
                self.push_part(Part::Note { kind, text })
            }
            // Text elsewhere (not seen in real reports) is kept as a note too.
            _ => {
                let text = buf.into_text(None);
                if text.is_empty() {
                    return Ok(());
                }
                self.push_part(Part::Note { kind: None, text })
            }
        }
    }
}
