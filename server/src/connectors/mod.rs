//! The connector registry: one table, [`CONNECTORS`], lists every connector BesluitBron
//! serves. Each entry gives its id (the route `/mcp/<id>`, the client limits' connector
//! layer and metric labels), its platform, its tools (an rmcp tool router), its
//! instructions text, how to open its client from configuration, and optional
//! maintenance (OpenBesluitvorming's load-status refresh). Routes, limits, metrics,
//! maintenance tasks and the test harness all come from this table.
//!
//! **Architecture invariant: a connector is its module, its fake and one line in each
//! registry.** This table in the server, and the fakes' registry in `besluitbron-fakes`
//! (paired by platform id in the contract test, which fails for a connector without a
//! fake). Nothing else names a connector: there is no path-prefix matching, and no guess
//! of a platform from a tool name.
//!
//! What this module does not do: decide when a call may go (the core path does) or talk
//! HTTP (the platform clients do).

pub mod ask;
pub mod bwb;
pub mod cvdr;
pub mod eurlex;
pub mod ids;
pub mod ob;
pub mod obv;
pub mod offers;
pub mod opentk;
pub mod ori;
pub mod page_spec;
pub mod pages;
pub mod rechtspraak;
pub mod regulation;
#[cfg(test)]
mod render_test;
pub mod schema;
pub mod search;
pub mod tk;
pub mod tool;
pub mod vocabulary;

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use besluitbron_core::PlatformId;

use crate::call::{Client, Clients, Context};
use crate::config::{Config, PlatformDefaults};
use crate::platforms::http::{HttpConfig, PlatformError};
pub use offers::Offers;
pub use tool::ToolSpec;

/// A maintenance round's future.
pub type MaintenanceFuture<'a> = Pin<Box<dyn Future<Output = Result<(), String>> + Send + 'a>>;

/// Work a connector does on its own, periodically, as BesluitBron's system session.
#[derive(Clone, Copy)]
pub struct Maintenance {
    /// What it does, for logs.
    pub name: &'static str,
    /// How often, from configuration; `None` turns it off.
    pub every: fn(&Config) -> Option<Duration>,
    /// One round, as BesluitBron's system session.
    pub run: for<'a> fn(&'a Context) -> MaintenanceFuture<'a>,
}

/// One connector.
pub struct ConnectorSpec {
    /// The short id: `/mcp/<id>`, the connector layer of the client limits, metrics.
    pub id: &'static str,
    /// The platform its tools call.
    pub platform: PlatformId,
    /// Its platform's settings unless the configuration says otherwise: the real
    /// address, and what the platform needs beyond the shared defaults.
    pub defaults: PlatformDefaults,
    /// What an assistant is told about these tools in the server's instructions: one
    /// short paragraph (every address's instructions stay within 2,000 characters, what
    /// the hosts keep).
    pub instructions: &'static str,
    /// The per-platform guidance in full (costs, what to ask first, what the platform
    /// cannot do), served as the resource `besluitbron://guide`.
    pub guide: &'static str,
    /// Its tools.
    pub tools: &'static [ToolSpec],
    /// Opens its platform client from configuration.
    pub open: fn(&Config) -> Result<Client, PlatformError>,
    /// Work it does on its own.
    pub maintenance: Option<Maintenance>,
    /// One sample call of each of its tools, answerable by its fake: the contract test
    /// asks each one (and fails for a tool without a sample), the load bench sends them.
    pub samples: &'static [Sample],
    /// Its resources, resource templates and prompts (`Offers::NONE` for none).
    pub offers: &'static Offers,
    /// Its part in the search page (`crate::page`): its search and document tools, or
    /// why it has none.
    pub page: &'static page_spec::PageSpec,
    /// Its section of the status page, if it has one.
    pub status: Option<&'static page_spec::StatusSection>,
    /// Its part in `search` on `/mcp`: the tool that answers words, or why none does.
    pub search: search::KeywordSearch,
    /// The ids and links it reads (`fetch` on `/mcp`, and its reading tools' `id`).
    pub reads: Option<&'static ids::IdReader>,
    /// Its tools that answer a list of reference values or its platform's status (one
    /// entry each, from its `tools`): `/mcp` answers them through `lists`, which it lists
    /// in their place.
    pub lists: &'static [&'static ToolSpec],
}

