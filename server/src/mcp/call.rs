//! The one per-call helper every tool goes through: [`Besluit::answer`].
//!
//! A tool supplies a [`PlatformCall`] — the buffer key, the cost as the platform counts
//! it, the lane, and a typed platform call — and a pure render function from its typed
//! answer to text and structured content. The helper owns everything else:
//! - who the caller is (decided once, by the request guard) and the fairness key;
//! - the replay scope (explicit, in the request's extensions): a retry of a completed
//!   call renders the answer the first call got, instead of asking again;
//! - encoding the answer for the buffer (a failure to encode is a tool error, never an
//!   empty success, R-C5) and decoding it back into the tool's type;
//! - the platform's path (buffer, coalescing, fair queue, retries, the 429 requeue,
//!   refunds — all in the core, driven by the platform's task);
//! - progress notifications while the call waits in a queue, and cancellation;
//! - metrics (requests by duplicate kind, the duplicate-rate monitor);
//! - errors an assistant can act on: every failure names the platform and what to do.
//!
//! What this module does not do: validate arguments or render (the tools do, as pure
//! functions), or talk HTTP to a platform (the clients do).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use besluitbron_core::cache::CacheKey;
use besluitbron_core::path::{Feedback, Lane, Outcome, Served};
use besluitbron_core::{PlatformId, SessionKey, Units};
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam, ProgressToken};
use rmcp::service::{Peer, RequestContext};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::memo::Repeat;
use super::replay::ReplaySlot;
use super::{Besluit, Caller};
use crate::driver::{CallError, CallRequest, Payload, ProgressSink, QueuePosition, SharedPayload, Upstream};
use crate::platforms::http::{PlatformError, Retry};

/// A boxed typed platform call.
pub type TypedFuture<T> = Pin<Box<dyn Future<Output = Result<(T, Feedback), PlatformError>> + Send>>;

/// A typed platform call's attempt, given the expired copy it may revalidate.
type TypedFetch<T> = Arc<dyn Fn(Option<Arc<T>>) -> TypedFuture<T> + Send + Sync>;

/// One platform request a tool makes.
pub struct PlatformCall<T> {
    key: CacheKey,
    cost: Units,
    lane: Lane,
    fetch: TypedFetch<T>,
}

impl<T: Serialize + Send + Sync + 'static> PlatformCall<T> {
    /// A call for `key` costing `cost` on the main lane; `fetch` makes one attempt (it
    /// is called again for a retry) and returns the typed answer with the platform's
    /// feedback.
    pub fn new<F, Fut>(key: CacheKey, cost: Units, fetch: F) -> PlatformCall<T>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(T, Feedback), PlatformError>> + Send + 'static,
    {
        PlatformCall {
            key,
            cost,
            lane: Lane::MAIN,
            fetch: Arc::new(move |_| Box::pin(fetch())),
        }
    }

    /// As [`PlatformCall::new`], for a platform that answers conditional requests:
    /// `fetch` gets the expired copy the buffer still holds for `key` (when it holds one
    /// of this answer's type) and may ask the platform whether it is current; it answers
    /// with that copy and [`Feedback::revalidated`] when the platform says so (HTTP 304),
    /// which renews the copy in the buffer without a download.
    pub fn revalidating<F, Fut>(key: CacheKey, cost: Units, fetch: F) -> PlatformCall<T>
    where
        T: DeserializeOwned,
        F: Fn(Option<Arc<T>>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<(T, Feedback), PlatformError>> + Send + 'static,
    {
        PlatformCall {
            key,
            cost,
            lane: Lane::MAIN,
            fetch: Arc::new(move |previous| Box::pin(fetch(previous))),
        }
    }

    /// The same call on another of the platform's lanes.
    pub fn on_lane(mut self, lane: Lane) -> PlatformCall<T> {
        self.lane = lane;
        self
    }

    /// The upstream the platform's task runs: the typed call, encoded for the buffer,
    /// its error classified for the path.
    fn upstream(fetch: TypedFetch<T>, platform: PlatformId) -> Upstream
    where
        T: DeserializeOwned,
    {
        Arc::new(move |previous: Option<SharedPayload>| {
            // A copy of another shape (an older build's) is no copy to revalidate.
            let previous = previous.and_then(|p| p.typed::<T>().ok());
            let attempt = fetch(previous);
            Box::pin(async move {
                match attempt.await {
                    Ok((value, feedback)) => match Payload::encode(value) {
                        Ok(payload) => Outcome::Success { payload, feedback },
                        Err(e) => Outcome::Failed {
                            error: PlatformError::Internal {
                                platform,
                                detail: format!("the answer could not be encoded: {e}"),
                            },
                        },
                    },
                    Err(error) => classify(error),
                }
            })
        })
    }
}

