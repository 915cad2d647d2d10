//! The corpus as a whole: generated once from a fixed seed (the special rulings first,
//! then the other days' and the busy day's), and read by ECLI, by court and by a query as
//! the service filters.
//!
//! What it does not do: write XML (`xml.rs`).

use crate::{day, days_after, parse_date, pick};

use super::generator::Generator;
use super::lists::{PROCEDURES, areas, courts};
use super::records::{
    BUSY_DAY, BUSY_DAY_RULINGS, OTHER_RULINGS, PROCEDURE, RsCorpus, RsCourt, RsProcedure, RsQuery, RsRuling, SEED,
    dutch_date,
};

impl RsCorpus {
    /// The corpus, generated from a fixed seed.
    pub fn generate() -> RsCorpus {
        let courts = courts();
        let areas = areas();
        let procedures: Vec<RsProcedure> = PROCEDURES
            .iter()
            .map(|(id, name)| RsProcedure {
                identifier: format!("{PROCEDURE}{id}"),
                name: (*name).to_owned(),
            })
            .collect();
        let mut g = Generator {
            courts: &courts,
            areas: &areas,
            seq: vec![0; courts.len()],
            rulings: Vec::new(),
        };
        g.special();
        let first_day = day(2026, 1, 5);
        let busy = parse_date(BUSY_DAY).expect("BUSY_DAY is a day");
        for i in 0..OTHER_RULINGS {
            g.ruling(i, days_after(first_day, pick(SEED, i as u64, 299) as u64));
        }
        for i in 0..BUSY_DAY_RULINGS {
            g.ruling(OTHER_RULINGS + i, busy);
        }
        let rulings = g.rulings;
        let by_ecli = rulings.iter().enumerate().map(|(i, r)| (r.ecli.clone(), i)).collect();
        RsCorpus {
            courts,
            areas,
            procedures,
            rulings,
            by_ecli,
        }
    }

    /// The ruling `ecli`, if the corpus has it.
    pub fn ruling(&self, ecli: &str) -> Option<&RsRuling> {
        self.by_ecli.get(ecli).map(|&i| &self.rulings[i])
    }

    /// The court of `ruling`.
    pub fn court_of(&self, ruling: &RsRuling) -> &RsCourt {
        &self.courts[ruling.court]
    }

    /// Every ruling `query` matches, in the feed's order (modified date, then generation
    /// order; reversed for `DESC`).
    pub fn search(&self, query: &RsQuery) -> Vec<&RsRuling> {
        let mut hits: Vec<(usize, &RsRuling)> = self
            .rulings
            .iter()
            .enumerate()
            .filter(|(_, r)| self.matches(r, query))
            .collect();
        hits.sort_by(|(ia, a), (ib, b)| a.modified.cmp(&b.modified).then(ia.cmp(ib)));
        if query.descending {
            hits.reverse();
        }
        hits.into_iter().map(|(_, r)| r).collect()
    }

    fn matches(&self, r: &RsRuling, q: &RsQuery) -> bool {
        let court = &self.courts[r.court];
        (q.types.is_empty() || q.types.iter().any(|t| t == r.kind))
            && (q.creators.is_empty() || q.creators.contains(&court.identifier))
            && (q.subjects.is_empty()
                || q.subjects
                    .iter()
                    .any(|s| r.areas.iter().any(|&a| self.areas[a].identifier == *s)))
            && q.date
                .as_ref()
                .is_none_or(|(from, to)| *from <= r.date && r.date <= *to)
            && q.modified
                .as_ref()
                .is_none_or(|(since, until)| *since <= r.modified && until.as_ref().is_none_or(|u| r.modified <= *u))
            && (!q.with_doc || (r.has_text && r.deleted.is_none()))
            && q.replaces.as_ref().is_none_or(|l| r.replaces.as_ref() == Some(l))
    }

    /// The Atom entry title: "ECLI, court, dd-mm-yyyy, case number".
    pub fn title(&self, r: &RsRuling) -> String {
        format!(
            "{}, {}, {}, {}",
            r.ecli,
            self.courts[r.court].name,
            dutch_date(&r.date),
            r.case_number
        )
    }
}
