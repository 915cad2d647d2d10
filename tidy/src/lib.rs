//! BesluitBron's tidy rules, read from the sources of every crate of the workspace (the
//! server, the core, the simulator, the fakes, the benches, this crate, and the fuzz
//! targets): `src`, `tests`, `benches` and every other folder of each.
//!
//! The rules, each a test in `tests/it.rs`:
//! - no function over [`FUNCTION_LINES_MAX`] lines, tests included ([`functions`]); the
//!   few that read better whole are in [`tables::EXCEPTIONS`], each with its reason;
//! - no file over [`FILE_LINES_MAX`] lines;
//! - no import cycle among the files of any crate, `super::` paths, re-exports through
//!   `lib.rs` and `mod.rs`, crate-root helpers and files of one folder included
//!   ([`graph`]), and none among the modules of any folder, each module taken with what
//!   is below it ([`modules`]);
//! - the server's modules keep the layers of ARCHITECTURE.md's table, and `app` is
//!   imported by none ([`layers`]);
//! - no connector imports another's modules (the connector registry's rule);
//! - no comment gives an issue number as its reason ([`comments`]).
//!
//! Every finding names its crate, file and line and says what to do. A tidy test in the
//! manner of rust-analyzer's: it reads the sources, so a change that breaks a rule fails at
//! once, before a reader meets it.
//!
//! What it does not do: build or run anything, or read other crates than the workspace's.

pub mod comments;
pub mod functions;
pub mod graph;
pub mod layers;
pub mod modules;
pub mod source;
pub mod tables;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

use graph::CrateGraph;
use source::{Crate, SourceFile};

/// The most lines a function may span, from its `fn` line to its closing brace.
pub const FUNCTION_LINES_MAX: usize = 100;

/// The most lines a file may have.
pub const FILE_LINES_MAX: usize = 1000;

/// Every crate's sources, parsed.
pub struct Workspace {
    pub crates: Vec<CrateSources>,
}

/// One crate's files: every file, and those that parsed.
pub struct CrateSources {
    pub krate: Crate,
    pub files: Vec<SourceFile>,
    pub parsed: Vec<(SourceFile, syn::File)>,
    /// What stopped the parser in each file that did not parse.
    pub unparsed: Vec<(String, String)>,
    pub graph: CrateGraph,
}

impl Workspace {
    /// The workspace whose root is `root`, every crate read and parsed.
    pub fn read(root: &Path) -> Workspace {
        let crates = source::crates(root)
            .into_iter()
            .map(|krate| {
                let files = source::files(root, &krate);
                (krate, files)
            })
            .collect();
        Workspace::from_files(crates)
    }

    /// A workspace of the given crates and files (the rules' own tests build small ones).
    pub fn from_files(crates: Vec<(Crate, Vec<SourceFile>)>) -> Workspace {
        let crates = crates
            .into_iter()
            .map(|(krate, files)| {
                let mut parsed = Vec::new();
                let mut unparsed = Vec::new();
                for file in &files {
                    match file.parse() {
                        Ok(ast) => parsed.push((file.clone(), ast)),
                        Err(e) => unparsed.push((file.path.clone(), e)),
                    }
                }
                let graph = graph::crate_graph(&parsed);
                CrateSources {
                    krate,
                    files,
                    parsed,
                    unparsed,
                    graph,
                }
            })
            .collect();
        Workspace { crates }
    }

    /// The crate whose folder is `dir`.
    pub fn krate(&self, dir: &str) -> Option<&CrateSources> {
        self.crates.iter().find(|c| c.krate.dir == dir)
    }
}

/// Which rule a finding breaks.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rule {
    /// A function over [`FUNCTION_LINES_MAX`] lines, by name (`Type::name` for a method).
    LongFunction(String),
    LongFile,
    Cycle,
    Layer,
    ConnectorApart,
    IssueNumber,
    Parse,
}

/// One thing wrong, where it is, and what to do.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Finding {
    /// The file, under the workspace root.
    pub file: String,
    pub line: usize,
    /// The crate's name.
    pub krate: String,
    pub rule: Rule,
    /// What is wrong and what to do, in a sentence.
    pub message: String,
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}:{}: {}", self.krate, self.file, self.line, self.message)
    }
}

