//! Whether a replay speaks for the server: the admissions a recorded trace says the
//! server made, against the admissions the simulator made replaying it (fair policy,
//! recorded latencies).
//!
//! Per limited upstream service — the budget the server kept, whichever of the platforms
//! that call it spent it — both timelines are sorted by (instant, key); they must have the
//! same length and, pair by pair, the same key within `tolerance_ms` of each other. The
//! first pair that does not is a [`Divergence`], which prints both timelines around it. A
//! recorded admission's service is its line's: its platform's first, or its second for a
//! line the server wrote with `op = "text"` (a call to another service than its
//! platform's first), as the replay routes it.
//!
//! A recording is compared process by process: where the server restarted (its request
//! numbers begin again) the replay restarts its paths too (`engine/restart.rs`), and each
//! process's admissions are compared with the replay's over the same stretch
//! ([`Segment`]). Within a process the recording can say from where it may lack an
//! admission ([`BlindSpot`]: a request whose line is missing, the requests a kill left
//! open); a divergence from there on is explained, and ends that process's comparison,
//! not the next one's; a service's process is blind from the earliest blind spot of any
//! platform that calls it (the request a platform lacks may have gone to any of its
//! services). Two admissions the server's timer jitter swapped are matched when the
//! replay let both go at once, and end the process's comparison when one came from the
//! queue, as does a call the server's late timer found that the replay's exact one did
//! not, or found gone where the replay's let it go just before its caller left
//! (`compare`). A service compared to the end of every process is "compared over the
//! whole recording" ([`Matched::whole`]).
//!
//! Invariants: only limited services count (an unlimited lane admits nothing); the
//! recorded instants are the trace's, relative to its first call, as the replay's are.
//!
//! What this module does not do: run anything, or decide the tolerance (the caller
//! derives it from how the trace was taken; `server/tests/recording.rs` for the paused
//! clock).

use std::fmt;

use besluitbron_core::scheduler::AdmitRule;
use besluitbron_core::{PlatformId, ServiceId};

use crate::engine::RunOutcome;
use crate::scenario::{BlindSpot, RunServices, Segment, Workload};

/// One admission: when (ms from the trace's first call), what (the key) and, where the
/// log knows it, by which rule (the replay's; a recording does not say).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Admitted {
    /// The instant, in ms.
    pub at_ms: u64,
    /// The key the call asked.
    pub key: String,
    /// The rule that admitted it, when known.
    pub rule: Option<AdmitRule>,
}

/// Where the replay parted from the recording.
#[derive(Debug)]
pub struct Divergence {
    /// The service, and the platforms that call it (`koop-zoekservice (bwb, cvdr)`).
    pub service: String,
    /// The index of the first pair that differs.
    pub at: usize,
    /// The server's timeline.
    pub server: Vec<Admitted>,
    /// The simulator's.
    pub simulator: Vec<Admitted>,
    /// The tolerance it was held to.
    pub tolerance_ms: u64,
}

impl fmt::Display for Divergence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "{}: the replay diverges from the recording at admission {} ({} recorded, {} replayed, \
             tolerance {} ms; admissions the server's jitter swapped are shown in its order)",
            self.service,
            self.at,
            self.server.len(),
            self.simulator.len(),
            self.tolerance_ms
        )?;
        for (name, log) in [("server", &self.server), ("simulator", &self.simulator)] {
            writeln!(f, "{name}:")?;
            for (i, a) in log.iter().enumerate().skip(self.at.saturating_sub(3)).take(8) {
                let mark = if i == self.at { ">" } else { " " };
                write!(f, " {mark} #{i} t={}ms key={}", a.at_ms, a.key)?;
                match a.rule {
                    Some(rule) => writeln!(f, " rule={}", rule.as_str())?,
                    None => writeln!(f)?,
                }
            }
        }
        Ok(())
    }
}

/// The limited services of a run, in its order, with their labels.
fn limited(run: &RunOutcome) -> Vec<(ServiceId, String)> {
    run.services
        .iter()
        .filter(|s| s.local_limit.is_some())
        .map(|s| (s.id, s.label()))
        .collect()
}

/// The service a call of `platform` with operation `op` went to, in `workload`.
fn service_of(
    workload: &Workload,
    services: &RunServices,
    platform: PlatformId,
    op: Option<&str>,
) -> Option<ServiceId> {
    let p = workload.platforms.iter().position(|s| s.id == platform)?;
    Some(services.services[services.service_of(p, op)].id)
}

