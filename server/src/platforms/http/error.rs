//! The typed error every platform client returns, with what another attempt may do.
//!
//! **Classified once, where the facts are known.** Whether a failure is worth another
//! attempt ([`Retry`]) is decided by whoever saw it happen: the HTTP layer, which knows
//! whether the request was idempotent, or a platform's reader, which knows what the
//! platform's own words mean (an overload said inside a 200). The error carries that
//! decision to the platform path unchanged; nothing downstream guesses it again from a
//! status code.
//!
//! What this module does not do: name a platform's particulars. A platform's own words
//! (an overload signal, the notice that it was switched off) are text its client puts
//! into a generic variant.

use std::time::Duration;

use besluitbron_core::PlatformId;

/// What another attempt may do for a failed request: decided where the failure was
/// seen, carried unchanged to the platform path (which makes each attempt an admission
/// of its fair queue, R-L8).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Retry {
    /// Another attempt would not mend it (or might act twice: a request that is not
    /// idempotent).
    #[default]
    No,
    /// Another attempt may mend it: a broken connection or a 5xx answer of an idempotent
    /// request; `after` is the platform's `Retry-After`, when it sent one.
    Yes {
        /// The platform's wait before another attempt, if it asked for one.
        after: Option<Duration>,
    },
    /// The platform refused for its limit or its load (HTTP 429, or its own overload
    /// signal): the call waits this long in the fair queue, once, then fails.
    Wait {
        /// How long the platform asks to wait.
        after: Duration,
    },
}

