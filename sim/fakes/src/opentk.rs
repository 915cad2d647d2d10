//! Fake OpenTK (berthub.eu/tkconv; PLATFORMS.md §4 and §10.3) under `/tkconv`:
//! `POST /search` (multipart/form-data only), `/getdoc/{nummer}` (HTML, a proper 404),
//! `/getraw/{nummer}` (a PDF; 200 text "Could not find …" when unknown),
//! `/kst-{dossier}-{nr}` (301 to `document.html?nummer=…`; 404 "No such kst"),
//! `/document.html?nummer=`, `/activiteit/{nummer}` (JSON; 200 text "Found nothing!!"),
//! `/commissie/{id}` (200 with an empty body when unknown) and `/lastupdates`.
//!
//! Invariants:
//! - A search whose body is not multipart/form-data is read as an empty query, as the
//!   platform does (no hits), and counted in
//!   [`FakeHandle::unreadable_bodies`](crate::FakeHandle::unreadable_bodies).
//! - Searches return at most [`MAX_HITS`] hits, newest first; `moties` and
//!   `vragenantwoorden` are applied after that cap, `activiteiten` before it.
//! - Every GET 200 carries an `ETag` (a hash of the body and its length); a matching
//!   `If-None-Match` gets a bodiless 304. Full bodies and 304s are counted
//!   ([`FakeHandle::downloads`](crate::FakeHandle::downloads),
//!   [`FakeHandle::not_modified`](crate::FakeHandle::not_modified)).
//! - Its own setting [`OpenTkSettings::busy`] (declared here and named by its registry
//!   line through `Fake`; `opentk:busy=true` in the textual form) cuts every search
//!   short: three hits and `milliseconds` near the 2-second budget.
//! - No rate limit (none is published).
//!
//! The corpus is generated from a fixed seed: documents `2026D10001`…, activities
//! `2026A00001`…, computed the same way by [`opentk_corpus`] for tests.

use besluitbron_core::{Platform, PlatformId};
use std::sync::{Arc, OnceLock};

use axum::Router;
use axum::body::Body;
use axum::extract::{FromRequest, Multipart, Path, Query, Request, State};
use axum::http::{HeaderMap, Response, StatusCode, header};
use axum::middleware;
use axum::routing::{get, post};
use serde_json::{Value, json};

use crate::fake::FakePlatform;
use crate::faults::{self, FaultReplies, Faults};
use crate::own::{OwnChange, OwnSettings};
use crate::setting_text::{FaultParseError, flag};
use crate::shared::Shared;
use crate::{mix64, pick, raw_response};

/// The path OpenTK lives under.
pub const PREFIX: &str = "/tkconv";
/// Hits per search at most.
pub const MAX_HITS: usize = 280;
/// Documents in the corpus.
pub const DOCUMENT_COUNT: usize = 400;
/// Activities in the corpus.
pub const ACTIVITY_COUNT: usize = 40;

const TOPICS: [&str; 8] = [
    "stikstof",
    "woningbouw",
    "asiel",
    "klimaat",
    "onderwijs",
    "zorg",
    "defensie F-35",
    "begroting",
];
const KINDS: [&str; 5] = [
    "Motie",
    "Brief regering",
    "Schriftelijke vragen",
    "Antwoord schriftelijke vragen",
    "Verslag",
];

/// One document of the corpus.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenTkDocument {
    /// `2026D10001`, ….
    pub nummer: String,
    /// ISO date.
    pub datum: String,
    /// Kind (`Motie`, …, or `Activiteit`).
    pub category: String,
    /// Subject.
    pub onderwerp: String,
    /// Body text.
    pub text: String,
    /// Its kamerstuk id, for the first hundred (`kst-36200-1`, …).
    pub kamerstuk: Option<String>,
}

/// The corpus.
#[derive(Debug)]
pub struct OpenTkCorpus {
    /// Documents, oldest first (the newest is indexed last).
    pub documents: Vec<OpenTkDocument>,
}

