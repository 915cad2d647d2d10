//! The route layer's seam: where a tool call goes when its platform is owned by another
//! replica ([`Reply::Elsewhere`]).
//!
//! The MCP layer knows nothing of replicas: a [`Route`] is handed to it (with several
//! replicas, by `crate::cluster`), and the route layer asks it only for a call whose
//! tool said its platform is owned elsewhere. Without one (one process) that never
//! happens: the platform's task owns its platform.
//!
//! A call asks for one of four answers ([`Want`]): its tool's result, its search tool's
//! question answered typed — as a [`Listing`] (a part of `search`) or as the search
//! page's [`Hits`] —, or its reading tool's record as a [`Document`] (`fetch` with the
//! reading tool's own arguments). The owner answers what was asked, so a listing comes
//! back a listing and a document a document, never read back from a result's JSON.

use std::future::Future;
use std::pin::Pin;

use besluitbron_core::PlatformId;
use rmcp::model::JsonObject;

use crate::call::{Call, Document, ReadResult, Reply, ToolResult, tool_error};
use crate::connectors::page_spec::Hits;
use crate::connectors::vocabulary::Listing;

/// A boxed future of the route layer.
pub type RouteFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// What a call asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Want {
    /// Its tool's result, as `tools/call` shows it.
    Result,
    /// Its search tool's question answered as a listing (a part of `search`).
    Listing,
    /// Its search tool's question answered as the search page's hits.
    Hits,
    /// Its reading tool's record, as `fetch` answers it.
    Document,
}

/// What a call answered: its tool's result (an error included, whatever was wanted), or
/// the listing it was asked for.
#[derive(Debug)]
pub enum Answer {
    /// The tool's result, or the error that stands for a listing.
    Result(ToolResult),
    /// The search tool's question answered as a listing.
    Listed(Box<Listing>),
    /// The search tool's question answered as the search page's hits.
    Hits(Box<Hits>),
    /// The reading tool's record, as `fetch` answers it.
    Document(Box<Document>),
}

impl Answer {
    /// As a tool's result: a listing is never one (a call that wants a result is never
    /// answered with a listing), so it becomes the error that says so.
    pub fn into_result(self) -> ToolResult {
        match self {
            Answer::Result(result) => result,
            Answer::Listed(_) | Answer::Hits(_) => {
                tool_error("BesluitBron answered a listing where a result was asked").into()
            }
            Answer::Document(_) => tool_error("BesluitBron answered a document where a result was asked").into(),
        }
    }
}

/// What the stack below the route gives back: the answer, or word that `platform` is
/// owned by another replica.
pub type Answered = Result<Answer, PlatformId>;

impl From<Reply> for Answered {
    fn from(reply: Reply) -> Answered {
        match reply {
            Reply::Result(result) => Ok(Answer::Result(result)),
            Reply::Elsewhere(platform) => Err(platform),
        }
    }
}

/// The stack below the route of a listing: the listing, or the reply that stands for it.
pub fn listed(listed: Result<Listing, Reply>) -> Answered {
    match listed {
        Ok(listing) => Ok(Answer::Listed(Box::new(listing))),
        Err(reply) => reply.into(),
    }
}

/// The stack below the route of the search page's hits: the hits, or the reply that
/// stands for them.
pub fn hits(hits: Result<Hits, Reply>) -> Answered {
    match hits {
        Ok(hits) => Ok(Answer::Hits(Box::new(hits))),
        Err(reply) => reply.into(),
    }
}

/// The stack below the route of a reading tool's record: the document, or the reply
/// that stands for it (a read whose kept answer cannot be shown is the error that says
/// so).
pub fn document(read: ReadResult) -> Answered {
    match read.map(crate::call::Read::document) {
        Ok(Ok(document)) => Ok(Answer::Document(Box::new(document))),
        Ok(Err(e)) => Ok(Answer::Result(tool_error(e).into())),
        Err(reply) => reply.into(),
    }
}

/// Runs the call here again (time-out and tool), for when this replica owns the
/// platform after all (its lease was starting).
pub type Rerun<'a> = &'a (dyn Fn() -> RouteFuture<'a, Answered> + Send + Sync);

/// Where a call goes whose platform another replica owns.
pub trait Route: Send + Sync {
    /// The answer wanted of `call` (its tool, caller, progress and cancellation) with
    /// `arguments`, which found a platform owned elsewhere (`owned`: that platform, and
    /// what is wanted): asked of the platform's
    /// owner, or here once this replica owns it (`rerun`), or an error that says why
    /// neither could be done in time (never a platform call outside a lease).
    fn route<'a>(
        &'a self,
        call: &'a Call,
        arguments: &'a JsonObject,
        owned: (PlatformId, Want),
        rerun: Rerun<'a>,
    ) -> RouteFuture<'a, Answer>;
}
