//! What a tool shows: [`Rendered`] (a short text and the structured content), and the
//! shapes every tool error and provenance note take.

use rmcp::model::{CallToolResult, ContentBlock};
use serde_json::Value;

use besluitbron_core::path::Served;

use crate::driver::Payload;
use crate::platforms::http::bounded_text;

/// What a tool shows: a short text and the structured content.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The text an assistant reads first.
    pub text: String,
    /// The structured content.
    pub structured: Structure,
}

/// A tool's structured content.
#[derive(Clone, Debug, PartialEq)]
pub enum Structure {
    /// The kept answer itself (a JSON object), with these fields set on top: taken from
    /// the answer's memo, so a repeat from the buffer encodes nothing again.
    Answer(Vec<(&'static str, Value)>),
    /// A value of its own (a selection from the answer).
    Own(Value),
}

impl Rendered {
    /// Structured content that is the kept answer as it is.
    pub fn answer(text: String) -> Rendered {
        Rendered {
            text,
            structured: Structure::Answer(Vec::new()),
        }
    }

    /// The structured content for the answer kept as `payload`.
    /// Its fields that are `null` are left out ([`without_nulls`]).
    pub fn structured_value(&self, payload: &Payload) -> Result<Value, String> {
        let mut v = match &self.structured {
            Structure::Own(v) => v.clone(),
            Structure::Answer(fields) => {
                let mut v = payload.value().map_err(|e| e.to_string())?;
                if !fields.is_empty() {
                    let object = v.as_object_mut().ok_or("the answer is not a JSON object")?;
                    for (name, value) in fields {
                        object.insert((*name).to_owned(), value.clone());
                    }
                }
                v
            }
        };
        without_nulls(&mut v);
        Ok(v)
    }

    /// The MCP result of a render whose structure is its own (no kept answer behind it).
    pub fn into_own_result(self) -> CallToolResult {
        let mut result = CallToolResult::success(vec![ContentBlock::text(self.text)]);
        if let Structure::Own(mut value) = self.structured {
            without_nulls(&mut value);
            result.structured_content = Some(value);
        }
        result
    }

    /// The MCP result for the answer kept as `payload`: the text as content, the
    /// structure as `structuredContent`.
    ///
    /// Built from `success` rather than `CallToolResult::structured`, which would
    /// serialize the whole structure into a second text block.
    pub fn into_result(self, payload: &Payload) -> Result<CallToolResult, String> {
        let structured = self.structured_value(payload)?;
        let mut result = CallToolResult::success(vec![ContentBlock::text(self.text)]);
        result.structured_content = Some(structured);
        Ok(result)
    }
}

/// A tool error the assistant reads: `isError: true` with the message as text, bounded
/// and without addresses ([`bounded_text`]): whatever error carried a base URL, a
/// request URL or an assistant's long input, none of it is shown.
pub fn tool_error(message: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(bounded_text(&message.to_string()))])
}

/// A note on where the answer came from, for the text (R-U1).
pub fn provenance(served: Served) -> &'static str {
    match served {
        Served::Cached => " (from BesluitBron's buffer)",
        Served::Coalesced => " (shared with an identical request in progress)",
        Served::Stale => " (the platform failed; this is an older copy from BesluitBron's buffer)",
        Served::Fetched => "",
    }
}

/// `value` without the fields of its objects (at any depth) that are `null`: what a
/// tool's structured content is sent as, since `tools/list` declares (see
/// `connectors::schema::portable`) an optional field
/// as absent rather than as nullable. A `null` inside a list stays.
pub fn without_nulls(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(fields) => {
            fields.retain(|_, v| !v.is_null());
            fields.values_mut().for_each(without_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(without_nulls),
        _ => {}
    }
}
