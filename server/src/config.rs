//! Configuration: one TOML file plus environment overrides, under `BesluitBron`.
//!
//! Every setting has a default that runs the server on loopback against the real
//! platforms with an embedded data directory, so `besluitbron serve` needs no file.
//! A file (`--config FILE`, see `besluitbron.example.toml`) overrides defaults, and
//! environment variables override the file, following the same path with `__` between
//! the parts: `BesluitBron__McpRateLimit__PerSession__RequestsPerMinute=1200` sets
//! `[BesluitBron.McpRateLimit.PerSession] RequestsPerMinute`. Command-line flags
//! (`--listen`, `--data-dir`, `--platform-url`) override all of them.
//!
//! Invariants: a loaded [`Config`] is valid — unknown platform ids, zero limits and
//! malformed URLs are refused at load time with the setting's path in the message.
//!
//! **What differs per platform is its connector's.** This module names no platform: the
//! defaults of each platform's settings (its real base URL, a limit kept for its text
//! host, a bound on calls in flight) come from its connector ([`PlatformDefaults`],
//! handed to [`Config::load`] by whoever knows the registry), and the file and the
//! environment override them setting by setting.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use besluitbron_core::limits::ClientLimitConfig;
use besluitbron_core::{LimitConfig, PlatformId, SchedulerConfig, ServiceId, Units};
use figment::Figment;
use figment::providers::{Format, Serialized, Toml};
use serde::{Deserialize, Serialize};

/// The root of the configuration file: everything lives under `[BesluitBron]`.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
struct Root {
    #[serde(rename = "BesluitBron", default)]
    besluitbron: Config,
}

/// BesluitBron's settings.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct Config {
    /// Where the MCP server listens. Loopback by default.
    pub listen: SocketAddr,
    /// Where the buffer and other state live.
    pub data_dir: PathBuf,
    /// Host header values accepted (DNS-rebinding protection), as `host` or `host:port`.
    /// Empty: loopback only (`localhost`, `127.0.0.1`, `::1`). Behind a proxy, list the
    /// public host name here.
    pub allowed_hosts: Vec<String>,
    /// Origin header values accepted from browsers (with scheme, e.g.
    /// `https://assistant.example`; `:*` for any port). A request with any other Origin
    /// is refused (403); requests without an Origin (non-browser clients) are accepted.
    pub allowed_origins: Vec<String>,
    /// Proxies whose `X-Forwarded-For` is believed (exact addresses).
    pub trusted_proxies: Vec<std::net::IpAddr>,
    /// Largest request body accepted, in bytes.
    pub max_body_bytes: usize,
    /// Longest time one MCP request may take, in seconds.
    pub request_timeout_secs: u64,
    /// Limits on clients (R-I1 to R-I3).
    pub mcp_rate_limit: ClientLimitConfig,
    /// MCP sessions.
    pub sessions: SessionConfig,
    /// Client connections: time-outs and caps.
    pub connections: ConnectionConfig,
    /// Per platform: address, time-outs, attempts.
    pub platforms: BTreeMap<String, PlatformConfig>,
    /// Per upstream service: the limit BesluitBron keeps there and its queue's bounds,
    /// shared by every platform that calls it.
    pub services: BTreeMap<String, ServiceConfig>,
    /// The platforms the connectors serve and the services each calls, as
    /// [`Config::load`] was given them: a `Platforms.<id>` or `Services.<id>` of another
    /// id is refused by name.
    #[serde(skip)]
    pub known: Vec<(PlatformId, &'static [ServiceId])>,
    /// How often BesluitBron's own maintenance refreshes OpenBesluitvorming's load
    /// status (as the system session, R-L7), in seconds; 0 turns the refresh off.
    pub status_refresh_secs: u64,
    /// The version stamped on buffer entries. Empty: this build's version. Set it only
    /// to test an upgrade, or to share a buffer between builds known to read alike.
    pub cache_version: String,
    /// Contact address sent in the User-Agent, as the platforms ask of reusers.
    pub contact: String,
    /// Document text: the extraction pool and its caps.
    pub text: TextConfig,
    /// Recording every platform call in the simulator's trace format (docs/deployment.md,
    /// "Recording traffic for the simulator"). Off by default.
    pub recording: RecordingConfig,
    /// Several replicas on one Redis (docs/replicas.md). Absent: one process on its own,
    /// nothing shared.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cluster: Option<ClusterConfig>,
    /// The administrative address: when set, `/metrics` and `/status.json` are served
    /// there only (with `/healthz` and `/readyz`), not on `Listen`, so an operator can
    /// keep them off the address browsers and clients reach. Absent: on `Listen`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admin_listen: Option<SocketAddr>,
    /// Access tokens on the MCP addresses (docs/authorization.md): off by default.
    pub auth: AuthConfig,
    /// Traces over OTLP/HTTP (docs/tracing.md): off unless an endpoint is set here or in
    /// the standard OpenTelemetry variables.
    pub telemetry: TelemetryConfig,
}

/// Exporting traces (`BesluitBron.Telemetry`, docs/tracing.md).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct TelemetryConfig {
    /// Where spans go over OTLP/HTTP (protobuf), the whole address with its path
    /// (`http://collector:4318/v1/traces`). Empty: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`,
    /// else `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces`, else no export.
    pub traces_endpoint: String,
    /// The `service.name` the spans carry.
    pub service_name: String,
}

impl Default for TelemetryConfig {
    /// No endpoint of its own; service `besluitbron`.
    fn default() -> Self {
        TelemetryConfig {
            traces_endpoint: String::new(),
            service_name: "besluitbron".to_owned(),
        }
    }
}

/// Whether the MCP addresses ask for an OAuth access token (`BesluitBron.Auth.Mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AuthMode {
    /// No tokens: callers are known by session and address, as always.
    #[default]
    Off,
    /// A valid token makes its user the caller; without one, the session or address as
    /// with `Off`; an invalid one is refused (401), never ignored.
    Optional,
    /// No valid token, no service on any MCP address.
    Required,
}

/// The authorization server BesluitBron trusts, and what its tokens must say.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct AuthConfig {
    /// Off, optional or required.
    pub mode: AuthMode,
    /// The authorization server's issuer URL, exactly as its tokens' `iss` and its
    /// metadata name it (found by OpenID discovery or RFC 8414). `https`, or `http` on
    /// loopback only.
    pub issuer: String,
    /// This server's canonical URI (e.g. `https://host/mcp`), which tokens must name as
    /// their audience (RFC 8707); one resource for every MCP address.
    pub resource: String,
    /// Scopes every token must carry; empty: none asked.
    pub scopes: Vec<String>,
}

