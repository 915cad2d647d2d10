//! Each crate's integration tests are built as few binaries, because each binary links the
//! whole crate and its dependencies on its own. Every top-level file in a crate's `tests/`
//! is a module of that crate's `tests/it.rs`, or a `[[test]]` of its own in the crate's
//! `Cargo.toml` with the reason it needs a process to itself in a comment right above the
//! entry; a crate has at most [`BINARIES_MAX`] test binaries.
//!
//! The crates set `autotests = false`, so Cargo builds only the targets they list: a file
//! in `tests/` named nowhere would never be built or run. This test fails on such a file,
//! on a crate that lets Cargo find its targets itself, and on an entry without a reason.
//!
//! A tidy test: it reads each `Cargo.toml` and `tests/it.rs` as text; it neither builds
//! nor runs anything.

use std::collections::BTreeSet;
use std::path::Path;

/// The workspace's crates, as folders under the workspace root.
const CRATES: &[&str] = &["core", "server", "sim", "sim/fakes", "benches", "tidy"];

/// Most test binaries one crate may have: the shared one and a few with a reason.
const BINARIES_MAX: usize = 6;

/// The test binary every other test file of a crate is a module of.
const SHARED: &str = "it";

#[test]
fn every_test_file_is_built_and_every_extra_binary_says_why() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut faults = Vec::new();
    for name in CRATES {
        faults.extend(
            faults_of(&workspace.join(name))
                .into_iter()
                .map(|f| format!("{name}: {f}")),
        );
    }
    assert!(faults.is_empty(), "test binaries:\n{}", faults.join("\n"));
}

#[test]
fn a_file_named_nowhere_and_an_entry_without_a_reason_are_found() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    let write = |path: &str, text: &str| {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("a folder");
        std::fs::write(path, text).expect("written");
    };
    write("tests/it.rs", "//! Shared.\n\nmod listed;\nmod support;\n");
    write("tests/listed.rs", "");
    write("tests/support/mod.rs", "");
    write("tests/forgotten.rs", "");
    write("tests/alone.rs", "");
    write("tests/explained.rs", "");
    write(
        "Cargo.toml",
        "[package]\nname = \"x\"\nautotests = false\n\n\
         [[test]]\nname = \"it\"\npath = \"tests/it.rs\"\n\n\
         # Sends itself SIGKILL.\n[[test]]\nname = \"explained\"\npath = \"tests/explained.rs\"\n\n\
         [[test]]\nname = \"alone\"\npath = \"tests/alone.rs\"\n",
    );
    assert_eq!(
        faults_of(root),
        [
            "[[test]] `alone` has no comment above it saying why it needs a process of its own",
            "tests/forgotten.rs is neither a module of tests/it.rs nor a [[test]] of its own: it is never built",
        ]
    );

    // A crate that lets Cargo find its test targets builds one binary per file.
    write("Cargo.toml", "[package]\nname = \"x\"\n");
    assert_eq!(
        faults_of(root),
        ["Cargo.toml: `autotests = false` missing (Cargo would build every file in tests/ on its own)"]
    );
}

#[test]
fn more_binaries_than_the_most_are_found() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let root = dir.path();
    std::fs::create_dir_all(root.join("tests")).expect("a folder");
    std::fs::write(root.join("tests/it.rs"), "").expect("written");
    let mut manifest =
        String::from("[package]\nname = \"x\"\nautotests = false\n\n[[test]]\nname = \"it\"\npath = \"tests/it.rs\"\n");
    for n in 1..BINARIES_MAX {
        std::fs::write(root.join(format!("tests/alone{n}.rs")), "").expect("written");
        manifest.push_str(&format!(
            "\n# Kills itself.\n[[test]]\nname = \"alone{n}\"\npath = \"tests/alone{n}.rs\"\n"
        ));
    }
    std::fs::write(root.join("Cargo.toml"), &manifest).expect("written");
    assert_eq!(
        faults_of(root),
        Vec::<String>::new(),
        "{BINARIES_MAX} binaries are allowed"
    );
    std::fs::write(root.join("tests/one_more.rs"), "").expect("written");
    manifest.push_str(
        "\n# Sets a variable of the environment.\n[[test]]\nname = \"one_more\"\npath = \"tests/one_more.rs\"\n",
    );
    std::fs::write(root.join("Cargo.toml"), &manifest).expect("written");
    assert_eq!(
        faults_of(root),
        [format!("{} test binaries, at most {BINARIES_MAX}", BINARIES_MAX + 1)]
    );
}

