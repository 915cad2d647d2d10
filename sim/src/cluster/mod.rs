//! Several replicas behind one load balancer, on virtual time: one budget group, one owner.
//!
//! The replicas serve one budget group, as the server's do: the scenario's platform and
//! those that search the same service (`shared_with`), one path with the service's limit,
//! one lease keyed by the group, so one owner spends the service's budget for them all.
//!
//! Each replica has its own drifting clock and its own [`Lease`] (the core's handover
//! rules) against a simulated lease engine with a TTL, which can restart (losing its keys
//! and its usage checkpoint), lose the key, or pause. Each replica's process runs the
//! platform's [`PlatformPath`] — the very type the single-process simulator and the
//! server drive — inside the core's [`Shell`], as the server's platform task does: at
//! [`LeaseEvent::StartAdmitting`] the shell takes over (an empty bucket and the last
//! usage checkpoint) and admits while the lease allows; when ownership ends it hands its
//! waiting calls back to be asked again, while the path, its buffer and the calls already
//! out stay. Every other replica forwards the platform requests that land on it to the
//! owner (a delay each way), and re-routes a request whose owner lost the lease or died.
//! Replicas crash (and restart as a new process over the same buffer), pause, or shut
//! down gracefully; an admission the lease no longer allows when it is sent (after the
//! connection set-up) is dropped ([`Lease::may_send`], through [`Shell::confirm_send`]).
//!
//! The checker runs after every event and proves: at most one replica may admit at any
//! event instant (by each replica's own clock, paused ones included); every call sent is
//! allowed by its sender's lease; at most one upstream call per key is out at once across
//! all replicas; the service's own bucket (true time) never refused a call as over its
//! limit, whichever platform's; and at the end every call has ended exactly once.
//!
//! Rooms: the loop, routing and the owners' paths here; each event's handling in
//! `events.rs`; the scenario in `scenario.rs`; the lease, ownership and faults in
//! `lease.rs`; what a run gives back in `outcome.rs`.
//!
//! What this module does not do: model the internal HTTP endpoint or Redis itself
//! (their timing is a delay), or the client limits and the MCP sessions.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, BinaryHeap};
use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::ServiceId;
use besluitbron_core::cache::{CacheKey, CachePolicy, CacheVersion, DataClass, MemoryStore};
use besluitbron_core::cluster::{Lease, LeaseAnswer, LeaseCall, LeaseConfig, UsageCheckpoint};
use besluitbron_core::dedup::WaiterId;
use besluitbron_core::path::{
    Action, Arrival, Attempt, Delivery, Lane, PathConfig, PendingSend, PlatformPath, Request, Served, Shell,
    StoreBuffer,
};
use besluitbron_core::{Instant, LimitConfig, PlatformId, SchedulerConfig, SessionKey, Units, WallTime};
use rand::RngExt;

use crate::engine::AdmissionLine;
use crate::group_buffer::GroupBuffer;
use crate::platform::{Answer, Host, Refusal, SimService};
use crate::rng::{Component, SimRng, sim_rng};
use crate::scenario::LimitModel;

mod events;
mod lease;
mod outcome;
mod scenario;

use outcome::secs;
pub use outcome::{CallEnd, ClusterAdmission, ClusterOutcome, Latencies, Ownership};
pub use scenario::{Balancer, ClusterFault, ClusterScenario, ScriptedCall};

const MS: u64 = 1_000_000;
/// A follower waits this long before asking again when no owner admits (the engine names
/// none, or itself during its start wait, or the replica it asked refused the call).
pub const REROUTE_BACKOFF_MS: u64 = 250;
const REROUTE_BACKOFF: u64 = REROUTE_BACKOFF_MS * MS;
/// A follower gives a forward up (the owner died) after this long.
const FORWARD_TIMEOUT: u64 = 2_000 * MS;
/// A client whose replica's state is gone (it died, or the call waited at its own
/// replica when that replica's ownership ended) asks again after this long.
pub const CLIENT_RETRY_MS: u64 = 1_000;
const CLIENT_RETRY: u64 = CLIENT_RETRY_MS * MS;
/// The shell's time-out for a lease request.
const LEASE_TIMEOUT: u64 = 1_000 * MS;

