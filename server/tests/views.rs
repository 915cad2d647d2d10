//! The views (MCP Apps) in a real headless Chromium, inside a host page built on the
//! official host bridge (npm `@modelcontextprotocol/ext-apps`: `AppBridge` over
//! `PostMessageTransport`; `scripts/views-host` installs and bundles it, tests/views/).
//! For each view: the host finds it in tools/list (`_meta.ui.resourceUri`), reads it,
//! renders it sandboxed with the tool's real result from the fake platforms; the view
//! draws it, and a button in it calls a tool through the host, whose answer it draws.
//! A result carrying hostile strings is shown as text, never as markup. Screenshots go
//! to `target/browser/view-*.png`. Every step waits on a condition, never a sleep.
//!
//! Besides the browser: the extension is declared (initialize and server/discover), the
//! views are listed and read as resources, and the tools that have one name it.

use crate::browser::{Driver, shots};
use crate::support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use axum::http::{HeaderMap, StatusCode};
use besluitbron_fakes::tk::{MOTION_NUMBER, VOTES_WORD};
use fantoccini::{Client, Locator};
use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, temp_dir};

/// How long any one condition may take.
const WAIT: Duration = Duration::from_secs(30);

/// A string a platform might send to hurt a page that shows it as markup.
const HOSTILE: &str = "<img src=x onerror=\"window.pwned=1\"><script>window.pwned=2</script>";

/// The bundled host page's script: `scripts/views-host` installs the bridge and bundles.
fn host_script() -> String {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..");
    let status = std::process::Command::new(root.join("scripts/views-host"))
        .status()
        .expect("scripts/views-host runs (it needs npm)");
    assert!(status.success(), "scripts/views-host failed");
    std::fs::read_to_string(root.join("tests/views/node_modules/.besluitbron/host.js")).expect("the bundled host")
}

/// Serves the host page and its script, and forwards `/mcp` to `server` (so the page
/// reaches the server on its own origin). Answers with the address it listens on.
async fn host(server: &Server) -> SocketAddr {
    let page = include_str!("../../tests/views/host.html");
    let script = host_script();
    // Every platform's whole tool set: the views of the readers `fetch` stands in for at
    // `/mcp` are shown for those tools too.
    let target = server.url("/mcp?toolsets=all");
    let http = reqwest::Client::new();
    let forward = move |headers: HeaderMap, body: axum::body::Bytes| {
        let (http, target) = (http.clone(), target.clone());
        async move {
            let mut request = http.post(&target).body(body);
            for name in [
                "content-type",
                "accept",
                "mcp-protocol-version",
                "mcp-method",
                "mcp-name",
            ] {
                if let Some(v) = headers.get(name) {
                    request = request.header(name, v);
                }
            }
            let answer = request.send().await.expect("the server answers");
            let status = StatusCode::from_u16(answer.status().as_u16()).expect("a status");
            let kind = answer
                .headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok())
                .unwrap_or("application/json")
                .to_owned();
            let bytes = answer.bytes().await.expect("the answer's body");
            (status, [("content-type", kind)], bytes)
        }
    };
    let app = axum::Router::new()
        .route(
            "/",
            axum::routing::get(move || async move { axum::response::Html(page) }),
        )
        .route(
            "/host.js",
            axum::routing::get(move || {
                let script = script.clone();
                async move { ([("content-type", "text/javascript")], script) }
            }),
        )
        .route("/mcp", axum::routing::post(forward));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// Renders `tool`'s view for `args` in the host page (with the result `given`, else the
/// server's), then enters its frame.
async fn show(c: &Client, tool: &str, args: Value, given: Option<Value>) -> Value {
    c.enter_parent_frame().await.expect("the host page");
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css("#views"))
        .await
        .expect("the host page");
    let deadline = tokio::time::Instant::now() + WAIT;
    let ready = "return typeof window.showView === 'function'";
    while c.execute(ready, vec![]).await.expect("the host page") != json!(true) {
        assert!(tokio::time::Instant::now() < deadline, "the host's script did not load");
        tokio::task::yield_now().await;
    }
    let shown = c
        .execute_async(
            "const [tool, args, given, done] = arguments;
             window.showView(tool, args, given).then((r) => done({ok: r}), (e) => done({err: String(e)}));",
            vec![json!(tool), args, given.unwrap_or(Value::Null)],
        )
        .await
        .expect("showView");
    assert!(shown.get("err").is_none(), "{tool}: {shown}");
    c.enter_frame(0).await.expect("the view's frame");
    shown["ok"].clone()
}

