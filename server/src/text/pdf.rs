//! PDF text with `pdf-extract` (the best text of the Rust PDF crates, PLATFORMS.md §10.5):
//! [`read_pdf`].
//!
//! `pdf-extract` walks each page's content stream and hands every glyph with its
//! position to an output device; ours ([`Pages`]) lays the glyphs out as lines and
//! paragraphs (a line break where the baseline moves down a line, a paragraph where it
//! moves further or back up, as at a new column), and keeps the caps: a deadline and
//! the text's length are checked at every glyph, the page count before any page is read.
//!
//! Invariants:
//! - Before `pdf-extract` (which inflates streams without a bound) sees the file, every
//!   zlib stream in it is inflated once into a counter under [`Caps::max_expanded_bytes`]:
//!   a decompression bomb is [`TextError::TooLarge`] instead of memory exhaustion.
//! - Before `pdf-extract` walks the pages, [`super::pdf_structure`] walks what it would
//!   recurse through (a page's `/Parent` chain, drawings that draw drawings) under the
//!   caps: a loop or a depth that would overflow the thread's stack — which aborts the
//!   process — is a [`TextError`] instead.
//! - `pdf-extract` panics on some malformed files by design; this module does not catch
//!   that — the caller runs it under `catch_unwind` ([`super::pool`]).
//! - A PDF whose pages hold (next to) no text is [`TextError::NoTextLayer`] with its page
//!   count, never an empty text.

use std::io::Read;

use pdf_extract::{MediaBox, OutputDev, OutputError, Transform};

use super::build::{Gap, TextBuilder};
use super::types::{Caps, Deadline, Format, Text, TextError};

/// Fewer visible characters per page than this and the PDF has no text layer (a scan
/// carries at most a page number or a stamp).
const MIN_CHARS_PER_PAGE: usize = 8;

/// The text of the PDF in `bytes`.
pub fn read_pdf(bytes: &[u8], caps: &Caps, deadline: &Deadline) -> Result<Text, TextError> {
    check_expansion(bytes, caps.max_expanded_bytes)?;
    deadline.check()?;
    let doc = pdf_extract::Document::load_mem(bytes).map_err(|e| malformed(&e.to_string()))?;
    let pages = doc.get_pages().len() as u64;
    // A file lopdf could not decrypt (a user password) keeps its encryption, or comes out
    // without pages: either way it is encrypted, not empty.
    if doc.is_encrypted() || (pages == 0 && (doc.was_encrypted() || find(bytes, b"/Encrypt").is_some())) {
        return Err(malformed("it is encrypted"));
    }
    if pages > u64::from(caps.max_pages) {
        return Err(TextError::TooManyPages {
            pages,
            limit: caps.max_pages,
        });
    }
    if pages == 0 {
        return Err(malformed("it has no pages"));
    }
    let pages = pages as u32;
    deadline.check()?;
    super::pdf_structure::check(&doc, caps, deadline)?;
    let mut out = Pages::new(caps.max_text_chars, deadline);
    if let Err(e) = pdf_extract::output_doc(&doc, &mut out) {
        return Err(out.stopped.take().unwrap_or_else(|| malformed(&e.to_string())));
    }
    if let Some(stopped) = out.stopped.take() {
        return Err(stopped);
    }
    if out.visible < MIN_CHARS_PER_PAGE * pages as usize {
        return Err(TextError::NoTextLayer { pages });
    }
    let raw = out.text.finish();
    Ok(Text {
        text: super::repair::reflow(&raw),
        format: Format::Pdf,
        pages: Some(pages),
    })
}

fn malformed(detail: &str) -> TextError {
    TextError::Malformed {
        format: Format::Pdf,
        detail: detail.chars().take(120).collect(),
    }
}

