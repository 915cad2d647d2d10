//! What a run prints: the table of the three servers, the throughput ratios against the
//! targets, the machine's own stalls, load average and peak memory; or one line for
//! `--only`.
//!
//! Invariants: a missed target is reported, never an error (this is a measurement, not a
//! test); every target compares servers of the same run, never an absolute figure (the
//! machine is shared and noisy).
//!
//! What this module does not do: decide whether the run failed (see `main.rs`).

use crate::args::Args;
use crate::drive::Measured;

/// The throughput target: BesluitBron's cached call at this share of rmcp alone serving
/// the same answer (closed loop, the same run).
pub(crate) const TARGET_OF_SDK: f64 = 0.85;
/// The latency target in the open loop: BesluitBron's p99 at most this many times the
/// bare echo's p99 at the same offered rate, in the same run.
pub(crate) const TARGET_P99_OF_ECHO: f64 = 2.0;

/// `/proc/loadavg`'s three averages, or a note that there is none.
pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Peak resident memory of this process (`VmHWM`), if the platform reports it.
fn peak_rss() -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmHWM:").map(|v| v.trim().to_owned()))
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

pub(crate) fn ms(us: u64) -> String {
    format!("{:.2} ms", us as f64 / 1000.0)
}

pub(crate) fn print_report(
    args: &Args,
    answer_bytes: usize,
    [baseline, sdk, mcp]: [&Measured; 3],
    load_before: &str,
    load_after: &str,
) {
    let cores = std::thread::available_parallelism().map_or(0, |n| n.get());
    println!(
        "besluitbron-load: {} clients, protocol {}, {} s warm-up then {} measured 1 s turns per server (taken in \
         rotation), answer {answer_bytes} bytes, {cores} cores shared by clients and servers",
        args.clients, args.protocol, args.warmup_seconds, args.seconds
    );
    println!();
    print_header();
    let mcp_name = match crate::call::call().tool {
        Some(tool) => format!("BesluitBron `tools/call {tool}` (buffer hit)"),
        None => "BesluitBron `tools/list` (no tool work)".to_owned(),
    };
    let sdk_name = if args.call == "list" {
        "rmcp alone: the same tool list, no BesluitBron"
    } else {
        "rmcp alone: a clone of the same result, no BesluitBron"
    };
    for (name, m) in [
        ("bare axum JSON echo", baseline),
        (sdk_name, sdk),
        (mcp_name.as_str(), mcp),
    ] {
        print_row(name, m);
    }
    println!();
    let share = |part: &Measured, of: &Measured| {
        if of.per_sec() > 0.0 {
            part.per_sec() / of.per_sec()
        } else {
            0.0
        }
    };
    let verdict = |met: bool| if met { "met" } else { "missed" };
    let p99 = |m: &Measured| m.latency_us.value_at_quantile(0.99);
    match args.rate {
        None => {
            let of_sdk = share(mcp, sdk);
            println!(
                "BesluitBron: {:.1} % of rmcp alone (target >= {:.0} %: {}); rmcp alone: {:.1} % of the echo; \
                 BesluitBron: {:.1} % of the echo",
                of_sdk * 100.0,
                TARGET_OF_SDK * 100.0,
                verdict(of_sdk >= TARGET_OF_SDK),
                share(sdk, baseline) * 100.0,
                share(mcp, baseline) * 100.0
            );
            println!(
                "MCP p99: {} (closed loop; the latency target is the open loop's)",
                ms(p99(mcp))
            );
        }
        Some(rate) => {
            let times = p99(mcp) as f64 / p99(baseline).max(1) as f64;
            println!(
                "open loop at {rate:.0} requests/s offered to each server (throughput is the offered rate when both keep up)"
            );
            println!(
                "MCP p99: {} = {times:.2} x the echo's {} (target <= {TARGET_P99_OF_ECHO:.0} x: {}); rmcp alone: {}",
                ms(p99(mcp)),
                ms(p99(baseline)),
                verdict(times <= TARGET_P99_OF_ECHO),
                ms(p99(sdk))
            );
        }
    }
    for (name, m) in [("echo", baseline), ("rmcp-alone", sdk), ("MCP", mcp)] {
        print_stalls(name, m);
    }
    print_load(load_before, load_after);
}

/// The head of the table of servers ([`print_row`] its rows).
pub(crate) fn print_header() {
    println!("| server | requests/s | p50 | p99 | max | failed |");
    println!("|---|---|---|---|---|---|");
}

/// One server's row: requests/s, p50, p99, max, failed requests.
pub(crate) fn print_row(name: &str, m: &Measured) {
    let h = &m.latency_us;
    println!(
        "| {name} | {:.0} | {} | {} | {} | {} |",
        m.per_sec(),
        ms(h.value_at_quantile(0.50)),
        ms(h.value_at_quantile(0.99)),
        ms(h.max()),
        m.errors
    );
}

/// How often the stall probe overslept during `name`'s measured windows.
pub(crate) fn print_stalls(name: &str, m: &Measured) {
    let h = &m.oversleep_us;
    let over = |ms: u64| h.count_between(ms * 1000, u64::MAX);
    println!(
        "machine during the {name} run: a 1 ms sleep overslept > 2 ms {} times, > 5 ms {} times, worst {}",
        over(2),
        over(5),
        ms(h.max())
    );
}

/// The load average before and after the run, and this process's peak memory.
pub(crate) fn print_load(load_before: &str, load_after: &str) {
    println!(
        "load average before: {load_before}; after: {load_after}; peak RSS: {}",
        peak_rss()
    );
}

/// The one line of a `--only` run: the one server's figures and how many requests it
/// answered in all, warm-up included.
pub(crate) fn print_only(only: &str, m: &Measured) {
    let h = &m.latency_us;
    println!(
        "{only} alone: {:.0} requests/s measured, p50 {}, p99 {}; {} requests answered in all (warm-up included), {} failed",
        m.per_sec(),
        ms(h.value_at_quantile(0.50)),
        ms(h.value_at_quantile(0.99)),
        m.answered,
        m.errors
    );
}
