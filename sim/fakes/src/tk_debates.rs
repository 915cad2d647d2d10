//! The Tweede Kamer fake's meetings and their stenographic reports, made from the real
//! VLOS reports of the corpus (`corpus/tk/vlos/`, `crate::real::vlos`): for each report
//! a `Vergadering` and a `Verslag` record, and the report served as
//! `Verslag({id})/resource` byte for byte; the activities they hold (`Activiteit`); the
//! members who spoke in them with their factions (`FractieZetelPersoon` with `Persoon`
//! and `FractieZetel/Fractie`); the motions submitted in them as cases (`Zaak` with its
//! `Volgnummer` and `Kamerstukdossier`), and for a motion voted in the same report its
//! decision and each faction's vote (`Besluit`, `Stemming`) as the report gives them.
//!
//! No real OData answer for `Vergadering`, `Verslag`, `Activiteit`, `Persoon` or
//! `FractieZetelPersoon` was found in public sources (corpus/README.md): these records
//! are built from what the reports say, in the fields PLATFORMS.md §3 and §11 and the
//! Kamer's information model name. What no report says is made up and marked so here: the
//! ids of the 2014 report and its meeting (only the meeting id's first eight digits are
//! known), the case numbers of motions (`{year}Z9nnnnn`), persons' and seats' ids, seats'
//! dates (from the first and last report a member speaks in), one meeting without a report
//! (to show that one is skipped), and the time-zone offsets the reports leave out
//! (Amsterdam time).
//!
//! Settings ([`TkSettings`]): reports the platform says are corrected since (their
//! `Verslag` record `Gecorrigeerd`, `Eindpublicatie`, a day later `GewijzigdOp`; the file
//! served stays the real one).
//!
//! What this module does not do: invent speeches, or serve a report in any other form.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value, json};

use crate::odata::{FieldType, Schema};
use crate::own::OwnSettings;
use crate::real::{self, Element};
use crate::tk_votes::VOTING_FACTIONS;
use chrono::{Datelike, Days, NaiveDate};

use crate::{day, mix64, parse_date};

/// Fields of `Vergadering` (`Verslag`: its reports, a navigation property).
pub const VERGADERING_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("Soort", FieldType::Str),
    ("Titel", FieldType::Str),
    ("Zaal", FieldType::Str),
    ("Vergaderjaar", FieldType::Str),
    ("VergaderingNummer", FieldType::Int),
    ("Datum", FieldType::Date),
    ("Aanvangstijd", FieldType::Date),
    ("Sluiting", FieldType::Date),
    ("Kamer", FieldType::Str),
    ("GewijzigdOp", FieldType::Date),
    ("Verwijderd", FieldType::Bool),
    ("Verslag", FieldType::Nav),
];

/// Fields of `Verslag` (`Vergadering`: its meeting, a navigation property).
pub const VERSLAG_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("Soort", FieldType::Str),
    ("Status", FieldType::Str),
    ("Vergadering_Id", FieldType::Guid),
    ("ContentType", FieldType::Str),
    ("ContentLength", FieldType::Int),
    ("GewijzigdOp", FieldType::Date),
    ("Verwijderd", FieldType::Bool),
    ("Vergadering", FieldType::Nav),
];

/// Fields of `Activiteit`.
pub const ACTIVITEIT_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("Nummer", FieldType::Str),
    ("Soort", FieldType::Str),
    ("Onderwerp", FieldType::Str),
    ("Datum", FieldType::Date),
    ("Aanvangstijd", FieldType::Date),
    ("Eindtijd", FieldType::Date),
    ("Status", FieldType::Str),
    ("Verwijderd", FieldType::Bool),
];

/// Fields of `FractieZetelPersoon` (`Persoon` and `FractieZetel`, navigation properties;
/// the seat holds its `Fractie`).
pub const FRACTIE_ZETEL_PERSOON_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("FractieZetel_Id", FieldType::Guid),
    ("Persoon_Id", FieldType::Guid),
    ("Functie", FieldType::Str),
    ("Van", FieldType::Date),
    ("TotEnMet", FieldType::Date),
    ("Verwijderd", FieldType::Bool),
    ("Persoon", FieldType::Nav),
    ("FractieZetel", FieldType::Nav),
];

