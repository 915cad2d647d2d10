//! The invariant checker, consulted on every admission and after every event.
//!
//! Under the fair policy it asserts:
//! - **limit**: no platform refused a call for being over its limit (no 429 caused by
//!   BesluitBron; throttling faults are the platform's own and do not count);
//! - **FIFO**: within a session and platform, calls are admitted in submission order;
//! - **counted**: every admission debited the scheduler (its counters moved by exactly
//!   the admission) and charged `min(requested, C)`;
//! - **starvation bound**: a waiting session is admitted within
//!   [`besluitbron_core::FairScheduler::starvation_bound`] of its wait start (the later of
//!   its oldest waiting call's submission and its last admission), checked only over
//!   waits during which the bound's precondition held throughout: the waiting sessions'
//!   head calls together fit in the bucket and no Retry-After was in force;
//! - **liveness**: no call is still waiting when the run has nothing left to do.
//!
//! Under both policies: nothing is sent to a platform before its Retry-After has passed.
//!
//! With deduplication (fair policy, calls with keys), [`FlightChecker`] adds:
//! - **one upstream call per key**: no call goes out for a key while another flight's
//!   call for it is still out;
//! - **one payer per flight**: a flight is admitted at most once, and exactly one of its
//!   calls (the owner of the admitted entry) is charged;
//! - **outcome to every waiter**: the waiters the core's flight table hands the outcome
//!   to are exactly the calls that began or joined the flight and did not leave, and no
//!   call gets two outcomes;
//! - **no failure stored**: the buffer holds exactly the keys a successful flight
//!   stored, a key whose flight failed is in the buffer only if an earlier success put
//!   it there, and every buffer hit carries the payload of a successful flight of its key.
//!
//! Invariants of the checker itself: it keeps its own mirror of who waits where, built
//! only from what the engine submitted and what the gates handed out, never from the
//! scheduler's internals.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use besluitbron_core::cache::{CacheKey, CacheStore, MemoryStore};
use besluitbron_core::dedup::FlightId;
use besluitbron_core::{Instant, PlatformId, Units};

use crate::policy::{CallId, Gate, PolicyKind};

/// What the checker needs to know about a call.
#[derive(Clone, Copy, Debug)]
pub struct CallView {
    /// Session index.
    pub session: u32,
    /// Platform index in [`PlatformId::ALL`].
    pub platform: usize,
    /// Units asked for.
    pub requested: Units,
    /// When the call was (last) submitted to the gate.
    pub queued_at: Instant,
}

/// The checker's state.
#[derive(Debug)]
pub struct Checker {
    policy: PolicyKind,
    waiting: Vec<BTreeMap<u32, SessionQueue>>,
    last_admit: Vec<BTreeMap<u32, Instant>>,
    broken_at: Vec<Option<Instant>>,
    retry_until: Vec<Instant>,
    /// Admissions checked.
    pub admissions_checked: u64,
    /// Events after which the invariants were checked.
    pub events_checked: u64,
    /// Admissions whose wait the starvation bound covered (its precondition held).
    pub bound_checked: u64,
    /// The deduplication invariants.
    pub flights: FlightChecker,
}

type Verdict = Result<(), String>;

/// One session's waiting calls at one platform: (call, requested units, submitted at).
type SessionQueue = VecDeque<(CallId, Units, Instant)>;

impl Checker {
    /// A checker for a run under `policy`.
    pub fn new(policy: PolicyKind) -> Checker {
        let n = PlatformId::ALL.len();
        Checker {
            policy,
            waiting: vec![BTreeMap::new(); n],
            last_admit: vec![BTreeMap::new(); n],
            broken_at: vec![None; n],
            retry_until: vec![Instant::ZERO; n],
            admissions_checked: 0,
            events_checked: 0,
            bound_checked: 0,
            flights: FlightChecker::default(),
        }
    }

    /// A call was submitted to its gate.
    pub fn on_submit(&mut self, call: CallId, v: CallView) {
        self.waiting[v.platform]
            .entry(v.session)
            .or_default()
            .push_back((call, v.requested, v.queued_at));
    }

    /// A waiting call left without an admission (cancelled, refused).
    pub fn on_leave(&mut self, call: CallId, v: CallView) {
        if let Some(q) = self.waiting[v.platform].get_mut(&v.session) {
            q.retain(|&(c, _, _)| c != call);
            if q.is_empty() {
                self.waiting[v.platform].remove(&v.session);
            }
        }
    }

