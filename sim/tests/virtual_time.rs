//! The simulator's library runs on virtual time only (`sim/src/lib.rs`): no async runtime,
//! no HTTP stack, no network, no wall clock, no sleeping. The fake platforms over real HTTP
//! are the `besluitbron-fakes` crate; only the binary (`src/main.rs`) serves them.

use std::fs;
use std::path::Path;

#[test]
fn the_library_serves_no_http_and_reads_no_wall_clock() {
    let mut offenders = Vec::new();
    visit(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut offenders);
    assert!(
        offenders.is_empty(),
        "real time or I/O in the simulator's library: {offenders:#?}"
    );
}

fn visit(dir: &Path, offenders: &mut Vec<String>) {
    for entry in fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            visit(&path, offenders);
            continue;
        }
        // The binary may serve the fakes and wait for signals; the library may not.
        if path.file_name().is_some_and(|n| n == "main.rs") {
            continue;
        }
        let text = fs::read_to_string(&path).expect("readable source");
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            // Spelled in two halves so that this file does not itself match a search for them.
            for needle in [
                concat!("tok", "io"),
                concat!("ax", "um"),
                concat!("hyp", "er"),
                concat!("req", "west"),
                concat!("std::", "net"),
                concat!("thread::", "sleep"),
                concat!("Instant", "::now"),
                concat!("SystemTime", "::now"),
            ] {
                if code.contains(needle) {
                    offenders.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
}
