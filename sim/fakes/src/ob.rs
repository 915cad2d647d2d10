//! Fake Officiële Bekendmakingen (PLATFORMS.md §5 and §10.1): the SRU 2.0 service at
//! `/sru` and the publications' renditions at
//! `/frbr/officielepublicaties/{type}/{group}/{id}/1/{manifestation}/{id}.{ext}`, over the
//! corpus of [`ob_corpus`].
//!
//! Invariants:
//! - Answers carry the real namespaces and element names: `sru:searchRetrieveResponse`,
//!   `sru:numberOfRecords`, `sru:records/sru:record/sru:recordData/gzd:gzd` with
//!   `overheidwetgeving:meta` (`owmskern`, `owmsmantel`, `tpmeta`) and `gzd:enrichedData`
//!   (`gzd:url`, `gzd:preferredUrl`, one `gzd:itemUrl` per manifestation),
//!   `sru:nextRecordPosition` while records remain, and `sru:diagnostics/diag:diagnostic`.
//! - The CQL is parsed as strictly as the real service ([`parse_cql`]): a rejected
//!   query is 200 with a diagnostic and no count; `{`/`}` is HTTP 500; an impossible
//!   date is dropped with a warning diagnostic next to the count.
//! - `startRecord >= 10000` is HTTP 504; `version` other than 2.0, a `recordSchema`
//!   other than `gzd` and a `maximumRecords` over 100 are diagnostics; a client that
//!   asks `Accept: application/json` only gets JSON (the service negotiates).
//! - Faults of its own, by count of searches, in its own settings ([`ObSettings`],
//!   declared here and named by its registry line through `Fake`): the overload signal
//!   third parties saw (200, a system diagnostic, no count) and an empty page before the
//!   end. The shared faults (latency, 500, garbage, stall, reset, 429 storm) apply to
//!   every path.
//! - Renditions: XML (a KOOP publication; an empty template for some), HTML and PDF as
//!   the corpus says; anything else is 404. No rate limit is enforced (its numbers are
//!   unpublished); the 429 storm stands in for one.
//!
//! What this fake does not do: SRU `explain` beyond a stub, `scan`, the `odt` and
//! `metadata` manifestations, or JSON beyond refusing to be read as XML.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, Response, StatusCode, header};
use axum::middleware;
use axum::routing::get;
use besluitbron_core::PlatformId;
use tokio::net::TcpListener;

use crate::faults::{self, FaultReplies, Faults};
pub use crate::ob_corpus::{ObCorpus, ObPublication, PUBLICATION_COUNT, Renditions};
pub use crate::ob_cql::{CqlFault, CqlQuery, Node, Relation, parse_cql, words};
use crate::own::Shared;
use crate::registry::FakePlatform;
use crate::{FakeConfig, FakeHandle, FaultParseError, OwnChange, OwnSettings, raw_response, registry};

/// Where the SRU service lives under the fake's root (the base-URL suffix).
pub const SRU_PATH: &str = "/sru";
/// The first `startRecord` answered with 504.
pub const MAX_START_RECORD: u64 = 10_000;
/// The most records one page may ask for.
pub const MAX_RECORDS: u64 = 100;

const SRU_NS: &str = "http://docs.oasis-open.org/ns/search-ws/sruResponse";
const DIAG_NS: &str = "http://docs.oasis-open.org/ns/search-ws/diagnostic";

/// The Officiële Bekendmakingen fake's data, generated once per process.
pub fn ob_corpus() -> &'static ObCorpus {
    static CORPUS: OnceLock<ObCorpus> = OnceLock::new();
    CORPUS.get_or_init(ObCorpus::generate)
}

/// Serves the Officiële Bekendmakingen fake on `listener`; the base URL is `http://ADDR/sru`.
pub async fn serve_ob(listener: TcpListener, config: FakeConfig) -> std::io::Result<FakeHandle> {
    // The registry always holds this fake (a test serves every entry).
    let entry = registry::entry(PlatformId::Ob).expect("the ob fake is in the registry");
    entry.serve_alone_on(listener, config).await
}

/// What the Officiële Bekendmakingen fake does beyond the faults every fake applies: the
/// service's own trouble, by count of searches (counted from the fake's start, among
/// searches whose query parsed, whatever the settings were). The default is the healthy
/// service. Change it while running with
/// [`FakeHandle::update_own`](crate::FakeHandle::update_own)`::<ObSettings>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ObSettings {
    /// Answer every n-th search as the service signals overload: 200 with a system
    /// diagnostic and no count. `None` never.
    pub overload_every: Option<u32>,
    /// Answer every n-th search with its count but no records, an empty page before the
    /// end. `None` never.
    pub empty_page_every: Option<u32>,
}

