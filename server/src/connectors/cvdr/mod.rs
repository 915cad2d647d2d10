//! The local regulations connector (`cvdr`): regulations of municipalities, provinces
//! and water boards (verordeningen, beleidsregels, …) from the Centrale Voorziening
//! Decentrale Regelgeving, searched by words, organisation and date in force, and one
//! regulation read, paged by characters, with what the record says of the decision that
//! set it.
//!
//! A collection of KOOP's regulation family, whose tools [`crate::connectors::regulation`]
//! writes once; what is the CVDR's own is here: what it says, its search's arguments and
//! the search they ask, what its record says of a version and of the decision that set
//! it, its id forms ([`ids`]), its offers and its list of organisations ([`orgs`]).
//!
//! An `organization` is resolved before anything is asked ([`orgs`]): the platform names
//! an organisation by its bare name and its kind, so `Utrecht` is two organisations and
//! the caller chooses; an unknown or ambiguous name is a tool error listing the closest.
//!
//! A versioned id (`CVDR123456_2`) names one version, whose record never changes and is
//! kept for weeks; a work id (`CVDR123456`) names the version in force on the day asked,
//! kept ten minutes. A version's XML is kept for weeks under its versioned id.

pub mod ids;
pub mod offers;
pub mod orgs;

use besluitbron_core::cache::{CacheKey, DataClass};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use super::ask::{AskArg, Resolver};
use super::ids::IdForm;
use super::page_spec::PageSpec;
use super::regulation::{self, Asked, Collection, CollectionSpec, ReadWords, ToolWords, Version, Words};
use super::{ConnectorSpec, Sample};
use crate::platforms::cvdr::{CvdrRecord, CvdrSearch, PLATFORM};

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = regulation::connector::<Cvdr>();

/// The CVDR among the regulation collections.
#[derive(Debug)]
pub struct Cvdr;

crate::regulation_search_args! {
    query: "Words that must all occur in the regulation, e.g. `parkeren`.",
    own: {},
    organization: "Municipality, province or water board: a key (`gemeente-utrecht`) or a name.",
    offset: "",
}

/// The page for people: `https://lokaleregelgeving.overheid.nl/CVDR123456/2`.
pub fn public_url(id: &str) -> String {
    match id.split_once('_') {
        Some((work, version)) => format!("https://lokaleregelgeving.overheid.nl/{work}/{version}"),
        None => format!("https://lokaleregelgeving.overheid.nl/{id}"),
    }
}

/// The record's page, as it gives it or as it is written from the id.
fn page_url(r: &CvdrRecord) -> String {
    r.page_url
        .clone()
        .filter(|u| u.starts_with("https://lokaleregelgeving.overheid.nl/"))
        .unwrap_or_else(|| public_url(&r.identifier))
}

/// What the record says of the decision that set this version.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Decision {
    /// The day it was set (`dcterms:issued`).
    pub date: Option<String>,
    /// The publication that made it known, e.g. `Gemeenteblad 2023, 12345`.
    pub published_in: Option<String>,
    /// The organisation's reference (often the council's RIS number).
    pub reference: Option<String>,
    /// What this version changed.
    pub concerns: Option<String>,
    /// Its legal basis.
    pub legal_basis: Vec<String>,
}

impl Decision {
    fn of(r: &CvdrRecord) -> Decision {
        Decision {
            date: r.issued.clone(),
            published_in: r.published_in.clone(),
            reference: r.reference.clone(),
            concerns: r.concerns.clone(),
            legal_basis: r.legal_basis.clone(),
        }
    }

    /// The decision in a sentence, when the record says anything of it.
    fn said(&self) -> Option<String> {
        let said = [
            ("set on", &self.date),
            ("published in", &self.published_in),
            ("reference", &self.reference),
            ("this version:", &self.concerns),
        ];
        let set: Vec<String> = said
            .into_iter()
            .filter_map(|(what, value)| Some(format!("{what} {}", value.as_ref()?)))
            .collect();
        (!set.is_empty()).then(|| format!("The decision: {}.", set.join("; ")))
    }
}

/// What `cvdr_read` shows beyond the family's fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Shown {
    /// The day this version came into force.
    pub date: Option<String>,
    /// The decision that set it, as the record gives it.
    pub decision: Decision,
}

impl Collection for Cvdr {
    type Platform = crate::platforms::cvdr::Cvdr;
    type SearchArgs = SearchArgs;
    type Shown = Shown;

