//! What `/mcp` lists, and the rule it keeps: every argument of every platform tool is
//! reachable from `/mcp`'s list — its tool is listed there, or `search`, `fetch` or
//! `lists` take that argument with the same meaning and pass it on by its name. Questions
//! that are no search, no read and no reference list or status (votes, debates) stay
//! listed; the list stays within 48 KiB. A client adds whole platform tool sets by its
//! address or a header.

use crate::support;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};
use support::{Mcp, Server, config, fakes, search_groups, structured, temp_dir};

use besluitbron_server::connectors::CONNECTORS;

/// The most `/mcp`'s `tools/list` result may take, as compact JSON.
const LIST_BUDGET_BYTES: usize = 48 * 1024;

/// `search`'s own arguments, which no platform tool's argument of the same name means.
const SEARCH_OWN: [&str; 2] = ["query", "limit"];

fn by_name(tools: Vec<Value>) -> BTreeMap<String, Value> {
    tools
        .into_iter()
        .map(|t| (t["name"].as_str().expect("a name").to_owned(), t))
        .collect()
}

/// A tool's arguments, each with a `$ref` replaced by its definition.
fn arguments(tool: &Value) -> Map<String, Value> {
    let schema = &tool["inputSchema"];
    let defs = schema["$defs"].as_object().cloned().unwrap_or_default();
    let mut out = Map::new();
    for (name, p) in schema["properties"].as_object().cloned().unwrap_or_default() {
        let mut p = p.as_object().cloned().unwrap_or_default();
        if let Some(Value::String(r)) = p.remove("$ref") {
            let mut def = defs[r.trim_start_matches("#/$defs/")]
                .as_object()
                .cloned()
                .expect("its definition");
            def.extend(p);
            p = def;
        }
        out.insert(name, Value::Object(p));
    }
    out
}

/// Why `by`'s argument does not take every value `own` does, if it does not.
fn takes_every_value(own: &Value, by: &Value) -> Result<(), String> {
    if own["type"] != by["type"] {
        return Err(format!("type {} against {}", own["type"], by["type"]));
    }
    if own.get("format").is_some() && own["format"] != by["format"] {
        return Err(format!("format {} against {}", own["format"], by["format"]));
    }
    if let (Some(values), Some(taken)) = (own["enum"].as_array(), by["enum"].as_array())
        && let Some(v) = values.iter().find(|v| !taken.contains(v))
    {
        return Err(format!("the value {v} is not among {}'s", by["enum"]));
    }
    let length = |s: &Value| s["maxLength"].as_u64();
    if let (Some(own), Some(by)) = (length(own), length(by))
        && by < own
    {
        return Err(format!("at most {by} characters, where the tool takes {own}"));
    }
    Ok(())
}

#[tokio::test]
async fn every_argument_of_every_platform_tool_is_reachable_from_mcps_list() {
    let fakes = fakes().await;
    let server = Server::start(config(&fakes, &temp_dir("surface-rule"))).await;
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let listed = by_name(all.list_tools().await);
    let mut stood_in = Vec::new();
    for c in CONNECTORS {
        let own = by_name(
            Mcp::initialize(server.url(&format!("/mcp/{}", c.id)))
                .await
                .list_tools()
                .await,
        );
        assert!(!own.is_empty(), "{}: its address lists its tools", c.id);
        for (name, tool) in &own {
            if listed.contains_key(name) {
                continue;
            }
            // Not listed: `search`, `fetch` or `lists` take every argument it has.
            let problems: Vec<String> = ["search", "fetch", "lists"]
                .iter()
                .filter_map(|by| {
                    let by_args = arguments(listed.get(*by)?);
                    let missing: Vec<String> = arguments(tool)
                        .iter()
                        .filter(|(n, _)| !(*by == "search" && SEARCH_OWN.contains(&n.as_str())))
                        .filter_map(|(n, own)| match by_args.get(n) {
                            None => Some(format!("{by} has no `{n}`")),
                            Some(taken) => takes_every_value(own, taken)
                                .err()
                                .map(|e| format!("{by}'s `{n}`: {e}")),
                        })
                        .collect();
                    (!missing.is_empty()).then(|| missing.join("; "))
                })
                .collect();
            assert!(
                problems.len() < 3,
                "{name} is not listed at /mcp, and none of search, fetch and lists take all its arguments: {problems:?}"
            );
            stood_in.push(name.clone());
        }
    }
    // What the rule is for: the keyword searches and plain readers give their place to
    // search and fetch; the questions that are no search and no read stay.
    let gone = [
        "obv_search",
        "ob_search",
        "tk_search",
        "opentk_search",
        "bwb_search",
        "cvdr_search",
        "ob_document",
        "obv_document",
        "tk_document_text",
        "rechtspraak_ruling",
        "obv_sources",
        "obv_status",
        "tk_factions",
        "tk_committees",
        "rechtspraak_courts",
        "rechtspraak_areas",
        "rechtspraak_procedures",
        "opentk_status",
        "ori_sources",
        // Readers with a view: fetch takes their arguments, and its view draws theirs.
        "tk_debate",
        "bwb_read",
        "cvdr_read",
        "eurlex_read",
        "opentk_document",
    ];
    for name in gone {
        assert!(
            stood_in.iter().any(|n| n == name),
            "{name} is stood in for: {stood_in:?}"
        );
    }
    for name in ["tk_votes", "tk_debates", "rechtspraak_search", "lists"] {
        assert!(listed.contains_key(name), "{name} stays listed at /mcp");
    }
    let list = all.request("tools/list", json!({})).await;
    let bytes = serde_json::to_string(&list.message.expect("an answer")["result"])
        .expect("JSON")
        .len();
    assert!(bytes <= LIST_BUDGET_BYTES, "/mcp's tools/list takes {bytes} bytes");
    server.stop().await;
}

