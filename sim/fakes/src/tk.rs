//! Fake Tweede Kamer OData v4 API (PLATFORMS.md §3): the entity sets `Document`,
//! `Zaak`, `Fractie`, `Commissie`, `Besluit`, `Stemming`, `Vergadering`, `Verslag`,
//! `Activiteit` and `FractieZetelPersoon` under `/OData/v4/2.0/`, single records
//! `/{Set}({guid})`, document files `/Document({guid})/resource` and reports
//! `/Verslag({guid})/resource` (the corpus's real VLOS files, byte for byte).
//!
//! Invariants:
//! - At most [`PAGE_ROWS`] rows per response. Without `$top`, a response that leaves
//!   rows out carries an absolute `@odata.nextLink` (same options, `$skip` advanced; for
//!   [`SKIPTOKEN_SETS`], `$skiptoken=Id-{last row's Id}` instead, the platform's
//!   server-driven paging).
//!   With `$top`, there is never a nextLink, even when rows remain — the platform's
//!   documented "wontfix" behaviour.
//! - A `$filter` or `$orderby` the engine cannot parse or type-check, or an unknown
//!   `$` option, gives 400 with the OData error body `{"error":{"code","message"}}`.
//! - Rows without `$orderby` come in generation order; with it, ties keep that order,
//!   so paging is stable.
//! - No rate limit and no rate-limit headers (none are published).
//!
//! Document files: `/Document({guid})/resource` serves every kind the platform serves
//! (PDF, a scan, Word under a PDF `Content-Type`, RTF, legacy `.doc`; [`FileKind`]) from
//! the corpus `scripts/text-corpus` makes; every fourth document has a KOOP XML
//! rendition, found as the platform finds it (`DocumentPublicatie?$filter=… and
//! DocumentType eq 'Xml' and DocumentVersie/Document/Nummer eq '…'`) and served at
//! `/DocumentPublicatie({guid})/resource`.
//!
//! Settings: the faults every fake applies, and its own ([`TkSettings`]): reports the
//! platform says were corrected since.
//!
//! Votes: `Zaak?$expand=Besluit` gives each case its decisions; `Stemming?$filter=Besluit_Id
//! eq …` the votes cast on them (the data: `tk_votes.rs`). Meetings (`tk_debates.rs`):
//! `Vergadering?$expand=Verslag`, `Verslag?$expand=Vergadering`, `Zaak?$expand=
//! Kamerstukdossier` with `Kamerstukdossier/any(d:d/Nummer eq …)`, `FractieZetelPersoon?
//! $expand=Persoon,FractieZetel($expand=Fractie)` — the navigation properties held in the
//! records, shown only when expanded (a single record's too). Any other `$expand` is a 400.
//!
//! What this fake does not do: `$select`, `$count` as a path segment, the SyncFeed, or any
//! entity set beyond these.

use besluitbron_core::{Platform, PlatformId};
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{Response, StatusCode};
use axum::middleware;
use axum::routing::get;
use serde_json::{Map, Value, json};

use crate::fake::FakePlatform;
use crate::faults::{self, FaultReplies, Faults};
use crate::shared::Shared;
pub use crate::tk_corpus::{
    DOCUMENT_COUNT, FileKind, HISTORICAL_COMMISSIE_COUNT, LONG_RENDITION_CHARS, TkCorpus, ZAAK_COUNT,
    has_long_rendition, has_xml_rendition,
};
pub use crate::tk_debates::{MEETING_WITHOUT_REPORT, REPORTS, TkSettings};
pub use crate::tk_votes::{AMENDMENT_NUMBER, BILL_NUMBER, HELD_NUMBER, MOTION_NUMBER, VOTES_WORD, VOTING_FACTIONS};
use crate::{encode_component, odata, raw_response};

/// The path the OData service lives under.
pub const ODATA_PREFIX: &str = "/OData/v4/2.0";
/// Rows per response at most.
pub const PAGE_ROWS: usize = 250;
/// The sets whose next page the fake names by `$skiptoken` (the last row's key), the
/// platform's server-driven paging; the others name it by `$skip`.
pub const SKIPTOKEN_SETS: [&str; 2] = ["Besluit", "Stemming"];

/// The Tweede Kamer fake's data, generated once per process.
pub fn tk_corpus() -> &'static TkCorpus {
    static CORPUS: OnceLock<TkCorpus> = OnceLock::new();
    CORPUS.get_or_init(TkCorpus::generate)
}

