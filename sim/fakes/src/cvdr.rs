//! Fake CVDR (`cvdr`): KOOP's SRU 1.2 search of local regulations
//! (`/sru/Search?operation=searchRetrieve&version=1.2&x-connection=cvdr&query=…`) and the
//! XML of each version (`/cvdr/{work}/{n}/xml/{work}_{n}.xml`), strict like the service
//! (`docs/platforms.md`, "Local regulations").
//!
//! Invariants:
//! - A request the service would refuse is answered as it answers: HTTP 200 with an SRU
//!   1.2 diagnostic and no count — an unknown index (`info:srw/diagnostic/1/16`; a bare
//!   term is `cql.serverChoice`, which this collection does not take), a query it cannot
//!   parse (`/1/10`), another `x-connection` or a bad number (`/1/6`), another version
//!   (`/1/5`), a missing query (`/1/7`); and, as the service does, a system error
//!   (`/1/1`) for `AND`, `OR` or `NOT` in capitals inside a quoted value.
//! - One record per version: without `overheidrg.datumGeldendOp` every version of a
//!   regulation matches; with it, the one in force on that day. Records come in
//!   identifier order, then by version.
//! - `keyword` matches whole words of the title and the text, `dcterms.creator` the
//!   organisation's name as whole words next to each other (so `Utrecht` is the
//!   municipality and the province, not `Utrechtse Heuvelrug`), ignoring case.
//!
//! Settings ([`CvdrSettings`]): the service's own trouble by count of searches — every
//! n-th answered with a syntax diagnostic, or with a system diagnostic and no count.
//!
//! What this fake does not do: `sortBy`, relations other than `=`, `==`, `all`, `any`,
//! `or`/`not`, or more than these regulations.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{Response, StatusCode};
use axum::middleware;
use axum::routing::get;

use crate::bwb::split_and;
use crate::faults::{self, FaultReplies, Faults};
use crate::ob::escape;
use crate::own::Shared;
use crate::registry::FakePlatform;
use crate::{OwnSettings, raw_response};

/// The search's path under the fake's root.
pub const SRU_PATH: &str = "/sru/Search";
/// The most records per page the service gives.
pub const MAX_RECORDS: u64 = 100;
const SRU12_NS: &str = "http://www.loc.gov/zing/srw/";
const DIAG12_NS: &str = "http://www.loc.gov/zing/srw/diagnostic/";

/// One article of a version.
#[derive(Clone, Copy, Debug)]
pub struct FakeArticle {
    /// Its number.
    pub number: &'static str,
    /// Its heading's title, if any.
    pub title: Option<&'static str>,
    /// Its paragraphs (list items numbered `1.`, `2.` when there is more than one).
    pub paragraphs: &'static [&'static str],
}

/// One version of a regulation.
#[derive(Clone, Copy, Debug)]
pub struct FakeVersion {
    /// Its number (`_2`).
    pub n: u32,
    /// In force from.
    pub from: &'static str,
    /// In force until, when an end is set.
    pub until: Option<&'static str>,
    /// The day the decision that set it was taken.
    pub issued: &'static str,
    /// The publication that made it known.
    pub published_in: &'static str,
    /// The organisation's reference.
    pub reference: &'static str,
    /// What it changed.
    pub concerns: &'static str,
    /// Its articles.
    pub articles: &'static [FakeArticle],
}

/// A regulation of the fake's data.
#[derive(Clone, Copy, Debug)]
pub struct FakeRegulation {
    /// CVDR work id.
    pub work: &'static str,
    /// Title.
    pub title: &'static str,
    /// Kind (the second `dcterms:type`).
    pub kind: &'static str,
    /// `dcterms:creator`.
    pub creator: &'static str,
    /// `organisatietype`.
    pub organisation_type: &'static str,
    /// Legal basis.
    pub legal_basis: &'static str,
    /// Subject.
    pub subject: &'static str,
    /// Its versions, oldest first.
    pub versions: &'static [FakeVersion],
}

impl FakeRegulation {
    /// The version in force on `date`.
    pub fn in_force(&self, date: &str) -> Option<&FakeVersion> {
        self.versions.iter().find(|v| in_force(v, date))
    }

