//! The fair platform scheduler: when may a call to a rate-limited platform go out?
//!
//! One [`FairScheduler`] guards one platform whose limit BesluitBron keeps (R-L7:
//! `obv`, `ob`, `oa`, `rechtspraak`). It is sans-IO and never reads a clock: the
//! caller passes `now` into every call, [`FairScheduler::submit`] answers at once
//! (admitted, queued with a [`CallTicket`], or refused), [`FairScheduler::poll_admission`]
//! hands out the calls that may go at `now`, and [`FairScheduler::poll_timeout`] says
//! when polling can admit something next. The same inputs give the same decisions.
//!
//! # The rules (requirements R-L1 to R-L8)
//!
//! - **Limit** (R-L1). A [`Bucket`] of C units refilled continuously at C per W. It
//!   starts full. Costs are exact fixed-point [`Units`].
//! - **Room goes at once** (R-L2). A call that finds nobody waiting and room in the
//!   bucket is admitted inside `submit`.
//! - **Usage decides who goes first** (R-L3). Otherwise the call queues. Calls of one
//!   session keep their order. Across sessions, start-time fair queuing: a session's
//!   head call carries a start tag `S = max(V, F)`, where `F` is the finish tag of the
//!   session's previous admitted call and `V` the system's virtual time (the start tag
//!   of the last call admitted by the fair rule). Admitting a call of cost `c` sets the
//!   session's `F = S + c / w` with `w = 1 / (1 + used / C)`, `used` the units the
//!   session was admitted in its current usage period. The smallest `S` goes first
//!   (ties: the session that used less, then the one with fewer units waiting, then the
//!   earliest ticket). Direct admissions
//!   move tags too, so a session that just
//!   took the whole bucket does not tie with a newcomer. Tags are integers scaled by C:
//!   `c × (C + used)` per call, so no division and no rounding.
//! - **Nobody starves** (R-L4). A waiting session's *wait start* is the later of its
//!   oldest waiting call's submission and its last admission; its deadline is wait
//!   start + W. Before following the fair choice, the scheduler checks that the
//!   deadlines of all other waiting sessions can still be met afterwards, served in
//!   deadline order; if not, it serves the earliest deadline first. See
//!   [`FairScheduler::starvation_bound`] for the exact guarantee. When more sessions
//!   wait than the bucket can serve within W, this is "the longest-waiting session goes
//!   first".
//! - **Oversize calls** (R-L5). A call costing more than C is charged exactly C and goes
//!   when the bucket is full.
//! - **Forgetting** (R-L6). A session without queued calls is forgotten (its state freed)
//!   `forget_after` (30 minutes) after its last call. Memory is bounded by the sessions
//!   active in that period plus the queued calls, which are bounded by configuration.
//! - **The system session** (R-L7). [`SessionKey::System`] (the search page and
//!   BesluitBron's own maintenance) always has weight 1.
//! - **Every call is counted** (R-L8). The only way out of the scheduler is an
//!   [`Admission`], and producing one debits the bucket exactly once.
//! - **Platform feedback.** [`FairScheduler::on_retry_after`] stops all admissions until
//!   the platform's Retry-After has passed; [`FairScheduler::on_remaining`] lowers the
//!   local bucket to what the platform reports. Feedback only ever makes BesluitBron
//!   slower. [`FairScheduler::refund`] gives a session back the charge of an admitted
//!   call the platform refused (it counted nothing), so a call queued again is paid once.
//! - **Bounds.** At most `max_queued` calls per platform and `max_queued_per_session`
//!   per session; an arrival beyond them is refused at once with the instant after which
//!   a retry makes sense. A waiting call is never evicted.
//!
//! What this module does not do: it does not send requests, sleep, or know about
//! HTTP. The server and the simulator are the shells that do.

mod calls;
mod event;
mod invariants;
mod types;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::time::Duration;

pub use crate::bucket::Bucket;
pub use event::SchedulerEvent;
pub use types::{
    Admission, AdmissionRecord, AdmitRule, CallTicket, Charge, ConfigError, EntryTicket, Estimate, JoinError,
    QueueFull, SchedulerConfig, SchedulerStats, SessionKey, Submission,
};

/// A call the platform refused with 429 although BesluitBron kept its limit (another
/// client behind the same address, a limit lowered upstream) is queued once more, behind
/// the Retry-After, when that is at most this long; a longer wait, or a second refusal,
/// is reported to the caller. The server and the simulator both follow this rule.
pub const MAX_REQUEUE_WAIT: Duration = Duration::from_secs(60);

