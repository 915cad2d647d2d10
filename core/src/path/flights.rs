//! A flight's life on the path: a request arrives (a buffer hit, a join of the flight
//! for its key, or a new flight led through its lane), a waiter leaves (what nobody waits
//! for any more is withdrawn), and a flight ends, each remaining waiter told once.
//!
//! Invariants: one flight per cache key; a joiner stands on an entry of the queued call
//! for its session, and a leaver's entry is withdrawn only while another entry stands for
//! the call; a flight that ends releases its place or its spot at the gate. What it does
//! not do: decide what an outcome means (`outcome.rs`) or admit anything (`lanes.rs`).

use super::{
    Arrival, Buffer, CallState, Delivery, Effect, FlightState, Lane, OutcomeKind, PathEvent, PlatformPath, Request,
};
use crate::dedup::{FlightId, WaiterId};
use crate::scheduler::{CallTicket, EntryTicket, SessionKey, Submission};
use crate::time::{Instant, WallTime};
use crate::units::Units;

impl<B: Buffer, E: Clone> PlatformPath<B, E> {
    pub(super) fn arrive(&mut self, now: Instant, wall: WallTime, req: Request) -> Arrival<B::Payload> {
        if let Some(payload) = self.buffer.lookup(&req.key, wall) {
            self.stats.hits += 1;
            self.event(|| PathEvent::Hit {
                at: now,
                session: req.session.clone(),
                key: req.key.clone(),
            });
            return Arrival::Cached(payload);
        }
        let lane = self.lane_index(req.lane);
        if let Some(flight) = self.flights.flight_of(&req.key) {
            return self.join(now, flight, req);
        }
        let previous = self.buffer.expired(&req.key, wall);
        if !self.lanes[lane].has_room(false) {
            // The lane's places are taken: wait at its gate, in arrival order.
            self.stats.led += 1;
            self.stats.gated += 1;
            let id = self.begin_flight(now, &req, lane, CallState::Gated, previous);
            self.lanes[lane].gate.push_back(id);
            return Arrival::Waiting { flight: id, led: true };
        }
        // A new flight: its call goes to the lane first, so a full queue leaves nothing behind.
        let call = match self.lanes[lane].scheduler.as_mut() {
            None => CallState::Sent { charge: None },
            Some(s) => match s.submit(now, &req.session, req.cost) {
                Submission::Admitted(a) => {
                    let record = a.record();
                    self.stats.led += 1;
                    let id = self.begin_flight(now, &req, lane, CallState::Sent { charge: Some(a.charge) }, previous);
                    self.sent(now, id, Some(record));
                    return Arrival::Waiting { flight: id, led: true };
                }
                Submission::Queued { call, entry } => {
                    self.stats.led += 1;
                    let id = self.begin_flight(now, &req, lane, CallState::Queued { call }, previous);
                    self.lanes[lane].flights.insert(call, id);
                    if let Some(f) = self.flights.get_mut(id)
                        && let Some(w) = f.waiters.get_mut(&req.waiter)
                    {
                        w.entry = Some(entry);
                    }
                    let session = req.session.clone();
                    self.event(|| PathEvent::Queue {
                        lane: req.lane,
                        at: now,
                        session,
                        entry,
                        call,
                        joined: false,
                        cost: req.cost,
                    });
                    return Arrival::Waiting { flight: id, led: true };
                }
                Submission::Refused { reason, retry_at } => {
                    self.stats.refused += 1;
                    self.event(|| PathEvent::Refuse {
                        lane: req.lane,
                        at: now,
                        session: req.session.clone(),
                        reason,
                        retry_at,
                    });
                    return Arrival::Refused { reason, retry_at };
                }
            },
        };
        self.stats.led += 1;
        let id = self.begin_flight(now, &req, lane, call, previous);
        self.sent(now, id, None);
        Arrival::Waiting { flight: id, led: true }
    }