    /// The platform sent a Retry-After ending at `until`.
    pub fn on_retry_after(&mut self, platform: usize, until: Instant) {
        self.retry_until[platform] = self.retry_until[platform].max(until);
        self.broken_at[platform] = Some(self.broken_at[platform].map_or(until, |b| b.max(until)));
    }

    /// A gate handed out `call` at `now`, charging `charged`.
    pub fn on_admit(
        &mut self,
        now: Instant,
        call: CallId,
        v: CallView,
        charged: Units,
        counted: bool,
        gate: &Gate,
    ) -> Verdict {
        self.admissions_checked += 1;
        let p = v.platform;
        let pid = PlatformId::ALL[p];
        if now < self.retry_until[p] {
            return Err(format!(
                "call {call} went to {pid} at {now}, before its Retry-After ended at {}",
                self.retry_until[p]
            ));
        }
        let Some(queue) = self.waiting[p].get(&v.session) else {
            return Err(format!("call {call} was admitted at {pid} but was not waiting there"));
        };
        let Some(pos) = queue.iter().position(|&(c, _, _)| c == call) else {
            return Err(format!("call {call} was admitted at {pid} but was not waiting there"));
        };
        let head_queued_at = queue[0].2;
        if self.policy == PolicyKind::Fair {
            if pos != 0 {
                return Err(format!(
                    "FIFO broken at {pid}: call {call} admitted before call {} of the same session",
                    queue[0].0
                ));
            }
            if !counted {
                return Err(format!("call {call} went to {pid} uncounted"));
            }
            if let Some(fair) = gate.fair() {
                let stats = fair.scheduler.stats();
                if stats.admitted_units != fair.handed_out_units || stats.admitted_calls != fair.handed_out_calls {
                    return Err(format!(
                        "admission of call {call} at {pid} not counted exactly: scheduler counted {} calls / {} units, \
                         {} calls / {} units went out",
                        stats.admitted_calls, stats.admitted_units, fair.handed_out_calls, fair.handed_out_units
                    ));
                }
                let limit = fair.scheduler.config().limit;
                if charged != v.requested.min(limit.capacity) {
                    return Err(format!(
                        "call {call} at {pid} asked {} and was charged {charged}",
                        v.requested
                    ));
                }
                let wait_start = self.wait_start(p, v.session, head_queued_at);
                if self.bound_applies(p, wait_start) {
                    self.bound_checked += 1;
                    let bound = fair.scheduler.starvation_bound(v.requested);
                    if now.saturating_since(wait_start) > bound {
                        return Err(format!(
                            "starvation bound broken at {pid}: session #{} waited {:?} from {wait_start} (bound {:?})",
                            v.session,
                            now.saturating_since(wait_start),
                            bound
                        ));
                    }
                }
            }
        }
        let queue = self.waiting[p].get_mut(&v.session).expect("found above");
        queue.remove(pos);
        if queue.is_empty() {
            self.waiting[p].remove(&v.session);
        }
        self.last_admit[p].insert(v.session, now);
        Ok(())
    }

    fn wait_start(&self, p: usize, session: u32, head_queued_at: Instant) -> Instant {
        self.last_admit[p]
            .get(&session)
            .map_or(head_queued_at, |&a| a.max(head_queued_at))
    }

    fn bound_applies(&self, p: usize, wait_start: Instant) -> bool {
        self.broken_at[p].is_none_or(|b| b < wait_start)
    }

    /// Records whether each platform's starvation-bound precondition holds right now.
    pub fn note_precondition(&mut self, now: Instant, gates: &[Gate]) {
        for (p, gate) in gates.iter().enumerate() {
            let Some(limit) = gate.local_limit() else { continue };
            let heads: Units = self.waiting[p]
                .values()
                .filter_map(|q| q.front())
                .fold(Units::ZERO, |sum, &(_, cost, _)| sum + cost.min(limit.capacity));
            if heads > limit.capacity || now < self.retry_until[p] {
                self.broken_at[p] = Some(self.broken_at[p].map_or(now, |b| b.max(now)));
            }
        }
    }

