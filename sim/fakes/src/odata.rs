//! A small OData v4 `$filter` and `$orderby` engine for the Tweede Kamer fake.
//!
//! Grammar (precedence low to high): `or`, `and`, `not`, then a comparison
//! `Field op literal` (`eq ne gt ge lt le`), a function `contains|startswith|endswith(Field,'text')`,
//! a lambda over a navigation property `Nav/any(d:d/Field op literal and …)` (its entity's
//! fields from [`nav_schema`]) or a parenthesised expression. Literals: `'text'` (a quote
//! inside is doubled), `true`/`false`/`null`, integers, dates `2024-01-01`, date-times
//! `2024-01-01T10:00:00Z` and bare GUIDs.
//!
//! Navigation properties ([`FieldType::Nav`]) are held in the records themselves (an
//! object or a list of objects) and shown only when `$expand` names them
//! ([`Expand`], with nested `$expand`).
//!
//! Invariants: a filter is parsed and type-checked against the entity set's schema
//! before any record is looked at, so an unknown field or a literal of the wrong type is
//! a parse error (HTTP 400), never a silently empty answer. Evaluation is total.
//!
//! What this engine does not do: arithmetic, `any`/`all` lambdas, navigation
//! properties, `$expand`, or time-zone arithmetic — a date-time literal is compared on
//! its first 19 characters and a date on its first 10. String comparisons and the
//! three functions ignore case, as the platform's database collation does.

use std::cmp::Ordering;

use serde_json::{Map, Value};

/// The type of a field, for type-checking literals.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// Text.
    Str,
    /// `Edm.DateTimeOffset`, stored as ISO text.
    Date,
    /// Integer.
    Int,
    /// Boolean.
    Bool,
    /// `Edm.Guid`.
    Guid,
    /// A navigation property: an entity or a list of them, held in the record, shown only
    /// when expanded, filtered only through `any`.
    Nav,
}

/// The fields of the entity a navigation property leads to, for `any` lambdas.
pub fn nav_schema(nav: &str) -> Option<Schema> {
    match nav {
        "Kamerstukdossier" => Some(&[
            ("Id", FieldType::Guid),
            ("Nummer", FieldType::Int),
            ("Toevoeging", FieldType::Str),
        ]),
        _ => None,
    }
}

/// The fields of one entity set.
pub type Schema = &'static [(&'static str, FieldType)];

/// A filter or ordering the engine cannot accept, with the reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError(pub String);

/// A literal in a filter (text lower-cased, dates cut to the compared prefix).
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `'text'`.
    Str(String),
    /// `2024-01-01` or the first 19 characters of a date-time.
    Date(String),
    /// An integer.
    Int(i64),
    /// `true` or `false`.
    Bool(bool),
    /// A bare GUID.
    Guid(String),
    /// `null`.
    Null,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// `eq`.
    Eq,
    /// `ne`.
    Ne,
    /// `gt`.
    Gt,
    /// `ge`.
    Ge,
    /// `lt`.
    Lt,
    /// `le`.
    Le,
}

/// A string function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Func {
    /// `contains(Field,'x')`.
    Contains,
    /// `startswith(Field,'x')`.
    StartsWith,
    /// `endswith(Field,'x')`.
    EndsWith,
}

/// A parsed, type-checked filter.
#[derive(Clone, Debug, PartialEq)]
pub enum Expr {
    /// Both hold.
    And(Box<Expr>, Box<Expr>),
    /// Either holds.
    Or(Box<Expr>, Box<Expr>),
    /// The inner expression does not hold.
    Not(Box<Expr>),
    /// A comparison of a field with a literal.
    Compare(String, Op, Literal),
    /// A string function on a field.
    Call(Func, String, String),
    /// Some entity of a navigation property satisfies the inner expression.
    Any(String, Box<Expr>),
}

#[derive(Clone, Debug, PartialEq)]
enum Token {
    Open,
    Close,
    Comma,
    Str(String),
    Word(String),
}

