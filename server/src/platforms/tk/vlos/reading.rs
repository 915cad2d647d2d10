//! The reading of a report as a whole: the XML events in document order, each element
//! opened and closed on one [`Reading`], which holds where the reader is and the report
//! read so far. What an element means is decided here; what a closed speaker, turn or
//! field becomes, in `speakers.rs`, `turns.rs` and `fields.rs`.
//!
//! Invariants: any input gives a report or an error, never a panic; only a complete,
//! well-formed document is read; every bound of the module (depth, text, turns, parts,
//! activities, cases) is checked where it grows. What it does not do: fetch anything.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};

use crate::xml::{WellFormed, XmlFault, resolve_reference};

use super::text::{TextBuf, fold};
use super::{Activity, Case, Committee, MAX_DEPTH, MAX_PARTS, MAX_TEXT_BYTES, Part, Report, Speaker, VlosError, Vote};

/// Reads a VLOS report (the bytes `Verslag({id})/resource` serves).
pub fn read_report(bytes: &[u8]) -> Result<Report, VlosError> {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let mut reader = Reader::from_reader(bytes);
    reader.config_mut().check_end_names = true;
    let mut checks = WellFormed::new(MAX_DEPTH);
    let mut r = Reading::default();
    let mut buf = Vec::new();
    loop {
        let position = reader.buffer_position();
        let event = reader.read_event_into(&mut buf).map_err(|e| VlosError::Xml {
            position,
            detail: e.to_string(),
        })?;
        checks.see(&event).map_err(|fault| match fault {
            XmlFault::TooDeep(_) => VlosError::TooBig("elements nested too deeply"),
            XmlFault::NoRoot => VlosError::NotReport("no root element".to_owned()),
            other => VlosError::Incomplete(other),
        })?;
        match &event {
            Event::Start(start) => r.open(start)?,
            Event::Empty(start) => {
                r.open(start)?;
                r.close()?;
            }
            Event::End(_) => r.close()?,
            Event::Text(t) => r.text(&t.xml10_content())?,
            Event::CData(c) => r.text(&c.xml10_content())?,
            Event::GeneralRef(g) => r.text(&resolve_reference(g).map_err(VlosError::Incomplete)?)?,
            Event::Eof => break,
            Event::Decl(_) | Event::PI(_) | Event::Comment(_) | Event::DocType(_) => {}
        }
        buf.clear();
    }
    if !r.seen_root {
        return Err(VlosError::NotReport("no vlosCoreDocument".to_owned()));
    }
    if !r.seen_meeting {
        return Err(VlosError::NotReport(
            "a vlosCoreDocument without a vergadering".to_owned(),
        ));
    }
    Ok(r.out)
}

fn attribute(start: &BytesStart<'_>, name: &str) -> Option<String> {
    start
        .try_get_attribute(name)
        .ok()
        .flatten()
        .and_then(|a| a.normalized_value(quick_xml::XmlVersion::Implicit1_0).ok())
        .map(|v| fold(&v))
        .filter(|v| !v.is_empty())
}

/// Elements whose text this reader takes as a field of the element around them.
const FIELDS: &[&str] = &[
    "titel",
    "onderwerp",
    "zaal",
    "vergaderjaar",
    "vergaderingnummer",
    "datum",
    "aanvangstijd",
    "sluiting",
    "eindtijd",
    "parlisid",
    "voortzetting",
    "afkorting",
    "verslagnaam",
    "weergavenaam",
    "voornaam",
    "achternaam",
    "fractie",
    "functie",
    "aanhef",
    "isvoorzitter",
    "dossiernummer",
    "stuknummer",
    "besluitvorm",
    "uitslag",
    "stem",
];

/// A speaker being read.
#[derive(Debug, Default)]
pub(super) struct SpeakerBuf {
    pub(super) speaker: Speaker,
}

/// A turn being read (`woordvoerder` or `interrumpant`).
#[derive(Debug, Default)]
pub(super) struct TurnBuf {
    pub(super) interrumpant: bool,
    pub(super) speaker: Option<u32>,
    pub(super) chair: bool,
    pub(super) text: Option<String>,
    /// Written out (the turn is in the parts) once something after its text begins.
    pub(super) flushed: bool,
    /// Non-chair interrupters seen in this `woordvoerder` (the last is answered next).
    pub(super) interrupters: Vec<u32>,
}

