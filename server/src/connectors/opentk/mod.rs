//! The OpenTK connector (`opentk`, berthub.eu/tkconv): the one full-text search over
//! Tweede Kamer documents, a document's text (its HTML rendition), an activity
//! (committee meeting or debate) with its agenda, documents and commitments, and when
//! OpenTK's harvesters last ran.
//!
//! No limit is published, so none is kept by default; but searches are expensive for
//! the platform's maintainer, so the platform's path lets only a few attempts out at
//! once (`Platforms.opentk.MaxConcurrent`) and the rest wait. OpenTK cuts searches
//! short silently under load: an answer that may be incomplete says so and is kept only
//! briefly. Rendering lives in [`render`], as pure functions of the kept answers.

pub mod ids;
pub mod offers;
pub mod page;
pub mod render;

use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::Served;
use besluitbron_core::path::{Feedback, Keep};
use besluitbron_core::{PlatformId, Units};
use rmcp::schemars;
use serde::Deserialize;

use super::ids::{IdForm, IdReader, Paging, Reading};
use super::search::{Asked, Asking, Keyword, KeywordTool};
use super::tool::ToolSpec;
use super::vocabulary::Listing;
use super::{ConnectorSpec, Sample, http_config};
use crate::call::{Call, Client, Context, Head, PlatformCall, ReadResult, Rendered, Reply, Who, replied, tool_error};
use crate::config::{Config, PlatformDefaults};
use crate::platforms::http::{PlatformError, text_field};
use crate::platforms::opentk::{
    self, ActivityReply, DocumentId, Fetch, MAX_QUERY_CHARS, OpenTkClient, OpenTkSearch, SearchKind,
};
use ids::Named;
use render::{ActivityAnswer, AgendaPoint, DocRef, DocumentAnswer, Harvester, Hit, SearchAnswer, StatusAnswer};

const PLATFORM: PlatformId = crate::platforms::opentk::PLATFORM;

/// Every OpenTK call counts one (no limit is kept unless an operator sets one).
const COST: Units = Units::ONE;

/// How long an answer that may be incomplete is kept.
const INCOMPLETE_KEEP_MS: u64 = 60_000;

/// How long an activity is kept (its agenda changes until the meeting).
const ACTIVITY_KEEP_MS: u64 = 3_600_000;

/// Most hits an answer shows.
const MAX_LIMIT: u32 = 100;

/// Most hits OpenTK returns for a search.
const MAX_HITS: u32 = 280;

