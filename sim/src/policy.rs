//! The two policies a run can use at a platform, behind one [`Gate`].
//!
//! - [`Gate::Fair`]: BesluitBron from 1.4.6 — the core's [`FairScheduler`], driven
//!   through its public API. There is no second implementation of it here.
//! - [`Gate::Legacy`]: a model of BesluitBron ≤ 1.4.5, which lives only in the
//!   simulator. It has no queue: a call that finds no room in the local bucket sleeps
//!   until the bucket would have room for it and tries again. Sleepers that wake at the
//!   same instant retry in the order they went to sleep, so a session that arrives
//!   behind a busy one keeps losing to it (R-L9). Under contention (more than one sleeper
//!   waking at an instant) a second caller slips through uncounted with a small seeded
//!   probability (the R-L8 defect). Oversized calls are charged C, as in 1.4.6, so the
//!   difference between the policies is only the waiting.
//! - [`Gate::Open`]: a platform without a kept limit (`ori`, `tk`, `opentk`); every call
//!   goes at once, under either policy.
//!
//! Invariants: a gate hands out each call at most once, as a [`GateEvent`], and never
//! asks to be woken at or before the instant it was just polled at without having
//! admitted everything due then.
//!
//! What this module does not do: send calls or keep time; the engine does.

use std::collections::BTreeMap;
use std::time::Duration;

use besluitbron_core::scheduler::ConfigError;
use besluitbron_core::{
    Charge, FairScheduler, Instant, LimitConfig, PlatformId, SchedulerConfig, SchedulerEvent, SessionKey, Submission,
    Ticket, Units,
};
use rand::RngExt;

use crate::rng::SimRng;
use crate::trace::Trace;

/// A call's index in the engine's call table.
pub type CallId = u32;

/// Which policy runs at the platforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    /// BesluitBron ≥ 1.4.6: the core's fair scheduler.
    Fair,
    /// BesluitBron ≤ 1.4.5: sleep and retry, no queue.
    Legacy,
}

impl PolicyKind {
    /// `fair` or `legacy`.
    pub const fn as_str(self) -> &'static str {
        match self {
            PolicyKind::Fair => "fair",
            PolicyKind::Legacy => "legacy",
        }
    }
}

/// What a gate decided about a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateEvent {
    /// The call goes out now.
    Admitted {
        /// The call.
        call: CallId,
        /// Units the gate charged (C at most).
        charged: Units,
        /// False when the gate let it out without debiting its bucket (legacy defect).
        counted: bool,
        /// What a fair gate charged the session, for a refund if the platform refuses.
        charge: Option<Charge>,
    },
    /// The call was not accepted (queue bound reached).
    Refused {
        /// The call.
        call: CallId,
    },
    /// A joined entry was withdrawn free of charge because another entry of the same
    /// flight was admitted ([`FairScheduler::join`]); `call` is the entry's owner.
    Withdrawn {
        /// The call that owned the entry.
        call: CallId,
    },
}

/// One platform's policy.
#[derive(Debug)]
pub enum Gate {
    /// The core's fair scheduler.
    Fair(Box<FairGate>),
    /// The ≤ 1.4.5 model.
    Legacy(Box<LegacyGate>),
    /// No limit kept.
    Open(PlatformId),
}

impl Gate {
    /// Offers `call` at `now`; decisions made at once go to `out`. Returns the
    /// scheduler ticket when the call waits in a fair queue.
    pub fn submit(
        &mut self,
        now: Instant,
        call: CallId,
        session: &SessionKey,
        cost: Units,
        trace: &mut Trace,
        out: &mut Vec<GateEvent>,
    ) -> Option<Ticket> {
        match self {
            Gate::Fair(g) => g.submit(now, call, session, cost, trace, out),
            Gate::Legacy(g) => {
                g.submit(now, call, session, cost, now, trace, out);
                None
            }
            Gate::Open(p) => {
                trace.push(format!(
                    "t={now} session={session} admit cost={} via=unlimited waited=0.000s platform={p}",
                    cost.compact()
                ));
                out.push(GateEvent::Admitted {
                    call,
                    charged: cost,
                    counted: true,
                    charge: None,
                });
                None
            }
        }
    }

