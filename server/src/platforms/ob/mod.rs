//! Officiële Bekendmakingen client (PLATFORMS.md §5 and §10.1): searches over SRU 2.0 at
//! `https://repository.overheid.nl/sru` with a built CQL query ([`cql`]), one
//! publication's record by its identifier, and its text renditions from the same host.
//!
//! Invariants:
//! - Every search sends `operation=searchRetrieve&version=2.0&recordSchema=gzd` with
//!   `Accept: application/xml` (the service negotiates content and answers JSON to a
//!   client that asks for it), `startRecord` 1-based, `maximumRecords` at most
//!   [`MAX_LIMIT`]; a `startRecord` of [`MAX_START_RECORD`] or more is refused here
//!   (the platform answers 504 to it) with advice to filter instead.
//! - An answer is read for what it says, never as "0 results" by default
//!   ([`read_answer`]): diagnostics without a count are a rejected query
//!   ([`PlatformError::BadRequest`] with the platform's message); diagnostics next to a
//!   count are warnings that travel with the results; no count at all, a system
//!   diagnostic, or an empty page before `numberOfRecords` is an overload
//!   ([`PlatformError::Overloaded`] with [`Retry::Wait`], which the path feeds back to
//!   the queue as a back-off).
//! - Renditions are fetched only from the configured host, under the parent of the SRU
//!   path (`link_on_base` on the text root), so `--platform-url ob=URL` moves searches
//!   and text together and a record cannot send BesluitBron elsewhere.
//!
//! What this module does not do: wait for room in the limit (the path does), extract
//! text from PDF, or follow `preferredUrl` (it is shown to people, never fetched).

pub mod cql;
pub mod wire;

use std::time::Duration;

use besluitbron_core::PlatformId;
use reqwest::Url;

use super::http::{self, Fetched, HttpConfig, PlatformError, PlatformHttp, Refusal, RefusalFormat, Retry};
pub use cql::{CqlError, DateField, ObSearch, Publication, SortOrder, Term};
pub use wire::{Diagnostic, Manifestation, ObRecord, SruError, SruResponse, parse_sru};

/// Errors of the Officiële Bekendmakingen client (the shared platform error type).
pub type ObError = PlatformError;

const PLATFORM: PlatformId = PlatformId::Ob;

/// Records per page when none is asked for.
pub const DEFAULT_LIMIT: u32 = 10;
/// The most records per page (the service pages with at most 100).
pub const MAX_LIMIT: u32 = 100;
/// The first `startRecord` the service refuses (HTTP 504): only the first ~10,000 hits
/// of a query can be reached.
pub const MAX_START_RECORD: u64 = 10_000;
/// How long BesluitBron backs off when the service signals overload its own way.
pub const OVERLOAD_BACKOFF: Duration = Duration::from_secs(3);

/// One page of a search, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchPage {
    /// `numberOfRecords`: all hits of the query.
    pub total: u64,
    /// The records of this page.
    pub records: Vec<ObRecord>,
    /// The offset of the next page, while records remain (advanced by the records
    /// actually returned).
    pub next_offset: Option<u64>,
    /// What the platform ignored or changed, from its diagnostics (results may be
    /// broader than asked).
    pub warnings: Vec<String>,
}

