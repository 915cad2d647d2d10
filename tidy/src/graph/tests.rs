//! The graph builder on small crates of its own: each way a file can use another, and
//! what is not a use.

use super::*;

/// The cycles of the crate made of `files` (path, text), and its edges.
fn read(files: &[(&str, &str)]) -> (Vec<Vec<String>>, Graph) {
    let parsed: Vec<(SourceFile, syn::File)> = files
        .iter()
        .map(|(p, t)| {
            let file = SourceFile::new(p, t);
            let ast = file.parse().expect("the fixture parses");
            (file, ast)
        })
        .collect();
    let graph = crate_graph(&parsed);
    (cycles(&graph.edges), graph.edges)
}

fn cycle(files: &[&str]) -> Vec<String> {
    files.iter().map(|f| f.to_string()).collect()
}

/// A cycle through three modules is named; an import in test code, a test file or a
/// comment is not one; `mod` items declare and do not use.
#[test]
fn a_cycle_is_found_and_named() {
    let mut files = vec![
        (
            "c/src/lib.rs",
            "pub mod a; pub mod b; pub mod c;\n#[cfg(test)]\nmod lib_test;\n",
        ),
        (
            "c/src/a.rs",
            "use crate::b::inner::Thing;\n// crate::c is named here only\n",
        ),
        ("c/src/b/mod.rs", "pub mod inner;\n"),
        (
            "c/src/b/inner.rs",
            "use crate::{c::More, self as _};\npub struct Thing;\n",
        ),
        (
            "c/src/c.rs",
            "pub struct More;\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n",
        ),
        ("c/src/lib_test.rs", "use crate::a::Thing;\n"),
    ];
    let (found, edges) = read(&files);
    assert_eq!(found, Vec::<Vec<String>>::new(), "{edges:?}");
    files[4].1 = "use crate::a::Thing;\n";
    let (found, _) = read(&files);
    assert_eq!(found, [cycle(&["c/src/a.rs", "c/src/b/inner.rs", "c/src/c.rs"])]);
}

/// A `mod.rs` and its child that use each other through `super::` and the child's name
/// are a cycle; so are two files of one folder through `super::sibling`.
#[test]
fn cycles_inside_a_folder_are_found() {
    let files = [
        ("c/src/lib.rs", "mod tk;\n"),
        (
            "c/src/tk/mod.rs",
            "mod ids;\nmod debate;\npub struct Spec;\nfn f() { ids::parse(); }\n",
        ),
        ("c/src/tk/ids.rs", "use super::Spec;\npub fn parse() {}\n"),
        ("c/src/tk/debate.rs", "pub fn more() { super::ids::parse(); }\n"),
    ];
    let (found, _) = read(&files);
    assert_eq!(found, [cycle(&["c/src/tk/ids.rs", "c/src/tk/mod.rs"])]);
    let files = [
        ("c/src/lib.rs", "mod tk;\n"),
        ("c/src/tk/mod.rs", "mod ids;\nmod debate;\n"),
        ("c/src/tk/ids.rs", "use super::debate::Debate;\npub struct Id;\n"),
        ("c/src/tk/debate.rs", "pub struct Debate(super::ids::Id);\n"),
    ];
    let (found, _) = read(&files);
    assert_eq!(found, [cycle(&["c/src/tk/debate.rs", "c/src/tk/ids.rs"])]);
}

/// The graph sees through re-exports: `crate::Name`, where the root has `pub use m::Name`,
/// uses `m`, in a `use`, a group or a type's path; a module named like a re-exported
/// function is still the module when a path goes into it; the root uses what it
/// re-exports only when its own code names it.
#[test]
fn a_cycle_through_the_roots_reexports_is_found() {
    let mut files = vec![
        (
            "c/src/lib.rs",
            "mod config;\nmod own;\nmod corpus;\nmod fake;\n\
             pub use config::{FakeConfig, nested::{Deep, Other as Renamed}};\n\
             #[doc(inline)]\npub use own::OwnSettings;\npub use fake::corpus;\n",
        ),
        (
            "c/src/config.rs",
            "pub mod nested { pub struct Deep; pub struct Other; }\npub struct FakeConfig;\n",
        ),
        ("c/src/own.rs", "use crate::FakeConfig;\npub struct OwnSettings;\n"),
        ("c/src/fake.rs", "use crate::corpus::Rows;\npub fn corpus() {}\n"),
        ("c/src/corpus.rs", "pub struct Rows;\n"),
    ];
    let (found, edges) = read(&files);
    assert_eq!(found, Vec::<Vec<String>>::new(), "{edges:?}");
    assert_eq!(edges["c/src/own.rs"], ["c/src/config.rs".to_owned()].into());
    assert!(edges["c/src/lib.rs"].is_empty(), "{edges:?}");
    for text in [
        "use crate::OwnSettings;\n",
        "fn f() { let _ = crate::OwnSettings; }\n",
        "use crate::{Renamed, OwnSettings};\n",
        "fn f() { assert!(matches!(crate::OwnSettings, _)); }\n",
    ] {
        files[1].1 = text;
        let (found, _) = read(&files);
        assert_eq!(found, [cycle(&["c/src/config.rs", "c/src/own.rs"])], "{text}");
    }
    files[1].1 = "pub struct FakeConfig;\n";
    // `crate::corpus()`, the function `fake` re-exports, is `fake`'s.
    files[4].1 = "fn rows() { crate::corpus(); }\n";
    let (found, _) = read(&files);
    assert_eq!(found, [cycle(&["c/src/corpus.rs", "c/src/fake.rs"])]);
}

/// A helper in the crate root is a file like any other: the root that calls a module and
/// the module that calls the root's helper are a cycle.
#[test]
fn a_crate_root_helper_closes_a_cycle() {
    let files = [
        (
            "c/src/lib.rs",
            "mod serve;\npub(crate) fn helper() {}\npub fn run() { serve::start(); }\n",
        ),
        ("c/src/serve.rs", "pub fn start() { crate::helper(); }\n"),
    ];
    let (found, _) = read(&files);
    assert_eq!(found, [cycle(&["c/src/lib.rs", "c/src/serve.rs"])]);
}

/// Every root of a crate is read: an integration test and the support module it declares.
#[test]
fn each_root_of_a_crate_is_read() {
    let files = [
        ("c/src/lib.rs", "pub fn f() {}\n"),
        ("c/tests/one.rs", "mod support;\nfn main() { support::go(); }\n"),
        ("c/tests/support/mod.rs", "mod more;\npub fn go() { more::on(); }\n"),
        ("c/tests/support/more.rs", "pub fn on() { super::go(); }\n"),
    ];
    let (found, edges) = read(&files);
    assert_eq!(found, [cycle(&["c/tests/support/mod.rs", "c/tests/support/more.rs"])]);
    assert_eq!(edges["c/tests/one.rs"], ["c/tests/support/mod.rs".to_owned()].into());
}
