//! Fake CELLAR, the Publications Office's repository behind EUR-Lex (PLATFORMS.md §12b):
//! its SPARQL endpoint `/webapi/rdf/sparql` (GET `?query=` or POST form `query=`) and its
//! items `/resource/cellar/{uuid}.{expression}.{manifestation}/DOC_n`.
//!
//! The endpoint is a real SPARQL engine — oxigraph's in-memory store — over triples in
//! CDM (PLATFORMS.md §12b.2) built when the fake starts from the real files of
//! `corpus/eurlex/` ([`real_triples`]): the works, expressions, manifestations and items
//! the two real SPARQL answers list, and the CELEX numbers, ELIs, document dates and
//! titles of the real Formex manifests. What no real file holds is added apart and marked
//! so ([`built_triples`], built from the documented shape, **not real**): Dutch
//! expressions and their titles, whether an act is in force, one directive, and one
//! Dutch XHTML text ([`DUTCH_XHTML`]; the corpus has English texts only), and the Dutch
//! national transposition measures of that directive ([`nim_triples`]: no real NIM answer
//! exists).
//!
//! Invariants (the real endpoint's, as documented):
//! - A query is parsed and evaluated as SPARQL 1.1; a query the engine refuses is a 400
//!   in Virtuoso's words (`Virtuoso 37000 Error SP030`). Virtuoso's `bif:contains` is
//!   not SPARQL: this engine refuses it as an undeclared prefix, where the real endpoint
//!   runs it (BesluitBron's client never sends it; its title words use `CONTAINS`).
//! - Answers are Virtuoso's JSON dialect: `head.link`, `results.distinct` false,
//!   `results.ordered` true, typed literals as `typed-literal`, CELEX numbers typed
//!   `xsd:string`.
//! - Items are served as the corpus has them, byte for byte (XHTML, Formex XML); an item
//!   the real answers list but the corpus does not hold (the 2008 act's annexes
//!   `DOC_3`/`DOC_4`, the AI Act's Formex zip) is a 404, as an item CELLAR lists but
//!   does not serve would be.
//!
//! Settings: only the faults every fake applies (`latency` makes a query slow); nothing
//! of its own.
//!
//! What this fake does not do: notices (tree/branch/object), content negotiation on
//! `/resource/celex/…`, consolidated texts, or the
//! Formex zip of the 2024 act (the corpus holds its files unpacked: that manifestation is
//! not listed).

use std::collections::BTreeMap;
use std::sync::OnceLock;

use axum::Router;
use axum::body::Body;
use axum::extract::{Form, Path, Query};
use axum::http::{Response, StatusCode};
use axum::middleware;
use axum::routing::get;
use besluitbron_core::{Platform, PlatformId};
use oxigraph::io::RdfFormat;
use oxigraph::model::Term;
use oxigraph::sparql::{QueryResults, SparqlEvaluator};
use oxigraph::store::Store;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::fake::FakePlatform;
use crate::faults::{self, FaultReplies, Faults};
use crate::raw_response;
use crate::real::{self, RealFile};
use crate::shared::Shared;

/// The platform this fake imitates (as the server's connector declares it).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "eurlex",
    name: "EUR-Lex (CELLAR)",
});

/// The SPARQL endpoint's path.
pub const SPARQL_PATH: &str = "/webapi/rdf/sparql";

/// The fake, as its registry line names it: nothing of its own to set.
pub(crate) struct Fake;

impl FakePlatform for Fake {
    const CORPUS: &'static [&'static str] = &["eurlex"];

    type Own = ();

    fn router(shared: Shared<()>, _base_url: String) -> Router {
        let faults = Faults::new(shared, &REPLIES);
        Router::new()
            .route(SPARQL_PATH, get(sparql_get).post(sparql_post))
            .route("/resource/cellar/{*id}", get(item))
            .fallback(|| async {
                text(
                    StatusCode::NOT_FOUND,
                    "text/html",
                    "<html><body>Not Found</body></html>",
                )
            })
            .layer(middleware::from_fn_with_state(faults.clone(), faults::on_accepted))
            .layer(middleware::from_fn_with_state(faults, faults::on_arrival))
    }
}

static REPLIES: FaultReplies<()> = FaultReplies {
    failure: "<html><body><h1>500 Internal Server Error</h1></body></html>",
    // What CELLAR (or the EU's firewall) answers a blocked client is not documented
    // (PLATFORMS.md §12b.10): a plain JSON error here.
    storm: |_, ()| {
        text(
            StatusCode::TOO_MANY_REQUESTS,
            "application/json",
            r#"{"error": "Too Many Requests"}"#,
        )
    },
};

