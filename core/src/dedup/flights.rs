//! In-flight coalescing (R-D3): one upstream call per key, every waiter gets its outcome.
//!
//! The table only keeps the bookkeeping: which key has a flight, who waits for it, and
//! whether it still waits in a platform queue (and under which scheduler ticket) or has
//! gone out. The shell keeps the channel that carries the outcome.
//!
//! Invariants:
//! - at most one flight per key at any time (the key is the map key);
//! - a flight leaves the table exactly once, through [`FlightTable::finish`] (its
//!   outcome is known) or [`FlightTable::leave`] returning [`Leave::Withdraw`] (nobody
//!   waits any more while it was still queued);
//! - waiters are told apart by [`WaiterId`], never merged;
//! - while a queued flight has waiters, at least one scheduler entry stands for it: a
//!   leave withdraws the leaver's entry only when another one stands, and an entry a
//!   leave withdrew is never recorded again (the shell's joins are answered
//!   asynchronously and may report it after the fact).

use std::collections::{BTreeMap, BTreeSet};

use crate::scheduler::{SessionKey, Ticket};

/// One flight (one upstream call), unique within a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlightId(pub u64);

/// One waiter (one request), chosen by the shell; unique among a flight's waiters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WaiterId(pub u64);

/// What [`FlightTable::begin`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Begin {
    /// No flight for this key: the caller makes the upstream call and later calls
    /// [`FlightTable::finish`].
    Lead(FlightId),
    /// A flight exists: the caller waits for its outcome. `queued` is the scheduler
    /// ticket when the call still waits in a platform queue, so the caller can
    /// [`crate::FairScheduler::join`] it and move it forward.
    Join {
        /// The flight joined.
        flight: FlightId,
        /// The flight's scheduler ticket while it waits in a platform queue.
        queued: Option<Ticket>,
    },
}

/// What [`FlightTable::leave`] decided.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Leave {
    /// Others still wait; if the leaver had its own scheduler entry for the call, the
    /// caller cancels that entry (it no longer stands for anyone).
    Others {
        /// The leaver's own scheduler entry, to cancel.
        cancel_entry: Option<Ticket>,
    },
    /// Nobody waits and the call is still queued: the caller withdraws it from the
    /// platform queue ([`crate::FairScheduler::cancel_flight`]); it costs nothing. The
    /// flight is gone from the table.
    Withdraw {
        /// The flight's scheduler ticket.
        ticket: Option<Ticket>,
    },
    /// Nobody waits but the call already went out: it completes, and its outcome (if a
    /// success) may still be kept by the buffer. The flight stays until `finish`.
    Orphaned,
    /// The flight or the waiter was not known (already finished or already left).
    Unknown,
}

#[derive(Clone, Debug)]
struct Waiter {
    session: SessionKey,
    /// The waiter's own scheduler entry for the call, when it joined a queued call.
    entry: Option<Ticket>,
}

#[derive(Clone, Debug)]
struct Flight<K> {
    key: K,
    /// The session the call is made for (the leader's): the queued call is its entry.
    session: SessionKey,
    ticket: Option<Ticket>,
    /// The scheduler entries that still stand for this call (none withdrawn by a leave).
    standing: BTreeSet<Ticket>,
    /// Entries a leave withdrew. A join answered before the withdrawal reached the
    /// scheduler may still report one of them; it is then not recorded.
    withdrawn: BTreeSet<Ticket>,
    sent: bool,
    waiters: BTreeMap<WaiterId, Waiter>,
}

impl<K> Flight<K> {
    /// `entry` no longer stands for the call: the caller is withdrawing it.
    fn withdraw(&mut self, entry: Ticket) {
        self.standing.remove(&entry);
        self.withdrawn.insert(entry);
    }
}

/// Flights by key, generic over the key type (the buffer's cache key in production).
#[derive(Clone, Debug)]
pub struct FlightTable<K: Ord + Clone> {
    by_key: BTreeMap<K, FlightId>,
    flights: BTreeMap<FlightId, Flight<K>>,
    next_id: u64,
    coalesced: u64,
    led: u64,
}

