//! Every OpenBesluitvorming answer reader, over any status, content type and body: never
//! panics (the first byte picks status and content type).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = besluitbron_server::fuzzing::obv_answer(data);
});