    /// The versioned id of `v`.
    pub fn id(&self, v: &FakeVersion) -> String {
        format!("{}_{}", self.work, v.n)
    }
}

fn in_force(v: &FakeVersion, date: &str) -> bool {
    v.from <= date && v.until.is_none_or(|u| date <= u)
}

/// Gemeente Utrecht's parking regulation, whose article 2 changed on 2025-01-01.
pub const UTRECHT_PARKING: &str = "CVDR700001";

/// The fake's regulations.
pub static REGULATIONS: &[FakeRegulation] = &[
    FakeRegulation {
        work: UTRECHT_PARKING,
        title: "Parkeerverordening Utrecht",
        kind: "verordening",
        creator: "Utrecht",
        organisation_type: "Gemeente",
        legal_basis: "Gemeentewet, artikel 225",
        subject: "verkeer en vervoer",
        versions: &[
            FakeVersion {
                n: 1,
                from: "2023-01-01",
                until: Some("2024-12-31"),
                issued: "2022-11-10",
                published_in: "Gemeenteblad 2022, 480001",
                reference: "RIS 2022-0815",
                concerns: "nieuwe regeling",
                articles: &[
                    FakeArticle {
                        number: "1",
                        title: Some("Begripsbepalingen"),
                        paragraphs: &[
                            "In deze verordening wordt verstaan onder parkeren: het doen of laten staan van \
                                       een voertuig.",
                        ],
                    },
                    FakeArticle {
                        number: "2",
                        title: Some("Parkeervergunning"),
                        paragraphs: &[
                            "Het college kan een parkeervergunning verlenen aan een bewoner van het gebied.",
                            "Per adres wordt ten hoogste twee vergunningen verleend.",
                        ],
                    },
                ],
            },
            FakeVersion {
                n: 2,
                from: "2025-01-01",
                until: None,
                issued: "2024-11-14",
                published_in: "Gemeenteblad 2024, 512345",
                reference: "RIS 2024-1107",
                concerns: "wijziging artikel 2",
                articles: &[
                    FakeArticle {
                        number: "1",
                        title: Some("Begripsbepalingen"),
                        paragraphs: &[
                            "In deze verordening wordt verstaan onder parkeren: het doen of laten staan van \
                                       een voertuig.",
                        ],
                    },
                    FakeArticle {
                        number: "2",
                        title: Some("Parkeervergunning"),
                        paragraphs: &[
                            "Het college kan een parkeervergunning verlenen aan een bewoner van het gebied.",
                            "Per adres wordt ten hoogste één vergunning verleend.",
                        ],
                    },
                ],
            },
        ],
    },
    FakeRegulation {
        work: "CVDR700002",
        title: "Verordening parkeren en verkeer provinciale wegen Utrecht",
        kind: "verordening",
        creator: "Utrecht",
        organisation_type: "Provincie",
        legal_basis: "Provinciewet, artikel 145",
        subject: "verkeer en vervoer",
        versions: &[FakeVersion {
            n: 1,
            from: "2024-04-01",
            until: None,
            issued: "2024-02-12",
            published_in: "Provinciaal blad 2024, 2001",
            reference: "PS2024MM05",
            concerns: "nieuwe regeling",
            articles: &[FakeArticle {
                number: "1",
                title: None,
                paragraphs: &["Het is verboden te parkeren in de berm van een provinciale weg."],
            }],
        }],
    },
    FakeRegulation {
        work: "CVDR700003",
        title: "Parkeerverordening Utrechtse Heuvelrug",
        kind: "verordening",
        creator: "Utrechtse Heuvelrug",
        organisation_type: "Gemeente",
        legal_basis: "Gemeentewet, artikel 225",
        subject: "verkeer en vervoer",
        versions: &[FakeVersion {
            n: 1,
            from: "2021-07-01",
            until: None,
            issued: "2021-05-27",
            published_in: "Gemeenteblad 2021, 150150",
            reference: "Z/21/001",
            concerns: "nieuwe regeling",
            articles: &[FakeArticle {
                number: "1",
                title: None,
                paragraphs: &[
                    "Parkeren op een parkeerplaats voor vergunninghouders is voorbehouden aan \
                               vergunninghouders.",
                ],
            }],
        }],
    },
    FakeRegulation {
        work: "CVDR700004",
        title: "Afvalstoffenverordening Amersfoort 2024",
        kind: "verordening",
        creator: "Amersfoort",
        organisation_type: "Gemeente",
        legal_basis: "Wet milieubeheer, artikel 10.23",
        subject: "milieu",
        versions: &[FakeVersion {
            n: 1,
            from: "2024-01-01",
            until: None,
            issued: "2023-12-12",
            published_in: "Gemeenteblad 2023, 540002",
            reference: "6543210",
            concerns: "nieuwe regeling",
            articles: &[FakeArticle {
                number: "1",
                title: Some("Inzameling"),
                paragraphs: &["Huishoudelijke afvalstoffen worden wekelijks ingezameld."],
            }],
        }],
    },
    FakeRegulation {
        work: "CVDR700005",
        title: "Keur Waterschap Rivierenland 2022",
        kind: "verordening",
        creator: "Waterschap Rivierenland",
        organisation_type: "Waterschap",
        legal_basis: "Waterschapswet, artikel 78",
        subject: "water",
        versions: &[FakeVersion {
            n: 1,
            from: "2022-03-01",
            until: None,
            issued: "2022-01-28",
            published_in: "Waterschapsblad 2022, 1200",
            reference: "AB 2022-04",
            concerns: "nieuwe regeling",
            articles: &[FakeArticle {
                number: "1",
                title: None,
                paragraphs: &["Het is verboden zonder vergunning te parkeren of te bouwen op een waterkering."],
            }],
        }],
    },
    FakeRegulation {
        work: "CVDR700006",
        title: "Verordening mantelzorgwaardering Den Haag 2025",
        kind: "beleidsregel",
        creator: "'s-Gravenhage",
        organisation_type: "Gemeente",
        legal_basis: "Wet maatschappelijke ondersteuning 2015, artikel 2.1.6",
        subject: "zorg en gezondheid",
        versions: &[FakeVersion {
            n: 1,
            from: "2025-01-01",
            until: None,
            issued: "2024-12-05",
            published_in: "Gemeenteblad 2024, 520600",
            reference: "RIS319000",
            concerns: "nieuwe regeling",
            articles: &[FakeArticle {
                number: "1",
                title: None,
                paragraphs: &["Een mantelzorger ontvangt jaarlijks een waardering."],
            }],
        }],
    },
];