/// Waits for `css` in the current frame.
async fn find(c: &Client, css: &str) -> fantoccini::elements::Element {
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css(css))
        .await
        .unwrap_or_else(|e| panic!("{css}: {e}"))
}

/// The text of every element `css` matches in the current frame.
async fn texts(c: &Client, css: &str) -> Vec<String> {
    let v = c
        .execute(
            "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent)",
            vec![json!(css)],
        )
        .await
        .expect("texts");
    serde_json::from_value(v).expect("strings")
}

/// The tools the view called through the host (read in the host page; back in the view's
/// frame after).
async fn host_calls(c: &Client) -> Vec<Value> {
    c.enter_parent_frame().await.expect("the host page");
    let calls = c.execute("return window.hostCalls", vec![]).await.expect("hostCalls");
    c.enter_frame(0).await.expect("the view's frame");
    calls.as_array().cloned().unwrap_or_default()
}

/// Waits until the view has called `tool` through the host with `wanted` among its arguments.
async fn wait_for_call(c: &Client, tool: &str, wanted: (&str, Value)) {
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let calls = host_calls(c).await;
        if calls
            .iter()
            .any(|call| call["name"] == tool && call["arguments"][wanted.0] == wanted.1)
        {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "no {tool} call with {wanted:?}: {calls:?}"
        );
        tokio::task::yield_now().await;
    }
}

/// Waits until `script` (in the current frame) returns true.
async fn until(c: &Client, script: &str) {
    let script = script.to_owned();
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css("main"))
        .await
        .expect("a page");
    let deadline = tokio::time::Instant::now() + WAIT;
    while c.execute(&script, vec![]).await.expect("a condition") != json!(true) {
        assert!(tokio::time::Instant::now() < deadline, "never true: {script}");
        tokio::task::yield_now().await;
    }
}

async fn shot(c: &Client, name: &str) {
    c.enter_parent_frame().await.expect("the host page");
    let png = c.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(shots().join(format!("view-{name}.png")), png).expect("write screenshot");
    c.enter_frame(0).await.expect("the view's frame");
}

#[tokio::test]
async fn every_view_renders_calls_a_tool_through_the_official_host_bridge_and_escapes_hostile_strings() {
    let fakes = fakes().await;
    let dir = temp_dir("views");
    let server = Server::start(config(&fakes, &dir)).await;
    let at = host(&server).await;
    let driver = Driver::start().await;
    let c = driver.browser().await;
    c.goto(&format!("http://{at}/")).await.expect("the host page");

    vote(&c).await;
    hostile_vote(&c, &server).await;
    debate(&c).await;
    regulation(&c).await;
    search(&c).await;
    fetched_vote(&c).await;
    fetched_regulation(&c).await;

    c.close().await.expect("close the browser");
    drop(driver);
    server.stop().await;
}

