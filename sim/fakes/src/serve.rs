//! The accept loop every fake runs on: one tokio task per listener, serving an axum
//! `Router` with the peer's address available to handlers (`ConnectInfo<SocketAddr>`).
//!
//! Invariants: the loop only ever accepts on the listener it is given; it ends only when
//! its task is aborted ([`FakeHandle::stop`](crate::FakeHandle::stop)) or the runtime ends.
//!
//! What this module does not do: know which fakes the router holds.

use std::net::SocketAddr;

use axum::Router;
use tokio::net::TcpListener;
use tokio::task::AbortHandle;

/// Serves `router` on `listener` in a task of its own; returns the bound address and the
/// task's abort handle.
pub(crate) fn spawn_router(listener: TcpListener, router: Router) -> std::io::Result<(SocketAddr, AbortHandle)> {
    let local_addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        let service = router.into_make_service_with_connect_info::<SocketAddr>();
        // An accept loop only ends with an I/O error on the listener itself; the fake
        // then simply stops answering, which the clients see as "unreachable".
        let _ = axum::serve(listener, service).await;
    });
    Ok((local_addr, task.abort_handle()))
}
