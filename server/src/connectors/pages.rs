//! Paging the connectors' tools share, so every default answer fits the answer budget
//! ([`super::schema::ANSWER_BUDGET_BYTES`]) and says exactly how to get the rest:
//! - a document's text by characters ([`text_page`]): the page is the tool's text content
//!   only — the structured content carries where the page is ([`TextPage`]) and the
//!   document's metadata, never the text a second time;
//! - a window of a list kept whole in the buffer ([`Window`]): `offset` and `limit` pick
//!   what is shown, the kept list stays one platform answer;
//! - a page of a platform's results as asked ([`Page`]): `limit` checked, `offset` from 0.
//!
//! What this module does not do: page at the platform (each client pages with its own
//! platform's rules), or render anything beyond the one-line notes.

use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};

/// Characters of document text an answer holds by default: about 8 KB of JSON, so the
/// whole answer stays well within the budget.
pub const DEFAULT_TEXT_LENGTH: usize = 8_000;
/// The most characters of text an assistant may ask for in one answer.
pub const MAX_TEXT_LENGTH: usize = 100_000;

/// Where a page of a document's text is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct TextPage {
    /// The first character of this page (0-based).
    pub text_offset: usize,
    /// Characters in this page.
    pub text_length: usize,
    /// Characters in the whole text.
    pub total_length: usize,
    /// Whether text follows this page.
    pub has_more: bool,
    /// The `offset` that reads the next page, when there is one.
    pub next_offset: Option<usize>,
}

/// The characters `offset..offset + length` of `text`, and where they are.
pub fn text_page(text: &str, offset: usize, length: usize) -> (String, TextPage) {
    let total = text.chars().count();
    let page: String = text.chars().skip(offset).take(length).collect();
    let end = offset.saturating_add(length).min(total);
    let has_more = end < total;
    let at = TextPage {
        text_offset: offset.min(total),
        text_length: page.chars().count(),
        total_length: total,
        has_more,
        next_offset: has_more.then_some(end),
    };
    (page, at)
}

impl TextPage {
    /// "characters a–b of n", and how to read on when more follows.
    pub fn note(&self) -> String {
        let end = self.text_offset + self.text_length;
        match self.next_offset {
            Some(next) => format!(
                "characters {}–{end} of {}; {} more: call again with `offset` {next} (and a larger `length`, up to \
                 {MAX_TEXT_LENGTH}, for bigger pages)",
                self.text_offset,
                self.total_length,
                self.total_length - end
            ),
            None => format!("characters {}–{end} of {}", self.text_offset, self.total_length),
        }
    }
}

/// The checked `length` of a text page, or the tool's error message.
pub fn text_length(tool: &str, length: Option<usize>) -> Result<usize, String> {
    let length = length.unwrap_or(DEFAULT_TEXT_LENGTH);
    if length == 0 || length > MAX_TEXT_LENGTH {
        return Err(format!(
            "{tool}: `length` must be 1 to {MAX_TEXT_LENGTH} characters (default {DEFAULT_TEXT_LENGTH}); page on with \
             `offset`"
        ));
    }
    Ok(length)
}

/// Which part of a kept list an answer shows (its structured content says it as a
/// [`Tally`](crate::connectors::vocabulary::Tally)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Window {
    /// Entries that match (before `offset` and `limit`).
    pub count: usize,
    /// The first entry shown (0-based).
    pub offset: usize,
    /// The most entries shown.
    pub limit: usize,
    /// Entries shown.
    pub shown: usize,
    /// The `offset` that shows the next entries, when there are more.
    pub next_offset: Option<usize>,
}

impl Window {
    /// The window `offset..offset + limit` over `count` matching entries.
    pub fn new(count: usize, offset: usize, limit: usize) -> Window {
        let end = offset.saturating_add(limit).min(count);
        let shown = end.saturating_sub(offset);
        Window {
            count,
            offset,
            limit,
            shown,
            next_offset: (end < count).then_some(end),
        }
    }

    /// The entries of `all` this window shows.
    pub fn of<'a, T>(&self, all: &'a [T]) -> &'a [T] {
        let start = self.offset.min(all.len());
        &all[start..(start + self.shown).min(all.len())]
    }

    /// The window as the vocabulary counts it: every matching entry (exact), and the
    /// next page.
    pub fn tally(&self) -> crate::connectors::vocabulary::Tally {
        crate::connectors::vocabulary::Tally {
            total: Some(self.count as u64),
            total_is_exact: true,
            next_offset: self.next_offset.map(|n| n as u64),
        }
    }

    /// "a–b of n", and how to see the rest when there is more.
    pub fn note(&self) -> String {
        let first = if self.shown == 0 { self.offset } else { self.offset + 1 };
        let mut note = format!("{first}–{} of {}", self.offset + self.shown, self.count);
        if let Some(next) = self.next_offset {
            note.push_str(&format!(
                "; {} more: call again with `offset` {next} (or a larger `limit`)",
                self.count - next
            ));
        }
        note
    }
}

