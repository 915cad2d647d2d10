//! One task per budget group (the platforms that share an upstream service, and those
//! services: [`besluitbron_core::BudgetGroup`]; most groups are one platform and its one
//! service) drives that group's [`PlatformPath`], a lane per service, — the core type that
//! owns the buffer decision, in-flight coalescing, the fair queues, retries, the 429
//! requeue and refunds — inside the core's [`Shell`], which keeps the waiters' answer
//! channels and the flights' platform requests, turns the path's effects into sends and
//! deliveries, gates admissions and sends on the platform's lease (several replicas),
//! hands the waiting calls back when ownership ends, and checks the invariants. This
//! module only does what the core cannot: wait for messages and timers, run the platform
//! calls, hand answers to waiters, count and log.
//!
//! ```text
//! tool ─▶ PlatformHandle::call ─(fresh in the memory layer: answered here)
//!          │
//!          └──bounded channel──▶ platform task: shell.request (gated on the lease)
//!          ◀── Cached | Refused | NotOwner | Waiting(rx) ───┘    │ Action::Send, confirm_send
//!          (progress: position queries each second)             ▼
//!                                            spawned upstream call ──outcome──▶ shell.on_outcome
//!          ◀──────────── Action::Deliver (answer or error) | Action::Moved ────────┘
//! ```
//!
//! Invariants:
//! - every platform has a task, limited or not (an unlimited lane simply has no scheduler);
//!   platforms that call one service share its task, its lane and so its token bucket and
//!   fair queue; each keeps its own buffer ([`GroupBuffer`]) and handle;
//! - nothing but the task touches the path or writes the buffer (no races between
//!   coalescing and queueing: one owner, synchronous steps); the handles only read the
//!   buffer's memory layer for a fresh answer, the path's own first step, which changes
//!   no path state (the path then counts only the hits that reach it);
//! - the request channel is bounded (callers wait for room); leaves, outcomes and
//!   queries travel on an unbounded control channel, bounded in practice by the requests
//!   and attempts in flight, so a dropped request can always withdraw itself;
//! - a request that gives up (its future dropped) leaves the path: a queued call nobody
//!   waits for is withdrawn and costs nothing;
//! - every attempt's outcome comes back, even when the call's task panics or outlasts
//!   the attempt deadline (then as a failure), so no flight waits forever;
//! - a broken invariant of the path (checked by the shell: after every step in debug
//!   builds, every 2^20 steps and when idle in release) is counted
//!   (`besluitbron_path_invariant_failures_total`) and logged, never a panic.
//!
//! The clock is tokio's, turned into core instants at this edge ([`Clock`]); under
//! tokio's paused test clock the whole path runs in virtual time.

mod attempt;
pub mod buffer;
pub mod group;
pub mod lease;
pub mod payload;
pub mod record;
mod setup;
pub mod task;
mod traced;
mod upstream;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use besluitbron_core::cache::CacheKey;
use besluitbron_core::cluster::{Lease, UsageCheckpoint};
use besluitbron_core::dedup::WaiterId;
use besluitbron_core::path::{
    Action, Arrival, Attempt, Delivery, Failure, Lane, NotOwner, PathStats, PendingSend, Position,
    Request as PathRequest, Served, Shell, Unsent,
};
use besluitbron_core::record::CallEnd;
use besluitbron_core::{AdmissionRecord, PlatformId, ServiceId, SessionKey, Units};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

pub use buffer::{MemoryLayer, ServerBuffer};
pub use group::GroupBuffer;
pub use payload::{Payload, SharedPayload};
pub use record::Recorder;
pub use setup::path_config;
pub use upstream::{Upstream, UpstreamFuture, UpstreamOutcome};

use crate::clock::Clock;
use crate::metrics::{CallLabels, Metrics, PlatformLabel};
use crate::platforms::http::PlatformError;
use crate::telemetry::spans;
use attempt::{attempt_end, run_attempt};
use traced::Flight;