    /// Hands out every call that may go at `now`.
    pub fn poll(&mut self, now: Instant, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        match self {
            Gate::Fair(g) => g.poll(now, trace, out),
            Gate::Legacy(g) => g.poll(now, trace, out),
            Gate::Open(_) => {}
        }
    }

    /// When to poll next; `None` when nothing waits.
    pub fn next_wake(&self, now: Instant) -> Option<Instant> {
        match self {
            Gate::Fair(g) => g.scheduler.poll_timeout(now),
            Gate::Legacy(g) => g.sleepers.keys().next().map(|&(at, _)| at),
            Gate::Open(_) => None,
        }
    }

    /// Withdraws a waiting call; false when it is not waiting.
    pub fn cancel(&mut self, now: Instant, call: CallId, trace: &mut Trace) -> bool {
        match self {
            Gate::Fair(g) => g.cancel(now, call, trace),
            Gate::Legacy(g) => g.cancel(now, call, trace),
            Gate::Open(_) => false,
        }
    }

    /// The platform answered 429 with `retry_after`.
    pub fn on_retry_after(&mut self, now: Instant, retry_after: Duration) {
        match self {
            Gate::Fair(g) => g.scheduler.on_retry_after(now, retry_after),
            Gate::Legacy(g) => g.on_retry_after(now, retry_after),
            Gate::Open(_) => {}
        }
    }

    /// The platform refused (429) a call a fair gate admitted for `session` with `charge`:
    /// the session gets the charge back, as from the server's gate
    /// (`FairScheduler::refund`). Other gates charge nothing to give back.
    pub fn refund(&mut self, now: Instant, session: &SessionKey, charge: Option<Charge>, trace: &mut Trace) {
        if let (Gate::Fair(g), Some(charge)) = (self, charge) {
            g.scheduler.refund(now, session, charge);
            trace.push(format!(
                "t={now} session={session} refund cost={} platform={}",
                charge.cost().compact(),
                g.platform
            ));
        }
    }

    /// The limit kept locally, if any.
    pub fn local_limit(&self) -> Option<LimitConfig> {
        match self {
            Gate::Fair(g) => Some(g.scheduler.config().limit),
            Gate::Legacy(g) => Some(g.limit),
            Gate::Open(_) => None,
        }
    }

    /// The fair scheduler, when this gate is one.
    pub fn fair(&self) -> Option<&FairGate> {
        match self {
            Gate::Fair(g) => Some(g),
            _ => None,
        }
    }

    /// The fair scheduler, mutably, when this gate is one.
    pub fn fair_mut(&mut self) -> Option<&mut FairGate> {
        match self {
            Gate::Fair(g) => Some(g),
            _ => None,
        }
    }
}

/// The core's [`FairScheduler`] with the bookkeeping that maps its tickets to calls.
#[derive(Debug)]
pub struct FairGate {
    platform: PlatformId,
    /// The scheduler itself.
    pub scheduler: FairScheduler,
    by_ticket: BTreeMap<Ticket, CallId>,
    by_call: BTreeMap<CallId, Ticket>,
    /// Flights other sessions joined: flight ticket → every entry standing for it (the
    /// flight's own ticket first). Only the ticket-to-call mapping lives here; which
    /// entry goes is the scheduler's decision.
    joined: BTreeMap<Ticket, Vec<Ticket>>,
    /// Units of every admission handed out, summed here independently of the scheduler.
    pub handed_out_units: Units,
    /// Admissions handed out.
    pub handed_out_calls: u64,
}

