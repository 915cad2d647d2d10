//! The shell's invariant checks against its steps (`besluitbron_core::path::Shell`).
//!
//! A platform path with 60 units a minute and `n` calls waiting in its fair queue, one
//! per session (100 and 1,000), in steady state: each iteration of `shell_steps` is one
//! request that queues, the admission a refilled unit allows, its send and its answer
//! (four steps of the shell, invariant checks off). `shell_check` is one
//! `check_invariants()` on the same state. Their ratio says how many steps a check costs,
//! and so how rarely a release build may check for the checks to be negligible
//! (`RELEASE_CHECK_EVERY`; see `benches/README.md`).

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::cache::{CacheKey, CachePolicy, CacheVersion, DataClass, MemoryStore};
use besluitbron_core::dedup::WaiterId;
use besluitbron_core::path::{
    Action, Feedback, Keep, Lane, Outcome, PathConfig, PlatformPath, Request, Shell, StoreBuffer,
};
use besluitbron_core::{Instant, LimitConfig, SchedulerConfig, SessionKey, Units, WallTime};
use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};

type BenchShell = Shell<StoreBuffer<MemoryStore>, (), u64, u64>;

struct Busy {
    shell: BenchShell,
    sessions: Vec<SessionKey>,
    next: u64,
    now: Instant,
}

impl Busy {
    /// A path whose bucket is empty, with `n` calls waiting, one per session.
    fn new(n: usize) -> Busy {
        let limit = SchedulerConfig::with_limit(LimitConfig::new(Units::whole(60), Duration::from_secs(60)));
        let mut config = PathConfig::single("obv", Some(limit));
        if let Some(s) = config.lanes[0].scheduler.as_mut() {
            s.max_queued = n + 16;
        }
        let buffer = StoreBuffer::new(MemoryStore::new(
            besluitbron_server::platforms::obv::PLATFORM,
            CachePolicy::default().for_platform(besluitbron_server::platforms::obv::PLATFORM),
            CacheVersion::current(),
        ));
        let path = PlatformPath::new(config, buffer).expect("valid");
        let mut shell: BenchShell = Shell::new(path, |_| ()).with_check_every(u32::MAX);
        // An empty bucket: every call queues, and one unit refills per second.
        shell.take_over(Instant::ZERO, 1, None);
        let mut busy = Busy {
            shell,
            sessions: (0..n).map(|i| SessionKey::client(&format!("s{i}"))).collect(),
            next: 0,
            now: Instant::ZERO,
        };
        for _ in 0..n {
            busy.request();
        }
        busy
    }

    fn request(&mut self) {
        let i = self.next;
        self.next += 1;
        let session = self.sessions[(i as usize) % self.sessions.len()].clone();
        let req = Request {
            waiter: WaiterId(i),
            key: CacheKey::new(
                besluitbron_server::platforms::obv::PLATFORM,
                DataClass::Search,
                "search",
            )
            .param("q", format!("vraag {i}")),
            session,
            cost: Units::ONE,
            lane: Lane::MAIN,
        };
        let arrival = self.shell.request(self.now, WallTime(0), None, req, i, i);
        black_box(arrival.is_ok());
        while self.shell.poll_action().is_some() {}
    }

    /// One request, one admission, its send and its answer.
    fn step(&mut self) {
        self.request();
        self.now = self.now + Duration::from_secs(1);
        self.shell.handle_timeout(self.now);
        while let Some(action) = self.shell.poll_action() {
            if let Action::Send(pending) = action {
                let out = self
                    .shell
                    .confirm_send(self.now, WallTime(0), None, pending)
                    .expect("one process sends");
                let answer = Outcome::Success {
                    payload: Arc::from(&b"{}"[..]),
                    feedback: Feedback {
                        keep: Keep::Never,
                        ..Feedback::default()
                    },
                };
                self.shell.on_outcome(self.now, WallTime(0), out.attempt, answer);
            }
        }
    }
}

fn bench_checks(c: &mut Criterion) {
    let mut steps = c.benchmark_group("shell_steps");
    for n in [100, 1_000, 10_000] {
        steps.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            let mut busy = Busy::new(n);
            b.iter(|| busy.step());
        });
    }
    steps.finish();
    let mut checks = c.benchmark_group("shell_check");
    for n in [100, 1_000, 10_000] {
        checks.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, &n| {
            let mut busy = Busy::new(n);
            for _ in 0..100 {
                busy.step();
            }
            assert_eq!(busy.shell.path().waiting(), n, "n calls wait");
            b.iter(|| black_box(busy.shell.check_invariants()));
        });
    }
    checks.finish();
}

criterion_group!(benches, bench_checks);
criterion_main!(benches);
