//! The search tool and the platforms' own searches: every keyword platform asked once
//! with each result readable by fetch, a retry and bad arguments, a slow or failing
//! platform named, an organization's name resolved first, old argument names with a note,
//! and each progress notification on its own stream before the result.

use crate::support;

use std::time::Duration;

use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, search_groups, structured, temp_dir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tk_search_takes_query_and_its_old_name_words_with_a_note() {
    let f = fakes().await;
    let dir = temp_dir("mcp-tk-words");
    let server = Server::start(config(&f, &dir)).await;
    let mut tk = Mcp::initialize(server.url("/mcp/tk")).await;
    let by_query = tk.call("tk_search", json!({"query": "stikstof", "limit": "2"})).await;
    let by_words = tk.call("tk_search", json!({"words": "stikstof", "limit": 2})).await;
    assert_eq!(
        structured(&by_query)["results"],
        structured(&by_words)["results"],
        "the same search"
    );
    let text = |r: &support::Reply| {
        r.message
            .as_ref()
            .map(|m| m["result"]["content"][0]["text"].to_string())
            .unwrap_or_default()
    };
    assert!(!text(&by_query).contains("now called `query`"), "{}", text(&by_query));
    assert!(
        text(&by_words).contains("`words` is now called `query`"),
        "{}",
        text(&by_words)
    );
    let none = support::tool_error_text(&tk.call("tk_search", json!({"limit": 2})).await);
    assert!(none.contains("give `query`"), "{none}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_organization_name_is_resolved_before_openbesluitvorming_is_asked() {
    let f = fakes().await;
    let dir = temp_dir("mcp-obv-names");
    let server = Server::start(config(&f, &dir)).await;
    let mut obv = Mcp::initialize(server.url("/mcp/obv")).await;
    let text = |r: &support::Reply| {
        r.message.as_ref().expect("message")["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned()
    };
    let candidates = |r: &support::Reply| -> Vec<String> {
        structured(r)["candidates"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|c| c["id"].as_str().map(str::to_owned))
            .collect()
    };
    // The first call reads the list of sources from the platform: it does not say that
    // nothing was asked, and answers (no tool error: Inspector 2 exits on a result
    // without the structured content its schema promises) with the candidates.
    let before = f.obv.requests();
    let first = obv
        .call(
            "obv_search",
            json!({"query": "fietsparkeren", "organization": "Utrecht"}),
        )
        .await;
    assert_eq!(f.obv.requests(), before + 1, "the list of sources, no search");
    assert!(
        !text(&first).contains("nothing was asked") && text(&first).contains("list of sources was read"),
        "{}",
        text(&first)
    );
    assert_eq!(candidates(&first), ["gemeente-utrecht", "provincie-utrecht"]);
    assert_eq!(structured(&first)["results"], json!([]));
    // The list of sources, kept.
    let listed = obv.call("obv_sources", json!({"name": "utrecht"})).await;
    assert!(structured(&listed)["results"].as_array().is_some_and(|s| s.len() >= 2));
    let before = f.obv.requests();
    let ambiguous = obv
        .call(
            "obv_search",
            json!({"query": "fietsparkeren", "organization": "Utrecht"}),
        )
        .await;
    assert!(
        text(&ambiguous).contains("`gemeente-utrecht` (Gemeente Utrecht)")
            && text(&ambiguous).contains("`provincie-utrecht` (Provincie Utrecht)")
            && text(&ambiguous).contains("nothing was asked"),
        "{}",
        text(&ambiguous)
    );
    assert_eq!(candidates(&ambiguous), ["gemeente-utrecht", "provincie-utrecht"]);
    let unknown = obv
        .call(
            "obv_search",
            json!({"query": "fietsparkeren", "organization": "gemeente Utrech"}),
        )
        .await;
    assert!(
        candidates(&unknown).contains(&"gemeente-utrecht".to_owned()),
        "the nearest: {}",
        text(&unknown)
    );
    assert_eq!(
        f.obv.requests(),
        before,
        "no platform request for a name it would refuse"
    );
    // A name of one source is that source's key.
    let by_name = obv
        .call(
            "obv_search",
            json!({"query": "begroting", "organization": "Gemeente Utrecht", "limit": 3}),
        )
        .await;
    let by_key = obv
        .call(
            "obv_search",
            json!({"query": "begroting", "organization": "gemeente-utrecht", "limit": 3}),
        )
        .await;
    assert_eq!(structured(&by_name)["results"], structured(&by_key)["results"]);
    assert_eq!(f.obv.requests(), before + 1, "one search, the second from the buffer");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_asks_every_keyword_platform_once_and_each_result_reads_with_fetch() {
    let f = fakes().await;
    let dir = temp_dir("mcp-search");
    let server = Server::start(config(&f, &dir)).await;
    let mut one = Mcp::initialize(server.url("/mcp/obv")).await;
    assert!(
        !one.list_tools().await.iter().any(|t| t["name"] == "search"),
        "only at /mcp"
    );
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    assert!(all.list_tools().await.iter().any(|t| t["name"] == "search"));
    let before: Vec<u64> = f.all.iter().map(|h| h.requests()).collect();
    let r = all.call("search", json!({"query": "stikstof", "limit": "3"})).await;
    let groups = search_groups(&r);
    let ok: Vec<&String> = groups
        .iter()
        .filter(|(_, g)| g["status"] == "ok")
        .map(|(p, _)| p)
        .collect();
    assert!(ok.len() >= 4, "at least four platforms answered: {groups:?}");
    assert_eq!(groups["rechtspraak"]["status"], "no_keyword_search");
    assert!(
        groups["rechtspraak"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("rechtspraak_search"))
    );
    // One list; the first result of each platform reads with `fetch` by the id given.
    let results = structured(&r)["results"].as_array().cloned().expect("results");
    let mut read = 0;
    for (platform, g) in &groups {
        let mine: Vec<&Value> = results.iter().filter(|x| x["platform"] == json!(platform)).collect();
        assert_eq!(
            Some(mine.len() as u64),
            g["shown"].as_u64(),
            "{platform}: its results are in the list"
        );
        for item in mine.into_iter().take(2) {
            let id = item["id"].as_str().expect("an id");
            let opened = all.call("fetch", json!({ "id": id })).await;
            let message = opened.message.clone().unwrap_or_default();
            if message.to_string().contains("no text layer") {
                continue; // a scan: the reading tool's own answer, passed on
            }
            assert!(
                message["result"]["isError"] != json!(true),
                "{platform}: fetch reads `{id}`: {message}"
            );
            assert_eq!(
                message["result"]["structuredContent"]["metadata"]["platform"],
                json!(platform),
                "{platform}: `{id}` is read on its own platform"
            );
            // The platform's own reading tool reads the same id.
            let tool = item["tool"].as_str().expect("a reading tool");
            let own = all.call(tool, json!({ "id": id })).await;
            let own = own.message.clone().unwrap_or_default();
            assert!(
                own["result"]["isError"] != json!(true),
                "{platform}: {tool} reads `{id}`: {own}"
            );
            read += 1;
            break;
        }
    }
    assert!(read >= 4, "a result of each answering platform was read");
    // Asked again: every answer from the buffer, nothing asked of any platform.
    let after_first: Vec<u64> = f.all.iter().map(|h| h.requests()).collect();
    assert_ne!(before, after_first);
    let again = all.call("search", json!({"query": "stikstof", "limit": 3})).await;
    assert_eq!(search_groups(&again).len(), groups.len());
    let after_second: Vec<u64> = f.all.iter().map(|h| h.requests()).collect();
    let reads = read as u64;
    assert!(
        after_second.iter().sum::<u64>() == after_first.iter().sum::<u64>(),
        "the repeat is answered from the buffer ({reads} reads in between were before it)"
    );
    server.stop().await;
}

/// `search` is a tool call like any other: a retry of its request id gets the
/// first result from the replay table, and its arguments are checked by the stack.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retried_search_gets_the_first_result_and_bad_arguments_are_the_stacks_error() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("mcp-search-replay"))).await;
    let mut c = Mcp::initialize(server.url("/mcp")).await;
    let first = c
        .call_with_id(11, "search", json!({"query": "woningbouw", "limit": 2}))
        .await;
    let first_result = first.message.as_ref().expect("answer")["result"].clone();
    structured(&first);
    let (replays_before, _) = server.state.replay_counts();
    let asked: u64 = f.all.iter().map(|h| h.requests()).sum();
    let retry = c
        .call_with_id(11, "search", json!({"limit": 2, "query": "woningbouw"}))
        .await;
    assert_eq!(retry.message.as_ref().expect("answer")["result"], first_result);
    assert_eq!(
        server.state.replay_counts().0,
        replays_before + 1,
        "answered as a replay"
    );
    assert_eq!(f.all.iter().map(|h| h.requests()).sum::<u64>(), asked);
    // Outside its schema: refused before any platform is asked, naming the tool.
    let long = "x".repeat(501);
    let refused = c.call("search", json!({ "query": long })).await;
    let text = support::tool_error_text(&refused);
    assert!(text.contains("search") && text.contains("query"), "{text}");
    assert_eq!(f.all.iter().map(|h| h.requests()).sum::<u64>(), asked);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn search_reports_a_slow_platform_as_pending_and_a_failing_one_by_name() {
    let f = fakes().await;
    let dir = temp_dir("mcp-search-pending");
    let mut c = config(&f, &dir);
    c.request_timeout_secs = 3; // search waits 1 s for the slowest
    let server = Server::start(c).await;
    f.obv.set_latency(Duration::from_secs(2));
    f.all
        .get(besluitbron_server::platforms::ob::PLATFORM)
        .expect("ob")
        .set_fail_every(Some(1));
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let r = all.call("search", json!({"query": "begroting"})).await;
    let groups = search_groups(&r);
    assert_eq!(groups["obv"]["status"], "pending", "{groups:?}");
    assert!(
        groups["obv"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("asking again"))
    );
    assert_eq!(groups["ob"]["status"], "failed");
    assert!(
        groups["ob"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("Officiële Bekendmakingen")),
        "{groups:?}"
    );
    assert_eq!(groups["tk"]["status"], "ok");
    // The slow search went on and landed in the buffer: asked again, it is there.
    let obv_requests = f.obv.requests();
    assert!(
        support::eventually(Duration::from_secs(10), async || {
            let again = all.call("search", json!({"query": "begroting"})).await;
            search_groups(&again)["obv"]["status"] == "ok"
        })
        .await,
        "the pending search's answer is served once it arrived"
    );
    assert_eq!(f.obv.requests(), obv_requests, "from the buffer, not asked again");
    let bad = support::tool_error_text(
        &all.call("search", json!({"query": "x", "date_from": "1 januari 2026"}))
            .await,
    );
    assert!(bad.contains("YYYY-MM-DD"), "{bad}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_refused_by_besluitbron_itself_does_not_blame_the_platform() {
    let f = fakes().await;
    let dir = temp_dir("mcp-obv-empty-args");
    let server = Server::start(config(&f, &dir)).await;
    let mut obv = Mcp::initialize(server.url("/mcp/obv")).await;
    let before = f.obv.requests();
    let text = support::tool_error_text(&obv.call("obv_search", json!({})).await);
    assert!(
        text.contains("give a query, an organization, or both")
            && text.contains("nothing was asked of OpenBesluitvorming")
            && !text.contains("refused"),
        "{text}"
    );
    assert_eq!(f.obv.requests(), before);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rechtspraak_without_filters_says_it_searched_all_rulings() {
    let f = fakes().await;
    let dir = temp_dir("mcp-rs-all");
    let server = Server::start(config(&f, &dir)).await;
    let mut rs = Mcp::initialize(server.url("/mcp/rechtspraak")).await;
    let r = rs.call("rechtspraak_search", json!({})).await;
    let text = r
        .message
        .as_ref()
        .map(|m| m["result"]["content"][0]["text"].to_string())
        .unwrap_or_default();
    assert!(
        text.contains("for all rulings with a published text") && !text.contains("for with"),
        "{text}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activity_found_by_opentk_search_opens_with_opentk_activity() {
    let f = fakes().await;
    let dir = temp_dir("mcp-opentk-activities");
    let server = Server::start(config(&f, &dir)).await;
    let mut c = Mcp::initialize(server.url("/mcp/opentk")).await;
    let r = c
        .call("opentk_search", json!({"query": "Kamer", "kind": "activiteiten"}))
        .await;
    let text = r
        .message
        .as_ref()
        .map(|m| m["result"]["content"][0]["text"].to_string())
        .unwrap_or_default();
    assert!(text.contains("read with opentk_activity"), "{text}");
    let hits = structured(&r)["results"].as_array().expect("results").clone();
    assert!(!hits.is_empty(), "{text}");
    for h in hits.iter().take(2) {
        let number = h["id"].as_str().expect("a number");
        assert!(number.contains('A'), "an activity's number: {number}");
        assert_eq!(h["tool"], "opentk_activity", "{h}");
        let opened = c.call("opentk_activity", json!({"id": number})).await;
        assert_ne!(structured(&opened), Value::Null, "{number} opens: {:?}", opened.message);
    }
    server.stop().await;
}

/// The progress notifications in an answer's stream, and whether each came before the
/// result (the line holding `"result"`).
fn progress_before_result(text: &str) -> (Vec<String>, bool) {
    let mut progress = Vec::new();
    let mut seen_result = false;
    let mut all_before = true;
    for line in text.lines().filter(|l| l.starts_with("data:")) {
        let Ok(message) = serde_json::from_str::<Value>(line.trim_start_matches("data:").trim()) else {
            continue;
        };
        if message["method"] == "notifications/progress" {
            all_before &= !seen_result;
            progress.push(message["params"]["message"].as_str().unwrap_or_default().to_owned());
        } else if message.get("result").is_some() {
            seen_result = true;
        }
    }
    (progress, all_before && seen_result)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_42_every_progress_of_a_search_comes_on_its_own_stream_before_its_result() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("search-progress"))).await;
    let url = server.url("/mcp");
    // One notification per platform with a keyword search, as the registry declares them.
    let keyword = besluitbron_server::connectors::CONNECTORS
        .iter()
        .filter(|c| matches!(c.search, besluitbron_server::connectors::search::KeywordSearch::Tool(_)))
        .count();
    let last = format!("({keyword} of {keyword})");
    let call = |id: i64, token: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
            "name": "search", "arguments": {"query": "begroting", "limit": 1},
            "_meta": {"progressToken": token}}})
    };
    // 2025 era: a session; the notifications of the request are on the POST's own stream
    // (not the session's standing GET stream), before the result, the last ("N of N")
    // included.
    let session = Mcp::initialize(url.clone()).await;
    let r = session.post(call(1, "p-legacy")).await;
    structured(&r);
    let (progress, before) = progress_before_result(&r.text);
    assert!(before, "every notification before the result: {}", r.text);
    assert_eq!(progress.len(), keyword, "one per keyword platform: {progress:?}");
    assert!(progress.last().is_some_and(|m| m.ends_with(&last)), "{progress:?}");
    // 2026-07-28 era: stateless; the answer becomes a stream carrying all of them, then
    // the result.
    let modern = Mcp::modern(url);
    let r = modern.post(call(2, "p-modern")).await;
    structured(&r);
    let (progress, before) = progress_before_result(&r.text);
    assert!(before, "every notification before the result: {}", r.text);
    assert_eq!(progress.len(), keyword, "{progress:?}");
    assert!(progress.last().is_some_and(|m| m.ends_with(&last)), "{progress:?}");
}
