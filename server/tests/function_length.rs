//! No function in `server/src` is longer than a reader can hold: 100 lines, counted from
//! the line of its `fn` to the line of its closing brace. A longer function is a sequence
//! of named steps waiting to be written; the names are what a reader holds instead of
//! the lines.
//!
//! The few functions that stay longer are listed in [`EXCEPTIONS`], each with the reason
//! it reads better whole. The table cannot rot: an exception whose function is gone or
//! has come down to 100 lines fails the test as well, so it is struck off when the
//! function is split.
//!
//! A tidy test in the manner of rust-analyzer's: it reads text. Comments, string and
//! character literals are blanked before the braces are matched, and test code (items
//! under `#[cfg(test)]`, the files such an item names, files under a `tests` folder) is
//! not counted.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::tidy;

/// The most lines a function may span.
const LIMIT: usize = 100;

/// Functions allowed over [`LIMIT`]: (file under `server/src`, function name, reason).
const EXCEPTIONS: &[(&str, &str, &str)] = &[
    (
        "connectors/rechtspraak/mod.rs",
        "rechtspraak_search",
        "the court, area and procedure filters checked against the platform's lists, then the feed asked and read; not yet split into named steps",
    ),
    (
        "connectors/schema.rs",
        "portable_schema",
        "one pass over a JSON schema, a rewrite per schemars form (oneOf constants, nullable types, $defs); not yet split into named steps",
    ),
    (
        "connectors/tk/debates.rs",
        "tk_debates",
        "arguments, speaker resolved against the members list, meetings asked, then each report's activities matched; not yet split into named steps",
    ),
    (
        "connectors/tk/transcript.rs",
        "render",
        "one transcript page's answer assembled from a dozen parts computed in turn (activities, motions, votes, speakers, page); not yet split into named steps",
    ),
    (
        "connectors/tk/votes.rs",
        "fetch",
        "the cases, then each page of votes on their decisions, one admitted call per request; not yet split into named steps",
    ),
    (
        "metrics/mod.rs",
        "new",
        "registers every metric family, one statement each: a table, read down, not a procedure",
    ),
    (
        "platforms/koop/regulation.rs",
        "open",
        "a start tag's role decided, then a match over the roles that open blocks; not yet split into named steps",
    ),
    (
        "platforms/rechtspraak/body.rs",
        "element",
        "one match over the ruling's element names, a few lines an arm: a table, read down",
    ),
    (
        "text/rtf.rs",
        "read_rtf",
        "one loop over the RTF tokens whose state (groups, footnote, \\uc fallback) every arm shares; a split needs that state in a reader struct first",
    ),
];

/// A function found in the sources.
#[derive(Debug, Clone)]
struct Function {
    /// The path under `server/src`, with `/` separators.
    file: String,
    name: String,
    /// Lines from the `fn` line to the closing-brace line, both counted.
    lines: usize,
}

#[test]
fn no_function_is_longer_than_a_reader_can_hold() {
    let long: Vec<Function> = functions(&source_root())
        .into_iter()
        .filter(|f| f.lines > LIMIT)
        .collect();
    let excepted: BTreeSet<(&str, &str)> = EXCEPTIONS.iter().map(|(f, n, _)| (*f, *n)).collect();
    let mut problems = Vec::new();
    for f in &long {
        if !excepted.contains(&(f.file.as_str(), f.name.as_str())) {
            problems.push(format!(
                "{}: fn {} is {} lines (over {LIMIT}); split it into named steps, or add an \
                 exception with its reason",
                f.file, f.name, f.lines
            ));
        }
    }
    for (file, name, reason) in EXCEPTIONS {
        assert!(
            !reason.trim().is_empty(),
            "the exception for {file}: fn {name} gives no reason"
        );
        if !long.iter().any(|f| f.file == *file && f.name == *name) {
            problems.push(format!(
                "{file}: fn {name} is excepted but is no longer over {LIMIT} lines (or is gone); \
                 strike the exception"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "functions a reader cannot hold:\n{}",
        problems.join("\n")
    );
}

/// The reader itself: braces in literals and comments do not count, test code is skipped.
#[test]
fn the_reader_counts_what_the_compiler_sees() {
    let text = r####"
fn short() -> &'static str {
    let _c = '{';
    let _d = '\'';
    // a { in a comment
    /* and { in /* a nested */ block */
    let _r = r#"a "{" raw"#;
    "}"
}

trait T {
    fn declared(&self);
    fn given<'a>(&'a self, _x: [u8; 2]) -> &'a str {
        "x"
    }
}

#[cfg(test)]
mod tests {
    fn inside_tests() {
    }
}

fn last() {
}

#[cfg(test)]
mod render_test;
"####;
    let (found, test_modules) = functions_in(text);
    assert_eq!(
        found,
        vec![("short".to_owned(), 8), ("given".to_owned(), 3), ("last".to_owned(), 2)]
    );
    assert_eq!(test_modules, vec!["render_test".to_owned()]);
}

fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every non-test function under `root`, in file order.
fn functions(root: &Path) -> Vec<Function> {
    let files = tidy::rust_files(root);
    let mut test_files: BTreeSet<PathBuf> = BTreeSet::new();
    let mut found: Vec<(PathBuf, String, usize)> = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("a source file");
        let (functions, test_modules) = functions_in(&text);
        for module in test_modules {
            test_files.extend(module_files(root, file, &module));
        }
        for (name, lines) in functions {
            found.push((file.clone(), name, lines));
        }
    }
    found
        .into_iter()
        .filter(|(file, _, _)| !test_files.contains(file))
        .map(|(file, name, lines)| Function {
            file: file
                .strip_prefix(root)
                .expect("under the root")
                .iter()
                .map(|p| p.to_string_lossy().into_owned())
                .collect::<Vec<_>>()
                .join("/"),
            name,
            lines,
        })
        .collect()
}

/// The files a `mod name;` in `file` may name (`name.rs` or `name/mod.rs` beside or below it).
fn module_files(root: &Path, file: &Path, name: &str) -> Vec<PathBuf> {
    let stem = file.file_stem().expect("a file name").to_string_lossy();
    let dir = file.parent().expect("a folder");
    let base = if file.parent() == Some(root) && matches!(&*stem, "lib" | "main") || stem == "mod" {
        dir.to_path_buf()
    } else {
        dir.join(&*stem)
    };
    vec![base.join(format!("{name}.rs")), base.join(name).join("mod.rs")]
}

/// The functions of one file — (name, lines) in order — and the modules it declares as
/// `#[cfg(test)] mod name;` (whose files are test code).
fn functions_in(text: &str) -> (Vec<(String, usize)>, Vec<String>) {
    let code = blank_literals_and_comments(text);
    let (code, test_modules) = blank_test_items(&code);
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(found) = find_word(&code, "fn", at) {
        at = found + 2;
        let rest = &code[at..];
        let name: String = rest
            .trim_start()
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        // `fn(u8) -> u8` is a type, not a function.
        if name.is_empty() || !rest.starts_with(char::is_whitespace) {
            continue;
        }
        let Some(open) = body_start(bytes, at) else {
            continue;
        };
        let close = matching_brace(bytes, open);
        out.push((name, line_of(&code, close) - line_of(&code, found) + 1));
    }
    (out, test_modules)
}

/// Where the body of the function whose signature starts at `from` opens; `None` for a
/// declaration without a body (`fn f();`).
fn body_start(bytes: &[u8], from: usize) -> Option<usize> {
    let mut depth = 0i64;
    for (i, &b) in bytes.iter().enumerate().skip(from) {
        match b {
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth -= 1,
            b'{' if depth == 0 => return Some(i),
            b';' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The index of the brace closing the one at `open` (the end of the text if unclosed).
fn matching_brace(bytes: &[u8], open: usize) -> usize {
    let mut depth = 0i64;
    for (i, &b) in bytes.iter().enumerate().skip(open) {
        match b {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return i;
                }
            }
            _ => {}
        }
    }
    bytes.len().saturating_sub(1)
}

fn line_of(text: &str, at: usize) -> usize {
    text[..at].matches('\n').count() + 1
}

/// The next `word` at or after `from` standing as a whole identifier.
fn find_word(text: &str, word: &str, from: usize) -> Option<usize> {
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let bytes = text.as_bytes();
    let mut at = from;
    while let Some(i) = text[at..].find(word) {
        let start = at + i;
        let end = start + word.len();
        let before = start.checked_sub(1).map(|j| bytes[j]);
        if !before.is_some_and(ident) && !bytes.get(end).is_some_and(|&c| ident(c)) {
            return Some(start);
        }
        at = end;
    }
    None
}

/// The text with every item under `#[cfg(test)]` blanked, and the names of the modules
/// declared as `#[cfg(test)] mod name;`. Expects comments and literals blanked already.
fn blank_test_items(code: &str) -> (String, Vec<String>) {
    let mut bytes = code.as_bytes().to_vec();
    let mut modules = Vec::new();
    let mut at = 0;
    while let Some(i) = code[at..].find("#[cfg(test)]") {
        let start = at + i;
        at = start + "#[cfg(test)]".len();
        // The item runs to its first `;` or to the brace closing its first `{`.
        let Some(end) = (at..bytes.len()).find(|&j| matches!(bytes[j], b';' | b'{')) else {
            break;
        };
        let end = if bytes[end] == b'{' {
            matching_brace(&bytes, end)
        } else {
            end
        };
        let item = &code[at..end];
        let words: Vec<&str> = item.split_whitespace().collect();
        if bytes[end] == b';'
            && let Some(p) = words.iter().position(|w| *w == "mod")
            && let Some(name) = words.get(p + 1)
        {
            modules.push(name.trim_end_matches(';').to_owned());
        }
        for b in &mut bytes[start..=end] {
            if *b != b'\n' {
                *b = b' ';
            }
        }
        at = end + 1;
    }
    (String::from_utf8(bytes).expect("blanking keeps UTF-8"), modules)
}

/// The text with comments and string, byte-string and character literals replaced by
/// spaces (newlines kept, so line numbers hold). Lifetimes are left alone.
fn blank_literals_and_comments(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out: Vec<char> = Vec::with_capacity(chars.len());
    let mut i = 0;
    let blank = |out: &mut Vec<char>, from: &[char]| {
        out.extend(from.iter().map(|&c| if c == '\n' { '\n' } else { ' ' }));
    };
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let end = if c == '/' && next == Some('/') {
            (i..chars.len()).find(|&j| chars[j] == '\n').unwrap_or(chars.len())
        } else if c == '/' && next == Some('*') {
            block_comment_end(&chars, i)
        } else if c == '"' {
            string_end(&chars, i + 1)
        } else if c == '\'' {
            match char_literal_end(&chars, i) {
                Some(end) => end,
                None => {
                    out.push(c);
                    i += 1;
                    continue;
                }
            }
        } else if ident(c) && !i.checked_sub(1).is_some_and(|j| ident(chars[j])) {
            match prefixed_literal_end(&chars, i) {
                Some(end) => end,
                None => {
                    // Copy the whole identifier, so a literal prefix inside it is not one.
                    let end = (i..chars.len()).find(|&j| !ident(chars[j])).unwrap_or(chars.len());
                    out.extend(&chars[i..end]);
                    i = end;
                    continue;
                }
            }
        } else {
            out.push(c);
            i += 1;
            continue;
        };
        blank(&mut out, &chars[i..end]);
        i = end;
    }
    out.into_iter().collect()
}

