//! What the render tests of the connectors share: the structured content a tool gives
//! for a rendered answer, and a snapshot of text and structure in `snapshots/render/`.

use serde::Serialize;
use serde_json::Value;

use crate::call::Rendered;

/// The structured content for `answer` as the tool gives it.
pub(crate) fn structured(r: &Rendered, answer: &impl Serialize) -> Value {
    let payload = crate::driver::Payload::from_bytes(serde_json::to_vec(answer).expect("encodes"));
    r.structured_value(&payload).expect("a structure")
}

/// Snapshots `r`'s text and structured content as `snapshots/render/<name>.snap`.
pub(crate) fn snapshot(name: &str, r: &Rendered, answer: &impl Serialize) {
    let text = format!(
        "{}\n---\n{}",
        r.text,
        serde_json::to_string_pretty(&structured(r, answer)).expect("json")
    );
    insta::with_settings!({snapshot_path => "../../../snapshots/render", prepend_module_to_snapshot => false}, {
        insta::assert_snapshot!(name, text);
    });
}
