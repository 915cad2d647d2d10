//! Resources, resource templates, prompts and completions end to end: the fake
//! platforms, the real server, a hand-rolled JSON-RPC client, in both protocol eras.
//! A read and a completion go through the tools' own path: a repeat is served from the
//! buffer (the fake sees no second request), a failing platform is an error that names
//! it and keeps nothing.

use crate::support;

use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, temp_dir};

const TK_DOC: &str = "72f7ab9b-dc59-4e67-8a04-798a744c256e";

async fn client(server: &Server, path: &str, modern: bool) -> Mcp {
    if modern {
        Mcp::modern(server.url(path))
    } else {
        Mcp::initialize(server.url(path)).await
    }
}

fn result(r: &Reply) -> &Value {
    let m = r
        .message
        .as_ref()
        .unwrap_or_else(|| panic!("no JSON-RPC message: {} {}", r.status, r.text));
    assert!(m.get("error").is_none(), "an error: {m}");
    &m["result"]
}

fn error(r: &Reply) -> (i64, String) {
    let m = r.message.as_ref().expect("a JSON-RPC message");
    let e = m.get("error").unwrap_or_else(|| panic!("expected an error: {m}"));
    (
        e["code"].as_i64().expect("a code"),
        e["message"].as_str().unwrap_or("").to_owned(),
    )
}

fn strings(v: &Value, field: &str) -> Vec<String> {
    v.as_array()
        .expect("an array")
        .iter()
        .map(|x| x[field].as_str().expect("a string").to_owned())
        .collect()
}

async fn read(c: &mut Mcp, uri: &str) -> Reply {
    c.request("resources/read", json!({"uri": uri})).await
}

async fn complete_prompt(c: &mut Mcp, prompt: &str, argument: &str, value: &str) -> Reply {
    c.request(
        "completion/complete",
        json!({"ref": {"type": "ref/prompt", "name": prompt}, "argument": {"name": argument, "value": value}}),
    )
    .await
}