/// Every n-th document (the first among them) has a long text, far longer than a page of
/// a document tool's answer, for paging and answer-budget tests.
pub const LONG_DOCUMENT_EVERY: usize = 50;
/// A long document's text is at least this many characters.
pub const LONG_DOCUMENT_CHARS: usize = 60_000;

/// `opening`, and for every [`LONG_DOCUMENT_EVERY`]-th document numbered paragraphs after
/// it up to [`LONG_DOCUMENT_CHARS`].
fn long_text(i: usize, opening: String) -> String {
    if !i.is_multiple_of(LONG_DOCUMENT_EVERY) {
        return opening;
    }
    let mut text = opening;
    let mut n = 1;
    while text.len() < LONG_DOCUMENT_CHARS {
        text.push_str(&format!(
            " {n}. De Kamer overweegt dat de regering de gevolgen van het voorstel voor burgers, bedrijven en \
             gemeenten in kaart brengt en de Kamer daarover voor het einde van het jaar informeert."
        ));
        n += 1;
    }
    text
}

/// The fake's corpus, generated once per process.
pub fn opentk_corpus() -> &'static OpenTkCorpus {
    static CORPUS: OnceLock<OpenTkCorpus> = OnceLock::new();
    CORPUS.get_or_init(|| {
        let documents = (0..DOCUMENT_COUNT)
            .map(|i| {
                let topic = TOPICS[pick(41, i as u64, TOPICS.len())];
                let category = if i % 25 == 24 {
                    "Activiteit"
                } else {
                    KINDS[pick(42, i as u64, KINDS.len())]
                };
                // Oldest first, spread over 2026-06-01 .. 2026-11-30.
                let day = crate::days_after(crate::day(2026, 1, 1), 152 + (i * 182 / DOCUMENT_COUNT) as u64);
                OpenTkDocument {
                    // An activity is numbered as one (`2026A…`, what `/activiteit/{n}` takes),
                    // a document as a document.
                    nummer: if category == "Activiteit" {
                        format!("2026A{:05}", (i + 1) / 25)
                    } else {
                        format!("2026D{:05}", 10_001 + i)
                    },
                    datum: day.format("%Y-%m-%d").to_string(),
                    category: category.to_owned(),
                    onderwerp: format!("{category} over {topic} ({})", mix64(i as u64) % 1000),
                    text: long_text(
                        i,
                        format!(
                            "De Tweede Kamer spreekt over {topic}. Nummer {} van de kamer, punt {}.",
                            10_001 + i,
                            i % 7
                        ),
                    ),
                    kamerstuk: (i < 100).then(|| format!("kst-36200-{}", i + 1)),
                }
            })
            .collect();
        OpenTkCorpus { documents }
    })
}

impl OpenTkCorpus {
    /// The document numbered `nummer`.
    pub fn document(&self, nummer: &str) -> Option<&OpenTkDocument> {
        self.documents.iter().find(|d| d.nummer == nummer)
    }

    /// What a search answers: the query's words (operators and quotes dropped) must all
    /// occur in subject or text; newest first; `activiteiten` before the cap, the cap,
    /// then `moties`/`vragenantwoorden`; `twomonths` keeps dates from 2026-10-01.
    pub fn search(&self, q: &str, twomonths: bool, soorten: &str) -> Vec<&OpenTkDocument> {
        let words: Vec<String> = q
            .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
            .map(|w| w.trim_matches(|c| c == '"' || c == '*').to_lowercase())
            .filter(|w| !w.is_empty() && !["and", "or", "not", "near"].contains(&w.as_str()))
            .collect();
        if words.is_empty() {
            return Vec::new();
        }
        let hits = self.documents.iter().rev().filter(|d| {
            let hay = format!("{} {}", d.onderwerp, d.text).to_lowercase();
            words.iter().all(|w| hay.contains(w.as_str()))
                && (!twomonths || d.datum.as_str() >= "2026-10-01")
                && (soorten != "activiteiten" || d.category == "Activiteit")
        });
        let capped: Vec<&OpenTkDocument> = hits.take(MAX_HITS).collect();
        capped
            .into_iter()
            .filter(|d| match soorten {
                "moties" => d.category == "Motie",
                "vragenantwoorden" => d.category.contains("vragen"),
                _ => true,
            })
            .collect()
    }
}

