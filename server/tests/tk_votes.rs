//! `tk_votes` end to end, against the Tweede Kamer fake on loopback: the answer is what
//! the fake's `Zaak`, `Besluit` and `Stemming` records say — one result per decision (a
//! case voted twice gives two), a show of hands counted in seats with a vote cast by
//! mistake flagged, a roll call with every member's vote, the votes of several cases
//! read across the platform's `$skiptoken` pages — and a question it cannot answer is
//! said as such.
//!
//! Expected answers are computed from the fake's own records (`besluitbron_fakes::tk`).

use crate::support;

use std::collections::BTreeMap;

use besluitbron_fakes::tk::{AMENDMENT_NUMBER, BILL_NUMBER, HELD_NUMBER, MOTION_NUMBER, VOTES_WORD, tk_corpus};
use serde_json::{Map, Value, json};
use support::{Mcp, Reply, Server, config, fakes, temp_dir};

/// A roll call's member votes as (name, faction, vote), from its groups.
fn members(result: &Value) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    for group in result["members"].as_array().unwrap() {
        for name in group["names"].as_array().unwrap() {
            out.push((
                name.as_str().unwrap().to_owned(),
                group["faction"].as_str().unwrap().to_owned(),
                group["vote"].as_str().unwrap().to_owned(),
            ));
        }
    }
    out
}

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

/// The Tweede Kamer's platform calls the server counted (`/metrics`), every outcome.
async fn platform_calls(server: &Server, platform: &str) -> u64 {
    let metrics = reqwest::get(server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    let prefix = format!("besluitbron_platform_calls_total{{platform=\"{platform}\"");
    metrics
        .lines()
        .filter(|l| l.starts_with(&prefix))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<u64>().ok())
        .sum()
}

/// The fake's case numbered `number`.
fn case(number: &str) -> &'static Map<String, Value> {
    tk_corpus()
        .zaken()
        .iter()
        .find(|z| z["Nummer"] == number)
        .unwrap_or_else(|| panic!("the fake has case {number}"))
}

/// The fake's live votes on the decision `id`, in its order.
fn votes_on(id: &str) -> Vec<&'static Map<String, Value>> {
    tk_corpus()
        .stemmingen()
        .iter()
        .filter(|s| s["Besluit_Id"] == id && s["Verwijderd"] == false)
        .collect()
}

/// (Voor, Tegen, Niet deelgenomen) as the fake's rows add up: seats for a faction's
/// row, one for a member's.
fn tally(rows: &[&Map<String, Value>]) -> (i64, i64, i64) {
    let mut t = (0, 0, 0);
    for r in rows {
        let n = if r["Persoon_Id"].is_null() {
            r["FractieGrootte"].as_i64().unwrap()
        } else {
            1
        };
        match r["Soort"].as_str().unwrap() {
            "Voor" => t.0 += n,
            "Tegen" => t.1 += n,
            _ => t.2 += n,
        }
    }
    t
}

fn totals(result: &Value) -> (i64, i64, i64) {
    let t = &result["totals"];
    (
        t["voor"].as_i64().unwrap(),
        t["tegen"].as_i64().unwrap(),
        t["niet_deelgenomen"].as_i64().unwrap(),
    )
}

