//! Exporting spans over OTLP/HTTP (protobuf), when an endpoint is set (docs/tracing.md,
//! "Turning it on"): `[BesluitBron.Telemetry] TracesEndpoint`, else
//! `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, else `OTEL_EXPORTER_OTLP_ENDPOINT` with
//! `/v1/traces` after it; `OTEL_SDK_DISABLED=true` turns it off whatever is set.
//!
//! Off, nothing of this runs: no exporter, no task, no layer. On, spans go to a bounded
//! batch queue (OpenTelemetry's batch processor on tokio: `try_send`, a full queue drops
//! the span) that one task empties into the collector through our own reqwest client, so
//! a tool call never waits for the collector. A collector that is down or refuses costs a
//! log line at most once a minute ([`Collector`]), and the spans of that batch.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{Protocol, WithExportConfig as _, WithHttpConfig as _};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::trace::SdkTracerProvider;
use opentelemetry_sdk::trace::span_processor_with_async_runtime::BatchSpanProcessor;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::{LevelFilter, Targets};

use super::TARGET;

/// The OTLP path of traces under a collector's base address.
const TRACES_PATH: &str = "/v1/traces";

/// The longest one export may take (a batch the collector does not take in time is lost).
const EXPORT_TIMEOUT: Duration = Duration::from_secs(10);

/// How often a failing collector is logged at most.
const FAILURE_LOG_EVERY: Duration = Duration::from_secs(60);

/// Where spans go, from the configured endpoint (`configured`, empty: none) and the
/// standard OpenTelemetry variables `env` reads; `None`: exporting is off.
pub fn endpoint(configured: &str, env: impl Fn(&str) -> Option<String>) -> Option<String> {
    let set = |name: &str| env(name).map(|v| v.trim().to_owned()).filter(|v| !v.is_empty());
    if set("OTEL_SDK_DISABLED").is_some_and(|v| v.eq_ignore_ascii_case("true")) {
        return None;
    }
    if !configured.trim().is_empty() {
        return Some(configured.trim().to_owned());
    }
    set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT").or_else(|| {
        set("OTEL_EXPORTER_OTLP_ENDPOINT").map(|base| format!("{}{TRACES_PATH}", base.trim_end_matches('/')))
    })
}

/// Why exporting could not start.
#[derive(Debug, thiserror::Error)]
pub enum ExportError {
    /// The endpoint is no http(s) address.
    #[error("the OTLP traces endpoint `{0}` is not an http or https address")]
    Endpoint(String),
    /// The exporter could not be built.
    #[error("the OTLP exporter could not be built: {0}")]
    Build(String),
}

/// The exporter while it runs: [`Exporter::shutdown`] sends what is left.
pub struct Exporter {
    provider: SdkTracerProvider,
}

impl Exporter {
    /// Sends the spans still queued (within a few seconds) and stops the exporting task.
    pub async fn shutdown(self) {
        let provider = self.provider;
        // The provider waits for its task's answer; off the runtime's own threads.
        let stop = tokio::task::spawn_blocking(move || provider.shutdown_with_timeout(Duration::from_secs(5)));
        if let Ok(Ok(Err(e))) = tokio::time::timeout(Duration::from_secs(6), stop).await {
            tracing::warn!(error = %e, "traces: the last spans could not be sent");
        }
    }
}

