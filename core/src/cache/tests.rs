//! Behaviour of the buffer policy through the in-memory store.

use crate::platform::examples;
use std::time::Duration;

use quickcheck::{QuickCheck, TestResult};

use super::conformance::{self, Op, Reopen};
use super::*;
use crate::WallTime;

const T0: WallTime = conformance::START;
const MINUTE_MS: u64 = 60_000;
const DAY_MS: u64 = 24 * 60 * MINUTE_MS;

fn v(s: &str) -> CacheVersion {
    CacheVersion::new(s).unwrap()
}

fn store(version: &str) -> MemoryStore {
    MemoryStore::new(examples::OBV, PlatformCachePolicy::default(), v(version))
}

fn at(ms: u64) -> WallTime {
    T0.saturating_add(Duration::from_millis(ms))
}

fn key(class: DataClass, q: &str) -> CacheKey {
    CacheKey::new(examples::OBV, class, "op").param("q", q)
}

fn ok(body: &str) -> Success {
    Success::new(body.as_bytes().to_vec())
}

fn is_hit(lookup: &Lookup, body: &str) -> bool {
    matches!(lookup, Lookup::Hit(v) if v.payload() == body.as_bytes())
}

#[test]
fn each_class_expires_at_its_lifetime() {
    let s = store("1.5.0");
    for (class, ttl_ms) in [
        (DataClass::Reference, 30 * DAY_MS),
        (DataClass::Search, 10 * MINUTE_MS),
        (DataClass::Document, 21 * DAY_MS),
    ] {
        let k = key(class, "x");
        s.put(&k, &ok("body"), at(0)).unwrap();
        assert!(
            is_hit(&s.lookup(&k, at(ttl_ms - 1)).unwrap(), "body"),
            "{class} fresh just before"
        );
        assert_eq!(
            s.lookup(&k, at(ttl_ms)).unwrap(),
            Lookup::Expired { expired_at: at(ttl_ms) },
            "{class} expired at its lifetime"
        );
    }
    let stats = s.stats().unwrap();
    for class in DataClass::ALL {
        assert_eq!((stats.class(class).hits, stats.class(class).expired), (1, 1));
    }
}

#[test]
fn other_version_entry_is_discarded_on_read_and_fetched_again() {
    let k = key(DataClass::Document, "besluit-1");
    let untouched = key(DataClass::Document, "besluit-2");
    let old = store("1.4.9");
    old.put(&k, &ok("old text"), at(0)).unwrap();
    old.put(&untouched, &ok("old text 2"), at(0)).unwrap();

    let new = old.reopen(v("1.5.0"));
    // Nothing is purged in advance: both old entries are still there after the "restart".
    assert!(new.contains(&k) && new.contains(&untouched));

    // Read, the old version's entry is a miss (deleted there and then); the platform's
    // new answer takes its place.
    assert_eq!(
        new.lookup(&k, at(1)).unwrap(),
        Lookup::OtherVersion { written_by: v("1.4.9") }
    );
    assert!(!new.contains(&k));
    new.put(&k, &ok("new text"), at(1)).unwrap();
    assert!(is_hit(&new.lookup(&k, at(2)).unwrap(), "new text"));
    // The entry nobody asked for is still on "disk", still the old version's.
    assert!(new.contains(&untouched));
    assert_eq!(new.stats().unwrap().class(DataClass::Document).version_discards, 1);
    assert_eq!(
        new.lookup(&untouched, at(3)).unwrap(),
        Lookup::OtherVersion { written_by: v("1.4.9") }
    );
    assert!(!new.contains(&untouched), "deleted at the moment it was read");
}