struct TkState {
    /// Absolute URL of the OData root, used in `@odata.nextLink` and `@odata.context`.
    base_url: String,
    /// The settings, its own among them.
    shared: Shared<TkSettings>,
}

/// The Tweede Kamer fake, as its registry line names it.
pub(crate) struct Fake;

/// The platform this fake imitates (its short id and public name, as the server's
/// connector declares them).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "tk",
    name: "Tweede Kamer",
});

impl FakePlatform for Fake {
    const CORPUS: &'static [&'static str] = &["tk/vlos"];

    type Own = TkSettings;

    fn router(shared: Shared<TkSettings>, base_url: String) -> Router {
        router(shared, base_url)
    }
}

/// The Tweede Kamer routes, to be served at the root or nested under a prefix.
fn router(shared: Shared<TkSettings>, base_url: String) -> Router {
    let faults = Faults::new(shared.clone(), &REPLIES);
    let state = Arc::new(TkState { base_url, shared });
    Router::new()
        .route(&format!("{ODATA_PREFIX}/{{segment}}"), get(collection_or_record))
        .route(&format!("{ODATA_PREFIX}/{{segment}}/resource"), get(resource))
        .fallback(|| async {
            odata_error(
                StatusCode::NOT_FOUND,
                "No HTTP resource was found that matches the request URI.",
            )
        })
        .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
        .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
        .with_state(state)
}

/// The Tweede Kamer's words for the faults of `faults.rs` (the platform publishes no
/// rate limit; a storm's 429 is worded as its other OData errors).
static REPLIES: FaultReplies<TkSettings> = FaultReplies {
    failure: r#"{"error":{"code":"","message":"An error has occurred."}}"#,
    storm: |_, _| odata_error(StatusCode::TOO_MANY_REQUESTS, "Too many requests; try again later."),
};

/// An OData error body with its status.
fn odata_error(status: StatusCode, message: &str) -> Response<Body> {
    json_response(status, &json!({"error": {"code": "", "message": message}}))
}

fn json_response(status: StatusCode, value: &Value) -> Response<Body> {
    raw_response(status, "application/json; odata.metadata=minimal", value.to_string())
}

/// Splits `Document(guid)` into (`Document`, `Some(guid)`), or `Document` into (`Document`, `None`).
fn split_segment(segment: &str) -> Option<(&str, Option<&str>)> {
    match segment.split_once('(') {
        None => Some((segment, None)),
        Some((set, rest)) => rest.strip_suffix(')').map(|key| (set, Some(key))),
    }
}

async fn collection_or_record(
    State(state): State<Arc<TkState>>,
    Path(segment): Path<String>,
    Query(params): Query<Vec<(String, String)>>,
) -> Response<Body> {
    let not_found = || {
        odata_error(
            StatusCode::NOT_FOUND,
            "No HTTP resource was found that matches the request URI.",
        )
    };
    let Some((set, key)) = split_segment(&segment) else {
        return not_found();
    };
    if set == "DocumentPublicatie" && key.is_none() {
        return publications(&state, &params);
    }
    let Some((records, schema)) = tk_corpus().set(set) else {
        return not_found();
    };
    let own = state.shared.own();
    let records: Vec<Map<String, Value>> = records.iter().map(|r| as_served(set, r, &own)).collect();
    match key {
        Some(key) => single(&state, set, key, &records, schema, &params),
        None => collection(&state, set, &records, schema, &params),
    }
}

/// A record as served now: a report corrected when the settings say so.
fn as_served(set: &str, record: &Map<String, Value>, own: &TkSettings) -> Map<String, Value> {
    match set {
        "Verslag" => crate::tk_debates::served_verslag(record, own),
        "Vergadering" => crate::tk_debates::served_vergadering(record, own),
        _ => record.clone(),
    }
}

