//! The flags of `besluitbron-load`, and the measured request they choose.
//!
//! Invariants: every flag is checked before any server starts, except `--rate`, which is
//! checked once the servers answer (as it always was).
//!
//! What this module does not do: start or drive anything.

use anyhow::bail;
use besluitbron_server::connectors::CONNECTORS;
use clap::Parser;

use crate::call::{Call, PROTOCOL_VERSION, STATELESS_VERSION};

/// Flags.
#[derive(Parser, Debug)]
#[command(
    name = "besluitbron-load",
    about = "Cached tools/call load against a bare axum JSON echo"
)]
pub(crate) struct Args {
    /// Measured seconds per server.
    #[arg(long, default_value_t = 10)]
    pub(crate) seconds: u64,
    /// Unrecorded seconds per server before the measurement.
    #[arg(long, default_value_t = 2)]
    pub(crate) warmup_seconds: u64,
    /// Concurrent clients (one MCP session and one connection each).
    #[arg(long, default_value_t = 64)]
    pub(crate) clients: usize,
    /// The cached call: `sources` (obv_sources, a 45 KB answer), `search` (obv_search for
    /// one word with limit 10, a few KB), `list` (tools/list: the MCP stack alone), or
    /// any tool of the connector registry with its sample arguments (`tk_factions`).
    #[arg(long, default_value = "sources")]
    pub(crate) call: String,
    /// `2025-06-18` (one session per client, answers as SSE) or `2026-07-28` (stateless:
    /// no session, protocol metadata on every request, plain JSON answers).
    #[arg(long, default_value = PROTOCOL_VERSION)]
    pub(crate) protocol: String,
    /// Open loop: all clients together send this many requests per second on a fixed
    /// schedule, and latency counts from each request's scheduled time (so a client that
    /// falls behind is charged for it). Without it, each client sends its next request
    /// as soon as the previous answer is in (closed loop, the throughput measurement).
    #[arg(long)]
    pub(crate) rate: Option<f64>,
    /// Drive only this server (`echo`, `rmcp` or `besluitbron`) and report how many
    /// requests it answered in all, warm-up included: for profiling one server, e.g. under
    /// callgrind, where the instructions of two runs of different lengths, divided by the
    /// difference in requests, give the cost of one request without the start-up.
    #[arg(long, value_parser = ["echo", "rmcp", "besluitbron"])]
    pub(crate) only: Option<String>,
    /// Several replicas: start a redis-server of the run's own and this many BesluitBron
    /// replicas (at least 2) sharing it, and drive one process alone and the replicas in
    /// rotation (no echo, no rmcp alone), each client on one replica (round-robin); report
    /// both throughputs and the latency of calls answered on the platform's owner apart
    /// from calls a follower forwarded to it.
    #[arg(long, value_parser = clap::value_parser!(u16).range(2..=16))]
    pub(crate) replicas: Option<u16>,
    /// The late session: six busy sessions each send 40 distinct OpenBesluitvorming
    /// searches at once (a connection per call, then over a pool of 8 per session), new
    /// sessions ask one each from 5 s on; their waits on one process, across three replicas
    /// on a redis-server (the flood spread over all three, the late sessions on a
    /// follower), and right after the lease's owner is killed mid-flood, in one run, the
    /// platform's own limit deciding (client limits raised). Ignores the other options.
    #[arg(long)]
    pub(crate) late_session: bool,
    /// The late session as a measurement with an SDK's clients sends it: six busy legacy
    /// sessions each send 40 distinct OpenBesluitvorming searches at once over a pool of up
    /// to 100 connections, on servers just started; new sessions ask one search each,
    /// 2.3 s apart from 5 s on, wherever that falls between two units; one process, then
    /// three replicas (the late sessions on a follower). Per late call its wait, its way to
    /// the owner's fair queue and the flood calls the owner admitted on that way and while
    /// it was queued. Ignores the other options.
    #[arg(long, conflicts_with = "late_session")]
    pub(crate) late_sdk: bool,
}

impl Args {
    /// The measured request `--call` and `--protocol` name.
    pub(crate) fn measured_call(&self) -> anyhow::Result<Call> {
        let (connector, tool, arguments) = match self.call.as_str() {
            "sources" => ("obv", Some("obv_sources"), "{}"),
            "search" => ("obv", Some("obv_search"), r#"{"query":"begroting","limit":10}"#),
            "list" => ("obv", None, ""),
            tool => match CONNECTORS
                .iter()
                .find_map(|c| c.samples.iter().find(|s| s.tool == tool).map(|s| (c, s)))
            {
                Some((c, sample)) => (c.id, Some(sample.tool), sample.arguments),
                None => bail!("--call must be sources, search, list or a tool of the registry, not {tool}"),
            },
        };
        if self.replicas.is_some() && tool.is_none() {
            bail!("--replicas measures a forwarded tool call; --call list makes none");
        }
        if self.replicas.is_some() && self.only.is_some() {
            bail!("--replicas drives one process and the replicas; it takes no --only");
        }
        let stateless = match self.protocol.as_str() {
            PROTOCOL_VERSION => false,
            STATELESS_VERSION => true,
            other => bail!("--protocol must be {PROTOCOL_VERSION} or {STATELESS_VERSION}, not {other}"),
        };
        Ok(Call {
            // Once per run: the route the clients use lives as long as the run.
            path: Box::leak(format!("/mcp/{connector}").into_boxed_str()),
            tool,
            arguments,
            stateless,
        })
    }
}
