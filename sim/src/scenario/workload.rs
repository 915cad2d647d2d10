//! The workload a scenario or a trace becomes: its sessions, the calls whose instants are
//! fixed in advance, the agent loops, and what a recording brings besides; and a
//! scenario expanded into it ([`Scenario::workload`]).
//!
//! Invariants: every random choice is drawn from the workload sub-seed (the keys from a
//! stream of their own), before the run starts, so both policies see the same offered
//! sessions. What it does not do: run anything.

use std::collections::BTreeMap;
use std::time::Duration;

use besluitbron_core::identity::IdentityRule;
use besluitbron_core::record::{FollowUp, RecordedAttempt};
use besluitbron_core::{Instant, PlatformId, SessionKey, Units};
use rand::RngExt;

use crate::rng::{Component, SimRng, sim_rng};

use super::{GroupSpec, LimitOverride, PlatformSpec, Scenario, SessionSpec};

impl Scenario {
    /// Expands the scenario into the calls and agent loops it offers, drawing every
    /// random choice from the workload sub-seed of `seed`.
    pub fn workload(&self, seed: u64) -> Workload {
        let mut w = Workload::new(self.platforms.clone(), self.legacy_slip_probability);
        // Keys come from their own stream, so a scenario without keys draws exactly what
        // it drew before keys existed.
        let mut key_rng = sim_rng(seed, Component::Keys);
        for s in &self.sessions {
            self.add_session_calls(&mut w, s, &mut key_rng);
        }
        let mut rng = sim_rng(seed, Component::Workload);
        for g in &self.groups {
            add_group(&mut w, g, &mut rng, &mut key_rng);
        }
        w
    }

    /// Session `s` with its bursts, steady rates and agent loops, each call's key drawn
    /// from `key_rng` unless it names one.
    fn add_session_calls(&self, w: &mut Workload, s: &SessionSpec, key_rng: &mut SimRng) {
        let who = self.identity.who(
            Some(s.user.as_deref().unwrap_or(&s.name)),
            Some(&s.name),
            s.address.as_deref().unwrap_or(&s.name),
        );
        let key = match self.identity {
            // Each session its own caller, named as it always was.
            IdentityRule::PerSession => None,
            _ => Some(who.fairness_key()),
        };
        let session = w.add_session_as(&s.name, key, s.cancel_after_ms.map(Duration::from_millis));
        let op = s.op.clone();
        let mut keys = KeySource::of_session(s);
        // `validate` made sure every call names a listed platform.
        let default = self.session_platform(s);
        let platform = |entry: Option<PlatformId>| entry.or(default).expect("validated: a listed platform");
        for b in &s.burst {
            for _ in 0..b.calls {
                let key = b.key.clone().or_else(|| keys.next(key_rng));
                w.open_calls.push(OpenCall {
                    at: Instant::from_millis(b.at_ms),
                    session,
                    platform: platform(b.platform),
                    cost: b.cost.unwrap_or(s.cost),
                    op: op.clone(),
                    key,
                    then: None,
                    leave_after: None,
                });
            }
        }
        for st in &s.steady {
            let mut at = st.from_ms;
            while at < st.to_ms {
                let key = st.key.clone().or_else(|| keys.next(key_rng));
                w.open_calls.push(OpenCall {
                    at: Instant::from_millis(at),
                    session,
                    platform: platform(st.platform),
                    cost: st.cost.unwrap_or(s.cost),
                    op: op.clone(),
                    key,
                    then: None,
                    leave_after: None,
                });
                at += st.every_ms;
            }
        }
        for a in &s.agent {
            let fan_out = a.fan_out.unwrap_or(1).max(1);
            let steps = (0..a.calls)
                .map(|_| AgentStep {
                    platform: platform(a.platform),
                    cost: a.cost.unwrap_or(s.cost),
                    fan_out,
                    think: Duration::from_millis(a.think_ms),
                    op: op.clone(),
                    keys: (0..fan_out)
                        .map_while(|_| a.key.clone().or_else(|| keys.next(key_rng)))
                        .collect(),
                })
                .collect();
            w.agents.push(AgentPlan {
                session,
                start_at: Instant::from_millis(a.at_ms),
                steps,
            });
        }
    }
}

