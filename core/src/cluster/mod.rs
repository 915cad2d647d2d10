//! Several replicas, one owner per platform: the handover rules as a pure state
//! machine, [`Lease`], one per (replica, platform).
//!
//! ```text
//!            acquire granted                     now ≥ admit_from
//! Follower ─────────────────▶ Waiting(admit_from) ───────────────▶ Owner(valid_until)
//!    ▲  ▲ refused/unreachable      │ lost / lapsed                  │ lost / lapsed
//!    │  └──────── Acquiring ◀──────┴────────────────────────────────┘
//!    │                                                               │ shutdown
//!    └── (a shutdown before the lease) ─▶ Stopped ◀── released ── HandingOver(release_at)
//! ```
//!
//! The lease itself lives in a shared engine (the server: Redis, `SET key token NX PX
//! ttl`; renewed and released by compare-value scripts). The engine is **soft state**:
//! it may restart, fail over or lose keys, so a lost key lets a second replica take
//! the lease while the first still believes it holds it. These rules keep the two apart
//! all the same, from each replica's own monotonic clock alone:
//!
//! 1. **Validity from the send.** A lease acquired or renewed by a request sent at `s`
//!    (local clock) is valid until `s + TTL − m`. Only a renewal sent while the lease
//!    was valid, and answered before it lapsed, extends it; once it lapses the replica
//!    must acquire again (a new token, rule 3), so an owner that was paused cannot come
//!    back on an old token.
//! 2. **Admit and send only while valid.** [`Lease::may_admit`] holds while the lease is
//!    valid and the start wait is over; an admission may be sent only while the lease is
//!    valid and at most `m` after it was made ([`Lease::may_send`]); an older one is
//!    dropped (its charge refunded, its call asked again).
//! 3. **A new owner waits `TTL + m`** after the answer that gave it the lease, and then
//!    starts with an **empty** bucket (the previous owner may have spent all of it) and
//!    the sessions' usage from a checkpoint when there is one.
//! 4. **Renew every `TTL / 3`**; a renewal that finds another token (or none) means the
//!    lease is lost: stop at once.
//! 5. **A graceful shutdown** stops admitting at once, lets admissions already made go
//!    for `m`, then releases the lease (a compare-value delete).
//!
//! **The drift bound.** Let each replica's clock run at a rate within `1 ± ρ` of true
//! time and a call reach the platform at most `m` after it is sent (the margin the
//! per-process bucket already assumes). A's last call leaves at most `(TTL − m)/(1 − ρ)`
//! true time after A sent its last successful renewal; that renewal reached the engine
//! before the key was lost, so before B's acquisition was granted, and B admits no
//! earlier than `(TTL + m)/(1 + ρ)` after that. So A's calls have all arrived before
//! B's first one leaves when `(TTL − m)/(1 − ρ) + m ≤ (TTL + m)/(1 + ρ)`, which holds for
//! **`ρ ≤ m / (2·TTL + m)`** ([`LeaseConfig::max_drift_ppm`]): 1/11 (9 %) for
//! TTL = 5 s and m = 1 s, four orders of magnitude above a real clock's. The engine's
//! own clock (when it expires a key) is never relied on for safety, only for liveness.
//! What the rules cannot cover is an engine that brings back a key it had lost (a
//! restart from an old snapshot, a failover to a lagging copy) while a renewal is in
//! transit: run the engine without persistence for lease keys (see `docs/replicas.md`).
//!
//! Sans-IO like the rest of the core: inputs take `now` (this replica's monotonic
//! clock), [`Lease::poll_request`] says what to send to the engine,
//! [`Lease::poll_event`] what changed, [`Lease::poll_timeout`] when to call again.
//!
//! What this module does not do: talk to the engine, forward requests, or run the
//! platform's path; the shells do, and [`crate::path::PlatformPath::take_over`] starts
//! a new owner's path.

#[cfg(test)]
mod tests;

use std::collections::VecDeque;
use std::time::Duration;

use crate::time::{Instant, duration_nanos};

