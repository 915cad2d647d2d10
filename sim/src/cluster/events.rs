//! The event handling: each event of the cluster's loop taken by the replica, the lease
//! engine or the platform it is for — a call arriving, routed, forwarded, answered,
//! timed out or given up; a lease step, the engine applying a call, an owner's path
//! waking, sending and hearing the platform; a replica restarting or resuming.
//!
//! Invariants: a paused replica handles nothing of its own until it resumes (its events
//! wait); an event for a process that has since died or restarted (another `era`) is
//! dropped; the platform is done with a call when it answers, whatever became of its
//! sender. What it does not do: route or send (`mod.rs`), or step a lease (`lease.rs`).

use std::sync::Arc;
use std::time::Duration;

use besluitbron_core::Units;
use besluitbron_core::WallTime;
use besluitbron_core::cluster::{Lease, LeaseAnswer, LeaseCall};
use besluitbron_core::dedup::WaiterId;
use besluitbron_core::path::{Attempt, Feedback, Outcome};

use super::{CLIENT_RETRY, CallEnd, Ev, LEASE_TIMEOUT, MS, Sim, new_shell};
use crate::group_buffer::GroupBuffer;

impl Sim {
    /// Takes event `ev` at true `t`.
    pub(super) fn handle(&mut self, t: u64, ev: Ev) -> Result<(), String> {
        if let Some(r) = Self::target(&ev) {
            let rep = &self.replicas[r];
            if rep.alive && t < rep.paused_until {
                // A paused process handles nothing; it looks when it resumes.
                let until = rep.paused_until;
                self.push(until, ev);
                return Ok(());
            }
        }
        match ev {
            Ev::Arrive { call, era } => self.arrive(t, call, era)?,
            Ev::Route { call, at, era } => {
                if self.calls.get(&call).is_some_and(|c| c.era == era) {
                    if self.replicas[at].alive {
                        self.route(t, call, at)?;
                    } else {
                        self.push(t + CLIENT_RETRY, Ev::Arrive { call, era });
                    }
                }
            }
            Ev::Forwarded { call, to, era } => {
                if self.calls.get(&call).is_some_and(|c| c.era == era) {
                    self.at_owner(t, call, to, true)?;
                }
            }
            Ev::Reply { call, era, end } => {
                if self.calls.get(&call).is_some_and(|c| c.era == era) {
                    self.end_call(t, call, end);
                }
            }
            Ev::ForwardTimeout { call, era } => {
                if let Some(c) = self.calls.get_mut(&call).filter(|c| c.era == era) {
                    self.rerouted += 1;
                    let origin = c.origin;
                    c.at_owner = None;
                    self.push(t, Ev::Route { call, at: origin, era });
                }
            }
            Ev::GiveUp(call) => self.give_up(t, call)?,
            Ev::LeaseWake(r) => {
                let due = self.replicas[r].lease_wake.is_some_and(|w| w <= t);
                if self.replicas[r].alive && due {
                    self.replicas[r].lease_wake = None;
                    let now = self.replicas[r].local(t);
                    self.replicas[r].lease.handle_timeout(now);
                    self.lease_step(t, r)?;
                }
            }
            Ev::EngineApply {
                replica,
                era,
                id,
                call,
                token,
                answer_back,
                sent,
            } => self.engine_receives(t, replica, era, id, call, token, answer_back, sent),
            Ev::LeaseAnswer {
                replica,
                era,
                id,
                answer,
            } => {
                let rep = &mut self.replicas[replica];
                if rep.alive && rep.era == era {
                    let now = rep.local(t);
                    rep.lease.on_answer(now, id, answer);
                    self.lease_step(t, replica)?;
                }
            }
            Ev::PathWake { replica, era } => {
                let due = self.replicas[replica].path_wake.is_some_and(|w| w <= t);
                if due && let Some(local) = self.process_local(replica, era, t) {
                    self.replicas[replica].path_wake = None;
                    self.replicas[replica].shell.handle_timeout(local);
                    self.drain(t, replica)?;
                }
            }
            Ev::OwnerSend { replica, era, attempt } => self.owner_send(t, replica, era, attempt)?,
            Ev::PlatformAnswer {
                replica,
                era,
                attempt,
                key_id,
                remaining,
            } => self.platform_answer(t, replica, era, attempt, key_id, remaining)?,
            Ev::Fault(i) => self.fault(t, i)?,
            Ev::Restart(r) => self.restart(t, r)?,
            Ev::Resume(r) => self.resume(t, r)?,
        }
        Ok(())
    }

    /// Call `call` of generation `era` reaches the load balancer (or its scripted
    /// replica): it is routed there, or asked again later when no replica takes it.
    fn arrive(&mut self, t: u64, call: u64, era: u32) -> Result<(), String> {
        let Some(c) = self.calls.get(&call).filter(|c| c.era == era) else {
            return Ok(());
        };
        let target = match c.replica {
            Some(r) => self.replicas[r].alive.then_some(r),
            None => self.balance(c.session),
        };
        match target {
            Some(r) => {
                self.call_mut(call).origin = r;
                self.route(t, call, r)?;
            }
            None => self.push(t + CLIENT_RETRY, Ev::Arrive { call, era }),
        }
        Ok(())
    }

