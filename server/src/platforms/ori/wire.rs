//! Open Raadsinformatie's Elasticsearch 7 answers as Rust types (PLATFORMS.md §1):
//! `_search`, `_doc/{id}`, `_cat/indices?format=json` and `_aliases`.
//!
//! Invariant: the envelope fields that make an answer an Elasticsearch answer (`hits`
//! and `_shards` of a search, `found` of a document) are required, so an HTML page or
//! another JSON is told apart; everything inside `_source` is read leniently.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::{Map, Value};

/// A `_search` answer.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct SearchReply {
    /// The shards asked; `total: 0` means no index matched (not "no hits").
    #[serde(rename = "_shards")]
    pub shards: Shards,
    /// The hits.
    pub hits: Hits,
    /// Milliseconds the search took.
    #[serde(default)]
    pub took: Option<u64>,
    /// True when a shard ran out of time (the hits may be incomplete).
    #[serde(default)]
    pub timed_out: bool,
}

/// `_shards`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Shards {
    /// Shards asked.
    pub total: u64,
    /// Shards that answered.
    pub successful: u64,
    /// Shards that failed.
    pub failed: u64,
}

/// `hits`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Hits {
    /// The total, `{value, relation}` (ES 7) or a bare number (ES 6).
    #[serde(default)]
    pub total: Option<Value>,
    /// The page of hits.
    #[serde(default)]
    pub hits: Vec<Hit>,
}

impl Hits {
    /// The total and whether it is exact (`relation: eq`).
    pub fn total(&self) -> Option<(u64, bool)> {
        match self.total.as_ref()? {
            Value::Number(n) => Some((n.as_u64()?, true)),
            Value::Object(o) => Some((
                o.get("value")?.as_u64()?,
                o.get("relation").and_then(Value::as_str) != Some("gte"),
            )),
            _ => None,
        }
    }
}

/// One hit.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Hit {
    /// The index (the source's copy).
    #[serde(rename = "_index")]
    pub index: String,
    /// The id.
    #[serde(rename = "_id")]
    pub id: String,
    /// The record.
    #[serde(rename = "_source", default)]
    pub source: Map<String, Value>,
    /// Highlighted fragments per field.
    #[serde(default)]
    pub highlight: BTreeMap<String, Vec<String>>,
}

/// A `_doc/{id}` answer.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct DocReply {
    /// The index.
    #[serde(rename = "_index")]
    pub index: String,
    /// The id.
    #[serde(rename = "_id")]
    pub id: String,
    /// Whether it exists.
    pub found: bool,
    /// The record.
    #[serde(rename = "_source", default)]
    pub source: Map<String, Value>,
}

/// One row of `_cat/indices?format=json` (every value is text there).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CatIndex {
    /// The index name.
    pub index: String,
    /// Documents in it.
    #[serde(rename = "docs.count")]
    pub docs_count: Option<String>,
    /// `green`, `yellow` or `red`.
    pub health: Option<String>,
}

/// `_aliases`: per index, its aliases.
pub type Aliases = BTreeMap<String, AliasEntry>;

/// One index's entry in `_aliases`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct AliasEntry {
    /// Alias names (their settings are not read).
    pub aliases: BTreeMap<String, Value>,
}
