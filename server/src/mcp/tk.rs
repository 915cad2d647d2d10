//! The Tweede Kamer tools over the OData API: search documents and cases by words in
//! their title or subject, one document's metadata with its links, and the reference
//! lists of factions and committees.
//!
//! No limit is kept for `tk` (none is published), but its answers go through the same
//! buffer and coalescing as every platform's. Paging follows `@odata.nextLink` (the API
//! drops it when `$top` is set), handed to the assistant as an opaque `continuation`.

use besluitbron_core::PlatformId;
use besluitbron_core::Units;
use besluitbron_core::cache::{CacheKey, DataClass};
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, schemars, tool, tool_router};
use serde::Deserialize;
use serde_json::json;
use std::fmt::Write as _;

use super::{Besluit, provenance, tool_answer, tool_error};
use crate::fetch::Upstream;
use crate::platforms::tk::{Continuation, MAX_WORDS, TkPage, TkSearch, is_guid};

const PLATFORM: PlatformId = PlatformId::Tk;

/// Arguments of `tk_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words that must all occur in the title or the subject (separated by spaces; at
    /// most 10).
    pub words: String,
    /// `documents` (default: Kamerstukken, brieven, moties as documents) or `cases`
    /// (zaken: the parliamentary items documents belong to).
    #[serde(default)]
    pub kind: Option<String>,
    /// Only this kind of record (`Soort`), e.g. `Motie`, `Brief regering`, `Schriftelijke vragen`.
    #[serde(default)]
    pub soort: Option<String>,
    /// First day, YYYY-MM-DD.
    #[serde(default)]
    pub date_from: Option<String>,
    /// Last day (inclusive), YYYY-MM-DD.
    #[serde(default)]
    pub date_to: Option<String>,
    /// The `continuation` of a previous answer, for its next page (other arguments are
    /// then ignored).
    #[serde(default)]
    pub continuation: Option<String>,
}

/// Arguments of `tk_document`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentArgs {
    /// The document's `Id` (a GUID) from tk_search.
    pub id: String,
}

/// Arguments of the reference lists (none).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