/// Group `g`'s agent sessions, their starts, rounds, platforms, costs, fan-outs and
/// thinking times drawn from `rng`, their keys from `key_rng`.
fn add_group(w: &mut Workload, g: &GroupSpec, rng: &mut SimRng, key_rng: &mut SimRng) {
    let total_weight: u32 = g.platforms.iter().map(|&(_, w)| w).sum();
    for n in 0..g.sessions {
        let session = w.add_session(
            &format!("{}-{n}", g.prefix),
            g.cancel_after_ms.map(Duration::from_millis),
        );
        let start_at = Instant::from_millis(rng.random_range(g.start_ms[0]..=g.start_ms[1]));
        let rounds = rng.random_range(g.calls[0]..=g.calls[1]);
        let mut steps = Vec::with_capacity(rounds as usize);
        for _ in 0..rounds {
            let mut pick = rng.random_range(0..total_weight);
            let platform = g
                .platforms
                .iter()
                .find_map(|&(p, weight)| {
                    let hit = pick < weight;
                    pick = pick.saturating_sub(weight);
                    hit.then_some(p)
                })
                .expect("the pick is below the weights' sum");
            let [lo, hi] = g.fan_out.unwrap_or([1, 1]);
            let cost = g.costs[rng.random_range(0..g.costs.len())];
            let fan_out = rng.random_range(lo..=hi);
            let keys = match g.key_pool {
                Some(n) => (0..fan_out).map(|_| pool_key(key_rng, n)).collect(),
                None => Vec::new(),
            };
            steps.push(AgentStep {
                platform,
                cost,
                fan_out,
                think: Duration::from_millis(rng.random_range(g.think_ms[0]..=g.think_ms[1])),
                op: g.op.clone(),
                keys,
            });
        }
        w.agents.push(AgentPlan {
            session,
            start_at,
            steps,
        });
    }
}

/// A session of the workload.
#[derive(Clone, Debug)]
pub struct SessionPlan {
    /// Its name as written.
    pub name: String,
    /// Its key at the scheduler (`system` becomes [`SessionKey::System`]).
    pub key: SessionKey,
    /// Queued calls are withdrawn after this long.
    pub cancel_after: Option<Duration>,
}

/// A call whose submission instant is fixed in advance (bursts, steady rates, traces).
#[derive(Clone, Debug)]
pub struct OpenCall {
    /// Submission instant.
    pub at: Instant,
    /// Index into [`Workload::sessions`].
    pub session: u32,
    /// Platform.
    pub platform: PlatformId,
    /// Requested cost.
    pub cost: Units,
    /// Operation label.
    pub op: Option<String>,
    /// What the call asks; `None`: a distinct call.
    pub key: Option<String>,
    /// The call made when this one is answered.
    pub then: Option<FollowUp>,
    /// A recorded call whose caller gave up while it waited: when, after its arrival,
    /// the replay withdraws it (if it still waits then).
    pub leave_after: Option<Duration>,
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
    /// Operation label.
    pub op: Option<String>,
    /// What each of the round's calls asks, in order; empty (or shorter than `fan_out`):
    /// the remaining calls are distinct.
    pub keys: Vec<String>,
}

/// A closed-loop session: the next round starts `think` after the previous one's answers.
#[derive(Clone, Debug)]
pub struct AgentPlan {
    /// Index into [`Workload::sessions`].
    pub session: u32,
    /// When the first round goes.
    pub start_at: Instant,
    /// The rounds.
    pub steps: Vec<AgentStep>,
}

/// Everything a run offers, independent of the policy.
#[derive(Clone, Debug)]
pub struct Workload {
    /// The run's platforms, each once, in order: a scenario's as it lists them, a
    /// trace's those its calls name, with their defaults, in the order of their ids.
    /// Reports show them in this order; a call to a platform not listed here is an error
    /// of the run.
    pub platforms: Vec<PlatformSpec>,
    /// The legacy model's slip probability.
    pub legacy_slip_probability: f64,
    /// Sessions, in the order first named.
    pub sessions: Vec<SessionPlan>,
    /// Open-loop calls; call `i` has index `open_call_index[i]` when that is set (traces:
    /// the line number), else `i`.
    pub open_calls: Vec<OpenCall>,
    /// Line numbers of trace calls.
    pub open_call_index: Vec<u64>,
    /// Agent loops; their calls are numbered after all open-loop calls, in submission order.
    pub agents: Vec<AgentPlan>,
    /// A trace the server recorded: its base instant and the platforms' recorded answers.
    pub recorded: Option<Recorded>,
}

impl Workload {
    pub(super) fn new(platforms: Vec<PlatformSpec>, legacy_slip_probability: f64) -> Workload {
        Workload {
            platforms,
            legacy_slip_probability,
            sessions: Vec::new(),
            open_calls: Vec::new(),
            open_call_index: Vec::new(),
            agents: Vec::new(),
            recorded: None,
        }
    }

    pub(super) fn add_session(&mut self, name: &str, cancel_after: Option<Duration>) -> u32 {
        self.add_session_as(name, None, cancel_after)
    }

    /// A session whose calls queue under `key` (default: its name), the fairness key
    /// the core's identity rule gives it.
    pub(super) fn add_session_as(
        &mut self,
        name: &str,
        key: Option<SessionKey>,
        cancel_after: Option<Duration>,
    ) -> u32 {
        let key = if name == "system" {
            SessionKey::System
        } else {
            key.unwrap_or_else(|| SessionKey::client(name))
        };
        self.sessions.push(SessionPlan {
            name: name.to_owned(),
            key,
            cancel_after,
        });
        u32::try_from(self.sessions.len() - 1).expect("fewer than 2^32 sessions")
    }

