//! `--late-session`: does a session that arrives late wait as long across replicas as on
//! one process, whatever the clients' connection habits, and right after the owner of the
//! platform's lease dies? (issues "Hardening, second round" item 2, "third round" item 1)
//!
//! The flood: six busy sessions (legacy MCP sessions, each its own fairness key) each send
//! 40 distinct `obv_search` calls at once, in one of two client shapes:
//! - **per call**: every call on a connection of its own;
//! - **pooled**: as an SDK's HTTP client sends them — the session's calls share a pool of
//!   at most [`POOL`] keep-alive connections (its handshake connection among them), so most
//!   calls wait in the client for a connection and reach the server as earlier ones are
//!   answered.
//!
//! New sessions each ask one search at [`LATE_AT`] into the flood, each [`PHASE`] after
//! the platform's next request (a unit given to the flood); each wait is measured from
//! the moment it is sent to its answer. One wait is mostly the time to the platform's
//! next unit, hence five, spread over the interval between two units alike in every half.
//! Beside each wait, the platform's requests during it (1: its own, no flood call went
//! ahead of it).
//! The client limits are raised out of the way (`servers.rs`), so only OpenBesluitvorming's
//! fair queue (60 units a minute) decides. Once the last late session is answered the flood
//! is dropped and its servers stopped: what comes after says nothing about the late
//! sessions. (A legacy session's call outlives its dropped connection — the client may
//! resume its stream — so every half runs on servers and fakes of its own.)
//!
//! A run, in this order:
//! 1. **One process**, each shape on fake platforms of its own (a full bucket at the start).
//! 2. **Three replicas** on a redis-server of the run's own, each shape on fresh replicas
//!    and fakes: the busy sessions spread over all three (session i on replica i mod 3), the
//!    late sessions on a follower (forwarded to the owner of OpenBesluitvorming's lease).
//!    Before its flood the owner runs a minute without traffic ([`REFILL`]: its bucket full,
//!    as one process's is at its start).
//! 3. **The owner killed mid-flood**: three fresh replicas, the flood (pooled) on the two
//!    followers only; [`KILL_AT`] into it the owner dies as `kill -9` leaves it (its lease
//!    runs out, the forwards it was answering break off); once a survivor has taken the
//!    lease over, the late sessions come on the other survivor at the same offsets from the
//!    takeover as in the other halves from the flood's start, minus the first 5 s. A new
//!    owner starts with an empty bucket (the platform never sees a burst at a handover),
//!    as one process's is 5 s into its flood, so the comparison is the pooled one-process
//!    half.
//!
//! Invariants, checked after each half (the run fails otherwise): every late call answered
//! without a tool error; every flood call answered before the drop answered without one
//! (the killed owner's half: those on the dead owner's forwards may fail, and are counted);
//! no 429 from the fake platform; the owner unchanged in the second part, changed to a
//! survivor in the third.
//!
//! What this module does not do: judge the figures (it prints the waits and their ratios;
//! `benches/README.md` keeps the target and explains them).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::json;
use tokio::task::JoinSet;

use crate::call::{Asks, answer_ok};
use crate::conn::{Conn, Pool, Target};
use crate::replicas::{Redis, Replicas};
use crate::servers::BesluitBron;