/// What the OpenTK fake does beyond the faults every fake applies; the default is the
/// platform at rest. Change it while running with
/// [`FakeHandle::update_own`](crate::FakeHandle::update_own)`::<OpenTkSettings>`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct OpenTkSettings {
    /// Searches are cut short by the platform's time budget (as under load): a few hits
    /// and `milliseconds` close to the 2-second budget. Textual form: `busy=true|false`.
    pub busy: bool,
}

impl OwnSettings for OpenTkSettings {
    const NAMES: &'static [&'static str] = &["busy"];

    fn parse(name: &str, value: &str) -> Option<Result<OwnChange<OpenTkSettings>, FaultParseError>> {
        match name {
            "busy" => Some(flag(name, value).map(|on| OwnChange::new(move |s: &mut OpenTkSettings| s.busy = on))),
            _ => None,
        }
    }
}

/// The OpenTK fake, as its registry line names it.
pub(crate) struct Fake;

/// The platform this fake imitates (its short id and public name, as the server's
/// connector declares them).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "opentk",
    name: "OpenTK",
});

impl FakePlatform for Fake {
    type Own = OpenTkSettings;

    fn router(shared: Shared<OpenTkSettings>, base_url: String) -> Router {
        router(shared, base_url)
    }
}

struct OpenTkState {
    shared: Shared<OpenTkSettings>,
    base_url: String,
}

/// The OpenTK routes, to be served at the root or nested under a prefix.
fn router(shared: Shared<OpenTkSettings>, base_url: String) -> Router {
    let faults = Faults::new(shared.clone(), &REPLIES);
    let state = Arc::new(OpenTkState { shared, base_url });
    Router::new()
        .route(&format!("{PREFIX}/search"), post(search))
        .route(&format!("{PREFIX}/getdoc/{{nummer}}"), get(getdoc))
        .route(&format!("{PREFIX}/getraw/{{nummer}}"), get(getraw))
        .route(&format!("{PREFIX}/document.html"), get(document_page))
        .route(&format!("{PREFIX}/activiteit/{{nummer}}"), get(activiteit))
        .route(&format!("{PREFIX}/commissie/{{id}}"), get(commissie))
        .route(&format!("{PREFIX}/lastupdates"), get(lastupdates))
        .route(&format!("{PREFIX}/{{kst}}"), get(kamerstuk))
        .fallback(|| async { raw_response(StatusCode::NOT_FOUND, "text/plain", "Found nothing!!") })
        .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
        .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
        .with_state(state)
}

static REPLIES: FaultReplies<OpenTkSettings> = FaultReplies {
    failure: r#"{"error":"Internal server error"}"#,
    // OpenTK sends no 429 of its own; a storm's is worded as its other JSON.
    storm: |_, _| {
        raw_response(
            StatusCode::TOO_MANY_REQUESTS,
            "application/json",
            r#"{"error":"Too many requests"}"#,
        )
    },
};

/// A GET answer with an `ETag`; a matching `If-None-Match` gets a bodiless 304.
fn etagged(state: &OpenTkState, headers: &HeaderMap, content_type: &'static str, body: String) -> Response<Body> {
    let etag = format!("\"{:016x}-{}\"", mix64(fnv(body.as_bytes())), body.len());
    let matches = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == etag));
    let mut response = if matches {
        state
            .shared
            .not_modified
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let mut r = Response::new(Body::empty());
        *r.status_mut() = StatusCode::NOT_MODIFIED;
        r
    } else {
        state
            .shared
            .downloads
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        raw_response(StatusCode::OK, content_type, body)
    };
    if let Ok(v) = etag.parse() {
        response.headers_mut().insert(header::ETAG, v);
    }
    response
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

