//! Simulated upstream services: they enforce their own limit, as the real ones do, and
//! count every call that the real service would have refused; and the hosts' answer
//! times ([`Host`]: a platform's calls at one of its services).
//!
//! A service counts a call at the instant it is sent (latency is the time until the
//! answer comes back, not a delay before the service counts it), whichever platform's it
//! is: platforms that call one service spend one budget there. A call that finds no room
//! is answered 429 with a Retry-After in whole seconds and costs nothing; so is every
//! call during a throttled period (a fault: the service shedding load for reasons of its
//! own). A call costing more than C is charged C (R-L5).
//!
//! The token-bucket model is the core's exact GCRA bucket
//! (`besluitbron_core::scheduler::Bucket`), the one the fake OpenBesluitvorming uses too:
//! a client whose own bucket is the same arithmetic never sees a 429 from rounding. A
//! service that sends `RateLimit-*` headers (as the scenario says; by default
//! OpenBesluitvorming's alone) reports, with each answer, the whole units left and the
//! seconds until its bucket is full, as the fake does. How long an answer takes is the
//! calling platform's ([`Host`]): the Basiswettenbestand's and the local regulations'
//! searches may take their own time at the one zoekservice.
//!
//! Invariants: units in any window are tracked exactly for the report, as calls come (the
//! service keeps the calls of its last window, never every call); a host draws a latency
//! only for a call its service accepted, so a service of one platform draws exactly what
//! that platform's host always drew.
//!
//! What this module does not do: decide when calls go (that is the policy's job), or
//! know what a service is like apart from what it is given: its limit, model, faults and
//! headers come from the scenario, its hosts' latency from the platforms.

use std::collections::VecDeque;
use std::time::Duration;

use besluitbron_core::scheduler::Bucket;
use besluitbron_core::{Instant, LimitConfig, ServiceId, Units};
use rand::RngExt;

use crate::rng::SimRng;
use crate::scenario::{AttemptOutcome, LatencySpec, LimitModel, RecordedAttempt, ThrottleSpec};

/// Why a platform answered 429.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// The call did not fit the platform's limit: a violation by the caller.
    OverLimit,
    /// The platform was throttling (a fault in the scenario).
    Throttled,
}

impl Refusal {
    /// `over-limit` or `throttled`, as the trace writes it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Refusal::OverLimit => "over-limit",
            Refusal::Throttled => "throttled",
        }
    }
}

/// A service's answer to a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Answer {
    /// Accepted; the answer arrives after `latency`.
    Ok {
        /// Time until the answer.
        latency: Duration,
        /// `RateLimit-Remaining` and `RateLimit-Reset`, when the platform sends them.
        remaining: Option<(Units, Duration)>,
    },
    /// 429 Too Many Requests.
    TooMany {
        /// Why.
        refusal: Refusal,
        /// The Retry-After header (whole seconds).
        retry_after: Duration,
    },
}

/// Counters of one service.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlatformCounters {
    /// Calls accepted.
    pub accepted_calls: u64,
    /// Units charged for them.
    pub accepted_units: Units,
    /// 429s because the call did not fit the limit.
    pub over_limit: u64,
    /// Of the calls that did not fit, those within one window of a restart of the server's
    /// process (a recording's): its new process starts with a full bucket while the
    /// service's still holds what the old one spent, which no scheduler can know. Counted
    /// here, not in `over_limit`.
    pub after_restart: u64,
    /// 429s during a throttled period.
    pub throttled: u64,
    /// Recorded successes this model's limit would have refused: the real platform let
    /// them through (a restarted server's fresh bucket spends what the platform still
    /// had, which the platform may count more leniently than this model).
    pub beyond_model: u64,
}

/// How long one platform's calls at one service take to answer: its latency model and the
/// stream it draws from.
#[derive(Debug)]
pub struct Host {
    latency: LatencySpec,
    rng: SimRng,
}

impl Host {
    /// A host answering after `latency`, drawn from `rng`.
    pub fn new(latency: LatencySpec, rng: SimRng) -> Host {
        Host { latency, rng }
    }