fn values(r: &Reply) -> Vec<String> {
    result(r)["completion"]["values"]
        .as_array()
        .expect("values")
        .iter()
        .map(|v| v.as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_with_caching_hints_and_capabilities_in_both_eras() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-lists"))).await;
    for modern in [false, true] {
        the_lists_of_one_era(&server, modern).await;
    }
    capabilities_and_each_addresss_own_offers(&server).await;
    server.stop().await;
}

/// The lists of the era `modern` says, each with its caching hints: resources,
/// templates and prompts, the prompts' arguments described.
async fn the_lists_of_one_era(server: &Server, modern: bool) {
    let mut c = client(server, "/mcp", modern).await;
    let tools = c.request("tools/list", json!({})).await;
    let resources = c.request("resources/list", json!({})).await;
    let templates = c.request("resources/templates/list", json!({})).await;
    let prompts = c.request("prompts/list", json!({})).await;
    for (what, r) in [
        ("tools", &tools),
        ("resources", &resources),
        ("templates", &templates),
        ("prompts", &prompts),
    ] {
        let r = result(r);
        assert_eq!(r["ttlMs"], json!(3_600_000), "{what} ({modern}): {r}");
        assert_eq!(r["cacheScope"], "public", "{what} ({modern})");
    }
    assert_eq!(
        strings(&result(&resources)["resources"], "uri"),
        [
            "besluitbron://guide",
            "besluitbron://obv/sources",
            "besluitbron://tk/factions",
            "besluitbron://tk/committees",
            "besluitbron://rechtspraak/courts",
            "besluitbron://rechtspraak/areas",
            "besluitbron://rechtspraak/procedures",
            "besluitbron://ori/sources",
            // The views of the tools listed here (docs/views.md): fetch's draws the
            // debates and regulations it reads.
            "ui://besluitbron/vote",
            "ui://besluitbron/search",
            "ui://besluitbron/read",
        ]
    );
    assert_eq!(
        strings(&result(&templates)["resourceTemplates"], "uriTemplate"),
        [
            "besluitbron://obv/document/{id}",
            "besluitbron://tk/document/{id}",
            "besluitbron://rechtspraak/ruling/{id}",
            "besluitbron://opentk/document/{id}",
            "besluitbron://ob/publication/{id}",
            "besluitbron://bwb/regulation/{id}",
            "besluitbron://cvdr/regulation/{id}",
        ]
    );
    let prompts = &result(&prompts)["prompts"];
    assert_eq!(
        strings(prompts, "name"),
        [
            "gemeenteraad_besluit",
            "volg_kamerdossier",
            "rechtspraak_sinds",
            "officiele_bekendmaking"
        ]
    );
    for p in prompts.as_array().unwrap() {
        assert!(p["title"].as_str().is_some_and(|t| !t.is_empty()), "{p}");
        assert!(p["description"].as_str().is_some_and(|d| d.len() > 60), "{p}");
    }
    let org = &prompts[0]["arguments"][0];
    assert_eq!(org["name"], "organization");
    assert_eq!(org["required"], true);
    assert!(org["description"].as_str().unwrap().contains("gemeente-utrecht"));
}

/// Capabilities: what each address offers, and a connector's address lists its own
/// resources and templates (and the guide every address gives).
async fn capabilities_and_each_addresss_own_offers(server: &Server) {
    let init = |path: &str| {
        let url = server.url(path);
        async move {
            let c = Mcp::new(url);
            let r = c
                .post(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                    "protocolVersion": "2025-06-18", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}}))
                .await;
            result(&r)["capabilities"].clone()
        }
    };
    let all = init("/mcp").await;
    for capability in ["tools", "resources", "prompts", "completions"] {
        assert!(all.get(capability).is_some(), "/mcp {capability}: {all}");
    }
    let opentk = init("/mcp/opentk").await;
    assert!(opentk.get("resources").is_some(), "{opentk}");
    assert!(opentk.get("prompts").is_none(), "{opentk}");
    assert!(opentk.get("completions").is_none(), "{opentk}");
    // A connector's address lists its own, and the guide every address gives.
    let mut tk = Mcp::initialize(server.url("/mcp/tk")).await;
    let r = tk.request("resources/list", json!({})).await;
    assert_eq!(
        strings(&result(&r)["resources"], "uri"),
        [
            "besluitbron://guide",
            "besluitbron://tk/factions",
            "besluitbron://tk/committees",
            "ui://besluitbron/vote",
            "ui://besluitbron/debate"
        ]
    );
    // The regulations' addresses have their templates (they had none before).
    for (path, template) in [
        ("/mcp/bwb", "besluitbron://bwb/regulation/{id}"),
        ("/mcp/cvdr", "besluitbron://cvdr/regulation/{id}"),
    ] {
        assert!(init(path).await.get("resources").is_some(), "{path}");
        let mut c = Mcp::initialize(server.url(path)).await;
        let r = c.request("resources/templates/list", json!({})).await;
        assert_eq!(
            strings(&result(&r)["resourceTemplates"], "uriTemplate"),
            [template],
            "{path}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reference_list_is_read_once_through_the_tools_buffer() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-read"))).await;
    for modern in [false, true] {
        let mut c = client(&server, "/mcp", modern).await;
        let before = f.tk.requests();
        let r = read(&mut c, "besluitbron://tk/factions").await;
        let contents = &result(&r)["contents"];
        assert_eq!(contents[0]["uri"], "besluitbron://tk/factions");
        assert_eq!(contents[0]["mimeType"], "application/json");
        let list: Value = serde_json::from_str(contents[0]["text"].as_str().unwrap()).expect("JSON");
        assert!(list["results"].as_array().is_some_and(|a| !a.is_empty()), "{list}");
        assert_eq!(result(&r)["ttlMs"], json!(3_600_000));
        assert_eq!(result(&r)["cacheScope"], "public");
        // Asked once (the first era), then from the buffer: a repeat read and the tool.
        assert!(f.tk.requests() <= before + 1);
        let asked = f.tk.requests();
        let again = read(&mut c, "besluitbron://tk/factions").await;
        assert_eq!(result(&again)["contents"], *contents);
        let tool = c.call("tk_factions", json!({})).await;
        assert!(result(&tool).get("structuredContent").is_some());
        assert_eq!(f.tk.requests(), asked, "no second request");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn templates_read_documents_of_every_connector() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-templates"))).await;
    let mut c = Mcp::initialize(server.url("/mcp")).await;
    for (uri, expect) in [
        (format!("besluitbron://tk/document/{TK_DOC}"), ""),
        (
            "besluitbron://obv/document/motion%3Anotubiz%3Aprovincie%3Anoord-brabant%3A80501".to_owned(),
            "",
        ),
        (
            "besluitbron://rechtspraak/ruling/ECLI:NL:HR:2026:1500".to_owned(),
            "ECLI:NL:HR:2026:1500",
        ),
        (
            "besluitbron://ob/publication/gmb-2026-10000".to_owned(),
            "gmb-2026-10000",
        ),
        ("besluitbron://opentk/document/2026D10001".to_owned(), ""),
        ("besluitbron://bwb/regulation/BWBR0047001".to_owned(), "BWBR0047001"),
        ("besluitbron://cvdr/regulation/CVDR700001".to_owned(), "CVDR700001"),
    ] {
        let r = read(&mut c, &uri).await;
        let contents = &result(&r)["contents"];
        assert_eq!(contents[0]["uri"].as_str(), Some(uri.as_str()));
        assert_eq!(contents[0]["mimeType"], "text/plain");
        let text = contents[0]["text"].as_str().unwrap();
        assert!(text.len() > 40 && text.contains(expect), "{uri}: {text}");
    }
    // The regulations' templates read the id forms fetch reads: a day and an article.
    for (uri, tool, args) in [
        (
            "besluitbron://bwb/regulation/BWBR0047001%232",
            "bwb_read",
            json!({"id": "BWBR0047001", "article": "2"}),
        ),
        (
            "besluitbron://cvdr/regulation/CVDR700001%232",
            "cvdr_read",
            json!({"id": "CVDR700001", "article": "2"}),
        ),
    ] {
        let r = read(&mut c, uri).await;
        let tool = c.call(tool, args).await;
        assert_eq!(
            result(&r)["contents"][0]["text"],
            result(&tool)["content"][0]["text"],
            "{uri}"
        );
    }
    // The tk template is the document's text, as tk_document_text gives it.
    let r = read(&mut c, &format!("besluitbron://tk/document/{TK_DOC}")).await;
    let tool = c.call("tk_document_text", json!({"id": TK_DOC})).await;
    assert_eq!(result(&r)["contents"][0]["text"], result(&tool)["content"][0]["text"]);
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_and_malformed_uris_are_errors_before_any_platform_call() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-unknown"))).await;
    let before: u64 = f.all.iter().map(|h| h.requests()).sum();
    for modern in [false, true] {
        let mut c = client(&server, "/mcp", modern).await;
        for uri in [
            "besluitbron://tk/nothing",
            "besluitbron://tk/document",
            "https://example.org/x",
            "besluitbron://obv/sources/",
        ] {
            // Resource not found: -32002, which the 2026-07-28 era spells invalid params.
            let (code, message) = error(&read(&mut c, uri).await);
            assert_eq!(code, if modern { -32602 } else { -32002 }, "{uri}: {message}");
            assert!(message.contains("resources/list"), "{message}");
        }
        for uri in [
            "besluitbron://tk/document/",
            "besluitbron://tk/document/a/b",
            "besluitbron://tk/document/..",
            "besluitbron://tk/document/%2e%2E",
        ] {
            let (code, _) = error(&read(&mut c, uri).await);
            assert_eq!(code, -32602, "{uri}");
        }
        let long = format!("besluitbron://tk/document/{}", "x".repeat(5000));
        let (code, message) = error(&read(&mut c, &long).await);
        assert_eq!(code, -32602);
        assert!(message.len() < 200, "{message}");
        // An id the tool refuses: its message, never the whole input, no platform call.
        let (code, message) = error(&read(&mut c, "besluitbron://tk/document/not-a-guid").await);
        assert_eq!(code, -32603);
        assert!(message.contains("is not a Tweede Kamer document"), "{message}");
        // Another connector's resource is not at its address.
        let mut ob = client(&server, "/mcp/ob", modern).await;
        let (code, message) = error(&read(&mut ob, "besluitbron://tk/factions").await);
        assert_eq!(code, if modern { -32602 } else { -32002 });
        assert!(message.contains("no resource"), "{message}");
    }
    let after: u64 = f.all.iter().map(|h| h.requests()).sum();
    assert_eq!(after, before, "no platform was asked");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_platform_is_an_error_naming_it_and_nothing_is_kept() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-fail"))).await;
    let mut c = Mcp::initialize(server.url("/mcp")).await;
    f.tk.set_fail_every(Some(1));
    let r = read(&mut c, "besluitbron://tk/committees").await;
    let (code, message) = error(&r);
    assert_eq!(code, -32603);
    assert!(message.contains("Tweede Kamer"), "{message}");
    assert!(!message.contains("127.0.0.1"), "{message}");
    // A completion from the same list fails the same way.
    let (code, message) = error(&complete_prompt(&mut c, "volg_kamerdossier", "commissie", "").await);
    assert_eq!(code, -32603);
    assert!(message.contains("Tweede Kamer"), "{message}");
    f.tk.set_fail_every(None);
    let before = f.tk.requests();
    let r = read(&mut c, "besluitbron://tk/committees").await;
    let text = result(&r)["contents"][0]["text"].as_str().unwrap().to_owned();
    assert!(text.contains("committees"), "{text}");
    assert!(f.tk.requests() > before, "asked again: the failure was not kept");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompts_give_a_plan_and_refuse_bad_arguments() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-prompts"))).await;
    for modern in [false, true] {
        let mut c = client(&server, "/mcp", modern).await;
        a_council_prompt_plans_the_cheap_search_first(&mut c).await;
        bad_prompt_arguments_are_refused(&mut c).await;
        the_other_prompts_plan_with_their_tools(&mut c).await;
    }
    server.stop().await;
}

