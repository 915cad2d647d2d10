//! What a tool runs on: the call layer's [`Context`], and for a tool that asks other
//! tools' platforms in tasks of its own (`search`) the [`Stack`] their calls go through,
//! the [`Route`] to their owners and the time one call may take. [`in_time`] and
//! [`until`] are the time-out layer's steps, written once for the stack, for those parts
//! and for whatever else waits on a platform within a call's time.
//!
//! What this module does not do: decide where a call goes (the route layer and the
//! [`Route`] do) or run a tool (the tool table does).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use besluitbron_core::PlatformId;
use rmcp::model::JsonObject;

use super::route::{Answer, Answered, Route, RouteFuture, Want};
use crate::call::{Call, Context, ToolResult, tool_error};

/// The stack below replay (arguments, route, time-out, the tool), as a tool that asks
/// other tools (a part of `search`, the list `lists` answers with) reaches it: each is a
/// call like any other.
pub trait Stack: Send + Sync {
    /// The call of tool `tool` with `arguments` that `asker` makes for its own answer
    /// (as its caller, with its render cache; no progress of its own, never cancelled:
    /// a part its asker no longer waits for fills the buffer), answered as a listing.
    fn listing<'a>(
        &'a self,
        ground: GroundRef<'a>,
        asker: &'a Call,
        tool: &'static str,
        arguments: JsonObject,
    ) -> RouteFuture<'a, Answer>;

    /// The call of tool `tool` with `arguments` that `asker` makes in its place: as its
    /// caller, with its progress, cancellation and render cache, answered as `want`ed —
    /// that tool's result (`lists` asking a list tool) or the record it read (`fetch` with
    /// a reading tool's own arguments).
    fn in_place<'a>(
        &'a self,
        ground: GroundRef<'a>,
        asker: &'a Call,
        asked: (&'static str, Want),
        arguments: JsonObject,
    ) -> RouteFuture<'a, Answer>;
}

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
    /// The stack a call of another tool goes through.
    pub stack: &'a Arc<dyn Stack>,
}

impl GroundRef<'_> {
    /// The same, owned: for a task that outlives the call, counted as a running call
    /// while it lives (the shutdown drain waits for it as for the call).
    pub fn owned(self) -> Ground {
        Ground {
            ctx: Arc::clone(self.ctx),
            running: Running::count(self.running),
            route: self.route.cloned(),
            limit: self.limit,
            stack: Arc::clone(self.stack),
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
    /// The stack a call of another tool goes through.
    pub stack: Arc<dyn Stack>,
    /// Counts the task as a running call.
    running: Running,
}

impl Ground {
    /// Borrowed again, for one call.
    pub fn as_ref(&self) -> GroundRef<'_> {
        GroundRef {
            ctx: &self.ctx,
            running: &self.running.0,
            route: self.route.as_ref(),
            limit: self.limit,
            stack: &self.stack,
        }
    }
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

/// `answer`, or after `limit` the error that names the platform it waited for (`None`:
/// the one an id would have named) and what the assistant can do.
pub async fn within(limit: Duration, platform: Option<PlatformId>, answer: impl Future<Output = Answered>) -> Answered {
    match in_time(limit, answer).await {
        Some(answered) => answered,
        None => Ok(Answer::Result(gave_up(limit, platform))),
    }
}

/// `future`'s output, or `None` once `limit` has passed (the future is dropped).
pub async fn in_time<F: Future>(limit: Duration, future: F) -> Option<F::Output> {
    tokio::time::timeout(limit, future).await.ok()
}

/// `future`'s output, or `None` at `deadline` (the future is dropped).
pub async fn until<F: Future>(deadline: tokio::time::Instant, future: F) -> Option<F::Output> {
    tokio::time::timeout_at(deadline, future).await.ok()
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
