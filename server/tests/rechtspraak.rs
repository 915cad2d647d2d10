//! The Rechtspraak tools end to end: the real server over loopback against the fake
//! open-data service, answers compared with the fake's own corpus.

use crate::support;

use besluitbron_fakes::FakeHandle;
use besluitbron_fakes::rechtspraak::{BUSY_DAY, FOOTNOTES_ECLI, LONG_ECLI, METADATA_ONLY_ECLI, RsQuery, RsRuling};
use besluitbron_fakes::rechtspraak_corpus;
use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, structured, temp_dir, tool_error_text};

struct Setup {
    _fakes: support::Fakes,
    fake: FakeHandle,
    server: Server,
    mcp: Mcp,
}

async fn setup(name: &str) -> Setup {
    let f = fakes().await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::rechtspraak::PLATFORM)
        .expect("the rechtspraak fake")
        .clone();
    let server = Server::start(config(&f, &temp_dir(name))).await;
    let mcp = Mcp::initialize(server.url("/mcp/rechtspraak")).await;
    Setup {
        _fakes: f,
        fake,
        server,
        mcp,
    }
}

fn eclis(v: &Value) -> Vec<String> {
    v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["id"].as_str().unwrap_or("").to_owned())
        .collect()
}

fn expected(query: &RsQuery, from: usize, n: usize) -> Vec<String> {
    rechtspraak_corpus()
        .search(query)
        .into_iter()
        .skip(from)
        .take(n)
        .map(|r| r.ecli.clone())
        .collect()
}

