//! The Tweede Kamer connector (`tk`) over the OData API: search documents and cases by
//! words in their title or subject, one document's metadata with its links, the votes
//! on a case (`votes.rs`), the reference lists of factions and committees, and the
//! debates: meetings with a stenographic report (`debates.rs`) and one report read as a
//! transcript (`debate.rs`, `transcript.rs`; the shared calls in `reports.rs`, the
//! members list in `members.rs`).
//!
//! No limit is kept for `tk` (none is published), but its answers go through the same
//! path as every platform's: buffer, coalescing, counted retries. A search pages by
//! `offset`: the platform's page of 250 that holds it (`$skip`, a multiple of 250) is
//! asked once and kept, and each answer is a window of it. The earlier opaque
//! `continuation` is still read for one release.

pub mod debate;
pub mod debates;
pub mod ids;
mod lists;
pub mod members;
pub mod offers;
pub mod page;
mod reader;
pub mod render;
pub mod reports;
pub mod text;
pub mod transcript;
pub mod votes;

use std::sync::Arc;

use besluitbron_core::PlatformId;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::Feedback;
use rmcp::schemars;
use serde::Deserialize;

use super::search::{Asked as Shared, Found, Keyword, KeywordTool};
use super::tool::ToolSpec;
use super::vocabulary::Listing;
use super::{ConnectorSpec, Sample, http_config};
use crate::call::{Call, Client, Context, Kept, KeptRef, PlatformCall, Rendered, Reply, tool_error};
use crate::config::{Config, PlatformDefaults};
use crate::platforms::http::PlatformError;
use crate::platforms::tk::{Continuation, Document, MAX_OFFSET, MAX_WORDS, TkClient, TkSearch, Zaak};
use lists::{COST, committees_call, factions_call};
use render::{DocumentAnswer, Links, PageAnswer};

