//! What an attempt's outcome does to its flight: a success is kept and delivered; a 429
//! refunds the charge and queues again the waiters that may wait once more, behind the
//! Retry-After; a retryable failure backs off within the retry policy; a failure for good
//! serves a stale answer where the data class allows, else the error.
//!
//! Invariants: only a success reaches [`Buffer::store`]; a refused charge is refunded
//! exactly once; no retry is made for a flight nobody waits for. What it does not do:
//! send the retry (`lanes.rs` resubmits it).

use std::time::Duration;

use super::{
    Attempt, Buffer, CallState, Delivery, Effect, Failure, Lane, Outcome, OutcomeKind, PathEvent, PlatformPath, Served,
    StaleAnswer,
};
use crate::dedup::FlightId;
use crate::scheduler::{Charge, queued_again};
use crate::time::{Instant, WallTime};

impl<B: Buffer, E: Clone> PlatformPath<B, E> {
    pub(super) fn outcome(&mut self, now: Instant, wall: WallTime, attempt: Attempt, outcome: Outcome<B::Payload, E>) {
        let id = attempt.flight;
        let Some(f) = self.flights.get_mut(id) else {
            return;
        };
        let CallState::Sent { charge } = &mut f.state.call else {
            return;
        };
        if f.state.attempts != attempt.number {
            return;
        }
        let charge = charge.take();
        let lane = usize::from(f.state.lane.0);
        let first_sent_at = f.state.first_sent_at.unwrap_or(now);
        let anyone = !f.waiters.is_empty();
        let key = f.key.clone();
        match outcome {
            Outcome::Success { payload, feedback } => {
                if let (Some(s), Some(remaining)) = (self.lanes[lane].scheduler.as_mut(), feedback.remaining) {
                    s.on_remaining(now, remaining, feedback.reset);
                }
                if feedback.revalidated {
                    self.stats.revalidated += 1;
                }
                self.buffer.store(&key, &payload, feedback.keep, wall);
                self.finish(now, id, OutcomeKind::Ok, |leader| Delivery::Answer {
                    payload: payload.clone(),
                    served: if leader { Served::Fetched } else { Served::Coalesced },
                });
            }
            Outcome::RateLimited { retry_after, error } => self.rate_limited(now, id, lane, charge, retry_after, error),
            Outcome::Retryable { error, retry_after } => {
                let failed = match self.flights.get_mut(id) {
                    Some(f) => {
                        f.state.failures += 1;
                        f.state.failures
                    }
                    None => return,
                };
                if let (Some(s), Some(wait)) = (self.lanes[lane].scheduler.as_mut(), retry_after) {
                    // The platform asks everyone to back off, not only this call.
                    s.on_retry_after(now, wait);
                }
                let deadline = first_sent_at + self.retry.deadline();
                let wait = retry_after.unwrap_or_else(|| self.jitter.apply(self.retry.backoff(failed)));
                let until = now + wait;
                // Nobody waits any more: another attempt would spend the platform's budget
                // for no one.
                if failed < self.retry.max_attempts && until < deadline && anyone {
                    self.set_call(id, CallState::Backoff { until });
                    self.backoffs.insert((until, id));
                    self.event(|| PathEvent::Retry {
                        at: now,
                        flight: id,
                        failed,
                        until,
                    });
                } else {
                    self.fail(now, wall, id, error);
                }
            }
            Outcome::Failed { error } => self.fail(now, wall, id, error),
        }
    }

    /// The platform refused flight `id` with 429.
    pub(super) fn rate_limited(
        &mut self,
        now: Instant,
        id: FlightId,
        lane: usize,
        charge: Option<Charge>,
        retry_after: Duration,
        error: E,
    ) {
        let lane_id = Lane(u8::try_from(lane).unwrap_or(u8::MAX));
        let limited = match self.lanes[lane].scheduler.as_mut() {
            Some(s) => {
                s.on_retry_after(now, retry_after);
                if let Some(charge) = charge {
                    let (session, cost) = (charge.session().clone(), charge.cost());
                    s.refund(now, charge);
                    self.stats.refunds += 1;
                    self.event(|| PathEvent::Refund {
                        lane: lane_id,
                        at: now,
                        flight: id,
                        session,
                        cost,
                    });
                }
                true
            }
            None => false,
        };
        // Who waits once more (`queued_again`), each waiter on its own.
        let mut again = Vec::new();
        let mut refused = Vec::new();
        // Present: the caller found the flight.
        let f = self.flights.get(id).expect("flight");
        for (&w, waiter) in &f.waiters {
            let may = queued_again(
                limited,
                retry_after,
                self.requeue_wait_max,
                waiter.requeued,
                &waiter.session,
            );
            if may { again.push(w) } else { refused.push(w) }
        }
        if again.is_empty() {
            self.finish(now, id, OutcomeKind::RateLimited, |_| {
                Delivery::Failed(Failure::Platform(error.clone()))
            });
            return;
        }
        for &w in &refused {
            self.flights.leave(w);
            self.effects.push_back(Effect::Deliver {
                waiter: w,
                delivery: Delivery::Failed(Failure::Platform(error.clone())),
            });
        }
        let waiters = refused.len();
        self.event(|| PathEvent::Outcome {
            at: now,
            flight: id,
            kind: OutcomeKind::RateLimited,
            waiters,
            again: again.clone(),
        });
        if let Some(f) = self.flights.get_mut(id) {
            for w in f.waiters.values_mut() {
                w.requeued = true;
            }
        }
        self.stats.requeues += 1;
        self.resubmit(now, id);
    }

    /// Flight `id` failed for good: a stale answer where the data class allows, else `error`.
    pub(super) fn fail(&mut self, now: Instant, wall: WallTime, id: FlightId, error: E) {
        // Present: the callers found the flight.
        let key = self.flights.get(id).expect("flight").key.clone();
        match self.buffer.stale(&key, wall) {
            Some(StaleAnswer::Fresh(payload)) => {
                self.finish(now, id, OutcomeKind::Ok, |_| Delivery::Answer {
                    payload: payload.clone(),
                    served: Served::Cached,
                });
            }
            Some(StaleAnswer::Stale(payload)) => {
                self.stats.stale_served += 1;
                self.finish(now, id, OutcomeKind::Stale, |_| Delivery::Answer {
                    payload: payload.clone(),
                    served: Served::Stale,
                });
            }
            None => {
                self.stats.failed += 1;
                self.finish(now, id, OutcomeKind::Failed, |_| {
                    Delivery::Failed(Failure::Platform(error.clone()))
                });
            }
        }
    }
}
