//! The SPARQL BesluitBron sends to CELLAR, and the answers it reads (PLATFORMS.md §12b.1,
//! §12b.2): a search of acts by words of their title in one language, CELEX number, kind,
//! date range and force ([`search_query`]); one act's metadata, title and text items in
//! one language ([`act_query`]); the answer in Virtuoso's JSON dialect ([`read_results`]).
//!
//! Invariants:
//! - Words reach a query only as string literals written by [`literal`] (every `"`, `\`
//!   and control character escaped), CELEX numbers only after [`is_celex`], days only after
//!   they are checked, kinds and languages only as constants of this module: no text
//!   of a caller can change a query's structure.
//! - Every query carries a `LIMIT` (at most [`MAX_ROWS`]).
//! - Title words are matched with standard SPARQL (`CONTAINS(LCASE(STR(?title)), …)`),
//!   never Virtuoso's `bif:contains`: that is no SPARQL (a standard engine refuses it)
//!   and a second query language inside a literal (quotes, `AND`, wildcards) with its own
//!   escaping. The price: the endpoint scans titles (slower, hence the time-out per query).
//! - An answer without `results.bindings` is an error, never "no results".
//!
//! What this module does not do: send anything (the client does).

use std::collections::BTreeMap;
use std::fmt::Write as _;

use rmcp::schemars;
use serde::Deserialize;

/// The most rows any query asks for.
pub const MAX_ROWS: u32 = 500;

/// CDM, the Publications Office's ontology.
pub const CDM: &str = "http://publications.europa.eu/ontology/cdm#";
/// Where CELLAR's resource types live.
pub const RESOURCE_TYPE: &str = "http://publications.europa.eu/resource/authority/resource-type/";
/// Where CELLAR's languages live.
pub const LANGUAGE: &str = "http://publications.europa.eu/resource/authority/language/";

const PREFIXES: &str = "PREFIX cdm: <http://publications.europa.eu/ontology/cdm#>\n\
                        PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n";

/// `text` as a SPARQL string literal (`"…"`, the short form): `"`, `\` and every control
/// character escaped, so the literal ends exactly where it should whatever `text` holds.
pub fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => {
                let _ = write!(out, "\\u{:04X}", u32::from(c));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The text a [`literal`] stands for, or `None` when `written` is not one (the reference
/// the property tests and the fuzz target hold [`literal`] to).
pub fn unliteral(written: &str) -> Option<String> {
    let inner = written.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        match c {
            '"' | '\n' | '\r' => return None,
            '\\' => match chars.next()? {
                '"' => out.push('"'),
                '\\' => out.push('\\'),
                'n' => out.push('\n'),
                'r' => out.push('\r'),
                't' => out.push('\t'),
                'u' => {
                    let hex: String = chars.by_ref().take(4).collect();
                    let code = u32::from_str_radix(&hex, 16).ok().filter(|_| hex.len() == 4)?;
                    out.push(char::from_u32(code)?);
                }
                _ => return None,
            },
            c => out.push(c),
        }
    }
    Some(out)
}

/// True for a CELEX number as BesluitBron reads it: a sector digit (or `C` for the
/// consolidated texts' `0`), a year, one or two type letters and a number, with a
/// corrigendum's `R(01)` if any: `32014R0001`, `62014CJ0362`, `32024R0795R(01)`.
pub fn is_celex(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() < 7 || b.len() > 24 || !matches!(b[0], b'0'..=b'9' | b'C' | b'E') {
        return false;
    }
    if !b[1..5].iter().all(u8::is_ascii_digit) {
        return false;
    }
    let rest = &text[5..];
    let letters = rest.bytes().take_while(u8::is_ascii_uppercase).count();
    if !(1..=2).contains(&letters) {
        return false;
    }
    let rest = &rest[letters..];
    let (number, corrigendum) = match rest.find('(') {
        Some(at) => (&rest[..at], Some(&rest[at..])),
        None => (rest, None),
    };
    let number = number.strip_suffix('R').unwrap_or(number);
    let number_ok = !number.is_empty() && number.len() <= 6 && number.bytes().all(|c| c.is_ascii_digit());
    let corrigendum_ok = corrigendum
        .is_none_or(|c| c.len() >= 3 && c.ends_with(')') && c[1..c.len() - 1].bytes().all(|d| d.is_ascii_digit()));
    number_ok && corrigendum_ok && (corrigendum.is_some() == rest.contains("R("))
}

/// The kinds of act a search may ask, each with the resource types it takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// Regulations, implementing and delegated ones included.
    Regulation,
    /// Directives, implementing and delegated ones included.
    Directive,
    /// Decisions, implementing and delegated ones included.
    Decision,
    /// Judgments of the Court of Justice and the General Court.
    Ruling,
}