/// A sample call of one tool.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    /// The tool.
    pub tool: &'static str,
    /// Its arguments, a JSON object.
    pub arguments: &'static str,
    /// The tool asks as BesluitBron's system session whoever calls it (R-L7), so a 429
    /// is an error rather than a second wait in the fair queue.
    pub as_system: bool,
    /// The platform requests a first call makes (a record and its text: 2).
    pub requests: u64,
}

impl Sample {
    /// A sample a caller's session asks.
    pub const fn new(tool: &'static str, arguments: &'static str) -> Sample {
        Sample {
            tool,
            arguments,
            as_system: false,
            requests: 1,
        }
    }

    /// A sample the system session asks.
    pub const fn system(tool: &'static str, arguments: &'static str) -> Sample {
        Sample {
            tool,
            arguments,
            as_system: true,
            requests: 1,
        }
    }

    /// The same sample, whose first call makes `requests` platform requests.
    pub const fn asking(mut self, requests: u64) -> Sample {
        self.requests = requests;
        self
    }
}

impl std::fmt::Debug for ConnectorSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "connector {}", self.id)
    }
}

/// Every connector, in the order their tools are listed at `/mcp`.
pub static CONNECTORS: &[ConnectorSpec] = &[
    obv::CONNECTOR,
    tk::CONNECTOR,
    rechtspraak::CONNECTOR,
    opentk::CONNECTOR,
    ori::CONNECTOR,
    ob::CONNECTOR,
    bwb::CONNECTOR,
    cvdr::CONNECTOR,
    eurlex::CONNECTOR,
];

/// The platforms BesluitBron serves: each connector's, in the registry's order. What gets
/// a platform task, a buffer, limits and a lease follows from this list; a platform
/// without a connector here (Open Archivaris publishes no interface) lives only in the
/// simulator's scenarios.
pub fn platforms() -> Vec<PlatformId> {
    CONNECTORS.iter().map(|c| c.platform).collect()
}

/// The platform with this id, if a connector serves it.
pub fn platform(id: &str) -> Option<PlatformId> {
    CONNECTORS.iter().map(|c| c.platform).find(|p| p.as_str() == id)
}

/// Every connector's platform settings, as [`Config::load`] takes them.
pub fn platform_defaults() -> Vec<PlatformDefaults> {
    CONNECTORS.iter().map(|c| c.defaults).collect()
}

/// The configuration: the connectors' platform defaults, then `file`, then `env`
/// ([`Config::load`]).
pub fn load_config(
    file: Option<&std::path::Path>,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Config, crate::config::ConfigError> {
    Config::load(&platform_defaults(), file, env)
}

/// The connector with this id.
pub fn by_id(id: &str) -> Option<&'static ConnectorSpec> {
    CONNECTORS.iter().find(|c| c.id == id)
}

/// How a platform's client talks HTTP, from its configuration. The client makes one
/// attempt per call: retries are the platform path's, so each attempt is an admission of
/// its fair queue (R-L8).
pub fn http_config(config: &Config, platform: PlatformId) -> HttpConfig {
    let pc = config.platform(platform);
    HttpConfig {
        contact: config.contact.clone(),
        request_timeout_ms: pc.timeout_ms,
        max_body_bytes: pc.max_body_bytes,
        ..HttpConfig::default()
    }
}

/// Opens the platform client of each of `connectors`.
pub fn open_clients(config: &Config, connectors: &[&ConnectorSpec]) -> Result<Clients, PlatformError> {
    let mut by_platform = BTreeMap::new();
    for c in connectors {
        by_platform.insert(c.platform, (c.open)(config)?);
    }
    Ok(Clients::new(by_platform))
}

