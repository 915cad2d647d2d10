//! Fake Officiële Bekendmakingen (PLATFORMS.md §5 and §10.1): the SRU 2.0 service at
//! `/sru` (KOOP's search service, written once in `sru.rs`) and the publications' renditions
//! at `/frbr/officielepublicaties/{type}/{group}/{id}/1/{manifestation}/{file}`, over the
//! corpus of [`ob_corpus`]: publications generated from a seed, and the real publications of
//! `corpus/ob/`.
//!
//! Invariants:
//! - The envelope, the request's checks (`startRecord >= 10000` is HTTP 504; another
//!   `version` is answered in it, a `recordSchema` other than `gzd`, a `maximumRecords` over
//!   100 are diagnostics; a client that asks `Accept: application/json` only gets JSON) and
//!   the service's trouble are the shared SRU service's. What is this fake's own: the CQL,
//!   parsed as strictly as the real service ([`parse_cql`]: a rejected query is a
//!   diagnostic without a count, `{`/`}` is HTTP 500, an impossible date is dropped with a
//!   warning next to the count), the order of the hits, and the record: `gzd:gzd` with
//!   `overheidwetgeving:meta` (`owmskern`, `owmsmantel`, `tpmeta`) and `gzd:enrichedData`
//!   (`gzd:url`, `gzd:preferredUrl`, one `gzd:itemUrl` per manifestation), the prefixes
//!   declared on the answer's root as the repository does.
//! - Faults of its own, by count of searches, in its own settings ([`ObSettings`],
//!   declared here and named by its registry line through `Fake`): the overload signal
//!   third parties saw (200, a system diagnostic, no count) and an empty page before the
//!   end. The shared faults (latency, 500, garbage, stall, reset, 429 storm) apply to
//!   every path.
//! - Renditions: a generated publication has XML (a KOOP publication; an empty template
//!   for some), HTML and PDF as the corpus says. A real publication ([`Renditions::Real`])
//!   has its XML — the file of `corpus/ob/`, byte for byte — and, where the corpus has them,
//!   its `metadata` and `metadataowms` files, byte for byte; its record says only what
//!   those files say. A real parliamentary record of `corpus/ob-chamber/`
//!   ([`Renditions::RealRecord`]) has no text rendition, only its `metadataowms` file where
//!   the corpus has one. Anything else is 404. No rate limit is enforced (its numbers are
//!   unpublished); the 429 storm stands in for one.
//!
//! What this fake does not do: SRU `explain` beyond its version, `scan`, the `odt`
//! manifestation, a generated publication's `metadata` files, or JSON beyond refusing to be
//! read as XML.

use besluitbron_core::{Platform, PlatformId};
use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::extract::Path;
use axum::http::{Response, StatusCode};
use axum::routing::get;

use crate::fake::FakePlatform;
use crate::faults::FaultReplies;
pub use crate::ob_corpus::{ObCorpus, ObPublication, PUBLICATION_COUNT, Renditions};
pub use crate::ob_cql::{CqlFault, CqlQuery, Node, Relation, parse_cql, words};
use crate::own::{OwnChange, OwnSettings};
use crate::raw_response;
use crate::setting_text::{FaultParseError, every};
use crate::shared::Shared;
use crate::sru::{
    self, Found, Refusal, Selects, SruCollection, SruDiagnostic, SruService, SruVersion, Trouble, escape, not_found,
};

/// Where the SRU service lives under the fake's root (the base-URL suffix).
pub const SRU_PATH: &str = "/sru";
/// The first `startRecord` answered with 504.
pub const MAX_START_RECORD: u64 = crate::sru::MAX_START_RECORD;
/// The most records one page may ask for.
pub const MAX_RECORDS: u64 = 100;

/// The Officiële Bekendmakingen fake's data, generated once per process.
pub fn ob_corpus() -> &'static ObCorpus {
    static CORPUS: OnceLock<ObCorpus> = OnceLock::new();
    CORPUS.get_or_init(ObCorpus::generate)
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
        let count = || every(name, value);
        match name {
            "overload-every" => Some(count().map(|n| OwnChange::new(move |s: &mut ObSettings| s.overload_every = n))),
            "empty-page-every" => {
                Some(count().map(|n| OwnChange::new(move |s: &mut ObSettings| s.empty_page_every = n)))
            }
            _ => None,
        }
    }
}

/// The Officiële Bekendmakingen fake, as its registry line names it.
pub(crate) struct Fake;

/// The platform this fake imitates (its short id and public name, as the server's
/// connector declares them).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "ob",
    name: "Officiële Bekendmakingen",
});

