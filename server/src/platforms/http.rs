//! The HTTP layer every platform client shares: one reqwest client per platform (its
//! own connection pool, a User-Agent naming BesluitBron and a contact address, explicit
//! `Accept`, connect and per-attempt time-outs), a bounded retry policy, and the typed
//! [`PlatformError`] every client returns.
//!
//! Invariants:
//! - Only idempotent reads are sent, and only they are retried: [`PlatformHttp::get`]
//!   is the sole way out. A retry happens on a connection error or a 5xx answer, with
//!   exponential backoff and jitter (seeded, so runs are reproducible), honouring a
//!   5xx's `Retry-After`, for at most [`RetryPolicy::max_attempts`] attempts and never
//!   past [`RetryPolicy::deadline_ms`] after the first attempt.
//! - A 429 is never retried here: it becomes [`PlatformError::RateLimited`] carrying the
//!   platform's `Retry-After`, so the caller can feed the platform scheduler.
//! - A time-out is not retried either: a platform that is slow now is asked again by
//!   the caller's choice, not by piling more requests onto it.
//! - Redirects are followed only to the same host, at most three times.
//! - Nothing here panics on what a platform sends: an unreadable body is
//!   [`PlatformError::Garbage`].
//!
//! What this module does not do: decide *when* a call may go out (the core scheduler
//! does), cache, or know any platform's paths or JSON shapes.

use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use besluitbron_core::PlatformId;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use reqwest::header::{self, HeaderMap, HeaderValue};
use reqwest::{StatusCode, Url};
use serde::de::DeserializeOwned;

/// Fallback wait after a 429 that names neither `Retry-After` nor `RateLimit-Reset`:
/// one full refill window of the strictest platform (OpenBesluitvorming, 60 s).
pub const RATE_LIMITED_FALLBACK: Duration = Duration::from_secs(60);

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

/// Why a platform call failed, naming the platform and what the assistant can do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlatformError {
    /// No connection could be made (refused, DNS, reset), after the retries.
    #[error("{} is unreachable ({detail}); try again later or use another platform", .platform.display_name())]
    Unreachable {
        /// The platform.
        platform: PlatformId,
        /// What the connection attempt reported.
        detail: String,
    },
    /// The platform did not answer in time.
    #[error("{} did not answer within {after_ms} ms; try a narrower question or try again later", .platform.display_name())]
    Timeout {
        /// The platform.
        platform: PlatformId,
        /// How long BesluitBron waited.
        after_ms: u64,
    },
    /// The platform refused the call because its limit is used up (HTTP 429).
    #[error("{} asks to wait {} s before the next call; the call can be queued until then", .platform.display_name(), .retry_after.as_secs_f64().ceil())]
    RateLimited {
        /// The platform.
        platform: PlatformId,
        /// How long the platform asks to wait (`Retry-After`).
        retry_after: Duration,
    },
    /// The request itself is wrong: refused by the platform (HTTP 400) or by
    /// BesluitBron's own check, which uses the platform's codes.
    #[error("{} refused the request ({code}): {message}; correct this parameter and ask again", .platform.display_name())]
    BadRequest {
        /// The platform.
        platform: PlatformId,
        /// Machine-readable code, e.g. `invalid_limit` (branch on this, not on the message).
        code: String,
        /// Human-readable explanation.
        message: String,
    },
    /// The requested record does not exist (HTTP 404).
    #[error("{} has no {what}; check the id, or search for it first", .platform.display_name())]
    NotFound {
        /// The platform.
        platform: PlatformId,
        /// What was asked for.
        what: String,
    },
    /// The platform answered with an unexpected HTTP status (5xx after the retries, or another 4xx).
    #[error("{} answered HTTP {status}; it may be having trouble, try again later", .platform.display_name())]
    Upstream {
        /// The platform.
        platform: PlatformId,
        /// The HTTP status.
        status: u16,
    },
    /// The platform answered something BesluitBron cannot read (not the expected JSON).
    #[error("{} answered something unreadable ({detail}); try again later", .platform.display_name())]
    Garbage {
        /// The platform.
        platform: PlatformId,
        /// What was wrong with it.
        detail: String,
    },
    /// A continuation link does not belong to the platform's configured address.
    #[error("{} continuation refused ({detail}); start the search again without a continuation", .platform.display_name())]
    ForeignLink {
        /// The platform.
        platform: PlatformId,
        /// Why the link was refused.
        detail: String,
    },
    /// A list that must be complete spans more pages than BesluitBron follows.
    #[error("{} returned more than {pages} pages for a reference list; BesluitBron stopped following it", .platform.display_name())]
    TooManyPages {
        /// The platform.
        platform: PlatformId,
        /// Pages followed before giving up.
        pages: usize,
    },
    /// Something went wrong inside BesluitBron while it handled the platform's answer
    /// (the answer could not be encoded for the buffer, the call's task failed).
    #[error("BesluitBron could not handle {}'s answer ({detail}); try again, and report it if it persists", .platform.display_name())]
    Internal {
        /// The platform.
        platform: PlatformId,
        /// What failed.
        detail: String,
    },
    /// BesluitBron's own configuration for the platform is unusable (e.g. a bad base URL).
    #[error("BesluitBron's configuration for {} is invalid: {detail}", .platform.display_name())]
    Config {
        /// The platform.
        platform: PlatformId,
        /// What is wrong.
        detail: String,
    },
}

