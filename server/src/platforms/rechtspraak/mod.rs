//! Rechtspraak open-data client (PLATFORMS.md §6, §10.2): the search feed
//! (`/uitspraken/zoeken`), one ruling's metadata and text (`/uitspraken/content`), and
//! the value lists of courts, areas of law and procedures (`/Waardelijst/…`).
//!
//! Invariants:
//! - Only the parameters the service honours are ever sent: a search is an [`RsSearch`],
//!   and [`search_url`] writes only [`SearchParam`]s. The service silently ignores any
//!   other parameter and then answers with the whole corpus, so there is no way to add
//!   one (no `q=`: the service has no keyword search).
//! - `from` is 0-based and `max` is a [`PageSize`] of 1 to [`MAX_PAGE`] (1000): a day
//!   with more rulings is paged through with `from`.
//! - Query strings are built only with the URL's query API, so an area's `#` goes out
//!   as `%23` and an identifier's space as `+`.
//! - Failures that look like success are failures: a redirect to the `mededeling`
//!   notice page (for a ruling: [`PlatformError::NotFound`]), an HTML page or any body
//!   that is not the XML asked for with status 200 ([`PlatformError::Garbage`]). None
//!   of them is a success, so none is kept.
//! - An ECLI is checked ([`Ecli::parse`]) before it is sent, and goes out as a query
//!   value, never as a path.
//!
//! What this module does not do: the website's unofficial `api/zoek` (the only keyword
//! search; it needs a browser's disguise, and BesluitBron never pretends to be one),
//! images (`/uitspraken/image`), or decide when a call may go (the fair queue keeps the
//! limit configured for `rechtspraak`).

mod body;
mod wire;
pub mod xml;

use reqwest::Url;
use reqwest::header;

use super::http::{self, Fetched, HttpConfig, PlatformError, PlatformHttp, RefusalFormat};
use std::time::Duration;

use besluitbron_core::{LimitConfig, Platform, PlatformId, Service, ServiceId, Units};

pub use body::{BodyText, render as render_body};
pub use wire::{
    Area, Court, Feed, FeedEntry, Labeled, LawReference, Procedure, Reference, Relation, Ruling, RulingText,
    law_reference, parse_areas, parse_courts, parse_feed, parse_procedures, parse_ruling,
};

/// Errors of the Rechtspraak client (the shared platform error type).
pub type RsError = PlatformError;

/// The upstream service its connector calls, with the limit BesluitBron keeps there by
/// default: "Don't hammer": 60 calls refilled at two per second.
pub const SERVICE: ServiceId = ServiceId::of(&Service {
    id: "rechtspraak",
    name: "Rechtspraak's open data service (data.rechtspraak.nl)",
    limit: Some(LimitConfig::new(Units::whole(60), Duration::from_secs(30))),
    max_in_flight: None,
});

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "rechtspraak",
    name: "Rechtspraak",
});

/// The most rulings one page of the search feed holds (the service's maximum `max`).
pub const MAX_PAGE: u32 = 1000;

/// The search parameters the service honours — the only names [`search_url`] writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SearchParam {
    /// `type`: `Uitspraak` or `Conclusie`.
    Type,
    /// `creator`: a court's identifier.
    Creator,
    /// `subject`: an area of law's identifier.
    Subject,
    /// `date`: once a day, twice a range.
    Date,
    /// `modified`: once "since", twice a range.
    Modified,
    /// `return=DOC`: only ECLIs that have a text.
    Return,
    /// `replaces`: an old LJN.
    Replaces,
    /// `max`: the page size.
    Max,
    /// `from`: the 0-based offset.
    From,
    /// `sort`: `ASC` or `DESC` on the modified date.
    Sort,
}

impl SearchParam {
    /// Every honoured parameter.
    pub const ALL: [SearchParam; 10] = [
        SearchParam::Type,
        SearchParam::Creator,
        SearchParam::Subject,
        SearchParam::Date,
        SearchParam::Modified,
        SearchParam::Return,
        SearchParam::Replaces,
        SearchParam::Max,
        SearchParam::From,
        SearchParam::Sort,
    ];

    /// The name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            SearchParam::Type => "type",
            SearchParam::Creator => "creator",
            SearchParam::Subject => "subject",
            SearchParam::Date => "date",
            SearchParam::Modified => "modified",
            SearchParam::Return => "return",
            SearchParam::Replaces => "replaces",
            SearchParam::Max => "max",
            SearchParam::From => "from",
            SearchParam::Sort => "sort",
        }
    }
}

