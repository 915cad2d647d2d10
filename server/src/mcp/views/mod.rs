//! Views (MCP Apps, the `io.modelcontextprotocol/ui` extension): an HTML page a host
//! renders for a tool's result, so a person looks at a vote, a debate, a regulation or a
//! `search` instead of reading it as prose.
//!
//! Each view is a `ui://besluitbron/<view>` resource (`text/html;profile=mcp-app`) that a
//! tool names in its `_meta.ui.resourceUri`; the host reads it once, renders it in a
//! sandboxed frame and hands it each result of that tool (content and structured
//! content, the same result every client gets). The view draws from the structured
//! content, shows the text content where the structured content leaves the text to it
//! (a transcript's or a regulation's page of text), and shows the text as it is when a
//! result has no structured content (an error). Its buttons call tools through the host
//! (`tools/call` over the host's bridge), never the network: a host that renders no views
//! sees nothing new, as every result is unchanged.
//!
//! **Self-contained, strict CSP.** A page is put together once, at first use, from
//! committed files beside this one: `page.html` (the frame), `style.css`, `bridge.js`
//! (the view side of the host bridge, hand-written: JSON-RPC over `postMessage`), `ui.js`
//! (what every view shares) and the view's own script. Its Content-Security-Policy
//! allows nothing but its own inline script and style, by their SHA-256: no network,
//! no other script, no inline handlers. Every platform string is put in as text
//! (`textContent`), never as markup.
//!
//! What this module does not do: decide what a tool answers, or talk to a platform.

use std::sync::LazyLock;

use base64::Engine as _;
use rmcp::model::{
    CacheScope, ExtensionCapabilities, JsonObject, MetaObject, ReadResourceResult, Resource, ResourceContents,
    ServerCapabilities,
};
use serde_json::json;
use sha2::{Digest, Sha256};

/// The extension's identifier in `capabilities.extensions`.
pub const EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of a view.
pub const MIME: &str = "text/html;profile=mcp-app";

/// How long a host may keep a view it read: a page changes only with a release (an hour,
/// as long as a tool list).
const VIEW_TTL_MS: u64 = 3_600_000;

/// One view.
pub struct View {
    /// Its name: the last segment of its URI.
    pub name: &'static str,
    /// Its title.
    pub title: &'static str,
    /// What it shows.
    pub description: &'static str,
    /// The tools whose results it shows.
    pub tools: &'static [&'static str],
    /// Its own script.
    script: &'static str,
    /// The views whose drawing it reuses (`fetch`'s draws each answer as its reading
    /// tool's view does).
    draws: &'static [&'static str],
}

impl View {
    /// Its URI: `ui://besluitbron/<name>`.
    pub fn uri(&self) -> String {
        format!("ui://besluitbron/{}", self.name)
    }

    /// Whether it draws what the view `name` draws: it is that view, or reuses its drawing.
    pub fn draws_view(&self, name: &str) -> bool {
        self.name == name || self.draws.contains(&name)
    }
}

/// Every view.
pub const VIEWS: [View; 5] = [
    View {
        name: "vote",
        title: "A vote",
        description: "A vote of the Tweede Kamer: the outcome, each faction for or against with its seats, and a \
                      roll call by member (tk_votes)",
        tools: &["tk_votes"],
        script: include_str!("vote.js"),
        draws: &[],
    },
    View {
        name: "debate",
        title: "A debate",
        description: "A debate's transcript: its speakers with their faction, turns and interruptions, filtered by \
                      speaker or party (tk_debate)",
        tools: &["tk_debate"],
        script: include_str!("debate.js"),
        draws: &[],
    },
    View {
        name: "regulation",
        title: "A regulation",
        description: "A law or regulation as in force on a day: its outline to navigate and the text of an article \
                      (bwb_read, cvdr_read)",
        tools: &["bwb_read", "cvdr_read"],
        script: include_str!("regulation.js"),
        draws: &[],
    },
    View {
        name: "search",
        title: "Search results",
        description: "search's results per platform, each record opened with fetch",
        tools: &["search"],
        script: include_str!("search.js"),
        draws: &[],
    },
    View {
        name: "read",
        title: "A record",
        description: "fetch's record, shown as its reading tool's view shows it (a vote, a debate, a regulation), \
                      else its title, facts and text; read on through fetch",
        tools: &["fetch"],
        script: include_str!("read.js"),
        draws: &["vote", "debate", "regulation"],
    },
];

const PAGE: &str = include_str!("page.html");
const STYLE: &str = include_str!("style.css");
const BRIDGE: &str = include_str!("bridge.js");
const SHARED: &str = include_str!("ui.js");

/// The view of `tool`'s results, if it has one.
pub fn of_tool(tool: &str) -> Option<&'static View> {
    VIEWS.iter().find(|v| v.tools.contains(&tool))
}

/// What a tool with a view carries in its `_meta`: `{"ui":{"resourceUri":…}}`.
pub fn tool_meta(tool: &str) -> Option<MetaObject> {
    let view = of_tool(tool)?;
    let mut meta = JsonObject::new();
    meta.insert("ui".into(), json!({"resourceUri": view.uri()}));
    Some(MetaObject(meta))
}

/// Declares the extension in `capabilities`, with the one MIME type its views have.
pub fn declare(capabilities: &mut ServerCapabilities) {
    let mut settings = JsonObject::new();
    settings.insert("mimeTypes".into(), json!([MIME]));
    capabilities
        .extensions
        .get_or_insert_with(ExtensionCapabilities::new)
        .insert(EXTENSION.to_owned(), settings);
}