impl PlatformError {
    /// The platform the error is about.
    pub fn platform(&self) -> PlatformId {
        match self {
            PlatformError::Unreachable { platform, .. }
            | PlatformError::Timeout { platform, .. }
            | PlatformError::RateLimited { platform, .. }
            | PlatformError::BadRequest { platform, .. }
            | PlatformError::NotFound { platform, .. }
            | PlatformError::Upstream { platform, .. }
            | PlatformError::Garbage { platform, .. }
            | PlatformError::ForeignLink { platform, .. }
            | PlatformError::TooManyPages { platform, .. }
            | PlatformError::Internal { platform, .. }
            | PlatformError::Config { platform, .. } => *platform,
        }
    }

    /// Whether another attempt may mend it: a connection failure or a 5xx answer to a
    /// read (every platform call BesluitBron makes is an idempotent read). A time-out is
    /// not: a platform that is slow now is not asked again at once.
    pub fn is_retryable(&self) -> bool {
        match self {
            PlatformError::Unreachable { .. } => true,
            PlatformError::Upstream { status, .. } => (500..600).contains(status),
            _ => false,
        }
    }

    /// A short machine label for metrics.
    pub fn label(&self) -> &'static str {
        match self {
            PlatformError::RateLimited { .. } => "rate_limited",
            PlatformError::Timeout { .. } => "timeout",
            PlatformError::Unreachable { .. } => "unreachable",
            PlatformError::BadRequest { .. } => "bad_request",
            PlatformError::NotFound { .. } => "not_found",
            PlatformError::Upstream { .. } => "upstream_error",
            PlatformError::Garbage { .. } => "garbage",
            PlatformError::ForeignLink { .. } => "foreign_link",
            PlatformError::TooManyPages { .. } => "too_many_pages",
            PlatformError::Internal { .. } => "internal",
            PlatformError::Config { .. } => "config",
        }
    }
}

/// A platform's answer that was neither a 429 nor a 5xx: status, headers and body.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The HTTP status (2xx, 3xx or 4xx other than 429).
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The whole body.
    pub body: Vec<u8>,
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

