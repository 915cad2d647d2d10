//! The call layer: what a tool does with its platforms, written once for every tool.
//!
//! A tool gets the shared [`Context`] (platform clients and tasks, metrics) and its own
//! [`Call`] (who asks, its canonical arguments, where progress goes, its cancellation),
//! and asks its platform through one of the `answer` functions with a [`PlatformCall`]
//! — the buffer key, the cost as the platform counts it, the lane, and a typed attempt —
//! and a pure render function from the typed answer to text and structured content.
//! This layer owns everything else:
//! - the fairness key (the caller's, or BesluitBron's own system session, R-L7);
//! - encoding the answer for the buffer (a failure to encode is an error, never an
//!   empty success, R-C5) and decoding it back into the tool's type;
//! - the platform's path (buffer, coalescing, fair queue, retries, the 429 requeue,
//!   refunds — all in the core, driven by the platform's task);
//! - progress while the call waits in a queue, and cancellation;
//! - the request counters and the duplicate-rate monitor (R-D9);
//! - a buffer hit's rendered result, looked up and kept for the same question in the
//!   store the call brings ([`render_cache`]: the contract; the MCP side owns the store);
//! - errors an assistant can act on: every failure names the platform and what to do.
//!
//! **What a tool says travels back in its value.** A tool's [`Reply`] is its result, or
//! word that its platform is owned by another replica (several replicas only): the
//! layer above routes it there. Nothing is written into shared state for an outer
//! layer to read afterwards.
//!
//! What this module does not do: check or parse arguments, replay client retries or
//! route between replicas (the MCP layer does), render (the tools do, as pure
//! functions), or talk HTTP to a platform (the clients do).

pub mod counters;
mod platform_call;
mod read;
pub mod render_cache;
mod rendered;

use std::any::Any;
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use besluitbron_core::PlatformId;
use besluitbron_core::dedup::{DuplicateKind, DuplicateMonitor, FormSeen, FormTable, NearTable};
use besluitbron_core::path::Served;
use rmcp::model::CallToolResult;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio_util::sync::CancellationToken;
use tracing::Instrument as _;

pub use platform_call::{PlatformCall, TypedFuture, classify};
pub use read::{Document, Head, Read};
pub use rendered::{Rendered, Structure, provenance, tool_error, without_nulls};

use crate::clock::Clock;
use crate::driver::{CallError, CallRequest, Payload, Platforms, ProgressSink, QueuePosition, SharedPayload};
use crate::identity::Caller;
use crate::metrics::{CauseLabels, Metrics, ToolLabels};
use crate::telemetry::spans;
use counters::RequestCounters;
pub use render_cache::SharedResult;
use render_cache::{RenderCache, RenderKey};

/// A platform client, opened from configuration by its connector.
pub type Client = Arc<dyn Any + Send + Sync>;

/// The platform clients, one per connector.
pub struct Clients {
    by_platform: BTreeMap<PlatformId, Client>,
}

impl Clients {
    /// The clients given, by platform.
    pub fn new(by_platform: BTreeMap<PlatformId, Client>) -> Clients {
        Clients { by_platform }
    }

    /// The client of `platform`, as its connector's type.
    pub fn get<T: Send + Sync + 'static>(&self, platform: PlatformId) -> Result<Arc<T>, AnswerError> {
        self.by_platform
            .get(&platform)
            .and_then(|c| Arc::clone(c).downcast::<T>().ok())
            .ok_or(AnswerError::NoPlatform(platform))
    }
}

/// What a running call reports.
#[derive(Clone, Debug)]
pub enum Report {
    /// Its place in a platform's queue while it waits there.
    Queued(PlatformId, QueuePosition),
    /// A call over several platforms (`search`): `done` of `of` have answered.
    Answered {
        /// Platforms answered so far.
        done: u32,
        /// Platforms asked.
        of: u32,
        /// Which answered last, for the assistant.
        message: String,
    },
}

