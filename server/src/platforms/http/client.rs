//! One platform's reqwest client: [`PlatformHttp::send_once`] makes exactly one
//! attempt and classifies it ([`Attempt`]); [`PlatformHttp::send`] and
//! [`PlatformHttp::get`] make one attempt and report it as a result.
//!
//! Nothing here retries or sleeps: another attempt is the platform path's decision
//! (`besluitbron_core::path`), taken through the platform's fair queue, so every
//! attempt that leaves is an admission (R-L8). The error says whether another attempt
//! may mend it ([`PlatformError::is_retryable`]).
//!
//! Invariants: a body is read in chunks and never buffered past
//! [`HttpConfig::max_body_bytes`]; only an idempotent request is ever classified
//! [`Attempt::Retryable`].

use std::time::{Duration, SystemTime};

use besluitbron_core::PlatformId;
use reqwest::Url;
use reqwest::header::{self, HeaderMap, HeaderValue};

use super::{Fetched, PlatformError, PlatformRequest, challenge_signal, header_u64, rate_limited_wait, retry_after};

/// The default [`HttpConfig::max_body_bytes`]: 16 MiB.
pub const DEFAULT_MAX_BODY_BYTES: u64 = 16 * 1024 * 1024;

/// Largest buffer reserved up front from a `Content-Length`, so a platform that
/// announces much and sends little does not make BesluitBron allocate the whole cap.
const PREALLOCATE_MAX_BYTES: u64 = 1024 * 1024;

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

/// The outcome of exactly one HTTP exchange with a platform, classified for whoever
/// decides about the next one: the platform path, through its fair queue (R-L8).
#[derive(Debug)]
pub enum Attempt {
    /// The platform answered and the answer is the connector's to read: a 2xx, a 3xx
    /// (a redirect to another host, or past the third, which is not followed) or a 4xx
    /// other than 429, with the whole body within the cap. A non-2xx still means
    /// something to the connector; [`super::status_error`] turns it into the shared error.
    Answer(Fetched),
    /// HTTP 429: the platform's limit is used up and the request was not served.
    /// `retry_after` is the wait it asks for (`Retry-After`, else `RateLimit-Reset`,
    /// else [`super::RATE_LIMITED_FALLBACK`]; never under one second). Feed it to the
    /// platform's scheduler; the request may go again after it as a new admission.
    /// Given for every request, idempotent or not: the platform did not act on it.
    RateLimited {
        /// How long the platform asks to wait.
        retry_after: Duration,
    },
    /// A failure that sending the same request again may cure, and only for an
    /// idempotent request: a 5xx answer ([`PlatformError::Upstream`]) or a connection
    /// that failed or broke mid-answer ([`PlatformError::Unreachable`]). `retry_after`
    /// is the 5xx's `Retry-After` when it sent one; otherwise the caller picks a backoff.
    Retryable {
        /// What went wrong (what to report when no retry is made).
        error: PlatformError,
        /// The wait the platform asked for, if any.
        retry_after: Option<Duration>,
    },
    /// A failure that must not or need not be retried: the attempt's time-out
    /// ([`PlatformError::Timeout`]: don't pile requests onto a slow platform), a body
    /// over the cap ([`PlatformError::TooLarge`]), a bot challenge
    /// ([`PlatformError::Challenge`]), a redirect reqwest refused, a request that could
    /// not be built ([`PlatformError::Config`]), and any 5xx or connection failure of a
    /// non-idempotent request (it may have been acted on).
    Failed(PlatformError),
}

