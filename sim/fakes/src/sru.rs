//! KOOP's SRU search service, written once for the fakes of every collection it serves
//! (PLATFORMS.md §5, §10.1; `docs/platforms.md`): Officiële Bekendmakingen (`ob`, SRU 2.0 at
//! `repository.overheid.nl/sru`, the collection chosen by `recordSchema` and the CQL) and
//! the Basiswettenbestand and local regulations (`bwb`, `cvdr`, SRU 1.2 at
//! `zoekservice.overheid.nl/sru/Search` with `x-connection`). A collection's fake is an
//! [`SruCollection`] and keeps only what is its own: its service's description
//! ([`SruService`]), how it reads its CQL, which records match, how a record is written,
//! and its files; the routes, the state, the search and its answers are this module's
//! ([`router`]).
//!
//! Invariants:
//! - The request is checked as the real service checks it, in one order: `operation`
//!   (none: the explain answer), a JSON-only `Accept` where the service negotiates,
//!   `version`, the collection (`x-connection` or `recordSchema`), the numbers,
//!   `startRecord >= 10000` (HTTP 504, [`MAX_START_RECORD`]), `startRecord` 0 and
//!   `maximumRecords` over the service's page, then `query`. A refusal is HTTP 200 with a
//!   diagnostic and no count, in the service's own version.
//! - The envelope has the real namespaces: SRU 2.0 `sru:` (OASIS search-ws) with the root
//!   declarations the repository writes (the answers in `corpus/sru/`), SRU 1.2 `srw:`
//!   (`http://www.loc.gov/zing/srw/`); diagnostics `diag:` in the version's diagnostic
//!   namespace. A page is `version`, `numberOfRecords`, `records` (each `recordSchema`,
//!   `recordPacking`, `recordData`, `recordPosition`), `nextRecordPosition` while records
//!   remain after a page that has some, `echoedSearchRetrieveRequest`, warnings as
//!   `diagnostics` beside the count, and (SRU 2.0) `resultCountPrecision`.
//! - A refused query has diagnostics and no count; the service's own trouble
//!   ([`Trouble`], by count of searches whose query was read) is an overload (a system
//!   diagnostic `1/1`, no count), a rejection (`1/10`, no count) or a page that comes back
//!   empty before the end (a count, no records, no next position). `{`, `}` and the like
//!   are the collection's to call a server error ([`Refusal::ServerError`], HTTP 500).
//! - No collection's fake writes any of this itself, and this module names no collection;
//!   the shared faults' answers are KOOP's (no 429 of the service is documented: a storm's
//!   is a small JSON error, [`replies`]).
//!
//! What this module does not do: read CQL beyond splitting the 1.2 collections' simple
//! clauses ([`clauses`]; what an index means is the collection's), `scan`, an explain
//! record, sorting, or JSON beyond refusing to be read as XML.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Query, State};
use axum::http::{HeaderMap, Response, StatusCode, header};
use axum::middleware;
use axum::routing::{MethodRouter, get};

use crate::config::FakeConfig;
use crate::faults::{self, FaultReplies, Faults};
use crate::own::OwnSettings;
use crate::raw_response;
use crate::shared::Shared;

/// The SRU 2.0 response namespace.
pub const SRU20_NS: &str = "http://docs.oasis-open.org/ns/search-ws/sruResponse";
/// The SRU 2.0 diagnostics namespace.
pub const DIAG20_NS: &str = "http://docs.oasis-open.org/ns/search-ws/diagnostic";
/// The SRU 1.2 namespace.
pub const SRU12_NS: &str = "http://www.loc.gov/zing/srw/";
/// The SRU 1.2 diagnostics namespace.
pub const DIAG12_NS: &str = "http://www.loc.gov/zing/srw/diagnostic/";
/// The namespace of KOOP's `gzd` record schema.
pub const GZD_NS: &str = "http://standaarden.overheid.nl/sru";
/// The `recordSchema` a record names (and the repository takes as a request's).
pub const GZD_SCHEMA_URI: &str = "http://standaarden.overheid.nl/sru/";
/// The first `startRecord` the service answers with HTTP 504.
pub const MAX_START_RECORD: u64 = 10_000;
/// The most records one page of `zoekservice` may ask for.
pub const ZOEKSERVICE_MAX_RECORDS: u64 = 100;
/// Records per page when a request does not say.
const DEFAULT_RECORDS: u64 = 10;

/// The root declarations of the repository's SRU 2.0 answers, in its order (the two
/// answers in `corpus/sru/`).
const ROOT20: &[(&str, &str)] = &[
    ("overheidwetgeving", "http://standaarden.overheid.nl/wetgeving/"),
    ("dcterms", "http://purl.org/dc/terms/"),
    ("cd", "http://standaarden.overheid.nl/cup/data"),
    ("sru", SRU20_NS),
    ("gzd", GZD_NS),
    ("diag", DIAG20_NS),
    ("facet", "http://docs.oasis-open.org/ns/search-ws/facetedResults"),
    ("c", "http://standaarden.overheid.nl/collectie/"),
];
/// The root declarations of an SRU 1.2 answer.
const ROOT12: &[(&str, &str)] = &[("srw", SRU12_NS), ("diag", DIAG12_NS)];

