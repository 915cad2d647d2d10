//! EUR-Lex's readers: CELLAR's SPARQL JSON answers and its items (XHTML, Formex XML, a
//! Formex zip) give a value or an error, never a panic or a hang.
#![no_main]
use besluitbron_server::platforms::eurlex::{sparql, text};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = sparql::read_results(data);
    let _ = text::read_item(data);
    let _ = text::read_manifest(data);
});
