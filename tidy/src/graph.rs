//! The import graph of one crate at file level: which file uses which, read from every
//! `use` and every path in code, types and macro bodies that starts at `crate::`,
//! `super::`, `self::` or a child module, each resolved through the module tree to the
//! file that holds what it names.
//!
//! A crate here is every root its folder has (a library, binaries, each integration test
//! and bench): a file no other file declares with `mod` is a root, and the files its
//! `mod` items declare, `name.rs` or `name/mod.rs`, are its modules.
//!
//! Invariants:
//! - re-exports are seen through: where `lib.rs` or a `mod.rs` has `pub use child::Name`,
//!   a path naming `Name` through them uses `child`'s file, as `child::Name` would; the
//!   re-exporting file itself uses `child` only if its own code names `Name`;
//! - helpers in a crate root or a `mod.rs` are files like any other: a child that calls
//!   `super::helper()` uses its `mod.rs`;
//! - test code is not read: items under `#[cfg(test)]` and the files such an item
//!   declares (`#[cfg(test)] mod render_test;`) are neither sources nor targets;
//! - a `mod` item declares a module and uses nothing.
//!
//! What it does not do: follow `#[path]` attributes (the workspace has none) or paths
//! into other crates, and it does not judge; [`cycles`] finds the cycles.

use std::collections::{BTreeMap, BTreeSet};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

use crate::source::SourceFile;

/// A module's path from its crate root: `["connectors", "tk", "ids"]`.
pub type ModPath = Vec<String>;

/// File → the files it uses, by path under the workspace root.
pub type Graph = BTreeMap<String, BTreeSet<String>>;

/// One root's module tree.
#[derive(Debug, Default)]
pub struct Tree {
    /// The root file.
    pub root: String,
    /// Module path → the file holding it (an inline module is its file's).
    modules: BTreeMap<ModPath, String>,
    /// File → its module path.
    pub file_modules: BTreeMap<String, ModPath>,
    /// Files declared under `#[cfg(test)]`.
    test_files: BTreeSet<String>,
    /// (module, re-exported name) → the absolute path it re-exports.
    reexports: BTreeMap<(ModPath, String), Vec<String>>,
}

/// A crate's file graph, and the module tree of each of its roots.
#[derive(Debug, Default)]
pub struct CrateGraph {
    /// The module tree of each root.
    pub trees: Vec<Tree>,
    /// File → the files it uses.
    pub edges: Graph,
    /// (file, file it uses) → the first line of the first file that names the second.
    pub lines: BTreeMap<(String, String), usize>,
}

/// The file graph of the crate whose files are `files` (already parsed; a file that did
/// not parse is left out, its fault reported by whoever parsed it).
pub fn crate_graph(files: &[(SourceFile, syn::File)]) -> CrateGraph {
    let parsed: BTreeMap<&str, &syn::File> = files.iter().map(|(s, f)| (s.path.as_str(), f)).collect();
    let mut out = CrateGraph::default();
    for root in roots(&parsed) {
        let mut tree = Tree {
            root: root.clone(),
            ..Tree::default()
        };
        tree.add_file(&root, Vec::new(), false, &parsed);
        let uses = tree.read_uses(&parsed);
        for (file, found) in &uses {
            let targets = out.edges.entry(file.clone()).or_default();
            for (target, line) in tree.targets(found) {
                if target != *file && !tree.test_files.contains(&target) {
                    targets.insert(target.clone());
                    let first = out.lines.entry((file.clone(), target)).or_insert(line);
                    *first = (*first).min(line);
                }
            }
        }
        out.trees.push(tree);
    }
    out
}

/// The files no other file declares: each is a crate root. A root, `lib.rs`, `main.rs`
/// and `mod.rs` keep their modules beside them; another file `x.rs` keeps them in `x/`.
fn roots(parsed: &BTreeMap<&str, &syn::File>) -> Vec<String> {
    let mut roots: BTreeSet<String> = BTreeSet::new();
    // Each round takes the files the last round found undeclared as roots; it settles in
    // two or three rounds, and the bound keeps a strange tree from looping.
    for _ in 0..16 {
        let mut declared = BTreeSet::new();
        for (path, file) in parsed {
            let owner = roots.contains(*path) || dir_owner(path);
            let mut out = Vec::new();
            declared_files(&file.items, &child_dir(path, owner), &mut out);
            declared.extend(out);
        }
        let next: BTreeSet<String> = parsed
            .keys()
            .filter(|p| !declared.contains(**p))
            .map(|p| p.to_string())
            .collect();
        if next == roots {
            break;
        }
        roots = next;
    }
    roots.into_iter().collect()
}