#[tokio::test]
async fn search_passes_each_argument_to_the_platforms_that_take_it_and_names_the_rest() {
    let fakes = fakes().await;
    let server = Server::start(config(&fakes, &temp_dir("surface-search"))).await;
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    // `publication` is ob's alone; `sort: newest` is one of ob's orders and none of obv's.
    let asked = json!({"query": "omgevingsvisie", "limit": 3, "platforms": ["ob", "obv", "tk"],
        "publication": "Gemeenteblad", "sort": "newest"});
    let r = all.call("search", asked).await;
    let groups = search_groups(&r);
    assert_eq!(
        groups.keys().collect::<Vec<_>>(),
        ["ob", "obv", "tk"],
        "only the platforms chosen"
    );
    assert!(groups["ob"].get("ignored").is_none(), "ob takes both: {}", groups["ob"]);
    assert_eq!(
        groups["obv"]["ignored"],
        json!(["publication", "sort"]),
        "{}",
        groups["obv"]
    );
    assert_eq!(
        groups["tk"]["ignored"],
        json!(["publication", "sort"]),
        "{}",
        groups["tk"]
    );
    // ob's part is ob_search asked the same: the same results, in the same order.
    let ids = |v: &Value, key: &str, platform: Option<&str>| -> Vec<String> {
        v[key]
            .as_array()
            .expect("a list")
            .iter()
            .filter(|x| platform.is_none_or(|p| x["platform"] == json!(p)))
            .filter_map(|x| x["id"].as_str().map(str::to_owned))
            .collect()
    };
    let direct = all
        .call(
            "ob_search",
            json!({"query": "omgevingsvisie", "limit": 3, "publication": "Gemeenteblad", "sort": "newest"}),
        )
        .await;
    let direct = structured(&direct);
    let found = ids(&structured(&r), "results", Some("ob"));
    assert!(!found.is_empty(), "the fake publishes Gemeenteblad: {}", structured(&r));
    let direct_key = if direct.get("results").is_some() {
        "results"
    } else {
        "items"
    };
    assert_eq!(found, ids(&direct, direct_key, None), "{direct}");
    // A name no platform takes, or a platform not served, is refused before any is asked.
    for (bad, says) in [
        (json!({"query": "a", "court": "x"}), "`court`"),
        (json!({"query": "a", "platforms": ["nosuch"]}), "`nosuch`"),
    ] {
        let text = support::tool_error_text(&all.call("search", bad).await);
        assert!(text.contains(says) && text.contains("nothing asked"), "{text}");
    }
    server.stop().await;
}

#[tokio::test]
async fn fetch_reads_a_page_as_the_reading_tool_it_stands_in_for() {
    let fakes = fakes().await;
    let server = Server::start(config(&fakes, &temp_dir("surface-fetch"))).await;
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let listed = by_name(all.list_tools().await);
    // (an id the fakes serve, the reading tool it is read with)
    let cases = [
        ("gmb-2026-10000", "ob_document"),
        ("ECLI:NL:PHR:2026:400", "rechtspraak_ruling"),
        ("72f7ab9b-dc59-4e67-8a04-798a744c256e", "tk_document_text"),
    ];
    for (id, tool) in cases {
        assert!(!listed.contains_key(tool), "{tool} is read through fetch at /mcp");
        let page = json!({"id": id, "offset": 40, "length": 120});
        let fetched = structured(&all.call("fetch", page.clone()).await);
        let own = all.call(tool, page).await;
        let own_text: Vec<&str> = own.message.as_ref().expect("an answer")["result"]["content"]
            .as_array()
            .expect("its content")
            .iter()
            .filter_map(|c| c["text"].as_str())
            .collect();
        assert!(fetched["text"].as_str().is_some_and(|t| !t.is_empty()), "{fetched}");
        // The second reading comes from the buffer, and says so.
        let own_text = own_text.join("\n").replace(" (from BesluitBron's buffer)", "");
        assert_eq!(fetched["text"], json!(own_text), "{tool} `{id}`: the same page");
        assert_eq!(fetched["metadata"]["tool"], json!(tool), "{fetched}");
    }
    server.stop().await;
}

