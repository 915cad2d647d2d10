//! The Tweede Kamer's stenographic reports: a VLOS XML file (`vlosCoreDocument`,
//! `Source="VLOS2.0"`), the resource of a `Verslag` (`Verslag({id})/resource`), read
//! whole and in document order into a [`Report`] (PLATFORMS.md §11, and the real reports
//! in the corpus, folder `tk/vlos/`).
//!
//! What is read:
//! - the report's kind, status and version (`soort` `Tussenpublicatie`, `status`
//!   `Ongecorrigeerd`/`Gecorrigeerd`/`Casco`, `versie`, which the 2014 exports lack) and the
//!   meeting (`vergadering`: kind, title, room, year, number, date, opening, closing — a
//!   `sluiting` of `0001-01-01T00:00:00` is an unfinished meeting, read as none — and its
//!   committees); timestamps are kept as the report gives them, local time without a
//!   zone, and a `0001-01-01` one anywhere is a time not known yet ([`moment`]);
//! - each activity (`activiteit`: kind, title, subject, its parlis number such as
//!   `2025A04597`, times, `voortzetting`), and inside it, in document order, everything
//!   said: at `activiteit/activiteithoofd/activiteitdeel/activiteititem/woordvoerder` a
//!   speech, with its interruptions (`interrumpant`, nested in the `woordvoerder` it
//!   interrupts) after it; the next `woordvoerder` of the same item is the reply to the
//!   last interrupter who is not the chair. `isvoorzitter` and `isdraad` are child
//!   elements holding `true`/`false`; the chair is an ordinary `spreker` with a faction,
//!   so only `isvoorzitter` marks a remark as the chair's ([`Role`], [`Turn`]);
//! - the speakers ([`Speaker`]): the name the report uses (`verslagnaam`), first name and
//!   surname, faction (absent for ministers and external speakers), function (may be
//!   empty) and kind; each speaker once, by its VLOS object id and what the report says of it
//!   (VLOS object ids are not the OData ids);
//! - text that is no speech, where it stands ([`Part::Note`]): `tekst` directly under
//!   `activiteit`, `activiteithoofd`, `activiteitdeel` and `activiteititem`, and every
//!   `draadboekfragment`'s (a motion read out, a suspension, the list of members present),
//!   including one inside a `woordvoerder` or `interrumpant`;
//! - the cases named (`zaak`: kind, title, subject, dossier and number, and for a motion
//!   who submitted it), the votes taken (`activiteititem` with `besluitvorm`, `uitslag` and
//!   `stemmingen/stemming` per faction) and the speakers an activity lists (`sprekers`,
//!   which a casco report — one without speeches yet — still has).
//!
//! Text: an `alinea` is a paragraph (its `alineaitem`s joined by a space), an item in a
//! `lijst` a line of its own; inline markup (`nadruk`, `dossiernummer`, `stuknummer`, and
//! any element this reader does not know) gives its text; whitespace runs (double spaces,
//! CR LF inside a text) become one space. The label a speech opens with (its first item,
//! `De heer <nadruk>X</nadruk> (D66):`, [`is_label`]) is not text: the turn says who
//! speaks.
//!
//! Invariants: any input gives a report or an error, never a panic; only a complete,
//! well-formed document is read ([`crate::xml::WellFormed`]: a body cut short, declared
//! entities or an undeclared one are errors); nesting deeper than [`MAX_DEPTH`], more
//! than [`MAX_TEXT_BYTES`] of text or [`MAX_TURNS`] turns is an error; a document whose
//! root is not `vlosCoreDocument`, or without a `vergadering`, is an error, never an
//! empty report. A byte order mark is allowed.
//!
//! What this module does not do: fetch anything, match VLOS object ids to OData ids, or
//! read the activity index (`activiteitenindex`, categories) and markers' times.

use quick_xml::Reader;
use quick_xml::events::{BytesStart, Event};
use serde::{Deserialize, Serialize};

use crate::xml::{WellFormed, XmlFault, resolve_reference};

