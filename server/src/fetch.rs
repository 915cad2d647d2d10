//! The path of one platform request: buffer, coalescing, the platform gate, the call,
//! and feedback.
//!
//! ```text
//! request ─▶ buffer hit? ──yes──▶ answer (cache_hit)
//!               │ no
//!               ▼
//!          flight for this key? ──yes──▶ join it (coalesced); if it still waits in the
//!               │ no                    platform queue, add this session's entry so it
//!               ▼                       goes at the best position
//!          lead: a task waits at the gate (fair queue), calls the platform, feeds the
//!          platform's RateLimit/429 back to the gate, stores a success in the buffer,
//!          and hands the outcome to every waiter of the flight
//! ```
//!
//! Invariants:
//! - at most one upstream call per cache key at a time (the flight table's key);
//! - a failure reaches the waiters of its own flight only and is never stored (R-C5,
//!   R-D8): the next request for the key starts a new flight;
//! - the leader's work runs in its own task, so a leader that gives up does not take the
//!   answer away from the others; when the last waiter gives up while the call still
//!   waits in the platform queue, the call is withdrawn and costs nothing.

use std::collections::{BTreeMap, HashMap};
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, CacheStore, DataClass, Lookup, StaleLookup, Success};
use besluitbron_core::dedup::{Begin, DuplicateKind, DuplicateMonitor, FlightId, FlightTable, Leave, WaiterId};
use besluitbron_core::{Charge, PlatformId, SessionKey, Ticket, Units, WallTime};
use tokio::sync::watch;

use crate::gate::{Clock, GateError, PlatformGate, QueuePosition, Queued};
use crate::metrics::{CallLabels, Metrics, PlatformLabel, RequestLabels};
use crate::platforms::http::PlatformError;
use crate::platforms::obv::RateInfo;
use crate::store::RedbStore;

/// The wall clock, read at the edge and handed to the core as a value.
pub fn wall_now() -> WallTime {
    let since_epoch = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default();
    WallTime(u64::try_from(since_epoch.as_millis()).unwrap_or(u64::MAX))
}

/// What the platform answered, ready to buffer: the normalised answer as JSON bytes, and
/// the platform's report of its remaining budget if it sent one.
pub struct Upstream {
    /// The answer as stored and served.
    pub payload: Vec<u8>,
    /// `RateLimit-*` headers, for the gate.
    pub rate: Option<RateInfo>,
}

/// Why a request got no answer. Its text is written for the assistant: what happened at
/// which platform and what it can do.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FetchError {
    /// The platform failed or refused.
    #[error(transparent)]
    Platform(#[from] PlatformError),
    /// BesluitBron's own queue for the platform is full.
    #[error(transparent)]
    Gate(#[from] GateError),
    /// The request was withdrawn before it got an answer.
    #[error("the request was cancelled")]
    Cancelled,
}

/// How an answer was obtained (also the duplicate kind of the request).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Served {
    /// From the buffer.
    Cached,
    /// From the platform, by this request's own flight.
    Fetched,
    /// From the platform, by another identical request's flight.
    Coalesced,
    /// The platform failed; an expired reference list stood in.
    Stale,
}

impl Served {
    fn duplicate_kind(self) -> DuplicateKind {
        match self {
            Served::Cached | Served::Stale => DuplicateKind::CacheHit,
            Served::Fetched => DuplicateKind::Fresh,
            Served::Coalesced => DuplicateKind::Coalesced,
        }
    }
}

/// An answer and where it came from.
#[derive(Clone, Debug)]
pub struct Answer {
    /// The answer's JSON bytes.
    pub payload: Arc<Vec<u8>>,
    /// The answer already parsed, when a recent request parsed it (the hot buffer).
    pub parsed: Option<Arc<serde_json::Value>>,
    /// How it was obtained.
    pub served: Served,
}

/// Recently used buffer answers, parsed, in memory: a read of the same answer again
/// skips the database, the checksum and the JSON parse. Same process, so same version;
/// each entry keeps the expiry its buffer entry had, and the whole is bounded in bytes.
struct Hot {
    entries: HashMap<CacheKey, HotEntry>,
    order: BTreeMap<u64, CacheKey>,
    bytes: usize,
    next: u64,
}

/// A hot answer: its bytes, parsed, its expiry, and its place in the use order.
type HotEntry = (Arc<Vec<u8>>, Arc<serde_json::Value>, WallTime, u64);