const PLATFORM: PlatformId = crate::platforms::tk::PLATFORM;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "tk",
    platform: PLATFORM,
    defaults: PlatformDefaults::new(
        PLATFORM,
        "https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0",
        &[crate::platforms::tk::SERVICE],
    ),
    instructions: INSTRUCTIONS,
    guide: GUIDE,
    lists: &[&FACTIONS_TOOL, &COMMITTEES_TOOL],
    reads: Some(&reader::READER),
    tools: TOOLS,
    open,
    maintenance: None,
    samples: &[
        Sample::new("tk_search", r#"{"query": "klimaatakkoord", "soort": "Motie"}"#),
        Sample::new("tk_document", r#"{"id": "72f7ab9b-dc59-4e67-8a04-798a744c256e"}"#),
        Sample::new("tk_factions", "{}"),
        Sample::new("tk_committees", "{}"),
        Sample::new("tk_document_text", r#"{"id": "72f7ab9b-dc59-4e67-8a04-798a744c256e"}"#),
        Sample::new("tk_votes", r#"{"id": "2025Z17647"}"#).asking(2),
        Sample::new(
            "tk_debates",
            r#"{"kind": "committee", "date_from": "2025-07-02", "date_to": "2025-07-03"}"#,
        )
        .asking(2),
        Sample::new(
            "tk_debate",
            r#"{"id": "vergadering:f6102bb7-43b5-4d46-994a-2cebf2354dbf"}"#,
        )
        .asking(3),
    ],
    offers: &offers::OFFERS,
    page: &page::PAGE,
    status: None,
    search: crate::connectors::search::KeywordSearch::Tool(&Keyword::<TkSearchTool>::SEARCH),
};

/// What an assistant is told about these tools in the server's instructions (short:
/// every address's instructions stay within the hosts' limit).
const INSTRUCTIONS: &str = "Tweede Kamer (tk_*): parliamentary documents and cases by words in their title (no full text). tk_document/tk_document_text read a document (GUID or number: 2021D02426), tk_votes a case's votes, tk_debates/tk_debate debates.";

/// What an assistant is told about these tools in depth (the guide resource).
const GUIDE: &str = "Tweede Kamer (tk_* tools): parliamentary documents and cases (Kamerstukken, \
moties, vragen) from the Tweede Kamer's open data portal. tk_search finds documents or cases by words in their \
title or subject (no full-text search); tk_document gives one document's metadata and the link to its file; tk_document_text its full text \
(expensive the first time, then kept); tk_votes how the Kamer voted on a motion, amendment or bill (by case number or \
words: per faction with seats, members in a roll call, mistakes flagged); tk_debates finds plenary and committee \
meetings with a stenographic report (by dates, words in the debates' titles, committee, a member who spoke) and \
tk_debate reads one as a transcript: who said what, interruptions attributed to the interrupter, motions submitted \
with their case numbers (tk_votes reads them); tk_factions and tk_committees are reference lists that rarely change and are answered from the buffer.";

fn open(config: &Config) -> Result<Client, PlatformError> {
    let pool = crate::text::ExtractPool::shared(config.text.workers, crate::text::Caps::configured(&config.text));
    let client =
        TkClient::new(&config.platform(PLATFORM).base_url, &http_config(config, PLATFORM))?.with_text_pool(pool);
    Ok(Arc::new(client))
}

/// Arguments of `tk_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// Words all in the title or subject (at most 10).
    #[schemars(length(max = 500))]
    #[serde(default)]
    pub query: Option<String>,
    /// `query`'s earlier name, accepted for one release (the answer says so).
    #[schemars(skip)]
    #[serde(default)]
    pub words: Option<String>,
    /// `documents` (default) or `cases` (zaken).
    #[serde(default, deserialize_with = "kind_arg")]
    #[schemars(with = "Option<KindArg>")]
    pub kind: Option<KindArg>,
    /// Only this kind (`Soort`, exactly), e.g. `Motie`, `Brief regering`.
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub soort: Option<String>,
    /// First day.
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_from: Option<String>,
    /// Last day (inclusive).
    #[schemars(length(max = 10), extend("format" = "date"))]
    #[serde(default)]
    pub date_to: Option<String>,
    /// Default 20.
    #[schemars(range(min = 1, max = 250))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[schemars(range(max = 10_000_249))]
    #[serde(default)]
    pub offset: Option<u64>,
    /// The earlier paging: a previous answer's continuation token, accepted for one
    /// release (the answer says to use `offset`).
    #[schemars(skip)]
    #[serde(default)]
    pub continuation: Option<String>,
}

/// What `tk_search` searches.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum KindArg {
    /// Documents (Kamerstukken, letters, motions, questions).
    Documents,
    /// Cases (zaken).
    Cases,
}

/// Records `tk_search` shows by default, and at most (one platform page).
const DEFAULT_SEARCH_LIMIT: usize = 20;
const MAX_SEARCH_LIMIT: usize = crate::platforms::tk::PAGE_ROWS as usize;

/// Arguments of `tk_committees`.
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CommitteesArgs {
    /// Name or abbreviation contains this (`landbouw`, `LVVN`).
    #[schemars(length(max = 100))]
    #[serde(default)]
    pub name: Option<String>,
    /// Default 50.
    #[schemars(range(min = 1, max = 300))]
    #[serde(default)]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
}

/// Arguments of `tk_document`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentArgs {
    /// The document's number (`2021D02426`), its `id` from tk_search (a GUID), or a link
    /// to it on tweedekamer.nl.
    #[schemars(length(max = 300))]
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

    fn set(self) -> &'static str {
        match self {
            Kind::Documents => "Document",
            Kind::Cases => "Zaak",
        }
    }
}

/// What a search asks: words with filters, or the next page of an earlier search.
enum Asked {
    First(TkSearch),
    Next(Continuation),
}

/// The buffer key of a search's first page.
fn first_page_key(kind: Kind, search: &TkSearch) -> CacheKey {
    let mut key = CacheKey::new(PLATFORM, DataClass::Search, format!("search_{}", kind.as_str()))
        .param("words", search.words.join(" "));
    for (name, value) in [
        ("soort", &search.soort),
        ("date_from", &search.date_from),
        ("date_to", &search.date_to),
    ] {
        if let Some(v) = value {
            key = key.param(name, v.clone());
        }
    }
    key
}

