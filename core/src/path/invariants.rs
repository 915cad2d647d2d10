//! [`PlatformPath::check_invariants`]: the path's promises (see the module documentation),
//! checked against its whole state after any input.

use super::{Buffer, CallState, FlightState, LaneState, PlatformPath};
use crate::cache::CacheKey;
use crate::dedup::{Flight, FlightId};
use crate::scheduler::{CallTicket, EntryTicket};

impl<B: Buffer, E: Clone> PlatformPath<B, E> {
    /// Checks the path's invariants together with its flight table's and schedulers';
    /// the first broken one is described. O(flights + queued calls): for tests and
    /// simulations.
    pub fn check_invariants(&self) -> Result<(), String> {
        self.flights.check_invariants()?;
        let mut queued_flights = 0;
        let mut backoffs = 0;
        for (id, f) in self.flights.iter() {
            match f.state.call {
                CallState::Queued { .. } => queued_flights += 1,
                CallState::Backoff { .. } => backoffs += 1,
                CallState::Sent { .. } | CallState::Gated => {}
            }
            self.check_flight(id, f)?;
        }
        if backoffs != self.backoffs.len() {
            return Err("the retry timers do not list exactly the flights backing off".to_owned());
        }
        let indexed: usize = self.lanes.iter().map(|l| l.flights.len()).sum();
        if indexed != queued_flights {
            return Err(format!("{indexed} calls indexed for {queued_flights} queued flights"));
        }
        for (i, lane) in self.lanes.iter().enumerate() {
            self.check_lane(i, lane)?;
        }
        Ok(())
    }

    /// Flight `id`'s state agrees with its lane, its timers and its waiters.
    fn check_flight(&self, id: FlightId, f: &Flight<CacheKey, FlightState>) -> Result<(), String> {
        let lane = self
            .lanes
            .get(usize::from(f.state.lane.0))
            .ok_or_else(|| format!("flight {id:?} is on lane {} which does not exist", f.state.lane))?;
        match f.state.call {
            CallState::Queued { call } => check_queued(id, f, lane, call)?,
            CallState::Backoff { until } => {
                if !self.backoffs.contains(&(until, id)) {
                    return Err(format!("flight {id:?} backs off without its retry timer"));
                }
                if f.waiters.is_empty() {
                    return Err(format!("flight {id:?} backs off with nobody waiting"));
                }
            }
            CallState::Sent { .. } => {
                if f.state.attempts == 0 {
                    return Err(format!("flight {id:?} is out without an attempt"));
                }
            }
            CallState::Gated => {
                if !lane.gate.contains(&id) {
                    return Err(format!("flight {id:?} is gated but not at its lane's gate"));
                }
                if f.waiters.is_empty() {
                    return Err(format!("gated flight {id:?} has nobody waiting and was not withdrawn"));
                }
            }
        }
        if !matches!(f.state.call, CallState::Queued { .. })
            && let Some((w, _)) = f.waiters.iter().find(|(_, w)| w.entry.is_some())
        {
            return Err(format!(
                "waiter {w:?} of flight {id:?} holds an entry of a call that is not queued"
            ));
        }
        if f.state.failures > self.retry.max_attempts {
            return Err(format!("flight {id:?} was retried after {} failures", f.state.failures));
        }
        Ok(())
    }

    /// Lane `i`'s places and gate agree with its flights, within its bound; its
    /// scheduler keeps its own invariants.
    fn check_lane(&self, i: usize, lane: &LaneState) -> Result<(), String> {
        let mine = |f: &Flight<CacheKey, FlightState>| usize::from(f.state.lane.0) == i;
        let holding = self
            .flights
            .iter()
            .filter(|(_, f)| mine(f) && f.state.call.holds_place())
            .count();
        let gated = self
            .flights
            .iter()
            .filter(|(_, f)| mine(f) && matches!(f.state.call, CallState::Gated))
            .count();
        if holding != lane.holding {
            return Err(format!(
                "lane {i} counts {} places held by {holding} flights",
                lane.holding
            ));
        }
        if gated != lane.gate.len() {
            return Err(format!(
                "lane {i}'s gate lists {} flights for {gated} gated",
                lane.gate.len()
            ));
        }
        if let Some(max) = lane.max_in_flight {
            if holding > max {
                return Err(format!("lane {i} has {holding} flights queued or out, more than {max}"));
            }
            if !lane.gate.is_empty() && holding < max {
                return Err(format!(
                    "lane {i} has a free place while {gated} flights wait at its gate"
                ));
            }
        } else if gated > 0 {
            return Err(format!("lane {i} without a bound gates {gated} flights"));
        }
        if let Some(s) = &lane.scheduler {
            s.check_invariants()
                .map_err(|e| format!("lane {i} ({}): {e}", lane.name))?;
        }
        Ok(())
    }
}

/// Queued flight `id` is indexed under its `call`, which still waits in `lane`'s queue
/// for somebody; each waiter's entry waits for that call in its own session, and no entry
/// stands for nobody while the waiters hold places.
fn check_queued(
    id: FlightId,
    f: &Flight<CacheKey, FlightState>,
    lane: &LaneState,
    call: CallTicket,
) -> Result<(), String> {
    let s = lane
        .scheduler
        .as_ref()
        .ok_or_else(|| format!("flight {id:?} is queued on a lane without a queue"))?;
    if lane.flights.get(&call) != Some(&id) {
        return Err(format!("queued flight {id:?} is not indexed under its call {call}"));
    }
    if !s.is_waiting(call) {
        return Err(format!("flight {id:?} is queued but its call {call} no longer waits"));
    }
    if f.waiters.is_empty() {
        return Err(format!("queued flight {id:?} has nobody waiting and was not withdrawn"));
    }
    let entries = s.entries_of(call);
    for (w, waiter) in &f.waiters {
        if let Some(e) = waiter.entry {
            if !entries.contains(&e) {
                return Err(format!("waiter {w:?} holds entry {e} that does not wait for {call}"));
            }
            if s.entry_session(e) != Some(&waiter.session) {
                return Err(format!("waiter {w:?} holds entry {e} of another session"));
            }
        }
    }
    let holds = |e: &EntryTicket| f.waiters.values().any(|w| w.entry == Some(*e));
    let unheld = entries.iter().filter(|e| !holds(e)).count();
    if unheld > 0 && f.waiters.values().any(|w| w.entry.is_some()) {
        return Err(format!(
            "call {call} keeps {unheld} entries nobody holds although its waiters hold places"
        ));
    }
    Ok(())
}