/// A platform error as the path needs to know it, as its producer classified it
/// ([`PlatformError::retry`]): a wait in the fair queue (a 429, or an overload the
/// platform signals its own way), a failure another attempt may mend, or a failure.
pub fn classify(error: PlatformError) -> Outcome<SharedPayload, PlatformError> {
    match error.retry() {
        Retry::Wait { after } => Outcome::RateLimited {
            retry_after: after,
            error,
        },
        Retry::Yes { after } => Outcome::Retryable {
            retry_after: after,
            error,
        },
        Retry::No => Outcome::Failed { error },
    }
}

/// What a tool shows: a short text and the structured content.
#[derive(Clone, Debug, PartialEq)]
pub struct Rendered {
    /// The text an assistant reads first.
    pub text: String,
    /// The structured content.
    pub structured: Structure,
}

/// A tool's structured content.
#[derive(Clone, Debug, PartialEq)]
pub enum Structure {
    /// The kept answer itself (a JSON object), with these fields set on top: taken from
    /// the answer's memo, so a repeat from the buffer encodes nothing again.
    Answer(Vec<(&'static str, Value)>),
    /// A value of its own (a selection from the answer).
    Own(Value),
}

impl Rendered {
    /// Structured content that is the kept answer as it is.
    pub fn answer(text: String) -> Rendered {
        Rendered {
            text,
            structured: Structure::Answer(Vec::new()),
        }
    }

    /// The structured content for the answer kept as `payload`.
    pub fn structured_value(&self, payload: &Payload) -> Result<Value, String> {
        match &self.structured {
            Structure::Own(v) => Ok(v.clone()),
            Structure::Answer(fields) => {
                let mut v = payload.value().map_err(|e| e.to_string())?;
                if !fields.is_empty() {
                    let object = v.as_object_mut().ok_or("the answer is not a JSON object")?;
                    for (name, value) in fields {
                        object.insert((*name).to_owned(), value.clone());
                    }
                }
                Ok(v)
            }
        }
    }

    /// The MCP result for the answer kept as `payload`: the text as content, the
    /// structure as `structuredContent`.
    ///
    /// Built from `success` rather than `CallToolResult::structured`, which would
    /// serialize the whole structure into a second text block.
    pub fn into_result(self, payload: &Payload) -> Result<CallToolResult, String> {
        let structured = self.structured_value(payload)?;
        let mut result = CallToolResult::success(vec![ContentBlock::text(self.text)]);
        result.structured_content = Some(structured);
        Ok(result)
    }
}

/// A buffer hit's finished result, kept with the answer by [`Besluit::answer_shown`]
/// for the tool that made it and what that call asked.
struct Shown<C> {
    tool: &'static str,
    asked: C,
    result: CallToolResult,
}

impl<C: PartialEq + Send + Sync + 'static> Shown<C> {
    /// The result kept with `payload` for `tool` asked `asked`, if that is what it keeps.
    fn kept(payload: &SharedPayload, tool: &str, asked: &C) -> Option<CallToolResult> {
        payload
            .shown::<Shown<C>>()
            .filter(|shown| shown.tool == tool && shown.asked == *asked)
            .map(|shown| shown.result.clone())
    }
}

/// A tool error the assistant reads: `isError: true` with the message as text, bounded
/// and without addresses ([`crate::platforms::http::bounded_text`]): whatever error carried a
/// base URL, a request URL or an assistant's long input, none of it is shown.
pub fn tool_error(message: impl std::fmt::Display) -> CallToolResult {
    CallToolResult::error(vec![ContentBlock::text(crate::platforms::http::bounded_text(
        &message.to_string(),
    ))])
}

/// A note on where the answer came from, for the text (R-U1).
pub fn provenance(served: Served) -> &'static str {
    match served {
        Served::Cached => " (from BesluitBron's buffer)",
        Served::Coalesced => " (shared with an identical request in progress)",
        Served::Stale => " (the platform failed; this is an older copy from BesluitBron's buffer)",
        Served::Fetched => "",
    }
}

