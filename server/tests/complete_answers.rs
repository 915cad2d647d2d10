//! Only complete answers are read: for every reader of a platform's answer, the answer
//! cut anywhere before its root closes is an error, never a shorter success.
//!
//! Each reader is given real answers (the corpus, `corpus/`) where there are some, and
//! the fake platforms' answers kept as fuzz seeds (`fuzz/seeds/`) for the platforms the
//! corpus has none of; each answer is cut at every record boundary (after each record's
//! closing tag, or each JSON object inside a list) and at a seeded sample of other
//! places before its root closes. The whole answer must read; no cut may.

use std::path::{Path, PathBuf};

use besluitbron_server::platforms::http::Fetched;
use besluitbron_server::platforms::{bwb, cvdr, koop, ob, obv, opentk, ori, rechtspraak, tk};
use besluitbron_server::text::{Caps, read_xml};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The files in `dir` whose names pass `keep`: relative to the repository, or, under
/// `corpus/`, the catalogued real files of that folder of the corpus (kept beside the
/// project), each checked against its sha256.
fn files(dir: &str, keep: impl Fn(&str) -> bool) -> Vec<PathBuf> {
    if let Some(folder) = dir.strip_prefix("corpus/") {
        let entries = besluitbron_fakes::corpus::folder(folder);
        let paths: Vec<&str> = entries
            .iter()
            .map(|e| e.path.as_str())
            .filter(|p| keep(p.rsplit('/').next().unwrap_or(p)))
            .collect();
        besluitbron_fakes::corpus::read_all(&paths).unwrap_or_else(|e| panic!("{e}"));
        assert!(!paths.is_empty(), "{dir} holds answers to cut");
        return paths.iter().map(|p| besluitbron_fakes::corpus::path(p)).collect();
    }
    let mut out: Vec<PathBuf> = std::fs::read_dir(root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_file() && keep(&p.file_name().unwrap().to_string_lossy()))
        .collect();
    out.sort();
    assert!(!out.is_empty(), "{dir} holds answers to cut");
    out
}

fn fetched(body: &[u8]) -> Fetched {
    let mut headers = reqwest::header::HeaderMap::new();
    headers.insert(
        reqwest::header::CONTENT_TYPE,
        reqwest::header::HeaderValue::from_static("application/json"),
    );
    Fetched {
        status: reqwest::StatusCode::OK,
        headers,
        url: reqwest::Url::parse("http://127.0.0.1:9/x").unwrap(),
        body: body.to_vec(),
    }
}

/// Where the root closes: the end of the last `>` (XML) or `}`/`]` (JSON).
fn root_end(body: &[u8]) -> usize {
    body.iter()
        .rposition(|b| matches!(b, b'>' | b'}' | b']'))
        .map_or(body.len(), |i| i + 1)
}

/// The places an answer is cut: after each `boundary` before the root closes (a spread of
/// them in a large document), and more drawn by a seeded generator.
fn cuts(body: &[u8], boundaries: &[&str], seed: u64) -> Vec<usize> {
    let end = root_end(body);
    let mut at: Vec<usize> = Vec::new();
    for b in boundaries {
        let b = b.as_bytes();
        let mut from = 0;
        while let Some(i) = body[from..end].windows(b.len()).position(|w| w == b) {
            let cut = from + i + b.len();
            if cut < end {
                at.push(cut);
            }
            from += i + 1;
        }
    }
    // Every record boundary of an answer of ordinary size; of a large document (a whole
    // law of megabytes, each cut read again from its start) a spread of 60 of them.
    at.sort_unstable();
    at.dedup();
    let large = body.len() > 128 * 1024;
    if large && at.len() > 60 {
        let step = at.len().div_ceil(60);
        at = at.into_iter().step_by(step).collect();
    }
    let mut state = seed | 1;
    for _ in 0..if large { 16 } else { 48 } {
        // xorshift64: enough spread for cut points, no dependency.
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        at.push((state % end as u64) as usize);
    }
    at
}

