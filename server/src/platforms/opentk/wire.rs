//! OpenTK's JSON as Rust types (PLATFORMS.md §4, §10.3): the search answer, an
//! activity (`/activiteit/{nummer}`) and the harvesters' last updates.
//!
//! Invariant: every field may be missing, `null`, a number where text is expected or of
//! another shape altogether; nothing here fails on a field the platform adds or drops.
//! The activity's nested objects are read as JSON values and picked apart by name
//! (their field names follow the Tweede Kamer's, in either case).

use serde::Deserialize;
use serde_json::{Map, Value};

use crate::platforms::http;

/// The answer of `POST /search`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SearchReply {
    /// The hits, newest indexed first; at most 280.
    #[serde(deserialize_with = "http::nullable")]
    pub results: Vec<SearchHit>,
    /// How long the search took at the platform, in milliseconds.
    pub milliseconds: Option<f64>,
}

/// One search hit.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct SearchHit {
    /// Document number, e.g. `2026D12345`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub nummer: Option<String>,
    /// Date (ISO).
    #[serde(deserialize_with = "http::lenient_text")]
    pub datum: Option<String>,
    /// The platform's relevance score.
    pub score: Option<f64>,
    /// Kind, e.g. `Motie`, `Verslag`.
    #[serde(deserialize_with = "http::lenient_text")]
    pub category: Option<String>,
    /// Subject.
    #[serde(deserialize_with = "http::lenient_text")]
    pub onderwerp: Option<String>,
    /// A snippet with `<b>` highlights.
    #[serde(deserialize_with = "http::lenient_text")]
    pub snip: Option<String>,
    /// The page, relative to the base URL.
    #[serde(deserialize_with = "http::lenient_text")]
    pub relurl: Option<String>,
    /// Last change.
    #[serde(deserialize_with = "http::lenient_text")]
    pub bijgewerkt: Option<String>,
}

/// The answer of `GET /activiteit/{nummer}`: the meeting's record and what hangs off it.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ActivityReply {
    /// The activity's own record.
    #[serde(deserialize_with = "http::nullable")]
    pub meta: Map<String, Value>,
    /// Members taking part.
    #[serde(deserialize_with = "http::nullable")]
    pub persactors: Vec<Value>,
    /// Committees taking part.
    #[serde(deserialize_with = "http::nullable")]
    pub comactors: Vec<Value>,
    /// The room.
    pub zaal: Value,
    /// Agenda points, each with `docs` and `zdocs`.
    #[serde(deserialize_with = "http::nullable")]
    pub agendapunten: Vec<Value>,
    /// Documents of the activity itself.
    #[serde(deserialize_with = "http::nullable")]
    pub docs: Vec<Value>,
    /// Commitments made by ministers.
    #[serde(deserialize_with = "http::nullable")]
    pub toezeggingen: Vec<Value>,
    /// The video.
    #[serde(deserialize_with = "http::lenient_text")]
    pub videourl: Option<String>,
}

/// One harvester's last run in `GET /lastupdates`.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LastUpdate {
    /// Unix seconds.
    pub absolute: Option<f64>,
    /// Seconds ago, when the platform answered.
    pub relative: Option<f64>,
}