/// Where the reader is.
#[derive(Debug, Default)]
pub(super) struct Reading {
    pub(super) out: Report,
    /// The open elements' local names.
    pub(super) stack: Vec<String>,
    pub(super) seen_root: bool,
    pub(super) seen_meeting: bool,
    pub(super) text_bytes: usize,
    pub(super) turns: usize,
    pub(super) parts: usize,
    /// A field's text being read.
    pub(super) field: Option<String>,
    pub(super) field_depth: usize,
    pub(super) texts: Vec<TextBuf>,
    pub(super) speaker: Option<SpeakerBuf>,
    /// Open turns: a `woordvoerder`, and an `interrumpant` inside it.
    pub(super) turns_open: Vec<TurnBuf>,
    /// The last non-chair interrupter of the previous `woordvoerder` in this item.
    pub(super) answer_due: Option<u32>,
    pub(super) case: Option<Case>,
    pub(super) committee: Option<Committee>,
    pub(super) vote: Option<Vote>,
    /// The faction and vote of a `stemming` being read.
    pub(super) ballot: (Option<String>, Option<String>),
    /// The kind of the innermost open `draadboekfragment`.
    pub(super) fragments: Vec<Option<String>>,
}

impl Reading {
    pub(super) fn parent(&self, up: usize) -> Option<&str> {
        self.stack.iter().rev().nth(up).map(String::as_str)
    }

    pub(super) fn activity(&mut self) -> Option<&mut Activity> {
        self.out.activities.last_mut()
    }

    pub(super) fn push_part(&mut self, part: Part) -> Result<(), VlosError> {
        self.parts += 1;
        if self.parts > MAX_PARTS {
            return Err(VlosError::TooBig("too many parts"));
        }
        if let Some(a) = self.out.activities.last_mut() {
            a.parts.push(part);
        }
        Ok(())
    }

    fn open(&mut self, start: &BytesStart<'_>) -> Result<(), VlosError> {
        let name = start.local_name().into_inner().to_owned();
        if self.stack.is_empty() {
            if name != "vlosCoreDocument" {
                return Err(VlosError::NotReport(format!("the root element is `{name}`")));
            }
            self.seen_root = true;
            self.out.kind = attribute(start, "soort");
            self.out.status = attribute(start, "status");
            self.out.version = attribute(start, "versie");
            self.out.made_at = attribute(start, "Timestamp");
        }
        // Inside a field or an item everything is text.
        if self.field.is_some() {
            self.field_depth += 1;
            self.stack.push(name);
            return Ok(());
        }
        if name == "tekst" {
            // A text, or (not seen in real reports) a text inside a text: read apart.
            self.texts.push(TextBuf::default());
            self.stack.push(name);
            return Ok(());
        }
        if let Some(t) = self.texts.last_mut() {
            match name.as_str() {
                "alineaitem" if t.item.is_some() => t.item_depth += 1,
                "alineaitem" => {
                    t.item = Some(String::new());
                    t.item_depth = 1;
                }
                "alinea" if t.item.is_none() => t.finish_paragraph(),
                "lijst" if t.item.is_none() => {
                    t.finish_paragraph();
                    t.list_depth += 1;
                }
                _ if t.item.is_some() => t.item_depth += 1,
                _ => {}
            }
            self.stack.push(name);
            return Ok(());
        }
        match name.as_str() {
            "vergadering" if self.parent(0) == Some("vlosCoreDocument") => {
                self.seen_meeting = true;
                self.out.meeting.kind = attribute(start, "soort");
            }
            "activiteit" if self.parent(0) == Some("vergadering") => {
                if self.out.activities.len() >= 10_000 {
                    return Err(VlosError::TooBig("too many activities"));
                }
                self.out.activities.push(Activity {
                    kind: attribute(start, "soort"),
                    ..Activity::default()
                });
                self.answer_due = None;
            }
            "activiteititem" => self.answer_due = None,
            "commissie" => self.committee = Some(Committee::default()),
            "spreker" => {
                self.speaker = Some(SpeakerBuf {
                    speaker: Speaker {
                        kind: attribute(start, "soort"),
                        object_id: attribute(start, "objectid"),
                        ..Speaker::default()
                    },
                })
            }
            "woordvoerder" | "interrumpant" => {
                self.flush_turn()?;
                self.turns_open.push(TurnBuf {
                    interrumpant: name == "interrumpant",
                    ..TurnBuf::default()
                });
            }
            "draadboekfragment" => {
                self.flush_turn()?;
                self.fragments.push(attribute(start, "soort"));
            }
            "zaak" => {
                self.case = Some(Case {
                    kind: attribute(start, "soort"),
                    submitted: !self.fragments.is_empty(),
                    ..Case::default()
                })
            }
            "stemmingen" => {
                self.vote.get_or_insert_with(Vote::default);
            }
            "stemming" => self.ballot = (None, None),
            field if FIELDS.contains(&field) => {
                self.field = Some(String::new());
                self.field_depth = 1;
            }
            _ => {}
        }
        self.stack.push(name);
        Ok(())
    }

