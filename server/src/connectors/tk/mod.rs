//! The Tweede Kamer connector (`tk`) over the OData API: search documents and cases by
//! words in their title or subject, one document's metadata with its links, and the
//! reference lists of factions and committees.
//!
//! No limit is kept for `tk` (none is published), but its answers go through the same
//! path as every platform's: buffer, coalescing, counted retries. Paging follows
//! `@odata.nextLink` (the API drops it when `$top` is set), handed to the assistant as an
//! opaque `continuation`.

pub mod offers;
pub mod page;
pub mod render;
pub mod text;

use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::Feedback;
use besluitbron_core::{PlatformId, Units};
use rmcp::handler::server::tool::Extension;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::{ErrorData, schemars, tool, tool_router};
use serde::Deserialize;

use super::{Client, ConnectorSpec, Sample, http_config};
use crate::config::Config;
use crate::mcp::call::CallScope;
use crate::mcp::{Besluit, PlatformCall, tool_error};
use crate::platforms::http::PlatformError;
use crate::platforms::tk::{Continuation, MAX_WORDS, TkClient, TkSearch, is_guid};
use render::{CommitteesAnswer, DocumentAnswer, FactionsAnswer, Links, PageAnswer};

const PLATFORM: PlatformId = PlatformId::Tk;

/// Every Tweede Kamer read counts one call (no limit is kept, so it only matters for
/// the fairness of an operator-configured one).
const COST: Units = Units::ONE;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "tk",
    platform: PLATFORM,
    instructions: INSTRUCTIONS,
    tools,
    open,
    maintenance: None,
    samples: &[
        Sample::new("tk_search", r#"{"words": "klimaatakkoord", "soort": "Motie"}"#),
        Sample::new("tk_document", r#"{"id": "72f7ab9b-dc59-4e67-8a04-798a744c256e"}"#),
        Sample::new("tk_factions", "{}"),
        Sample::new("tk_committees", "{}"),
        Sample::new("tk_document_text", r#"{"id": "72f7ab9b-dc59-4e67-8a04-798a744c256e"}"#),
    ],
    offers: &offers::OFFERS,
    page: &page::PAGE,
};

fn tools() -> rmcp::handler::server::router::tool::ToolRouter<Besluit> {
    Besluit::tk_router() + Besluit::tk_text_router()
}

const INSTRUCTIONS: &str = "Tweede Kamer (tk_* tools): parliamentary documents and cases (Kamerstukken, \
moties, vragen) from the Tweede Kamer's open data portal. tk_search finds documents or cases by words in their \
title or subject (no full-text search); tk_document gives one document's metadata and the link to its file; tk_document_text its full text \
(expensive the first time, then kept); tk_factions and tk_committees are reference lists that rarely change and are answered from the buffer.";

fn open(config: &Config) -> Result<Client, PlatformError> {
    let pool = crate::text::ExtractPool::shared(config.text.workers, config.text.caps());
    let client =
        TkClient::new(&config.platform(PLATFORM).base_url, &http_config(config, PLATFORM))?.with_text_pool(pool);
    Ok(Arc::new(client))
}

/// Arguments of `tk_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all occur in the title or the subject (separated by spaces; at
    /// most 10).
    #[schemars(length(max = 500))]
    pub words: String,
    /// `documents` (default: Kamerstukken, brieven, moties as documents) or `cases`
    /// (zaken: the parliamentary items documents belong to).
    #[schemars(length(max = 20))]
    #[serde(default)]
    pub kind: Option<String>,
    /// Only this kind of record (`Soort`), e.g. `Motie`, `Brief regering`, `Schriftelijke vragen`.
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub soort: Option<String>,
    /// First day, YYYY-MM-DD.
    #[schemars(length(max = 10))]
    #[serde(default)]
    pub date_from: Option<String>,
    /// Last day (inclusive), YYYY-MM-DD.
    #[schemars(length(max = 10))]
    #[serde(default)]
    pub date_to: Option<String>,
    /// The `continuation` of a previous answer, exactly as given, for its next page
    /// (other arguments are then ignored).
    #[schemars(length(max = 2000))]
    #[serde(default)]
    pub continuation: Option<String>,
}

/// Arguments of `tk_document`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentArgs {
    /// The document's `Id` (a GUID) from tk_search.
    #[schemars(length(max = 64))]
    pub id: String,
}

/// Arguments of the reference lists (none).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Documents,
    Cases,
}

impl Kind {
    fn as_str(self) -> &'static str {
        match self {
            Kind::Documents => "documents",
            Kind::Cases => "cases",
        }
    }
}

/// What a search asks: words with filters, or the next page of an earlier search.
enum Asked {
    First(TkSearch),
    Next(Continuation),
}

/// The words of a search, split on whitespace: 1 to [`MAX_WORDS`] (the client's bound,
/// so the tool refuses exactly what the client would), or the tool's error message.
fn search_words(text: &str) -> Result<Vec<String>, String> {
    let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    if words.is_empty() || words.len() > MAX_WORDS {
        return Err(format!("`words` must hold 1 to {MAX_WORDS} words, not {}", words.len()));
    }
    Ok(words)
}

