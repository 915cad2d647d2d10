//! A session-era client resuming an event stream (`GET` with `Last-Event-ID`): it gets
//! the events after the one it names, never that one again, and a stream with nothing
//! left answers `204 No Content` (the SDKs stop there instead of resuming again).

use std::time::Duration;

use serde_json::{Value, json};

use crate::support::{self, Mcp, Server};

/// The events of `response` (their `id` and JSON-RPC message), read until `done`
/// accepts one; the events before it too.
async fn events_until(response: &mut reqwest::Response, done: impl Fn(&Value) -> bool) -> Vec<(String, Value)> {
    let mut buffer = String::new();
    let mut events = Vec::new();
    loop {
        let chunk = tokio::time::timeout(Duration::from_secs(30), response.chunk())
            .await
            .expect("an event in time")
            .expect("the stream reads")
            .unwrap_or_else(|| panic!("the stream ended first: {events:?} {buffer}"));
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            let id = event
                .lines()
                .find_map(|l| l.strip_prefix("id:"))
                .unwrap_or("")
                .trim()
                .to_owned();
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .collect();
            let Ok(message) = serde_json::from_str::<Value>(&data) else {
                continue;
            };
            let last = done(&message);
            events.push((id, message));
            if last {
                return events;
            }
        }
    }
}

fn resume(client: &reqwest::Client, mcp: &Mcp, last_event: &str) -> reqwest::RequestBuilder {
    client
        .get(&mcp.url)
        .header("accept", "text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", mcp.session.as_deref().expect("a session"))
        .header("last-event-id", last_event)
}

#[tokio::test]
async fn a_resumed_stream_starts_after_the_last_event_and_an_ended_one_has_no_content() {
    let fakes = support::fakes().await;
    let dir = support::temp_dir("resume");
    let server = Server::start(support::config(&fakes, &dir)).await;
    let mcp = Mcp::initialize(server.url("/mcp")).await;
    // The Tweede Kamer holds its answer: the search's first progress comes, then a wait.
    fakes.tk.set_stall(Some(Duration::from_secs(3)));
    let http = reqwest::Client::new();
    let mut post = http
        .post(&mcp.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-06-18")
        .header("mcp-session-id", mcp.session.as_deref().expect("a session"))
        .body(
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                "name": "search", "arguments": {"query": "hervatten", "limit": 1},
                "_meta": {"progressToken": "p"}}})
            .to_string(),
        )
        .send()
        .await
        .expect("post");
    let first = events_until(&mut post, |m| m["method"] == "notifications/progress").await;
    let (seen, _) = first.last().expect("a progress notification").clone();
    assert!(seen.contains('/'), "a request stream's event id: {seen}");

    let mut resumed = resume(&http, &mcp, &seen).send().await.expect("resume");
    assert_eq!(resumed.status(), 200);
    let replayed = events_until(&mut resumed, |m| m["id"] == 7).await;
    assert!(
        replayed.iter().all(|(id, _)| id != &seen),
        "the event {seen} the client named came again: {replayed:?}"
    );
    let progress: Vec<f64> = replayed
        .iter()
        .filter_map(|(_, m)| m["params"]["progress"].as_f64())
        .collect();
    let had = first
        .last()
        .and_then(|(_, m)| m["params"]["progress"].as_f64())
        .expect("progress");
    assert!(progress.iter().all(|p| *p > had), "after {had}: {progress:?}");
    let (last, _) = replayed.last().expect("the answer").clone();

    // The answer was sent: nothing is left on that stream.
    let ended = resume(&http, &mcp, &last).send().await.expect("resume again");
    assert_eq!(ended.status(), 204, "{:?}", ended.text().await);

    // An answer that is a JSON-RPC error ends its stream alike.
    let refused = mcp
        .post(json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call",
        "params": {"name": "no_such_tool", "arguments": {}}}))
        .await;
    assert_eq!(
        refused.message.as_ref().map(|m| m["error"]["code"].clone()),
        Some(json!(-32602)),
        "{}",
        refused.text
    );
    let error_event = refused
        .text
        .split("\n\n")
        .filter(|e| e.contains("\"error\""))
        .find_map(|e| e.lines().find_map(|l| l.strip_prefix("id:")))
        .map(|id| id.trim().to_owned());
    if let Some(id) = error_event {
        let after_error = resume(&http, &mcp, &id).send().await.expect("resume the refusal");
        assert_eq!(after_error.status(), 204, "{:?}", after_error.text().await);
    }
    fakes.tk.set_stall(None);
    server.stop().await;
}