fn single(
    state: &TkState,
    set: &str,
    key: &str,
    records: &[Map<String, Value>],
    schema: odata::Schema,
    params: &[(String, String)],
) -> Response<Body> {
    let is_guid = key.len() == 36 && key.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-');
    if !is_guid {
        return odata_error(
            StatusCode::BAD_REQUEST,
            &format!("The key value '{key}' is not a valid Edm.Guid."),
        );
    }
    let mut expand = odata::Expand::default();
    for (name, value) in params {
        match name.as_str() {
            "$expand" => match odata::Expand::parse(value, schema) {
                Ok(e) => expand = e,
                Err(e) => {
                    return odata_error(
                        StatusCode::BAD_REQUEST,
                        &format!("The query specified in the URI is not valid. {}", e.0),
                    );
                }
            },
            other if other.starts_with('$') => {
                return odata_error(
                    StatusCode::BAD_REQUEST,
                    &format!("The query parameter '{other}' is not supported."),
                );
            }
            _ => {}
        }
    }
    let found = records.iter().find(|r| {
        r.get("Id")
            .and_then(Value::as_str)
            .is_some_and(|v| v.eq_ignore_ascii_case(key))
    });
    match found.map(|r| expand.apply(r, schema)) {
        Some(Err(e)) => odata_error(
            StatusCode::BAD_REQUEST,
            &format!("The query specified in the URI is not valid. {}", e.0),
        ),
        Some(Ok(record)) => {
            let mut body = record;
            body.insert(
                "@odata.context".into(),
                format!("{}/$metadata#{set}/$entity", state.base_url).into(),
            );
            json_response(StatusCode::OK, &Value::Object(body))
        }
        None => odata_error(StatusCode::NOT_FOUND, &format!("No {set} with key {key}.")),
    }
}

fn collection(
    state: &TkState,
    set: &str,
    records: &[Map<String, Value>],
    schema: odata::Schema,
    params: &[(String, String)],
) -> Response<Body> {
    let bad = |message: String| odata_error(StatusCode::BAD_REQUEST, &message);
    let mut q = match Options::parse(set, schema, params) {
        Ok(q) => q,
        Err(message) => return bad(message),
    };
    let mut rows: Vec<&Map<String, Value>> = records
        .iter()
        .filter(|r| q.filter.as_ref().is_none_or(|f| f.matches(r)))
        .collect();
    if !q.orderby.is_empty() {
        // A stable sort keeps generation order among equal keys.
        rows.sort_by(|a, b| odata::compare(a, b, &q.orderby));
    }
    let total = rows.len();
    if let Some(after) = &q.after {
        // Server-driven paging: the rows after the one the token names.
        let at = rows.iter().position(|r| {
            r.get("Id")
                .and_then(Value::as_str)
                .is_some_and(|id| id.eq_ignore_ascii_case(after))
        });
        match at {
            Some(at) => q.skip = q.skip.saturating_add(at + 1),
            None => return bad(format!("The skip token value 'Id-{after}' is invalid.")),
        }
    }
    let take = q.top.map_or(PAGE_ROWS, |t| t.min(PAGE_ROWS));
    let mut page: Vec<Value> = Vec::new();
    for r in rows.iter().skip(q.skip).take(take) {
        let mut row = match q.expand.apply(r, schema) {
            Ok(row) => row,
            Err(e) => return bad(format!("The query specified in the URI is not valid. {}", e.0)),
        };
        if q.expand_besluit {
            let id = r.get("Id").and_then(Value::as_str).unwrap_or("");
            let besluiten = tk_corpus().besluiten_of(id).into_iter().cloned().map(Value::Object);
            row.insert("Besluit".into(), Value::Array(besluiten.collect()));
        }
        page.push(Value::Object(row));
    }
    let mut body = Map::new();
    body.insert(
        "@odata.context".into(),
        format!("{}/$metadata#{set}", state.base_url).into(),
    );
    if q.count {
        body.insert("@odata.count".into(), total.into());
    }
    body.insert("value".into(), page.into());
    if q.top.is_none() && q.skip.saturating_add(PAGE_ROWS) < total {
        body.insert(
            "@odata.nextLink".into(),
            next_link(state, set, params, &rows, q.skip).into(),
        );
    }
    json_response(StatusCode::OK, &Value::Object(body))
}

/// What a collection's query options ask.
struct Options {
    filter: Option<odata::Expr>,
    orderby: Vec<odata::OrderKey>,
    top: Option<usize>,
    skip: usize,
    count: bool,
    /// A case's decisions, a relation kept beside the records.
    expand_besluit: bool,
    /// The navigation properties held in the records.
    expand: odata::Expand,
    /// The row a `$skiptoken` names, lower case.
    after: Option<String>,
}

