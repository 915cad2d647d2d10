//! `tk_votes`'s result as text and structured content: per case, each voted decision
//! with its tally by faction, the members who differed from their faction or did not
//! take part (a roll call's every vote is in the structured content), and the mistakes.
//!
//! Invariants: the text and the structured content are made from the same
//! [`VoteResult`]s; `next_offset` is given only while voted cases follow. What it does
//! not do: count the votes (`result.rs`).

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use serde_json::json;

use crate::call::{Rendered, Structure, provenance};

use super::fetch::{DecisionVotes, VotesAnswer};
use super::result::{Tally, Vote, VoteResult, VotesShown, result_of};

/// `tk_votes`'s result: per case, each voted decision with its tally by faction, the
/// members who differed from their faction or did not take part (a roll call's every
/// vote is in the structured content), and the mistakes.
pub fn render(answer: &VotesAnswer, served: Served, searched: &str) -> Rendered {
    let results: Vec<VoteResult> = answer
        .cases
        .iter()
        .flat_map(|c| c.decisions.iter().enumerate().map(move |(i, d)| result_of(c, i + 1, d)))
        .collect();
    let shown_to = answer.offset + answer.cases.len();
    let next_offset = (shown_to < answer.voted && !answer.cases.is_empty()).then_some(shown_to);
    let mut text = if answer.cases.is_empty() {
        if answer.voted > 0 {
            format!(
                "No more voted cases for {searched}{}: {} were found, this offset is past them.",
                provenance(served),
                answer.voted
            )
        } else if searched.starts_with("case ") {
            format!(
                "The Tweede Kamer has no {searched}{} (not found, or deleted). Check the number (tk_search with kind \
                 `cases` finds cases by words), or search with `query`.",
                provenance(served)
            )
        } else {
            format!(
                "No case put to the vote among the {} the Tweede Kamer has for {searched}{}. To widen: use fewer or \
                 other words (each must occur in the case's title or subject, as written), widen or drop the dates; \
                 tk_search with kind `cases` shows cases whether voted or not.",
                answer.matched.map_or("cases".to_owned(), |m| format!("{m} cases")),
                provenance(served)
            )
        }
    } else {
        let mut t = format!(
            "Votes for {searched}{}: {} voted case{} shown",
            provenance(served),
            answer.cases.len(),
            if answer.cases.len() == 1 { "" } else { "s" }
        );
        if !searched.starts_with("case ") {
            let _ = write!(t, " ({}–{} of {} voted", answer.offset + 1, shown_to, answer.voted);
            if answer.more {
                t.push_str(" among the newest 250 matching cases; narrow the words or dates for older ones");
            }
            t.push(')');
        }
        t.push('.');
        t
    };
    for case in &answer.cases {
        let c = &case.case;
        let _ = write!(
            text,
            "\n\n{} {} — {}{}",
            c.nummer.as_deref().unwrap_or(""),
            c.soort.as_deref().unwrap_or(""),
            c.onderwerp.as_deref().or(c.titel.as_deref()).unwrap_or(""),
            c.gestart_op
                .as_deref()
                .and_then(crate::calendar::leading_day)
                .map(|d| format!(" (started {d})"))
                .unwrap_or_default()
        );
        if case.decisions.is_empty() {
            let _ = write!(
                text,
                "\nNot put to the vote{}.",
                if case.other_decisions.is_empty() {
                    String::new()
                } else {
                    format!("; its decisions: {}", case.other_decisions.join(", "))
                }
            );
        }
        for (i, d) in case.decisions.iter().enumerate() {
            let r = result_of(case, i + 1, d);
            write_decision(&mut text, &r, d);
        }
    }
    if let Some(next) = next_offset {
        let _ = write!(text, "\n\nMore voted cases: call tk_votes again with `offset` {next}.");
    }
    let total = if searched.starts_with("case ") {
        answer.cases.len()
    } else {
        answer.voted
    };
    let shown = VotesShown {
        searched: searched.to_owned(),
        results,
        tally: crate::connectors::vocabulary::Tally {
            total: Some(total as u64),
            total_is_exact: !answer.more,
            next_offset: next_offset.map(|n| n as u64),
        },
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    }
}

fn write_decision(text: &mut String, r: &VoteResult, d: &DecisionVotes) {
    let how = match (r.vote_kind.as_deref(), r.roll_call) {
        (_, true) => "roll call",
        (Some("Met handopsteken"), _) => "show of hands",
        (Some(other), _) => other,
        (None, _) => "not voted",
    };
    let _ = write!(
        text,
        "\nDecision {} of {}: {} ({}; {}; {}).",
        r.decision_number,
        r.decisions,
        r.decision_text
            .as_deref()
            .or(r.decision.as_deref())
            .unwrap_or("(no text)"),
        r.decision.as_deref().unwrap_or("no kind"),
        how,
        if r.is_final { "final" } else { "not yet final" }
    );
    if d.votes.is_empty() {
        text.push_str(" No votes were cast on it.");
        return;
    }
    let _ = write!(
        text,
        " Voor {}, Tegen {}{}{}.",
        r.totals.voor,
        r.totals.tegen,
        if r.totals.niet_deelgenomen > 0 {
            format!(", not taking part {}", r.totals.niet_deelgenomen)
        } else {
            String::new()
        },
        if r.roll_call { " (members)" } else { " (seats)" }
    );
    if r.roll_call {
        for f in &r.factions {
            let _ = write!(
                text,
                "\n- {} ({}): {}",
                f.faction,
                match f.seats {
                    Some(1) => "1 seat".to_owned(),
                    Some(n) => format!("{n} seats"),
                    None => "seats unknown".to_owned(),
                },
                tally_words(&f.tally)
            );
            let line = majority(&f.tally);
            let others: Vec<String> = r
                .members
                .iter()
                .filter(|m| m.faction == f.faction && m.vote != line)
                .flat_map(|m| m.names.iter().map(|name| format!("{name} {}", m.vote)))
                .collect();
            if !others.is_empty() {
                let _ = write!(text, " — otherwise: {}", others.join(", "));
            }
        }
        text.push_str("\nEvery member's vote is in the structured content (`members`).");
    } else {
        for side in [Vote::For, Vote::Against, Vote::NotTakingPart] {
            let names: Vec<String> = r
                .factions
                .iter()
                .filter(|f| f.vote == side)
                .map(|f| {
                    format!(
                        "{} ({}){}",
                        f.faction,
                        f.seats.map_or("?".to_owned(), |s| s.to_string()),
                        if f.mistake { " [cast by mistake]" } else { "" }
                    )
                })
                .collect();
            if !names.is_empty() {
                let _ = write!(text, "\n- {side}: {}", names.join(", "));
            }
        }
    }
    for f in r.factions.iter().filter(|f| f.mistake) {
        let _ = write!(
            text,
            "\nMistake: {}'s vote is marked as cast by mistake (Vergissing); the Kamer counts it as cast, and so do \
             these totals.",
            f.faction
        );
    }
}

