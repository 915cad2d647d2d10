//! Document text against the corpus `scripts/text-corpus` makes from known source texts
//! (`server/tests/corpus/`): every format of every document must give back the source
//! text — its paragraphs, the table's cells, the footnotes, split words mended,
//! ligatures spelled out and Dutch letters intact — and the scan must say it has no
//! text layer.

use std::path::Path;

use besluitbron_server::text::quality::{similarity, squeeze};
use besluitbron_server::text::{Caps, Format, TextError, extract, sniff};

fn corpus(name: &str) -> Vec<u8> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}; run scripts/text-corpus", path.display()))
}

fn source(name: &str) -> String {
    String::from_utf8(corpus(&format!("{name}.txt"))).unwrap()
}

fn check(name: &str, ext: &str, format: Format, min_similarity: f64) {
    let file = corpus(&format!("{name}.{ext}"));
    assert_eq!(sniff(&file), Some(format), "{name}.{ext}");
    let text = extract(&file, &Caps::default()).unwrap_or_else(|e| panic!("{name}.{ext}: {e}"));
    assert_eq!(text.format, format);
    let want = source(name);
    let got = squeeze(&text.text);
    for word in [
        "financiële",
        "geëvalueerd",
        "ĳzeren",
        "flexibele",
        "coöperaties",
        "verantwoordelijkheid",
        "gemeentelijke",
        "herindeling",
        "samenvoeging",
        "Noord-Brabant",
    ] {
        if want.contains(word) {
            assert!(got.contains(word), "{name}.{ext} lacks `{word}`:\n{}", text.text);
        }
    }
    assert!(
        !got.contains('\u{FB01}') && !got.contains('\u{FB02}'),
        "{name}.{ext} keeps a ligature"
    );
    let score = similarity(&squeeze(&want), &got);
    assert!(
        score >= min_similarity,
        "{name}.{ext}: similarity {score:.3} < {min_similarity}\n--- got\n{}\n--- want\n{want}",
        text.text
    );
}

#[test]
fn pdf_gives_back_the_source_text() {
    check("brief", "pdf", Format::Pdf, 0.9);
    check("tweekoloms", "pdf", Format::Pdf, 0.95);
}

#[test]
fn docx_gives_back_the_source_text() {
    check("brief", "docx", Format::Docx, 0.97);
    check("tweekoloms", "docx", Format::Docx, 0.99);
}

#[test]
fn rtf_gives_back_the_source_text() {
    check("brief", "rtf", Format::Rtf, 0.97);
    check("tweekoloms", "rtf", Format::Rtf, 0.99);
}

#[test]
fn paragraphs_stay_paragraphs() {
    for ext in ["docx", "rtf", "pdf"] {
        let text = extract(&corpus(&format!("tweekoloms.{ext}")), &Caps::default())
            .unwrap()
            .text;
        let paragraphs = text.split("\n\n").filter(|p| !p.trim().is_empty()).count();
        assert!(
            (6..=8).contains(&paragraphs),
            "tweekoloms.{ext}: {paragraphs} paragraphs\n{text}"
        );
    }
}

#[test]
fn a_scan_has_no_text_layer() {
    assert_eq!(
        extract(&corpus("scan.pdf"), &Caps::default()),
        Err(TextError::NoTextLayer { pages: 1 })
    );
}
