//! The simulator's speed: simulated calls per second of wall time on the `mixed-day`
//! scenario (1,000 agent-like sessions over the four limited platforms for 24 simulated
//! hours), under both policies. Target: the whole day in under 10 s on a 2-core machine.

use std::hint::black_box;

use besluitbron_sim::{PolicyKind, RunOptions, load_canonical, run};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn bench_mixed_day(c: &mut Criterion) {
    let scenario = load_canonical("mixed-day").expect("the canonical scenario parses");
    let workload = scenario.workload(scenario.seed);
    let mut group = c.benchmark_group("sim_mixed_day");
    group.sample_size(10);
    for policy in [PolicyKind::Fair, PolicyKind::Legacy] {
        let opts = RunOptions {
            policy,
            seed: scenario.seed,
            keep_trace: false,
            progress: false,
        };
        let calls = run("mixed-day", &workload, opts).expect("mixed-day holds").calls.len();
        group.throughput(Throughput::Elements(calls as u64));
        group.bench_function(policy.as_str(), |b| {
            b.iter(|| black_box(run("mixed-day", &workload, opts).expect("mixed-day holds").events));
        });
    }
    group.finish();
}

criterion_group!(benches, bench_mixed_day);
criterion_main!(benches);
