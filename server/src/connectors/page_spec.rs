//! What a connector declares for the search page (`ConnectorSpec::page`): which of its
//! tools a page search calls, with which arguments, and what the page makes of the hits
//! its keyword search declares (typed, through the same platform call as the tool's, never
//! read back from the tool's JSON); and its document view, from the reading tool's
//! structured content deserialized into the connector's own render types (so a shape
//! change is a compile error or a visible failure, never a silent blank). A connector without a keyword search says why. A connector may
//! also add a section of its own to the status page ([`StatusSection`]): a table made
//! from its own tools' answers.

use std::future::Future;
use std::pin::Pin;

use rmcp::model::JsonObject;
use serde_json::Value;

use crate::call::Clients;

/// The page's way to the tools: a call as BesluitBron's system session (R-L7), the
/// tool's structured content or its error message.
pub trait SystemTools: Sync {
    /// Calls `tool` with `arguments`.
    fn call<'a>(
        &'a self,
        tool: &'static str,
        arguments: JsonObject,
    ) -> Pin<Box<dyn Future<Output = Result<Value, String>> + Send + 'a>>;
}

/// The rows of a status section, or why there are none.
pub type StatusRows<'a> = Pin<Box<dyn Future<Output = Result<Vec<Value>, String>> + Send + 'a>>;

/// A connector's section of the status page (`/status`, and `/status.json` under
/// [`StatusSection::id`]): a table whose rows it makes from its own tools' answers.
#[derive(Debug)]
pub struct StatusSection {
    /// Its key in `/status.json`, e.g. `obv_sources`.
    pub id: &'static str,
    /// Its anchor on the page, e.g. `laadstatus`.
    pub anchor: &'static str,
    /// Its heading (Dutch, English).
    pub title: (&'static str, &'static str),
    /// What a row counts, for "12 of 331 sources" (Dutch, English).
    pub noun: (&'static str, &'static str),
    /// Its columns: each a field of the rows.
    pub columns: &'static [StatusColumn],
    /// Its rows (JSON objects), from calls of its tools.
    pub rows: for<'a> fn(&'a dyn SystemTools) -> StatusRows<'a>,
}

/// One column of a status section.
#[derive(Debug)]
pub struct StatusColumn {
    /// The row field it shows.
    pub field: &'static str,
    /// Its heading (Dutch, English).
    pub title: (&'static str, &'static str),
    /// The page offers a filter on it, under this query parameter (e.g. `state`).
    pub filter: Option<&'static str>,
}

/// A connector's part in the search page.
#[derive(Debug)]
pub enum PageSpec {
    /// It is searched on the page.
    Search(PageSearch),
    /// It is not, and this is why (Dutch, English).
    Without {
        /// Dutch.
        nl: &'static str,
        /// English.
        en: &'static str,
    },
}

/// Filters every platform of the page understands, as a person typed them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageQuery {
    /// The words.
    pub q: String,
    /// `YYYY-MM-DD`, checked.
    pub date_from: Option<String>,
    /// `YYYY-MM-DD`, checked.
    pub date_to: Option<String>,
    /// An organisation (a source key, an organisation's name), where the platform has one.
    pub organisation: Option<String>,
    /// This platform's next-page token, as the page issued it (a connector checks it).
    pub next: Option<String>,
}

/// How a connector is searched from the page.
#[derive(Debug)]
pub struct PageSearch {
    /// The search tool.
    pub tool: &'static str,
    /// Whether it takes the organisation filter.
    pub organisation: bool,
    /// Whether it takes the date range.
    pub dates: bool,
    /// The tool's arguments for a query; `Err` for a query it cannot take (a next-page
    /// token it did not issue), said on the page.
    pub arguments: fn(&PageQuery) -> Result<JsonObject, String>,
    /// The page's hits of the tool's typed answer for this query, from the hits its
    /// keyword search declares ([`crate::connectors::search::KeywordTool::hits`]).
    pub hits: fn(Hits, &PageQuery, &Clients) -> Result<Hits, String>,
    /// Its document view, if it has one.
    pub document: Option<PageDocument>,
}

/// How a connector's document is shown.
#[derive(Debug)]
pub struct PageDocument {
    /// The document tool.
    pub tool: &'static str,
    /// The tool's arguments for a document id and a text offset.
    pub arguments: fn(&str, usize) -> JsonObject,
    /// The view in the tool's structured content.
    pub view: fn(Value, usize, &Clients) -> Result<DocView, String>,
}

