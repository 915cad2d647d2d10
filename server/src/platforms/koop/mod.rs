//! KOOP's search service, written once: the SRU request and paging, the envelope and its
//! diagnostics, refusals, and the check of the file links its records give — for every
//! collection BesluitBron reads through it (Officiële Bekendmakingen `ob`, the
//! Basiswettenbestand `bwb`, local regulations `cvdr`; PLATFORMS.md §5, §10.1).
//!
//! A collection is a [`Collection`]: its platform, the SRU version and collection it is
//! asked in, how many records a page may hold and what to advise when the service
//! rejects a query. Its connector keeps only what is its own: the CQL it builds and the
//! record it reads ([`SruRecord`]). The regulation collections of its zoekservice (`bwb`,
//! `cvdr`) share more: one client, over what each keeps ([`zoekservice`]).
//!
//! Invariants:
//! - Every search sends `operation=searchRetrieve`, the collection's `version`, its
//!   `x-connection` (SRU 1.2) or `recordSchema=gzd` (SRU 2.0), `startRecord` 1-based and
//!   `maximumRecords` at most the collection's page; an offset past the reachable hits
//!   ([`MAX_OFFSET`]: the service answers 504 beyond them) is refused here, with advice
//!   to narrow the search instead.
//! - An answer is read for what it says, never as "0 results" by default
//!   ([`read_answer`]): diagnostics without a count are a rejected query
//!   ([`PlatformError::BadRequest`] quoting the service), unless a diagnostic is a
//!   system one (`info:srw/diagnostic/1/1`, `/1/2`): then, and when there is no count
//!   and no diagnostic at all, or when a page before the end comes back empty, the
//!   service is overloaded ([`PlatformError::Overloaded`] with [`Retry::Wait`], which
//!   the path feeds back to the queue as a back-off). Diagnostics next to a count are
//!   warnings that travel with the results.
//! - Only a complete, well-formed answer is read ([`sru`]): a body cut off after a
//!   complete record is an error, never a shorter page — and so never kept.
//!
//! What this module does not do: build CQL (each collection's connector does), read the
//! documents a record points to, or wait for room in a limit (the path does).

pub mod link;
pub mod regulation;
pub mod sru;
pub mod zoekservice;

use std::time::Duration;

use besluitbron_core::{LimitConfig, PlatformId, Service, ServiceId, Units};
use reqwest::Url;

use super::http::{self, Fetched, HttpConfig, PlatformError, PlatformHttp, Refusal, RefusalFormat, Retry};

/// KOOP's search service for the official publications (`repository.overheid.nl/sru`),
/// which Officiële Bekendmakingen searches. A limit exists but its numbers are
/// unpublished: 30 calls refilled at one per second, close to the pacing careful
/// harvesters use (0.5–1 s per page).
pub const SRU: ServiceId = ServiceId::of(&Service {
    id: "koop-sru",
    name: "KOOP's search service for official publications (repository.overheid.nl/sru)",
    limit: Some(LimitConfig::new(Units::whole(30), Duration::from_secs(30))),
    max_in_flight: None,
});

/// The official publications' files (their XML, HTML and PDF renditions), whose host
/// reportedly states 10 requests per 30 s.
pub const PUBLICATIONS: ServiceId = ServiceId::of(&Service {
    id: "koop-publications",
    name: "the official publications' files (zoek.officielebekendmakingen.nl)",
    limit: Some(LimitConfig::new(Units::whole(10), Duration::from_secs(30))),
    max_in_flight: None,
});

/// KOOP's zoekservice (`zoekservice.overheid.nl`), which the Basiswettenbestand and the
/// local regulations (CVDR) search, each its own `x-connection`: one service, one
/// budget. A limit exists, its numbers are unpublished: 30 calls refilled at one per
/// second.
pub const ZOEKSERVICE: ServiceId = ServiceId::of(&Service {
    id: "koop-zoekservice",
    name: "KOOP's zoekservice (zoekservice.overheid.nl)",
    limit: Some(LimitConfig::new(Units::whole(30), Duration::from_secs(30))),
    max_in_flight: None,
});

/// KOOP's repository host for the regulations' files (toestanden, CVDR regulations), at
/// [`link::REPOSITORY_HOST`]: the same pacing as its search service.
pub const REPOSITORY: ServiceId = ServiceId::of(&Service {
    id: "koop-repository",
    name: "KOOP's repository of regulations (repository.officiele-overheidspublicaties.nl)",
    limit: Some(LimitConfig::new(Units::whole(30), Duration::from_secs(30))),
    max_in_flight: None,
});
pub use link::{FileLink, REPOSITORY_HOST, file_url};
pub use sru::{Diagnostic, Field, SruError, SruRecord, SruResponse, SruVersion, parse_sru};

