//! Every OpenTK answer reader: never panics, whatever the bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = besluitbron_server::fuzzing::opentk_answer(data);
});
