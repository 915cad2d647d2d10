//! The Tweede Kamer fake's votes: cases (`Zaak`) put to the vote, their decisions
//! (`Besluit`) and the votes cast on them (`Stemming`), as the OData API holds them.
//!
//! The data tells one small story about a ban on consumer fireworks, in the seats of the
//! 2023–2025 Kamer (150 in all):
//! - motion `2025Z17647`: first put to a show of hands and rejected — NSC's `Tegen` was
//!   cast by mistake (`Vergissing`) — then voted again by roll call and adopted: one case,
//!   two decisions, 150 members' votes, one member voting against their faction and three
//!   members not taking part;
//! - amendment `2025Z18020`: a show of hands, adopted;
//! - bill `2025Z18211`: a roll call, adopted;
//! - motion `2025Z18530`: submitted, its vote held over (`Stemmen - aangehouden`), a
//!   decision whose `Status` is not yet final and which has no votes.
//!
//! Every record has every field of its schema (possibly `null`); one vote is marked
//! deleted (`Verwijderd`), as the platform keeps withdrawn rows.
//!
//! What this module does not do: agenda items, activities or persons as entity sets (the
//! ids it names are opaque).

use serde_json::{Map, Value, json};

use crate::odata::{FieldType, Schema};

/// Fields of `Besluit`.
pub const BESLUIT_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("Agendapunt_Id", FieldType::Guid),
    ("StemmingsSoort", FieldType::Str),
    ("BesluitSoort", FieldType::Str),
    ("BesluitTekst", FieldType::Str),
    ("Opmerking", FieldType::Str),
    ("Status", FieldType::Str),
    ("AgendapuntZaakBesluitVolgorde", FieldType::Int),
    ("GewijzigdOp", FieldType::Date),
    ("Verwijderd", FieldType::Bool),
];

/// Fields of `Stemming`.
pub const STEMMING_SCHEMA: Schema = &[
    ("Id", FieldType::Guid),
    ("Besluit_Id", FieldType::Guid),
    ("Soort", FieldType::Str),
    ("FractieGrootte", FieldType::Int),
    ("ActorNaam", FieldType::Str),
    ("ActorFractie", FieldType::Str),
    ("Vergissing", FieldType::Bool),
    ("SidActorLid", FieldType::Str),
    ("SidActorFractie", FieldType::Str),
    ("Persoon_Id", FieldType::Guid),
    ("Fractie_Id", FieldType::Guid),
    ("GewijzigdOp", FieldType::Date),
    ("Verwijderd", FieldType::Bool),
];

/// The motion with two decisions (a show of hands with a mistake, then a roll call).
pub const MOTION_NUMBER: &str = "2025Z17647";
/// The amendment adopted by a show of hands.
pub const AMENDMENT_NUMBER: &str = "2025Z18020";
/// The bill adopted by roll call.
pub const BILL_NUMBER: &str = "2025Z18211";
/// The motion whose vote was held over (no votes, a decision not yet final).
pub const HELD_NUMBER: &str = "2025Z18530";
/// The word every voted case's subject holds.
pub const VOTES_WORD: &str = "vuurwerk";

/// The factions of the 2023–2025 Kamer as the votes name them: (label in `ActorFractie`,
/// abbreviation of the `Fractie` record, seats). The seats sum to 150.
pub const VOTING_FACTIONS: [(&str, &str, i64); 15] = [
    ("PVV", "PVV", 37),
    ("GroenLinks-PvdA", "GL-PvdA", 25),
    ("VVD", "VVD", 24),
    ("NSC", "NSC", 20),
    ("D66", "D66", 9),
    ("BBB", "BBB", 7),
    ("CDA", "CDA", 5),
    ("SP", "SP", 5),
    ("DENK", "DENK", 3),
    ("PvdD", "PvdD", 3),
    ("FVD", "FVD", 3),
    ("SGP", "SGP", 3),
    ("ChristenUnie", "CU", 3),
    ("Volt", "Volt", 2),
    ("JA21", "JA21", 1),
];

/// Surnames that, with the prefixes below, name the 150 members (30 × 5, all distinct).
const SURNAMES: [&str; 30] = [
    "Berg", "Dijk", "Bosch", "Vliet", "Leeuwen", "Heuvel", "Brink", "Meer", "Veen", "Wal", "Laan", "Beek", "Broek",
    "Horst", "Graaf", "Haan", "Hoek", "Kamp", "Linden", "Molen", "Pol", "Ploeg", "Rijn", "Schouten", "Steen", "Toorn",
    "Velde", "Wetering", "Zanden", "Ham",
];
const PREFIXES: [&str; 5] = ["", "Van ", "De ", "Van der ", "Van den "];

