//! The accept loop every fake runs on: one tokio task per listener, one task per
//! connection, HTTP/1.1 through hyper, the fake's axum `Router` as the service, with the
//! peer's address available to handlers (`ConnectInfo<SocketAddr>`, as `axum::serve`
//! provides it).
//!
//! It exists (instead of `axum::serve`) for one fault: an answer marked with
//! [`dropped_connection`] is never written — the service fails, and hyper closes the
//! connection without a status line, so the client sees the connection closed before a
//! response. An axum handler alone cannot do that; it can only answer.
//!
//! Invariants: the loop only ever accepts on the listener it is given; it ends only when
//! its task is aborted ([`FakeHandle::stop`](crate::FakeHandle::stop)) or the runtime ends
//! (connections already open finish their exchange). An error on one connection ends that
//! connection only.
//!
//! What this module does not do: know which fakes the router holds, speak HTTP/2 or TLS,
//! or shut down gracefully.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response, StatusCode};
use hyper::body::Incoming;
use hyper::service::{Service, service_fn};
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::AbortHandle;

/// Marks an answer that must not be sent: the connection is dropped instead.
#[derive(Clone, Copy, Debug)]
struct DropConnection;

/// An answer that [`spawn_router`]'s loop never writes: it drops the connection instead.
pub(crate) fn dropped_connection() -> Response<Body> {
    let mut response = Response::new(Body::empty());
    // Should the marker ever be lost on the way out, a 500 is still no success.
    *response.status_mut() = StatusCode::INTERNAL_SERVER_ERROR;
    response.extensions_mut().insert(DropConnection);
    response
}

/// The service's error for a [`dropped_connection`]: hyper closes the connection on it.
#[derive(Debug)]
struct ConnectionDropped;

impl std::fmt::Display for ConnectionDropped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the fake dropped the connection on purpose")
    }
}

impl std::error::Error for ConnectionDropped {}

/// Serves `router` on `listener` in a task of its own; returns the bound address and the
/// task's abort handle.
pub(crate) fn spawn_router(listener: TcpListener, router: Router) -> std::io::Result<(SocketAddr, AbortHandle)> {
    let local_addr = listener.local_addr()?;
    let task = tokio::spawn(async move {
        loop {
            match listener.accept().await {
                Ok((tcp, peer)) => {
                    tokio::spawn(serve_connection(tcp, peer, router.clone()));
                }
                // A connection that failed before it was accepted concerns only its client.
                Err(e) if is_connection_error(&e) => {}
                // Out of file descriptors or similar: wait for some to be freed, as
                // `axum::serve` does, rather than spin.
                Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
            }
        }
    });
    Ok((local_addr, task.abort_handle()))
}

/// Serves one connection until the client closes it or an answer drops it.
async fn serve_connection(tcp: tokio::net::TcpStream, peer: SocketAddr, router: Router) {
    let routes = TowerToHyperService::new(router);
    let service = service_fn(move |request: Request<Incoming>| {
        let mut request = request.map(Body::new);
        request.extensions_mut().insert(ConnectInfo(peer));
        let answer = routes.call(request);
        async move {
            let response: Response<Body> = answer.await.unwrap_or_else(|e: Infallible| match e {});
            if response.extensions().get::<DropConnection>().is_some() {
                return Err(ConnectionDropped);
            }
            Ok(response)
        }
    });
    // The only errors are the client's (it went away) or the deliberate drop; either way
    // this connection is over and nothing else is affected.
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(tcp), service)
        .await;
}

/// Accept errors that concern one connection, not the listener.
fn is_connection_error(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionRefused
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::ConnectionReset
    )
}
