//! The request guard's reading of a JSON-RPC body: never panics; what it accepts, or
//! calls "not JSON-RPC" (-32600), is JSON text; what it calls "not JSON" (-32700) is not
//! strictly JSON (UTF-8, every string a valid one).
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = std::str::from_utf8(data).ok();
    // Grammar only (strings skipped), and strict (every string decoded).
    let lenient = text.is_some_and(|t| serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok());
    let strict = text.is_some_and(|t| serde_json::from_str::<serde_json::Value>(t).is_ok());
    match besluitbron_server::fuzzing::envelope(data) {
        Ok(_) => assert!(lenient, "accepted a body that is not JSON"),
        Err(-32600) => assert!(lenient, "called a non-JSON body 'not JSON-RPC'"),
        Err(-32700) => assert!(!strict, "called JSON 'not JSON'"),
        Err(code) => panic!("unexpected code {code}"),
    }
});