/// For whom a platform request is made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Who {
    /// The tool call's caller, as the request guard decided it.
    Caller,
    /// BesluitBron's own maintenance and the search page: one session whose usage is not
    /// counted (R-L7).
    System,
}

/// What a tool call brings to its platform calls: who asks (as the guard decided), its
/// replay slot, where progress goes, and its cancellation. Made once per tool call by
/// the handler and handed to the tool as an extension (`Extension<Arc<CallScope>>`),
/// so a tool does not clone the whole request context.
pub struct CallScope {
    /// Who asks.
    pub caller: Arc<Caller>,
    /// The call's replay slot, when the request has a replay key.
    pub slot: Option<Arc<ReplaySlot>>,
    /// The client's progress token and the peer to notify, when it asked for progress.
    pub progress: Option<(ProgressToken, Peer<RoleServer>)>,
    /// Cancelled when the client cancels the call or goes away.
    pub ct: CancellationToken,
    /// Several replicas: where progress goes for a call forwarded from another replica
    /// (back over the internal endpoint), instead of `progress`.
    pub relay: Option<crate::cluster::forward::ProgressRelay>,
    /// Several replicas: the platform this replica found it does not own while the call
    /// ran (the call then goes to the platform's owner; see `crate::cluster::forward`).
    pub needs_owner: std::sync::Mutex<Option<PlatformId>>,
    /// The handler keeps a repeat of this call (`super::memo`): a tool that shows a
    /// buffer hit leaves it in `repeat`.
    pub wants_repeat: bool,
    /// What the tool's buffer hit left for a repeat of this call.
    pub repeat: std::sync::Mutex<Option<Repeat>>,
    /// The platform answers the call has asked for so far: a repeat stands for the call
    /// only when its one answer is all the call asked.
    pub fetches: std::sync::atomic::AtomicU32,
}

impl CallScope {
    /// The scope of the tool call `ctx`, asked by `caller`, with its replay `slot`.
    pub fn of(ctx: &RequestContext<RoleServer>, caller: Arc<Caller>, slot: Option<Arc<ReplaySlot>>) -> CallScope {
        CallScope {
            caller,
            slot,
            progress: ctx.meta.get_progress_token().map(|t| (t, ctx.peer.clone())),
            ct: ctx.ct.clone(),
            relay: ctx
                .extensions
                .get::<crate::cluster::forward::Forwarded>()
                .and_then(|f| f.relay.clone()),
            needs_owner: std::sync::Mutex::new(None),
            wants_repeat: false,
            repeat: std::sync::Mutex::new(None),
            fetches: std::sync::atomic::AtomicU32::new(0),
        }
    }

    /// What the tool left for a repeat of this call, once; nothing when the call asked
    /// for more than the one answer the repeat picks from (its other answers, and what
    /// it made of them, are no part of the repeat).
    pub fn take_repeat(&self) -> Option<Repeat> {
        let repeat = self.repeat.lock().expect("repeat lock").take();
        repeat.filter(|_| self.fetches.load(std::sync::atomic::Ordering::Relaxed) == 1)
    }

    /// The platform whose owner the call must go to, once (several replicas).
    pub fn take_needs_owner(&self) -> Option<PlatformId> {
        self.needs_owner.lock().expect("routing lock").take()
    }
}

/// What [`Besluit::repeat`] found for a call.
pub(crate) enum Repeated {
    /// The result kept for the call, with its answer fresh in the buffer.
    Answered(CallToolResult),
    /// A repeat is kept for the call, but gives no answer now (none fresh in the
    /// buffer, or none shown for this question yet): the tool runs.
    Kept,
    /// None is kept for the call: the tool runs, and may leave one.
    NotKept,
}

/// The client address the system session's requests are counted under (R-D9).
const SYSTEM_ADDRESS: &str = "besluitbron";

