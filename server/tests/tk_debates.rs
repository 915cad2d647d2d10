//! `tk_debates` and `tk_debate` end to end, against the Tweede Kamer fake on loopback,
//! which serves the corpus's real VLOS reports (`corpus/tk/vlos/`) byte for byte:
//! - a meeting found by date and kind, and by a member who spoke (the name resolved
//!   against the members list first; an ambiguous name asks for no meeting);
//! - a committee debate read: a member with a faction, a minister with a function and
//!   none, an external speaker with an empty function, an interruption attributed to
//!   the interrupter, the chair apart, the open-data service's ids and not the report's;
//! - the casco report read without error; a motion submitted in a debate read with
//!   `tk_votes`; a debate found by its activity number; a corrected report read anew;
//! - on every real report, the (speaker, interrupter) pairs the tool gives equal those
//!   this test derives from the file on its own (roxmltree).

use crate::support;

use std::collections::BTreeSet;

use besluitbron_fakes::tk::{MEETING_WITHOUT_REPORT, REPORTS, TkSettings, tk_corpus};
use serde_json::{Value, json};
use support::{Mcp, Reply, Server, config, fakes, temp_dir, tool_error_text};

fn ok(r: &Reply) -> (String, Value) {
    let m = r
        .message
        .as_ref()
        .unwrap_or_else(|| panic!("no answer: {} {}", r.status, r.text));
    let res = &m["result"];
    assert_ne!(res["isError"], json!(true), "a tool error: {res}");
    (
        res["content"][0]["text"].as_str().unwrap_or("").to_owned(),
        res["structuredContent"].clone(),
    )
}

async fn start(name: &str) -> (support::Fakes, Server, Mcp) {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir(name))).await;
    let mcp = Mcp::initialize(server.url("/mcp/tk")).await;
    (f, server, mcp)
}

/// The meeting id of the corpus report `report` as tk_debates gives it.
fn meeting_of(report: &str) -> String {
    let (_, meeting, _) = REPORTS
        .iter()
        .find(|(_, _, r)| *r == report)
        .unwrap_or_else(|| panic!("the fake serves {report}"));
    format!("vergadering:{meeting}")
}

const MIVD: &str = "fb28c35e-af8d-49ee-8905-ad41eb41e4de";
const CASCO: &str = "b5130467-a6c2-4f83-99c3-65ec778e5a24";
const FALL_OF_CABINET: &str = "66ab0b76-d942-425b-9c34-30e39f7946a7";
const EUFOR: &str = "93758182-978b-4899-9d4d-1776c7baeab3";

