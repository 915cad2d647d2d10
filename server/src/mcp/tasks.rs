//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663): a `search`, and a
//! read of a record (`fetch`, a reading tool: [`super::tools::ToolEntry::runs_as_task`]),
//! from a client that declares the extension in its request answers `resultType: "task"`
//! at once; the client polls `tasks/get`, which says which platforms have answered and
//! which are pending, and carries the whole result when every platform has answered (a
//! read: when its record is read); `tasks/cancel` stops it.
//!
//! A task is the same `search` through the same call stack (arguments, route, time-out,
//! each platform's queue and buffer), asked again while a platform is still pending: a
//! part that answered is then a buffer hit, and a pending one joins its own request
//! still running (coalesced), so a round costs the platforms nothing more. At most
//! [`MAX_ROUNDS`] rounds; the last round's answer is the result, pending parts named.
//!
//! Invariants: a task id is rmcp's random UUID (122 random bits: unguessable); with
//! authorization on, a task is read and cancelled only by the user whose call made it,
//! and an id of another user's task is answered as unknown. Cancelling a task cancels
//! its own call and its search's parts (which run on between rounds): each gives up its
//! wait, so a platform request of the task's own still waiting for its turn is withdrawn
//! unsent (counted in `besluitbron_platform_withdrawn_calls_total`), while one another
//! caller also waits on is theirs and runs on. Tasks live in this replica's memory for
//! [`TASK_TTL_MS`] after they are made (rmcp's [`TaskManager`] sweeps them).
//!
//! A read is one round: its answer names no pending platform.
//!
//! With several replicas a task runs where it was made, and is kept where every replica
//! reads it ([`SharedTasks`]): the running replica copies its state there as it changes
//! (every [`MIRROR_EVERY`]), a `tasks/get` at another replica reads that copy, and a
//! `tasks/cancel` there leaves word the running replica picks up at its next copy. Who
//! may read it is checked the same way everywhere (its address, its user).
//!
//! What this module does not do: decide which tools run as tasks (the tool table does).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{CallToolResult, CreateTaskResult, GetTaskResult};
use rmcp::task_manager::{TaskContext, TaskExit, TaskManager, TaskOptions};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::tool_call::{Calls, ToolRequest};
use crate::call::{Progress, Report};
use crate::engine::tasks::{SharedTask, SharedTasks};

/// How long a task is kept after it is made, in milliseconds.
pub const TASK_TTL_MS: u64 = 15 * 60 * 1000;

/// How often a client is asked to poll, in milliseconds.
const POLL_INTERVAL_MS: u64 = 1_000;

/// The most rounds of a search one task asks.
pub const MAX_ROUNDS: usize = 6;

/// How often a running task's state is copied where every replica reads it.
pub const MIRROR_EVERY: Duration = Duration::from_millis(200);

/// This replica's tasks at one address, and whose each one is.
#[derive(Default)]
pub struct Tasks {
    manager: TaskManager,
    /// Task id → the user who made it (with authorization on; `None` otherwise).
    owners: Mutex<HashMap<String, Option<String>>>,
    /// Several replicas: where every replica reads the tasks, and this address.
    shared: Option<(SharedTasks, String)>,
}

impl Tasks {
    /// Tasks made at `address`, kept in `shared` for every replica.
    pub fn shared(shared: SharedTasks, address: String) -> Tasks {
        Tasks {
            shared: Some((shared, address)),
            ..Tasks::default()
        }
    }

    /// Whether every replica reads these tasks.
    pub fn everywhere(&self) -> bool {
        self.shared.is_some()
    }

    /// Starts `request` as a task over `calls`; the answer that names it.
    pub fn start(&self, calls: Arc<Calls>, request: ToolRequest) -> CreateTaskResult {
        let owner = request.caller.user.clone();
        let options = TaskOptions::new()
            .with_ttl_ms(TASK_TTL_MS)
            .with_poll_interval_ms(POLL_INTERVAL_MS)
            .with_status_message("asking the platforms");
        // The task's platform calls are in the trace of the request that made it.
        let span = tracing::Span::current();
        let task = self.manager.spawn(options, move |cx| {
            Box::pin(tracing::Instrument::instrument(run(calls, request, cx), span))
        });
        if let Some((shared, address)) = &self.shared
            && let Ok(now) = self.manager.get_task(&task.task_id)
        {
            let kept = SharedTask {
                address: address.clone(),
                owner: owner.clone(),
                task: now,
            };
            let id = task.task_id.clone();
            tokio::spawn(mirror(self.manager.clone(), shared.clone(), kept, id));
        }
        let mut owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        // Forget the owners of tasks the manager has let go of.
        owners.retain(|id, _| self.manager.get_task(id).is_ok());
        owners.insert(task.task_id.clone(), owner);
        CreateTaskResult::new(task)
    }