impl FairGate {
    /// A gate around a fresh scheduler.
    pub fn new(platform: PlatformId, config: SchedulerConfig) -> Result<FairGate, ConfigError> {
        Ok(FairGate {
            platform,
            scheduler: FairScheduler::new(config)?,
            by_ticket: BTreeMap::new(),
            by_call: BTreeMap::new(),
            joined: BTreeMap::new(),
            handed_out_units: Units::ZERO,
            handed_out_calls: 0,
        })
    }

    fn submit(
        &mut self,
        now: Instant,
        call: CallId,
        session: &SessionKey,
        cost: Units,
        trace: &mut Trace,
        out: &mut Vec<GateEvent>,
    ) -> Option<Ticket> {
        match self.scheduler.submit(now, session, cost) {
            Submission::Admitted(a) => {
                self.hand_out(call, a, trace, out);
                None
            }
            Submission::Queued(ticket) => {
                self.by_ticket.insert(ticket, call);
                self.by_call.insert(call, ticket);
                let event = SchedulerEvent::Queue {
                    at: now,
                    session: session.clone(),
                    ticket,
                    cost,
                };
                trace.push(format!("{event} platform={}", self.platform));
                Some(ticket)
            }
            Submission::Refused { reason, retry_at } => {
                let event = SchedulerEvent::Refuse {
                    at: now,
                    session: session.clone(),
                    reason,
                    retry_at,
                };
                trace.push(format!("{event} platform={}", self.platform));
                out.push(GateEvent::Refused { call });
                None
            }
        }
    }

    /// `call` of `session` joins the waiting call `flight` ([`FairScheduler::join`]).
    /// Returns the entry standing for `session` and whether it is new (owned by `call`);
    /// an existing entry keeps its owner.
    pub fn join(
        &mut self,
        now: Instant,
        call: CallId,
        session: &SessionKey,
        flight: Ticket,
        trace: &mut Trace,
    ) -> Result<(Ticket, bool), besluitbron_core::scheduler::JoinError> {
        let entry = self.scheduler.join(now, session, flight)?;
        if self.by_ticket.contains_key(&entry) {
            return Ok((entry, false));
        }
        self.by_ticket.insert(entry, call);
        self.by_call.insert(call, entry);
        self.joined.entry(flight).or_insert_with(|| vec![flight]).push(entry);
        trace.push(format!(
            "t={now} session={session} join ticket={entry} flight={flight} platform={}",
            self.platform
        ));
        Ok((entry, true))
    }

    /// Withdraws one joined entry (its waiter left, others still wait). Returns its owner.
    pub fn cancel_entry(&mut self, now: Instant, entry: Ticket, trace: &mut Trace) -> Option<CallId> {
        let call = self.by_ticket.remove(&entry)?;
        self.by_call.remove(&call);
        for entries in self.joined.values_mut() {
            entries.retain(|&e| e != entry);
        }
        self.scheduler.cancel(now, entry);
        trace.push(format!(
            "{} platform={}",
            SchedulerEvent::Cancel { at: now, ticket: entry },
            self.platform
        ));
        Some(call)
    }

    /// Withdraws a flight and every entry joined to it ([`FairScheduler::cancel_flight`]):
    /// nobody waits for it any more. Returns the owners of the withdrawn entries.
    pub fn cancel_flight(&mut self, now: Instant, flight: Ticket, trace: &mut Trace) -> Vec<CallId> {
        let entries = self.joined.remove(&flight).unwrap_or_else(|| vec![flight]);
        let owners = entries
            .iter()
            .filter_map(|e| {
                let call = self.by_ticket.remove(e)?;
                self.by_call.remove(&call);
                Some(call)
            })
            .collect();
        self.scheduler.cancel_flight(now, flight);
        trace.push(format!(
            "t={now} cancel-flight flight={flight} platform={}",
            self.platform
        ));
        owners
    }

