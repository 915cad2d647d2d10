//! [`GroupBuffer`]: the buffers of a budget group's platforms as its one path uses them,
//! as the server's group buffer does: each platform keeps its own buffer (its store, its
//! data classes' lifetimes), exactly as when it had a path of its own, and a key goes to
//! the buffer of the platform it names.
//!
//! Invariants: a key is looked up and stored only in its own platform's buffer; a key of a
//! platform outside the group finds nothing and is not stored (the engine never asks one).
//!
//! What this module does not do: decide what is kept or for how long (the stores' policies
//! do).

use besluitbron_core::cache::{CacheKey, MemoryStore};
use besluitbron_core::path::{Buffer, Keep, StaleAnswer, StoreBuffer};
use besluitbron_core::{PlatformId, WallTime};

use std::sync::Arc;

/// One platform's buffer in the simulator: a memory store.
pub type SimBuffer = StoreBuffer<MemoryStore>;

/// The buffers of one budget group's platforms, one each.
#[derive(Debug)]
pub struct GroupBuffer {
    buffers: Vec<(PlatformId, SimBuffer)>,
}

impl GroupBuffer {
    /// The group's buffers.
    pub fn new(buffers: Vec<(PlatformId, SimBuffer)>) -> GroupBuffer {
        GroupBuffer { buffers }
    }

    /// `platform`'s store, if the group has it.
    pub fn store_of(&self, platform: PlatformId) -> Option<&MemoryStore> {
        self.buffers
            .iter()
            .find(|(p, _)| *p == platform)
            .map(|(_, b)| b.store())
    }

    /// The buffers, to build the group's next path over (a restarted process keeps them).
    pub fn into_buffers(self) -> Vec<(PlatformId, SimBuffer)> {
        self.buffers
    }

    fn of(&mut self, key: &CacheKey) -> Option<&mut SimBuffer> {
        let platform = key.platform();
        self.buffers.iter_mut().find(|(p, _)| *p == platform).map(|(_, b)| b)
    }
}

impl Buffer for GroupBuffer {
    type Payload = Arc<[u8]>;

    fn lookup(&mut self, key: &CacheKey, now: WallTime) -> Option<Arc<[u8]>> {
        self.of(key)?.lookup(key, now)
    }

    fn stale(&mut self, key: &CacheKey, now: WallTime) -> Option<StaleAnswer<Arc<[u8]>>> {
        self.of(key)?.stale(key, now)
    }

    fn store(&mut self, key: &CacheKey, payload: &Arc<[u8]>, keep: Keep, now: WallTime) {
        if let Some(b) = self.of(key) {
            b.store(key, payload, keep, now);
        }
    }

    fn expired(&mut self, key: &CacheKey, now: WallTime) -> Option<Arc<[u8]>> {
        self.of(key)?.expired(key, now)
    }
}
