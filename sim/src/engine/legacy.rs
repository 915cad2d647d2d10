//! The legacy policy (≤ 1.4.5): calls through [`crate::policy`]'s model of the old gate.

use besluitbron_core::Units;
use besluitbron_core::scheduler::{MAX_REQUEUE_WAIT, queued_again};

use super::{CallState, Engine, Event, Failure};
use crate::platform::Answer;
use crate::policy::{CallId, Gate, GateEvent};

impl Engine<'_> {
    /// Polls station `p`'s legacy gate until it has nothing due, then schedules its next
    /// wake.
    pub(super) fn settle_legacy(&mut self, p: usize) -> Result<(), Box<Failure>> {
        loop {
            self.gates[p].poll(self.now, &mut self.trace, &mut self.out);
            if self.out.is_empty() {
                break;
            }
            self.apply_gate_events(p)?;
        }
        let next = self.gates[p].next_wake(self.now);
        self.set_wake(p, next)
    }

    pub(super) fn apply_gate_events(&mut self, p: usize) -> Result<(), Box<Failure>> {
        // A 429 puts its call back into the gate, which may add events while a batch is
        // applied; they are taken in the next pass.
        while !self.out.is_empty() {
            let batch = std::mem::take(&mut self.out);
            // The gate let the whole batch out at once, before any of its answers came
            // back: each admission is checked against what was known then, so a 429 to
            // the batch's first call does not count against the second.
            for e in &batch {
                if let &GateEvent::Admitted { call, counted, .. } = e {
                    let v = self.view(call);
                    self.checker
                        .on_legacy_admit(self.now, call, v, counted)
                        .map_err(|e| self.fail(e))?;
                }
            }
            for e in batch {
                match e {
                    GateEvent::Admitted { call, charged, .. } => self.send_legacy(call, charged, p)?,
                    GateEvent::Refused { call } => {
                        let v = self.view(call);
                        self.checker.on_leave(call, v);
                        self.calls[call].state = CallState::Refused;
                        self.finish_call(call);
                    }
                }
            }
        }
        Ok(())
    }

    /// Call `call` goes out from station `p`'s gate, charged `charged`.
    pub(super) fn send_legacy(&mut self, call: CallId, charged: Units, p: usize) -> Result<(), Box<Failure>> {
        let now = self.now;
        self.upstream[p] += 1;
        let platform = self.platform_index(self.calls[call].platform);
        let k = self.place_of(platform, p);
        self.platform_upstream[platform] += 1;
        let c = &mut self.calls[call];
        c.admitted_at = Some(now);
        c.charged = charged;
        c.paid = true;
        c.state = CallState::Sent;
        let cost = c.cost;
        let attempt = c.platform_429s + 1;
        let recorded = match c.key.as_deref().cloned() {
            Some(key) => self.recorded_attempt(&key, (1 << 63) | u64::from(call), attempt),
            None => None,
        };
        let host = &mut self.hosts[platform][k];
        let answer = match &recorded {
            Some(r) => self.upstreams[p].receive_recorded(now, cost, host, r),
            None => self.upstreams[p].receive(now, cost, host),
        };
        match answer {
            Answer::Ok { latency, .. } => {
                // A failed answer changes nothing here: nobody else waits for it and
                // nothing is stored; the draw is made all the same, so the failure stream
                // is the fair run's.
                self.draws_failure(platform, k);
                self.schedule(now + latency, Event::LegacyAnswer(call));
            }
            Answer::TooMany { refusal, retry_after } => {
                let c = &mut self.calls[call];
                c.platform_429s += 1;
                c.queued_at = now;
                c.state = CallState::Waiting;
                c.paid = false;
                let reason = refusal.as_str();
                let session = c.session;
                let session = self.session_key(session).clone();
                self.trace.push_fmt(format_args!(
                    "t={now} session={session} platform-429 reason={reason} retry_after={}s cost={} platform={}",
                    retry_after.as_secs(),
                    cost.compact(),
                    self.station_names[p],
                ));
                self.checker.on_retry_after(p, now + retry_after);
                self.gates[p].on_retry_after(now, retry_after);
                // Asked again as the fair path asks again (`queued_again`), so that the
                // policies differ only in the waiting; otherwise the 429 is the call's answer.
                let again = queued_again(
                    matches!(self.gates[p], Gate::Legacy(_)),
                    retry_after,
                    MAX_REQUEUE_WAIT,
                    self.calls[call].platform_429s > 1,
                    &session,
                );
                if !again {
                    self.calls[call].state = CallState::Failed;
                    self.trace.push_fmt(format_args!(
                        "t={now} session={session} failed after platform-429 platform={}",
                        self.station_names[p],
                    ));
                    self.finish_call(call);
                    return Ok(());
                }
                // Back to the gate, which waits out the Retry-After before anything else
                // goes to this platform.
                let v = self.view(call);
                self.checker.on_submit(call, v);
                self.gates[p].submit(now, call, &session, cost, &mut self.trace, &mut self.out);
            }
        }
        Ok(())
    }
}
