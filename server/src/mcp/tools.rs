//! [`ToolTable`]: every tool of the registry by name — its declaration, its connector,
//! its platform, and the rules its arguments are checked by (read from its input schema
//! once, at start-up) — found with one lookup per call.
//!
//! Besides the connectors' tools, the table holds `fetch`, `search` and `lists` (at
//! `/mcp`): entries like any other, so they go through the same stack (arguments, replay,
//! route, time-out). Their platforms are the ones an id names (`fetch`), every platform
//! that searches by words (`search`) or the one chosen (`lists`), so
//! [`ToolEntry::platform`] is `None`.
//!
//! What `tools/list` shows of a tool is its declaration made portable
//! ([`crate::connectors::schema::portable`]); the rules are read from the declaration as
//! the tool wrote it (which knows, say, that `limit` is a `u32`).

use std::collections::HashMap;
use std::sync::Arc;

use besluitbron_core::PlatformId;
use rmcp::model::{CallToolResult, JsonObject, Tool};

use super::fetch::Fetcher;
use super::ground::GroundRef;
use super::lists::Lister;
use super::route::{self, Answer, Answered, RouteFuture, Want};
use super::search::Searcher;
use crate::call::{Call, tool_error};
use crate::connectors::ask::AskArg;
use crate::connectors::schema::{compact_output, portable};
use crate::connectors::search::{HitsTool, KeywordSearch, ListTool};
use crate::connectors::tool::{ToolFuture, invalid_arguments};
use crate::connectors::{ConnectorSpec, ToolSpec};
use crate::mcp::arguments::Rules;
use crate::mcp::passed::{admits, without_refs};

/// The connector id of `fetch`, `search` and `lists`, served at `/mcp` over every platform.
pub const ALL: &str = "all";

/// What runs a tool.
enum Run {
    /// A connector's tool: its declaration's function.
    Tool(&'static ToolSpec),
    /// `fetch`: the reading tool of the connector whose id it is.
    Fetch(Arc<Fetcher>),
    /// `search`: every connector's keyword search.
    Search(Arc<Searcher>),
    /// `lists`: every connector's reference lists and status.
    Lists(Arc<Lister>),
}

/// One tool, as a call needs to know it.
pub struct ToolEntry {
    /// Its name.
    pub name: &'static str,
    /// The id of the connector it belongs to (`all` for `fetch`, `search` and `lists`,
    /// served at `/mcp`).
    pub connector: &'static str,
    /// The platform it asks; `None` for `fetch`, whose id names it, `search` and `lists`.
    pub platform: Option<PlatformId>,
    /// The rules its arguments are checked by.
    pub rules: Rules,
    /// What `tools/list` says of it: its schemas made portable.
    pub definition: Tool,
    /// The tool `/mcp` lists in its place (`search`, `fetch` or `lists`), which takes its
    /// every argument with the same meaning; `None` for a tool `/mcp` lists.
    pub instead: Option<&'static str>,
    run: Run,
    /// A connector's keyword search tool: its question answered as a listing, and as
    /// the search page's hits.
    list: Option<(ListTool, HitsTool)>,
}

impl ToolEntry {
    /// Runs the tool on `ground` for `call` with `arguments`.
    pub fn run<'a>(&'a self, ground: GroundRef<'a>, call: &'a Call, arguments: JsonObject) -> ToolFuture<'a> {
        match &self.run {
            Run::Tool(spec) => (spec.run)(ground.ctx, call, arguments),
            Run::Fetch(fetcher) => Box::pin(fetcher.run(ground, call, arguments)),
            Run::Search(searcher) => Box::pin(searcher.run(ground, call, arguments)),
            Run::Lists(lister) => Box::pin(lister.run(ground, call, arguments)),
        }
    }

    /// The tool on `ground` for `call` with `arguments`, answering what is `want`ed: its
    /// result, or its question as a listing (a keyword search tool; any other says it
    /// answers none).
    pub fn answer<'a>(
        &'a self,
        ground: GroundRef<'a>,
        call: &'a Call,
        arguments: JsonObject,
        want: Want,
    ) -> RouteFuture<'a, Answered> {
        Box::pin(async move {
            match (want, self.list) {
                (Want::Result, _) => self.run(ground, call, arguments).await.into(),
                (Want::Listing, Some((list, _))) => route::listed(list(ground.ctx, call, arguments).await),
                (Want::Hits, Some((_, hits))) => route::hits(hits(ground.ctx, call, arguments).await),
                (Want::Listing | Want::Hits, None) => Ok(Answer::Result(
                    tool_error(format!("{} is no keyword search: it answers no listing", self.name)).into(),
                )),
                (Want::Document, _) => match &self.run {
                    Run::Tool(ToolSpec { read: Some(read), .. }) => {
                        route::document(read(ground.ctx, call, arguments).await)
                    }
                    _ => Ok(Answer::Result(
                        tool_error(format!("{} is no reading tool: it answers no document", self.name)).into(),
                    )),
                },
            }
        })
    }

    /// Whether a call of it runs as a task for a client that declares the Tasks
    /// extension: `search` (its platforms answer one by one) and every read of a record —
    /// `fetch` and each reading tool —, which may wait on a slow platform or a long file.
    pub fn runs_as_task(&self) -> bool {
        match &self.run {
            Run::Search(_) | Run::Fetch(_) => true,
            Run::Tool(spec) => spec.read.is_some(),
            Run::Lists(_) => false,
        }
    }

    /// Its arguments whose value may name several things, as its connector declares
    /// them (none for `fetch`, `search` and `lists`).
    pub fn asks(&self) -> &'static [AskArg] {
        match &self.run {
            Run::Tool(spec) => spec.asks,
            Run::Fetch(_) | Run::Search(_) | Run::Lists(_) => &[],
        }
    }

    /// The arguments layer's check of `arguments`: numbers sent as strings read as
    /// numbers; arguments outside their schema's bounds are the tool error that says so,
    /// before anything is parsed or asked.
    pub fn admit(&self, arguments: &mut Option<JsonObject>) -> Result<(), CallToolResult> {
        if let Some(arguments) = arguments.as_mut() {
            self.rules.coerce(arguments);
        }
        self.rules
            .check(arguments.as_ref())
            .map_err(|message| tool_error(invalid_arguments(self.name, self.platform, &message)))
    }

    fn new(
        name: &'static str,
        connector: &'static str,
        platform: Option<PlatformId>,
        mut definition: Tool,
        run: Run,
    ) -> ToolEntry {
        assert_eq!(definition.name, name, "a tool's definition names it");
        if let Some(meta) = super::views::tool_meta(name) {
            definition.meta = Some(meta);
        }
        let rules = Rules::of(&definition.input_schema);
        definition.input_schema = Arc::new(portable_copy(&definition.input_schema));
        definition.output_schema = definition.output_schema.map(|s| {
            let mut s = portable_copy(&s);
            compact_output(&mut s);
            Arc::new(s)
        });
        ToolEntry {
            name,
            connector,
            platform,
            rules,
            definition,
            instead: None,
            run,
            list: None,
        }
    }
}

