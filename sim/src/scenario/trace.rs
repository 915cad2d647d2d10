//! JSON Lines traces: one call per line, parsed into a [`Workload`]; a trace the server
//! recorded starts at its first call, and its restarts and blind spots (where the
//! recording may lack what the server did) are found from its lines.
//!
//! Invariants: parsing is strict (an unknown platform or field is an error); a call's
//! index is its 0-based line number. What it does not do: run anything.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::Duration;

use besluitbron_core::record::{RecordedAttempt, TraceLine};
use besluitbron_core::{Instant, PlatformId};

use super::workload::{BlindSpot, OpenCall, Recorded, Segment, Workload};
use super::{InputError, PlatformSpec, default_slip, read};

/// Parses a JSON Lines trace. Blank lines are skipped but keep their number, so a call's
/// index is always its 0-based line number. The run's platforms are those the calls name,
/// with their defaults, in the order of their streams ([`crate::ids::stream`]).
///
/// A trace the server recorded (its lines say how each call ended) starts at its first
/// call: every instant is taken relative to the earliest `at_ms`
/// ([`Workload::recorded`] keeps that base); its calls are submitted in arrival order
/// (`at_ms`, then the server's `step`, or `seq` in a recording without it), and the
/// flights' attempts become the platforms' answers in the replay ([`Recorded::flights`]),
/// each taken at its instant in the server's order (its `step`). Its open lines
/// ([`TraceLine::open`]) stand for the requests a killed process left open
/// ([`settle_open_lines`]).
pub fn parse_trace(text: &str, path: &str) -> Result<Workload, InputError> {
    let mut w = Workload::new(Vec::new(), default_slip());
    let mut sessions: BTreeMap<String, u32> = BTreeMap::new();
    let mut lines = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let t: TraceLine = serde_json::from_str(line).map_err(|source| InputError::Json {
            path: path.to_owned(),
            line: i + 1,
            source,
        })?;
        crate::ids::platform(&t.platform).map_err(|m| InputError::Invalid(format!("{path}:{}: {m}", i + 1)))?;
        lines.push((i, t));
    }
    let recorded = lines.iter().any(|(_, t)| t.is_recorded());
    if recorded {
        let base = lines.iter().map(|(_, t)| t.at_ms).min().unwrap_or(0);
        // Arrival order: the server writes a line when its call ends. Within a millisecond
        // the order its group's task took them in (`step`; the platforms of a group share
        // one count), else — a recording from before it was written — each platform's
        // own numbers; a line the task never saw (a fresh answer from the memory layer)
        // after those.
        lines.sort_by_key(|(i, t)| (t.at_ms, t.step.unwrap_or(u64::MAX), t.seq.unwrap_or(0), *i));
        let Processes {
            restarts,
            ends,
            segments,
        } = processes_of(lines.iter().map(|(_, t)| t), base);
        lines = settle_open_lines(lines, &restarts, &ends, base);
        let mut r = Recorded {
            base_ms: base,
            flights: BTreeMap::new(),
            margin: SERVER_MARGIN,
            timeout: SERVER_TIMEOUT,
            restarts,
            ends,
            segments,
        };
        for (_, t) in &lines {
            if !t.attempts.is_empty() {
                let op = t.op.clone().unwrap_or_else(|| "search".to_owned());
                let key = (platform_of(t), op, t.key.clone().unwrap_or_default());
                let attempts = t
                    .attempts
                    .iter()
                    .map(|a| RecordedAttempt {
                        at_ms: a.at_ms.saturating_sub(base),
                        ..*a
                    })
                    .collect();
                r.flights.entry(key).or_default().push(attempts);
            }
        }
        w.recorded = Some(r);
    }
    let base = w.recorded.as_ref().map_or(0, |r| r.base_ms);
    for (i, t) in lines {
        let session = match sessions.get(&t.session) {
            Some(&s) => s,
            None => {
                let s = w.add_session(&t.session, None);
                sessions.insert(t.session.clone(), s);
                s
            }
        };
        let platform = platform_of(&t);
        w.open_call_index.push(i as u64);
        w.open_calls.push(OpenCall {
            at: Instant::from_millis(t.at_ms - base),
            session,
            platform,
            cost: t.cost,
            op: t.op,
            key: t.key,
            then: t.then,
            leave_after: t.left_after_ms.map(Duration::from_millis),
            rank: t.step,
        });
        if !w.platforms.iter().any(|p| p.id == platform) {
            w.platforms.push(PlatformSpec::default_for(platform));
        }
    }
    // Nobody lists a trace's platforms: the order of their streams (the real platforms'
    // table order, `sim/platforms.toml`), then their ids, whichever call came first.
    w.platforms.sort_by_key(|p| (crate::ids::stream(p.id), p.id));
    Ok(w)
}