#[test]
fn reference_lists_are_served_stale_on_failure_within_the_window_only() {
    let s = store("1.5.0");
    let k = key(DataClass::Reference, "organisations");
    s.put(&k, &ok("list"), at(0)).unwrap();
    assert!(
        matches!(s.lookup_stale_if_error(&k, at(31 * DAY_MS)).unwrap(), StaleLookup::Stale(v) if v.payload() == b"list")
    );
    assert_eq!(
        s.lookup_stale_if_error(&k, at(37 * DAY_MS)).unwrap(),
        StaleLookup::Unavailable
    );
    assert_eq!(s.stats().unwrap().class(DataClass::Reference).stale_served, 1);

    let search = key(DataClass::Search, "q");
    s.put(&search, &ok("hits"), at(0)).unwrap();
    assert_eq!(
        s.lookup_stale_if_error(&search, at(11 * MINUTE_MS)).unwrap(),
        StaleLookup::Unavailable,
        "search results are never stale"
    );
}

#[test]
fn another_versions_reference_list_is_never_served_stale() {
    let k = key(DataClass::Reference, "organisations");
    let old = store("1.4.9");
    old.put(&k, &ok("old list"), at(0)).unwrap();
    let new = old.reopen(v("1.5.0"));
    assert_eq!(new.lookup_stale_if_error(&k, at(1)).unwrap(), StaleLookup::Unavailable);
    assert!(!new.contains(&k));
}

#[test]
fn two_scopes_never_share_an_entry() {
    let s = store("1.5.0");
    let public = key(DataClass::Search, "x");
    let alice = public.clone().scoped(Scope::Tenant {
        tenant: "gemeente-a".into(),
        user: "alice".into(),
    });
    let bob = public.clone().scoped(Scope::Tenant {
        tenant: "gemeente-a".into(),
        user: "bob".into(),
    });
    s.put(&alice, &ok("alice's answer"), at(0)).unwrap();
    assert_eq!(s.lookup(&public, at(1)).unwrap(), Lookup::Miss);
    assert_eq!(s.lookup(&bob, at(1)).unwrap(), Lookup::Miss);
    assert!(is_hit(&s.lookup(&alice, at(1)).unwrap(), "alice's answer"));
}

#[test]
fn a_key_for_another_platform_is_refused() {
    let s = store("1.5.0");
    let k = CacheKey::new(examples::TK, DataClass::Search, "op");
    assert!(matches!(
        s.put(&k, &ok("x"), at(0)),
        Err(StoreError::WrongPlatform { store, key }) if store == examples::OBV && key == examples::TK
    ));
}

/// Budget for `n` entries of `body_len` bytes under [`key`]-shaped keys of the longest class name.
fn budget_for(n: u64, body_len: usize) -> u64 {
    let k = key(DataClass::Reference, "0");
    n * stored_bytes(k.encode().len(), entry::encoded_len(5, body_len))
}

#[test]
fn eviction_takes_expired_entries_first_then_the_least_recently_used() {
    let policy = PlatformCachePolicy {
        budget_bytes: budget_for(3, 4),
        ..PlatformCachePolicy::default()
    };
    let s = MemoryStore::new(examples::OBV, policy, v("1.5.0"));
    let doc = key(DataClass::Document, "0");
    let search = key(DataClass::Search, "1");
    let reference = key(DataClass::Reference, "2");
    s.put(&doc, &ok("doc0"), at(0)).unwrap();
    s.put(&search, &ok("srch"), at(0)).unwrap();
    s.put(&reference, &ok("refs"), at(0)).unwrap();
    // Use the document so it is the most recently used; the search result expires.
    assert!(is_hit(&s.lookup(&doc, at(11 * MINUTE_MS)).unwrap(), "doc0"));
    let new = key(DataClass::Document, "3");
    assert_eq!(
        s.put(&new, &ok("doc3"), at(11 * MINUTE_MS)).unwrap(),
        PutOutcome::Stored { evicted: 1 }
    );
    assert_eq!(
        s.lookup(&search, at(11 * MINUTE_MS)).unwrap(),
        Lookup::Miss,
        "the expired entry went first"
    );
    // Nothing expired now: the least recently used (the reference list) goes.
    let newer = key(DataClass::Document, "4");
    s.put(&newer, &ok("doc4"), at(12 * MINUTE_MS)).unwrap();
    assert_eq!(s.lookup(&reference, at(12 * MINUTE_MS)).unwrap(), Lookup::Miss);
    assert!(is_hit(&s.lookup(&doc, at(12 * MINUTE_MS)).unwrap(), "doc0"));
    let stats = s.stats().unwrap();
    assert!(stats.bytes_used() <= stats.budget_bytes);
    assert_eq!(stats.class(DataClass::Search).evictions, 1);
    assert_eq!(stats.class(DataClass::Reference).evictions, 1);
}

