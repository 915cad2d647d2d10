//! What every tool promises an assistant about the shape and size of its answers.
//!
//! - [`ANSWER_BUDGET_BYTES`]: a tool's default answer — the whole `tools/call` result,
//!   text and structured content together, as compact JSON — fits in 16 KB, so a list of
//!   titles never costs a model a large share of its context. Going further is the
//!   assistant's choice (`limit`, `offset`, a continuation, a text page's `length`), and
//!   the text says how many more there are and how to get them.
//! - [`output`]: every tool declares an `outputSchema`, and its `structuredContent`
//!   validates against it (`server/tests/answers.rs` checks both on the fakes, for every
//!   connector's tools).
//!
//! What this module does not do: cut answers (each tool pages its own answer, with its
//! platform's paging).

use std::sync::Arc;

use rmcp::model::JsonObject;
use rmcp::schemars::JsonSchema;

/// The most a tool's default answer may take, as compact JSON of the whole result.
pub const ANSWER_BUDGET_BYTES: usize = 16 * 1024;

/// The output schema of a tool whose `structuredContent` is a `T` (the serialized form:
/// what `Serialize` writes, draft 2020-12, as rmcp publishes schemas).
pub fn output<T: JsonSchema + 'static>() -> Arc<JsonObject> {
    rmcp::handler::server::tool::schema_for_output::<T>()
}

/// The JSON Schema `format`s every validator knows (draft 2020-12's registry); any other
/// (`uint32`, `int64`, …, which schemars writes for Rust's number types) makes clients
/// print a warning per property, or refuse the schema.
const REGISTERED_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// `schema` rewritten into the subset every major MCP client and model provider
/// accepts, meaning the same for every value a tool takes or gives:
///
/// - only registered `format`s: any other is dropped — an unsigned integer's `uint*`
///   too, with the `minimum: 0` that only restates it (a count or a position is never
///   below 0, and the server refuses one: `mcp/arguments.rs` reads the declared schema;
///   about 300 bytes of `tools/list`); a minimum of its own stays;
/// - a description's line breaks (where its doc comment wrapped) are spaces;
/// - one `type` per schema: an optional value's `["integer", "null"]` becomes
///   `"integer"`, and `anyOf: [X, {"type": "null"}]` becomes `X`;
/// - no `default: null` (an optional argument is simply not required) and no `null` in
///   an `enum`;
/// - a property that could be `null` is not `required`: the server leaves a null field
///   out of its structured content
///   ([`crate::call::without_nulls`]) rather than sending it.
///
/// The server itself keeps reading the schemas as the tools declare them (the argument
/// check needs to know an integer is a `u32`); this is what `tools/list` shows.
pub fn portable(schema: &mut JsonObject) {
    // The draft is MCP's default (2020-12); saying so in every schema costs every
    // `tools/list` a few kilobytes.
    if schema.get("$schema").and_then(serde_json::Value::as_str) == Some("https://json-schema.org/draft/2020-12/schema")
    {
        schema.remove("$schema");
    }
    portable_schema(schema, false);
}

/// Whether `meaning` only restates `value` (`Document`: "Documents"), ignoring case,
/// punctuation and a plural `s`.
fn restates(value: &str, meaning: &str) -> bool {
    let plain = |t: &str| {
        t.chars()
            .filter(|c| c.is_alphanumeric())
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let (v, m) = (plain(value), plain(meaning));
    m == v || m.strip_suffix('s') == Some(v.as_str())
}

/// Makes `schema` portable (see [`portable`]); `defined` for an entry of `$defs`, which a
/// property refers to with a description of its own.
fn portable_schema(schema: &mut JsonObject, defined: bool) {
    described_choice_as_enum(schema, defined);
    without_null(schema);
    plain_description_and_format(schema);
    nullable_not_required(schema);
    portable_inside(schema);
}

/// A choice of string constants, each described (schemars' form for a Rust enum), as one
/// `enum` whose description names each value: `oneOf` is what some providers refuse, and
/// the form took four times the bytes. A meaning that only restates its value is left
/// out, and so is a defined type's own description (what the choice is for is said by the
/// property that refers to it).
fn described_choice_as_enum(schema: &mut JsonObject, defined: bool) {
    use serde_json::Value;
    let Some(Value::Array(options)) = schema.get("oneOf") else {
        return;
    };
    if options.is_empty() || !options.iter().all(|o| o.get("const").is_some_and(Value::is_string)) {
        return;
    }
    let values: Vec<Value> = options.iter().filter_map(|o| o.get("const").cloned()).collect();
    let meanings: Vec<String> = options
        .iter()
        .filter_map(|o| {
            let value = o.get("const")?.as_str()?;
            let meaning = o.get("description").and_then(Value::as_str)?;
            (!restates(value, meaning)).then(|| format!("`{value}`: {}", meaning.trim_end_matches('.')))
        })
        .collect();
    schema.remove("oneOf");
    schema.insert("type".into(), Value::from("string"));
    schema.insert("enum".into(), Value::Array(values));
    if defined {
        schema.remove("description");
    }
    if !meanings.is_empty() {
        let mut description = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if !description.is_empty() {
            description.push(' ');
        }
        description.push_str(&meanings.join("; "));
        description.push('.');
        schema.insert("description".into(), Value::from(description));
    }
}

/// One type, without null: a null type, option, enum value or default goes, and a choice
/// left with one option is that option.
fn without_null(schema: &mut JsonObject) {
    use serde_json::Value;
    if let Some(Value::Array(types)) = schema.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            schema.insert("type".into(), only);
        }
    }
    for key in ["anyOf", "oneOf"] {
        let Some(Value::Array(options)) = schema.get_mut(key) else {
            continue;
        };
        options.retain(|o| !is_null_schema(o));
        if options.len() == 1 {
            let Some(Value::Object(only)) = options.pop() else {
                continue;
            };
            schema.remove(key);
            for (k, v) in only {
                schema.entry(k).or_insert(v);
            }
        }
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    if schema.get("default").is_some_and(Value::is_null) {
        schema.remove("default");
    }
    schema.remove("nullable");
}