/// The end (exclusive) of the block comment opening at `i`; block comments nest.
fn block_comment_end(chars: &[char], i: usize) -> usize {
    let mut depth = 0;
    let mut j = i;
    while j < chars.len() {
        if chars[j] == '/' && chars.get(j + 1) == Some(&'*') {
            depth += 1;
            j += 2;
        } else if chars[j] == '*' && chars.get(j + 1) == Some(&'/') {
            depth -= 1;
            j += 2;
            if depth == 0 {
                return j;
            }
        } else {
            j += 1;
        }
    }
    chars.len()
}

/// The end (exclusive) of a string whose text starts at `j`, after its opening quote.
fn string_end(chars: &[char], mut j: usize) -> usize {
    while j < chars.len() {
        match chars[j] {
            '\\' => j += 2,
            '"' => return j + 1,
            _ => j += 1,
        }
    }
    chars.len()
}

/// The end (exclusive) of the character literal at `i`, or `None` for a lifetime or label.
fn char_literal_end(chars: &[char], i: usize) -> Option<usize> {
    match chars.get(i + 1)? {
        // An escape: the character after the backslash, then up to the closing quote.
        '\\' => (i + 3..chars.len()).find(|&j| chars[j] == '\'').map(|close| close + 1),
        _ if chars.get(i + 2) == Some(&'\'') => Some(i + 3),
        _ => None,
    }
}

/// The end (exclusive) of a literal with a prefix starting at `i` — `b"…"`, `b'…'`,
/// `c"…"`, `r"…"`, `r#"…"#`, `br#"…"#`, `cr"…"` — or `None` if none starts there.
fn prefixed_literal_end(chars: &[char], i: usize) -> Option<usize> {
    let at = |j: usize| chars.get(j).copied();
    let (prefix_end, raw) = match (at(i)?, at(i + 1), at(i + 2)) {
        ('b' | 'c', Some('r'), Some('"' | '#')) => (i + 2, true),
        ('r', Some('"' | '#'), _) => (i + 1, true),
        ('b' | 'c', Some('"'), _) => return Some(string_end(chars, i + 2)),
        ('b', Some('\''), _) => return char_literal_end(chars, i + 1),
        _ => return None,
    };
    if !raw {
        return None;
    }
    let hashes = (prefix_end..chars.len()).take_while(|&j| chars[j] == '#').count();
    if at(prefix_end + hashes) != Some('"') {
        return None; // a raw identifier such as `r#type`
    }
    let mut j = prefix_end + hashes + 1;
    while j < chars.len() {
        if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == Some('#')) {
            return Some(j + 1 + hashes);
        }
        j += 1;
    }
    Some(chars.len())
}
