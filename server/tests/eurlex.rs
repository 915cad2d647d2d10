//! The EUR-Lex connector end to end, against fake CELLAR on loopback (a real SPARQL engine
//! over the real files' metadata, and the real XHTML and Formex items;
//! `besluitbron_fakes::eurlex`): acts found by words of their title, read whole, paged and
//! by article in Dutch and English, from XHTML and from Formex; `fetch` and `search` at
//! `/mcp`; a failing, garbled or slow platform named in the error, never "none found".

use std::time::Duration;

use crate::support;

use besluitbron_server::platforms::eurlex::PLATFORM;
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

fn ids(structured: &Value) -> Vec<String> {
    structured["results"]
        .as_array()
        .map(|r| r.iter().filter_map(|i| i["id"].as_str().map(str::to_owned)).collect())
        .unwrap_or_default()
}

async fn start(name: &str, query_timeout_secs: Option<u64>) -> (support::Fakes, Server, Mcp) {
    let f = fakes().await;
    let mut c = config(&f, &temp_dir(name));
    if let Some(secs) = query_timeout_secs {
        c.platforms.get_mut("eurlex").expect("eurlex").query_timeout_secs = Some(secs);
    }
    let server = Server::start(c).await;
    let mcp = Mcp::initialize(server.url("/mcp/eurlex")).await;
    (f, server, mcp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acts_are_found_by_words_of_their_title_in_dutch_and_english() {
    let (_f, _server, mut mcp) = start("eurlex-search", None).await;
    let (text, s) = ok(&mcp
        .call("eurlex_search", json!({"query": "Interoperabiliteit publieke sector"}))
        .await);
    assert_eq!(ids(&s), ["32024R0903"], "{text}");
    assert_eq!(s["results"][0]["tool"], json!("eurlex_read"));
    assert!(text.contains("in force"), "{text}");
    let (_, s) = ok(&mcp
        .call(
            "eurlex_search",
            json!({"query": "interoperable europe act", "language": "en"}),
        )
        .await);
    assert_eq!(
        ids(&s),
        ["32024R0903"],
        "the English title, read from the real manifest"
    );
    let (_, s) = ok(&mcp
        .call("eurlex_search", json!({"query": "unierecht", "kind": "directive"}))
        .await);
    assert_eq!(ids(&s), ["32019L1937"]);
    let (_, s) = ok(&mcp
        .call("eurlex_search", json!({"query": "unierecht", "kind": "regulation"}))
        .await);
    assert!(ids(&s).is_empty());
    let (_, s) = ok(&mcp
        .call(
            "eurlex_search",
            json!({"kind": "regulation", "date_to": "2010-01-01", "language": "en"}),
        )
        .await);
    assert_eq!(
        ids(&s),
        ["32008R1137"],
        "by kind and date, from the real 2008 manifest's date"
    );
    let (text, s) = ok(&mcp.call("eurlex_search", json!({"query": "\"} DROP ALL { \\"})).await);
    assert!(ids(&s).is_empty() && text.contains("To widen"), "{text}");
    let e = err(&mcp.call("eurlex_search", json!({})).await);
    assert!(e.contains("give `query`"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_act_is_read_whole_paged_and_by_article_from_xhtml_and_formex() {
    let (f, _server, mut mcp) = start("eurlex-read", None).await;
    let fake = f.all.get(PLATFORM).expect("the eurlex fake").clone();
    let before = fake.requests();
    let (text, s) = ok(&mcp.call("eurlex_read", json!({"id": "32024R0903"})).await);
    assert_eq!(fake.requests(), before + 2, "the act, then its one XHTML item");
    assert_eq!(s["language"], json!("nl"));
    assert!(text.contains("Artikel 1 Onderwerp en toepassingsgebied"), "{text}");
    assert!(text.contains("Verordening Interoperabel Europa"), "{text}");
    assert!(text.contains("Legal basis: 32024R1689."), "{text}");
    let (text, s) = ok(&mcp
        .call(
            "eurlex_read",
            json!({"id": "32024R0903", "language": "en", "article": "1"}),
        )
        .await);
    assert_eq!(s["article"], json!("1"));
    assert!(
        text.contains("Article 1 Subject matter and scope\n1. This Regulation lays down measures"),
        "{text}"
    );
    assert_eq!(s["articles"], json!(23), "every article of the real XHTML");
    let (first, s) = ok(&mcp
        .call(
            "eurlex_read",
            json!({"id": "32024R0903", "language": "en", "length": 5000}),
        )
        .await);
    let next = s["next_offset"].as_u64().expect("more pages");
    let (second, _) = ok(&mcp
        .call(
            "eurlex_read",
            json!({"id": "32024R0903", "language": "en", "offset": next, "length": 5000}),
        )
        .await);
    assert_ne!(first, second);
    let (text, _) = ok(&mcp
        .call(
            "eurlex_read",
            json!({"id": "32024R0903", "language": "en", "article": "annex"}),
        )
        .await);
    assert!(text.contains("annexes,"), "{text}");
    // Formex (formex-04), items DOC_1 (manifest) and DOC_2 (act); DOC_3 and DOC_4 are
    // listed but not served, which the answer says.
    let (text, s) = ok(&mcp
        .call(
            "eurlex_read",
            json!({"id": "CELEX:32008R1137", "language": "en", "article": "3"}),
        )
        .await);
    assert!(
        text.contains("Article 3\nThis Regulation shall enter into force"),
        "{text}"
    );
    assert_eq!(s["articles"], json!(3));
    assert!(text.contains("Amended by: 32024R1689."), "{text}");
    let (whole, _) = ok(&mcp
        .call("eurlex_read", json!({"id": "32008R1137", "language": "en"}))
        .await);
    assert!(whole.contains("does not serve them (HTTP 404)"), "{whole}");
    let e = err(&mcp.call("eurlex_read", json!({"id": "32008R1137"})).await);
    assert!(
        e.contains("no XHTML or Formex text of 32008R1137 in `nl`; try `language` en"),
        "{e}"
    );
    let e = err(&mcp.call("eurlex_read", json!({"id": "32014R0001"})).await);
    assert!(e.contains("has no act with CELEX number 32014R0001"), "{e}");
    let e = err(&mcp
        .call("eurlex_read", json!({"id": "32024R1689", "language": "en"}))
        .await);
    assert!(
        e.contains("does not serve it"),
        "a listed item CELLAR does not serve: {e}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_reads_celex_numbers_elis_and_eur_lex_links_and_search_includes_eurlex() {
    let (_f, server, _) = start("eurlex-fetch", None).await;
    let mut mcp = Mcp::initialize(server.url("/mcp")).await;
    for id in [
        "32024R0903",
        "CELEX:32024R0903",
        "data.europa.eu/eli/reg/2024/903/oj",
        "https://eur-lex.europa.eu/legal-content/NL/TXT/?uri=CELEX:32024R0903",
    ] {
        let (text, _) = ok(&mcp.call("fetch", json!({"id": id})).await);
        assert!(text.contains("Interoperabel Europa"), "{id}: {text}");
    }
    let (text, s) = ok(&mcp
        .call(
            "search",
            json!({"query": "interoperabiliteit", "platforms": ["eurlex"]}),
        )
        .await);
    assert!(text.contains("32024R0903"), "{text}");
    assert!(s.to_string().contains("\"eurlex\""), "{s}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_or_garbled_platform_is_named_never_none_found() {
    let (f, _server, mut mcp) = start("eurlex-failing", None).await;
    let fake = f.all.get(PLATFORM).expect("the eurlex fake").clone();
    fake.update(|c| c.fail_every = Some(1));
    let e = err(&mcp.call("eurlex_search", json!({"query": "interoperabiliteit"})).await);
    assert!(e.contains("EUR-Lex (CELLAR)") && e.contains("500"), "{e}");
    assert!(!e.contains("has no act"), "{e}");
    fake.update(|c| {
        c.fail_every = None;
        c.garbage = true;
    });
    let e = err(&mcp.call("eurlex_search", json!({"query": "verordening"})).await);
    assert!(e.contains("EUR-Lex (CELLAR) answered something unreadable"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_sparql_answer_is_bounded_by_its_time_out_and_said_so() {
    let (f, _server, mut mcp) = start("eurlex-slow", Some(1)).await;
    let fake = f.all.get(PLATFORM).expect("the eurlex fake").clone();
    fake.set_latency(Duration::from_secs(3));
    let asked = std::time::Instant::now();
    let e = err(&mcp.call("eurlex_search", json!({"query": "europa"})).await);
    assert!(e.contains("did not answer within 1000 ms"), "{e}");
    assert!(
        asked.elapsed() < Duration::from_secs(3),
        "bounded by the 1 s time-out: {:?}",
        asked.elapsed()
    );
}

/// A directive's Dutch transposition (fake CELLAR's measures are built from the documented
/// NIM shape): every measure listed, each resolved one with an id `fetch` reads — and
/// every one of those read through `fetch` over the fakes — the others marked, never
/// dropped; another country's measure not listed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directives_dutch_transposition_is_listed_and_every_listed_id_fetched() {
    let (f, server, mut mcp) = start("eurlex-transposition", None).await;
    let fake = f.all.get(PLATFORM).expect("the eurlex fake").clone();
    let before = fake.requests();
    let (text, s) = ok(&mcp
        .call("eurlex_transposition", json!({"id": "CELEX:32019L1937"}))
        .await);
    assert_eq!(fake.requests(), before + 1, "one SPARQL query");
    assert_eq!(s["id"], json!("32019L1937"));
    let measures = s["measures"].as_array().expect("measures");
    let celex: Vec<&str> = measures.iter().map(|m| m["celex"].as_str().unwrap()).collect();
    assert_eq!(
        celex,
        [
            "72019L1937NLD_202600002",
            "72019L1937NLD_202500001",
            "72019L1937NLD_202300003",
            "72019L1937NLD_202300004"
        ],
        "newest journal date first, the Belgian one not listed: {text}"
    );
    let resolved: Vec<&str> = measures.iter().filter_map(|m| m["id"].as_str()).collect();
    assert_eq!(resolved, ["stcrt-2026-10004", "stb-2025-10005", "BWBR0005537"]);
    assert_eq!((s["resolved"].clone(), s["unresolved"].clone()), (json!(3), json!(1)));
    assert_eq!(measures[3]["resolved"], json!(false));
    assert!(
        text.contains("- not resolved — Mededeling zonder vindplaats"),
        "the unresolved measure listed as CELLAR gives it: {text}"
    );
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    for id in resolved {
        let (read, v) = ok(&all.call("fetch", json!({"id": id})).await);
        assert!(!read.is_empty(), "{id}");
        assert!(v.to_string().contains(id), "fetch {id} reads it: {v}");
    }
    let (text, s) = ok(&mcp.call("eurlex_transposition", json!({"id": "32024R0903"})).await);
    assert!(s["measures"].as_array().unwrap().is_empty());
    assert!(
        text.contains("lists no Dutch national measure") && text.contains("no directive"),
        "{text}"
    );
    let e = err(&mcp.call("eurlex_transposition", json!({"id": "32014L0001"})).await);
    assert!(e.contains("has no act with CELEX number 32014L0001"), "{e}");
    let e = err(&mcp.call("eurlex_transposition", json!({"id": "BWBR0005537"})).await);
    assert!(e.contains("is not a CELEX number"), "{e}");
    fake.update(|c| c.fail_every = Some(1));
    let e = err(&mcp
        .call("eurlex_transposition", json!({"id": "32019L1937", "x": 1}))
        .await);
    assert!(!e.is_empty());
    let e = err(&mcp.call("eurlex_transposition", json!({"id": "31995L0046"})).await);
    assert!(
        e.contains("EUR-Lex (CELLAR)") && e.contains("500"),
        "a failure named, never none found: {e}"
    );
}
