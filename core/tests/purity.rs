//! The core stays pure (ARCHITECTURE.md): no async runtime or HTTP stack, no clock,
//! environment or ambient randomness, no network, files, processes or sleeping threads,
//! no printing. `core/clippy.toml` makes each a lint error; this test guards the
//! manifest and the sources for anyone who skips clippy.
// This test reads core's own sources: it is a shell of its own, not core.
#![allow(clippy::disallowed_methods)]

use std::fs;
use std::path::Path;

#[test]
fn core_depends_on_no_runtime_or_http_crate() {
    let manifest = fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml")).expect("manifest");
    let deps = manifest.split("[dependencies]").nth(1).expect("a dependencies table");
    let deps = deps.split("\n[").next().unwrap_or(deps);
    for forbidden in ["tokio", "axum", "reqwest", "hyper", "redb"] {
        assert!(
            !deps.lines().any(|l| l.trim_start().starts_with(forbidden)),
            "core must not depend on {forbidden}"
        );
    }
}

#[test]
fn core_sources_read_no_clock_environment_or_ambient_randomness_and_do_no_io() {
    let mut offenders = Vec::new();
    visit(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut offenders);
    assert!(offenders.is_empty(), "impure calls in core: {offenders:#?}");
}

fn visit(dir: &Path, offenders: &mut Vec<String>) {
    for entry in fs::read_dir(dir).expect("readable source dir") {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            visit(&path, offenders);
            continue;
        }
        let text = fs::read_to_string(&path).expect("readable source");
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            // Spelled in two halves so that this file does not itself match a search for them.
            for needle in [
                concat!("Instant", "::now"),
                concat!("SystemTime", "::now"),
                concat!("thread", "_rng"),
                concat!("rand::", "rng("),
                concat!("env::", "var"),
                concat!("Random", "State"),
                concat!("std::", "net"),
                concat!("std::", "fs"),
                concat!("std::", "process"),
                concat!("thread::", "sleep"),
                concat!("thread::", "spawn"),
                concat!("std::io::", "std"),
                concat!("print", "!"),
                concat!("println", "!"),
                concat!("dbg", "!"),
            ] {
                if code.contains(needle) {
                    offenders.push(format!("{}:{}: {}", path.display(), i + 1, line.trim()));
                }
            }
        }
    }
}
