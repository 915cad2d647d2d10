//! Hostile and broken files: each gives a clear error within the caps — never a panic,
//! a hang or a crash — while other extractions in the same pool keep being answered.
//!
//! A test binary of its own (`Cargo.toml`): it asserts the peak resident memory of its
//! process, which the other tests would add to in a shared one, and a reader that
//! overflowed its stack would abort every test sharing the process.

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

/// A PDF of `objects` (object `i + 1` is `objects[i]`, written as is: a stream's object
/// carries its own `stream … endstream`), its classic xref table and a trailer with
/// `/Root 1 0 R` and `trailer_extra`.
fn pdf_of(objects: &[Vec<u8>], trailer_extra: &str) -> Vec<u8> {
    let mut pdf = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    for (i, o) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        pdf.extend(format!("{} 0 obj\n", i + 1).bytes());
        pdf.extend(o);
        pdf.extend(b"\nendobj\n");
    }
    let xref = pdf.len();
    pdf.extend(format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).bytes());
    for off in offsets {
        pdf.extend(format!("{off:010} 00000 n \n").bytes());
    }
    pdf.extend(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R {trailer_extra} >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .bytes(),
    );
    pdf
}

/// `dict` with a stream of `data` (its `/Length` added).
fn stream(dict: &str, data: &[u8]) -> Vec<u8> {
    let mut o = format!("<< {dict} /Length {} >>\nstream\n", data.len()).into_bytes();
    o.extend(data);
    o.extend(b"\nendstream");
    o
}

/// A one-page PDF with a line of text, whose page draws the XObject `/X0` (object 6,
/// `xobject`) after the text.
fn pdf_drawing(xobject: Vec<u8>) -> Vec<u8> {
    let text = b"BT /F1 12 Tf 72 720 Td (Raadsvoorstel over de herindeling van de gemeenten) Tj ET /X0 Do";
    pdf_of(
        &[
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R \
               /Resources << /Font << /F1 5 0 R >> /XObject << /X0 6 0 R >> >> >>"
                .to_vec(),
            stream("", text),
            b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>".to_vec(),
            xobject,
        ],
        "",
    )
}

/// Hostile PDFs that refer to themselves: a page whose `/Parent` is itself,
/// a drawing (form XObject) that draws itself, two drawings that draw each other, an
/// object stream the cross-reference says holds itself.
fn pdf_self_referencing() -> Vec<(&'static str, Vec<u8>)> {
    let page_own_parent = pdf_of(
        &[
            b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
            b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
            // No /MediaBox and no /Resources: a reader looks for them up the /Parent chain.
            b"<< /Type /Page /Parent 3 0 R /Contents 4 0 R >>".to_vec(),
            stream("", b"BT /F1 12 Tf 72 720 Td (tekst) Tj ET"),
        ],
        "",
    );
    let own_drawing = pdf_drawing(stream(
        "/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X0 6 0 R >> >>",
        b"/X0 Do",
    ));
    let mut pair = pdf_drawing(stream(
        "/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X1 7 0 R >> >>",
        b"/X1 Do",
    ));
    // Object 7, drawing object 6 again: appended with its own xref section.
    pair = append_object(
        &pair,
        7,
        &stream(
            "/Type /XObject /Subtype /Form /BBox [0 0 10 10] /Resources << /XObject << /X0 6 0 R >> >>",
            b"/X0 Do",
        ),
    );
    vec![
        ("a page that is its own parent", page_own_parent),
        ("a drawing that draws itself", own_drawing),
        ("two drawings that draw each other", pair),
        ("an object stream holding itself", object_stream_holding_itself()),
    ]
}

/// `pdf` with object `id` appended in an incremental update (a new xref section whose
/// `/Prev` is the old one).
fn append_object(pdf: &[u8], id: usize, object: &[u8]) -> Vec<u8> {
    let text = String::from_utf8_lossy(pdf);
    let prev: usize = text
        .rsplit("startxref\n")
        .next()
        .and_then(|t| t.lines().next())
        .and_then(|l| l.trim().parse().ok())
        .expect("startxref");
    let mut out = pdf.to_vec();
    let at = out.len();
    out.extend(format!("{id} 0 obj\n").bytes());
    out.extend(object);
    out.extend(b"\nendobj\n");
    let xref = out.len();
    out.extend(
        format!(
            "xref\n{id} 1\n{at:010} 00000 n \ntrailer\n<< /Size {} /Root 1 0 R /Prev {prev} >>\nstartxref\n{xref}\n%%EOF\n",
            id + 1
        )
        .bytes(),
    );
    out
}

