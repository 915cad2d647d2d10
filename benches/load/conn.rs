//! The client side: one keep-alive HTTP/1.1 connection per client ([`Conn`], hyper's
//! connection API), and the client it serves ([`Target`]: a connection, an MCP address and
//! the session, if any).
//!
//! Invariants: a client keeps its one connection for the whole run (across turns); a
//! connection carries one request at a time.
//!
//! What this module does not do: measure (see `drive.rs`) or parse answers beyond the
//! session id and the cheap check of `call.rs`.

use std::net::SocketAddr;

use anyhow::{Context, bail};
use axum::body::Bytes;
use axum::http::{HeaderMap, HeaderValue, Request, StatusCode, header};
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use serde_json::json;

use crate::call::{Asks, PROTOCOL_VERSION, STATELESS_VERSION, answer_ok, call};

/// One keep-alive HTTP/1.1 connection, driven through hyper's connection API. The load
/// generator shares the cores with the servers it measures, so it does as little as it can
/// per request: no URL parsing, no pool, headers built from constants.
pub(crate) struct Conn {
    send: http1::SendRequest<Full<Bytes>>,
    host: HeaderValue,
    /// The task driving the connection: aborted when the `Conn` is dropped, which closes
    /// the connection even with a request in flight (a client that gives up hangs up).
    driver: tokio::task::AbortHandle,
}

impl Drop for Conn {
    fn drop(&mut self) {
        self.driver.abort();
    }
}

impl Conn {
    pub(crate) async fn open(addr: SocketAddr) -> anyhow::Result<Conn> {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .with_context(|| format!("connect to {addr}"))?;
        tcp.set_nodelay(true)?;
        let (send, connection) = http1::handshake(TokioIo::new(tcp))
            .await
            .context("HTTP/1.1 handshake")?;
        let driver = tokio::spawn(async move {
            // Ends when the server closes the connection; a request on it then fails.
            let _ = connection.await;
        })
        .abort_handle();
        Ok(Conn {
            send,
            host: HeaderValue::from_str(&addr.to_string())?,
            driver,
        })
    }

    /// POSTs `body` to `path` with the MCP headers once the connection is free; the
    /// status, the headers and the whole body.
    pub(crate) async fn post(
        &mut self,
        path: &str,
        session: Option<&str>,
        asks: Asks,
        body: Vec<u8>,
    ) -> anyhow::Result<(StatusCode, HeaderMap, Bytes)> {
        let call = call();
        let version = if call.stateless {
            STATELESS_VERSION
        } else {
            PROTOCOL_VERSION
        };
        let mut req = Request::post(path)
            .header(header::CONTENT_TYPE, "application/json")
            .header(header::ACCEPT, "application/json, text/event-stream")
            .header("mcp-protocol-version", version);
        if call.stateless {
            req = match asks {
                Asks::List => req.header("mcp-method", "tools/list"),
                Asks::Call(tool) => req.header("mcp-method", "tools/call").header("mcp-name", tool),
                Asks::Handshake => req,
            };
        }
        if let Some(id) = session {
            req = req.header("mcp-session-id", id);
        }
        let request = req
            .header(header::HOST, self.host.clone())
            .body(Full::new(Bytes::from(body)))?;
        self.send.ready().await.context("connection closed")?;
        let (parts, body) = self.send.send_request(request).await?.into_parts();
        let body = body.collect().await?.to_bytes();
        Ok((parts.status, parts.headers, body))
    }
}

/// Where one client sends its requests.
pub(crate) struct Target {
    pub(crate) conn: Conn,
    pub(crate) path: &'static str,
    pub(crate) session: Option<String>,
    /// The JSON-RPC id of this client's next measured request: it goes on across turns,
    /// since a session's reused id is a retry that BesluitBron answers from its replay
    /// table (several replicas: from the shared one, without forwarding).
    pub(crate) next_id: u64,
}