#[test]
fn an_entry_larger_than_the_budget_is_refused_without_evicting() {
    let policy = PlatformCachePolicy {
        budget_bytes: budget_for(2, 4),
        ..PlatformCachePolicy::default()
    };
    let s = MemoryStore::new(examples::OBV, policy, v("1.5.0"));
    let k = key(DataClass::Document, "0");
    s.put(&k, &ok("doc0"), at(0)).unwrap();
    let big = key(DataClass::Document, "1");
    assert!(matches!(
        s.put(&big, &Success::new(vec![0; 1000]), at(0)).unwrap(),
        PutOutcome::TooLarge { .. }
    ));
    assert!(is_hit(&s.lookup(&k, at(0)).unwrap(), "doc0"));
}

#[test]
fn clear_empties_the_store() {
    let s = store("1.5.0");
    s.put(&key(DataClass::Search, "a"), &ok("a"), at(0)).unwrap();
    s.clear().unwrap();
    assert_eq!(s.stats().unwrap().entries(), 0);
    assert_eq!(s.stats().unwrap().bytes_used(), 0);
    assert_eq!(s.lookup(&key(DataClass::Search, "a"), at(0)).unwrap(), Lookup::Miss);
}

fn fresh_memory(budget_bytes: u64) -> MemoryStore {
    MemoryStore::new(
        conformance::PLATFORM,
        conformance::policy(budget_bytes),
        conformance::version(0),
    )
}

#[test]
fn qc_memory_store_matches_the_map_model() {
    fn prop(seeds: Vec<u64>) -> TestResult {
        let ops: Vec<Op> = seeds.into_iter().map(Op::from_seed).collect();
        match conformance::run_against_model(fresh_memory(u64::MAX), &ops) {
            Ok(_) => TestResult::passed(),
            Err(e) => TestResult::error(e),
        }
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(Vec<u64>) -> TestResult);
}

#[test]
fn qc_memory_budget_holds_after_every_insert() {
    fn prop(seeds: Vec<u64>) -> TestResult {
        let ops: Vec<Op> = seeds.into_iter().map(Op::from_seed).collect();
        let budget = 8 * 1024;
        match conformance::run_differential(fresh_memory(budget), fresh_memory(budget), &ops) {
            Ok(_) => TestResult::passed(),
            Err(e) => TestResult::error(e),
        }
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(Vec<u64>) -> TestResult);
}

#[test]
fn regression_model_sees_restart_with_upgrade() {
    // A hand-written sequence covering every op kind, so the model runner itself is exercised.
    let ops = [
        Op::Put { key: 0, len_bytes: 10 },
        Op::Put { key: 1, len_bytes: 10 },
        Op::Get { key: 0 },
        Op::Advance { ms: 10 * MINUTE_MS },
        Op::Get { key: 1 },
        Op::Restart { upgrade: true },
        Op::Get { key: 0 },
        Op::Get { key: 0 },
        Op::Delete { key: 1 },
    ];
    let s = conformance::run_against_model(fresh_memory(u64::MAX), &ops).unwrap();
    let stats = s.stats().unwrap();
    assert_eq!(stats.class(conformance::key(0).class()).version_discards, 1);
    assert_eq!(stats.class(conformance::key(0).class()).misses, 1);
    let _ = s.reopen_as(conformance::version(2)).unwrap();
}
