//! The sources the rules read: every crate of the workspace, and every `.rs` file under
//! each crate's folder (`src`, `tests`, `benches` and any other), each parsed once.
//!
//! Invariants: paths are relative to the workspace root with `/` separators, in path
//! order; a folder holding a `Cargo.toml` of its own is another crate and is not read as
//! part of the one above it (`sim/fakes` is not part of `sim`), nor is a `target` folder.
//!
//! What it does not do: decide anything. The rules take [`SourceFile`]s and say what is
//! wrong with them.

use std::path::{Path, PathBuf};

/// One crate: the name it is reported by and its folder under the workspace root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Crate {
    /// The package name (`besluitbron-server`), or what the folder holds (`fuzz targets`).
    pub name: String,
    /// Its folder under the workspace root, with `/` separators (`sim/fakes`).
    pub dir: String,
}

/// One Rust source file: where it is and what it says.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path under the workspace root, with `/` separators.
    pub path: String,
    /// The file's text.
    pub text: String,
}

impl SourceFile {
    /// A file from its path and text (the fixtures of the rules' own tests).
    pub fn new(path: &str, text: &str) -> SourceFile {
        SourceFile {
            path: path.to_owned(),
            text: text.to_owned(),
        }
    }

    /// The file parsed, or what stopped the parser, with its line.
    pub fn parse(&self) -> Result<syn::File, String> {
        syn::parse_file(&self.text).map_err(|e| {
            let at = e.span().start();
            format!("{}:{}: the tidy rules cannot parse this file: {e}", self.path, at.line)
        })
    }
}

/// The crates the rules read: the workspace's members (from the `members` list of the
/// root `Cargo.toml`), each named by its package, and the fuzz targets, which build in a
/// workspace of their own.
pub fn crates(workspace: &Path) -> Vec<Crate> {
    let manifest = read(&workspace.join("Cargo.toml"));
    let mut out: Vec<Crate> = members(&manifest)
        .into_iter()
        .map(|dir| Crate {
            name: package_name(&read(&workspace.join(&dir).join("Cargo.toml"))).unwrap_or_else(|| dir.clone()),
            dir,
        })
        .collect();
    if workspace.join("fuzz/fuzz_targets").is_dir() {
        out.push(Crate {
            name: "fuzz targets".to_owned(),
            dir: "fuzz".to_owned(),
        });
    }
    out
}

/// The folders of `members = [...]` in a workspace manifest.
pub fn members(manifest: &str) -> Vec<String> {
    let Some(start) = manifest.find("members") else {
        return Vec::new();
    };
    let rest = &manifest[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    rest[open + 1..close]
        .split(',')
        .map(|m| m.trim().trim_matches('"').to_owned())
        .filter(|m| !m.is_empty())
        .collect()
}

/// The `name` of a manifest's `[package]`.
fn package_name(manifest: &str) -> Option<String> {
    let package = &manifest[manifest.find("[package]")?..];
    let line = package.lines().find(|l| l.trim_start().starts_with("name"))?;
    Some(line.split_once('=')?.1.trim().trim_matches('"').to_owned())
}

/// Every `.rs` file of `krate`, read, in path order.
pub fn files(workspace: &Path, krate: &Crate) -> Vec<SourceFile> {
    let root = workspace.join(&krate.dir);
    let mut paths = Vec::new();
    walk(&root, &root, &mut paths);
    paths
        .into_iter()
        .map(|p| SourceFile {
            path: relative(workspace, &p),
            text: read(&p),
        })
        .collect()
}

fn walk(top: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: cannot list the folder: {e}", dir.display()))
        .map(|e| e.expect("a folder entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            let own_crate = path != top && path.join("Cargo.toml").is_file();
            if !own_crate && path.file_name().is_some_and(|n| n != "target") {
                walk(top, &path, out);
            }
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

fn relative(workspace: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(workspace).unwrap_or(path);
    rel.iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect::<Vec<_>>()
        .join("/")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: cannot read: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_members_and_package_names_are_read() {
        let manifest = "[workspace]\nresolver = \"3\"\nmembers = [\"core\", \"sim/fakes\",\n \"tidy\"]\n";
        assert_eq!(members(manifest), ["core", "sim/fakes", "tidy"]);
        let package = "[package]\nname = \"besluitbron-core\"\nversion.workspace = true\n";
        assert_eq!(package_name(package).as_deref(), Some("besluitbron-core"));
        assert_eq!(package_name("[workspace]\n"), None);
    }

    #[test]
    fn a_file_that_does_not_parse_says_where() {
        let file = SourceFile::new("x/src/lib.rs", "fn ok() {}\n\nfn broken( {\n");
        let error = file.parse().err().expect("the file does not parse");
        assert!(error.starts_with("x/src/lib.rs:"), "{error}");
        assert!(error.contains("cannot parse"), "{error}");
    }
}
