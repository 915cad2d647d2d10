//! `besluitbron`: the BesluitBron server and its command line.
//!
//! - `besluitbron serve`: the MCP server (`/mcp/<connector>` for each connector in the
//!   registry, and `/mcp`) with `/healthz`,
//!   `/readyz` and `/metrics`; configuration from `--config FILE`, `BesluitBron__…`
//!   environment variables and flags (see `besluitbron.example.toml`).
//! - `besluitbron cache stats|clear`: the persistent buffer, per platform.

use std::io::{IsTerminal, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Context;
use besluitbron_core::PlatformId;
use besluitbron_core::cache::{CachePolicy, CacheStats, CacheStore, CacheVersion, DataClass, Success};
use besluitbron_server::app::App;
use besluitbron_server::clock::wall_now;
use besluitbron_server::store::{RedbStore, store_path, stress};
use clap::{Parser, Subcommand};

/// mimalloc instead of the system allocator: a cached tool call allocates and frees many
/// small objects across threads (JSON trees, rmcp's per-request tasks and channels), and
/// with glibc's malloc that was the largest cost in the load benchmark; mimalloc raised
/// cached `obv_search` from 9,072 to 14,295 calls/s (see benches/README.md).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "besluitbron",
    version,
    about = "BesluitBron: Dutch government decision data over MCP"
)]
struct Cli {
    /// How log lines are written to stderr: `text` (colours only when stderr is a
    /// terminal) or `json` (one JSON object per line, for log collectors).
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// The form of the log lines.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum LogFormat {
    /// Plain text; terminal colours only when stderr is a terminal.
    Text,
    /// One JSON object per line.
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Run the MCP server.
    Serve {
        /// A TOML configuration file (see besluitbron.example.toml).
        #[arg(long)]
        config: Option<PathBuf>,
        /// Address to listen on (overrides the configuration; loopback by default).
        #[arg(long)]
        listen: Option<SocketAddr>,
        /// The data directory; buffers live in `<data-dir>/cache/<platform>.redb`.
        #[arg(long)]
        data_dir: Option<PathBuf>,
        /// A platform's base URL, e.g. `obv=http://127.0.0.1:9100/obv` (repeatable).
        #[arg(long = "platform-url", value_name = "ID=URL")]
        platform_urls: Vec<String>,
    },
    /// Inspect or clear the persistent buffer (one file per platform).
    Cache {
        #[command(subcommand)]
        command: CacheCommand,
    },
    /// Print the `server.json` that publishes this deployment in the MCP registry (a
    /// remote server over Streamable HTTP): `mcp-publisher publish` reads it. The name
    /// and the public address are the operator's (docs/deployment.md, "Publishing in the
    /// MCP registry").
    ServerJson {
        /// The registry name, in a namespace the publisher owns: `io.github.<user>/besluitbron`
        /// (GitHub login) or `<reversed domain>/besluitbron` (a domain you control).
        #[arg(long)]
        name: String,
        /// The deployment's public MCP address, https (e.g. the host's `/mcp`).
        #[arg(long)]
        url: String,
    },
}

/// A platform named on the command line: one a connector serves.
fn platform_arg(id: &str) -> Result<PlatformId, String> {
    besluitbron_server::connectors::platform(id).ok_or_else(|| {
        let known: Vec<&str> = besluitbron_server::connectors::platforms()
            .iter()
            .map(|p| p.as_str())
            .collect();
        format!("no connector serves the platform `{id}`: one of {}", known.join(", "))
    })
}

