//! [`FairScheduler::check_invariants`]: the scheduler's internal consistency, checked
//! from outside after every step of the property drivers and the simulator (in the
//! style of TigerBeetle's VOPR). O(waiting calls + tracked sessions): for tests and
//! simulations, not the server's hot path.

use super::{FairScheduler, SessionState};
use crate::units::Units;

/// What the walk over the sessions counted, compared with the scheduler's own counts
/// and running sums at its end.
#[derive(Default)]
struct Seen {
    live: usize,
    queued: usize,
    waiting_sessions: usize,
    idle_sessions: usize,
    refill_sum: u128,
    refill_heads: u64,
    weight_sum: u128,
}

impl FairScheduler {
    /// Checks every internal invariant; the first broken one is described.
    ///
    /// - the queue count, the entry map and the call index agree with the sessions' queues;
    /// - every waiting session has exactly one head in the fair order and one deadline,
    ///   matching its first queued call, and the running sums over heads are exact;
    /// - an idle session is scheduled to be forgotten, a waiting one is not;
    /// - the session index and the slots agree; freed slots are empty;
    /// - the queue bounds hold and the bucket never holds more than C.
    pub fn check_invariants(&self) -> Result<(), String> {
        // Membership is checked with lookups and the sizes compared: no set is built, so
        // the check stays cheap enough to run after every simulated event.
        let mut seen = Seen::default();
        for (slot, state) in self.sessions.iter().enumerate() {
            let Some(state) = state else {
                continue;
            };
            seen.live += 1;
            let slot = u32::try_from(slot).map_err(|_| "slot beyond u32".to_owned())?;
            self.check_session(slot, state, &mut seen)?;
        }
        self.check_totals(&seen)?;
        self.calls.check()?;
        if self.bucket.tokens(self.last_now) > self.config.limit.capacity.max(Units::ZERO) {
            return Err("the bucket holds more than C".to_owned());
        }
        Ok(())
    }

    /// The session in `slot` is indexed there, its queue within its bound and each of its
    /// calls mapped; then its head, or its place in the forget schedule when idle.
    fn check_session(&self, slot: u32, state: &SessionState, seen: &mut Seen) -> Result<(), String> {
        if self.index.get(&state.key) != Some(&slot) {
            return Err(format!("session {} in slot {slot} is not indexed there", state.key));
        }
        if state.queue.len() > self.config.max_queued_per_session {
            return Err(format!(
                "session {} has {} calls waiting, above the bound {}",
                state.key,
                state.queue.len(),
                self.config.max_queued_per_session
            ));
        }
        for call in &state.queue {
            seen.queued += 1;
            if self.entries.get(&call.entry) != Some(&slot) {
                return Err(format!(
                    "entry {} of session {} is not mapped to its slot",
                    call.entry, state.key
                ));
            }
            if self.calls.call_of(call.entry) != Some(call.call) {
                return Err(format!(
                    "entry {} does not stand for its call {}",
                    call.entry, call.call
                ));
            }
            if call.cost > self.config.limit.capacity {
                return Err(format!("entry {} costs more than C", call.entry));
            }
        }
        match state.queue.front() {
            Some(head) => {
                if state.forget_at.is_some() {
                    return Err(format!("waiting session {} is scheduled to be forgotten", state.key));
                }
                let tags = state.head;
                if tags.cost != head.cost || tags.refill_ns != self.bucket.refill_ns(head.cost) {
                    return Err(format!("the head tags of {} do not match its head call", state.key));
                }
                if tags.weight_q32 != self.weight_q32(state) {
                    return Err(format!("the head weight of {} is stale", state.key));
                }
                let queued_milli: u64 = state.queue.iter().map(|c| c.cost.as_milli()).sum();
                if state.queued_milli != queued_milli || tags.queued_milli != queued_milli {
                    return Err(format!("the units waiting in {} are miscounted", state.key));
                }
                if !self.fair_heads.contains(&super::fair_key(&tags, head.entry, slot))
                    || !self.deadlines.contains(&(tags.deadline, head.entry, slot))
                {
                    return Err(format!(
                        "the head of {} is missing from the fair order or the deadlines",
                        state.key
                    ));
                }
                if self.head_refills.get(&tags.refill_ns).is_none_or(|&n| n == 0) {
                    return Err(format!("the head refill of {} is not counted", state.key));
                }
                seen.waiting_sessions += 1;
                seen.refill_sum += u128::from(tags.refill_ns);
                seen.refill_heads += 1;
                seen.weight_sum += u128::from(tags.weight_q32);
            }
            None => match state.forget_at {
                Some(at) if self.forget.contains(&(at, slot)) => seen.idle_sessions += 1,
                Some(_) => return Err(format!("idle session {} is not in the forget schedule", state.key)),
                None => return Err(format!("idle session {} is never forgotten", state.key)),
            },
        }
        Ok(())
    }

    /// The counts and running sums the walk saw agree with the scheduler's own, the free
    /// slots are empty, and the queue's bound holds.
    fn check_totals(&self, seen: &Seen) -> Result<(), String> {
        if seen.live != self.index.len() {
            return Err(format!(
                "{} live slots but {} indexed sessions",
                seen.live,
                self.index.len()
            ));
        }
        for &slot in &self.free_slots {
            if self.sessions.get(slot as usize).is_none_or(Option::is_some) {
                return Err(format!("free slot {slot} is in use"));
            }
        }
        if seen.queued != self.queued || seen.queued != self.entries.len() || seen.queued != self.calls.len() {
            return Err(format!(
                "{} calls queued in sessions, counter {}, {} mapped entries, {} indexed entries",
                seen.queued,
                self.queued,
                self.entries.len(),
                self.calls.len()
            ));
        }
        if self.queued > self.config.max_queued {
            return Err(format!(
                "{} calls wait, above the bound {}",
                self.queued, self.config.max_queued
            ));
        }
        if self.fair_heads.len() != seen.waiting_sessions || self.deadlines.len() != seen.waiting_sessions {
            return Err(format!(
                "{} sessions wait, the fair order lists {} and the deadlines {}",
                seen.waiting_sessions,
                self.fair_heads.len(),
                self.deadlines.len()
            ));
        }
        if self.forget.len() != seen.idle_sessions {
            return Err(format!(
                "{} idle sessions, the forget schedule lists {}",
                seen.idle_sessions,
                self.forget.len()
            ));
        }
        let counted_heads: u64 = self.head_refills.values().map(|&n| u64::from(n)).sum();
        if seen.refill_sum != self.heads_refill_ns
            || counted_heads != seen.refill_heads
            || seen.weight_sum != self.heads_weight_q32
        {
            return Err("the running sums over waiting heads are off".to_owned());
        }
        Ok(())
    }
}
