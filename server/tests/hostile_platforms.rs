//! A hostile platform cannot defeat BesluitBron (the
//! hostile probe's first finding): every tool of every connector (each `Sample` of the registry, so every
//! parser — OpenBesluitvorming's JSON, the Tweede Kamer's OData and document files,
//! Rechtspraak's Atom and content, OpenTK, ORI, Officiële Bekendmakingen' SRU) meets
//! each hostile answer of the fakes (`besluitbron_fakes::HostileBody`: entity expansion,
//! an external entity, 10,000-deep nesting, a wrong `Content-Type`, a truncated gzip, a
//! redirect to another host and a redirect loop, a body dripping one byte a second) and
//! a 200 MB body. Each call gives a short tool error naming the platform (or, where the
//! attack changes nothing of what the answer says, the same answer as from a healthy
//! platform), never expands, reads or follows what it was offered, and stores nothing
//! from a failure; a canary call on another platform is answered meanwhile; the process
//! stays within its memory bound. OpenTK and an ORI mirror (its `BaseUrl` set to its fake)
//! are among them for every attack, both by name.
//!
//! A test binary of its own (`Cargo.toml`): it asserts the peak resident memory of its
//! process, which the other tests would add to in a shared one.

mod support;

use std::collections::BTreeMap;

use besluitbron_core::PlatformId;
use besluitbron_fakes::{FakeHandle, HostileBody, Oversize};
use besluitbron_server::connectors::{CONNECTORS, ConnectorSpec, Sample};
use serde_json::{Value, json};
use support::{Fakes, Mcp, Reply, Server, config, fakes, temp_dir};

/// What a platform does to its client in one round.
#[derive(Clone, Copy, Debug)]
enum Attack {
    Hostile(HostileBody),
    /// A 200 MB chunked body, its size not announced.
    Huge,
}

impl Attack {
    fn set(self, fake: &FakeHandle, on: bool) {
        match self {
            Attack::Hostile(h) => fake.set_hostile(on.then_some(h)),
            Attack::Huge => fake.set_oversize(on.then_some(Oversize {
                bytes: 200 * 1024 * 1024,
                announce_length: false,
            })),
        }
    }

    /// Whether each attacked call waits out its platform's time-out (a drip), so the
    /// connectors meet it side by side rather than one after another: the same calls and
    /// checks, a tenth of the time. (A body that is read is attacked one call at a time,
    /// so the process's memory bound stays one call's.)
    fn waits_out_the_time_out(self) -> bool {
        matches!(self, Attack::Hostile(HostileBody::Drip))
    }

    /// Whether the attack may leave what the answer says unchanged, so that reading it
    /// anyway is no fabrication: a body under another `Content-Type`; deep nesting where
    /// no field is read (serde skips an unknown member without recursion); an entity in
    /// an HTML page (OpenTK's rendition), which HTML shows as the characters it is (an
    /// XML reader refuses it: `tests/complete_answers.rs`, `xml::WellFormed`); a cut that
    /// does not apply (a PDF, an HTML page: only XML and JSON are cut). Whatever is read
    /// must still equal the healthy answer — a shorter page never does.
    fn may_be_read(self) -> bool {
        matches!(
            self,
            Attack::Hostile(
                HostileBody::WrongContentType
                    | HostileBody::DeepNesting
                    | HostileBody::CutAfterRecord
                    | HostileBody::BillionLaughs
                    | HostileBody::ExternalEntity
            )
        )
    }
}

fn arguments(sample: &Sample) -> Value {
    serde_json::from_str(sample.arguments).expect("sample arguments")
}

/// `structured` without the lengths of a text: an HTML rendition (OpenTK) shows an
/// entity reference HTML does not know as the characters it is, so the text is a few
/// characters longer, and never expanded (checked on the whole answer).
fn without_lengths(structured: &Value) -> Value {
    let mut v = structured.clone();
    if let Some(o) = v.as_object_mut() {
        for field in ["text_chars", "total_length"] {
            o.remove(field);
        }
    }
    v
}

/// Peak and current resident memory of this whole test process, in KiB.
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

async fn server(fakes: &Fakes, name: &str) -> Server {
    let mut cfg = config(fakes, &temp_dir(name));
    // A session for each attacked call and each canary.
    cfg.sessions.initialize_per_minute = 10_000;
    for c in CONNECTORS {
        // Long enough for a healthy answer on a busy machine, short enough that a drip
        // (a byte a second) runs out of it.
        cfg.platforms.get_mut(c.platform.as_str()).expect("platform").timeout_ms = 3_000;
    }
    Server::start(cfg).await
}

