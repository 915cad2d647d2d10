//! The command line end to end: replay honours the JSON Lines formats exactly and puts a
//! trace behind N replicas (`--replicas`), a broken
//! invariant exits non-zero with the seed and the replay command, `list` names the
//! scenarios, `cluster` runs a cluster scenario, `--trace` prints one line per event, and `fakes` names every fake in its help, prints its base URLs,
//! answers HTTP on them and applies `--fault` to the platform it names.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use besluitbron_sim::report::AdmissionLine;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_besluitbron-sim"))
}

fn temp(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("besluitbron-sim-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(name)
}

/// `replay --replicas 2` prints, after the report, each limited platform's calls behind
/// one replica and behind two; `--replicas 0` is refused.
#[test]
fn replay_with_replicas_prints_one_replica_against_n() {
    let trace = temp("replicas.jsonl");
    let lines: Vec<String> = (0..12)
        .map(|i| {
            format!(
                r#"{{"at_ms": {}, "session": "s{}", "platform": "obv", "cost": 1, "key": "k{}"}}"#,
                i * 10,
                i % 4,
                i % 6
            )
        })
        .collect();
    std::fs::write(&trace, lines.join("\n")).unwrap();
    let out = bin()
        .args(["replay", trace.to_str().unwrap(), "--replicas", "2"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let (_, what_if) = text.split_once("what if 2 replicas").expect(&text);
    assert!(what_if.contains("obv (60/60s): 12 calls"), "{what_if}");
    let rows: Vec<Vec<&str>> = what_if
        .lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>())
        .filter(|w| w.len() == 13 && w[0].parse::<u32>().is_ok())
        .collect();
    assert_eq!(rows.len(), 2, "{what_if}");
    assert_eq!((rows[0][0], rows[1][0]), ("1", "2"), "replicas: {what_if}");
    assert_eq!((rows[0][1], rows[1][1]), ("12", "12"), "answered: {what_if}");
    assert_eq!(rows[0][8], "0", "one replica forwards nothing: {what_if}");
    assert_eq!(rows[0][9], "6", "six questions go upstream: {what_if}");
    assert_eq!(
        rows[0][11], rows[1][11],
        "the first owner's start wait is the same: {what_if}"
    );

    let zero = bin()
        .args(["replay", trace.to_str().unwrap(), "--replicas", "0"])
        .output()
        .unwrap();
    assert!(!zero.status.success());
}

#[test]
fn replay_round_trip_writes_one_admission_line_per_trace_line() {
    let trace = temp("trace.jsonl");
    let lines = [
        r#"{"at_ms": 0, "session": "a", "platform": "obv", "cost": 1, "op": "search"}"#,
        r#"{"at_ms": 0, "session": "a", "platform": "obv", "cost": 0.125}"#,
        "",
        r#"{"at_ms": 250, "session": "system", "platform": "ob", "cost": "1.3", "op": "laadstatus"}"#,
        r#"{"at_ms": 10, "session": "b", "platform": "tk", "cost": 2}"#,
    ];
    std::fs::write(&trace, lines.join("\n")).unwrap();
    let admissions = temp("admissions.jsonl");
    let out = bin()
        .args([
            "replay",
            trace.to_str().unwrap(),
            "--admissions",
            admissions.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let written = std::fs::read_to_string(&admissions).unwrap();
    let parsed: Vec<AdmissionLine> = written.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let calls: Vec<u64> = parsed.iter().map(|a| a.call).collect();
    assert_eq!(calls, [0, 1, 3, 4], "calls are 0-based line numbers");
    assert_eq!(parsed[1].cost.as_milli(), 125);
    assert_eq!(parsed[2].session, "system");
    assert_eq!(parsed[2].cost.as_milli(), 1300);
    assert_eq!((parsed[3].submitted_ms, parsed[3].admitted_ms), (10, Some(10)));
    // The exact field names and order of the public format.
    assert_eq!(
        written.lines().next().unwrap(),
        r#"{"call":0,"session":"a","platform":"obv","cost":1,"submitted_ms":0,"admitted_ms":0}"#
    );
    assert!(written.lines().nth(1).unwrap().contains(r#""cost":0.125"#));
}

#[test]
fn replay_refuses_unknown_fields_and_names_the_line() {
    let trace = temp("bad.jsonl");
    std::fs::write(
        &trace,
        "{\"at_ms\": 0, \"session\": \"a\", \"platform\": \"obv\", \"cost\": 1}\n{\"at_ms\": 1, \"session\": \"a\", \"platform\": \"obv\", \"cost\": 1, \"extra\": true}\n",
    )
    .unwrap();
    let out = bin().args(["replay", trace.to_str().unwrap()]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("bad.jsonl:2"));
}

/// A platform that enforces a sliding window with the same numbers as the token bucket
/// BesluitBron keeps sees up to 2C in one window: the fair policy's limit invariant
/// breaks, and the run says how to replay it.
#[test]
fn a_broken_invariant_prints_seed_and_replay_command_and_exits_non_zero() {
    let scenario = temp("mismatch.toml");
    std::fs::write(
        &scenario,
        "description = \"local bucket vs sliding-window platform\"\nseed = 42\n\
         [[platform]]\nid = \"obv\"\nmodel = \"sliding-window\"\n\
         [[session]]\nname = \"a\"\nburst = [{ at_ms = 0, calls = 61 }]\n",
    )
    .unwrap();
    let out = bin().args(["run", scenario.to_str().unwrap()]).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("seed: 42"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "replay: besluitbron-sim run {} --policy fair --seed 42 --trace",
            scenario.display()
        )),
        "{stderr}"
    );
    assert!(stderr.contains("over its limit"), "{stderr}");
}

#[test]
fn list_names_every_canonical_scenario() {
    let out = bin().arg("list").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 16);
    assert!(text.lines().any(|l| l.starts_with("obv-starvation ")));
    assert!(text.lines().any(|l| l.starts_with("hosted-assistant-per-user ")));
    assert!(text.lines().any(|l| l.starts_with("laws-and-publications ")));
    assert!(text.lines().any(|l| l.starts_with("coalesced-join ")));
}

#[test]
fn cluster_runs_a_cluster_scenario_and_prints_its_report() {
    let scenario = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scenarios/cluster/three-replicas-obv.toml");
    let out = bin().arg("cluster").arg(&scenario).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.starts_with("cluster scenario three-replicas-obv (seed 18)"),
        "{text}"
    );
    assert!(text.contains("over its limit 0"), "{text}");
    // A scenario the rules cannot keep is refused with a clear error.
    let bad = temp("bad-cluster.toml");
    let broken = std::fs::read_to_string(&scenario)
        .unwrap()
        .replace("ttl_ms = 5_000", "ttl_ms = 1_200");
    std::fs::write(&bad, broken).unwrap();
    let out = bin().arg("cluster").arg(&bad).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("TTL"));
}

#[test]
fn trace_prints_one_line_per_event_in_the_core_format() {
    let out = bin()
        .args(["run", "scenarios/obv-starvation.toml", "--trace", "--json"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert_eq!(
        first,
        "t=0.000s session=busy admit cost=1 tokens=59.000 via=direct waited=0.000s platform=obv"
    );
    assert!(text.contains("t=0.500s session=second queue cost=1 ticket=#166 platform=obv"));
    let json_start = text.find("\n{").unwrap();
    let report: serde_json::Value = serde_json::from_str(&text[json_start..]).unwrap();
    assert_eq!(report["policy"], "fair");
    assert_eq!(report["services"][0]["violations"], 0);
    assert_eq!(report["services"][0]["service"], "obv");
    assert_eq!(report["platforms"][0]["platform"], "obv");
}

#[test]
fn plot_writes_an_svg() {
    let svg = temp("waits.svg");
    let out = bin()
        .args([
            "run",
            "scenarios/obv-starvation.toml",
            "--policy",
            "legacy",
            "--plot",
            svg.to_str().unwrap(),
        ])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&svg).unwrap();
    assert!(text.starts_with("<svg") && text.contains("second"));
}

/// Kills the child on drop, so a failed assertion never leaves a server running.
struct KillOnDrop(Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A raw HTTP/1.1 GET over loopback: the status line and the body (the connection is closed by the server).
fn http_get(host_port: &str, path: &str) -> (String, String) {
    let mut stream = TcpStream::connect(host_port).unwrap();
    stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host_port}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.lines().next().unwrap_or("").to_owned();
    assert!(
        !head.to_ascii_lowercase().contains("transfer-encoding: chunked"),
        "the fakes send bodies with a length: {head}"
    );
    (status, body.to_owned())
}

/// Starts `besluitbron-sim fakes --listen 127.0.0.1:0` with `extra` flags and returns it
/// with the lines it printed, one per fake of the registry.
fn start_fakes(extra: &[&str]) -> (KillOnDrop, Vec<String>) {
    let child = bin()
        .args(["fakes", "--listen", "127.0.0.1:0"])
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut child = KillOnDrop(child);
    let stdout = child.0.stdout.take().unwrap();
    // Read its lines (one per fake, then `ready`) on a thread so a silent child fails the
    // test instead of hanging it; all of them, or the child's next print meets a closed pipe.
    let fakes = besluitbron_fakes::REGISTRY.len() + 1;
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut lines = BufReader::new(stdout).lines();
        for _ in 0..fakes {
            let line = lines.next().map(|l| l.unwrap_or_default());
            if tx.send(line).is_err() {
                return;
            }
        }
    });
    let mut lines = Vec::new();
    for _ in 0..fakes {
        let line = rx
            .recv_timeout(Duration::from_secs(30))
            .expect("fakes printed a line in time");
        lines.push(line.expect("fakes kept stdout open"));
    }
    assert_eq!(lines.pop().as_deref(), Some("ready"), "after the platforms: {lines:?}");
    (child, lines)
}

