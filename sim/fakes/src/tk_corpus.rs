//! The Tweede Kamer fake's data: documents, cases (Zaak), factions and committees as
//! OData records, generated from a fixed seed.
//!
//! The votes (`Besluit`, `Stemming` and the voted cases) are `tk_votes.rs`'s; the meetings,
//! reports, activities, members and motions made from the real reports `tk_debates.rs`'s.
//!
//! Invariants: generation reads no clock and no ambient randomness; records keep their
//! generation order (the order the fake answers in when no `$orderby` is given); every
//! record has every field of its schema (possibly `null`); ids are unique GUIDs.
//!
//! What this module does not do: model relations between entity sets (`$expand`) beyond
//! a case's decisions, document versions or publications.

use serde_json::{Map, Value, json};

use crate::odata::{FieldType, Schema};
use crate::tk_debates::{self, ACTIVITEIT_SCHEMA, FRACTIE_ZETEL_PERSOON_SCHEMA, VERGADERING_SCHEMA, VERSLAG_SCHEMA};
use crate::tk_votes::{self, BESLUIT_SCHEMA, STEMMING_SCHEMA};
use chrono::{Datelike, NaiveDate};

use crate::{day, days_after, mix64, pick};

/// Fields of `Document`.
pub const DOCUMENT_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("Soort", FieldType::Str),
    ("DocumentNummer", FieldType::Str),
    ("Titel", FieldType::Str),
    ("Onderwerp", FieldType::Str),
    ("Datum", FieldType::Date),
    ("Vergaderjaar", FieldType::Str),
    ("Kamer", FieldType::Str),
    ("Volgnummer", FieldType::Int),
    ("GewijzigdOp", FieldType::Date),
    ("Verwijderd", FieldType::Bool),
    ("ContentType", FieldType::Str),
];

/// Fields of `Zaak`.
pub const ZAAK_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("Nummer", FieldType::Str),
    ("Soort", FieldType::Str),
    ("Titel", FieldType::Str),
    ("Onderwerp", FieldType::Str),
    ("GestartOp", FieldType::Date),
    ("Status", FieldType::Str),
    ("Afgedaan", FieldType::Bool),
    ("Verwijderd", FieldType::Bool),
    ("Volgnummer", FieldType::Int),
    ("Kamerstukdossier", FieldType::Nav),
];

/// Fields of `Fractie`.
pub const FRACTIE_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("Afkorting", FieldType::Str),
    ("NaamNL", FieldType::Str),
    ("NaamEN", FieldType::Str),
    ("AantalZetels", FieldType::Int),
    ("DatumActief", FieldType::Date),
    ("DatumInactief", FieldType::Date),
    ("Verwijderd", FieldType::Bool),
];

/// Fields of `Commissie`.
pub const COMMISSIE_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("Naam", FieldType::Str),
    ("Afkorting", FieldType::Str),
    ("Verwijderd", FieldType::Bool),
];

/// Documents generated.
pub const DOCUMENT_COUNT: usize = 2_400;
/// Cases generated (the voted cases of `tk_votes` follow them).
pub const ZAAK_COUNT: usize = 900;

/// Subjects: (search word, phrase in subjects, dossier title).
const TOPICS: [(&str, &str, &str); 8] = [
    ("stikstof", "de stikstofuitstoot van de landbouw", "Stikstofbeleid"),
    ("asiel", "de opvang van asielzoekers", "Vreemdelingenbeleid"),
    ("woningmarkt", "de woningmarkt voor starters", "Woningmarkt"),
    ("defensie", "de defensie-uitgaven", "Defensienota"),
    ("klimaat", "het klimaatakkoord", "Klimaatbeleid"),
    ("onderwijs", "het lerarentekort in het onderwijs", "Onderwijsbegroting"),
    ("zorg", "de zorgkosten", "Zorgverzekeringswet"),
    ("energie", "de energierekening van huishoudens", "Energietransitie"),
];
const MEMBERS: [&str; 10] = [
    "Van der Berg",
    "Jansen",
    "De Vries",
    "Bakker",
    "Visser",
    "'t Hart",
    "Meijer",
    "El Amrani",
    "Yilmaz",
    "Smit",
];
const DOC_SOORTEN: [&str; 6] = [
    "Motie",
    "Brief regering",
    "Amendement",
    "Schriftelijke vragen",
    "Antwoord schriftelijke vragen",
    "Verslag van een commissiedebat",
];
const ZAAK_SOORTEN: [&str; 5] = [
    "Motie",
    "Wetgeving",
    "Schriftelijke vragen",
    "Brief regering",
    "Amendement",
];
/// (Afkorting, NaamNL, NaamEN, AantalZetels, DatumActief, DatumInactief).
type FractieRow = (
    &'static str,
    &'static str,
    &'static str,
    u32,
    &'static str,
    Option<&'static str>,
);

