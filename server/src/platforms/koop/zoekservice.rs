//! KOOP's regulation collections (the Basiswettenbestand `bwb`, local regulations `cvdr`),
//! read by one client: searched on KOOP's zoekservice, a version found by its id as in
//! force on a day, and the version's file read whole from KOOP's repository host
//! (`docs/platforms.md`, "National legislation", "Local regulations").
//!
//! A collection is a [`RegulationCollection`] and keeps only what is its own: its record,
//! the CQL of its searches and of its versions, which record is the version an id names,
//! where its files lie and what their root element is. [`RegulationClient`] is the rest,
//! written once.
//!
//! Invariants:
//! - Every query is built from checked values: a day is checked before it is written
//!   ([`in_force_day`]), and a search that asks nothing but its day is refused before
//!   anything is sent ([`in_force_query`]): both as [`PlatformError::BadRequest`] with
//!   `sent: false`.
//! - Searches are the shared service's ([`SruService`]): an answer with diagnostics and no
//!   count is the service rejecting the query, or overload, never "no results".
//! - A version's file is fetched only where the collection's [`FileLink`] allows it
//!   ([`super::file_url`]): on the search host or on KOOP's repository host, under the
//!   collection's folder.
//!
//! What this module does not do: write a collection's CQL, read its records' fields, or
//! list a regulation's versions.

use std::time::Duration;

use reqwest::Url;
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::regulation::{Regulation, Root, read_regulation};
use super::{Collection, FileLink, SearchPage, SruRecord, SruService, SruVersion, file_url};
use crate::platforms::http::{self, HttpConfig, PlatformError};
use besluitbron_core::PlatformId;

/// One regulation collection of KOOP's zoekservice: what is its own.
pub trait RegulationCollection: Send + Sync + 'static {
    /// A version's record, as the search describes it (kept by the connector as it is).
    type Record: SruRecord + Clone + std::fmt::Debug + Serialize + DeserializeOwned + Send + Sync + 'static;
    /// A search of the collection, as its connector asks it.
    type Search: Send + Sync;
    /// The collection on the search service.
    const COLLECTION: &'static Collection;
    /// Where its files lie, and the words of a refused link.
    const FILES: FileLink;
    /// The root element of its files.
    const ROOT: Root;
    /// What its ids are, said to a request for something else: `a BWB id (such as …)`.
    const ID: &'static str;
    /// Its platform.
    const PLATFORM: PlatformId = Self::COLLECTION.platform;
    /// Whether `text` is one of the collection's ids.
    fn is_id(text: &str) -> bool;
    /// Where `record`'s version's file is, as the record gives it.
    fn file(record: &Self::Record) -> Option<&str>;
    /// The CQL of `search`, or why it cannot be written.
    fn cql(search: &Self::Search) -> Result<String, PlatformError>;
    /// The CQL that finds the version `id` (one of the collection's ids) names as in force
    /// on `day`, or why it cannot be written (a bad day).
    fn version_cql(id: &str, day: &str) -> Result<String, PlatformError>;
    /// Of the records that query found, the version `id` names.
    fn version_of(records: Vec<Self::Record>, id: &str) -> Option<Self::Record>;
    /// Whether `id` names one version whatever the day (then its record never changes).
    fn versioned(_id: &str) -> bool {
        false
    }
}

/// The most records a page of KOOP's zoekservice holds as BesluitBron asks it.
pub const MAX_RECORDS: u32 = 50;

/// A regulation collection of KOOP's zoekservice: `platform`'s, asked by SRU 1.2 with
/// `x-connection=connection`, a page at most [`MAX_RECORDS`], an overload in the service's
/// own words waited out five seconds; `advice` after a rejected query and `narrow` for a
/// search past the reachable hits (see [`Collection`]).
pub const fn collection(
    platform: PlatformId,
    connection: &'static str,
    advice: &'static str,
    narrow: &'static str,
) -> Collection {
    Collection {
        platform,
        version: SruVersion::V1_2,
        connection: Some(connection),
        max_records: MAX_RECORDS,
        advice,
        narrow,
        overload_backoff: Duration::from_secs(5),
    }
}

/// The CQL that finds the version `id` names as in force on `day` in collection `C`, or
/// why it cannot be written (an id that is not the collection's, a bad day).
pub fn version_query<C: RegulationCollection>(id: &str, day: &str) -> Result<String, PlatformError> {
    if !C::is_id(id) {
        return Err(unsent(
            C::PLATFORM,
            "invalid_id",
            format!("`{}` is not {}", http::brief(id), C::ID),
        ));
    }
    C::version_cql(id, day)
}

