//! The documentation held to the code: README.md's table of what BesluitBron serves against
//! the connector registry; every command of an `sh` block in README.md and `docs/` against
//! the program it runs (the server's binary by its `--help`, a script by its file; the
//! simulator's commands in `sim/tests/cli.rs`); every relative link of README.md,
//! ARCHITECTURE.md and `docs/` to a file and heading that exist; and README.md and
//! ARCHITECTURE.md within the lengths a newcomer reads.
//!
//! What it does not do: run a command (each is run by the tests of what it runs: `cli.rs`,
//! the simulator's, `scripts/test` itself), or check what prose says.

#[path = "../../tests/docs/commands.rs"]
mod commands;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use commands::Program;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// One platform as README.md's table and the registry name it: its id, its platform's
/// name, its address.
type Line = (String, String, String);

/// The platforms the server serves, as the connector registry lists them. The one place
/// this test reads the registry.
fn registry() -> BTreeSet<Line> {
    besluitbron_server::connectors::CONNECTORS
        .iter()
        .map(|c| {
            (
                c.id.to_owned(),
                c.platform.display_name().to_owned(),
                format!("/mcp/{}", c.id),
            )
        })
        .collect()
}

/// The rows of the first table under the heading `## What it serves`: per row its first
/// three cells (id, platform, address) without their backticks.
fn served_table(readme: &str) -> Vec<Line> {
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("What it serves\n"))
        .expect("README.md has a section `## What it serves`");
    let cell = |c: &str| c.trim().trim_matches('`').to_owned();
    section
        .lines()
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .skip(2) // the header and its rule
        .map(|row| {
            let cells: Vec<&str> = row.split('|').collect();
            (cell(cells[1]), cell(cells[2]), cell(cells[3]))
        })
        .collect()
}

/// What the table gets wrong against the registry, one line each: a platform without its
/// line, a line the registry has no platform for, a line given twice.
fn table_faults(table: &[Line], registry: &BTreeSet<Line>) -> Vec<String> {
    let rows: BTreeSet<Line> = table.iter().cloned().collect();
    let mut out = Vec::new();
    if rows.len() != table.len() {
        out.push("a line is given twice".to_owned());
    }
    for (id, name, address) in registry.difference(&rows) {
        out.push(format!(
            "no line `| `{id}` | {name} | `{address}` | … |` for a platform the registry serves"
        ));
    }
    for (id, name, address) in rows.difference(registry) {
        out.push(format!(
            "the line `{id}` | {name} | `{address}` names no platform of the registry"
        ));
    }
    out
}

#[test]
fn the_readmes_table_names_every_platform_of_the_registry() {
    let table = served_table(&read(&root().join("README.md")));
    let registry = registry();
    assert!(registry.len() >= 8, "the registry was read: {registry:?}");
    let faults = table_faults(&table, &registry);
    assert!(
        faults.is_empty(),
        "README.md, `## What it serves`:\n{}",
        faults.join("\n")
    );
}

#[test]
fn a_platform_missing_from_the_table_or_one_too_many_is_named() {
    let line = |id: &str, name: &str| (id.to_owned(), name.to_owned(), format!("/mcp/{id}"));
    let registry: BTreeSet<Line> = [line("obv", "OpenBesluitvorming"), line("tk", "Tweede Kamer")].into();
    let readme = "# B\n\n## What it serves\n\n| id | platform | address | what |\n|---|---|---|---|\n\
                  | `obv` | OpenBesluitvorming | `/mcp/obv` | records |\n| `xx` | Elsewhere | `/mcp/xx` | x |\n\n## Next\n";
    let faults = table_faults(&served_table(readme), &registry);
    assert_eq!(faults.len(), 2, "{faults:?}");
    assert!(
        faults[0].contains("`tk`") && faults[0].starts_with("no line"),
        "{faults:?}"
    );
    assert!(
        faults[1].contains("`xx`") && faults[1].contains("names no platform"),
        "{faults:?}"
    );
}

/// Programs of others a documented command may run; any other first word is a mistake
/// (or a program of this project this test does not know yet).
const OTHER_PROGRAMS: &[&str] = &["cat", "curl", "mcp-publisher", "claude", "cargo bench", "npx"];

/// Binaries of the workspace whose commands another crate's tests check, and where.
const CHECKED_ELSEWHERE: &[(&str, &str)] = &[("besluitbron-sim", "sim/tests/cli.rs")];

/// What is wrong with one documented script command: a script that is not there or cannot
/// run, or a variable set for it that the script never reads.
fn script_faults(root: &Path, path: &str, env: &[String]) -> Vec<String> {
    let file = root.join(path);
    let Ok(meta) = std::fs::metadata(&file) else {
        return vec![format!("no script `{path}`")];
    };
    let mut out = Vec::new();
    if std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o111 == 0 {
        out.push(format!("`{path}` is not executable"));
    }
    let text = read(&file);
    let reads = |name: &str| {
        text.match_indices(name).any(|(at, _)| {
            let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
            !word(text[..at].chars().next_back()) && !word(text[at + name.len()..].chars().next())
        })
    };
    for name in env.iter().filter(|n| !reads(n)) {
        out.push(format!("`{path}` never reads `{name}`"));
    }
    out
}