async fn search(State(state): State<Arc<OpenTkState>>, request: Request) -> Response<Body> {
    let is_multipart = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("multipart/form-data"));
    let (mut q, mut twomonths, mut soorten) = (String::new(), false, "alles".to_owned());
    if is_multipart {
        match Multipart::from_request(request, &()).await {
            Ok(mut form) => {
                while let Ok(Some(field)) = form.next_field().await {
                    let name = field.name().unwrap_or("").to_owned();
                    let value = field.text().await.unwrap_or_default();
                    match name.as_str() {
                        "q" => q = value,
                        "twomonths" => twomonths = value == "true",
                        "soorten" => soorten = value,
                        _ => {}
                    }
                }
            }
            Err(_) => {
                state
                    .shared
                    .unreadable_bodies
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            }
        }
    } else {
        state
            .shared
            .unreadable_bodies
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
    let busy = state.shared.own().busy;
    let mut hits = opentk_corpus().search(&q, twomonths, &soorten);
    let milliseconds = if busy {
        hits.truncate(3);
        1_960
    } else {
        12
    };
    let results: Vec<Value> = hits
        .iter()
        .map(|d| {
            json!({
                "nummer": d.nummer,
                "datum": d.datum,
                "score": 1.0,
                "category": d.category,
                "onderwerp": d.onderwerp,
                "snip": snippet(&d.text, &q),
                "relurl": format!("document.html?nummer={}", d.nummer),
                "bijgewerkt": d.datum,
                "persoonnummer": null
            })
        })
        .collect();
    raw_response(
        StatusCode::OK,
        "application/json",
        json!({"results": results, "milliseconds": milliseconds}).to_string(),
    )
}

/// `text` with the query's first word marked `<b>…</b>` where it occurs.
fn snippet(text: &str, q: &str) -> String {
    let word = q
        .split_whitespace()
        .next()
        .unwrap_or("")
        .trim_matches(|c| c == '"' || c == '*');
    match (!word.is_empty())
        .then(|| text.to_lowercase().find(&word.to_lowercase()))
        .flatten()
    {
        Some(at) if text.is_char_boundary(at) && text.is_char_boundary(at + word.len()) => {
            format!(
                "{}<b>{}</b>{}",
                &text[..at],
                &text[at..at + word.len()],
                &text[at + word.len()..]
            )
        }
        _ => text.to_owned(),
    }
}

fn html_of(d: &OpenTkDocument) -> String {
    format!(
        "<!DOCTYPE html><html><head><title>{}</title></head><body><h1>{}</h1><p>{}</p><p>Datum: {}</p></body></html>",
        d.onderwerp, d.onderwerp, d.text, d.datum
    )
}

async fn getdoc(
    State(state): State<Arc<OpenTkState>>,
    Path(nummer): Path<String>,
    headers: HeaderMap,
) -> Response<Body> {
    match opentk_corpus().document(&nummer) {
        Some(d) => etagged(&state, &headers, "text/html; charset=utf-8", html_of(d)),
        None => raw_response(StatusCode::NOT_FOUND, "text/plain", "Found nothing!!"),
    }
}

/// The original file every document serves.
pub const RAW_PDF: &[u8] = include_bytes!("../../../server/tests/corpus/brief.pdf");

async fn getraw(Path(nummer): Path<String>) -> Response<Body> {
    match opentk_corpus().document(&nummer) {
        // Every document's original file is a real PDF with a text layer: the corpus
        // letter (server/tests/corpus/brief.txt is its text).
        Some(_) => raw_response(StatusCode::OK, "application/pdf", RAW_PDF.to_vec()),
        None => raw_response(
            StatusCode::OK,
            "text/plain",
            format!("Could not find a Verslag with id {nummer}"),
        ),
    }
}

async fn document_page(
    State(state): State<Arc<OpenTkState>>,
    Query(params): Query<Vec<(String, String)>>,
    headers: HeaderMap,
) -> Response<Body> {
    let nummer = params
        .iter()
        .find(|(k, _)| k == "nummer")
        .map(|(_, v)| v.as_str())
        .unwrap_or("");
    match opentk_corpus().document(nummer) {
        Some(d) => etagged(&state, &headers, "text/html; charset=utf-8", html_of(d)),
        None => raw_response(StatusCode::NOT_FOUND, "text/plain", "Found nothing!!"),
    }
}

