//! Asking back (`server/src/mcp/ask.rs`) end to end, with raw requests against the fakes
//! on loopback: an argument a connector declares (an `organization` that fits several
//! organisations, a `speaker` who is one of several members, a court or an area of law
//! several share) is put to the person where the client can be asked — a 2026-07-28
//! request that declares elicitation gets `input_required` with the choices, and its
//! retry with the choice completes on another server; a session client that declared
//! elicitation gets `elicitation/create` on the call's own stream — and every other
//! client gets today's answer. No platform request is made before the choice (the
//! reference lists a resolution reads are read first, as the tool itself reads them).

use crate::support;

use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, result, temp_dir};

/// A search whose `organization` fits the municipality, the province and more.
fn ambiguous() -> Value {
    json!({"query": "parkeren", "organization": "Utrecht", "date": "2024-06-01"})
}

/// A 2026-07-28 `tools/call` of `cvdr_search` declaring `capabilities`, with `more` params.
async fn modern_call(mcp: &Mcp, id: i64, args: Value, capabilities: Value, more: Value) -> Reply {
    let mut params = json!({"name": "cvdr_search", "arguments": args,
        "_meta": {"io.modelcontextprotocol/clientCapabilities": capabilities}});
    for (k, v) in more.as_object().cloned().unwrap_or_default() {
        params[k] = v;
    }
    mcp.post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
        .await
}

/// The ids of a search answer's results.
fn ids(result: &Value) -> Vec<String> {
    assert_ne!(result["isError"], json!(true), "a tool error: {result}");
    result["structuredContent"]["results"]
        .as_array()
        .unwrap_or_else(|| panic!("results: {result}"))
        .iter()
        .map(|h| h["id"].as_str().unwrap_or_default().to_owned())
        .collect()
}

