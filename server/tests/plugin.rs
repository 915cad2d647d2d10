//! A platform plugs in: two connectors defined entirely in this file — their platforms,
//! the one upstream service both call, their tools, their id form, their fake — and
//! the server built from the registry plus these two
//! (`App::builder(config).connectors(CONNECTORS + [plug, plugtwo])`), nothing edited
//! anywhere else. The first is searched by `search` and read by `fetch` through its id
//! form (`PLUG-<number>`), its answers buffered; the two share one token bucket and one
//! fair queue (their service's), so together they never exceed one bucket and a late
//! session goes ahead of a flood; both are counted in metrics, shown on the status page
//! and listed at their addresses (`/mcp/<id>` and `/<id>/mcp`).
//!
//! If this file needs anything the server crate does not export, or the server needs an
//! edit to serve these connectors, the seam for a new platform leaks there.

use crate::support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Json;
use axum::extract::{Path, Query};
use axum::routing::get;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::Feedback;
use besluitbron_core::{Instant, LimitConfig, Platform, PlatformId, Service, ServiceId, Units};
use besluitbron_server::app::{App, Hooks};
use besluitbron_server::call::{
    Call, Client, Context, Head, Kept, PlatformCall, ReadResult, Rendered, Reply, Who, replied,
};
use besluitbron_server::config::{Config, PlatformDefaults};
use besluitbron_server::connectors::ids::{Claim, IdForm, IdReader, Paging, Reading};
use besluitbron_server::connectors::page_spec::PageSpec;
use besluitbron_server::connectors::search::{Asked, Keyword, KeywordSearch, KeywordTool, SearchSpec};
use besluitbron_server::connectors::vocabulary::{Item, Listing, Tally};
use besluitbron_server::connectors::{CONNECTORS, ConnectorSpec, Offers, ToolSpec, http_config};
use besluitbron_server::platforms::http::{PlatformError, PlatformHttp, decode_json};
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use support::{Mcp, Server, eventually, fakes, search_groups, structured, temp_dir};

/// The one service both test platforms call: a burst of 2, refilled at 2 a second (the
/// test sets no margin).
static PLUG_SERVICE: Service = Service {
    id: "plug-service",
    name: "the plug-in test's archive service (loopback)",
    limit: Some(LimitConfig::new(Units::whole(2), Duration::from_secs(1))),
    max_in_flight: None,
};
const SERVICES: &[ServiceId] = &[ServiceId::of(&PLUG_SERVICE)];

static PLUG_PLATFORM: Platform = Platform {
    id: "plug",
    name: "Plug Archive",
};
static PLUGTWO_PLATFORM: Platform = Platform {
    id: "plugtwo",
    name: "Plug Annex",
};
const PLUG: PlatformId = PlatformId::of(&PLUG_PLATFORM);
const PLUGTWO: PlatformId = PlatformId::of(&PLUGTWO_PLATFORM);

/// Both connectors' client: the shared HTTP layer, at the platform's configured address.
struct PlugClient {
    platform: PlatformId,
    http: PlatformHttp,
    base: String,
}

impl PlugClient {
    fn open(platform: PlatformId, config: &Config) -> Result<Client, PlatformError> {
        let http = PlatformHttp::new(platform, &http_config(config, platform), "application/json")?;
        let base = config.platform(platform).base_url;
        Ok(Arc::new(PlugClient { platform, http, base }))
    }

    async fn get<T: serde::de::DeserializeOwned>(&self, path: &str) -> Result<T, PlatformError> {
        let url = format!("{}/{}{path}", self.base.trim_end_matches('/'), self.platform.as_str());
        let url = reqwest::Url::parse(&url).map_err(|e| PlatformError::Config {
            platform: self.platform,
            detail: e.to_string(),
        })?;
        let fetched = self.http.get(url).await?;
        if fetched.status.as_u16() == 404 {
            return Err(PlatformError::NotFound {
                platform: self.platform,
                what: path.to_owned(),
            });
        }
        decode_json(self.platform, &fetched)
    }
}