    /// The next answer's latency.
    fn draw(&mut self) -> Duration {
        let ms = match self.latency {
            LatencySpec::Fixed { ms } => return Duration::from_millis(ms),
            LatencySpec::Uniform { min_ms, max_ms } => {
                return Duration::from_millis(self.rng.random_range(min_ms..=max_ms));
            }
            LatencySpec::Lognormal {
                median_ms,
                sigma,
                max_ms,
            } => {
                // Box–Muller: one standard normal from two uniforms in (0, 1].
                let u1: f64 = 1.0 - self.rng.random::<f64>();
                let u2: f64 = self.rng.random::<f64>();
                let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
                (median_ms as f64 * (sigma * z).exp()).min(max_ms as f64)
            }
        };
        Duration::from_micros((ms * 1000.0).round() as u64)
    }
}

/// One simulated upstream service.
#[derive(Debug)]
pub struct SimService {
    /// Which service.
    pub id: ServiceId,
    /// The enforced limit, `None` when the service enforces none.
    pub limit: Option<LimitConfig>,
    /// How it is enforced.
    pub model: LimitModel,
    throttle: Vec<ThrottleSpec>,
    /// The token bucket (token-bucket model with a limit).
    bucket: Option<Bucket>,
    /// Whether answers carry `RateLimit-Remaining` and `RateLimit-Reset`.
    rate_limit_headers: bool,
    /// Windows: accepted calls still inside the last W (sliding) or the current window (fixed).
    recent: VecDeque<(Instant, Units)>,
    recent_units: Units,
    /// Accepted calls within the last W of the latest (W the enforced window), for the
    /// largest-window figure, kept as calls come: they come in time order.
    last_window: VecDeque<(Instant, Units)>,
    last_window_units: Units,
    /// The most units accepted within any interval of length W so far.
    max_in_window: Units,
    /// Until when a refusal as over the limit is a restart's ([`SimService::restarted`]).
    restart_debt_until: Option<Instant>,
    /// The counters.
    pub counters: PlatformCounters,
}

impl SimService {
    /// A service with the given limit, model and faults.
    pub fn new(
        id: ServiceId,
        limit: Option<LimitConfig>,
        model: LimitModel,
        throttle: Vec<ThrottleSpec>,
    ) -> SimService {
        SimService {
            id,
            limit,
            model,
            throttle,
            bucket: limit.filter(|_| model == LimitModel::TokenBucket).map(Bucket::new),
            rate_limit_headers: false,
            recent: VecDeque::new(),
            recent_units: Units::ZERO,
            last_window: VecDeque::new(),
            last_window_units: Units::ZERO,
            max_in_window: Units::ZERO,
            restart_debt_until: None,
            counters: PlatformCounters::default(),
        }
    }

    /// Receives a call of `cost` units at `now` from `host`, whose latency an accepted
    /// call's answer takes.
    pub fn receive(&mut self, now: Instant, cost: Units, host: &mut Host) -> Answer {
        if let Some(t) = self.throttle.iter().find(|t| {
            let n = now.as_millis();
            t.from_ms <= n && n < t.to_ms
        }) {
            self.counters.throttled += 1;
            let left_ns = Instant::from_millis(t.to_ms).as_nanos() - now.as_nanos();
            return Answer::TooMany {
                refusal: Refusal::Throttled,
                retry_after: whole_seconds_up(left_ns),
            };
        }
        let charged = match self.limit {
            Some(l) => cost.min(l.capacity),
            None => cost,
        };
        if let Some(wait_ns) = self.room_wait_ns(now, charged) {
            if self.in_restart_debt(now) {
                self.counters.after_restart += 1;
            } else {
                self.counters.over_limit += 1;
            }
            return Answer::TooMany {
                refusal: Refusal::OverLimit,
                retry_after: whole_seconds_up(wait_ns),
            };
        }
        self.take(now, charged);
        self.counters.accepted_calls += 1;
        self.counters.accepted_units += charged;
        self.note_accepted(now, charged);
        let remaining = match (&self.bucket, self.rate_limit_headers) {
            (Some(b), true) => Some((
                Units::whole(b.tokens(now).as_milli() / 1000),
                whole_seconds_up_or_zero(b.full_at().saturating_since(now).as_nanos()),
            )),
            _ => None,
        };
        Answer::Ok {
            latency: host.draw(),
            remaining,
        }
    }

