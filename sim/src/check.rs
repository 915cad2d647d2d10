//! The invariant checker, consulted on every admission and after every event.
//!
//! Its stations are the run's upstream services (a platform's calls may reach two, and
//! several platforms may share one). Under the fair policy it asserts, from the decisions
//! the budget groups' paths record (their events) and what the simulated services saw —
//! never from the paths' internals:
//! - **limit**: no service refused a call for being over its limit, whichever platform's
//!   (no 429 caused by BesluitBron; throttling faults are the service's own and do not
//!   count);
//! - **FIFO**: within a session and service, entries are admitted in the order queued;
//! - **room goes at once**: a call admitted without queueing found nobody waiting;
//! - **counted**: every admission debited the scheduler (its counter moved by exactly
//!   one per admission seen) and charged `min(requested, C)`;
//! - **starvation bound**: a waiting session is admitted within
//!   [`besluitbron_core::FairScheduler::starvation_bound`] of its wait start (the later of
//!   its oldest waiting entry's queueing and its last admission), checked only over
//!   waits during which the bound's precondition held throughout: the waiting sessions'
//!   head calls together fit in the bucket and no Retry-After was in force;
//! - **the mirror agrees**: as many entries wait as the scheduler holds.
//!
//! Under both policies: nothing is sent to a platform before its Retry-After has passed,
//! and no call is still waiting when the run has nothing left to do.
//!
//! With deduplication, [`FlightChecker`] adds:
//! - **one upstream call per key**: no attempt goes out for a key while another one for
//!   it is still out;
//! - **one answer per call**: every call that did not leave gets exactly one outcome;
//! - **no failure stored**: every buffer entry is a success's, counted per platform, and
//!   every buffer hit carries the payload of a successful attempt of its key.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::ops::Bound;

use besluitbron_core::cache::{CacheKey, CacheStore, MemoryStore};
use besluitbron_core::dedup::FlightId;
use besluitbron_core::path::Attempt;
use besluitbron_core::{
    AdmissionRecord, AdmitRule, CallTicket, EntryTicket, FairScheduler, Instant, LimitConfig, PlatformId, Units,
};

use crate::dense::IdMap;
use crate::policy::{CallId, PolicyKind};

/// What the checker needs to know about a legacy call.
#[derive(Clone, Copy, Debug)]
pub struct CallView {
    /// Session index.
    pub session: u32,
    /// Station index: the call's service's index among the run's services.
    pub platform: usize,
    /// Units asked for.
    pub requested: Units,
    /// When the call was (last) submitted to the gate.
    pub queued_at: Instant,
}

/// One waiting entry in the checker's mirror.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    entry: EntryTicket,
    call: CallTicket,
    cost: Units,
    queued_at: Instant,
}

/// One station's mirror of its waiting entries, rebuilt from the path's events, with the
/// indexes that keep every update and the checks after an event independent of how many
/// sessions wait.
#[derive(Debug, Default)]
struct Mirror {
    /// Each waiting session's entries, in the order queued.
    queues: BTreeMap<u32, VecDeque<Waiting>>,
    /// The sessions holding entries of each waiting call (a session once per entry).
    by_call: IdMap<CallTicket, Holders>,
    /// The session of each waiting entry.
    by_entry: IdMap<EntryTicket, u32>,
    /// Entries waiting.
    len: usize,
    /// The waiting sessions' head calls together, each counted at most C.
    heads: Units,
    /// C of the station's kept limit (`None`: it keeps none).
    capacity: Option<Units>,
    /// Each waiting session's last admission: its wait starts at the later of that and
    /// its head's queueing. Only waiting sessions' are kept: a call queued later is
    /// queued at or after it, so a session that stopped waiting starts afresh.
    last_admit: BTreeMap<u32, Instant>,
    /// Each waiting session's wait start ([`Mirror::wait_start`]), and the same ordered
    /// by (start, session): the sessions that could have waited beyond any bound are the
    /// oldest starts, so the check after an event looks at those only.
    start_of: IdMap<u32, Instant>,
    by_start: BTreeSet<(Instant, u32)>,
    /// Entries taken out by the last removal (kept to spare an allocation per removal).
    removed: Vec<Waiting>,
    /// The least starvation bound here (a window), in nanoseconds, once asked.
    least_bound_ns: Option<u64>,
}