/// Several replicas: the shared engine, the internal endpoint and the platform leases.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct ClusterConfig {
    /// The shared engine: `redis://host:port/db` or `unix:///path/to/redis.sock`.
    pub redis: String,
    /// Where this replica's internal endpoint listens (never the MCP listener); the other
    /// replicas forward platform calls to it when this replica owns the platform.
    pub internal_listen: SocketAddr,
    /// How the other replicas reach this one's internal endpoint. Empty: `http://` and
    /// `InternalListen`.
    pub internal_url: String,
    /// Shared by all replicas; every internal request carries it. At least 16 characters.
    pub secret: String,
    /// A platform lease's time to live, in milliseconds (renewed every third of it).
    pub lease_ttl_ms: u64,
}

impl Default for ClusterConfig {
    /// Redis on loopback, the internal endpoint on 127.0.0.1:8090, leases of 5 s; the
    /// secret must be set.
    fn default() -> Self {
        ClusterConfig {
            redis: "redis://127.0.0.1:6379".to_owned(),
            internal_listen: SocketAddr::from(([127, 0, 0, 1], 8090)),
            internal_url: String::new(),
            secret: String::new(),
            lease_ttl_ms: 5_000,
        }
    }
}

impl ClusterConfig {
    /// How the other replicas reach this one, without a trailing slash.
    pub fn internal_url(&self) -> String {
        if self.internal_url.is_empty() {
            format!("http://{}", self.internal_listen)
        } else {
            self.internal_url.trim_end_matches('/').to_owned()
        }
    }

    /// The lease's time to live.
    pub fn lease_ttl(&self) -> Duration {
        Duration::from_millis(self.lease_ttl_ms)
    }
}

/// Document text extraction (PDF, Word, RTF, XML): how many at once, and the caps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct TextConfig {
    /// Extractions running at once (the others queue); 0: one per core.
    pub workers: usize,
    /// Largest file read, in bytes (also capped by the platform's body cap).
    pub max_file_bytes: usize,
    /// Most pages a PDF may have.
    pub max_pages: u32,
    /// Longest one extraction may run, in milliseconds.
    pub max_millis: u64,
}

impl Default for TextConfig {
    /// One per core, 16 MiB, 2,000 pages, 20 s.
    fn default() -> Self {
        TextConfig {
            workers: 0,
            max_file_bytes: 16 * 1024 * 1024,
            max_pages: 2_000,
            max_millis: 20_000,
        }
    }
}

/// Recording the platform calls as a trace the simulator replays
/// (`besluitbron-sim replay`): rotating JSON Lines files with a size cap, written off the
/// call path (a line the writer cannot take is dropped and counted, never waited for).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct RecordingConfig {
    /// Record.
    pub enabled: bool,
    /// Where the files go; empty: `trace/` in the data directory.
    pub dir: PathBuf,
    /// A file is closed and a new one begun at this size, in bytes.
    pub max_file_bytes: u64,
    /// Files kept; the oldest is deleted when one more begins.
    pub max_files: u32,
    /// Lines waiting for the writer; one more is dropped (and counted).
    pub queue_lines: usize,
    /// Write what each call asked in clear (`query`); off: only a salted hash.
    pub queries: bool,
    /// Write session names in clear (an MCP session id, or a client's address before a
    /// session exists); off: a salted hash.
    pub sessions: bool,
    /// The salt of the hashes; empty: a random one per start (then equal requests
    /// recorded by two runs of the server do not look equal).
    pub salt: String,
}

impl RecordingConfig {
    /// Where the files go: `Dir`, or `trace/` in `data_dir`.
    pub fn dir_in(&self, data_dir: &Path) -> PathBuf {
        if self.dir.as_os_str().is_empty() {
            data_dir.join("trace")
        } else {
            self.dir.clone()
        }
    }
}

impl Default for RecordingConfig {
    /// Off; `data/trace`, 16 MiB files, 24 of them, 8,192 lines queued, hashes only.
    fn default() -> Self {
        RecordingConfig {
            enabled: false,
            dir: PathBuf::new(),
            max_file_bytes: 16 * 1024 * 1024,
            max_files: 24,
            queue_lines: 8192,
            queries: false,
            sessions: false,
            salt: String::new(),
        }
    }
}

/// MCP session settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct SessionConfig {
    /// A session unused this long is closed.
    pub idle_timeout_secs: u64,
    /// Most sessions open at once; `initialize` beyond it is refused.
    pub max_sessions: usize,
    /// `initialize` requests per minute per client address.
    pub initialize_per_minute: u32,
}

impl Default for SessionConfig {
    /// 30 minutes idle, 10,000 sessions, 60 `initialize` per minute per address.
    fn default() -> Self {
        SessionConfig {
            idle_timeout_secs: 30 * 60,
            max_sessions: 10_000,
            initialize_per_minute: 60,
        }
    }
}

/// Client connection settings: what a slow, silent or greedy client can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct ConnectionConfig {
    /// A request's headers must arrive within this many seconds of the connection's
    /// opening or of the previous answer (it also closes idle keep-alive connections).
    pub header_read_timeout_secs: u64,
    /// A request's body must arrive within this many seconds of its headers (HTTP 408).
    pub body_read_timeout_secs: u64,
    /// Most client connections open at once.
    pub max_connections: usize,
    /// Most connections open at once from one address (a trusted proxy is exempt).
    pub max_connections_per_address: usize,
    /// Most standalone event streams (`GET`) open at once per MCP session.
    pub max_streams_per_session: usize,
    /// Most standalone event streams open at once per client address.
    pub max_streams_per_address: usize,
    /// After the drain on shutdown, connections get this many seconds to finish before
    /// they are closed.
    pub shutdown_grace_secs: u64,
}

impl Default for ConnectionConfig {
    /// Headers within 5 s, a body within 10 s, 1,024 connections (128 per address),
    /// 2 event streams per session (a reconnect may overlap the old one) and 16 per
    /// address, 3 s of grace after the drain.
    fn default() -> Self {
        ConnectionConfig {
            header_read_timeout_secs: 5,
            body_read_timeout_secs: 10,
            max_connections: 1_024,
            max_connections_per_address: 128,
            max_streams_per_session: 2,
            max_streams_per_address: 16,
            shutdown_grace_secs: 3,
        }
    }
}