/// A request refused before it is sent: `code` and what to do, for the assistant.
pub fn unsent(platform: PlatformId, code: &str, message: String) -> PlatformError {
    PlatformError::BadRequest {
        sent: false,
        platform,
        code: code.to_owned(),
        message,
    }
}

/// `day` when it is a day written YYYY-MM-DD, the refusal otherwise.
pub fn in_force_day(platform: PlatformId, day: &str) -> Result<&str, PlatformError> {
    if crate::calendar::is_day(day) {
        Ok(day)
    } else {
        Err(unsent(
            platform,
            "invalid_date",
            format!("`{}` is not a date written YYYY-MM-DD", http::brief(day)),
        ))
    }
}

/// The clauses a search asks joined by `and`, then `in_force` (the day's clause); no
/// clause at all is nothing to search, and `give` says what to give instead.
pub fn in_force_query(
    platform: PlatformId,
    clauses: impl IntoIterator<Item = String>,
    in_force: String,
    give: &str,
) -> Result<String, PlatformError> {
    let mut clauses: Vec<String> = clauses.into_iter().collect();
    if clauses.is_empty() {
        return Err(unsent(platform, "nothing_to_search", give.to_owned()));
    }
    clauses.push(in_force);
    Ok(clauses.join(" and "))
}

/// The client of one regulation collection.
#[derive(Debug)]
pub struct RegulationClient<C> {
    service: SruService,
    collection: std::marker::PhantomData<C>,
}

impl<C: RegulationCollection> RegulationClient<C> {
    /// A client for the SRU endpoint at `base_url` (e.g.
    /// `https://zoekservice.overheid.nl/sru/Search`).
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<RegulationClient<C>, PlatformError> {
        Ok(RegulationClient {
            service: SruService::new(C::COLLECTION, base_url, config)?,
            collection: std::marker::PhantomData,
        })
    }

    /// The page of `search` from `offset` (0-based), at most `limit` records.
    pub async fn search(
        &self,
        search: &C::Search,
        offset: u64,
        limit: u32,
    ) -> Result<SearchPage<C::Record>, PlatformError> {
        self.service.search(&C::cql(search)?, offset, limit).await
    }

    /// The version `id` names as in force on `day` (YYYY-MM-DD; a versioned id names its
    /// version whatever the day).
    pub async fn version(&self, id: &str, day: &str) -> Result<C::Record, PlatformError> {
        let query = version_query::<C>(id, day)?;
        let page: SearchPage<C::Record> = self.service.search(&query, 0, 10).await?;
        C::version_of(page.records, id).ok_or_else(|| PlatformError::NotFound {
            platform: C::PLATFORM,
            what: if C::versioned(id) {
                format!("regulation version {id}")
            } else {
                format!("version of {id} in force on {day} (it may not have been in force then)")
            },
        })
    }

    /// Accepts a version's file only on the search host or KOOP's repository host, under
    /// the collection's folder, without credentials, query or fragment.
    pub fn file_url(&self, url: &str) -> Result<Url, PlatformError> {
        file_url(C::PLATFORM, self.service.base(), url, &C::FILES)
    }

    /// The version's file at `url` (from its record), read whole.
    pub async fn file(&self, url: &str) -> Result<Regulation, PlatformError> {
        let url = self.file_url(url)?;
        let fetched = self.service.http().get(url).await?;
        if !fetched.status.is_success() {
            return Err(http::status_error(
                C::PLATFORM,
                &fetched,
                "regulation text",
                &self.service.refusals(),
            ));
        }
        read_regulation(&fetched.body, C::ROOT).map_err(|e| PlatformError::Garbage {
            platform: C::PLATFORM,
            detail: e.to_string(),
        })
    }

