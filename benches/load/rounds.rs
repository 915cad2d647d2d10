//! The rounds every measurement runs: clients opened, the measured call warmed up once,
//! the open-loop interval, and the servers driven in rotation, one measured turn each.
//!
//! What this module does not do: start servers (`servers.rs`) or print (`report.rs`).

use std::net::SocketAddr;
use std::time::Duration;

use anyhow::{Context, bail};
use serde_json::Value;

use crate::args::Args;
use crate::call::{call_body, jsonrpc_message};
use crate::conn::Target;
use crate::drive::{Measured, Plan, TURN, TURN_RAMP, drive};

/// `n` clients of the MCP address `path` at `addr`, each with its own connection (and
/// session, unless the run is stateless).
pub(crate) async fn clients_of(addr: SocketAddr, path: &'static str, n: usize) -> anyhow::Result<Vec<Target>> {
    let mut clients = Vec::with_capacity(n);
    for _ in 0..n {
        clients.push(Target::mcp(addr, path).await?);
    }
    Ok(clients)
}

/// The measured call once through `client`, outside any measurement (`what` names it in
/// an error; `id` is its JSON-RPC id): the answer's size and its JSON-RPC result.
pub(crate) async fn warm_up(client: &mut Target, what: &str, id: u64) -> anyhow::Result<(usize, Value)> {
    let body = client.answer_once(what, call_body(id)).await?;
    let message = jsonrpc_message(&body).with_context(|| format!("{what}: no JSON-RPC answer"))?;
    let result = message
        .get("result")
        .cloned()
        .with_context(|| format!("{what}: no result"))?;
    Ok((body.len(), result))
}

/// Each client's gap between two scheduled requests (`--rate`, open loop), or `None`.
pub(crate) fn interval(args: &Args) -> anyhow::Result<Option<Duration>> {
    if args.rate.is_some_and(|r| !(r.is_finite() && r > 0.0)) {
        bail!("--rate must be a positive number of requests per second");
    }
    Ok(args.rate.map(|r| Duration::from_secs_f64(args.clients as f64 / r)))
}

/// Drives the servers in rotation, `--seconds` rounds of one measured turn each (the
/// first turn of each warms up as `--warmup-seconds` asks); `servers[i]` is server `i`'s
/// clients in groups measured apart (e.g. per replica), `names[i]` its name for `--only`.
/// Hands the clients back and returns each server's measurement per group (`None`: a
/// server `--only` left out).
///
/// The servers take turns, one measured second each, round after round: the machine's
/// load changes by the minute (other work shares it), and interleaving spreads that over
/// all of them instead of favouring whichever ran in a quiet minute.
pub(crate) async fn rotate<const N: usize>(
    args: &Args,
    mut servers: Vec<Vec<Vec<Target>>>,
    names: &[&str; N],
    interval: Option<Duration>,
) -> (Vec<Vec<Vec<Target>>>, [Option<Vec<Measured>>; N]) {
    let mut measured: [Option<Vec<Measured>>; N] = std::array::from_fn(|_| None);
    for round in 0..args.seconds {
        for ((groups, total), name) in servers.iter_mut().zip(measured.iter_mut()).zip(names) {
            if args.only.as_deref().is_some_and(|only| only != *name) {
                continue;
            }
            let plan = Plan {
                // The first turn warms up as asked; later turns only let the clients'
                // pipelines fill again before recording.
                warmup: if round == 0 {
                    Duration::from_secs(args.warmup_seconds)
                } else {
                    TURN_RAMP
                },
                measured: TURN,
                interval,
            };
            let (back, turn) = drive(std::mem::take(groups), plan).await;
            *groups = back;
            match total {
                Some(t) => t.iter_mut().zip(turn).for_each(|(t, turn)| t.absorb(turn)),
                None => *total = Some(turn),
            }
        }
    }
    (servers, measured)
}