    /// `tasks/get` of `task_id` by `user`: this replica's task, or another's.
    pub async fn get(&self, task_id: &str, user: Option<&str>) -> Result<GetTaskResult, ErrorData> {
        if self.here(task_id) {
            self.owned(task_id, user)?;
            return self.manager.get_task(task_id).map(GetTaskResult::new);
        }
        self.elsewhere(task_id, user)
            .await
            .map(|kept| GetTaskResult::new(kept.task))
    }

    /// `tasks/cancel` of `task_id` by `user`: here, or word left for the replica running
    /// it.
    pub async fn cancel(&self, task_id: &str, user: Option<&str>) -> Result<(), ErrorData> {
        if self.here(task_id) {
            self.owned(task_id, user)?;
            return self.manager.cancel_task(task_id);
        }
        self.elsewhere(task_id, user).await?;
        match &self.shared {
            Some((shared, _)) => shared.ask_cancel(task_id).await.map_err(unreachable),
            None => Err(unknown_task(task_id)),
        }
    }

    /// Whether this replica made `task_id` (at this address).
    fn here(&self, task_id: &str) -> bool {
        self.owners
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(task_id)
    }

    /// The task `task_id` another replica made at this address, if `user` may see it.
    async fn elsewhere(&self, task_id: &str, user: Option<&str>) -> Result<SharedTask, ErrorData> {
        let Some((shared, address)) = &self.shared else {
            return Err(unknown_task(task_id));
        };
        match shared.get(task_id).await {
            Ok(Some(kept)) if &kept.address == address && (kept.owner.is_none() || kept.owner.as_deref() == user) => {
                Ok(kept)
            }
            Ok(_) => Err(unknown_task(task_id)),
            Err(e) => Err(unreachable(e)),
        }
    }

    /// Whether `user` may see `task_id`: the unknown-task error otherwise, the same as
    /// for an id never made.
    fn owned(&self, task_id: &str, user: Option<&str>) -> Result<(), ErrorData> {
        let owners = self.owners.lock().unwrap_or_else(|e| e.into_inner());
        match owners.get(task_id) {
            Some(None) => Ok(()),
            Some(Some(owner)) if Some(owner.as_str()) == user => Ok(()),
            _ => Err(unknown_task(task_id)),
        }
    }
}

/// The error for a task id this user may not see, the same as for one never made.
fn unknown_task(task_id: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("unknown task: {}", task_id.chars().take(64).collect::<String>()),
        None,
    )
}

/// The error for a task kept elsewhere when the shared store does not answer.
fn unreachable(e: crate::engine::EngineError) -> ErrorData {
    ErrorData::internal_error(
        format!(
            "BesluitBron's shared store did not answer for this task ({}); ask again shortly",
            e.0
        ),
        None,
    )
}

/// Copies the state of task `id` where every replica reads it whenever it changes, and
/// cancels it here when a cancel was asked elsewhere; ends when the task has ended and
/// its last state is kept (or the manager has let go of it).
async fn mirror(manager: TaskManager, shared: SharedTasks, mut kept: SharedTask, id: String) {
    let mut written: Option<String> = None;
    loop {
        let Ok(now) = manager.get_task(&id) else {
            return;
        };
        let ended = now.status().is_terminal();
        // What is compared to see a change is what is kept: a state that cannot be written
        // is never kept, and `tasks/get` elsewhere answers the last one that was.
        let state = match serde_json::to_string(&now) {
            Ok(state) => state,
            Err(e) => {
                tracing::warn!(task = %id, error = %e, "a task's state cannot be written; it is not shared");
                return;
            }
        };
        if written.as_deref() != Some(state.as_str()) {
            kept.task = now;
            match shared.put(&id, &kept).await {
                Ok(()) => written = Some(state),
                Err(e) => tracing::warn!(task = %id, error = %e.0, "a task's state was not shared; trying again"),
            }
        } else if ended {
            return;
        }
        if !ended && shared.cancel_asked(&id).await.unwrap_or(false) {
            let _ = manager.cancel_task(&id);
        }
        tokio::time::sleep(MIRROR_EVERY).await;
    }
}

