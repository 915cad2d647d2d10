//! The stack below replay, written once for every call that runs a tool: a `tools/call`
//! ([`super::Calls::call`], after its replay layer), a forward from another replica
//! ([`super::Calls::call_here`]), each part of `search` ([`Stack::listing`]), the list
//! tool `lists` asks and the reading tool `fetch` asks with that tool's own arguments
//! ([`Stack::in_place`]).
//!
//! ```text
//! route     a call whose platform another replica owns goes there (several replicas)
//! time-out  the longest one call may take
//! the tool  its function over the call layer, answering what is wanted ([`Want`])
//! ```
//!
//! What this module does not do: look a tool up or check its arguments (the tool table
//! and [`ToolEntry::admit`] do, before a call gets here), or replay a client's retry.

use std::sync::Arc;

use rmcp::model::JsonObject;
use tokio_util::sync::CancellationToken;

use super::ground::{GroundRef, Stack, within};
use super::replay;
use super::route::{Answer, Answered, RouteFuture, Want};
use super::tools::{ToolEntry, ToolTable};
use crate::call::{AnswerError, Call, tool_error};

/// Route: the call, and with several replicas its way to the platform's owner.
pub async fn routed(ground: GroundRef<'_>, tool: &ToolEntry, call: &Call, arguments: JsonObject, want: Want) -> Answer {
    // Kept for the owner (a forward carries the arguments), only when one may be asked.
    let again = ground.route.map(|_| arguments.clone());
    let platform = match timed(ground, tool, call, arguments, want).await {
        Ok(answer) => return answer,
        Err(platform) => platform,
    };
    let (Some(route), Some(arguments)) = (ground.route, again) else {
        // Without replicas no platform is owned elsewhere; said plainly should it be.
        return Answer::Result(tool_error(AnswerError::Elsewhere(platform)).into());
    };
    let rerun = || -> RouteFuture<'_, Answered> { Box::pin(timed(ground, tool, call, arguments.clone(), want)) };
    // Boxed: the forwarding's state would otherwise sit in every call's future, moved
    // with it, for the few calls that need it.
    route.route(call, &arguments, (platform, want), &rerun).await
}

/// Time-out and the tool.
pub async fn timed(
    ground: GroundRef<'_>,
    tool: &ToolEntry,
    call: &Call,
    arguments: JsonObject,
    want: Want,
) -> Answered {
    // The assistant learns which platform held the call up, as every other failure of a
    // platform call says (`fetch`: the platform its id named).
    within(ground.limit, tool.platform, tool.answer(ground, call, arguments, want)).await
}

impl Stack for ToolTable {
    fn listing<'a>(
        &'a self,
        ground: GroundRef<'a>,
        asker: &'a Call,
        tool: &'static str,
        arguments: JsonObject,
    ) -> RouteFuture<'a, Answer> {
        // The asker reports what answered, not each part's queue; cancelled only with the
        // asker's own token (a search's part: its task's, or never), so a part its asker
        // no longer waits for fills the buffer.
        let asked = Asked {
            progress: None,
            ct: asker.ct.clone(),
            want: Want::Listing,
        };
        Box::pin(self.asked_by(ground, asker, tool, arguments, asked))
    }

    fn in_place<'a>(
        &'a self,
        ground: GroundRef<'a>,
        asker: &'a Call,
        (tool, want): (&'static str, Want),
        arguments: JsonObject,
    ) -> RouteFuture<'a, Answer> {
        let asked = Asked {
            progress: asker.progress.clone(),
            ct: asker.ct.clone(),
            want,
        };
        Box::pin(self.asked_by(ground, asker, tool, arguments, asked))
    }
}

/// How a tool's call of another asks it: with which progress and cancellation, for what.
struct Asked {
    progress: Option<crate::call::Progress>,
    ct: CancellationToken,
    want: Want,
}

impl ToolTable {
    /// The call of `tool` with `arguments` that `asker` makes: arguments, route, time-out
    /// and the tool, as `asker`'s caller with its render cache.
    async fn asked_by(
        &self,
        ground: GroundRef<'_>,
        asker: &Call,
        tool: &'static str,
        arguments: JsonObject,
        asked: Asked,
    ) -> Answer {
        let Some(entry) = self.get(tool) else {
            return Answer::Result(tool_error(format!("BesluitBron serves no tool {tool} here")).into());
        };
        let mut arguments = Some(arguments);
        if let Err(refusal) = entry.admit(&mut arguments) {
            return Answer::Result(refusal.into());
        }
        let arguments = arguments.unwrap_or_default();
        let call = Call {
            tool: entry.name,
            platform: entry.platform,
            caller: Arc::clone(&asker.caller),
            form: Arc::from(replay::fingerprint(entry.name, Some(&arguments))),
            progress: asked.progress,
            ct: asked.ct,
            render_cache: asker.render_cache.clone(),
        };
        routed(ground, entry, &call, arguments, asked.want).await
    }
}