/// `Retry-After` as a wait: delta-seconds or an HTTP date (relative to `now`).
pub fn retry_after(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let text = headers.get(header::RETRY_AFTER)?.to_str().ok()?.trim();
    if let Ok(secs) = text.parse::<u64>() {
        return Some(Duration::from_secs(secs));
    }
    let at = httpdate::parse_http_date(text).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// The wait a 429 asks for: `Retry-After`, else `RateLimit-Reset`, else
/// [`RATE_LIMITED_FALLBACK`]; never less than one second.
pub fn rate_limited_wait(headers: &HeaderMap, now: SystemTime) -> Duration {
    retry_after(headers, now)
        .or_else(|| header_u64(headers, "ratelimit-reset").map(Duration::from_secs))
        .unwrap_or(RATE_LIMITED_FALLBACK)
        .max(Duration::from_secs(1))
}

/// A header holding a non-negative integer.
pub fn header_u64(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// Decodes a JSON body, or says why it is [`PlatformError::Garbage`].
pub fn decode_json<T: DeserializeOwned>(platform: PlatformId, fetched: &Fetched) -> Result<T, PlatformError> {
    serde_json::from_slice(&fetched.body).map_err(|e| {
        let content_type = fetched
            .headers
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("no content type");
        PlatformError::Garbage {
            platform,
            detail: format!("{content_type} body is not the expected JSON: {e}"),
        }
    })
}

/// Parses a base URL: http or https, no query or fragment; a trailing slash is dropped.
pub fn parse_base_url(platform: PlatformId, text: &str) -> Result<Url, PlatformError> {
    let config_error = |detail: String| PlatformError::Config { platform, detail };
    let url = Url::parse(text.trim_end_matches('/')).map_err(|e| config_error(format!("base URL `{text}`: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(config_error(format!("base URL `{text}` must be http(s) with a host")));
    }
    if url.query().is_some() || url.fragment().is_some() {
        return Err(config_error(format!(
            "base URL `{text}` must not have a query or fragment"
        )));
    }
    Ok(url)
}

/// `base` with `path` appended (the base's own path kept; `path` starts without a slash).
pub fn join(platform: PlatformId, base: &Url, path: &str) -> Result<Url, PlatformError> {
    let text = format!("{}/{path}", base.as_str().trim_end_matches('/'));
    Url::parse(&text).map_err(|e| PlatformError::Config {
        platform,
        detail: format!("cannot form a URL from `{text}`: {e}"),
    })
}

/// Percent-encodes one path segment: everything but unreserved characters
/// (so `:` becomes `%3A`, as OpenBesluitvorming's ids require).
pub fn encode_segment(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for b in text.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// True for a bare `YYYY-MM-DD` naming a real calendar day.
pub fn is_iso_date(text: &str) -> bool {
    let b = text.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    let number = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = &text[r];
        s.bytes().all(|c| c.is_ascii_digit()).then(|| s.parse().ok()).flatten()
    };
    let (Some(y), Some(m), Some(d)) = (number(0..4), number(5..7), number(8..10)) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// Serde helper for platform models: reads `null` as the type's default.
pub(crate) fn nullable<'de, D: serde::Deserializer<'de>, T: Default + serde::Deserialize<'de>>(
    d: D,
) -> Result<T, D::Error> {
    Ok(<Option<T> as serde::Deserialize>::deserialize(d)?.unwrap_or_default())
}

/// Serde helper for platform models: reads a string, a number or `null` as optional text
/// (the platforms are not consistent about which).
pub(crate) fn lenient_text<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    Ok(match <serde_json::Value as serde::Deserialize>::deserialize(d)? {
        serde_json::Value::String(s) => Some(s),
        serde_json::Value::Null => None,
        other => Some(other.to_string()),
    })
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

    #[test]
    fn retry_after_reads_seconds_and_http_dates() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000_000);
        let mut h = HeaderMap::new();
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("7"));
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(7)));
        let later = httpdate::fmt_http_date(now + Duration::from_secs(30));
        h.insert(header::RETRY_AFTER, HeaderValue::from_str(&later).unwrap());
        assert_eq!(retry_after(&h, now), Some(Duration::from_secs(30)));
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("soon"));
        assert_eq!(retry_after(&h, now), None);
    }

    #[test]
    fn a_429_without_hints_waits_a_full_window_and_never_less_than_a_second() {
        let now = SystemTime::UNIX_EPOCH;
        assert_eq!(rate_limited_wait(&HeaderMap::new(), now), RATE_LIMITED_FALLBACK);
        let mut h = HeaderMap::new();
        h.insert("ratelimit-reset", HeaderValue::from_static("12"));
        assert_eq!(rate_limited_wait(&h, now), Duration::from_secs(12));
        h.insert(header::RETRY_AFTER, HeaderValue::from_static("0"));
        assert_eq!(rate_limited_wait(&h, now), Duration::from_secs(1));
    }

    #[test]
    fn dates_and_segments() {
        assert!(is_iso_date("2024-02-29"));
        assert!(!is_iso_date("2023-02-29"));
        assert!(!is_iso_date("2024-04-31"));
        assert!(!is_iso_date("24-04-01"));
        assert_eq!(
            encode_segment("document:notubiz:gemeente:soest:1"),
            "document%3Anotubiz%3Agemeente%3Asoest%3A1"
        );
        assert_eq!(encode_segment("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn base_urls_are_checked_and_joined() {
        let base = parse_base_url(PlatformId::Tk, "http://127.0.0.1:9/OData/v4/2.0/").unwrap();
        assert_eq!(
            join(PlatformId::Tk, &base, "Document").unwrap().as_str(),
            "http://127.0.0.1:9/OData/v4/2.0/Document"
        );
        assert!(parse_base_url(PlatformId::Tk, "ftp://x").is_err());
        assert!(parse_base_url(PlatformId::Tk, "http://x/?a=1").is_err());
    }

    #[test]
    fn errors_name_the_platform_and_the_way_out() {
        let e = PlatformError::RateLimited {
            platform: PlatformId::Obv,
            retry_after: Duration::from_millis(1500),
        };
        assert_eq!(
            e.to_string(),
            "OpenBesluitvorming asks to wait 2 s before the next call; the call can be queued until then"
        );
        let e = PlatformError::Unreachable {
            platform: PlatformId::Tk,
            detail: "connection refused".into(),
        };
        assert!(e.to_string().starts_with("Tweede Kamer is unreachable"));
    }
}
