//! The lease: each replica's steps against the simulated lease engine, ownership that
//! begins and ends, and the faults that strike the engine or a replica.

use std::time::Duration;

use besluitbron_core::cluster::{LeaseAnswer, LeaseCall, LeaseEvent};
use besluitbron_core::dedup::WaiterId;

use super::{CLIENT_RETRY, ClusterFault, Ev, LEASE_TIMEOUT, MS, Ownership, Sim};

impl Sim {
    pub(super) fn lease_step(&mut self, t: u64, r: usize) -> Result<(), String> {
        let era = self.replicas[r].era;
        let now = self.replicas[r].local(t);
        while let Some(req) = self.replicas[r].lease.poll_request(now) {
            let arrive = t + self.s.engine_ms * MS;
            let engine_up = arrive >= self.engine.down_until;
            let apply_at = arrive.max(self.engine.paused_until);
            let answered = engine_up && apply_at + self.s.engine_ms * MS <= t + LEASE_TIMEOUT;
            if engine_up {
                self.push(
                    apply_at,
                    Ev::EngineApply {
                        replica: r,
                        era,
                        id: req.id,
                        call: req.call,
                        token: req.token,
                        answer_back: answered,
                        sent: t,
                    },
                );
            }
            if !answered {
                self.push(
                    t + LEASE_TIMEOUT,
                    Ev::LeaseAnswer {
                        replica: r,
                        era,
                        id: req.id,
                        answer: LeaseAnswer::Unreachable,
                    },
                );
            }
        }
        while let Some(e) = self.replicas[r].lease.poll_event() {
            match e {
                LeaseEvent::Acquired { epoch, .. } => {
                    self.replicas[r].owning = Some(self.owners.len());
                    self.owners.push(Ownership {
                        replica: r,
                        epoch: (era, epoch),
                        acquired_ms: t / MS,
                        admitting_ms: None,
                        ended: None,
                    });
                }
                LeaseEvent::StartAdmitting { epoch } => {
                    let checkpoint = self.engine.checkpoint.as_ref();
                    self.replicas[r].shell.take_over(now, epoch, checkpoint);
                    if let Some(i) = self.replicas[r].owning {
                        self.owners[i].admitting_ms = Some(t / MS);
                    }
                }
                LeaseEvent::Lost { .. } => self.end_ownership(t, r, "lease lost, as it noticed")?,
                LeaseEvent::HandingOver { .. } => self.end_ownership(t, r, "shutdown")?,
                LeaseEvent::Stopped => {
                    self.end_ownership(t, r, "released")?;
                    self.replicas[r].alive = false;
                }
            }
        }
        if let Some(next) = self.replicas[r].lease.poll_timeout() {
            let rep = &mut self.replicas[r];
            let at = rep.true_at(next).max(t + 1);
            if rep.lease_wake.is_none_or(|p| p <= t || p > at) {
                rep.lease_wake = Some(at);
                self.push(at, Ev::LeaseWake(r));
            }
        }
        Ok(())
    }

    /// The replica stops owning: its shell hands back every call waiting there, to be
    /// asked again at its origin; the path and its buffer stay, calls out finish.
    pub(super) fn end_ownership(&mut self, t: u64, r: usize, why: &'static str) -> Result<(), String> {
        if let Some(i) = self.replicas[r].owning.take() {
            self.owners[i].ended = Some((t / MS, why));
        }
        let rep = &mut self.replicas[r];
        if rep.shell.owning().is_none() {
            return Ok(());
        }
        let now = rep.local(t);
        rep.shell.end_ownership(now);
        self.drain(t, r)
    }