/// The registry's entry.
pub const CONNECTOR: ConnectorSpec = ConnectorSpec {
    id: "opentk",
    platform: PLATFORM,
    defaults: PlatformDefaults::new(
        PLATFORM,
        "https://berthub.eu/tkconv",
        &[crate::platforms::opentk::SERVICE],
    ),
    instructions: INSTRUCTIONS,
    guide: GUIDE,
    lists: &[&STATUS_TOOL],
    reads: Some(&READER),
    tools: TOOLS,
    open,
    maintenance: None,
    samples: &[
        Sample::new("opentk_search", r#"{"query": "stikstof", "limit": 5}"#),
        Sample::new("opentk_document", r#"{"id": "2026D10001"}"#),
        Sample::new("opentk_activity", r#"{"id": "2026A00001"}"#),
        Sample::new("opentk_status", "{}"),
    ],
    offers: &offers::OFFERS,
    page: &page::PAGE,
    status: Some(&page::STATUS),
    search: crate::connectors::search::KeywordSearch::Tool(&Keyword::<OpenTkSearchTool>::SEARCH),
};

/// What OpenTK reads.
pub const READER: IdReader = IdReader {
    // Every record it reads has a public page (`fetch`'s `url`).
    public_pages: true,
    paged: &[&DOCUMENT_TOOL],
    forms: &[
        IdForm {
            what: "an activity (meeting, debate) number",
            example: "2025A04597",
            sample: Some("opentk:2026A00007"),
        },
        IdForm {
            what: "a document number or kamerstuk id, as `opentk:…`",
            example: "opentk:2021D02426",
            sample: Some("opentk:2026D10001"),
        },
        IdForm {
            what: "a link to an OpenTK page",
            example: "berthub.eu/tkconv/document.html?nummer=2021D02426",
            sample: Some("berthub.eu/tkconv/document.html?nummer=2026D10005"),
        },
    ],
    read,
};

/// Reads an id OpenTK reads with the tool for what it names.
fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let (named, claim) = ids::parse(id)?;
    Some(Ok(match named {
        Named::Activity(number) => {
            let args = ActivityArgs { id: number.clone() };
            Reading::new(number, claim, &ACTIVITY_TOOL, move |ctx, call| {
                Box::pin(activity_read(ctx, call, args))
            })
        }
        Named::Document(id) => {
            let args = DocumentArgs {
                id: id.clone(),
                offset: paging.offset,
                length: paging.length,
                source: None,
            };
            Reading::new(id, claim, &DOCUMENT_TOOL, move |ctx, call| {
                Box::pin(document_read(ctx, call, args))
            })
        }
    }))
}

/// What an assistant is told about these tools in the server's instructions (short:
/// every address's instructions stay within the hosts' limit).
const INSTRUCTIONS: &str = "OpenTK (opentk_*): full-text search over Tweede Kamer documents and debates (expensive for OpenTK: be specific); opentk_document reads one by number or kamerstuk id.";

/// What an assistant is told about these tools in depth (the guide resource).
const GUIDE: &str = "OpenTK (opentk_* tools): full-text search over Tweede Kamer documents and reports \
(the Tweede Kamer's own API has none), a document's text, a committee meeting or debate with its agenda and \
commitments, and how fresh OpenTK's copy is. Searches are expensive for OpenTK: make them specific.";

fn open(config: &Config) -> Result<Client, PlatformError> {
    // The process's one document-text pool, made from the configuration if no other
    // connector made it yet (`source` file reads in it).
    crate::text::ExtractPool::shared(config.text.workers, crate::text::Caps::configured(&config.text));
    let client = OpenTkClient::new(&config.platform(PLATFORM).base_url, &http_config(config, PLATFORM))?;
    Ok(Arc::new(client))
}

/// Arguments of `opentk_search`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// The query, in OpenTK's syntax.
    #[schemars(length(max = 500))]
    pub query: String,
    /// What to search (default alles).
    #[serde(default, deserialize_with = "kind_arg")]
    #[schemars(with = "Option<KindArg>")]
    pub kind: Option<KindArg>,
    /// Only the last two months.
    #[serde(default)]
    pub recent: bool,
    /// Default 20.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub limit: Option<u32>,
    /// From `next_offset`.
    #[serde(default)]
    #[schemars(range(min = 0, max = 279))]
    pub offset: Option<u32>,
}

/// What `opentk_search` searches (OpenTK's `soorten`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KindArg {
    /// Documents and reports (the default).
    Alles,
    /// Motions only (OpenTK applies it after its 280-hit cap).
    Moties,
    /// Written questions and their answers (after the cap too).
    Vragenantwoorden,
    /// Activities only.
    Activiteiten,
}

impl From<KindArg> for SearchKind {
    fn from(k: KindArg) -> SearchKind {
        match k {
            KindArg::Alles => SearchKind::Alles,
            KindArg::Moties => SearchKind::Moties,
            KindArg::Vragenantwoorden => SearchKind::Vragenantwoorden,
            KindArg::Activiteiten => SearchKind::Activiteiten,
        }
    }
}

/// Arguments of `opentk_document`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DocumentArgs {
    /// A document number (`2026D12345`, from opentk_search) or a kamerstuk id (`kst-36200-12`).
    #[schemars(length(max = 64))]
    pub id: String,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters (default 8000).
    #[schemars(range(min = 1, max = 100_000))]
    #[serde(default)]
    pub length: Option<usize>,
    /// Which text: OpenTK's `rendition` (default, cheap) or the original `file` (one more
    /// request the first time; for a rendition that is empty or poor).
    #[serde(default)]
    pub source: Option<TextSourceArg>,
}

/// Which text `opentk_document` reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TextSourceArg {
    /// OpenTK's HTML rendition.
    #[default]
    Rendition,
    /// The original file, through the document-text extractor.
    File,
}

/// Arguments of `opentk_activity`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ActivityArgs {
    /// The activity's number, e.g. `2026A01234`.
    #[schemars(length(max = 32))]
    pub id: String,
}