/// The canary: a search on another platform than `busy`, different every time so that
/// it reaches its platform.
async fn canary(server: &Server, busy: PlatformId, n: usize) {
    let (path, tool, args) = if busy == besluitbron_server::platforms::tk::PLATFORM {
        (
            "/mcp/ob",
            "ob_search",
            json!({"query": format!("canary{n}"), "limit": 1}),
        )
    } else {
        (
            "/mcp/tk",
            "tk_search",
            json!({"words": format!("canary{n}"), "limit": 1}),
        )
    };
    let mut mcp = Mcp::initialize(server.url(path)).await;
    let r = mcp.call(tool, args).await;
    let m = r
        .message
        .unwrap_or_else(|| panic!("canary {tool}: {} {}", r.status, r.text));
    assert_ne!(
        m["result"]["isError"],
        json!(true),
        "the canary {tool} is answered while {busy} attacks: {m}"
    );
}

/// What the tool said: `Ok(structured content)` or `Err(error text)`.
fn outcome(tool: &str, r: &Reply) -> Result<Value, String> {
    let m = r
        .message
        .as_ref()
        .unwrap_or_else(|| panic!("{tool}: no JSON-RPC answer: {} {}", r.status, r.text));
    assert!(
        m.get("error").is_none(),
        "{tool}: a tool result, not a JSON-RPC error: {m}"
    );
    let result = &m["result"];
    let text = result["content"][0]["text"].as_str().unwrap_or("").to_owned();
    if result["isError"] == json!(true) {
        Err(text)
    } else {
        Ok(result["structuredContent"].clone())
    }
}

/// The healthy answers of every sample, from a server of their own.
async fn healthy_answers(f: &Fakes) -> BTreeMap<&'static str, Value> {
    let server = server(f, "hostile-healthy").await;
    let mut answers = BTreeMap::new();
    for c in CONNECTORS {
        let mut mcp = Mcp::initialize(server.url(&format!("/mcp/{}", c.id))).await;
        for sample in c.samples {
            let answer = outcome(sample.tool, &mcp.call(sample.tool, arguments(sample)).await)
                .unwrap_or_else(|e| panic!("{}: healthy: {e}", sample.tool));
            answers.insert(sample.tool, answer);
        }
    }
    server.stop().await;
    answers
}

async fn attack_every_tool(attack: Attack) {
    let f = fakes().await;
    let healthy = healthy_answers(&f).await;
    let server = server(&f, &format!("hostile-{attack:?}")).await;
    let mut attacked = Vec::new();
    // Each connector's canaries have numbers of their own (a canary asks another platform
    // each time).
    let numbered = CONNECTORS.iter().enumerate().map(|(i, c)| (c, i * 1_000));
    if attack.waits_out_the_time_out() {
        // Side by side, in two waves: a canary asks the Tweede Kamer (Officiële
        // Bekendmakingen for the Tweede Kamer's own), which must not be under attack then.
        let tk = besluitbron_server::platforms::tk::PLATFORM;
        let (others, tk): (Vec<_>, Vec<_>) = numbered.partition(|(c, _)| c.platform != tk);
        for wave in [others, tk] {
            let attacks = wave
                .iter()
                .map(|&(c, n)| attack_connector(&f, &server, c, attack, &healthy, n));
            futures::future::join_all(attacks).await;
            attacked.extend(wave.iter().map(|(c, _)| c.platform));
        }
    } else {
        for (c, n) in numbered {
            attack_connector(&f, &server, c, attack, &healthy, n).await;
            attacked.push(c.platform);
        }
    }
    // OpenTK and an ORI mirror meet every attack too (each sample of theirs
    // asked their fake under it: `attack_connector` checks the platform was asked).
    for platform in [
        besluitbron_server::platforms::opentk::PLATFORM,
        besluitbron_server::platforms::ori::PLATFORM,
    ] {
        assert!(
            attacked.contains(&platform)
                && CONNECTORS
                    .iter()
                    .any(|c| c.platform == platform && !c.samples.is_empty()),
            "{attack:?} reached {platform}"
        );
    }
    let (peak, now) = memory_kib();
    // The documented caps: a body of at most `Platforms.<id>.MaxBodyBytes` (16 MiB) per
    // call, one call out at a time per test; the tests of this file run side by side in
    // one process, each with its fakes, so the bound is on the process. An expanded
    // billion laughs alone would be 3 GB.
    assert!(
        peak < 1024 * 1024,
        "{attack:?}: peak RSS {peak} KiB (now {now} KiB) stays under 1 GiB"
    );
    server.stop().await;
}