/// tk_votes: the decisions of the word's cases, each faction's vote with its seats; one
/// case asked through the host; its roll call by member, filtered by name.
async fn vote(c: &Client) {
    let shown = show(c, "tk_votes", json!({"query": VOTES_WORD}), None).await;
    assert_eq!(shown["uri"], "ui://besluitbron/vote");
    assert_eq!(shown["meta"]["ui"]["csp"]["connectDomains"], json!([]));
    find(c, "section.decision").await;
    assert!(texts(c, "section.decision").await.len() > 1, "several decisions");
    shot(c, "vote-list").await;
    // One case: through the host, its decisions in full.
    let target = c
        .execute(
            "const b = [...document.querySelectorAll('section.decision')].find((s) => s.textContent.includes(arguments[0]));
             b.querySelector('.open-case').click(); return true;",
            vec![json!(MOTION_NUMBER)],
        )
        .await
        .expect("open the motion");
    assert_eq!(target, json!(true));
    wait_for_call(c, "tk_votes", ("id", json!(MOTION_NUMBER))).await;
    until(c, "return !!document.querySelector('.member-filter')").await;
    let factions = texts(c, "table.factions tbody tr td:first-child").await;
    assert!(factions.len() > 3, "factions: {factions:?}");
    let seats = texts(c, "table.factions tbody tr td:nth-child(2)").await;
    assert!(
        seats.iter().any(|s| s.parse::<u32>().is_ok_and(|n| n > 0)),
        "seats: {seats:?}"
    );
    let members = texts(c, "li.member").await;
    assert!(members.len() > 20, "a roll call by member: {}", members.len());
    let outcomes = texts(c, ".badge.outcome").await;
    assert!(outcomes.iter().any(|o| o == "Aangenomen"), "{outcomes:?}");
    // The name filter keeps the members whose name has the words.
    let first = members[0].clone();
    let filter = c.find(Locator::Css(".member-filter")).await.expect("the filter");
    filter.send_keys(&first).await.expect("type a name");
    until(c, "return document.querySelectorAll('li.member').length < 10").await;
    assert!(texts(c, "li.member").await.iter().all(|m| m.contains(&first)));
    filter.clear().await.expect("clear the filter");
    filter.send_keys(" ").await.expect("show all again");
    until(c, "return document.querySelectorAll('li.member').length > 20").await;
    shot(c, "vote").await;
}

/// The roll call with a member, a faction and a title a platform made hostile: shown as
/// the very text, no element made of it, nothing run.
async fn hostile_vote(c: &Client, server: &Server) {
    let mut mcp = Mcp::modern(server.url("/mcp"));
    let reply = mcp.call("tk_votes", json!({"id": MOTION_NUMBER})).await;
    let mut result = reply.message.expect("an answer")["result"].clone();
    let shown = &mut result["structuredContent"];
    let roll = shown["results"]
        .as_array_mut()
        .expect("results")
        .iter_mut()
        .find(|r| r["roll_call"] == true)
        .expect("a roll call");
    roll["title"] = json!(HOSTILE);
    roll["url"] = json!("javascript:window.pwned=3");
    roll["factions"][0]["faction"] = json!(HOSTILE);
    roll["members"][0]["names"][0] = json!(HOSTILE);
    roll["members"][0]["faction"] = json!(HOSTILE);
    show(c, "tk_votes", json!({"id": MOTION_NUMBER}), Some(result)).await;
    find(c, "li.member").await;
    assert!(texts(c, "li.member").await.contains(&HOSTILE.to_owned()));
    assert!(texts(c, "h2").await.contains(&HOSTILE.to_owned()));
    let harm = c
        .execute(
            "return [document.querySelectorAll('img, script:not(:first-of-type)').length,
                     document.querySelectorAll('a[href^=\"javascript\"]').length, window.pwned === undefined]",
            vec![],
        )
        .await
        .expect("harm");
    assert_eq!(harm, json!([0, 0, true]), "no element made of a string, nothing run");
    shot(c, "vote-hostile").await;
}

