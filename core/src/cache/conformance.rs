//! Executable checks of the store contract, shared by every [`CacheStore`]
//! implementation's tests (the in-memory store here, the redb store in the server).
//!
//! - [`run_against_model`] replays a sequence of [`Op`]s against a store and against a
//!   plain map model of R-C2/R-C3 (no budget pressure) and reports the first lookup
//!   whose decision differs.
//! - [`run_differential`] replays the same sequence against two stores under a small
//!   budget, where eviction matters, and reports the first differing outcome or a
//!   moment the budget was exceeded.
//!
//! Operations are decoded from plain `u64` seeds ([`Op::from_seed`]) so property tests
//! in any crate can generate them without this crate depending on quickcheck.
//! A restart closes the store and opens it again ([`Reopen`]), possibly as another version.

use crate::platform::examples;
use std::collections::BTreeMap;

use crate::cache::decision::Lookup;
use crate::cache::key::{CacheKey, Scope};
use crate::cache::policy::{CacheVersion, DataClass, PlatformCachePolicy};
use crate::cache::store::{CacheStore, StoreError, Success};
use crate::{PlatformId, WallTime};

/// A store that can be closed and opened again, as a process restart would.
pub trait Reopen: CacheStore + Sized {
    /// Closes the store and opens its contents again as `version`.
    fn reopen_as(self, version: CacheVersion) -> Result<Self, StoreError>;
}

/// The platform every conformance key names.
pub const PLATFORM: PlatformId = examples::OBV;
/// Wall-clock start of every run (2025-01-01T00:00:00Z).
pub const START: WallTime = WallTime(1_735_689_600_000);

/// One step of a conformance run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Store a success of `len_bytes` bytes under key number `key`.
    Put {
        /// Which of the [`key`] space's keys.
        key: u8,
        /// Payload length.
        len_bytes: u16,
    },
    /// Look key number `key` up.
    Get {
        /// Which key.
        key: u8,
    },
    /// Delete key number `key`.
    Delete {
        /// Which key.
        key: u8,
    },
    /// Move the wall clock forward.
    Advance {
        /// How far.
        ms: u64,
    },
    /// Close and reopen the store, as the same or the next version.
    Restart {
        /// Whether the reopened process is a new BesluitBron version.
        upgrade: bool,
    },
}

/// Clock steps chosen to land on both sides of each class's lifetime.
const ADVANCES_MS: [u64; 8] = [
    1,
    59_999,
    10 * 60 * 1000,
    24 * 3600 * 1000,
    7 * 24 * 3600 * 1000,
    21 * 24 * 3600 * 1000,
    30 * 24 * 3600 * 1000,
    599_999,
];

/// The number of distinct keys in a run.
pub const KEYS: u8 = 12;

/// Key number `n` (modulo [`KEYS`]): four operations × three classes, one of them tenant-scoped.
pub fn key(n: u8) -> CacheKey {
    let n = n % KEYS;
    let class = DataClass::ALL[usize::from(n % 3)];
    let key = CacheKey::new(PLATFORM, class, "op").param("n", (n / 3).to_string());
    if n / 3 == 3 {
        // Same parameters as key n - 3, but private to one user: must never share its entry.
        CacheKey::new(PLATFORM, class, "op")
            .param("n", "2")
            .scoped(Scope::Tenant {
                tenant: "t".into(),
                user: "u".into(),
            })
    } else {
        key
    }
}

/// The payload of the `put_no`-th put of key `k`: content derived from both, so a
/// mixed-up or stale entry is recognisable.
pub fn payload(k: u8, put_no: u64, len_bytes: u16) -> Vec<u8> {
    let stamp = format!("k{k}/p{put_no};");
    stamp
        .bytes()
        .cycle()
        .take(usize::from(len_bytes).max(stamp.len()))
        .collect()
}

impl Op {
    /// Decodes one operation from a random `u64` (the same seed always gives the same op).
    pub fn from_seed(seed: u64) -> Op {
        let key = ((seed >> 8) % u64::from(KEYS)) as u8;
        match seed % 16 {
            0..=5 => Op::Put {
                key,
                len_bytes: ((seed >> 16) % 3000) as u16,
            },
            6..=11 => Op::Get { key },
            12 => Op::Delete { key },
            13 | 14 => Op::Advance {
                ms: ADVANCES_MS[((seed >> 16) % ADVANCES_MS.len() as u64) as usize],
            },
            _ => Op::Restart {
                upgrade: (seed >> 16).is_multiple_of(2),
            },
        }
    }
}

/// The version a run is at after `upgrades` upgrades.
pub fn version(upgrades: u32) -> CacheVersion {
    CacheVersion::new(format!("1.5.{upgrades}")).expect("a valid version")
}

/// A policy with the default lifetimes and `budget_bytes`.
pub fn policy(budget_bytes: u64) -> PlatformCachePolicy {
    PlatformCachePolicy {
        budget_bytes,
        ..PlatformCachePolicy::default()
    }
}

/// What the model expects a lookup to decide, without payloads.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Expect {
    Hit(Vec<u8>),
    Expired,
    OtherVersion,
    Miss,
}