/// Reads what an SRU answer says about a page asked from `start_record` (1-based).
///
/// - diagnostics and no count: the query was rejected ([`PlatformError::BadRequest`],
///   code `query_rejected`, quoting the platform), unless a diagnostic is a system one
///   (`info:srw/diagnostic/1/1` or `/1/2`): then the platform is overloaded;
/// - no count and no diagnostics: overload ([`PlatformError::Overloaded`], waited out
///   in the fair queue as a 429 is: [`Retry::Wait`]);
/// - a count with diagnostics: the results, with each diagnostic as a warning;
/// - a count above `start_record - 1` but no records: an empty page before the end,
///   which is never the end: overload.
pub fn read_answer(answer: SruResponse, start_record: u64) -> Result<SearchPage, PlatformError> {
    // An overload said in the service's own words: waited out in the fair queue once,
    // as a 429 is (the charge refunded), then this error.
    let busy = |signal: String| PlatformError::Overloaded {
        platform: PLATFORM,
        signal,
        retry_after: OVERLOAD_BACKOFF,
        retry: Retry::Wait {
            after: OVERLOAD_BACKOFF,
        },
    };
    let Some(total) = answer.number_of_records else {
        if let Some(system) = answer
            .diagnostics
            .iter()
            .find(|d| matches!(d.standard_number(), Some(1 | 2)))
        {
            return Err(busy(format!(
                "its search answered with {}",
                bounded(&system.describe())
            )));
        }
        if answer.diagnostics.is_empty() {
            return Err(busy("its search answered without a number of records".to_owned()));
        }
        let said: Vec<String> = answer.diagnostics.iter().map(|d| bounded(&d.describe())).collect();
        return Err(PlatformError::BadRequest {
            platform: PLATFORM,
            code: "query_rejected".to_owned(),
            message: format!(
                "the search was rejected: {}. Use plain words (a phrase in double quotes), or drop a filter",
                said.join("; ")
            ),
        });
    };
    let before = start_record.saturating_sub(1);
    if answer.records.is_empty() && total > before {
        return Err(busy(format!(
            "a page of {total} hits came back empty at record {start_record}"
        )));
    }
    let reached = before.saturating_add(answer.records.len() as u64);
    Ok(SearchPage {
        total,
        next_offset: (reached < total).then_some(reached),
        warnings: answer.diagnostics.iter().map(|d| bounded(&d.describe())).collect(),
        records: answer.records,
    })
}

/// A platform message cut to a length an assistant can read.
fn bounded(text: &str) -> String {
    const MAX_CHARS: usize = 300;
    if text.chars().count() <= MAX_CHARS {
        return text.to_owned();
    }
    let mut cut: String = text.chars().take(MAX_CHARS).collect();
    cut.push('…');
    cut
}

/// A rendition as fetched: its bytes and where it came from.
#[derive(Clone, Debug)]
pub struct Rendition {
    /// The URL that answered.
    pub url: Url,
    /// The body, within the client's cap.
    pub body: Vec<u8>,
}

/// The Officiële Bekendmakingen client.
#[derive(Debug)]
pub struct ObClient {
    http: PlatformHttp,
    base: Url,
    text_root: Url,
    text_pool: Option<&'static crate::text::ExtractPool>,
}

impl ObClient {
    /// A client for the SRU endpoint at `base_url` (e.g.
    /// `https://repository.overheid.nl/sru`); renditions are read from the same host,
    /// under the parent of its path.
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<ObClient, ObError> {
        let base = http::parse_base_url(PLATFORM, base_url)?;
        let mut text_root = base.clone();
        let parent = match base.path().trim_end_matches('/').rsplit_once('/') {
            Some((parent, _)) => parent.to_owned(),
            None => String::new(),
        };
        text_root.set_path(if parent.is_empty() { "/" } else { &parent });
        Ok(ObClient {
            http: PlatformHttp::new(PLATFORM, config, "application/xml")?,
            base,
            text_root,
            text_pool: None,
        })
    }

    /// The page of `search` from `offset` (0-based), at most `limit` records.
    pub async fn search(&self, search: &ObSearch, offset: u64, limit: u32) -> Result<SearchPage, ObError> {
        let query = search.cql().map_err(|e| PlatformError::BadRequest {
            platform: PLATFORM,
            code: "invalid_date".to_owned(),
            message: e.to_string(),
        })?;
        let start_record = check_start(offset)?;
        let limit = limit.clamp(1, MAX_LIMIT);
        self.page(&query, start_record, limit).await
    }

    /// The page of an already built CQL `query` from `offset`: for tests and fuzzing of
    /// the answer classes. The tools never pass text of their own here; they build the
    /// query with [`ObSearch::cql`].
    pub async fn search_cql(&self, query: &str, offset: u64, limit: u32) -> Result<SearchPage, ObError> {
        let start_record = check_start(offset)?;
        self.page(query, start_record, limit.clamp(1, MAX_LIMIT)).await
    }

