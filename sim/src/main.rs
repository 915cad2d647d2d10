//! `besluitbron-sim`: run a scenario or replay a trace through BesluitBron's scheduler
//! on virtual time, check invariants after every event, and report.
//!
//! Exit codes: 0 when every run held its invariants, 1 when one broke (the seed and the
//! command that replays it are printed), 2 for bad input or usage.

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use besluitbron_sim::report::write_admissions;
use besluitbron_sim::scenario::{load_trace, scenarios_dir_entries};
use besluitbron_sim::{PolicyKind, Report, RunOptions, Scenario, Workload, plot, run};
use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Parser)]
#[command(name = "besluitbron-sim", version, about = "BesluitBron's discrete-event simulator")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a scenario file (sim/scenarios/*.toml).
    Run {
        /// The scenario.
        scenario: PathBuf,
        #[command(flatten)]
        flags: Flags,
    },
    /// Replay a JSON Lines trace, one call per line.
    Replay {
        /// The trace.
        #[arg(value_name = "TRACE")]
        trace_file: PathBuf,
        #[command(flatten)]
        flags: Flags,
    },
    /// List the canonical scenarios with their descriptions.
    List,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum PolicyArg {
    Fair,
    Legacy,
    Both,
}

#[derive(Args)]
struct Flags {
    /// The policy at the limited platforms.
    #[arg(long, value_enum, default_value = "fair")]
    policy: PolicyArg,
    /// The root seed (default: the scenario's, 1 for traces).
    #[arg(long)]
    seed: Option<u64>,
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
    /// Write one JSON line per call to FILE (with --policy both: FILE gets `.fair`/`.legacy` inserted).
    #[arg(long, value_name = "FILE")]
    admissions: Option<PathBuf>,
    /// Write an SVG plot of every session's waits to FILE.
    #[arg(long, value_name = "FILE")]
    plot: Option<PathBuf>,
    /// Print the one-line-per-event trace before the report.
    #[arg(long)]
    trace: bool,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match execute(cli) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("besluitbron-sim: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn execute(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::List => {
            let mut out = std::io::stdout().lock();
            for (name, description) in scenarios_dir_entries(&besluitbron_sim::scenarios_dir())? {
                writeln!(out, "{name:<20} {description}")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Run { scenario, flags } => {
            let parsed = Scenario::load(&scenario)?;
            let seed = flags.seed.unwrap_or(parsed.seed);
            let name = scenario
                .file_stem()
                .map_or_else(|| scenario.display().to_string(), |s| s.to_string_lossy().into_owned());
            let workload = parsed.workload(seed);
            simulate(&name, "run", &scenario, &workload, seed, &flags)
        }
        Command::Replay {
            trace_file: trace,
            flags,
        } => {
            let workload = load_trace(&trace)?;
            let seed = flags.seed.unwrap_or(1);
            let name = trace
                .file_name()
                .map_or_else(|| trace.display().to_string(), |s| s.to_string_lossy().into_owned());
            simulate(&name, "replay", &trace, &workload, seed, &flags)
        }
    }
}

fn simulate(name: &str, verb: &str, input: &Path, workload: &Workload, seed: u64, flags: &Flags) -> Result<ExitCode> {
    let policies: &[PolicyKind] = match flags.policy {
        PolicyArg::Fair => &[PolicyKind::Fair],
        PolicyArg::Legacy => &[PolicyKind::Legacy],
        PolicyArg::Both => &[PolicyKind::Legacy, PolicyKind::Fair],
    };
    let both = policies.len() > 1;
    let mut out = std::io::stdout().lock();
    let mut json_reports = Vec::new();
    for &policy in policies {
        let opts = RunOptions {
            policy,
            seed,
            keep_trace: flags.trace,
            progress: std::io::stderr().is_terminal(),
        };
        let outcome = match run(name, workload, opts) {
            Ok(o) => o,
            Err(failure) => {
                eprint!("{failure}");
                eprintln!("seed: {seed}");
                eprintln!(
                    "replay: besluitbron-sim {verb} {} --policy {} --seed {seed} --trace",
                    input.display(),
                    policy.as_str()
                );
                return Ok(ExitCode::from(1));
            }
        };
        if flags.trace {
            for line in &outcome.trace {
                writeln!(out, "{line}")?;
            }
        }
        let report = Report::of(&outcome);
        if flags.json {
            json_reports.push(report);
        } else {
            if both || flags.trace {
                writeln!(out)?;
            }
            write!(out, "{}", report.render())?;
        }
        if let Some(path) = &flags.admissions {
            let path = per_policy(path, policy, both);
            let file = File::create(&path).with_context(|| format!("creating {}", path.display()))?;
            let mut w = BufWriter::new(file);
            write_admissions(&outcome, &mut w)?;
            w.flush()?;
        }
        if let Some(path) = &flags.plot {
            let path = per_policy(path, policy, both);
            plot::write_wait_plot(&outcome, &path).map_err(|e| anyhow::anyhow!("writing {}: {e}", path.display()))?;
        }
    }
    if flags.json {
        let text = if both {
            serde_json::to_string_pretty(&json_reports)?
        } else {
            json_reports[0].to_json()
        };
        writeln!(out, "{text}")?;
    }
    Ok(ExitCode::SUCCESS)
}

/// `out.jsonl` → `out.fair.jsonl` when both policies run.
fn per_policy(path: &Path, policy: PolicyKind, both: bool) -> PathBuf {
    if !both {
        return path.to_owned();
    }
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let file = match path.extension() {
        Some(ext) => format!("{stem}.{}.{}", policy.as_str(), ext.to_string_lossy()),
        None => format!("{stem}.{}", policy.as_str()),
    };
    path.with_file_name(file)
}