#[test]
fn every_command_in_the_docs_is_one_its_program_takes() {
    let root = root();
    let commands = commands::doc_commands(&root).unwrap_or_else(|e| panic!("{e}"));
    let mut faults = Vec::new();
    let mut server = 0;
    for command in &commands {
        let fault = |f: String| format!("{}: {f}", command.at);
        match &command.program {
            Program::Binary { name, args } if name == "besluitbron" => {
                server += 1;
                let exe = Path::new(env!("CARGO_BIN_EXE_besluitbron"));
                faults.extend(commands::check_binary(exe, args).err().map(fault));
                faults.extend(commands::missing_paths(&root, args).into_iter().map(fault));
            }
            Program::Binary { name, .. } if CHECKED_ELSEWHERE.iter().any(|(n, _)| n == name) => {}
            Program::Binary { name, .. } => faults.push(fault(format!("no test checks `{name}`'s commands"))),
            Program::Script { path, args } => {
                faults.extend(script_faults(&root, path, &command.env).into_iter().map(fault));
                faults.extend(commands::missing_paths(&root, args).into_iter().map(fault));
            }
            Program::Other(name) if OTHER_PROGRAMS.contains(&name.as_str()) => {}
            Program::Other(name) => faults.push(fault(format!("`{name}` is no program this test knows"))),
        }
    }
    assert!(server >= 3, "the server's commands were read: {commands:?}");
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn a_command_the_binary_does_not_take_is_named() {
    let exe = Path::new(env!("CARGO_BIN_EXE_besluitbron"));
    let words = |s: &str| s.split_whitespace().map(str::to_owned).collect::<Vec<_>>();
    assert_eq!(
        commands::check_binary(exe, &words("cache stats --platform ID --data-dir DIR")),
        Ok(())
    );
    assert_eq!(
        commands::check_binary(exe, &words("--log-format json serve --listen A")),
        Ok(())
    );
    let wrong = commands::check_binary(exe, &words("cache stat --platform ID")).unwrap_err();
    assert!(
        wrong.contains("`stat` is not a command of `besluitbron cache`"),
        "{wrong}"
    );
    let wrong = commands::check_binary(exe, &words("serve --data DIR")).unwrap_err();
    assert!(
        wrong.contains("`--data` is not an option of `besluitbron serve`"),
        "{wrong}"
    );
    let split = commands::split_commands("A=1 ./x 'a b' \\\n  c # note\ncat f > g &\n").unwrap();
    assert_eq!(split, [vec!["A=1", "./x", "a b", "c"], vec!["cat", "f"]]);
}

/// The headings of a Markdown text as the anchors GitHub makes of them.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut in_code = false;
    let mut out = BTreeSet::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code && line.starts_with('#') {
            let heading = line.trim_start_matches('#').trim().to_lowercase();
            let slug = heading
                .chars()
                .filter_map(|c| match c {
                    ' ' => Some('-'),
                    c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                    _ => None,
                })
                .collect();
            out.insert(slug);
        }
    }
    out
}

/// The relative links of a Markdown text (`[text](target)`), outside code blocks.
fn links(text: &str) -> Vec<String> {
    let mut in_code = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
        } else if !in_code {
            for part in line.split("](").skip(1) {
                let target = part.split(')').next().unwrap_or_default();
                if !target.is_empty() && !target.contains("://") && !target.starts_with("mailto:") {
                    out.push(target.to_owned());
                }
            }
        }
    }
    out
}

#[test]
fn every_relative_link_in_the_docs_reaches_its_file_and_heading() {
    let root = root();
    let mut files = commands::documentation_files(&root);
    files.push(root.join("ARCHITECTURE.md"));
    let mut faults = Vec::new();
    let mut seen = 0;
    for file in &files {
        let text = read(file);
        let name = file.strip_prefix(&root).unwrap_or(file).display().to_string();
        for target in links(&text) {
            seen += 1;
            let (path, anchor) = target.split_once('#').unwrap_or((&target, ""));
            let to = if path.is_empty() {
                file.clone()
            } else {
                file.parent().unwrap().join(path)
            };
            if !to.exists() {
                faults.push(format!("{name}: `{target}`: no {}", to.display()));
            } else if !anchor.is_empty() && !anchors(&read(&to)).contains(anchor) {
                faults.push(format!("{name}: `{target}`: no heading `#{anchor}`"));
            }
        }
    }
    assert!(seen >= 10, "the links were read");
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}

#[test]
fn the_readme_and_the_architecture_map_stay_short() {
    let root = root();
    let readme = read(&root.join("README.md"));
    let lines = readme.lines().count();
    assert!(
        lines <= 200,
        "README.md has {lines} lines: at most 200, the rest belongs in docs/"
    );
    let long: Vec<usize> = readme
        .lines()
        .enumerate()
        .filter(|(_, l)| l.chars().count() > 120 && !l.starts_with('|') && !l.contains("]("))
        .map(|(n, _)| n + 1)
        .collect();
    assert!(long.is_empty(), "README.md: lines over 120 characters: {long:?}");
    let map = read(&root.join("ARCHITECTURE.md")).lines().count();
    assert!(
        map <= 300,
        "ARCHITECTURE.md has {map} lines: at most 300, a map; details go in docs/"
    );
}