    /// The record of the publication `id` (exact identifier).
    pub async fn record(&self, id: &str) -> Result<ObRecord, ObError> {
        let query = cql::identifier_query(id).ok_or_else(|| PlatformError::BadRequest {
            platform: PLATFORM,
            code: "invalid_identifier".to_owned(),
            message: "the identifier holds no letters or digits".to_owned(),
        })?;
        let page = self.page(&query, 1, 1).await?;
        page.records
            .into_iter()
            .find(|r| r.identifier == id)
            .ok_or_else(|| PlatformError::NotFound {
                platform: PLATFORM,
                what: format!("publication `{id}`"),
            })
    }

    /// The same client reading PDF-only publications in `pool` (the process's one pool).
    pub fn with_text_pool(mut self, pool: &'static crate::text::ExtractPool) -> ObClient {
        self.text_pool = Some(pool);
        self
    }

    /// The pool a PDF's text is read in: the one given, else the process's pool.
    pub fn text_pool(&self) -> &'static crate::text::ExtractPool {
        self.text_pool
            .unwrap_or_else(|| crate::text::ExtractPool::shared(0, crate::text::Caps::default()))
    }

    /// Accepts a rendition's URL only on the configured host, under the text root.
    pub fn rendition_url(&self, url: &str) -> Result<Url, ObError> {
        http::link_on_base(PLATFORM, &self.text_root, url)
    }

    /// Fetches a rendition the record lists (checked with [`ObClient::rendition_url`]).
    pub async fn rendition(&self, url: &str, what: &str) -> Result<Rendition, ObError> {
        let url = self.rendition_url(url)?;
        let fetched = self.http.get(url).await?;
        if !fetched.status.is_success() {
            return Err(http::status_error(PLATFORM, &fetched, what, &REFUSALS));
        }
        Ok(Rendition {
            url: fetched.url,
            body: fetched.body,
        })
    }

    /// The SRU request for `query`.
    pub fn search_url(&self, query: &str, start_record: u64, limit: u32) -> Url {
        http::with_query(
            self.base.clone(),
            [
                ("operation", "searchRetrieve".to_owned()),
                ("version", "2.0".to_owned()),
                ("recordSchema", "gzd".to_owned()),
                ("startRecord", start_record.to_string()),
                ("maximumRecords", limit.to_string()),
                ("query", query.to_owned()),
            ],
        )
    }

    async fn page(&self, query: &str, start_record: u64, limit: u32) -> Result<SearchPage, ObError> {
        let fetched = self.http.get(self.search_url(query, start_record, limit)).await?;
        read_answer(decode(&fetched)?, start_record)
    }
}

/// The 1-based `startRecord` of `offset`, or the refusal the platform's 504 would be.
pub fn check_start(offset: u64) -> Result<u64, ObError> {
    let start = offset.saturating_add(1);
    if start >= MAX_START_RECORD {
        return Err(PlatformError::BadRequest {
            platform: PLATFORM,
            code: "too_deep".to_owned(),
            message: format!(
                "only the first {} hits of a search can be reached (offset at most {}); narrow the search \
                 instead: a publication, an organisation, a document type or a shorter date range",
                MAX_START_RECORD - 1,
                MAX_START_RECORD - 2
            ),
        });
    }
    Ok(start)
}

/// An SRU answer's body as a response, or why it is not one.
fn decode(fetched: &Fetched) -> Result<SruResponse, ObError> {
    if !fetched.status.is_success() {
        return Err(http::status_error(PLATFORM, fetched, "search", &REFUSALS));
    }
    if !fetched.is_xml() {
        let content_type = fetched.content_type().unwrap_or("no content type");
        let detail = if fetched.looks_like_html() {
            format!("{content_type} body is an HTML page, not the expected SRU XML")
        } else {
            format!("{content_type} body is not the expected SRU XML")
        };
        return Err(PlatformError::Garbage {
            platform: PLATFORM,
            detail,
        });
    }
    parse_sru(&fetched.body).map_err(|e| PlatformError::Garbage {
        platform: PLATFORM,
        detail: e.to_string(),
    })
}

/// The SRU service explains a refused request in diagnostics, not in a 400 body.
const REFUSALS: RefusalFormat = RefusalFormat {
    default_code: "invalid_query",
    read: read_refusal,
};

