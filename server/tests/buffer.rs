//! The persistent buffer on its real storage: redb files in a temporary data dir.

use std::path::Path;
use std::time::Duration;

use besluitbron_core::cache::conformance::{self, Op};
use besluitbron_core::cache::{
    CacheKey, CacheStore, CacheVersion, DataClass, Lookup, MemoryStore, PlatformCachePolicy, PutOutcome, Scope,
    StaleLookup, StoreError, Success,
};
use besluitbron_core::{PlatformId, WallTime};
use besluitbron_server::store::{OpenError, RedbStore, store_path};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

const T0: WallTime = conformance::START;
const MINUTE_MS: u64 = 60_000;
const DAY_MS: u64 = 24 * 60 * MINUTE_MS;

fn v(s: &str) -> CacheVersion {
    CacheVersion::new(s).unwrap()
}

fn at(ms: u64) -> WallTime {
    T0.saturating_add(Duration::from_millis(ms))
}

fn open(dir: &Path, platform: PlatformId, version: &str) -> RedbStore {
    RedbStore::open(
        store_path(dir, platform),
        platform,
        PlatformCachePolicy::default(),
        v(version),
    )
    .unwrap()
}

fn key(platform: PlatformId, class: DataClass, q: &str) -> CacheKey {
    CacheKey::new(platform, class, "op").param("q", q)
}

fn ok(body: &str) -> Success {
    Success::new(body.as_bytes().to_vec())
}

fn is_hit(lookup: &Lookup, body: &[u8]) -> bool {
    matches!(lookup, Lookup::Hit(v) if v.payload() == body)
}

#[test]
fn an_entry_survives_a_restart_without_asking_the_platform() {
    let dir = tempfile::tempdir().unwrap();
    let k = key(
        besluitbron_server::platforms::obv::PLATFORM,
        DataClass::Document,
        "gm0363/2024/17",
    );
    {
        let store = open(dir.path(), besluitbron_server::platforms::obv::PLATFORM, "1.5.0");
        assert_eq!(store.lookup(&k, at(0)).unwrap(), Lookup::Miss);
        store.put(&k, &ok("volledige tekst"), at(0)).unwrap();
    }
    let store = open(dir.path(), besluitbron_server::platforms::obv::PLATFORM, "1.5.0");
    assert!(is_hit(&store.lookup(&k, at(DAY_MS)).unwrap(), b"volledige tekst"));
    assert_eq!(store.stats().unwrap().class(DataClass::Document).hits, 1);
    assert_eq!(store.stats().unwrap().entries(), 1);
}

#[test]
fn another_versions_entry_is_discarded_on_read_while_untouched_ones_stay_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let asked = key(
        besluitbron_server::platforms::ob::PLATFORM,
        DataClass::Document,
        "stcrt-2024-1",
    );
    let untouched = key(
        besluitbron_server::platforms::ob::PLATFORM,
        DataClass::Document,
        "stcrt-2024-2",
    );
    {
        let old = open(dir.path(), besluitbron_server::platforms::ob::PLATFORM, "1.4.9");
        old.put(&asked, &ok("old reading"), at(0)).unwrap();
        old.put(&untouched, &ok("old reading 2"), at(0)).unwrap();
    }
    let new = open(dir.path(), besluitbron_server::platforms::ob::PLATFORM, "1.5.0");
    // Opening purged nothing.
    assert!(new.contains(&asked).unwrap() && new.contains(&untouched).unwrap());
    assert_eq!(new.stats().unwrap().entries(), 2);

    // Read, the old version's entry is a miss, deleted there and then; the platform's new
    // answer takes its place.
    assert_eq!(
        new.lookup(&asked, at(1)).unwrap(),
        Lookup::OtherVersion { written_by: v("1.4.9") }
    );
    new.put(&asked, &ok("new reading"), at(1)).unwrap();
    assert_eq!(new.stats().unwrap().class(DataClass::Document).version_discards, 1);
    assert!(is_hit(&new.lookup(&asked, at(2)).unwrap(), b"new reading"));
    drop(new);

    // After another restart the untouched old entry is still on disk, until it is read.
    let again = open(dir.path(), besluitbron_server::platforms::ob::PLATFORM, "1.5.0");
    assert!(again.contains(&untouched).unwrap());
    assert_eq!(
        again.lookup(&untouched, at(3)).unwrap(),
        Lookup::OtherVersion { written_by: v("1.4.9") }
    );
    assert!(!again.contains(&untouched).unwrap());
    assert_eq!(again.stats().unwrap().entries(), 1);
}

