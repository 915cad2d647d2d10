//! The CQL the Officiële Bekendmakingen fake understands, as strict as the real service
//! (PLATFORMS.md §10.1): [`parse_cql`] and [`CqlQuery::matches`].
//!
//! Grammar (a subset of CQL 2.0):
//! ```text
//! query   := scoped [ "sortBy" key+ ]
//! scoped  := clause ( boolean clause )*         boolean: AND | OR | NOT (binary)
//! clause  := "(" scoped ")" | term | index relation term
//! relation:= = | == | < | > | <= | >= | <> | any | all | adj
//! term    := "quoted string" (\" and \\ escaped) | word
//! key     := index [ "/sort.ascending" | "/sort.descending" ]
//! ```
//!
//! Strictness, as the real service:
//! - several bare words (`a b`) are a syntax error (diagnostic `1/10`), so are
//!   `A AND NOT B`, an unclosed quote or parenthesis, and a reserved word as a term;
//! - `{` or `}` anywhere, even inside quotes, is an HTTP 500 ([`CqlFault::ServerError`]);
//! - an inner `+` between letters or digits rejects the query (`1/10`);
//! - an unknown index is `1/16`, an unsupported relation `1/19` (`identifier any`), a
//!   sort key without the `sort.` prefix `1/80`, a date that is not `YYYY-MM-DD` `1/36`;
//! - an impossible date (`2026-02-29`) is not an error: the clause is dropped (matches
//!   everything) and [`CqlQuery::warnings`] names it (`SEARCH-IGNOREDQTEXT`).
//!
//! What this module does not do: stemming, masks beyond a trailing `*`, proximity.

use crate::ob_corpus::ObPublication;
use crate::parse_date;
use crate::sru::date_shaped;

/// Why a query was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CqlFault {
    /// A diagnostic without a count: the query is rejected.
    Diagnostic {
        /// `info:srw/diagnostic/1/N`.
        uri: String,
        /// What it is about.
        details: String,
        /// The message.
        message: String,
    },
    /// The service fails with HTTP 500 (`{` or `}` in the query).
    ServerError,
}

fn diagnostic(n: u32, details: &str, message: &str) -> CqlFault {
    CqlFault::Diagnostic {
        uri: format!("info:srw/diagnostic/1/{n}"),
        details: details.chars().take(200).collect(),
        message: message.to_owned(),
    }
}

/// A relation between an index and a term.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Relation {
    /// `=`: containment (words) or equality (values).
    Eq,
    /// `==`: exact.
    Exact,
    /// `<`.
    Lt,
    /// `>`.
    Gt,
    /// `<=`.
    Le,
    /// `>=`.
    Ge,
    /// `<>`.
    Ne,
    /// `any`: any of the words.
    Any,
    /// `all`: all of the words.
    All,
    /// `adj`: the words as a phrase.
    Adj,
}

/// A parsed query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Node {
    /// Both.
    And(Box<Node>, Box<Node>),
    /// Either.
    Or(Box<Node>, Box<Node>),
    /// The first and not the second.
    Not(Box<Node>, Box<Node>),
    /// One search clause.
    Clause {
        /// The index (`cql.serverChoice` for a bare term).
        index: String,
        /// The relation.
        relation: Relation,
        /// The term, unquoted.
        term: String,
    },
    /// A clause the service dropped (an impossible date): matches everything.
    Dropped,
}

/// A parsed query with its sort and the clauses it dropped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CqlQuery {
    /// The search.
    pub root: Node,
    /// The sort keys: index and whether descending.
    pub sort: Vec<(String, bool)>,
    /// Dropped clauses, as written.
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Token {
    Open,
    Close,
    Slash,
    Rel(&'static str),
    Quoted(String),
    Word(String),
}

fn tokenize(text: &str) -> Result<Vec<Token>, CqlFault> {
    let mut out = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '(' => {
                out.push(Token::Open);
                i += 1;
            }
            ')' => {
                out.push(Token::Close);
                i += 1;
            }
            '/' => {
                out.push(Token::Slash);
                i += 1;
            }
            '=' | '<' | '>' => {
                let next = chars.get(i + 1).copied();
                let (rel, len) = match (c, next) {
                    ('=', Some('=')) => ("==", 2),
                    ('<', Some('=')) => ("<=", 2),
                    ('>', Some('=')) => (">=", 2),
                    ('<', Some('>')) => ("<>", 2),
                    ('=', _) => ("=", 1),
                    ('<', _) => ("<", 1),
                    _ => (">", 1),
                };
                out.push(Token::Rel(rel));
                i += len;
            }
            '"' => {
                let mut term = String::new();
                i += 1;
                loop {
                    match chars.get(i) {
                        None => return Err(diagnostic(10, "unclosed quote", "Query syntax error")),
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some('\\') => {
                            match chars.get(i + 1) {
                                Some(&e) => term.push(e),
                                None => return Err(diagnostic(10, "unclosed quote", "Query syntax error")),
                            }
                            i += 2;
                        }
                        Some(&ch) => {
                            term.push(ch);
                            i += 1;
                        }
                    }
                }
                out.push(Token::Quoted(term));
            }
            _ => {
                let start = i;
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && !matches!(chars[i], '(' | ')' | '=' | '<' | '>' | '"' | '/')
                {
                    i += 1;
                }
                out.push(Token::Word(chars[start..i].iter().collect()));
            }
        }
    }
    Ok(out)
}