impl FakePlatform for Fake {
    const CORPUS: &'static [&'static str] = &["ob", "ob-chamber"];

    type Own = ObSettings;

    fn router(shared: Shared<ObSettings>, base_url: String) -> Router {
        sru::router::<Fake>(
            shared,
            base_url,
            "/frbr/officielepublicaties/{kind}/{group}/{id}/{version}/{manifestation}/{file}",
            get(rendition),
        )
    }
}

static REPLIES: FaultReplies<ObSettings> = sru::replies();

/// The repository's search service as this fake answers it: SRU 2.0 with `recordSchema`,
/// 1.2 when asked, JSON when only JSON is accepted; the records' prefixes declared on the
/// root.
impl SruCollection for Fake {
    type Own = ObSettings;
    type Query = CqlQuery;
    type Hit = &'static ObPublication;

    const SERVICE: SruService = SruService {
        version: SruVersion::V2_0,
        answers_other_version: true,
        selects: Selects::GzdSchema,
        max_records: MAX_RECORDS,
        record_namespaces: &[
            ("gzd", "http://standaarden.overheid.nl/sru"),
            ("overheidwetgeving", "http://standaarden.overheid.nl/wetgeving/"),
            ("dcterms", "http://purl.org/dc/terms/"),
            ("c", "http://standaarden.overheid.nl/collectie/"),
        ],
        content_type: "application/xml; charset=utf-8",
        negotiates_json: true,
    };
    const SEARCH_PATH: &'static str = SRU_PATH;

    fn replies() -> &'static FaultReplies<ObSettings> {
        &REPLIES
    }

    fn trouble(own: &ObSettings) -> Trouble {
        Trouble {
            overload_every: own.overload_every,
            empty_page_every: own.empty_page_every,
            reject_every: None,
        }
    }

    fn parse(query: &str) -> Result<CqlQuery, Refusal> {
        parse_cql(query).map_err(|fault| match fault {
            CqlFault::ServerError => Refusal::ServerError,
            CqlFault::Diagnostic { uri, details, message } => {
                Refusal::Diagnostic(SruDiagnostic::new(&uri, &details, &message))
            }
        })
    }

    fn find(query: &CqlQuery) -> Found<&'static ObPublication> {
        Found {
            hits: search(query),
            warnings: query
                .warnings
                .iter()
                .map(|w| SruDiagnostic::new("SEARCH-IGNOREDQTEXT", w, "Ongeldige zoekterm genegeerd"))
                .collect(),
        }
    }

    fn record(root: &str, p: &&'static ObPublication) -> String {
        record_xml(root, p)
    }
}

fn xml(body: impl Into<Body>) -> Response<Body> {
    raw_response(StatusCode::OK, "application/xml; charset=utf-8", body)
}

/// The publications `query` finds, in the order the service gives them (its `sortBy`).
pub fn search(query: &CqlQuery) -> Vec<&'static ObPublication> {
    let mut hits: Vec<&ObPublication> = ob_corpus().publications.iter().filter(|p| query.matches(p)).collect();
    for (index, descending) in query.sort.iter().rev() {
        hits.sort_by(|a, b| {
            let key = |p: &ObPublication| match index.as_str() {
                "dt.date" => p.date.clone(),
                "dt.title" => Some(p.title.clone()),
                "dt.identifier" => Some(p.identifier.clone()),
                _ => p.available.clone(),
            };
            let ord = key(a).cmp(&key(b));
            if *descending { ord.reverse() } else { ord }
        });
    }
    hits
}