const FRACTIES: [FractieRow; 16] = [
    (
        "VVD",
        "Volkspartij voor Vrijheid en Democratie",
        "People's Party for Freedom and Democracy",
        22,
        "1948-01-24",
        None,
    ),
    (
        "PVV",
        "Partij voor de Vrijheid",
        "Party for Freedom",
        26,
        "2006-02-22",
        None,
    ),
    ("GL-PvdA", "GroenLinks-PvdA", "GreenLeft-Labour", 20, "2023-12-06", None),
    ("D66", "Democraten 66", "Democrats 66", 26, "1966-10-14", None),
    (
        "CDA",
        "Christen-Democratisch Appèl",
        "Christian Democratic Appeal",
        18,
        "1980-10-11",
        None,
    ),
    (
        "NSC",
        "Nieuw Sociaal Contract",
        "New Social Contract",
        1,
        "2023-12-06",
        None,
    ),
    (
        "BBB",
        "BoerBurgerBeweging",
        "Farmer-Citizen Movement",
        4,
        "2021-03-31",
        None,
    ),
    ("SP", "Socialistische Partij", "Socialist Party", 3, "1994-05-17", None),
    ("DENK", "DENK", "DENK", 3, "2017-03-23", None),
    (
        "PvdD",
        "Partij voor de Dieren",
        "Party for the Animals",
        3,
        "2006-11-30",
        None,
    ),
    (
        "FVD",
        "Forum voor Democratie",
        "Forum for Democracy",
        7,
        "2017-03-23",
        None,
    ),
    (
        "SGP",
        "Staatkundig Gereformeerde Partij",
        "Reformed Political Party",
        3,
        "1922-07-03",
        None,
    ),
    ("CU", "ChristenUnie", "Christian Union", 3, "2002-05-22", None),
    ("Volt", "Volt", "Volt", 1, "2021-03-31", None),
    ("JA21", "JA21", "JA21", 9, "2021-03-31", None),
    ("50PLUS", "50PLUS", "50PLUS", 0, "2012-09-20", Some("2023-12-05")),
];
const COMMISSIES: [(&str, &str); 14] = [
    ("vaste commissie voor Financiën", "FIN"),
    ("vaste commissie voor Binnenlandse Zaken", "BIZA"),
    ("vaste commissie voor Justitie en Veiligheid", "J&V"),
    ("vaste commissie voor Defensie", "DEF"),
    ("vaste commissie voor Buitenlandse Zaken", "BUZA"),
    ("vaste commissie voor Onderwijs, Cultuur en Wetenschap", "OCW"),
    ("vaste commissie voor Volksgezondheid, Welzijn en Sport", "VWS"),
    ("vaste commissie voor Infrastructuur en Waterstaat", "I&W"),
    ("vaste commissie voor Economische Zaken", "EZ"),
    (
        "vaste commissie voor Landbouw, Visserij, Voedselzekerheid en Natuur",
        "LVVN",
    ),
    ("vaste commissie voor Sociale Zaken en Werkgelegenheid", "SZW"),
    ("vaste commissie voor Klimaat en Groene Groei", "KGG"),
    ("vaste commissie voor Volkshuisvesting en Ruimtelijke Ordening", "VRO"),
    ("commissie voor de Werkwijze", "WW"),
];
/// Historical (temporary) committees generated beyond [`COMMISSIES`], so the list spans two pages.
pub const HISTORICAL_COMMISSIE_COUNT: usize = 280;