/// Arguments of `plug_search` and `plugtwo_search`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct SearchArgs {
    /// Words to find.
    #[schemars(length(min = 1, max = 200))]
    query: String,
    /// Results, 1 to 20.
    #[serde(default)]
    #[schemars(range(min = 1, max = 20))]
    limit: Option<u32>,
}

/// Arguments of `plug_read`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    /// A record's id, `PLUG-<number>`.
    #[schemars(length(max = 40))]
    id: String,
}

/// One record, as the fake gives it and `plug_read` answers it.
#[derive(Debug, Serialize, Deserialize, JsonSchema)]
struct Record {
    /// Its id.
    id: String,
    /// Its title.
    title: String,
    /// Its text.
    text: String,
    /// The platform's id.
    #[serde(default)]
    platform: String,
}

/// The fake's search answer.
#[derive(Debug, Deserialize)]
struct Hits {
    total: u64,
    hits: Vec<Hit>,
}

#[derive(Debug, Deserialize)]
struct Hit {
    id: String,
    title: String,
    date: String,
}

/// A search of `platform`'s archive, as its kept answer: the shared vocabulary's listing.
fn search_call(
    ctx: &Context,
    platform: PlatformId,
    tool: &str,
    args: &SearchArgs,
) -> Result<PlatformCall<Listing>, Reply> {
    let client = ctx.clients.get::<PlugClient>(platform).map_err(Reply::from)?;
    let limit = args.limit.unwrap_or(5);
    let query = args.query.trim().to_owned();
    let key = CacheKey::new(platform, DataClass::Search, "search")
        .param("q", query.clone())
        .param("limit", limit.to_string());
    let tool = tool.to_owned();
    Ok(PlatformCall::new(key, Units::ONE, move || {
        let (client, query, tool) = (Arc::clone(&client), query.clone(), tool.clone());
        async move {
            let hits: Hits = client.get(&format!("/search?q={query}&limit={limit}")).await?;
            let results: Vec<Item> = hits
                .hits
                .into_iter()
                .map(|h| Item::new(client.platform, &tool, h.id, h.title).dated(Some(h.date)))
                .collect();
            let tally = Tally::exact(hits.total, 0, results.len());
            Ok((Listing { results, tally }, Feedback::default()))
        }
    }))
}

/// `plug_search` and `plugtwo_search`, each declared once: the tool and its part in
/// `search`, both reading the one kept listing.
struct PlugSearch;
struct PlugTwoSearch;

impl KeywordTool for PlugSearch {
    const NAME: &'static str = "plug_search";
    const TITLE: &'static str = "Search the Plug Archive";
    const DESCRIPTION: &'static str = "Search the plug-in test's archive by words.";
    type Args = SearchArgs;
    type Output = Listing;
    type Found = Kept<Listing>;

    async fn find(ctx: &Context, call: &Call, args: SearchArgs) -> Result<Kept<Listing>, Reply> {
        let pc = search_call(ctx, PLUG, "plug_read", &args)?;
        Ok(ctx.fetch_kept(call, pc).await?)
    }

    fn render(found: &Kept<Listing>) -> Rendered {
        Rendered::answer(format!("{} results", found.answer.results.len()))
    }

    fn listing(found: &Kept<Listing>) -> Listing {
        Listing::clone(&found.answer)
    }

    fn arguments(asked: &Asked) -> serde_json::Map<String, Value> {
        search_arguments(asked)
    }
}

impl KeywordTool for PlugTwoSearch {
    const NAME: &'static str = "plugtwo_search";
    const TITLE: &'static str = "Search the Plug Annex";
    const DESCRIPTION: &'static str = "Search the plug-in test's annex by words.";
    type Args = SearchArgs;
    type Output = Listing;
    type Found = Kept<Listing>;

    async fn find(ctx: &Context, call: &Call, args: SearchArgs) -> Result<Kept<Listing>, Reply> {
        let pc = search_call(ctx, PLUGTWO, "plugtwo_search", &args)?;
        Ok(ctx.fetch_kept(call, pc).await?)
    }

    fn render(found: &Kept<Listing>) -> Rendered {
        PlugSearch::render(found)
    }

    fn listing(found: &Kept<Listing>) -> Listing {
        Listing::clone(&found.answer)
    }