    /// Receives a call whose answer a recording gives: a recorded refusal is the
    /// platform's own (as a throttled period: charged nothing, Retry-After in whole
    /// seconds, at least one); a recorded success is charged as [`SimService::receive`]
    /// charges and answered after the recorded latency, also where this model's limit
    /// would have refused it ([`PlatformCounters::beyond_model`]).
    pub fn receive_recorded(
        &mut self,
        now: Instant,
        cost: Units,
        host: &mut Host,
        recorded: &RecordedAttempt,
    ) -> Answer {
        if recorded.outcome == AttemptOutcome::RateLimited {
            self.counters.throttled += 1;
            let ms = recorded.retry_after_ms.unwrap_or(1000).max(1);
            return Answer::TooMany {
                refusal: Refusal::Throttled,
                retry_after: whole_seconds_up(ms.saturating_mul(1_000_000)),
            };
        }
        let answer = match self.receive(now, cost, host) {
            // A recorded success is one: the platform's own limit let it through.
            Answer::TooMany {
                refusal: Refusal::OverLimit,
                ..
            } => {
                if self.in_restart_debt(now) {
                    self.counters.after_restart -= 1;
                } else {
                    self.counters.over_limit -= 1;
                }
                self.counters.beyond_model += 1;
                let charged = self.limit.map_or(cost, |l| cost.min(l.capacity));
                self.take(now, charged);
                self.counters.accepted_calls += 1;
                self.counters.accepted_units += charged;
                self.note_accepted(now, charged);
                Answer::Ok {
                    latency: Duration::ZERO,
                    remaining: None,
                }
            }
            other => other,
        };
        match answer {
            // What the platform said of its budget then, where the recording has it (the
            // server lowered its bucket to it); else this model's own.
            Answer::Ok { remaining, .. } => Answer::Ok {
                latency: Duration::from_millis(recorded.latency_ms),
                remaining: match (recorded.remaining, remaining) {
                    (Some(r), model) => match r.reset_ms {
                        Some(ms) => Some((r.units, Duration::from_millis(ms))),
                        None => model.map(|(_, reset)| (r.units, reset)),
                    },
                    (None, model) => model,
                },
            },
            refused => refused,
        }
    }

    /// Makes answers carry `RateLimit-Remaining` and `RateLimit-Reset` (token-bucket
    /// services only); which services do is the scenario's to say
    /// ([`RunService::states_its_budget`](crate::scenario::RunService::states_its_budget)).
    pub fn with_rate_limit_headers(mut self, on: bool) -> SimService {
        self.rate_limit_headers = on;
        self
    }

    /// The server's process restarted at `now` (a recording says so): for one window its new
    /// bucket may promise what this service no longer has, so a call refused as over the
    /// limit meanwhile is counted as the restart's ([`PlatformCounters::after_restart`]).
    pub fn restarted(&mut self, now: Instant) {
        if let Some(limit) = self.limit {
            self.restart_debt_until = Some(now + limit.window);
        }
    }

    fn in_restart_debt(&self, now: Instant) -> bool {
        self.restart_debt_until.is_some_and(|until| now < until)
    }

    /// `None` when `charged` fits at `now`, else the time until it would.
    fn room_wait_ns(&mut self, now: Instant, charged: Units) -> Option<u64> {
        let limit = self.limit?;
        let window_ns = besluitbron_core::time::duration_nanos(limit.window);
        match self.model {
            LimitModel::TokenBucket => {
                let fits_at = self.bucket.as_ref()?.earliest_fit(charged);
                (fits_at > now).then(|| fits_at.as_nanos() - now.as_nanos())
            }
            LimitModel::SlidingWindow => {
                while let Some(&(at, u)) = self.recent.front() {
                    if at.as_nanos() + window_ns > now.as_nanos() {
                        break;
                    }
                    self.recent.pop_front();
                    self.recent_units = self.recent_units - u;
                }
                if self.recent_units + charged <= limit.capacity {
                    return None;
                }
                // Room comes back as the oldest calls leave the window.
                let mut freed = Units::ZERO;
                for &(at, u) in &self.recent {
                    freed += u;
                    if self.recent_units - freed + charged <= limit.capacity {
                        return Some(at.as_nanos() + window_ns - now.as_nanos());
                    }
                }
                Some(window_ns)
            }
            LimitModel::FixedWindow => {
                let window_start = now.as_nanos() / window_ns * window_ns;
                while let Some(&(at, u)) = self.recent.front() {
                    if at.as_nanos() >= window_start {
                        break;
                    }
                    self.recent.pop_front();
                    self.recent_units = self.recent_units - u;
                }
                if self.recent_units + charged <= limit.capacity {
                    return None;
                }
                Some(window_start + window_ns - now.as_nanos())
            }
        }
    }