/// `Uitspraak` (a judgment) or `Conclusie` (an advocate general's opinion).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RulingType {
    /// A judgment.
    Uitspraak,
    /// An opinion of the advocate general (Parket bij de Hoge Raad, Raad van State …).
    Conclusie,
}

impl RulingType {
    /// The value on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            RulingType::Uitspraak => "Uitspraak",
            RulingType::Conclusie => "Conclusie",
        }
    }

    /// Reads `Uitspraak` or `Conclusie` (any case).
    pub fn parse(text: &str) -> Option<RulingType> {
        match text.trim().to_ascii_lowercase().as_str() {
            "uitspraak" => Some(RulingType::Uitspraak),
            "conclusie" => Some(RulingType::Conclusie),
            _ => None,
        }
    }
}

/// The order of the feed: on the modified date, the only order the service offers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Sort {
    /// Most recently modified first (`DESC`).
    #[default]
    NewestFirst,
    /// Least recently modified first (`ASC`, the service's default).
    OldestFirst,
}

impl Sort {
    /// The value on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Sort::NewestFirst => "DESC",
            Sort::OldestFirst => "ASC",
        }
    }
}

/// A page size of 1 to [`MAX_PAGE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct PageSize(u32);

impl PageSize {
    /// `n` capped to 1..=[`MAX_PAGE`].
    pub fn clamped(n: u32) -> PageSize {
        PageSize(n.clamp(1, MAX_PAGE))
    }

    /// The size.
    pub fn get(self) -> u32 {
        self.0
    }
}

/// A day, `YYYY-MM-DD`, checked to exist.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Day(String);

impl Day {
    /// `text` when it names a real calendar day.
    pub fn parse(text: &str) -> Option<Day> {
        let text = text.trim();
        crate::calendar::is_day(text).then(|| Day(text.to_owned()))
    }

    /// The day as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A moment, `YYYY-MM-DDThh:mm:ss` (a bare day means its start).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Moment(String);

impl Moment {
    /// `text` as `YYYY-MM-DD` or `YYYY-MM-DDThh:mm:ss`, checked.
    pub fn parse(text: &str) -> Option<Moment> {
        let text = text.trim();
        let (day, time) = match text.split_once('T') {
            Some((d, t)) => (d, t),
            None => (text, "00:00:00"),
        };
        let t = time.as_bytes();
        let time_ok = t.len() == 8
            && t[2] == b':'
            && t[5] == b':'
            && [0, 1, 3, 4, 6, 7].iter().all(|&i| t[i].is_ascii_digit())
            && time[0..2] < *"24"
            && time[3..5] < *"60"
            && time[6..8] < *"60";
        (crate::calendar::is_day(day) && time_ok).then(|| Moment(format!("{day}T{time}")))
    }