/// Whether a caller the platform refused with 429 is queued once more: on a lane that
/// keeps a limit (`limited`), when the Retry-After is at most `max` (by default
/// [`MAX_REQUEUE_WAIT`]), once per call (`before`: it was queued again already), and never
/// for BesluitBron's own maintenance (the system session), which reports the refusal. The
/// server's path asks it for each waiter, the simulator's legacy policy for each call, so
/// the two policies differ only in the waiting.
pub fn queued_again(limited: bool, retry_after: Duration, max: Duration, before: bool, session: &SessionKey) -> bool {
    limited && retry_after <= max && !before && *session != SessionKey::System
}

use crate::time::{Instant, duration_nanos};
use crate::units::Units;
use types::FixedState;

#[derive(Clone, Debug)]
struct QueuedCall {
    entry: EntryTicket,
    call: CallTicket,
    cost: Units,
    requested: Units,
    submitted_at: Instant,
}

#[derive(Clone, Debug)]
struct SessionState {
    key: SessionKey,
    used: Units,
    last_finish: u128,
    last_call_at: Instant,
    last_admission: Option<Instant>,
    queue: VecDeque<QueuedCall>,
    /// Σ cost of `queue` (milli-units): the session's place among equals (see [`FairKey`]).
    queued_milli: u64,
    /// Valid while `queue` is not empty.
    head: HeadTags,
    /// Set while the session is idle and scheduled to be forgotten.
    forget_at: Option<Instant>,
}

#[derive(Clone, Copy, Debug, Default)]
struct HeadTags {
    start: u128,
    deadline: Instant,
    /// The head call's cost, as charged (at most C).
    cost: Units,
    refill_ns: u64,
    weight_q32: u64,
    /// The units the session had waiting when the head was ranked.
    queued_milli: u64,
}

/// Where a head stands among heads of equal start tag: the session of greater weight
/// (fewer units used in its usage period) first, so a session that has used nothing
/// goes before sessions of the same tag that have. Without it, a newcomer whose start
/// tag is the virtual time ties with every busy session not yet served in the current
/// round and waits for all of them (ticket order) — up to one admission per waiting
/// session, found measuring a late session across replicas, where a new owner's empty
/// bucket queues every call from the start.
///
/// Between heads of equal tag and weight, the session with fewer units waiting goes
/// first: at a new owner's takeover every busy session has used nothing there yet, so a
/// newcomer asking one search tied with each busy session not yet served and waited for
/// them by ticket. Among sessions that have used the same, the one asking less is served
/// before the one asking more; a busy session's later calls are ranked by usage again.
fn tie_rank(weight_q32: u64) -> u64 {
    u64::MAX - weight_q32
}

/// A waiting head's place in the fair order: start tag, then [`tie_rank`], then the
/// units its session has waiting, then the ticket.
type FairKey = (u128, u64, u64, EntryTicket, u32);

fn fair_key(tags: &HeadTags, entry: EntryTicket, slot: u32) -> FairKey {
    (tags.start, tie_rank(tags.weight_q32), tags.queued_milli, entry, slot)
}

struct Choice {
    slot: u32,
    at: Instant,
    rule: AdmitRule,
}

/// The per-platform fair scheduler. See the module documentation for its rules.
#[derive(Debug)]
pub struct FairScheduler {
    config: SchedulerConfig,
    bucket: Bucket,
    window_ns: u64,
    blocked_until: Instant,
    virtual_time: u128,
    last_now: Instant,
    next_ticket: u64,
    sessions: Vec<Option<SessionState>>,
    free_slots: Vec<u32>,
    index: HashMap<SessionKey, u32, FixedState>,
    /// Every waiting entry → the slot of the session it waits in.
    entries: HashMap<EntryTicket, u32, FixedState>,
    /// Every waiting call → the entries that stand for it.
    calls: calls::CallIndex,
    /// Waiting sessions by their head call's start tag, then by weight (the heavier —
    /// the one that used less — first: see [`tie_rank`]), then by the units they have
    /// waiting (fewer first), then by ticket.
    fair_heads: BTreeSet<FairKey>,
    /// Waiting sessions by deadline (wait start + W).
    deadlines: BTreeSet<(Instant, EntryTicket, u32)>,
    /// Idle sessions by the instant they are forgotten.
    forget: BTreeSet<(Instant, u32)>,
    queued: usize,
    /// Σ refill time of every waiting session's head call.
    heads_refill_ns: u128,
    /// The refill times of the waiting heads, counted, for their minimum.
    head_refills: BTreeMap<u64, u32>,
    /// Σ weight (×2³²) of every waiting session, for estimates.
    heads_weight_q32: u128,
    stats: SchedulerStats,
}