const BUSY_SESSIONS: usize = 6;
const CALLS_PER_SESSION: usize = 40;
/// The pooled shape's connections per session.
const POOL: usize = 8;
/// When the late sessions come, after the flood starts: the first as the issue describes
/// it, the others while the flood still waits (it lasts three minutes or more). Each then
/// waits for the platform's next request (a flood call given a unit) and asks [`PHASE`]
/// after it.
const LATE_AT: [Duration; 5] = [
    Duration::from_secs(5),
    Duration::from_secs(20),
    Duration::from_secs(35),
    Duration::from_secs(50),
    Duration::from_secs(65),
];
/// How long after a unit went to the flood each late session asks. One wait is mostly the
/// time to the platform's next unit, which depends on where between two units the session
/// arrives; the five arrivals are spread over that interval at the same places in every
/// half. (Arrivals at fixed offsets from the flood's start measured the offsets, not the
/// forwarding: one process's units come every second plus the platform's answer time, as
/// its `RateLimit-Remaining` moves them, and drifted along with offsets 15.2 s apart, while
/// a new owner's come on whole seconds from its takeover.)
const PHASE: [Duration; 5] = [
    Duration::from_millis(100),
    Duration::from_millis(300),
    Duration::from_millis(500),
    Duration::from_millis(700),
    Duration::from_millis(900),
];
/// How long a late session waits at most for the platform's next request before it asks.
const UNIT_SEEN_WITHIN: Duration = Duration::from_secs(5);
/// When the owner dies in the third part, after its flood starts.
const KILL_AT: Duration = Duration::from_secs(2);
const PATH: &str = "/mcp/obv";
/// OpenBesluitvorming's window (60 units a minute) and a margin: a new owner's bucket is
/// full again after it.
const REFILL: Duration = Duration::from_secs(62);

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Shape {
    PerCall,
    Pooled,
}

impl Shape {
    fn name(self) -> &'static str {
        match self {
            Shape::PerCall => "per call",
            Shape::Pooled => "pooled",
        }
    }
}

/// What one half measured.
struct Half {
    /// Each late session's wait for its answer.
    late: Vec<Duration>,
    /// Requests the fake platforms received while each late session waited, its own
    /// included: 1 when no flood call went ahead of it.
    upstream_during: Vec<u64>,
    /// Requests the fake platforms had received when each late session asked, since the
    /// flood started.
    upstream_before: Vec<u64>,
    /// Flood calls answered before the flood was dropped.
    answered: usize,
    /// Flood calls that failed (only the killed owner's half tolerates any), and the first.
    failed: usize,
    first_failure: Option<String>,
    /// `forwarded` calls per replica during the half (empty on one process).
    forwarded: Vec<u64>,
}

pub(crate) async fn run() -> anyhow::Result<()> {
    println!(
        "besluitbron-load --late-session: {BUSY_SESSIONS} busy sessions x {CALLS_PER_SESSION} distinct obv_search \
         calls at once (per call: a connection each; pooled: at most {POOL} shared connections per session); a new \
         session's one search at {:?} s into the flood, each {:?} s after the platform's next request (a unit given \
         to the flood); OpenBesluitvorming's own limit (60 units a minute), client limits raised",
        LATE_AT.iter().map(Duration::as_secs_f64).collect::<Vec<_>>(),
        PHASE.iter().map(Duration::as_secs_f64).collect::<Vec<_>>()
    );
    let redis = Redis::start().await?;
    let mut one = Vec::new();
    for shape in [Shape::PerCall, Shape::Pooled] {
        let single = BesluitBron::start().await?;
        let flood = Flood::on(&single, &[single.addr], shape, &format!("een{}", shape as u8)).await?;
        let half = flood
            .measure(&single, single.addr, None, None)
            .await
            .with_context(|| format!("one process, {}", shape.name()))?;
        single.stop().await?;
        report(&format!("one process, {}", shape.name()), &half, None);
        one.push(half);
    }

    let mut three = Vec::new();
    for shape in [Shape::PerCall, Shape::Pooled] {
        let (half, owner, late_on) = three_replicas(&redis, shape)
            .await
            .with_context(|| format!("three replicas, {}", shape.name()))?;
        report(
            &format!(
                "three replicas, {} (owner replica {owner}, late sessions on replica {late_on})",
                shape.name()
            ),
            &half,
            Some(&one[shape as usize]),
        );
        three.push(half);
    }

    let (killed, took_over, new_owner) = killed_owner(&redis).await.context("the owner killed mid-flood")?;
    report(
        &format!(
            "three replicas, pooled, owner killed {:.0} s into the flood (new owner admitting {:.1} s after the kill, \
             replica {new_owner}; late sessions on the other survivor, from the takeover)",
            KILL_AT.as_secs_f64(),
            took_over.as_secs_f64()
        ),
        &killed,
        Some(&one[Shape::Pooled as usize]),
    );
    println!(
        "ratios of the means (three replicas / one process): per call {:.2}, pooled {:.2}, after the owner's kill {:.2}",
        ratio(&three[0], &one[0]),
        ratio(&three[1], &one[1]),
        ratio(&killed, &one[1]),
    );
    drop(redis);
    Ok(())
}

