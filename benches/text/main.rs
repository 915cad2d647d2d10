//! `besluitbron-text-bench`: document-text extraction against Debian's `pdftotext`
//! (poppler-utils, installed by `benches/text/install`) on the same corpus in the same
//! run: throughput (MB/s and pages/s) and text quality (character-level similarity to the
//! source text the corpus was made from, `scripts/text-corpus`).
//!
//! Each PDF is read `--rounds` times by each side; BesluitBron's side is the library call
//! `text::extract` (what the pool runs), pdftotext's a process per round writing to a
//! pipe (its start-up is part of what a server shelling out would pay, and is reported).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use besluitbron_server::text::quality::{similarity, squeeze};
use besluitbron_server::text::{Caps, extract};

fn main() -> anyhow::Result<()> {
    let rounds: u32 = std::env::args()
        .skip_while(|a| a != "--rounds")
        .nth(1)
        .map_or(Ok(20), |r| r.parse())?;
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../server/tests/corpus");
    let names = ["brief", "tweekoloms"];
    println!(
        "| document | pages | KB | BesluitBron MB/s | pdftotext MB/s | BesluitBron pages/s | pdftotext pages/s | BesluitBron similarity | pdftotext similarity |"
    );
    println!("|---|---|---|---|---|---|---|---|---|");
    let (mut ours_all, mut theirs_all, mut bytes_all, mut pages_all) = (Duration::ZERO, Duration::ZERO, 0f64, 0f64);
    let (mut sim_ours, mut sim_theirs) = (0.0, 0.0);
    for name in names {
        let pdf_path: PathBuf = corpus.join(format!("{name}.pdf"));
        let pdf = std::fs::read(&pdf_path)?;
        let source = squeeze(&std::fs::read_to_string(corpus.join(format!("{name}.txt")))?);
        let text = extract(&pdf, &Caps::default()).map_err(|e| anyhow::anyhow!("{name}: {e}"))?;
        let pages = f64::from(text.pages.unwrap_or(1));
        let started = Instant::now();
        for _ in 0..rounds {
            std::hint::black_box(extract(&pdf, &Caps::default()).map_err(|e| anyhow::anyhow!("{e}"))?);
        }
        let ours = started.elapsed();
        let started = Instant::now();
        let mut poppler = String::new();
        for _ in 0..rounds {
            let out = Command::new("pdftotext")
                .arg("-enc")
                .arg("UTF-8")
                .arg(&pdf_path)
                .arg("-")
                .output()?;
            anyhow::ensure!(out.status.success(), "pdftotext failed: run benches/text/install");
            poppler = String::from_utf8(out.stdout)?;
        }
        let theirs = started.elapsed();
        let (a, b) = (
            similarity(&source, &squeeze(&text.text)),
            similarity(&source, &squeeze(&poppler)),
        );
        let mb = pdf.len() as f64 * f64::from(rounds) / 1e6;
        println!(
            "| {name} | {pages} | {:.1} | {:.2} | {:.2} | {:.0} | {:.0} | {a:.3} | {b:.3} |",
            pdf.len() as f64 / 1024.0,
            mb / ours.as_secs_f64(),
            mb / theirs.as_secs_f64(),
            pages * f64::from(rounds) / ours.as_secs_f64(),
            pages * f64::from(rounds) / theirs.as_secs_f64(),
        );
        ours_all += ours;
        theirs_all += theirs;
        bytes_all += mb;
        pages_all += pages * f64::from(rounds);
        sim_ours += a / names.len() as f64;
        sim_theirs += b / names.len() as f64;
    }
    println!(
        "| all | | | {:.2} | {:.2} | {:.0} | {:.0} | {sim_ours:.3} | {sim_theirs:.3} |",
        bytes_all / ours_all.as_secs_f64(),
        bytes_all / theirs_all.as_secs_f64(),
        pages_all / ours_all.as_secs_f64(),
        pages_all / theirs_all.as_secs_f64()
    );
    println!(
        "\nthroughput ratio (BesluitBron / pdftotext): {:.2}; quality difference: {:+.1} points",
        theirs_all.as_secs_f64() / ours_all.as_secs_f64(),
        (sim_ours - sim_theirs) * 100.0
    );
    Ok(())
}