    const ASKS: &'static [AskArg] = &[AskArg {
        argument: "organization",
        names: "organisations",
        resolver: Resolver::Held(orgs::asked),
    }];

    const SPEC: CollectionSpec = CollectionSpec {
        instructions: "Lokale regelgeving (cvdr_*): regulations of municipalities, provinces and water boards as \
                       in force; cvdr_read reads one by its CVDR id.",
        guide: "Lokale regelgeving (cvdr_* tools): regulations of Dutch municipalities, provinces and water boards \
                (verordeningen, beleidsregels) as in force, from lokaleregelgeving.overheid.nl's data. cvdr_search \
                finds them by words, organisation and date in force (default today); cvdr_read gives one \
                regulation's text and what its record says of the decision that set it.",
        search: ToolWords {
            name: "cvdr_search",
            title: "Search local regulations",
            description: "Local regulations (verordeningen, beleidsregels) of Dutch municipalities, provinces and \
                          water boards in force on `date`, by words and organisation. One call, kept ten minutes.",
        },
        read: ToolWords {
            name: "cvdr_read",
            title: "Read a local regulation",
            description: "One local regulation by CVDR id: its text in pages (text content; `next_offset` reads \
                          on), organisation, dates in force, the decision that set it, link. Two calls, then kept \
                          for weeks.",
        },
        read_args: ReadWords {
            id: "`CVDR123456_2` (that version) or `CVDR123456` (the one in force on `date`).",
            date: "For an id without version (default today).",
            article: "Only this article, by its number: `2`, `1.3`, `artikel 2a` (many beleidsregels have none: \
                      read them whole).",
        },
        words: Words {
            the_collection: "The CVDR",
            one: "local regulation",
            many: "local regulations",
            widen: "use fewer or other words (each must occur in the regulation), drop `organization`, or try \
                    another `date` (a regulation not yet or no longer in force is not found on this one).",
            give: "`query` (words) or `organization` (a municipality, province or water board)",
            not_an_id: "a CVDR id (CVDR and digits, with `_` and a version or without, such as CVDR123456_2; \
                        cvdr_search finds them)",
            version_from: "in force from",
            open_end: None,
            no_articles: Some("No articles: it is written in chapters or parts"),
        },
        forms: &[
            IdForm {
                what: "a CVDR id, with or without its version, with `#article` if wanted",
                example: "CVDR100394_2#3",
                sample: Some("CVDR700001_2#2"),
            },
            IdForm {
                what: "a link to lokaleregelgeving.overheid.nl",
                example: "lokaleregelgeving.overheid.nl/CVDR112779/1",
                sample: None,
            },
        ],
        samples: &[
            Sample::new(
                "cvdr_search",
                r#"{"query": "parkeren", "organization": "gemeente-utrecht", "date": "2025-01-01"}"#,
            ),
            Sample::new("cvdr_read", r#"{"id": "CVDR700001", "date": "2025-01-01"}"#).asking(2),
        ],
        offers: &offers::OFFERS,
        page: &PageSpec::Without {
            nl: "Lokale regelgeving (de CVDR) is er voor assistenten: cvdr_search en cvdr_read.",
            en: "Local regulations (the CVDR) are for assistants: cvdr_search and cvdr_read.",
        },
    };

    /// Words, and an organisation resolved from the list before anything is asked.
    fn search(args: &SearchArgs, day: &str) -> Result<(CvdrSearch, Vec<String>), String> {
        let organisation = match args.organization.as_deref().map(str::trim).filter(|o| !o.is_empty()) {
            None => None,
            Some(asked) => {
                let resolved = orgs::resolve(asked);
                if let Some(message) = orgs::refusal("cvdr_search", asked, &resolved) {
                    return Err(message);
                }
                match resolved {
                    orgs::Resolved::One(org) => Some(org),
                    _ => None,
                }
            }
        };
        let mut searched = Vec::new();
        if let Some(w) = args.query.as_deref().map(str::trim).filter(|w| !w.is_empty()) {
            searched.push(format!("words `{w}`"));
        }
        if let Some(o) = &organisation {
            searched.push(format!("{} (`{}`)", o.label, o.key));
        }
        let search = CvdrSearch {
            words: args.query.clone(),
            organisation: organisation.map(|o| o.platform),
            in_force_on: day.to_owned(),
        };
        Ok((search, searched))
    }

    /// The version as its record says it, its page as the record gives it.
    fn version(r: &CvdrRecord) -> Version {
        Version {
            id: r.identifier.clone(),
            title: r.title.clone(),
            kind: r.kind(),
            organization: r.organisation(),
            from: r.in_force_from.clone(),
            until: r.in_force_until.clone(),
            url: page_url(r),
        }
    }

    fn asked(id: &str) -> Option<Asked> {
        ids::asked(id)
    }

    /// Under the versioned id.
    fn file_key(r: &CvdrRecord) -> CacheKey {
        CacheKey::new(PLATFORM, DataClass::Document, "text").param("id", r.identifier.clone())
    }

    fn without_file(v: &Version, _day: &str) -> String {
        format!(
            "The CVDR lists {} without the location of its text; open {} instead",
            v.id, v.url
        )
    }

    fn about(r: &CvdrRecord) -> Option<String> {
        Decision::of(r).said()
    }

    fn shown(r: &CvdrRecord, _day: Option<&str>) -> Shown {
        Shown {
            date: r.in_force_from.clone(),
            decision: Decision::of(r),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_public_page_is_written_from_the_versioned_id() {
        assert_eq!(
            public_url("CVDR625849_3"),
            "https://lokaleregelgeving.overheid.nl/CVDR625849/3"
        );
        assert_eq!(
            public_url("CVDR625849"),
            "https://lokaleregelgeving.overheid.nl/CVDR625849"
        );
        let foreign = CvdrRecord {
            identifier: "CVDR1_2".into(),
            page_url: Some("https://example.org/x".into()),
            ..CvdrRecord::default()
        };
        assert_eq!(page_url(&foreign), "https://lokaleregelgeving.overheid.nl/CVDR1/2");
    }
}
