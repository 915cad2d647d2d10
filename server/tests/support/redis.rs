//! A `redis-server` of the test's own (Debian's package, installed by
//! `scripts/redis-deps`): a unix socket in a temporary directory, persistence off, killed
//! when dropped. Faults: [`RedisServer::kill`] (SIGKILL), [`RedisServer::restart`] (same
//! socket, empty: every key lost), [`RedisServer::pause`] (`CLIENT PAUSE`).

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// One redis-server for one test.
pub struct RedisServer {
    dir: PathBuf,
    socket: PathBuf,
    child: Option<Child>,
}

impl RedisServer {
    /// Starts a server and waits until it answers.
    pub fn start(name: &str) -> RedisServer {
        let dir = super::temp_dir(&format!("redis-{name}"));
        let socket = dir.join("redis.sock");
        let mut server = RedisServer {
            dir,
            socket,
            child: None,
        };
        server.spawn();
        server
    }

    fn spawn(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
        let child = Command::new("redis-server")
            .args(["--port", "0", "--unixsocket"])
            .arg(&self.socket)
            .args(["--unixsocketperm", "700", "--save", "", "--appendonly", "no", "--dir"])
            .arg(&self.dir)
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("redis-server runs (scripts/redis-deps installs it)");
        self.child = Some(child);
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        loop {
            if self.ping() {
                return;
            }
            assert!(std::time::Instant::now() < deadline, "redis-server did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The URL BesluitBron is configured with.
    pub fn url(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    fn client(&self) -> redis::Client {
        redis::Client::open(self.url()).expect("a valid URL")
    }

    /// Whether the server answers now.
    pub fn ping(&self) -> bool {
        let Ok(mut c) = self.client().get_connection_with_timeout(Duration::from_millis(200)) else {
            return false;
        };
        redis::cmd("PING").query::<String>(&mut c).is_ok()
    }

    /// Runs one command and returns its answer.
    pub fn command<T: redis::FromRedisValue>(&self, args: &[&str]) -> T {
        let mut c = self.client().get_connection().expect("redis answers");
        let mut cmd = redis::cmd(args[0]);
        for a in &args[1..] {
            cmd.arg(*a);
        }
        cmd.query(&mut c).expect("the command succeeds")
    }

    /// Kills the server (SIGKILL): every key is lost, clients see a closed socket.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let _ = std::fs::remove_file(&self.socket);
    }

    /// Starts it again on the same socket, empty.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Pauses every client's commands for `d` (`CLIENT PAUSE ms ALL`).
    pub fn pause(&self, d: Duration) {
        let ms = d.as_millis().to_string();
        let _: String = self.command(&["CLIENT", "PAUSE", &ms, "ALL"]);
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
