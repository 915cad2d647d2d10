//! One platform's reqwest client and its retry policy.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use besluitbron_core::PlatformId;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};

use super::{Fetched, PlatformError, rate_limited_wait, retry_after};

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
        }
    }
}

/// Retry of idempotent reads after connection errors and 5xx answers.
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

/// One platform's HTTP client: a connection pool, its retry policy and jitter source.
#[derive(Debug)]
pub struct PlatformHttp {
    platform: PlatformId,
    client: reqwest::Client,
    retry: RetryPolicy,
    request_timeout: Duration,
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
    /// Builds the client for `platform`, sending `accept` as the `Accept` header.
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
        Ok(PlatformHttp {
            platform,
            client,
            retry: config.retry,
            request_timeout: Duration::from_millis(config.request_timeout_ms),
            jitter: Mutex::new(StdRng::seed_from_u64(config.retry.jitter_seed)),
        })
    }

    /// The platform this client talks to.
    pub fn platform(&self) -> PlatformId {
        self.platform
    }

    /// GETs `url`, retrying connection errors and 5xx answers per the policy.
    ///
    /// Returns the answer for any status but 429 and 5xx; a 429 is
    /// [`PlatformError::RateLimited`] at once, a 5xx that outlasts the retries is
    /// [`PlatformError::Upstream`], a connection error that does is
    /// [`PlatformError::Unreachable`], and running out of time is [`PlatformError::Timeout`].
    pub async fn get(&self, url: Url) -> Result<Fetched, PlatformError> {
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
            let attempt_timeout = self.request_timeout.min(remaining);
            let outcome = self.attempt(url.clone(), attempt_timeout).await;
            let (error, retry_after) = match outcome {
                Ok(fetched) if fetched.status == StatusCode::TOO_MANY_REQUESTS => {
                    return Err(PlatformError::RateLimited {
                        platform,
                        retry_after: rate_limited_wait(&fetched.headers, SystemTime::now()),
                    });
                }
                Ok(fetched) if fetched.status.is_server_error() => {
                    let wait = retry_after(&fetched.headers, SystemTime::now());
                    let error = PlatformError::Upstream {
                        platform,
                        status: fetched.status.as_u16(),
                    };
                    (error, wait)
                }
                Ok(fetched) => return Ok(fetched),
                Err(error @ PlatformError::Unreachable { .. }) => (error, None),
                Err(error) => return Err(error),
            };
            if attempt >= self.retry.max_attempts {
                return Err(error);
            }
            let wait = match retry_after {
                Some(wait) => wait,
                None => self.jittered(self.retry.backoff(attempt)),
            };
            if tokio::time::Instant::now() + wait >= deadline {
                return Err(error);
            }
            tracing::debug!(%platform, attempt, wait_ms = wait.as_millis() as u64, %error, "retrying a platform read");
            tokio::time::sleep(wait).await;
        }
    }

    /// One attempt: send, read the whole body, classify transport failures.
    async fn attempt(&self, url: Url, timeout: Duration) -> Result<Fetched, PlatformError> {
        let platform = self.platform;
        let classify = |e: reqwest::Error| {
            if e.is_connect() {
                PlatformError::Unreachable {
                    platform,
                    detail: describe(&e),
                }
            } else if e.is_timeout() {
                PlatformError::Timeout {
                    platform,
                    after_ms: timeout.as_millis() as u64,
                }
            } else if e.is_redirect() {
                PlatformError::Garbage {
                    platform,
                    detail: "a redirect BesluitBron does not follow".into(),
                }
            } else {
                // Resets and truncated bodies: the connection failed mid-answer.
                PlatformError::Unreachable {
                    platform,
                    detail: describe(&e),
                }
            }
        };
        let response = self.client.get(url).timeout(timeout).send().await.map_err(classify)?;
        let status = response.status();
        let headers = response.headers().clone();
        let body = response.bytes().await.map_err(classify)?.to_vec();
        Ok(Fetched { status, headers, body })
    }

    /// `base` scaled by a factor drawn uniformly from [0.5, 1.0].
    fn jittered(&self, base: Duration) -> Duration {
        let mut rng = self.jitter.lock().unwrap_or_else(|p| p.into_inner());
        let permille: u32 = rng.random_range(500..=1000);
        base * permille / 1000
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
