//! The addresses a client can reach: each platform's tools at `/mcp/<id>` and at
//! `/<id>/mcp` (an address ending in `/mcp`, which clients recognise as an MCP endpoint),
//! every tool answering by name at every address whether it is listed there or not, and
//! an unknown name refused with its name, the nearest tools and where they are listed.

use crate::support;

use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, temp_dir};

fn names(tools: &[Value]) -> Vec<String> {
    let mut names: Vec<String> = tools
        .iter()
        .filter_map(|t| t["name"].as_str().map(str::to_owned))
        .collect();
    names.sort();
    names
}

#[tokio::test]
async fn a_platform_is_served_at_both_of_its_addresses_with_the_same_tools() {
    let fakes = fakes().await;
    let server = Server::start(config(&fakes, &temp_dir("addresses-both"))).await;
    for id in ["tk", "cvdr", "obv"] {
        let at_mcp = names(
            &Mcp::initialize(server.url(&format!("/mcp/{id}")))
                .await
                .list_tools()
                .await,
        );
        let ending = names(
            &Mcp::initialize(server.url(&format!("/{id}/mcp")))
                .await
                .list_tools()
                .await,
        );
        assert!(
            !at_mcp.is_empty() && at_mcp.iter().all(|n| n.starts_with(id)),
            "{id}: {at_mcp:?}"
        );
        assert_eq!(at_mcp, ending, "{id}");
    }
    // An address of no platform is still no MCP server, and says which are.
    let answer = reqwest::Client::new()
        .post(server.url("/nope/mcp"))
        .header("content-type", "application/json")
        .body(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize"}).to_string())
        .send()
        .await
        .expect("an answer");
    assert_eq!(answer.status(), 404);
    server.stop().await;
}

#[tokio::test]
async fn a_tool_not_listed_at_an_address_answers_there_by_name() {
    let fakes = fakes().await;
    let server = Server::start(config(&fakes, &temp_dir("addresses-by-name"))).await;
    let mut tk = Mcp::initialize(server.url("/tk/mcp")).await;
    assert!(!names(&tk.list_tools().await).contains(&"obv_sources".to_owned()));
    let reply = tk.call("obv_sources", json!({})).await;
    let message = reply.message.as_ref().expect("an answer");
    assert!(message.get("error").is_none(), "{message}");
    assert_ne!(message["result"]["isError"], json!(true), "{message}");
    server.stop().await;
}

#[tokio::test]
async fn an_unknown_tool_is_refused_with_its_name_and_the_nearest_that_exist() {
    let fakes = fakes().await;
    let server = Server::start(config(&fakes, &temp_dir("addresses-unknown"))).await;
    let mut tk = Mcp::initialize(server.url("/mcp/tk")).await;
    let reply = tk.call("cvdr_serch", json!({"query": "parkeren"})).await;
    let error = &reply.message.as_ref().expect("an answer")["error"];
    assert_eq!(error["code"], json!(-32602), "{error}");
    let text = error["message"].as_str().expect("a message");
    for part in [
        "`cvdr_serch`",
        "`cvdr_search`",
        "/mcp/cvdr",
        "/cvdr/mcp",
        "tools/list at /mcp",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    // Nothing near: the name and where every tool is listed, no guess.
    let reply = tk.call("zzzz", json!({})).await;
    let text = reply.message.as_ref().expect("an answer")["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(text.contains("`zzzz`") && !text.contains("Nearest"), "{text}");
    // A hostile name is cut, never echoed whole.
    let long = "x".repeat(10_000);
    let reply = tk.call(&long, json!({})).await;
    let text = reply.message.as_ref().expect("an answer")["error"]["message"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    assert!(text.len() < 400, "{}", text.len());
    server.stop().await;
}
