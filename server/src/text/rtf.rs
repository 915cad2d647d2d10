//! RTF text: [`read_rtf`] walks the tokens of `rtf-parser`'s lexer itself, because the
//! crate's own parser drops paragraph marks (`\par`) and the difference between a
//! `\uN` character and its fallback.
//!
//! Rules: `\par` is a paragraph, `\line` a line break, `\tab` a tab, `\cell` a cell
//! boundary and `\row` the end of a table row; `\'xx` is a Windows-1252 byte (as
//! Latin-1); `\uN` is a UTF-16 unit whose `\ucN` fallback characters are skipped.
//! Groups that are not text — font, colour and style tables, document info, pictures,
//! headers and footers and every `{\* …}` destination — are skipped whole.
//!
//! Invariants: depth and length caps as for XML (the depth checked on the raw bytes
//! before the lexer allocates a token per brace); the input must be 7-bit or UTF-8
//! (an RTF writer escapes everything else); nothing here panics on a lexer error.

use rtf_parser::{ControlWord, Lexer, Property, Token};

use super::build::{Gap, TextBuilder};
use super::types::{Caps, Deadline, Format, Text, TextError};

/// Destinations whose group is not document text.
const SKIPPED: &[&str] = &[
    "info",
    "pict",
    "header",
    "footer",
    "headerl",
    "headerr",
    "headerf",
    "footerl",
    "footerr",
    "footerf",
    "object",
    "fldinst",
    "themedata",
    "colorschememapping",
    "latentstyles",
    "datastore",
    "xmlnstbl",
    "listtable",
    "listoverridetable",
    "rsidtbl",
    "generator",
    "pgdsctbl",
];

