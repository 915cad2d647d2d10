//! Which written forms of a request have been seen (R-D9 with R-D5): tells an exact
//! repeat from a request that shares its key only through level-1 folding.
//!
//! A request's key is its canonical form; its *form* is how it was written (the tool
//! and its arguments as sent). When the buffer or a flight answers a request, it was an
//! exact repeat if that form was seen with that key before, a canonical duplicate if the
//! key was seen with other forms only, and an exact repeat when the key is not known at
//! all (a buffer entry older than this process, or a key the table forgot): the table
//! remembers, per key, the forms seen (a few per key), for at most `capacity` keys, the
//! least recently used key going first, so what it cannot tell it never credits to
//! folding. (Crediting it did: after a restart every first hit of a kept entry counted
//! as canonical, a tenth of the soak's platform calls.)
//!
//! What this module does not do: decide what is served (the buffer and the flights do),
//! or keep any request's content: keys and forms are hashes.

use std::collections::{BTreeMap, VecDeque};

/// Forms remembered per key at most (the most recent).
const FORMS_PER_KEY: usize = 8;

/// What the table knew of a form when it was noted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormSeen {
    /// This form was seen with this key before: an exact repeat.
    Before,
    /// The key was seen with other forms only: shared through folding.
    OtherForms,
    /// The key was not known (new, or forgotten).
    NewKey,
}

/// The forms seen per key, bounded.
#[derive(Debug)]
pub struct FormTable {
    capacity: usize,
    forms: BTreeMap<u64, Vec<u64>>,
    /// Keys by last use, oldest first (a key may appear more than once; only its last
    /// place counts, checked against `used`).
    order: VecDeque<(u64, u64)>,
    used: BTreeMap<u64, u64>,
    tick: u64,
}

impl FormTable {
    /// A table of at most `capacity` keys (at least one).
    pub fn new(capacity: usize) -> FormTable {
        FormTable {
            capacity: capacity.max(1),
            forms: BTreeMap::new(),
            order: VecDeque::new(),
            used: BTreeMap::new(),
            tick: 0,
        }
    }

    /// Notes that `form` was asked with `key`; what was known of them before.
    pub fn seen(&mut self, key: u64, form: u64) -> FormSeen {
        self.tick += 1;
        self.used.insert(key, self.tick);
        self.order.push_back((key, self.tick));
        let forms = self.forms.entry(key).or_default();
        let before = if forms.contains(&form) {
            FormSeen::Before
        } else if forms.is_empty() {
            FormSeen::NewKey
        } else {
            FormSeen::OtherForms
        };
        if before != FormSeen::Before {
            forms.push(form);
            if forms.len() > FORMS_PER_KEY {
                forms.remove(0);
            }
        }
        while self.forms.len() > self.capacity {
            let Some((old, at)) = self.order.pop_front() else { break };
            if self.used.get(&old) == Some(&at) {
                self.forms.remove(&old);
                self.used.remove(&old);
            }
        }
        // The order queue holds at most a few stale places per live key.
        if self.order.len() > 4 * self.capacity + 16 {
            let used = &self.used;
            self.order.retain(|(k, at)| used.get(k) == Some(at));
        }
        before
    }

    /// Keys remembered.
    pub fn len(&self) -> usize {
        self.forms.len()
    }

    /// Whether no key is remembered.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_form_seen_before_with_its_key_is_an_exact_repeat() {
        let mut t = FormTable::new(10);
        assert_eq!(t.seen(1, 100), FormSeen::NewKey, "first time");
        assert_eq!(t.seen(1, 100), FormSeen::Before, "the same form again");
        assert_eq!(t.seen(1, 101), FormSeen::OtherForms, "another form of the same key");
        assert_eq!(t.seen(1, 101), FormSeen::Before);
        assert_eq!(
            t.seen(2, 100),
            FormSeen::NewKey,
            "the same form with another key is new"
        );
    }

    #[test]
    fn the_least_recently_used_key_goes_first() {
        let mut t = FormTable::new(2);
        t.seen(1, 10);
        t.seen(2, 20);
        t.seen(1, 10); // 1 used again: 2 is now the oldest
        t.seen(3, 30);
        assert_eq!(t.len(), 2);
        assert_eq!(t.seen(1, 10), FormSeen::Before, "kept");
        assert_eq!(
            t.seen(2, 20),
            FormSeen::NewKey,
            "forgotten: not known, so never credited to folding"
        );
    }

    #[test]
    fn the_table_stays_bounded_under_many_keys() {
        let mut t = FormTable::new(100);
        for k in 0..10_000u64 {
            t.seen(k, k);
            t.seen(k % 7, k);
        }
        assert!(t.len() <= 100);
        assert!(t.order.len() <= 4 * 100 + 16 + 2);
    }
}
