//! `besluitbron serve` as a process: configured by flags and `BesluitBron__…`
//! environment variables, and SIGTERM drains the running tool calls before it exits.

use crate::support;

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::{Mcp, fakes, structured, temp_dir};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_lets_a_running_call_finish_and_exits_cleanly() {
    let f = fakes().await;
    let port = support::free_port();
    let dir = temp_dir("sigterm");
    let mut child = Command::new(env!("CARGO_BIN_EXE_besluitbron"))
        .args(["serve", "--listen", &format!("127.0.0.1:{port}"), "--data-dir"])
        .arg(&dir)
        .arg("--platform-url")
        .arg(format!("obv={}", f.obv.base_url()))
        .arg("--platform-url")
        .arg(format!("tk={}", f.tk.base_url()))
        .env("BesluitBron__StatusRefreshSecs", "0")
        .env("BesluitBron__McpRateLimit__PerSession__Burst", "500")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start besluitbron");
    let base = format!("http://127.0.0.1:{port}");
    let deadline = Instant::now() + Duration::from_secs(20);
    while reqwest::get(format!("{base}/healthz")).await.is_err() {
        assert!(Instant::now() < deadline, "the server did not come up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let c = Mcp::initialize(format!("{base}/mcp/tk")).await;
    f.tk.set_latency(Duration::from_millis(1500));
    let call = tokio::spawn(async move { c.call_with_id(1, "tk_factions", json!({})).await });
    tokio::time::sleep(Duration::from_millis(400)).await;
    let pid = child.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let answer = call.await.unwrap();
    assert_eq!(structured(&answer)["total"], 16, "the running call finished");
    let deadline = Instant::now() + Duration::from_secs(10);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the server did not exit after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(status.success(), "clean exit: {status:?}");
}
