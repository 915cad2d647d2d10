//! OpenBesluitvorming client (PLATFORMS.md §2): search, entity detail with full text,
//! the source list and the load status ("Laadstatus").
//!
//! Invariants:
//! - Search parameters are checked before anything is sent, by the platform's own rules
//!   and with its own error codes ([`SearchParams::validate`]), so a call that the
//!   platform would refuse never spends units of its limit.
//! - Every answer comes with the [`RateInfo`] the platform sent (`RateLimit-*` headers),
//!   which is what the scheduler should trust; [`search_cost`] is only the estimate
//!   made before a call.
//! - Platform errors are mapped by their machine `code`, never by the Dutch text.
//! - Models accept missing and unknown fields: a field the platform adds or drops does
//!   not break reading.
//!
//! What this module does not do: wait for room in the limit (the scheduler does),
//! retry a 429, cache, or use the export feeds, the PDF page renderer or the raw
//! search endpoint.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use besluitbron_core::{PlatformId, Units};
use reqwest::Url;
use serde::{Deserialize, Deserializer};

use super::http::{self, HttpConfig, PlatformError, PlatformHttp, Refusal, RefusalFormat};

/// Errors of the OpenBesluitvorming client (the shared platform error type).
pub type ObvError = PlatformError;

const PLATFORM: PlatformId = PlatformId::Obv;

/// The `limit` of a search when none is given.
pub const DEFAULT_LIMIT: u32 = 24;
/// The largest `limit` the platform accepts.
pub const MAX_LIMIT: u32 = 100;

/// What a search costs as the platform counts it (code of 2026-08-21):
/// `max(1, ceil(limit / 24))` units, so `limit=100` costs 5. Every other call costs 1.
///
/// A later revision of the platform's documentation names a cheaper formula; the
/// scheduler should correct this estimate from [`RateInfo::remaining`].
pub fn search_cost(limit: u32) -> Units {
    Units::whole(u64::from(limit.div_ceil(24).max(1)))
}

/// The cost of any call other than a search.
pub const OTHER_CALL_COST: Units = Units::ONE;

/// The platform's view of the caller's limit, from the `RateLimit-*` headers of an answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateInfo {
    /// `RateLimit-Limit`: units per minute.
    pub limit: Option<Units>,
    /// `RateLimit-Remaining`: whole units left (the platform rounds down).
    pub remaining: Option<Units>,
    /// `RateLimit-Reset`: time until the bucket is full again.
    pub reset: Option<Duration>,
}

impl RateInfo {
    /// Reads the headers; a missing or unreadable header is `None`.
    pub fn from_headers(headers: &reqwest::header::HeaderMap) -> RateInfo {
        let units = |name: &str| {
            headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| Units::from_decimal_str(v).ok())
        };
        RateInfo {
            limit: units("ratelimit-limit"),
            remaining: units("ratelimit-remaining"),
            reset: http::header_u64(headers, "ratelimit-reset").map(Duration::from_secs),
        }
    }
}

/// Kinds of entity a search can be restricted to.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum EntityType {
    /// A meeting (recordings match as their meeting).
    Meeting,
    /// A document.
    Document,
    /// A motion.
    Motion,
    /// A recording.
    Recording,
}

impl EntityType {
    /// The name the platform uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            EntityType::Meeting => "Meeting",
            EntityType::Document => "Document",
            EntityType::Motion => "Motion",
            EntityType::Recording => "Recording",
        }
    }
}

impl FromStr for EntityType {
    type Err = ObvError;
    fn from_str(s: &str) -> Result<EntityType, ObvError> {
        by_name(
            &[
                EntityType::Meeting,
                EntityType::Document,
                EntityType::Motion,
                EntityType::Recording,
            ],
            EntityType::as_str,
            s,
            "unknown_entity_type",
        )
    }
}

/// Orders a search can be sorted in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SortOrder {
    /// Newest first (the platform's default).
    #[default]
    DateDesc,
    /// Oldest first.
    DateAsc,
    /// By title.
    TitleAsc,
    /// Best match first.
    Relevance,
}

impl SortOrder {
    /// The name the platform uses.
    pub const fn as_str(self) -> &'static str {
        match self {
            SortOrder::DateDesc => "date_desc",
            SortOrder::DateAsc => "date_asc",
            SortOrder::TitleAsc => "title_asc",
            SortOrder::Relevance => "relevance",
        }
    }
}

impl FromStr for SortOrder {
    type Err = ObvError;
    fn from_str(s: &str) -> Result<SortOrder, ObvError> {
        by_name(
            &[
                SortOrder::DateDesc,
                SortOrder::DateAsc,
                SortOrder::TitleAsc,
                SortOrder::Relevance,
            ],
            SortOrder::as_str,
            s,
            "unknown_sort",
        )
    }
}

/// The value among `all` whose platform name is `s`, or the platform's error `code`
/// listing the names it accepts.
fn by_name<T: Copy>(all: &[T], name: fn(T) -> &'static str, s: &str, code: &str) -> Result<T, ObvError> {
    all.iter().copied().find(|v| name(*v) == s).ok_or_else(|| {
        let names: Vec<&str> = all.iter().map(|v| name(*v)).collect();
        let (last, rest) = names.split_last().expect("a non-empty list of names");
        bad_request(code, format!("`{s}` is not {} or {last}", rest.join(", ")))
    })
}