impl Kind {
    /// Its resource types in CELLAR.
    pub fn types(self) -> &'static [&'static str] {
        match self {
            Kind::Regulation => &["REG", "REG_IMPL", "REG_DEL"],
            Kind::Directive => &["DIR", "DIR_IMPL", "DIR_DEL"],
            Kind::Decision => &["DEC", "DEC_IMPL", "DEC_DEL"],
            Kind::Ruling => &["JUDG"],
        }
    }
}

/// What a resource type is in words (`REG_IMPL` → `implementing regulation`).
pub fn kind_name(resource_type: &str) -> &'static str {
    match resource_type.rsplit('/').next().unwrap_or(resource_type) {
        "REG" => "regulation",
        "REG_IMPL" => "implementing regulation",
        "REG_DEL" => "delegated regulation",
        "DIR" => "directive",
        "DIR_IMPL" => "implementing directive",
        "DIR_DEL" => "delegated directive",
        "DEC" => "decision",
        "DEC_IMPL" => "implementing decision",
        "DEC_DEL" => "delegated decision",
        "JUDG" => "judgment",
        "CORRIGENDUM" => "corrigendum",
        _ => "other act",
    }
}

/// The languages an act is read and searched in.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Language {
    /// Dutch.
    #[default]
    Nl,
    /// English.
    En,
}

impl Language {
    /// CELLAR's code (ISO 639-3, upper case).
    pub fn code(self) -> &'static str {
        match self {
            Language::Nl => "NLD",
            Language::En => "ENG",
        }
    }

    /// The short code (`nl`).
    pub fn short(self) -> &'static str {
        match self {
            Language::Nl => "nl",
            Language::En => "en",
        }
    }
}

/// Whether an act is in force.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Force {
    /// In force.
    In,
    /// No longer (or not) in force.
    Not,
}

/// A search of CELLAR, checked: each part was checked or comes from this module.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Search {
    /// Words that must each occur in the title (lower case).
    pub words: Vec<String>,
    /// One CELEX number.
    pub celex: Option<String>,
    /// The kind.
    pub kind: Option<Kind>,
    /// The first day of the document's date, YYYY-MM-DD.
    pub from: Option<String>,
    /// The last day, YYYY-MM-DD.
    pub to: Option<String>,
    /// In force or not.
    pub force: Option<Force>,
    /// The title's language.
    pub language: Language,
}