impl Mirror {
    fn head_units(&self, w: Option<&Waiting>) -> Units {
        match (w, self.capacity) {
            (Some(w), Some(c)) => w.cost.min(c),
            (Some(w), None) => w.cost,
            (None, _) => Units::ZERO,
        }
    }

    fn push(&mut self, session: u32, w: Waiting) {
        let q = self.queues.entry(session).or_default();
        let was_empty = q.is_empty();
        q.push_back(w);
        if was_empty {
            self.heads += self.head_units(Some(&w));
            self.restart(session);
        }
        match self.by_call.get_mut(&w.call) {
            Some(holders) => holders.add(session),
            None => {
                self.by_call.insert(w.call, Holders::One(session));
            }
        }
        self.by_entry.insert(w.entry, session);
        self.len += 1;
    }

    /// Removes `session`'s entries that `gone` picks, keeping the indexes and the heads'
    /// sum.
    fn remove_from(&mut self, session: u32, gone: impl Fn(&Waiting) -> bool) {
        let Some(q) = self.queues.get_mut(&session) else { return };
        let before = q.front().copied();
        let mut removed = std::mem::take(&mut self.removed);
        q.retain(|w| {
            let g = gone(w);
            if g {
                removed.push(*w);
            }
            !g
        });
        let after = q.front().copied();
        let empty = q.is_empty();
        let head_moved = before.map(|w| w.entry) != after.map(|w| w.entry);
        if head_moved {
            self.heads = self.heads - self.head_units(before.as_ref()) + self.head_units(after.as_ref());
        }
        for w in removed.drain(..) {
            self.len -= 1;
            self.by_entry.remove(&w.entry);
            if self.by_call.get_mut(&w.call).is_some_and(|h| h.remove(session)) {
                self.by_call.remove(&w.call);
            }
        }
        self.removed = removed;
        if empty {
            self.queues.remove(&session);
            self.last_admit.remove(&session);
        }
        if head_moved {
            self.restart(session);
        }
    }

    /// Session `session`'s wait start: the later of its last admission and its head's
    /// queueing (`None`: it does not wait).
    fn wait_start(&self, session: u32) -> Option<Instant> {
        let head = self.queues.get(&session)?.front()?;
        Some(
            self.last_admit
                .get(&session)
                .map_or(head.queued_at, |&a| a.max(head.queued_at)),
        )
    }

    /// Session `session`'s wait start may have moved (its head or its last admission
    /// changed): the index follows.
    fn restart(&mut self, session: u32) {
        let now = self.wait_start(session);
        let was = match now {
            Some(start) => self.start_of.insert(session, start),
            None => self.start_of.remove(&session),
        };
        if was != now {
            if let Some(was) = was {
                self.by_start.remove(&(was, session));
            }
            if let Some(start) = now {
                self.by_start.insert((start, session));
            }
        }
    }

    fn remove_entry(&mut self, entry: EntryTicket) {
        if let Some(&session) = self.by_entry.get(&entry) {
            self.remove_from(session, |w| w.entry == entry);
        }
    }

    fn remove_call(&mut self, call: CallTicket) {
        let sessions = match self.by_call.get(&call) {
            None => return,
            Some(&Holders::One(session)) => return self.remove_from(session, |w| w.call == call),
            Some(holders) => holders.sessions(),
        };
        for session in sessions {
            self.remove_from(session, |w| w.call == call);
        }
    }
}

/// The sessions holding entries of one waiting call: almost always one, kept without an
/// allocation then.
#[derive(Clone, Debug)]
enum Holders {
    One(u32),
    Many(Vec<u32>),
}

impl Holders {
    fn add(&mut self, session: u32) {
        *self = match std::mem::replace(self, Holders::Many(Vec::new())) {
            Holders::One(s) => Holders::Many(vec![s, session]),
            Holders::Many(mut v) => {
                v.push(session);
                Holders::Many(v)
            }
        };
    }

    /// Removes one of `session`'s holdings; whether none is left.
    fn remove(&mut self, session: u32) -> bool {
        match self {
            Holders::One(s) => *s == session,
            Holders::Many(v) => {
                if let Some(i) = v.iter().position(|&x| x == session) {
                    v.swap_remove(i);
                }
                v.is_empty()
            }
        }
    }

