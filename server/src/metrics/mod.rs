//! Prometheus metrics (`GET /metrics`, text format 0.0.4).
//!
//! Counters are incremented where things happen (a 429 per client-limit layer, a
//! platform call and its outcome, a request and the kind of duplicate it was). Gauges
//! of state owned elsewhere (queue lengths, buckets) are refreshed just before each
//! scrape. The buffer renders its own counters (`crate::store::render_prometheus`).
//!
//! Label values are bounded: platforms, tools, layers, outcomes and duplicate kinds are
//! fixed sets. Clients are deliberately not a label (unbounded cardinality); the
//! per-client duplicate rate is watched by the dedup monitor, which logs a warning.

pub mod activity;

use std::borrow::Cow;
use std::sync::atomic::AtomicU64;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// `{layer}` of a client-limit refusal.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LayerLabel {
    /// `process`, `connector` or `session`.
    pub layer: &'static str,
}

/// `{platform}`.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct PlatformLabel {
    /// The platform id.
    pub platform: &'static str,
}

/// `{service}`: an upstream service, whose budget every platform calling it shares.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ServiceLabel {
    /// The service id (`koop-zoekservice`).
    pub service: &'static str,
}

/// `{platform, outcome}` of an upstream call.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CallLabels {
    /// The platform id.
    pub platform: &'static str,
    /// `ok`, `rate_limited`, `timeout`, `unreachable`, `bad_request`, `not_found`,
    /// `upstream_error` or `garbage`.
    pub outcome: &'static str,
}

/// `{cause}` of a duplicate-rate warning.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct CauseLabels {
    /// `retry_loop`, `short_timeout` or `unknown`.
    pub cause: &'static str,
}

/// `{platform, tool}` of a tool's searches.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct ToolLabels {
    /// The platform id.
    pub platform: &'static str,
    /// The tool name.
    pub tool: &'static str,
}

/// `{platform, tool, kind}` of a tool request.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct RequestLabels {
    /// The platform id.
    pub platform: &'static str,
    /// The tool name (only BesluitBron's own tools are counted).
    pub tool: Cow<'static, str>,
    /// `fresh`, `coalesced`, `cache_hit`, `replay` or `canonical`.
    pub kind: &'static str,
}

/// Every metric BesluitBron exports.
pub struct Metrics {
    registry: Registry,
    /// Requests refused by a client limit.
    pub throttled: Family<LayerLabel, Counter>,
    /// Upstream calls by outcome.
    pub platform_calls: Family<CallLabels, Counter>,
    /// Time admitted calls waited in a platform queue.
    pub platform_wait: Family<PlatformLabel, Histogram>,
    /// Calls waiting in a platform queue (refreshed at scrape).
    pub queue_length: Family<PlatformLabel, Gauge>,
    /// Sessions waiting at a platform (refreshed at scrape).
    pub waiting_sessions: Family<PlatformLabel, Gauge>,
    /// Units left in the local bucket (refreshed at scrape).
    pub bucket_units: Family<PlatformLabel, Gauge<f64, AtomicU64>>,
    /// Calls waiting in an upstream service's fair queue, over every platform calling it
    /// (refreshed at scrape).
    pub service_queue_length: Family<ServiceLabel, Gauge>,
    /// Sessions waiting at an upstream service (refreshed at scrape).
    pub service_waiting_sessions: Family<ServiceLabel, Gauge>,
    /// Units left in an upstream service's bucket (refreshed at scrape).
    pub service_bucket_units: Family<ServiceLabel, Gauge<f64, AtomicU64>>,
    /// Flights under way at a platform, limited or not (refreshed at scrape).
    pub in_flight: Family<PlatformLabel, Gauge>,
    /// Requests waiting for a flight, its leader included (refreshed at scrape).
    pub flight_waiters: Family<PlatformLabel, Gauge>,
    /// Platform requests withdrawn before they were sent because nobody waited for them
    /// any more — a cancelled call or task whose own request it was (refreshed at scrape
    /// from the path's count).
    pub withdrawn_calls: Family<PlatformLabel, Counter>,
    /// Buffer writes not yet finished (refreshed at scrape).
    pub pending_writes: Family<PlatformLabel, Gauge>,
    /// Payload bytes in the buffer's memory layer (refreshed at scrape).
    pub memory_bytes: Family<PlatformLabel, Gauge>,
    /// Tool requests by the kind of duplicate they were.
    pub requests: Family<RequestLabels, Counter>,
    /// Duplicate-rate warnings logged, by their likely cause (`retry_loop`,
    /// `short_timeout`, `unknown`).
    pub duplicate_spikes: Family<CauseLabels, Counter>,
    /// Searches that reached the platform although near one the same session made
    /// moments before (R-D5 level 2: counted, never merged).
    pub near_duplicates: Family<ToolLabels, Counter>,
    /// Open MCP sessions (refreshed at scrape).
    pub sessions_open: Gauge,
    /// Each platform's last hour, for the status page (not exported).
    pub activity: activity::Activity,
    /// Shared-state (Redis) operations that failed, and the fallbacks taken.
    pub shared_state: SharedStateMetrics,
    /// Several replicas: 1 while this replica owns the platform's lease and admits.
    pub platform_owned: Family<PlatformLabel, Gauge>,
    /// Several replicas: tool calls forwarded to the platform's owner.
    pub forwarded_calls: Family<PlatformLabel, Counter>,
    /// Several replicas: lease changes of this replica (`acquired`, `admitting`, `lost`,
    /// `handed_over`).
    pub lease_changes: Family<LeaseLabels, Counter>,
    /// Several replicas: admissions never sent because they outlived the lease.
    pub dropped_admissions: Family<PlatformLabel, Counter>,
    /// Checks of a platform path's invariants that found one broken (each is logged).
    pub path_invariant_failures: Family<PlatformLabel, Counter>,
    /// Recording: trace lines written.
    pub trace_lines: Counter,
    /// Recording: trace lines dropped (the writer behind, or the disk failing).
    pub trace_dropped: Counter,
}