/// Where a call's reports go (an MCP progress notification, or a forward's progress
/// line back to another replica).
pub type Progress = Arc<dyn Fn(Report) + Send + Sync>;

/// One tool call, as its tool and its platform requests see it.
pub struct Call {
    /// The tool.
    pub tool: &'static str,
    /// The platform the tool asks (`None`: `fetch`, until its id names one).
    pub platform: Option<PlatformId>,
    /// Who asks (as the request guard decided).
    pub caller: Arc<Caller>,
    /// The tool and its arguments as the asker wrote them, only their object keys sorted:
    /// what makes two calls the same question in the same words (the replay key's
    /// fingerprint, the render cache's key), never the canonical form that semantic
    /// deduplication folds a platform request to.
    pub form: Arc<str>,
    /// Where progress goes, when the client asked for it.
    pub progress: Option<Progress>,
    /// Cancelled when the client cancels the call or goes away.
    pub ct: CancellationToken,
    /// Where a buffer hit's rendered result is kept for the same question: the MCP
    /// side's render cache, handed down ([`render_cache`]); `None` keeps nothing.
    pub render_cache: Option<Arc<dyn RenderCache>>,
}

impl Call {
    /// A call BesluitBron makes itself (its maintenance): the system session (R-L7), no
    /// progress, never cancelled.
    pub fn system(tool: &'static str, platform: PlatformId) -> Call {
        Call {
            tool,
            platform: Some(platform),
            caller: Arc::new(Caller::system()),
            form: Arc::from(tool),
            progress: None,
            ct: CancellationToken::new(),
            render_cache: None,
        }
    }
}

/// A tool's result, saying whether the render cache holds it too: what a table that
/// keeps results (the replay layer's) does with it is decided from this value.
#[derive(Clone, Debug, PartialEq)]
pub enum ToolResult {
    /// The call's own: nothing else holds it.
    Own(CallToolResult),
    /// Handed out or kept by the render cache ([`render_cache`]): shared with it.
    Shared(SharedResult),
}

impl ToolResult {
    /// The result itself, to send (a copy when the render cache holds it too).
    pub fn into_result(self) -> CallToolResult {
        match self {
            ToolResult::Own(result) => result,
            ToolResult::Shared(result) => Arc::unwrap_or_clone(result),
        }
    }
}

impl std::ops::Deref for ToolResult {
    type Target = CallToolResult;

    fn deref(&self) -> &CallToolResult {
        match self {
            ToolResult::Own(result) => result,
            ToolResult::Shared(result) => result,
        }
    }
}

impl From<CallToolResult> for ToolResult {
    fn from(result: CallToolResult) -> ToolResult {
        ToolResult::Own(result)
    }
}

/// What a tool gives back.
#[derive(Debug)]
pub enum Reply {
    /// Its result (a tool error included).
    Result(ToolResult),
    /// Several replicas: this replica does not own the platform now (or its lease ended
    /// while the call waited); the call belongs with the platform's owner.
    Elsewhere(PlatformId),
}

impl From<CallToolResult> for Reply {
    fn from(result: CallToolResult) -> Reply {
        Reply::Result(ToolResult::Own(result))
    }
}

impl From<ToolResult> for Reply {
    fn from(result: ToolResult) -> Reply {
        Reply::Result(result)
    }
}

impl From<AnswerError> for Reply {
    /// The call moves to the platform's owner, or the error is the tool's result.
    fn from(error: AnswerError) -> Reply {
        match error {
            AnswerError::Elsewhere(platform) => Reply::Elsewhere(platform),
            other => tool_error(other).into(),
        }
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
    /// No platform task or client for the platform (a wiring bug).
    #[error("{} is not configured in this BesluitBron", .0.display_name())]
    NoPlatform(PlatformId),
    /// Several replicas: the platform is owned by another replica now (see [`Reply`]).
    #[error(
        "BesluitBron's replicas cannot agree on who may call {} now (shared state unreachable); retry in a few seconds",
        .0.display_name()
    )]
    Elsewhere(PlatformId),
}

