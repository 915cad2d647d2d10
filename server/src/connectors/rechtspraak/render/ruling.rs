//! `rechtspraak_ruling`'s answer: a ruling's metadata, its relations to other rulings,
//! the inhoudsindicatie, and one page of its text.
//!
//! Invariants: the page of text is in the text content only, never twice; the structured
//! content says where it starts and how to ask for the rest. What it does not do: read
//! the ruling's XML (`platforms::rechtspraak`).

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use crate::call::{Head, Rendered, provenance};
use crate::platforms::rechtspraak::{Labeled, Reference, Relation, Ruling};

use super::{own, ruling_title, ruling_url};

/// A formal relation to another ruling, as `rechtspraak_ruling` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RelationShown {
    /// The other ruling's ECLI.
    pub id: String,
    /// Its kind (e.g. `conclusie`, `cassatie`, `hogerBeroep`).
    pub kind: Option<String>,
    /// Which way (`eerdereAanleg`, `latereAanleg`).
    pub direction: Option<String>,
    /// The outcome, when given.
    pub outcome: Option<String>,
    /// The platform's own wording.
    pub label: String,
}

impl RelationShown {
    fn of(r: &Relation) -> RelationShown {
        RelationShown {
            id: r.ecli.clone(),
            kind: r.kind.clone(),
            direction: r.direction.clone(),
            outcome: r.outcome.clone(),
            label: r.label.clone(),
        }
    }
}

/// A law the ruling applies (its metadata's `dcterms:references`), as
/// `rechtspraak_ruling` shows it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReferenceShown {
    /// The law or article as `fetch` and `bwb_read` read it (`BWBR0005537#1:3`); `None`
    /// when the platform's identifier is of a form BesluitBron does not read (then
    /// `as_given` keeps it).
    pub id: Option<String>,
    /// The platform's label, e.g. `Algemene wet bestuursrecht 1:3`.
    pub label: String,
    /// The day the reference is valid on, when given (`bwb_read`'s `date`).
    pub valid_on: Option<String>,
    /// The platform's identifier as given (`bwb:resourceIdentifier`).
    pub as_given: Option<String>,
}

impl ReferenceShown {
    /// `r` as shown.
    pub fn of(r: &Reference) -> ReferenceShown {
        ReferenceShown {
            id: r.law.as_ref().map(|l| l.id()),
            label: r.label.clone(),
            valid_on: r.law.as_ref().and_then(|l| l.valid_on.clone()),
            as_given: r.identifier.clone(),
        }
    }

    /// One line of text: the label, then the id `fetch` reads, or the identifier as given
    /// and that BesluitBron does not read its form.
    pub fn line(&self) -> String {
        let label = if self.label.is_empty() {
            "(no label)"
        } else {
            self.label.as_str()
        };
        match (&self.id, &self.as_given) {
            (Some(id), _) => format!(
                "{label} — {id}{}",
                self.valid_on
                    .as_deref()
                    .map(|d| format!(" (as on {d})"))
                    .unwrap_or_default()
            ),
            (None, Some(identifier)) => {
                format!("{label} — `{identifier}` (a form BesluitBron does not read: not linked)")
            }
            (None, None) => format!("{label} (no identifier given: not linked)"),
        }
    }
}

/// `rechtspraak_ruling`'s structured content: the metadata and where the page of text
/// is. The page itself is in the text content only (never twice): its last
/// `text_length` characters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct RulingOutput {
    /// The ECLI (`rechtspraak_ruling` `id`).
    pub id: String,
    /// The start of the inhoudsindicatie, else the court and case number.
    pub title: String,
    /// `Uitspraak` or `Conclusie`.
    pub kind: Option<String>,
    /// The court's name.
    pub organization: Option<String>,
    /// The ruling's public page.
    pub url: String,
    /// `rechtspraak`.
    pub platform: String,
    /// The court, with its identifier.
    pub court: Option<Labeled>,
    /// The decision date.
    pub date: Option<String>,
    /// The publication date.
    pub issued: Option<String>,
    /// Last modified.
    pub modified: Option<String>,
    /// Case numbers.
    pub case_numbers: Vec<String>,
    /// Procedures.
    pub procedures: Vec<Labeled>,
    /// Areas of law.
    pub areas: Vec<Labeled>,
    /// Formal relations to other rulings (each `id` an ECLI rechtspraak_ruling reads).
    pub relations: Vec<RelationShown>,
    /// The laws and articles it applies (each `id` read by `fetch` and bwb_read).
    pub references: Vec<ReferenceShown>,
    /// Where it is published.
    pub vindplaatsen: Vec<String>,
    /// The LJNs it replaces.
    pub replaces: Vec<String>,
    /// The inhoudsindicatie.
    pub summary: Option<String>,
    /// False when the ECLI is published with its metadata only.
    pub has_text: bool,
    /// The character offset the page of text starts at.
    pub text_offset: usize,
    /// Characters of text in this answer: the last `text_length` characters of the text
    /// content.
    pub text_length: usize,
    /// Characters of text in the whole ruling.
    pub total_length: usize,
    /// The `offset` that asks for the rest of the text, when there is more.
    pub next_offset: Option<usize>,
    /// True when more text follows this page (`next_offset` asks for it).
    pub has_more: bool,
    /// Images the text mentions (not shown).
    pub images: u32,
}

