//! Which connectors an MCP address serves: one connector at `/mcp/<id>`, or all of them
//! at `/mcp`.
//!
//! What this module does not do: route or serve anything; the handler asks it.

use crate::connectors::ConnectorSpec;

/// Which connectors an MCP address serves.
#[derive(Clone, Copy, Debug)]
pub enum Scope {
    /// One connector, at `/mcp/<id>`.
    One(&'static ConnectorSpec),
    /// Every connector of the registry, at `/mcp`.
    All,
}

impl Scope {
    /// The name in client limits and metrics: the connector's id, or `all`.
    pub fn id(self) -> &'static str {
        match self {
            Scope::One(c) => c.id,
            Scope::All => "all",
        }
    }

    /// True when the connector `id`'s tools are served here.
    pub fn serves(self, id: &str) -> bool {
        match self {
            Scope::One(c) => c.id == id,
            Scope::All => true,
        }
    }

    /// The connectors of `registry` served here.
    pub fn connectors(self, registry: &[&'static ConnectorSpec]) -> Vec<&'static ConnectorSpec> {
        match self {
            Scope::One(c) => vec![c],
            Scope::All => registry.to_vec(),
        }
    }
}
