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
mod types;
pub mod xml;

pub use pool::ExtractPool;
pub use types::{Caps, Deadline, Format, Text, TextError};
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
