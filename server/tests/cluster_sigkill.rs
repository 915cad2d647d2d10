//! Several replicas as real processes: the owner of OpenBesluitvorming is killed with
//! SIGKILL (no destructor, no lease released, its sockets closed by the kernel), and the
//! other replica takes the platform over within 2·TTL + m, answering without a 429 at the
//! platform. The children are the real binary (`besluitbron serve`), configured by
//! environment variables as an operator would.

use crate::support;

use std::os::unix::process::ExitStatusExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;
use support::redis::RedisServer;
use support::{Mcp, eventually, fakes, free_port, structured, temp_dir};

const TTL_MS: u64 = 1_000;

struct Replica {
    child: Child,
    listen: String,
}

impl Replica {
    fn spawn(name: &str, redis: &str, platform_urls: &[(String, String)]) -> Replica {
        let listen = format!("127.0.0.1:{}", free_port());
        let internal = format!("127.0.0.1:{}", free_port());
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_besluitbron"));
        cmd.args(["serve", "--listen", &listen, "--data-dir"])
            .arg(temp_dir(name))
            .env("BesluitBron__StatusRefreshSecs", "0")
            .env("BesluitBron__Cluster__Redis", redis)
            .env("BesluitBron__Cluster__InternalListen", &internal)
            .env("BesluitBron__Cluster__Secret", "a-secret-shared-by-the-replicas")
            .env("BesluitBron__Cluster__LeaseTtlMs", TTL_MS.to_string())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (id, url) in platform_urls {
            cmd.arg("--platform-url").arg(format!("{id}={url}"));
        }
        let child = cmd.spawn().expect("spawn the besluitbron binary");
        Replica { child, listen }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.listen)
    }

    /// Whether this replica's `/metrics` says it owns obv (None: it does not answer).
    async fn owns_obv(&self) -> Option<bool> {
        let text = reqwest::get(self.url("/metrics")).await.ok()?.text().await.ok()?;
        Some(
            text.lines()
                .any(|l| l.starts_with("besluitbron_platform_owned{platform=\"obv\"}") && l.ends_with(" 1")),
        )
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

async fn search(replica: &Replica, query: &str) -> support::Reply {
    Mcp::modern(replica.url("/mcp/obv"))
        .call("obv_search", json!({"query": query, "limit": 2}))
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sigkilled_owner_process_is_replaced_within_two_ttls_and_a_margin() {
    let redis = RedisServer::start("sigkill");
    let f = fakes().await;
    let urls: Vec<(String, String)> = f
        .all
        .base_urls()
        .into_iter()
        .map(|(id, url)| (id.as_str().to_owned(), url))
        .collect();
    let mut rs = [
        Replica::spawn("sigkill-a", &redis.url(), &urls),
        Replica::spawn("sigkill-b", &redis.url(), &urls),
    ];
    // One of the two owns obv (a lease, then its start wait of TTL + m).
    let mut owner = None;
    let found = eventually(Duration::from_secs(30), async || {
        for (i, r) in rs.iter().enumerate() {
            if r.owns_obv().await == Some(true) {
                owner = Some(i);
                return true;
            }
        }
        false
    })
    .await;
    assert!(found, "one replica owns obv");
    let owner = owner.expect("an owner");
    let other = 1 - owner;
    assert_eq!(rs[other].owns_obv().await, Some(false), "only one owner");
    // The other replica's question is forwarded to the owner and answered.
    structured(&search(&rs[other], "begroting voor").await);

    rs[owner].child.kill().expect("kill");
    let status = rs[owner].child.wait().expect("wait");
    assert_eq!(status.signal(), Some(9), "the owner died of SIGKILL: {status:?}");
    let killed = Instant::now();

    let lease = besluitbron_server::driver::lease::lease_config(Duration::from_millis(TTL_MS));
    let bound = lease.ttl * 2 + lease.margin;
    let owned = eventually(bound + Duration::from_secs(5), async || {
        rs[other].owns_obv().await == Some(true)
    })
    .await;
    let took = killed.elapsed();
    assert!(owned, "the survivor owns obv");
    // The metrics are polled every 20 ms on a shared machine: a little slack.
    assert!(
        took <= bound + Duration::from_millis(500),
        "the survivor took {took:?} to own obv (2·TTL + m = {bound:?})"
    );
    for i in 0..5 {
        structured(&search(&rs[other], &format!("begroting na {i}")).await);
    }
    assert_eq!(f.obv.rate_limited(), 0, "no 429 at the platform");
}
