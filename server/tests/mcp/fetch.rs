//! The fetch tool: each platform's ids and links read with the text the platform's own
//! tool gives, and an unknown form refused with the forms it reads.

use crate::support;

use besluitbron_server::connectors::CONNECTORS;
use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, structured, temp_dir};

use super::result_text;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_reads_each_platforms_ids_with_the_text_its_own_tool_gives() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("fetch"))).await;
    let mut c = Mcp::initialize(server.url("/mcp")).await;
    for (id, tool, args, platform) in fetch_cases() {
        fetch_reads_as_the_tool(&mut c, id, tool, args, platform).await;
    }
    // An unknown form is an error listing the forms read; nothing asked.
    let r = c.call("fetch", json!({"id": "hello world"})).await;
    let e = support::tool_error_text(&r);
    assert!(
        e.contains("ECLI") && e.contains("wetten.overheid.nl") && e.contains("platform:id"),
        "{e}"
    );
    server.stop().await;
}

/// (fetch's id, the platform tool and its arguments, the platform): ids the fakes serve.
fn fetch_cases() -> Vec<(&'static str, &'static str, Value, &'static str)> {
    vec![
        (
            "ECLI:NL:PHR:2026:400",
            "rechtspraak_ruling",
            json!({"id": "ECLI:NL:PHR:2026:400"}),
            "rechtspraak",
        ),
        ("gmb-2026-10000", "ob_document", json!({"id": "gmb-2026-10000"}), "ob"),
        (
            "opentk:2026D10001",
            "opentk_document",
            json!({"id": "2026D10001"}),
            "opentk",
        ),
        ("BWBR0047001", "bwb_read", json!({"id": "BWBR0047001"}), "bwb"),
        ("CVDR700001", "cvdr_read", json!({"id": "CVDR700001"}), "cvdr"),
        (
            "72f7ab9b-dc59-4e67-8a04-798a744c256e",
            "tk_document_text",
            json!({"id": "72f7ab9b-dc59-4e67-8a04-798a744c256e"}),
            "tk",
        ),
        // Real ids and links (the fakes serve the corpus's real files under them).
        (
            "ECLI:NL:CBB:2020:1",
            "rechtspraak_ruling",
            json!({"id": "ECLI:NL:CBB:2020:1"}),
            "rechtspraak",
        ),
        (
            "https://uitspraken.rechtspraak.nl/inziendocument?id=ECLI:NL:GHAMS:2020:3025",
            "rechtspraak_ruling",
            json!({"id": "ECLI:NL:GHAMS:2020:3025"}),
            "rechtspraak",
        ),
        ("stb-2018-84", "ob_document", json!({"id": "stb-2018-84"}), "ob"),
        (
            "https://zoek.officielebekendmakingen.nl/stcrt-2015-47076.html",
            "ob_document",
            json!({"id": "stcrt-2015-47076"}),
            "ob",
        ),
        (
            "BWBR0018451@2025-06-01#2",
            "bwb_read",
            json!({"id": "BWBR0018451", "date": "2025-06-01", "article": "2"}),
            "bwb",
        ),
        (
            "https://wetten.overheid.nl/BWBR0008326/2011-01-01",
            "bwb_read",
            json!({"id": "BWBR0008326", "date": "2011-01-01"}),
            "bwb",
        ),
        ("CVDR100394_2", "cvdr_read", json!({"id": "CVDR100394_2"}), "cvdr"),
        (
            "https://lokaleregelgeving.overheid.nl/CVDR680781/1",
            "cvdr_read",
            json!({"id": "CVDR680781_1"}),
            "cvdr",
        ),
        // A meeting and an activity number: the debate's report (the corpus's real
        // committee debate on the MIVD); OpenTK's activity (agenda, video) by its prefix.
        (
            "vergadering:29d8cf68-423e-4ae9-b4f0-7e908c7f5311",
            "tk_debate",
            json!({"id": "vergadering:29d8cf68-423e-4ae9-b4f0-7e908c7f5311"}),
            "tk",
        ),
        ("2025A04496", "tk_debate", json!({"id": "2025A04496"}), "tk"),
        (
            "opentk:2026A00007",
            "opentk_activity",
            json!({"id": "2026A00007"}),
            "opentk",
        ),
    ]
}

