//! Tool arguments held to their tool's own input schema before the tool runs, and tool
//! error texts held short and free of addresses.
//!
//! Every string argument of every tool declares a maximum length in its JSON schema
//! (`#[schemars(length(max = N))]`; the contract test fails for one that does not).
//! [`check`] enforces those lengths for every tool at once, in the handler, before the
//! tool's arguments are even deserialized: an over-long value is refused with a short
//! message naming the argument and the limit, never echoing the value, and no platform
//! is asked (so nothing is counted against a platform either). A connector only writes
//! the `length` attribute; it never checks lengths itself.
//!
//! [`bounded_text`] is what every tool error passes through ([`super::tool_error`]): at
//! most [`MAX_ERROR_CHARS`] characters, with any `http://` or `https://` address
//! replaced by `<address>`, so neither a platform's base URL nor a request URL nor an
//! assistant's unbounded input reaches an error text, whichever error carried them.
//!
//! The same pass holds each declared argument to its schema's JSON type, and a number to
//! what its Rust type can hold (a whole number, not below zero for an unsigned one), so
//! the assistant reads which argument is wrong and why (serde's own message for `-1`
//! names no argument); the tools refuse values outside their declared ranges themselves.
//!
//! What this module does not do: check formats or enums (serde and the tools do).

use rmcp::model::JsonObject;
use serde_json::Value;

/// The longest string accepted anywhere in a tool's arguments when the schema names no
/// limit for it (a value of the wrong type, a string inside an object): longer than
/// any declared `maxLength`, short enough that no error message built from it is large.
pub const MAX_ANY_STRING_CHARS: usize = 4096;

/// The longest argument name accepted (every real one is a short identifier).
pub const MAX_NAME_CHARS: usize = 64;

/// The longest tool error text an assistant is sent, in characters.
pub const MAX_ERROR_CHARS: usize = 1000;

/// Checks `arguments` against the string lengths `schema` declares: each property's
/// `maxLength` (for an array, its `items`' `maxLength`), and [`MAX_ANY_STRING_CHARS`] for
/// every other string and [`MAX_NAME_CHARS`] for every object key. Lengths are counted
/// in characters (Unicode scalar values), as JSON Schema counts them.
///
/// Returns the message for the assistant: it names the argument (only a name the schema
/// declares) and the limit, never the value.
pub fn check(schema: &JsonObject, arguments: Option<&JsonObject>) -> Result<(), String> {
    let Some(arguments) = arguments else {
        return Ok(());
    };
    let properties = schema.get("properties").and_then(Value::as_object);
    for (name, value) in arguments {
        let declared = properties.and_then(|p| p.get(name));
        if declared.is_none() && name.chars().count() > MAX_NAME_CHARS {
            return Err(format!(
                "an argument name is longer than {MAX_NAME_CHARS} characters; use the names the tool's schema lists"
            ));
        }
        let label = if declared.is_some() {
            name.as_str()
        } else {
            "an unknown argument"
        };
        check_value(label, declared, value)?;
    }
    Ok(())
}

/// Checks one value against its schema (`None`: no schema of its own).
fn check_value(name: &str, schema: Option<&Value>, value: &Value) -> Result<(), String> {
    let max_length = |schema: Option<&Value>| {
        schema
            .and_then(|s| s.get("maxLength"))
            .and_then(Value::as_u64)
            .map_or(MAX_ANY_STRING_CHARS, |n| usize::try_from(n).unwrap_or(usize::MAX))
    };
    // The declared type first: a value of another type is refused without its content
    // (serde would quote a whole string in its error), before anything inside it is read.
    if let Some(wanted) = schema.and_then(|s| s.get("type"))
        && !value.is_null()
        && !admits(wanted, value)
    {
        return Err(format!(
            "`{name}` must be {}, not {}",
            type_names(wanted),
            json_type(value)
        ));
    }
    match value {
        Value::String(s) => {
            let max = max_length(schema);
            let chars = s.chars().count();
            if chars > max {
                return Err(format!(
                    "`{name}` is {chars} characters long; at most {max} are accepted: shorten it"
                ));
            }
        }
        Value::Array(items) => {
            let item_schema = schema.and_then(|s| s.get("items"));
            for item in items {
                check_value(name, item_schema, item)?;
            }
        }
        Value::Object(fields) => {
            for (key, field) in fields {
                if key.chars().count() > MAX_NAME_CHARS {
                    return Err(format!("`{name}` holds a name longer than {MAX_NAME_CHARS} characters"));
                }
                check_value(name, None, field)?;
            }
        }
        Value::Number(n) => {
            if let Some(schema) = schema {
                check_number(name, schema, n)?;
            }
        }
        Value::Null | Value::Bool(_) => {}
    }
    Ok(())
}