/// `{platform, change}` of a lease change.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct LeaseLabels {
    /// The platform id.
    pub platform: &'static str,
    /// `acquired`, `admitting`, `lost` or `handed_over`.
    pub change: &'static str,
}

impl Metrics {
    /// A registry with every metric registered.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("besluitbron");
        let m = Metrics {
            throttled: Family::default(),
            platform_calls: Family::default(),
            platform_wait: Family::new_with_constructor(|| {
                Histogram::new([0.01, 0.1, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0])
            }),
            queue_length: Family::default(),
            waiting_sessions: Family::default(),
            bucket_units: Family::default(),
            service_queue_length: Family::default(),
            service_waiting_sessions: Family::default(),
            service_bucket_units: Family::default(),
            in_flight: Family::default(),
            flight_waiters: Family::default(),
            withdrawn_calls: Family::default(),
            pending_writes: Family::default(),
            memory_bytes: Family::default(),
            requests: Family::default(),
            duplicate_spikes: Family::default(),
            near_duplicates: Family::default(),
            sessions_open: Gauge::default(),
            activity: Default::default(),
            shared_state: SharedStateMetrics::default(),
            platform_owned: Family::default(),
            forwarded_calls: Family::default(),
            lease_changes: Family::default(),
            dropped_admissions: Family::default(),
            path_invariant_failures: Family::default(),
            trace_lines: Counter::default(),
            trace_dropped: Counter::default(),
            registry: Registry::default(),
        };
        registry.register(
            "client_throttled",
            "Requests refused by a client limit (HTTP 429)",
            m.throttled.clone(),
        );
        registry.register(
            "platform_calls",
            "Calls to a platform by outcome",
            m.platform_calls.clone(),
        );
        registry.register(
            "platform_wait_seconds",
            "Time calls waited in a platform queue",
            m.platform_wait.clone(),
        );
        registry.register(
            "platform_queue_length",
            "Calls waiting in a platform queue",
            m.queue_length.clone(),
        );
        registry.register(
            "platform_waiting_sessions",
            "Sessions waiting at a platform",
            m.waiting_sessions.clone(),
        );
        registry.register(
            "platform_bucket_units",
            "Units left in the local bucket",
            m.bucket_units.clone(),
        );
        registry.register(
            "service_queue_length",
            "Calls waiting in an upstream service's fair queue, over every platform calling it",
            m.service_queue_length.clone(),
        );
        registry.register(
            "service_waiting_sessions",
            "Sessions waiting at an upstream service",
            m.service_waiting_sessions.clone(),
        );
        registry.register(
            "service_bucket_units",
            "Units left in an upstream service's bucket, shared by every platform calling it",
            m.service_bucket_units.clone(),
        );
        registry.register(
            "platform_in_flight",
            "Flights under way at a platform (one per distinct request)",
            m.in_flight.clone(),
        );
        registry.register(
            "platform_flight_waiters",
            "Requests waiting for a flight at a platform",
            m.flight_waiters.clone(),
        );
        registry.register(
            "platform_withdrawn_calls",
            "Platform requests withdrawn unsent: nobody waited for them any more",
            m.withdrawn_calls.clone(),
        );
        registry.register(
            "buffer_pending_writes",
            "Buffer writes not yet finished",
            m.pending_writes.clone(),
        );
        registry.register(
            "buffer_memory_bytes",
            "Payload bytes in the buffer's memory layer (at most 24 MiB per platform)",
            m.memory_bytes.clone(),
        );
        registry.register(
            "requests",
            "Tool requests by the kind of duplicate they were",
            m.requests.clone(),
        );
        registry.register(
            "duplicate_spikes",
            "Duplicate-rate warnings logged, by likely cause",
            m.duplicate_spikes.clone(),
        );
        registry.register(
            "near_duplicates",
            "Searches near one the same session made moments before (asked again, counted)",
            m.near_duplicates.clone(),
        );
        registry.register("sessions_open", "Open MCP sessions", m.sessions_open.clone());
        m.shared_state.register(&mut registry);
        registry.register(
            "platform_owned",
            "Whether this replica owns the platform's lease and admits (several replicas)",
            m.platform_owned.clone(),
        );
        registry.register(
            "forwarded_calls",
            "Tool calls forwarded to the platform's owner (several replicas)",
            m.forwarded_calls.clone(),
        );
        registry.register(
            "lease_changes",
            "Lease changes of this replica by platform and change (several replicas)",
            m.lease_changes.clone(),
        );
        registry.register(
            "dropped_admissions",
            "Admissions never sent because they outlived the lease (several replicas)",
            m.dropped_admissions.clone(),
        );
        registry.register(
            "path_invariant_failures",
            "Checks of a platform path's invariants that found one broken (logged; a defect)",
            m.path_invariant_failures.clone(),
        );
        registry.register("trace_lines", "Recording: trace lines written", m.trace_lines.clone());
        registry.register(
            "trace_dropped_lines",
            "Recording: trace lines dropped because the writer fell behind or the disk failed",
            m.trace_dropped.clone(),
        );
        Metrics { registry, ..m }
    }

    /// The Prometheus text exposition.
    pub fn render(&self) -> String {
        let mut out = String::new();
        // Writing into a String cannot fail.
        prometheus_client::encoding::prometheus_text::encode(&mut out, &self.registry).expect("encode to a String");
        out
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

/// `{op}` of a shared-state operation.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct SharedStateLabel {
    /// `admit`, `initialize`, `session_count`, `session_exists`, `replay`.
    pub op: &'static str,
}

