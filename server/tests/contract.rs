//! The connector contract: one test per promise, each run over every (connector, fake)
//! pair of the two registries (`besluitbron_server::connectors::CONNECTORS` and
//! `besluitbron_fakes::REGISTRY`). A new connector is held to all of it by adding its
//! line to each table; a connector without a fake, a fake without a connector, or a tool
//! without a sample fails here.
//!
//! What every connector promises:
//! - its tools are listed at `/mcp/<id>` (and at `/mcp`, unless `search` or `fetch` take
//!   their every argument there), named `<id>_…`, with a description, read-only
//!   annotations and an object input schema;
//! - each tool's sample call is answered from the fake, and a repeat from the buffer
//!   (the fake sees no second request);
//! - unreadable answers, a 500 and a time-out each give a tool error that names the
//!   platform, and nothing failed is kept: once the platform answers, so does the tool;
//! - a 429 is queued once more where the platform has a limit BesluitBron keeps (and
//!   the caller is not the system session), and is a tool error naming the platform
//!   elsewhere;
//! - every string argument declares a `maxLength` in its schema, and a longer value is
//!   refused with a short tool error that does not echo it, before any platform request.

use crate::support;

use std::collections::BTreeSet;
use std::time::Duration;

use besluitbron_core::PlatformId;
use besluitbron_fakes::{FakeHandle, REGISTRY};
use besluitbron_server::config::Config;
use besluitbron_server::connectors::{CONNECTORS, ConnectorSpec, Sample};
use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, temp_dir};

fn arguments(sample: &Sample) -> Value {
    let v: Value = serde_json::from_str(sample.arguments)
        .unwrap_or_else(|e| panic!("{}: the sample's arguments are JSON: {e}", sample.tool));
    assert!(v.is_object(), "{}: the sample's arguments are an object", sample.tool);
    v
}

fn fake_of<'a>(fakes: &'a support::Fakes, c: &ConnectorSpec) -> &'a FakeHandle {
    fakes.all.get(c.platform).unwrap_or_else(|| {
        panic!(
            "connector `{}` has no fake: add one to besluitbron_fakes::REGISTRY",
            c.id
        )
    })
}

/// The tool call's result, or a panic naming the tool and what came back.
fn result<'a>(tool: &str, r: &'a Reply) -> &'a Value {
    let m = r
        .message
        .as_ref()
        .unwrap_or_else(|| panic!("{tool}: no JSON-RPC answer: {} {}", r.status, r.text));
    assert!(m.get("error").is_none(), "{tool}: a JSON-RPC error: {m}");
    &m["result"]
}

fn succeeded(tool: &str, r: &Reply) -> Value {
    let result = result(tool, r);
    assert_ne!(result["isError"], json!(true), "{tool}: a tool error: {result}");
    let text = result["content"][0]["text"].as_str().unwrap_or("");
    assert!(!text.is_empty(), "{tool}: an answer with text: {result}");
    result.clone()
}

fn failed(tool: &str, r: &Reply) -> String {
    let result = result(tool, r);
    assert_eq!(
        result["isError"],
        json!(true),
        "{tool}: expected a tool error: {result}"
    );
    result["content"][0]["text"].as_str().unwrap_or("").to_owned()
}

