//! What the engine keeps of a loop or a generated session while it runs: an agent loop's
//! round under way and where its next rounds come from, a generated session's key and
//! time-out. The loops themselves run in `agents.rs`.
//!
//! What this module does not do: draw a round or submit a call.

use std::time::Duration;

use besluitbron_core::SessionKey;

use crate::rng::SimRng;

/// Where a loop's rounds come from.
#[derive(Debug)]
pub(super) enum Rounds {
    /// A named session's plan ([`crate::scenario::AgentPlan`]): the next round's place.
    Listed { agent: u32, next: usize },
    /// A generated session's streams.
    Drawn { group: usize, rng: SimRng, keys: SimRng },
}

/// An agent loop under way.
#[derive(Debug)]
pub(super) struct LiveAgent {
    pub(super) session: u32,
    /// Calls of the round under way that have not ended.
    pub(super) outstanding: u32,
    /// The think time after the round under way.
    pub(super) think: Duration,
    /// Rounds not yet begun.
    pub(super) rounds_left: u32,
    pub(super) rounds: Rounds,
}

impl LiveAgent {
    /// Named agent loop `agent` of `session`, with `rounds` rounds.
    pub(super) fn listed(session: u32, agent: u32, rounds: usize) -> LiveAgent {
        LiveAgent {
            session,
            outstanding: 0,
            think: Duration::ZERO,
            rounds_left: u32::try_from(rounds).unwrap_or(u32::MAX),
            rounds: Rounds::Listed { agent, next: 0 },
        }
    }
}

/// A generated session while it runs.
#[derive(Clone, Debug)]
pub(super) struct LiveSession {
    pub(super) key: SessionKey,
    pub(super) cancel_after: Option<Duration>,
}