impl Options {
    /// The options `params` give a query of `set`, or the platform's message refusing them.
    fn parse(set: &str, schema: odata::Schema, params: &[(String, String)]) -> Result<Options, String> {
        let mut q = Options {
            filter: None,
            orderby: Vec::new(),
            top: None,
            skip: 0,
            count: false,
            expand_besluit: false,
            expand: odata::Expand::default(),
            after: None,
        };
        let invalid = |e: odata::ParseError| format!("The query specified in the URI is not valid. {}", e.0);
        for (name, value) in params {
            match name.as_str() {
                "$filter" => q.filter = Some(odata::parse_filter(value, schema).map_err(invalid)?),
                "$orderby" => q.orderby = odata::parse_orderby(value, schema).map_err(invalid)?,
                "$top" => match value.parse::<usize>() {
                    Ok(n) => q.top = Some(n),
                    Err(_) => return Err(format!("Invalid value '{value}' for $top query option.")),
                },
                "$skip" => match value.parse::<usize>() {
                    Ok(n) => q.skip = n,
                    Err(_) => return Err(format!("Invalid value '{value}' for $skip query option.")),
                },
                "$count" => match value.as_str() {
                    "true" => q.count = true,
                    "false" => q.count = false,
                    _ => return Err(format!("Invalid value '{value}' for $count query option.")),
                },
                // A case's decisions, a relation kept beside the records.
                "$expand" if set == "Zaak" && value == "Besluit" => q.expand_besluit = true,
                // The navigation properties held in the records.
                "$expand" => q.expand = odata::Expand::parse(value, schema).map_err(invalid)?,
                "$skiptoken" => match value.strip_prefix("Id-") {
                    Some(id) if !id.is_empty() => q.after = Some(id.to_ascii_lowercase()),
                    _ => return Err(format!("The skip token value '{value}' is invalid.")),
                },
                other if other.starts_with('$') => {
                    return Err(format!("The query parameter '{other}' is not supported."));
                }
                _ => {}
            }
        }
        Ok(q)
    }
}

/// The link to the page after the one from row `skip` of `rows`: the same options, and
/// the last row's key for a set the platform pages by `$skiptoken`, else `$skip`.
fn next_link(
    state: &TkState,
    set: &str,
    params: &[(String, String)],
    rows: &[&Map<String, Value>],
    skip: usize,
) -> String {
    let mut query: Vec<String> = params
        .iter()
        .filter(|(k, _)| k != "$skip" && k != "$skiptoken")
        .map(|(k, v)| format!("{}={}", encode_component(k), encode_component(v)))
        .collect();
    if SKIPTOKEN_SETS.contains(&set) {
        // The last row's key, as the platform's server-driven paging writes it.
        let last = rows[skip + PAGE_ROWS - 1]
            .get("Id")
            .and_then(Value::as_str)
            .unwrap_or("");
        query.push(format!("$skiptoken={}", encode_component(&format!("Id-{last}"))));
    } else {
        query.push(format!("$skip={}", skip + PAGE_ROWS));
    }
    format!("{}/{set}?{}", state.base_url, query.join("&"))
}

/// The id of the `i`th document's XML rendition.
fn publication_id(document_id: &str) -> String {
    format!("d0c0{}", &document_id[4..])
}

/// `DocumentPublicatie` filtered the platform's way: XML renditions of the document
/// with this number. The fake reads only that filter; anything else is a 400.
fn publications(state: &TkState, params: &[(String, String)]) -> Response<Body> {
    let filter = params
        .iter()
        .find(|(k, _)| k == "$filter")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    const NUMBER: &str = "DocumentVersie/Document/Nummer eq '";
    let number = filter
        .split_once(NUMBER)
        .and_then(|(_, rest)| rest.split_once('\''))
        .map(|(n, _)| n);
    let (Some(number), true) = (number, filter.contains("DocumentType eq 'Xml'")) else {
        return odata_error(
            StatusCode::BAD_REQUEST,
            "The query specified in the URI is not valid (the fake reads only the XML rendition filter).",
        );
    };
    let corpus = tk_corpus();
    let value: Vec<Value> = corpus
        .documents()
        .iter()
        .enumerate()
        .filter(|(i, d)| has_xml_rendition(*i) && d.get("DocumentNummer").and_then(Value::as_str) == Some(number))
        .filter_map(|(_, d)| d.get("Id").and_then(Value::as_str))
        .map(|id| json!({"Id": publication_id(id), "DocumentType": "Xml", "Verwijderd": false}))
        .collect();
    json_response(
        StatusCode::OK,
        &json!({"@odata.context": format!("{}/$metadata#DocumentPublicatie", state.base_url), "value": value}),
    )
}

