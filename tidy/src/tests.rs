//! The rules over small workspaces of their own: each finding names its crate, file and
//! line, and the server's rules read the server's folder.

use super::*;

/// (path, text) of a fixture's file.
type Files<'a> = &'a [(&'a str, &'a str)];

fn workspace(crates: &[(&str, &str, Files)]) -> Workspace {
    Workspace::from_files(
        crates
            .iter()
            .map(|(name, dir, files)| {
                let krate = Crate {
                    name: name.to_string(),
                    dir: dir.to_string(),
                };
                (krate, files.iter().map(|(p, t)| SourceFile::new(p, t)).collect())
            })
            .collect(),
    )
}

/// A cycle in one crate is named with that crate, its files and the lines of the uses; a
/// crate without one says nothing; a file left out breaks the cycle it is in.
#[test]
fn a_cycle_in_any_crate_is_named_with_its_crate() {
    let ws = workspace(&[
        (
            "one",
            "one",
            &[
                ("one/src/lib.rs", "mod a;\nmod b;\n"),
                ("one/src/a.rs", "use crate::b::B;\npub struct A;\n"),
                ("one/src/b.rs", "pub struct B;\n"),
            ],
        ),
        (
            "two",
            "two",
            &[
                ("two/src/lib.rs", "mod a;\nmod b;\n"),
                ("two/src/a.rs", "\nuse crate::b::B;\npub struct A;\n"),
                ("two/src/b.rs", "pub struct B(super::a::A);\n"),
            ],
        ),
    ]);
    let found: Vec<String> = cycles(&ws, &BTreeSet::new()).iter().map(ToString::to_string).collect();
    assert_eq!(
        found,
        [
            "two: two/src/a.rs:1: an import cycle among 2 files; take one use away by moving what both sides use into a module of its own:\n  two/src/a.rs:2 -> two/src/b.rs\n  two/src/b.rs:1 -> two/src/a.rs"
        ]
    );
    assert_eq!(cycles(&ws, &["two/src/b.rs"].into()), []);
    assert_eq!(
        files_in_cycles(&ws),
        ["two/src/a.rs".to_owned(), "two/src/b.rs".to_owned()].into()
    );
}

/// The server's layer faults point at the file and line of the import; connectors that
/// use each other are found, the shared family module is not a connector.
#[test]
fn the_servers_rules_name_the_file_and_line() {
    let doc = "### `server/`\n\n| 3 | `app` | w |\n| 2 | `connectors`, `page` | c |\n| 1 | `platforms` | p |\n";
    let files: &[(&str, &str)] = &[
        (
            "server/src/lib.rs",
            "pub mod app;\npub mod connectors;\npub mod page;\npub mod platforms;\n",
        ),
        ("server/src/app.rs", "use crate::page::Page;\n"),
        (
            "server/src/page.rs",
            "pub struct Page;\n\nfn f() { crate::connectors::koop::x(); }\n",
        ),
        (
            "server/src/connectors/mod.rs",
            "pub mod koop;\npub mod bwb;\npub mod cvdr;\n",
        ),
        ("server/src/connectors/koop.rs", "pub fn x() {}\n"),
        (
            "server/src/connectors/bwb/mod.rs",
            "pub const CONNECTOR: u8 = 1;\nfn f() { super::koop::x(); }\n",
        ),
        (
            "server/src/connectors/cvdr/mod.rs",
            "pub const CONNECTOR: u8 = 2;\n\nuse crate::platforms::bwb::Read;\n",
        ),
        ("server/src/platforms/mod.rs", "pub mod bwb;\n"),
        ("server/src/platforms/bwb.rs", "pub struct Read;\n"),
    ];
    let ws = workspace(&[("besluitbron-server", "server", files)]);
    let found: Vec<String> = layers(&ws, doc).iter().map(ToString::to_string).collect();
    assert_eq!(
        found,
        [
            "besluitbron-server: server/src/page.rs:3: `page` (layer 2) imports `connectors` (layer 2): a module imports only lower layers; move what it uses below `page`, or, if the table is what is wrong, give `page` a layer above `connectors` in ARCHITECTURE.md"
        ]
    );
    assert_eq!(
        connector_ids(ws.krate("server").unwrap()),
        ["bwb".to_owned(), "cvdr".to_owned()].into()
    );
    let apart: Vec<(String, usize)> = connectors_apart(&ws).into_iter().map(|f| (f.file, f.line)).collect();
    assert_eq!(apart, [("server/src/connectors/cvdr/mod.rs".to_owned(), 3)]);
}

/// Long functions and files and issue numbers are found with their lines.
#[test]
fn lengths_and_citations_are_found_with_their_lines() {
    let long_fn = format!("// Fine.\nfn long() {{\n{}}}\n", "    let _x = 1;\n".repeat(99));
    let long_file = "// issue 12\n".repeat(FILE_LINES_MAX + 1);
    let ws = workspace(&[("c", "c", &[("c/src/lib.rs", &long_fn), ("c/src/big.rs", &long_file)])]);
    let found: Vec<(String, usize, Rule)> = long_functions(&ws)
        .into_iter()
        .chain(long_files(&ws))
        .map(|f| (f.file, f.line, f.rule))
        .collect();
    assert_eq!(
        found,
        [
            ("c/src/lib.rs".to_owned(), 2, Rule::LongFunction("long".to_owned())),
            ("c/src/big.rs".to_owned(), FILE_LINES_MAX + 1, Rule::LongFile)
        ]
    );
    assert_eq!(issue_numbers(&ws).len(), FILE_LINES_MAX + 1);
}