impl<K: Ord + Clone> Default for FlightTable<K> {
    fn default() -> Self {
        FlightTable {
            by_key: BTreeMap::new(),
            flights: BTreeMap::new(),
            next_id: 0,
            coalesced: 0,
            led: 0,
        }
    }
}

impl<K: Ord + Clone> FlightTable<K> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// A request for `key` by `waiter` of `session` arrives.
    pub fn begin(&mut self, key: &K, waiter: WaiterId, session: &SessionKey) -> Begin {
        let w = Waiter {
            session: session.clone(),
            entry: None,
        };
        if let Some(&id) = self.by_key.get(key) {
            // Present: `by_key` and `flights` change together.
            let flight = self.flights.get_mut(&id).expect("flight of a key");
            flight.waiters.insert(waiter, w);
            self.coalesced += 1;
            let queued = if flight.sent { None } else { flight.ticket };
            return Begin::Join { flight: id, queued };
        }
        let id = FlightId(self.next_id);
        self.next_id += 1;
        self.led += 1;
        self.by_key.insert(key.clone(), id);
        let mut waiters = BTreeMap::new();
        waiters.insert(waiter, w);
        self.flights.insert(
            id,
            Flight {
                key: key.clone(),
                session: session.clone(),
                ticket: None,
                standing: BTreeSet::new(),
                withdrawn: BTreeSet::new(),
                sent: false,
                waiters,
            },
        );
        Begin::Lead(id)
    }

    /// The leader's call waits in a platform queue under `ticket`.
    pub fn queued(&mut self, flight: FlightId, ticket: Ticket) {
        if let Some(f) = self.flights.get_mut(&flight) {
            f.ticket = Some(ticket);
            f.standing.insert(ticket);
            // The queued call is the entry of the leader's session, for the leader and
            // for any request of that session that joined before it was queued: if they
            // all give up while others wait, it stops standing for anyone (see `leave`).
            for w in f.waiters.values_mut() {
                if w.entry.is_none() && w.session == f.session {
                    w.entry = Some(ticket);
                }
            }
        }
    }

    /// `waiter` joined the queued call and has its own scheduler `entry` for it.
    ///
    /// Returns an entry that stands for nobody, for the caller to withdraw so that no
    /// session that left is charged: this one, when the waiter left while its join was on
    /// the way and no other waiter holds it; or, once this one stands, an entry kept as
    /// the call's last place after all its waiters left. An entry a leave withdrew before
    /// the join was answered is not recorded (it is already being withdrawn).
    #[must_use = "an entry that stands for nobody must be withdrawn"]
    pub fn joined_entry(&mut self, flight: FlightId, waiter: WaiterId, entry: Ticket) -> Option<Ticket> {
        // A flight no longer in the table was withdrawn whole (its `cancel_flight` comes
        // after this join at the scheduler) or went out (its other entries with it).
        let f = self.flights.get_mut(&flight)?;
        if f.withdrawn.contains(&entry) {
            return None;
        }
        match f.waiters.get_mut(&waiter) {
            Some(w) => {
                w.entry = Some(entry);
                f.standing.insert(entry);
                if f.sent {
                    return None;
                }
                // An entry kept as the call's last place after its waiters left stands
                // for nobody once this one stands: hand it back for withdrawal.
                let orphan = f
                    .standing
                    .iter()
                    .copied()
                    .find(|&t| f.waiters.values().all(|w| w.entry != Some(t)))?;
                f.withdraw(orphan);
                Some(orphan)
            }
            None if f.sent || f.standing.contains(&entry) => None,
            None => Some(entry),
        }
    }

    /// The call went out (it was admitted, or needed no admission).
    pub fn sent(&mut self, flight: FlightId) {
        if let Some(f) = self.flights.get_mut(&flight) {
            f.sent = true;
        }
    }

    /// The call's outcome is known: the flight ends and every waiter, in id order, gets
    /// it. A new request for the key starts a new flight.
    pub fn finish(&mut self, flight: FlightId) -> Vec<WaiterId> {
        let Some(f) = self.flights.remove(&flight) else {
            return Vec::new();
        };
        self.by_key.remove(&f.key);
        f.waiters.into_keys().collect()
    }

    /// `waiter` gave up (cancelled or disconnected).
    pub fn leave(&mut self, flight: FlightId, waiter: WaiterId) -> Leave {
        let Some(f) = self.flights.get_mut(&flight) else {
            return Leave::Unknown;
        };
        let Some(gone) = f.waiters.remove(&waiter) else {
            return Leave::Unknown;
        };
        if !f.waiters.is_empty() {
            // The entry stands for the leaver's session only if no other waiter of that
            // session shares it. And it is withdrawn only while another waiter holds an
            // entry of its own: the call must keep at least one place in the queue, or
            // nobody would ever be admitted for the waiters that remain (those that
            // joined before the call was queued get their entries a moment later).
            let shared = f
                .waiters
                .values()
                .any(|w| w.session == gone.session && w.entry.is_some());
            let others_hold_a_place = f.standing.iter().any(|&t| Some(t) != gone.entry);
            let cancel_entry = if f.sent || shared || !others_hold_a_place {
                None
            } else {
                gone.entry
            };
            if let Some(entry) = cancel_entry {
                f.withdraw(entry);
            }
            return Leave::Others { cancel_entry };
        }
        if f.sent {
            return Leave::Orphaned;
        }
        let ticket = f.ticket;
        let key = f.key.clone();
        self.flights.remove(&flight);
        self.by_key.remove(&key);
        Leave::Withdraw { ticket }
    }

    /// The waiters of a flight that have no scheduler entry of their own, with their
    /// sessions (e.g. those that joined before the call was queued).
    pub fn unjoined(&self, flight: FlightId) -> Vec<(WaiterId, SessionKey)> {
        self.flights.get(&flight).map_or_else(Vec::new, |f| {
            f.waiters
                .iter()
                .filter(|(_, w)| w.entry.is_none())
                .map(|(id, w)| (*id, w.session.clone()))
                .collect()
        })
    }

    /// The flight running for `key`, if any.
    pub fn flight_of(&self, key: &K) -> Option<FlightId> {
        self.by_key.get(key).copied()
    }

    /// Waiters of a flight.
    pub fn waiters(&self, flight: FlightId) -> usize {
        self.flights.get(&flight).map_or(0, |f| f.waiters.len())
    }

    /// Flights under way.
    pub fn in_flight(&self) -> usize {
        self.flights.len()
    }

    /// Requests that joined an existing flight, since the table was made.
    pub fn coalesced(&self) -> u64 {
        self.coalesced
    }

    /// Requests that started a flight, since the table was made.
    pub fn led(&self) -> u64 {
        self.led
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str) -> SessionKey {
        SessionKey::client(name)
    }

    /// A new flight for `key`, led by waiter 0 of `session`.
    fn lead<K: Ord + Clone>(t: &mut FlightTable<K>, key: K, session: &str) -> FlightId {
        match t.begin(&key, WaiterId(0), &s(session)) {
            Begin::Lead(id) => id,
            other => panic!("expected a new flight, got {other:?}"),
        }
    }

    #[test]
    fn a_thousand_identical_requests_make_one_flight() {
        let mut t = FlightTable::new();
        let id = lead(&mut t, "q", "a");
        for i in 1..1000 {
            assert!(matches!(t.begin(&"q", WaiterId(i), &s("a")), Begin::Join { flight, .. } if flight == id));
        }
        assert_eq!(t.in_flight(), 1);
        assert_eq!(t.finish(id).len(), 1000);
        assert_eq!(t.in_flight(), 0);
        assert!(
            matches!(t.begin(&"q", WaiterId(5000), &s("a")), Begin::Lead(_)),
            "a new flight after the outcome"
        );
    }

    #[test]
    fn keys_do_not_share_flights() {
        let mut t = FlightTable::new();
        assert!(matches!(
            t.begin(&("obv", "public"), WaiterId(0), &s("a")),
            Begin::Lead(_)
        ));
        assert!(matches!(
            t.begin(&("obv", "tenant-1"), WaiterId(1), &s("a")),
            Begin::Lead(_)
        ));
        assert_eq!(t.in_flight(), 2);
    }

    #[test]
    fn the_last_waiter_leaving_a_queued_call_withdraws_it() {
        let mut t = FlightTable::new();
        let id = lead(&mut t, 1, "a");
        t.queued(id, Ticket(7));
        assert!(matches!(
            t.begin(&1, WaiterId(1), &s("b")),
            Begin::Join {
                queued: Some(Ticket(7)),
                ..
            }
        ));
        assert_eq!(t.joined_entry(id, WaiterId(1), Ticket(9)), None);
        assert_eq!(
            t.leave(id, WaiterId(1)),
            Leave::Others {
                cancel_entry: Some(Ticket(9))
            }
        );
        assert_eq!(
            t.leave(id, WaiterId(0)),
            Leave::Withdraw {
                ticket: Some(Ticket(7))
            }
        );
        assert_eq!(t.leave(id, WaiterId(0)), Leave::Unknown);
        assert_eq!(t.flight_of(&1), None);
    }

    #[test]
    fn a_leader_that_gives_up_leaves_the_call_to_the_sessions_that_joined_it() {
        // R-D3: the session whose entry is admitted pays; a leader that left must not
        // keep an entry that could still be admitted (and charged) in its name.
        let mut t = FlightTable::new();
        let id = lead(&mut t, 1, "heavy");
        t.queued(id, Ticket(7));
        t.begin(&1, WaiterId(1), &s("fresh"));
        assert_eq!(t.joined_entry(id, WaiterId(1), Ticket(9)), None);
        assert_eq!(
            t.leave(id, WaiterId(0)),
            Leave::Others {
                cancel_entry: Some(Ticket(7))
            }
        );
        assert_eq!(t.waiters(id), 1);
        assert_eq!(t.flight_of(&1), Some(id));
    }

    #[test]
    fn a_call_keeps_its_last_place_in_the_queue_while_anyone_waits() {
        let mut t = FlightTable::new();
        let id = lead(&mut t, 1, "a");
        // b joined before the call was queued: it has no entry of its own yet.
        t.begin(&1, WaiterId(1), &s("b"));
        t.queued(id, Ticket(7));
        assert_eq!(t.leave(id, WaiterId(0)), Leave::Others { cancel_entry: None });
        // A later joiner's entry arrives; b still has none. The leader's kept entry now
        // stands for nobody and is handed back; the joiner's is the call's place.
        t.begin(&1, WaiterId(2), &s("c"));
        assert_eq!(t.joined_entry(id, WaiterId(2), Ticket(9)), Some(Ticket(7)));
        assert_eq!(t.leave(id, WaiterId(2)), Leave::Others { cancel_entry: None });
        // b's entry arrives at last: c's kept one goes in turn.
        assert_eq!(t.joined_entry(id, WaiterId(1), Ticket(11)), Some(Ticket(9)));
        assert_eq!(
            t.leave(id, WaiterId(1)),
            Leave::Withdraw {
                ticket: Some(Ticket(7))
            }
        );
        // Same session as the leader: the joiner shares the leader's entry.
        let mut t = FlightTable::new();
        let id = lead(&mut t, 2, "a");
        t.queued(id, Ticket(3));
        t.begin(&2, WaiterId(1), &s("a"));
        assert_eq!(t.leave(id, WaiterId(0)), Leave::Others { cancel_entry: None });
    }

    #[test]
    fn a_join_answered_before_a_withdrawal_took_effect_does_not_bring_the_entry_back() {
        // Found in review: the server's joins are answered by the platform's gate task,
        // so a join can report the session's existing entry just before the leave that
        // withdraws it reaches the scheduler. Recording it would count a dead entry as a
        // place, and a later leave could then withdraw the call's last real entry.
        let mut t = FlightTable::new();
        let id = lead(&mut t, 1, "a");
        t.queued(id, Ticket(7));
        t.begin(&1, WaiterId(1), &s("c"));
        assert_eq!(t.joined_entry(id, WaiterId(1), Ticket(9)), None);
        // A second request of session a joins; its join is still on the way.
        t.begin(&1, WaiterId(2), &s("a"));
        assert_eq!(
            t.leave(id, WaiterId(0)),
            Leave::Others {
                cancel_entry: Some(Ticket(7))
            }
        );
        // The join comes back with a's entry, which the gate withdraws right after.
        assert_eq!(t.joined_entry(id, WaiterId(2), Ticket(7)), None);
        assert_eq!(
            t.leave(id, WaiterId(1)),
            Leave::Others { cancel_entry: None },
            "ticket 9 is the last real entry: it stays"
        );
    }

    #[test]
    fn an_entry_that_arrives_after_its_waiter_left_is_handed_back_for_withdrawal() {
        let mut t = FlightTable::new();
        let id = lead(&mut t, 1, "a");
        t.queued(id, Ticket(7));
        t.begin(&1, WaiterId(1), &s("c"));
        assert_eq!(t.leave(id, WaiterId(1)), Leave::Others { cancel_entry: None });
        assert_eq!(t.joined_entry(id, WaiterId(1), Ticket(9)), Some(Ticket(9)));
        // The leader's own entry, answered to a request of its session that left, still
        // stands for the leader.
        t.begin(&1, WaiterId(2), &s("a"));
        assert_eq!(t.leave(id, WaiterId(2)), Leave::Others { cancel_entry: None });
        assert_eq!(t.joined_entry(id, WaiterId(2), Ticket(7)), None);
    }

    #[test]
    fn a_kept_last_place_is_handed_back_once_another_session_has_one() {
        let mut t = FlightTable::new();
        let id = lead(&mut t, 1, "a");
        t.queued(id, Ticket(7));
        t.begin(&1, WaiterId(1), &s("b"));
        // b's join is still on the way: a's entry is the call's only place, so it stays.
        assert_eq!(t.leave(id, WaiterId(0)), Leave::Others { cancel_entry: None });
        // b's entry arrives: a's now stands for nobody.
        assert_eq!(t.joined_entry(id, WaiterId(1), Ticket(9)), Some(Ticket(7)));
        // b is the last waiter: leaving withdraws the call.
        assert_eq!(
            t.leave(id, WaiterId(1)),
            Leave::Withdraw {
                ticket: Some(Ticket(7))
            }
        );
    }

    #[test]
    fn requests_of_the_leaders_session_that_joined_early_share_its_entry() {
        let mut t = FlightTable::new();
        let id = lead(&mut t, 1, "a");
        t.begin(&1, WaiterId(1), &s("a"));
        t.begin(&1, WaiterId(2), &s("c"));
        t.queued(id, Ticket(7));
        assert_eq!(t.unjoined(id), vec![(WaiterId(2), s("c"))]);
        assert_eq!(t.joined_entry(id, WaiterId(2), Ticket(9)), None);
        // The leader leaves, but a request of its session still waits on ticket 7.
        assert_eq!(t.leave(id, WaiterId(0)), Leave::Others { cancel_entry: None });
        assert_eq!(
            t.leave(id, WaiterId(1)),
            Leave::Others {
                cancel_entry: Some(Ticket(7))
            }
        );
    }

    #[test]
    fn after_the_call_went_out_leaving_does_not_stop_it() {
        let mut t = FlightTable::new();
        let id = lead(&mut t, 1, "a");
        t.begin(&1, WaiterId(1), &s("b"));
        t.sent(id);
        assert_eq!(t.leave(id, WaiterId(0)), Leave::Others { cancel_entry: None });
        assert_eq!(t.leave(id, WaiterId(1)), Leave::Orphaned);
        assert_eq!(t.finish(id), Vec::<WaiterId>::new());
    }
}
