//! Tweede Kamer OData v4 client (PLATFORMS.md §3): documents and cases found by words
//! in their title or subject, one document with its links, and the factions and
//! committees reference lists; meetings, their stenographic reports and the members
//! (`meetings.rs`), a report's VLOS file read by `vlos.rs`.
//!
//! Invariants:
//! - Searches never set `$top`: the platform drops `@odata.nextLink` when `$top` is
//!   present (its "wontfix"), so paging follows the nextLink it sends. A search returns
//!   one page of at most 250 rows plus an opaque [`Continuation`].
//! - A continuation is BesluitBron's own token ([`Continuation`]): the typed search and
//!   the platform's `$skip` (or `$skiptoken`), taken strictly from the `@odata.nextLink`
//!   it sent, which must lie on the configured base URL at the entity set's path. The
//!   next page's request is built from the typed search again, never from a link or
//!   from text an assistant hands back; a token BesluitBron would not have issued is
//!   [`PlatformError::ForeignLink`] before anything is sent. So no OData option
//!   (`$top`, `$expand`, `$apply`, another `$filter`) ever reaches the platform from a
//!   continuation.
//! - Text put into a filter is quoted as an OData string literal (a `'` is doubled), so
//!   a search word can never change the filter's structure.
//! - Deleted records (`Verwijderd`) are left out unless asked for.
//! - Reference lists are followed to the end, but over at most [`MAX_REFERENCE_PAGES`] pages.
//!
//! - Votes are read as a case's decisions (`Zaak?$expand=Besluit`, the one relation
//!   expanded) and then the `Stemming` rows of those decisions, following the platform's
//!   own `@odata.nextLink` over at most [`MAX_VOTE_PAGES`] pages.
//!
//! Its rooms: the searches by words with their continuations, and how a page is read
//! (`pages.rs`); documents and their files (`documents.rs`); cases with their decisions
//! and the votes on them (`cases.rs`); meetings, reports and members (`meetings.rs`); the
//! records as the platform writes them (`wire.rs`). This file holds what they share: the
//! client, its numbers and limits, and how the platform's refusals are read.
//!
//! What this module does not do: other `$expand` relations (actors, versions) than
//! those named here and in `meetings.rs`, the
//! SyncFeed, download files (it returns their URL), or impose a limit — the platform
//! publishes none; the scheduler may still pace calls.

use reqwest::Url;
use serde::de::DeserializeOwned;

use super::http::{self, Asked, Fetched, HttpConfig, PlatformError, PlatformHttp, Refusal, RefusalFormat};
use besluitbron_core::{Platform, PlatformId, Service, ServiceId};
pub use http::is_guid;

mod cases;
mod documents;
mod meetings;
mod pages;
pub mod vlos;
mod wire;

pub use cases::CasesWithDecisions;
pub use documents::{DocumentLinks, TkDocument};
pub use meetings::{DossierNumber, MAX_MOTIONS_PER_REQUEST, MeetingSearch, MeetingsPage};
pub use pages::{Continuation, MAX_CONTINUATION_CHARS, MAX_OFFSET, MAX_SKIP, PAGE_ROWS, TkPage, TkSearch};
pub use wire::{
    Activiteit, Besluit, Commissie, Document, DocumentPublicatie, Fractie, FractieZetel, FractieZetelPersoon,
    Kamerstukdossier, Persoon, Stemming, Vergadering, VergaderingVerslagen, Verslag, VerslagVergadering, Zaak,
    ZaakBesluiten, ZaakDossiers,
};
use wire::{ODataErrorBody, ODataPage};

/// Errors of the Tweede Kamer client (the shared platform error type).
pub type TkError = PlatformError;

/// The upstream service its connector calls, with the limit BesluitBron keeps there by
/// default: No limit published and none observed: calls pass straight through.
pub const SERVICE: ServiceId = ServiceId::of(&Service {
    id: "tk",
    name: "the Tweede Kamer's open data portal (gegevensmagazijn.tweedekamer.nl)",
    limit: None,
    max_in_flight: None,
});

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "tk",
    name: "Tweede Kamer",
});

/// Words a search may combine (each adds a clause to the filter). The `tk_search` tool
/// refuses more by this same constant.
pub const MAX_WORDS: usize = 10;
/// Pages a reference list is followed over before giving up.
pub const MAX_REFERENCE_PAGES: usize = 20;
/// Pages of votes followed for one question (a roll call is 150 rows, a page 250).
pub const MAX_VOTE_PAGES: usize = 8;
/// Decisions whose votes one question asks for (each adds a clause to the filter).
pub const MAX_VOTED_DECISIONS: usize = 40;

/// True for a number as the Kamer writes it: four digits of the year, `letter`, then
/// five or six digits.
fn is_numbered(text: &str, letter: u8) -> bool {
    let b = text.as_bytes();
    (10..=11).contains(&b.len())
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == letter
        && b[5..].iter().all(u8::is_ascii_digit)
}

/// True for a case number as the Kamer writes it: `2025Z17647`.
pub fn is_case_number(text: &str) -> bool {
    is_numbered(text, b'Z')
}

