//! The Tweede Kamer on the search page: `tk_search` (words in title or subject, dates;
//! documents), ten hits a page (`limit` 10), the next page by the tool's own
//! continuation; `tk_document_text` for the document view.

use serde_json::{Value, json};

use super::render::{Listed, PageAnswer};
use super::text::TextAnswer;
use crate::call::Clients;
use crate::connectors::page_spec::{
    DocView, Hits, PageDocument, PageHit, PageQuery, PageSearch, PageSpec, TextPage, document_page, object, some_str,
};
use crate::platforms::tk::{Document, TkClient};

/// Hits per page.
const PER_PAGE: usize = 10;

/// The registry's entry.
pub const PAGE: PageSpec = PageSpec::Search(PageSearch {
    tool: "tk_search",
    organisation: false,
    dates: true,
    arguments,
    hits,
    document: Some(PageDocument {
        tool: "tk_document_text",
        arguments: document_page,
        view,
    }),
});

fn arguments(q: &PageQuery) -> Result<rmcp::model::JsonObject, String> {
    // The next-page link carries the tool's own continuation, which the tool checks.
    if let Some(c) = q.next.as_deref().filter(|t| !t.is_empty()) {
        return Ok(object([
            ("continuation", Some(json!(c))),
            ("limit", Some(json!(PER_PAGE))),
        ]));
    }
    Ok(object([
        ("words", Some(Value::String(q.q.trim().to_owned()))),
        ("kind", Some(json!("documents"))),
        ("date_from", some_str(&q.date_from)),
        ("date_to", some_str(&q.date_to)),
        ("limit", Some(json!(PER_PAGE))),
    ]))
}

fn hits(v: Value, _q: &PageQuery, clients: &Clients) -> Result<Hits, String> {
    let answer: PageAnswer<Document> = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let client = clients.get::<TkClient>(super::PLATFORM).ok();
    let next = answer.continuation.clone();
    Ok(Hits {
        items: answer
            .items
            .iter()
            .map(|d| PageHit {
                title: d.title().to_owned(),
                organisation: Some(d.kamer.clone().unwrap_or_else(|| "Tweede Kamer".to_owned())),
                date: d.datum.as_deref().map(|s| s.chars().take(10).collect()),
                kind: d.soort.clone(),
                source_url: client
                    .as_ref()
                    .and_then(|c| c.document_links(d.id()).ok())
                    .map(|l| l.resource_url),
                doc_id: Some(d.id().to_owned()),
            })
            .collect(),
        total: answer.count,
        next,
        note: None,
    })
}

fn view(v: Value, _offset: usize, _clients: &Clients) -> Result<DocView, String> {
    let page: TextPage = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    let d: TextAnswer = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let mut meta = Vec::new();
    if let Some(n) = &d.number {
        meta.push(("number", n.clone()));
    }
    if let Some(c) = &d.changed_at {
        meta.push(("date", c.chars().take(10).collect()));
    }
    if let Some(u) = &d.unreadable {
        meta.push(("note", u.clone()));
    }
    Ok(DocView {
        title: d.subject.clone().or(d.number.clone()).unwrap_or(d.id),
        meta,
        next_offset: page.next_offset(),
        offset: page.text_offset,
        total: page.total_length,
        text: page.text,
        source_url: Some(d.file_url),
    })
}