/// What every tool call shares: the platforms' clients and tasks, metrics, the clock.
pub struct Context {
    /// The platform clients, opened from the registry.
    pub clients: Clients,
    /// Every platform's task (buffer, coalescing, fair queues).
    pub platforms: Platforms,
    /// Metrics.
    pub metrics: Arc<Metrics>,
    /// The clock.
    pub clock: Clock,
    /// The duplicate rate per client (R-D9).
    duplicates: Mutex<DuplicateMonitor>,
    /// The last duplicate-rate spike, for the status page (no client address in it).
    last_spike: Mutex<Option<SpikeNote>>,
    /// The written forms seen per key: exact repeats apart from canonical ones.
    forms: Mutex<FormTable>,
    /// Each session's recent searches: near-duplicates (level 2, counted).
    near: Mutex<NearTable>,
    /// Every tool's request counters.
    counters: RequestCounters,
    /// Several replicas run: a platform owned elsewhere moves the call there.
    replicas: bool,
    /// BesluitBron's own system session.
    system: Arc<Caller>,
}

impl Context {
    /// The context of `tools` (each with its platform) over `clients` and `platforms`;
    /// `replicas` when several replicas share the platforms (a call that finds its
    /// platform owned elsewhere moves there instead of failing).
    pub fn new(
        clients: Clients,
        platforms: Platforms,
        metrics: Arc<Metrics>,
        clock: Clock,
        tools: impl IntoIterator<Item = (&'static str, PlatformId)>,
        replicas: bool,
    ) -> Context {
        Context {
            clients,
            platforms,
            metrics,
            clock,
            duplicates: Mutex::new(DuplicateMonitor::new(Default::default())),
            last_spike: Mutex::new(None),
            forms: Mutex::new(FormTable::new(FORM_TABLE_KEYS)),
            near: Mutex::new(NearTable::new(NEAR_WINDOW, NEAR_SCOPES)),
            counters: RequestCounters::new(tools),
            replicas,
            system: Arc::new(Caller::system()),
        }
    }

    /// Runs `pc` for `call` and renders its answer with `render`; every failure becomes
    /// a tool error that names the platform and what the assistant can do.
    ///
    /// The four ways to answer differ in three things only: who asks (the caller, or
    /// whom [`Context::answer_for`] names), whether the render may refuse the answer
    /// ([`Context::answer_for`]), and whether the render is a plain function whose result
    /// a buffer hit keeps in the render cache ([`Context::answer_kept`], and
    /// [`Context::answer_kept_asked`] when it also reads what was asked).
    pub async fn answer<T, R>(&self, call: &Call, pc: PlatformCall<T>, render: R) -> Reply
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
        R: FnOnce(&T, Served) -> Rendered,
    {
        self.answer_for(Who::Caller, call, pc, |answer, served| Ok(render(answer, served)))
            .await
    }

    /// As [`Context::answer`] for a render that is a plain function of the answer and
    /// how it was served (a `fn`, so it captures nothing): a buffer hit's result is kept
    /// in the call's render cache ([`render_cache`]) and handed out again, shared, to the
    /// same question.
    pub async fn answer_kept<T>(&self, call: &Call, pc: PlatformCall<T>, render: fn(&T, Served) -> Rendered) -> Reply
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        self.answer_kept_asked(call, pc, render, |answer, served, render| render(answer, served))
            .await
    }

