//! Fake Basiswettenbestand (`bwb`): KOOP's SRU 1.2 search of national legislation
//! (`/sru/Search?operation=searchRetrieve&version=1.2&x-connection=BWB&query=…`) and the
//! toestand XML of each version (`/bwb/{id}/{from}_0/xml/{id}_{from}_0.xml`), strict like
//! the service (`docs/platforms.md`).
//!
//! Invariants:
//! - A request the service would refuse is answered as it answers: HTTP 200 with an SRU
//!   1.2 diagnostic and no count — an unknown index (`info:srw/diagnostic/1/16`), a
//!   query it cannot parse (`/1/10`), another `x-connection` or a bad number
//!   (`/1/6`), another version (`/1/5`), a missing query (`/1/7`).
//! - One record per version: without `overheidbwb.geldigheidsdatum==DATE` every version
//!   of a regulation matches; with it, the one in force on that day. Records come in
//!   identifier order, then by the version's start.
//! - Title words match whole words of the title or the citation title, ignoring case.
//!
//! Settings ([`BwbSettings`]): the service's own trouble by count of searches — every
//! n-th answered with a syntax diagnostic (the service rejecting a query it usually
//! takes), or with a system diagnostic and no count (overload).
//!
//! What this fake does not do: `sortBy`, `any`/`all` beyond the title index, the wti and
//! manifest files, or more than these four regulations.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use axum::Router;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{Response, StatusCode};
use axum::middleware;
use axum::routing::get;

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

/// One article of a version: its division's index, number, title and paragraphs.
#[derive(Clone, Copy, Debug)]
pub struct FakeArticle {
    /// The division it stands in (index into the regulation's divisions).
    pub division: usize,
    /// Its number, e.g. `1:3`.
    pub number: &'static str,
    /// Its heading's title, if any.
    pub title: Option<&'static str>,
    /// Its paragraphs (`lid`s, numbered from 1 when there is more than one).
    pub paragraphs: &'static [&'static str],
}

/// One version (toestand) of a regulation.
#[derive(Clone, Copy, Debug)]
pub struct FakeVersion {
    /// In force from.
    pub from: &'static str,
    /// In force until (`9999-12-31`: open).
    pub until: &'static str,
    /// Its articles.
    pub articles: &'static [FakeArticle],
}

/// A regulation of the fake's data.
#[derive(Clone, Copy, Debug)]
pub struct FakeRegulation {
    /// BWB id.
    pub id: &'static str,
    /// Title.
    pub title: &'static str,
    /// Citation title.
    pub citation_title: &'static str,
    /// Kind (`dcterms:type`).
    pub kind: &'static str,
    /// Ministry.
    pub authority: &'static str,
    /// Area of law.
    pub area: &'static str,
    /// Its divisions: (label, number, title).
    pub divisions: &'static [(&'static str, &'static str, &'static str)],
    /// Its versions, oldest first.
    pub versions: &'static [FakeVersion],
}

impl FakeRegulation {
    /// The version in force on `date`.
    pub fn in_force(&self, date: &str) -> Option<&FakeVersion> {
        self.versions.iter().find(|v| v.from <= date && date <= v.until)
    }
}

const OPEN: &str = "9999-12-31";

/// The law whose article 2 changed on 2025-07-01, and which gained article 3 then.
pub const FIREWORKS_LAW: &str = "BWBR0047001";
/// The Algemene wet bestuursrecht, with articles numbered `1:1` … `1:3`.
pub const AWB: &str = "BWBR0005537";

