//! The arguments `search` passes on to the platforms: every argument of every keyword
//! search tool, declared once in `search`'s own schema, so that a question one platform's
//! search can narrow (an organisation, a court's kind, a dossier, dates) is asked from
//! `/mcp` without that tool in the list.
//!
//! Each argument keeps its tool's schema (an enum stays an enum, a string keeps its
//! length): where several tools take one name, its type is theirs (two types for one
//! name is a defect of the registry, found by every test that builds a server), its
//! values the union of theirs, its bounds the widest (each tool still checks its own),
//! and its description says what it means to each platform that takes it. A description
//! names the platforms that take an argument unless every one does.
//!
//! What this module does not do: pass anything (the search gives each platform's tool
//! the arguments it declares, and names the rest as ignored by that platform).

use rmcp::model::JsonObject;
use serde_json::{Map, Value};

use crate::connectors::schema::portable;

/// One keyword search tool's arguments: its platform's id and its input schema as the
/// tool declares it.
pub struct Declared<'a> {
    /// The platform's id (`obv`, `ob`, …).
    pub platform: &'a str,
    /// The tool's input schema.
    pub schema: &'a JsonObject,
}

/// The union of `tools`' arguments other than `own` (the ones `search` declares itself),
/// each as a property of `search`'s schema, made portable.
///
/// # Panics
///
/// When two tools declare one name with different types: a defect of the registry.
pub fn union(tools: &[Declared<'_>], own: &[&str]) -> Map<String, Value> {
    let mut by_name: Vec<(String, Vec<(&str, JsonObject)>)> = Vec::new();
    for tool in tools {
        let mut schema = tool.schema.clone();
        portable(&mut schema);
        let defs = schema
            .get("$defs")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
            continue;
        };
        for (name, property) in properties {
            if own.contains(&name.as_str()) {
                continue;
            }
            let property = inlined(property, &defs);
            match by_name.iter_mut().find(|(n, _)| n == name) {
                Some((_, takers)) => takers.push((tool.platform, property)),
                None => by_name.push((name.clone(), vec![(tool.platform, property)])),
            }
        }
    }
    by_name.sort_by(|a, b| a.0.cmp(&b.0));
    let everyone = tools.len();
    by_name
        .into_iter()
        .map(|(name, takers)| {
            let merged = merged(&name, &takers, takers.len() == everyone);
            (name, Value::Object(merged))
        })
        .collect()
}

/// The closed lists of values of `schema`'s arguments (a `$ref` to a definition read),
/// by name: what a tool takes of an argument `search` passes it.
pub fn closed_lists(schema: &JsonObject) -> Vec<(String, Vec<Value>)> {
    let mut schema = schema.clone();
    portable(&mut schema);
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter_map(|(name, p)| {
            let values = inlined(p, &defs).get("enum")?.as_array()?.clone();
            Some((name.clone(), values))
        })
        .collect()
}

/// `schema` with each property's `$ref` replaced by its definition (otherwise as
/// declared): what an argument takes, read without a reference.
pub fn without_refs(schema: &JsonObject) -> JsonObject {
    let defs = schema
        .get("$defs")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let mut out = schema.clone();
    out.remove("$defs");
    if let Some(Value::Object(properties)) = out.get_mut("properties") {
        for property in properties.values_mut() {
            *property = Value::Object(inlined(property, &defs));
        }
    }
    out
}

/// Whether `by`'s argument `name` takes every value `own`'s does (both schemas portable
/// and without references): the same type and format, each of `own`'s values where `by`
/// has a closed list, and as many characters.
pub fn admits(by: &JsonObject, own: &JsonObject, name: &str) -> bool {
    let property = |s: &JsonObject| s.get("properties")?.get(name)?.as_object().cloned();
    let (Some(by), Some(own)) = (property(by), property(own)) else {
        return false;
    };
    let bound = |s: &JsonObject| s.get("maxLength").and_then(Value::as_u64).or_else(|| longest_value(s));
    let values_taken = match (
        own.get("enum").and_then(Value::as_array),
        by.get("enum").and_then(Value::as_array),
    ) {
        (Some(values), Some(taken)) => values.iter().all(|v| taken.contains(v)),
        (None, Some(_)) => false,
        (_, None) => true,
    };
    let long_enough = match (bound(&own), bound(&by)) {
        (Some(own), Some(by)) => by >= own,
        (None, Some(_)) => false,
        (_, None) => true,
    };
    by.get("type") == own.get("type")
        && (own.get("format").is_none() || by.get("format") == own.get("format"))
        && values_taken
        && long_enough
}