/// Textual forms `overload-every=N` and `empty-page-every=N` (`0`: never), for the
/// fakes' command line and control route (the soak switches them).
impl OwnSettings for ObSettings {
    const NAMES: &'static [&'static str] = &["overload-every", "empty-page-every"];

    fn parse(name: &str, value: &str) -> Option<Result<OwnChange<ObSettings>, FaultParseError>> {
        let every = || crate::config::every(name, value);
        match name {
            "overload-every" => Some(every().map(|n| OwnChange::new(move |s: &mut ObSettings| s.overload_every = n))),
            "empty-page-every" => {
                Some(every().map(|n| OwnChange::new(move |s: &mut ObSettings| s.empty_page_every = n)))
            }
            _ => None,
        }
    }
}

/// The Officiële Bekendmakingen fake, as its registry line names it.
pub(crate) struct Fake;

impl FakePlatform for Fake {
    type Own = ObSettings;

    fn router(shared: Shared<ObSettings>, base_url: String) -> Router {
        router(shared, base_url)
    }
}

struct ObState {
    shared: Shared<ObSettings>,
    /// The fake's root (`http://ADDR` or `http://ADDR/ob`), for the renditions' URLs.
    root: String,
    searches: AtomicU64,
}

/// The Officiële Bekendmakingen routes, to be served at the root or nested under a prefix.
fn router(shared: Shared<ObSettings>, base_url: String) -> Router {
    let faults = Faults::new(shared.clone(), &REPLIES);
    let root = base_url.strip_suffix(SRU_PATH).unwrap_or(&base_url).to_owned();
    let state = Arc::new(ObState {
        shared,
        root,
        searches: AtomicU64::new(0),
    });
    Router::new()
        .route(SRU_PATH, get(sru))
        .route(&format!("{SRU_PATH}/"), get(sru))
        .route(
            "/frbr/officielepublicaties/{kind}/{group}/{id}/{version}/{manifestation}/{file}",
            get(rendition),
        )
        .fallback(|| async { not_found() })
        .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
        .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
        .with_state(state)
}

/// Officiële Bekendmakingen's words for the shared faults. No 429 of the service is
/// documented (PLATFORMS.md §5): the storm's is a small JSON error, as the shared faults
/// give every fake without a shape of its own.
static REPLIES: FaultReplies<ObSettings> = FaultReplies {
    failure: r#"{"error":"Internal Server Error"}"#,
    storm: |_, _| {
        raw_response(
            StatusCode::TOO_MANY_REQUESTS,
            "application/json",
            r#"{"error":"Too Many Requests"}"#,
        )
    },
};

fn not_found() -> Response<Body> {
    raw_response(
        StatusCode::NOT_FOUND,
        "text/html; charset=utf-8",
        "<html><body><h1>404 Not Found</h1></body></html>",
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

fn xml(status: StatusCode, body: String) -> Response<Body> {
    raw_response(status, "application/xml; charset=utf-8", body)
}

/// A diagnostics-only answer (no count): a rejected query, or an overload.
fn diagnostics_only(uri: &str, details: &str, message: &str) -> Response<Body> {
    xml(
        StatusCode::OK,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sru:searchRetrieveResponse xmlns:sru=\"{SRU_NS}\">\
             <sru:version>2.0</sru:version><sru:diagnostics>{}</sru:diagnostics></sru:searchRetrieveResponse>",
            diagnostic_xml(uri, details, message)
        ),
    )
}

fn diagnostic_xml(uri: &str, details: &str, message: &str) -> String {
    format!(
        "<diag:diagnostic xmlns:diag=\"{DIAG_NS}\"><diag:uri>{}</diag:uri><diag:details>{}</diag:details>\
         <diag:message>{}</diag:message></diag:diagnostic>",
        escape(uri),
        escape(details),
        escape(message)
    )
}

fn explain() -> Response<Body> {
    xml(
        StatusCode::OK,
        format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sru:explainResponse xmlns:sru=\"{SRU_NS}\">\
             <sru:version>2.0</sru:version></sru:explainResponse>"
        ),
    )
}