    fn poll(&mut self, now: Instant, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        while let Some(a) = self.scheduler.poll_admission(now) {
            // Every queued ticket was recorded in `submit`; an unknown one is a scheduler bug,
            // which the checker reports as an admission of a call that never waited.
            let call = self.by_ticket.remove(&a.ticket).unwrap_or(CallId::MAX);
            self.by_call.remove(&call);
            // The scheduler withdrew the flight's other entries; their owners leave too.
            for other in self.joined.remove(&a.flight).unwrap_or_default() {
                if other != a.ticket
                    && let Some(owner) = self.by_ticket.remove(&other)
                {
                    self.by_call.remove(&owner);
                    out.push(GateEvent::Withdrawn { call: owner });
                }
            }
            self.hand_out(call, a, trace, out);
        }
    }

    fn hand_out(&mut self, call: CallId, a: besluitbron_core::Admission, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        self.handed_out_units += a.cost;
        self.handed_out_calls += 1;
        let charged = a.cost;
        let charge = a.charge();
        trace.push(format!("{} platform={}", SchedulerEvent::Admit(a), self.platform));
        out.push(GateEvent::Admitted {
            call,
            charged,
            counted: true,
            charge: Some(charge),
        });
    }

    fn cancel(&mut self, now: Instant, call: CallId, trace: &mut Trace) -> bool {
        let Some(ticket) = self.by_call.remove(&call) else {
            return false;
        };
        self.by_ticket.remove(&ticket);
        let withdrawn = self.scheduler.cancel(now, ticket);
        trace.push(format!(
            "{} platform={}",
            SchedulerEvent::Cancel { at: now, ticket },
            self.platform
        ));
        withdrawn
    }

    /// Calls this gate holds as waiting.
    pub fn waiting_calls(&self) -> usize {
        self.by_ticket.len()
    }
}

#[derive(Clone, Debug)]
struct Sleeper {
    call: CallId,
    session: SessionKey,
    cost: Units,
    submitted_at: Instant,
}

/// The BesluitBron ≤ 1.4.5 model: a local bucket and sleeping callers, no queue.
#[derive(Debug)]
pub struct LegacyGate {
    platform: PlatformId,
    limit: LimitConfig,
    window_ns: u64,
    /// GCRA form of the local bucket: when it is full again, in ns.
    full_at_ns: u64,
    blocked_until: Instant,
    /// Sleepers by (wake instant, order of going to sleep).
    sleepers: BTreeMap<(Instant, u64), Sleeper>,
    asleep: BTreeMap<CallId, (Instant, u64)>,
    sleep_seq: u64,
    slip_probability: f64,
    rng: SimRng,
    /// Calls that went out without being counted.
    pub uncounted: u64,
}

impl LegacyGate {
    /// A full local bucket with `limit`; `rng` decides the slip-throughs.
    pub fn new(platform: PlatformId, limit: LimitConfig, slip_probability: f64, rng: SimRng) -> LegacyGate {
        LegacyGate {
            platform,
            limit,
            window_ns: besluitbron_core::time::duration_nanos(limit.window).max(1),
            full_at_ns: 0,
            blocked_until: Instant::ZERO,
            sleepers: BTreeMap::new(),
            asleep: BTreeMap::new(),
            sleep_seq: 0,
            slip_probability,
            rng,
            uncounted: 0,
        }
    }

    fn refill_ns(&self, cost: Units) -> u64 {
        let num = u128::from(cost.as_milli()) * u128::from(self.window_ns);
        u64::try_from(num.div_ceil(u128::from(self.limit.capacity.as_milli().max(1)))).unwrap_or(u64::MAX)
    }

    fn fits_at(&self, cost: Units) -> Instant {
        let at = self
            .full_at_ns
            .saturating_add(self.refill_ns(cost))
            .saturating_sub(self.window_ns);
        Instant::from_nanos(at).max(self.blocked_until)
    }

