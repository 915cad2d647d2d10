//! The readers against real files: the corpus of real platform answers and documents kept
//! beside the project (gathered from public sources, byte for byte; found by
//! `besluitbron_fakes::corpus`, catalogued with provenance in `corpus/index.toml`).
//!
//! The coverage check owns everything it judges by — its own parse of each file (a DOM,
//! roxmltree, not the streaming reader under test), its own list of metadata elements
//! (PLATFORMS.md §11) — and reads what the assistant is given page by page through
//! `offset`, as a tool pages it:
//! - every word of a document's text (all elements outside the metadata ones) appears in
//!   the pages, in document order — found within a short distance of the previous word,
//!   so a dropped passage cannot hide behind a later occurrence of its words;
//! - no word that occurs only in metadata appears in them.
//!
//! Its figures per file are printed
//! (`cargo test -p besluitbron-server --test it corpus:: -- --nocapture`).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use besluitbron_server::connectors::regulation::regulation_page;
use besluitbron_server::platforms::koop::regulation::Regulation;
use besluitbron_server::platforms::{bwb, cvdr};
use sha2::{Digest, Sha256};

fn corpus() -> PathBuf {
    besluitbron_fakes::corpus::root()
}

/// The project's catalogue of the corpus.
fn catalogue() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../corpus/index.toml")
}

fn files(dir: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(corpus().join(dir))
        .unwrap_or_else(|e| panic!("corpus/{dir}: {e}"))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "xml"))
        .collect();
    out.sort();
    out
}

/// Elements whose text is metadata, not the document's own text (PLATFORMS.md §11):
/// the Basiswettenbestand's publication and processing data, a CVDR file's record.
const METADATA: &[&str] = &[
    "meta-data",
    "bwb-inputbestand",
    "bwb-wijzigingen",
    "redactionele-correcties",
    "meta",
];

/// A file's words: those of its text, and those that occur only in its metadata.
struct Words {
    text: Vec<String>,
    /// Words of the metadata (four letters or digits or more) found nowhere in the text,
    /// not even inside a longer word: found anywhere in what was read, they leaked.
    metadata_only: BTreeSet<String>,
    /// Words of the metadata that are no word of the text: read as a word of their own,
    /// they leaked.
    metadata_words: BTreeSet<String>,
}