/// The council prompt names its arguments, and plans the cheap search before the read.
async fn a_council_prompt_plans_the_cheap_search_first(c: &mut Mcp) {
    let r = c
        .request(
            "prompts/get",
            json!({"name": "gemeenteraad_besluit",
                   "arguments": {"organization": "gemeente-utrecht", "onderwerp": "woningbouw"}}),
        )
        .await;
    let r = result(&r);
    assert!(r["description"].as_str().is_some_and(|d| d.contains("council")));
    let message = &r["messages"][0];
    assert_eq!(message["role"], "user");
    let text = message["content"]["text"].as_str().unwrap();
    assert!(
        text.contains("gemeente-utrecht") && text.contains("woningbouw"),
        "{text}"
    );
    // The cheap search before the read.
    let (search, read) = (text.find("obv_search").unwrap(), text.find("obv_document").unwrap());
    assert!(search < read, "{text}");
}

/// A prompt's bad or missing arguments, and an unknown prompt, are invalid params with a
/// short message naming what is wrong.
async fn bad_prompt_arguments_are_refused(c: &mut Mcp) {
    for (name, arguments, needle) in [
        (
            "gemeenteraad_besluit",
            json!({"organization": "gemeente-utrecht"}),
            "onderwerp",
        ),
        (
            "gemeenteraad_besluit",
            json!({"organization": "x", "onderwerp": "  "}),
            "onderwerp",
        ),
        (
            "gemeenteraad_besluit",
            json!({"organization": "x", "onderwerp": "y", "z": "1"}),
            "no argument",
        ),
        (
            "gemeenteraad_besluit",
            json!({"organization": "x".repeat(300), "onderwerp": "y"}),
            "longer",
        ),
        ("nope", json!({}), "no prompt"),
    ] {
        let r = c
            .request("prompts/get", json!({"name": name, "arguments": arguments}))
            .await;
        let (code, message) = error(&r);
        assert_eq!(code, -32602, "{message}");
        assert!(message.contains(needle), "{message}");
        assert!(message.len() < 300, "{message}");
    }
}

