//! Word 2007+ (DOCX) text with `zip` and `quick-xml`: [`read_docx`] reads
//! `word/document.xml` — paragraphs (`w:p`), line breaks (`w:br`, `w:cr`), tabs
//! (`w:tab`), tables as rows of cells (`w:tr`, `w:tc`) — and then the footnotes
//! (`word/footnotes.xml`) as a closing "Noten" section.
//!
//! Invariants: an entry is read only up to [`Caps::max_expanded_bytes`] whatever its
//! header declares, so a zip bomb is [`TextError::TooLarge`]; a zip without
//! `word/document.xml` is [`TextError::Malformed`]; depth and length caps hold as in
//! [`super::xml`]. Deleted revisions (`w:del`) and field codes (`w:instrText`) are not
//! text.

use std::io::{Cursor, Read};

use quick_xml::Reader;
use quick_xml::events::Event;

use super::build::{Gap, TextBuilder};
use super::types::{Caps, Deadline, Format, Text, TextError};
use crate::xml::{WellFormed, resolve_reference};

/// The text of the DOCX file in `bytes`.
pub fn read_docx(bytes: &[u8], caps: &Caps, deadline: &Deadline) -> Result<Text, TextError> {
    let mut archive = zip::ZipArchive::new(Cursor::new(bytes)).map_err(|e| malformed(&e.to_string()))?;
    let document =
        entry(&mut archive, "word/document.xml", caps)?.ok_or_else(|| malformed("it holds no word/document.xml"))?;
    deadline.check()?;
    let mut text = TextBuilder::new(caps.max_text_chars);
    walk(&document, &mut text, caps, false)?;
    deadline.check()?;
    if let Some(notes) = entry(&mut archive, "word/footnotes.xml", caps)? {
        let mut noted = TextBuilder::new(caps.max_text_chars);
        walk(&notes, &mut noted, caps, true)?;
        if !noted.is_empty() {
            text.paragraph();
            text.text("Noten")?;
            for note in noted.as_str().split("\n\n") {
                text.paragraph();
                text.text(note)?;
            }
        }
    }
    Ok(Text {
        text: super::repair::ligatures(&text.finish()),
        format: Format::Docx,
        pages: None,
    })
}

fn malformed(detail: &str) -> TextError {
    TextError::Malformed {
        format: Format::Docx,
        detail: detail.chars().take(120).collect(),
    }
}

/// The entry `name` as text, read under the expansion cap; `None` when absent.
fn entry(archive: &mut zip::ZipArchive<Cursor<&[u8]>>, name: &str, caps: &Caps) -> Result<Option<String>, TextError> {
    let limit = caps.max_expanded_bytes;
    let file = match archive.by_name(name) {
        Ok(file) => file,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(malformed(&e.to_string())),
    };
    if file.size() > limit {
        return Err(TextError::TooLarge { limit_bytes: limit });
    }
    let mut data = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut data)
        .map_err(|e| malformed(&e.to_string()))?;
    if data.len() as u64 > limit {
        return Err(TextError::TooLarge { limit_bytes: limit });
    }
    String::from_utf8(data)
        .map(Some)
        .map_err(|_| malformed("its XML is not UTF-8"))
}