/// The corpus's reports: (path under `corpus/`, the meeting's id, the report's id). The
/// ids are the platform's as the corpus's index records them, except the 2014 report's
/// (its meeting's first eight digits are real, the rest and the report id are made up).
pub const REPORTS: [(&str, &str, &str); 8] = [
    (
        "tk/vlos/2a27783d-3d6b-4e26-9fcf-52c17a41f6bf.xml",
        "0c43e57f-962a-449c-8157-62dbf7e539eb",
        "2a27783d-3d6b-4e26-9fcf-52c17a41f6bf",
    ),
    (
        "tk/vlos/604b6f07-0077-4e6c-bd09-03509b9b8849.xml",
        "ce0428cf-375f-41e3-baef-e15cd953172a",
        "604b6f07-0077-4e6c-bd09-03509b9b8849",
    ),
    (
        "tk/vlos/66ab0b76-d942-425b-9c34-30e39f7946a7.xml",
        "f6102bb7-43b5-4d46-994a-2cebf2354dbf",
        "66ab0b76-d942-425b-9c34-30e39f7946a7",
    ),
    (
        "tk/vlos/93758182-978b-4899-9d4d-1776c7baeab3.xml",
        "e714e7d8-b636-41a2-a36d-6c9072cff5c9",
        "93758182-978b-4899-9d4d-1776c7baeab3",
    ),
    (
        "tk/vlos/b5130467-a6c2-4f83-99c3-65ec778e5a24.xml",
        "be33e3cf-31ba-42ad-803b-a7d6404d3b0c",
        "b5130467-a6c2-4f83-99c3-65ec778e5a24",
    ),
    (
        "tk/vlos/d5130a6f-0400-4b03-b8d3-8daed02dc4af.xml",
        "e2903f19-34e9-4c37-b1dc-f985d071fc97",
        "d5130a6f-0400-4b03-b8d3-8daed02dc4af",
    ),
    (
        "tk/vlos/fb28c35e-af8d-49ee-8905-ad41eb41e4de.xml",
        "29d8cf68-423e-4ae9-b4f0-7e908c7f5311",
        "fb28c35e-af8d-49ee-8905-ad41eb41e4de",
    ),
    (
        "tk/vlos/vergadering-03686ab6_2014-10-15.xml",
        "03686ab6-0000-4000-8000-000000002014",
        "00002014-1015-4000-8000-000000000014",
    ),
];

/// The meeting the fake has without a report (made up: it shows a meeting that is
/// skipped for having none).
pub const MEETING_WITHOUT_REPORT: &str = "00000000-7e57-4000-8000-0000000000a1";

/// What the Tweede Kamer fake does with its meetings beyond the faults every fake
/// applies: reports the platform says were corrected since (their `Verslag` ids).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TkSettings {
    /// Reports shown as corrected: `Gecorrigeerd`, `Eindpublicatie`, changed a day later.
    pub corrected: BTreeSet<String>,
}

/// Reached through the fake's handle (`FakeHandle::update_own`); no textual names.
impl OwnSettings for TkSettings {}

/// A report's record as served: corrected when the settings say so.
pub fn served_verslag(record: &Map<String, Value>, own: &TkSettings) -> Map<String, Value> {
    let id = record
        .get("Id")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_ascii_lowercase();
    if !own.corrected.contains(&id) {
        return record.clone();
    }
    let mut r = record.clone();
    r.insert("Status".into(), "Gecorrigeerd".into());
    r.insert("Soort".into(), "Eindpublicatie".into());
    if let Some(changed) = r.get("GewijzigdOp").and_then(Value::as_str) {
        r.insert("GewijzigdOp".into(), day_later(changed).into());
    }
    r
}

/// A meeting's record as served: its reports corrected when the settings say so.
pub fn served_vergadering(record: &Map<String, Value>, own: &TkSettings) -> Map<String, Value> {
    let mut r = record.clone();
    if let Some(Value::Array(reports)) = r.get_mut("Verslag") {
        for v in reports.iter_mut() {
            if let Value::Object(o) = v {
                *o = served_verslag(o, own);
            }
        }
    }
    r
}

fn day_later(timestamp: &str) -> String {
    match timestamp.get(..10).and_then(parse_date) {
        Some(date) => format!("{}{}", (date + Days::new(1)).format("%Y-%m-%d"), &timestamp[10..]),
        None => timestamp.to_owned(),
    }
}