/// The query of `search`, rows `offset..offset + limit` and one more (to tell whether a
/// next page exists), newest first.
pub fn search_query(search: &Search, offset: u64, limit: u32) -> String {
    let mut q = String::from(PREFIXES);
    q.push_str(
        "SELECT DISTINCT ?celex ?date ?type ?force ?eli ?title WHERE {\n\
         ?work cdm:resource_legal_id_celex ?celex ;\n  cdm:work_has_resource-type ?type ;\n  cdm:work_date_document ?date .\n\
         ?expr cdm:expression_belongs_to_work ?work ;\n",
    );
    let _ = writeln!(
        q,
        "  cdm:expression_uses_language <{LANGUAGE}{}> ;\n  cdm:expression_title ?title .",
        search.language.code()
    );
    q.push_str(
        "OPTIONAL { ?work cdm:resource_legal_in-force ?force }\nOPTIONAL { ?work cdm:resource_legal_eli ?eli }\n",
    );
    for word in &search.words {
        let _ = writeln!(
            q,
            "FILTER(CONTAINS(LCASE(STR(?title)), {}))",
            literal(&word.to_lowercase())
        );
    }
    if let Some(celex) = &search.celex {
        let _ = writeln!(q, "FILTER(STR(?celex) = {})", literal(celex));
    } else {
        q.push_str("FILTER(!CONTAINS(STR(?celex), \"R(\"))\n");
    }
    if let Some(kind) = search.kind {
        let types: Vec<String> = kind.types().iter().map(|t| format!("<{RESOURCE_TYPE}{t}>")).collect();
        let _ = writeln!(q, "FILTER(?type IN ({}))", types.join(", "));
    }
    if let Some(from) = &search.from {
        let _ = writeln!(q, "FILTER(STR(?date) >= {})", literal(from));
    }
    if let Some(to) = &search.to {
        let _ = writeln!(q, "FILTER(SUBSTR(STR(?date), 1, 10) <= {})", literal(to));
    }
    match search.force {
        Some(Force::In) => q.push_str("FILTER(BOUND(?force) && STR(?force) IN (\"1\", \"true\"))\n"),
        Some(Force::Not) => q.push_str("FILTER(BOUND(?force) && STR(?force) IN (\"0\", \"false\"))\n"),
        None => {}
    }
    let rows = (limit + 1).min(MAX_ROWS);
    let _ = write!(q, "}}\nORDER BY DESC(?date) ?celex\nLIMIT {rows}\nOFFSET {offset}\n");
    q
}

/// The relations of an act [`act_query`] reads, each with the name its rows carry.
pub const RELATIONS: &[(&str, &str)] = &[
    ("work_has_resource-type", "type"),
    ("work_date_document", "date"),
    ("resource_legal_in-force", "in_force"),
    ("resource_legal_eli", "eli"),
    ("resource_legal_date_entry-into-force", "entry_into_force"),
    ("resource_legal_date_end-of-validity", "end_of_validity"),
    ("resource_legal_based_on_resource_legal", "legal_basis"),
];

/// The query of one act by its CELEX number (checked with [`is_celex`]): its
/// [`RELATIONS`], the acts that amend it, its title in `language` and the items of its
/// XHTML and Formex manifestations in `language`. Each row names what it is in `?rel`.
pub fn act_query(celex: &str, language: Language) -> String {
    let lang = format!("<{LANGUAGE}{}>", language.code());
    let relations: Vec<String> = RELATIONS.iter().map(|(p, _)| format!("cdm:{p}")).collect();
    let mut q = String::from(PREFIXES);
    let _ = write!(
        q,
        "SELECT ?rel ?value ?celex ?format ?item WHERE {{\n\
         ?work cdm:resource_legal_id_celex {}^^xsd:string .\n\
         {{ ?work ?rel ?value . FILTER(?rel IN ({})) OPTIONAL {{ ?value cdm:resource_legal_id_celex ?celex }} }}\n\
         UNION {{ ?value cdm:resource_legal_amends_resource_legal ?work . BIND(\"amended_by\" AS ?rel) \
         OPTIONAL {{ ?value cdm:resource_legal_id_celex ?celex }} }}\n\
         UNION {{ ?expr cdm:expression_belongs_to_work ?work ; cdm:expression_uses_language {lang} ; \
         cdm:expression_title ?value . BIND(\"title\" AS ?rel) }}\n\
         UNION {{ ?expr cdm:expression_belongs_to_work ?work ; cdm:expression_uses_language {lang} .\n  \
         ?manif cdm:manifestation_manifests_expression ?expr ; cdm:manifestation_type ?format .\n  \
         ?item cdm:item_belongs_to_manifestation ?manif . BIND(\"item\" AS ?rel)\n  \
         FILTER(STR(?format) IN (\"xhtml\", \"fmx4\")) }}\n\
         }}\nORDER BY ?rel ?item\nLIMIT {MAX_ROWS}\n",
        literal(celex),
        relations.join(", ")
    );
    q
}

/// One value of a row: an IRI or a literal's lexical form.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub struct Term {
    /// `uri`, `literal`, `typed-literal` or `bnode`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The IRI or the lexical form.
    pub value: String,
}

/// One row: its variables' values (a variable without a value is absent).
pub type Row = BTreeMap<String, Term>;