/// The SRU version of an answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SruVersion {
    /// SRU 1.2 (`srw:`).
    V1_2,
    /// SRU 2.0 (`sru:`).
    V2_0,
}

impl SruVersion {
    fn of(text: &str) -> Option<SruVersion> {
        match text {
            "1.2" => Some(SruVersion::V1_2),
            "2.0" => Some(SruVersion::V2_0),
            _ => None,
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            SruVersion::V1_2 => "1.2",
            SruVersion::V2_0 => "2.0",
        }
    }

    /// The envelope's prefix.
    fn prefix(self) -> &'static str {
        match self {
            SruVersion::V1_2 => "srw",
            SruVersion::V2_0 => "sru",
        }
    }
}

/// How a request names the collection.
#[derive(Clone, Copy, Debug)]
pub enum Selects {
    /// `x-connection=NAME` (SRU 1.2 at `zoekservice`), compared ignoring case.
    XConnection(&'static str),
    /// `recordSchema=gzd` (or its URI); the CQL chooses the collection (SRU 2.0 at the
    /// repository).
    GzdSchema,
}

/// One collection's search service, as its fake describes it.
#[derive(Debug)]
pub struct SruService {
    /// The version the service answers in, and says what it refuses in.
    pub version: SruVersion,
    /// Whether it answers the other version when asked for it (the repository: `version=1.2`
    /// switches the answer to the SRU 1.2 namespaces, and no `version` is 1.2); otherwise
    /// another version is refused (`1/5`).
    pub answers_other_version: bool,
    /// How a request names the collection.
    pub selects: Selects,
    /// The most records one page may ask for.
    pub max_records: u64,
    /// Namespaces the collection's records use without declaring them, declared on the
    /// root of every answer (the SRU 2.0 root declares the repository's anyway).
    pub record_namespaces: &'static [(&'static str, &'static str)],
    /// The answers' content type.
    pub content_type: &'static str,
    /// Whether a request that accepts only `application/json` gets JSON (the repository
    /// negotiates; the fake's JSON is an envelope without records).
    pub negotiates_json: bool,
}

impl SruService {
    /// `zoekservice.overheid.nl/sru/Search` as it answers the collection
    /// `x-connection=connection`: SRU 1.2 only, `text/xml`, at most 100 records a page, its
    /// records declaring their own namespaces.
    pub const fn zoekservice(connection: &'static str) -> SruService {
        SruService {
            version: SruVersion::V1_2,
            answers_other_version: false,
            selects: Selects::XConnection(connection),
            max_records: ZOEKSERVICE_MAX_RECORDS,
            record_namespaces: &[],
            content_type: "text/xml; charset=utf-8",
            negotiates_json: false,
        }
    }
}

/// What the fake of a collection of `zoekservice` (SRU 1.2 with `x-connection`) can be set
/// to do beyond the faults every fake applies: the service's own trouble, by count of
/// searches whose query parsed. The default is the healthy service. No textual names: the
/// settings are reached through the fake's handle only.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ZoekserviceSettings {
    /// Answer every n-th search with a syntax diagnostic and no count (the service
    /// rejecting a query it usually takes). `None` never.
    pub reject_every: Option<u32>,
    /// Answer every n-th search with a system diagnostic and no count (overload).
    pub overload_every: Option<u32>,
}

impl OwnSettings for ZoekserviceSettings {}

impl ZoekserviceSettings {
    /// The trouble these settings ask for.
    pub fn trouble(&self) -> Trouble {
        Trouble {
            overload_every: self.overload_every,
            reject_every: self.reject_every,
            empty_page_every: None,
        }
    }
}

/// One SRU diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SruDiagnostic {
    /// `info:srw/diagnostic/1/N` or the service's own code (`SEARCH-IGNOREDQTEXT`).
    pub uri: String,
    /// What it is about.
    pub details: String,
    /// The message.
    pub message: String,
}

impl SruDiagnostic {
    /// A diagnostic from its parts.
    pub fn new(uri: &str, details: &str, message: &str) -> SruDiagnostic {
        SruDiagnostic {
            uri: uri.to_owned(),
            details: details.to_owned(),
            message: message.to_owned(),
        }
    }

    /// The standard diagnostic `info:srw/diagnostic/1/{n}`.
    pub fn standard(n: u32, details: &str, message: &str) -> SruDiagnostic {
        SruDiagnostic::new(&format!("info:srw/diagnostic/1/{n}"), details, message)
    }

    /// A query the service cannot parse (`1/10`).
    pub fn syntax(details: &str) -> SruDiagnostic {
        SruDiagnostic::standard(10, details, "Query syntax error")
    }
}

/// Why a collection does not answer a query with records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// 200 with this diagnostic and no count.
    Diagnostic(SruDiagnostic),
    /// The service fails: HTTP 500.
    ServerError,
}

impl From<SruDiagnostic> for Refusal {
    fn from(d: SruDiagnostic) -> Refusal {
        Refusal::Diagnostic(d)
    }
}

/// What a collection found for a query: every hit in its order, and warnings (a clause it
/// dropped) that travel beside the count.
#[derive(Debug)]
pub struct Found<T> {
    /// Every hit, in the order the service gives them.
    pub hits: Vec<T>,
    /// Warnings.
    pub warnings: Vec<SruDiagnostic>,
}