/// The fake's regulations.
pub static REGULATIONS: &[FakeRegulation] = &[
    FakeRegulation {
        id: AWB,
        title: "Algemene wet bestuursrecht",
        citation_title: "Algemene wet bestuursrecht",
        kind: "wet",
        authority: "Justitie en Veiligheid",
        area: "Bestuursrecht",
        divisions: &[
            ("Hoofdstuk", "1", "Inleidende bepalingen"),
            ("Titel", "1.1", "Definities en reikwijdte"),
        ],
        versions: &[FakeVersion {
            from: "2024-01-01",
            until: OPEN,
            articles: &[
                FakeArticle {
                    division: 1,
                    number: "1:1",
                    title: None,
                    paragraphs: &[
                        "Onder bestuursorgaan wordt verstaan: een orgaan van een rechtspersoon die krachtens \
                         publiekrecht is ingesteld, of een ander persoon of college, met enig openbaar gezag bekleed.",
                    ],
                },
                FakeArticle {
                    division: 1,
                    number: "1:2",
                    title: None,
                    paragraphs: &[
                        "Onder belanghebbende wordt verstaan: degene wiens belang rechtstreeks bij een besluit is \
                         betrokken.",
                    ],
                },
                FakeArticle {
                    division: 1,
                    number: "1:3",
                    title: None,
                    paragraphs: &[
                        "Onder besluit wordt verstaan: een schriftelijke beslissing van een bestuursorgaan, \
                         inhoudende een publiekrechtelijke rechtshandeling.",
                        "Onder beschikking wordt verstaan: een besluit dat niet van algemene strekking is, met \
                         inbegrip van de afwijzing van een aanvraag daarvan.",
                        "Onder aanvraag wordt verstaan: een verzoek van een belanghebbende, een besluit te nemen.",
                    ],
                },
            ],
        }],
    },
    FakeRegulation {
        id: "BWBR0013360",
        title: "Vuurwerkbesluit",
        citation_title: "Vuurwerkbesluit",
        kind: "AMvB",
        authority: "Infrastructuur en Waterstaat",
        area: "Milieurecht",
        divisions: &[("Hoofdstuk", "1", "Algemeen")],
        versions: &[FakeVersion {
            from: "2024-01-01",
            until: OPEN,
            articles: &[FakeArticle {
                division: 0,
                number: "1.1.1",
                title: Some("Begripsbepalingen"),
                paragraphs: &["In dit besluit wordt verstaan onder consumentenvuurwerk: vuurwerk van categorie F1."],
            }],
        }],
    },
    FakeRegulation {
        id: FIREWORKS_LAW,
        title: "Wet van 12 juni 2023, houdende regels over het afsteken van consumentenvuurwerk",
        citation_title: "Wet consumentenvuurwerk",
        kind: "wet",
        authority: "Justitie en Veiligheid",
        area: "Openbare orde",
        divisions: &[("Hoofdstuk", "1", "Algemene bepalingen"), ("Hoofdstuk", "2", "Verbod")],
        versions: &[
            FakeVersion {
                from: "2024-01-01",
                until: "2025-06-30",
                articles: &[
                    FakeArticle {
                        division: 0,
                        number: "1",
                        title: Some("Begrippen"),
                        paragraphs: &[
                            "In deze wet wordt verstaan onder consumentenvuurwerk: vuurwerk voor particulieren.",
                        ],
                    },
                    FakeArticle {
                        division: 1,
                        number: "2",
                        title: None,
                        paragraphs: &[
                            "Het is verboden consumentenvuurwerk tot ontbranding te brengen.",
                            "Het eerste lid geldt niet op 31 december vanaf 18.00 uur tot 1 januari 02.00 uur.",
                        ],
                    },
                ],
            },
            FakeVersion {
                from: "2025-07-01",
                until: OPEN,
                articles: &[
                    FakeArticle {
                        division: 0,
                        number: "1",
                        title: Some("Begrippen"),
                        paragraphs: &[
                            "In deze wet wordt verstaan onder consumentenvuurwerk: vuurwerk voor particulieren.",
                        ],
                    },
                    FakeArticle {
                        division: 1,
                        number: "2",
                        title: None,
                        paragraphs: &[
                            "Het is verboden consumentenvuurwerk tot ontbranding te brengen.",
                            "Het eerste lid geldt niet op 31 december vanaf 20.00 uur tot 1 januari 01.00 uur.",
                        ],
                    },
                    FakeArticle {
                        division: 1,
                        number: "3",
                        title: Some("Vuurwerkvrije zones"),
                        paragraphs: &[
                            "De burgemeester kan gebieden aanwijzen waar ook in de periode, bedoeld in artikel 2, \
                             tweede lid, geen consumentenvuurwerk tot ontbranding mag worden gebracht.",
                        ],
                    },
                ],
            },
        ],
    },
    FakeRegulation {
        id: "BWBR0048123",
        title: "Regeling verkooppunten consumentenvuurwerk",
        citation_title: "Regeling verkooppunten consumentenvuurwerk",
        kind: "ministeriele-regeling",
        authority: "Justitie en Veiligheid",
        area: "Openbare orde",
        divisions: &[],
        versions: &[FakeVersion {
            from: "2025-07-01",
            until: OPEN,
            articles: &[FakeArticle {
                division: usize::MAX,
                number: "1",
                title: None,
                paragraphs: &[
                    "Consumentenvuurwerk wordt alleen verkocht op de door de burgemeester aangewezen plaatsen.",
                ],
            }],
        }],
    },
];