impl Caller {
    /// BesluitBron's own system session: its maintenance and the search page (R-L7).
    pub fn system() -> Caller {
        Caller {
            session: SessionKey::System,
            session_id: None,
            address: SYSTEM_ADDRESS.to_owned(),
            idempotency_key: None,
        }
    }
}

/// Why a tool got no answer to render.
#[derive(Debug, thiserror::Error)]
pub enum AnswerError {
    /// The path's failure.
    #[error(transparent)]
    Call(#[from] CallError),
    /// The request was cancelled by the client.
    #[error("the request was cancelled")]
    Cancelled,
    /// The kept answer is not what the tool expects (a buffer entry of an older shape).
    #[error("a buffered answer of {} could not be read ({detail}); ask again", .platform.display_name())]
    Unreadable {
        /// The platform.
        platform: PlatformId,
        /// Why.
        detail: String,
    },
    /// No platform task for the key's platform (a wiring bug).
    #[error("{} is not configured in this BesluitBron", .0.display_name())]
    NoPlatform(PlatformId),
}

impl Besluit {
    /// Runs `call` for `tool` and renders its answer with `render`; every failure becomes
    /// a tool error that names the platform and what the assistant can do.
    pub(crate) async fn answer<T, R>(
        &self,
        scope: &CallScope,
        tool: &'static str,
        call: PlatformCall<T>,
        render: R,
    ) -> CallToolResult
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
        R: FnOnce(&T, Served) -> Rendered,
    {
        self.answer_for(Who::Caller, scope, tool, call, |answer, served| {
            Ok(render(answer, served))
        })
        .await
    }

    /// As [`Besluit::answer`] for a render that is a plain function of the answer and how
    /// it was served (a `fn`, so it captures no arguments): a buffer hit's finished result
    /// is kept with the kept answer and handed out again as a clone, so a repeated call
    /// renders nothing.
    pub(crate) async fn answer_shown<T>(
        &self,
        scope: &CallScope,
        tool: &'static str,
        call: PlatformCall<T>,
        render: fn(&T, Served) -> Rendered,
    ) -> CallToolResult
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        self.shown(scope, tool, call, (), |answer, served, ()| render(answer, served))
            .await
    }

    /// As [`Besluit::answer_shown`] for a render that also reads what the call asked
    /// (`asked`, e.g. the search's parameters, said in the answer): the kept result is
    /// handed out again only to a call that asked the same (`asked` compared), any other
    /// is rendered afresh.
    pub(crate) async fn answer_shown_for<T, C>(
        &self,
        scope: &CallScope,
        tool: &'static str,
        call: PlatformCall<T>,
        asked: C,
        render: fn(&T, Served, &C) -> Rendered,
    ) -> CallToolResult
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
        C: PartialEq + Clone + Send + Sync + 'static,
    {
        self.shown(scope, tool, call, asked, render).await
    }

    async fn shown<T, C>(
        &self,
        scope: &CallScope,
        tool: &'static str,
        call: PlatformCall<T>,
        asked: C,
        render: impl FnOnce(&T, Served, &C) -> Rendered,
    ) -> CallToolResult
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
        C: PartialEq + Clone + Send + Sync + 'static,
    {
        let platform = call.key.platform();
        let key = scope.wants_repeat.then(|| call.key.clone());
        let (payload, served) = match self.fetch_payload(Who::Caller, Some(scope), tool, call).await {
            Ok(fetched) => fetched,
            Err(e) => return tool_error(e),
        };
        // A buffer hit: a repeat of this call may be answered with the result shown
        // for it, while the answer stays fresh (`super::memo`).
        if served == Served::Cached
            && let Some(key) = key
        {
            let question = asked.clone();
            *scope.repeat.lock().expect("repeat lock") = Some(Repeat {
                key,
                tool,
                pick: Box::new(move |payload| Shown::kept(payload, tool, &question)),
            });
        }
        if served == Served::Cached
            && let Some(result) = Shown::kept(&payload, tool, &asked)
        {
            return result;
        }
        let result = decode::<T>(platform, &payload).and_then(|answer| {
            render(&answer, served, &asked)
                .into_result(&payload)
                .map_err(|detail| AnswerError::Unreadable { platform, detail })
        });
        match result {
            Ok(result) => {
                if served == Served::Cached {
                    payload.keep_shown(Shown {
                        tool,
                        asked,
                        result: result.clone(),
                    });
                }
                result
            }
            Err(e) => tool_error(e),
        }
    }