async fn sru(
    State(state): State<Arc<ObState>>,
    headers: HeaderMap,
    Query(params): Query<Vec<(String, String)>>,
) -> Response<Body> {
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let Some(operation) = param("operation") else {
        return explain();
    };
    if operation != "searchRetrieve" {
        return diagnostics_only("info:srw/diagnostic/1/4", operation, "Unsupported operation");
    }
    let wants_json = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|a| a.contains("application/json") && !a.contains("xml"));
    if wants_json {
        return raw_response(
            StatusCode::OK,
            "application/json",
            "{\"searchRetrieveResponse\":{\"version\":\"2.0\"}}",
        );
    }
    let number = |name: &str, default: u64| match param(name) {
        None => Ok(default),
        Some(v) => v.trim().parse::<u64>().map_err(|_| name.to_owned()),
    };
    let (start, maximum) = match (number("startRecord", 1), number("maximumRecords", 10)) {
        (Ok(s), Ok(m)) => (s, m),
        (Err(name), _) | (_, Err(name)) => {
            return diagnostics_only("info:srw/diagnostic/1/6", &name, "Unsupported parameter value");
        }
    };
    if start >= MAX_START_RECORD {
        return raw_response(
            StatusCode::GATEWAY_TIMEOUT,
            "text/html; charset=utf-8",
            "<html><body><h1>504 Gateway Time-out</h1></body></html>",
        );
    }
    if start == 0 {
        return diagnostics_only("info:srw/diagnostic/1/6", "startRecord", "Unsupported parameter value");
    }
    if maximum > MAX_RECORDS {
        return diagnostics_only(
            "info:srw/diagnostic/1/6",
            "maximumRecords",
            "Unsupported parameter value",
        );
    }
    if param("version") != Some("2.0") {
        return xml(
            StatusCode::OK,
            "<?xml version=\"1.0\"?><srw:searchRetrieveResponse xmlns:srw=\"http://www.loc.gov/zing/srw/\">\
             <srw:version>1.2</srw:version></srw:searchRetrieveResponse>"
                .to_owned(),
        );
    }
    if param("recordSchema") != Some("gzd") {
        return diagnostics_only(
            "info:srw/diagnostic/1/66",
            param("recordSchema").unwrap_or(""),
            "Unknown schema for retrieval",
        );
    }
    let Some(query) = param("query") else {
        return diagnostics_only("info:srw/diagnostic/1/7", "query", "Mandatory parameter not supplied");
    };
    let query = match parse_cql(query) {
        Ok(q) => q,
        Err(CqlFault::ServerError) => {
            return raw_response(
                StatusCode::INTERNAL_SERVER_ERROR,
                "text/html; charset=utf-8",
                "<html><body><h1>500 Internal Server Error</h1></body></html>",
            );
        }
        Err(CqlFault::Diagnostic { uri, details, message }) => return diagnostics_only(&uri, &details, &message),
    };
    // The service's own trouble, by count of searches that got this far.
    let n = state.searches.fetch_add(1, Ordering::Relaxed) + 1;
    let own = state.shared.own();
    let (overload, empty) = (every_nth(n, own.overload_every), every_nth(n, own.empty_page_every));
    if overload {
        return diagnostics_only("info:srw/diagnostic/1/1", "Query timeout", "General system error");
    }
    let mut hits: Vec<&ObPublication> = ob_corpus().publications.iter().filter(|p| query.matches(p)).collect();
    for (index, descending) in query.sort.iter().rev() {
        hits.sort_by(|a, b| {
            let key = |p: &ObPublication| match index.as_str() {
                "dt.date" => p.date.clone(),
                "dt.title" => p.title.clone(),
                "dt.identifier" => p.identifier.clone(),
                _ => p.available.clone(),
            };
            let ord = key(a).cmp(&key(b));
            if *descending { ord.reverse() } else { ord }
        });
    }
    let total = hits.len() as u64;
    let from = usize::try_from(start - 1).unwrap_or(usize::MAX);
    let page: Vec<&ObPublication> = if empty {
        Vec::new()
    } else {
        hits.iter().skip(from).take(maximum as usize).copied().collect()
    };
    xml(
        StatusCode::OK,
        response_xml(&state.root, total, start, &page, &query.warnings, empty),
    )
}

fn every_nth(n: u64, every: Option<u32>) -> bool {
    every.is_some_and(|every| every > 0 && n.is_multiple_of(u64::from(every)))
}