impl fmt::Display for SortOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

fn bad_request(code: &str, message: String) -> ObvError {
    PlatformError::BadRequest {
        platform: PLATFORM,
        code: code.to_owned(),
        message,
    }
}

/// A search (`GET /api/search`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchParams {
    /// Free text: words are ANDed, `"phrases"` allowed, `"a b"~n` refused.
    pub query: Option<String>,
    /// A source key from [`ObvClient::sources`] (case-sensitive).
    pub organization: Option<String>,
    /// Restrict to one kind of entity.
    pub entity_type: Option<EntityType>,
    /// Order of the hits.
    pub sort: SortOrder,
    /// First day, `YYYY-MM-DD`.
    pub date_from: Option<String>,
    /// Last day (inclusive), `YYYY-MM-DD`.
    pub date_to: Option<String>,
    /// Hits to skip.
    pub offset: u32,
    /// Hits per page, 1..=100.
    pub limit: u32,
}

impl Default for SearchParams {
    fn default() -> SearchParams {
        SearchParams {
            query: None,
            organization: None,
            entity_type: None,
            sort: SortOrder::DateDesc,
            date_from: None,
            date_to: None,
            offset: 0,
            limit: DEFAULT_LIMIT,
        }
    }
}

impl SearchParams {
    /// A search for `query` with the defaults.
    pub fn query(query: impl Into<String>) -> SearchParams {
        SearchParams {
            query: Some(query.into()),
            ..SearchParams::default()
        }
    }

    /// Checks the parameters by the platform's rules, returning its error code on failure.
    pub fn validate(&self) -> Result<(), ObvError> {
        if !(1..=MAX_LIMIT).contains(&self.limit) {
            return Err(bad_request(
                "invalid_limit",
                format!("limit {} is not between 1 and 100", self.limit),
            ));
        }
        for date in [&self.date_from, &self.date_to].into_iter().flatten() {
            if !http::is_iso_date(date) {
                return Err(bad_request(
                    "invalid_date",
                    format!("`{date}` is not a date written YYYY-MM-DD"),
                ));
            }
        }
        let query = self.query.as_deref().map(str::trim).unwrap_or("");
        if has_phrase_slop(query) {
            return Err(bad_request(
                "unsupported_phrase_slop",
                "a proximity search (\"a b\"~n) is not supported; use a plain phrase".into(),
            ));
        }
        let has_organization = self.organization.as_deref().is_some_and(|o| !o.is_empty());
        if query.is_empty() && !has_organization {
            return Err(bad_request(
                "missing_query",
                "give a query, an organization, or both".into(),
            ));
        }
        Ok(())
    }

    /// What this search costs at the platform.
    pub fn cost(&self) -> Units {
        search_cost(self.limit)
    }
}

/// True when a closing quote is directly followed by `~`.
fn has_phrase_slop(query: &str) -> bool {
    let mut inside = false;
    let mut chars = query.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '"' {
            if inside && chars.peek() == Some(&'~') {
                return true;
            }
            inside = !inside;
        }
    }
    false
}

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

#[derive(Deserialize)]
struct SourcesBody {
    #[serde(default, deserialize_with = "http::nullable")]
    sources: Vec<Source>,
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

#[derive(Deserialize)]
struct ErrorBody {
    #[serde(default)]
    code: Option<String>,
    #[serde(default)]
    error: Option<String>,
}

/// The OpenBesluitvorming client.
#[derive(Debug)]
pub struct ObvClient {
    http: PlatformHttp,
    base: Url,
}

impl ObvClient {
    /// A client for the platform at `base_url` (e.g. `https://openbesluitvorming.nl`).
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<ObvClient, ObvError> {
        Ok(ObvClient {
            http: PlatformHttp::new(PLATFORM, config, "application/json")?,
            base: http::parse_base_url(PLATFORM, base_url)?,
        })
    }

    /// Searches (`GET /api/search`); costs [`search_cost`] of the limit.
    pub async fn search(&self, params: &SearchParams) -> Result<(SearchPage, RateInfo), ObvError> {
        params.validate()?;
        let mut url = http::join(PLATFORM, &self.base, "api/search")?;
        {
            let mut q = url.query_pairs_mut();
            if let Some(query) = params.query.as_deref().map(str::trim).filter(|q| !q.is_empty()) {
                q.append_pair("query", query);
            }
            if let Some(org) = params.organization.as_deref().filter(|o| !o.is_empty()) {
                q.append_pair("organization", org);
            }
            if let Some(t) = params.entity_type {
                q.append_pair("entityType", t.as_str());
            }
            q.append_pair("sort", params.sort.as_str());
            if let Some(d) = &params.date_from {
                q.append_pair("dateFrom", d);
            }
            if let Some(d) = &params.date_to {
                q.append_pair("dateTo", d);
            }
            q.append_pair("offset", &params.offset.to_string());
            q.append_pair("limit", &params.limit.to_string());
        }
        self.fetch(url, "search results").await
    }