impl FairScheduler {
    /// A scheduler with a full bucket and no sessions.
    pub fn new(config: SchedulerConfig) -> Result<FairScheduler, ConfigError> {
        if config.limit.capacity.is_zero() {
            return Err(ConfigError::ZeroCapacity);
        }
        let window_ns = duration_nanos(config.limit.window);
        if window_ns == 0 {
            return Err(ConfigError::ZeroWindow);
        }
        if config.max_queued == 0 || config.max_queued_per_session == 0 {
            return Err(ConfigError::ZeroQueue);
        }
        Ok(FairScheduler {
            bucket: Bucket::new(config.limit),
            window_ns,
            config,
            blocked_until: Instant::ZERO,
            virtual_time: 0,
            last_now: Instant::ZERO,
            next_ticket: 0,
            sessions: Vec::new(),
            free_slots: Vec::new(),
            index: HashMap::default(),
            entries: HashMap::default(),
            calls: calls::CallIndex::default(),
            fair_heads: BTreeSet::new(),
            deadlines: BTreeSet::new(),
            forget: BTreeSet::new(),
            queued: 0,
            heads_refill_ns: 0,
            head_refills: BTreeMap::new(),
            heads_weight_q32: 0,
            stats: SchedulerStats::default(),
        })
    }

    /// The configuration this scheduler runs with.
    pub fn config(&self) -> &SchedulerConfig {
        &self.config
    }

    /// Offers a call of `cost` units for `session` at `now`.
    ///
    /// Returns [`Submission::Admitted`] when nobody waits and the bucket has room (the
    /// caller sends the call now), [`Submission::Queued`] otherwise, or
    /// [`Submission::Refused`] when a queue bound is reached. After a `Queued`, call
    /// [`FairScheduler::poll_timeout`] to learn when to poll.
    pub fn submit(&mut self, now: Instant, session: &SessionKey, cost: Units) -> Submission {
        let now = self.advance(now);
        let requested = cost;
        let cost = cost.min(self.config.limit.capacity);
        if self.queued == 0 && self.fit_at(now, cost) <= now {
            let slot = self.slot_for(session, now);
            let (call, entry) = self.new_call();
            let call = QueuedCall {
                entry,
                call,
                cost,
                requested,
                submitted_at: now,
            };
            let start = self.virtual_time.max(self.state(slot).last_finish);
            let admission = self.admit(now, slot, call, start, AdmitRule::Direct);
            self.schedule_forget(slot);
            return Submission::Admitted(admission);
        }

        if self.queued >= self.config.max_queued {
            self.stats.refused_calls += 1;
            let retry_at = self.poll_timeout(now).unwrap_or(now);
            return Submission::Refused {
                reason: QueueFull::Platform,
                retry_at,
            };
        }
        if let Some(&slot) = self.index.get(session) {
            let state = self.state(slot);
            if state.queue.len() >= self.config.max_queued_per_session {
                let head = state.queue[0].entry;
                self.stats.refused_calls += 1;
                let retry_at = self.estimate_entry(now, head).map_or(now, |e| e.admit_at);
                return Submission::Refused {
                    reason: QueueFull::Session,
                    retry_at,
                };
            }
        }

        let (call, entry) = self.new_call();
        self.enqueue(now, session, call, entry, cost, requested);
        Submission::Queued { call, entry }
    }

