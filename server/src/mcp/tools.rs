//! [`ToolTable`]: every tool of the registry by name — its declaration, its connector,
//! its platform, and the rules its arguments are checked by (read from its input schema
//! once, at start-up) — found with one lookup per call.
//!
//! What `tools/list` shows of a tool is its declaration made portable
//! ([`crate::connectors::schema::portable`]); the rules are read from the declaration as
//! the tool wrote it (which knows, say, that `limit` is a `u32`).

use std::collections::HashMap;
use std::sync::Arc;

use besluitbron_core::PlatformId;
use rmcp::model::{JsonObject, Tool};

use crate::connectors::schema::{compact_output, portable};
use crate::connectors::{ConnectorSpec, ToolSpec};
use crate::mcp::arguments::Rules;

/// One tool, as a call needs to know it.
pub struct ToolEntry {
    /// The tool's declaration (its name, its function).
    pub spec: &'static ToolSpec,
    /// The id of the connector it belongs to.
    pub connector: &'static str,
    /// The platform it asks.
    pub platform: PlatformId,
    /// The rules its arguments are checked by.
    pub rules: Rules,
    /// What `tools/list` says of it: its schemas made portable.
    pub definition: Tool,
}

/// Every tool of the registry, by name.
pub struct ToolTable(HashMap<&'static str, ToolEntry, foldhash::fast::RandomState>);

impl ToolTable {
    /// The tools of `connectors`.
    ///
    /// # Panics
    ///
    /// When two tools share a name: a defect of the registry, found by every test that
    /// builds a server.
    pub fn new(connectors: &[&'static ConnectorSpec]) -> ToolTable {
        let mut tools = HashMap::default();
        for &c in connectors {
            for spec in c.tools {
                let mut definition = (spec.definition)();
                assert_eq!(definition.name, spec.name, "a tool's definition names it");
                let rules = Rules::of(&definition.input_schema);
                definition.input_schema = Arc::new(portable_copy(&definition.input_schema));
                definition.output_schema = definition.output_schema.map(|s| {
                    let mut s = portable_copy(&s);
                    compact_output(&mut s);
                    Arc::new(s)
                });
                let entry = ToolEntry {
                    spec,
                    connector: c.id,
                    platform: c.platform,
                    rules,
                    definition,
                };
                let earlier = tools.insert(spec.name, entry);
                assert!(earlier.is_none(), "two tools named {}", spec.name);
            }
        }
        ToolTable(tools)
    }

    /// `tool`, if it is one of the registry's tools.
    pub fn get(&self, tool: &str) -> Option<&ToolEntry> {
        self.0.get(tool)
    }

    /// Every tool.
    pub fn iter(&self) -> impl Iterator<Item = &ToolEntry> {
        self.0.values()
    }
}

/// `schema` made portable.
fn portable_copy(schema: &JsonObject) -> JsonObject {
    let mut schema = schema.clone();
    portable(&mut schema);
    schema
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectors::CONNECTORS;

    #[test]
    fn every_tool_of_every_connector_is_found_under_its_own_connector() {
        let table = ToolTable::new(&CONNECTORS.iter().collect::<Vec<_>>());
        let mut listed = 0;
        for c in CONNECTORS {
            for tool in c.tools {
                listed += 1;
                let entry = table.get(tool.name).expect("in the table");
                assert_eq!(
                    (entry.spec.name, entry.connector, entry.platform),
                    (tool.name, c.id, c.platform)
                );
                assert_eq!(entry.definition.name, tool.name);
            }
        }
        assert_eq!(table.iter().count(), listed, "no two tools share a name");
        assert!(table.get("no_such_tool").is_none());
    }
}