/// The second part, one shape: fresh replicas on fresh fakes (a legacy session's calls
/// outlive its dropped connections — its stream can be resumed — so a flood dropped here
/// would still wait at the owner in the next shape's half), the owner refilled, the flood
/// over all three, the late sessions on a follower. The half, the owner, and the replica
/// of the late sessions.
async fn three_replicas(redis: &Redis, shape: Shape) -> anyhow::Result<(Half, usize, usize)> {
    let base = BesluitBron::start().await?;
    let replicas = Replicas::start(&base, redis, 3).await?;
    let owner = replicas.owner(besluitbron_server::platforms::obv::PLATFORM).await?;
    // A new owner admits with an empty bucket (the platform never sees a burst at a
    // handover); one process starts with a full one. Compared like with like, the owner
    // has run long enough to refill it, as an owner in service has.
    tokio::time::sleep(REFILL).await;
    let addrs: Vec<SocketAddr> = replicas.servers.iter().map(|s| s.addr).collect();
    let late_on = (owner + 2) % 3;
    let flood = Flood::on(&base, &addrs, shape, &format!("drie{}", shape as u8)).await?;
    let half = flood.measure(&base, addrs[late_on], Some(&replicas), None).await?;
    let owners_after = replicas.owners(besluitbron_server::platforms::obv::PLATFORM);
    replicas.stop().await?;
    base.stop().await?;
    if owners_after != [owner] {
        bail!("the owner of obv changed during the half ({owner} before, {owners_after:?} after)");
    }
    Ok((half, owner, late_on))
}