/// A replica's path in the core's shell (as the server's task of a budget group): waiters
/// are calls (their id is the waiter id).
type SimShell = Shell<GroupBuffer, (), (), ()>;

/// An attempt a replica's shell admitted, before it is sent.
type SimSend = PendingSend<Arc<[u8]>, ()>;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    /// A session's next call reaches the load balancer.
    Arrive {
        call: u64,
        era: u32,
    },
    /// A call is routed at a replica (its origin).
    Route {
        call: u64,
        at: usize,
        era: u32,
    },
    /// A forwarded call reaches a replica (the owner, as the follower believed).
    Forwarded {
        call: u64,
        to: usize,
        era: u32,
    },
    /// An owner's answer (or refusal) for a call reaches the call's origin.
    Reply {
        call: u64,
        era: u32,
        end: CallEnd,
    },
    /// A forward had no answer (its target died): route again.
    ForwardTimeout {
        call: u64,
        era: u32,
    },
    GiveUp(u64),
    LeaseWake(usize),
    EngineApply {
        replica: usize,
        era: u32,
        id: u64,
        call: LeaseCall,
        token: u64,
        answer_back: bool,
        sent: u64,
    },
    LeaseAnswer {
        replica: usize,
        era: u32,
        id: u64,
        answer: LeaseAnswer,
    },
    PathWake {
        replica: usize,
        era: u32,
    },
    OwnerSend {
        replica: usize,
        era: u32,
        attempt: Attempt,
    },
    PlatformAnswer {
        replica: usize,
        era: u32,
        attempt: Attempt,
        /// The question: its platform's place in the group, its key id.
        key_id: (usize, u64),
        remaining: Option<(Units, Duration)>,
    },
    Fault(usize),
    Restart(usize),
    Resume(usize),
}

#[derive(Clone, Debug)]
struct Call {
    /// Its session: an index into `Sim::session_names`.
    session: u32,
    /// A scripted call's replica (else the load balancer's choice).
    replica: Option<usize>,
    key: CacheKey,
    origin: usize,
    submitted: u64,
    /// Where it waits as a path's waiter: (replica, generation).
    at_owner: Option<(usize, u32)>,
    /// Bumped on every routing: a stale time-out or reply is ignored.
    era: u32,
}

struct Replica {
    off_ns: u64,
    d: i64,
    alive: bool,
    /// The process generation: a restart is a new process with a new lease.
    era: u32,
    paused_until: u64,
    lease: Lease,
    /// The process's path, in the core's shell: it admits while it has taken over the
    /// lease's acquisition; its buffer (the redb file) survives a crash and a restart.
    shell: SimShell,
    /// Ownership record index of the current acquisition.
    owning: Option<usize>,
    /// The pending wake of the path and of the lease (one each; later ones are stale).
    path_wake: Option<u64>,
    lease_wake: Option<u64>,
}

impl Replica {
    fn local(&self, t: u64) -> Instant {
        let l = i128::from(t) * (1_000_000 + i128::from(self.d)) / 1_000_000;
        Instant::from_nanos(self.off_ns + u64::try_from(l).unwrap_or(0))
    }

    fn true_at(&self, l: Instant) -> u64 {
        let since = i128::from(l.as_nanos().saturating_sub(self.off_ns));
        let den = 1_000_000 + i128::from(self.d);
        let mut t = u64::try_from((since * 1_000_000 + den - 1) / den).unwrap_or(u64::MAX);
        while self.local(t) < l {
            t += 1;
        }
        t
    }
}

struct Engine {
    /// (replica, generation, token, expiry true ns).
    key: Option<(usize, u32, u64, u64)>,
    checkpoint: Option<UsageCheckpoint>,
    down_until: u64,
    paused_until: u64,
}

