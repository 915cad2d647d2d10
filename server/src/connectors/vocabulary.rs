//! The assistant's vocabulary, written down once: the names every tool's arguments and
//! structured results use, whatever platform answers.
//!
//! **Arguments**: `query` (words), `limit`, `offset`, `date_from` and `date_to`
//! (YYYY-MM-DD), `organization` (a key or a name, resolved before the platform is asked),
//! `id` (what a reading tool reads).
//!
//! **Results**: a tool that finds or lists records answers `results`, a list of [`Item`]s
//! (each with `id`, `title`, `date`, `kind`, `organization` where known, `url` of the
//! original, `platform`, and the `tool` that reads it by that `id`), then [`Tally`]:
//! `total` with `total_is_exact`, and `next_offset` when there is more. A tool that reads
//! one record answers that record's `id`, `title`, `date`, `kind`, `organization`, `url`
//! and `platform` at the top of its structured content.
//!
//! A connector may add fields of its own next to these (an article count, a summary),
//! in snake_case English; the platform's own field names (`Titel`, `entity_id`, `hits`)
//! stay inside its platform module. The contract test (`server/tests/contract.rs`,
//! `every_tool_speaks_the_vocabulary`) holds every tool to this.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

use besluitbron_core::PlatformId;

/// One result, as every tool's `results` hold it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Item {
    /// What `tool` takes as `id` (for a reference entry: the key other tools take).
    pub id: String,
    /// Its title or name.
    pub title: String,
    /// Its date, YYYY-MM-DD where the platform gives a day.
    #[serde(default)]
    pub date: Option<String>,
    /// What kind of record it is, in the platform's words.
    #[serde(default)]
    pub kind: Option<String>,
    /// The organisation it is of, where known.
    #[serde(default)]
    pub organization: Option<String>,
    /// The original, where the platform gives an address.
    #[serde(default)]
    pub url: Option<String>,
    /// The platform's id (`obv`, `tk`, …).
    pub platform: String,
    /// The tool that reads it, given `id`; absent for an entry of a reference list.
    #[serde(default)]
    pub tool: Option<String>,
}

impl Item {
    /// A result of `platform` that `tool` reads by `id`.
    pub fn new(platform: PlatformId, tool: &str, id: impl Into<String>, title: impl Into<String>) -> Item {
        Item {
            id: id.into(),
            title: title.into(),
            date: None,
            kind: None,
            organization: None,
            url: None,
            platform: platform.as_str().to_owned(),
            tool: Some(tool.to_owned()),
        }
    }

    /// An entry of `platform`'s reference list: its key and its name.
    pub fn reference(platform: PlatformId, id: impl Into<String>, title: impl Into<String>) -> Item {
        Item {
            tool: None,
            ..Item::new(platform, "", id, title)
        }
    }

    /// The same, dated.
    pub fn dated(mut self, date: Option<impl Into<String>>) -> Item {
        self.date = date.map(Into::into).filter(|d: &String| !d.is_empty());
        self
    }

    /// The same, of this kind.
    pub fn kind(mut self, kind: Option<impl Into<String>>) -> Item {
        self.kind = kind.map(Into::into).filter(|k: &String| !k.is_empty());
        self
    }

    /// The same, of this organisation.
    pub fn of(mut self, organization: Option<impl Into<String>>) -> Item {
        self.organization = organization.map(Into::into).filter(|o: &String| !o.is_empty());
        self
    }

    /// The same, with the original's address.
    pub fn at(mut self, url: Option<impl Into<String>>) -> Item {
        self.url = url.map(Into::into).filter(|u: &String| !u.is_empty());
        self
    }
}

/// How many results there are, and where the next page starts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Tally {
    /// Every result of the question at the platform, when it says.
    #[serde(default)]
    pub total: Option<u64>,
    /// Whether `total` is exact (else the platform's estimate or a lower bound).
    #[serde(default)]
    pub total_is_exact: bool,
    /// The `offset` for the results that follow, when there are more.
    #[serde(default)]
    pub next_offset: Option<u64>,
}

impl Tally {
    /// An exact total, and the next page's offset when `shown` results from `offset` do
    /// not reach it.
    pub fn exact(total: u64, offset: u64, shown: usize) -> Tally {
        let end = offset + shown as u64;
        Tally {
            total: Some(total),
            total_is_exact: true,
            next_offset: (shown > 0 && end < total).then_some(end),
        }
    }

    /// Every entry of a reference list, all shown.
    pub fn all(shown: usize) -> Tally {
        Tally::exact(shown as u64, 0, shown)
    }
}

/// Any tool's results as the vocabulary reads them (what `search` on `/mcp` takes from a
/// platform's search tool): its `results` and its [`Tally`]; fields of the connector's
/// own are passed over.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Listing {
    /// The results shown.
    pub results: Vec<Item>,
    /// Their count and the next page.
    #[serde(flatten)]
    pub tally: Tally,
}

impl Listing {
    /// A tool's structured content as a listing, if it is one.
    pub fn read(structured: &serde_json::Value) -> Option<Listing> {
        serde_json::from_value(structured.clone()).ok()
    }
}

/// A snippet with a platform's highlights (between `open` and `close`, e.g. OpenTK's
/// `<b>`, ORI's `<mark>`) as `**…**`, other markup and entities
/// resolved, whitespace collapsed.
pub fn readable_snippet(snip: &str, open: &str, close: &str) -> String {
    let marked = snip.replace(open, "\u{1}").replace(close, "\u{2}");
    let text = nanohtml2text::html2text(&marked);
    let text = text.replace(['\u{1}', '\u{2}'], "**");
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_listing_reads_the_shared_fields_and_passes_over_the_rest() {
        let v = json!({
            "searched": "stikstof",
            "results": [{"id": "a", "title": "A", "platform": "obv", "tool": "obv_document", "summary": "…"}],
            "total": 12, "total_is_exact": false, "next_offset": 1
        });
        let l = Listing::read(&v).expect("a listing");
        assert_eq!(l.results[0].id, "a");
        assert_eq!(l.results[0].tool.as_deref(), Some("obv_document"));
        assert_eq!(l.tally.total, Some(12));
        assert!(!l.tally.total_is_exact);
        assert_eq!(l.tally.next_offset, Some(1));
        assert!(Listing::read(&json!({"hits": []})).is_none(), "not the shared shape");
    }

    #[test]
    fn the_next_offset_is_given_only_when_there_is_more() {
        assert_eq!(Tally::exact(30, 0, 10).next_offset, Some(10));
        assert_eq!(Tally::exact(30, 20, 10).next_offset, None);
        assert_eq!(Tally::exact(30, 40, 0).next_offset, None);
        assert_eq!(Tally::all(3).total, Some(3));
    }
}
