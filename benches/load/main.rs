//! `besluitbron-load`: the MCP server's load benchmark. Cached `tools/call` throughput and
//! latency at N concurrent clients, side by side with a bare axum JSON echo in the same run.
//!
//! ```text
//! cargo run --release -p besluitbron-benches --bin besluitbron-load -- [--seconds 10] [--clients 64]
//! ```
//!
//! What one run does, all in this process on one multi-threaded tokio runtime and on
//! loopback only:
//! 1. starts the fake platforms and the real BesluitBron server (temporary data directory,
//!    client limits raised so they cannot throttle the run), opens one MCP session per
//!    client with the 2025-06-18 `initialize` handshake (none with `--protocol
//!    2026-07-28`) and warms the buffer with one measured call (`--call`: `obv_sources`
//!    by default, or any tool of the connector registry with its sample arguments);
//! 2. starts a bare axum server whose `POST /echo` parses the JSON request and answers the
//!    same JSON-RPC result, serialized per request and padded to the MCP answer's exact
//!    body size, over the same HTTP stack (hyper through axum; on the client hyper's own
//!    HTTP/1.1 connection, the leanest client there is, since it shares the cores);
//! 3. starts "rmcp alone": an rmcp Streamable HTTP server with BesluitBron's transport
//!    settings and tool list whose tool answers a clone of BesluitBron's warm-up result —
//!    the SDK's own cost for the same exchange, with none of BesluitBron's work;
//! 4. drives the servers in rotation (echo, rmcp alone, BesluitBron), one measured second
//!    each, `--seconds` rounds, with `--clients` tasks, each on its own keep-alive
//!    connection (kept across turns); each server's first turn starts with
//!    `--warmup-seconds` unrecorded, later turns with 0.2 s; latency in an HDR histogram,
//!    microseconds. The rotation spreads the shared machine's changing load over all three;
//! 5. prints requests/s, p50, p99 and max for each, the throughput ratios, whether the
//!    targets are met (closed loop: BesluitBron at least 85 % of rmcp alone's throughput;
//!    open loop, `--rate`: BesluitBron's p99 at most 2 × the echo's), and how often a
//!    plain OS thread sleeping 1 ms at a time woke more than 2 or 5 ms late meanwhile (the
//!    machine's own stalls, which bound any p99 measured on it).
//!
//! Invariants: every `tools/call` in the measured run is a buffer hit — the fake
//! platform's request counter must not move after the warm-up call, or the run fails.
//! Any transport error, non-200 status or tool error fails the run (exit code 1); a
//! missed target does not (this is a measurement, not a test).
//!
//! Closed loop by default: clients send their next request when the previous answer is in,
//! so latency and throughput are tied by Little's law (mean latency = clients /
//! throughput). `--rate N` runs an open loop instead, latency counted from each request's
//! scheduled time. It never talks to anything but 127.0.0.1, and it does not separate the
//! client's CPU from the servers' — they share the machine's cores, which is why the client
//! drives hyper's connection API directly rather than a pooled client.
//!
//! Code map: `args.rs` the flags; `call.rs` the measured request, its bodies and the
//! check of its answers; `conn.rs` the client (a hyper keep-alive connection, an MCP
//! address, a session); `servers.rs` the three servers (BesluitBron on the fakes of the
//! `besluitbron-fakes` registry, rmcp alone, the echo); `drive.rs` one server's turn;
//! `report.rs` what is printed and the targets; `replicas.rs` the `--replicas N` run
//! (a redis-server of its own and N replicas against one process alone, the latency of a
//! forwarded call apart from one answered on the owner); `late.rs` the `--late-session`
//! run and `late_sdk.rs` the `--late-sdk` run (a late session's wait behind a flood, one
//! process against three replicas).

mod args;
mod call;
mod conn;
mod drive;
mod late;
mod late_sdk;
mod replicas;
mod report;
mod rounds;
mod servers;

use std::process::ExitCode;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::Parser;
use rmcp::model::{CallToolResult, ListToolsResult};
use tokio::task::JoinHandle;

use crate::args::Args;
use crate::call::{Asks, CALL, call, call_body, jsonrpc_message, list_body};
use crate::conn::{Conn, Target};
use crate::drive::Measured;
use crate::report::{load_average, print_only, print_report};
use crate::rounds::{clients_of, interval, rotate, warm_up};
use crate::servers::{BesluitBron, ECHO_PATH, SdkAlone};

