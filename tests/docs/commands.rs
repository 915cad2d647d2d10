//! The commands the documentation shows, read so that tests can hold them to the programs
//! they run: every command of a fenced `sh` block in `README.md` and `docs/*.md`, as its
//! program, its arguments and the variables set before it. `server/tests/docs.rs` and
//! `sim/tests/cli.rs` include this file (`#[path]`); each checks the commands of the
//! binaries it can run, against the binary's own `--help`.
//!
//! Invariant: every command of such a block is read into exactly one [`Program`]; a block
//! this reader cannot split (an unclosed quote) is an error naming the file, never skipped.
//!
//! What it does not do: run a command (what a command does is tested where its program is
//! built), or read commands written in prose.
#![allow(dead_code)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One command of a documentation file's `sh` block.
#[derive(Debug)]
pub struct DocCommand {
    /// Where it is: the file, relative to the workspace, and the line its block opens on.
    pub at: String,
    /// The variables set before the program (`SOAK_SECS` of `SOAK_SECS=1800 ./scripts/soak`).
    pub env: Vec<String>,
    /// What it runs.
    pub program: Program,
}

/// What a command runs.
#[derive(Debug, PartialEq, Eq)]
pub enum Program {
    /// A binary of the workspace, by its name, with its arguments: `besluitbron cache stats`,
    /// or `cargo run -p besluitbron-server -- serve` (the binary `besluitbron`, `serve`).
    Binary { name: String, args: Vec<String> },
    /// A script of the project, by its path from the workspace root (`scripts/soak`).
    Script { path: String, args: Vec<String> },
    /// Any other program, by its first word (`curl`), or `cargo` with its subcommand.
    Other(String),
}

/// The documentation files whose commands are held to their programs: `README.md` and
/// every `docs/*.md`, in path order.
pub fn documentation_files(root: &Path) -> Vec<PathBuf> {
    let mut files = vec![root.join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("the docs folder")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    files.extend(docs);
    files
}

/// Every command of every documentation file (`documentation_files`) under `root`.
pub fn doc_commands(root: &Path) -> Result<Vec<DocCommand>, String> {
    let binaries = workspace_binaries(root);
    let mut out = Vec::new();
    for file in documentation_files(root) {
        let name = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        let text = std::fs::read_to_string(&file).map_err(|e| format!("{name}: {e}"))?;
        for (line, block) in sh_blocks(&text) {
            let at = format!("{name}:{line}");
            for words in split_commands(&block).map_err(|e| format!("{at}: {e}"))? {
                out.push(read_command(&at, words, &binaries)?);
            }
        }
    }
    Ok(out)
}

/// The fenced blocks marked `sh` in a Markdown text: the line each opens on (1-based) and
/// its contents.
pub fn sh_blocks(text: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    // The block open now: the line it opened on, whether it is `sh`, what it holds.
    let mut open: Option<(usize, bool, String)> = None;
    for (n, line) in text.lines().enumerate() {
        let fence = line.trim_start().strip_prefix("```");
        match (open.take(), fence) {
            (None, Some(info)) => open = Some((n + 1, info.trim() == "sh", String::new())),
            (Some((at, true, block)), Some(_)) => out.push((at, block)),
            (Some(_), Some(_)) | (None, None) => {}
            (Some((at, sh, mut block)), None) => {
                block.push_str(line);
                block.push('\n');
                open = Some((at, sh, block));
            }
        }
    }
    out
}

/// A shell block split into commands, each a list of words, as a POSIX shell would split
/// the simple commands this documentation writes: quotes, `\` before a newline, comments,
/// and `;`, `&`, `|` and newlines between commands; a redirection's target is left out.
pub fn split_commands(block: &str) -> Result<Vec<Vec<String>>, String> {
    let mut split = Splitter::default();
    let mut chars = block.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => split.quoted(&mut chars, '\'')?,
            '"' => split.quoted(&mut chars, '"')?,
            '\\' => match chars.next() {
                Some('\n') | None => {}
                Some(next) => split.push(next),
            },
            '#' if split.word.is_none() => while chars.next_if(|&n| n != '\n').is_some() {},
            ' ' | '\t' => split.end_word(),
            '\n' | ';' | '&' | '|' => split.end_command(),
            '>' | '<' => {
                split.end_word();
                split.redirect = true;
            }
            c => split.push(c),
        }
    }
    split.end_command();
    Ok(split.commands)
}

