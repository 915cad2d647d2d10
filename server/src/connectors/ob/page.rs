//! Officiële Bekendmakingen on the search page: `ob_search` (words, organisation,
//! publication dates; ten hits a page by offset) and `ob_document` for the document view.

use serde_json::{Value, json};

use super::render::{Hit, SearchAnswer};
use crate::call::Clients;
use crate::connectors::page_spec::{
    DocView, Hits, PageDocument, PageHit, PageQuery, PageSearch, PageSpec, TextPage, document_page, non_empty, object,
    offset_token, some_str,
};

/// Hits per page.
const PER_PAGE: u64 = 10;

/// The registry's entry.
pub const PAGE: PageSpec = PageSpec::Search(PageSearch {
    tool: "ob_search",
    organisation: true,
    dates: true,
    arguments,
    hits,
    document: Some(PageDocument {
        tool: "ob_document",
        arguments: document_page,
        view,
    }),
});

fn arguments(q: &PageQuery) -> Result<rmcp::model::JsonObject, String> {
    let offset = offset_token(&q.next)?;
    Ok(object([
        ("query", non_empty(&q.q).map(Value::String)),
        ("organization", some_str(&q.organisation)),
        ("date_from", some_str(&q.date_from)),
        ("date_to", some_str(&q.date_to)),
        ("limit", Some(json!(PER_PAGE))),
        ("offset", offset.map(|o| json!(o))),
    ]))
}

fn page_hit(h: Hit) -> PageHit {
    PageHit {
        organisation: (!h.organizations.is_empty()).then(|| h.organizations.join(", ")),
        date: h.published.or(h.document_date),
        kind: h.document_type.or(h.publication),
        source_url: h.url.or(h.pdf_url),
        doc_id: Some(h.identifier),
        title: h.title,
    }
}

fn hits(v: Value, _q: &PageQuery, _clients: &Clients) -> Result<Hits, String> {
    let answer: SearchAnswer = serde_json::from_value(v).map_err(|e| e.to_string())?;
    Ok(Hits {
        total: Some(answer.total),
        next: answer.next_offset.map(|o| o.to_string()),
        note: (!answer.warnings.is_empty()).then(|| answer.warnings.join("; ")),
        items: answer.hits.into_iter().map(page_hit).collect(),
    })
}

#[derive(serde::Deserialize)]
struct Record {
    publication: Hit,
}

fn view(v: Value, _offset: usize, _clients: &Clients) -> Result<DocView, String> {
    let page: TextPage = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    let record: Record = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let hit = page_hit(record.publication);
    let mut meta = Vec::new();
    for (label, value) in [
        ("kind", &hit.kind),
        ("organisation", &hit.organisation),
        ("date", &hit.date),
    ] {
        if let Some(v) = value {
            meta.push((label, v.clone()));
        }
    }
    Ok(DocView {
        title: hit.title,
        meta,
        next_offset: page.next_offset(),
        offset: page.text_offset,
        total: page.total_length,
        text: page.text,
        source_url: hit.source_url,
    })
}