/// Reports a waiting request's place in the queue.
pub type ProgressSink = Box<dyn FnMut(QueuePosition) + Send>;

/// How many requests may wait for the platform task to take them.
pub const REQUEST_CHANNEL_BOUND: usize = 1024;

/// Where a waiting call stands, for MCP progress notifications.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct QueuePosition {
    /// The session's own calls ahead of this one.
    pub ahead_in_session: usize,
    /// Sessions waiting at the platform.
    pub waiting_sessions: usize,
    /// Calls waiting at the platform.
    pub queued_calls: usize,
    /// Estimated wait from now.
    pub estimated_wait: Duration,
}

/// One request for a platform answer.
#[derive(Clone, Debug)]
pub struct CallRequest {
    /// The buffer key: platform, class, operation, canonical parameters, scope.
    pub key: CacheKey,
    /// Who it is for (fairness).
    pub session: SessionKey,
    /// What it costs at the platform.
    pub cost: Units,
    /// The upstream service it goes to, one of those its platform calls; `None`: the
    /// platform's first (its search service).
    pub service: Option<ServiceId>,
}

/// Why a request got no answer. Its text is written for the assistant.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CallError {
    /// The platform failed or refused.
    #[error(transparent)]
    Platform(#[from] PlatformError),
    /// BesluitBron's own queue for the platform is full.
    #[error("{} is busy: BesluitBron's queue for it is full; retry in {retry_after_secs} s", .platform.display_name())]
    QueueFull {
        /// The platform.
        platform: PlatformId,
        /// Whole seconds after which a retry makes sense.
        retry_after_secs: u64,
    },
    /// The platform's task has stopped (the server is shutting down).
    #[error("{} is not accepting calls: BesluitBron is shutting down; retry shortly", .0.display_name())]
    Closed(PlatformId),
    /// Several replicas: this replica does not own the platform now (or its lease ended
    /// while the call waited); the call goes to the owner (`crate::cluster`).
    #[error(
        "BesluitBron's replicas cannot agree on who may call {} now (shared state unreachable); retry in a few seconds",
        .0.display_name()
    )]
    NotOwner(PlatformId),
}

/// One call that went out, for observers (tests, logs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SentCall {
    /// The platform.
    pub platform: PlatformId,
    /// What was asked.
    pub key: CacheKey,
    /// The upstream service it went to, where its task knows its group's services (a
    /// task started for one path alone does not).
    pub service: Option<ServiceId>,
    /// Which attempt.
    pub attempt: u32,
    /// The admission, on a lane that keeps a limit.
    pub admission: Option<AdmissionRecord>,
}

/// Called for every call that goes out (see [`SentCall`]).
pub type SendObserver = Arc<dyn Fn(&SentCall) + Send + Sync>;

/// A snapshot of one lane, for metrics, readiness and tests.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LaneSnapshot {
    /// The lane's name.
    pub name: &'static str,
    /// Whether it keeps a limit.
    pub limited: bool,
    /// Calls waiting.
    pub queued: usize,
    /// Sessions with calls waiting.
    pub waiting_sessions: usize,
    /// Sessions whose usage is remembered.
    pub tracked_sessions: usize,
    /// Units in the local bucket.
    pub tokens: Units,
    /// Calls admitted so far.
    pub admitted_calls: u64,
    /// Units charged so far.
    pub admitted_units: Units,
    /// Calls refused because a queue was full.
    pub refused_calls: u64,
    /// Queued entries withdrawn.
    pub cancelled_calls: u64,
    /// Admitted calls the platform refused, their charge returned.
    pub refunded_calls: u64,
}

/// A snapshot of one platform's path.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PathSnapshot {
    /// Per lane, in lane order.
    pub lanes: Vec<LaneSnapshot>,
    /// The path's counters.
    pub stats: PathStats,
    /// Flights under way.
    pub in_flight: usize,
    /// Requests waiting for a flight.
    pub waiting: usize,
    /// Buffer writes not yet finished.
    pub pending_writes: usize,
    /// Payload bytes the buffer's memory layer holds.
    pub memory_bytes: usize,
    /// Whether the path's invariants hold (checked on request; see
    /// [`PlatformPath::check_invariants`]).
    pub invariants: Result<(), String>,
}

