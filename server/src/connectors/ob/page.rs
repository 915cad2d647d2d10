//! Officiële Bekendmakingen on the search page: `ob_search` (words, organisation,
//! publication dates; ten hits a page by offset) and `ob_document` for the document view.

use serde_json::{Value, json};

use super::render::{Publication, SearchAnswer};
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
    hits: Hits::as_declared,
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

/// A publication as a hit: every organisation that made it, its own date when it has
/// no publication date, its PDF when it has no page.
fn page_hit(p: Publication) -> PageHit {
    let organisations = (!p.organizations.is_empty()).then(|| p.organizations.join(", "));
    let document_date = p.document_date;
    let pdf_url = p.pdf_url;
    let mut hit = PageHit::of(p.item);
    hit.organisation = organisations.or(hit.organisation);
    hit.date = hit.date.or(document_date);
    hit.source_url = hit.source_url.or(pdf_url);
    hit
}

/// `ob_search`'s hits on the page: every publication as [`page_hit`] shows it, and the
/// platform's warnings as the note.
pub(super) fn search_hits(answer: &SearchAnswer) -> Hits {
    Hits {
        total: Some(answer.total),
        next: answer.next_offset.map(|o| o.to_string()),
        note: (!answer.warnings.is_empty()).then(|| answer.warnings.join("; ")),
        items: answer.hits.iter().map(|h| page_hit(Publication::of(h))).collect(),
    }
}

fn view(v: Value, _offset: usize, _clients: &Clients) -> Result<DocView, String> {
    let page: TextPage = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    let record: Publication = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let hit = page_hit(record);
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