    /// Lets `session` join the waiting `call`: a duplicate of it, coalesced (R-D3).
    ///
    /// The call then also waits in `session`'s own queue, at that session's position, and
    /// goes at whichever of its entries comes first. The session whose entry is admitted
    /// pays; the other entries are withdrawn free of charge, and their sessions' later
    /// calls keep their places. So a fresh session that joins a heavy session's call
    /// moves it forward instead of waiting at the heavy session's pace.
    ///
    /// Returns the entry standing for `session` (an existing one when the session already
    /// has an entry for this call). The [`Admission`] of any entry names `call`.
    pub fn join(&mut self, now: Instant, session: &SessionKey, call: CallTicket) -> Result<EntryTicket, JoinError> {
        let now = self.advance(now);
        let Some(&any) = self.calls.entries(call).first() else {
            return Err(JoinError::NotQueued);
        };
        for &entry in self.calls.entries(call) {
            if &self.state(self.entries[&entry]).key == session {
                return Ok(entry);
            }
        }
        let session_full = self
            .index
            .get(session)
            .is_some_and(|&slot| self.state(slot).queue.len() >= self.config.max_queued_per_session);
        if self.queued >= self.config.max_queued || session_full {
            return Err(JoinError::QueueFull);
        }
        let slot = self.entries[&any];
        // Present: the index only names entries still queued in their session.
        let queued = self
            .state(slot)
            .queue
            .iter()
            .find(|c| c.entry == any)
            .expect("entry is queued");
        let (cost, requested) = (queued.cost, queued.requested);
        let entry = self.new_entry();
        self.enqueue(now, session, call, entry, cost, requested);
        Ok(entry)
    }

    /// Whether `call` still waits (through any of its entries).
    pub fn is_waiting(&self, call: CallTicket) -> bool {
        !self.calls.entries(call).is_empty()
    }

    /// The entries waiting for `call`, in the order they were made.
    pub fn entries_of(&self, call: CallTicket) -> &[EntryTicket] {
        self.calls.entries(call)
    }

    /// Withdraws every waiting entry of `call` (its own and all joined entries): nobody
    /// waits for it any more. Returns false when none was waiting.
    pub fn cancel_call(&mut self, now: Instant, call: CallTicket) -> bool {
        let entries = self.calls.entries(call).to_vec();
        let mut any = false;
        for entry in entries {
            any |= self.cancel(now, entry);
        }
        any
    }

    /// Hands out the next call that may go at `now`, if any. Call it until it returns
    /// `None`, then sleep until [`FairScheduler::poll_timeout`].
    pub fn poll_admission(&mut self, now: Instant) -> Option<Admission> {
        let now = self.advance(now);
        let choice = self.next_choice(now)?;
        if choice.at > now {
            return None;
        }
        let slot = choice.slot;
        let start = self.state(slot).head.start;
        self.detach_head(slot);
        // The head exists: `next_choice` only picks waiting sessions.
        let queued = self
            .state_mut(slot)
            .queue
            .pop_front()
            .expect("a waiting session has a head call");
        self.entries.remove(&queued.entry);
        self.queued -= 1;
        self.state_mut(slot).queued_milli -= queued.cost.as_milli();
        let call = queued.call;
        let admission = self.admit(now, slot, queued, start, choice.rule);
        if self.state(slot).queue.is_empty() {
            self.schedule_forget(slot);
        } else {
            let next_start = self.virtual_time.max(self.state(slot).last_finish);
            self.attach_head(slot, next_start);
        }
        // The call went out through this entry: its other entries are withdrawn, free.
        for other in self.calls.remove_call(call) {
            if other != admission.entry {
                self.withdraw(now, other);
            }
        }
        Some(admission)
    }

