//! Every crate's modules form layers without an import cycle, and the server's `app` alone
//! wires the others together (ARCHITECTURE.md, "Layers"). This test reads the sources of
//! each crate of the workspace — `server/src`, `core/src`, `sim/src`, `sim/fakes/src`:
//! every `crate::<module>` path outside test code — and fails on an import cycle among a
//! crate's top-level modules, naming the crate and the modules; in the server it also
//! fails on any module that imports `app`.
//!
//! A tidy test in the manner of rust-analyzer's: it reads text, so a refactoring that
//! brings a cycle back fails here at once, before a reader meets it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod tidy;

/// Top-level module → the top-level modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The import graph of the crate whose sources are under `root`.
fn graph(root: &Path) -> Graph {
    let files = tidy::rust_files(root);
    let mut graph = Graph::new();
    for file in &files {
        let Some(me) = top_module(root, file) else {
            continue;
        };
        let targets = graph.entry(me.clone()).or_default();
        let text = std::fs::read_to_string(file).expect("a source file");
        for target in imports(&without_comments(&without_tests(&text))) {
            if target != me {
                targets.insert(target);
            }
        }
    }
    let modules: BTreeSet<String> = graph.keys().cloned().collect();
    for targets in graph.values_mut() {
        targets.retain(|t| modules.contains(t));
    }
    graph
}

/// The top-level module a file belongs to; `None` for the crate roots and test files.
fn top_module(root: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root).ok()?;
    let parts: Vec<String> = rel.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let name = parts.last()?;
    if name.ends_with("_test.rs") || parts.iter().any(|p| p == "tests") {
        return None;
    }
    let first = parts.first()?.trim_end_matches(".rs").to_owned();
    (!matches!(first.as_str(), "lib" | "main")).then_some(first)
}

/// The text without the items marked `#[cfg(test)]` (a `mod x;` line or a braced item).
fn without_tests(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() != "#[cfg(test)]" {
            out.push(lines[i]);
            i += 1;
            continue;
        }
        let mut j = i + 1;
        while j < lines.len() && lines[j].trim().is_empty() {
            j += 1;
        }
        if j < lines.len() && lines[j].trim_end().ends_with(';') && lines[j].contains("mod ") {
            i = j + 1;
            continue;
        }
        let (mut depth, mut opened) = (0i64, false);
        while j < lines.len() {
            let line = lines[j];
            depth += line.matches('{').count() as i64 - line.matches('}').count() as i64;
            opened |= line.contains('{');
            j += 1;
            if opened && depth <= 0 {
                break;
            }
        }
        i = j;
    }
    out.join("\n")
}

/// The text without `//` comments (doc comments name modules they do not import).
fn without_comments(text: &str) -> String {
    text.lines()
        .map(|l| l.find("//").map_or(l, |at| &l[..at]))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `text` names as `crate::x` or inside `crate::{x, y::z}`.
fn imports(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let ident = |s: &str| -> Option<String> {
        let name: String = s
            .chars()
            .take_while(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == '_')
            .collect();
        (!name.is_empty() && name != "self").then_some(name)
    };
    for (at, _) in text.match_indices("crate::") {
        let before = text[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &text[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for part in group[..end].split(',') {
                if let Some(name) = ident(part.trim()) {
                    out.insert(name);
                }
            }
        } else if let Some(name) = ident(rest) {
            out.insert(name);
        }
    }
    out
}

/// The cycles of `graph`: its strongly connected components of more than one module.
fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    struct Tarjan<'a> {
        graph: &'a Graph,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        next: usize,
        found: Vec<Vec<String>>,
    }
    impl<'a> Tarjan<'a> {
        fn visit(&mut self, v: &'a str) {
            self.index.insert(v, self.next);
            self.low.insert(v, self.next);
            self.next += 1;
            self.stack.push(v);
            self.on_stack.insert(v);
            for w in self.graph.get(v).into_iter().flatten() {
                let w = w.as_str();
                if !self.index.contains_key(w) {
                    self.visit(w);
                    let low = self.low[v].min(self.low[w]);
                    self.low.insert(v, low);
                } else if self.on_stack.contains(w) {
                    let low = self.low[v].min(self.index[w]);
                    self.low.insert(v, low);
                }
            }
            if self.low[v] == self.index[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack.remove(w);
                    component.push(w.to_owned());
                    if w == v {
                        break;
                    }
                }
                if component.len() > 1 {
                    component.sort();
                    self.found.push(component);
                }
            }
        }
    }
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        next: 0,
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.found
}