/// The server's admissions at `service`, from the recording's flights.
pub fn recorded(workload: &Workload, service: ServiceId) -> Vec<Admitted> {
    let Ok(services) = RunServices::of(workload) else {
        return Vec::new();
    };
    let mut out: Vec<Admitted> = workload
        .recorded
        .iter()
        .flat_map(|r| &r.flights)
        .filter(|((p, op, _), _)| service_of(workload, &services, *p, Some(op)) == Some(service))
        .flat_map(|((_, _, key), flights)| {
            flights.iter().flatten().map(move |a| Admitted {
                at_ms: a.at_ms,
                key: key.clone(),
                rule: None,
            })
        })
        .collect();
    out.sort();
    out
}

/// The simulator's admissions at `service`, in the order it made them (by instant; those of
/// one millisecond as they went).
pub fn replayed(run: &RunOutcome, service: ServiceId) -> Vec<Admitted> {
    let mut out: Vec<Admitted> = run
        .admissions
        .iter()
        .filter(|a| a.service == service)
        .map(|a| Admitted {
            at_ms: a.at_ms,
            key: a.call.clone(),
            rule: Some(a.rule),
        })
        .collect();
    out.sort_by_key(|a| a.at_ms);
    out
}

/// The server's admissions of one millisecond in the order the replay made them: the
/// recording gives each send's millisecond, not their order within it (`recorded` sorts
/// them by key), so any order there is the server's as much as another. Each run of equal
/// instants in `server` is ordered by where the replay admitted the same key within
/// `tolerance_ms` (first match; unmatched ones last, in their order).
fn align_ties(server: &mut [Admitted], simulator: &[Admitted], tolerance_ms: u64) {
    let mut from = 0;
    while from < server.len() {
        let at = server[from].at_ms;
        let len = server[from..].iter().take_while(|a| a.at_ms == at).count();
        if len > 1 {
            let place = |a: &Admitted| {
                simulator
                    .iter()
                    .position(|m| m.key == a.key && m.at_ms.abs_diff(at) <= tolerance_ms)
                    .unwrap_or(usize::MAX)
            };
            server[from..from + len].sort_by_cached_key(place);
        }
        from += len;
    }
}

/// One limited service's result: how many admissions agreed, and where the comparison
/// could not speak for the server (a stretch of the recording not compared, up to the
/// next restart or the end).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matched {
    /// The service.
    pub service: ServiceId,
    /// The service and the platforms that call it, as printed (`koop-zoekservice (bwb,
    /// cvdr)`; a service of one platform named as the platform: `obv`).
    pub label: String,
    /// Admissions compared and found as recorded.
    pub admissions: usize,
    /// Of those, pairs the server's timer jitter swapped while the replay let both go at
    /// once (matched, see the module's notes).
    pub swapped: usize,
    /// Where the comparison first stopped before the end of a process, if it did.
    pub blind: Option<BlindSpot>,
    /// Every stretch not compared, in order.
    pub gaps: Vec<Gap>,
}

/// A stretch of a recording the comparison did not cover: from where the replay and the
/// recording parted for a reason the recording gives, to the next restart (the new
/// process is compared again) or the end.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// Its start, ms from the recording's first call.
    pub from_ms: u64,
    /// The next restart, if the recording has one.
    pub until_ms: Option<u64>,
    /// Why, in a sentence.
    pub why: String,
}

impl Matched {
    /// Whether every admission of the whole recording was compared (across its restarts).
    pub fn whole(&self) -> bool {
        self.gaps.is_empty()
    }
}

impl fmt::Display for Matched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} admissions as recorded", self.label, self.admissions)?;
        if self.swapped > 0 {
            write!(
                f,
                " ({} of them let go at once, in the other order at the server)",
                if self.swapped == 1 {
                    "one pair".to_owned()
                } else {
                    format!("{} pairs", self.swapped)
                }
            )?;
        }
        if self.whole() {
            return write!(f, ", compared over the whole recording");
        }
        for g in &self.gaps {
            match g.until_ms {
                Some(until) => write!(
                    f,
                    "; not compared from {} ms to the restart at {until} ms: {}",
                    g.from_ms, g.why
                )?,
                None => write!(f, "; not compared from {} ms: {}", g.from_ms, g.why)?,
            }
        }
        Ok(())
    }
}

