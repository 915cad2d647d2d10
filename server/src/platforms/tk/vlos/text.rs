//! A text as the report writes it (`tekst`): paragraphs of items, a list's items each a
//! line, inline markup giving its text, whitespace runs folded; and the label a speech
//! opens with, which is not text.
//!
//! Invariants: an item inside an item is inline (its text joins the outer item's); a
//! paragraph with no items is no paragraph. What it does not do: decide where a text
//! belongs (a turn, a note: `turns.rs`).

/// True when `item`, the first item of a speech's text, is its label rather than text:
/// it ends with a colon, has at most ten words, and names the speaker (`name`), or is
/// the chair's `De voorzitter:` (`chair`) — `De heer <nadruk>Pool</nadruk> (PVV):`,
/// `Minister Brekelmans:`. A first item that is a sentence stays text.
pub fn is_label(item: &str, name: &str, chair: bool) -> bool {
    let item = item.trim();
    let lower = item.to_lowercase();
    let words = item.split_whitespace().count();
    let names_speaker = !name.trim().is_empty() && lower.contains(&name.trim().to_lowercase());
    let names_chair = chair && words <= 3 && lower.contains("voorzitter");
    item.ends_with(':') && words <= 10 && (names_speaker || names_chair)
}

/// A run of whitespace as one space, trimmed.
pub(super) fn fold(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A text being read (`tekst`): its paragraphs.
#[derive(Debug, Default)]
pub(super) struct TextBuf {
    /// Finished paragraphs, each its items.
    pub(super) paragraphs: Vec<Vec<String>>,
    /// The paragraph being read.
    pub(super) current: Vec<String>,
    /// The item being read, and how deep inside items (an item in an item is inline).
    pub(super) item: Option<String>,
    pub(super) item_depth: usize,
    /// Inside a `lijst`: each item a line of its own.
    pub(super) list_depth: usize,
}

impl TextBuf {
    pub(super) fn finish_paragraph(&mut self) {
        if !self.current.is_empty() {
            self.paragraphs.push(std::mem::take(&mut self.current));
        }
    }

    /// The paragraphs' items; with `label_of` (a speaker's name, and whether as the
    /// chair) a first item that is the speech's label is left out.
    pub(super) fn into_text(mut self, label_of: Option<(&str, bool)>) -> String {
        self.finish_paragraph();
        if let Some((name, chair)) = label_of
            && let Some(first) = self.paragraphs.first_mut()
            && first.first().is_some_and(|i| is_label(i, name, chair))
        {
            first.remove(0);
        }
        self.paragraphs
            .iter()
            .map(|p| p.join(" "))
            .filter(|p| !p.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }
}