/// `property` with a `$ref` to one of `defs` replaced by that definition (the property's
/// own keys, its description first of all, kept).
fn inlined(property: &Value, defs: &Map<String, Value>) -> JsonObject {
    let mut own = property.as_object().cloned().unwrap_or_default();
    let Some(Value::String(reference)) = own.remove("$ref") else {
        return own;
    };
    let mut out = reference
        .strip_prefix("#/$defs/")
        .and_then(|name| defs.get(name))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    out.extend(own);
    out
}

/// One argument's schema from every tool that takes it; `everyone` when every keyword
/// search does.
fn merged(name: &str, takers: &[(&str, JsonObject)], everyone: bool) -> JsonObject {
    let first = &takers[0].1;
    let mut out = JsonObject::new();
    let kind = first.get("type").cloned();
    for (platform, schema) in takers {
        assert_eq!(
            schema.get("type"),
            kind.as_ref(),
            "`{name}`: {platform} declares another type than {}",
            takers[0].0
        );
    }
    if let Some(kind) = kind {
        out.insert("type".into(), kind);
    }
    let all_say = |key: &str| -> Option<Value> {
        let v = first.get(key)?;
        takers.iter().all(|(_, s)| s.get(key) == Some(v)).then(|| v.clone())
    };
    for key in ["format", "minimum", "maximum", "items"] {
        if let Some(v) = all_say(key) {
            out.insert(key.into(), v);
        }
    }
    let widest = takers
        .iter()
        .map(|(_, s)| s.get("maxLength").and_then(Value::as_u64).or_else(|| longest_value(s)))
        .collect::<Option<Vec<u64>>>()
        .and_then(|lengths| lengths.into_iter().max());
    if let Some(max) = widest {
        out.insert("maxLength".into(), max.into());
    }
    let enums: Option<Vec<&Vec<Value>>> = takers
        .iter()
        .map(|(_, s)| s.get("enum").and_then(Value::as_array))
        .collect();
    if let Some(enums) = &enums {
        let mut values: Vec<Value> = Vec::new();
        for v in enums.iter().flat_map(|e| e.iter()) {
            if !values.contains(v) {
                values.push(v.clone());
            }
        }
        out.insert("enum".into(), Value::Array(values));
    }
    let description = described(takers, enums.is_none(), everyone);
    if !description.is_empty() {
        out.insert("description".into(), description.into());
    }
    out
}

/// The length of the longest value of `schema`'s closed list of strings, if it has one
/// (the bound its list sets).
fn longest_value(schema: &JsonObject) -> Option<u64> {
    let values = schema.get("enum")?.as_array()?;
    values
        .iter()
        .map(|v| v.as_str().map(|s| s.chars().count() as u64))
        .max()
        .flatten()
}