/// The whole Tweede Kamer data set of the fake.
#[derive(Debug)]
pub struct TkCorpus {
    documents: Vec<Map<String, Value>>,
    zaken: Vec<Map<String, Value>>,
    fracties: Vec<Map<String, Value>>,
    commissies: Vec<Map<String, Value>>,
    besluiten: Vec<Map<String, Value>>,
    stemmingen: Vec<Map<String, Value>>,
    /// (case id, its decisions' ids in order): the relation `Zaak?$expand=Besluit` follows.
    zaak_besluiten: Vec<(String, Vec<String>)>,
    /// Meetings, each with its reports (`Verslag`).
    vergaderingen: Vec<Map<String, Value>>,
    /// Reports, each with its meeting (`Vergadering`).
    verslagen: Vec<Map<String, Value>>,
    /// Activities of the reports.
    activiteiten: Vec<Map<String, Value>>,
    /// Members' seats with their person and faction.
    seats: Vec<Map<String, Value>>,
    /// (report id, its VLOS file).
    report_files: Vec<(String, &'static [u8])>,
}

impl TkCorpus {
    /// The records of an entity set with its schema, by the set's name in the URL.
    pub fn set(&self, name: &str) -> Option<(&[Map<String, Value>], Schema)> {
        match name {
            "Document" => Some((&self.documents, DOCUMENT_SCHEMA)),
            "Zaak" => Some((&self.zaken, ZAAK_SCHEMA)),
            "Fractie" => Some((&self.fracties, FRACTIE_SCHEMA)),
            "Commissie" => Some((&self.commissies, COMMISSIE_SCHEMA)),
            "Besluit" => Some((&self.besluiten, BESLUIT_SCHEMA)),
            "Stemming" => Some((&self.stemmingen, STEMMING_SCHEMA)),
            "Vergadering" => Some((&self.vergaderingen, VERGADERING_SCHEMA)),
            "Verslag" => Some((&self.verslagen, VERSLAG_SCHEMA)),
            "Activiteit" => Some((&self.activiteiten, ACTIVITEIT_SCHEMA)),
            "FractieZetelPersoon" => Some((&self.seats, FRACTIE_ZETEL_PERSOON_SCHEMA)),
            _ => None,
        }
    }

    /// All documents, in generation order.
    pub fn documents(&self) -> &[Map<String, Value>] {
        &self.documents
    }

    /// All cases, in generation order.
    pub fn zaken(&self) -> &[Map<String, Value>] {
        &self.zaken
    }

    /// All factions, in generation order.
    pub fn fracties(&self) -> &[Map<String, Value>] {
        &self.fracties
    }

    /// All decisions (`Besluit`), in generation order.
    pub fn besluiten(&self) -> &[Map<String, Value>] {
        &self.besluiten
    }

    /// All votes (`Stemming`), in the order the platform lists them.
    pub fn stemmingen(&self) -> &[Map<String, Value>] {
        &self.stemmingen
    }

    /// The decisions of the case `zaak_id`, in order (`Zaak?$expand=Besluit`).
    pub fn besluiten_of(&self, zaak_id: &str) -> Vec<&Map<String, Value>> {
        let Some((_, ids)) = self
            .zaak_besluiten
            .iter()
            .find(|(z, _)| z.eq_ignore_ascii_case(zaak_id))
        else {
            return Vec::new();
        };
        ids.iter()
            .filter_map(|id| {
                self.besluiten
                    .iter()
                    .find(|b| b.get("Id").and_then(Value::as_str) == Some(id))
            })
            .collect()
    }

    /// All committees, in generation order.
    pub fn commissies(&self) -> &[Map<String, Value>] {
        &self.commissies
    }

    /// The VLOS file of the report `id` (`Verslag({id})/resource`), byte for byte.
    pub fn report_file(&self, id: &str) -> Option<&'static [u8]> {
        self.report_files
            .iter()
            .find(|(r, _)| r.eq_ignore_ascii_case(id))
            .map(|(_, bytes)| *bytes)
    }

    /// The position of the document `id` in the corpus.
    pub fn document_index(&self, id: &str) -> Option<usize> {
        self.documents.iter().position(|r| {
            r.get("Id")
                .and_then(Value::as_str)
                .is_some_and(|v| v.eq_ignore_ascii_case(id))
        })
    }

    /// The record of `set` whose `Id` is `id` (case-insensitive, as GUIDs are).
    pub fn record(&self, set: &str, id: &str) -> Option<&Map<String, Value>> {
        self.set(set)?.0.iter().find(|r| {
            r.get("Id")
                .and_then(Value::as_str)
                .is_some_and(|v| v.eq_ignore_ascii_case(id))
        })
    }