    fn take(&mut self, now: Instant, charged: Units) {
        if self.limit.is_none() {
            return;
        }
        match self.model {
            LimitModel::TokenBucket => {
                if let Some(b) = self.bucket.as_mut() {
                    b.debit(now, charged);
                }
            }
            LimitModel::SlidingWindow | LimitModel::FixedWindow => {
                self.recent.push_back((now, charged));
                self.recent_units += charged;
            }
        }
    }

    /// An accepted call of `charged` units at `now`: the largest-window figure moves.
    fn note_accepted(&mut self, now: Instant, charged: Units) {
        let Some(limit) = self.limit else { return };
        let window_ns = besluitbron_core::time::duration_nanos(limit.window);
        self.last_window.push_back((now, charged));
        self.last_window_units += charged;
        while let Some(&(at, u)) = self.last_window.front() {
            if at.as_nanos() + window_ns > now.as_nanos() {
                break;
            }
            self.last_window.pop_front();
            self.last_window_units = self.last_window_units - u;
        }
        self.max_in_window = self.max_in_window.max(self.last_window_units);
    }

    /// The most units accepted within any interval of the enforced window's length
    /// (sliding), zero for a service without a limit: kept as calls come, so no list of
    /// accepted calls is kept.
    pub fn max_units_in_window(&self) -> Units {
        self.max_in_window
    }
}

/// `RateLimit-Reset`: whole seconds, rounded up (zero when full).
fn whole_seconds_up_or_zero(ns: u128) -> Duration {
    Duration::from_secs(u64::try_from(ns.div_ceil(1_000_000_000)).unwrap_or(u64::MAX))
}

/// A Retry-After header: whole seconds, rounded up, at least one.
fn whole_seconds_up(ns: u64) -> Duration {
    Duration::from_secs(ns.div_ceil(1_000_000_000).max(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rng::{Component, sim_rng};

    fn platform(model: LimitModel) -> SimService {
        SimService::new(
            crate::ids::service("obv").unwrap(),
            Some(LimitConfig::new(Units::whole(2), Duration::from_secs(2))),
            model,
            Vec::new(),
        )
    }

    fn accepted(p: &mut SimService, ms: u64) -> bool {
        let mut host = Host::new(LatencySpec::Fixed { ms: 10 }, sim_rng(1, Component::Latency(1)));
        matches!(
            p.receive(Instant::from_millis(ms), Units::ONE, &mut host),
            Answer::Ok { .. }
        )
    }

    #[test]
    fn token_bucket_refills_continuously() {
        let mut p = platform(LimitModel::TokenBucket);
        assert!(accepted(&mut p, 0) && accepted(&mut p, 0));
        assert!(!accepted(&mut p, 999));
        assert!(accepted(&mut p, 1000));
        assert_eq!(p.counters.over_limit, 1);
    }

    #[test]
    fn sliding_window_counts_the_last_w() {
        let mut p = platform(LimitModel::SlidingWindow);
        assert!(accepted(&mut p, 0) && accepted(&mut p, 1500));
        assert!(!accepted(&mut p, 1999));
        assert!(accepted(&mut p, 2000));
        assert!(!accepted(&mut p, 3000));
        assert_eq!(p.max_units_in_window(), Units::whole(2));
    }

    #[test]
    fn fixed_window_resets_at_the_boundary() {
        let mut p = platform(LimitModel::FixedWindow);
        assert!(accepted(&mut p, 1500) && accepted(&mut p, 1999));
        assert!(accepted(&mut p, 2000) && accepted(&mut p, 2001));
        // Four units within 502 ms: what a fixed window allows at its edge.
        assert_eq!(p.max_units_in_window(), Units::whole(4));
        assert!(!accepted(&mut p, 3999));
    }
}