impl<T> Found<T> {
    /// Hits without warnings.
    pub fn hits(hits: Vec<T>) -> Found<T> {
        Found {
            hits,
            warnings: Vec::new(),
        }
    }
}

/// The service's own trouble, every n-th search (`None`: never); the default is the
/// healthy service.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Trouble {
    /// 200, a system diagnostic, no count: overload as third parties saw it.
    pub overload_every: Option<u32>,
    /// 200, a syntax diagnostic, no count: the service rejecting a query it usually takes.
    pub reject_every: Option<u32>,
    /// A count but no records: an empty page before the end.
    pub empty_page_every: Option<u32>,
}

/// Searches counted by a fake from its start, among those whose query was read (what
/// [`Trouble`] counts).
#[derive(Debug, Default)]
pub struct SearchCount(AtomicU64);

impl SearchCount {
    /// Counts one search; whether each trouble strikes it.
    fn next(&self, trouble: Trouble) -> (bool, bool, bool) {
        let n = self.0.fetch_add(1, Ordering::Relaxed) + 1;
        let strikes = |every: Option<u32>| every.is_some_and(|every| every > 0 && n.is_multiple_of(u64::from(every)));
        (
            strikes(trouble.overload_every),
            strikes(trouble.reject_every),
            strikes(trouble.empty_page_every),
        )
    }
}

/// Why the service answers a request without searching.
#[derive(Debug)]
enum NotASearch {
    /// No `operation`: the explain answer.
    Explain,
    /// Only JSON is accepted, and the service negotiates.
    Json,
    /// `startRecord` at or past [`MAX_START_RECORD`]: HTTP 504.
    TooDeep,
    /// 200 with this diagnostic (in this version) and no count.
    Refused(SruVersion, SruDiagnostic),
}

/// A request as read.
#[derive(Debug)]
struct SruRequest {
    version: SruVersion,
    start: u64,
    maximum: u64,
    query: String,
}

/// One collection's fake on KOOP's search service: what is its own (see the module's
/// documentation). Implemented by the collection's `Fake`, which its registry line names.
pub trait SruCollection: 'static {
    /// Its own settings, its service's trouble among them.
    type Own: OwnSettings;
    /// A query as read.
    type Query;
    /// A hit as found.
    type Hit;
    /// The service as it answers this collection.
    const SERVICE: SruService;
    /// Where the search lives under the fake's root (the base-URL suffix).
    const SEARCH_PATH: &'static str;
    /// The answers the shared faults give (KOOP's: [`replies`]).
    fn replies() -> &'static FaultReplies<Self::Own>;
    /// The service's trouble its settings ask for.
    fn trouble(own: &Self::Own) -> Trouble;
    /// Reads a query, or refuses it.
    fn parse(query: &str) -> Result<Self::Query, Refusal>;
    /// Every hit of a query, in the service's order, and warnings.
    fn find(query: &Self::Query) -> Found<Self::Hit>;
    /// A hit's record (its `gzd` element); `root` is the fake's root URL, for its links.
    fn record(root: &str, hit: &Self::Hit) -> String;
}

/// A collection's fake's state.
pub struct SruState<C: SruCollection> {
    shared: Shared<C::Own>,
    /// The fake's root (`http://ADDR` or `http://ADDR/prefix`), for the records' links.
    root: String,
    searches: SearchCount,
}

/// The routes of collection `C`'s fake: its search at [`SruCollection::SEARCH_PATH`] (with
/// and without a trailing `/`), its files at `files_path`, the repository's 404 page for
/// anything else, and the shared faults around them all.
pub fn router<C: SruCollection>(
    shared: Shared<C::Own>,
    base_url: String,
    files_path: &str,
    files: MethodRouter<Arc<SruState<C>>>,
) -> Router {
    let faults = Faults::new(shared.clone(), C::replies());
    let root = base_url.strip_suffix(C::SEARCH_PATH).unwrap_or(&base_url).to_owned();
    let state = Arc::new(SruState::<C> {
        shared,
        root,
        searches: SearchCount::default(),
    });
    Router::new()
        .route(C::SEARCH_PATH, get(search::<C>))
        .route(&format!("{}/", C::SEARCH_PATH), get(search::<C>))
        .route(files_path, files)
        .fallback(|| async { not_found() })
        .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
        .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
        .with_state(state)
}

/// KOOP's words for the shared faults: a deliberate 500 and a storm's 429 as small JSON
/// errors (no 429 of the service is documented, PLATFORMS.md §5).
pub const fn replies<S: 'static>() -> FaultReplies<S> {
    FaultReplies {
        failure: r#"{"error":"Internal Server Error"}"#,
        storm: storm::<S>,
    }
}

fn storm<S>(_: &FakeConfig, _: &S) -> Response<Body> {
    raw_response(
        StatusCode::TOO_MANY_REQUESTS,
        "application/json",
        r#"{"error":"Too Many Requests"}"#,
    )
}

/// The repository's 404 page.
pub fn not_found() -> Response<Body> {
    raw_response(
        StatusCode::NOT_FOUND,
        "text/html; charset=utf-8",
        "<html><body><h1>404 Not Found</h1></body></html>",
    )
}

