//! [`RenderCache`]: buffer hits' rendered results, made and owned by the MCP side
//! ([`super::Calls`]) and handed down in each tool call for the call layer to look up
//! and fill (the contract, [`Shown`], is the call layer's: `crate::call::render_cache`).
//!
//! Why here: the results are MCP results, which the MCP side hands out and its replay
//! layer keeps too. A result handed out or kept here travels up as
//! [`ToolResult::Shown`](crate::call::ToolResult::Shown), so the replay layer shares it
//! instead of serializing a copy, decided from the value (`crate::mcp::replay`).
//!
//! Kept on quick_cache (S3-FIFO eviction: a result asked once leaves before one asked
//! again; no background task; lock-striped shards), each result weighing one, keyed by
//! [`ShownKey`]'s parts (answer id, tool, the call's arguments as written), so a kept
//! result is found only by a call that asked the same of the same answer, in the same
//! words. A lookup borrows the call's key; a keep clones its `Arc`s.
//!
//! Invariants: at most [`MAX_SHOWN`] results are kept. An entry of an answer the buffer
//! no longer holds is never found again (a new answer has a new id) and leaves in turn.
//!
//! What this module does not do: decide what is kept (only buffer hits' results of a
//! tool that renders with a plain function, decided by the call layer), or expire a
//! result by time (its answer's id does: a refreshed answer is another key).

use std::sync::Arc;

use quick_cache::sync::{Cache, DefaultLifecycle};
use quick_cache::{Equivalent, UnitWeighter};

use crate::call::SharedResult;
use crate::call::render_cache::{Shown, ShownKey};

/// The most results kept (each within a tool's answer budget, 16 KB by default).
pub const MAX_SHOWN: usize = 1024;

/// [`ShownKey`], owned. Its `Hash` is derived over the same parts in the same order as
/// `ShownKey`'s (a `u64`, then two `str`s), so a borrowed key finds an owned one.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    answer: u64,
    tool: &'static str,
    form: Arc<str>,
}

impl Equivalent<Key> for ShownKey<'_> {
    fn equivalent(&self, key: &Key) -> bool {
        self.answer == key.answer && self.tool == key.tool && **self.form == *key.form
    }
}

type Results = Cache<Key, SharedResult, UnitWeighter, foldhash::fast::RandomState>;

/// Buffer hits' rendered results. See the module documentation.
pub struct RenderCache {
    results: Results,
}

impl Default for RenderCache {
    fn default() -> RenderCache {
        RenderCache {
            results: Cache::with(
                MAX_SHOWN,
                MAX_SHOWN as u64,
                UnitWeighter,
                foldhash::fast::RandomState::default(),
                DefaultLifecycle::default(),
            ),
        }
    }
}

impl RenderCache {
    /// Results kept now.
    pub fn len(&self) -> usize {
        self.results.len()
    }

    /// True when none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl Shown for RenderCache {
    fn get(&self, key: ShownKey<'_>) -> Option<SharedResult> {
        self.results.get(&key)
    }

    fn keep(&self, key: ShownKey<'_>, result: &SharedResult) -> bool {
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

    fn key<'a>(answer: u64, tool: &'static str, form: &'a Arc<str>) -> ShownKey<'a> {
        ShownKey { answer, tool, form }
    }

    #[test]
    fn a_result_is_found_only_for_its_answer_tool_and_words() {
        let shown = RenderCache::default();
        let (a, b): (Arc<str>, Arc<str>) = (
            Arc::from(r#"ob_search{"query":"subsidie*"}"#),
            Arc::from(r#"ob_search{"query":"subsidie?"}"#),
        );
        assert!(shown.keep(key(1, "ob_search", &a), &result("one")));
        // Found through a key that shares nothing with the kept one but its text.
        let again: Arc<str> = Arc::from(&*a);
        assert_eq!(shown.get(key(1, "ob_search", &again)), Some(result("one")));
        assert_eq!(shown.get(key(2, "ob_search", &a)), None, "another answer");
        assert_eq!(shown.get(key(1, "ob_document", &a)), None, "another tool");
        assert_eq!(shown.get(key(1, "ob_search", &b)), None, "another wording");
    }

    #[test]
    fn at_most_max_shown_are_kept_and_the_newest_is_found() {
        let shown = RenderCache::default();
        let form: Arc<str> = Arc::from("q");
        for id in 0..(3 * MAX_SHOWN as u64) {
            shown.keep(key(id, "obv_search", &form), &result("r"));
            assert!(shown.len() <= MAX_SHOWN, "{} kept after {id}", shown.len());
            assert!(shown.get(key(id, "obv_search", &form)).is_some(), "{id} kept");
        }
        assert!(shown.get(key(0, "obv_search", &form)).is_none(), "the oldest left");
    }
}
