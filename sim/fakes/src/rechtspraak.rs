//! Fake Rechtspraak open-data service (PLATFORMS.md §6, §10.2): the Atom search feed
//! `/uitspraken/zoeken`, one ruling's RDF and text `/uitspraken/content?id=ECLI`, and
//! the value lists `/Waardelijst/Instanties`, `/Waardelijst/Rechtsgebieden`,
//! `/Waardelijst/Proceduresoorten`, over [`RsCorpus`] and, at `/uitspraken/content`, the
//! real answers of `corpus/rechtspraak/` ([`real_rulings`]).
//!
//! Invariants (the real service's, as documented):
//! - Only `type creator subject date modified return replaces max from sort` are read;
//!   every other parameter (`q`, `keyword`, …) is silently ignored, so a search with
//!   nothing else returns the whole corpus.
//! - `from` is 0-based; `max` defaults to 1000 and is capped at 1000; the subtitle
//!   holds "Aantal gevonden ECLI's: N", the number of all matches.
//! - `creator` matches a court's identifier exactly (the short psi form of a court whose
//!   identifier is the OWMS URI finds nothing, without an error); `subject` matches an
//!   area a ruling is tagged with (most are tagged only at the top level).
//! - A malformed `date`, `modified`, `from`, `max` or `sort` is a 400 with an HTML
//!   page; a well-formed but impossible date (`2026-02-30`) is a 200 whose body is not
//!   XML; a ruling that is not published (or withdrawn) is a redirect to
//!   `https://mededeling.rechtspraak.nl/404` — a client that does not check the final
//!   URL and the body takes these for answers.
//! - No rate limit and no rate-limit headers (none are published); a storm's 429 is a
//!   bare HTML page.
//! - A real ruling (with its text, or metadata only) is served at
//!   `/uitspraken/content?id=ECLI` as its file is, byte for byte, whatever `return` asks
//!   (the corpus holds the whole answer only); its ECLI is none of the generated ones.
//!
//! Settings: only the faults every fake applies; it has none of its own (its `Fake`,
//! which its registry line names, declares `()`).
//!
//! What this fake does not do: images (`/uitspraken/image`), the other value lists, the
//! website's `api/zoek`, or list the real rulings in the search feed (the corpus has no
//! feed entries of theirs).

use besluitbron_core::{Platform, PlatformId};
use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::extract::Query;
use axum::http::{Response, StatusCode, header};
use axum::middleware;
use axum::routing::get;

use crate::fake::FakePlatform;
use crate::faults::{self, FaultReplies, Faults};
use crate::real;
use crate::rechtspraak_corpus::esc;
pub use crate::rechtspraak_corpus::{
    BUSY_DAY, BUSY_DAY_RULINGS, FOOTNOTES_ECLI, LONG_ECLI, METADATA_ONLY_ECLI, RsArea, RsCorpus, RsCourt, RsProcedure,
    RsQuery, RsRelation, RsRuling, dutch_date,
};
use crate::shared::Shared;
use crate::{parse_date, raw_response};

/// The most entries one page holds.
pub const MAX_PAGE: usize = 1000;
/// Where the service sends a request for something it does not publish.
pub const NOTICE_URL: &str = "https://mededeling.rechtspraak.nl/404";

/// The Rechtspraak fake's data, generated once per process.
pub fn rechtspraak_corpus() -> &'static RsCorpus {
    static CORPUS: OnceLock<RsCorpus> = OnceLock::new();
    CORPUS.get_or_init(RsCorpus::generate)
}

/// The real rulings the fake serves: (ECLI, the `/uitspraken/content` answer as the corpus
/// has it), in the corpus's order.
pub fn real_rulings() -> impl Iterator<Item = (String, &'static [u8])> {
    real::rechtspraak()
        .iter()
        .map(|f| (f.stem().replace('_', ":"), f.bytes))
}

/// The Rechtspraak fake, as its registry line names it: it has nothing of its own to set.
pub(crate) struct Fake;

/// The platform this fake imitates (its short id and public name, as the server's
/// connector declares them).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "rechtspraak",
    name: "Rechtspraak",
});

impl FakePlatform for Fake {
    const CORPUS: &'static [&'static str] = &["rechtspraak"];

    type Own = ();

    fn router(shared: Shared<()>, base_url: String) -> Router {
        router(shared, base_url)
    }
}