enum Msg {
    Request {
        waiter: WaiterId,
        /// The request's number among its platform's, for the recording.
        seq: u64,
        lane: Lane,
        /// It goes to another service than its platform's first (a document's text).
        text: bool,
        request: CallRequest,
        /// The platform request and the asking call's span.
        flight: Flight,
        reply: oneshot::Sender<Arrived>,
    },
}

/// The lease of a platform, shared by its lease task (which talks to the engine) and the
/// platform's task (which asks it, by its own clock, whether it may admit and send).
pub type LeaseGate = Arc<std::sync::Mutex<Lease>>;

/// What the lease task tells the platform's task (several replicas only).
#[derive(Debug)]
pub enum Ownership {
    /// The lease's start wait is over ([`besluitbron_core::cluster::LeaseEvent::StartAdmitting`]):
    /// take the path over (an empty bucket, the sessions' usage from `checkpoint`) and admit.
    Start {
        /// The acquisition.
        epoch: u64,
        /// The sessions' usage the last owner wrote, if any.
        checkpoint: Option<UsageCheckpoint>,
    },
    /// The lease is lost, lapsed or being handed over: admit nothing more; every call
    /// waiting here goes to the next owner.
    End,
}

enum Control {
    Leave(WaiterId),
    Ownership(Ownership),
    Checkpoint(oneshot::Sender<UsageCheckpoint>),
    Outcome {
        attempt: Attempt,
        /// The platform asked.
        platform: PlatformId,
        outcome: UpstreamOutcome,
    },
    Position {
        waiter: WaiterId,
        reply: oneshot::Sender<Option<Position>>,
    },
    Snapshot {
        check: bool,
        reply: oneshot::Sender<PathSnapshot>,
    },
}

/// A waiting request's end: its delivery, or word that it must go to another replica.
enum Delivered {
    Delivery(Delivery<SharedPayload, PlatformError>),
    Moved,
}

enum Arrived {
    Cached(SharedPayload),
    Waiting(oneshot::Receiver<Delivered>),
    Refused { retry_after_secs: u64 },
    NotOwner,
}

/// The handle to one platform's task. Cheap to clone.
#[derive(Clone)]
pub struct PlatformHandle {
    platform: PlatformId,
    /// The budget group's services, lane `i` being `services[i]`.
    services: Arc<[ServiceId]>,
    /// The lane of the platform's first service.
    main: Lane,
    requests: mpsc::Sender<Msg>,
    control: mpsc::UnboundedSender<Control>,
    /// Waiter ids, unique on the group's path (shared by its platforms' handles).
    next_waiter: Arc<AtomicU64>,
    /// This platform's requests, numbered in order for the recording.
    next_seq: Arc<AtomicU64>,
    clock: Clock,
    /// The buffer's memory layer: a fresh answer there is served without the task.
    memory: MemoryLayer,
    /// Recording (the `Recording` setting): a memory-layer answer is written here.
    recorder: Option<Recorder>,
}

impl std::fmt::Debug for PlatformHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PlatformHandle({})", self.platform)
    }
}

/// Leaves the path if the request stops waiting before its answer.
struct LeaveGuard<'a> {
    control: &'a mpsc::UnboundedSender<Control>,
    waiter: WaiterId,
    armed: bool,
}

impl Drop for LeaveGuard<'_> {
    fn drop(&mut self) {
        if self.armed {
            // The task may be gone at shutdown; then there is nothing to leave.
            let _ = self.control.send(Control::Leave(self.waiter));
        }
    }
}

impl PlatformHandle {
    /// The platform.
    pub fn platform(&self) -> PlatformId {
        self.platform
    }