    /// Starts a flight for `req` in `call` state (no flight exists for its key), with the
    /// expired copy it may revalidate.
    pub(super) fn begin_flight(
        &mut self,
        now: Instant,
        req: &Request,
        lane: usize,
        call: CallState,
        previous: Option<B::Payload>,
    ) -> FlightId {
        if call.holds_place() {
            self.lanes[lane].holding += 1;
        }
        let state = FlightState {
            lane: Lane(u8::try_from(lane).unwrap_or(u8::MAX)),
            cost: req.cost,
            session: req.session.clone(),
            call,
            attempts: 0,
            failures: 0,
            first_sent_at: None,
        };
        // The caller checked that no flight exists for the key; waiter ids are the shell's
        // to keep unique.
        let id = match self.flights.lead(&req.key, req.waiter, &req.session, state) {
            Ok(id) => id,
            Err(bug) => panic!("a shell broke the path's contract: {bug}"),
        };
        if let Some(previous) = previous {
            self.previous.insert(id, previous);
        }
        self.event(|| PathEvent::Lead {
            at: now,
            session: req.session.clone(),
            flight: id,
            key: req.key.clone(),
        });
        id
    }

    pub(super) fn join(&mut self, now: Instant, flight: FlightId, req: Request) -> Arrival<B::Payload> {
        if let Err(bug) = self.flights.join(flight, req.waiter, &req.session) {
            panic!("a shell broke the path's contract: {bug}");
        }
        self.stats.coalesced += 1;
        // Present: the flight was found under the key just now.
        let f = self.flights.get(flight).expect("the key's flight");
        let lane = usize::from(f.state.lane.0);
        let queued = match f.state.call {
            CallState::Queued { call } => Some(call),
            _ => None,
        };
        self.event(|| PathEvent::Coalesce {
            at: now,
            session: req.session.clone(),
            flight,
            queued: queued.is_some(),
        });
        if let Some(call) = queued {
            // A full queue: the joiner waits for the call at its current position.
            if let Some(entry) = self.join_entry(now, lane, call, &req.session) {
                self.set_entry(flight, &req.session, entry);
            }
        }
        Arrival::Waiting { flight, led: false }
    }

    /// `session`'s entry for the queued `call` of lane `lane` (an existing one, or a new
    /// one joined now), or `None` when the queue is full.
    pub(super) fn join_entry(
        &mut self,
        now: Instant,
        lane: usize,
        call: CallTicket,
        session: &SessionKey,
    ) -> Option<EntryTicket> {
        let s = self.lanes[lane].scheduler.as_mut()?;
        let existing = s.entries_of(call).len();
        let entry = s.join(now, session, call).ok()?;
        let joined = s.entries_of(call).len() > existing;
        if joined {
            let cost = self.flights_cost(call, lane);
            self.event(|| PathEvent::Queue {
                lane: Lane(u8::try_from(lane).unwrap_or(u8::MAX)),
                at: now,
                session: session.clone(),
                entry,
                call,
                joined: true,
                cost,
            });
        }
        Some(entry)
    }

    pub(super) fn flights_cost(&self, call: CallTicket, lane: usize) -> Units {
        self.lanes[lane]
            .flights
            .get(&call)
            .and_then(|&id| self.flights.get(id))
            .map_or(Units::ZERO, |f| f.state.cost)
    }

    /// Every waiter of `session` in `flight` stands on `entry`.
    pub(super) fn set_entry(&mut self, flight: FlightId, session: &SessionKey, entry: EntryTicket) {
        if let Some(f) = self.flights.get_mut(flight) {
            for w in f.waiters.values_mut() {
                if &w.session == session {
                    w.entry = Some(entry);
                }
            }
        }
    }

