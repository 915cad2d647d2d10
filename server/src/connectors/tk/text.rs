//! `tk_document_text`: the text of a Tweede Kamer document, paged by characters.
//!
//! Two platform calls, each through the one path:
//! 1. the document's record, kept ten minutes (`document_version`): it names the
//!    version (`GewijzigdOp`), the number and what the metadata says the file is;
//! 2. the text, kept for weeks under a key that holds `GewijzigdOp`
//!    (`document_text`), so a changed document is read again: first the clean KOOP XML
//!    rendition when there is one (`DocumentPublicatie`, PLATFORMS.md §10.5), else the
//!    file `/Document({id})/resource`, sniffed and read in the text pool.
//!
//! What is kept: a text for weeks — except a Word file served where the metadata
//! promises a PDF, kept an hour (the platform replaces it by the PDF within hours); a
//! scan's "no text layer" as a fact (shown as a tool error); an unsupported format an
//! hour. A file that fails to read (a cap, corrupt, a panic), or bytes of no known format
//! where the record or the answer promises a format BesluitBron reads, is an error and
//! never kept.

use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Keep, Served};
use besluitbron_core::{PlatformId, Units};
use rmcp::schemars;
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::connectors::pages::{TextPage, text_page};

use crate::call::{
    Call, Context, Head, PlatformCall, ReadResult, Rendered, Reply, Structure, Who, provenance, replied, tool_error,
};
use crate::connectors::tool::ToolSpec;
use crate::platforms::http::PlatformError;
use crate::platforms::tk::{Document, TkClient};
use crate::text::{ExtractPool, Format, TextError};

const PLATFORM: PlatformId = crate::platforms::tk::PLATFORM;

/// The record that names the version is kept this long.
const VERSION_TTL_MS: u64 = 10 * 60 * 1000;
/// A Word file where a PDF is promised, or an unsupported format, is kept this long.
const PROVISIONAL_TTL_MS: u64 = 60 * 60 * 1000;

/// Arguments of `tk_document_text`.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TextArgs {
    /// The document's number (`2021D02426`), its `id` from tk_search (a GUID), or a link
    /// to it on tweedekamer.nl.
    #[schemars(length(max = 300))]
    pub id: String,
    /// From `next_offset`.
    #[serde(default)]
    pub offset: Option<usize>,
    /// Characters (default 8000).
    #[schemars(range(min = 1, max = 100_000))]
    #[serde(default)]
    pub length: Option<usize>,
}

/// A document's text as BesluitBron keeps it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TextAnswer {
    /// The document's GUID.
    pub id: String,
    /// Its number, e.g. `2024D39058`.
    pub number: Option<String>,
    /// Its subject.
    pub subject: Option<String>,
    /// The version read (`GewijzigdOp`).
    pub changed_at: Option<String>,
    /// `xml rendition` or `file`.
    pub source: String,
    /// The format read.
    pub format: Format,
    /// Pages, for a PDF.
    pub pages: Option<u32>,
    /// The file's link at the platform.
    pub file_url: String,
    /// The text (empty when `unreadable`).
    pub text: String,
    /// Why the file has no text BesluitBron can give (no text layer, unsupported).
    pub unreadable: Option<String>,
}

/// The tool.
pub(super) const TOOL: ToolSpec = crate::tool! {
    name: "tk_document_text",
    title: "Tweede Kamer document text",
    description: "One Tweede Kamer document's full text in pages: its XML rendition, else its file (PDF, Word, \
                  RTF). Seconds the first time for a long PDF, then weeks in the buffer; `next_offset` reads on. A \
                  scan without text or a legacy .doc says so.",
    arguments: TextArgs,
    output: TextShown,
    run: tk_document_text,
    read: text_read,
};

/// The text of one Tweede Kamer document.
pub(super) async fn tk_document_text(ctx: &Context, call: &Call, args: TextArgs) -> Reply {
    replied(text_read(ctx, call, args).await)
}