/// The checked `limit` of a list (`default` when not given, 1 to `max`), or the tool's
/// error message.
pub fn list_limit(tool: &str, limit: Option<u32>, default: usize, max: usize) -> Result<usize, String> {
    let limit = limit.map_or(default, |l| l as usize);
    if limit == 0 || limit > max {
        return Err(limit_refused(tool, default, max));
    }
    Ok(limit)
}

/// The tool's error for a `limit` outside 1 to `max`.
fn limit_refused(tool: &str, default: impl std::fmt::Display, max: impl std::fmt::Display) -> String {
    format!("{tool}: `limit` must be 1 to {max} (default {default})")
}

/// A page of a platform's results as a tool asks it: at most `limit` results from the
/// `offset`-th, both in one integer type, as a listing tool's `limit` and `offset` give
/// them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    /// Results at most, 1 to the tool's maximum.
    pub limit: u32,
    /// The first result (0-based): 0, or an answer's `next_offset`.
    pub offset: u32,
}

impl Page {
    /// The page a tool's `limit` (`default` when not given, 1 to `max`) and `offset` (0
    /// when not given) ask, or the tool's error message.
    pub fn asked(tool: &str, limit: Option<u32>, offset: Option<u32>, default: u32, max: u32) -> Result<Page, String> {
        let limit = limit.unwrap_or(default);
        if limit == 0 || limit > max {
            return Err(limit_refused(tool, default, max));
        }
        Ok(Page {
            limit,
            offset: offset.unwrap_or(0),
        })
    }
}

/// Reads an optional argument of a closed value set (an enum), so that a value outside
/// it is refused with the argument's name and the allowed values (serde's own message
/// names neither the argument nor, for a wrong type, the choices):
/// "`kind`: unknown variant `motie`, expected one of `alles`, `moties`, …".
/// A field uses it through a one-line function naming the field, with
/// `#[schemars(with = "Option<T>")]` so its schema stays the enum's.
pub fn choice<'de, D, T>(name: &'static str, deserializer: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::de::DeserializeOwned,
{
    use serde::de::Error as _;
    match Option::<serde_json::Value>::deserialize(deserializer)? {
        None | Some(serde_json::Value::Null) => Ok(None),
        Some(value) => serde_json::from_value(value)
            .map(Some)
            .map_err(|e| D::Error::custom(format!("`{name}`: {e}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_is_its_limit_checked_and_its_offset_with_their_defaults() {
        assert_eq!(Page::asked("t", None, None, 10, 50), Ok(Page { limit: 10, offset: 0 }));
        assert_eq!(
            Page::asked("t", Some(50), Some(9_998), 10, 50),
            Ok(Page {
                limit: 50,
                offset: 9_998
            })
        );
        for refused in [Some(0), Some(51)] {
            assert_eq!(
                Page::asked("t", refused, None, 10, 50),
                Err("t: `limit` must be 1 to 50 (default 10)".to_owned())
            );
        }
        assert_eq!(
            list_limit("t", Some(51), 10, 50).unwrap_err(),
            Page::asked("t", Some(51), None, 10, 50).unwrap_err(),
            "one refusal, in the words every list tool uses"
        );
    }

    #[test]
    fn a_text_page_says_where_the_next_one_starts() {
        let (page, at) = text_page("één twee drie", 4, 4);
        assert_eq!(page, "twee");
        assert_eq!(at.next_offset, Some(8));
        assert!(at.note().contains("call again with `offset` 8"), "{}", at.note());
        let (page, at) = text_page("één", 10, 4);
        assert_eq!((page.as_str(), at.text_offset, at.has_more), ("", 3, false));
    }

    #[test]
    fn a_window_shows_its_part_and_the_next_offset() {
        let all: Vec<u32> = (0..7).collect();
        let w = Window::new(all.len(), 2, 3);
        assert_eq!(w.of(&all), &[2, 3, 4]);
        assert_eq!(
            w.note(),
            "3–5 of 7; 2 more: call again with `offset` 5 (or a larger `limit`)"
        );
        let past = Window::new(all.len(), 9, 3);
        assert!(past.of(&all).is_empty());
        assert_eq!(past.next_offset, None);
        assert!(list_limit("t", Some(0), 50, 100).is_err());
        assert_eq!(list_limit("t", None, 50, 100), Ok(50));
    }
}
