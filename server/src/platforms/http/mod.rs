//! The HTTP layer every platform client shares: one reqwest client per platform (its
//! own connection pool, a User-Agent naming BesluitBron and a contact address, explicit
//! `Accept`, connect and per-attempt time-outs, a body cap), explicit requests
//! ([`PlatformRequest`]: GET, or POST with a form, multipart or JSON body), exactly one
//! classified attempt ([`PlatformHttp::send`]), the one status → error mapping
//! ([`status_error`]) and the typed [`PlatformError`] every client returns, which carries
//! what another attempt may do ([`Retry`]).
//!
//! Invariants:
//! - Nothing here retries: another attempt is the platform path's decision, made
//!   through the fair queue so that every attempt is counted (R-L8). Only an
//!   idempotent request can be classified retryable: every GET, and a POST its
//!   connector marked ([`PlatformRequest::idempotent`], for a search that only takes a
//!   POST); then a connection error or a 5xx answer is [`Retry::Yes`], with the 5xx's
//!   `Retry-After` when it sent one ([`PlatformError::Overloaded`]). The class is
//!   decided here, where idempotency is known, and travels in the error unchanged.
//! - A 429 becomes [`PlatformError::RateLimited`] ([`Retry::Wait`]) carrying the
//!   platform's `Retry-After`, so the path can feed the platform's queue.
//! - A time-out is not retryable: a platform that is slow now is not asked again at
//!   once, piling more requests onto it.
//! - A bot challenge (`cf-mitigated: challenge`, `x-amzn-waf-action: challenge`) is
//!   [`PlatformError::Challenge`] at once, whatever the status; never retried, and
//!   BesluitBron never pretends to be a browser.
//! - No body is buffered past [`HttpConfig::max_body_bytes`]: a larger `Content-Length`
//!   is refused before reading, and a body read in chunks is dropped as soon as it
//!   passes the cap ([`PlatformError::TooLarge`]).
//! - Redirects are followed only to the same host, at most three times; the answer
//!   says where it ended ([`Fetched::url`]). Continuation links are followed only on
//!   the configured base URL ([`link_on_base`]); query strings are built only with
//!   `Url::query_pairs_mut` ([`with_query`]).
//! - Nothing here panics on what a platform sends: an unreadable body is
//!   [`PlatformError::Garbage`].
//!
//! What this module does not do: decide *when* a call may go out (the core scheduler
//! does), cache, or know any platform's paths or JSON shapes.

mod answer;
mod client;
mod error;
mod request;
mod urls;

use std::time::{Duration, SystemTime};

use reqwest::header::{self, HeaderMap};

pub use answer::{
    Asked, Fetched, Refusal, RefusalFormat, challenge_signal, decode_json, error_object, parse_json, read_json,
    status_error,
};
pub use client::{DEFAULT_MAX_BODY_BYTES, HttpConfig, MAX_REQUEST_URL_BYTES, PlatformHttp, user_agent};
pub use error::{PlatformError, Retry};
pub use request::{Method, PlatformRequest, RequestBody};
pub use urls::{encode_segment, join, link_on_base, parse_base_url, path_segment, with_query};

/// Fallback wait after a 429 that names neither `Retry-After` nor `RateLimit-Reset`:
/// one full refill window of the strictest platform (OpenBesluitvorming, 60 s).
pub const RATE_LIMITED_FALLBACK: Duration = Duration::from_secs(60);

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

/// `text` as an error message may quote it: at most [`BRIEF_CHARS`] characters, cut
/// with `…`. For ids, codes and platform messages whose length BesluitBron does not
/// choose.
pub fn brief(text: &str) -> String {
    if text.chars().count() <= BRIEF_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(BRIEF_CHARS - 1).collect();
    cut + "…"
}

/// The longest quotation [`brief`] makes.
pub const BRIEF_CHARS: usize = 120;

/// The longest error text an assistant or a person is sent, in characters.
pub const MAX_ERROR_CHARS: usize = 1000;

/// `text` as a tool error may show it: every `http://` or `https://` address replaced by
/// `<address>`, and cut to [`MAX_ERROR_CHARS`] characters (ending in `…`).
pub fn bounded_text(text: &str) -> String {
    let mut out = String::with_capacity(text.len().min(MAX_ERROR_CHARS * 4));
    let mut rest = text;
    while let Some(start) = find_address(rest) {
        out.push_str(&rest[..start]);
        out.push_str("<address>");
        let after = &rest[start..];
        let end = after
            .find(|c: char| c.is_whitespace() || matches!(c, '`' | '\'' | '"' | ')' | ']' | '>' | '<' | ','))
            .unwrap_or(after.len());
        rest = &after[end..];
        if out.len() > MAX_ERROR_CHARS * 4 {
            break;
        }
    }
    out.push_str(rest);
    if out.chars().count() > MAX_ERROR_CHARS {
        let cut: String = out.chars().take(MAX_ERROR_CHARS - 1).collect();
        return cut + "…";
    }
    out
}

/// Where the first `http://` or `https://` (any case) starts in `text`.
fn find_address(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    (0..bytes.len()).find(|&i| {
        let rest = &bytes[i..];
        let starts = |p: &[u8]| rest.len() >= p.len() && rest[..p.len()].eq_ignore_ascii_case(p);
        starts(b"http://") || starts(b"https://")
    })
}

/// A header holding a non-negative integer.
pub fn header_u64(headers: &HeaderMap, name: &str) -> Option<u64> {
    headers.get(name)?.to_str().ok()?.trim().parse().ok()
}

/// True for a bare GUID (`8-4-4-4-12` hexadecimal digits).
pub fn is_guid(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 36
        && b.iter().enumerate().all(|(i, c)| {
            if [8, 13, 18, 23].contains(&i) {
                *c == b'-'
            } else {
                c.is_ascii_hexdigit()
            }
        })
}

/// The text of the first of `names` in `object` that holds text or a number.
pub fn text_field(object: &serde_json::Value, names: &[&str]) -> Option<String> {
    let map = object.as_object()?;
    names.iter().find_map(|name| {
        let v = map
            .get(*name)
            .or_else(|| map.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v))?;
        match v {
            serde_json::Value::String(s) if !s.trim().is_empty() => Some(s.trim().to_owned()),
            serde_json::Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    })
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
    use reqwest::header::HeaderValue;

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
    fn error_texts_lose_their_addresses_and_their_length() {
        assert_eq!(
            bounded_text(
                "Tweede Kamer is unreachable (error sending request for url (http://10.0.0.7:9/OData/v4/2.0/Document?$filter=x)): refused"
            ),
            "Tweede Kamer is unreachable (error sending request for url (<address>)): refused"
        );
        assert_eq!(
            bounded_text("see `HTTPS://a.example/b` and https://c"),
            "see `<address>` and <address>"
        );
        assert_eq!(bounded_text("no address here"), "no address here");
        let long = bounded_text(&"x".repeat(1_000_000));
        assert_eq!(long.chars().count(), MAX_ERROR_CHARS);
        assert!(long.ends_with('…'));
        assert_eq!(
            bounded_text("httpé://x"),
            "httpé://x",
            "not an address, and no panic on a boundary"
        );
    }
}
