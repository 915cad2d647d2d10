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
//! - Models (`wire.rs`) accept missing and unknown fields: a field the platform adds or
//!   drops does not break reading.
//!
//! What this module does not do: wait for room in the limit (the scheduler does),
//! retry a 429, cache, or use the export feeds, the PDF page renderer or the raw
//! search endpoint.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use besluitbron_core::{LimitConfig, Platform, PlatformId, Service, ServiceId, Units};
use reqwest::Url;

use super::http::{self, Asked, HttpConfig, PlatformError, PlatformHttp, Refusal, RefusalFormat};

mod wire;

pub use wire::{
    AgendaDocument, AgendaItem, Coverage, Entity, MeetingMotion, MotionDetail, Recording, SearchHit, SearchPage,
    Segment, Source, SourceStatus, Status, Successor, SupplierStatus, Tally, Vote,
};
use wire::{ErrorBody, SourcesBody};

/// The day of a date as the platform writes it (`31 augustus 2026`: day, month name,
/// year, in Europe/Amsterdam, as its `formatDate` writes them with `nl-NL`) as
/// `YYYY-MM-DD`; `None` for anything else (`Datum onbekend`, a form it does not use).
/// The day is read from the text, not from `sortDate`, which is UTC and names the day
/// before for anything after midnight in the Netherlands.
pub fn iso_day(date: &str) -> Option<String> {
    const MONTHS: [&str; 12] = [
        "januari",
        "februari",
        "maart",
        "april",
        "mei",
        "juni",
        "juli",
        "augustus",
        "september",
        "oktober",
        "november",
        "december",
    ];
    let mut words = date.split_whitespace();
    let (day, month, year) = (words.next()?, words.next()?, words.next()?);
    let digits = |s: &str| s.bytes().all(|c| c.is_ascii_digit());
    if words.next().is_some() || day.len() > 2 || year.len() != 4 || !digits(day) || !digits(year) {
        return None;
    }
    let day: u32 = day.parse().ok()?;
    let year: i32 = year.parse().ok()?;
    let month = MONTHS.iter().position(|m| m.eq_ignore_ascii_case(month))? + 1;
    crate::calendar::ymd(year, month as u32, day)
}

/// Errors of the OpenBesluitvorming client (the shared platform error type).
pub type ObvError = PlatformError;

/// The upstream service its connector calls, with the limit BesluitBron keeps there by
/// default: 60 units refilled at one per second: what the platform enforces.
pub const SERVICE: ServiceId = ServiceId::of(&Service {
    id: "obv",
    name: "OpenBesluitvorming's API (openbesluitvorming.nl)",
    limit: Some(LimitConfig::new(Units::whole(60), Duration::from_secs(60))),
    max_in_flight: None,
});

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "obv",
    name: "OpenBesluitvorming",
});

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
        sent: false,
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
            if !crate::calendar::is_day(date) {
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
        self.fetch(url, Asked::Listing).await
    }

    /// One entity with its full text or agenda (`GET /api/entities/{id}`); costs 1.
    pub async fn entity(&self, entity_id: &str) -> Result<(Entity, RateInfo), ObvError> {
        if entity_id.trim().is_empty() {
            return Err(bad_request("entity_not_found", "an entity id is required".into()));
        }
        let segment = http::path_segment(PLATFORM, entity_id)?;
        let url = http::join(PLATFORM, &self.base, &format!("api/entities/{segment}"))?;
        let what = format!("entity `{}`", http::brief(entity_id));
        self.fetch(url, Asked::Record(&what)).await
    }

    /// All sources (`GET /api/sources`), in the platform's order; costs 1.
    pub async fn sources(&self) -> Result<(Vec<Source>, RateInfo), ObvError> {
        let url = http::join(PLATFORM, &self.base, "api/sources")?;
        let (body, rate): (SourcesBody, RateInfo) = self.fetch(url, Asked::Listing).await?;
        Ok((body.sources, rate))
    }

    /// The load status per supplier and source (`GET /api/status`); costs 1.
    pub async fn status(&self) -> Result<(Status, RateInfo), ObvError> {
        let url = http::join(PLATFORM, &self.base, "api/status")?;
        self.fetch(url, Asked::Listing).await
    }

    async fn fetch<T: serde::de::DeserializeOwned>(
        &self,
        url: Url,
        asked: Asked<'_>,
    ) -> Result<(T, RateInfo), ObvError> {
        let fetched = self.http.get(url).await?;
        let rate = RateInfo::from_headers(&fetched.headers);
        Ok((http::read_json(PLATFORM, &fetched, asked, &REFUSALS)?, rate))
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

/// Reads `fetched` as each answer OpenBesluitvorming gives (search page, entity, source
/// list, load status): how many of them it is. The fuzz targets' entry point; never
/// panics, whatever `fetched` holds.
#[doc(hidden)]
pub fn read_every_answer(fetched: &http::Fetched) -> usize {
    let read = |ok: bool| usize::from(ok);
    read(http::read_json::<SearchPage>(PLATFORM, fetched, "search results", &REFUSALS).is_ok())
        + read(http::read_json::<Entity>(PLATFORM, fetched, "entity", &REFUSALS).is_ok())
        + read(http::read_json::<SourcesBody>(PLATFORM, fetched, "source list", &REFUSALS).is_ok())
        + read(http::read_json::<Status>(PLATFORM, fetched, "load status", &REFUSALS).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_date_as_the_platform_writes_it_reads_as_its_day() {
        // The form of web/search_api.ts `formatDate` (nl-NL, day numeric, month long).
        assert_eq!(iso_day("31 augustus 2026").as_deref(), Some("2026-08-31"));
        assert_eq!(iso_day("1 maart 2025").as_deref(), Some("2025-03-01"));
        assert_eq!(iso_day(" 9 December 2024 ").as_deref(), Some("2024-12-09"));
        for other in [
            "Datum onbekend",
            "31 februari 2026",
            "2026-08-31",
            "augustus 2026",
            "31 aug 2026",
            "",
        ] {
            assert_eq!(iso_day(other), None, "{other}");
        }
    }

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
