//! Repairs of extracted text: typographic ligatures spelled out ([`ligatures`]), and for
//! laid-out text (PDF) the lines of a paragraph joined again with words split by a
//! hyphen at a line end mended ([`reflow`]).
//!
//! Invariants: paragraphs (blank lines) stay; Dutch letters (ë, é, ĳ) are never
//! changed — `ĳ` is a letter, not a typographic ligature; a hyphen before a capital or
//! a digit is kept (`Noord-`/`Holland` is `Noord-Holland`), one before a lower-case
//! letter is a split word and goes.

/// `text` with the typographic ligatures (ﬀ ﬁ ﬂ ﬃ ﬄ ﬅ ﬆ) spelled out.
pub fn ligatures(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '\u{FB00}' => out.push_str("ff"),
            '\u{FB01}' => out.push_str("fi"),
            '\u{FB02}' => out.push_str("fl"),
            '\u{FB03}' => out.push_str("ffi"),
            '\u{FB04}' => out.push_str("ffl"),
            '\u{FB05}' | '\u{FB06}' => out.push_str("st"),
            c => out.push(c),
        }
    }
    out
}

/// Laid-out text as paragraphs: the lines of each paragraph joined with a space, a word
/// split over two lines by a hyphen joined again, and the ligatures spelled out.
pub fn reflow(text: &str) -> String {
    let mut paragraphs = Vec::new();
    for paragraph in text.split("\n\n") {
        let mut joined = String::with_capacity(paragraph.len());
        for line in paragraph.split('\n') {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            if joined.is_empty() {
                joined.push_str(line);
                continue;
            }
            let next = line.chars().next();
            let split_word = ends_with_split(&joined) && next.is_some_and(char::is_lowercase);
            if split_word {
                joined.pop();
            } else if !(joined.ends_with('-') && next.is_some_and(|c| c.is_uppercase() || c.is_ascii_digit())) {
                joined.push(' ');
            }
            joined.push_str(line);
        }
        if !joined.is_empty() {
            paragraphs.push(ligatures(&joined));
        }
    }
    paragraphs.join("\n\n")
}

/// True when `text` ends with a letter and a hyphen (`verant-`), not a lone dash.
fn ends_with_split(text: &str) -> bool {
    let mut rev = text.chars().rev();
    matches!(rev.next(), Some('-' | '\u{2010}' | '\u{AD}')) && rev.next().is_some_and(char::is_alphabetic)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflow_joins_lines_and_mends_split_words() {
        let text = "De verant-\nwoordelijkheid voor de ﬁnanciën\nligt bij Noord-\nHolland en\n2023-\n2024.\n\nTweede ali-\nnea: zorg- en welzijn, ĳs.";
        assert_eq!(
            reflow(text),
            "De verantwoordelijkheid voor de financiën ligt bij Noord-Holland en 2023-2024.\n\n\
             Tweede alinea: zorg- en welzijn, ĳs."
        );
    }

    #[test]
    fn ligatures_are_spelled_out_and_dutch_letters_kept() {
        assert_eq!(
            ligatures("eﬀect, ﬂink, ﬃciënt, ĳver, één"),
            "effect, flink, fficiënt, ĳver, één"
        );
    }
}
