//! `--late-session`: does a session that arrives late wait as long across replicas as on
//! one process? (issue "Hardening, second round", item 2)
//!
//! What a run does, twice — on one BesluitBron process, then on three replicas sharing a
//! redis-server of the run's own — each on fake platforms of its own (so the fake
//! OpenBesluitvorming's bucket is full at the start of each): six busy sessions (legacy
//! MCP sessions, each its own fairness key) each send 40 distinct `obv_search` calls at
//! once, every call on a connection of its own; 5 s later a new session asks one search,
//! and its wait is measured from the moment it is sent to its answer — and so do four more
//! new sessions at 20.3, 35.5, 50.7 and 65.9 s, while the flood still waits, since one
//! wait is mostly the phase of the platform's bucket (the next free unit comes within a
//! second). The client limits
//! are raised out of the way (`servers.rs`), so only OpenBesluitvorming's fair queue (60
//! units a minute) decides. Across replicas the busy sessions are spread over all three
//! (session i on replica i mod 3) and the late session is on the third; the calls of a
//! follower are forwarded to the owner of OpenBesluitvorming's lease, which has run for a
//! minute first (its bucket refilled after the takeover, full as one process's is at its
//! start).
//!
//! Invariants, checked after each half (the run fails otherwise): every call of the flood
//! and the late call answered without a tool error; no 429 from the fake platform.
//!
//! What this module does not do: judge the figure (it prints both waits and their ratio;
//! `benches/README.md` keeps the target and explains the difference).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use besluitbron_core::PlatformId;
use serde_json::json;
use tokio::task::JoinSet;

use crate::call::{Asks, answer_ok};
use crate::conn::{Conn, Target};
use crate::replicas::{Redis, Replicas};
use crate::servers::BesluitBron;

const BUSY_SESSIONS: usize = 6;
const CALLS_PER_SESSION: usize = 40;
/// When the late sessions come, after the flood starts: the first as the issue describes
/// it, the others while the flood still waits (it lasts three minutes or more). Each wait
/// is mostly the time to the platform's next free unit, so it depends on where in the
/// bucket's second the session arrives: the instants are spread over the second (the same
/// in both halves), because a new owner's bucket starts empty when the flood starts and
/// its units come on whole seconds after it — late sessions on whole seconds would all
/// arrive just after a unit went and wait a full second.
const LATE_AT: [Duration; 5] = [
    Duration::from_millis(5_000),
    Duration::from_millis(20_300),
    Duration::from_millis(35_500),
    Duration::from_millis(50_700),
    Duration::from_millis(65_900),
];
const PATH: &str = "/mcp/obv";
/// OpenBesluitvorming's window (60 units a minute) and a margin: a new owner's bucket is
/// full again after it.
const REFILL: Duration = Duration::from_secs(62);

/// What one half measured.
struct Half {
    /// Each late session's wait for its answer.
    late: Vec<Duration>,
    /// From the flood's start until its last answer.
    flood: Duration,
}

