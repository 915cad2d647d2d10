//! BesluitBron's accept loop, in place of `axum::serve`: every client connection is
//! bounded in time and in number, and shutdown is bounded too.
//!
//! - A connection must send a request's headers within `HeaderReadTimeoutSecs` of its
//!   opening or of the previous answer; idle keep-alive connections close the same way.
//!   One timer per connection keeps this ([`Activity`]): it is set again only when it
//!   fires, so a request costs no timer of its own (hyper's header-read timer made and
//!   dropped one per request, under the runtime's timer lock). The body's time-out is
//!   the guard's (`BodyReadTimeoutSecs`, HTTP 408).
//! - At most `MaxConnections` connections are open, at most `MaxConnectionsPerAddress`
//!   from one address (a trusted proxy is exempt: its clients are counted by the limits
//!   on `X-Forwarded-For`). A connection over a cap gets one clear HTTP 503 with
//!   `Retry-After` and is closed.
//! - Shutdown ([`Connections::close_gracefully`], then [`Connections::close_all`]): the
//!   loop goes on accepting during the drain, so a client that connects then gets the
//!   guard's 503 and `/readyz` 503 instead of a refused connection; then every connection
//!   is asked to finish its current request, and after the grace whatever is left is
//!   dropped, half-sent requests included.
//!
//! Invariants: the open-connection counts are exact (a connection's permit is released
//! when its task ends, however it ends); nothing here reads a request.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::{Request, Response, StatusCode, header};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use tower::ServiceExt;

use crate::config::ConnectionConfig;

/// The address the server listens on, as the listener was bound (port included), on
/// every request it accepts: the guard accepts a browser page of this very address when
/// it is loopback (`guard::own_loopback_origin`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Listening(pub(crate) std::net::SocketAddr);

/// How long a refused connection may take to send the request it is refused for.
const REFUSAL_READ: Duration = Duration::from_secs(1);
/// Most refusals answered at once; beyond, a connection over a cap is closed unanswered.
const MAX_REFUSALS: usize = 64;

/// How many connections the kernel holds for `accept` on each of BesluitBron's
/// listeners. The standard library's 128 overflowed on the internal endpoint when
/// followers forwarded a flood at once (240 calls of six SDK sessions): a connection
/// beyond the queue waits for its SYN to be sent again (1 s, then 3 s), and a late
/// call's forward waited there while the owner admitted the flood. The kernel caps it
/// at `net.core.somaxconn`.
pub const BACKLOG: u32 = 1024;

/// A listener on `addr` with [`BACKLOG`] (on a runtime: it registers with the reactor).
pub fn bind(addr: std::net::SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // As the standard library's listeners do on Unix: a restart may bind the address
    // while the previous process's connections are in TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(BACKLOG)
}

/// The open connections, counted overall and per address.
#[derive(Default)]
struct Counts {
    total: usize,
    refusing: usize,
    per_address: HashMap<IpAddr, usize>,
}

/// Why a connection is not served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Refusal {
    Total,
    Address,
}

/// One open connection's place in the counts; released on drop.
struct Permit {
    counts: Arc<Mutex<Counts>>,
    address: Option<IpAddr>,
}

impl Drop for Permit {
    fn drop(&mut self) {
        let mut c = self.counts.lock().expect("connection counts lock");
        c.total -= 1;
        if let Some(a) = self.address
            && let Some(n) = c.per_address.get_mut(&a)
        {
            *n -= 1;
            if *n == 0 {
                c.per_address.remove(&a);
            }
        }
    }
}

/// A refused connection's place among the refusals being answered.
struct RefusalPermit(Arc<Mutex<Counts>>);

impl Drop for RefusalPermit {
    fn drop(&mut self) {
        self.0.lock().expect("connection counts lock").refusing -= 1;
    }
}

/// The accept loop's handle: counts, and the two steps of shutdown.
#[derive(Clone)]
pub struct Connections {
    counts: Arc<Mutex<Counts>>,
    graceful: CancellationToken,
    closed: CancellationToken,
}

impl Connections {
    /// Connections open now.
    pub fn open(&self) -> usize {
        self.counts.lock().expect("connection counts lock").total
    }

    /// Asks every connection to finish its current request and close; new connections
    /// are served one request and closed.
    pub fn close_gracefully(&self) {
        self.graceful.cancel();
    }

    /// Stops accepting and drops every connection still open.
    pub fn close_all(&self) {
        self.closed.cancel();
    }

    fn admit(&self, peer: IpAddr, exempt: bool, config: &ConnectionConfig) -> Result<Permit, Refusal> {
        let mut c = self.counts.lock().expect("connection counts lock");
        if c.total >= config.max_connections {
            return Err(Refusal::Total);
        }
        let address = (!exempt).then_some(peer);
        if let Some(a) = address {
            let n = c.per_address.entry(a).or_default();
            if *n >= config.max_connections_per_address {
                return Err(Refusal::Address);
            }
            *n += 1;
        }
        c.total += 1;
        Ok(Permit {
            counts: Arc::clone(&self.counts),
            address,
        })
    }