/// Deepest element nesting read (real reports nest about 14 deep).
pub const MAX_DEPTH: usize = 64;
/// Most text read, in bytes.
pub const MAX_TEXT_BYTES: usize = 32 * 1024 * 1024;
/// Most turns (speeches and interruptions) read.
pub const MAX_TURNS: usize = 200_000;
/// Most parts of all kinds (turns, notes, headings, votes) read.
pub const MAX_PARTS: usize = 400_000;

/// The value of a `sluiting` (closing time) in a report of a meeting not yet closed.
const UNFINISHED: &str = "0001-01-01";

/// Why a report is not read.
#[derive(Debug, thiserror::Error)]
pub enum VlosError {
    /// The XML is broken at a position.
    #[error("the report is not well-formed XML at byte {position}: {detail}")]
    Xml {
        /// Byte offset.
        position: u64,
        /// The parser's message.
        detail: String,
    },
    /// The report is cut short, declares entities or refers to an undeclared one.
    #[error("the report is incomplete or unsafe: {0}")]
    Incomplete(XmlFault),
    /// Not a VLOS report.
    #[error("not a VLOS report: {0}")]
    NotReport(String),
    /// Larger than this reader reads.
    #[error("the report is larger than BesluitBron reads ({0})")]
    TooBig(&'static str),
}

/// A stenographic report as read.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Report {
    /// The report's kind (`soort` of the root): `Voorpublicatie`, `Tussenpublicatie`,
    /// `Eindpublicatie`.
    pub kind: Option<String>,
    /// Its status: `Casco`, `Ongecorrigeerd`, `Gecorrigeerd`, `Gerectificeerd`.
    pub status: Option<String>,
    /// Its format version (`versie`, absent in older exports).
    pub version: Option<String>,
    /// When the file was made (`Timestamp`, with the offset it gives).
    pub made_at: Option<String>,
    /// The meeting.
    pub meeting: Meeting,
    /// Every speaker the report names, each once; turns refer to them by position.
    pub speakers: Vec<Speaker>,
    /// The activities, in order.
    pub activities: Vec<Activity>,
}

/// The meeting a report is of (`vergadering`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Meeting {
    /// `Plenair` or `Commissie`.
    pub kind: Option<String>,
    /// Its title: `105e vergadering, donderdag 10 juli 2025`, or a committee debate's subject.
    pub title: Option<String>,
    /// The room.
    pub room: Option<String>,
    /// The parliamentary year, `2024-2025`.
    pub year: Option<String>,
    /// The meeting's number in the year.
    pub number: Option<String>,
    /// Its day (a timestamp without time zone, as the report writes it).
    pub date: Option<String>,
    /// When it opened.
    pub opened_at: Option<String>,
    /// When it closed; `None` while unfinished (`0001-01-01T00:00:00`).
    pub closed_at: Option<String>,
    /// The report says the meeting is not closed yet (`sluiting` of `0001-01-01`).
    pub unfinished: bool,
    /// The committees whose meeting it is.
    pub committees: Vec<Committee>,
}

/// A committee of a meeting (`commissies/commissie`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Committee {
    /// Its abbreviation, e.g. `Def`.
    pub abbreviation: Option<String>,
    /// Its name, e.g. `vaste commissie voor Defensie`.
    pub name: Option<String>,
    /// Its role: `Voortouwcommissie` (leading) or `Volgcommissie`.
    pub role: Option<String>,
}

/// Someone who speaks (`spreker`).
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Speaker {
    /// The name the report uses (`verslagnaam`): `Olger van Dijk`, `Brekelmans`.
    pub name: String,
    /// The first name.
    pub first_name: Option<String>,
    /// The surname as the report sorts it (`achternaam`: `Dijk van`).
    pub surname: Option<String>,
    /// The faction, for a member (`GroenLinks-PvdA`); ministers and external speakers
    /// have none.
    pub faction: Option<String>,
    /// The function, e.g. `minister van Defensie` (may be absent or empty).
    pub function: Option<String>,
    /// The kind: `Tweede Kamerlid`, `Minister`, `Staatssecretaris`, `Externe spreker`.
    pub kind: Option<String>,
    /// `De heer`, `Mevrouw`, `Minister`.
    pub salutation: Option<String>,
    /// The report's object id of the speaker (not an OData id).
    pub object_id: Option<String>,
}