/// The other prompts plan with their own tools; the Kamer's factions and committees
/// take a key or a name.
async fn the_other_prompts_plan_with_their_tools(c: &mut Mcp) {
    for (name, arguments, needle) in [
        (
            "volg_kamerdossier",
            json!({"onderwerp": "stikstof", "fractie": "VVD"}),
            "tk_search",
        ),
        (
            "rechtspraak_sinds",
            json!({"onderwerp": "huur", "sinds": "2026-01-01"}),
            "rechtspraak_search",
        ),
        (
            "officiele_bekendmaking",
            json!({"onderwerp": "omgevingsvisie"}),
            "ob_search",
        ),
    ] {
        let r = c
            .request("prompts/get", json!({"name": name, "arguments": arguments}))
            .await;
        let text = result(&r)["messages"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(text.contains(needle), "{name}: {text}");
    }
    // The Kamer's factions and committees take a key or a name: a faction's full
    // name becomes its abbreviation, a committee's abbreviation its name.
    let r = c
        .request(
            "prompts/get",
            json!({"name": "volg_kamerdossier", "arguments": {
                "onderwerp": "stikstof",
                "fractie": "volkspartij voor vrijheid en democratie",
                "commissie": "lvvn",
            }}),
        )
        .await;
    let text = result(&r)["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(text.contains("met aandacht voor VVD"), "{text}");
    assert!(
        text.contains("behandeld door de vaste commissie voor Landbouw"),
        "{text}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn completions_fetch_a_list_at_most_once() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-complete"))).await;
    for modern in [false, true] {
        let mut c = client(&server, "/mcp", modern).await;
        let before = f.obv.requests();
        let r = complete_prompt(&mut c, "gemeenteraad_besluit", "organization", "utr").await;
        let offered = values(&r);
        assert!(offered.contains(&"gemeente-utrecht".to_owned()), "{offered:?}");
        assert!(offered.iter().all(|v| v.contains("utr")), "{offered:?}");
        let completion = &result(&r)["completion"];
        assert_eq!(completion["total"], json!(offered.len()));
        assert_eq!(completion["hasMore"], false);
        // Everything: at most 100, with the total.
        let all = complete_prompt(&mut c, "gemeenteraad_besluit", "organization", "").await;
        assert_eq!(values(&all).len(), 100);
        assert!(result(&all)["completion"]["total"].as_u64().unwrap() > 100);
        assert_eq!(result(&all)["completion"]["hasMore"], true);
        // The tool's list is the same buffer entry.
        let tool = c.call("obv_sources", json!({})).await;
        assert!(result(&tool).get("structuredContent").is_some());
        let fetched = if modern { 0 } else { 1 };
        assert_eq!(
            f.obv.requests(),
            before + fetched,
            "one fetch of the list, in the first era"
        );
    }
    let mut c = Mcp::initialize(server.url("/mcp")).await;
    // Courts and areas of law, factions and committees.
    let rs = f
        .all
        .get(besluitbron_server::platforms::rechtspraak::PLATFORM)
        .unwrap()
        .clone();
    let before = rs.requests();
    let courts = values(&complete_prompt(&mut c, "rechtspraak_sinds", "instantie", "hoge").await);
    assert_eq!(courts.first().map(String::as_str), Some("Hoge Raad"), "{courts:?}");
    // An abbreviation finds its court.
    let by_abbreviation = values(&complete_prompt(&mut c, "rechtspraak_sinds", "instantie", "RBAMS").await);
    assert!(
        by_abbreviation.iter().any(|v| v.contains("Amsterdam")),
        "{by_abbreviation:?}"
    );
    let areas = values(&complete_prompt(&mut c, "rechtspraak_sinds", "rechtsgebied", "straf").await);
    assert!(
        areas.iter().any(|v| v.to_lowercase().contains("strafrecht")),
        "{areas:?}"
    );
    assert_eq!(rs.requests(), before + 2, "one fetch per list");
    let factions = values(&complete_prompt(&mut c, "volg_kamerdossier", "fractie", "").await);
    assert!(!factions.is_empty());
    let committees = values(&complete_prompt(&mut c, "volg_kamerdossier", "commissie", "").await);
    assert!(!committees.is_empty());
    // Fixed lists ask no platform.
    let ob = f.all.get(besluitbron_server::platforms::ob::PLATFORM).unwrap().clone();
    let before = ob.requests();
    let journals = values(&complete_prompt(&mut c, "officiele_bekendmaking", "publicatie", "blad").await);
    // A prefix first, then the names that contain it.
    assert_eq!(
        journals[..2],
        ["Blad gemeenschappelijke regeling", "Gemeenteblad"],
        "{journals:?}"
    );
    assert!(journals.contains(&"Provinciaal blad".to_owned()));
    let types = values(&complete_prompt(&mut c, "officiele_bekendmaking", "organisatietype", "water").await);
    assert_eq!(types, ["waterschap"]);
    assert_eq!(ob.requests(), before);
    // An argument without a list completes to nothing; unknown references are invalid.
    assert!(values(&complete_prompt(&mut c, "gemeenteraad_besluit", "onderwerp", "x").await).is_empty());
    assert_eq!(error(&complete_prompt(&mut c, "nope", "x", "").await).0, -32602);
    assert_eq!(
        error(&complete_prompt(&mut c, "gemeenteraad_besluit", "nope", "").await).0,
        -32602
    );
    let r = c
        .request(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "besluitbron://tk/document/{id}"},
                   "argument": {"name": "id", "value": "7"}}),
        )
        .await;
    assert!(values(&r).is_empty());
    let long = "x".repeat(1000);
    let (code, message) = error(&complete_prompt(&mut c, "gemeenteraad_besluit", "organization", &long).await);
    assert_eq!(code, -32602);
    assert!(!message.contains(&long));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_completions_share_one_fetch() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-coalesce"))).await;
    // A slow platform: a completion either joins the first flight or finds its answer kept.
    let rs = f
        .all
        .get(besluitbron_server::platforms::rechtspraak::PLATFORM)
        .unwrap()
        .clone();
    rs.set_latency(std::time::Duration::from_millis(300));
    let before = rs.requests();
    let mut asks = tokio::task::JoinSet::new();
    for i in 0..6 {
        let mut c = Mcp::modern(server.url("/mcp/rechtspraak"));
        let typed = if i % 2 == 0 { "hoge" } else { "raad" };
        asks.spawn(async move { complete_prompt(&mut c, "rechtspraak_sinds", "instantie", typed).await });
    }
    let replies = asks.join_all().await;
    for r in &replies {
        assert!(!values(r).is_empty(), "{}", r.text);
    }
    assert_eq!(rs.requests(), before + 1, "one flight for six completions");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_resource_fits_the_answer_budget() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-budget"))).await;
    let mut c = client(&server, "/mcp", false).await;
    let listed = c.request("resources/list", json!({})).await;
    let resources = result(&listed)["resources"].as_array().expect("resources").clone();
    assert!(resources.len() >= 6);
    // A view (MCP Apps) is a page the host renders, never read into a model's context: its
    // own bound, which `fetch`'s view (the vote, debate and regulation drawing in one page)
    // keeps with room.
    const VIEW_BUDGET_BYTES: usize = 32 * 1024;
    for r in &resources {
        let uri = r["uri"].as_str().expect("a uri");
        let read = read(&mut c, uri).await;
        let size = serde_json::to_vec(&result(&read)["contents"]).expect("encodes").len();
        let budget = if r["mimeType"] == json!(besluitbron_server::mcp::views::MIME) {
            VIEW_BUDGET_BYTES
        } else {
            besluitbron_server::connectors::schema::ANSWER_BUDGET_BYTES
        };
        assert!(size <= budget, "{uri}: {size} bytes, over its budget of {budget}");
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prompt_reads_an_organisation_name_as_its_key() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-prompt-names"))).await;
    for modern in [false, true] {
        let mut c = client(&server, "/mcp", modern).await;
        let get = |organization: &str| {
            json!({"name": "gemeenteraad_besluit",
                   "arguments": {"organization": organization, "onderwerp": "fietsparkeren"}})
        };
        let r = c.request("prompts/get", get("Gemeente Utrecht")).await;
        let text = result(&r)["messages"][0]["content"]["text"]
            .as_str()
            .unwrap_or("")
            .to_owned();
        assert!(text.contains("organization \"gemeente-utrecht\""), "{text}");
        let (code, message) = error(&c.request("prompts/get", get("Utrecht")).await);
        assert_eq!(code, -32602, "invalid params: {message}");
        assert!(
            message.contains("`gemeente-utrecht` (Gemeente Utrecht)") && message.contains("`provincie-utrecht`"),
            "{message}"
        );
    }
    server.stop().await;
}

