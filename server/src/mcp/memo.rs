//! [`Repeats`]: a tool call repeated while its answer is fresh in the buffer is answered
//! from the result the buffer keeps with that answer, without running the tool again.
//!
//! A tool that shows a buffer hit as a finished result kept with the answer
//! (`Besluit::answer_shown`, `answer_shown_for`) leaves, on a buffer hit, a [`Repeat`]:
//! the buffer key its arguments made and how to pick the kept result for what they
//! asked. The handler keeps it under the call's canonical form (tool name and
//! arguments, `replay::fingerprint`); a later call of the same form finds it before the
//! tool runs, and when the buffer's memory layer still holds a fresh answer under the
//! key with a result shown for the same tool and the same question, that result is the
//! answer — counted, and recorded in the call's replay slot, as the tool would have.
//! Anything else (no repeat kept, the answer expired or replaced, nothing shown yet)
//! runs the tool as before.
//!
//! Invariants: a repeat is made only by the tool itself, from arguments it accepted, and
//! the key and question it holds are what those arguments make (none of the seven tools'
//! keys reads the clock or the caller); it is kept only for a call whose one platform
//! answer is the one it picks from (`CallScope::take_repeat`), so a call that built its
//! key from another answer leaves none. The table is bounded in entries and in the size
//! of a canonical form.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use besluitbron_core::cache::CacheKey;
use rmcp::model::CallToolResult;

use crate::driver::SharedPayload;

/// Most repeats kept; the table is emptied when it is full (the tools then leave them
/// again on their next buffer hit).
const MAX_REPEATS: usize = 4_096;
/// The longest canonical form a repeat is kept under.
pub const MAX_FORM_BYTES: usize = 1_024;

/// How a kept answer shows to one question: the tool's result, when it kept one for it.
pub type Pick = Box<dyn Fn(&SharedPayload) -> Option<CallToolResult> + Send + Sync>;

/// What a tool's buffer hit leaves for a repeat of the same call.
pub struct Repeat {
    /// The buffer key the call's arguments made (it names the platform).
    pub key: CacheKey,
    /// The tool.
    pub tool: &'static str,
    /// The result kept with the answer for the call's question, if any.
    pub pick: Pick,
}

/// The repeats kept, by canonical form.
#[derive(Default)]
pub struct Repeats(Mutex<HashMap<String, Arc<Repeat>, foldhash::fast::RandomState>>);

impl Repeats {
    /// The repeat kept for the call of canonical `form`.
    pub fn get(&self, form: &str) -> Option<Arc<Repeat>> {
        self.0.lock().expect("repeats lock").get(form).cloned()
    }

    /// Keeps `repeat` for calls of canonical `form` (not one longer than
    /// [`MAX_FORM_BYTES`]).
    pub fn keep(&self, form: String, repeat: Repeat) {
        if form.len() > MAX_FORM_BYTES {
            return;
        }
        let mut map = self.0.lock().expect("repeats lock");
        if map.len() >= MAX_REPEATS && !map.contains_key(&form) {
            map.clear();
        }
        map.insert(form, Arc::new(repeat));
    }

    /// Repeats kept now.
    pub fn len(&self) -> usize {
        self.0.lock().expect("repeats lock").len()
    }

    /// True when none is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use besluitbron_core::PlatformId;
    use besluitbron_core::cache::DataClass;

    use super::*;

    fn repeat(id: &str) -> Repeat {
        Repeat {
            key: CacheKey::new(PlatformId::Obv, DataClass::Search, "search").param("q", id),
            tool: "obv_search",
            pick: Box::new(|_| None),
        }
    }

    #[test]
    fn the_table_is_bounded_in_entries_and_in_form_size() {
        let repeats = Repeats::default();
        repeats.keep("x".repeat(MAX_FORM_BYTES + 1), repeat("long"));
        assert!(repeats.is_empty(), "a form over the bound is not kept");
        for i in 0..MAX_REPEATS {
            repeats.keep(format!("obv_search{{\"query\":\"{i}\"}}"), repeat(&i.to_string()));
        }
        assert_eq!(repeats.len(), MAX_REPEATS);
        // The same form again replaces its own entry.
        repeats.keep("obv_search{\"query\":\"0\"}".into(), repeat("0"));
        assert_eq!(repeats.len(), MAX_REPEATS);
        repeats.keep("obv_search{\"query\":\"new\"}".into(), repeat("new"));
        assert_eq!(repeats.len(), 1, "a full table is emptied for a new form");
        assert!(repeats.get("obv_search{\"query\":\"new\"}").is_some());
        assert!(repeats.get("obv_search{\"query\":\"1\"}").is_none());
    }
}
