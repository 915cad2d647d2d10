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
//! What this module does not do: other `$expand` relations (actors, versions) than
//! those named here and in `meetings.rs`, the
//! SyncFeed, download files (it returns their URL), or impose a limit — the platform
//! publishes none; the scheduler may still pace calls.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::http::{self, Asked, Fetched, HttpConfig, PlatformError, PlatformHttp, Refusal, RefusalFormat};
use besluitbron_core::{Platform, PlatformId, Service, ServiceId};
pub use http::is_guid;

mod meetings;
pub mod vlos;
mod wire;

pub use meetings::{DossierNumber, MAX_MOTIONS_PER_REQUEST, MeetingSearch, MeetingsPage};
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

/// Cases found with their decisions (`Zaak?$expand=Besluit`): at most one page.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CasesWithDecisions {
    /// The cases, newest first.
    pub cases: Vec<ZaakBesluiten>,
    /// Total matches, when asked for.
    pub count: Option<u64>,
    /// The platform had more than this page.
    pub more: bool,
}

/// Quotes `text` as an OData string literal: `'` becomes `''`, and the whole is put in quotes.
pub fn quote_literal(text: &str) -> String {
    format!("'{}'", text.replace('\'', "''"))
}

/// The longest continuation token accepted (those BesluitBron issues for the longest
/// searches the tool allows are well under half of it).
pub const MAX_CONTINUATION_CHARS: usize = 2000;
/// The largest `$skip` a continuation may carry.
pub const MAX_SKIP: u64 = 10_000_000;
/// The largest `offset` a search takes: the last record of the page at [`MAX_SKIP`].
pub const MAX_OFFSET: u64 = MAX_SKIP + PAGE_ROWS as u64 - 1;
/// The longest word, `soort` or `$skiptoken` a continuation may carry.
const MAX_TOKEN_FIELD_CHARS: usize = 500;

/// A search for documents or cases.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TkSearch {
    /// Every word must occur in the title or in the subject (case as the platform compares).
    pub words: Vec<String>,
    /// Only this kind (`Soort`), e.g. `Motie`.
    pub soort: Option<String>,
    /// First day, `YYYY-MM-DD` (on `Datum` for documents, `GestartOp` for cases).
    pub date_from: Option<String>,
    /// Last day, inclusive, `YYYY-MM-DD`.
    pub date_to: Option<String>,
    /// Also return records the platform marks deleted.
    pub include_deleted: bool,
    /// Ask for the total number of matches (`$count=true`).
    pub count: bool,
}

impl TkSearch {
    /// A search for records containing all `words`.
    pub fn words<I: IntoIterator<Item = S>, S: Into<String>>(words: I) -> TkSearch {
        TkSearch {
            words: words.into_iter().map(Into::into).collect(),
            ..TkSearch::default()
        }
    }

    /// The `$filter` for this search, with `date_field` for the date range; `None` when
    /// nothing is filtered.
    pub fn filter(&self, date_field: &str) -> Result<Option<String>, TkError> {
        let bad = |code: &str, message: String| PlatformError::BadRequest {
            sent: false,
            platform: PLATFORM,
            code: code.to_owned(),
            message,
        };
        let words: Vec<&str> = self.words.iter().map(|w| w.trim()).filter(|w| !w.is_empty()).collect();
        if words.len() > MAX_WORDS {
            return Err(bad(
                "too_many_words",
                format!("{} words; use at most {MAX_WORDS}", words.len()),
            ));
        }
        let mut clauses: Vec<String> = words
            .iter()
            .map(|w| {
                let lit = quote_literal(w);
                format!("(contains(Titel,{lit}) or contains(Onderwerp,{lit}))")
            })
            .collect();
        if let Some(soort) = self.soort.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            clauses.push(format!("Soort eq {}", quote_literal(soort)));
        }
        for (date, op) in [(&self.date_from, "ge"), (&self.date_to, "le")] {
            if let Some(date) = date {
                if !crate::calendar::is_day(date) {
                    return Err(bad(
                        "invalid_date",
                        format!("`{date}` is not a date written YYYY-MM-DD"),
                    ));
                }
                clauses.push(format!("{date_field} {op} {date}"));
            }
        }
        if !self.include_deleted {
            clauses.push("Verwijderd eq false".to_owned());
        }
        Ok((!clauses.is_empty()).then(|| clauses.join(" and ")))
    }
}