/// Hostile reads: traversal in every spelling, 10 KB URIs, unknown schemes
/// and URIs that are no strings; completions with huge, empty, non-string or control
/// values and malformed references; prompts with missing, null, extra and non-string
/// arguments. Each is a clear MCP error (or an empty completion), short and without the
/// input, in both eras; no platform is asked and the server keeps answering.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_odd_reads_completions_and_prompts_are_clear_errors() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("offers-odd"))).await;
    let before: u64 = f.all.iter().map(|h| h.requests()).sum();
    for modern in [false, true] {
        let mut c = client(&server, "/mcp", modern).await;
        odd_reads_are_short_errors(&mut c, modern).await;
        odd_completions_are_short_errors_or_nothing(&mut c).await;
        odd_prompt_requests_are_short_errors(&mut c).await;
    }
    let after: u64 = f.all.iter().map(|h| h.requests()).sum();
    // The completions of a sane value fetch OpenBesluitvorming's list of sources, once.
    assert_eq!(after, before + 1, "no platform was asked but for the one list");
    assert_eq!(f.obv.requests(), 1, "the list of sources, once");
    server.stop().await;
}

/// Asserts that the error `message` about `what` is short and does not echo the input.
fn short(what: &str, message: &str) {
    assert!(
        message.len() < 300 && !message.contains(&"x".repeat(200)),
        "{}: a short error without the input: {}",
        what.chars().take(80).collect::<String>(),
        message.chars().take(400).collect::<String>()
    );
}