    fn refusing(&self) -> Option<RefusalPermit> {
        let mut c = self.counts.lock().expect("connection counts lock");
        if c.refusing >= MAX_REFUSALS {
            return None;
        }
        c.refusing += 1;
        Some(RefusalPermit(Arc::clone(&self.counts)))
    }
}

/// Starts accepting on `listener` and serving `router`; returns the handle and the
/// loop's task, which ends after [`Connections::close_all`] once every connection task
/// has been dropped.
pub fn spawn(
    listener: TcpListener,
    router: Router,
    config: ConnectionConfig,
    exempt: Vec<IpAddr>,
) -> (Connections, tokio::task::JoinHandle<()>) {
    let connections = Connections {
        counts: Arc::default(),
        graceful: CancellationToken::new(),
        closed: CancellationToken::new(),
    };
    let task = tokio::spawn(accept_loop(listener, router, config, exempt, connections.clone()));
    (connections, task)
}

async fn accept_loop(
    listener: TcpListener,
    router: Router,
    config: ConnectionConfig,
    exempt: Vec<IpAddr>,
    connections: Connections,
) {
    let mut tasks = JoinSet::new();
    let mut accept_errors = 0u64;
    let listening = listener.local_addr().ok().map(Listening);
    loop {
        let accepted = tokio::select! {
            biased;
            () = connections.closed.cancelled() => break,
            Some(_) = tasks.join_next(), if !tasks.is_empty() => continue,
            accepted = listener.accept() => accepted,
        };
        let (tcp, peer) = match accepted {
            Ok(a) => a,
            Err(error) => {
                // Out of descriptors, most likely: log, breathe, go on (the caps and the
                // time-outs free descriptors).
                accept_errors += 1;
                if accept_errors.is_power_of_two() {
                    tracing::warn!(%error, count = accept_errors, "could not accept a connection");
                }
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
        };
        // Answers go out as SSE in several writes; without TCP_NODELAY, Nagle's algorithm
        // and the client's delayed ACK hold each answer back by about 40 ms.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "could not set TCP_NODELAY");
        }
        let exempt_peer = exempt.contains(&peer.ip());
        match connections.admit(peer.ip(), exempt_peer, &config) {
            Ok(permit) => {
                let service = router.clone().map_request(move |mut r: Request<Incoming>| {
                    r.extensions_mut().insert(ConnectInfo(peer));
                    if let Some(listening) = listening {
                        r.extensions_mut().insert(listening);
                    }
                    r
                });
                // A token of the connection's own: every wake-up of the connection
                // asks it whether to finish, and the shared token's lock would be
                // taken by every connection on every wake-up.
                let graceful = connections.graceful.child_token();
                let header_timeout = Duration::from_secs(config.header_read_timeout_secs);
                tasks.spawn(async move {
                    let _permit = permit;
                    serve_one(tcp, service, header_timeout, graceful).await;
                });
            }
            Err(refusal) => {
                let Some(refusing) = connections.refusing() else {
                    continue;
                };
                let message = match refusal {
                    Refusal::Total => format!(
                        "BesluitBron has as many connections open as it allows ({}); retry shortly\n",
                        config.max_connections
                    ),
                    Refusal::Address => format!(
                        "BesluitBron allows {} open connections per client address; close idle ones or reuse them\n",
                        config.max_connections_per_address
                    ),
                };
                tracing::debug!(%peer, ?refusal, "connection refused");
                tasks.spawn(async move {
                    let _refusing = refusing;
                    refuse(tcp, message).await;
                });
            }
        }
    }
    tasks.shutdown().await;
}

/// One connection's requests, as its idle timer reads them: how many are being
/// answered now, and when the last answer was done (or the connection opened).
///
/// Invariant: `answering` counts the answers whose body has not been dropped yet; an
/// answer's end moves `idle_since` forward, never back.
struct Activity {
    opened: Instant,
    answering: AtomicUsize,
    /// Nanoseconds from `opened` to the end of the last answer.
    idle_since: AtomicU64,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            opened: Instant::now(),
            answering: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
        }
    }

    /// A request's headers are in and its answer begins.
    fn begin(&self) {
        self.answering.fetch_add(1, Ordering::Relaxed);
    }

    /// An answer is done (its body dropped).
    fn end(&self) {
        let since = u64::try_from(self.opened.elapsed().as_nanos()).unwrap_or(u64::MAX);
        self.idle_since.fetch_max(since, Ordering::Relaxed);
        self.answering.fetch_sub(1, Ordering::Release);
    }

    /// When the connection must have sent its next request's headers, if it has to
    /// now (`None` while an answer is under way).
    fn headers_due(&self, timeout: Duration) -> Option<Instant> {
        if self.answering.load(Ordering::Acquire) > 0 {
            return None;
        }
        let since = Duration::from_nanos(self.idle_since.load(Ordering::Relaxed));
        Some(self.opened + since + timeout)
    }
}