/// What is wrong with the test binaries of the crate in `dir`, one line each.
fn faults_of(dir: &Path) -> Vec<String> {
    let tests = dir.join("tests");
    let files = top_level_files(&tests);
    if files.is_empty() {
        return Vec::new();
    }
    let text = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a Cargo.toml");
    let manifest: toml::Table = text.parse().expect("a Cargo.toml that parses");
    let mut faults = Vec::new();
    let autotests = manifest
        .get("package")
        .and_then(|p| p.get("autotests"))
        .and_then(toml::Value::as_bool);
    if autotests != Some(false) {
        faults.push(
            "Cargo.toml: `autotests = false` missing (Cargo would build every file in tests/ on its own)".to_owned(),
        );
        return faults;
    }
    let entries = test_entries(&text);
    if entries.len() > BINARIES_MAX {
        faults.push(format!("{} test binaries, at most {BINARIES_MAX}", entries.len()));
    }
    for entry in &entries {
        if entry.name != SHARED && !entry.has_reason {
            faults.push(format!(
                "[[test]] `{}` has no comment above it saying why it needs a process of its own",
                entry.name
            ));
        }
    }
    let roots: BTreeSet<String> = entries
        .iter()
        .map(|e| e.path.clone().unwrap_or_else(|| format!("tests/{}.rs", e.name)))
        .collect();
    let shared = std::fs::read_to_string(tests.join(format!("{SHARED}.rs"))).unwrap_or_default();
    let modules = modules_of(&shared);
    for file in &files {
        let stem = file.trim_end_matches(".rs");
        if file != &format!("{SHARED}.rs") && !modules.contains(stem) && !roots.contains(&format!("tests/{file}")) {
            faults.push(format!(
                "tests/{file} is neither a module of tests/{SHARED}.rs nor a [[test]] of its own: it is never built"
            ));
        }
    }
    faults
}

/// The `.rs` files directly in `tests` (not in its folders), by name, sorted.
fn top_level_files(tests: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(tests) else {
        return Vec::new();
    };
    let mut files: Vec<String> = entries
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.is_file() && p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_name().expect("a name").to_string_lossy().into_owned())
        .collect();
    files.sort();
    files
}

/// One `[[test]]` of a manifest.
struct Entry {
    name: String,
    path: Option<String>,
    /// Whether a comment stands right above the `[[test]]` line.
    has_reason: bool,
}

/// The `[[test]]` entries of a manifest's text, in order. Read as text, because the
/// reason is a comment, which a TOML parser drops.
fn test_entries(text: &str) -> Vec<Entry> {
    let lines: Vec<&str> = text.lines().map(str::trim).collect();
    let mut entries = Vec::new();
    for (at, line) in lines.iter().enumerate() {
        if *line != "[[test]]" {
            continue;
        }
        let has_reason = at > 0 && lines[at - 1].starts_with('#');
        let body = lines[at + 1..].iter().take_while(|l| !l.starts_with('['));
        let mut entry = Entry {
            name: String::new(),
            path: None,
            has_reason,
        };
        for l in body {
            if let Some((key, value)) = l.split_once('=') {
                let value = value.trim().trim_matches('"').to_owned();
                match key.trim() {
                    "name" => entry.name = value,
                    "path" => entry.path = Some(value),
                    _ => {}
                }
            }
        }
        entries.push(entry);
    }
    entries
}

/// The modules a crate root declares from files (`mod name;`).
fn modules_of(root: &str) -> BTreeSet<String> {
    root.lines()
        .filter_map(|l| l.trim().strip_prefix("mod "))
        .filter_map(|rest| rest.strip_suffix(';'))
        .map(str::to_owned)
        .collect()
}