    /// As [`Context::answer_kept`] for a render that also reads what the call asked
    /// (`asked`, made from its arguments: the search's parameters in the asker's words,
    /// a list's filter). The kept result is found by the call's arguments as written,
    /// which `asked` is a function of: never by a canonical form other wordings share.
    pub async fn answer_kept_asked<T, C>(
        &self,
        call: &Call,
        pc: PlatformCall<T>,
        asked: C,
        render: fn(&T, Served, &C) -> Rendered,
    ) -> Reply
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
        C: Send + Sync,
    {
        let platform = pc.platform();
        let (payload, served) = match self.fetch_payload(Who::Caller, call, pc).await {
            Ok(fetched) => fetched,
            Err(e) => return e.into(),
        };
        // Only a buffer hit's result is kept (a fresh one says it is fresh), and only in
        // the render cache the call brought.
        let cache = call.render_cache.as_deref().filter(|_| served == Served::Cached);
        let key = RenderKey {
            answer: payload.id(),
            tool: call.tool,
            form: &call.form,
        };
        if let Some(result) = cache.and_then(|cache| cache.get(key)) {
            return ToolResult::Shared(result).into();
        }
        let result = decode::<T>(platform, &payload).and_then(|answer| {
            render(&answer, served, &asked)
                .into_result(&payload)
                .map_err(|detail| AnswerError::Unreadable { platform, detail })
        });
        keep_rendered(result, cache, key)
    }

