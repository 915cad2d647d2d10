//! The trace format the simulator replays and the server records: JSON Lines, one call
//! per line.
//!
//! A hand-written trace names calls (`{"at_ms":0,"session":"a","platform":"obv",
//! "cost":1}`); a trace the server recorded (its `Recording` setting) adds what happened
//! to each call: how it ended ([`TraceLine::served`]) and, on the line of the first call
//! of a flight that ended, the flight's attempts at the platform — when each went, how
//! long the platform took and what it answered ([`RecordedAttempt`]). The simulator's
//! `replay` takes both; for a recorded one it uses the platform's recorded latencies
//! and outcomes, so a storm of 429s in the recording is one in the replay.
//!
//! A recorded trace also has *open* lines ([`TraceLine::open`]): written while a request
//! waits, each time an attempt of its flight goes or comes back and the flight goes on, so
//! that what a process admitted is in the recording even when the process is killed before
//! the request ends (its own line would have been written then). A request whose line never
//! follows its open lines was open when its process ended without a word. A request the
//! server's stop cut is written as it ends, `served: cut`.
//!
//! Invariants: every field the server adds is optional, so a hand-written trace parses
//! as before and unknown fields stay errors; a recorded line carries no query text and
//! no session name unless the operator turned that on (`session` and `key` are then
//! salted hashes, which keep equal requests equal within one salt).
//!
//! What this module does not do: read or write files, or hash (the server hashes).

use serde::{Deserialize, Serialize};

use crate::Units;

/// One line of a JSON Lines trace.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TraceLine {
    /// Submission instant in milliseconds: from the trace's start (hand-written), or
    /// since the Unix epoch by the server's clock (recorded; the simulator starts a
    /// recorded trace at its first call).
    pub at_ms: u64,
    /// Session name (`system` is BesluitBron's own session); recorded: a salted hash.
    pub session: String,
    /// Platform id (the short id its connector declares; a trace is text, and the
    /// program reading it knows which platforms it runs).
    pub platform: String,
    /// Cost in units (fractions allowed, at most three decimals).
    pub cost: Units,
    /// Operation label; `text` counts the call at the platform's text host.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// What the call asks (its cache key with the platform and operation); calls with
    /// equal keys are identical requests. Without it every call is distinct. Recorded:
    /// a salted hash of the server's cache key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    /// The call the session makes, on the same platform, as soon as this one is answered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub then: Option<FollowUp>,
    /// Recorded: how the call ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub served: Option<CallEnd>,
    /// Recorded, for a call that left while it waited (`served: left`): how long after
    /// its arrival it left, in ms, so that a replay withdraws it at the same moment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub left_after_ms: Option<u64>,
    /// Recorded: this platform's requests numbered in the order its callers made them,
    /// from 0 in each process (a number missing from the recording is a request whose
    /// line is not in it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seq: Option<u64>,
    /// Recorded: the request's place in the order its budget group's task took the
    /// requests and attempt outcomes of all the group's platforms, counted from 0 in each
    /// process — the order the group's path saw them in, which orders events of one
    /// millisecond (the platforms that share a service share one count; `seq` is each
    /// platform's own).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
    /// Recorded, on the line of a flight's last caller: its attempts at the platform.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<RecordedAttempt>,
    /// Recorded: written while the request waited, when an attempt of its flight went or
    /// came back with the flight going on (a retry follows): the request, and its flight's
    /// attempts so far — one whose outcome had not come back has no `step`. The request's
    /// own line (with `served`) follows when it ends, and stands for it; a request with
    /// open lines and no line of its own was open when its process was killed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub open: bool,
    /// Recorded: how many lines the recorder dropped (its queue was full) since the line
    /// before this one; a process with drops may lack any of its requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped_before: Option<u64>,
    /// Recorded only when the operator turned it on: what the call asked, in clear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
}

impl TraceLine {
    /// Whether the server recorded this line (it says how the call ended, or that it was
    /// still open).
    pub fn is_recorded(&self) -> bool {
        self.served.is_some() || self.open
    }
}

/// A second platform call of one request: made when the first is answered (from the
/// buffer or the platform), by the same session — as a tool that needs two calls makes
/// them (Officiële Bekendmakingen's document: its record, then its text). Not made when
/// the first failed, was refused or was given up.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct FollowUp {
    /// Cost in units.
    pub cost: Units,
    /// Operation label (`text` for a platform's text host).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub op: Option<String>,
    /// What it asks; without it the call is distinct.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
}

/// How a recorded call ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum CallEnd {
    /// From the buffer.
    Cached,
    /// By its own flight to the platform.
    Fetched,
    /// By another identical request's flight.
    Coalesced,
    /// The platform failed; an expired copy stood in.
    Stale,
    /// The platform failed or refused; the caller heard an error.
    Failed,
    /// BesluitBron's queue was full.
    Refused,
    /// The caller gave up while it waited.
    Left,
    /// Several replicas: it went to the replica that owns the platform.
    Moved,
    /// The server stopped while it waited (`left_after_ms` says when, after its arrival).
    Cut,
}

/// What the platform answered one attempt.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Deserialize, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum AttemptOutcome {
    /// An answer.
    Ok,
    /// 429 (or 503 with Retry-After): refused as over the platform's limit.
    RateLimited,
    /// A failure worth another attempt (a 5xx, a reset connection).
    Retryable,
    /// A failure another attempt will not mend (a time-out, an unreadable answer).
    Failed,
}

/// One attempt of a flight at the platform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedAttempt {
    /// When it was sent, on the same clock as [`TraceLine::at_ms`].
    pub at_ms: u64,
    /// How long until the platform's answer (or the failure) came back: from `at_ms` to
    /// the millisecond the server took the outcome in, on the same clock, so that `at_ms +
    /// latency_ms` is that millisecond.
    pub latency_ms: u64,
    /// What it was.
    pub outcome: AttemptOutcome,
    /// The platform's Retry-After, for a refusal that named one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_ms: Option<u64>,
    /// What an answer said of the platform's budget (`RateLimit-Remaining` and
    /// `RateLimit-Reset`), when it said: the server lowers its bucket to it, and so does a
    /// replay.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remaining: Option<RecordedRemaining>,
    /// The outcome's place in its group's count of requests and outcomes taken
    /// ([`TraceLine::step`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub step: Option<u64>,
}

/// The platform's budget as one answer reported it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct RecordedRemaining {
    /// Units left.
    pub units: Units,
    /// Time until the platform's bucket is full again, in ms, if it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_ms: Option<u64>,
}