fn lex(text: &str) -> Result<Vec<Token>, ParseError> {
    let mut tokens = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            ' ' | '\t' | '\n' | '\r' => i += 1,
            '(' => {
                tokens.push(Token::Open);
                i += 1;
            }
            ')' => {
                tokens.push(Token::Close);
                i += 1;
            }
            ',' => {
                tokens.push(Token::Comma);
                i += 1;
            }
            '\'' => {
                let mut s = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(ParseError("unterminated string literal".into())),
                        Some('\'') if chars.get(i + 1) == Some(&'\'') => {
                            s.push('\'');
                            i += 2;
                        }
                        Some('\'') => {
                            i += 1;
                            break;
                        }
                        Some(&c) => {
                            s.push(c);
                            i += 1;
                        }
                    }
                }
                tokens.push(Token::Str(s));
            }
            c if c.is_ascii_alphanumeric() || c == '_' || c == '-' => {
                let start = i;
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || "_-:.+/".contains(chars[i])) {
                    i += 1;
                }
                tokens.push(Token::Word(chars[start..i].iter().collect()));
            }
            other => return Err(ParseError(format!("unexpected character `{other}`"))),
        }
    }
    Ok(tokens)
}

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    schema: Schema,
    /// Inside an `any` lambda: its variable, which every field name starts with (`d/`).
    lambda: Option<String>,
}