    /// The client gives call `call` up; a dropped forward withdraws it at the owner.
    fn give_up(&mut self, t: u64, call: u64) -> Result<(), String> {
        let Some(c) = self.calls.get(&call) else {
            return Ok(());
        };
        if let Some((r, era)) = c.at_owner
            && let Some(local) = self.process_local(r, era, t)
        {
            self.replicas[r].shell.leave(local, WaiterId(call));
            self.drain(t, r)?;
        }
        self.end_call(t, call, CallEnd::GaveUp);
        Ok(())
    }

    /// A lease call reaches the engine: applied now, or held while the engine is paused
    /// (its answer may then come too late for the shell, which hears `Unreachable`).
    #[allow(clippy::too_many_arguments)]
    fn engine_receives(
        &mut self,
        t: u64,
        replica: usize,
        era: u32,
        id: u64,
        call: LeaseCall,
        token: u64,
        answer_back: bool,
        sent: u64,
    ) {
        if t >= self.engine.paused_until {
            self.engine_apply(t, replica, era, id, call, token, answer_back);
            return;
        }
        // Held by the pause; its answer may now come too late for the shell.
        let at = self.engine.paused_until;
        let in_time = at + self.s.engine_ms * MS <= sent + LEASE_TIMEOUT;
        if answer_back && !in_time {
            self.push(
                (sent + LEASE_TIMEOUT).max(t),
                Ev::LeaseAnswer {
                    replica,
                    era,
                    id,
                    answer: LeaseAnswer::Unreachable,
                },
            );
        }
        self.push(
            at,
            Ev::EngineApply {
                replica,
                era,
                id,
                call,
                token,
                answer_back: answer_back && in_time,
                sent,
            },
        );
    }

    /// The platform answers `attempt`: it is done with the call at this true instant,
    /// and the process that sent it takes the answer, whether it still owns or not (a
    /// success is kept in its buffer).
    fn platform_answer(
        &mut self,
        t: u64,
        replica: usize,
        era: u32,
        attempt: Attempt,
        key_id: (usize, u64),
        remaining: Option<(Units, Duration)>,
    ) -> Result<(), String> {
        // The platform is done with the call at this true instant, whatever
        // became of the replica that sent it.
        self.out.remove(&key_id);
        let rep = &self.replicas[replica];
        if rep.alive && t < rep.paused_until {
            let until = rep.paused_until;
            self.push(
                until,
                Ev::PlatformAnswer {
                    replica,
                    era,
                    attempt,
                    key_id: (usize::MAX, u64::MAX),
                    remaining,
                },
            );
            return Ok(());
        }
        // The process that sent it takes the answer, whether it still owns or not
        // (a success is kept in its buffer).
        if let Some(local) = self.process_local(replica, era, t) {
            let payload: Arc<[u8]> = Arc::from(format!("flight={}", attempt.flight.0).into_bytes());
            self.replicas[replica].shell.on_outcome(
                local,
                WallTime(local.as_millis()),
                attempt,
                Outcome::Success {
                    payload,
                    feedback: Feedback {
                        remaining: remaining.map(|r| r.0),
                        reset: remaining.map(|r| r.1),
                        ..Feedback::default()
                    },
                },
            );
            self.drain(t, replica)?;
        }
        Ok(())
    }

    /// Replica `r` starts again as a new process: a new lease, and a new path over the
    /// buffer the last one left.
    fn restart(&mut self, t: u64, r: usize) -> Result<(), String> {
        let rep = &mut self.replicas[r];
        rep.alive = true;
        rep.era += 1;
        rep.paused_until = 0;
        let now = rep.local(t);
        rep.lease = Lease::new(self.lease_config, now).expect("validated");
        // A new process: a new path over the buffer the last one left.
        let buffer = std::mem::replace(rep.shell.buffer_mut(), GroupBuffer::new(Vec::new()));
        rep.shell = new_shell(self.service, self.local_limit, buffer.into_buffers())?;
        rep.owning = None;
        rep.path_wake = None;
        rep.lease_wake = Some(t);
        self.push(t, Ev::LeaseWake(r));
        Ok(())
    }

    /// Replica `r` is back from a pause: the lease first (it may have lapsed), then the path.
    fn resume(&mut self, t: u64, r: usize) -> Result<(), String> {
        if self.replicas[r].alive {
            let now = self.replicas[r].local(t);
            self.replicas[r].lease.handle_timeout(now);
            self.lease_step(t, r)?;
            if self.replicas[r].shell.owning().is_some() {
                self.replicas[r].shell.handle_timeout(now);
                self.drain(t, r)?;
            }
        }
        Ok(())
    }
}