#[tokio::test]
async fn fetch_passes_each_readers_own_arguments_and_refuses_what_its_reader_does_not_take() {
    let fakes = fakes().await;
    let server = Server::start(config(&fakes, &temp_dir("surface-fetch-arguments"))).await;
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let listed = by_name(all.list_tools().await);
    let fetch = arguments(&listed["fetch"]);
    for name in ["date", "article", "language", "speaker", "party", "source"] {
        assert!(fetch.contains_key(name), "fetch takes `{name}`: {fetch:?}");
    }
    assert_eq!(
        listed["fetch"]["_meta"]["ui"]["resourceUri"],
        json!("ui://besluitbron/read"),
        "fetch's own view"
    );
    let law = besluitbron_fakes::bwb::FIREWORKS_LAW;
    // (the reading tool, the arguments both are given)
    let cases = [
        ("bwb_read", json!({"id": law, "date": "2025-08-01", "article": "2"})),
        ("bwb_read", json!({"id": law, "date": "2025-01-01", "article": "2"})),
        (
            "eurlex_read",
            json!({"id": "32024R0903", "language": "en", "article": "1"}),
        ),
    ];
    let mut texts = Vec::new();
    for (tool, asked) in cases {
        assert!(!listed.contains_key(tool), "{tool} is read through fetch at /mcp");
        let fetched = structured(&all.call("fetch", asked.clone()).await);
        let own = structured(&all.call(tool, asked.clone()).await);
        assert_eq!(fetched["metadata"]["tool"], json!(tool), "{fetched}");
        for field in ["article", "asked_date", "language"] {
            assert_eq!(fetched["metadata"][field], own[field], "{tool} {asked}: `{field}`");
        }
        assert!(fetched["text"].as_str().is_some_and(|t| !t.is_empty()), "{fetched}");
        texts.push(fetched["text"].clone());
    }
    assert_ne!(texts[0], texts[1], "the article as in force on two days: two texts");
    // An argument the id's reader does not take, or that no reader takes: refused by name,
    // nothing asked.
    for (bad, says) in [
        (
            json!({"id": "ECLI:NL:PHR:2026:400", "speaker": "Pool"}),
            vec!["rechtspraak_ruling", "`speaker`"],
        ),
        (json!({"id": law, "nosuch": 1}), vec!["`nosuch`", "article"]),
    ] {
        let text = support::tool_error_text(&all.call("fetch", bad.clone()).await);
        for s in says {
            assert!(text.contains(s) && text.contains("nothing asked"), "{bad}: {s}: {text}");
        }
    }
    server.stop().await;
}

#[tokio::test]
async fn a_client_adds_whole_tool_sets_by_address_or_header() {
    let fakes = fakes().await;
    let server = Server::start(config(&fakes, &temp_dir("surface-toolsets"))).await;
    let names = |tools: Vec<Value>| by_name(tools).into_keys().collect::<Vec<_>>();
    let default = names(Mcp::initialize(server.url("/mcp")).await.list_tools().await);
    let tk = names(Mcp::initialize(server.url("/mcp/tk")).await.list_tools().await);
    // By the address: /mcp's list and tk's whole set.
    let chosen = names(Mcp::initialize(server.url("/mcp?toolsets=tk")).await.list_tools().await);
    let mut expected: Vec<String> = default.iter().chain(&tk).cloned().collect();
    expected.sort();
    expected.dedup();
    assert_eq!(chosen, expected);
    assert!(chosen.contains(&"tk_search".to_owned()) && !default.contains(&"tk_search".to_owned()));
    // By the header, at a platform's address: tk's set and cvdr's.
    let mut with_header = Mcp::initialize(server.url("/tk/mcp")).await;
    with_header.extra_headers.push(("X-MCP-Toolsets".into(), "cvdr".into()));
    let listed = names(with_header.list_tools().await);
    assert!(
        listed.contains(&"cvdr_search".to_owned()) && listed.contains(&"tk_votes".to_owned()),
        "{listed:?}"
    );
    assert!(!listed.contains(&"obv_sources".to_owned()), "{listed:?}");
    // `all`: every tool of every platform.
    let every = names(
        Mcp::initialize(server.url("/mcp?toolsets=all"))
            .await
            .list_tools()
            .await,
    );
    for c in CONNECTORS {
        let own = names(
            Mcp::initialize(server.url(&format!("/mcp/{}", c.id)))
                .await
                .list_tools()
                .await,
        );
        assert!(own.iter().all(|t| every.contains(t)), "{}: {own:?}", c.id);
    }
    // A set that does not exist is refused by name, with the sets there are.
    let mut wrong = Mcp::initialize(server.url("/mcp?toolsets=tk,nosuch")).await;
    let reply = wrong.request("tools/list", json!({})).await;
    let error = &reply.message.as_ref().expect("an answer")["error"];
    assert_eq!(error["code"], json!(-32602), "{error}");
    let message = error["message"].as_str().unwrap_or("");
    assert!(message.contains("`nosuch`") && message.contains("eurlex"), "{message}");
    server.stop().await;
}

