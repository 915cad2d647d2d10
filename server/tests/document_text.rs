//! `tk_document_text` through the real server against the fake Tweede Kamer: every kind
//! of file the platform serves, the XML rendition first, the buffer rules, and hostile
//! files answered as clear tool errors while other calls keep being answered.

use crate::support;

use besluitbron_fakes::tk::{FileKind, has_xml_rendition, tk_corpus};
use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, temp_dir, tool_error_text};

/// A document tool's structured content with the page of text its text content holds
/// (after the summary line and a blank line) as `text`: the text is not repeated in the
/// structured content.
fn structured(r: &Reply) -> Value {
    let mut v = support::structured(r);
    let content = r.message.as_ref().expect("message")["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    if v.get("text_offset").is_some() && v.get("text").is_none() {
        let page = content.split_once("\n\n").map_or("", |(_, page)| page).to_owned();
        v["text"] = Value::String(page);
    }
    v
}

/// The id of the first document (not deleted) whose file is `kind` and whose XML
/// rendition is present or not as asked.
fn document(kind: FileKind, rendition: bool) -> String {
    tk_corpus()
        .documents()
        .iter()
        .enumerate()
        .find(|(i, d)| {
            FileKind::of(*i) == kind && has_xml_rendition(*i) == rendition && d["Verwijderd"] == json!(false)
        })
        .map(|(_, d)| d["Id"].as_str().unwrap().to_owned())
        .expect("such a document")
}

fn text_of(v: &Value) -> String {
    v["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn every_kind_of_file_reads_or_says_why_not() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("text-kinds"))).await;
    let mut c = Mcp::initialize(server.url("/mcp/tk")).await;

    let pdf = structured(
        &c.call("tk_document_text", json!({"id": document(FileKind::Pdf, false)}))
            .await,
    );
    assert_eq!(
        (pdf["source"].as_str(), pdf["format"].as_str()),
        (Some("file"), Some("pdf"))
    );
    assert!(
        text_of(&pdf).contains("financiële gevolgen voor gemeenten in Noord-Brabant"),
        "{pdf}"
    );

    let word = structured(
        &c.call("tk_document_text", json!({"id": document(FileKind::DocxAsPdf, false)}))
            .await,
    );
    assert_eq!(
        word["format"], "docx",
        "sniffed, not the PDF the header promised: {word}"
    );
    assert!(text_of(&word).contains("verantwoordelijkheid"), "{word}");

    let rtf = structured(
        &c.call("tk_document_text", json!({"id": document(FileKind::Rtf, false)}))
            .await,
    );
    assert_eq!(rtf["format"], "rtf");
    assert!(text_of(&rtf).contains("geëvalueerd"), "{rtf}");

    let columns = structured(
        &c.call(
            "tk_document_text",
            json!({"id": document(FileKind::TwoColumnPdf, false)}),
        )
        .await,
    );
    assert!(text_of(&columns).contains("gemeentelijke herindeling"), "{columns}");

    let xml = structured(
        &c.call("tk_document_text", json!({"id": document(FileKind::Pdf, true)}))
            .await,
    );
    assert_eq!(
        (xml["source"].as_str(), xml["format"].as_str()),
        (Some("xml rendition"), Some("xml"))
    );
    assert!(
        text_of(&xml).contains("1. financiële gevolgen voor gemeenten;"),
        "{xml}"
    );

    let scan = tool_error_text(
        &c.call("tk_document_text", json!({"id": document(FileKind::Scan, false)}))
            .await,
    );
    assert!(
        scan.contains("no text layer (1 page(s)") && scan.contains("/resource"),
        "{scan}"
    );

    let doc = tool_error_text(
        &c.call("tk_document_text", json!({"id": document(FileKind::Doc, false)}))
            .await,
    );
    assert!(
        doc.contains("Word 97-2003 (DOC), a format BesluitBron does not read") && doc.contains("/resource"),
        "{doc}"
    );
    server.stop().await;
}

#[tokio::test]
async fn pages_come_from_the_buffer_and_bad_arguments_are_refused_locally() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("text-pages"))).await;
    let mut c = Mcp::initialize(server.url("/mcp/tk")).await;
    let id = document(FileKind::Pdf, false);
    let first = structured(&c.call("tk_document_text", json!({"id": id, "length": 50})).await);
    assert_eq!(first["has_more"], json!(true));
    assert_eq!(text_of(&first).chars().count(), 50);
    let requests = f.tk.requests();
    let second = structured(
        &c.call("tk_document_text", json!({"id": id, "offset": 50, "length": 50}))
            .await,
    );
    assert_eq!(second["text_offset"], json!(50));
    assert_eq!(f.tk.requests(), requests, "the next page came from the buffer");
    let total = first["total_length"].as_u64().unwrap();
    assert!(total > 500, "{first}");

    for (args, says) in [
        (json!({"id": "../../etc"}), "is not a Tweede Kamer document"),
        (json!({"id": "x".repeat(10_000)}), "at most 300 are accepted"),
        (json!({"id": id, "length": 0}), "`length` must be 1 to 100000"),
    ] {
        let e = tool_error_text(&c.call("tk_document_text", args).await);
        assert!(e.contains(says) && e.len() < 240, "{e}");
    }
    assert_eq!(f.tk.requests(), requests, "refused before any platform call");
    server.stop().await;
}