/// The whole `searchRetrieveResponse` for one page.
fn response_xml(
    root: &str,
    total: u64,
    start: u64,
    page: &[&ObPublication],
    warnings: &[String],
    empty: bool,
) -> String {
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<sru:searchRetrieveResponse xmlns:sru=\"{SRU_NS}\">\n\
         <sru:version>2.0</sru:version>\n<sru:numberOfRecords>{total}</sru:numberOfRecords>\n"
    );
    if !page.is_empty() {
        out.push_str("<sru:records>\n");
        for (i, p) in page.iter().enumerate() {
            out.push_str(&record_xml(root, p, start + i as u64));
        }
        out.push_str("</sru:records>\n");
    }
    let next = start + page.len() as u64;
    if !empty && next <= total && !page.is_empty() {
        out.push_str(&format!("<sru:nextRecordPosition>{next}</sru:nextRecordPosition>\n"));
    }
    if !warnings.is_empty() {
        out.push_str("<sru:diagnostics>");
        for w in warnings {
            out.push_str(&diagnostic_xml(
                "SEARCH-IGNOREDQTEXT",
                w,
                "Ongeldige zoekterm genegeerd",
            ));
        }
        out.push_str("</sru:diagnostics>\n");
    }
    out.push_str("</sru:searchRetrieveResponse>\n");
    out
}

/// One record, as the service writes it.
pub fn record_xml(root: &str, p: &ObPublication, position: u64) -> String {
    let mut tpmeta = format!(
        "<c:product-area>officielepublicaties</c:product-area>\
         <overheidwetgeving:organisatietype>{}</overheidwetgeving:organisatietype>\
         <overheidwetgeving:publicatienaam>{}</overheidwetgeving:publicatienaam>\
         <overheidwetgeving:publicatienummer>{}</overheidwetgeving:publicatienummer>\
         <overheidwetgeving:jaargang>{}</overheidwetgeving:jaargang>",
        escape(p.organization_type),
        escape(p.publication),
        escape(&p.number),
        p.volume
    );
    if let Some(d) = &p.dossier {
        tpmeta.push_str(&format!(
            "<overheidwetgeving:dossiernummer>{}</overheidwetgeving:dossiernummer>",
            escape(d)
        ));
    }
    if let Some(o) = &p.subnumber {
        tpmeta.push_str(&format!(
            "<overheidwetgeving:ondernummer>{}</overheidwetgeving:ondernummer>",
            escape(o)
        ));
    }
    let subjects: String = p
        .subjects
        .iter()
        .map(|s| format!("<dcterms:subject>{}</dcterms:subject>", escape(s)))
        .collect();
    let items: String = p
        .manifestations()
        .iter()
        .map(|m| {
            format!(
                "<gzd:itemUrl manifestation=\"{m}\">{}{}</gzd:itemUrl>",
                escape(root),
                escape(&p.rendition_path(m))
            )
        })
        .collect();
    format!(
        "<sru:record><sru:recordSchema>http://standaarden.overheid.nl/sru/</sru:recordSchema>\
         <sru:recordPacking>xml</sru:recordPacking><sru:recordData>\
         <gzd:gzd xmlns:gzd=\"http://standaarden.overheid.nl/sru\"><gzd:originalData>\
         <overheidwetgeving:meta xmlns:overheidwetgeving=\"http://standaarden.overheid.nl/wetgeving/\" \
         xmlns:dcterms=\"http://purl.org/dc/terms/\" xmlns:c=\"http://standaarden.overheid.nl/collectie/\">\
         <overheidwetgeving:owmskern><dcterms:identifier>{id}</dcterms:identifier>\
         <dcterms:title>{title}</dcterms:title><dcterms:type scheme=\"overheid:Informatietype\">{kind}</dcterms:type>\
         <dcterms:creator>{creator}</dcterms:creator><dcterms:language>nl</dcterms:language>\
         <dcterms:modified>{available}</dcterms:modified></overheidwetgeving:owmskern>\
         <overheidwetgeving:owmsmantel><dcterms:date>{date}</dcterms:date>\
         <dcterms:available>{available}</dcterms:available>{subjects}</overheidwetgeving:owmsmantel>\
         <overheidwetgeving:tpmeta>{tpmeta}</overheidwetgeving:tpmeta></overheidwetgeving:meta>\
         </gzd:originalData><gzd:enrichedData><gzd:url>{root}{pdf}</gzd:url>\
         <gzd:preferredUrl>https://zoek.officielebekendmakingen.nl/{id}.html</gzd:preferredUrl>{items}\
         <gzd:timestamp>{available}T09:00:00Z</gzd:timestamp></gzd:enrichedData></gzd:gzd>\
         </sru:recordData><sru:recordPosition>{position}</sru:recordPosition></sru:record>\n",
        id = escape(&p.identifier),
        title = escape(&p.title),
        kind = escape(p.document_type),
        creator = escape(p.creator),
        available = escape(&p.available),
        date = escape(&p.date),
        root = escape(root),
        pdf = escape(&p.rendition_path("pdf")),
    )
}

