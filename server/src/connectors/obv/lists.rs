//! The calls more than one part of obv makes: the sources' list, shared by
//! `obv_sources` and the completion of organisation keys (`offers.rs`); and the
//! platform's rate report as the path's feedback, which every call of obv gives back.
//!
//! What it does not do: render the list (`render/sources.rs`).

use std::sync::Arc;

use besluitbron_core::cache::{CacheKey, DataClass};
use besluitbron_core::path::{Feedback, Keep};

use super::render::SourcesAnswer;
use crate::call::{Call, Context, PlatformCall, Who};
use crate::connectors::ask::{Resolution, ResolveFuture};
use crate::platforms::obv::{OTHER_CALL_COST, ObvClient, PLATFORM, RateInfo};

/// The platform's `RateLimit-*` headers as feedback for the fair queue.
pub(super) fn feedback(rate: RateInfo) -> Feedback {
    Feedback {
        remaining: rate.remaining,
        reset: rate.reset,
        keep: Keep::Normal,
        revalidated: false,
    }
}

/// An asked `organization` read against the sources' list (the one `obv_search`
/// reads, kept a day), for asking back; the list out of reach is no resolution.
pub(super) fn organization<'a>(ctx: &'a Context, call: &'a Call, asked: &'a str) -> ResolveFuture<'a> {
    Box::pin(async move {
        let Ok(client) = ctx.clients.get::<ObvClient>(PLATFORM) else {
            return Resolution::Unknown;
        };
        match ctx.fetch(Who::Caller, call, sources_call(client)).await {
            Ok((sources, _)) => super::names::asked(&sources, asked),
            Err(_) => Resolution::Unknown,
        }
    })
}

/// The sources' call, shared by `obv_sources` and the completion of organisation keys.
pub(super) fn sources_call(client: Arc<ObvClient>) -> PlatformCall<SourcesAnswer> {
    let key = CacheKey::new(PLATFORM, DataClass::Reference, "sources");
    PlatformCall::new(key, OTHER_CALL_COST, move || {
        let client = Arc::clone(&client);
        async move {
            let (sources, rate) = client.sources().await?;
            Ok((SourcesAnswer::from(sources), feedback(rate)))
        }
    })
}