/// Word's XML into `out`. In `notes`, only real footnotes count (not the separators
/// Word keeps as footnotes −1 and 0), each as a paragraph opening with its number.
fn walk(xml: &str, out: &mut TextBuilder, caps: &Caps, notes: bool) -> Result<(), TextError> {
    let mut reader = Reader::from_str(xml);
    let mut depth = 0usize;
    // Depth of a subtree that is not text (deleted runs, field codes, separators).
    let mut skip: Option<usize> = None;
    let mut cells = 0usize;
    // Depth of the table cell being read: its paragraphs are one cell.
    let mut cell: Option<usize> = None;
    let mut note_number = 0usize;
    // The walk bounds the depth itself (its own error); the checks see the rest: a
    // part cut short, declared or undeclared entities are malformed.
    let mut checks = WellFormed::new(usize::MAX);
    loop {
        let event = reader.read_event().map_err(|e| malformed(&e.to_string()))?;
        checks.see(&event).map_err(|fault| malformed(&fault.to_string()))?;
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e), false),
            Event::Empty(e) => (Some(e), true),
            _ => (None, false),
        };
        if let Some(e) = start {
            depth += 1;
            if depth > caps.max_depth {
                return Err(TextError::TooDeep { limit: caps.max_depth });
            }
            let name = e.local_name();
            let name: &str = name.into_inner();
            if skip.is_none() {
                match name {
                    "del" | "instrText" | "delText" => skip = Some(depth),
                    "footnote" if notes => {
                        let separator = e
                            .attributes()
                            .flatten()
                            .any(|a| a.key.local_name().into_inner() == "type" && &*a.value != "normal");
                        if separator {
                            skip = Some(depth);
                        } else {
                            note_number += 1;
                            out.paragraph();
                            out.text(&format!("[{note_number}]"))?;
                            out.gap(Gap::Space);
                        }
                    }
                    "p" if cell.is_some() || notes => out.gap(Gap::Space),
                    "p" => out.paragraph(),
                    "tr" => {
                        cells = 0;
                        out.paragraph();
                    }
                    "tc" => {
                        if cells > 0 {
                            out.gap(Gap::Cell);
                        }
                        cells += 1;
                        cell = Some(depth);
                    }
                    "tab" => out.gap(Gap::Tab),
                    "br" | "cr" => out.gap(Gap::Line),
                    "footnoteReference" if !notes => {
                        note_number += 1;
                        out.glued(&format!("[{note_number}]"))?;
                    }
                    _ => {}
                }
            }
            if empty {
                if skip == Some(depth) {
                    skip = None;
                }
                depth -= 1;
            }
            continue;
        }
        match event {
            Event::End(e) => {
                let name = e.local_name();
                if skip == Some(depth) {
                    skip = None;
                } else if cell == Some(depth) {
                    cell = None;
                } else if skip.is_none() && !notes && cell.is_none() && name.into_inner() == "p" {
                    out.paragraph();
                }
                depth = depth.saturating_sub(1);
            }
            Event::Text(t) if skip.is_none() => out.text(&t.xml10_content())?,
            Event::GeneralRef(r) => {
                let resolved = resolve_reference(&r).map_err(|fault| malformed(&fault.to_string()))?;
                if skip.is_none() {
                    out.text(&resolved)?;
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn docx(entries: &[(&str, &[u8])]) -> Vec<u8> {
        let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
        for (name, data) in entries {
            zip.start_file(*name, zip::write::SimpleFileOptions::default()).unwrap();
            zip.write_all(data).unwrap();
        }
        zip.finish().unwrap().into_inner()
    }

    const BODY: &str = r#"<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>
<w:p><w:r><w:t>Motie over de </w:t></w:r><w:r><w:rPr><w:b/></w:rPr><w:t>ﬁnanciële</w:t></w:r><w:r><w:t xml:space="preserve"> positie van gemeenten</w:t></w:r><w:r><w:footnoteReference w:id="2"/></w:r></w:p>
<w:p><w:r><w:t>Regel één</w:t><w:br/><w:t>regel twee</w:t><w:tab/><w:t>na tab</w:t></w:r><w:del><w:r><w:delText>weg</w:delText></w:r></w:del></w:p>
<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Fractie</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Zetels</w:t></w:r></w:p></w:tc></w:tr>
<w:tr><w:tc><w:p><w:r><w:t>D66</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>26</w:t></w:r></w:p></w:tc></w:tr></w:tbl>
</w:body></w:document>"#;

    const NOTES: &str = r#"<w:footnotes xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">
<w:footnote w:type="separator" w:id="0"><w:p><w:r><w:separator/></w:r></w:p></w:footnote>
<w:footnote w:id="2"><w:p><w:r><w:t>Kamerstuk 36 600 VII, nr. 12.</w:t></w:r></w:p></w:footnote></w:footnotes>"#;

    #[test]
    fn paragraphs_breaks_tabs_tables_and_notes() {
        let file = docx(&[
            ("word/document.xml", BODY.as_bytes()),
            ("word/footnotes.xml", NOTES.as_bytes()),
        ]);
        let text = read_docx(&file, &Caps::default(), &Deadline::after_ms(10_000)).unwrap();
        assert_eq!(
            text.text,
            "Motie over de financiële positie van gemeenten[1]\n\n\
             Regel één\nregel twee\tna tab\n\n\
             Fractie | Zetels\n\nD66 | 26\n\n\
             Noten\n\n[1] Kamerstuk 36 600 VII, nr. 12."
        );
    }

    #[test]
    fn a_zip_bomb_is_too_large_and_a_zip_without_a_body_malformed() {
        let caps = Caps {
            max_expanded_bytes: 64 * 1024,
            ..Caps::default()
        };
        let big = format!("<w:document>{}</w:document>", "<w:p/>".repeat(100_000));
        let file = docx(&[("word/document.xml", big.as_bytes())]);
        assert!(file.len() < 64 * 1024, "the bomb is small: {}", file.len());
        assert_eq!(
            read_docx(&file, &caps, &Deadline::after_ms(10_000)),
            Err(TextError::TooLarge { limit_bytes: 64 * 1024 })
        );
        let other = docx(&[("content.xml", b"<x/>")]);
        assert!(matches!(
            read_docx(&other, &caps, &Deadline::after_ms(10_000)),
            Err(TextError::Malformed {
                format: Format::Docx,
                ..
            })
        ));
    }
}