/// Arguments of `opentk_status` (none).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// `text` for a message: at most 40 characters of it.
fn short(text: &str) -> String {
    let mut s: String = text.chars().take(40).collect();
    if text.chars().count() > 40 {
        s.push('…');
    }
    s
}

/// The search asked with the hits to show (offset, limit), or the tool's error message.
fn search_of(args: &SearchArgs) -> Result<(OpenTkSearch, usize, usize), String> {
    let query = args.query.trim();
    if query.is_empty() {
        return Err("`query` is empty: give the words to search for".to_owned());
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(format!(
            "`query` is longer than {MAX_QUERY_CHARS} characters; use the few words that matter"
        ));
    }
    let kind = args.kind.map_or(SearchKind::Alles, SearchKind::from);
    let limit = args.limit.unwrap_or(20);
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(format!("opentk_search: `limit` must be 1 to {MAX_LIMIT}, not {limit}"));
    }
    let offset = args.offset.unwrap_or(0);
    if offset >= MAX_HITS {
        return Err(format!(
            "opentk_search: `offset` must be 0 to {}, not {offset}: OpenTK returns at most {MAX_HITS} hits; \
             narrow the query (more words, a phrase, `recent`) to reach older ones",
            MAX_HITS - 1
        ));
    }
    Ok((
        OpenTkSearch {
            query: query.to_owned(),
            kind,
            recent: args.recent,
        },
        offset as usize,
        limit as usize,
    ))
}

/// The kept answer of a search.
fn search_answer(search: &OpenTkSearch, reply: opentk::SearchReply, base: &str) -> SearchAnswer {
    let incomplete = opentk::incompleteness(search, &reply);
    let hits = reply
        .results
        .into_iter()
        .map(|h| {
            let number = h.nummer.unwrap_or_default();
            let link = h
                .relurl
                .filter(|r| !r.is_empty() && !r.contains("://"))
                .map(|r| format!("{}/{}", base.trim_end_matches('/'), r.trim_start_matches('/')))
                .or_else(|| (!number.is_empty()).then(|| format!("{base}/document.html?nummer={number}")));
            Hit {
                date: h.datum,
                kind: h.category,
                subject: h.onderwerp,
                snippet: h
                    .snip
                    .map(|s| crate::connectors::vocabulary::readable_snippet(&s, "<b>", "</b>")),
                link,
                number,
            }
        })
        .collect();
    SearchAnswer {
        query: search.query.clone(),
        kind: search.kind.as_str().to_owned(),
        recent: search.recent,
        hits,
        milliseconds: reply.milliseconds,
        incomplete,
    }
}

/// How long a search answer is kept: briefly when it may be incomplete.
fn keep_for(answer: &SearchAnswer) -> Keep {
    if answer.incomplete.is_some() {
        Keep::Briefly {
            ttl_ms: INCOMPLETE_KEEP_MS,
        }
    } else {
        Keep::Normal
    }
}

/// The kept answer of an activity.
fn activity_answer(number: &str, reply: ActivityReply) -> ActivityAnswer {
    let meta = serde_json::Value::Object(reply.meta);
    let doc = |d: &serde_json::Value| DocRef {
        number: text_field(d, &["nummer", "documentnummer"]),
        kind: text_field(d, &["soort"]),
        subject: text_field(d, &["onderwerp", "titel"]),
    };
    let agenda = reply
        .agendapunten
        .iter()
        .map(|p| AgendaPoint {
            subject: text_field(p, &["onderwerp", "noot"]),
            documents: ["docs", "zdocs"]
                .iter()
                .flat_map(|k| p.get(k).and_then(|v| v.as_array()).into_iter().flatten())
                .map(doc)
                .collect(),
        })
        .collect();
    ActivityAnswer {
        number: text_field(&meta, &["nummer"]).unwrap_or_else(|| number.to_owned()),
        kind: text_field(&meta, &["soort"]),
        subject: text_field(&meta, &["onderwerp"]),
        start: text_field(&meta, &["aanvangstijd", "datum"]),
        end: text_field(&meta, &["eindtijd"]),
        room: text_field(&reply.zaal, &["naam", "zaal"]).or_else(|| reply.zaal.as_str().map(str::to_owned)),
        committees: reply
            .comactors
            .iter()
            .filter_map(|c| text_field(c, &["naam", "actornaam", "commissienaam"]))
            .collect(),
        agenda,
        documents: reply.docs.iter().map(doc).collect(),
        commitments: reply
            .toezeggingen
            .iter()
            .filter_map(|t| {
                text_field(t, &["tekst", "omschrijving", "onderwerp"]).or_else(|| t.as_str().map(str::to_owned))
            })
            .collect(),
        video_url: reply.videourl.filter(|v| !v.is_empty()),
        record: meta,
    }
}