/// Compares every limited service over each process of the recording (between its
/// restarts, [`Segment`]); returns what was matched per service.
///
/// Within a process, the server's admissions and the replay's are compared pair by pair
/// to the process's end. A divergence at or after the process's [`BlindSpot`] (less the
/// tolerance) is explained by it: the process is compared up to there, and the next is
/// compared afresh. A divergence before it, or in a process without one, is a
/// [`Divergence`].
pub fn check(workload: &Workload, run: &RunOutcome, tolerance_ms: u64) -> Result<Vec<Matched>, Box<Divergence>> {
    let mut matched = Vec::new();
    // The run's services are the workload's: it ran.
    let services = RunServices::of(workload).unwrap_or_else(|e| panic!("a workload that ran: {e}"));
    for (service, label) in limited(run) {
        let platforms: Vec<PlatformId> = services
            .index_of(service)
            .map(|i| services.services[i].platforms.clone())
            .unwrap_or_default();
        let segments = segments_of(workload, &platforms);
        let (server, simulator) = (recorded(workload, service), replayed(run, service));
        // When the server's admission's call arrived: the latest call of its key at or
        // before it.
        let calls: Vec<(u64, &str, Option<u64>)> = workload
            .open_calls
            .iter()
            .filter(|c| service_of(workload, &services, c.platform, c.op.as_deref()) == Some(service))
            .filter_map(|c| {
                let at = c.at.as_millis();
                let gone = c
                    .leave_after
                    .map(|d| at.saturating_add(u64::try_from(d.as_millis()).unwrap_or(u64::MAX)));
                Some((at, c.key.as_deref()?, gone))
            })
            .collect();
        let arrived = |a: &Admitted| {
            calls
                .iter()
                .filter(|(at, key, _)| *key == a.key && *at <= a.at_ms)
                .map(|(at, ..)| *at)
                .max()
        };
        // When the caller of the replay's admission left, if it did: the last to leave of
        // the calls of its key waiting then.
        let left = |a: &Admitted| {
            calls
                .iter()
                .filter(|(at, key, gone)| *key == a.key && *at <= a.at_ms && gone.is_some_and(|g| g >= a.at_ms))
                .filter_map(|(.., gone)| *gone)
                .max()
        };
        let seen = Seen {
            arrived: &arrived,
            left: &left,
        };
        let mut m = Matched {
            service,
            label: label.clone(),
            admissions: 0,
            swapped: 0,
            blind: None,
            gaps: Vec::new(),
        };
        for segment in &segments {
            let within = |a: &&Admitted| a.at_ms >= segment.from_ms && segment.until_ms.is_none_or(|u| a.at_ms < u);
            let mut server: Vec<Admitted> = server.iter().filter(within).cloned().collect();
            let simulator: Vec<Admitted> = simulator.iter().filter(within).cloned().collect();
            align_ties(&mut server, &simulator, tolerance_ms);
            let stop = compare_segment(&label, segment, server, simulator, tolerance_ms, &seen, &mut m)?;
            if let Some(b) = stop {
                m.blind.get_or_insert_with(|| b.clone());
                m.gaps.push(Gap {
                    from_ms: b.at_ms,
                    until_ms: segment.until_ms,
                    why: b.why,
                });
            }
        }
        matched.push(m);
    }
    Ok(matched)
}

/// The processes of the recording as service `platforms` call it: the recording's
/// stretches between restarts (the same for every platform), each blind from the earliest
/// blind spot of any of them; one stretch without a blind spot when the recording numbers
/// none of their requests.
fn segments_of(workload: &Workload, platforms: &[PlatformId]) -> Vec<Segment> {
    let lists: Vec<&Vec<Segment>> = platforms
        .iter()
        .filter_map(|p| workload.recorded.as_ref().and_then(|r| r.segments.get(p)))
        .collect();
    let Some(first) = lists.first() else {
        return vec![Segment {
            from_ms: 0,
            until_ms: None,
            blind: None,
        }];
    };
    first
        .iter()
        .enumerate()
        .map(|(i, s)| Segment {
            from_ms: s.from_ms,
            until_ms: s.until_ms,
            blind: lists
                .iter()
                .filter_map(|l| l.get(i).and_then(|s| s.blind.clone()))
                .min_by_key(|b| b.at_ms),
        })
        .collect()
}

