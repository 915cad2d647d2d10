//! The local regulations connector end to end, against its fake on loopback: a search by
//! a municipality's name is resolved before the platform is asked (the fake receives the
//! platform's creator and kind), an ambiguous or unknown name is a tool error with no
//! request, a regulation reads as in force on two dates with what its record says of the
//! decision, its text pages by characters, and an SRU diagnostic is a tool error quoting
//! the service.
//!
//! Expected answers come from the fake's own regulations (`besluitbron_fakes::cvdr`).

use crate::support;

use besluitbron_fakes::ZoekserviceSettings;
use besluitbron_fakes::cvdr::{REGULATIONS, UTRECHT_PARKING, matches, parse_cql};
use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, temp_dir};

fn ok(r: &Reply) -> (String, Value) {
    let m = r
        .message
        .as_ref()
        .unwrap_or_else(|| panic!("no answer: {} {}", r.status, r.text));
    let res = &m["result"];
    assert_ne!(res["isError"], json!(true), "a tool error: {res}");
    (
        res["content"][0]["text"].as_str().unwrap_or("").to_owned(),
        res["structuredContent"].clone(),
    )
}

fn err(r: &Reply) -> String {
    let m = r
        .message
        .as_ref()
        .unwrap_or_else(|| panic!("no answer: {} {}", r.status, r.text));
    assert_eq!(m["result"]["isError"], json!(true), "expected a tool error: {m}");
    m["result"]["content"][0]["text"].as_str().unwrap_or("").to_owned()
}

/// The page of text of a `cvdr_read` answer: what follows the summary's blank line.
fn page(text: &str) -> &str {
    text.split_once("\n\n").map_or("", |(_, p)| p)
}

fn ids(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap().to_owned())
        .collect()
}

/// The fake's answer to `cql`, as versioned ids.
fn want(cql: &str) -> Vec<String> {
    matches(&parse_cql(cql).unwrap()).iter().map(|(r, v)| r.id(v)).collect()
}

/// The query of the last search the fake received, decoded.
fn last_query(fake: &besluitbron_fakes::FakeHandle) -> String {
    let path = fake
        .recent_paths()
        .into_iter()
        .rev()
        .find(|p| p.contains("/sru/Search"))
        .expect("a search reached the fake");
    let url = reqwest::Url::parse(&format!("http://x{path}")).unwrap();
    url.query_pairs()
        .find(|(k, _)| k == "query")
        .map(|(_, v)| v.into_owned())
        .expect("a query parameter")
}

