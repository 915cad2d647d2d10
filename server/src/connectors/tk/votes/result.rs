//! One decision's result ([`VoteResult`]) from its kept votes: how each faction voted
//! with its seats, the totals, and in a roll call each member's vote, grouped by faction
//! and vote; and `tk_votes`'s structured content ([`VotesShown`]).
//!
//! Invariants: a show of hands counts a faction's seats, a roll call its members; a vote
//! cast by mistake (`Vergissing`) counts as cast, as the Kamer counts it, and is flagged.
//! Factions come largest first, ties by name, so the result is the same for the same
//! votes. What it does not do: write the text (`render.rs`).

use std::collections::BTreeMap;

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use crate::platforms::tk::Stemming;

use super::decisions::{Outcome, is_final, outcome};
use super::fetch::{CaseVotes, DecisionVotes};

/// Votes counted for `Voor`, `Tegen` and `Niet deelgenomen`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tally {
    /// For.
    pub voor: i64,
    /// Against.
    pub tegen: i64,
    /// Did not take part.
    pub niet_deelgenomen: i64,
}

impl Tally {
    fn add(&mut self, vote: Vote, n: i64) {
        match vote {
            Vote::For => self.voor += n,
            Vote::Against => self.tegen += n,
            Vote::NotTakingPart | Vote::Split => self.niet_deelgenomen += n,
        }
    }

    /// The one way all voted, or split.
    fn line(&self) -> Vote {
        match (self.voor > 0, self.tegen > 0) {
            (true, false) => Vote::For,
            (false, true) => Vote::Against,
            (true, true) => Vote::Split,
            (false, false) => Vote::NotTakingPart,
        }
    }
}

/// How a member or a faction voted, written as the Kamer writes it (`Stemming.Soort`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, JsonSchema)]
pub enum Vote {
    /// `Voor`: for.
    #[serde(rename = "Voor")]
    For,
    /// `Tegen`: against.
    #[serde(rename = "Tegen")]
    Against,
    /// `Niet deelgenomen`: did not take part.
    #[serde(rename = "Niet deelgenomen")]
    NotTakingPart,
    /// `verdeeld`: a faction whose members voted both ways (never a member's vote).
    #[serde(rename = "verdeeld")]
    Split,
}

impl Vote {
    /// The platform's `Soort`: `Voor` and `Tegen` count for and against; anything else did
    /// not (the Kamer writes `Niet deelgenomen`).
    fn of_soort(soort: Option<&str>) -> Vote {
        match soort {
            Some("Voor") => Vote::For,
            Some("Tegen") => Vote::Against,
            _ => Vote::NotTakingPart,
        }
    }

    /// As the Kamer writes it.
    pub fn as_str(self) -> &'static str {
        match self {
            Vote::For => "Voor",
            Vote::Against => "Tegen",
            Vote::NotTakingPart => "Niet deelgenomen",
            Vote::Split => "verdeeld",
        }
    }
}

impl std::fmt::Display for Vote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A faction's vote on one decision.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct FactionVote {
    /// The faction, as the Kamer names it in the vote (`ActorFractie`).
    pub faction: String,
    /// Its seats at the vote (`FractieGrootte`).
    pub seats: Option<i64>,
    /// `Voor`, `Tegen`, `Niet deelgenomen`, or `verdeeld` when its members voted both ways.
    // The schema says string: tools/list has no room for the values (the description names them).
    #[schemars(with = "String")]
    pub vote: Vote,
    /// Its votes counted: its seats in a show of hands, its members in a roll call.
    pub tally: Tally,
    /// Its vote (or a member's) was cast by mistake (`Vergissing`); it counts as cast.
    pub mistake: bool,
}