/// The fake's meetings, reports and what is made from them.
#[derive(Debug, Default)]
pub struct Debates {
    /// `Vergadering` records, each with its reports under `Verslag`.
    pub vergaderingen: Vec<Map<String, Value>>,
    /// `Verslag` records, each with its meeting under `Vergadering`.
    pub verslagen: Vec<Map<String, Value>>,
    /// `Activiteit` records.
    pub activiteiten: Vec<Map<String, Value>>,
    /// `FractieZetelPersoon` records with `Persoon` and `FractieZetel`.
    pub seats: Vec<Map<String, Value>>,
    /// The motions' cases (`Zaak`), with `Volgnummer` and `Kamerstukdossier`.
    pub zaken: Vec<Map<String, Value>>,
    /// Decisions on motions voted in a report.
    pub besluiten: Vec<Map<String, Value>>,
    /// Each faction's vote on them.
    pub stemmingen: Vec<Map<String, Value>>,
    /// (case id, its decisions' ids).
    pub relations: Vec<(String, Vec<String>)>,
    /// (report id, its file).
    pub files: Vec<(String, &'static [u8])>,
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("records are built from object literals"),
    }
}

/// A deterministic GUID of `stream` for `key`.
fn guid(stream: u64, key: &str) -> String {
    let h = key.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    });
    let a = mix64(stream ^ h);
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

/// The child element `name` of `e`, its text with whitespace folded.
fn child(e: &Element, name: &str) -> Option<String> {
    e.elements()
        .find(|c| c.name == name)
        .map(|c| c.text_without(&[], ""))
        .filter(|t| !t.is_empty())
}

/// Amsterdam's offset on the day of `timestamp` (summer time from the last Sunday of
/// March to the last Sunday of October).
fn offset(timestamp: &str) -> &'static str {
    let Some(date) = timestamp.get(..10).and_then(parse_date) else {
        return "+01:00";
    };
    let last_sunday = |month: u32| -> NaiveDate {
        let last = day(date.year(), month + 1, 1) - Days::new(1);
        last - Days::new(u64::from(last.weekday().num_days_from_sunday()))
    };
    if date >= last_sunday(3) && date < last_sunday(10) {
        "+02:00"
    } else {
        "+01:00"
    }
}

/// A report's timestamp (no time zone) with Amsterdam's offset, as OData writes it; the
/// unfinished meeting's `0001-01-01` is none.
fn zoned(timestamp: Option<String>) -> Value {
    match timestamp {
        Some(t) if !t.starts_with("0001-01-01") && t.len() >= 19 => format!("{}{}", &t[..19], offset(&t)).into(),
        _ => Value::Null,
    }
}

/// `Dijk van` (how a report sorts a surname) as the surname and its prefix.
fn split_surname(sorted: &str) -> (String, Option<String>) {
    let words: Vec<&str> = sorted.split_whitespace().collect();
    let first_prefix = words
        .iter()
        .enumerate()
        .skip(1)
        .find(|(_, w)| w.chars().next().is_some_and(char::is_lowercase))
        .map(|(i, _)| i)
        .unwrap_or(words.len());
    let surname = words[..first_prefix].join(" ");
    let prefix = words[first_prefix..].join(" ");
    (surname, (!prefix.is_empty()).then_some(prefix))
}

/// Builds everything from the corpus's reports; `fracties` are the fake's `Fractie`
/// records (for a vote's `Fractie_Id`).
pub fn generate(fracties: &[Map<String, Value>]) -> Debates {
    let mut out = Debates::default();
    let mut members = Members::new();
    let mut motion_numbers: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut activity_numbers = BTreeSet::new();
    for (path, meeting_id, report_id) in REPORTS {
        let Some(file) = real::vlos().iter().find(|f| f.path == path) else {
            continue;
        };
        let Ok(root) = real::parse(file.bytes) else {
            continue;
        };
        let Some(v) = root.find("vergadering") else {
            continue;
        };
        let date = child(v, "datum").unwrap_or_default();
        let day = date.get(..10).unwrap_or("").to_owned();
        let changed = root
            .attribute("Timestamp")
            .map(str::to_owned)
            .unwrap_or_else(|| format!("{day}T23:00:00{}", offset(&date)));
        let report = Report {
            file,
            root: &root,
            meeting_id,
            report_id,
            date: &date,
            changed: &changed,
        };
        add_meeting(&mut out, &report, v);
        add_activities(&mut out, v, &date, &mut activity_numbers);
        note_members(&root, &day, &mut members);
        motions(&root, &day, &mut out, &mut motion_numbers, fracties);
    }
    add_meeting_without_report(&mut out);
    add_seats(&mut out, members);
    out
}

