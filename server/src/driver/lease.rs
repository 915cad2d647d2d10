//! One task per budget (a budget group: the platforms sharing upstream services, named
//! by its first service) keeps this replica's lease on it in Redis, driving the core
//! [`Lease`] (the handover rules): `poll_request` becomes a Redis command, its answer
//! goes back with `on_answer`, `poll_timeout` wakes the task, and `poll_event` is told
//! to the group's task ([`Ownership`]). One owner per budget across replicas: the
//! platforms calling one service are owned together, so its budget is spent in one place.
//!
//! ```text
//! key   besluitbron:lease:<budget>
//! value <replica>-<token> <internal URL>       (a fresh token for every acquisition)
//! acquire  SET key value NX PX ttl             (refused: PTTL key, to retry when it runs out)
//! renew    if GET key == value then PEXPIRE key ttl          (a compare-value script)
//! release  if GET key == value then DEL key                  (a compare-value script)
//! ```
//!
//! The group's task asks the same [`Lease`] (shared, [`LeaseGate`]) whether it may
//! admit and send, by this replica's own monotonic clock ([`Clock`]); Redis' clock is
//! never relied on for the platforms' safety. Every engine call is bounded by the
//! engine's time-outs and counts as [`LeaseAnswer::Unreachable`] when it fails.
//!
//! The owner writes the sessions' usage now and then to `besluitbron:usage:<budget>`;
//! a new owner starts from it (fairness only: the bucket always starts empty).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use besluitbron_core::cluster::{LeaseAnswer, LeaseCall, LeaseConfig, LeaseEvent, LeaseRequest, UsageCheckpoint};
use besluitbron_core::{PlatformId, SessionKey, Units};
use tokio_util::sync::CancellationToken;

use super::{LeaseGate, Ownership, PlatformHandle};
use crate::clock::Clock;
use crate::engine::Engine;
use crate::metrics::{LeaseLabels, Metrics, PlatformLabel};

/// Renews the lease if it still holds this acquisition's value.
const RENEW: &str =
    r"if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end";

/// Deletes the lease if it still holds this acquisition's value (it is given the TTL as
/// `ARGV[2]` too, as [`RENEW`] is, and does not read it).
const RELEASE: &str =
    r"if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/// How long a usage checkpoint is kept in Redis.
const CHECKPOINT_KEEP: Duration = Duration::from_secs(600);

/// The lease's timing for a TTL: the margin m is 1 s, or a quarter of the TTL when the
/// TTL is short (so `TTL − m` always outlasts the renewal period `TTL / 3`).
pub fn lease_config(ttl: Duration) -> LeaseConfig {
    LeaseConfig {
        ttl,
        margin: Duration::from_secs(1).min(ttl / 4),
    }
}

/// The Redis key of a budget's lease (its budget group's name).
pub fn lease_key(budget: &str) -> String {
    format!("besluitbron:lease:{budget}")
}

/// The Redis key of a budget's usage checkpoint.
pub fn usage_key(budget: &str) -> String {
    format!("besluitbron:usage:{budget}")
}

/// The internal URL in a lease's value (`<token> <url>`).
pub fn owner_url(value: &str) -> Option<&str> {
    value.split_once(' ').map(|(_, url)| url).filter(|u| !u.is_empty())
}

/// What one lease task needs.
pub struct LeaseTask {
    /// The budget group's name (its first service's id): the lease's key.
    pub budget: &'static str,
    /// The group's platforms, each told [`LeaseTask::on_change`] of a change.
    pub platforms: Vec<PlatformId>,
    /// The engine.
    pub engine: Engine,
    /// The lease, shared with the group's task.
    pub gate: LeaseGate,
    /// A handle of the group's task, told of every change.
    pub handle: PlatformHandle,
    /// This replica's clock.
    pub clock: Clock,
    /// Metrics.
    pub metrics: std::sync::Arc<Metrics>,
    /// This replica's id (unique per process start).
    pub replica: String,
    /// This replica's internal URL.
    pub url: String,
    /// Cancelled for a graceful shutdown: hand the lease over.
    pub shutdown: CancellationToken,
    /// Called when the lease changes hands as this replica sees it (the owner cache).
    pub on_change: std::sync::Arc<dyn Fn(PlatformId) + Send + Sync>,
}

type Asked = Pin<Box<dyn Future<Output = (u64, LeaseAnswer)> + Send>>;