/// The sessions' usage at each lane of a platform's path, as the owner checkpoints it
/// (the server: in the engine) and a new owner restores it
/// ([`crate::path::PlatformPath::take_over`]). Fairness state only: the bucket is never
/// restored, a new owner starts it empty.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct UsageCheckpoint {
    /// Lane `i`'s sessions and the units each was admitted in its usage period.
    pub lanes: Vec<Vec<(crate::scheduler::SessionKey, crate::units::Units)>>,
}

/// The lease's timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseConfig {
    /// The lease's time to live in the engine (`PX`), TTL.
    pub ttl: Duration,
    /// The margin m: the longest an admission may wait before it is sent, and the
    /// allowance for clock drift and travel (the per-process bucket's margin).
    pub margin: Duration,
}

/// A configuration the rules cannot keep.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LeaseConfigError {
    /// `TTL − m` would leave no validity, or less than a renewal period.
    #[error("the lease TTL must exceed 1.5 × the margin (TTL − m must outlast TTL / 3)")]
    TtlTooShort,
}

impl LeaseConfig {
    /// TTL 5 s, m 1 s (the server's defaults).
    pub const DEFAULT: LeaseConfig = LeaseConfig {
        ttl: Duration::from_secs(5),
        margin: Duration::from_secs(1),
    };

    /// Checks that the rules can work with it: the validity `TTL − m` must outlast the
    /// renewal period `TTL / 3`, so a renewal answered in time keeps an owner valid.
    pub fn validate(self) -> Result<LeaseConfig, LeaseConfigError> {
        if self.ttl.saturating_sub(self.margin) <= self.renew_every() {
            return Err(LeaseConfigError::TtlTooShort);
        }
        Ok(self)
    }

    /// How often an owner renews: `TTL / 3`.
    pub fn renew_every(self) -> Duration {
        self.ttl / 3
    }

    /// How long after a refused or failed acquisition a follower tries again, and after
    /// an unanswered renewal an owner renews again: `TTL / 6`.
    pub fn retry_every(self) -> Duration {
        self.ttl / 6
    }

    /// How long a new owner waits before it admits: `TTL + m`.
    pub fn start_wait(self) -> Duration {
        self.ttl + self.margin
    }

    /// How long an acquisition or renewal sent at `s` keeps the lease valid: `TTL − m`.
    pub fn validity(self) -> Duration {
        self.ttl.saturating_sub(self.margin)
    }

    /// The largest clock-rate drift ρ (in parts per million) under which two owners
    /// never overlap: `ρ ≤ m / (2·TTL + m)`, rounded down.
    pub fn max_drift_ppm(self) -> u64 {
        let m = u128::from(duration_nanos(self.margin));
        let t = u128::from(duration_nanos(self.ttl));
        u64::try_from(m * 1_000_000 / (2 * t + m).max(1)).unwrap_or(u64::MAX)
    }
}

/// Where a replica stands for one platform, as [`Lease::state`] reports it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseState {
    /// No lease; the replica forwards this platform's calls to the owner.
    Follower,
    /// An acquisition is out at the engine.
    Acquiring,
    /// The lease is taken; admissions start at `until` (`TTL + m` after it was granted).
    Waiting {
        /// When the replica may admit.
        until: Instant,
    },
    /// The owner: it may admit until `valid_until` unless a renewal extends it.
    Owner {
        /// The end of the lease by this replica's clock.
        lease_valid_until: Instant,
    },
    /// Shutting down: no new admissions; the lease is released at `release_at`.
    HandingOver {
        /// When the lease is released.
        release_at: Instant,
    },
    /// Shut down: nothing more happens.
    Stopped,
}

/// What to ask the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeaseCall {
    /// Take the lease if nobody holds it, with `token` as its value and TTL as its expiry
    /// (`SET key token NX PX ttl`).
    Acquire,
    /// Extend the lease by TTL if it still holds `token` (a compare-value script).
    Renew,
    /// Delete the lease if it still holds `token` (a compare-value script).
    Release,
}

/// One request to the engine: report its answer with [`Lease::on_answer`] and `id`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LeaseRequest {
    /// The request's number, unique for this lease.
    pub id: u64,
    /// What to ask.
    pub call: LeaseCall,
    /// The value the lease holds for this acquisition: a new one for every
    /// [`LeaseCall::Acquire`] (the shell makes it unique across replicas, e.g. replica
    /// id + token), the same for its renewals and release.
    pub token: u64,
}