const RESERVED: [&str; 5] = ["and", "or", "not", "prox", "sortby"];

const INDEXES: [&str; 14] = [
    "cql.serverchoice",
    "cql.textandindexes",
    "c.product-area",
    "dt.title",
    "dt.creator",
    "dt.type",
    "dt.identifier",
    "dt.date",
    "dt.available",
    "dt.modified",
    "dt.subject",
    "w.organisatietype",
    "w.publicatienaam",
    "w.dossiernummer",
];

const DATE_INDEXES: [&str; 3] = ["dt.date", "dt.available", "dt.modified"];

struct Parser {
    tokens: Vec<Token>,
    at: usize,
    warnings: Vec<String>,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.at)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.at).cloned();
        self.at += 1;
        t
    }

    fn boolean(&self) -> Option<&'static str> {
        match self.peek() {
            Some(Token::Word(w)) => match w.to_ascii_lowercase().as_str() {
                "and" => Some("and"),
                "or" => Some("or"),
                "not" => Some("not"),
                "prox" => Some("prox"),
                _ => None,
            },
            _ => None,
        }
    }

    fn at_sort(&self) -> bool {
        matches!(self.peek(), Some(Token::Word(w)) if w.eq_ignore_ascii_case("sortby"))
    }

    fn scoped(&mut self, depth: usize) -> Result<Node, CqlFault> {
        if depth > 32 {
            return Err(diagnostic(10, "nested too deeply", "Query syntax error"));
        }
        let mut left = self.clause(depth)?;
        loop {
            match self.peek() {
                None | Some(Token::Close) => return Ok(left),
                _ if self.at_sort() => return Ok(left),
                _ => {}
            }
            let Some(op) = self.boolean() else {
                // Two terms without a boolean between them: "several bare words".
                return Err(diagnostic(10, &self.describe_here(), "Query syntax error"));
            };
            self.at += 1;
            if op == "prox" {
                return Err(diagnostic(37, "prox", "Unsupported boolean operator"));
            }
            if self.boolean() == Some("not") {
                return Err(diagnostic(10, "NOT after a boolean", "Query syntax error"));
            }
            let right = self.clause(depth)?;
            left = match op {
                "and" => Node::And(Box::new(left), Box::new(right)),
                "or" => Node::Or(Box::new(left), Box::new(right)),
                _ => Node::Not(Box::new(left), Box::new(right)),
            };
        }
    }

    fn describe_here(&self) -> String {
        match self.peek() {
            Some(Token::Word(w)) | Some(Token::Quoted(w)) => w.clone(),
            Some(other) => format!("{other:?}"),
            None => "end of query".to_owned(),
        }
    }

    fn term(&mut self) -> Result<String, CqlFault> {
        match self.next() {
            Some(Token::Quoted(t)) => Ok(t),
            Some(Token::Word(w)) if !RESERVED.contains(&w.to_ascii_lowercase().as_str()) => Ok(w),
            _ => Err(diagnostic(10, "a term is missing", "Query syntax error")),
        }
    }

    fn clause(&mut self, depth: usize) -> Result<Node, CqlFault> {
        if self.peek() == Some(&Token::Open) {
            self.at += 1;
            let inner = self.scoped(depth + 1)?;
            if self.next() != Some(Token::Close) {
                return Err(diagnostic(10, "unclosed parenthesis", "Query syntax error"));
            }
            return Ok(inner);
        }
        let first = self.term()?;
        let relation = match self.peek() {
            Some(Token::Rel(r)) => Some(match *r {
                "=" => Relation::Eq,
                "==" => Relation::Exact,
                "<" => Relation::Lt,
                ">" => Relation::Gt,
                "<=" => Relation::Le,
                ">=" => Relation::Ge,
                _ => Relation::Ne,
            }),
            Some(Token::Word(w)) => match w.to_ascii_lowercase().as_str() {
                "any" => Some(Relation::Any),
                "all" => Some(Relation::All),
                "adj" => Some(Relation::Adj),
                _ => None,
            },
            _ => None,
        };
        let Some(relation) = relation else {
            check_plus(&first)?;
            return Ok(Node::Clause {
                index: "cql.serverchoice".to_owned(),
                relation: Relation::Eq,
                term: first,
            });
        };
        self.at += 1;
        let index = first.to_ascii_lowercase();
        if !INDEXES.contains(&index.as_str()) {
            return Err(diagnostic(16, &first, "Unsupported index"));
        }
        let term = self.term()?;
        check_plus(&term)?;
        if index == "dt.identifier" && relation == Relation::Any {
            return Err(diagnostic(19, "any", "Unsupported relation"));
        }
        if DATE_INDEXES.contains(&index.as_str()) {
            if !date_shaped(&term) {
                return Err(diagnostic(36, &term, "Term in invalid format for index or relation"));
            }
            if parse_date(&term).is_none() {
                self.warnings.push(format!("{first}{} {term}", relation_text(relation)));
                return Ok(Node::Dropped);
            }
        }
        Ok(Node::Clause { index, relation, term })
    }

    fn sort(&mut self) -> Result<Vec<(String, bool)>, CqlFault> {
        let mut keys = Vec::new();
        if !self.at_sort() {
            return Ok(keys);
        }
        self.at += 1;
        while let Some(Token::Word(index)) = self.peek().cloned() {
            self.at += 1;
            let index = index.to_ascii_lowercase();
            if !INDEXES.contains(&index.as_str()) {
                return Err(diagnostic(16, &index, "Unsupported index"));
            }
            let mut descending = false;
            if self.peek() == Some(&Token::Slash) {
                self.at += 1;
                match self.next() {
                    Some(Token::Word(m)) if m == "sort.descending" => descending = true,
                    Some(Token::Word(m)) if m == "sort.ascending" => {}
                    _ => return Err(diagnostic(80, "sort modifier", "Sort not supported")),
                }
            }
            keys.push((index, descending));
        }
        if keys.is_empty() {
            return Err(diagnostic(10, "sortBy without a key", "Query syntax error"));
        }
        Ok(keys)
    }
}