/// `id` read by fetch on `c`: the text `tool` gives for `args` (asked twice, so that it
/// comes from the buffer, as fetch's does), the metadata of `platform`, and both forms
/// of the answer within 16 KB.
async fn fetch_reads_as_the_tool(c: &mut Mcp, id: &str, tool: &str, args: Value, platform: &str) {
    // Asked twice, so that the tool's answer comes from the buffer, as fetch's does.
    structured(&c.call(tool, args.clone()).await);
    let own = c.call(tool, args).await;
    let own_text = result_text(&own);
    let fetched = c.call("fetch", json!({"id": id})).await;
    let shown = structured(&fetched);
    assert_eq!(
        shown["text"].as_str(),
        Some(own_text.as_str()),
        "{id}: the tool's own text"
    );
    assert_eq!(shown["metadata"]["platform"], platform, "{id}");
    assert_eq!(shown["metadata"]["tool"], tool, "{id}");
    assert_eq!(shown["id"], id, "{id}: the id as given");
    assert!(shown["title"].as_str().is_some_and(|t| !t.is_empty()), "{id}");
    // The title and page are the record's, as its own tool says them where it does.
    let own = structured(&own);
    for field in ["title", "url"] {
        if own[field].is_string() && !(platform == "tk" && field == "url") {
            assert_eq!(shown[field], own[field], "{id}: its {field} is the tool's");
        }
    }
    let text: Value = serde_json::from_str(&result_text(&fetched)).expect("the text item is JSON");
    assert_eq!(text, shown, "{id}: the text item is the structured content");
    for (name, part) in [
        ("text", result_text(&fetched).len()),
        ("structured", shown.to_string().len()),
    ] {
        assert!(part <= 16 * 1024, "{id}: {name} is {part} bytes");
    }
}

/// Every id form every connector declares, walked against the fakes (taken from the
/// registry, so a form added later is walked too) with an id of that form the fake
/// serves (its `sample`, else its example): `fetch` answers the id as given, a title a
/// person reads (never the id, with or without its platform), and the record's public
/// page as `url` on every platform that declares one. A bare id another platform claims
/// first (an activity number is the Tweede Kamer's) is asked as `platform:id`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fetch_answers_every_id_form_with_its_id_a_title_and_its_page() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("fetch-forms"))).await;
    let mut c = Mcp::initialize(server.url("/mcp")).await;
    let mut walked = 0;
    let mut problems = Vec::new();
    for connector in CONNECTORS {
        let Some(reader) = connector.reads else { continue };
        let platform = connector.platform.as_str();
        for form in reader.forms {
            walked += 1;
            let served = form.sample.unwrap_or(form.example);
            let mut given = served.to_owned();
            let mut shown = fetched(&mut c, &given).await;
            if shown.as_ref().is_ok_and(|s| s["metadata"]["platform"] != platform) {
                given = format!("{platform}:{served}");
                shown = fetched(&mut c, &given).await;
            }
            let shown = match shown {
                Ok(shown) => shown,
                Err(e) => {
                    problems.push(format!("{platform} `{given}` ({}): {e}", form.what));
                    continue;
                }
            };
            let title = shown["title"].as_str().unwrap_or_default();
            let bare = served
                .split_once(&format!("{platform}:"))
                .map_or(served, |(_, rest)| rest);
            let id_like = [given.clone(), format!("{platform}:{bare}"), bare.to_owned()];
            let url = shown["url"].as_str();
            let checks = [
                (shown["id"] == given.as_str(), "its id is not the one given"),
                (
                    !title.trim().is_empty() && !id_like.iter().any(|i| i == title),
                    "its title is its id",
                ),
                (
                    !title.starts_with(&format!("{platform}:")),
                    "its title is a `platform:id`",
                ),
                (
                    !reader.public_pages || url.is_some_and(|u| u.starts_with("http")),
                    "no public page",
                ),
                (shown["metadata"]["platform"] == platform, "read on another platform"),
            ];
            for (ok, what) in checks {
                if !ok {
                    problems.push(format!("{platform} `{given}` ({}): {what}: {shown}", form.what));
                }
            }
        }
    }
    assert!(walked >= 20, "the registry declares {walked} id forms");
    assert!(
        problems.is_empty(),
        "{} of {walked}:\n{}",
        problems.len(),
        problems.join("\n")
    );
    server.stop().await;
}

/// `fetch {"id": id}`'s structured content, or its error's text.
async fn fetched(c: &mut Mcp, id: &str) -> Result<Value, String> {
    let reply = c.call("fetch", json!({ "id": id })).await;
    match reply.message.as_ref().map(|m| &m["result"]) {
        Some(r) if r["isError"] != json!(true) => Ok(r["structuredContent"].clone()),
        Some(r) => Err(r["content"].to_string()),
        None => Err(reply.text.clone()),
    }
}
