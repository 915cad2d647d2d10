//! A platform's answer ([`Fetched`]) and how every client reads it: the one status →
//! error mapping ([`status_error`]), JSON decoding, and sniffing the body so a
//! connector can tell an HTML error page answered with 200 from the XML it asked for.
//!
//! Invariants: reading an answer never panics, whatever the platform sent; the error
//! for a status is the same for every platform, except for the code and message a
//! platform puts in a 400's body ([`RefusalFormat`]).

use besluitbron_core::PlatformId;
use reqwest::header::{self, HeaderMap};
use reqwest::{StatusCode, Url};
use serde::de::DeserializeOwned;

use super::{PlatformError, Retry};

/// A platform's answer that a connector reads: any status but 429 and 5xx (those are
/// classified by [`super::PlatformHttp::send`]), with its headers, the URL it
/// came from and the whole body, which is never larger than the client's
/// [`super::HttpConfig::max_body_bytes`].
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The HTTP status (2xx, 3xx when a redirect was not followed, or 4xx other than 429).
    pub status: StatusCode,
    /// The response headers.
    pub headers: HeaderMap,
    /// The URL that answered: the request's, or where same-host redirects led.
    pub url: Url,
    /// The whole body, as sent (no decoding).
    pub body: Vec<u8>,
}

impl Fetched {
    /// The `Content-Type` header as sent (parameters included), when it is readable text.
    pub fn content_type(&self) -> Option<&str> {
        self.headers.get(header::CONTENT_TYPE)?.to_str().ok().map(str::trim)
    }

    /// True when the body looks like an HTML page: after whitespace, a byte-order mark,
    /// an XML declaration and comments, it opens with `<!DOCTYPE html`, `<html`, `<head`
    /// or `<body` (any case). What the `Content-Type` says is not consulted: platforms
    /// answer error pages with 200 and the wrong type.
    pub fn looks_like_html(&self) -> bool {
        let rest = skip_prolog(&self.body);
        ["<!doctype html", "<html", "<head", "<body"].iter().any(|tag| {
            starts_with_ignore_case(rest, tag.as_bytes())
                && rest
                    .get(tag.len())
                    .is_none_or(|b| b.is_ascii_whitespace() || matches!(b, b'>' | b'/'))
        })
    }

    /// True when the body looks like an XML document that is not an HTML page: after
    /// whitespace and a byte-order mark it opens with `<?xml`, or with an element
    /// (`<` and a letter, `_` or `:`). Use it before parsing an SRU or Atom answer.
    pub fn is_xml(&self) -> bool {
        if self.looks_like_html() {
            return false;
        }
        let start = skip_space(&self.body);
        start.starts_with(b"<?xml")
            || start.first() == Some(&b'<')
                && start
                    .get(1)
                    .is_some_and(|&b| b.is_ascii_alphabetic() || b == b'_' || b == b':' || b >= 0x80)
    }
}

/// `bytes` without a leading UTF-8 byte-order mark and whitespace.
fn skip_space(bytes: &[u8]) -> &[u8] {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    let start = bytes
        .iter()
        .position(|b| !b.is_ascii_whitespace())
        .unwrap_or(bytes.len());
    &bytes[start..]
}

/// `bytes` after whitespace, an XML declaration and comments (a bounded number of them,
/// so a body of nothing but comments costs little).
fn skip_prolog(bytes: &[u8]) -> &[u8] {
    let mut rest = skip_space(bytes);
    for _ in 0..8 {
        let end = if rest.starts_with(b"<?") {
            find(rest, b"?>").map(|i| i + 2)
        } else if rest.starts_with(b"<!--") {
            find(rest, b"-->").map(|i| i + 3)
        } else {
            None
        };
        match end {
            Some(end) => rest = skip_space(&rest[end..]),
            None => break,
        }
    }
    rest
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn starts_with_ignore_case(bytes: &[u8], prefix: &[u8]) -> bool {
    bytes.len() >= prefix.len() && bytes[..prefix.len()].eq_ignore_ascii_case(prefix)
}

/// What a platform said in the body of a 400.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Refusal {
    /// The platform's machine-readable code (an empty code counts as none).
    pub code: Option<String>,
    /// Its explanation.
    pub message: Option<String>,
}