#[tokio::test]
async fn lists_answers_each_list_as_its_own_tool_does_and_refuses_what_it_does_not_take() {
    let fakes = fakes().await;
    let server = Server::start(config(&fakes, &temp_dir("surface-lists"))).await;
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let listed = by_name(all.list_tools().await);
    let lists = &listed["lists"];
    let platforms = lists["inputSchema"]["properties"]["platform"]["enum"].clone();
    // Every list of every connector, by its platform and name: the tool's own result.
    for c in CONNECTORS {
        assert_eq!(
            platforms.as_array().is_some_and(|p| p.contains(&json!(c.id))),
            !c.lists.is_empty(),
            "{}: {platforms}",
            c.id
        );
        for tool in c.lists {
            assert!(
                !listed.contains_key(tool.name),
                "{} is answered by lists at /mcp",
                tool.name
            );
            let list = tool
                .name
                .strip_prefix(&format!("{}_", c.id))
                .expect("named after its platform");
            let own = all.call(tool.name, json!({})).await;
            let own = own.message.expect("an answer")["result"].clone();
            let by_lists = all.call("lists", json!({"platform": c.id, "list": list})).await;
            let by_lists = by_lists.message.expect("an answer")["result"].clone();
            assert_eq!(by_lists["isError"], own["isError"], "{}: {by_lists}", tool.name);
            assert_eq!(by_lists["structuredContent"], own["structuredContent"], "{}", tool.name);
            // The text as the tool gave it (the second time from the buffer), then who answered.
            let texts = |r: &Value| -> Vec<String> {
                r["content"]
                    .as_array()
                    .expect("content")
                    .iter()
                    .filter_map(|c| c["text"].as_str())
                    .map(|t| t.replace(" (from BesluitBron's buffer)", ""))
                    .collect()
            };
            let (own_text, lists_text) = (texts(&own), texts(&by_lists));
            assert_eq!(lists_text[..own_text.len()], own_text[..], "{}", tool.name);
            assert!(
                lists_text.last().is_some_and(|t| t.contains(tool.name)),
                "{}: {lists_text:?}",
                tool.name
            );
            assert_eq!(by_lists["_meta"]["besluitbron/tool"], json!(tool.name));
        }
    }
    // A list's own arguments pass on; one it does not take is refused with those it takes.
    let courts = structured(
        &all.call(
            "lists",
            json!({"platform": "rechtspraak", "list": "courts", "filter": "Gerechtshof"}),
        )
        .await,
    );
    let direct = structured(&all.call("rechtspraak_courts", json!({"filter": "Gerechtshof"})).await);
    assert_eq!(courts, direct);
    for (bad, says) in [
        (
            json!({"platform": "rechtspraak", "list": "courts", "state": "any"}),
            vec!["`state`", "`filter`", "`include_ended`", "nothing asked"],
        ),
        (
            json!({"platform": "tk", "list": "courts"}),
            vec!["factions", "committees"],
        ),
        (
            json!({"platform": "bwb", "list": "sources"}),
            vec!["obv", "rechtspraak"],
        ),
        (
            json!({"platform": "obv", "list": "sources", "limit": 100_000}),
            vec!["obv_sources", "limit"],
        ),
    ] {
        let text = support::tool_error_text(&all.call("lists", bad.clone()).await);
        for s in says {
            assert!(text.contains(s), "{bad}: {s}: {text}");
        }
    }
    server.stop().await;
}
