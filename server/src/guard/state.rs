//! What the guards of every route share ([`GuardState`]), what a route's guard knows
//! ([`RouteGuard`]), and the count of open event streams ([`StreamCounts`]).
//!
//! Invariants: a session opened with a token is its user's ([`GuardState::bind_session`]);
//! the stream counts hold no key whose count is zero. What it does not do: refuse anything
//! (the steps do, `steps.rs`) or hold a stream's place (its permit does, `permits.rs`).

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::Ordering;

use besluitbron_core::limits::ClientLimits;

use crate::auth::Auth;
use crate::clock::Clock;
use crate::config::Config;
use crate::engine::limits::SharedLimits;
use crate::engine::sessions::{RedisSessionStore, RestoreGate};
use crate::metrics::Metrics;

/// What the guards of every route share: the settings, the client limits, the sessions
/// the cap counts, and what the shutdown drain reads.
pub struct GuardState {
    /// The server's settings.
    pub config: Config,
    /// The clock of the limits.
    pub clock: Clock,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// The client limits (R-I1): process, connector, client address, session.
    pub limits: std::sync::Mutex<ClientLimits>,
    /// `initialize` per client address.
    pub initializes: std::sync::Mutex<ClientLimits>,
    /// Client limits on the shared engine, with several replicas.
    pub shared_limits: Option<SharedLimits>,
    /// Every route's MCP sessions (the session cap counts them).
    pub session_managers: Vec<Arc<RestoreGate>>,
    /// False once shutdown has begun: new requests are answered 503.
    pub accepting: std::sync::atomic::AtomicBool,
    /// MCP messages (POSTs) under way, from the guard's admission to their answer's last
    /// byte: the drain waits for these, so no answer is cut off after its call ended.
    pub answering: std::sync::atomic::AtomicUsize,
    /// Standalone event streams open now, per session and per client address.
    pub streams: std::sync::Mutex<StreamCounts>,
    /// The access-token checks, with `BesluitBron.Auth.Mode` other than off.
    pub auth: Option<Arc<Auth>>,
    /// The user each session opened with a token belongs to (session id → user key).
    pub session_users: std::sync::Mutex<HashMap<String, String>>,
}

impl GuardState {
    /// False once shutdown has begun.
    pub fn is_accepting(&self) -> bool {
        self.accepting.load(Ordering::SeqCst)
    }

    /// MCP messages (POSTs) under way now.
    pub fn answers_under_way(&self) -> usize {
        self.answering.load(Ordering::SeqCst)
    }

    /// Standalone event streams open now.
    pub fn open_streams(&self) -> usize {
        self.streams.lock().expect("stream counts lock").total()
    }

    /// Whether `user` (or no user) may use session `id`: a session opened with a token
    /// only by that token's user, any other as before.
    pub(super) fn may_use_session(&self, id: &str, user: Option<&str>) -> bool {
        let owners = self.session_users.lock().expect("session users lock");
        owners.get(id).is_none_or(|owner| Some(owner.as_str()) == user)
    }

    /// Session `id`, just opened by `user`, is that user's. Entries of sessions no route
    /// holds any more are dropped once there are twice as many as the session cap.
    pub(super) async fn bind_session(&self, id: &str, user: &str) {
        let full = {
            let mut owners = self.session_users.lock().expect("session users lock");
            owners.insert(id.to_owned(), user.to_owned());
            owners.len() > 2 * self.config.sessions.max_sessions.max(1)
        };
        if full {
            let ids: Vec<String> = self
                .session_users
                .lock()
                .expect("session users lock")
                .keys()
                .cloned()
                .collect();
            let mut gone = Vec::new();
            for id in ids {
                let mut held = false;
                for sm in &self.session_managers {
                    held |= sm.holds(&id).await;
                }
                if !held {
                    gone.push(id);
                }
            }
            let mut owners = self.session_users.lock().expect("session users lock");
            for id in gone {
                owners.remove(&id);
            }
        }
    }

    /// Open MCP sessions over all routes of this process.
    pub async fn open_sessions(&self) -> usize {
        let mut n = 0;
        for sm in &self.session_managers {
            n += sm.len().await;
        }
        n
    }

    /// The sessions the session cap counts: over all replicas with several (the local
    /// count while the shared engine does not answer), else this process's.
    pub async fn sessions_for_cap(&self) -> usize {
        if let Some(shared) = &self.shared_limits {
            match crate::engine::sessions::count(shared.engine()).await {
                Ok(n) => return n,
                Err(_) => self.metrics.shared_state.fell_back("session_count", "session_cap"),
            }
        }
        self.open_sessions().await
    }
}

/// What a route's guard knows: the server, its connector's name in the limits, and the
/// sessions of its MCP service.
#[derive(Clone)]
pub struct RouteGuard {
    pub state: Arc<GuardState>,
    pub connector: &'static str,
    pub sessions: Arc<RestoreGate>,
    /// The route's sessions in the shared engine, with several replicas.
    pub store: Option<Arc<RedisSessionStore>>,
}

/// Standalone event streams open now.
#[derive(Default)]
pub struct StreamCounts {
    per_session: HashMap<String, usize>,
    per_address: HashMap<String, usize>,
}

impl StreamCounts {
    /// Streams open now, over all addresses.
    pub(crate) fn total(&self) -> usize {
        self.per_address.values().sum()
    }

    /// Counts one more stream of `session` (if any) from `address`, or says which cap
    /// it would pass.
    pub(super) fn open(
        &mut self,
        caps: crate::config::ConnectionConfig,
        session: Option<&str>,
        address: &str,
    ) -> Result<(), String> {
        if self.per_address.get(address).copied().unwrap_or(0) >= caps.max_streams_per_address {
            return Err(format!(
                "BesluitBron allows {} open event streams per client address; close one first",
                caps.max_streams_per_address
            ));
        }
        if let Some(s) = session
            && self.per_session.get(s).copied().unwrap_or(0) >= caps.max_streams_per_session
        {
            return Err(format!(
                "BesluitBron allows {} open event streams per session; close the old one first",
                caps.max_streams_per_session
            ));
        }
        *self.per_address.entry(address.to_owned()).or_default() += 1;
        if let Some(s) = session {
            *self.per_session.entry(s.to_owned()).or_default() += 1;
        }
        Ok(())
    }

    /// Counts one stream of `session` (if any) from `address` fewer.
    pub(super) fn close(&mut self, session: Option<&String>, address: &String) {
        let StreamCounts {
            per_session,
            per_address,
        } = self;
        for (map, key) in [(per_address, Some(address)), (per_session, session)] {
            if let Some(key) = key
                && let Some(n) = map.get_mut(key)
            {
                *n -= 1;
                if *n == 0 {
                    map.remove(key);
                }
            }
        }
    }
}
