//! A small OData v4 `$filter` and `$orderby` engine for the Tweede Kamer fake.
//!
//! Grammar (precedence low to high): `or`, `and`, `not`, then a comparison
//! `Field op literal` (`eq ne gt ge lt le`), a function `contains|startswith|endswith(Field,'text')`
//! or a parenthesised expression. Literals: `'text'` (a quote inside is doubled),
//! `true`/`false`/`null`, integers, dates `2024-01-01`, date-times `2024-01-01T10:00:00Z`
//! and bare GUIDs.
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
                while i < chars.len() && (chars[i].is_ascii_alphanumeric() || "_-:.+".contains(chars[i])) {
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
                    return Ok(Expr::Call(func, field, needle.to_lowercase()));
                }
                let ty = self.field(&w)?;
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
                Ok(Expr::Compare(w, op, literal))
            }
            other => Err(ParseError(format!("expected an expression, found {other:?}"))),
        }
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
            if !schema.iter().any(|(f, _)| *f == field) {
                return Err(ParseError(format!("Could not find a property named '{field}'")));
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
    fn orderby_parses_and_sorts_descending() {
        let keys = parse_orderby("Datum desc, Volgnummer", SCHEMA).unwrap();
        assert_eq!(keys, [("Datum".to_owned(), true), ("Volgnummer".to_owned(), false)]);
        let mut older = record();
        older.insert("Datum".into(), json!("2023-01-01T00:00:00+01:00"));
        assert_eq!(compare(&record(), &older, &keys), Ordering::Less);
        assert!(parse_orderby("Nope desc", SCHEMA).is_err());
    }
}