async fn attack_connector(
    f: &Fakes,
    server: &Server,
    c: &ConnectorSpec,
    attack: Attack,
    healthy: &BTreeMap<&'static str, Value>,
    mut canaries: usize,
) {
    let fake = f.all.get(c.platform).expect("a fake");
    let name = c.platform.display_name();
    let mut mcp = Mcp::initialize(server.url(&format!("/mcp/{}", c.id))).await;
    for sample in c.samples {
        attack.set(fake, true);
        let before = fake.requests();
        let call = {
            let mcp = Mcp::initialize(mcp.url.clone()).await;
            let (tool, args) = (sample.tool, arguments(sample));
            tokio::spawn(async move { mcp.call_with_id(1_000, tool, args).await })
        };
        canaries += 1;
        canary(server, c.platform, canaries).await;
        let reply = call.await.expect("the attacked call");
        attack.set(fake, false);
        assert!(
            fake.requests() > before,
            "{} under {attack:?}: the platform was asked",
            sample.tool
        );
        let said = outcome(sample.tool, &reply);
        let kept = match &said {
            Err(text) => {
                assert!(
                    text.contains(name),
                    "{} under {attack:?}: the error names {name}: {text}",
                    sample.tool
                );
                assert!(
                    text.len() <= 1_000 && !text.contains("127.0.0.1") && !text.contains(besluitbron_fakes::OFF_HOST),
                    "{} under {attack:?}: a short error without addresses: {text}",
                    sample.tool
                );
                false
            }
            Ok(structured) => {
                assert!(
                    attack.may_be_read(),
                    "{} under {attack:?}: an answer from a hostile body: {structured}",
                    sample.tool
                );
                assert_eq!(
                    without_lengths(structured),
                    without_lengths(&healthy[sample.tool]),
                    "{} under {attack:?}: what a healthy platform says",
                    sample.tool
                );
                true
            }
        };
        let text = reply.text.as_str();
        assert!(
            !text.contains("lollollol") && !text.contains("root:x:0"),
            "{} under {attack:?}: nothing expanded or read from the machine: {}",
            sample.tool,
            &text[..text.len().min(500)]
        );
        // Nothing failed was kept: once the platform is itself again, it is asked.
        let before = fake.requests();
        let again = mcp.call(sample.tool, arguments(sample)).await;
        let again = outcome(sample.tool, &again)
            .unwrap_or_else(|e| panic!("{} after {attack:?}: answered again: {e}", sample.tool));
        assert_eq!(
            without_lengths(&again),
            without_lengths(&healthy[sample.tool]),
            "{} after {attack:?}",
            sample.tool
        );
        if !kept {
            assert!(
                fake.requests() > before,
                "{} after {attack:?}: nothing of the failure was kept",
                sample.tool
            );
        }
    }
    assert_eq!(
        fake.off_host_arrivals(),
        0,
        "{name} under {attack:?}: no redirect to another host was followed"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_billion_laughs_is_never_expanded() {
    attack_every_tool(Attack::Hostile(HostileBody::BillionLaughs)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_an_external_entity_is_never_read() {
    attack_every_tool(Attack::Hostile(HostileBody::ExternalEntity)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_ten_thousand_deep_nesting_is_an_error() {
    attack_every_tool(Attack::Hostile(HostileBody::DeepNesting)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_a_wrong_content_type_is_read_as_what_it_is() {
    attack_every_tool(Attack::Hostile(HostileBody::WrongContentType)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_a_truncated_gzip_is_an_error() {
    attack_every_tool(Attack::Hostile(HostileBody::TruncatedGzip)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_a_redirect_to_another_host_is_not_followed() {
    attack_every_tool(Attack::Hostile(HostileBody::RedirectOffHost)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_a_redirect_loop_ends() {
    attack_every_tool(Attack::Hostile(HostileBody::RedirectLoop)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_a_dripping_body_runs_out_of_time() {
    attack_every_tool(Attack::Hostile(HostileBody::Drip)).await;
}

/// Regression: an SRU answer cut off after a complete record was read by ob_search,
/// bwb_search and cvdr_search as a shorter page ("1–1 of 32" for a limit of 17) and kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_41_an_answer_cut_after_a_record_is_never_a_shorter_page() {
    attack_every_tool(Attack::Hostile(HostileBody::CutAfterRecord)).await;
}

/// Regression: OpenBesluitvorming answering 200 with Elasticsearch's error object became
/// "found nothing", total 0, and was kept.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_41_an_error_object_under_a_200_is_never_an_empty_result() {
    attack_every_tool(Attack::Hostile(HostileBody::ErrorObject)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_31_a_200_mb_body_is_cut_off_at_the_cap() {
    attack_every_tool(Attack::Huge).await;
}

#[test]
fn every_hostile_answer_has_its_test() {
    // A hostile answer added to the fakes gets a test above, or this fails.
    let source = include_str!("hostile_platforms.rs");
    for h in HostileBody::ALL {
        assert!(
            source.contains(&format!("HostileBody::{h:?}))")),
            "{h:?} has a test of its own"
        );
    }
}
