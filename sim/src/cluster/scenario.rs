//! A cluster scenario: replicas, their balancer, the lease engine's timing, the faults on a
//! schedule and the calls, read from TOML.

use std::path::Path;
use std::time::Duration;

use besluitbron_core::cluster::LeaseConfig;
use besluitbron_core::{PlatformId, ServiceId};
use serde::Deserialize;

use crate::scenario::{LatencySpec, states_its_budget_by_default};

/// How the load balancer spreads requests over the replicas that are up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Balancer {
    /// By a hash of the session (as on `Mcp-Session-Id`).
    Hash,
    /// In turn.
    RoundRobin,
    /// At random (seeded).
    Random,
}

/// A fault of a cluster run. "The owner" is whichever replica owns the platform then.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
pub enum ClusterFault {
    /// The owner dies (kill -9) and, optionally, starts again later (a new process).
    CrashOwner {
        /// When, in seconds.
        at_s: f64,
        /// When it starts again, after the crash.
        restart_after_s: Option<f64>,
    },
    /// The owner's process stops (SIGSTOP, a long GC pause) and resumes.
    PauseOwner {
        /// When.
        at_s: f64,
        /// How long.
        for_s: f64,
    },
    /// The owner shuts down gracefully (a rolling upgrade) and starts again later.
    ShutdownOwner {
        /// When.
        at_s: f64,
        /// When the new process starts, after the shutdown.
        restart_after_s: Option<f64>,
    },
    /// The engine restarts: every key and the checkpoint are lost, and it answers
    /// nothing for `down_s`.
    EngineRestart {
        /// When.
        at_s: f64,
        /// How long it is down.
        down_s: f64,
    },
    /// The engine loses the lease key (an eviction, a flush) and keeps running.
    KeyLoss {
        /// When.
        at_s: f64,
    },
    /// The engine holds every request (`CLIENT PAUSE`) and applies them afterwards;
    /// nothing expires meanwhile.
    EnginePause {
        /// When.
        at_s: f64,
        /// How long.
        for_s: f64,
    },
}

/// A cluster scenario (TOML, `sim/scenarios/cluster/`).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClusterScenario {
    /// One line.
    pub description: String,
    /// The root seed.
    pub seed: u64,
    /// Replicas.
    pub replicas: usize,
    /// Each replica's clock rate drift (ppm, + runs fast); one per replica.
    pub drift_ppm: Vec<i64>,
    /// Each replica's clock offset at the start (ms); missing: 0.
    #[serde(default)]
    pub offset_ms: Vec<u64>,
    /// The lease TTL.
    pub ttl_ms: u64,
    /// The margin m (also the bucket's margin).
    pub margin_ms: u64,
    /// The load balancer.
    pub balancer: Balancer,
    /// One way between replicas (a forward and its answer each take this).
    pub forward_ms: u64,
    /// One way to the lease engine.
    pub engine_ms: u64,
    /// The platform: its buffer policy and its keys (`obv` when left out). The limit of
    /// the service it searches (its first) is `capacity` per `window_s`.
    #[serde(default = "default_platform", deserialize_with = "crate::ids::deserialize")]
    pub platform: PlatformId,
    /// Platforms that search the same service and so share its budget, its fair queue and
    /// its owner among the replicas (one budget group, one lease): session `n` calls the
    /// `n mod k`-th of the `k` platforms `platform` and these make; none by default.
    #[serde(default, deserialize_with = "deserialize_platforms")]
    pub shared_with: Vec<PlatformId>,
    /// The service the calls go to, one every platform of the scenario calls; default
    /// `platform`'s first (its searches).
    #[serde(default, deserialize_with = "deserialize_service_option")]
    pub service: Option<ServiceId>,
    /// Whether its answers carry `RateLimit-Remaining` and `RateLimit-Reset`; default: as
    /// the real platform does ([`states_its_budget_by_default`]).
    #[serde(default)]
    pub rate_limit_headers: Option<bool>,
    /// The platform's limit: units per window.
    pub capacity: u64,
    /// The platform's window (s).
    pub window_s: u64,
    /// The platform's answer latency.
    pub latency: LatencySpec,
    /// Sessions, each a closed loop of calls.
    pub sessions: u32,
    /// Calls per session.
    pub calls_per_session: u32,
    /// A session's pause between an answer and its next call (ms, ± half, seeded).
    pub think_ms: u64,
    /// Sessions start within this many seconds.
    pub ramp_s: f64,
    /// Calls ask one of this many questions (uniformly): identical questions coalesce.
    pub key_pool: u32,
    /// A client gives up on a call after this many seconds.
    pub give_up_s: u64,
    /// Faults.
    #[serde(default)]
    pub faults: Vec<ClusterFault>,
    /// Between an owner's admission and its send (the connection's set-up), in ms.
    #[serde(default = "default_send_delay_ms")]
    pub send_delay_ms: u64,
    /// Scripted calls, besides the sessions' closed loops (`sessions` may be 0): each
    /// lands at its own replica and is asked once.
    #[serde(default)]
    pub calls: Vec<ScriptedCall>,
}