impl Target {
    /// A client on `conn` sending to `path`, in `session` if any.
    pub(crate) fn new(conn: Conn, path: &'static str, session: Option<String>) -> Target {
        Target {
            conn,
            path,
            session,
            // Above the ids of the handshake and the warm-up calls.
            next_id: 1_000,
        }
    }

    /// Sends `body` once, outside any measurement: the answer must be a 200 with a
    /// JSON-RPC result that is not a tool error (`what` names the server in the error).
    pub(crate) async fn answer_once(&mut self, what: &str, body: Vec<u8>) -> anyhow::Result<Bytes> {
        let (status, _, answer) = self
            .conn
            .post(self.path, self.session.as_deref(), call().asks(), body)
            .await?;
        if status != StatusCode::OK || !answer_ok(&answer) {
            bail!(
                "{what}: {status} {}",
                String::from_utf8_lossy(&answer[..answer.len().min(300)])
            );
        }
        Ok(answer)
    }

    /// A client of the MCP address `path`: its own connection, and an MCP session unless
    /// the run is stateless.
    pub(crate) async fn mcp(addr: SocketAddr, path: &'static str) -> anyhow::Result<Target> {
        let conn = Conn::open(addr).await?;
        if call().stateless {
            return Ok(Target::new(conn, path, None));
        }
        Target::open_session(conn, path).await
    }

    /// The legacy handshake: `initialize`, the session id, `notifications/initialized`.
    async fn open_session(mut conn: Conn, path: &'static str) -> anyhow::Result<Target> {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": PROTOCOL_VERSION, "capabilities": {},
            "clientInfo": {"name": "besluitbron-load", "version": "1"}}});
        let (status, headers, body) = conn
            .post(path, None, Asks::Handshake, init.to_string().into_bytes())
            .await?;
        let id = headers
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let Some(id) = id.filter(|_| status.is_success()) else {
            bail!(
                "initialize: {status} without a session id: {}",
                String::from_utf8_lossy(&body)
            );
        };
        let notified = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        let (status, _, body) = conn
            .post(path, Some(&id), Asks::Handshake, notified.to_string().into_bytes())
            .await?;
        if !status.is_success() {
            bail!(
                "notifications/initialized: {status}: {}",
                String::from_utf8_lossy(&body)
            );
        }
        Ok(Target::new(conn, path, Some(id)))
    }
}

/// A session's connections as an SDK's HTTP client keeps them (`--late-session`'s pooled
/// shape): a call takes an idle keep-alive connection or, below the pool's limit, opens
/// one; at the limit it waits for one to come back; a connection goes back to the pool
/// when its answer is in (and is dropped when its request failed).
pub(crate) struct Pool {
    addr: SocketAddr,
    idle: std::sync::Mutex<Vec<Conn>>,
    /// One permit per connection the pool may have out at once.
    slots: tokio::sync::Semaphore,
}

impl Pool {
    /// A pool of at most `limit` connections to `addr`, holding `first` (the session's
    /// handshake connection) as idle.
    pub(crate) fn new(addr: SocketAddr, limit: usize, first: Conn) -> Pool {
        Pool {
            addr,
            idle: std::sync::Mutex::new(vec![first]),
            slots: tokio::sync::Semaphore::new(limit),
        }
    }

    /// [`Conn::post`] on a connection of the pool.
    pub(crate) async fn post(
        &self,
        path: &str,
        session: Option<&str>,
        asks: Asks,
        body: Vec<u8>,
    ) -> anyhow::Result<(StatusCode, HeaderMap, Bytes)> {
        let _slot = self.slots.acquire().await.context("the pool is closed")?;
        let idle = self.idle.lock().expect("pool lock").pop();
        let mut conn = match idle {
            Some(conn) => conn,
            None => Conn::open(self.addr).await?,
        };
        let answer = conn.post(path, session, asks, body).await?;
        self.idle.lock().expect("pool lock").push(conn);
        Ok(answer)
    }
}
