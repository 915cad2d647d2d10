//! Tool arguments held to their tool's own input schema before the tool runs.
//!
//! Every string argument of every tool declares a maximum length in its JSON schema
//! (`#[schemars(length(max = N))]`; the contract test fails for one that does not).
//! [`Rules::check`] enforces those lengths for every tool at once, in the handler, before
//! the tool's arguments are even deserialized (each tool's [`Rules`] are read from its
//! schema once, at start-up): an over-long value is refused with a short
//! message naming the argument and the limit, never echoing the value, and no platform
//! is asked (so nothing is counted against a platform either). A connector only writes
//! the `length` attribute; it never checks lengths itself.
//!
//! The same pass holds each declared argument to its schema's JSON type, and a number to
//! what its Rust type can hold (a whole number, not below zero for an unsigned one), so
//! the assistant reads which argument is wrong and why (serde's own message for `-1`
//! names no argument); the tools refuse values outside their declared ranges themselves.
//!
//! Before the check, [`Rules::coerce`] reads arguments in the forms clients and models
//! send them: a whole number sent as a string (`"3"`) for an argument declared
//! `integer`, and `"true"`/`"false"` for one declared `boolean`, as the value it spells
//! (some clients send every argument they took from a form as a string); a whole number
//! for an argument declared `string` (`"article": 2`) as its digits; and a float with a
//! zero fraction (`2.0`) for an `integer` as that integer. Anything else is refused by
//! the check, naming the argument.
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

/// What the argument check reads of one tool's input schema, read once (the tool table
/// keeps each tool's): per declared argument its type, length and number bounds, so a
/// call's check looks up no schema keys.
///
/// Invariant: `Rules::of(schema).check(args)` is what reading `schema` afresh for every
/// value says (`tests::reference`, `tests::qc_rules_read_once_check_as_the_schema_does`).
#[derive(Debug, Clone, Default)]
pub struct Rules {
    /// The declared arguments, sorted by name.
    properties: Vec<(String, Rule)>,
}

/// What one schema (a property's, or its `items`') says about a value.
#[derive(Debug, Clone)]
struct Rule {
    /// The JSON types its `type` admits ([`ANY_TYPE`] without a `type`, or one that
    /// is neither a string nor a list), and the words an error names them with.
    types: u8,
    type_words: String,
    /// Its `maxLength`, else [`MAX_ANY_STRING_CHARS`].
    max_chars: usize,
    /// The rule for each item of an array (`None`: items without a schema).
    items: Option<Box<Rule>>,
    /// `integer` without `number` among its types.
    integer_only: bool,
    /// The unsigned `format`'s largest value, with the declared `minimum` and `maximum`.
    unsigned: Option<Unsigned>,
    /// `format: date`: a value that does not fit is told the form, not only the length.
    date: bool,
}

/// An unsigned number's bounds as its schema declares them.
#[derive(Debug, Clone, Copy)]
struct Unsigned {
    ceiling: u64,
    minimum: Option<u64>,
    maximum: Option<u64>,
}

const NULL: u8 = 1;
const BOOLEAN: u8 = 2;
const NUMBER: u8 = 4;
const STRING: u8 = 8;
const ARRAY: u8 = 16;
const OBJECT: u8 = 32;
/// Every JSON type.
const ANY_TYPE: u8 = NULL | BOOLEAN | NUMBER | STRING | ARRAY | OBJECT;

