//! One server's turn: every client drives its own connection until the plan ends, closed
//! loop or open loop, with latency in an HDR histogram and a stall probe alongside.
//!
//! Invariants: only requests started and finished inside the measured window are
//! recorded; in the open loop latency counts from each request's scheduled time; a failed
//! request is counted, never recorded; the clients are handed back for the next turn.
//!
//! What this module does not do: start servers or print.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
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

/// Runs one task per target until the plan ends; merges their histograms and hands the
/// targets back for the next turn (a client whose task failed is lost and counted).
pub(crate) async fn drive(targets: Vec<Target>, plan: Plan) -> (Vec<Target>, Measured) {
    let start = Instant::now();
    let record_from = start + plan.warmup;
    let end = record_from + plan.measured;
    let probe = stall_probe(record_from, end);
    let errors = Arc::new(AtomicU64::new(0));
    let answered = Arc::new(AtomicU64::new(0));
    let mut tasks = Vec::with_capacity(targets.len());
    let clients = targets.len() as u32;
    for (i, mut target) in targets.into_iter().enumerate() {
        let errors = Arc::clone(&errors);
        let answered = Arc::clone(&answered);
        tasks.push(tokio::spawn(async move {
            // 1 µs to 60 s at 3 significant figures: the bounds are constants that fit.
            let mut hist = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram bounds");
            let mut first_error = None;
            let mut id = 1_000u64;
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
                    errors.fetch_add(1, Ordering::Relaxed);
                    continue;
                }
                answered.fetch_add(1, Ordering::Relaxed);
                if sent_at >= record_from && done_at <= end {
                    let us = u64::try_from(done_at.duration_since(sent_at).as_micros()).unwrap_or(u64::MAX);
                    hist.saturating_record(us.max(1));
                }
            }
            (target, hist, first_error)
        }));
    }
    let mut latency_us = Histogram::<u64>::new_with_bounds(1, 60_000_000, 3).expect("histogram bounds");
    let mut first_error = None;
    let mut back = Vec::with_capacity(tasks.len());
    for task in tasks {
        match task.await {
            Ok((target, hist, error)) => {
                back.push(target);
                // Same bounds on both sides: adding cannot fail.
                latency_us.add(&hist).expect("histogram add");
                if first_error.is_none() {
                    first_error = error;
                }
            }
            Err(e) => {
                errors.fetch_add(1, Ordering::Relaxed);
                first_error.get_or_insert_with(|| format!("client task: {e}"));
            }
        }
    }
    let oversleep_us = tokio::task::spawn_blocking(move || probe.join())
        .await
        .ok()
        .and_then(Result::ok)
        .unwrap_or_else(|| Histogram::new_with_bounds(1, 60_000_000, 3).expect("histogram bounds"));
    let measured = Measured {
        requests: latency_us.len(),
        answered: answered.load(Ordering::Relaxed),
        latency_us,
        window: plan.measured,
        errors: errors.load(Ordering::Relaxed),
        first_error,
        oversleep_us,
    };
    (back, measured)
}
