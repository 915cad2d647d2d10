//! [`RenderStore`]: buffer hits' rendered results, made and owned by the MCP side
//! ([`super::Calls`]) and handed down in each tool call for the call layer to look up
//! and fill (the contract, [`RenderCache`], is the call layer's: `crate::call::render_cache`).
//!
//! Why here: the results are MCP results, which the MCP side hands out and its replay
//! layer keeps too. A result handed out or kept here travels up as
//! [`ToolResult::Shared`](crate::call::ToolResult::Shared), so the replay layer shares it
//! instead of serializing a copy, decided from the value (`crate::mcp::replay`).
//!
//! Kept on quick_cache (S3-FIFO eviction: a result asked once leaves before one asked
//! again; no background task; lock-striped shards), each result weighing one, keyed by
//! [`RenderKey`]'s parts (answer id, tool, the call's arguments as written), so a kept
//! result is found only by a call that asked the same of the same answer, in the same
//! words. A lookup borrows the call's key; a keep clones its `Arc`s.
//!
//! Invariants: at most [`MAX_RENDERS`] results are kept. An entry of an answer the buffer
//! no longer holds is never found again (a new answer has a new id) and leaves in turn.
//!
//! What this module does not do: decide what is kept (only buffer hits' results of a
//! tool that renders with a plain function, decided by the call layer), or expire a
//! result by time (its answer's id does: a refreshed answer is another key).

use std::sync::Arc;

use quick_cache::sync::{Cache, DefaultLifecycle};
use quick_cache::{Equivalent, UnitWeighter};

use crate::call::SharedResult;
use crate::call::render_cache::{RenderCache, RenderKey};

/// The most results kept (each within a tool's answer budget, 16 KB by default).
pub const MAX_RENDERS: usize = 1024;

/// [`RenderKey`], owned. Its `Hash` is derived over the same parts in the same order as
/// `RenderKey`'s (a `u64`, then two `str`s), so a borrowed key finds an owned one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    answer: u64,
    tool: &'static str,
    form: Arc<str>,
}

impl Equivalent<Key> for RenderKey<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        self.answer == key.answer && self.tool == key.tool && **self.form == *key.form
    }
}

type Results = Cache<Key, SharedResult, UnitWeighter, foldhash::fast::RandomState>;

/// Buffer hits' rendered results. See the module documentation.
pub struct RenderStore {
    results: Results,
}

impl Default for RenderStore {
    fn default() -> RenderStore {
        RenderStore {
            results: Cache::with(
                MAX_RENDERS,
                MAX_RENDERS as u64,
                UnitWeighter,
                foldhash::fast::RandomState::default(),
                DefaultLifecycle::default(),
            ),
        }
    }
}

impl RenderStore {
    /// Results kept now.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// True when none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl RenderCache for RenderStore {
    fn get(&self, key: RenderKey<'_>) -> Option<SharedResult> {
        self.results.get(&key)
    }

    fn keep(&self, key: RenderKey<'_>, result: &SharedResult) -> bool {
        let owned = Key {
            answer: key.answer,
            tool: key.tool,
            form: Arc::clone(key.form),
        };
        // Every shard admits an entry of weight one: what is inserted is held (until a
        // later keep makes room by evicting it).
        self.results.insert(owned, Arc::clone(result));
        true
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::{CallToolResult, ContentBlock};

    use super::*;

    fn result(text: &str) -> SharedResult {
        Arc::new(CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    fn key<'a>(answer: u64, tool: &'static str, form: &'a Arc<str>) -> RenderKey<'a> {
        RenderKey { answer, tool, form }
    }

    #[test]
    fn a_result_is_found_only_for_its_answer_tool_and_words() {
        let store = RenderStore::default();
        let (a, b): (Arc<str>, Arc<str>) = (
            Arc::from(r#"ob_search{"query":"subsidie*"}"#),
            Arc::from(r#"ob_search{"query":"subsidie?"}"#),
        );
        assert!(store.keep(key(1, "ob_search", &a), &result("one")));
        // Found through a key that shares nothing with the kept one but its text.
        let again: Arc<str> = Arc::from(&*a);
        assert_eq!(store.get(key(1, "ob_search", &again)), Some(result("one")));
        assert_eq!(store.get(key(2, "ob_search", &a)), None, "another answer");
        assert_eq!(store.get(key(1, "ob_document", &a)), None, "another tool");
        assert_eq!(store.get(key(1, "ob_search", &b)), None, "another wording");
    }

    #[test]
    fn at_most_max_renders_are_kept_and_the_newest_is_found() {
        let store = RenderStore::default();
        let form: Arc<str> = Arc::from("q");
        for id in 0..(3 * MAX_RENDERS as u64) {
            store.keep(key(id, "obv_search", &form), &result("r"));
            assert!(store.len() <= MAX_RENDERS, "{} kept after {id}", store.len());
            assert!(store.get(key(id, "obv_search", &form)).is_some(), "{id} kept");
        }
        assert!(store.get(key(0, "obv_search", &form)).is_none(), "the oldest left");
    }
}