struct Sim {
    s: ClusterScenario,
    name: String,
    now: u64,
    seq: u64,
    heap: BinaryHeap<Reverse<(u64, u64, Ev)>>,
    replicas: Vec<Replica>,
    engine: Engine,
    /// The group's platforms, and the service they search.
    platforms: Vec<PlatformId>,
    service: ServiceId,
    upstream_service: SimService,
    host: Host,
    /// The calls under way, by id (an ended call is gone: an event for it is stale).
    calls: BTreeMap<u64, Call>,
    /// Calls made so far: the next call's id.
    made: u64,
    /// How the ended calls ended, and how long the answered ones took.
    ends: BTreeMap<CallEnd, u64>,
    latencies: Latencies,
    /// Every admission sent, when the run keeps them ([`run_cluster`]).
    keep_admissions: bool,
    /// Each session's name: `s<i>` for the closed loops, then the script's.
    session_names: Vec<String>,
    /// Calls left per session.
    left: Vec<u32>,
    /// Calls made and not yet ended.
    open_calls: u64,
    keys_rng: SimRng,
    think_rng: SimRng,
    lb_rng: SimRng,
    rr: usize,
    /// Questions out at the service ((platform, key id)) → answer time.
    out: BTreeMap<(usize, u64), u64>,
    upstream_keys: BTreeSet<(usize, u64)>,
    /// Attempts admitted per (replica, era), in the connection set-up before they go.
    pending: BTreeMap<(usize, u32, Attempt), SimSend>,
    /// Ownership periods, in order.
    owners: Vec<Ownership>,
    forwarded: u64,
    rerouted: u64,
    dropped: u64,
    upstream: u64,
    events: u64,
    max_admitting: usize,
    admissions: Vec<ClusterAdmission>,
    local_limit: LimitConfig,
    lease_config: LeaseConfig,
}

/// Runs cluster scenario `s` (named `name`), keeping every admission sent; an invariant
/// broken ends it with the reason.
pub fn run_cluster(name: &str, s: &ClusterScenario) -> Result<ClusterOutcome, String> {
    run_cluster_with(name, s, true)
}