fn dir_owner(path: &str) -> bool {
    let name = path.rsplit('/').next().unwrap_or(path);
    matches!(name, "lib.rs" | "main.rs" | "mod.rs")
}

/// The folder a file's `mod name;` items are found in.
fn child_dir(path: &str, owner: bool) -> String {
    let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
    if owner {
        dir.to_owned()
    } else {
        format!("{dir}/{}", name.trim_end_matches(".rs"))
    }
}

/// The candidate files of every out-of-line `mod` in `items`, both spellings.
fn declared_files(items: &[syn::Item], dir: &str, out: &mut Vec<String>) {
    for item in items {
        if let syn::Item::Mod(m) = item {
            let name = m.ident.to_string();
            match &m.content {
                Some((_, inner)) => declared_files(inner, &format!("{dir}/{name}"), out),
                None => out.extend([format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")]),
            }
        }
    }
}

/// Whether `attrs` hold `#[cfg(test)]` (or a `cfg(all(test, …))`).
pub fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        let syn::Meta::List(list) = &a.meta else {
            return false;
        };
        if !list.path.is_ident("cfg") {
            return false;
        }
        let text = list.tokens.to_string();
        text == "test"
            || (text.starts_with("all")
                && text
                    .split(|c: char| !c.is_alphanumeric() && c != '_')
                    .any(|w| w == "test"))
    })
}

/// What one file's code names: the paths to resolve, its re-exports, its identifiers.
#[derive(Debug, Default)]
struct Uses {
    /// (the module the path is written in, its segments, its line) for `use` items and code.
    paths: Vec<(ModPath, Vec<String>, usize)>,
    /// (the module, the name it re-exports, the segments of its source, the line).
    reexports: Vec<(ModPath, String, Vec<String>, usize)>,
    /// Every identifier outside `use` items.
    idents: BTreeSet<String>,
}

impl Tree {
    /// The module path of `file`, unless it is test code.
    pub fn non_test_module(&self, file: &str) -> Option<&ModPath> {
        (!self.test_files.contains(file))
            .then(|| self.file_modules.get(file))
            .flatten()
    }

    /// The file holding module `module`.
    pub fn module_file(&self, module: &ModPath) -> Option<&String> {
        self.modules.get(module)
    }

    fn add_file(&mut self, file: &str, module: ModPath, test: bool, parsed: &BTreeMap<&str, &syn::File>) {
        if self.file_modules.contains_key(file) {
            return;
        }
        self.modules.insert(module.clone(), file.to_owned());
        self.file_modules.insert(file.to_owned(), module.clone());
        if test {
            self.test_files.insert(file.to_owned());
        }
        if let Some(ast) = parsed.get(file) {
            let owner = module.is_empty() || dir_owner(file);
            self.add_items(&ast.items, file, &module, &child_dir(file, owner), test, parsed);
        }
    }

    fn add_items(
        &mut self,
        items: &[syn::Item],
        file: &str,
        module: &ModPath,
        dir: &str,
        test: bool,
        parsed: &BTreeMap<&str, &syn::File>,
    ) {
        for item in items {
            let syn::Item::Mod(m) = item else {
                continue;
            };
            let name = m.ident.to_string();
            let mut child = module.clone();
            child.push(name.clone());
            let test = test || is_test(&m.attrs);
            match &m.content {
                Some((_, inner)) => {
                    self.modules.insert(child.clone(), file.to_owned());
                    self.add_items(inner, file, &child, &format!("{dir}/{name}"), test, parsed);
                }
                None => {
                    let candidates = [format!("{dir}/{name}.rs"), format!("{dir}/{name}/mod.rs")];
                    if let Some(found) = candidates.iter().find(|c| parsed.contains_key(c.as_str())) {
                        self.add_file(found, child, test, parsed);
                    }
                }
            }
        }
    }

