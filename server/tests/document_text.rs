//! `tk_document_text` through the real server against the fake Tweede Kamer: every kind
//! of file the platform serves, the XML rendition first, the buffer rules, and hostile
//! files answered as clear tool errors while other calls keep being answered.

mod support;

use besluitbron_fakes::tk::{FileKind, has_xml_rendition, tk_corpus};
use serde_json::{Value, json};
use support::{Mcp, Server, config, fakes, structured, temp_dir, tool_error_text};

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
        (json!({"id": "../../etc"}), "not a document Id"),
        (json!({"id": "x".repeat(10_000)}), "at most 64 are accepted"),
        (json!({"id": id, "length": 0}), "`length` must be between 1 and 100000"),
    ] {
        let e = tool_error_text(&c.call("tk_document_text", args).await);
        assert!(e.contains(says) && e.len() < 200, "{e}");
    }
    assert_eq!(f.tk.requests(), requests, "refused before any platform call");
    server.stop().await;
}