/// The `host:port` of the fakes' printed obv line (`obv http://HOST:PORT/obv`).
fn fakes_host_port(lines: &[String]) -> String {
    let url = lines[0].strip_prefix("obv http://").expect("the obv line first");
    url.split_once('/').expect("a path").0.to_owned()
}

#[test]
fn fakes_print_one_line_per_platform_and_answer_on_loopback() {
    let (mut child, lines) = start_fakes(&["--latency-ms", "1"]);
    let parsed: Vec<(&str, &str)> = lines.iter().map(|l| l.split_once(' ').unwrap()).collect();
    assert_eq!(parsed[0].0, "obv", "{lines:?}");
    assert_eq!(parsed[1].0, "tk", "{lines:?}");
    let obv = parsed[0].1.strip_prefix("http://").unwrap();
    let (host_port, prefix) = obv.split_once('/').unwrap();
    assert_eq!(prefix, "obv");
    assert!(
        host_port.starts_with("127.0.0.1:") && !host_port.ends_with(":0"),
        "{host_port}"
    );
    assert_eq!(parsed[1].1, format!("http://{host_port}/tk/OData/v4/2.0"));
    assert_eq!(
        parsed[2],
        ("rechtspraak", format!("http://{host_port}/rechtspraak").as_str())
    );
    assert_eq!(
        parsed[3],
        ("opentk", format!("http://{host_port}/opentk/tkconv").as_str())
    );
    assert_eq!(
        parsed[4],
        ("ori", format!("http://{host_port}/ori/v1/elastic").as_str())
    );

    let (status, body) = http_get(host_port, "/obv/api/sources");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");
    let sources: serde_json::Value = serde_json::from_str(&body).unwrap();
    let count = sources["sources"].as_array().map_or(0, Vec::len);
    assert_eq!(count, besluitbron_fakes::obv_corpus().sources().len());
    assert!(count > 0);

    let (status, _) = http_get(host_port, "/tk/OData/v4/2.0/Fractie");
    assert!(status.starts_with("HTTP/1.1 200"), "{status}");

    // SIGTERM is the documented way to stop it: a clean exit, within a bound.
    let pid = child.0.id().to_string();
    assert!(Command::new("kill").args(["-TERM", &pid]).status().unwrap().success());
    let mut exit = None;
    for _ in 0..100 {
        exit = child.0.try_wait().unwrap();
        if exit.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let exit = exit.expect("fakes stopped within 5 s of SIGTERM");
    assert!(exit.success(), "{exit:?}");
}

#[test]
fn fakes_apply_fault_flags_to_the_platform_they_name() {
    let (_child, lines) = start_fakes(&[
        "--fault",
        "obv:rate-limit-storm=true",
        "--fault",
        "tk:fail-every=1",
        "--fault",
        "tk:latency-ms=1",
        "--fault",
        "ori:retired=410",
    ]);
    let host_port = fakes_host_port(&lines);

    let (status, body) = http_get(&host_port, "/obv/api/sources");
    assert!(status.starts_with("HTTP/1.1 429"), "{status}");
    let body: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["retry_after_seconds"], 1, "{body}");

    let (status, _) = http_get(&host_port, "/tk/OData/v4/2.0/Fractie");
    assert!(status.starts_with("HTTP/1.1 500"), "{status}");

    let (status, _) = http_get(&host_port, "/ori/v1/elastic/_aliases");
    assert!(status.starts_with("HTTP/1.1 410"), "ori's own setting: {status}");
}