/// True for a document number as the Kamer writes it: `2021D02426`.
pub fn is_document_number(text: &str) -> bool {
    is_numbered(text, b'D')
}

/// True for an activity number as the Kamer writes it: `2025A04597`.
pub fn is_activity_number(text: &str) -> bool {
    is_numbered(text, b'A')
}

/// A request refused before anything was sent: `code` and what is wrong.
fn refused(code: &str, message: String) -> TkError {
    PlatformError::BadRequest {
        sent: false,
        platform: PLATFORM,
        code: code.to_owned(),
        message,
    }
}

/// Quotes `text` as an OData string literal: `'` becomes `''`, and the whole is put in quotes.
pub fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// A file the platform served: its bytes (under the client's body cap), the
/// `Content-Type` it claimed, and where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TkFile {
    /// The whole body.
    pub bytes: Vec<u8>,
    /// The `Content-Type` header as sent (it can be wrong).
    pub content_type: Option<String>,
    /// The URL that answered.
    pub url: String,
}

/// An entity set this client reads.
trait EntitySet: DeserializeOwned {
    /// Its name in the URL.
    const SET: &'static str;
}

/// An entity set searched by words and dates.
trait Searchable: EntitySet {
    /// The field a date range applies to (and results are ordered by, newest first).
    const DATE_FIELD: &'static str;
}

impl EntitySet for Document {
    const SET: &'static str = "Document";
}

impl Searchable for Document {
    const DATE_FIELD: &'static str = "Datum";
}

impl EntitySet for Zaak {
    const SET: &'static str = "Zaak";
}

impl Searchable for Zaak {
    const DATE_FIELD: &'static str = "GestartOp";
}

impl EntitySet for DocumentPublicatie {
    const SET: &'static str = "DocumentPublicatie";
}

impl EntitySet for ZaakBesluiten {
    const SET: &'static str = "Zaak";
}

impl EntitySet for Stemming {
    const SET: &'static str = "Stemming";
}

impl EntitySet for Fractie {
    const SET: &'static str = "Fractie";
}

impl EntitySet for Commissie {
    const SET: &'static str = "Commissie";
}

/// The Tweede Kamer OData client.
#[derive(Debug)]
pub struct TkClient {
    http: PlatformHttp,
    base: Url,
    text_pool: Option<&'static crate::text::ExtractPool>,
}

impl TkClient {
    /// A client for the OData root at `base_url` (e.g.
    /// `https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0`).
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<TkClient, TkError> {
        Ok(TkClient {
            http: PlatformHttp::new(PLATFORM, config, "application/json")?,
            base: http::parse_base_url(PLATFORM, base_url)?,
            text_pool: None,
        })
    }

    /// The same client reading document text in `pool` (the process's one pool).
    pub fn with_text_pool(mut self, pool: &'static crate::text::ExtractPool) -> TkClient {
        self.text_pool = Some(pool);
        self
    }

    /// The pool document text is read in: the one given, else the process's pool.
    pub fn text_pool(&self) -> &'static crate::text::ExtractPool {
        self.text_pool
            .unwrap_or_else(|| crate::text::ExtractPool::shared(0, crate::text::Caps::default()))
    }

    /// The file at `url` (`what` names it in an error): its bytes, as served.
    pub(super) async fn file(&self, url: &str, what: &str) -> Result<TkFile, TkError> {
        let url = Url::parse(url).map_err(|e| PlatformError::Config {
            platform: PLATFORM,
            detail: format!("cannot form a file URL: {e}"),
        })?;
        let fetched = self.http.get(url).await?;
        if !fetched.status.is_success() {
            return Err(http::status_error(PLATFORM, &fetched, what, &REFUSALS));
        }
        Ok(TkFile {
            content_type: fetched.content_type().map(str::to_owned),
            url: fetched.url.to_string(),
            bytes: fetched.body,
        })
    }

    pub(super) fn decode<T: DeserializeOwned>(&self, fetched: &Fetched, asked: Asked<'_>) -> Result<T, TkError> {
        http::read_json(PLATFORM, fetched, asked, &REFUSALS)
    }

    /// Accepts `link` only on the base URL ([`http::link_on_base`]) and at the path of `set`.
    pub(super) fn check_link(&self, set: &str, link: &str) -> Result<Url, TkError> {
        let url = http::link_on_base(PLATFORM, &self.base, link)?;
        let want = format!("{}/{set}", self.base.path().trim_end_matches('/'));
        if url.path() != want {
            return Err(PlatformError::ForeignLink {
                platform: PLATFORM,
                detail: format!("the link is not at the {set} entity set"),
            });
        }
        Ok(url)
    }
}

/// How the OData API explains a 400: `{"error": {code, message}}`; the code is often
/// empty, and then `invalid_query`.
const REFUSALS: RefusalFormat = RefusalFormat {
    default_code: "invalid_query",
    read: read_refusal,
};