/// A PDF 1.5 file whose cross-reference stream says object 4 (the page's contents'
/// container) is compressed in object stream 4 itself, and whose object stream 5
/// `/Extends` itself.
fn object_stream_holding_itself() -> Vec<u8> {
    let mut pdf = b"%PDF-1.5\n".to_vec();
    let mut offsets = Vec::new();
    let objects: Vec<Vec<u8>> = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>".to_vec(),
        // Object 4 is listed below as inside object stream 4: never written itself.
        Vec::new(),
        stream("/Type /ObjStm /N 1 /First 4 /Extends 5 0 R", b"4 0 5 0 R"),
    ];
    for (i, o) in objects.iter().enumerate() {
        offsets.push(pdf.len());
        if !o.is_empty() {
            pdf.extend(format!("{} 0 obj\n", i + 1).bytes());
            pdf.extend(o);
            pdf.extend(b"\nendobj\n");
        }
    }
    // The xref stream (object 6): /W [1 4 2]; type 1 = in the file at an offset, type 2 =
    // in object stream n at index i.
    let xref_at = pdf.len();
    let mut rows = vec![0u8, 0, 0, 0, 0, 0xFF, 0xFF];
    for (i, off) in offsets.iter().enumerate() {
        let (kind, field2, field3) = if i == 3 { (2u8, 4u32, 0u16) } else { (1, *off as u32, 0) };
        rows.push(kind);
        rows.extend(field2.to_be_bytes());
        rows.extend(field3.to_be_bytes());
    }
    rows.push(1);
    rows.extend((xref_at as u32).to_be_bytes());
    rows.extend(0u16.to_be_bytes());
    pdf.extend(b"6 0 obj\n");
    pdf.extend(stream("/Type /XRef /Size 7 /W [1 4 2] /Root 1 0 R", &rows));
    pdf.extend(format!("\nendobj\nstartxref\n{xref_at}\n%%EOF\n").bytes());
    pdf
}

/// A one-page PDF with text that draws an image of `width` x `height` RGB pixels whose
/// (deflated) data inflates to `expanded` bytes of zeros.
fn pdf_with_image(width: u64, height: u64, expanded: usize) -> Vec<u8> {
    let mut e = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
    let chunk = vec![0u8; 1 << 20];
    let mut left = expanded;
    while left > 0 {
        let n = left.min(chunk.len());
        e.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    let data = e.finish().unwrap();
    pdf_drawing(stream(
        &format!(
            "/Type /XObject /Subtype /Image /Width {width} /Height {height} /ColorSpace /DeviceRGB \
             /BitsPerComponent 8 /Filter /FlateDecode"
        ),
        &data,
    ))
}

/// A PDF encrypted with the standard security handler (RC4, 40 bits), as a file
/// protected by an owner password carries it.
fn pdf_encrypted() -> Vec<u8> {
    let mut pdf = pdf_drawing(stream("/Type /XObject /Subtype /Form /BBox [0 0 1 1]", b""));
    let text = String::from_utf8_lossy(&pdf).into_owned();
    let at = text.rfind("/Root 1 0 R").expect("trailer");
    let encrypt = " /Encrypt << /Filter /Standard /V 1 /R 2 /O <28BF4E5E4E758A4164004E56FFFA01082E2E00B6D0683E802F0CA9FE6453697A> \
                   /U <9C13AB3B5F3F4D5E6A8B7C9D0E1F2A3B4C5D6E7F8091A2B3C4D5E6F708192A3B> /P -44 >> \
                   /ID [<0123456789ABCDEF0123456789ABCDEF> <0123456789ABCDEF0123456789ABCDEF>]";
    pdf.splice(at + "/Root 1 0 R".len()..at + "/Root 1 0 R".len(), encrypt.bytes());
    pdf
}

/// An RTF file whose groups nest `depth` deep around a word.
fn rtf_nested(depth: usize) -> Vec<u8> {
    let mut rtf = b"{\\rtf1\\ansi ".to_vec();
    rtf.extend(std::iter::repeat_n(b'{', depth));
    rtf.extend(b"diep");
    rtf.extend(std::iter::repeat_n(b'}', depth));
    rtf.extend(b"}");
    rtf
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

/// Peak and current resident memory of this whole test process, in KiB (as
/// `hostile_platforms.rs` reads it; the soak reads `VmRSS` the same way).
fn memory_kib() -> (u64, u64) {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status is readable");
    // A field that is missing or unreadable fails the test: 0 would pass every memory cap.
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("{name} in /proc/self/status"))
    };
    (field("VmHWM:"), field("VmRSS:"))
}