/// Where the shown records are: the platform page asked (`None`: the search's first)
/// and the window of it.
struct Here {
    kind: Kind,
    search: TkSearch,
    /// The search's position of the kept page's first record (`None`: a page named by
    /// `$skiptoken`, reached by an earlier continuation).
    base: Option<u64>,
    from: usize,
    limit: usize,
}

impl Here {
    /// The window shown of a kept page of `len` records, whether the platform has a
    /// page after it: the records' range and the `offset` of the records that follow.
    fn view(&self, len: usize, platform_has_more: bool) -> render::SearchView {
        let end = self.from.saturating_add(self.limit).min(len);
        let next_offset = if end < len || platform_has_more {
            self.base.map(|base| base + end as u64)
        } else {
            None
        };
        render::SearchView {
            kind: self.kind.as_str(),
            searched: describe(&self.search),
            from: self.from.min(len),
            to: end.max(self.from.min(len)),
            base: self.base.unwrap_or(0),
            next_offset,
            later_page: self.base != Some(0),
        }
    }
}

/// A search in words: "words `a b`, soort Motie, from … to …".
fn describe(search: &TkSearch) -> String {
    let mut parts = vec![format!("words `{}`", search.words.join(" "))];
    if let Some(s) = &search.soort {
        parts.push(format!("soort `{s}`"));
    }
    match (&search.date_from, &search.date_to) {
        (Some(f), Some(t)) => parts.push(format!("from {f} to {t}")),
        (Some(f), None) => parts.push(format!("from {f}")),
        (None, Some(t)) => parts.push(format!("until {t}")),
        (None, None) => {}
    }
    parts.join(", ")
}

/// The words of a search, split on whitespace: 1 to [`MAX_WORDS`] (the client's bound,
/// so the tool refuses exactly what the client would), or the tool's error message.
fn search_words(text: &str) -> Result<Vec<String>, String> {
    let words: Vec<String> = text.split_whitespace().map(str::to_owned).collect();
    if words.is_empty() || words.len() > MAX_WORDS {
        return Err(format!("`query` must hold 1 to {MAX_WORDS} words, not {}", words.len()));
    }
    Ok(words)
}

fn kind_arg<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<KindArg>, D::Error> {
    super::pages::choice("kind", d)
}

/// The `tk_document` tool (its spec is what `fetch` runs for this connector's ids).
pub(crate) const DOCUMENT_TOOL: ToolSpec = crate::tool! {
    name: "tk_document",
    title: "Tweede Kamer document",
    description: "One Tweede Kamer document's metadata (kind, number, title, subject, date) and the links to its \
                  record and file. Cheap; weeks in the buffer. Its text: tk_document_text.",
    arguments: DocumentArgs,
    output: render::DocumentShown,
    run: tk_document,
};

/// The `tk_search` tool (its spec is what `search` runs for this connector).
pub(crate) const SEARCH_TOOL: ToolSpec = Keyword::<TkSearchTool>::TOOL;

/// `tk_search`, declared once: the tool and its part in `search` on `/mcp` (documents by
/// words in their title or subject).
pub(crate) struct TkSearchTool;

/// `tk_search`'s typed answer: its question and the kept page of its kind.
pub(crate) struct TkFound {
    question: Question,
    page: FoundPage,
}

/// A kept page of documents or of cases.
enum FoundPage {
    Documents(Kept<PageAnswer<Document>>),
    Cases(Kept<PageAnswer<Zaak>>),
}

impl Found for TkFound {
    fn kept(&self) -> KeptRef<'_> {
        match &self.page {
            FoundPage::Documents(kept) => kept.kept(),
            FoundPage::Cases(kept) => kept.kept(),
        }
    }
}