fn kind_arg<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<KindArg>, D::Error> {
    super::pages::choice("kind", d)
}

/// The `opentk_document` tool (its spec is what `fetch` runs for this connector's ids).
pub(crate) const DOCUMENT_TOOL: ToolSpec = crate::tool! {
    name: "opentk_document",
    title: "Tweede Kamer document text (OpenTK)",
    description: "One Tweede Kamer document by number or kamerstuk id: title, text in pages (OpenTK's rendition, \
                  or with `source: file` the original file's) and links to its page and file; `next_offset` \
                  reads on. Use opentk_search's snippets when they suffice. Kept for \
                  weeks.",
    arguments: DocumentArgs,
    output: render::DocumentShown,
    run: opentk_document,
    read: document_read,
};

/// The `opentk_activity` tool (its spec is what `fetch` runs for this connector's ids).
pub(crate) const ACTIVITY_TOOL: ToolSpec = crate::tool! {
    name: "opentk_activity",
    title: "Tweede Kamer activity (OpenTK)",
    description: "One Tweede Kamer activity (committee meeting, debate) by its number: kind, subject, time and \
                  room, committees, the agenda with its documents, the activity's documents, commitments made by \
                  ministers (toezeggingen) and the video link. Kept for an hour (agendas change until the \
                  meeting).",
    arguments: ActivityArgs,
    output: render::ActivityShown,
    run: opentk_activity,
    read: activity_read,
};

/// The `opentk_search` tool (its spec is what `search` runs for this connector).
pub(crate) const SEARCH_TOOL: ToolSpec = Keyword::<OpenTkSearchTool>::TOOL;

/// `opentk_search`, declared once: the tool and its part in `search` on `/mcp` (full
/// text of Tweede Kamer documents).
pub(crate) struct OpenTkSearchTool;

impl KeywordTool for OpenTkSearchTool {
    const NAME: &'static str = "opentk_search";
    const TITLE: &'static str = "Full-text search of Tweede Kamer documents";
    const DESCRIPTION: &'static str = "Full-text search over Tweede Kamer documents through OpenTK (tk_search \
        matches titles only). Syntax: all words must appear; \"exact phrase\"; NEAR(a b); AND / OR / NOT in \
        capitals; prefix*. OpenTK returns at most 280 hits, newest first, and cuts busy searches short: the answer \
        says when it may be incomplete. Paging and repeats (ten minutes) come from BesluitBron's buffer.";
    type Args = SearchArgs;
    type Output = render::SearchShown;
    /// The kept answer, and the page of it asked (offset, limit).
    type Found = Asking<SearchAnswer, (usize, usize)>;

    async fn find(ctx: &Context, call: &Call, args: SearchArgs) -> Result<Self::Found, Reply> {
        let (pc, offset, limit) = search_question(ctx, &args)?;
        let kept = ctx.fetch_kept(call, pc).await?;
        Ok(Asking {
            kept,
            asked: (offset, limit),
        })
    }

    fn render(found: &Self::Found) -> Rendered {
        let (offset, limit) = found.asked;
        render::search(&found.kept.answer, found.kept.served, offset, limit)
    }

    fn listing(found: &Self::Found) -> Listing {
        let (offset, limit) = found.asked;
        render::listing(&found.kept.answer, offset, limit)
    }

    /// Its listing, and why it may be incomplete as the note (the page shows its own
    /// window of the hits).
    fn hits(found: &Self::Found) -> crate::connectors::page_spec::Hits {
        let mut hits = crate::connectors::page_spec::Hits::of(Self::listing(found));
        hits.note = found.kept.answer.incomplete.clone();
        hits
    }

    fn arguments(asked: &Asked) -> serde_json::Map<String, serde_json::Value> {
        let mut args = serde_json::Map::new();
        args.insert("query".into(), asked.query.clone().into());
        args.insert("limit".into(), asked.limit.into());
        args
    }
}