/// Reads of odd resource URIs (`modern`: the stateless era's error codes): each a short
/// error, whether the URI is one of ours or not, and odd `resources/read` params too.
async fn odd_reads_are_short_errors(c: &mut Mcp, modern: bool) {
    let not_found = if modern { -32602 } else { -32002 };
    let long = format!("besluitbron://tk/document/{}", "x".repeat(10 * 1024));
    let long_unknown = format!("nope://{}", "x".repeat(10 * 1024));
    for uri in [
        "besluitbron://tk/document/%2f",
        "besluitbron://tk/document/%2F..%2Fetc%2Fpasswd",
        "besluitbron://tk/document/..%2f..%2fetc%2fpasswd",
        "besluitbron://tk/document/%2e%2e%2f%2e%2e",
        "besluitbron://tk/document/.",
        "besluitbron://tk/document/%2e",
        "besluitbron://tk/document/%00",
        "besluitbron://tk/document/%zz",
        long.as_str(),
        long_unknown.as_str(),
    ] {
        let (code, message) = error(&read(c, uri).await);
        assert!(code == -32602 || code == -32603, "{uri:.80}: {code} {message}");
        short(&uri[..uri.len().min(80)], &message);
    }
    for uri in [
        "file:///etc/passwd",
        "javascript:alert(1)",
        "data:,besluitbron",
        "besluitbron:/tk/factions",
        "BESLUITBRON://tk/factions",
        "besluitbron:///etc/passwd",
        "besluitbron://../tk/factions",
        "",
    ] {
        let (code, message) = error(&read(c, uri).await);
        assert_eq!(code, not_found, "{uri:.80}: {message}");
        short(&uri[..uri.len().min(80)], &message);
    }
    for params in [
        json!({"uri": 7}),
        json!({"uri": null}),
        json!({}),
        json!({"uri": ["a"]}),
    ] {
        let r = c.request("resources/read", params.clone()).await;
        let (code, message) = error(&r);
        assert!(code == -32602 || code == not_found, "{params}: {code} {message}");
        short(&params.to_string(), &message);
    }
}

