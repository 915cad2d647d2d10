//! Every crate's modules form layers without an import cycle, and the server's `app` alone
//! wires the others together (ARCHITECTURE.md, "Layers"). This test reads the sources of
//! each crate of the workspace — `server/src`, `core/src`, `sim/src`, `sim/fakes/src`:
//! every `crate::<module>` path outside test code — and fails on an import cycle among a
//! crate's top-level modules, naming the crate and the modules; in the server it also
//! fails on any module that imports `app`.
//!
//! It sees through the crate root's re-exports: where the root has `pub use m::Name`, a
//! path `crate::Name` imports `m`, as `crate::m::Name` would. A cycle hidden behind the
//! root's names is a cycle all the same.
//!
//! A tidy test in the manner of rust-analyzer's: it reads text, so a refactoring that
//! brings a cycle back fails here at once, before a reader meets it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::tidy;

/// Top-level module → the top-level modules it imports.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// The import graph of the crate whose sources are under `root`.
fn graph(root: &Path) -> Graph {
    let files = tidy::rust_files(root);
    let modules: BTreeSet<String> = files.iter().filter_map(|f| top_module(root, f)).collect();
    let reexported = reexports(root);
    let mut graph = Graph::new();
    for file in &files {
        let Some(me) = top_module(root, file) else {
            continue;
        };
        let targets = graph.entry(me.clone()).or_default();
        let text = std::fs::read_to_string(file).expect("a source file");
        for path in imports(&without_comments(&without_tests(&text))) {
            let target = path.module(&modules, &reexported);
            if target != me && modules.contains(&target) {
                targets.insert(target);
            }
        }
    }
    graph
}

/// The names the crate root under `root` (`lib.rs`) re-exports, each with the top-level
/// module it comes from: `pub use m::{A, b::C as D};` gives `A` and `D`, both of `m`.
fn reexports(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let Ok(text) = std::fs::read_to_string(root.join("lib.rs")) else {
        return out;
    };
    let text = without_comments(&without_tests(&text));
    let mut rest = text.as_str();
    while let Some(at) = ["pub use ", "pub(crate) use "]
        .iter()
        .filter_map(|p| {
            rest.match_indices(p)
                .find(|(i, _)| starts_line(rest, *i))
                .map(|(i, _)| (i, p.len()))
        })
        .min()
    {
        let statement = &rest[at.0 + at.1..];
        let end = statement.find(';').unwrap_or(statement.len());
        let path = statement[..end]
            .trim()
            .trim_start_matches("crate::")
            .trim_start_matches("self::");
        if let Some((module, tree)) = path.split_once("::") {
            for name in used_names(tree) {
                out.insert(name, module.trim().to_owned());
            }
        }
        rest = &statement[end..];
    }
    out
}

/// Whether `text[at..]` starts a line (only spaces before it on its line).
fn starts_line(text: &str, at: usize) -> bool {
    text[..at].rsplit('\n').next().is_some_and(|l| l.trim().is_empty())
}

/// The names a `use` tree brings in: `A`, `b::C as D`, `{A, b::{C, E}}` give `A`, `D`,
/// and `A`, `C`, `E`; `self` brings in nothing new.
fn used_names(tree: &str) -> Vec<String> {
    let tree = tree.trim();
    if let Some(open) = tree.find('{') {
        let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
        let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
        for (i, c) in inner.char_indices() {
            match c {
                '{' => depth += 1,
                '}' => depth -= 1,
                ',' if depth == 0 => {
                    parts.push(&inner[start..i]);
                    start = i + 1;
                }
                _ => {}
            }
        }
        parts.push(&inner[start..]);
        return parts.into_iter().flat_map(used_names).collect();
    }
    let name = match tree.split_once(" as ") {
        Some((_, alias)) => alias.trim(),
        None => tree.rsplit("::").next().unwrap_or(tree).trim(),
    };
    if name.is_empty() || name == "self" {
        Vec::new()
    } else {
        vec![name.to_owned()]
    }
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

/// The first name of a path from the crate root, `crate::name…`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct RootPath {
    /// The name after `crate::`.
    name: String,
    /// Whether the path goes on past it (`crate::name::…`).
    goes_on: bool,
}

impl RootPath {
    /// The top-level module the path imports: `name` when it is a module the path goes
    /// into; else the module the root re-exports `name` from; else `name` itself (a
    /// module named whole, or an item of the root, which is no module).
    fn module(&self, modules: &BTreeSet<String>, reexported: &BTreeMap<String, String>) -> String {
        if self.goes_on && modules.contains(&self.name) {
            return self.name.clone();
        }
        reexported.get(&self.name).unwrap_or(&self.name).clone()
    }
}

/// The paths `text` takes from the crate root: `crate::x…`, and each part of
/// `crate::{x, y::z}`.
fn imports(text: &str) -> BTreeSet<RootPath> {
    let mut out = BTreeSet::new();
    let path = |s: &str| -> Option<RootPath> {
        let name: String = s
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        let goes_on = s[name.len()..].trim_start().starts_with("::");
        (!name.is_empty() && name != "self").then_some(RootPath { name, goes_on })
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
                if let Some(p) = path(part.trim()) {
                    out.insert(p);
                }
            }
        } else if let Some(p) = path(rest) {
            out.insert(p);
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

/// The check sees through the crate root's re-exports: `crate::Name`, where the root
/// has `pub use m::Name`, imports `m`, in a `use` line, a group or a type's path; a
/// module that shares its name with a re-exported function is still the module when a
/// path goes into it; an item the root itself defines imports nothing.
#[test]
fn a_cycle_through_the_roots_reexports_is_found() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let src = dir.path();
    let write = |path: &str, text: &str| std::fs::write(src.join(path), text).unwrap();
    write(
        "lib.rs",
        "mod config;\nmod own;\nmod corpus;\nmod fake;\n\
         pub use config::{FakeConfig, nested::{Deep, Other as Renamed}};\n\
         #[doc(inline)]\npub use own::OwnSettings;\npub use fake::corpus;\n\
         pub(crate) fn helper() {}\n",
    );
    write("config.rs", "use crate::helper;\npub struct FakeConfig;\n");
    write("own.rs", "use crate::{FakeConfig, helper};\n");
    write("fake.rs", "use crate::corpus::Rows;\npub fn corpus() {}\n");
    write("corpus.rs", "pub struct Rows;\n");
    let g = graph(src);
    assert_eq!(faults(&g), Vec::<String>::new(), "{g:?}");
    assert_eq!(edges(&g), "fake -> corpus\nown -> config", "{g:?}");
    // The cycle `config <-> own` hidden behind the root's names, by each way of naming.
    for text in [
        "use crate::OwnSettings;\n",
        "fn f() { crate::OwnSettings::default(); }\n",
        "use crate::{helper, OwnSettings};\n",
    ] {
        write("config.rs", text);
        assert_eq!(faults(&graph(src)), ["an import cycle among config, own"], "{text}");
    }
    // Names re-exported from a group, renamed, or nested reach their module too.
    write("config.rs", "pub struct FakeConfig;\n");
    write("own.rs", "use crate::Renamed;\n");
    write("corpus.rs", "use crate::Deep;\n");
    assert_eq!(edges(&graph(src)), "corpus -> config\nfake -> corpus\nown -> config");
    // `crate::corpus()`, the function `fake` re-exports, is `fake`'s.
    write("corpus.rs", "fn rows() { crate::corpus(); }\n");
    assert_eq!(faults(&graph(src)), ["an import cycle among corpus, fake"]);
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
