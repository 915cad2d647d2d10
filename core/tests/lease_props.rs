//! The handover rules ([`besluitbron_core::cluster::Lease`]) under a lease engine that
//! loses keys, messages that are late or lost, paused replicas, shutdowns and drifting
//! clocks: a small world on true time around two or three replicas.
//!
//! The property: for any two acquisitions X and Y (two replicas, or one replica twice),
//! if X starts admitting no later than Y, then everything X may send has reached the
//! platform (at most m after it left) before Y may admit — in true time, given each
//! replica's clock rate within `1 ± ρ` of it, `ρ ≤ m / (2·TTL + m)`. The engine's own
//! clock is arbitrary (between half and twice true speed): safety never rests on it.
//!
//! A window is what the machine itself declares — from `admit_from` to the final
//! `valid_until` of the acquisition, cut where it was lost — and the test also asserts at
//! every step that `may_admit` / `may_send` only ever hold inside that window, so the
//! windows cover every instant the machine allows.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};
use std::time::Duration;

use besluitbron_core::Instant;
use besluitbron_core::cluster::{Lease, LeaseAnswer, LeaseCall, LeaseConfig, LeaseRequest};
use quickcheck::{Arbitrary, Gen, QuickCheck, TestResult};

const PPM: i128 = 1_000_000;
const MS: u64 = 1_000_000;

#[derive(Clone, Debug)]
struct World {
    /// Per replica: clock offset (ms) and rate drift (ppm).
    clocks: Vec<(u64, i64)>,
    /// The engine's expiry speed, in ppm of true time (500_000 ..= 2_000_000).
    engine_rate_ppm: u64,
    /// True instants (ms) at which the engine loses the key (a restart, a flush).
    losses: Vec<u64>,
    /// The hard case: the key is lost right after the engine applied its n-th renewal,
    /// and (when the flag is set) the renewing replica stops at once for the given ms, so
    /// it cannot learn of the loss while another replica takes the lease.
    loss_after_renewal: Vec<(u32, bool, u64)>,
    /// Per replica: pauses (true ms, from and length).
    pauses: Vec<Vec<(u64, u64)>>,
    /// One-way delays drawn in turn (ms); `None`: the message is lost.
    delays: Vec<Option<u64>>,
    /// A replica shut down gracefully at a true instant (ms).
    shutdown: Option<(usize, u64)>,
}

impl Arbitrary for World {
    fn arbitrary(g: &mut Gen) -> World {
        let n = 2 + usize::arbitrary(g) % 2;
        let bound = i64::try_from(LeaseConfig::DEFAULT.max_drift_ppm()).unwrap();
        let clocks = (0..n)
            .map(|_| {
                let off = u64::arbitrary(g) % 100_000;
                // Often at the bound itself, where it is tightest.
                let d = match u8::arbitrary(g) % 3 {
                    0 => bound,
                    1 => -bound,
                    _ => i64::arbitrary(g).rem_euclid(2 * bound + 1) - bound,
                };
                (off, d)
            })
            .collect();
        let losses = (0..u8::arbitrary(g) % 6).map(|_| u64::arbitrary(g) % 60_000).collect();
        let loss_after_renewal = (0..u8::arbitrary(g) % 4)
            .map(|_| {
                (
                    u32::arbitrary(g) % 40,
                    bool::arbitrary(g),
                    3_000 + u64::arbitrary(g) % 9_000,
                )
            })
            .collect();
        let mut pauses: Vec<Vec<(u64, u64)>> = (0..n)
            .map(|_| {
                (0..u8::arbitrary(g) % 3)
                    .map(|_| (u64::arbitrary(g) % 60_000, u64::arbitrary(g) % 12_000))
                    .collect()
            })
            .collect();
        // The hard case: a replica stops at the instant the key is lost, so it cannot
        // learn of the loss while another takes the lease.
        for &loss in &losses {
            if bool::arbitrary(g) {
                let r = usize::arbitrary(g) % n;
                pauses[r].push((loss, 3_000 + u64::arbitrary(g) % 9_000));
            }
        }
        let delays = (0..64)
            .map(|_| match u8::arbitrary(g) % 20 {
                0 => None,
                1 => Some(u64::arbitrary(g) % 3_000),
                _ => Some(u64::arbitrary(g) % 200),
            })
            .collect();
        let shutdown = bool::arbitrary(g).then(|| (usize::arbitrary(g) % n, u64::arbitrary(g) % 60_000));
        World {
            clocks,
            engine_rate_ppm: 500_000 + u64::arbitrary(g) % 1_500_001,
            losses,
            loss_after_renewal,
            pauses,
            delays,
            shutdown,
        }
    }