/// The members of one faction who voted alike in a roll call: every member's vote, each
/// faction and vote written once (150 members named one by one were 10 KB a roll call,
/// and a bill's or a query's answer holds several).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct MemberVote {
    /// The faction.
    pub faction: String,
    /// `Voor`, `Tegen` or `Niet deelgenomen`.
    #[schemars(with = "String")]
    pub vote: Vote,
    /// Cast by mistake (`Vergissing`); it counts as cast.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub mistake: bool,
    /// The members (`ActorNaam`), in the platform's order.
    pub names: Vec<String>,
}

/// One decision's result.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VoteResult {
    /// The case number, e.g. `2025Z17647` (`tk_votes` `id`).
    pub id: String,
    /// The case's subject.
    pub title: String,
    /// The day the case started, YYYY-MM-DD.
    pub date: Option<String>,
    /// The case's kind, e.g. `Motie`, `Amendement`, `Wetgeving`.
    pub kind: Option<String>,
    /// `Tweede Kamer`.
    pub organization: String,
    /// The case's record at the platform.
    pub url: Option<String>,
    /// `tk`.
    pub platform: String,
    /// `tk_votes`, which reads it by `id`.
    pub tool: String,
    /// The decision's id (a GUID).
    pub decision_id: String,
    /// Its place among the case's voted decisions (1-based) and how many there are.
    pub decision_number: usize,
    /// How many voted decisions the case has.
    pub decisions: usize,
    /// `BesluitSoort`, e.g. `Stemmen - aangenomen`.
    pub decision: Option<String>,
    /// `BesluitTekst`, e.g. `Aangenomen.`
    pub decision_text: Option<String>,
    /// `adopted`, `rejected`, `held over`, when the decision says.
    #[schemars(with = "Option<String>")]
    pub outcome: Option<Outcome>,
    /// `StemmingsSoort`: `Met handopsteken` (show of hands) or `Hoofdelijk` (roll call).
    pub vote_kind: Option<String>,
    /// A roll call: members voted one by one (see `members`).
    pub roll_call: bool,
    /// The decision is final (`Status` `Besluit`).
    pub is_final: bool,
    /// The totals: seats in a show of hands, members in a roll call.
    pub totals: Tally,
    /// Per faction, largest first.
    pub factions: Vec<FactionVote>,
    /// Every member's vote, in a roll call (empty otherwise): per faction (in the order
    /// of `factions`) and vote, the members' names.
    pub members: Vec<MemberVote>,
}

/// `tk_votes`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct VotesShown {
    /// What was asked, in words.
    pub searched: String,
    /// One result per voted decision.
    pub results: Vec<VoteResult>,
    /// Voted cases found (exact unless the platform had more matching cases than its
    /// first page), and the `offset` for the voted cases that follow.
    #[serde(flatten)]
    pub tally: crate::connectors::vocabulary::Tally,
}

