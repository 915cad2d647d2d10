//! What an address shows a model, written from the registry: the tools it lists and the
//! server's instructions there. No text here names a platform or a tool by hand.
//!
//! **Tools.** `/mcp` lists every tool but those `search`, `fetch` and `lists` stand in
//! for (the keyword searches, the readers, the reference lists and status): per platform
//! only its questions that are none of those (votes, debates, an activity); `/mcp/<id>`
//! (and `/<id>/mcp`) its platform's tools; a choice of tool sets ([`super::toolsets`])
//! adds whole platform sets. A model cannot call a tool it never sees, so a listed tool's
//! description that names a tool not listed at the address names the tool listed in its
//! place (`obv_search` is `search` at `/mcp`, `obv_sources` is `lists(obv, sources)`), or
//! says where it is listed (`opentk_search (at /opentk/mcp)`).
//!
//! **Instructions.** At `/mcp`: the platforms by name and id, what `search`, `fetch` and
//! `lists` do over them, each connector's paragraph when all of them fit within
//! [`MAX_INSTRUCTIONS_CHARS`] (with many platforms none do: the tools' descriptions and the
//! guide hold the rest), and where the guide and the whole tool sets are. At a platform's
//! address: its connector's paragraph and the same last words.
//!
//! What this module does not do: choose tool sets from a request (`toolsets`) or answer
//! a request (the handler does).

use std::collections::BTreeSet;

use rmcp::model::Tool;

use super::Scope;
use super::tools::{ToolTable, map_words};
use crate::connectors::ConnectorSpec;

/// The per-platform guidance of an address's connectors (their `guide`s), served at
/// every address: the instructions stay short and point here.
pub const GUIDE_URI: &str = "besluitbron://guide";

/// The longest instructions an address gives, in characters: Claude Code keeps 2,048
/// and cuts the rest mid-word.
pub const MAX_INSTRUCTIONS_CHARS: usize = 2_000;

/// The tools `scope`'s address lists, with the whole tool sets of the platforms `sets`
/// names, sorted by name; each description naming tools as listed there.
pub fn tools(table: &ToolTable, scope: Scope, sets: &[&str]) -> Vec<Tool> {
    let listed: BTreeSet<&'static str> = table
        .iter()
        .filter(|t| listed_by_default(t, scope) || sets.contains(&t.connector))
        .map(|t| t.name)
        .collect();
    let mut tools: Vec<Tool> = listed
        .iter()
        .filter_map(|name| table.get(name))
        .map(|t| {
            let mut definition = t.definition.clone();
            if let Some(description) = &definition.description {
                let pointed = pointed(description, table, &listed);
                if pointed != *description {
                    definition.description = Some(pointed.into());
                }
            }
            pointed_arguments(&mut definition, table, &listed);
            definition
        })
        .collect();
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    tools
}

/// `definition` with each of its arguments' descriptions naming tools as listed (`lists`
/// and `search` carry their platforms' arguments, whose words name those tools).
fn pointed_arguments(definition: &mut Tool, table: &ToolTable, listed: &BTreeSet<&'static str>) {
    let Some(serde_json::Value::Object(properties)) = definition.input_schema.get("properties") else {
        return;
    };
    let changed: Vec<(String, String)> = properties
        .iter()
        .filter_map(|(name, property)| {
            let text = property.get("description")?.as_str()?;
            let new = pointed(text, table, listed);
            (new != text).then(|| (name.clone(), new))
        })
        .collect();
    if changed.is_empty() {
        return;
    }
    let schema = std::sync::Arc::make_mut(&mut definition.input_schema);
    if let Some(serde_json::Value::Object(properties)) = schema.get_mut("properties") {
        for (name, text) in changed {
            if let Some(serde_json::Value::Object(property)) = properties.get_mut(&name) {
                property.insert("description".into(), text.into());
            }
        }
    }
}

/// Whether `scope`'s address lists `tool` when no tool set is chosen.
fn listed_by_default(tool: &super::tools::ToolEntry, scope: Scope) -> bool {
    match scope {
        // `/mcp` lists `search`, `fetch` and `lists` in place of the tools they stand in for.
        Scope::All => tool.instead.is_none(),
        Scope::One(c) => tool.connector == c.id,
    }
}

/// `text` with each tool it names that is not `listed` named as the tool listed in its
/// place, or with the address that lists it.
fn pointed(text: &str, table: &ToolTable, listed: &BTreeSet<&'static str>) -> String {
    map_words(text, |word| {
        let entry = table.get(word)?;
        if listed.contains(entry.name) {
            return None;
        }
        match entry.instead {
            Some(super::lists::NAME) if listed.contains(super::lists::NAME) => Some(format!(
                "{}({}, {})",
                super::lists::NAME,
                entry.connector,
                super::lists::list_name(entry.connector, entry.name)
            )),
            Some(instead) if listed.contains(instead) => Some(instead.to_owned()),
            _ if entry.connector == super::tools::ALL => None,
            _ => Some(format!("{word} (at /{}/mcp)", entry.connector)),
        }
    })
}

