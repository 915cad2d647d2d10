//! Near-duplicate searches (R-D5, level 2): measured, never answered from each other.
//!
//! Within one scope (an MCP session, or a client address without one), a search that
//! differs from a recent search of the same tool only in stop words, plural endings,
//! diacritics, case and punctuation, or by a small edit, is a near-duplicate: the
//! platform is asked as usual (it may well answer differently), and the table says so,
//! so the shell can count it (per scope and in total) and, when a scope repeats them
//! often, tell the assistant it is asking again what it asked moments ago.
//!
//! Invariants: at most `max_scopes` scopes, each with its last [`RECENT`] searches within
//! `window`; the scope used longest ago goes first. Pure: `now` is passed in.
//!
//! What this module does not do: decide what is served, or merge anything. An exact or
//! canonical repeat (level 1) is the buffer's; this table only sees searches that reached
//! the platform.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use crate::time::Instant;

/// Searches remembered per scope.
pub const RECENT: usize = 16;

/// Dutch (and a few English) words that carry no search meaning on their own.
const STOP_WORDS: [&str; 40] = [
    "de", "het", "een", "en", "van", "in", "op", "te", "voor", "met", "over", "aan", "bij", "door", "naar", "om", "of",
    "uit", "tot", "als", "die", "dat", "er", "is", "zijn", "wordt", "the", "a", "an", "of", "and", "for", "to", "on",
    "at", "by", "with", "from", "about", "into",
];

/// A search as the near-duplicate check reads it: lower case, diacritics and
/// punctuation dropped, stop words left out, a plural ending (`-en`, `-s`) cut from words
/// of more than four letters, the words sorted.
pub fn signature(query: &str) -> String {
    let plain: String = query
        .chars()
        .flat_map(char::to_lowercase)
        .map(|c| match c {
            'á' | 'à' | 'â' | 'ä' | 'ã' => 'a',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'í' | 'ì' | 'î' | 'ï' => 'i',
            'ó' | 'ò' | 'ô' | 'ö' | 'õ' => 'o',
            'ú' | 'ù' | 'û' | 'ü' => 'u',
            'ç' => 'c',
            'ñ' => 'n',
            c if c.is_alphanumeric() => c,
            _ => ' ',
        })
        .collect();
    let mut words: Vec<String> = plain
        .split_whitespace()
        .filter(|w| !STOP_WORDS.contains(w))
        .map(|w| {
            let n = w.chars().count();
            if n > 4 && w.ends_with("en") {
                w[..w.len() - 2].to_owned()
            } else if n > 4 && w.ends_with('s') {
                w[..w.len() - 1].to_owned()
            } else {
                w.to_owned()
            }
        })
        .collect();
    words.sort();
    words.dedup();
    words.join(" ")
}

/// The edit distance of `a` and `b` (characters), stopping early above `most`.
fn within_edits(a: &str, b: &str, most: usize) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    if a.len().abs_diff(b.len()) > most {
        return false;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut next = vec![i + 1; b.len() + 1];
        for (j, cb) in b.iter().enumerate() {
            next[j + 1] = (row[j] + usize::from(ca != cb)).min(row[j + 1] + 1).min(next[j] + 1);
        }
        if next.iter().min().is_some_and(|m| *m > most) {
            return false;
        }
        row = next;
    }
    row[b.len()] <= most
}

/// Whether two signatures are near: equal, or (when long enough for one slip to be a
/// typo rather than another word) within one edit per eight characters, at most two.
fn near(a: &str, b: &str) -> bool {
    if a == b {
        return !a.is_empty();
    }
    let shorter = a.chars().count().min(b.chars().count());
    shorter >= 6 && within_edits(a, b, (shorter / 8).clamp(1, 2))
}

#[derive(Debug)]
struct Scope {
    /// (when, tool, the canonical request, its signature), oldest first.
    recent: VecDeque<(Instant, String, String, String)>,
    near_duplicates: u64,
    last_used: Instant,
}

/// Recent searches per scope, and their near-duplicates.
#[derive(Debug)]
pub struct NearTable {
    window: Duration,
    max_scopes: usize,
    scopes: BTreeMap<String, Scope>,
}

/// What [`NearTable::check`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NearDuplicate {
    /// The earlier search it is near to, as its signature ([`signature`]).
    pub earlier: String,
    /// How long before.
    pub ago: Duration,
    /// Near-duplicates of this scope so far, this one included.
    pub in_scope: u64,
}

impl NearTable {
    /// A table remembering searches for `window`, for at most `max_scopes` scopes.
    pub fn new(window: Duration, max_scopes: usize) -> NearTable {
        NearTable {
            window,
            max_scopes: max_scopes.max(1),
            scopes: BTreeMap::new(),
        }
    }

