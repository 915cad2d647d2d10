//! The tools read real files whole, end to end: the fakes serve the corpus's real files
//! (`corpus/`, byte for byte, found as the platforms find them) and the real server reads
//! them through its tools over loopback, page by page through `offset` — a real toestand
//! with metadata inside its titles and articles, a real toestand whose annexes are tables,
//! a real regulation written in chapters only, real publications and real rulings with and
//! without text.
//!
//! Expected words are quoted from the real files (`corpus/index.toml` says where each
//! came from); the ids used here are the ones the fakes serve them under.

use crate::support;

use besluitbron_fakes::ob::{Renditions, ob_corpus};
use besluitbron_fakes::rechtspraak::real_rulings;
use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, temp_dir};

fn result(r: &Reply) -> &Value {
    let m = r
        .message
        .as_ref()
        .unwrap_or_else(|| panic!("no JSON-RPC answer: {} {}", r.status, r.text));
    assert!(m.get("error").is_none(), "a JSON-RPC error: {m}");
    &m["result"]
}

/// A tool's text and structured content; a tool error fails the test.
fn ok(r: &Reply) -> (String, Value) {
    let res = result(r);
    assert_ne!(res["isError"], json!(true), "a tool error: {res}");
    (
        res["content"][0]["text"].as_str().unwrap_or("").to_owned(),
        res["structuredContent"].clone(),
    )
}

/// The page of text an answer holds: the last `text_length` characters of its text.
fn page_text(text: &str, v: &Value) -> String {
    let length = v["text_length"].as_u64().expect("text_length") as usize;
    let total = text.chars().count();
    text.chars().skip(total - length).collect()
}

/// Reads `tool` with `args` page by page, `length` characters at a time, following
/// `next_offset` to the end: the whole text and the first answer's structured content.
async fn read_whole(mcp: &mut Mcp, tool: &str, args: Value, length: u64) -> (String, Value) {
    let mut whole = String::new();
    let mut first = None;
    let mut offset = 0u64;
    for _ in 0..1_000 {
        let mut asked = args.clone();
        asked["offset"] = json!(offset);
        asked["length"] = json!(length);
        let (text, v) = ok(&mcp.call(tool, asked).await);
        whole.push_str(&page_text(&text, &v));
        let next = v["next_offset"].as_u64();
        first.get_or_insert(v);
        match next {
            Some(next) => {
                assert!(next > offset, "{tool}: paging moves on");
                offset = next;
            }
            None => {
                let v = first.expect("an answer");
                assert_eq!(
                    whole.chars().count() as u64,
                    v["total_length"].as_u64().expect("total_length"),
                    "{tool}: the pages add up to the text"
                );
                return (whole, v);
            }
        }
    }
    panic!("{tool}: more than 1000 pages");
}