    fn sessions(&self) -> Vec<u32> {
        match self {
            Holders::One(s) => vec![*s],
            Holders::Many(v) => {
                let mut v = v.clone();
                v.sort_unstable();
                v.dedup();
                v
            }
        }
    }
}

/// The checker's state.
#[derive(Debug)]
pub struct Checker {
    policy: PolicyKind,
    /// Each station's name (a platform, or a platform's text host).
    names: Vec<String>,
    mirrors: Vec<Mirror>,
    broken_at: Vec<Option<Instant>>,
    retry_until: Vec<Instant>,
    admitted: Vec<u64>,
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

impl Checker {
    /// A checker for a run under `policy`, over the stations named `names` (the run's
    /// services in order) with the limits BesluitBron keeps there (`limits`, one per
    /// station), and the buffers of `platforms` (the run's platforms in order).
    pub fn new(
        policy: PolicyKind,
        names: Vec<String>,
        limits: &[Option<LimitConfig>],
        platforms: Vec<PlatformId>,
    ) -> Checker {
        let n = names.len();
        Checker {
            policy,
            names,
            mirrors: (0..n)
                .map(|p| Mirror {
                    capacity: limits.get(p).copied().flatten().map(|l| l.capacity),
                    ..Mirror::default()
                })
                .collect(),
            broken_at: vec![None; n],
            retry_until: vec![Instant::ZERO; n],
            admitted: vec![0; n],
            admissions_checked: 0,
            events_checked: 0,
            bound_checked: 0,
            flights: FlightChecker::new(platforms),
        }
    }

    /// Session `session`'s `entry` for `call` was queued at platform `p` at `at`.
    pub fn on_queue(&mut self, p: usize, session: u32, entry: EntryTicket, call: CallTicket, cost: Units, at: Instant) {
        self.mirrors[p].push(
            session,
            Waiting {
                entry,
                call,
                cost,
                queued_at: at,
            },
        );
    }

    /// A waiting entry was withdrawn.
    pub fn on_cancel(&mut self, p: usize, entry: EntryTicket) {
        self.mirrors[p].remove_entry(entry);
    }

    /// Every entry of a waiting call was withdrawn.
    pub fn on_cancel_call(&mut self, p: usize, call: CallTicket) {
        self.mirrors[p].remove_call(call);
    }

    /// The platform sent a Retry-After ending at `until`.
    pub fn on_retry_after(&mut self, platform: usize, until: Instant) {
        self.retry_until[platform] = self.retry_until[platform].max(until);
        self.broken_at[platform] = Some(self.broken_at[platform].map_or(until, |b| b.max(until)));
    }

    /// Platform `p`'s scheduler admitted `a` for the session with index `session`.
    pub fn on_admit(
        &mut self,
        p: usize,
        session: Option<u32>,
        a: &AdmissionRecord,
        scheduler: Option<&FairScheduler>,
    ) -> Verdict {
        self.admissions_checked += 1;
        self.admitted[p] += 1;
        let now = a.admitted_at;
        if now < self.retry_until[p] {
            return Err(format!(
                "a call went to {pid} at {now}, before its Retry-After ended at {}",
                self.retry_until[p],
                pid = self.names[p]
            ));
        }
        let Some(session) = session else {
            return Err(format!(
                "{pid} admitted a call for {}, a session the workload does not have",
                a.session,
                pid = self.names[p]
            ));
        };
        let Some(scheduler) = scheduler else {
            return Err(format!(
                "{pid} admitted a call on a lane without a limit",
                pid = self.names[p]
            ));
        };
        let limit = scheduler.config().limit;
        if a.cost != a.requested.min(limit.capacity) {
            return Err(format!(
                "a call at {pid} asked {} and was charged {}",
                a.requested,
                a.cost,
                pid = self.names[p]
            ));
        }
        let head = self.mirrors[p].queues.get(&session).and_then(|q| q.front()).copied();
        match (a.rule, head) {
            (AdmitRule::Direct, _) => {
                if let Some((s, _)) = self.mirrors[p].queues.iter().next() {
                    return Err(format!(
                        "{pid} admitted a call of session #{session} at once while session #{s} waited",
                        pid = self.names[p]
                    ));
                }
                // It did not wait at all: within any bound.
                if self.bound_applies(p, now) {
                    self.bound_checked += 1;
                }
            }
            (_, Some(head)) if head.entry == a.entry => {
                let wait_start = self.wait_start(p, session, head.queued_at);
                if self.bound_applies(p, wait_start) {
                    self.bound_checked += 1;
                    let bound = scheduler.starvation_bound(a.requested);
                    if now.saturating_since(wait_start) > bound {
                        return Err(format!(
                            "starvation bound broken at {pid}: session #{session} waited {:?} from {wait_start} \
                             (bound {bound:?})",
                            now.saturating_since(wait_start),
                            pid = self.names[p]
                        ));
                    }
                }
            }
            (_, Some(head)) => {
                return Err(format!(
                    "FIFO broken at {pid}: entry {} admitted before entry {} of the same session",
                    a.entry,
                    head.entry,
                    pid = self.names[p]
                ));
            }
            (_, None) => {
                return Err(format!(
                    "entry {} was admitted at {pid} but was not waiting there",
                    a.entry,
                    pid = self.names[p]
                ));
            }
        }
        // The call went: its other entries are withdrawn with it. The last admission
        // matters only while the session still waits (the mirror forgets it otherwise).
        let mirror = &mut self.mirrors[p];
        mirror.remove_call(a.call);
        if mirror.queues.contains_key(&session) {
            mirror.last_admit.insert(session, now);
            mirror.restart(session);
        }
        Ok(())
    }