/// The members who spoke: (first name, sorted surname) → (faction → (first date, last
/// date)).
type Members = BTreeMap<(String, String), BTreeMap<String, (String, String)>>;

/// One report of the corpus and what is read of it first.
struct Report<'a> {
    file: &'a real::RealFile,
    root: &'a Element,
    meeting_id: &'a str,
    report_id: &'a str,
    /// The meeting's `datum`, as the report writes it.
    date: &'a str,
    /// When the report last changed (its `Timestamp`, else the meeting's evening).
    changed: &'a str,
}

/// The meeting `v` of `report` (its `Vergadering` with the `Verslag` expanded, and the
/// `Verslag` with its `Vergadering`), and the report's file.
fn add_meeting(out: &mut Debates, report: &Report<'_>, v: &Element) {
    let Report {
        file,
        root,
        meeting_id,
        report_id,
        date,
        changed,
    } = *report;
    let verslag = object(json!({
        "Id": report_id,
        "Soort": root.attribute("soort"),
        "Status": root.attribute("status"),
        "Vergadering_Id": meeting_id,
        "ContentType": "text/xml",
        "ContentLength": file.bytes.len(),
        "GewijzigdOp": changed,
        "Verwijderd": false,
    }));
    let mut vergadering = object(json!({
        "Id": meeting_id,
        "Soort": v.attribute("soort"),
        "Titel": child(v, "titel"),
        "Zaal": child(v, "zaal"),
        "Vergaderjaar": child(v, "vergaderjaar"),
        "VergaderingNummer": child(v, "vergaderingnummer").and_then(|n| n.parse::<i64>().ok()),
        "Datum": zoned(Some(date.to_owned())),
        "Aanvangstijd": zoned(child(v, "aanvangstijd")),
        "Sluiting": zoned(child(v, "sluiting")),
        "Kamer": v.attribute("kamer").unwrap_or("Tweede Kamer"),
        "GewijzigdOp": changed,
        "Verwijderd": false,
    }));
    let mut with_meeting = verslag.clone();
    with_meeting.insert("Vergadering".into(), Value::Object(vergadering.clone()));
    vergadering.insert("Verslag".into(), json!([verslag]));
    out.verslagen.push(with_meeting);
    out.vergaderingen.push(vergadering);
    out.files.push((report_id.to_owned(), file.bytes));
}

/// The activities of meeting `v` (on `date`) not seen in an earlier report.
fn add_activities(out: &mut Debates, v: &Element, date: &str, activity_numbers: &mut BTreeSet<String>) {
    for a in v.elements().filter(|e| e.name == "activiteit") {
        let Some(number) = child(a, "parlisid") else {
            continue;
        };
        if !activity_numbers.insert(number.clone()) {
            continue;
        }
        out.activiteiten.push(object(json!({
            "Id": guid(0xac7, &number),
            "Nummer": number,
            "Soort": a.attribute("soort"),
            "Onderwerp": child(a, "onderwerp"),
            "Datum": zoned(Some(date.to_owned())),
            "Aanvangstijd": zoned(child(a, "aanvangstijd")),
            "Eindtijd": zoned(child(a, "eindtijd")),
            "Status": "Uitgevoerd",
            "Verwijderd": false,
        })));
    }
}

/// The members who spoke in `root` (on `day`): for each, the factions they spoke for
/// and the first and last day they did.
fn note_members(root: &Element, day: &str, members: &mut Members) {
    let mut speakers = Vec::new();
    root.find_all("spreker", &mut speakers);
    for s in speakers {
        let (Some(first), Some(surname), Some(faction)) =
            (child(s, "voornaam"), child(s, "achternaam"), child(s, "fractie"))
        else {
            continue;
        };
        if s.attribute("soort") != Some("Tweede Kamerlid") {
            continue;
        }
        let span = members
            .entry((first, surname))
            .or_default()
            .entry(faction)
            .or_insert_with(|| (day.to_owned(), day.to_owned()));
        span.0 = span.0.clone().min(day.to_owned());
        span.1 = span.1.clone().max(day.to_owned());
    }
}