/// How a platform explains a refused request (HTTP 400) in the body.
#[derive(Clone, Copy, Debug)]
pub struct RefusalFormat {
    /// The code reported when the body names none or cannot be read.
    pub default_code: &'static str,
    /// Reads the code and message from a 400's body; `None` when the body is not in
    /// the platform's format.
    pub read: fn(&[u8]) -> Option<Refusal>,
}

impl RefusalFormat {
    /// A platform whose 400 bodies hold nothing BesluitBron reads: code `bad_request`.
    pub const OPAQUE: RefusalFormat = RefusalFormat {
        default_code: "bad_request",
        read: |_| None,
    };
}

/// What a request asked for, as far as a 404 is concerned: only a lookup of one record
/// by its id may tell the assistant that something does not exist.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asked<'a> {
    /// One record by its id, named for the message (e.g. ``entity `x` ``): a 404 is
    /// [`PlatformError::NotFound`].
    Record(&'a str),
    /// A search, a page or a list: a 404 (often an HTML page of a proxy or a moved API)
    /// says nothing about a record, and is [`PlatformError::Upstream`] with status 404.
    Listing,
}

impl<'a> From<&'a str> for Asked<'a> {
    fn from(what: &'a str) -> Asked<'a> {
        Asked::Record(what)
    }
}

impl<'a> From<&'a String> for Asked<'a> {
    fn from(what: &'a String) -> Asked<'a> {
        Asked::Record(what)
    }
}

/// The error for an answer that is not a success, the same for every client:
///
/// | status | error |
/// |---|---|
/// | 400 | [`PlatformError::BadRequest`], code and message read by `refusals` |
/// | 401, 403 | [`PlatformError::AccessDenied`] |
/// | 404 | [`PlatformError::NotFound`] naming the record when `asked` is [`Asked::Record`]; [`PlatformError::Upstream`] for a listing |
/// | anything else (3xx not followed, other 4xx, 5xx; a 2xx if asked) | [`PlatformError::Upstream`] |
///
/// A 429 does not reach a connector ([`PlatformError::RateLimited`] first); a bot challenge
/// neither ([`PlatformError::Challenge`]).
pub fn status_error<'a>(
    platform: PlatformId,
    fetched: &Fetched,
    asked: impl Into<Asked<'a>>,
    refusals: &RefusalFormat,
) -> PlatformError {
    match fetched.status {
        StatusCode::BAD_REQUEST => {
            let refusal = (refusals.read)(&fetched.body).unwrap_or_default();
            PlatformError::BadRequest {
                sent: true,
                platform,
                code: refusal
                    .code
                    .filter(|c| !c.is_empty())
                    .unwrap_or_else(|| refusals.default_code.to_owned()),
                message: refusal
                    .message
                    .filter(|m| !m.is_empty())
                    .map(|m| super::brief(&m))
                    .unwrap_or_else(|| "the platform gave no reason".to_owned()),
            }
        }
        StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN => PlatformError::AccessDenied {
            platform,
            status: fetched.status.as_u16(),
        },
        StatusCode::NOT_FOUND => match asked.into() {
            Asked::Record(what) => PlatformError::NotFound {
                platform,
                what: what.to_owned(),
            },
            Asked::Listing => PlatformError::Upstream {
                platform,
                status: 404,
                retry: Retry::No,
            },
        },
        // An answer the connector read: whatever its status, asking again would get it
        // again (a 5xx never gets here: the HTTP layer classified it).
        status => PlatformError::Upstream {
            platform,
            status: status.as_u16(),
            retry: Retry::No,
        },
    }
}

/// A success's body decoded as JSON; any other status is [`status_error`].
pub fn read_json<'a, T: DeserializeOwned>(
    platform: PlatformId,
    fetched: &Fetched,
    asked: impl Into<Asked<'a>>,
    refusals: &RefusalFormat,
) -> Result<T, PlatformError> {
    if fetched.status.is_success() {
        decode_json(platform, fetched)
    } else {
        Err(status_error(platform, fetched, asked, refusals))
    }
}