fn seed_of(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// The body of a file: a fuzz seed of a reader whose target takes a first byte for the
/// status and content type (`fuzzing::fetched`) starts with that byte.
fn body_of(path: &Path) -> Vec<u8> {
    let bytes = std::fs::read(path).unwrap();
    let picked = ["fuzz/seeds/tk_answer", "fuzz/seeds/obv_answer"]
        .iter()
        .any(|dir| path.starts_with(root().join(dir)));
    if picked { bytes[1..].to_vec() } else { bytes }
}

/// Reads every file whole (must succeed) and cut (must fail).
fn check(reader: &str, paths: &[PathBuf], boundaries: &[&str], read: impl Fn(&[u8]) -> bool) {
    let mut failures = Vec::new();
    let mut cut_count = 0;
    for path in paths {
        let name = path.display().to_string();
        let body = body_of(path);
        if !read(&body) {
            failures.push(format!("{name}: the whole answer does not read"));
            continue;
        }
        for cut in cuts(&body, boundaries, seed_of(&name)) {
            cut_count += 1;
            if read(&body[..cut]) {
                failures.push(format!(
                    "{name}: cut at byte {cut} of {} reads as a success",
                    body.len()
                ));
            }
        }
    }
    println!("{reader}: {} answers, {cut_count} cuts", paths.len());
    assert!(failures.is_empty(), "{reader}:\n{}", failures.join("\n"));
}

#[test]
fn koop_sru_answers_cut_short_are_errors() {
    let mut ob_answers = files("corpus/sru", |n| n.starts_with("ob_"));
    ob_answers.extend(files("fuzz/seeds/ob_answer", |n| n == "search"));
    check("ob's SRU 2.0", &ob_answers, &["record>"], |b| {
        koop::read_body::<ob::ObRecord>(&ob::COLLECTION, b, 1).is_ok()
    });
    let cvdr_answers = files("fuzz/seeds/cvdr_answer", |n| n == "search");
    check("cvdr's SRU 1.2", &cvdr_answers, &["record>"], |b| {
        koop::read_body::<cvdr::CvdrRecord>(&cvdr::COLLECTION, b, 1).is_ok()
    });
}

#[test]
fn regulations_cut_short_are_errors() {
    check(
        "toestand",
        &files("corpus/bwb", |n| n.ends_with(".xml")),
        &["</artikel>"],
        |b| bwb::read_toestand(b).is_ok(),
    );
    check(
        "cvdr regulation",
        &files("corpus/cvdr", |n| n.ends_with(".xml")),
        &["</artikel>", "</al>"],
        |b| cvdr::read_text(b).is_ok(),
    );
}

#[test]
fn rulings_and_feeds_cut_short_are_errors() {
    let mut rulings = files("corpus/rechtspraak", |n| n.ends_with(".xml"));
    rulings.extend(files("fuzz/seeds/rechtspraak_answer", |n| n == "ruling"));
    check(
        "rechtspraak ruling",
        &rulings,
        &["</para>", "</rdf:Description>"],
        |b| rechtspraak::parse_ruling(b).is_ok(),
    );
    check(
        "rechtspraak feed",
        &files("fuzz/seeds/rechtspraak_answer", |n| n == "feed"),
        &["</entry>"],
        |b| rechtspraak::parse_feed(b).is_ok(),
    );
}

#[test]
fn stenographic_reports_cut_short_are_errors() {
    check(
        "VLOS report",
        &files("corpus/tk/vlos", |n| n.ends_with(".xml")),
        &["</woordvoerder>", "</interrumpant>", "</activiteit>"],
        |b| tk::vlos::read_report(b).is_ok(),
    );
}

#[test]
fn publication_renditions_cut_short_are_errors() {
    let mut renditions = files("corpus/ob", |n| n.ends_with(".xml") && !n.contains(".metadata"));
    renditions.extend(files("corpus/tk/documentpublicatie", |n| n.ends_with(".xml")));
    check("KOOP publication XML", &renditions, &["</al>"], |b| {
        read_xml(b, &Caps::default()).is_ok()
    });
}

#[test]
fn json_answers_cut_short_are_errors() {
    let mut tk_answers = files("corpus/tk", |n| n.ends_with(".json"));
    tk_answers.extend(files("fuzz/seeds/tk_answer", |n| n != "refusal"));
    check("tk OData", &tk_answers, &["},"], |b| {
        tk::read_every_answer(&fetched(b)) > 0
    });
    check(
        "obv",
        &files("fuzz/seeds/obv_answer", |n| n != "not_found"),
        &["},"],
        |b| obv::read_every_answer(&fetched(b)) > 0,
    );
    check("ori", &files("fuzz/seeds/ori_answer", |_| true), &["},"], |b| {
        ori::parse_search(b).is_ok()
            || ori::parse_doc(b).is_ok()
            || ori::parse_cat_indices(b).is_ok()
            || ori::parse_aliases(b).is_ok()
    });
    let opentk_read = |b: &[u8]| {
        opentk::parse_search(b).is_ok() || opentk::parse_activity(b).is_ok() || opentk::parse_last_updates(b).is_ok()
    };
    check(
        "opentk",
        &files("fuzz/seeds/opentk_answer", |n| n == "activity" || n == "lastupdates"),
        &["},"],
        opentk_read,
    );
    // The kept search seed is itself cut off inside a string (a fuzz seed need not be
    // whole): it is refused, as any answer cut short.
    assert!(!opentk_read(&body_of(&root().join("fuzz/seeds/opentk_answer/search"))));
}
