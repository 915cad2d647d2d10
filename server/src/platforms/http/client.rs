//! One platform's reqwest client: [`PlatformHttp::send`] (and [`PlatformHttp::get`])
//! makes exactly one attempt and classifies it: the answer, or an error that carries
//! what another attempt may do ([`super::Retry`]).
//!
//! Nothing here retries or sleeps: another attempt is the platform path's decision
//! (`besluitbron_core::path`), taken through the platform's fair queue, so every
//! attempt that leaves is an admission (R-L8).
//!
//! Invariants: a body is read in chunks and never buffered past
//! [`HttpConfig::max_body_bytes`]; only an idempotent request is ever classified
//! retryable ([`super::Retry::Yes`]): a failure of any other may have been acted on.

use std::time::{Duration, SystemTime};

use besluitbron_core::PlatformId;
use reqwest::Url;
use reqwest::header::{self, HeaderMap, HeaderValue};
use tracing::Instrument as _;

use crate::telemetry::spans;

use super::{
    Fetched, PlatformError, PlatformRequest, Retry, challenge_signal, header_u64, rate_limited_wait, retry_after,
};

/// The default [`HttpConfig::max_body_bytes`]: 16 MiB, as a platform's settings default.
pub use crate::config::DEFAULT_MAX_BODY_BYTES;

/// Largest buffer reserved up front from a `Content-Length`, so a platform that
/// announces much and sends little does not make BesluitBron allocate the whole cap.
const PREALLOCATE_MAX_BYTES: u64 = 1024 * 1024;

/// The longest request URL BesluitBron sends, in bytes. Tools bound their arguments far
/// below it; this catches whatever slips through, before anything is sent, as a refusal
/// of the request (not retried, not an outage of the platform).
pub const MAX_REQUEST_URL_BYTES: usize = 8 * 1024;

/// How a platform client talks HTTP. Time-outs carry their unit in the name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpConfig {
    /// Contact address put in the User-Agent, as platforms ask of reusers.
    pub contact: String,
    /// Time allowed to establish a TCP (and TLS) connection.
    pub connect_timeout_ms: u64,
    /// Time allowed for one attempt, from sending to the last byte of the body.
    pub request_timeout_ms: u64,
    /// Idle connections are closed after this long.
    pub pool_idle_timeout_ms: u64,
    /// Idle connections kept per host.
    pub pool_max_idle_per_host: usize,
    /// The largest body read from this platform, in bytes (default
    /// [`DEFAULT_MAX_BODY_BYTES`], 16 MiB: a 250-row OData page or a long document's
    /// text is well under 1 MiB, a large PDF a few MiB). An answer that announces more
    /// in `Content-Length` is refused before its body is read; one that sends more
    /// (chunked, or lying about its length) is dropped as soon as it passes the limit.
    /// Either is [`PlatformError::TooLarge`]. At least 1.
    pub max_body_bytes: u64,
}