impl Parser {
    fn peek_word(&self, word: &str) -> bool {
        matches!(self.tokens.get(self.at), Some(Token::Word(w)) if w == word)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn expect(&mut self, want: Token) -> Result<(), ParseError> {
        match self.next() {
            Some(t) if t == want => Ok(()),
            other => Err(ParseError(format!("expected {want:?}, found {other:?}"))),
        }
    }

    fn field(&self, name: &str) -> Result<FieldType, ParseError> {
        let name = match &self.lambda {
            Some(var) => name
                .strip_prefix(var.as_str())
                .and_then(|n| n.strip_prefix('/'))
                .ok_or_else(|| ParseError(format!("`{name}` is not a field of the lambda's `{var}`")))?,
            None => name,
        };
        self.schema
            .iter()
            .find(|(f, _)| *f == name)
            .map(|(_, t)| *t)
            .ok_or_else(|| ParseError(format!("Could not find a property named '{name}'")))
    }

    fn or(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.and()?;
        while self.peek_word("or") {
            self.at += 1;
            left = Expr::Or(Box::new(left), Box::new(self.and()?));
        }
        Ok(left)
    }

    fn and(&mut self) -> Result<Expr, ParseError> {
        let mut left = self.unary()?;
        while self.peek_word("and") {
            self.at += 1;
            left = Expr::And(Box::new(left), Box::new(self.unary()?));
        }
        Ok(left)
    }

    fn unary(&mut self) -> Result<Expr, ParseError> {
        if self.peek_word("not") {
            self.at += 1;
            return Ok(Expr::Not(Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ParseError> {
        match self.next() {
            Some(Token::Open) => {
                let e = self.or()?;
                self.expect(Token::Close)?;
                Ok(e)
            }
            Some(Token::Word(w)) => {
                let func = match w.as_str() {
                    "contains" => Some(Func::Contains),
                    "startswith" => Some(Func::StartsWith),
                    "endswith" => Some(Func::EndsWith),
                    _ => None,
                };
                if let Some(nav) = w.strip_suffix("/any") {
                    return self.any(nav);
                }
                if let Some(func) = func {
                    self.expect(Token::Open)?;
                    let Some(Token::Word(field)) = self.next() else {
                        return Err(ParseError(format!("{w} expects a field name first")));
                    };
                    if self.field(&field)? != FieldType::Str {
                        return Err(ParseError(format!("{w} needs a text field, `{field}` is not one")));
                    }
                    self.expect(Token::Comma)?;
                    let Some(Token::Str(needle)) = self.next() else {
                        return Err(ParseError(format!("{w} expects a quoted string second")));
                    };
                    self.expect(Token::Close)?;
                    let field = match &self.lambda {
                        Some(var) => field[var.len() + 1..].to_owned(),
                        None => field,
                    };
                    return Ok(Expr::Call(func, field, needle.to_lowercase()));
                }
                let ty = self.field(&w)?;
                if ty == FieldType::Nav {
                    return Err(ParseError(format!(
                        "`{w}` is a navigation property: filter it with any()"
                    )));
                }
                let op = match self.next() {
                    Some(Token::Word(op)) => match op.as_str() {
                        "eq" => Op::Eq,
                        "ne" => Op::Ne,
                        "gt" => Op::Gt,
                        "ge" => Op::Ge,
                        "lt" => Op::Lt,
                        "le" => Op::Le,
                        _ => return Err(ParseError(format!("unknown operator `{op}`"))),
                    },
                    other => return Err(ParseError(format!("expected an operator after `{w}`, found {other:?}"))),
                };
                let literal = self.literal()?;
                let fits = matches!(
                    (ty, &literal),
                    (_, Literal::Null)
                        | (FieldType::Str, Literal::Str(_))
                        | (FieldType::Date, Literal::Date(_))
                        | (FieldType::Int, Literal::Int(_))
                        | (FieldType::Bool, Literal::Bool(_))
                        | (FieldType::Guid, Literal::Guid(_))
                );
                if !fits {
                    return Err(ParseError(format!(
                        "A binary operator with incompatible types was detected: `{w}` ({ty:?}) and {literal:?}"
                    )));
                }
                let field = match &self.lambda {
                    Some(var) => w[var.len() + 1..].to_owned(),
                    None => w,
                };
                Ok(Expr::Compare(field, op, literal))
            }
            other => Err(ParseError(format!("expected an expression, found {other:?}"))),
        }
    }

    /// `Nav/any(d:d/Field op literal …)`, after `Nav/any`.
    fn any(&mut self, nav: &str) -> Result<Expr, ParseError> {
        if self.lambda.is_some() {
            return Err(ParseError("a lambda inside a lambda".into()));
        }
        if self.field(nav)? != FieldType::Nav {
            return Err(ParseError(format!("`{nav}` is not a navigation property")));
        }
        let schema = nav_schema(nav).ok_or_else(|| ParseError(format!("`{nav}` cannot be filtered")))?;
        self.expect(Token::Open)?;
        // `d:d/Nummer`: the variable, then the first field.
        let Some(Token::Word(first)) = self.tokens.get(self.at).cloned() else {
            return Err(ParseError("any() expects `variable:expression`".into()));
        };
        let Some((var, rest)) = first.split_once(':') else {
            return Err(ParseError("any() expects `variable:expression`".into()));
        };
        self.tokens[self.at] = Token::Word(rest.to_owned());
        let outer = std::mem::replace(&mut self.schema, schema);
        self.lambda = Some(var.to_owned());
        let inner = self.or();
        self.schema = outer;
        self.lambda = None;
        let inner = inner?;
        self.expect(Token::Close)?;
        Ok(Expr::Any(nav.to_owned(), Box::new(inner)))
    }

    fn literal(&mut self) -> Result<Literal, ParseError> {
        match self.next() {
            Some(Token::Str(s)) => Ok(Literal::Str(s.to_lowercase())),
            Some(Token::Word(w)) => classify_literal(&w).ok_or_else(|| ParseError(format!("`{w}` is not a literal"))),
            other => Err(ParseError(format!("expected a literal, found {other:?}"))),
        }
    }
}

fn classify_literal(w: &str) -> Option<Literal> {
    let b = w.as_bytes();
    let digits = |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let hex = |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_hexdigit));
    match w {
        "true" => return Some(Literal::Bool(true)),
        "false" => return Some(Literal::Bool(false)),
        "null" => return Some(Literal::Null),
        _ => {}
    }
    if b.len() == 36 && [8, 13, 18, 23].iter().all(|&i| b[i] == b'-') && hex(0..8) && hex(9..13) && hex(14..18) {
        return (hex(19..23) && hex(24..36)).then(|| Literal::Guid(w.to_ascii_lowercase()));
    }
    if b.len() >= 10 && digits(0..4) && b[4] == b'-' && digits(5..7) && b[7] == b'-' && digits(8..10) {
        if b.len() == 10 {
            return Some(Literal::Date(w.to_owned()));
        }
        if b.len() >= 19 && b[10] == b'T' && digits(11..13) && b[13] == b':' && digits(14..16) && b[16] == b':' {
            return Some(Literal::Date(w[..19].to_owned()));
        }
        return None;
    }
    w.parse::<i64>().ok().map(Literal::Int)
}

/// Parses and type-checks a `$filter` against `schema`.
pub fn parse_filter(text: &str, schema: Schema) -> Result<Expr, ParseError> {
    let mut parser = Parser {
        tokens: lex(text)?,
        at: 0,
        schema,
        lambda: None,
    };
    let expr = parser.or()?;
    if parser.at != parser.tokens.len() {
        return Err(ParseError(format!(
            "unexpected {:?} after the expression",
            parser.tokens[parser.at]
        )));
    }
    Ok(expr)
}

impl Expr {
    /// Whether `record` satisfies the filter.
    pub fn matches(&self, record: &Map<String, Value>) -> bool {
        match self {
            Expr::And(a, b) => a.matches(record) && b.matches(record),
            Expr::Or(a, b) => a.matches(record) || b.matches(record),
            Expr::Not(e) => !e.matches(record),
            Expr::Any(nav, inner) => match record.get(nav) {
                Some(Value::Array(items)) => items.iter().any(|i| i.as_object().is_some_and(|o| inner.matches(o))),
                Some(Value::Object(o)) => inner.matches(o),
                _ => false,
            },
            Expr::Call(func, field, needle) => {
                let Some(Value::String(s)) = record.get(field) else {
                    return false;
                };
                let s = s.to_lowercase();
                match func {
                    Func::Contains => s.contains(needle.as_str()),
                    Func::StartsWith => s.starts_with(needle.as_str()),
                    Func::EndsWith => s.ends_with(needle.as_str()),
                }
            }
            Expr::Compare(field, op, literal) => {
                let value = record.get(field).unwrap_or(&Value::Null);
                let ordering = match (value, literal) {
                    (Value::Null, Literal::Null) => Some(Ordering::Equal),
                    (Value::Null, _) | (_, Literal::Null) => None,
                    (Value::String(s), Literal::Str(l)) | (Value::String(s), Literal::Guid(l)) => {
                        Some(s.to_lowercase().as_str().cmp(l.as_str()))
                    }
                    (Value::String(s), Literal::Date(l)) => Some(s.get(..l.len()).unwrap_or(s).cmp(l.as_str())),
                    (Value::Number(n), Literal::Int(l)) => n.as_i64().map(|n| n.cmp(l)),
                    (Value::Bool(b), Literal::Bool(l)) => Some(b.cmp(l)),
                    _ => None,
                };
                match (op, ordering) {
                    (Op::Ne, None) => !matches!(literal, Literal::Null) || !value.is_null(),
                    (_, None) => false,
                    (Op::Eq, Some(o)) => o == Ordering::Equal,
                    (Op::Ne, Some(o)) => o != Ordering::Equal,
                    (Op::Gt, Some(o)) => o == Ordering::Greater,
                    (Op::Ge, Some(o)) => o != Ordering::Less,
                    (Op::Lt, Some(o)) => o == Ordering::Less,
                    (Op::Le, Some(o)) => o != Ordering::Greater,
                }
            }
        }
    }
}

/// One `$orderby` key: the field and whether it sorts descending.
pub type OrderKey = (String, bool);

/// Parses `$orderby` (`Field [asc|desc], ...`) against `schema`.
pub fn parse_orderby(text: &str, schema: Schema) -> Result<Vec<OrderKey>, ParseError> {
    text.split(',')
        .map(|part| {
            let mut words = part.split_whitespace();
            let field = words.next().ok_or_else(|| ParseError("empty $orderby key".into()))?;
            match schema.iter().find(|(f, _)| *f == field) {
                None => return Err(ParseError(format!("Could not find a property named '{field}'"))),
                Some((_, FieldType::Nav)) => {
                    return Err(ParseError(format!(
                        "`{field}` is a navigation property: it does not order"
                    )));
                }
                Some(_) => {}
            }
            let desc = match words.next() {
                None | Some("asc") => false,
                Some("desc") => true,
                Some(other) => return Err(ParseError(format!("unknown direction `{other}`"))),
            };
            if words.next().is_some() {
                return Err(ParseError(format!("unexpected text in $orderby key `{part}`")));
            }
            Ok((field.to_owned(), desc))
        })
        .collect()
}

/// Compares two records by `keys` (nulls first when ascending).
pub fn compare(a: &Map<String, Value>, b: &Map<String, Value>, keys: &[OrderKey]) -> Ordering {
    for (field, desc) in keys {
        let (x, y) = (
            a.get(field).unwrap_or(&Value::Null),
            b.get(field).unwrap_or(&Value::Null),
        );
        let o = match (x, y) {
            (Value::Null, Value::Null) => Ordering::Equal,
            (Value::Null, _) => Ordering::Less,
            (_, Value::Null) => Ordering::Greater,
            (Value::String(x), Value::String(y)) => x.cmp(y),
            (Value::Number(x), Value::Number(y)) => x.as_i64().cmp(&y.as_i64()),
            (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
            _ => Ordering::Equal,
        };
        let o = if *desc { o.reverse() } else { o };
        if o != Ordering::Equal {
            return o;
        }
    }
    Ordering::Equal
}

/// What `$expand` names: navigation properties, each with its own nested `$expand`
/// (`Persoon,FractieZetel($expand=Fractie)`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Expand(pub Vec<(String, Expand)>);

impl Expand {
    /// Parses `$expand`'s value; every name must be a navigation property of `schema`
    /// (nested ones are checked by [`Expand::apply`] against what the record holds).
    pub fn parse(text: &str, schema: Schema) -> Result<Expand, ParseError> {
        let expand = Expand::parse_list(text)?;
        for (name, _) in &expand.0 {
            if !schema.iter().any(|(f, t)| f == name && *t == FieldType::Nav) {
                return Err(ParseError(format!(
                    "Could not find a navigation property named '{name}'"
                )));
            }
        }
        Ok(expand)
    }

    fn parse_list(text: &str) -> Result<Expand, ParseError> {
        let mut out = Vec::new();
        let mut depth = 0i32;
        let mut start = 0;
        let bytes = text.as_bytes();
        for i in 0..=bytes.len() {
            let c = bytes.get(i).copied();
            match c {
                Some(b'(') => depth += 1,
                Some(b')') => depth -= 1,
                Some(b',') | None if depth == 0 => {
                    let item = text[start..i].trim();
                    if item.is_empty() {
                        return Err(ParseError("an empty $expand item".into()));
                    }
                    out.push(Expand::parse_item(item)?);
                    start = i + 1;
                }
                _ => {}
            }
            if depth < 0 {
                return Err(ParseError("unbalanced parentheses in $expand".into()));
            }
        }
        if depth != 0 {
            return Err(ParseError("unbalanced parentheses in $expand".into()));
        }
        Ok(Expand(out))
    }

    fn parse_item(item: &str) -> Result<(String, Expand), ParseError> {
        let Some((name, options)) = item.split_once('(') else {
            return Ok((item.to_owned(), Expand::default()));
        };
        let options = options
            .strip_suffix(')')
            .ok_or_else(|| ParseError(format!("`{item}`: unbalanced parentheses")))?;
        let nested = options
            .strip_prefix("$expand=")
            .ok_or_else(|| ParseError(format!("`{item}`: only a nested $expand is supported")))?;
        Ok((name.trim().to_owned(), Expand::parse_list(nested)?))
    }

    /// `record` as shown: the navigation properties of `schema` that are not expanded
    /// left out, the expanded ones shown with their own nested expansion (an entity's
    /// fields that are objects or lists of objects count as its navigation properties).
    pub fn apply(&self, record: &Map<String, Value>, schema: Schema) -> Result<Map<String, Value>, ParseError> {
        let mut out = record.clone();
        for (field, ty) in schema {
            if *ty == FieldType::Nav && !self.0.iter().any(|(n, _)| n == field) {
                out.remove(*field);
            }
        }
        for (name, nested) in &self.0 {
            if let Some(value) = out.get_mut(name) {
                *value = nested.apply_nested(value)?;
            }
        }
        Ok(out)
    }

    fn apply_nested(&self, value: &Value) -> Result<Value, ParseError> {
        let one = |o: &Map<String, Value>| -> Result<Value, ParseError> {
            let mut out = Map::new();
            for (k, v) in o {
                let nav = v.is_object()
                    || v.as_array()
                        .is_some_and(|a| a.iter().all(Value::is_object) && !a.is_empty());
                match (nav, self.0.iter().find(|(n, _)| n == k)) {
                    (false, _) => {
                        out.insert(k.clone(), v.clone());
                    }
                    (true, Some((_, nested))) => {
                        out.insert(k.clone(), nested.apply_nested(v)?);
                    }
                    (true, None) => {}
                }
            }
            for (n, _) in &self.0 {
                if !o.contains_key(n) {
                    return Err(ParseError(format!("Could not find a navigation property named '{n}'")));
                }
            }
            Ok(Value::Object(out))
        };
        match value {
            Value::Object(o) => one(o),
            Value::Array(items) => items
                .iter()
                .map(|i| match i {
                    Value::Object(o) => one(o),
                    other => Ok(other.clone()),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            other => Ok(other.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const SCHEMA: Schema = &[
        ("Id", FieldType::Guid),
        ("Titel", FieldType::Str),
        ("Onderwerp", FieldType::Str),
        ("Datum", FieldType::Date),
        ("Volgnummer", FieldType::Int),
        ("Verwijderd", FieldType::Bool),
    ];

    fn record() -> Map<String, Value> {
        json!({
            "Id": "7a9b77f1-0000-4000-8000-000000000001",
            "Titel": "Stikstofbeleid",
            "Onderwerp": "Motie over de ringweg van 's-Hertogenbosch",
            "Datum": "2024-03-12T00:00:00+01:00",
            "Volgnummer": 7,
            "Verwijderd": false,
        })
        .as_object()
        .cloned()
        .unwrap()
    }

    fn check(filter: &str, expect: bool) {
        let expr = parse_filter(filter, SCHEMA).unwrap_or_else(|e| panic!("{filter}: {e:?}"));
        assert_eq!(expr.matches(&record()), expect, "{filter}");
    }

    #[test]
    fn filters_evaluate_as_the_platform_would() {
        check("contains(Titel,'stikstof')", true);
        check("contains(Onderwerp,'''s-Hertogenbosch')", true);
        check("contains(Titel,'asiel') or contains(Onderwerp,'ringweg')", true);
        check(
            "(contains(Titel,'x') or contains(Onderwerp,'y')) and Verwijderd eq false",
            false,
        );
        check("Datum ge 2024-01-01 and Datum le 2024-03-12", true);
        check("Datum gt 2024-03-12", false);
        check("Datum lt 2024-03-12T10:00:00Z", true);
        check("Volgnummer eq 7 and not Verwijderd eq true", true);
        check("Id eq 7A9B77F1-0000-4000-8000-000000000001", true);
        check("Titel ne null", true);
    }

    #[test]
    fn unknown_fields_and_wrong_types_are_parse_errors() {
        for bad in [
            "contains(Nope,'x')",
            "Verwijderd eq 'false'",
            "Datum ge 'gisteren'",
            "contains(Titel,'x'",
            "Titel eq 'x' and",
            "Id eq guid'7a9b77f1-0000-4000-8000-000000000001'",
            "contains(Volgnummer,'7')",
            "Titel like 'x'",
        ] {
            assert!(parse_filter(bad, SCHEMA).is_err(), "{bad} should not parse");
        }
    }

    #[test]
    fn a_lambda_filters_a_navigation_property_and_expand_shows_it() {
        const ZAAK: Schema = &[
            ("Id", FieldType::Guid),
            ("Volgnummer", FieldType::Int),
            ("Kamerstukdossier", FieldType::Nav),
        ];
        let zaak = json!({
            "Id": "7a9b77f1-0000-4000-8000-000000000001",
            "Volgnummer": 915,
            "Kamerstukdossier": [{"Id": "7a9b77f1-0000-4000-8000-000000000002", "Nummer": 21501, "Toevoeging": "20"}],
        })
        .as_object()
        .cloned()
        .unwrap();
        let matches = |f: &str| {
            parse_filter(f, ZAAK)
                .unwrap_or_else(|e| panic!("{f}: {e:?}"))
                .matches(&zaak)
        };
        assert!(matches(
            "(Volgnummer eq 915 and Kamerstukdossier/any(d:d/Nummer eq 21501 and d/Toevoeging eq '20'))"
        ));
        assert!(!matches("Kamerstukdossier/any(d:d/Nummer eq 21502)"));
        for bad in [
            "Kamerstukdossier eq 1",
            "Kamerstukdossier/any(d:x/Nummer eq 1)",
            "Kamerstukdossier/any(d:d/Titel eq 'x')",
            "Volgnummer/any(d:d/Nummer eq 1)",
        ] {
            assert!(parse_filter(bad, ZAAK).is_err(), "{bad}");
        }
        assert!(parse_orderby("Kamerstukdossier", ZAAK).is_err());
        let plain = Expand::default().apply(&zaak, ZAAK).unwrap();
        assert!(!plain.contains_key("Kamerstukdossier"));
        let expanded = Expand::parse("Kamerstukdossier", ZAAK)
            .unwrap()
            .apply(&zaak, ZAAK)
            .unwrap();
        assert_eq!(expanded["Kamerstukdossier"][0]["Nummer"], 21501);
        assert!(Expand::parse("Besluit", ZAAK).is_err());
        // Nested: the seat's faction only when asked.
        const SEAT: Schema = &[("Id", FieldType::Guid), ("FractieZetel", FieldType::Nav)];
        let seat = json!({"Id": "x", "FractieZetel": {"Id": "z", "Fractie": {"Afkorting": "NSC"}}})
            .as_object()
            .cloned()
            .unwrap();
        let shallow = Expand::parse("FractieZetel", SEAT).unwrap().apply(&seat, SEAT).unwrap();
        assert!(shallow["FractieZetel"].get("Fractie").is_none());
        let deep = Expand::parse("FractieZetel($expand=Fractie)", SEAT)
            .unwrap()
            .apply(&seat, SEAT)
            .unwrap();
        assert_eq!(deep["FractieZetel"]["Fractie"]["Afkorting"], "NSC");
        assert!(
            Expand::parse("FractieZetel($expand=Nope)", SEAT)
                .unwrap()
                .apply(&seat, SEAT)
                .is_err()
        );
        assert!(Expand::parse("FractieZetel($top=1)", SEAT).is_err());
    }

    #[test]
    fn orderby_parses_and_sorts_descending() {
        let keys = parse_orderby("Datum desc, Volgnummer", SCHEMA).unwrap();
        assert_eq!(keys, [("Datum".to_owned(), true), ("Volgnummer".to_owned(), false)]);
        let mut older = record();
        older.insert("Datum".into(), json!("2023-01-01T00:00:00+01:00"));
        assert_eq!(compare(&record(), &older, &keys), Ordering::Less);
        assert!(parse_orderby("Nope desc", SCHEMA).is_err());
    }
}