/// What is wrong with `graph`'s layers, one line each: its cycles.
fn cycle_faults(graph: &Graph) -> Vec<String> {
    cycles(graph)
        .into_iter()
        .map(|c| format!("an import cycle among {}", c.join(", ")))
        .collect()
}

/// What is wrong with the server's layers, one line each: cycles, and imports of `app`.
fn faults(graph: &Graph) -> Vec<String> {
    let mut out = cycle_faults(graph);
    for (module, targets) in graph {
        if targets.contains("app") {
            out.push(format!("{module} imports app, which only wires the others"));
        }
    }
    out
}

/// `graph` one module a line, `module -> target target`, as `modgraph.py` prints it.
fn edges(graph: &Graph) -> String {
    graph
        .iter()
        .filter(|(_, ts)| !ts.is_empty())
        .map(|(m, ts)| format!("{m} -> {}", ts.iter().cloned().collect::<Vec<_>>().join(" ")))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn the_servers_modules_form_layers_without_a_cycle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let graph = graph(&root);
    assert!(graph.len() >= 10, "the modules were read: {graph:?}");
    assert!(graph["app"].contains("mcp"), "the imports were read: {graph:?}");
    let faults = faults(&graph);
    assert!(faults.is_empty(), "{}\n\n{}", faults.join("\n"), edges(&graph));
}

/// Every crate of the workspace: its package, the sources' folder under the workspace
/// root, and a module it has (so a wrong folder reads as an error, not as no cycle).
const CRATES: [(&str, &str, &str); 4] = [
    ("besluitbron-server", "server/src", "app"),
    ("besluitbron-core", "core/src", "scheduler"),
    ("besluitbron-sim", "sim/src", "engine"),
    ("besluitbron-fakes", "sim/fakes/src", "registry"),
];

/// The cycles of every crate in `crates` (package, folder under `workspace`, a module it
/// has), one line each naming the crate and its folder, followed by that crate's edges.
fn workspace_faults(workspace: &Path, crates: &[(&str, &str, &str)]) -> Vec<String> {
    let mut out = Vec::new();
    for (package, src, known) in crates {
        let graph = graph(&workspace.join(src));
        assert!(
            graph.contains_key(*known),
            "{package}: the modules of {src} were read: {graph:?}"
        );
        let faults = cycle_faults(&graph);
        if !faults.is_empty() {
            let named: Vec<String> = faults.iter().map(|f| format!("{package} ({src}): {f}")).collect();
            out.push(format!("{}\n{}", named.join("\n"), edges(&graph)));
        }
    }
    out
}

/// Every crate's top-level modules, not only the server's, form no import cycle: the
/// fakes' registry sits above the fakes and they above their shared modules, the
/// simulator's and the core's modules likewise.
#[test]
fn every_crates_modules_form_no_cycle() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let faults = workspace_faults(&workspace, &CRATES);
    assert!(faults.is_empty(), "{}", faults.join("\n\n"));
}

/// The check itself, on a small crate of its own: a cycle through three modules is
/// named, an import in test code or a comment is not one, and `app` may import but not
/// be imported.
#[test]
fn a_cycle_is_found_and_named() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    let write = |path: &str, text: &str| {
        let path = src.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("lib.rs", "pub mod a; pub mod b; pub mod c; pub mod app;\n");
    write("a.rs", "use crate::b::Thing;\n// crate::app is named here only\n");
    write("b/mod.rs", "pub mod inner;\n");
    write("b/inner.rs", "use crate::{c::More, self as _};\n");
    write(
        "c.rs",
        "pub struct More;\n#[cfg(test)]\nmod tests {\n    use crate::a;\n}\n",
    );
    write("app.rs", "use crate::{a, b, c};\n");
    let g = graph(src);
    assert_eq!(faults(&g), Vec::<String>::new(), "{g:?}");
    write("c.rs", "use crate::a::Thing;\n");
    let g = graph(src);
    assert_eq!(faults(&g), ["an import cycle among a, b, c"], "{g:?}");
    // Importing `app` is a fault of its own, and here closes a cycle through it too.
    write("c.rs", "use crate::app::App;\n");
    assert_eq!(
        faults(&graph(src)),
        [
            "an import cycle among a, app, b, c",
            "c imports app, which only wires the others"
        ]
    );
}

