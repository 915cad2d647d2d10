//! The connection to the shared engine: one multiplexed, reconnecting Redis connection
//! per process (redis-rs' `ConnectionManager`), with short time-outs, so an engine that
//! is down or paused makes a call fail within about a second instead of hanging it.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

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

/// A handle to the shared engine. Cheap to clone; every clone shares one connection.
#[derive(Clone)]
pub struct Engine {
    connection: ConnectionManager,
    url: String,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Engine({})", self.url)
    }
}

impl Engine {
    /// Connects to `url` (`redis://…`, or `unix://…` for a socket, as redis-rs reads it). Fails when the engine cannot be
    /// reached now; once connected, the handle reconnects by itself.
    pub async fn connect(url: &str) -> Result<Engine, EngineError> {
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_response_timeout(Some(RESPONSE_TIMEOUT))
            .set_connection_timeout(Some(CONNECT_TIMEOUT))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let connection = ConnectionManager::new_with_config(client, config).await?;
        Ok(Engine {
            connection,
            url: url.to_owned(),
        })
    }

    /// A connection to send commands on (a clone of the shared one).
    pub fn connection(&self) -> ConnectionManager {
        self.connection.clone()
    }

    /// Whether the engine answers now.
    pub async fn ping(&self) -> Result<(), EngineError> {
        let mut c = self.connection();
        let _: String = redis::cmd("PING").query_async(&mut c).await?;
        Ok(())
    }
}