fn cvdr(f: &support::Fakes) -> besluitbron_fakes::FakeHandle {
    f.all
        .get(besluitbron_server::platforms::cvdr::PLATFORM)
        .expect("the cvdr fake")
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_2026_client_that_elicits_is_asked_and_its_retry_completes_on_another_server() {
    let f = fakes().await;
    let one = Server::start(config(&f, &temp_dir("ask-one"))).await;
    let other = Server::start(config(&f, &temp_dir("ask-other"))).await;
    let fake = cvdr(&f);
    let before = fake.requests();
    let elicits = json!({"elicitation": {"form": {}}});
    let asking = Mcp::modern(one.url("/mcp/cvdr"));

    let r = modern_call(&asking, 1, ambiguous(), elicits.clone(), json!({})).await;
    let asked = result(&r);
    assert_eq!(asked["resultType"], "input_required", "{}", r.text);
    assert!(asked.get("requestState").is_none(), "no state to trust: {asked}");
    let elicitation = &asked["inputRequests"]["choice"];
    assert_eq!(elicitation["method"], "elicitation/create", "{asked}");
    assert_eq!(elicitation["params"]["mode"], "form");
    let offered = elicitation["params"]["requestedSchema"]["properties"]["organization"]["oneOf"]
        .as_array()
        .unwrap_or_else(|| panic!("choices: {asked}"))
        .clone();
    let titled = |key: &str| offered.iter().find(|o| o["const"] == key).map(|o| o["title"].clone());
    assert_eq!(
        titled("gemeente-utrecht"),
        Some(json!("Gemeente Utrecht")),
        "{offered:?}"
    );
    assert_eq!(
        titled("provincie-utrecht"),
        Some(json!("Provincie Utrecht")),
        "{offered:?}"
    );
    assert_eq!(fake.requests(), before, "no platform request before the choice");

    // The answer is none of the choices: refused, nothing asked.
    let forged =
        json!({"inputResponses": {"choice": {"action": "accept", "content": {"organization": "gemeente-amsterdam"}}}});
    let r = modern_call(&asking, 2, ambiguous(), elicits.clone(), forged).await;
    let error = &r.message.as_ref().expect("an answer")["error"];
    assert_eq!(error["code"], -32602, "{}", r.text);
    assert!(
        error["message"]
            .as_str()
            .unwrap_or_default()
            .contains("gemeente-utrecht"),
        "{error}"
    );
    assert_eq!(fake.requests(), before, "a choice not offered asks nothing");

    // The retry with the choice, to another server: resolved from the arguments alone.
    let chosen =
        json!({"inputResponses": {"choice": {"action": "accept", "content": {"organization": "gemeente-utrecht"}}}});
    let retry = Mcp::modern(other.url("/mcp/cvdr"));
    let r = modern_call(&retry, 3, ambiguous(), elicits.clone(), chosen.clone()).await;
    assert_eq!(
        ids(&result(&r)),
        ["CVDR700001_1"],
        "the municipality's, not the province's"
    );
    assert!(fake.requests() > before, "the search was made once chosen");

    // The same retry again is the same answer (nothing of the first round was kept).
    let r = modern_call(&asking, 4, ambiguous(), elicits, chosen).await;
    assert_eq!(ids(&result(&r)), ["CVDR700001_1"]);
    one.stop().await;
    other.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_that_does_not_elicit_or_declines_gets_todays_answer() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("ask-today"))).await;
    let fake = cvdr(&f);
    let before = fake.requests();
    let tool_text = |r: &Reply| {
        let res = result(r);
        assert_eq!(res["isError"], json!(true), "today's answer is the tool's error: {res}");
        res["content"][0]["text"].as_str().unwrap_or_default().to_owned()
    };
    let mut session = Mcp::initialize(server.url("/mcp/cvdr")).await;
    let today = tool_text(&session.call("cvdr_search", ambiguous()).await);
    assert!(
        today.contains("gemeente-utrecht") && today.contains("provincie-utrecht"),
        "{today}"
    );

    let modern = Mcp::modern(server.url("/mcp/cvdr"));
    let r = modern_call(&modern, 1, ambiguous(), json!({}), json!({})).await;
    assert_eq!(tool_text(&r), today, "a 2026 client that declares no elicitation");
    let declined = json!({"inputResponses": {"choice": {"action": "decline"}}});
    let r = modern_call(&modern, 2, ambiguous(), json!({"elicitation": {"form": {}}}), declined).await;
    assert_eq!(tool_text(&r), today, "a declined choice");
    assert_eq!(fake.requests(), before, "no platform request for any of them");
    server.stop().await;
}

/// Reads server-sent events from `response` until the JSON-RPC message `done` accepts,
/// calling `on` for every message before it.
async fn read_events(
    mut response: reqwest::Response,
    mut on: impl AsyncFnMut(&Value),
    done: impl Fn(&Value) -> bool,
) -> Value {
    let mut buffer = String::new();
    loop {
        let chunk = response
            .chunk()
            .await
            .expect("the stream reads")
            .unwrap_or_else(|| panic!("the stream ended before the answer: {buffer}"));
        buffer.push_str(&String::from_utf8_lossy(&chunk));
        while let Some(end) = buffer.find("\n\n") {
            let event: String = buffer.drain(..end + 2).collect();
            let data: String = event
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(str::trim)
                .collect();
            let Ok(message) = serde_json::from_str::<Value>(&data) else {
                continue;
            };
            if done(&message) {
                return message;
            }
            on(&message).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_client_that_elicits_is_sent_an_elicitation_and_its_choice_is_searched() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("ask-session"))).await;
    let fake = cvdr(&f);
    let url = server.url("/mcp/cvdr");
    let http = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| session_post(&http, &url, body, session);
    let session = eliciting_session(&http, &url).await;
    let before = fake.requests();

    let call = post(
        json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "cvdr_search", "arguments": ambiguous()}}),
        Some(session.clone()),
    )
    .await
    .expect("tools/call");
    let mut asked = 0;
    let answer = read_events(
        call,
        async |message: &Value| {
            if message["method"] != "elicitation/create" {
                return;
            }
            asked += 1;
            let offered = &message["params"]["requestedSchema"]["properties"]["organization"]["oneOf"];
            assert!(
                offered
                    .as_array()
                    .is_some_and(|o| o.iter().any(|c| c["const"] == "gemeente-utrecht")),
                "{message}"
            );
            assert_eq!(fake.requests(), before, "no platform request before the choice");
            let reply = json!({"jsonrpc": "2.0", "id": message["id"],
                "result": {"action": "accept", "content": {"organization": "gemeente-utrecht"}}});
            let sent = post(reply, Some(session.clone())).await.expect("the choice");
            assert!(sent.status().is_success(), "the choice is taken: {}", sent.status());
        },
        |message| message["id"] == 7,
    )
    .await;
    assert_eq!(asked, 1, "one elicitation");
    assert_eq!(ids(&answer["result"]), ["CVDR700001_1"], "{answer}");
    server.stop().await;
}

