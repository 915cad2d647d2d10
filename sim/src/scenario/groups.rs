//! Generated sessions (`[[group]]`): each session one agent loop, its rounds drawn from
//! the workload seed as the run reaches them, so a group costs a few words a session or
//! nothing at all, never a list of its calls.
//!
//! Two ways to draw, fixed by the group:
//! - **in turn** (a group without `rhythm`): every session's start, its number of rounds
//!   and each round's draws come from the workload stream (keys from the keys stream),
//!   session after session, exactly as they always did. A pass over the group before the
//!   run keeps, per session with at least one round, its start and both streams' state
//!   where its rounds begin ([`SharedStart`], a few words); the run draws each round from
//!   there when the round begins.
//! - **by rhythm** (`rhythm = { daily = [...], weekly = [...] }`): sessions start by the
//!   hour of the day and the day of the week and are numbered in the order they start.
//!   Their starts come one by one in ascending order ([`RhythmStarts`]: order statistics
//!   of the rhythm's distribution, nothing kept per session), and each session draws its
//!   rounds and keys from a stream of its own ([`Component::Session`]).
//!
//! Invariants: a session's rounds are the same whether they are drawn before the run or
//! as it goes (the streams' states are taken where the session's first round begins);
//! sessions come out in the order of (start, number), the order their first rounds run
//! in; nothing here depends on the policy.
//!
//! What this module does not do: run anything, or keep a session's calls.

use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::{Instant, PlatformId, Units};
use rand::RngExt;
use serde::Deserialize;

use crate::rng::{Component, SimRng, sim_rng};

/// Many generated agent sessions, each one conversation of `calls` rounds.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct GroupSpec {
    /// Sessions are named `<prefix>-<n>`.
    pub prefix: String,
    /// How many sessions.
    pub sessions: u32,
    /// Each session starts uniformly in `[start_ms[0], start_ms[1]]`.
    pub start_ms: [u64; 2],
    /// Rounds per session, uniform in the inclusive range.
    pub calls: [u32; 2],
    /// Think time after each round, uniform in the inclusive range.
    pub think_ms: [u64; 2],
    /// Calls per round, uniform in the inclusive range (default 1).
    pub fan_out: Option<[u32; 2]>,
    /// Relative weight of each platform; each round picks one (in the order of their
    /// streams, [`crate::ids::deserialize_weights`], so a pick draws as it always has).
    #[serde(deserialize_with = "crate::ids::deserialize_weights")]
    pub platforms: Vec<(PlatformId, u32)>,
    /// Costs to pick from, uniformly, per call.
    pub costs: Vec<Units>,
    /// Operation label.
    pub op: Option<String>,
    /// A queued call still waiting this long is withdrawn.
    pub cancel_after_ms: Option<u64>,
    /// Each call asks a key drawn uniformly from `k0` .. `k{N-1}` (seeded); default no keys.
    pub key_pool: Option<u32>,
    /// Sessions start by the hour of the day and the day of the week instead of
    /// uniformly, numbered in the order they start; each draws from a stream of its own.
    pub rhythm: Option<RhythmSpec>,
}

/// One round of an agent loop.
#[derive(Clone, Debug)]
pub struct AgentStep {
    /// Platform of the round's calls.
    pub platform: PlatformId,
    /// Cost of each call.
    pub cost: Units,
    /// Calls sent at once.
    pub fan_out: u32,
    /// Think time after the last answer.
    pub think: Duration,
    /// Operation label (shared by every call that carries it).
    pub op: Option<Arc<str>>,
    /// What each of the round's calls asks, in order; empty (or shorter than `fan_out`):
    /// the remaining calls are distinct.
    pub keys: Vec<String>,
}

/// A key drawn uniformly from the pool `k0` .. `k{n-1}`.
pub(super) fn pool_key(rng: &mut crate::rng::SimRng, n: u32) -> String {
    format!("k{}", rng.random_range(0..n))
}