    /// Each non-test file's uses; the re-exports are recorded in the tree on the way.
    fn read_uses(&mut self, parsed: &BTreeMap<&str, &syn::File>) -> BTreeMap<String, Uses> {
        let mut out = BTreeMap::new();
        for (file, module) in &self.file_modules {
            if self.test_files.contains(file) {
                continue;
            }
            let Some(ast) = parsed.get(file.as_str()) else {
                continue;
            };
            let mut reader = Reader {
                module: module.clone(),
                uses: Uses::default(),
            };
            reader.visit_file(ast);
            out.insert(file.clone(), reader.uses);
        }
        for uses in out.values() {
            for (module, name, segments, _) in &uses.reexports {
                if let Some(source) = self.absolute(module, segments) {
                    self.reexports.insert((module.clone(), name.clone()), source);
                }
            }
        }
        out
    }

    /// The files one file's uses reach, each with the line of a use.
    fn targets(&self, uses: &Uses) -> Vec<(String, usize)> {
        let mut out = Vec::new();
        let named = uses.paths.iter().map(|(m, s, l)| (m, s, l));
        let reexported = uses
            .reexports
            .iter()
            .filter(|(_, name, _, _)| uses.idents.contains(name))
            .map(|(m, _, s, l)| (m, s, l));
        for (module, segments, line) in named.chain(reexported) {
            if let Some(file) = self.absolute(module, segments).and_then(|abs| self.file_of(&abs, 0)) {
                out.push((file, *line));
            }
        }
        out
    }

    /// `segments`, written in `module`, as a path from the crate root; `None` for a path
    /// that leaves the crate or names something local.
    fn absolute(&self, module: &[String], segments: &[String]) -> Option<Vec<String>> {
        let first = segments.first()?;
        let (mut base, mut rest) = match first.as_str() {
            "crate" => (Vec::new(), &segments[1..]),
            "self" => (module.to_vec(), &segments[1..]),
            "super" => (module.to_vec(), segments),
            _ => {
                let mut child = module.to_vec();
                child.push(first.clone());
                if !self.modules.contains_key(&child) {
                    return None;
                }
                (module.to_vec(), segments)
            }
        };
        while rest.first().is_some_and(|s| s == "super") {
            base.pop()?;
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        Some(base)
    }

    /// The file holding what the absolute path `abs` names, through re-exports.
    fn file_of(&self, abs: &[String], depth: usize) -> Option<String> {
        let mut module: ModPath = Vec::new();
        for (i, segment) in abs.iter().enumerate() {
            let mut child = module.clone();
            child.push(segment.clone());
            let reexport = self.reexports.get(&(module.clone(), segment.clone()));
            // A module and a re-exported function of one name: a path that ends at the
            // name calls the function, one that goes on goes into the module.
            let last = i + 1 == abs.len();
            if self.modules.contains_key(&child) && !(last && reexport.is_some()) {
                module = child;
                continue;
            }
            if depth < 8
                && let Some(source) = reexport
            {
                let mut next = source.clone();
                next.extend(abs[i + 1..].iter().cloned());
                return self.file_of(&next, depth + 1);
            }
            break;
        }
        self.modules.get(&module).cloned()
    }
}

/// Reads one file's paths, re-exports and identifiers, skipping test code.
struct Reader {
    /// The module being read (the file's, and the inline modules it is inside).
    module: ModPath,
    uses: Uses,
}

impl Reader {
    /// The leaves of a `use` tree, each as (the name it brings in, its segments).
    fn leaves(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                Self::leaves(&p.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(n) if n.ident == "self" => {
                out.push((prefix.last().cloned().unwrap_or_default(), prefix.clone()))
            }
            syn::UseTree::Name(n) => out.push((n.ident.to_string(), with(prefix, &n.ident))),
            syn::UseTree::Rename(r) => out.push((r.rename.to_string(), with(prefix, &r.ident))),
            syn::UseTree::Glob(_) => out.push(("*".to_owned(), prefix.clone())),
            syn::UseTree::Group(g) => g.items.iter().for_each(|t| Self::leaves(t, prefix, out)),
        }
    }