/// What the hot buffer may hold, in payload bytes.
const HOT_BYTES_MAX: usize = 64 << 20;

impl Hot {
    fn get(&mut self, key: &CacheKey, now: WallTime) -> Option<(Arc<Vec<u8>>, Arc<serde_json::Value>)> {
        let (payload, value, expires_at, seq) = self.entries.get(key)?.clone();
        if now >= expires_at {
            self.remove(key);
            return None;
        }
        // Most recently used last.
        self.order.remove(&seq);
        let seq_new = self.next;
        self.next += 1;
        self.order.insert(seq_new, key.clone());
        if let Some(e) = self.entries.get_mut(key) {
            e.3 = seq_new;
        }
        Some((payload, value))
    }

    fn put(&mut self, key: &CacheKey, payload: Arc<Vec<u8>>, value: Arc<serde_json::Value>, expires_at: WallTime) {
        if payload.len() > HOT_BYTES_MAX / 8 {
            return;
        }
        self.remove(key);
        while self.bytes + payload.len() > HOT_BYTES_MAX {
            let Some((_, oldest)) = self.order.pop_first() else {
                break;
            };
            if let Some((p, ..)) = self.entries.remove(&oldest) {
                self.bytes -= p.len();
            }
        }
        let seq = self.next;
        self.next += 1;
        self.bytes += payload.len();
        self.order.insert(seq, key.clone());
        self.entries.insert(key.clone(), (payload, value, expires_at, seq));
    }

    fn remove(&mut self, key: &CacheKey) {
        if let Some((p, _, _, seq)) = self.entries.remove(key) {
            self.bytes -= p.len();
            self.order.remove(&seq);
        }
    }
}

/// One request on the path.
pub struct Request {
    /// The buffer key: platform, class, operation, canonical parameters, scope.
    pub key: CacheKey,
    /// What the call costs at the platform.
    pub cost: Units,
    /// Who it is for (fairness).
    pub session: SessionKey,
    /// The client address (duplicate-rate diagnosis).
    pub client: String,
    /// The tool, for metrics.
    pub tool: &'static str,
}

type Outcome = Arc<Result<(Arc<Vec<u8>>, bool), FetchError>>;

struct FlightChannels {
    outcome: watch::Sender<Option<Outcome>>,
    task: Option<tokio::task::AbortHandle>,
    ticket: Option<Ticket>,
}

#[derive(Default)]
struct Flights {
    table: FlightTable<CacheKey>,
    channels: HashMap<FlightId, FlightChannels>,
}

/// Everything a platform request needs; shared by all tools.
pub struct Fetcher {
    gates: BTreeMap<PlatformId, PlatformGate>,
    stores: BTreeMap<PlatformId, Arc<RedbStore>>,
    flights: Mutex<Flights>,
    hot: Mutex<Hot>,
    monitor: Mutex<DuplicateMonitor>,
    metrics: Arc<Metrics>,
    clock: Clock,
    next_waiter: AtomicU64,
}

/// Reports a waiting request's place in the platform queue.
pub type ProgressSink = Box<dyn FnMut(QueuePosition) + Send>;

impl Fetcher {
    /// A fetcher over these gates (limited platforms only) and buffers.
    pub fn new(
        gates: BTreeMap<PlatformId, PlatformGate>,
        stores: BTreeMap<PlatformId, Arc<RedbStore>>,
        monitor: DuplicateMonitor,
        metrics: Arc<Metrics>,
        clock: Clock,
    ) -> Arc<Fetcher> {
        Arc::new(Fetcher {
            gates,
            stores,
            flights: Mutex::new(Flights::default()),
            hot: Mutex::new(Hot {
                entries: HashMap::new(),
                order: BTreeMap::new(),
                bytes: 0,
                next: 0,
            }),
            monitor: Mutex::new(monitor),
            metrics,
            clock,
            next_waiter: AtomicU64::new(0),
        })
    }

    /// The gate of a limited platform.
    pub fn gate(&self, platform: PlatformId) -> Option<&PlatformGate> {
        self.gates.get(&platform)
    }

    /// The metrics registry.
    pub fn metrics(&self) -> &Arc<Metrics> {
        &self.metrics
    }

    /// Every limited platform's gate.
    pub fn gates(&self) -> &BTreeMap<PlatformId, PlatformGate> {
        &self.gates
    }

