//! Client limits shared by the replicas: the connector, address and session layers of
//! [`ClientLimits`] as GCRA in one Redis script, on integer microseconds from Redis
//! `TIME`, so N replicas do not give a session N × its rate. The process layer stays
//! local (it protects this process).
//!
//! Each limited key (`besluitbron:limit:<layer>:<key>`) is a hash of its theoretical
//! arrival time: whole microseconds `t` and the remainder `f` in 1/rpm of a microsecond,
//! so a rate that does not divide a minute into whole microseconds never drifts. A
//! request fits when `(tat − now) × rpm + 60e6 ≤ burst × 60e6`, the local bucket's rule;
//! the wait is rounded up to the microsecond, so the answers (allowed, the refusing
//! layer, `Retry-After` in whole seconds rounded up) are the local ones. Like the local
//! limits, the script commits to every layer or to none. A key expires when its
//! allowance is full again.
//!
//! The same script reads the request's session: present (and refreshed to the idle
//! time), missing, or ended by a DELETE on some replica — one round trip per request
//! for limits and session liveness together.
//!
//! Redis unreachable: the guard falls back to the local limits (logged once per outage,
//! counted in `besluitbron_shared_state_fallbacks_total{what="limits"}`); never fail open, never block
//! past the engine's time-outs.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use besluitbron_core::limits::{ClientLimitConfig, ClientLimits, LimitLayer, RateLimit, Throttled};
use besluitbron_core::time::Instant;

use super::sessions::{SESSIONS_KEY, ended_key, member, session_key};
use super::{Engine, EngineError};

/// The GCRA step in Lua: `gcra(key, rpm, burst, now)` → wait (µs, 0: fits), t, f;
/// `commit(key, rpm, t, f, now)` takes one request.
macro_rules! gcra_lua {
    () => {
        r#"
local function gcra(key, rpm, burst, now)
  local v = redis.call('HMGET', key, 't', 'f')
  local t = tonumber(v[1])
  local f = tonumber(v[2]) or 0
  if t == nil or t < now then t = now; f = 0 end
  local debt = (t - now) * rpm + f + 60000000
  local cap = burst * 60000000
  if debt <= cap then return 0, t, f end
  return math.ceil((debt - cap) / rpm), t, f
end
local function commit(key, rpm, t, f, now)
  f = f + 60000000
  t = t + math.floor(f / rpm)
  f = f % rpm
  redis.call('HSET', key, 't', string.format('%.0f', t), 'f', string.format('%.0f', f))
  redis.call('PEXPIRE', key, string.format('%.0f', math.floor((t - now) / 1000) + 1))
end
local now
if ARGV[1] ~= '' then now = tonumber(ARGV[1]) else
  local tm = redis.call('TIME'); now = tonumber(tm[1]) * 1000000 + tonumber(tm[2]) end
"#
    };
}

/// KEYS: connector, address, session layer as a session, session layer as the address,
/// the session, its ended mark, the sessions' set. ARGV: now override, process ok, named,
/// held here, idle ms, member, then rpm and burst of the connector, address and session
/// layers. Returns {status (1 present, 0 missing or none named, -1 ended), allowed,
/// refusing layer (0 none, 1 connector, 2 address, 3 session), wait µs}.
const ADMIT: &str = concat!(
    gcra_lua!(),
    r#"
local status = 0
if ARGV[3] == '1' then
  if redis.call('EXISTS', KEYS[5]) == 1 then status = 1
  elseif redis.call('EXISTS', KEYS[6]) == 1 then return {-1, 0, 0, 0} end
end
local session_layer = KEYS[4]
if status == 1 or (ARGV[3] == '1' and ARGV[4] == '1') then session_layer = KEYS[3] end
local keys = {KEYS[1], KEYS[2], session_layer}
local ts, fs = {}, {}
local worst, worst_layer = 0, 0
for i = 1, 3 do
  local w, t, f = gcra(keys[i], tonumber(ARGV[5 + 2 * i]), tonumber(ARGV[6 + 2 * i]), now)
  ts[i] = t; fs[i] = f
  if w > 0 and w >= worst then worst = w; worst_layer = i end
end
local allowed = 0
if worst == 0 and ARGV[2] == '1' then
  allowed = 1
  for i = 1, 3 do commit(keys[i], tonumber(ARGV[5 + 2 * i]), ts[i], fs[i], now) end
end
if status == 1 then
  redis.call('PEXPIRE', KEYS[5], ARGV[5])
  redis.call('ZADD', KEYS[7], 'XX', string.format('%.0f', math.floor(now / 1000) + tonumber(ARGV[5])), ARGV[6])
end
return {status, allowed, worst_layer, worst}
"#
);