impl Speaker {
    /// Who the speaker is in a few words: the faction of a member, else the function,
    /// else the kind — `Pool (PVV)`, `Brekelmans (minister van Defensie)`,
    /// `Eichelsheim (Externe spreker)`.
    pub fn affiliation(&self) -> Option<&str> {
        [&self.faction, &self.function, &self.kind]
            .into_iter()
            .flatten()
            .map(String::as_str)
            .find(|s| !s.is_empty())
    }

    /// `name (affiliation)`.
    pub fn label(&self) -> String {
        match self.affiliation() {
            Some(a) => format!("{} ({a})", self.name),
            None => self.name.clone(),
        }
    }
}

/// One activity of a meeting (`activiteit`): a debate, the opening, the votes.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Activity {
    /// Its kind: `Plenair debat`, `Commissiedebat`, `Stemmingen`, `Opening`, …
    pub kind: Option<String>,
    /// Its title.
    pub title: Option<String>,
    /// Its subject.
    pub subject: Option<String>,
    /// Its parlis number, e.g. `2025A04597` (empty for the opening and such).
    pub number: Option<String>,
    /// When it started.
    pub starts_at: Option<String>,
    /// When it ended.
    pub ends_at: Option<String>,
    /// It continues an activity begun earlier in the meeting (`voortzetting`).
    pub continued: bool,
    /// What was said and done, in order.
    pub parts: Vec<Part>,
    /// The cases named (agenda items, motions submitted, what was voted on), in order.
    pub cases: Vec<Case>,
    /// The speakers the activity lists (`sprekers`), by position in [`Report::speakers`].
    pub listed_speakers: Vec<u32>,
}

/// One thing in an activity, in document order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "part", rename_all = "snake_case")]
pub enum Part {
    /// A section's title (`activiteithoofd`: `Termijn inbreng`, `Stemming motie …`).
    Heading {
        /// The title.
        title: String,
    },
    /// Something said.
    Turn(Turn),
    /// Text that is no speech: a motion read out, a suspension, who is present.
    Note {
        /// What kind (`draadboekfragment`'s `soort`: `Motie indiening`, `Schorsing`), when
        /// it says.
        kind: Option<String>,
        /// The text, paragraphs on lines of their own.
        text: String,
    },
    /// A vote taken.
    Vote(Vote),
}

/// What a turn is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "snake_case")]
pub enum Role {
    /// A speech, or its continuation after the chair spoke.
    Speech,
    /// An interruption of the speaker at position `of`.
    Interruption {
        /// The speaker interrupted.
        of: u32,
    },
    /// The answer to the interrupter at position `to`.
    Reply {
        /// The interrupter answered.
        to: u32,
    },
}

/// Something said (`woordvoerder` or `interrumpant`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Turn {
    /// Who speaks, by position in [`Report::speakers`].
    pub speaker: u32,
    /// As the chair (`isvoorzitter`).
    pub chair: bool,
    /// What the turn is.
    #[serde(flatten)]
    pub role: Role,
    /// The text, without the label it opens with; paragraphs on lines of their own.
    pub text: String,
}

/// A case named in a report (`zaak`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Case {
    /// Its kind: `Motie`, `Brief regering`, `Wetgeving`, …
    pub kind: Option<String>,
    /// Its title (`de motie-Bamenga c.s. over … (36284, nr. 45)`).
    pub title: Option<String>,
    /// Its subject.
    pub subject: Option<String>,
    /// The dossier (`36284`, `21501-20`).
    pub dossier: Option<String>,
    /// Its number in the dossier (`45`).
    pub number: Option<String>,
    /// Who submitted it (a motion), by position in [`Report::speakers`].
    pub submitters: Vec<u32>,
    /// Submitted in this activity (it stands in a `draadboekfragment`, e.g.
    /// `Motie indiening`), not only named.
    pub submitted: bool,
}

impl Case {
    /// A motion (its kind starts with `Motie`).
    pub fn is_motion(&self) -> bool {
        self.kind.as_deref().is_some_and(|k| k.starts_with("Motie"))
    }
}