/// Decodes a JSON body, or says why it is not one: [`PlatformError::Failed`] for the
/// platform's error object under a success status ([`error_object`]),
/// [`PlatformError::Garbage`] for anything else that is not the expected JSON (naming the
/// content type, and saying so when the body is an HTML page). A body cut short is never
/// a complete JSON value, so it is garbage too, never a shorter answer.
pub fn decode_json<T: DeserializeOwned>(platform: PlatformId, fetched: &Fetched) -> Result<T, PlatformError> {
    if let Some(said) = error_object(&fetched.body) {
        return Err(PlatformError::Failed { platform, said });
    }
    serde_json::from_slice(&fetched.body).map_err(|e| {
        let content_type = fetched.content_type().unwrap_or("no content type");
        let detail = if fetched.looks_like_html() {
            format!("{content_type} body is an HTML page, not the expected JSON")
        } else {
            format!("{} body is not the expected JSON: {e}", super::brief(content_type))
        };
        PlatformError::Garbage { platform, detail }
    })
}

/// A JSON body read as `T`, for a client that reads bodies itself: the platform's error
/// object is [`PlatformError::Failed`], anything else not a `T` is
/// [`PlatformError::Garbage`] saying it is not `what` (e.g. `an Elasticsearch search
/// answer`).
pub fn parse_json<T: DeserializeOwned>(platform: PlatformId, body: &[u8], what: &str) -> Result<T, PlatformError> {
    if let Some(said) = error_object(body) {
        return Err(PlatformError::Failed { platform, said });
    }
    serde_json::from_slice(body).map_err(|e| PlatformError::Garbage {
        platform,
        detail: format!("not {what}: {e}"),
    })
}

/// What a JSON answer's error object says, when its top level is one: an object with a
/// non-null `error` member — Elasticsearch's `{"error": {"root_cause": […], "type", "reason"},
/// "status": 500}`, OData's `{"error": {"code", "message"}}`, or `{"error": "…"}`. No
/// platform's answer of BesluitBron's has a top-level `error`, so its presence is the
/// platform failing, whatever the status said. `None` for anything else.
pub fn error_object(body: &[u8]) -> Option<String> {
    /// The top level, with every member but these two skipped unread.
    #[derive(serde::Deserialize)]
    struct Top {
        #[serde(default)]
        error: Option<serde_json::Value>,
        #[serde(default)]
        status: Option<serde_json::Value>,
    }
    // Only an object has members (serde would read an array into `Top` by position).
    if skip_space(body).first() != Some(&b'{') {
        return None;
    }
    let top: Top = serde_json::from_slice(body).ok()?;
    let error = top.error.filter(|e| !e.is_null())?;
    let text = |v: &serde_json::Value, key: &str| v.get(key).and_then(|x| x.as_str()).map(str::to_owned);
    let mut said = match &error {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Object(_) => {
            let cause = error.get("root_cause").and_then(|r| r.get(0));
            let kind = text(&error, "type").or_else(|| cause.and_then(|c| text(c, "type")));
            let reason = text(&error, "reason")
                .or_else(|| cause.and_then(|c| text(c, "reason")))
                .or_else(|| text(&error, "message"))
                .or_else(|| error.get("message").and_then(|m| text(m, "value")));
            let code = text(&error, "code");
            [kind, code, reason]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join(": ")
        }
        other => other.to_string(),
    };
    if said.trim().is_empty() {
        said = "an error without words".to_owned();
    }
    if let Some(status) = top.status.as_ref().and_then(|s| s.as_u64()) {
        said = format!("{said} (status {status})");
    }
    Some(super::brief(&said))
}

