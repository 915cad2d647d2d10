//! `besluitbron-sim`: run a scenario or replay a trace through BesluitBron's scheduler
//! on virtual time, check invariants after every event, and report; or serve the fake
//! platforms over real HTTP (`fakes`) for a local server or an end-to-end test.
//!
//! Exit codes: 0 when every run held its invariants (or `fakes` stopped on a signal), 1
//! when one broke (the seed and the command that replays it are printed), 2 for bad
//! input or usage (including an address `fakes` cannot bind).

use std::fs::File;
use std::io::{BufWriter, IsTerminal, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result};
use besluitbron_fakes::{FakeSetting, FaultSetting, PlatformFault, serve_registry_on};
use besluitbron_sim::aggregate::SessionRows;
use besluitbron_sim::report::write_admissions;
use besluitbron_sim::scenario::{LimitOverride, load_trace, scenarios_dir_entries};
use besluitbron_sim::{Footprint, PathChecks, PolicyKind, Report, RunOptions, Scenario, Workload, plot, run_with};
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
        /// What if N replicas had served the trace: after the report, per limited service,
        /// the calls that reached it (of every platform that calls it) behind one replica
        /// and behind N in the cluster simulator (one lease per budget group, forwards, the
        /// owner's path; the platforms' latency model), side by side.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=64))]
        replicas: Option<u16>,
        #[command(flatten)]
        flags: Flags,
    },
    /// Answer a capacity question: a traffic model (sessions per day, rounds and calls per
    /// session, the platform mix, replicas; sim/plans/*.toml) runs under the fair policy,
    /// and the answer gives, per upstream service (each limit kept, shared by the platforms
    /// that call it) and per platform, the waits for a turn (p50, p99, max) and the share
    /// of the time at the limit. Not modelled: BesluitBron's own CPU and memory, the
    /// network (between replicas, and to the services beyond each platform's latency
    /// model), a replica's handover, buffer hits, client limits.
    Plan {
        /// The traffic model.
        model: PathBuf,
        /// Print the answer as JSON.
        #[arg(long)]
        json: bool,
        /// Write the answer as an HTML page with SVG charts.
        #[arg(long, value_name = "FILE.html")]
        report: Option<PathBuf>,
        /// Another seed than the model's.
        #[arg(long)]
        seed: Option<u64>,
    },
    /// List the canonical scenarios with their descriptions.
    List,
    /// Run a cluster scenario (sim/scenarios/cluster/*.toml): replicas serving one budget
    /// group (a platform, and those sharing its service) under one lease, a lease engine,
    /// faults; prints the report. Exits 1 when an invariant broke or the lease settings
    /// cannot work.
    Cluster {
        /// The scenario.
        scenario: PathBuf,
        /// Another root seed than the scenario's.
        #[arg(long)]
        seed: Option<u64>,
    },
    // Its help names every fake of the registry ([`fakes_about`]), not a list written
    // here that a new fake would leave behind.
    #[command(about = fakes_about(), long_about = fakes_long_about())]
    Fakes(FakesArgs),
}

/// The first line of `fakes --help`: what it serves, every platform of the registry.
fn fakes_about() -> String {
    let platforms: Vec<&str> = besluitbron_fakes::REGISTRY
        .iter()
        .map(|f| f.platform().as_str())
        .collect();
    format!(
        "Serve the fake platforms ({}) on one address until SIGTERM or Ctrl-C",
        platforms.join(", ")
    )
}

/// `fakes --help` in full.
fn fakes_long_about() -> String {
    format!(
        "{}. Prints one `<platform> <base-url>` line per fake (registry order) once it accepts \
         connections, then the line `ready`: a script reads the platforms up to it, never a list of its own. Faults can be switched while they run, from loopback: `POST http://ADDR/_control/faults` \
         with settings as --fault takes them, and `GET http://ADDR/_control/state` for the counters.",
        fakes_about()
    )
}