/// What the Basiswettenbestand fake does beyond the faults every fake applies, by count
/// of searches whose query parsed. The default is the healthy service.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BwbSettings {
    /// Answer every n-th search with a syntax diagnostic and no count (the service
    /// rejecting the query). `None` never.
    pub reject_every: Option<u32>,
    /// Answer every n-th search with a system diagnostic and no count (overload).
    pub overload_every: Option<u32>,
}

/// No textual names: the fake's settings are reached through its handle only.
impl OwnSettings for BwbSettings {}

/// The Basiswettenbestand fake, as its registry line names it.
pub(crate) struct Fake;

impl FakePlatform for Fake {
    type Own = BwbSettings;

    fn router(shared: Shared<BwbSettings>, base_url: String) -> Router {
        router(shared, base_url)
    }
}

struct BwbState {
    shared: Shared<BwbSettings>,
    /// The fake's root, for the toestanden's URLs.
    root: String,
    searches: AtomicU64,
}

fn router(shared: Shared<BwbSettings>, base_url: String) -> Router {
    let faults = Faults::new(shared.clone(), &REPLIES);
    let root = base_url.strip_suffix(SRU_PATH).unwrap_or(&base_url).to_owned();
    let state = Arc::new(BwbState {
        shared,
        root,
        searches: AtomicU64::new(0),
    });
    Router::new()
        .route(SRU_PATH, get(sru))
        .route(&format!("{SRU_PATH}/"), get(sru))
        .route("/bwb/{id}/{version}/xml/{file}", get(toestand))
        .fallback(|| async { not_found() })
        .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
        .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
        .with_state(state)
}

/// The service's words for the shared faults. No 429 of KOOP's SRU service is documented:
/// the storm's is the small JSON error the shared faults give a fake without a shape of
/// its own, as `ob`'s.
static REPLIES: FaultReplies<BwbSettings> = FaultReplies {
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
    /// `overheidbwb.titel all|any "words"`.
    Title {
        /// All words (`all`, `=`) or any (`any`).
        all: bool,
        /// The words, lower case.
        words: Vec<String>,
    },
    /// `dcterms.type==value`.
    Kind(String),
    /// `overheid.authority=value` (containment).
    Authority(String),
    /// `overheidbwb.geldigheidsdatum==date`.
    InForce(String),
    /// `dcterms.identifier==id`.
    Identifier(String),
}

/// A diagnostic the fake answers a query with: (uri, details, message).
pub type CqlDiagnostic = (&'static str, String, &'static str);