fn read_refusal(body: &[u8]) -> Option<Refusal> {
    let ODataErrorBody { error } = serde_json::from_slice(body).ok()?;
    Some(Refusal {
        code: error.code,
        message: error.message,
    })
}

/// Reads `fetched` as each answer the Tweede Kamer gives (a page of documents, zaken,
/// zaken with their decisions, votes, factions, committees, meetings, activities,
/// members, motions' cases; one document, meeting or report record): how many of
/// them it is. The fuzz targets' entry point and the complete-answer tests'; never
/// panics, whatever `fetched` holds.
#[doc(hidden)]
pub fn read_every_answer(fetched: &Fetched) -> usize {
    fn page<T: DeserializeOwned>(fetched: &Fetched) -> usize {
        usize::from(http::read_json::<ODataPage<T>>(PLATFORM, fetched, "page", &REFUSALS).is_ok())
    }
    page::<Document>(fetched)
        + page::<Zaak>(fetched)
        + page::<ZaakBesluiten>(fetched)
        + page::<Stemming>(fetched)
        + page::<Fractie>(fetched)
        + page::<Commissie>(fetched)
        + page::<VergaderingVerslagen>(fetched)
        + page::<Activiteit>(fetched)
        + page::<FractieZetelPersoon>(fetched)
        + page::<ZaakDossiers>(fetched)
        + usize::from(http::read_json::<Document>(PLATFORM, fetched, "document", &REFUSALS).is_ok())
        + usize::from(http::read_json::<VergaderingVerslagen>(PLATFORM, fetched, "meeting", &REFUSALS).is_ok())
        + usize::from(http::read_json::<VerslagVergadering>(PLATFORM, fetched, "report", &REFUSALS).is_ok())
}

/// Whether `filter` is well-formed as BesluitBron writes OData filters: every literal
/// quoted (`'…'`, a quote inside doubled), and outside literals only names, numbers,
/// dates, parentheses, commas and spaces — no operator can come from the input.
#[cfg(any(test, fuzzing))]
pub fn odata_is_well_formed(filter: &str) -> bool {
    let mut chars = filter.chars().peekable();
    let mut depth = 0i64;
    while let Some(c) = chars.next() {
        match c {
            '\'' => loop {
                match chars.next() {
                    None => return false,
                    Some('\'') if chars.peek() == Some(&'\'') => {
                        chars.next();
                    }
                    Some('\'') => break,
                    Some(_) => {}
                }
            },
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return false;
                }
            }
            c if c.is_ascii_alphanumeric() || " ,-:".contains(c) => {}
            _ => return false,
        }
    }
    depth == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A client of a base URL nothing listens at: for what is decided before sending.
    pub(super) fn client() -> TkClient {
        TkClient::new("http://127.0.0.1:9/OData/v4/2.0", &HttpConfig::default()).unwrap()
    }

    #[test]
    fn continuations_must_stay_on_the_base_url_and_entity_set() {
        let c = client();
        assert!(
            c.check_link("Document", "http://127.0.0.1:9/OData/v4/2.0/Document?$skip=250")
                .is_ok()
        );
        for foreign in [
            "http://example.org/OData/v4/2.0/Document?$skip=250",
            "https://127.0.0.1:9/OData/v4/2.0/Document",
            "http://127.0.0.1:10/OData/v4/2.0/Document",
            "http://127.0.0.1:9/OData/v4/2.0/Zaak",
            "http://127.0.0.1:9/elsewhere/Document",
            "http://user:pw@127.0.0.1:9/OData/v4/2.0/Document",
            "not a url",
        ] {
            assert!(
                matches!(
                    c.check_link("Document", foreign),
                    Err(PlatformError::ForeignLink { .. })
                ),
                "{foreign} must be refused"
            );
        }
    }

    #[test]
    fn the_well_formed_check_accepts_what_the_builder_writes_and_refuses_injections() {
        let mut search = TkSearch::words(vec!["motie".to_owned(), "O'Brien".to_owned(), "a) or (true".to_owned()]);
        search.soort = Some("Brief".into());
        search.date_from = Some("2026-01-01".into());
        let f = search.filter("GewijzigdOp").ok().flatten().expect("a filter");
        assert!(odata_is_well_formed(&f), "{f}");
        assert!(f.contains("'O''Brien'"), "{f}");
        assert!(!odata_is_well_formed("Titel eq 'x' or 1 eq 1;"));
        assert!(!odata_is_well_formed("contains(Titel,'open"));
        assert!(!odata_is_well_formed("(a))"));
    }

    #[test]
    fn qc_whatever_goes_into_the_odata_builder_what_comes_out_is_well_formed() {
        fn prop(words: Vec<String>, soort: Option<String>) -> bool {
            let mut search = TkSearch::words(words);
            search.soort = soort;
            search
                .filter("GewijzigdOp")
                .ok()
                .flatten()
                .is_none_or(|f| odata_is_well_formed(&f))
        }
        quickcheck::QuickCheck::new()
            .tests(2_000)
            .quickcheck(prop as fn(Vec<String>, Option<String>) -> bool);
    }
}