/// One platform's settings: how BesluitBron talks to it. Its limits belong to the
/// upstream services it calls ([`ServiceConfig`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct PlatformConfig {
    /// The platform's base URL.
    pub base_url: String,
    /// Time-out for one request, in milliseconds.
    pub timeout_ms: u64,
    /// Attempts for an idempotent read that fails with a connection error or a 5xx.
    pub attempts: u32,
    /// The largest answer read from this platform, in bytes (16 MiB by default). An
    /// answer announcing more is refused before its body is read, one sending more is
    /// cut off at the cap; either is a tool error naming the platform, the size and the cap.
    pub max_body_bytes: u64,
    /// How long a platform found switched off is answered as retired without asking it
    /// again, in seconds (ORI: 60). Absent: not held.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retired_hold_secs: Option<u64>,
    /// How long one query may run at a platform that takes queries (a SPARQL endpoint),
    /// in seconds, where its connector declares one; a query over it is a time-out error
    /// saying so. Absent: the platform takes no queries.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub query_timeout_secs: Option<u64>,
    /// Earlier configurations' `Platforms.<id>.Limit`: the limit of the platform's first
    /// service, taken over as `Services.<service>.Limit` where no other platform calls
    /// that service, refused with the new key named where one does.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitSetting>,
    /// Earlier configurations' `TextLimit`: its second service's limit, as `Limit` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text_limit: Option<LimitSetting>,
    /// Earlier configurations' `MaxQueued`: its first service's, as `Limit` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_queued: Option<usize>,
    /// Earlier configurations' `MaxQueuedPerSession`: its first service's, as `Limit` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_queued_per_session: Option<usize>,
    /// Earlier configurations' `MaxConcurrent`: its first service's, as `Limit` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<usize>,
}

/// One upstream service's settings: the budget every platform calling it shares.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", default, deny_unknown_fields)]
pub struct ServiceConfig {
    /// The limit BesluitBron keeps (`Capacity` units per `WindowSecs`); absent for
    /// services whose calls pass straight through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub limit: Option<LimitSetting>,
    /// Most calls waiting for this service.
    pub max_queued: usize,
    /// Most calls one session may have waiting for this service.
    pub max_queued_per_session: usize,
    /// Most calls in the fair queue or out at this service at once; the rest wait their
    /// turn in arrival order. Absent: no bound (OpenTK: 3, its searches are expensive).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrent: Option<usize>,
}

impl Default for ServiceConfig {
    fn default() -> Self {
        ServiceConfig {
            limit: None,
            max_queued: 10_000,
            max_queued_per_session: 256,
            max_concurrent: None,
        }
    }
}

/// A limit as written in the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct LimitSetting {
    /// C: units in a full bucket (decimals allowed, e.g. 60 or 7.5).
    pub capacity: Units,
    /// W: seconds for an empty bucket to refill completely.
    pub window_secs: f64,
    /// How far apart in travel time two calls may reach the platform while still
    /// fitting its limit: BesluitBron holds back `C × MarginSecs / W` units of the
    /// burst (at most half) and keeps the full rate. 0 trusts the network to be exact.
    #[serde(default = "default_margin_secs")]
    pub margin_secs: f64,
}

/// One second: a call that leaves on time may arrive up to a second after an earlier
/// one that travelled slowly and still fit.
fn default_margin_secs() -> f64 {
    1.0
}

impl LimitSetting {
    /// The setting of `limit`, with the default margin.
    fn of(limit: LimitConfig) -> LimitSetting {
        LimitSetting {
            capacity: limit.capacity,
            window_secs: limit.window.as_secs_f64(),
            margin_secs: default_margin_secs(),
        }
    }
}

impl Default for PlatformConfig {
    fn default() -> Self {
        PlatformConfig {
            base_url: String::new(),
            timeout_ms: 15_000,
            attempts: 3,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
            retired_hold_secs: None,
            query_timeout_secs: None,
            limit: None,
            text_limit: None,
            max_queued: None,
            max_queued_per_session: None,
            max_concurrent: None,
        }
    }
}

/// The largest answer read from a platform unless its settings say otherwise: 16 MiB.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

/// A platform's settings as its connector sets them, before the file and the
/// environment: its real address, the upstream services it calls (their default limits
/// are the services' own), and what it needs beyond the shared defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlatformDefaults {
    /// The platform.
    pub platform: PlatformId,
    /// Its real base URL (PLATFORMS.md).
    pub base_url: &'static str,
    /// The upstream services it calls; its calls go to the first unless they name another.
    pub services: &'static [ServiceId],
    /// How long a switched-off platform is answered as such without asking, if held.
    pub retired_hold_secs: Option<u64>,
    /// How long one query may run, if the platform takes queries.
    pub query_timeout_secs: Option<u64>,
    /// The platform at `base_url` is switched off: its connector is offered (tools,
    /// address, resources, hints) only where the configuration points it elsewhere,
    /// at a mirror.
    pub switched_off: bool,
}

impl PlatformDefaults {
    /// A platform at `base_url` calling `services`, with nothing else of its own.
    pub const fn new(platform: PlatformId, base_url: &'static str, services: &'static [ServiceId]) -> PlatformDefaults {
        PlatformDefaults {
            platform,
            base_url,
            services,
            retired_hold_secs: None,
            query_timeout_secs: None,
            switched_off: false,
        }
    }

    /// True when the connector of a platform with these defaults is offered under
    /// `config`: always, unless the platform is switched off at its real address and
    /// the configuration does not name another.
    pub fn offered(&self, config: &Config) -> bool {
        !self.switched_off
            || config.platform(self.platform).base_url.trim_end_matches('/') != self.base_url.trim_end_matches('/')
    }

    /// The settings these defaults make.
    fn settings(&self) -> PlatformConfig {
        PlatformConfig {
            base_url: self.base_url.to_owned(),
            retired_hold_secs: self.retired_hold_secs,
            query_timeout_secs: self.query_timeout_secs,
            ..PlatformConfig::default()
        }
    }
}

/// A service's settings as it declares them.
fn service_settings(service: ServiceId) -> ServiceConfig {
    ServiceConfig {
        limit: service.default_limit().map(LimitSetting::of),
        max_concurrent: service.default_max_in_flight(),
        ..ServiceConfig::default()
    }
}

impl Default for Config {
    /// Every setting's default, and no platform's: [`Config::load`] adds the
    /// connectors' [`PlatformDefaults`].
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("data"),
            allowed_hosts: Vec::new(),
            allowed_origins: Vec::new(),
            trusted_proxies: Vec::new(),
            max_body_bytes: 1 << 20,
            request_timeout_secs: 120,
            mcp_rate_limit: ClientLimitConfig::default(),
            sessions: SessionConfig::default(),
            connections: ConnectionConfig::default(),
            platforms: BTreeMap::new(),
            services: BTreeMap::new(),
            known: Vec::new(),
            status_refresh_secs: 600,
            cache_version: String::new(),
            contact: "beheer@besluitbron.invalid".to_owned(),
            text: TextConfig::default(),
            recording: RecordingConfig::default(),
            cluster: None,
            admin_listen: None,
            auth: AuthConfig::default(),
            telemetry: TelemetryConfig::default(),
        }
    }
}