#[test]
fn each_class_expires_at_its_lifetime() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), besluitbron_server::platforms::tk::PLATFORM, "1.5.0");
    for (class, ttl_ms) in [
        (DataClass::Reference, 30 * DAY_MS),
        (DataClass::Search, 10 * MINUTE_MS),
        (DataClass::Document, 21 * DAY_MS),
    ] {
        let k = key(besluitbron_server::platforms::tk::PLATFORM, class, "x");
        store.put(&k, &ok("body"), at(0)).unwrap();
        assert!(is_hit(&store.lookup(&k, at(ttl_ms - 1)).unwrap(), b"body"), "{class}");
        assert_eq!(
            store.lookup(&k, at(ttl_ms)).unwrap(),
            Lookup::Expired { expired_at: at(ttl_ms) }
        );
    }
}

#[test]
fn a_stale_reference_list_answers_a_failure_but_never_another_versions() {
    let dir = tempfile::tempdir().unwrap();
    let k = key(
        besluitbron_server::platforms::rechtspraak::PLATFORM,
        DataClass::Reference,
        "instanties",
    );
    {
        let store = open(
            dir.path(),
            besluitbron_server::platforms::rechtspraak::PLATFORM,
            "1.5.0",
        );
        store.put(&k, &ok("lijst"), at(0)).unwrap();
        assert!(
            matches!(store.lookup_stale_if_error(&k, at(32 * DAY_MS)).unwrap(), StaleLookup::Stale(v) if v.payload() == b"lijst")
        );
        assert_eq!(
            store.lookup_stale_if_error(&k, at(37 * DAY_MS)).unwrap(),
            StaleLookup::Unavailable
        );
    }
    let upgraded = open(
        dir.path(),
        besluitbron_server::platforms::rechtspraak::PLATFORM,
        "1.5.1",
    );
    assert_eq!(
        upgraded.lookup_stale_if_error(&k, at(32 * DAY_MS)).unwrap(),
        StaleLookup::Unavailable
    );
    assert!(!upgraded.contains(&k).unwrap());
}

#[test]
fn two_scopes_never_share_an_entry() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), besluitbron_server::platforms::obv::PLATFORM, "1.5.0");
    let public = key(besluitbron_server::platforms::obv::PLATFORM, DataClass::Search, "x");
    let tenant_a = public.clone().scoped(Scope::Tenant {
        tenant: "a".into(),
        user: "u".into(),
    });
    let tenant_b = public.clone().scoped(Scope::Tenant {
        tenant: "b".into(),
        user: "u".into(),
    });
    store.put(&tenant_a, &ok("a's answer"), at(0)).unwrap();
    assert_eq!(store.lookup(&public, at(1)).unwrap(), Lookup::Miss);
    assert_eq!(store.lookup(&tenant_b, at(1)).unwrap(), Lookup::Miss);
    assert!(is_hit(&store.lookup(&tenant_a, at(1)).unwrap(), b"a's answer"));
}

#[test]
fn clearing_one_platform_leaves_the_others_intact() {
    let dir = tempfile::tempdir().unwrap();
    let stores: Vec<RedbStore> = besluitbron_server::connectors::platforms()
        .iter()
        .map(|p| open(dir.path(), *p, "1.5.0"))
        .collect();
    for s in &stores {
        s.put(
            &key(s.platform(), DataClass::Search, "q"),
            &ok(s.platform().as_str()),
            at(0),
        )
        .unwrap();
    }
    let obv_file = std::fs::read(store_path(dir.path(), besluitbron_server::platforms::obv::PLATFORM)).unwrap();
    let ori = besluitbron_server::platforms::ori::PLATFORM;
    let cleared = stores.iter().position(|s| s.platform() == ori).unwrap();
    stores[cleared].clear().unwrap();
    assert_eq!(stores[cleared].stats().unwrap().entries(), 0);
    assert_eq!(
        stores[cleared]
            .lookup(&key(ori, DataClass::Search, "q"), at(1))
            .unwrap(),
        Lookup::Miss
    );
    for s in stores.iter().filter(|s| s.platform() != ori) {
        let lookup = s.lookup(&key(s.platform(), DataClass::Search, "q"), at(1)).unwrap();
        assert!(is_hit(&lookup, s.platform().as_str().as_bytes()), "{}", s.platform());
    }
    assert_eq!(
        std::fs::read(store_path(dir.path(), besluitbron_server::platforms::obv::PLATFORM)).unwrap(),
        obv_file
    );
}