#[derive(Args)]
struct FakesArgs {
    /// The address to listen on (port 0 picks a free port; the printed URLs name it).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:9100")]
    listen: SocketAddr,
    /// Milliseconds added before every answer of every fake.
    #[arg(long, value_name = "N", default_value_t = 0)]
    latency_ms: u64,
    /// Answer HTTP 500 to every N-th request (counted per fake).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    fail_every: Option<u32>,
    /// Set one fault of one fake; repeatable, applied in order after --latency-ms and
    /// --fail-every. NAME=VALUE is one of latency-ms=MS, stall-ms=MS (hold each request on
    /// arrival), fail-every=N (500), reset-every=N (drop the connection without an answer),
    /// garbage=true|false (a 200 that is not JSON), rate-limit-storm=true|false (429 with
    /// Retry-After: 1 to everything); 0 turns a count or a stall off. A fake may take
    /// settings of its own: ori:retired=404|410|502|html|off, opentk:busy=true|false,
    /// ob:overload-every=N, ob:empty-page-every=N (an unknown NAME lists what that fake takes). Examples: `--fault obv:fail-every=2`,
    /// `--fault tk:latency-ms=200`, `--fault obv:rate-limit-storm=true`.
    #[arg(long = "fault", value_name = "PLATFORM:NAME=VALUE")]
    faults: Vec<PlatformFault>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum PolicyArg {
    Fair,
    Legacy,
    Both,
}

#[derive(Args)]
struct Flags {
    /// The policy at the limited services.
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
    /// Write one self-contained HTML page to FILE: per limited service, each session's
    /// calls over time (policies side by side), the waits against the starvation bound,
    /// and the service's budget over time.
    #[arg(long, value_name = "FILE.html")]
    report: Option<PathBuf>,
    /// For a trace the server recorded: check that the fair replay admits what the server
    /// admitted, per limited service (whichever platforms spent its budget) in the same
    /// order, each within MS milliseconds; exit 1 and print both timelines when it does not.
    #[arg(long, value_name = "MS")]
    fidelity_ms: Option<u64>,
    /// Print the one-line-per-event trace before the report.
    #[arg(long)]
    trace: bool,
    /// What if a service had another limit: SERVICE=C/W (`koop-zoekservice=15/30s`), or
    /// PLATFORM=C/W for a platform's first service (`obv=30/60s`; `ob/text=5/30s` for its
    /// text service). The service enforces it and BesluitBron keeps it. Repeatable.
    #[arg(long = "limit", value_name = "SERVICE=C/W")]
    limits: Vec<LimitOverride>,
    /// Answers of a recorded trace: `recorded` (its latencies and outcomes, the default)
    /// or `model` (the platforms' latency model, every answer a success).
    #[arg(long, value_enum, default_value = "recorded")]
    latency: LatencyArg,
    /// A recorded trace: the server's `MarginSecs` (the part of each limit's burst it held
    /// back), when it was not the default 1 s.
    #[arg(long, value_name = "SECONDS")]
    margin_secs: Option<f64>,
    /// A recorded trace: the server's platform `TimeoutMs`, when it was not the default
    /// 15,000 ms (its paths try a flight again only within three times that of its first
    /// attempt, and so does the replay).
    #[arg(long, value_name = "MS")]
    timeout_ms: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum LatencyArg {
    Recorded,
    Model,
}

/// `plan`: the answer to a traffic model, as a table or JSON, and as a page when asked.
fn plan(path: &Path, json: bool, report: Option<&Path>, seed: Option<u64>) -> Result<ExitCode> {
    let mut model = besluitbron_sim::plan::TrafficModel::load(path)?;
    if let Some(seed) = seed {
        model.seed = seed;
    }
    let name = path
        .file_stem()
        .map_or_else(|| path.display().to_string(), |s| s.to_string_lossy().into_owned());
    let answer = match besluitbron_sim::plan::answer(&name, &model, std::io::stderr().is_terminal()) {
        Ok(a) => a,
        Err(failure) => {
            eprint!("{failure}");
            return Ok(ExitCode::from(1));
        }
    };
    let mut out = std::io::stdout().lock();
    if json {
        serde_json::to_writer_pretty(&mut out, &answer)?;
        writeln!(out)?;
    } else {
        write!(out, "{}", answer.render())?;
    }
    if let Some(path) = report {
        std::fs::write(path, besluitbron_sim::plan::html::render(&answer))
            .with_context(|| format!("writing {}", path.display()))?;
    }
    Ok(ExitCode::SUCCESS)
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
        Command::Fakes(args) => serve_fakes(&args),
        Command::List => {
            let mut out = std::io::stdout().lock();
            for (name, description) in scenarios_dir_entries(&besluitbron_sim::scenarios_dir())? {
                writeln!(out, "{name:<20} {description}")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Command::Plan {
            model,
            json,
            report,
            seed,
        } => plan(&model, json, report.as_deref(), seed),
        Command::Cluster { scenario, seed } => {
            let text = std::fs::read_to_string(&scenario)?;
            let mut parsed = besluitbron_sim::cluster::ClusterScenario::parse(&text).map_err(anyhow::Error::msg)?;
            if let Some(seed) = seed {
                parsed.seed = seed;
            }
            let name = scenario
                .file_stem()
                .map_or_else(|| scenario.display().to_string(), |s| s.to_string_lossy().into_owned());
            // The report needs no admission one by one: memory follows the calls under way.
            match besluitbron_sim::cluster::run_cluster_with(&name, &parsed, false) {
                Ok(outcome) => {
                    write!(std::io::stdout().lock(), "{}", outcome.render())?;
                    Ok(ExitCode::SUCCESS)
                }
                Err(e) => {
                    // A broken invariant, or a configuration the lease rules cannot keep.
                    eprintln!("besluitbron-sim cluster: {e}");
                    Ok(ExitCode::from(1))
                }
            }
        }
        Command::Run { scenario, flags } => {
            let parsed = Scenario::load(&scenario)?;
            let seed = flags.seed.unwrap_or(parsed.seed);
            let name = scenario
                .file_stem()
                .map_or_else(|| scenario.display().to_string(), |s| s.to_string_lossy().into_owned());
            let mut workload = parsed.workload(seed);
            what_if(&mut workload, &flags)?;
            simulate(&name, "run", &scenario, &workload, seed, &flags)
        }
        Command::Replay {
            trace_file: trace,
            replicas,
            flags,
        } => {
            let mut workload = load_trace(&trace)?;
            what_if(&mut workload, &flags)?;
            let seed = flags.seed.unwrap_or(1);
            let name = trace
                .file_name()
                .map_or_else(|| trace.display().to_string(), |s| s.to_string_lossy().into_owned());
            let code = simulate(&name, "replay", &trace, &workload, seed, &flags)?;
            match replicas {
                Some(n) if code == ExitCode::SUCCESS => replicas_what_if(&workload, n.into(), seed),
                Some(_) => {
                    eprintln!("replicas: not run, the replay above failed");
                    Ok(code)
                }
                None => Ok(code),
            }
        }
    }
}

/// The what-if flags: other limits, the latency model instead of the recording.
fn what_if(workload: &mut Workload, flags: &Flags) -> Result<()> {
    for &limit in &flags.limits {
        workload.set_limit(limit).map_err(anyhow::Error::msg)?;
    }
    if flags.latency == LatencyArg::Model {
        workload.forget_recorded_answers();
    }
    if let (Some(secs), Some(r)) = (flags.margin_secs, workload.recorded.as_mut()) {
        r.margin = std::time::Duration::from_secs_f64(secs.clamp(0.0, 3_600.0));
    }
    if let (Some(ms), Some(r)) = (flags.timeout_ms, workload.recorded.as_mut()) {
        r.timeout = std::time::Duration::from_millis(ms.clamp(1, 3_600_000));
    }
    Ok(())
}

/// `replay --replicas N`: each limited service's calls behind one and behind N replicas.
fn replicas_what_if(workload: &Workload, replicas: usize, seed: u64) -> Result<ExitCode> {
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "\nwhat if {replicas} replicas (cluster simulator, seed {seed}: lease TTL {} s, sessions spread by a hash, \
         forwards {} ms each way; each service with its own limit and one lease for the platforms that call \
         it, each platform with its buffer policy, every answer a success, one unit a call):",
        besluitbron_sim::replicas::LEASE_TTL_MS / 1_000,
        besluitbron_sim::replicas::FORWARD_MS,
    )?;
    match besluitbron_sim::replicas::what_if(workload, replicas, seed) {
        Ok(results) => {
            if results.is_empty() {
                writeln!(out, "no limited service was called in this trace")?;
            }
            for r in results {
                write!(out, "{r}")?;
            }
            Ok(ExitCode::SUCCESS)
        }
        Err(e) => {
            eprintln!("replicas: {e}");
            Ok(ExitCode::from(1))
        }
    }
}

/// The line `fakes` prints after the last platform's.
const READY: &str = "ready";

/// Runs the fakes on a small runtime of their own until a termination signal arrives.
fn serve_fakes(args: &FakesArgs) -> Result<ExitCode> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(args.listen)
            .await
            .with_context(|| format!("binding {}", args.listen))?;
        let fakes = serve_registry_on(listener).await.context("starting the fakes")?;
        let latency = std::time::Duration::from_millis(args.latency_ms);
        let mut out = std::io::stdout().lock();
        // In registry order: obv, tk, opentk, ori.
        for handle in &fakes {
            // One list applied under one lock: a request sees all of it or none.
            let common = [FaultSetting::Latency(latency), FaultSetting::FailEvery(args.fail_every)];
            let settings: Vec<PlatformFault> = common
                .map(|setting| PlatformFault {
                    platform: handle.platform(),
                    setting: FakeSetting::Common(setting),
                })
                .into_iter()
                .chain(args.faults.iter().cloned())
                .collect();
            handle.apply(&settings);
            // One line per platform, flushed at once: scripts wait for these lines.
            writeln!(out, "{} {}", handle.platform(), handle.base_url())?;
        }
        // Then one line saying they are all there.
        writeln!(out, "{READY}")?;
        out.flush()?;
        drop(out);
        wait_for_termination().await?;
        Ok(ExitCode::SUCCESS)
    })
}