fn observed(lookup: &Lookup) -> Expect {
    match lookup {
        Lookup::Hit(v) => Expect::Hit(v.payload().to_vec()),
        Lookup::Expired { .. } => Expect::Expired,
        Lookup::OtherVersion { .. } => Expect::OtherVersion,
        Lookup::Miss => Expect::Miss,
    }
}

/// Replays `ops` on `store` (opened empty as [`version`]`(0)` under a budget no run can
/// exceed) and on a map model; `Err` describes the first disagreement.
pub fn run_against_model<S: Reopen>(mut store: S, ops: &[Op]) -> Result<S, String> {
    let lifetimes = PlatformCachePolicy::default();
    // key -> (version, expires_at, payload)
    let mut model: BTreeMap<u8, (u32, u64, Vec<u8>)> = BTreeMap::new();
    let mut now = START;
    let mut upgrades = 0;
    let mut puts = 0u64;
    for (i, op) in ops.iter().enumerate() {
        match *op {
            Op::Put { key: k, len_bytes } => {
                puts += 1;
                let body = payload(k, puts, len_bytes);
                store
                    .put(&key(k), &Success::new(body.clone()), now)
                    .map_err(|e| format!("op {i} {op:?}: {e}"))?;
                let ttl_ms = lifetimes.class(key(k).class()).ttl_ms;
                model.insert(k, (upgrades, now.unix_millis() + ttl_ms, body));
            }
            Op::Get { key: k } => {
                let expect = match model.get(&k) {
                    None => Expect::Miss,
                    Some((v, _, _)) if *v != upgrades => {
                        model.remove(&k);
                        Expect::OtherVersion
                    }
                    Some((_, expires_at, _)) if now.unix_millis() >= *expires_at => Expect::Expired,
                    Some((_, _, body)) => Expect::Hit(body.clone()),
                };
                let got = store.lookup(&key(k), now).map_err(|e| format!("op {i} {op:?}: {e}"))?;
                if observed(&got) != expect {
                    return Err(format!("op {i} {op:?} at {now:?}: store {got:?}, model {expect:?}"));
                }
            }
            Op::Delete { key: k } => {
                let had = store.delete(&key(k)).map_err(|e| format!("op {i} {op:?}: {e}"))?;
                if had != model.remove(&k).is_some() {
                    return Err(format!("op {i} {op:?}: store had an entry: {had}"));
                }
            }
            Op::Advance { ms } => now = now.saturating_add(std::time::Duration::from_millis(ms)),
            Op::Restart { upgrade } => {
                upgrades += u32::from(upgrade);
                store = store
                    .reopen_as(version(upgrades))
                    .map_err(|e| format!("op {i} {op:?}: {e}"))?;
            }
        }
    }
    Ok(store)
}

/// Replays `ops` on two stores opened empty as [`version`]`(0)` with the same (small)
/// budget; `Err` describes the first differing outcome or a budget overrun.
pub fn run_differential<A: Reopen, B: Reopen>(mut a: A, mut b: B, ops: &[Op]) -> Result<(A, B), String> {
    let mut now = START;
    let mut upgrades = 0;
    let mut puts = 0u64;
    for (i, op) in ops.iter().enumerate() {
        let ctx = |e: StoreError| format!("op {i} {op:?}: {e}");
        match *op {
            Op::Put { key: k, len_bytes } => {
                puts += 1;
                let value = Success::new(payload(k, puts, len_bytes));
                let (ra, rb) = (
                    a.put(&key(k), &value, now).map_err(ctx)?,
                    b.put(&key(k), &value, now).map_err(ctx)?,
                );
                if ra != rb {
                    return Err(format!("op {i} {op:?}: {ra:?} vs {rb:?}"));
                }
            }
            Op::Get { key: k } => {
                let (ra, rb) = (
                    a.lookup(&key(k), now).map_err(ctx)?,
                    b.lookup(&key(k), now).map_err(ctx)?,
                );
                if ra != rb {
                    return Err(format!("op {i} {op:?}: {ra:?} vs {rb:?}"));
                }
            }
            Op::Delete { key: k } => {
                let (ra, rb) = (a.delete(&key(k)).map_err(ctx)?, b.delete(&key(k)).map_err(ctx)?);
                if ra != rb {
                    return Err(format!("op {i} {op:?}: {ra:?} vs {rb:?}"));
                }
            }
            Op::Advance { ms } => now = now.saturating_add(std::time::Duration::from_millis(ms)),
            Op::Restart { upgrade } => {
                upgrades += u32::from(upgrade);
                a = a.reopen_as(version(upgrades)).map_err(ctx)?;
                b = b.reopen_as(version(upgrades)).map_err(ctx)?;
            }
        }
        let (sa, sb) = (a.stats().map_err(ctx)?, b.stats().map_err(ctx)?);
        if sa != sb {
            return Err(format!("after op {i} {op:?}: stats differ\n{sa:?}\n{sb:?}"));
        }
        if sa.bytes_used() > sa.budget_bytes {
            return Err(format!(
                "after op {i} {op:?}: {} bytes over a budget of {}",
                sa.bytes_used(),
                sa.budget_bytes
            ));
        }
    }
    Ok((a, b))
}
