//! Which written forms of a request have been seen (R-D9 with R-D5): tells an exact
//! repeat from a request that shares its key only through level-1 folding.
//!
//! A request's key is its canonical form; its *form* is how it was written (the tool
//! and its arguments as sent). When the buffer or a flight answers a request, it was an
//! exact repeat if that form was seen with that key before, and a canonical duplicate
//! otherwise. The table remembers, per key, the forms seen (a few per key), for at most
//! `capacity` keys, the least recently used key going first: a forgotten key makes its
//! next repeat count as canonical once, which only ever errs towards crediting folding
//! with a repeat that was exact.
//!
//! What this module does not do: decide what is served (the buffer and the flights do),
//! or keep any request's content: keys and forms are hashes.

use std::collections::{BTreeMap, VecDeque};

/// Forms remembered per key at most (the most recent).
const FORMS_PER_KEY: usize = 8;

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

    /// Notes that `form` was asked with `key`; true when that form had been seen with
    /// that key before (an exact repeat).
    pub fn seen(&mut self, key: u64, form: u64) -> bool {
        self.tick += 1;
        self.used.insert(key, self.tick);
        self.order.push_back((key, self.tick));
        let forms = self.forms.entry(key).or_default();
        let before = forms.contains(&form);
        if !before {
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
        assert!(!t.seen(1, 100), "first time");
        assert!(t.seen(1, 100), "the same form again");
        assert!(!t.seen(1, 101), "another form of the same key");
        assert!(t.seen(1, 101));
        assert!(!t.seen(2, 100), "the same form with another key is new");
    }

    #[test]
    fn the_least_recently_used_key_goes_first() {
        let mut t = FormTable::new(2);
        t.seen(1, 10);
        t.seen(2, 20);
        t.seen(1, 10); // 1 used again: 2 is now the oldest
        t.seen(3, 30);
        assert_eq!(t.len(), 2);
        assert!(t.seen(1, 10), "kept");
        assert!(!t.seen(2, 20), "forgotten, so counted as new once");
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
