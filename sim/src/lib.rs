//! `besluitbron-sim`: BesluitBron's discrete-event simulator.
//!
//! It owns virtual time, workloads, simulated upstream services and faults, and drives
//! the *same* core types as the server: the fair policy is the server's path
//! (`besluitbron_core::path::PlatformPath` inside `besluitbron_core::path::Shell`)
//! itself, one per budget group (`besluitbron_core::budget_groups`: platforms that call
//! one service share its budget), a lane per service. The legacy policy (BesluitBron ≤ 1.4.5) is a model that lives only here, so
//! the headline measurement of R-L9 can be repeated at will.
//!
//! Code map:
//! - [`scenario`]: the scenario (TOML) and trace (JSON Lines, with follow-up calls)
//!   formats → a [`Workload`]; the services its platforms call
//!   ([`scenario::RunServices`]).
//! - [`engine`]: the event loop over virtual time; [`run`] is the entry point (every
//!   call's record kept), [`run_with`] keeps only what it is told besides the aggregates.
//! - [`aggregate`]: outcomes aggregated as a run goes (per session, for the run, per
//!   service and per platform), from which the report, the checks' figures and the
//!   capacity answer come.
//! - [`call_record`]: one call's record, which the engine writes and the aggregates read.
//! - [`plan`]: a capacity question (a traffic model) answered from a run's aggregates.
//! - [`policy`]: the fair scheduler's gate and the legacy model.
//! - [`platform`]: simulated services that enforce their own limit, and the hosts'
//!   latency; [`group_buffer`]: a budget group's buffers, one per platform.
//! - [`check`]: invariants asserted after every event.
//! - [`fidelity`]: a recorded trace's admissions against its replay's.
//! - [`cluster`]: several replicas, one owner per budget group (the core's lease rules and
//!   shell), a load balancer or scripted calls, a lease engine with faults; its own
//!   checker.
//! - [`replicas`]: a trace's calls per limited service behind one replica and behind N
//!   (`replay --replicas`), on [`cluster`].
//! - [`report`], [`plot`], [`trace`]: what a run prints; [`html`]: the page a reader
//!   would rather look at (`--report`).
//! - [`rng`]: one root seed, a sub-seed per component; [`dense`]: maps keyed by ids.
//!
//! The fake platforms over real HTTP (wall clock, loopback) are not here: they are the
//! `besluitbron-fakes` crate, which the binary's `fakes` command serves.
//!
//! **Architecture invariant.** A seed and a scenario reproduce a run exactly: nothing
//! reads the wall clock or an unseeded RNG, hash maps are never iterated for output, and
//! same-instant events run in the order they were scheduled.
//!
//! What this library will not do: talk to real platforms, sleep, serve HTTP, or change the
//! scheduler.

pub mod aggregate;
pub mod call_record;
pub mod check;
pub mod cluster;
pub mod dense;
pub mod engine;
pub mod fidelity;
pub mod group_buffer;
pub mod html;
pub mod ids;
pub mod plan;
pub mod platform;
pub mod plot;
pub mod policy;
pub mod replicas;
pub mod report;
pub mod rng;
pub mod scenario;
pub mod trace;

use std::path::{Path, PathBuf};

pub use engine::{CallState, Failure, Footprint, PathChecks, RunOptions, RunOutcome, run, run_with};
pub use policy::PolicyKind;
pub use report::Report;
pub use scenario::{Scenario, Workload};

/// The folder holding the canonical scenarios (`sim/scenarios`).
pub fn scenarios_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("scenarios")
}

/// The soak's recording kept with the crate (`sim/traces/soak.jsonl`): real traffic of
/// the server under the soak's faults, for replays, the report and its browser test.
pub fn soak_trace_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("traces/soak.jsonl")
}

/// Loads canonical scenario `name` from [`scenarios_dir`].
pub fn load_canonical(name: &str) -> Result<Scenario, scenario::InputError> {
    Scenario::load(&scenarios_dir().join(format!("{name}.toml")))
}

/// Runs canonical scenario `name` under `policy` with its own seed (or `seed`).
pub fn run_canonical(name: &str, policy: PolicyKind, seed: Option<u64>) -> Result<RunOutcome, Box<Failure>> {
    // The canonical scenarios ship with the crate; a broken one is a programmer error.
    let scenario = load_canonical(name).unwrap_or_else(|e| panic!("canonical scenario {name}: {e}"));
    let seed = seed.unwrap_or(scenario.seed);
    run(
        name,
        &scenario.workload(seed),
        RunOptions {
            policy,
            seed,
            keep_trace: false,
            progress: false,
        },
    )
}
