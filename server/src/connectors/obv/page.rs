//! OpenBesluitvorming on the search page: `obv_search` (words, organisation, dates; ten
//! hits a page by offset) and `obv_document` for the document view.

use serde_json::{Value, json};

use super::render::{DocumentAnswer, SearchAnswer};
use crate::connectors::Clients;
use crate::page::spec::{
    DocView, Hits, PageDocument, PageHit, PageQuery, PageSearch, PageSpec, TextPage, document_page, non_empty, object,
    offset_token, some_str,
};

/// Hits per page.
const PER_PAGE: u64 = 10;

/// The registry's entry.
pub const PAGE: PageSpec = PageSpec::Search(PageSearch {
    tool: "obv_search",
    organisation: true,
    dates: true,
    arguments,
    hits,
    document: Some(PageDocument {
        tool: "obv_document",
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

fn hits(v: Value, q: &PageQuery, _clients: &Clients) -> Result<Hits, String> {
    let offset = offset_token(&q.next)?;
    let answer: SearchAnswer = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let shown = answer.results.len() as u64;
    Ok(Hits {
        items: answer
            .results
            .into_iter()
            .map(|h| PageHit {
                title: h.title,
                organisation: non_empty(&h.organization),
                date: non_empty(&h.date),
                kind: non_empty(&h.entity_type),
                source_url: h.download_url,
                doc_id: Some(h.entity_id),
            })
            .collect(),
        total: Some(answer.total_count),
        next: answer
            .has_more
            .then(|| (offset.unwrap_or(0) + shown.max(PER_PAGE)).to_string()),
        note: None,
    })
}

fn view(v: Value, _offset: usize, _clients: &Clients) -> Result<DocView, String> {
    let page: TextPage = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    let d: DocumentAnswer = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let mut meta = vec![
        ("kind", d.entity_type),
        ("organisation", d.organization),
        ("date", d.date),
    ];
    if let Some(m) = d.motion {
        meta.push(("result", m.result));
    }
    meta.retain(|(_, v)| !v.is_empty());
    Ok(DocView {
        title: d.title,
        meta,
        next_offset: page.next_offset(),
        offset: page.text_offset,
        total: page.total_length,
        text: page.text,
        source_url: d.pdf_url.or(d.download_url),
    })
}