    pub(crate) fn generate() -> TkCorpus {
        let fracties: Vec<_> = FRACTIES.iter().enumerate().map(fractie).collect();
        let votes = tk_votes::generate(&fracties);
        let debates = tk_debates::generate(&fracties);
        let mut zaken: Vec<_> = (0..ZAAK_COUNT).map(zaak).collect();
        zaken.extend(votes.zaken);
        zaken.extend(debates.zaken);
        let mut besluiten = votes.besluiten;
        besluiten.extend(debates.besluiten);
        let mut stemmingen = votes.stemmingen;
        stemmingen.extend(debates.stemmingen);
        let mut zaak_besluiten = votes.relations;
        zaak_besluiten.extend(debates.relations);
        TkCorpus {
            documents: (0..DOCUMENT_COUNT).map(document).collect(),
            zaken,
            fracties,
            commissies: (0..COMMISSIES.len() + HISTORICAL_COMMISSIE_COUNT)
                .map(commissie)
                .collect(),
            besluiten,
            stemmingen,
            zaak_besluiten,
            vergaderingen: debates.vergaderingen,
            verslagen: debates.verslagen,
            activiteiten: debates.activiteiten,
            seats: debates.seats,
            report_files: debates.files,
        }
    }
}

/// A deterministic GUID for record `index` of the set with seed `stream`.
fn guid(stream: u64, index: usize) -> String {
    let a = mix64(stream ^ (index as u64).wrapping_mul(0x9E37));
    let b = mix64(a);
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        0x8000 | ((b >> 48) & 0x3fff),
        b & 0xffff_ffff_ffff
    )
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("records are built from object literals"),
    }
}

fn date_of(stream: u64, index: usize) -> NaiveDate {
    days_after(day(2022, 1, 1), pick(stream, index as u64, 1_700) as u64)
}

fn vergaderjaar(date: NaiveDate) -> String {
    let y = date.year();
    if date.month() >= 9 {
        format!("{y}-{}", y + 1)
    } else {
        format!("{}-{y}", y - 1)
    }
}

fn document(i: usize) -> Map<String, Value> {
    let s = 11;
    let (_, phrase, title) = TOPICS[pick(s, i as u64 * 3, TOPICS.len())];
    let soort = DOC_SOORTEN[pick(s, i as u64 * 3 + 1, DOC_SOORTEN.len())];
    let member = MEMBERS[pick(s, i as u64 * 3 + 2, MEMBERS.len())];
    // Every 40th subject names a place with an apostrophe, to exercise quote escaping.
    let phrase = if i % 40 == 7 {
        "de ringweg van 's-Hertogenbosch"
    } else {
        phrase
    };
    let onderwerp = match soort {
        "Motie" => format!("Motie van het lid {member} over {phrase}"),
        "Brief regering" => format!("Brief van de minister over {phrase}"),
        "Amendement" => format!("Amendement van het lid {member} over {phrase}"),
        "Schriftelijke vragen" => format!("Vragen van het lid {member} over {phrase}"),
        "Antwoord schriftelijke vragen" => format!("Antwoord op vragen van het lid {member} over {phrase}"),
        _ => format!("Verslag van een commissiedebat over {phrase}"),
    };
    let date = date_of(s, i);
    let (y, day) = (date.year(), date.format("%Y-%m-%d"));
    object(json!({
        "Id": guid(s, i),
        "Soort": soort,
        "DocumentNummer": format!("{y}D{:05}", 10_000 + (i * 37) % 90_000),
        "Titel": title,
        "Onderwerp": onderwerp,
        "Datum": format!("{day}T00:00:00+01:00"),
        "Vergaderjaar": vergaderjaar(date),
        "Kamer": "Tweede Kamer",
        "Volgnummer": (i % 20) + 1,
        "GewijzigdOp": format!("{day}T{:02}:{:02}:00+01:00", 8 + i % 10, i % 60),
        "Verwijderd": i.is_multiple_of(53),
        "ContentType": FileKind::of(i).promised_type(),
    }))
}

/// What `/Document({id})/resource` serves for the `i`th document: every kind the
/// platform serves (PLATFORMS.md §10.5), from the corpus `scripts/text-corpus` makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A one-column letter as PDF.
    Pdf,
    /// Word served where the metadata and the header promise a PDF (OpenDataPortaal#174).
    DocxAsPdf,
    /// RTF.
    Rtf,
    /// A scan: a PDF without a text layer.
    Scan,
    /// Legacy Word 97-2003.
    Doc,
    /// A two-column report as PDF.
    TwoColumnPdf,
}

impl FileKind {
    /// The kind of the `i`th document's file.
    pub fn of(i: usize) -> FileKind {
        [
            FileKind::Pdf,
            FileKind::DocxAsPdf,
            FileKind::Rtf,
            FileKind::Scan,
            FileKind::Doc,
            FileKind::TwoColumnPdf,
        ][i % 6]
    }

