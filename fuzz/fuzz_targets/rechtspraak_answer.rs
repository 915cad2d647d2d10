//! Every Rechtspraak answer reader (Atom feed, ruling XML, courts, areas, procedures):
//! never panics, whatever the bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = besluitbron_server::fuzzing::rechtspraak_answer(data);
});