/// A day in milliseconds.
const DAY_MS: u64 = 86_400_000;
/// An hour in milliseconds: the rhythm's resolution.
const HOUR_MS: u64 = 3_600_000;

/// When a group's sessions start, by the hour of the day and the day of the week
/// (`rhythm = { daily = [24 weights], weekly = [7 weights] }`): the start density in an
/// hour is proportional to `daily[hour of day] × weekly[day of week]`, the run's instant 0
/// being the start of day 0 (a Monday, if you like) at midnight.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RhythmSpec {
    /// A weight per hour of the day, midnight first (24 values, not all zero).
    pub daily: Vec<f64>,
    /// A weight per day of the week, day 0 first (7 values, not all zero); default all
    /// equal.
    #[serde(default)]
    pub weekly: Vec<f64>,
}

impl RhythmSpec {
    /// Why the rhythm cannot be used, if it cannot.
    pub fn invalid(&self) -> Option<String> {
        let weights_ok = |w: &[f64]| w.iter().all(|x| x.is_finite() && *x >= 0.0) && w.iter().any(|x| *x > 0.0);
        if self.daily.len() != 24 || !weights_ok(&self.daily) {
            return Some("rhythm.daily needs 24 weights, none negative, not all zero".into());
        }
        if !self.weekly.is_empty() && (self.weekly.len() != 7 || !weights_ok(&self.weekly)) {
            return Some("rhythm.weekly needs 7 weights, none negative, not all zero".into());
        }
        None
    }

    /// The weight of the hour that begins at `hour_ms`.
    fn weight(&self, hour_ms: u64) -> f64 {
        let hour = usize::try_from((hour_ms / HOUR_MS) % 24).unwrap_or(0);
        let day = usize::try_from((hour_ms / DAY_MS) % 7).unwrap_or(0);
        self.daily[hour] * self.weekly.get(day).copied().unwrap_or(1.0)
    }
}

/// How a group's rounds are drawn: its platform weights, costs, fan-out, think times and
/// keys.
#[derive(Clone, Debug)]
pub struct RoundDraw {
    platforms: Vec<(PlatformId, u32)>,
    total_weight: u32,
    calls: [u32; 2],
    think_ms: [u64; 2],
    fan_out: [u32; 2],
    costs: Vec<Units>,
    op: Option<Arc<str>>,
    key_pool: Option<u32>,
}

impl RoundDraw {
    fn of(g: &GroupSpec) -> RoundDraw {
        RoundDraw {
            platforms: g.platforms.clone(),
            total_weight: g.platforms.iter().map(|&(_, w)| w).sum(),
            calls: g.calls,
            think_ms: g.think_ms,
            fan_out: g.fan_out.unwrap_or([1, 1]),
            costs: g.costs.clone(),
            op: g.op.as_deref().map(Arc::from),
            key_pool: g.key_pool,
        }
    }

    /// The platforms a round may call.
    pub fn platforms(&self) -> impl Iterator<Item = PlatformId> + '_ {
        self.platforms.iter().filter(|(_, w)| *w > 0).map(|(p, _)| *p)
    }

    /// Whether the rounds' calls carry keys.
    pub fn keyed(&self) -> bool {
        self.key_pool.is_some()
    }

    /// A session's number of rounds.
    fn rounds(&self, rng: &mut SimRng) -> u32 {
        rng.random_range(self.calls[0]..=self.calls[1])
    }

    /// One round, in the draw order groups always had: platform, cost, fan-out, its
    /// calls' keys (from `keys`), think time.
    pub fn round(&self, rng: &mut SimRng, keys: &mut SimRng) -> AgentStep {
        let mut pick = rng.random_range(0..self.total_weight);
        let platform = self
            .platforms
            .iter()
            .find_map(|&(p, weight)| {
                let hit = pick < weight;
                pick = pick.saturating_sub(weight);
                hit.then_some(p)
            })
            .expect("the pick is below the weights' sum");
        let [lo, hi] = self.fan_out;
        let cost = self.costs[rng.random_range(0..self.costs.len())];
        let fan_out = rng.random_range(lo..=hi);
        let keys = match self.key_pool {
            Some(n) => (0..fan_out).map(|_| pool_key(keys, n)).collect(),
            None => Vec::new(),
        };
        AgentStep {
            platform,
            cost,
            fan_out,
            think: Duration::from_millis(rng.random_range(self.think_ms[0]..=self.think_ms[1])),
            op: self.op.clone(),
            keys,
        }
    }
}