/// The check over the workspace itself: a cycle in one crate is named with that crate
/// and its folder, a crate without one says nothing, and `app` is the server's rule only.
#[test]
fn a_cycle_in_any_crate_is_named_with_its_crate() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let write = |path: &str, text: &str| {
        let path = dir.path().join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("one/src/lib.rs", "mod app; mod low;\n");
    write("one/src/low.rs", "use crate::app::Wiring;\n");
    write("one/src/app.rs", "pub struct Wiring;\n");
    write("two/src/lib.rs", "mod registry; mod fake; mod shared;\n");
    write("two/src/registry.rs", "use crate::{fake, shared::State};\n");
    write("two/src/fake.rs", "use crate::shared::State;\n");
    write("two/src/shared.rs", "pub struct State;\n");
    let crates = [("one", "one/src", "app"), ("two", "two/src", "registry")];
    assert_eq!(workspace_faults(dir.path(), &crates), Vec::<String>::new());
    write("two/src/shared.rs", "use crate::registry::entry;\n");
    assert_eq!(
        workspace_faults(dir.path(), &crates),
        ["two (two/src): an import cycle among fake, registry, shared\n\
          fake -> shared\nregistry -> fake shared\nshared -> registry"]
    );
}

/// Where `text` of connector `own` (its connector module or its platform client) names
/// another connector's module: `connectors::x`, `platforms::x`, or `super::x` (a sibling),
/// for every other connector id `x` in `ids`.
fn foreign_imports(own: &str, text: &str, ids: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for other in ids.iter().filter(|id| **id != own) {
        for prefix in ["connectors::", "platforms::", "super::"] {
            let needle = format!("{prefix}{other}");
            for (at, _) in text.match_indices(&needle) {
                let after = text[at + needle.len()..].chars().next();
                let before = text[..at].chars().next_back();
                let whole = !after.is_some_and(|c| c.is_alphanumeric() || c == '_')
                    && !before.is_some_and(|c| c.is_alphanumeric() || c == '_');
                if whole {
                    out.push(format!("{own} names {needle}"));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The files of connector `id`: its connector module and its platform client.
fn connector_files(src: &Path, id: &str) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for dir in ["connectors", "platforms"] {
        let folder = src.join(dir).join(id);
        if folder.is_dir() {
            files.extend(tidy::rust_files(&folder));
        }
        let single = src.join(dir).join(format!("{id}.rs"));
        if single.is_file() {
            files.push(single);
        }
    }
    files
}

/// Connectors never import each other (ARCHITECTURE.md, "A connector is its module"):
/// what two share lives in a module of its own below them (`platforms::koop`,
/// `connectors::koop`, `platforms::http`).
#[test]
fn no_connector_imports_another() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let ids: Vec<&str> = besluitbron_server::connectors::CONNECTORS
        .iter()
        .map(|c| c.id)
        .collect();
    assert!(ids.len() >= 8, "{ids:?}");
    let mut faults = Vec::new();
    for id in &ids {
        let files = connector_files(&src, id);
        assert!(!files.is_empty(), "{id} has its module");
        for file in files {
            let text = std::fs::read_to_string(&file).expect("a source file");
            for fault in foreign_imports(id, &without_comments(&without_tests(&text)), &ids) {
                faults.push(format!("{}: {fault}", file.strip_prefix(&src).unwrap().display()));
            }
        }
    }
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

/// The check itself: cvdr reaching into bwb (as it once read bwb's parser) is found, a
/// name that only starts like another connector's is not.
#[test]
fn a_connector_importing_another_is_found() {
    let ids = ["bwb", "cvdr", "ob", "obv"];
    let text = "use super::bwb::date_arg;\nuse crate::platforms::bwb::toestand;\nuse crate::platforms::koop;\n";
    assert_eq!(
        foreign_imports("cvdr", text, &ids),
        ["cvdr names platforms::bwb", "cvdr names super::bwb"]
    );
    assert!(foreign_imports("obv", "use crate::platforms::obv::X; use super::obvious;", &ids).is_empty());
    assert_eq!(
        foreign_imports("ob", "use crate::connectors::obv::names;", &ids),
        ["ob names connectors::obv"]
    );
}
