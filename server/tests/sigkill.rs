//! A buffer writer killed with SIGKILL mid-stream leaves a file that opens cleanly and
//! holds only complete, correct entries, including every entry whose commit it reported.
//!
//! The child is the real binary (`besluitbron cache write-stress`, a hidden command) so
//! the kill lands in a real process at an arbitrary point of a redb commit.

use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt;
use std::process::{Command, Stdio};
use std::time::Duration;

use besluitbron_core::cache::{CachePolicy, CacheStore, CacheVersion, Lookup};
use besluitbron_core::{PlatformId, WallTime};
use besluitbron_server::store::stress::{stress_key, stress_payload};
use besluitbron_server::store::{RedbStore, store_path};

const PLATFORM: PlatformId = besluitbron_server::platforms::obv::PLATFORM;

fn wall_now() -> WallTime {
    let since = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    WallTime(since.as_millis() as u64)
}

/// Starts a writer, waits until it has reported `commits` commits, kills it after
/// `delay_us` more microseconds; the highest entry number it reported.
fn write_then_kill(data_dir: &std::path::Path, commits: u64, delay_us: u64) -> u64 {
    let mut child = Command::new(env!("CARGO_BIN_EXE_besluitbron"))
        .args(["cache", "write-stress", "--platform", PLATFORM.as_str(), "--data-dir"])
        .arg(data_dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn the besluitbron binary");
    let stdout = child.stdout.take().unwrap();
    let mut lines = BufReader::new(stdout).lines();
    let mut last = None;
    for _ in 0..commits {
        let line = lines.next().expect("the writer reports commits").unwrap();
        last = Some(line.trim().parse::<u64>().unwrap());
    }
    std::thread::sleep(Duration::from_micros(delay_us));
    child.kill().unwrap(); // SIGKILL on Unix: no destructor, no flush, no clean close.
    let status = child.wait().unwrap();
    assert_eq!(
        status.signal(),
        Some(9),
        "the writer died of SIGKILL, not on its own: {status:?}"
    );
    last.unwrap()
}

#[test]
fn sigkill_mid_stream_leaves_only_complete_correct_entries() {
    let dir = tempfile::tempdir().unwrap();
    let policy = CachePolicy::default().for_platform(PLATFORM);
    // Kill at different points: right after a report, and some way into the next commit.
    for (round, (commits, delay_us)) in [(25, 0), (40, 700), (30, 2_500), (35, 150)].into_iter().enumerate() {
        let last_committed = write_then_kill(dir.path(), commits, delay_us);
        assert_eq!(last_committed, commits - 1);

        let path = store_path(dir.path(), PLATFORM);
        let mut store = RedbStore::open(&path, PLATFORM, policy, CacheVersion::current())
            .unwrap_or_else(|e| panic!("round {round}: the buffer does not reopen after SIGKILL: {e}"));
        let now = wall_now();
        let mut readable = 0;
        for n in 0..last_committed + 20 {
            let lookup = store
                .lookup(&stress_key(PLATFORM, n), now)
                .unwrap_or_else(|e| panic!("round {round}: entry {n} is unreadable after SIGKILL: {e}"));
            match lookup {
                Lookup::Hit(value) => {
                    assert_eq!(
                        value.payload(),
                        stress_payload(n).as_slice(),
                        "round {round}: entry {n} differs"
                    );
                    readable += 1;
                }
                Lookup::Miss => assert!(n > last_committed, "round {round}: committed entry {n} was lost"),
                other => panic!("round {round}: entry {n}: {other:?}"),
            }
        }
        assert!(readable > last_committed, "round {round}: {readable} readable");
        let stats = store.stats().unwrap();
        assert_eq!(stats.entries(), readable, "round {round}: index and entries agree");
        assert!(
            store.check_integrity().unwrap(),
            "round {round}: redb integrity check failed"
        );
    }
}
