//! The server killed with SIGKILL while it writes its buffer, five times in a row, each
//! time restarted on the same data directory: every buffer
//! opens again, nothing is discarded as corrupt, every entry whose write had finished
//! before a kill is served from the buffer after it (the platform is not asked), and
//! after a clean stop `besluitbron cache stats` reads the directory.
//!
//! The child is the real binary (`besluitbron serve`); the kill lands while many calls'
//! answers are being written behind (the fake has answered some of them, others are on
//! their way), at a different point each round.

use crate::support;

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::json;
use support::{Fakes, Mcp, eventually, fakes, free_port, temp_dir};

const ROUNDS: usize = 5;

struct Served {
    child: Child,
    listen: String,
}

impl Served {
    fn spawn(data_dir: &std::path::Path, platform_urls: &[(String, String)]) -> Served {
        let listen = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_besluitbron"));
        cmd.args(["serve", "--listen", &listen, "--data-dir"])
            .arg(data_dir)
            .env("BesluitBron__StatusRefreshSecs", "0")
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (id, url) in platform_urls {
            cmd.arg("--platform-url").arg(format!("{id}={url}"));
        }
        Served {
            child: cmd.spawn().expect("spawn the besluitbron binary"),
            listen,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.listen)
    }

    async fn metrics(&self) -> String {
        match reqwest::get(self.url("/metrics")).await {
            Ok(r) => r.text().await.unwrap_or_default(),
            Err(_) => String::new(),
        }
    }

    /// The value of the metric line that starts with `series` (0 when absent).
    async fn metric(&self, series: &str) -> f64 {
        metric_in(&self.metrics().await, series)
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn metric_in(text: &str, series: &str) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(series))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

async fn search(served: &Served, words: &str) -> support::Reply {
    Mcp::modern(served.url("/mcp/tk"))
        .call("tk_search", json!({"query": words, "limit": 3}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_killed_during_buffer_writes_five_times_the_buffer_holds() {
    let f = fakes().await;
    let urls: Vec<(String, String)> = f
        .all
        .base_urls()
        .into_iter()
        .map(|(id, url)| (id.as_str().to_owned(), url))
        .collect();
    let data_dir = temp_dir("sigkill-server");
    let mut written: Vec<String> = Vec::new();
    for round in 0..=ROUNDS {
        let served = Served::spawn(&data_dir, &urls);
        the_buffers_open(&served, round).await;
        what_was_written_is_served_from_the_buffer(&f, &served, &written, round).await;
        if round == ROUNDS {
            a_clean_stop_and_cache_stats(served, &data_dir);
            break;
        }
        // Entries written completely: answered, then no write pending.
        for i in 0..6 {
            let words = format!("geschreven{round}x{i}");
            support::structured(&search(&served, &words).await);
            written.push(words);
        }
        let flushed = eventually(Duration::from_secs(30), async || {
            let m = served.metrics().await;
            !m.is_empty() && metric_in(&m, "besluitbron_buffer_pending_writes{platform=\"tk\"}") == 0.0
        })
        .await;
        assert!(flushed, "round {round}: the writes finished");

        kill_during_a_flood(&f, served, round).await;
    }
    assert_eq!(written.len(), 6 * ROUNDS);
}

/// The server started on the killed data directory, and every platform's buffer opened.
async fn the_buffers_open(served: &Served, round: usize) {
    let ready = eventually(Duration::from_secs(60), async || {
        reqwest::get(served.url("/readyz"))
            .await
            .is_ok_and(|r| r.status().is_success())
    })
    .await;
    assert!(ready, "round {round}: the server starts on the killed data directory");
    let metrics = served.metrics().await;
    for platform in ["obv", "tk", "rechtspraak", "opentk", "ori", "ob"] {
        assert!(
            metric_in(
                &metrics,
                &format!("besluitbron_cache_budget_bytes{{platform=\"{platform}\"")
            ) > 0.0,
            "round {round}: the {platform} buffer opened"
        );
    }
}

/// Everything written before a kill is served from the buffer: the platform is not
/// asked again, and the buffer saw hits only (no miss, no corrupt discard).
async fn what_was_written_is_served_from_the_buffer(f: &Fakes, served: &Served, written: &[String], round: usize) {
    let asked = f.tk.requests();
    for words in written {
        let r = search(served, words).await;
        let text = support::structured(&r);
        assert!(text.is_object(), "round {round}: {words}");
        assert!(
            r.text.contains("buffer"),
            "round {round}: {words} from the buffer: {}",
            r.text
        );
    }
    assert_eq!(
        f.tk.requests(),
        asked,
        "round {round}: no written entry was asked again"
    );
    assert_eq!(
        served.metric("besluitbron_cache_events_total{platform=\"tk\"").await
            - metric_in(
                &served.metrics().await,
                "besluitbron_cache_events_total{platform=\"tk\",class=\"search\",event=\"hit\""
            ),
        0.0,
        "round {round}: no tk buffer event but the hits (no miss, no corrupt discard)"
    );
    assert_eq!(
        served
            .metric("besluitbron_cache_events_total{platform=\"tk\",class=\"search\",event=\"corrupt_discard\"")
            .await,
        0.0
    );
}

/// A clean stop, then the command-line tool reads the directory.
fn a_clean_stop_and_cache_stats(served: Served, data_dir: &std::path::Path) {
    let pid = served.child.id().to_string();
    let term = Command::new("kill").args(["-TERM", &pid]).status().expect("kill -TERM");
    assert!(term.success());
    let mut served = served;
    let status = served.child.wait().expect("wait");
    assert_eq!(status.code(), Some(0), "a clean stop: {status:?}");
    let stats = Command::new(env!("CARGO_BIN_EXE_besluitbron"))
        .args(["cache", "stats", "--platform", "tk", "--data-dir"])
        .arg(data_dir)
        .output()
        .expect("cache stats");
    let out = String::from_utf8_lossy(&stats.stdout);
    assert!(
        stats.status.success(),
        "cache stats: {out} {}",
        String::from_utf8_lossy(&stats.stderr)
    );
}

/// The kill: while many answers are on their way into the buffer (the first twenty,
/// answered at once) and others still at the platform (the last twenty, which it holds
/// three seconds): so the kill always comes while calls are under way, whatever the
/// machine's speed.
async fn kill_during_a_flood(f: &Fakes, served: Served, round: usize) {
    let asked = f.tk.requests();
    let mut flood = Vec::new();
    for i in 0..40 {
        if i == 20 {
            let fast = eventually(Duration::from_secs(30), async || f.tk.requests() >= asked + 20).await;
            assert!(fast, "round {round}: the first twenty reached the platform");
            f.tk.set_latency(Duration::from_secs(3));
        }
        let mut c = Mcp::modern(served.url("/mcp/tk"));
        let words = format!("onderweg{round}x{i}");
        flood.push(tokio::spawn(async move {
            c.call("tk_search", json!({"query": words, "limit": 3})).await
        }));
    }
    let busy = eventually(Duration::from_secs(30), async || f.tk.requests() >= asked + 30).await;
    assert!(busy, "round {round}: the flood reached the platform");
    let mut served = served;
    served.child.kill().expect("SIGKILL");
    let status = served.child.wait().expect("wait");
    assert_eq!(status.signal(), Some(9), "round {round}: killed: {status:?}");
    let mut cut = 0;
    for task in flood {
        // Answered before the kill, or cut off by it (the client's send fails).
        cut += usize::from(task.await.is_err());
    }
    assert!(cut > 0, "round {round}: the kill came while calls were under way");
    f.tk.set_latency(Duration::ZERO);
}
