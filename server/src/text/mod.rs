//! Document text: the plain text of a document file, kept in paragraphs, for every
//! connector that reads full text (Tweede Kamer documents, Officiële Bekendmakingen
//! publications, OpenTK's raw files).
//!
//! - [`extract`]: the entry point — sniffs the format from the first bytes (never from a
//!   `Content-Type`, which platforms get wrong) and reads it under the caps.
//! - [`xml`]: the KOOP publication XML (officielepublicaties, the `xml` manifestation of
//!   Officiële Bekendmakingen and the Tweede Kamer's `DocumentPublicatie` renditions).
//! - [`pdf`] (with [`pdf_structure`], the loops and depths checked before `pdf-extract`
//!   recurses through them), [`docx`], [`rtf`]: the other formats; legacy Word (`.doc`) is recognised
//!   and refused as unsupported.
//! - [`repair`]: ligatures spelled out, split words at line ends mended.
//! - [`pool`]: [`ExtractPool`], the bounded pool of blocking threads the server runs
//!   extractions on, under `catch_unwind` and a deadline.
//!
//! Invariants:
//! - Every reader is bounded by [`Caps`]: input bytes, output characters, nesting depth
//!   (and, for paged formats, pages and time). Over a cap is a [`TextError`], never a
//!   truncated text presented as the whole document.
//! - Nothing here panics on what a platform sends, and nothing here does I/O: bytes in,
//!   [`Text`] or a [`TextError`] out.
//! - Text keeps paragraphs: blocks are separated by a blank line, table rows are lines
//!   whose cells are separated by ` | `; whitespace inside a paragraph is one space.
//!
//! What this module does not do: fetch files, decide what is kept in a buffer, or know
//! any platform's paths.

mod build;
pub mod docx;
pub mod pdf;
pub mod pdf_structure;
pub mod pool;
pub mod quality;
pub mod repair;
pub mod rtf;
pub mod xml;

use std::time::{Duration, Instant};

pub use pool::ExtractPool;
pub use xml::read_xml;

/// Reads the document in `bytes`, whatever its format, under `caps`: the one entry point
/// for every connector and for the fuzz target.
///
/// Sniffs the format ([`sniff`]) and reads it. Synchronous and CPU-bound: the server
/// calls it through [`ExtractPool`], never on the async runtime. `pdf-extract` may panic
/// on a malformed PDF; the pool catches that, a direct caller must too.
pub fn extract(bytes: &[u8], caps: &Caps) -> Result<Text, TextError> {
    if bytes.len() > caps.max_input_bytes {
        return Err(TextError::TooLarge {
            limit_bytes: caps.max_input_bytes as u64,
        });
    }
    let deadline = Deadline::after_ms(caps.max_millis);
    match sniff(bytes) {
        Some(Format::Pdf) => pdf::read_pdf(bytes, caps, &deadline),
        Some(Format::Docx) => docx::read_docx(bytes, caps, &deadline),
        Some(Format::Rtf) => rtf::read_rtf(bytes, caps, &deadline),
        Some(Format::Xml) => read_xml(bytes, caps),
        Some(Format::Doc) => Err(TextError::Unsupported { format: Format::Doc }),
        None => Err(TextError::Unrecognised),
    }
}

/// The format of `bytes` from its first bytes: `%PDF` (within the first KiB, as readers
/// allow), a zip holding `word/document.xml`, an OLE2 compound file (legacy Word),
/// `{\rtf`, or XML (`<?xml` or an element, after a byte-order mark and whitespace).
pub fn sniff(bytes: &[u8]) -> Option<Format> {
    let head = &bytes[..bytes.len().min(1024)];
    if head.starts_with(b"%PDF-") || head.windows(5).any(|w| w == b"%PDF-") {
        return Some(Format::Pdf);
    }
    if bytes.starts_with(b"PK\x03\x04") {
        // The name of a zip entry is stored in the clear in its local header.
        let names = &bytes[..bytes.len().min(64 * 1024)];
        let word = names.windows(17).any(|w| w == b"word/document.xml")
            || bytes.windows(17).rev().take(1 << 20).any(|w| w == b"word/document.xml");
        return word.then_some(Format::Docx);
    }
    if bytes.starts_with(&[0xD0, 0xCF, 0x11, 0xE0, 0xA1, 0xB1, 0x1A, 0xE1]) {
        return Some(Format::Doc);
    }
    if bytes.starts_with(b"{\\rtf") {
        return Some(Format::Rtf);
    }
    let text = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let utf16 = bytes.starts_with(b"\xFF\xFE") || bytes.starts_with(b"\xFE\xFF");
    let start = text.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(text.len());
    let text = &text[start..];
    let element = text.first() == Some(&b'<')
        && text
            .get(1)
            .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'?' || b == b'!' || b == b'_');
    let html = {
        let head: Vec<u8> = text.iter().take(64).map(u8::to_ascii_lowercase).collect();
        head.starts_with(b"<!doctype html") || head.starts_with(b"<html")
    };
    ((element && !html) || utf16).then_some(Format::Xml)
}

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