fn default_platform() -> PlatformId {
    // "obv" is a valid id: the table's first limited platform.
    crate::ids::platform("obv").unwrap_or_else(|e| panic!("{e}"))
}

fn default_send_delay_ms() -> u64 {
    5
}

/// A call of a cluster script.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ScriptedCall {
    /// When it reaches its replica, in ms.
    pub at_ms: u64,
    /// Its session (fairness), by name.
    pub session: String,
    /// The question it asks (`q = k<key>`): equal keys are identical requests.
    pub key: u64,
    /// The replica it lands at (and its client asks again at, after a replica's state
    /// was lost); left out, the scenario's load balancer picks one.
    #[serde(default)]
    pub replica: Option<usize>,
    /// The platform it asks (one of the scenario's); left out, the scenario's `platform`.
    #[serde(default, deserialize_with = "crate::ids::deserialize_option")]
    pub platform: Option<PlatformId>,
}

fn deserialize_service_option<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<ServiceId>, D::Error> {
    Option::<String>::deserialize(d)?
        .map(|text| crate::ids::service(&text).map_err(serde::de::Error::custom))
        .transpose()
}

fn deserialize_platforms<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<PlatformId>, D::Error> {
    Vec::<String>::deserialize(d)?
        .iter()
        .map(|text| crate::ids::platform(text).map_err(serde::de::Error::custom))
        .collect()
}

impl ClusterScenario {
    /// Parses a scenario.
    pub fn parse(text: &str) -> Result<ClusterScenario, String> {
        let s: ClusterScenario = toml::from_str(text).map_err(|e| e.to_string())?;
        if s.replicas == 0 || s.drift_ppm.len() != s.replicas {
            return Err("one drift per replica, at least one replica".to_owned());
        }
        if s.calls.iter().any(|c| c.replica.is_some_and(|r| r >= s.replicas)) {
            return Err("a scripted call lands at a replica that does not exist".to_owned());
        }
        s.service()?;
        if let Some(c) = s
            .calls
            .iter()
            .find(|c| c.platform.is_some_and(|p| !s.platforms().contains(&p)))
        {
            return Err(format!(
                "a scripted call asks {}, which is not among the scenario's platforms",
                c.platform.map_or_else(String::new, |p| p.to_string())
            ));
        }
        Ok(s)
    }

    /// The platforms of the budget group the replicas serve: `platform`, then
    /// `shared_with`.
    pub fn platforms(&self) -> Vec<PlatformId> {
        std::iter::once(self.platform)
            .chain(self.shared_with.iter().copied())
            .collect()
    }

    /// The service the calls go to (`service`, else `platform`'s first), whose budget the
    /// platforms share; an error when a platform does not call it, or is listed twice.
    pub fn service(&self) -> Result<ServiceId, String> {
        let platforms = self.platforms();
        let service = self
            .service
            .unwrap_or_else(|| crate::ids::services_of(self.platform)[0]);
        for (i, &p) in platforms.iter().enumerate() {
            if platforms[..i].contains(&p) {
                return Err(format!("platform `{p}` is listed twice"));
            }
            if !crate::ids::services_of(p).contains(&service) {
                return Err(format!(
                    "`{p}` does not call `{service}`: the replicas serve one budget group, platforms that call \
                     one service"
                ));
            }
        }
        Ok(service)
    }

    /// Loads canonical cluster scenario `name` from `sim/scenarios/cluster/`.
    pub fn canonical(name: &str) -> Result<ClusterScenario, String> {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scenarios/cluster")
            .join(format!("{name}.toml"));
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        ClusterScenario::parse(&text)
    }

    /// Whether the service's answers carry `RateLimit-Remaining` and `RateLimit-Reset`.
    pub fn states_its_budget(&self) -> bool {
        self.rate_limit_headers.unwrap_or_else(|| match self.service {
            Some(s) => crate::ids::known_service(s).is_some_and(|k| k.rate_limit_headers),
            None => states_its_budget_by_default(self.platform),
        })
    }

    pub(super) fn lease_config(&self) -> LeaseConfig {
        LeaseConfig {
            ttl: Duration::from_millis(self.ttl_ms),
            margin: Duration::from_millis(self.margin_ms),
        }
    }
}