/// The views of the tools `served` (a view is listed where one of its tools is).
pub fn resources(served: &[&str]) -> Vec<Resource> {
    VIEWS
        .iter()
        .filter(|v| v.tools.iter().any(|t| served.contains(t)))
        .map(|v| {
            Resource::new(v.uri(), v.name)
                .with_title(v.title)
                .with_description(v.description)
                .with_mime_type(MIME)
        })
        .collect()
}

/// The view at `uri`, read; `None` for a URI that names no view.
pub fn read(uri: &str) -> Option<ReadResourceResult> {
    let at = VIEWS.iter().position(|v| v.uri() == uri)?;
    let mut meta = JsonObject::new();
    // No domain at all: the page fetches nothing and loads nothing.
    meta.insert(
        "ui".into(),
        json!({"csp": {"connectDomains": [], "resourceDomains": []}, "prefersBorder": true}),
    );
    let contents = ResourceContents::text(PAGES[at].clone(), uri)
        .with_mime_type(MIME)
        .with_meta(MetaObject(meta));
    Some(
        ReadResourceResult::new(vec![contents])
            .with_ttl_ms(VIEW_TTL_MS)
            .with_cache_scope(CacheScope::Public),
    )
}

/// Every view's page, in the order of [`VIEWS`].
static PAGES: LazyLock<Vec<String>> = LazyLock::new(|| VIEWS.iter().map(page).collect());

/// `view`'s page: the frame with the style and the scripts put in, and a policy that
/// allows exactly those. A view that reuses others' drawing has their scripts too, and
/// `READ_VIEWS`: which of them draws which tool's result.
fn page(view: &View) -> String {
    let mut parts: Vec<String> = vec![BRIDGE.to_owned(), SHARED.to_owned()];
    let mut by_tool = serde_json::Map::new();
    for drawn in VIEWS.iter().filter(|v| view.draws.contains(&v.name)) {
        parts.push(drawn.script.to_owned());
        for tool in drawn.tools {
            by_tool.insert((*tool).to_owned(), drawn.name.into());
        }
    }
    if view.draws.is_empty() {
        parts.push(view.script.to_owned());
        parts.push(format!("Run({0:?}, Renderers[{0:?}]);", view.name));
    } else {
        parts.push(format!("const READ_VIEWS = {};", serde_json::Value::Object(by_tool)));
        parts.push(view.script.to_owned());
    }
    let script = parts.join("\n");
    let policy = format!(
        "default-src 'none'; script-src '{}'; style-src '{}'; img-src data:; base-uri 'none'; form-action 'none'",
        hash(&script),
        hash(STYLE)
    );
    PAGE.replacen("{{policy}}", &policy, 1)
        .replacen("{{title}}", view.title, 1)
        .replacen("{{style}}", STYLE, 1)
        .replacen("{{script}}", &script, 1)
}

/// A CSP source for `text`: `sha256-<base64>`.
fn hash(text: &str) -> String {
    let digest = Sha256::digest(text.as_bytes());
    format!("sha256-{}", base64::engine::general_purpose::STANDARD.encode(digest))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_page_allows_only_its_own_script_and_style() {
        for (view, page) in VIEWS.iter().zip(PAGES.iter()) {
            assert!(!page.contains("{{"), "{}: every slot filled", view.name);
            let between = |open: &str, close: &str| {
                let start = page.find(open).expect(open) + open.len();
                page[start..start + page[start..].find(close).expect(close)].to_owned()
            };
            let script = between("<script>", "</script>");
            let style = between("<style>", "</style>");
            assert_eq!(page.matches("<script").count(), 1, "{}: one script", view.name);
            assert!(
                page.contains(&format!("script-src '{}'", hash(&script))),
                "{}",
                view.name
            );
            assert!(page.contains(&format!("style-src '{}'", hash(&style))), "{}", view.name);
            assert!(page.contains("default-src 'none'"));
            // Markup is never made from strings: no innerHTML, no inline handler.
            for bad in [
                "innerHTML",
                "outerHTML",
                "insertAdjacentHTML",
                "document.write",
                "eval(",
                " onclick=",
            ] {
                assert!(!script.contains(bad), "{}: {bad}", view.name);
            }
        }
    }

    #[test]
    fn tools_name_their_view_and_a_view_is_read_by_its_uri() {
        let meta = tool_meta("tk_votes").expect("a view");
        assert_eq!(
            serde_json::to_value(&meta).unwrap(),
            json!({"ui": {"resourceUri": "ui://besluitbron/vote"}})
        );
        assert!(tool_meta("tk_search").is_none());
        let read = read("ui://besluitbron/regulation").expect("a view");
        let v = serde_json::to_value(&read).unwrap();
        assert_eq!(v["contents"][0]["mimeType"], MIME);
        assert!(
            v["contents"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("<!doctype html>")
        );
        assert!(read_none("ui://besluitbron/nope"));
        assert_eq!(resources(&["tk_votes", "search"]).len(), 2);
        // `fetch`'s view draws with the vote, debate and regulation views, by tool.
        let fetched = &PAGES[VIEWS.iter().position(|v| v.name == "read").expect("fetch's view")];
        for drawn in [
            "Renderers[view]",
            "View(\"vote\"",
            "View(\"regulation\"",
            "\"bwb_read\":\"regulation\"",
        ] {
            assert!(fetched.contains(drawn), "{drawn}");
        }
        assert!(!fetched.contains("Run(\"vote\""), "only fetch's own view runs");
    }

    fn read_none(uri: &str) -> bool {
        read(uri).is_none()
    }
}