    fn shrink(&self) -> Box<dyn Iterator<Item = World>> {
        let mut out = Vec::new();
        for i in 0..self.losses.len() {
            let mut w = self.clone();
            w.losses.remove(i);
            out.push(w);
        }
        for i in 0..self.loss_after_renewal.len() {
            let mut w = self.clone();
            w.loss_after_renewal.remove(i);
            out.push(w);
        }
        for r in 0..self.pauses.len() {
            for i in 0..self.pauses[r].len() {
                let mut w = self.clone();
                w.pauses[r].remove(i);
                out.push(w);
            }
        }
        if self.shutdown.is_some() {
            let mut w = self.clone();
            w.shutdown = None;
            out.push(w);
        }
        Box::new(out.into_iter())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Wake(usize),
    /// A request reaches the engine; its answer travels back after `back` (or is lost).
    Apply {
        replica: usize,
        id: u64,
        call: u8,
        token: u64,
        back: Option<u64>,
    },
    /// An answer (or the shell's time-out) reaches the replica: 0 granted, 1 refused,
    /// 2 unreachable, 3 + n: held by another for n ms.
    Answer {
        replica: usize,
        id: u64,
        answer: u64,
    },
    Loss,
    Shutdown(usize),
}

/// One acquisition's window, in its replica's local nanoseconds.
#[derive(Clone, Copy, Debug)]
struct Window {
    replica: usize,
    from: u64,
    end: u64,
}

#[derive(Debug)]
struct Replica {
    lease: Lease,
    off_ns: u64,
    d: i64,
    /// The open acquisition: (epoch, window).
    open: Option<(u64, Window)>,
}

impl Replica {
    fn local(&self, t: u64) -> u64 {
        self.off_ns + u64::try_from(i128::from(t) * (PPM + i128::from(self.d)) / PPM).unwrap()
    }

