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
//!   zone, and a `0001-01-01` one anywhere is a time not known yet (`fields.rs`);
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
//! Its rooms: the model of a report (this file); the reading as a whole, element by
//! element (`reading.rs`); a text's paragraphs and a speech's label (`text.rs`); who
//! speaks, turn by turn (`turns.rs`); the speakers (`speakers.rs`); and the fields of the
//! meeting, activities, cases and votes (`fields.rs`).
//!
//! What this module does not do: fetch anything, match VLOS object ids to OData ids, or
//! read the activity index (`activiteitenindex`, categories) and markers' times.

use serde::{Deserialize, Serialize};

use crate::xml::XmlFault;

mod fields;
mod reading;
mod speakers;
mod text;
mod turns;

pub use reading::read_report;
pub use text::is_label;

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

#[cfg(test)]
mod tests;