    fn arguments(asked: &Asked) -> serde_json::Map<String, Value> {
        search_arguments(asked)
    }
}

async fn plug_read(ctx: &Context, call: &Call, args: ReadArgs) -> Reply {
    replied(plug_record(ctx, call, args).await)
}

/// One record read, typed: the tool's answer and `fetch`'s (its title; no public page).
async fn plug_record(ctx: &Context, call: &Call, args: ReadArgs) -> ReadResult {
    let client = ctx.clients.get::<PlugClient>(PLUG)?;
    let id = besluitbron_server::connectors::ids::own(PLUG, &args.id).to_owned();
    let key = CacheKey::new(PLUG, DataClass::Document, "record").param("id", id.clone());
    let pc = PlatformCall::new(key, Units::ONE, move || {
        let (client, id) = (Arc::clone(&client), id.clone());
        async move {
            let mut record: Record = client.get(&format!("/records/{id}")).await?;
            record.platform = PLUG.as_str().to_owned();
            Ok((record, Feedback::default()))
        }
    });
    ctx.read_for(Who::Caller, call, pc, |record: &Record, _| {
        let head = Head::new(record.title.clone(), None::<String>);
        Ok((head, Rendered::answer(record.text.clone())))
    })
    .await
}

const PLUG_SEARCH: ToolSpec = Keyword::<PlugSearch>::TOOL;

const PLUG_READ: ToolSpec = besluitbron_server::tool! {
    name: "plug_read",
    title: "Read a Plug Archive record",
    description: "Read one record of the plug-in test's archive by its id (`PLUG-<number>`).",
    arguments: ReadArgs,
    output: Record,
    run: plug_read,
};

const PLUGTWO_SEARCH: ToolSpec = Keyword::<PlugTwoSearch>::TOOL;

fn search_arguments(asked: &Asked) -> serde_json::Map<String, Value> {
    let mut args = serde_json::Map::new();
    args.insert("query".into(), asked.query.clone().into());
    args.insert("limit".into(), asked.limit.into());
    args
}

const PLUG_SEARCH_SPEC: SearchSpec = Keyword::<PlugSearch>::SEARCH;
const PLUGTWO_SEARCH_SPEC: SearchSpec = Keyword::<PlugTwoSearch>::SEARCH;

/// `PLUG-<digits>`, with or without the `plug:` prefix `fetch` strips.
fn read_plug(id: &str, _: Paging) -> Option<Result<Reading, String>> {
    let digits = id.strip_prefix("PLUG-")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Some(Err(format!("`{id}`: a Plug Archive id is PLUG- and a number")));
    }
    let args = ReadArgs { id: id.to_owned() };
    Some(Ok(Reading::new(id, Claim::Home, &PLUG_READ, move |ctx, call| {
        Box::pin(plug_record(ctx, call, args))
    })))
}

static PLUG_READER: IdReader = IdReader {
    public_pages: false,
    forms: &[IdForm {
        what: "a Plug Archive record id",
        example: "PLUG-1",
        sample: None,
    }],
    paged: &[],
    read: read_plug,
};

static PLUG_TOOLS: [ToolSpec; 2] = [PLUG_SEARCH, PLUG_READ];
static PLUGTWO_TOOLS: [ToolSpec; 1] = [PLUGTWO_SEARCH];

const NOT_ON_THE_PAGE: PageSpec = PageSpec::Without {
    nl: "Alleen in de test.",
    en: "Only in the test.",
};

static PLUG_CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "plug",
    platform: PLUG,
    defaults: PlatformDefaults::new(PLUG, "http://127.0.0.1:9", SERVICES),
    instructions: "Plug Archive (plug_*): the plug-in test's archive.",
    guide: "Plug Archive: the plug-in test's archive.",
    tools: &PLUG_TOOLS,
    open: |config| PlugClient::open(PLUG, config),
    maintenance: None,
    samples: &[],
    offers: &Offers::NONE,
    page: &NOT_ON_THE_PAGE,
    status: None,
    search: KeywordSearch::Tool(&PLUG_SEARCH_SPEC),
    reads: Some(&PLUG_READER),
    lists: &[],
};