/// The XML rendition: a KOOP publication (metadata, then the body), or an empty template.
pub fn publication_xml(p: &ObPublication) -> String {
    let metadata = format!(
        "<metadata><meta name=\"DC.identifier\" content=\"{}\"/><meta name=\"DC.title\" content=\"{}\"/>\
         <meta name=\"OVERHEIDop.publicationName\" content=\"{}\"/></metadata>",
        escape(&p.identifier),
        escape(&p.title),
        escape(p.publication)
    );
    if p.renditions == Renditions::EmptyTemplate {
        return format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<officiele-publicatie>{metadata}</officiele-publicatie>\n"
        );
    }
    let mut body = format!("<titel>{}</titel>", escape(&p.paragraphs[0]));
    for al in &p.paragraphs[1..] {
        body.push_str(&format!("<al>{}</al>", escape(al)));
    }
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<officiele-publicatie>{metadata}\
         <zakelijke-mededeling><zakelijke-mededeling-tekst>{body}</zakelijke-mededeling-tekst>\
         </zakelijke-mededeling></officiele-publicatie>\n"
    )
}

async fn rendition(
    Path((kind, group, id, version, manifestation, file)): Path<(String, String, String, String, String, String)>,
) -> Response<Body> {
    let Some(p) = ob_corpus().get(&id) else {
        return not_found();
    };
    let expected = p.rendition_path(&manifestation);
    let asked = format!("/frbr/officielepublicaties/{kind}/{group}/{id}/{version}/{manifestation}/{file}");
    if asked != expected || !p.manifestations().contains(&manifestation.as_str()) {
        return not_found();
    }
    match manifestation.as_str() {
        "xml" => xml(StatusCode::OK, publication_xml(p)),
        "html" => raw_response(
            StatusCode::OK,
            "text/html; charset=utf-8",
            format!(
                "<!DOCTYPE html><html><head><title>{}</title></head><body>{}</body></html>",
                escape(&p.title),
                p.paragraphs
                    .iter()
                    .map(|al| format!("<p>{}</p>", escape(al)))
                    .collect::<String>()
            ),
        ),
        // A PDF-only publication's PDF is a real one with a text layer (its text is read
        // from it); the others' PDFs are never read, a marker file stands in.
        _ if p.renditions == Renditions::PdfOnly => {
            raw_response(StatusCode::OK, "application/pdf", PDF_ONLY_PDF.to_vec())
        }
        _ => raw_response(
            StatusCode::OK,
            "application/pdf",
            format!("%PDF-1.4\n% BesluitBron fake publication {}\n%%EOF\n", p.identifier),
        ),
    }
}

/// The PDF every PDF-only publication serves: the text corpus's letter (its text is
/// `server/tests/corpus/brief.txt`).
pub const PDF_ONLY_PDF: &[u8] = include_bytes!("../../../server/tests/corpus/brief.pdf");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renditions_follow_the_corpus() {
        let c = ob_corpus();
        let full = c
            .publications
            .iter()
            .find(|p| p.renditions == Renditions::Full)
            .unwrap();
        assert!(publication_xml(full).contains("<al>"));
        let empty = c
            .publications
            .iter()
            .find(|p| p.renditions == Renditions::EmptyTemplate)
            .unwrap();
        assert!(!publication_xml(empty).contains("<al>"));
        let pdf = c
            .publications
            .iter()
            .find(|p| p.renditions == Renditions::PdfOnly)
            .unwrap();
        assert_eq!(pdf.manifestations(), ["pdf"]);
        assert!(record_xml("http://x", pdf, 1).contains("manifestation=\"pdf\""));
        assert!(!record_xml("http://x", pdf, 1).contains("manifestation=\"xml\""));
    }
}