/// What the CVDR fake does beyond the faults every fake applies, by count of searches
/// whose query parsed. The default is the healthy service.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CvdrSettings {
    /// Answer every n-th search with a syntax diagnostic and no count. `None` never.
    pub reject_every: Option<u32>,
    /// Answer every n-th search with a system diagnostic and no count (overload).
    pub overload_every: Option<u32>,
}

/// No textual names: the fake's settings are reached through its handle only.
impl OwnSettings for CvdrSettings {}

/// The CVDR fake, as its registry line names it.
pub(crate) struct Fake;

impl FakePlatform for Fake {
    type Own = CvdrSettings;

    fn router(shared: Shared<CvdrSettings>, base_url: String) -> Router {
        router(shared, base_url)
    }
}

struct CvdrState {
    shared: Shared<CvdrSettings>,
    /// The fake's root, for the texts' URLs.
    root: String,
    searches: AtomicU64,
}

fn router(shared: Shared<CvdrSettings>, base_url: String) -> Router {
    let faults = Faults::new(shared.clone(), &REPLIES);
    let root = base_url.strip_suffix(SRU_PATH).unwrap_or(&base_url).to_owned();
    let state = Arc::new(CvdrState {
        shared,
        root,
        searches: AtomicU64::new(0),
    });
    Router::new()
        .route(SRU_PATH, get(sru))
        .route(&format!("{SRU_PATH}/"), get(sru))
        .route("/cvdr/{work}/{n}/xml/{file}", get(text))
        .fallback(|| async { not_found() })
        .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
        .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
        .with_state(state)
}