    /// Notes a search of `tool` in `scope` that reached the platform: `request` is its
    /// canonical form (the buffer key), `query` its words as written. A near-duplicate of
    /// a recent search with another canonical form is reported.
    pub fn check(
        &mut self,
        now: Instant,
        scope: &str,
        tool: &str,
        request: &str,
        query: &str,
    ) -> Option<NearDuplicate> {
        let sig = signature(query);
        let window = self.window;
        let entry = self.scopes.entry(scope.to_owned()).or_insert_with(|| Scope {
            recent: VecDeque::new(),
            near_duplicates: 0,
            last_used: now,
        });
        entry.last_used = now;
        while entry
            .recent
            .front()
            .is_some_and(|(at, ..)| now.saturating_since(*at) > window)
        {
            entry.recent.pop_front();
        }
        // A request asked before in this scope is a repeat (level 1's), not a near one.
        let repeat = entry.recent.iter().any(|(_, t, r, _)| t == tool && r == request);
        let found = entry
            .recent
            .iter()
            .rev()
            .filter(|_| !repeat)
            .find(|(_, t, r, s)| t == tool && r != request && near(s, &sig))
            .map(|(at, _, _, s)| (now.saturating_since(*at), s.clone()));
        entry.recent.push_back((now, tool.to_owned(), request.to_owned(), sig));
        if entry.recent.len() > RECENT {
            entry.recent.pop_front();
        }
        let result = found.map(|(ago, earlier)| {
            entry.near_duplicates += 1;
            NearDuplicate {
                earlier,
                ago,
                in_scope: entry.near_duplicates,
            }
        });
        if self.scopes.len() > self.max_scopes
            && let Some(oldest) = self
                .scopes
                .iter()
                .min_by_key(|(_, s)| s.last_used)
                .map(|(k, _)| k.clone())
        {
            self.scopes.remove(&oldest);
        }
        result
    }

    /// Scopes remembered.
    pub fn scopes(&self) -> usize {
        self.scopes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(secs: u64) -> Instant {
        Instant::from_secs(secs)
    }

    #[test]
    fn stop_words_plurals_diacritics_and_case_are_read_alike() {
        assert_eq!(signature("De begroting van Utrecht"), signature("begrotingen utrecht"));
        assert_eq!(signature("coördinatie"), signature("Coordinatie"));
        assert_eq!(signature("windturbines"), signature("windturbine"));
        assert_ne!(signature("stikstof"), signature("woningbouw"));
    }

    #[test]
    fn a_near_search_in_the_same_scope_and_window_is_reported_never_another() {
        let mut t = NearTable::new(Duration::from_secs(120), 10);
        assert_eq!(t.check(at(0), "s1", "obv_search", "k1", "begroting utrecht"), None);
        let n = t
            .check(at(20), "s1", "obv_search", "k2", "de begrotingen van Utrecht")
            .expect("near");
        assert_eq!((n.ago, n.in_scope), (Duration::from_secs(20), 1));
        assert_eq!(
            t.check(at(25), "s2", "obv_search", "k3", "begroting utrecht"),
            None,
            "another session"
        );
        assert_eq!(
            t.check(at(30), "s1", "ob_search", "k4", "begroting utrecht"),
            None,
            "another tool"
        );
        assert_eq!(
            t.check(at(40), "s1", "obv_search", "k1", "begroting utrecht"),
            None,
            "the same canonical request is level 1's, not a near-duplicate"
        );
        assert_eq!(
            t.check(at(400), "s1", "obv_search", "k5", "begrotingen Utrecht"),
            None,
            "outside the window"
        );
    }

    #[test]
    fn a_typo_is_near_a_different_word_is_not() {
        let mut t = NearTable::new(Duration::from_secs(120), 10);
        t.check(at(0), "s", "obv_search", "a", "klimaatadaptatie");
        assert!(
            t.check(at(1), "s", "obv_search", "b", "klimaatadaptatei").is_some(),
            "two letters swapped"
        );
        assert!(t.check(at(2), "s", "obv_search", "c", "stikstof").is_none());
        assert!(t.check(at(3), "s", "obv_search", "d", "fiets").is_none());
        assert!(
            t.check(at(4), "s", "obv_search", "e", "fietd").is_none(),
            "short words: no typo guessing"
        );
    }

    #[test]
    fn scopes_stay_bounded() {
        let mut t = NearTable::new(Duration::from_secs(120), 3);
        for i in 0..10 {
            t.check(at(i), &format!("s{i}"), "obv_search", "k", "x");
        }
        assert_eq!(t.scopes(), 3);
    }
}