/// One platform's page of hits.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Hits {
    /// The hits shown.
    pub items: Vec<PageHit>,
    /// Total matches, when the platform says.
    pub total: Option<u64>,
    /// The next page's token, when there is one.
    pub next: Option<String>,
    /// What the platform noted (a warning, an incomplete answer).
    pub note: Option<String>,
}

impl Hits {
    /// A search's listing as the page shows it: its `results` in the shared vocabulary,
    /// the total and the next page's offset (the page's next token), nothing noted.
    pub fn of(listing: crate::connectors::vocabulary::Listing) -> Hits {
        Hits {
            items: listing.results.into_iter().map(PageHit::of).collect(),
            total: listing.tally.total,
            next: listing.tally.next_offset.map(|o| o.to_string()),
            note: None,
        }
    }

    /// The hits as the search declared them, for a page whose query changes nothing.
    pub fn as_declared(hits: Hits, _q: &PageQuery, _clients: &Clients) -> Result<Hits, String> {
        Ok(hits)
    }
}

/// One hit.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PageHit {
    /// Its title.
    pub title: String,
    /// The organisation, the court or the chamber.
    pub organisation: Option<String>,
    /// Its date.
    pub date: Option<String>,
    /// Its kind.
    pub kind: Option<String>,
    /// The original at the platform.
    pub source_url: Option<String>,
    /// The id for BesluitBron's document view, when it has one.
    pub doc_id: Option<String>,
}

impl PageHit {
    /// A result of the shared vocabulary as a hit: its id opens the document view.
    pub fn of(item: crate::connectors::vocabulary::Item) -> PageHit {
        PageHit {
            title: item.title,
            organisation: item.organization,
            date: item.date,
            kind: item.kind,
            source_url: item.url,
            doc_id: Some(item.id).filter(|id| !id.is_empty()),
        }
    }
}

/// A document as the page shows it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DocView {
    /// Its title.
    pub title: String,
    /// Metadata: (label, value).
    pub meta: Vec<(&'static str, String)>,
    /// This page of its text.
    pub text: String,
    /// Where this page starts and how long the whole text is, in characters.
    pub offset: usize,
    /// The whole text's length, when known.
    pub total: Option<usize>,
    /// The next page's offset, when there is more.
    pub next_offset: Option<usize>,
    /// The original at the platform.
    pub source_url: Option<String>,
}

/// The paged-text fields every document tool sets beside its answer.
#[derive(Debug, serde::Deserialize)]
pub struct TextPage {
    /// This page of the text.
    #[serde(default)]
    pub text: String,
    /// Where it starts.
    #[serde(default)]
    pub text_offset: usize,
    /// The whole text's length.
    #[serde(default)]
    pub total_length: Option<usize>,
    /// Whether there is more.
    #[serde(default)]
    pub has_more: bool,
}

impl TextPage {
    /// The next page's offset.
    pub fn next_offset(&self) -> Option<usize> {
        self.has_more.then(|| self.text_offset + self.text.chars().count())
    }
}

/// Characters of text per page of the document view.
pub const TEXT_PAGE: usize = 6_000;

/// A document tool's arguments for the view's page at `offset`: `id`, `offset` and a
/// `length` of [`TEXT_PAGE`] (every document tool pages its text so).
pub fn document_page(id: &str, offset: usize) -> JsonObject {
    object([
        ("id", Some(Value::from(id))),
        ("offset", Some(Value::from(offset))),
        ("length", Some(Value::from(TEXT_PAGE))),
    ])
}

/// A JSON object from pairs, leaving out `None`s.
pub fn object<const N: usize>(pairs: [(&str, Option<Value>); N]) -> JsonObject {
    pairs
        .into_iter()
        .filter_map(|(k, v)| v.map(|v| (k.to_owned(), v)))
        .collect()
}

/// A non-empty string as a JSON value.
pub fn some_str(s: &Option<String>) -> Option<Value> {
    s.as_ref().filter(|s| !s.is_empty()).map(|s| Value::String(s.clone()))
}

/// The offset in a page-issued token: a plain number.
pub fn offset_token(next: &Option<String>) -> Result<Option<u64>, String> {
    match next.as_deref() {
        None | Some("") => Ok(None),
        Some(t) => t
            .parse::<u64>()
            .map(Some)
            .map_err(|_| "this next-page link was not made by BesluitBron".to_owned()),
    }
}

/// A value that is not empty.
pub fn non_empty(s: &str) -> Option<String> {
    let s = s.trim();
    (!s.is_empty()).then(|| s.to_owned())
}