/// The platforms of a `search` result by where they stand: answered (ok or failed)
/// and pending.
fn standing(result: &CallToolResult) -> (Vec<String>, Vec<String>) {
    let (mut answered, mut pending) = (Vec::new(), Vec::new());
    let platforms = result
        .structured_content
        .as_ref()
        .and_then(|v| v.get("platforms"))
        .and_then(Value::as_array);
    for p in platforms.into_iter().flatten() {
        let name = p["name"]
            .as_str()
            .or(p["platform"].as_str())
            .unwrap_or_default()
            .to_owned();
        match p["status"].as_str() {
            Some("pending") => pending.push(name),
            Some("ok" | "failed") => answered.push(name),
            _ => {}
        }
    }
    (answered, pending)
}

/// What `tasks/get` says of a search between rounds.
fn status_message(answered: &[String], pending: &[String]) -> String {
    let list = |names: &[String]| {
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    format!("answered: {}; pending: {}", list(answered), list(pending))
}

/// The task of `request`: its search asked until no platform is pending (at most
/// [`MAX_ROUNDS`] rounds), or until the task is cancelled.
async fn run(calls: Arc<Calls>, request: ToolRequest, cx: TaskContext) -> Result<CallToolResult, TaskExit> {
    let ct = CancellationToken::new();
    let reported = cx.clone();
    let progress: Progress = Arc::new(move |report| match report {
        Report::Answered { done, of, message } => {
            reported.set_status_message(format!("{message}; {} pending", of.saturating_sub(done)));
        }
        // A read waiting for its platform's turn.
        Report::Queued(platform, position) => reported.set_status_message(format!(
            "waiting for {}: {} calls queued, about {} s",
            platform.display_name(),
            position.queued_calls,
            position.estimated_wait.as_secs().max(1)
        )),
    });
    let mut rounds = 0;
    loop {
        rounds += 1;
        let round = ToolRequest {
            name: request.name.clone(),
            arguments: request.arguments.clone(),
            caller: Arc::clone(&request.caller),
            replay: None,
            progress: Some(Arc::clone(&progress)),
            ct: ct.child_token(),
        };
        let result = tokio::select! {
            result = super::search::PARTS_CANCEL.scope(ct.clone(), calls.call(round)) => {
                result.map_err(TaskExit::Error)?
            }
            () = cx.cancelled() => {
                ct.cancel();
                return Err(TaskExit::Cancelled);
            }
        };
        let (answered, pending) = standing(&result);
        let read = result
            .structured_content
            .as_ref()
            .is_some_and(|v| v.get("platforms").is_none());
        cx.set_status_message(if read {
            "read".to_owned()
        } else {
            status_message(&answered, &pending)
        });
        if pending.is_empty() || result.is_error == Some(true) || rounds >= MAX_ROUNDS {
            return Ok(result);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_search_result_is_read_as_platforms_answered_and_pending() {
        let mut result = CallToolResult::success(Vec::new());
        result.structured_content = Some(json!({"platforms": [
            {"platform": "tk", "name": "Tweede Kamer", "status": "ok"},
            {"platform": "obv", "name": "OpenBesluitvorming", "status": "pending"},
            {"platform": "bwb", "name": "Wetten", "status": "failed"},
            {"platform": "ob", "name": "Officiële bekendmakingen", "status": "no_keyword_search"},
        ]}));
        let (answered, pending) = standing(&result);
        assert_eq!(answered, ["Tweede Kamer", "Wetten"]);
        assert_eq!(pending, ["OpenBesluitvorming"]);
        assert_eq!(
            status_message(&answered, &pending),
            "answered: Tweede Kamer, Wetten; pending: OpenBesluitvorming"
        );
        assert_eq!(status_message(&[], &[]), "answered: none; pending: none");
    }

    #[test]
    fn a_task_of_a_user_is_theirs_alone_and_one_without_a_user_is_its_ids() {
        let tasks = Tasks::default();
        {
            let mut owners = tasks.owners.lock().expect("owners");
            owners.insert("mine".to_owned(), Some("alice".to_owned()));
            owners.insert("open".to_owned(), None);
        }
        assert!(tasks.owned("mine", Some("alice")).is_ok());
        let refused = tasks.owned("mine", Some("bob")).expect_err("another user's");
        let unknown = tasks.owned("never", Some("bob")).expect_err("never made");
        assert_eq!(refused.code, unknown.code, "another user's task is answered as unknown");
        assert!(refused.message.contains("unknown task"), "{refused:?}");
        assert!(tasks.owned("mine", None).is_err(), "no token, no task of a user");
        assert!(tasks.owned("open", None).is_ok() && tasks.owned("open", Some("bob")).is_ok());
    }
}
