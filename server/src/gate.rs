//! The platform gate: one task owns each rate-limited platform's [`FairScheduler`].
//!
//! The scheduler is pure and single-threaded; here it lives inside one tokio task per
//! platform, so no two requests can race on it. Callers talk to the task through a
//! channel: [`PlatformGate::acquire`] submits a call and waits for its admission;
//! dropping the returned future before admission (a cancelled MCP request, a closed
//! connection) withdraws the queued call, which then costs nothing. The task sleeps
//! until the scheduler's next wake-up (`poll_timeout`) or the next message.
//!
//! The clock: tokio's monotonic clock, turned into a core [`Instant`] at this edge. Under
//! tokio's paused test clock the whole gate runs in virtual time.
//!
//! What this module does not do: send the platform request, or decide what a call costs
//! (the connector does both). Platforms without a limit kept by BesluitBron have no gate.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use besluitbron_core::{
    Admission, Charge, FairScheduler, Instant, JoinError, PlatformId, SchedulerConfig, SessionKey, Submission, Ticket,
    Units,
};
use tokio::sync::{mpsc, oneshot};

/// Turns tokio's clock into core instants.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin: tokio::time::Instant,
}

impl Clock {
    /// A clock whose epoch is now.
    pub fn start() -> Clock {
        Clock {
            origin: tokio::time::Instant::now(),
        }
    }

    /// Now, as a core instant.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(u64::try_from(self.origin.elapsed().as_nanos()).unwrap_or(u64::MAX))
    }

    /// A core instant as a tokio instant.
    pub fn to_tokio(&self, at: Instant) -> tokio::time::Instant {
        self.origin + Duration::from_nanos(at.as_nanos())
    }
}

/// Why a call did not get through the gate.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GateError {
    /// The platform's queue (or this session's share of it) is full.
    #[error("{platform} is busy: its queue is full; retry in {retry_after_secs} s")]
    QueueFull {
        /// The platform.
        platform: PlatformId,
        /// Whole seconds after which a retry makes sense.
        retry_after_secs: u64,
    },
    /// The gate's task stopped (the server is shutting down).
    #[error("{0} is not accepting calls: the server is shutting down")]
    Closed(PlatformId),
}

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

/// A snapshot of a gate, for metrics and readiness.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateSnapshot {
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
    /// Queued calls withdrawn.
    pub cancelled_calls: u64,
    /// Admitted calls the platform refused, their charge returned to the session.
    pub refunded_calls: u64,
}

enum Msg {
    Submit {
        session: SessionKey,
        cost: Units,
        reply: oneshot::Sender<SubmitReply>,
    },
    Join {
        session: SessionKey,
        flight: Ticket,
        reply: oneshot::Sender<Result<Ticket, JoinError>>,
    },
    Cancel {
        ticket: Ticket,
    },
    CancelFlight {
        flight: Ticket,
    },
    Estimate {
        ticket: Ticket,
        reply: oneshot::Sender<Option<QueuePosition>>,
    },
    RetryAfter(Duration),
    Refund {
        session: SessionKey,
        charge: Charge,
    },
    Remaining {
        remaining: Units,
        reset: Option<Duration>,
    },
    Snapshot(oneshot::Sender<GateSnapshot>),
}

enum SubmitReply {
    Admitted(Admission),
    Queued(Ticket, oneshot::Receiver<Admission>),
    Refused { retry_after_secs: u64 },
}

/// The handle to one platform's scheduler task. Cheap to clone.
#[derive(Clone, Debug)]
pub struct PlatformGate {
    platform: PlatformId,
    tx: mpsc::UnboundedSender<Msg>,
    waited_ns_total: Arc<AtomicU64>,
}

impl std::fmt::Debug for Msg {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("gate message")
    }
}

/// A queued call's place, returned while it waits. Dropping it withdraws the call.
struct QueuedGuard {
    tx: mpsc::UnboundedSender<Msg>,
    ticket: Option<Ticket>,
}

impl Drop for QueuedGuard {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            // The task may be gone at shutdown; then there is nothing to withdraw.
            let _ = self.tx.send(Msg::Cancel { ticket });
        }
    }
}

/// What happened while a caller waited in [`PlatformGate::acquire_with`].
pub enum Queued {
    /// The call waits under this ticket (for coalescing: others may join it).
    Ticket(Ticket),
    /// A progress report.
    Position(QueuePosition),
}