/// A session of a group drawn in turn: where its rounds begin in both streams.
#[derive(Clone, Debug)]
pub struct SharedStart {
    /// Its number in the group.
    pub n: u32,
    /// Its place among the group's sessions that have a round (its first round's event
    /// comes in this order among equal starts).
    pub ordinal: u32,
    /// When its first round goes.
    pub at: Instant,
    /// How many rounds.
    pub rounds: u32,
    /// The workload stream where its first round's draws begin.
    pub rng: SimRng,
    /// The keys stream there (a group with a key pool).
    pub keys: Option<SimRng>,
}

/// The starts of a group with a rhythm, in ascending order, one at a time: the k-th
/// start is the k-th smallest of `sessions` draws from the rhythm's distribution over
/// `[from, to]`, made as ascending uniform order statistics (each the previous plus a
/// draw of the remaining sessions' minimum above it) mapped through the distribution's
/// inverse, so no list of starts is ever kept.
#[derive(Clone, Debug)]
pub struct RhythmStarts {
    /// Sessions still to start.
    left: u32,
    /// The last uniform order statistic, in [0, 1).
    x: f64,
    rng: SimRng,
    /// The hours of `[from, to]`: (start ms, length ms, weight so far including it).
    hours: Vec<(u64, u64, f64)>,
    cursor: usize,
}

impl RhythmStarts {
    fn new(rhythm: &RhythmSpec, [from, to]: [u64; 2], sessions: u32, rng: SimRng) -> RhythmStarts {
        let mut hours = Vec::new();
        let mut total = 0.0;
        let mut at = from;
        while at < to {
            let end = ((at / HOUR_MS) + 1).saturating_mul(HOUR_MS).min(to);
            total += rhythm.weight(at) * (end - at) as f64;
            hours.push((at, end - at, total));
            at = end;
        }
        if hours.is_empty() || total <= 0.0 {
            // A range of one instant, or only hours of weight zero: every session at `from`.
            hours = vec![(from, 0, 1.0)];
        }
        RhythmStarts {
            left: sessions,
            x: 0.0,
            rng,
            hours,
            cursor: 0,
        }
    }

