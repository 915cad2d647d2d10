//! Submit + admit cost of the fair scheduler with 1, 100 and 10,000 waiting sessions.
//!
//! Each iteration submits one call for a waiting session and admits one call, so the
//! number of waiting sessions stays constant: the steady state of a busy platform.

use std::hint::black_box;
use std::time::Duration;

use besluitbron_core::{FairScheduler, Instant, LimitConfig, SchedulerConfig, SessionKey, Submission, Units};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

fn scheduler_with_waiting(sessions: usize) -> (FairScheduler, Vec<SessionKey>, Instant) {
    let mut config = SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60)));
    config.max_queued = 1_000_000;
    let mut s = FairScheduler::new(config).expect("valid config");
    let keys: Vec<SessionKey> = (0..sessions)
        .map(|i| SessionKey::client(&format!("session-{i}")))
        .collect();
    let mut now = Instant::ZERO;
    // Empty the bucket, then give every session one waiting call.
    while let Submission::Admitted(_) = s.submit(now, &keys[0], Units::ONE) {}
    for key in &keys[1..] {
        s.submit(now, key, Units::ONE);
    }
    now = now + Duration::from_millis(1);
    (s, keys, now)
}

fn bench_submit_admit(c: &mut Criterion) {
    let mut group = c.benchmark_group("scheduler_submit_admit");
    for &n in &[1usize, 100, 10_000] {
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            let (mut s, keys, mut now) = scheduler_with_waiting(n);
            let mut i = 0usize;
            b.iter(|| {
                // One second per iteration refills exactly one unit: one admission.
                now = now + Duration::from_secs(1);
                let key = &keys[i % keys.len()];
                i += 1;
                black_box(s.submit(now, key, Units::ONE));
                black_box(s.poll_admission(now));
            });
            assert!(s.queued() <= n + 1, "the queue stays at its steady size");
        });
    }
    group.finish();
}

criterion_group!(benches, bench_submit_admit);
criterion_main!(benches);