/// Files that did not parse: every other rule reads past them, so this rule comes first.
pub fn unparsed(ws: &Workspace) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &ws.crates {
        for (file, error) in &c.unparsed {
            out.push(Finding {
                file: file.clone(),
                line: 0,
                krate: c.krate.name.clone(),
                rule: Rule::Parse,
                message: format!("{error}; the rules read only what parses, so fix the file or the reader"),
            });
        }
    }
    out
}

/// Every function over [`FUNCTION_LINES_MAX`] lines.
pub fn long_functions(ws: &Workspace) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &ws.crates {
        for (file, ast) in &c.parsed {
            for f in functions::functions(ast)
                .into_iter()
                .filter(|f| f.lines > FUNCTION_LINES_MAX)
            {
                out.push(Finding {
                    file: file.path.clone(),
                    line: f.line,
                    krate: c.krate.name.clone(),
                    message: format!(
                        "fn {} is {} lines (over {FUNCTION_LINES_MAX}): split it into named steps a reader can hold",
                        f.name, f.lines
                    ),
                    rule: Rule::LongFunction(f.name),
                });
            }
        }
    }
    out
}

/// Every file over [`FILE_LINES_MAX`] lines.
pub fn long_files(ws: &Workspace) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &ws.crates {
        for file in &c.files {
            let lines = file.text.lines().count();
            if lines > FILE_LINES_MAX {
                out.push(Finding {
                    file: file.path.clone(),
                    line: FILE_LINES_MAX + 1,
                    krate: c.krate.name.clone(),
                    rule: Rule::LongFile,
                    message: format!(
                        "the file is {lines} lines (over {FILE_LINES_MAX}): make it a folder of modules, one concern each"
                    ),
                });
            }
        }
    }
    out
}

/// Every comment that cites an issue number.
pub fn issue_numbers(ws: &Workspace) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &ws.crates {
        for file in &c.files {
            for citation in comments::citations(&file.text) {
                out.push(Finding {
                    file: file.path.clone(),
                    line: citation.line,
                    krate: c.krate.name.clone(),
                    rule: Rule::IssueNumber,
                    message: format!(
                        "a comment cites \"{}\": say the reason itself, the tracker does not travel with the code",
                        citation.cited
                    ),
                });
            }
        }
    }
    out
}

