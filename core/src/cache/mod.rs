//! The buffer policy: what is kept per platform, for how long, and when an entry may
//! answer a request (R-C1 to R-C5, R-D4, R-D7, R-D8).
//!
//! - [`key`]: [`CacheKey`] = (platform, data class, operation, canonical parameters,
//!   [`Scope`]) and its injective byte encoding.
//! - [`policy`]: [`DataClass`] lifetimes per platform ([`CachePolicy`]), the byte
//!   budget, and the [`CacheVersion`] stamped on every entry.
//! - [`entry`]: the checksummed entry format.
//! - [`decision`]: [`Lookup`] (`Hit`, `Expired`, `OtherVersion`, `Miss`) and
//!   [`StaleLookup`], decided by [`classify`].
//! - [`store`]: the [`CacheStore`] contract, [`Success`] (the only thing a store
//!   accepts) and counters. The caller path over a store is the core's
//!   [`crate::path`] ([`crate::path::StoreBuffer`]).
//! - [`memory`]: [`MemoryStore`], the in-memory store for the simulator and tests. The
//!   persistent redb store lives in the server and keeps the same contract.
//! - [`conformance`]: the checks both stores run.
//!
//! **Architecture invariants.**
//! - Time is an argument: expiry is judged against a caller-supplied [`WallTime`]
//!   (wall-clock, because entries outlive the process).
//! - An entry written by another BesluitBron version is deleted when a lookup reads it,
//!   and only then; nothing here sweeps, scans or purges in advance (R-C3).
//! - Only a [`Success`] can be stored; a failed call has no representation in the API (R-C5).
//! - A store holds one platform; a key for another platform is refused (R-C1).
//!
//! What this module does not do: I/O, locking files, reading the clock, choosing which
//! operation belongs to which class (the connectors do that when they build keys).
//!
//! [`WallTime`]: crate::WallTime

pub mod conformance;
pub mod decision;
pub mod entry;
pub mod key;
pub mod memory;
pub mod policy;
pub mod store;

pub use decision::{Classified, Lookup, StaleLookup, classify, may_serve_stale, stale_lookup};
pub use entry::{CachedValue, DecodeError, EntryHeader, decode_entry, encode_entry};
pub use key::{CacheKey, KeyDecodeError, Scope};
pub use memory::MemoryStore;
pub use policy::{CachePolicy, CacheVersion, ClassPolicy, DataClass, InvalidVersion, PlatformCachePolicy};
pub use store::{
    CacheEvent, CacheStats, CacheStore, ClassStats, PreparedEntry, PutOutcome, StoreError, Success, prepare_entry,
    stored_bytes,
};

impl conformance::Reopen for MemoryStore {
    fn reopen_as(self, version: CacheVersion) -> Result<MemoryStore, StoreError> {
        Ok(self.reopen(version))
    }
}

#[cfg(test)]
mod tests;