/// The service's words for the shared faults (as the other SRU fakes: no 429 of KOOP's
/// service is documented).
static REPLIES: FaultReplies<CvdrSettings> = FaultReplies {
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

fn xml(body: String) -> Response<Body> {
    raw_response(StatusCode::OK, "text/xml; charset=utf-8", body)
}

/// A diagnostics-only answer (no count), in SRU 1.2.
fn diagnostic(uri: &str, details: &str, message: &str) -> Response<Body> {
    xml(format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<searchRetrieveResponse xmlns=\"{SRU12_NS}\"><version>1.2</version>\
         <diagnostics><diagnostic xmlns=\"{DIAG12_NS}\"><uri>{}</uri><details>{}</details><message>{}</message>\
         </diagnostic></diagnostics></searchRetrieveResponse>",
        escape(uri),
        escape(details),
        escape(message)
    ))
}

/// One clause of the CQL the fake reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Clause {
    /// `keyword all|any|= "words"`: words of the title and the text.
    Keyword {
        /// All words, or any.
        all: bool,
        /// The words, lower case.
        words: Vec<String>,
    },
    /// `dcterms.title all|any|= "words"`.
    Title {
        /// All words, or any.
        all: bool,
        /// The words, lower case.
        words: Vec<String>,
    },
    /// `dcterms.creator="name"`: the name's words, together, in the creator.
    Creator(Vec<String>),
    /// `organisatieType=value`.
    OrganisationType(String),
    /// `overheidrg.datumGeldendOp=date`.
    InForce(String),
    /// `dcterms.identifier=CVDR…_n`.
    Identifier(String),
    /// `workid=CVDR…`.
    Work(String),
}

/// A diagnostic the fake answers a query with: (uri, details, message).
pub type CqlDiagnostic = (&'static str, String, &'static str);

