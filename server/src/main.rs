//! `besluitbron`: the BesluitBron server.
//!
//! Today it serves the operational endpoints (`/healthz`, `/readyz`, `/metrics` with the
//! platform limits it keeps). The MCP endpoints, platform connectors and the persistent
//! buffer arrive with their issues; nothing here pretends to serve them.

use std::net::SocketAddr;

use anyhow::Context;
use axum::Router;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::get;
use besluitbron_core::PlatformId;
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
    },
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .init();
    match Cli::parse().command {
        Command::Serve { listen } => serve(listen).await,
    }
}

async fn serve(listen: SocketAddr) -> anyhow::Result<()> {
    let app = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/readyz", get(|| async { "ready\n" }))
        .route("/metrics", get(metrics));
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

/// Prometheus text: the limit kept per platform (C units per W seconds).
async fn metrics() -> impl IntoResponse {
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
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], out)
}