/// One process's stretch at service `label`: the admissions compared are added to `m`;
/// where the comparison stopped, if it did, and why; or the divergence.
fn compare_segment(
    label: &str,
    segment: &Segment,
    server: Vec<Admitted>,
    mut simulator: Vec<Admitted>,
    tolerance_ms: u64,
    seen: &Seen<'_>,
    m: &mut Matched,
) -> Result<Option<BlindSpot>, Box<Divergence>> {
    let stop = match compare(&server, &mut simulator, tolerance_ms, seen) {
        Parting::Nowhere { swapped } => {
            m.admissions += server.len();
            m.swapped += swapped;
            None
        }
        Parting::Diverges(at) => {
            let when = [server.get(at), simulator.get(at)]
                .into_iter()
                .flatten()
                .map(|a| a.at_ms)
                .min()
                .unwrap_or(0);
            match &segment.blind {
                Some(b) if when.saturating_add(tolerance_ms) >= b.at_ms => {
                    m.admissions += at;
                    Some(b.clone())
                }
                _ => {
                    return Err(Box::new(Divergence {
                        service: label.to_owned(),
                        at,
                        server,
                        simulator,
                        tolerance_ms,
                    }));
                }
            }
        }
        Parting::ArrivedInJitter { at, at_ms, swapped } => {
            m.admissions += at;
            m.swapped += swapped;
            Some(BlindSpot {
                at_ms,
                why: format!(
                    "a call arrived within {tolerance_ms} ms after the replay's admission and the server, its \
                     timer waking later, admitted it first; the fair queue's order after depends on it"
                ),
            })
        }
        Parting::Swapped { at, at_ms, swapped } => {
            m.admissions += at;
            m.swapped += swapped;
            Some(BlindSpot {
                at_ms,
                why: format!(
                    "two admissions within {tolerance_ms} ms of each other went in the other order at the \
                     server (its timers' jitter), one of them from the queue; the fair queue's order after \
                     depends on it"
                ),
            })
        }
        Parting::LeftInJitter { at, at_ms, swapped } => {
            m.admissions += at;
            m.swapped += swapped;
            Some(BlindSpot {
                at_ms,
                why: format!(
                    "the replay admitted a call whose caller left within {tolerance_ms} ms after; the server, \
                     its timer waking later, found it gone and let another go; the fair queue's order after \
                     depends on it"
                ),
            })
        }
    };
    Ok(stop)
}

/// What the recording says of the calls of a service's keys: when the latest call of an
/// admission's key arrived at or before it (`arrived`), and when the caller of the
/// replay's admission left, if it did (`left`).
struct Seen<'a> {
    arrived: &'a dyn Fn(&Admitted) -> Option<u64>,
    left: &'a dyn Fn(&Admitted) -> Option<u64>,
}

/// Where two admission logs part.
#[derive(Debug, PartialEq, Eq)]
enum Parting {
    /// They do not: same keys, same order, within the tolerance, same length, once
    /// `swapped` pairs the replay let go at once are matched.
    Nowhere { swapped: usize },
    /// At this index, by another decision.
    Diverges(usize),
    /// At this index, two admissions within the tolerance that went in the other order at
    /// the server, one of them from the replay's queue; `at_ms` is the earlier instant,
    /// `swapped` the pairs matched before.
    Swapped { at: usize, at_ms: u64, swapped: usize },
    /// At this index, the server admitted a call that arrived after the replay's admission
    /// there, within the tolerance: its timer woke later than the replay's, the call was
    /// there, and the fair queue chose among more. `at_ms` is the replay's instant.
    ArrivedInJitter { at: usize, at_ms: u64, swapped: usize },
    /// At this index, the replay admitted a call whose caller left within the tolerance
    /// after, and the server never admitted it: its timer woke later than the replay's, the
    /// call was gone, and the fair queue chose another. `at_ms` is the replay's instant.
    LeftInJitter { at: usize, at_ms: u64, swapped: usize },
}