/// The engine's answer to a [`LeaseRequest`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LeaseAnswer {
    /// Done: the lease was taken, renewed or released.
    Granted,
    /// Not done: another replica holds the lease (acquire), or the lease no longer holds
    /// this token (renew, release): it was lost.
    Refused,
    /// An acquisition not done because another replica holds the lease, which expires in
    /// the engine in this long (`PTTL`): the follower tries again then (at the latest
    /// after `TTL / 6`), so a dead owner's lease is taken at once when it runs out. For a
    /// renewal or release the same as [`LeaseAnswer::Refused`].
    HeldFor(Duration),
    /// No answer: the engine is unreachable or the request timed out. (Rules 1 and 2 do
    /// not depend on whether it was applied.)
    Unreachable,
}

/// What changed, for the shell.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LeaseEvent {
    /// The lease was taken (the acquisition `epoch`); admissions start at `admit_from`.
    Acquired {
        /// This acquisition's number on this lease, from 1.
        epoch: u64,
        /// When the replica may start admitting.
        admit_from: Instant,
    },
    /// The start wait is over: start the platform's path with an **empty** bucket (and
    /// the sessions' usage from a checkpoint, if one exists) and admit.
    StartAdmitting {
        /// The acquisition.
        epoch: u64,
    },
    /// The lease is gone (a renewal found another token or none, or it lapsed before a
    /// renewal came back): stop admitting and sending at once; admissions not yet sent
    /// are dropped, the calls waiting here go to the new owner.
    Lost {
        /// The acquisition that ended.
        epoch: u64,
        /// Whether it was admitting (the start wait was over).
        was_admitting: bool,
    },
    /// A shutdown stopped admissions; admissions already made may still go until `m`.
    HandingOver {
        /// The acquisition.
        epoch: u64,
    },
    /// The lease was released (or given up at shutdown); nothing more happens.
    Stopped,
}

#[derive(Clone, Copy, Debug)]
struct Held {
    epoch: u64,
    token: u64,
    admit_from: Instant,
    valid_until: Instant,
    renew_at: Instant,
    started: bool,
}

#[derive(Clone, Copy, Debug)]
enum Phase {
    Follower {
        try_at: Instant,
    },
    Held(Held),
    HandingOver {
        held: Held,
        stopped_at: Instant,
        release_at: Instant,
    },
    Stopped,
}

#[derive(Clone, Copy, Debug)]
struct Pending {
    id: u64,
    call: LeaseCall,
    token: u64,
    sent_at: Instant,
}

/// The handover rules for one (replica, platform). See the module documentation.
#[derive(Debug)]
pub struct Lease {
    config: LeaseConfig,
    phase: Phase,
    pending: Option<Pending>,
    next_id: u64,
    epochs: u64,
    /// A shutdown was asked while an acquisition was out.
    shutting_down: bool,
    events: VecDeque<LeaseEvent>,
    last_now: Instant,
}

impl Lease {
    /// A follower that tries to acquire at once.
    pub fn new(config: LeaseConfig, now: Instant) -> Result<Lease, LeaseConfigError> {
        Ok(Lease {
            config: config.validate()?,
            phase: Phase::Follower { try_at: now },
            pending: None,
            next_id: 1,
            epochs: 0,
            shutting_down: false,
            events: VecDeque::new(),
            last_now: now,
        })
    }

    /// The configuration.
    pub fn config(&self) -> LeaseConfig {
        self.config
    }

    /// Where the replica stands at `now`.
    pub fn state(&self, now: Instant) -> LeaseState {
        let now = now.max(self.last_now);
        match self.phase {
            Phase::Follower { .. } if self.pending.is_some() => LeaseState::Acquiring,
            Phase::Follower { .. } => LeaseState::Follower,
            Phase::Held(h) if now < h.admit_from => LeaseState::Waiting { until: h.admit_from },
            Phase::Held(h) => LeaseState::Owner {
                lease_valid_until: h.valid_until,
            },
            Phase::HandingOver { release_at, .. } => LeaseState::HandingOver { release_at },
            Phase::Stopped => LeaseState::Stopped,
        }
    }