    /// The SRU request for `query`.
    pub fn search_url(&self, query: &str, start_record: u64, limit: u32) -> Url {
        self.service.search_url(query, start_record, limit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::bwb::{Bwb, BwbSearch};
    use crate::platforms::cvdr::{Cvdr, CvdrSearch};

    /// The CQL of a search for `words` as in force on `day`, in each collection.
    fn searches(words: &str, day: &str) -> [Result<String, PlatformError>; 2] {
        let (words, in_force_on) = (Some(words.to_owned()), day.to_owned());
        [
            Bwb::cql(&BwbSearch {
                words: words.clone(),
                in_force_on: in_force_on.clone(),
                ..BwbSearch::default()
            }),
            Cvdr::cql(&CvdrSearch {
                words,
                in_force_on,
                ..CvdrSearch::default()
            }),
        ]
    }

    #[test]
    fn a_bad_day_and_a_search_of_nothing_are_refused_before_anything_is_sent() {
        let refused = |asked: Result<String, PlatformError>, want: &str| matches!(asked, Err(PlatformError::BadRequest { sent: false, code, .. }) if code == want);
        for asked in searches("x", "2025-02-30") {
            assert!(refused(asked, "invalid_date"));
        }
        for asked in searches(" \" ( ", "2025-01-01") {
            assert!(refused(asked, "nothing_to_search"));
        }
        assert!(refused(version_query::<Bwb>("BWBR0005537", "morgen"), "invalid_date"));
        assert!(refused(version_query::<Cvdr>("CVDR1", "morgen"), "invalid_date"));
        assert!(refused(version_query::<Bwb>("CVDR1", "2025-01-01"), "invalid_id"));
        assert!(refused(
            version_query::<Cvdr>("BWBR0005537", "2025-01-01"),
            "invalid_id"
        ));
    }

    #[test]
    fn qc_no_words_change_a_querys_structure() {
        fn prop(words: String) -> bool {
            let [bwb, cvdr] = searches(&words, "2025-01-01");
            // One quoted clause, then the day: exactly two quotes, no parenthesis; and no
            // operator in capitals where the service reads them even inside quotes.
            let one_clause =
                |cql: &String| cql.matches('"').count() == 2 && !cql.contains('(') && cql.ends_with("=2025-01-01");
            bwb.iter().all(one_clause) && cvdr.iter().all(|cql| one_clause(cql) && !cql.contains(" AND "))
        }
        quickcheck::QuickCheck::new()
            .tests(2_000)
            .quickcheck(prop as fn(String) -> bool);
    }

    /// Whether `client` accepts each of `ok` and refuses each of `bad` as a file's link.
    fn links<C: RegulationCollection>(client: &RegulationClient<C>, ok: &[&str], bad: &[&str]) {
        for link in ok {
            assert!(client.file_url(link).is_ok(), "{link}");
        }
        for link in bad {
            assert!(
                matches!(client.file_url(link), Err(PlatformError::ForeignLink { .. })),
                "{link}"
            );
        }
    }

    #[test]
    fn a_file_is_read_only_from_its_collections_folder_on_the_known_hosts() {
        let config = HttpConfig::default();
        let bwb = RegulationClient::<Bwb>::new("http://127.0.0.1:9/bwb/sru/Search", &config).unwrap();
        links(
            &bwb,
            &[
                "http://127.0.0.1:9/bwb/bwb/BWBR0005537/2024-01-01_0/xml/BWBR0005537_2024-01-01_0.xml",
                "https://repository.officiele-overheidspublicaties.nl/bwb/BWBR0005537/2024-01-01_0/xml/BWBR0005537_2024-01-01_0.xml",
            ],
            &[
                "http://example.org/bwb/x.xml",
                "http://repository.officiele-overheidspublicaties.nl/bwb/x.xml",
                "http://127.0.0.1:10/bwb/x.xml",
                "http://127.0.0.1:9/other/x.xml",
                "http://127.0.0.1:9/bwb/x.xml?a=b",
                "http://u:p@127.0.0.1:9/bwb/x.xml",
                "not a url",
            ],
        );
        let cvdr = RegulationClient::<Cvdr>::new("http://127.0.0.1:9/cvdr/sru/Search", &config).unwrap();
        links(
            &cvdr,
            &[
                "http://127.0.0.1:9/cvdr/cvdr/CVDR1/1/xml/CVDR1_1.xml",
                "https://repository.officiele-overheidspublicaties.nl/cvdr/CVDR625849/3/xml/CVDR625849_3.xml",
            ],
            &[
                "http://example.org/cvdr/x.xml",
                "http://repository.officiele-overheidspublicaties.nl/cvdr/x.xml",
                "https://repository.officiele-overheidspublicaties.nl/bwb/x.xml",
                "http://127.0.0.1:9/cvdr/x.xml?a=b",
                "not a url",
            ],
        );
    }
}