/// A description on one line, and only the formats every client knows (an unsigned
/// integer's format goes with the minimum 0 it implies).
fn plain_description_and_format(schema: &mut JsonObject) {
    use serde_json::Value;
    if let Some(Value::String(d)) = schema.get_mut("description")
        && d.contains('\n')
    {
        *d = d.replace('\n', " ");
    }
    if let Some(format) = schema.get("format").and_then(Value::as_str)
        && !REGISTERED_FORMATS.contains(&format)
    {
        if format.starts_with("uint") && schema.get("minimum").and_then(Value::as_u64) == Some(0) {
            schema.remove("minimum");
        }
        schema.remove("format");
    }
}

/// A property that may be null is left out instead, so it is not required.
fn nullable_not_required(schema: &mut JsonObject) {
    use serde_json::Value;
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    let nullable: Vec<String> = properties
        .iter()
        .filter(|(_, s)| may_be_null(s))
        .map(|(name, _)| name.clone())
        .collect();
    if !nullable.is_empty()
        && let Some(Value::Array(required)) = schema.get_mut("required")
    {
        required.retain(|r| r.as_str().is_none_or(|r| !nullable.iter().any(|n| n == r)));
    }
}

/// The schemas inside, each made portable in turn.
fn portable_inside(schema: &mut JsonObject) {
    use serde_json::Value;
    for key in ["properties", "$defs", "definitions", "patternProperties"] {
        let defined = matches!(key, "$defs" | "definitions");
        if let Some(Value::Object(map)) = schema.get_mut(key) {
            for sub in map.values_mut() {
                if let Value::Object(sub) = sub {
                    portable_schema(sub, defined);
                }
            }
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "contains",
        "unevaluatedProperties",
    ] {
        if let Some(Value::Object(sub)) = schema.get_mut(key) {
            portable_schema(sub, false);
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems"] {
        if let Some(Value::Array(list)) = schema.get_mut(key) {
            for sub in list {
                if let Value::Object(sub) = sub {
                    portable_schema(sub, false);
                }
            }
        }
    }
}

/// `schema`, an output schema, as `tools/list` shows it: without the descriptions of its
/// fields, `required`, bounds and defaults. The field names, the tool's description and the
/// answer's text say what the structured content holds; the descriptions, written for
/// the code, were half of every output schema and a quarter of `tools/list`, and which
/// fields are always present is checked by the server's own tests against the full
/// declaration (`server/tests/answers.rs`), not asked of every client (both stay in the
/// source and the docs). Below the root, a nested object's or list's `type` is left out
/// where its `properties` or `items` already say it (about 1.5 KB of `tools/list`; they
/// apply to that type only, so what validated still does).
pub fn compact_output(schema: &mut JsonObject) {
    fn strip(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::Object(o) => {
                // Words, requirements, bounds and defaults check what a caller sends; an
                // output schema only names what comes back. (A property of that name is
                // an object, and stays.)
                o.retain(|k, v| {
                    let annotation = match k.as_str() {
                        "description" => v.is_string(),
                        "required" => v.is_array(),
                        "minimum" | "maximum" => v.is_number(),
                        "default" => !v.is_object(),
                        _ => false,
                    };
                    !annotation
                });
                // The type its keyword implies. (A property named `type` is an object.)
                let implied = match o.get("type").and_then(serde_json::Value::as_str) {
                    Some("object") => o.get("properties").is_some_and(serde_json::Value::is_object),
                    Some("array") => o.get("items").is_some_and(serde_json::Value::is_object),
                    _ => false,
                };
                if implied {
                    o.remove("type");
                }
                o.values_mut().for_each(strip);
            }
            serde_json::Value::Array(items) => items.iter_mut().for_each(strip),
            _ => {}
        }
    }
    for (key, value) in schema.iter_mut() {
        if key != "description" {
            strip(value);
        }
    }
    schema.remove("required");
    inline_single_use(schema);
}

/// The definitions of `schema` that one reference uses, written where it is: the same
/// schema, without the definition's name twice and the reference (the `$defs` of most
/// tools are each used once; about 2 KB of `tools/list`).
fn inline_single_use(schema: &mut JsonObject) {
    use serde_json::Value;
    fn refs(v: &Value, name: &str) -> usize {
        match v {
            Value::Object(o) => {
                let own = usize::from(o.len() == 1 && o.get("$ref").and_then(Value::as_str) == Some(name));
                own + o.values().map(|v| refs(v, name)).sum::<usize>()
            }
            Value::Array(a) => a.iter().map(|v| refs(v, name)).sum(),
            _ => 0,
        }
    }
    fn replace(v: &mut Value, name: &str, with: &mut Option<Value>) {
        match v {
            Value::Object(o) if o.len() == 1 && o.get("$ref").and_then(Value::as_str) == Some(name) => {
                if let Some(def) = with.take() {
                    *v = def;
                }
            }
            Value::Object(o) => o.values_mut().for_each(|v| replace(v, name, with)),
            Value::Array(a) => a.iter_mut().for_each(|v| replace(v, name, with)),
            _ => {}
        }
    }
    loop {
        let Some(Value::Object(defs)) = schema.get("$defs") else {
            return;
        };
        let whole = Value::Object(schema.clone());
        let once = defs.iter().find_map(|(key, def)| {
            let name = format!("#/$defs/{key}");
            (refs(&whole, &name) == 1 && refs(def, &name) == 0).then(|| (key.clone(), name))
        });
        let Some((key, name)) = once else {
            return;
        };
        let Some(Value::Object(defs)) = schema.get_mut("$defs") else {
            return;
        };
        let mut def = defs.remove(&key);
        if defs.is_empty() {
            schema.remove("$defs");
        }
        for value in schema.values_mut() {
            replace(value, &name, &mut def);
        }
    }
}

/// Whether `schema` admits only `null`.
fn is_null_schema(schema: &serde_json::Value) -> bool {
    schema.get("type").is_some_and(|t| t == "null") || schema.get("const").is_some_and(serde_json::Value::is_null)
}

/// Whether `schema` (before [`portable`]) admits `null`.
fn may_be_null(schema: &serde_json::Value) -> bool {
    use serde_json::Value;
    match schema.get("type") {
        Some(Value::Array(types)) if types.iter().any(|t| t == "null") => return true,
        Some(Value::String(t)) if t == "null" => return true,
        _ => {}
    }
    ["anyOf", "oneOf"].iter().any(|key| {
        schema
            .get(*key)
            .and_then(Value::as_array)
            .is_some_and(|options| options.iter().any(is_null_schema))
    })
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    fn portable_of(v: Value) -> Value {
        let mut o = v.as_object().cloned().expect("an object");
        portable(&mut o);
        Value::Object(o)
    }

    #[test]
    fn a_defined_choice_is_described_by_the_meanings_that_say_more_than_the_value() {
        let s = portable_of(json!({
            "type": "object",
            "properties": {"kind": {"$ref": "#/$defs/Kind", "description": "Only this kind."}},
            "$defs": {"Kind": {"description": "Kinds of entity.", "oneOf": [
                {"const": "Meeting", "description": "Meetings (a recording matches as its meeting)."},
                {"const": "Document", "description": "Documents."}
            ]}}
        }));
        assert_eq!(
            s["$defs"]["Kind"],
            json!({"type": "string", "enum": ["Meeting", "Document"],
                   "description": "`Meeting`: Meetings (a recording matches as its meeting)."})
        );
        assert_eq!(s["properties"]["kind"]["description"], json!("Only this kind."));
        assert!(restates("water_board", "Water boards") && !restates("any", "Every source"));
    }

    #[test]
    fn an_optional_unsigned_integer_becomes_one_type_and_keeps_its_own_bounds() {
        let s = portable_of(json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "properties": {
                "limit": {"type": ["integer", "null"], "format": "uint32", "default": null, "maximum": 250},
                "offset": {"type": "integer", "format": "uint32", "minimum": 3},
                "page": {"type": "integer", "format": "uint64", "minimum": 0, "description": "A page,\nfrom 0."},
                "when": {"type": ["string", "null"], "format": "date"},
                "signed": {"type": "integer", "format": "int64"}
            }
        }));
        assert_eq!(
            s,
            json!({
                "type": "object",
                "properties": {
                    "limit": {"type": "integer", "maximum": 250},
                    "offset": {"type": "integer", "minimum": 3},
                    "page": {"type": "integer", "description": "A page, from 0."},
                    "when": {"type": "string", "format": "date"},
                    "signed": {"type": "integer"}
                }
            })
        );
    }

    #[test]
    fn a_nullable_reference_becomes_the_reference_and_is_not_required() {
        let s = portable_of(json!({
            "type": "object",
            "properties": {
                "motion": {"anyOf": [{"$ref": "#/$defs/Motion"}, {"type": "null"}], "description": "d"},
                "kind": {"type": ["string", "null"], "enum": ["a", "b", null]},
                "name": {"type": "string"}
            },
            "required": ["motion", "kind", "name"],
            "$defs": {"Motion": {"type": "object", "properties": {"n": {"type": ["integer", "null"], "format": "uint"}}}}
        }));
        assert_eq!(
            s["properties"]["motion"],
            json!({"$ref": "#/$defs/Motion", "description": "d"})
        );
        assert_eq!(s["properties"]["kind"], json!({"type": "string", "enum": ["a", "b"]}));
        assert_eq!(s["required"], json!(["name"]));
        assert_eq!(s["$defs"]["Motion"]["properties"]["n"], json!({"type": "integer"}));
    }

    #[test]
    fn a_definition_used_once_is_written_where_it_is_used_and_one_used_twice_stays() {
        let mut schema = serde_json::json!({
            "type": "object",
            "$defs": {
                "Once": {"type": "object", "properties": {"inner": {"$ref": "#/$defs/Inner"}}},
                "Inner": {"type": "object", "properties": {"n": {"type": "integer"}}},
                "Twice": {"type": "object", "properties": {"id": {"type": "string"}}},
                "Tree": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}}}
            },
            "properties": {
                "a": {"$ref": "#/$defs/Once"},
                "b": {"$ref": "#/$defs/Twice"},
                "c": {"type": "array", "items": {"$ref": "#/$defs/Twice"}},
                "d": {"$ref": "#/$defs/Tree"}
            }
        })
        .as_object()
        .cloned()
        .expect("an object");
        compact_output(&mut schema);
        let v = serde_json::Value::Object(schema);
        assert_eq!(
            v["properties"]["a"]["properties"]["inner"]["properties"]["n"]["type"],
            "integer"
        );
        assert_eq!(v["type"], "object", "the root says its type");
        assert!(
            v["properties"]["a"].get("type").is_none() && v["properties"]["c"].get("type").is_none(),
            "a nested object's and a list's type is implied by its keyword: {v}"
        );
        assert_eq!(v["properties"]["b"]["$ref"], "#/$defs/Twice");
        assert_eq!(
            v["properties"]["d"]["$ref"], "#/$defs/Tree",
            "a recursive definition stays"
        );
        let defs: Vec<&String> = v["$defs"].as_object().expect("defs").keys().collect();
        assert_eq!(defs, ["Tree", "Twice"]);
        // The same answers validate against both forms.
        let answer =
            serde_json::json!({"a": {"inner": {"n": 1}}, "b": {"id": "x"}, "d": {"children": [{"children": []}]}});
        let bad = serde_json::json!({"a": {"inner": {"n": "one"}}});
        let compiled = jsonschema::draft202012::new(&v).expect("compiles");
        assert!(compiled.is_valid(&answer));
        assert!(!compiled.is_valid(&bad));
        assert!(!compiled.is_valid(&serde_json::json!({"a": {"inner": {"n": 1.5}}})));
    }

    #[test]
    fn a_property_named_like_a_keyword_is_a_property() {
        let s = portable_of(json!({
            "type": "object",
            "properties": {
                "format": {"type": ["string", "null"]},
                "default": {"type": "string"}
            },
            "required": ["default"]
        }));
        assert_eq!(s["properties"]["format"], json!({"type": "string"}));
        assert_eq!(s["properties"]["default"], json!({"type": "string"}));
        assert_eq!(s["required"], json!(["default"]));
    }
}
