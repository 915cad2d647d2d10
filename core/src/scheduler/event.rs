//! One line per scheduler event, for traces and snapshot tests.
//!
//! The format is stable and compact, e.g.
//! `t=1.000s session=b admit cost=1 tokens=0.000 via=fair waited=0.500s`.
//! Costs print without trailing zeros (`1`, `0.125`); tokens always with three decimals.

use std::fmt;

use super::{AdmissionRecord, EntryTicket, QueueFull, SessionKey};
use crate::time::Instant;
use crate::units::Units;

/// Something a scheduler decided, as a trace line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SchedulerEvent {
    /// A call went out.
    Admit(AdmissionRecord),
    /// A call was queued.
    Queue {
        /// When.
        at: Instant,
        /// For whom.
        session: SessionKey,
        /// Its entry.
        entry: EntryTicket,
        /// Units requested.
        cost: Units,
    },
    /// An arrival was refused.
    Refuse {
        /// When.
        at: Instant,
        /// For whom.
        session: SessionKey,
        /// Which bound.
        reason: QueueFull,
        /// When a retry makes sense.
        retry_at: Instant,
    },
    /// A queued entry was withdrawn.
    Cancel {
        /// When.
        at: Instant,
        /// The entry.
        entry: EntryTicket,
    },
}

impl fmt::Display for SchedulerEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SchedulerEvent::Admit(a) => write!(
                f,
                "t={} session={} admit cost={} tokens={} via={} waited={}",
                a.admitted_at,
                a.session,
                a.cost.compact(),
                a.tokens_after,
                a.rule.as_str(),
                Instant::ZERO + a.waited(),
            ),
            SchedulerEvent::Queue {
                at,
                session,
                entry,
                cost,
            } => {
                write!(
                    f,
                    "t={at} session={session} queue cost={} ticket={entry}",
                    cost.compact()
                )
            }
            SchedulerEvent::Refuse {
                at,
                session,
                reason,
                retry_at,
            } => {
                let reason = match reason {
                    QueueFull::Platform => "platform-queue-full",
                    QueueFull::Session => "session-queue-full",
                };
                write!(f, "t={at} session={session} refuse reason={reason} retry_at={retry_at}")
            }
            SchedulerEvent::Cancel { at, entry } => write!(f, "t={at} cancel ticket={entry}"),
        }
    }
}
