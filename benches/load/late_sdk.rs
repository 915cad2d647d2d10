//! `--late-sdk`: the late session as a measurement with an SDK's clients sends it, and
//! where each late call's wait goes: on its way to the owner's fair queue, or in it.
//!
//! The load, as written in the issue "A platform plugs in…" (its third point): six busy
//! legacy sessions each send 40 distinct `obv_search` calls at once, each session over a
//! pool of keep-alive connections as large as the Python SDK's HTTP client keeps
//! ([`SDK_POOL`], so every call of a session is out at once), on servers that have just
//! started (across replicas the owner of OpenBesluitvorming's lease is new and its bucket
//! empty; one process starts with a full bucket); then new legacy sessions ask one search
//! each, [`LATE_EVERY`] apart from [`FIRST_LATE`] into the flood, wherever that falls
//! between two units (not aligned, unlike `--late-session`). Across replicas the busy
//! session i is on replica i mod 3 and the late sessions on a follower (the first comes once
//! the new owner admits). Client limits are raised out of the way (`servers.rs`).
//!
//! Per late call, besides its wait (sent to answered) and the platform's requests during it
//! (1: its own), the owner's own record of it, from the hook every server is built with
//! ([`Hooks::on_send`], told of each admission as it goes out): when the call reached the
//! owner's fair queue (its admission less its wait there), so **its way** there (sent to
//! queued: the follower, the forward, the owner's stack; on one process the server's
//! stack); the flood calls admitted **on its way** (units the owner gave before the late
//! call was there to take them); and the flood calls admitted **while it was queued**
//! (the owner's fair queue passing it over: 0 is the fair queue's rule).
//!
//! Invariants, checked after each half (the run fails otherwise): every late call answered
//! without a tool error and found among the owner's admissions; every flood call that ended
//! before the flood is dropped answered without one; no 429 from the fake platform; across
//! replicas, the owner unchanged.
//!
//! What this module does not do: judge the figures (`benches/README.md` keeps them), or
//! send a standalone `GET` stream per session as the SDKs do (it carries no tool call,
//! and no call waits on it).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use besluitbron_server::app::Hooks;
use besluitbron_server::platforms::obv::PLATFORM;
use serde_json::json;
use tokio::task::JoinSet;

use crate::call::{Asks, answer_ok};
use crate::conn::{Pool, Target};
use crate::replicas::{Redis, Replicas};
use crate::servers::BesluitBron;

const BUSY_SESSIONS: usize = 6;
const CALLS_PER_SESSION: usize = 40;
/// Connections one session's client keeps at most: httpx's default (the Python SDK's HTTP
/// client), more than a session's calls, so each is out at once.
const SDK_POOL: usize = 100;
/// When the first late session asks, after the flood starts (across replicas: no earlier
/// than the new owner admits).
const FIRST_LATE: Duration = Duration::from_secs(5);
/// How far apart the late sessions ask.
const LATE_EVERY: Duration = Duration::from_millis(2_300);
/// Late sessions per half.
const LATE_SESSIONS: usize = 10;
const PATH: &str = "/mcp/obv";

/// One OpenBesluitvorming admission as the owner's hook saw it.
#[derive(Clone, Debug)]
struct Sent {
    /// When it went out, on this process's clock.
    at: Instant,
    /// Its fairness key.
    session: String,
    /// How long it waited in the owner's fair queue.
    queued: Duration,
}

/// The admissions of one half, in the order they went out.
type SendLog = Arc<Mutex<Vec<Sent>>>;

/// A server hook recording every OpenBesluitvorming admission into `log`.
fn recording(log: &SendLog) -> Hooks {
    let log = Arc::clone(log);
    Hooks {
        on_send: Some(Arc::new(move |call| {
            if call.platform != PLATFORM {
                return;
            }
            if let Some(a) = &call.admission {
                let sent = Sent {
                    at: Instant::now(),
                    session: a.session.to_string(),
                    queued: a.waited(),
                };
                log.lock().expect("send log lock").push(sent);
            }
        })),
    }
}

/// One late call, as measured.
struct Late {
    /// Sent to answered.
    wait: Duration,
    /// Requests the fake platforms received meanwhile (its own included).
    upstream: u64,
    /// Sent to queued at the owner.
    way: Duration,
    /// Flood calls admitted on its way.
    on_the_way: usize,
    /// Flood calls admitted while it was queued.
    passed_over: usize,
}

pub(crate) async fn run() -> anyhow::Result<()> {
    println!(
        "besluitbron-load --late-sdk: {BUSY_SESSIONS} busy legacy sessions x {CALLS_PER_SESSION} distinct \
         obv_search calls at once (a pool of up to {SDK_POOL} connections per session), on servers just started; \
         {LATE_SESSIONS} new sessions ask one search each, {:.1} s apart from {:.0} s on (not aligned to the \
         platform's units); OpenBesluitvorming's own limit (60 units a minute), client limits raised",
        LATE_EVERY.as_secs_f64(),
        FIRST_LATE.as_secs_f64()
    );
    let log = SendLog::default();
    let single = BesluitBron::start_with(recording(&log)).await?;
    let busy = flood(&[single.addr], "een").await?;
    let started = Instant::now();
    let one = measure(&single, single.addr, &log, started, "een")
        .await
        .context("one process")?;
    stop(busy).await?;
    single.stop().await?;
    report("one process", &one, None);

    let redis = Redis::start().await?;
    let log = SendLog::default();
    let base = BesluitBron::start().await?;
    let replicas = Replicas::start_with(&base, &redis, 3, &recording(&log)).await?;
    let addrs: Vec<SocketAddr> = replicas.servers.iter().map(|s| s.addr).collect();
    let busy = flood(&addrs, "drie").await?;
    let started = Instant::now();
    let owner = replicas.owner(PLATFORM).await?;
    let admitting = started.elapsed();
    let follower = (owner + 1) % 3;
    let three = measure(&base, addrs[follower], &log, started, "drie")
        .await
        .context("three replicas")?;
    stop(busy).await?;
    let owners_after = replicas.owners(PLATFORM);
    replicas.stop().await?;
    base.stop().await?;
    if owners_after != [owner] {
        bail!("the owner of obv changed during the half ({owner} before, {owners_after:?} after)");
    }
    report(
        &format!(
            "three replicas (new owner replica {owner} admitting {:.1} s into the flood, late sessions on replica \
             {follower})",
            admitting.as_secs_f64()
        ),
        &three,
        Some(&one),
    );
    drop(redis);
    Ok(())
}