    fn tokens(&self, now: Instant) -> Units {
        let debt = self.full_at_ns.saturating_sub(now.as_nanos()).min(self.window_ns);
        let milli =
            u128::from(self.window_ns - debt) * u128::from(self.limit.capacity.as_milli()) / u128::from(self.window_ns);
        Units::from_milli(u64::try_from(milli).unwrap_or(u64::MAX))
    }

    #[allow(clippy::too_many_arguments)]
    fn submit(
        &mut self,
        now: Instant,
        call: CallId,
        session: &SessionKey,
        cost: Units,
        submitted_at: Instant,
        trace: &mut Trace,
        out: &mut Vec<GateEvent>,
    ) {
        let cost = cost.min(self.limit.capacity);
        let sleeper = Sleeper {
            call,
            session: session.clone(),
            cost,
            submitted_at,
        };
        if self.fits_at(cost) <= now {
            self.admit(now, sleeper, true, trace, out);
        } else {
            self.sleep(now, sleeper, trace);
        }
    }

    fn admit(&mut self, now: Instant, s: Sleeper, counted: bool, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        if counted {
            let from = self.full_at_ns.max(now.as_nanos());
            self.full_at_ns = from + self.refill_ns(s.cost);
        } else {
            self.uncounted += 1;
        }
        trace.push(format!(
            "t={now} session={} admit cost={} tokens={} via={} waited={} platform={}",
            s.session,
            s.cost.compact(),
            self.tokens(now),
            if counted { "legacy" } else { "legacy-uncounted" },
            Instant::ZERO + now.saturating_since(s.submitted_at),
            self.platform,
        ));
        out.push(GateEvent::Admitted {
            call: s.call,
            charged: s.cost,
            counted,
            charge: None,
        });
    }

    fn sleep(&mut self, now: Instant, s: Sleeper, trace: &mut Trace) {
        // At least one nanosecond ahead: a sleeper never wakes at the instant it fell asleep.
        let wake_at = self.fits_at(s.cost).max(Instant::from_nanos(now.as_nanos() + 1));
        trace.push(format!(
            "t={now} session={} sleep until={wake_at} platform={}",
            s.session, self.platform
        ));
        let key = (wake_at, self.sleep_seq);
        self.sleep_seq += 1;
        self.asleep.insert(s.call, key);
        self.sleepers.insert(key, s);
    }

    fn poll(&mut self, now: Instant, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        let mut woken = Vec::new();
        while let Some(entry) = self.sleepers.first_entry() {
            if entry.key().0 > now {
                break;
            }
            let s = entry.remove();
            self.asleep.remove(&s.call);
            woken.push(s);
        }
        let contended = woken.len() > 1;
        // Under contention the waker right after the first one to get through may slip
        // through as well, uncounted: one draw per contended instant.
        let mut slip_candidate = false;
        for s in woken {
            if self.fits_at(s.cost) <= now {
                self.admit(now, s, true, trace, out);
                slip_candidate = contended;
            } else if std::mem::take(&mut slip_candidate)
                && self.slip_probability > 0.0
                && self.rng.random_bool(self.slip_probability)
            {
                // The 1.4.5 defect: two wakers both saw room; only one was counted.
                self.admit(now, s, false, trace, out);
            } else {
                self.sleep(now, s, trace);
            }
        }
    }

    fn cancel(&mut self, now: Instant, call: CallId, trace: &mut Trace) -> bool {
        let Some(key) = self.asleep.remove(&call) else {
            return false;
        };
        if let Some(s) = self.sleepers.remove(&key) {
            trace.push(format!(
                "t={now} session={} cancel platform={}",
                s.session, self.platform
            ));
        }
        true
    }

    fn on_retry_after(&mut self, now: Instant, retry_after: Duration) {
        self.blocked_until = self.blocked_until.max(now + retry_after);
        self.full_at_ns = self.full_at_ns.max(now.as_nanos() + self.window_ns);
        // Sleepers keep their wake instants; on waking they find the bucket empty and
        // sleep again until the Retry-After has passed.
    }
}