async fn search<C: SruCollection>(
    State(state): State<Arc<SruState<C>>>,
    headers: HeaderMap,
    Query(params): Query<Vec<(String, String)>>,
) -> Response<Body> {
    let trouble = C::trouble(&state.shared.own());
    answer::<C>(&headers, &params, &state.searches, trouble, &state.root)
}

/// Answers one search request to collection `C`: the request checked, the query read, the
/// service's trouble applied (counted in `searches`), the hits paged and each record
/// written — see the module's invariants.
fn answer<C: SruCollection>(
    headers: &HeaderMap,
    params: &[(String, String)],
    searches: &SearchCount,
    trouble: Trouble,
    root: &str,
) -> Response<Body> {
    let service = &C::SERVICE;
    let request = match service.read_request(headers, params) {
        Ok(request) => request,
        Err(not) => return service.answer_instead(not),
    };
    let query = match C::parse(&request.query) {
        Ok(query) => query,
        Err(Refusal::Diagnostic(d)) => return service.refuse(request.version, &d),
        Err(Refusal::ServerError) => return server_error(),
    };
    let (overload, reject, empty) = searches.next(trouble);
    if overload {
        return service.refuse(
            request.version,
            &SruDiagnostic::standard(1, "Query timeout", "General system error"),
        );
    }
    if reject {
        return service.refuse(request.version, &SruDiagnostic::syntax(&request.query));
    }
    let found = C::find(&query);
    let from = usize::try_from(request.start - 1).unwrap_or(usize::MAX);
    let page: Vec<String> = if empty {
        Vec::new()
    } else {
        found
            .hits
            .iter()
            .skip(from)
            .take(usize::try_from(request.maximum).unwrap_or(usize::MAX))
            .map(|hit| C::record(root, hit))
            .collect()
    };
    service.xml(service.page_xml(&request, found.hits.len() as u64, &page, &found.warnings))
}

