//! The shared engine of several replicas (Redis, with `BesluitBron:Cluster`): the
//! connection, and the state the replicas share in it — client limits ([`limits`]), the
//! replay table ([`replays`]) and legacy MCP sessions ([`sessions`]). The platforms'
//! leases are the driver's (`crate::driver::lease`); forwarding a call to a platform's
//! owner is `crate::cluster`'s. Nothing here runs with one process.
//!
//! The connection: one multiplexed, reconnecting Redis connection per process
//! (redis-rs' `ConnectionManager`), with short time-outs, so an engine that is down or
//! paused makes a call fail within about a second instead of hanging it.
//!
//! Redis is soft state: a lost key or a restarted engine can make two replicas believe
//! they own a platform, and the lease rules keep them apart anyway (ARCHITECTURE.md,
//! "Several replicas"). When the engine cannot be reached, platform calls that need
//! their platform's owner fail closed (buffer hits are still served) and client limits
//! fall back to local ones.

pub mod limits;
pub mod replays;
pub mod sessions;
pub mod tasks;

use std::sync::Arc;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use tokio::sync::OnceCell;

/// How long one command may take before it counts as a failure.
pub const RESPONSE_TIMEOUT: Duration = Duration::from_millis(800);

/// How long connecting may take.
pub const CONNECT_TIMEOUT: Duration = Duration::from_millis(800);

/// The shared engine could not be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("the shared engine (Redis) is unreachable: {0}")]
pub struct EngineError(pub String);

impl From<redis::RedisError> for EngineError {
    fn from(e: redis::RedisError) -> EngineError {
        EngineError(e.to_string())
    }
}

/// A handle to the shared engine. Cheap to clone; every clone shares one connection,
/// opened on first use (so a replica starts while Redis is down, and fails closed until
/// it answers) and reconnecting by itself after.
#[derive(Clone)]
pub struct Engine {
    client: redis::Client,
    connection: Arc<OnceCell<ConnectionManager>>,
    url: String,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Engine({})", self.url)
    }
}

impl Engine {
    /// A handle to `url` (`redis://…`, or `unix://…` for a socket, as redis-rs reads
    /// it); connects on first use.
    pub fn new(url: &str) -> Result<Engine, EngineError> {
        Ok(Engine {
            client: redis::Client::open(url)?,
            connection: Arc::new(OnceCell::new()),
            url: url.to_owned(),
        })
    }

    /// A connection to send commands on (a clone of the shared one); connects first
    /// when no connection was made yet.
    pub async fn connection(&self) -> Result<ConnectionManager, EngineError> {
        let c = self
            .connection
            .get_or_try_init(|| async {
                let config = ConnectionManagerConfig::new()
                    .set_response_timeout(Some(RESPONSE_TIMEOUT))
                    .set_connection_timeout(Some(CONNECT_TIMEOUT))
                    .set_number_of_retries(2)
                    .set_max_delay(Duration::from_millis(500));
                let connecting = ConnectionManager::new_with_config(self.client.clone(), config);
                match tokio::time::timeout(CONNECT_TIMEOUT * 2, connecting).await {
                    Ok(c) => c.map_err(EngineError::from),
                    Err(_) => Err(EngineError("connecting timed out".to_owned())),
                }
            })
            .await?;
        Ok(c.clone())
    }

    /// Whether the engine answers now.
    pub async fn ping(&self) -> Result<(), EngineError> {
        let mut c = self.connection().await?;
        let _: String = redis::cmd("PING").query_async(&mut c).await?;
        Ok(())
    }
}