/// The same allocator as the `besluitbron` binary, so the figures are the server's.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let args = Args::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("besluitbron-load: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(args)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("besluitbron-load: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(args: Args) -> anyhow::Result<()> {
    if args.clients == 0 || args.seconds == 0 {
        bail!("--clients and --seconds must be above zero");
    }
    let _ = CALL.set(args.measured_call()?);
    if args.late_session {
        return late::run().await;
    }
    if args.late_sdk {
        return late_sdk::run().await;
    }
    if let Some(n) = args.replicas {
        return replicas::run(&args, n).await;
    }
    let load_before = load_average();

    // The fake platforms and the real server.
    let besluitbron = BesluitBron::start().await?;
    let mcp_path = call().path;

    // One session per client (none when stateless), then one call that fills the buffer.
    let mut mcp_clients = clients_of(besluitbron.addr, mcp_path, args.clients).await?;
    let first = &mut mcp_clients[0];
    let (answer_bytes, result) = warm_up(first, "warm-up call", 0).await?;
    let upstream_after_warm = besluitbron.upstream_requests();

    let (sdk_task, sdk_clients) = sdk_alone(first, &besluitbron, result.clone(), args.clients).await?;
    let (echo_task, echo_clients) = echo(result, answer_bytes, args.clients).await?;

    let interval = interval(&args)?;
    let names = ["echo", "rmcp", "besluitbron"];
    let servers = vec![vec![echo_clients], vec![sdk_clients], vec![mcp_clients]];
    let (_, measured) = rotate(&args, servers, &names, interval).await;
    let [baseline, sdk, mcp] = measured.map(|m| m.and_then(|groups| groups.into_iter().next()));
    let upstream_moved = besluitbron.upstream_requests() - upstream_after_warm;
    let load_after = load_average();

    besluitbron.stop().await?;
    echo_task.abort();
    sdk_task.abort();

    if let Some(only) = &args.only {
        let Some(m) = [&baseline, &sdk, &mcp].into_iter().flatten().next() else {
            bail!("--seconds must be above zero");
        };
        print_only(only, m);
        if m.errors > 0 {
            bail!(
                "{} failed requests; first: {}",
                m.errors,
                m.first_error.as_deref().unwrap_or("?")
            );
        }
        return Ok(());
    }
    let (Some(baseline), Some(sdk), Some(mcp)) = (baseline, sdk, mcp) else {
        bail!("--seconds must be above zero");
    };
    print_report(&args, answer_bytes, [&baseline, &sdk, &mcp], &load_before, &load_after);
    fail_on_errors(&baseline, &sdk, &mcp, upstream_moved)
}

/// BesluitBron's tools and answer, for the SDK alone (same names, schemas and result):
/// its server started, and its `clients` with one answer each.
async fn sdk_alone(
    first: &mut Target,
    besluitbron: &BesluitBron,
    result: serde_json::Value,
    clients: usize,
) -> anyhow::Result<(JoinHandle<std::io::Result<()>>, Vec<Target>)> {
    let mcp_path = call().path;
    let (status, _, listed) = first
        .conn
        .post(mcp_path, first.session.as_deref(), Asks::List, list_body(1))
        .await?;
    let tools: ListToolsResult = jsonrpc_message(&listed)
        .and_then(|m| m.get("result").cloned())
        .and_then(|r| serde_json::from_value(r).ok())
        .with_context(|| format!("tools/list: no list of tools: {status}"))?;
    let answer = match call().tool {
        Some(_) => Some(Arc::new(
            serde_json::from_value::<CallToolResult>(result.clone()).context("warm-up call: not a tool result")?,
        )),
        None => None,
    };
    let (sdk_addr, sdk_task) = servers::start_sdk_alone(
        mcp_path,
        SdkAlone {
            tools: Arc::new(tools.tools),
            answer,
        },
        besluitbron.allowed_hosts.clone(),
        besluitbron.idle_timeout,
    )
    .await?;
    let mut sdk_clients = clients_of(sdk_addr, mcp_path, clients).await?;
    sdk_clients[0].answer_once("the SDK alone", call_body(1)).await?;
    Ok((sdk_task, sdk_clients))
}

/// The bare baseline: same stack, same request, an answer of the same size
/// (`answer_bytes`): its server started, and its `clients`.
async fn echo(
    result: serde_json::Value,
    answer_bytes: usize,
    clients: usize,
) -> anyhow::Result<(JoinHandle<std::io::Result<()>>, Vec<Target>)> {
    let (echo_addr, echo_task) = servers::start_echo(result, answer_bytes).await?;
    let mut echo_clients = Vec::with_capacity(clients);
    for _ in 0..clients {
        echo_clients.push(Target::new(Conn::open(echo_addr).await?, ECHO_PATH, None));
    }
    let echoed = echo_clients[0].answer_once("the echo", call_body(1)).await?;
    if echoed.len() != answer_bytes {
        bail!("the echo answers {} bytes, not {answer_bytes}", echoed.len());
    }
    Ok((echo_task, echo_clients))
}

/// An error for any failed request of the three servers, or for a call that reached
/// the platform during the run (not every call was a buffer hit).
fn fail_on_errors(baseline: &Measured, sdk: &Measured, mcp: &Measured, upstream_moved: u64) -> anyhow::Result<()> {
    let errors = baseline.errors + sdk.errors + mcp.errors;
    if errors > 0 {
        bail!(
            "{errors} failed requests (baseline {}, SDK alone {}, MCP {}); first: {}",
            baseline.errors,
            sdk.errors,
            mcp.errors,
            mcp.first_error
                .as_deref()
                .or(sdk.first_error.as_deref())
                .or(baseline.first_error.as_deref())
                .unwrap_or("?")
        );
    }
    if upstream_moved != 0 {
        bail!("{upstream_moved} requests reached the fake platform during the run: not all calls were buffer hits");
    }
    Ok(())
}
