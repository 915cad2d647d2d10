//! One platform's reqwest client: [`PlatformHttp::send_once`] makes exactly one
//! attempt and classifies it ([`Attempt`]); [`PlatformHttp::send`] and
//! [`PlatformHttp::get`] retry on top of it by the [`RetryPolicy`].
//!
//! Invariants: a body is read in chunks and never buffered past
//! [`HttpConfig::max_body_bytes`]; only an idempotent request is ever classified
//! [`Attempt::Retryable`], and only a retryable attempt is repeated.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use besluitbron_core::PlatformId;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
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
    /// When and how often a failed read is tried again.
    pub retry: RetryPolicy,
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
            retry: RetryPolicy::default(),
            max_body_bytes: DEFAULT_MAX_BODY_BYTES,
        }
    }
}

/// Retry of idempotent requests after connection errors and 5xx answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total, the first included (1 disables retrying).
    pub max_attempts: u32,
    /// Backoff before the second attempt; doubled for each further attempt.
    pub backoff_base_ms: u64,
    /// Backoff never exceeds this (before jitter).
    pub backoff_max_ms: u64,
    /// No attempt starts, and no attempt runs, past this long after the first one started.
    pub deadline_ms: u64,
    /// Seed of the jitter generator.
    pub jitter_seed: u64,
}

impl Default for RetryPolicy {
    fn default() -> RetryPolicy {
        RetryPolicy {
            max_attempts: 3,
            backoff_base_ms: 250,
            backoff_max_ms: 4_000,
            deadline_ms: 45_000,
            jitter_seed: 0x00B3_5101_7B40_0000,
        }
    }
}

impl RetryPolicy {
    /// The backoff before attempt `attempt + 1` (`attempt` ≥ 1 failed attempts so far),
    /// before jitter: `base * 2^(attempt-1)`, capped at the maximum.
    pub fn backoff(&self, attempt: u32) -> Duration {
        let factor = 1u64 << attempt.saturating_sub(1).min(20);
        Duration::from_millis(self.backoff_base_ms.saturating_mul(factor).min(self.backoff_max_ms))
    }
}

/// The outcome of exactly one HTTP exchange with a platform, classified for whoever
/// decides about the next one ([`PlatformHttp::send`] today; the platform's fair queue
/// once every attempt is an admission, R-L8).
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
    /// The attempt as the answer or the error a caller reports when it does not retry:
    /// [`Attempt::RateLimited`] becomes [`PlatformError::RateLimited`] for `platform`.
    pub fn into_result(self, platform: PlatformId) -> Result<Fetched, PlatformError> {
        match self {
            Attempt::Answer(fetched) => Ok(fetched),
            Attempt::RateLimited { retry_after } => Err(PlatformError::RateLimited { platform, retry_after }),
            Attempt::Retryable { error, .. } | Attempt::Failed(error) => Err(error),
        }
    }
}