/// Lower-case words of `text`, split on anything but letters, digits, `'` and `-`.
fn words_of(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Reads the CQL the service takes: clauses `index relation value` joined by `and`.
pub fn parse_cql(query: &str) -> Result<Vec<Clause>, CqlDiagnostic> {
    let syntax = |d: &str| ("info:srw/diagnostic/1/10", d.to_owned(), "Query syntax error");
    let mut clauses = Vec::new();
    for part in split_and(query).map_err(|_| syntax(query))? {
        let part = part.trim();
        let Some(i) = part.find(['=', ' ']) else {
            // A bare term: the server's choice of index, which this collection lacks.
            return Err((
                "info:srw/diagnostic/1/16",
                "cql.serverChoice".to_owned(),
                "Unsupported index",
            ));
        };
        let (index, rest) = part.split_at(i);
        let rest = rest.trim_start();
        let (relation, value) = if let Some(v) = rest.strip_prefix("==") {
            ("==", v)
        } else if let Some(v) = rest.strip_prefix('=') {
            ("=", v)
        } else if let Some(v) = rest.strip_prefix("all ") {
            ("all", v)
        } else if let Some(v) = rest.strip_prefix("any ") {
            ("any", v)
        } else {
            return Err(syntax(part));
        };
        let value = value.trim();
        let value = match value.strip_prefix('"') {
            Some(inner) => inner.strip_suffix('"').ok_or_else(|| syntax(part))?.to_owned(),
            None if !value.is_empty() && !value.contains(char::is_whitespace) => value.to_owned(),
            None => return Err(syntax(part)),
        };
        if value.split_whitespace().any(|w| matches!(w, "AND" | "OR" | "NOT")) {
            // The service's back end reads these as operators even inside quotes.
            return Err(("info:srw/diagnostic/1/1", value, "General system error"));
        }
        let date = |v: &str| {
            let b = v.as_bytes();
            b.len() == 10 && b[4] == b'-' && b[7] == b'-' && v.replace('-', "").bytes().all(|c| c.is_ascii_digit())
        };
        let equal = matches!(relation, "=" | "==");
        let clause = match index {
            "keyword" | "dcterms.title" if relation != "==" => {
                let all = relation != "any";
                let words = words_of(&value);
                if index == "keyword" {
                    Clause::Keyword { all, words }
                } else {
                    Clause::Title { all, words }
                }
            }
            "dcterms.creator" if equal => Clause::Creator(words_of(&value)),
            "organisatieType" if equal => Clause::OrganisationType(value),
            "overheidrg.datumGeldendOp" if equal && date(&value) => Clause::InForce(value),
            "dcterms.identifier" if equal => Clause::Identifier(value),
            "workid" if equal => Clause::Work(value),
            "keyword"
            | "dcterms.title"
            | "dcterms.creator"
            | "organisatieType"
            | "overheidrg.datumGeldendOp"
            | "dcterms.identifier"
            | "workid" => return Err(syntax(part)),
            other => return Err(("info:srw/diagnostic/1/16", other.to_owned(), "Unsupported index")),
        };
        clauses.push(clause);
    }
    Ok(clauses)
}

/// Whether `needle` occurs in `hay` as whole words next to each other.
fn together(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The (regulation, version) pairs `clauses` select, in the fake's order.
pub fn matches(clauses: &[Clause]) -> Vec<(&'static FakeRegulation, &'static FakeVersion)> {
    let mut out = Vec::new();
    let mut regulations: Vec<&FakeRegulation> = REGULATIONS.iter().collect();
    regulations.sort_by_key(|r| r.work);
    for r in regulations {
        let title = words_of(r.title);
        let creator = words_of(r.creator);
        for v in r.versions {
            let id = r.id(v);
            let mut text = title.clone();
            for a in v.articles {
                for p in a.paragraphs {
                    text.extend(words_of(p));
                }
            }
            let has = |hay: &[String], all: bool, words: &[String]| {
                let one = |w: &String| hay.contains(w);
                if all {
                    words.iter().all(one)
                } else {
                    words.iter().any(one)
                }
            };
            let ok = clauses.iter().all(|c| match c {
                Clause::Keyword { all, words } => has(&text, *all, words),
                Clause::Title { all, words } => has(&title, *all, words),
                Clause::Creator(name) => together(&creator, name),
                Clause::OrganisationType(t) => r.organisation_type.eq_ignore_ascii_case(t),
                Clause::InForce(d) => in_force(v, d),
                Clause::Identifier(i) => id.eq_ignore_ascii_case(i),
                Clause::Work(w) => r.work.eq_ignore_ascii_case(w),
            });
            if ok {
                out.push((r, v));
            }
        }
    }
    out
}

fn every_nth(n: u64, every: Option<u32>) -> bool {
    every.is_some_and(|every| every > 0 && n.is_multiple_of(u64::from(every)))
}

async fn sru(State(state): State<Arc<CvdrState>>, Query(params): Query<Vec<(String, String)>>) -> Response<Body> {
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    if param("operation") != Some("searchRetrieve") {
        return diagnostic(
            "info:srw/diagnostic/1/4",
            param("operation").unwrap_or(""),
            "Unsupported operation",
        );
    }
    if param("x-connection").map(str::to_ascii_lowercase).as_deref() != Some("cvdr") {
        return diagnostic(
            "info:srw/diagnostic/1/6",
            param("x-connection").unwrap_or("x-connection"),
            "Unsupported parameter value",
        );
    }
    if param("version") != Some("1.2") {
        return diagnostic(
            "info:srw/diagnostic/1/5",
            param("version").unwrap_or(""),
            "Unsupported version",
        );
    }
    let number = |name: &str, default: u64| match param(name) {
        None => Ok(default),
        Some(v) => v.trim().parse::<u64>().map_err(|_| name.to_owned()),
    };
    let (start, maximum) = match (number("startRecord", 1), number("maximumRecords", 10)) {
        (Ok(s), Ok(m)) if s >= 1 && m <= MAX_RECORDS => (s, m),
        (Err(name), _) | (_, Err(name)) => {
            return diagnostic("info:srw/diagnostic/1/6", &name, "Unsupported parameter value");
        }
        _ => return diagnostic("info:srw/diagnostic/1/6", "startRecord", "Unsupported parameter value"),
    };
    let Some(query) = param("query") else {
        return diagnostic("info:srw/diagnostic/1/7", "query", "Mandatory parameter not supplied");
    };
    let clauses = match parse_cql(query) {
        Ok(c) => c,
        Err((uri, details, message)) => return diagnostic(uri, &details, message),
    };
    let n = state.searches.fetch_add(1, Ordering::Relaxed) + 1;
    let own = state.shared.own();
    if every_nth(n, own.overload_every) {
        return diagnostic("info:srw/diagnostic/1/1", "Query timeout", "General system error");
    }
    if every_nth(n, own.reject_every) {
        return diagnostic("info:srw/diagnostic/1/10", query, "Query syntax error");
    }
    let hits = matches(&clauses);
    let from = usize::try_from(start - 1).unwrap_or(usize::MAX);
    let page: Vec<_> = hits.iter().skip(from).take(maximum as usize).collect();
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<searchRetrieveResponse xmlns=\"{SRU12_NS}\"><version>1.2</version>\
         <numberOfRecords>{}</numberOfRecords><records>",
        hits.len()
    );
    for (k, (r, v)) in page.iter().enumerate() {
        out.push_str(&record_xml(&state.root, r, v, start + k as u64));
    }
    out.push_str("</records>");
    let next = start + page.len() as u64;
    if next <= hits.len() as u64 {
        out.push_str(&format!("<nextRecordPosition>{next}</nextRecordPosition>"));
    }
    out.push_str("</searchRetrieveResponse>");
    xml(out)
}

/// The URL of a version's XML.
pub fn text_url(root: &str, r: &FakeRegulation, v: &FakeVersion) -> String {
    format!("{root}/cvdr/{work}/{n}/xml/{work}_{n}.xml", work = r.work, n = v.n)
}

fn record_xml(root: &str, r: &FakeRegulation, v: &FakeVersion, position: u64) -> String {
    let id = r.id(v);
    format!(
        "<record><recordSchema>http://standaarden.overheid.nl/sru/</recordSchema><recordPacking>xml</recordPacking>\
         <recordData><gzd xmlns=\"http://standaarden.overheid.nl/sru\" xmlns:dcterms=\"http://purl.org/dc/terms/\" \
         xmlns:overheid=\"http://standaarden.overheid.nl/owms/terms/\" \
         xmlns:overheidrg=\"http://standaarden.overheid.nl/cvdr/terms/\"><originalData><overheidrg:meta><owmskern>\
         <dcterms:identifier>{id}</dcterms:identifier><dcterms:title>{title}</dcterms:title>\
         <dcterms:language>nl</dcterms:language>\
         <dcterms:type scheme=\"overheid:Informatietype\">regeling</dcterms:type>\
         <dcterms:type scheme=\"overheidrg:Rubriek\">{kind}</dcterms:type>\
         <dcterms:creator scheme=\"overheid:{otype}\">{creator}</dcterms:creator>\
         <dcterms:modified>{from}Z</dcterms:modified></owmskern><owmsmantel>\
         <dcterms:isFormatOf resourceIdentifier=\"\">{published}</dcterms:isFormatOf>\
         <dcterms:source>{basis}</dcterms:source><dcterms:subject>{subject}</dcterms:subject>\
         <dcterms:issued>{issued}</dcterms:issued></owmsmantel><cvdripm>\
         <overheidrg:inwerkingtredingDatum>{from}</overheidrg:inwerkingtredingDatum>{until}\
         <overheidrg:betreft>{concerns}</overheidrg:betreft><overheidrg:kenmerk>{reference}</overheidrg:kenmerk>\
         </cvdripm></overheidrg:meta></originalData><enrichedData><organisatietype>{otype}</organisatietype>\
         <publicatieurl_xhtml>{xhtml}</publicatieurl_xhtml><publicatieurl_xml>{url}</publicatieurl_xml>\
         <preferred_url>https://lokaleregelgeving.overheid.nl/{work}/{n}</preferred_url>\
         <preferred_work_url>https://lokaleregelgeving.overheid.nl/{work}</preferred_work_url>\
         </enrichedData></gzd></recordData><recordPosition>{position}</recordPosition></record>",
        title = escape(r.title),
        kind = escape(r.kind),
        otype = escape(r.organisation_type),
        creator = escape(r.creator),
        from = v.from,
        published = escape(v.published_in),
        basis = escape(r.legal_basis),
        subject = escape(r.subject),
        issued = v.issued,
        until = v
            .until
            .map(|u| format!("<overheidrg:uitwerkingtredingDatum>{u}</overheidrg:uitwerkingtredingDatum>"))
            .unwrap_or_default(),
        concerns = escape(v.concerns),
        reference = escape(v.reference),
        xhtml = escape(
            &text_url(root, r, v)
                .replace("/xml/", "/xhtml/")
                .replace(".xml", ".html")
        ),
        url = escape(&text_url(root, r, v)),
        work = r.work,
        n = v.n,
    )
}

/// A version's XML: `cvdr` with its `meta` and the regulation's `body`.
pub fn text_xml(r: &FakeRegulation, v: &FakeVersion) -> String {
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cvdr xmlns:dcterms=\"http://purl.org/dc/terms/\"><meta><owmskern>\
         <dcterms:identifier>{id}</dcterms:identifier><dcterms:title>{title}</dcterms:title>\
         <dcterms:creator>{creator}</dcterms:creator></owmskern></meta><body><regeling><aanhef><al>{creator} \
         besluit:</al></aanhef><regeling-tekst>",
        id = r.id(v),
        title = escape(r.title),
        creator = escape(r.creator),
    );
    for a in v.articles {
        out.push_str(&format!(
            "<artikel><kop><label>Artikel</label><nr>{}</nr>{}</kop>",
            a.number,
            a.title
                .map(|t| format!("<titel>{}</titel>", escape(t)))
                .unwrap_or_default()
        ));
        if a.paragraphs.len() == 1 {
            out.push_str(&format!("<al>{}</al>", escape(a.paragraphs[0])));
        } else {
            out.push_str("<lijst type=\"expliciet\">");
            for (i, p) in a.paragraphs.iter().enumerate() {
                out.push_str(&format!("<li nr=\"{}.\"><al>{}</al></li>", i + 1, escape(p)));
            }
            out.push_str("</lijst>");
        }
        out.push_str("</artikel>");
    }
    out.push_str("</regeling-tekst></regeling></body></cvdr>\n");
    out
}