/// Where the next page of a search is, as BesluitBron issues it: the entity set, the
/// typed search and the position the platform's `@odata.nextLink` named (its `$skip`
/// or `$skiptoken`, nothing else of the link). Handed to an assistant as an opaque token
/// (`tk1.` and the base64url of compact JSON) and read back by [`Continuation::parse`],
/// which accepts exactly the tokens BesluitBron issues: the next page is asked with the
/// search rebuilt from its typed parameters, so the token can never carry an OData
/// option of its own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Continuation {
    token: String,
    page: PageToken,
}

/// What a continuation holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PageToken {
    /// `Document` or `Zaak`.
    set: String,
    search: TkSearch,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skip: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skiptoken: Option<String>,
    /// The first record of the platform's page an answer shows (BesluitBron shows a
    /// window of the page the platform sent; the page itself is asked once).
    #[serde(default, skip_serializing_if = "is_zero")]
    from: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The most records the platform sends in one page (and so the largest `from`, less one).
pub const PAGE_ROWS: u32 = 250;

/// The token prefix (a new format gets a new one, and old tokens are refused).
const TOKEN_PREFIX: &str = "tk1.";

impl Continuation {
    /// The token for `page`; a position that cannot be written is an error, never an
    /// empty token.
    fn new(page: PageToken) -> Result<Continuation, TkError> {
        let json = serde_json::to_vec(&page).map_err(|e| PlatformError::Garbage {
            platform: PLATFORM,
            detail: format!("the next page's position could not be written as a continuation ({e})"),
        })?;
        Ok(Continuation {
            token: format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(json)),
            page,
        })
    }

    /// Reads a token handed back by an assistant: only a token exactly as BesluitBron
    /// issues it (its prefix, canonical encoding and JSON; an entity set this client
    /// searches; a search the tool would accept; one position within bounds) is a
    /// continuation. Anything else — a URL, an OData query, a token altered by hand — is
    /// [`PlatformError::ForeignLink`], and nothing is sent.
    pub fn parse(token: &str) -> Result<Continuation, TkError> {
        let refuse = |detail: &str| PlatformError::ForeignLink {
            platform: PLATFORM,
            detail: format!("{detail}; pass the `continuation` of a previous answer exactly as given"),
        };
        if token.len() > MAX_CONTINUATION_CHARS {
            return Err(refuse("the continuation is too long"));
        }
        let Some(encoded) = token.strip_prefix(TOKEN_PREFIX) else {
            return Err(refuse("this is not a continuation BesluitBron issued"));
        };
        let json = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| refuse("the continuation is damaged"))?;
        let page: PageToken = serde_json::from_slice(&json).map_err(|_| refuse("the continuation is damaged"))?;
        let date_field = match page.set.as_str() {
            s if s == Document::SET => Document::DATE_FIELD,
            s if s == Zaak::SET => Zaak::DATE_FIELD,
            _ => return Err(refuse("the continuation names no entity set BesluitBron searches")),
        };
        let long = |text: &str| text.chars().count() > MAX_TOKEN_FIELD_CHARS;
        let search = &page.search;
        if search.words.is_empty()
            || search.words.iter().any(|w| w.trim().is_empty() || long(w))
            || search.soort.as_deref().is_some_and(long)
            || search.filter(date_field).is_err()
        {
            return Err(refuse("the continuation holds a search BesluitBron does not make"));
        }
        let position_ok = page.from < PAGE_ROWS
            && match (&page.skip, &page.skiptoken) {
                (Some(skip), None) => *skip > 0 && *skip <= MAX_SKIP,
                (None, Some(token)) => is_skiptoken(token),
                // Further into the first page.
                (None, None) => page.from > 0,
                _ => false,
            };
        if !position_ok {
            return Err(refuse("the continuation names no page BesluitBron issued"));
        }
        let continuation =
            Continuation::new(page).map_err(|_| refuse("this is not a continuation BesluitBron issued"))?;
        if continuation.token != token {
            return Err(refuse("this is not a continuation BesluitBron issued"));
        }
        Ok(continuation)
    }

    /// The token's text, as handed to an assistant.
    pub fn as_str(&self) -> &str {
        &self.token
    }

    /// The entity set it pages: `Document` or `Zaak`.
    pub fn entity_set(&self) -> &str {
        &self.page.set
    }

    /// The search it continues.
    pub fn search(&self) -> &TkSearch {
        &self.page.search
    }

    /// The first record of the platform's page to show.
    pub fn from(&self) -> u32 {
        self.page.from
    }

    /// True when it points into the search's first page (no position at the platform).
    pub fn is_first_page(&self) -> bool {
        self.page.skip.is_none() && self.page.skiptoken.is_none()
    }

    /// The platform page it names, as a token without `from`: the same for every window
    /// of one page, so the page is asked once and kept once.
    pub fn page_token(&self) -> Result<String, TkError> {
        Continuation::new(PageToken {
            from: 0,
            ..self.page.clone()
        })
        .map(|c| c.token)
    }

    /// The same platform page, shown from record `from`.
    pub fn within(&self, from: u32) -> Result<Continuation, TkError> {
        Continuation::new(PageToken {
            from,
            ..self.page.clone()
        })
    }

    /// The platform page of `search` in `set` (`Document` or `Zaak`) that holds record
    /// `offset` of the search (from 0), shown from that record: the first page below
    /// [`PAGE_ROWS`], else the page at `$skip` (a multiple of [`PAGE_ROWS`]; the
    /// platform's `$skip` paging, PLATFORMS.md §3). An offset past [`MAX_OFFSET`] is read
    /// as that one: the tool refuses it first.
    pub fn at_offset(set: &str, search: &TkSearch, offset: u64) -> Result<Continuation, TkError> {
        let rows = u64::from(PAGE_ROWS);
        let skip = offset.min(MAX_OFFSET) / rows * rows;
        Continuation::new(PageToken {
            set: set.to_owned(),
            search: search.clone(),
            skip: (skip > 0).then_some(skip),
            skiptoken: None,
            from: (offset % rows) as u32,
        })
    }

    /// The search's position of the page's first record, when the page is named by
    /// `$skip` (0 for the first page; `None` for a `$skiptoken` page).
    pub fn base(&self) -> Option<u64> {
        match (&self.page.skip, &self.page.skiptoken) {
            (Some(skip), _) => Some(*skip),
            (None, None) => Some(0),
            (None, Some(_)) => None,
        }
    }

    /// The first page of `search` in `set` (`Document` or `Zaak`), shown from record
    /// `from` (more than 0).
    pub fn first_page(set: &str, search: &TkSearch, from: u32) -> Result<Continuation, TkError> {
        Continuation::new(PageToken {
            set: set.to_owned(),
            search: search.clone(),
            skip: None,
            skiptoken: None,
            from,
        })
    }
}