    /// The next start, or `None` when every session has started.
    pub fn next_start(&mut self) -> Option<Instant> {
        if self.left == 0 {
            return None;
        }
        // The minimum of `left` uniforms on (x, 1): x + (1 − x)(1 − V^(1/left)).
        let v: f64 = 1.0 - self.rng.random::<f64>();
        let step = 1.0 - v.powf(1.0 / f64::from(self.left));
        self.x = (self.x + (1.0 - self.x) * step).min(1.0);
        self.left -= 1;
        let total = self.hours.last().map_or(1.0, |h| h.2);
        let target = self.x * total;
        while self.cursor + 1 < self.hours.len() && self.hours[self.cursor].2 <= target {
            self.cursor += 1;
        }
        let (start, len, upto) = self.hours[self.cursor];
        let before = self.cursor.checked_sub(1).map_or(0.0, |i| self.hours[i].2);
        let weight = upto - before;
        let into = if weight > 0.0 {
            ((target - before) / weight).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let ms = start + ((len as f64) * into).floor() as u64;
        Some(Instant::from_millis(ms.min(start + len.saturating_sub(1))))
    }
}

/// How a group's sessions start.
#[derive(Clone, Debug)]
pub enum Starts {
    /// Drawn in turn: the sessions with a round, in the order of (start, number).
    Shared(Vec<SharedStart>),
    /// By a rhythm: ascending, numbered in that order; each session draws from its own
    /// stream.
    Rhythm(RhythmStarts),
}

/// A generated group of a workload.
#[derive(Clone, Debug)]
pub struct GroupPlan {
    /// Sessions are named `<prefix>-<n>`.
    pub prefix: String,
    /// The group's index among the scenario's groups (its sessions' own streams).
    pub index: u16,
    /// The workload index of its session number 0.
    pub first_session: u32,
    /// How many sessions.
    pub sessions: u32,
    /// A queued call still waiting this long is withdrawn.
    pub cancel_after: Option<Duration>,
    /// How its rounds are drawn.
    pub draw: RoundDraw,
    /// When its sessions start.
    pub starts: Starts,
    /// The root seed (a rhythm group's sessions' streams).
    seed: u64,
}

/// One session of a group, as the run starts it.
#[derive(Debug)]
pub struct GroupSession {
    /// Its number in the group.
    pub n: u32,
    /// Its place in the order first rounds run in among equal starts.
    pub ordinal: u32,
    /// When its first round goes.
    pub at: Instant,
    /// How many rounds.
    pub rounds: u32,
    /// Where its rounds' draws come from.
    pub rng: SimRng,
    /// Where its calls' keys come from.
    pub keys: SimRng,
}

impl GroupPlan {
    /// The plan of group `spec` (the scenario's `index`-th), whose sessions begin at
    /// workload index `first_session`. A group drawn in turn takes its draws from `rng`
    /// and `keys` (advancing them past the whole group, as the run would); a group with a
    /// rhythm draws from streams of its own under `seed`.
    pub fn new(
        spec: &GroupSpec,
        index: u16,
        first_session: u32,
        seed: u64,
        rng: &mut SimRng,
        keys: &mut SimRng,
    ) -> GroupPlan {
        let draw = RoundDraw::of(spec);
        let starts = match &spec.rhythm {
            Some(rhythm) => Starts::Rhythm(RhythmStarts::new(
                rhythm,
                spec.start_ms,
                spec.sessions,
                sim_rng(
                    seed,
                    Component::Session {
                        group: index,
                        n: u32::MAX,
                    },
                ),
            )),
            None => {
                let mut list = Vec::new();
                for n in 0..spec.sessions {
                    let at = Instant::from_millis(rng.random_range(spec.start_ms[0]..=spec.start_ms[1]));
                    let rounds = draw.rounds(rng);
                    if rounds > 0 {
                        list.push(SharedStart {
                            n,
                            ordinal: u32::try_from(list.len()).expect("fewer than 2^32 sessions"),
                            at,
                            rounds,
                            rng: rng.clone(),
                            keys: draw.keyed().then(|| keys.clone()),
                        });
                    }
                    for _ in 0..rounds {
                        draw.round(rng, keys);
                    }
                }
                list.sort_by_key(|s| (s.at, s.n));
                list.shrink_to_fit();
                Starts::Shared(list)
            }
        };
        GroupPlan {
            prefix: spec.prefix.clone(),
            index,
            first_session,
            sessions: spec.sessions,
            cancel_after: spec.cancel_after_ms.map(Duration::from_millis),
            draw,
            starts,
            seed,
        }
    }

    /// How many of its sessions run a first round (and so take a place in the run's
    /// order of first events).
    pub fn started(&self) -> u32 {
        match &self.starts {
            Starts::Shared(list) => u32::try_from(list.len()).expect("fewer than 2^32 sessions"),
            Starts::Rhythm(_) => self.sessions,
        }
    }

    /// The name of its session number `n`.
    pub fn name(&self, n: u32) -> String {
        format!("{}-{n}", self.prefix)
    }

    /// Its sessions in the order their first rounds run, drawn as they are asked for.
    pub fn sessions_in_order(&self) -> GroupCursor<'_> {
        GroupCursor {
            group: self,
            next: 0,
            rhythm: match &self.starts {
                Starts::Rhythm(r) => Some(r.clone()),
                Starts::Shared(_) => None,
            },
        }
    }
}