#[derive(Subcommand)]
enum CacheCommand {
    /// Entries and bytes per platform and data class.
    Stats {
        /// Only this platform (a connector's id: `besluitbron cache stats` lists them).
        #[arg(long, value_parser = platform_arg)]
        platform: Option<PlatformId>,
        /// The data directory; buffers live in `<data-dir>/cache/<platform>.redb`.
        #[arg(long, default_value = "./data")]
        data_dir: PathBuf,
    },
    /// Delete every entry of one platform's buffer; no other platform is touched.
    Clear {
        /// The platform whose buffer to clear.
        #[arg(long, value_parser = platform_arg)]
        platform: PlatformId,
        /// The data directory; buffers live in `<data-dir>/cache/<platform>.redb`.
        #[arg(long, default_value = "./data")]
        data_dir: PathBuf,
    },
    /// Test support: write stress entries 0..count, printing each number once committed.
    #[command(hide = true)]
    WriteStress {
        #[arg(long, value_parser = platform_arg)]
        platform: PlatformId,
        #[arg(long)]
        data_dir: PathBuf,
        #[arg(long, default_value_t = u64::MAX)]
        count: u64,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::Serve {
            config,
            listen,
            data_dir,
            platform_urls,
        } => {
            // The settings first: they say whether spans are exported.
            let config = serve_config(config.as_deref(), listen, data_dir, &platform_urls)?;
            let endpoint = besluitbron_server::telemetry::export::endpoint(&config.telemetry.traces_endpoint, |name| {
                std::env::var(name).ok()
            });
            let traces = endpoint.as_deref().map(|e| (e, config.telemetry.service_name.as_str()));
            let exporter = init_logs(cli.log_format, traces)?;
            let served = serve(config).await;
            if let Some(exporter) = exporter {
                exporter.shutdown().await;
            }
            served
        }
        Command::Cache { command } => {
            init_logs(cli.log_format, None)?;
            cache(command)
        }
        Command::ServerJson { name, url } => {
            init_logs(cli.log_format, None)?;
            let json = server_json(&name, &url)?;
            writeln!(std::io::stdout(), "{}", serde_json::to_string_pretty(&json)?)?;
            Ok(())
        }
    }
}

/// The log on stderr in `format`, and with `traces` (an endpoint and a service name) the
/// spans exported there (docs/tracing.md); the exporter is returned to be shut down last.
fn init_logs(
    format: LogFormat,
    traces: Option<(&str, &str)>,
) -> anyhow::Result<Option<besluitbron_server::telemetry::export::Exporter>> {
    use tracing_subscriber::prelude::*;
    // rmcp logs three INFO lines for every stateless request (the peer's whole initialize
    // parameters among them): at a few hundred requests per second that buries
    // BesluitBron's own log, so it speaks only from WARN unless RUST_LOG says otherwise.
    let filter = tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info,rmcp=warn".into());
    let logs = tracing_subscriber::fmt::layer().with_writer(std::io::stderr);
    // A log written to a file or a pipe gets no terminal colour codes.
    let logs = match format {
        LogFormat::Text => logs
            .with_ansi(std::io::stderr().is_terminal())
            .with_filter(filter)
            .boxed(),
        LogFormat::Json => logs.json().with_filter(filter).boxed(),
    };
    let registry = tracing_subscriber::registry().with(logs);
    let Some((endpoint, service)) = traces else {
        registry.init();
        return Ok(None);
    };
    let (spans, exporter) = besluitbron_server::telemetry::export::layer(endpoint, service)?;
    registry.with(spans).init();
    tracing::info!(endpoint, "traces: spans are exported over OTLP/HTTP");
    Ok(Some(exporter))
}

/// The registry's schema this `server.json` is written to (its rules for what is written
/// are stated in tests/schemas/, where the CLI test validates the output against them).
const SERVER_SCHEMA: &str = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json";

/// The `server.json` of a deployment published as `name` at `url`: BesluitBron's version
/// and description, one remote over Streamable HTTP. Refuses what the registry would: a
/// name without its one `/` between a namespace and a server name, an address that is not
/// https (the hosted assistants reach only https).
fn server_json(name: &str, url: &str) -> anyhow::Result<serde_json::Value> {
    let name_ok = name.split_once('/').is_some_and(|(namespace, server)| {
        let chars =
            |s: &str, extra: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || extra.contains(c));
        chars(namespace, ".-") && chars(server, "._-")
    }) && (3..=200).contains(&name.len());
    anyhow::ensure!(
        name_ok,
        "--name `{name}` is not a registry name: a namespace you own, `/`, and the server's name \
         (io.github.<user>/besluitbron, or a reversed domain such as nl.example/besluitbron)"
    );
    let parsed = reqwest::Url::parse(url).with_context(|| format!("--url `{url}` is not an address"))?;
    anyhow::ensure!(
        parsed.scheme() == "https" && parsed.host_str().is_some() && !url.contains(char::is_whitespace),
        "--url `{url}` must be the deployment's public https address (e.g. https://<host>/mcp)"
    );
    Ok(serde_json::json!({
        "$schema": SERVER_SCHEMA,
        "name": name,
        "title": "BesluitBron",
        "description": "Dutch government decision data: council records, parliament, publications, laws and rulings",
        "version": env!("CARGO_PKG_VERSION"),
        "remotes": [{"type": "streamable-http", "url": url}],
    }))
}