/// True for a `$skiptoken` BesluitBron carries: 1 to 500 printable ASCII characters
/// without spaces (it is put into the query encoded, so nothing in it can add an option).
fn is_skiptoken(token: &str) -> bool {
    !token.is_empty() && token.len() <= MAX_TOKEN_FIELD_CHARS && token.bytes().all(|b| b.is_ascii_graphic())
}

/// One page of records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TkPage<T> {
    /// The records (at most 250).
    pub items: Vec<T>,
    /// Total matches, when asked for with [`TkSearch::count`].
    pub count: Option<u64>,
    /// The next page, if any.
    pub next: Option<Continuation>,
}

/// Where a document lives on the platform.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentLinks {
    /// The record: `{base}/Document({id})`.
    pub record_url: String,
    /// The file (PDF or DOC(X)): `{base}/Document({id})/resource`.
    pub resource_url: String,
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

/// A document with its links.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TkDocument {
    /// The record.
    pub document: Document,
    /// Its addresses.
    pub links: DocumentLinks,
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

    /// The first page of documents matching `search`, newest first.
    pub async fn search_documents(&self, search: &TkSearch) -> Result<TkPage<Document>, TkError> {
        self.search::<Document>(search).await
    }

    /// The page of documents a continuation from [`TkClient::search_documents`] points at.
    pub async fn next_documents(&self, next: &Continuation) -> Result<TkPage<Document>, TkError> {
        self.next::<Document>(next).await
    }

    /// The first page of cases matching `search`, most recently started first.
    pub async fn search_cases(&self, search: &TkSearch) -> Result<TkPage<Zaak>, TkError> {
        self.search::<Zaak>(search).await
    }

    /// The page of cases a continuation from [`TkClient::search_cases`] points at.
    pub async fn next_cases(&self, next: &Continuation) -> Result<TkPage<Zaak>, TkError> {
        self.next::<Zaak>(next).await
    }

    /// One document by its GUID, with its record and file addresses.
    pub async fn document(&self, id: &str) -> Result<TkDocument, TkError> {
        let links = self.document_links(id)?;
        let url = Url::parse(&links.record_url).map_err(|e| PlatformError::Config {
            platform: PLATFORM,
            detail: format!("cannot form a record URL: {e}"),
        })?;
        let fetched = self.http.get(url).await?;
        let what = format!("document {}", http::brief(id));
        let document = self.decode::<Document>(&fetched, Asked::Record(&what))?;
        Ok(TkDocument { document, links })
    }

    /// The document numbered `number` (e.g. `2021D02426`, not deleted) with its links:
    /// the number people and tk_search list first, read through the `Document` set.
    pub async fn document_by_number(&self, number: &str) -> Result<TkDocument, TkError> {
        if !is_document_number(number) {
            return Err(refused(
                "invalid_document_number",
                format!(
                    "`{}` is not a document number (such as 2021D02426)",
                    http::brief(number)
                ),
            ));
        }
        let filter = format!("DocumentNummer eq {} and Verwijderd eq false", quote_literal(number));
        let document: Document = self
            .first_where(&filter, None, || format!("document numbered {number}"))
            .await?;
        let links = self.document_links(&document.id.to_ascii_lowercase())?;
        Ok(TkDocument { document, links })
    }

    /// The addresses of a document, without asking the platform.
    pub fn document_links(&self, id: &str) -> Result<DocumentLinks, TkError> {
        if !is_guid(id) {
            return Err(PlatformError::BadRequest {
                sent: false,
                platform: PLATFORM,
                code: "invalid_guid".to_owned(),
                message: format!("`{}` is not a document id (a GUID such as 7a9b77f1-…)", http::brief(id)),
            });
        }
        let record = http::join(PLATFORM, &self.base, &format!("Document({id})"))?;
        Ok(DocumentLinks {
            resource_url: format!("{record}/resource"),
            record_url: record.into(),
        })
    }

    /// The document's file: `/Document({id})/resource` (PDF, Word, RTF or XML; the
    /// `Content-Type` can be wrong, so the caller sniffs the bytes).
    pub async fn document_file(&self, id: &str) -> Result<TkFile, TkError> {
        let links = self.document_links(id)?;
        self.file(&links.resource_url, &format!("file of document {id}")).await
    }

    /// The id of the document's KOOP XML rendition, if it has one (PLATFORMS.md §10.5):
    /// `DocumentPublicatie` not deleted, `DocumentType eq 'Xml'`, of the version of the
    /// document numbered `number`.
    pub async fn xml_rendition(&self, number: &str) -> Result<Option<String>, TkError> {
        let mut url = http::join(PLATFORM, &self.base, DocumentPublicatie::SET)?;
        url.query_pairs_mut().append_pair(
            "$filter",
            &format!(
                "Verwijderd eq false and DocumentType eq 'Xml' and DocumentVersie/Document/Nummer eq {}",
                quote_literal(number)
            ),
        );
        let (page, _) = self.page_with_link::<DocumentPublicatie>(url).await?;
        Ok(page
            .items
            .into_iter()
            .find(|p| !p.verwijderd && is_guid(&p.id.to_ascii_lowercase()))
            .map(|p| p.id.to_ascii_lowercase()))
    }

    /// The rendition's file: `/DocumentPublicatie({id})/resource`.
    pub async fn rendition_file(&self, id: &str) -> Result<TkFile, TkError> {
        if !is_guid(id) {
            return Err(PlatformError::Garbage {
                platform: PLATFORM,
                detail: "a DocumentPublicatie id is not a GUID".into(),
            });
        }
        let url = http::join(PLATFORM, &self.base, &format!("DocumentPublicatie({id})/resource"))?;
        self.file(url.as_str(), &format!("XML rendition {id}")).await
    }

    async fn file(&self, url: &str, what: &str) -> Result<TkFile, TkError> {
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

    /// The case numbered `number` (e.g. `2025Z17647`, not deleted) with its decisions.
    pub async fn case_with_decisions(&self, number: &str) -> Result<CasesWithDecisions, TkError> {
        if !is_case_number(number) {
            return Err(PlatformError::BadRequest {
                sent: false,
                platform: PLATFORM,
                code: "invalid_case_number".to_owned(),
                message: format!("`{}` is not a case number (such as 2025Z17647)", http::brief(number)),
            });
        }
        let filter = format!("Nummer eq {} and Verwijderd eq false", quote_literal(number));
        self.cases_with_decisions(&filter).await
    }

    /// The cases matching `search` (words in the title or subject, dates on `GestartOp`),
    /// most recently started first, with their decisions: the platform's first page only.
    pub async fn search_cases_with_decisions(&self, search: &TkSearch) -> Result<CasesWithDecisions, TkError> {
        let filter = search
            .filter(Zaak::DATE_FIELD)?
            .unwrap_or_else(|| "Verwijderd eq false".to_owned());
        self.cases_with_decisions(&filter).await
    }

    async fn cases_with_decisions(&self, filter: &str) -> Result<CasesWithDecisions, TkError> {
        let mut url = http::join(PLATFORM, &self.base, ZaakBesluiten::SET)?;
        url.query_pairs_mut()
            .append_pair("$filter", filter)
            .append_pair("$orderby", &format!("{} desc", Zaak::DATE_FIELD))
            .append_pair("$count", "true")
            .append_pair("$expand", "Besluit");
        let (page, next) = self.page_with_link::<ZaakBesluiten>(url).await?;
        Ok(CasesWithDecisions {
            cases: page.items,
            count: page.count,
            more: next.is_some(),
        })
    }

    /// The first page of the votes cast on the decisions `besluit_ids` (GUIDs, at most
    /// [`MAX_VOTED_DECISIONS`]): its URL, or why it cannot be asked.
    pub fn votes_url(&self, besluit_ids: &[String]) -> Result<Url, TkError> {
        let bad = |message: String| PlatformError::BadRequest {
            sent: false,
            platform: PLATFORM,
            code: "invalid_decisions".to_owned(),
            message,
        };
        if besluit_ids.is_empty() || besluit_ids.len() > MAX_VOTED_DECISIONS {
            return Err(bad(format!(
                "{} decisions asked; ask for 1 to {MAX_VOTED_DECISIONS}",
                besluit_ids.len()
            )));
        }
        if let Some(id) = besluit_ids.iter().find(|id| !is_guid(id)) {
            return Err(bad(format!("`{}` is not a decision id (a GUID)", http::brief(id))));
        }
        let ids: Vec<String> = besluit_ids.iter().map(|id| format!("Besluit_Id eq {id}")).collect();
        let mut url = http::join(PLATFORM, &self.base, Stemming::SET)?;
        url.query_pairs_mut()
            .append_pair("$filter", &format!("Verwijderd eq false and ({})", ids.join(" or ")));
        Ok(url)
    }

    /// One page of votes: at `url` ([`TkClient::votes_url`], or the next-page link a page
    /// gave, checked on the base URL at the Stemming set); its votes (not deleted) and the
    /// next page's link, when the platform gave one. One request: the caller admits each
    /// page as it is asked for, and follows at most [`MAX_VOTE_PAGES`].
    pub async fn votes_page(&self, url: &str) -> Result<(Vec<Stemming>, Option<String>), TkError> {
        let url = self.check_link(Stemming::SET, url)?;
        let (page, next): (TkPage<Stemming>, _) = self.page_with_link(url).await?;
        let votes = page.items.into_iter().filter(|v| !v.verwijderd).collect();
        Ok((votes, next.map(|u| u.to_string())))
    }

    /// The record address of the case `id` (a GUID), without asking the platform.
    pub fn case_url(&self, id: &str) -> Option<String> {
        is_guid(id)
            .then(|| http::join(PLATFORM, &self.base, &format!("Zaak({id})")).ok())
            .flatten()
            .map(String::from)
    }

    /// All current factions (not deleted), following every page (bounded).
    pub async fn factions(&self) -> Result<Vec<Fractie>, TkError> {
        self.reference_list().await
    }

    /// All current committees (not deleted), following every page (bounded).
    pub async fn committees(&self) -> Result<Vec<Commissie>, TkError> {
        self.reference_list().await
    }

    async fn search<T: Searchable>(&self, search: &TkSearch) -> Result<TkPage<T>, TkError> {
        let url = self.search_url::<T>(search, None)?;
        self.search_page(search, url).await
    }

    async fn next<T: Searchable>(&self, next: &Continuation) -> Result<TkPage<T>, TkError> {
        if next.entity_set() != T::SET {
            return Err(PlatformError::ForeignLink {
                platform: PLATFORM,
                detail: "the continuation belongs to a search of another kind".to_owned(),
            });
        }
        let url = self.search_url::<T>(&next.page.search, Some(&next.page))?;
        self.search_page(&next.page.search, url).await
    }

    /// The request of a search, at the position of `at` (or the first page): built only
    /// from the typed search and the position.
    fn search_url<T: Searchable>(&self, search: &TkSearch, at: Option<&PageToken>) -> Result<Url, TkError> {
        let filter = search.filter(T::DATE_FIELD)?;
        let mut url = http::join(PLATFORM, &self.base, T::SET)?;
        {
            let mut q = url.query_pairs_mut();
            if let Some(filter) = &filter {
                q.append_pair("$filter", filter);
            }
            q.append_pair("$orderby", &format!("{} desc", T::DATE_FIELD));
            if search.count {
                q.append_pair("$count", "true");
            }
            if let Some(skip) = at.and_then(|p| p.skip) {
                q.append_pair("$skip", &skip.to_string());
            }
            if let Some(token) = at.and_then(|p| p.skiptoken.as_deref()) {
                q.append_pair("$skiptoken", token);
            }
        }
        Ok(url)
    }

    /// One page of a search, its nextLink turned into a [`Continuation`] of `search`.
    async fn search_page<T: Searchable>(&self, search: &TkSearch, url: Url) -> Result<TkPage<T>, TkError> {
        let (page, next_link) = self.page_with_link::<T>(url).await?;
        let next = match next_link {
            None => None,
            Some(link) => Some(Continuation::new(self.position::<T>(search, &link)?)?),
        };
        Ok(TkPage { next, ..page })
    }

    /// The position a nextLink names, strictly: exactly one `$skip` (a number within
    /// [`MAX_SKIP`]) or one `$skiptoken`; whatever else the link carries is not used.
    fn position<T: Searchable>(&self, search: &TkSearch, link: &Url) -> Result<PageToken, TkError> {
        let garbage = |detail: &str| PlatformError::Garbage {
            platform: PLATFORM,
            detail: detail.to_owned(),
        };
        let mut skip = None;
        let mut skiptoken = None;
        for (name, value) in link.query_pairs() {
            match name.as_ref() {
                "$skip" if skip.is_none() => {
                    let n = value
                        .parse::<u64>()
                        .ok()
                        .filter(|&n| n > 0 && n <= MAX_SKIP)
                        .ok_or_else(|| garbage("the next-page link carries an unusable $skip"))?;
                    skip = Some(n);
                }
                "$skiptoken" if skiptoken.is_none() && is_skiptoken(&value) => skiptoken = Some(value.into_owned()),
                "$skip" | "$skiptoken" => return Err(garbage("the next-page link carries an unusable position")),
                _ => {}
            }
        }
        if skip.is_some() == skiptoken.is_some() {
            return Err(garbage(
                "the next-page link carries neither one $skip nor one $skiptoken",
            ));
        }
        Ok(PageToken {
            set: T::SET.to_owned(),
            search: search.clone(),
            skip,
            skiptoken,
            from: 0,
        })
    }

    /// The first record of `T` that `filter` selects, with `expand`: one request; none is
    /// [`PlatformError::NotFound`] naming `what`.
    async fn first_where<T: EntitySet>(
        &self,
        filter: &str,
        expand: Option<&str>,
        what: impl FnOnce() -> String,
    ) -> Result<T, TkError> {
        let mut url = http::join(PLATFORM, &self.base, T::SET)?;
        url.query_pairs_mut().append_pair("$filter", filter);
        if let Some(expand) = expand {
            url.query_pairs_mut().append_pair("$expand", expand);
        }
        let (page, _): (TkPage<T>, _) = self.page_with_link(url).await?;
        page.items.into_iter().next().ok_or_else(|| PlatformError::NotFound {
            platform: PLATFORM,
            what: what(),
        })
    }

    async fn reference_list<T: EntitySet>(&self) -> Result<Vec<T>, TkError> {
        let mut url = http::join(PLATFORM, &self.base, T::SET)?;
        url.query_pairs_mut().append_pair("$filter", "Verwijderd eq false");
        let mut items = Vec::new();
        for _ in 0..MAX_REFERENCE_PAGES {
            // The platform's own link, checked on the base URL: a reference list is
            // never paged by anything an assistant hands back.
            let (page, next): (TkPage<T>, _) = self.page_with_link(url).await?;
            items.extend(page.items);
            match next {
                None => return Ok(items),
                Some(next) => url = next,
            }
        }
        Err(PlatformError::TooManyPages {
            platform: PLATFORM,
            pages: MAX_REFERENCE_PAGES,
        })
    }

    /// Fetches one page; its nextLink, when it sent one, checked on the base URL at the
    /// entity set's path.
    async fn page_with_link<T: EntitySet>(&self, url: Url) -> Result<(TkPage<T>, Option<Url>), TkError> {
        let fetched = self.http.get(url).await?;
        let page: ODataPage<T> = self.decode(&fetched, Asked::Listing)?;
        let next = match page.next_link {
            None => None,
            Some(link) => Some(self.check_link(T::SET, &link)?),
        };
        let page = TkPage {
            items: page.value,
            count: page.count,
            next: None,
        };
        Ok((page, next))
    }

    fn decode<T: DeserializeOwned>(&self, fetched: &Fetched, asked: Asked<'_>) -> Result<T, TkError> {
        http::read_json(PLATFORM, fetched, asked, &REFUSALS)
    }

    /// Accepts `link` only on the base URL ([`http::link_on_base`]) and at the path of `set`.
    fn check_link(&self, set: &str, link: &str) -> Result<Url, TkError> {
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

    fn client() -> TkClient {
        TkClient::new("http://127.0.0.1:9/OData/v4/2.0", &HttpConfig::default()).unwrap()
    }

    #[test]
    fn filters_and_each_word_over_title_or_subject_and_escape_quotes() {
        let search = TkSearch {
            soort: Some("Motie".into()),
            date_from: Some("2024-01-01".into()),
            date_to: Some("2024-12-31".into()),
            ..TkSearch::words(["stikstof", "'s-Hertogenbosch"])
        };
        assert_eq!(
            search.filter("Datum").unwrap().unwrap(),
            "(contains(Titel,'stikstof') or contains(Onderwerp,'stikstof')) and \
             (contains(Titel,'''s-Hertogenbosch') or contains(Onderwerp,'''s-Hertogenbosch')) and \
             Soort eq 'Motie' and Datum ge 2024-01-01 and Datum le 2024-12-31 and Verwijderd eq false"
        );
        let all = TkSearch {
            include_deleted: true,
            ..TkSearch::default()
        };
        assert_eq!(all.filter("Datum").unwrap(), None);
    }

    #[test]
    fn bad_dates_and_too_many_words_are_refused_before_sending() {
        let bad_date = TkSearch {
            date_from: Some("2024-13-01".into()),
            ..TkSearch::default()
        };
        assert!(
            matches!(bad_date.filter("Datum"), Err(PlatformError::BadRequest { code, .. }) if code == "invalid_date")
        );
        // Said as BesluitBron's own check, not as the Kamer's refusal: the fault is the caller's date.
        let said = bad_date.filter("Datum").expect_err("refused").to_string();
        assert!(
            said.contains("nothing was sent to Tweede Kamer") && !said.contains("Tweede Kamer refused"),
            "{said}"
        );
        let many = TkSearch::words((0..11).map(|i| format!("w{i}")));
        assert!(
            matches!(many.filter("Datum"), Err(PlatformError::BadRequest { code, .. }) if code == "too_many_words")
        );
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
    fn a_window_into_a_page_is_a_continuation_of_the_same_page() {
        let search = TkSearch {
            count: true,
            ..TkSearch::words(["stikstof"])
        };
        let first = Continuation::first_page("Document", &search, 20).expect("a continuation");
        let read = Continuation::parse(first.as_str()).expect("issued, so accepted");
        assert!(read.is_first_page() && read.from() == 20 && read.search() == &search);
        // The first page from its start is the search itself, never a continuation; a
        // window past the platform's page is none BesluitBron issues.
        for from in [0, PAGE_ROWS] {
            let t = Continuation::first_page("Document", &search, from).expect("written");
            assert!(Continuation::parse(t.as_str()).is_err(), "from {from}");
        }
        let later = Continuation::new(PageToken {
            set: "Document".into(),
            search: search.clone(),
            skip: Some(250),
            skiptoken: None,
            from: 0,
        })
        .expect("a continuation");
        let window = later.within(40).expect("a window");
        assert_eq!(Continuation::parse(window.as_str()), Ok(window.clone()));
        assert_eq!(window.page_token().as_deref(), Ok(later.as_str()));
    }

    fn token_of(json: &str) -> String {
        format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(json))
    }

    #[test]
    fn a_continuation_reads_back_only_exactly_as_issued() {
        let issued = Continuation::new(PageToken {
            set: "Zaak".into(),
            search: TkSearch {
                count: true,
                ..TkSearch::words(["stikstof"])
            },
            skip: Some(250),
            skiptoken: None,
            from: 0,
        })
        .expect("a continuation");
        assert_eq!(Continuation::parse(issued.as_str()), Ok(issued.clone()));
        assert_eq!(issued.entity_set(), "Zaak");
        let json = r#"{"set":"Zaak","search":{"words":["stikstof"],"soort":null,"date_from":null,"date_to":null,"include_deleted":false,"count":true},"skip":250}"#;
        assert_eq!(token_of(json), issued.as_str(), "the canonical form");
        let refused = [
            // Not canonical: the same fields, spaced.
            token_of(&json.replace(',', ", ")),
            token_of(&json.replace("Zaak", "Persoon")),
            token_of(&json.replace("250", "0")),
            token_of(&json.replace("250", "99999999999")),
            token_of(&json.replace(r#","skip":250"#, "")),
            token_of(&json.replace(r#""skip":250"#, r#""skip":250,"skiptoken":"x""#)),
            token_of(&json.replace(r#"["stikstof"]"#, "[]")),
            token_of(&json.replace(r#""date_from":null"#, r#""date_from":"2024-13-01""#)),
            token_of(&json.replace(r#""count":true"#, r#""count":true,"filter":"true""#)),
            format!("{}=", issued.as_str()),
            issued.as_str().replacen("tk1.", "tk2.", 1),
            "x".repeat(MAX_CONTINUATION_CHARS + 1),
        ];
        for token in refused {
            assert!(
                matches!(Continuation::parse(&token), Err(PlatformError::ForeignLink { .. })),
                "{token} must be refused"
            );
        }
    }

    #[test]
    fn document_links_need_a_guid() {
        let c = client();
        let links = c.document_links("7a9b77f1-0000-4000-8000-000000000001").unwrap();
        assert_eq!(
            links.resource_url,
            "http://127.0.0.1:9/OData/v4/2.0/Document(7a9b77f1-0000-4000-8000-000000000001)/resource"
        );
        assert!(
            matches!(c.document_links("2024D39058"), Err(PlatformError::BadRequest { code, .. }) if code == "invalid_guid")
        );
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
