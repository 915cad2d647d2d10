//! The tidy rules over the whole workspace: one test per rule, each failing with every
//! finding (crate, file, line, what to do), the tables in `src/tables.rs` having had their
//! say. See the crate's documentation for the rules.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use besluitbron_tidy::tables::{self, EXCEPTIONS, EXCEPTIONS_MAX, Owes};
use besluitbron_tidy::{FILE_LINES_MAX, Workspace};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The workspace, read and parsed (each test reads its own: syn's trees stay on the thread
/// that made them).
fn workspace() -> Workspace {
    Workspace::read(&root())
}

fn fail_on(problems: Vec<String>, what: &str) {
    assert!(problems.is_empty(), "{what}:\n{}", problems.join("\n"));
}

/// Every member of the workspace and the fuzz targets are read, and every file parses.
#[test]
fn every_crate_is_read_and_every_file_parses() {
    let ws = &workspace();
    let dirs: Vec<&str> = ws.crates.iter().map(|c| c.krate.dir.as_str()).collect();
    for dir in ["core", "server", "sim", "sim/fakes", "benches", "tidy", "fuzz"] {
        assert!(dirs.contains(&dir), "{dir} is read: {dirs:?}");
    }
    for c in &ws.crates {
        assert!(c.files.len() >= 3, "{}: its files were read", c.krate.name);
    }
    let server = ws.krate("server").expect("the server");
    assert!(
        server.files.iter().any(|f| f.path.starts_with("server/tests/")),
        "the server's tests are read"
    );
    fail_on(
        besluitbron_tidy::unparsed(ws).iter().map(ToString::to_string).collect(),
        "files the rules cannot read",
    );
}

/// No function is longer than a reader can hold, tests included: a longer one is a
/// sequence of named steps waiting to be written.
#[test]
fn no_function_is_longer_than_a_reader_can_hold() {
    let findings = besluitbron_tidy::long_functions(&workspace());
    assert!(
        EXCEPTIONS.len() <= EXCEPTIONS_MAX,
        "at most {EXCEPTIONS_MAX} exceptions: {EXCEPTIONS:#?}"
    );
    for e in EXCEPTIONS {
        let reason = e.reason.to_lowercase();
        assert!(
            !reason.trim().is_empty() && !reason.contains("not yet split") && !reason.contains("not split yet"),
            "{}: fn {}: an exception gives why the function reads better whole: {:?}",
            e.file,
            e.function,
            e.reason
        );
    }
    let owed = tables::owed(|o| matches!(o, Owes::LongFunction(_)));
    fail_on(
        tables::judge(&findings, EXCEPTIONS, &owed),
        "functions a reader cannot hold",
    );
}

/// No file is longer than [`FILE_LINES_MAX`] lines: a longer one is a folder of modules.
#[test]
fn no_file_is_longer_than_a_reader_can_hold() {
    let findings = besluitbron_tidy::long_files(&workspace());
    let owed = tables::owed(|o| *o == Owes::LongFile);
    fail_on(
        tables::judge(&findings, &[], &owed),
        &format!("files over {FILE_LINES_MAX} lines"),
    );
}

/// No crate has an import cycle among its files.
#[test]
fn no_crate_has_an_import_cycle() {
    let ws = &workspace();
    let owed = tables::owed(|o| *o == Owes::Cycle);
    let leave_out: BTreeSet<&str> = owed.iter().map(|o| o.file).collect();
    let mut problems: Vec<String> = besluitbron_tidy::cycles(ws, &leave_out)
        .iter()
        .map(ToString::to_string)
        .collect();
    let in_cycles = besluitbron_tidy::files_in_cycles(ws);
    for o in owed.iter().filter(|o| !in_cycles.contains(o.file)) {
        problems.push(format!(
            "{}: is in no import cycle now: strike its Cycle entry from its table",
            o.file
        ));
    }
    fail_on(problems, "import cycles");
    let server = ws.krate("server").expect("the server");
    assert!(
        server.graph.edges.len() > 100,
        "the server's files were read: {}",
        server.graph.edges.len()
    );
}

/// The server's modules keep the layers of ARCHITECTURE.md's table; `app` is imported by
/// none.
#[test]
fn the_servers_modules_keep_the_layers_of_architecture_md() {
    let architecture = std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md");
    let ws = &workspace();
    let top = besluitbron_tidy::top_level(ws, "server").expect("the server's library");
    assert!(
        top.graph["app"].contains("mcp"),
        "the imports were read: {:?}",
        top.graph
    );
    fail_on(
        besluitbron_tidy::layers(ws, &architecture)
            .iter()
            .map(ToString::to_string)
            .collect(),
        "imports that break the server's layers",
    );
}

/// Connectors never import each other: what two share lives in a module of its own below
/// them (`platforms::koop`, `connectors::regulation`, `platforms::http`).
#[test]
fn no_connector_imports_another() {
    let ws = &workspace();
    let ids = besluitbron_tidy::connector_ids(ws.krate("server").expect("the server"));
    assert!(ids.len() >= 8, "the connectors were found: {ids:?}");
    fail_on(
        besluitbron_tidy::connectors_apart(ws)
            .iter()
            .map(ToString::to_string)
            .collect(),
        "connectors that import another",
    );
}

/// No comment gives an issue number as its reason.
#[test]
fn no_comment_gives_an_issue_number_as_its_reason() {
    let findings = besluitbron_tidy::issue_numbers(&workspace());
    let owed = tables::owed(|o| *o == Owes::IssueNumber);
    fail_on(
        tables::judge(&findings, &[], &owed),
        "comments that give an issue number as their reason",
    );
}
