//! The Officiële Bekendmakingen connector end to end, against its fake on loopback: what
//! the tools answer is what the fake's corpus says, each class of SRU answer is read
//! for what it is (rejected, warning, overload, an empty page before the end), the
//! 10,000-hit wall is ours to refuse, paging reaches the last page, and text comes from
//! the XML rendition (an empty template said as such; a PDF-only item read from its PDF).
//!
//! Expected answers are computed from the fake's own corpus and its CQL parser
//! (`besluitbron_fakes::ob`), so a test compares against the data, not a copy of it.

use crate::support;

use std::time::Duration;

use besluitbron_fakes::ob::{ObPublication, ObSettings, Renditions, ob_corpus, parse_cql};
use besluitbron_server::platforms::HttpConfig;
use besluitbron_server::platforms::http::{PlatformError, Retry};
use besluitbron_server::platforms::ob::{Chamber, ObClient, ObSearch, Publication, Term, cql};
use quickcheck::{QuickCheck, TestResult};
use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, temp_dir};

fn result(r: &Reply) -> &Value {
    let m = r
        .message
        .as_ref()
        .unwrap_or_else(|| panic!("no JSON-RPC answer: {} {}", r.status, r.text));
    assert!(m.get("error").is_none(), "a JSON-RPC error: {m}");
    &m["result"]
}

fn ok(r: &Reply) -> (String, Value) {
    let res = result(r);
    assert_ne!(res["isError"], json!(true), "a tool error: {res}");
    (
        res["content"][0]["text"].as_str().unwrap_or("").to_owned(),
        res["structuredContent"].clone(),
    )
}

/// The page of text of an `ob_document` answer: the last `text_length` characters of
/// its text content.
fn page_text(text: &str, v: &Value) -> String {
    let length = v["text_length"].as_u64().expect("text_length") as usize;
    let total = text.chars().count();
    text.chars().skip(total - length).collect()
}

fn err(r: &Reply) -> String {
    let res = result(r);
    assert_eq!(res["isError"], json!(true), "expected a tool error: {res}");
    res["content"][0]["text"].as_str().unwrap_or("").to_owned()
}

/// The fake's hits for the query `search` builds, in the fake's order.
fn expected(search: &ObSearch) -> Vec<&'static ObPublication> {
    let query = parse_cql(&search.cql().expect("cql")).expect("the fake accepts the built CQL");
    let mut hits: Vec<&ObPublication> = ob_corpus().publications.iter().filter(|p| query.matches(p)).collect();
    if !query.sort.is_empty() {
        // sortBy dt.available/sort.descending, stable.
        hits.sort_by(|a, b| b.available.cmp(&a.available));
    }
    hits
}

fn ids(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| h["id"].as_str().unwrap_or("").to_owned())
        .collect()
}

async fn start(name: &str) -> (support::Fakes, Server) {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir(name))).await;
    (f, server)
}