/// Why a platform call failed, naming the platform and what the assistant can do.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlatformError {
    /// No connection could be made (refused, DNS, reset).
    #[error("{} is unreachable ({detail}); try again later or use another platform", .platform.display_name())]
    Unreachable {
        /// The platform.
        platform: PlatformId,
        /// What the connection attempt reported.
        detail: String,
        /// What another attempt may do (only an idempotent request may be retried).
        retry: Retry,
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
    #[error("{} is busy (HTTP 429) and asks to wait {} s; ask again after that", .platform.display_name(), .retry_after.as_secs_f64().ceil())]
    RateLimited {
        /// The platform.
        platform: PlatformId,
        /// How long the platform asks to wait (`Retry-After`).
        retry_after: Duration,
    },
    /// The request itself is wrong: refused by the platform (HTTP 400, `sent`) or by
    /// BesluitBron's own check, which uses the platform's codes (nothing was sent, and
    /// the message says so rather than that the platform refused).
    #[error("{}", refusal_text(.platform.display_name(), code, message, *.sent))]
    BadRequest {
        /// The platform.
        platform: PlatformId,
        /// Machine-readable code, e.g. `invalid_limit` (branch on this, not on the message).
        code: String,
        /// Human-readable explanation.
        message: String,
        /// Whether the platform was asked and refused it (else BesluitBron's own check
        /// refused it before anything was sent).
        sent: bool,
    },
    /// The requested record does not exist (HTTP 404).
    #[error("{} has no {what}; check the id, or search for it first", .platform.display_name())]
    NotFound {
        /// The platform.
        platform: PlatformId,
        /// What was asked for.
        what: String,
    },
    /// A file a record the platform gave lists (a rendition) is not there (HTTP 404 or
    /// 410): the id was right, so "check the id" would send the assistant astray.
    #[error("{} lists {what} in its record but does not serve it (HTTP 404): the id is right, the file is missing at the platform; its page (the record's `url`) may still show it", .platform.display_name())]
    FileMissing {
        /// The platform.
        platform: PlatformId,
        /// The file, e.g. "the XML rendition of `gmb-2026-104512`".
        what: String,
    },
    /// The platform refused access (HTTP 401 or 403). BesluitBron sends no credentials,
    /// so this is the platform's decision about BesluitBron or its address.
    #[error("{} refused access (HTTP {status}); BesluitBron uses no credentials for it, so asking again will not help soon: use another platform, or tell the server's operator", .platform.display_name())]
    AccessDenied {
        /// The platform.
        platform: PlatformId,
        /// The HTTP status (401 or 403).
        status: u16,
    },
    /// The platform (or the firewall in front of it) answered with a bot challenge
    /// (PLATFORMS.md §10.7). Never retried: only a browser can pass it, and BesluitBron
    /// does not pretend to be one.
    #[error("{} asks for a browser challenge ({signal}); BesluitBron does not impersonate a browser, so it cannot read this platform now: try again much later or use another platform", .platform.display_name())]
    Challenge {
        /// The platform.
        platform: PlatformId,
        /// The header that marked the challenge, e.g. `cf-mitigated: challenge`.
        signal: &'static str,
    },
    /// The answer is larger than BesluitBron reads from this platform
    /// ([`super::HttpConfig::max_body_bytes`], `Platforms.<id>.MaxBodyBytes`); reading
    /// stopped at the limit, or never started when the answer announced its size.
    #[error("{} sent an answer of {}, more than the {limit_bytes} bytes BesluitBron reads from it; ask for less (fewer results per page, a narrower search, or one document at a time), or open the document at the platform itself", .platform.display_name(), size_text(*.size_bytes, *.limit_bytes))]
    TooLarge {
        /// The platform.
        platform: PlatformId,
        /// The limit that was exceeded, in bytes.
        limit_bytes: u64,
        /// The size the answer announced (`Content-Length`); `None` when it announced
        /// none and reading stopped at the limit.
        size_bytes: Option<u64>,
    },
    /// The platform answered with an unexpected HTTP status (a 5xx, a redirect
    /// BesluitBron does not follow, or a 4xx without a meaning of its own).
    #[error("{} answered HTTP {status}{}", .platform.display_name(), upstream_advice(*.status))]
    Upstream {
        /// The platform.
        platform: PlatformId,
        /// The HTTP status.
        status: u16,
        /// What another attempt may do (only a 5xx of an idempotent request may be retried).
        retry: Retry,
    },
    /// The platform is overloaded and asked to wait: a 5xx with `Retry-After`, or its own
    /// signal inside an answer (`signal` says which, e.g. `HTTP 503` or a platform's
    /// diagnostic). Never an empty result.
    #[error("{} is overloaded ({signal}); this is not an empty result: ask again in about {} s, or narrow the question", .platform.display_name(), .retry_after.as_secs_f64().ceil())]
    Overloaded {
        /// The platform.
        platform: PlatformId,
        /// How the platform showed it, e.g. `HTTP 503`.
        signal: String,
        /// How long it asks to wait.
        retry_after: Duration,
        /// What another attempt may do: after the wait (a 5xx of an idempotent request),
        /// once more behind the wait in the fair queue (an overload said in the platform's
        /// own words), or not at all.
        retry: Retry,
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
    /// The platform answered something BesluitBron cannot read (not the expected JSON).
    #[error("{} answered something unreadable ({detail}); try again later", .platform.display_name())]
    Garbage {
        /// The platform.
        platform: PlatformId,
        /// What was wrong with it.
        detail: String,
    },
    /// The platform answered with its own error object under a success status (a 200
    /// carrying `{"error": …}`, as an Elasticsearch behind a platform does when a search
    /// fails on its shards): its words, never read as an empty result.
    #[error("{} failed: {said}; this is not an empty result: ask again later, or narrow the question", .platform.display_name())]
    Failed {
        /// The platform.
        platform: PlatformId,
        /// What its error object says, bounded.
        said: String,
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
    /// A document file the platform served could not be read as text (over a cap,
    /// corrupt, or the reader failed): not kept, so asking again reads it again.
    #[error("{}'s {document} could not be read as text: {detail}; open the file at the platform itself, or ask again later", .platform.display_name())]
    Unreadable {
        /// The platform.
        platform: PlatformId,
        /// Which document, e.g. `document 2024D39058`.
        document: String,
        /// Why (a [`crate::text::TextError`]'s message).
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
    /// The platform was switched off by its maintainers (it answers nothing, or nothing
    /// that is its API); `notice` is its client's text for the assistant: since when,
    /// and where its data lives on.
    #[error("{} {notice}", .platform.display_name())]
    Gone {
        /// The platform.
        platform: PlatformId,
        /// E.g. `was retired on 1 November 2026; use …`.
        notice: &'static str,
    },
}

/// A refused request in words: the platform's refusal, or BesluitBron's own check by
/// the platform's rules before anything was sent.
fn refusal_text(platform: &str, code: &str, message: &str, sent: bool) -> String {
    if sent {
        format!("{platform} refused the request ({code}): {message}; correct this parameter and ask again")
    } else {
        format!("{message} ({code}; nothing was sent to {platform}): correct this parameter and ask again")
    }
}

/// What an unexpected HTTP status means for the assistant: a 404 or 410 is an address
/// the platform does not have (asking again gets the same), another 4xx a request it
/// refused; only a 5xx or a redirect not followed may be trouble that passes.
fn upstream_advice(status: u16) -> &'static str {
    match status {
        404 | 410 => " (not found): it has nothing at that address; asking again gets the same answer",
        400..=499 => ": it refused the request; asking again gets the same answer",
        _ => "; it may be having trouble, try again later",
    }
}

/// The size of an answer over the cap, as a [`PlatformError::TooLarge`] says it.
fn size_text(size_bytes: Option<u64>, limit_bytes: u64) -> String {
    match size_bytes {
        Some(size) => format!("{size} bytes"),
        None => format!("more than {limit_bytes} bytes"),
    }
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
            | PlatformError::FileMissing { platform, .. }
            | PlatformError::AccessDenied { platform, .. }
            | PlatformError::Challenge { platform, .. }
            | PlatformError::TooLarge { platform, .. }
            | PlatformError::Upstream { platform, .. }
            | PlatformError::Overloaded { platform, .. }
            | PlatformError::Internal { platform, .. }
            | PlatformError::Garbage { platform, .. }
            | PlatformError::Failed { platform, .. }
            | PlatformError::ForeignLink { platform, .. }
            | PlatformError::TooManyPages { platform, .. }
            | PlatformError::Config { platform, .. }
            | PlatformError::Unreadable { platform, .. }
            | PlatformError::Gone { platform, .. } => *platform,
        }
    }

    /// What another attempt may do, as decided where the failure was seen: a 429 waits
    /// its `Retry-After`; a connection failure, a 5xx or an overload as their producer
    /// classified them; everything else is final.
    pub fn retry(&self) -> Retry {
        match self {
            PlatformError::RateLimited { retry_after, .. } => Retry::Wait { after: *retry_after },
            PlatformError::Unreachable { retry, .. }
            | PlatformError::Upstream { retry, .. }
            | PlatformError::Overloaded { retry, .. } => *retry,
            _ => Retry::No,
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
            PlatformError::FileMissing { .. } => "file_missing",
            PlatformError::AccessDenied { .. } => "access_denied",
            PlatformError::Challenge { .. } => "challenge",
            PlatformError::TooLarge { .. } => "too_large",
            PlatformError::Upstream { .. } => "upstream_error",
            PlatformError::Overloaded { .. } => "overloaded",
            PlatformError::Internal { .. } => "internal",
            PlatformError::Garbage { .. } => "garbage",
            PlatformError::Failed { .. } => "failed",
            PlatformError::ForeignLink { .. } => "foreign_link",
            PlatformError::TooManyPages { .. } => "too_many_pages",
            PlatformError::Unreadable { .. } => "unreadable",
            PlatformError::Config { .. } => "config",
            PlatformError::Gone { .. } => "gone",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_404_is_not_trouble_that_passes_and_a_5xx_is() {
        let at = |status: u16| {
            PlatformError::Upstream {
                platform: crate::platforms::ob::PLATFORM,
                status,
                retry: Retry::No,
            }
            .to_string()
        };
        for gone in [404, 410] {
            let m = at(gone);
            assert!(m.contains("not found") && !m.contains("trouble"), "{m}");
        }
        assert!(at(418).contains("refused") && !at(418).contains("trouble"));
        for passing in [500, 503, 301] {
            assert!(at(passing).contains("may be having trouble"), "{passing}");
        }
    }

    #[test]
    fn errors_name_the_platform_and_the_way_out() {
        let e = PlatformError::RateLimited {
            platform: crate::platforms::obv::PLATFORM,
            retry_after: Duration::from_millis(1500),
        };
        assert_eq!(
            e.to_string(),
            "OpenBesluitvorming is busy (HTTP 429) and asks to wait 2 s; ask again after that"
        );
        let e = PlatformError::Unreachable {
            platform: crate::platforms::tk::PLATFORM,
            detail: "connection refused".into(),
            retry: Retry::Yes { after: None },
        };
        assert!(e.to_string().starts_with("Tweede Kamer is unreachable"));
        let e = PlatformError::Challenge {
            platform: crate::platforms::rechtspraak::PLATFORM,
            signal: "cf-mitigated: challenge",
        };
        assert!(
            e.to_string().contains(
                "asks for a browser challenge (cf-mitigated: challenge); BesluitBron does not impersonate a browser"
            ),
            "{e}"
        );
        let e = PlatformError::TooLarge {
            platform: crate::platforms::tk::PLATFORM,
            limit_bytes: 1024,
            size_bytes: None,
        };
        assert!(
            e.to_string()
                .starts_with("Tweede Kamer sent an answer of more than 1024 bytes, more than the 1024 bytes"),
            "{e}"
        );
        let e = PlatformError::TooLarge {
            platform: crate::platforms::obv::PLATFORM,
            limit_bytes: 1024,
            size_bytes: Some(5000),
        };
        assert!(
            e.to_string().starts_with(
                "OpenBesluitvorming sent an answer of 5000 bytes, more than the 1024 bytes BesluitBron reads"
            ),
            "{e}"
        );
    }
}