impl SruService {
    /// Reads the request as the service does, or why it answers without searching.
    fn read_request(&self, headers: &HeaderMap, params: &[(String, String)]) -> Result<SruRequest, NotASearch> {
        let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
        let own = self.version;
        let Some(operation) = param("operation") else {
            return Err(NotASearch::Explain);
        };
        if operation != "searchRetrieve" {
            return Err(NotASearch::Refused(
                own,
                SruDiagnostic::standard(4, operation, "Unsupported operation"),
            ));
        }
        let json_only = headers
            .get(header::ACCEPT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|a| a.contains("application/json") && !a.contains("xml"));
        if self.negotiates_json && json_only {
            return Err(NotASearch::Json);
        }
        let version = match param("version") {
            None if self.answers_other_version => SruVersion::V1_2,
            asked => match asked.and_then(SruVersion::of) {
                Some(v) if v == own || self.answers_other_version => v,
                _ => {
                    let asked = asked.unwrap_or("");
                    return Err(NotASearch::Refused(
                        own,
                        SruDiagnostic::standard(5, asked, "Unsupported version"),
                    ));
                }
            },
        };
        let refused = |n: u32, details: &str, message: &str| {
            NotASearch::Refused(version, SruDiagnostic::standard(n, details, message))
        };
        let unsupported = |details: &str| refused(6, details, "Unsupported parameter value");
        match self.selects {
            Selects::XConnection(name) => {
                if !param("x-connection").is_some_and(|c| c.eq_ignore_ascii_case(name)) {
                    return Err(unsupported(param("x-connection").unwrap_or("x-connection")));
                }
            }
            Selects::GzdSchema => {
                let schema = param("recordSchema");
                if !matches!(schema, Some("gzd" | GZD_SCHEMA_URI)) {
                    return Err(refused(66, schema.unwrap_or(""), "Unknown schema for retrieval"));
                }
            }
        }
        let number = |name: &'static str, default: u64| match param(name) {
            None => Ok(default),
            Some(v) => v.trim().parse::<u64>().map_err(|_| name),
        };
        let (start, maximum) = match (number("startRecord", 1), number("maximumRecords", DEFAULT_RECORDS)) {
            (Ok(start), Ok(maximum)) => (start, maximum),
            (Err(name), _) | (_, Err(name)) => return Err(unsupported(name)),
        };
        if start >= MAX_START_RECORD {
            return Err(NotASearch::TooDeep);
        }
        if start == 0 {
            return Err(unsupported("startRecord"));
        }
        if maximum > self.max_records {
            return Err(unsupported("maximumRecords"));
        }
        let Some(query) = param("query") else {
            return Err(refused(7, "query", "Mandatory parameter not supplied"));
        };
        Ok(SruRequest {
            version,
            start,
            maximum,
            query: query.to_owned(),
        })
    }

    /// The service's answer to a request it does not search for.
    fn answer_instead(&self, not: NotASearch) -> Response<Body> {
        match not {
            NotASearch::Explain => self.explain(),
            NotASearch::Json => raw_response(
                StatusCode::OK,
                "application/json",
                format!(
                    "{{\"searchRetrieveResponse\":{{\"version\":\"{}\"}}}}",
                    self.version.as_str()
                ),
            ),
            NotASearch::TooDeep => raw_response(
                StatusCode::GATEWAY_TIMEOUT,
                "text/html; charset=utf-8",
                "<html><body><h1>504 Gateway Time-out</h1></body></html>",
            ),
            NotASearch::Refused(version, d) => self.refuse(version, &d),
        }
    }

    fn xml(&self, body: String) -> Response<Body> {
        raw_response(StatusCode::OK, self.content_type, body)
    }

    /// The root's start tag in `version`: the version's declarations, then the records'.
    fn root(&self, version: SruVersion, element: &str) -> String {
        let own = match version {
            SruVersion::V1_2 => ROOT12,
            SruVersion::V2_0 => ROOT20,
        };
        let mut out = format!("<{}:{element}", version.prefix());
        let extra = self
            .record_namespaces
            .iter()
            .filter(|(prefix, _)| !own.iter().any(|(p, _)| p == prefix));
        for (prefix, uri) in own.iter().chain(extra) {
            out.push_str(&format!(" xmlns:{prefix}=\"{uri}\""));
        }
        out.push('>');
        out
    }

    /// The explain answer to a request without `operation` (its version only).
    fn explain(&self) -> Response<Body> {
        let v = self.version;
        let p = v.prefix();
        self.xml(format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}<{p}:version>{}</{p}:version></{p}:explainResponse>\n",
            self.root(v, "explainResponse"),
            v.as_str()
        ))
    }

    /// 200 with one diagnostic and no count.
    fn refuse(&self, version: SruVersion, d: &SruDiagnostic) -> Response<Body> {
        let p = version.prefix();
        self.xml(format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n<{p}:version>{}</{p}:version>\n\
             <{p}:diagnostics>{}</{p}:diagnostics>\n</{p}:searchRetrieveResponse>\n",
            self.root(version, "searchRetrieveResponse"),
            version.as_str(),
            diagnostic_xml(d)
        ))
    }

    /// One page: the count, the records from `request.start`, the next position, the echo
    /// of the request and the warnings.
    fn page_xml(&self, request: &SruRequest, total: u64, page: &[String], warnings: &[SruDiagnostic]) -> String {
        let version = request.version;
        let p = version.prefix();
        let mut out = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n{}\n<{p}:version>{}</{p}:version>\n\
             <{p}:numberOfRecords>{total}</{p}:numberOfRecords>\n",
            self.root(version, "searchRetrieveResponse"),
            version.as_str(),
        );
        if !page.is_empty() {
            out.push_str(&format!("<{p}:records>\n"));
            for (i, gzd) in page.iter().enumerate() {
                out.push_str(&format!(
                    "<{p}:record><{p}:recordSchema>{GZD_SCHEMA_URI}</{p}:recordSchema>\
                     <{p}:recordPacking>xml</{p}:recordPacking><{p}:recordData>{gzd}</{p}:recordData>\
                     <{p}:recordPosition>{}</{p}:recordPosition></{p}:record>\n",
                    request.start + i as u64
                ));
            }
            out.push_str(&format!("</{p}:records>\n"));
            let next = request.start + page.len() as u64;
            if next <= total {
                out.push_str(&format!("<{p}:nextRecordPosition>{next}</{p}:nextRecordPosition>\n"));
            }
        }
        // The repository's echo has no version and names the escaping (`corpus/sru/`);
        // SRU 1.2 echoes the version and the packing.
        let (echo_version, echo_packing) = match version {
            SruVersion::V1_2 => (
                format!("<{p}:version>1.2</{p}:version>"),
                format!("<{p}:recordPacking>xml</{p}:recordPacking>"),
            ),
            SruVersion::V2_0 => (
                String::new(),
                format!("<{p}:recordXMLEscaping>xml</{p}:recordXMLEscaping>"),
            ),
        };
        out.push_str(&format!(
            "<{p}:echoedSearchRetrieveRequest>{echo_version}<{p}:query>{}</{p}:query>\
             <{p}:startRecord>{}</{p}:startRecord><{p}:maximumRecords>{}</{p}:maximumRecords>{echo_packing}\
             <{p}:recordSchema>{GZD_SCHEMA_URI}</{p}:recordSchema></{p}:echoedSearchRetrieveRequest>\n",
            escape(&request.query),
            request.start,
            request.maximum
        ));
        if !warnings.is_empty() {
            out.push_str(&format!("<{p}:diagnostics>"));
            for w in warnings {
                out.push_str(&diagnostic_xml(w));
            }
            out.push_str(&format!("</{p}:diagnostics>\n"));
        }
        if version == SruVersion::V2_0 {
            out.push_str(
                "<sru:resultCountPrecision>info:srw/vocabulary/resultCountPrecision/1/estimate\
                 </sru:resultCountPrecision>\n",
            );
        }
        out.push_str(&format!("</{p}:searchRetrieveResponse>\n"));
        out
    }
}

fn diagnostic_xml(d: &SruDiagnostic) -> String {
    format!(
        "<diag:diagnostic><diag:uri>{}</diag:uri><diag:details>{}</diag:details><diag:message>{}</diag:message>\
         </diag:diagnostic>",
        escape(&d.uri),
        escape(&d.details),
        escape(&d.message)
    )
}