/// A report's whole transcript as the tool pages it.
async fn whole(mcp: &mut Mcp, id: &str) -> String {
    let mut out = String::new();
    let mut offset = 0u64;
    for _ in 0..100 {
        let (text, v) = ok(&mcp
            .call("tk_debate", json!({"id": id, "offset": offset, "length": 100_000}))
            .await);
        let length = v["text_length"].as_u64().expect("text_length") as usize;
        let total = text.chars().count();
        out.extend(text.chars().skip(total - length));
        match v["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => return out,
        }
    }
    panic!("{id}: more than 100 pages");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_meeting_is_found_by_date_and_kind_and_one_without_a_report_is_skipped() {
    let (f, server, mut mcp) = start("tk-debates-date").await;
    let before = f.tk.requests();
    let (text, v) = ok(&mcp
        .call(
            "tk_debates",
            json!({"kind": "committee", "date_from": "2025-07-02", "date_to": "2025-07-03", "limit": 10}),
        )
        .await);
    let ids: BTreeSet<String> = v["results"]
        .as_array()
        .expect("results")
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    let expected: BTreeSet<String> = [
        MIVD,
        CASCO,
        "2a27783d-3d6b-4e26-9fcf-52c17a41f6bf",
        "93758182-978b-4899-9d4d-1776c7baeab3",
    ]
    .iter()
    .map(|r| meeting_of(r))
    .collect();
    assert_eq!(ids, expected, "{text}");
    assert!(
        !text.contains(MEETING_WITHOUT_REPORT),
        "a meeting without a report is skipped"
    );
    assert_eq!(
        f.tk.requests(),
        before + 1 + 4,
        "the meetings, then each of the four reports once"
    );
    let mivd = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == meeting_of(MIVD))
        .unwrap();
    assert_eq!(mivd["title"], "MIVD");
    assert_eq!(mivd["date"], "2025-07-02");
    assert_eq!(mivd["organization"], "vaste commissie voor Defensie");
    assert_eq!(mivd["report_status"], "Ongecorrigeerd");
    assert_eq!(mivd["tool"], "tk_debate");
    assert!(
        mivd["url"]
            .as_str()
            .unwrap()
            .ends_with("commissievergaderingen/details?id=2025A04496"),
        "{mivd}"
    );
    assert!(
        mivd["activities"][0]
            .as_str()
            .unwrap()
            .starts_with("2025A04496 Commissiedebat: MIVD")
    );
    // The words narrow to the debates' titles, and tk_debate then reads from the buffer.
    let (text, v) = ok(&mcp
        .call(
            "tk_debates",
            json!({"query": "mivd", "date_from": "2025-07-02", "date_to": "2025-07-03"}),
        )
        .await);
    assert_eq!(v["results"].as_array().unwrap().len(), 1, "{text}");
    let asked = f.tk.requests();
    ok(&mcp.call("tk_debate", json!({"id": meeting_of(MIVD)})).await);
    assert_eq!(
        f.tk.requests(),
        asked + 1,
        "only the meeting's record: the report is in the buffer"
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_meeting_is_found_by_a_member_who_spoke_after_the_name_is_resolved() {
    let (f, server, mut mcp) = start("tk-debates-speaker").await;
    // An ambiguous name: the candidates, and no meeting asked for (one page of members).
    let before = f.tk.requests();
    let e = tool_error_text(&mcp.call("tk_debates", json!({"speaker": "van Dijk"})).await);
    assert!(
        e.contains("Olger van Dijk (NSC)") && e.contains("Inge van Dijk (CDA)"),
        "{e}"
    );
    assert!(e.contains("no meeting was asked for"), "{e}");
    let seats = tk_corpus().set("FractieZetelPersoon").expect("seats").0.len() as u64;
    assert_eq!(
        f.tk.requests(),
        before + seats.div_ceil(250),
        "the members list only, page by page"
    );
    let e = tool_error_text(&mcp.call("tk_debates", json!({"speaker": "Olgerr van Dyk"})).await);
    assert!(e.contains("no member of the Tweede Kamer is named"), "{e}");
    // The member: exactly the meetings whose reports have a turn of theirs.
    let (text, v) = ok(&mcp
        .call("tk_debates", json!({"speaker": "olger van dijk", "limit": 10}))
        .await);
    let found: BTreeSet<String> = v["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap().to_owned())
        .collect();
    let spoke: BTreeSet<String> = REPORTS
        .iter()
        .filter(|(path, _, _)| {
            let xml = std::fs::read_to_string(corpus().join(path)).unwrap();
            let doc = roxmltree::Document::parse(xml.trim_start_matches('\u{feff}')).unwrap();
            doc.descendants()
                .filter(|n| n.has_tag_name("woordvoerder") || n.has_tag_name("interrumpant"))
                .any(|t| {
                    let s = child(t, "spreker");
                    s.and_then(|s| child_text(s, "voornaam")).as_deref() == Some("Olger")
                        && s.and_then(|s| child_text(s, "achternaam")).as_deref() == Some("Dijk van")
                })
        })
        .map(|(_, meeting, _)| format!("vergadering:{meeting}"))
        .collect();
    assert!(!spoke.is_empty());
    assert_eq!(found, spoke, "{text}");
    assert!(text.contains("Olger van Dijk spoke"), "{text}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_committee_debate_reads_with_factions_functions_interruptions_and_the_chair_apart() {
    let (f, server, mut mcp) = start("tk-debate-committee").await;
    let before = f.tk.requests();
    let (text, v) = ok(&mcp
        .call("tk_debate", json!({"id": meeting_of(MIVD), "length": 100_000}))
        .await);
    assert_eq!(f.tk.requests(), before + 2, "the meeting's record, then its report");
    assert_eq!(v["id"], meeting_of(MIVD));
    assert_eq!(v["kind"], "Commissie");
    assert_eq!(v["organization"], "vaste commissie voor Defensie");
    assert_eq!(v["report_id"], MIVD);
    assert_eq!(v["report_status"], "Ongecorrigeerd");
    // The ids are the open-data service's: the report's own object ids are others.
    let file = std::fs::read_to_string(corpus().join(format!("tk/vlos/{MIVD}.xml"))).unwrap();
    let doc = roxmltree::Document::parse(file.trim_start_matches('\u{feff}')).unwrap();
    let object_id = doc
        .descendants()
        .find(|n| n.has_tag_name("vergadering"))
        .and_then(|n| n.attribute("objectid"))
        .expect("the meeting's object id");
    assert_ne!(format!("vergadering:{object_id}"), meeting_of(MIVD));
    assert!(!text.contains(object_id), "no VLOS object id is given as an id");
    // A member with a faction; a minister with a function and no faction; an interruption
    // by the interrupter of the speaker; the reply; the chair's remark apart.
    assert!(
        text.contains("[speech] Nordkamp (GroenLinks-PvdA):\nDank, voorzitter."),
        "{}",
        &text[..2000]
    );
    assert!(text.contains("[speech] Brekelmans (minister van Defensie):\nDank, voorzitter."));
    assert!(text.contains("[interruption] Olger van Dijk (NSC) → Pool (PVV):\nIk zat even te aarzelen"));
    assert!(text.contains("[reply] Pool (PVV) → Olger van Dijk (NSC):\nHeel concreet"));
    assert!(text.contains("[chair] Kahraman (NSC):\nIk open de vergadering van de vaste commissie voor Defensie."));
    // `speaker` keeps their turns and the exchanges they are in.
    let (text, _) = ok(&mcp
        .call(
            "tk_debate",
            json!({"id": meeting_of(MIVD), "speaker": "Pool", "length": 100_000}),
        )
        .await);
    assert!(text.contains("matched Pool (PVV)."), "{}", &text[..600]);
    assert!(
        text.contains("[interruption] Olger van Dijk (NSC) → Pool (PVV):"),
        "an interruption of Pool"
    );
    assert!(!text.contains("[speech] Nordkamp"), "another's speech left out");
    // `party` by faction.
    let (text, _) = ok(&mcp
        .call("tk_debate", json!({"id": meeting_of(MIVD), "party": "GroenLinks-PvdA"}))
        .await);
    assert!(text.contains("matched Nordkamp (GroenLinks-PvdA)."), "{text}");
    // An external speaker, whose function the report leaves empty (`<functie/>`), by kind.
    let (text, _) = ok(&mcp
        .call(
            "tk_debate",
            json!({"id": meeting_of(EUFOR), "speaker": "Eichelsheim", "length": 100_000}),
        )
        .await);
    assert!(
        text.contains("[interruption] Eichelsheim (Externe spreker) → "),
        "{}",
        &text[..text.len().min(2000)]
    );
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_casco_report_reads_without_error_and_says_so() {
    let (_f, server, mut mcp) = start("tk-debate-casco").await;
    let (text, v) = ok(&mcp.call("tk_debate", json!({"id": meeting_of(CASCO)})).await);
    assert_eq!(v["report_status"], "Casco");
    assert!(text.contains("This is a casco report"), "{text}");
    assert!(text.contains("On the agenda ("), "its agenda: {text}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_motion_submitted_in_the_debate_is_read_with_tk_votes() {
    let (_f, server, mut mcp) = start("tk-debate-motion").await;
    let (text, v) = ok(&mcp
        .call(
            "tk_debate",
            json!({"id": meeting_of(FALL_OF_CABINET), "activity": "2025A04597"}),
        )
        .await);
    let motion = v["motions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["cited"] == "36760-3")
        .unwrap_or_else(|| panic!("the motion-Timmermans: {text}"));
    assert!(
        motion["title"].as_str().unwrap().starts_with("de motie-Timmermans"),
        "{motion}"
    );
    let case = motion["case_id"].as_str().expect("its case number");
    assert!(text.contains(&format!("case {case} (its votes: tk_votes)")), "{text}");
    // tk_votes reads it: adopted, each faction as the report's own vote says.
    let (votes, v) = ok(&mcp.call("tk_votes", json!({"id": case})).await);
    let r = &v["results"][0];
    assert_eq!(r["outcome"], "adopted", "{votes}");
    let voor: BTreeSet<&str> = r["factions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["vote"] == "Voor")
        .map(|f| f["faction"].as_str().unwrap())
        .collect();
    assert!(voor.contains("GroenLinks-PvdA") && voor.contains("PVV"), "{votes}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_activity_number_finds_its_meeting_and_narrows_to_the_debate() {
    let (_f, server, mut mcp) = start("tk-debate-activity").await;
    let (text, v) = ok(&mcp.call("tk_debate", json!({"id": "2025A04496"})).await);
    assert_eq!(v["id"], meeting_of(MIVD), "{text}");
    assert!(text.contains("Shown: activity `2025A04496`"), "{text}");
    let e = tool_error_text(&mcp.call("tk_debate", json!({"id": "2021D02426"})).await);
    assert!(e.contains("is not a meeting, report or activity"), "{e}");
    server.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_corrected_report_is_read_anew_not_taken_from_the_buffer() {
    let (f, server, mut mcp) = start("tk-debate-corrected").await;
    let (_, v) = ok(&mcp.call("tk_debate", json!({"id": meeting_of(MIVD)})).await);
    let first = v["changed_at"].as_str().unwrap().to_owned();
    f.tk.update_own::<TkSettings>(|s| {
        s.corrected.insert(MIVD.to_owned());
    });
    let before = f.tk.requests();
    let (_, v) = ok(&mcp.call("tk_debate", json!({"id": format!("verslag:{MIVD}")})).await);
    assert_eq!(
        f.tk.requests(),
        before + 2,
        "the report's record, then the corrected version's file"
    );
    assert_ne!(v["changed_at"].as_str().unwrap(), first, "the new version");
    server.stop().await;
}

fn corpus() -> std::path::PathBuf {
    besluitbron_fakes::corpus::root()
}

fn child<'a>(n: roxmltree::Node<'a, 'a>, name: &str) -> Option<roxmltree::Node<'a, 'a>> {
    n.children().find(|c| c.has_tag_name(name))
}

fn child_text(n: roxmltree::Node<'_, '_>, name: &str) -> Option<String> {
    child(n, name).map(|c| c.text().unwrap_or("").split_whitespace().collect::<Vec<_>>().join(" "))
}

/// (speaker interrupted, interrupter) for every interruption that is not the chair's,
/// in order, by the report's names: this test's own reading of the file.
fn pairs_in_file(path: &std::path::Path) -> Vec<(String, String)> {
    let xml = std::fs::read_to_string(path).unwrap();
    let doc = roxmltree::Document::parse(xml.trim_start_matches('\u{feff}')).unwrap();
    let name = |t: roxmltree::Node<'_, '_>| {
        child(t, "spreker")
            .and_then(|s| child_text(s, "verslagnaam"))
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for w in doc.descendants().filter(|n| n.has_tag_name("woordvoerder")) {
        for i in w.children().filter(|c| c.has_tag_name("interrumpant")) {
            if child_text(i, "isvoorzitter").as_deref() == Some("true") {
                continue;
            }
            out.push((name(w), name(i)));
        }
    }
    out
}

/// The name in a transcript's `Name (affiliation)`.
fn name_of(label: &str) -> String {
    label.split(" (").next().unwrap_or(label).trim().to_owned()
}

/// (speaker interrupted, interrupter) for every `[interruption]` line of a transcript.
fn pairs_in_transcript(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| l.strip_prefix("[interruption] "))
        .filter_map(|l| l.strip_suffix(':'))
        .filter_map(|l| l.split_once(" → "))
        .map(|(by, of)| (name_of(of), name_of(by)))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_every_real_report_the_speaker_and_interrupter_pairs_are_the_files_own() {
    let (_f, server, mut mcp) = start("tk-debate-pairs").await;
    for (path, meeting, _) in REPORTS {
        let expected = pairs_in_file(&corpus().join(path));
        let got = pairs_in_transcript(&whole(&mut mcp, &format!("vergadering:{meeting}")).await);
        println!("{path}: {} interruptions", expected.len());
        assert_eq!(got, expected, "{path}");
    }
    server.stop().await;
}

/// The check above fails a reader that attributes an interruption to the one interrupted.
#[test]
fn the_pair_check_tells_interrupter_from_interrupted() {
    let right = "[interruption] Olger van Dijk (NSC) → Pool (PVV):\ntext";
    let wrong = "[interruption] Pool (PVV) → Olger van Dijk (NSC):\ntext";
    let expected = vec![("Pool".to_owned(), "Olger van Dijk".to_owned())];
    assert_eq!(pairs_in_transcript(right), expected);
    assert_ne!(pairs_in_transcript(wrong), expected);
}