/// A list tool and its arguments.
type Warm = (&'static str, fn() -> Value);

/// One argument a connector declares as one a person may be asked to settle, with a
/// value that names several things in the fakes.
struct Case {
    /// The address that serves the tool.
    path: &'static str,
    tool: &'static str,
    platform: besluitbron_core::PlatformId,
    /// The call's arguments, the ambiguous one among them.
    args: fn() -> Value,
    argument: &'static str,
    /// The call of the reference list the resolution reads, made first (by a client
    /// that is not asked) so that the count of platform requests is the search's.
    warm: Option<Warm>,
    /// The option picked: the first whose title starts with this.
    pick: &'static str,
    /// What the completed answer's text holds.
    holds: &'static str,
}

fn cases() -> Vec<Case> {
    use besluitbron_server::platforms;
    vec![
        Case {
            path: "/mcp/cvdr",
            tool: "cvdr_search",
            platform: platforms::cvdr::PLATFORM,
            args: ambiguous,
            argument: "organization",
            warm: None,
            pick: "Gemeente Utrecht",
            holds: "CVDR700001_1",
        },
        Case {
            path: "/mcp/obv",
            tool: "obv_search",
            platform: platforms::obv::PLATFORM,
            args: || json!({"query": "begroting", "organization": "Utrecht", "limit": 3}),
            argument: "organization",
            warm: Some(("obv_sources", || json!({"name": "Utrecht"}))),
            pick: "Gemeente Utrecht",
            holds: "Gemeente Utrecht",
        },
        Case {
            path: "/mcp/tk",
            tool: "tk_debates",
            platform: platforms::tk::PLATFORM,
            args: || json!({"speaker": "van Dijk", "limit": 3}),
            argument: "speaker",
            warm: Some(("tk_debates", || json!({"speaker": "van Dijk"}))),
            pick: "Olger van Dijk",
            holds: "Olger van Dijk",
        },
        Case {
            path: "/mcp/rechtspraak",
            tool: "rechtspraak_search",
            platform: platforms::rechtspraak::PLATFORM,
            args: || json!({"court": "Den Haag", "limit": 3}),
            argument: "court",
            warm: Some(("rechtspraak_courts", || json!({"limit": 200}))),
            pick: "Rechtbank Den Haag",
            holds: "court Rechtbank Den Haag",
        },
        Case {
            path: "/mcp/rechtspraak",
            tool: "rechtspraak_search",
            platform: platforms::rechtspraak::PLATFORM,
            args: || json!({"area": "internationaal", "limit": 3}),
            argument: "area",
            warm: Some(("rechtspraak_areas", || json!({"limit": 200}))),
            pick: "Internationaal strafrecht",
            holds: "area Internationaal strafrecht (within Strafrecht)",
        },
        Case {
            path: "/mcp/rechtspraak",
            tool: "rechtspraak_search",
            platform: platforms::rechtspraak::PLATFORM,
            args: || json!({"procedure": "eerste aanleg", "limit": 3}),
            argument: "procedure",
            warm: Some(("rechtspraak_procedures", || json!({"limit": 200}))),
            pick: "Eerste aanleg - meervoudig",
            holds: "procedure Eerste aanleg - meervoudig",
        },
    ]
}

impl Case {
    fn fake(&self, f: &support::Fakes) -> besluitbron_fakes::FakeHandle {
        f.all.get(self.platform).expect("the case's fake").clone()
    }

    /// Reads the reference list at `server` as a client that is not asked.
    async fn warm(&self, server: &Server) {
        if let Some((tool, args)) = self.warm {
            let mut session = Mcp::initialize(server.url(self.path)).await;
            let r = session.call(tool, args()).await;
            assert!(r.message.is_some(), "{tool}: {}", r.text);
        }
    }

    /// A 2026-07-28 call of the case's tool declaring `capabilities`, with `more` params.
    async fn modern(&self, mcp: &Mcp, id: i64, capabilities: Value, more: Value) -> Reply {
        let mut params = json!({"name": self.tool, "arguments": (self.args)(),
            "_meta": {"io.modelcontextprotocol/clientCapabilities": capabilities}});
        for (k, v) in more.as_object().cloned().unwrap_or_default() {
            params[k] = v;
        }
        mcp.post(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
            .await
    }

    /// The value of the option picked among `offered` (`oneOf` of `const` and `title`).
    fn picked(&self, offered: &Value) -> String {
        offered
            .as_array()
            .and_then(|o| {
                o.iter()
                    .find(|c| c["title"].as_str().is_some_and(|t| t.starts_with(self.pick)))
            })
            .and_then(|c| c["const"].as_str())
            .unwrap_or_else(|| panic!("{}: `{}` among {offered}", self.tool, self.pick))
            .to_owned()
    }

    /// The text of a completed answer, checked.
    fn completed(&self, result: &Value) -> String {
        assert_ne!(result["isError"], json!(true), "{}: a tool error: {result}", self.tool);
        let text = result["content"][0]["text"].as_str().unwrap_or_default().to_owned();
        assert!(text.contains(self.holds), "{}: `{}` in {text}", self.tool, self.holds);
        text
    }
}

/// Every declared argument, asked of a 2026-era client that elicits: `input_required`
/// with no platform request, a choice not offered refused, and the retry with the
/// choice completes on another server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_declared_argument_asks_a_2026_client_and_its_retry_completes_elsewhere() {
    let f = fakes().await;
    let one = Server::start(config(&f, &temp_dir("ask-every-one"))).await;
    let other = Server::start(config(&f, &temp_dir("ask-every-other"))).await;
    let elicits = json!({"elicitation": {"form": {}}});
    for case in cases() {
        case.warm(&one).await;
        case.warm(&other).await;
        let fake = case.fake(&f);
        let before = fake.requests();
        let asking = Mcp::modern(one.url(case.path));
        let r = case.modern(&asking, 1, elicits.clone(), json!({})).await;
        let asked = result(&r);
        assert_eq!(asked["resultType"], "input_required", "{}: {}", case.tool, r.text);
        let params = &asked["inputRequests"]["choice"]["params"];
        let offered = &params["requestedSchema"]["properties"][case.argument]["oneOf"];
        let value = case.picked(offered);
        assert_eq!(
            fake.requests(),
            before,
            "{}: no platform request before the choice",
            case.tool
        );

        let forged = json!({"inputResponses": {"choice": {"action": "accept",
            "content": {case.argument: "no such thing"}}}});
        let r = case.modern(&asking, 2, elicits.clone(), forged).await;
        let error = &r.message.as_ref().expect("an answer")["error"];
        assert_eq!(error["code"], -32602, "{}: {}", case.tool, r.text);
        assert_eq!(
            fake.requests(),
            before,
            "{}: a choice not offered asks nothing",
            case.tool
        );

        let chosen = json!({"inputResponses": {"choice": {"action": "accept", "content": {case.argument: value}}}});
        let retry = Mcp::modern(other.url(case.path));
        let r = case.modern(&retry, 3, elicits.clone(), chosen).await;
        case.completed(&result(&r));
        assert!(
            fake.requests() > before,
            "{}: the search was made once chosen",
            case.tool
        );
    }
    one.stop().await;
    other.stop().await;
}

/// Every declared argument, for clients that are not asked: today's answer, the same
/// for a session client and a 2026 one that declares no elicitation.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_declared_argument_answers_a_client_that_does_not_elicit_as_today() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("ask-every-today"))).await;
    for case in cases() {
        case.warm(&server).await;
        let mut session = Mcp::initialize(server.url(case.path)).await;
        let today = result(&session.call(case.tool, (case.args)()).await);
        assert_ne!(today["resultType"], "input_required", "{}: {today}", case.tool);
        let text = today["content"][0]["text"].as_str().unwrap_or_default();
        assert!(!text.is_empty(), "{}: {today}", case.tool);
        let modern = Mcp::modern(server.url(case.path));
        let r = case.modern(&modern, 1, json!({}), json!({})).await;
        assert_eq!(
            result(&r)["content"],
            today["content"],
            "{}: a 2026 client, no elicitation",
            case.tool
        );
        assert_eq!(result(&r)["isError"], today["isError"], "{}", case.tool);
    }
    server.stop().await;
}