/// The service failing: HTTP 500 with its HTML page.
fn server_error() -> Response<Body> {
    raw_response(
        StatusCode::INTERNAL_SERVER_ERROR,
        "text/html; charset=utf-8",
        "<html><body><h1>500 Internal Server Error</h1></body></html>",
    )
}

/// Escapes text for XML content and attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            c => out.push(c),
        }
    }
    out
}

/// One clause of the simple CQL the SRU 1.2 collections take (`index relation value`,
/// clauses joined by `and`), as written; what it means is the collection's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Clause {
    /// The index as written; a bare term is `cql.serverChoice`.
    pub index: String,
    /// `==`, `=`, `all` or `any`.
    pub relation: &'static str,
    /// The value, unquoted.
    pub value: String,
}

/// Splits `query` into its clauses: `and` outside quotes joins them; a value is quoted or
/// one word; anything else is a syntax error (`1/10`).
pub fn clauses(query: &str) -> Result<Vec<Clause>, SruDiagnostic> {
    let mut out = Vec::new();
    for part in split_and(query).ok_or_else(|| SruDiagnostic::syntax(query))? {
        let part = part.trim();
        let Some(i) = part.find(['=', ' ']) else {
            out.push(Clause {
                index: "cql.serverChoice".to_owned(),
                relation: "=",
                value: part.to_owned(),
            });
            continue;
        };
        let (index, rest) = part.split_at(i);
        let rest = rest.trim_start();
        let (relation, value) = [("==", "=="), ("=", "="), ("all", "all "), ("any", "any ")]
            .into_iter()
            .find_map(|(relation, written)| rest.strip_prefix(written).map(|v| (relation, v.trim())))
            .ok_or_else(|| SruDiagnostic::syntax(part))?;
        let value = match value.strip_prefix('"') {
            Some(inner) => inner.strip_suffix('"').ok_or_else(|| SruDiagnostic::syntax(part))?,
            None if !value.is_empty() && !value.contains(char::is_whitespace) => value,
            None => return Err(SruDiagnostic::syntax(part)),
        };
        out.push(Clause {
            index: index.to_owned(),
            relation,
            value: value.to_owned(),
        });
    }
    Ok(out)
}

/// `query` split on ` and ` outside quotes; `None` for an unclosed quote or an empty part.
fn split_and(query: &str) -> Option<Vec<String>> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for w in query.split(' ') {
        if !quoted && w.eq_ignore_ascii_case("and") {
            parts.push(std::mem::take(&mut current));
            continue;
        }
        if !current.is_empty() {
            current.push(' ');
        }
        current.push_str(w);
        quoted ^= w.matches('"').count() % 2 == 1;
    }
    parts.push(current);
    (!quoted && parts.iter().all(|p| !p.trim().is_empty())).then_some(parts)
}

/// Whether `text` is a date written `YYYY-MM-DD` (digits in place; the day need not exist).
pub fn date_shaped(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 10
        && b.iter().enumerate().all(|(i, c)| {
            if i == 4 || i == 7 {
                *c == b'-'
            } else {
                c.is_ascii_digit()
            }
        })
}

#[cfg(test)]
mod tests {
    use axum::body::to_bytes;

    use super::*;