    /// The checks after an event at `now`.
    pub fn after_event(&mut self, now: Instant, gates: &[Gate], over_limit_total: u64) -> Verdict {
        self.events_checked += 1;
        if self.policy != PolicyKind::Fair {
            return Ok(());
        }
        if over_limit_total > 0 {
            return Err(format!(
                "a platform refused {over_limit_total} call(s) as over its limit under the fair policy"
            ));
        }
        for (p, gate) in gates.iter().enumerate() {
            let Some(fair) = gate.fair() else { continue };
            let mirrored: usize = self.waiting[p].values().map(VecDeque::len).sum();
            if mirrored != fair.waiting_calls() || mirrored != fair.scheduler.queued() {
                return Err(format!(
                    "{}: {mirrored} calls should wait, the scheduler holds {}",
                    PlatformId::ALL[p],
                    fair.scheduler.queued()
                ));
            }
            for (&session, q) in &self.waiting[p] {
                let &(call, cost, queued_at) = q.front().expect("empty queues are removed");
                let wait_start = self.wait_start(p, session, queued_at);
                let bound = fair.scheduler.starvation_bound(cost);
                if self.bound_applies(p, wait_start) && now.saturating_since(wait_start) > bound {
                    return Err(format!(
                        "starvation bound broken at {}: call {call} of session #{session} still waits at {now}, \
                         wait start {wait_start}, bound {bound:?}",
                        PlatformId::ALL[p]
                    ));
                }
            }
        }
        Ok(())
    }

    /// The check when the run has nothing left to do.
    pub fn at_end(&self) -> Verdict {
        for (p, sessions) in self.waiting.iter().enumerate() {
            if let Some((session, q)) = sessions.iter().next() {
                return Err(format!(
                    "call {} of session #{session} still waits at {} with nothing left to wake it",
                    q[0].0,
                    PlatformId::ALL[p]
                ));
            }
        }
        Ok(())
    }
}

/// The deduplication invariants, from what the engine reports of each flight: its own
/// record of waiters, upstream calls and stored keys, never the flight table's.
#[derive(Debug, Default)]
pub struct FlightChecker {
    key_of: BTreeMap<FlightId, CacheKey>,
    waiters: BTreeMap<FlightId, BTreeSet<CallId>>,
    upstream: BTreeMap<CacheKey, FlightId>,
    payer: BTreeMap<FlightId, (CallId, u32)>,
    succeeded: BTreeSet<FlightId>,
    stored: BTreeMap<CacheKey, FlightId>,
    stored_per_platform: [u64; PlatformId::ALL.len()],
    failed_keys: Vec<CacheKey>,
    delivered: BTreeSet<CallId>,
    /// Flights whose outcome was checked.
    pub outcomes_checked: u64,
}

fn platform_slot(key: &CacheKey) -> usize {
    PlatformId::ALL
        .iter()
        .position(|&p| p == key.platform())
        .expect("every platform is in ALL")
}

impl FlightChecker {
    /// `call` started flight `id` for `key`.
    pub fn on_begin(&mut self, id: FlightId, key: CacheKey, call: CallId) {
        self.key_of.insert(id, key);
        self.waiters.entry(id).or_default().insert(call);
    }

    /// `call` joined flight `id`.
    pub fn on_join(&mut self, id: FlightId, call: CallId) -> Verdict {
        match self.waiters.get_mut(&id) {
            Some(w) => {
                w.insert(call);
                Ok(())
            }
            None => Err(format!("call {call} joined flight {}, which is not under way", id.0)),
        }
    }

    /// `call` stopped waiting for flight `id`.
    pub fn on_left(&mut self, id: FlightId, call: CallId) {
        if let Some(w) = self.waiters.get_mut(&id) {
            w.remove(&call);
        }
    }

    /// Flight `id` was withdrawn before it went out.
    pub fn on_withdrawn(&mut self, id: FlightId) -> Verdict {
        let left = self.waiters.remove(&id).map_or(0, |w| w.len());
        if left > 0 {
            return Err(format!(
                "flight {} was withdrawn while {left} call(s) still waited for it",
                id.0
            ));
        }
        if self.payer.contains_key(&id) {
            return Err(format!("flight {} was withdrawn after it went out", id.0));
        }
        self.key_of.remove(&id);
        Ok(())
    }