fn read_refusal(body: &[u8]) -> Option<Refusal> {
    let answer = parse_sru(body).ok()?;
    let d = answer.diagnostics.first()?;
    Some(Refusal {
        code: Some("query_rejected".to_owned()),
        message: Some(bounded(&d.describe())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(uri: &str) -> Diagnostic {
        Diagnostic {
            uri: uri.to_owned(),
            details: Some("detail".into()),
            message: Some("message".into()),
        }
    }

    fn answer(count: Option<u64>, records: usize, diagnostics: Vec<Diagnostic>) -> SruResponse {
        SruResponse {
            number_of_records: count,
            records: (0..records)
                .map(|i| ObRecord {
                    identifier: format!("stcrt-2026-{i}"),
                    ..ObRecord::default()
                })
                .collect(),
            next_record_position: None,
            diagnostics,
        }
    }

    #[test]
    fn each_class_of_answer_is_read_for_what_it_says() {
        // Rejected: diagnostics, no count.
        let rejected = read_answer(answer(None, 0, vec![diag("info:srw/diagnostic/1/10")]), 1).unwrap_err();
        assert!(
            matches!(&rejected, PlatformError::BadRequest { code, message, .. }
                if code == "query_rejected" && message.contains("message (detail) [info:srw/diagnostic/1/10]")),
            "{rejected:?}"
        );
        // Overload: a system diagnostic, or no count at all.
        for a in [
            answer(None, 0, vec![diag("info:srw/diagnostic/1/1")]),
            answer(None, 0, vec![]),
        ] {
            assert!(matches!(read_answer(a, 1), Err(PlatformError::Overloaded { .. })));
        }
        // A warning: a count with diagnostics.
        let warned = read_answer(answer(Some(5), 5, vec![diag("SEARCH-IGNOREDQTEXT")]), 1).unwrap();
        assert_eq!(warned.warnings, ["message (detail) [SEARCH-IGNOREDQTEXT]"]);
        assert_eq!(warned.next_offset, None);
        // An empty page before the end is never the end.
        assert!(matches!(
            read_answer(answer(Some(50), 0, vec![]), 21),
            Err(PlatformError::Overloaded { .. })
        ));
        // An empty result is an empty result; a page past the end too.
        assert_eq!(read_answer(answer(Some(0), 0, vec![]), 1).unwrap().total, 0);
        assert_eq!(read_answer(answer(Some(20), 0, vec![]), 21).unwrap().next_offset, None);
        // Paging advances by the records actually returned.
        assert_eq!(
            read_answer(answer(Some(50), 7, vec![]), 11).unwrap().next_offset,
            Some(17)
        );
    }

    #[test]
    fn the_ten_thousand_cap_is_ours_to_say() {
        assert_eq!(check_start(0).unwrap(), 1);
        assert_eq!(check_start(9_998).unwrap(), 9_999);
        assert!(matches!(check_start(9_999), Err(PlatformError::BadRequest { code, .. }) if code == "too_deep"));
        assert!(check_start(u64::MAX).is_err());
    }

    #[test]
    fn renditions_are_read_only_from_the_configured_host() {
        let real = ObClient::new("https://repository.overheid.nl/sru", &HttpConfig::default()).unwrap();
        assert!(
            real.rendition_url("https://repository.overheid.nl/frbr/officielepublicaties/gmb/2026/x/1/xml/x.xml")
                .is_ok()
        );
        let fake = ObClient::new("http://127.0.0.1:9/ob/sru", &HttpConfig::default()).unwrap();
        assert!(fake.rendition_url("http://127.0.0.1:9/ob/frbr/x/1/xml/x.xml").is_ok());
        for foreign in [
            "https://zoek.officielebekendmakingen.nl/x.xml",
            "http://127.0.0.1:9/other/frbr/x.xml",
            "http://127.0.0.1:10/ob/frbr/x.xml",
            "http://127.0.0.1:9/ob/../x.xml",
        ] {
            assert!(fake.rendition_url(foreign).is_err(), "{foreign}");
        }
        let url = fake.search_url("a AND b", 11, 10);
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9/ob/sru?operation=searchRetrieve&version=2.0&recordSchema=gzd&startRecord=11&maximumRecords=10&query=a+AND+b"
        );
    }
}