/// The factions' call, shared by `tk_factions` and the completion of faction names.
pub(crate) fn factions_call(client: Arc<TkClient>) -> PlatformCall<FactionsAnswer> {
    let key = CacheKey::new(PLATFORM, DataClass::Reference, "factions");
    PlatformCall::new(key, COST, move || {
        let client = Arc::clone(&client);
        async move {
            let factions = client.factions().await?;
            Ok((FactionsAnswer { factions }, Feedback::default()))
        }
    })
}

/// The committees' call, shared by `tk_committees` and the completion of committee names.
pub(crate) fn committees_call(client: Arc<TkClient>) -> PlatformCall<CommitteesAnswer> {
    let key = CacheKey::new(PLATFORM, DataClass::Reference, "committees");
    PlatformCall::new(key, COST, move || {
        let client = Arc::clone(&client);
        async move {
            let committees = client.committees().await?;
            Ok((CommitteesAnswer { committees }, Feedback::default()))
        }
    })
}

#[tool_router(router = tk_router, vis = "pub(crate)")]
impl Besluit {
    /// Search Tweede Kamer documents or cases.
    #[tool(
        name = "tk_search",
        description = "Search Tweede Kamer documents (Kamerstukken, letters, motions, questions) or cases (zaken) \
                       by words in their title or subject, optionally by kind (`soort`) and date range. Not a \
                       full-text search. Up to 250 records per page, newest first; pass `continuation` for the \
                       next page. Repeats within ten minutes come from BesluitBron's buffer.",
        annotations(
            title = "Search the Tweede Kamer",
            read_only_hint = true,
            open_world_hint = true,
            idempotent_hint = true,
            destructive_hint = false
        )
    )]
    pub async fn tk_search(
        &self,
        Parameters(args): Parameters<SearchArgs>,
        Extension(call_scope): Extension<Arc<CallScope>>,
    ) -> Result<CallToolResult, ErrorData> {
        // A continuation is read before anything else: only one BesluitBron issued is
        // accepted, and it names the kind of search it continues.
        let next = match args.continuation.as_deref().filter(|t| !t.is_empty()) {
            Some(token) => match Continuation::parse(token) {
                Ok(next) => Some(next),
                Err(e) => return Ok(tool_error(e)),
            },
            None => None,
        };
        let kind = match (&next, args.kind.as_deref()) {
            (Some(next), _) if next.entity_set() == "Zaak" => Kind::Cases,
            (Some(_), _) | (None, None | Some("documents")) => Kind::Documents,
            (None, Some("cases")) => Kind::Cases,
            (None, Some(other)) => {
                return Ok(tool_error(format!(
                    "`kind` must be documents or cases, not `{}`",
                    crate::platforms::http::brief(other)
                )));
            }
        };
        let client = match self.shared().clients.get::<TkClient>(PLATFORM) {
            Ok(c) => c,
            Err(e) => return Ok(tool_error(e)),
        };
        let operation = format!("search_{}", kind.as_str());
        let (key, asked) = if let Some(next) = next {
            let key =
                CacheKey::new(PLATFORM, DataClass::Search, operation).param("continuation", next.as_str().to_owned());
            (key, Asked::Next(next))
        } else {
            let words = match search_words(&args.words) {
                Ok(words) => words,
                Err(message) => return Ok(tool_error(message)),
            };
            let mut search = TkSearch::words(words.clone());
            search.soort = args.soort.clone().filter(|s| !s.is_empty());
            search.date_from = args.date_from.clone();
            search.date_to = args.date_to.clone();
            search.count = true;
            if let Err(e) = search.filter("Datum") {
                return Ok(tool_error(e));
            }
            let mut key = CacheKey::new(PLATFORM, DataClass::Search, operation).param("words", words.join(" "));
            for (name, value) in [
                ("soort", &search.soort),
                ("date_from", &search.date_from),
                ("date_to", &search.date_to),
            ] {
                if let Some(v) = value {
                    key = key.param(name, v.clone());
                }
            }
            (key, Asked::First(search))
        };
        let asked = Arc::new(asked);
        Ok(match kind {
            Kind::Documents => {
                let call = PlatformCall::new(key, COST, move || {
                    let (client, asked) = (Arc::clone(&client), Arc::clone(&asked));
                    async move {
                        let page = match &*asked {
                            Asked::First(search) => client.search_documents(search).await?,
                            Asked::Next(next) => client.next_documents(next).await?,
                        };
                        Ok((PageAnswer::from(page), Feedback::default()))
                    }
                });
                self.answer(&call_scope, "tk_search", call, |a, served| {
                    render::search(a, served, "documents")
                })
                .await
            }
            Kind::Cases => {
                let call = PlatformCall::new(key, COST, move || {
                    let (client, asked) = (Arc::clone(&client), Arc::clone(&asked));
                    async move {
                        let page = match &*asked {
                            Asked::First(search) => client.search_cases(search).await?,
                            Asked::Next(next) => client.next_cases(next).await?,
                        };
                        Ok((PageAnswer::from(page), Feedback::default()))
                    }
                });
                self.answer(&call_scope, "tk_search", call, |a, served| {
                    render::search(a, served, "cases")
                })
                .await
            }
        })
    }

    /// One Tweede Kamer document's metadata.
    #[tool(
        name = "tk_document",
        description = "One Tweede Kamer document's metadata (kind, number, title, subject, date, parliamentary \
                       year) and its links: the record and the file (PDF or Word). Cheap; kept in BesluitBron's \
                       buffer for weeks.",
        annotations(
            title = "Tweede Kamer document",
            read_only_hint = true,
            open_world_hint = true,
            idempotent_hint = true,
            destructive_hint = false
        )
    )]
    pub async fn tk_document(
        &self,
        Parameters(args): Parameters<DocumentArgs>,
        Extension(call_scope): Extension<Arc<CallScope>>,
    ) -> Result<CallToolResult, ErrorData> {
        let id = args.id.trim().to_lowercase();
        if !is_guid(&id) {
            return Ok(tool_error(format!(
                "`{}` is not a document Id (a GUID from tk_search)",
                crate::platforms::http::brief(&args.id)
            )));
        }
        let client = match self.shared().clients.get::<TkClient>(PLATFORM) {
            Ok(c) => c,
            Err(e) => return Ok(tool_error(e)),
        };
        let key = CacheKey::new(PLATFORM, DataClass::Document, "document").param("id", id.clone());
        let id: Arc<str> = Arc::from(id);
        let call = PlatformCall::new(key, COST, move || {
            let (client, id) = (Arc::clone(&client), Arc::clone(&id));
            async move {
                let doc = client.document(&id).await?;
                let answer = DocumentAnswer {
                    document: doc.document,
                    links: Links {
                        record_url: doc.links.record_url,
                        resource_url: doc.links.resource_url,
                    },
                };
                Ok((answer, Feedback::default()))
            }
        });
        Ok(self
            .answer_shown(&call_scope, "tk_document", call, render::document)
            .await)
    }

    /// The factions.
    #[tool(
        name = "tk_factions",
        description = "The current factions (fracties) of the Tweede Kamer with their abbreviations and seats. A \
                       reference list that changes over months: answered from BesluitBron's buffer almost always.",
        annotations(
            title = "Tweede Kamer factions",
            read_only_hint = true,
            open_world_hint = true,
            idempotent_hint = true,
            destructive_hint = false
        )
    )]
    pub async fn tk_factions(
        &self,
        Parameters(_args): Parameters<NoArgs>,
        Extension(call_scope): Extension<Arc<CallScope>>,
    ) -> Result<CallToolResult, ErrorData> {
        let client = match self.shared().clients.get::<TkClient>(PLATFORM) {
            Ok(c) => c,
            Err(e) => return Ok(tool_error(e)),
        };
        let call = factions_call(client);
        Ok(self
            .answer_shown(&call_scope, "tk_factions", call, render::factions)
            .await)
    }

    /// The committees.
    #[tool(
        name = "tk_committees",
        description = "The current committees (commissies) of the Tweede Kamer. A reference list that changes \
                       over months: answered from BesluitBron's buffer almost always.",
        annotations(
            title = "Tweede Kamer committees",
            read_only_hint = true,
            open_world_hint = true,
            idempotent_hint = true,
            destructive_hint = false
        )
    )]
    pub async fn tk_committees(
        &self,
        Parameters(_args): Parameters<NoArgs>,
        Extension(call_scope): Extension<Arc<CallScope>>,
    ) -> Result<CallToolResult, ErrorData> {
        let client = match self.shared().clients.get::<TkClient>(PLATFORM) {
            Ok(c) => c,
            Err(e) => return Ok(tool_error(e)),
        };
        let call = committees_call(client);
        Ok(self
            .answer(&call_scope, "tk_committees", call, render::committees)
            .await)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_word_bound_is_the_clients() {
        let words = |n: usize| (0..n).map(|i| format!("w{i}")).collect::<Vec<_>>().join(" ");
        assert_eq!(search_words(&words(MAX_WORDS)).unwrap().len(), MAX_WORDS);
        assert_eq!(
            search_words(&words(MAX_WORDS + 1)).unwrap_err(),
            format!("`words` must hold 1 to {MAX_WORDS} words, not {}", MAX_WORDS + 1)
        );
        assert!(search_words("  \t ").unwrap_err().contains("not 0"));
        let schema = serde_json::to_value(schemars::schema_for!(SearchArgs)).unwrap();
        let described: Vec<&str> = schema["properties"]["words"]["description"]
            .as_str()
            .unwrap_or_default()
            .split_whitespace()
            .collect();
        let described = described.join(" ");
        assert!(described.contains(&format!("at most {MAX_WORDS})")), "{described}");
        // Whatever the tool lets through, the client accepts.
        assert!(
            TkSearch::words(search_words(&words(MAX_WORDS)).unwrap())
                .filter("Datum")
                .is_ok()
        );
    }
}
