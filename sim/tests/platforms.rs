//! A run's platforms come from its input, never from the list of every platform the core
//! has an id for: a scenario's are those it lists, in its order (a platform without a
//! connector, Open Archivaris, lives here only); a trace's are those its calls name, in
//! the order of their ids. What a platform is like (its limit, its `RateLimit-*` headers)
//! is the input's to say, with the real platform's ways as the default.

use besluitbron_core::PlatformId;
use besluitbron_sim::scenario::{PlatformSpec, Scenario, parse_trace};
use besluitbron_sim::{PolicyKind, RunOptions, RunOutcome, Workload, run};

fn run_fair(name: &str, workload: &Workload) -> Result<RunOutcome, Box<besluitbron_sim::Failure>> {
    let opts = RunOptions {
        policy: PolicyKind::Fair,
        seed: 1,
        keep_trace: false,
        progress: false,
    };
    run(name, workload, opts)
}

fn parse_err(toml: &str) -> String {
    Scenario::parse(toml, "inline").expect_err("refused").to_string()
}

/// Open Archivaris listed first, OpenBesluitvorming second: the report keeps that order,
/// and a session that names no platform calls the first listed.
#[test]
fn a_scenarios_platforms_are_those_it_lists_in_its_order() {
    let scenario = Scenario::parse(
        r#"
description = "two platforms, oa listed first"
[[platform]]
id = "oa"
latency = { kind = "fixed", ms = 100 }
[[platform]]
id = "obv"
latency = { kind = "fixed", ms = 100 }
[[session]]
name = "reader"
burst = [{ at_ms = 0, calls = 2 }, { at_ms = 0, calls = 1, platform = "obv" }]
"#,
        "inline",
    )
    .unwrap();
    let workload = scenario.workload(1);
    let listed: Vec<PlatformId> = workload.platforms.iter().map(|p| p.id).collect();
    assert_eq!(
        listed,
        [
            besluitbron_sim::ids::platform("oa").unwrap(),
            besluitbron_sim::ids::platform("obv").unwrap()
        ]
    );
    let run = run_fair("listed", &workload).unwrap_or_else(|f| panic!("{f}"));
    let reported: Vec<(PlatformId, u64)> = run.platforms.iter().map(|p| (p.id, p.calls)).collect();
    assert_eq!(
        reported,
        [
            (besluitbron_sim::ids::platform("oa").unwrap(), 2),
            (besluitbron_sim::ids::platform("obv").unwrap(), 1)
        ]
    );
}

/// A session or group that calls a platform the scenario does not list is refused when
/// the scenario is read, naming who calls what; so is a session with nothing to call.
#[test]
fn a_call_to_a_platform_the_scenario_does_not_list_is_refused() {
    let session = parse_err(
        r#"
description = "a session calls ob, only obv is listed"
[[platform]]
id = "obv"
[[session]]
name = "a"
burst = [{ at_ms = 0, calls = 1, platform = "ob" }]
"#,
    );
    assert!(
        session.contains("session `a` calls `ob`, which the scenario does not list"),
        "{session}"
    );
    let group = parse_err(
        r#"
description = "a group weighs oa, only obv is listed"
[[platform]]
id = "obv"
[[group]]
prefix = "agent"
sessions = 1
start_ms = [0, 0]
calls = [1, 1]
think_ms = [0, 0]
platforms = { obv = 1, oa = 1 }
costs = [1]
"#,
    );
    assert!(group.contains("group `agent` calls `oa`"), "{group}");
    let nothing = parse_err(
        r#"
description = "no platform listed"
[[session]]
name = "a"
burst = [{ at_ms = 0, calls = 1 }]
"#,
    );
    assert!(
        nothing.contains("session `a`: the scenario lists no platform"),
        "{nothing}"
    );
}

/// A trace lists nothing: its platforms are those its calls name, in the order of their
/// ids whichever came first; a workload changed afterwards to leave one out does not run.
#[test]
fn a_traces_platforms_are_those_its_calls_name() {
    let trace = concat!(
        r#"{"at_ms": 0, "session": "a", "platform": "ob", "cost": 1}"#,
        "\n",
        r#"{"at_ms": 10, "session": "a", "platform": "obv", "cost": 1}"#,
        "\n",
    );
    let mut workload = parse_trace(trace, "two").unwrap();
    let listed: Vec<PlatformId> = workload.platforms.iter().map(|p| p.id).collect();
    assert_eq!(
        listed,
        [
            besluitbron_sim::ids::platform("obv").unwrap(),
            besluitbron_sim::ids::platform("ob").unwrap()
        ]
    );
    workload
        .platforms
        .retain(|p| p.id == besluitbron_sim::ids::platform("obv").unwrap());
    let failure = run_fair("one left out", &workload).expect_err("an unlisted platform");
    assert!(failure.what.contains("a call names ob"), "{failure}");
}

/// `RateLimit-Remaining` and `RateLimit-Reset`: OpenBesluitvorming's answers carry them
/// by default (as the real platform's do), no other platform's; a scenario says otherwise
/// for any platform.
#[test]
fn whether_a_platform_states_its_budget_is_the_scenarios_to_say() {
    let default = |id| PlatformSpec::default_for(id).states_its_budget();
    assert!(default(besluitbron_sim::ids::platform("obv").unwrap()));
    assert!(
        !default(besluitbron_sim::ids::platform("ob").unwrap())
            && !default(besluitbron_sim::ids::platform("oa").unwrap())
    );
    let scenario = Scenario::parse(
        r#"
description = "headers the other way round"
[[platform]]
id = "obv"
rate_limit_headers = false
[[platform]]
id = "oa"
rate_limit_headers = true
"#,
        "inline",
    )
    .unwrap();
    let said: Vec<bool> = scenario.platforms.iter().map(PlatformSpec::states_its_budget).collect();
    assert_eq!(said, [false, true]);
}