/// The `opentk_status` tool: one of the connector's lists.
pub(crate) const STATUS_TOOL: ToolSpec = crate::tool! {
    name: "opentk_status",
    title: "OpenTK freshness",
    description: "When OpenTK's harvesters last updated its copy of the Tweede Kamer's data (/lastupdates), so \
                  you can judge how fresh opentk_search results are. Cheap; kept ten minutes.",
    arguments: NoArgs,
    output: StatusAnswer,
    run: opentk_status,
};

/// The tools.
const TOOLS: &[ToolSpec] = &[SEARCH_TOOL, DOCUMENT_TOOL, ACTIVITY_TOOL, STATUS_TOOL];

/// `opentk_search`'s platform call and the page of hits asked, or the refusal that
/// stands for it.
fn search_question(ctx: &Context, args: &SearchArgs) -> Result<(PlatformCall<SearchAnswer>, usize, usize), Reply> {
    let (search, offset, limit) = search_of(args).map_err(|message| Reply::from(tool_error(message)))?;
    let client = ctx.clients.get::<OpenTkClient>(PLATFORM)?;
    let key = CacheKey::new(PLATFORM, DataClass::Search, "search")
        .param("query", search.query.clone())
        .param("kind", search.kind.as_str())
        .param("recent", search.recent.to_string());
    let base = client.base_url().to_owned();
    let search = Arc::new(search);
    let pc = PlatformCall::new(key, COST, move || {
        let (client, search, base) = (Arc::clone(&client), Arc::clone(&search), base.clone());
        async move {
            let reply = client.search(&search).await?;
            let answer = search_answer(&search, reply, &base);
            let keep = keep_for(&answer);
            Ok((
                answer,
                Feedback {
                    keep,
                    ..Feedback::default()
                },
            ))
        }
    });
    Ok((pc, offset, limit))
}

/// One document's text (OpenTK).
async fn opentk_document(ctx: &Context, call: &Call, args: DocumentArgs) -> Reply {
    replied(document_read(ctx, call, args).await)
}

/// One document's text read, typed (`opentk_document`'s answer, and `fetch`'s).
async fn document_read(ctx: &Context, call: &Call, args: DocumentArgs) -> ReadResult {
    // The id as `fetch` and `search` write it (`opentk:2026D10385`) reads as the number.
    let Some(id) = DocumentId::parse(crate::connectors::ids::own(PLATFORM, &args.id)) else {
        return Err(tool_error(format!(
            "opentk_document: `{}` is not a document number (2026D12345, from opentk_search) or kamerstuk id \
             (kst-36200-12); for a Tweede Kamer GUID use tk_document_text",
            short(&args.id)
        ))
        .into());
    };
    let length = match super::pages::text_length("opentk_document", args.length) {
        Ok(length) => length,
        Err(message) => return Err(tool_error(message).into()),
    };
    let offset = args.offset.unwrap_or(0);
    let client = match ctx.clients.get::<OpenTkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return Err(e.into()),
    };
    let key = CacheKey::new(PLATFORM, DataClass::Document, "document").param("id", id.as_str());
    let id = Arc::new(id);
    let pc = PlatformCall::revalidating(key, COST, move |previous: Option<Arc<DocumentAnswer>>| {
        let (client, id) = (Arc::clone(&client), Arc::clone(&id));
        async move {
            let etag = previous.as_ref().and_then(|p| p.etag.clone());
            match client.document(&id, etag.as_deref()).await? {
                Fetch::NotModified => match previous {
                    Some(previous) => Ok((
                        DocumentAnswer::clone(&previous),
                        Feedback {
                            revalidated: true,
                            ..Feedback::default()
                        },
                    )),
                    // Asked without a copy, a 304 is nonsense.
                    None => Err(PlatformError::Garbage {
                        platform: PLATFORM,
                        detail: "HTTP 304 to a request that was not conditional".into(),
                    }),
                },
                Fetch::Fresh(doc) => Ok((document_answer(doc), Feedback::default())),
            }
        }
    });
    if args.source != Some(TextSourceArg::File) {
        return ctx
            .read_for(Who::Caller, call, pc, |answer, served| {
                Ok((render::head(answer), render::document(answer, served, offset, length)))
            })
            .await;
    }
    // The original file: the document first (its number and links, usually from the
    // buffer), then the file through the process's document-text pool, kept apart.
    let (doc, doc_served) = match ctx.fetch(Who::Caller, call, pc).await {
        Ok(fetched) => fetched,
        Err(e) => return Err(e.into()),
    };
    let key = CacheKey::new(PLATFORM, DataClass::Document, "file").param("number", doc.number.as_str());
    let number: Arc<str> = Arc::from(doc.number.as_str());
    let client = match ctx.clients.get::<OpenTkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return Err(e.into()),
    };
    let file_call = PlatformCall::new(key, COST, move || {
        let (client, number) = (Arc::clone(&client), Arc::clone(&number));
        async move {
            let bytes = client.raw_file(&number).await?;
            let pool = crate::text::ExtractPool::shared(0, crate::text::Caps::default());
            let text = match pool.extract(Arc::from(bytes)).await {
                Ok(text) => render::FileText::Text { text: text.text },
                Err(crate::text::TextError::NoTextLayer { pages }) => render::FileText::NoTextLayer { pages },
                Err(e) => {
                    return Err(PlatformError::Garbage {
                        platform: PLATFORM,
                        detail: format!("the original file of document {number}: {e}"),
                    });
                }
            };
            Ok((text, Feedback::default()))
        }
    });
    ctx.read_for(Who::Caller, call, file_call, |file, served| {
        // From the buffer only when both parts were.
        let served = if served == Served::Cached { doc_served } else { served };
        let rendered = render::document(&doc.with_file_text(file), served, offset, length);
        Ok((render::head(&doc), rendered))
    })
    .await
}