    /// The current acquisition's number while the lease is held (waiting, owning or
    /// handing over).
    pub fn epoch(&self) -> Option<u64> {
        match self.phase {
            Phase::Held(h) | Phase::HandingOver { held: h, .. } => Some(h.epoch),
            _ => None,
        }
    }

    /// Whether this replica may admit a call at `now`: it holds the lease, the start wait
    /// is over, and the lease is valid by its own clock (rule 2).
    pub fn may_admit(&self, now: Instant) -> bool {
        matches!(self.phase, Phase::Held(h) if h.started && h.admit_from <= now && now < h.valid_until)
    }

    /// Whether an admission made at `admitted_at` may be sent at `now`: the lease is
    /// valid, the admission was made under this acquisition while it admitted (before a
    /// shutdown), and it is at most `m` old. An admission for which this is false is
    /// dropped, never sent.
    pub fn may_send(&self, now: Instant, admitted_at: Instant) -> bool {
        let (h, before) = match self.phase {
            Phase::Held(h) => (h, Instant::MAX),
            Phase::HandingOver { held, stopped_at, .. } => (held, stopped_at),
            _ => return false,
        };
        h.started
            && h.admit_from <= admitted_at
            && admitted_at < before
            && admitted_at <= now
            && now < h.valid_until
            && now <= admitted_at + self.config.margin
    }

    /// The end of the lease by this replica's clock, while it is held.
    pub fn valid_until(&self) -> Option<Instant> {
        match self.phase {
            Phase::Held(h) | Phase::HandingOver { held: h, .. } => Some(h.valid_until),
            _ => None,
        }
    }

    /// When a lease taken now would admit: `TTL + m` later.
    pub fn admit_from(&self) -> Option<Instant> {
        match self.phase {
            Phase::Held(h) => Some(h.admit_from),
            _ => None,
        }
    }

    /// The next request to send to the engine at `now`, if one is due. At most one
    /// request is out at a time.
    pub fn poll_request(&mut self, now: Instant) -> Option<LeaseRequest> {
        let now = self.advance(now);
        if self.pending.is_some() {
            return None;
        }
        let (call, token) = match self.phase {
            Phase::Follower { try_at } if now >= try_at && !self.shutting_down => (LeaseCall::Acquire, self.next_id),
            Phase::Held(h) if now >= h.renew_at && now < h.valid_until => (LeaseCall::Renew, h.token),
            Phase::HandingOver { held, release_at, .. } if now >= release_at => (LeaseCall::Release, held.token),
            _ => return None,
        };
        let id = self.next_id;
        self.next_id += 1;
        self.pending = Some(Pending {
            id,
            call,
            token,
            sent_at: now,
        });
        Some(LeaseRequest { id, call, token })
    }

    /// The engine answered request `id` at `now`. An answer to a request this lease no
    /// longer waits for is ignored.
    pub fn on_answer(&mut self, now: Instant, id: u64, answer: LeaseAnswer) {
        let now = self.advance(now);
        let Some(p) = self.pending.filter(|p| p.id == id) else {
            return;
        };
        self.pending = None;
        let c = self.config;
        match (p.call, answer, self.phase) {
            (LeaseCall::Acquire, LeaseAnswer::Granted, Phase::Follower { .. }) => {
                self.epochs += 1;
                let held = Held {
                    epoch: self.epochs,
                    token: p.token,
                    admit_from: now + c.start_wait(),
                    valid_until: p.sent_at + c.validity(),
                    renew_at: p.sent_at + c.renew_every(),
                    started: false,
                };
                self.events.push_back(LeaseEvent::Acquired {
                    epoch: held.epoch,
                    admit_from: held.admit_from,
                });
                if self.shutting_down {
                    // Taken while shutting down: never admitted, so nothing to let go
                    // first; hand it back at once.
                    self.phase = Phase::HandingOver {
                        held,
                        stopped_at: now,
                        release_at: now,
                    };
                } else {
                    self.phase = Phase::Held(held);
                }
                // The validity may already be over when the answer came late.
                self.advance(now);
            }
            (LeaseCall::Acquire, _, Phase::Follower { .. }) => {
                if self.shutting_down {
                    self.stop();
                } else {
                    let wait = match answer {
                        LeaseAnswer::HeldFor(d) => d.min(c.retry_every()),
                        _ => c.retry_every(),
                    };
                    self.phase = Phase::Follower { try_at: now + wait };
                }
            }
            (LeaseCall::Renew, LeaseAnswer::Granted, Phase::Held(mut h)) if p.token == h.token => {
                // Sent while valid (poll_request) and answered before the lapse (advance
                // ran first): it extends the validity from its send.
                h.valid_until = h.valid_until.max(p.sent_at + c.validity());
                h.renew_at = p.sent_at + c.renew_every();
                self.phase = Phase::Held(h);
            }
            (LeaseCall::Renew, LeaseAnswer::Refused | LeaseAnswer::HeldFor(_), Phase::Held(h))
                if p.token == h.token =>
            {
                self.lose(h, now);
            }
            (LeaseCall::Renew, LeaseAnswer::Unreachable, Phase::Held(mut h)) if p.token == h.token => {
                h.renew_at = now + c.retry_every();
                self.phase = Phase::Held(h);
            }
            (LeaseCall::Release, _, Phase::HandingOver { .. }) => self.stop(),
            _ => {}
        }
    }

