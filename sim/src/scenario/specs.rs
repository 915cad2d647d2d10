//! What a scenario says of a platform and of an upstream service: the platform's entry
//! (`[[platform]]`: the services it calls, its latency, faults and failures, and limits
//! that speak for its first service, or its second's text limit), a service's entry
//! (`[[service]]`: what a service several platforms call enforces and what BesluitBron
//! keeps there), and the models they name (how a limit is enforced, how long an answer
//! takes, when a service throttles).
//!
//! Invariants: parsing is strict (unknown fields are errors); an entry says only what the
//! scenario wrote, its defaults are the table's (`sim/platforms.toml`), applied where a
//! run's services are made ([`super::RunServices`]).
//!
//! What this module does not do: decide which services a run has, or check that a
//! scenario's entries fit together (`Scenario::validate` and `RunServices` do).

use besluitbron_core::{PlatformId, ServiceId, Units};
use serde::Deserialize;

/// How a simulated platform enforces its limit of C units per W.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum LimitModel {
    /// A bucket of C refilled continuously at C per W (OpenBesluitvorming's model).
    #[default]
    TokenBucket,
    /// At most C units in any interval of length W.
    SlidingWindow,
    /// At most C units per aligned interval `[k·W, (k+1)·W)`.
    FixedWindow,
}

impl LimitModel {
    /// `token-bucket`, `sliding-window` or `fixed-window`.
    pub const fn as_str(self) -> &'static str {
        match self {
            LimitModel::TokenBucket => "token-bucket",
            LimitModel::SlidingWindow => "sliding-window",
            LimitModel::FixedWindow => "fixed-window",
        }
    }
}

/// How long a platform takes to answer one call.
#[derive(Clone, Copy, Debug, PartialEq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum LatencySpec {
    /// Always `ms` milliseconds.
    Fixed {
        /// The latency.
        ms: u64,
    },
    /// Uniform between `min_ms` and `max_ms` inclusive.
    Uniform {
        /// Shortest.
        min_ms: u64,
        /// Longest.
        max_ms: u64,
    },
    /// Log-normal with the given median and shape `sigma`, capped at `max_ms`.
    Lognormal {
        /// The median latency.
        median_ms: u64,
        /// The spread of `ln(latency)`.
        sigma: f64,
        /// A hard cap (a client time-out).
        max_ms: u64,
    },
}

impl Default for LatencySpec {
    fn default() -> LatencySpec {
        LatencySpec::Uniform {
            min_ms: 100,
            max_ms: 400,
        }
    }
}

/// A fault: from `from_ms` until `to_ms` the platform answers every call with 429 and a
/// Retry-After that covers the rest of the period (whole seconds, rounded up).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ThrottleSpec {
    /// Start of the throttled period.
    pub from_ms: u64,
    /// End of the throttled period (exclusive).
    pub to_ms: u64,
}