/// Refuses groups nested deeper than `max_depth` before the lexer sees the file: the
/// lexer makes a token of every brace first (tens of bytes each), so a file of nothing but
/// `{` cost some 70 times its size in memory before the walk below could refuse it.
/// Braces are counted as the lexer reads them (`\{`, `\}` and `\\` are characters).
fn check_depth(bytes: &[u8], max_depth: usize) -> Result<(), TextError> {
    let mut depth = 0usize;
    let mut escaped = false;
    for &b in bytes {
        if escaped {
            escaped = false;
            continue;
        }
        match b {
            b'\\' => escaped = true,
            b'{' => {
                depth += 1;
                if depth > max_depth {
                    return Err(TextError::TooDeep { limit: max_depth });
                }
            }
            b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// The text of the RTF file in `bytes`.
pub fn read_rtf(bytes: &[u8], caps: &Caps, deadline: &Deadline) -> Result<Text, TextError> {
    let source = std::str::from_utf8(bytes).map_err(|_| malformed("not 7-bit text"))?;
    check_depth(bytes, caps.max_depth)?;
    let source = symbols(source);
    let tokens = Lexer::scan(&source).map_err(|e| malformed(&e.to_string()))?;
    deadline.check()?;
    let mut walk = Walk::new(caps);
    for token in &tokens {
        walk.token(token)?;
    }
    deadline.check()?;
    walk.finish()
}

/// The walk over the tokens: the text so far, the footnotes apart, and where in the
/// groups and in a `\uN`'s fallback the walk is.
struct Walk {
    body: TextBuilder,
    notes: TextBuilder,
    note_count: usize,
    /// The group depth of the footnote being read, if any.
    in_note: Option<usize>,
    /// A `{\*` was just read: the next control word says whether the group is skipped.
    starred: bool,
    /// The last `\uN` or `\'xx` value, while its fallback may follow.
    last_unit: Option<i32>,
    /// Per open group: whether it is skipped, and its \uc fallback length.
    groups: Vec<(bool, usize)>,
    /// Fallback characters still to skip after a \uN.
    fallback: usize,
    pending_unit: Option<u16>,
    first_in_group: bool,
    max_depth: usize,
}

impl Walk {
    fn new(caps: &Caps) -> Walk {
        Walk {
            body: TextBuilder::new(caps.max_text_chars),
            notes: TextBuilder::new(caps.max_text_chars),
            note_count: 0,
            in_note: None,
            starred: false,
            last_unit: None,
            groups: vec![(false, 1)],
            fallback: 0,
            pending_unit: None,
            first_in_group: false,
            max_depth: caps.max_depth,
        }
    }

    /// Where text goes now: the footnotes while one is read, else the body.
    fn out(&mut self) -> &mut TextBuilder {
        if self.in_note.is_some() {
            &mut self.notes
        } else {
            &mut self.body
        }
    }

    /// The innermost group is skipped whole.
    fn skip_group(&mut self) {
        if let Some(g) = self.groups.last_mut() {
            g.0 = true;
        }
    }

    /// One token of the lexer.
    fn token(&mut self, token: &Token<'_>) -> Result<(), TextError> {
        let (skipping, uc) = *self.groups.last().unwrap_or(&(false, 1));
        if self.starred && !matches!(token, Token::ControlSymbol(_)) {
            self.starred = false;
            self.skip_group();
        }
        match token {
            Token::OpeningBracket => {
                if self.groups.len() >= self.max_depth {
                    return Err(TextError::TooDeep { limit: self.max_depth });
                }
                self.groups.push((skipping, uc));
                self.first_in_group = true;
                self.fallback = 0;
                return Ok(());
            }
            Token::ClosingBracket => {
                if self.groups.len() <= 1 {
                    return Err(malformed("a group closes that was never opened"));
                }
                if self.in_note == Some(self.groups.len()) {
                    self.in_note = None;
                }
                self.groups.pop();
                self.fallback = 0;
            }
            Token::IgnorableDestination => self.starred = true,
            Token::ControlSymbol((word, _)) if self.starred => {
                self.starred = false;
                self.first_in_group = false;
                if !skipping && matches!(word, ControlWord::Unknown(n) if word_name(n) == "footnote") {
                    self.note_count += 1;
                    self.in_note = Some(self.groups.len());
                    self.notes.paragraph();
                    self.notes.text(&format!("[{}]", self.note_count))?;
                    self.notes.gap(Gap::Space);
                } else {
                    self.skip_group();
                }
                return Ok(());
            }
            Token::ControlSymbol((word, property)) => self.control(word, property, skipping, uc)?,
            Token::PlainText(text) if !skipping => {
                self.last_unit = None;
                let mut text: &str = text;
                while self.fallback > 0 && text.starts_with('?') {
                    let mut chars = text.chars();
                    chars.next();
                    text = chars.as_str();
                    self.fallback -= 1;
                }
                self.out().text(text)?;
            }
            Token::CRLF | Token::PlainText(_) | Token::Empty => {}
        }
        self.first_in_group = false;
        Ok(())
    }

    /// A control word that is no `{\*` destination's first: a table or destination to
    /// skip, a `\uN` or its fallback, a footnote mark, a break or a special character.
    fn control(
        &mut self,
        word: &ControlWord<'_>,
        property: &Property,
        skipping: bool,
        uc: usize,
    ) -> Result<(), TextError> {
        let starts_destination = self.first_in_group;
        let unit = match (word, property) {
            (ControlWord::Unicode, Property::Value(v)) => Some(*v),
            _ => None,
        };
        let prior = self.last_unit.take();
        self.last_unit = unit;
        match word {
            ControlWord::FontTable | ControlWord::ColorTable | ControlWord::StyleSheet | ControlWord::FileTable => {
                self.skip_group();
            }
            ControlWord::Unknown(name) if starts_destination && SKIPPED.contains(&word_name(name)) => {
                self.skip_group();
            }
            _ if skipping => {}
            ControlWord::UnicodeIgnoreCount => {
                if let (Some(g), Property::Value(n)) = (self.groups.last_mut(), property) {
                    g.1 = (*n).clamp(0, 8) as usize;
                }
            }
            ControlWord::Unicode => {
                let value = unit.unwrap_or(0);
                // The lexer gives `\uN` and `\'xx` alike: a `\'xx` right after a
                // `\uN` that repeats it or is `?` is that character's fallback.
                let is_fallback = self.fallback > 0
                    && (0..=255).contains(&value)
                    && prior.is_some_and(|p| p == value || value == 0x3F);
                if is_fallback {
                    self.fallback -= 1;
                    self.last_unit = prior;
                } else {
                    let unit = if value < 0 {
                        (value + 65_536) as u16
                    } else {
                        value as u16
                    };
                    let out = if self.in_note.is_some() {
                        &mut self.notes
                    } else {
                        &mut self.body
                    };
                    unicode_unit(out, &mut self.pending_unit, unit)?;
                    self.fallback = uc;
                }
            }
            ControlWord::Unknown(name) if word_name(name) == "chftn" && self.in_note.is_none() => {
                let mark = format!("[{}]", self.note_count + 1);
                self.out().glued(&mark)?;
            }
            ControlWord::Unknown(name) if word_name(name) == "chftn" => {}
            ControlWord::Par => self.out().paragraph(),
            ControlWord::Line => self.out().gap(Gap::Line),
            ControlWord::Tab => self.out().gap(Gap::Tab),
            ControlWord::Emdash => self.out().text("\u{2014}")?,
            ControlWord::Endash => self.out().text("\u{2013}")?,
            ControlWord::Bullet => self.out().text("\u{2022}")?,
            ControlWord::LeftSingleQuote => self.out().text("\u{2018}")?,
            ControlWord::RightSingleQuote => self.out().text("\u{2019}")?,
            ControlWord::LeftDoubleQuote => self.out().text("\u{201C}")?,
            ControlWord::RightDoubleQuote => self.out().text("\u{201D}")?,
            ControlWord::Unknown(name) => match word_name(name) {
                "cell" => self.out().gap(Gap::Cell),
                "row" => self.out().paragraph(),
                "sect" | "page" => self.out().paragraph(),
                "emspace" | "enspace" | "qmspace" | "~" => self.out().gap(Gap::Space),
                _ => {}
            },
            _ => {}
        }
        Ok(())
    }

    /// The body with the footnotes after it, under `Noten`; no text at all is an error.
    fn finish(mut self) -> Result<Text, TextError> {
        if !self.notes.is_empty() {
            self.body.paragraph();
            self.body.text("Noten")?;
            for note in self.notes.as_str().split("\n\n") {
                self.body.paragraph();
                self.body.text(note)?;
            }
        }
        let text = self.body.finish();
        if text.trim().is_empty() {
            return Err(malformed("it holds no text"));
        }
        Ok(Text {
            text: super::repair::ligatures(&text),
            format: Format::Rtf,
            pages: None,
        })
    }
}

/// `source` with the control symbols the lexer cannot read replaced: `\\-` (an optional
/// hyphen) dropped, `\\~` (a no-break space) a space, `\\_` (a no-break hyphen) a hyphen;
/// an escaped backslash stays.
fn symbols(source: &str) -> std::borrow::Cow<'_, str> {
    if !source.contains("\\-") && !source.contains("\\~") && !source.contains("\\_") {
        return std::borrow::Cow::Borrowed(source);
    }
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('-') => {}
            Some('~') => out.push(' '),
            Some('_') => out.push('-'),
            Some(other) => {
                out.push('\\');
                out.push(other);
            }
            None => out.push('\\'),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A control word's name as the lexer gives it (`\\info`), without its backslash.
fn word_name(name: &str) -> &str {
    name.trim().trim_start_matches('\\')
}

/// A UTF-16 unit of a `\uN`: a character, or half of a surrogate pair kept for the next.
fn unicode_unit(out: &mut TextBuilder, pending: &mut Option<u16>, unit: u16) -> Result<(), TextError> {
    let units: Vec<u16> = match pending.take() {
        Some(high) => vec![high, unit],
        None if (0xD800..0xDC00).contains(&unit) => {
            *pending = Some(unit);
            return Ok(());
        }
        None => vec![unit],
    };
    let decoded: String = char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect();
    out.text(&decoded)
}

fn malformed(detail: &str) -> TextError {
    TextError::Malformed {
        format: Format::Rtf,
        detail: detail.chars().take(120).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(rtf: &str) -> Result<String, TextError> {
        read_rtf(rtf.as_bytes(), &Caps::default(), &Deadline::after_ms(10_000)).map(|t| t.text)
    }

    #[test]
    fn paragraphs_escapes_and_unicode_survive() {
        let rtf = r"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\froman Times New Roman;}}{\colortbl;\red0\green0\blue0;}{\*\generator Writer;}{\info{\title Titel}}
\pard\plain De gemeente Zo\'eb term\'e9t\par
Tweede alinea met \u307\'3f en \u-4064 ?s.\line Volgende regel\tab kolom\par}";
        assert_eq!(
            read(rtf).unwrap(),
            "De gemeente Zoë termét\n\nTweede alinea met ĳ en \u{F020}s.\nVolgende regel\tkolom"
        );
    }

    #[test]
    fn broken_files_are_malformed() {
        for bad in [r"{\rtf1 open", r"{\rtf1 \'zz}", r"{\rtf1 }}"] {
            assert!(
                matches!(read(bad), Err(TextError::Malformed { .. })),
                "{bad}: {:?}",
                read(bad)
            );
        }
        let deep = format!(r"{{\rtf1 {}x{}}}", "{".repeat(300), "}".repeat(300));
        assert_eq!(read(&deep), Err(TextError::TooDeep { limit: 256 }));
    }
}