static PLUGTWO_CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "plugtwo",
    platform: PLUGTWO,
    defaults: PlatformDefaults::new(PLUGTWO, "http://127.0.0.1:9", SERVICES),
    instructions: "Plug Annex (plugtwo_*): the plug-in test's annex.",
    guide: "Plug Annex: the plug-in test's annex.",
    tools: &PLUGTWO_TOOLS,
    open: |config| PlugClient::open(PLUGTWO, config),
    maintenance: None,
    samples: &[],
    offers: &Offers::NONE,
    page: &NOT_ON_THE_PAGE,
    status: None,
    search: KeywordSearch::Tool(&PLUGTWO_SEARCH_SPEC),
    reads: None,
    lists: &[],
};

/// The registry and the two test connectors.
fn connectors() -> Vec<&'static ConnectorSpec> {
    CONNECTORS.iter().chain([&PLUG_CONNECTOR, &PLUGTWO_CONNECTOR]).collect()
}

/// The fake archive of both platforms: `/<platform>/search` and `/plug/records/<id>`.
async fn serve_fake() -> String {
    #[derive(Deserialize)]
    struct Q {
        q: String,
    }
    let search = |prefix: &'static str| {
        move |Query(q): Query<Q>| async move {
            Json(json!({"total": 2, "hits": [
                {"id": format!("{prefix}-1"), "title": format!("{prefix} record about {}", q.q), "date": "2026-03-01"},
                {"id": format!("{prefix}-2"), "title": format!("{prefix} second record about {}", q.q), "date": "2026-03-02"},
            ]}))
        }
    };
    let record = |Path(id): Path<String>| async move {
        match id.as_str() {
            "PLUG-1" | "PLUG-2" => Ok(Json(
                json!({"id": id, "title": format!("Record {id}"), "text": format!("The text of {id}.")}),
            )),
            _ => Err(axum::http::StatusCode::NOT_FOUND),
        }
    };
    let app = axum::Router::new()
        .route("/plug/search", get(search("PLUG")))
        .route("/plugtwo/search", get(search("ANNEX")))
        .route("/plug/records/{id}", get(record));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind the fake");
    let addr = listener.local_addr().expect("its address");
    tokio::spawn(async move { axum::serve(listener, app).await });
    format!("http://{addr}")
}

/// The configuration of the registry's platforms and the two test platforms, each at
/// its fake.
async fn config_at_fakes(registry_fakes: &support::Fakes, dir: &std::path::Path) -> Config {
    let defaults: Vec<PlatformDefaults> = connectors().iter().map(|c| c.defaults).collect();
    let mut c = Config::load(&defaults, None, Vec::new()).expect("defaults");
    c.data_dir = dir.to_path_buf();
    c.status_refresh_secs = 0;
    c.sessions.initialize_per_minute = 6_000;
    let service = c.services.get_mut("plug-service").expect("the test's service");
    service.limit.as_mut().expect("its limit").margin_secs = 0.0;
    let plug = serve_fake().await;
    let urls = registry_fakes
        .all
        .base_urls()
        .into_iter()
        .map(|(id, url)| (id.as_str().to_owned(), url))
        .chain([("plug".to_owned(), plug.clone()), ("plugtwo".to_owned(), plug)]);
    for (id, url) in urls {
        let p = c.platforms.get_mut(&id).expect("a platform");
        p.base_url = url;
        p.timeout_ms = 10_000;
    }
    c
}