/// Reads the CQL the service takes: clauses `index relation value` joined by `and`.
pub fn parse_cql(query: &str) -> Result<Vec<Clause>, CqlDiagnostic> {
    let syntax = |d: &str| ("info:srw/diagnostic/1/10", d.to_owned(), "Query syntax error");
    let mut clauses = Vec::new();
    for part in split_and(query).map_err(|_| syntax(query))? {
        let part = part.trim();
        let (index, rest) = part
            .find(['=', ' '])
            .map(|i| part.split_at(i))
            .ok_or_else(|| syntax(part))?;
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
        let date = |v: &str| {
            let b = v.as_bytes();
            b.len() == 10 && b[4] == b'-' && b[7] == b'-' && v.replace('-', "").bytes().all(|c| c.is_ascii_digit())
        };
        let clause = match (index, relation) {
            ("overheidbwb.titel", "all" | "=") | ("overheidbwb.titel", "any") => Clause::Title {
                all: relation != "any",
                words: value.to_lowercase().split_whitespace().map(str::to_owned).collect(),
            },
            ("dcterms.type", "==" | "=") => Clause::Kind(value),
            ("overheid.authority", "==" | "=") => Clause::Authority(value.to_lowercase()),
            ("overheidbwb.geldigheidsdatum", "==" | "=") if date(&value) => Clause::InForce(value),
            ("overheidbwb.geldigheidsdatum", _) => return Err(syntax(part)),
            ("dcterms.identifier", "==" | "=") => Clause::Identifier(value),
            ("overheidbwb.titel" | "dcterms.type" | "overheid.authority" | "dcterms.identifier", _) => {
                return Err(syntax(part));
            }
            (other, _) => return Err(("info:srw/diagnostic/1/16", other.to_owned(), "Unsupported index")),
        };
        clauses.push(clause);
    }
    Ok(clauses)
}