#[test]
fn a_key_for_another_platform_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), besluitbron_server::platforms::obv::PLATFORM, "1.5.0");
    assert!(matches!(
        store.put(
            &key(besluitbron_server::platforms::tk::PLATFORM, DataClass::Search, "q"),
            &ok("x"),
            at(0)
        ),
        Err(StoreError::WrongPlatform { .. })
    ));
}

#[test]
fn a_file_of_another_platform_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(dir.path(), besluitbron_server::platforms::obv::PLATFORM);
    drop(open(dir.path(), besluitbron_server::platforms::obv::PLATFORM, "1.5.0"));
    let err = RedbStore::open(
        &path,
        besluitbron_server::platforms::tk::PLATFORM,
        PlatformCachePolicy::default(),
        v("1.5.0"),
    )
    .unwrap_err();
    assert!(matches!(err, OpenError::WrongPlatform { .. }), "{err}");
}

#[test]
fn megabyte_entries_stay_within_the_budget_after_every_insert() {
    let dir = tempfile::tempdir().unwrap();
    let policy = PlatformCachePolicy {
        budget_bytes: 3 * 1024 * 1024 + 512 * 1024,
        ..PlatformCachePolicy::default()
    };
    let store = RedbStore::open(
        store_path(dir.path(), besluitbron_server::platforms::bwb::PLATFORM),
        besluitbron_server::platforms::bwb::PLATFORM,
        policy,
        v("1.5.0"),
    )
    .unwrap();
    let mut evicted_total = 0;
    for n in 0..8u8 {
        let k = key(
            besluitbron_server::platforms::bwb::PLATFORM,
            DataClass::Document,
            &n.to_string(),
        );
        let body = vec![n; 1024 * 1024];
        match store.put(&k, &Success::new(body.clone()), at(u64::from(n))).unwrap() {
            PutOutcome::Stored { evicted } => evicted_total += evicted,
            other => panic!("{other:?}"),
        }
        let stats = store.stats().unwrap();
        assert!(stats.bytes_used() <= stats.budget_bytes, "after insert {n}: {stats:?}");
        assert!(is_hit(&store.lookup(&k, at(u64::from(n))).unwrap(), &body));
    }
    assert_eq!(
        evicted_total, 5,
        "three megabyte entries fit, the oldest five were evicted"
    );
    assert_eq!(store.stats().unwrap().class(DataClass::Document).evictions, 5);
    let too_big = key(
        besluitbron_server::platforms::bwb::PLATFORM,
        DataClass::Document,
        "huge",
    );
    assert!(matches!(
        store
            .put(&too_big, &Success::new(vec![0; 4 * 1024 * 1024]), at(9))
            .unwrap(),
        PutOutcome::TooLarge { .. }
    ));
    assert_eq!(store.stats().unwrap().entries(), 3);
}

