//! `besluitbron`: the BesluitBron server.
//!
//! Today it serves the operational endpoints (`/healthz`, `/readyz`, `/metrics` with the
//! platform limits it keeps and the buffers' statistics) and manages the persistent buffer from the command line
//! (`besluitbron cache stats|clear`). The MCP endpoints and platform connectors arrive
//! with their issues; nothing here pretends to serve them.

use std::collections::BTreeMap;
use std::io::Write;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use axum::Router;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use besluitbron_core::cache::{CachePolicy, CacheStats, CacheStore, CacheVersion, DataClass, Success};
use besluitbron_core::{PlatformId, WallTime};
use besluitbron_server::store::{RedbStore, open_all, render_prometheus, store_path, stress};
use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "besluitbron",
    version,
    about = "BesluitBron: Dutch government decision data over MCP"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the server.
    Serve {
        /// Address to listen on (loopback by default).
        #[arg(long, default_value = "127.0.0.1:8080")]
        listen: SocketAddr,
        /// The data directory; buffers live in `<data-dir>/cache/<platform>.redb`.
        #[arg(long, default_value = "./data")]
        data_dir: PathBuf,
    },
    /// Inspect or clear the persistent buffer (one file per platform).
    Cache {
        #[command(subcommand)]
        command: CacheCommand,
    },
}

#[derive(Subcommand)]
enum CacheCommand {
    /// Entries and bytes per platform and data class.
    Stats {
        /// Only this platform (ori, obv, tk, opentk, ob, rechtspraak, oa).
        #[arg(long)]
        platform: Option<PlatformId>,
        /// The data directory; buffers live in `<data-dir>/cache/<platform>.redb`.
        #[arg(long, default_value = "./data")]
        data_dir: PathBuf,
    },
    /// Delete every entry of one platform's buffer; no other platform is touched.
    Clear {
        /// The platform whose buffer to clear.
        #[arg(long)]
        platform: PlatformId,
        /// The data directory; buffers live in `<data-dir>/cache/<platform>.redb`.
        #[arg(long, default_value = "./data")]
        data_dir: PathBuf,
    },
    /// Test support: write stress entries 0..count, printing each number once committed.
    #[command(hide = true)]
    WriteStress {
        #[arg(long)]
        platform: PlatformId,
        #[arg(long)]
        data_dir: PathBuf,
        #[arg(long, default_value_t = u64::MAX)]
        count: u64,
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    match Cli::parse().command {
        Command::Serve { listen, data_dir } => serve(listen, &data_dir).await,
        Command::Cache { command } => cache(command),
    }
}

/// The wall clock, read at the edge and handed to the core as a value.
fn wall_now() -> WallTime {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    WallTime(u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX))
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
            let platforms = platform.map_or(PlatformId::ALL.to_vec(), |p| vec![p]);
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

/// The platforms' buffers that opened; shared by the handlers.
type Buffers = Arc<BTreeMap<PlatformId, RedbStore>>;

async fn serve(listen: SocketAddr, data_dir: &Path) -> anyhow::Result<()> {
    let (stores, failures) = open_all(data_dir, &CachePolicy::default(), &CacheVersion::current());
    for (platform, error) in &failures {
        tracing::error!(%platform, %error, "buffer unavailable; this platform runs without one");
    }
    tracing::info!(data_dir = %data_dir.display(), buffers = stores.len(), "buffers open");
    let buffers: Buffers = Arc::new(stores);
    let app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(|| async { "ready\n" }))
        .route("/metrics", get(metrics))
        .with_state(buffers);
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .with_context(|| format!("binding {listen}"))?;
    tracing::info!(%listen, "besluitbron listening");
    axum::serve(listener, app)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .context("serving")
}

/// Prometheus text: the limit kept per platform (C units per W seconds) and the buffers' statistics.
async fn metrics(State(buffers): State<Buffers>) -> impl IntoResponse {
    let mut out = String::from(
        "# HELP besluitbron_platform_limit_units Units per refill window BesluitBron keeps for a platform.\n\
         # TYPE besluitbron_platform_limit_units gauge\n",
    );
    for p in PlatformId::ALL {
        if let Some(limit) = p.default_limit() {
            out.push_str(&format!(
                "besluitbron_platform_limit_units{{platform=\"{p}\",window_seconds=\"{}\"}} {}\n",
                limit.window.as_secs_f64(),
                limit.capacity
            ));
        }
    }
    // Reading the counters is a read transaction per platform: off the async threads.
    let stats = tokio::task::spawn_blocking(move || {
        buffers
            .values()
            .filter_map(|store| match store.stats() {
                Ok(stats) => Some(stats),
                Err(error) => {
                    tracing::warn!(platform = %store.platform(), %error, "buffer statistics unavailable");
                    None
                }
            })
            .collect::<Vec<_>>()
    })
    .await
    .unwrap_or_default();
    out.push_str(&render_prometheus(&stats));
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}