/// The deepest offset a search may start at (0-based): the service answers HTTP 504 to a
/// `startRecord` of 10,000 or more, so only the first 9,999 hits can be reached.
pub const MAX_OFFSET: u64 = 9_998;

/// Longest words text written into a query, in characters.
pub const MAX_WORDS_CHARS: usize = 200;

/// `text` as CQL-safe words: letters, digits, spaces, `-`, `'`, `.`; spaces collapsed.
pub fn clean_words(text: &str) -> String {
    let kept: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '\'' | '.') {
                c
            } else {
                ' '
            }
        })
        .collect();
    let words: Vec<&str> = kept.split_whitespace().collect();
    let mut out = words.join(" ");
    if out.chars().count() > MAX_WORDS_CHARS {
        out = out.chars().take(MAX_WORDS_CHARS).collect();
    }
    out
}

/// One collection of KOOP's search service, as a platform reads it.
#[derive(Debug)]
pub struct Collection {
    /// The platform named in errors and whose limit the searches count against.
    pub platform: PlatformId,
    /// The SRU version it is asked in.
    pub version: SruVersion,
    /// Its `x-connection` (SRU 1.2), e.g. `BWB` or `cvdr`; `None` for SRU 2.0, where the
    /// CQL selects the collection.
    pub connection: Option<&'static str>,
    /// Most records per page asked.
    pub max_records: u32,
    /// What the assistant can do after the service rejected a query (after its quote).
    pub advice: &'static str,
    /// How to narrow a search whose offset is past the reachable hits.
    pub narrow: &'static str,
    /// How long an overload said in the service's own words is waited out.
    pub overload_backoff: Duration,
}

/// One page of a search, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchPage<R> {
    /// `numberOfRecords`: all hits of the query.
    pub total: u64,
    /// The records of this page.
    pub records: Vec<R>,
    /// The offset of the next page, while records remain (advanced by the records
    /// actually returned).
    pub next_offset: Option<u64>,
    /// What the service ignored or changed, from its diagnostics (results may be
    /// broader than asked).
    pub warnings: Vec<String>,
}