/// One decision's result from its kept votes.
pub(super) fn result_of(case: &CaseVotes, n: usize, d: &DecisionVotes) -> VoteResult {
    let roll_call = d.decision.stemmings_soort.as_deref() == Some("Hoofdelijk") || d.votes.iter().any(is_member);
    let mut totals = Tally::default();
    let mut factions: BTreeMap<String, FactionVote> = BTreeMap::new();
    let mut members = Vec::new();
    for v in &d.votes {
        let vote = Vote::of_soort(v.soort.as_deref());
        let faction = v
            .actor_fractie
            .clone()
            .or_else(|| v.actor_naam.clone())
            .unwrap_or_default();
        let entry = factions.entry(faction.clone()).or_insert_with(|| FactionVote {
            faction: faction.clone(),
            seats: v.fractie_grootte,
            vote: Vote::NotTakingPart,
            tally: Tally::default(),
            mistake: false,
        });
        entry.mistake |= v.vergissing;
        let weight = if is_member(v) {
            1
        } else {
            v.fractie_grootte.unwrap_or(0).max(0)
        };
        entry.tally.add(vote, weight);
        totals.add(vote, weight);
        if is_member(v) {
            let name = v.actor_naam.clone().unwrap_or_default();
            let alike = members
                .iter_mut()
                .find(|m: &&mut MemberVote| m.faction == faction && m.vote == vote && m.mistake == v.vergissing);
            match alike {
                Some(group) => group.names.push(name),
                None => members.push(MemberVote {
                    faction,
                    vote,
                    mistake: v.vergissing,
                    names: vec![name],
                }),
            }
        }
    }
    let mut factions: Vec<FactionVote> = factions
        .into_values()
        .map(|mut f| {
            f.vote = f.tally.line();
            f
        })
        .collect();
    factions.sort_by(|a, b| b.seats.cmp(&a.seats).then_with(|| a.faction.cmp(&b.faction)));
    let place = |faction: &str| factions.iter().position(|f| f.faction == faction);
    members.sort_by_key(|m| (place(&m.faction), m.vote, m.mistake));
    let c = &case.case;
    VoteResult {
        id: c.nummer.clone().unwrap_or_default(),
        title: c.onderwerp.clone().or_else(|| c.titel.clone()).unwrap_or_default(),
        date: c
            .gestart_op
            .as_deref()
            .and_then(crate::calendar::leading_day)
            .map(str::to_owned),
        kind: c.soort.clone(),
        organization: "Tweede Kamer".to_owned(),
        url: case.url.clone(),
        platform: "tk".to_owned(),
        tool: "tk_votes".to_owned(),
        decision_id: d.decision.id.clone(),
        decision_number: n,
        decisions: case.decisions.len(),
        decision: d.decision.besluit_soort.clone(),
        decision_text: d.decision.besluit_tekst.clone(),
        outcome: outcome(&d.decision),
        vote_kind: d.decision.stemmings_soort.clone(),
        roll_call,
        is_final: is_final(&d.decision),
        totals,
        factions,
        members,
    }
}

fn is_member(v: &Stemming) -> bool {
    v.persoon_id.as_deref().is_some_and(|p| !p.is_empty())
}

#[cfg(test)]
mod tests {
    use crate::platforms::tk::Zaak;

    use super::super::decisions::tests::decision;
    use super::*;

    #[test]
    fn votes_and_outcomes_are_written_as_before() {
        let json = |v: serde_json::Value| v.to_string();
        assert_eq!(
            json(serde_json::json!([
                Vote::For,
                Vote::Against,
                Vote::NotTakingPart,
                Vote::Split
            ])),
            r#"["Voor","Tegen","Niet deelgenomen","verdeeld"]"#
        );
        assert_eq!(
            json(serde_json::json!([
                Outcome::Adopted,
                Outcome::Rejected,
                Outcome::HeldOver
            ])),
            r#"["adopted","rejected","held over"]"#
        );
        assert_eq!(Vote::of_soort(Some("Tegen")), Vote::Against);
        assert_eq!(Vote::of_soort(Some("Niet deelgenomen")), Vote::NotTakingPart);
        assert_eq!(Vote::of_soort(None), Vote::NotTakingPart);
    }

    #[test]
    fn a_show_of_hands_counts_seats_and_flags_a_mistake() {
        let vote = |faction: &str, seats: i64, soort: &str, mistake: bool| Stemming {
            soort: Some(soort.into()),
            fractie_grootte: Some(seats),
            actor_fractie: Some(faction.into()),
            actor_naam: Some(faction.into()),
            vergissing: mistake,
            ..Stemming::default()
        };
        let case = CaseVotes {
            case: Zaak {
                nummer: Some("2025Z00001".into()),
                ..Zaak::default()
            },
            url: None,
            decisions: vec![DecisionVotes {
                decision: decision("Besluit", "Stemmen - verworpen"),
                votes: vec![vote("A", 80, "Tegen", true), vote("B", 70, "Voor", false)],
            }],
            other_decisions: Vec::new(),
        };
        let r = result_of(&case, 1, &case.decisions[0]);
        assert_eq!((r.totals.voor, r.totals.tegen), (70, 80));
        assert!(!r.roll_call && r.members.is_empty());
        assert!(r.factions[0].mistake && r.factions[0].faction == "A");
    }
}