impl KeywordTool for TkSearchTool {
    const NAME: &'static str = "tk_search";
    const TITLE: &'static str = "Search the Tweede Kamer";
    const DESCRIPTION: &'static str = "Tweede Kamer documents (Kamerstukken, letters, motions, questions) or cases \
        (zaken) by words in their title or subject, `soort` and dates; not full text (opentk_search is). Newest \
        first; a page of 250 is asked once and kept. tk_document reads a document's `id`, tk_votes a case's.";
    type Args = SearchArgs;
    type Output = render::SearchShown;
    type Found = TkFound;

    async fn find(ctx: &Context, call: &Call, args: SearchArgs) -> Result<TkFound, Reply> {
        let question = search_question(ctx, &args)?;
        let page = match question.kind {
            Kind::Documents => FoundPage::Documents(ctx.fetch_kept(call, question.documents()).await?),
            Kind::Cases => FoundPage::Cases(ctx.fetch_kept(call, question.cases()).await?),
        };
        Ok(TkFound { question, page })
    }

    fn render(found: &TkFound) -> Rendered {
        let q = &found.question;
        q.renamed(match &found.page {
            FoundPage::Documents(k) => render::search(&k.answer, k.served, &q.view(&k.answer)),
            FoundPage::Cases(k) => render::search(&k.answer, k.served, &q.view(&k.answer)),
        })
    }

    fn listing(found: &TkFound) -> Listing {
        let q = &found.question;
        match &found.page {
            FoundPage::Documents(k) => render::listing(&k.answer, &q.view(&k.answer)),
            FoundPage::Cases(k) => render::listing(&k.answer, &q.view(&k.answer)),
        }
    }

    fn arguments(asked: &Shared) -> serde_json::Map<String, serde_json::Value> {
        let mut args = serde_json::Map::new();
        // The Kamer's search takes at most this many words; the first ones carry the question.
        let words: Vec<&str> = asked.query.split_whitespace().take(MAX_WORDS).collect();
        args.insert("query".into(), words.join(" ").into());
        args.insert("limit".into(), asked.limit.into());
        crate::connectors::search::dates(asked, &mut args);
        args
    }
}

/// The `tk_factions` tool: one of the connector's lists.
pub(crate) const FACTIONS_TOOL: ToolSpec = crate::tool! {
    name: "tk_factions",
    title: "Tweede Kamer factions",
    description: "The current factions (fracties) of the Tweede Kamer with their abbreviations and seats. \
                  Cheap: buffered.",
    arguments: NoArgs,
    output: render::FactionsShown,
    run: tk_factions,
};

/// The `tk_committees` tool: one of the connector's lists.
pub(crate) const COMMITTEES_TOOL: ToolSpec = crate::tool! {
    name: "tk_committees",
    title: "Tweede Kamer committees",
    description: "The committees (commissies) of the Tweede Kamer with their abbreviations, standing and \
                  temporary ones (about 300); narrow with `name`. Cheap: \
                  buffered.",
    arguments: CommitteesArgs,
    output: render::CommitteesShown,
    run: tk_committees,
};

/// The tools.
const TOOLS: &[ToolSpec] = &[
    SEARCH_TOOL,
    DOCUMENT_TOOL,
    FACTIONS_TOOL,
    COMMITTEES_TOOL,
    text::TOOL,
    votes::TOOL,
    debates::TOOL,
    debate::TOOL,
];

/// `tk_search`'s question: what it asks the platform, and what its answer shows.
struct Question {
    client: Arc<TkClient>,
    kind: Kind,
    key: CacheKey,
    asked: Arc<Asked>,
    here: Here,
    /// `words` was given for `query` (its earlier name).
    used_words: bool,
    /// `continuation` was given (pages are asked by `offset` now).
    used_continuation: bool,
}

