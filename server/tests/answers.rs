//! What an assistant receives, for every connector's tools on the fakes:
//! - **answer budgets**: a tool's default answer — its sample call with every paging and
//!   size argument left out, and the call with no arguments where the tool accepts one —
//!   is at most [`ANSWER_BUDGET_BYTES`] of compact JSON for the whole result, text and
//!   structured content together;
//! - **exact schemas**: every tool declares an object `outputSchema`, and every answer's
//!   `structuredContent` validates against it (a JSON Schema 2020-12 validator), both in
//!   the default call and in the sample call as the registry writes it.
//!
//! Runs over the registry (`CONNECTORS`), so a new connector's tools are held to it by
//! their samples.

use crate::support;

use std::collections::BTreeMap;

use besluitbron_server::connectors::schema::ANSWER_BUDGET_BYTES;
use besluitbron_server::connectors::{CONNECTORS, Sample};
use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, temp_dir};

/// Arguments that page or size an answer: left out, the tool's defaults apply.
const SIZING: &[&str] = &["limit", "length", "offset", "page_size", "top", "skip", "continuation"];

fn sample_arguments(sample: &Sample) -> Value {
    serde_json::from_str(sample.arguments).unwrap_or_else(|e| panic!("{}: sample arguments: {e}", sample.tool))
}

/// The sample's arguments without any paging or size argument.
fn default_arguments(sample: &Sample) -> Value {
    let mut v = sample_arguments(sample);
    if let Some(o) = v.as_object_mut() {
        o.retain(|k, _| !SIZING.contains(&k.as_str()));
    }
    v
}

/// The listed tools' output schemas, compiled, by tool name; fails for one that is not
/// an object schema or does not compile.
fn output_validators(tools: &[Value]) -> BTreeMap<String, jsonschema::Validator> {
    let mut out = BTreeMap::new();
    for t in tools {
        let name = t["name"].as_str().unwrap_or("").to_owned();
        let schema = t
            .get("outputSchema")
            .unwrap_or_else(|| panic!("{name}: declares an outputSchema"));
        assert_eq!(
            schema["type"],
            json!("object"),
            "{name}: an object output schema: {schema}"
        );
        let validator = jsonschema::draft202012::new(schema)
            .unwrap_or_else(|e| panic!("{name}: the output schema compiles: {e}\n{schema}"));
        out.insert(name, validator);
    }
    out
}

/// Calls `tool` with `args`; returns the whole JSON-RPC result, or `None` for a tool
/// error (the caller decides whether that is allowed).
async fn call(mcp: &mut Mcp, tool: &str, args: Value) -> Option<Value> {
    let r = mcp.call(tool, args.clone()).await;
    let m = r
        .message
        .unwrap_or_else(|| panic!("{tool} {args}: no JSON-RPC answer: {} {}", r.status, r.text));
    assert!(m.get("error").is_none(), "{tool} {args}: a JSON-RPC error: {m}");
    let result = m["result"].clone();
    (result["isError"] != json!(true)).then_some(result)
}

/// Checks one answer against the budget (when `budgeted`) and its tool's schema.
/// The largest default answer's text and structured content seen, in bytes, with the
/// call (printed at the end of the budget test, for the figures in docs/tools.md).
static LARGEST: std::sync::Mutex<[(usize, String); 2]> =
    std::sync::Mutex::new([(0, String::new()), (0, String::new())]);

