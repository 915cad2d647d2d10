//! The server's layers, as ARCHITECTURE.md's table states them and as the code has them:
//! each top-level module of `server/src` imports only modules of lower layers, and `app`,
//! which wires the others together, is imported by none. The table is the rule: a module
//! the table does not name, or a module it names that the code has not, is a fault too, so
//! the document and the code cannot drift apart.
//!
//! The table is the one in the server's section (from the heading starting
//! "### `server/`" to the next "### "), its rows `| N | `a`, `b` | what |`.
//!
//! What it does not do: read imports. It takes the top-level module graph that
//! [`crate::graph`] gives.

use std::collections::{BTreeMap, BTreeSet};

/// Module → its layer, from ARCHITECTURE.md's table.
pub type Layers = BTreeMap<String, u32>;

/// The layer table of the server's section of `architecture` (ARCHITECTURE.md's text).
pub fn table(architecture: &str) -> Result<Layers, String> {
    let start = architecture
        .find("### `server/`")
        .ok_or("ARCHITECTURE.md has no section starting \"### `server/`\"")?;
    let section = &architecture[start..];
    let end = section[4..].find("\n### ").map_or(section.len(), |e| e + 4);
    let mut out = Layers::new();
    for row in section[..end].lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let (Some(layer), Some(modules)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Ok(layer) = layer.parse::<u32>() else {
            continue;
        };
        for module in modules.split(',').map(|m| m.trim().trim_matches('`')) {
            if let Some(before) = out.insert(module.to_owned(), layer) {
                return Err(format!(
                    "ARCHITECTURE.md's layer table names `{module}` twice (layers {before} and {layer})"
                ));
            }
        }
    }
    if out.is_empty() {
        return Err("ARCHITECTURE.md's server section has no layer table rows `| N | `module`, … | what |`".to_owned());
    }
    Ok(out)
}

/// One import that breaks the layers: the importing module, what it imports, and the
/// sentence that says what is wrong and what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fault {
    /// The importing module (or the module the fault is about).
    pub module: String,
    /// The imported module, if the fault is an import.
    pub imports: Option<String>,
    pub message: String,
}

/// What is wrong with `graph` (top-level module → the modules it imports) against
/// `layers`; `modules` are every top-level module the crate has.
pub fn faults(graph: &BTreeMap<String, BTreeSet<String>>, modules: &BTreeSet<String>, layers: &Layers) -> Vec<Fault> {
    let mut out = Vec::new();
    for module in modules.iter().filter(|m| !layers.contains_key(*m)) {
        out.push(Fault {
            module: module.clone(),
            imports: None,
            message: format!(
                "module `{module}` is in no row of ARCHITECTURE.md's layer table: add it to the row of the lowest layer above everything it imports"
            ),
        });
    }
    for module in layers.keys().filter(|m| !modules.contains(*m)) {
        out.push(Fault {
            module: module.clone(),
            imports: None,
            message: format!("ARCHITECTURE.md's layer table names `{module}`, which server/src does not have: strike it from the table"),
        });
    }
    for (module, targets) in graph {
        for target in targets {
            if target == "app" {
                out.push(Fault {
                    module: module.clone(),
                    imports: Some(target.clone()),
                    message: format!("`{module}` imports `app`, which only wires the others: move what it needs out of `app` into a lower layer"),
                });
                continue;
            }
            let (Some(&from), Some(&to)) = (layers.get(module), layers.get(target)) else {
                continue;
            };
            if to >= from {
                out.push(Fault {
                    module: module.clone(),
                    imports: Some(target.clone()),
                    message: format!(
                        "`{module}` (layer {from}) imports `{target}` (layer {to}): a module imports only lower layers; move what it uses below `{module}`, or, if the table is what is wrong, give `{module}` a layer above `{target}` in ARCHITECTURE.md"
                    ),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOC: &str = "# A\n\n### `core/`\n\n| 9 | `elsewhere` | not ours |\n\n\
                       ### `server/` — the shell\n\n| layer | modules | what |\n|---|---|---|\n\
                       | 3 | `app` | wires |\n| 2 | `page`, `guard` | doors |\n| 1 | `clock` | time |\n\n\
                       ### `sim/`\n\n| 5 | `engine` | not ours |\n";

    #[test]
    fn the_table_is_read_from_the_servers_section() {
        let layers = table(DOC).expect("a table");
        let want: Layers = [("app", 3), ("page", 2), ("guard", 2), ("clock", 1)]
            .into_iter()
            .map(|(m, l)| (m.to_owned(), l))
            .collect();
        assert_eq!(layers, want);
        assert!(
            table("### `server/`\n\nno table\n")
                .unwrap_err()
                .contains("no layer table")
        );
        assert!(table("| 1 | `a` |\n").unwrap_err().contains("no section"));
    }

    #[test]
    fn an_import_within_a_layer_upwards_or_of_app_is_a_fault() {
        let layers = table(DOC).expect("a table");
        let graph = |edges: &[(&str, &str)]| {
            let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
            for (a, b) in edges {
                g.entry(a.to_string()).or_default().insert(b.to_string());
            }
            g
        };
        let modules: BTreeSet<String> = ["app", "page", "guard", "clock"]
            .iter()
            .map(|m| m.to_string())
            .collect();
        let fine = graph(&[("app", "page"), ("page", "clock"), ("guard", "clock")]);
        assert_eq!(faults(&fine, &modules, &layers), []);
        let wrong = graph(&[("page", "guard"), ("clock", "app")]);
        let found: Vec<(String, Option<String>)> = faults(&wrong, &modules, &layers)
            .into_iter()
            .map(|f| (f.module, f.imports))
            .collect();
        assert_eq!(
            found,
            [
                ("clock".to_owned(), Some("app".to_owned())),
                ("page".to_owned(), Some("guard".to_owned()))
            ]
        );
        let more: BTreeSet<String> = ["app", "page", "guard", "calendar"]
            .iter()
            .map(|m| m.to_string())
            .collect();
        let messages: Vec<String> = faults(&fine, &more, &layers).into_iter().map(|f| f.message).collect();
        assert_eq!(messages.len(), 2, "{messages:?}");
        assert!(messages[0].contains("`calendar` is in no row"), "{messages:?}");
        assert!(
            messages[1].contains("names `clock`, which server/src does not have"),
            "{messages:?}"
        );
    }
}