fn relation_text(r: Relation) -> &'static str {
    match r {
        Relation::Eq => "=",
        Relation::Exact => "==",
        Relation::Lt => "<",
        Relation::Gt => ">",
        Relation::Le => "<=",
        Relation::Ge => ">=",
        Relation::Ne => "<>",
        Relation::Any => " any",
        Relation::All => " all",
        Relation::Adj => " adj",
    }
}

/// An inner `+` between letters or digits rejects the query.
fn check_plus(term: &str) -> Result<(), CqlFault> {
    let chars: Vec<char> = term.chars().collect();
    for w in chars.windows(3) {
        if w[1] == '+' && w[0].is_alphanumeric() && w[2].is_alphanumeric() {
            return Err(diagnostic(10, term, "Query syntax error"));
        }
    }
    Ok(())
}

/// Parses `query` as the real service does, or says how it refuses it.
pub fn parse_cql(query: &str) -> Result<CqlQuery, CqlFault> {
    if query.contains('{') || query.contains('}') {
        return Err(CqlFault::ServerError);
    }
    let mut parser = Parser {
        tokens: tokenize(query)?,
        at: 0,
        warnings: Vec::new(),
    };
    if parser.tokens.is_empty() {
        return Err(diagnostic(7, "query", "Mandatory parameter not supplied"));
    }
    let root = parser.scoped(0)?;
    let sort = parser.sort()?;
    if parser.peek().is_some() {
        return Err(diagnostic(10, &parser.describe_here(), "Query syntax error"));
    }
    Ok(CqlQuery {
        root,
        sort,
        warnings: parser.warnings,
    })
}

/// Lower case, common accents folded, split into words of letters and digits.
pub fn words(text: &str) -> Vec<String> {
    let folded: String = text
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ä' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'ö' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            c => c,
        })
        .collect();
    folded
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Whether `needle`'s words occur together, in order, in `hay` (a trailing `*` on the
/// last word is a prefix mask).
fn phrase_in(hay: &[String], term: &str) -> bool {
    let mask = term.trim_end().ends_with('*');
    let needle = words(term);
    if needle.is_empty() {
        return false;
    }
    hay.windows(needle.len()).any(|w| {
        w.iter().zip(&needle).enumerate().all(|(i, (h, n))| {
            if mask && i == needle.len() - 1 {
                h.starts_with(n.as_str())
            } else {
                h == n
            }
        })
    })
}

fn same_value(a: &str, b: &str) -> bool {
    words(a) == words(b)
}

impl CqlQuery {
    /// Whether `p` matches the query.
    pub fn matches(&self, p: &ObPublication) -> bool {
        eval(&self.root, p)
    }
}

fn eval(node: &Node, p: &ObPublication) -> bool {
    match node {
        Node::And(a, b) => eval(a, p) && eval(b, p),
        Node::Or(a, b) => eval(a, p) || eval(b, p),
        Node::Not(a, b) => eval(a, p) && !eval(b, p),
        Node::Dropped => true,
        Node::Clause { index, relation, term } => clause(index, *relation, term, p),
    }
}