/// One document's text read, typed (`tk_document_text`'s answer, and `fetch`'s).
pub(super) async fn text_read(ctx: &Context, call: &Call, args: TextArgs) -> ReadResult {
    let Some(document) = super::ids::named(crate::connectors::ids::own(PLATFORM, &args.id)).and_then(|n| match n {
        super::ids::Named::Document(d) => Some(d),
        _ => None,
    }) else {
        return Err(tool_error(format!(
            "tk_document_text: `{}` is not a Tweede Kamer document: give its number (2021D02426), its `id` from \
             tk_search (a GUID) or a link to it on tweedekamer.nl (nothing asked of the Tweede Kamer)",
            crate::platforms::http::brief(&args.id)
        ))
        .into());
    };
    let length = match crate::connectors::pages::text_length("tk_document_text", args.length) {
        Ok(length) => length,
        Err(message) => return Err(tool_error(message).into()),
    };
    let offset = args.offset.unwrap_or(0);
    let client = match ctx.clients.get::<TkClient>(PLATFORM) {
        Ok(c) => c,
        Err(e) => return Err(e.into()),
    };
    let key = match &document {
        super::ids::DocumentRef::Guid(id) => {
            CacheKey::new(PLATFORM, DataClass::Document, "document_version").param("id", id.clone())
        }
        super::ids::DocumentRef::Number(n) => {
            CacheKey::new(PLATFORM, DataClass::Document, "document_version").param("number", n.clone())
        }
    };
    let asked = Arc::new(document);
    let version = {
        let (client, asked) = (Arc::clone(&client), Arc::clone(&asked));
        PlatformCall::new(key, Units::ONE, move || {
            let (client, asked) = (Arc::clone(&client), Arc::clone(&asked));
            async move {
                let doc = match &*asked {
                    super::ids::DocumentRef::Guid(id) => client.document(id).await?,
                    super::ids::DocumentRef::Number(n) => client.document_by_number(n).await?,
                };
                let keep = Keep::Briefly { ttl_ms: VERSION_TTL_MS };
                Ok((
                    doc.document,
                    Feedback {
                        keep,
                        ..Feedback::default()
                    },
                ))
            }
        })
    };
    let document = match ctx.fetch(Who::Caller, call, version).await {
        Ok((document, _)) => document,
        Err(e) => return Err(e.into()),
    };
    let key = CacheKey::new(PLATFORM, DataClass::Document, "document_text")
        .param("id", document.id.to_lowercase())
        .param("changed_at", document.gewijzigd_op.clone().unwrap_or_default());
    let pool = client.text_pool();
    // A rendition lookup, its file and the document's file: up to three requests.
    let pc = PlatformCall::new(key, Units::whole(3), move || {
        let (client, document) = (Arc::clone(&client), Arc::clone(&document));
        async move { read_text(&client, &document, pool).await }
    });
    ctx.read_for(Who::Caller, call, pc, |answer, served| {
        Ok((head(answer), render(answer, served, offset, length)?))
    })
    .await
}

/// The document's text: its XML rendition if it has a readable one, else its file.
async fn read_text(
    client: &TkClient,
    document: &Document,
    pool: &ExtractPool,
) -> Result<(TextAnswer, Feedback), PlatformError> {
    let links = client.document_links(&document.id.to_lowercase())?;
    let name = document
        .document_nummer
        .clone()
        .map_or_else(|| format!("document {}", document.id), |n| format!("document {n}"));
    let answer = |source: &str, format: Format| TextAnswer {
        id: document.id.to_lowercase(),
        number: document.document_nummer.clone(),
        subject: document.onderwerp.clone(),
        changed_at: document.gewijzigd_op.clone(),
        source: source.to_owned(),
        format,
        pages: None,
        file_url: links.resource_url.clone(),
        text: String::new(),
        unreadable: None,
    };
    if let Some(number) = document.document_nummer.as_deref().filter(|n| !n.is_empty())
        && let Some(rendition) = client.xml_rendition(number).await?
    {
        let file = client.rendition_file(&rendition).await?;
        // An empty template or a broken rendition: the file is read instead.
        if let Ok(text) = pool.extract(Arc::from(file.bytes)).await
            && text.format == Format::Xml
        {
            let mut kept = answer("xml rendition", Format::Xml);
            kept.text = text.text;
            return Ok((kept, Feedback::default()));
        }
    }
    let file = client.document_file(&document.id.to_lowercase()).await?;
    let promised = |formats: &[&str]| {
        [document.content_type.as_deref(), file.content_type.as_deref()]
            .iter()
            .flatten()
            .any(|t| formats.iter().any(|f| t.to_ascii_lowercase().contains(f)))
    };
    let promised_pdf = promised(&["pdf"]);
    // The record or the answer says the file is one BesluitBron reads.
    let promised_readable = promised(&["pdf", "word", "officedocument", "rtf", "xml"]);
    let sniffed = crate::text::sniff(&file.bytes);
    let provisional = Feedback {
        keep: Keep::Briefly {
            ttl_ms: PROVISIONAL_TTL_MS,
        },
        ..Feedback::default()
    };
    // Word where a PDF is promised: the platform replaces it within hours.
    let feedback = if promised_pdf && matches!(sniffed, Some(Format::Docx | Format::Doc | Format::Rtf)) {
        provisional
    } else {
        Feedback::default()
    };
    match pool.extract(Arc::from(file.bytes)).await {
        Ok(text) => {
            let mut kept = answer("file", text.format);
            kept.pages = text.pages;
            kept.text = text.text;
            Ok((kept, feedback))
        }
        Err(TextError::NoTextLayer { pages }) => {
            let mut kept = answer("file", Format::Pdf);
            kept.pages = Some(pages);
            kept.unreadable = Some(TextError::NoTextLayer { pages }.to_string());
            Ok((kept, Feedback::default()))
        }
        // Bytes that are no format at all where the platform promised one it reads: a
        // broken or hostile answer, not a fact about the document, so never kept.
        Err(TextError::Unrecognised) if promised_readable => Err(PlatformError::Unreadable {
            platform: PLATFORM,
            document: name,
            detail: "the file is not the PDF, Word, RTF or XML the platform says it is".to_owned(),
        }),
        Err(e @ (TextError::Unsupported { .. } | TextError::Unrecognised)) => {
            let mut kept = answer("file", sniffed.unwrap_or(Format::Doc));
            kept.unreadable = Some(e.to_string());
            Ok((kept, provisional))
        }
        Err(e) => Err(PlatformError::Unreadable {
            platform: PLATFORM,
            document: name,
            detail: e.to_string(),
        }),
    }
}

