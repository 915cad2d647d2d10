//! The replay table shared by the replicas (R-D2): a retry of a JSON-RPC id within a
//! session, or of an `Idempotency-Key`, that lands on another replica gets the first
//! result, or waits (bounded) for the first attempt still running elsewhere.
//!
//! Each key (`besluitbron:replay:<scope>:<key>`) is a hash: `state` (`run` or `done`),
//! the request's fingerprint `fp`, the first attempt's `token`, and when done the result
//! serialized (`body`). A running mark expires after the request time-out (a replica
//! that dies mid-call does not hold the key longer); a done one after the replay window.
//! A failed or cancelled first attempt removes its mark (its own, by token), so the retry
//! runs. Results larger than [`MAX_SHARED_RESULT`] stay in the local table only: a retry
//! on the same replica is answered, one elsewhere runs again.
//!
//! The local table (`mcp::replay`) stays in front: a retry on the same replica never asks
//! the engine. Engine unreachable: the call runs with the local table only (counted in
//! `besluitbron_shared_state_fallbacks_total{what="replays"}`).

use std::time::Duration;

use besluitbron_core::dedup::ReplayScope;

use super::{Engine, EngineError};

/// The largest serialized result kept in the shared table.
pub const MAX_SHARED_RESULT: usize = 1 << 20;

/// How often a retry looks again for a first attempt running on another replica.
const POLL: Duration = Duration::from_millis(50);

const BEGIN: &str = r#"
local v = redis.call('HMGET', KEYS[1], 'state', 'fp', 'body')
if not v[1] then
  redis.call('HSET', KEYS[1], 'state', 'run', 'fp', ARGV[1], 'token', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'fresh', ''}
end
if v[2] ~= ARGV[1] then return {'conflict', ''} end
if v[1] == 'run' then return {'running', ''} end
return {'done', v[3]}
"#;

const COMPLETE: &str = r#"
if redis.call('HGET', KEYS[1], 'token') ~= ARGV[1] then return 0 end
if ARGV[2] == 'done' then
  redis.call('HSET', KEYS[1], 'state', 'done', 'body', ARGV[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
else
  redis.call('DEL', KEYS[1])
end
return 1
"#;

/// What the shared table says of a request.
#[derive(Debug)]
pub enum SharedStart {
    /// No attempt known: this one runs (and completes the entry with `token`).
    Fresh(String),
    /// The first attempt's result, serialized.
    Replay(Vec<u8>),
    /// The key was used for another request.
    Conflict,
}

/// The shared replay table.
#[derive(Clone)]
pub struct SharedReplays {
    engine: Engine,
    window: Duration,
    running_for: Duration,
    begin: redis::Script,
    complete: redis::Script,
}

fn key_of(scope: &ReplayScope, key: &str) -> String {
    match scope {
        ReplayScope::Session(s) => format!("besluitbron:replay:s:{s}:{key}"),
        ReplayScope::Client(a) => format!("besluitbron:replay:c:{a}:{key}"),
    }
}

fn ms(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl SharedReplays {
    /// A table on `engine` keeping results for `window`; a first attempt holds its key
    /// for at most `running_for` (the request time-out and a margin).
    pub fn new(engine: Engine, window: Duration, running_for: Duration) -> SharedReplays {
        SharedReplays {
            engine,
            window,
            running_for,
            begin: redis::Script::new(BEGIN),
            complete: redis::Script::new(COMPLETE),
        }
    }

    /// Looks `key` up for a request of `fingerprint`; waits while another replica runs
    /// the first attempt, up to `running_for`, and takes the key when it is free.
    pub async fn begin(&self, scope: &ReplayScope, key: &str, fingerprint: &str) -> Result<SharedStart, EngineError> {
        let redis_key = key_of(scope, key);
        let token = format!("{:032x}", rand_token());
        let deadline = tokio::time::Instant::now() + self.running_for;
        loop {
            let mut c = self.engine.connection().await?;
            let (state, body): (String, Vec<u8>) = self
                .begin
                .key(&redis_key)
                .arg(fingerprint)
                .arg(&token)
                .arg(ms(self.running_for))
                .invoke_async(&mut c)
                .await?;
            match state.as_str() {
                "fresh" => return Ok(SharedStart::Fresh(token)),
                "done" => return Ok(SharedStart::Replay(body)),
                "conflict" => return Ok(SharedStart::Conflict),
                _ => {}
            }
            if tokio::time::Instant::now() >= deadline {
                // The first attempt outlived its own time-out: run this one.
                return Ok(SharedStart::Fresh(String::new()));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Completes the attempt that took `key` with `token`: `result` (serialized) to keep
    /// for the window, or none (failed, too large: the key is free again).
    pub async fn complete(
        &self,
        scope: &ReplayScope,
        key: &str,
        token: &str,
        result: Option<&[u8]>,
    ) -> Result<(), EngineError> {
        if token.is_empty() {
            return Ok(());
        }
        let result = result.filter(|r| r.len() <= MAX_SHARED_RESULT);
        let mut c = self.engine.connection().await?;
        let mut invocation = self.complete.key(key_of(scope, key));
        invocation.arg(token);
        match result {
            Some(body) => invocation.arg("done").arg(body).arg(ms(self.window)),
            None => invocation.arg("fail"),
        };
        let _: i64 = invocation.invoke_async(&mut c).await?;
        Ok(())
    }
}

/// A token unique to one attempt (process id, time and a counter: uniqueness, not
/// secrecy, is what matters).
fn rand_token() -> u128 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let n = N.fetch_add(1, Ordering::Relaxed);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    (t << 32) ^ (u128::from(std::process::id()) << 96) ^ u128::from(n)
}
