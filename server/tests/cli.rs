//! `besluitbron cache stats|clear` on real buffer files, and `besluitbron server-json`
//! against the MCP registry's schema.

use std::path::Path;
use std::process::Command;

use besluitbron_core::cache::{CacheKey, CachePolicy, CacheStore, CacheVersion, DataClass, Lookup, Success};
use besluitbron_core::{PlatformId, WallTime};
use besluitbron_server::store::{RedbStore, store_path};

fn now() -> WallTime {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    WallTime(since.as_millis() as u64)
}

fn open(dir: &Path, p: PlatformId) -> RedbStore {
    RedbStore::open(
        store_path(dir, p),
        p,
        CachePolicy::default().for_platform(p),
        CacheVersion::current(),
    )
    .unwrap()
}

fn key(p: PlatformId, class: DataClass) -> CacheKey {
    CacheKey::new(p, class, "op").param("q", "x")
}

fn besluitbron(args: &[&str], dir: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_besluitbron"))
        .args(args)
        .arg("--data-dir")
        .arg(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn cache_clear_empties_one_platform_and_stats_shows_it() {
    let dir = tempfile::tempdir().unwrap();
    for p in [
        besluitbron_server::platforms::obv::PLATFORM,
        besluitbron_server::platforms::tk::PLATFORM,
    ] {
        let store = open(dir.path(), p);
        store
            .put(&key(p, DataClass::Search), &Success::new(vec![1; 100]), now())
            .unwrap();
        store
            .put(&key(p, DataClass::Document), &Success::new(vec![2; 5000]), now())
            .unwrap();
    }

    let stats = besluitbron(&["cache", "stats"], dir.path());
    let line = |platform: &str, class: &str| {
        stats
            .lines()
            .find(|l| l.split_whitespace().take(2).eq([platform, class]))
            .unwrap_or_else(|| panic!("no {platform} {class} line in:\n{stats}"))
            .split_whitespace()
            .nth(2)
            .unwrap()
            .to_owned()
    };
    assert_eq!(line("obv", "search"), "1");
    assert_eq!(line("obv", "total"), "2");
    assert_eq!(line("tk", "document"), "1");
    assert!(stats.contains("ori          (no buffer file)"), "{stats}");
    assert!(
        !store_path(dir.path(), besluitbron_server::platforms::ori::PLATFORM).exists(),
        "stats creates no files"
    );

    let cleared = besluitbron(&["cache", "clear", "--platform", "obv"], dir.path());
    assert!(cleared.starts_with("obv: cleared 2 entries"), "{cleared}");

    let obv = open(dir.path(), besluitbron_server::platforms::obv::PLATFORM);
    assert_eq!(obv.stats().unwrap().entries(), 0);
    assert_eq!(
        obv.lookup(
            &key(besluitbron_server::platforms::obv::PLATFORM, DataClass::Document),
            now()
        )
        .unwrap(),
        Lookup::Miss
    );
    let tk = open(dir.path(), besluitbron_server::platforms::tk::PLATFORM);
    assert_eq!(tk.stats().unwrap().entries(), 2);
    assert!(matches!(
        tk.lookup(
            &key(besluitbron_server::platforms::tk::PLATFORM, DataClass::Document),
            now()
        )
        .unwrap(),
        Lookup::Hit(_)
    ));

    drop((obv, tk));
    let only_tk = besluitbron(&["cache", "stats", "--platform", "tk"], dir.path());
    assert!(only_tk.lines().skip(1).all(|l| l.starts_with("tk ")), "{only_tk}");
}

fn http_get(addr: &str, path: &str) -> Option<String> {
    use std::io::{Read, Write};
    let mut stream = std::net::TcpStream::connect(addr).ok()?;
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n"
    )
    .ok()?;
    let mut body = String::new();
    stream.read_to_string(&mut body).ok()?;
    Some(body)
}

#[test]
fn serve_exports_buffer_metrics_and_holds_the_files_against_a_concurrent_clear() {
    let dir = tempfile::tempdir().unwrap();
    {
        let store = open(dir.path(), besluitbron_server::platforms::cvdr::PLATFORM);
        store
            .put(
                &key(besluitbron_server::platforms::cvdr::PLATFORM, DataClass::Reference),
                &Success::new(vec![3; 700]),
                now(),
            )
            .unwrap();
    }
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let mut server = Command::new(env!("CARGO_BIN_EXE_besluitbron"))
        .args(["serve", "--listen", &addr, "--data-dir"])
        .arg(dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let metrics = (0..100)
        .find_map(|_| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            http_get(&addr, "/metrics")
        })
        .expect("the server answers /metrics");
    let clear = Command::new(env!("CARGO_BIN_EXE_besluitbron"))
        .args(["cache", "clear", "--platform", "cvdr", "--data-dir"])
        .arg(dir.path())
        .output()
        .unwrap();
    server.kill().unwrap();
    server.wait().unwrap();

    assert!(
        metrics.contains("besluitbron_cache_entries{platform=\"cvdr\",class=\"reference\"} 1\n"),
        "{metrics}"
    );
    assert!(
        metrics.contains("besluitbron_cache_budget_bytes{platform=\"rechtspraak\"} 268435456\n"),
        "{metrics}"
    );
    assert!(
        !clear.status.success(),
        "a clear while the server holds the file must fail, not corrupt it"
    );
    assert!(String::from_utf8_lossy(&clear.stderr).contains("stop it first"));
    // The entry survived the refused clear and the SIGKILLed server.
    let store = open(dir.path(), besluitbron_server::platforms::cvdr::PLATFORM);
    assert!(matches!(
        store
            .lookup(
                &key(besluitbron_server::platforms::cvdr::PLATFORM, DataClass::Reference),
                now()
            )
            .unwrap(),
        Lookup::Hit(_)
    ));
}

/// `besluitbron server-json` with `args`: its exit status, standard output and error.
fn server_json(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_besluitbron"))
        .arg("server-json")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.success(),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `server-json` writes what the MCP registry takes: the output validates against the
/// registry's rules (tests/schemas/mcp-registry-server.schema.json, 2025-12-11, with
/// their source in the README beside it), names this version and one remote over
/// Streamable HTTP at the operator's address; a name or an address the registry or the
/// hosted assistants refuse is refused here.
#[test]
fn server_json_is_what_the_registry_takes_and_refuses_what_it_would_not() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/schemas/mcp-registry-server.schema.json");
    let schema: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let validator = jsonschema::draft7::new(&schema).expect("the registry's rules compile");
    // Test values: a GitHub login namespace and a reserved example domain.
    let (ok, out, err) = server_json(&[
        "--name",
        "io.github.example/besluitbron",
        "--url",
        "https://mcp.example.org/mcp",
    ]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let errors: Vec<String> = validator.iter_errors(&json).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:?}\n{out}");
    assert_eq!(
        json["$schema"],
        "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
    );
    assert_eq!(json["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        json["remotes"],
        serde_json::json!([{"type": "streamable-http", "url": "https://mcp.example.org/mcp"}])
    );
    // The schema can fail: a description over its 100 characters is refused.
    let mut long = json.clone();
    long["description"] = serde_json::json!("x".repeat(101));
    assert!(!validator.is_valid(&long));
    for (name, url, says) in [
        ("besluitbron", "https://mcp.example.org/mcp", "--name"),
        (
            "io.github.example/besluit bron",
            "https://mcp.example.org/mcp",
            "--name",
        ),
        ("io.github.example/besluitbron", "http://mcp.example.org/mcp", "--url"),
        ("io.github.example/besluitbron", "mcp.example.org/mcp", "--url"),
    ] {
        let (ok, _, err) = server_json(&["--name", name, "--url", url]);
        assert!(!ok && err.contains(says), "{name} {url}: {err}");
    }
}