/// Every import cycle among a crate's files, and among the modules of each of its
/// folders, found with the imports of `leave_out`'s files left out (the files whose cycle
/// is owed by work under way elsewhere).
pub fn cycles(ws: &Workspace, leave_out: &BTreeSet<&str>) -> Vec<Finding> {
    let mut out = Vec::new();
    for c in &ws.crates {
        let mut edges = c.graph.edges.clone();
        for file in leave_out {
            edges.remove(*file);
        }
        let file_cycles = graph::cycles(&edges);
        for cycle in &file_cycles {
            out.push(Finding {
                file: cycle[0].clone(),
                line: 1,
                krate: c.krate.name.clone(),
                rule: Rule::Cycle,
                message: format!(
                    "an import cycle among {} files; take one use away by moving what both sides use into a module of its own:\n{}",
                    cycle.len(),
                    c.graph.edges_within(cycle)
                ),
            });
        }
        for level in modules::levels(&c.graph, |f| leave_out.contains(f)) {
            for cycle in graph::cycles(&level.graph) {
                // Two files of one folder that use each other are named once, as files.
                let files = level.files_within(&cycle);
                if file_cycles.iter().any(|c| files.iter().all(|f| c.contains(f))) {
                    continue;
                }
                out.push(Finding {
                    file: level.file.clone(),
                    line: 1,
                    krate: c.krate.name.clone(),
                    rule: Rule::Cycle,
                    message: format!(
                        "an import cycle among {} modules of `{}`, each with what is below it; take one use away by moving what both sides use into a module of its own:\n{}",
                        cycle.len(),
                        level.folder,
                        level.edges_within(&cycle)
                    ),
                });
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The files that are in an import cycle, all imports counted.
pub fn files_in_cycles(ws: &Workspace) -> BTreeSet<String> {
    ws.crates
        .iter()
        .flat_map(|c| graph::cycles(&c.graph.edges))
        .flatten()
        .collect()
}

/// The top-level module graph of a crate's library (`<dir>/src/lib.rs`): module → the
/// modules it imports, every top-level module the library has, and for each import the
/// first (file, line) that makes it.
pub struct TopLevel {
    pub graph: BTreeMap<String, BTreeSet<String>>,
    pub modules: BTreeSet<String>,
    pub at: BTreeMap<(String, String), (String, usize)>,
}

/// The top-level module graph of the library of the crate in `dir`, if it has one.
pub fn top_level(ws: &Workspace, dir: &str) -> Option<TopLevel> {
    let c = ws.krate(dir)?;
    let root = format!("{dir}/src/lib.rs");
    let tree = c.graph.trees.iter().find(|t| t.root == root)?;
    let top = |file: &str| tree.non_test_module(file).and_then(|m| m.first().cloned());
    let mut out = TopLevel {
        graph: BTreeMap::new(),
        modules: tree.file_modules.keys().filter_map(|f| top(f)).collect(),
        at: BTreeMap::new(),
    };
    for ((from, to), line) in &c.graph.lines {
        let (Some(a), Some(b)) = (top(from), top(to)) else {
            continue;
        };
        if a != b {
            out.graph.entry(a.clone()).or_default().insert(b.clone());
            let first = out.at.entry((a, b)).or_insert((from.clone(), *line));
            if (from.as_str(), *line) < (first.0.as_str(), first.1) {
                *first = (from.clone(), *line);
            }
        }
    }
    Some(out)
}

/// The server's layers against ARCHITECTURE.md's table (`architecture`, its text).
pub fn layers(ws: &Workspace, architecture: &str) -> Vec<Finding> {
    let finding = |file: &str, line: usize, message: String| Finding {
        file: file.to_owned(),
        line,
        krate: "besluitbron-server".to_owned(),
        rule: Rule::Layer,
        message,
    };
    let table = match layers::table(architecture) {
        Ok(t) => t,
        Err(e) => return vec![finding("ARCHITECTURE.md", 0, e)],
    };
    let Some(top) = top_level(ws, "server") else {
        return vec![finding(
            "server/src/lib.rs",
            0,
            "the server's library was not read".to_owned(),
        )];
    };
    layers::faults(&top.graph, &top.modules, &table)
        .into_iter()
        .map(|fault| match &fault.imports {
            Some(target) => {
                let (file, line) = top.at[&(fault.module.clone(), target.clone())].clone();
                finding(&file, line, fault.message)
            }
            None => finding("ARCHITECTURE.md", 0, fault.message),
        })
        .collect()
}

/// Every use by one connector's files (`connectors::x` and `platforms::x`, any depth) of
/// another connector's. A connector is a module `connectors::x` that defines `CONNECTOR`.
pub fn connectors_apart(ws: &Workspace) -> Vec<Finding> {
    let Some(c) = ws.krate("server") else {
        return Vec::new();
    };
    let ids = connector_ids(c);
    let Some(tree) = c.graph.trees.iter().find(|t| t.root == "server/src/lib.rs") else {
        return Vec::new();
    };
    let owner = |file: &str| -> Option<String> {
        let module = tree.non_test_module(file)?;
        let (Some(family), Some(id)) = (module.first(), module.get(1)) else {
            return None;
        };
        (matches!(family.as_str(), "connectors" | "platforms") && ids.contains(id)).then(|| id.clone())
    };
    let mut out = Vec::new();
    for ((from, to), line) in &c.graph.lines {
        if let (Some(a), Some(b)) = (owner(from), owner(to))
            && a != b
        {
            out.push(Finding {
                file: from.clone(),
                line: *line,
                krate: c.krate.name.clone(),
                rule: Rule::ConnectorApart,
                message: format!(
                    "connector `{a}` uses connector `{b}`'s {to}: connectors never import each other; move what both use into a module of its own below them (as `platforms::koop` is)"
                ),
            });
        }
    }
    out
}

/// The connectors of the server crate: modules `connectors::x` whose file defines an item
/// named `CONNECTOR`.
pub fn connector_ids(c: &CrateSources) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (file, ast) in &c.parsed {
        let rest = file.path.strip_prefix("server/src/connectors/");
        let Some(id) = rest.and_then(|r| r.strip_suffix("/mod.rs").or_else(|| r.strip_suffix(".rs"))) else {
            continue;
        };
        let defines = ast.items.iter().any(|item| match item {
            syn::Item::Const(i) => i.ident == "CONNECTOR",
            syn::Item::Static(i) => i.ident == "CONNECTOR",
            _ => false,
        });
        if defines && !id.contains('/') {
            out.insert(id.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests;