    /// As [`Besluit::answer`], asked for `who`; `render` may refuse the answer with a
    /// message for the assistant (e.g. a selection the answer does not hold).
    pub(crate) async fn answer_for<T, R>(
        &self,
        who: Who,
        scope: &CallScope,
        tool: &'static str,
        call: PlatformCall<T>,
        render: R,
    ) -> CallToolResult
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
        R: FnOnce(&T, Served) -> Result<Rendered, String>,
    {
        let platform = call.key.platform();
        let (payload, served) = match self.fetch_payload(who, Some(scope), tool, call).await {
            Ok(fetched) => fetched,
            Err(e) => return tool_error(e),
        };
        let answer = match decode::<T>(platform, &payload) {
            Ok(answer) => answer,
            Err(e) => return tool_error(e),
        };
        let rendered = match render(&answer, served) {
            Ok(rendered) => rendered,
            Err(message) => return tool_error(message),
        };
        rendered
            .into_result(&payload)
            .unwrap_or_else(|detail| tool_error(AnswerError::Unreadable { platform, detail }))
    }

    /// The typed answer to `call` asked for `who`, within the tool call `scope` (its replay
    /// slot, progress and cancellation) when there is one — BesluitBron's maintenance
    /// asks without.
    pub(crate) async fn fetch_for<T>(
        &self,
        who: Who,
        scope: Option<&CallScope>,
        tool: &'static str,
        call: PlatformCall<T>,
    ) -> Result<(Arc<T>, Served), AnswerError>
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let platform = call.key.platform();
        let (payload, served) = self.fetch_payload(who, scope, tool, call).await?;
        decode(platform, &payload).map(|t| (t, served))
    }

    /// The kept answer to `call` asked for `who`, and how it was served.
    async fn fetch_payload<T>(
        &self,
        who: Who,
        scope: Option<&CallScope>,
        tool: &'static str,
        call: PlatformCall<T>,
    ) -> Result<(SharedPayload, Served), AnswerError>
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let platform = call.key.platform();
        if let Some(scope) = scope {
            scope.fetches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let slot = scope.and_then(|c| c.slot.as_ref());
        // A retry of a call whose answer was kept renders that answer again.
        if let Some(kept) = slot.and_then(|s| s.replay()) {
            return Ok((Arc::clone(&kept.payload), kept.served));
        }
        let caller = match (who, scope) {
            (Who::Caller, Some(scope)) => Arc::clone(&scope.caller),
            _ => Arc::new(Caller::system()),
        };
        let handle = self
            .shared
            .platforms
            .get(platform)
            .ok_or(AnswerError::NoPlatform(platform))?;
        let PlatformCall { key, cost, lane, fetch } = call;
        let request = CallRequest {
            key,
            session: caller.session.clone(),
            cost,
            lane,
        };
        let progress = scope.and_then(|c| progress_sink(c, platform));
        let asked = handle.call(request, || PlatformCall::upstream(fetch, platform), progress);
        let asked = match scope {
            // The answer first: a buffer hit is ready at once, and the cancellation is
            // then never polled (no waiter registered in the token's tree).
            Some(scope) => tokio::select! {
                biased;
                answer = asked => answer,
                () = scope.ct.cancelled() => return Err(AnswerError::Cancelled),
            },
            None => asked.await,
        };
        let (payload, served) = match asked {
            Ok(answer) => answer,
            // Several replicas: another replica owns the platform (or this one's lease
            // ended while the call waited, or its task is stopping): the tool call goes
            // to the owner (`Besluit::call_tool`).
            Err(CallError::NotOwner(p) | CallError::Closed(p)) if self.shared.cluster.is_some() => {
                if let Some(scope) = scope {
                    *scope.needs_owner.lock().expect("routing lock") = Some(p);
                }
                return Err(AnswerError::Call(CallError::NotOwner(p)));
            }
            Err(e) => return Err(e.into()),
        };
        self.count(platform, tool, &caller, served);
        if let Some(slot) = slot {
            slot.record(platform, &payload, served);
        }
        Ok((payload, served))
    }

    /// A repeat of the call of canonical `form` (`super::memo`): the result shown for it
    /// with the answer fresh in the buffer, counted and recorded in the call's replay
    /// `slot` as the tool's own buffer hit is; else whether a repeat is kept for `form`
    /// (the tool then runs, and leaves one only when none is kept).
    pub(crate) fn repeat(&self, form: &str, caller: &Caller, slot: Option<&Arc<ReplaySlot>>) -> Repeated {
        let Some(repeat) = self.shared.repeats.get(form) else {
            return Repeated::NotKept;
        };
        let platform = repeat.key.platform();
        let Some(payload) = self
            .shared
            .platforms
            .get(platform)
            .and_then(|handle| handle.cached(&repeat.key))
        else {
            return Repeated::Kept;
        };
        let Some(result) = (repeat.pick)(&payload) else {
            return Repeated::Kept;
        };
        self.count(platform, repeat.tool, caller, Served::Cached);
        if let Some(slot) = slot {
            slot.record(platform, &payload, Served::Cached);
        }
        Repeated::Answered(result)
    }

    fn count(&self, platform: PlatformId, tool: &'static str, caller: &Caller, served: Served) {
        let kind = super::duplicate_kind(served);
        self.shared.tools.count(&self.shared.metrics, tool, platform, kind);
        let spike = self.shared.duplicates.lock().expect("duplicate monitor lock").record(
            self.shared.clock.now(),
            &caller.address,
            kind,
        );
        if let Some(spike) = spike {
            self.shared.metrics.duplicate_spikes.inc();
            tracing::warn!(client = %spike.client, requests = spike.requests, duplicates = spike.duplicates, "{spike}");
        }
    }
}