/// Compares the logs pair by pair. Two admissions within the tolerance of each other may
/// have gone in the other order at the server: its timers' jitter, not a different
/// decision. When the replay let each of them go at once (nobody waited, the bucket had
/// room), the order changed no queue: `simulator` is reordered to match and the comparison
/// goes on. (The sessions' fair-queue tags may still differ by the order; should that
/// change a later admission, the comparison reports it as a divergence — it never hides
/// one.) When one came from the queue, the fair queue's later order depends on which went
/// first, so it stops there; so it does where the server's admission is of a call that
/// arrived (`seen.arrived`) after the replay's admission at that place, within the
/// tolerance, and where the replay's admission is of a call whose caller left
/// (`seen.left`) within the tolerance after it and that the server never admitted.
fn compare(server: &[Admitted], simulator: &mut [Admitted], tolerance_ms: u64, seen: &Seen<'_>) -> Parting {
    let arrived = seen.arrived;
    let (mut from, mut swapped) = (0, 0);
    while let Some(at) = first_difference(server, simulator, from, tolerance_ms) {
        let Some(swap) = jitter_swap(server, simulator, at, tolerance_ms) else {
            // Any of the server's admissions in the replay's tolerance window from here
            // (its timer woke once for all of them) may be the call that arrived late.
            let late_arrival = |m: &Admitted| {
                server[at.min(server.len())..]
                    .iter()
                    .take_while(|s| s.at_ms <= m.at_ms.saturating_add(tolerance_ms))
                    .filter_map(arrived)
                    .any(|arrival| arrival > m.at_ms && arrival <= m.at_ms.saturating_add(tolerance_ms))
            };
            if let Some(m) = simulator.get(at)
                && late_arrival(m)
            {
                return Parting::ArrivedInJitter {
                    at,
                    at_ms: m.at_ms,
                    swapped,
                };
            }
            // The replay's call left soon after it went, and the server never let it go
            // near then: the server's later timer found it gone.
            let early_leave = |m: &Admitted| {
                (seen.left)(m).is_some_and(|gone| gone <= m.at_ms.saturating_add(tolerance_ms))
                    && !server
                        .iter()
                        .any(|s| s.key == m.key && s.at_ms.abs_diff(m.at_ms) <= tolerance_ms)
            };
            if let Some(m) = simulator.get(at)
                && early_leave(m)
            {
                return Parting::LeftInJitter {
                    at,
                    at_ms: m.at_ms,
                    swapped,
                };
            }
            return Parting::Diverges(at);
        };
        let moved = &mut simulator[at..=swap.replayed];
        if !moved.iter().all(|a| a.rule == Some(AdmitRule::Direct)) {
            return Parting::Swapped {
                at,
                at_ms: swap.at_ms,
                swapped,
            };
        }
        moved.rotate_right(1);
        from = at + 1;
        swapped += 1;
    }
    Parting::Nowhere { swapped }
}

/// The index of the first pair from `from` on that differs (another key, or instants
/// further apart than the tolerance), or of the first unpaired admission when one log is
/// longer.
fn first_difference(server: &[Admitted], simulator: &[Admitted], from: usize, tolerance_ms: u64) -> Option<usize> {
    server
        .iter()
        .zip(simulator)
        .skip(from)
        .position(|(a, b)| a.key != b.key || a.at_ms.abs_diff(b.at_ms) > tolerance_ms)
        .map(|i| i + from)
        .or((server.len() != simulator.len()).then_some(server.len().min(simulator.len())))
}

/// Two admissions the server made in the other order than the replay.
#[derive(Debug, PartialEq, Eq)]
struct Swap {
    /// The earlier of the two instants.
    at_ms: u64,
    /// The index in the replay's log of the server's admission at the difference.
    replayed: usize,
}

