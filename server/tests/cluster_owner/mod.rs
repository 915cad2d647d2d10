//! Several replicas, one owner per platform (issue "Several replicas…", part A): three
//! in-process replicas on one redis-server of the test's own and the counting fake
//! platforms. Every platform call any replica sends is checked as it goes: no other
//! replica may admit at that moment (the leases never overlap in admitting).
//!
//! This file holds the replicas and what the tests share; the tests are in rooms by
//! concern: forwarding to the owner (`forwarding.rs`), ownership changing hands
//! (`failover.rs`), a slow link between replicas (`slow_link.rs`), and the platform task
//! under a lease on tokio's paused clock (`gated_driver.rs`).

use crate::support;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use besluitbron_server::app::{App, AppState, Hooks};
use besluitbron_server::cluster::forward::Node;
use besluitbron_server::config::ClusterConfig;
use serde_json::json;
use support::redis::RedisServer;
use support::{Fakes, Mcp, eventually, temp_dir};
use tokio_util::sync::CancellationToken;

mod failover;
mod forwarding;
mod gated_driver;
mod slow_link;

const TTL_MS: u64 = 1_000;
const SECRET: &str = "a-test-secret-of-the-cluster";

/// Every replica's node, for the send check; and what it found.
#[derive(Default)]
struct World {
    nodes: Mutex<Vec<Arc<Node>>>,
    /// Calls sent per replica (index in `nodes` order of start).
    sent: Mutex<Vec<Arc<AtomicU64>>>,
    overlaps: AtomicUsize,
    /// Every OpenBesluitvorming call admitted, in order, on any replica.
    admitted: Mutex<Vec<Admitted>>,
}

/// One admission as the owner's hook saw it: whose call, and when (by the owner's clock) it
/// reached the fair queue and left it.
#[derive(Clone, Debug)]
struct Admitted {
    session: String,
    queued_at: besluitbron_core::Instant,
    admitted_at: besluitbron_core::Instant,
}

struct Replica {
    addr: std::net::SocketAddr,
    state: Arc<AppState>,
    cancel: CancellationToken,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<anyhow::Result<()>>>,
    sent: Arc<AtomicU64>,
}

impl Replica {
    async fn start(world: &Arc<World>, f: &Fakes, redis: &str, name: &str) -> Replica {
        Replica::start_with(world, f, redis, name, |_| {}).await
    }

    /// A replica keeping OpenBesluitvorming's own limit (60 units a minute).
    async fn start_platform_limit(world: &Arc<World>, f: &Fakes, redis: &str, name: &str) -> Replica {
        Replica::start_full(world, f, redis, name, |_| {}, false).await
    }

    async fn start_with(
        world: &Arc<World>,
        f: &Fakes,
        redis: &str,
        name: &str,
        edit: impl FnOnce(&mut ClusterConfig),
    ) -> Replica {
        Replica::start_full(world, f, redis, name, edit, true).await
    }

