//! The surface at twenty platforms: the registry's connectors and renamed copies of them
//! (their whole tool sets, their keyword searches, id readers and lists, under new ids and
//! tool names) up to twenty, with an MCP Apps view link (`_meta.ui.resourceUri`) on the
//! tools that get views. Every address's instructions stay within
//! [`MAX_INSTRUCTIONS_CHARS`]; every copy is served whole and `search` and `lists` may ask
//! each; `/mcp`'s `tools/list` stays within 48 KiB at twenty platforms. Each address's list
//! size and `/mcp`'s tools' sizes are printed.
//!
//! `/mcp` lists per platform its questions that are no keyword search, no read and no
//! reference list or status (`search`, `fetch` and `lists` stand in for those, `fetch` with
//! the readers' own arguments and a view that draws each reader's answer as its view does):
//! the Kamer's votes, meetings and a document's metadata, Rechtspraak's search by filters
//! (no words: `search` cannot ask it), OpenTK's activity, ORI's search. No view is lost: a
//! tool with a view is listed with it, or read through `fetch`, whose view draws it.

use rmcp::model::{CacheScope, ListToolsResult, Tool};
use serde_json::json;

use super::listing::{self, MAX_INSTRUCTIONS_CHARS};
use super::tools::ToolTable;
use super::{LIST_TTL_MS, Scope};
use crate::connectors::ids::IdReader;
use crate::connectors::search::{KeywordSearch, SearchSpec};
use crate::connectors::{CONNECTORS, ConnectorSpec, ToolSpec};
use besluitbron_core::{Platform, PlatformId};

/// The most `/mcp`'s `tools/list` result may take over all its pages, as compact JSON.
const LIST_BUDGET_BYTES: usize = 48 * 1024;

/// The tools that get a view (by their name in the registry), with their view: the views
/// of MCP Apps BesluitBron serves (`ui://besluitbron/<view>`).
const VIEWED: [(&str, &str); 6] = [
    ("tk_votes", "vote"),
    ("tk_debate", "debate"),
    ("bwb_read", "regulation"),
    ("cvdr_read", "regulation"),
    ("search", "search"),
    ("fetch", "read"),
];

fn leak<T>(value: T) -> &'static T {
    Box::leak(Box::new(value))
}

fn leak_str(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// `base` served as `id`: its tools named `<id>_…`, its platform `<name> <n>`.
fn copy(base: &'static ConnectorSpec, id: &'static str, n: usize) -> &'static ConnectorSpec {
    let rename = |name: &str| {
        let rest = name.strip_prefix(base.id).unwrap_or(name).trim_start_matches('_');
        leak_str(format!("{id}_{rest}"))
    };
    let tools: &'static [ToolSpec] = Box::leak(
        base.tools
            .iter()
            .map(|t| ToolSpec {
                name: rename(t.name),
                definition: t.definition,
                run: t.run,
                read: t.read,
                asks: t.asks,
            })
            .collect::<Vec<_>>()
            .into_boxed_slice(),
    );
    let same = |spec: &ToolSpec| -> &'static ToolSpec {
        let name = rename(spec.name);
        tools.iter().find(|t| t.name == name).expect("a tool of the copy")
    };
    let search = match base.search {
        KeywordSearch::Tool(spec) => KeywordSearch::Tool(leak(SearchSpec {
            tool: same(spec.tool),
            arguments: spec.arguments,
            list: spec.list,
            hits: spec.hits,
        })),
        without => without,
    };
    let reads = base.reads.map(|r| {
        let paged: Vec<&'static ToolSpec> = r.paged.iter().map(|t| same(t)).collect();
        leak(IdReader {
            forms: r.forms,
            public_pages: r.public_pages,
            paged: Box::leak(paged.into_boxed_slice()),
            read: r.read,
        })
    });
    let lists: Vec<&'static ToolSpec> = base.lists.iter().map(|t| same(t)).collect();
    let platform = PlatformId::of(leak(Platform {
        id,
        name: leak_str(format!("{} {n}", base.platform.display_name())),
    }));
    leak(ConnectorSpec {
        id,
        platform,
        defaults: base.defaults,
        instructions: base.instructions,
        guide: base.guide,
        tools,
        open: base.open,
        maintenance: base.maintenance,
        samples: base.samples,
        offers: base.offers,
        page: base.page,
        status: base.status,
        search,
        reads,
        lists: Box::leak(lists.into_boxed_slice()),
    })
}

/// The registry's connectors, then copies of them in turn, `count` in all.
fn registry_of(count: usize) -> Vec<&'static ConnectorSpec> {
    (0..count)
        .map(|i| {
            let base = &CONNECTORS[i % CONNECTORS.len()];
            match i / CONNECTORS.len() {
                0 => base,
                round => copy(base, leak_str(format!("{}{}", base.id, round + 1)), round + 1),
            }
        })
        .collect()
}

/// The registry's name of `tool` (a copy's original: `tk2_votes` is `tk_votes`).
fn original(tool: &str) -> String {
    match tool.split_once('_') {
        Some((id, rest)) => format!("{}_{rest}", id.trim_end_matches(|c: char| c.is_ascii_digit())),
        None => tool.to_owned(),
    }
}