/// Lower-case runs of letters and digits.
fn tokens(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// `text` as one string of its letters and digits, lower case.
fn squeezed(text: &str) -> String {
    text.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

fn words_of(path: &Path, metadata: &[&str]) -> Words {
    let bytes = std::fs::read(path).unwrap();
    let text = std::str::from_utf8(&bytes).unwrap().trim_start_matches('\u{feff}');
    let doc = roxmltree::Document::parse_with_options(
        text,
        roxmltree::ParsingOptions {
            allow_dtd: true,
            ..roxmltree::ParsingOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut legal = Vec::new();
    let mut meta = Vec::new();
    for node in doc.descendants().filter(|n| n.is_text()) {
        let in_metadata = node
            .ancestors()
            .any(|a| a.is_element() && metadata.contains(&a.tag_name().name()));
        let words = tokens(node.text().unwrap_or_default());
        if in_metadata {
            meta.extend(words);
        } else {
            legal.extend(words);
        }
    }
    let legal_squeezed = legal.concat();
    let legal_words: BTreeSet<&String> = legal.iter().collect();
    let metadata_only = meta
        .iter()
        .filter(|w| w.chars().count() >= 4 && !legal_squeezed.contains(w.as_str()))
        .cloned()
        .collect();
    let metadata_words = meta.iter().filter(|w| !legal_words.contains(w)).cloned().collect();
    Words {
        text: legal,
        metadata_only,
        metadata_words,
    }
}

/// How a file's words were found in what the assistant read.
#[derive(Debug)]
struct Coverage {
    words: usize,
    found: usize,
    /// The first words not found, with the words before them.
    missing: Vec<String>,
    /// Words only in metadata that the assistant read.
    leaked: Vec<String>,
}

/// How far ahead of the previous word the next may be found (in letters and digits):
/// far enough for the headings and notes a reader adds, too short to skip a passage.
/// After a word that is not found, the check gets back in step only where a word and the
/// next four stand together, so one gap costs its own words, not all that follow.
const WINDOW: usize = 40;

/// How close the next word must follow for a match of a word to count (in letters and
/// digits): room for a heading or note a reader adds between two words.
const NEXT_WITHIN: usize = 40;

/// Where `word` stands in `haystack` from `from` within `within` bytes, the nearest
/// first; `None` when it does not.
fn find_near(haystack: &str, word: &str, from: usize, within: usize) -> Option<usize> {
    let mut start = from.min(haystack.len());
    while !haystack.is_char_boundary(start) {
        start -= 1;
    }
    let mut stop = haystack.len().min(start + within + word.len());
    while !haystack.is_char_boundary(stop) {
        stop += 1;
    }
    haystack[start..stop].find(word).map(|at| start + at)
}

fn coverage(words: &Words, read: &str) -> Coverage {
    coverage_within(words, read, WINDOW, NEXT_WITHIN)
}

/// [`coverage`] with room for longer headings between two words: `window` ahead of the
/// previous word, `next_within` between a word and the next.
fn coverage_within(words: &Words, read: &str, window: usize, next_within: usize) -> Coverage {
    let haystack = squeezed(read);
    let mut cursor = 0;
    let mut in_step = true;
    let mut found = 0;
    let mut missing = Vec::new();
    for (i, w) in words.text.iter().enumerate() {
        let place = if in_step {
            // In step: the nearest place of the word within the window that the next
            // two words follow closely (a common word elsewhere does not count).
            let mut from = cursor;
            let mut place = None;
            while let Some(at) = find_near(&haystack, w, from, (cursor + window).saturating_sub(from)) {
                let mut after = Some(at + w.len());
                for next in words.text.iter().skip(i + 1).take(2) {
                    after = after.and_then(|e| find_near(&haystack, next, e, next_within).map(|p| p + next.len()));
                }
                if after.is_some() {
                    place = Some(at + w.len());
                    break;
                }
                from = at + 1;
                while !haystack.is_char_boundary(from) {
                    from += 1;
                }
            }
            place
        } else {
            // Out of step after a gap: back only where this word and the next four
            // stand together, anywhere after the last place in step.
            let run = words.text[i..(i + 5).min(words.text.len())].concat();
            haystack[cursor..].find(run.as_str()).map(|at| cursor + at + w.len())
        };
        match place {
            Some(end) => {
                found += 1;
                cursor = end;
                in_step = true;
            }
            None => {
                if missing.len() < 5 {
                    let before = words.text[i.saturating_sub(6)..i].join(" ");
                    missing.push(format!("`{w}` after «{before}»"));
                }
                in_step = false;
            }
        }
    }
    let read_words: BTreeSet<String> = tokens(read).into_iter().collect();
    let leaked = words
        .metadata_only
        .iter()
        .filter(|w| haystack.contains(w.as_str()))
        .chain(words.metadata_words.intersection(&read_words))
        .take(5)
        .cloned()
        .collect();
    Coverage {
        words: words.text.len(),
        found,
        missing,
        leaked,
    }
}

/// A regulation's whole text as the assistant reads it: page after page through
/// `offset`, as `bwb_read` and `cvdr_read` page it.
fn paged(r: &Regulation) -> String {
    let mut out = String::new();
    let mut offset = 0;
    loop {
        let page = regulation_page(r, None, offset, 10_000, "the regulation").expect("a page");
        out.push_str(&page.text);
        match page.at.next_offset {
            Some(next) => offset = next,
            None => return out,
        }
    }
}

fn check_all(dir: &str, read: impl Fn(&[u8]) -> Result<String, String>) {
    check_files(dir, files(dir), METADATA, read);
}

/// The coverage check over `paths` (named `dir` in the figures), with `metadata` the
/// elements whose text is not the document's.
fn check_files(dir: &str, paths: Vec<PathBuf>, metadata: &[&str], read: impl Fn(&[u8]) -> Result<String, String>) {
    assert!(!paths.is_empty(), "{dir}: files to check");
    let mut failures = Vec::new();
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let words = words_of(&path, metadata);
        let text = match read(&std::fs::read(&path).unwrap()) {
            Ok(text) => text,
            Err(e) => {
                failures.push(format!("{name}: not read: {e}"));
                continue;
            }
        };
        let c = coverage(&words, &text);
        println!(
            "{dir}/{name}: {} of {} words ({:.1} %), {} metadata-only words, {} leaked",
            c.found,
            c.words,
            100.0 * c.found as f64 / c.words.max(1) as f64,
            words.metadata_only.len(),
            c.leaked.len()
        );
        if c.found < c.words || !c.leaked.is_empty() {
            failures.push(format!(
                "{name}: {} of {} words; missing {:?}; metadata read as text {:?}",
                c.found, c.words, c.missing, c.leaked
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_word_of_every_real_toestand_reaches_the_assistant_and_no_metadata() {
    check_all("bwb", |bytes| {
        bwb::read_toestand(bytes).map(|r| paged(&r)).map_err(|e| e.to_string())
    });
}

#[test]
fn every_word_of_every_real_local_regulation_reaches_the_assistant_and_no_metadata() {
    check_all("cvdr", |bytes| {
        cvdr::read_text(bytes).map(|r| paged(&r)).map_err(|e| e.to_string())
    });
}

/// Officiële Bekendmakingen' XML renditions and the Tweede Kamer's KOOP XML
/// (`DocumentPublicatie`), as the document-text reader gives them: their metadata is
/// `metadata` (KOOP's block) and `meta` (the inline fields of newer Kamer files).
#[test]
fn every_word_of_every_real_publication_reaches_the_assistant_and_no_metadata() {
    let mut paths: Vec<PathBuf> = files("ob")
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains(".metadata"))
        .collect();
    paths.extend(files("tk/documentpublicatie"));
    check_files("ob and tk publications", paths, &["metadata", "meta"], |bytes| {
        besluitbron_server::text::read_xml(bytes, &besluitbron_server::text::Caps::default())
            .map(|t| t.text)
            .map_err(|e| e.to_string())
    });
}

/// Rechtspraak's rulings with their text: the inhoudsindicatie and the uitspraak or
/// conclusie as `rechtspraak_ruling` reads them; the metadata is the `rdf:RDF` block.
#[test]
fn every_word_of_every_real_ruling_reaches_the_assistant_and_no_metadata() {
    let with_text: Vec<PathBuf> = files("rechtspraak")
        .into_iter()
        .filter(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.contains("<uitspraak") || text.contains("<conclusie")
        })
        .collect();
    assert!(with_text.len() >= 3, "{with_text:?}");
    check_files("rechtspraak", with_text, &["RDF"], |bytes| {
        let ruling = besluitbron_server::platforms::rechtspraak::parse_ruling(bytes)?;
        let text = ruling.text.map(|t| t.text).unwrap_or_default();
        Ok(format!("{}\n{text}", ruling.summary.unwrap_or_default()))
    });
}

/// Every law reference of every real ruling (`dcterms:references` in the metadata, by this
/// test's own parse) reaches `rechtspraak_ruling`'s reading, none dropped: each whose
/// identifier names a BWB id as one `fetch` reads (the Basiswettenbestand's own id
/// reader agrees on law and article), every other kept with its identifier as given.
#[test]
fn every_law_reference_of_every_real_ruling_becomes_a_bwb_id() {
    const DCTERMS: &str = "http://purl.org/dc/terms/";
    const RDF: &str = "http://www.w3.org/1999/02/22-rdf-syntax-ns#";
    let (mut seen, mut linked) = (0, 0);
    for path in files("rechtspraak") {
        let bytes = std::fs::read(&path).unwrap();
        let xml = std::str::from_utf8(&bytes).unwrap();
        let doc = roxmltree::Document::parse(xml).unwrap();
        let meta = doc
            .descendants()
            .find(|n| n.has_tag_name((RDF, "Description")) && n.attribute((RDF, "about")).is_none());
        let expected: Vec<(Option<String>, String)> = meta
            .iter()
            .flat_map(|m| m.children().filter(|n| n.has_tag_name((DCTERMS, "references"))))
            .map(|n| {
                let id = n
                    .attributes()
                    .find(|a| a.name() == "resourceIdentifier")
                    .map(|a| a.value().to_owned());
                (id, n.text().unwrap_or("").trim().to_owned())
            })
            .collect();
        let ruling = besluitbron_server::platforms::rechtspraak::parse_ruling(&bytes).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        assert_eq!(ruling.references.len(), expected.len(), "{name}: every reference read");
        for (read, (identifier, label)) in ruling.references.iter().zip(&expected) {
            assert_eq!(&read.label, label, "{name}");
            assert_eq!(&read.identifier, identifier, "{name}");
            let names_bwb = identifier.as_deref().is_some_and(|i| i.contains(":BWB"));
            if !names_bwb {
                assert!(read.law.is_none(), "{name}: {identifier:?} is no law");
                continue;
            }
            let law = read
                .law
                .as_ref()
                .unwrap_or_else(|| panic!("{name}: {identifier:?} read as a law"));
            let id = law.id();
            let asked = besluitbron_server::connectors::bwb::ids::asked(&id)
                .unwrap_or_else(|| panic!("{name}: `{id}` is a bwb id fetch reads"));
            let identifier = identifier.as_deref().unwrap();
            assert!(
                identifier.contains(&asked.id),
                "{name}: {identifier} names {}",
                asked.id
            );
            let article = identifier
                .split('&')
                .find_map(|p| p.strip_prefix("artikel="))
                .map(str::to_owned);
            assert_eq!(asked.article, article, "{name}: {identifier}");
            linked += 1;
        }
        seen += expected.len();
    }
    println!("rechtspraak references: {seen} in the corpus, {linked} linked to a bwb id");
    assert!(seen >= 5 && linked == seen, "{seen} seen, {linked} linked");
}

/// Room between two words of a report (letters and digits): a transcript puts each
/// turn's speaker, role and whom it answers before its text, and an activity's and a
/// section's title before their first turn (a minister's function alone is some 50).
const TRANSCRIPT_ROOM: usize = 250;

/// A VLOS report's words, by this test's own reading (roxmltree): the text of every
/// `alineaitem` in document order — every word said, read out or noted — except the
/// label a speech's text opens with (its first item, when it ends with a colon and has
/// at most ten words: `De heer Pool (PVV):`), which the transcript says as the turn's
/// speaker. Metadata (titles, times, speakers' records) is not counted.
fn report_words(path: &Path) -> Words {
    let xml = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(xml.trim_start_matches('\u{feff}')).unwrap();
    let mut text = Vec::new();
    let mut labels = 0;
    for item in doc.descendants().filter(|n| n.has_tag_name("alineaitem")) {
        if item.ancestors().skip(1).any(|a| a.has_tag_name("alineaitem")) {
            continue;
        }
        let said: String = item
            .descendants()
            .filter(|n| n.is_text())
            .filter_map(|n| n.text())
            .collect();
        let tekst = item.ancestors().find(|a| a.has_tag_name("tekst"));
        let first_of_speech = tekst.is_some_and(|t| {
            t.parent()
                .is_some_and(|p| p.has_tag_name("woordvoerder") || p.has_tag_name("interrumpant"))
                && t.descendants().find(|n| n.has_tag_name("alineaitem")) == Some(item)
        });
        let trimmed = said.trim();
        if first_of_speech && trimmed.ends_with(':') && trimmed.split_whitespace().count() <= 10 {
            labels += 1;
            continue;
        }
        text.extend(tokens(&said));
    }
    assert!(
        labels > 0 || !xml.contains("<woordvoerder"),
        "{}: speeches have labels",
        path.display()
    );
    Words {
        text,
        metadata_only: BTreeSet::new(),
        metadata_words: BTreeSet::new(),
    }
}

/// A report's whole transcript as `tk_debate` pages it (10,000 characters a page).
fn transcript_paged(bytes: &[u8]) -> Result<String, String> {
    use besluitbron_server::connectors::tk::transcript::{About, CaseNumbers, Filters, render};
    let report = besluitbron_server::platforms::tk::vlos::read_report(bytes).map_err(|e| e.to_string())?;
    let about = About {
        id: "vergadering:00000000-0000-4000-8000-000000000000".into(),
        title: report.meeting.title.clone().unwrap_or_default(),
        ..About::default()
    };
    let mut out = String::new();
    let mut offset = 0;
    loop {
        let page = render(
            &report,
            &about,
            &Filters::default(),
            &CaseNumbers::new(),
            besluitbron_core::path::Served::Fetched,
            offset,
            10_000,
        )?;
        let besluitbron_server::call::Structure::Own(v) = &page.structured else {
            return Err("no structured content of its own".into());
        };
        let length = v["text_length"].as_u64().unwrap_or(0) as usize;
        let total = page.text.chars().count();
        out.extend(page.text.chars().skip(total - length));
        match v["next_offset"].as_u64() {
            Some(next) => offset = next as usize,
            None => return Ok(out),
        }
    }
}

/// The stenographic reports (VLOS): every word of every speech, interruption, motion read
/// out and note reaches the assistant through `tk_debate`'s pages, in order.
#[test]
fn every_word_of_every_real_report_reaches_the_assistant() {
    let paths = files("tk/vlos");
    assert!(paths.len() >= 8, "{paths:?}");
    let mut failures = Vec::new();
    for path in paths {
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let words = report_words(&path);
        let text = match transcript_paged(&std::fs::read(&path).unwrap()) {
            Ok(text) => text,
            Err(e) => {
                failures.push(format!("{name}: not read: {e}"));
                continue;
            }
        };
        let c = coverage_within(&words, &text, TRANSCRIPT_ROOM, TRANSCRIPT_ROOM);
        println!(
            "tk/vlos/{name}: {} of {} words ({:.1} %)",
            c.found,
            c.words,
            100.0 * c.found as f64 / c.words.max(1) as f64
        );
        if c.found < c.words {
            failures.push(format!(
                "{name}: {} of {} words; missing {:?}",
                c.found, c.words, c.missing
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The check above fails a transcript that leaves out a speech.
#[test]
fn the_report_check_fails_a_transcript_that_drops_a_speech() {
    let path = corpus().join("tk/vlos/fb28c35e-af8d-49ee-8905-ad41eb41e4de.xml");
    let words = report_words(&path);
    let whole = transcript_paged(&std::fs::read(&path).unwrap()).unwrap();
    let check = |text: &str| coverage_within(&words, text, TRANSCRIPT_ROOM, TRANSCRIPT_ROOM).found;
    assert_eq!(check(&whole), words.text.len());
    // A two-word interruption left out, and a chair's remark of four words.
    for passage in [
        "Mooie gordijnen.",
        "Ik open de vergadering van de vaste commissie voor Defensie.",
    ] {
        let dropped = whole.replacen(passage, "", 1);
        assert_ne!(whole, dropped, "`{passage}` is in the report");
        assert!(check(&dropped) < words.text.len(), "`{passage}` left out is noticed");
    }
}

#[test]
fn the_checker_fails_a_reader_that_drops_a_passage_or_reads_metadata() {
    let path = corpus().join("bwb/BWBR0018451_2025-01-01_0.xml");
    let words = words_of(&path, METADATA);
    let whole = paged(&bwb::read_toestand(&std::fs::read(&path).unwrap()).unwrap());
    assert_eq!(coverage(&words, &whole).found, words.text.len());
    // One paragraph left out.
    let dropped = whole.replacen("Indien de normpremie voor een verzekerde", "", 1);
    assert_ne!(whole, dropped, "the paragraph is in the law");
    let c = coverage(&words, &dropped);
    assert!(c.found < words.text.len(), "{c:?}");
    // Metadata read as text.
    let leaked = format!("{whole} stb 2005 {}", words.metadata_only.iter().next().unwrap());
    assert!(!coverage(&words, &leaked).leaked.is_empty());
}

/// Folders of the corpus whose files no reader of ours reads yet, each with what will read
/// them. A file outside the catalogue must be in one of them; a folder listed here whose
/// files the catalogue holds must leave the list (its reader came).
const AWAITING_A_READER: &[(&str, &str)] = &[("woo", "the Woo publications connector")];

/// The catalogue names every file the project uses, each with its provenance and present
/// unchanged; every file of a catalogued folder is catalogued; a real file no reader reads
/// is named.
#[test]
fn every_corpus_file_is_in_the_index_unchanged() {
    let index: toml::Value = toml::from_str(&std::fs::read_to_string(catalogue()).unwrap()).unwrap();
    let entries = index["file"].as_array().expect("[[file]] tables");
    let mut listed = BTreeSet::new();
    for e in entries {
        let path = e["path"].as_str().unwrap();
        for key in [
            "platform",
            "kind",
            "source_repo",
            "source_path",
            "source_commit",
            "retrieved",
            "licence",
            "authenticity",
        ] {
            assert!(
                e.get(key).and_then(|v| v.as_str()).is_some_and(|v| !v.is_empty()),
                "{path}: {key}"
            );
        }
        let bytes = std::fs::read(corpus().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"));
        let sum = format!("{:x}", Sha256::digest(&bytes));
        assert_eq!(sum, e["sha256"].as_str().unwrap(), "{path} changed since it was taken");
        assert_eq!(bytes.len() as i64, e["size"].as_integer().unwrap(), "{path}: size");
        listed.insert(path.to_owned());
    }
    let folders: BTreeSet<&str> = listed
        .iter()
        .filter_map(|p| p.rsplit_once('/').map(|(d, _)| d))
        .collect();
    let mut unread = BTreeSet::new();
    let mut stack = vec![corpus()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let p = entry.unwrap().path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let rel = p.strip_prefix(corpus()).unwrap().to_string_lossy().replace('\\', "/");
            let Some((folder, _)) = rel.rsplit_once('/') else {
                continue; // the corpus's own README, indexes and checksums
            };
            if listed.contains(&rel) {
                continue;
            }
            assert!(
                !folders.contains(folder),
                "{rel} is not in corpus/index.toml, beside the rest of {folder}/"
            );
            let top = folder.split('/').next().unwrap_or(folder);
            assert!(
                AWAITING_A_READER.iter().any(|(f, _)| *f == top),
                "{rel}: a real file no reader reads, in a folder no reader is awaited for"
            );
            unread.insert(top.to_owned());
        }
    }
    for (folder, reader) in AWAITING_A_READER {
        assert!(
            unread.contains(*folder),
            "{folder}/ is read now ({reader}): strike it from AWAITING_A_READER"
        );
    }
}

/// `scripts/corpus --root` finds the corpus where the fakes find it (one rule, two
/// languages).
#[test]
fn the_script_and_the_fakes_find_the_same_corpus() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/corpus");
    let out = std::process::Command::new("python3")
        .arg(&script)
        .arg("--root")
        .output()
        .expect("python3 runs scripts/corpus");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let printed = PathBuf::from(String::from_utf8(out.stdout).unwrap().trim());
    assert_eq!(
        printed.canonicalize().unwrap(),
        corpus().canonicalize().unwrap(),
        "scripts/corpus and besluitbron_fakes::corpus"
    );
}

fn toestand(name: &str) -> Regulation {
    bwb::read_toestand(&std::fs::read(corpus().join("bwb").join(name)).unwrap()).unwrap()
}

/// Regression: `bwb_read` of the Wet op de zorgtoeslag was titled "Wet op de
/// zorgtoeslag200536926-07-200516-06-2005…" and article 2 ended "…overgelegd.
/// 201162020-12-2011…": the publication data inside the title and every article.
#[test]
fn regression_issue_41_the_zorgtoeslag_holds_no_publication_data() {
    let r = toestand("BWBR0018451_2025-01-01_0.xml");
    assert_eq!(r.citation_title.as_deref(), Some("Wet op de zorgtoeslag"));
    let article = r.article("2").expect("article 2");
    assert!(
        article
            .text
            .ends_with("aan beide kamers der Staten-Generaal is overgelegd."),
        "{}",
        article.text
    );
    assert!(!r.full_text().contains("369"), "no publication number anywhere");
}

/// Regression: a regulation in chapters without articles read as "0 articles. The text,
/// characters 0–0 of 0." — no error, nothing to read.
#[test]
fn regression_issue_41_a_regulation_in_chapters_only_is_read_whole() {
    let bytes = std::fs::read(corpus().join("cvdr/CVDR100394_2.xml")).unwrap();
    let r = cvdr::read_text(&bytes).unwrap();
    assert_eq!(r.articles().count(), 0);
    let text = r.full_text();
    assert!(
        text.contains("5.Gehandicaptenparkeerplaatsen") && text.contains("Zelf bestuurder te zijn"),
        "{text}"
    );
}

/// Regression: the two table annexes of a ministerial regulation, its aanhef (the legal
/// basis) and ondertekening were dropped: 18 % of its words reached the assistant.
#[test]
fn regression_issue_41_annexes_tables_aanhef_and_ondertekening_are_read() {
    let r = toestand("BWBR0008326_2011-01-01_0.xml");
    let text = r.full_text();
    assert!(
        text.contains("Gelet op artikel 14 van de Invoeringswet Financiële-verhoudingswet"),
        "the aanhef"
    );
    assert!(
        text.contains("- | (8.1) | Gemeentecode"),
        "a table row, its cells apart"
    );
    let parts: Vec<&str> = r
        .outline()
        .map(|e| e.label)
        .filter(|l| l.starts_with("Bijlage"))
        .collect();
    assert_eq!(parts.len(), 2, "{parts:?}");
    let zorgtoeslag = toestand("BWBR0018451_2025-01-01_0.xml").full_text();
    assert!(zorgtoeslag.contains("Slotformulier en ondertekening\n") && zorgtoeslag.contains("J. F. Hoogervorst"));
}

/// A treaty with its French authentic text beside the Dutch one: the French is a
/// division of its own, and an article asked by number is the Dutch one.
#[test]
fn a_treatys_text_in_another_language_is_a_division_of_its_own() {
    let r = toestand("BWBV0004110_2005-07-24_0.xml");
    let french = r
        .outline()
        .position(|e| e.label == "Verdragtekst in het Frans (authentiek)");
    let first_french_article = r.outline().position(|e| e.label.starts_with("Article 1 "));
    assert!(
        french.is_some() && first_french_article > french,
        "{:?}",
        r.outline().take(60).collect::<Vec<_>>()
    );
    assert!(
        r.article("1").unwrap().heading.starts_with("Artikel 1 "),
        "the Dutch article first"
    );
}

/// A loopback mirror of the raw-file host: each catalogued file at its source's address
/// (`/<owner>/<name>/<commit>/<path>`), its bytes read from the corpus; `spoil` names a
/// file served with one byte changed.
async fn raw_mirror(spoil: Option<&str>) -> std::net::SocketAddr {
    use std::collections::BTreeMap;
    let mut files: BTreeMap<String, Vec<u8>> = BTreeMap::new();
    for e in besluitbron_fakes::corpus::index() {
        let mut bytes = besluitbron_fakes::corpus::read(&e.path).unwrap_or_else(|err| panic!("{err}"));
        if spoil == Some(e.path.as_str()) {
            bytes[0] ^= 1;
        }
        files.insert(
            format!("/{}/{}/{}", e.source_repo, e.source_commit, e.source_path),
            bytes,
        );
    }
    let files = std::sync::Arc::new(files);
    let app = axum::Router::new().fallback(move |uri: axum::http::Uri| {
        let files = files.clone();
        async move {
            let path = percent_encoding::percent_decode_str(uri.path())
                .decode_utf8_lossy()
                .into_owned();
            match files.get(&path) {
                Some(bytes) => (axum::http::StatusCode::OK, bytes.clone()),
                None => (axum::http::StatusCode::NOT_FOUND, Vec::new()),
            }
        }
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    addr
}

/// `scripts/corpus` into `root` with the raw files at `raw`: its status, stdout, stderr.
async fn run_script(root: &Path, raw: &str) -> (bool, String, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/corpus");
    let mut command = std::process::Command::new("python3");
    command
        .arg(script)
        .env("BESLUITBRON_CORPUS", root)
        .env("BESLUITBRON_CORPUS_RAW", raw);
    let out = tokio::task::spawn_blocking(move || command.output())
        .await
        .unwrap()
        .expect("python3 runs scripts/corpus");
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8(out.stderr).unwrap(),
    )
}

/// Someone without the shared corpus gets every catalogued file from its source, checked;
/// a source that answers other bytes is refused by name; without a network the script
/// stops at once with one line naming the missing files and the variable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scripts_corpus_fetches_every_file_from_its_source_checked_and_refuses_by_name() {
    let count = besluitbron_fakes::corpus::index().len();
    let dir = tempfile::tempdir().unwrap();
    let raw = format!("http://{}", raw_mirror(None).await);
    let (ok, out, err) = run_script(dir.path(), &raw).await;
    assert!(ok, "{out}{err}");
    assert!(out.contains(&format!("fetched {count} of {count} real files")), "{out}");
    for e in besluitbron_fakes::corpus::index() {
        let bytes = std::fs::read(dir.path().join(&e.path)).unwrap_or_else(|x| panic!("{}: {x}", e.path));
        assert_eq!(format!("{:x}", Sha256::digest(&bytes)), e.sha256, "{}", e.path);
    }
    let (ok, out, _) = run_script(dir.path(), "http://127.0.0.1:1").await;
    assert!(
        ok && out.contains("each as catalogued"),
        "a complete corpus asks nothing: {out}"
    );

    let spoiled = "cvdr/CVDR100394_2.xml";
    let dir = tempfile::tempdir().unwrap();
    let raw = format!("http://{}", raw_mirror(Some(spoiled)).await);
    let (ok, _, err) = run_script(dir.path(), &raw).await;
    assert!(!ok, "a file with other bytes is not taken");
    assert!(
        err.contains(&format!("{spoiled} could not be fetched")) && err.contains("another sha256"),
        "{err}"
    );
    assert!(!dir.path().join(spoiled).exists(), "nothing is written for it");

    let empty = tempfile::tempdir().unwrap();
    let (ok, _, err) = run_script(empty.path(), "http://127.0.0.1:1").await;
    assert!(!ok);
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for part in [
        &format!("lacks {count}") as &str,
        "BESLUITBRON_CORPUS",
        "could not be fetched",
        "bwb/",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }
}

/// EU acts as CELLAR serves them (`corpus/eurlex/`): the Formex 4 acts (formex-04 and the
/// newer schema) and the XHTML with ELI classes, read by `platforms::eurlex::text` into
/// the regulation family's model and paged as `eurlex_read` pages them. Their metadata:
/// a Formex act's `BIB.INSTANCE`, an XHTML page's `head`. The Formex `DOC` manifests hold
/// no text: they are read for their ELI and files.
#[test]
fn every_word_of_every_real_eu_act_reaches_the_assistant_and_no_metadata() {
    use besluitbron_server::platforms::eurlex::text;
    let dir = corpus().join("eurlex");
    let acts = vec![
        dir.join("cellar-fmx4-32008R1137-EN-DOC_2.xml"),
        dir.join("cellar-fmx4-32024R0903-EN-L_202400903EN.000101.fmx.xml"),
    ];
    check_files("eurlex", acts, &["BIB.INSTANCE"], |bytes| {
        text::read_formex(bytes).map(|r| paged(&r)).map_err(|e| e.to_string())
    });
    check_files(
        "eurlex",
        vec![dir.join("cellar-xhtml-32024R0903-EN-DOC_1.html")],
        &["head"],
        |bytes| text::read_xhtml(bytes).map(|r| paged(&r)).map_err(|e| e.to_string()),
    );
    let m =
        text::read_manifest(&std::fs::read(dir.join("cellar-fmx4-32024R0903-EN-L_202400903EN.doc.fmx.xml")).unwrap())
            .unwrap();
    assert_eq!(m.eli.as_deref(), Some("http://data.europa.eu/eli/reg/2024/903/oj"));
    assert_eq!(
        m.files,
        ["L_202400903EN.000101.fmx.xml", "L_202400903EN.002601.fmx.xml"]
    );
    let m = text::read_manifest(&std::fs::read(dir.join("cellar-fmx4-32008R1137-EN-DOC_1.xml")).unwrap()).unwrap();
    assert_eq!(m.files.len(), 3, "{m:?}");
    let act =
        text::read_formex(&std::fs::read(dir.join("cellar-fmx4-32024R0903-EN-L_202400903EN.000101.fmx.xml")).unwrap())
            .unwrap();
    assert_eq!(act.articles().count(), 23);
    let xhtml = text::read_xhtml(&std::fs::read(dir.join("cellar-xhtml-32024R0903-EN-DOC_1.html")).unwrap()).unwrap();
    assert_eq!(xhtml.articles().count(), 23);
    let numbers = |r: &Regulation| r.articles().filter_map(|a| a.number.clone()).collect::<Vec<_>>();
    assert_eq!(numbers(&act), numbers(&xhtml), "both forms number the articles alike");
}