impl LeaseTask {
    /// Drives the lease until it is stopped (after a graceful shutdown's release).
    pub async fn run(self) {
        let config = self.gate.lock().expect("lease lock").config();
        let mut pending: Option<Asked> = None;
        let mut shutting = false;
        let mut checkpoint_at: Option<tokio::time::Instant> = None;
        self.metrics
            .platform_owned
            .get_or_create(&PlatformLabel { platform: self.budget })
            .set(0);
        loop {
            let now = self.clock.now();
            if pending.is_none() {
                let request = self.gate.lock().expect("lease lock").poll_request(now);
                if let Some(request) = request {
                    pending = Some(Box::pin(ask(
                        self.engine.clone(),
                        self.budget,
                        self.value(request.token),
                        request,
                        config.ttl,
                    )));
                }
            }
            loop {
                let event = self.gate.lock().expect("lease lock").poll_event();
                let Some(event) = event else { break };
                if self.on_event(event).await {
                    return;
                }
                if matches!(event, LeaseEvent::StartAdmitting { .. }) {
                    checkpoint_at = Some(tokio::time::Instant::now() + config.ttl);
                }
                if matches!(event, LeaseEvent::Lost { .. } | LeaseEvent::HandingOver { .. }) {
                    checkpoint_at = None;
                }
            }
            let wake = self
                .gate
                .lock()
                .expect("lease lock")
                .poll_timeout()
                .map(|at| self.clock.to_tokio(at));
            tokio::select! {
                biased;
                () = self.shutdown.cancelled(), if !shutting => {
                    shutting = true;
                    self.gate.lock().expect("lease lock").shutdown(self.clock.now());
                }
                (id, answer) = async {
                    match pending.as_mut() {
                        Some(asked) => asked.await,
                        None => std::future::pending().await,
                    }
                } => {
                    pending = None;
                    self.gate.lock().expect("lease lock").on_answer(self.clock.now(), id, answer);
                }
                () = sleep_until(wake) => {
                    self.gate.lock().expect("lease lock").handle_timeout(self.clock.now());
                }
                () = sleep_until(checkpoint_at) => {
                    checkpoint_at = Some(tokio::time::Instant::now() + config.ttl);
                    self.write_checkpoint();
                }
            }
        }
    }

    fn value(&self, token: u64) -> String {
        format!("{}-{token} {}", self.replica, self.url)
    }

    /// Acts on a lease event; true when the lease is stopped.
    async fn on_event(&self, event: LeaseEvent) -> bool {
        let budget = self.budget;
        let change = |change: &'static str| {
            self.metrics
                .lease_changes
                .get_or_create(&LeaseLabels {
                    platform: budget,
                    change,
                })
                .inc();
        };
        let owned = |v: i64| {
            self.metrics
                .platform_owned
                .get_or_create(&PlatformLabel { platform: budget })
                .set(v);
        };
        let changed = || {
            for &p in &self.platforms {
                (self.on_change)(p);
            }
        };
        match event {
            LeaseEvent::Acquired { epoch, .. } => {
                tracing::info!(budget, epoch, "lease taken; admitting after TTL + m");
                change("acquired");
                changed();
            }
            LeaseEvent::StartAdmitting { epoch } => {
                let checkpoint = read_checkpoint(&self.engine, budget).await;
                tracing::info!(budget, epoch, restored = checkpoint.is_some(), "owner: admitting");
                self.handle.ownership(Ownership::Start { epoch, checkpoint });
                change("admitting");
                owned(1);
            }
            LeaseEvent::Lost { epoch, was_admitting } => {
                tracing::warn!(budget, epoch, was_admitting, "lease lost: no more admissions");
                self.handle.ownership(Ownership::End);
                change("lost");
                owned(0);
                changed();
            }
            LeaseEvent::HandingOver { epoch } => {
                tracing::info!(budget, epoch, "shutdown: handing the lease over");
                self.handle.ownership(Ownership::End);
                change("handed_over");
                owned(0);
            }
            LeaseEvent::Stopped => {
                self.handle.ownership(Ownership::End);
                owned(0);
                changed();
                return true;
            }
        }
        false
    }

    /// Writes the sessions' usage for a next owner, in the background (fairness only; a
    /// failed write is a next owner starting from less).
    fn write_checkpoint(&self) {
        let (engine, handle, budget) = (self.engine.clone(), self.handle.clone(), self.budget);
        tokio::spawn(async move {
            let Some(usage) = handle.usage_checkpoint().await else {
                return;
            };
            // A checkpoint that does not encode is not written (a next owner starts from
            // the last one, or none), never an empty one.
            let text = match encode_checkpoint(&usage) {
                Ok(text) => text,
                Err(error) => {
                    tracing::warn!(budget, %error, "usage checkpoint not encoded");
                    return;
                }
            };
            let written = async {
                let mut c = engine.connection().await?;
                let keep = u64::try_from(CHECKPOINT_KEEP.as_millis()).unwrap_or(u64::MAX);
                let _: () = redis::cmd("SET")
                    .arg(usage_key(budget))
                    .arg(text)
                    .arg("PX")
                    .arg(keep)
                    .query_async(&mut c)
                    .await?;
                Ok::<(), crate::engine::EngineError>(())
            };
            if let Err(error) = written.await {
                tracing::debug!(budget, %error, "usage checkpoint not written");
            }
        });
    }
}

/// The scripts, hashed once (a renewal every TTL/3 would hash its script anew).
static RENEW_SCRIPT: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| redis::Script::new(RENEW));
static RELEASE_SCRIPT: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| redis::Script::new(RELEASE));

