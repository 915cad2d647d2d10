//! One server's turn: every client drives its own connection until the plan ends, closed
//! loop or open loop, with latency in an HDR histogram and a stall probe alongside.
//!
//! Invariants: only requests started and finished inside the measured window are
//! recorded; in the open loop latency counts from each request's scheduled time; a failed
//! request is counted, never recorded; the clients are handed back for the next turn.
//!
//! What this module does not do: start servers or print.

use std::time::{Duration, Instant};

use axum::http::StatusCode;
use hdrhistogram::Histogram;

use crate::call::{answer_ok, call, call_body};
use crate::conn::Target;

/// One server's measured turn.
pub(crate) const TURN: Duration = Duration::from_secs(1);
/// Unrecorded time at the start of every turn after the first.
pub(crate) const TURN_RAMP: Duration = Duration::from_millis(200);

/// The phases of one server's turn.
#[derive(Clone, Copy)]
pub(crate) struct Plan {
    pub(crate) warmup: Duration,
    pub(crate) measured: Duration,
    /// Open loop: the gap between one client's scheduled requests.
    pub(crate) interval: Option<Duration>,
}

/// What one server's run measured.
#[derive(Clone)]
pub(crate) struct Measured {
    /// Requests started and finished inside the measured window.
    pub(crate) requests: u64,
    /// Latency of those requests, microseconds.
    pub(crate) latency_us: Histogram<u64>,
    /// Requests answered without error in all, warm-up included.
    pub(crate) answered: u64,
    /// The measured window's length.
    pub(crate) window: Duration,
    /// Failed requests over the whole run (warm-up included).
    pub(crate) errors: u64,
    pub(crate) first_error: Option<String>,
    /// How late a plain OS thread woke from 1 ms sleeps during the measured window,
    /// microseconds: the machine's own stalls, which no server can beat.
    pub(crate) oversleep_us: Histogram<u64>,
}

impl Measured {
    pub(crate) fn per_sec(&self) -> f64 {
        self.requests as f64 / self.window.as_secs_f64()
    }

    /// Adds another turn of the same server.
    pub(crate) fn absorb(&mut self, turn: Measured) {
        self.requests += turn.requests;
        self.answered += turn.answered;
        // Same bounds on both sides: adding cannot fail.
        self.latency_us.add(&turn.latency_us).expect("histogram add");
        self.window += turn.window;
        self.errors += turn.errors;
        if self.first_error.is_none() {
            self.first_error = turn.first_error;
        }
        self.oversleep_us.add(&turn.oversleep_us).expect("histogram add");
    }

    /// Adds another group of the same turns (measured in the same windows, e.g. another
    /// replica's clients): requests and latencies add up, the windows and the machine's
    /// stalls are the same ones.
    pub(crate) fn alongside(&mut self, group: &Measured) {
        self.requests += group.requests;
        self.answered += group.answered;
        // Same bounds on both sides: adding cannot fail.
        self.latency_us.add(&group.latency_us).expect("histogram add");
        self.errors += group.errors;
        if self.first_error.is_none() {
            self.first_error.clone_from(&group.first_error);
        }
    }
}

/// Sleeps 1 ms at a time on its own OS thread from `from` until `until` and records by how
/// much each sleep overran, in microseconds. On an idle VM this shows the hypervisor's
/// pauses; under load it also shows how long a runnable thread waits for a core.
fn stall_probe(from: Instant, until: Instant) -> std::thread::JoinHandle<Histogram<u64>> {
    std::thread::spawn(move || {
        let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram bounds");
        std::thread::sleep(from.saturating_duration_since(Instant::now()));
        let tick = Duration::from_millis(1);
        let mut before = Instant::now();
        while before < until {
            std::thread::sleep(tick);
            let after = Instant::now();
            let late = after.duration_since(before).saturating_sub(tick);
            hist.saturating_record(u64::try_from(late.as_micros()).unwrap_or(u64::MAX).max(1));
            before = after;
        }
        hist
    })
}