/// The ruling as a person knows it: its title (the start of its inhoudsindicatie, else
/// its court and case number) and its public page, as the structured content says them.
pub fn head(r: &Ruling) -> Head {
    let court = r.court.as_ref().map_or("unknown court", |c| c.name.as_str());
    Head::new(
        ruling_title(r.summary.as_deref(), court, r.case_numbers.first().map(String::as_str)),
        Some(ruling_url(&r.ecli)),
    )
}

/// The lines naming the rulings a ruling is related to.
fn related(relations: &[Relation]) -> String {
    let mut text = String::new();
    for rel in relations {
        let _ = write!(
            text,
            "\nRelated: {} ({}{})",
            rel.ecli,
            rel.kind.as_deref().unwrap_or("relation"),
            rel.direction.as_deref().map(|d| format!(", {d}")).unwrap_or_default()
        );
    }
    text
}

/// The lines naming the laws a ruling applies (none: nothing).
fn applied(references: &[Reference]) -> String {
    let mut text = String::new();
    if !references.is_empty() {
        text.push_str("\nLaws applied (fetch or bwb_read reads each id):");
        for reference in references {
            let _ = write!(text, "\n- {}", ReferenceShown::of(reference).line());
        }
    }
    text
}

/// `rechtspraak_ruling`'s result: the metadata, the inhoudsindicatie, and `length`
/// characters of the text from `offset`, at the end of the text content.
pub fn ruling(r: &Ruling, served: Served, offset: usize, length: usize) -> Rendered {
    let court = r.court.as_ref().map_or("unknown court", |c| c.name.as_str());
    let mut text = format!(
        "{} — {} of {}, decided {}{}{}.",
        r.ecli,
        r.kind.as_deref().unwrap_or("ruling"),
        court,
        r.date.as_deref().unwrap_or("on an unknown date"),
        r.issued
            .as_deref()
            .map(|d| format!(", published {d}"))
            .unwrap_or_default(),
        provenance(served)
    );
    if !r.case_numbers.is_empty() {
        let _ = write!(text, "\nCase number(s): {}", r.case_numbers.join(", "));
    }
    let names = |v: &[Labeled]| v.iter().map(|l| l.name.clone()).collect::<Vec<_>>().join("; ");
    if !r.procedures.is_empty() {
        let _ = write!(text, "\nProcedure: {}", names(&r.procedures));
    }
    if !r.areas.is_empty() {
        let _ = write!(text, "\nAreas of law: {}", names(&r.areas));
    }
    text.push_str(&related(&r.relations));
    text.push_str(&applied(&r.references));
    if !r.vindplaatsen.is_empty() {
        let _ = write!(text, "\nPublished in: {}", r.vindplaatsen.join("; "));
    }
    if !r.replaces.is_empty() {
        let _ = write!(text, "\nReplaces LJN: {}", r.replaces.join(", "));
    }
    if let Some(s) = &r.summary {
        let _ = write!(text, "\n\nInhoudsindicatie: {s}");
    }
    let (start, shown, total, next_offset, images) = match &r.text {
        None => {
            text.push_str("\n\nNo published text: this ECLI is published with its metadata only.");
            (0, 0, 0, None, 0)
        }
        Some(t) => {
            let total = t.text.chars().count();
            let start = offset.min(total);
            let page: String = t.text.chars().skip(start).take(length).collect();
            let shown = page.chars().count();
            let end = start + shown;
            let next_offset = (end < total).then_some(end);
            let _ = write!(
                text,
                "\n\nText ({}), characters {start}–{end} of {total}{}:\n\n{page}",
                t.element,
                match next_offset {
                    Some(next) => format!(
                        "; {} more: ask again with `offset` {next} (and a `length` up to 100000)",
                        total - end
                    ),
                    None if start >= total && total > 0 => format!("; the text ends before `offset` {offset}"),
                    None => String::new(),
                },
            );
            (start, shown, total, next_offset, t.images)
        }
    };
    Rendered {
        text,
        structured: own(&RulingOutput {
            id: r.ecli.clone(),
            title: head(r).title,
            kind: r.kind.clone(),
            organization: r.court.as_ref().map(|c| c.name.clone()),
            url: ruling_url(&r.ecli),
            platform: crate::platforms::rechtspraak::PLATFORM.as_str().to_owned(),
            court: r.court.clone(),
            date: r.date.clone(),
            issued: r.issued.clone(),
            modified: r.modified.clone(),
            case_numbers: r.case_numbers.clone(),
            procedures: r.procedures.clone(),
            areas: r.areas.clone(),
            relations: r.relations.iter().map(RelationShown::of).collect(),
            references: r.references.iter().map(ReferenceShown::of).collect(),
            vindplaatsen: r.vindplaatsen.clone(),
            replaces: r.replaces.clone(),
            summary: r.summary.clone(),
            has_text: r.text.is_some(),
            text_offset: start,
            text_length: shown,
            total_length: total,
            next_offset,
            has_more: next_offset.is_some(),
            images,
        }),
    }
}

