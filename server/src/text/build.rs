//! [`TextBuilder`]: collects a reader's text into paragraphs, bounded in characters.
//!
//! Invariants: whitespace runs become one space; a break asked for between two pieces
//! of text is written once, the strongest asked for winning (paragraph over line over
//! cell over tab over space); nothing is written before the first text or after the
//! last, so an empty document is the empty string. Soft hyphens are dropped and
//! no-break spaces are spaces.

use super::types::TextError;

/// What separates the next text from the last.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Gap {
    /// Nothing: glued on.
    None,
    /// One space.
    Space,
    /// A tab (Word's tab stop).
    Tab,
    /// A table cell boundary: ` | `.
    Cell,
    /// A line break inside a paragraph.
    Line,
    /// A new paragraph: a blank line.
    Paragraph,
}

/// Text in paragraphs, at most `max_chars` characters.
#[derive(Debug)]
pub(crate) struct TextBuilder {
    out: String,
    chars: usize,
    max_chars: usize,
    gap: Gap,
}

impl TextBuilder {
    /// An empty text of at most `max_chars` characters.
    pub(crate) fn new(max_chars: usize) -> TextBuilder {
        TextBuilder {
            out: String::new(),
            chars: 0,
            max_chars,
            gap: Gap::None,
        }
    }

    /// Asks for at least `gap` before the next text.
    pub(crate) fn gap(&mut self, gap: Gap) {
        self.gap = self.gap.max(gap);
    }

    /// A new paragraph before the next text.
    pub(crate) fn paragraph(&mut self) {
        self.gap(Gap::Paragraph);
    }

    /// Appends `text`, its whitespace collapsed.
    pub(crate) fn text(&mut self, text: &str) -> Result<(), TextError> {
        for c in text.chars() {
            match c {
                '\u{AD}' => {}
                c if c.is_whitespace() => self.gap(Gap::Space),
                c => self.push(c)?,
            }
        }
        Ok(())
    }

    /// Appends `text` right after the last text, whatever gap was asked for (a footnote
    /// mark after its word).
    pub(crate) fn glued(&mut self, text: &str) -> Result<(), TextError> {
        if self.gap <= Gap::Space {
            self.gap = Gap::None;
        }
        self.text(text)
    }

    /// True when no text was written yet.
    pub(crate) fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// The text so far.
    pub(crate) fn as_str(&self) -> &str {
        &self.out
    }

    /// The text.
    pub(crate) fn finish(self) -> String {
        self.out
    }

    fn push(&mut self, c: char) -> Result<(), TextError> {
        if !self.out.is_empty() {
            let sep = match self.gap {
                Gap::None => "",
                Gap::Space => " ",
                Gap::Tab => "\t",
                Gap::Cell => " | ",
                Gap::Line => "\n",
                Gap::Paragraph => "\n\n",
            };
            self.chars += sep.chars().count();
            self.out.push_str(sep);
        }
        self.gap = Gap::None;
        self.chars += 1;
        if self.chars > self.max_chars {
            return Err(TextError::TooLong {
                limit_chars: self.max_chars,
            });
        }
        self.out.push(c);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaps_are_written_once_and_the_strongest_wins() {
        let mut b = TextBuilder::new(100);
        b.paragraph();
        b.text("  Eerste \t alinea\u{A0}hier ").unwrap();
        b.gap(Gap::Space);
        b.paragraph();
        b.gap(Gap::Line);
        b.text("twee").unwrap();
        b.gap(Gap::Cell);
        b.text("cel").unwrap();
        b.glued("[1]").unwrap();
        b.text(" zelf\u{AD}standig").unwrap();
        b.paragraph();
        assert_eq!(b.finish(), "Eerste alinea hier\n\ntwee | cel[1] zelfstandig");
    }

    #[test]
    fn the_character_cap_is_an_error() {
        let mut b = TextBuilder::new(5);
        b.text("abcde").unwrap();
        assert_eq!(b.text("f"), Err(TextError::TooLong { limit_chars: 5 }));
    }
}
