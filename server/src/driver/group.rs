//! [`GroupBuffer`]: the buffers of a budget group's platforms as its one path uses them.
//! Each platform keeps its own buffer (its file, its memory layer, its data classes'
//! policy), exactly as when it had a path of its own; a key goes to the buffer of the
//! platform it names.
//!
//! Invariants: a key is looked up and stored only in its own platform's buffer; a key of
//! a platform outside the group (a caller's mistake) finds nothing and is not stored,
//! with a warning, never a panic.

use besluitbron_core::PlatformId;
use besluitbron_core::WallTime;
use besluitbron_core::cache::CacheKey;
use besluitbron_core::path::{Buffer, Keep, StaleAnswer};

use super::buffer::{MemoryLayer, ServerBuffer};
use super::payload::SharedPayload;

/// The buffers of one budget group's platforms.
pub struct GroupBuffer {
    buffers: Vec<ServerBuffer>,
}

impl GroupBuffer {
    /// The group's buffers, one per platform.
    pub fn new(buffers: Vec<ServerBuffer>) -> GroupBuffer {
        GroupBuffer { buffers }
    }

    /// The platforms whose buffers these are, in the order given.
    pub fn platforms(&self) -> impl Iterator<Item = PlatformId> + '_ {
        self.buffers.iter().map(ServerBuffer::platform)
    }

    /// `platform`'s memory layer, for its handle.
    pub fn memory_layer(&self, platform: PlatformId) -> Option<MemoryLayer> {
        self.buffers
            .iter()
            .find(|b| b.platform() == platform)
            .map(ServerBuffer::memory_layer)
    }

    /// Writes whose commit has not returned yet, over every platform.
    pub fn pending_writes(&self) -> usize {
        self.buffers.iter().map(ServerBuffer::pending_writes).sum()
    }

    /// Payload bytes the memory layers hold, over every platform.
    pub fn memory_bytes(&self) -> usize {
        self.buffers.iter().map(|b| b.memory_layer().bytes()).sum()
    }

    /// Waits for every write under way.
    pub async fn flush(&mut self) {
        for b in &mut self.buffers {
            b.flush().await;
        }
    }

    fn of(&mut self, key: &CacheKey) -> Option<&mut ServerBuffer> {
        let platform = key.platform();
        let found = self.buffers.iter_mut().find(|b| b.platform() == platform);
        if found.is_none() {
            tracing::warn!(%platform, "a key of a platform outside this budget group: not buffered");
        }
        found
    }
}

impl Buffer for GroupBuffer {
    type Payload = SharedPayload;

    fn lookup(&mut self, key: &CacheKey, now: WallTime) -> Option<SharedPayload> {
        self.of(key)?.lookup(key, now)
    }

    fn stale(&mut self, key: &CacheKey, now: WallTime) -> Option<StaleAnswer<SharedPayload>> {
        self.of(key)?.stale(key, now)
    }

    fn store(&mut self, key: &CacheKey, payload: &SharedPayload, keep: Keep, now: WallTime) {
        if let Some(b) = self.of(key) {
            b.store(key, payload, keep, now);
        }
    }

    fn expired(&mut self, key: &CacheKey, now: WallTime) -> Option<SharedPayload> {
        self.of(key)?.expired(key, now)
    }
}

#[cfg(test)]
mod tests {
    use besluitbron_core::cache::DataClass;
    use besluitbron_core::platform::examples::{OBV, TK};

    use super::*;
    use crate::driver::payload::Payload;

    /// `platform`'s buffer over a file of its own in `dir`.
    fn buffer(dir: &std::path::Path, platform: PlatformId) -> ServerBuffer {
        let policy = besluitbron_core::cache::CachePolicy::default().for_platform(platform);
        let store = crate::store::RedbStore::open(
            dir.join(format!("{platform}.redb")),
            platform,
            policy,
            besluitbron_core::cache::CacheVersion::current(),
        )
        .expect("a buffer file");
        ServerBuffer::new(platform, Some(std::sync::Arc::new(store)), policy)
    }

    #[tokio::test]
    async fn a_key_is_kept_by_its_own_platform_and_found_only_there() {
        let dir = tempfile::tempdir().expect("a folder");
        let mut group = GroupBuffer::new(vec![buffer(dir.path(), OBV), buffer(dir.path(), TK)]);
        let now = WallTime(1_000);
        let key = CacheKey::new(OBV, DataClass::Search, "search").param("q", "stikstof");
        let payload = Payload::from_bytes(b"{}".to_vec());
        group.store(&key, &payload, Keep::Normal, now);
        assert!(group.lookup(&key, now).is_some());
        assert!(group.memory_layer(OBV).expect("obv").get(&key, now).is_some());
        assert!(group.memory_layer(TK).expect("tk").get(&key, now).is_none());
        // The same question at another platform is another key, found nowhere.
        let other = CacheKey::new(TK, DataClass::Search, "search").param("q", "stikstof");
        assert!(group.lookup(&other, now).is_none());
        group.flush().await;
        assert_eq!(group.pending_writes(), 0);
    }

    #[tokio::test]
    async fn a_key_of_a_platform_outside_the_group_is_neither_found_nor_kept() {
        let dir = tempfile::tempdir().expect("a folder");
        let mut group = GroupBuffer::new(vec![buffer(dir.path(), TK)]);
        let now = WallTime(1_000);
        let key = CacheKey::new(OBV, DataClass::Search, "search").param("q", "x");
        group.store(&key, &Payload::from_bytes(b"{}".to_vec()), Keep::Normal, now);
        assert!(group.lookup(&key, now).is_none());
        assert_eq!(group.memory_bytes(), 0);
        assert_eq!(group.platforms().collect::<Vec<_>>(), vec![TK]);
    }
}