/// The `i`th member's name (0..150).
fn member_name(i: usize) -> String {
    format!("{}{}", PREFIXES[i / SURNAMES.len()], SURNAMES[i % SURNAMES.len()])
}

/// What the fake holds of votes: cases to append to `Zaak`, `Besluit`, `Stemming`, and
/// which decisions belong to which case (the `Zaak`–`Besluit` relation `$expand` follows).
#[derive(Debug)]
pub struct Votes {
    /// The voted cases, as `Zaak` records.
    pub zaken: Vec<Map<String, Value>>,
    /// Every decision.
    pub besluiten: Vec<Map<String, Value>>,
    /// Every vote, in the order the platform lists them (decision by decision).
    pub stemmingen: Vec<Map<String, Value>>,
    /// (case id, decision ids in order).
    pub relations: Vec<(String, Vec<String>)>,
}

/// A fixed GUID in a stream of its own (`kind` tells the entity set apart).
fn id(kind: u32, n: usize) -> String {
    format!("{kind:08x}-7a6e-4c0f-9e2d-{n:012x}")
}

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => unreachable!("records are built from object literals"),
    }
}

/// A faction's `Fractie_Id`: the id the `Fractie` record with `afkorting` has, looked up
/// in `fracties`, or `null` when the set has none.
fn fractie_id(fracties: &[Map<String, Value>], afkorting: &str) -> Value {
    fracties
        .iter()
        .find(|f| f.get("Afkorting").and_then(Value::as_str) == Some(afkorting))
        .and_then(|f| f.get("Id").cloned())
        .unwrap_or(Value::Null)
}

/// One decision.
struct Decision {
    number: usize,
    kind: Option<&'static str>,
    soort: &'static str,
    tekst: &'static str,
    status: &'static str,
    order: i64,
    changed: &'static str,
}

impl Decision {
    fn record(&self) -> Map<String, Value> {
        object(json!({
            "Id": id(0xbe5, self.number),
            "Agendapunt_Id": id(0xa9e, self.number),
            "StemmingsSoort": self.kind,
            "BesluitSoort": self.soort,
            "BesluitTekst": self.tekst,
            "Opmerking": null,
            "Status": self.status,
            "AgendapuntZaakBesluitVolgorde": self.order,
            "GewijzigdOp": self.changed,
            "Verwijderd": false,
        }))
    }
}

/// The votes' data; `fracties` are the fake's `Fractie` records (for `Fractie_Id`).
pub fn generate(fracties: &[Map<String, Value>]) -> Votes {
    let mut votes = Votes {
        zaken: Vec::new(),
        besluiten: Vec::new(),
        stemmingen: Vec::new(),
        relations: Vec::new(),
    };
    motion(&mut votes, fracties);
    amendment(&mut votes, fracties);
    bill(&mut votes, fracties);
    held_over(&mut votes);
    votes
}

/// `Fractie` `f` of [`VOTING_FACTIONS`] votes `soort` on `besluit` (`mistake`: marked
/// `Vergissing`), at `at`.
fn faction_vote(
    votes: &mut Votes,
    fracties: &[Map<String, Value>],
    besluit: &str,
    f: usize,
    soort: &str,
    mistake: bool,
    at: &str,
) {
    let (label, afkorting, seats) = VOTING_FACTIONS[f];
    votes.stemmingen.push(object(json!({
        "Id": id(0x57e, votes.stemmingen.len() + 1),
        "Besluit_Id": besluit,
        "Soort": soort,
        "FractieGrootte": seats,
        "ActorNaam": label,
        "ActorFractie": label,
        "Vergissing": mistake,
        "SidActorLid": null,
        "SidActorFractie": format!("fractie-{}", afkorting.to_lowercase()),
        "Persoon_Id": null,
        "Fractie_Id": fractie_id(fracties, afkorting),
        "GewijzigdOp": at,
        "Verwijderd": false,
    })));
}

/// Case (`Zaak`) `n`, numbered `number`.
fn zaak(number: &str, n: usize, soort: &str, titel: &str, onderwerp: &str, started: &str) -> Map<String, Value> {
    object(json!({
        "Id": id(0x2aa, n),
        "Nummer": number,
        "Soort": soort,
        "Titel": titel,
        "Onderwerp": onderwerp,
        "GestartOp": started,
        "Status": "Vrijgegeven",
        "Afgedaan": true,
        "Verwijderd": false,
        "Volgnummer": null,
        "Kamerstukdossier": [],
    }))
}

