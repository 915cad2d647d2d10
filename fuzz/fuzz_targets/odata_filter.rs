//! The Tweede Kamer `$filter` builder: whatever words, type and dates go in, what comes
//! out is well-formed and every input is inside a quoted literal.
#![no_main]
use libfuzzer_sys::fuzz_target;

#[derive(arbitrary::Arbitrary, Debug)]
struct Search {
    words: Vec<String>,
    soort: Option<String>,
    date_from: Option<String>,
    date_to: Option<String>,
}

fuzz_target!(|s: Search| {
    use besluitbron_server::fuzzing::{odata_filter, odata_is_well_formed};
    if let Some(filter) = odata_filter(s.words, s.soort, s.date_from, s.date_to) {
        assert!(odata_is_well_formed(&filter), "{filter}");
    }
});
