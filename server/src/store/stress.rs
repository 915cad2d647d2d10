//! The crash test's workload: keys and payloads derived from a sequence number, so a
//! reader after a crash can tell whether what it finds is complete and correct.
//!
//! Used by the hidden `besluitbron cache write-stress` command, which the SIGKILL test
//! runs as a child process and kills mid-stream.

use besluitbron_core::PlatformId;
use besluitbron_core::cache::{CacheKey, DataClass};

/// The key of the `n`-th stress entry.
pub fn stress_key(platform: PlatformId, n: u64) -> CacheKey {
    CacheKey::new(platform, DataClass::Document, "stress").param("n", n.to_string())
}

/// The payload of the `n`-th stress entry: 1 KiB to about 256 KiB of bytes that depend
/// on `n` and on their position, so a torn or misplaced payload does not match.
pub fn stress_payload(n: u64) -> Vec<u8> {
    let len = 1024 + (n.wrapping_mul(7919) % 255) as usize * 1024;
    (0..len)
        .map(|i| (n.wrapping_mul(31).wrapping_add(i as u64 / 7) % 251) as u8)
        .collect()
}
