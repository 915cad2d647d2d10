//! OpenBesluitvorming on the search page: `obv_search` (words, organisation, dates; ten
//! hits a page by offset) and `obv_document` for the document view.

use std::collections::HashMap;

use serde_json::{Value, json};

use super::render::{DocumentShown, SourcesShown, StatusShown};
use crate::call::Clients;
use crate::connectors::page_spec::{
    DocView, Hits, PageDocument, PageQuery, PageSearch, PageSpec, StatusColumn, StatusRows, StatusSection, SystemTools,
    TextPage, document_page, non_empty, object, offset_token, some_str,
};

/// Hits per page.
const PER_PAGE: u64 = 10;

/// The registry's entry.
pub const PAGE: PageSpec = PageSpec::Search(PageSearch {
    tool: "obv_search",
    organisation: true,
    dates: true,
    arguments,
    hits: Hits::as_declared,
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

fn view(v: Value, _offset: usize, _clients: &Clients) -> Result<DocView, String> {
    let page: TextPage = serde_json::from_value(v.clone()).map_err(|e| e.to_string())?;
    let d: DocumentShown = serde_json::from_value(v).map_err(|e| e.to_string())?;
    let mut meta = vec![("kind", d.kind), ("organisation", d.organization), ("date", d.date)];
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
        source_url: d.pdf_url.or(d.url),
    })
}

/// OpenBesluitvorming's section of the status page: the Laadstatus of every source.
pub const STATUS: StatusSection = StatusSection {
    id: "obv_sources",
    anchor: "laadstatus",
    title: ("OpenBesluitvorming — Laadstatus", "OpenBesluitvorming — Laadstatus"),
    noun: ("bronnen", "sources"),
    columns: &[
        StatusColumn {
            field: "label",
            title: ("bron", "source"),
            filter: None,
        },
        StatusColumn {
            field: "organisation_type",
            title: ("soort", "type"),
            filter: Some("type"),
        },
        StatusColumn {
            field: "state",
            title: ("status", "state"),
            filter: Some("state"),
        },
        StatusColumn {
            field: "last_success_at",
            title: ("laatste succes", "last success"),
            filter: None,
        },
        StatusColumn {
            field: "latest_content_date",
            title: ("nieuwste inhoud", "latest content"),
            filter: None,
        },
        StatusColumn {
            field: "coverage",
            title: ("dekking", "coverage"),
            filter: None,
        },
        StatusColumn {
            field: "last_error",
            title: ("laatste fout", "last error"),
            filter: None,
        },
    ],
    rows: laadstatus,
};

/// One source of the Laadstatus, as the status page shows it.
#[derive(serde::Serialize)]
struct SourceRow {
    key: String,
    label: String,
    organisation_type: Option<String>,
    state: String,
    last_success_at: Option<String>,
    latest_content_date: Option<String>,
    /// Documents held of the supplier's, when the platform checked (`coverage`).
    coverage: Option<String>,
    last_error: Option<String>,
}

fn laadstatus(tools: &dyn SystemTools) -> StatusRows<'_> {
    Box::pin(async move {
        // Every source, in windows of the largest `limit` obv_status takes: one platform
        // answer (the kept status), read as often as it has windows.
        let mut sources = Vec::new();
        let mut offset = 0;
        loop {
            let arguments = object([
                ("state", Some(json!("any"))),
                ("limit", Some(json!(100))),
                ("offset", Some(json!(offset))),
            ]);
            let window: StatusShown = serde_json::from_value(tools.call("obv_status", arguments).await?)
                .map_err(|e| format!("the Laadstatus could not be read ({e})"))?;
            sources.extend(window.results);
            match window.tally.next_offset {
                Some(next) if next > offset => offset = next,
                _ => break,
            }
        }
        // The organisation types come from the source list (kept for days), all of it.
        let all = object([("limit", Some(json!(400)))]);
        let types: HashMap<String, String> = match tools.call("obv_sources", all).await {
            Ok(v) => serde_json::from_value::<SourcesShown>(v)
                .map(|s| {
                    s.results
                        .into_iter()
                        .filter_map(|s| Some((s.item.id, s.item.kind?)))
                        .collect()
                })
                .unwrap_or_default(),
            Err(_) => HashMap::new(),
        };
        sources
            .into_iter()
            .map(|s| {
                serde_json::to_value(SourceRow {
                    organisation_type: types.get(&s.item.id).cloned(),
                    coverage: coverage(s.held_documents, s.supplier_documents),
                    key: s.item.id,
                    label: s.item.title,
                    state: s.state,
                    last_success_at: s.last_success_at,
                    latest_content_date: s.latest_content_date,
                    last_error: s.last_error_message,
                })
                .map_err(|e| format!("a Laadstatus row could not be written ({e})"))
            })
            .collect()
    })
}

/// "held of the supplier's (percent)", when the platform checked it.
fn coverage(held: Option<u64>, supplier: Option<u64>) -> Option<String> {
    let (held, supplier) = (held?, supplier?);
    if supplier == 0 {
        return Some(format!("{held} / 0"));
    }
    let percent = (held as f64 / supplier as f64 * 100.0).round();
    Some(format!("{held} / {supplier} ({percent} %)"))
}
