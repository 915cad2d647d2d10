//! The arguments every collection's tools take, declared once: the search's page and day
//! in force ([`search_args!`](crate::search_args)), the reading's id, day, article and
//! page of text ([`ReadArgs`]), their schemas' bounds, and their checks — the day a
//! regulation is read as in force on ([`date_arg`]) and the length of a page of text
//! ([`read_length`]).
//!
//! Invariants: the schemas and the words of every argument are the collection's own only
//! where the collection says them (what `query`, `organization`, `id`, `date` and
//! `article` mean to it); the bounds are the family's. A bad argument is the tool's error
//! naming the argument and what it must be, before anything is asked.
//!
//! What this module does not do: read what an argument asks of a collection (its search,
//! its id forms: the collection does).

use std::marker::PhantomData;

use besluitbron_core::WallTime;
use rmcp::schemars::{self, JsonSchema};
use serde::Deserialize;

use super::collection::{Asked, Collection};
use crate::calendar;
use crate::connectors::ids::Paging;
use crate::platforms::http::brief;

/// The most records a search shows.
pub const MAX_LIMIT: u32 = 50;
/// Characters of text per read by default, and at most.
pub const DEFAULT_LENGTH: usize = 10_000;
/// The most characters of text a read gives at once.
pub const MAX_LENGTH: usize = 100_000;
/// A plain integer 1–50.
pub fn limit_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 1, "maximum": MAX_LIMIT})
}

/// A plain integer from 0 within the reachable hits.
pub fn offset_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 0, "maximum": crate::platforms::koop::MAX_OFFSET})
}

/// A plain integer 1–100000.
pub fn length_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 1, "maximum": MAX_LENGTH})
}

/// A plain integer from 0 (characters).
pub fn text_offset_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({"type": "integer", "minimum": 0})
}

/// The day of `wall` (UTC), YYYY-MM-DD.
pub fn day_of(wall: WallTime) -> String {
    calendar::utc_day(wall.0)
}

/// The date asked, or `today`; an invalid one is the tool's error message.
pub fn date_arg(tool: &str, date: Option<&str>, today: WallTime) -> Result<String, String> {
    match date.map(str::trim).filter(|d| !d.is_empty()) {
        None => Ok(day_of(today)),
        Some(d) if calendar::is_day(d) => Ok(d.to_owned()),
        Some(d) => Err(format!(
            "{tool}: `date` must be a day written YYYY-MM-DD, not `{}`",
            brief(d)
        )),
    }
}

/// The checked `length` of a read, or the tool's error message.
pub fn read_length(tool: &str, length: Option<usize>) -> Result<usize, String> {
    let length = length.unwrap_or(DEFAULT_LENGTH);
    if length == 0 || length > MAX_LENGTH {
        return Err(format!(
            "{tool}: `length` must be 1 to {MAX_LENGTH} characters (default {DEFAULT_LENGTH})"
        ));
    }
    Ok(length)
}

/// Declares a collection's search arguments, `SearchArgs`, in its module: `query` and
/// `organization` with what they mean to the collection, the collection's own filters
/// between them (fields written out, each an optional string), then `date`, `limit` and
/// `offset` as every collection takes them (`offset`'s words the collection's, `""` for
/// none). The fields keep this order: serde's message for an unknown argument lists them
/// so.
#[macro_export]
macro_rules! regulation_search_args {
    (
        query: $query:literal,
        own: { $($own:tt)* },
        organization: $organization:literal,
        offset: $offset:literal $(,)?
    ) => {
        /// Arguments of the collection's search.
        #[derive(Debug, serde::Deserialize, rmcp::schemars::JsonSchema)]
        #[schemars(crate = "rmcp::schemars")]
        #[serde(deny_unknown_fields)]
        pub struct SearchArgs {
            #[schemars(description = $query, length(max = 200))]
            #[serde(default)]
            pub query: Option<String>,
            $($own)*
            #[schemars(description = $organization, length(max = 100))]
            #[serde(default)]
            pub organization: Option<String>,
            /// In force on this day (default today).
            #[schemars(length(max = 10), extend("format" = "date"))]
            #[serde(default)]
            pub date: Option<String>,
            /// Default 10.
            #[schemars(schema_with = "crate::connectors::regulation::args::limit_schema")]
            #[serde(default)]
            pub limit: Option<u32>,
            #[schemars(description = $offset, schema_with = "crate::connectors::regulation::args::offset_schema")]
            #[serde(default)]
            pub offset: Option<u32>,
        }

        impl $crate::connectors::regulation::collection::SearchArguments for SearchArgs {
            fn date(&self) -> Option<&str> {
                self.date.as_deref()
            }

            fn limit(&self) -> Option<u32> {
                self.limit
            }

            fn offset(&self) -> Option<u32> {
                self.offset
            }
        }
    };
}

/// Arguments of a collection's reading tool (what `id`, `date` and `article` mean is the
/// collection's: [`ReadWords`](super::collection::ReadWords)).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields, bound = "")]
#[schemars(bound = "C: Collection", rename = "ReadArgs")]
pub struct ReadArgs<C> {
    #[schemars(description = C::SPEC.read_args.id, length(max = 20))]
    pub id: String,
    #[schemars(description = C::SPEC.read_args.date, length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date: Option<String>,
    #[schemars(description = C::SPEC.read_args.article, length(max = 30))]
    #[serde(default)]
    pub article: Option<String>,
    /// From `next_offset`.
    #[schemars(schema_with = "text_offset_schema")]
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters (default 10000).
    #[schemars(schema_with = "length_schema")]
    #[serde(default)]
    pub length: Option<usize>,
    #[serde(skip)]
    collection: PhantomData<fn() -> C>,
}

impl<C> ReadArgs<C> {
    /// The arguments that read what an id asked (`fetch`, a resource), paged as asked.
    pub fn of(asked: Asked, paging: Paging) -> ReadArgs<C> {
        ReadArgs {
            id: asked.id,
            date: asked.date,
            article: asked.article,
            offset: paging.offset,
            length: paging.length,
            collection: PhantomData,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_day_is_the_wall_clocks_utc_day_and_a_bad_date_is_refused() {
        assert_eq!(day_of(WallTime(0)), "1970-01-01");
        assert_eq!(day_of(WallTime(1_796_601_599_000)), "2026-12-06");
        let today = WallTime(1_796_428_800_000);
        assert_eq!(date_arg("t", Some("2025-01-01"), today).unwrap(), "2025-01-01");
        assert!(
            date_arg("t", Some("2025-02-30"), today)
                .unwrap_err()
                .contains("YYYY-MM-DD")
        );
        assert_eq!(date_arg("t", None, today).unwrap(), "2026-12-05");
        assert_eq!(date_arg("t", Some("  "), today).unwrap(), "2026-12-05");
    }
}