#[cfg(test)]
mod tests {
    use crate::platforms::rechtspraak::{RulingText, law_reference};

    use super::super::test_support::snapshot;
    use super::*;

    #[test]
    fn a_ruling_with_metadata_text_pages_and_no_text() {
        let mut r = Ruling {
            ecli: "ECLI:NL:HR:2026:1500".into(),
            court: Some(Labeled {
                id: Some("http://standaarden.overheid.nl/owms/terms/Hoge_Raad_der_Nederlanden".into()),
                name: "Hoge Raad".into(),
            }),
            date: Some("2026-06-12".into()),
            issued: Some("2026-06-12".into()),
            modified: Some("2026-06-15T09:30:00".into()),
            case_numbers: vec!["25/01234".into()],
            kind: Some("Uitspraak".into()),
            procedures: vec![Labeled {
                id: None,
                name: "Cassatie".into(),
            }],
            areas: vec![Labeled {
                id: None,
                name: "Civiel recht".into(),
            }],
            relations: vec![Relation {
                ecli: "ECLI:NL:PHR:2026:400".into(),
                kind: Some("conclusie".into()),
                direction: Some("eerdereAanleg".into()),
                outcome: None,
                label: "Conclusie: ECLI:NL:PHR:2026:400".into(),
            }],
            references: [
                (
                    "1.0:v:BWB:BWBR0005537&artikel=1:3&g=1997-10-14",
                    "Algemene wet bestuursrecht 1:3",
                ),
                ("jci1.31:c:BWBR0035925&g=2022-08-30", "Regeling"),
                ("eu:32016R0679", "AVG"),
            ]
            .into_iter()
            .map(|(id, label)| Reference {
                identifier: Some(id.into()),
                label: label.into(),
                law: law_reference(id),
            })
            .collect(),
            vindplaatsen: vec!["Rechtspraak.nl".into(), "NJ 2026/201".into()],
            replaces: vec![],
            summary: Some("Onrechtmatige daad.".into()),
            text: Some(RulingText {
                element: "uitspraak".into(),
                text: "## 1 Het geding\n\n1.1 Eiseres heeft beroep ingesteld[^1].\n\nFootnotes\n[^1] Procesinleiding."
                    .into(),
                images: 0,
            }),
        };
        snapshot("rechtspraak_ruling", &ruling(&r, Served::Fetched, 0, 40));
        r.text = None;
        let bare = ruling(&r, Served::Cached, 0, 40);
        assert!(
            bare.text
                .ends_with("No published text: this ECLI is published with its metadata only.")
        );
    }
}
