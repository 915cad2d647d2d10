//! Tasks kept where every replica reads them (the Tasks extension with several
//! replicas): the replica that runs a task copies its state here as it changes, so a
//! `tasks/get` that reaches another replica reads it, and a `tasks/cancel` there leaves
//! word the running replica picks up.
//!
//! Each task is one key, `besluitbron:task:<id>`: its address, the user who made it
//! (with authorization on) and its state as `tasks/get` answers it (serialized), kept as
//! long as the task is ([`SharedTasks::new`]'s time to live, from its last change). A
//! cancel asked elsewhere is `besluitbron:task:<id>:cancel`, kept as long.
//!
//! What this module does not do: run a task, or decide who may read one (the MCP layer
//! does both); an unreachable engine is an error the caller says as such.

use std::time::Duration;

use rmcp::model::DetailedTask;
use serde::{Deserialize, Serialize};

use super::{Engine, EngineError};

/// A task as every replica reads it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SharedTask {
    /// The address it was made at (`/mcp`, `/mcp/obv`): read only there.
    pub address: String,
    /// The user whose call made it, with authorization on.
    pub owner: Option<String>,
    /// Its state, as `tasks/get` answers it.
    pub task: DetailedTask,
}

/// The tasks of every replica, in the shared engine.
#[derive(Clone, Debug)]
pub struct SharedTasks {
    engine: Engine,
    ttl: Duration,
}

fn key(id: &str) -> String {
    format!("besluitbron:task:{id}")
}

fn cancel_key(id: &str) -> String {
    format!("besluitbron:task:{id}:cancel")
}

impl SharedTasks {
    /// Tasks in `engine`, each kept `ttl` after its last change.
    pub fn new(engine: Engine, ttl: Duration) -> SharedTasks {
        SharedTasks { engine, ttl }
    }

    fn ttl_ms(&self) -> u64 {
        u64::try_from(self.ttl.as_millis()).unwrap_or(u64::MAX).max(1)
    }

    /// Keeps `task`'s state under `id`.
    pub async fn put(&self, id: &str, task: &SharedTask) -> Result<(), EngineError> {
        let body = serde_json::to_vec(task).map_err(|e| EngineError(format!("a task's state: {e}")))?;
        let mut c = self.engine.connection().await?;
        let () = redis::cmd("SET")
            .arg(key(id))
            .arg(body)
            .arg("PX")
            .arg(self.ttl_ms())
            .query_async(&mut c)
            .await?;
        Ok(())
    }

    /// The task kept under `id`, if any.
    pub async fn get(&self, id: &str) -> Result<Option<SharedTask>, EngineError> {
        let mut c = self.engine.connection().await?;
        let body: Option<Vec<u8>> = redis::cmd("GET").arg(key(id)).query_async(&mut c).await?;
        body.map(|b| serde_json::from_slice(&b).map_err(|e| EngineError(format!("a task's state is unreadable: {e}"))))
            .transpose()
    }

    /// Leaves word that the task `id` is to be cancelled, for the replica running it.
    pub async fn ask_cancel(&self, id: &str) -> Result<(), EngineError> {
        let mut c = self.engine.connection().await?;
        let () = redis::cmd("SET")
            .arg(cancel_key(id))
            .arg(1)
            .arg("PX")
            .arg(self.ttl_ms())
            .query_async(&mut c)
            .await?;
        Ok(())
    }

    /// Whether a cancel of task `id` was asked at any replica.
    pub async fn cancel_asked(&self, id: &str) -> Result<bool, EngineError> {
        let mut c = self.engine.connection().await?;
        let n: u64 = redis::cmd("EXISTS").arg(cancel_key(id)).query_async(&mut c).await?;
        Ok(n > 0)
    }
}