fn decode<T: DeserializeOwned + Send + Sync + 'static>(
    platform: PlatformId,
    payload: &SharedPayload,
) -> Result<Arc<T>, AnswerError> {
    payload.typed::<T>().map_err(|e| AnswerError::Unreadable {
        platform,
        detail: e.to_string(),
    })
}

/// A progress sink that sends MCP progress notifications, if the client asked for them.
pub fn progress_sink(scope: &CallScope, platform: PlatformId) -> Option<ProgressSink> {
    if let Some(relay) = scope.relay.clone() {
        return Some(Box::new(move |p: QueuePosition| relay(p)));
    }
    let (token, peer) = scope.progress.clone()?;
    let mut step = 0u32;
    let name = platform.display_name();
    Some(Box::new(move |p: QueuePosition| {
        step += 1;
        let message = format!(
            "waiting for {name}: {} call(s) queued by {} session(s), about {} s",
            p.queued_calls,
            p.waiting_sessions,
            p.estimated_wait.as_secs_f64().ceil()
        );
        let param = ProgressNotificationParam::new(token.clone(), f64::from(step)).with_message(message);
        let peer = peer.clone();
        tokio::spawn(async move {
            let _ = peer.notify_progress(param).await;
        });
    }))
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU32;

    use besluitbron_core::cache::DataClass;

    use super::*;

    fn scope(fetches: u32) -> CallScope {
        CallScope {
            caller: Arc::new(Caller::system()),
            slot: None,
            progress: None,
            ct: CancellationToken::new(),
            relay: None,
            needs_owner: std::sync::Mutex::new(None),
            wants_repeat: true,
            repeat: std::sync::Mutex::new(Some(Repeat {
                key: CacheKey::new(PlatformId::Obv, DataClass::Search, "search"),
                tool: "obv_search",
                pick: Box::new(|_| None),
            })),
            fetches: AtomicU32::new(fetches),
        }
    }

    #[test]
    fn a_repeat_stands_for_a_call_only_when_its_answer_was_all_the_call_asked() {
        assert!(scope(1).take_repeat().is_some(), "one answer, the repeat's own");
        assert!(scope(2).take_repeat().is_none(), "another answer made the call too");
        assert!(scope(0).take_repeat().is_none());
        let once = scope(1);
        assert!(once.take_repeat().is_some());
        assert!(once.take_repeat().is_none(), "taken once");
    }
}
