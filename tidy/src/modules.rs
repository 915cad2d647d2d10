//! The import graph at every level of a crate's module tree: within each folder module
//! (a crate root, `connectors`, `engine`, …) which of its child modules uses which, each
//! child taken with everything below it as one. A cycle there is one a reader of the
//! folder meets even when the files below break it apart: `aggregate.rs` using
//! `engine/record.rs` while `engine/mod.rs` uses `aggregate.rs` is no cycle among files,
//! but `aggregate` and `engine` use each other.
//!
//! Invariants: a use counts at the folder where the module paths of its two files part,
//! between the two children they fall under; a folder's own file and a module below it
//! part at no level here (the file graph has those); test code is not read, as in the
//! file graph ([`crate::graph`]).
//!
//! What it does not do: judge; [`crate::graph::cycles`] finds the cycles of each level.

use std::collections::BTreeMap;

use crate::graph::{CrateGraph, Graph, ModPath};

/// One folder module's children and the uses among them.
#[derive(Debug, Default)]
pub struct Level {
    /// The file of the folder module (a crate root, a `mod.rs`).
    pub file: String,
    /// The folder's path from its crate root, `crate::a::b`.
    pub folder: String,
    /// Child (its path, `crate::a::b::c`) → the children it uses.
    pub graph: Graph,
    /// (child, child it uses) → the first (file, line) that makes the use.
    pub at: BTreeMap<(String, String), (String, usize)>,
}

impl Level {
    /// The files that make the uses among `cycle`'s children (the first of each use).
    pub fn files_within(&self, cycle: &[String]) -> Vec<String> {
        self.at
            .iter()
            .filter(|((from, to), _)| cycle.contains(from) && cycle.contains(to))
            .map(|(_, (file, _))| file.clone())
            .collect()
    }

    /// The uses among `cycle`'s children, one a line, `from -> to (file:line)`.
    pub fn edges_within(&self, cycle: &[String]) -> String {
        let mut out = Vec::new();
        for ((from, to), (file, line)) in &self.at {
            if cycle.contains(from) && cycle.contains(to) {
                out.push(format!("  {from} -> {to} ({file}:{line})"));
            }
        }
        out.join("\n")
    }
}

/// Every folder level of `graph`'s module trees that has a use between two of its
/// children, the uses from the files `left_out` says not counted; in the order of their
/// root and folder.
pub fn levels(graph: &CrateGraph, left_out: impl Fn(&str) -> bool) -> Vec<Level> {
    let mut levels: BTreeMap<(String, ModPath), Level> = BTreeMap::new();
    for tree in &graph.trees {
        for ((from, to), line) in &graph.lines {
            if left_out(from) {
                continue;
            }
            let (Some(a), Some(b)) = (tree.non_test_module(from), tree.non_test_module(to)) else {
                continue;
            };
            let k = a.iter().zip(b).take_while(|(x, y)| x == y).count();
            if k >= a.len() || k >= b.len() {
                continue;
            }
            let folder = a[..k].to_vec();
            let level = levels
                .entry((tree.root.clone(), folder.clone()))
                .or_insert_with(|| Level {
                    file: tree.module_file(&folder).cloned().unwrap_or_else(|| tree.root.clone()),
                    folder: path(&folder),
                    ..Level::default()
                });
            let (child_a, child_b) = (path(&a[..=k]), path(&b[..=k]));
            level.graph.entry(child_a.clone()).or_default().insert(child_b.clone());
            let first = level.at.entry((child_a, child_b)).or_insert((from.clone(), *line));
            if (from.as_str(), *line) < (first.0.as_str(), first.1) {
                *first = (from.clone(), *line);
            }
        }
    }
    levels.into_values().collect()
}

/// `crate::a::b` for the module path `[a, b]`.
fn path(module: &[String]) -> String {
    std::iter::once("crate")
        .chain(module.iter().map(String::as_str))
        .collect::<Vec<_>>()
        .join("::")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::graph::{crate_graph, cycles};
    use crate::source::SourceFile;

    fn graph(files: &[(&str, &str)]) -> CrateGraph {
        let parsed: Vec<(SourceFile, syn::File)> = files
            .iter()
            .map(|(p, t)| {
                let file = SourceFile::new(p, t);
                let ast = file.parse().expect("the fixture parses");
                (file, ast)
            })
            .collect();
        crate_graph(&parsed)
    }

    /// Two top-level modules that use each other through different files below one of
    /// them are a cycle at the crate root, though no file is in a cycle; a folder's own
    /// file using its child, and the child its folder, is no use between children.
    #[test]
    fn a_cycle_between_folders_is_found_where_the_files_have_none() {
        let files = [
            ("c/src/lib.rs", "pub mod aggregate;\npub mod engine;\n"),
            ("c/src/aggregate.rs", "use crate::engine::record::Record;\n"),
            ("c/src/engine/mod.rs", "pub mod record;\nuse crate::aggregate::Sum;\n"),
            ("c/src/engine/record.rs", "pub struct Record;\n"),
        ];
        let g = graph(&files);
        assert_eq!(cycles(&g.edges), Vec::<Vec<String>>::new(), "{:?}", g.edges);
        let levels = levels(&g, |_| false);
        let found: Vec<(String, Vec<Vec<String>>)> =
            levels.iter().map(|l| (l.folder.clone(), cycles(&l.graph))).collect();
        assert_eq!(
            found,
            [(
                "crate".to_owned(),
                vec![vec!["crate::aggregate".to_owned(), "crate::engine".to_owned()]]
            )]
        );
        assert_eq!(levels[0].file, "c/src/lib.rs");
        assert_eq!(
            levels[0].edges_within(&cycles(&levels[0].graph)[0]),
            "  crate::aggregate -> crate::engine (c/src/aggregate.rs:1)\n  crate::engine -> crate::aggregate (c/src/engine/mod.rs:2)"
        );
        let left_out = super::levels(&g, |f| f == "c/src/aggregate.rs");
        assert!(left_out.iter().all(|l| cycles(&l.graph).is_empty()), "{left_out:?}");
    }

    /// Within a folder, children that use each other are a cycle at the folder's level,
    /// named by their paths and the folder's file.
    #[test]
    fn a_cycle_inside_a_folder_is_named_at_its_level() {
        let files = [
            ("c/src/lib.rs", "mod tk;\n"),
            ("c/src/tk/mod.rs", "mod ids;\nmod debate;\n"),
            ("c/src/tk/ids.rs", "use super::debate::Debate;\n"),
            ("c/src/tk/debate/mod.rs", "mod text;\npub struct Debate;\n"),
            ("c/src/tk/debate/text.rs", "use crate::tk::ids::Id;\n"),
        ];
        let levels = levels(&graph(&files), |_| false);
        let tk = levels.iter().find(|l| l.folder == "crate::tk").expect("tk's level");
        assert_eq!(tk.file, "c/src/tk/mod.rs");
        assert_eq!(
            cycles(&tk.graph),
            [vec!["crate::tk::debate".to_owned(), "crate::tk::ids".to_owned()]]
        );
    }
}