async fn start(name: &str) -> (support::Fakes, Server, Mcp) {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir(name))).await;
    let mcp = Mcp::initialize(server.url("/mcp/tk")).await;
    (f, server, mcp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_case_voted_twice_gives_a_show_of_hands_with_a_mistake_and_a_roll_call() {
    let (f, server, mut mcp) = start("tk-votes-case").await;
    let before = f.tk.requests();
    let (text, v) = ok(&mcp.call("tk_votes", json!({"id": MOTION_NUMBER.to_lowercase()})).await);
    assert_eq!(
        f.tk.requests(),
        before + 2,
        "the case with its decisions, then one page of votes"
    );
    let decisions = tk_corpus().besluiten_of(case(MOTION_NUMBER)["Id"].as_str().unwrap());
    assert_eq!(decisions.len(), 2, "the fake's motion has two decisions");
    let results = v["results"].as_array().expect("results");
    assert_eq!(results.len(), 2, "one result per decision: {text}");

    check_show_of_hands(&results[0], decisions[0], &text);
    check_roll_call(&results[1], decisions[1], &text);

    // Asked again: from the buffer (the decisions are final).
    let (again, _) = ok(&mcp.call("tk_votes", json!({"id": MOTION_NUMBER})).await);
    assert_eq!(f.tk.requests(), before + 2, "{again}");
    server.stop().await;
}

/// The show of hands: seats per faction, the mistaken vote flagged and counted as cast.
fn check_show_of_hands(hands: &Value, decision: &Map<String, Value>, text: &str) {
    assert_eq!(hands["decision_id"], decision["Id"]);
    assert_eq!(
        (hands["decision_number"].clone(), hands["decisions"].clone()),
        (json!(1), json!(2))
    );
    assert_eq!(hands["vote_kind"], "Met handopsteken");
    assert_eq!(hands["decision_text"], decision["BesluitTekst"]);
    assert_eq!(hands["outcome"], "rejected");
    assert_eq!(hands["roll_call"], false);
    assert_eq!(hands["members"], json!([]));
    let rows = votes_on(decision["Id"].as_str().unwrap());
    assert_eq!(totals(hands), tally(&rows));
    let seats: i64 = hands["factions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["seats"].as_i64().unwrap())
        .sum();
    assert_eq!(seats, 150, "the factions' seats are the Kamer's");
    let mistaken: Vec<&str> = rows
        .iter()
        .filter(|r| r["Vergissing"] == true)
        .map(|r| r["ActorFractie"].as_str().unwrap())
        .collect();
    let flagged: Vec<&str> = hands["factions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["mistake"] == true)
        .map(|f| f["faction"].as_str().unwrap())
        .collect();
    assert_eq!(flagged, mistaken, "exactly the fake's Vergissing rows are flagged");
    assert!(
        text.contains(&format!("Mistake: {}'s vote is marked as cast by mistake", mistaken[0])),
        "{text}"
    );
}

/// The roll call: every member's vote, as the fake's rows say.
fn check_roll_call(roll: &Value, decision: &Map<String, Value>, text: &str) {
    assert_eq!(roll["vote_kind"], "Hoofdelijk");
    assert_eq!(roll["roll_call"], true);
    assert_eq!(roll["outcome"], "adopted");
    assert_eq!(roll["is_final"], true);
    let rows = votes_on(decision["Id"].as_str().unwrap());
    assert_eq!(rows.len(), 150);
    let mut want: Vec<(String, String, String)> = rows
        .iter()
        .map(|r| {
            (
                r["ActorNaam"].as_str().unwrap().to_owned(),
                r["ActorFractie"].as_str().unwrap().to_owned(),
                r["Soort"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // Every member's vote, each faction and vote written once.
    let mut got: Vec<(String, String, String)> = members(roll);
    assert!(
        roll["members"].as_array().unwrap().len() < 3 * roll["factions"].as_array().unwrap().len(),
        "grouped by faction and vote"
    );
    want.sort();
    got.sort();
    assert_eq!(got, want);
    assert_eq!(totals(roll), tally(&rows));
    // A faction split in a roll call is `verdeeld`, its dissenter named in the text.
    let split: BTreeMap<&str, &str> = roll["factions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["faction"].as_str().unwrap(), f["vote"].as_str().unwrap()))
        .collect();
    let dissent = rows
        .iter()
        .find(|r| r["ActorFractie"] == "VVD" && r["Soort"] == "Voor")
        .expect("the fake's VVD dissenter");
    assert_eq!(split["VVD"], "verdeeld");
    assert!(
        text.contains(&format!("{} Voor", dissent["ActorNaam"].as_str().unwrap())),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn votes_found_by_words_page_over_cases_and_over_the_platforms_skiptoken() {
    let (f, server, mut mcp) = start("tk-votes-words").await;
    let before = f.tk.requests();
    let (text, v) = ok(&mcp.call("tk_votes", json!({"query": VOTES_WORD, "limit": 10})).await);
    // The voted cases with the word, most recently started first.
    let mut want: Vec<&Map<String, Value>> = tk_corpus()
        .zaken()
        .iter()
        .filter(|z| z["Verwijderd"] == false)
        .filter(|z| {
            let has = |k: &str| z[k].as_str().unwrap_or("").to_lowercase().contains(VOTES_WORD);
            has("Titel") || has("Onderwerp")
        })
        .filter(|z| !tk_corpus().besluiten_of(z["Id"].as_str().unwrap()).is_empty())
        .collect();
    want.sort_by(|a, b| b["GestartOp"].as_str().cmp(&a["GestartOp"].as_str()));
    let numbers: Vec<&str> = want.iter().map(|z| z["Nummer"].as_str().unwrap()).collect();
    assert_eq!(numbers, [HELD_NUMBER, AMENDMENT_NUMBER, MOTION_NUMBER, BILL_NUMBER]);
    let mut got: Vec<&str> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    got.dedup();
    assert_eq!(got, numbers, "{text}");
    assert_eq!(v["total"], json!(4));
    assert_eq!(v["next_offset"], Value::Null);
    // 330 votes over two pages, the second named by the platform's $skiptoken.
    let rows: usize = want
        .iter()
        .flat_map(|z| tk_corpus().besluiten_of(z["Id"].as_str().unwrap()))
        .map(|d| votes_on(d["Id"].as_str().unwrap()).len())
        .sum();
    assert!(rows > 250, "{rows}");
    let sent = 1 + rows.div_ceil(250) as u64;
    assert_eq!(f.tk.requests(), before + sent);
    // R-L8: every request is its own admission, counted as it went out — the
    // cases, then each page of votes (one admission for three requests before).
    assert_eq!(platform_calls(&server, "tk").await, sent, "each request an admission");
    let bill = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == BILL_NUMBER)
        .expect("the bill");
    assert_eq!(members(bill).len(), 150, "read past the page boundary");
    // The held-over motion: a decision without votes, not final.
    let held = &v["results"][0];
    assert_eq!(
        (held["outcome"].clone(), held["is_final"].clone()),
        (json!("held over"), json!(false))
    );
    assert!(text.contains("No votes were cast on it."), "{text}");

    // Default limit 3, then `offset` for the rest.
    let (_, first) = ok(&mcp.call("tk_votes", json!({"query": VOTES_WORD})).await);
    assert_eq!(first["next_offset"], json!(3));
    let (_, rest) = ok(&mcp.call("tk_votes", json!({"query": VOTES_WORD, "offset": 3})).await);
    assert_eq!(rest["results"][0]["id"], BILL_NUMBER);
    assert_eq!(rest["next_offset"], Value::Null);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn what_tk_votes_cannot_answer_it_says_without_inventing() {
    let (f, server, mut mcp) = start("tk-votes-none").await;
    let before = f.tk.requests();
    for args in [
        json!({}),
        json!({"id": MOTION_NUMBER, "query": VOTES_WORD}),
        json!({"id": "2025D17647"}),
        json!({"id": MOTION_NUMBER, "limit": 2}),
        json!({"query": VOTES_WORD, "limit": 11}),
    ] {
        let message = err(&mcp.call("tk_votes", args.clone()).await);
        assert!(message.starts_with("tk_votes"), "{args}: {message}");
    }
    assert_eq!(f.tk.requests(), before, "nothing asked for bad arguments");
    // A case the Kamer does not have: said, with how to find one.
    let (text, v) = ok(&mcp.call("tk_votes", json!({"id": "2025Z99999"})).await);
    assert_eq!(v["results"], json!([]));
    assert!(text.contains("has no case 2025Z99999"), "{text}");
    // Words with no voted case: what was searched and how to widen it.
    let (text, v) = ok(&mcp.call("tk_votes", json!({"query": "stikstof"})).await);
    assert_eq!((v["results"].clone(), v["total"].clone()), (json!([]), json!(0)));
    assert!(
        text.contains("No case put to the vote") && text.contains("To widen"),
        "{text}"
    );
    server.stop().await;
}