/// The header that marks an answer as a bot challenge (PLATFORMS.md §10.7), as
/// `name: value`: `cf-mitigated: challenge` (Cloudflare), `x-amzn-waf-action:
/// challenge` or `x-amzn-waf-action: captcha` (AWS WAF; a CAPTCHA needs a browser just
/// the same). `None` for an ordinary answer.
pub fn challenge_signal(headers: &HeaderMap) -> Option<&'static str> {
    let says = |name: &str, value: &str| {
        headers
            .get_all(name)
            .iter()
            .any(|v| v.to_str().is_ok_and(|v| v.trim().eq_ignore_ascii_case(value)))
    };
    if says("cf-mitigated", "challenge") {
        Some("cf-mitigated: challenge")
    } else if says("x-amzn-waf-action", "challenge") {
        Some("x-amzn-waf-action: challenge")
    } else if says("x-amzn-waf-action", "captcha") {
        Some("x-amzn-waf-action: captcha")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn answer(status: u16, content_type: Option<&'static str>, body: &[u8]) -> Fetched {
        let mut headers = HeaderMap::new();
        if let Some(ct) = content_type {
            headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(ct));
        }
        Fetched {
            status: StatusCode::from_u16(status).unwrap(),
            headers,
            url: Url::parse("http://127.0.0.1:9/x").unwrap(),
            body: body.to_vec(),
        }
    }

    fn sniff(body: &str) -> (bool, bool) {
        let f = answer(200, None, body.as_bytes());
        (f.is_xml(), f.looks_like_html())
    }

    #[test]
    fn html_error_pages_are_told_from_xml() {
        assert_eq!(
            sniff("<?xml version=\"1.0\"?><sru:searchRetrieveResponse/>"),
            (true, false)
        );
        assert_eq!(
            sniff("\u{feff}\n  <feed xmlns=\"http://www.w3.org/2005/Atom\">"),
            (true, false)
        );
        assert_eq!(sniff("<open-rechtspraak>"), (true, false));
        assert_eq!(sniff("<!DOCTYPE html><html><body>Service Unavailable"), (false, true));
        assert_eq!(sniff("\r\n<HTML lang=nl>"), (false, true));
        assert_eq!(sniff("<html>"), (false, true));
        assert_eq!(
            sniff("<?xml version=\"1.0\"?>\n<!-- x -->\n<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0\">"),
            (false, true)
        );
        assert_eq!(sniff("<body>oops</body>"), (false, true));
        assert_eq!(sniff("<htmlish/>"), (true, false), "a tag merely starting with html");
        assert_eq!(sniff("{\"a\":1}"), (false, false));
        assert_eq!(sniff("%PDF-1.7"), (false, false));
        assert_eq!(sniff(""), (false, false));
        assert_eq!(sniff("<"), (false, false));
        assert_eq!(sniff("<!-- unterminated"), (false, false));
    }

    #[test]
    fn content_type_is_the_header_as_sent() {
        assert_eq!(
            answer(200, Some("text/xml; charset=utf-8"), b"").content_type(),
            Some("text/xml; charset=utf-8")
        );
        assert_eq!(answer(200, None, b"").content_type(), None);
    }

    fn read_code(body: &[u8]) -> Option<Refusal> {
        let v: serde_json::Value = serde_json::from_slice(body).ok()?;
        Some(Refusal {
            code: v["code"].as_str().map(str::to_owned),
            message: v["error"].as_str().map(str::to_owned),
        })
    }

    const CODED: RefusalFormat = RefusalFormat {
        default_code: "invalid_query",
        read: read_code,
    };

    #[test]
    fn one_status_mapping_for_every_platform() {
        let p = crate::platforms::obv::PLATFORM;
        let coded = answer(
            400,
            Some("application/json"),
            br#"{"code":"invalid_limit","error":"te groot"}"#,
        );
        assert_eq!(
            status_error(p, &coded, "x", &CODED),
            PlatformError::BadRequest {
                sent: true,
                platform: p,
                code: "invalid_limit".into(),
                message: "te groot".into()
            }
        );
        for body in [&br#"{"code":"","error":""}"#[..], b"<html>", b""] {
            assert_eq!(
                status_error(p, &answer(400, None, body), "x", &CODED),
                PlatformError::BadRequest {
                    sent: true,
                    platform: p,
                    code: "invalid_query".into(),
                    message: "the platform gave no reason".into()
                }
            );
        }
        assert!(matches!(
            status_error(p, &coded, "x", &RefusalFormat::OPAQUE),
            PlatformError::BadRequest { code, .. } if code == "bad_request"
        ));
        for status in [401, 403] {
            assert_eq!(
                status_error(p, &answer(status, None, b""), "x", &CODED),
                PlatformError::AccessDenied { platform: p, status }
            );
        }
        assert_eq!(
            status_error(p, &answer(404, None, b""), "entity `a`", &CODED),
            PlatformError::NotFound {
                platform: p,
                what: "entity `a`".into()
            }
        );
        assert_eq!(
            status_error(
                p,
                &answer(404, Some("text/html"), b"<html>Not Found</html>"),
                Asked::Listing,
                &CODED
            ),
            PlatformError::Upstream {
                platform: p,
                status: 404,
                retry: Retry::No
            },
            "a 404 answering a search is not a missing record"
        );
        for status in [301, 410, 418, 500, 503] {
            assert_eq!(
                status_error(p, &answer(status, None, b""), "x", &CODED),
                PlatformError::Upstream {
                    platform: p,
                    status,
                    retry: Retry::No
                }
            );
        }
    }

    #[test]
    fn json_is_read_only_from_a_success() {
        let ok: serde_json::Value =
            read_json(crate::platforms::tk::PLATFORM, &answer(200, None, b"[1]"), "x", &CODED).unwrap();
        assert_eq!(ok, serde_json::json!([1]));
        let missing = read_json::<serde_json::Value>(
            crate::platforms::tk::PLATFORM,
            &answer(404, None, b"[1]"),
            "document 1",
            &CODED,
        );
        assert!(matches!(missing, Err(PlatformError::NotFound { what, .. }) if what == "document 1"));
        let html = read_json::<serde_json::Value>(
            crate::platforms::tk::PLATFORM,
            &answer(200, Some("text/html"), b"<html>"),
            "x",
            &CODED,
        );
        assert_eq!(
            html,
            Err(PlatformError::Garbage {
                platform: crate::platforms::tk::PLATFORM,
                detail: "text/html body is an HTML page, not the expected JSON".into()
            })
        );
    }

    #[test]
    fn an_error_object_under_a_200_is_the_platforms_failure_never_a_result() {
        #[derive(serde::Deserialize, Debug)]
        struct Page {
            #[serde(default)]
            #[allow(dead_code)]
            results: Vec<serde_json::Value>,
        }
        let es = br#"{"error":{"root_cause":[{"type":"search_phase_execution_exception","reason":"all shards failed"}],"type":"search_phase_execution_exception","reason":"all shards failed","phase":"query"},"status":500}"#;
        let e = decode_json::<Page>(
            crate::platforms::obv::PLATFORM,
            &answer(200, Some("application/json"), es),
        )
        .unwrap_err();
        assert_eq!(
            e.to_string(),
            "OpenBesluitvorming failed: search_phase_execution_exception: all shards failed (status 500); this is not \
             an empty result: ask again later, or narrow the question"
        );
        let odata = br#"{"error":{"code":"500","message":"An error has occurred."}}"#;
        assert!(matches!(
            decode_json::<Page>(crate::platforms::tk::PLATFORM, &answer(200, None, odata)),
            Err(PlatformError::Failed { said, .. }) if said == "500: An error has occurred."
        ));
        assert!(matches!(
            decode_json::<Page>(crate::platforms::opentk::PLATFORM, &answer(200, None, br#"{"error":"boom"}"#)),
            Err(PlatformError::Failed { said, .. }) if said == "boom"
        ));
        // Not an error object: an answer of its own, a null error, a non-object.
        for fine in [&br#"{"results":[]}"#[..], br#"{"error":null,"results":[]}"#] {
            assert!(decode_json::<Page>(crate::platforms::obv::PLATFORM, &answer(200, None, fine)).is_ok());
        }
        assert_eq!(error_object(b"[1,2]"), None);
        assert_eq!(
            error_object(br#"{"error": {"#),
            None,
            "cut short: garbage, not a failure"
        );
    }

    #[test]
    fn challenges_are_recognised_by_their_headers() {
        let mut h = HeaderMap::new();
        assert_eq!(challenge_signal(&h), None);
        h.insert("cf-mitigated", HeaderValue::from_static("other"));
        assert_eq!(challenge_signal(&h), None);
        h.append("cf-mitigated", HeaderValue::from_static(" Challenge "));
        assert_eq!(challenge_signal(&h), Some("cf-mitigated: challenge"));
        let mut h = HeaderMap::new();
        h.insert("x-amzn-waf-action", HeaderValue::from_static("challenge"));
        assert_eq!(challenge_signal(&h), Some("x-amzn-waf-action: challenge"));
        h.insert("x-amzn-waf-action", HeaderValue::from_static("captcha"));
        assert_eq!(challenge_signal(&h), Some("x-amzn-waf-action: captcha"));
        h.insert("x-amzn-waf-action", HeaderValue::from_static("block"));
        assert_eq!(challenge_signal(&h), None);
    }
}
