//! What a tool runs on: the call layer's [`Context`], and for a tool that asks other
//! tools' platforms in tasks of its own (`search`) the [`Route`] to their owners and the
//! time one call may take. [`within`] is the time-out layer's step, written once for the
//! stack and for those parts.
//!
//! What this module does not do: decide where a call goes (the route layer and the
//! [`Route`] do) or run a tool (the tool table does).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use besluitbron_core::PlatformId;

use super::route::Route;
use crate::call::{Context, Reply, ToolResult, tool_error};
use crate::connectors::tool::ToolFuture;

/// What a tool runs on, borrowed for one call.
#[derive(Clone, Copy)]
pub struct GroundRef<'a> {
    /// The call layer's context: platform clients and tasks, metrics, the clock.
    pub ctx: &'a Arc<Context>,
    /// Tool calls running now: a task that outlives its call counts as one of them.
    pub running: &'a Arc<AtomicUsize>,
    /// Several replicas: where a call goes whose platform another replica owns.
    pub route: Option<&'a Arc<dyn Route>>,
    /// The longest one call may take.
    pub limit: Duration,
}

impl GroundRef<'_> {
    /// The same, owned: for a task that outlives the call, counted as a running call
    /// while it lives (the shutdown drain waits for it as for the call).
    pub fn owned(self) -> Ground {
        Ground {
            ctx: Arc::clone(self.ctx),
            _running: Running::count(self.running),
            route: self.route.cloned(),
            limit: self.limit,
        }
    }
}

/// What a tool runs on, owned by a task of its own.
pub struct Ground {
    /// The call layer's context.
    pub ctx: Arc<Context>,
    /// Several replicas: where a call goes whose platform another replica owns.
    pub route: Option<Arc<dyn Route>>,
    /// The longest one call may take.
    pub limit: Duration,
    /// Counts the task as a running call.
    _running: Running,
}

/// Counts a running call (or a task of one that outlives it) until dropped.
pub struct Running(Arc<AtomicUsize>);

impl Running {
    /// One more running on `counter`.
    pub fn count(counter: &Arc<AtomicUsize>) -> Running {
        counter.fetch_add(1, Ordering::SeqCst);
        Running(Arc::clone(counter))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// `tool`'s reply, or after `limit` the error that names the platform it waited for
/// (`None`: the one an id would have named) and what the assistant can do.
pub async fn within(limit: Duration, platform: Option<PlatformId>, tool: ToolFuture<'_>) -> Reply {
    match tokio::time::timeout(limit, tool).await {
        Ok(reply) => reply,
        Err(_) => Reply::Result(gave_up(limit, platform)),
    }
}

/// The error of a call that took longer than `limit` waiting for `platform`.
pub fn gave_up(limit: Duration, platform: Option<PlatformId>) -> ToolResult {
    ToolResult::Own(tool_error(format!(
        "BesluitBron gave up after {} s waiting for {}: the platform is slow or its queue is long; try a narrower \
         question or try again later",
        limit.as_secs(),
        platform.map_or("the platform that reads this id", |p| p.display_name())
    )))
}
