//! The MCP server end to end over loopback: the fake platforms, the real server, a
//! hand-rolled JSON-RPC client. By concern: what each address offers (`listed`), answers
//! kept in the buffer (`kept`), failures (`failures`), retries and identical requests
//! (`retries`), a resumed event stream (`resume`), the search tool and the platforms' searches (`search`), and the fetch tool
//! (`fetch`); here the helpers that read an answer.

use crate::support;

use serde_json::Value;

mod failures;
mod fetch;
mod kept;
mod listed;
mod resume;
mod retries;
mod search;

/// The JSON-RPC messages of an answer (plain JSON, or the `data:` lines of a stream).
fn messages(text: &str) -> Vec<Value> {
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        return vec![v];
    }
    text.lines()
        .filter_map(|l| l.strip_prefix("data:"))
        .filter_map(|d| serde_json::from_str(d.trim()).ok())
        .collect()
}

/// The text of a tool result (its text items joined).
fn result_text(r: &support::Reply) -> String {
    let result = messages(&r.text)
        .into_iter()
        .find_map(|m| m.get("result").cloned())
        .expect("a result");
    result["content"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["text"].as_str())
        .collect::<Vec<_>>()
        .join("\n")
}