/// A configuration that cannot run.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file or an environment variable does not parse.
    #[error("configuration: {0}")]
    Parse(#[from] Box<figment::Error>),
    /// A setting is out of range.
    #[error("configuration: {path}: {message}")]
    Invalid {
        /// The setting's path, e.g. `BesluitBron.Platforms.obv.Limit.Capacity`.
        path: String,
        /// What is wrong with it.
        message: String,
    },
}

impl Config {
    /// The defaults with `platforms`' settings, before any file or environment.
    pub fn with_platforms(platforms: &[PlatformDefaults]) -> Config {
        let mut config = Config {
            known: platforms.iter().map(|p| (p.platform, p.services)).collect(),
            ..Config::default()
        };
        for p in platforms {
            config.platforms.insert(p.platform.as_str().to_owned(), p.settings());
            for s in p.services {
                config
                    .services
                    .entry(s.as_str().to_owned())
                    .or_insert_with(|| service_settings(*s));
            }
        }
        config
    }

    /// Defaults (`platforms`' from their connectors), then `file` (if given), then
    /// environment variables `BesluitBron__…` from `env` (pass `std::env::vars()`; tests
    /// pass their own).
    pub fn load(
        platforms: &[PlatformDefaults],
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let mut figment = Figment::from(Serialized::defaults(Root {
            besluitbron: Config::with_platforms(platforms),
        }));
        if let Some(file) = file {
            if !file.exists() {
                return Err(ConfigError::Invalid {
                    path: file.display().to_string(),
                    message: "the configuration file does not exist".to_owned(),
                });
            }
            figment = figment.merge(Toml::file_exact(file));
        }
        // figment reads the process environment itself; give it exactly the pairs asked
        // for, so tests are isolated from the machine's environment.
        let pairs: Vec<(String, String)> = env
            .into_iter()
            .filter(|(k, _)| k.starts_with("BesluitBron__"))
            .collect();
        let env_toml = env_as_toml(&pairs)?;
        figment = figment.merge(Toml::string(&env_toml));
        let root: Root = figment.extract().map_err(Box::new)?;
        root.besluitbron.known(platforms)?.validated()
    }

    /// The same, knowing the connectors' `platforms`, with earlier configurations'
    /// per-platform limits taken over by the services they belong to.
    fn known(mut self, platforms: &[PlatformDefaults]) -> Result<Config, ConfigError> {
        self.known = platforms.iter().map(|p| (p.platform, p.services)).collect();
        self.take_over_platform_limits()?;
        Ok(self)
    }

    /// Earlier configurations set a limit, and its queue's bounds, per platform
    /// (`Platforms.<id>.Limit`, `TextLimit`, `MaxQueued`, `MaxQueuedPerSession`,
    /// `MaxConcurrent`): each is taken over by the service it belongs to (the platform's
    /// first service; its second for `TextLimit`) where that platform alone calls the
    /// service, and refused with the new key named where another platform calls it too
    /// (their budget is shared: one platform's setting cannot say it).
    fn take_over_platform_limits(&mut self) -> Result<(), ConfigError> {
        let known = self.known.clone();
        for (platform, services) in &known {
            let Some(pc) = self.platforms.get_mut(platform.as_str()) else {
                continue;
            };
            let taken = (
                pc.limit.take(),
                pc.text_limit.take(),
                pc.max_queued.take(),
                pc.max_queued_per_session.take(),
                pc.max_concurrent.take(),
            );
            let (limit, text_limit, max_queued, per_session, max_concurrent) = taken;
            let path = |key: &str| format!("BesluitBron.Platforms.{platform}.{key}");
            let target = |key: &str, nth: usize| -> Result<String, ConfigError> {
                let Some(service) = services.get(nth) else {
                    return Err(invalid(
                        path(key),
                        &format!(
                            "{platform} calls one upstream service; its limits are `BesluitBron.Services.{}`",
                            services[0]
                        ),
                    ));
                };
                let sharing: Vec<&str> = known
                    .iter()
                    .filter(|(p, s)| p != platform && s.contains(service))
                    .map(|(p, _)| p.as_str())
                    .collect();
                if !sharing.is_empty() {
                    let new_key = if key == "TextLimit" { "Limit" } else { key };
                    return Err(invalid(
                        path(key),
                        &format!(
                            "{platform} shares {} with {}: set `BesluitBron.Services.{service}.{new_key}` instead",
                            service.display_name(),
                            sharing.join(", ")
                        ),
                    ));
                }
                Ok(service.as_str().to_owned())
            };
            if let Some(l) = limit {
                self.services.entry(target("Limit", 0)?).or_default().limit = Some(l);
            }
            if let Some(l) = text_limit {
                self.services.entry(target("TextLimit", 1)?).or_default().limit = Some(l);
            }
            if let Some(n) = max_queued {
                self.services.entry(target("MaxQueued", 0)?).or_default().max_queued = n;
            }
            if let Some(n) = per_session {
                self.services
                    .entry(target("MaxQueuedPerSession", 0)?)
                    .or_default()
                    .max_queued_per_session = n;
            }
            if let Some(n) = max_concurrent {
                self.services
                    .entry(target("MaxConcurrent", 0)?)
                    .or_default()
                    .max_concurrent = Some(n);
            }
        }
        Ok(())
    }

    /// Defaults, then the configuration file's `text` (TOML), then `env` as in
    /// [`Config::load`]: the fuzz target's entry point, and for tools that hold the file
    /// in memory.
    pub fn from_toml_str(
        platforms: &[PlatformDefaults],
        text: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let pairs: Vec<(String, String)> = env
            .into_iter()
            .filter(|(k, _)| k.starts_with("BesluitBron__"))
            .collect();
        let env_toml = env_as_toml(&pairs)?;
        let root: Root = Figment::from(Serialized::defaults(Root {
            besluitbron: Config::with_platforms(platforms),
        }))
        .merge(Toml::string(text))
        .merge(Toml::string(&env_toml))
        .extract()
        .map_err(Box::new)?;
        root.besluitbron.known(platforms)?.validated()
    }