#[test]
fn a_corrupt_entry_is_an_error_and_is_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let path = store_path(dir.path(), besluitbron_server::platforms::tk::PLATFORM);
    let k = key(besluitbron_server::platforms::tk::PLATFORM, DataClass::Document, "x");
    drop(open(dir.path(), besluitbron_server::platforms::tk::PLATFORM, "1.5.0"));
    {
        // Write a torn entry under the key behind the store's back.
        let store = open(dir.path(), besluitbron_server::platforms::tk::PLATFORM, "1.5.0");
        store.put(&k, &Success::new(vec![9; 10_000]), at(0)).unwrap();
        drop(store);
        let db = redb::Database::open(&path).unwrap();
        let entries: redb::TableDefinition<&[u8], &[u8]> = redb::TableDefinition::new("entries");
        let txn = db.begin_write().unwrap();
        {
            let mut table = txn.open_table(entries).unwrap();
            let mut raw = redb::ReadableTable::get(&table, k.encode().as_slice())
                .unwrap()
                .unwrap()
                .value()
                .to_vec();
            raw.truncate(5_000);
            raw.resize(10_041, 0);
            table.insert(k.encode().as_slice(), raw.as_slice()).unwrap();
        }
        txn.commit().unwrap();
    }
    let store = open(dir.path(), besluitbron_server::platforms::tk::PLATFORM, "1.5.0");
    assert!(matches!(store.lookup(&k, at(1)), Err(StoreError::Corrupt(_))));
    assert!(!store.contains(&k).unwrap());
    assert_eq!(store.lookup(&k, at(2)).unwrap(), Lookup::Miss);
    assert_eq!(store.stats().unwrap().class(DataClass::Document).corrupt_discards, 1);
}

#[test]
fn the_file_passes_redbs_integrity_check_after_use() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = open(dir.path(), besluitbron_server::platforms::obv::PLATFORM, "1.5.0");
    for n in 0..50u64 {
        let k = key(
            besluitbron_server::platforms::obv::PLATFORM,
            DataClass::Search,
            &n.to_string(),
        );
        store.put(&k, &Success::new(vec![n as u8; 3000]), at(n)).unwrap();
        store.lookup(&k, at(n)).unwrap();
    }
    assert!(store.check_integrity().unwrap());
}

/// Operation seeds whose shrinking only drops chunks: each candidate replays on a fresh
/// redb file, so quickcheck's default element-wise shrinking would take many minutes to
/// report a failure. Dropping halves, then quarters, then single ops stays within seconds.
#[derive(Clone, Debug)]
struct Seeds(Vec<u64>);

impl Arbitrary for Seeds {
    fn arbitrary(g: &mut Gen) -> Seeds {
        Seeds(Vec::arbitrary(g))
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = Seeds>> {
        let v = self.0.clone();
        let n = v.len();
        let mut candidates = Vec::new();
        let mut chunk = n / 2;
        while chunk >= 1 && candidates.len() < 24 {
            for start in (0..n).step_by(chunk) {
                let mut shorter = v[..start].to_vec();
                shorter.extend_from_slice(&v[(start + chunk).min(n)..]);
                candidates.push(Seeds(shorter));
            }
            chunk /= 2;
        }
        Box::new(candidates.into_iter())
    }
}

fn fresh_redb(dir: &Path, budget_bytes: u64) -> RedbStore {
    RedbStore::open(
        store_path(dir, conformance::PLATFORM),
        conformance::PLATFORM,
        conformance::policy(budget_bytes),
        conformance::version(0),
    )
    .unwrap()
}

#[test]
fn qc_redb_store_matches_the_map_model() {
    fn prop(seeds: Seeds) -> TestResult {
        let dir = tempfile::tempdir().unwrap();
        let ops: Vec<Op> = seeds.0.into_iter().map(Op::from_seed).collect();
        match conformance::run_against_model(fresh_redb(dir.path(), u64::MAX), &ops) {
            Ok(_) => TestResult::passed(),
            Err(e) => TestResult::error(e),
        }
    }
    QuickCheck::new().tests(40).quickcheck(prop as fn(Seeds) -> TestResult);
}

#[test]
fn qc_redb_matches_memory_store_under_a_small_budget() {
    fn prop(seeds: Seeds) -> TestResult {
        let dir = tempfile::tempdir().unwrap();
        let ops: Vec<Op> = seeds.0.into_iter().map(Op::from_seed).collect();
        let budget = 8 * 1024;
        let memory = MemoryStore::new(
            conformance::PLATFORM,
            conformance::policy(budget),
            conformance::version(0),
        );
        match conformance::run_differential(memory, fresh_redb(dir.path(), budget), &ops) {
            Ok(_) => TestResult::passed(),
            Err(e) => TestResult::error(e),
        }
    }
    QuickCheck::new().tests(40).quickcheck(prop as fn(Seeds) -> TestResult);
}
