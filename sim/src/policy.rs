//! The legacy policy's gates: how BesluitBron ≤ 1.4.5 let calls out.
//!
//! Under the fair policy there is no gate here: the engine drives the core's
//! `PlatformPath` — the server's own path — and this module is not used.
//!
//! - [`Gate::Legacy`]: a model of BesluitBron ≤ 1.4.5, which lives only in the
//!   simulator. It has no queue: a call that finds no room in the local bucket sleeps
//!   until the bucket would have room for it and tries again. Sleepers that wake at the
//!   same instant retry in the order they went to sleep, so a session that arrives
//!   behind a busy one keeps losing to it (R-L9). Under contention (more than one sleeper
//!   waking at an instant) a second caller slips through uncounted with a small seeded
//!   probability (the R-L8 defect). Oversized calls are charged C, as in 1.4.6, so the
//!   difference between the policies is only the waiting.
//! - [`Gate::Open`]: a platform without a kept limit (`ori`, `tk`, `opentk`); every call
//!   goes at once, except while a platform's `Retry-After` runs: ≤ 1.4.5 waited it out
//!   for every platform, so calls that come (or come back) meanwhile wait and go in the
//!   order they came once it has ended.
//!
//! Invariants: a gate hands out each call at most once, as a [`GateEvent`], and never
//! asks to be woken at or before the instant it was just polled at without having
//! admitted everything due then.
//!
//! What this module does not do: send calls or keep time; the engine does.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use besluitbron_core::{Instant, LimitConfig, ServiceId, SessionKey, Units};
use rand::RngExt;

use crate::rng::SimRng;
use crate::trace::Trace;

/// A call's index in the engine's call table.
pub type CallId = u32;

/// Which policy runs at the platforms.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum PolicyKind {
    /// BesluitBron ≥ 1.4.6: the core's platform path with its fair scheduler.
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
    },
    /// The call was not accepted (queue bound reached).
    Refused {
        /// The call.
        call: CallId,
    },
}

/// One upstream service's legacy policy (a gate per service: its platforms share it).
#[derive(Debug)]
pub enum Gate {
    /// The ≤ 1.4.5 model.
    Legacy(Box<LegacyGate>),
    /// No limit kept.
    Open(OpenGate),
}

impl Gate {
    /// Offers `call` at `now`; decisions made at once go to `out`.
    pub fn submit(
        &mut self,
        now: Instant,
        call: CallId,
        session: &SessionKey,
        cost: Units,
        trace: &mut Trace,
        out: &mut Vec<GateEvent>,
    ) {
        let s = Sleeper {
            call,
            session: session.clone(),
            cost,
            submitted_at: now,
        };
        match self {
            Gate::Legacy(g) => g.submit(now, s, trace, out),
            Gate::Open(g) => g.submit(now, s, trace, out),
        }
    }

    /// Hands out every call that may go at `now`.
    pub fn poll(&mut self, now: Instant, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        match self {
            Gate::Legacy(g) => g.poll(now, trace, out),
            Gate::Open(g) => g.poll(now, trace, out),
        }
    }

    /// When to poll next; `None` when nothing waits.
    pub fn next_wake(&self, _now: Instant) -> Option<Instant> {
        match self {
            Gate::Legacy(g) => g.sleepers.keys().next().map(|&(at, _)| at),
            Gate::Open(g) => (!g.waiting.is_empty()).then_some(g.blocked_until),
        }
    }

    /// Whether calls wait here (asleep, or behind a Retry-After).
    pub fn waiting(&self) -> bool {
        match self {
            Gate::Legacy(g) => !g.sleepers.is_empty(),
            Gate::Open(g) => !g.waiting.is_empty(),
        }
    }

    /// Withdraws a waiting call; false when it is not waiting.
    pub fn cancel(&mut self, now: Instant, call: CallId, trace: &mut Trace) -> bool {
        match self {
            Gate::Legacy(g) => g.cancel(now, call, trace),
            Gate::Open(g) => g.cancel(now, call, trace),
        }
    }

    /// The platform answered 429 with `retry_after`.
    pub fn on_retry_after(&mut self, now: Instant, retry_after: Duration) {
        match self {
            Gate::Legacy(g) => g.on_retry_after(now, retry_after),
            Gate::Open(g) => g.blocked_until = g.blocked_until.max(now + retry_after),
        }
    }

    /// The limit kept locally, if any.
    pub fn local_limit(&self) -> Option<LimitConfig> {
        match self {
            Gate::Legacy(g) => Some(g.limit),
            Gate::Open(_) => None,
        }
    }
}

/// A platform without a kept limit, under the legacy policy: calls go at once unless
/// the platform's `Retry-After` still runs.
#[derive(Debug)]
pub struct OpenGate {
    platform: ServiceId,
    blocked_until: Instant,
    /// Calls waiting out the `Retry-After`, in the order they came.
    waiting: VecDeque<Sleeper>,
}

impl OpenGate {
    /// Nothing waiting, nothing blocked.
    pub fn new(platform: ServiceId) -> OpenGate {
        OpenGate {
            platform,
            blocked_until: Instant::ZERO,
            waiting: VecDeque::new(),
        }
    }

    fn submit(&mut self, now: Instant, s: Sleeper, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        if now >= self.blocked_until && self.waiting.is_empty() {
            self.admit(now, s, trace, out);
        } else {
            trace.push_fmt(format_args!(
                "t={now} session={} sleep until={} platform={}",
                s.session, self.blocked_until, self.platform
            ));
            self.waiting.push_back(s);
        }
    }

    fn admit(&mut self, now: Instant, s: Sleeper, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        trace.push_fmt(format_args!(
            "t={now} session={} admit cost={} via=unlimited waited={} platform={}",
            s.session,
            s.cost.compact(),
            Instant::ZERO + now.saturating_since(s.submitted_at),
            self.platform,
        ));
        out.push(GateEvent::Admitted {
            call: s.call,
            charged: s.cost,
            counted: true,
        });
    }

    /// Once the `Retry-After` has ended, every waiting call goes, in the order they came:
    /// ≤ 1.4.5 slept each of them until then and let them all go.
    fn poll(&mut self, now: Instant, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        if now >= self.blocked_until {
            while let Some(s) = self.waiting.pop_front() {
                self.admit(now, s, trace, out);
            }
        }
    }

    fn cancel(&mut self, now: Instant, call: CallId, trace: &mut Trace) -> bool {
        let Some(i) = self.waiting.iter().position(|s| s.call == call) else {
            return false;
        };
        if let Some(s) = self.waiting.remove(i) {
            trace.push_fmt(format_args!(
                "t={now} session={} cancel platform={}",
                s.session, self.platform
            ));
        }
        true
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
    platform: ServiceId,
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
    pub fn new(platform: ServiceId, limit: LimitConfig, slip_probability: f64, rng: SimRng) -> LegacyGate {
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

    fn submit(&mut self, now: Instant, mut sleeper: Sleeper, trace: &mut Trace, out: &mut Vec<GateEvent>) {
        sleeper.cost = sleeper.cost.min(self.limit.capacity);
        if self.fits_at(sleeper.cost) <= now {
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
        trace.push_fmt(format_args!(
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
        });
    }

    fn sleep(&mut self, now: Instant, s: Sleeper, trace: &mut Trace) {
        // At least one nanosecond ahead: a sleeper never wakes at the instant it fell asleep.
        let wake_at = self.fits_at(s.cost).max(Instant::from_nanos(now.as_nanos() + 1));
        trace.push_fmt(format_args!(
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
            trace.push_fmt(format_args!(
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