/// One record (its `gzd:gzd`), as the service writes it; the prefixes are declared on the
/// answer's root. A field the publication does not have is left out.
pub fn record_xml(root: &str, p: &ObPublication) -> String {
    let element = |prefix: &str, name: &str, value: Option<&str>| {
        value
            .map(|v| format!("<{prefix}:{name}>{}</{prefix}:{name}>", escape(v)))
            .unwrap_or_default()
    };
    let mut tpmeta = format!(
        "<c:product-area>officielepublicaties</c:product-area>{}\
         <overheidwetgeving:publicatienaam>{}</overheidwetgeving:publicatienaam>{}{}",
        element("overheidwetgeving", "organisatietype", p.organization_type.as_deref()),
        escape(p.publication),
        element("overheidwetgeving", "publicatienummer", p.number.as_deref()),
        element(
            "overheidwetgeving",
            "jaargang",
            p.volume.map(|v| v.to_string()).as_deref()
        ),
    );
    tpmeta.push_str(&element("overheidwetgeving", "dossiernummer", p.dossier.as_deref()));
    tpmeta.push_str(&element("overheidwetgeving", "ondernummer", p.subnumber.as_deref()));
    let subjects: String = p
        .subjects
        .iter()
        .map(|s| element("dcterms", "subject", Some(s)))
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
    let pdf = if p.manifestations().contains(&"pdf") {
        format!(
            "<gzd:url>{}{}</gzd:url>",
            escape(root),
            escape(&p.rendition_path("pdf"))
        )
    } else {
        String::new()
    };
    let document_type = p
        .document_type
        .as_deref()
        .map(|t| {
            format!(
                "<dcterms:type scheme=\"overheid:Informatietype\">{}</dcterms:type>",
                escape(t)
            )
        })
        .unwrap_or_default();
    format!(
        "<gzd:gzd><gzd:originalData><overheidwetgeving:meta><overheidwetgeving:owmskern>\
         <dcterms:identifier>{id}</dcterms:identifier><dcterms:title>{title}</dcterms:title>{document_type}{creator}\
         <dcterms:language>nl</dcterms:language>{modified}</overheidwetgeving:owmskern>\
         <overheidwetgeving:owmsmantel>{date}{available}{subjects}</overheidwetgeving:owmsmantel>\
         <overheidwetgeving:tpmeta>{tpmeta}</overheidwetgeving:tpmeta></overheidwetgeving:meta>\
         </gzd:originalData><gzd:enrichedData>{pdf}\
         <gzd:preferredUrl>https://zoek.officielebekendmakingen.nl/{id}.html</gzd:preferredUrl>{items}{timestamp}\
         </gzd:enrichedData></gzd:gzd>",
        id = escape(&p.identifier),
        title = escape(&p.title),
        creator = element("dcterms", "creator", p.creator.as_deref()),
        modified = element("dcterms", "modified", p.available.as_deref()),
        date = element("dcterms", "date", p.date.as_deref()),
        available = element("dcterms", "available", p.available.as_deref()),
        timestamp = element(
            "gzd",
            "timestamp",
            p.available.as_deref().map(|a| format!("{a}T09:00:00Z")).as_deref()
        ),
    )
}

/// The XML rendition of a generated publication: a KOOP publication (metadata, then the
/// body), or an empty template. A real one's is its file ([`ObPublication::real_file`]).
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
    if matches!(p.renditions, Renditions::Real | Renditions::RealRecord) {
        // The file as the corpus has it, byte for byte.
        return match p.real_file(&manifestation) {
            Some(bytes) => xml(bytes),
            None => not_found(),
        };
    }
    match manifestation.as_str() {
        "xml" => xml(publication_xml(p)),
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
        assert!(record_xml("http://x", pdf).contains("manifestation=\"pdf\""));
        assert!(!record_xml("http://x", pdf).contains("manifestation=\"xml\""));
    }

    #[test]
    fn a_real_publication_is_found_and_its_files_are_served_as_they_are() {
        let kst = ob_corpus().get("kst-32545-143").unwrap();
        let record = record_xml("http://x", kst);
        for part in [
            "<dcterms:identifier>kst-32545-143</dcterms:identifier>",
            "<dcterms:creator>Tweede Kamer der Staten-Generaal</dcterms:creator>",
            "<dcterms:date>2021-07-06</dcterms:date><dcterms:available>2021-07-07</dcterms:available>",
            "<overheidwetgeving:dossiernummer>32545</overheidwetgeving:dossiernummer>",
            "<gzd:itemUrl manifestation=\"xml\">http://x/frbr/officielepublicaties/kst/32545/kst-32545-143/1/xml/kst-32545-143.xml</gzd:itemUrl>",
            "<gzd:itemUrl manifestation=\"metadata\">http://x/frbr/officielepublicaties/kst/32545/kst-32545-143/1/metadata/metadata.xml</gzd:itemUrl>",
        ] {
            assert!(record.contains(part), "{part}: {record}");
        }
        assert!(
            !record.contains("<gzd:url>") && !record.contains("manifestation=\"pdf\""),
            "no PDF it cannot serve"
        );
        let gmb = record_xml("http://x", ob_corpus().get("gmb-2017-100002").unwrap());
        assert!(
            !gmb.contains("dcterms:creator") && !gmb.contains("dcterms:available") && !gmb.contains("timestamp"),
            "{gmb}"
        );
        let found = search(&parse_cql("dt.identifier==gmb-2017-100002").unwrap());
        assert_eq!(
            found.iter().map(|p| p.identifier.as_str()).collect::<Vec<_>>(),
            ["gmb-2017-100002"]
        );
        let by_text = search(&parse_cql("cql.textAndIndexes=\"dennenboom\"").unwrap());
        assert_eq!(
            by_text.iter().map(|p| p.identifier.as_str()).collect::<Vec<_>>(),
            ["gmb-2017-100002"]
        );
        assert!(
            search(&parse_cql("dt.available>=2000-01-01 AND dt.identifier==gmb-2017-100002").unwrap()).is_empty(),
            "an unknown date matches no date"
        );
    }
}
