//! The lanes: a flight's call through its lane — a place under the lane's bound (or a spot
//! at its gate, in arrival order), the lane's fair queue when it keeps a limit, and the
//! send; and the drive that, at each input, admits what is due and starts the due retries.
//!
//! Invariants: a flight holds a place exactly while queued or out, counted in the lane's
//! `holding`; every attempt that leaves a limited lane is an admission of its scheduler
//! (R-L8). What it does not do: wait on a clock (the shells call in with `now`).

use std::collections::BTreeSet;

use super::{Attempt, Buffer, CallState, Delivery, Effect, Failure, OutcomeKind, PathEvent, PlatformPath};
use crate::dedup::FlightId;
use crate::scheduler::{AdmissionRecord, SessionKey, Submission};
use crate::time::Instant;

impl<B: Buffer, E: Clone> PlatformPath<B, E> {
    /// The flight's call goes to its lane again (a retry after backoff, or after a 429),
    /// for its waiters' sessions.
    pub(super) fn resubmit(&mut self, now: Instant, id: FlightId) {
        // Present: the callers found the flight.
        let f = self.flights.get(id).expect("flight");
        let lane = usize::from(f.state.lane.0);
        let lane_id = f.state.lane;
        let cost = f.state.cost;
        let Some(session) = f.waiters.values().next().map(|w| w.session.clone()) else {
            // Nobody waits: nothing to ask for.
            self.stats.withdrawn += 1;
            self.end_flight(id);
            return;
        };
        let sessions: Vec<SessionKey> = f
            .waiters
            .values()
            .map(|w| w.session.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect();
        let (holds, from_gate) = (f.state.call.holds_place(), matches!(f.state.call, CallState::Gated));
        if !holds && !self.lanes[lane].has_room(from_gate) {
            // No place free: wait at the gate (a flight taken from the gate always has one).
            self.stats.gated += 1;
            self.set_call(id, CallState::Gated);
            self.lanes[lane].gate.push_back(id);
            return;
        }
        let Some(s) = self.lanes[lane].scheduler.as_mut() else {
            self.set_call(id, CallState::Sent { charge: None });
            self.sent(now, id, None);
            return;
        };
        let submitted = s.submit(now, &session, cost);
        self.flights.get_mut(id).expect("flight").state.session = session.clone();
        match submitted {
            Submission::Admitted(a) => {
                let record = a.record();
                self.set_call(id, CallState::Sent { charge: Some(a.charge) });
                self.sent(now, id, Some(record));
            }
            Submission::Queued { call, entry } => {
                self.set_call(id, CallState::Queued { call });
                self.lanes[lane].flights.insert(call, id);
                self.set_entry(id, &session, entry);
                self.event(|| PathEvent::Queue {
                    lane: lane_id,
                    at: now,
                    session: session.clone(),
                    entry,
                    call,
                    joined: false,
                    cost,
                });
                for other in sessions.into_iter().filter(|s| s != &session) {
                    if let Some(e) = self.join_entry(now, lane, call, &other) {
                        self.set_entry(id, &other, e);
                    }
                }
            }
            Submission::Refused { reason, retry_at } => {
                self.stats.refused += 1;
                self.event(|| PathEvent::Refuse {
                    lane: lane_id,
                    at: now,
                    session,
                    reason,
                    retry_at,
                });
                self.finish(now, id, OutcomeKind::Refused, |_| {
                    Delivery::Failed(Failure::QueueFull { reason, retry_at })
                });
            }
        }
    }

    /// Flight `id`, on lane `lane` in state `call`, is over: its place (or its spot at the
    /// gate) and its revalidation copy go.
    pub(super) fn release(&mut self, id: FlightId, lane: usize, call: &CallState) {
        let l = &mut self.lanes[lane];
        if call.holds_place() {
            l.holding = l.holding.saturating_sub(1);
        } else if matches!(call, CallState::Gated) {
            l.gate.retain(|&g| g != id);
        }
        self.previous.remove(&id);
    }

    /// Moves flight `id` to `call`, taking or giving back its lane's place.
    pub(super) fn set_call(&mut self, id: FlightId, call: CallState) {
        let Some(f) = self.flights.get_mut(id) else {
            return;
        };
        let (before, after) = (f.state.call.holds_place(), call.holds_place());
        let lane = &mut self.lanes[usize::from(f.state.lane.0)];
        match (before, after) {
            (false, true) => lane.holding += 1,
            (true, false) => lane.holding = lane.holding.saturating_sub(1),
            _ => {}
        }
        f.state.call = call;
    }

    /// Flight `id` goes out now (its state is already `Sent`).
    pub(super) fn sent(&mut self, now: Instant, id: FlightId, admission: Option<AdmissionRecord>) {
        // Present: the callers just set the flight's state.
        let f = self.flights.get_mut(id).expect("flight");
        f.state.attempts += 1;
        f.state.first_sent_at.get_or_insert(now);
        for w in f.waiters.values_mut() {
            w.entry = None;
        }
        let attempt = Attempt {
            flight: id,
            number: f.state.attempts,
        };
        let key = f.key.clone();
        let (lane, cost) = (f.state.lane, f.state.cost);
        if let Some(a) = &admission {
            // The entry that went decides who pays (a session that joined may have won).
            f.state.session = a.session.clone();
        }
        let session = f.state.session.clone();
        self.stats.attempts += 1;
        if attempt.number > 1 {
            self.stats.retries += 1;
        }
        self.event(|| PathEvent::Send {
            lane,
            at: now,
            session,
            attempt,
            cost,
            admission: admission.clone(),
        });
        let previous = self.previous.get(&id).cloned();
        self.effects.push_back(Effect::Send {
            attempt,
            lane,
            key,
            admission,
            previous,
        });
    }

    /// Admits everything due at `now` on every lane, and starts the due retries.
    pub(super) fn drive(&mut self, now: Instant) {
        while let Some(&(until, id)) = self.backoffs.first() {
            if until > now {
                break;
            }
            self.backoffs.pop_first();
            self.resubmit(now, id);
        }
        for lane in 0..self.lanes.len() {
            while self.lanes[lane].has_room(true)
                && let Some(id) = self.lanes[lane].gate.pop_front()
            {
                // Still `Gated` (and off the gate): it takes the place now.
                self.resubmit(now, id);
            }
        }
        for lane in 0..self.lanes.len() {
            while let Some(a) = self.lanes[lane].scheduler.as_mut().and_then(|s| s.poll_admission(now)) {
                let Some(id) = self.lanes[lane].flights.remove(&a.call) else {
                    // Every queued call belongs to a flight; an unknown one is a bug that
                    // `check_invariants` reports. It is charged, and goes nowhere.
                    debug_assert!(false, "admitted call {} has no flight", a.call);
                    continue;
                };
                let record = a.record();
                self.set_call(id, CallState::Sent { charge: Some(a.charge) });
                self.sent(now, id, Some(record));
            }
        }
    }
}
