//! Officiële Bekendmakingen client (PLATFORMS.md §5 and §10.1): searches over KOOP's SRU
//! 2.0 service at `https://repository.overheid.nl/sru` ([`crate::platforms::koop`], which
//! reads every answer) with a CQL query built here ([`cql`]), one publication's record by
//! its identifier, and its text renditions from the same host.
//!
//! Invariants:
//! - Searches are the shared service's ([`COLLECTION`]): SRU 2.0 with `recordSchema=gzd`
//!   and `Accept: application/xml` (the service answers JSON to a client that asks for
//!   it), at most [`MAX_LIMIT`] records a page, only the first 9,999 hits reachable, an
//!   answer read for what it says and never as "0 results" by default.
//! - Renditions are fetched only from the configured host, under the parent of the SRU
//!   path (`link_on_base` on the text root), so `--platform-url ob=URL` moves searches
//!   and text together and a record cannot send BesluitBron elsewhere.
//!
//! What this module does not do: wait for room in the limit (the path does), extract
//! text from PDF, or follow `preferredUrl` (it is shown to people, never fetched).

pub mod cql;
pub mod wire;

use std::time::Duration;

use besluitbron_core::{Platform, PlatformId};
use reqwest::Url;

use super::http::{self, HttpConfig, PlatformError};
use super::koop::{self, Collection, SruService, SruVersion};
pub use cql::{Chamber, CqlError, DateField, ObSearch, Publication, SortOrder, Term};
pub use wire::{Manifestation, ObRecord};

/// Errors of the Officiële Bekendmakingen client (the shared platform error type).
pub type ObError = PlatformError;

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "ob",
    name: "Officiële Bekendmakingen",
});

/// Records per page when none is asked for.
pub const DEFAULT_LIMIT: u32 = 10;
/// The most records per page (the service pages with at most 100).
pub const MAX_LIMIT: u32 = 100;
/// The first `startRecord` the service refuses (HTTP 504): only the first ~10,000 hits
/// of a query can be reached.
pub const MAX_START_RECORD: u64 = koop::MAX_OFFSET + 2;

/// The officiële publicaties as a collection of KOOP's search service.
pub static COLLECTION: Collection = Collection {
    platform: PLATFORM,
    version: SruVersion::V2_0,
    connection: None,
    max_records: MAX_LIMIT,
    advice: "Use plain words (a phrase in double quotes), or drop a filter",
    narrow: "a publication, an organisation, a document type or a shorter date range",
    overload_backoff: Duration::from_secs(3),
};

/// One page of a search, as read.
pub type SearchPage = koop::SearchPage<ObRecord>;

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
    service: SruService,
    text_root: Url,
    text_pool: Option<&'static crate::text::ExtractPool>,
}

impl ObClient {
    /// A client for the SRU endpoint at `base_url` (e.g.
    /// `https://repository.overheid.nl/sru`); renditions are read from the same host,
    /// under the parent of its path.
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<ObClient, ObError> {
        let service = SruService::new(&COLLECTION, base_url, config)?;
        let mut text_root = service.base().clone();
        let parent = match service.base().path().trim_end_matches('/').rsplit_once('/') {
            Some((parent, _)) => parent.to_owned(),
            None => String::new(),
        };
        text_root.set_path(if parent.is_empty() { "/" } else { &parent });
        Ok(ObClient {
            service,
            text_root,
            text_pool: None,
        })
    }

    /// The page of `search` from `offset` (0-based), at most `limit` records.
    pub async fn search(&self, search: &ObSearch, offset: u64, limit: u32) -> Result<SearchPage, ObError> {
        let query = search.cql().map_err(|e| PlatformError::BadRequest {
            sent: false,
            platform: PLATFORM,
            code: "invalid_date".to_owned(),
            message: e.to_string(),
        })?;
        self.service.search(&query, offset, limit).await
    }

    /// The page of an already built CQL `query` from `offset`: for tests and fuzzing of
    /// the answer classes. The tools never pass text of their own here; they build the
    /// query with [`ObSearch::cql`].
    pub async fn search_cql(&self, query: &str, offset: u64, limit: u32) -> Result<SearchPage, ObError> {
        self.service.search(query, offset, limit).await
    }

    /// The record of the publication `id` (exact identifier).
    pub async fn record(&self, id: &str) -> Result<ObRecord, ObError> {
        let query = cql::identifier_query(id).ok_or_else(|| PlatformError::BadRequest {
            sent: false,
            platform: PLATFORM,
            code: "invalid_identifier".to_owned(),
            message: "the identifier holds no letters or digits".to_owned(),
        })?;
        let page: SearchPage = self.service.search(&query, 0, 1).await?;
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
    /// A 404 or 410 is [`PlatformError::FileMissing`]: the record names the file, so the
    /// publication's id is right.
    pub async fn rendition(&self, url: &str, what: &str) -> Result<Rendition, ObError> {
        let url = self.rendition_url(url)?;
        let fetched = self.service.http().get(url).await?;
        if matches!(fetched.status.as_u16(), 404 | 410) {
            return Err(PlatformError::FileMissing {
                platform: PLATFORM,
                what: format!("the {what}"),
            });
        }
        if !fetched.status.is_success() {
            return Err(http::status_error(PLATFORM, &fetched, what, &self.service.refusals()));
        }
        Ok(Rendition {
            url: fetched.url,
            body: fetched.body,
        })
    }

    /// The SRU request for `query`.
    pub fn search_url(&self, query: &str, start_record: u64, limit: u32) -> Url {
        self.service.search_url(query, start_record, limit)
    }
}

/// The 1-based `startRecord` of `offset`, or the refusal the platform's 504 would be.
pub fn check_start(offset: u64) -> Result<u64, ObError> {
    koop::start_record(&COLLECTION, offset)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_rendition_the_record_lists_but_the_platform_lacks_is_no_wrong_id() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let fake = besluitbron_fakes::serve_ob(listener, besluitbron_fakes::FakeConfig::default())
            .await
            .unwrap();
        let client = ObClient::new(&format!("{}/sru", fake.base_url()), &HttpConfig::default()).unwrap();
        // On the platform's own host, under its text root, and not in its repository.
        let url = format!(
            "{}/frbr/officielepublicaties/gmb/2026/gmb-2026-999999/1/xml/gmb-2026-999999.xml",
            fake.base_url()
        );
        let e = client
            .rendition(&url, "XML rendition of `gmb-2026-999999`")
            .await
            .expect_err("not served");
        assert_eq!(e.label(), "file_missing");
        let said = e.to_string();
        assert!(
            said.contains("the id is right") && !said.contains("check the id"),
            "{said}"
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
