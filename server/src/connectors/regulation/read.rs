//! A collection's reading tool (`bwb_read`, `cvdr_read`), its part in `fetch`, and its
//! answer: one regulation version, found by its id as in force on a day (or by a
//! versioned id), read whole or one article, paged by characters.
//!
//! Invariants:
//! - The id is read in every form the collection reads ([`Collection::asked`]: as `fetch`
//!   and `search` write it, a link, with the day and article the form says); the `date`
//!   and `article` arguments, where given, decide over the form's.
//! - Two calls, each kept as the module of the family says: the version's record, then
//!   its file, under the key the collection gives it ([`Collection::file_key`]).
//! - A missing article is the tool's error naming the articles there are.
//!
//! What this module does not do: decide what an id is (the collection does), or read the
//! XML (the client does).

use std::fmt::Write as _;
use std::marker::PhantomData;
use std::sync::Arc;

use besluitbron_core::Units;
use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Served};
use rmcp::model::JsonObject;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::args::{ReadArgs, date_arg, read_length};
use super::collection::{Collection, Record};
use super::text::{OutlineEntry, outline, regulation_page};
use crate::call::{
    Call, Context, Head, PlatformCall, ReadResult, Rendered, Reply, Structure, Who, provenance, replied, tool_error,
};
use crate::connectors::ids::{Claim, IdReader, Paging, Reading, own};
use crate::connectors::pages::TextPage;
use crate::connectors::tool::{self, ReadFuture, ToolFuture, ToolSpec};
use crate::platforms::koop::REPOSITORY;
use crate::platforms::koop::regulation::Regulation;
use crate::platforms::koop::zoekservice::{RegulationClient, RegulationCollection};

/// Every record lookup and every file counts one call.
const COST: Units = Units::ONE;

/// What a reading keeps of the version lookup: the record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionAnswer<R> {
    /// The version's record.
    pub record: R,
}

/// What a reading keeps of the file: the regulation read whole. Kept as `text` (the
/// Basiswettenbestand's answers kept before the family was one say `toestand`, and are
/// read as well).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextAnswer {
    /// The regulation.
    #[serde(alias = "toestand")]
    pub text: Regulation,
}

/// A reading's structured content: the family's fields, the collection's own
/// ([`Collection::Shown`]), and where the page of text is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct ReadShown<E> {
    /// The id of the version read.
    pub id: String,
    /// Its citation title (or the record's title).
    pub title: String,
    /// The regulation's kind.
    pub kind: Option<String>,
    /// The organisation that set it.
    pub organization: Option<String>,
    /// Its page for people.
    pub url: String,
    /// The platform's id.
    pub platform: String,
    /// The day this version ends, as the record writes it.
    pub valid_until: Option<String>,
    /// The article read, when one was asked.
    pub article: Option<String>,
    /// Articles in the version (0 for one written in chapters or parts without them).
    pub articles: usize,
    /// Divisions, articles and parts (aanhef, ondertekening, annexes), in order (the
    /// first 60).
    pub outline: Vec<OutlineEntry>,
    /// Entries of the whole outline (more than shown when the regulation is long: read
    /// on by `article`, or page the text).
    pub outline_entries: usize,
    /// The collection's own fields.
    #[serde(flatten)]
    pub own: E,
    /// Where the page of text is (the text itself is the answer's text content).
    #[serde(flatten)]
    pub page: TextPage,
}

/// The reading tool of collection `C`.
pub const fn tool<C: Collection>() -> ToolSpec {
    ToolSpec {
        name: C::SPEC.read.name,
        definition: definition::<C>,
        run: run::<C>,
        read: Some(read_run::<C>),
        asks: &[],
    }
}

fn definition<C: Collection>() -> rmcp::model::Tool {
    let words = &C::SPEC.read;
    tool::definition::<ReadArgs<C>, ReadShown<C::Shown>>(words.name, words.title, words.description)
}

fn run<'a, C: Collection>(ctx: &'a Context, call: &'a Call, arguments: JsonObject) -> ToolFuture<'a> {
    tool::boxed(async move {
        match tool::arguments::<ReadArgs<C>>(call, arguments) {
            Ok(arguments) => read::<C>(ctx, call, arguments).await,
            Err(reply) => reply,
        }
    })
}