    /// One entity with its full text or agenda (`GET /api/entities/{id}`); costs 1.
    pub async fn entity(&self, entity_id: &str) -> Result<(Entity, RateInfo), ObvError> {
        if entity_id.trim().is_empty() {
            return Err(bad_request("entity_not_found", "an entity id is required".into()));
        }
        let url = http::join(
            PLATFORM,
            &self.base,
            &format!("api/entities/{}", http::encode_segment(entity_id)),
        )?;
        self.fetch(url, &format!("entity `{entity_id}`")).await
    }

    /// All sources (`GET /api/sources`), in the platform's order; costs 1.
    pub async fn sources(&self) -> Result<(Vec<Source>, RateInfo), ObvError> {
        let url = http::join(PLATFORM, &self.base, "api/sources")?;
        let (body, rate): (SourcesBody, RateInfo) = self.fetch(url, "source list").await?;
        Ok((body.sources, rate))
    }

    /// The load status per supplier and source (`GET /api/status`); costs 1.
    pub async fn status(&self) -> Result<(Status, RateInfo), ObvError> {
        let url = http::join(PLATFORM, &self.base, "api/status")?;
        self.fetch(url, "load status").await
    }

    async fn fetch<T: serde::de::DeserializeOwned>(&self, url: Url, what: &str) -> Result<(T, RateInfo), ObvError> {
        let fetched = self.http.get(url).await?;
        let rate = RateInfo::from_headers(&fetched.headers);
        Ok((http::read_json(PLATFORM, &fetched, what, &REFUSALS)?, rate))
    }
}

/// How OpenBesluitvorming explains a 400: `{code, error}`; code `bad_request` when the
/// body names none.
const REFUSALS: RefusalFormat = RefusalFormat {
    default_code: "bad_request",
    read: read_refusal,
};

fn read_refusal(body: &[u8]) -> Option<Refusal> {
    let ErrorBody { code, error } = serde_json::from_slice(body).ok()?;
    Some(Refusal { code, message: error })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(params: SearchParams) -> Option<String> {
        match params.validate() {
            Ok(()) => None,
            Err(PlatformError::BadRequest { code, .. }) => Some(code),
            Err(other) => panic!("unexpected {other:?}"),
        }
    }

    #[test]
    fn search_cost_follows_the_platform_code() {
        let costs: Vec<u64> = [1, 24, 25, 48, 49, 100]
            .iter()
            .map(|&l| search_cost(l).as_milli() / 1000)
            .collect();
        assert_eq!(costs, [1, 1, 2, 2, 3, 5]);
    }

    #[test]
    fn validation_uses_the_platform_codes() {
        let ok = SearchParams::query("stikstof");
        assert_eq!(code(ok.clone()), None);
        assert_eq!(
            code(SearchParams { limit: 0, ..ok.clone() }).as_deref(),
            Some("invalid_limit")
        );
        assert_eq!(
            code(SearchParams {
                limit: 101,
                ..ok.clone()
            })
            .as_deref(),
            Some("invalid_limit")
        );
        assert_eq!(
            code(SearchParams {
                limit: 100,
                ..ok.clone()
            }),
            None
        );
        let bad_date = SearchParams {
            date_from: Some("2024-02-30".into()),
            ..ok.clone()
        };
        assert_eq!(code(bad_date).as_deref(), Some("invalid_date"));
        assert_eq!(
            code(SearchParams::query("\"a b\"~10")).as_deref(),
            Some("unsupported_phrase_slop")
        );
        assert_eq!(code(SearchParams::query("\"a b\" ~ c")), None);
        assert_eq!(code(SearchParams::default()).as_deref(), Some("missing_query"));
        let org_only = SearchParams {
            organization: Some("gemeente-soest".into()),
            ..SearchParams::default()
        };
        assert_eq!(code(org_only), None);
    }

    #[test]
    fn entity_types_and_sorts_parse_only_the_four_names() {
        assert_eq!("Motion".parse::<EntityType>().unwrap(), EntityType::Motion);
        assert!(
            matches!("motion".parse::<EntityType>(), Err(PlatformError::BadRequest { code, .. }) if code == "unknown_entity_type")
        );
        assert_eq!("relevance".parse::<SortOrder>().unwrap(), SortOrder::Relevance);
        assert!(
            matches!("newest".parse::<SortOrder>(), Err(PlatformError::BadRequest { code, .. }) if code == "unknown_sort")
        );
    }

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

    #[test]
    fn rate_info_reads_the_three_headers() {
        let mut h = reqwest::header::HeaderMap::new();
        h.insert("ratelimit-limit", "60".parse().unwrap());
        h.insert("ratelimit-remaining", "55".parse().unwrap());
        h.insert("ratelimit-reset", "5".parse().unwrap());
        assert_eq!(
            RateInfo::from_headers(&h),
            RateInfo {
                limit: Some(Units::whole(60)),
                remaining: Some(Units::whole(55)),
                reset: Some(Duration::from_secs(5)),
            }
        );
        assert_eq!(RateInfo::from_headers(&Default::default()), RateInfo::default());
    }
}