/// The platform of a trace line whose id [`parse_trace`] checked when it read the line.
fn platform_of(t: &TraceLine) -> PlatformId {
    crate::ids::platform(&t.platform).unwrap_or_else(|e| panic!("checked when the line was read: {e}"))
}

/// What a recording says of the server's processes.
struct Processes {
    /// When each process after the first began (its first request), ms from the start.
    restarts: Vec<u64>,
    /// The last instant each process was heard of (an arrival, an attempt sent, an answer
    /// taken, a caller leaving), ms from the start: a killed process ended soon after.
    ends: Vec<u64>,
    /// Per platform, one [`Segment`] per process.
    segments: BTreeMap<PlatformId, Vec<Segment>>,
}

/// The process of an instant `at` (ms from the start), by the restarts.
fn process_at(restarts: &[u64], at: u64) -> usize {
    restarts.partition_point(|&r| r <= at)
}

/// The last instant `t` tells of, ms from `base`: its arrival, its caller leaving, its
/// attempts' sending and (where it came back) their outcome.
fn last_heard(t: &TraceLine, base: u64) -> u64 {
    let arrived = t.at_ms.saturating_sub(base);
    let left = arrived.saturating_add(t.left_after_ms.unwrap_or(0));
    let attempts = t.attempts.iter().map(|a| {
        let back = !t.open || a.step.is_some();
        a.at_ms
            .saturating_add(if back { a.latency_ms } else { 0 })
            .saturating_sub(base)
    });
    attempts.chain([arrived, left]).max().unwrap_or(arrived)
}

/// The restarts of a recording, when each process was last heard of, and, per platform,
/// its [`Segment`]s, from its lines in arrival order.
///
/// The server numbers each platform's requests from 0 in each process (`seq`) and writes
/// one line per request when it ends, so a number missing from a process's lines is a
/// request whose line is not in the recording — open when the process was killed, or
/// dropped by a writer that fell behind. A process that ended before the recording did
/// (the numbers begin again: the server restarted) may have had requests after its last
/// line. A restart is the first arrival of a new process at any platform; every platform's
/// k-th process is taken to be the server's k-th (a recording at a platform that had no
/// request in a process would be misread).
///
/// A server that writes open lines ([`TraceLine::open`]: the recording has one) writes
/// one for every attempt that goes while its request waits, so a killed process's
/// requests without a line were never let go: they admitted nothing, and the recording
/// holds everything the process admitted — unless its writer dropped lines, which the
/// next line it wrote says (`dropped_before`).
fn processes_of<'a>(lines: impl Iterator<Item = &'a TraceLine> + Clone, base: u64) -> Processes {
    // Requests of one millisecond may reach the task out of number order; a drop by more
    // than this is a new process.
    const REORDER: u64 = 16;
    #[derive(Default)]
    struct Process {
        /// Arrival of each numbered request.
        seen: BTreeMap<u64, u64>,
        max: u64,
    }
    let mut processes: BTreeMap<PlatformId, Vec<Process>> = BTreeMap::new();
    for t in lines.clone() {
        let Some(seq) = t.seq else { continue };
        let at = t.at_ms.saturating_sub(base);
        let list = processes.entry(platform_of(t)).or_default();
        if list.last().is_none_or(|p| seq + REORDER < p.max) {
            list.push(Process::default());
        }
        let p = list.last_mut().expect("pushed");
        p.seen.entry(seq).or_insert(at);
        p.max = p.max.max(seq);
    }
    let first_at = |p: &Process| p.seen.values().copied().min().unwrap_or(0);
    // The k-th restart: the earliest first arrival of any platform's process k.
    let mut restarts: Vec<u64> = Vec::new();
    for list in processes.values() {
        for (k, p) in list.iter().enumerate().skip(1) {
            match restarts.get_mut(k - 1) {
                Some(r) => *r = (*r).min(first_at(p)),
                None => restarts.push(first_at(p)),
            }
        }
    }
    let mut ends = vec![0; restarts.len() + 1];
    let mut dropped = vec![false; restarts.len() + 1];
    let mut writes_open = false;
    for t in lines {
        let k = process_at(&restarts, t.at_ms.saturating_sub(base));
        ends[k] = ends[k].max(last_heard(t, base));
        dropped[k] |= t.dropped_before.is_some();
        writes_open |= t.open;
    }
    let mut segments = BTreeMap::new();
    for (platform, list) in processes {
        // Every platform restarts with the server: as many stretches as processes.
        let stretches = (0..=restarts.len())
            .map(|i| Segment {
                from_ms: if i == 0 { 0 } else { restarts[i - 1] },
                until_ms: restarts.get(i).copied(),
                blind: list.get(i).and_then(|p| {
                    let ended = i < restarts.len();
                    // Killed with everything it admitted written: what has no line
                    // admitted nothing.
                    let whole = ended && writes_open && !dropped[i];
                    process_blind_spot(platform, &p.seen, p.max, ended, whole)
                }),
            })
            .collect();
        segments.insert(platform, stretches);
    }
    Processes {
        restarts,
        ends,
        segments,
    }
}