#[derive(Deserialize)]
struct Results {
    bindings: Option<Vec<Row>>,
}

#[derive(Deserialize)]
struct Answer {
    results: Option<Results>,
}

/// The rows of a SPARQL JSON answer (W3C's or Virtuoso's dialect: `typed-literal` read
/// as a literal); an answer without `results.bindings` is the error's detail.
pub fn read_results(body: &[u8]) -> Result<Vec<Row>, String> {
    let answer: Answer = serde_json::from_slice(body).map_err(|e| format!("not SPARQL JSON results: {e}"))?;
    answer
        .results
        .and_then(|r| r.bindings)
        .ok_or_else(|| "SPARQL JSON without `results.bindings`".to_owned())
}

/// The value of `name` in `row`, if bound.
pub fn value<'a>(row: &'a Row, name: &str) -> Option<&'a str> {
    row.get(name).map(|t| t.value.as_str())
}

#[cfg(test)]
mod tests {
    use quickcheck::QuickCheck;

    use super::*;

    /// The literal stands for exactly the text, and holds no bare quote or line break.
    fn reads_back(text: String) -> bool {
        let written = literal(&text);
        let inner = &written[1..written.len() - 1];
        let mut escaped = false;
        let mut bare_quote = false;
        for c in inner.chars() {
            bare_quote |= !escaped && c == '"';
            escaped = !escaped && c == '\\';
        }
        unliteral(&written) == Some(text) && !inner.contains(['\n', '\r']) && !bare_quote
    }

    /// Whatever the words, the search's query keeps its shape: one LIMIT, every word
    /// inside its own literal.
    fn keeps_its_shape(words: Vec<String>) -> bool {
        let n = words.len();
        let q = search_query(
            &Search {
                words,
                ..Search::default()
            },
            0,
            10,
        );
        q.matches("\nLIMIT ").count() == 1 && q.matches("FILTER(CONTAINS(LCASE").count() == n
    }

    #[test]
    fn a_literal_reads_back_as_its_text_and_words_never_change_a_querys_shape() {
        QuickCheck::new()
            .tests(2_000)
            .quickcheck(reads_back as fn(String) -> bool);
        QuickCheck::new()
            .tests(500)
            .quickcheck(keeps_its_shape as fn(Vec<String>) -> bool);
    }

    #[test]
    fn regression_a_quote_and_a_brace_stay_inside_the_literal() {
        assert_eq!(literal("a\"} DROP ALL {\\"), "\"a\\\"} DROP ALL {\\\\\"");
        assert_eq!(literal("x\u{1}"), "\"x\\u0001\"");
        assert_eq!(unliteral("\"a\\\"b\""), Some("a\"b".to_owned()));
        assert_eq!(unliteral("\"a\"b\""), None);
        assert!(reads_back("\u{7f}\"\\".to_owned()));
    }

    #[test]
    fn celex_numbers_are_read_and_other_text_is_not() {
        for ok in [
            "32014R0001",
            "32024R0903",
            "31995L0046",
            "62014CJ0362",
            "32024R0795R(01)",
            "32016D0001",
        ] {
            assert!(is_celex(ok), "{ok}");
        }
        for bad in [
            "",
            "3201R0001",
            "32014r0001",
            "32014R",
            "32014RRR0001",
            "BWBR0018451",
            "32014R0001\"",
            "32014R0001(01)",
        ] {
            assert!(!is_celex(bad), "{bad}");
        }
    }

    #[test]
    fn virtuosos_json_dialect_is_read_and_an_answer_without_bindings_is_not() {
        let body = br#"{"head":{"link":[],"vars":["format"]},"results":{"distinct":false,"ordered":true,"bindings":[{"format":{"type":"typed-literal","datatype":"http://www.w3.org/2001/XMLSchema#string","value":"fmx4"}}]}}"#;
        let rows = read_results(body).unwrap();
        assert_eq!(value(&rows[0], "format"), Some("fmx4"));
        assert!(
            read_results(br#"{"head":{"vars":[]}}"#)
                .unwrap_err()
                .contains("bindings")
        );
        assert!(read_results(b"<html>busy</html>").is_err());
    }
}