    fn scan_tokens(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let colon = |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Punct(p)) if p.as_char() == ':');
        for (i, token) in tokens.iter().enumerate() {
            match token {
                TokenTree::Group(g) => self.scan_tokens(g.stream()),
                TokenTree::Ident(ident) => {
                    self.uses.idents.insert(ident.to_string());
                    let inside = i > 0
                        && (colon(tokens.get(i - 1))
                            || matches!(&tokens[i - 1], TokenTree::Punct(p) if p.as_char() == '$'));
                    if inside {
                        continue;
                    }
                    let mut segments = vec![ident.to_string()];
                    let mut j = i + 1;
                    while colon(tokens.get(j))
                        && colon(tokens.get(j + 1))
                        && let Some(TokenTree::Ident(next)) = tokens.get(j + 2)
                    {
                        segments.push(next.to_string());
                        j += 3;
                    }
                    if segments.len() > 1 {
                        let line = ident.span().start().line;
                        self.uses.paths.push((self.module.clone(), segments, line));
                    }
                }
                _ => {}
            }
        }
    }
}

fn with(prefix: &[String], ident: &syn::Ident) -> Vec<String> {
    let mut out = prefix.to_vec();
    out.push(ident.to_string());
    out
}

/// The attributes of an item, for the kinds that carry `#[cfg(test)]` in practice.
fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    match item {
        syn::Item::Const(i) => &i.attrs,
        syn::Item::Enum(i) => &i.attrs,
        syn::Item::Fn(i) => &i.attrs,
        syn::Item::Impl(i) => &i.attrs,
        syn::Item::Macro(i) => &i.attrs,
        syn::Item::Mod(i) => &i.attrs,
        syn::Item::Static(i) => &i.attrs,
        syn::Item::Struct(i) => &i.attrs,
        syn::Item::Trait(i) => &i.attrs,
        syn::Item::Type(i) => &i.attrs,
        syn::Item::Use(i) => &i.attrs,
        _ => &[],
    }
}

impl<'ast> Visit<'ast> for Reader {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !is_test(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        if let Some((_, inner)) = &item.content {
            self.module.push(item.ident.to_string());
            inner.iter().for_each(|i| self.visit_item(i));
            self.module.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        if item.leading_colon.is_some() {
            return;
        }
        let mut leaves = Vec::new();
        Reader::leaves(&item.tree, &mut Vec::new(), &mut leaves);
        let public = !matches!(item.vis, syn::Visibility::Inherited);
        let line = item.use_token.span.start().line;
        for (name, segments) in leaves {
            if public && name != "*" {
                self.uses.reexports.push((self.module.clone(), name, segments, line));
            } else {
                self.uses.paths.push((self.module.clone(), segments, line));
            }
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        // A path of one segment in code is a local name or an item in scope, never a
        // module: `use` items bring modules in by one segment.
        if path.leading_colon.is_none() && path.segments.len() > 1 {
            let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
            let line = path.segments.first().map_or(0, |s| s.ident.span().start().line);
            self.uses.paths.push((self.module.clone(), segments, line));
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_ident(&mut self, ident: &'ast proc_macro2::Ident) {
        self.uses.idents.insert(ident.to_string());
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.scan_tokens(mac.tokens.clone());
    }
}

/// The cycles of `graph`: its strongly connected components of more than one file, each
/// sorted, in the order of their first file.
pub fn cycles(graph: &Graph) -> Vec<Vec<String>> {
    let mut t = Tarjan {
        graph,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in graph.keys() {
        if !t.index.contains_key(v.as_str()) {
            t.visit(v);
        }
    }
    t.found.sort();
    t.found
}

struct Tarjan<'a> {
    graph: &'a Graph,
    index: BTreeMap<&'a str, usize>,
    low: BTreeMap<&'a str, usize>,
    stack: Vec<&'a str>,
    on_stack: BTreeSet<&'a str>,
    found: Vec<Vec<String>>,
}

impl<'a> Tarjan<'a> {
    fn visit(&mut self, v: &'a str) {
        let next = self.index.len();
        self.index.insert(v, next);
        self.low.insert(v, next);
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

impl CrateGraph {
    /// The uses among `cycle`'s files, one a line, `from:line -> to`: what a reader needs
    /// to see which use to take away.
    pub fn edges_within(&self, cycle: &[String]) -> String {
        let members: BTreeSet<&String> = cycle.iter().collect();
        let mut out = Vec::new();
        for from in cycle {
            for to in self
                .edges
                .get(from)
                .into_iter()
                .flatten()
                .filter(|t| members.contains(t))
            {
                let line = self.lines.get(&(from.clone(), to.clone())).copied().unwrap_or(0);
                out.push(format!("  {from}:{line} -> {to}"));
            }
        }
        out.join("\n")
    }
}

#[cfg(test)]
mod tests;
