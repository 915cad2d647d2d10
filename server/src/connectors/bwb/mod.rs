//! The Basiswettenbestand connector (`bwb`): national legislation — laws, AMvB's,
//! ministerial regulations — searched by title words, kind and ministry as in force on a
//! date, and one regulation read as in force on a date (default today), whole or one
//! article, paged by characters.
//!
//! A collection of KOOP's regulation family, whose tools [`crate::connectors::regulation`]
//! writes once; what is the Basiswettenbestand's own is here: what it says, its search's
//! arguments and the search they ask, what its record says of a version, its id forms
//! ([`ids`]) and its offers. A version is the one in force on the day asked: a BWB id names
//! a regulation, never one of its versions, so a version's lookup is kept ten minutes
//! under the id and the day, and its toestand for weeks under the id and the day the
//! version starts (a newer version is read anew).

pub mod ids;
pub mod offers;

use besluitbron_core::cache::{CacheKey, DataClass};
use rmcp::schemars::{self, JsonSchema};
use serde::Serialize;

use super::ConnectorSpec;
use super::Sample;
use super::ids::IdForm;
use super::page_spec::PageSpec;
use super::regulation::{self, Asked, Collection, CollectionSpec, ReadWords, ToolWords, Version, Words};
use crate::platforms::bwb::{BwbRecord, BwbSearch, PLATFORM};

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = regulation::connector::<Bwb>();

/// The Basiswettenbestand among the regulation collections.
#[derive(Debug)]
pub struct Bwb;

crate::regulation_search_args! {
    query: "Words that must all occur in the regulation's title, e.g. `vuurwerk`.",
    own: {
        /// The kind, as the Basiswettenbestand writes it: `wet`, `AMvB`,
        /// `ministeriele-regeling`, `rijkswet`, `KB`, ….
        #[schemars(length(max = 40))]
        #[serde(default)]
        pub kind: Option<String>,
    },
    organization: "The ministry responsible (part of its name), e.g. `Justitie en Veiligheid`.",
    offset: "From `next_offset`.",
}

/// What `bwb_read` shows beyond the family's fields.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Shown {
    /// The day asked.
    pub asked_date: String,
    /// The version read is in force from this day.
    pub valid_from: Option<String>,
}

/// The page for people: `https://wetten.overheid.nl/{id}/{date}`.
fn public_url(id: &str, date: Option<&str>) -> String {
    match date {
        Some(d) => format!("https://wetten.overheid.nl/{id}/{d}"),
        None => format!("https://wetten.overheid.nl/{id}"),
    }
}

impl Collection for Bwb {
    type Platform = crate::platforms::bwb::Bwb;
    type SearchArgs = SearchArgs;
    type Shown = Shown;