/// Checks a number against what its Rust type can hold, as the schema says it: a whole
/// number for `integer`, and for an unsigned `format` (`uint32`, …) no value below zero
/// or above the type's range — serde's own words for those name no argument. A value
/// inside the type but outside the tool's declared `minimum`/`maximum` is the tool's to
/// refuse, with its own advice (e.g. Officiële Bekendmakingen's 9,999-hit wall).
fn check_number(name: &str, schema: &Value, n: &serde_json::Number) -> Result<(), String> {
    let integer_only = match schema.get("type") {
        Some(Value::String(t)) => t == "integer",
        Some(Value::Array(types)) => types.iter().any(|t| t == "integer") && !types.iter().any(|t| t == "number"),
        _ => false,
    };
    if integer_only && n.as_i64().is_none() && n.as_u64().is_none() {
        return Err(format!("`{name}` must be a whole number, not {n}"));
    }
    let ceiling = match schema.get("format").and_then(Value::as_str) {
        Some("uint8") => u64::from(u8::MAX),
        Some("uint16") => u64::from(u16::MAX),
        Some("uint32") => u64::from(u32::MAX),
        Some("uint64" | "uint") => u64::MAX,
        _ => return Ok(()),
    };
    let declared = |key: &str| schema.get(key).and_then(Value::as_u64);
    if n.as_u64().is_none() {
        let min = declared("minimum").unwrap_or(0);
        return Err(format!("`{name}` must be at least {min}, not {n}"));
    }
    if n.as_u64().is_some_and(|x| x > ceiling) {
        let max = declared("maximum").unwrap_or(ceiling).min(ceiling);
        return Err(format!("`{name}` must be at most {max}, not {n}"));
    }
    Ok(())
}

/// True when a schema's `type` admits `value`'s JSON type (`integer` is a `number`; a
/// number's whole-ness is [`check_number`]'s).
fn admits(types: &Value, value: &Value) -> bool {
    let one = |t: &str| match value {
        Value::Null => t == "null",
        Value::Bool(_) => t == "boolean",
        Value::Number(_) => t == "number" || t == "integer",
        Value::String(_) => t == "string",
        Value::Array(_) => t == "array",
        Value::Object(_) => t == "object",
    };
    match types {
        Value::String(t) => one(t),
        Value::Array(list) => list.iter().filter_map(Value::as_str).any(one),
        _ => true,
    }
}

/// A value's JSON type, as an error names it.
fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// A schema's `type` as words: `integer`, `integer or null`.
fn type_names(types: &Value) -> String {
    match types {
        Value::String(t) => t.clone(),
        Value::Array(types) => types.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "),
        _ => "another type".to_owned(),
    }
}

/// `text` as a tool error may show it: every `http://` or `https://` address replaced by
/// `<address>`, and cut to [`MAX_ERROR_CHARS`] characters (ending in `…`).
pub fn bounded_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_ERROR_CHARS * 4));
    let mut rest = text;
    while let Some(start) = find_address(rest) {
        out.push_str(&rest[..start]);
        out.push_str("<address>");
        let after = &rest[start..];
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"' | ')' | ']' | '>' | '<' | ','))
            .unwrap_or(after.len());
        rest = &after[end..];
        if out.len() > MAX_ERROR_CHARS * 4 {
            break;
        }
    }
    out.push_str(rest);
    if out.chars().count() > MAX_ERROR_CHARS {
        let cut: String = out.chars().take(MAX_ERROR_CHARS - 1).collect();
        return cut + "…";
    }
    out
}