#[derive(Default)]
struct Splitter {
    commands: Vec<Vec<String>>,
    words: Vec<String>,
    word: Option<String>,
    redirect: bool,
}

impl Splitter {
    fn push(&mut self, c: char) {
        self.word.get_or_insert_with(String::new).push(c);
    }

    fn quoted(&mut self, chars: &mut std::iter::Peekable<std::str::Chars>, quote: char) -> Result<(), String> {
        let word = self.word.get_or_insert_with(String::new);
        loop {
            match chars.next() {
                Some(c) if c == quote => return Ok(()),
                Some('\\') if quote == '"' => word.extend(chars.next()),
                Some(c) => word.push(c),
                None => return Err(format!("an unclosed {quote} quote")),
            }
        }
    }

    fn end_word(&mut self) {
        // A redirection's target is the word after `>`: taken, and left out.
        if let Some(word) = self.word.take()
            && !std::mem::take(&mut self.redirect)
        {
            self.words.push(word);
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        if !self.words.is_empty() {
            self.commands.push(std::mem::take(&mut self.words));
        }
    }
}

/// Each package of the workspace under `root` with the binaries it builds: its `[[bin]]`
/// entries, or the package's own name where it has a `src/main.rs` and none.
pub fn workspace_binaries(root: &Path) -> BTreeMap<String, Vec<String>> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).expect("the workspace manifest");
    let members = manifest
        .lines()
        .find_map(|l| l.trim().strip_prefix("members = "))
        .expect("the workspace's members");
    let mut out = BTreeMap::new();
    for member in members.trim_matches(['[', ']']).split(',') {
        let dir = root.join(member.trim().trim_matches('"'));
        let text = std::fs::read_to_string(dir.join("Cargo.toml")).expect("a member's manifest");
        let (mut section, mut package, mut bins) = ("", String::new(), Vec::new());
        for line in text.lines().map(str::trim) {
            if line.starts_with('[') {
                section = line;
            } else if let Some(name) = line.strip_prefix("name = ") {
                let name = name.trim_matches('"').to_owned();
                match section {
                    "[package]" => package = name,
                    "[[bin]]" => bins.push(name),
                    _ => {}
                }
            }
        }
        if bins.is_empty() && dir.join("src/main.rs").exists() {
            bins.push(package.clone());
        }
        out.insert(package, bins);
    }
    out
}

/// One command's words read into what it runs. Brackets around optional words
/// (`[--data-dir DIR]`) and ellipses are the documentation's, not the command's.
fn read_command(at: &str, words: Vec<String>, binaries: &BTreeMap<String, Vec<String>>) -> Result<DocCommand, String> {
    let mut words: Vec<String> = words
        .into_iter()
        .map(|w| w.trim_matches(['[', ']']).trim_end_matches(['…', '.']).to_owned())
        .filter(|w| !w.is_empty())
        .collect();
    let is_assignment = |w: &str| {
        w.split_once('=')
            .is_some_and(|(name, _)| !name.is_empty() && name.chars().all(|c| c.is_ascii_uppercase() || c == '_'))
    };
    let set = words.iter().take_while(|w| is_assignment(w)).count();
    let env = words
        .drain(..set)
        .filter_map(|w| Some(w.split_once('=')?.0.to_owned()))
        .collect();
    let Some(first) = words.first().cloned() else {
        return Err(format!("{at}: a command that only sets variables"));
    };
    let args = words.split_off(1);
    let program = if first == "cargo" {
        read_cargo(at, &args, binaries)?
    } else if binaries.values().flatten().any(|b| *b == first) {
        Program::Binary { name: first, args }
    } else if let Some(path) = first.strip_prefix("./").unwrap_or(&first).strip_prefix("scripts/") {
        Program::Script {
            path: format!("scripts/{path}"),
            args,
        }
    } else {
        Program::Other(first)
    };
    Ok(DocCommand {
        at: at.to_owned(),
        env,
        program,
    })
}