/// Reads what an SRU answer says about a page asked from `start_record` (1-based), for
/// `collection` (see the module's invariants).
pub fn read_answer<R>(
    collection: &Collection,
    answer: SruResponse<R>,
    start_record: u64,
) -> Result<SearchPage<R>, PlatformError> {
    let platform = collection.platform;
    let busy = |signal: String| PlatformError::Overloaded {
        platform,
        signal,
        retry_after: collection.overload_backoff,
        retry: Retry::Wait {
            after: collection.overload_backoff,
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
            sent: true,
            platform,
            code: "query_rejected".to_owned(),
            message: format!("the search was rejected: {}. {}", said.join("; "), collection.advice),
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

/// Reads an answer's body for the page asked from `start_record`: the envelope, then
/// what it says (for the fuzz targets and tests; the service reads its answers so).
pub fn read_body<R: SruRecord>(
    collection: &Collection,
    body: &[u8],
    start_record: u64,
) -> Result<SearchPage<R>, PlatformError> {
    let answer = parse_sru(collection.version, body).map_err(|e| PlatformError::Garbage {
        platform: collection.platform,
        detail: e.to_string(),
    })?;
    read_answer(collection, answer, start_record)
}

/// A service message cut to a length an assistant can read.
pub fn bounded(text: &str) -> String {
    const MAX_CHARS: usize = 300;
    let mut out: String = text.chars().take(MAX_CHARS).collect();
    if text.chars().count() > MAX_CHARS {
        out.push('…');
    }
    out
}

/// The 1-based `startRecord` of `offset` in `collection`, or the refusal the service's
/// 504 would be.
pub fn start_record(collection: &Collection, offset: u64) -> Result<u64, PlatformError> {
    if offset > MAX_OFFSET {
        return Err(PlatformError::BadRequest {
            sent: false,
            platform: collection.platform,
            code: "too_deep".to_owned(),
            message: format!(
                "only the first {} hits of a search can be reached (offset at most {MAX_OFFSET}); narrow the search \
                 instead: {}",
                MAX_OFFSET + 1,
                collection.narrow
            ),
        });
    }
    Ok(offset + 1)
}

/// The search service of one collection: its HTTP client and address.
#[derive(Debug)]
pub struct SruService {
    http: PlatformHttp,
    base: Url,
    collection: &'static Collection,
}

impl SruService {
    /// The service at `base_url` (e.g. `https://repository.overheid.nl/sru` or
    /// `https://zoekservice.overheid.nl/sru/Search`) for `collection`.
    pub fn new(
        collection: &'static Collection,
        base_url: &str,
        config: &HttpConfig,
    ) -> Result<SruService, PlatformError> {
        Ok(SruService {
            http: PlatformHttp::new(collection.platform, config, "application/xml")?,
            base: http::parse_base_url(collection.platform, base_url)?,
            collection,
        })
    }

    /// The service's address.
    pub fn base(&self) -> &Url {
        &self.base
    }

    /// The HTTP client (for the files the records point to).
    pub fn http(&self) -> &PlatformHttp {
        &self.http
    }

    /// The page of `query` (CQL built by the collection's connector) from `offset`
    /// (0-based), at most `limit` records (clamped to the collection's page).
    pub async fn search<R: SruRecord>(
        &self,
        query: &str,
        offset: u64,
        limit: u32,
    ) -> Result<SearchPage<R>, PlatformError> {
        let start_record = start_record(self.collection, offset)?;
        let limit = limit.clamp(1, self.collection.max_records);
        let fetched = self.http.get(self.search_url(query, start_record, limit)).await?;
        read_answer(self.collection, self.decode(&fetched)?, start_record)
    }

    /// The SRU request for `query`.
    pub fn search_url(&self, query: &str, start_record: u64, limit: u32) -> Url {
        let mut pairs = vec![
            ("operation", "searchRetrieve".to_owned()),
            ("version", self.collection.version.as_str().to_owned()),
        ];
        match self.collection.connection {
            Some(connection) => pairs.push(("x-connection", connection.to_owned())),
            None => pairs.push(("recordSchema", "gzd".to_owned())),
        }
        pairs.extend([
            ("startRecord", start_record.to_string()),
            ("maximumRecords", limit.to_string()),
            ("query", query.to_owned()),
        ]);
        http::with_query(self.base.clone(), pairs)
    }

    /// An SRU answer's body as a response, or why it is not one.
    fn decode<R: SruRecord>(&self, fetched: &Fetched) -> Result<SruResponse<R>, PlatformError> {
        let platform = self.collection.platform;
        if !fetched.status.is_success() {
            return Err(http::status_error(
                platform,
                fetched,
                http::Asked::Listing,
                &self.refusals(),
            ));
        }
        if !fetched.is_xml() {
            let content_type = fetched.content_type().unwrap_or("no content type");
            let detail = if fetched.looks_like_html() {
                format!("{content_type} body is an HTML page, not the expected SRU XML")
            } else {
                format!("{content_type} body is not the expected SRU XML")
            };
            return Err(PlatformError::Garbage { platform, detail });
        }
        parse_sru(self.collection.version, &fetched.body).map_err(|e| PlatformError::Garbage {
            platform,
            detail: e.to_string(),
        })
    }

    /// How the service explains a refused request: in diagnostics, not in a 400 body.
    pub fn refusals(&self) -> RefusalFormat {
        match self.collection.version {
            SruVersion::V1_2 => REFUSALS_12,
            SruVersion::V2_0 => REFUSALS_20,
        }
    }
}

const REFUSALS_12: RefusalFormat = RefusalFormat {
    default_code: "invalid_query",
    read: |body| read_refusal(SruVersion::V1_2, body),
};

const REFUSALS_20: RefusalFormat = RefusalFormat {
    default_code: "invalid_query",
    read: |body| read_refusal(SruVersion::V2_0, body),
};

/// The first diagnostic of a refusal's SRU body.
fn read_refusal(version: SruVersion, body: &[u8]) -> Option<Refusal> {
    /// A refusal's records are not read.
    #[derive(Default)]
    struct NoRecord;
    impl SruRecord for NoRecord {
        fn take(&mut self, _: Field<'_>) {}
    }
    let answer = parse_sru::<NoRecord>(version, body).ok()?;
    let d = answer.diagnostics.first()?;
    Some(Refusal {
        code: Some("query_rejected".to_owned()),
        message: Some(bounded(&d.describe())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const OB: Collection = Collection {
        platform: crate::platforms::ob::PLATFORM,
        version: SruVersion::V2_0,
        connection: None,
        max_records: 100,
        advice: "Use plain words",
        narrow: "a journal or a date range",
        overload_backoff: Duration::from_secs(3),
    };
    static BWB: Collection = Collection {
        platform: crate::platforms::bwb::PLATFORM,
        version: SruVersion::V1_2,
        connection: Some("BWB"),
        max_records: 50,
        advice: "Use fewer words",
        narrow: "more words",
        overload_backoff: Duration::from_secs(5),
    };

    fn diag(uri: &str) -> Diagnostic {
        Diagnostic {
            uri: uri.to_owned(),
            details: Some("detail".into()),
            message: Some("message".into()),
        }
    }

    fn answer(count: Option<u64>, records: usize, diagnostics: Vec<Diagnostic>) -> SruResponse<u32> {
        SruResponse {
            number_of_records: count,
            records: (0..records as u32).collect(),
            next_record_position: None,
            diagnostics,
        }
    }

    #[test]
    fn each_class_of_answer_is_read_for_what_it_says() {
        // Rejected: diagnostics, no count.
        let rejected = read_answer(&OB, answer(None, 0, vec![diag("info:srw/diagnostic/1/10")]), 1).unwrap_err();
        assert!(
            matches!(&rejected, PlatformError::BadRequest { code, message, .. }
                if code == "query_rejected" && message.contains("message (detail) [info:srw/diagnostic/1/10]. Use plain words")),
            "{rejected:?}"
        );
        // Overload: a system diagnostic, or no count at all.
        for a in [
            answer(None, 0, vec![diag("info:srw/diagnostic/1/1")]),
            answer(None, 0, vec![]),
        ] {
            assert!(matches!(
                read_answer(&BWB, a, 1),
                Err(PlatformError::Overloaded { platform, retry: Retry::Wait { after }, .. })
                    if after == Duration::from_secs(5) && platform == crate::platforms::bwb::PLATFORM
            ));
        }
        // A warning: a count with diagnostics.
        let warned = read_answer(&OB, answer(Some(5), 5, vec![diag("SEARCH-IGNOREDQTEXT")]), 1).unwrap();
        assert_eq!(warned.warnings, ["message (detail) [SEARCH-IGNOREDQTEXT]"]);
        assert_eq!(warned.next_offset, None);
        // An empty page before the end is never the end.
        assert!(matches!(
            read_answer(&OB, answer(Some(50), 0, vec![]), 21),
            Err(PlatformError::Overloaded { .. })
        ));
        // An empty result is an empty result; a page past the end too.
        assert_eq!(read_answer(&OB, answer(Some(0), 0, vec![]), 1).unwrap().total, 0);
        assert_eq!(
            read_answer(&OB, answer(Some(20), 0, vec![]), 21).unwrap().next_offset,
            None
        );
        // Paging advances by the records actually returned.
        assert_eq!(
            read_answer(&OB, answer(Some(50), 7, vec![]), 11).unwrap().next_offset,
            Some(17)
        );
    }

    #[test]
    fn requests_name_the_version_and_the_collection() {
        static OB_STATIC: Collection = OB;
        let ob = SruService::new(&OB_STATIC, "http://127.0.0.1:9/ob/sru", &HttpConfig::default()).unwrap();
        assert_eq!(
            ob.search_url("a AND b", 11, 10).as_str(),
            "http://127.0.0.1:9/ob/sru?operation=searchRetrieve&version=2.0&recordSchema=gzd&startRecord=11&maximumRecords=10&query=a+AND+b"
        );
        let bwb = SruService::new(&BWB, "http://127.0.0.1:9/sru/Search", &HttpConfig::default()).unwrap();
        assert_eq!(
            bwb.search_url("x", 1, 5).as_str(),
            "http://127.0.0.1:9/sru/Search?operation=searchRetrieve&version=1.2&x-connection=BWB&startRecord=1&maximumRecords=5&query=x"
        );
    }

    #[test]
    fn the_ten_thousand_cap_is_ours_to_say() {
        assert_eq!(start_record(&BWB, 0).unwrap(), 1);
        assert_eq!(start_record(&BWB, 9_998).unwrap(), 9_999);
        let e = start_record(&BWB, 9_999).unwrap_err();
        assert!(
            matches!(&e, PlatformError::BadRequest { code, message, .. } if code == "too_deep" && message.ends_with("more words")),
            "{e:?}"
        );
        assert!(start_record(&BWB, u64::MAX).is_err());
    }
}
