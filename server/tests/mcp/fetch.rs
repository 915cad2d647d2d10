//! The fetch tool: each platform's ids and links read with the text the platform's own
//! tool gives, and an unknown form refused with the forms it reads.

use crate::support;

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
    assert!(
        shown["id"]
            .as_str()
            .is_some_and(|i| i.starts_with(&format!("{platform}:"))),
        "{shown}"
    );
    assert!(shown["title"].as_str().is_some_and(|t| !t.is_empty()), "{id}");
    let text: Value = serde_json::from_str(&result_text(&fetched)).expect("the text item is JSON");
    assert_eq!(text, shown, "{id}: the text item is the structured content");
    for (name, part) in [
        ("text", result_text(&fetched).len()),
        ("structured", shown.to_string().len()),
    ] {
        assert!(part <= 16 * 1024, "{id}: {name} is {part} bytes");
    }
}