    /// Checks every setting; used after flags changed a loaded configuration.
    pub fn validated(self) -> Result<Config, ConfigError> {
        let r = &self.recording;
        if r.max_file_bytes < 4096 {
            return Err(invalid(
                "BesluitBron.Recording.MaxFileBytes".into(),
                "must be at least 4096",
            ));
        }
        if r.max_files == 0 || r.queue_lines == 0 {
            return Err(invalid(
                "BesluitBron.Recording".into(),
                "MaxFiles and QueueLines must be at least 1",
            ));
        }
        self.check_platforms()?;
        for (name, l) in [
            ("Process", self.mcp_rate_limit.process),
            ("PerConnector", self.mcp_rate_limit.per_connector),
            ("PerAddress", self.mcp_rate_limit.per_address),
            ("PerSession", self.mcp_rate_limit.per_session),
            ("PerUser", self.mcp_rate_limit.per_user),
        ] {
            if l.requests_per_minute == 0 || l.burst == 0 {
                return Err(invalid(
                    format!("BesluitBron.McpRateLimit.{name}"),
                    "RequestsPerMinute and Burst must be above zero",
                ));
            }
        }
        let c = self.connections;
        for (name, value) in [
            ("HeaderReadTimeoutSecs", c.header_read_timeout_secs),
            ("BodyReadTimeoutSecs", c.body_read_timeout_secs),
            ("MaxConnections", c.max_connections as u64),
            ("MaxConnectionsPerAddress", c.max_connections_per_address as u64),
            ("MaxStreamsPerSession", c.max_streams_per_session as u64),
            ("MaxStreamsPerAddress", c.max_streams_per_address as u64),
        ] {
            if value == 0 {
                return Err(invalid(format!("BesluitBron.Connections.{name}"), "must be above zero"));
            }
        }
        if self.max_body_bytes < 1024 {
            return Err(invalid("BesluitBron.MaxBodyBytes".to_owned(), "must be at least 1024"));
        }
        if let Some(admin) = self.admin_listen {
            let internal = self.cluster.as_ref().map(|c| c.internal_listen);
            if admin == self.listen || Some(admin) == internal {
                return Err(invalid(
                    "BesluitBron.AdminListen".to_owned(),
                    "must differ from Listen and Cluster.InternalListen",
                ));
            }
        }
        self.auth.validate()?;
        self.check_cluster()?;
        Ok(self)
    }

    /// Each platform's settings: a known platform, an http(s) address, sizes above zero;
    /// each service's: a known service, limits above zero.
    fn check_platforms(&self) -> Result<(), ConfigError> {
        for (id, p) in &self.platforms {
            let path = format!("BesluitBron.Platforms.{id}");
            if !self.known.iter().any(|(k, _)| k.as_str() == id) {
                let known: Vec<&str> = self.known.iter().map(|(k, _)| k.as_str()).collect();
                let known = known.join(", ");
                return Err(invalid(
                    path,
                    &format!("unknown platform `{id}`: no connector serves it; one of {known}"),
                ));
            }
            let url = p.base_url.trim_end_matches('/');
            if !(url.starts_with("http://") || url.starts_with("https://")) || url.len() < 10 {
                return Err(invalid(format!("{path}.BaseUrl"), "must be an http(s) URL"));
            }
            if p.timeout_ms == 0 || p.attempts == 0 {
                return Err(invalid(path, "TimeoutMs and Attempts must be above zero"));
            }
            if p.max_body_bytes < 1024 {
                return Err(invalid(format!("{path}.MaxBodyBytes"), "must be at least 1024"));
            }
            // Earlier keys are taken over when a configuration is loaded; one set on a
            // configuration afterwards would be ignored, so it is refused.
            if p.limit.is_some()
                || p.text_limit.is_some()
                || p.max_queued.is_some()
                || p.max_queued_per_session.is_some()
                || p.max_concurrent.is_some()
            {
                return Err(invalid(
                    path,
                    "limits and queue bounds belong to a service: set `BesluitBron.Services.<service>`",
                ));
            }
        }
        for (id, s) in &self.services {
            let path = format!("BesluitBron.Services.{id}");
            if self.service_id(id).is_none() {
                let mut known: Vec<&str> = self
                    .known
                    .iter()
                    .flat_map(|(_, s)| s.iter().map(|s| s.as_str()))
                    .collect();
                known.sort_unstable();
                known.dedup();
                return Err(invalid(
                    path,
                    &format!(
                        "unknown service `{id}`: no connector calls it; one of {}",
                        known.join(", ")
                    ),
                ));
            }
            if s.max_concurrent == Some(0) {
                return Err(invalid(format!("{path}.MaxConcurrent"), "must be at least 1"));
            }
            if let Some(l) = s.limit {
                if l.capacity.is_zero() || !(l.window_secs > 0.0 && l.window_secs.is_finite()) {
                    return Err(invalid(
                        format!("{path}.Limit"),
                        "Capacity and WindowSecs must be above zero",
                    ));
                }
                if !(l.margin_secs >= 0.0 && l.margin_secs <= l.window_secs) {
                    return Err(invalid(
                        format!("{path}.Limit.MarginSecs"),
                        "must be between 0 and WindowSecs",
                    ));
                }
            }
        }
        Ok(())
    }

    /// The service with this id, if a connector calls it.
    fn service_id(&self, id: &str) -> Option<ServiceId> {
        self.known
            .iter()
            .flat_map(|(_, s)| s.iter())
            .copied()
            .find(|s| s.as_str() == id)
    }

    /// The settings of several replicas, when set.
    fn check_cluster(&self) -> Result<(), ConfigError> {
        if let Some(c) = &self.cluster {
            let path = |name: &str| format!("BesluitBron.Cluster.{name}");
            if !(c.redis.starts_with("redis://") || c.redis.starts_with("unix://")) {
                return Err(invalid(path("Redis"), "must be a redis:// or unix:// URL"));
            }
            if c.secret.chars().count() < 16 {
                return Err(invalid(path("Secret"), "must be at least 16 characters"));
            }
            let http = c.internal_url.starts_with("http://") || c.internal_url.starts_with("https://");
            if !c.internal_url.is_empty() && !http {
                return Err(invalid(path("InternalUrl"), "must be an http(s) URL"));
            }
            if c.internal_listen == self.listen {
                return Err(invalid(path("InternalListen"), "must differ from Listen"));
            }
            if !(1_000..=600_000).contains(&c.lease_ttl_ms) {
                return Err(invalid(path("LeaseTtlMs"), "must be between 1000 and 600000"));
            }
        }
        Ok(())
    }

    /// One platform's settings (the shared defaults for a platform neither a connector
    /// nor the file mentions: no address, no limit).
    pub fn platform(&self, p: PlatformId) -> PlatformConfig {
        self.platforms.get(p.as_str()).cloned().unwrap_or_default()
    }

