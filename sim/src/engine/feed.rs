//! The events a run knows before it starts — every open-loop call's arrival and every
//! agent loop's first round — handed to the loop one at a time, in the order it would
//! have taken them from its heap had they all been scheduled at the start.
//!
//! Each such event has a fixed sequence number: a trace's calls first (by their place in
//! the trace), then the series' calls (series after series), then the named agent loops
//! that have a round, then each group's sessions that have a round (in the order of their
//! first rounds). Events scheduled while the run goes are numbered after all of them
//! ([`Feed::scheduled_from`]). A recorded call carries a rank (the server's order of one
//! instant, [`OpenCall::rank`](crate::scenario::OpenCall::rank)); every other event is
//! [`UNRANKED`]. The loop takes the earliest of the feed's next event and its heap's by
//! (instant, rank, number), so a run takes every event in the same order as when all of
//! these sat in the heap from the start — but the feed holds one next event per source,
//! never a list of the run's calls or sessions.
//!
//! Invariants: each source yields its events in (instant, rank, number) order; numbers
//! are unique and below [`Feed::scheduled_from`].
//!
//! What this module does not do: make calls or draw anything beyond a group's next
//! session ([`crate::scenario::GroupCursor`]).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use besluitbron_core::Instant;

use crate::scenario::{GroupCursor, GroupSession, Workload};

/// One event the run knew before it started.
#[derive(Debug)]
pub enum Start {
    /// A trace's call arrives: its place in [`Workload::open_calls`].
    TraceCall(usize),
    /// A series' call arrives: the series' place and the call's number in it.
    SeriesCall {
        /// The series, in [`Workload::series`].
        series: usize,
        /// The call's number in the series.
        k: u64,
    },
    /// A named agent loop's first round: its place in [`Workload::agents`].
    Agent(u32),
    /// A generated session's first round.
    Session {
        /// The group, in [`Workload::groups`].
        group: usize,
        /// The session, drawn.
        session: GroupSession,
    },
}

enum Source<'w> {
    Trace {
        order: Vec<u32>,
        pos: usize,
    },
    Series {
        series: usize,
        first: u64,
        next: u64,
    },
    Agents {
        order: Vec<(Instant, u64, u32)>,
        pos: usize,
    },
    Group {
        group: usize,
        first: u64,
        cursor: GroupCursor<'w>,
        next: Option<GroupSession>,
    },
}

/// The rank of an event the recording does not order: after those it orders at the same
/// instant, in the order of the events' numbers.
pub const UNRANKED: u64 = u64::MAX;

/// The run's known events, in order.
pub struct Feed<'w> {
    workload: &'w Workload,
    sources: Vec<Source<'w>>,
    heads: BinaryHeap<Reverse<(Instant, u64, u64, usize)>>,
    scheduled_from: u64,
}

impl<'w> Feed<'w> {
    /// The feed of `w`'s known events.
    pub fn new(w: &'w Workload) -> Feed<'w> {
        let mut sources = Vec::new();
        let mut order: Vec<u32> = (0..u32::try_from(w.open_calls.len()).expect("fewer than 2^32 calls")).collect();
        order.sort_by_key(|&i| {
            let c = &w.open_calls[i as usize];
            (c.at, c.rank.unwrap_or(UNRANKED), i)
        });
        sources.push(Source::Trace { order, pos: 0 });
        let mut seq = w.open_calls.len() as u64;
        for (series, s) in w.series.iter().enumerate() {
            sources.push(Source::Series {
                series,
                first: seq,
                next: 0,
            });
            seq += s.len();
        }
        let mut agents = Vec::new();
        for (a, plan) in w.agents.iter().enumerate() {
            if !plan.steps.is_empty() {
                agents.push((plan.start_at, seq, u32::try_from(a).expect("fewer than 2^32 agents")));
                seq += 1;
            }
        }
        agents.sort_unstable();
        sources.push(Source::Agents { order: agents, pos: 0 });
        for (group, g) in w.groups.iter().enumerate() {
            let mut cursor = g.sessions_in_order();
            let next = cursor.next_session();
            sources.push(Source::Group {
                group,
                first: seq,
                cursor,
                next,
            });
            seq += u64::from(g.started());
        }
        let mut feed = Feed {
            workload: w,
            sources,
            heads: BinaryHeap::new(),
            scheduled_from: seq,
        };
        for i in 0..feed.sources.len() {
            feed.push_head(i);
        }
        feed
    }

    /// The first number of events scheduled as the run goes.
    pub fn scheduled_from(&self) -> u64 {
        self.scheduled_from
    }

    /// The next event's instant, rank and number, if any is left.
    pub fn peek(&self) -> Option<(Instant, u64, u64)> {
        self.heads.peek().map(|Reverse((at, rank, seq, _))| (*at, *rank, *seq))
    }

    /// Takes the next event.
    pub fn pop(&mut self) -> Option<(Instant, Start)> {
        let Reverse((at, _, _, i)) = self.heads.pop()?;
        let start = match &mut self.sources[i] {
            Source::Trace { order, pos } => {
                *pos += 1;
                Start::TraceCall(order[*pos - 1] as usize)
            }
            Source::Series { series, next, .. } => {
                *next += 1;
                Start::SeriesCall {
                    series: *series,
                    k: *next - 1,
                }
            }
            Source::Agents { order, pos } => {
                *pos += 1;
                Start::Agent(order[*pos - 1].2)
            }
            Source::Group {
                group, cursor, next, ..
            } => {
                let session = next.take().expect("a head is pushed only for a drawn session");
                *next = cursor.next_session();
                Start::Session { group: *group, session }
            }
        };
        self.push_head(i);
        Some((at, start))
    }

    fn push_head(&mut self, i: usize) {
        let w = self.workload;
        let head = match &self.sources[i] {
            Source::Trace { order, pos } => order.get(*pos).map(|&c| {
                let call = &w.open_calls[c as usize];
                (call.at, call.rank.unwrap_or(UNRANKED), u64::from(c))
            }),
            Source::Series { series, first, next } => {
                let s = &w.series[*series];
                (*next < s.len()).then(|| (s.at(*next), UNRANKED, first + next))
            }
            Source::Agents { order, pos } => order.get(*pos).map(|&(at, seq, _)| (at, UNRANKED, seq)),
            Source::Group { first, next, .. } => next.as_ref().map(|s| (s.at, UNRANKED, first + u64::from(s.ordinal))),
        };
        if let Some((at, rank, seq)) = head {
            self.heads.push(Reverse((at, rank, seq, i)));
        }
    }
}