impl PlatformGate {
    /// Starts the platform's scheduler task.
    pub fn spawn(platform: PlatformId, config: SchedulerConfig, clock: Clock) -> Result<PlatformGate, anyhow::Error> {
        let scheduler = FairScheduler::new(config)?;
        let (tx, rx) = mpsc::unbounded_channel();
        tokio::spawn(run(scheduler, rx, clock));
        Ok(PlatformGate {
            platform,
            tx,
            waited_ns_total: Arc::new(AtomicU64::new(0)),
        })
    }

    /// The platform this gate guards.
    pub fn platform(&self) -> PlatformId {
        self.platform
    }

    /// Waits until a call of `cost` units for `session` may go out. Dropping the future
    /// before it resolves withdraws the call.
    pub async fn acquire(&self, session: &SessionKey, cost: Units) -> Result<Admission, GateError> {
        self.acquire_with(session, cost, Duration::MAX, |_| {}).await
    }

    /// As [`PlatformGate::acquire`], calling `on_wait` with the ticket once the call is
    /// queued and then with its position every `report_every` while it waits.
    pub async fn acquire_with(
        &self,
        session: &SessionKey,
        cost: Units,
        report_every: Duration,
        mut on_wait: impl FnMut(Queued),
    ) -> Result<Admission, GateError> {
        let (reply, rx) = oneshot::channel();
        self.send(Msg::Submit {
            session: session.clone(),
            cost,
            reply,
        })?;
        let reply = rx.await.map_err(|_| GateError::Closed(self.platform))?;
        let (ticket, mut admitted) = match reply {
            SubmitReply::Admitted(a) => return Ok(a),
            SubmitReply::Refused { retry_after_secs } => {
                return Err(GateError::QueueFull {
                    platform: self.platform,
                    retry_after_secs,
                });
            }
            SubmitReply::Queued(ticket, admitted) => (ticket, admitted),
        };
        let mut guard = QueuedGuard {
            tx: self.tx.clone(),
            ticket: Some(ticket),
        };
        on_wait(Queued::Ticket(ticket));
        // Report the place in the queue at once, then every `report_every`.
        let reporting = report_every != Duration::MAX;
        let mut next_report = tokio::time::Instant::now();
        loop {
            tokio::select! {
                biased;
                result = &mut admitted => {
                    guard.ticket = None;
                    let admission = result.map_err(|_| GateError::Closed(self.platform))?;
                    let waited = u64::try_from(admission.waited().as_nanos()).unwrap_or(u64::MAX);
                    self.waited_ns_total.fetch_add(waited, Ordering::Relaxed);
                    return Ok(admission);
                }
                () = tokio::time::sleep_until(next_report), if reporting => {
                    next_report += report_every;
                    if let Some(position) = self.position(ticket).await {
                        on_wait(Queued::Position(position));
                    }
                }
            }
        }
    }

    /// Lets `session` join the waiting call `flight` (coalescing; see
    /// [`FairScheduler::join`]). Returns the session's own entry for it.
    pub async fn join(&self, session: &SessionKey, flight: Ticket) -> Result<Ticket, JoinError> {
        let (reply, rx) = oneshot::channel();
        if self
            .tx
            .send(Msg::Join {
                session: session.clone(),
                flight,
                reply,
            })
            .is_err()
        {
            return Err(JoinError::NotQueued);
        }
        rx.await.unwrap_or(Err(JoinError::NotQueued))
    }

    /// Withdraws one session's entry for a joined call.
    pub fn cancel(&self, ticket: Ticket) {
        let _ = self.tx.send(Msg::Cancel { ticket });
    }

    /// Withdraws every entry of a waiting call.
    pub fn cancel_flight(&self, flight: Ticket) {
        let _ = self.tx.send(Msg::CancelFlight { flight });
    }

    /// Where a waiting call stands.
    pub async fn position(&self, ticket: Ticket) -> Option<QueuePosition> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(Msg::Estimate { ticket, reply }).ok()?;
        rx.await.ok().flatten()
    }

    /// The platform answered 429 with this Retry-After.
    pub fn retry_after(&self, retry_after: Duration) {
        let _ = self.tx.send(Msg::RetryAfter(retry_after));
    }

    /// The platform refused (429) a call this gate admitted for `session` with `charge`
    /// ([`Admission::charge`]): the charge goes back to the session
    /// ([`FairScheduler::refund`]).
    pub fn refund(&self, session: SessionKey, charge: Charge) {
        let _ = self.tx.send(Msg::Refund { session, charge });
    }

    /// The platform reported what it has left (`RateLimit-Remaining`, `RateLimit-Reset`).
    pub fn remaining(&self, remaining: Units, reset: Option<Duration>) {
        let _ = self.tx.send(Msg::Remaining { remaining, reset });
    }

    /// The gate's current state.
    pub async fn snapshot(&self) -> Option<GateSnapshot> {
        let (reply, rx) = oneshot::channel();
        self.tx.send(Msg::Snapshot(reply)).ok()?;
        rx.await.ok()
    }

    /// Total time admitted calls waited, for the wait metric.
    pub fn waited_total(&self) -> Duration {
        Duration::from_nanos(self.waited_ns_total.load(Ordering::Relaxed))
    }

    fn send(&self, msg: Msg) -> Result<(), GateError> {
        self.tx.send(msg).map_err(|_| GateError::Closed(self.platform))
    }
}

