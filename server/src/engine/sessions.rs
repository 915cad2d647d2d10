//! Legacy MCP sessions (2025-06-18 / 2025-11-25) shared by the replicas: rmcp's
//! [`SessionStore`] on Redis, and [`RestoreGate`], the session manager that closes
//! rmcp 3.11's restore race.
//!
//! Keys: `besluitbron:session:<route>:<id>` holds the session's `initialize` parameters (what a
//! replica needs to restore it), expiring after the configured idle time and refreshed
//! by every request of the session (the guard's one admission script does that, see
//! `cluster::limits`); `besluitbron:session-ended:<route>:<id>` marks a session ended by a DELETE
//! (for as long as the idle time), so a replica still holding its own copy ends it too on
//! the session's next request there, at no extra round trip; `besluitbron:sessions` is a
//! sorted set of the sessions by expiry, the count the session cap reads across replicas.
//!
//! The restore race (rmcp 3.11, `StreamableHttpService::try_restore_from_store`): the
//! first request for a session a replica does not hold loads it from the store and calls
//! `restore_session`, which puts the new session into the manager's map at once, and only
//! then replays the `initialize` handshake. A concurrent request of the same session that
//! asks `has_session` in between is told "yes" and goes straight to the session worker:
//! its channel request reaches the worker before the `initialize` (the worker quits on an
//! unexpected first event) or its message reaches the handler before
//! `notifications/initialized` (the handshake fails). Either way the restore answers 500,
//! the other request 500 or 404, and the replica's copy is closed. A second window: a
//! request told "absent" while the restore runs waits for rmcp's pending-restore entry,
//! but rmcp removes that entry in a spawned task after the restore; a request that takes
//! the entry's lock after that starts a restore of its own, and rmcp answers
//! `AlreadyPresent` with 500. [`RestoreGate`] makes `has_session` of a session being
//! restored wait (bounded) until the handshake is through, so no request reaches the
//! session early and none starts a second restore.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::Stream;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    ServerSseMessage, SessionState, SessionStore, SessionStoreError,
};
use rmcp::transport::streamable_http_server::{RestoreOutcome, SessionId, SessionManager};

use tokio::sync::watch;

use super::{Engine, EngineError};

/// The longest a request waits in `has_session` for a restore of its session (the
/// handshake takes milliseconds; a stuck one ends with rmcp's own init time-out).
const RESTORE_WAIT: Duration = Duration::from_secs(10);

/// The key of a session's stored state. A session belongs to its route (as in one
/// process, where each route has its own sessions), so the route is part of the key.
pub fn session_key(route: &str, id: &str) -> String {
    format!("besluitbron:session:{route}:{id}")
}

/// The key marking a session ended by a DELETE.
pub fn ended_key(route: &str, id: &str) -> String {
    format!("besluitbron:session-ended:{route}:{id}")
}

/// A session's member in [`SESSIONS_KEY`].
pub fn member(route: &str, id: &str) -> String {
    format!("{route}:{id}")
}

/// Sessions open over all replicas and routes.
pub async fn count(engine: &Engine) -> Result<usize, EngineError> {
    static COUNT_SCRIPT: std::sync::LazyLock<redis::Script> = std::sync::LazyLock::new(|| redis::Script::new(COUNT));
    let mut c = engine.connection().await?;
    let n: usize = COUNT_SCRIPT.key(SESSIONS_KEY).invoke_async(&mut c).await?;
    Ok(n)
}

/// The sorted set of sessions by expiry (milliseconds, Redis time).
pub const SESSIONS_KEY: &str = "besluitbron:sessions";

/// Redis's clock in milliseconds, as a Lua expression (scripts only).
macro_rules! now_ms_lua {
    () => {
        "local t = redis.call('TIME'); local now_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)\n"
    };
}

/// Stores a session: its state with the idle expiry, and its place in the count.
const STORE: &str = concat!(
    now_ms_lua!(),
    "redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])\n",
    "redis.call('DEL', KEYS[3])\n",
    "redis.call('ZADD', KEYS[2], now_ms + tonumber(ARGV[2]), ARGV[3])\n",
    "return 1\n"
);

/// Ends a session everywhere: its state goes, the ended mark stays for the idle time.
const DELETE: &str = concat!(
    "redis.call('DEL', KEYS[1])\n",
    "redis.call('ZREM', KEYS[2], ARGV[2])\n",
    "redis.call('SET', KEYS[3], '1', 'PX', ARGV[1])\n",
    "return 1\n"
);

/// The sessions open over all replicas (expired ones are dropped first).
const COUNT: &str = concat!(
    now_ms_lua!(),
    "redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now_ms)\n",
    "return redis.call('ZCARD', KEYS[1])\n"
);

/// rmcp's session store on the shared engine.
pub struct RedisSessionStore {
    engine: Engine,
    /// The route's restore gate: a restore is marked from the `load` rmcp begins it with.
    restoring: Option<Arc<Restoring>>,
    route: &'static str,
    idle: Duration,
    store: redis::Script,
    delete: redis::Script,
}

