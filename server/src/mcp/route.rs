//! The route layer's seam: where a tool call goes when its platform is owned by another
//! replica ([`Reply::Elsewhere`]).
//!
//! The MCP layer knows nothing of replicas: a [`Route`] is handed to it (with several
//! replicas, by `crate::cluster`), and the route layer asks it only for a call whose
//! tool said its platform is owned elsewhere. Without one (one process) that never
//! happens: the platform's task owns its platform.

use std::future::Future;
use std::pin::Pin;

use besluitbron_core::PlatformId;
use rmcp::model::JsonObject;

use crate::call::{Call, Reply, ToolResult};

/// A boxed future of the route layer.
pub type RouteFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Runs the call here again (time-out and tool), for when this replica owns the
/// platform after all (its lease was starting).
pub type Rerun<'a> = &'a (dyn Fn() -> RouteFuture<'a, Reply> + Send + Sync);

/// Where a call goes whose platform another replica owns.
pub trait Route: Send + Sync {
    /// The result of `call` (its tool, caller, progress and cancellation) with
    /// `arguments`, which found `platform` owned elsewhere: asked of the platform's
    /// owner, or here once this replica owns it (`rerun`), or an error that says why
    /// neither could be done in time (never a platform call outside a lease).
    fn route<'a>(
        &'a self,
        call: &'a Call,
        arguments: &'a JsonObject,
        platform: PlatformId,
        rerun: Rerun<'a>,
    ) -> RouteFuture<'a, ToolResult>;
}