/// Whether the difference at `at` is two admissions swapped by jitter: the server's
/// admission `at` is the simulator's a little later, within the tolerance, and the
/// simulator's `at` is the server's a little later, within it too.
fn jitter_swap(server: &[Admitted], simulator: &[Admitted], at: usize, tolerance_ms: u64) -> Option<Swap> {
    let (s, m) = (server.get(at)?, simulator.get(at)?);
    if s.key == m.key {
        return None;
    }
    let near = |a: &Admitted, b: &Admitted| a.key == b.key && a.at_ms.abs_diff(b.at_ms) <= tolerance_ms;
    let later_in = |log: &[Admitted], x: &Admitted| {
        log[at + 1..]
            .iter()
            .take_while(|y| y.at_ms <= x.at_ms.saturating_add(tolerance_ms))
            .position(|y| near(x, y))
            .map(|i| i + at + 1)
    };
    let replayed = later_in(simulator, s)?;
    later_in(server, m)?;
    Some(Swap {
        at_ms: s.at_ms.min(m.at_ms),
        replayed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nothing known of arrivals or leaves.
    fn unseen() -> Seen<'static> {
        Seen {
            arrived: &|_| None,
            left: &|_| None,
        }
    }

    /// The arrivals `f` gives, no leaves.
    fn arrived(f: &dyn Fn(&Admitted) -> Option<u64>) -> Seen<'_> {
        Seen {
            arrived: f,
            left: &|_| None,
        }
    }

    /// A log as a recording gives it (rule unknown).
    fn log(entries: &[(u64, &str)]) -> Vec<Admitted> {
        entries
            .iter()
            .map(|&(at_ms, key)| Admitted {
                at_ms,
                key: key.to_owned(),
                rule: None,
            })
            .collect()
    }

    /// A log as the replay gives it, each admission with its rule.
    fn replay(entries: &[(u64, &str, AdmitRule)]) -> Vec<Admitted> {
        entries
            .iter()
            .map(|&(at_ms, key, rule)| Admitted {
                at_ms,
                key: key.to_owned(),
                rule: Some(rule),
            })
            .collect()
    }

    /// Found in the soak compared over its whole recording: the replay let two queued calls
    /// go in one millisecond (a then b), the server in two (a, then b a millisecond
    /// later); sorted by key within the millisecond, the replay's pair read as swapped and
    /// the comparison stopped there. The replay's are in the order it made them; the
    /// server's ties take the replay's order (the recording does not order one millisecond).
    #[test]
    fn regression_admissions_of_one_millisecond_keep_the_order_they_went_in() {
        use AdmitRule::Fair;
        let server = log(&[(63_507, "9f"), (63_508, "20"), (64_512, "x")]);
        let mut simulator = replay(&[(63_507, "9f", Fair), (63_507, "20", Fair), (64_512, "x", Fair)]);
        assert_eq!(
            compare(&server, &mut simulator, 250, &unseen()),
            Parting::Nowhere { swapped: 0 }
        );
        // The server's two in one millisecond, sorted by key: the replay's order.
        let mut tied = log(&[(63_507, "20"), (63_507, "9f"), (64_512, "x")]);
        align_ties(&mut tied, &simulator, 250);
        let keys: Vec<&str> = tied.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["9f", "20", "x"]);
        assert_eq!(
            compare(&tied, &mut simulator, 250, &unseen()),
            Parting::Nowhere { swapped: 0 }
        );
        // Two milliseconds apart at the server in the other order than the replay's, one
        // from the queue: still a swap that stops the comparison.
        let other = log(&[(63_507, "20"), (63_508, "9f"), (64_512, "x")]);
        assert!(matches!(
            compare(&other, &mut simulator, 250, &unseen()),
            Parting::Swapped { at: 0, .. }
        ));
    }

    /// Found in a fresh-clone soak: a retry whose backoff timer woke 5 ms late at the
    /// server went after an arrival 3 ms later, the other order than the replay's.
    #[test]
    fn regression_two_admissions_swapped_by_jitter_are_told_from_a_divergence() {
        let server = log(&[(100, "a"), (31_911, "new"), (31_913, "retry"), (32_160, "b")]);
        let simulator = log(&[(100, "a"), (31_908, "retry"), (31_911, "new"), (32_159, "b")]);
        let swap = Swap {
            at_ms: 31_908,
            replayed: 2,
        };
        assert_eq!(jitter_swap(&server, &simulator, 1, 250), Some(swap));
        assert_eq!(jitter_swap(&server, &simulator, 1, 2), None, "beyond the tolerance");
        // A different decision: the replay admitted another key, 1 s apart.
        let other = log(&[(100, "a"), (32_911, "retry"), (33_911, "new"), (34_159, "b")]);
        assert_eq!(jitter_swap(&server, &other, 1, 250), None);
    }

    /// Found in a fresh-clone soak: obv's comparison stopped at 0.4 s, six admissions in,
    /// on two calls of the start-up burst that the bucket let go at once, in the other order
    /// at the server. Such a swap changes no queue: the comparison goes on.
    #[test]
    fn regression_a_swap_of_two_direct_admissions_is_matched_and_compared_on() {
        use AdmitRule::{Direct, Fair};
        let server = log(&[(10, "a"), (420, "x"), (421, "y"), (422, "z"), (1_500, "q")]);
        let mut simulator = replay(&[
            (10, "a", Direct),
            (419, "y", Direct),
            (420, "z", Direct),
            (421, "x", Direct),
            (1_500, "q", Fair),
        ]);
        assert_eq!(
            compare(&server, &mut simulator, 250, &unseen()),
            Parting::Nowhere { swapped: 1 }
        );
        let keys: Vec<&str> = simulator.iter().map(|a| a.key.as_str()).collect();
        assert_eq!(keys, ["a", "x", "y", "z", "q"], "reordered to the server's");

        // After such a swap, a later difference is still found.
        let mut later = replay(&[
            (10, "a", Direct),
            (419, "y", Direct),
            (420, "z", Direct),
            (421, "x", Direct),
        ]);
        later.extend(replay(&[(2_600, "q", Fair)]));
        assert_eq!(compare(&server, &mut later, 250, &unseen()), Parting::Diverges(4));

        // One of the two from the queue: its order after depends on it, so it stops there.
        let mut queued = replay(&[
            (10, "a", Direct),
            (419, "y", Fair),
            (420, "x", Direct),
            (422, "z", Direct),
            (1_500, "q", Fair),
        ]);
        assert_eq!(
            compare(&server, &mut queued, 250, &unseen()),
            Parting::Swapped {
                at: 1,
                at_ms: 419,
                swapped: 0
            }
        );
    }

    /// Found in a soak: ob's bucket had a unit at 19,174 ms and the replay gave it to the
    /// only waiter (queued since 17,064 ms); the server's timer woke at 19,176 ms, after a
    /// new session's call arrived at 19,175 ms, and the fair queue chose the newcomer.
    #[test]
    fn regression_a_call_arriving_within_the_servers_timer_jitter_is_a_listed_cause() {
        use AdmitRule::{Direct, Fair};
        let server = log(&[(19_084, "a"), (19_176, "new"), (20_176, "waiter")]);
        let simulator = replay(&[(19_084, "a", Direct), (19_174, "waiter", Fair), (20_174, "new", Fair)]);
        let arrivals = |a: &Admitted| match a.key.as_str() {
            "new" => Some(19_175),
            "waiter" => Some(17_064),
            _ => Some(19_084),
        };
        let listed = Parting::ArrivedInJitter {
            at: 1,
            at_ms: 19_174,
            swapped: 0,
        };
        assert_eq!(
            compare(&server, &mut simulator.clone(), 250, &arrived(&arrivals)),
            listed
        );
        // The newcomer there before the replay's admission: a different decision.
        let earlier = |a: &Admitted| if a.key == "new" { Some(19_000) } else { Some(17_064) };
        assert_eq!(
            compare(&server, &mut simulator.clone(), 250, &arrived(&earlier)),
            Parting::Diverges(1)
        );
        // Arrived after the tolerance: a different decision too.
        assert_eq!(
            compare(&server, &mut simulator.clone(), 0, &arrived(&arrivals)),
            Parting::Diverges(1)
        );
    }

    /// Found re-recording the soak with bwb and cvdr at one zoekservice: the replay gave
    /// the shared bucket's unit at 138,181 ms to a cvdr call whose caller left at 138,184
    /// ms; the server's timer woke at 138,213 ms, found it gone and let a bwb call go.
    #[test]
    fn regression_a_call_leaving_within_the_servers_timer_jitter_is_a_listed_cause() {
        use AdmitRule::Fair;
        let server = log(&[(137_213, "a"), (138_213, "bwb"), (139_212, "next")]);
        let simulator = replay(&[(137_181, "a", Fair), (138_181, "cvdr", Fair), (139_181, "bwb", Fair)]);
        let gone = |a: &Admitted| (a.key == "cvdr").then_some(138_184);
        let seen = Seen {
            arrived: &|_| Some(100_000),
            left: &gone,
        };
        assert_eq!(
            compare(&server, &mut simulator.clone(), 250, &seen),
            Parting::LeftInJitter {
                at: 1,
                at_ms: 138_181,
                swapped: 0
            }
        );
        // Left beyond the tolerance: the server would have found it there, a different
        // decision.
        let later = |a: &Admitted| (a.key == "cvdr").then_some(138_500);
        let seen = Seen {
            arrived: &|_| Some(100_000),
            left: &later,
        };
        assert_eq!(
            compare(&server, &mut simulator.clone(), 250, &seen),
            Parting::Diverges(1)
        );
        // The server admitted it too, near then: not this cause.
        let both = log(&[(137_213, "a"), (138_213, "bwb"), (138_300, "cvdr")]);
        let seen = Seen {
            arrived: &|_| Some(100_000),
            left: &gone,
        };
        assert_eq!(compare(&both, &mut simulator.clone(), 250, &seen), Parting::Diverges(1));
    }
}
