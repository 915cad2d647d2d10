//! [`RenderCache`]: where a buffer hit's rendered result is kept, so a repeat of one question
//! on one kept answer is that result again instead of a second rendering. The call
//! layer looks it up and fills it ([`super::Context::answer_kept_asked`]); the MCP side
//! makes and owns the store (`crate::mcp::tool_call::render_store`) and hands it down in each
//! [`Call`](super::Call), as it hands down where progress goes.
//!
//! Why the MCP side owns it: what it keeps are MCP results, handed out to clients and
//! kept by the MCP side's replay layer too; how many are kept, and in what, is the MCP
//! side's to decide. This module is the contract between the two, so the call layer
//! names no MCP module (the layers stay one-way). It comes down in the call rather than
//! being set once in the shared `Context`: the call layer borrows it for one call and
//! never owns it, and a call without one (BesluitBron's maintenance, a completion)
//! keeps nothing.
//!
//! Why a kept result is right for a later call: a tool that renders through it renders
//! with a plain function of the answer, how it was served and what the call asked (a
//! `fn`, which captures nothing else; what was asked is made from the call's arguments),
//! and the key holds all three — the answer by its
//! [`Payload::id`](crate::driver::Payload::id) (a new fetch or a read from disk is a new
//! id), the question by the call's arguments as its asker wrote them ([`Call::form`]:
//! only their object keys sorted). Two wordings that semantic deduplication folds into
//! one buffer key share the answer but never a rendering: each asker reads what it
//! asked, in its own words. Only buffer hits are kept: a fresh answer is said to be
//! fresh, a kept one to come from the buffer.
//!
//! Invariants a store keeps: a result is found only for the key it was kept under; it
//! is bounded (an entry of an answer the buffer no longer holds is never found again
//! and leaves in turn).
//!
//! What this module does not do: decide whether an answer is fresh (the buffer does),
//! keep anything of a failed call, or hold any result itself.
//!
//! [`Call::form`]: super::Call::form

use std::sync::Arc;

use rmcp::model::CallToolResult;

/// A result shared between the render cache (this module) and the tables that keep it too
/// (the replay layer's, in `crate::mcp`): one copy, neither copied nor encoded to be kept.
pub type SharedResult = Arc<CallToolResult>;

/// Which result: the answer's id, the tool, and the call's arguments as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RenderKey<'a> {
    /// The answer's [`Payload::id`](crate::driver::Payload::id).
    pub answer: u64,
    /// The tool.
    pub tool: &'static str,
    /// The tool and its arguments as the asker wrote them ([`super::Call::form`]).
    pub form: &'a Arc<str>,
}

/// Where buffer hits' rendered results are kept. See the module documentation.
pub trait RenderCache: Send + Sync {
    /// The result kept for `key`, if any.
    fn get(&self, key: RenderKey<'_>) -> Option<SharedResult>;

    /// Keeps `result` for `key`; true when it is held now. (Results kept for one key
    /// are alike: each is the same plain function of the key's parts.)
    fn keep(&self, key: RenderKey<'_>, result: &SharedResult) -> bool;
}