/// tk_debate: speakers with their faction, turns and interruptions; a speaker chosen
/// filters through the host (tk_debate's `speaker`).
async fn debate(c: &Client) {
    let (_, meeting, _) = besluitbron_fakes::tk::REPORTS
        .iter()
        .find(|(_, _, r)| *r == "fb28c35e-af8d-49ee-8905-ad41eb41e4de")
        .expect("the MIVD debate");
    let id = format!("vergadering:{meeting}");
    let shown = show(c, "tk_debate", json!({"id": id, "length": 40_000}), None).await;
    assert_eq!(shown["uri"], "ui://besluitbron/debate");
    find(c, ".turn.speech").await;
    shot(c, "debate").await;
    assert!(
        !texts(c, ".turn.interruption").await.is_empty(),
        "interruptions set apart"
    );
    let speakers = texts(c, "table.speakers button.speaker").await;
    assert!(speakers.len() > 1, "{speakers:?}");
    let parties = texts(c, "table.speakers button.party").await;
    assert!(!parties.is_empty(), "speakers with their faction");
    let chosen = speakers[0].clone();
    c.find(Locator::Css("table.speakers button.speaker"))
        .await
        .expect("a speaker")
        .click()
        .await
        .expect("choose a speaker");
    wait_for_call(c, "tk_debate", ("speaker", json!(chosen))).await;
    until(c, "return !!document.querySelector('button.clear')").await;
    let speeches = texts(c, ".turn.speech .who").await;
    assert!(
        speeches.iter().all(|w| w.contains(&chosen)),
        "only {chosen}'s speeches: {speeches:?}"
    );
    let turns = texts(c, ".turn .who").await;
    assert!(turns.iter().any(|w| w.contains(&chosen)), "{chosen}'s turns: {turns:?}");
    shot(c, "debate-speaker").await;
}

/// bwb_read: the outline, an article opened through the host, the day it is in force on.
async fn regulation(c: &Client) {
    let law = besluitbron_fakes::bwb::FIREWORKS_LAW;
    let shown = show(c, "bwb_read", json!({"id": law, "date": "2025-08-01"}), None).await;
    assert_eq!(shown["uri"], "ui://besluitbron/regulation");
    let article = find(c, "nav.outline button.article").await;
    let number = article
        .attr("data-article")
        .await
        .expect("attr")
        .expect("an article number");
    assert!(texts(c, ".validity").await[0].contains("2025-08-01"), "as in force on");
    article.click().await.expect("open the article");
    wait_for_call(c, "bwb_read", ("article", json!(number))).await;
    let heading = format!("Artikel {number}");
    until(
        c,
        &format!("return [...document.querySelectorAll('h2')].some((h) => h.textContent === {heading:?})"),
    )
    .await;
    let text = texts(c, ".regulation-text").await;
    assert!(!text[0].trim().is_empty(), "the article's text");
    shot(c, "regulation").await;
}

/// search: results per platform; a record opened with fetch through the host.
async fn search(c: &Client) {
    let shown = show(c, "search", json!({"query": "stikstof"}), None).await;
    assert_eq!(shown["uri"], "ui://besluitbron/search");
    find(c, "section.platform").await;
    shot(c, "search-results").await;
    find(c, "section.platform li.record").await;
    let platforms = texts(c, "section.platform h2").await;
    assert!(platforms.len() > 1, "per platform: {platforms:?}");
    let id = c
        .execute("return document.querySelector('li.record').dataset.id", vec![])
        .await
        .expect("an id");
    c.find(Locator::Css("li.record button.open"))
        .await
        .expect("a record")
        .click()
        .await
        .expect("open it");
    wait_for_call(c, "fetch", ("id", id)).await;
    find(c, "li.record .opened").await;
    let opened = texts(c, "li.record .opened").await;
    assert!(opened[0].len() > 40, "the record's text: {opened:?}");
    shot(c, "search").await;
}

/// fetch's view, for a case number: drawn as the vote view draws tk_votes' answer (the
/// decisions, each faction's vote, the roll call by member).
async fn fetched_vote(c: &Client) {
    let shown = show(c, "fetch", json!({"id": MOTION_NUMBER}), None).await;
    assert_eq!(shown["uri"], "ui://besluitbron/read");
    find(c, ".read[data-view=vote] section.decision").await;
    until(c, "return !!document.querySelector('.member-filter')").await;
    let factions = texts(c, "table.factions tbody tr td:first-child").await;
    assert!(factions.len() > 3, "factions: {factions:?}");
    assert!(texts(c, "li.member").await.len() > 20, "a roll call by member");
    shot(c, "fetch-vote").await;
}

