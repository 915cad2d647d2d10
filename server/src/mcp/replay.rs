//! Client retries answered with the first result (R-D2, R-D6), on top of the core's
//! [`IdempotencyTable`].
//!
//! A request's replay key, when it has one:
//! - `Idempotency-Key: K` → `key:K`, scoped to the MCP session, or to the client address
//!   when there is no session;
//! - otherwise, within an MCP session (where the protocol forbids reusing a request id),
//!   the JSON-RPC id → `jsonrpc:ID`.
//!
//! Stateless (2026-07-28) requests without the header have no key: separate client
//! processes behind one address reuse small ids freely, so the id means nothing there.
//!
//! Same key and same request (tool name plus canonical arguments): waits for the first
//! while it runs, then gets its result. Same key, other request: a JSON-RPC error. A
//! failed first attempt (a tool error, a protocol error, or a cancelled request) releases
//! the key, so the retry really runs (also one that was waiting for it).
//!
//! What is kept of a completed call is its result: a retry gets the first result word
//! for word, its provenance note included. A result the render cache holds too
//! ([`ToolResult::Shared`], said by the result itself, `super::tool_call::render_store`) is kept
//! shared with it, at no cost; any other is kept serialized (one allocation, freed at
//! once when it expires). The decision is read from the value, never from how many
//! hold it. The table bounds what it
//! keeps by count, bytes and time ([`IdempotencyConfig`]); under more load than that,
//! the oldest results go first and a late retry runs again.
//!
//! A layer of the tool call's stack (`crate::mcp::tool_call`): [`Replays::run`] takes the
//! rest of the stack as a function and returns its result; nothing is handed down.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use besluitbron_core::dedup::{IdempotencyConfig, IdempotencyTable, IdempotentStart, ReplayScope};
use rmcp::ErrorData;
use rmcp::model::{CallToolResult, JsonObject, RequestId};
use serde_json::Value;
use tokio::sync::Notify;

use crate::call::{SharedResult, ToolResult};
use crate::clock::Clock;
use crate::engine::replays::{SharedReplays, SharedStart};
use crate::identity::Caller;

/// A request's replay key: its scope (the MCP session, else the client address) and
/// the key within it.
pub type Key = (ReplayScope, String);

/// A completed call's result as it is kept.
#[derive(Clone)]
enum Kept {
    /// Shared with the render cache, which holds it anyway.
    Shared(SharedResult),
    /// Serialized.
    Bytes(Arc<[u8]>),
}

impl Kept {
    /// What `result` is kept as, and about the memory that costs, as the result says:
    /// one the render cache holds too ([`ToolResult::Shared`]) is shared and counted by
    /// its text; one of its own is serialized (one allocation each, freed at once when
    /// it expires) rather than kept as a JSON value tree: thousands of kept trees made
    /// every call pay in allocator work. `None` for a result that does not encode.
    fn of(result: &ToolResult) -> Option<(Kept, u64)> {
        match result {
            ToolResult::Shared(shared) => {
                let text: usize = shared
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.len()))
                    .sum();
                // The structured content says about what the text says.
                Some((Kept::Shared(Arc::clone(shared)), 2 * text as u64 + 256))
            }
            ToolResult::Own(own) => {
                let bytes: Arc<[u8]> = Arc::from(serde_json::to_vec(own).ok()?.into_boxed_slice());
                let size = bytes.len() as u64;
                Some((Kept::Bytes(bytes), size))
            }
        }
    }

    /// The result again (a replay, which is rare, parses a serialized one back).
    fn result(&self) -> Result<ToolResult, ErrorData> {
        match self {
            Kept::Shared(r) => Ok(ToolResult::Shared(Arc::clone(r))),
            Kept::Bytes(b) => read_back(b).map(ToolResult::Own),
        }
    }
}

/// The replay table, and a signal for retries waiting for their first attempt.
pub struct Replays {
    table: Mutex<IdempotencyTable<Kept>>,
    /// Signalled when a first attempt ends (kept, failed or cancelled).
    ended: Notify,
    /// Retries waiting for a first attempt; the signal is sent only when there are any.
    waiting: AtomicUsize,
    clock: Clock,
    /// The table shared by the replicas, with several (`crate::cluster::replays`).
    shared: Option<SharedReplays>,
    /// Retries answered from the shared table.
    shared_replays: std::sync::atomic::AtomicU64,
    metrics: Option<Arc<crate::metrics::Metrics>>,
}