/// A fetched document as kept and answered: its text cut at [`render::MAX_TEXT_CHARS`].
fn document_answer(doc: crate::platforms::opentk::DocumentText) -> DocumentAnswer {
    let text_chars = doc.text.chars().count();
    let truncated = text_chars > render::MAX_TEXT_CHARS;
    let text = if truncated {
        doc.text.chars().take(render::MAX_TEXT_CHARS).collect()
    } else {
        doc.text
    };
    DocumentAnswer {
        number: doc.number,
        title: doc.title,
        text,
        text_chars,
        truncated,
        etag: doc.etag,
        page_url: doc.page_url,
        html_url: doc.html_url,
        raw_url: doc.raw_url,
        raw_note: render::RAW_NOTE.to_owned(),
        from_file: false,
    }
}

/// A committee meeting or debate (OpenTK).
async fn opentk_activity(ctx: &Context, call: &Call, args: ActivityArgs) -> Reply {
    match activity_call(ctx, &args) {
        Ok((pc, _)) => ctx.answer_kept(call, pc, render::activity).await,
        Err(reply) => reply,
    }
}

/// A committee meeting or debate read, typed (`fetch`'s answer): its subject, and its
/// page at OpenTK.
async fn activity_read(ctx: &Context, call: &Call, args: ActivityArgs) -> ReadResult {
    let (pc, page) = activity_call(ctx, &args)?;
    ctx.read_for(Who::Caller, call, pc, |answer, served| {
        let head = Head::new(answer.subject.clone().unwrap_or_default(), Some(page));
        Ok((head, render::activity(answer, served)))
    })
    .await
}

/// The platform call of `opentk_activity` with `args`, and the activity's page at
/// OpenTK; or the reply that says why there is none.
fn activity_call(ctx: &Context, args: &ActivityArgs) -> Result<(PlatformCall<ActivityAnswer>, String), Reply> {
    let Some(number) = opentk::parse_number(crate::connectors::ids::own(PLATFORM, &args.id)) else {
        return Err(tool_error(format!(
            "`{}` is not an activity number (such as 2026A01234)",
            short(&args.id)
        ))
        .into());
    };
    let client = ctx.clients.get::<OpenTkClient>(PLATFORM)?;
    let page = format!(
        "{}/activiteit.html?nummer={number}",
        client.base_url().trim_end_matches('/')
    );
    let key = CacheKey::new(PLATFORM, DataClass::Document, "activity").param("id", number.clone());
    let number: Arc<str> = Arc::from(number);
    let pc = PlatformCall::new(key, COST, move || {
        let (client, number) = (Arc::clone(&client), Arc::clone(&number));
        async move {
            let reply = client.activity(&number).await?;
            let keep = Keep::Briefly {
                ttl_ms: ACTIVITY_KEEP_MS,
            };
            Ok((
                activity_answer(&number, reply),
                Feedback {
                    keep,
                    ..Feedback::default()
                },
            ))
        }
    });
    Ok((pc, page))
}