#[test]
fn fakes_apply_a_later_fault_over_an_earlier_flag_for_its_platform_only() {
    let (_child, lines) = start_fakes(&["--fail-every", "1", "--fault", "obv:fail-every=0"]);
    let host_port = fakes_host_port(&lines);
    let (status, _) = http_get(&host_port, "/obv/api/sources");
    assert!(
        status.starts_with("HTTP/1.1 200"),
        "obv's --fault turned it off: {status}"
    );
    let (status, _) = http_get(&host_port, "/tk/OData/v4/2.0/Fractie");
    assert!(status.starts_with("HTTP/1.1 500"), "tk keeps --fail-every: {status}");
}

/// `fakes --help` names every fake it serves (it once named five of eight).
#[test]
fn fakes_help_names_every_platform_it_serves() {
    let out = bin().args(["fakes", "--help"]).output().expect("runs");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    let first = help.lines().next().unwrap_or_default().to_owned();
    for fake in besluitbron_fakes::REGISTRY {
        let id = fake.platform().as_str();
        assert!(first.contains(id), "`{id}` is not named: {first}");
    }
    // Named once each, in the registry's order, and nothing else.
    let named: Vec<&str> = first
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(list, _)| list.split(", ").collect())
        .unwrap_or_default();
    let registry: Vec<&str> = besluitbron_fakes::REGISTRY
        .iter()
        .map(|f| f.platform().as_str())
        .collect();
    assert_eq!(named, registry, "{first}");
    for (id, names) in besluitbron_fakes::REGISTRY
        .iter()
        .map(|f| (f.platform().as_str(), f.own_names()))
    {
        for name in names {
            assert!(help.contains(&format!("{id}:{name}")), "`{id}:{name}` is not named");
        }
    }
}