/// The replay key of a request, if it has one. A request of a user (a valid token's) is
/// scoped to that user too, so one user's retry never gets another's result, whatever
/// session id or address they share.
pub fn keys(caller: &Caller, id: &RequestId) -> Option<Key> {
    let scoped = |s: &str| match &caller.user {
        Some(user) => Arc::from(format!("{s}@user:{user}")),
        None => Arc::from(s),
    };
    if let Some(k) = &caller.idempotency_key {
        let scope = match (&caller.session_id, &caller.user) {
            (Some(s), _) => ReplayScope::Session(scoped(s)),
            (None, Some(user)) => ReplayScope::Client(Arc::from(format!("user:{user}"))),
            (None, None) => ReplayScope::Client(Arc::from(caller.address.as_str())),
        };
        return Some((scope, format!("key:{k}")));
    }
    let session = caller.session_id.as_deref()?;
    Some((ReplayScope::Session(scoped(session)), format!("jsonrpc:{id}")))
}

/// The request's canonical form: tool name and arguments with object keys sorted.
pub fn fingerprint(tool: &str, arguments: Option<&JsonObject>) -> String {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(tool.as_bytes());
    match arguments {
        Some(args) => canonical_object(args.iter(), &mut out),
        None => out.extend_from_slice(b"null"),
    }
    // Only JSON text and the tool name (a `str`) were written.
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
fn canonical(v: &Value) -> String {
    let mut out = Vec::new();
    canonical_into(v, &mut out);
    String::from_utf8(out).unwrap_or_default()
}

/// Compact JSON with object keys sorted, written into `out` (one buffer for the whole
/// request: this runs for every tool call in an MCP session).
fn canonical_into(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Object(map) => canonical_object(map.iter(), out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                canonical_into(item, out);
            }
            out.push(b']');
        }
        // Writing a JSON scalar into a Vec cannot fail.
        scalar => serde_json::to_writer(&mut *out, scalar).expect("serialize a JSON scalar"),
    }
}

fn canonical_object<'a>(entries: impl Iterator<Item = (&'a String, &'a Value)>, out: &mut Vec<u8>) {
    let mut entries: Vec<(&String, &Value)> = entries.collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    out.push(b'{');
    for (i, (k, v)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // Writing a string into a Vec cannot fail.
        serde_json::to_writer(&mut *out, k).expect("serialize a JSON string");
        out.push(b':');
        canonical_into(v, out);
    }
    out.push(b'}');
}

fn succeeded(result: &CallToolResult) -> bool {
    result.is_error != Some(true)
}

/// Releases the key if the first attempt ends without an outcome (it was cancelled).
struct FirstAttempt<'a> {
    replays: &'a Replays,
    key: Option<Key>,
    /// The shared table's entry this attempt took, released too.
    token: Option<String>,
}

impl Drop for FirstAttempt<'_> {
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            let now = self.replays.clock.now();
            self.replays
                .table
                .lock()
                .expect("replay lock")
                .complete(now, &key.0, &key.1, None);
            self.replays.signal_end();
            if let (Some(shared), Some(token)) = (&self.replays.shared, self.token.take())
                && let Ok(runtime) = tokio::runtime::Handle::try_current()
            {
                let shared = shared.clone();
                runtime.spawn(async move {
                    let _ = shared.complete(&key.0, &key.1, &token, None).await;
                });
            }
        }
    }
}

impl Replays {
    /// An empty table.
    pub fn new(config: IdempotencyConfig, clock: Clock) -> Replays {
        Replays {
            table: Mutex::new(IdempotencyTable::new(config)),
            ended: Notify::new(),
            waiting: AtomicUsize::new(0),
            clock,
            shared: None,
            shared_replays: Default::default(),
            metrics: None,
        }
    }

    /// With `shared`, the replicas' table behind the local one.
    pub fn shared(self, shared: Option<SharedReplays>) -> Replays {
        Replays { shared, ..self }
    }

    /// Counting shared-table failures in `metrics`.
    pub fn with_metrics(self, metrics: Arc<crate::metrics::Metrics>) -> Replays {
        Replays {
            metrics: Some(metrics),
            ..self
        }
    }

    fn shared_failed(&self, error: &crate::engine::EngineError) {
        tracing::debug!(%error, "the shared replay table is unreachable: this call uses the local one only");
        if let Some(m) = &self.metrics {
            m.shared_state.fell_back("replay", "replays");
        }
    }