    /// The index of the lane its calls go to unless they name another service (its first
    /// service's), in [`PathSnapshot::lanes`].
    pub fn main_lane(&self) -> usize {
        usize::from(self.main.0)
    }

    /// The services of the platform's budget group, in lane order.
    pub fn services(&self) -> &[ServiceId] {
        &self.services
    }

    /// The lane of `service` (the platform's first when `None`); a service outside the
    /// group is the connector's mistake and goes to the first, never a panic.
    fn lane(&self, service: Option<ServiceId>) -> Lane {
        let Some(service) = service else { return self.main };
        match self.services.iter().position(|s| *s == service) {
            Some(i) => Lane(u8::try_from(i).unwrap_or(u8::MAX)),
            None => {
                debug_assert!(false, "{service} is not among {}'s services", self.platform);
                self.main
            }
        }
    }

    /// Answers `request` from the buffer, a flight in progress, or the platform through
    /// `upstream` (called once per attempt of this request's flight, if it leads one).
    /// While the call waits in a queue, `progress` hears where it stands, at once and
    /// then every second. Dropping the future gives the request up.
    pub async fn call(
        &self,
        request: CallRequest,
        upstream: impl FnOnce() -> Upstream,
        mut progress: Option<ProgressSink>,
    ) -> Result<(SharedPayload, Served), CallError> {
        if let Some(p) = self.kept(&request) {
            return Ok((p, Served::Cached));
        }
        let waiter = WaiterId(self.next_waiter.fetch_add(1, Ordering::Relaxed));
        let seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        let lane = self.lane(request.service);
        let (reply, arrived) = oneshot::channel();
        // From here on, giving up leaves the path (the task also notices a reply nobody
        // takes, for a request dropped before its answer came).
        let mut guard = LeaveGuard {
            control: &self.control,
            waiter,
            armed: true,
        };
        let msg = Msg::Request {
            waiter,
            seq,
            lane,
            text: lane != self.main,
            request,
            // The caller's span (its platform call's) goes with the flight it may lead.
            flight: Flight::new(upstream(), tracing::Span::current()),
            reply,
        };
        if self.requests.send(msg).await.is_err() {
            guard.armed = false;
            return Err(CallError::Closed(self.platform));
        }
        let mut delivery = match arrived.await {
            Ok(Arrived::Cached(p)) => {
                guard.armed = false;
                return Ok((p, Served::Cached));
            }
            Ok(Arrived::Refused { retry_after_secs }) => {
                guard.armed = false;
                return Err(CallError::QueueFull {
                    platform: self.platform,
                    retry_after_secs,
                });
            }
            Ok(Arrived::Waiting(rx)) => rx,
            Ok(Arrived::NotOwner) => {
                guard.armed = false;
                return Err(CallError::NotOwner(self.platform));
            }
            Err(_) => {
                guard.armed = false;
                return Err(CallError::Closed(self.platform));
            }
        };
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let delivered = loop {
            tokio::select! {
                biased;
                d = &mut delivery => break d,
                _ = tick.tick(), if progress.is_some() => {
                    if let (Some(position), Some(sink)) = (self.position(waiter).await, progress.as_mut()) {
                        let now = self.clock.now();
                        sink(QueuePosition {
                            ahead_in_session: position.ahead_in_session,
                            waiting_sessions: position.waiting_sessions,
                            queued_calls: position.queued_calls,
                            estimated_wait: position.admit_at.saturating_since(now),
                        });
                    }
                }
            }
        };
        guard.armed = false;
        match delivered {
            Ok(Delivered::Delivery(Delivery::Answer { payload, served })) => Ok((payload, served)),
            Ok(Delivered::Delivery(Delivery::Failed(Failure::Platform(e)))) => Err(CallError::Platform(e)),
            Ok(Delivered::Moved) => Err(CallError::NotOwner(self.platform)),
            Ok(Delivered::Delivery(Delivery::Failed(Failure::QueueFull { retry_at, .. }))) => {
                Err(CallError::QueueFull {
                    platform: self.platform,
                    retry_after_secs: whole_secs(retry_at.saturating_since(self.clock.now())),
                })
            }
            Err(_) => Err(CallError::Closed(self.platform)),
        }
    }