fn read_run<'a, C: Collection>(ctx: &'a Context, call: &'a Call, arguments: JsonObject) -> ReadFuture<'a> {
    Box::pin(async move {
        let arguments = tool::arguments::<ReadArgs<C>>(call, arguments)?;
        read_typed::<C>(ctx, call, arguments).await
    })
}

/// Collection `C`'s reading tool, where a reference to it is kept.
pub struct ReadTool<C>(PhantomData<C>);

impl<C: Collection> ReadTool<C> {
    /// The tool.
    pub const SPEC: &'static ToolSpec = &tool::<C>();
    /// The ids it reads (`fetch` on `/mcp`, its resource template).
    pub const READER: &'static IdReader = &IdReader {
        // Every record it reads has a public page (`fetch`'s `url`).
        public_pages: true,
        paged: &[Self::SPEC],
        forms: C::SPEC.forms,
        read: reading::<C>,
    };
}

/// What collection `C` reads of `id` (`fetch`, its resource), with the paging asked.
pub fn reading<C: Collection>(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let asked = C::asked(id)?;
    let mut shown = asked.id.clone();
    if let Some(d) = &asked.date {
        shown.push_str(&format!("@{d}"));
    }
    if let Some(a) = &asked.article {
        shown.push_str(&format!("#{a}"));
    }
    let args = ReadArgs::<C>::of(asked, paging);
    Some(Ok(Reading::new(
        shown,
        Claim::Home,
        ReadTool::<C>::SPEC,
        move |ctx, call| Box::pin(read_typed::<C>(ctx, call, args)),
    )))
}

/// What a reading was asked, with the version found.
pub(crate) struct Read<R> {
    /// The version's record.
    pub(crate) record: R,
    /// The day asked, when the id names no version by itself.
    pub(crate) date: Option<String>,
    /// The article asked.
    pub(crate) article: Option<String>,
    /// The first character of the page.
    pub(crate) offset: usize,
    /// Characters of the page.
    pub(crate) length: usize,
}

/// Reads one regulation of collection `C`.
pub async fn read<C: Collection>(ctx: &Context, call: &Call, args: ReadArgs<C>) -> Reply {
    replied(read_typed::<C>(ctx, call, args).await)
}

/// One regulation of collection `C` read, typed (its reading tool's answer, and
/// `fetch`'s).
pub async fn read_typed<C: Collection>(ctx: &Context, call: &Call, args: ReadArgs<C>) -> ReadResult {
    let name = C::SPEC.read.name;
    let (id, date, article) = match C::asked(own(C::PLATFORM, &args.id)) {
        Some(asked) => (asked.id, args.date.or(asked.date), args.article.or(asked.article)),
        None => (args.id.trim().to_ascii_uppercase(), args.date, args.article),
    };
    if !C::Platform::is_id(&id) {
        return Err(tool_error(format!(
            "{name}: `{}` is not {}",
            crate::platforms::http::brief(&args.id),
            C::SPEC.words.not_an_id
        ))
        .into());
    }
    let versioned = C::Platform::versioned(&id);
    let date = match date_arg(name, date.as_deref(), ctx.clock.wall()) {
        Ok(date) => date,
        Err(message) => return Err(tool_error(message).into()),
    };
    let length = match read_length(name, args.length) {
        Ok(length) => length,
        Err(message) => return Err(tool_error(message).into()),
    };
    let article = article
        .as_deref()
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_owned);
    let client = match ctx.clients.get::<RegulationClient<C::Platform>>(C::PLATFORM) {
        Ok(c) => c,
        Err(e) => return Err(e.into()),
    };
    let record = match ctx
        .fetch(Who::Caller, call, version_call::<C>(&client, &id, &date, versioned))
        .await
    {
        Ok((version, _)) => version.record.clone(),
        Err(e) => return Err(e.into()),
    };
    let Some(location) = C::Platform::file(&record).map(str::to_owned) else {
        return Err(tool_error(C::without_file(&C::version(&record), &date)).into());
    };
    // 2. Its file, kept under the version.
    let text = PlatformCall::new(C::file_key(&record), COST, move || {
        let (client, location) = (Arc::clone(&client), location.clone());
        async move {
            let text = client.file(&location).await?;
            Ok((TextAnswer { text }, Feedback::default()))
        }
    })
    .at(REPOSITORY);
    let read = Read {
        record,
        date: (!versioned).then_some(date),
        article,
        offset: args.offset.unwrap_or(0),
        length,
    };
    ctx.read_for(Who::Caller, call, text, |answer, served| {
        render::<C>(answer, served, &read)
    })
    .await
}