    /// The first true instant at which the local clock reads at least `l`.
    fn true_at(&self, l: u64) -> u64 {
        let since = i128::from(l.saturating_sub(self.off_ns));
        let den = PPM + i128::from(self.d);
        let mut t = u64::try_from((since * PPM + den - 1) / den).unwrap();
        while self.local(t) < l {
            t += 1;
        }
        t
    }
}

fn call_code(c: LeaseCall) -> u8 {
    match c {
        LeaseCall::Acquire => 0,
        LeaseCall::Renew => 1,
        LeaseCall::Release => 2,
    }
}

fn answer_of(code: u64) -> LeaseAnswer {
    match code {
        0 => LeaseAnswer::Granted,
        1 => LeaseAnswer::Refused,
        2 => LeaseAnswer::Unreachable,
        n => LeaseAnswer::HeldFor(Duration::from_millis(n - 3)),
    }
}

/// Runs the world for 70 s of true time under `config`; returns every acquisition's
/// window, or a step where the machine allowed something outside its own window.
fn run(world: &World, config: LeaseConfig) -> Result<Vec<Window>, String> {
    let horizon = 70_000 * MS;
    let mut run = Run::new(world, config);
    while let Some(Reverse((t, _, ev))) = run.heap.pop() {
        if t > horizon {
            break;
        }
        if run.key.is_some_and(|(_, _, exp)| exp <= t) {
            run.key = None;
        }
        let r = match ev {
            Ev::Loss => {
                run.key = None;
                continue;
            }
            Ev::Apply {
                replica,
                id,
                call,
                token,
                back,
            } => {
                run.apply(t, replica, id, call, token, back);
                continue;
            }
            Ev::Wake(r) | Ev::Answer { replica: r, .. } | Ev::Shutdown(r) => r,
        };
        if let Some(until) = run.paused_until(r, t) {
            // A paused replica handles nothing; it looks again when it resumes.
            run.push(until, ev);
            continue;
        }
        run.step(t, r, ev)?;
    }
    Ok(run.finish())
}

/// The world while it runs: the replicas, the events to come, the engine's key, and the
/// windows declared so far.
struct Run<'w> {
    world: &'w World,
    /// The lease's time to live, in the engine's (true) nanoseconds.
    engine_ttl: u64,
    /// The shell's time-out for an answer, true nanoseconds.
    timeout: u64,
    replicas: Vec<Replica>,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    seq: u64,
    /// The engine's key: (owner, token, expiry in true ns).
    key: Option<(usize, u64, u64)>,
    delay_i: usize,
    /// Pauses in true ns: the world's, and those the hard case adds as it happens.
    pauses: Vec<Vec<(u64, u64)>>,
    renewals: u32,
    windows: Vec<Window>,
    wake_at: BTreeMap<usize, u64>,
}

