//! Maps keyed by dense integer ids (calls, sessions, tickets): a hasher that spreads such
//! ids with one multiplication instead of SipHash's rounds. Nothing here is iterated for
//! output, so the order of a map never shows.
//!
//! What this module does not do: resist chosen keys (ids come from the run itself).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

/// A hasher for ids: they are dense integers, so a multiplication spreads them.
#[derive(Clone, Copy, Debug, Default)]
pub struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// A map keyed by dense integer ids.
pub type IdMap<K, V> = HashMap<K, V, BuildHasherDefault<IdHasher>>;
