//! `--replicas N`: several BesluitBron replicas against one process alone, on the same
//! machine and the same fake platforms.
//!
//! What a run does: starts a `redis-server` of its own (Debian's, `scripts/redis-deps`
//! installs it; a unix socket in a temporary directory, persistence off), one BesluitBron
//! process without `[BesluitBron.Cluster]` (the ordinary target of the load bench) and N
//! replicas in this process, each with its own data directory and a Cluster section on
//! that socket (`InternalListen = 127.0.0.1:0`, a secret, the default lease TTL); waits
//! until exactly one replica owns the measured call's platform; spreads the clients over
//! the replicas round-robin (each client keeps its connection and session on one replica,
//! as a load balancer hashing on `Mcp-Session-Id` would); warms the cached call on the
//! single process and through every replica; then drives the single process and the
//! replicas in rotation with the same turns as the other servers of the bench (`main.rs`
//! `rotate`, `drive.rs`), each replica's clients measured as a group of their own.
//!
//! Invariants, checked after the run (the run fails otherwise): no request reached a fake
//! platform after the warm-ups (every measured call is the owner's buffer hit); the owner
//! did not change; every call a follower answered was forwarded to the owner — each
//! follower's `besluitbron_forwarded_calls_total` for the platform grew by at least the
//! number of calls it answered (a follower's memory-layer hit would not be forwarded and
//! would not measure a forward), and the owner forwarded none.
//!
//! What this module does not do: drive or time requests itself (`drive.rs`), or start
//! the echo or rmcp alone (the rotation here is the single process and the replicas).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use besluitbron_core::PlatformId;
use besluitbron_server::app::Hooks;
use besluitbron_server::cluster::forward::Node;
use besluitbron_server::config::ClusterConfig;
use besluitbron_server::connectors::CONNECTORS;
use besluitbron_server::metrics::PlatformLabel;

use crate::args::Args;
use crate::call::call;
use crate::conn::Target;
use crate::drive::Measured;
use crate::report::{load_average, ms, print_header, print_load, print_row, print_stalls};
use crate::rounds::{clients_of, interval, rotate, warm_up};
use crate::servers::{BesluitBron, Running};

/// The replicas' shared secret (the internal endpoint is on loopback only).
const SECRET: &str = "besluitbron-load-replicas-secret";

/// Runs the bench with `n` replicas (see the module's documentation).
pub(crate) async fn run(args: &Args, n: u16) -> anyhow::Result<()> {
    let n = usize::from(n);
    if args.clients < n {
        bail!("--replicas {n} needs at least {n} --clients (one per replica)");
    }
    let platform = measured_platform()?;
    let path = call().path;
    let load_before = load_average();

    // The engine first: without redis-server there is nothing to measure.
    let redis = Redis::start().await?;
    let single = BesluitBron::start().await?;
    let mut single_clients = clients_of(single.addr, path, args.clients).await?;
    let (answer_bytes, _) = warm_up(&mut single_clients[0], "warm-up call (one process)", 0).await?;

    let replicas = Replicas::start(&single, &redis, n).await?;
    let owner = replicas.owner(platform).await?;
    let mut groups: Vec<Vec<Target>> = (0..n).map(|_| Vec::new()).collect();
    for i in 0..args.clients {
        groups[i % n].push(Target::mcp(replicas.servers[i % n].addr, path).await?);
    }
    // The owner's call fills its buffer; each follower's is then forwarded to it.
    warm_up(&mut groups[owner][0], "warm-up call (the owner)", 0).await?;
    for (i, group) in groups.iter_mut().enumerate().filter(|(i, _)| *i != owner) {
        warm_up(&mut group[0], &format!("warm-up call (replica {i})"), 0).await?;
    }
    let upstream_after_warm = single.upstream_requests();
    let forwarded_before: Vec<u64> = (0..n).map(|i| replicas.forwarded(i, platform)).collect();
    let commands_before = redis.commands_processed();

    let interval = interval(args)?;
    let servers = vec![vec![single_clients], groups];
    let (_, [one, several]) = rotate(args, servers, &["one", "replicas"], interval).await;
    let upstream_moved = single.upstream_requests() - upstream_after_warm;
    let forwarded: Vec<u64> = (0..n)
        .map(|i| replicas.forwarded(i, platform) - forwarded_before[i])
        .collect();
    let owners_after = replicas.owners(platform);
    let redis_commands = redis
        .commands_processed()
        .zip(commands_before)
        .map(|(after, before)| after.saturating_sub(before));
    let load_after = load_average();

    replicas.stop().await?;
    single.stop().await?;
    drop(redis);

    let (Some(one), Some(per_replica)) = (one.and_then(|g| g.into_iter().next()), several) else {
        bail!("--seconds must be above zero");
    };
    let report = Report {
        args,
        n,
        owner,
        platform,
        answer_bytes,
        one: &one,
        per_replica: &per_replica,
        forwarded: &forwarded,
        redis_commands,
    };
    report.print(&load_before, &load_after);

    let errors = one.errors + per_replica.iter().map(|m| m.errors).sum::<u64>();
    if errors > 0 {
        let first = std::iter::once(&one)
            .chain(&per_replica)
            .find_map(|m| m.first_error.as_deref())
            .unwrap_or("?");
        bail!("{errors} failed requests; first: {first}");
    }
    if upstream_moved != 0 {
        bail!("{upstream_moved} requests reached the fake platform during the run: not all calls were buffer hits");
    }
    if owners_after != [owner] {
        bail!("the owner of {platform} changed during the run (replica {owner} before, {owners_after:?} after)");
    }
    for (i, (m, &f)) in per_replica.iter().zip(&forwarded).enumerate() {
        if i == owner && f != 0 {
            bail!("the owner (replica {i}) forwarded {f} calls");
        }
        if i != owner && f < m.answered {
            bail!(
                "replica {i} answered {} calls but forwarded {f}: some were answered from its own memory, not forwarded",
                m.answered
            );
        }
    }
    Ok(())
}