/// tk_search shows a window of the platform's 250-record page: `offset` first walks the
/// kept page (no request), then asks the platform's next page (`$skip=250`) once.
#[tokio::test]
async fn tk_search_pages_through_a_kept_page_before_asking_the_next() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("tk-window"))).await;
    let mut c = Mcp::initialize(server.url("/mcp/tk")).await;
    let before = f.tk.requests();
    let first = support::structured(&c.call("tk_search", json!({"query": "stikstof"})).await);
    assert_eq!(first["results"].as_array().map(Vec::len), Some(20), "the default limit");
    assert!(first["total"].as_u64().unwrap_or(0) > 250, "{first}");
    assert_eq!(first["total_is_exact"], true);
    assert_eq!(f.tk.requests(), before + 1);
    let mut seen: Vec<Value> = first["results"].as_array().cloned().unwrap_or_default();
    let mut offset = first["next_offset"].as_u64().expect("a next offset");
    while seen.len() < 250 {
        let next = support::structured(
            &c.call(
                "tk_search",
                json!({"query": "stikstof", "offset": offset, "limit": 100}),
            )
            .await,
        );
        seen.extend(next["results"].as_array().cloned().unwrap_or_default());
        offset = next["next_offset"].as_u64().expect("a next offset");
    }
    assert_eq!(seen.len(), 250, "windows of one page, none repeated");
    assert_eq!(offset, 250);
    let ids: std::collections::BTreeSet<&str> = seen.iter().filter_map(|r| r["id"].as_str()).collect();
    assert_eq!(ids.len(), 250, "every record once");
    assert_eq!(f.tk.requests(), before + 1, "the kept page answered every window");
    let later = support::structured(
        &c.call("tk_search", json!({"query": "stikstof", "offset": offset}))
            .await,
    );
    assert_eq!(f.tk.requests(), before + 2, "the next page asked once");
    assert!(
        later["results"][0]["id"].as_str().is_some_and(|id| !ids.contains(id)),
        "{later}"
    );
    let again = support::structured(&c.call("tk_search", json!({"query": "stikstof", "offset": 260})).await);
    assert_eq!(f.tk.requests(), before + 2, "a window of the kept second page");
    assert_eq!(again["results"][0], later["results"][10]);
    // A kind outside the list is a tool error naming the allowed values.
    let e = tool_error_text(&c.call("tk_search", json!({"query": "a", "kind": "motions"})).await);
    assert!(e.contains("`documents`") && e.contains("`cases`"), "{e}");
    server.stop().await;
}