/// One lease request to Redis, and its answer.
async fn ask(
    engine: Engine,
    budget: &'static str,
    value: String,
    request: LeaseRequest,
    ttl: Duration,
) -> (u64, LeaseAnswer) {
    let ttl_ms = u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX);
    let key = lease_key(budget);
    let asked = async {
        let mut c = engine.connection().await?;
        let answer = match request.call {
            LeaseCall::Acquire => {
                let set: Option<String> = redis::cmd("SET")
                    .arg(&key)
                    .arg(&value)
                    .arg("NX")
                    .arg("PX")
                    .arg(ttl_ms)
                    .query_async(&mut c)
                    .await?;
                if set.is_some() {
                    LeaseAnswer::Granted
                } else {
                    let left: i64 = redis::cmd("PTTL").arg(&key).query_async(&mut c).await?;
                    match u64::try_from(left) {
                        Ok(ms) if ms > 0 => LeaseAnswer::HeldFor(Duration::from_millis(ms)),
                        _ => LeaseAnswer::Refused,
                    }
                }
            }
            // Both compare the value first: only the holder of this acquisition renews or
            // releases it.
            LeaseCall::Renew | LeaseCall::Release => {
                let script = if request.call == LeaseCall::Renew {
                    &RENEW_SCRIPT
                } else {
                    &RELEASE_SCRIPT
                };
                let done: i64 = script.key(&key).arg(&value).arg(ttl_ms).invoke_async(&mut c).await?;
                if done == 1 {
                    LeaseAnswer::Granted
                } else {
                    LeaseAnswer::Refused
                }
            }
        };
        Ok::<LeaseAnswer, crate::engine::EngineError>(answer)
    };
    // The engine's own time-outs bound each command; this bounds the whole exchange.
    let bound = crate::engine::CONNECT_TIMEOUT * 2 + crate::engine::RESPONSE_TIMEOUT * 2;
    let answer = match tokio::time::timeout(bound, asked).await {
        Ok(Ok(answer)) => answer,
        Ok(Err(error)) => {
            tracing::debug!(budget, %error, call = ?request.call, "lease request failed");
            LeaseAnswer::Unreachable
        }
        Err(_) => LeaseAnswer::Unreachable,
    };
    (request.id, answer)
}

async fn read_checkpoint(engine: &Engine, budget: &str) -> Option<UsageCheckpoint> {
    let read = async {
        let mut c = engine.connection().await?;
        let text: Option<String> = redis::cmd("GET").arg(usage_key(budget)).query_async(&mut c).await?;
        Ok::<Option<String>, crate::engine::EngineError>(text)
    };
    let text = tokio::time::timeout(crate::engine::RESPONSE_TIMEOUT * 2, read)
        .await
        .ok()?
        .ok()??;
    decode_checkpoint(&text)
}

/// A checkpoint as JSON: per lane, `[session, milli-units]` pairs; the system session
/// as `null`.
pub fn encode_checkpoint(usage: &UsageCheckpoint) -> Result<String, serde_json::Error> {
    let lanes: Vec<Vec<(Option<&str>, u64)>> = usage
        .lanes
        .iter()
        .map(|lane| {
            lane.iter()
                .map(|(s, u)| {
                    let s = match s {
                        SessionKey::System => None,
                        SessionKey::Client(id) => Some(&**id),
                    };
                    (s, u.as_milli())
                })
                .collect()
        })
        .collect();
    serde_json::to_string(&lanes)
}

/// The checkpoint [`encode_checkpoint`] wrote; `None` for anything else.
pub fn decode_checkpoint(text: &str) -> Option<UsageCheckpoint> {
    let lanes: Vec<Vec<(Option<String>, u64)>> = serde_json::from_str(text).ok()?;
    Some(UsageCheckpoint {
        lanes: lanes
            .into_iter()
            .map(|lane| {
                lane.into_iter()
                    .map(|(s, u)| {
                        let s = s.map_or(SessionKey::System, |s| SessionKey::client(&s));
                        (s, Units::from_milli(u))
                    })
                    .collect()
            })
            .collect(),
    })
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_checkpoint_survives_its_encoding() {
        let usage = UsageCheckpoint {
            lanes: vec![
                vec![
                    (SessionKey::System, Units::whole(2)),
                    (SessionKey::client("s-1"), Units::from_milli(1500)),
                ],
                vec![],
            ],
        };
        assert_eq!(
            decode_checkpoint(&encode_checkpoint(&usage).expect("encodes")),
            Some(usage)
        );
        assert_eq!(decode_checkpoint("not json"), None);
    }

    #[test]
    fn every_allowed_ttl_gives_rules_that_hold() {
        for ms in [1_000, 1_500, 5_000, 600_000] {
            let c = lease_config(Duration::from_millis(ms));
            assert!(c.validate().is_ok(), "TTL {ms} ms");
        }
        assert_eq!(lease_config(Duration::from_secs(5)).margin, Duration::from_secs(1));
    }

    #[test]
    fn the_owner_url_is_read_from_the_value() {
        assert_eq!(owner_url("r1-3 http://127.0.0.1:9000"), Some("http://127.0.0.1:9000"));
        assert_eq!(owner_url("garbage"), None);
    }
}