/// `{what}` of a fallback to local state.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
pub struct FallbackLabel {
    /// `limits`, `initialize`, `session_cap`, `replays`, `sessions`.
    pub what: &'static str,
}

/// Shared state in Redis (several replicas): operations that failed and fallbacks to
/// the local state taken.
#[derive(Clone, Debug, Default)]
pub struct SharedStateMetrics {
    /// Shared-state operations that failed (the engine unreachable or slow).
    pub failed: Family<SharedStateLabel, Counter>,
    /// Requests served with local state instead of the shared one.
    pub fallbacks: Family<FallbackLabel, Counter>,
}

impl SharedStateMetrics {
    fn register(&self, registry: &mut Registry) {
        registry.register(
            "shared_state_failed",
            "Shared-state (Redis) operations that failed, by operation",
            self.failed.clone(),
        );
        registry.register(
            "shared_state_fallbacks",
            "Requests served with local state because the shared state was unreachable",
            self.fallbacks.clone(),
        );
    }

    /// Counts a failed `op` and the fallback `to` it led to.
    pub fn fell_back(&self, op: &'static str, to: &'static str) {
        self.failed.get_or_create(&SharedStateLabel { op }).inc();
        self.fallbacks.get_or_create(&FallbackLabel { what: to }).inc();
    }
}

/// The `Content-Type` of [`Metrics::render`].
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rendering_shows_counters_with_their_labels() {
        let m = Metrics::new();
        m.throttled.get_or_create(&LayerLabel { layer: "session" }).inc();
        m.requests
            .get_or_create(&RequestLabels {
                platform: "obv",
                tool: "obv_search".into(),
                kind: "coalesced",
            })
            .inc_by(3);
        m.platform_wait
            .get_or_create(&PlatformLabel { platform: "obv" })
            .observe(0.7);
        let text = m.render();
        assert!(
            text.contains("besluitbron_client_throttled_total{layer=\"session\"} 1"),
            "{text}"
        );
        assert!(text.contains("besluitbron_requests_total{platform=\"obv\",tool=\"obv_search\",kind=\"coalesced\"} 3"));
        assert!(
            text.contains("besluitbron_platform_wait_seconds_bucket{platform=\"obv\",le=\"1\"} 1"),
            "{text}"
        );
    }
}