impl std::fmt::Debug for RedisSessionStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RedisSessionStore({:?})", self.engine)
    }
}

impl RedisSessionStore {
    /// A store for the sessions of `route` (its connector's id, `all` for `/mcp`) on
    /// `engine`, whose sessions expire after `idle` without a request.
    pub fn new(engine: Engine, route: &'static str, idle: Duration) -> RedisSessionStore {
        RedisSessionStore {
            engine,
            restoring: None,
            route,
            idle,
            store: redis::Script::new(STORE),
            delete: redis::Script::new(DELETE),
        }
    }

    /// Marks restores in `restoring` (the route's gate) from their `load` on.
    pub fn gated_by(self, restoring: Option<Arc<Restoring>>) -> RedisSessionStore {
        RedisSessionStore { restoring, ..self }
    }

    /// The route whose sessions these are.
    pub fn route(&self) -> &'static str {
        self.route
    }

    /// The idle time after which a session expires, in milliseconds.
    pub fn idle_ms(&self) -> u64 {
        u64::try_from(self.idle.as_millis()).unwrap_or(u64::MAX).max(1)
    }

    /// Whether the session exists in the store now.
    pub async fn exists(&self, id: &str) -> Result<bool, EngineError> {
        let mut c = self.engine.connection().await?;
        let n: u32 = redis::cmd("EXISTS")
            .arg(session_key(self.route, id))
            .query_async(&mut c)
            .await?;
        Ok(n == 1)
    }
}

#[async_trait::async_trait]
impl SessionStore for RedisSessionStore {
    async fn load(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        // rmcp loads only to restore: from here on, requests of this session wait for it.
        if let Some(r) = &self.restoring {
            r.begin(session_id);
        }
        let loaded = self.load_state(session_id).await;
        if let (Some(r), Ok(None) | Err(_)) = (&self.restoring, &loaded) {
            r.end(session_id, false);
        }
        loaded
    }

    async fn store(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        self.store_state(session_id, state).await
    }

    async fn delete(&self, session_id: &str) -> Result<(), SessionStoreError> {
        self.delete_state(session_id).await
    }
}

impl RedisSessionStore {
    async fn load_state(&self, session_id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let mut c = self.engine.connection().await?;
        let text: Option<String> = redis::cmd("GET")
            .arg(session_key(self.route, session_id))
            .query_async(&mut c)
            .await
            .map_err(EngineError::from)?;
        match text {
            None => Ok(None),
            Some(t) => Ok(Some(serde_json::from_str(&t)?)),
        }
    }

    async fn store_state(&self, session_id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let text = serde_json::to_string(state)?;
        let mut c = self.engine.connection().await?;
        let _: i64 = self
            .store
            .key(session_key(self.route, session_id))
            .key(SESSIONS_KEY)
            .key(ended_key(self.route, session_id))
            .arg(text)
            .arg(self.idle_ms())
            .arg(member(self.route, session_id))
            .invoke_async(&mut c)
            .await
            .map_err(EngineError::from)?;
        Ok(())
    }

    async fn delete_state(&self, session_id: &str) -> Result<(), SessionStoreError> {
        let mut c = self.engine.connection().await?;
        let _: i64 = self
            .delete
            .key(session_key(self.route, session_id))
            .key(SESSIONS_KEY)
            .key(ended_key(self.route, session_id))
            .arg(self.idle_ms())
            .arg(member(self.route, session_id))
            .invoke_async(&mut c)
            .await
            .map_err(EngineError::from)?;
        Ok(())
    }
}

/// A session manager that holds the requests of a session being restored until its
/// replayed handshake is through (the module's doc tells the race): `has_session` waits
/// for the restore. Transparent otherwise: with no session store nothing is ever
/// restored.
#[derive(Debug, Default)]
pub struct RestoreGate<M = LocalSessionManager> {
    inner: M,
    /// Sessions between `restore_session` and the end of the replayed handshake (the
    /// restore's `notifications/initialized`, the first message accepted for them), each
    /// with the signal its waiting requests get: restored (true) or not.
    restoring: Arc<Restoring>,
    /// Off only in the test that shows the race.
    gate: bool,
}

/// A restore's signal to its waiting requests, and when it began.
type RestoreMark = (watch::Sender<Option<bool>>, std::time::Instant);

/// Sessions being restored on this replica (from the store's `load` on), each with the
/// signal its waiting requests get, and when it began (an entry older than
/// [`RESTORE_WAIT`] is stale: a restore rmcp abandoned before `restore_session`).
#[derive(Debug, Default)]
pub struct Restoring {
    sessions: Mutex<HashMap<String, RestoreMark>>,
    /// How many entries `sessions` holds, set under its lock: every request of a
    /// session asks whether it is being restored, and almost always none is, which this
    /// answers without the lock that all requests would otherwise share.
    held: AtomicUsize,
}