    /// The moment as sent.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The earliest and latest days a one-sided range is closed with (the service reads one
/// `date` as that single day, so "from" alone needs an end).
pub const OPEN_RANGE: (&str, &str) = ("1800-01-01", "9999-12-31");

/// A search of the feed. Every field maps to exactly one honoured [`SearchParam`].
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct RsSearch {
    /// `type` (empty: both).
    pub types: Vec<RulingType>,
    /// `creator`: court identifiers (repeated: any of them).
    pub creators: Vec<String>,
    /// `subject`: area identifiers (repeated: any of them).
    pub subjects: Vec<String>,
    /// First decision day.
    pub date_from: Option<Day>,
    /// Last decision day (inclusive).
    pub date_to: Option<Day>,
    /// Modified since.
    pub modified_since: Option<Moment>,
    /// Only ECLIs that have a text (`return=DOC`).
    pub with_text: bool,
    /// `replaces`: an old LJN.
    pub replaces: Option<String>,
    /// The order.
    pub sort: Sort,
    /// `from`: 0-based.
    pub from: u32,
    /// `max`; `None` is the service's default (1000).
    pub max: Option<PageSize>,
}

/// The query of `search`, as honoured parameters and their values, in a fixed order.
pub fn search_pairs(search: &RsSearch) -> Vec<(SearchParam, String)> {
    let mut pairs = Vec::new();
    for t in &search.types {
        pairs.push((SearchParam::Type, t.as_str().to_owned()));
    }
    for c in &search.creators {
        pairs.push((SearchParam::Creator, c.clone()));
    }
    for s in &search.subjects {
        pairs.push((SearchParam::Subject, s.clone()));
    }
    match (&search.date_from, &search.date_to) {
        (None, None) => {}
        (from, to) => {
            let from = from.as_ref().map_or(OPEN_RANGE.0, Day::as_str);
            let to = to.as_ref().map_or(OPEN_RANGE.1, Day::as_str);
            pairs.push((SearchParam::Date, from.to_owned()));
            pairs.push((SearchParam::Date, to.to_owned()));
        }
    }
    if let Some(m) = &search.modified_since {
        pairs.push((SearchParam::Modified, m.as_str().to_owned()));
    }
    if search.with_text {
        pairs.push((SearchParam::Return, "DOC".to_owned()));
    }
    if let Some(r) = &search.replaces {
        pairs.push((SearchParam::Replaces, r.clone()));
    }
    pairs.push((SearchParam::Sort, search.sort.as_str().to_owned()));
    pairs.push((SearchParam::From, search.from.to_string()));
    if let Some(max) = search.max {
        pairs.push((SearchParam::Max, max.get().to_string()));
    }
    pairs
}

/// The URL of `search` on `base`: `{base}/uitspraken/zoeken?…`, with only honoured
/// parameters ([`search_pairs`]), each value encoded by the URL's query API.
pub fn search_url(base: &Url, search: &RsSearch) -> Result<Url, RsError> {
    let url = http::join(PLATFORM, base, "uitspraken/zoeken")?;
    Ok(http::with_query(
        url,
        search_pairs(search).into_iter().map(|(k, v)| (k.as_str(), v)),
    ))
}

/// A checked ECLI: `ECLI:` country `:` court code `:` year `:` ordinal, upper case.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Ecli(String);

/// Longest ECLI accepted (the standard allows 64 characters).
pub const MAX_ECLI_LEN: usize = 64;

impl Ecli {
    /// `text` as an ECLI (`ECLI:NL:HR:2026:1234`; case and surrounding space ignored).
    pub fn parse(text: &str) -> Option<Ecli> {
        let text = text.trim();
        if text.len() > MAX_ECLI_LEN {
            return None;
        }
        let upper = text.to_ascii_uppercase();
        let parts: Vec<&str> = upper.split(':').collect();
        let ok = parts.len() == 5
            && parts[0] == "ECLI"
            && parts[1].len() == 2
            && parts[1].bytes().all(|b| b.is_ascii_uppercase())
            && (1..=7).contains(&parts[2].len())
            && parts[2].bytes().all(|b| b.is_ascii_alphanumeric())
            && parts[3].len() == 4
            && parts[3].bytes().all(|b| b.is_ascii_digit())
            && (1..=25).contains(&parts[4].len())
            && parts[4].bytes().all(|b| b.is_ascii_alphanumeric() || b == b'.');
        ok.then_some(Ecli(upper))
    }

    /// The ECLI.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The value lists the service publishes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ValueList {
    /// `Instanties`: courts.
    Courts,
    /// `Rechtsgebieden`: areas of law.
    Areas,
    /// `Proceduresoorten`: kinds of procedure.
    Procedures,
}

impl ValueList {
    /// The list's name in its path.
    pub const fn path_name(self) -> &'static str {
        match self {
            ValueList::Courts => "Instanties",
            ValueList::Areas => "Rechtsgebieden",
            ValueList::Procedures => "Proceduresoorten",
        }
    }
}

/// The Rechtspraak open-data client.
#[derive(Debug)]
pub struct RsClient {
    http: PlatformHttp,
    base: Url,
}

impl RsClient {
    /// A client for the service at `base_url` (e.g. `https://data.rechtspraak.nl`).
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<RsClient, RsError> {
        Ok(RsClient {
            http: PlatformHttp::new(PLATFORM, config, "application/xml, application/atom+xml;q=0.9")?,
            base: http::parse_base_url(PLATFORM, base_url)?,
        })
    }

    /// The base URL.
    pub fn base(&self) -> &Url {
        &self.base
    }

    /// One page of the search feed.
    pub async fn search(&self, search: &RsSearch) -> Result<Feed, RsError> {
        let url = search_url(&self.base, search)?;
        self.feed(url).await
    }

    /// Reads a feed at `url` (any `zoeken` URL).
    async fn feed(&self, url: Url) -> Result<Feed, RsError> {
        let fetched = self.http.get(url).await?;
        let body = self.xml_body(&fetched, "search", false)?;
        parse_feed(body).map_err(|e| garbage(format!("the search feed could not be read: {e}")))
    }