    /// A legacy gate let a call out.
    pub fn on_legacy_admit(&mut self, now: Instant, call: CallId, v: CallView, _counted: bool) -> Verdict {
        self.admissions_checked += 1;
        if now < self.retry_until[v.platform] {
            return Err(format!(
                "call {call} went to {} at {now}, before its Retry-After ended at {}",
                self.names[v.platform], self.retry_until[v.platform]
            ));
        }
        Ok(())
    }

    /// A legacy call was (re)submitted; the legacy model keeps no queue to mirror.
    pub fn on_submit(&mut self, _call: CallId, _v: CallView) {}

    /// A legacy call left without an admission.
    pub fn on_leave(&mut self, _call: CallId, _v: CallView) {}

    fn wait_start(&self, p: usize, session: u32, head_queued_at: Instant) -> Instant {
        self.mirrors[p]
            .last_admit
            .get(&session)
            .map_or(head_queued_at, |&a| a.max(head_queued_at))
    }

    /// Whether a waiting session at station `p` has waited beyond the starvation bound
    /// at `now` while the bound applied. Only the sessions whose wait started after the
    /// precondition last broke and more than the least bound (a window) ago can have:
    /// those are a range of the index of wait starts, looked at in order.
    fn starved(&mut self, p: usize, now: Instant, scheduler: &FairScheduler) -> bool {
        // The least bound is the window's (the bound of a call that costs nothing).
        let least = *self.mirrors[p]
            .least_bound_ns
            .get_or_insert_with(|| besluitbron_core::time::duration_nanos(scheduler.starvation_bound(Units::ZERO)));
        let m = &self.mirrors[p];
        let Some(before) = now.as_nanos().checked_sub(least) else {
            return false;
        };
        let before = Instant::from_nanos(before);
        if m.by_start.first().is_none_or(|&(start, _)| start >= before) {
            return false;
        }
        let after = self.broken_at[p];
        if after.is_some_and(|b| b >= before) {
            return false;
        }
        let lower = after.map_or(Bound::Unbounded, |b| Bound::Excluded((b, u32::MAX)));
        m.by_start
            .range((lower, Bound::Excluded((before, 0))))
            .any(|&(start, session)| {
                let head = m.queues[&session].front().expect("empty queues are removed");
                now.saturating_since(start) > scheduler.starvation_bound(head.cost)
            })
    }

    fn bound_applies(&self, p: usize, wait_start: Instant) -> bool {
        self.broken_at[p].is_none_or(|b| b < wait_start)
    }

    /// Records whether each platform's starvation-bound precondition holds right now: the
    /// waiting sessions' head calls fit in the bucket, and no Retry-After runs.
    pub fn note_precondition(&mut self, now: Instant) {
        for (p, m) in self.mirrors.iter().enumerate() {
            let Some(capacity) = m.capacity else { continue };
            if m.heads > capacity || now < self.retry_until[p] {
                self.broken_at[p] = Some(self.broken_at[p].map_or(now, |b| b.max(now)));
            }
        }
    }