/// The motion: a show of hands (rejected; NSC's vote a mistake), then a roll call.
fn motion(votes: &mut Votes, fracties: &[Map<String, Value>]) {
    let motion = zaak(
        MOTION_NUMBER,
        1,
        "Motie",
        "Vuurwerkbeleid",
        "Motie van het lid Jansen over een landelijk verbod op consumentenvuurwerk",
        "2025-09-30T00:00:00+02:00",
    );
    let hands = Decision {
        number: 1,
        kind: Some("Met handopsteken"),
        soort: "Stemmen - verworpen",
        tekst: "Verworpen.",
        status: "Besluit",
        order: 1,
        changed: "2025-10-07T16:12:44+02:00",
    };
    let roll = Decision {
        number: 2,
        kind: Some("Hoofdelijk"),
        soort: "Stemmen - aangenomen",
        tekst: "Aangenomen.",
        status: "Besluit",
        order: 2,
        changed: "2025-10-14T15:48:09+02:00",
    };
    let (hands_id, roll_id) = (id(0xbe5, hands.number), id(0xbe5, roll.number));
    votes.besluiten.push(hands.record());
    votes.besluiten.push(roll.record());
    // Voor: GroenLinks-PvdA, D66, BBB, CDA, SP, DENK, PvdD, ChristenUnie, Volt (62);
    // Tegen: PVV, VVD, NSC (a mistake), FVD, SGP, JA21 (88).
    for (f, soort) in [
        "Tegen", "Voor", "Tegen", "Tegen", "Voor", "Voor", "Voor", "Voor", "Voor", "Voor", "Tegen", "Tegen", "Voor",
        "Voor", "Tegen",
    ]
    .into_iter()
    .enumerate()
    {
        faction_vote(
            votes,
            fracties,
            &hands_id,
            f,
            soort,
            f == 3,
            "2025-10-07T16:12:44+02:00",
        );
    }
    // The roll call: factions Voor except PVV, VVD, FVD, SGP, JA21; one VVD member
    // votes Voor; three PVV members do not take part. Voor 83, Tegen 64, not taking part 3.
    let roll_line = |f: usize| {
        if [0, 2, 10, 11, 14].contains(&f) {
            "Tegen"
        } else {
            "Voor"
        }
    };
    roll_call(votes, fracties, &roll_id, "2025-10-14T15:48:09+02:00", |f, k| {
        match (f, k) {
            (0, 0..=2) => "Niet deelgenomen",
            (2, 5) => "Voor",
            _ => roll_line(f),
        }
    });
    votes.relations.push((id(0x2aa, 1), vec![hands_id, roll_id]));
    votes.zaken.push(motion);
}

/// The amendment: a show of hands, adopted.
fn amendment(votes: &mut Votes, fracties: &[Map<String, Value>]) {
    let amendment = zaak(
        AMENDMENT_NUMBER,
        2,
        "Amendement",
        "Wijziging van de Wet milieubeheer in verband met een verbod op consumentenvuurwerk",
        "Amendement van het lid Bakker over een uitzondering op het vuurwerkverbod voor verenigingen",
        "2025-10-02T00:00:00+02:00",
    );
    let adopted = Decision {
        number: 3,
        kind: Some("Met handopsteken"),
        soort: "Stemmen - aangenomen",
        tekst: "Aangenomen.",
        status: "Besluit",
        order: 1,
        changed: "2025-10-14T15:31:02+02:00",
    };
    let adopted_id = id(0xbe5, adopted.number);
    votes.besluiten.push(adopted.record());
    for (f, soort) in [
        "Voor", "Voor", "Voor", "Voor", "Voor", "Tegen", "Voor", "Voor", "Voor", "Tegen", "Tegen", "Voor", "Voor",
        "Voor", "Tegen",
    ]
    .into_iter()
    .enumerate()
    {
        faction_vote(
            votes,
            fracties,
            &adopted_id,
            f,
            soort,
            false,
            "2025-10-14T15:31:02+02:00",
        );
    }
    // A withdrawn row (the platform keeps it, marked deleted).
    if let Some(last) = votes.stemmingen.last().cloned() {
        let mut withdrawn = last;
        withdrawn.insert("Id".into(), id(0x57e, votes.stemmingen.len() + 1).into());
        withdrawn.insert("Soort".into(), "Voor".into());
        withdrawn.insert("Verwijderd".into(), true.into());
        votes.stemmingen.push(withdrawn);
    }
    votes.relations.push((id(0x2aa, 2), vec![adopted_id]));
    votes.zaken.push(amendment);
}