/// One call that went out to a test platform: which, for which session, and when it was
/// admitted.
type Sent = (&'static str, String, Instant);

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connector_defined_in_a_test_is_served_like_the_registrys_own() {
    let registry_fakes = fakes().await;
    let dir = temp_dir("plugin");
    let config = config_at_fakes(&registry_fakes, &dir).await;
    let sent: Arc<Mutex<Vec<Sent>>> = Arc::default();
    let seen = Arc::clone(&sent);
    let hooks = Hooks {
        on_send: Some(Arc::new(move |call| {
            if let (Some(a), id @ ("plug" | "plugtwo")) = (&call.admission, call.platform.as_str()) {
                seen.lock()
                    .unwrap()
                    .push((id, format!("{:?}", a.session), a.admitted_at));
            }
        })),
    };
    let app = App::builder(config)
        .connectors(connectors())
        .hooks(hooks)
        .build()
        .expect("build");
    let server = Server::serve(app, Duration::from_secs(5)).await;

    listed_at_its_addresses(&server).await;
    let mut mcp = Mcp::initialize(server.url("/mcp")).await;
    mcp.list_tools().await;
    searched_and_fetched(&mut mcp, &sent).await;
    buffered(&mut mcp, &sent).await;
    one_bucket_and_one_fair_queue(&server, &sent).await;
    counted_and_shown(&server).await;
    server.stop().await;
}

/// How many calls went out to `platform`.
fn sends(sent: &Arc<Mutex<Vec<Sent>>>, platform: &str) -> usize {
    sent.lock().unwrap().iter().filter(|s| s.0 == platform).count()
}

/// Listed at its addresses, and `search` at /mcp may ask both test platforms.
async fn listed_at_its_addresses(server: &Server) {
    for path in ["/mcp/plug", "/plug/mcp"] {
        let mut mcp = Mcp::initialize(server.url(path)).await;
        let mut names: Vec<String> = mcp
            .list_tools()
            .await
            .iter()
            .map(|t| t["name"].as_str().unwrap_or("").to_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["plug_read", "plug_search"], "{path}");
    }
    let mut mcp = Mcp::initialize(server.url("/mcp")).await;
    let tools = mcp.list_tools().await;
    let search_tool = tools.iter().find(|t| t["name"] == "search").expect("search");
    let choices = &search_tool["inputSchema"]["properties"]["platforms"]["items"]["enum"];
    assert!(
        choices
            .as_array()
            .is_some_and(|c| c.contains(&json!("plug")) && c.contains(&json!("plugtwo"))),
        "{choices}"
    );
}

/// Searched by `search`, its results read by `fetch` through its id form.
async fn searched_and_fetched(mcp: &mut Mcp, sent: &Arc<Mutex<Vec<Sent>>>) {
    let reply = mcp
        .call(
            "search",
            json!({"query": "fietsparkeren", "platforms": ["plug", "plugtwo", "obv"]}),
        )
        .await;
    let groups = search_groups(&reply);
    assert_eq!(groups["plug"]["status"], "ok", "{groups:?}");
    assert_eq!(groups["plug"]["total"], 2, "{groups:?}");
    assert_eq!(groups["plugtwo"]["status"], "ok", "{groups:?}");
    let results = structured(&reply)["results"].clone();
    let first = results
        .as_array()
        .and_then(|r| r.iter().find(|r| r["platform"] == "plug"))
        .expect("a plug result");
    assert_eq!(first["id"], "PLUG-1", "{first}");
    assert_eq!(first["tool"], "plug_read", "{first}");
    assert_eq!(first["date"], "2026-03-01", "{first}");
    assert_eq!((sends(sent, "plug"), sends(sent, "plugtwo")), (1, 1));
    let read = mcp.call("fetch", json!({"id": "PLUG-1"})).await;
    let fetched = structured(&read);
    assert_eq!(
        (fetched["id"].as_str(), fetched["text"].as_str()),
        (Some("PLUG-1"), Some("The text of PLUG-1.")),
        "{fetched}"
    );
    let read = mcp.call("fetch", json!({"id": "plug:PLUG-2"})).await;
    assert_eq!(structured(&read)["title"], "Record PLUG-2");
    let wrong = mcp.call("fetch", json!({"id": "plug:PLUG-x"})).await;
    assert!(
        support::tool_error_text(&wrong).contains("PLUG- and a number"),
        "{}",
        wrong.text
    );
}

/// Buffered: the same question again asks the platform nothing.
async fn buffered(mcp: &mut Mcp, sent: &Arc<Mutex<Vec<Sent>>>) {
    let before = sends(sent, "plug");
    let again = mcp.call("fetch", json!({"id": "PLUG-1"})).await;
    assert_eq!(structured(&again)["text"], "The text of PLUG-1.");
    let again = mcp.call("plug_search", json!({"query": "fietsparkeren"})).await;
    assert_eq!(structured(&again)["total"], 2);
    assert_eq!(sends(sent, "plug"), before, "both answered from the buffer");
}

/// One bucket and one fair queue for both: a flood of distinct searches from one
/// session on both platforms (with a budget each, their two bursts would go out at
/// once), then one other session's search, which goes next.
async fn one_bucket_and_one_fair_queue(server: &Server, sent: &Arc<Mutex<Vec<Sent>>>) {
    let flood: Vec<_> = {
        let url = server.url("/mcp");
        let mut flooder = Mcp::initialize(url).await;
        flooder.list_tools().await;
        let flooder = Arc::new(flooder);
        (0..12)
            .map(|i| {
                let flooder = Arc::clone(&flooder);
                let tool = if i % 2 == 0 { "plug_search" } else { "plugtwo_search" };
                tokio::spawn(async move {
                    flooder
                        .call_with_id(100 + i, tool, json!({"query": format!("flood {i}")}))
                        .await
                })
            })
            .collect()
    };
    let start = sent.lock().unwrap().len();
    assert!(
        eventually(Duration::from_secs(20), async || {
            let handle = server.state.platforms().get(PLUG).expect("plug's task");
            let lanes = handle.snapshot(false).await.map(|s| s.lanes).unwrap_or_default();
            lanes.iter().map(|l| l.queued).sum::<usize>() >= 4
        })
        .await,
        "the flood waits in the service's queue"
    );
    let flood_sent_before_late = sent.lock().unwrap().len() - start;
    let mut late = Mcp::initialize(server.url("/mcp/plugtwo")).await;
    let answer = late.call("plugtwo_search", json!({"query": "laat"})).await;
    assert_eq!(structured(&answer)["total"], 2);
    for call in flood {
        let reply = call.await.expect("a flood call");
        structured(&reply);
    }
    let after: Vec<Sent> = sent.lock().unwrap()[start..].to_vec();
    let late_session = &after
        .iter()
        .find(|s| s.0 == "plugtwo" && after.iter().filter(|o| o.1 == s.1).count() == 1);
    let late_session = &late_session
        .unwrap_or_else(|| panic!("the late search went out once: {after:?}"))
        .1;
    let late_at = after
        .iter()
        .position(|s| &s.1 == late_session)
        .expect("the late search");
    assert!(
        late_at <= flood_sent_before_late + 1,
        "the late session waited behind the flood: {late_at} sent before it, {flood_sent_before_late} before it asked"
    );
    let mut at: Vec<Instant> = sent.lock().unwrap().iter().map(|s| s.2).collect();
    at.sort();
    assert_eq!(one_bucket_exceeded(&at), None, "{at:?}");
}

/// Counted in metrics, shown on the status page.
async fn counted_and_shown(server: &Server) {
    let http = reqwest::Client::new();
    let metrics = http
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("text");
    for needle in ["platform=\"plug\"", "platform=\"plugtwo\"", "plug-service"] {
        assert!(metrics.contains(needle), "{needle} in /metrics");
    }
    let status = http
        .get(server.url("/status.json"))
        .send()
        .await
        .expect("status")
        .text()
        .await
        .expect("text");
    for needle in ["\"plug\"", "\"plugtwo\"", "plug-service"] {
        assert!(status.contains(needle), "{needle} in /status.json: {status}");
    }
}

/// Where more calls went out than one bucket of `PLUG_SERVICE` allows (its burst plus
/// its refill over the interval between the first and the last), if anywhere.
fn one_bucket_exceeded(at: &[Instant]) -> Option<String> {
    let limit = PLUG_SERVICE.limit.expect("a limit");
    let burst = limit.capacity.as_milli() as f64 / 1000.0;
    let rate = burst / limit.window.as_secs_f64();
    for i in 0..at.len() {
        for j in i..at.len() {
            let span = at[j].saturating_since(at[i]).as_secs_f64();
            let allowed = burst + rate * span + 1e-6;
            if (j - i + 1) as f64 > allowed {
                return Some(format!(
                    "{} calls within {span:.3} s, one bucket allows {allowed:.3}",
                    j - i + 1
                ));
            }
        }
    }
    None
}