    /// One ruling: its metadata, and its text unless `metadata_only`.
    pub async fn ruling(&self, ecli: &Ecli, metadata_only: bool) -> Result<Ruling, RsError> {
        let mut url = http::join(PLATFORM, &self.base, "uitspraken/content")?;
        url = http::with_query(url, [("id", ecli.as_str())]);
        if metadata_only {
            url = http::with_query(url, [("return", "META")]);
        }
        let fetched = self.http.get(url).await?;
        let what = format!("published ruling {}", ecli.as_str());
        let body = self.xml_body(&fetched, &what, true)?;
        let ruling = parse_ruling(body).map_err(|e| garbage(format!("the ruling could not be read: {e}")))?;
        if !ruling.ecli.eq_ignore_ascii_case(ecli.as_str()) {
            return Err(garbage(format!(
                "asked for {} and got {}",
                ecli.as_str(),
                ruling.ecli.chars().take(80).collect::<String>()
            )));
        }
        Ok(ruling)
    }

    /// The courts (`/Waardelijst/Instanties`).
    pub async fn courts(&self) -> Result<Vec<Court>, RsError> {
        let body = self.value_list(ValueList::Courts).await?;
        parse_courts(&body).map_err(|e| garbage(format!("the courts list could not be read: {e}")))
    }

    /// The areas of law (`/Waardelijst/Rechtsgebieden`), nested areas flattened.
    pub async fn areas(&self) -> Result<Vec<Area>, RsError> {
        let body = self.value_list(ValueList::Areas).await?;
        parse_areas(&body).map_err(|e| garbage(format!("the areas list could not be read: {e}")))
    }

    /// The kinds of procedure (`/Waardelijst/Proceduresoorten`).
    pub async fn procedures(&self) -> Result<Vec<Procedure>, RsError> {
        let body = self.value_list(ValueList::Procedures).await?;
        parse_procedures(&body).map_err(|e| garbage(format!("the procedures list could not be read: {e}")))
    }

    async fn value_list(&self, list: ValueList) -> Result<Vec<u8>, RsError> {
        let url = http::join(PLATFORM, &self.base, &format!("Waardelijst/{}", list.path_name()))?;
        let fetched = self.http.get(url).await?;
        let what = format!("value list {}", list.path_name());
        self.xml_body(&fetched, &what, false).map(<[u8]>::to_vec)
    }

    /// The XML body of a successful answer; everything else is an error, including the
    /// failures that look like success (see the module invariants). `record` says
    /// whether the answer is about one record, so a notice-page redirect means "no such
    /// record".
    fn xml_body<'a>(&self, fetched: &'a Fetched, what: &str, record: bool) -> Result<&'a [u8], RsError> {
        let location = fetched
            .headers
            .get(header::LOCATION)
            .and_then(|l| l.to_str().ok())
            .unwrap_or("");
        if is_notice_page(location) || is_notice_page(fetched.url.as_str()) {
            return Err(if record {
                PlatformError::NotFound {
                    platform: PLATFORM,
                    what: format!("{what} (it sent its \"mededeling\" notice page instead)"),
                }
            } else {
                garbage(format!("it sent its \"mededeling\" notice page instead of the {what}"))
            });
        }
        if !fetched.status.is_success() {
            return Err(http::status_error(PLATFORM, fetched, what, &RefusalFormat::OPAQUE));
        }
        if !fetched.is_xml() {
            let content_type = fetched.content_type().unwrap_or("no content type");
            let kind = if fetched.looks_like_html() {
                "an HTML page"
            } else {
                "not XML"
            };
            return Err(garbage(format!(
                "a 200 answer that is {kind} ({content_type}) instead of the {what}"
            )));
        }
        Ok(&fetched.body)
    }
}

/// True for the notice page the service redirects errors to
/// (`https://mededeling.rechtspraak.nl/404`, or a `/mededeling` path).
pub fn is_notice_page(url: &str) -> bool {
    let lower = url.to_ascii_lowercase();
    let after_scheme = lower.split_once("://").map_or(lower.as_str(), |(_, rest)| rest);
    let host = after_scheme.split(['/', '?', '#']).next().unwrap_or("");
    host.starts_with("mededeling.") || after_scheme.contains("/mededeling")
}

fn garbage(detail: String) -> PlatformError {
    PlatformError::Garbage {
        platform: PLATFORM,
        detail,
    }
}

#[cfg(test)]
mod tests;
