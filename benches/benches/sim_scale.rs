//! The simulator at production scale: the week and the month of `sim/scenarios/scale/`,
//! each run once as `besluitbron-sim run` runs it (the aggregates, no per-call record,
//! every invariant after every event), and the month's ratios to the week: wall time,
//! peak memory, calls simulated. A measurement to read, not a timed test: a busy machine
//! moves the times, so compare the ratios of one run.
//!
//! Peak memory is the process's high-water mark (`VmHWM`), set back to the current
//! resident size before each run (`/proc/self/clear_refs`), so each figure is that run's
//! peak over what the process already held. `SIM_SCALE=week` runs the week alone.

use std::time::{Duration, Instant};

use besluitbron_sim::{Footprint, PolicyKind, RunOptions, Scenario, run_with, scenarios_dir};

struct Figures {
    name: &'static str,
    wall: Duration,
    peak_kib: Option<u64>,
    calls: u64,
    events: u64,
}

/// The process's peak resident size since the last reset, in KiB (Linux).
fn peak_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn measure(name: &'static str) -> Figures {
    let scenario = Scenario::load(&scenarios_dir().join("scale").join(format!("{name}.toml")))
        .unwrap_or_else(|e| panic!("scale/{name}.toml: {e}"));
    let workload = scenario.workload(scenario.seed);
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: scenario.seed,
        keep_trace: false,
        progress: false,
    };
    // A peak measured from here: what the run adds to what the process holds.
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let started = Instant::now();
    let run = run_with(name, &workload, opts, Footprint::lean()).unwrap_or_else(|f| panic!("{f}"));
    let wall = started.elapsed();
    Figures {
        name,
        wall,
        peak_kib: peak_kib().filter(|_| reset),
        calls: run.platforms.iter().map(|p| p.calls).sum(),
        events: run.events,
    }
}

fn print(f: &Figures) {
    let peak = f.peak_kib.map_or_else(
        || "not measured".to_owned(),
        |k| format!("{:.1} MiB", k as f64 / 1024.0),
    );
    println!(
        "{:<6} {:>10} calls {:>11} events  wall {:>7.1} s  peak {peak}",
        f.name,
        f.calls,
        f.events,
        f.wall.as_secs_f64()
    );
}

fn main() {
    let week = measure("week");
    print(&week);
    if std::env::var("SIM_SCALE").as_deref() == Ok("week") {
        return;
    }
    let month = measure("month");
    print(&month);
    let ratio = |a: f64, b: f64| if b > 0.0 { a / b } else { f64::NAN };
    println!(
        "month / week: calls {:.2}×, wall {:.2}×, wall per call {:.2}×, peak memory {}",
        ratio(month.calls as f64, week.calls as f64),
        ratio(month.wall.as_secs_f64(), week.wall.as_secs_f64()),
        ratio(
            month.wall.as_secs_f64() / month.calls as f64,
            week.wall.as_secs_f64() / week.calls as f64
        ),
        match (month.peak_kib, week.peak_kib) {
            (Some(m), Some(w)) => format!("{:.2}×", ratio(m as f64, w as f64)),
            _ => "not measured".to_owned(),
        }
    );
}