    /// The instant at which [`FairScheduler::poll_admission`] will admit a call if
    /// nothing else happens first; `None` when nothing waits. Never earlier than `now`.
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        self.next_choice(now.max(self.last_now)).map(|c| c.at)
    }

    /// Withdraws one waiting entry. Returns false when it is not waiting (already
    /// admitted, withdrawn, or never issued). A withdrawn entry costs nothing and the
    /// others keep their places; the call keeps waiting through its other entries.
    pub fn cancel(&mut self, now: Instant, entry: EntryTicket) -> bool {
        let now = self.advance(now);
        if !self.withdraw(now, entry) {
            return false;
        }
        self.stats.cancelled_calls += 1;
        self.calls.remove_entry(entry);
        true
    }

    /// Where a waiting call stands and when it is expected to go; `None` when it is not
    /// waiting. For a call several sessions joined, the best of its entries.
    pub fn estimate(&self, now: Instant, call: CallTicket) -> Option<Estimate> {
        self.calls
            .entries(call)
            .iter()
            .filter_map(|&entry| self.estimate_entry(now, entry))
            .min_by_key(|e| e.admit_at)
    }

    /// Where one waiting entry stands; `None` when it is not waiting.
    pub fn estimate_entry(&self, now: Instant, entry: EntryTicket) -> Option<Estimate> {
        let now = now.max(self.last_now);
        let &slot = self.entries.get(&entry)?;
        let state = self.state(slot);
        let mut units_through = Units::ZERO;
        let mut ahead = 0;
        for call in &state.queue {
            units_through += call.cost;
            if call.entry == entry {
                break;
            }
            ahead += 1;
        }
        // Fluid model: this session drains at its weight's share of C per W, starting
        // with whatever the bucket holds now.
        let weight = u128::from(state.head.weight_q32).max(1);
        let total_weight = self.heads_weight_q32.max(weight);
        let share_ns = u128::from(self.bucket.refill_ns(units_through)) * total_weight / weight;
        let start = now.max(self.blocked_until);
        let room_ns = u128::from(self.bucket.refill_ns(self.bucket.tokens(start)));
        let fluid = start + Duration::from_nanos(u64::try_from(share_ns.saturating_sub(room_ns)).unwrap_or(u64::MAX));
        // The starvation bound, applied per call ahead, caps the guess.
        let per_call = self.starvation_bound(self.config.limit.capacity);
        let bound = state.head.deadline.saturating_sub(Duration::from_nanos(self.window_ns))
            + per_call * u32::try_from(ahead + 1).unwrap_or(u32::MAX);
        let earliest = self.fit_at(now, state.head.cost);
        Some(Estimate {
            admit_at: fluid.min(bound).max(earliest),
            ahead_in_session: ahead,
            waiting_sessions: self.fair_heads.len(),
            queued_calls: self.queued,
        })
    }

    /// The platform answered 429 with `Retry-After: retry_after` at `now`: nothing is
    /// admitted before `now + retry_after`, and the local bucket is taken to be empty.
    pub fn on_retry_after(&mut self, now: Instant, retry_after: Duration) {
        let now = self.advance(now);
        self.blocked_until = self.blocked_until.max(now + retry_after);
        self.bucket.cap_at(now, Units::ZERO);
    }

    /// The platform refused (429) a call this scheduler admitted with `charge`
    /// ([`Admission::charge`], consumed: a charge is refunded at most once): the platform
    /// counted nothing, so the session gets
    /// the charge back — its usage drops by the units and its finish tag by exactly what
    /// the call added (later admissions of the session keep theirs), and a waiting head
    /// call of the session moves forward accordingly (never behind where it stood; the
    /// system's virtual time, which that admission may have advanced, stays). Without
    /// this, a call queued again after a refusal is paid for twice. The local bucket is
    /// not refilled: feed the Retry-After with [`FairScheduler::on_retry_after`]. A session
    /// already forgotten is left alone.
    pub fn refund(&mut self, now: Instant, charge: Charge) {
        self.advance(now);
        let Some(&slot) = self.index.get(&charge.session) else {
            return;
        };
        let state = self.state_mut(slot);
        state.used = state.used.saturating_sub(charge.cost);
        state.last_finish = state.last_finish.saturating_sub(charge.finish_increment);
        if !state.queue.is_empty() {
            let old_start = state.head.start;
            self.detach_head(slot);
            let start = old_start.min(self.virtual_time.max(self.state(slot).last_finish));
            self.attach_head(slot, start);
        }
        self.stats.refunded_calls += 1;
    }

    /// The platform reported `remaining` units left (OpenBesluitvorming's
    /// `RateLimit-Remaining`) and, optionally, `reset`, the time until its bucket is
    /// full (`RateLimit-Reset`). The local bucket never holds more than that.
    pub fn on_remaining(&mut self, now: Instant, remaining: Units, reset: Option<Duration>) {
        let now = self.advance(now);
        self.bucket.cap_at(now, remaining);
        if let Some(reset) = reset {
            self.bucket.full_no_earlier_than(now + reset);
        }
    }

    /// The platform's bucket may have been spent by another process (a new owner taking
    /// over from the previous one, [`crate::cluster`] rule 3): the local bucket is taken
    /// to be empty at `now` and refills from there.
    pub fn assume_empty(&mut self, now: Instant) {
        let now = self.advance(now);
        self.bucket.cap_at(now, Units::ZERO);
    }

    /// Sets `session`'s usage to `used`, from a checkpoint of the previous owner, unless
    /// the session is already tracked here (what this scheduler saw itself wins). The
    /// session is then idle and forgotten after the usual quiet period.
    pub fn restore_usage(&mut self, now: Instant, session: &SessionKey, used: Units) {
        let now = self.advance(now);
        if self.index.contains_key(session) {
            return;
        }
        let slot = self.slot_for(session, now);
        self.state_mut(slot).used = used;
        self.schedule_forget(slot);
    }

    /// Every tracked session's usage, in session-key order: a checkpoint for the next
    /// owner ([`FairScheduler::restore_usage`]).
    pub fn usage(&self) -> Vec<(SessionKey, Units)> {
        let mut all: Vec<(SessionKey, Units)> = self
            .sessions
            .iter()
            .flatten()
            .map(|s| (s.key.clone(), s.used))
            .collect();
        all.sort();
        all
    }

    /// The longest a waiting session goes without an admission, counted from its wait
    /// start, when its head call costs `head_cost`: `W + min(head_cost, C) × W / C`.
    ///
    /// Guaranteed while (a) the head calls of all waiting sessions together fit in the
    /// bucket (Σ head costs ≤ C) and (b) the platform has sent no Retry-After or
    /// remaining-budget feedback that empties the bucket beyond the local model. When
    /// (a) fails — more sessions wait than the bucket can serve within W — the session
    /// that has waited longest goes first instead.
    pub fn starvation_bound(&self, head_cost: Units) -> Duration {
        let cost = head_cost.min(self.config.limit.capacity);
        Duration::from_nanos(self.window_ns.saturating_add(self.bucket.refill_ns(cost)))
    }

    /// Units in the bucket at `now`.
    pub fn tokens(&self, now: Instant) -> Units {
        self.bucket.tokens(now.max(self.last_now))
    }

    /// Units `session` was admitted in its current usage period, if it is tracked.
    pub fn session_usage(&self, session: &SessionKey) -> Option<Units> {
        self.index.get(session).map(|&slot| self.state(slot).used)
    }

    /// Calls waiting at this platform.
    pub fn queued(&self) -> usize {
        self.queued
    }

    /// Calls `session` has waiting here.
    pub fn queued_for(&self, session: &SessionKey) -> usize {
        self.index.get(session).map_or(0, |&slot| self.state(slot).queue.len())
    }

    /// Sessions with calls waiting.
    pub fn waiting_sessions(&self) -> usize {
        self.fair_heads.len()
    }

    /// Sessions whose usage is remembered (waiting or active in the last `forget_after`).
    pub fn tracked_sessions(&self) -> usize {
        self.index.len()
    }

    /// The counters.
    pub fn stats(&self) -> SchedulerStats {
        self.stats
    }

    /// The session a waiting entry belongs to.
    pub fn entry_session(&self, entry: EntryTicket) -> Option<&SessionKey> {
        self.entries.get(&entry).map(|&slot| &self.state(slot).key)
    }

    /// The call a waiting entry stands for.
    pub fn call_of(&self, entry: EntryTicket) -> Option<CallTicket> {
        self.calls.call_of(entry)
    }

    // ---- internals ----

    /// Puts `entry` for `call` at the back of `session`'s queue.
    fn enqueue(
        &mut self,
        now: Instant,
        session: &SessionKey,
        call: CallTicket,
        entry: EntryTicket,
        cost: Units,
        requested: Units,
    ) {
        let slot = self.slot_for(session, now);
        let queued = QueuedCall {
            entry,
            call,
            cost,
            requested,
            submitted_at: now,
        };
        self.entries.insert(entry, slot);
        self.calls.add(call, entry);
        self.queued += 1;
        let state = self.state_mut(slot);
        state.last_call_at = now;
        if state.queue.is_empty() {
            state.queued_milli = cost.as_milli();
            state.queue.push_back(queued);
            self.unschedule_forget(slot);
            let start = self.virtual_time.max(self.state(slot).last_finish);
            self.attach_head(slot, start);
        } else {
            // More waiting: the head is ranked again, at its own start tag.
            let start = state.head.start;
            self.detach_head(slot);
            let state = self.state_mut(slot);
            state.queued_milli += cost.as_milli();
            state.queue.push_back(queued);
            self.attach_head(slot, start);
        }
    }

    /// Takes a waiting entry out of its session's queue without charging anyone. The
    /// session's next call inherits the withdrawn call's place. The call index is the
    /// caller's to update.
    fn withdraw(&mut self, now: Instant, entry: EntryTicket) -> bool {
        let Some(slot) = self.entries.remove(&entry) else {
            return false;
        };
        self.queued -= 1;
        let state = self.state(slot);
        // Present: `entries` only names calls still in their session's queue.
        let pos = state
            .queue
            .iter()
            .position(|c| c.entry == entry)
            .expect("entry is queued in its session");
        let start = state.head.start;
        self.detach_head(slot);
        let state = self.state_mut(slot);
        if let Some(gone) = state.queue.remove(pos) {
            state.queued_milli -= gone.cost.as_milli();
        }
        if pos > 0 {
            // Fewer waiting behind the same head: ranked again, at its own start tag.
            self.attach_head(slot, start);
            return true;
        }
        if self.state(slot).queue.is_empty() {
            self.schedule_forget(slot);
            self.sweep(now);
        } else {
            self.attach_head(slot, start);
        }
        true
    }

    /// Clamps time to be monotonic and forgets sessions whose quiet period is over.
    fn advance(&mut self, now: Instant) -> Instant {
        let now = now.max(self.last_now);
        self.last_now = now;
        self.sweep(now);
        now
    }

    fn sweep(&mut self, now: Instant) {
        while let Some(&(at, slot)) = self.forget.first() {
            if at > now {
                break;
            }
            self.forget.pop_first();
            // Only idle sessions are scheduled; the slot is live until freed here.
            let state = self.sessions[slot as usize].take().expect("scheduled session is live");
            debug_assert!(state.queue.is_empty());
            self.index.remove(&state.key);
            self.free_slots.push(slot);
            self.stats.forgotten_sessions += 1;
        }
    }

    /// A new call and its first entry, sharing one number.
    fn new_call(&mut self) -> (CallTicket, EntryTicket) {
        let n = self.next_ticket;
        self.next_ticket += 1;
        (CallTicket(n), EntryTicket(n))
    }

    /// A new entry for an existing call.
    fn new_entry(&mut self) -> EntryTicket {
        let n = self.next_ticket;
        self.next_ticket += 1;
        EntryTicket(n)
    }

    fn state(&self, slot: u32) -> &SessionState {
        // Slots handed out by `slot_for` stay live until `sweep` frees them, and only
        // idle sessions are freed, so every slot reachable from a set or map is live.
        self.sessions[slot as usize].as_ref().expect("live session slot")
    }

    fn state_mut(&mut self, slot: u32) -> &mut SessionState {
        self.sessions[slot as usize].as_mut().expect("live session slot")
    }

    fn slot_for(&mut self, session: &SessionKey, now: Instant) -> u32 {
        if let Some(&slot) = self.index.get(session) {
            return slot;
        }
        let state = SessionState {
            key: session.clone(),
            used: Units::ZERO,
            last_finish: 0,
            last_call_at: now,
            last_admission: None,
            queue: VecDeque::new(),
            queued_milli: 0,
            head: HeadTags::default(),
            forget_at: None,
        };
        let slot = match self.free_slots.pop() {
            Some(slot) => {
                self.sessions[slot as usize] = Some(state);
                slot
            }
            None => {
                self.sessions.push(Some(state));
                u32::try_from(self.sessions.len() - 1).expect("fewer than 2^32 sessions")
            }
        };
        self.index.insert(session.clone(), slot);
        slot
    }

    fn weight_q32(&self, state: &SessionState) -> u64 {
        if state.key == SessionKey::System {
            return 1 << 32;
        }
        let c = u128::from(self.config.limit.capacity.as_milli());
        let w = (c << 32) / (c + u128::from(state.used.as_milli()));
        u64::try_from(w).unwrap_or(u64::MAX)
    }

    /// `cost / w`, scaled by C: `cost × (C + used)`, or `cost × C` for the system session.
    fn tag_increment(&self, state: &SessionState, cost: Units) -> u128 {
        let c = u128::from(self.config.limit.capacity.as_milli());
        let used = if state.key == SessionKey::System {
            0
        } else {
            u128::from(state.used.as_milli())
        };
        u128::from(cost.as_milli()) * (c + used)
    }

    fn fit_at(&self, now: Instant, cost: Units) -> Instant {
        now.max(self.blocked_until).max(self.bucket.earliest_fit(cost))
    }

    fn attach_head(&mut self, slot: u32, start: u128) {
        let state = self.state(slot);
        let head = &state.queue[0];
        let wait_start = state
            .last_admission
            .map_or(head.submitted_at, |a| a.max(head.submitted_at));
        let tags = HeadTags {
            start,
            deadline: wait_start + Duration::from_nanos(self.window_ns),
            cost: head.cost,
            refill_ns: self.bucket.refill_ns(head.cost),
            weight_q32: self.weight_q32(state),
            queued_milli: state.queued_milli,
        };
        let entry = head.entry;
        self.fair_heads.insert(fair_key(&tags, entry, slot));
        self.deadlines.insert((tags.deadline, entry, slot));
        self.heads_refill_ns += u128::from(tags.refill_ns);
        *self.head_refills.entry(tags.refill_ns).or_default() += 1;
        self.heads_weight_q32 += u128::from(tags.weight_q32);
        self.state_mut(slot).head = tags;
    }

    fn detach_head(&mut self, slot: u32) {
        let state = self.state(slot);
        let tags = state.head;
        let entry = state.queue[0].entry;
        self.fair_heads.remove(&fair_key(&tags, entry, slot));
        self.deadlines.remove(&(tags.deadline, entry, slot));
        self.heads_refill_ns -= u128::from(tags.refill_ns);
        if let Some(n) = self.head_refills.get_mut(&tags.refill_ns) {
            *n -= 1;
            if *n == 0 {
                self.head_refills.remove(&tags.refill_ns);
            }
        }
        self.heads_weight_q32 -= u128::from(tags.weight_q32);
    }

    fn schedule_forget(&mut self, slot: u32) {
        self.unschedule_forget(slot);
        let at = self.state(slot).last_call_at + self.config.forget_after;
        self.forget.insert((at, slot));
        self.state_mut(slot).forget_at = Some(at);
    }

    fn unschedule_forget(&mut self, slot: u32) {
        if let Some(at) = self.state_mut(slot).forget_at.take() {
            self.forget.remove(&(at, slot));
        }
    }

    /// The call to admit next and the earliest instant it may go.
    fn next_choice(&self, now: Instant) -> Option<Choice> {
        let &(_, _, _, _, fair_slot) = self.fair_heads.first()?;
        let fair = self.state(fair_slot).head;
        let fair_at = self.fit_at(now, fair.cost);
        // After the fair call, could every other waiting session still be served by its
        // deadline, in deadline order? Session k in that order goes once the bucket has
        // repaid the debt after the fair call plus the heads before k, which is at most
        // all other heads less k's own (so less the smallest head). That debt, less W,
        // must not pass the earliest deadline. A sufficient test, cheap to keep.
        if let Some(&(deadline, _, urgent_slot)) = self.deadlines.first()
            && urgent_slot != fair_slot
        {
            let after_fair = u128::from(self.bucket.full_at().max(fair_at).as_nanos()) + u128::from(fair.refill_ns);
            let smallest = self.head_refills.keys().next().copied().unwrap_or(0);
            let others = self.heads_refill_ns - u128::from(fair.refill_ns) - u128::from(smallest);
            if after_fair + others > u128::from(deadline.as_nanos()) + u128::from(self.window_ns) {
                let urgent = self.state(urgent_slot).head;
                return Some(Choice {
                    slot: urgent_slot,
                    at: self.fit_at(now, urgent.cost),
                    rule: AdmitRule::Deadline,
                });
            }
        }
        Some(Choice {
            slot: fair_slot,
            at: fair_at,
            rule: AdmitRule::Fair,
        })
    }

    /// Debits the bucket and the session for `call` at `now`. The only place an
    /// [`Admission`] is made.
    fn admit(&mut self, now: Instant, slot: u32, call: QueuedCall, start: u128, rule: AdmitRule) -> Admission {
        debug_assert!(self.fit_at(now, call.cost) <= now, "admitted without room");
        self.bucket.debit(now, call.cost);
        let increment = self.tag_increment(self.state(slot), call.cost);
        if rule != AdmitRule::Deadline {
            self.virtual_time = self.virtual_time.max(start);
        }
        let state = self.state_mut(slot);
        state.last_finish = start + increment;
        state.used += call.cost;
        state.last_call_at = now;
        state.last_admission = Some(now);
        let session = state.key.clone();
        self.stats.admitted_calls += 1;
        self.stats.admitted_units += call.cost;
        match rule {
            AdmitRule::Direct => self.stats.direct_admissions += 1,
            AdmitRule::Deadline => self.stats.deadline_admissions += 1,
            AdmitRule::Fair => {}
        }
        Admission {
            call: call.call,
            entry: call.entry,
            session: session.clone(),
            cost: call.cost,
            requested: call.requested,
            submitted_at: call.submitted_at,
            admitted_at: now,
            tokens_after: self.bucket.tokens(now),
            rule,
            charge: Charge {
                session,
                cost: call.cost,
                finish_increment: increment,
            },
        }
    }
}

#[cfg(test)]
mod tests;