/// One meeting without a report (made up).
fn add_meeting_without_report(out: &mut Debates) {
    out.vergaderingen.push(object(json!({
        "Id": MEETING_WITHOUT_REPORT,
        "Soort": "Commissie",
        "Titel": "Procedurevergadering (verslag volgt niet)",
        "Zaal": null,
        "Vergaderjaar": "2024-2025",
        "VergaderingNummer": null,
        "Datum": "2025-07-03T00:00:00+02:00",
        "Aanvangstijd": "2025-07-03T16:00:00+02:00",
        "Sluiting": null,
        "Kamer": "Tweede Kamer",
        "GewijzigdOp": "2025-07-03T17:00:00+02:00",
        "Verwijderd": false,
        "Verslag": [],
    })));
}

/// Each member's seats: one per faction they spoke for, still held when they spoke in
/// 2025.
fn add_seats(out: &mut Debates, members: Members) {
    for ((first, sorted), factions) in members {
        let (surname, prefix) = split_surname(&sorted);
        let person_key = format!("{first} {sorted}");
        let person = json!({
            "Id": guid(0x9e5, &person_key),
            "Achternaam": surname,
            "Tussenvoegsel": prefix,
            "Roepnaam": first,
            "Initialen": format!("{}.", first.chars().next().unwrap_or('X')),
            "Verwijderd": false,
        });
        for (faction, (from, until)) in factions {
            let seat_key = format!("{person_key} {faction}");
            // Seen in a report of 2025: seated (the reports say no more).
            let seated = until.as_str() >= "2025-01-01";
            out.seats.push(object(json!({
                "Id": guid(0x5ea, &seat_key),
                "FractieZetel_Id": guid(0x2e7, &seat_key),
                "Persoon_Id": person["Id"],
                "Functie": "Lid",
                "Van": format!("{from}T00:00:00{}", offset(&from)),
                "TotEnMet": (!seated).then(|| format!("{until}T00:00:00{}", offset(&until))),
                "Verwijderd": false,
                "Persoon": person,
                "FractieZetel": {
                    "Id": guid(0x2e7, &seat_key),
                    "Gewicht": null,
                    "Fractie": {"Id": guid(0xf4a, &faction), "Afkorting": faction, "NaamNL": faction, "Verwijderd": false},
                },
            })));
        }
    }
}

/// The motions submitted in `root` as cases, and the votes on those the report says were
/// voted.
fn motions(
    root: &Element,
    day: &str,
    out: &mut Debates,
    numbers: &mut BTreeMap<(String, String), String>,
    fracties: &[Map<String, Value>],
) {
    add_motion_cases(root, day, out, numbers);
    add_motion_votes(root, day, out, numbers, fracties);
}

/// The motions submitted in `root` (on `day`) not seen before, each a case numbered in
/// turn (`numbers`: (dossier, number) → case number).
fn add_motion_cases(root: &Element, day: &str, out: &mut Debates, numbers: &mut BTreeMap<(String, String), String>) {
    let mut fragments = Vec::new();
    root.find_all("draadboekfragment", &mut fragments);
    let year = day.get(..4).unwrap_or("2025").to_owned();
    for f in fragments {
        for z in f.elements().filter(|e| e.name == "zaken").flat_map(|zs| zs.elements()) {
            let is_motion = z.attribute("soort").is_some_and(|s| s.starts_with("Motie"));
            let (Some(dossier), Some(number)) = (child(z, "dossiernummer"), child(z, "stuknummer")) else {
                continue;
            };
            if !is_motion || numbers.contains_key(&(dossier.clone(), number.clone())) {
                continue;
            }
            let Ok(volgnummer) = number.parse::<i64>() else {
                continue;
            };
            let (digits, addition) = match dossier.split_once('-') {
                Some((d, a)) => (d.to_owned(), Some(a.to_owned())),
                None => (dossier.clone(), None),
            };
            let Ok(dossier_number) = digits.parse::<i64>() else {
                continue;
            };
            let case_number = format!("{year}Z9{:05}", out.zaken.len() + 1);
            numbers.insert((dossier.clone(), number.clone()), case_number.clone());
            let title = child(z, "titel").unwrap_or_default();
            let subject = title.split(" (").next().unwrap_or(&title).to_owned();
            let mut subject_chars = subject.chars();
            let subject: String = match subject_chars.next() {
                Some(c) => c.to_uppercase().chain(subject_chars).collect(),
                None => subject,
            };
            let id = guid(0x2a9, &case_number);
            out.zaken.push(object(json!({
                "Id": id,
                "Nummer": case_number,
                "Soort": "Motie",
                "Titel": child(z, "onderwerp"),
                "Onderwerp": subject,
                "GestartOp": format!("{day}T00:00:00{}", offset(day)),
                "Status": "Vrijgegeven",
                "Afgedaan": false,
                "Verwijderd": false,
                "Volgnummer": volgnummer,
                "Kamerstukdossier": [{
                    "Id": guid(0xd05, &dossier),
                    "Nummer": dossier_number,
                    "Toevoeging": addition,
                }],
            })));
        }
    }
}

