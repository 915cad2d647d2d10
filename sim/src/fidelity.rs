//! Whether a replay speaks for the server: the admissions a recorded trace says the
//! server made, against the admissions the simulator made replaying it (fair policy,
//! recorded latencies).
//!
//! Per limited platform, both timelines are sorted by (instant, key); they must have the
//! same length and, pair by pair, the same key within `tolerance_ms` of each other. The
//! first pair that does not is a [`Divergence`], which prints both timelines around it.
//!
//! A recording can say where it stops speaking for the server ([`BlindSpot`]: a request
//! whose line is missing, a restart); each platform is compared up to there, and the
//! result says so.
//!
//! Invariants: only limited platforms count (an unlimited lane admits nothing); the
//! recorded instants are the trace's, relative to its first call, as the replay's are.
//!
//! What this module does not do: run anything, or decide the tolerance (the caller
//! derives it from how the trace was taken; `server/tests/recording.rs` for the paused
//! clock).

use std::collections::BTreeSet;
use std::fmt;

use besluitbron_core::PlatformId;

use crate::engine::RunOutcome;
use crate::scenario::{BlindSpot, Workload};

/// One admission: when (ms from the trace's first call) and what (the key).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Admitted {
    /// The instant, in ms.
    pub at_ms: u64,
    /// The key the call asked.
    pub key: String,
}

/// Where the replay parted from the recording.
#[derive(Debug)]
pub struct Divergence {
    /// The platform.
    pub platform: PlatformId,
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
             tolerance {} ms)",
            self.platform,
            self.at,
            self.server.len(),
            self.simulator.len(),
            self.tolerance_ms
        )?;
        for (name, log) in [("server", &self.server), ("simulator", &self.simulator)] {
            writeln!(f, "{name}:")?;
            for (i, a) in log.iter().enumerate().skip(self.at.saturating_sub(3)).take(8) {
                let mark = if i == self.at { ">" } else { " " };
                writeln!(f, " {mark} #{i} t={}ms key={}", a.at_ms, a.key)?;
            }
        }
        Ok(())
    }
}

/// The limited platforms of a run.
fn limited(run: &RunOutcome) -> BTreeSet<PlatformId> {
    run.platforms
        .iter()
        .filter(|p| p.local_limit.is_some())
        .map(|p| p.id)
        .collect()
}

/// The server's admissions at `platform`, from the recording's flights.
pub fn recorded(workload: &Workload, platform: PlatformId) -> Vec<Admitted> {
    let mut out: Vec<Admitted> = workload
        .recorded
        .iter()
        .flat_map(|r| &r.flights)
        .filter(|((p, _, _), _)| *p == platform)
        .flat_map(|((_, _, key), flights)| {
            flights.iter().flatten().map(move |a| Admitted {
                at_ms: a.at_ms,
                key: key.clone(),
            })
        })
        .collect();
    out.sort();
    out
}

/// The simulator's admissions at `platform`.
pub fn replayed(run: &RunOutcome, platform: PlatformId) -> Vec<Admitted> {
    let mut out: Vec<Admitted> = run
        .admissions
        .iter()
        .filter(|a| a.platform == platform)
        .map(|a| Admitted {
            at_ms: a.at_ms,
            key: a.call.clone(),
        })
        .collect();
    out.sort();
    out
}

/// One limited platform's result: how many admissions agreed, and from where the
/// recording could not speak for the server (nothing after it was compared).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Matched {
    /// The platform.
    pub platform: PlatformId,
    /// Admissions compared and found as recorded.
    pub admissions: usize,
    /// Where the comparison stopped, when it did before the end.
    pub blind: Option<BlindSpot>,
}

impl fmt::Display for Matched {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {} admissions as recorded", self.platform, self.admissions)?;
        if let Some(b) = &self.blind {
            write!(f, "; not compared from {} ms: {}", b.at_ms, b.why)?;
        }
        Ok(())
    }
}

