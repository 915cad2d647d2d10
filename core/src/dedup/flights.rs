//! In-flight coalescing (R-D3): one upstream call per key, every waiter gets its outcome.
//!
//! The table keeps the bookkeeping of flights: which key has one, who waits for it (each
//! waiter with its session and, while the call waits in a platform queue, the scheduler
//! entry that stands for that session), and a state the owner chooses (`S`). It decides
//! nothing about queues or platforms: [`crate::path::PlatformPath`] owns a table and the
//! scheduler together and makes those decisions synchronously, in one place.
//!
//! Invariants (checked by [`FlightTable::check_invariants`]):
//! - at most one flight per key at any time (the key index and the flights agree);
//! - every waiter waits for exactly one flight (the waiter index and the flights agree);
//! - waiters are told apart by [`WaiterId`], never merged;
//! - a flight leaves the table exactly once, through [`FlightTable::finish`].
//!
//! What this module does not do: talk to a scheduler, keep outcomes, or wait.

use std::collections::{BTreeMap, HashMap};
use std::hash::{BuildHasher, Hash};

use crate::scheduler::{EntryTicket, SessionKey};

/// The tables' hasher: foldhash with a fixed seed, so a run is the same every time (no
/// decision depends on a hash map's order: flights are listed in id order).
type Fixed = foldhash::fast::FixedState;

fn fixed() -> Fixed {
    foldhash::fast::FixedState::with_seed(0x6265_736c_7569_7462)
}

/// One flight (one upstream call), unique within a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlightId(pub u64);

/// One waiter (one request), chosen by the shell; unique among all waiters of a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct WaiterId(pub u64);

/// One request waiting for a flight.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiter {
    /// Who it is for (fairness).
    pub session: SessionKey,
    /// The scheduler entry standing for its session while the call waits in a platform
    /// queue; waiters of one session share one entry.
    pub entry: Option<EntryTicket>,
    /// It already waited once more after a platform refused the call (429).
    pub requeued: bool,
}

/// One flight: its key, its waiters and the owner's state.
#[derive(Clone, Debug)]
pub struct Flight<K, S> {
    /// The key every waiter asked for.
    pub key: K,
    /// The waiter that started it (answered as "fetched"; the others "coalesced").
    pub leader: WaiterId,
    /// The waiters, in id order.
    pub waiters: Waiters,
    /// The owner's state of the call.
    pub state: S,
}

/// A flight's waiters, in id order: nearly always one, so a sorted vector rather than a
/// tree (whose first node is an allocation ten times a waiter's size). Used as a map by
/// waiter id; shown as one.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Waiters(Vec<(WaiterId, Waiter)>);

/// A borrowed waiter with its id, as a map's iterator gives it.
type WaiterRef<'a> = (&'a WaiterId, &'a Waiter);

/// The iterator over [`Waiters`]: ids and waiters, in id order.
pub type WaitersIter<'a> =
    std::iter::Map<std::slice::Iter<'a, (WaiterId, Waiter)>, fn(&(WaiterId, Waiter)) -> WaiterRef<'_>>;

impl Waiters {
    fn position(&self, id: WaiterId) -> Result<usize, usize> {
        self.0.binary_search_by_key(&id, |&(w, _)| w)
    }

    /// Waiter `id`.
    pub fn get(&self, id: &WaiterId) -> Option<&Waiter> {
        self.position(*id).ok().map(|i| &self.0[i].1)
    }

    /// Waiter `id`, to change.
    pub fn get_mut(&mut self, id: &WaiterId) -> Option<&mut Waiter> {
        self.position(*id).ok().map(|i| &mut self.0[i].1)
    }

