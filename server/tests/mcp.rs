//! The MCP server end to end over loopback: the fake platforms, the real server, a
//! hand-rolled JSON-RPC client.

mod support;

use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, structured, temp_dir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_address_lists_its_connectors_tools_with_descriptions_and_annotations() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("list"))).await;
    for (path, expected) in [
        (
            "/mcp/obv",
            vec!["obv_document", "obv_search", "obv_sources", "obv_status"],
        ),
        (
            "/mcp/tk",
            vec!["tk_committees", "tk_document", "tk_factions", "tk_search"],
        ),
        (
            "/mcp",
            vec![
                "obv_document",
                "obv_search",
                "obv_sources",
                "obv_status",
                "tk_committees",
                "tk_document",
                "tk_factions",
                "tk_search",
            ],
        ),
    ] {
        let mut c = Mcp::initialize(server.url(path)).await;
        let tools = c.list_tools().await;
        let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(names, expected, "{path}");
        for t in &tools {
            assert!(t["description"].as_str().is_some_and(|d| d.len() > 80), "{t}");
            assert_eq!(t["annotations"]["readOnlyHint"], Value::Bool(true));
            assert_eq!(t["annotations"]["openWorldHint"], Value::Bool(true));
            assert_eq!(t["inputSchema"]["type"], "object");
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_matches_the_platform_and_a_repeat_comes_from_the_buffer() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("search"))).await;
    let mut c = Mcp::initialize(server.url("/mcp/obv")).await;
    let sources = structured(&c.call("obv_sources", json!({})).await);
    assert_eq!(sources["count"], 331);
    let key = sources["sources"][0]["key"].as_str().unwrap().to_owned();
    let before = f.obv.requests();
    let first = structured(&c.call("obv_search", json!({"organization": key, "limit": 5})).await);
    assert_eq!(f.obv.requests(), before + 1);
    assert!(!first["results"].as_array().unwrap().is_empty(), "{first}");
    let second = c.call("obv_search", json!({"organization": key, "limit": 5})).await;
    assert_eq!(structured(&second), first);
    assert_eq!(f.obv.requests(), before + 1, "the repeat did not reach the platform");
    let text = second.message.unwrap()["result"]["content"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(text.contains("buffer"), "{text}");
    server.stop().await;
}