/// Compares every limited platform up to its [`BlindSpot`], if the recording has one;
/// returns what was matched per platform.
///
/// Before a blind spot at `B`, the server's admissions are those recorded before `B`, and
/// the simulator's are its first as many, each within the tolerance; a simulator
/// admission more, before `B − tolerance`, is a divergence too.
pub fn check(workload: &Workload, run: &RunOutcome, tolerance_ms: u64) -> Result<Vec<Matched>, Box<Divergence>> {
    let mut matched = Vec::new();
    for platform in limited(run) {
        let blind = workload.recorded.as_ref().and_then(|r| r.blind.get(&platform)).cloned();
        let mut server = recorded(workload, platform);
        let mut simulator = replayed(run, platform);
        if let Some(b) = &blind {
            server.retain(|a| a.at_ms < b.at_ms);
            let extra = simulator
                .iter()
                .filter(|a| a.at_ms + tolerance_ms < b.at_ms)
                .count()
                .max(server.len());
            simulator.truncate(extra);
        }
        let first = server
            .iter()
            .zip(&simulator)
            .position(|(a, b)| a.key != b.key || a.at_ms.abs_diff(b.at_ms) > tolerance_ms)
            .or((server.len() != simulator.len()).then_some(server.len().min(simulator.len())));
        // Two admissions within the tolerance of each other that went in the other order
        // at the server: its timers' jitter, not a different decision. The fair queue's
        // later order depends on which went first, so nothing after is compared.
        if let Some(at) = first
            && let Some(swap) = jitter_swap(&server, &simulator, at, tolerance_ms)
        {
            matched.push(Matched {
                platform,
                admissions: at,
                blind: Some(BlindSpot {
                    at_ms: swap,
                    why: format!(
                        "two admissions within {tolerance_ms} ms of each other went in the other order at the \
                         server (its timers' jitter); the fair queue's order after depends on it"
                    ),
                }),
            });
            continue;
        }
        if let Some(at) = first {
            return Err(Box::new(Divergence {
                platform,
                at,
                server,
                simulator,
                tolerance_ms,
            }));
        }
        matched.push(Matched {
            platform,
            admissions: server.len(),
            blind,
        });
    }
    Ok(matched)
}

/// Whether the first difference, at `at`, is two admissions swapped by jitter: the
/// server's admission `at` is the simulator's a little later, within the tolerance, and the
/// simulator's `at` is the server's a little later, within it too. Returns the instant.
fn jitter_swap(server: &[Admitted], simulator: &[Admitted], at: usize, tolerance_ms: u64) -> Option<u64> {
    let (s, m) = (server.get(at)?, simulator.get(at)?);
    if s.key == m.key {
        return None;
    }
    let near = |a: &Admitted, b: &Admitted| a.key == b.key && a.at_ms.abs_diff(b.at_ms) <= tolerance_ms;
    let later_in = |log: &[Admitted], x: &Admitted| {
        log[at + 1..]
            .iter()
            .take_while(|y| y.at_ms <= x.at_ms + tolerance_ms)
            .any(|y| near(x, y))
    };
    (later_in(simulator, s) && later_in(server, m)).then_some(s.at_ms.min(m.at_ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(entries: &[(u64, &str)]) -> Vec<Admitted> {
        entries
            .iter()
            .map(|&(at_ms, key)| Admitted {
                at_ms,
                key: key.to_owned(),
            })
            .collect()
    }

    /// Found in a fresh-clone soak: a retry whose backoff timer woke 5 ms late at the
    /// server went after an arrival 3 ms later, the other order than the replay's.
    #[test]
    fn regression_two_admissions_swapped_by_jitter_are_told_from_a_divergence() {
        let server = log(&[(100, "a"), (31_911, "new"), (31_913, "retry"), (32_160, "b")]);
        let simulator = log(&[(100, "a"), (31_908, "retry"), (31_911, "new"), (32_159, "b")]);
        assert_eq!(jitter_swap(&server, &simulator, 1, 250), Some(31_908));
        assert_eq!(jitter_swap(&server, &simulator, 1, 2), None, "beyond the tolerance");
        // A different decision: the replay admitted another key, 1 s apart.
        let other = log(&[(100, "a"), (32_911, "retry"), (33_911, "new"), (34_159, "b")]);
        assert_eq!(jitter_swap(&server, &other, 1, 250), None);
    }
}