    /// Flight `id` for `key` went out, charged to `payer` of session `session`.
    pub fn on_sent(&mut self, id: FlightId, key: &CacheKey, payer: CallId, session: u32) -> Verdict {
        if let Some((first, _)) = self.payer.insert(id, (payer, session)) {
            return Err(format!(
                "flight {} was admitted twice (calls {first} and {payer}): charged twice",
                id.0
            ));
        }
        if let Some(other) = self.upstream.insert(key.clone(), id) {
            return Err(format!(
                "two upstream calls for one key at once: flights {} and {}",
                other.0, id.0
            ));
        }
        Ok(())
    }

    /// A success of flight `id` was stored under `key`.
    pub fn on_stored(&mut self, key: &CacheKey, id: FlightId) {
        self.succeeded.insert(id);
        if self.stored.insert(key.clone(), id).is_none() {
            self.stored_per_platform[platform_slot(key)] += 1;
        }
    }

    /// Flight `id` ended (`ok` or not; `sent` when it went out); the engine handed its
    /// outcome to `waiters`; `paid` says for each of its calls whether it was charged.
    pub fn on_outcome(
        &mut self,
        id: FlightId,
        ok: bool,
        sent: bool,
        waiters: &[CallId],
        paid: &[(CallId, bool)],
    ) -> Verdict {
        self.outcomes_checked += 1;
        let expected = self.waiters.remove(&id).unwrap_or_default();
        let got: BTreeSet<CallId> = waiters.iter().copied().collect();
        if got.len() != waiters.len() || got != expected {
            return Err(format!(
                "flight {}: outcome went to calls {got:?}, its waiters were {expected:?}",
                id.0
            ));
        }
        if let Some(&twice) = waiters.iter().find(|&&c| !self.delivered.insert(c)) {
            return Err(format!("call {twice} received a second outcome (flight {})", id.0));
        }
        let payers: Vec<CallId> = paid.iter().filter(|&&(_, p)| p).map(|&(c, _)| c).collect();
        let admitted = self.payer.remove(&id);
        match (sent, admitted, payers.as_slice()) {
            (true, Some((payer, _)), [only]) if *only == payer => {}
            (false, None, []) => {}
            _ => {
                return Err(format!(
                    "flight {}: charged calls {payers:?}, admitted entry {admitted:?}: a flight is charged to \
                     exactly the session whose entry went",
                    id.0
                ));
            }
        }
        let key = self
            .key_of
            .remove(&id)
            .unwrap_or_else(|| panic!("flight {} began", id.0));
        if self.upstream.get(&key) == Some(&id) {
            self.upstream.remove(&key);
        }
        if ok != self.succeeded.contains(&id) {
            return Err(format!("flight {}: outcome ok={ok} but stored={}", id.0, !ok));
        }
        if !ok {
            self.failed_keys.push(key);
        }
        Ok(())
    }

    /// `call` was answered from the buffer with `payload` for `key`.
    pub fn on_hit(&mut self, call: CallId, key: &CacheKey, payload: &[u8]) -> Verdict {
        self.delivered.insert(call);
        let from = std::str::from_utf8(payload)
            .ok()
            .and_then(|s| s.strip_prefix("flight="))
            .and_then(|n| n.parse::<u64>().ok())
            .map(FlightId);
        match from {
            Some(id) if self.succeeded.contains(&id) && self.stored.get(key) == Some(&id) => Ok(()),
            _ => Err(format!(
                "call {call} was answered from the buffer with {:?}, not a stored success of its key",
                String::from_utf8_lossy(payload)
            )),
        }
    }

    /// After every event: the buffers hold exactly what successes stored.
    pub fn after_event(&mut self, stores: &[MemoryStore]) -> Verdict {
        for (p, store) in stores.iter().enumerate() {
            let entries = store.stats().map_err(|e| e.to_string())?.entries();
            if entries != self.stored_per_platform[p] {
                return Err(format!(
                    "{}: the buffer holds {entries} entries, successes stored {}",
                    PlatformId::ALL[p],
                    self.stored_per_platform[p]
                ));
            }
        }
        for key in std::mem::take(&mut self.failed_keys) {
            let store = &stores[platform_slot(&key)];
            if store.contains(&key) != self.stored.contains_key(&key) {
                return Err(format!("a failed flight's key is in the buffer: {key:?}"));
            }
        }
        Ok(())
    }

    /// The check when the run is over: no flight is left under way.
    pub fn at_end(&self) -> Verdict {
        match self.waiters.iter().next() {
            Some((id, w)) => Err(format!("flight {} still has waiters {w:?} at the end", id.0)),
            None => Ok(()),
        }
    }
}