/// KEYS: the one limited key. ARGV: now override, rpm, burst. Returns the wait in µs
/// (0: taken).
const ONE: &str = concat!(
    gcra_lua!(),
    r#"
local w, t, f = gcra(KEYS[1], tonumber(ARGV[2]), tonumber(ARGV[3]), now)
if w == 0 then commit(KEYS[1], tonumber(ARGV[2]), t, f, now) end
return w
"#
);

/// What the shared engine says of a request's session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SessionStatus {
    /// No session was named, or the named one is in no replica's store.
    Missing,
    /// The session is in the store (refreshed now).
    Present,
    /// A DELETE on some replica ended it.
    Ended,
}

/// The engine's answer for one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// The named session's state.
    pub status: SessionStatus,
    /// Allowed, or the refusal as the local limits give it.
    pub verdict: Result<(), Throttled>,
}

/// One request, as the guard asks the shared engine about it.
#[derive(Clone, Copy, Debug)]
pub struct Asking<'a> {
    /// The route whose session it would be (its connector's id, `all` for `/mcp`).
    pub route: &'a str,
    /// The connector's name in the limits.
    pub connector: &'a str,
    /// The session it names, in the session era.
    pub session: Option<&'a str>,
    /// Whether this replica holds that session.
    pub held: bool,
    /// The client address.
    pub address: &'a str,
    /// The user a valid access token vouched for: counted in place of the address, at
    /// the per-user rate.
    pub user: Option<&'a str>,
    /// The sessions' idle time, to refresh the session's expiry with.
    pub idle_ms: u64,
}

/// The client limits on the shared engine (plus the local process layer).
pub struct SharedLimits {
    engine: Engine,
    config: ClientLimitConfig,
    /// The process layer only (the other layers unlimited).
    process: Mutex<ClientLimits>,
    initialize: RateLimit,
    admit: redis::Script,
    one: redis::Script,
    /// The engine failed at the last use: the fallback is in force (logged once).
    degraded: AtomicBool,
}

fn unlimited() -> RateLimit {
    RateLimit {
        requests_per_minute: u32::MAX / 2,
        burst: u32::MAX / 2,
    }
}

fn wait_of(us: i64) -> Duration {
    Duration::from_micros(u64::try_from(us).unwrap_or(0))
}

fn throttled(layer: LimitLayer, wait: Duration) -> Throttled {
    Throttled {
        layer,
        retry_after_secs: wait.as_nanos().div_ceil(1_000_000_000).max(1) as u64,
        wait,
    }
}

impl SharedLimits {
    /// Limits of `config` (and `initialize`, the per-address rate of new sessions) on
    /// `engine`.
    pub fn new(engine: Engine, config: ClientLimitConfig, initialize: RateLimit) -> SharedLimits {
        SharedLimits {
            engine,
            config,
            process: Mutex::new(ClientLimits::new(ClientLimitConfig {
                process: config.process,
                per_connector: unlimited(),
                per_address: unlimited(),
                per_session: unlimited(),
                per_user: unlimited(),
                max_tracked: 4,
            })),
            initialize,
            admit: redis::Script::new(ADMIT),
            one: redis::Script::new(ONE),
            degraded: AtomicBool::new(false),
        }
    }

    /// The shared engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Notes that the engine failed for `what`; true the first time of an outage (log
    /// then).
    pub fn failed(&self) -> bool {
        !self.degraded.swap(true, Ordering::SeqCst)
    }

    fn answered(&self) {
        if self.degraded.swap(false, Ordering::SeqCst) {
            tracing::info!("the shared engine answers again: client limits are shared across replicas again");
        }
    }

    /// `request` at `now` by this process's clock (the process layer's).
    pub async fn admit(&self, now: Instant, request: &Asking<'_>) -> Result<Admission, EngineError> {
        self.admit_at(None, now, request).await
    }