    const SPEC: CollectionSpec = CollectionSpec {
        instructions: "Basiswettenbestand (bwb_*): national legislation as in force on a date; bwb_read reads a \
                       regulation by its BWB id (BWBR0018451), whole or one `article`.",
        guide: "Basiswettenbestand (bwb_* tools): Dutch national legislation as in force — laws (wet), AMvB's, \
                ministerial regulations — from wetten.overheid.nl's data. bwb_search finds regulations by words of \
                their title, kind and ministry as in force on a date (default today); bwb_read gives one regulation \
                as in force on a date (default today): its citation title, validity, outline and text, or one \
                article by its number (`2`, `1:3`).",
        search: ToolWords {
            name: "bwb_search",
            title: "Search national legislation",
            description: "Search Dutch national legislation (the Basiswettenbestand: laws, AMvB's, ministerial \
                          regulations) by words in the title, kind and ministry, as in force on `date`. Each result \
                          gives the BWB id for bwb_read and the validity of the version in force. Kept ten minutes.",
        },
        read: ToolWords {
            name: "bwb_read",
            title: "Read a regulation as in force",
            description: "One Dutch national regulation as in force on `date`, by its BWB id: citation title, kind, \
                          ministry, the version's validity, its link on wetten.overheid.nl, its outline, and its \
                          text in pages, or only the `article` asked; `next_offset` reads on. Kept for weeks (a \
                          newer version is read anew).",
        },
        read_args: ReadWords {
            id: "The regulation's BWB id, e.g. `BWBR0005537` (from bwb_search).",
            date: "As in force on this day (default today).",
            article: "Only this article, by its number: `2`, `1:3`, `artikel 2a`.",
        },
        words: Words {
            the_collection: "The Basiswettenbestand",
            one: "regulation",
            many: "regulations",
            widen: "use fewer or other title words (each must occur in the title), drop or correct `kind` (e.g. \
                    `wet`, `AMvB`, `ministeriele-regeling`) or `organization`, or try another date (a regulation \
                    not yet or no longer in force is not found on this one).",
            give: "`query` (words of the title), `kind` or `organization` (a ministry)",
            not_an_id: "a BWB id (BWBR and seven digits, such as BWBR0005537; bwb_search finds them)",
            version_from: "valid from",
            open_end: Some("9999-12-31"),
            no_articles: None,
        },
        forms: &[
            IdForm {
                what: "a BWB id, with `@date` and `#article` if wanted",
                example: "BWBR0018451@2025-06-01#2",
                sample: None,
            },
            IdForm {
                what: "a link to wetten.overheid.nl",
                example: "wetten.overheid.nl/BWBR0018451/2025-06-01",
                sample: None,
            },
        ],
        samples: &[
            Sample::new("bwb_search", r#"{"query": "vuurwerk", "date": "2025-01-01"}"#),
            Sample::new(
                "bwb_read",
                r#"{"id": "BWBR0047001", "date": "2025-01-01", "article": "2"}"#,
            )
            .asking(2),
        ],
        offers: &offers::OFFERS,
        page: &PageSpec::Without {
            nl: "Wetgeving (het Basiswettenbestand) is er voor assistenten: bwb_search en bwb_read.",
            en: "National legislation (the Basiswettenbestand) is for assistants: bwb_search and bwb_read.",
        },
    };

    fn search(args: &SearchArgs, day: &str) -> Result<(BwbSearch, Vec<String>), String> {
        let search = BwbSearch {
            words: args.query.clone(),
            kind: args.kind.clone(),
            authority: args.organization.clone(),
            in_force_on: day.to_owned(),
        };
        let said = [
            ("title words", &search.words),
            ("kind", &search.kind),
            ("ministry", &search.authority),
        ];
        let searched = said
            .into_iter()
            .filter_map(|(what, asked)| {
                let asked = asked.as_deref().map(str::trim).filter(|a| !a.is_empty())?;
                Some(format!("{what} `{asked}`"))
            })
            .collect();
        Ok((search, searched))
    }

    /// The version in force on the day asked, its ministry the organisation.
    fn version(r: &BwbRecord) -> Version {
        Version {
            id: r.identifier.clone(),
            title: r.title.clone(),
            kind: r.kind.clone(),
            organization: r.authority.clone(),
            from: r.valid_from.clone(),
            until: r.valid_until.clone(),
            url: public_url(&r.identifier, r.valid_from.as_deref()),
        }
    }

    fn asked(id: &str) -> Option<Asked> {
        ids::asked(id)
    }

    /// Under the regulation's id and the day its version starts.
    fn file_key(r: &BwbRecord) -> CacheKey {
        CacheKey::new(PLATFORM, DataClass::Document, "toestand")
            .param("id", r.identifier.clone())
            .param("valid_from", r.valid_from.clone().unwrap_or_default())
    }

    fn without_file(v: &Version, day: &str) -> String {
        format!(
            "The Basiswettenbestand lists the version of {} in force on {day} without the location of its text; \
             open {} instead",
            v.id, v.url
        )
    }

    fn shown(r: &BwbRecord, day: Option<&str>) -> Shown {
        Shown {
            asked_date: day.unwrap_or_default().to_owned(),
            valid_from: r.valid_from.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use besluitbron_core::path::Served;

    use super::*;
    use crate::connectors::regulation::read::{Read, TextAnswer, render};
    use crate::platforms::bwb::read_toestand;

    #[test]
    fn an_article_missing_from_the_version_is_said_with_the_ones_there_are() {
        let text = read_toestand(
            br#"<toestand bwb-id="BWBR0047001"><wetgeving><citeertitel>Wet consumentenvuurwerk</citeertitel>
            <wet-besluit><wettekst><artikel><kop><label>Artikel</label><nr>1</nr></kop><al>Tekst.</al></artikel>
            </wettekst></wet-besluit></wetgeving></toestand>"#,
        )
        .unwrap();
        let read = Read {
            record: BwbRecord {
                identifier: "BWBR0047001".into(),
                ..BwbRecord::default()
            },
            date: Some("2025-01-01".into()),
            article: Some("7".into()),
            offset: 0,
            length: 100,
        };
        let answer = TextAnswer { text };
        let e = render::<Bwb>(&answer, Served::Fetched, &read).unwrap_err();
        assert!(e.contains("has no article `7`; its articles are 1"), "{e}");
        let read = Read {
            article: Some("artikel 1".into()),
            ..read
        };
        let (_, r) = render::<Bwb>(&answer, Served::Fetched, &read).unwrap();
        assert!(r.text.ends_with("\n\nArtikel 1\nTekst."), "{}", r.text);
    }
}