impl Default for HttpConfig {
    fn default() -> HttpConfig {
        HttpConfig {
            contact: "beheer@besluitbron.invalid".to_owned(),
            connect_timeout_ms: 5_000,
            request_timeout_ms: 30_000,
            pool_idle_timeout_ms: 90_000,
            pool_max_idle_per_host: 8,
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// One platform's HTTP client: a connection pool and its body cap.
#[derive(Debug)]
pub struct PlatformHttp {
    platform: PlatformId,
    client: reqwest::Client,
    request_timeout: Duration,
    max_body_bytes: u64,
}

/// The User-Agent BesluitBron sends: product, version and contact.
pub fn user_agent(contact: &str) -> String {
    format!(
        "BesluitBron/{} (+https://example.invalid/besluitbron; {contact})",
        env!("CARGO_PKG_VERSION")
    )
}

impl PlatformHttp {
    /// Builds the client for `platform`, sending `accept` as the `Accept` header unless
    /// a request names its own ([`PlatformRequest::with_accept`]).
    pub fn new(platform: PlatformId, config: &HttpConfig, accept: &'static str) -> Result<PlatformHttp, PlatformError> {
        let config_error = |detail: String| PlatformError::Config { platform, detail };
        let mut headers = HeaderMap::new();
        headers.insert(header::ACCEPT, HeaderValue::from_static(accept));
        let redirects = reqwest::redirect::Policy::custom(|attempt| {
            let same_host = attempt.previous().first().is_some_and(|first| {
                first.host_str() == attempt.url().host_str() && first.port() == attempt.url().port()
            });
            if attempt.previous().len() > 3 || !same_host {
                attempt.stop()
            } else {
                attempt.follow()
            }
        });
        let client = reqwest::Client::builder()
            .user_agent(user_agent(&config.contact))
            .default_headers(headers)
            .connect_timeout(Duration::from_millis(config.connect_timeout_ms))
            .timeout(Duration::from_millis(config.request_timeout_ms))
            .pool_idle_timeout(Duration::from_millis(config.pool_idle_timeout_ms))
            .pool_max_idle_per_host(config.pool_max_idle_per_host)
            .redirect(redirects)
            .build()
            .map_err(|e| config_error(format!("cannot build the HTTP client: {e}")))?;
        if config.max_body_bytes == 0 {
            return Err(config_error("max_body_bytes must be at least 1".into()));
        }
        Ok(PlatformHttp {
            platform,
            client,
            request_timeout: Duration::from_millis(config.request_timeout_ms),
            max_body_bytes: config.max_body_bytes,
        })
    }

    /// The platform this client talks to.
    pub fn platform(&self) -> PlatformId {
        self.platform
    }

    /// The largest body this client reads, in bytes.
    pub fn max_body_bytes(&self) -> u64 {
        self.max_body_bytes
    }

    /// GETs `url`: [`PlatformHttp::send`] of [`PlatformRequest::get`].
    pub async fn get(&self, url: Url) -> Result<Fetched, PlatformError> {
        self.send(&PlatformRequest::get(url)).await
    }

    /// Exactly one attempt at `request` within the configured request time-out. Nothing
    /// is retried or slept here.
    ///
    /// Returns the answer for any status but 429 and 5xx (the connector reads it, e.g.
    /// with [`super::read_json`]: a 2xx, a 3xx that is not followed, a 4xx other than
    /// 429, the whole body within the cap). Errors: a 429 is
    /// [`PlatformError::RateLimited`] (the platform did not act on it; wait and ask
    /// again); a 5xx is [`PlatformError::Upstream`], or [`PlatformError::Overloaded`]
    /// when it asked for a wait; a connection that failed or broke mid-answer is
    /// [`PlatformError::Unreachable`] — those three retryable only for an idempotent
    /// request. Never retryable: running out of time ([`PlatformError::Timeout`]: don't
    /// pile requests onto a slow platform), a body over the cap
    /// ([`PlatformError::TooLarge`]), a bot challenge ([`PlatformError::Challenge`]), a
    /// redirect reqwest refused, a request that could not be built
    /// ([`PlatformError::Config`]).
    pub async fn send(&self, request: &PlatformRequest) -> Result<Fetched, PlatformError> {
        // The HTTP client span (docs/tracing.md), under the attempt's.
        let span = spans::http_client(request.method().as_str(), request.url());
        let answer = self
            .attempt(request, self.request_timeout)
            .instrument(span.clone())
            .await;
        match &answer {
            Ok(fetched) => spans::http_outcome(&span, Some(fetched.status.as_u16()), None),
            Err(e) => spans::http_outcome(&span, answered_status(e), Some(e.label())),
        }
        answer
    }

    /// One attempt bounded by `timeout` (from sending to the last byte of the body).
    async fn attempt(&self, request: &PlatformRequest, timeout: Duration) -> Result<Fetched, PlatformError> {
        let platform = self.platform;
        let idempotent = request.is_idempotent();
        check_url_length(platform, request)?;
        let transport = |e: reqwest::Error| transport_error(platform, timeout, idempotent, e);
        let mut response = match request.builder(&self.client).timeout(timeout).send().await {
            Ok(response) => response,
            Err(e) => return Err(transport(e)),
        };
        let status = response.status();
        if let Some(refused) = refused_answer(platform, idempotent, &response) {
            return Err(refused);
        }
        let body = self.read_body(&mut response, transport).await?;
        Ok(Fetched {
            status,
            url: response.url().clone(),
            headers: std::mem::take(response.headers_mut()),
            body,
        })
    }

    /// The body of `response`, read within `max_body_bytes`.
    async fn read_body(
        &self,
        response: &mut reqwest::Response,
        transport: impl Fn(reqwest::Error) -> PlatformError,
    ) -> Result<Vec<u8>, PlatformError> {
        let platform = self.platform;
        let too_large = |size_bytes: Option<u64>| {
            Err(PlatformError::TooLarge {
                platform,
                limit_bytes: self.max_body_bytes,
                size_bytes,
            })
        };
        let declared = response
            .content_length()
            .or_else(|| header_u64(response.headers(), header::CONTENT_LENGTH.as_str()));
        if let Some(len) = declared.filter(|&len| len > self.max_body_bytes) {
            // Refused before reading: dropping the response closes the connection.
            return too_large(Some(len));
        }
        let reserve = declared
            .unwrap_or(0)
            .min(self.max_body_bytes)
            .min(PREALLOCATE_MAX_BYTES);
        let mut body = Vec::with_capacity(reserve as usize);
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    if (body.len() + chunk.len()) as u64 > self.max_body_bytes {
                        // Stop at the cap; dropping the response closes the connection
                        // before the rest is sent. (What it announced, if anything, was
                        // within the cap: its size is unknown.)
                        return too_large(None);
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return Err(transport(e)),
            }
        }
        Ok(body)
    }
}

/// The HTTP status a refused answer carried, where its error keeps it (a 429 is the
/// `rate_limited` error itself).
fn answered_status(error: &PlatformError) -> Option<u16> {
    match error {
        PlatformError::RateLimited { .. } => Some(429),
        PlatformError::Upstream { status, .. } | PlatformError::AccessDenied { status, .. } => Some(*status),
        _ => None,
    }
}

/// A request whose address is longer than BesluitBron sends is refused unsent.
fn check_url_length(platform: PlatformId, request: &PlatformRequest) -> Result<(), PlatformError> {
    let url_bytes = request.url().as_str().len();
    if url_bytes > MAX_REQUEST_URL_BYTES {
        return Err(PlatformError::BadRequest {
            sent: false,
            platform,
            code: "request_too_long".to_owned(),
            message: format!(
                "the request would be {url_bytes} bytes long, more than the {MAX_REQUEST_URL_BYTES} BesluitBron \
                 sends; use fewer or shorter arguments"
            ),
        });
    }
    Ok(())
}

/// A failure another attempt may mend, for an idempotent request only.
fn retry_if(idempotent: bool, after: Option<Duration>) -> Retry {
    if idempotent { Retry::Yes { after } } else { Retry::No }
}

/// A transport failure: a broken connection may be retried (idempotent only), the rest
/// never.
fn transport_error(platform: PlatformId, timeout: Duration, idempotent: bool, e: reqwest::Error) -> PlatformError {
    if e.is_timeout() {
        PlatformError::Timeout {
            platform,
            after_ms: timeout.as_millis() as u64,
        }
    } else if e.is_redirect() {
        PlatformError::Garbage {
            platform,
            detail: "a redirect BesluitBron does not follow".into(),
        }
    } else if e.is_builder() {
        PlatformError::Config {
            platform,
            detail: format!("cannot build the request: {}", describe(e)),
        }
    } else {
        // Refused connections, resets and truncated bodies: the connection
        // failed, or failed mid-answer.
        PlatformError::Unreachable {
            platform,
            detail: describe(e),
            retry: retry_if(idempotent, None),
        }
    }
}

/// The error an answer is, before its body is read: a challenge page, 429, or a 5xx.
fn refused_answer(platform: PlatformId, idempotent: bool, response: &reqwest::Response) -> Option<PlatformError> {
    let status = response.status();
    if let Some(signal) = challenge_signal(response.headers()) {
        return Some(PlatformError::Challenge { platform, signal });
    }
    if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
        // Given for every request, idempotent or not: the platform did not act on it.
        return Some(PlatformError::RateLimited {
            platform,
            retry_after: rate_limited_wait(response.headers(), SystemTime::now()),
        });
    }
    if status.is_server_error() {
        // The body of a 5xx is not read: nobody uses it, and dropping the response
        // closes its connection rather than keeping a troubled one in the pool.
        return Some(match retry_after(response.headers(), SystemTime::now()) {
            Some(wait) => PlatformError::Overloaded {
                platform,
                signal: format!("HTTP {}", status.as_u16()),
                retry_after: wait,
                retry: retry_if(idempotent, Some(wait)),
            },
            None => PlatformError::Upstream {
                platform,
                status: status.as_u16(),
                retry: retry_if(idempotent, None),
            },
        });
    }
    None
}

/// The error chain of a reqwest error in one line (the top level alone says little),
/// without the request's URL: an error text never carries the platform's address or the
/// query an assistant's arguments became.
fn describe(error: reqwest::Error) -> String {
    let error = error.without_url();
    let mut text = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