fn ob_fake(f: &support::Fakes) -> &besluitbron_fakes::FakeHandle {
    f.all
        .get(besluitbron_server::platforms::ob::PLATFORM)
        .expect("the ob fake")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_word_search_is_and_joined_and_answers_the_fakes_data() {
    let (f, server) = start("ob-words").await;
    let mut mcp = Mcp::initialize(server.url("/mcp/ob")).await;
    let (text, v) = ok(&mcp
        .call("ob_search", json!({"query": "subsidie sluitingsdatum", "limit": 100}))
        .await);
    let search = ObSearch {
        terms: cql::terms("subsidie sluitingsdatum"),
        ..ObSearch::default()
    };
    let want = expected(&search);
    assert!(!want.is_empty(), "the corpus has hits for both words");
    assert_eq!(v["total"], json!(want.len()), "{text}");
    assert_eq!(ids(&v), want.iter().map(|p| p.identifier.clone()).collect::<Vec<_>>());
    // A phrase stays a phrase: in this order only.
    let (_, phrase) = ok(&mcp
        .call("ob_search", json!({"query": "\"sluitingsdatum subsidie\""}))
        .await);
    assert_eq!(phrase["total"], json!(0));
    // Filters narrow as the fake's data says.
    let (text, v) = ok(&mcp
        .call(
            "ob_search",
            json!({"query": "omgevingsvisie", "publication": "Gemeenteblad", "organization_type": "gemeente", "limit": 100}),
        )
        .await);
    let want = expected(&ObSearch {
        terms: vec![Term::Word("omgevingsvisie".into())],
        publication: Some(Publication::Gemeenteblad),
        organization_type: Some("gemeente".into()),
        ..ObSearch::default()
    });
    assert_eq!(
        ids(&v),
        want.iter().map(|p| p.identifier.clone()).collect::<Vec<_>>(),
        "{text}"
    );
    assert!(want.iter().all(|p| p.publication == "Gemeenteblad"));
    drop(f);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_query_full_of_cql_metacharacters_is_a_search_not_a_syntax_error() {
    let (f, server) = start("ob-meta").await;
    let fake = ob_fake(&f);
    let mut mcp = Mcp::initialize(server.url("/mcp/ob")).await;
    for query in [
        r#"{stikstof} zonne+energie "parkeren" OR dt.title="x" AND NOT (a) sortBy x/y * ? \ ^"#,
        "subsidie) OR (cql.textAndIndexes=\"*\"",
        "'s-Gravenhage \u{0}\u{7}",
    ] {
        let before = fake.requests();
        let (text, _) = ok(&mcp.call("ob_search", json!({"query": query})).await);
        assert_eq!(fake.requests(), before + 1, "{query}: one request");
        assert!(text.contains("publications"), "{text}");
    }
    // Filter values with spaces, parentheses and quotes stay values.
    let (_, v) = ok(&mcp
        .call(
            "ob_search",
            json!({"organization": "Utrecht) OR (dt.type=\"Wet", "document_type": "Wet\" OR \"x"}),
        )
        .await);
    assert_eq!(v["total"], json!(0), "no clause was injected");
    drop(f);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_class_of_sru_answer_is_read_for_what_it_is() {
    let f = fakes().await;
    let fake = ob_fake(&f);
    let client = ObClient::new(fake.base_url(), &HttpConfig::default()).unwrap();
    // Rejected: a diagnostic and no count is an error quoting the platform, never 0 hits.
    let rejected = client.search_cql("stikstof natuur", 0, 10).await.unwrap_err();
    match &rejected {
        PlatformError::BadRequest { code, message, .. } => {
            assert_eq!(code, "query_rejected");
            assert!(
                message.contains("Query syntax error") && message.contains("info:srw/diagnostic/1/10"),
                "{message}"
            );
        }
        other => panic!("{other:?}"),
    }
    // A warning: the clause with the impossible date was dropped; results with a warning.
    let warned = client
        .search(
            &ObSearch {
                terms: vec![Term::Word("parkeren".into())],
                date_to: Some("2026-02-29".into()),
                ..ObSearch::default()
            },
            0,
            100,
        )
        .await
        .unwrap();
    let unfiltered = expected(&ObSearch {
        terms: vec![Term::Word("parkeren".into())],
        ..ObSearch::default()
    });
    assert_eq!(
        warned.total,
        unfiltered.len() as u64,
        "computed without the dropped clause"
    );
    assert_eq!(warned.warnings.len(), 1);
    assert!(warned.warnings[0].contains("SEARCH-IGNOREDQTEXT") && warned.warnings[0].contains("2026-02-29"));
    // Overload: 200 with a system diagnostic and no count.
    fake.update_own::<ObSettings>(|s| s.overload_every = Some(1));
    let busy = client.search_cql(cql::COLLECTION, 0, 10).await.unwrap_err();
    assert!(
        matches!(
            busy,
            PlatformError::Overloaded {
                retry: Retry::Wait { .. },
                ..
            }
        ),
        "an overload said in the service's own words is waited out as a 429: {busy:?}"
    );
    fake.update_own::<ObSettings>(|s| s.overload_every = None);
    // An empty page before the end is never the end.
    fake.update_own::<ObSettings>(|s| s.empty_page_every = Some(1));
    let empty = client.search_cql(cql::COLLECTION, 0, 10).await.unwrap_err();
    assert!(
        matches!(&empty, PlatformError::Overloaded { signal, .. } if signal.contains("came back empty")),
        "{empty:?}"
    );
    fake.update_own::<ObSettings>(|s| s.empty_page_every = None);
    // A brace is the platform's 500, so the builder never sends one.
    let braces = client.search_cql("{x}", 0, 10).await.unwrap_err();
    assert!(
        matches!(braces, PlatformError::Upstream { status: 500, .. }),
        "{braces:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overload_is_backed_off_asked_once_more_and_never_zero_results() {
    let (f, server) = start("ob-overload").await;
    let fake = ob_fake(&f);
    let mut mcp = Mcp::initialize(server.url("/mcp/ob")).await;
    fake.update_own::<ObSettings>(|s| s.overload_every = Some(1));
    let before = fake.requests();
    let started = std::time::Instant::now();
    let text = err(&mcp.call("ob_search", json!({"query": "stikstof"})).await);
    assert!(text.contains("Officiële Bekendmakingen is overloaded"), "{text}");
    assert!(
        text.contains("not an empty result") && text.contains("ask again in about 3 s"),
        "{text}"
    );
    assert!(
        !text.contains("0 publications") && !text.contains("No publications"),
        "{text}"
    );
    assert_eq!(fake.requests(), before + 2, "asked once more after backing off");
    assert!(
        started.elapsed() >= Duration::from_secs(3),
        "the second request waited out the back-off"
    );
    // Nothing failed was kept: once the service answers, so does the tool.
    fake.update_own::<ObSettings>(|s| s.overload_every = None);
    let (text, v) = ok(&mcp.call("ob_search", json!({"query": "stikstof"})).await);
    assert!(v["total"].as_u64().unwrap() > 0, "{text}");
    assert!(!text.contains("buffer"), "asked the platform again: {text}");
    // An empty page before the end is an overload too, not the end of the results.
    fake.update_own::<ObSettings>(|s| s.empty_page_every = Some(1));
    let text = err(&mcp.call("ob_search", json!({"query": "parkeren"})).await);
    assert!(text.contains("came back empty"), "{text}");
    drop(f);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ten_thousand_hit_wall_is_refused_before_the_platform_answers_504() {
    let (f, server) = start("ob-deep").await;
    let fake = ob_fake(&f);
    let mut mcp = Mcp::initialize(server.url("/mcp/ob")).await;
    let before = fake.requests();
    let text = err(&mcp.call("ob_search", json!({"offset": 9_999})).await);
    assert!(
        text.contains("only the first 9999 hits") && text.contains("narrow the search"),
        "{text}"
    );
    assert_eq!(fake.requests(), before, "nothing was sent");
    assert!(
        ok(&mcp.call("ob_search", json!({"offset": 9_998, "limit": 1})).await)
            .0
            .contains("offset 9998")
    );
    // What the platform itself does with startRecord 10000.
    let url = format!(
        "{}?operation=searchRetrieve&version=2.0&recordSchema=gzd&startRecord=10000&query=x",
        fake.base_url()
    );
    assert_eq!(reqwest::get(&url).await.unwrap().status(), 504);
    drop(f);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_reaches_the_last_page_and_stops_there() {
    let (f, server) = start("ob-paging").await;
    let mut mcp = Mcp::initialize(server.url("/mcp/ob")).await;
    let want: Vec<String> = expected(&ObSearch {
        terms: vec![Term::Word("omgevingsvisie".into())],
        ..ObSearch::default()
    })
    .iter()
    .map(|p| p.identifier.clone())
    .collect();
    assert!(want.len() > 14, "several pages of 7");
    let mut got = Vec::new();
    let mut offset = 0u64;
    for _ in 0..50 {
        let (text, v) = ok(&mcp
            .call(
                "ob_search",
                json!({"query": "omgevingsvisie", "limit": 7, "offset": offset}),
            )
            .await);
        got.extend(ids(&v));
        match v["next_offset"].as_u64() {
            Some(next) => {
                assert!(text.contains(&format!("ask again with `offset` {next}")), "{text}");
                offset = next;
            }
            None => {
                assert!(!text.contains("ask again with `offset`"), "{text}");
                break;
            }
        }
    }
    assert_eq!(got, want, "every hit once, in order, to the last page");
    drop(f);
    server.stop().await;
}

fn first(kind: Renditions) -> &'static ObPublication {
    ob_corpus()
        .publications
        .iter()
        .find(|p| p.renditions == kind)
        .expect("the corpus has one")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_comes_from_the_xml_rendition_and_is_paged() {
    let (f, server) = start("ob-text").await;
    let fake = ob_fake(&f);
    let mut mcp = Mcp::initialize(server.url("/mcp/ob")).await;
    let p = first(Renditions::Full);
    let before = fake.requests();
    let (text, v) = ok(&mcp.call("ob_document", json!({"id": p.identifier})).await);
    assert_eq!(fake.requests(), before + 2, "the record, then its XML");
    let want = p.expected_text().unwrap();
    assert!(
        v.get("text").is_none(),
        "the text is not repeated in the structured content"
    );
    // The first publication is long: the default answer is its first page, within budget.
    assert!(want.chars().count() > 30_000);
    assert_eq!(v["text_length"], 10_000);
    assert_eq!(v["next_offset"], 10_000);
    let first_size = serde_json::to_vec(result(&mcp.call("ob_document", json!({"id": p.identifier})).await))
        .unwrap()
        .len();
    assert!(
        first_size <= besluitbron_server::connectors::schema::ANSWER_BUDGET_BYTES,
        "{first_size}"
    );
    let mut whole = page_text(&text, &v);
    let mut next = v["next_offset"].as_u64();
    while let Some(offset) = next {
        let (text, v) = ok(&mcp
            .call(
                "ob_document",
                json!({"id": p.identifier, "offset": offset, "length": 100000}),
            )
            .await);
        whole.push_str(&page_text(&text, &v));
        next = v["next_offset"].as_u64();
    }
    assert_eq!(whole, want, "the pages add up to the text");
    assert_eq!(fake.requests(), before + 2, "paging reads the buffer");
    assert_eq!(v["id"], json!(p.identifier));
    assert_eq!(v["journal"], json!(p.publication));
    assert!(!text.contains("DC.identifier"), "the metadata block is dropped");
    // A page of it, from the buffer.
    let (text, v) = ok(&mcp
        .call("ob_document", json!({"id": p.identifier, "offset": 5, "length": 10}))
        .await);
    assert_eq!(fake.requests(), before + 2, "paging reads the buffer");
    assert_eq!(page_text(&text, &v), want.chars().skip(5).take(10).collect::<String>());
    assert_eq!(v["has_more"], json!(true));
    assert!(text.contains("buffer"), "{text}");
    // An identifier the platform does not have.
    let text = err(&mcp.call("ob_document", json!({"id": "gmb-1999-1"})).await);
    assert!(
        text.contains("Officiële Bekendmakingen has no publication `gmb-1999-1`"),
        "{text}"
    );
    // Hostile identifiers never reach the platform.
    let before = fake.requests();
    for id in ["..", ".", "gmb-2026-1\" OR \"x", &"a-".repeat(100)] {
        let text = err(&mcp.call("ob_document", json!({"id": id})).await);
        // An over-long one is refused by the schema's maxLength first, the others by
        // the identifier check.
        assert!(
            (text.contains("must be a publication identifier") || text.contains("at most 80 are accepted"))
                && text.len() < 300,
            "{text}"
        );
    }
    assert_eq!(fake.requests(), before);
    drop(f);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_template_and_a_pdf_only_item_say_where_the_text_is() {
    let (f, server) = start("ob-notext").await;
    let fake = ob_fake(&f);
    let mut mcp = Mcp::initialize(server.url("/mcp/ob")).await;
    let empty = first(Renditions::EmptyTemplate);
    let (text, v) = ok(&mcp.call("ob_document", json!({"id": empty.identifier})).await);
    assert!(text.contains("No text rendition"), "{text}");
    assert!(text.contains(&empty.rendition_path("pdf")), "the PDF link: {text}");
    assert_eq!(
        (v["has_text"].clone(), v["text_length"].clone()),
        (json!(false), json!(0))
    );
    assert!(v["note"].as_str().is_some_and(|n| n.contains("empty template")), "{v}");
    // A PDF-only publication: its PDF is read through the document-text extractor.
    let pdf = first(Renditions::PdfOnly);
    let before = fake.requests();
    let (text, v) = ok(&mcp.call("ob_document", json!({"id": pdf.identifier})).await);
    assert_eq!(
        fake.requests(),
        before + 2,
        "the record, then its PDF: there is no XML to read"
    );
    assert!(
        text.contains("read from the PDF") && text.contains(&pdf.rendition_path("pdf")),
        "{text}"
    );
    assert!(
        text.contains("Brief van de minister over klimaatbeleid"),
        "the PDF's own text: {text}"
    );
    assert!(text.contains("geëvalueerd"), "Dutch characters survive: {text}");
    assert_eq!(v["renditions"], json!(["pdf"]));
    assert_eq!(v["has_text"], json!(true), "{v}");
    assert!(
        v["note"].as_str().is_some_and(|n| n.contains("read from the PDF")),
        "{v}"
    );
    // Kept as a text is: a repeat asks nothing.
    let asked = fake.requests();
    let (again, _) = ok(&mcp.call("ob_document", json!({"id": pdf.identifier})).await);
    assert_eq!(fake.requests(), asked, "the repeat came from the buffer");
    assert!(again.contains("Brief van de minister"), "{again}");
    drop(f);
    server.stop().await;
}

fn chambers(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| h["chamber"].as_str().unwrap_or("none").to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_eerste_kamer_is_searched_by_chamber_and_each_hit_says_its_chamber() {
    let (f, server) = start("ob-chamber").await;
    let fake = ob_fake(&f);
    let mut mcp = Mcp::initialize(server.url("/mcp/ob")).await;
    let (text, v) = ok(&mcp
        .call("ob_search", json!({"chamber": "eerste-kamer", "limit": 100}))
        .await);
    let want = expected(&ObSearch {
        chamber: Some(Chamber::EersteKamer),
        ..ObSearch::default()
    });
    // Generated items and real records (h-ek, kv-ek, ah-ek of corpus/ob-chamber/).
    assert!(want.len() > 12, "{}", want.len());
    assert!(want.iter().any(|p| p.renditions == Renditions::RealRecord));
    assert_eq!(v["total"], json!(want.len()), "{text}");
    assert_eq!(ids(&v), want.iter().map(|p| p.identifier.clone()).collect::<Vec<_>>());
    assert!(chambers(&v).iter().all(|c| c == "eerste-kamer"), "{v}");
    assert!(text.contains("of the Eerste Kamer der Staten-Generaal"), "{text}");
    // With a journal: only the Eerste Kamer's Handelingen; the Tweede Kamer's apart.
    let (_, senate) = ok(&mcp
        .call(
            "ob_search",
            json!({"chamber": "eerste-kamer", "publication": "Handelingen", "limit": 100}),
        )
        .await);
    let senate_ids = ids(&senate);
    assert!(senate_ids.iter().any(|id| id == "h-ek-20202021-1-1"), "{senate}");
    assert!(senate_ids.iter().all(|id| id.starts_with("h-ek-")), "{senate}");
    let (_, house) = ok(&mcp
        .call(
            "ob_search",
            json!({"chamber": "tweede-kamer", "publication": "Handelingen", "limit": 100}),
        )
        .await);
    assert!(!ids(&house).is_empty());
    assert!(ids(&house).iter().all(|id| id.starts_with("h-tk-")), "{house}");
    assert!(chambers(&house).iter().all(|c| c == "tweede-kamer"), "{house}");
    // No joint session in the corpus: an empty answer says what was searched.
    let (text, joint) = ok(&mcp.call("ob_search", json!({"chamber": "verenigde-vergadering"})).await);
    assert_eq!(joint["total"], json!(0));
    assert!(text.contains("Verenigde Vergadering der Staten-Generaal"), "{text}");
    // A chamber with a journal that has none, or an unknown chamber: refused unasked.
    let before = fake.requests();
    let said = err(&mcp
        .call(
            "ob_search",
            json!({"chamber": "eerste-kamer", "publication": "Gemeenteblad"}),
        )
        .await);
    assert!(said.contains("drop `chamber`"), "{said}");
    let said = err(&mcp.call("ob_search", json!({"chamber": "senaat"})).await);
    assert!(said.contains("eerste-kamer"), "{said}");
    assert_eq!(fake.requests(), before);
    // A generated Eerste Kamer Handeling reads as any publication, its chamber said.
    let handeling = want
        .iter()
        .find(|p| p.identifier.starts_with("h-ek-") && p.renditions == Renditions::Full)
        .expect("a generated Handeling");
    let (text, doc) = ok(&mcp
        .call("ob_document", json!({"id": handeling.identifier, "length": 100000}))
        .await);
    assert_eq!(doc["chamber"], json!("eerste-kamer"));
    assert_eq!(page_text(&text, &doc), handeling.expected_text().unwrap());
    // A real record without text in the corpus: its metadata, and no text said so.
    let (text, doc) = ok(&mcp.call("ob_document", json!({"id": "h-ek-20202021-1-1"})).await);
    assert_eq!(
        (doc["title"].clone(), doc["chamber"].clone(), doc["has_text"].clone()),
        (json!("Presentie en opening"), json!("eerste-kamer"), json!(false)),
        "{doc}"
    );
    assert!(text.contains("lists no XML rendition and no PDF"), "{text}");
    assert!(
        text.contains("https://zoek.officielebekendmakingen.nl/h-ek-20202021-1-1.html"),
        "{text}"
    );
    drop(f);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_at_mcp_passes_the_chamber_to_ob() {
    let (f, server) = start("ob-chamber-search").await;
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let r = all
        .call(
            "search",
            json!({"query": "stikstof", "chamber": "eerste-kamer", "platforms": ["ob", "obv"], "limit": 20}),
        )
        .await;
    let groups = support::search_groups(&r);
    assert!(groups["ob"].get("ignored").is_none(), "{}", groups["ob"]);
    assert_eq!(groups["obv"]["ignored"], json!(["chamber"]), "{}", groups["obv"]);
    let all_found = support::structured(&r);
    let found: Vec<&Value> = all_found["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter(|x| x["platform"] == json!("ob"))
        .collect();
    let want = expected(&ObSearch {
        terms: vec![Term::Word("stikstof".into())],
        chamber: Some(Chamber::EersteKamer),
        ..ObSearch::default()
    });
    assert!(!want.is_empty());
    assert_eq!(
        found.iter().map(|x| x["id"].as_str().unwrap_or("")).collect::<Vec<_>>(),
        want.iter()
            .map(|p| p.identifier.as_str())
            .take(found.len())
            .collect::<Vec<_>>()
    );
    assert!(!found.is_empty());
    drop(f);
    server.stop().await;
}

/// KOOP's own SRU answer of parliamentary items (`corpus/ob-chamber/`) read by the
/// client's reader: every record, its creator and the chamber each hit says.
#[test]
fn the_real_parliamentary_records_say_their_chamber() {
    use besluitbron_server::connectors::ob::render::Hit;
    use besluitbron_server::platforms::koop::{SruVersion, parse_sru};
    use besluitbron_server::platforms::ob::ObRecord;
    let bytes = besluitbron_fakes::corpus::read("ob-chamber/plooi-oep-test_sru.xml").expect("the corpus file");
    let page = parse_sru::<ObRecord>(SruVersion::V2_0, &bytes).expect("a real answer reads");
    assert_eq!(
        (page.number_of_records, page.next_record_position, page.records.len()),
        (Some(76), Some(11), 10)
    );
    assert!(page.diagnostics.is_empty());
    for r in &page.records {
        let hit = Hit::from(r);
        let want = if r.identifier.starts_with("h-ek-") {
            "eerste-kamer"
        } else {
            "tweede-kamer"
        };
        assert_eq!(hit.chamber.as_deref(), Some(want), "{}", r.identifier);
        assert_eq!(
            r.organization_type.as_deref(),
            Some("staten generaal"),
            "{}",
            r.identifier
        );
    }
    let opening = besluitbron_fakes::corpus::read("ob-chamber/plooi-oep-test_sru_record_kst.xml").unwrap();
    let page = parse_sru::<ObRecord>(SruVersion::V2_0, &opening).unwrap();
    let kst = &page.records[0];
    assert_eq!(
        (
            kst.identifier.as_str(),
            kst.dossier.as_deref(),
            kst.subnumber.as_deref()
        ),
        ("kst-35842-4", Some("35842"), Some("4"))
    );
    assert_eq!(Hit::from(kst).chamber.as_deref(), Some("tweede-kamer"));
}

/// Whatever text goes into the builder, the fake's strict parser accepts what comes
/// out, and the query has exactly the clauses the arguments ask for: no argument text
/// adds, removes or changes a clause.
#[test]
fn qc_the_built_cql_always_parses_and_holds_only_the_clauses_asked_for() {
    fn clauses(node: &besluitbron_fakes::ob::Node, out: &mut Vec<(String, String)>) -> bool {
        use besluitbron_fakes::ob::Node;
        match node {
            Node::And(a, b) => clauses(a, out) && clauses(b, out),
            Node::Clause { index, term, .. } => {
                out.push((index.clone(), term.clone()));
                true
            }
            _ => false,
        }
    }
    fn prop(query: String, organization: String, document_type: String, dossier: String) -> TestResult {
        let search = ObSearch {
            terms: cql::terms(&query),
            organization: Some(organization.clone()),
            document_type: Some(document_type.clone()),
            dossier: Some(dossier.clone()),
            publication: Some(Publication::KamervragenAanhangsel),
            chamber: Some(Chamber::EersteKamer),
            ..ObSearch::default()
        };
        let built = search.cql().expect("no dates: always built");
        let parsed = match parse_cql(&built) {
            Ok(p) => p,
            Err(e) => return TestResult::error(format!("{built}: {e:?}")),
        };
        let mut got = Vec::new();
        if !clauses(&parsed.root, &mut got) {
            return TestResult::error(format!("{built}: not a plain AND of clauses"));
        }
        let mut want = vec![("c.product-area".to_owned(), "officielepublicaties".to_owned())];
        for t in &search.terms {
            if let Some(q) = cql::quote(t.text()) {
                want.push(("cql.textandindexes".to_owned(), q.trim_matches('"').to_owned()));
            }
        }
        want.push(("w.publicatienaam".to_owned(), "Kamervragen (Aanhangsel)".to_owned()));
        want.push(("dt.creator".to_owned(), "Eerste Kamer der Staten-Generaal".to_owned()));
        for (index, value) in [
            ("dt.creator", &organization),
            ("dt.type", &document_type),
            ("w.dossiernummer", &dossier),
        ] {
            if let Some(q) = cql::quote(value) {
                want.push((index.to_owned(), q.trim_matches('"').to_owned()));
            }
        }
        if got != want {
            return TestResult::error(format!("{built}: {got:?} != {want:?}"));
        }
        TestResult::from_bool(parsed.sort == [("dt.available".to_owned(), true)])
    }
    QuickCheck::new()
        .tests(2_000)
        .quickcheck(prop as fn(String, String, String, String) -> TestResult);
}

#[test]
fn regression_cql_metacharacters_from_the_quickcheck_alphabet() {
    // Inputs that mix every character the builder must neutralise.
    for text in [
        "\"", "\\\"", "a\\", "{", "}", "+", "a+b", "*", "?", "^", "(", ")", "=", "<>", "/", "AND", "sortBy", "\u{0}",
    ] {
        let search = ObSearch {
            terms: cql::terms(text),
            organization: Some(text.to_owned()),
            ..ObSearch::default()
        };
        let built = search.cql().unwrap();
        assert!(parse_cql(&built).is_ok(), "{text:?} -> {built}");
    }
}