    #[allow(clippy::too_many_arguments)]
    pub(super) fn engine_apply(
        &mut self,
        t: u64,
        replica: usize,
        era: u32,
        id: u64,
        call: LeaseCall,
        token: u64,
        back: bool,
    ) {
        if t < self.engine.down_until {
            return;
        }
        let mine = self
            .engine
            .key
            .is_some_and(|(o, g, tk, _)| o == replica && g == era && tk == token);
        let expiry = t + self.s.ttl_ms * MS;
        let held_for = self.engine.key.map(|k| Duration::from_nanos(k.3.saturating_sub(t)));
        let granted = match call {
            LeaseCall::Acquire if self.engine.key.is_none() => {
                self.engine.key = Some((replica, era, token, expiry));
                true
            }
            LeaseCall::Renew if mine => {
                self.engine.key = Some((replica, era, token, expiry));
                // The owner writes its usage checkpoint with each renewal.
                let rep = &self.replicas[replica];
                if rep.alive && rep.era == era && rep.shell.owning().is_some() {
                    self.engine.checkpoint = Some(rep.shell.path().usage_checkpoint());
                }
                true
            }
            LeaseCall::Release if mine => {
                self.engine.key = None;
                true
            }
            _ => false,
        };
        if back {
            self.push(
                t + self.s.engine_ms * MS,
                Ev::LeaseAnswer {
                    replica,
                    era,
                    id,
                    answer: match (granted, call, held_for) {
                        (true, ..) => LeaseAnswer::Granted,
                        // `SET NX` refused: the script answers the holder's `PTTL`.
                        (false, LeaseCall::Acquire, Some(d)) => LeaseAnswer::HeldFor(d),
                        (false, ..) => LeaseAnswer::Refused,
                    },
                },
            );
        }
    }

    pub(super) fn current_owner(&self) -> Option<usize> {
        self.engine.key.map(|(r, ..)| r).filter(|&r| self.replicas[r].alive)
    }

    pub(super) fn fault(&mut self, t: u64, i: usize) -> Result<(), String> {
        match self.s.faults[i] {
            ClusterFault::CrashOwner { restart_after_s, .. } => {
                let Some(r) = self.current_owner() else { return Ok(()) };
                if let Some(o) = self.replicas[r].owning.take() {
                    self.owners[o].ended = Some((t / MS, "crashed"));
                }
                let era = self.replicas[r].era;
                // The process is gone, its path with it (a restart makes a new one over its
                // buffer).
                self.replicas[r].alive = false;
                // Calls whose origin died: their forwards are dropped (withdrawn at the
                // owner) and their clients ask again elsewhere.
                let ids: Vec<u64> = self.calls.keys().copied().collect();
                for &call in &ids {
                    let Some(c) = self.calls.get(&call) else { continue };
                    if c.origin != r {
                        continue;
                    }
                    if let Some((h, g)) = c.at_owner
                        && let Some(local) = self.process_local(h, g, t)
                    {
                        self.replicas[h].shell.leave(local, WaiterId(call));
                        self.drain(t, h)?;
                    }
                    // A withdrawn call is still under way: its client asks again.
                    let Some(c) = self.calls.get_mut(&call) else { continue };
                    c.at_owner = None;
                    c.era += 1;
                    let era = c.era;
                    self.push(t + CLIENT_RETRY, Ev::Arrive { call, era });
                }
                // Nobody tells the followers: their forwards time out.
                for &call in &ids {
                    if self.calls.get(&call).is_some_and(|c| c.at_owner == Some((r, era))) {
                        self.reroute(t, call, r, false);
                    }
                }
                if let Some(after) = restart_after_s {
                    self.push(t + (after * 1e9) as u64, Ev::Restart(r));
                }
            }
            ClusterFault::PauseOwner { for_s, .. } => {
                if let Some(r) = self.current_owner() {
                    let until = t + (for_s * 1e9) as u64;
                    self.replicas[r].paused_until = until;
                    self.push(until, Ev::Resume(r));
                }
            }
            ClusterFault::ShutdownOwner { restart_after_s, .. } => {
                if let Some(r) = self.current_owner() {
                    let now = self.replicas[r].local(t);
                    self.replicas[r].lease.shutdown(now);
                    self.lease_step(t, r)?;
                    if let Some(after) = restart_after_s {
                        self.push(t + (after * 1e9) as u64, Ev::Restart(r));
                    }
                }
            }
            ClusterFault::EngineRestart { down_s, .. } => {
                self.engine.key = None;
                self.engine.checkpoint = None;
                self.engine.down_until = t + (down_s * 1e9) as u64;
            }
            ClusterFault::KeyLoss { .. } => self.engine.key = None,
            ClusterFault::EnginePause { for_s, .. } => {
                let d = (for_s * 1e9) as u64;
                self.engine.paused_until = t + d;
                if let Some(k) = self.engine.key.as_mut() {
                    k.3 += d;
                }
            }
        }
        Ok(())
    }
}
