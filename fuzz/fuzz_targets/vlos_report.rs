//! The stenographic report reader (VLOS): never panics, whatever the bytes; a report it
//! reads has every turn's speaker in its list.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = besluitbron_server::fuzzing::vlos_report(data);
});