    /// Adds waiter `id` in its place; returns the record it replaced.
    pub fn insert(&mut self, id: WaiterId, waiter: Waiter) -> Option<Waiter> {
        match self.position(id) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, waiter)),
            Err(i) => {
                self.0.insert(i, (id, waiter));
                None
            }
        }
    }

    /// Takes waiter `id` out.
    pub fn remove(&mut self, id: &WaiterId) -> Option<Waiter> {
        self.position(*id).ok().map(|i| self.0.remove(i).1)
    }

    /// How many wait.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether nobody waits.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The waiters' ids, in order.
    pub fn keys(&self) -> impl Iterator<Item = &WaiterId> {
        self.0.iter().map(|(w, _)| w)
    }

    /// The waiters, in id order.
    pub fn values(&self) -> impl Iterator<Item = &Waiter> {
        self.0.iter().map(|(_, w)| w)
    }

    /// The waiters, in id order, to change.
    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut Waiter> {
        self.0.iter_mut().map(|(_, w)| w)
    }

    /// Ids and waiters, in id order.
    pub fn iter(&self) -> WaitersIter<'_> {
        self.0.iter().map(|(id, w)| (id, w))
    }
}

impl<'a> IntoIterator for &'a Waiters {
    type Item = WaiterRef<'a>;
    type IntoIter = WaitersIter<'a>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl std::fmt::Debug for Waiters {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Waiter {
    fn new(session: &SessionKey) -> Waiter {
        Waiter {
            session: session.clone(),
            entry: None,
            requeued: false,
        }
    }
}

/// Flights by key, generic over the key (the buffer's cache key in production) and the
/// state the owner keeps per flight.
///
/// The key is kept once, in its flight: the key index maps the key's hash to the flight
/// (the flight's key compared to tell a collision), and a key whose hash is taken by
/// another flight's key is indexed by value in `collided` instead.
#[derive(Clone, Debug)]
pub struct FlightTable<K: Ord + Clone, S> {
    by_hash: HashMap<u64, FlightId, Fixed>,
    collided: BTreeMap<K, FlightId>,
    by_waiter: HashMap<WaiterId, FlightId, Fixed>,
    flights: HashMap<FlightId, Flight<K, S>, Fixed>,
    hasher: Fixed,
    next_id: u64,
}

impl<K: Ord + Clone, S> Default for FlightTable<K, S> {
    fn default() -> Self {
        FlightTable {
            by_hash: HashMap::with_hasher(fixed()),
            collided: BTreeMap::new(),
            by_waiter: HashMap::with_hasher(fixed()),
            flights: HashMap::with_hasher(fixed()),
            hasher: fixed(),
            next_id: 0,
        }
    }
}

/// Why [`FlightTable::lead`] or [`FlightTable::join`] refused: a bug in the caller.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// The waiter id already waits for a flight.
    #[error("waiter {0:?} already waits for a flight")]
    DuplicateWaiter(WaiterId),
    /// The key already has a flight.
    #[error("the key already has flight {0:?}")]
    KeyInFlight(FlightId),
    /// No such flight.
    #[error("flight {0:?} is not in the table")]
    NoFlight(FlightId),
}