/// `tk_document_text`'s structured content: the document's metadata without its text
/// (the page is the text content), and where the page is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TextShown {
    /// The document's GUID (`tk_document` and `tk_document_text` `id`).
    pub id: String,
    /// Its subject (or its number, when it has none).
    pub title: String,
    /// The version read (`GewijzigdOp`).
    pub date: Option<String>,
    /// The file's link at the platform.
    pub url: String,
    /// `tk`.
    pub platform: String,
    /// Its number, e.g. `2024D39058`.
    pub number: Option<String>,
    /// `xml rendition` or `file`.
    pub source: String,
    /// The format read: `pdf`, `docx`, `doc`, `rtf` or `xml`.
    pub format: String,
    /// Pages, for a PDF.
    pub pages: Option<u32>,
    /// Where the page of text is.
    #[serde(flatten)]
    pub page: TextPage,
}

/// The document as a person knows it: its subject (else its number), and its page on
/// tweedekamer.nl (else its file at the platform).
pub fn head(answer: &TextAnswer) -> Head {
    let name = answer.number.as_deref().unwrap_or(&answer.id);
    let page = answer.number.as_deref().and_then(super::ids::document_page);
    Head::new(
        answer.subject.clone().unwrap_or_else(|| name.to_owned()),
        Some(page.unwrap_or_else(|| answer.file_url.clone())),
    )
}

/// One page of the kept text, or the reason there is none (a tool error).
pub fn render(answer: &TextAnswer, served: Served, offset: usize, length: usize) -> Result<Rendered, String> {
    let name = answer.number.as_deref().unwrap_or(&answer.id);
    if let Some(reason) = &answer.unreadable {
        return Err(format!(
            "Tweede Kamer document {name} has no text BesluitBron can give: {reason}. The file: {}",
            answer.file_url
        ));
    }
    let (page, at) = text_page(&answer.text, offset, length);
    let from = match (answer.source.as_str(), answer.pages) {
        ("xml rendition", _) => "its XML rendition".to_owned(),
        (_, Some(pages)) => format!("its {} file, {pages} page(s)", answer.format.as_str()),
        _ => format!("its {} file", answer.format.as_str()),
    };
    let summary = format!(
        "Tweede Kamer document {name}{} — text from {from}, {}{}.",
        answer.subject.as_deref().map(|s| format!(" ({s})")).unwrap_or_default(),
        at.note(),
        provenance(served)
    );
    let shown = TextShown {
        id: answer.id.clone(),
        title: answer.subject.clone().unwrap_or_else(|| name.to_owned()),
        date: answer.changed_at.clone(),
        url: answer.file_url.clone(),
        platform: PLATFORM.as_str().to_owned(),
        number: answer.number.clone(),
        source: answer.source.clone(),
        format: json!(answer.format).as_str().unwrap_or_default().to_owned(),
        pages: answer.pages,
        page: at,
    };
    Ok(Rendered {
        text: format!("{summary}\n\n{page}"),
        structured: Structure::Own(json!(shown)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(text: &str, unreadable: Option<&str>) -> TextAnswer {
        TextAnswer {
            id: "72f7ab9b-dc59-4e67-8a04-798a744c256e".into(),
            number: Some("2024D39058".into()),
            subject: Some("Brief van de minister".into()),
            changed_at: Some("2024-01-02T08:00:00+01:00".into()),
            source: "file".into(),
            format: Format::Pdf,
            pages: Some(2),
            file_url: "https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0/Document(x)/resource".into(),
            text: text.into(),
            unreadable: unreadable.map(str::to_owned),
        }
    }

    #[test]
    fn pages_by_characters_and_says_what_is_left() {
        let r = render(&answer("één twee drie", None), Served::Fetched, 4, 4).unwrap();
        assert!(
            r.text.starts_with(
                "Tweede Kamer document 2024D39058 (Brief van de minister) — text from its PDF file, 2 page(s), \
             characters 4–8 of 13; 5 more: call again with `offset` 8"
            ),
            "{}",
            r.text
        );
        assert!(r.text.ends_with("\n\ntwee"));
        let last = render(&answer("één twee drie", None), Served::Cached, 9, 100).unwrap();
        assert!(
            last.text.contains("characters 9–13 of 13 (from BesluitBron's buffer)."),
            "{}",
            last.text
        );
    }

    #[test]
    fn a_scan_is_an_error_with_the_link_never_empty_text() {
        let reason = TextError::NoTextLayer { pages: 3 }.to_string();
        let e = render(&answer("", Some(&reason)), Served::Fetched, 0, 10).unwrap_err();
        assert!(
            e.contains("no text layer (3 page(s)") && e.contains("Document(x)/resource"),
            "{e}"
        );
    }
}