/// A response body that holds `T` until it is dropped (a permit, the end of an answer).
pub(crate) struct Holding<B, T> {
    pub(crate) inner: B,
    pub(crate) _held: T,
}

impl<B, T> axum::body::HttpBody for Holding<B, T>
where
    B: axum::body::HttpBody + Unpin,
    T: Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

/// One answer under way in its connection's [`Activity`]; dropping it ends the answer.
struct AnswerEnd(Arc<Activity>);

impl Drop for AnswerEnd {
    fn drop(&mut self) {
        self.0.end();
    }
}

/// An answer's body: it ends the answer when it is dropped (the end is always there; the
/// future that hands it on holds it as an `Option`).
type Answer<B> = Holding<B, Option<AnswerEnd>>;

/// The connection's service: each request begins an answer in its [`Activity`], which
/// its response's body (or the request's end, if it has none yet) ends.
#[derive(Clone)]
struct Tracked<S> {
    inner: S,
    activity: Arc<Activity>,
}

impl<S> tower::Service<Request<Incoming>> for Tracked<S>
where
    S: tower::Service<Request<Incoming>, Response = Response<Body>, Error = Infallible>,
{
    type Response = Response<Answer<Body>>;
    type Error = Infallible;
    type Future = Answering<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, request: Request<Incoming>) -> Self::Future {
        self.activity.begin();
        Answering {
            inner: self.inner.call(request),
            end: Some(AnswerEnd(Arc::clone(&self.activity))),
        }
    }
}

pin_project_lite::pin_project! {
    /// A request being answered; its answer ends when the response's body is dropped,
    /// or with this future, if the request goes before it has a response.
    struct Answering<F> {
        #[pin]
        inner: F,
        end: Option<AnswerEnd>,
    }
}

impl<F> Future for Answering<F>
where
    F: Future<Output = Result<Response<Body>, Infallible>>,
{
    type Output = Result<Response<Answer<Body>>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let Ok(response) = std::task::ready!(this.inner.poll(cx));
        // Ready once: the answer's end passes to its body.
        let end = this.end.take();
        Poll::Ready(Ok(response.map(|inner| Holding { inner, _held: end })))
    }
}

async fn serve_one<S>(tcp: tokio::net::TcpStream, service: S, header_timeout: Duration, graceful: CancellationToken)
where
    S: tower::Service<Request<Incoming>, Response = Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
{
    let activity = Arc::new(Activity::new());
    let service = Tracked {
        inner: service,
        activity: Arc::clone(&activity),
    };
    let conn = http1::Builder::new().serve_connection(TokioIo::new(tcp), TowerToHyperService::new(service));
    tokio::pin!(conn);
    let idle = tokio::time::sleep(header_timeout);
    tokio::pin!(idle);
    let mut draining = false;
    if graceful.is_cancelled() {
        conn.as_mut().graceful_shutdown();
        draining = true;
    }
    let result = loop {
        tokio::select! {
            biased;
            result = conn.as_mut() => break Some(result),
            () = graceful.cancelled(), if !draining => {
                conn.as_mut().graceful_shutdown();
                draining = true;
            }
            () = idle.as_mut() => match activity.headers_due(header_timeout) {
                // Silent for too long since the last answer (or since it opened), or
                // still sending the next request's headers: closed, as hyper's
                // header-read time-out closes it.
                Some(due) if due <= Instant::now() => break None,
                Some(due) => idle.as_mut().reset(due),
                // An answer is under way; its body decides when it is done.
                None => idle.as_mut().reset(Instant::now() + header_timeout),
            },
        }
    };
    match result {
        Some(Err(error)) => tracing::debug!(%error, "connection ended with an error"),
        Some(Ok(())) => {}
        None => tracing::debug!("connection closed: no request headers within the time-out"),
    }
}

/// Answers one request on `tcp` with 503 and `message`, then closes.
async fn refuse(tcp: tokio::net::TcpStream, message: String) {
    let service = hyper::service::service_fn(move |_request: Request<Incoming>| {
        let message = message.clone();
        async move {
            let response = Response::builder()
                .status(StatusCode::SERVICE_UNAVAILABLE)
                .header(header::RETRY_AFTER, "5")
                .header(header::CONTENT_TYPE, "text/plain; charset=utf-8")
                .header(header::CONNECTION, "close")
                .body(Body::from(message))
                .unwrap_or_else(|_| Response::new(Body::empty()));
            Ok::<_, Infallible>(response)
        }
    });
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(REFUSAL_READ)
        .keep_alive(false);
    let conn = builder.serve_connection(TokioIo::new(tcp), service);
    let _ = tokio::time::timeout(REFUSAL_READ * 2, conn).await;
}

/// Raises the soft limit on open files to the hard limit, where the system allows, so
/// the connection caps rather than the descriptor table bound what clients can hold.
/// Returns the soft limit now in force.
pub fn raise_open_files_limit() -> Option<u64> {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(n) => Some(n),
        Err(error) => {
            tracing::warn!(%error, "could not raise the open files limit");
            None
        }
    }
}