impl Question {
    /// The documents' platform call.
    fn documents(&self) -> PlatformCall<PageAnswer<Document>> {
        let (client, asked) = (Arc::clone(&self.client), Arc::clone(&self.asked));
        PlatformCall::new(self.key.clone(), COST, move || {
            let (client, asked) = (Arc::clone(&client), Arc::clone(&asked));
            async move {
                let page = match &*asked {
                    Asked::First(search) => client.search_documents(search).await?,
                    Asked::Next(next) => client.next_documents(next).await?,
                };
                Ok((PageAnswer::from(page), Feedback::default()))
            }
        })
    }

    /// The cases' platform call.
    fn cases(&self) -> PlatformCall<PageAnswer<Zaak>> {
        let (client, asked) = (Arc::clone(&self.client), Arc::clone(&self.asked));
        PlatformCall::new(self.key.clone(), COST, move || {
            let (client, asked) = (Arc::clone(&client), Arc::clone(&asked));
            async move {
                let page = match &*asked {
                    Asked::First(search) => client.search_cases(search).await?,
                    Asked::Next(next) => client.next_cases(next).await?,
                };
                Ok((PageAnswer::from(page), Feedback::default()))
            }
        })
    }

    /// The window of the kept page `answer` shown.
    fn view<T>(&self, answer: &PageAnswer<T>) -> render::SearchView {
        self.here.view(answer.items.len(), answer.continuation.is_some())
    }

    /// `r` with a note for each earlier name the assistant used, once per answer.
    fn renamed(&self, mut r: Rendered) -> Rendered {
        if self.used_continuation {
            r.text = format!(
                "Note: tk_search pages with `offset` now (each answer gives `next_offset`); `continuation` is \
                 accepted until the next release.\n{}",
                r.text
            );
        }
        if self.used_words {
            r.text = format!(
                "Note: tk_search's `words` is now called `query` (as in every search); `words` is accepted \
                 until the next release.\n{}",
                r.text
            );
        }
        r
    }
}

/// `tk_search`'s question from `args`, or the refusal that stands for it.
fn search_question(ctx: &Context, args: &SearchArgs) -> Result<Question, Reply> {
    // A continuation is read before anything else: only one BesluitBron issued is
    // accepted, and it names the kind of search it continues.
    let next = match args.continuation.as_deref().filter(|t| !t.is_empty()) {
        Some(token) => match Continuation::parse(token) {
            Ok(next) => Some(next),
            Err(e) => return Err(tool_error(e).into()),
        },
        None => None,
    };
    let limit = match super::pages::list_limit("tk_search", args.limit, DEFAULT_SEARCH_LIMIT, MAX_SEARCH_LIMIT) {
        Ok(limit) => limit,
        Err(message) => return Err(tool_error(message).into()),
    };
    let kind = match (&next, args.kind) {
        (Some(next), _) if next.entity_set() == "Zaak" => Kind::Cases,
        (Some(_), _) | (None, None | Some(KindArg::Documents)) => Kind::Documents,
        (None, Some(KindArg::Cases)) => Kind::Cases,
    };
    let client = ctx.clients.get::<TkClient>(PLATFORM)?;
    // `words` is `query` now, and `offset` pages where `continuation` did: an assistant
    // that used an earlier name is told, once per answer.
    let used_words = args.query.is_none() && args.words.is_some();
    let used_continuation = next.is_some();
    let next = match next {
        Some(next) => next,
        None => {
            let Some(text) = args.query.as_deref().or(args.words.as_deref()) else {
                return Err(tool_error(
                    "tk_search: give `query`, the words that must occur in the title or subject (e.g. `stikstof`) \
                     (nothing asked of the Tweede Kamer)",
                )
                .into());
            };
            let words = match search_words(text) {
                Ok(words) => words,
                Err(message) => return Err(tool_error(format!("tk_search: {message}")).into()),
            };
            let mut search = TkSearch::words(words);
            search.soort = args.soort.clone().filter(|s| !s.is_empty());
            search.date_from = args.date_from.clone();
            search.date_to = args.date_to.clone();
            search.count = true;
            if let Err(e) = search.filter("Datum") {
                return Err(tool_error(e).into());
            }
            let offset = args.offset.unwrap_or(0);
            if offset > MAX_OFFSET {
                return Err(tool_error(format!(
                    "tk_search: `offset` must be at most {MAX_OFFSET} (nothing asked of the Tweede Kamer)"
                ))
                .into());
            }
            match Continuation::at_offset(kind.set(), &search, offset) {
                Ok(next) => next,
                Err(e) => return Err(tool_error(e).into()),
            }
        }
    };
    let here = Here {
        kind,
        search: next.search().clone(),
        base: next.base(),
        from: next.from() as usize,
        limit,
    };
    let (key, asked) = if next.is_first_page() {
        // Anywhere in the first page: the first page's own key, so it is asked once.
        (first_page_key(kind, next.search()), Asked::First(next.search().clone()))
    } else {
        let page = match next.page_token() {
            Ok(page) => page,
            Err(e) => return Err(tool_error(e).into()),
        };
        let key =
            CacheKey::new(PLATFORM, DataClass::Search, format!("search_{}", kind.as_str())).param("continuation", page);
        (key, Asked::Next(next))
    };
    Ok(Question {
        client,
        kind,
        key,
        asked: Arc::new(asked),
        here,
        used_words,
        used_continuation,
    })
}