    /// The typed answer to `pc` asked for the caller within `call`, as it is kept: what a
    /// tool renders with [`Context::render_kept`] and lists from (a keyword search's
    /// answer, `crate::connectors::search`).
    pub async fn fetch_kept<T>(&self, call: &Call, pc: PlatformCall<T>) -> Result<Kept<T>, AnswerError>
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let platform = pc.platform();
        let (payload, served) = self.fetch_payload(Who::Caller, call, pc).await?;
        let answer = decode(platform, &payload)?;
        Ok(Kept {
            platform,
            answer,
            served,
            payload,
        })
    }

    /// The result `render` makes of the answer `kept` for `call`: a buffer hit's is kept
    /// in the call's render cache and handed out again, shared, to the same question.
    /// `render` is a plain function of the answer, how it was served and what the call's
    /// arguments ask (the render cache's contract).
    pub fn render_kept(&self, call: &Call, kept: KeptRef<'_>, render: impl FnOnce() -> Rendered) -> Reply {
        let KeptRef {
            platform,
            payload,
            served,
        } = kept;
        let cache = call.render_cache.as_deref().filter(|_| served == Served::Cached);
        let key = RenderKey {
            answer: payload.id(),
            tool: call.tool,
            form: &call.form,
        };
        if let Some(result) = cache.and_then(|cache| cache.get(key)) {
            return ToolResult::Shared(result).into();
        }
        let result = render()
            .into_result(payload)
            .map_err(|detail| AnswerError::Unreadable { platform, detail });
        keep_rendered(result, cache, key)
    }

    /// As [`Context::answer`], asked for `who`; `render` may refuse the answer with a
    /// message for the assistant (e.g. a selection the answer does not hold).
    pub async fn answer_for<T, R>(&self, who: Who, call: &Call, pc: PlatformCall<T>, render: R) -> Reply
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
        R: FnOnce(&T, Served) -> Result<Rendered, String>,
    {
        let platform = pc.platform();
        let (payload, served) = match self.fetch_payload(who, call, pc).await {
            Ok(fetched) => fetched,
            Err(e) => return e.into(),
        };
        let answer = match decode::<T>(platform, &payload) {
            Ok(answer) => answer,
            Err(e) => return e.into(),
        };
        let rendered = match render(&answer, served) {
            Ok(rendered) => rendered,
            Err(message) => return tool_error(message).into(),
        };
        rendered
            .into_result(&payload)
            .unwrap_or_else(|detail| tool_error(AnswerError::Unreadable { platform, detail }))
            .into()
    }

    /// A reading tool's answer to `pc`, asked for `who` within `call`, typed: `render`
    /// makes the record's head and what the tool shows from the answer and how it was
    /// served, or refuses the answer with a message for the assistant. The tool sends it
    /// as its result, `fetch` as a document ([`Read`]).
    pub async fn read_for<T, R>(&self, who: Who, call: &Call, pc: PlatformCall<T>, render: R) -> ReadResult
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
        R: FnOnce(&T, Served) -> Result<(Head, Rendered), String>,
    {
        let platform = pc.platform();
        let (payload, served) = self.fetch_payload(who, call, pc).await?;
        let answer = decode::<T>(platform, &payload)?;
        let (head, rendered) = render(&answer, served).map_err(|message| Reply::from(tool_error(message)))?;
        Ok(Read {
            platform,
            head,
            rendered,
            payload: Some(payload),
        })
    }

    /// The typed answer to `pc`, asked for `who` within `call` (its progress and
    /// cancellation), and how it was served.
    pub async fn fetch<T>(&self, who: Who, call: &Call, pc: PlatformCall<T>) -> Result<(Arc<T>, Served), AnswerError>
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let platform = pc.platform();
        let (payload, served) = self.fetch_payload(who, call, pc).await?;
        decode(platform, &payload).map(|t| (t, served))
    }

    /// The kept answer to `pc` asked for `who` within `call`, and how it was served.
    async fn fetch_payload<T>(
        &self,
        who: Who,
        call: &Call,
        pc: PlatformCall<T>,
    ) -> Result<(SharedPayload, Served), AnswerError>
    where
        T: Serialize + DeserializeOwned + Send + Sync + 'static,
    {
        let platform = pc.platform();
        let caller = match who {
            Who::Caller => &call.caller,
            Who::System => &self.system,
        };
        let handle = self.platforms.get(platform).ok_or(AnswerError::NoPlatform(platform))?;
        let key_hash = fixed_hash(&pc.key);
        // As written, when the tool folded it; else the key itself.
        let written = pc.written.clone();
        let request = CallRequest {
            key: pc.key.clone(),
            session: caller.session.clone(),
            cost: pc.cost,
            service: pc.service,
        };
        let progress = call.progress.as_ref().map(|progress| {
            let progress = Arc::clone(progress);
            Box::new(move |position: QueuePosition| progress(Report::Queued(platform, position))) as ProgressSink
        });
        // The platform call's span (docs/tracing.md): the buffer, the queue and the
        // attempts hang under it.
        let span = spans::platform_call(platform.as_str(), call.tool);
        let asked = handle
            .call(request, || pc.upstream(), progress)
            .instrument(span.clone());
        // The answer first: a buffer hit is ready at once, and the cancellation is then
        // never polled (no waiter registered in the token's tree).
        let asked = tokio::select! {
            biased;
            answer = asked => answer,
            () = call.ct.cancelled() => {
                spans::served(&span, "cancelled", None);
                return Err(AnswerError::Cancelled);
            }
        };
        traced_served(&span, &asked);
        let (payload, served) = match asked {
            Ok(answer) => answer,
            // Several replicas: another replica owns the platform (or this one's lease
            // ended while the call waited, or its task is stopping): the call moves.
            Err(CallError::NotOwner(p) | CallError::Closed(p)) if self.replicas => {
                return Err(AnswerError::Elsewhere(p));
            }
            Err(e) => return Err(e.into()),
        };
        self.count(platform, call.tool, caller, served, key_hash, written.as_deref());
        Ok((payload, served))
    }

    /// Counts a request of `tool` at `platform` of `kind` (a replay is counted by the
    /// layer that replays it).
    pub fn count_request(&self, tool: &str, platform: PlatformId, kind: DuplicateKind) {
        self.counters.count(&self.metrics, tool, platform, kind);
    }

    /// Notes a tool call of `caller` before it runs: `what` identifies the request (a
    /// hash of its replay key, else of its tool and arguments), so that a repeat's delay
    /// names a duplicate spike's likely cause (R-D9).
    pub fn note_request(&self, caller: &Caller, what: &str) {
        self.duplicates.lock().expect("duplicate monitor lock").note(
            self.clock.now(),
            &caller.address,
            fixed_hash(what),
        );
    }

    /// Counts a client retry answered from the first result (R-D2): in the request
    /// counters and the client's duplicate rate.
    pub fn count_replay(&self, tool: &'static str, platform: PlatformId, caller: &Caller) {
        self.count_request(tool, platform, DuplicateKind::Replay);
        self.watch(caller, DuplicateKind::Replay);
    }

    /// Feeds `caller`'s duplicate rate; logs and counts a spike.
    fn watch(&self, caller: &Caller, kind: DuplicateKind) {
        let spike =
            self.duplicates
                .lock()
                .expect("duplicate monitor lock")
                .record(self.clock.now(), &caller.address, kind);
        if let Some(spike) = spike {
            self.metrics
                .duplicate_spikes
                .get_or_create(&CauseLabels {
                    cause: spike.cause.as_str(),
                })
                .inc();
            tracing::warn!(client = %spike.client, requests = spike.requests, duplicates = spike.duplicates, cause = spike.cause.as_str(), "{spike}");
            *self.last_spike.lock().expect("last spike lock") = Some(SpikeNote {
                at_ms: self.clock.wall().unix_millis(),
                cause: spike.cause.as_str(),
                requests: spike.requests,
                duplicates: spike.duplicates,
            });
        }
    }

    /// The last duplicate-rate spike since start, if any.
    pub fn last_spike(&self) -> Option<SpikeNote> {
        self.last_spike.lock().expect("last spike lock").clone()
    }

    fn count(
        &self,
        platform: PlatformId,
        tool: &'static str,
        caller: &Caller,
        served: Served,
        key: u64,
        written: Option<&str>,
    ) {
        let kind = duplicate_kind(served);
        // An answer shared with another request: shared only through level-1 folding when
        // the key was asked in other forms only; else (this form before, or a key this
        // process does not know) an exact repeat.
        let form = written.map_or(key, fixed_hash);
        let seen = self.forms.lock().expect("form table lock").seen(key, form);
        let kind = match kind {
            DuplicateKind::CacheHit | DuplicateKind::Coalesced if seen == FormSeen::OtherForms => {
                DuplicateKind::Canonical
            }
            kind => kind,
        };
        self.count_request(tool, platform, kind);
        // Level 2: a search that reached the platform, near one of the same session's
        // moments before, is counted (never answered from it).
        if let (DuplicateKind::Fresh, Some(query)) = (kind, written) {
            let near = self.near.lock().expect("near-duplicate table lock").check(
                self.clock.now(),
                caller.session.as_str(),
                tool,
                &key.to_string(),
                query,
            );
            if let Some(near) = near {
                self.metrics
                    .near_duplicates
                    .get_or_create(&ToolLabels {
                        platform: platform.as_str(),
                        tool,
                    })
                    .inc();
                tracing::debug!(
                    tool,
                    session = %caller.session,
                    ago_ms = near.ago.as_millis() as u64,
                    in_session = near.in_scope,
                    "a near-duplicate search: asked again"
                );
            }
        }
        self.watch(caller, kind);
    }
}

