//! One budget per upstream service, in the simulator as in the server: the
//! Basiswettenbestand (`bwb`) and the local regulations (`cvdr`) both search KOOP's
//! zoekservice, so their searches share one token bucket and one fair queue — one path
//! for their budget group, a lane per service — and across replicas one lease. Under
//! concurrent distinct searches on both, the calls sent to the service never exceed what
//! one bucket allows (its burst plus its refill over any interval); with a service each
//! (as before) the two bursts together are twice that at the start. The server's side of
//! the same property is `server/tests/services.rs`.

use besluitbron_core::Instant;
use besluitbron_sim::cluster::{ClusterScenario, run_cluster};
use besluitbron_sim::engine::AdmissionLine;
use besluitbron_sim::scenario::{RunServices, Scenario};
use besluitbron_sim::{PolicyKind, RunOptions, RunOutcome, run};

/// KOOP's zoekservice's default limit: 30 calls refilled over 30 s.
const BURST: u64 = 30;
const WINDOW_MS: u64 = 30_000;

/// 60 distinct searches at `bwb` and 60 at `cvdr`, all at once, from two sessions;
/// `cvdr_entry` is added to cvdr's `[[platform]]` entry.
fn both_at_once(cvdr_entry: &str) -> String {
    format!(
        r#"
description = "bwb and cvdr searches at once"
[[platform]]
id = "bwb"
latency = {{ kind = "fixed", ms = 100 }}
[[platform]]
id = "cvdr"
latency = {{ kind = "fixed", ms = 100 }}
{cvdr_entry}
[[session]]
name = "laws"
platform = "bwb"
burst = [{{ at_ms = 0, calls = 60 }}]
[[session]]
name = "regulations"
platform = "cvdr"
burst = [{{ at_ms = 0, calls = 60 }}]
"#
    )
}

fn run_fair(toml: &str) -> RunOutcome {
    let scenario = Scenario::parse(toml, "inline").unwrap_or_else(|e| panic!("{e}"));
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: 1,
        keep_trace: false,
        progress: false,
    };
    run("inline", &scenario.workload(1), opts).unwrap_or_else(|f| panic!("{f}"))
}

/// Where admissions `at` (sorted) exceed one bucket of `BURST` refilled over `WINDOW_MS`:
/// more calls between two of them than its burst plus its refill over the interval, in
/// exact integer arithmetic.
fn over_one_bucket(at: &[Instant]) -> Option<String> {
    for i in 0..at.len() {
        for j in i..at.len() {
            let span_ms = at[j].as_millis() - at[i].as_millis();
            let sent = (j - i + 1) as u64;
            if sent * WINDOW_MS > BURST * WINDOW_MS + BURST * span_ms {
                return Some(format!("{sent} calls within {span_ms} ms, one bucket allows fewer"));
            }
        }
    }
    None
}

fn instants(admissions: &[AdmissionLine]) -> Vec<Instant> {
    let mut at: Vec<Instant> = admissions.iter().map(|a| Instant::from_millis(a.at_ms)).collect();
    at.sort();
    at
}

#[test]
fn bwb_and_cvdr_searches_never_exceed_one_zoekservice_bucket() {
    let shared = run_fair(&both_at_once(""));
    assert_eq!(shared.admissions.len(), 120, "every search went");
    assert!(
        shared
            .admissions
            .iter()
            .all(|a| a.service.as_str() == "koop-zoekservice"),
        "both platforms' searches at the one service"
    );
    assert_eq!(over_one_bucket(&instants(&shared.admissions)), None);
    assert_eq!(shared.services.len(), 1);
    assert_eq!(shared.services[0].counters.over_limit, 0, "the service refused nothing");
    assert_eq!(shared.services[0].calls, 120);
    // One fair queue for both: the laws' calls came first and found room (the burst);
    // then the regulations, which have used nothing, take most of what the refill frees
    // (a session that used C units weighs half).
    let mut order: Vec<&AdmissionLine> = shared.admissions.iter().collect();
    order.sort_by_key(|a| a.at_ms);
    let of = |range: std::ops::Range<usize>, platform: &str| {
        order[range].iter().filter(|a| a.platform.as_str() == platform).count()
    };
    assert_eq!(of(0..30, "bwb"), 30, "room goes at once, to the first to ask");
    let cvdr = of(30..60, "cvdr");
    assert!((18..=22).contains(&cvdr), "cvdr took {cvdr} of the next 30");
    // One path for the group: both platforms' counters are one path's.
    assert_eq!(shared.platforms[0].path, shared.platforms[1].path);

    // With a service of its own for cvdr (a budget per connector, as before), the two
    // bursts together are twice one bucket at once: the check above fails.
    let apart = run_fair(&both_at_once("services = [\"cvdr-own\"]\ncapacity = 30\nwindow_s = 30"));
    let services: Vec<&str> = apart.services.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(services, ["koop-zoekservice", "cvdr-own"]);
    let at_once = apart.admissions.iter().filter(|a| a.at_ms == 0).count();
    assert_eq!(at_once, 60, "two buckets, two bursts");
    assert!(over_one_bucket(&instants(&apart.admissions)).is_some());
}