fn court_id(abbreviation: &str) -> String {
    rechtspraak_corpus()
        .courts
        .iter()
        .find(|c| c.abbreviation == abbreviation)
        .expect("court")
        .identifier
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn names_resolve_exactly_by_abbreviation_and_a_typo_lists_the_closest() {
    let mut s = setup("rs-names").await;
    let args = json!({"court": "HR", "date_from": "2026-01-01", "date_to": "2026-12-31", "limit": 20});
    let by_abbreviation = structured(&s.mcp.call("rechtspraak_search", args).await);
    let by_name = structured(
        &s.mcp
            .call(
                "rechtspraak_search",
                json!({"court": "hoge  raad", "date_from": "2026-01-01", "date_to": "2026-12-31", "limit": 20}),
            )
            .await,
    );
    assert_eq!(by_abbreviation["results"], by_name["results"]);
    assert!(by_name["searched"].as_str().unwrap().starts_with("court Hoge Raad"));
    let query = RsQuery {
        creators: vec![court_id("HR")],
        date: Some(("2026-01-01".into(), "2026-12-31".into())),
        with_doc: true,
        descending: true,
        ..RsQuery::default()
    };
    assert_eq!(eclis(&by_name), expected(&query, 0, 20));
    assert_eq!(
        by_name["total"],
        json!(rechtspraak_corpus().search(&query).len()),
        "the total is the fake's"
    );
    let before = s.fake.requests();
    let typo = tool_error_text(
        &s.mcp
            .call("rechtspraak_search", json!({"court": "Rechtbank Amsterdm"}))
            .await,
    );
    assert!(
        typo.contains("no court is named `Rechtbank Amsterdm`; the closest are: Rechtbank Amsterdam (RBAMS)"),
        "{typo}"
    );
    assert_eq!(
        s.fake.requests(),
        before,
        "the list came from the buffer and no search was sent"
    );
    let area = tool_error_text(&s.mcp.call("rechtspraak_search", json!({"area": "strafreht"})).await);
    assert!(area.contains("the closest are: Strafrecht"), "{area}");
    s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_pages_across_the_1000_boundary() {
    let mut s = setup("rs-paging").await;
    let query = RsQuery {
        date: Some((BUSY_DAY.into(), BUSY_DAY.into())),
        descending: false,
        ..RsQuery::default()
    };
    let total = rechtspraak_corpus().search(&query).len();
    assert!(total > 1000);
    let args = |offset: u32| {
        json!({"date_from": BUSY_DAY, "date_to": BUSY_DAY, "with_text": false, "sort": "oldest",
               "limit": 10, "offset": offset})
    };
    let across = structured(&s.mcp.call("rechtspraak_search", args(995)).await);
    assert_eq!(eclis(&across), expected(&query, 995, 10));
    assert_eq!(across["total"], json!(total));
    assert_eq!(across["next_offset"], json!(1005));
    let last = structured(&s.mcp.call("rechtspraak_search", args(total as u32 - 5)).await);
    assert_eq!(eclis(&last), expected(&query, total - 5, 10));
    assert_eq!(last["next_offset"], Value::Null, "the last page says there is no more");
    let withdrawn = last["results"]
        .as_array()
        .unwrap()
        .iter()
        .chain(across["results"].as_array().unwrap())
        .filter(|r| !r["withdrawn"].is_null())
        .count();
    let want_withdrawn = expected(&query, 995, 10)
        .iter()
        .chain(&expected(&query, total - 5, 10))
        .filter(|e| {
            rechtspraak_corpus()
                .ruling(e)
                .is_some_and(|r: &RsRuling| r.deleted.is_some())
        })
        .count();
    assert_eq!(withdrawn, want_withdrawn, "withdrawn entries are marked");
    s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn words_are_refused_and_nothing_reaches_the_platform() {
    let mut s = setup("rs-words").await;
    let before = s.fake.requests();
    let text = tool_error_text(
        &s.mcp
            .call(
                "rechtspraak_search",
                json!({"query": "huurrecht opzegging", "court": "HR"}),
            )
            .await,
    );
    assert!(text.contains("no keyword search"), "{text}");
    assert_eq!(s.fake.requests(), before, "no request was made");
    s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn errors_that_look_like_success_are_tool_errors_and_never_kept() {
    let mut s = setup("rs-errors").await;
    for _ in 0..2 {
        let before = s.fake.requests();
        let text = tool_error_text(
            &s.mcp
                .call("rechtspraak_ruling", json!({"id": "ECLI:NL:HR:2099:1"}))
                .await,
        );
        assert!(
            text.starts_with("Rechtspraak has no published ruling ECLI:NL:HR:2099:1") && text.contains("mededeling"),
            "{text}"
        );
        assert_eq!(s.fake.requests(), before + 1, "asked again: the failure was not kept");
    }
    s.fake.set_garbage(true);
    let args = json!({"court": "RBAMS", "date_from": BUSY_DAY, "date_to": BUSY_DAY});
    let text = tool_error_text(&s.mcp.call("rechtspraak_search", args.clone()).await);
    assert!(text.contains("Rechtspraak") && text.contains("HTML page"), "{text}");
    s.fake.set_garbage(false);
    let before = s.fake.requests();
    structured(&s.mcp.call("rechtspraak_search", args).await);
    assert!(s.fake.requests() > before, "the HTML page was not kept");
    let bad = tool_error_text(
        &s.mcp
            .call("rechtspraak_ruling", json!({"id": "../../etc/passwd"}))
            .await,
    );
    assert!(bad.contains("is not an ECLI"), "{bad}");
    s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ruling_with_footnotes_and_a_table_pages_and_a_metadata_only_ecli_says_so() {
    let mut s = setup("rs-ruling").await;
    let reply = s.mcp.call("rechtspraak_ruling", json!({"id": FOOTNOTES_ECLI})).await;
    let (whole, text) = (structured(&reply), page_text(&reply));
    assert!(
        whole.get("text").is_none(),
        "the text is not repeated in the structured content"
    );
    for part in [
        "## 1 Het geding in cassatie",
        "1.1 Eiseres heeft beroep in cassatie ingesteld[^1] tegen",
        "| Post | Bedrag |\n|---|---|\n| Materiële schade | € 12.500 |",
        "1. het hof de maatstaf heeft miskend;",
        "> Artikel 6:162 lid 1 BW",
        "[image: situatieschets.png]",
        "Een element dat de lezer niet kent.",
        "Footnotes\n[^1] Procesinleiding van 3 maart 2026.\n[^2] ECLI:NL:PHR:2026:400.",
    ] {
        assert!(text.contains(part), "`{part}` in:\n{text}");
    }
    assert_eq!(whole["court"]["name"], "Hoge Raad");
    assert_eq!(
        (whole["id"].as_str(), whole["platform"].as_str()),
        (Some(FOOTNOTES_ECLI), Some("rechtspraak"))
    );
    assert_eq!(whole["organization"], "Hoge Raad");
    // The earlier name of `id` is read for one release, and the answer says so.
    let old = s.mcp.call("rechtspraak_ruling", json!({"ecli": FOOTNOTES_ECLI})).await;
    assert_eq!(structured(&old)["id"], whole["id"]);
    let said = old.message.as_ref().expect("an answer")["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(
        said.starts_with("Note: rechtspraak_ruling's `ecli` is now called `id`"),
        "{said}"
    );
    assert_eq!(whole["relations"][0]["id"], "ECLI:NL:PHR:2026:400");
    assert_eq!(whole["relations"][0]["kind"], "conclusie");
    assert_eq!(whole["images"], 1);
    assert_eq!(whole["has_more"], false);
    // Paging: two pages put together are the whole text, and the second came from the buffer.
    let before = s.fake.requests();
    let first = s
        .mcp
        .call("rechtspraak_ruling", json!({"id": FOOTNOTES_ECLI, "length": 300}))
        .await;
    let rest = s
        .mcp
        .call(
            "rechtspraak_ruling",
            json!({"id": FOOTNOTES_ECLI, "offset": 300, "length": 100000}),
        )
        .await;
    assert_eq!(s.fake.requests(), before);
    assert_eq!(structured(&first)["has_more"], true);
    assert_eq!(structured(&first)["next_offset"], 300);
    assert_eq!(format!("{}{}", page_text(&first), page_text(&rest)), text);
    let bare = s
        .mcp
        .call("rechtspraak_ruling", json!({"id": METADATA_ONLY_ECLI}))
        .await;
    let v = structured(&bare);
    assert_eq!(v["has_text"], false);
    assert_eq!(v["court"]["name"], "Rechtbank Amsterdam");
    let m = bare.message.unwrap();
    let shown = m["result"]["content"][0]["text"].as_str().unwrap();
    assert!(shown.contains("No published text"), "{shown}");
    s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sub_area_and_a_procedure_are_checked_on_each_results_metadata() {
    let mut s = setup("rs-check").await;
    let corpus = rechtspraak_corpus();
    let args = json!({"area": "omgevingsrecht", "date_from": "2026-01-01", "date_to": "2026-12-31", "limit": 20});
    let got = structured(&s.mcp.call("rechtspraak_search", args).await);
    assert!(
        got["searched"]
            .as_str()
            .unwrap()
            .starts_with("area Omgevingsrecht (within Bestuursrecht)"),
        "{got}"
    );
    let top = RsQuery {
        subjects: vec!["http://psi.rechtspraak.nl/rechtsgebied#bestuursrecht".into()],
        date: Some(("2026-01-01".into(), "2026-12-31".into())),
        with_doc: true,
        descending: true,
        ..RsQuery::default()
    };
    let sub = "http://psi.rechtspraak.nl/rechtsgebied#bestuursrecht_omgevingsrecht";
    let want: Vec<String> = expected(&top, 0, 20)
        .into_iter()
        .filter(|e| {
            let r = corpus.ruling(e).unwrap();
            r.areas.iter().any(|&a| corpus.areas[a].identifier == sub)
        })
        .collect();
    assert_eq!(eclis(&got), want);
    assert!(
        got["note"]
            .as_str()
            .unwrap()
            .contains("checked the metadata of the 20 results")
    );
    assert_eq!(got["next_offset"], json!(20), "paging goes by the platform's page");
    let procedure = structured(
        &s.mcp
            .call(
                "rechtspraak_search",
                json!({"court": "GHAMS", "procedure": "hoger beroep", "limit": 5}),
            )
            .await,
    );
    assert_eq!(
        procedure["results"].as_array().unwrap().len(),
        5,
        "every hof ruling is hoger beroep"
    );
    s.server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn value_lists_filter_and_keep_historic_identifiers() {
    let mut s = setup("rs-lists").await;
    let all = structured(&s.mcp.call("rechtspraak_courts", json!({"include_ended": true})).await);
    let every = rechtspraak_corpus().courts.len();
    assert_eq!(all["total"], json!(every));
    // One page by default; following next_offset lists every court once, in order.
    assert_eq!(all["results"].as_array().unwrap().len(), 40);
    let mut names: Vec<String> = Vec::new();
    let mut offset = Some(0);
    while let Some(o) = offset {
        let page = structured(
            &s.mcp
                .call(
                    "rechtspraak_courts",
                    json!({"include_ended": true, "offset": o, "limit": 200}),
                )
                .await,
        );
        names.extend(
            page["results"]
                .as_array()
                .unwrap()
                .iter()
                .map(|c| c["title"].as_str().unwrap().to_owned()),
        );
        offset = page["next_offset"].as_u64();
    }
    let fake: Vec<String> = rechtspraak_corpus().courts.iter().map(|c| c.name.clone()).collect();
    assert_eq!(names, fake);
    let ag = structured(
        &s.mcp
            .call(
                "rechtspraak_courts",
                json!({"filter": "ambtenarengerecht den haag", "include_ended": true}),
            )
            .await,
    );
    assert_eq!(ag["results"][0]["id"], "http://psi.rechtspraak.nl/AG DH");
    let current = structured(&s.mcp.call("rechtspraak_courts", json!({"filter": "Gerechtshof"})).await);
    assert_eq!(current["total"], 4, "ended courts are left out unless asked");
    let areas = structured(&s.mcp.call("rechtspraak_areas", json!({"filter": "strafrecht"})).await);
    assert!(areas["total"].as_u64().unwrap() >= 4);
    let none = s.mcp.call("rechtspraak_areas", json!({"filter": "zeerecht-xyz"})).await;
    let m = none.message.as_ref().unwrap();
    let shown = m["result"]["content"][0]["text"].as_str().unwrap();
    assert!(shown.starts_with("0 of "), "{shown}");
    assert!(shown.contains("try a shorter part of the name"), "{shown}");
    s.server.stop().await;
}

/// The page of text a `rechtspraak_ruling` answer holds: the last `text_length`
/// characters of its text content.
fn page_text(reply: &support::Reply) -> String {
    let length = structured(reply)["text_length"].as_u64().expect("text_length") as usize;
    let m = reply.message.as_ref().expect("an answer");
    let shown = m["result"]["content"][0]["text"].as_str().expect("a text");
    let total = shown.chars().count();
    shown.chars().skip(total - length).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_ruling_comes_in_pages_that_fit_the_answer_budget_and_add_up_to_the_text() {
    let mut s = setup("rs-long").await;
    let first = s.mcp.call("rechtspraak_ruling", json!({"id": LONG_ECLI})).await;
    let size = serde_json::to_vec(&first.message.as_ref().unwrap()["result"])
        .unwrap()
        .len();
    assert!(
        size <= besluitbron_server::connectors::schema::ANSWER_BUDGET_BYTES,
        "{size} bytes"
    );
    let head = structured(&first);
    let total = head["total_length"].as_u64().unwrap() as usize;
    assert!(total > 40_000, "{total}");
    assert_eq!(head["text_length"], 10_000);
    assert_eq!(head["next_offset"], 10_000);
    let shown = first.message.as_ref().unwrap()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        shown.contains(&format!("{} more: ask again with `offset` 10000", total - 10_000)),
        "{shown}"
    );
    // Following next_offset reads the whole text, page by page, from the buffer.
    let before = s.fake.requests();
    let mut text = page_text(&first);
    let mut next = head["next_offset"].as_u64();
    while let Some(offset) = next {
        let page = s
            .mcp
            .call(
                "rechtspraak_ruling",
                json!({"id": LONG_ECLI, "offset": offset, "length": 20000}),
            )
            .await;
        text.push_str(&page_text(&page));
        next = structured(&page)["next_offset"].as_u64();
    }
    assert_eq!(s.fake.requests(), before);
    assert_eq!(text.chars().count(), total);
    assert!(
        text.contains("1.120. Onderdeel 120 van het middel"),
        "the last paragraph"
    );
    s.server.stop().await;
}