pub(crate) async fn run() -> anyhow::Result<()> {
    let redis = Redis::start().await?;
    let single = BesluitBron::start().await?;
    let one = half(&[single.addr], 0, "een", &single).await.context("one process")?;
    single.stop().await?;

    let base = BesluitBron::start().await?;
    let replicas = Replicas::start(&base, &redis, 3).await?;
    let owner = replicas.owner(PlatformId::Obv).await?;
    // A new owner admits with an empty bucket (the platform never sees a burst at a
    // handover); one process starts with a full one. Compared like with like, the owner
    // has run long enough to refill it, as an owner in service has.
    tokio::time::sleep(REFILL).await;
    let addrs: Vec<SocketAddr> = replicas.servers.iter().map(|s| s.addr).collect();
    let forwarded_before: Vec<u64> = (0..3).map(|i| replicas.forwarded(i, PlatformId::Obv)).collect();
    let three = half(&addrs, 2, "drie", &base).await.context("three replicas")?;
    let forwarded: Vec<u64> = (0..3)
        .map(|i| replicas.forwarded(i, PlatformId::Obv) - forwarded_before[i])
        .collect();
    let owners_after = replicas.owners(PlatformId::Obv);
    replicas.stop().await?;
    base.stop().await?;
    drop(redis);

    println!(
        "besluitbron-load --late-session: {BUSY_SESSIONS} busy sessions x {CALLS_PER_SESSION} distinct obv_search \
         calls at once; a new session's one search at {:?} s into the flood; OpenBesluitvorming's own limit \
         (60 units a minute), client limits raised",
        LATE_AT.iter().map(Duration::as_secs_f64).collect::<Vec<_>>()
    );
    let secs = |waits: &[Duration]| {
        waits
            .iter()
            .map(|w| format!("{:.2}", w.as_secs_f64()))
            .collect::<Vec<_>>()
            .join(" ")
    };
    println!(
        "one process:    late sessions waited {} s, mean {:.2} s (the flood took {:.1} s)",
        secs(&one.late),
        mean(&one.late),
        one.flood.as_secs_f64()
    );
    println!(
        "three replicas: late sessions waited {} s, mean {:.2} s (the flood took {:.1} s; owner replica {owner}, the \
         late sessions on replica 2; forwarded per replica {forwarded:?})",
        secs(&three.late),
        mean(&three.late),
        three.flood.as_secs_f64()
    );
    println!(
        "ratio of the means: {:.2} (three replicas / one process); first late session alone: {:.2}",
        mean(&three.late) / mean(&one.late).max(1e-3),
        three.late[0].as_secs_f64() / one.late[0].as_secs_f64().max(1e-3)
    );
    if owners_after != [owner] {
        bail!("the owner of obv changed during the run ({owner} before, {owners_after:?} after)");
    }
    Ok(())
}

/// The flood over `addrs` (session i on `addrs[i % len]`) and the late session on
/// `addrs[late_on]`; `tag` keeps each half's searches apart.
async fn half(addrs: &[SocketAddr], late_on: usize, tag: &'static str, fakes: &BesluitBron) -> anyhow::Result<Half> {
    let rate_limited_before = fakes.rate_limited();
    let mut sessions = Vec::with_capacity(BUSY_SESSIONS);
    for s in 0..BUSY_SESSIONS {
        let addr = addrs[s % addrs.len()];
        let target = Target::mcp(addr, PATH).await?;
        sessions.push((addr, target.session.context("a legacy session")?));
    }
    let started = Instant::now();
    let mut flood = JoinSet::new();
    for (s, (addr, session)) in sessions.into_iter().enumerate() {
        for j in 0..CALLS_PER_SESSION {
            let session = session.clone();
            flood.spawn(async move {
                let mut conn = Conn::open(addr).await?;
                // One word per call: OpenBesluitvorming ANDs words, so distinct words are
                // distinct questions (and never one request after level-1 folding).
                let body = search(10 + j as u64, &format!("{tag}druk{s}x{j}"));
                let (status, _, answer) = conn.post(PATH, Some(&session), Asks::Call("obv_search"), body).await?;
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
    let mut waited = Vec::with_capacity(LATE_AT.len());
    for (n, at) in LATE_AT.into_iter().enumerate() {
        // Opened just before it asks: a new session, as late as it comes.
        tokio::time::sleep(at.saturating_sub(started.elapsed() + Duration::from_millis(200))).await;
        let mut late = Target::mcp(addrs[late_on], PATH).await?;
        tokio::time::sleep(at.saturating_sub(started.elapsed())).await;
        if flood.is_empty() {
            bail!("the flood ended before late session {n} came");
        }
        let asked = Instant::now();
        late.answer_once("a late session's search", search(7, &format!("{tag}laat{n}")))
            .await?;
        waited.push(asked.elapsed());
    }
    while let Some(done) = flood.join_next().await {
        done.context("a flood task")??;
    }
    let took = started.elapsed();
    let rate_limited = fakes.rate_limited() - rate_limited_before;
    if rate_limited != 0 {
        bail!("the fake platform answered {rate_limited} requests with 429");
    }
    Ok(Half {
        late: waited,
        flood: took,
    })
}

fn mean(waits: &[Duration]) -> f64 {
    waits.iter().map(Duration::as_secs_f64).sum::<f64>() / waits.len().max(1) as f64
}

fn search(id: u64, word: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "obv_search", "arguments": {"query": word, "limit": 5}}})
    .to_string()
    .into_bytes()
}
