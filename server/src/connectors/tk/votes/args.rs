//! The arguments of `tk_votes` and what they ask ([`Asked`]): one case by its number, or
//! the cases whose title or subject holds some words (with dates and a page); the buffer
//! key of each, and the question in words.
//!
//! Invariants: an [`Asked`] holds a valid case number, or 1 to `MAX_WORDS` words whose
//! dates the platform's filter takes; arguments that ask neither, or both, are a clear
//! error before anything is asked of the platform. What it does not do: ask the platform
//! (`fetch.rs`).

use std::fmt::Write as _;

use besluitbron_core::cache::{CacheKey, DataClass};
use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

use crate::platforms::tk::{MAX_WORDS, TkSearch, is_case_number};

use crate::platforms::tk::PLATFORM;

/// Cases shown by default, and at most.
const DEFAULT_CASES: usize = 3;
pub(super) const MAX_CASES: usize = 10;

/// Arguments of `tk_votes`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct VotesArgs {
    /// A case number such as `2025Z17647`. Give `id` or `query`.
    #[schemars(length(max = 16))]
    #[serde(default)]
    pub id: Option<String>,
    /// Words that must all occur in the case's title or subject (at most 10), e.g.
    /// `vuurwerk`.
    #[schemars(length(max = 500))]
    #[serde(default)]
    pub query: Option<String>,
    /// With `query`: started from this day.
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_from: Option<String>,
    /// With `query`: started until this day.
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_to: Option<String>,
    /// With `query`: voted cases to show (default 3).
    #[schemars(schema_with = "limit_schema")]
    #[serde(default)]
    pub limit: Option<u32>,
    /// With `query`: from the answer's `next_offset`.
    #[schemars(schema_with = "offset_schema")]
    #[serde(default)]
    pub offset: Option<u32>,
}

/// A plain integer 1–10 (no `format`, no `null` in the type: portable to every client).
fn limit_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 1, "maximum": MAX_CASES})
}

/// A plain integer from 0.
fn offset_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 0, "maximum": 250})
}

/// What was asked: one case, or words.
#[derive(Clone, Debug)]
pub(super) enum Asked {
    Case(String),
    Words {
        search: TkSearch,
        offset: usize,
        limit: usize,
    },
}

impl Asked {
    /// What `args` ask, or the tool's error saying what is wrong with them.
    pub(super) fn of(args: &VotesArgs) -> Result<Asked, String> {
        let id = args.id.as_deref().map(str::trim).filter(|s| !s.is_empty());
        let query = args.query.as_deref().map(str::trim).filter(|s| !s.is_empty());
        match (id, query) {
            (Some(_), Some(_)) | (None, None) => Err(
                "tk_votes: give either `id` (a case number such as 2025Z17647) or `query` (words in the case's \
                 title or subject), not both and not neither"
                    .to_owned(),
            ),
            (Some(id), None) => Asked::case(args, id),
            (None, Some(query)) => Asked::words(args, query),
        }
    }

    /// The case numbered `id`; paging and dates do not go with it.
    fn case(args: &VotesArgs, id: &str) -> Result<Asked, String> {
        let number = id.to_ascii_uppercase();
        if !is_case_number(&number) {
            return Err(format!(
                "tk_votes: `{}` is not a case number (four digits, Z, five or six digits, e.g. 2025Z17647; \
                 tk_search with kind `cases` finds them); for words use `query`",
                crate::platforms::http::brief(id)
            ));
        }
        if args.date_from.is_some() || args.date_to.is_some() || args.limit.is_some() || args.offset.is_some() {
            return Err("tk_votes: `date_from`, `date_to`, `limit` and `offset` go with `query`, not `id`".to_owned());
        }
        Ok(Asked::Case(number))
    }

    /// The cases whose title or subject holds every word of `query`, within the dates and
    /// the page `args` give.
    fn words(args: &VotesArgs, query: &str) -> Result<Asked, String> {
        let words: Vec<String> = query.split_whitespace().map(str::to_owned).collect();
        if words.len() > MAX_WORDS {
            return Err(format!(
                "tk_votes: `query` must hold 1 to {MAX_WORDS} words, not {}",
                words.len()
            ));
        }
        let limit = crate::connectors::pages::list_limit("tk_votes", args.limit, DEFAULT_CASES, MAX_CASES)?;
        let mut search = TkSearch::words(words);
        search.date_from = args.date_from.clone();
        search.date_to = args.date_to.clone();
        search.filter("GestartOp").map_err(|e| e.to_string())?;
        Ok(Asked::Words {
            search,
            offset: args.offset.unwrap_or(0) as usize,
            limit,
        })
    }

    /// The buffer key of the answer.
    pub(super) fn key(&self) -> CacheKey {
        match self {
            Asked::Case(number) => CacheKey::new(PLATFORM, DataClass::Reference, "votes").param("case", number.clone()),
            Asked::Words { search, offset, limit } => {
                let mut key = CacheKey::new(PLATFORM, DataClass::Search, "votes_search")
                    .param("words", search.words.join(" "))
                    .param("offset", offset.to_string())
                    .param("limit", limit.to_string());
                for (name, value) in [("date_from", &search.date_from), ("date_to", &search.date_to)] {
                    if let Some(v) = value {
                        key = key.param(name, v.clone());
                    }
                }
                key
            }
        }
    }

    /// What was asked, in words.
    pub(super) fn describe(&self) -> String {
        match self {
            Asked::Case(number) => format!("case {number}"),
            Asked::Words { search, .. } => {
                let mut s = format!("cases whose title or subject holds `{}`", search.words.join(" "));
                match (&search.date_from, &search.date_to) {
                    (Some(f), Some(t)) => write!(s, ", started {f} to {t}"),
                    (Some(f), None) => write!(s, ", started from {f}"),
                    (None, Some(t)) => write!(s, ", started until {t}"),
                    (None, None) => Ok(()),
                }
                .ok();
                s
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_paging_arguments_are_plain_integers() {
        let schema = serde_json::to_value(schemars::schema_for!(VotesArgs)).unwrap();
        for name in ["limit", "offset"] {
            let p = &schema["properties"][name];
            assert_eq!(p["type"], "integer", "{name}: {p}");
            assert!(p.get("format").is_none(), "{name}: {p}");
        }
    }
}