/// Opens the busy sessions (session i on `addrs[i % len]`) and sends their calls at once;
/// `tag` keeps each half's searches apart.
async fn flood(addrs: &[SocketAddr], tag: &str) -> anyhow::Result<JoinSet<anyhow::Result<()>>> {
    let mut sessions = Vec::with_capacity(BUSY_SESSIONS);
    for s in 0..BUSY_SESSIONS {
        let addr = addrs[s % addrs.len()];
        let target = Target::mcp(addr, PATH).await?;
        let session = target.session.context("a legacy session")?;
        sessions.push((session, Arc::new(Pool::new(addr, SDK_POOL, target.conn))));
    }
    let mut calls = JoinSet::new();
    for (s, (session, pool)) in sessions.into_iter().enumerate() {
        for j in 0..CALLS_PER_SESSION {
            let (session, pool) = (session.clone(), Arc::clone(&pool));
            // One word per call: distinct questions, never one request after folding.
            let body = search(10 + j as u64, &format!("{tag}druk{s}x{j}"));
            calls.spawn(async move {
                let (status, _, answer) = pool.post(PATH, Some(&session), Asks::Call("obv_search"), body).await?;
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
    Ok(calls)
}

/// Drops a flood: what comes after the last late session says nothing about it. A flood
/// call that ended before with a failure is an error of the run.
async fn stop(mut flood: JoinSet<anyhow::Result<()>>) -> anyhow::Result<()> {
    while let Some(done) = flood.try_join_next() {
        done.context("a flood task")??;
    }
    flood.shutdown().await;
    Ok(())
}

/// The late sessions on `late`, from `started` on; each call's figures.
async fn measure(
    fakes: &BesluitBron,
    late: SocketAddr,
    log: &SendLog,
    started: Instant,
    tag: &str,
) -> anyhow::Result<Vec<Late>> {
    let rate_limited = fakes.rate_limited();
    let mut out = Vec::with_capacity(LATE_SESSIONS);
    let mut at = FIRST_LATE.max(started.elapsed());
    for n in 0..LATE_SESSIONS {
        // Opened just before it asks: a new session, as late as it comes.
        tokio::time::sleep(at.saturating_sub(started.elapsed() + Duration::from_millis(200))).await;
        let mut session = Target::mcp(late, PATH).await?;
        let key = format!("session:{}", session.session.clone().context("a legacy session")?);
        tokio::time::sleep(at.saturating_sub(started.elapsed())).await;
        let asked = Instant::now();
        let before = fakes.upstream_requests();
        session
            .answer_once(&format!("late session {n}"), search(7, &format!("{tag}laat{n}")))
            .await?;
        let wait = asked.elapsed();
        let upstream = fakes.upstream_requests() - before;
        let sent = log.lock().expect("send log lock").clone();
        let mine = sent
            .iter()
            .position(|s| s.session == key)
            .with_context(|| format!("late session {n} is not among the owner's admissions"))?;
        let queued_at = sent[mine].at - sent[mine].queued;
        let earlier = &sent[..mine];
        out.push(Late {
            wait,
            upstream,
            way: queued_at.saturating_duration_since(asked),
            on_the_way: earlier.iter().filter(|s| s.at >= asked && s.at < queued_at).count(),
            passed_over: earlier.iter().filter(|s| s.at >= queued_at).count(),
        });
        at += LATE_EVERY;
    }
    if fakes.rate_limited() != rate_limited {
        bail!("the fake platform answered 429");
    }
    Ok(out)
}

/// Prints one half's lines.
fn report(what: &str, half: &[Late], against: Option<&[Late]>) {
    let list = |f: &dyn Fn(&Late) -> String| half.iter().map(f).collect::<Vec<_>>().join(" ");
    println!(
        "{what}:\n  late sessions waited {} s, mean {:.2} s\n  platform requests during each wait: {}\n  its way to the \
         owner's queue (ms): {}\n  flood calls admitted on its way: {}\n  flood calls admitted while it was queued: {}",
        list(&|l| format!("{:.2}", l.wait.as_secs_f64())),
        mean(half),
        list(&|l| l.upstream.to_string()),
        list(&|l| format!("{:.1}", l.way.as_secs_f64() * 1e3)),
        list(&|l| l.on_the_way.to_string()),
        list(&|l| l.passed_over.to_string()),
    );
    if let Some(one) = against {
        println!("  mean wait {:.2}x one process", mean(half) / mean(one).max(1e-3));
    }
}

fn mean(half: &[Late]) -> f64 {
    half.iter().map(|l| l.wait.as_secs_f64()).sum::<f64>() / half.len().max(1) as f64
}

fn search(id: u64, word: &str) -> Vec<u8> {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "name": "obv_search", "arguments": {"query": word, "limit": 5}}})
    .to_string()
    .into_bytes()
}
