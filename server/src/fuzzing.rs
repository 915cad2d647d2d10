//! Entry points for the fuzz targets in `fuzz/` (not an API: hidden from the docs, kept
//! small, each a thin call into the code it exercises). Each returns what it read so a
//! target can check a property beyond "no panic".
//!
//! Built only with `--cfg fuzzing` (as `cargo fuzz` builds): none of it is in the
//! production library. The oracles the targets check against live beside the code they
//! judge, where the ordinary tests run them too (`tk::odata_is_well_formed`).

use reqwest::header::{CONTENT_TYPE, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};

use crate::config::Config;
use crate::platforms::http::Fetched;
use crate::platforms::{obv, tk};

/// The guard's reading of a request body: `Ok((initialize, protocol version))` or the
/// JSON-RPC error code it answers with.
pub fn envelope(bytes: &[u8]) -> Result<(bool, Option<String>), i64> {
    crate::guard::envelope_of(bytes)
}

/// A platform answer built from fuzz input: the first byte picks the status and the
/// content type, the rest is the body.
pub fn fetched(data: &[u8]) -> Fetched {
    let (pick, body) = data.split_first().map_or((0, &[][..]), |(p, b)| (*p, b));
    let status = [200u16, 200, 200, 204, 301, 400, 401, 403, 404, 410][usize::from(pick % 10)];
    let content_type = ["application/json", "text/html", "application/xml", "text/plain"][usize::from((pick / 10) % 4)];
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    Fetched {
        status: StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
        headers,
        url: Url::parse("http://127.0.0.1/fuzz").expect("a valid URL"),
        body: body.to_vec(),
    }
}

/// Reads `data` (see [`fetched`]) as every OpenBesluitvorming answer.
pub fn obv_answer(data: &[u8]) -> usize {
    obv::read_every_answer(&fetched(data))
}

/// Reads `data` (see [`fetched`]) as every Tweede Kamer answer.
pub fn tk_answer(data: &[u8]) -> usize {
    tk::read_every_answer(&fetched(data))
}

/// Reads `data` as a stenographic report (VLOS): its turns, each checked to name a
/// speaker of the report's list (a turn that does not is a defect: it panics).
pub fn vlos_report(data: &[u8]) -> usize {
    match tk::vlos::read_report(data) {
        Ok(report) => {
            for t in report.turns() {
                assert!(
                    report.speaker(t.speaker).is_some(),
                    "a turn names no speaker of the list"
                );
            }
            report.turns().count()
        }
        Err(_) => 0,
    }
}

/// Reads `data` as every Rechtspraak answer (Atom feed, ruling, the three value lists):
/// how many of them it is.
pub fn rechtspraak_answer(data: &[u8]) -> usize {
    use crate::platforms::rechtspraak as rs;
    usize::from(rs::parse_feed(data).is_ok())
        + usize::from(rs::parse_ruling(data).is_ok())
        + usize::from(rs::parse_courts(data).is_ok())
        + usize::from(rs::parse_areas(data).is_ok())
        + usize::from(rs::parse_procedures(data).is_ok())
}

/// Reads `data` as a Basiswettenbestand SRU answer, classified as the client does, and
/// as a toestand: how many of the two it was.
pub fn bwb_answer(data: &[u8]) -> usize {
    use crate::platforms::{bwb, koop};
    usize::from(koop::read_body::<bwb::BwbRecord>(&bwb::COLLECTION, data, 1).is_ok())
        + usize::from(bwb::read_toestand(data).is_ok())
}

/// Reads `data` as a CVDR SRU answer, classified as the client does, and as a local
/// regulation's XML: how many of the two it was.
pub fn cvdr_answer(data: &[u8]) -> usize {
    use crate::platforms::{cvdr, koop};
    usize::from(koop::read_body::<cvdr::CvdrRecord>(&cvdr::COLLECTION, data, 1).is_ok())
        + usize::from(cvdr::read_text(data).is_ok())
}

/// Reads `data` as an Officiële Bekendmakingen SRU answer and classifies it as the
/// client does (results, warning, rejection, overload): whether it gave results.
pub fn ob_answer(data: &[u8]) -> bool {
    use crate::platforms::{koop, ob};
    koop::read_body::<ob::ObRecord>(&ob::COLLECTION, data, 1).is_ok()
}

/// The CQL query for these words and filters (any text): `None` when the builder
/// refuses them.
pub fn ob_cql(
    query: &str,
    organization_type: Option<String>,
    organization: Option<String>,
    document_type: Option<String>,
    dossier: Option<String>,
    date_from: Option<String>,
) -> Option<String> {
    use crate::platforms::ob;
    let search = ob::ObSearch {
        terms: ob::cql::terms(query),
        organization_type,
        organization,
        document_type,
        dossier,
        date_from,
        ..ob::ObSearch::default()
    };
    search.cql().ok()
}

/// Reads `data` as every OpenTK answer (search, activity, harvesters, document HTML,
/// the 200-not-found test): how many of them it is.
pub fn opentk_answer(data: &[u8]) -> usize {
    use crate::platforms::opentk as o;
    usize::from(o::parse_search(data).is_ok())
        + usize::from(o::parse_activity(data).is_ok())
        + usize::from(o::parse_last_updates(data).is_ok())
        + usize::from(o::parse_document_html(data).is_ok())
        + usize::from(o::is_not_found(200, Some("text/plain"), data))
}

/// Reads `data` as every Open Raadsinformatie (Elasticsearch) answer: how many of them
/// it is.
pub fn ori_answer(data: &[u8]) -> usize {
    use crate::platforms::ori as o;
    usize::from(o::parse_search(data).is_ok())
        + usize::from(o::parse_doc(data).is_ok())
        + usize::from(o::parse_cat_indices(data).is_ok())
        + usize::from(o::parse_aliases(data).is_ok())
}

/// Sniffs and extracts the text of a document file under small caps (2 s, 4 MiB in,
/// 200 pages), as the text pool does: a panic inside a file reader is caught and is an
/// error, as it is in the pool. Returns whether a text came out.
pub fn text_extract(data: &[u8]) -> bool {
    let caps = crate::text::Caps {
        max_input_bytes: 4 * 1024 * 1024,
        max_millis: 2_000,
        max_pages: 200,
        max_expanded_bytes: 64 * 1024 * 1024,
        ..crate::text::Caps::default()
    };
    std::panic::catch_unwind(|| crate::text::extract(data, &caps)).is_ok_and(|r| r.is_ok())
}

/// The Tweede Kamer `$filter` for these search words, type and dates.
pub fn odata_filter(
    words: Vec<String>,
    soort: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
) -> Option<String> {
    let mut search = tk::TkSearch::words(words);
    search.soort = soort;
    search.date_from = date_from;
    search.date_to = date_to;
    search.filter("GewijzigdOp").ok().flatten()
}

/// Whether `filter` is well-formed as BesluitBron writes OData filters
/// ([`tk::odata_is_well_formed`]).
pub fn odata_is_well_formed(filter: &str) -> bool {
    tk::odata_is_well_formed(filter)
}

/// A configuration file's text, loaded as `besluitbron --config` would (no environment).
pub fn config(text: &str) -> Result<Config, String> {
    Config::from_toml_str(&crate::connectors::platform_defaults(), text, std::iter::empty()).map_err(|e| e.to_string())
}