    /// As [`SharedLimits::admit`], at `at_us` microseconds by the engine's clock instead of
    /// its `TIME` (tests compare the script with the local limits).
    #[doc(hidden)]
    pub async fn admit_at(
        &self,
        at_us: Option<u64>,
        now: Instant,
        request: &Asking<'_>,
    ) -> Result<Admission, EngineError> {
        let Asking {
            route,
            connector,
            session,
            held,
            address,
            user,
            idle_ms,
        } = *request;
        // The process layer is looked at here and taken only if everything passes.
        let process_wait = match self.process.lock().expect("limits lock").clone().check(now, "", "", "") {
            Ok(()) => Duration::ZERO,
            Err(t) => t.wait,
        };
        let id = session.unwrap_or("");
        let as_session = besluitbron_core::SessionKey::client(&format!("session:{id}"));
        // Without a session, the session layer counts the fairness key (the core's rule).
        let who = besluitbron_core::identity::Who {
            user,
            session: None,
            address,
        };
        let as_address = who.fairness_key();
        let c = self.config;
        let (client_key, client_rate, client_layer) = match user {
            Some(u) => (format!("besluitbron:limit:user:{u}"), c.per_user, LimitLayer::User),
            None => (
                format!("besluitbron:limit:address:{address}"),
                c.per_address,
                LimitLayer::Address,
            ),
        };
        let mut conn = self.engine.connection().await?;
        let reply: Result<(i64, i64, i64, i64), redis::RedisError> = self
            .admit
            .key(format!("besluitbron:limit:connector:{connector}"))
            .key(client_key)
            .key(format!("besluitbron:limit:session:{}", as_session.as_str()))
            .key(format!("besluitbron:limit:session:{}", as_address.as_str()))
            .key(session_key(route, id))
            .key(ended_key(route, id))
            .key(SESSIONS_KEY)
            .arg(at_us.map(|t| t.to_string()).unwrap_or_default())
            .arg(u8::from(process_wait.is_zero()))
            .arg(u8::from(session.is_some()))
            .arg(u8::from(held))
            .arg(idle_ms)
            .arg(member(route, id))
            .arg(c.per_connector.requests_per_minute.max(1))
            .arg(c.per_connector.burst.max(1))
            .arg(client_rate.requests_per_minute.max(1))
            .arg(client_rate.burst.max(1))
            .arg(c.per_session.requests_per_minute.max(1))
            .arg(c.per_session.burst.max(1))
            .invoke_async(&mut conn)
            .await;
        let (status, allowed, layer, wait_us) = reply?;
        self.answered();
        let status = match status {
            1 => SessionStatus::Present,
            -1 => {
                return Ok(Admission {
                    status: SessionStatus::Ended,
                    verdict: Ok(()),
                });
            }
            _ => SessionStatus::Missing,
        };
        if allowed == 1 {
            // Taken now; under a race with another request the process layer may go a
            // request or two past its burst, never further.
            let _ = self.process.lock().expect("limits lock").check(now, "", "", "");
            return Ok(Admission {
                status,
                verdict: Ok(()),
            });
        }
        // The refusal with the longest wait, the later layer on a tie (as locally).
        let shared = match layer {
            1 => Some((wait_of(wait_us), LimitLayer::Connector)),
            2 => Some((wait_of(wait_us), client_layer)),
            3 => Some((wait_of(wait_us), LimitLayer::Session)),
            _ => None,
        };
        let local = (!process_wait.is_zero()).then_some((process_wait, LimitLayer::Process));
        let verdict = match shared.into_iter().chain(local).max() {
            Some((wait, layer)) => Err(throttled(layer, wait)),
            // Not refused by any layer and not taken: cannot happen; refuse briefly.
            None => Err(throttled(LimitLayer::Process, Duration::from_secs(1))),
        };
        Ok(Admission { status, verdict })
    }

    /// A new session from `address`: its rate of `initialize` over all replicas.
    pub async fn initialize(&self, address: &str) -> Result<Result<(), Throttled>, EngineError> {
        self.initialize_at(None, address).await
    }

    /// As [`SharedLimits::initialize`], at `at_us` by the engine's clock (tests).
    #[doc(hidden)]
    pub async fn initialize_at(&self, at_us: Option<u64>, address: &str) -> Result<Result<(), Throttled>, EngineError> {
        let mut conn = self.engine.connection().await?;
        let per_minute = self.initialize.requests_per_minute.max(1);
        let wait_us: i64 = self
            .one
            .key(format!("besluitbron:limit:initialize:{address}"))
            .arg(at_us.map(|t| t.to_string()).unwrap_or_default())
            .arg(per_minute)
            .arg(self.initialize.burst.max(1))
            .invoke_async(&mut conn)
            .await?;
        self.answered();
        if wait_us <= 0 {
            Ok(Ok(()))
        } else {
            Ok(Err(throttled(LimitLayer::Session, wait_of(wait_us))))
        }
    }
}