fn text(status: StatusCode, content_type: &'static str, body: impl Into<Body>) -> Response<Body> {
    raw_response(status, content_type, body)
}

const CDM: &str = "http://publications.europa.eu/ontology/cdm#";
const CELLAR: &str = "http://publications.europa.eu/resource/cellar/";
const XSD_STRING: &str = "http://www.w3.org/2001/XMLSchema#string";
const XSD_DATE: &str = "http://www.w3.org/2001/XMLSchema#date";

/// The 2024 act (Interoperable Europe Act) in CELLAR.
pub const CELLAR_2024_903: &str = "c008bcb6-e7ec-11ee-9ea8-01aa75ed71a1";
/// The 2008 act in CELLAR.
pub const CELLAR_2008_1137: &str = "e115172d-3ab3-4b14-b0a4-dfdcc9871793";
/// The Dutch expression's slot of the 2024 act (built: the real slot is not known).
const DUTCH_SLOT: &str = "0017";

/// N-Triples writer over `out`.
struct Triples(String);

impl Triples {
    fn iri(&mut self, s: &str, p: &str, o: &str) {
        self.0.push_str(&format!("<{s}> <{CDM}{p}> <{o}> .\n"));
    }

    fn lit(&mut self, s: &str, p: &str, o: &str, datatype: &str) {
        let escaped = o.replace('\\', "\\\\").replace('"', "\\\"").replace('\n', "\\n");
        self.0
            .push_str(&format!("<{s}> <{CDM}{p}> \"{escaped}\"^^<{datatype}> .\n"));
    }

    fn work(&mut self, cellar: &str, celex: &str, kind: &str, date: &str) {
        let w = format!("{CELLAR}{cellar}");
        self.lit(&w, "resource_legal_id_celex", celex, XSD_STRING);
        self.iri(
            &w,
            "work_has_resource-type",
            &format!("http://publications.europa.eu/resource/authority/resource-type/{kind}"),
        );
        self.lit(&w, "work_date_document", date, XSD_DATE);
    }

    fn expression(&mut self, cellar: &str, slot: &str, language: &str, title: &str) {
        let e = format!("{CELLAR}{cellar}.{slot}");
        self.iri(&e, "expression_belongs_to_work", &format!("{CELLAR}{cellar}"));
        self.iri(
            &e,
            "expression_uses_language",
            &format!("http://publications.europa.eu/resource/authority/language/{language}"),
        );
        self.lit(&e, "expression_title", title, XSD_STRING);
    }

    fn item(&mut self, expression: &str, manifestation: &str, format: &str, item: &str) {
        self.iri(manifestation, "manifestation_manifests_expression", expression);
        self.lit(manifestation, "manifestation_type", format, XSD_STRING);
        self.iri(item, "item_belongs_to_manifestation", manifestation);
    }
}

fn file(name: &str) -> &'static RealFile {
    real::served("eurlex")
        .iter()
        .find(|f| f.path.ends_with(name))
        .unwrap_or_else(|| panic!("corpus/eurlex/{name}"))
}