#[derive(Clone, Copy)]
enum Kind {
    Documents,
    Cases,
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

fn page_json<T: serde::Serialize>(page: TkPage<T>) -> serde_json::Value {
    json!({
        "items": page.items,
        "count": page.count,
        "continuation": page.next.map(|c| c.as_str().to_owned()),
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let kind = match args.kind.as_deref() {
            None | Some("documents") => Kind::Documents,
            Some("cases") => Kind::Cases,
            Some(other) => return Ok(tool_error(format!("`kind` must be documents or cases, not `{other}`"))),
        };
        let kind_name = match kind {
            Kind::Documents => "documents",
            Kind::Cases => "cases",
        };
        let client = self.shared.tk.clone();
        let answer = if let Some(token) = args.continuation.clone().filter(|t| !t.is_empty()) {
            let key = CacheKey::new(PLATFORM, DataClass::Search, format!("search_{kind_name}"))
                .param("continuation", token.clone());
            self.fetch(&ctx, key, Units::ONE, "tk_search", move || async move {
                let next = Continuation::from_token(token);
                let value = match kind {
                    Kind::Documents => page_json(client.next_documents(&next).await?),
                    Kind::Cases => page_json(client.next_cases(&next).await?),
                };
                Ok(Upstream {
                    payload: serde_json::to_vec(&value).unwrap_or_default(),
                    rate: None,
                })
            })
            .await
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
            let mut key = CacheKey::new(PLATFORM, DataClass::Search, format!("search_{kind_name}"))
                .param("words", words.join(" "));
            for (name, value) in [
                ("soort", &search.soort),
                ("date_from", &search.date_from),
                ("date_to", &search.date_to),
            ] {
                if let Some(v) = value {
                    key = key.param(name, v.clone());
                }
            }
            self.fetch(&ctx, key, Units::ONE, "tk_search", move || async move {
                let value = match kind {
                    Kind::Documents => page_json(client.search_documents(&search).await?),
                    Kind::Cases => page_json(client.search_cases(&search).await?),
                };
                Ok(Upstream {
                    payload: serde_json::to_vec(&value).unwrap_or_default(),
                    rate: None,
                })
            })
            .await
        };
        Ok(match answer {
            Err(result) => result,
            Ok((value, served)) => {
                let items = value["items"].as_array().cloned().unwrap_or_default();
                let mut text = format!(
                    "{} {kind_name}{}{}.",
                    items.len(),
                    value["count"].as_u64().map(|c| format!(" of {c}")).unwrap_or_default(),
                    provenance(served)
                );
                for item in items.iter().take(10) {
                    let title = item["Titel"].as_str().or(item["Onderwerp"].as_str()).unwrap_or("");
                    let number = item["DocumentNummer"]
                        .as_str()
                        .or(item["Nummer"].as_str())
                        .unwrap_or("");
                    let _ = write!(text, "\n- {number} {title} (Id {})", item["Id"].as_str().unwrap_or(""));
                }
                if value["continuation"].is_string() {
                    text.push_str("\nMore results: pass `continuation` for the next page.");
                }
                tool_answer(value, text)
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let id = args.id.trim().to_lowercase();
        if !is_guid(&id) {
            return Ok(tool_error(format!(
                "`{}` is not a document Id (a GUID from tk_search)",
                args.id
            )));
        }
        let key = CacheKey::new(PLATFORM, DataClass::Document, "document").param("id", id.clone());
        let client = self.shared.tk.clone();
        let answer = self
            .fetch(&ctx, key, Units::ONE, "tk_document", move || async move {
                let doc = client.document(&id).await?;
                let value = json!({
                    "document": doc.document,
                    "links": {"record_url": doc.links.record_url, "resource_url": doc.links.resource_url},
                });
                Ok(Upstream {
                    payload: serde_json::to_vec(&value).unwrap_or_default(),
                    rate: None,
                })
            })
            .await;
        Ok(match answer {
            Err(result) => result,
            Ok((value, served)) => {
                let d = &value["document"];
                let text = format!(
                    "{} {} — {} ({}){}. File: {}",
                    d["Soort"].as_str().unwrap_or(""),
                    d["DocumentNummer"].as_str().unwrap_or(""),
                    d["Titel"].as_str().or(d["Onderwerp"].as_str()).unwrap_or(""),
                    d["Datum"].as_str().unwrap_or(""),
                    provenance(served),
                    value["links"]["resource_url"].as_str().unwrap_or("")
                );
                tool_answer(value, text)
            }
        })
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let key = CacheKey::new(PLATFORM, DataClass::Reference, "factions");
        let client = self.shared.tk.clone();
        let answer = self
            .fetch(&ctx, key, Units::ONE, "tk_factions", move || async move {
                let list = client.factions().await?;
                Ok(Upstream {
                    payload: serde_json::to_vec(&json!({ "factions": list })).unwrap_or_default(),
                    rate: None,
                })
            })
            .await;
        Ok(reference_answer(answer, "factions", "NaamNL"))
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
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let key = CacheKey::new(PLATFORM, DataClass::Reference, "committees");
        let client = self.shared.tk.clone();
        let answer = self
            .fetch(&ctx, key, Units::ONE, "tk_committees", move || async move {
                let list = client.committees().await?;
                Ok(Upstream {
                    payload: serde_json::to_vec(&json!({ "committees": list })).unwrap_or_default(),
                    rate: None,
                })
            })
            .await;
        Ok(reference_answer(answer, "committees", "Naam"))
    }
}

fn reference_answer(
    answer: Result<(serde_json::Value, crate::fetch::Served), CallToolResult>,
    field: &str,
    name_field: &str,
) -> CallToolResult {
    match answer {
        Err(result) => result,
        Ok((mut value, served)) => {
            let list = value[field].as_array().cloned().unwrap_or_default();
            let mut text = format!("{} {field}{}.", list.len(), provenance(served));
            for item in list.iter().take(30) {
                let _ = write!(
                    text,
                    "\n- {} ({})",
                    item[name_field].as_str().unwrap_or(""),
                    item["Afkorting"].as_str().unwrap_or("")
                );
            }
            value["count"] = json!(list.len());
            tool_answer(value, text)
        }
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
