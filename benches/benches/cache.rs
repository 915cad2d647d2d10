//! The persistent buffer on its real storage (a redb file in a temporary directory):
//! hit latency for a 4 KiB and a 1 MiB entry, and inserts per second.
//!
//! A hit is a read transaction, a checksum over the whole entry, one copy of the bytes
//! and an in-memory access note (written in a batch every 4096 hits, included in the
//! time). An insert is one durable write transaction (fsync) including the budget check.
//! The in-memory store's hit is measured alongside as the ratio's baseline.

use std::hint::black_box;

use besluitbron_core::WallTime;
use besluitbron_core::cache::{
    CacheKey, CacheStore, CacheVersion, DataClass, Lookup, MemoryStore, PlatformCachePolicy, Success,
};
use besluitbron_server::store::{RedbStore, store_path};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};

const NOW: WallTime = WallTime(1_735_689_600_000);
const SIZES: [(&str, usize); 2] = [("4KiB", 4 * 1024), ("1MiB", 1024 * 1024)];

fn key(n: u64) -> CacheKey {
    CacheKey::new(
        besluitbron_server::platforms::obv::PLATFORM,
        DataClass::Document,
        "document",
    )
    .param("id", format!("gm0363-{n}"))
}

fn redb_store(dir: &std::path::Path) -> RedbStore {
    RedbStore::open(
        store_path(dir, besluitbron_server::platforms::obv::PLATFORM),
        besluitbron_server::platforms::obv::PLATFORM,
        PlatformCachePolicy::default(),
        CacheVersion::current(),
    )
    .expect("open the bench store")
}

fn bench_hit(c: &mut Criterion) {
    let mut group = c.benchmark_group("cache_hit");
    for (name, len) in SIZES {
        let dir = tempfile::tempdir().expect("tempdir");
        let store = redb_store(dir.path());
        store.put(&key(0), &Success::new(vec![0x5A; len]), NOW).expect("put");
        group.throughput(Throughput::Bytes(len as u64));
        group.bench_with_input(BenchmarkId::new("redb", name), &len, |b, _| {
            b.iter(|| {
                let lookup = store.lookup(black_box(&key(0)), NOW).expect("lookup");
                assert!(matches!(&lookup, Lookup::Hit(v) if v.payload().len() == len));
                black_box(lookup);
            });
        });
        let memory = MemoryStore::new(
            besluitbron_server::platforms::obv::PLATFORM,
            PlatformCachePolicy::default(),
            CacheVersion::current(),
        );
        memory.put(&key(0), &Success::new(vec![0x5A; len]), NOW).expect("put");
        group.bench_with_input(BenchmarkId::new("memory", name), &len, |b, _| {
            b.iter(|| black_box(memory.lookup(black_box(&key(0)), NOW).expect("lookup")));
        });
    }
    group.finish();
}

fn bench_insert(c: &mut Criterion) {
    let mut group = c.benchmark_group("cache_insert");
    group.throughput(Throughput::Elements(1));
    let dir = tempfile::tempdir().expect("tempdir");
    let store = redb_store(dir.path());
    let body = Success::new(vec![0x5A; 4 * 1024]);
    let mut n = 0u64;
    group.bench_function("redb/4KiB", |b| {
        b.iter(|| {
            n += 1;
            black_box(store.put(&key(n), &body, NOW).expect("put"));
        });
    });
    group.finish();
}

criterion_group!(benches, bench_hit, bench_insert);
criterion_main!(benches);
