//! The Officiële Bekendmakingen SRU reader and its classification (results, warning,
//! rejection, overload): never panics, whatever the bytes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = besluitbron_server::fuzzing::ob_answer(data);
});