/// `query` split on ` and ` outside quotes.
pub(crate) fn split_and(query: &str) -> Result<Vec<String>, ()> {
    let mut parts = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    let words: Vec<&str> = query.split(' ').collect();
    for w in words {
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
    if quoted {
        return Err(());
    }
    parts.push(current);
    if parts.iter().any(|p| p.trim().is_empty()) {
        return Err(());
    }
    Ok(parts)
}

/// The (regulation, version) pairs `clauses` select, in the fake's order.
pub fn matches(clauses: &[Clause]) -> Vec<(&'static FakeRegulation, &'static FakeVersion)> {
    let mut out = Vec::new();
    let mut regulations: Vec<&FakeRegulation> = REGULATIONS.iter().collect();
    regulations.sort_by_key(|r| r.id);
    for r in regulations {
        let title_words: Vec<String> = format!("{} {}", r.title, r.citation_title)
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        let regulation_ok = clauses.iter().all(|c| match c {
            Clause::Title { all, words } => {
                let has = |w: &String| title_words.contains(w);
                if *all {
                    words.iter().all(has)
                } else {
                    words.iter().any(has)
                }
            }
            Clause::Kind(k) => r.kind.eq_ignore_ascii_case(k),
            Clause::Authority(a) => r.authority.to_lowercase().contains(a.as_str()),
            Clause::Identifier(id) => r.id == id,
            Clause::InForce(_) => true,
        });
        if !regulation_ok {
            continue;
        }
        for v in r.versions {
            let in_force = clauses.iter().all(|c| match c {
                Clause::InForce(d) => v.from <= d.as_str() && d.as_str() <= v.until,
                _ => true,
            });
            if in_force {
                out.push((r, v));
            }
        }
    }
    out
}

fn every_nth(n: u64, every: Option<u32>) -> bool {
    every.is_some_and(|every| every > 0 && n.is_multiple_of(u64::from(every)))
}

async fn sru(State(state): State<Arc<BwbState>>, Query(params): Query<Vec<(String, String)>>) -> Response<Body> {
    let param = |name: &str| params.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    if param("operation") != Some("searchRetrieve") {
        return diagnostic(
            "info:srw/diagnostic/1/4",
            param("operation").unwrap_or(""),
            "Unsupported operation",
        );
    }
    if param("x-connection").map(str::to_ascii_lowercase).as_deref() != Some("bwb") {
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

/// The URL of a version's toestand.
pub fn toestand_url(root: &str, r: &FakeRegulation, v: &FakeVersion) -> String {
    format!(
        "{root}/bwb/{id}/{from}_0/xml/{id}_{from}_0.xml",
        id = r.id,
        from = v.from
    )
}

fn record_xml(root: &str, r: &FakeRegulation, v: &FakeVersion, position: u64) -> String {
    format!(
        "<record><recordSchema>http://standaarden.overheid.nl/sru/</recordSchema><recordPacking>xml</recordPacking>\
         <recordData><gzd xmlns=\"http://standaarden.overheid.nl/sru\" xmlns:dcterms=\"http://purl.org/dc/terms/\" \
         xmlns:overheid=\"http://standaarden.overheid.nl/owms/terms/\" \
         xmlns:overheidbwb=\"http://standaarden.overheid.nl/bwb/terms/\"><originalData><overheidbwb:meta><owmskern>\
         <dcterms:identifier>{id}</dcterms:identifier><dcterms:title>{title}</dcterms:title>\
         <dcterms:type scheme=\"overheid:BWBType\">{kind}</dcterms:type><dcterms:language>nl</dcterms:language>\
         <overheid:authority>{authority}</overheid:authority><dcterms:modified>{from}</dcterms:modified></owmskern>\
         <bwbipm><overheidbwb:toestand>http://wetten.overheid.nl/id/{id}/{from}/0</overheidbwb:toestand>\
         <overheidbwb:rechtsgebied>{area}</overheidbwb:rechtsgebied>\
         <overheidbwb:geldigheidsperiode_startdatum>{from}</overheidbwb:geldigheidsperiode_startdatum>\
         <overheidbwb:geldigheidsperiode_einddatum>{until}</overheidbwb:geldigheidsperiode_einddatum>\
         </bwbipm></overheidbwb:meta></originalData><enrichedData>\
         <overheidbwb:locatie_toestand>{url}</overheidbwb:locatie_toestand></enrichedData></gzd></recordData>\
         <recordPosition>{position}</recordPosition></record>",
        id = r.id,
        title = escape(r.title),
        kind = escape(r.kind),
        authority = escape(r.authority),
        area = escape(r.area),
        from = v.from,
        until = v.until,
        url = escape(&toestand_url(root, r, v)),
    )
}

/// A version's toestand XML.
pub fn toestand_xml(r: &FakeRegulation, v: &FakeVersion) -> String {
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<toestand bwb-id=\"{id}\" bwb-ng-vast-deel=\"{id}\" \
         inwerkingtreding=\"{from}\"><wetgeving soort=\"{kind}\"><intitule>{title}</intitule>\
         <citeertitel status=\"officieel\">{cite}</citeertitel><wet-besluit><wettekst>",
        id = r.id,
        from = v.from,
        kind = escape(r.kind),
        title = escape(r.title),
        cite = escape(r.citation_title),
    );
    // Divisions nest by their place in the list (a Titel inside the Hoofdstuk before it).
    let mut open: Vec<usize> = Vec::new();
    for a in v.articles {
        let chain: Vec<usize> = if a.division == usize::MAX {
            Vec::new()
        } else if r.divisions.get(a.division).is_some_and(|d| d.0 == "Titel") {
            vec![a.division - 1, a.division]
        } else {
            vec![a.division]
        };
        let tag = |i: usize| {
            if r.divisions[i].0 == "Titel" {
                "titeldeel"
            } else {
                "hoofdstuk"
            }
        };
        while open.iter().zip(&chain).filter(|(a, b)| a == b).count() < open.len() {
            let i = open.pop().unwrap_or_default();
            out.push_str(&format!("</{}>", tag(i)));
        }
        for &i in &chain[open.len()..] {
            let (label, nr, titel) = r.divisions[i];
            out.push_str(&format!(
                "<{}><kop><label>{label}</label><nr>{nr}</nr><titel>{}</titel></kop>",
                tag(i),
                escape(titel)
            ));
            open.push(i);
        }
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
            for (i, p) in a.paragraphs.iter().enumerate() {
                out.push_str(&format!("<lid><lidnr>{}</lidnr><al>{}</al></lid>", i + 1, escape(p)));
            }
        }
        out.push_str("</artikel>");
    }
    while let Some(i) = open.pop() {
        out.push_str(if r.divisions[i].0 == "Titel" {
            "</titeldeel>"
        } else {
            "</hoofdstuk>"
        });
    }
    out.push_str("</wettekst></wet-besluit></wetgeving></toestand>\n");
    out
}

async fn toestand(Path((id, version, file)): Path<(String, String, String)>) -> Response<Body> {
    let found = REGULATIONS.iter().find(|r| r.id == id).and_then(|r| {
        r.versions
            .iter()
            .find(|v| version == format!("{}_0", v.from) && file == format!("{}_{}_0.xml", r.id, v.from))
            .map(|v| (r, v))
    });
    match found {
        Some((r, v)) => raw_response(StatusCode::OK, "application/xml", toestand_xml(r, v)),
        None => not_found(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_reads_the_clauses_it_knows_and_refuses_others() {
        let q = parse_cql("overheidbwb.titel all \"Wet and vuurwerk\" and overheidbwb.geldigheidsdatum==2025-01-01")
            .unwrap();
        assert_eq!(q.len(), 2);
        assert!(matches!(&q[0], Clause::Title { all: true, words } if words == &["wet", "and", "vuurwerk"]));
        assert_eq!(
            parse_cql("dcterms.title any \"x\"").unwrap_err().0,
            "info:srw/diagnostic/1/16"
        );
        for bad in [
            "overheidbwb.titel all \"x",
            "wet vuurwerk",
            "and",
            "overheidbwb.geldigheidsdatum==morgen",
        ] {
            assert_eq!(parse_cql(bad).unwrap_err().0, "info:srw/diagnostic/1/10", "{bad}");
        }
    }

    #[test]
    fn one_version_is_in_force_on_a_day_and_article_2_differs_between_them() {
        let law = REGULATIONS.iter().find(|r| r.id == FIREWORKS_LAW).unwrap();
        let (old, new) = (law.in_force("2025-01-01").unwrap(), law.in_force("2025-08-01").unwrap());
        assert_ne!(old.articles[1].paragraphs, new.articles[1].paragraphs);
        let hits = matches(
            &parse_cql("overheidbwb.titel all \"consumentenvuurwerk\" and overheidbwb.geldigheidsdatum==2025-01-01")
                .unwrap(),
        );
        assert_eq!(hits.iter().map(|(r, _)| r.id).collect::<Vec<_>>(), [FIREWORKS_LAW]);
        let xml = toestand_xml(law, new);
        assert!(xml.contains("<nr>3</nr><titel>Vuurwerkvrije zones</titel>"), "{xml}");
        let awb = toestand_xml(
            REGULATIONS.iter().find(|r| r.id == AWB).unwrap(),
            &REGULATIONS[0].versions[0],
        );
        assert!(
            awb.contains("<hoofdstuk><kop><label>Hoofdstuk</label><nr>1</nr>"),
            "{awb}"
        );
        assert!(
            awb.contains("<titeldeel><kop><label>Titel</label><nr>1.1</nr>"),
            "{awb}"
        );
        assert!(
            awb.ends_with("</titeldeel></hoofdstuk></wettekst></wet-besluit></wetgeving></toestand>\n"),
            "{awb}"
        );
    }
}