/// A rendered result, kept in `cache` under `key` when there is one (a buffer hit's).
fn keep_rendered(
    result: Result<CallToolResult, AnswerError>,
    cache: Option<&dyn RenderCache>,
    key: RenderKey<'_>,
) -> Reply {
    match (result, cache) {
        (Ok(result), Some(cache)) => {
            let result = Arc::new(result);
            if cache.keep(key, &result) {
                ToolResult::Shared(result).into()
            } else {
                ToolResult::Own(Arc::unwrap_or_clone(result)).into()
            }
        }
        (Ok(result), None) => result.into(),
        (Err(e), _) => e.into(),
    }
}

/// An answer as it is kept: typed, how it was served, and the kept payload a render of
/// it is made from ([`Context::render_kept`]).
pub struct Kept<T> {
    /// The platform that answered.
    pub platform: PlatformId,
    /// The answer, typed.
    pub answer: Arc<T>,
    /// How it was served.
    pub served: Served,
    /// The kept payload.
    pub payload: SharedPayload,
}

impl<T> Kept<T> {
    /// What [`Context::render_kept`] takes of it.
    pub fn kept(&self) -> KeptRef<'_> {
        KeptRef {
            platform: self.platform,
            payload: &self.payload,
            served: self.served,
        }
    }
}

