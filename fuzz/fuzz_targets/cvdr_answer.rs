//! The CVDR's SRU reader with its classification, and the reader of a local
//! regulation's XML: never panic, whatever the bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = besluitbron_server::fuzzing::cvdr_answer(data);
});