/// The layer that turns BesluitBron's trace spans ([`TARGET`]) into OpenTelemetry spans
/// exported to `endpoint` as `service_name`, and the exporter behind it. Must run inside
/// the tokio runtime (the batch task is spawned on it).
pub fn layer<S>(endpoint: &str, service_name: &str) -> Result<(impl Layer<S> + Send + Sync, Exporter), ExportError>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a> + Send + Sync,
{
    let parsed = reqwest::Url::parse(endpoint).map_err(|_| ExportError::Endpoint(endpoint.to_owned()))?;
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(ExportError::Endpoint(endpoint.to_owned()));
    }
    let client = reqwest::Client::builder()
        .timeout(EXPORT_TIMEOUT)
        .build()
        .map_err(|e| ExportError::Build(e.to_string()))?;
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_protocol(Protocol::HttpBinary)
        .with_endpoint(endpoint)
        .with_timeout(EXPORT_TIMEOUT)
        .with_http_client(Collector::new(client, &parsed))
        .build()
        .map_err(|e| ExportError::Build(e.to_string()))?;
    let processor = BatchSpanProcessor::builder(exporter, opentelemetry_sdk::runtime::Tokio).build();
    let provider = SdkTracerProvider::builder()
        .with_span_processor(processor)
        .with_resource(
            Resource::builder()
                .with_service_name(service_name.to_owned())
                .with_attribute(opentelemetry::KeyValue::new(
                    "service.version",
                    env!("CARGO_PKG_VERSION"),
                ))
                .build(),
        )
        .build();
    let tracer = provider.tracer("besluitbron");
    super::EXPORTING.store(true, std::sync::atomic::Ordering::Relaxed);
    // The spans' own attributes only: no source location, thread, target or busy/idle
    // times on every span.
    let layer = tracing_opentelemetry::layer()
        .with_tracer(tracer)
        .with_location(false)
        .with_threads(false)
        .with_target(false)
        .with_tracked_inactivity(false)
        .with_filter(Targets::new().with_target(TARGET, LevelFilter::TRACE));
    Ok((layer, Exporter { provider }))
}

/// The OTLP exporter's HTTP client: our reqwest client, and a collector that fails logged
/// at most once a minute (never per batch, never in a tool call's way).
#[derive(Debug)]
struct Collector {
    client: reqwest::Client,
    /// The collector's host, for the log line (never its path or query).
    host: String,
    last_logged: Arc<Mutex<Option<Instant>>>,
}

impl Collector {
    fn new(client: reqwest::Client, endpoint: &reqwest::Url) -> Collector {
        Collector {
            client,
            host: endpoint.host_str().unwrap_or_default().to_owned(),
            last_logged: Arc::new(Mutex::new(None)),
        }
    }

    fn failed(&self, what: &str) {
        let mut last = self.last_logged.lock().expect("collector log lock");
        if last.is_some_and(|at| at.elapsed() < FAILURE_LOG_EVERY) {
            return;
        }
        *last = Some(Instant::now());
        tracing::warn!(
            collector = %self.host,
            "traces: the collector did not take a batch of spans ({what}); they are dropped and tool calls go on (logged at most once a minute)"
        );
    }
}

#[async_trait::async_trait]
impl HttpClient for Collector {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let url = parts.uri.to_string();
        let sent = self
            .client
            .request(parts.method, url)
            .headers(parts.headers)
            .body(body)
            .send()
            .await;
        let answer = match sent {
            Ok(answer) => answer,
            Err(e) => {
                self.failed(if e.is_timeout() { "timed out" } else { "unreachable" });
                return Err(Box::new(e));
            }
        };
        let status = answer.status();
        let headers = answer.headers().clone();
        let body = answer.bytes().await.map_err(|e| {
            self.failed("its answer broke off");
            Box::new(e) as HttpError
        })?;
        if !status.is_success() {
            self.failed(&format!("HTTP {}", status.as_u16()));
        }
        let mut out = Response::builder().status(status);
        if let Some(h) = out.headers_mut() {
            *h = headers;
        }
        out.body(body).map_err(|e| Box::new(e) as HttpError)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |name| vars.iter().find(|(n, _)| *n == name).map(|(_, v)| (*v).to_owned())
    }

    #[test]
    fn off_unless_an_endpoint_is_set() {
        assert_eq!(endpoint("", env(&[])), None);
        assert_eq!(endpoint("  ", env(&[("OTEL_EXPORTER_OTLP_ENDPOINT", "")])), None);
    }

    #[test]
    fn the_endpoint_comes_from_the_file_then_the_standard_variables() {
        let vars = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318/"),
            ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http://traces:4318/custom"),
        ];
        assert_eq!(
            endpoint("http://file:4318/v1/traces", env(&vars)).as_deref(),
            Some("http://file:4318/v1/traces")
        );
        assert_eq!(endpoint("", env(&vars)).as_deref(), Some("http://traces:4318/custom"));
        assert_eq!(
            endpoint("", env(&vars[..1])).as_deref(),
            Some("http://collector:4318/v1/traces")
        );
        let disabled = [vars[0], ("OTEL_SDK_DISABLED", "TRUE")];
        assert_eq!(endpoint("http://file:4318/v1/traces", env(&disabled)), None);
    }
}