    /// The checks after an event at `now`, with each station's scheduler (fair policy;
    /// `schedulers(p)` for station `p`). After an event that changed nothing (`changed`
    /// false) only the starvation bound, which depends on the time, can have broken: the
    /// rest is as the last check found it.
    pub fn after_event<'s>(
        &mut self,
        now: Instant,
        schedulers: impl Fn(usize) -> Option<&'s FairScheduler>,
        over_limit_total: u64,
        changed: bool,
    ) -> Verdict {
        self.events_checked += 1;
        if self.policy != PolicyKind::Fair {
            return Ok(());
        }
        if over_limit_total > 0 {
            return Err(format!(
                "a platform refused {over_limit_total} call(s) as over its limit under the fair policy"
            ));
        }
        for p in 0..self.names.len() {
            let scheduler = schedulers(p);
            if changed {
                self.agrees(p, scheduler)?;
            }
            let Some(scheduler) = scheduler else { continue };
            // Every wait starts at or before now: when the precondition broke at or after
            // it, the bound covers no waiting session.
            if self.broken_at[p].is_some_and(|b| b >= now) {
                continue;
            }
            if !self.starved(p, now, scheduler) {
                continue;
            }
            // Someone starved: the first such session by index names the failure.
            for (&session, q) in &self.mirrors[p].queues {
                let head = q.front().expect("empty queues are removed");
                let wait_start = self.wait_start(p, session, head.queued_at);
                if !self.bound_applies(p, wait_start) {
                    continue;
                }
                let bound = scheduler.starvation_bound(head.cost);
                if now.saturating_since(wait_start) > bound {
                    return Err(format!(
                        "starvation bound broken at {}: entry {} of session #{session} still waits at {now}, \
                         wait start {wait_start}, bound {bound:?}",
                        self.names[p], head.entry
                    ));
                }
            }
        }
        Ok(())
    }

    /// Station `p`'s mirror holds as many entries as its scheduler, and the scheduler
    /// counted every admission seen.
    fn agrees(&self, p: usize, scheduler: Option<&FairScheduler>) -> Verdict {
        let mirrored = self.mirrors[p].len;
        let held = scheduler.map_or(0, |s| s.queued());
        if mirrored != held {
            return Err(format!(
                "{}: {mirrored} entries should wait, the scheduler holds {held}",
                self.names[p]
            ));
        }
        let counted = scheduler.map_or(self.admitted[p], |s| s.stats().admitted_calls);
        if counted != self.admitted[p] {
            return Err(format!(
                "{}: admissions not counted exactly: the scheduler counted {counted} calls, {} went out",
                self.names[p], self.admitted[p]
            ));
        }
        Ok(())
    }

    /// The server's process restarted at `now`: station `p`'s scheduler is a new one,
    /// nothing waits there, it has admitted nothing, it knows no Retry-After, and the
    /// starvation bound covers only waits that begin from now.
    pub fn restart(&mut self, p: usize, now: Instant) {
        let capacity = self.mirrors[p].capacity;
        self.mirrors[p] = Mirror {
            capacity,
            ..Mirror::default()
        };
        self.admitted[p] = 0;
        self.retry_until[p] = now;
        self.broken_at[p] = Some(now);
    }

    /// The check when the run has nothing left to do: nothing waits in a mirror.
    pub fn at_end(&self) -> Verdict {
        for (p, m) in self.mirrors.iter().enumerate() {
            if let Some((session, q)) = m.queues.iter().next() {
                return Err(format!(
                    "entry {} of session #{session} still waits at {} with nothing left to wake it",
                    q[0].entry, self.names[p]
                ));
            }
        }
        Ok(())
    }
}

/// The deduplication invariants, from what the engine reports of each call and attempt.
#[derive(Debug)]
pub struct FlightChecker {
    /// The run's platforms (each with a buffer of its own, also in a budget group of
    /// several): `p` in a method is an index into these.
    platforms: Vec<PlatformId>,
    /// Keys with an attempt out at the platform.
    out: BTreeSet<CacheKey>,
    /// Per key, the flights whose success was stored (their payload names the flight).
    stored: BTreeMap<CacheKey, BTreeSet<FlightId>>,
    stored_per_platform: Vec<u64>,
    /// Platforms stored to since the last check.
    dirty: Vec<bool>,
    waiting: BTreeSet<CallId>,
    /// Attempts sent.
    pub attempts_checked: u64,
}