/// 1. The version's record: a versioned id's never changes; a work's depends on the day.
fn version_call<C: Collection>(
    client: &Arc<RegulationClient<C::Platform>>,
    id: &str,
    date: &str,
    versioned: bool,
) -> PlatformCall<VersionAnswer<Record<C>>> {
    let key = if versioned {
        CacheKey::new(C::PLATFORM, DataClass::Document, "version").param("id", id.to_owned())
    } else {
        CacheKey::new(C::PLATFORM, DataClass::Search, "in_force")
            .param("id", id.to_owned())
            .param("date", date.to_owned())
    };
    let (client, id, date) = (Arc::clone(client), Arc::<str>::from(id), Arc::<str>::from(date));
    PlatformCall::new(key, COST, move || {
        let (client, id, date) = (Arc::clone(&client), Arc::clone(&id), Arc::clone(&date));
        async move {
            let record = client.version(&id, &date).await?;
            Ok((VersionAnswer { record }, Feedback::default()))
        }
    })
}

/// A reading's result: the version in a line, what its record adds, then the page of
/// text (the article asked, or the whole regulation); a missing article is the tool's
/// error naming the ones there are.
pub(crate) fn render<C: Collection>(
    answer: &TextAnswer,
    served: Served,
    read: &Read<Record<C>>,
) -> Result<(Head, Rendered), String> {
    let words = &C::SPEC.words;
    let t = &answer.text;
    let v = C::version(&read.record);
    let title = t
        .citation_title
        .clone()
        .filter(|c| !c.is_empty())
        .unwrap_or_else(|| v.title.clone());
    let on = read
        .date
        .as_deref()
        .map(|d| format!(" as in force on {d}"))
        .unwrap_or_default();
    // A versioned id names the version itself; a regulation's id needs its day.
    let named = if C::Platform::versioned(&v.id) { "" } else { on.as_str() };
    let page = regulation_page(
        t,
        read.article.as_deref(),
        read.offset,
        read.length,
        &format!("{title} ({}){named}", v.id),
    )?;
    let articles = t.articles().count();
    let until = words
        .end(v.until.as_deref())
        .map(|u| format!(" until {u}"))
        .unwrap_or_else(|| " (no end set)".to_owned());
    let mut text = format!(
        "{title} ({}, {}{}){on}: the version {} {}{until}{}. {}. {}",
        v.id,
        v.kind.as_deref().unwrap_or("kind unknown"),
        v.organization.as_deref().map(|o| format!(", {o}")).unwrap_or_default(),
        words.version_from,
        v.from.as_deref().unwrap_or("?"),
        provenance(served),
        match words.no_articles {
            Some(none) if articles == 0 => none.to_owned(),
            _ => format!("{articles} articles"),
        },
        v.url
    );
    if let Some(about) = C::about(&read.record) {
        let _ = write!(text, "\n{about}");
    }
    match &page.article {
        Some(n) => {
            let _ = write!(text, "\nArticle {n}, {}.", page.at.note());
        }
        None => {
            let _ = write!(text, "\nThe text, {}.", page.at.note());
        }
    }
    if page.at.text_length == 0 && page.at.total_length > 0 {
        let _ = write!(text, " This offset is past the end of the text.");
    }
    text.push_str("\n\n");
    text.push_str(&page.text);
    let (outline, outline_entries) = outline(t);
    let head = Head::new(title.clone(), Some(v.url.clone()).filter(|u| !u.is_empty()));
    let shown = ReadShown {
        own: C::shown(&read.record, read.date.as_deref()),
        id: v.id,
        title,
        kind: v.kind,
        organization: v.organization,
        url: v.url,
        platform: C::PLATFORM.as_str().to_owned(),
        valid_until: v.until,
        article: page.article,
        articles,
        outline,
        outline_entries,
        page: page.at,
    };
    let rendered = Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    };
    Ok((head, rendered))
}
