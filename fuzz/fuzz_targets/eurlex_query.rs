//! The SPARQL builder of EUR-Lex: whatever words go in, each is one string literal that
//! reads back as the word, and the query keeps its one `LIMIT` and one title filter per
//! word (no word can add a clause).
#![no_main]
use besluitbron_server::platforms::eurlex::sparql::{Search, literal, search_query, unliteral};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|words: Vec<String>| {
    for w in &words {
        assert_eq!(unliteral(&literal(w)).as_deref(), Some(w.as_str()), "{w:?}");
    }
    let n = words.len();
    let q = search_query(&Search { words, ..Search::default() }, 0, 10);
    assert_eq!(q.matches("\nLIMIT ").count(), 1, "{q}");
    assert_eq!(q.matches("FILTER(CONTAINS(LCASE").count(), n, "{q}");
});
