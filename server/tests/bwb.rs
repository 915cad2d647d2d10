//! The Basiswettenbestand connector end to end, against its fake on loopback: a law read
//! as in force on two dates gives two texts of the same article, an article is asked by
//! its number, the whole text pages by characters, a version's text is asked once and
//! then kept, searches answer the fake's data, and an SRU diagnostic is a tool error
//! quoting the service.
//!
//! Expected answers come from the fake's own regulations (`besluitbron_fakes::bwb`).

use crate::support;

use besluitbron_fakes::ZoekserviceSettings;
use besluitbron_fakes::bwb::{AWB, FIREWORKS_LAW, REGULATIONS, matches, parse_cql};
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

/// The page of text of a `bwb_read` answer: what follows the summary's blank line.
fn page(text: &str) -> &str {
    text.split_once("\n\n").map_or("", |(_, p)| p)
}

/// The fake's paragraphs of article `number` of `id` as in force on `date`.
fn paragraphs(id: &str, date: &str, number: &str) -> Vec<&'static str> {
    let r = REGULATIONS.iter().find(|r| r.id == id).expect("the fake has it");
    let v = r.in_force(date).expect("in force then");
    v.articles
        .iter()
        .find(|a| a.number == number)
        .expect("the article")
        .paragraphs
        .to_vec()
}