/// Every tool of the registry, by name.
pub struct ToolTable(HashMap<&'static str, ToolEntry, foldhash::fast::RandomState>);

impl ToolTable {
    /// The tools of `connectors`, `fetch` over those that read ids, and `search` over
    /// those that search by words, among the platforms `served` (a `platform:` prefix of
    /// an id names one of them).
    ///
    /// # Panics
    ///
    /// When two tools share a name: a defect of the registry, found by every test that
    /// builds a server.
    pub fn new(connectors: &[&'static ConnectorSpec], served: &[PlatformId]) -> ToolTable {
        let mut tools = HashMap::default();
        let mut add = |entry: ToolEntry| {
            let name = entry.name;
            let earlier = tools.insert(name, entry);
            assert!(earlier.is_none(), "two tools named {name}");
        };
        for &c in connectors {
            let definitions: Vec<Tool> = c.tools.iter().map(|spec| (spec.definition)()).collect();
            // A connector served under another id than its module's (a copy) serves its
            // tools under new names: their definitions, and the references between them.
            let renamed: Vec<(String, &'static str)> = definitions
                .iter()
                .zip(c.tools)
                .filter(|(d, spec)| d.name != spec.name)
                .map(|(d, spec)| (d.name.to_string(), spec.name))
                .collect();
            for (spec, mut definition) in c.tools.iter().zip(definitions) {
                if !renamed.is_empty() {
                    definition.name = spec.name.into();
                    definition.description = definition.description.map(|d| {
                        map_words(&d, |w| {
                            renamed
                                .iter()
                                .find(|(from, _)| from == w)
                                .map(|(_, to)| (*to).to_owned())
                        })
                        .into()
                    });
                }
                let mut entry = ToolEntry::new(spec.name, c.id, Some(c.platform), definition, Run::Tool(spec));
                if let KeywordSearch::Tool(search) = c.search
                    && search.tool.name == spec.name
                {
                    entry.list = Some((search.list, search.hits));
                }
                add(entry);
            }
        }
        if let Some(fetcher) = Fetcher::new(connectors, served) {
            let definition = fetcher.definition();
            add(ToolEntry::new(
                super::fetch::NAME,
                ALL,
                None,
                definition,
                Run::Fetch(Arc::new(fetcher)),
            ));
        }
        if let Some(searcher) = Searcher::new(connectors, served) {
            let definition = searcher.definition();
            add(ToolEntry::new(
                super::search::NAME,
                ALL,
                None,
                definition,
                Run::Search(Arc::new(searcher)),
            ));
        }
        if let Some(lister) = Lister::new(connectors) {
            let definition = lister.definition();
            add(ToolEntry::new(
                super::lists::NAME,
                ALL,
                None,
                definition,
                Run::Lists(Arc::new(lister)),
            ));
        }
        let mut table = ToolTable(tools);
        for (tool, instead) in covered(&table, connectors) {
            if let Some(entry) = table.0.get_mut(tool) {
                entry.instead = Some(instead);
            }
        }
        table
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

/// The platform tools that `search`, `fetch` or `lists` stand in for at `/mcp`, with the
/// one that does: a connector's keyword search whose every argument but its words and its
/// number of results `search` takes, a reading tool `fetch` runs with its paging whose
/// every argument `fetch` takes, and a list whose every argument `lists` takes (each passes
/// every argument on by its name, unchanged).
///
/// The rule `/mcp`'s list keeps: every argument of every platform tool is reachable from
/// it, as the tool listed or as an argument of `search`, `fetch` or `lists`.
fn covered(table: &ToolTable, connectors: &[&'static ConnectorSpec]) -> Vec<(&'static str, &'static str)> {
    let takes = |by: &str, tool: &ToolSpec, own: &[&str]| {
        let Some(by) = table.get(by) else {
            return false;
        };
        // Both as `tools/list` shows them, their references read (an argument of a Rust
        // enum's type).
        let by_schema = without_refs(&by.definition.input_schema);
        let schema = without_refs(&portable_copy(&(tool.definition)().input_schema));
        let names = schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|p| p.keys().cloned().collect::<Vec<_>>());
        names
            .unwrap_or_default()
            .iter()
            .all(|n| own.contains(&n.as_str()) || admits(&by_schema, &schema, n))
    };
    let mut out = Vec::new();
    for c in connectors {
        if let KeywordSearch::Tool(spec) = c.search
            && takes(super::search::NAME, spec.tool, &["query", "limit"])
        {
            out.push((spec.tool.name, super::search::NAME));
        }
        for tool in c.reads.map(|r| r.paged).unwrap_or_default() {
            if takes(super::fetch::NAME, tool, &[]) {
                out.push((tool.name, super::fetch::NAME));
            }
        }
        for tool in c.lists {
            if takes(super::lists::NAME, tool, &[]) {
                out.push((tool.name, super::lists::NAME));
            }
        }
    }
    out
}

/// `text` with each whole name (letters, digits, `_`: `tk_search` is not a part of
/// `opentk_search`) that `map` maps replaced.
pub fn map_words(text: &str, map: impl Fn(&str) -> Option<String>) -> String {
    let is_name = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(is_name) {
        out.push_str(&rest[..start]);
        let word_len = rest[start..].find(|c: char| !is_name(c)).unwrap_or(rest.len() - start);
        let word = &rest[start..start + word_len];
        match map(word) {
            Some(new) => out.push_str(&new),
            None => out.push_str(word),
        }
        rest = &rest[start + word_len..];
    }
    out.push_str(rest);
    out
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
        let table = ToolTable::new(&CONNECTORS.iter().collect::<Vec<_>>(), &crate::connectors::platforms());
        let mut listed = 0;
        for c in CONNECTORS {
            for tool in c.tools {
                listed += 1;
                let entry = table.get(tool.name).expect("in the table");
                assert_eq!(
                    (entry.name, entry.connector, entry.platform),
                    (tool.name, c.id, Some(c.platform))
                );
                assert_eq!(entry.definition.name, tool.name);
            }
        }
        assert_eq!(
            table.iter().count(),
            listed + 3,
            "no two tools share a name; and fetch, search and lists"
        );
        for tool in ["fetch", "search", "lists"] {
            assert_eq!(table.get(tool).map(|f| (f.connector, f.platform)), Some(("all", None)));
        }
        assert!(table.get("no_such_tool").is_none());
    }

    #[test]
    fn search_and_every_read_of_a_record_run_as_tasks() {
        let table = ToolTable::new(&CONNECTORS.iter().collect::<Vec<_>>(), &crate::connectors::platforms());
        let tasks = |name: &str| table.get(name).is_some_and(ToolEntry::runs_as_task);
        assert!(tasks("search") && tasks("fetch") && !tasks("lists"));
        // Every tool `fetch` reads with runs as one; no search or list tool does.
        for c in CONNECTORS {
            for reader in c.reads.into_iter().flat_map(|r| r.paged) {
                assert!(tasks(reader.name), "{} reads a record", reader.name);
            }
        }
        for tool in [
            "obv_search",
            "cvdr_search",
            "obv_sources",
            "rechtspraak_courts",
            "tk_search",
        ] {
            assert!(!tasks(tool), "{tool} reads no one record");
        }
    }
}