/// Runs one task per target until the plan ends, every group of targets in the same
/// window (a server's clients in one group, or each replica's clients in a group of
/// their own); merges each group's histograms and hands the targets back, in their
/// groups, for the next turn (a client whose task failed is lost and counted). One
/// [`Measured`] per group, in the groups' order, each with the window's stall probe;
/// [`Measured::alongside`] adds groups up.
pub(crate) async fn drive(groups: Vec<Vec<Target>>, plan: Plan) -> (Vec<Vec<Target>>, Vec<Measured>) {
    let start = Instant::now();
    let record_from = start + plan.warmup;
    let end = record_from + plan.measured;
    let probe = stall_probe(record_from, end);
    let group_count = groups.len();
    let clients = u32::try_from(groups.iter().map(Vec::len).sum::<usize>()).unwrap_or(u32::MAX);
    let mut tasks = Vec::with_capacity(clients as usize);
    let targets = groups
        .into_iter()
        .enumerate()
        .flat_map(|(g, targets)| targets.into_iter().map(move |t| (g, t)));
    for (i, (group, target)) in targets.enumerate() {
        let turn = Turn {
            start,
            record_from,
            end,
        };
        let task = tokio::spawn(run_client(i, clients, target, plan, turn));
        tasks.push((group, task));
    }
    let empty = || Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram bounds");
    let mut parts: Vec<Part> = (0..group_count)
        .map(|_| Part {
            back: Vec::new(),
            latency_us: empty(),
            answered: 0,
            errors: 0,
            first_error: None,
        })
        .collect();
    for (group, task) in tasks {
        let part = &mut parts[group];
        match task.await {
            Ok((target, hist, error, answered, errors)) => {
                part.back.push(target);
                // Same bounds on both sides: adding cannot fail.
                part.latency_us.add(&hist).expect("histogram add");
                part.answered += answered;
                part.errors += errors;
                if part.first_error.is_none() {
                    part.first_error = error;
                }
            }
            Err(e) => {
                part.errors += 1;
                part.first_error.get_or_insert_with(|| format!("client task: {e}"));
            }
        }
    }
    let oversleep_us = tokio::task::spawn_blocking(move || probe.join())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_else(empty);
    parts
        .into_iter()
        .map(|p| {
            let measured = Measured {
                requests: p.latency_us.len(),
                answered: p.answered,
                latency_us: p.latency_us,
                window: plan.measured,
                errors: p.errors,
                first_error: p.first_error,
                oversleep_us: oversleep_us.clone(),
            };
            (p.back, measured)
        })
        .unzip()
}

/// When a turn's phases fall: it starts, its measured window begins, and it ends.
#[derive(Clone, Copy)]
struct Turn {
    start: Instant,
    record_from: Instant,
    end: Instant,
}

/// Client `i` of `clients` sends its calls on `target` through `turn` (in an open loop
/// when `plan` sets an interval), recording the latency of those inside the measured
/// window: the target back, the latencies, the first error, and the calls answered and
/// failed.
async fn run_client(
    i: usize,
    clients: u32,
    mut target: Target,
    plan: Plan,
    turn: Turn,
) -> (Target, Histogram<u64>, Option<String>, u64, u64) {
    let Turn {
        start,
        record_from,
        end,
    } = turn;
    // 1 µs to 60 s at 3 significant figures: the bounds are constants that fit.
    let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram bounds");
    let mut first_error = None;
    let (mut answered, mut errors) = (0u64, 0u64);
    let mut id = target.next_id;
    // Open loop: client i's k-th request is due at start + (k + i / clients) × gap.
    let mut due = plan
        .interval
        .map(|gap| start + gap * u32::try_from(i).unwrap_or(0) / clients.max(1));
    loop {
        if let (Some(at), Some(gap)) = (due.as_mut(), plan.interval) {
            tokio::time::sleep_until((*at).into()).await;
            *at += gap;
        }
        // In the open loop the latency counts from when the request was due.
        let sent_at = due.zip(plan.interval).map_or_else(Instant::now, |(at, gap)| at - gap);
        if sent_at >= end {
            break;
        }
        id += 1;
        let outcome = target
            .conn
            .post(target.path, target.session.as_deref(), call().asks(), call_body(id))
            .await;
        let done_at = Instant::now();
        let ok = match &outcome {
            Ok((status, _, body)) if *status == StatusCode::OK && answer_ok(body) => true,
            Ok((status, _, body)) => {
                first_error.get_or_insert_with(|| {
                    format!("{status}: {}", String::from_utf8_lossy(&body[..body.len().min(300)]))
                });
                false
            }
            Err(e) => {
                first_error.get_or_insert_with(|| format!("{e:#}"));
                false
            }
        };
        if !ok {
            errors += 1;
            continue;
        }
        answered += 1;
        if sent_at >= record_from && done_at <= end {
            let us = u64::try_from(done_at.duration_since(sent_at).as_micros()).unwrap_or(u64::MAX);
            hist.saturating_record(us.max(1));
        }
    }
    // The next turn goes on after the last id used (ids are raised before use).
    target.next_id = id;
    (target, hist, first_error, answered, errors)
}

/// One group's share of a turn, while it is gathered.
struct Part {
    back: Vec<Target>,
    latency_us: Histogram<u64>,
    answered: u64,
    errors: u64,
    first_error: Option<String>,
}