/// The Rechtspraak routes, to be served at the root or nested under a prefix.
fn router(shared: Shared<()>, _base_url: String) -> Router {
    let faults = Faults::new(shared, &REPLIES);
    Router::new()
        .route("/uitspraken/zoeken", get(search))
        .route("/uitspraken/content", get(content))
        .route(
            "/Waardelijst/Instanties",
            get(|| async { xml(rechtspraak_corpus().instanties_xml()) }),
        )
        .route(
            "/Waardelijst/Rechtsgebieden",
            get(|| async { xml(rechtspraak_corpus().rechtsgebieden_xml()) }),
        )
        .route(
            "/Waardelijst/Proceduresoorten",
            get(|| async { xml(rechtspraak_corpus().proceduresoorten_xml()) }),
        )
        .fallback(|| async { html(StatusCode::NOT_FOUND, "De pagina is niet gevonden.") })
        .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
        .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
}

/// Rechtspraak's words for the faults of `faults.rs`.
static REPLIES: FaultReplies<()> = FaultReplies {
    failure: "<html><body><h1>500 - Internal server error.</h1></body></html>",
    storm: |_, ()| html(StatusCode::TOO_MANY_REQUESTS, "Te veel verzoeken."),
};

fn xml(body: String) -> Response<Body> {
    raw_response(StatusCode::OK, "application/xml; charset=utf-8", body)
}

fn html(status: StatusCode, message: &str) -> Response<Body> {
    raw_response(
        status,
        "text/html; charset=utf-8",
        format!(
            "<!DOCTYPE html><html><head><title>Rechtspraak</title></head><body><p>{}</p></body></html>",
            esc(message)
        ),
    )
}

fn notice_redirect() -> Response<Body> {
    let mut r = Response::new(Body::from("Object moved"));
    *r.status_mut() = StatusCode::FOUND;
    r.headers_mut()
        .insert(header::LOCATION, header::HeaderValue::from_static(NOTICE_URL));
    r
}

/// Checks a `YYYY-MM-DD`: `Err(true)` malformed, `Err(false)` well-formed but impossible.
fn check_day(text: &str) -> Result<(), bool> {
    let b = text.as_bytes();
    let shaped = b.len() == 10
        && b[4] == b'-'
        && b[7] == b'-'
        && text
            .bytes()
            .enumerate()
            .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit());
    if !shaped {
        return Err(true);
    }
    parse_date(text).map(|_| ()).ok_or(false)
}

fn check_moment(text: &str) -> Result<(), bool> {
    let Some((day, time)) = text.split_once('T') else {
        return Err(true);
    };
    check_day(day)?;
    let t = time.as_bytes();
    let shaped = t.len() == 8 && t[2] == b':' && t[5] == b':';
    if !shaped
        || !time
            .bytes()
            .enumerate()
            .all(|(i, c)| i == 2 || i == 5 || c.is_ascii_digit())
    {
        return Err(true);
    }
    Ok(())
}

/// The search, as the service reads it: honoured parameters only.
fn read_query(params: &[(String, String)]) -> Result<(RsQuery, usize, usize), Box<Response<Body>>> {
    let bad = |name: &str| {
        Box::new(html(
            StatusCode::BAD_REQUEST,
            &format!("Ongeldige waarde voor parameter {name}."),
        ))
    };
    let impossible = || {
        Box::new(raw_response(
            StatusCode::OK,
            "text/plain; charset=utf-8",
            "Er is een fout opgetreden: de opgegeven datum bestaat niet.",
        ))
    };
    let mut q = RsQuery::default();
    let (mut dates, mut moments) = (Vec::new(), Vec::new());
    let (mut from, mut max) = (0usize, MAX_PAGE);
    for (name, value) in params {
        match name.as_str() {
            "type" => q.types.push(value.clone()),
            "creator" => q.creators.push(value.clone()),
            "subject" => q.subjects.push(value.clone()),
            "date" => match check_day(value) {
                Ok(()) => dates.push(value.clone()),
                Err(true) => return Err(bad("date")),
                Err(false) => return Err(impossible()),
            },
            "modified" => match check_moment(value) {
                Ok(()) => moments.push(value.clone()),
                Err(true) => return Err(bad("modified")),
                Err(false) => return Err(impossible()),
            },
            "return" => q.with_doc |= value.eq_ignore_ascii_case("DOC"),
            "replaces" => q.replaces = Some(value.clone()),
            "from" => from = value.parse().map_err(|_| bad("from"))?,
            "max" => {
                let n: usize = value.parse().map_err(|_| bad("max"))?;
                if n == 0 {
                    return Err(bad("max"));
                }
                max = n.min(MAX_PAGE);
            }
            "sort" => match value.to_ascii_uppercase().as_str() {
                "ASC" => q.descending = false,
                "DESC" => q.descending = true,
                _ => return Err(bad("sort")),
            },
            // Everything else is silently ignored, as the real service does.
            _ => {}
        }
    }
    q.date = match dates.as_slice() {
        [] => None,
        [day] => Some((day.clone(), day.clone())),
        [a, b, ..] => Some((a.min(b).clone(), a.max(b).clone())),
    };
    q.modified = match moments.as_slice() {
        [] => None,
        [since] => Some((since.clone(), None)),
        [a, b, ..] => Some((a.min(b).clone(), Some(a.max(b).clone()))),
    };
    Ok((q, from, max))
}