/// The bill: a roll call, adopted.
fn bill(votes: &mut Votes, fracties: &[Map<String, Value>]) {
    let bill = zaak(
        BILL_NUMBER,
        3,
        "Wetgeving",
        "Wijziging van de Wet milieubeheer in verband met een verbod op consumentenvuurwerk",
        "Wijziging van de Wet milieubeheer in verband met een verbod op consumentenvuurwerk",
        "2025-06-20T00:00:00+02:00",
    );
    let passed = Decision {
        number: 4,
        kind: Some("Hoofdelijk"),
        soort: "Stemmen - aangenomen",
        tekst: "Aangenomen.",
        status: "Besluit",
        order: 1,
        changed: "2025-10-14T16:02:51+02:00",
    };
    let passed_id = id(0xbe5, passed.number);
    votes.besluiten.push(passed.record());
    let bill_line = |f: usize| if [0, 2, 10, 14].contains(&f) { "Tegen" } else { "Voor" };
    roll_call(votes, fracties, &passed_id, "2025-10-14T16:02:51+02:00", |f, _| {
        bill_line(f)
    });
    votes.relations.push((id(0x2aa, 3), vec![passed_id]));
    votes.zaken.push(bill);
}

/// The held-over motion: a decision not yet final, no votes.
fn held_over(votes: &mut Votes) {
    let held = zaak(
        HELD_NUMBER,
        4,
        "Motie",
        "Vuurwerkbeleid",
        "Motie van het lid De Vries over handhaving van het vuurwerkverbod",
        "2025-10-09T00:00:00+02:00",
    );
    let pending = Decision {
        number: 5,
        kind: None,
        soort: "Stemmen - aangehouden",
        tekst: "Aangehouden.",
        status: "Voorstel",
        order: 1,
        changed: "2025-10-14T16:05:00+02:00",
    };
    let pending_id = id(0xbe5, pending.number);
    votes.besluiten.push(pending.record());
    votes.relations.push((id(0x2aa, 4), vec![pending_id]));
    votes.zaken.push(held);
}

/// A roll call on `besluit`: one row per member, faction by faction; `vote(f, k)` is the
/// vote of member `k` of faction `f`.
fn roll_call(
    votes: &mut Votes,
    fracties: &[Map<String, Value>],
    besluit: &str,
    at: &str,
    vote: impl Fn(usize, usize) -> &'static str,
) {
    let mut member = 0usize;
    for (f, (label, afkorting, seats)) in VOTING_FACTIONS.iter().enumerate() {
        for k in 0..*seats as usize {
            votes.stemmingen.push(object(json!({
                "Id": id(0x57e, votes.stemmingen.len() + 1),
                "Besluit_Id": besluit,
                "Soort": vote(f, k),
                "FractieGrootte": seats,
                "ActorNaam": member_name(member),
                "ActorFractie": label,
                "Vergissing": false,
                "SidActorLid": format!("lid-{member:03}"),
                "SidActorFractie": format!("fractie-{}", afkorting.to_lowercase()),
                "Persoon_Id": id(0x9e5, member),
                "Fractie_Id": fractie_id(fracties, afkorting),
                "GewijzigdOp": at,
                "Verwijderd": false,
            })));
            member += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_seats_are_the_kamers_150_and_members_are_distinct() {
        assert_eq!(VOTING_FACTIONS.iter().map(|f| f.2).sum::<i64>(), 150);
        let mut names: Vec<String> = (0..150).map(member_name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 150);
    }

    #[test]
    fn the_story_holds_in_the_data() {
        let v = generate(&[]);
        let of = |besluit: &str| -> Vec<&Map<String, Value>> {
            v.stemmingen
                .iter()
                .filter(|s| s["Besluit_Id"] == besluit && s["Verwijderd"] == false)
                .collect()
        };
        let count = |rows: &[&Map<String, Value>], soort: &str| -> i64 {
            rows.iter()
                .filter(|s| s["Soort"] == soort)
                .map(|s| {
                    if s["Persoon_Id"].is_null() {
                        s["FractieGrootte"].as_i64().unwrap()
                    } else {
                        1
                    }
                })
                .sum()
        };
        let hands = of(&id(0xbe5, 1));
        assert_eq!((count(&hands, "Voor"), count(&hands, "Tegen")), (62, 88));
        assert_eq!(hands.iter().filter(|s| s["Vergissing"] == true).count(), 1);
        let roll = of(&id(0xbe5, 2));
        assert_eq!(roll.len(), 150);
        assert_eq!(
            (
                count(&roll, "Voor"),
                count(&roll, "Tegen"),
                count(&roll, "Niet deelgenomen")
            ),
            (83, 64, 3)
        );
        assert_eq!(v.relations[0].1.len(), 2, "the motion has two decisions");
        for (_, schema, records) in [
            ("Besluit", BESLUIT_SCHEMA, &v.besluiten),
            ("Stemming", STEMMING_SCHEMA, &v.stemmingen),
        ] {
            for r in records.iter() {
                assert_eq!(r.len(), schema.len());
            }
        }
    }
}
