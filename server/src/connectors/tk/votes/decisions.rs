//! What a case's decisions say, read from the Kamer's words: whether a decision was put
//! to the vote, what it came to ([`Outcome`]), whether it is final, and so how long an
//! answer about it is kept.
//!
//! Invariants: a held-over decision is never final, so an answer holding one is kept only
//! briefly and a later vote is seen. What it does not do: count votes (`result.rs`).

use besluitbron_core::path::Keep;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use crate::platforms::tk::{Besluit, ZaakBesluiten};

/// An answer with a decision not yet final is kept this long.
const OPEN_TTL_MS: u64 = 10 * 60 * 1000;
/// The decision status the Kamer gives a final decision.
const FINAL_STATUS: &str = "Besluit";

/// What a decision came to, when its words say (`BesluitSoort`, `BesluitTekst`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Outcome {
    /// `aangenomen`.
    #[serde(rename = "adopted")]
    Adopted,
    /// `verworpen`.
    #[serde(rename = "rejected")]
    Rejected,
    /// `aangehouden`: not voted yet.
    #[serde(rename = "held over")]
    HeldOver,
}

/// Whether a decision is final: its status says so, and it was not held over.
pub(super) fn is_final(decision: &Besluit) -> bool {
    decision.status.as_deref() == Some(FINAL_STATUS) && outcome(decision) != Some(Outcome::HeldOver)
}

/// Whether a decision was (or is to be) put to the vote.
pub(super) fn is_vote(decision: &Besluit) -> bool {
    decision
        .stemmings_soort
        .as_deref()
        .is_some_and(|s| !s.trim().is_empty())
        || decision
            .besluit_soort
            .as_deref()
            .is_some_and(|s| s.trim_start().starts_with("Stemmen"))
}

/// `adopted`, `rejected` or `held over`, from the decision's words.
pub(super) fn outcome(decision: &Besluit) -> Option<Outcome> {
    let words = format!(
        "{} {}",
        decision.besluit_soort.as_deref().unwrap_or(""),
        decision.besluit_tekst.as_deref().unwrap_or("")
    )
    .to_lowercase();
    if words.contains("aangenomen") {
        Some(Outcome::Adopted)
    } else if words.contains("verworpen") {
        Some(Outcome::Rejected)
    } else if words.contains("aangehouden") {
        Some(Outcome::HeldOver)
    } else {
        None
    }
}

/// A case's voted decisions and the ids of the others' kinds.
pub(super) fn split_decisions(case: &ZaakBesluiten) -> (Vec<Besluit>, Vec<String>) {
    let mut voted: Vec<Besluit> = Vec::new();
    let mut other = Vec::new();
    for d in case.besluiten.iter().filter(|d| !d.verwijderd) {
        if is_vote(d) {
            voted.push(d.clone());
        } else {
            other.push(d.besluit_soort.clone().unwrap_or_else(|| "(no kind)".to_owned()));
        }
    }
    voted.sort_by(|a, b| {
        (a.agendapunt_zaak_besluit_volgorde, &a.gewijzigd_op)
            .cmp(&(b.agendapunt_zaak_besluit_volgorde, &b.gewijzigd_op))
    });
    (voted, other)
}

/// How long an answer about `decisions` is kept: a month when all are final, else briefly.
pub(super) fn keep_for<'a>(mut decisions: impl Iterator<Item = &'a Besluit>) -> Keep {
    if decisions.all(is_final) {
        Keep::Normal
    } else {
        Keep::Briefly { ttl_ms: OPEN_TTL_MS }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A decision put to the vote by show of hands, with its status and kind.
    pub(in super::super) fn decision(status: &str, soort: &str) -> Besluit {
        Besluit {
            id: "be500000-0000-4000-8000-000000000001".into(),
            stemmings_soort: Some("Met handopsteken".into()),
            besluit_soort: Some(soort.into()),
            status: Some(status.into()),
            ..Besluit::default()
        }
    }

    #[test]
    fn only_a_final_decision_that_was_not_held_over_is_final() {
        assert!(is_final(&decision("Besluit", "Stemmen - aangenomen")));
        assert!(!is_final(&decision("Voorstel", "Stemmen - aangenomen")));
        assert!(!is_final(&decision("Besluit", "Stemmen - aangehouden")));
        assert_eq!(
            outcome(&decision("Besluit", "Stemmen - verworpen")),
            Some(Outcome::Rejected)
        );
    }
}