/// The bound on the process's peak RSS while hostile files are read (the tests of this
/// file side by side in one process, two extractions at once): a file is at most 16 MiB,
/// what its compressed parts inflate to is counted into a sink before a reader inflates
/// it, and nesting is refused before anything is built per level. Measured: about 50 MiB
/// for the whole file; an RTF of nothing but braces at the file cap took 570 MiB before
/// its depth was checked ahead of the lexer.
const PEAK_KIB_MAX: u64 = 256 * 1024;

/// The corners the hostile probe did not reach — each a clear error, within
/// bounded memory, never a crash of the process (a stack overflow would abort it), and
/// the pool keeps answering ordinary files meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_43_hostile_pdfs_and_rtf_are_clear_errors_in_bounded_memory() {
    let pool = Arc::new(ExtractPool::new(2, Caps::default()));
    let caps = Caps::default();
    let mut cases: Vec<(&str, Vec<u8>, Expect)> = pdf_self_referencing()
        .into_iter()
        .map(|(name, bytes)| {
            let e: Expect = |r| {
                matches!(
                    r,
                    Err(TextError::Malformed {
                        format: Format::Pdf,
                        ..
                    }) | Err(TextError::TooDeep { .. })
                )
            };
            (name, bytes, e)
        })
        .collect();
    cases.push((
        "a PDF with an image inflating beyond the cap",
        pdf_with_image(20_000, 20_000, 300 * 1024 * 1024),
        |r| matches!(r, Err(TextError::TooLarge { limit_bytes }) if *limit_bytes == 256 * 1024 * 1024),
    ));
    cases.push((
        "a PDF with an image of a billion pixels declared",
        pdf_with_image(1_000_000, 1_000_000, 1024 * 1024),
        |r| r.as_ref().is_ok_and(|t| t.text.contains("herindeling")),
    ));
    cases.push((
        "an encrypted PDF",
        pdf_encrypted(),
        |r| matches!(r, Err(TextError::Malformed { format: Format::Pdf, detail }) if detail.contains("encrypted")),
    ));
    cases.push(("an RTF nested 100,000 deep", rtf_nested(100_000), |r| {
        matches!(r, Err(TextError::TooDeep { limit: 256 }))
    }));
    cases.push((
        "an RTF of nothing but groups, as large as a file may be",
        rtf_nested(caps.max_input_bytes / 2 - 16),
        |r| matches!(r, Err(TextError::TooDeep { limit: 256 })),
    ));
    let mut tasks = Vec::new();
    for (name, bytes, ok) in cases {
        let pool = Arc::clone(&pool);
        tasks.push(tokio::spawn(async move {
            let got = pool.extract(Arc::from(bytes)).await;
            assert!(ok(&got), "{name}: {got:?}");
            let e = got.err().map(|e| e.to_string()).unwrap_or_default();
            assert!(e.len() < 200, "{name}: a short error: {e}");
            name
        }));
    }
    for _ in 0..3 {
        let text = pool.extract(Arc::from(corpus("tweekoloms.docx"))).await.unwrap();
        assert!(text.text.contains("herindeling"));
    }
    for t in tasks {
        t.await.expect("no task panicked");
    }
    let (peak, now) = memory_kib();
    println!("peak RSS {peak} KiB, now {now} KiB");
    assert!(
        peak < PEAK_KIB_MAX,
        "peak RSS {peak} KiB (now {now} KiB) stays under {PEAK_KIB_MAX} KiB"
    );
}