async fn text(Path((work, n, file)): Path<(String, String, String)>) -> Response<Body> {
    let found = REGULATIONS.iter().find(|r| r.work == work).and_then(|r| {
        r.versions
            .iter()
            .find(|v| n == v.n.to_string() && file == format!("{}.xml", r.id(v)))
            .map(|v| (r, v))
    });
    match found {
        Some((r, v)) => raw_response(StatusCode::OK, "application/xml", text_xml(r, v)),
        None => not_found(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(query: &str) -> Vec<String> {
        matches(&parse_cql(query).unwrap())
            .iter()
            .map(|(r, v)| r.id(v))
            .collect()
    }

    #[test]
    fn the_service_reads_the_clauses_it_knows_and_refuses_others() {
        assert_eq!(parse_cql("parkeren").unwrap_err().1, "cql.serverChoice");
        assert_eq!(
            parse_cql("dcterms.subject=water").unwrap_err().0,
            "info:srw/diagnostic/1/16"
        );
        assert_eq!(
            parse_cql("keyword all \"parkeren OR fietsen\"").unwrap_err().0,
            "info:srw/diagnostic/1/1"
        );
        for bad in [
            "keyword all \"x",
            "and",
            "overheidrg.datumGeldendOp=morgen",
            "keyword < x",
        ] {
            assert_eq!(parse_cql(bad).unwrap_err().0, "info:srw/diagnostic/1/10", "{bad}");
        }
    }

    #[test]
    fn a_creator_is_whole_words_and_a_day_selects_one_version() {
        assert_eq!(
            ids("dcterms.creator=\"Utrecht\" and overheidrg.datumGeldendOp=2025-06-01"),
            ["CVDR700001_2", "CVDR700002_1"]
        );
        assert_eq!(
            ids(
                "keyword all \"parkeren\" and dcterms.creator=\"Utrecht\" and organisatieType=\"Gemeente\" \
                 and overheidrg.datumGeldendOp=2024-06-01"
            ),
            ["CVDR700001_1"]
        );
        assert_eq!(ids("workid=\"CVDR700001\""), ["CVDR700001_1", "CVDR700001_2"]);
        let law = &REGULATIONS[0];
        let xml = text_xml(law, &law.versions[1]);
        assert!(
            xml.contains("<li nr=\"2.\"><al>Per adres wordt ten hoogste één vergunning"),
            "{xml}"
        );
        assert!(xml.starts_with("<?xml") && xml.contains("<cvdr "), "{xml}");
    }
}
