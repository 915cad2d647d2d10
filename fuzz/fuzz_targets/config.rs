//! Loading a configuration file: any text gives a configuration or an error, never a
//! panic.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = besluitbron_server::fuzzing::config(text);
    }
});