async fn start(name: &str, route: &str) -> (support::Fakes, Server, Mcp) {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir(name))).await;
    let mcp = Mcp::initialize(server.url(route)).await;
    (f, server, mcp)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_wet_op_de_zorgtoeslag_reads_whole_without_its_metadata() {
    let (f, server, mut mcp) = start("real-zorgtoeslag", "/mcp/bwb").await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::bwb::PLATFORM)
        .expect("the bwb fake")
        .clone();
    let asked = json!({"id": "BWBR0018451", "date": "2025-06-01"});
    let before = fake.requests();
    let (whole, v) = read_whole(&mut mcp, "bwb_read", asked.clone(), 4_000).await;
    assert_eq!(
        fake.requests(),
        before + 2,
        "the version's record and its toestand, then the buffer"
    );
    assert_eq!(
        v["title"],
        json!("Wet op de zorgtoeslag"),
        "the citeertitel, nothing after it"
    );
    assert_eq!(
        (v["kind"].clone(), v["valid_from"].clone(), v["valid_until"].clone()),
        (json!("wet"), json!("2025-01-01"), json!("9999-12-31"))
    );
    assert!(whole.contains("Citeertitel: Wet op de zorgtoeslag\n"), "{whole}");
    // Article 2 as the file has it, and nothing of its metadata after its last words.
    let (text, one) = ok(&mcp
        .call(
            "bwb_read",
            json!({"id": "BWBR0018451", "date": "2025-06-01", "article": "2"}),
        )
        .await);
    assert_eq!(one["article"], json!("2"));
    let article = page_text(&text, &one);
    assert!(article.trim_end().ends_with("overgelegd."), "{article}");
    let at = whole
        .find(article.trim_end())
        .expect("the article stands in the whole text");
    let after = &whole[at + article.trim_end().len()..];
    assert!(
        !after.trim_start().starts_with(|c: char| c.is_ascii_digit()),
        "no publication numbers after article 2: {}",
        after.chars().take(80).collect::<String>()
    );
    assert!(article.contains("heeft de verzekerde aanspraak op een zorgtoeslag ter grootte van dat verschil"));
    // The metadata runs the issue named never reach the text.
    for run in [
        "20-12-2011",
        "06-12-2011",
        "26-07-2005",
        "16-06-2005",
        "stb-2011-620",
        "jci1.3",
        "29762",
    ] {
        assert!(!whole.contains(run), "`{run}` (metadata) in the text");
    }
    // The search finds it as the service would, by its title's words on the day.
    let (_, found) = ok(&mcp
        .call("bwb_search", json!({"query": "zorgtoeslag", "date": "2025-06-01"}))
        .await);
    assert_eq!(found["results"][0]["id"], json!("BWBR0018451"));
    assert_eq!(found["total"], json!(1));
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ministerial_regulation_reads_its_two_table_annexes() {
    let (_f, server, mut mcp) = start("real-annexes", "/mcp/bwb").await;
    let (whole, v) = read_whole(
        &mut mcp,
        "bwb_read",
        json!({"id": "BWBR0008326", "date": "2011-06-01"}),
        20_000,
    )
    .await;
    assert_eq!(v["title"], json!("Regeling belastingcapaciteit"));
    assert_eq!(v["kind"], json!("ministeriele-regeling"));
    let annexes: Vec<&str> = v["outline"]
        .as_array()
        .expect("an outline")
        .iter()
        .filter_map(|e| e["label"].as_str())
        .filter(|l| l.starts_with("Bijlage"))
        .collect();
    assert_eq!(annexes.len(), 2, "{:?}", v["outline"]);
    for words in [
        "Lijst met aan het CBS te verstrekken gegevens",
        "Standaard uitwisselingsformaat belastingscapaciteit (STUF-CAP)",
        "Gemeentecode",
        "Recordidentificatiecode",
        "uniek identificerend administratienummer van een WOZ-object",
        "Stuf-WOZnummer",
    ] {
        assert!(whole.contains(words), "`{words}` of an annex is read");
    }
    // The tables' cells stand in rows: a code and its name on one line, apart.
    let row = whole
        .lines()
        .find(|l| l.contains("(8.1)"))
        .expect("the row of code 8.1");
    assert!(
        row.contains("Gemeentecode") && !row.contains("(8.1)Gemeentecode"),
        "{row}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_regulation_in_chapters_only_reads_its_text() {
    let (f, server, mut mcp) = start("real-chapters", "/mcp/cvdr").await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::cvdr::PLATFORM)
        .expect("the cvdr fake")
        .clone();
    let before = fake.requests();
    let (whole, v) = read_whole(&mut mcp, "cvdr_read", json!({"id": "CVDR100394_2"}), 500).await;
    assert_eq!(
        fake.requests(),
        before + 2,
        "the version's record and its XML, then the buffer"
    );
    assert_eq!(v["id"], json!("CVDR100394_2"));
    assert_eq!(v["title"], json!("Beleidsregels verkeersveiligheid en parkeren"));
    assert_eq!(v["organization"], json!("Gemeente Kampen"));
    assert!(v["total_length"].as_u64().unwrap() > 500, "{v}");
    for words in [
        "Gehandicaptenparkeerplaatsen",
        "Burgers die in het bezit zijn van een algemene gehandicaptenparkeerkaart",
        "Dit wordt vastgesteld op basis van keuring door een erkend medisch adviesbureau.",
    ] {
        assert!(whole.contains(words), "`{words}` in:\n{whole}");
    }
    assert!(!whole.contains("16ADV00361"), "the kenmerk is metadata");
    // The old export's regulation, named as the service names it.
    let (old, o) = read_whole(&mut mcp, "cvdr_read", json!({"id": "CVDR112779_1"}), 10_000).await;
    assert_eq!(o["id"], json!("CVDR112779_1"));
    assert_eq!(o["organization"], json!("Gemeente Spijkenisse"));
    assert!(!old.is_empty());
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_real_publication_reads_from_its_own_file() {
    let (f, server, mut mcp) = start("real-publications", "/mcp/ob").await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::ob::PLATFORM)
        .expect("the ob fake")
        .clone();
    let real: Vec<_> = ob_corpus()
        .publications
        .iter()
        .filter(|p| p.renditions == Renditions::Real)
        .collect();
    assert_eq!(real.len(), 7, "the corpus's seven renditions");
    for p in real {
        let before = fake.requests();
        let (whole, v) = read_whole(&mut mcp, "ob_document", json!({"id": p.identifier}), 2_000).await;
        assert_eq!(
            fake.requests(),
            before + 2,
            "{}: the record, then its XML",
            p.identifier
        );
        assert_eq!(v["id"], json!(p.identifier));
        assert_eq!(v["journal"], json!(p.publication));
        assert!(whole.chars().count() > 100, "{}: {whole}", p.identifier);
        assert!(
            !whole.contains("externMetadataRecord"),
            "{}: the metadata block is dropped",
            p.identifier
        );
    }
    let (motion, v) = read_whole(&mut mcp, "ob_document", json!({"id": "kst-32545-143"}), 10_000).await;
    assert_eq!(
        v["title"]
            .as_str()
            .map(|t| t.starts_with("Wet- en regelgeving financiële markten; Motie")),
        Some(true),
        "{v}"
    );
    for words in [
        "De Kamer,",
        "gehoord de beraadslaging,",
        "constaterende dat diverse financiële instellingen",
    ] {
        assert!(motion.contains(words), "`{words}` in:\n{motion}");
    }
    // A rendition with a byte order mark reads like any other.
    let (decree, _) = read_whole(&mut mcp, "ob_document", json!({"id": "stb-2018-84"}), 10_000).await;
    assert!(
        decree.contains("Gelet op artikel 4, tweede lid, van de Muntwet 2002;"),
        "{decree}"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn real_rulings_read_with_their_text_and_without() {
    let (f, server, mut mcp) = start("real-rulings", "/mcp/rechtspraak").await;
    let fake = f
        .all
        .get(besluitbron_server::platforms::rechtspraak::PLATFORM)
        .expect("the rechtspraak fake")
        .clone();
    assert_eq!(real_rulings().count(), 6);
    let before = fake.requests();
    let (whole, v) = read_whole(
        &mut mcp,
        "rechtspraak_ruling",
        json!({"id": "ECLI:NL:CBB:2020:1"}),
        50_000,
    )
    .await;
    assert_eq!(fake.requests(), before + 1, "one request, then the buffer");
    assert_eq!(v["has_text"], json!(true));
    assert_eq!(v["id"], json!("ECLI:NL:CBB:2020:1"));
    assert_eq!(
        v["court"]["name"],
        json!("College van Beroep voor het bedrijfsleven"),
        "{v}"
    );
    for words in [
        "COLLEGE VAN BEROEP VOOR HET BEDRIJFSLEVEN",
        "uitspraak van de meervoudige kamer van 7 januari 2020",
    ] {
        assert!(whole.contains(words), "`{words}` in the ruling");
    }
    let (text, bare) = ok(&mcp
        .call("rechtspraak_ruling", json!({"id": "ECLI:NL:RBAMS:2007:YB0083"}))
        .await);
    assert_eq!(bare["has_text"], json!(false));
    assert_eq!(bare["court"]["name"], json!("Rechtbank Amsterdam"));
    assert!(text.contains("No published text"), "{text}");
    // The laws a real ruling applies, each as the bwb id `fetch` reads.
    let (text, v) = ok(&mcp
        .call("rechtspraak_ruling", json!({"id": "ECLI:NL:GHAMS:2007:AZ8310"}))
        .await);
    let ids: Vec<&str> = v["references"]
        .as_array()
        .expect("references")
        .iter()
        .map(|r| r["id"].as_str().expect("a bwb id"))
        .collect();
    assert_eq!(
        ids,
        [
            "BWBR0001854",
            "BWBR0001854#77k",
            "BWBR0001903",
            "BWBR0001903#66",
            "BWBR0001903#75"
        ]
    );
    assert!(
        text.contains("- Wetboek van Strafvordering 66 — BWBR0001903#66"),
        "{text}"
    );
    let mut all = Mcp::initialize(server.url("/mcp")).await;
    let r = all.call("fetch", json!({"id": "BWBR0001903#66"})).await;
    let said = result(&r).to_string();
    assert!(
        said.contains("bwb_read") || said.contains("Basiswettenbestand"),
        "{said}"
    );
    // Every real ruling answers, with its text or saying it has none.
    for (ecli, _) in real_rulings() {
        let (_, v) = ok(&mcp.call("rechtspraak_ruling", json!({"id": ecli})).await);
        assert_eq!(v["id"], json!(ecli));
    }
    server.stop().await;
}