/// One Tweede Kamer document's metadata.
async fn tk_document(ctx: &Context, call: &Call, args: DocumentArgs) -> Reply {
    let Some(document) = ids::named(super::ids::own(PLATFORM, &args.id)).and_then(|n| match n {
        ids::Named::Document(d) => Some(d),
        _ => None,
    }) else {
        return tool_error(format!(
            "tk_document: `{}` is not a Tweede Kamer document: give its number (2021D02426), its `id` from \
             tk_search (a GUID) or a link to it on tweedekamer.nl; a case number (2021Z00984) reads with tk_votes \
             (nothing asked of the Tweede Kamer)",
            crate::platforms::http::brief(&args.id)
        ))
        .into();
    };
    let client = match ctx.clients.get::<TkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    let key = match &document {
        ids::DocumentRef::Guid(id) => CacheKey::new(PLATFORM, DataClass::Document, "document").param("id", id.clone()),
        ids::DocumentRef::Number(n) => {
            CacheKey::new(PLATFORM, DataClass::Document, "document").param("number", n.clone())
        }
    };
    let asked = Arc::new(document);
    let pc = PlatformCall::new(key, COST, move || {
        let (client, asked) = (Arc::clone(&client), Arc::clone(&asked));
        async move {
            let doc = match &*asked {
                ids::DocumentRef::Guid(id) => client.document(id).await?,
                ids::DocumentRef::Number(n) => client.document_by_number(n).await?,
            };
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
    ctx.answer_kept(call, pc, render::document).await
}

/// The factions.
async fn tk_factions(ctx: &Context, call: &Call, _args: NoArgs) -> Reply {
    let client = match ctx.clients.get::<TkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    let pc = factions_call(client);
    ctx.answer_kept(call, pc, render::factions).await
}

/// The committees.
async fn tk_committees(ctx: &Context, call: &Call, args: CommitteesArgs) -> Reply {
    let limit = match super::pages::list_limit("tk_committees", args.limit, 50, 300) {
        Ok(limit) => limit,
        Err(message) => return tool_error(message).into(),
    };
    let filter = render::CommitteesFilter {
        name: args.name.filter(|n| !n.trim().is_empty()),
        offset: args.offset.unwrap_or(0),
        limit,
    };
    let client = match ctx.clients.get::<TkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    let pc = committees_call(client);
    ctx.answer(call, pc, |answer, served| render::committees(answer, served, &filter))
        .await
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
            format!("`query` must hold 1 to {MAX_WORDS} words, not {}", MAX_WORDS + 1)
        );
        assert!(search_words("  \t ").unwrap_err().contains("not 0"));
        let schema = serde_json::to_value(schemars::schema_for!(SearchArgs)).unwrap();
        let described: Vec<&str> = schema["properties"]["query"]["description"]
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