    /// Completes the shared entry `token` took for `key` with `kept` (the result, when
    /// it succeeded).
    async fn complete_shared(&self, key: &Key, token: &str, kept: Option<&[u8]>) {
        let Some(shared) = &self.shared else {
            return;
        };
        let body = kept;
        if let Err(e) = shared.complete(&key.0, &key.1, token, body).await {
            self.shared_failed(&e);
        }
    }

    /// Wakes the retries waiting for a first attempt, if any (they look again).
    fn signal_end(&self) {
        // After the table changed (under its lock); a retry counts itself before it
        // looks (under the same lock), so either it sees the change or it is woken.
        if self.waiting.load(Ordering::SeqCst) > 0 {
            self.ended.notify_waiters();
        }
    }

    /// Retries answered and keys reused for other requests, since start.
    pub fn counts(&self) -> (u64, u64) {
        let t = self.table.lock().expect("replay lock");
        (t.replays() + self.shared_replays.load(Ordering::Relaxed), t.conflicts())
    }

    /// Runs `call` unless `keyed` — the request's replay key and its fingerprint, when
    /// it has a key — says this is a retry of a request already run or running. The
    /// second value says whether the result is another request's (a replay).
    pub async fn run<F, Fut>(&self, keyed: Option<(Key, &str)>, call: F) -> (Result<ToolResult, ErrorData>, Replayed)
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = ToolResult>,
    {
        let Some((key, fingerprint)) = keyed else {
            return (Ok(call().await), Replayed::No);
        };
        let start = self
            .table
            .lock()
            .expect("replay lock")
            .begin(self.clock.now(), &key.0, &key.1, fingerprint);
        let start = self.wait_while_in_flight(&key, fingerprint, start).await;
        match start {
            IdempotentStart::Replay(kept) => (kept.result(), Replayed::Yes),
            IdempotentStart::Conflict => (Err(conflict(&key)), Replayed::No),
            // Waited for above.
            IdempotentStart::Untracked | IdempotentStart::InFlight => (Ok(call().await), Replayed::No),
            IdempotentStart::Fresh => {
                let mut first = FirstAttempt {
                    replays: self,
                    key: Some(key.clone()),
                    token: None,
                };
                // With several replicas, the first attempt may have run (or run now) on
                // another one: its result answers this retry too.
                if let Some(shared) = &self.shared {
                    match shared.begin(&key.0, &key.1, fingerprint).await {
                        Ok(SharedStart::Fresh(t)) => first.token = Some(t),
                        Ok(SharedStart::Replay(bytes)) => {
                            let bytes: Arc<[u8]> = Arc::from(bytes.into_boxed_slice());
                            let Ok(result) = serde_json::from_slice::<CallToolResult>(&bytes) else {
                                // Written by another replica's `serde_json::to_vec` of the
                                // same type; a replica of another version may differ: run.
                                return (Ok(call().await), Replayed::No);
                            };
                            first.key = None;
                            let size = bytes.len() as u64;
                            self.table.lock().expect("replay lock").complete_sized(
                                self.clock.now(),
                                &key.0,
                                &key.1,
                                Some((Kept::Bytes(bytes), size)),
                            );
                            self.signal_end();
                            self.shared_replays.fetch_add(1, Ordering::Relaxed);
                            return (Ok(ToolResult::Own(result)), Replayed::Yes);
                        }
                        Ok(SharedStart::Conflict) => {
                            return (Err(conflict(&key)), Replayed::No);
                        }
                        Err(e) => self.shared_failed(&e),
                    }
                }
                let result = call().await;
                // A result that does not encode is not kept: the retry runs again.
                let kept = if succeeded(&result) { Kept::of(&result) } else { None };
                if let Some(token) = first.token.take() {
                    // The other replicas read it back: serialized, shared or not.
                    let body = match &kept {
                        Some((Kept::Bytes(b), _)) => Some(Arc::clone(b)),
                        Some((Kept::Shared(r), _)) => {
                            serde_json::to_vec(&**r).ok().map(|b| Arc::from(b.into_boxed_slice()))
                        }
                        None => None,
                    };
                    self.complete_shared(&key, &token, body.as_deref()).await;
                }
                first.key = None;
                self.table
                    .lock()
                    .expect("replay lock")
                    .complete_sized(self.clock.now(), &key.0, &key.1, kept);
                self.signal_end();
                (Ok(result), Replayed::No)
            }
        }
    }