/// What an argument means to each platform that takes it: one sentence where they all
/// say the same, else each platform's own, grouped; the platforms named unless every one
/// takes it. `spell_values`: where not every tool has a closed list of values, the lists
/// that exist are written into their platform's description.
fn described(takers: &[(&str, JsonObject)], spell_values: bool, everyone: bool) -> String {
    let mut groups: Vec<(Vec<&str>, String)> = Vec::new();
    for (platform, schema) in takers {
        let mut text = schema
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        if spell_values && let Some(values) = schema.get("enum").and_then(Value::as_array) {
            let values: Vec<String> = values
                .iter()
                .filter_map(Value::as_str)
                .map(|v| format!("`{v}`"))
                .collect();
            if !values.iter().all(|v| text.contains(v.as_str())) {
                if !text.is_empty() && !text.ends_with(['.', ')']) {
                    text.push('.');
                }
                text.push_str(&format!(" One of {}.", values.join(", ")));
            }
        }
        let text = text.trim().to_owned();
        if text.is_empty() {
            // A tool that says nothing of it takes it as the others describe it.
            continue;
        }
        match groups.iter_mut().find(|(_, t)| *t == text) {
            Some((platforms, _)) => platforms.push(platform),
            None => groups.push((vec![platform], text)),
        }
    }
    if groups.len() <= 1 {
        let text = groups.pop().map(|(_, t)| t).unwrap_or_default();
        let platforms: Vec<&str> = takers.iter().map(|(p, _)| *p).collect();
        return if everyone {
            text
        } else {
            format!("{} ({} only)", text, platforms.join(", "))
                .trim_start()
                .to_owned()
        };
    }
    groups
        .iter()
        .map(|(platforms, text)| format!("{}: {}", platforms.join(", "), text))
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(v: Value) -> JsonObject {
        v.as_object().cloned().expect("an object")
    }

    #[test]
    fn one_name_taken_by_several_is_declared_once_with_each_meaning() {
        let a = schema(json!({"type": "object", "properties": {
            "query": {"type": "string", "maxLength": 5},
            "sort": {"type": "string", "enum": ["newest", "relevance"], "maxLength": 16, "description": "Order."},
            "organization": {"type": "string", "maxLength": 100, "description": "A ministry."},
            "offset": {"type": "integer", "description": "From `next_offset`."}
        }}));
        let b = schema(
            json!({"type": "object", "$defs": {"Sort": {"type": "string", "enum": ["date_desc", "relevance"]}},
                "properties": {
                "sort": {"$ref": "#/$defs/Sort", "description": "The order."},
                "organization": {"type": "string", "maxLength": 200, "description": "A council."},
                "offset": {"type": "integer"},
                "kind": {"type": "string", "enum": ["a", "b"], "description": "What."}
            }}),
        );
        let u = union(
            &[
                Declared {
                    platform: "x",
                    schema: &a,
                },
                Declared {
                    platform: "y",
                    schema: &b,
                },
            ],
            &["query"],
        );
        assert_eq!(u.keys().collect::<Vec<_>>(), ["kind", "offset", "organization", "sort"]);
        assert_eq!(u["sort"]["enum"], json!(["newest", "relevance", "date_desc"]));
        assert_eq!(u["sort"]["description"], "x: Order. y: The order.");
        assert_eq!(
            u["organization"]["maxLength"], 200,
            "the widest: each tool checks its own"
        );
        assert_eq!(
            u["offset"]["description"], "From `next_offset`.",
            "every platform takes it, and one without a word of its own means the same"
        );
        assert_eq!(u["kind"]["description"], "What. (y only)");
        assert_eq!(u["kind"]["enum"], json!(["a", "b"]));
    }

    #[test]
    fn values_are_spelt_out_where_not_every_taker_has_a_list() {
        let a = schema(json!({"type": "object", "properties": {
            "kind": {"type": "string", "maxLength": 40, "description": "Free text."}}}));
        let b = schema(json!({"type": "object", "properties": {
            "kind": {"type": "string", "enum": ["documents", "cases"], "description": "What"}}}));
        let u = union(
            &[
                Declared {
                    platform: "x",
                    schema: &a,
                },
                Declared {
                    platform: "y",
                    schema: &b,
                },
            ],
            &[],
        );
        assert!(u["kind"].get("enum").is_none(), "x takes any text");
        assert_eq!(
            u["kind"]["description"],
            "x: Free text. y: What. One of `documents`, `cases`."
        );
        assert_eq!(
            u["kind"]["maxLength"], 40,
            "the widest of x's length and y's longest value"
        );
    }

    #[test]
    fn a_tools_closed_lists_are_read_through_its_definitions() {
        let a = schema(
            json!({"type": "object", "$defs": {"Sort": {"type": "string", "enum": ["a", "b"]}},
            "properties": {"sort": {"$ref": "#/$defs/Sort"}, "q": {"type": "string"}}}),
        );
        assert_eq!(closed_lists(&a), [("sort".to_owned(), vec![json!("a"), json!("b")])]);
    }

    #[test]
    #[should_panic(expected = "declares another type")]
    fn two_types_for_one_name_are_a_defect_of_the_registry() {
        let a = schema(json!({"type": "object", "properties": {"date": {"type": "string"}}}));
        let b = schema(json!({"type": "object", "properties": {"date": {"type": "integer"}}}));
        union(
            &[
                Declared {
                    platform: "x",
                    schema: &a,
                },
                Declared {
                    platform: "y",
                    schema: &b,
                },
            ],
            &[],
        );
    }
}
