//! Comments that give an issue number as their reason: `// issue 46`, `(#41)`,
//! `see issue 52`. A comment says the reason itself; the number sends the reader elsewhere, and the
//! issue tracker does not travel with the code.
//!
//! Invariants: only comments are read (line, block and doc comments), never strings or
//! names, so a regression test named `regression_issue_41_…` is a name and stays; text in
//! backticks is code and is not read (`#2`, an article's anchor); a number after a name
//! and `#` (`OpenDataPortaal#174`) names another project's tracker, a source rather than
//! a reason, and is allowed. Consecutive line comments are read as one text, so `issue`
//! at the end of one line and `42` at the start of the next are found.
//!
//! What it does not do: read Markdown, TOML or scripts.

/// A comment citing an issue number.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Citation {
    /// The line the citation is on.
    pub line: usize,
    /// The words cited (`issue 42`, `#41`).
    pub cited: String,
}

/// Every citation of an issue number in `text`'s comments.
pub fn citations(text: &str) -> Vec<Citation> {
    let mut out = Vec::new();
    for block in blocks(&comments(text)) {
        let (first, body) = block;
        let code_free = without_code(&body);
        for (at, cited) in cited_numbers(&code_free) {
            out.push(Citation {
                line: first + code_free[..at].matches('\n').count(),
                cited,
            });
        }
    }
    out
}

/// (line, text) of each comment line, markers (`//`, `///`, `//!`, `/*`) left out.
fn comments(text: &str) -> Vec<(usize, String)> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut line = 1;
    let mut i = 0;
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let end = if c == '/' && next == Some('/') {
            let end = (i..chars.len()).find(|&j| chars[j] == '\n').unwrap_or(chars.len());
            let body: String = chars[i + 2..end].iter().collect();
            out.push((line, body.trim_start_matches(['/', '!']).to_owned()));
            end
        } else if c == '/' && next == Some('*') {
            let end = block_comment_end(&chars, i);
            let body: String = chars[i + 2..end.saturating_sub(2).max(i + 2)].iter().collect();
            for (k, part) in body.split('\n').enumerate() {
                out.push((line + k, part.trim_start_matches(['*', '!']).to_owned()));
            }
            end
        } else if c == '"' {
            string_end(&chars, i + 1)
        } else if c == '\'' {
            char_literal_end(&chars, i).unwrap_or(i + 1)
        } else if ident(c) && !i.checked_sub(1).is_some_and(|j| ident(chars[j])) {
            prefixed_literal_end(&chars, i)
                .unwrap_or_else(|| (i..chars.len()).find(|&j| !ident(chars[j])).unwrap_or(chars.len()))
        } else {
            i + 1
        };
        line += chars[i..end].iter().filter(|&&c| c == '\n').count();
        i = end;
    }
    out
}

/// Comment lines joined into blocks of consecutive lines: (first line, text).
fn blocks(lines: &[(usize, String)]) -> Vec<(usize, String)> {
    let mut out: Vec<(usize, usize, String)> = Vec::new();
    for (line, text) in lines {
        match out.last_mut() {
            Some((_, last, body)) if *last + 1 == *line => {
                body.push('\n');
                body.push_str(text);
                *last = *line;
            }
            _ => out.push((*line, *line, text.clone())),
        }
    }
    out.into_iter().map(|(first, _, body)| (first, body)).collect()
}

/// `text` with every backticked span blanked (newlines kept).
fn without_code(text: &str) -> String {
    let mut inside = false;
    text.chars()
        .map(|c| {
            if c == '`' {
                inside = !inside;
                ' '
            } else if inside && c != '\n' {
                ' '
            } else {
                c
            }
        })
        .collect()
}

/// (byte offset, words) of each issue number cited in `text`: `issue 42`, `issues #41`,
/// `#43` not after a name.
fn cited_numbers(text: &str) -> Vec<(usize, String)> {
    let lower = text.to_lowercase();
    let bytes = lower.as_bytes();
    let word = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    let digits_at = |at: usize| bytes[at..].iter().take_while(|b| b.is_ascii_digit()).count();
    let mut out = Vec::new();
    for (at, _) in lower.match_indices("issue") {
        if at > 0 && word(bytes[at - 1]) {
            continue;
        }
        let mut j = at + "issue".len();
        if bytes.get(j) == Some(&b's') {
            j += 1;
        }
        let spaces = bytes[j..].iter().take_while(|b| b.is_ascii_whitespace()).count();
        j += spaces;
        if bytes.get(j) == Some(&b'#') {
            j += 1;
        }
        let n = digits_at(j);
        if spaces > 0 && n > 0 {
            out.push((at, text[at..j + n].split_whitespace().collect::<Vec<_>>().join(" ")));
        }
    }
    for (at, _) in lower.match_indices('#') {
        let after_name = at > 0 && (word(bytes[at - 1]) || bytes[at - 1] == b'#');
        let n = digits_at(at + 1);
        let whole = !bytes.get(at + 1 + n).is_some_and(|&b| word(b));
        let in_issue = out.iter().any(|(o, w)| *o < at && at < o + w.len() + 2);
        if !after_name && n > 0 && whole && !in_issue {
            out.push((at, text[at..at + 1 + n].to_owned()));
        }
    }
    out.sort();
    out
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

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(usize, String)> {
        citations(text).into_iter().map(|c| (c.line, c.cited)).collect()
    }

    #[test]
    fn a_comment_citing_an_issue_is_found_with_its_line() {
        let text = "//! What this does (issue 46).\n\
                    fn regression_issue_41_cut_off() {\n\
                    \x20   let s = \"issue 42 in a string\"; // see Issue #52\n\
                    }\n\
                    /* a block\n   that cites (#41) */\n\
                    /// Two lines: as the\n/// issues\n/// 30 and 31 said.\n";
        assert_eq!(
            found(text),
            [
                (1, "issue 46".to_owned()),
                (3, "Issue #52".to_owned()),
                (6, "#41".to_owned()),
                (8, "issues 30".to_owned()),
            ]
        );
    }

    #[test]
    fn code_names_and_other_trackers_are_not_citations() {
        let text = "/// An article's anchor (`#2`, `CVDR100394_2#3`); the issues that\n\
                    /// a reader has; OpenDataPortaal#174 upstream; r#\"raw\"#.\n\
                    fn issue_7() { let _x = r#\"// issue 9\"#; let _c = '#'; }\n\
                    // #[derive(Debug)] and issue-tracking words\n";
        assert_eq!(found(text), Vec::<(usize, String)>::new());
    }
}