/// `cargo run [options] -- ARGS`: the binary it runs, named by `--bin` or the package's
/// only one; any other cargo command is [`Program::Other`].
fn read_cargo(at: &str, args: &[String], binaries: &BTreeMap<String, Vec<String>>) -> Result<Program, String> {
    if args.first().map(String::as_str) != Some("run") {
        return Ok(Program::Other(format!(
            "cargo {}",
            args.first().map_or("", String::as_str)
        )));
    }
    let end = args.iter().position(|a| a == "--").unwrap_or(args.len());
    let option = |names: &[&str]| {
        args[..end]
            .windows(2)
            .find(|w| names.contains(&w[0].as_str()))
            .map(|w| w[1].clone())
    };
    let package = option(&["-p", "--package"]).ok_or_else(|| format!("{at}: `cargo run` without `-p`"))?;
    let bins = binaries
        .get(&package)
        .ok_or_else(|| format!("{at}: `{package}` is not a package of the workspace"))?;
    let name = match option(&["--bin"]) {
        Some(bin) if bins.contains(&bin) => bin,
        Some(bin) => return Err(format!("{at}: `{package}` builds no binary `{bin}`: {bins:?}")),
        None if bins.len() == 1 => bins[0].clone(),
        None => return Err(format!("{at}: `{package}` builds {bins:?}: name one with `--bin`")),
    };
    let args = args.get(end + 1..).unwrap_or_default().to_vec();
    Ok(Program::Binary { name, args })
}

/// Paths in the project a command names (`sim/scenarios/obv-starvation.toml`) that do not
/// exist: an argument whose first part is a folder of the project and that holds no
/// placeholder or pattern. `data/` is the server's data directory, made when it runs.
pub fn missing_paths(root: &Path, args: &[String]) -> Vec<String> {
    args.iter()
        .filter(|a| !a.contains(['<', '*', '$', '=']) && a.contains('/'))
        .filter(|a| {
            a.split('/')
                .next()
                .is_some_and(|first| root.join(first).is_dir() && !first.is_empty())
        })
        .filter(|a| !a.starts_with("data/") && !root.join(a).exists())
        .map(|a| format!("no `{a}` in the project"))
        .collect()
}

/// What a binary's `--help` at one command says: its subcommands and its options, each
/// with whether it takes a value.
struct Help {
    commands: BTreeSet<String>,
    options: BTreeMap<String, bool>,
}

impl Help {
    fn of(exe: &Path, path: &[String]) -> Result<Help, String> {
        let out = Command::new(exe)
            .args(path)
            .arg("--help")
            .output()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        let text = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() {
            return Err(format!(
                "`{} --help` failed: {}",
                path.join(" "),
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let (mut commands, mut options) = (BTreeSet::new(), BTreeMap::new());
        let mut in_commands = false;
        for line in text.lines() {
            if line.ends_with(':') && !line.starts_with(' ') {
                in_commands = line == "Commands:";
            } else if in_commands && line.starts_with("  ") && !line.starts_with("   ") {
                commands.extend(line.split_whitespace().next().map(str::to_owned));
            } else if line.trim_start().starts_with('-') {
                let head: Vec<&str> = line
                    .split_whitespace()
                    .take_while(|w| w.starts_with(['-', '<', '[']))
                    .collect();
                let takes_value = head.iter().any(|w| w.starts_with(['<', '[']));
                for word in head {
                    let word = word.trim_end_matches(',');
                    if word.starts_with('-') {
                        options.insert(word.trim_start_matches('-').to_owned(), takes_value);
                    }
                }
            }
        }
        Ok(Help { commands, options })
    }
}

/// Holds `args`, a command's arguments to the binary `exe`, to what the binary accepts:
/// each subcommand is one of its parent's, each option one the command (or a parent) has,
/// an option's value skipped. Values and operands are not checked: the documentation
/// writes placeholders (`ID`, `DIR`).
pub fn check_binary(exe: &Path, args: &[String]) -> Result<(), String> {
    let name = exe
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut path: Vec<String> = Vec::new();
    let mut help = Help::of(exe, &path)?;
    let mut options = help.options.clone();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        let here = || {
            format!(
                "`{}`",
                std::iter::once(&name)
                    .chain(&path)
                    .cloned()
                    .collect::<Vec<_>>()
                    .join(" ")
            )
        };
        if let Some(option) = word.strip_prefix('-').filter(|o| !o.is_empty()) {
            let (name, inline) = match option.trim_start_matches('-').split_once('=') {
                Some((name, _)) => (name, true),
                None => (option.trim_start_matches('-'), false),
            };
            match options.get(name) {
                None => return Err(format!("`{word}` is not an option of {}", here())),
                Some(true) if !inline => {
                    words.next();
                }
                Some(_) => {}
            }
        } else if !help.commands.is_empty() {
            if !help.commands.contains(word) {
                return Err(format!("`{word}` is not a command of {}: {:?}", here(), help.commands));
            }
            path.push(word.clone());
            help = Help::of(exe, &path)?;
            options.extend(help.options.clone());
        }
    }
    Ok(())
}
