//! The Tweede Kamer on the search page: `tk_search` (words in title or subject, dates;
//! documents), ten hits a page by offset; `tk_document_text` for the document view.

use serde_json::{Value, json};

use super::text::TextShown;
use crate::call::Clients;
use crate::connectors::page_spec::{
    DocView, Hits, PageDocument, PageQuery, PageSearch, PageSpec, TextPage, document_page, object, offset_token,
    some_str,
};
use crate::platforms::tk::TkClient;

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
    let offset = offset_token(&q.next)?;
    Ok(object([
        ("query", Some(Value::String(q.q.trim().to_owned()))),
        ("kind", Some(json!("documents"))),
        ("date_from", some_str(&q.date_from)),
        ("date_to", some_str(&q.date_to)),
        ("limit", Some(json!(PER_PAGE))),
        ("offset", offset.map(|o| json!(o))),
    ]))
}

fn hits(mut hits: Hits, _q: &PageQuery, clients: &Clients) -> Result<Hits, String> {
    // The original of a document is its file at the Kamer.
    if let Ok(client) = clients.get::<TkClient>(crate::platforms::tk::PLATFORM) {
        for hit in &mut hits.items {
            hit.source_url = hit
                .doc_id
                .as_deref()
                .and_then(|id| client.document_links(id).ok())
                .map(|l| l.resource_url);
        }
    }
    Ok(hits)
}

fn view(v: Value, _offset: usize, _clients: &Clients) -> Result<DocView, String> {
    let page: TextPage = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    let d: TextShown = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let mut meta = Vec::new();
    if let Some(n) = &d.number {
        meta.push(("number", n.clone()));
    }
    if let Some(c) = &d.date {
        meta.push(("date", c.chars().take(10).collect()));
    }
    Ok(DocView {
        title: d.title,
        meta,
        next_offset: page.next_offset(),
        offset: page.text_offset,
        total: page.total_length,
        text: page.text,
        source_url: Some(d.url),
    })
}