impl FlightChecker {
    /// A checker over the paths of `platforms`, nothing sent or stored yet.
    pub fn new(platforms: Vec<PlatformId>) -> FlightChecker {
        FlightChecker {
            stored_per_platform: vec![0; platforms.len()],
            dirty: vec![false; platforms.len()],
            platforms,
            out: BTreeSet::new(),
            stored: BTreeMap::new(),
            waiting: BTreeSet::new(),
            attempts_checked: 0,
        }
    }

    /// An attempt for `key` went out at platform `p`.
    pub fn on_sent(&mut self, key: &CacheKey, attempt: Attempt, p: usize) -> Verdict {
        self.attempts_checked += 1;
        if !self.out.insert(key.clone()) {
            return Err(format!(
                "{}: two upstream calls for one key at once (flight {}, attempt {})",
                self.platforms[p], attempt.flight.0, attempt.number
            ));
        }
        Ok(())
    }

    /// The platform answered the attempt for `key` (success, failure or 429).
    pub fn on_answered(&mut self, key: &CacheKey) {
        self.out.remove(key);
    }

    /// A success of `flight` for `key` at platform `p` reached the path, which stores it.
    pub fn on_stored(&mut self, key: &CacheKey, flight: FlightId, p: usize) {
        self.dirty[p] = true;
        let flights = self.stored.entry(key.clone()).or_default();
        if flights.is_empty() {
            self.stored_per_platform[p] += 1;
        }
        flights.insert(flight);
    }

    /// `call` waits for a flight.
    pub fn on_wait(&mut self, call: CallId) {
        self.waiting.insert(call);
    }

    /// The server's process restarted: the attempts out for platform `p`'s keys are no
    /// longer its (their answers reach nobody), so the new process may ask the same keys.
    pub fn restart(&mut self, p: usize) {
        let id = self.platforms[p];
        self.out.retain(|key| key.platform() != id);
    }

    /// `call` left before its answer.
    pub fn on_left(&mut self, call: CallId) {
        self.waiting.remove(&call);
    }

    /// `call` got its outcome.
    pub fn on_delivered(&mut self, call: CallId) -> Verdict {
        // A call that got its outcome no longer waits: a second outcome is one it was not
        // waiting for (the checker keeps the calls waiting, not every call answered).
        if !self.waiting.remove(&call) {
            return Err(format!(
                "call {call} received an outcome it was not waiting for (a second one, or one it never asked for)"
            ));
        }
        Ok(())
    }

    /// `call` was answered from the buffer with `payload` for `key`.
    pub fn on_hit(&mut self, call: CallId, key: &CacheKey, payload: &[u8]) -> Verdict {
        let from = std::str::from_utf8(payload)
            .ok()
            .and_then(|s| s.strip_prefix("flight="))
            .and_then(|n| n.parse::<u64>().ok())
            .map(FlightId);
        match from {
            Some(id) if self.stored.get(key).is_some_and(|f| f.contains(&id)) => Ok(()),
            _ => Err(format!(
                "call {call} was answered from the buffer with {:?}, not a stored success of its key",
                String::from_utf8_lossy(payload)
            )),
        }
    }

    /// After every event: the buffers hold at most one entry per key a success stored.
    /// A buffer gains entries only by a store, so only the buffers stored to since the
    /// last check are looked at (`stores(p)`: platform `p`'s).
    pub fn after_event<'s>(&mut self, stores: impl Fn(usize) -> Option<&'s MemoryStore>) -> Verdict {
        for p in 0..self.platforms.len() {
            if !std::mem::take(&mut self.dirty[p]) {
                continue;
            }
            let Some(store) = stores(p) else { continue };
            let entries = store.stats().map_err(|e| e.to_string())?.entries();
            if entries > self.stored_per_platform[p] {
                return Err(format!(
                    "{}: the buffer holds {entries} entries, successes stored {} keys",
                    self.platforms[p], self.stored_per_platform[p]
                ));
            }
        }
        Ok(())
    }

    /// The check when the run is over: nothing is out, nobody waits.
    pub fn at_end(&self) -> Verdict {
        if let Some(call) = self.waiting.iter().next() {
            return Err(format!("call {call} still waits for its outcome at the end"));
        }
        if let Some(key) = self.out.iter().next() {
            return Err(format!("an attempt for {key:?} is still out at the end"));
        }
        Ok(())
    }
}
