//! OpenBesluitvorming's JSON answers as Rust types (PLATFORMS.md §2).
//!
//! Invariant: every model accepts missing, `null` and unknown fields (`#[serde(default)]`
//! with the lenient helpers of [`super::http`]), so a field the platform adds or drops
//! does not break reading. Names follow the platform's (camelCase on the wire).
//!
//! What this module does not do: validate values (a date stays the platform's text).

use serde::{Deserialize, Deserializer};

use crate::platforms::http;

/// Reads a string or a number as text (`null` as empty).
fn text_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(http::lenient_text(d)?.unwrap_or_default())
}

/// One hit of a search.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SearchHit {
    /// Composite id, e.g. `document:notubiz:gemeente:soest:12345`.
    #[serde(deserialize_with = "http::nullable")]
    pub entity_id: String,
    /// `Meeting`, `Document`, `Motion` or `Recording`.
    #[serde(deserialize_with = "http::nullable")]
    pub entity_type: String,
    /// The type in Dutch.
    #[serde(deserialize_with = "http::nullable")]
    pub entity_type_label: String,
    /// The organisation's label.
    #[serde(deserialize_with = "http::nullable")]
    pub organization: String,
    /// Dutch date text.
    #[serde(deserialize_with = "http::nullable")]
    pub date: String,
    /// `YYYY-MM-DD hh:mm:ss`, UTC.
    #[serde(deserialize_with = "http::nullable")]
    pub sort_date: String,
    /// Title.
    #[serde(deserialize_with = "http::nullable")]
    pub title: String,
    /// Plain summary (for a recording: the spoken fragment).
    #[serde(deserialize_with = "http::nullable")]
    pub summary: String,
    /// Summary with `<b>` highlights.
    pub summary_html: Option<String>,
    /// Original file.
    pub download_url: Option<String>,
    /// Page the match is on.
    pub matched_page: Option<u32>,
    /// Pages of the original file.
    pub page_count: Option<u32>,
    /// Image of the matched page.
    pub preview_image_url: Option<String>,
}

/// One page of search results.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SearchPage {
    /// The hits, in the requested order.
    #[serde(deserialize_with = "http::nullable")]
    pub results: Vec<SearchHit>,
    /// Hits in total (approximate when [`SearchPage::total_is_approximate`]).
    #[serde(deserialize_with = "http::nullable")]
    pub total_count: u64,
    /// Whether the total is an estimate.
    #[serde(deserialize_with = "http::nullable")]
    pub total_is_approximate: bool,
    /// Whether another page exists.
    #[serde(deserialize_with = "http::nullable")]
    pub has_more: bool,
}

/// A document attached to an agenda item.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct AgendaDocument {
    /// Entity id of the document.
    #[serde(deserialize_with = "text_or_number")]
    pub id: String,
    /// Its name.
    #[serde(deserialize_with = "http::nullable")]
    pub name: String,
    /// The original file.
    pub original_url: Option<String>,
}

/// An item on a meeting's agenda (items nest).
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct AgendaItem {
    /// Id of the item.
    #[serde(deserialize_with = "text_or_number")]
    pub id: String,
    /// Title.
    #[serde(deserialize_with = "http::nullable")]
    pub title: String,
    /// Number on the agenda (text: "3a" occurs).
    #[serde(deserialize_with = "text_or_number")]
    pub number: String,
    /// Documents discussed.
    #[serde(deserialize_with = "http::nullable")]
    pub documents: Vec<AgendaDocument>,
    /// Sub-items.
    #[serde(deserialize_with = "http::nullable")]
    pub agenda_items: Vec<AgendaItem>,
}

/// Votes for and against.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Tally {
    /// Votes in favour.
    #[serde(deserialize_with = "http::nullable")]
    pub in_favour: u32,
    /// Votes against.
    #[serde(deserialize_with = "http::nullable")]
    pub against: u32,
}

/// One vote on a motion.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Vote {
    /// `voor` or `tegen`.
    #[serde(deserialize_with = "http::nullable")]
    pub option: String,
    /// Voter id.
    #[serde(deserialize_with = "text_or_number")]
    pub voter: String,
    /// Voter name.
    #[serde(deserialize_with = "http::nullable")]
    pub voter_name: String,
    /// Group (party) id.
    #[serde(deserialize_with = "text_or_number")]
    pub group: String,
    /// Group name.
    #[serde(deserialize_with = "http::nullable")]
    pub group_name: String,
}

/// A motion as listed on a meeting.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct MeetingMotion {
    /// Entity id of the motion.
    #[serde(deserialize_with = "text_or_number")]
    pub id: String,
    /// Name.
    #[serde(deserialize_with = "http::nullable")]
    pub name: String,
    /// `aangenomen`, `verworpen`, `ingetrokken`, `aangehouden` or `overig`.
    #[serde(deserialize_with = "http::nullable")]
    pub result: String,
    /// Votes counted.
    #[serde(deserialize_with = "http::nullable")]
    pub tally: Tally,
    /// Individual votes.
    #[serde(deserialize_with = "http::nullable")]
    pub votes: Vec<Vote>,
    /// The agenda item it was voted on.
    #[serde(deserialize_with = "text_or_number")]
    pub agenda_item: String,
    /// Id of its document.
    #[serde(deserialize_with = "text_or_number")]
    pub attachment_id: String,
    /// Its file.
    pub download_url: Option<String>,
}