    /// How a request of `key` starts once no attempt of it is in flight any more.
    async fn wait_while_in_flight(
        &self,
        key: &Key,
        fingerprint: &str,
        mut start: IdempotentStart<Kept>,
    ) -> IdempotentStart<Kept> {
        // A retry of a request still running waits for it to end, then looks again: the
        // first attempt's kept result, or (it failed or was cancelled) a free key, and
        // this retry runs itself.
        while matches!(start, IdempotentStart::InFlight) {
            self.waiting.fetch_add(1, Ordering::SeqCst);
            let ended = self.ended.notified();
            tokio::pin!(ended);
            ended.as_mut().enable();
            let again = self
                .table
                .lock()
                .expect("replay lock")
                .look(self.clock.now(), &key.0, &key.1, fingerprint);
            if matches!(again, IdempotentStart::InFlight) {
                ended.await;
                start = self
                    .table
                    .lock()
                    .expect("replay lock")
                    .look(self.clock.now(), &key.0, &key.1, fingerprint);
            } else {
                start = again;
            }
            self.waiting.fetch_sub(1, Ordering::SeqCst);
        }
        start
    }
}

/// A kept result, read back.
fn read_back(kept: &[u8]) -> Result<CallToolResult, ErrorData> {
    // Written by `serde_json::to_vec` of the same type: it reads back.
    serde_json::from_slice::<CallToolResult>(kept)
        .map_err(|e| ErrorData::internal_error(format!("a kept result could not be read: {e}"), None))
}

/// The error for a key reused for another request.
fn conflict(key: &Key) -> ErrorData {
    ErrorData::invalid_request(
        format!(
            "{} was already used for a different request in this session; use a new request id or Idempotency-Key \
             for a new request",
            key.1.replacen(':', " ", 1)
        ),
        None,
    )
}

/// Whether a call's result was another request's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Replayed {
    /// It ran (or tried to).
    No,
    /// A retry answered with the first request's result.
    Yes,
}

#[cfg(test)]
mod tests {
    use rmcp::model::ContentBlock;

    use super::*;

    fn result(text: &str) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(text)])
    }

    /// What is kept is said by the result, never read from how many hold it. A
    /// result the render cache handed out is shared even when nothing else holds it any
    /// more (the cache let it go); one of the call's own is serialized and reads back
    /// word for word (it holds its value itself: nothing else can hold it).
    #[test]
    fn what_is_kept_is_said_by_the_result_not_by_who_holds_it() {
        let shared = ToolResult::Shared(Arc::new(result("kept by the render cache")));
        let ToolResult::Shared(held) = &shared else {
            unreachable!("made shared above")
        };
        assert_eq!(Arc::strong_count(held), 1, "held by the result alone");
        match Kept::of(&shared) {
            Some((Kept::Shared(kept), _)) => assert!(Arc::ptr_eq(&kept, held), "the same result, shared"),
            _ => panic!("a result the render cache handed out was not kept shared"),
        }
        let own = result("the call's own");
        let bytes = serde_json::to_vec(&own).expect("encodes");
        match Kept::of(&ToolResult::Own(own.clone())) {
            Some((kept @ Kept::Bytes(_), size)) => {
                assert_eq!(size, bytes.len() as u64);
                assert_eq!(kept.result().expect("reads back"), ToolResult::Own(own));
            }
            _ => panic!("a result of the call's own was not serialized"),
        }
    }

    #[test]
    fn canonical_arguments_ignore_key_order_only() {
        let a = serde_json::json!({"b": 1, "a": {"y": [1, 2], "x": "s"}});
        let b = serde_json::json!({"a": {"x": "s", "y": [1, 2]}, "b": 1});
        let c = serde_json::json!({"a": {"x": "s", "y": [2, 1]}, "b": 1});
        assert_eq!(canonical(&a), canonical(&b));
        assert_ne!(canonical(&a), canonical(&c));
    }

    #[test]
    fn the_fingerprint_is_the_name_and_compact_sorted_arguments() {
        let args = serde_json::json!({"q": "a\"b", "n": [1, 2.5, null, true], "o": {"z": 1, "a": "x"}});
        assert_eq!(
            fingerprint("obv_search", args.as_object()),
            r#"obv_search{"n":[1,2.5,null,true],"o":{"a":"x","z":1},"q":"a\"b"}"#
        );
        assert_eq!(fingerprint("obv_status", None), "obv_statusnull");
    }
}
