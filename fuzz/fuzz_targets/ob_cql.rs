//! The CQL builder: whatever words and filters go in, what comes out starts with the
//! collection clause and has every double quote paired (no clause can come from the
//! input unquoted).
#![no_main]
use libfuzzer_sys::fuzz_target;

#[derive(arbitrary::Arbitrary, Debug)]
struct Search {
    query: String,
    organization_type: Option<String>,
    organization: Option<String>,
    document_type: Option<String>,
    dossier: Option<String>,
    date_from: Option<String>,
}

fuzz_target!(|s: Search| {
    let Some(cql) = besluitbron_server::fuzzing::ob_cql(
        &s.query,
        s.organization_type,
        s.organization,
        s.document_type,
        s.dossier,
        s.date_from,
    ) else {
        return;
    };
    // Quotes inside a value are escaped (\") or dropped; unescaped ones pair up.
    let mut unescaped = 0usize;
    let mut escaped = false;
    for c in cql.chars() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => unescaped += 1,
            _ => escaped = false,
        }
        if c != '\\' {
            escaped = false;
        }
    }
    assert!(unescaped % 2 == 0, "unpaired quote in {cql}");
});
