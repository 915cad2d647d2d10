//! The ruling generator: the special rulings the tests rely on (footnotes, no text, the
//! long conclusie), then each other ruling drawn from the fixed seed by its number — its
//! court, areas, procedure, dates, relations and withdrawals.
//!
//! Invariants: a ruling depends only on its number and day, so the corpus is the same on
//! every run; ECLIs are unique per court and year. What it does not do: write XML.

use chrono::{Days, NaiveDate};

use crate::{days_after, pick};

use super::lists::{AREAS, PROCEDURES, PUBLISHING};
use super::records::{
    AREA, FOOTNOTES_ECLI, METADATA_ONLY_ECLI, RsArea, RsCourt, RsRelation, RsRuling, SEED, day_string,
};

/// The rulings being generated, numbered per court.
pub(super) struct Generator<'a> {
    pub(super) courts: &'a [RsCourt],
    pub(super) areas: &'a [RsArea],
    pub(super) seq: Vec<u32>,
    pub(super) rulings: Vec<RsRuling>,
}

impl Generator<'_> {
    fn court(&self, abbreviation: &str) -> usize {
        self.courts
            .iter()
            .position(|c| c.abbreviation == abbreviation)
            .unwrap_or(0)
    }

    fn area(&self, id: &str) -> usize {
        let identifier = format!("{AREA}{id}");
        self.areas.iter().position(|a| a.identifier == identifier).unwrap_or(0)
    }

    fn next_ecli(&mut self, court: usize, year: &str) -> String {
        self.seq[court] += 1;
        format!("ECLI:NL:{}:{year}:{}", self.courts[court].abbreviation, self.seq[court])
    }

    /// The two hand-written rulings.
    pub(super) fn special(&mut self) {
        let hr = self.court("HR");
        let phr = self.court("PHR");
        let rbams = self.court("RBAMS");
        self.seq[hr] = 1_499;
        self.seq[rbams] = 9_998;
        let footnotes = self.next_ecli(hr, "2026");
        let metadata_only = self.next_ecli(rbams, "2026");
        debug_assert_eq!(footnotes, FOOTNOTES_ECLI);
        debug_assert_eq!(metadata_only, METADATA_ONLY_ECLI);
        self.seq[hr] = 0;
        self.seq[rbams] = 0;
        self.seq[phr] = 399;
        let conclusie = self.next_ecli(phr, "2026");
        let areas = vec![self.area("civielRecht"), self.area("civielRecht_verbintenissenrecht")];
        self.rulings.push(RsRuling {
            ecli: footnotes.clone(),
            court: hr,
            date: "2026-06-12".into(),
            issued: "2026-06-12".into(),
            modified: "2026-06-15T09:30:00".into(),
            kind: "Uitspraak",
            areas: areas.clone(),
            procedure: 1,
            case_number: "25/01234".into(),
            has_text: true,
            deleted: None,
            summary: Some("Onrechtmatige daad; begroting van schade; motiveringsklacht slaagt.".into()),
            relations: vec![
                RsRelation {
                    ecli: conclusie.clone(),
                    kind: "conclusie",
                    direction: "eerdereAanleg",
                    label: format!("Conclusie: {conclusie}"),
                },
                RsRelation {
                    ecli: "ECLI:NL:GHAMS:2025:77".into(),
                    kind: "cassatie",
                    direction: "eerdereAanleg",
                    label: "In cassatie op: ECLI:NL:GHAMS:2025:77".into(),
                },
            ],
            vindplaatsen: vec!["Rechtspraak.nl".into(), "NJ 2026/201".into(), "RvdW 2026/700".into()],
            replaces: None,
        });
        self.rulings.push(RsRuling {
            ecli: conclusie.clone(),
            court: phr,
            date: "2026-04-17".into(),
            issued: "2026-05-01".into(),
            modified: "2026-05-01T10:00:00".into(),
            kind: "Conclusie",
            areas,
            procedure: 1,
            case_number: "25/01234".into(),
            has_text: true,
            deleted: None,
            summary: Some("Conclusie A-G; strekt tot verwerping.".into()),
            relations: vec![RsRelation {
                ecli: footnotes.clone(),
                kind: "conclusie",
                direction: "latereAanleg",
                label: format!("Uitspraak: {footnotes}"),
            }],
            vindplaatsen: vec!["Rechtspraak.nl".into()],
            replaces: None,
        });
        self.rulings.push(RsRuling {
            ecli: metadata_only,
            court: rbams,
            date: "2026-09-01".into(),
            issued: "2026-09-04".into(),
            modified: "2026-09-04T11:11:11".into(),
            kind: "Uitspraak",
            areas: vec![self.area("strafrecht")],
            procedure: 3,
            case_number: "13/123456-26".into(),
            has_text: false,
            deleted: None,
            summary: None,
            relations: Vec::new(),
            vindplaatsen: vec!["Rechtspraak.nl".into()],
            replaces: None,
        });
    }

    /// The `i`-th generated ruling, decided on day `day`.
    pub(super) fn ruling(&mut self, i: usize, day: NaiveDate) {
        let (court, abbreviation, areas) = self.court_and_areas(i);
        let procedure = match self.courts[court].kind {
            "Hoge Raad" => 1,
            "Gerechtshof" | "Raad van State" | "Centrale Raad van Beroep" => 4,
            "College van Beroep voor het bedrijfsleven" => 0,
            _ => [0, 2, 3, 5, 6, 9][pick(SEED ^ 5, i as u64, 6)],
        };
        let date = day_string(day);
        let ecli = self.next_ecli(court, &date[0..4]);
        let (modified_day, modified) = modified_at(i, day);
        let deleted = if i % 97 == 13 {
            Some("doc")
        } else if i % 211 == 17 {
            Some("ecli")
        } else {
            None
        };
        let has_text = i % 9 != 4 && deleted.is_none();
        let area_name = self.areas[areas[areas.len() - 1]].name.clone();
        let summary = has_text.then(|| {
            format!(
                "{area_name}. {} van de {} in zaak {}.",
                PROCEDURES[procedure].1,
                self.courts[court].name,
                i + 1
            )
        });
        let mut vindplaatsen = vec!["Rechtspraak.nl".to_owned()];
        if i.is_multiple_of(5) {
            vindplaatsen.push(format!("NJ {}/{}", &date[0..4], i % 700 + 1));
        }
        let case_number = format!("{}/{:05}", &date[2..4], 10_000 + i);
        let ruling = RsRuling {
            ecli: ecli.clone(),
            court,
            date: date.clone(),
            issued: day_string(modified_day),
            modified,
            kind: "Uitspraak",
            areas: areas.clone(),
            procedure,
            case_number: case_number.clone(),
            has_text,
            deleted,
            summary,
            relations: Vec::new(),
            vindplaatsen,
            replaces: (i % 50 == 7).then(|| format!("BX{:04}", i % 10_000)),
        };
        self.rulings.push(ruling);
        // A Hoge Raad judgment comes with its advocate general's conclusie.
        if abbreviation == "HR" && i.is_multiple_of(2) {
            self.conclusie(i, day, ecli, areas, case_number);
        }
    }

    /// Ruling `i`'s court (any that publishes, but the advocate general's office), its
    /// abbreviation, and its areas: a top-level one, and for one ruling in three also a
    /// sub-area of it.
    fn court_and_areas(&self, i: usize) -> (usize, String, Vec<usize>) {
        let publishing: Vec<usize> = PUBLISHING.filter(|&c| self.courts[c].abbreviation != "PHR").collect();
        let court = publishing[pick(SEED ^ 1, i as u64, publishing.len())];
        let abbreviation = self.courts[court].abbreviation.clone();
        let top_id = match abbreviation.as_str() {
            "RVS" | "CRVB" | "CBB" => "bestuursrecht",
            "HR" => ["civielRecht", "strafrecht"][pick(SEED ^ 2, i as u64, 2)],
            _ => AREAS[pick(SEED ^ 2, i as u64, AREAS.len())].0,
        };
        let top = self.area(top_id);
        let mut areas = vec![top];
        // Courts often tag only the top level: one ruling in three also names a sub-area.
        if pick(SEED ^ 3, i as u64, 3) == 0 {
            let subs: Vec<usize> = (0..self.areas.len())
                .filter(|&a| self.areas[a].parent == Some(top))
                .collect();
            areas.push(subs[pick(SEED ^ 4, i as u64, subs.len())]);
        }
        (court, abbreviation, areas)
    }

    /// The advocate general's conclusie to Hoge Raad judgment `i` (of `day`, ECLI `ecli`,
    /// the judgment last in the rulings), related to it both ways.
    fn conclusie(&mut self, i: usize, day: NaiveDate, ecli: String, areas: Vec<usize>, case_number: String) {
        let date = day_string(day);
        let phr = self.court("PHR");
        let conclusie = self.next_ecli(phr, &date[0..4]);
        let at = self.rulings.len() - 1;
        self.rulings[at].relations.push(RsRelation {
            ecli: conclusie.clone(),
            kind: "conclusie",
            direction: "eerdereAanleg",
            label: format!("Conclusie: {conclusie}"),
        });
        self.rulings.push(RsRuling {
            ecli: conclusie,
            court: phr,
            date: day_string(day - Days::new(30)),
            issued: day_string(day - Days::new(20)),
            modified: format!("{}T08:00:00", day_string(day - Days::new(20))),
            kind: "Conclusie",
            areas,
            procedure: 1,
            case_number,
            has_text: true,
            deleted: None,
            summary: Some(format!("Conclusie A-G in zaak {}.", i + 1)),
            relations: vec![RsRelation {
                ecli,
                kind: "conclusie",
                direction: "latereAanleg",
                label: "Uitspraak in cassatie".into(),
            }],
            vindplaatsen: vec!["Rechtspraak.nl".to_owned()],
            replaces: None,
        });
    }
}

/// When ruling `i` of `day` was last modified: a day to a week later, at a time of day
/// drawn from the seed; the day, and the moment as the service writes it.
fn modified_at(i: usize, day: NaiveDate) -> (NaiveDate, String) {
    let modified_day = days_after(day, 1 + pick(SEED ^ 6, i as u64, 6) as u64);
    let secs = pick(SEED ^ 7, i as u64, 36_000) + 7 * 3_600;
    let modified = format!(
        "{}T{:02}:{:02}:{:02}",
        day_string(modified_day),
        secs / 3_600,
        secs / 60 % 60,
        secs % 60
    );
    (modified_day, modified)
}
