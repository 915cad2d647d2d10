//! Request deduplication (R-D3, R-D9).
//!
//! (a) The overhead of the coalescing path per call, through the platform path itself
//! (`besluitbron_core::path::PlatformPath` on a lane without a kept limit, buffer not
//! kept): a request that leads a new flight, is sent and gets its answer; and a request
//! that joins a flight under way. Against a plain `BTreeMap` insert + remove of the same
//! key in the same bench. Target: under 1 µs per call.
//!
//! (b) Upstream calls saved on a duplicate-heavy workload: the simulator's
//! `duplicate-pool` scenario under the fair policy. Criterion measures the run; the
//! saving (requests against upstream calls) is printed once.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, CachePolicy, CacheVersion, DataClass, MemoryStore};
use besluitbron_core::dedup::WaiterId;
use besluitbron_core::path::{Effect, Feedback, Keep, Lane, Outcome, PathConfig, PlatformPath, Request, StoreBuffer};
use besluitbron_core::{Instant, SessionKey, Units, WallTime};
use besluitbron_sim::{PolicyKind, Report, RunOptions, load_canonical, run};
use criterion::{BatchSize, Criterion, criterion_group, criterion_main};

type BenchPath = PlatformPath<StoreBuffer<MemoryStore>, ()>;

/// 1,024 distinct search keys, as the server builds them.
fn keys() -> Vec<CacheKey> {
    (0..1024)
        .map(|i| {
            CacheKey::new(
                besluitbron_server::platforms::obv::PLATFORM,
                DataClass::Search,
                "search",
            )
            .param("q", format!("vraag {i}"))
        })
        .collect()
}

fn path() -> BenchPath {
    let buffer = StoreBuffer::new(MemoryStore::new(
        besluitbron_server::platforms::obv::PLATFORM,
        CachePolicy::default().for_platform(besluitbron_server::platforms::obv::PLATFORM),
        CacheVersion::current(),
    ));
    PlatformPath::new(PathConfig::single("obv", None), buffer).expect("valid")
}

fn request(key: &CacheKey, waiter: u64, session: &SessionKey) -> Request {
    Request {
        waiter: WaiterId(waiter),
        key: key.clone(),
        session: session.clone(),
        cost: Units::ONE,
        lane: Lane::MAIN,
    }
}

fn bench_coalescing(c: &mut Criterion) {
    let keys = keys();
    let session = SessionKey::client("bench");
    let answer: Arc<[u8]> = Arc::from(&b"{}"[..]);
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

    group.bench_function("lead_send_answer", |b| {
        let mut p = path();
        let mut i = 0u64;
        b.iter(|| {
            let key = &keys[i as usize % keys.len()];
            i += 1;
            let (now, wall) = (Instant::from_nanos(i), WallTime(0));
            black_box(p.request(now, wall, request(key, i, &session)));
            let Some(Effect::Send { attempt, .. }) = p.poll_effect() else {
                unreachable!("a new key leads and is sent at once")
            };
            let outcome = Outcome::Success {
                payload: Arc::clone(&answer),
                feedback: Feedback {
                    keep: Keep::Never,
                    ..Feedback::default()
                },
            };
            p.on_outcome(now, wall, attempt, outcome);
            while let Some(e) = p.poll_effect() {
                black_box(e);
            }
        });
    });

    // Joiners of flights under way: one flight per key stays open while waiters join;
    // every 64 joins the path is rebuilt outside the measurement.
    group.bench_function("join", |b| {
        b.iter_batched_ref(
            || {
                let mut p = path();
                for (i, key) in keys.iter().enumerate() {
                    p.request(Instant::ZERO, WallTime(0), request(key, i as u64, &session));
                }
                while p.poll_effect().is_some() {}
                (p, 1_000_000u64)
            },
            |(p, next)| {
                for j in 0..64usize {
                    *next += 1;
                    black_box(p.request(Instant::ZERO, WallTime(0), request(&keys[j * 16], *next, &session)));
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
    for p in &report.services {
        let d = p.dedup.expect("the scenario has keys");
        println!(
            "duplicate-pool {}: {} requests, {} upstream calls ({} saved: {} joins, {} hits; duplicate rate {:.1}%)",
            p.label,
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