    /// The buffers that opened.
    pub fn stores(&self) -> &BTreeMap<PlatformId, Arc<RedbStore>> {
        &self.stores
    }

    /// Flights under way (for tests and metrics).
    pub fn in_flight(&self) -> usize {
        self.flights.lock().expect("flights lock").table.in_flight()
    }

    /// Answers `req` from the buffer, a flight in progress, or the platform through
    /// `upstream` (called at most once per flight, in a task of its own).
    pub async fn fetch<F, Fut>(
        self: &Arc<Self>,
        req: Request,
        mut progress: Option<ProgressSink>,
        upstream: F,
    ) -> Result<Answer, FetchError>
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<Upstream, PlatformError>> + Send + 'static,
    {
        let platform = req.key.platform();
        if let Some((payload, parsed)) = self.lookup(&req.key).await {
            self.count(&req, Served::Cached);
            return Ok(Answer {
                payload,
                parsed,
                served: Served::Cached,
            });
        }

        let waiter = WaiterId(self.next_waiter.fetch_add(1, Ordering::Relaxed));
        let (begin, mut rx) = {
            let mut f = self.flights.lock().expect("flights lock");
            let begin = f.table.begin(&req.key, waiter, &req.session);
            let rx = match begin {
                Begin::Lead(id) => {
                    let (tx, rx) = watch::channel(None);
                    f.channels.insert(
                        id,
                        FlightChannels {
                            outcome: tx,
                            task: None,
                            ticket: None,
                        },
                    );
                    rx
                }
                // Present: a flight in the table has its channels.
                Begin::Join { flight, .. } => f.channels[&flight].outcome.subscribe(),
            };
            (begin, rx)
        };
        let (flight, served, join) = match begin {
            Begin::Lead(id) => {
                let task =
                    tokio::spawn(Arc::clone(self).lead(id, req.key.clone(), req.session.clone(), req.cost, upstream));
                if let Some(ch) = self.flights.lock().expect("flights lock").channels.get_mut(&id) {
                    ch.task = Some(task.abort_handle());
                }
                (id, Served::Fetched, None)
            }
            Begin::Join { flight, queued } => (flight, Served::Coalesced, queued),
        };

        // Waiting for the flight's outcome; leaving early (from here on, the join below
        // included) withdraws this waiter.
        let mut guard = WaiterGuard {
            fetcher: Arc::clone(self),
            flight,
            waiter,
            platform,
            done: false,
        };
        if let Some(ticket) = join {
            self.join_entry(platform, flight, ticket, waiter, &req.session).await;
        }
        let mut tick = tokio::time::interval(Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        let outcome = loop {
            if let Some(outcome) = rx.borrow_and_update().clone() {
                break outcome;
            }
            tokio::select! {
                changed = rx.changed() => {
                    if changed.is_err() {
                        // The flight ended without an outcome: its task was aborted.
                        break Arc::new(Err(FetchError::Cancelled));
                    }
                }
                _ = tick.tick(), if progress.is_some() => {
                    let ticket = self.flights.lock().expect("flights lock").channels.get(&flight).and_then(|c| c.ticket);
                    if let (Some(ticket), Some(gate), Some(sink)) = (ticket, self.gates.get(&platform), progress.as_mut())
                        && let Some(position) = gate.position(ticket).await
                    {
                        sink(position);
                    }
                }
            }
        };
        guard.done = true;
        match &*outcome {
            Ok((payload, stale)) => {
                let served = if *stale { Served::Stale } else { served };
                self.count(&req, served);
                Ok(Answer {
                    payload: Arc::clone(payload),
                    parsed: None,
                    served,
                })
            }
            Err(e) => Err(e.clone()),
        }
    }

    /// The flight's work: wait at the gate, call the platform, feed back, store, tell
    /// every waiter.
    async fn lead<F, Fut>(self: Arc<Self>, id: FlightId, key: CacheKey, session: SessionKey, cost: Units, upstream: F)
    where
        F: FnOnce() -> Fut + Send + 'static,
        Fut: Future<Output = Result<Upstream, PlatformError>> + Send + 'static,
    {
        let platform = key.platform();
        let label = PlatformLabel {
            platform: platform.as_str(),
        };
        let gate = self.gates.get(&platform).cloned();
        // Who was charged for the call, and how much (none without a gate).
        let admitted: Result<Option<(SessionKey, Charge)>, FetchError> = match &gate {
            None => Ok(None),
            Some(gate) => {
                let me = Arc::clone(&self);
                gate.acquire_with(&session, cost, Duration::MAX, move |q| {
                    if let Queued::Ticket(ticket) = q {
                        let unjoined = {
                            let mut f = me.flights.lock().expect("flights lock");
                            f.table.queued(id, ticket);
                            if let Some(ch) = f.channels.get_mut(&id) {
                                ch.ticket = Some(ticket);
                            }
                            f.table.unjoined(id)
                        };
                        // Requests of other sessions that joined before the call was
                        // queued get their entries now, so the call goes at the best of
                        // their positions (the leader's session shares the call's own).
                        if !unjoined.is_empty() {
                            let me = Arc::clone(&me);
                            tokio::spawn(async move {
                                for (waiter, session) in unjoined {
                                    me.join_entry(platform, id, ticket, waiter, &session).await;
                                }
                            });
                        }
                    }
                })
                .await
                .map(|admission| {
                    self.metrics
                        .platform_wait
                        .get_or_create(&label)
                        .observe(admission.waited().as_secs_f64());
                    let charge = admission.charge();
                    Some((admission.session, charge))
                })
                .map_err(FetchError::from)
            }
        };
        {
            let mut f = self.flights.lock().expect("flights lock");
            f.table.sent(id);
            if let Some(ch) = f.channels.get_mut(&id) {
                ch.ticket = None;
            }
        }
        let outcome = match admitted {
            Err(e) => Err(e),
            Ok(charged) => {
                let result = upstream().await;
                self.metrics
                    .platform_calls
                    .get_or_create(&CallLabels {
                        platform: platform.as_str(),
                        outcome: outcome_label(&result),
                    })
                    .inc();
                if let Some(gate) = &gate {
                    match &result {
                        Ok(Upstream { rate: Some(rate), .. }) => {
                            if let Some(remaining) = rate.remaining {
                                gate.remaining(remaining, rate.reset);
                            }
                        }
                        Err(PlatformError::RateLimited { retry_after, .. }) => {
                            gate.retry_after(*retry_after);
                            // The platform counted nothing: the session does not pay for it
                            // (a requeued call is charged at its next admission).
                            if let Some((session, charge)) = charged {
                                gate.refund(session, charge);
                            }
                        }
                        _ => {}
                    }
                }
                match result {
                    Ok(up) => {
                        let payload = Arc::new(up.payload);
                        self.store(&key, Arc::clone(&payload)).await;
                        Ok((payload, false))
                    }
                    Err(e) => match self.stale(&key).await {
                        Some(payload) => Ok((payload, true)),
                        None => Err(FetchError::Platform(e)),
                    },
                }
            }
        };
        let mut f = self.flights.lock().expect("flights lock");
        f.table.finish(id);
        if let Some(ch) = f.channels.remove(&id) {
            let _ = ch.outcome.send(Some(Arc::new(outcome)));
        }
    }

    /// Gives `waiter` of `session` its own entry for the queued call `ticket` of `flight`
    /// (R-D3: the call then goes at the best of its waiters' positions). The entry is
    /// recorded even when it is one the session already had (the call itself, for the
    /// leader's session): the waiter then shares it, and the leader leaving does not
    /// withdraw its session's place. An entry the table finds standing for nobody is
    /// withdrawn.
    async fn join_entry(
        &self,
        platform: PlatformId,
        flight: FlightId,
        ticket: Ticket,
        waiter: WaiterId,
        session: &SessionKey,
    ) {
        let Some(gate) = self.gates.get(&platform) else { return };
        let Ok(entry) = gate.join(session, ticket).await else {
            return;
        };
        let orphan = self
            .flights
            .lock()
            .expect("flights lock")
            .table
            .joined_entry(flight, waiter, entry);
        if let Some(entry) = orphan {
            gate.cancel(entry);
        }
    }

    async fn lookup(&self, key: &CacheKey) -> Option<(Arc<Vec<u8>>, Option<Arc<serde_json::Value>>)> {
        let now = wall_now();
        if let Some((payload, value)) = self.hot.lock().expect("hot lock").get(key, now) {
            return Some((payload, Some(value)));
        }
        let store = Arc::clone(self.stores.get(&key.platform())?);
        let k = key.clone();
        let found = tokio::task::spawn_blocking(move || store.lookup(&k, now)).await.ok()?;
        match found {
            Ok(Lookup::Hit(value)) => {
                let expires_at = value.header().expires_at;
                let payload = Arc::new(value.into_payload());
                let parsed = serde_json::from_slice::<serde_json::Value>(&payload).ok().map(Arc::new);
                if let Some(parsed) = &parsed {
                    self.hot
                        .lock()
                        .expect("hot lock")
                        .put(key, Arc::clone(&payload), Arc::clone(parsed), expires_at);
                }
                Some((payload, parsed))
            }
            Ok(_) => None,
            Err(error) => {
                tracing::warn!(%error, "buffer lookup failed; asking the platform");
                None
            }
        }
    }

    async fn store(&self, key: &CacheKey, payload: Arc<Vec<u8>>) {
        let Some(store) = self.stores.get(&key.platform()).cloned() else {
            return;
        };
        let key = key.clone();
        let stored =
            tokio::task::spawn_blocking(move || store.put(&key, &Success::new(payload.as_ref().clone()), wall_now()))
                .await;
        if let Ok(Err(error)) = stored {
            tracing::warn!(%error, "could not buffer an answer");
        }
    }

    async fn stale(&self, key: &CacheKey) -> Option<Arc<Vec<u8>>> {
        if key.class() != DataClass::Reference {
            return None;
        }
        let store = Arc::clone(self.stores.get(&key.platform())?);
        let key = key.clone();
        match tokio::task::spawn_blocking(move || store.lookup_stale_if_error(&key, wall_now()))
            .await
            .ok()?
        {
            Ok(StaleLookup::Fresh(v) | StaleLookup::Stale(v)) => Some(Arc::new(v.into_payload())),
            _ => None,
        }
    }

    fn count(&self, req: &Request, served: Served) {
        let kind = served.duplicate_kind();
        self.metrics
            .requests
            .get_or_create(&RequestLabels {
                platform: req.key.platform().as_str(),
                tool: req.tool.to_owned(),
                kind: kind.as_str(),
            })
            .inc();
        let spike = self
            .monitor
            .lock()
            .expect("monitor lock")
            .record(self.clock.now(), &req.client, kind);
        if let Some(spike) = spike {
            self.metrics.duplicate_spikes.inc();
            tracing::warn!(client = %spike.client, requests = spike.requests, duplicates = spike.duplicates, "{spike}");
        }
    }

    fn leave(&self, flight: FlightId, waiter: WaiterId, platform: PlatformId) {
        let mut f = self.flights.lock().expect("flights lock");
        match f.table.leave(flight, waiter) {
            Leave::Others {
                cancel_entry: Some(entry),
            } => {
                if let Some(gate) = self.gates.get(&platform) {
                    gate.cancel(entry);
                }
            }
            Leave::Withdraw { ticket } => {
                if let Some(ch) = f.channels.remove(&flight) {
                    if let Some(task) = ch.task {
                        task.abort();
                    }
                    if let (Some(ticket), Some(gate)) = (ticket.or(ch.ticket), self.gates.get(&platform)) {
                        gate.cancel_flight(ticket);
                    }
                }
            }
            Leave::Others { cancel_entry: None } | Leave::Orphaned | Leave::Unknown => {}
        }
    }
}

fn outcome_label(result: &Result<Upstream, PlatformError>) -> &'static str {
    match result {
        Ok(_) => "ok",
        Err(PlatformError::RateLimited { .. }) => "rate_limited",
        Err(PlatformError::Timeout { .. }) => "timeout",
        Err(PlatformError::Unreachable { .. }) => "unreachable",
        Err(PlatformError::BadRequest { .. }) => "bad_request",
        Err(PlatformError::NotFound { .. }) => "not_found",
        Err(PlatformError::Upstream { .. }) => "upstream_error",
        Err(PlatformError::Garbage { .. }) => "garbage",
        Err(_) => "other",
    }
}

/// Withdraws a waiter that stops waiting before its flight's outcome.
struct WaiterGuard {
    fetcher: Arc<Fetcher>,
    flight: FlightId,
    waiter: WaiterId,
    platform: PlatformId,
    done: bool,
}

impl Drop for WaiterGuard {
    fn drop(&mut self) {
        if !self.done {
            self.fetcher.leave(self.flight, self.waiter, self.platform);
        }
    }
}