/// The platform the measured call's connector calls.
fn measured_platform() -> anyhow::Result<PlatformId> {
    let connector = call().path.trim_start_matches("/mcp/");
    CONNECTORS
        .iter()
        .find(|c| c.id == connector)
        .map(|c| c.platform)
        .with_context(|| format!("no connector {connector}"))
}

/// What `--replicas` prints.
struct Report<'a> {
    args: &'a Args,
    n: usize,
    owner: usize,
    platform: PlatformId,
    answer_bytes: usize,
    one: &'a Measured,
    per_replica: &'a [Measured],
    /// How much each replica's forwarded-calls counter grew during the rotation.
    forwarded: &'a [u64],
    /// Commands redis-server processed during the rotation, if it said.
    redis_commands: Option<u64>,
}

impl Report<'_> {
    fn print(&self, load_before: &str, load_after: &str) {
        self.print_setup();
        let (all, followers) = self.merged();
        let Some(followers) = followers else {
            return;
        };
        self.print_comparison(&all, &followers);
        self.print_forwards(&all, &followers);
        print_stalls("one-process", self.one);
        print_stalls("replicas", &all);
        print_load(load_before, load_after);
    }

    /// What was measured, how: the call, the clients, the protocol, the turns, the answer.
    fn print_setup(&self) {
        let Report { args, n, .. } = *self;
        let cores = std::thread::available_parallelism().map_or(0, |c| c.get());
        let tool = call().tool.unwrap_or("?");
        println!(
            "besluitbron-load --replicas {n}: `tools/call {tool}` (a buffer hit on the {} owner), {} clients \
             (round-robin over the replicas), protocol {}, {} s warm-up then {} measured 1 s turns per server \
             (one process and the replicas in rotation), answer {} bytes, {cores} cores shared by clients, \
             servers and redis-server",
            self.platform.display_name(),
            args.clients,
            args.protocol,
            args.warmup_seconds,
            args.seconds,
            self.answer_bytes,
        );
        println!();
    }

    /// Every replica's measurements together, and the followers' (none with one replica).
    fn merged(&self) -> (Measured, Option<Measured>) {
        let owner = self.owner;
        let mut all = self.per_replica[0].clone();
        let mut followers: Option<Measured> = None;
        for (i, m) in self.per_replica.iter().enumerate() {
            if i > 0 {
                all.alongside(m);
            }
            if i != owner {
                match followers.as_mut() {
                    Some(f) => f.alongside(m),
                    None => followers = Some(m.clone()),
                }
            }
        }
        (all, followers)
    }

    /// Clients on replica `i`: round-robin over the `n` replicas.
    fn clients_on(&self, i: usize) -> usize {
        (self.args.clients + self.n - 1 - i) / self.n
    }

    /// The table (one process, all replicas, the owner's, the followers'), the throughput
    /// against one process, and a forwarded call's latency against the owner's.
    fn print_comparison(&self, all: &Measured, followers: &Measured) {
        let Report { args, n, owner, .. } = *self;
        let on_owner = &self.per_replica[owner];
        let follower_clients = args.clients - self.clients_on(owner);
        print_header();
        print_row("one process (no cluster)", self.one);
        print_row(&format!("{n} replicas, all calls"), all);
        print_row(
            &format!(
                "… answered on the owner (replica {owner}, {} clients)",
                self.clients_on(owner)
            ),
            on_owner,
        );
        print_row(
            &format!("… forwarded by a follower to the owner ({follower_clients} clients)"),
            followers,
        );
        println!();
        let ratio = if self.one.per_sec() > 0.0 {
            all.per_sec() / self.one.per_sec()
        } else {
            0.0
        };
        println!(
            "throughput: {n} replicas {:.0} requests/s = {:.1} % of one process ({:.0} requests/s)",
            all.per_sec(),
            ratio * 100.0,
            self.one.per_sec()
        );
        let q = |m: &Measured, at: f64| m.latency_us.value_at_quantile(at);
        println!(
            "a forwarded call: p50 {} / p99 {} against {} / {} on the owner ({} / {} for one process)",
            ms(q(followers, 0.5)),
            ms(q(followers, 0.99)),
            ms(q(on_owner, 0.5)),
            ms(q(on_owner, 0.99)),
            ms(q(self.one, 0.5)),
            ms(q(self.one, 0.99)),
        );
    }

    /// The forwards the followers counted, each replica's share, and redis-server's
    /// commands per call.
    fn print_forwards(&self, all: &Measured, followers: &Measured) {
        let owner = self.owner;
        let forwarded: u64 = self
            .forwarded
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != owner)
            .map(|(_, f)| f)
            .sum();
        println!(
            "forwarded: {forwarded} calls (the followers' besluitbron_forwarded_calls_total{{platform=\"{}\"}}) for \
             {} calls the followers answered in all turns, warm-up included ({} of them in the measured windows); \
             the owner forwarded {}",
            self.platform.as_str(),
            followers.answered,
            followers.requests,
            self.forwarded[owner]
        );
        for (i, (m, f)) in self.per_replica.iter().zip(self.forwarded).enumerate() {
            let role = if i == owner { "owner" } else { "follower" };
            println!(
                "replica {i} ({role}, {} clients): {} calls answered, forwarded-calls counter +{f}",
                self.clients_on(i),
                m.answered
            );
        }
        if let Some(commands) = self.redis_commands {
            println!(
                "redis-server: {commands} commands during the rotation, {:.1} per call answered on the replicas \
                 (lease renewals included)",
                commands as f64 / all.answered.max(1) as f64
            );
        }
    }
}