/// Inflates every zlib stream of the file into a counter; more than `limit` bytes in
/// all is [`TextError::TooLarge`]. Streams that are not zlib (images, fonts in other
/// filters) stop at their first bytes.
fn check_expansion(bytes: &[u8], limit: u64) -> Result<(), TextError> {
    let mut total = 0u64;
    let mut at = 0;
    while let Some(found) = find(&bytes[at..], b"stream") {
        let mut start = at + found + b"stream".len();
        at = start;
        // `endstream` contains `stream`: skip it.
        if bytes[..start].ends_with(b"endstream") {
            continue;
        }
        match bytes.get(start..start + 2) {
            Some(b"\r\n") => start += 2,
            Some([b'\n', _]) | Some([b'\r', _]) => start += 1,
            _ => continue,
        }
        let left = limit.saturating_sub(total);
        let mut decoder = flate2::read::ZlibDecoder::new(&bytes[start..]).take(left + 1);
        let inflated = std::io::copy(&mut decoder, &mut std::io::sink()).unwrap_or(0);
        total += inflated;
        if total > limit {
            return Err(TextError::TooLarge { limit_bytes: limit });
        }
    }
    Ok(())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The output device: glyphs into lines and paragraphs, under the caps.
struct Pages<'d> {
    text: TextBuilder,
    deadline: &'d Deadline,
    /// Why the walk was stopped, if a cap stopped it.
    stopped: Option<TextError>,
    /// Visible (non-space) characters seen.
    visible: usize,
    /// Where the last glyph ended, and its baseline and size.
    last: Option<(f64, f64, f64)>,
}

impl<'d> Pages<'d> {
    fn new(max_chars: usize, deadline: &'d Deadline) -> Pages<'d> {
        Pages {
            text: TextBuilder::new(max_chars),
            deadline,
            stopped: None,
            visible: 0,
            last: None,
        }
    }

    fn stop(&mut self, error: TextError) -> OutputError {
        self.stopped = Some(error);
        OutputError::IoError(std::io::Error::other("stopped"))
    }
}

impl OutputDev for Pages<'_> {
    fn begin_page(
        &mut self,
        _page: u32,
        _media: &MediaBox,
        _art: Option<(f64, f64, f64, f64)>,
    ) -> Result<(), OutputError> {
        if let Err(e) = self.deadline.check() {
            return Err(self.stop(e));
        }
        self.text.paragraph();
        self.last = None;
        Ok(())
    }

    fn end_page(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn output_character(
        &mut self,
        trm: &Transform,
        width: f64,
        _spacing: f64,
        font_size: f64,
        glyph: &str,
    ) -> Result<(), OutputError> {
        if let Err(e) = self.deadline.check() {
            return Err(self.stop(e));
        }
        let scale = (trm.m11 * trm.m22 - trm.m12 * trm.m21).abs().sqrt();
        let size = (font_size.abs() * scale).max(0.1);
        let (x, y) = (trm.m31, trm.m32);
        if let Some((end, base, last_size)) = self.last {
            let line = size.max(last_size);
            let down = base - y;
            if down > line * 1.45 || down < -line * 0.5 {
                self.text.gap(Gap::Paragraph);
            } else if down > line * 0.5 {
                self.text.gap(Gap::Line);
            } else if x > end + size * 0.15 || x + size < end {
                self.text.gap(Gap::Space);
            }
        }
        let result = self.text.text(glyph);
        if let Err(e) = result {
            return Err(self.stop(e));
        }
        self.visible += glyph.chars().filter(|c| !c.is_whitespace()).count();
        let advance = width * size;
        self.last = Some((x + advance, y, size));
        Ok(())
    }

    fn begin_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_word(&mut self) -> Result<(), OutputError> {
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), OutputError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn zlib(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    #[test]
    fn a_decompression_bomb_is_too_large_before_parsing() {
        let mut pdf = b"%PDF-1.4\n1 0 obj\n<< /Length 0 /Filter /FlateDecode >>\nstream\n".to_vec();
        pdf.extend(zlib(&vec![b'A'; 4 * 1024 * 1024]));
        pdf.extend(b"\nendstream\nendobj\n%%EOF\n");
        assert_eq!(
            check_expansion(&pdf, 1024 * 1024),
            Err(TextError::TooLarge {
                limit_bytes: 1024 * 1024
            })
        );
        assert_eq!(check_expansion(&pdf, 8 * 1024 * 1024), Ok(()));
    }
}