/// A vote taken (`activiteititem` with `stemmingen`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Vote {
    /// How: `Fractie` (by faction), `Hoofdelijk` (roll call).
    pub form: Option<String>,
    /// The outcome: `Aangenomen`, `Verworpen`.
    pub result: Option<String>,
    /// Each faction's vote (`Voor`, `Tegen`), in the report's order.
    pub votes: Vec<(String, String)>,
}

impl Report {
    /// True for a casco report: one without speeches yet (its status says so, or it
    /// holds no turn).
    pub fn is_casco(&self) -> bool {
        self.status.as_deref() == Some("Casco") || self.turns().next().is_none()
    }

    /// Every turn, in order.
    pub fn turns(&self) -> impl Iterator<Item = &Turn> {
        self.activities
            .iter()
            .flat_map(|a| a.parts.iter())
            .filter_map(|p| match p {
                Part::Turn(t) => Some(t),
                _ => None,
            })
    }

    /// The speaker at `index`.
    pub fn speaker(&self, index: u32) -> Option<&Speaker> {
        self.speakers.get(index as usize)
    }
}

/// True when `item`, the first item of a speech's text, is its label rather than text:
/// it ends with a colon, has at most ten words, and names the speaker (`name`), or is
/// the chair's `De voorzitter:` (`chair`) — `De heer <nadruk>Pool</nadruk> (PVV):`,
/// `Minister Brekelmans:`. A first item that is a sentence stays text.
pub fn is_label(item: &str, name: &str, chair: bool) -> bool {
    let item = item.trim();
    let lower = item.to_lowercase();
    let words = item.split_whitespace().count();
    let names_speaker = !name.trim().is_empty() && lower.contains(&name.trim().to_lowercase());
    let names_chair = chair && words <= 3 && lower.contains("voorzitter");
    item.ends_with(':') && words <= 10 && (names_speaker || names_chair)
}

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

/// A timestamp as the report gives it (local time, no zone), or `None` for the
/// `0001-01-01T00:00:00` an unfinished report holds where a time is not known yet.
fn moment(value: Option<String>) -> Option<String> {
    value.filter(|v| !v.starts_with(UNFINISHED))
}

/// A run of whitespace as one space, trimmed.
fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
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

/// A text being read (`tekst`): its paragraphs.
#[derive(Debug, Default)]
struct TextBuf {
    /// Finished paragraphs, each its items.
    paragraphs: Vec<Vec<String>>,
    /// The paragraph being read.
    current: Vec<String>,
    /// The item being read, and how deep inside items (an item in an item is inline).
    item: Option<String>,
    item_depth: usize,
    /// Inside a `lijst`: each item a line of its own.
    list_depth: usize,
}

impl TextBuf {
    fn finish_paragraph(&mut self) {
        if !self.current.is_empty() {
            self.paragraphs.push(std::mem::take(&mut self.current));
        }
    }