/// `tools` with a view link on each tool that gets a view (a copy's as its original's:
/// `tk2_votes` as `tk_votes`).
fn with_views(mut tools: Vec<Tool>) -> Vec<Tool> {
    for tool in &mut tools {
        let original = original(&tool.name);
        if let Some((_, view)) = VIEWED.iter().find(|(tool, _)| *tool == original) {
            let meta = json!({"ui": {"resourceUri": format!("ui://besluitbron/{view}")}});
            tool.meta = Some(serde_json::from_value(meta).expect("a _meta object"));
        }
    }
    tools
}

/// The size of a `tools/list` result as the handler answers it, as compact JSON.
fn list_bytes(tools: Vec<Tool>) -> usize {
    let result = ListToolsResult::with_all_items(tools)
        .with_ttl_ms(LIST_TTL_MS)
        .with_cache_scope(CacheScope::Public);
    serde_json::to_string(&result).expect("JSON").len()
}

/// Every address's `tools/list` size and instructions length over `registry`, printed;
/// `/mcp`'s list size returned.
fn measure(registry: &[&'static ConnectorSpec]) -> usize {
    let table = ToolTable::new(registry, &registry.iter().map(|c| c.platform).collect::<Vec<_>>());
    let ids: Vec<&str> = registry.iter().map(|c| c.id).collect();
    let all = with_views(listing::tools(&table, Scope::All, &[]));
    let sizes: Vec<String> = all
        .iter()
        .map(|t| {
            format!(
                "{} {} (d {} i {} o {})",
                t.name,
                serde_json::to_string(t).map_or(0, |j| j.len()),
                t.description.as_deref().map_or(0, str::len),
                serde_json::to_string(&t.input_schema).map_or(0, |j| j.len()),
                serde_json::to_string(&t.output_schema).map_or(0, |j| j.len()),
            )
        })
        .collect();
    let (count, bytes) = (all.len(), list_bytes(all));
    eprintln!("/mcp's tools: {}", sizes.join(", "));
    let every = list_bytes(with_views(listing::tools(&table, Scope::All, &ids)));
    eprintln!(
        "{} platforms: /mcp {count} tools {bytes} bytes; ?toolsets=all {every} bytes",
        registry.len()
    );
    let scopes = std::iter::once(Scope::All).chain(registry.iter().map(|c| Scope::One(c)));
    for scope in scopes {
        let instructions = listing::instructions(&table, registry, scope);
        let chars = instructions.chars().count();
        let own = list_bytes(with_views(listing::tools(&table, scope, &[])));
        eprintln!("  {}: tools/list {own} bytes, instructions {chars} chars", scope.id());
        assert!(
            chars <= MAX_INSTRUCTIONS_CHARS,
            "{} platforms, {}: {chars} characters: {instructions}",
            registry.len(),
            scope.id()
        );
    }
    bytes
}

#[test]
fn twenty_platforms_are_served_and_every_addresss_instructions_fit() {
    let today = measure(&registry_of(CONNECTORS.len()));
    assert!(today <= LIST_BUDGET_BYTES, "/mcp's tools/list takes {today} bytes");
    let registry = registry_of(20);
    assert_eq!(registry.len(), 20);
    let table = ToolTable::new(&registry, &registry.iter().map(|c| c.platform).collect::<Vec<_>>());
    assert_eq!(
        table.iter().count(),
        registry.iter().map(|c| c.tools.len()).sum::<usize>() + 3,
        "every copy's whole tool set is served, and search, fetch and lists"
    );
    let listed = with_views(listing::tools(&table, Scope::All, &[]));
    // A tool with a view is listed with its link, or read through `fetch`, whose own view
    // draws its answers as the tool's view does: no view is lost at `/mcp`.
    for entry in table.iter() {
        let Some((_, view)) = VIEWED.iter().find(|(tool, _)| *tool == original(entry.name)) else {
            continue;
        };
        let shown = listed.iter().find(|t| t.name == entry.name);
        match (shown, entry.instead) {
            (Some(t), _) => assert!(t.meta.is_some(), "{}: listed with its view", entry.name),
            (None, Some(super::fetch::NAME)) => assert!(
                super::views::VIEWS
                    .iter()
                    .any(|v| v.tools.contains(&super::fetch::NAME) && v.draws_view(view)),
                "{}: fetch's view draws the {view} view",
                entry.name
            ),
            (None, instead) => panic!("{}: not listed, and {instead:?} stands in without its view", entry.name),
        }
    }
    for c in &registry {
        let asked = listed.iter().find(|t| t.name == "search").and_then(|t| {
            let platforms = &t.input_schema.get("properties")?["platforms"]["items"]["enum"];
            Some(platforms.as_array()?.contains(&json!(c.id)))
        });
        assert_eq!(asked, Some(true), "{}: `search` may be asked to ask it", c.id);
    }
    for c in registry.iter().filter(|c| !c.lists.is_empty()) {
        let asked = listed.iter().find(|t| t.name == "lists").and_then(|t| {
            let platforms = &t.input_schema.get("properties")?["platform"]["enum"];
            Some(platforms.as_array()?.contains(&json!(c.id)))
        });
        assert_eq!(asked, Some(true), "{}: `lists` may be asked for its lists", c.id);
    }
    let twenty = measure(&registry);
    assert!(today < twenty, "the copies are listed: {today} against {twenty}");
    assert!(
        twenty <= LIST_BUDGET_BYTES,
        "/mcp's tools/list takes {twenty} bytes at twenty platforms"
    );
}