    /// One service's settings (its declared defaults for a service neither a connector
    /// nor the file mentions).
    pub fn service(&self, s: ServiceId) -> ServiceConfig {
        self.services
            .get(s.as_str())
            .cloned()
            .unwrap_or_else(|| service_settings(s))
    }

    /// The budget groups of the known platforms: the platforms that share an upstream
    /// service, with those services (one path, one task, one lease each).
    pub fn budget_groups(&self) -> Result<Vec<besluitbron_core::BudgetGroup>, String> {
        besluitbron_core::budget_groups(&self.known)
    }

    /// The service `platform`'s calls go to unless they name another.
    pub fn first_service(&self, platform: PlatformId) -> Option<ServiceId> {
        self.known
            .iter()
            .find(|(p, _)| *p == platform)
            .and_then(|(_, s)| s.first().copied())
    }

    /// The scheduler for a service whose limit BesluitBron keeps, or `None`.
    pub fn scheduler(&self, s: ServiceId) -> Option<SchedulerConfig> {
        let sc = self.service(s);
        sc.limit.map(|l| lane_scheduler(&sc, l))
    }

    /// The Host values accepted.
    pub fn hosts(&self) -> Vec<String> {
        if !self.allowed_hosts.is_empty() {
            return self.allowed_hosts.clone();
        }
        vec!["localhost".to_owned(), "127.0.0.1".to_owned(), "::1".to_owned()]
    }
}

impl AuthConfig {
    /// With a mode other than off: an issuer (`https`, or `http` on a loopback host) and
    /// a resource (an absolute `http(s)` URI without a fragment).
    fn validate(&self) -> Result<(), ConfigError> {
        if self.mode == AuthMode::Off {
            return Ok(());
        }
        let invalid = |name: &str, message: &str| ConfigError::Invalid {
            path: format!("BesluitBron.Auth.{name}"),
            message: message.to_owned(),
        };
        let issuer = reqwest::Url::parse(&self.issuer)
            .map_err(|_| invalid("Issuer", "must be the authorization server's issuer URL"))?;
        match issuer.scheme() {
            "https" => {}
            "http" if is_loopback_host(&issuer) => {}
            "http" => return Err(invalid("Issuer", "must be https (http only on a loopback address)")),
            _ => return Err(invalid("Issuer", "must be an https URL")),
        }
        if issuer.query().is_some() || issuer.fragment().is_some() {
            return Err(invalid("Issuer", "must have no query or fragment"));
        }
        if self.resource.is_empty() {
            return Err(invalid(
                "Resource",
                "is required when Mode is not off: this server's canonical URI, e.g. https://host/mcp",
            ));
        }
        let resource = reqwest::Url::parse(&self.resource)
            .map_err(|_| invalid("Resource", "must be an absolute URI, e.g. https://host/mcp"))?;
        if !matches!(resource.scheme(), "https" | "http") || resource.fragment().is_some() {
            return Err(invalid("Resource", "must be an http(s) URI without a fragment"));
        }
        if self
            .scopes
            .iter()
            .any(|s| s.is_empty() || s.contains(char::is_whitespace))
        {
            return Err(invalid("Scopes", "each scope is one word"));
        }
        Ok(())
    }
}

/// True when `url`'s host is `localhost` or a loopback address.
fn is_loopback_host(url: &reqwest::Url) -> bool {
    let host = url.host_str().unwrap_or("").trim_matches(['[', ']']);
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The fair scheduler for one of a platform's limits, with its queue bounds.
fn lane_scheduler(pc: &ServiceConfig, l: LimitSetting) -> SchedulerConfig {
    let limit = LimitConfig::new(l.capacity, Duration::from_secs_f64(l.window_secs))
        .with_margin(Duration::from_secs_f64(l.margin_secs));
    let mut s = SchedulerConfig::with_limit(limit);
    s.max_queued = pc.max_queued.max(1);
    s.max_queued_per_session = pc.max_queued_per_session.max(1);
    s
}

/// `BesluitBron__A__B=v` pairs as TOML (`[BesluitBron.A] B = v`). Values that parse as
/// TOML values (numbers, booleans, arrays) keep their type; anything else is a string.
fn env_as_toml(pairs: &[(String, String)]) -> Result<String, ConfigError> {
    let mut root = toml_edit_free::Table::new();
    for (key, value) in pairs {
        let parts: Vec<&str> = key.split("__").collect();
        if parts.iter().any(|p| p.is_empty()) {
            return Err(ConfigError::Invalid {
                path: key.clone(),
                message: "empty part in the variable name".into(),
            });
        }
        root.insert(&parts, value);
    }
    Ok(root.render())
}

/// A tiny nested table of raw values, rendered as TOML for figment.
mod toml_edit_free {
    use std::collections::BTreeMap;

    #[derive(Default)]
    pub struct Table(BTreeMap<String, Node>);

    enum Node {
        Leaf(String),
        Table(Table),
    }

    impl Table {
        pub fn new() -> Table {
            Table::default()
        }

        pub fn insert(&mut self, path: &[&str], value: &str) {
            match path {
                [] => {}
                [last] => {
                    self.0.insert((*last).to_owned(), Node::Leaf(value.to_owned()));
                }
                [first, rest @ ..] => {
                    let node = self
                        .0
                        .entry((*first).to_owned())
                        .or_insert_with(|| Node::Table(Table::new()));
                    if let Node::Leaf(_) = node {
                        *node = Node::Table(Table::new());
                    }
                    if let Node::Table(t) = node {
                        t.insert(rest, value);
                    }
                }
            }
        }

        pub fn render(&self) -> String {
            let mut out = String::new();
            self.render_into("", &mut out);
            out
        }

        fn render_into(&self, prefix: &str, out: &mut String) {
            let mut header_written = prefix.is_empty();
            for (k, node) in &self.0 {
                if let Node::Leaf(v) = node {
                    if !header_written {
                        out.push_str(&format!("[{prefix}]\n"));
                        header_written = true;
                    }
                    out.push_str(&format!("{} = {}\n", quote_key(k), value_literal(v)));
                }
            }
            for (k, node) in &self.0 {
                if let Node::Table(t) = node {
                    let p = if prefix.is_empty() {
                        quote_key(k)
                    } else {
                        format!("{prefix}.{}", quote_key(k))
                    };
                    t.render_into(&p, out);
                }
            }
        }
    }

    fn quote_key(k: &str) -> String {
        if k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            k.to_owned()
        } else {
            format!("{k:?}")
        }
    }

    fn value_literal(v: &str) -> String {
        let probe = format!("x = {v}");
        if v.parse::<f64>().is_ok()
            || v == "true"
            || v == "false"
            || (v.starts_with('[') && toml::from_str::<toml::Table>(&probe).is_ok())
        {
            v.to_owned()
        } else {
            toml::Value::String(v.to_owned()).to_string()
        }
    }
}