/// A fragment of a recording's transcript.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Segment {
    /// Start, seconds from the beginning.
    #[serde(deserialize_with = "http::nullable")]
    pub start_seconds: f64,
    /// End, seconds from the beginning.
    #[serde(deserialize_with = "http::nullable")]
    pub end_seconds: f64,
    /// What was said.
    #[serde(deserialize_with = "http::nullable")]
    pub text: String,
}

/// A recording of a meeting.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct Recording {
    /// Id.
    #[serde(deserialize_with = "text_or_number")]
    pub id: String,
    /// Media type.
    pub media_type: Option<String>,
    /// Stream address.
    pub stream_url: Option<String>,
    /// Player page.
    pub player_url: Option<String>,
    /// Length.
    pub duration_seconds: Option<f64>,
    /// How the transcript was made.
    pub transcript_kind: Option<String>,
    /// Transcript fragments.
    #[serde(deserialize_with = "http::nullable")]
    pub segments: Vec<Segment>,
}

/// The `motion` object of a Motion entity.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct MotionDetail {
    /// Name.
    #[serde(deserialize_with = "http::nullable")]
    pub name: String,
    /// Kind of motion.
    pub motion_type: Option<String>,
    /// Status.
    pub status: Option<String>,
    /// `aangenomen`, `verworpen`, `ingetrokken`, `aangehouden` or `overig`.
    #[serde(deserialize_with = "http::nullable")]
    pub result: String,
    /// Votes counted.
    #[serde(deserialize_with = "http::nullable")]
    pub tally: Tally,
    /// Individual votes.
    #[serde(deserialize_with = "http::nullable")]
    pub votes: Vec<Vote>,
}

/// An entity's detail (`GET /api/entities/{id}`); fields of other kinds stay empty.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Entity {
    /// Composite id.
    #[serde(deserialize_with = "http::nullable")]
    pub entity_id: String,
    /// `Meeting`, `Document`, `Motion` or `Recording`.
    #[serde(deserialize_with = "http::nullable")]
    pub entity_type: String,
    /// The type in Dutch.
    #[serde(deserialize_with = "http::nullable")]
    pub entity_type_label: String,
    /// Title.
    #[serde(deserialize_with = "http::nullable")]
    pub title: String,
    /// The organisation's label.
    #[serde(deserialize_with = "http::nullable")]
    pub organization: String,
    /// Dutch date text.
    #[serde(deserialize_with = "http::nullable")]
    pub date: String,
    /// `YYYY-MM-DD hh:mm:ss`, UTC.
    #[serde(deserialize_with = "http::nullable")]
    pub sort_date: String,
    /// Document: the full text as markdown.
    pub markdown_text: Option<String>,
    /// Document or motion: the original file.
    pub download_url: Option<String>,
    /// Document: the file's content type.
    pub content_type: Option<String>,
    /// Document or motion: the PDF.
    pub pdf_url: Option<String>,
    /// Document or motion: the meeting it belongs to.
    pub meeting_id: Option<String>,
    /// Meeting: the agenda.
    #[serde(deserialize_with = "http::nullable")]
    pub agenda: Vec<AgendaItem>,
    /// Meeting: motions voted on.
    #[serde(deserialize_with = "http::nullable")]
    pub motions: Vec<MeetingMotion>,
    /// Meeting: recordings.
    #[serde(deserialize_with = "http::nullable")]
    pub recordings: Vec<Recording>,
    /// Motion: the motion itself.
    pub motion: Option<MotionDetail>,
    /// Motion: the entity id of its PDF.
    pub pdf_entity_id: Option<String>,
}

/// One source (organisation) of `/api/sources`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Source {
    /// Key to search with (`organization`).
    #[serde(deserialize_with = "http::nullable")]
    pub key: String,
    /// Name shown to people.
    #[serde(deserialize_with = "http::nullable")]
    pub label: String,
    /// Supplier of the data.
    #[serde(deserialize_with = "http::nullable")]
    pub supplier: String,
    /// Kind of organisation.
    #[serde(deserialize_with = "http::nullable")]
    pub organization_type: String,
    /// Whether the platform imports it.
    #[serde(deserialize_with = "http::nullable")]
    pub implemented: bool,
    /// Whether it combines other sources.
    #[serde(deserialize_with = "http::nullable")]
    pub is_aggregate: bool,
}

/// The body of `/api/sources`.
#[derive(Deserialize)]
pub(super) struct SourcesBody {
    #[serde(default, deserialize_with = "http::nullable")]
    pub(super) sources: Vec<Source>,
}