    /// The `ContentType` the record and the response claim (wrong for [`FileKind::DocxAsPdf`]).
    pub fn promised_type(self) -> &'static str {
        match self {
            FileKind::Pdf | FileKind::DocxAsPdf | FileKind::Scan | FileKind::TwoColumnPdf => "application/pdf",
            FileKind::Rtf => "application/rtf",
            FileKind::Doc => "application/msword",
        }
    }
}

/// Whether the `i`th document has a KOOP XML rendition (`DocumentPublicatie`).
pub fn has_xml_rendition(i: usize) -> bool {
    i.is_multiple_of(4)
}

/// Whether the document at index `i` has a long XML rendition (every 40th; each also has
/// a rendition): at least [`LONG_RENDITION_CHARS`] characters of text.
pub fn has_long_rendition(i: usize) -> bool {
    i.is_multiple_of(40)
}

/// A long rendition's text is at least this many characters.
pub const LONG_RENDITION_CHARS: usize = 60_000;

fn zaak(i: usize) -> Map<String, Value> {
    let s = 23;
    let (_, phrase, title) = TOPICS[pick(s, i as u64 * 3, TOPICS.len())];
    let soort = ZAAK_SOORTEN[pick(s, i as u64 * 3 + 1, ZAAK_SOORTEN.len())];
    let date = date_of(s, i);
    let (y, day) = (date.year(), date.format("%Y-%m-%d"));
    object(json!({
        "Id": guid(s, i),
        "Nummer": format!("{y}Z{:05}", 10_000 + (i * 53) % 90_000),
        "Soort": soort,
        "Titel": title,
        "Onderwerp": format!("{soort} over {phrase}"),
        "GestartOp": format!("{day}T00:00:00+01:00"),
        "Status": if i.is_multiple_of(5) { "Onbekend" } else { "Vrijgegeven" },
        "Afgedaan": i.is_multiple_of(3),
        "Verwijderd": i.is_multiple_of(61),
        "Volgnummer": null,
        "Kamerstukdossier": [],
    }))
}

fn fractie((i, f): (usize, &FractieRow)) -> Map<String, Value> {
    let (afkorting, naam_nl, naam_en, zetels, actief, inactief) = *f;
    object(json!({
        "Id": guid(31, i),
        "Afkorting": afkorting,
        "NaamNL": naam_nl,
        "NaamEN": naam_en,
        "AantalZetels": zetels,
        "DatumActief": format!("{actief}T00:00:00+01:00"),
        "DatumInactief": inactief.map(|d| format!("{d}T00:00:00+01:00")),
        "Verwijderd": false,
    }))
}

fn commissie(i: usize) -> Map<String, Value> {
    let (naam, afkorting) = match COMMISSIES.get(i) {
        Some((naam, afkorting)) => ((*naam).to_owned(), (*afkorting).to_owned()),
        None => {
            let n = i - COMMISSIES.len();
            let (word, _, _) = TOPICS[n % TOPICS.len()];
            (
                format!("tijdelijke commissie {word} ({})", 1990 + n / TOPICS.len()),
                format!("TC{n:03}"),
            )
        }
    };
    object(json!({
        "Id": guid(37, i),
        "Naam": naam,
        "Afkorting": afkorting,
        "Verwijderd": i % 29 == 5,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_have_every_schema_field_and_unique_ids() {
        let c = TkCorpus::generate();
        for name in [
            "Document",
            "Zaak",
            "Fractie",
            "Commissie",
            "Besluit",
            "Stemming",
            "Vergadering",
            "Verslag",
            "Activiteit",
            "FractieZetelPersoon",
        ] {
            let (records, schema) = c.set(name).unwrap();
            let mut ids: Vec<&str> = records.iter().map(|r| r["Id"].as_str().unwrap()).collect();
            ids.sort_unstable();
            ids.dedup();
            assert_eq!(ids.len(), records.len(), "{name} ids are unique");
            for r in records {
                for (field, _) in schema {
                    assert!(r.contains_key(*field), "{name} lacks {field}");
                }
                assert_eq!(r.len(), schema.len(), "{name} has exactly its schema's fields");
            }
        }
    }

    #[test]
    fn a_common_subject_spans_more_than_one_page() {
        let c = TkCorpus::generate();
        let stikstof = c
            .documents()
            .iter()
            .filter(|d| d["Onderwerp"].as_str().unwrap().contains("stikstof") && d["Verwijderd"] == false)
            .count();
        assert!(stikstof > 250, "{stikstof}");
        assert!(c.commissies().len() > 250);
    }
}
