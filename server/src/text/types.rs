//! The text module's vocabulary: the bounds every extraction keeps ([`Caps`], [`Deadline`]),
//! the formats told apart ([`Format`]), a document's text ([`Text`]) and why a document gave
//! none ([`TextError`]).
//!
//! What this module does not do: read any format (each reader does) or pick the reader
//! (`mod.rs` does).

use std::time::{Duration, Instant};

/// When an extraction must stop: checked between steps and at every glyph.
#[derive(Clone, Copy, Debug)]
pub struct Deadline {
    at: Instant,
    limit_ms: u64,
}

impl Deadline {
    /// `limit_ms` from now.
    pub fn after_ms(limit_ms: u64) -> Deadline {
        let now = Instant::now();
        Deadline {
            at: now.checked_add(Duration::from_millis(limit_ms)).unwrap_or(now),
            limit_ms,
        }
    }

    /// [`TextError::TimedOut`] once the deadline has passed.
    pub fn check(&self) -> Result<(), TextError> {
        if Instant::now() >= self.at {
            Err(TextError::TimedOut {
                limit_ms: self.limit_ms,
            })
        } else {
            Ok(())
        }
    }
}

/// Bounds every extraction keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Caps {
    /// The largest input accepted, in bytes.
    pub max_input_bytes: usize,
    /// The longest text produced, in characters.
    pub max_text_chars: usize,
    /// The deepest element (XML) or group (RTF) nesting read.
    pub max_depth: usize,
    /// The most pages a paged document (PDF) may have.
    pub max_pages: u32,
    /// The longest an extraction may run, in milliseconds.
    pub max_millis: u64,
    /// The most bytes the compressed parts of a file (PDF streams, zip entries) may
    /// inflate to, in all.
    pub max_expanded_bytes: u64,
}

impl Caps {
    /// The caps an operator configured ([`crate::config::TextConfig`]); the rest default.
    pub fn configured(config: &crate::config::TextConfig) -> Caps {
        Caps {
            max_input_bytes: config.max_file_bytes,
            max_pages: config.max_pages,
            max_millis: config.max_millis,
            ..Caps::default()
        }
    }
}

impl Default for Caps {
    fn default() -> Caps {
        Caps {
            max_input_bytes: 16 * 1024 * 1024,
            max_text_chars: 4_000_000,
            max_depth: 256,
            max_pages: 2_000,
            max_millis: 20_000,
            max_expanded_bytes: 256 * 1024 * 1024,
        }
    }
}

/// The formats BesluitBron tells apart (by their first bytes, never by a `Content-Type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    /// PDF (`%PDF`).
    Pdf,
    /// Word 2007+ (a zip holding `word/document.xml`).
    Docx,
    /// Legacy Word 97–2003 (an OLE2 compound file).
    Doc,
    /// Rich Text Format (`{\rtf1`).
    Rtf,
    /// XML (a KOOP publication).
    Xml,
}

impl Format {
    /// The format's short name, as an assistant reads it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Format::Pdf => "PDF",
            Format::Docx => "Word (DOCX)",
            Format::Doc => "Word 97-2003 (DOC)",
            Format::Rtf => "RTF",
            Format::Xml => "XML",
        }
    }
}

/// A document's text.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Text {
    /// The text: paragraphs separated by a blank line.
    pub text: String,
    /// The format it was read from.
    pub format: Format,
    /// Pages, for a paged format.
    pub pages: Option<u32>,
}

/// Why a document gave no text. Messages are short and never echo the input.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum TextError {
    /// The input is larger than [`Caps::max_input_bytes`] (or expands beyond its bound).
    #[error("the file is larger than the {limit_bytes} bytes BesluitBron reads")]
    TooLarge {
        /// The cap, in bytes.
        limit_bytes: u64,
    },
    /// The text would be longer than [`Caps::max_text_chars`].
    #[error("the text is longer than the {limit_chars} characters BesluitBron extracts")]
    TooLong {
        /// The cap, in characters.
        limit_chars: usize,
    },
    /// Nesting deeper than [`Caps::max_depth`].
    #[error("the file nests deeper than {limit} levels")]
    TooDeep {
        /// The cap.
        limit: usize,
    },
    /// More pages than [`Caps::max_pages`].
    #[error("the file has {pages} pages, more than the {limit} BesluitBron reads")]
    TooManyPages {
        /// Pages found.
        pages: u64,
        /// The cap.
        limit: u32,
    },
    /// The extraction ran longer than [`Caps::max_millis`].
    #[error("reading the file took longer than {limit_ms} ms")]
    TimedOut {
        /// The cap, in milliseconds.
        limit_ms: u64,
    },
    /// The file is not a readable document of its format (truncated, corrupt).
    #[error("the {} file cannot be read ({detail})", .format.as_str())]
    Malformed {
        /// The format it claimed by its first bytes.
        format: Format,
        /// What was wrong, briefly.
        detail: String,
    },
    /// A PDF without a text layer (a scan).
    #[error("the PDF has no text layer ({pages} page(s), probably scanned images); BesluitBron does no OCR")]
    NoTextLayer {
        /// Its pages.
        pages: u32,
    },
    /// A format BesluitBron recognises but does not read.
    #[error("the file is {}, a format BesluitBron does not read", .format.as_str())]
    Unsupported {
        /// The format.
        format: Format,
    },
    /// The file is none of the formats BesluitBron reads.
    #[error("the file is not PDF, Word, RTF or XML")]
    Unrecognised,
    /// An XML rendition that is an empty template (no body, or "niet beschikbaar").
    #[error("the XML rendition holds no text (an empty template)")]
    EmptyRendition,
    /// The reader failed inside (a panic caught, a worker lost).
    #[error("the reader failed on this file ({detail})")]
    Failed {
        /// What happened, briefly.
        detail: String,
    },
}