/// One simulated platform, as a scenario writes it.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PlatformSpec {
    /// Which platform.
    #[serde(deserialize_with = "crate::ids::deserialize")]
    pub id: PlatformId,
    /// The upstream services it calls: its first takes its calls, its second (if any)
    /// those with `op = "text"`; default the real platform's (`sim/platforms.toml`), else
    /// a service of its own id. The fields below that concern a limit speak for its first
    /// service (`text_*` for its second), and only where no other platform of the run
    /// calls that service: a shared service is set under `[[service]]`.
    #[serde(default, deserialize_with = "crate::ids::deserialize_services")]
    pub services: Option<Vec<ServiceId>>,
    /// C as its first service enforces it; default the real service's
    /// (`sim/platforms.toml`).
    pub capacity: Option<Units>,
    /// W as its first service enforces it, in seconds.
    pub window_s: Option<f64>,
    /// How its services enforce C per W (default a token bucket).
    pub model: Option<LimitModel>,
    /// C of its second service (its text host), as it enforces it and BesluitBron keeps it
    /// (a lane of its own: calls with `op = "text"`); default the real service's
    /// (`sim/platforms.toml`; Officiële Bekendmakingen's publications: 10 per 30 s).
    pub text_capacity: Option<Units>,
    /// W of its second service, in seconds.
    pub text_window_s: Option<f64>,
    /// C as BesluitBron keeps it locally; default: the platform's C.
    pub local_capacity: Option<Units>,
    /// W as BesluitBron keeps it locally, in seconds; default: the platform's W.
    pub local_window_s: Option<f64>,
    /// Answer latency.
    #[serde(default)]
    pub latency: LatencySpec,
    /// Throttled periods (429 with Retry-After).
    #[serde(default)]
    pub throttle: Vec<ThrottleSpec>,
    /// The scheduler's bound on waiting calls at this platform.
    pub max_queued: Option<usize>,
    /// The scheduler's bound on one session's waiting calls.
    pub max_queued_per_session: Option<usize>,
    /// When a quiet session's usage is forgotten, in seconds (R-L6: 1800).
    pub forget_after_s: Option<u64>,
    /// Lifetime of a buffered search answer, in milliseconds (default: the core's
    /// `PlatformCachePolicy::default()`, 10 minutes). Only used when calls carry keys.
    pub search_ttl_ms: Option<u64>,
    /// Probability that an accepted call fails (a 5xx after its latency). Failures are
    /// never buffered; with keys they reach the waiters of that flight only.
    pub fail_rate: Option<f64>,
    /// Whether such a failure is one BesluitBron tries again (a 5xx: the default, retried
    /// through the fair queue as the server does) or not (`false`: a time-out or an
    /// unreadable answer, reported at once).
    pub fail_retryable: Option<bool>,
    /// Whether answers carry `RateLimit-Remaining` and `RateLimit-Reset`, which
    /// BesluitBron feeds back to the platform's queue (token-bucket platforms only).
    /// Default: as the real platform does ([`states_its_budget_by_default`]).
    pub rate_limit_headers: Option<bool>,
}

/// Whether the real platform's first service answers with `RateLimit-Remaining` and
/// `RateLimit-Reset` (PLATFORMS.md: OpenBesluitvorming's alone): the scenario formats'
/// default for a platform that does not say (`rate_limit_headers`).
pub fn states_its_budget_by_default(id: PlatformId) -> bool {
    crate::ids::services_of(id)
        .first()
        .and_then(|s| crate::ids::known_service(*s))
        .is_some_and(|k| k.rate_limit_headers)
}

impl PlatformSpec {
    /// A platform with its documented defaults.
    pub fn default_for(id: PlatformId) -> PlatformSpec {
        PlatformSpec {
            id,
            services: None,
            capacity: None,
            window_s: None,
            model: None,
            text_capacity: None,
            text_window_s: None,
            local_capacity: None,
            local_window_s: None,
            latency: LatencySpec::default(),
            throttle: Vec::new(),
            max_queued: None,
            max_queued_per_session: None,
            forget_after_s: None,
            search_ttl_ms: None,
            fail_rate: None,
            fail_retryable: None,
            rate_limit_headers: None,
        }
    }

    /// Whether the answers of the platform's first service carry `RateLimit-Remaining`
    /// and `RateLimit-Reset`: as the scenario says, else as the real service does.
    pub fn states_its_budget(&self) -> bool {
        self.rate_limit_headers.unwrap_or_else(|| {
            self.service_ids()
                .first()
                .and_then(|s| crate::ids::known_service(*s))
                .is_some_and(|k| k.rate_limit_headers)
        })
    }
}