impl<'w> Run<'w> {
    /// The world at true time 0: every replica wakes, the losses and the shutdown are due.
    fn new(world: &'w World, config: LeaseConfig) -> Run<'w> {
        let ttl_ns = u64::try_from(config.ttl.as_nanos()).unwrap();
        let replicas = world
            .clocks
            .iter()
            .map(|&(off, d)| Replica {
                lease: Lease::new(config, Instant::from_nanos(off * MS)).unwrap(),
                off_ns: off * MS,
                d,
                open: None,
            })
            .collect();
        let mut run = Run {
            world,
            engine_ttl: u64::try_from(i128::from(ttl_ns) * PPM / i128::from(world.engine_rate_ppm)).unwrap(),
            timeout: 1_500 * MS,
            replicas,
            heap: BinaryHeap::new(),
            seq: 0,
            key: None,
            delay_i: 0,
            pauses: world
                .pauses
                .iter()
                .map(|p| p.iter().map(|&(from, len)| (from * MS, (from + len) * MS)).collect())
                .collect(),
            renewals: 0,
            windows: Vec::new(),
            wake_at: BTreeMap::new(),
        };
        for r in 0..run.replicas.len() {
            run.push(0, Ev::Wake(r));
        }
        for &l in &world.losses {
            run.push(l * MS, Ev::Loss);
        }
        if let Some((r, at)) = world.shutdown {
            run.push(at * MS, Ev::Shutdown(r));
        }
        run
    }

    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    /// The next one-way delay, in turn; `None`: the message is lost.
    fn next_delay(&mut self) -> Option<u64> {
        let d = self.world.delays[self.delay_i % self.world.delays.len()];
        self.delay_i += 1;
        d.map(|ms| ms * MS)
    }

    /// The end of replica `r`'s pause at true `t`, if it is paused.
    fn paused_until(&self, r: usize, t: u64) -> Option<u64> {
        self.pauses[r]
            .iter()
            .filter(|&&(from, to)| from <= t && t < to)
            .map(|&(_, to)| to)
            .max()
    }

    /// The engine applies `call` of `replica` at true `t`; its answer travels back after
    /// `back`, unless lost.
    fn apply(&mut self, t: u64, replica: usize, id: u64, call: u8, token: u64, back: Option<u64>) {
        // Tokens are unique across replicas: (replica, token).
        let mine = self.key.is_some_and(|(o, tk, _)| o == replica && tk == token);
        let granted = match call {
            0 if self.key.is_none() => {
                self.key = Some((replica, token, t + self.engine_ttl));
                true
            }
            1 if mine => {
                self.key = Some((replica, token, t + self.engine_ttl));
                self.renewals += 1;
                if let Some(&(_, pause, len)) = self.world.loss_after_renewal.iter().find(|l| l.0 == self.renewals) {
                    self.key = None;
                    if pause {
                        // Right after it hears the renewal was granted.
                        let from = t + back.unwrap_or(0) + 1;
                        self.pauses[replica].push((from, from + len * MS));
                    }
                }
                true
            }
            2 if mine => {
                self.key = None;
                true
            }
            _ => false,
        };
        if let Some(back) = back {
            // A refused acquisition says when the holder's lease runs out, in the
            // engine's time (`PTTL`).
            let answer = match (granted, call, self.key) {
                (true, ..) => 0,
                (false, 0, Some((_, _, exp))) => {
                    let left = u128::from(exp.saturating_sub(t));
                    let engine_ms = left * u128::from(self.world.engine_rate_ppm) / 1_000_000 / u128::from(MS);
                    3 + u64::try_from(engine_ms).unwrap()
                }
                (false, ..) => 1,
            };
            self.push(t + back, Ev::Answer { replica, id, answer });
        }
    }

    /// Replica `r` handles `ev` at true `t`: its lease takes the input, its window is
    /// brought up to date and checked, its requests go out and its next wake-up is set.
    fn step(&mut self, t: u64, r: usize, ev: Ev) -> Result<(), String> {
        let rep = &mut self.replicas[r];
        let local = rep.local(t);
        let now = Instant::from_nanos(local);
        match ev {
            Ev::Answer { id, answer, .. } => rep.lease.on_answer(now, id, answer_of(answer)),
            Ev::Shutdown(_) => rep.lease.shutdown(now),
            _ => rep.lease.handle_timeout(now),
        }
        let mut sends: Vec<LeaseRequest> = Vec::new();
        while let Some(req) = rep.lease.poll_request(now) {
            sends.push(req);
        }
        while rep.lease.poll_event().is_some() {}
        self.track_window(r, local);
        self.check_inside(r, now, local)?;
        let rep = &self.replicas[r];
        let next = rep.lease.poll_timeout().map(|l| rep.true_at(l.as_nanos()).max(t + 1));
        for req in sends {
            self.send(t, r, &req);
        }
        if let Some(next) = next
            && self.wake_at.get(&r).is_none_or(|&w| w <= t || w > next)
        {
            self.wake_at.insert(r, next);
            self.push(next, Ev::Wake(r));
        }
        Ok(())
    }

    /// The current acquisition's window: from its admit_from to its valid_until, cut
    /// where it ended.
    fn track_window(&mut self, r: usize, local: u64) {
        let rep = &mut self.replicas[r];
        let epoch = rep.lease.epoch();
        if let Some((open_epoch, w)) = rep.open
            && Some(open_epoch) != epoch
        {
            self.windows.push(Window {
                end: w.end.min(local),
                ..w
            });
            rep.open = None;
        }
        if let (Some(e), Some(valid)) = (epoch, rep.lease.valid_until()) {
            match rep.open.as_mut() {
                Some((_, w)) => w.end = valid.as_nanos(),
                None => {
                    let from = rep.lease.admit_from().map_or(u64::MAX, Instant::as_nanos);
                    rep.open = Some((
                        e,
                        Window {
                            replica: r,
                            from,
                            end: valid.as_nanos(),
                        },
                    ));
                }
            }
        }
    }

    /// Whatever the machine allows lies inside its declared window.
    fn check_inside(&self, r: usize, now: Instant, local: u64) -> Result<(), String> {
        let rep = &self.replicas[r];
        let inside = |l: u64| rep.open.is_some_and(|(_, w)| w.from <= l && l < w.end);
        if rep.lease.may_admit(now) && !inside(local) {
            return Err(format!(
                "replica {r} may admit at {local} outside its window {:?}",
                rep.open
            ));
        }
        if let Some((_, w)) = rep.open
            && w.from != u64::MAX
            && rep
                .lease
                .may_send(now, Instant::from_nanos(w.from.max(local.saturating_sub(500 * MS))))
            && !inside(local)
        {
            return Err(format!("replica {r} may send at {local} outside its window {w:?}"));
        }
        Ok(())
    }

    /// Replica `r`'s request `req` leaves at true `t`: it reaches the engine unless lost,
    /// and an answer that does not come back in time is the shell's time-out.
    fn send(&mut self, t: u64, r: usize, req: &LeaseRequest) {
        let out = self.next_delay();
        let back = self.next_delay();
        let answered = match (out, back) {
            (Some(d1), Some(d2)) if d1 + d2 <= self.timeout => Some(d2),
            _ => None,
        };
        if let Some(d1) = out {
            self.push(
                t + d1,
                Ev::Apply {
                    replica: r,
                    id: req.id,
                    call: call_code(req.call),
                    token: req.token,
                    back: answered,
                },
            );
        }
        if answered.is_none() {
            // No answer in time: the shell's time-out says so.
            self.push(
                t + self.timeout,
                Ev::Answer {
                    replica: r,
                    id: req.id,
                    answer: 2,
                },
            );
        }
    }

    /// Every window declared, the still open ones included, each non-empty.
    fn finish(mut self) -> Vec<Window> {
        for rep in &self.replicas {
            if let Some((_, w)) = rep.open {
                self.windows.push(w);
            }
        }
        self.windows.into_iter().filter(|w| w.from < w.end).collect()
    }
}

/// `true(a.end) + m ≤ true(b.from)` for every pair where `a` starts no later than `b`,
/// exactly (rationals over the clocks' rates).
fn separated(windows: &[Window], clocks: &[(u64, i64)], margin: Duration) -> Result<(), String> {
    // true(l) = (l − off) × PPM / (PPM + d), kept as (numerator, denominator).
    let true_of = |r: usize, l: u64| -> (i128, i128) {
        let (off, d) = clocks[r];
        ((i128::from(l) - i128::from(off * MS)) * PPM, PPM + i128::from(d))
    };
    let m = i128::try_from(margin.as_nanos()).unwrap();
    let le = |(an, ad): (i128, i128), (bn, bd): (i128, i128)| an * bd <= bn * ad;
    for (i, a) in windows.iter().enumerate() {
        for (j, b) in windows.iter().enumerate() {
            if i == j || !le(true_of(a.replica, a.from), true_of(b.replica, b.from)) {
                continue;
            }
            let (en, ed) = true_of(a.replica, a.end);
            let end_plus_m = (en + m * ed, ed);
            if !le(end_plus_m, true_of(b.replica, b.from)) {
                return Err(format!(
                    "replica {} admits from {} (local) before replica {}'s window ending at {} has arrived: {a:?} {b:?}",
                    b.replica, b.from, a.replica, a.end
                ));
            }
        }
    }
    Ok(())
}

fn prop_owners_never_overlap(world: World) -> TestResult {
    let config = LeaseConfig::DEFAULT;
    match run(&world, config).and_then(|w| separated(&w, &world.clocks, config.margin).map(|()| w)) {
        Ok(_) => TestResult::passed(),
        Err(e) => TestResult::error(e),
    }
}

#[test]
fn owners_never_overlap_within_the_drift_bound_whatever_the_engine_loses() {
    QuickCheck::new()
        .tests(400)
        .quickcheck(prop_owners_never_overlap as fn(World) -> TestResult);
}

/// The worlds do produce handovers: without them the property would be empty.
#[test]
fn the_worlds_hand_the_lease_over() {
    let mut g = Gen::new(100);
    let mut handovers = 0;
    for _ in 0..100 {
        let world = World::arbitrary(&mut g);
        let windows = run(&world, LeaseConfig::DEFAULT).unwrap();
        let owners: std::collections::BTreeSet<usize> = windows.iter().map(|w| w.replica).collect();
        if owners.len() > 1 {
            handovers += 1;
        }
    }
    assert!(handovers >= 20, "only {handovers} of 100 worlds handed over");
}

/// A calm world: the first replica takes the lease and keeps it for the whole run.
#[test]
fn without_faults_one_owner_keeps_the_lease() {
    let world = World {
        clocks: vec![(0, 0), (7, 50)],
        engine_rate_ppm: 1_000_000,
        losses: vec![],
        loss_after_renewal: vec![],
        pauses: vec![vec![], vec![]],
        delays: vec![Some(2)],
        shutdown: None,
    };
    let windows = run(&world, LeaseConfig::DEFAULT).unwrap();
    assert_eq!(windows.len(), 1, "{windows:?}");
    assert_eq!(windows[0].replica, 0);
    assert_eq!(windows[0].from, 6_004 * MS, "TTL + m after the grant at 4 ms");
}

/// Beyond the bound the rules do not hold: A's clock slow and B's fast by m / TTL (20 %),
/// the key lost just after A's renewal reached the engine, and B's first admission
/// comes before A's last call has arrived.
#[test]
fn beyond_the_drift_bound_two_owners_can_meet() {
    let config = LeaseConfig::DEFAULT;
    let rho = 200_000;
    let world = World {
        clocks: vec![(0, -rho), (0, rho)],
        engine_rate_ppm: 1_000_000,
        // A acquires at 0; the key is lost at 20 s, just after one of A's renewals, and A
        // is paused from then on (it cannot learn of the loss); B, paused until the loss,
        // takes the lease.
        losses: vec![20_000],
        loss_after_renewal: vec![],
        pauses: vec![vec![(20_000, 10_000)], vec![(0, 20_000)]],
        delays: vec![Some(0)],
        shutdown: None,
    };
    let windows = run(&world, config).unwrap();
    let within = separated(&windows, &world.clocks, config.margin);
    // Whether the loss falls right after a renewal depends on the renewal grid; search a
    // few loss instants for the one that breaks it.
    let broken = within.is_err()
        || (19_000..21_000).step_by(10).any(|loss| {
            let mut w = world.clone();
            w.losses = vec![loss];
            w.pauses = vec![vec![(loss, 10_000)], vec![(0, loss)]];
            let windows = run(&w, config).unwrap();
            separated(&windows, &w.clocks, config.margin).is_err()
        });
    assert!(broken, "20 % drift should let two owners meet");
    // The same search within the bound finds nothing.
    let bound = i64::try_from(config.max_drift_ppm()).unwrap();
    for loss in (19_000..21_000).step_by(10) {
        let mut w = world.clone();
        w.clocks = vec![(0, -bound), (0, bound)];
        w.losses = vec![loss];
        w.pauses = vec![vec![(loss, 10_000)], vec![(0, loss)]];
        let windows = run(&w, config).unwrap();
        separated(&windows, &w.clocks, config.margin).unwrap();
    }
}

/// The random worlds can find a meeting: with the clocks at ±m/TTL (20 %, beyond the
/// bound) instead of within it, some of the same worlds break the property. (With the
/// start wait shortened to TTL they do too; see the module documentation.)
#[test]
fn random_worlds_beyond_the_bound_find_two_owners_meeting() {
    let mut g = Gen::new(100);
    let config = LeaseConfig::DEFAULT;
    let mut broken = 0;
    for _ in 0..1000 {
        let mut world = World::arbitrary(&mut g);
        for (i, c) in world.clocks.iter_mut().enumerate() {
            c.1 = if i % 2 == 0 { -200_000 } else { 200_000 };
        }
        let windows = run(&world, config).unwrap();
        if separated(&windows, &world.clocks, config.margin).is_err() {
            broken += 1;
        }
    }
    assert!(
        broken > 0,
        "no world beyond the bound broke the property: the worlds are too tame"
    );
}