/// The corpus files the fake serves, made by `scripts/text-corpus`.
const BRIEF_PDF: &[u8] = include_bytes!("../../../server/tests/corpus/brief.pdf");
const BRIEF_DOCX: &[u8] = include_bytes!("../../../server/tests/corpus/brief.docx");
const BRIEF_RTF: &[u8] = include_bytes!("../../../server/tests/corpus/brief.rtf");
const SCAN_PDF: &[u8] = include_bytes!("../../../server/tests/corpus/scan.pdf");
const COLUMNS_PDF: &[u8] = include_bytes!("../../../server/tests/corpus/tweekoloms.pdf");
/// The start of a legacy Word file: an OLE2 compound file header.
const LEGACY_DOC: &[u8] = &[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1, 0, 0, 0, 0, 0, 0, 0, 0];

/// The KOOP XML rendition of a document, in the officielepublicaties vocabulary.
pub fn rendition_xml(document: &Map<String, Value>) -> String {
    let field = |k: &str| {
        document
            .get(k)
            .and_then(Value::as_str)
            .unwrap_or("")
            .replace('&', "&amp;")
            .replace('<', "&lt;")
    };
    format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<officiele-publicatie><metadata><meta name=\"DC.identifier\" \
         content=\"{nummer}\"/></metadata><kamerstuk><dossier><titel>{titel}</titel></dossier><stuk><titel>{onderwerp}</titel>\
         <algemeen><al>Deze tekst is de XML-weergave van document {nummer}; de geëvalueerde maatregelen staan hieronder.</al>\
         <lijst><li><li.nr>1.</li.nr><al>financiële gevolgen voor gemeenten;</al></li></lijst></algemeen></stuk></kamerstuk>\
         </officiele-publicatie>\n",
        nummer = field("DocumentNummer"),
        titel = field("Titel"),
        onderwerp = field("Onderwerp"),
    )
}

/// A rendition made long: numbered paragraphs added to its `algemeen` part up to
/// [`LONG_RENDITION_CHARS`], far longer than a page of `tk_document_text`'s answer.
fn lengthen_rendition(xml: &str) -> String {
    let mut paragraphs = String::new();
    let mut n = 1;
    while paragraphs.len() < LONG_RENDITION_CHARS {
        paragraphs.push_str(&format!(
            "<al>{n}. De regering zet de maatregelen voort en informeert de Kamer over de voortgang, de kosten en \
             de gevolgen voor gemeenten, provincies en waterschappen.</al>"
        ));
        n += 1;
    }
    xml.replacen("</algemeen>", &format!("{paragraphs}</algemeen>"), 1)
}

async fn resource(Path(segment): Path<String>) -> Response<Body> {
    let corpus = tk_corpus();
    match split_segment(&segment) {
        Some(("Document", Some(key))) => match corpus.document_index(key) {
            Some(i) => {
                let kind = FileKind::of(i);
                let bytes = match kind {
                    FileKind::Pdf => BRIEF_PDF,
                    FileKind::DocxAsPdf => BRIEF_DOCX,
                    FileKind::Rtf => BRIEF_RTF,
                    FileKind::Scan => SCAN_PDF,
                    FileKind::Doc => LEGACY_DOC,
                    FileKind::TwoColumnPdf => COLUMNS_PDF,
                };
                raw_response(StatusCode::OK, kind.promised_type(), bytes)
            }
            None => odata_error(StatusCode::NOT_FOUND, "No resource was found."),
        },
        Some(("Verslag", Some(key))) => match corpus.report_file(key) {
            Some(bytes) => raw_response(StatusCode::OK, "text/xml", bytes),
            None => odata_error(StatusCode::NOT_FOUND, "No resource was found."),
        },
        Some(("DocumentPublicatie", Some(key))) => {
            let found = corpus.documents().iter().enumerate().find(|(i, d)| {
                has_xml_rendition(*i)
                    && d.get("Id")
                        .and_then(Value::as_str)
                        .is_some_and(|id| publication_id(id).eq_ignore_ascii_case(key))
            });
            match found {
                // The platform's own wrong type for its XML renditions is not known; a
                // generic one keeps the client honest about sniffing.
                Some((i, d)) => {
                    let mut xml = rendition_xml(d);
                    if has_long_rendition(i) {
                        xml = lengthen_rendition(&xml);
                    }
                    raw_response(StatusCode::OK, "application/octet-stream", xml)
                }
                None => odata_error(StatusCode::NOT_FOUND, "No resource was found."),
            }
        }
        _ => odata_error(StatusCode::NOT_FOUND, "No resource was found."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_split_into_set_and_key() {
        assert_eq!(split_segment("Document"), Some(("Document", None)));
        assert_eq!(split_segment("Document(abc)"), Some(("Document", Some("abc"))));
        assert_eq!(split_segment("Document(abc"), None);
    }
}