/// Completions of odd values and odd requests: a short error, or values within bounds
/// (nothing for an unknown resource template).
async fn odd_completions_are_short_errors_or_nothing(c: &mut Mcp) {
    let huge = "x".repeat(100 * 1024);
    for value in [huge.as_str(), "\u{0}\u{1}\u{7f}", "\u{202e}gnirts", "%2e%2e/"] {
        let r = complete_prompt(c, "gemeenteraad_besluit", "organization", value).await;
        let m = r.message.as_ref().expect("an answer");
        if let Some(e) = m.get("error") {
            assert_eq!(e["code"], json!(-32602), "{value:.40}: {m}");
            short(&value[..value.len().min(40)], e["message"].as_str().unwrap_or(""));
        } else {
            let offered = values(&r);
            assert!(offered.len() <= 100, "{value:.40}: {offered:?}");
        }
    }
    for params in [
        json!({"ref": {"type": "ref/prompt", "name": "gemeenteraad_besluit"}, "argument": {"name": "organization", "value": 7}}),
        json!({"ref": {"type": "ref/prompt", "name": "gemeenteraad_besluit"}, "argument": {"name": "organization"}}),
        json!({"ref": {"type": "ref/prompt", "name": "gemeenteraad_besluit"}}),
        json!({"ref": {"type": "ref/nope", "name": "x"}, "argument": {"name": "a", "value": ""}}),
        json!({"ref": {"type": "ref/resource", "uri": "file:///etc/passwd"}, "argument": {"name": "id", "value": ""}}),
        json!({"ref": "gemeenteraad_besluit", "argument": {"name": "organization", "value": ""}}),
        json!({"ref": {"type": "ref/prompt", "name": "x".repeat(10 * 1024)}, "argument": {"name": "a", "value": ""}}),
    ] {
        let r = c.request("completion/complete", params.clone()).await;
        let m = r.message.as_ref().expect("an answer");
        if let Some(e) = m.get("error") {
            assert_eq!(e["code"], json!(-32602), "{params:.120}: {m}");
            short(&params.to_string(), e["message"].as_str().unwrap_or(""));
        } else {
            // An unknown resource template completes to nothing.
            assert!(values(&r).is_empty(), "{params:.120}: {m}");
        }
    }
}