/// The lines of a recording with its open lines settled: an open line whose request has
/// its own line in the same process goes (that line stands for it); of the others —
/// requests open when their process was killed — the last of each request stays, as the
/// request, its attempts still out (no `step`) taken to come back after its process ended
/// (their answers reached nobody), failed.
fn settle_open_lines(
    lines: Vec<(usize, TraceLine)>,
    restarts: &[u64],
    ends: &[u64],
    base: u64,
) -> Vec<(usize, TraceLine)> {
    let request = |t: &TraceLine| {
        let k = process_at(restarts, t.at_ms.saturating_sub(base));
        (k, t.platform.clone(), t.seq)
    };
    let ended: BTreeSet<_> = lines.iter().filter(|(_, t)| !t.open).map(|(_, t)| request(t)).collect();
    // The last open line of each request without a line of its own: the most attempts.
    let mut open: BTreeMap<_, usize> = BTreeMap::new();
    for (n, (_, t)) in lines.iter().enumerate() {
        let r = request(t);
        if !t.open || r.2.is_none() || ended.contains(&r) {
            continue;
        }
        let more = |&o: &usize| lines[o].1.attempts.len() <= t.attempts.len();
        if open.get(&r).is_none_or(more) {
            open.insert(r, n);
        }
    }
    let kept: BTreeSet<usize> = open.values().copied().collect();
    lines
        .into_iter()
        .enumerate()
        .filter(|(n, (_, t))| !t.open || kept.contains(n))
        .map(|(_, (i, mut t))| {
            if t.open {
                let end = ends[process_at(restarts, t.at_ms.saturating_sub(base))];
                for a in t.attempts.iter_mut().filter(|a| a.step.is_none()) {
                    let sent = a.at_ms.saturating_sub(base);
                    a.latency_ms = end.saturating_add(2).saturating_sub(sent);
                    a.outcome = besluitbron_core::record::AttemptOutcome::Failed;
                }
            }
            (i, t)
        })
        .collect()
}

/// From where one process's lines at `platform` (the arrival of each numbered request
/// seen, the highest number) may lack an admission: the request before the first number
/// missing, or (`ended`: a later process followed) the last request, after which requests
/// were open when it stopped. None when the process is known `whole`: killed, with every
/// admission written (what has no line admitted nothing).
fn process_blind_spot(
    platform: PlatformId,
    seen: &BTreeMap<u64, u64>,
    max: u64,
    ended: bool,
    whole: bool,
) -> Option<BlindSpot> {
    if whole {
        return None;
    }
    let first_at = seen.values().copied().min().unwrap_or(0);
    let mut spot: Option<BlindSpot> = None;
    let mut consider = |at_ms: u64, why: String| {
        if spot.as_ref().is_none_or(|s| at_ms < s.at_ms) {
            spot = Some(BlindSpot { at_ms, why });
        }
    };
    // From the first number recorded: a recording whose oldest files were rotated away
    // starts in the middle of a process.
    let from = seen.keys().next().copied().unwrap_or(0);
    if let Some(n) = (from..max).find(|n| !seen.contains_key(n)) {
        let after = seen.range(..n).next_back().map_or(first_at, |(_, &at)| at);
        consider(
            after,
            format!(
                "request {n} of {platform} is not in the recording (open when the server stopped, or dropped \
                 by its writer); its attempts charged the server's bucket"
            ),
        );
    }
    if ended {
        let at = seen.get(&max).copied().unwrap_or(first_at);
        consider(
            at,
            format!("{platform}'s requests after {max} were open when the server stopped"),
        );
    }
    spot
}

/// The server's default `MarginSecs`: what a recorded trace is replayed with unless told.
pub const SERVER_MARGIN: Duration = Duration::from_secs(1);

/// The server's default platform `TimeoutMs`: what a recorded trace is replayed with unless
/// told (its retries stop three times this after a flight's first attempt).
pub const SERVER_TIMEOUT: Duration = Duration::from_secs(15);

/// Reads and parses a JSON Lines trace file.
pub fn load_trace(path: &Path) -> Result<Workload, InputError> {
    let text = read(path)?;
    parse_trace(&text, &path.display().to_string())
}
