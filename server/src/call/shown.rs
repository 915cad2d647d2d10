//! [`Shown`]: results rendered from buffer hits, kept by (answer, tool, question), so a
//! repeat of one question on one kept answer is a clone of its result instead of a
//! second rendering.
//!
//! Why it is safe: a tool that renders through it ([`super::Context::answer_shown`])
//! renders with a plain function of the answer, how it was served and what the call
//! asked (a `fn`, which captures nothing else), and the key holds all three — the
//! answer by its [`Payload::id`](crate::driver::Payload::id) (a new fetch or a read from
//! disk is a new id), the question by the call's canonical arguments. Only buffer hits
//! are kept: a fresh answer is said to be fresh, a kept one to come from the buffer.
//!
//! Invariants: at most [`MAX_SHOWN`] results are kept; the oldest go first. An entry of
//! an answer the buffer no longer holds is never found again and leaves in turn.
//!
//! What this module does not do: decide whether an answer is fresh (the buffer does),
//! or keep anything of a failed call.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex};

use super::SharedResult;

/// The most results kept (each within a tool's answer budget, 16 KB by default).
pub const MAX_SHOWN: usize = 1024;

/// Which result: the answer's id, the tool, and the call's canonical arguments.
type Key = (u64, &'static str, Arc<str>);

/// Results rendered from buffer hits. See the module documentation.
#[derive(Default)]
pub struct Shown {
    table: Mutex<Table>,
}

#[derive(Default)]
struct Table {
    results: HashMap<Key, SharedResult, foldhash::fast::RandomState>,
    /// Keys in the order they were kept: the oldest leaves first.
    order: VecDeque<Key>,
}

impl Shown {
    /// The result kept for `tool` asked `form` on the answer `payload_id`.
    pub fn get(&self, payload_id: u64, tool: &'static str, form: &Arc<str>) -> Option<SharedResult> {
        let key = (payload_id, tool, Arc::clone(form));
        self.table.lock().expect("shown lock").results.get(&key).cloned()
    }

    /// Keeps `result` for `tool` asked `form` on the answer `payload_id`; the first one
    /// kept for a key stays. True when `result` is the one held now.
    pub fn keep(&self, payload_id: u64, tool: &'static str, form: &Arc<str>, result: &SharedResult) -> bool {
        let key = (payload_id, tool, Arc::clone(form));
        let mut table = self.table.lock().expect("shown lock");
        if table.results.contains_key(&key) {
            return false;
        }
        while table.order.len() >= MAX_SHOWN {
            if let Some(oldest) = table.order.pop_front() {
                table.results.remove(&oldest);
            }
        }
        table.order.push_back(key.clone());
        table.results.insert(key, Arc::clone(result));
        true
    }

    /// Results kept now.
    pub fn len(&self) -> usize {
        self.table.lock().expect("shown lock").results.len()
    }

    /// True when none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;

    use super::*;

    fn result(text: &str) -> SharedResult {
        Arc::new(rmcp::model::CallToolResult::success(vec![ContentBlock::text(text)]))
    }

    #[test]
    fn a_result_is_found_only_for_its_answer_tool_and_question() {
        let shown = Shown::default();
        let (a, b): (Arc<str>, Arc<str>) = (Arc::from("q=a"), Arc::from("q=b"));
        assert!(shown.keep(1, "obv_search", &a, &result("one")));
        assert_eq!(shown.get(1, "obv_search", &a), Some(result("one")));
        assert_eq!(shown.get(2, "obv_search", &a), None, "another answer");
        assert_eq!(shown.get(1, "obv_sources", &a), None, "another tool");
        assert_eq!(shown.get(1, "obv_search", &b), None, "another question");
        assert!(!shown.keep(1, "obv_search", &a, &result("two")));
        assert_eq!(
            shown.get(1, "obv_search", &a),
            Some(result("one")),
            "the first kept stays"
        );
    }

    #[test]
    fn at_most_max_shown_are_kept_and_the_oldest_go_first() {
        let shown = Shown::default();
        let form: Arc<str> = Arc::from("q");
        for id in 0..(MAX_SHOWN as u64 + 10) {
            shown.keep(id, "obv_search", &form, &result("r"));
        }
        assert_eq!(shown.len(), MAX_SHOWN);
        assert!(shown.get(0, "obv_search", &form).is_none(), "the oldest left");
        assert!(shown.get(9, "obv_search", &form).is_none());
        assert!(shown.get(10, "obv_search", &form).is_some());
        assert!(shown.get(MAX_SHOWN as u64 + 9, "obv_search", &form).is_some());
    }
}
