//! A reading tool's answer, typed: [`Read`] — what the tool shows of one record (its
//! [`Rendered`] text and structured content, with the kept answer behind it) and the
//! record's [`Head`] (the title a person reads, its public page), taken from the typed
//! answer by the tool's own render. The tool sends it as its result ([`Read::result`]);
//! `fetch` on `/mcp` answers it as a [`Document`] ([`Read::document`]), never reading the
//! tool's result back.
//!
//! Invariants: a `Read`'s result and its document are made from the same `Rendered`, so
//! `fetch`'s text is exactly the tool's; the head is the render's own, never looked up in
//! the structured content.
//!
//! What this module does not do: ask a platform (the call layer's `Context::read_for`
//! does), turn a failure into a tool error (the call layer does, naming the platform) or
//! decide which tool reads an id (the connectors do).

use besluitbron_core::PlatformId;
use rmcp::model::CallToolResult;
use serde_json::{Map, Value};

use super::rendered::{Rendered, Structure, without_nulls};
use crate::driver::SharedPayload;

/// The record a reading tool read, as a person knows it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Head {
    /// Its title, as the platform gives it (a case's subject, a law's title).
    pub title: String,
    /// Its public page (or the original file) where the platform has one.
    pub url: Option<String>,
}

impl Head {
    /// The head of a record titled `title` at `url`.
    pub fn new(title: impl Into<String>, url: Option<impl Into<String>>) -> Head {
        Head {
            title: title.into(),
            url: url.map(Into::into),
        }
    }
}

/// A reading tool's answer, typed: the record's head and what the tool shows of it.
#[derive(Debug)]
pub struct Read {
    /// The platform that answered.
    pub platform: PlatformId,
    /// The record as a person knows it.
    pub head: Head,
    /// What the tool shows.
    pub rendered: Rendered,
    /// The kept answer the structured content is made from, when it is the answer's
    /// ([`crate::call::Structure::Answer`]); `None` when the render made its own.
    pub payload: Option<SharedPayload>,
}

/// The record read, as `fetch` answers it (ChatGPT's `{id, title, text, url, metadata}`
/// without the id, which is the one `fetch` was given); sent as it is between replicas.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Document {
    /// Its title.
    pub title: String,
    /// Its public page or original, an `http(s)` address.
    pub url: Option<String>,
    /// The text, as the reading tool gives it.
    pub text: String,
    /// The reading tool's structured content without what is said above it; the
    /// platform's own id as `platform_id`.
    pub metadata: Map<String, Value>,
}

impl Document {
    /// A reading tool's structured content as a document's metadata: its fields but
    /// `title` and `url` (said above the metadata), the platform's own `id` kept as
    /// `platform_id`.
    pub fn metadata_of(structured: Value) -> Map<String, Value> {
        let mut metadata = match structured {
            Value::Object(fields) => fields,
            _ => Map::new(),
        };
        metadata.remove("title");
        metadata.remove("url");
        if let Some(own) = metadata
            .remove("id")
            .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        {
            metadata.insert("platform_id".into(), own);
        }
        metadata
    }
}

impl Read {
    /// A read of `platform` whose structured content is the render's own.
    pub fn own(platform: PlatformId, head: Head, rendered: Rendered) -> Read {
        Read {
            platform,
            head,
            rendered,
            payload: None,
        }
    }

    /// The tool's result, or why the kept answer could not be shown.
    pub fn result(self) -> Result<CallToolResult, String> {
        match &self.payload {
            Some(payload) => self.rendered.into_result(payload),
            // A structure made from the kept answer needs it: a defect of the tool, said as
            // an error, never an answer without its content.
            None if matches!(self.rendered.structured, Structure::Answer(_)) => {
                Err("the kept answer is missing".to_owned())
            }
            None => Ok(self.rendered.into_own_result()),
        }
    }

    /// The record as `fetch` answers it: the tool's text, its head, and the rest of its
    /// structured content as metadata; or why the kept answer could not be shown.
    pub fn document(self) -> Result<Document, String> {
        let structured = match (&self.payload, &self.rendered.structured) {
            (Some(payload), _) => self.rendered.structured_value(payload)?,
            (None, Structure::Own(value)) => {
                let mut value = value.clone();
                without_nulls(&mut value);
                value
            }
            (None, Structure::Answer(_)) => return Err("the kept answer is missing".to_owned()),
        };
        let metadata = Document::metadata_of(structured);
        let url = self
            .head
            .url
            .filter(|u| u.starts_with("http://") || u.starts_with("https://"));
        Ok(Document {
            title: self.head.title,
            url,
            text: self.rendered.text,
            metadata,
        })
    }
}