/// Runs cluster scenario `s`, keeping every admission sent only when `keep_admissions`:
/// without, memory follows the calls under way and the sessions, never the calls made.
pub fn run_cluster_with(name: &str, s: &ClusterScenario, keep_admissions: bool) -> Result<ClusterOutcome, String> {
    let lease_config = s.lease_config().validate().map_err(|e| e.to_string())?;
    let limit = LimitConfig::new(Units::whole(s.capacity), Duration::from_secs(s.window_s));
    let margin = Duration::from_millis(s.margin_ms);
    let platforms = s.platforms();
    let service = s.service()?;
    let replicas = (0..s.replicas)
        .map(|r| -> Result<Replica, String> {
            let off_ns = s.offset_ms.get(r).copied().unwrap_or(0) * MS;
            Ok(Replica {
                off_ns,
                d: s.drift_ppm[r],
                alive: true,
                era: 0,
                paused_until: 0,
                lease: Lease::new(lease_config, Instant::from_nanos(off_ns)).expect("validated"),
                shell: new_shell(service, limit.with_margin(margin), new_buffers(&platforms))?,
                owning: None,
                path_wake: None,
                lease_wake: None,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let mut sim = Sim {
        s: s.clone(),
        name: name.to_owned(),
        now: 0,
        seq: 0,
        heap: BinaryHeap::new(),
        replicas,
        engine: Engine {
            key: None,
            checkpoint: None,
            down_until: 0,
            paused_until: 0,
        },
        upstream_service: SimService::new(service, Some(limit), LimitModel::TokenBucket, Vec::new())
            .with_rate_limit_headers(s.states_its_budget()),
        host: Host::new(s.latency, sim_rng(s.seed, Component::Latency(1))),
        platforms,
        service,
        calls: BTreeMap::new(),
        made: 0,
        ends: BTreeMap::new(),
        latencies: Latencies::default(),
        keep_admissions,
        session_names: (0..s.sessions).map(|i| format!("s{i}")).collect(),
        left: vec![s.calls_per_session; s.sessions as usize],
        open_calls: 0,
        keys_rng: sim_rng(s.seed, Component::Keys),
        think_rng: sim_rng(s.seed, Component::Workload),
        lb_rng: sim_rng(s.seed, Component::Faults(200)),
        rr: 0,
        out: BTreeMap::new(),
        upstream_keys: BTreeSet::new(),
        pending: BTreeMap::new(),
        owners: Vec::new(),
        forwarded: 0,
        rerouted: 0,
        dropped: 0,
        upstream: 0,
        events: 0,
        max_admitting: 0,
        admissions: Vec::new(),
        local_limit: limit.with_margin(margin),
        lease_config,
    };
    sim.start()?;
    sim.run()?;
    sim.finish()
}

impl Sim {
    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Reverse((at, self.seq, ev)));
    }

    fn start(&mut self) -> Result<(), String> {
        for r in 0..self.replicas.len() {
            self.replicas[r].lease_wake = Some(0);
            self.push(0, Ev::LeaseWake(r));
        }
        for session in 0..self.s.sessions {
            let at = (self.s.ramp_s * 1e9 * f64::from(session) / f64::from(self.s.sessions.max(1))) as u64;
            let call = self.new_call(session, at);
            self.push(at, Ev::Arrive { call, era: 0 });
        }
        for scripted in self.s.calls.clone() {
            let call = self.new_scripted_call(&scripted);
            self.push(scripted.at_ms * MS, Ev::Arrive { call, era: 0 });
        }
        for (i, f) in self.s.faults.clone().iter().enumerate() {
            let at = match *f {
                ClusterFault::CrashOwner { at_s, .. }
                | ClusterFault::PauseOwner { at_s, .. }
                | ClusterFault::ShutdownOwner { at_s, .. }
                | ClusterFault::EngineRestart { at_s, .. }
                | ClusterFault::KeyLoss { at_s }
                | ClusterFault::EnginePause { at_s, .. } => at_s,
            };
            self.push((at * 1e9) as u64, Ev::Fault(i));
        }
        Ok(())
    }

    fn new_call(&mut self, session: u32, at: u64) -> u64 {
        let key_id = u64::from(self.keys_rng.random_range(0..self.s.key_pool.max(1)));
        let platform = self.platforms[session as usize % self.platforms.len()];
        let key = CacheKey::new(platform, DataClass::Search, "search").param("q", format!("k{key_id}"));
        self.left[session as usize] -= 1;
        self.push_call(session, None, key, at)
    }

    /// A scripted call (its session gets a name of its own, and nothing follows it).
    fn new_scripted_call(&mut self, c: &ScriptedCall) -> u64 {
        let session = match self.session_names.iter().position(|n| *n == c.session) {
            Some(i) => i,
            None => {
                self.session_names.push(c.session.clone());
                self.left.push(0);
                self.session_names.len() - 1
            }
        };
        let platform = c.platform.unwrap_or(self.s.platform);
        let key = CacheKey::new(platform, DataClass::Search, "search").param("q", format!("k{}", c.key));
        let session = u32::try_from(session).expect("fewer than 2^32 sessions");
        self.push_call(session, c.replica, key, c.at_ms * MS)
    }

    fn push_call(&mut self, session: u32, replica: Option<usize>, key: CacheKey, at: u64) -> u64 {
        self.open_calls += 1;
        let id = self.made;
        self.made += 1;
        self.calls.insert(
            id,
            Call {
                session,
                replica,
                key,
                origin: 0,
                submitted: at,
                at_owner: None,
                era: 0,
            },
        );
        self.push(at + self.s.give_up_s * 1_000 * MS, Ev::GiveUp(id));
        id
    }

    fn run(&mut self) -> Result<(), String> {
        // Bounds that a run which settles never meets: an hour past the last session's
        // start, and 5,000,000 events plus 100 per second of the ramp (the leases renew a
        // few times a second on every replica).
        let ramp_ms = (self.s.ramp_s.max(0.0) * 1000.0) as u64;
        let deadline = (3_600_000 + ramp_ms) * MS;
        let max_events = 5_000_000 + ramp_ms / 10;
        while let Some(Reverse((t, _, ev))) = self.heap.pop() {
            self.now = t;
            self.events += 1;
            if self.events > max_events {
                return Err(format!("the run did not settle within {max_events} events"));
            }
            self.expire_key(t);
            self.handle(t, ev)?;
            self.check(t)?;
            // The leases would renew for ever: the run ends when every session is done and
            // nothing is out at the platform.
            if self.open_calls == 0 && self.left.iter().all(|&n| n == 0) && self.out.is_empty() {
                return Ok(());
            }
            if t > deadline {
                return Err(format!("{}: calls still open an hour after the last start", self.name));
            }
        }
        Ok(())
    }

    fn expire_key(&mut self, t: u64) {
        if t < self.engine.paused_until {
            return;
        }
        if self.engine.key.is_some_and(|(_, _, _, exp)| exp <= t) {
            self.engine.key = None;
        }
    }

    /// The replica an event is for, if that replica's process must handle it.
    fn target(ev: &Ev) -> Option<usize> {
        match *ev {
            Ev::Route { at, .. } => Some(at),
            Ev::Forwarded { to, .. } => Some(to),
            Ev::LeaseWake(r)
            | Ev::LeaseAnswer { replica: r, .. }
            | Ev::PathWake { replica: r, .. }
            | Ev::OwnerSend { replica: r, .. } => Some(r),
            _ => None,
        }
    }

    /// The replica's local time if it is alive and of generation `era` (the process whose
    /// path an event is for).
    fn process_local(&self, r: usize, era: u32, t: u64) -> Option<Instant> {
        let rep = &self.replicas[r];
        (rep.alive && rep.era == era).then(|| rep.local(t))
    }

    fn balance(&mut self, session: u32) -> Option<usize> {
        let up: Vec<usize> = (0..self.replicas.len()).filter(|&r| self.replicas[r].alive).collect();
        if up.is_empty() {
            return None;
        }
        Some(match self.s.balancer {
            Balancer::Hash => up[hashed(session, up.len())],
            Balancer::RoundRobin => {
                self.rr += 1;
                up[self.rr % up.len()]
            }
            Balancer::Random => up[self.lb_rng.random_range(0..up.len())],
        })
    }

    /// A call at its origin `o`: to its own path when it owns and admits, else forwarded
    /// to the replica the engine names as the owner, else asked again shortly.
    fn route(&mut self, t: u64, call: u64, o: usize) -> Result<(), String> {
        let c = self.call_mut(call);
        c.era += 1;
        c.at_owner = None;
        if self.replicas[o].shell.owning().is_some() {
            return self.at_owner(t, call, o, false);
        }
        let owner = self
            .engine
            .key
            .filter(|_| t >= self.engine.down_until)
            .map(|(r, ..)| r)
            .filter(|&r| r != o);
        match owner {
            Some(h) => {
                self.forwarded += 1;
                let era = self.call_mut(call).era;
                self.push(t + self.s.forward_ms * MS, Ev::Forwarded { call, to: h, era });
                self.push(t + FORWARD_TIMEOUT, Ev::ForwardTimeout { call, era });
            }
            None => {
                let era = self.call_mut(call).era;
                self.push(t + REROUTE_BACKOFF, Ev::Route { call, at: o, era });
            }
        }
        Ok(())
    }

    /// A call reaches replica `h` as its owner (directly or forwarded).
    fn at_owner(&mut self, t: u64, call: u64, h: usize, forwarded: bool) -> Result<(), String> {
        let Some(c) = self.calls.get(&call) else {
            return Ok(());
        };
        let back = if forwarded { self.s.forward_ms * MS } else { 0 };
        let era = c.era;
        let rep = &mut self.replicas[h];
        if !rep.alive {
            // No answer: the follower's time-out re-routes it.
            return Ok(());
        }
        let local = rep.local(t);
        let req = Request {
            waiter: WaiterId(call),
            key: c.key.clone(),
            session: SessionKey::client(&self.session_names[c.session as usize]),
            cost: Units::ONE,
            lane: Lane::MAIN,
        };
        let wall = WallTime(local.as_millis());
        let Ok(arrival) = rep.shell.request(local, wall, Some(&rep.lease), req, (), ()) else {
            // Not (or no longer, or not yet) the owner: the origin asks again.
            let origin = c.origin;
            self.call_mut(call).era = era + 1;
            self.push(
                t + back + REROUTE_BACKOFF,
                Ev::Route {
                    call,
                    at: origin,
                    era: era + 1,
                },
            );
            return Ok(());
        };
        match arrival {
            Arrival::Cached(_) => {
                self.push(
                    t + back,
                    Ev::Reply {
                        call,
                        era,
                        end: CallEnd::Answered(Served::Cached),
                    },
                );
            }
            Arrival::Waiting { .. } => {
                let process = rep.era;
                let c = self.call_mut(call);
                c.at_owner = Some((h, process));
                // The forward is answered by the owner: no time-out while it lives.
                c.era += 1;
            }
            Arrival::Refused { .. } => self.push(
                t + back,
                Ev::Reply {
                    call,
                    era,
                    end: CallEnd::Refused,
                },
            ),
        }
        self.drain(t, h)
    }

    /// Takes the actions of replica `h`'s shell: sends go out after the send delay,
    /// deliveries travel back, calls moved at the end of an ownership are asked again.
    fn drain(&mut self, t: u64, h: usize) -> Result<(), String> {
        let era = self.replicas[h].era;
        while let Some(action) = self.replicas[h].shell.poll_action() {
            match action {
                Action::Send(pending) => {
                    let attempt = pending.attempt();
                    self.pending.insert((h, era, attempt), pending);
                    self.push(
                        t + self.s.send_delay_ms * MS,
                        Ev::OwnerSend {
                            replica: h,
                            era,
                            attempt,
                        },
                    );
                }
                Action::Deliver { waiter, delivery, .. } => {
                    let call = waiter.0;
                    let end = match delivery {
                        Delivery::Answer { served, .. } => CallEnd::Answered(served),
                        Delivery::Failed(_) => CallEnd::Failed,
                    };
                    // A call that ended meanwhile (its client gave up) hears nothing more.
                    let Some(c) = self.calls.get_mut(&call) else { continue };
                    c.at_owner = None;
                    let back = if c.origin == h { 0 } else { self.s.forward_ms * MS };
                    let era = c.era;
                    self.push(t + back, Ev::Reply { call, era, end });
                }
                // The owner tells the followers; its own calls re-route.
                Action::Moved { waiter, .. } => self.reroute(t, waiter.0, h, true),
                Action::InvariantBroken { what, .. } => return Err(format!("replica {h}'s path: {what}")),
            }
        }
        let rep = &mut self.replicas[h];
        let wake = rep.shell.poll_timeout(rep.local(t)).map(|l| rep.true_at(l).max(t + 1));
        if let Some(w) = wake
            && rep.path_wake.is_none_or(|p| p <= t || p > w)
        {
            rep.path_wake = Some(w);
            self.push(w, Ev::PathWake { replica: h, era });
        }
        Ok(())
    }

    /// Replica `h`'s admitted `attempt` is sent now, if its lease still allows.
    fn owner_send(&mut self, t: u64, h: usize, era: u32, attempt: Attempt) -> Result<(), String> {
        let Some(pending) = self.pending.remove(&(h, era, attempt)) else {
            return Ok(());
        };
        let Some(local) = self.process_local(h, era, t) else {
            return Ok(());
        };
        let key_id = (
            self.platforms
                .iter()
                .position(|&p| p == pending.key().platform())
                .unwrap_or(usize::MAX),
            key_id_of(pending.key()),
        );
        let rep = &mut self.replicas[h];
        let wall = WallTime(local.as_millis());
        let Some(out) = rep.shell.confirm_send(local, wall, Some(&rep.lease), pending) else {
            // Too old, or the lease is gone: never sent; the path heard of it.
            self.dropped += 1;
            return self.drain(t, h);
        };
        if let Some(a) = out.admission.filter(|_| self.keep_admissions) {
            self.admissions.push(ClusterAdmission {
                replica: h,
                line: AdmissionLine {
                    at_ms: a.admitted_at.as_millis(),
                    platform: out.key.platform(),
                    service: self.service,
                    session: a.session.to_string(),
                    call: out.key.params().get("q").cloned().unwrap_or_default(),
                    rule: a.rule,
                },
            });
        }
        // The checks of a send: its sender alone may admit, and nothing is out for its key.
        for (r, other) in self.replicas.iter().enumerate() {
            if r != h && other.alive && other.lease.may_admit(other.local(t)) {
                return Err(format!(
                    "t={}: replica {h} sends while replica {r} may admit too",
                    secs(t / MS)
                ));
            }
        }
        if self.out.contains_key(&key_id) {
            return Err(format!(
                "t={}: two upstream calls for question k{} of {} at once (replica {h})",
                secs(t / MS),
                key_id.1,
                out.key.platform()
            ));
        }
        self.upstream += 1;
        self.upstream_keys.insert(key_id);
        match self
            .upstream_service
            .receive(Instant::from_nanos(t), Units::ONE, &mut self.host)
        {
            Answer::Ok { latency, remaining } => {
                let at = t + u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX);
                self.out.insert(key_id, at);
                self.push(
                    at,
                    Ev::PlatformAnswer {
                        replica: h,
                        era,
                        attempt,
                        key_id,
                        remaining,
                    },
                );
                Ok(())
            }
            Answer::TooMany {
                refusal: Refusal::OverLimit,
                ..
            } => Err(format!(
                "t={}: the platform refused a call of replica {h} as over its limit",
                secs(t / MS)
            )),
            Answer::TooMany { .. } => Err("the platform throttled, which this scenario never asks".to_owned()),
        }
    }

    fn end_call(&mut self, t: u64, call: u64, end: CallEnd) {
        self.open_calls -= 1;
        let c = self.calls.remove(&call).expect("a call ends once, while under way");
        let session = c.session;
        *self.ends.entry(end).or_insert(0) += 1;
        if matches!(end, CallEnd::Answered(_)) {
            self.latencies.record((t - c.submitted) / MS);
        }
        if self.left[session as usize] > 0 {
            let half = self.s.think_ms / 2;
            let think = self.s.think_ms - half + self.think_rng.random_range(0..=self.s.think_ms);
            let at = t + think * MS;
            let next = self.new_call(session, at);
            self.push(at, Ev::Arrive { call: next, era: 0 });
        }
    }

    /// Call `call`, which waited at replica `r`, is asked again: by its client when it
    /// waited at its own replica, else by its origin when told (or after its forward's
    /// time-out, when the owner died).
    fn reroute(&mut self, t: u64, call: u64, r: usize, told: bool) {
        let Some(c) = self.calls.get_mut(&call) else {
            return;
        };
        self.rerouted += 1;
        let origin = c.origin;
        c.at_owner = None;
        c.era += 1;
        let era = c.era;
        if origin == r {
            // Its own caller: the client asks again (its replica's state is gone).
            self.push(t + CLIENT_RETRY, Ev::Arrive { call, era });
        } else if told {
            self.push(t + self.s.forward_ms * MS, Ev::Route { call, at: origin, era });
        } else {
            self.push(t + FORWARD_TIMEOUT, Ev::Route { call, at: origin, era });
        }
    }

    /// After every event: at most one replica may admit at this instant, and the
    /// platform never counted a call over its limit.
    fn check(&mut self, t: u64) -> Result<(), String> {
        let admitting: Vec<usize> = (0..self.replicas.len())
            .filter(|&r| {
                let rep = &self.replicas[r];
                rep.alive && rep.lease.may_admit(rep.local(t))
            })
            .collect();
        self.max_admitting = self.max_admitting.max(admitting.len());
        if admitting.len() > 1 {
            return Err(format!(
                "{}: t={}: replicas {admitting:?} may all admit",
                self.name,
                secs(t / MS)
            ));
        }
        if self.upstream_service.counters.over_limit > 0 {
            return Err(format!("{}: the platform refused a call as over its limit", self.name));
        }
        Ok(())
    }

    /// Call `call`, which is under way (an event for an ended call is stale and never
    /// gets here).
    fn call_mut(&mut self, call: u64) -> &mut Call {
        self.calls.get_mut(&call).expect("a call under way")
    }

    fn finish(self) -> Result<ClusterOutcome, String> {
        if let Some(i) = self.calls.keys().next() {
            return Err(format!("call {i} never ended"));
        }
        if !self.out.is_empty() {
            return Err("a call is still out at the platform at the end".to_owned());
        }
        Ok(ClusterOutcome {
            name: self.name,
            calls: self.made,
            ends: self.ends,
            forwarded: self.forwarded,
            rerouted: self.rerouted,
            dropped: self.dropped,
            upstream: self.upstream,
            upstream_keys: self.upstream_keys.len() as u64,
            accepted: self.upstream_service.counters.accepted_calls,
            over_limit: self.upstream_service.counters.over_limit,
            max_units_in_window: self.upstream_service.max_units_in_window(),
            owners: self.owners,
            latencies: self.latencies,
            events: self.events,
            end_ms: self.now / MS,
            max_admitting: self.max_admitting,
            admissions: self.admissions,
            scenario: self.s,
        })
    }
}

fn key_id_of(key: &CacheKey) -> u64 {
    key.params()
        .get("q")
        .and_then(|q| q.strip_prefix('k'))
        .and_then(|n| n.parse().ok())
        .unwrap_or(u64::MAX)
}

/// Empty buffers for `platforms`, one each.
fn new_buffers(platforms: &[PlatformId]) -> Vec<(PlatformId, StoreBuffer<MemoryStore>)> {
    platforms
        .iter()
        .map(|&id| {
            let store = MemoryStore::new(id, CachePolicy::default().for_platform(id), CacheVersion::current());
            (id, StoreBuffer::new(store))
        })
        .collect()
}

/// A replica's path: the single-process simulator's, for the scenario's budget group (one
/// lane: the service its platforms search), on the bucket with the margin, over the
/// replica's own buffers, in the core's shell (which checks the invariants after every
/// step).
fn new_shell(
    service: ServiceId,
    local_limit: LimitConfig,
    buffers: Vec<(PlatformId, StoreBuffer<MemoryStore>)>,
) -> Result<SimShell, String> {
    let mut config = PathConfig::single(service.as_str(), Some(SchedulerConfig::with_limit(local_limit)));
    config.record_events = false;
    let path = PlatformPath::new(config, GroupBuffer::new(buffers)).map_err(|e| e.to_string())?;
    Ok(Shell::new(path, |_| ()).with_check_every(1))
}

/// The hash balancer's pick among `up` live replicas for session `session`: the same
/// replica for a session while the live set stays, the sessions spread over them.
fn hashed(session: u32, up: usize) -> usize {
    (session as usize).wrapping_mul(2_654_435_761) % up
}

#[cfg(test)]
mod tests {
    use super::hashed;

    #[test]
    fn a_session_keeps_its_replica_and_sessions_spread() {
        assert_eq!(hashed(1, 3), hashed(1, 3));
        assert_eq!(hashed(7, 1), 0);
        let used: std::collections::BTreeSet<usize> = (0..30).map(|i| hashed(i, 3)).collect();
        assert_eq!(used.len(), 3, "thirty sessions reach every one of three replicas");
    }
}