/// When OpenTK's harvesters last ran.
async fn opentk_status(ctx: &Context, call: &Call, _args: NoArgs) -> Reply {
    let client = match ctx.clients.get::<OpenTkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return e.into(),
    };
    let key = CacheKey::new(PLATFORM, DataClass::Search, "lastupdates");
    let pc = PlatformCall::new(key, COST, move || {
        let client = Arc::clone(&client);
        async move {
            let harvesters = client
                .last_updates()
                .await?
                .into_iter()
                .map(|(name, u)| Harvester {
                    name,
                    updated_at_unix: u.absolute.map(|a| a as i64),
                    seconds_ago: u.relative.map(|r| r as i64),
                })
                .collect();
            Ok((StatusAnswer { harvesters }, Feedback::default()))
        }
    });
    ctx.answer_kept(call, pc, render::status).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::connectors::ids::Claim;

    #[test]
    fn an_answer_that_may_be_incomplete_is_kept_a_minute_at_most() {
        let search = OpenTkSearch {
            query: "stikstof".into(),
            kind: SearchKind::Moties,
            recent: false,
        };
        let reply = opentk::SearchReply::default();
        let answer = search_answer(&search, reply.clone(), "http://x");
        assert_eq!(keep_for(&answer), Keep::Briefly { ttl_ms: 60_000 });
        let complete = search_answer(
            &OpenTkSearch {
                kind: SearchKind::Alles,
                ..search
            },
            reply,
            "http://x",
        );
        assert_eq!(keep_for(&complete), Keep::Normal);
    }

    #[test]
    fn arguments_are_refused_before_any_call_without_echoing_them() {
        let args = |query: &str, kind: Option<KindArg>, limit: Option<u32>| SearchArgs {
            query: query.to_owned(),
            kind,
            recent: false,
            limit,
            offset: None,
        };
        assert!(search_of(&args("stikstof", None, None)).is_ok());
        let long = "x".repeat(10_000);
        let e = search_of(&args(&long, None, None)).unwrap_err();
        assert!(e.len() < 120, "{e}");
        // A kind outside the list is refused by deserializing, naming the allowed ones.
        let e = serde_json::from_value::<SearchArgs>(serde_json::json!({"query": "a", "kind": "motie"})).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("`kind`: unknown variant `motie`, expected one of `alles`, `moties`"),
            "{e}"
        );
        assert!(search_of(&args("  ", None, None)).is_err());
        assert!(search_of(&args("a", None, Some(0))).is_err());
        assert!(search_of(&args("a", None, Some(101))).is_err());
        assert_eq!(search_of(&args("a", Some(KindArg::Moties), Some(100))).unwrap().2, 100);
        let past = SearchArgs {
            offset: Some(280),
            ..args("a", None, None)
        };
        assert!(search_of(&past).unwrap_err().contains("at most 280"));
        let schema = serde_json::to_value(schemars::schema_for!(SearchArgs)).unwrap();
        assert_eq!(schema["properties"]["query"]["maxLength"], 500);
    }

    #[test]
    fn activities_and_documents_are_a_copy_unless_the_link_is_opentks() {
        let r = |id: &str| read(id, Paging::default()).map(|r| r.map(|r| (r.id, r.claim, r.tool.name)));
        assert_eq!(
            r("2025A04597"),
            Some(Ok(("2025A04597".into(), Claim::Copy, "opentk_activity")))
        );
        assert_eq!(
            r("2021D02426"),
            Some(Ok(("2021D02426".into(), Claim::Copy, "opentk_document")))
        );
        assert_eq!(
            r("kst-35510-16"),
            Some(Ok(("kst-35510-16".into(), Claim::Copy, "opentk_document")))
        );
        assert_eq!(
            r("https://berthub.eu/tkconv/document.html?nummer=2021D02426"),
            Some(Ok(("2021D02426".into(), Claim::Home, "opentk_document")))
        );
        assert!(r("ECLI:NL:RVS:2015:3394").is_none());
    }
}