    /// A shutdown was asked at `now`: stop admitting, let admissions already made go for
    /// `m`, then release (rule 5). A replica without the lease stops at once.
    pub fn shutdown(&mut self, now: Instant) {
        let now = self.advance(now);
        match self.phase {
            Phase::Held(h) => {
                // A renewal still out is forgotten: the release follows anyway.
                self.pending = None;
                let release_at = if h.started { now + self.config.margin } else { now };
                self.phase = Phase::HandingOver {
                    held: h,
                    stopped_at: now,
                    release_at,
                };
                self.events.push_back(LeaseEvent::HandingOver { epoch: h.epoch });
            }
            Phase::Follower { .. } if self.pending.is_some() => self.shutting_down = true,
            Phase::Follower { .. } => self.stop(),
            Phase::HandingOver { .. } | Phase::Stopped => {}
        }
    }

    /// Applies what became due at `now` (the start of admissions, a lapse).
    pub fn handle_timeout(&mut self, now: Instant) {
        self.advance(now);
    }

    /// When to call again ([`Lease::handle_timeout`] or [`Lease::poll_request`]).
    pub fn poll_timeout(&self) -> Option<Instant> {
        let request_due = |at: Instant| if self.pending.is_some() { None } else { Some(at) };
        match self.phase {
            Phase::Follower { try_at } if !self.shutting_down => request_due(try_at),
            Phase::Follower { .. } | Phase::Stopped => None,
            Phase::Held(h) => {
                let mut next = h.valid_until;
                if !h.started {
                    next = next.min(h.admit_from);
                }
                if let Some(r) = request_due(h.renew_at) {
                    next = next.min(r);
                }
                Some(next)
            }
            Phase::HandingOver { release_at, .. } => request_due(release_at),
        }
    }

    /// The next change to act on.
    pub fn poll_event(&mut self) -> Option<LeaseEvent> {
        self.events.pop_front()
    }

    fn lose(&mut self, h: Held, now: Instant) {
        self.events.push_back(LeaseEvent::Lost {
            epoch: h.epoch,
            was_admitting: h.started,
        });
        self.pending = None;
        self.phase = Phase::Follower { try_at: now };
    }

    fn stop(&mut self) {
        self.pending = None;
        self.phase = Phase::Stopped;
        self.events.push_back(LeaseEvent::Stopped);
    }

    fn advance(&mut self, now: Instant) -> Instant {
        let now = now.max(self.last_now);
        self.last_now = now;
        match self.phase {
            Phase::Held(h) if now >= h.valid_until => self.lose(h, now),
            Phase::Held(mut h) if !h.started && now >= h.admit_from => {
                h.started = true;
                self.phase = Phase::Held(h);
                self.events.push_back(LeaseEvent::StartAdmitting { epoch: h.epoch });
            }
            Phase::HandingOver { held, .. } if now >= held.valid_until && self.pending.is_none() => {
                // It lapsed before the release was sent: nothing to release.
                self.stop();
            }
            _ => {}
        }
        now
    }
}