/// The load status of one supplier.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SupplierStatus {
    /// Supplier id.
    #[serde(deserialize_with = "http::nullable")]
    pub supplier: String,
    /// Name.
    #[serde(deserialize_with = "http::nullable")]
    pub label: String,
    /// `ok`, `degraded`, `down` or `idle`.
    #[serde(deserialize_with = "http::nullable")]
    pub state: String,
    /// Sources of this supplier.
    #[serde(deserialize_with = "http::nullable")]
    pub source_count: u32,
    /// Of which in state `ok`.
    #[serde(deserialize_with = "http::nullable")]
    pub ok_source_count: u32,
    /// Import runs in the window.
    #[serde(deserialize_with = "http::nullable")]
    pub run_count: u32,
    /// Of which succeeded.
    #[serde(deserialize_with = "http::nullable")]
    pub succeeded_count: u32,
    /// Of which failed.
    #[serde(deserialize_with = "http::nullable")]
    pub failed_count: u32,
    /// Last successful run.
    pub last_success_at: Option<String>,
    /// Last error.
    pub last_error_message: Option<String>,
}

/// How completely a source is held.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Coverage {
    /// Documents the supplier has.
    pub supplier_documents: Option<u64>,
    /// Documents the platform holds.
    pub held_documents: Option<u64>,
    /// Documents missing.
    pub missing_documents: Option<u64>,
    /// Held / supplier.
    pub ratio: Option<f64>,
    /// Start of the compared window.
    pub window_from: Option<String>,
    /// End of the compared window.
    pub window_to: Option<String>,
    /// When this was checked.
    pub checked_at: Option<String>,
}

/// The source that took over a discontinued one.
#[derive(Clone, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Successor {
    /// CBS code.
    pub cbs_id: Option<String>,
    /// Name.
    pub label: Option<String>,
    /// Source key.
    pub source_key: Option<String>,
}

/// The load status of one source.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SourceStatus {
    /// Source key.
    #[serde(deserialize_with = "http::nullable")]
    pub source_key: String,
    /// Supplier-side reference.
    pub source_ref: Option<String>,
    /// Name.
    #[serde(deserialize_with = "http::nullable")]
    pub label: String,
    /// Supplier id.
    #[serde(deserialize_with = "http::nullable")]
    pub supplier: String,
    /// Kind of organisation.
    #[serde(deserialize_with = "http::nullable")]
    pub organization_type: String,
    /// CBS code.
    pub cbs_id: Option<String>,
    /// `ok`, `stale`, `failing`, `never_imported`, `not_implemented` or `discontinued`.
    #[serde(deserialize_with = "http::nullable")]
    pub state: String,
    /// Last successful import.
    pub last_success_at: Option<String>,
    /// Last import run.
    pub last_run_at: Option<String>,
    /// Outcome of the last run.
    pub last_run_status: Option<String>,
    /// Last error.
    pub last_error_message: Option<String>,
    /// Date of the newest content held.
    pub latest_content_date: Option<String>,
    /// When the index was last updated.
    pub last_indexed_at: Option<String>,
    /// Completeness check.
    pub coverage: Option<Coverage>,
    /// When the source stopped (e.g. a municipal merger).
    pub discontinued_at: Option<String>,
    /// Its successor.
    pub succeeded_by: Option<Successor>,
}

/// The platform's load status ("Laadstatus", `GET /api/status`).
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Status {
    /// When the platform computed it.
    #[serde(deserialize_with = "http::nullable")]
    pub generated_at: String,
    /// Hours of history considered.
    #[serde(deserialize_with = "http::nullable")]
    pub window_hours: u32,
    /// Whether index activity is known.
    #[serde(deserialize_with = "http::nullable")]
    pub index_activity_available: bool,
    /// Per supplier.
    #[serde(deserialize_with = "http::nullable")]
    pub suppliers: Vec<SupplierStatus>,
    /// Per source.
    #[serde(deserialize_with = "http::nullable")]
    pub sources: Vec<SourceStatus>,
}

/// The body of a refused request: `{code, error}`.
#[derive(Deserialize)]
pub(super) struct ErrorBody {
    #[serde(default)]
    pub(super) code: Option<String>,
    #[serde(default)]
    pub(super) error: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_tolerate_nulls_missing_and_unknown_fields() {
        let page: SearchPage = serde_json::from_str(
            r#"{"results":[{"entityId":"d:1","title":null,"matchedPage":null,"extra":1}],"totalCount":1,"newField":true}"#,
        )
        .unwrap();
        assert_eq!(page.results[0].entity_id, "d:1");
        assert_eq!(page.results[0].title, "");
        assert!(!page.has_more);
        let entity: Entity = serde_json::from_str(r#"{"agenda":[{"id":3,"number":1,"documents":null}]}"#).unwrap();
        assert_eq!(
            (entity.agenda[0].id.as_str(), entity.agenda[0].number.as_str()),
            ("3", "1")
        );
    }
}