async fn kamerstuk(State(state): State<Arc<OpenTkState>>, Path(kst): Path<String>) -> Response<Body> {
    let found = opentk_corpus()
        .documents
        .iter()
        .find(|d| d.kamerstuk.as_deref() == Some(kst.as_str()));
    match found {
        Some(d) => {
            let mut r = raw_response(StatusCode::MOVED_PERMANENTLY, "text/plain", "");
            let location = format!("{}/document.html?nummer={}", state.base_url, d.nummer);
            if let Ok(v) = location.parse() {
                r.headers_mut().insert(header::LOCATION, v);
            }
            r
        }
        None if kst.starts_with("kst-") => raw_response(StatusCode::NOT_FOUND, "text/plain", "No such kst"),
        None => raw_response(StatusCode::NOT_FOUND, "text/plain", "Found nothing!!"),
    }
}

/// The activity numbered `nummer`, as OpenTK's JSON.
pub fn activity_json(nummer: &str) -> Option<Value> {
    let n: usize = nummer.strip_prefix("2026A")?.parse().ok()?;
    if n == 0 || n > ACTIVITY_COUNT {
        return None;
    }
    let topic = TOPICS[pick(43, n as u64, TOPICS.len())];
    let docs: Vec<Value> = opentk_corpus()
        .documents
        .iter()
        .skip(n * 3)
        .take(3)
        .map(|d| json!({"nummer": d.nummer, "soort": d.category, "onderwerp": d.onderwerp}))
        .collect();
    Some(json!({
        "meta": {
            "nummer": nummer,
            "soort": "Commissiedebat",
            "onderwerp": format!("Commissiedebat {topic}"),
            "aanvangstijd": format!("2026-11-{:02}T10:00:00", 1 + n % 28),
            "eindtijd": format!("2026-11-{:02}T13:00:00", 1 + n % 28),
            "status": "Uitgevoerd"
        },
        "persactors": [{"naam": "A. de Vries", "fractie": "VVD"}],
        "comactors": [{"naam": format!("Vaste commissie voor {topic}")}],
        "zaal": {"naam": "Thorbeckezaal"},
        "agendapunten": [
            {"onderwerp": format!("Beleid {topic}"), "docs": docs, "zdocs": []},
            {"onderwerp": "Rondvraag", "docs": [], "zdocs": []}
        ],
        "docs": [],
        "toezeggingen": [{"tekst": format!("De minister stuurt voor de zomer een brief over {topic}.")}],
        "videourl": format!("https://debatdirect.example.invalid/{nummer}")
    }))
}

async fn activiteit(
    State(state): State<Arc<OpenTkState>>,
    Path(nummer): Path<String>,
    headers: HeaderMap,
) -> Response<Body> {
    match activity_json(&nummer) {
        Some(v) => etagged(&state, &headers, "application/json", v.to_string()),
        // OpenTK's not-found here is a 200.
        None => raw_response(StatusCode::OK, "text/plain", "Found nothing!!"),
    }
}

async fn commissie(Path(_id): Path<String>) -> Response<Body> {
    // Unknown committees answer 200 with an empty body (§10.3); the fake knows none.
    raw_response(StatusCode::OK, "application/json", "")
}

/// The harvesters and their last runs, as `/lastupdates` answers.
pub fn last_updates_json() -> Value {
    json!({
        "tkgetxml": {"absolute": 1_796_000_000u64, "relative": 600},
        "oppull": {"absolute": 1_795_990_000u64, "relative": 10_600},
        "tkindex": {"absolute": 1_795_999_000u64, "relative": 1_600}
    })
}

async fn lastupdates(State(state): State<Arc<OpenTkState>>, headers: HeaderMap) -> Response<Body> {
    etagged(&state, &headers, "application/json", last_updates_json().to_string())
}
