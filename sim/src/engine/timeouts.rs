//! Calls' time-outs, kept apart from the event heap: one first-in-first-out queue per
//! length of time-out.
//!
//! Nearly every call of an agent session has a time-out (`cancel_after_ms`), and nearly
//! every one fires after its call has long ended; in the heap they made it twice as deep.
//! A time-out of a given length is scheduled at `now + after` with `now` never going
//! back, so one queue per length is already in (instant, number) order: a push and a
//! pop cost O(1), and the loop takes the earliest front of them as it takes the heap's
//! top. The numbers are the engine's own sequence, so events run in exactly the order
//! they would have run from the heap.
//!
//! Invariants: each queue is in (instant, number) order; there are at most
//! [`QUEUES_MAX`] queues (time-outs of other lengths go to the heap).
//!
//! What this module does not do: decide whether a time-out still matters when it fires.

use std::collections::VecDeque;
use std::time::Duration;

use besluitbron_core::Instant;

use crate::policy::CallId;

/// Lengths of time-out with a queue of their own, at most: a scenario's sessions share a
/// few; a recording's callers each leave after their own time.
pub const QUEUES_MAX: usize = 8;

/// The time-outs of one length, in (instant, number) order: (instant, number, call).
type Queue = VecDeque<(Instant, u64, CallId)>;

/// The time-outs waiting to fire.
#[derive(Debug, Default)]
pub struct Timeouts {
    queues: Vec<(Duration, Queue)>,
}

impl Timeouts {
    /// Schedules `call`'s time-out of length `after` at `at` (`now + after`) with number
    /// `seq`; false when no queue takes that length (the caller uses its heap).
    pub fn push(&mut self, after: Duration, at: Instant, seq: u64, call: CallId) -> bool {
        let i = match self.queues.iter().position(|(d, _)| *d == after) {
            Some(i) => i,
            None if self.queues.len() < QUEUES_MAX => {
                self.queues.push((after, VecDeque::new()));
                self.queues.len() - 1
            }
            None => return false,
        };
        let queue = &mut self.queues[i].1;
        debug_assert!(queue.back().is_none_or(|&(t, s, _)| (t, s) < (at, seq)));
        queue.push_back((at, seq, call));
        true
    }

    /// The earliest time-out's (instant, number) and its queue.
    pub fn peek(&self) -> Option<(Instant, u64, usize)> {
        self.queues
            .iter()
            .enumerate()
            .filter_map(|(i, (_, q))| q.front().map(|&(at, seq, _)| (at, seq, i)))
            .min()
    }

    /// Takes the front of queue `i`.
    pub fn pop(&mut self, i: usize) -> Option<(Instant, CallId)> {
        self.queues[i].1.pop_front().map(|(at, _, call)| (at, call))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_outs_come_out_by_instant_then_number_and_overflow_to_the_caller() {
        let mut t = Timeouts::default();
        let ms = Duration::from_millis;
        assert!(t.push(ms(100), Instant::from_millis(100), 1, 1));
        assert!(t.push(ms(50), Instant::from_millis(60), 2, 2));
        assert!(t.push(ms(100), Instant::from_millis(110), 3, 3));
        assert!(t.push(ms(50), Instant::from_millis(100), 4, 4));
        let mut order = Vec::new();
        while let Some((_, _, i)) = t.peek() {
            order.push(t.pop(i).expect("peeked").1);
        }
        // 60 ms first, then the two at 100 ms by number, then 110 ms.
        assert_eq!(order, [2, 1, 4, 3]);
        // Two lengths have queues; six more may.
        for k in 0..(QUEUES_MAX - 2) as u64 {
            assert!(t.push(ms(1_000 + k), Instant::from_millis(2_000), 10 + k, 0));
        }
        assert!(
            t.push(ms(50), Instant::from_millis(2_000), 98, 0),
            "a length with a queue"
        );
        assert!(!t.push(ms(5), Instant::from_millis(2_000), 99, 0), "beyond the bound");
    }
}