/// One platform's HTTP client: a connection pool, its retry policy, body cap and
/// jitter source.
#[derive(Debug)]
pub struct PlatformHttp {
    platform: PlatformId,
    client: reqwest::Client,
    retry: RetryPolicy,
    request_timeout: Duration,
    max_body_bytes: u64,
    jitter: Mutex<StdRng>,
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
        if config.retry.max_attempts == 0 {
            return Err(config_error("retry.max_attempts must be at least 1".into()));
        }
        if config.max_body_bytes == 0 {
            return Err(config_error("max_body_bytes must be at least 1".into()));
        }
        Ok(PlatformHttp {
            platform,
            client,
            retry: config.retry,
            request_timeout: Duration::from_millis(config.request_timeout_ms),
            max_body_bytes: config.max_body_bytes,
            jitter: Mutex::new(StdRng::seed_from_u64(config.retry.jitter_seed)),
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

    /// GETs `url` with retries: [`PlatformHttp::send`] of [`PlatformRequest::get`].
    pub async fn get(&self, url: Url) -> Result<Fetched, PlatformError> {
        self.send(&PlatformRequest::get(url)).await
    }

    /// Sends `request`, repeating an [`Attempt::Retryable`] attempt per the policy (so
    /// never a non-idempotent request): after the 5xx's `Retry-After`, or an exponential
    /// backoff with seeded jitter, for at most [`RetryPolicy::max_attempts`] attempts,
    /// and not past [`RetryPolicy::deadline_ms`] after the first started.
    ///
    /// Returns the answer for any status but 429 and 5xx (the connector reads it, e.g.
    /// with [`super::read_json`]). Errors: a 429 is [`PlatformError::RateLimited`] at
    /// once; a 5xx that outlasts the retries (or the first, for a non-idempotent
    /// request) is [`PlatformError::Upstream`]; a connection error likewise is
    /// [`PlatformError::Unreachable`]; running out of time is [`PlatformError::Timeout`];
    /// and every [`Attempt::Failed`] error is returned as it is.
    pub async fn send(&self, request: &PlatformRequest) -> Result<Fetched, PlatformError> {
        let platform = self.platform;
        let started = tokio::time::Instant::now();
        let deadline = started + Duration::from_millis(self.retry.deadline_ms);
        let mut attempt = 0u32;
        loop {
            attempt += 1;
            let remaining = deadline.saturating_duration_since(tokio::time::Instant::now());
            if remaining.is_zero() {
                return Err(PlatformError::Timeout {
                    platform,
                    after_ms: started.elapsed().as_millis() as u64,
                });
            }
            let (error, retry_after) = match self.attempt(request, self.request_timeout.min(remaining)).await {
                Attempt::Retryable { error, retry_after } => (error, retry_after),
                settled => return settled.into_result(platform),
            };
            // `attempt` never says Retryable for a non-idempotent request; the check
            // keeps this loop right even if that changes.
            if !request.is_idempotent() || attempt >= self.retry.max_attempts {
                return Err(error);
            }
            let wait = match retry_after {
                Some(wait) => wait,
                None => self.jittered(self.retry.backoff(attempt)),
            };
            if tokio::time::Instant::now() + wait >= deadline {
                return Err(error);
            }
            tracing::debug!(%platform, attempt, wait_ms = wait.as_millis() as u64, %error, "retrying a platform request");
            tokio::time::sleep(wait).await;
        }
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
                        detail: describe(&e),
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
                    detail: format!("cannot build the request: {}", describe(&e)),
                })
            } else {
                // Resets and truncated bodies: the connection failed mid-answer.
                retryable_if(
                    idempotent,
                    PlatformError::Unreachable {
                        platform,
                        detail: describe(&e),
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

    /// `base` scaled by a factor drawn uniformly from [0.5, 1.0].
    fn jittered(&self, base: Duration) -> Duration {
        let mut rng = self.jitter.lock().unwrap_or_else(|p| p.into_inner());
        let permille: u32 = rng.random_range(500..=1000);
        base * permille / 1000
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
fn describe(error: &reqwest::Error) -> String {
    let mut text = error.to_string();
    let mut source = std::error::Error::source(error);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_and_is_capped() {
        let p = RetryPolicy {
            backoff_base_ms: 100,
            backoff_max_ms: 500,
            ..RetryPolicy::default()
        };
        let got: Vec<u128> = (1..=5).map(|a| p.backoff(a).as_millis()).collect();
        assert_eq!(got, [100, 200, 400, 500, 500]);
    }

    #[test]
    fn jitter_is_seeded_and_within_half_to_full() {
        let make = || PlatformHttp::new(PlatformId::Obv, &HttpConfig::default(), "application/json").unwrap();
        let (a, b) = (make(), make());
        let base = Duration::from_millis(1000);
        for _ in 0..50 {
            let (x, y) = (a.jittered(base), b.jittered(base));
            assert_eq!(x, y, "same seed, same jitter");
            assert!((Duration::from_millis(500)..=base).contains(&x), "{x:?}");
        }
    }
}