fn clause(index: &str, relation: Relation, term: &str, p: &ObPublication) -> bool {
    let text = |relation: Relation, hay: &[String]| match relation {
        Relation::Any => words(term).iter().any(|w| hay.contains(w)),
        Relation::All => words(term).iter().all(|w| hay.contains(w)),
        _ => phrase_in(hay, term),
    };
    // A field the publication does not have matches nothing.
    let has = |field: &Option<String>, test: &dyn Fn(&str) -> bool| field.as_deref().is_some_and(test);
    match index {
        "cql.serverchoice" | "cql.textandindexes" => {
            let mut hay = words(&p.title);
            hay.extend(p.creator.iter().flat_map(|c| words(c)));
            hay.extend(p.subjects.iter().flat_map(|s| words(s)));
            hay.extend(p.paragraphs.iter().flat_map(|s| words(s)));
            text(relation, &hay)
        }
        "c.product-area" => same_value(term, "officielepublicaties"),
        "dt.title" => text(relation, &words(&p.title)),
        "dt.subject" => p.subjects.iter().any(|s| text(relation, &words(s))),
        "dt.creator" => match relation {
            Relation::Exact => has(&p.creator, &|c| c == term),
            _ => has(&p.creator, &|c| text(relation, &words(c))),
        },
        "dt.type" => has(&p.document_type, &|t| same_value(t, term)),
        "w.organisatietype" => has(&p.organization_type, &|t| same_value(t, term)),
        "w.publicatienaam" => same_value(p.publication, term),
        "w.dossiernummer" => p.dossier.as_deref() == Some(term.trim()),
        "dt.identifier" => match relation {
            Relation::Exact => p.identifier == term,
            _ => phrase_in(&words(&p.identifier), term),
        },
        "dt.date" | "dt.available" | "dt.modified" => {
            let value = if index == "dt.date" { &p.date } else { &p.available };
            has(value, &|value| {
                let ord = value.cmp(term);
                match relation {
                    Relation::Lt => ord.is_lt(),
                    Relation::Gt => ord.is_gt(),
                    Relation::Le => ord.is_le(),
                    Relation::Ge => ord.is_ge(),
                    Relation::Ne => ord.is_ne(),
                    _ => ord.is_eq(),
                }
            })
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(query: &str) -> String {
        match parse_cql(query) {
            Err(CqlFault::Diagnostic { uri, .. }) => uri,
            other => panic!("{query}: {other:?}"),
        }
    }

    #[test]
    fn strict_like_the_real_service() {
        assert_eq!(rejected("stikstof natuur"), "info:srw/diagnostic/1/10");
        assert_eq!(rejected("a AND NOT b"), "info:srw/diagnostic/1/10");
        assert_eq!(rejected("\"unclosed"), "info:srw/diagnostic/1/10");
        assert_eq!(rejected("(a AND b"), "info:srw/diagnostic/1/10");
        assert_eq!(rejected("zonne+energie"), "info:srw/diagnostic/1/10");
        assert_eq!(rejected("dt.nope=\"x\""), "info:srw/diagnostic/1/16");
        assert_eq!(rejected("dt.identifier any \"kst\""), "info:srw/diagnostic/1/19");
        assert_eq!(rejected("a sortBy dt.available/descending"), "info:srw/diagnostic/1/80");
        assert_eq!(rejected("dt.date>=gisteren"), "info:srw/diagnostic/1/36");
        assert_eq!(parse_cql("\"{x}\""), Err(CqlFault::ServerError));
        let q = parse_cql("a NOT b AND (c OR \"d e\") AND dt.date<=2026-02-29 sortBy dt.available/sort.descending")
            .unwrap();
        assert_eq!(q.warnings, ["dt.date<= 2026-02-29"]);
        assert_eq!(q.sort, [("dt.available".to_owned(), true)]);
        assert!(
            parse_cql("zonne + energie").is_err(),
            "a bare + between words is no boolean"
        );
        assert!(parse_cql("\"zonne-energie\" AND 's-Gravenhage").is_ok());
    }

    #[test]
    fn words_fold_case_and_accents() {
        assert_eq!(
            words("Súdwest-Fryslân 's-Gravenhage"),
            ["sudwest", "fryslan", "s", "gravenhage"]
        );
        assert!(phrase_in(&words("De Rechtbank Utrecht"), "utrecht"));
        assert!(phrase_in(&words("zonne-energie op daken"), "zonne energie"));
        assert!(phrase_in(&words("parkeerregels"), "parkeer*"));
        assert!(!phrase_in(&words("energie zonne"), "zonne energie"));
    }
}