/// Returns when SIGTERM or SIGINT (Ctrl-C) arrives.
async fn wait_for_termination() -> Result<()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut term = signal(SignalKind::terminate()).context("installing the SIGTERM handler")?;
        tokio::select! {
            r = tokio::signal::ctrl_c() => r.context("waiting for Ctrl-C")?,
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    tokio::signal::ctrl_c().await.context("waiting for Ctrl-C")?;
    Ok(())
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
    let mut kept = Vec::new();
    for &policy in policies {
        let opts = RunOptions {
            policy,
            seed,
            keep_trace: flags.trace,
            progress: std::io::stderr().is_terminal(),
        };
        // Per-call records only for what is drawn or written call by call; every session's
        // row only for the JSON report. Otherwise memory follows the calls in flight.
        let keep = Footprint {
            calls: flags.admissions.is_some() || flags.plot.is_some() || flags.report.is_some(),
            sessions: if flags.json {
                SessionRows::All
            } else {
                Footprint::lean().sessions
            },
            path_checks: PathChecks::Bounded,
        };
        let outcome = match run_with(name, workload, opts, keep) {
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
        if let (Some(tolerance), PolicyKind::Fair) = (flags.fidelity_ms, policy) {
            match besluitbron_sim::fidelity::check(workload, &outcome, tolerance) {
                Ok(matched) => {
                    for m in matched {
                        eprintln!("fidelity (each within {tolerance} ms): {m}");
                    }
                }
                Err(divergence) => {
                    eprint!("{divergence}");
                    return Ok(ExitCode::from(1));
                }
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
        if flags.report.is_some() {
            kept.push(outcome);
        }
    }
    if let Some(path) = &flags.report {
        let runs: Vec<&besluitbron_sim::RunOutcome> = kept.iter().collect();
        let page = besluitbron_sim::html::render_report(name, &runs);
        std::fs::write(path, page).with_context(|| format!("writing {}", path.display()))?;
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