    /// A fresh answer in the memory layer: the path's own first step (a buffer hit
    /// changes nothing in the path), taken in the caller's task without the trip through
    /// the platform's; recorded as a hit when recording is on.
    fn kept(&self, request: &CallRequest) -> Option<SharedPayload> {
        let lookup = spans::buffer_lookup("memory");
        let kept = lookup.in_scope(|| self.memory.get(&request.key, self.clock.wall()));
        spans::found(&lookup, kept.is_some());
        if kept.is_some()
            && let Some(r) = &self.recorder
        {
            let at = self.clock.wall_at(self.clock.now()).unix_millis();
            let text = self.lane(request.service) != self.main;
            let mut line = r.line(at, None, &request.session, &request.key, request.cost, text);
            line.served = Some(CallEnd::Cached);
            r.write(&line);
        }
        kept
    }

    async fn position(&self, waiter: WaiterId) -> Option<Position> {
        let (reply, rx) = oneshot::channel();
        self.control.send(Control::Position { waiter, reply }).ok()?;
        rx.await.ok().flatten()
    }

    /// Tells the platform's task of a change of its lease (several replicas only).
    pub fn ownership(&self, change: Ownership) {
        let _ = self.control.send(Control::Ownership(change));
    }

    /// The sessions' usage at the platform's lanes, for the checkpoint a next owner
    /// starts from.
    pub async fn usage_checkpoint(&self) -> Option<UsageCheckpoint> {
        let (reply, rx) = oneshot::channel();
        self.control.send(Control::Checkpoint(reply)).ok()?;
        rx.await.ok()
    }

    /// The platform's state now; with `check`, its invariants checked too.
    pub async fn snapshot(&self, check: bool) -> Option<PathSnapshot> {
        let (reply, rx) = oneshot::channel();
        self.control.send(Control::Snapshot { check, reply }).ok()?;
        rx.await.ok()
    }
}

fn whole_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Everything a platform task needs besides its path.
pub struct DriverOptions {
    /// The clock.
    pub clock: Clock,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// The longest one attempt may take before it is reported failed (a backstop; the
    /// platform clients time out first).
    pub attempt_timeout: Duration,
    /// Told of every call that goes out.
    pub observer: Option<SendObserver>,
    /// Stops the task.
    pub cancel: CancellationToken,
    /// Records every call in the simulator's trace format (`Recording` setting).
    pub recorder: Option<Recorder>,
}

/// The platform's path in the core's shell: a waiter's value is the channel its answer
/// goes down, a flight's data the platform request its leading call brought.
type DriverShell = Shell<GroupBuffer, PlatformError, oneshot::Sender<Delivered>, Flight>;

struct Driver {
    /// The budget group's name (its first service's id), for logs and the path's own
    /// metrics.
    name: &'static str,
    /// The group's services, lane `i` being `services[i]` (empty for a path alone).
    services: Arc<[ServiceId]>,
    shell: DriverShell,
    control: mpsc::UnboundedSender<Control>,
    options: DriverOptions,
    /// Several replicas: the platform's lease (None: one process, always the owner).
    lease: Option<LeaseGate>,
    /// Recording: the calls and flights under way.
    notes: Option<record::Notes>,
}

/// The error the path hears for an attempt the shell never sent.
fn unsent(u: Unsent) -> PlatformError {
    PlatformError::Internal {
        platform: u.platform,
        detail: u.to_string(),
    }
}