/// The replicas, running.
pub(crate) struct Replicas {
    pub(crate) servers: Vec<Running>,
    /// The replicas [`Replicas::kill`] killed: no owners, not stopped.
    killed: Vec<usize>,
}

impl Replicas {
    /// Starts `n` replicas on `single`'s fakes, sharing `redis`.
    pub(crate) async fn start(single: &BesluitBron, redis: &Redis, n: usize) -> anyhow::Result<Replicas> {
        Replicas::start_with(single, redis, n, &Hooks::default()).await
    }

    /// [`Replicas::start`], each replica built with `hooks`.
    pub(crate) async fn start_with(
        single: &BesluitBron,
        redis: &Redis,
        n: usize,
        hooks: &Hooks,
    ) -> anyhow::Result<Replicas> {
        let mut servers = Vec::with_capacity(n);
        for i in 0..n {
            let (mut config, data_dir) = single.config_on_the_fakes()?;
            config.cluster = Some(ClusterConfig {
                redis: redis.url(),
                internal_listen: "127.0.0.1:0".parse()?,
                internal_url: String::new(),
                secret: SECRET.to_owned(),
                ..ClusterConfig::default()
            });
            let config = config
                .validated()
                .with_context(|| format!("replica {i}'s configuration"))?;
            servers.push(
                Running::start(config, data_dir, hooks.clone())
                    .await
                    .with_context(|| format!("replica {i}"))?,
            );
        }
        Ok(Replicas {
            servers,
            killed: Vec::new(),
        })
    }

