//! Where the real files are, and reading one of them checked against the catalogue.
//!
//! Real platform answers and documents taken from public repositories are never part of
//! the project: they live beside it, and the project keeps only their catalogue,
//! `corpus/index.toml` (compiled in here as [`index`]: each file's path relative to the
//! corpus root, provenance, sha256 and size). The root is found by one rule, [`root`]:
//! - `BESLUITBRON_CORPUS` ([`VARIABLE`]) when it is set;
//! - else `../shared/corpus` beside the project's root, where that folder exists;
//! - else `corpus/fetched/` in the project (git-ignored), which `scripts/corpus` fills
//!   from each file's source.
//!
//! `scripts/corpus` applies the same rule (a test compares the two).
//!
//! Invariants:
//! - [`read`] gives a file's bytes only when they are the catalogued ones (same sha256):
//!   a missing or different file is a [`CorpusError`] naming it, the root and the
//!   variable, never a shorter or substituted file.
//! - Paths are catalogue paths (`bwb/BWBR0018451_2025-01-01_0.xml`), `/`-separated and
//!   relative; nothing outside the root is read.
//!
//! What this module does not do: download anything (`scripts/corpus` does), or decide
//! which files a fake serves (`real.rs` asks for folders).

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde::Deserialize;
use sha2::{Digest, Sha256};

/// The variable that names the corpus root.
pub const VARIABLE: &str = "BESLUITBRON_CORPUS";

/// The catalogue, as the project keeps it.
const INDEX_TOML: &str = include_str!("../../../corpus/index.toml");

/// One catalogued file.
#[derive(Clone, Debug, Deserialize)]
pub struct Entry {
    /// Its path relative to the corpus root.
    pub path: String,
    /// The platform whose answer or document it is.
    pub platform: String,
    /// The public repository that kept it (`owner/name` on GitHub).
    pub source_repo: String,
    /// Its path in that repository.
    pub source_path: String,
    /// The commit of that repository it was taken at.
    pub source_commit: String,
    /// Where the platform serves it (or a note on it).
    pub original_url: String,
    /// Its sha256, lower-case hex.
    pub sha256: String,
    /// Its size in bytes.
    pub size: u64,
}

#[derive(Deserialize)]
struct Index {
    file: Vec<Entry>,
}

/// Every catalogued file, in the catalogue's order.
pub fn index() -> &'static [Entry] {
    static INDEX: OnceLock<Vec<Entry>> = OnceLock::new();
    INDEX.get_or_init(|| {
        // The catalogue is the project's own file, compiled in; a test reads it, so a
        // broken one fails the build's tests before anything serves from it.
        let index: Index = toml::from_str(INDEX_TOML).unwrap_or_else(|e| panic!("corpus/index.toml: {e}"));
        index.file
    })
}

/// The catalogue entry of `path`, if there is one.
pub fn entry(path: &str) -> Option<&'static Entry> {
    index().iter().find(|e| e.path == path)
}

/// The catalogued files directly inside `folder` (`bwb`, `tk/vlos`), sorted by path.
pub fn folder(folder: &str) -> Vec<&'static Entry> {
    let mut out: Vec<&Entry> = index()
        .iter()
        .filter(|e| e.path.rsplit_once('/').is_some_and(|(dir, _)| dir == folder))
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

/// The project's root (the workspace this crate was built in).
pub fn project_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// How the root was found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Found {
    /// Named by [`VARIABLE`].
    Variable(PathBuf),
    /// `../shared/corpus` beside the project.
    Shared(PathBuf),
    /// The project's own git-ignored folder, `corpus/fetched/`.
    Fetched(PathBuf),
}

impl Found {
    /// The root's path.
    pub fn path(&self) -> &Path {
        match self {
            Found::Variable(p) | Found::Shared(p) | Found::Fetched(p) => p,
        }
    }
}

/// Where the corpus is, by the rule in the module's documentation.
pub fn found() -> Found {
    if let Some(named) = std::env::var_os(VARIABLE).filter(|v| !v.is_empty()) {
        return Found::Variable(PathBuf::from(named));
    }
    let root = project_root();
    let shared = root.join("../shared/corpus");
    if shared.is_dir() {
        return Found::Shared(shared);
    }
    Found::Fetched(root.join("corpus/fetched"))
}

/// The corpus root (see [`found`]).
pub fn root() -> PathBuf {
    found().path().to_path_buf()
}

/// The file at catalogue path `path` under the root.
pub fn path(path: &str) -> PathBuf {
    root().join(path)
}

/// What is wrong with the corpus: files the catalogue names that are missing or differ.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CorpusError {
    /// The root that was read.
    pub root: PathBuf,
    /// Catalogued files not there (or not readable).
    pub missing: Vec<String>,
    /// Files there whose sha256 is not the catalogued one.
    pub different: Vec<String>,
    /// Paths asked for that the catalogue does not hold.
    pub uncatalogued: Vec<String>,
}