    /// A collection whose query is its number of hits (`warn`: one, with a warning;
    /// `bad`: refused; `{x}`: the service fails); a hit's record is `<gzd:gzd>N</gzd:gzd>`.
    macro_rules! numbers {
        ($name:ident, $service:expr) => {
            struct $name;
            impl SruCollection for $name {
                type Own = ();
                type Query = String;
                type Hit = u32;
                const SERVICE: SruService = $service;
                const SEARCH_PATH: &'static str = "/sru";
                fn replies() -> &'static FaultReplies<()> {
                    static REPLIES: FaultReplies<()> = replies();
                    &REPLIES
                }
                fn trouble(_: &()) -> Trouble {
                    Trouble::default()
                }
                fn parse(query: &str) -> Result<String, Refusal> {
                    match query {
                        "{x}" => Err(Refusal::ServerError),
                        "bad" => Err(SruDiagnostic::syntax("bad").into()),
                        q => Ok(q.to_owned()),
                    }
                }
                fn find(query: &String) -> Found<u32> {
                    match query.as_str() {
                        "warn" => Found {
                            hits: vec![0],
                            warnings: vec![SruDiagnostic::new(
                                "SEARCH-IGNOREDQTEXT",
                                "dt.date<=2026-02-29",
                                "genegeerd",
                            )],
                        },
                        q => Found::hits((0..q.parse().unwrap_or(3)).collect()),
                    }
                }
                fn record(_: &str, hit: &u32) -> String {
                    format!("<gzd:gzd>{hit}</gzd:gzd>")
                }
            }
        };
    }

    numbers!(
        V20,
        SruService {
            version: SruVersion::V2_0,
            answers_other_version: true,
            selects: Selects::GzdSchema,
            max_records: 100,
            record_namespaces: &[("gzd", GZD_NS)],
            content_type: "application/xml; charset=utf-8",
            negotiates_json: true,
        }
    );
    numbers!(V12, SruService::zoekservice("BWB"));

    fn params(query: &str) -> Vec<(String, String)> {
        query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.replace('+', " ")))
            .collect()
    }

    /// Collection `C`'s answer to the request `query` under `trouble`.
    async fn ask<C: SruCollection<Own = ()>>(query: &str, trouble: Trouble) -> (StatusCode, String) {
        let response = answer::<C>(
            &HeaderMap::new(),
            &params(query),
            &SearchCount::default(),
            trouble,
            "http://x",
        );
        let status = response.status();
        let body = to_bytes(response.into_body(), usize::MAX).await.unwrap();
        (status, String::from_utf8(body.to_vec()).unwrap())
    }

    const SEARCH20: &str = "operation=searchRetrieve&version=2.0&recordSchema=gzd";
    const SEARCH12: &str = "operation=searchRetrieve&version=1.2&x-connection=bwb";
    const HEALTHY: Trouble = Trouble {
        overload_every: None,
        reject_every: None,
        empty_page_every: None,
    };

    #[tokio::test]
    async fn a_page_has_the_real_envelope_in_both_versions() {
        let (status, body) = ask::<V20>(&format!("{SEARCH20}&startRecord=3&maximumRecords=2&query=5"), HEALTHY).await;
        assert_eq!(status, StatusCode::OK);
        assert!(
            body.starts_with(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sru:searchRetrieveResponse \
                 xmlns:overheidwetgeving=\"http://standaarden.overheid.nl/wetgeving/\" xmlns:dcterms=\"http://purl.org/dc/terms/\" \
                 xmlns:cd=\"http://standaarden.overheid.nl/cup/data\" xmlns:sru=\"http://docs.oasis-open.org/ns/search-ws/sruResponse\" \
                 xmlns:gzd=\"http://standaarden.overheid.nl/sru\" xmlns:diag=\"http://docs.oasis-open.org/ns/search-ws/diagnostic\" \
                 xmlns:facet=\"http://docs.oasis-open.org/ns/search-ws/facetedResults\" xmlns:c=\"http://standaarden.overheid.nl/collectie/\">\n\
                 <sru:version>2.0</sru:version>\n<sru:numberOfRecords>5</sru:numberOfRecords>\n<sru:records>\n"
            ),
            "{body}"
        );
        assert!(body.contains(
            "<sru:record><sru:recordSchema>http://standaarden.overheid.nl/sru/</sru:recordSchema><sru:recordPacking>xml\
             </sru:recordPacking><sru:recordData><gzd:gzd>2</gzd:gzd></sru:recordData><sru:recordPosition>3</sru:recordPosition></sru:record>"
        ));
        assert!(body.contains("<gzd:gzd>3</gzd:gzd>") && !body.contains("<gzd:gzd>4</gzd:gzd>"));
        assert!(
            body.contains("<sru:nextRecordPosition>5</sru:nextRecordPosition>"),
            "{body}"
        );
        assert!(
            body.contains(
                "<sru:echoedSearchRetrieveRequest><sru:query>5</sru:query><sru:startRecord>3</sru:startRecord>"
            ),
            "{body}"
        );
        assert!(body.ends_with(
            "<sru:resultCountPrecision>info:srw/vocabulary/resultCountPrecision/1/estimate</sru:resultCountPrecision>\n\
             </sru:searchRetrieveResponse>\n"
        ));
        // The last page has no next position; the 1.2 envelope is `srw:`.
        let (_, last) = ask::<V12>(&format!("{SEARCH12}&startRecord=4&maximumRecords=2&query=5"), HEALTHY).await;
        assert!(last.contains("<srw:searchRetrieveResponse xmlns:srw=\"http://www.loc.gov/zing/srw/\" xmlns:diag=\"http://www.loc.gov/zing/srw/diagnostic/\">"), "{last}");
        assert!(
            last.contains("<srw:numberOfRecords>5</srw:numberOfRecords>")
                && last.contains("<srw:recordPosition>5</srw:recordPosition>")
        );
        assert!(
            !last.contains("nextRecordPosition") && !last.contains("resultCountPrecision"),
            "{last}"
        );
        // The repository asked for 1.2 answers in 1.2, its records' namespaces declared.
        let (_, old) = ask::<V20>("operation=searchRetrieve&version=1.2&recordSchema=gzd&query=1", HEALTHY).await;
        assert!(old.contains("<srw:searchRetrieveResponse xmlns:srw=\"http://www.loc.gov/zing/srw/\" xmlns:diag=\"http://www.loc.gov/zing/srw/diagnostic/\" xmlns:gzd=\"http://standaarden.overheid.nl/sru\">"), "{old}");
        // A warning travels beside the count.
        let (_, warned) = ask::<V20>(&format!("{SEARCH20}&query=warn"), HEALTHY).await;
        assert!(
            warned.contains("<sru:numberOfRecords>1</sru:numberOfRecords>")
                && warned.contains("<diag:uri>SEARCH-IGNOREDQTEXT</diag:uri>"),
            "{warned}"
        );
    }

    #[tokio::test]
    async fn the_request_is_checked_as_the_service_checks_it() {
        let refused = |body: &str, uri: &str| {
            body.contains(&format!("<diag:uri>{uri}</diag:uri>")) && !body.contains("numberOfRecords")
        };
        for (v20, query, uri) in [
            (true, "operation=scan&query=x".to_owned(), "info:srw/diagnostic/1/4"),
            (
                true,
                "operation=searchRetrieve&version=3.0&recordSchema=gzd&query=x".to_owned(),
                "info:srw/diagnostic/1/5",
            ),
            (
                false,
                "operation=searchRetrieve&version=2.0&x-connection=BWB&query=x".to_owned(),
                "info:srw/diagnostic/1/5",
            ),
            (
                false,
                "operation=searchRetrieve&version=1.2&x-connection=cvdr&query=x".to_owned(),
                "info:srw/diagnostic/1/6",
            ),
            (
                true,
                "operation=searchRetrieve&version=2.0&recordSchema=dc&query=x".to_owned(),
                "info:srw/diagnostic/1/66",
            ),
            (
                true,
                format!("{SEARCH20}&startRecord=0&query=x"),
                "info:srw/diagnostic/1/6",
            ),
            (
                true,
                format!("{SEARCH20}&startRecord=x&query=x"),
                "info:srw/diagnostic/1/6",
            ),
            (
                true,
                format!("{SEARCH20}&maximumRecords=101&query=x"),
                "info:srw/diagnostic/1/6",
            ),
            (true, SEARCH20.to_owned(), "info:srw/diagnostic/1/7"),
            (false, format!("{SEARCH12}&query=bad"), "info:srw/diagnostic/1/10"),
        ] {
            let (status, body) = if v20 {
                ask::<V20>(&query, HEALTHY).await
            } else {
                ask::<V12>(&query, HEALTHY).await
            };
            assert_eq!(status, StatusCode::OK, "{query}");
            assert!(refused(&body, uri), "{query}: {body}");
        }
        let (status, _) = ask::<V12>(&format!("{SEARCH12}&startRecord=10000&query=x"), HEALTHY).await;
        assert_eq!(status, StatusCode::GATEWAY_TIMEOUT);
        let (status, _) = ask::<V20>(&format!("{SEARCH20}&startRecord=9999&query=x"), HEALTHY).await;
        assert_eq!(status, StatusCode::OK);
        let (status, _) = ask::<V20>(&format!("{SEARCH20}&query={{x}}"), HEALTHY).await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        let (_, explain) = ask::<V12>("", HEALTHY).await;
        assert!(
            explain.contains("<srw:explainResponse") && explain.contains("<srw:version>1.2</srw:version>"),
            "{explain}"
        );
        // The repository's own schema URI is its schema too.
        let (_, uri) = ask::<V20>(
            "operation=searchRetrieve&version=2.0&recordSchema=http://standaarden.overheid.nl/sru/&query=3",
            HEALTHY,
        )
        .await;
        assert!(uri.contains("<sru:numberOfRecords>3</sru:numberOfRecords>"), "{uri}");
    }

    #[tokio::test]
    async fn the_services_trouble_strikes_by_count_and_never_looks_like_zero_results() {
        let every = |n| Some(n);
        let (_, busy) = ask::<V20>(
            &format!("{SEARCH20}&query=3"),
            Trouble {
                overload_every: every(1),
                ..HEALTHY
            },
        )
        .await;
        assert!(
            busy.contains("info:srw/diagnostic/1/1") && !busy.contains("numberOfRecords"),
            "{busy}"
        );
        let (_, rejected) = ask::<V12>(
            &format!("{SEARCH12}&query=3"),
            Trouble {
                reject_every: every(1),
                ..HEALTHY
            },
        )
        .await;
        assert!(
            rejected.contains("info:srw/diagnostic/1/10") && !rejected.contains("numberOfRecords"),
            "{rejected}"
        );
        let (_, empty) = ask::<V20>(
            &format!("{SEARCH20}&query=3"),
            Trouble {
                empty_page_every: every(1),
                ..HEALTHY
            },
        )
        .await;
        assert!(
            empty.contains("<sru:numberOfRecords>3</sru:numberOfRecords>")
                && !empty.contains("<sru:record>")
                && !empty.contains("nextRecordPosition"),
            "{empty}"
        );
        let searches = SearchCount::default();
        let third = Trouble {
            overload_every: every(3),
            ..HEALTHY
        };
        let struck: Vec<bool> = (0..6).map(|_| searches.next(third).0).collect();
        assert_eq!(struck, [false, false, true, false, false, true]);
    }

    #[test]
    fn clauses_split_on_and_outside_quotes() {
        let c =
            clauses("overheidbwb.titel all \"Wet and vuurwerk\" and dcterms.identifier==BWBR1 and parkeren").unwrap();
        assert_eq!(
            c,
            [
                Clause {
                    index: "overheidbwb.titel".into(),
                    relation: "all",
                    value: "Wet and vuurwerk".into()
                },
                Clause {
                    index: "dcterms.identifier".into(),
                    relation: "==",
                    value: "BWBR1".into()
                },
                Clause {
                    index: "cql.serverChoice".into(),
                    relation: "=",
                    value: "parkeren".into()
                },
            ]
        );
        for bad in ["x all \"y", "and", "wet vuurwerk", "x = a b", "x < 3", "a and  and b"] {
            assert_eq!(clauses(bad).unwrap_err().uri, "info:srw/diagnostic/1/10", "{bad}");
        }
        assert!(date_shaped("2025-02-30") && !date_shaped("2025-2-30") && !date_shaped("morgen"));
    }
}