impl Driver {
    async fn run(mut self, mut requests: mpsc::Receiver<Msg>, mut control: mpsc::UnboundedReceiver<Control>) {
        let cancel = self.options.cancel.clone();
        loop {
            let clock = self.options.clock;
            let wake = self.shell.poll_timeout(clock.now()).map(|at| clock.to_tokio(at));
            tokio::select! {
                biased;
                () = cancel.cancelled() => break,
                c = control.recv() => match c {
                    Some(c) => self.control(c),
                    None => break,
                },
                m = requests.recv() => match m {
                    Some(m) => self.request(m),
                    // Every handle is gone.
                    None => break,
                },
                () = sleep_until(wake) => self.shell.handle_timeout(clock.now()),
            }
            self.apply_actions();
            if requests.is_empty() && control.is_empty() {
                // Nothing else to do: the shell checks the invariants of a quiet path.
                self.shell.idle();
                self.apply_actions();
            }
        }
        // Waiters still waiting hear that the task stopped (their channels close with the
        // shell), and the recording says so; the buffer's writes are finished.
        if let Some(notes) = self.notes.as_mut() {
            let now = self.options.clock.now();
            notes.stopped(now, self.options.clock.wall_at(now).unix_millis());
        }
        let mut path = self.shell.into_path();
        path.buffer_mut().flush().await;
    }