async fn start(name: &str) -> (support::Fakes, Server, Mcp) {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir(name))).await;
    let mcp = Mcp::initialize(server.url("/mcp/cvdr")).await;
    (f, server, mcp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_by_municipality_name_asks_the_platform_for_its_code() {
    let (f, server, mut mcp) = start("cvdr-by-name").await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::cvdr::PLATFORM)
        .expect("the cvdr fake")
        .clone();
    let (text, v) = ok(&mcp
        .call(
            "cvdr_search",
            json!({"query": "parkeren", "organization": "Gemeente Utrecht", "date": "2024-06-01"}),
        )
        .await);
    let cql = last_query(&fake);
    assert_eq!(
        cql,
        "keyword all \"parkeren\" and dcterms.creator=\"Utrecht\" and organisatieType=\"Gemeente\" and \
         overheidrg.datumGeldendOp=2024-06-01",
        "the name was resolved to the platform's creator and kind"
    );
    assert_eq!(ids(&v), want(&cql), "{text}");
    assert_eq!(
        ids(&v),
        ["CVDR700001_1"],
        "not the province's, not Utrechtse Heuvelrug's"
    );
    let hit = &v["results"][0];
    assert_eq!(
        (
            hit["organization"].clone(),
            hit["kind"].clone(),
            hit["date"].clone(),
            hit["platform"].clone(),
            hit["tool"].clone(),
            hit["url"].clone()
        ),
        (
            json!("Gemeente Utrecht"),
            json!("verordening"),
            json!("2023-01-01"),
            json!("cvdr"),
            json!("cvdr_read"),
            json!("https://lokaleregelgeving.overheid.nl/CVDR700001/1")
        )
    );
    assert_eq!(
        (v["total"].clone(), v["total_is_exact"].clone()),
        (json!(1), json!(true))
    );

    // Den Haag is written as the platform writes it; a water board by its name.
    ok(&mcp
        .call("cvdr_search", json!({"organization": "Den Haag", "date": "2025-06-01"}))
        .await);
    assert!(last_query(&fake).starts_with("dcterms.creator=\"'s-Gravenhage\" and organisatieType=\"Gemeente\""));
    let (_, water) = ok(&mcp
        .call(
            "cvdr_search",
            json!({"query": "parkeren", "organization": "Rivierenland"}),
        )
        .await);
    assert_eq!(ids(&water), ["CVDR700005_1"]);

    // Utrecht is a municipality and a province: the caller chooses, nothing is asked.
    let asked = fake.requests();
    let ambiguous = err(&mcp.call("cvdr_search", json!({"organization": "Utrecht"})).await);
    assert!(
        ambiguous.contains("`gemeente-utrecht` (Gemeente Utrecht)")
            && ambiguous.contains("`provincie-utrecht` (Provincie Utrecht)"),
        "{ambiguous}"
    );
    let unknown = err(&mcp.call("cvdr_search", json!({"organization": "Amersfort"})).await);
    assert!(unknown.contains("`gemeente-amersfoort`"), "{unknown}");
    assert_eq!(fake.requests(), asked, "no request for an ambiguous or unknown name");
    // The province by its key.
    let (_, province) = ok(&mcp
        .call(
            "cvdr_search",
            json!({"query": "parkeren", "organization": "provincie-utrecht", "date": "2025-01-01"}),
        )
        .await);
    assert_eq!(ids(&province), ["CVDR700002_1"]);
    assert_eq!(province["results"][0]["organization"], json!("Provincie Utrecht"));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regulation_reads_as_in_force_with_its_decision_and_pages_by_characters() {
    let (f, server, mut mcp) = start("cvdr-read").await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::cvdr::PLATFORM)
        .expect("the cvdr fake")
        .clone();
    let law = REGULATIONS.iter().find(|r| r.work == UTRECHT_PARKING).unwrap();
    let before = fake.requests();
    let (old_text, old) = ok(&mcp
        .call("cvdr_read", json!({"id": UTRECHT_PARKING, "date": "2024-06-01"}))
        .await);
    assert_eq!(fake.requests(), before + 2, "the version's record, then its text");
    let (new_text, new) = ok(&mcp
        .call("cvdr_read", json!({"id": "cvdr700001", "date": "2025-06-01"}))
        .await);
    assert_eq!(
        (old["id"].clone(), new["id"].clone()),
        (json!("CVDR700001_1"), json!("CVDR700001_2"))
    );
    for (text, v) in [(&old_text, &law.versions[0]), (&new_text, &law.versions[1])] {
        let article2 = v.articles.iter().find(|a| a.number == "2").unwrap();
        let want: Vec<String> = article2
            .paragraphs
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{}. {p}", i + 1))
            .collect();
        assert!(
            page(text).contains(&format!("Artikel 2 Parkeervergunning\n{}", want.join("\n"))),
            "{text}"
        );
    }
    assert!(page(&old_text).contains("twee vergunningen") && page(&new_text).contains("één vergunning"));
    assert_eq!(
        (
            old["title"].clone(),
            old["organization"].clone(),
            old["date"].clone(),
            old["valid_until"].clone(),
            old["url"].clone(),
            old["platform"].clone()
        ),
        (
            json!("Parkeerverordening Utrecht"),
            json!("Gemeente Utrecht"),
            json!("2023-01-01"),
            json!("2024-12-31"),
            json!("https://lokaleregelgeving.overheid.nl/CVDR700001/1"),
            json!("cvdr")
        )
    );
    assert_eq!(
        new["decision"],
        json!({
            "date": "2024-11-14",
            "published_in": "Gemeenteblad 2024, 512345",
            "reference": "RIS 2024-1107",
            "concerns": "wijziging artikel 2",
            "legal_basis": ["Gemeentewet, artikel 225"],
        })
    );
    assert_eq!(new["valid_until"], json!(null));

    // A versioned id reads that version whatever the day, and its text is kept.
    let asked = fake.requests();
    let (_, again) = ok(&mcp.call("cvdr_read", json!({"id": "CVDR700001_1"})).await);
    assert_eq!(again["id"], json!("CVDR700001_1"));
    assert_eq!(fake.requests(), asked + 1, "only the record: the text was kept");

    // The whole text, 60 characters at a time, reads back whole.
    let mut whole = String::new();
    let mut offset = 0;
    loop {
        let (text, v) = ok(&mcp
            .call(
                "cvdr_read",
                json!({"id": "CVDR700001_2", "offset": offset, "length": 60}),
            )
            .await);
        whole.push_str(page(&text));
        match v["next_offset"].as_u64() {
            Some(next) => offset = next as usize,
            None => break,
        }
    }
    assert_eq!(whole, page(&new_text));
    // Before the regulation: not found, said as such.
    let none = err(&mcp
        .call("cvdr_read", json!({"id": UTRECHT_PARKING, "date": "2020-01-01"}))
        .await);
    assert!(none.contains("CVDR700001 in force on 2020-01-01"), "{none}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sru_diagnostic_is_a_tool_error_quoting_the_service() {
    let (f, server, mut mcp) = start("cvdr-diagnostic").await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::cvdr::PLATFORM)
        .expect("the cvdr fake")
        .clone();
    fake.update_own::<ZoekserviceSettings>(|s| s.reject_every = Some(1));
    let message = err(&mcp.call("cvdr_search", json!({"query": "afvalstoffen"})).await);
    assert!(
        message.contains("Lokale regelgeving (CVDR) refused the request"),
        "{message}"
    );
    assert!(message.contains("Query syntax error"), "{message}");
    assert!(message.contains("info:srw/diagnostic/1/10"), "{message}");
    // Nothing failed was kept: once the service answers, so does the tool.
    fake.update_own::<ZoekserviceSettings>(|s| s.reject_every = None);
    let (_, v) = ok(&mcp.call("cvdr_search", json!({"query": "afvalstoffen"})).await);
    assert_eq!(ids(&v), ["CVDR700004_1"]);
    // Capitals that the service would read as operators are written in lower case.
    let (_, v) = ok(&mcp
        .call(
            "cvdr_search",
            json!({"query": "parkeren OR fietsen", "date": "2025-01-01"}),
        )
        .await);
    assert_eq!(v["total"], json!(0));
    assert!(last_query(&fake).starts_with("keyword all \"parkeren or fietsen\""));
    server.stop().await;
}