/// fetch's view, for a law as in force on a day: drawn as the regulation view draws
/// bwb_read's answer; an article opened reads on through fetch with `article`.
async fn fetched_regulation(c: &Client) {
    let law = besluitbron_fakes::bwb::FIREWORKS_LAW;
    let shown = show(c, "fetch", json!({"id": law, "date": "2025-08-01"}), None).await;
    assert_eq!(shown["uri"], "ui://besluitbron/read");
    find(c, ".read[data-view=regulation]").await;
    assert!(texts(c, ".validity").await[0].contains("2025-08-01"), "as in force on");
    let article = find(c, "nav.outline button.article").await;
    let number = article
        .attr("data-article")
        .await
        .expect("attr")
        .expect("an article number");
    article.click().await.expect("open the article");
    wait_for_call(c, "fetch", ("article", json!(number))).await;
    let heading = format!("Artikel {number}");
    until(
        c,
        &format!("return [...document.querySelectorAll('h2')].some((h) => h.textContent === {heading:?})"),
    )
    .await;
    assert!(
        !texts(c, ".regulation-text").await[0].trim().is_empty(),
        "the article's text"
    );
    shot(c, "fetch-regulation").await;
}

/// Without a browser: the extension is declared at `initialize` and `server/discover`,
/// the tools with a view name it in `tools/list`, and the views are listed and read.
#[tokio::test]
async fn the_extension_is_declared_and_each_view_is_a_resource_its_tools_name() {
    let fakes = fakes().await;
    let dir = temp_dir("views-declared");
    let server = Server::start(config(&fakes, &dir)).await;
    let ui = json!({"mimeTypes": ["text/html;profile=mcp-app"]});
    let old = Mcp::initialize(server.url("/mcp")).await;
    let modern = Mcp::modern(server.url("/mcp"));
    let discovered = modern
        .post(json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {}}))
        .await;
    let discovered = discovered.message.expect("server/discover answers");
    assert_eq!(
        discovered["result"]["capabilities"]["extensions"]["io.modelcontextprotocol/ui"],
        ui
    );
    let listed = old
        .post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}))
        .await
        .message
        .expect("tools/list");
    let tools = listed["result"]["tools"].as_array().expect("tools").clone();
    let with_view: Vec<(&str, &Value)> = tools
        .iter()
        .filter_map(|t| Some((t["name"].as_str()?, t.get("_meta")?)))
        .collect();
    assert!(with_view.contains(&("search", &json!({"ui": {"resourceUri": "ui://besluitbron/search"}}))));
    assert!(with_view.contains(&("tk_votes", &json!({"ui": {"resourceUri": "ui://besluitbron/vote"}}))));
    assert!(with_view.contains(&("fetch", &json!({"ui": {"resourceUri": "ui://besluitbron/read"}}))));
    let resources = old
        .post(json!({"jsonrpc": "2.0", "id": 3, "method": "resources/list", "params": {}}))
        .await
        .message
        .expect("resources/list");
    let views: Vec<&str> = resources["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter(|r| r["mimeType"] == "text/html;profile=mcp-app")
        .filter_map(|r| r["uri"].as_str())
        .collect();
    assert!(
        views.contains(&"ui://besluitbron/vote") && views.contains(&"ui://besluitbron/search"),
        "{views:?}"
    );
    // At a platform's own address: its reading tool names the regulation view.
    let bwb = Mcp::initialize(server.url("/mcp/bwb")).await;
    let listed = bwb
        .post(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {}}))
        .await
        .message
        .expect("tools/list");
    let read = listed["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "bwb_read")
        .expect("bwb_read")
        .clone();
    assert_eq!(read["_meta"]["ui"]["resourceUri"], "ui://besluitbron/regulation");
    let page = bwb
        .post(json!({"jsonrpc": "2.0", "id": 5, "method": "resources/read", "params": {"uri": "ui://besluitbron/regulation"}}))
        .await
        .message
        .expect("resources/read");
    let text = page["result"]["contents"][0]["text"].as_str().expect("the page");
    assert!(text.contains("Content-Security-Policy") && text.contains("default-src 'none'"));
    server.stop().await;
}