    /// The lease, locked, while the shell asks it (several replicas only).
    fn lease(gate: Option<&LeaseGate>) -> Option<std::sync::MutexGuard<'_, Lease>> {
        gate.map(|g| g.lock().expect("lease lock"))
    }

    fn request(&mut self, msg: Msg) {
        let Msg::Request {
            waiter,
            seq,
            lane,
            text,
            request,
            flight,
            reply,
        } = msg;
        let now = self.options.clock.now();
        let wall = self.options.clock.wall();
        let line = self.notes.as_mut().map(|n| {
            let mut line = n.recorder().line(
                self.options.clock.wall_at(now).unix_millis(),
                Some(seq),
                &request.session,
                &request.key,
                request.cost,
                text,
            );
            // The order this task takes its platforms' requests in, which `seq` (each
            // platform's own count, taken by the caller) does not give.
            line.step = Some(n.step());
            line
        });
        let req = PathRequest {
            waiter,
            key: request.key,
            session: request.session,
            cost: request.cost,
            lane,
        };
        let (tx, rx) = oneshot::channel();
        let (span, queue) = (flight.span().clone(), flight.queue_slot());
        // The store lookup and any log line of this step belong to the call that asked.
        let in_call = span.enter();
        let lease = Self::lease(self.lease.as_ref());
        let arrival = self.shell.request(now, wall, lease.as_deref(), req, tx, flight);
        drop(lease);
        drop(in_call);
        if let Ok(Arrival::Waiting { led: true, .. }) = &arrival {
            let at = self.services.get(usize::from(lane.0)).map_or(self.name, |s| s.as_str());
            Flight::queued(
                queue.as_ref(),
                &span,
                at,
                queue.as_ref().and_then(|_| self.shell.position(now, waiter)),
            );
        }
        if let (Some(notes), Some(line)) = (self.notes.as_mut(), line) {
            match &arrival {
                Err(NotOwner) => notes.ended_at_once(line, CallEnd::Moved),
                Ok(Arrival::Cached(_)) => notes.ended_at_once(line, CallEnd::Cached),
                Ok(Arrival::Refused { .. }) => notes.ended_at_once(line, CallEnd::Refused),
                Ok(Arrival::Waiting { flight, .. }) => notes.waiting(waiter, line, *flight, now),
            }
        }
        match arrival {
            Err(NotOwner) => {
                let _ = reply.send(Arrived::NotOwner);
            }
            Ok(Arrival::Cached(payload)) => {
                let _ = reply.send(Arrived::Cached(payload));
            }
            Ok(Arrival::Refused { retry_at, .. }) => {
                let _ = reply.send(Arrived::Refused {
                    retry_after_secs: whole_secs(retry_at.saturating_since(now)),
                });
            }
            Ok(Arrival::Waiting { .. }) => {
                if reply.send(Arrived::Waiting(rx)).is_err() {
                    // The caller left before it heard.
                    self.shell.leave(now, waiter);
                    if let Some(notes) = self.notes.as_mut() {
                        notes.left(waiter, now);
                    }
                }
            }
        }
    }

    fn ownership(&mut self, change: Ownership) {
        let now = self.options.clock.now();
        match change {
            // The new owner's start (rule 3): an empty bucket, the sessions' usage from
            // the checkpoint; requests enter while the lease admits under this epoch.
            Ownership::Start { epoch, checkpoint } => self.shell.take_over(now, epoch, checkpoint.as_ref()),
            // Every call waiting here goes to the next owner (Action::Moved); its queued
            // entries are withdrawn. Calls already out stay flights: their answers are
            // still kept.
            Ownership::End => self.shell.end_ownership(now),
        }
    }

    fn control(&mut self, c: Control) {
        let now = self.options.clock.now();
        match c {
            Control::Leave(waiter) => {
                self.shell.leave(now, waiter);
                if let Some(notes) = self.notes.as_mut() {
                    notes.left(waiter, now);
                }
            }
            Control::Ownership(change) => self.ownership(change),
            Control::Checkpoint(reply) => {
                let _ = reply.send(self.shell.path().usage_checkpoint());
            }
            Control::Outcome {
                attempt,
                platform,
                outcome,
            } => {
                let label = traced::outcome_label(&outcome);
                self.options
                    .metrics
                    .platform_calls
                    .get_or_create(&CallLabels {
                        platform: platform.as_str(),
                        outcome: label,
                    })
                    .inc();
                if let Some(notes) = self.notes.as_mut() {
                    notes.outcome(attempt, self.options.clock.wall_at(now).unix_millis(), &outcome);
                }
                let wall = self.options.clock.wall();
                self.shell.on_outcome(now, wall, attempt, outcome);
            }
            Control::Position { waiter, reply } => {
                let _ = reply.send(self.shell.position(now, waiter));
            }
            Control::Snapshot { check, reply } => {
                let _ = reply.send(self.snapshot(check));
            }
        }
    }

    fn apply_actions(&mut self) {
        while let Some(action) = self.shell.poll_action() {
            match action {
                Action::Send(pending) => self.send(pending),
                // A waiter gone meanwhile is a closed channel: nothing to do.
                Action::Deliver {
                    waiter,
                    value,
                    delivery,
                    ..
                } => {
                    if let Some(notes) = self.notes.as_mut() {
                        notes.ended(waiter, call_end(&delivery));
                    }
                    let _ = value.send(Delivered::Delivery(delivery));
                }
                Action::Moved { waiter, value, .. } => {
                    if let Some(notes) = self.notes.as_mut() {
                        notes.ended(waiter, CallEnd::Moved);
                    }
                    let _ = value.send(Delivered::Moved);
                }
                Action::InvariantBroken { what, step } => {
                    self.options
                        .metrics
                        .path_invariant_failures
                        .get_or_create(&PlatformLabel { platform: self.name })
                        .inc();
                    tracing::error!(
                        path = self.name,
                        step,
                        %what,
                        "the platform path's invariants are broken"
                    );
                }
            }
        }
    }

    fn send(&mut self, pending: PendingSend<SharedPayload, Flight>) {
        let now = self.options.clock.now();
        let wall = self.options.clock.wall();
        // Several replicas: an admission the lease no longer allows (too old, or the
        // lease is gone) is never sent (rule 2); the shell reports it to the path as a
        // failure worth another attempt, as the simulator does.
        let platform = pending.key().platform();
        let service = self.services.get(usize::from(pending.lane().0)).copied();
        let lease = Self::lease(self.lease.as_ref());
        let sent = self.shell.confirm_send(now, wall, lease.as_deref(), pending);
        drop(lease);
        let Some(out) = sent else {
            self.options
                .metrics
                .dropped_admissions
                .get_or_create(&PlatformLabel {
                    platform: platform.as_str(),
                })
                .inc();
            return;
        };
        if let Some(a) = &out.admission {
            self.options
                .metrics
                .platform_wait
                .get_or_create(&PlatformLabel {
                    platform: platform.as_str(),
                })
                .observe(a.waited().as_secs_f64());
            self.options.metrics.activity.waited(platform, wall, a.waited());
        }
        let attempt = out.attempt;
        let waited_ms = out
            .admission
            .as_ref()
            .map(|a| u64::try_from(a.waited().as_millis()).unwrap_or(u64::MAX));
        let traced = out.flight.sent(attempt.number, waited_ms);
        if let Some(notes) = self.notes.as_mut() {
            notes.sent(attempt, self.options.clock.wall_at(now).unix_millis());
        }
        if let Some(observer) = &self.options.observer {
            observer(&SentCall {
                platform,
                key: out.key,
                service,
                attempt: attempt.number,
                admission: out.admission,
            });
        }
        let (upstream, previous) = (out.flight.upstream, out.previous);
        let control = self.control.clone();
        let limit = self.options.attempt_timeout;
        let (metrics, clock) = (Arc::clone(&self.options.metrics), self.options.clock);
        tokio::spawn(async move {
            let started = tokio::time::Instant::now();
            let outcome = run_attempt(platform, upstream(previous), limit)
                .instrument(traced.clone())
                .await;
            traced::attempt_ended(&traced, &outcome);
            metrics
                .activity
                .attempt(platform, clock.wall(), started.elapsed(), attempt_end(&outcome));
            let _ = control.send(Control::Outcome {
                attempt,
                platform,
                outcome,
            });
        });
    }

    fn snapshot(&self, check: bool) -> PathSnapshot {
        let now = self.options.clock.now();
        let path = self.shell.path();
        let lanes = path
            .lanes()
            .map(|(_, name, s)| match s {
                None => LaneSnapshot {
                    name,
                    ..LaneSnapshot::default()
                },
                Some(s) => {
                    let stats = s.stats();
                    LaneSnapshot {
                        name,
                        limited: true,
                        queued: s.queued(),
                        waiting_sessions: s.waiting_sessions(),
                        tracked_sessions: s.tracked_sessions(),
                        tokens: s.tokens(now),
                        admitted_calls: stats.admitted_calls,
                        admitted_units: stats.admitted_units,
                        refused_calls: stats.refused_calls,
                        cancelled_calls: stats.cancelled_calls,
                        refunded_calls: stats.refunded_calls,
                    }
                }
            })
            .collect();
        PathSnapshot {
            lanes,
            stats: path.stats(),
            in_flight: path.in_flight(),
            waiting: path.waiting(),
            pending_writes: path.buffer().pending_writes(),
            memory_bytes: path.buffer().memory_bytes(),
            invariants: if check { self.shell.check_invariants() } else { Ok(()) },
        }
    }
}