/// Every declared argument, asked of a session client that declared elicitation: one
/// `elicitation/create` on the call's stream, no platform request before the answer,
/// and the call completes with the choice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_declared_argument_sends_a_session_client_an_elicitation() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("ask-every-session"))).await;
    let http = reqwest::Client::new();
    for case in cases() {
        case.warm(&server).await;
        let fake = case.fake(&f);
        let url = server.url(case.path);
        let post = |body: Value, session: Option<String>| session_post(&http, &url, body, session);
        let session = eliciting_session(&http, &url).await;
        let before = fake.requests();
        let call = post(
            json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": case.tool, "arguments": (case.args)()}}),
            Some(session.clone()),
        )
        .await
        .expect("tools/call");
        let mut asked = 0;
        let answer = read_events(
            call,
            async |message: &Value| {
                if message["method"] != "elicitation/create" {
                    return;
                }
                asked += 1;
                let offered = &message["params"]["requestedSchema"]["properties"][case.argument]["oneOf"];
                let value = case.picked(offered);
                assert_eq!(
                    fake.requests(),
                    before,
                    "{}: no platform request before the choice",
                    case.tool
                );
                let reply = json!({"jsonrpc": "2.0", "id": message["id"],
                    "result": {"action": "accept", "content": {case.argument: value}}});
                let sent = post(reply, Some(session.clone())).await.expect("the choice");
                assert!(sent.status().is_success(), "the choice is taken: {}", sent.status());
            },
            |message| message["id"] == 7,
        )
        .await;
        assert_eq!(asked, 1, "{}: one elicitation", case.tool);
        case.completed(&answer["result"]);
    }
    server.stop().await;
}

/// A session-era JSON-RPC request to `url`, in `session` when given.
fn session_post(
    http: &reqwest::Client,
    url: &str,
    body: Value,
    session: Option<String>,
) -> impl std::future::Future<Output = reqwest::Result<reqwest::Response>> {
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2025-11-25")
        .body(body.to_string());
    if let Some(s) = session {
        request = request.header("mcp-session-id", s);
    }
    request.send()
}

/// A session-era session at `url` whose client declares elicitation (forms), initialized:
/// its id.
async fn eliciting_session(http: &reqwest::Client, url: &str) -> String {
    let init = session_post(
        http,
        url,
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}}, "clientInfo": {"name": "besluitbron-tests", "version": "1"}}}),
        None,
    )
    .await
    .expect("initialize");
    let session = init
        .headers()
        .get("mcp-session-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned)
        .expect("a session");
    let _ = init.text().await;
    let initialized = session_post(
        http,
        url,
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        Some(session.clone()),
    )
    .await
    .expect("initialized");
    assert!(initialized.status().is_success());
    session
}
