//! The Basiswettenbestand's SRU reader with its classification, and the toestand
//! reader: never panic, whatever the bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = besluitbron_server::fuzzing::bwb_answer(data);
});
