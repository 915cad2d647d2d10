//! Agent loops: a round of `fan_out` calls, wait for all of them to end, think, go
//! again. A named session's loop takes its rounds from its plan; a generated session's
//! draws each round when it begins, from the streams its group handed it
//! ([`crate::scenario::GroupSession`]), so a loop holds only the round under way.
//!
//! A generated session runs from its first round until its loop ends: only then does the
//! run know its key and its time-out, and the aggregate of its calls is finished then.
//!
//! Invariants: a round's calls are all outstanding before the first is submitted (a call
//! can end inside its submission), and the next round begins only when every call of
//! the last one has ended; a loop ends once.
//!
//! What this module does not do: decide when a call goes.

use std::time::Duration;

use besluitbron_core::SessionKey;

use super::live::{LiveAgent, LiveSession, Rounds};
use super::{Engine, Event, Failure};
use crate::scenario::{AgentStep, GroupSession};

impl Engine<'_> {
    /// A generated session of `group` begins: its first round goes now.
    pub(super) fn start_session(&mut self, group: usize, session: GroupSession) -> Result<(), Box<Failure>> {
        let g = &self.workload.groups[group];
        if session.rounds == 0 {
            // It makes no call: its row stays empty.
            return Ok(());
        }
        let s = g.first_session + session.n;
        let key = SessionKey::client(&g.name(session.n));
        if let Some(fair) = self.fair.as_mut() {
            fair.generated_index.insert(key.clone(), s);
        }
        self.live_sessions.insert(
            s,
            LiveSession {
                key,
                cancel_after: g.cancel_after,
            },
        );
        self.agg.expect(s, 1);
        let a = self.group_agent_base[group] + session.n;
        self.agents.insert(
            a,
            LiveAgent {
                session: s,
                outstanding: 0,
                think: Duration::ZERO,
                rounds_left: session.rounds,
                rounds: Rounds::Drawn {
                    group,
                    rng: session.rng,
                    keys: session.keys,
                },
            },
        );
        self.round(a)
    }

    /// Agent loop `a` begins its next round.
    pub(super) fn round(&mut self, a: u32) -> Result<(), Box<Failure>> {
        let w = self.workload;
        let agent = self
            .agents
            .get_mut(&a)
            .expect("a round is scheduled only for a loop under way");
        let step = match &mut agent.rounds {
            Rounds::Listed { agent: plan, next } => {
                *next += 1;
                w.agents[*plan as usize].steps[*next - 1].clone()
            }
            Rounds::Drawn { group, rng, keys } => w.groups[*group].draw.round(rng, keys),
        };
        agent.rounds_left = agent.rounds_left.saturating_sub(1);
        agent.think = step.think;
        // The whole round is outstanding before any call is submitted: a call can be
        // answered inside `submit` (a buffer hit, a refusal), and the round ends only when
        // all of its calls are answered.
        agent.outstanding += step.fan_out;
        let session = agent.session;
        let AgentStep {
            platform,
            cost,
            fan_out,
            op,
            keys,
            ..
        } = step;
        for k in 0..fan_out as usize {
            let index = self.next_agent_index;
            self.next_agent_index += 1;
            let key = keys.get(k).map(String::as_str);
            let id = self.calls.next_id();
            let call = self.new_call(id, index, session, platform, cost, op.clone(), key);
            self.calls[call].agent = Some(a);
            self.submit(call)?;
        }
        Ok(())
    }

    /// A call of agent loop `a`'s round under way ended: when it was the round's last,
    /// the next round is scheduled after the think time, or the loop ends.
    pub(super) fn agent_call_ended(&mut self, a: u32) {
        let agent = self
            .agents
            .get_mut(&a)
            .expect("an agent's call ends while its loop runs");
        agent.outstanding -= 1;
        if agent.outstanding > 0 {
            return;
        }
        if agent.rounds_left > 0 {
            let think = agent.think;
            self.schedule(self.now + think, Event::AgentRound(a));
            return;
        }
        let agent = self.agents.remove(&a).expect("just found");
        let s = agent.session;
        if let Some(live) = self.live_sessions.remove(&s)
            && let Some(fair) = self.fair.as_mut()
        {
            fair.generated_index.remove(&live.key);
        }
        self.agg.ended(s);
    }
}