/// How a delivery ends a call, for the trace.
fn call_end(delivery: &Delivery<SharedPayload, PlatformError>) -> CallEnd {
    match delivery {
        Delivery::Answer { served, .. } => match served {
            Served::Cached => CallEnd::Cached,
            Served::Fetched => CallEnd::Fetched,
            Served::Coalesced => CallEnd::Coalesced,
            Served::Stale => CallEnd::Stale,
        },
        Delivery::Failed(Failure::Platform(_)) => CallEnd::Failed,
        Delivery::Failed(Failure::QueueFull { .. }) => CallEnd::Refused,
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// Every platform's handle, in the registry's order.
#[derive(Clone, Debug, Default)]
pub struct Platforms {
    handles: BTreeMap<PlatformId, PlatformHandle>,
}

impl Platforms {
    /// The handles given.
    pub fn new(handles: BTreeMap<PlatformId, PlatformHandle>) -> Platforms {
        Platforms { handles }
    }

    /// A platform's handle.
    pub fn get(&self, platform: PlatformId) -> Option<&PlatformHandle> {
        self.handles.get(&platform)
    }

    /// Every handle.
    pub fn iter(&self) -> impl Iterator<Item = (PlatformId, &PlatformHandle)> {
        self.handles.iter().map(|(&p, h)| (p, h))
    }
}