/// The faction's majority vote.
fn majority(t: &Tally) -> Vote {
    if t.voor >= t.tegen && t.voor >= t.niet_deelgenomen {
        Vote::For
    } else if t.tegen >= t.niet_deelgenomen {
        Vote::Against
    } else {
        Vote::NotTakingPart
    }
}

fn tally_words(t: &Tally) -> String {
    let mut parts = Vec::new();
    for (word, n) in [
        ("Voor", t.voor),
        ("Tegen", t.tegen),
        ("not taking part", t.niet_deelgenomen),
    ] {
        if n > 0 {
            parts.push(format!("{word} {n}"));
        }
    }
    parts.join(", ")
}

#[cfg(test)]
mod tests {
    use besluitbron_core::path::Keep;

    use crate::platforms::tk::{Besluit, Stemming, Zaak};

    use super::super::decisions::keep_for;
    use super::super::decisions::tests::decision;
    use super::super::fetch::CaseVotes;
    use super::*;

    #[test]
    fn render_a_show_of_hands_with_a_mistake_then_a_roll_call() {
        let faction = |name: &str, seats: i64, soort: &str, mistake: bool| Stemming {
            besluit_id: Some("be500000-0000-4000-8000-000000000001".into()),
            soort: Some(soort.into()),
            fractie_grootte: Some(seats),
            actor_naam: Some(name.into()),
            actor_fractie: Some(name.into()),
            vergissing: mistake,
            ..Stemming::default()
        };
        let member = |name: &str, faction: &str, seats: i64, soort: &str| Stemming {
            persoon_id: Some(format!("9e500000-0000-4000-8000-{:012}", name.len())),
            actor_naam: Some(name.into()),
            ..faction_vote(faction, seats, soort)
        };
        fn faction_vote(name: &str, seats: i64, soort: &str) -> Stemming {
            Stemming {
                besluit_id: Some("be500000-0000-4000-8000-000000000002".into()),
                soort: Some(soort.into()),
                fractie_grootte: Some(seats),
                actor_fractie: Some(name.into()),
                ..Stemming::default()
            }
        }
        let hands = Besluit {
            id: "be500000-0000-4000-8000-000000000001".into(),
            besluit_tekst: Some("Verworpen.".into()),
            agendapunt_zaak_besluit_volgorde: Some(1),
            ..decision("Besluit", "Stemmen - verworpen")
        };
        let roll = Besluit {
            id: "be500000-0000-4000-8000-000000000002".into(),
            stemmings_soort: Some("Hoofdelijk".into()),
            besluit_tekst: Some("Aangenomen.".into()),
            agendapunt_zaak_besluit_volgorde: Some(2),
            ..decision("Besluit", "Stemmen - aangenomen")
        };
        let answer = VotesAnswer {
            cases: vec![CaseVotes {
                case: Zaak {
                    id: "2aa00000-0000-4000-8000-000000000001".into(),
                    nummer: Some("2025Z17647".into()),
                    soort: Some("Motie".into()),
                    onderwerp: Some("Motie van het lid Jansen over een landelijk verbod op consumentenvuurwerk".into()),
                    gestart_op: Some("2025-09-30T00:00:00+02:00".into()),
                    ..Zaak::default()
                },
                url: Some(
                    "https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0/Zaak(2aa00000-0000-4000-8000-000000000001)"
                        .into(),
                ),
                decisions: vec![
                    DecisionVotes {
                        decision: hands,
                        votes: vec![
                            faction("PVV", 2, "Tegen", false),
                            faction("NSC", 1, "Tegen", true),
                            faction("D66", 2, "Voor", false),
                        ],
                    },
                    DecisionVotes {
                        decision: roll,
                        votes: vec![
                            member("Berg", "PVV", 2, "Tegen"),
                            member("Van Dijk", "PVV", 2, "Niet deelgenomen"),
                            member("De Vries", "NSC", 1, "Voor"),
                            member("Bosch", "D66", 2, "Voor"),
                            member("Van der Meer", "D66", 2, "Tegen"),
                        ],
                    },
                ],
                other_decisions: Vec::new(),
            }],
            matched: Some(1),
            voted: 1,
            offset: 0,
            more: false,
        };
        assert_eq!(
            keep_for(answer.cases.iter().flat_map(|c| &c.decisions).map(|d| &d.decision)),
            Keep::Normal,
            "final decisions are kept a month"
        );
        let r = render(&answer, Served::Fetched, "case 2025Z17647");
        crate::connectors::render_test::snapshot("tk_votes", &r, &answer);
    }
}