async fn search(Query(params): Query<Vec<(String, String)>>) -> Response<Body> {
    let (query, from, max) = match read_query(&params) {
        Ok(read) => read,
        Err(response) => return *response,
    };
    let corpus = rechtspraak_corpus();
    let hits = corpus.search(&query);
    let mut x = String::from(
        "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<feed xmlns=\"http://www.w3.org/2005/Atom\">\n  <title type=\"text\">Rechtspraak.nl - Uitspraken</title>\n",
    );
    x.push_str(&format!(
        "  <subtitle type=\"text\">Aantal gevonden ECLI's: {}</subtitle>\n  <id>https://data.rechtspraak.nl/uitspraken/zoeken</id>\n  <updated>2026-12-01T00:00:00+01:00</updated>\n",
        hits.len()
    ));
    for r in hits.iter().skip(from).take(max) {
        let deleted = r.deleted.map(|d| format!(" deleted=\"{d}\"")).unwrap_or_default();
        let summary = r
            .summary
            .as_deref()
            .filter(|_| r.has_text && r.deleted.is_none())
            .unwrap_or("-");
        x.push_str(&format!(
            "  <entry{deleted}>\n    <id>{e}</id>\n    <title type=\"text\">{t}</title>\n    <summary type=\"text\">{s}</summary>\n    <updated>{u}+01:00</updated>\n    <link rel=\"alternate\" type=\"text/html\" href=\"https://uitspraken.rechtspraak.nl/InzienDocument?id={e}\" />\n  </entry>\n",
            e = r.ecli,
            t = esc(&corpus.title(r)),
            s = esc(summary),
            u = r.modified
        ));
    }
    x.push_str("</feed>\n");
    raw_response(StatusCode::OK, "application/atom+xml; charset=utf-8", x)
}

async fn content(Query(params): Query<Vec<(String, String)>>) -> Response<Body> {
    let id = params.iter().find(|(k, _)| k == "id").map(|(_, v)| v.trim().to_owned());
    let meta_only = params
        .iter()
        .any(|(k, v)| k == "return" && v.eq_ignore_ascii_case("META"));
    let Some(id) = id.filter(|id| !id.is_empty()) else {
        return html(StatusCode::BAD_REQUEST, "Parameter id ontbreekt.");
    };
    if let Some((_, bytes)) = real_rulings().find(|(ecli, _)| *ecli == id) {
        return raw_response(StatusCode::OK, "application/xml; charset=utf-8", bytes);
    }
    let corpus = rechtspraak_corpus();
    match corpus.ruling(&id) {
        Some(r) if r.deleted != Some("ecli") => xml(corpus.content_xml(r, meta_only)),
        _ => notice_redirect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn unknown_parameters_are_ignored_and_dates_checked() {
        let (q, from, max) = read_query(&pairs(&[("q", "huurrecht"), ("keyword", "x")])).unwrap();
        assert_eq!((q, from, max), (RsQuery::default(), 0, MAX_PAGE));
        let (_, _, max) = read_query(&pairs(&[("max", "5000")])).unwrap();
        assert_eq!(max, MAX_PAGE);
        assert_eq!(
            read_query(&pairs(&[("date", "2026-2-1")])).unwrap_err().status(),
            StatusCode::BAD_REQUEST
        );
        let impossible = read_query(&pairs(&[("date", "2026-02-30")])).unwrap_err();
        assert_eq!(impossible.status(), StatusCode::OK);
        assert_eq!(check_moment("2026-01-01T10:00:00"), Ok(()));
    }

    #[test]
    fn the_real_rulings_are_named_by_their_own_ecli_and_none_is_generated() {
        let corpus = rechtspraak_corpus();
        let real: Vec<(String, &[u8])> = real_rulings().collect();
        assert_eq!(real.len(), 6);
        for (ecli, bytes) in real {
            let text = String::from_utf8_lossy(bytes);
            assert!(
                text.contains(&format!("<dcterms:identifier>{ecli}</dcterms:identifier>")),
                "{ecli}"
            );
            assert!(corpus.ruling(&ecli).is_none(), "{ecli} is also generated");
        }
    }
}