/// Where the first `http://` or `https://` (any case) starts in `text`.
fn find_address(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len()).find(|&i| {
        let rest = &bytes[i..];
        let starts = |p: &[u8]| rest.len() >= p.len() && rest[..p.len()].eq_ignore_ascii_case(p);
        starts(b"http://") || starts(b"https://")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(v: Value) -> JsonObject {
        v.as_object().cloned().expect("an object")
    }

    fn schema() -> JsonObject {
        object(json!({
            "type": "object",
            "properties": {
                "query": {"type": ["string", "null"], "maxLength": 5},
                "ids": {"type": "array", "items": {"type": "string", "maxLength": 3}},
                "limit": {"type": "integer"}
            }
        }))
    }

    #[test]
    fn declared_lengths_are_enforced_in_characters_without_echoing_the_value() {
        let ok = object(json!({"query": "ééééé", "ids": ["abc"], "limit": 3}));
        assert_eq!(check(&schema(), Some(&ok)), Ok(()));
        assert_eq!(check(&schema(), None), Ok(()));
        let long = object(json!({"query": "secret"}));
        assert_eq!(
            check(&schema(), Some(&long)),
            Err("`query` is 6 characters long; at most 5 are accepted: shorten it".to_owned())
        );
        let item = object(json!({"ids": ["abcd"]}));
        assert!(check(&schema(), Some(&item)).unwrap_err().contains("at most 3"));
    }

    #[test]
    fn undeclared_strings_and_names_have_the_general_bounds() {
        let wrong_type = object(json!({"limit": "9".repeat(10)}));
        assert_eq!(
            check(&schema(), Some(&wrong_type)),
            Err("`limit` must be integer, not a string".to_owned())
        );
        let unknown = object(json!({"colour": "r".repeat(MAX_ANY_STRING_CHARS + 1)}));
        assert!(
            check(&schema(), Some(&unknown))
                .unwrap_err()
                .starts_with("`an unknown argument`")
        );
        let long_name = object(json!({"n".repeat(MAX_NAME_CHARS + 1): 1}));
        let message = check(&schema(), Some(&long_name)).unwrap_err();
        assert!(!message.contains(&"n".repeat(MAX_NAME_CHARS)), "{message}");
        let nested = object(json!({"limit": {"k".repeat(MAX_NAME_CHARS + 1): 1}}));
        assert!(check(&schema(), Some(&nested)).is_err());
        let fine = object(json!({"colour": "red"}));
        assert_eq!(check(&schema(), Some(&fine)), Ok(()), "serde names unknown arguments");
    }

    #[test]
    fn numbers_are_held_to_their_type_naming_the_argument() {
        let schema = object(json!({"type": "object", "properties": {
            "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 1, "maximum": 100},
            "offset": {"type": "integer", "format": "uint64"},
            "score": {"type": "number", "minimum": 0.5},
            "flag": {"type": "boolean"}
        }}));
        let ok = object(json!({"limit": 100, "offset": 0, "score": 0.5, "flag": true}));
        assert_eq!(check(&schema, Some(&ok)), Ok(()));
        assert_eq!(check(&schema, Some(&object(json!({"limit": null})))), Ok(()));
        // Inside the type, the tool's own bounds are the tool's to refuse, with its advice.
        assert_eq!(
            check(&schema, Some(&object(json!({"limit": 101, "score": 0.1})))),
            Ok(())
        );
        for (args, said) in [
            (json!({"limit": -1}), "`limit` must be at least 1, not -1"),
            (json!({"offset": -5}), "`offset` must be at least 0, not -5"),
            (
                json!({"limit": 5_000_000_000_u64}),
                "`limit` must be at most 100, not 5000000000",
            ),
            (json!({"limit": 2.5}), "`limit` must be a whole number, not 2.5"),
            (json!({"offset": -1.5}), "`offset` must be a whole number, not -1.5"),
            (json!({"limit": true}), "`limit` must be integer or null, not a boolean"),
            (json!({"limit": [1]}), "`limit` must be integer or null, not an array"),
            (json!({"flag": 1}), "`flag` must be boolean, not a number"),
        ] {
            assert_eq!(
                check(&schema, Some(&object(args.clone()))),
                Err(said.to_owned()),
                "{args}"
            );
        }
    }

    #[test]
    fn error_texts_lose_their_addresses_and_their_length() {
        assert_eq!(
            bounded_text(
                "Tweede Kamer is unreachable (error sending request for url (http://10.0.0.7:9/OData/v4/2.0/Document?$filter=x)): refused"
            ),
            "Tweede Kamer is unreachable (error sending request for url (<address>)): refused"
        );
        assert_eq!(
            bounded_text("see `HTTPS://a.example/b` and https://c"),
            "see `<address>` and <address>"
        );
        assert_eq!(bounded_text("no address here"), "no address here");
        let long = bounded_text(&"x".repeat(1_000_000));
        assert_eq!(long.chars().count(), MAX_ERROR_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(
            bounded_text("httpé://x"),
            "httpé://x",
            "not an address, and no panic on a boundary"
        );
    }
}