impl Attempt {
    /// The attempt as the answer or the error: [`Attempt::RateLimited`] becomes
    /// [`PlatformError::RateLimited`] for `platform`, a 5xx that asked for a wait becomes
    /// [`PlatformError::Overloaded`] (which carries the wait), every other error is
    /// returned as it is.
    pub fn into_result(self, platform: PlatformId) -> Result<Fetched, PlatformError> {
        match self {
            Attempt::Answer(fetched) => Ok(fetched),
            Attempt::RateLimited { retry_after } => Err(PlatformError::RateLimited { platform, retry_after }),
            Attempt::Retryable {
                error: PlatformError::Upstream { platform, status },
                retry_after: Some(retry_after),
            } => Err(PlatformError::Overloaded {
                platform,
                status,
                retry_after,
            }),
            Attempt::Retryable { error, .. } | Attempt::Failed(error) => Err(error),
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

    /// Sends `request` once ([`PlatformHttp::send_once`]) and reports the attempt as a
    /// result ([`Attempt::into_result`]).
    ///
    /// Returns the answer for any status but 429 and 5xx (the connector reads it, e.g.
    /// with [`super::read_json`]). Errors: a 429 is [`PlatformError::RateLimited`]; a
    /// 5xx is [`PlatformError::Upstream`], or [`PlatformError::Overloaded`] when it asked
    /// for a wait; a connection error is [`PlatformError::Unreachable`]; running out of
    /// time is [`PlatformError::Timeout`]; and every [`Attempt::Failed`] error is
    /// returned as it is.
    pub async fn send(&self, request: &PlatformRequest) -> Result<Fetched, PlatformError> {
        self.send_once(request).await.into_result(self.platform)
    }

    /// Exactly one attempt at `request` within the configured request time-out, its
    /// outcome classified (see [`Attempt`] for what each variant means). Nothing is
    /// retried or slept here.
    pub async fn send_once(&self, request: &PlatformRequest) -> Attempt {
        self.attempt(request, self.request_timeout).await
    }

    /// One attempt bounded by `timeout` (from sending to the last byte of the body).
    async fn attempt(&self, request: &PlatformRequest, timeout: Duration) -> Attempt {
        let platform = self.platform;
        let idempotent = request.is_idempotent();
        // A transport failure: a broken connection may be retried (idempotent only),
        // the rest never.
        let transport = |e: reqwest::Error| {
            if e.is_connect() {
                retryable_if(
                    idempotent,
                    PlatformError::Unreachable {
                        platform,
                        detail: describe(e),
                    },
                    None,
                )
            } else if e.is_timeout() {
                Attempt::Failed(PlatformError::Timeout {
                    platform,
                    after_ms: timeout.as_millis() as u64,
                })
            } else if e.is_redirect() {
                Attempt::Failed(PlatformError::Garbage {
                    platform,
                    detail: "a redirect BesluitBron does not follow".into(),
                })
            } else if e.is_builder() {
                Attempt::Failed(PlatformError::Config {
                    platform,
                    detail: format!("cannot build the request: {}", describe(e)),
                })
            } else {
                // Resets and truncated bodies: the connection failed mid-answer.
                retryable_if(
                    idempotent,
                    PlatformError::Unreachable {
                        platform,
                        detail: describe(e),
                    },
                    None,
                )
            }
        };
        let mut response = match request.builder(&self.client).timeout(timeout).send().await {
            Ok(response) => response,
            Err(e) => return transport(e),
        };
        let status = response.status();
        if let Some(signal) = challenge_signal(response.headers()) {
            return Attempt::Failed(PlatformError::Challenge { platform, signal });
        }
        if status == reqwest::StatusCode::TOO_MANY_REQUESTS {
            return Attempt::RateLimited {
                retry_after: rate_limited_wait(response.headers(), SystemTime::now()),
            };
        }
        if status.is_server_error() {
            // The body of a 5xx is not read: nobody uses it, and dropping the response
            // closes its connection rather than keeping a troubled one in the pool.
            let wait = retry_after(response.headers(), SystemTime::now());
            let error = PlatformError::Upstream {
                platform,
                status: status.as_u16(),
            };
            return retryable_if(idempotent, error, wait);
        }
        let too_large = || {
            Attempt::Failed(PlatformError::TooLarge {
                platform,
                limit_bytes: self.max_body_bytes,
            })
        };
        let declared = response
            .content_length()
            .or_else(|| header_u64(response.headers(), header::CONTENT_LENGTH.as_str()));
        if declared.is_some_and(|len| len > self.max_body_bytes) {
            // Refused before reading: dropping the response closes the connection.
            return too_large();
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
                        // before the rest is sent.
                        return too_large();
                    }
                    body.extend_from_slice(&chunk);
                }
                Ok(None) => break,
                Err(e) => return transport(e),
            }
        }
        Attempt::Answer(Fetched {
            status,
            url: response.url().clone(),
            headers: std::mem::take(response.headers_mut()),
            body,
        })
    }
}

/// [`Attempt::Retryable`] for an idempotent request, [`Attempt::Failed`] otherwise.
fn retryable_if(idempotent: bool, error: PlatformError, retry_after: Option<Duration>) -> Attempt {
    if idempotent {
        Attempt::Retryable { error, retry_after }
    } else {
        Attempt::Failed(error)
    }
}

/// The error chain of a reqwest error in one line (the top level alone says little).
fn describe(error: reqwest::Error) -> String {
    // Without the URL: the detail reaches the assistant's tool error, and the URL names
    // BesluitBron's configured base (an internal address, perhaps) and the whole input.
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