/// What a real Formex `DOC` manifest says: the title, the date (`DOC.MAIN.PUB/DATE`),
/// the ELI.
fn manifest(name: &str) -> (String, String, Option<String>) {
    let doc = real::parse(file(name).bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    let mut titles = Vec::new();
    doc.find_all("TI", &mut titles);
    let title = titles.first().map(|t| t.text_without(&[], " ")).unwrap_or_default();
    let iso = doc
        .find("DOC.MAIN.PUB")
        .and_then(|m| m.find("DATE"))
        .and_then(|d| d.attribute("ISO"))
        .unwrap_or_default()
        .to_owned();
    let date = if iso.len() == 8 {
        format!("{}-{}-{}", &iso[..4], &iso[4..6], &iso[6..])
    } else {
        iso
    };
    let eli = doc.find("NO.ELI").and_then(|e| e.attribute("ID")).map(str::to_owned);
    (title, date, eli)
}

#[derive(Deserialize)]
struct Bindings {
    results: BindingsResults,
}

#[derive(Deserialize)]
struct BindingsResults {
    bindings: Vec<BTreeMap<String, BindingValue>>,
}

#[derive(Deserialize)]
struct BindingValue {
    value: String,
}

/// The (item, manifestation, format, expression) rows of a real SPARQL answer.
fn answer_rows(name: &str) -> Vec<[String; 4]> {
    let answer: Bindings = serde_json::from_slice(file(name).bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
    answer
        .results
        .bindings
        .into_iter()
        .filter_map(|mut b| {
            Some([
                b.remove("cellarURIs")?.value,
                b.remove("manif")?.value,
                b.remove("format")?.value,
                b.remove("expr")?.value,
            ])
        })
        .collect()
}

/// The triples the real files give.
fn real_triples(t: &mut Triples) {
    let (title, date, eli) = manifest("cellar-fmx4-32024R0903-EN-L_202400903EN.doc.fmx.xml");
    t.work(CELLAR_2024_903, "32024R0903", "REG", &date);
    if let Some(eli) = eli {
        t.lit(
            &format!("{CELLAR}{CELLAR_2024_903}"),
            "resource_legal_eli",
            &eli,
            XSD_STRING,
        );
    }
    t.expression(CELLAR_2024_903, "0006", "ENG", &title);
    let e = format!("{CELLAR}{CELLAR_2024_903}.0006");
    t.item(&e, &format!("{e}.03"), "xhtml", &format!("{e}.03/DOC_1"));

    let (title, date, _) = manifest("cellar-fmx4-32008R1137-EN-DOC_1.xml");
    t.work(CELLAR_2008_1137, "32008R1137", "REG", &date);
    t.expression(CELLAR_2008_1137, "0006", "ENG", &title);
    for [item, manif, format, expr] in answer_rows("cellar-sparql-fmx4-items-32008R1137.reserialized.json") {
        t.item(&expr, &manif, &format, &item);
    }
    for [item, manif, format, expr] in answer_rows("cellar-sparql-fmx4-items-32024R1689.reserialized.json") {
        t.item(&expr, &manif, &format, &item);
        let work = expr.rsplit_once('.').map(|(w, _)| w.to_owned()).unwrap_or_default();
        t.iri(&expr, "expression_belongs_to_work", &work);
        t.iri(
            &expr,
            "expression_uses_language",
            "http://publications.europa.eu/resource/authority/language/ENG",
        );
        // The CELEX of this cellar id is inferred (EURLEX-INDEX.md), not in the answer.
        t.lit(&work, "resource_legal_id_celex", "32024R1689", XSD_STRING);
    }
}

/// Built from the documented shape, not real: what no real file of the corpus holds.
fn built_triples(t: &mut Triples) {
    let w2024 = format!("{CELLAR}{CELLAR_2024_903}");
    t.lit(
        &w2024,
        "resource_legal_in-force",
        "true",
        "http://www.w3.org/2001/XMLSchema#boolean",
    );
    t.lit(&w2024, "resource_legal_date_entry-into-force", "2024-04-11", XSD_DATE);
    t.expression(
        CELLAR_2024_903,
        DUTCH_SLOT,
        "NLD",
        "Verordening (EU) 2024/903 van het Europees Parlement en de Raad van 13 maart 2024 tot vaststelling van \
         maatregelen voor een hoog niveau van interoperabiliteit in de publieke sector in de hele Unie (Verordening \
         Interoperabel Europa)",
    );
    let e = format!("{w2024}.{DUTCH_SLOT}");
    t.item(&e, &format!("{e}.03"), "xhtml", &format!("{e}.03/DOC_1"));
    let w2008 = format!("{CELLAR}{CELLAR_2008_1137}");
    t.lit(&w2008, "resource_legal_in-force", "1", XSD_STRING);
    let w1689 = format!("{CELLAR}dc8116a1-3fe6-11ef-865a-01aa75ed71a1");
    t.iri(
        &w1689,
        "work_has_resource-type",
        "http://publications.europa.eu/resource/authority/resource-type/REG",
    );
    t.lit(&w1689, "work_date_document", "2024-06-13", XSD_DATE);
    t.lit(&w1689, "resource_legal_in-force", "1", XSD_STRING);
    t.lit(
        &format!("{w1689}.0006"),
        "expression_title",
        "Regulation (EU) 2024/1689 (Artificial Intelligence Act)",
        XSD_STRING,
    );
    t.iri(&w2024, "resource_legal_based_on_resource_legal", &w1689);
    let dir = format!("{CELLAR}00000000-0000-4000-8000-000000001937");
    t.work(
        "00000000-0000-4000-8000-000000001937",
        "32019L1937",
        "DIR",
        "2019-10-23",
    );
    t.lit(&dir, "resource_legal_in-force", "1", XSD_STRING);
    t.expression(
        "00000000-0000-4000-8000-000000001937",
        DUTCH_SLOT,
        "NLD",
        "Richtlijn (EU) 2019/1937 van het Europees Parlement en de Raad van 23 oktober 2019 inzake de bescherming \
         van personen die inbreuken op het Unierecht melden",
    );
    t.iri(&w1689, "resource_legal_amends_resource_legal", &w2008);
}

/// The directive 32019L1937 in the store (built).
const DIRECTIVE_1937: &str = "00000000-0000-4000-8000-000000001937";

/// One built measure: its number in [`nim_triples`], country, CELEX number and fields.
type Measure = (
    &'static str,
    &'static str,
    &'static str,
    &'static [(&'static str, &'static str)],
);

/// National transposition measures (NIM) of the directive 32019L1937, **built from the
/// documented shape of PLATFORMS.md §12b.3, not real**: no real NIM answer exists in
/// any public repository (corpus/EURLEX-INDEX.md). Each measure is a work of its own with
/// a sector-7 CELEX number, linked to the directive and a country; its journal fields
/// name publications the Officiële Bekendmakingen fake generates (`stb-2025-10005`, a
/// Wet; `stcrt-2026-10004`, a Regeling) and a BWB law its fake serves (the Awb,
/// `BWBR0005537`, as a local id); one Dutch measure names nothing BesluitBron reads, and
/// one measure is Belgian (not asked).
fn nim_triples(t: &mut Triples) {
    const NIM: &str = "http://publications.europa.eu/resource/cellar/00000000-0000-4000-8000-0000000019";
    let directive = format!("{CELLAR}{DIRECTIVE_1937}");
    let country = |c: &str| format!("http://publications.europa.eu/resource/authority/country/{c}");
    let measures: [Measure; 5] = [
        (
            "01",
            "NLD",
            "72019L1937NLD_202500001",
            &[
                (
                    "work_title",
                    "Wet bescherming klokkenluiders (gedocumenteerde vorm, geen echte maatregel)",
                ),
                ("measure_national_implementing_type_act", "Wet"),
                ("measure_national_implementing_name_official_journal", "Staatsblad"),
                ("measure_national_implementing_number_official_journal", "10005"),
                ("measure_national_implementing_date_official_journal", "2025-05-25"),
                ("measure_national_implementing_date_notification", "2025-06-02"),
            ],
        ),
        (
            "02",
            "NLD",
            "72019L1937NLD_202600002",
            &[
                (
                    "work_title",
                    "Regeling meldkanalen (gedocumenteerde vorm, geen echte maatregel)",
                ),
                ("measure_national_implementing_type_act", "Regeling"),
                ("measure_national_implementing_name_official_journal", "Staatscourant"),
                ("measure_national_implementing_number_official_journal", "10004"),
                ("measure_national_implementing_date_official_journal", "2026-07-03"),
            ],
        ),
        (
            "03",
            "NLD",
            "72019L1937NLD_202300003",
            &[
                ("work_title", "Algemene wet bestuursrecht (gedocumenteerde vorm)"),
                ("measure_national_implementing_type_act", "Wet"),
                ("resource_legal_id_local", "BWBR0005537"),
            ],
        ),
        (
            "04",
            "NLD",
            "72019L1937NLD_202300004",
            &[
                ("work_title", "Mededeling zonder vindplaats (gedocumenteerde vorm)"),
                ("measure_national_implementing_type_act", "Mededeling"),
                ("measure_national_implementing_date_notification", "2023-03-01"),
            ],
        ),
        (
            "05",
            "BEL",
            "72019L1937BEL_202200001",
            &[(
                "work_title",
                "Wet betreffende de bescherming van melders (gedocumenteerde vorm)",
            )],
        ),
    ];
    for (n, state, celex, fields) in measures {
        let nim = format!("{NIM}{n}");
        t.lit(&nim, "resource_legal_id_celex", celex, XSD_STRING);
        t.iri(
            &nim,
            "measure_national_implementing_implements_resource_legal",
            &directive,
        );
        t.iri(
            &nim,
            "measure_national_implementing_implemented_by_country",
            &country(state),
        );
        for (p, v) in fields {
            let datatype = if p.starts_with("measure_national_implementing_date") {
                XSD_DATE
            } else {
                XSD_STRING
            };
            t.lit(&nim, p, v, datatype);
        }
    }
}

/// A Dutch XHTML text of the 2024 act in the documented shape (ELI classes as the real
/// English file has them). Built, not real: the corpus has no Dutch text.
pub const DUTCH_XHTML: &str = r#"<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE html PUBLIC "-//W3C//DTD XHTML//EN" "xhtml-strict.dtd"><html xmlns="http://www.w3.org/1999/xhtml"><!-- built by BesluitBron's fake CELLAR from the documented shape (PLATFORMS.md §12b.6); not a real text --><head><title>L_202400903NL.000101.fmx.xml</title></head><body>
<div class="eli-main-title" id="tit_1"><p class="oj-doc-ti">VERORDENING (EU) 2024/903 VAN HET EUROPEES PARLEMENT EN DE RAAD</p><p class="oj-doc-ti">van 13 maart 2024</p><p class="oj-doc-ti">tot vaststelling van maatregelen voor een hoog niveau van interoperabiliteit in de publieke sector in de hele Unie (Verordening Interoperabel Europa)</p></div>
<div class="eli-subdivision" id="pbl_1"><p class="oj-normal">HET EUROPEES PARLEMENT EN DE RAAD VAN DE EUROPESE UNIE,</p><div class="eli-subdivision" id="rct_1"><table><tbody><tr><td><p class="oj-normal">(1)</p></td><td><p class="oj-normal">Overweging in de gedocumenteerde vorm, geen echte tekst.</p></td></tr></tbody></table></div><div class="eli-subdivision" id="enc_1"><p class="oj-normal">HEBBEN DE VOLGENDE VERORDENING VASTGESTELD:</p></div></div>
<div id="cpt_1"><p class="oj-ti-section-1">HOOFDSTUK 1</p><div class="eli-title" id="cpt_1.tit_1"><p class="oj-ti-section-2">ALGEMENE BEPALINGEN</p></div>
<div class="eli-subdivision" id="art_1"><p class="oj-ti-art">Artikel 1</p><div class="eli-title" id="art_1.tit_1"><p class="oj-sti-art">Onderwerp en toepassingsgebied</p></div><div id="001.001"><p class="oj-normal">1.   Deze verordening stelt maatregelen vast voor grensoverschrijdende interoperabiliteit (tekst in de gedocumenteerde vorm).</p></div></div>
<div class="eli-subdivision" id="art_2"><p class="oj-ti-art">Artikel 2</p><div class="eli-title" id="art_2.tit_1"><p class="oj-sti-art">Definities</p></div><div id="002.001"><p class="oj-normal">In deze verordening wordt verstaan onder interoperabiliteit: het vermogen van organisaties om samen te werken.</p></div></div></div>
<div class="eli-subdivision" id="fnp_1"><p class="oj-normal">Deze verordening is verbindend in al haar onderdelen en is rechtstreeks toepasselijk in elke lidstaat.</p></div>
<div class="eli-container" id="anx_1"><p class="oj-doc-ti">BIJLAGE</p><p class="oj-normal">Lijst in de gedocumenteerde vorm.</p></div>
</body></html>"#;

/// The items served, by CELLAR id: their content type and bytes.
type Items = BTreeMap<String, (&'static str, &'static [u8])>;

/// The store and the items, made once per process.
fn cellar() -> &'static (Store, Items) {
    static CELLAR_STATE: OnceLock<(Store, Items)> = OnceLock::new();
    CELLAR_STATE.get_or_init(|| {
        let mut t = Triples(String::new());
        real_triples(&mut t);
        built_triples(&mut t);
        nim_triples(&mut t);
        let store = Store::new().expect("an in-memory store");
        store
            .load_from_slice(RdfFormat::NTriples, t.0.as_bytes())
            .unwrap_or_else(|e| panic!("the fake's triples: {e}"));
        let mut items = BTreeMap::new();
        let e2024 = format!("{CELLAR_2024_903}.0006");
        items.insert(
            format!("{e2024}.03/DOC_1"),
            (
                "application/xhtml+xml",
                file("cellar-xhtml-32024R0903-EN-DOC_1.html").bytes,
            ),
        );
        items.insert(
            format!("{CELLAR_2024_903}.{DUTCH_SLOT}.03/DOC_1"),
            ("application/xhtml+xml", DUTCH_XHTML.as_bytes()),
        );
        for (doc, name) in [
            ("DOC_1", "cellar-fmx4-32008R1137-EN-DOC_1.xml"),
            ("DOC_2", "cellar-fmx4-32008R1137-EN-DOC_2.xml"),
        ] {
            items.insert(
                format!("{CELLAR_2008_1137}.0006.04/{doc}"),
                ("application/xml;type=fmx4", file(name).bytes),
            );
        }
        (store, items)
    })
}

#[derive(Deserialize)]
struct Asked {
    query: Option<String>,
}

async fn sparql_get(Query(asked): Query<Asked>) -> Response<Body> {
    match asked.query {
        Some(q) => answer(&q),
        None => text(
            StatusCode::OK,
            "text/html; charset=UTF-8",
            "<html><head><title>Virtuoso SPARQL Query Editor</title></head><body><form></form></body></html>",
        ),
    }
}

async fn sparql_post(Form(asked): Form<Asked>) -> Response<Body> {
    answer(asked.query.as_deref().unwrap_or_default())
}

/// A term as Virtuoso's JSON writes it.
fn term(t: &Term) -> Value {
    match t {
        Term::NamedNode(n) => json!({"type": "uri", "value": n.as_str()}),
        Term::BlankNode(b) => json!({"type": "bnode", "value": b.as_str()}),
        Term::Literal(l) => match l.language() {
            Some(lang) => json!({"type": "literal", "xml:lang": lang, "value": l.value()}),
            None => json!({"type": "typed-literal", "datatype": l.datatype().as_str(), "value": l.value()}),
        },
        #[allow(unreachable_patterns)]
        _ => json!({"type": "literal", "value": t.to_string()}),
    }
}

fn refused(message: &str) -> Response<Body> {
    text(
        StatusCode::BAD_REQUEST,
        "text/plain",
        format!("Virtuoso 37000 Error SP030: SPARQL compiler: {message}\n\nSPARQL query:\n"),
    )
}

/// The endpoint's answer to `query`.
fn answer(query: &str) -> Response<Body> {
    let (store, _) = cellar();
    let prepared = match SparqlEvaluator::new().parse_query(query) {
        Ok(p) => p,
        Err(e) => return refused(&e.to_string()),
    };
    let results = match prepared.on_store(store).execute() {
        Ok(r) => r,
        Err(e) => return refused(&e.to_string()),
    };
    let QueryResults::Solutions(solutions) = results else {
        return refused("only SELECT queries are answered by this fake");
    };
    let vars: Vec<String> = solutions.variables().iter().map(|v| v.as_str().to_owned()).collect();
    let mut bindings = Vec::new();
    for solution in solutions {
        let solution = match solution {
            Ok(s) => s,
            Err(e) => return refused(&e.to_string()),
        };
        let mut row = Map::new();
        for (v, t) in solution.iter() {
            row.insert(v.as_str().to_owned(), term(t));
        }
        bindings.push(Value::Object(row));
    }
    let body = json!({
        "head": {"link": [], "vars": vars},
        "results": {"distinct": false, "ordered": true, "bindings": bindings},
    });
    text(StatusCode::OK, "application/sparql-results+json", body.to_string())
}

async fn item(Path(id): Path<String>) -> Response<Body> {
    let (_, items) = cellar();
    match items.get(&id) {
        Some((content_type, bytes)) => text(StatusCode::OK, content_type, *bytes),
        None => text(
            StatusCode::NOT_FOUND,
            "text/html",
            "<html><body>Not Found</body></html>",
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_answers_real_sparql_over_the_real_files_values() {
        real::load("eurlex").expect("the corpus");
        let (store, _) = cellar();
        let q = format!(
            "PREFIX cdm: <{CDM}> PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT ?title WHERE {{ ?w \
             cdm:resource_legal_id_celex \"32024R0903\"^^xsd:string . ?e cdm:expression_belongs_to_work ?w ; \
             cdm:expression_title ?title . FILTER(CONTAINS(LCASE(STR(?title)), \"interoperable europe act\")) }}"
        );
        let QueryResults::Solutions(s) = SparqlEvaluator::new()
            .parse_query(&q)
            .unwrap()
            .on_store(store)
            .execute()
            .unwrap()
        else {
            panic!("solutions")
        };
        assert_eq!(s.count(), 1, "the English title read from the real manifest");
        let refused = answer("SELECT ?t WHERE { ?t bif:contains '\"x\"' }");
        assert_eq!(refused.status(), StatusCode::BAD_REQUEST);
    }
}