fn open_store(data_dir: &Path, platform: PlatformId) -> anyhow::Result<RedbStore> {
    let policy = CachePolicy::default().for_platform(platform);
    let path = store_path(data_dir, platform);
    RedbStore::open(&path, platform, policy, CacheVersion::current()).with_context(|| {
        format!(
            "opening the {platform} buffer at {} (a running server holds it locked: stop it first)",
            path.display()
        )
    })
}

fn cache(command: CacheCommand) -> anyhow::Result<()> {
    match command {
        CacheCommand::Stats { platform, data_dir } => {
            let platforms = platform.map_or_else(besluitbron_server::connectors::platforms, |p| vec![p]);
            let mut out = String::from("platform     class      entries          bytes\n");
            for p in platforms {
                if !store_path(&data_dir, p).exists() {
                    out.push_str(&format!("{:<12} (no buffer file)\n", p.as_str()));
                    continue;
                }
                let stats = open_store(&data_dir, p)?.stats()?;
                render_stats(&mut out, &stats);
            }
            print!("{out}");
            Ok(())
        }
        CacheCommand::Clear { platform, data_dir } => {
            let path = store_path(&data_dir, platform);
            if !path.exists() {
                println!("{platform}: no buffer file at {}", path.display());
                return Ok(());
            }
            let store = open_store(&data_dir, platform)?;
            let before = store.stats()?;
            store.clear()?;
            println!(
                "{platform}: cleared {} entries ({} bytes) from {}",
                before.entries(),
                before.bytes_used(),
                path.display()
            );
            Ok(())
        }
        CacheCommand::WriteStress {
            platform,
            data_dir,
            count,
        } => {
            let store = open_store(&data_dir, platform)?;
            let mut stdout = std::io::stdout().lock();
            for n in 0..count {
                let payload = Success::new(stress::stress_payload(n));
                store.put(&stress::stress_key(platform, n), &payload, wall_now())?;
                writeln!(stdout, "{n}")?;
                stdout.flush()?;
            }
            Ok(())
        }
    }
}

/// One line per class, in a fixed order.
fn render_stats(out: &mut String, stats: &CacheStats) {
    for class in DataClass::ALL {
        let c = stats.class(class);
        out.push_str(&format!(
            "{:<12} {:<10} {:>7} {:>14}\n",
            stats.platform.as_str(),
            class.as_str(),
            c.entries,
            c.bytes_used
        ));
    }
    out.push_str(&format!(
        "{:<12} {:<10} {:>7} {:>14}  (budget {} bytes)\n",
        stats.platform.as_str(),
        "total",
        stats.entries(),
        stats.bytes_used(),
        stats.budget_bytes
    ));
}

/// The server's settings: the file and the environment, then the flags.
fn serve_config(
    file: Option<&Path>,
    listen: Option<SocketAddr>,
    data_dir: Option<PathBuf>,
    platform_urls: &[String],
) -> anyhow::Result<besluitbron_server::config::Config> {
    let mut config = besluitbron_server::connectors::load_config(file, std::env::vars())?;
    if let Some(listen) = listen {
        config.listen = listen;
    }
    if let Some(dir) = data_dir {
        config.data_dir = dir;
    }
    for spec in platform_urls {
        let (id, url) = spec
            .split_once('=')
            .with_context(|| format!("--platform-url {spec}: expected ID=URL"))?;
        let platform = platform_arg(id).map_err(anyhow::Error::msg)?;
        let mut settings = config.platform(platform);
        settings.base_url = url.to_owned();
        config.platforms.insert(platform.as_str().to_owned(), settings);
    }
    Ok(config.validated()?)
}

async fn serve(config: besluitbron_server::config::Config) -> anyhow::Result<()> {
    if let Some(open_files) = besluitbron_server::listen::raise_open_files_limit() {
        tracing::debug!(open_files, "open files limit");
    }
    let listener =
        besluitbron_server::listen::bind(config.listen).with_context(|| format!("binding {}", config.listen))?;
    let local = listener.local_addr()?;
    let routes: Vec<String> = besluitbron_server::connectors::CONNECTORS
        .iter()
        .filter(|c| c.defaults.offered(&config))
        .map(|c| format!("/mcp/{}", c.id))
        .collect();
    let app = App::build(config)?;
    tracing::info!(listen = %local, "besluitbron listening: MCP at {} and /mcp", routes.join(", "));
    app.serve(listener, shutdown_signal(), Duration::from_secs(20)).await
}

/// SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending().await,
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        () = term => {}
    }
}