/// Every tool of every connector, with its connector.
pub fn tools() -> impl Iterator<Item = (&'static ConnectorSpec, &'static ToolSpec)> {
    CONNECTORS.iter().flat_map(|c| c.tools.iter().map(move |t| (c, t)))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    /// What an assistant reads speaks the vocabulary: no description of a tool, a
    /// resource, a template or a prompt names a platform's own field (`Id`, `Nummer`,
    /// `entityId`: issue 42 found "tk_search's `Id`"), which the tools do not answer.
    #[test]
    fn no_description_names_a_platforms_own_field() {
        const PLATFORM_FIELDS: [&str; 6] = [
            "`Id`",
            "`Nummer`",
            "`DocumentNummer`",
            "`entityId`",
            "`entity_id`",
            "`Titel`",
        ];
        let mut texts: Vec<(String, String)> = Vec::new();
        for c in CONNECTORS {
            for t in c.tools {
                let d = (t.definition)();
                texts.push((
                    t.name.to_owned(),
                    d.description.as_deref().unwrap_or_default().to_owned(),
                ));
                texts.push((
                    t.name.to_owned(),
                    serde_json::Value::Object((*d.input_schema).clone()).to_string(),
                ));
            }
            for r in c.offers.resources {
                texts.push((r.uri.to_owned(), r.description.to_owned()));
            }
            for t in c.offers.templates {
                texts.push((t.uri_template.to_owned(), t.description.to_owned()));
            }
            for p in c.offers.prompts {
                texts.push((p.name.to_owned(), p.description.to_owned()));
            }
        }
        let found: Vec<String> = texts
            .iter()
            .flat_map(|(at, text)| {
                PLATFORM_FIELDS
                    .iter()
                    .filter(|f| text.contains(**f))
                    .map(move |f| format!("{at}: {f}"))
            })
            .collect();
        assert!(found.is_empty(), "{found:?}");
    }

    #[test]
    fn the_example_file_loads_and_equals_the_defaults() {
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("../besluitbron.example.toml");
        let example = load_config(Some(&file), Vec::new()).expect("the example is valid");
        let defaults = load_config(None, Vec::new()).expect("defaults");
        assert_eq!(
            format!("{example:?}"),
            format!("{defaults:?}"),
            "the example documents the defaults exactly"
        );
    }

    #[test]
    fn each_platform_gets_its_connectors_defaults() {
        let c = load_config(None, Vec::new()).expect("defaults");
        for connector in CONNECTORS {
            let settings = c.platform(connector.platform);
            assert_eq!(settings.base_url, connector.defaults.base_url, "{connector:?}");
            assert!(
                settings.base_url.starts_with("https://"),
                "the real platform: {connector:?}"
            );
        }
        assert_eq!(c.service(crate::platforms::opentk::SERVICE).max_concurrent, Some(3));
        assert_eq!(c.platform(crate::platforms::ori::PLATFORM).retired_hold_secs, Some(60));
        assert_eq!(c.service(crate::platforms::obv::SERVICE).max_concurrent, None);
        let groups = c.budget_groups().expect("the registry's services form groups");
        let group = |p: besluitbron_core::PlatformId| {
            groups
                .iter()
                .find(|g| g.platforms.contains(&p))
                .expect("every platform has a group")
        };
        let path = crate::driver::path_config(&c, group(crate::platforms::opentk::PLATFORM));
        assert_eq!(path.lanes[0].max_in_flight, Some(3), "the bound reaches the path");
        let ob = crate::driver::path_config(&c, group(crate::platforms::ob::PLATFORM));
        let regulations = group(crate::platforms::bwb::PLATFORM);
        assert!(
            regulations.platforms.contains(&crate::platforms::cvdr::PLATFORM),
            "{regulations:?}"
        );
        assert_eq!(
            regulations.services,
            [crate::platforms::koop::ZOEKSERVICE, crate::platforms::koop::REPOSITORY],
            "the regulations share KOOP's zoekservice and its repository: one budget each"
        );
        assert_eq!(ob.lanes.len(), 2, "ob's text host keeps a lane of its own");
    }
}