    fn text(&mut self, text: &str) -> Result<(), VlosError> {
        self.text_bytes += text.len();
        if self.text_bytes > MAX_TEXT_BYTES {
            return Err(VlosError::TooBig("too much text"));
        }
        if let Some(f) = self.field.as_mut() {
            f.push_str(text);
        } else if let Some(t) = self.texts.last_mut() {
            match t.item.as_mut() {
                Some(item) => item.push_str(text),
                // Text outside an item (not seen in real reports): an item of its own.
                None if !text.trim().is_empty() => t.current.push(fold(text)),
                None => {}
            }
        }
        Ok(())
    }

    fn close(&mut self) -> Result<(), VlosError> {
        let Some(name) = self.stack.pop() else {
            return Ok(());
        };
        if self.field.is_some() {
            self.field_depth -= 1;
            if self.field_depth == 0 {
                let value = fold(&self.field.take().unwrap_or_default());
                self.set_field(&name, value);
            }
            return Ok(());
        }
        if let Some(t) = self.texts.last_mut()
            && name != "tekst"
        {
            match name.as_str() {
                "alineaitem" if t.item_depth == 1 => {
                    t.item_depth = 0;
                    let item = fold(&t.item.take().unwrap_or_default());
                    if !item.is_empty() {
                        if t.list_depth > 0 {
                            t.finish_paragraph();
                            t.current.push(format!("- {item}"));
                            t.finish_paragraph();
                        } else {
                            t.current.push(item);
                        }
                    }
                }
                "lijst" if t.item.is_none() => t.list_depth = t.list_depth.saturating_sub(1),
                "alinea" if t.item.is_none() => t.finish_paragraph(),
                _ if t.item.is_some() => {
                    t.item_depth = t.item_depth.saturating_sub(1);
                    // An inline element ends: a space keeps words of neighbours apart only
                    // where the file had one (markup inside a word stays inside it).
                }
                _ => {}
            }
            return Ok(());
        }
        match name.as_str() {
            "tekst" => {
                let buf = self.texts.pop().unwrap_or_default();
                self.close_text(buf)?;
            }
            "spreker" => {
                if let Some(SpeakerBuf { speaker }) = self.speaker.take() {
                    let index = self.intern(speaker)?;
                    self.place_speaker(index);
                }
            }
            "woordvoerder" | "interrumpant" => {
                self.flush_turn()?;
                if let Some(turn) = self.turns_open.pop() {
                    match (turn.interrumpant, turn.speaker) {
                        // The interrupter, unless the chair, is answered by the next
                        // `woordvoerder` of the item.
                        (true, Some(s)) if !turn.chair => {
                            if let Some(host) = self.turns_open.last_mut() {
                                host.interrupters.push(s);
                            }
                        }
                        (false, _) => self.answer_due = turn.interrupters.last().copied(),
                        _ => {}
                    }
                }
            }
            "draadboekfragment" => {
                self.fragments.pop();
            }
            "zaak" => {
                if let Some(case) = self.case.take()
                    && let Some(a) = self.activity()
                {
                    if a.cases.len() >= 20_000 {
                        return Err(VlosError::TooBig("too many cases"));
                    }
                    a.cases.push(case);
                }
            }
            "commissie" => {
                if let Some(c) = self.committee.take() {
                    self.out.meeting.committees.push(c);
                }
            }
            "stemming" => {
                if let (Some(v), (Some(faction), Some(stem))) = (self.vote.as_mut(), self.ballot.clone()) {
                    v.votes.push((faction, stem));
                }
            }
            "activiteititem" => {
                if let Some(vote) = self.vote.take() {
                    self.push_part(Part::Vote(vote))?;
                }
            }
            _ => {}
        }
        Ok(())
    }
}