/// The server's instructions at `scope`'s address over `registry` (the connectors served).
pub fn instructions(table: &ToolTable, registry: &[&'static ConnectorSpec], scope: Scope) -> String {
    let connectors = scope.connectors(registry);
    let listed: BTreeSet<&'static str> = table
        .iter()
        .filter(|t| listed_by_default(t, scope))
        .map(|t| t.name)
        .collect();
    let paragraphs: Vec<String> = connectors
        .iter()
        .map(|c| pointed(c.instructions, table, &listed))
        .collect();
    let last = last_words(scope);
    let mut parts: Vec<String> = Vec::new();
    if matches!(scope, Scope::All) && table.get(super::search::NAME).is_some() {
        // Each connector's paragraph names its platform; where they do not all fit, the
        // platforms are named in the preamble instead.
        let fits = |preamble: &str| {
            let all: usize = paragraphs.iter().map(|p| p.chars().count() + 2).sum();
            preamble.chars().count() + all + 2 + last.chars().count() <= MAX_INSTRUCTIONS_CHARS
        };
        let lists = table.get(super::lists::NAME).is_some();
        let short = preamble(None, lists);
        if fits(&short) {
            parts.push(short);
            parts.extend(paragraphs);
        } else {
            parts.push(preamble(Some(&connectors), lists));
        }
    } else {
        parts.extend(paragraphs);
    }
    parts.push(last);
    parts.join("\n\n")
}

/// What `/mcp`'s instructions say first: `search`, `fetch` and (`lists`) `lists`, and the
/// platforms by name when no paragraph of theirs follows (`named`).
fn preamble(named: Option<&[&'static ConnectorSpec]>, lists: bool) -> String {
    let platforms = match named {
        Some(connectors) => {
            let named: Vec<String> = connectors
                .iter()
                .map(|c| format!("{} ({})", c.platform.display_name(), c.id))
                .collect();
            format!("{} public platforms: {}", connectors.len(), named.join(", "))
        }
        None => "public platforms".to_owned(),
    };
    let lists = if lists {
        " `lists` answers each platform's reference lists and status."
    } else {
        ""
    };
    let then = if named.is_some() {
        ""
    } else {
        " Go deeper with each platform's own tools:"
    };
    format!(
        "BesluitBron reads Dutch government decision data from {platforms}. `search` asks every platform that \
         searches by words at once (with their filters; `platforms` picks) and answers one list; `fetch` reads any \
         result's id, and any id or link a person has (its description names the forms).{lists}{then}"
    )
}

/// The last words of every address's instructions: where the full guidance and the whole
/// tool sets are.
fn last_words(scope: Scope) -> String {
    let sets = match scope {
        Scope::All => "/<id>/mcp, or ?toolsets=<id> here",
        Scope::One(_) => "/<id>/mcp, or ?toolsets=<id> at /mcp",
    };
    format!(
        "Per-platform advice (costs, what to ask first, what a platform cannot do): the resource {}, and the \
         tools' descriptions. Each platform's whole tool set: {sets}.",
        GUIDE_URI
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectors::CONNECTORS;

    #[test]
    fn a_whole_name_is_mapped_and_nothing_else() {
        let mapped = map_words("tk_search first; opentk_search, obv_document_x or obv_document.", |w| {
            ["tk_search", "obv_document"].contains(&w).then(|| w.to_uppercase())
        });
        assert_eq!(
            mapped,
            "TK_SEARCH first; opentk_search, obv_document_x or OBV_DOCUMENT."
        );
        assert_eq!(map_words("", |_| Some("x".into())), "");
    }

    /// Each address's addresses: `/mcp` and every platform's.
    fn scopes() -> Vec<Scope> {
        std::iter::once(Scope::All)
            .chain(CONNECTORS.iter().map(Scope::One))
            .collect()
    }

    #[test]
    fn no_listed_tool_points_a_model_to_a_tool_it_does_not_see() {
        let registry: Vec<_> = CONNECTORS.iter().collect();
        let table = ToolTable::new(&registry, &registry.iter().map(|c| c.platform).collect::<Vec<_>>());
        // `search` and `fetch` are words too; a platform's address names them as the tools of `/mcp`.
        let names: BTreeSet<&str> = table
            .iter()
            .filter(|t| t.connector != super::super::tools::ALL)
            .map(|t| t.name)
            .collect();
        for scope in scopes() {
            let tools = tools(&table, scope, &[]);
            let listed: BTreeSet<String> = tools.iter().map(|t| t.name.to_string()).collect();
            for tool in &tools {
                let description = tool.description.as_deref().unwrap_or_default();
                map_words(description, |word| {
                    let unlisted = names.contains(word) && !listed.contains(word);
                    let said_where = description.contains(&format!("{word} (at /"));
                    assert!(
                        !unlisted || said_where,
                        "{}: {} names {word}, not listed there: {description}",
                        scope.id(),
                        tool.name
                    );
                    None
                });
            }
            for tool in &tools {
                let properties = tool.input_schema.get("properties").and_then(|p| p.as_object());
                for (argument, property) in properties.into_iter().flatten() {
                    let text = property.get("description").and_then(|d| d.as_str()).unwrap_or_default();
                    map_words(text, |word| {
                        let unlisted = names.contains(word) && !listed.contains(word);
                        assert!(
                            !unlisted || text.contains(&format!("{word} (at /")),
                            "{}: {}'s `{argument}` names {word}: {text}",
                            scope.id(),
                            tool.name
                        );
                        None
                    });
                }
            }
            let instructions = instructions(&table, &registry, scope);
            map_words(&instructions, |word| {
                let unlisted = names.contains(word) && !listed.contains(word);
                assert!(
                    !unlisted || instructions.contains(&format!("{word} (at /")),
                    "{}: the instructions name {word}: {instructions}",
                    scope.id()
                );
                None
            });
        }
    }

    #[test]
    fn the_instructions_name_every_platform_of_the_registry() {
        let registry: Vec<_> = CONNECTORS.iter().collect();
        let table = ToolTable::new(&registry, &registry.iter().map(|c| c.platform).collect::<Vec<_>>());
        let all = instructions(&table, &registry, Scope::All);
        for c in CONNECTORS {
            let name = c.platform.display_name();
            let named = all.contains(name) || all.contains(name.split(" (").next().unwrap_or(name));
            assert!(named, "{name}: {all}");
        }
    }
}