async fn start(name: &str) -> (support::Fakes, Server, Mcp) {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir(name))).await;
    let mcp = Mcp::initialize(server.url("/mcp/bwb")).await;
    (f, server, mcp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_law_in_force_on_two_dates_gives_two_texts_of_the_same_article() {
    let (f, server, mut mcp) = start("bwb-two-dates").await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::bwb::PLATFORM)
        .expect("the bwb fake")
        .clone();
    let before = fake.requests();
    let (old_text, old) = ok(&mcp
        .call(
            "bwb_read",
            json!({"id": FIREWORKS_LAW, "date": "2025-01-01", "article": "artikel 2"}),
        )
        .await);
    assert_eq!(fake.requests(), before + 2, "the version in force, then its text");
    let (new_text, new) = ok(&mcp
        .call(
            "bwb_read",
            json!({"id": FIREWORKS_LAW, "date": "2025-08-01", "article": "2"}),
        )
        .await);
    assert_eq!(
        (old["article"].clone(), new["article"].clone()),
        (json!("2"), json!("2"))
    );
    assert_eq!(
        (old["valid_from"].clone(), old["valid_until"].clone()),
        (json!("2024-01-01"), json!("2025-06-30"))
    );
    assert_eq!(new["valid_from"], json!("2025-07-01"));
    for (text, date) in [(&old_text, "2025-01-01"), (&new_text, "2025-08-01")] {
        let want: Vec<String> = paragraphs(FIREWORKS_LAW, date, "2")
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{} {p}", i + 1))
            .collect();
        assert_eq!(page(text), format!("Artikel 2\n{}", want.join("\n")), "{date}");
    }
    assert_ne!(page(&old_text), page(&new_text), "two texts of one article");
    assert!(page(&old_text).contains("18.00 uur") && page(&new_text).contains("20.00 uur"));
    assert_eq!(old["title"], json!("Wet consumentenvuurwerk"), "the citation title");
    assert_eq!(
        old["url"],
        json!(format!("https://wetten.overheid.nl/{FIREWORKS_LAW}/2024-01-01"))
    );
    // The newer version gained an article; the older has no article 3.
    assert_eq!((old["articles"].clone(), new["articles"].clone()), (json!(2), json!(3)));
    let missing = err(&mcp
        .call(
            "bwb_read",
            json!({"id": FIREWORKS_LAW, "date": "2025-01-01", "article": "3"}),
        )
        .await);
    assert!(
        missing.contains("has no article `3`; its articles are 1, 2"),
        "{missing}"
    );

    // Another day in the same version: only the lookup; its text is kept.
    let asked = fake.requests();
    ok(&mcp
        .call(
            "bwb_read",
            json!({"id": FIREWORKS_LAW, "date": "2025-03-01", "article": "1"}),
        )
        .await);
    assert_eq!(fake.requests(), asked + 1, "the version's text is read once");
    // A day before the law: not found, said as such.
    let none = err(&mcp
        .call("bwb_read", json!({"id": FIREWORKS_LAW, "date": "2023-01-01"}))
        .await);
    assert!(
        none.contains("Basiswettenbestand has no version of BWBR0047001 in force on 2023-01-01"),
        "{none}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_article_is_asked_by_its_number_and_the_whole_text_pages_by_characters() {
    let (_f, server, mut mcp) = start("bwb-article").await;
    let (text, v) = ok(&mcp
        .call(
            "bwb_read",
            json!({"id": AWB, "date": "2025-01-01", "article": "Artikel 1:3"}),
        )
        .await);
    let want: Vec<String> = paragraphs(AWB, "2025-01-01", "1:3")
        .iter()
        .enumerate()
        .map(|(i, p)| format!("{} {p}", i + 1))
        .collect();
    assert_eq!(page(&text), format!("Artikel 1:3\n{}", want.join("\n")));
    assert_eq!(v["article"], json!("1:3"));
    let outline: Vec<&str> = v["outline"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["label"].as_str().unwrap())
        .collect();
    assert_eq!(
        outline,
        [
            "Hoofdstuk 1 Inleidende bepalingen",
            "Titel 1.1 Definities en reikwijdte",
            "Artikel 1:1",
            "Artikel 1:2",
            "Artikel 1:3"
        ]
    );
    assert_eq!(v["outline_entries"], json!(5));
    // The whole text, 150 characters at a time, reads back whole.
    let mut whole = String::new();
    let mut offset = 0;
    loop {
        let (text, v) = ok(&mcp
            .call(
                "bwb_read",
                json!({"id": AWB, "date": "2025-01-01", "offset": offset, "length": 150}),
            )
            .await);
        whole.push_str(page(&text));
        match v["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    assert!(
        whole.starts_with(
            "Algemene wet bestuursrecht\n\nCiteertitel: Algemene wet bestuursrecht\n\nHoofdstuk 1 Inleidende \
             bepalingen\n\nTitel 1.1 Definities en reikwijdte\n\nArtikel 1:1\n"
        ),
        "{whole}"
    );
    for p in paragraphs(AWB, "2025-01-01", "1:3") {
        assert!(whole.contains(p), "{p}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn searches_answer_the_services_data_as_in_force_on_the_day() {
    let (_f, server, mut mcp) = start("bwb-search").await;
    let ids = |v: &Value| -> Vec<String> {
        v["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h["id"].as_str().unwrap().to_owned())
            .collect()
    };
    let want = |cql: &str| -> Vec<String> {
        matches(&parse_cql(cql).unwrap())
            .iter()
            .map(|(r, _)| r.id.to_owned())
            .collect()
    };
    for date in ["2025-01-01", "2025-08-01"] {
        let (text, v) = ok(&mcp
            .call("bwb_search", json!({"query": "consumentenvuurwerk", "date": date}))
            .await);
        let expected = want(&format!(
            "overheidbwb.titel all \"consumentenvuurwerk\" and overheidbwb.geldigheidsdatum=={date}"
        ));
        assert_eq!(ids(&v), expected, "{text}");
        assert_eq!(v["total"], json!(expected.len()));
    }
    let (_, one) = ok(&mcp
        .call(
            "bwb_search",
            json!({"query": "consumentenvuurwerk", "date": "2025-01-01"}),
        )
        .await);
    let (_, two) = ok(&mcp
        .call(
            "bwb_search",
            json!({"query": "consumentenvuurwerk", "date": "2025-08-01"}),
        )
        .await);
    assert!(
        ids(&one).len() < ids(&two).len(),
        "a regulation in force only later is found only later"
    );
    let hit = &one["results"][0];
    assert_eq!(
        (
            hit["kind"].clone(),
            hit["organization"].clone(),
            hit["platform"].clone()
        ),
        (json!("wet"), json!("Justitie en Veiligheid"), json!("bwb"))
    );
    let (_, amvb) = ok(&mcp
        .call(
            "bwb_search",
            json!({"kind": "AMvB", "organization": "Infrastructuur", "date": "2025-01-01"}),
        )
        .await);
    assert_eq!(ids(&amvb), ["BWBR0013360"]);
    let (text, none) = ok(&mcp.call("bwb_search", json!({"query": "kernenergie"})).await);
    assert_eq!(none["total"], json!(0));
    assert!(
        text.contains("has no regulation for title words `kernenergie`") && text.contains("To widen"),
        "{text}"
    );
    let refused = err(&mcp.call("bwb_search", json!({"date": "2025-01-01"})).await);
    assert!(refused.starts_with("bwb_search: give `query`"), "{refused}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_sru_diagnostic_is_a_tool_error_quoting_the_service() {
    let (f, server, mut mcp) = start("bwb-diagnostic").await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::bwb::PLATFORM)
        .expect("the bwb fake")
        .clone();
    fake.update_own::<ZoekserviceSettings>(|s| s.reject_every = Some(1));
    let message = err(&mcp.call("bwb_search", json!({"query": "bestuursrecht"})).await);
    assert!(message.contains("Basiswettenbestand refused the request"), "{message}");
    assert!(message.contains("Query syntax error"), "{message}");
    assert!(message.contains("info:srw/diagnostic/1/10"), "{message}");
    // Nothing failed was kept: once the service answers, so does the tool.
    fake.update_own::<ZoekserviceSettings>(|s| s.reject_every = None);
    let (_, v) = ok(&mcp.call("bwb_search", json!({"query": "bestuursrecht"})).await);
    assert_eq!(v["results"][0]["id"], json!(AWB));
    server.stop().await;
}