/// The votes `root` gives on a motion of `numbers` (an `activiteithoofd` with its `zaken`
/// and an item's `stemmingen`): the decision, and each faction's vote.
fn add_motion_votes(
    root: &Element,
    day: &str,
    out: &mut Debates,
    numbers: &BTreeMap<(String, String), String>,
    fracties: &[Map<String, Value>],
) {
    let mut heads = Vec::new();
    root.find_all("activiteithoofd", &mut heads);
    for h in heads {
        let mut items = Vec::new();
        h.find_all("activiteititem", &mut items);
        let Some(item) = items.into_iter().find(|i| i.find("stemmingen").is_some()) else {
            continue;
        };
        let voted = h
            .elements()
            .filter(|e| e.name == "zaken")
            .flat_map(|zs| zs.elements())
            .filter_map(|z| Some((child(z, "dossiernummer")?, child(z, "stuknummer")?)))
            .find_map(|key| numbers.get(&key).cloned());
        let Some(case_number) = voted else { continue };
        let Some(zaak_id) = out
            .zaken
            .iter()
            .find(|z| z["Nummer"] == case_number)
            .and_then(|z| z["Id"].as_str().map(str::to_owned))
        else {
            continue;
        };
        let result = child(item, "uitslag").unwrap_or_default();
        let besluit_id = guid(0xbe5, &case_number);
        let at = format!("{day}T17:00:00{}", offset(day));
        out.besluiten.push(object(json!({
            "Id": besluit_id,
            "Agendapunt_Id": guid(0xa9e, &case_number),
            "StemmingsSoort": if child(item, "besluitvorm").as_deref() == Some("Hoofdelijk") { "Hoofdelijk" } else { "Met handopsteken" },
            "BesluitSoort": format!("Stemmen - {}", result.to_lowercase()),
            "BesluitTekst": format!("{result}."),
            "Opmerking": null,
            "Status": "Besluit",
            "AgendapuntZaakBesluitVolgorde": 1,
            "GewijzigdOp": at,
            "Verwijderd": false,
        })));
        let mut ballots = Vec::new();
        item.find_all("stemming", &mut ballots);
        for b in ballots {
            let (Some(faction), Some(vote)) = (child(b, "fractie"), child(b, "stem")) else {
                continue;
            };
            let known = VOTING_FACTIONS.iter().find(|(label, _, _)| *label == faction);
            let fractie_id = known
                .and_then(|(_, afkorting, _)| {
                    fracties
                        .iter()
                        .find(|f| f.get("Afkorting").and_then(Value::as_str) == Some(afkorting))
                })
                .and_then(|f| f.get("Id").cloned())
                .unwrap_or(Value::Null);
            out.stemmingen.push(object(json!({
                "Id": guid(0x57e, &format!("{case_number} {faction}")),
                "Besluit_Id": besluit_id,
                "Soort": vote,
                "FractieGrootte": known.map(|(_, _, seats)| *seats),
                "ActorNaam": faction,
                "ActorFractie": faction,
                "Vergissing": false,
                "SidActorLid": null,
                "SidActorFractie": null,
                "Persoon_Id": null,
                "Fractie_Id": fractie_id,
                "GewijzigdOp": at,
                "Verwijderd": false,
            })));
        }
        out.relations.push((zaak_id, vec![besluit_id]));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_report_of_the_corpus_is_a_meeting_and_a_report_served_byte_for_byte() {
        let d = generate(&[]);
        assert_eq!(d.verslagen.len(), REPORTS.len());
        assert_eq!(d.files.len(), real::vlos().len(), "every corpus report is served");
        for (v, schema) in [
            (&d.vergaderingen, VERGADERING_SCHEMA),
            (&d.verslagen, VERSLAG_SCHEMA),
            (&d.activiteiten, ACTIVITEIT_SCHEMA),
            (&d.seats, FRACTIE_ZETEL_PERSOON_SCHEMA),
        ] {
            for r in v.iter() {
                for (field, _) in schema {
                    assert!(r.contains_key(*field), "{field} in {r:?}");
                }
                assert_eq!(r.len(), schema.len());
            }
        }
        let mivd = d
            .vergaderingen
            .iter()
            .find(|v| v["Titel"] == "MIVD")
            .expect("the MIVD meeting");
        assert_eq!(mivd["Datum"], "2025-07-02T00:00:00+02:00");
        assert_eq!(mivd["Verslag"][0]["Status"], "Ongecorrigeerd");
        let unfinished = d
            .vergaderingen
            .iter()
            .find(|v| v["Id"] == "ce0428cf-375f-41e3-baef-e15cd953172a")
            .unwrap();
        assert!(
            unfinished["Sluiting"].is_null(),
            "an unfinished meeting has no closing time"
        );
        assert!(d.activiteiten.iter().any(|a| a["Nummer"] == "2025A04597"));
    }

    #[test]
    fn members_motions_and_a_voted_motion_come_from_the_reports() {
        let d = generate(&[]);
        let olger = d
            .seats
            .iter()
            .find(|s| s["Persoon"]["Roepnaam"] == "Olger")
            .expect("Olger van Dijk spoke");
        assert_eq!(olger["Persoon"]["Achternaam"], "Dijk");
        assert_eq!(olger["Persoon"]["Tussenvoegsel"], "van");
        assert_eq!(olger["FractieZetel"]["Fractie"]["Afkorting"], "NSC");
        let motion = d
            .zaken
            .iter()
            .find(|z| z["Volgnummer"] == 3 && z["Kamerstukdossier"][0]["Nummer"] == 36760)
            .expect("the motion-Timmermans");
        let (zaak, besluiten) = d.relations.iter().find(|(z, _)| *z == motion["Id"]).expect("voted");
        assert_eq!(besluiten.len(), 1, "{zaak}");
        assert_eq!(d.besluiten[0]["BesluitSoort"], "Stemmen - aangenomen");
        assert_eq!(d.stemmingen.len(), 15, "every faction's vote");
        let addition = d
            .zaken
            .iter()
            .find(|z| z["Kamerstukdossier"][0]["Nummer"] == 21501)
            .expect("a motion in 21501-20");
        assert_eq!(addition["Kamerstukdossier"][0]["Toevoeging"], "20");
        assert_eq!(
            split_surname("Lee van der"),
            ("Lee".to_owned(), Some("van der".to_owned()))
        );
        assert_eq!(split_surname("Martens-America"), ("Martens-America".to_owned(), None));
    }

    #[test]
    fn a_corrected_report_is_shown_as_corrected_a_day_later() {
        let d = generate(&[]);
        let own = TkSettings {
            corrected: ["fb28c35e-af8d-49ee-8905-ad41eb41e4de".to_owned()].into(),
        };
        let v = d
            .verslagen
            .iter()
            .find(|v| v["Id"] == "fb28c35e-af8d-49ee-8905-ad41eb41e4de")
            .unwrap();
        let served = served_verslag(v, &own);
        assert_eq!(served["Status"], "Gecorrigeerd");
        assert!(
            served["GewijzigdOp"].as_str().unwrap().starts_with("2025-07-11"),
            "{served:?}"
        );
        assert_eq!(offset("2014-10-15T10:00:00"), "+02:00");
        assert_eq!(offset("2014-12-15T10:00:00"), "+01:00");
    }
}