/// Odd `prompts/get` requests are short invalid-params errors, and the server keeps
/// answering.
async fn odd_prompt_requests_are_short_errors(c: &mut Mcp) {
    for params in [
        json!({"name": "gemeenteraad_besluit"}),
        json!({"name": "gemeenteraad_besluit", "arguments": null}),
        json!({"name": "gemeenteraad_besluit", "arguments": ["gemeente-utrecht", "woningbouw"]}),
        json!({"name": "gemeenteraad_besluit", "arguments": {"organization": 7, "onderwerp": "woningbouw"}}),
        json!({"name": "gemeenteraad_besluit", "arguments": {"organization": "gemeente-utrecht", "onderwerp": "woningbouw", "x".repeat(10 * 1024): "1"}}),
        json!({"name": "x".repeat(10 * 1024), "arguments": {}}),
        json!({"name": 7}),
        json!({}),
    ] {
        let r = c.request("prompts/get", params.clone()).await;
        let (code, message) = error(&r);
        assert_eq!(code, -32602, "{params:.120}: {message}");
        short(&params.to_string(), &message);
    }
    // The server keeps answering.
    let r = c
        .request(
            "prompts/get",
            json!({"name": "officiele_bekendmaking", "arguments": {"onderwerp": "omgevingsvisie"}}),
        )
        .await;
    assert!(result(&r)["messages"][0]["content"]["text"].is_string());
}