impl Rules {
    /// The rules of the tool whose input schema is `schema`.
    pub fn of(schema: &JsonObject) -> Rules {
        let mut properties: Vec<(String, Rule)> = schema
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.iter().map(|(name, s)| (name.clone(), Rule::of(s))).collect())
            .unwrap_or_default();
        properties.sort_by(|a, b| a.0.cmp(&b.0));
        Rules { properties }
    }

    /// Whether the schema declares an argument named `name`.
    pub fn declares(&self, name: &str) -> bool {
        self.properties.binary_search_by(|(n, _)| n.as_str().cmp(name)).is_ok()
    }

    /// The declared arguments' names, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.properties.iter().map(|(n, _)| n.as_str())
    }

    /// Reads, in `arguments`, a value in the form models send for what the argument
    /// declares: a string that spells a whole number for an argument declared `integer`
    /// (and `true`/`false` for one declared `boolean`) becomes the value it spells; a
    /// whole number for an argument declared `string` (`"article": 2`, `"dossier":
    /// 36200`) becomes its digits; a number with a zero fraction (`2.0`) for one declared
    /// `integer` becomes that integer. Any other value stays as it is, for
    /// [`Rules::check`] to judge (and refuse by name).
    pub fn coerce(&self, arguments: &mut JsonObject) {
        for (name, value) in arguments.iter_mut() {
            let Some(rule) = self.declared(name) else {
                continue;
            };
            match &*value {
                Value::String(s) => {
                    let s = s.trim();
                    if rule.integer_only && rule.types & STRING == 0 {
                        if let Ok(n) = s.parse::<u64>() {
                            *value = Value::from(n);
                        } else if let Ok(n) = s.parse::<i64>() {
                            *value = Value::from(n);
                        }
                    } else if rule.types == BOOLEAN | (rule.types & NULL) && matches!(s, "true" | "false") {
                        *value = Value::Bool(s == "true");
                    }
                }
                // Only a whole number has one written form; `2.50` and `2.5` would not be
                // told apart, so a fraction stays a number and is refused.
                Value::Number(n)
                    if rule.types & NUMBER == 0 && rule.types & STRING != 0 && (n.is_u64() || n.is_i64()) =>
                {
                    *value = Value::String(n.to_string());
                }
                Value::Number(n) if rule.integer_only && !n.is_u64() && !n.is_i64() => {
                    if let Some(whole) = n.as_f64().and_then(integral) {
                        *value = whole;
                    }
                }
                _ => {}
            }
        }
    }

    fn declared(&self, name: &str) -> Option<&Rule> {
        self.properties
            .binary_search_by(|(n, _)| n.as_str().cmp(name))
            .ok()
            .map(|i| &self.properties[i].1)
    }

    /// Checks `arguments` against the string lengths the schema declares: each
    /// property's `maxLength` (for an array, its `items`' `maxLength`), and
    /// [`MAX_ANY_STRING_CHARS`] for every other string and [`MAX_NAME_CHARS`] for every
    /// object key. Lengths are counted in characters (Unicode scalar values), as JSON
    /// Schema counts them.
    ///
    /// Returns the message for the assistant: it names the argument (only a name the
    /// schema declares) and the limit, never the value.
    pub fn check(&self, arguments: Option<&JsonObject>) -> Result<(), String> {
        let Some(arguments) = arguments else {
            return Ok(());
        };
        for (name, value) in arguments {
            let declared = self.declared(name);
            if declared.is_none() && name.len() > MAX_NAME_CHARS && name.chars().count() > MAX_NAME_CHARS {
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
}

impl Rule {
    /// What `schema` says about a value (a schema that is no object says nothing).
    fn of(schema: &Value) -> Rule {
        let types = schema.get("type");
        let (mask, type_words) = match types {
            Some(Value::String(t)) => (type_bit(t), t.clone()),
            Some(Value::Array(list)) => (
                list.iter().filter_map(Value::as_str).fold(0, |m, t| m | type_bit(t)),
                list.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "),
            ),
            Some(_) => (ANY_TYPE, "another type".to_owned()),
            None => (ANY_TYPE, String::new()),
        };
        let integer_only = match types {
            Some(Value::String(t)) => t == "integer",
            Some(Value::Array(list)) => list.iter().any(|t| t == "integer") && !list.iter().any(|t| t == "number"),
            _ => false,
        };
        let ceiling = match schema.get("format").and_then(Value::as_str) {
            Some("uint8") => Some(u64::from(u8::MAX)),
            Some("uint16") => Some(u64::from(u16::MAX)),
            Some("uint32") => Some(u64::from(u32::MAX)),
            Some("uint64" | "uint") => Some(u64::MAX),
            _ => None,
        };
        let declared = |key: &str| schema.get(key).and_then(Value::as_u64);
        Rule {
            types: mask,
            type_words,
            max_chars: declared("maxLength").map_or(MAX_ANY_STRING_CHARS, |n| usize::try_from(n).unwrap_or(usize::MAX)),
            items: schema.get("items").map(|items| Box::new(Rule::of(items))),
            integer_only,
            unsigned: ceiling.map(|ceiling| Unsigned {
                ceiling,
                minimum: declared("minimum"),
                maximum: declared("maximum"),
            }),
            date: schema.get("format").and_then(Value::as_str) == Some("date"),
        }
    }
}

/// The bit of a JSON Schema type name (`integer` is a `number`; an unknown name none).
fn type_bit(t: &str) -> u8 {
    match t {
        "null" => NULL,
        "boolean" => BOOLEAN,
        "number" | "integer" => NUMBER,
        "string" => STRING,
        "array" => ARRAY,
        "object" => OBJECT,
        _ => 0,
    }
}

/// A value's JSON type as a [`type_bit`].
fn value_bit(value: &Value) -> u8 {
    match value {
        Value::Null => NULL,
        Value::Bool(_) => BOOLEAN,
        Value::Number(_) => NUMBER,
        Value::String(_) => STRING,
        Value::Array(_) => ARRAY,
        Value::Object(_) => OBJECT,
    }
}

/// Checks one value against its rule (`None`: no schema of its own).
fn check_value(name: &str, rule: Option<&Rule>, value: &Value) -> Result<(), String> {
    // The declared type first: a value of another type is refused without its content
    // (serde would quote a whole string in its error), before anything inside it is read.
    if let Some(rule) = rule
        && !value.is_null()
        && rule.types & value_bit(value) == 0
    {
        return Err(format!(
            "`{name}` must be {}, not {}",
            rule.type_words,
            json_type(value)
        ));
    }
    match value {
        Value::String(s) => {
            let max = rule.map_or(MAX_ANY_STRING_CHARS, |r| r.max_chars);
            // A string of at most `max` bytes has at most `max` characters.
            if s.len() > max {
                let chars = s.chars().count();
                if chars > max && rule.is_some_and(|r| r.date) {
                    return Err(format!("`{name}` must be a day written YYYY-MM-DD, e.g. 2026-01-31"));
                }
                if chars > max {
                    return Err(format!(
                        "`{name}` is {chars} characters long; at most {max} are accepted: shorten it"
                    ));
                }
            }
        }
        Value::Array(items) => {
            let item_rule = rule.and_then(|r| r.items.as_deref());
            for item in items {
                check_value(name, item_rule, item)?;
            }
        }
        Value::Object(fields) => {
            for (key, field) in fields {
                if key.len() > MAX_NAME_CHARS && key.chars().count() > MAX_NAME_CHARS {
                    return Err(format!("`{name}` holds a name longer than {MAX_NAME_CHARS} characters"));
                }
                check_value(name, None, field)?;
            }
        }
        Value::Number(n) => {
            if let Some(rule) = rule {
                check_number(name, rule, n)?;
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
fn check_number(name: &str, rule: &Rule, n: &serde_json::Number) -> Result<(), String> {
    if rule.integer_only && n.as_i64().is_none() && n.as_u64().is_none() {
        return Err(format!("`{name}` must be a whole number, not {n}"));
    }
    let Some(unsigned) = rule.unsigned else {
        return Ok(());
    };
    match n.as_u64() {
        None => {
            let min = unsigned.minimum.unwrap_or(0);
            Err(format!("`{name}` must be at least {min}, not {n}"))
        }
        Some(x) if x > unsigned.ceiling => {
            let max = unsigned.maximum.unwrap_or(unsigned.ceiling).min(unsigned.ceiling);
            Err(format!("`{name}` must be at most {max}, not {n}"))
        }
        Some(_) => Ok(()),
    }
}

/// `x` as a JSON integer when it is one written with a zero fraction (`2.0`) and within
/// the range a JSON integer holds exactly; else `None`.
fn integral(x: f64) -> Option<Value> {
    // 2^53: beyond it a float no longer holds every integer, so `9007199254740993.0`
    // might not be the number the model meant.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if !x.is_finite() || x.fract() != 0.0 || x.abs() > EXACT {
        return None;
    }
    // Exact by the bound above.
    Some(if x >= 0.0 {
        Value::from(x as u64)
    } else {
        Value::from(x as i64)
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use quickcheck::Arbitrary;
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

    /// The reference model of [`check`]: the schema's JSON read afresh for every value,
    /// as the check did before [`Rules`] read it once.
    mod reference {
        use super::super::{MAX_ANY_STRING_CHARS, MAX_NAME_CHARS, json_type};
        use rmcp::model::JsonObject;
        use serde_json::Value;

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

        fn check_value(name: &str, schema: Option<&Value>, value: &Value) -> Result<(), String> {
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
                    let max = schema
                        .and_then(|s| s.get("maxLength"))
                        .and_then(Value::as_u64)
                        .map_or(MAX_ANY_STRING_CHARS, |n| usize::try_from(n).unwrap_or(usize::MAX));
                    let chars = s.chars().count();
                    let date = schema.and_then(|s| s.get("format")).and_then(Value::as_str) == Some("date");
                    if chars > max && date {
                        return Err(format!("`{name}` must be a day written YYYY-MM-DD, e.g. 2026-01-31"));
                    }
                    if chars > max {
                        return Err(format!(
                            "`{name}` is {chars} characters long; at most {max} are accepted: shorten it"
                        ));
                    }
                }
                Value::Array(items) => {
                    for item in items {
                        check_value(name, schema.and_then(|s| s.get("items")), item)?;
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

        fn check_number(name: &str, schema: &Value, n: &serde_json::Number) -> Result<(), String> {
            let integer_only = match schema.get("type") {
                Some(Value::String(t)) => t == "integer",
                Some(Value::Array(types)) => {
                    types.iter().any(|t| t == "integer") && !types.iter().any(|t| t == "number")
                }
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

        fn type_names(types: &Value) -> String {
            match types {
                Value::String(t) => t.clone(),
                Value::Array(types) => types.iter().filter_map(Value::as_str).collect::<Vec<_>>().join(" or "),
                _ => "another type".to_owned(),
            }
        }
    }

    /// A schema and arguments for it: property names, types, formats, bounds and
    /// lengths drawn near the edges the check cares about.
    #[derive(Clone, Debug)]
    struct Case {
        schema: JsonObject,
        arguments: Option<JsonObject>,
    }

    const NAMES: [&str; 5] = ["query", "limit", "ids", "é", "from"];
    const TYPES: [&str; 8] = [
        "string", "integer", "number", "boolean", "array", "object", "null", "date",
    ];
    const FORMATS: [&str; 6] = ["uint8", "uint16", "uint32", "uint64", "uint", "date"];

    fn pick<'a, T>(g: &mut quickcheck::Gen, items: &'a [T]) -> &'a T {
        g.choose(items).expect("a non-empty list")
    }

    /// A string of [`length`] characters, at most `cap`.
    fn string_of(g: &mut quickcheck::Gen, cap: usize) -> String {
        let chars = length(g).min(cap);
        (0..chars).map(|_| *pick(g, &['a', 'é', '𝄞', ' '])).collect()
    }

    /// A length near 3, near 8, or near a general bound.
    fn length(g: &mut quickcheck::Gen) -> usize {
        let around = *pick(g, &[0usize, 3, 8, MAX_NAME_CHARS, MAX_ANY_STRING_CHARS]);
        (around + usize::from(u8::arbitrary(g) % 3)).saturating_sub(1)
    }

    fn schema_of(g: &mut quickcheck::Gen, depth: u8) -> Value {
        let mut s = serde_json::Map::new();
        match u8::arbitrary(g) % 4 {
            0 => {}
            1 => {
                s.insert("type".into(), json!(pick(g, &TYPES)));
            }
            2 => {
                let n = usize::from(u8::arbitrary(g) % 3) + 1;
                let list: Vec<Value> = (0..n).map(|_| json!(pick(g, &TYPES))).collect();
                s.insert("type".into(), Value::Array(list));
            }
            _ => {
                s.insert("type".into(), json!(u8::arbitrary(g)));
            }
        }
        if bool::arbitrary(g) {
            s.insert("maxLength".into(), json!(*pick(g, &[0u64, 3, 8, 100])));
        }
        if bool::arbitrary(g) {
            s.insert("format".into(), json!(pick(g, &FORMATS)));
        }
        if bool::arbitrary(g) {
            s.insert("minimum".into(), json!(*pick(g, &[0u64, 1, 5])));
        }
        if bool::arbitrary(g) {
            s.insert("maximum".into(), json!(*pick(g, &[10u64, 100, 1_000_000])));
        }
        if depth < 2 && bool::arbitrary(g) {
            s.insert("items".into(), schema_of(g, depth + 1));
        }
        Value::Object(s)
    }

    fn value_of(g: &mut quickcheck::Gen, depth: u8) -> Value {
        let kinds = if depth < 2 { 8 } else { 6 };
        match u8::arbitrary(g) % kinds {
            0 => Value::Null,
            1 => json!(bool::arbitrary(g)),
            2 => json!(*pick(g, &[0i64, 1, -1, 255, 256, 65_536, 4_294_967_296, i64::MIN])),
            3 => json!(*pick(g, &[2.5f64, -1.5, 1e30, 0.0])),
            4 => json!(u64::MAX),
            5 => Value::String(string_of(g, usize::MAX)),
            6 => Value::Array((0..u8::arbitrary(g) % 4).map(|_| value_of(g, depth + 1)).collect()),
            _ => Value::Object(
                (0..u8::arbitrary(g) % 3)
                    .map(|_| (string_of(g, MAX_NAME_CHARS + 2), value_of(g, depth + 1)))
                    .collect(),
            ),
        }
    }

    impl quickcheck::Arbitrary for Case {
        fn arbitrary(g: &mut quickcheck::Gen) -> Case {
            let mut properties = serde_json::Map::new();
            for name in NAMES {
                if bool::arbitrary(g) {
                    properties.insert(name.into(), schema_of(g, 0));
                }
            }
            let schema = object(json!({"type": "object", "properties": properties}));
            let arguments = bool::arbitrary(g).then(|| {
                (0..u8::arbitrary(g) % 4)
                    .map(|_| {
                        let name = if bool::arbitrary(g) {
                            (*pick(g, &NAMES)).to_owned()
                        } else {
                            string_of(g, MAX_NAME_CHARS + 2)
                        };
                        (name, value_of(g, 0))
                    })
                    .collect()
            });
            Case { schema, arguments }
        }
    }

    #[test]
    fn qc_rules_read_once_check_as_the_schema_does() {
        fn prop(case: Case) -> bool {
            Rules::of(&case.schema).check(case.arguments.as_ref())
                == reference::check(&case.schema, case.arguments.as_ref())
        }
        quickcheck::QuickCheck::new()
            .tests(2_000)
            .quickcheck(prop as fn(Case) -> bool);
    }

    #[test]
    fn every_registry_tool_checks_as_its_schema_does() {
        for c in crate::connectors::CONNECTORS {
            for spec in c.tools {
                let tool = (spec.definition)();
                let rules = Rules::of(&tool.input_schema);
                for sample in c.samples.iter().filter(|s| s.tool == tool.name) {
                    let arguments: JsonObject = serde_json::from_str(sample.arguments).expect("sample arguments");
                    assert_eq!(rules.check(Some(&arguments)), Ok(()), "{}", tool.name);
                }
                // Every declared argument, given a value of every type, is judged alike.
                let properties = tool.input_schema.get("properties").and_then(Value::as_object);
                for name in properties.into_iter().flat_map(|p| p.keys()) {
                    let values = [
                        json!(null),
                        json!(true),
                        json!(-1),
                        json!(2.5),
                        json!(u64::MAX),
                        json!("é".repeat(MAX_ANY_STRING_CHARS + 1)),
                        json!(["x", "yyyy", "é"]),
                        json!({"k": 1}),
                    ];
                    for value in values {
                        let one: JsonObject = [(name.clone(), value)].into_iter().collect();
                        assert_eq!(
                            rules.check(Some(&one)),
                            reference::check(&tool.input_schema, Some(&one)),
                            "{} {name}",
                            tool.name
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn declared_lengths_are_enforced_in_characters_without_echoing_the_value() {
        let ok = object(json!({"query": "ééééé", "ids": ["abc"], "limit": 3}));
        assert_eq!(Rules::of(&schema()).check(Some(&ok)), Ok(()));
        assert_eq!(Rules::of(&schema()).check(None), Ok(()));
        let long = object(json!({"query": "secret"}));
        assert_eq!(
            Rules::of(&schema()).check(Some(&long)),
            Err("`query` is 6 characters long; at most 5 are accepted: shorten it".to_owned())
        );
        let item = object(json!({"ids": ["abcd"]}));
        assert!(
            Rules::of(&schema())
                .check(Some(&item))
                .unwrap_err()
                .contains("at most 3")
        );
    }

    #[test]
    fn undeclared_strings_and_names_have_the_general_bounds() {
        let wrong_type = object(json!({"limit": "9".repeat(10)}));
        assert_eq!(
            Rules::of(&schema()).check(Some(&wrong_type)),
            Err("`limit` must be integer, not a string".to_owned())
        );
        let unknown = object(json!({"colour": "r".repeat(MAX_ANY_STRING_CHARS + 1)}));
        assert!(
            Rules::of(&schema())
                .check(Some(&unknown))
                .unwrap_err()
                .starts_with("`an unknown argument`")
        );
        let long_name = object(json!({"n".repeat(MAX_NAME_CHARS + 1): 1}));
        let message = Rules::of(&schema()).check(Some(&long_name)).unwrap_err();
        assert!(!message.contains(&"n".repeat(MAX_NAME_CHARS)), "{message}");
        let nested = object(json!({"limit": {"k".repeat(MAX_NAME_CHARS + 1): 1}}));
        assert!(Rules::of(&schema()).check(Some(&nested)).is_err());
        let fine = object(json!({"colour": "red"}));
        assert_eq!(
            Rules::of(&schema()).check(Some(&fine)),
            Ok(()),
            "serde names unknown arguments"
        );
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
        assert_eq!(Rules::of(&schema).check(Some(&ok)), Ok(()));
        assert_eq!(Rules::of(&schema).check(Some(&object(json!({"limit": null})))), Ok(()));
        // Inside the type, the tool's own bounds are the tool's to refuse, with its advice.
        assert_eq!(
            Rules::of(&schema).check(Some(&object(json!({"limit": 101, "score": 0.1})))),
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
                Rules::of(&schema).check(Some(&object(args.clone()))),
                Err(said.to_owned()),
                "{args}"
            );
        }
    }

    #[test]
    fn numbers_and_booleans_sent_as_strings_read_as_what_they_spell() {
        let rules = Rules::of(&object(json!({
            "type": "object",
            "properties": {
                "limit": {"type": ["integer", "null"], "format": "uint32"},
                "offset": {"type": "integer"},
                "include_ended": {"type": ["boolean", "null"]},
                "query": {"type": ["string", "null"]},
                "id": {"type": ["string", "integer"]}
            }
        })));
        let mut args = object(json!({
            "limit": "3", "offset": " -2 ", "include_ended": "true", "query": "2024", "id": "7", "other": "5"
        }));
        rules.coerce(&mut args);
        assert_eq!(
            Value::Object(args),
            json!({"limit": 3, "offset": -2, "include_ended": true, "query": "2024", "id": "7", "other": "5"}),
            "only arguments declared integer (or boolean) alone change"
        );
        let mut args = object(json!({"limit": "three", "include_ended": "yes"}));
        rules.coerce(&mut args);
        assert_eq!(
            Value::Object(args.clone()),
            json!({"limit": "three", "include_ended": "yes"})
        );
        assert!(
            rules
                .check(Some(&args))
                .is_err_and(|e| e.ends_with("must be boolean or null, not a string")
                    || e.ends_with("must be integer or null, not a string")),
            "what does not spell a value of its type is still refused by name"
        );
    }

    #[test]
    fn numbers_read_as_models_send_them_and_nothing_else() {
        // Assistants send numbers where strings are declared: `bwb_read {"article": 2}`, `ob_search {"dossier": 36200}` and
        // `"limit": 2.0` were refused.
        let rules = Rules::of(&object(json!({
            "type": "object",
            "properties": {
                "article": {"type": ["string", "null"], "maxLength": 20},
                "dossier": {"type": "string"},
                "limit": {"type": ["integer", "null"], "format": "uint32", "minimum": 1},
                "offset": {"type": "integer"},
                "score": {"type": "number"}
            }
        })));
        let mut args = object(json!({
            "article": 2, "dossier": 36200, "limit": 2.0, "offset": -3.0, "score": 2.0
        }));
        rules.coerce(&mut args);
        assert_eq!(
            Value::Object(args.clone()),
            json!({"article": "2", "dossier": "36200", "limit": 2, "offset": -3, "score": 2.0}),
            "a whole number is its digits for text, an integral float its integer; a `number` stays"
        );
        assert_eq!(rules.check(Some(&args)), Ok(()));
        for (sent, said) in [
            (
                json!({"article": 2.5}),
                "`article` must be string or null, not a number",
            ),
            (json!({"limit": 2.5}), "`limit` must be a whole number, not 2.5"),
            (json!({"limit": 1e300}), "`limit` must be a whole number, not 1e+300"),
            (json!({"dossier": true}), "`dossier` must be string, not a boolean"),
        ] {
            let mut args = object(sent.clone());
            rules.coerce(&mut args);
            assert_eq!(Value::Object(args.clone()), sent, "left as sent");
            assert_eq!(rules.check(Some(&args)), Err(said.to_owned()), "{sent}");
        }
    }
}
