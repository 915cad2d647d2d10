//! Which queued entries stand for which call: the scheduler's coalescing bookkeeping.
//!
//! A call waits through one or more entries, one per session that wants it (the
//! submitting session's first entry, plus one for each session that joined it with
//! [`super::FairScheduler::join`]). The call goes when its first entry is admitted; the
//! others are then withdrawn free of charge.
//!
//! Invariants (checked by [`CallIndex::check`]):
//! - every waiting call has at least one entry, and a call with none is not in the index;
//! - every entry stands for exactly one call, and the two maps agree;
//! - entries of one call are kept in the order they were made.
//!
//! What this module does not do: decide who goes first, or touch the sessions' queues.

use std::collections::HashMap;

use super::types::{CallTicket, EntryTicket, FixedState};

/// Calls and the entries that stand for them.
#[derive(Debug, Default)]
pub(super) struct CallIndex {
    entries_of: HashMap<CallTicket, Vec<EntryTicket>, FixedState>,
    call_of: HashMap<EntryTicket, CallTicket, FixedState>,
}

impl CallIndex {
    /// `entry` now stands for `call` (a new call's first entry, or a join).
    pub(super) fn add(&mut self, call: CallTicket, entry: EntryTicket) {
        self.entries_of.entry(call).or_default().push(entry);
        self.call_of.insert(entry, call);
    }

    /// `entry` no longer waits. Returns its call, and whether that call has no entry left.
    pub(super) fn remove_entry(&mut self, entry: EntryTicket) -> Option<(CallTicket, bool)> {
        let call = self.call_of.remove(&entry)?;
        // Present: both maps change together.
        let entries = self.entries_of.get_mut(&call).expect("the entry's call is indexed");
        entries.retain(|&e| e != entry);
        let empty = entries.is_empty();
        if empty {
            self.entries_of.remove(&call);
        }
        Some((call, empty))
    }

    /// The call leaves (it was admitted or withdrawn whole): its entries, in order.
    pub(super) fn remove_call(&mut self, call: CallTicket) -> Vec<EntryTicket> {
        let entries = self.entries_of.remove(&call).unwrap_or_default();
        for e in &entries {
            self.call_of.remove(e);
        }
        entries
    }

    /// The entries waiting for `call`, in the order they were made.
    pub(super) fn entries(&self, call: CallTicket) -> &[EntryTicket] {
        self.entries_of.get(&call).map_or(&[], Vec::as_slice)
    }

    /// The call `entry` stands for.
    pub(super) fn call_of(&self, entry: EntryTicket) -> Option<CallTicket> {
        self.call_of.get(&entry).copied()
    }

    /// Entries indexed.
    pub(super) fn len(&self) -> usize {
        self.call_of.len()
    }

    /// Whether both maps agree and no call is left without entries.
    pub(super) fn check(&self) -> Result<(), String> {
        let mut counted = 0;
        for (call, entries) in &self.entries_of {
            if entries.is_empty() {
                return Err(format!("call {call} is indexed without entries"));
            }
            if !entries.is_sorted() {
                return Err(format!("the entries of call {call} are out of order: {entries:?}"));
            }
            for e in entries {
                counted += 1;
                if self.call_of.get(e) != Some(call) {
                    return Err(format!("entry {e} of call {call} maps to {:?}", self.call_of.get(e)));
                }
            }
        }
        if counted != self.call_of.len() {
            return Err(format!(
                "{} entries map to calls but {counted} are listed under them",
                self.call_of.len()
            ));
        }
        Ok(())
    }
}
