//! OpenTK and Open Raadsinformatie through the real server against their fakes: the
//! multipart search as the fake reads it, answers that may be incomplete, every "not
//! found" OpenTK answers with 200, the ETag revalidation of an expired document (a 304,
//! no download), and ORI in its live mode and in every retired shape, with the hold
//! that keeps a retired platform from being asked on every call.

use crate::support;

use besluitbron_core::WallTime;
use besluitbron_core::cache::{CacheKey, CachePolicy, CacheStore, CacheVersion, DataClass, Success};
use besluitbron_fakes::{OpenTkSettings, OriSettings, Retired, opentk, ori};
use besluitbron_server::clock::wall_now;
use besluitbron_server::config::Config;
use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, temp_dir, tool_error_text};

/// A document tool's structured content with the page of text its text content holds
/// (after the summary line and a blank line) as `text`: the text is not repeated in the
/// structured content.
fn structured(r: &Reply) -> Value {
    let mut v = support::structured(r);
    let content = r.message.as_ref().expect("message")["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if v.get("text_offset").is_some() && v.get("text").is_none() {
        let page = content.split_once("\n\n").map_or("", |(_, page)| page).to_owned();
        v["text"] = Value::String(page);
    }
    v
}

async fn server(f: &support::Fakes, name: &str, adjust: impl FnOnce(&mut Config)) -> Server {
    let mut cfg = config(f, &temp_dir(name));
    adjust(&mut cfg);
    Server::start(cfg).await
}

