//! Document text: sniffing and every reader (PDF, DOCX, RTF, XML) under small caps.
//! A panic inside a reader is caught, as the text pool catches it (it becomes a tool
//! error); what the target finds is a hang past the caps (-timeout), runaway memory
//! (-rss_limit_mb) or a panic that escapes.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(init: {
    // libFuzzer's hook aborts on any panic; the pool's catch_unwind is the behaviour
    // under test, so caught panics must unwind.
    std::panic::set_hook(Box::new(|_| {}));
}, |data: &[u8]| {
    let _ = besluitbron_server::fuzzing::text_extract(data);
});