    fn node(&self, i: usize) -> Option<&Arc<Node>> {
        self.servers[i].state.cluster()
    }

    /// The replicas that own `platform` and admit now.
    pub(crate) fn owners(&self, platform: PlatformId) -> Vec<usize> {
        (0..self.servers.len())
            .filter(|&i| !self.killed.contains(&i) && self.node(i).is_some_and(|n| n.owns_now(platform)))
            .collect()
    }

    /// Waits until exactly one replica owns `platform` and admits (a first owner waits
    /// TTL + m before it admits); that replica.
    pub(crate) async fn owner(&self, platform: PlatformId) -> anyhow::Result<usize> {
        let ttl = ClusterConfig::default().lease_ttl();
        let deadline = Instant::now() + ttl * 3 + Duration::from_secs(10);
        loop {
            if let [owner] = self.owners(platform)[..] {
                return Ok(owner);
            }
            if Instant::now() > deadline {
                bail!(
                    "no single replica owns {platform} after {:?} (owners: {:?})",
                    ttl * 3 + Duration::from_secs(10),
                    self.owners(platform)
                );
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// Replica `i`'s `besluitbron_forwarded_calls_total{platform}`.
    pub(crate) fn forwarded(&self, i: usize, platform: PlatformId) -> u64 {
        self.servers[i]
            .state
            .metrics()
            .forwarded_calls
            .get_or_create(&PlatformLabel {
                platform: platform.as_str(),
            })
            .get()
    }

    /// Kills replica `i` as `kill -9` would (`Running::kill`).
    pub(crate) fn kill(&mut self, i: usize) {
        self.servers[i].kill();
        self.killed.push(i);
    }

    pub(crate) async fn stop(self) -> anyhow::Result<()> {
        for (i, server) in self.servers.into_iter().enumerate() {
            if self.killed.contains(&i) {
                continue;
            }
            server.stop().await.with_context(|| format!("stop replica {i}"))?;
        }
        Ok(())
    }
}

/// A redis-server of the run's own: a unix socket in a temporary directory, no
/// persistence, killed when dropped.
pub(crate) struct Redis {
    dir: tempfile::TempDir,
    child: Child,
}

impl Redis {
    /// Starts redis-server and waits until it answers `PING`.
    pub(crate) async fn start() -> anyhow::Result<Redis> {
        let dir = tempfile::Builder::new()
            .prefix("besluitbron-load-redis")
            .tempdir()
            .context("temporary directory for redis-server")?;
        let spawned = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(socket(dir.path()))
            .args(["--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--dir"])
            .arg(dir.path())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn();
        let child = match spawned {
            Ok(child) => child,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                bail!("--replicas needs redis-server, which is not installed: ./scripts/redis-deps installs Debian's")
            }
            Err(e) => bail!("cannot start redis-server: {e}"),
        };
        let mut redis = Redis { dir, child };
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            if let Some(status) = redis.child.try_wait()? {
                bail!("redis-server exited at start: {status}");
            }
            if redis.ping() {
                return Ok(redis);
            }
            if Instant::now() > deadline {
                bail!("redis-server did not answer within 20 s");
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// The URL the replicas are configured with.
    fn url(&self) -> String {
        format!("unix://{}", socket(self.dir.path()).display())
    }
}

impl Redis {
    /// A connection to the server, or `None` when it does not answer within 200 ms.
    fn connection(&self) -> Option<redis::Connection> {
        let client = redis::Client::open(self.url()).ok()?;
        client.get_connection_with_timeout(Duration::from_millis(200)).ok()
    }

    /// Whether the server answers `PING` now.
    fn ping(&self) -> bool {
        self.connection()
            .is_some_and(|mut c| redis::cmd("PING").query::<String>(&mut c).is_ok())
    }

    /// `total_commands_processed` of `INFO stats`, or `None` when the server does not say.
    fn commands_processed(&self) -> Option<u64> {
        let mut c = self.connection()?;
        let info: String = redis::cmd("INFO").arg("stats").query(&mut c).ok()?;
        info.lines()
            .find_map(|line| line.strip_prefix("total_commands_processed:"))
            .and_then(|v| v.trim().parse().ok())
    }
}

impl Drop for Redis {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn socket(dir: &Path) -> PathBuf {
    dir.join("redis.sock")
}