/// The third part: fresh replicas, the pooled flood on the two followers, the owner killed
/// [`KILL_AT`] into it, the late sessions after the takeover. The half, how long after the
/// kill the new owner admitted, and the new owner.
async fn killed_owner(redis: &Redis) -> anyhow::Result<(Half, Duration, usize)> {
    let base = BesluitBron::start().await?;
    let mut replicas = Replicas::start(&base, redis, 3).await?;
    let owner = replicas.owner(besluitbron_server::platforms::obv::PLATFORM).await?;
    tokio::time::sleep(REFILL).await;
    let survivors: Vec<usize> = (0..3).filter(|&i| i != owner).collect();
    let addrs: Vec<SocketAddr> = survivors.iter().map(|&i| replicas.servers[i].addr).collect();
    let flood = Flood::on(&base, &addrs, Shape::Pooled, "dood").await?;
    let started = flood.started;
    tokio::time::sleep(KILL_AT.saturating_sub(started.elapsed())).await;
    let killed_at = Instant::now();
    replicas.kill(owner);
    let new_owner = loop {
        let owners = replicas.owners(besluitbron_server::platforms::obv::PLATFORM);
        if let [o] = owners[..] {
            break o;
        }
        if killed_at.elapsed() > Duration::from_secs(60) {
            bail!("no survivor took the lease over within 60 s of the kill (owners: {owners:?})");
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let took_over = killed_at.elapsed();
    let late_on = survivors
        .iter()
        .copied()
        .find(|&i| i != new_owner)
        .context("a survivor besides the new owner")?;
    let late_addr = replicas.servers[late_on].addr;
    // The same offsets from the takeover as from the flood's start elsewhere, minus the
    // first 5 s (the late sessions come right after the takeover).
    let shift = (killed_at + took_over).duration_since(started);
    let shift = shift.saturating_sub(LATE_AT[0]);
    let half = flood.measure(&base, late_addr, Some(&replicas), Some(shift)).await?;
    replicas.stop().await?;
    base.stop().await?;
    Ok((half, took_over, new_owner))
}

/// A flood, running: its calls' tasks, and when it started.
struct Flood {
    calls: JoinSet<anyhow::Result<()>>,
    started: Instant,
    /// The fake platforms' requests when the flood started.
    upstream_at_start: u64,
    tag: String,
}

impl Flood {
    /// Opens the busy sessions (session i on `addrs[i % len]`) and sends their calls at once;
    /// `tag` keeps each half's searches apart.
    async fn on(fakes: &BesluitBron, addrs: &[SocketAddr], shape: Shape, tag: &str) -> anyhow::Result<Flood> {
        let mut sessions = Vec::with_capacity(BUSY_SESSIONS);
        for s in 0..BUSY_SESSIONS {
            let addr = addrs[s % addrs.len()];
            let target = Target::mcp(addr, PATH).await?;
            let session = target.session.context("a legacy session")?;
            sessions.push((addr, session, Arc::new(Pool::new(addr, POOL, target.conn))));
        }
        let started = Instant::now();
        let upstream_at_start = fakes.upstream_requests();
        let mut calls = JoinSet::new();
        for (s, (addr, session, pool)) in sessions.into_iter().enumerate() {
            for j in 0..CALLS_PER_SESSION {
                let session = session.clone();
                let pool = Arc::clone(&pool);
                // One word per call: OpenBesluitvorming ANDs words, so distinct words are
                // distinct questions (and never one request after level-1 folding).
                let body = search(10 + j as u64, &format!("{tag}druk{s}x{j}"));
                calls.spawn(async move {
                    let (status, _, answer) = match shape {
                        Shape::PerCall => {
                            let mut conn = Conn::open(addr).await?;
                            conn.post(PATH, Some(&session), Asks::Call("obv_search"), body).await?
                        }
                        Shape::Pooled => pool.post(PATH, Some(&session), Asks::Call("obv_search"), body).await?,
                    };
                    if !status.is_success() || !answer_ok(&answer) {
                        bail!(
                            "busy session {s}, call {j}: {status} {}",
                            String::from_utf8_lossy(&answer[..answer.len().min(300)])
                        );
                    }
                    Ok(())
                });
            }
        }
        Ok(Flood {
            calls,
            started,
            upstream_at_start,
            tag: tag.to_owned(),
        })
    }

    /// The late sessions (each a new session at `late`) at [`LATE_AT`]
    /// after the flood's start, or after `shift` plus [`LATE_AT`] when the owner was
    /// killed (flood failures then tolerated); then drops the flood.
    async fn measure(
        mut self,
        fakes: &BesluitBron,
        late: SocketAddr,
        replicas: Option<&Replicas>,
        shift: Option<Duration>,
    ) -> anyhow::Result<Half> {
        let rate_limited_before = fakes.rate_limited();
        let forwarded_before = forwarded(replicas);
        let mut ended = Ended::default();
        let mut waited = Vec::with_capacity(LATE_AT.len());
        let mut upstream_during = Vec::with_capacity(LATE_AT.len());
        let mut upstream_before = Vec::with_capacity(LATE_AT.len());
        let upstream_at_start = self.upstream_at_start;
        for (n, at) in LATE_AT.into_iter().enumerate() {
            let at = at + shift.unwrap_or_default();
            // Opened just before it asks: a new session, as late as it comes.
            tokio::time::sleep(at.saturating_sub(self.started.elapsed() + Duration::from_millis(200))).await;
            let mut session = Target::mcp(late, PATH).await?;
            tokio::time::sleep(at.saturating_sub(self.started.elapsed())).await;
            let unit = next_request(fakes).await.with_context(|| format!("late session {n}"))?;
            tokio::time::sleep_until((unit + PHASE[n]).into()).await;
            ended.collect(&mut self.calls, shift.is_some())?;
            if self.calls.is_empty() {
                bail!("the flood ended before late session {n} came");
            }
            let asked = Instant::now();
            let before = fakes.upstream_requests();
            session
                .answer_once("a late session's search", search(7, &format!("{}laat{n}", self.tag)))
                .await?;
            waited.push(asked.elapsed());
            upstream_during.push(fakes.upstream_requests() - before);
            upstream_before.push(before - upstream_at_start);
        }
        ended.collect(&mut self.calls, shift.is_some())?;
        self.calls.shutdown().await;
        let rate_limited = fakes.rate_limited() - rate_limited_before;
        if rate_limited != 0 {
            bail!("the fake platform answered {rate_limited} requests with 429");
        }
        let forwarded = forwarded(replicas)
            .iter()
            .zip(&forwarded_before)
            .map(|(a, b)| a - b)
            .collect();
        Ok(Half {
            late: waited,
            upstream_during,
            upstream_before,
            answered: ended.answered,
            failed: ended.failed,
            first_failure: ended.first_failure,
            forwarded,
        })
    }
}

/// The flood calls that have ended so far.
#[derive(Default)]
struct Ended {
    answered: usize,
    failed: usize,
    first_failure: Option<String>,
}

impl Ended {
    /// Counts the calls of `calls` that have ended; a failed one is an error unless
    /// `tolerated` (the killed owner's half).
    fn collect(&mut self, calls: &mut JoinSet<anyhow::Result<()>>, tolerated: bool) -> anyhow::Result<()> {
        while let Some(done) = calls.try_join_next() {
            match done.context("a flood task")? {
                Ok(()) => self.answered += 1,
                Err(e) if tolerated => {
                    self.failed += 1;
                    self.first_failure.get_or_insert_with(|| format!("{e:#}"));
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

/// When the fake platforms next receive a request (within [`UNIT_SEEN_WITHIN`]).
async fn next_request(fakes: &BesluitBron) -> anyhow::Result<Instant> {
    let (before, since) = (fakes.upstream_requests(), Instant::now());
    while fakes.upstream_requests() == before {
        if since.elapsed() > UNIT_SEEN_WITHIN {
            bail!("the platform received no request within {UNIT_SEEN_WITHIN:?}");
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    Ok(Instant::now())
}

/// Prints one half's line.
fn report(what: &str, half: &Half, against: Option<&Half>) {
    let secs = half
        .late
        .iter()
        .map(|w| format!("{:.2}", w.as_secs_f64()))
        .collect::<Vec<_>>()
        .join(" ");
    let mut line = format!(
        "{what}: late sessions waited {secs} s, mean {:.2} s; platform requests during each wait {:?} \
         (since the flood's start, when each asked: {:?}); {} flood calls answered before the drop",
        mean(&half.late),
        half.upstream_during,
        half.upstream_before,
        half.answered
    );
    if half.failed > 0 {
        line += &format!(
            ", {} failed (first: {})",
            half.failed,
            half.first_failure.as_deref().unwrap_or("?")
        );
    }
    if !half.forwarded.is_empty() {
        line += &format!("; forwarded per replica {:?}", half.forwarded);
    }
    if let Some(one) = against {
        line += &format!(
            "; {:.2}x one process (first late session alone {:.2}x)",
            ratio(half, one),
            half.late[0].as_secs_f64() / one.late[0].as_secs_f64().max(1e-3)
        );
    }
    println!("{line}");
}

/// The ratio of the mean late waits.
fn ratio(half: &Half, one: &Half) -> f64 {
    mean(&half.late) / mean(&one.late).max(1e-3)
}

fn mean(waits: &[Duration]) -> f64 {
    waits.iter().map(Duration::as_secs_f64).sum::<f64>() / waits.len().max(1) as f64
}

/// Each replica's forwarded-calls counter for OpenBesluitvorming (none on one process; a
/// killed replica's stays where it was).
fn forwarded(replicas: Option<&Replicas>) -> Vec<u64> {
    replicas.map_or_else(Vec::new, |r| {
        (0..r.servers.len())
            .map(|i| r.forwarded(i, besluitbron_server::platforms::obv::PLATFORM))
            .collect()
    })
}

fn search(id: u64, word: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "obv_search", "arguments": {"query": word, "limit": 5}}})
    .to_string()
    .into_bytes()
}