async fn run(mut s: FairScheduler, mut rx: mpsc::UnboundedReceiver<Msg>, clock: Clock) {
    let mut waiters: HashMap<Ticket, oneshot::Sender<Admission>> = HashMap::new();
    loop {
        let wake = s.poll_timeout(clock.now()).map(|at| clock.to_tokio(at));
        let msg = tokio::select! {
            msg = rx.recv() => match msg {
                Some(msg) => Some(msg),
                None => return,
            },
            () = sleep_until(wake) => None,
        };
        let now = clock.now();
        if let Some(msg) = msg {
            handle(&mut s, &mut waiters, now, msg);
        }
        while let Some(admission) = s.poll_admission(now) {
            if let Some(waiter) = waiters.remove(&admission.flight) {
                // A waiter that is gone was cancelled after admission; the call is
                // charged (it went out as far as the platform's budget is concerned).
                let _ = waiter.send(admission);
            }
        }
    }
}

async fn sleep_until(at: Option<tokio::time::Instant>) {
    match at {
        Some(at) => tokio::time::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

fn handle(s: &mut FairScheduler, waiters: &mut HashMap<Ticket, oneshot::Sender<Admission>>, now: Instant, msg: Msg) {
    match msg {
        Msg::Submit { session, cost, reply } => {
            let answer = match s.submit(now, &session, cost) {
                Submission::Admitted(a) => SubmitReply::Admitted(a),
                Submission::Queued(ticket) => {
                    let (tx, rx) = oneshot::channel();
                    waiters.insert(ticket, tx);
                    SubmitReply::Queued(ticket, rx)
                }
                Submission::Refused { retry_at, .. } => {
                    let wait = retry_at.saturating_since(now);
                    SubmitReply::Refused {
                        retry_after_secs: wait.as_secs() + u64::from(wait.subsec_nanos() > 0),
                    }
                }
            };
            if let Err(SubmitReply::Queued(ticket, _)) = reply.send(answer) {
                // The caller left before hearing the answer.
                waiters.remove(&ticket);
                s.cancel(now, ticket);
            }
        }
        Msg::Join { session, flight, reply } => {
            let before = s.queued();
            let joined = s.join(now, &session, flight);
            if let Err(Ok(entry)) = reply.send(joined)
                && s.queued() > before
            {
                // The joiner left before hearing the answer: the entry made for it
                // stands for nobody (the call keeps the entries it had).
                s.cancel(now, entry);
            }
        }
        Msg::Cancel { ticket } => {
            // A call that other sessions joined keeps waiting through their entries: its
            // waiter stays until the last entry is gone.
            if s.cancel(now, ticket) && !s.is_waiting(ticket) {
                waiters.remove(&ticket);
            }
        }
        Msg::CancelFlight { flight } => {
            if s.cancel_flight(now, flight) {
                waiters.remove(&flight);
            }
        }
        Msg::Estimate { ticket, reply } => {
            let position = s.estimate(now, ticket).map(|e| QueuePosition {
                ahead_in_session: e.ahead_in_session,
                waiting_sessions: e.waiting_sessions,
                queued_calls: e.queued_calls,
                estimated_wait: e.admit_at.saturating_since(now),
            });
            let _ = reply.send(position);
        }
        Msg::RetryAfter(d) => s.on_retry_after(now, d),
        Msg::Refund { session, charge } => s.refund(now, &session, charge),
        Msg::Remaining { remaining, reset } => s.on_remaining(now, remaining, reset),
        Msg::Snapshot(reply) => {
            let stats = s.stats();
            let _ = reply.send(GateSnapshot {
                queued: s.queued(),
                waiting_sessions: s.waiting_sessions(),
                tracked_sessions: s.tracked_sessions(),
                tokens: s.tokens(now),
                admitted_calls: stats.admitted_calls,
                admitted_units: stats.admitted_units,
                refused_calls: stats.refused_calls,
                cancelled_calls: stats.cancelled_calls,
                refunded_calls: stats.refunded_calls,
            });
        }
    }
}