#[test]
fn fakes_refuse_a_fault_they_cannot_parse_with_usage_exit_code_2() {
    for (fault, says) in [
        ("obv:fail-every=x", "whole number"),
        ("obv:slow=1", "unknown fault `slow`"),
        ("tk:retired=html", "unknown fault `retired`; one of latency-ms"),
        ("oa:garbage=true", "no fake for `oa`"),
        ("garbage=true", "PLATFORM:NAME=VALUE"),
    ] {
        let out = bin()
            .args(["fakes", "--listen", "127.0.0.1:0", "--fault", fault])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{fault}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{fault}: {stderr}");
        assert!(out.stdout.is_empty(), "{fault}: nothing served");
    }
}

#[test]
fn fakes_refuse_an_address_they_cannot_bind() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let out = bin().args(["fakes", "--listen", &addr]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains(&format!("binding {addr}")));
}

/// Without the corpus of real files, the fakes do not start: they name the files they
/// lack and the variable that points at them, and serve nothing (never a shorter answer).
#[test]
fn fakes_refuse_to_start_without_their_real_files_and_name_them() {
    let empty = temp("empty-corpus");
    std::fs::create_dir_all(&empty).unwrap();
    let out = bin()
        .args(["fakes", "--listen", "127.0.0.1:0"])
        .env("BESLUITBRON_CORPUS", &empty)
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(out.stdout.is_empty(), "nothing served");
    let err = String::from_utf8_lossy(&out.stderr);
    for part in [
        "starting the fakes",
        "lacks",
        ".xml",
        "BESLUITBRON_CORPUS",
        "scripts/corpus",
    ] {
        assert!(err.contains(part), "{part}: {err}");
    }

    // One file changed: refused by name as different.
    let changed = temp("changed-corpus");
    for e in besluitbron_fakes::corpus::index() {
        let to = changed.join(&e.path);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        let mut bytes = besluitbron_fakes::corpus::read(&e.path).unwrap();
        if e.path == "cvdr/112779_1.xml" {
            bytes.push(b'\n');
        }
        std::fs::write(to, bytes).unwrap();
    }
    let out = bin()
        .args(["fakes", "--listen", "127.0.0.1:0"])
        .env("BESLUITBRON_CORPUS", &changed)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("differ from corpus/index.toml (cvdr/112779_1.xml)"),
        "{err}"
    );
}

#[path = "../../tests/docs/commands.rs"]
mod commands;

/// Every `besluitbron-sim` command of an `sh` block in README.md and `docs/` is one the
/// binary takes: its subcommands and options by its own `--help`, and the project's files
/// it names exist (the server's commands are checked in `server/tests/docs.rs`).
#[test]
fn every_simulator_command_in_the_docs_is_one_it_takes() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let exe = std::path::Path::new(env!("CARGO_BIN_EXE_besluitbron-sim"));
    let mut faults = Vec::new();
    let mut checked = 0;
    for command in commands::doc_commands(&root).unwrap_or_else(|e| panic!("{e}")) {
        if let commands::Program::Binary { name, args } = &command.program
            && name == "besluitbron-sim"
        {
            checked += 1;
            let at = |fault: String| format!("{}: {fault}", command.at);
            faults.extend(commands::check_binary(exe, args).err().map(at));
            faults.extend(commands::missing_paths(&root, args).into_iter().map(at));
        }
    }
    assert!(checked >= 4, "the simulator's commands were read ({checked})");
    assert!(faults.is_empty(), "{}", faults.join("\n"));
}