    async fn start_full(
        world: &Arc<World>,
        f: &Fakes,
        redis: &str,
        name: &str,
        edit: impl FnOnce(&mut ClusterConfig),
        fast_obv: bool,
    ) -> Replica {
        let mut config = support::config(f, &temp_dir(name));
        // Each session of a test is its own client address (behind a trusted proxy).
        config.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
        let roomy = besluitbron_core::limits::RateLimit {
            requests_per_minute: 60_000,
            burst: 10_000,
        };
        config.mcp_rate_limit.process = roomy;
        config.mcp_rate_limit.per_connector = roomy;
        config.mcp_rate_limit.per_address = roomy;
        config.mcp_rate_limit.per_session = roomy;
        // A faster OpenBesluitvorming (600 units a minute, here and at the fake) keeps the
        // tests short; a new owner starts with an empty bucket.
        let obv = config.services.get_mut("obv").expect("obv's service");
        if let Some(limit) = obv.limit.as_mut().filter(|_| fast_obv) {
            limit.capacity = besluitbron_core::Units::whole(600);
        }
        let mut cluster = ClusterConfig {
            redis: redis.to_owned(),
            internal_listen: "127.0.0.1:0".parse().unwrap(),
            internal_url: String::new(),
            secret: SECRET.to_owned(),
            lease_ttl_ms: TTL_MS,
        };
        edit(&mut cluster);
        config.cluster = Some(cluster);
        let sent = Arc::new(AtomicU64::new(0));
        let me = Arc::clone(&sent);
        let w = Arc::clone(world);
        let index = OnceLock::<usize>::new();
        let index = Arc::new(index);
        let my_index = Arc::clone(&index);
        let hooks = Hooks {
            on_send: Some(Arc::new(move |call| {
                if call.platform != besluitbron_server::platforms::obv::PLATFORM {
                    return;
                }
                me.fetch_add(1, Ordering::SeqCst);
                if let Some(a) = &call.admission {
                    w.admitted.lock().unwrap().push(Admitted {
                        session: a.session.to_string(),
                        queued_at: a.submitted_at,
                        admitted_at: a.admitted_at,
                    });
                }
                let nodes = w.nodes.lock().unwrap();
                let mine = my_index.get().copied();
                for (i, n) in nodes.iter().enumerate() {
                    if Some(i) != mine && n.owns_now(besluitbron_server::platforms::obv::PLATFORM) {
                        w.overlaps.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })),
        };
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let app = App::build_with(config, hooks).expect("build a replica");
        let state = Arc::clone(&app.state);
        let cancel = app.cancel.clone();
        {
            let mut nodes = world.nodes.lock().unwrap();
            let _ = index.set(nodes.len());
            nodes.push(Arc::clone(state.cluster().expect("a cluster node")));
            world.sent.lock().unwrap().push(Arc::clone(&sent));
        }
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(app.serve(
            listener,
            async {
                let _ = stopped.await;
            },
            Duration::from_secs(2),
        ));
        Replica {
            addr,
            state,
            cancel,
            stop: Some(stop),
            task: Some(task),
            sent,
        }
    }

    fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    fn node(&self) -> &Arc<Node> {
        self.state.cluster().expect("node")
    }

    fn owns(&self) -> bool {
        self.node().owns_now(besluitbron_server::platforms::obv::PLATFORM)
    }

    /// Dies as a kill -9 would leave it: the leases are not released, the MCP listener
    /// and the internal endpoint go away, the platforms' tasks stop.
    fn kill(&mut self) {
        self.node().kill();
        if let Some(task) = self.task.take() {
            task.abort();
        }
        self.cancel.cancel();
    }

    async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }

    async fn metrics(&self) -> String {
        reqwest::get(self.url("/metrics")).await.unwrap().text().await.unwrap()
    }
}

async fn three(world: &Arc<World>, f: &Fakes, redis: &RedisServer, name: &str) -> Vec<Replica> {
    let mut rs = Vec::new();
    for i in 0..3 {
        rs.push(Replica::start(world, f, &redis.url(), &format!("{name}-{i}")).await);
    }
    rs
}

fn owners(rs: &[Replica]) -> Vec<usize> {
    (0..rs.len()).filter(|&i| rs[i].owns()).collect()
}

async fn one_owner(rs: &[Replica]) -> usize {
    assert!(
        eventually(Duration::from_secs(3 * TTL_MS / 1000 + 5), async || owners(rs).len()
            == 1)
        .await,
        "one replica owns obv"
    );
    owners(rs)[0]
}

async fn search(url: String, session: usize, query: String) -> support::Reply {
    let mut c = Mcp::modern(url);
    c.extra_headers = vec![(
        "x-forwarded-for".to_owned(),
        format!("198.51.100.{}", session % 250 + 1),
    )];
    c.call("obv_search", json!({"query": query})).await
}

/// The owner's OpenBesluitvorming lane, its invariants checked.
async fn obv_lane(r: &Replica) -> besluitbron_server::driver::LaneSnapshot {
    let snap = r
        .state
        .platforms()
        .get(besluitbron_server::platforms::obv::PLATFORM)
        .expect("obv")
        .snapshot(true)
        .await
        .expect("running");
    assert_eq!(snap.invariants, Ok(()));
    snap.lanes[0].clone()
}