#[test]
fn a_text_call_goes_to_its_platforms_second_service() {
    let toml = r#"
description = "a law's file"
[[platform]]
id = "bwb"
[[session]]
name = "reader"
platform = "bwb"
op = "text"
burst = [{ at_ms = 0, calls = 3 }]
"#;
    let run = run_fair(toml);
    let services: Vec<&str> = run.admissions.iter().map(|a| a.service.as_str()).collect();
    assert_eq!(services, ["koop-repository"; 3], "the regulations' files");
    assert_eq!(run.services.len(), 1, "only the service that got calls");
    assert_eq!(run.platforms[0].services.len(), 2);
}

#[test]
fn a_shared_service_is_set_once_under_its_own_entry() {
    // One platform's own fields may not set a service another platform of the run calls.
    let err = Scenario::parse(&both_at_once("capacity = 10"), "inline").expect_err("cvdr alone sets it");
    let text = err.to_string();
    assert!(
        text.contains("`cvdr` sets the limits of service `koop-zoekservice`, which `bwb` calls too")
            && text.contains("[[service]] id = \"koop-zoekservice\""),
        "{text}"
    );
    // Under [[service]] it holds for both.
    let toml = both_at_once("") + "\n[[service]]\nid = \"koop-zoekservice\"\ncapacity = 10\nwindow_s = 30\n";
    let scenario = Scenario::parse(&toml, "inline").unwrap_or_else(|e| panic!("{e}"));
    let services = RunServices::of(&scenario.workload(1)).expect("valid");
    let zoek = &services.services[0];
    assert_eq!(zoek.id.as_str(), "koop-zoekservice");
    assert_eq!(zoek.local.map(|l| l.capacity), Some(besluitbron_core::Units::whole(10)));
    let names: Vec<&str> = zoek.platforms.iter().map(|p| p.as_str()).collect();
    assert_eq!(names, ["bwb", "cvdr"]);
    let run = run_fair(&toml);
    assert_eq!(run.admissions.iter().filter(|a| a.at_ms == 0).count(), 10);
    // A service nobody of the run calls is refused by name.
    let stray = both_at_once("") + "\n[[service]]\nid = \"koop-sru\"\n";
    let err = Scenario::parse(&stray, "inline")
        .expect_err("nobody calls it")
        .to_string();
    assert!(
        err.contains("`koop-sru`") && err.contains("no platform of the run calls it"),
        "{err}"
    );
}

#[test]
fn three_replicas_serve_bwb_and_cvdr_under_one_lease_within_one_bucket() {
    let text = r#"
description = "3 replicas, bwb and cvdr sharing KOOP's zoekservice; the owner killed"
seed = 7
replicas = 3
drift_ppm = [900, -900, 300]
offset_ms = [0, 41_000, 7_300]
ttl_ms = 5_000
margin_ms = 1_000
balancer = "hash"
forward_ms = 3
engine_ms = 1
platform = "bwb"
shared_with = ["cvdr"]
capacity = 30
window_s = 30
latency = { kind = "uniform", min_ms = 100, max_ms = 400 }
sessions = 40
calls_per_session = 6
think_ms = 1_000
ramp_s = 5.0
key_pool = 100000
give_up_s = 600

[[faults]]
kind = "crash-owner"
at_s = 20.0
restart_after_s = 10.0
"#;
    let scenario = ClusterScenario::parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(scenario.service().map(|s| s.as_str()), Ok("koop-zoekservice"));
    let outcome = run_cluster("zoekservice", &scenario).unwrap_or_else(|e| panic!("{e}"));
    // The service's own bucket (true time) never refused a call, whichever platform's,
    // and at most one replica admitted at any instant: one owner for the group.
    assert_eq!(outcome.over_limit, 0);
    assert!(outcome.max_admitting <= 1);
    // Within one window: the burst and one window's refill, never two services' worth.
    assert!(outcome.max_units_in_window <= besluitbron_core::Units::whole(2 * BURST));
    assert!(
        outcome.owners.len() >= 2,
        "the crash handed the lease over: {:#?}",
        outcome.owners
    );
    let platforms: std::collections::BTreeSet<&str> =
        outcome.admissions.iter().map(|a| a.line.platform.as_str()).collect();
    assert_eq!(platforms.into_iter().collect::<Vec<_>>(), ["bwb", "cvdr"]);
    assert!(
        outcome
            .admissions
            .iter()
            .all(|a| a.line.service.as_str() == "koop-zoekservice")
    );
    assert_eq!(outcome.calls, 40 * 6);
    // Platforms that do not call one service are no budget group.
    let apart = text.replace("shared_with = [\"cvdr\"]", "shared_with = [\"obv\"]");
    let err = ClusterScenario::parse(&apart).expect_err("obv does not search the zoekservice");
    assert!(err.contains("`obv` does not call `koop-zoekservice`"), "{err}");
}
