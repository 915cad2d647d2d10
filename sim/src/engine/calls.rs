//! The calls of a run that have not ended, by id; and, when a run keeps them, those that
//! have.
//!
//! A call's id is its place in the run's order of creation (open-loop calls first, by
//! their place in the workload, then agent and follow-up calls as they are made), so ids
//! are the same whether or not records are kept. A call is in the table from its arrival
//! until it ends ([`Calls::retire`]); then its record is dropped, or kept for
//! [`RunOutcome::calls`](super::RunOutcome::calls) when the run keeps per-call records.
//!
//! Invariants: a call is retired once; asking for a call that has ended and was not kept
//! is a programmer error of the engine.
//!
//! What this module does not do: decide anything about a call.

use super::CallRecord;
use crate::dense::IdMap;
use crate::policy::CallId;

/// The run's calls.
#[derive(Debug, Default)]
pub struct Calls {
    live: IdMap<CallId, CallRecord>,
    /// Ended calls, by id, when the run keeps them.
    kept: Option<Vec<Option<CallRecord>>>,
    /// Calls made so far (the next agent or follow-up call's id is this).
    made: u64,
}

impl Calls {
    /// An empty table; `keep`: ended calls stay for the outcome.
    pub fn new(keep: bool) -> Calls {
        Calls {
            live: IdMap::default(),
            kept: keep.then(Vec::new),
            made: 0,
        }
    }

    /// Calls made so far, ended or not.
    pub fn made(&self) -> u64 {
        self.made
    }

    /// Reserves `n` ids (the open-loop calls', made as the run reaches them).
    pub fn reserve_ids(&mut self, n: u64) {
        self.made += n;
    }

    /// The id the next call made at run time gets.
    pub fn next_id(&mut self) -> CallId {
        let id = CallId::try_from(self.made).expect("fewer than 2^32 calls");
        self.made += 1;
        id
    }

    /// Adds call `id`.
    pub fn insert(&mut self, id: CallId, record: CallRecord) {
        let old = self.live.insert(id, record);
        debug_assert!(old.is_none(), "call {id} made twice");
    }

    /// Call `id`, which has not ended (or was kept).
    pub fn get(&self, id: CallId) -> Option<&CallRecord> {
        self.live.get(&id).or_else(|| {
            self.kept
                .as_ref()
                .and_then(|k| k.get(id as usize))
                .and_then(Option::as_ref)
        })
    }

    /// Call `id`, to change.
    pub fn get_mut(&mut self, id: CallId) -> Option<&mut CallRecord> {
        match self.live.get_mut(&id) {
            Some(c) => Some(c),
            None => self
                .kept
                .as_mut()
                .and_then(|k| k.get_mut(id as usize))
                .and_then(Option::as_mut),
        }
    }

    /// Whether call `id` is under way (not ended).
    pub fn is_live(&self, id: CallId) -> bool {
        self.live.contains_key(&id)
    }

    /// Call `id` ended: its record, taken out (to aggregate, then [`Calls::keep`]).
    pub fn retire(&mut self, id: CallId) -> CallRecord {
        self.live.remove(&id).expect("a call ends once, while under way")
    }

    /// Keeps ended call `id`'s record when the run keeps records.
    pub fn keep(&mut self, id: CallId, record: CallRecord) {
        if let Some(kept) = self.kept.as_mut() {
            let i = id as usize;
            if kept.len() <= i {
                kept.resize_with(i + 1, || None);
            }
            kept[i] = Some(record);
        }
    }

    /// The calls under way, by id.
    pub fn live_ids(&self) -> Vec<CallId> {
        let mut ids: Vec<CallId> = self.live.keys().copied().collect();
        ids.sort_unstable();
        ids
    }

    /// Calls still under way.
    pub fn live(&self) -> usize {
        self.live.len()
    }

    /// The kept records in id order (empty when none are kept).
    pub fn into_kept(self) -> Vec<CallRecord> {
        self.kept.unwrap_or_default().into_iter().flatten().collect()
    }
}

impl std::ops::Index<CallId> for Calls {
    type Output = CallRecord;

    fn index(&self, id: CallId) -> &CallRecord {
        self.get(id).expect("the engine asks only for calls under way")
    }
}

impl std::ops::IndexMut<CallId> for Calls {
    fn index_mut(&mut self, id: CallId) -> &mut CallRecord {
        self.get_mut(id).expect("the engine asks only for calls under way")
    }
}