    /// The paragraphs' items; with `label_of` (a speaker's name, and whether as the
    /// chair) a first item that is the speech's label is left out.
    fn into_text(mut self, label_of: Option<(&str, bool)>) -> String {
        self.finish_paragraph();
        if let Some((name, chair)) = label_of
            && let Some(first) = self.paragraphs.first_mut()
            && first.first().is_some_and(|i| is_label(i, name, chair))
        {
            first.remove(0);
        }
        self.paragraphs
            .iter()
            .map(|p| p.join(" "))
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// A speaker being read.
#[derive(Debug, Default)]
struct SpeakerBuf {
    speaker: Speaker,
}

/// A turn being read (`woordvoerder` or `interrumpant`).
#[derive(Debug, Default)]
struct TurnBuf {
    interrumpant: bool,
    speaker: Option<u32>,
    chair: bool,
    text: Option<String>,
    /// Written out (the turn is in the parts) once something after its text begins.
    flushed: bool,
    /// Non-chair interrupters seen in this `woordvoerder` (the last is answered next).
    interrupters: Vec<u32>,
}

/// Where the reader is.
#[derive(Debug, Default)]
struct Reading {
    out: Report,
    /// The open elements' local names.
    stack: Vec<String>,
    seen_root: bool,
    seen_meeting: bool,
    text_bytes: usize,
    turns: usize,
    parts: usize,
    /// A field's text being read.
    field: Option<String>,
    field_depth: usize,
    texts: Vec<TextBuf>,
    speaker: Option<SpeakerBuf>,
    /// Open turns: a `woordvoerder`, and an `interrumpant` inside it.
    turns_open: Vec<TurnBuf>,
    /// The last non-chair interrupter of the previous `woordvoerder` in this item.
    answer_due: Option<u32>,
    case: Option<Case>,
    committee: Option<Committee>,
    vote: Option<Vote>,
    /// The faction and vote of a `stemming` being read.
    ballot: (Option<String>, Option<String>),
    /// The kind of the innermost open `draadboekfragment`.
    fragments: Vec<Option<String>>,
}

impl Reading {
    fn parent(&self, up: usize) -> Option<&str> {
        self.stack.iter().rev().nth(up).map(String::as_str)
    }

    fn activity(&mut self) -> Option<&mut Activity> {
        self.out.activities.last_mut()
    }

    fn push_part(&mut self, part: Part) -> Result<(), VlosError> {
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

    /// Writes out the open turn once something after its text begins (or it ends).
    fn flush_turn(&mut self) -> Result<(), VlosError> {
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

    fn close_text(&mut self, buf: TextBuf) -> Result<(), VlosError> {
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

    /// The position of `speaker` in the report's list, adding it when new.
    fn intern(&mut self, mut speaker: Speaker) -> Result<u32, VlosError> {
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
    fn place_speaker(&mut self, index: u32) {
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

    fn set_field(&mut self, name: &str, value: String) {
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

#[cfg(test)]
mod tests {
    use super::*;

    const NS: &str = "http://www.tweedekamer.nl/ggm/vergaderverslag/v1.0";

    fn spreker(name: &str, faction: Option<&str>, soort: &str, function: &str) -> String {
        format!(
            "<spreker soort=\"{soort}\" objectid=\"o-{name}\">{}<aanhef>De heer</aanhef><verslagnaam>{name}</verslagnaam>\
             <voornaam>V</voornaam><achternaam>{name}</achternaam><functie>{function}</functie></spreker>",
            faction.map(|f| format!("<fractie>{f}</fractie>")).unwrap_or_default()
        )
    }

    fn turn(tag: &str, speaker: &str, chair: bool, text: &str, inner: &str) -> String {
        format!(
            "<{tag} objectid=\"x\">{speaker}<markeertijdbegin>2025-07-02T19:00:22</markeertijdbegin>\
             <isvoorzitter>{chair}</isvoorzitter><isdraad>false</isdraad><tekst><alinea><alineaitem>{text}</alineaitem>\
             </alinea></tekst>{inner}</{tag}>"
        )
    }

    fn report(items: &str) -> String {
        format!(
            "\u{feff}<?xml version=\"1.0\" encoding=\"UTF-8\"?><vlosCoreDocument xmlns=\"{NS}\" soort=\"Tussenpublicatie\" \
             status=\"Ongecorrigeerd\" versie=\"1.3\"><vergadering soort=\"Commissie\"><titel>MIVD</titel>\
             <datum>2025-07-02T00:00:00</datum><sluiting>0001-01-01T00:00:00</sluiting><activiteit soort=\"Commissiedebat\">\
             <titel>MIVD</titel><parlisid>2025A04496</parlisid><activiteithoofd><titel>MIVD</titel><activiteitdeel>\
             <activiteititem>{items}</activiteititem></activiteitdeel></activiteithoofd></activiteit></vergadering>\
             </vlosCoreDocument>"
        )
    }

    #[test]
    fn interruptions_are_the_interrupters_and_the_next_speech_is_the_reply() {
        let pool = spreker("Pool", Some("PVV"), "Tweede Kamerlid", "lid Tweede Kamer");
        let chair = spreker("Kahraman", Some("NSC"), "Tweede Kamerlid", "lid Tweede Kamer");
        let dijk = spreker("Olger van Dijk", Some("NSC"), "Tweede Kamerlid", "lid Tweede Kamer");
        let interruptions = format!(
            "{}{}",
            turn(
                "interrumpant",
                &chair,
                true,
                "De <nadruk type=\"Vet\">voorzitter</nadruk>:</alineaitem><alineaitem>Een interruptie.",
                ""
            ),
            turn(
                "interrumpant",
                &dijk,
                false,
                "De heer <nadruk type=\"Vet\">Olger van Dijk</nadruk> (NSC):</alineaitem><alineaitem>Wat  vraagt\r\n de PVV?",
                ""
            )
        );
        let xml = report(&format!(
            "<titel>Woordvoerder - Pool</titel>{}{}",
            turn(
                "woordvoerder",
                &pool,
                false,
                "De heer <nadruk type=\"Vet\">Pool</nadruk> (PVV):</alineaitem><alineaitem>Hartelijk dank.",
                &interruptions
            ),
            turn(
                "woordvoerder",
                &pool,
                false,
                "De heer Pool (PVV):</alineaitem><alineaitem>Heel concreet.",
                ""
            )
        ));
        let r = read_report(xml.as_bytes()).expect("a report");
        assert_eq!(r.status.as_deref(), Some("Ongecorrigeerd"));
        assert!(r.meeting.unfinished && r.meeting.closed_at.is_none());
        let turns: Vec<(String, bool, Role, String)> = r
            .turns()
            .map(|t| {
                (
                    r.speakers[t.speaker as usize].name.clone(),
                    t.chair,
                    t.role,
                    t.text.clone(),
                )
            })
            .collect();
        let index = |name: &str| r.speakers.iter().position(|s| s.name == name).unwrap() as u32;
        assert_eq!(
            turns,
            vec![
                ("Pool".into(), false, Role::Speech, "Hartelijk dank.".into()),
                ("Kahraman".into(), true, Role::Speech, "Een interruptie.".into()),
                (
                    "Olger van Dijk".into(),
                    false,
                    Role::Interruption { of: index("Pool") },
                    "Wat vraagt de PVV?".into()
                ),
                (
                    "Pool".into(),
                    false,
                    Role::Reply {
                        to: index("Olger van Dijk")
                    },
                    "Heel concreet.".into()
                ),
            ]
        );
        assert_eq!(r.speakers[index("Kahraman") as usize].faction.as_deref(), Some("NSC"));
        assert_eq!(r.activities[0].number.as_deref(), Some("2025A04496"));
        assert!(matches!(&r.activities[0].parts[0], Part::Heading { title } if title == "MIVD"));
    }

    #[test]
    fn a_motion_in_a_fragment_inside_a_speech_is_a_note_and_a_submitted_case() {
        let minister = spreker("Brekelmans", None, "Minister", "minister van Defensie");
        let member = spreker("Bamenga", Some("D66"), "Tweede Kamerlid", "lid Tweede Kamer");
        let fragment = format!(
            "<draadboekfragment soort=\"Motie indiening\"><isdraad>true</isdraad><tekst><alineagroep type=\"Motietekst\">\
             <alinea><alineaitem>De Kamer,</alineaitem></alinea><alinea><alineaitem>verzoekt de regering</alineaitem>\
             </alinea></alineagroep></tekst><zaken><zaak soort=\"Motie\"><titel>de motie-Bamenga over ADV's (36284, nr. 45)</titel>\
             <dossiernummer>36284</dossiernummer><stuknummer>45</stuknummer><sprekers>{member}</sprekers></zaak></zaken>\
             <sprekers>{member}</sprekers></draadboekfragment>"
        );
        let xml = report(&format!(
            "{}{}",
            turn(
                "woordvoerder",
                &member,
                false,
                "De heer Bamenga (D66):</alineaitem><alineaitem>Mijn motie.",
                &fragment
            ),
            turn(
                "woordvoerder",
                &minister,
                false,
                "Minister <nadruk>Brekelmans</nadruk>:</alineaitem><alineaitem>Oordeel Kamer.",
                ""
            ),
        ));
        let r = read_report(xml.as_bytes()).expect("a report");
        let a = &r.activities[0];
        assert!(
            matches!(&a.parts[2], Part::Note { kind: Some(k), text } if k == "Motie indiening" && text == "De Kamer,\nverzoekt de regering")
        );
        let motion = &a.cases[0];
        assert!(motion.is_motion() && motion.submitted);
        assert_eq!(
            (motion.dossier.as_deref(), motion.number.as_deref()),
            (Some("36284"), Some("45"))
        );
        assert_eq!(r.speakers[motion.submitters[0] as usize].name, "Bamenga");
        let minister = r.turns().nth(1).unwrap();
        assert_eq!(
            r.speakers[minister.speaker as usize].label(),
            "Brekelmans (minister van Defensie)"
        );
        assert_eq!(minister.text, "Oordeel Kamer.");
    }

    #[test]
    fn votes_and_texts_outside_speeches_are_read_in_order() {
        let xml = format!(
            "<vlosCoreDocument xmlns=\"{NS}\"><vergadering soort=\"Plenair\"><titel>105e vergadering</titel>\
             <activiteit soort=\"Stemmingen\"><titel>Stemmingen</titel><tekst><alinea><alineaitem>Aan de orde.</alineaitem>\
             </alinea></tekst><activiteithoofd soort=\"Stemming\"><titel>Stemming brief</titel><activiteitdeel><activiteititem \
             soort=\"Besluit\"><tekst><alinea><alineaitem>Ik constateer dat het voorstel is aangenomen.</alineaitem></alinea>\
             </tekst><besluitvorm>Fractie</besluitvorm><uitslag>Aangenomen</uitslag><stemmingen><stemming><fractie>SP</fractie>\
             <stem>Tegen</stem></stemming><stemming><fractie>PVV</fractie><stem>Voor</stem></stemming></stemmingen>\
             </activiteititem></activiteitdeel></activiteithoofd></activiteit></vergadering></vlosCoreDocument>"
        );
        let r = read_report(xml.as_bytes()).expect("a report");
        assert!(r.is_casco(), "no speeches");
        assert_eq!(r.version, None, "older exports have no version");
        let parts = &r.activities[0].parts;
        assert!(matches!(&parts[0], Part::Note { text, .. } if text == "Aan de orde."));
        assert!(matches!(&parts[1], Part::Heading { title } if title == "Stemming brief"));
        assert!(matches!(&parts[2], Part::Note { text, .. } if text.ends_with("aangenomen.")));
        match &parts[3] {
            Part::Vote(v) => {
                assert_eq!(v.result.as_deref(), Some("Aangenomen"));
                assert_eq!(
                    v.votes,
                    vec![("SP".into(), "Tegen".into()), ("PVV".into(), "Voor".into())]
                );
            }
            other => panic!("a vote: {other:?}"),
        }
    }

    /// What real reports hold: a byte order mark, the document on one line, double spaces
    /// and a line break inside a text, an external speaker with an empty `<functie/>` and
    /// no faction, timestamps without a zone, and the `0001-01-01` of times not known yet.
    #[test]
    fn real_reports_quirks_are_read_as_what_they_mean() {
        let guest = "<spreker soort=\"Externe spreker\" objectid=\"76bc3852-4e93-40e4-9ce3-465fbe3c8868\">\
                     <aanhef>De heer</aanhef><verslagnaam>Eichelsheim</verslagnaam><voornaam>Onno</voornaam>\
                     <achternaam>Eichelsheim</achternaam><functie /></spreker>";
        let xml = report(&turn(
            "woordvoerder",
            guest,
            false,
            "De heer Eichelsheim:</alineaitem><alineaitem>Dank  u\r\n wel.",
            "",
        ))
        .replace(
            "<parlisid>",
            "<aanvangstijd>2025-07-03T18:00:00</aanvangstijd><eindtijd>0001-01-01T00:00:00</eindtijd><parlisid>",
        );
        assert!(
            xml.starts_with('\u{feff}') && !xml.replace("\r\n", "").contains('\n'),
            "one line"
        );
        let r = read_report(xml.as_bytes()).expect("a report");
        let t = r.turns().next().expect("the speech");
        let s = r.speaker(t.speaker).expect("its speaker");
        assert_eq!((s.faction.as_deref(), s.function.as_deref()), (None, None));
        assert_eq!(
            s.label(),
            "Eichelsheim (Externe spreker)",
            "an empty function says nothing"
        );
        assert_eq!(t.text, "Dank u wel.");
        assert_eq!(
            r.meeting.date.as_deref(),
            Some("2025-07-02T00:00:00"),
            "no zone, kept as given"
        );
        let a = &r.activities[0];
        assert_eq!(a.starts_at.as_deref(), Some("2025-07-03T18:00:00"));
        assert_eq!(a.ends_at, None, "not known yet");
        assert!(r.meeting.unfinished && r.meeting.closed_at.is_none());
    }

    #[test]
    fn broken_cut_unsafe_or_foreign_documents_are_errors() {
        let whole = report("");
        assert!(read_report(whole.as_bytes()).is_ok());
        for cut in [whole.len() / 2, whole.len() - 3] {
            assert!(
                matches!(
                    read_report(&whole.as_bytes()[..cut]),
                    Err(VlosError::Incomplete(_) | VlosError::Xml { .. })
                ),
                "cut at {cut}"
            );
        }
        let entity = whole.replace("<titel>MIVD</titel>", "<titel>&xxe;</titel>");
        assert!(matches!(read_report(entity.as_bytes()), Err(VlosError::Incomplete(_))));
        let dtd = format!(
            "<!DOCTYPE a [<!ENTITY x \"y\">]>{}",
            whole.trim_start_matches('\u{feff}')
        );
        assert!(read_report(dtd.as_bytes()).is_err());
        assert!(matches!(read_report(b"<toestand/>"), Err(VlosError::NotReport(_))));
        assert!(matches!(
            read_report(format!("<vlosCoreDocument xmlns=\"{NS}\"/>").as_bytes()),
            Err(VlosError::NotReport(_))
        ));
        let deep = format!(
            "<vlosCoreDocument>{}{}</vlosCoreDocument>",
            "<x>".repeat(70),
            "</x>".repeat(70)
        );
        assert!(matches!(read_report(deep.as_bytes()), Err(VlosError::TooBig(_))));
    }

    #[test]
    fn a_label_is_short_ends_with_a_colon_and_names_the_speaker_or_the_chair() {
        assert!(is_label("De heer Olger van Dijk (NSC):", "Olger van Dijk", false));
        assert!(is_label("De voorzitter:", "Kahraman", true));
        assert!(is_label("Minister Brekelmans:", "Brekelmans", false));
        assert!(!is_label("Dank u wel.", "Vermeer", true));
        assert!(!is_label(
            "Voorzitter, ik heb een vraag aan de minister:",
            "Ellian",
            false
        ));
        assert!(!is_label(
            "Voorzitter, mag ik de leden het volgende vragen:",
            "Kahraman",
            true
        ));
        assert!(
            !is_label("Ik heb drie vragen aan de heer Pool:", "Ellian", false),
            "a sentence naming someone else"
        );
        assert!(
            !is_label(
                "Ik stel de heer Pool en de minister en de leden nu graag deze vragen:",
                "Pool",
                false
            ),
            "a sentence, not a label"
        );
    }

    /// Every real report of the corpus reads, with a turn for every `woordvoerder` and
    /// `interrumpant` the file holds (counted in its bytes, apart from this reader).
    #[test]
    fn every_real_report_reads_with_a_turn_for_each_speech_and_interruption() {
        let mut read = 0;
        for entry in besluitbron_fakes::corpus::folder("tk/vlos") {
            let path = std::path::PathBuf::from(&entry.path);
            let bytes = besluitbron_fakes::corpus::read(&entry.path).unwrap_or_else(|e| panic!("{e}"));
            let text = String::from_utf8_lossy(&bytes);
            let speeches = text.matches("<woordvoerder ").count() + text.matches("<interrumpant ").count();
            let r = read_report(&bytes).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(r.turns().count(), speeches, "{}", path.display());
            assert_eq!(r.is_casco(), speeches == 0, "{}", path.display());
            for t in r.turns() {
                assert!(r.speaker(t.speaker).is_some_and(|s| !s.name.is_empty()));
            }
            read += 1;
        }
        assert!(read >= 8, "the corpus holds eight reports or more ({read})");
    }
}