/// Waits (on the condition, at most 10 s) until `done` holds.
async fn until(what: &str, done: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !done() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting until {what}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

async fn server(fakes: &support::Fakes, name: &str, adjust: impl FnOnce(&mut Config)) -> Server {
    let mut cfg = config(fakes, &temp_dir(name));
    adjust(&mut cfg);
    Server::start(cfg).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_connector_has_a_fake_and_every_fake_a_connector() {
    let connectors: BTreeSet<PlatformId> = CONNECTORS.iter().map(|c| c.platform).collect();
    let fakes: BTreeSet<PlatformId> = REGISTRY.iter().map(|e| e.platform()).collect();
    assert_eq!(connectors, fakes, "the two registries name the same platforms");
    let ids: BTreeSet<&str> = CONNECTORS.iter().map(|c| c.id).collect();
    assert_eq!(ids.len(), CONNECTORS.len(), "connector ids are unique");
    assert_eq!(connectors.len(), CONNECTORS.len(), "one connector per platform");
}

/// One list of platforms: what the server runs follows the connector registry.
/// Every connector's platform gets a task and a buffer, and nothing else does: a platform
/// core names without a connector (Open Archivaris) has neither a task nor a buffer file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_platforms_served_are_the_registrys_and_only_those() {
    let f = fakes().await;
    let dir = temp_dir("contract-platforms");
    let s = server(&f, "contract-platforms", |c| c.data_dir = dir.clone()).await;
    let registry: BTreeSet<PlatformId> = CONNECTORS.iter().map(|c| c.platform).collect();
    let listed: BTreeSet<PlatformId> = besluitbron_server::connectors::platforms().into_iter().collect();
    assert_eq!(listed, registry, "connectors::platforms() is the registry's list");
    let tasks: BTreeSet<PlatformId> = s.state.platforms().iter().map(|(p, _)| p).collect();
    assert_eq!(
        tasks, registry,
        "a task for each connector's platform, and for no other"
    );
    let buffers: BTreeSet<PlatformId> = s.state.stores().keys().copied().collect();
    assert_eq!(
        buffers, registry,
        "a buffer for each connector's platform, and for no other"
    );
    for &platform in &registry {
        let file = besluitbron_server::store::store_path(&dir, platform);
        assert!(file.exists(), "{platform}: its buffer file ({})", file.display());
    }
    // And no other file: every buffer file names a connector's platform.
    let folder = besluitbron_server::store::store_path(&dir, *registry.first().unwrap());
    let folder = folder.parent().unwrap();
    for entry in std::fs::read_dir(folder).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().into_owned();
        let Some(id) = name.strip_suffix(".redb") else { continue };
        assert!(
            registry.iter().any(|p| p.as_str() == id),
            "{name}: a buffer file of no connector's platform"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_connector_lists_its_tools_read_only_with_schemas_and_samples() {
    let f = fakes().await;
    let server = server(&f, "contract-list", |_| ()).await;
    let everything: BTreeSet<String> = Mcp::initialize(server.url("/mcp"))
        .await
        .list_tools()
        .await
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_owned())
        .collect();
    let mut listed = 0;
    for c in CONNECTORS {
        fake_of(&f, c);
        let tools = Mcp::initialize(server.url(&format!("/mcp/{}", c.id)))
            .await
            .list_tools()
            .await;
        assert!(!tools.is_empty(), "{}: tools listed", c.id);
        let names: BTreeSet<&str> = tools.iter().filter_map(|t| t["name"].as_str()).collect();
        let sampled: BTreeSet<&str> = c.samples.iter().map(|s| s.tool).collect();
        assert_eq!(
            names, sampled,
            "{}: one sample for each listed tool, and no other",
            c.id
        );
        assert_eq!(sampled.len(), c.samples.len(), "{}: one sample per tool", c.id);
        for t in &tools {
            let name = t["name"].as_str().unwrap_or("");
            assert!(
                name.starts_with(&format!("{}_", c.id)),
                "{}: `{name}` is named after the connector",
                c.id
            );
            // Listed at `/mcp` too, or `search` or `fetch` take its every argument there
            // (`surface.rs` proves which); it answers there by name either way.
            assert!(
                everything.contains(name) || (everything.contains("search") && everything.contains("fetch")),
                "{name} is reachable from /mcp"
            );
            assert!(
                t["description"].as_str().is_some_and(|d| d.len() > 40),
                "{name}: a description"
            );
            let a = &t["annotations"];
            assert_eq!(a["readOnlyHint"], json!(true), "{name}: read-only");
            assert_eq!(a["destructiveHint"], json!(false), "{name}: not destructive");
            assert_eq!(a["openWorldHint"], json!(true), "{name}: asks the open world");
            assert!(a["title"].as_str().is_some_and(|s| !s.is_empty()), "{name}: a title");
            let schema = &t["inputSchema"];
            assert_eq!(schema["type"], json!("object"), "{name}: an object input schema");
            let properties = schema["properties"].as_object().cloned().unwrap_or_default();
            let sample = c.samples.iter().find(|s| s.tool == name).expect("sampled");
            for arg in arguments(sample).as_object().expect("an object").keys() {
                assert!(
                    properties.contains_key(arg),
                    "{name}: the sample's `{arg}` is in the schema"
                );
            }
            for required in schema["required"].as_array().into_iter().flatten() {
                let required = required.as_str().unwrap_or("");
                assert!(
                    arguments(sample).get(required).is_some(),
                    "{name}: the sample gives the required `{required}`"
                );
            }
        }
        listed += names.iter().filter(|n| everything.contains(**n)).count();
    }
    assert!(
        everything.contains("search") && everything.contains("fetch") && everything.contains("lists"),
        "/mcp lists the search over every platform, fetch and lists"
    );
    assert_eq!(
        everything.len(),
        listed + 3,
        "/mcp lists connectors' tools, `search`, `fetch` and `lists`, nothing else"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_sample_is_answered_by_the_fake_and_a_repeat_by_the_buffer() {
    let f = fakes().await;
    let server = server(&f, "contract-samples", |_| ()).await;
    for c in CONNECTORS {
        let fake = fake_of(&f, c);
        let mut mcp = Mcp::initialize(server.url(&format!("/mcp/{}", c.id))).await;
        for sample in c.samples {
            let before = fake.requests();
            let first = succeeded(sample.tool, &mcp.call(sample.tool, arguments(sample)).await);
            assert!(
                fake.requests() >= before + sample.requests,
                "{}: the first call asked the platform at least as often as its sample says",
                sample.tool
            );
            let asked = fake.requests();
            let again = succeeded(sample.tool, &mcp.call(sample.tool, arguments(sample)).await);
            assert_eq!(
                fake.requests(),
                asked,
                "{}: the repeat came from the buffer",
                sample.tool
            );
            assert_eq!(
                first["structuredContent"], again["structuredContent"],
                "{}: the buffer gives the same answer",
                sample.tool
            );
            let text = again["content"][0]["text"].as_str().unwrap_or("");
            assert!(
                text.contains("buffer"),
                "{}: the repeat says where it came from: {text}",
                sample.tool
            );
        }
    }
    server.stop().await;
}

/// A fault the fakes can be put in, and what the platform's timeout is while it lasts.
#[derive(Clone, Copy, Debug)]
enum Fault {
    Garbage,
    ServerError,
    TimeOut,
}

impl Fault {
    fn set(self, fake: &FakeHandle, on: bool) {
        match self {
            Fault::Garbage => fake.set_garbage(on),
            Fault::ServerError => fake.set_fail_every(on.then_some(1)),
            Fault::TimeOut => fake.set_latency(if on { Duration::from_secs(3) } else { Duration::ZERO }),
        }
    }
}

async fn faults_are_tool_errors_naming_the_platform(fault: Fault) {
    let f = fakes().await;
    let server = server(&f, &format!("contract-{fault:?}"), |cfg| {
        for c in CONNECTORS {
            cfg.platforms.get_mut(c.platform.as_str()).expect("platform").timeout_ms = 400;
        }
    })
    .await;
    for c in CONNECTORS {
        let fake = fake_of(&f, c);
        let name = c.platform.display_name();
        let mut mcp = Mcp::initialize(server.url(&format!("/mcp/{}", c.id))).await;
        fault.set(fake, true);
        for sample in c.samples {
            let before = fake.requests();
            let text = failed(sample.tool, &mcp.call(sample.tool, arguments(sample)).await);
            assert!(fake.requests() > before, "{}: the platform was asked", sample.tool);
            assert!(
                text.contains(name),
                "{} under {fault:?}: the error names {name}: {text}",
                sample.tool
            );
        }
        fault.set(fake, false);
        // Nothing failed was kept: the platform answers again, and so does the tool.
        for sample in c.samples {
            let before = fake.requests();
            succeeded(sample.tool, &mcp.call(sample.tool, arguments(sample)).await);
            assert!(fake.requests() > before, "{}: asked again after {fault:?}", sample.tool);
        }
    }
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreadable_answer_is_a_tool_error_naming_the_platform() {
    faults_are_tool_errors_naming_the_platform(Fault::Garbage).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_500_is_a_tool_error_naming_the_platform() {
    faults_are_tool_errors_naming_the_platform(Fault::ServerError).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_time_out_is_a_tool_error_naming_the_platform() {
    faults_are_tool_errors_naming_the_platform(Fault::TimeOut).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_429_is_queued_once_more_where_the_platform_has_a_limit() {
    let f = fakes().await;
    let mut limited = BTreeSet::new();
    let server = server(&f, "contract-429", |cfg| {
        // A session per sample: more than one address may open a minute by default.
        cfg.sessions.initialize_per_minute = 1_000;
        for c in CONNECTORS {
            if cfg.first_service(c.platform).and_then(|s| cfg.scheduler(s)).is_some() {
                limited.insert(c.platform);
            }
        }
    })
    .await;
    for c in CONNECTORS {
        let fake = fake_of(&f, c);
        let name = c.platform.display_name();
        for sample in c.samples {
            let mcp = Mcp::initialize(server.url(&format!("/mcp/{}", c.id))).await;
            let (requests, refused) = (fake.requests(), fake.rate_limited());
            fake.set_rate_limit_storm(true);
            let call = {
                let args = arguments(sample);
                let tool = sample.tool;
                tokio::spawn(async move { mcp.call_with_id(1, tool, args).await })
            };
            until(&format!("{} meets a 429", sample.tool), || {
                fake.rate_limited() > refused
            })
            .await;
            fake.set_rate_limit_storm(false);
            let reply = call.await.expect("the call");
            assert_eq!(fake.rate_limited(), refused + 1, "{}: one 429", sample.tool);
            if limited.contains(&c.platform) && !sample.as_system {
                succeeded(sample.tool, &reply);
                assert_eq!(
                    fake.requests(),
                    requests + 1 + sample.requests,
                    "{}: asked once more after the 429",
                    sample.tool
                );
            } else {
                let text = failed(sample.tool, &reply);
                assert!(
                    text.contains(name),
                    "{}: the 429 error names {name}: {text}",
                    sample.tool
                );
                assert_eq!(fake.requests(), requests + 1, "{}: not asked again", sample.tool);
            }
        }
    }
    assert!(!limited.is_empty(), "some platform has a limit BesluitBron keeps");
    server.stop().await;
}

/// The string properties of a tool's input schema, with their `maxLength` (`None`: none
/// declared). An array of strings counts as its items.
fn string_properties(schema: &Value) -> Vec<(String, Option<u64>)> {
    let is_string = |s: &Value| match &s["type"] {
        Value::String(t) => t == "string",
        Value::Array(types) => types.iter().any(|t| t == "string"),
        _ => false,
    };
    let mut out = Vec::new();
    for (name, property) in schema["properties"].as_object().into_iter().flatten() {
        if is_string(property) {
            out.push((name.clone(), property["maxLength"].as_u64()));
        } else if is_string(&property["items"]) {
            out.push((name.clone(), property["items"]["maxLength"].as_u64()));
        }
    }
    out
}

/// The platform call counters, as `/metrics` exports them.
fn platform_call_lines(server: &Server) -> Vec<String> {
    server
        .state
        .metrics()
        .render()
        .lines()
        .filter(|l| l.contains("platform_calls") && !l.starts_with('#'))
        .map(str::to_owned)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_string_argument_has_a_maximum_length_and_a_longer_one_is_refused_locally() {
    let f = fakes().await;
    let server = server(&f, "contract-lengths", |_| ()).await;
    let mut checked = 0;
    for c in CONNECTORS {
        let fake = fake_of(&f, c);
        let mut mcp = Mcp::initialize(server.url(&format!("/mcp/{}", c.id))).await;
        for tool in mcp.list_tools().await {
            let name = tool["name"].as_str().unwrap_or("").to_owned();
            let sample = c.samples.iter().find(|s| s.tool == name).expect("sampled");
            for (property, max) in string_properties(&tool["inputSchema"]) {
                let max = max.unwrap_or_else(|| panic!("{name}: `{property}` declares no maxLength in its schema"));
                assert!(
                    max > 0 && max <= 4096,
                    "{name}: `{property}` maxLength {max} is within 1..=4096"
                );
                let mut args = arguments(sample);
                let long = "x".repeat(usize::try_from(max).expect("small") + 1);
                let is_array = tool["inputSchema"]["properties"][&property]["type"] == json!("array");
                args[&property] = if is_array { json!([long]) } else { json!(long) };
                let (requests, calls) = (fake.requests(), platform_call_lines(&server));
                let text = failed(&name, &mcp.call(&name, args).await);
                assert_eq!(
                    fake.requests(),
                    requests,
                    "{name}: `{property}` too long: no platform request"
                );
                assert_eq!(
                    platform_call_lines(&server),
                    calls,
                    "{name}: `{property}` too long: no platform call counted"
                );
                // A day is told its form; any other string its limit.
                let form = if tool["inputSchema"]["properties"][&property]["format"] == json!("date") {
                    "YYYY-MM-DD".to_owned()
                } else {
                    format!("at most {max}")
                };
                assert!(
                    text.contains(&format!("`{property}`")) && text.contains(&form),
                    "{name}: the refusal names `{property}` and {form}: {text}"
                );
                assert!(
                    text.len() < 200 && !text.contains("xxxxxxxx"),
                    "{name}: the refusal is short and does not echo the value: {text}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 0, "some tool has a string argument");
    server.stop().await;
}

/// The JSON Schema formats every validator knows.
const REGISTERED_FORMATS: &[&str] = &[
    "date-time",
    "date",
    "time",
    "duration",
    "email",
    "idn-email",
    "hostname",
    "idn-hostname",
    "ipv4",
    "ipv6",
    "uri",
    "uri-reference",
    "iri",
    "iri-reference",
    "uuid",
    "uri-template",
    "json-pointer",
    "relative-json-pointer",
    "regex",
];

/// What in `schema` (at `at`, any depth) a strict client warns about or refuses.
fn unportable(at: &str, schema: &Value, found: &mut Vec<String>) {
    match schema {
        Value::Object(o) => {
            for (k, v) in o {
                let here = format!("{at}/{k}");
                match (k.as_str(), v) {
                    ("type", Value::Array(_)) => found.push(format!("{here}: a type array {v}")),
                    ("format", Value::String(f)) if !REGISTERED_FORMATS.contains(&f.as_str()) => {
                        found.push(format!("{here}: unknown format {f}"))
                    }
                    ("default", Value::Null) => found.push(format!("{here}: default null")),
                    ("type", Value::String(t)) if t == "null" => found.push(format!("{here}: a null type")),
                    ("nullable", _) => found.push(format!("{here}: nullable")),
                    ("enum", Value::Array(values)) if values.iter().any(Value::is_null) => {
                        found.push(format!("{here}: null in an enum"))
                    }
                    _ => {}
                }
                // Values under `properties` are schemas; under `default`, `enum`,
                // `const` and `examples` they are data.
                if !matches!(k.as_str(), "default" | "enum" | "const" | "examples") {
                    unportable(&here, v, found);
                }
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                unportable(&format!("{at}/{i}"), item, found);
            }
        }
        _ => {}
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_schema_is_portable() {
    let f = fakes().await;
    let server = server(&f, "contract-portable", |_| ()).await;
    let tools = Mcp::initialize(server.url("/mcp")).await.list_tools().await;
    assert!(!tools.is_empty());
    let mut found = Vec::new();
    for t in &tools {
        let name = t["name"].as_str().unwrap_or("");
        unportable(&format!("{name}/inputSchema"), &t["inputSchema"], &mut found);
        assert!(t["outputSchema"].is_object(), "{name}: an outputSchema");
        unportable(&format!("{name}/outputSchema"), &t["outputSchema"], &mut found);
    }
    assert!(
        found.is_empty(),
        "schemas a strict client warns about:\n{}",
        found.join("\n")
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_tool_list_at_mcp_is_compact() {
    let f = fakes().await;
    // As deployed: ORI at its real (switched-off) address is not offered.
    let real_ori = besluitbron_server::connectors::by_id("ori")
        .expect("ori")
        .defaults
        .base_url;
    let server = server(&f, "contract-compact", |c| {
        c.platforms.get_mut("ori").expect("ori").base_url = real_ori.to_owned();
    })
    .await;
    let tools = Mcp::initialize(server.url("/mcp")).await.list_tools().await;
    let mut sizes: Vec<(usize, String)> = tools
        .iter()
        .map(|t| {
            (
                serde_json::to_vec(t).expect("encodes").len(),
                t["name"].as_str().unwrap_or("").to_owned(),
            )
        })
        .collect();
    sizes.sort();
    let total = serde_json::to_vec(&json!({ "tools": tools })).expect("encodes").len();
    println!(
        "tools/list on /mcp: {total} bytes; largest: {:?}",
        sizes.iter().rev().take(5).collect::<Vec<_>>()
    );
    // `search` carries every platform search's filters (its size grows with the
    // platforms; the list's total holds it); every other tool stays within 4 KB.
    let over: Vec<_> = sizes.iter().filter(|(s, n)| *s > 4096 && n != "search").collect();
    assert!(over.is_empty(), "tools over 4 KB in tools/list: {over:?}");
    assert!(
        total <= 48 * 1024,
        "tools/list on /mcp is {total} bytes (at most 49,152); largest: {:?}",
        sizes.iter().rev().take(5).collect::<Vec<_>>()
    );
    assert!(
        tools.iter().all(|t| t["outputSchema"].is_object()),
        "every tool keeps its outputSchema"
    );
    server.stop().await;
}

/// Names the shared vocabulary replaced (`connectors::vocabulary`): a tool answering with
/// one speaks a platform's shape or an earlier one of BesluitBron's.
const REPLACED: &[&str] = &[
    "hits",
    "items",
    "rulings",
    "entity_id",
    "entity_type",
    "identifier",
    "ecli",
    "total_count",
    "total_is_approximate",
    "count",
    "continuation",
    "matching",
];

/// What in `v` (at `at`, any depth) is not in the vocabulary: a key that is not
/// snake_case English, or one the vocabulary replaced.
fn off_vocabulary(at: &str, v: &Value, found: &mut Vec<String>) {
    match v {
        Value::Object(map) => {
            for (key, value) in map {
                let snake = key.starts_with(|c: char| c.is_ascii_lowercase())
                    && key
                        .chars()
                        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
                if !snake {
                    found.push(format!("{at}: `{key}` is not a snake_case name"));
                } else if REPLACED.contains(&key.as_str()) {
                    found.push(format!("{at}: `{key}` is a name the vocabulary replaced"));
                }
                off_vocabulary(&format!("{at}.{key}"), value, found);
            }
        }
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                off_vocabulary(&format!("{at}[{i}]"), item, found);
            }
        }
        _ => {}
    }
}

/// Checks one tool's structured content against the vocabulary; returns the results
/// that name a reading tool, as (tool, id).
fn speaks_the_vocabulary(
    tool: &str,
    platform: &str,
    listed: &BTreeSet<String>,
    content: &Value,
    found: &mut Vec<String>,
) -> Vec<(String, String)> {
    off_vocabulary(tool, content, found);
    let mut readable = Vec::new();
    let text = |v: &Value, key: &str| v.get(key).and_then(Value::as_str).map(str::to_owned);
    match content.get("results") {
        Some(Value::Array(results)) => {
            for (i, r) in results.iter().enumerate() {
                let at = format!("{tool}.results[{i}]");
                if text(r, "id").is_none_or(|id| id.is_empty()) {
                    found.push(format!("{at}: no `id`"));
                }
                if text(r, "title").is_none() {
                    found.push(format!("{at}: no `title`"));
                }
                if text(r, "platform").as_deref() != Some(platform) {
                    found.push(format!("{at}: `platform` is not `{platform}`"));
                }
                match text(r, "tool") {
                    Some(t) if !listed.contains(&t) => found.push(format!("{at}: `tool` {t} is not listed")),
                    Some(t) => readable.push((t, text(r, "id").unwrap_or_default())),
                    None => {}
                }
            }
            if content.get("total").is_some() && !content["total_is_exact"].is_boolean() {
                found.push(format!("{tool}: `total` without `total_is_exact`"));
            }
            if let Some(next) = content.get("next_offset")
                && !next.is_u64()
            {
                found.push(format!("{tool}: `next_offset` is not a count"));
            }
        }
        Some(_) => found.push(format!("{tool}: `results` is not a list")),
        None if tool.ends_with("_search") => found.push(format!("{tool}: a search without `results`")),
        // A status report is neither a list of records nor one record.
        None if tool.ends_with("_status") => {}
        None => {
            for key in ["id", "title", "platform"] {
                if text(content, key).is_none() {
                    found.push(format!("{tool}: the record read has no `{key}`"));
                }
            }
            if text(content, "platform").is_some_and(|p| p != platform) {
                found.push(format!("{tool}: `platform` is not `{platform}`"));
            }
        }
    }
    readable
}

/// The vocabulary (`connectors::vocabulary`), held over every tool's sample answer:
/// snake_case names and none the vocabulary replaced; `results` with `id`, `title`,
/// `platform` and a listed reading `tool`; `total` with `total_is_exact`; a record read
/// with its `id`, `title` and `platform`. And each result's id reads with the tool it
/// names (the first result of every sample, asked of the fake).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_speaks_the_vocabulary() {
    let f = fakes().await;
    let server = server(&f, "contract-vocabulary", |_| ()).await;
    let mut mcp = Mcp::initialize(server.url("/mcp")).await;
    // A result's reading tool is one BesluitBron serves: listed at its platform's address,
    // and answering by name at `/mcp` too.
    let mut listed: BTreeSet<String> = BTreeSet::new();
    for c in CONNECTORS {
        let tools = Mcp::initialize(server.url(&format!("/mcp/{}", c.id)))
            .await
            .list_tools()
            .await;
        listed.extend(tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)));
    }
    let mut found = Vec::new();
    let mut read = 0;
    for c in CONNECTORS {
        for sample in c.samples {
            let answer = succeeded(sample.tool, &mcp.call(sample.tool, arguments(sample)).await);
            let content = &answer["structuredContent"];
            assert!(content.is_object(), "{}: structured content", sample.tool);
            let readable = speaks_the_vocabulary(sample.tool, c.platform.as_str(), &listed, content, &mut found);
            if let Some((tool, id)) = readable.into_iter().next() {
                let reply = mcp.call(&tool, json!({ "id": id })).await;
                let result = result(&tool, &reply);
                if result["isError"] == json!(true) {
                    found.push(format!(
                        "{}: its result `{id}` does not read with {tool}: {}",
                        sample.tool, result["content"][0]["text"]
                    ));
                }
                read += 1;
            }
        }
    }
    assert!(read >= 7, "results of every search were read ({read})");
    assert!(found.is_empty(), "off the vocabulary:\n{}", found.join("\n"));
    server.stop().await;
}

/// Each connector's part in `search` reads its tool's kept answer typed (the
/// tools are called as values, their answers not read back from JSON): for the shared
/// question, the listing is exactly what the tool's structured content holds of it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_keyword_search_lists_what_its_tool_answers() {
    use besluitbron_server::call::{Call, Reply as ToolReply};
    use besluitbron_server::connectors::search::{Asked, KeywordSearch};
    use besluitbron_server::connectors::vocabulary::Listing;

    let f = fakes().await;
    let server = server(&f, "contract-listing", |_| {}).await;
    let calls = &server.state.calls;
    let asked = Asked {
        query: "stikstof".into(),
        limit: 3,
        date_from: None,
        date_to: None,
    };
    let (mut searches, mut results) = (0, 0);
    for c in calls.registry() {
        let KeywordSearch::Tool(spec) = c.search else {
            continue;
        };
        let arguments = (spec.arguments)(&asked);
        let call = Call::system(spec.tool.name, c.platform);
        let listed = match (spec.list)(&calls.ctx, &call, arguments.clone()).await {
            Ok(listing) => listing,
            Err(_) => panic!("{}: the fake answers the shared question", spec.tool.name),
        };
        let ToolReply::Result(result) = (spec.tool.run)(&calls.ctx, &call, arguments).await else {
            panic!("{}: one process owns every platform", spec.tool.name);
        };
        let structured = result.structured_content.as_ref().expect("structured content");
        let read = Listing::read(structured).expect("the shared vocabulary");
        assert_eq!(listed, read, "{}: its listing is its tool's answer", spec.tool.name);
        searches += 1;
        results += listed.results.len();
    }
    assert!(searches >= 6, "every keyword search was checked ({searches})");
    assert!(results > 0, "the fakes found something to compare");
    server.stop().await;
}
