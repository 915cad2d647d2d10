//! OpenTK on the search page: `opentk_search` (words only: OpenTK has no date or
//! organisation filter) paged over the one kept answer, and `opentk_document` for the
//! document view, its text paged by the tool.

use serde_json::{Value, json};

use super::render::{self, DocumentShown};
use crate::call::Clients;
use crate::connectors::page_spec::{
    DocView, Hits, PageDocument, PageQuery, PageSearch, PageSpec, StatusColumn, StatusRows, StatusSection, SystemTools,
    TextPage, document_page, object, offset_token,
};

/// Hits per page.
const PER_PAGE: u64 = 10;

/// The most hits the tool shows (its `limit`).
const MAX_SHOWN: u64 = 100;

/// The registry's entry.
pub const PAGE: PageSpec = PageSpec::Search(PageSearch {
    tool: "opentk_search",
    organisation: false,
    dates: false,
    arguments,
    hits,
    document: Some(PageDocument {
        tool: "opentk_document",
        arguments: document_page,
        view,
    }),
});

/// The hits already shown on earlier pages.
fn skip(q: &PageQuery) -> Result<u64, String> {
    let skip = offset_token(&q.next)?.unwrap_or(0);
    if skip >= MAX_SHOWN {
        return Err(format!(
            "OpenTK shows at most {MAX_SHOWN} hits of a search; narrow the words"
        ));
    }
    Ok(skip)
}

fn arguments(q: &PageQuery) -> Result<rmcp::model::JsonObject, String> {
    let limit = (skip(q)? + PER_PAGE).min(MAX_SHOWN);
    Ok(object([
        ("query", Some(Value::String(q.q.trim().to_owned()))),
        ("limit", Some(json!(limit))),
    ]))
}

fn hits(declared: Hits, q: &PageQuery, _clients: &Clients) -> Result<Hits, String> {
    let skip = skip(q)?;
    let results = declared.items;
    let end = skip + results.len().saturating_sub(skip as usize) as u64;
    let total = declared.total;
    let more = total.is_some_and(|t| t > end) && end < MAX_SHOWN;
    Ok(Hits {
        items: results.into_iter().skip(skip as usize).collect(),
        total,
        next: more.then(|| end.to_string()),
        note: declared.note,
    })
}

fn view(v: Value, _offset: usize, _clients: &Clients) -> Result<DocView, String> {
    let page: TextPage = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    let d: DocumentShown = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let mut meta = vec![("number", d.id.clone())];
    if d.truncated {
        meta.push(("note", format!("text cut at {} characters", render::MAX_TEXT_CHARS)));
    }
    Ok(DocView {
        title: if d.title.is_empty() { d.id } else { d.title },
        meta,
        next_offset: page.next_offset(),
        offset: page.text_offset,
        total: Some(d.text_chars),
        text: page.text,
        source_url: Some(d.page_url),
    })
}

/// OpenTK's section of the status page: when each of its harvesters last ran.
pub const STATUS: StatusSection = StatusSection {
    id: "opentk_harvesters",
    anchor: "opentk",
    title: ("OpenTK — versheid van de verzamelaars", "OpenTK — harvester freshness"),
    noun: ("verzamelaars", "harvesters"),
    columns: &[
        StatusColumn {
            field: "name",
            title: ("verzamelaar", "harvester"),
            filter: None,
        },
        StatusColumn {
            field: "seconds_ago",
            title: ("seconden geleden", "seconds ago"),
            filter: None,
        },
    ],
    rows: harvesters,
};

fn harvesters(tools: &dyn SystemTools) -> StatusRows<'_> {
    Box::pin(async move {
        let status: render::StatusAnswer =
            serde_json::from_value(tools.call("opentk_status", Default::default()).await?)
                .map_err(|e| format!("the harvester status could not be read ({e})"))?;
        Ok(status
            .harvesters
            .into_iter()
            .map(|h| json!({"name": h.name, "seconds_ago": h.seconds_ago}))
            .collect())
    })
}