fn check(
    tool: &str,
    args: &Value,
    result: &Value,
    budgeted: bool,
    validators: &BTreeMap<String, jsonschema::Validator>,
    problems: &mut Vec<String>,
) {
    // The text and the structured content each (a host keeps each; `fetch`'s
    // text item is its structured content as JSON, as ChatGPT's contract asks).
    let parts = [
        ("text", serde_json::to_vec(&result["content"]).expect("JSON").len()),
        (
            "structured content",
            serde_json::to_vec(&result["structuredContent"]).expect("JSON").len(),
        ),
    ];
    for (i, (part, size)) in parts.into_iter().enumerate() {
        if budgeted
            && let Ok(mut largest) = LARGEST.lock()
            && size > largest[i].0
        {
            largest[i] = (size, format!("{tool} {args}"));
        }
        if budgeted && size > ANSWER_BUDGET_BYTES {
            problems.push(format!(
                "{tool} {args}: the default answer's {part} is {size} bytes, over the {ANSWER_BUDGET_BYTES}-byte budget"
            ));
        }
    }
    let Some(structured) = result.get("structuredContent") else {
        problems.push(format!("{tool} {args}: no structuredContent"));
        return;
    };
    let Some(validator) = validators.get(tool) else {
        return; // reported once, above
    };
    let errors: Vec<String> = validator
        .iter_errors(structured)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if !errors.is_empty() {
        problems.push(format!(
            "{tool} {args}: structuredContent does not match its outputSchema: {}",
            errors.join("; ")
        ));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_default_answer_fits_the_budget_and_every_answer_its_output_schema() {
    let f = fakes().await;
    let dir = temp_dir("answers");
    let server = Server::start(config(&f, &dir)).await;
    let mut mcp = Mcp::initialize(server.url("/mcp")).await;
    let tools = mcp.list_tools().await;
    let mut problems = Vec::new();
    for t in &tools {
        if t.get("outputSchema").is_none() {
            problems.push(format!(
                "{}: declares no outputSchema",
                t["name"].as_str().unwrap_or("")
            ));
        }
    }
    let with_schema: Vec<Value> = tools
        .iter()
        .filter(|t| t.get("outputSchema").is_some())
        .cloned()
        .collect();
    let validators = output_validators(&with_schema);
    let mut answered = ask_every_sample(&mut mcp, &validators, &mut problems).await;
    ask_the_broadest_answers(&mut mcp, &validators, &mut problems).await;
    // `search`, `fetch` and `lists`: one tool each.
    answered += 3;
    assert!(
        answered >= tools.len(),
        "every listed tool was asked ({answered} of {})",
        tools.len()
    );
    if let Ok(largest) = LARGEST.lock() {
        println!(
            "largest default answer: text {} bytes ({}), structured content {} bytes ({})",
            largest[0].0, largest[0].1, largest[1].0, largest[1].1
        );
    }
    assert!(
        problems.is_empty(),
        "{} problems:\n{}",
        problems.len(),
        problems.join("\n")
    );
    server.stop().await;
}

/// Asks each connector's samples with their defaults, with no arguments where the tool
/// takes none, and as given, each answer checked into `problems`; how many were asked.
async fn ask_every_sample(
    mcp: &mut Mcp,
    validators: &BTreeMap<String, jsonschema::Validator>,
    problems: &mut Vec<String>,
) -> usize {
    let mut answered = 0;
    for c in CONNECTORS {
        for sample in c.samples {
            let (tool, given) = (sample.tool, sample_arguments(sample));
            let defaults = default_arguments(sample);
            match call(mcp, tool, defaults.clone()).await {
                Some(result) => check(tool, &defaults, &result, true, validators, problems),
                None => problems.push(format!("{tool} {defaults}: the default call is a tool error")),
            }
            // With no arguments, where the tool takes none (a list, a status): the
            // broadest default answer there is.
            if defaults != json!({})
                && let Some(result) = call(mcp, tool, json!({})).await
            {
                check(tool, &json!({}), &result, true, validators, problems);
            }
            if given != defaults {
                match call(mcp, tool, given.clone()).await {
                    Some(result) => check(tool, &given, &result, false, validators, problems),
                    None => problems.push(format!("{tool} {given}: the sample call is a tool error")),
                }
            }
            answered += 1;
        }
    }
    answered
}

/// Asks the broadest default answers, each checked into `problems`: `tk_votes` by
/// words, `search` over every platform, and `fetch` of each platform's reading tool's
/// sample id and of a long ruling, the last two also in ChatGPT's contract.
async fn ask_the_broadest_answers(
    mcp: &mut Mcp,
    validators: &BTreeMap<String, jsonschema::Validator>,
    problems: &mut Vec<String>,
) {
    // `tk_votes` by words (17.8 KB at the default limit for `vuurwerk`), the
    // broadest of its default answers.
    let asked = json!({"query": "vuurwerk"});
    match call(mcp, "tk_votes", asked.clone()).await {
        Some(result) => check("tk_votes", &asked, &result, true, validators, problems),
        None => problems.push("tk_votes {\"query\":\"vuurwerk\"}: a tool error".to_owned()),
    }
    // `lists`, every list with its defaults: the list tool's own answer, within the budget
    // and `lists`' output schema.
    for c in CONNECTORS {
        for tool in c.lists {
            let list = tool.name.strip_prefix(&format!("{}_", c.id)).unwrap_or(tool.name);
            let asked = json!({"platform": c.id, "list": list});
            match call(mcp, "lists", asked.clone()).await {
                Some(result) => check("lists", &asked, &result, true, validators, problems),
                None => problems.push(format!("lists {asked}: a tool error")),
            }
        }
    }
    // `search` over every platform, with its default limit: within the budget, and in
    // ChatGPT's contract.
    let (search_contract, fetch_contract) = (openai_schema("search"), openai_schema("fetch"));
    let asked = json!({"query": "stikstof"});
    match call(mcp, "search", asked.clone()).await {
        Some(result) => {
            check("search", &asked, &result, true, validators, problems);
            in_the_contract("search", &asked, &result, &search_contract, problems);
        }
        None => problems.push("search: the default call is a tool error".to_owned()),
    }
    // `fetch` of each platform's reading tool's sample id, and of a long ruling: the text
    // item and the structured content each within the budget (the text item is the same
    // object as JSON).
    for id in [
        "ECLI:NL:PHR:2026:400",
        "gmb-2026-10000",
        "BWBR0047001",
        "CVDR700001",
        "opentk:2026D10001",
    ] {
        let asked = json!({ "id": id });
        match call(mcp, "fetch", asked.clone()).await {
            Some(result) => {
                check("fetch", &asked, &result, true, validators, problems);
                in_the_contract("fetch", &asked, &result, &fetch_contract, problems);
            }
            None => problems.push(format!("fetch {id}: a tool error")),
        }
    }
}

/// The schema of ChatGPT's `tool` contract (`tests/schemas/openai-<tool>.schema.json`,
/// written from OpenAI's documentation; its provenance is in the README beside it).
fn openai_schema(tool: &str) -> jsonschema::Validator {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/schemas")
        .join(format!("openai-{tool}.schema.json"));
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let schema: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    jsonschema::draft202012::new(&schema).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether `result` keeps ChatGPT's contract: one content item, of type `text`, whose
/// JSON is the structured content, which the contract's schema accepts.
fn in_the_contract(
    tool: &str,
    args: &Value,
    result: &Value,
    contract: &jsonschema::Validator,
    problems: &mut Vec<String>,
) {
    let content = result["content"].as_array().cloned().unwrap_or_default();
    if content.len() != 1 || content[0]["type"] != json!("text") {
        problems.push(format!("{tool} {args}: not exactly one text item: {content:?}"));
        return;
    }
    let text: Value = match serde_json::from_str(content[0]["text"].as_str().unwrap_or_default()) {
        Ok(v) => v,
        Err(e) => {
            problems.push(format!("{tool} {args}: the text item is not JSON: {e}"));
            return;
        }
    };
    if text != result["structuredContent"] {
        problems.push(format!("{tool} {args}: the text item is not the structured content"));
    }
    let errors: Vec<String> = contract
        .iter_errors(&text)
        .take(5)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    if !errors.is_empty() {
        problems.push(format!(
            "{tool} {args}: outside ChatGPT's contract: {}",
            errors.join("; ")
        ));
    }
}

#[test]
fn the_contracts_refuse_what_chatgpt_does_not_read() {
    let (search, fetch) = (openai_schema("search"), openai_schema("fetch"));
    assert!(search.is_valid(&json!({"results": [{"id": "stb-2018-84", "title": "Besluit", "url": "https://zoek.officielebekendmakingen.nl/stb-2018-84.html"}], "platforms": []})));
    assert!(
        search.is_valid(&json!({"results": [{"id": "a", "title": "A"}]})),
        "no url: not cited"
    );
    for bad in [
        json!({"platforms": []}),
        json!({"results": [{"title": "no id"}]}),
        json!({"results": [{"id": "a", "title": "A", "url": ""}]}),
        json!({"results": [{"id": "a", "title": "A", "url": "zoek.officielebekendmakingen.nl"}]}),
    ] {
        assert!(!search.is_valid(&bad), "{bad}");
    }
    assert!(fetch.is_valid(&json!({"id": "a", "title": "A", "text": "…", "metadata": {"platform": "ob"}})));
    assert!(!fetch.is_valid(&json!({"id": "a", "title": "A"})), "no text");
    assert!(!fetch.is_valid(&json!({"id": "a", "title": "A", "text": "", "metadata": "ob"})));
}

#[test]
fn the_validator_refuses_what_does_not_match() {
    // The check above could fail: a schema with a required field refuses an answer
    // without it, and one with an enum refuses another value.
    let schema = json!({"type": "object", "required": ["hits"], "properties": {
        "hits": {"type": "array"}, "sort": {"enum": ["date_desc", "date_asc"]}}});
    let v = jsonschema::draft202012::new(&schema).expect("compiles");
    assert!(v.is_valid(&json!({"hits": []})));
    assert!(!v.is_valid(&json!({})));
    assert!(!v.is_valid(&json!({"hits": [], "sort": "newest"})));
}

/// A document tool's default answer for a document whose text is far longer than a page
/// fits the budget, says there is more, and does not repeat the page in its structured
/// content.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_documents_default_answer_fits_the_budget_and_says_how_to_read_on() {
    use besluitbron_fakes::{obv_corpus, tk::has_long_rendition, tk::tk_corpus};
    let f = fakes().await;
    let dir = temp_dir("answers-long");
    let server = Server::start(config(&f, &dir)).await;
    let mut mcp = Mcp::initialize(server.url("/mcp")).await;
    let obv = obv_corpus()
        .entities()
        .iter()
        .find(|e| e.long)
        .expect("a long obv document");
    let tk = tk_corpus()
        .documents()
        .iter()
        .enumerate()
        .find(|(i, d)| has_long_rendition(*i) && d["Verwijderd"] == json!(false))
        .map(|(_, d)| d["Id"].as_str().expect("an id").to_owned())
        .expect("a long tk rendition");
    let long = [
        ("obv_document", json!({"id": obv.entity_id})),
        ("tk_document_text", json!({"id": tk})),
        ("opentk_document", json!({"id": "2026D10001"})),
    ];
    for (tool, args) in long {
        let result = call(&mut mcp, tool, args.clone())
            .await
            .unwrap_or_else(|| panic!("{tool} {args}: a tool error"));
        let size = serde_json::to_vec(&result).expect("JSON").len();
        assert!(size <= ANSWER_BUDGET_BYTES, "{tool} {args}: {size} bytes");
        let s = &result["structuredContent"];
        assert_eq!(s["has_more"], json!(true), "{tool}: {s}");
        assert!(s.get("text").is_none(), "{tool}: the page is not repeated: {s}");
        let next = s["next_offset"].as_u64().expect("a next offset");
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        assert!(text.contains(&format!("`offset` {next}")), "{tool}: {text}");
        assert!(
            s["total_length"].as_u64().unwrap_or(0) > 50_000,
            "{tool}: a long text: {s}"
        );
    }
    server.stop().await;
}