impl CorpusError {
    fn new(root: PathBuf) -> CorpusError {
        CorpusError {
            root,
            missing: Vec::new(),
            different: Vec::new(),
            uncatalogued: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.missing.is_empty() && self.different.is_empty() && self.uncatalogued.is_empty()
    }
}

/// At most this many names are written out in one line; the rest are counted.
const NAMED_MAX: usize = 6;

fn names(list: &[String]) -> String {
    let shown: Vec<&str> = list.iter().take(NAMED_MAX).map(String::as_str).collect();
    match list.len().saturating_sub(NAMED_MAX) {
        0 => shown.join(", "),
        more => format!("{} and {more} more", shown.join(", ")),
    }
}

impl fmt::Display for CorpusError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the corpus of real files at {}", self.root.display())?;
        let mut parts = Vec::new();
        if !self.missing.is_empty() {
            parts.push(format!("lacks {} ({})", self.missing.len(), names(&self.missing)));
        }
        if !self.different.is_empty() {
            parts.push(format!(
                "holds {} that differ from corpus/index.toml ({})",
                self.different.len(),
                names(&self.different)
            ));
        }
        if !self.uncatalogued.is_empty() {
            parts.push(format!(
                "was asked for {} that corpus/index.toml does not list ({})",
                self.uncatalogued.len(),
                names(&self.uncatalogued)
            ));
        }
        write!(
            f,
            " {}: set {VARIABLE} to a folder that holds them, or run scripts/corpus to fetch them",
            parts.join(" and ")
        )
    }
}

impl std::error::Error for CorpusError {}

/// The sha256 of `bytes`, lower-case hex.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
}

/// Reads one catalogued file, checked against its sha256.
pub fn read(path: &str) -> Result<Vec<u8>, CorpusError> {
    let mut out = read_all(&[path])?;
    Ok(out.pop().unwrap_or_default())
}

/// Reads the catalogued files `paths`, each checked against its sha256; one error names
/// every file that is missing or different.
pub fn read_all(paths: &[&str]) -> Result<Vec<Vec<u8>>, CorpusError> {
    let root = root();
    let mut error = CorpusError::new(root.clone());
    let mut out = Vec::with_capacity(paths.len());
    for &path in paths {
        let Some(entry) = entry(path) else {
            error.uncatalogued.push(path.to_owned());
            continue;
        };
        match std::fs::read(root.join(&entry.path)) {
            Err(_) => error.missing.push(entry.path.clone()),
            Ok(bytes) if sha256_hex(&bytes) != entry.sha256 => error.different.push(entry.path.clone()),
            Ok(bytes) => out.push(bytes),
        }
    }
    if error.is_empty() { Ok(out) } else { Err(error) }
}

/// Checks every catalogued file under the root; the error names each missing or
/// different one.
pub fn check() -> Result<(), CorpusError> {
    let paths: Vec<&str> = index().iter().map(|e| e.path.as_str()).collect();
    read_all(&paths).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalogue_reads_and_each_path_is_relative_and_unique() {
        let index = index();
        assert!(index.len() >= 56, "{}", index.len());
        let mut seen = std::collections::BTreeSet::new();
        for e in index {
            assert!(seen.insert(e.path.as_str()), "{} twice", e.path);
            assert!(
                !e.path.starts_with('/') && !e.path.split('/').any(|p| p == ".." || p.is_empty()),
                "{}",
                e.path
            );
            assert_eq!(e.sha256.len(), 64, "{}", e.path);
            assert!(e.source_repo.contains('/') && e.source_commit.len() == 40, "{}", e.path);
        }
        assert_eq!(folder("cvdr").len(), 3);
        assert!(
            folder("tk").iter().all(|e| !e.path.starts_with("tk/vlos/")),
            "a folder is one level"
        );
    }

    #[test]
    fn an_error_names_the_files_the_root_and_the_variable_in_one_line() {
        let mut error = CorpusError::new(PathBuf::from("/nowhere"));
        error.missing = (0..8).map(|i| format!("bwb/{i}.xml")).collect();
        error.different.push("cvdr/x.xml".to_owned());
        let line = error.to_string();
        assert!(!line.contains('\n'), "{line}");
        for part in [
            "/nowhere",
            "lacks 8 (bwb/0.xml",
            "bwb/5.xml and 2 more",
            "cvdr/x.xml",
            VARIABLE,
            "scripts/corpus",
        ] {
            assert!(line.contains(part), "{part}: {line}");
        }
        assert!(!line.contains("bwb/6.xml"), "{line}");
    }

    #[test]
    fn a_path_the_catalogue_does_not_hold_is_refused_by_name() {
        let error = read("bwb/not-catalogued.xml").unwrap_err();
        assert_eq!(error.uncatalogued, ["bwb/not-catalogued.xml"]);
    }
}