    /// `waiter` leaves its flight; what nobody waits for any more is withdrawn. Admits
    /// nothing (the caller drives).
    pub(super) fn withdraw(&mut self, now: Instant, waiter: WaiterId) {
        let Some((id, gone)) = self.flights.leave(waiter) else {
            return;
        };
        self.stats.left += 1;
        // Present: `leave` returns only flights in the table.
        let f = self.flights.get(id).expect("the waiter's flight");
        let lane = usize::from(f.state.lane.0);
        let nobody = f.waiters.is_empty();
        match f.state.call {
            CallState::Sent { .. } => {
                // The call is out: it completes, and a success is still kept.
            }
            CallState::Backoff { until } => {
                if nobody {
                    self.backoffs.remove(&(until, id));
                    self.stats.withdrawn += 1;
                    self.end_flight(id);
                }
            }
            CallState::Gated => {
                if nobody {
                    self.stats.withdrawn += 1;
                    self.end_flight(id);
                }
            }
            CallState::Queued { call } => {
                if nobody {
                    if let Some(s) = self.lanes[lane].scheduler.as_mut() {
                        s.cancel_call(now, call);
                    }
                    self.lanes[lane].flights.remove(&call);
                    self.stats.withdrawn += 1;
                    self.event(|| PathEvent::CancelCall {
                        lane: Lane(u8::try_from(lane).unwrap_or(u8::MAX)),
                        at: now,
                        call,
                    });
                    self.end_flight(id);
                } else if let Some(entry) = gone.entry {
                    self.withdraw_entry(now, id, lane, call, entry);
                }
            }
        }
    }

    /// The leaver's `entry` of the queued `call` stands for nobody unless another waiter of
    /// its session shares it; withdraw it, but never the call's last place while others wait
    /// (give another waiter's session a place first).
    pub(super) fn withdraw_entry(
        &mut self,
        now: Instant,
        id: FlightId,
        lane: usize,
        call: CallTicket,
        entry: EntryTicket,
    ) {
        // Present: the caller found the flight.
        let f = self.flights.get(id).expect("flight");
        if f.waiters.values().any(|w| w.entry == Some(entry)) {
            return;
        }
        if f.waiters.values().all(|w| w.entry.is_none()) {
            let session = f.waiters.values().next().map(|w| w.session.clone());
            if let Some(session) = session
                && let Some(e) = self.join_entry(now, lane, call, &session)
            {
                self.set_entry(id, &session, e);
            }
        }
        let f = self.flights.get(id).expect("flight");
        if f.waiters.values().any(|w| w.entry.is_some())
            && let Some(s) = self.lanes[lane].scheduler.as_mut()
            && s.cancel(now, entry)
        {
            self.event(|| PathEvent::Cancel {
                lane: Lane(u8::try_from(lane).unwrap_or(u8::MAX)),
                at: now,
                entry,
            });
        }
    }

    /// Flight `id` ends with `kind`: each remaining waiter gets `delivery(is_leader)`.
    pub(super) fn finish(
        &mut self,
        now: Instant,
        id: FlightId,
        kind: OutcomeKind,
        delivery: impl Fn(bool) -> Delivery<B::Payload, E>,
    ) {
        let Some(f) = self.flights.finish(id) else {
            return;
        };
        self.release(id, usize::from(f.state.lane.0), &f.state.call);
        let n = f.waiters.len();
        for &w in f.waiters.keys() {
            self.effects.push_back(Effect::Deliver {
                waiter: w,
                delivery: delivery(w == f.leader),
            });
        }
        self.effects.push_back(Effect::Ended { flight: id });
        self.event(|| PathEvent::Outcome {
            at: now,
            flight: id,
            kind,
            waiters: n,
            again: Vec::new(),
        });
    }

    /// Flight `id` ends without anyone to tell (withdrawn).
    pub(super) fn end_flight(&mut self, id: FlightId) {
        if let Some(f) = self.flights.finish(id) {
            self.release(id, usize::from(f.state.lane.0), &f.state.call);
            self.effects.push_back(Effect::Ended { flight: id });
        }
    }
}