impl<K: Ord + Clone + Hash + std::fmt::Debug, S> FlightTable<K, S> {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// `waiter` of `session` starts a flight for `key` in `state`. Refused when the key
    /// already has a flight (join it instead) or the waiter id is in use.
    pub fn lead(&mut self, key: &K, waiter: WaiterId, session: &SessionKey, state: S) -> Result<FlightId, Refused> {
        if self.by_waiter.contains_key(&waiter) {
            return Err(Refused::DuplicateWaiter(waiter));
        }
        // Hashed once: the look-up and the index share it.
        let hash = self.hasher.hash_one(key);
        if let Some(id) = self.flight_of_hashed(key, hash) {
            return Err(Refused::KeyInFlight(id));
        }
        let id = FlightId(self.next_id);
        self.next_id += 1;
        match self.by_hash.entry(hash) {
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(id);
            }
            std::collections::hash_map::Entry::Occupied(_) => {
                self.collided.insert(key.clone(), id);
            }
        }
        self.by_waiter.insert(waiter, id);
        self.flights.insert(
            id,
            Flight {
                key: key.clone(),
                leader: waiter,
                waiters: Waiters(vec![(waiter, Waiter::new(session))]),
                state,
            },
        );
        Ok(id)
    }

    /// `waiter` of `session` joins `flight`. Refused when the flight is not in the table
    /// or the waiter id is in use.
    pub fn join(&mut self, flight: FlightId, waiter: WaiterId, session: &SessionKey) -> Result<(), Refused> {
        if self.by_waiter.contains_key(&waiter) {
            return Err(Refused::DuplicateWaiter(waiter));
        }
        let f = self.flights.get_mut(&flight).ok_or(Refused::NoFlight(flight))?;
        f.waiters.insert(waiter, Waiter::new(session));
        self.by_waiter.insert(waiter, flight);
        Ok(())
    }

    /// The flight `waiter` waits for.
    pub fn flight_of_waiter(&self, waiter: WaiterId) -> Option<FlightId> {
        self.by_waiter.get(&waiter).copied()
    }

    /// The flight running for `key`.
    pub fn flight_of(&self, key: &K) -> Option<FlightId> {
        self.flight_of_hashed(key, self.hasher.hash_one(key))
    }

    /// The flight running for `key`, whose hash is `hash`.
    fn flight_of_hashed(&self, key: &K, hash: u64) -> Option<FlightId> {
        if let Some(&id) = self.by_hash.get(&hash)
            && self.flights.get(&id).is_some_and(|f| &f.key == key)
        {
            return Some(id);
        }
        if self.collided.is_empty() {
            return None;
        }
        self.collided.get(key).copied()
    }

    /// A flight.
    pub fn get(&self, flight: FlightId) -> Option<&Flight<K, S>> {
        self.flights.get(&flight)
    }

    /// A flight, to change its waiters' entries or its state.
    pub fn get_mut(&mut self, flight: FlightId) -> Option<&mut Flight<K, S>> {
        self.flights.get_mut(&flight)
    }

    /// `waiter` stops waiting (it gave up, or got its outcome some other way). Returns the
    /// flight it waited for and its record; the flight stays, possibly without waiters.
    pub fn leave(&mut self, waiter: WaiterId) -> Option<(FlightId, Waiter)> {
        let id = self.by_waiter.remove(&waiter)?;
        // Present: `by_waiter` names only waiters of live flights.
        let gone = self
            .flights
            .get_mut(&id)
            .expect("flight of a waiter")
            .waiters
            .remove(&waiter)
            .expect("waiter of its flight");
        Some((id, gone))
    }

    /// The flight ends: it leaves the table with its remaining waiters, in id order. A
    /// new request for its key starts a new flight.
    pub fn finish(&mut self, flight: FlightId) -> Option<Flight<K, S>> {
        let f = self.flights.remove(&flight)?;
        let hash = self.hasher.hash_one(&f.key);
        if self.by_hash.get(&hash) == Some(&flight) {
            self.by_hash.remove(&hash);
        } else {
            self.collided.remove(&f.key);
        }
        for w in f.waiters.keys() {
            self.by_waiter.remove(w);
        }
        Some(f)
    }

    /// Flights under way, in id order (sorted here: for checks and reports, not per call).
    pub fn iter(&self) -> impl Iterator<Item = (FlightId, &Flight<K, S>)> {
        let mut all: Vec<(FlightId, &Flight<K, S>)> = self.flights.iter().map(|(&id, f)| (id, f)).collect();
        all.sort_unstable_by_key(|&(id, _)| id);
        all.into_iter()
    }

    /// Flights under way.
    pub fn in_flight(&self) -> usize {
        self.flights.len()
    }

    /// Requests waiting, over all flights.
    pub fn waiting(&self) -> usize {
        self.by_waiter.len()
    }

    /// Checks the table's invariants; the first broken one is described.
    pub fn check_invariants(&self) -> Result<(), String> {
        let indexed = self.by_hash.len() + self.collided.len();
        if indexed != self.flights.len() {
            return Err(format!("{indexed} keys indexed for {} flights", self.flights.len()));
        }
        let mut waiters = 0;
        for (id, f) in self.iter() {
            if self.flight_of(&f.key) != Some(id) {
                return Err(format!("flight {id:?} for {:?} is not indexed under its key", f.key));
            }
            if id.0 >= self.next_id {
                return Err(format!("flight {id:?} was never issued"));
            }
            for w in f.waiters.keys() {
                waiters += 1;
                if self.by_waiter.get(w) != Some(&id) {
                    return Err(format!("waiter {w:?} of flight {id:?} is not indexed there"));
                }
            }
        }
        if waiters != self.by_waiter.len() {
            return Err(format!(
                "{} waiters indexed, {waiters} waiting in flights",
                self.by_waiter.len()
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(name: &str) -> SessionKey {
        SessionKey::client(name)
    }

    #[test]
    fn a_thousand_identical_requests_make_one_flight() {
        let mut t: FlightTable<&str, ()> = FlightTable::new();
        let id = t.lead(&"q", WaiterId(0), &s("a"), ()).expect("a new flight");
        assert_eq!(t.lead(&"q", WaiterId(1), &s("a"), ()), Err(Refused::KeyInFlight(id)));
        for i in 1..1000 {
            assert_eq!(t.join(id, WaiterId(i), &s("a")), Ok(()));
        }
        t.check_invariants().expect("consistent");
        assert_eq!((t.in_flight(), t.waiting()), (1, 1000));
        let f = t.finish(id).expect("live");
        assert_eq!(f.waiters.len(), 1000);
        assert_eq!(f.leader, WaiterId(0));
        assert_eq!((t.in_flight(), t.waiting()), (0, 0));
        assert!(
            t.lead(&"q", WaiterId(5000), &s("a"), ()).is_ok(),
            "a new flight after the outcome"
        );
        assert_eq!(t.join(id, WaiterId(6000), &s("a")), Err(Refused::NoFlight(id)));
        t.check_invariants().expect("consistent");
    }

    #[test]
    fn keys_do_not_share_flights_and_a_waiter_id_is_used_once() {
        let mut t: FlightTable<(&str, &str), u8> = FlightTable::new();
        let public = t.lead(&("obv", "public"), WaiterId(0), &s("a"), 1).expect("new");
        assert!(t.lead(&("obv", "tenant-1"), WaiterId(1), &s("a"), 2).is_ok());
        assert_eq!(
            t.join(public, WaiterId(1), &s("b")),
            Err(Refused::DuplicateWaiter(WaiterId(1)))
        );
        assert_eq!(t.in_flight(), 2);
        assert_eq!(t.get(public).map(|f| f.state), Some(1));
        t.check_invariants().expect("consistent");
    }

    #[test]
    fn leaving_keeps_the_flight_until_it_finishes() {
        let mut t: FlightTable<u32, ()> = FlightTable::new();
        let id = t.lead(&1, WaiterId(0), &s("a"), ()).expect("new");
        t.join(id, WaiterId(1), &s("b")).expect("joined");
        let (left, gone) = t.leave(WaiterId(0)).expect("was waiting");
        assert_eq!((left, gone.session), (id, s("a")));
        assert_eq!(t.leave(WaiterId(0)), None, "a waiter leaves once");
        assert_eq!(t.flight_of_waiter(WaiterId(1)), Some(id));
        t.leave(WaiterId(1)).expect("was waiting");
        assert_eq!(
            t.get(id).map(|f| f.waiters.len()),
            Some(0),
            "an orphan stays until it ends"
        );
        t.check_invariants().expect("consistent");
        assert!(t.finish(id).is_some());
        assert!(t.finish(id).is_none(), "a flight ends once");
        assert_eq!(t.flight_of(&1), None);
        t.check_invariants().expect("consistent");
    }
}