/// One upstream service, as a scenario writes it (`[[service]]`): what it enforces and
/// what BesluitBron keeps there, over the table's defaults.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServiceSpec {
    /// Which service.
    #[serde(deserialize_with = "crate::ids::deserialize_service")]
    pub id: ServiceId,
    /// C as the service enforces it; default the real service's (`sim/platforms.toml`).
    pub capacity: Option<Units>,
    /// W as it enforces it, in seconds.
    pub window_s: Option<f64>,
    /// How it enforces C per W (default a token bucket).
    pub model: Option<LimitModel>,
    /// C as BesluitBron keeps it locally; default: the service's C.
    pub local_capacity: Option<Units>,
    /// W as BesluitBron keeps it locally, in seconds; default: the service's W.
    pub local_window_s: Option<f64>,
    /// The scheduler's bound on waiting calls at this service.
    pub max_queued: Option<usize>,
    /// The scheduler's bound on one session's waiting calls.
    pub max_queued_per_session: Option<usize>,
    /// When a quiet session's usage is forgotten, in seconds (R-L6: 1800).
    pub forget_after_s: Option<u64>,
    /// Most calls queued or out at it at once (the rest wait in arrival order); default
    /// the real service's.
    pub max_in_flight: Option<usize>,
    /// Throttled periods (429 with Retry-After).
    #[serde(default)]
    pub throttle: Vec<ThrottleSpec>,
    /// Whether its answers carry `RateLimit-Remaining` and `RateLimit-Reset` (token-bucket
    /// services only); default as the real service does.
    pub rate_limit_headers: Option<bool>,
}

impl ServiceSpec {
    /// An entry for `id` that says nothing of its own.
    pub fn of(id: ServiceId) -> ServiceSpec {
        ServiceSpec {
            id,
            capacity: None,
            window_s: None,
            model: None,
            local_capacity: None,
            local_window_s: None,
            max_queued: None,
            max_queued_per_session: None,
            forget_after_s: None,
            max_in_flight: None,
            throttle: Vec::new(),
            rate_limit_headers: None,
        }
    }

    /// What is wrong with the entry, if anything.
    pub(super) fn invalid(&self) -> Option<String> {
        let id = self.id;
        for w in [self.window_s, self.local_window_s].into_iter().flatten() {
            if !(w.is_finite() && w > 0.0) {
                return Some(format!("service `{id}`: windows must be positive seconds"));
            }
        }
        if self.throttle.iter().any(|t| t.from_ms >= t.to_ms) {
            return Some(format!("service `{id}`: a throttle period must end after it starts"));
        }
        None
    }

    /// The service entry a platform's own fields make for its `k`-th service, and whether
    /// they say anything.
    pub(super) fn from_platform(p: &PlatformSpec, k: usize, id: ServiceId) -> (ServiceSpec, bool) {
        let mut s = ServiceSpec::of(id);
        s.model = p.model;
        if k == 0 {
            s.capacity = p.capacity;
            s.window_s = p.window_s;
            s.local_capacity = p.local_capacity;
            s.local_window_s = p.local_window_s;
            s.max_queued = p.max_queued;
            s.max_queued_per_session = p.max_queued_per_session;
            s.forget_after_s = p.forget_after_s;
            s.throttle.clone_from(&p.throttle);
            s.rate_limit_headers = p.rate_limit_headers;
        } else if k == 1 {
            s.capacity = p.text_capacity;
            s.window_s = p.text_window_s;
        }
        let says = s.capacity.is_some()
            || s.window_s.is_some()
            || s.model.is_some()
            || s.local_capacity.is_some()
            || s.local_window_s.is_some()
            || s.max_queued.is_some()
            || s.max_queued_per_session.is_some()
            || s.forget_after_s.is_some()
            || !s.throttle.is_empty()
            || s.rate_limit_headers.is_some();
        (s, says)
    }

    /// `self` with whatever `over` says instead.
    pub(super) fn under(self, over: &ServiceSpec) -> ServiceSpec {
        ServiceSpec {
            id: self.id,
            capacity: over.capacity.or(self.capacity),
            window_s: over.window_s.or(self.window_s),
            model: over.model.or(self.model),
            local_capacity: over.local_capacity.or(self.local_capacity),
            local_window_s: over.local_window_s.or(self.local_window_s),
            max_queued: over.max_queued.or(self.max_queued),
            max_queued_per_session: over.max_queued_per_session.or(self.max_queued_per_session),
            forget_after_s: over.forget_after_s.or(self.forget_after_s),
            max_in_flight: over.max_in_flight.or(self.max_in_flight),
            throttle: if over.throttle.is_empty() {
                self.throttle
            } else {
                over.throttle.clone()
            },
            rate_limit_headers: over.rate_limit_headers.or(self.rate_limit_headers),
        }
    }
}