/// A setting at `path` that BesluitBron refuses, and why.
fn invalid(path: String, message: &str) -> ConfigError {
    ConfigError::Invalid {
        path,
        message: message.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::platforms::{koop, obv, opentk};

    /// Two platforms as connectors would declare them, each calling a service of its own.
    const PLATFORMS: &[PlatformDefaults] = &[
        PlatformDefaults::new(obv::PLATFORM, "https://openbesluitvorming.nl", &[obv::SERVICE]),
        PlatformDefaults::new(opentk::PLATFORM, "https://tk.example/OData/v4/2.0", &[opentk::SERVICE]),
    ];

    /// Two platforms sharing KOOP's zoekservice and repository, and one with two
    /// services of its own.
    const SHARING: &[PlatformDefaults] = &[
        PlatformDefaults::new(
            crate::platforms::bwb::PLATFORM,
            "https://zoekservice.overheid.nl/sru/Search",
            &[koop::ZOEKSERVICE, koop::REPOSITORY],
        ),
        PlatformDefaults::new(
            crate::platforms::cvdr::PLATFORM,
            "https://zoekservice.overheid.nl/sru/Search",
            &[koop::ZOEKSERVICE, koop::REPOSITORY],
        ),
        PlatformDefaults::new(
            crate::platforms::ob::PLATFORM,
            "https://repository.overheid.nl/sru",
            &[koop::SRU, koop::PUBLICATIONS],
        ),
    ];

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
    }

    #[test]
    fn defaults_listen_on_loopback_and_take_the_connectors_platform_settings() {
        let c = Config::load(PLATFORMS, None, env(&[])).expect("defaults are valid");
        assert_eq!(c.listen.to_string(), "127.0.0.1:8080");
        assert_eq!(
            c.platform(crate::platforms::obv::PLATFORM).base_url,
            "https://openbesluitvorming.nl"
        );
        let limit = c.scheduler(obv::SERVICE).expect("obv keeps a limit");
        // 60 units per minute with a one-second margin: 59 units of burst, same rate.
        assert_eq!(limit.limit.capacity, Units::whole(59));
        assert_eq!(limit.limit.window, Duration::from_secs(59));
        assert!(c.scheduler(opentk::SERVICE).is_none());
        assert_eq!(c.service(opentk::SERVICE).max_concurrent, Some(3));
        assert_eq!(
            c.platform(crate::platforms::ob::PLATFORM),
            PlatformConfig::default(),
            "a platform no connector declares has no address and no limit"
        );
        let c = Config::load(
            PLATFORMS,
            None,
            env(&[("BesluitBron__Services__opentk__MaxConcurrent", "1")]),
        )
        .expect("valid");
        assert_eq!(c.service(opentk::SERVICE).max_concurrent, Some(1));
        let err = Config::load(
            PLATFORMS,
            None,
            env(&[("BesluitBron__Services__opentk__MaxConcurrent", "0")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("Services.opentk.MaxConcurrent"), "{err}");
    }

    #[test]
    fn an_earlier_platform_limit_is_taken_over_by_its_service_or_refused_with_the_new_key() {
        // One platform alone on its service: its old keys still work.
        let c = Config::load(
            PLATFORMS,
            None,
            env(&[
                ("BesluitBron__Platforms__obv__Limit__Capacity", "20"),
                ("BesluitBron__Platforms__obv__Limit__WindowSecs", "10"),
                ("BesluitBron__Platforms__obv__MaxQueuedPerSession", "8"),
                ("BesluitBron__Platforms__opentk__MaxConcurrent", "2"),
            ]),
        )
        .expect("earlier keys of a platform alone on its service");
        let obv_service = c.service(obv::SERVICE);
        assert_eq!(obv_service.limit.map(|l| l.capacity), Some(Units::whole(20)));
        assert_eq!(obv_service.max_queued_per_session, 8);
        assert_eq!(c.service(opentk::SERVICE).max_concurrent, Some(2));
        assert_eq!(c.platform(obv::PLATFORM).limit, None, "taken over, not kept twice");
        // `TextLimit` is the second service's limit.
        let c = Config::load(
            SHARING,
            None,
            env(&[
                ("BesluitBron__Platforms__ob__TextLimit__Capacity", "5"),
                ("BesluitBron__Platforms__ob__TextLimit__WindowSecs", "30"),
            ]),
        )
        .expect("ob alone calls its text host");
        assert_eq!(
            c.service(koop::PUBLICATIONS).limit.map(|l| l.capacity),
            Some(Units::whole(5))
        );
        // Two platforms on one service: one platform's key cannot say their shared budget.
        let err = Config::load(
            SHARING,
            None,
            env(&[
                ("BesluitBron__Platforms__bwb__Limit__Capacity", "5"),
                ("BesluitBron__Platforms__bwb__Limit__WindowSecs", "30"),
            ]),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("Platforms.bwb.Limit"), "{err}");
        assert!(err.contains("BesluitBron.Services.koop-zoekservice.Limit"), "{err}");
        assert!(err.contains("cvdr"), "{err}");
        // The new key sets the one budget both share.
        let c = Config::load(
            SHARING,
            None,
            env(&[
                ("BesluitBron__Services__koop-zoekservice__Limit__Capacity", "5"),
                ("BesluitBron__Services__koop-zoekservice__Limit__WindowSecs", "30"),
            ]),
        )
        .expect("the service's key");
        assert_eq!(
            c.service(koop::ZOEKSERVICE).limit.map(|l| l.capacity),
            Some(Units::whole(5))
        );
        let groups = c.budget_groups().expect("groups");
        assert_eq!(groups.len(), 2, "{groups:?}");
        assert_eq!(
            groups[0].platforms,
            [crate::platforms::bwb::PLATFORM, crate::platforms::cvdr::PLATFORM]
        );
        assert_eq!(groups[0].name(), "koop-zoekservice");
        // A service no connector calls is refused by name.
        let err = Config::load(
            SHARING,
            None,
            env(&[("BesluitBron__Services__koop-elsewhere__MaxQueued", "5")]),
        )
        .unwrap_err()
        .to_string();
        assert!(err.contains("koop-elsewhere"), "{err}");
    }

    #[test]
    fn auth_is_off_by_default_and_checked_when_on() {
        let c = Config::load(PLATFORMS, None, env(&[])).expect("defaults");
        assert_eq!(c.auth.mode, AuthMode::Off);
        assert_eq!(c.mcp_rate_limit.per_user, c.mcp_rate_limit.per_address);
        let c = Config::load(
            PLATFORMS,
            None,
            env(&[
                ("BesluitBron__Auth__Mode", "required"),
                ("BesluitBron__Auth__Issuer", "https://login.example/realms/x"),
                ("BesluitBron__Auth__Resource", "https://besluitbron.example/mcp"),
                ("BesluitBron__Auth__Scopes", r#"["besluitbron"]"#),
            ]),
        )
        .expect("a complete Auth block");
        assert_eq!(c.auth.mode, AuthMode::Required);
        assert_eq!(c.auth.scopes, ["besluitbron"]);
        for (pairs, path) in [
            (
                vec![
                    ("BesluitBron__Auth__Mode", "optional"),
                    ("BesluitBron__Auth__Issuer", "https://login.example"),
                ],
                "Auth.Resource",
            ),
            (
                vec![
                    ("BesluitBron__Auth__Mode", "required"),
                    ("BesluitBron__Auth__Issuer", "http://login.example"),
                    ("BesluitBron__Auth__Resource", "https://b.example/mcp"),
                ],
                "Auth.Issuer",
            ),
        ] {
            let err = Config::load(PLATFORMS, None, env(&pairs)).unwrap_err();
            assert!(err.to_string().contains(path), "{err}");
        }
        for loopback in [
            "http://127.0.0.1:9000",
            "http://localhost:9000/oidc",
            "http://[::1]:9000",
        ] {
            Config::load(
                PLATFORMS,
                None,
                env(&[
                    ("BesluitBron__Auth__Mode", "required"),
                    ("BesluitBron__Auth__Issuer", loopback),
                    ("BesluitBron__Auth__Resource", "http://127.0.0.1:8080/mcp"),
                ]),
            )
            .unwrap_or_else(|e| panic!("{loopback}: {e}"));
        }
        assert!(Config::load(PLATFORMS, None, env(&[("BesluitBron__Auth__Mode", "sometimes")])).is_err());
        assert!(Config::load(PLATFORMS, None, env(&[("BesluitBron__Auth__Audience", "x")])).is_err());
    }

    #[test]
    fn the_file_and_then_the_environment_override() {
        let dir = std::env::temp_dir().join(format!("besluitbron-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("c.toml");
        std::fs::write(
            &file,
            "[BesluitBron]\nListen = \"127.0.0.1:9000\"\n[BesluitBron.McpRateLimit.PerSession]\nRequestsPerMinute = 100\nBurst = 10\n[BesluitBron.Platforms.obv]\nBaseUrl = \"http://127.0.0.1:9001\"\nLimit = { Capacity = 7.5, WindowSecs = 30 }\n",
        )
        .unwrap();
        let c = Config::load(
            PLATFORMS,
            Some(&file),
            env(&[
                ("BesluitBron__McpRateLimit__PerSession__RequestsPerMinute", "1200"),
                ("BesluitBron__Sessions__MaxSessions", "5"),
                ("OTHER", "ignored"),
            ]),
        )
        .expect("valid");
        assert_eq!(c.listen.port(), 9000);
        assert_eq!(c.mcp_rate_limit.per_session.requests_per_minute, 1200);
        assert_eq!(c.mcp_rate_limit.per_session.burst, 10);
        assert_eq!(c.sessions.max_sessions, 5);
        assert_eq!(c.platform(obv::PLATFORM).base_url, "http://127.0.0.1:9001");
        let limit = c.service(obv::SERVICE).limit.expect("the file's limit, taken over");
        assert_eq!(limit.capacity, Units::from_milli(7500));
        assert_eq!(limit.margin_secs, 1.0, "an omitted margin is the default");
        assert_eq!(
            c.platform(opentk::PLATFORM).base_url,
            "https://tk.example/OData/v4/2.0",
            "others keep their connector's defaults"
        );
    }

    #[test]
    fn several_replicas_are_off_unless_the_cluster_section_is_set() {
        assert!(
            Config::load(PLATFORMS, None, env(&[]))
                .expect("defaults")
                .cluster
                .is_none()
        );
        let c = Config::load(
            PLATFORMS,
            None,
            env(&[
                ("BesluitBron__Cluster__Redis", "unix:///run/redis/redis.sock"),
                ("BesluitBron__Cluster__Secret", "0123456789abcdef"),
                ("BesluitBron__Cluster__InternalListen", "10.0.0.5:8090"),
            ]),
        )
        .expect("valid");
        let cluster = c.cluster.expect("configured");
        assert_eq!(cluster.internal_url(), "http://10.0.0.5:8090");
        assert_eq!(cluster.lease_ttl(), Duration::from_secs(5));
        for (key, value, path) in [
            ("BesluitBron__Cluster__Secret", "short", "Cluster.Secret"),
            ("BesluitBron__Cluster__Redis", "http://x", "Cluster.Redis"),
            ("BesluitBron__Cluster__LeaseTtlMs", "10", "Cluster.LeaseTtlMs"),
            (
                "BesluitBron__Cluster__InternalListen",
                "127.0.0.1:8080",
                "Cluster.InternalListen",
            ),
        ] {
            let mut pairs = vec![("BesluitBron__Cluster__Secret", "0123456789abcdef")];
            pairs.push((key, value));
            let err = Config::load(PLATFORMS, None, env(&pairs)).unwrap_err();
            assert!(err.to_string().contains(path), "{key}={value}: {err}");
        }
    }

    #[test]
    fn bad_settings_are_refused_with_their_path() {
        let err = Config::load(
            PLATFORMS,
            None,
            env(&[("BesluitBron__McpRateLimit__Process__Burst", "0")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("McpRateLimit.Process"), "{err}");
        let err = Config::load(
            PLATFORMS,
            None,
            env(&[("BesluitBron__Platforms__obv__BaseUrl", "ftp://x")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("Platforms.obv.BaseUrl"), "{err}");
        let err = Config::load(
            PLATFORMS,
            None,
            env(&[("BesluitBron__Services__obv__Limit__MarginSecs", "61")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("Services.obv.Limit.MarginSecs"), "{err}");
        let err = Config::load(
            PLATFORMS,
            None,
            env(&[("BesluitBron__Platforms__nope__BaseUrl", "http://127.0.0.1:1")]),
        )
        .unwrap_err();
        assert!(err.to_string().contains("unknown platform"), "{err}");
        let err = Config::load(PLATFORMS, None, env(&[("BesluitBron__Listen", "not an address")])).unwrap_err();
        assert!(matches!(err, ConfigError::Parse(_)), "{err}");
        let err = Config::load(PLATFORMS, None, env(&[("BesluitBron__Typo", "1")])).unwrap_err();
        assert!(err.to_string().contains("Typo"), "unknown settings are named: {err}");
    }
}