fn text(r: &support::Reply) -> String {
    r.message.as_ref().expect("message")["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_search_goes_out_as_multipart_and_answers_what_the_fake_holds() {
    let f = fakes().await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::opentk::PLATFORM)
        .expect("opentk fake")
        .clone();
    let server = server(&f, "opentk-search", |_| ()).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/opentk")).await;
    let got = structured(
        &mcp.call("opentk_search", json!({"query": "stikstof", "limit": 100}))
            .await,
    );
    let want: Vec<&str> = opentk::opentk_corpus()
        .search("stikstof", false, "alles")
        .iter()
        .take(100)
        .map(|d| d.nummer.as_str())
        .collect();
    let numbers: Vec<&str> = got["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|h| h["id"].as_str())
        .collect();
    assert!(!want.is_empty());
    assert_eq!(numbers, want, "the fake read the query from the multipart form");
    assert_eq!(fake.unreadable_bodies(), 0, "BesluitBron sent multipart/form-data");
    assert_eq!(got["incomplete"], Value::Null);
    // The platform reads nothing else: an urlencoded body finds nothing.
    let direct = reqwest::Client::new()
        .post(format!("{}/search", fake.base_url()))
        .form(&[("q", "stikstof"), ("twomonths", "false"), ("soorten", "alles")])
        .send()
        .await
        .expect("the fake answers");
    let body: Value = serde_json::from_slice(&direct.bytes().await.expect("body")).expect("json");
    assert_eq!(body["results"], json!([]));
    assert_eq!(fake.unreadable_bodies(), 1);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_answer_that_may_be_incomplete_says_so() {
    let f = fakes().await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::opentk::PLATFORM)
        .expect("opentk fake")
        .clone();
    let server = server(&f, "opentk-incomplete", |_| ()).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/opentk")).await;
    // A kind OpenTK applies after its 280-hit cap.
    let motions = mcp
        .call("opentk_search", json!({"query": "kamer", "kind": "moties"}))
        .await;
    assert!(text(&motions).contains("May be incomplete"), "{}", text(&motions));
    assert!(
        structured(&motions)["incomplete"]
            .as_str()
            .unwrap_or("")
            .contains("280")
    );
    // A query matching every document hits the cap itself.
    let all = structured(&mcp.call("opentk_search", json!({"query": "kamer"})).await);
    assert_eq!(all["total"], 280);
    assert!(all["incomplete"].as_str().is_some_and(|r| r.contains("at most 280")));
    // Under load the platform cuts the search short near its time budget.
    fake.update_own::<OpenTkSettings>(|s| s.busy = true);
    let busy = mcp.call("opentk_search", json!({"query": "klimaat"})).await;
    assert!(text(&busy).contains("time budget"), "{}", text(&busy));
    fake.update_own::<OpenTkSettings>(|s| s.busy = false);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_not_found_opentk_answers_is_a_not_found_and_nothing_is_kept() {
    let f = fakes().await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::opentk::PLATFORM)
        .expect("opentk fake")
        .clone();
    let server = server(&f, "opentk-not-found", |_| ()).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/opentk")).await;
    for (tool, id, what) in [
        // 200 text/plain "Found nothing!!".
        ("opentk_activity", "2026A09999", "has no activity 2026A09999"),
        // A proper 404 "Found nothing!!".
        ("opentk_document", "2026D99999", "has no document 2026D99999"),
        // 404 "No such kst".
        ("opentk_document", "kst-99999-1", "has no kamerstuk kst-99999-1"),
    ] {
        for round in 0..2 {
            let before = fake.requests();
            let e = tool_error_text(&mcp.call(tool, json!({"id": id})).await);
            assert!(e.contains("OpenTK") && e.contains(what), "{tool} {id}: {e}");
            assert!(
                fake.requests() > before,
                "{tool} {id} round {round}: asked again (not kept)"
            );
        }
    }
    // The 200-with-text of /getraw and the empty 200 of /commissie, as the client reads them.
    let raw = reqwest::get(format!("{}/getraw/2026D99999", fake.base_url()))
        .await
        .expect("raw");
    let (status, ct) = (
        raw.status().as_u16(),
        raw.headers()["content-type"].to_str().unwrap_or("").to_owned(),
    );
    let body = raw.bytes().await.expect("body");
    assert!(besluitbron_server::platforms::opentk::is_not_found(
        status,
        Some(&ct),
        &body
    ));
    let com = reqwest::get(format!("{}/commissie/nope", fake.base_url()))
        .await
        .expect("commissie");
    let status = com.status().as_u16();
    assert!(besluitbron_server::platforms::opentk::is_not_found(
        status,
        None,
        &com.bytes().await.expect("body")
    ));
    // A known kamerstuk leads to its document through the platform's redirect.
    let doc = structured(&mcp.call("opentk_document", json!({"id": "kst-36200-1"})).await);
    assert_eq!(doc["id"], "2026D10001");
    assert!(doc["text"].as_str().unwrap_or("").contains("Tweede Kamer"));
    let act = structured(&mcp.call("opentk_activity", json!({"id": "2026A00003"})).await);
    assert_eq!(act["agenda"].as_array().map(Vec::len), Some(2));
    assert_eq!(act["commitments"].as_array().map(Vec::len), Some(1));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_expired_document_is_revalidated_with_a_304_and_not_downloaded_again() {
    let f = fakes().await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::opentk::PLATFORM)
        .expect("opentk fake")
        .clone();
    // The platform's current ETag of the rendition (one download).
    let current = reqwest::get(format!("{}/getdoc/2026D10002", fake.base_url()))
        .await
        .expect("getdoc");
    let etag = current.headers()["etag"].to_str().expect("etag").to_owned();
    // BesluitBron's buffer holds a copy fetched 22 days ago: past the 21 days documents live.
    let dir = temp_dir("opentk-etag");
    let kept = json!({
        "number": "2026D10002", "title": "kept copy", "text": "the text BesluitBron kept",
        "text_chars": 25, "truncated": false, "etag": etag,
        "page_url": "p", "html_url": "h", "raw_url": "r", "raw_note": "n"
    });
    {
        let (stores, failures) = besluitbron_server::store::open_all(
            &dir,
            &besluitbron_server::connectors::platforms(),
            &CachePolicy::default(),
            &CacheVersion::current(),
        );
        assert!(failures.is_empty());
        let key = CacheKey::new(
            besluitbron_server::platforms::opentk::PLATFORM,
            DataClass::Document,
            "document",
        )
        .param("id", "2026D10002");
        let then = WallTime(wall_now().0 - 22 * 24 * 3600 * 1000);
        stores[&besluitbron_server::platforms::opentk::PLATFORM]
            .put(&key, &Success::new(kept.to_string().into_bytes()), then)
            .expect("put");
    }
    let mut cfg = config(&f, &dir);
    cfg.data_dir = dir;
    let server = Server::start(cfg).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/opentk")).await;
    let (downloads, not_modified) = (fake.downloads(), fake.not_modified());
    let got = structured(&mcp.call("opentk_document", json!({"id": "2026D10002"})).await);
    assert_eq!(got["title"], "kept copy", "the kept copy answers");
    assert_eq!(
        fake.not_modified(),
        not_modified + 1,
        "asked with If-None-Match, answered 304"
    );
    assert_eq!(fake.downloads(), downloads, "no second download");
    // Renewed: the next call is a buffer hit, and the revalidation is counted.
    let before = fake.requests();
    let again = mcp.call("opentk_document", json!({"id": "2026D10002"})).await;
    assert!(text(&again).contains("buffer"), "{}", text(&again));
    assert_eq!(fake.requests(), before);
    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    assert!(
        metrics
            .lines()
            .any(|l| l.contains("platform=\"opentk\"") && l.contains("outcome=\"revalidated\"") && l.ends_with(" 1")),
        "{metrics}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ori_live_mode_searches_reads_and_lists_sources() {
    let f = fakes().await;
    let server = server(&f, "ori-live", |_| ()).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/ori")).await;
    let got = structured(
        &mcp.call(
            "ori_search",
            json!({"query": "woningbouw", "source": "heemskerk", "limit": 50}),
        )
        .await,
    );
    let body = besluitbron_server::platforms::ori::search_body(&besluitbron_server::platforms::ori::OriSearch {
        query: "woningbouw".into(),
        indices: String::new(),
        date_from: None,
        date_to: None,
        size: 50,
        from: 0,
    });
    let (total, want) = ori::search(&ori::resolve("ori_heemskerk,osi_heemskerk,owi_heemskerk"), &body);
    assert!(total > 0);
    assert_eq!(got["total"], total);
    let ids: Vec<String> = want.iter().map(|d| format!("{}/{}", d.index, d.id)).collect();
    let got_ids: Vec<String> = got["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|h| h["id"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(got_ids, ids);
    let first = &got["results"][0];
    assert!(
        first["highlights"][0].as_str().unwrap_or("").contains("**woningbouw**"),
        "{first}"
    );
    let reply = mcp.call("ori_document", json!({"id": ids[0]})).await;
    // As sent (this file's `structured` adds the page back for the OpenTK checks).
    let doc = support::structured(&reply);
    assert!(
        doc.get("text").is_none(),
        "the text is not repeated in the structured content"
    );
    assert!(text(&reply).contains("woningbouw"), "{doc}");
    // The long one pages: the first page is 10000 characters, within the answer budget.
    let long = mcp
        .call("ori_document", json!({"id": "ori_heemskerk_20250506181303/1001"}))
        .await;
    let size = serde_json::to_vec(&long.message.as_ref().unwrap()["result"])
        .unwrap()
        .len();
    assert!(
        size <= besluitbron_server::connectors::schema::ANSWER_BUDGET_BYTES,
        "{size}"
    );
    let head = structured(&long);
    assert!(head["total_length"].as_u64().unwrap() > 30_000, "{head}");
    assert_eq!(
        (head["text_length"].as_u64(), head["next_offset"].as_u64()),
        (Some(10_000), Some(10_000))
    );
    let bare = structured(&mcp.call("ori_document", json!({"id": want[0].id})).await);
    assert!(bare["id"].as_str().is_some());
    let missing = tool_error_text(
        &mcp.call("ori_document", json!({"id": "ori_soest_20251101120000/99999"}))
            .await,
    );
    assert!(missing.contains("has no document 99999"), "{missing}");
    let sources = structured(&mcp.call("ori_sources", json!({})).await);
    let listed: Vec<&str> = sources["results"]
        .as_array()
        .expect("results")
        .iter()
        .filter_map(|s| s["id"].as_str())
        .collect();
    assert_eq!(listed, ["ori_heemskerk", "ori_soest", "osi_utrecht", "owi_rijnland"]);
    assert_eq!(
        sources["results"][0]["older_copies"],
        json!(["ori_heemskerk_20240101000000"])
    );
    let unknown = tool_error_text(
        &mcp.call("ori_search", json!({"query": "x", "source": "nergensdorp"}))
            .await,
    );
    assert!(unknown.contains("has no source"), "{unknown}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_failure_shape_of_the_retired_ori_says_retired_and_points_to_obv() {
    let f = fakes().await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::ori::PLATFORM)
        .expect("ori fake")
        .clone();
    let server = server(&f, "ori-retired", |_| ()).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/ori")).await;
    for (i, shape) in [Retired::NotFound, Retired::Gone, Retired::BadGateway, Retired::Html]
        .into_iter()
        .enumerate()
    {
        fake.update_own::<OriSettings>(|s| s.retired = Some(shape));
        for (tool, args) in [
            ("ori_search", json!({"query": format!("retired {i}")})),
            ("ori_document", json!({"id": format!("ori_a/{i}")})),
            ("ori_sources", json!({})),
        ] {
            let before = fake.requests();
            let e = tool_error_text(&mcp.call(tool, args).await);
            assert!(
                e.contains("Open Raadsinformatie was retired on 1 November 2026") && e.contains("`obv_search`"),
                "{tool} {shape:?}: {e}"
            );
            assert_eq!(fake.requests(), before + 1, "{tool} {shape:?}: asked once, not retried");
        }
    }
    fake.update_own::<OriSettings>(|s| s.retired = None);
    // Nothing retired was kept: the live mirror answers again at once.
    structured(&mcp.call("ori_sources", json!({})).await);
    server.stop().await;
    // No connection at all.
    let closed = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = closed.local_addr().expect("addr").port();
    drop(closed);
    let server = server_with_ori(&f, "ori-refused", &format!("http://127.0.0.1:{port}/v1/elastic"), None).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/ori")).await;
    let e = tool_error_text(&mcp.call("ori_search", json!({"query": "x"})).await);
    assert!(e.contains("retired on 1 November 2026"), "{e}");
    server.stop().await;
}

async fn server_with_ori(f: &support::Fakes, name: &str, url: &str, hold: Option<u64>) -> Server {
    server(f, name, |cfg| {
        let ori = cfg.platforms.get_mut("ori").expect("ori");
        ori.base_url = url.to_owned();
        ori.retired_hold_secs = hold;
    })
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retired_answer_is_held_so_it_costs_nothing_per_call_and_readyz_stays_ready() {
    let f = fakes().await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::ori::PLATFORM)
        .expect("ori fake")
        .clone();
    fake.update_own::<OriSettings>(|s| s.retired = Some(Retired::Html));
    let server = server_with_ori(&f, "ori-hold", fake.base_url(), Some(60)).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/ori")).await;
    let before = fake.requests();
    let first = tool_error_text(&mcp.call("ori_search", json!({"query": "a"})).await);
    assert_eq!(fake.requests(), before + 1);
    for (tool, args) in [
        ("ori_search", json!({"query": "b"})),
        ("ori_document", json!({"id": "1"})),
        ("ori_sources", json!({})),
    ] {
        let again = tool_error_text(&mcp.call(tool, args).await);
        assert_eq!(again, first, "{tool}: the same answer");
    }
    assert_eq!(fake.requests(), before + 1, "held: the platform was not asked again");
    let ready = reqwest::get(server.url("/readyz")).await.expect("readyz");
    assert_eq!(
        ready.status(),
        200,
        "a retired platform does not make BesluitBron unready"
    );
    server.stop().await;
}

/// `source` file reads a document's original file through the document-text extractor
/// (the raw file once that extractor exists): the text of the fake's PDF,
/// kept, a repeat from the buffer; an unknown number is a not-found, nothing kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_original_file_is_read_through_the_document_text_extractor() {
    let f = fakes().await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::opentk::PLATFORM)
        .expect("opentk fake")
        .clone();
    let server = server(&f, "opentk-file", |_| ()).await;
    let mut mcp = Mcp::initialize(server.url("/mcp/opentk")).await;
    let before = fake.requests();
    let reply = mcp
        .call("opentk_document", json!({"id": "2026D10003", "source": "file"}))
        .await;
    let doc = support::structured(&reply);
    assert_eq!(doc["from_file"], json!(true), "{doc}");
    assert_eq!(fake.requests(), before + 2, "the rendition's record, then the file");
    let shown = text(&reply);
    assert!(shown.contains("Brief van de minister over klimaatbeleid"), "{shown}");
    assert!(
        shown.contains("geëvalueerd") && shown.contains("read from the original file"),
        "{shown}"
    );
    let asked = fake.requests();
    let again = mcp
        .call("opentk_document", json!({"id": "2026D10003", "source": "file"}))
        .await;
    assert!(text(&again).contains("from BesluitBron's buffer"), "{}", text(&again));
    assert_eq!(fake.requests(), asked, "the repeat came from the buffer");
    // The rendition stays the default, and says how to read the file.
    let rendition = mcp.call("opentk_document", json!({"id": "2026D10003"})).await;
    assert_eq!(support::structured(&rendition)["from_file"], json!(false));
    assert!(text(&rendition).contains("`source` file"), "{}", text(&rendition));
    let missing = mcp
        .call("opentk_document", json!({"id": "2026D99999", "source": "file"}))
        .await;
    assert!(
        tool_error_text(&missing).contains("2026D99999"),
        "{}",
        tool_error_text(&missing)
    );
    server.stop().await;
}