/// A group's sessions, one at a time in the order their first rounds run.
#[derive(Debug)]
pub struct GroupCursor<'g> {
    group: &'g GroupPlan,
    next: u32,
    rhythm: Option<RhythmStarts>,
}

impl GroupCursor<'_> {
    /// The next session to start, or `None`.
    pub fn next_session(&mut self) -> Option<GroupSession> {
        let g = self.group;
        let out = match (&g.starts, self.rhythm.as_mut()) {
            (Starts::Shared(list), _) => {
                let s = list.get(usize::try_from(self.next).ok()?)?;
                GroupSession {
                    n: s.n,
                    ordinal: s.ordinal,
                    at: s.at,
                    rounds: s.rounds,
                    rng: s.rng.clone(),
                    // Without a key pool no key is drawn: any stream will do.
                    keys: s.keys.clone().unwrap_or_else(|| s.rng.clone()),
                }
            }
            (Starts::Rhythm(_), Some(starts)) => {
                let at = starts.next_start()?;
                let n = self.next;
                let mut rng = sim_rng(g.seed, Component::Session { group: g.index, n });
                let rounds = g.draw.rounds(&mut rng);
                GroupSession {
                    n,
                    ordinal: n,
                    at,
                    rounds,
                    keys: rng.clone(),
                    rng,
                }
            }
            (Starts::Rhythm(_), None) => return None,
        };
        self.next += 1;
        Some(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat() -> RhythmSpec {
        RhythmSpec {
            daily: vec![1.0; 24],
            weekly: Vec::new(),
        }
    }

    #[test]
    fn rhythm_starts_ascend_stay_in_range_and_number_every_session() {
        let rng = sim_rng(3, Component::Session { group: 0, n: u32::MAX });
        let mut starts = RhythmStarts::new(&flat(), [1_000, 2 * DAY_MS], 5_000, rng);
        let mut last = Instant::ZERO;
        let mut n = 0;
        while let Some(at) = starts.next_start() {
            assert!(at >= last, "ascending");
            assert!(at.as_millis() >= 1_000 && at.as_millis() < 2 * DAY_MS, "{at}");
            last = at;
            n += 1;
        }
        assert_eq!(n, 5_000);
    }

    /// With all the weight on one hour of the day, every start falls in that hour; with a
    /// flat rhythm, each half of the range gets about half of the sessions.
    #[test]
    fn rhythm_starts_follow_the_weights() {
        let mut daily = vec![0.0; 24];
        daily[9] = 1.0;
        let spec = RhythmSpec {
            daily,
            weekly: Vec::new(),
        };
        let rng = sim_rng(1, Component::Session { group: 0, n: u32::MAX });
        let mut starts = RhythmStarts::new(&spec, [0, 3 * DAY_MS], 2_000, rng);
        while let Some(at) = starts.next_start() {
            assert_eq!((at.as_millis() / HOUR_MS) % 24, 9, "{at}");
        }
        let rng = sim_rng(2, Component::Session { group: 0, n: u32::MAX });
        let mut starts = RhythmStarts::new(&flat(), [0, 2 * DAY_MS], 10_000, rng);
        let mut first_day = 0;
        while let Some(at) = starts.next_start() {
            first_day += u32::from(at.as_millis() < DAY_MS);
        }
        assert!((4_700..5_300).contains(&first_day), "{first_day}");
    }

    #[test]
    fn a_rhythm_without_weight_is_refused() {
        let spec = RhythmSpec {
            daily: vec![0.0; 24],
            weekly: Vec::new(),
        };
        assert!(spec.invalid().is_some());
        assert!(flat().invalid().is_none());
        let short = RhythmSpec {
            daily: vec![1.0; 23],
            weekly: Vec::new(),
        };
        assert!(short.invalid().is_some());
    }
}
