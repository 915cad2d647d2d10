//! Hostile and broken files: each gives a clear error within the caps — never a panic,
//! a hang or a crash — while other extractions in the same pool keep being answered.

use std::io::{Cursor, Write};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use besluitbron_server::text::{Caps, ExtractPool, Format, TextError, extract};
use quickcheck::{QuickCheck, TestResult};

fn corpus(name: &str) -> Vec<u8> {
    std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus").join(name)).unwrap()
}

/// A PDF of `pages` empty pages whose page tree declares `declared` pages.
fn pdf_with_pages(pages: usize, declared: u64) -> Vec<u8> {
    let mut objects = vec![
        "<< /Type /Catalog /Pages 2 0 R >>".to_owned(),
        format!(
            "<< /Type /Pages /Kids [{}] /Count {declared} >>",
            (0..pages)
                .map(|i| format!("{} 0 R", i + 3))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    ];
    objects.extend((0..pages).map(|_| "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 10 10] >>".to_owned()));
    let mut pdf = b"%PDF-1.4\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend(format!("{} 0 obj\n{o}\nendobj\n", i + 1).bytes());
    }
    let xref = pdf.len();
    pdf.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).bytes());
    for off in offsets {
        pdf.extend(format!("{off:010} 00000 n \n").bytes());
    }
    pdf.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .bytes(),
    );
    pdf
}

fn zip_bomb() -> Vec<u8> {
    let mut zip = zip::ZipWriter::new(Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("word/document.xml", options).unwrap();
    let chunk = vec![b' '; 1 << 20];
    for _ in 0..300 {
        zip.write_all(&chunk).unwrap();
    }
    zip.finish().unwrap().into_inner()
}

/// What a hostile file must give.
type Expect = fn(&Result<besluitbron_server::text::Text, TextError>) -> bool;

/// Every hostile file and what it must give.
fn hostile() -> Vec<(&'static str, Vec<u8>, Expect)> {
    let brief = corpus("brief.pdf");
    let mut corrupt = brief.clone();
    for i in (brief.len() / 3..brief.len() * 2 / 3).step_by(97) {
        corrupt[i] ^= 0x5A;
    }
    let mut deep = b"%PDF-1.4\n1 0 obj\n".to_vec();
    deep.extend(std::iter::repeat_n(b'[', 200_000));
    deep.extend(std::iter::repeat_n(b']', 200_000));
    deep.extend(b"\nendobj\ntrailer\n<< /Root 1 0 R >>\n%%EOF\n");
    let docx = corpus("brief.docx");
    vec![
        ("truncated PDF", brief[..brief.len() / 2].to_vec(), |r| r.is_err()),
        ("corrupt PDF", corrupt, |r| {
            r.as_ref().is_ok_and(|t| t.format == Format::Pdf) || r.is_err()
        }),
        ("PDF declaring a billion pages", pdf_with_pages(1, 1_000_000_000), |r| {
            matches!(r, Err(TextError::NoTextLayer { pages: 1 }))
        }),
        ("PDF over the page cap", pdf_with_pages(2_100, 2_100), |r| {
            matches!(
                r,
                Err(TextError::TooManyPages {
                    pages: 2_100,
                    limit: 2_000
                })
            )
        }),
        ("deeply nested PDF objects", deep, |r| r.is_err()),
        ("zip bomb DOCX", zip_bomb(), |r| {
            matches!(r, Err(TextError::TooLarge { .. }))
        }),
        ("truncated DOCX", docx[..docx.len() / 2].to_vec(), |r| {
            matches!(
                r,
                Err(TextError::Malformed {
                    format: Format::Docx,
                    ..
                })
            )
        }),
        ("deep XML", format!("{}x", "<a>".repeat(100_000)).into_bytes(), |r| {
            matches!(r, Err(TextError::TooDeep { .. }))
        }),
        (
            "random bytes",
            (0..4096u32)
                .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
                .collect(),
            |r| matches!(r, Err(TextError::Unrecognised)),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_files_are_clear_errors_and_the_pool_keeps_answering() {
    let pool = Arc::new(ExtractPool::new(2, Caps::default()));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for (name, bytes, ok) in hostile() {
        let pool = Arc::clone(&pool);
        tasks.push(tokio::spawn(async move {
            let got = pool.extract(Arc::from(bytes)).await;
            assert!(ok(&got), "{name}: {got:?}");
            if let Err(e) = &got {
                assert!(e.to_string().len() < 200, "{name}: {e}");
            }
        }));
    }
    // Meanwhile, ordinary calls are answered.
    for _ in 0..5 {
        let text = pool.extract(Arc::from(corpus("tweekoloms.docx"))).await.unwrap();
        assert!(text.text.contains("herindeling"));
    }
    for t in tasks {
        t.await.expect("no task panicked");
    }
    assert!(started.elapsed() < Duration::from_secs(60), "{:?}", started.elapsed());
}

struct Mangling {
    runtime: tokio::runtime::Runtime,
    pool: ExtractPool,
    seeds: Vec<Vec<u8>>,
}

fn mangling() -> &'static Mangling {
    static STATE: std::sync::OnceLock<Mangling> = std::sync::OnceLock::new();
    STATE.get_or_init(|| Mangling {
        runtime: tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap(),
        pool: ExtractPool::new(2, Caps::default()),
        seeds: ["brief.pdf", "brief.docx", "brief.rtf", "tweekoloms.pdf"]
            .iter()
            .map(|n| corpus(n))
            .collect(),
    })
}

/// Overwrites up to 16 bytes of a corpus file; whatever the answer, it is an answer —
/// a text or a short error — and never a panic escaping the pool.
fn mangled_file_gets_an_answer(which: u8, cuts: Vec<(u16, u8)>) -> TestResult {
    let m = mangling();
    let mut bytes = m.seeds[usize::from(which) % m.seeds.len()].clone();
    for (at, value) in cuts.iter().take(16) {
        let at = usize::from(*at) * bytes.len() / 65_536;
        bytes[at] = *value;
    }
    let got = m.runtime.block_on(m.pool.extract(Arc::from(bytes)));
    TestResult::from_bool(match got {
        Ok(text) => !text.text.is_empty(),
        Err(e) => !e.to_string().is_empty() && e.to_string().len() < 200,
    })
}

#[test]
fn qc_mangled_files_never_escape_the_pool_as_panics() {
    QuickCheck::new()
        .tests(40)
        .quickcheck(mangled_file_gets_an_answer as fn(u8, Vec<(u16, u8)>) -> TestResult);
    assert!(matches!(extract(b"", &Caps::default()), Err(TextError::Unrecognised)));
}
