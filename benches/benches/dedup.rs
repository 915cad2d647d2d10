//! Request deduplication (R-D3, R-D9).
//!
//! (a) The overhead of the coalescing path per call: a `FlightTable` begin + finish for a
//! new key (a leader), and a begin as a joiner of a flight under way, against a plain
//! `BTreeMap` insert + remove of the same key in the same bench. Target: under 1 µs per call.
//!
//! (b) Upstream calls saved on a duplicate-heavy workload: the simulator's
//! `duplicate-pool` scenario under the fair policy. Criterion measures the run; the
//! saving (requests against upstream calls) is printed once.

use std::collections::BTreeMap;
use std::hint::black_box;

use besluitbron_core::PlatformId;
use besluitbron_core::SessionKey;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::dedup::{Begin, FlightTable, WaiterId};
use besluitbron_sim::{PolicyKind, Report, RunOptions, load_canonical, run};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

/// 1,024 distinct search keys, as the server builds them.
fn keys() -> Vec<CacheKey> {
    (0..1024)
        .map(|i| CacheKey::new(PlatformId::Obv, DataClass::Search, "search").param("q", format!("vraag {i}")))
        .collect()
}

fn bench_coalescing(c: &mut Criterion) {
    let keys = keys();
    let session = SessionKey::client("bench");
    let mut group = c.benchmark_group("dedup_per_call");

    group.bench_function("baseline_btreemap_insert_remove", |b| {
        let mut map: BTreeMap<CacheKey, u64> = BTreeMap::new();
        let mut i = 0usize;
        b.iter(|| {
            let key = &keys[i % keys.len()];
            i += 1;
            map.insert(key.clone(), 7);
            black_box(map.remove(key))
        });
    });

    group.bench_function("lead_begin_finish", |b| {
        let mut table: FlightTable<CacheKey> = FlightTable::new();
        let mut i = 0u64;
        b.iter(|| {
            let key = &keys[i as usize % keys.len()];
            i += 1;
            let Begin::Lead(id) = table.begin(key, WaiterId(i), &session) else {
                unreachable!("every flight finished, so each key leads")
            };
            black_box(table.finish(id))
        });
    });

    // Joiners of flights under way: one flight per key stays open while waiters join;
    // every 64 joins the table is rebuilt outside the measurement.
    group.bench_function("join_begin", |b| {
        b.iter_batched_ref(
            || {
                let mut table: FlightTable<CacheKey> = FlightTable::new();
                for (i, key) in keys.iter().enumerate() {
                    table.begin(key, WaiterId(i as u64), &session);
                }
                (table, 1_000_000u64)
            },
            |(table, next)| {
                for j in 0..64usize {
                    *next += 1;
                    black_box(table.begin(&keys[j * 16], WaiterId(*next), &session));
                }
            },
            BatchSize::SmallInput,
        );
    });
    group.finish();
}

fn bench_duplicate_pool(c: &mut Criterion) {
    let scenario = load_canonical("duplicate-pool").expect("the canonical scenario parses");
    let workload = scenario.workload(scenario.seed);
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: scenario.seed,
        keep_trace: false,
        progress: false,
    };
    let report = Report::of(&run("duplicate-pool", &workload, opts).expect("duplicate-pool holds"));
    for p in &report.platforms {
        let d = p.dedup.expect("the scenario has keys");
        println!(
            "duplicate-pool {}: {} requests, {} upstream calls ({} saved: {} joins, {} hits; duplicate rate {:.1}%)",
            p.platform,
            p.calls,
            d.upstream,
            p.calls.saturating_sub(d.upstream),
            d.joins,
            d.hits,
            d.duplicate_pct
        );
    }
    let mut group = c.benchmark_group("dedup_duplicate_pool");
    group.sample_size(10);
    group.bench_function("fair", |b| {
        b.iter(|| {
            black_box(
                run("duplicate-pool", &workload, opts)
                    .expect("duplicate-pool holds")
                    .events,
            )
        });
    });
    group.finish();
}

criterion_group!(benches, bench_coalescing, bench_duplicate_pool);
criterion_main!(benches);