    /// Whether any call carries a key, so that identical requests exist (deduplication
    /// is simulated, and reports show its columns).
    pub fn has_keys(&self) -> bool {
        self.open_calls
            .iter()
            .any(|c| c.key.is_some() || c.then.as_ref().is_some_and(|t| t.key.is_some()))
            || self.agents.iter().any(|a| a.steps.iter().any(|s| !s.keys.is_empty()))
    }

    /// The first platform a call names that [`Workload::platforms`] does not list.
    pub fn unlisted_platform(&self) -> Option<PlatformId> {
        let named = self.open_calls.iter().map(|c| c.platform);
        let mut named = named.chain(self.agents.iter().flat_map(|a| a.steps.iter().map(|s| s.platform)));
        named.find(|&id| !self.platforms.iter().any(|p| p.id == id))
    }

    /// The index reported for open-loop call `i`.
    pub fn open_index(&self, i: usize) -> u64 {
        self.open_call_index.get(i).copied().unwrap_or(i as u64)
    }

    /// The highest index an open-loop call uses, plus one: agent calls start here.
    pub fn first_agent_index(&self) -> u64 {
        self.open_call_index
            .iter()
            .max()
            .map_or(self.open_calls.len() as u64, |&m| m + 1)
    }
}

/// Where a session's calls get their keys.
enum KeySource {
    None,
    One(String),
    Cycle(Vec<String>, usize),
    Pool(u32),
}

impl KeySource {
    fn of_session(s: &SessionSpec) -> KeySource {
        match (&s.key, s.keys.is_empty(), s.key_pool) {
            (Some(k), _, _) => KeySource::One(k.clone()),
            (None, false, _) => KeySource::Cycle(s.keys.clone(), 0),
            (None, true, Some(n)) => KeySource::Pool(n),
            (None, true, None) => KeySource::None,
        }
    }

    fn next(&mut self, rng: &mut crate::rng::SimRng) -> Option<String> {
        match self {
            KeySource::None => None,
            KeySource::One(k) => Some(k.clone()),
            KeySource::Cycle(keys, i) => {
                let k = keys[*i % keys.len()].clone();
                *i += 1;
                Some(k)
            }
            KeySource::Pool(n) => Some(pool_key(rng, *n)),
        }
    }
}

/// A key drawn uniformly from the pool `k0` .. `k{n-1}`.
fn pool_key(rng: &mut crate::rng::SimRng, n: u32) -> String {
    format!("k{}", rng.random_range(0..n))
}

impl Workload {
    /// Applies a what-if limit: the platform (or its text host) enforces it and
    /// BesluitBron keeps it. A platform the workload does not list joins its platforms,
    /// last, with no calls.
    pub fn set_limit(&mut self, l: LimitOverride) {
        let spec = match self.platforms.iter().position(|p| p.id == l.platform) {
            Some(i) => &mut self.platforms[i],
            None => {
                self.platforms.push(PlatformSpec::default_for(l.platform));
                self.platforms.last_mut().expect("just pushed")
            }
        };
        if l.text {
            spec.text_capacity = Some(l.capacity);
            spec.text_window_s = Some(l.window_s);
        } else {
            spec.capacity = Some(l.capacity);
            spec.window_s = Some(l.window_s);
            spec.local_capacity = Some(l.capacity);
            spec.local_window_s = Some(l.window_s);
        }
    }

    /// Drops a recording's answers: the platforms' latency models answer instead.
    pub fn forget_recorded_answers(&mut self) {
        if let Some(r) = self.recorded.as_mut() {
            r.flights.clear();
        }
    }
}

/// What a recorded trace brings besides its calls.
#[derive(Clone, Debug, Default)]
pub struct Recorded {
    /// The earliest `at_ms` of the recording: instant 0 of the replay.
    pub base_ms: u64,
    /// Per (platform, operation (default `search`), key): the attempts of each of its flights, in the
    /// order the flights' first calls arrived, instants relative to `base_ms`.
    pub flights: BTreeMap<(PlatformId, String, String), Vec<Vec<RecordedAttempt>>>,
    /// The margin the server held back of each limit's burst (its `MarginSecs`, 1 s by
    /// default: `C × margin / W` units), so the replay keeps the bucket the server kept.
    pub margin: Duration,
    /// Per platform, from where the recording may lack what the server did
    /// ([`BlindSpot`]); the fidelity check compares admissions before it.
    pub blind: BTreeMap<PlatformId, BlindSpot>,
}

/// From where a recording no longer holds everything one platform's task did, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlindSpot {
    /// The instant, ms from the recording's first call.
    pub at_ms: u64,
    /// Why, in a sentence.
    pub why: String,
}