/// What a render of a kept answer is made from and kept by: its platform, its payload
/// and how it was served.
#[derive(Clone, Copy)]
pub struct KeptRef<'a> {
    /// The platform that answered.
    pub platform: PlatformId,
    /// The kept payload.
    pub payload: &'a Payload,
    /// How it was served.
    pub served: Served,
}

/// A reading tool's answer, or the reply that stands for it (a tool error, or the
/// platform owned by another replica).
pub type ReadResult = Result<Read, Reply>;

/// The reply of a reading tool's answer.
pub fn replied(read: ReadResult) -> Reply {
    read.map_or_else(|reply| reply, Read::into_reply)
}

impl Read {
    /// The tool's reply: its result, or the tool error naming the platform.
    pub fn into_reply(self) -> Reply {
        let platform = self.platform;
        match self.result() {
            Ok(result) => result.into(),
            Err(detail) => AnswerError::Unreadable { platform, detail }.into(),
        }
    }

    /// The record as `fetch` answers it, or the error naming the platform.
    pub fn into_document(self) -> Result<Document, AnswerError> {
        let platform = self.platform;
        self.document()
            .map_err(|detail| AnswerError::Unreadable { platform, detail })
    }
}

/// A duplicate-rate spike as the status page shows it: when, its likely cause and the
/// client's figures, never the client's address.
#[derive(Clone, Debug, serde::Serialize)]
pub struct SpikeNote {
    /// When it was flagged (Unix ms).
    pub at_ms: u64,
    /// `retry_loop`, `short_timeout` or `unknown`.
    pub cause: &'static str,
    /// The client's requests in the window.
    pub requests: u32,
    /// Of which duplicates.
    pub duplicates: u32,
}

/// Keys whose written forms are remembered (about 150 bytes each: 3 MB at most).
const FORM_TABLE_KEYS: usize = 20_000;

/// How long a session's searches are compared for near-duplicates.
const NEAR_WINDOW: std::time::Duration = std::time::Duration::from_secs(120);

/// Sessions whose recent searches are kept for that (16 searches each).
const NEAR_SCOPES: usize = 4_096;

/// A value's hash that is the same in every process (std's SipHash with its fixed
/// keys): the form table's keys and forms.
fn fixed_hash(value: &(impl std::hash::Hash + ?Sized)) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default().hash_one(value)
}

/// The duplicate kind of an answer (R-D9).
pub fn duplicate_kind(served: Served) -> DuplicateKind {
    match served {
        Served::Cached | Served::Stale => DuplicateKind::CacheHit,
        Served::Fetched => DuplicateKind::Fresh,
        Served::Coalesced => DuplicateKind::Coalesced,
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

/// How a platform call was served, on its span (docs/tracing.md).
fn traced_served(span: &tracing::Span, asked: &Result<(SharedPayload, Served), CallError>) {
    let (how, error) = match asked {
        Ok((_, Served::Cached)) => ("buffer_hit", None),
        Ok((_, Served::Fetched)) => ("asked", None),
        Ok((_, Served::Coalesced)) => ("coalesced", None),
        Ok((_, Served::Stale)) => ("stale", None),
        Err(CallError::QueueFull { .. }) => ("refused", Some("queue_full")),
        Err(CallError::Platform(e)) => ("failed", Some(e.label())),
        Err(CallError::NotOwner(_)) => ("moved", None),
        Err(CallError::Closed(_)) => ("closed", Some("closed")),
    };
    spans::served(span, how, error);
}
