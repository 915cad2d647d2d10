//! Several replicas, one owner per platform (issue "Several replicas…", part A): three
//! in-process replicas on one redis-server of the test's own and the counting fake
//! platforms. Every platform call any replica sends is checked as it goes: no other
//! replica may admit at that moment (the leases never overlap in admitting).

use crate::support;

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use besluitbron_fakes::ObvSettings;
use besluitbron_server::app::{App, AppState, Hooks};
use besluitbron_server::cluster::forward::Node;
use besluitbron_server::config::ClusterConfig;
use serde_json::json;
use support::redis::RedisServer;
use support::{Fakes, Mcp, eventually, fakes, structured, temp_dir, tool_error_text};
use tokio_util::sync::CancellationToken;

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

/// `search` is a tool call like any other: on a follower, its part of a
/// platform another replica owns goes to that owner, as the platform's own tool would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_search_on_a_follower_asks_openbesluitvorming_at_its_owner() {
    let redis = RedisServer::start("own-search");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-search").await;
    let owner = one_owner(&rs).await;
    let follower = (owner + 1) % 3;
    let mut c = Mcp::modern(rs[follower].url("/mcp"));
    let reply = c.call("search", json!({"query": "gemeenteraad", "limit": 2})).await;
    let platforms = structured(&reply)["platforms"].as_array().cloned().expect("platforms");
    let obv = platforms
        .iter()
        .find(|p| p["platform"] == "obv")
        .expect("OpenBesluitvorming's part");
    assert_eq!(obv["status"], "ok", "{obv}");
    let m = rs[follower].metrics().await;
    assert!(
        m.contains("besluitbron_forwarded_calls_total{platform=\"obv\"} 1"),
        "the follower forwarded its obv part:\n{m}"
    );
    assert_eq!(rs[owner].sent.load(Ordering::SeqCst), 1, "the owner asked the platform");
    assert_eq!(rs[follower].sent.load(Ordering::SeqCst), 0, "the follower did not");
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exactly_one_replica_owns_obv_and_the_others_forward_to_it() {
    let redis = RedisServer::start("own-one");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-one").await;
    let owner = one_owner(&rs).await;
    let lease: String = redis.command(&["GET", "besluitbron:lease:obv"]);
    assert!(
        lease.contains(rs[owner].node().url()),
        "the lease names the owner's URL: {lease}"
    );
    for (i, r) in rs.iter().enumerate() {
        let reply = search(r.url("/mcp/obv"), i, format!("eigenaar {i}")).await;
        structured(&reply);
    }
    for (i, r) in rs.iter().enumerate() {
        let m = r.metrics().await;
        let owned = format!(
            "besluitbron_platform_owned{{platform=\"obv\"}} {}",
            u8::from(i == owner)
        );
        assert!(m.contains(&owned), "replica {i}: {owned} in\n{m}");
        let forwarded = m.contains("besluitbron_forwarded_calls_total{platform=\"obv\"} 1");
        assert_eq!(
            forwarded,
            i != owner,
            "replica {i} forwarded its call iff it is not the owner"
        );
    }
    assert_eq!(rs[owner].sent.load(Ordering::SeqCst), 3, "the owner sent every call");
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    // A repeated question on a follower is the owner's buffer hit (the owner's buffer is
    // the shared tier); its latency is one forward.
    let follower = (owner + 1) % 3;
    let mut took = Vec::new();
    for _ in 0..50 {
        let asked = Instant::now();
        let reply = search(rs[follower].url("/mcp/obv"), 0, format!("eigenaar {owner}")).await;
        took.push(asked.elapsed());
        let text = reply.message.as_ref().expect("answer")["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        assert!(text.contains("from BesluitBron's buffer"), "{text}");
    }
    took.sort();
    eprintln!(
        "a forwarded buffer hit (debug build): p50 {:?}, p99 {:?}",
        took[took.len() / 2],
        took[took.len() * 99 / 100]
    );
    assert_eq!(rs[owner].sent.load(Ordering::SeqCst), 3, "repeats reach no platform");
    // Every other platform has one owner too (ownership is what makes one call per
    // question across replicas, limited or not).
    for p in [
        besluitbron_server::platforms::tk::PLATFORM,
        besluitbron_server::platforms::obv::PLATFORM,
    ] {
        assert!(
            eventually(Duration::from_secs(5), async || rs
                .iter()
                .filter(|r| r.node().owns_now(p))
                .count()
                == 1)
            .await,
            "{p} has one owner"
        );
    }
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_over_three_replicas_keeps_the_platforms_limit() {
    let redis = RedisServer::start("own-flood");
    let f = fakes().await;
    f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 600);
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-flood").await;
    let owner = one_owner(&rs).await;
    let before = f.obv.requests();
    let mut calls = Vec::new();
    for i in 0..60 {
        let url = rs[i % 3].url("/mcp/obv");
        calls.push(tokio::spawn(search(url, i % 20, format!("vloed {i}"))));
    }
    for c in calls {
        structured(&c.await.unwrap());
    }
    assert_eq!(
        f.obv.requests() - before,
        60,
        "every distinct search reached the platform once"
    );
    assert_eq!(f.obv.rate_limited(), 0, "the platform never had to refuse BesluitBron");
    assert_eq!(rs[owner].sent.load(Ordering::SeqCst), 60, "only the owner sent");
    assert_eq!(
        world.overlaps.load(Ordering::SeqCst),
        0,
        "no send while another replica admits"
    );
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_questions_on_different_replicas_reach_the_platform_once() {
    let redis = RedisServer::start("own-same");
    let f = fakes().await;
    f.obv.update(|c| c.latency = Duration::from_millis(300));
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-same").await;
    one_owner(&rs).await;
    let before = f.obv.requests();
    let mut calls = Vec::new();
    for i in 0..9 {
        calls.push(tokio::spawn(search(
            rs[i % 3].url("/mcp/obv"),
            i,
            "dezelfde vraag".to_owned(),
        )));
    }
    for c in calls {
        structured(&c.await.unwrap());
    }
    assert_eq!(
        f.obv.requests() - before,
        1,
        "nine identical questions, one platform call"
    );
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dead_owner_is_replaced_within_two_ttls_and_a_margin() {
    let redis = RedisServer::start("own-kill");
    let f = fakes().await;
    f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 600);
    let world = Arc::new(World::default());
    let mut rs = three(&world, &f, &redis, "own-kill").await;
    let owner = one_owner(&rs).await;
    // The owner spends its budget, then dies without releasing anything.
    let mut calls = Vec::new();
    for i in 0..20 {
        calls.push(tokio::spawn(search(rs[i % 3].url("/mcp/obv"), i, format!("voor {i}"))));
    }
    for c in calls {
        structured(&c.await.unwrap());
    }
    let killed = Instant::now();
    rs[owner].kill();
    let survivors: Vec<usize> = (0..3).filter(|&i| i != owner).collect();
    // Calls arriving meanwhile wait for the new owner (or fail closed with a retry time).
    let mut during = Vec::new();
    for (n, &i) in survivors.iter().cycle().take(10).enumerate() {
        during.push(tokio::spawn(search(rs[i].url("/mcp/obv"), n, format!("tijdens {n}"))));
    }
    let lease = besluitbron_server::driver::lease::lease_config(Duration::from_millis(TTL_MS));
    let bound = lease.ttl * 2 + lease.margin;
    assert!(
        eventually(bound + Duration::from_secs(3), async || survivors
            .iter()
            .any(|&i| rs[i].owns()))
        .await,
        "a survivor owns obv"
    );
    let took = killed.elapsed();
    eprintln!("new owner admitting {took:?} after the kill (bound 2·TTL + m = {bound:?})");
    assert!(
        took <= bound + Duration::from_millis(400),
        "a new owner took {took:?} (2·TTL + m = {bound:?})"
    );
    for c in during {
        let r = c.await.unwrap();
        let m = r.message.as_ref().expect("an answer");
        if m["result"]["isError"] == json!(true) {
            let text = tool_error_text(&r);
            assert!(
                text.contains("OpenBesluitvorming") && text.contains("retry in"),
                "{text}"
            );
        }
    }
    for n in 0..20 {
        let i = survivors[n % 2];
        structured(&search(rs[i].url("/mcp/obv"), n, format!("na {n}")).await);
    }
    assert_eq!(f.obv.rate_limited(), 0, "no 429 at the platform after the handover");
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    for (i, r) in rs.into_iter().enumerate() {
        if i != owner {
            r.stop().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_redis_gone_misses_fail_closed_and_recover_after_its_restart() {
    let mut redis = RedisServer::start("own-down");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-down").await;
    let owner = one_owner(&rs).await;
    let follower = (owner + 1) % 3;
    structured(&search(rs[owner].url("/mcp/obv"), 1, "bewaard".to_owned()).await);
    redis.kill();
    // The owner's lease lapses by its own clock: nobody admits.
    assert!(
        eventually(Duration::from_secs(3), async || owners(&rs).is_empty()).await,
        "without Redis no replica owns obv"
    );
    let before = f.obv.requests();
    for (i, r) in [owner, follower].into_iter().enumerate() {
        let reply = search(rs[r].url("/mcp/obv"), 10 + i, format!("nieuw {i}")).await;
        let text = tool_error_text(&reply);
        assert!(
            text.contains("cannot agree on who may call OpenBesluitvorming")
                && text.contains("shared state unreachable")
                && text.contains("retry in"),
            "{text}"
        );
    }
    assert_eq!(f.obv.requests(), before, "no call to the platform outside a lease");
    // What the old owner holds in memory is still answered.
    structured(&search(rs[owner].url("/mcp/obv"), 1, "bewaard".to_owned()).await);
    redis.restart();
    one_owner(&rs).await;
    structured(&search(rs[follower].url("/mcp/obv"), 12, "nieuw na herstart".to_owned()).await);
    assert_eq!(f.obv.rate_limited(), 0);
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paused_redis_stops_every_owner_and_ownership_recovers_after() {
    let redis = RedisServer::start("own-pause");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let rs = three(&world, &f, &redis, "own-pause").await;
    one_owner(&rs).await;
    redis.pause(Duration::from_millis(3_000));
    let paused = Instant::now();
    assert!(
        eventually(Duration::from_secs(3), async || owners(&rs).is_empty()).await,
        "a paused engine answers no renewal: the lease lapses"
    );
    let mut during = Vec::new();
    for i in 0..6 {
        during.push(tokio::spawn(search(rs[i % 3].url("/mcp/obv"), i, format!("pauze {i}"))));
    }
    for c in during {
        let r = c.await.unwrap();
        let m = r.message.as_ref().expect("an answer");
        if m["result"]["isError"] == json!(true) {
            assert!(tool_error_text(&r).contains("retry in"));
        }
    }
    eprintln!("calls during the pause ended {:?} after it began", paused.elapsed());
    one_owner(&rs).await;
    structured(&search(rs[0].url("/mcp/obv"), 9, "na de pauze".to_owned()).await);
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0, "no call outside a lease");
    assert_eq!(f.obv.rate_limited(), 0);
    for r in rs {
        r.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_internal_endpoint_wants_the_secret() {
    let redis = RedisServer::start("own-secret");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let r = Replica::start(&world, &f, &redis.url(), "own-secret").await;
    let url = format!("{}{}", r.node().url(), besluitbron_server::cluster::forward::CALL_PATH);
    let http = reqwest::Client::new();
    for auth in [
        None,
        Some("Bearer wrong-secret-of-the-cluster"),
        Some("Bearer a-test-secret-of-the-cluste"),
    ] {
        let mut req = http.post(&url).body("{}");
        if let Some(a) = auth {
            req = req.header("authorization", a);
        }
        assert_eq!(req.send().await.unwrap().status().as_u16(), 401, "{auth:?}");
    }
    let ok = http
        .post(&url)
        .header("authorization", format!("Bearer {SECRET}"))
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(
        ok.status().as_u16(),
        400,
        "the secret lets a request in (this one is malformed)"
    );
    r.stop().await;
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forwarded_call_waits_fairly_reports_progress_and_is_withdrawn_when_cancelled() {
    // OpenBesluitvorming's own limit (60 a minute): the new owner starts with an empty
    // bucket, so every call waits its turn at one unit a second.
    let redis = RedisServer::start("own-fair");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let mut rs = Vec::new();
    for i in 0..3 {
        rs.push(Replica::start_platform_limit(&world, &f, &redis.url(), &format!("own-fair-{i}")).await);
    }
    let owner = one_owner(&rs).await;
    let (a, b) = ((owner + 1) % 3, (owner + 2) % 3);
    // A busy session floods through replica a.
    let busy = Arc::new(Mcp::initialize(rs[a].url("/mcp/obv")).await);
    let mut flood = Vec::new();
    for i in 0..12 {
        let busy = Arc::clone(&busy);
        flood.push(tokio::spawn(async move {
            busy.call_with_id(100 + i, "obv_search", json!({"query": format!("druk {i}")}))
                .await
        }));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A late session on replica b is served within the single-process starvation bound,
    // and hears where it stands while it waits (progress relayed from the owner).
    let late = Mcp::initialize(rs[b].url("/mcp/obv")).await;
    let asked = Instant::now();
    let r = late
        .post(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "obv_search", "arguments": {"query": "laat"}, "_meta": {"progressToken": "p-late"}}}))
        .await;
    let waited = asked.elapsed();
    structured(&r);
    eprintln!("the late session waited {waited:?} behind a flood on another replica");
    assert!(waited < Duration::from_secs(3), "the late session waited {waited:?}");
    assert!(
        r.text.contains("notifications/progress") && r.text.contains("waiting for OpenBesluitvorming"),
        "progress from the owner reaches the assistant: {}",
        r.text
    );
    // A forwarded call the client cancels is withdrawn at the owner.
    let before = obv_lane(&rs[owner]).await;
    let waiting = {
        let busy = Arc::clone(&busy);
        tokio::spawn(async move {
            busy.call_with_id(900, "obv_search", json!({"query": "laat maar"}))
                .await
        })
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    while obv_lane(&rs[owner]).await.queued == before.queued && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(
        obv_lane(&rs[owner]).await.queued,
        before.queued + 1,
        "the forwarded call waits at the owner"
    );
    let n = busy
        .post(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 900}}))
        .await;
    assert!(n.status == 202 || n.status == 200, "{}", n.text);
    let deadline = Instant::now() + Duration::from_secs(5);
    let mut after = obv_lane(&rs[owner]).await;
    while after.cancelled_calls == before.cancelled_calls && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        after = obv_lane(&rs[owner]).await;
    }
    assert_eq!(
        after.cancelled_calls,
        before.cancelled_calls + 1,
        "the dropped forward was withdrawn at the owner"
    );
    waiting.abort();
    for t in flood {
        structured(&t.await.unwrap());
    }
    assert_eq!(f.obv.rate_limited(), 0);
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    rs[owner].kill();
    for (i, r) in rs.into_iter().enumerate() {
        if i != owner {
            r.stop().await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_graceful_shutdown_hands_the_lease_over() {
    let redis = RedisServer::start("own-hand");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let mut rs = three(&world, &f, &redis, "own-hand").await;
    let owner = one_owner(&rs).await;
    let old = rs[owner].node().url().to_owned();
    let state = Arc::clone(&rs[owner].state);
    let stopping = Instant::now();
    rs.remove(owner).stop().await;
    let lease: Option<String> = redis.command(&["GET", "besluitbron:lease:obv"]);
    assert!(
        lease.as_deref().is_none_or(|v| !v.contains(&old)),
        "the stopped owner released its lease: {lease:?}"
    );
    let m = state.metrics().render();
    assert!(
        m.contains("besluitbron_lease_changes_total{platform=\"obv\",change=\"handed_over\"} 1"),
        "{m}"
    );
    let config = besluitbron_server::driver::lease::lease_config(Duration::from_millis(TTL_MS));
    assert!(
        eventually(config.ttl * 3, async || owners(&rs).len() == 1).await,
        "another replica owns obv"
    );
    eprintln!(
        "handed over: the next owner admits {:?} after the stop began",
        stopping.elapsed()
    );
    structured(&search(rs[0].url("/mcp/obv"), 1, "na overdracht".to_owned()).await);
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    for r in rs {
        r.stop().await;
    }
}

/// A TCP proxy on loopback in front of a replica's internal endpoint.
struct Proxy {
    addr: std::net::SocketAddr,
    target: Arc<OnceLock<std::net::SocketAddr>>,
    /// While set, nothing passes (the link hangs, the connections stay open).
    stalled: Arc<std::sync::atomic::AtomicBool>,
}

/// A proxy that delays every chunk by `delay` in both directions.
async fn slow_proxy(delay: Duration) -> Proxy {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let target: Arc<OnceLock<std::net::SocketAddr>> = Arc::new(OnceLock::new());
    let stalled = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (t, st) = (Arc::clone(&target), Arc::clone(&stalled));
    tokio::spawn(async move {
        loop {
            let Ok((inbound, _)) = listener.accept().await else {
                return;
            };
            let Some(to) = t.get().copied() else { continue };
            let st = Arc::clone(&st);
            tokio::spawn(async move {
                let Ok(outbound) = tokio::net::TcpStream::connect(to).await else {
                    return;
                };
                let (ri, wi) = inbound.into_split();
                let (ro, wo) = outbound.into_split();
                tokio::spawn(pipe(ri, wo, delay, Arc::clone(&st)));
                tokio::spawn(pipe(ro, wi, delay, st));
            });
        }
    });
    Proxy { addr, target, stalled }
}

async fn pipe(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    delay: Duration,
    stalled: Arc<std::sync::atomic::AtomicBool>,
) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => {
                let _ = to.shutdown().await;
                return;
            }
            Ok(n) => n,
        };
        tokio::time::sleep(delay).await;
        while stalled.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        if to.write_all(&buf[..n]).await.is_err() {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_link_between_replicas_slows_forwards_but_keeps_the_rules() {
    let redis = RedisServer::start("own-slow");
    let f = fakes().await;
    f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 600);
    f.obv.set_latency(Duration::from_millis(200));
    let world = Arc::new(World::default());
    let mut rs = Vec::new();
    let mut proxies = Vec::new();
    for i in 0..3 {
        let proxy = slow_proxy(Duration::from_millis(150)).await;
        let r = Replica::start_with(&world, &f, &redis.url(), &format!("own-slow-{i}"), |c| {
            c.internal_url = format!("http://{}", proxy.addr);
        })
        .await;
        let _ = proxy.target.set(r.node().internal_addr());
        rs.push(r);
        proxies.push(proxy);
    }
    let owner = one_owner(&rs).await;
    let before = f.obv.requests();
    let mut calls = Vec::new();
    for i in 0..12 {
        // Half distinct, half the same question: coalescing holds over the slow link.
        let query = if i % 2 == 0 {
            format!("traag {i}")
        } else {
            "traag gedeeld".to_owned()
        };
        let url = rs[i % 3].url("/mcp/obv");
        calls.push(tokio::spawn(async move {
            let started = Instant::now();
            let r = search(url, i, query).await;
            (r, started.elapsed())
        }));
    }
    let mut forwarded = Vec::new();
    for (i, c) in calls.into_iter().enumerate() {
        let (r, took) = c.await.unwrap();
        structured(&r);
        if i % 3 != owner {
            forwarded.push(took);
        }
    }
    forwarded.sort();
    eprintln!("forwards over a 150 ms link: {forwarded:?}");
    assert!(
        forwarded.iter().all(|&d| d >= Duration::from_millis(300)),
        "a forward crosses the slow link both ways"
    );
    assert_eq!(f.obv.requests() - before, 7, "six distinct questions and one shared");
    // The link to the owner hangs: a forward that hears nothing (not even the owner's
    // heartbeat) is given up, and the call fails closed instead of hanging.
    proxies[owner].stalled.store(true, Ordering::SeqCst);
    let follower = (owner + 1) % 3;
    let asked = Instant::now();
    let r = search(rs[follower].url("/mcp/obv"), 50, "vastgelopen".to_owned()).await;
    let took = asked.elapsed();
    let text = tool_error_text(&r);
    assert!(
        text.contains("OpenBesluitvorming") && text.contains("retry in"),
        "{text}"
    );
    eprintln!("a hung link failed closed after {took:?}");
    assert!(took < Duration::from_secs(12), "no hang: {took:?}");
    proxies[owner].stalled.store(false, Ordering::SeqCst);
    structured(&search(rs[follower].url("/mcp/obv"), 51, "weer vrij".to_owned()).await);
    assert_eq!(f.obv.rate_limited(), 0);
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    for r in rs {
        r.stop().await;
    }
}

mod gated_driver {
    //! The platform task under a lease, in tokio's paused clock, with a stand-in engine
    //! that grants every request until it is "down": the task admits nothing before the
    //! start, starts with an empty bucket, sends nothing once the lease has lapsed (an
    //! admission made after is dropped, not sent), and hands its waiting calls back.

    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    use besluitbron_core::cache::{CacheKey, CachePolicy, DataClass};
    use besluitbron_core::cluster::{Lease, LeaseAnswer, LeaseEvent};
    use besluitbron_core::path::{Feedback, Outcome, PathConfig};
    use besluitbron_core::{Instant, LimitConfig, SchedulerConfig, SessionKey, Units};
    use besluitbron_server::clock::Clock;
    use besluitbron_server::driver::lease::lease_config;
    use besluitbron_server::driver::{
        self, CallError, CallRequest, DriverOptions, LeaseGate, Ownership, Payload, PlatformHandle, ServerBuffer,
        Upstream,
    };
    use besluitbron_server::metrics::Metrics;
    use tokio_util::sync::CancellationToken;

    fn request(q: &str) -> CallRequest {
        CallRequest {
            key: CacheKey::new(
                besluitbron_server::platforms::obv::PLATFORM,
                DataClass::Search,
                "search",
            )
            .param("query", q),
            session: SessionKey::client("s"),
            cost: Units::ONE,
            service: None,
        }
    }

    fn answer() -> Upstream {
        Arc::new(|_| {
            Box::pin(async {
                Outcome::Success {
                    payload: Payload::from_bytes(b"{\"answer\":1}".to_vec()),
                    feedback: Feedback::default(),
                }
            })
        })
    }

    /// The engine stand-in: drives `gate` like the lease task, granting while `up`;
    /// `Lost` reaches the platform's task `late` after it happened (a lease task stuck
    /// on a slow engine call).
    fn engine(gate: LeaseGate, handle: PlatformHandle, clock: Clock, up: Arc<AtomicBool>, late: Duration) {
        tokio::spawn(async move {
            loop {
                let now = clock.now();
                let mut events = Vec::new();
                {
                    let mut g = gate.lock().unwrap();
                    g.handle_timeout(now);
                    if let Some(r) = g.poll_request(now) {
                        let a = if up.load(Ordering::SeqCst) {
                            LeaseAnswer::Granted
                        } else {
                            LeaseAnswer::Unreachable
                        };
                        g.on_answer(now, r.id, a);
                    }
                    while let Some(e) = g.poll_event() {
                        events.push(e);
                    }
                }
                for e in events {
                    match e {
                        LeaseEvent::StartAdmitting { epoch } => handle.ownership(Ownership::Start {
                            epoch,
                            checkpoint: None,
                        }),
                        LeaseEvent::Lost { .. } => {
                            tokio::time::sleep(late).await;
                            handle.ownership(Ownership::End);
                        }
                        _ => {}
                    }
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
    }

    #[tokio::test(start_paused = true)]
    async fn the_task_admits_and_sends_only_under_its_lease() {
        let clock = Clock::start();
        let lease = lease_config(Duration::from_millis(1_000));
        let gate: LeaseGate = Arc::new(Mutex::new(Lease::new(lease, clock.now()).unwrap()));
        let sends: Arc<Mutex<Vec<Instant>>> = Arc::default();
        let s = Arc::clone(&sends);
        let metrics = Arc::new(Metrics::new());
        let policy = CachePolicy::default().for_platform(besluitbron_server::platforms::obv::PLATFORM);
        let options = DriverOptions {
            clock,
            metrics: Arc::clone(&metrics),
            attempt_timeout: Duration::from_secs(30),
            observer: Some(Arc::new(move |_| s.lock().unwrap().push(clock.now()))),
            cancel: CancellationToken::new(),
            recorder: None,
        };
        let limit = SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60)));
        let (handle, _task) = driver::task::spawn_one(
            PathConfig::single("obv", Some(limit)),
            ServerBuffer::new(besluitbron_server::platforms::obv::PLATFORM, None, policy),
            options,
            Some(Arc::clone(&gate)),
        )
        .unwrap();

        // Before the lease: nothing is admitted, the call goes elsewhere.
        let r = handle.call(request("voor"), answer, None).await;
        assert!(
            matches!(r, Err(CallError::NotOwner(p)) if p == besluitbron_server::platforms::obv::PLATFORM),
            "{r:?}"
        );

        let up = Arc::new(AtomicBool::new(true));
        engine(
            Arc::clone(&gate),
            handle.clone(),
            clock,
            Arc::clone(&up),
            Duration::from_secs(3),
        );
        // The start wait (TTL + m), then the first call waits for a unit to refill: the
        // new owner's bucket starts empty.
        tokio::time::sleep(lease.start_wait() + Duration::from_millis(50)).await;
        let started = clock.now();
        handle.call(request("eerste"), answer, None).await.expect("admitted");
        let first = sends.lock().unwrap()[0];
        assert!(
            first.saturating_since(started) >= Duration::from_millis(900),
            "an empty bucket at the start: the first call waited {:?}",
            first.saturating_since(started)
        );

        // Queue calls, then the engine goes down: the lease lapses by the task's clock.
        let mut waiting = Vec::new();
        for i in 0..5 {
            let h = handle.clone();
            waiting.push(tokio::spawn(async move {
                h.call(request(&format!("q{i}")), answer, None).await
            }));
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
        up.store(false, Ordering::SeqCst);
        let valid_until = gate.lock().unwrap().valid_until().expect("held");
        let mut ends = Vec::new();
        for w in waiting {
            ends.push(w.await.unwrap());
        }
        let sent = sends.lock().unwrap().clone();
        assert!(
            sent.iter().all(|&t| t < valid_until),
            "nothing sent after the lease lapsed at {valid_until:?}: {sent:?}"
        );
        assert!(
            ends.iter().any(|e| matches!(e, Err(CallError::NotOwner(_)))),
            "the calls left waiting go to the next owner: {ends:?}"
        );
        let text = metrics.render();
        assert!(
            text.contains("besluitbron_dropped_admissions_total{platform=\"obv\"}"),
            "an admission made after the lapse was dropped, not sent: {text}"
        );
        // After the end: refused at once.
        let r = handle.call(request("na"), answer, None).await;
        assert!(matches!(r, Err(CallError::NotOwner(_))), "{r:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_legacy_session_alternating_between_replicas_survives_the_owners_death() {
    let redis = RedisServer::start("own-session");
    let f = fakes().await;
    f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 600);
    let world = Arc::new(World::default());
    let mut rs = three(&world, &f, &redis, "own-session").await;
    let owner = one_owner(&rs).await;
    // A 2025-06-18 session opened on the owner, the replica that will die; its requests
    // go round the three replicas, each a question only the platform can answer.
    let mut c = Mcp::initialize(rs[owner].url("/mcp/obv")).await;
    for round in 0..6 {
        c.url = rs[(owner + round) % 3].url("/mcp/obv");
        let r = c
            .call("obv_search", json!({"query": format!("voor {round}"), "limit": 2}))
            .await;
        assert_eq!(r.status, 200, "round {round}: {}", r.text);
        structured(&r);
    }
    rs[owner].kill();
    let survivors: Vec<usize> = (0..3).filter(|&i| i != owner).collect();
    let lease = besluitbron_server::driver::lease::lease_config(Duration::from_millis(TTL_MS));
    assert!(
        eventually(lease.ttl * 2 + lease.margin + Duration::from_secs(3), async || {
            survivors.iter().any(|&i| rs[i].owns())
        })
        .await,
        "a survivor owns obv"
    );
    // The session goes on at the survivors (restored from Redis where it was never held),
    // its calls answered by the new owner.
    for round in 0..8 {
        c.url = rs[survivors[round % 2]].url("/mcp/obv");
        let listed = c
            .post(json!({"jsonrpc": "2.0", "id": 5000 + round, "method": "tools/list"}))
            .await;
        assert_eq!(listed.status, 200, "round {round}: {}", listed.text);
        let r = c
            .call("obv_search", json!({"query": format!("na {round}"), "limit": 2}))
            .await;
        assert_eq!(r.status, 200, "round {round}: {}", r.text);
        structured(&r);
    }
    assert_eq!(f.obv.rate_limited(), 0, "no 429 at the platform");
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0, "owners never overlapped");
    for (i, r) in rs.into_iter().enumerate() {
        if i != owner {
            r.stop().await;
        }
    }
}

/// Late sessions across replicas wait behind no flood sent as the SDKs send it. Six legacy
/// sessions each send 40 distinct searches at once over one HTTP client (a pool of
/// connections), spread over the three replicas (session i on replica i mod 3); the owner
/// is new (its bucket starts empty, a unit a second), so the flood waits there from the
/// start. Then five late sessions, one after another, each a new legacy session on a
/// follower asking one search. Counted from the owner's admissions, for each late call:
/// no flood call is admitted while it waits in the owner's fair queue (the order the
/// owner decides), and at most one between the moment it is sent and its admission (a
/// unit the owner gave while the late call was still on its way, which one process has
/// too, over a shorter way).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn late_sessions_on_a_follower_go_before_a_flood_sent_as_the_sdks_send_it() {
    let redis = RedisServer::start("own-late");
    let f = fakes().await;
    let world = Arc::new(World::default());
    let mut rs = Vec::new();
    for i in 0..3 {
        rs.push(Replica::start_platform_limit(&world, &f, &redis.url(), &format!("own-late-{i}")).await);
    }
    let owner = one_owner(&rs).await;
    let mut flood = tokio::task::JoinSet::new();
    for s in 0..6 {
        let client = Arc::new(Mcp::initialize(rs[s % 3].url("/mcp/obv")).await);
        for j in 0..40 {
            let client = Arc::clone(&client);
            flood.spawn(async move {
                client
                    .call_with_id(100 + j, "obv_search", json!({"query": format!("druk{s}x{j}")}))
                    .await
            });
        }
    }
    assert!(
        eventually(Duration::from_secs(30), async || world.admitted.lock().unwrap().len()
            >= 3)
        .await,
        "the owner admits the flood"
    );
    let follower = (owner + 1) % 3;
    for n in 0..5 {
        let mut late = Mcp::initialize(rs[follower].url("/mcp/obv")).await;
        let late_key = format!("session:{}", late.session.clone().expect("a legacy session"));
        let before = world.admitted.lock().unwrap().len();
        let reply = late.call("obv_search", json!({"query": format!("laat{n}")})).await;
        structured(&reply);
        let admitted = world.admitted.lock().unwrap().clone();
        let at = admitted
            .iter()
            .position(|a| a.session == late_key)
            .expect("the late call was admitted at the owner");
        assert!(at >= before, "late session {n} went after it was sent");
        let mine = &admitted[at];
        // Admitted after the late call reached the owner's queue, and before it.
        let passed_over: Vec<&Admitted> = admitted[before..at]
            .iter()
            .filter(|a| a.admitted_at > mine.queued_at)
            .collect();
        assert!(
            passed_over.is_empty(),
            "late session {n}: flood calls admitted while it waited in the owner's queue: {passed_over:?}"
        );
        let on_its_way = &admitted[before..at];
        assert!(
            on_its_way.len() <= 1,
            "late session {n}: flood calls admitted after it was sent: {on_its_way:?}"
        );
    }
    assert_eq!(owners(&rs), [owner], "the owner stayed the same");
    assert!(
        world.admitted.lock().unwrap().len() < 240,
        "the flood still waits: the late calls did not come after it"
    );
    flood.abort_all();
    for r in rs {
        r.stop().await;
    }
}

/// Calls on the survivors while a killed owner's lease runs out wait for the
/// new owner and are answered. A refused connection to the dead owner comes back at
/// once; counted as a forward, 32 of them (a tenth of a second apart) ended such a call
/// with "cannot agree" after about 3 s, long before a 5 s lease could run out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_43_calls_wait_out_a_dead_owners_lease_and_are_answered() {
    let redis = RedisServer::start("own-dead");
    let f = fakes().await;
    f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 600);
    let world = Arc::new(World::default());
    let mut rs = Vec::new();
    for i in 0..3 {
        let name = format!("own-dead-{i}");
        rs.push(Replica::start_with(&world, &f, &redis.url(), &name, |c| c.lease_ttl_ms = 5_000).await);
    }
    let owner = {
        let rs = &rs;
        assert!(
            eventually(Duration::from_secs(20), async || owners(rs).len() == 1).await,
            "one replica owns obv"
        );
        owners(rs)[0]
    };
    structured(&search(rs[(owner + 1) % 3].url("/mcp/obv"), 0, "voor".to_owned()).await);
    rs[owner].kill();
    let survivors: Vec<usize> = (0..3).filter(|&i| i != owner).collect();
    let mut during = Vec::new();
    for (n, &i) in survivors.iter().cycle().take(6).enumerate() {
        during.push(tokio::spawn(search(rs[i].url("/mcp/obv"), n, format!("tijdens {n}"))));
    }
    for c in during {
        // An answer from the new owner, never "cannot agree" while its lease runs out.
        structured(&c.await.unwrap());
    }
    assert_eq!(world.overlaps.load(Ordering::SeqCst), 0);
    for (i, r) in rs.into_iter().enumerate() {
        if i != owner {
            r.stop().await;
        }
    }
}