impl Restoring {
    fn begin(&self, id: &str) {
        let mut sessions = self.sessions.lock().expect("restoring lock");
        if !sessions.get(id).is_some_and(fresh) {
            sessions.insert(id.to_owned(), (watch::channel(None).0, std::time::Instant::now()));
        }
        self.held.store(sessions.len(), Ordering::Release);
    }

    fn end(&self, id: &str, ok: bool) {
        let mut sessions = self.sessions.lock().expect("restoring lock");
        let ended = sessions.remove(id);
        self.held.store(sessions.len(), Ordering::Release);
        drop(sessions);
        if let Some((signal, _)) = ended {
            let _ = signal.send(Some(ok));
        }
    }

    /// The signal of `id`'s restore, if one is under way: none at all without the lock
    /// when no restore is.
    fn signal(&self, id: &str) -> Option<watch::Receiver<Option<bool>>> {
        if self.held.load(Ordering::Acquire) == 0 {
            return None;
        }
        self.sessions
            .lock()
            .expect("restoring lock")
            .get(id)
            .filter(|mark| fresh(mark))
            .map(|(signal, _)| signal.subscribe())
    }

    fn contains(&self, id: &str) -> bool {
        self.signal(id).is_some()
    }

    async fn wait(&self, id: &str) {
        if let Some(mut rx) = self.signal(id) {
            let _ = tokio::time::timeout(RESTORE_WAIT, rx.wait_for(Option::is_some)).await;
        }
    }
}

/// A restore mark younger than [`RESTORE_WAIT`] (an older one is stale: a restore rmcp
/// abandoned before `restore_session`).
fn fresh((_, at): &RestoreMark) -> bool {
    at.elapsed() < RESTORE_WAIT
}

impl<M> RestoreGate<M> {
    /// `inner` behind the gate.
    pub fn new(inner: M) -> RestoreGate<M> {
        RestoreGate {
            inner,
            restoring: Arc::default(),
            gate: true,
        }
    }

    /// `inner` without the gate: rmcp 3.11's own behaviour (the restore-race test).
    #[doc(hidden)]
    pub fn ungated(inner: M) -> RestoreGate<M> {
        RestoreGate {
            gate: false,
            ..RestoreGate::new(inner)
        }
    }

    /// The session manager behind the gate.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The sessions being restored, for the store to mark a restore from its `load`
    /// on (none when the gate is off).
    pub fn restoring(&self) -> Option<Arc<Restoring>> {
        self.gate.then(|| Arc::clone(&self.restoring))
    }

    fn is_restoring(&self, id: &str) -> bool {
        self.gate && self.restoring.contains(id)
    }

    /// The end of a restore (or of a session): its waiting requests are told `ok`.
    fn restored(&self, id: &str, ok: bool) {
        self.restoring.end(id, ok);
    }
}

impl RestoreGate<LocalSessionManager> {
    /// Whether this replica holds the session, ready to serve (not being restored).
    pub async fn holds(&self, id: &str) -> bool {
        !self.is_restoring(id) && self.inner.sessions.read().await.contains_key(id)
    }

    /// Sessions held here.
    pub async fn len(&self) -> usize {
        self.inner.sessions.read().await.len()
    }

    /// Whether no session is held here.
    pub async fn is_empty(&self) -> bool {
        self.len().await == 0
    }
}

impl<M: SessionManager> SessionManager for RestoreGate<M> {
    type Error = M::Error;
    type Transport = M::Transport;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        self.inner.create_session().await
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        // A request of a session being restored waits for the restore here: told "absent",
        // it would start a restore of its own once rmcp's pending entry is gone (rmcp
        // removes it in a task of its own, after the restore), which rmcp answers 500.
        if !self.gate {
            return self.inner.has_session(id).await;
        }
        loop {
            self.restoring.wait(id).await;
            let present = self.inner.has_session(id).await?;
            // A restore that began while the map was read is waited for too.
            if !self.restoring.contains(id) {
                return Ok(present);
            }
        }
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        let r = self.inner.close_session(id).await;
        self.restored(id, false);
        r
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(&self, id: &SessionId, message: ClientJsonRpcMessage) -> Result<(), Self::Error> {
        let r = self.inner.accept_message(id, message).await;
        // While a session is restoring, only the restore itself reaches it (everyone else
        // waits in `has_session`): its first message is the replayed
        // `notifications/initialized`, after which the session serves in order.
        self.restored(id, r.is_ok());
        r
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(&self, id: SessionId) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        if self.gate {
            self.restoring.begin(&id);
        }
        let r = self.inner.restore_session(id.clone()).await;
        if !matches!(r, Ok(RestoreOutcome::Restored(_))) {
            self.restored(&id, false);
        }
        r
    }

    fn event_store(&self) -> Option<Arc<dyn rmcp::transport::streamable_http_server::session::EventStore>> {
        self.inner.event_store()
    }
}
