//! Base URLs, paths, query strings and continuation links of platform requests.
//!
//! Invariants: a query string is only ever built by `Url::query_pairs_mut`
//! ([`with_query`]), so a value holding `&`, `#` or `=` stays one value (Rechtspraak's
//! `rechtsgebied#strafrecht` must go out as `%23`); a link a platform hands out is
//! followed only when it lies on the configured base URL ([`link_on_base`]).

use besluitbron_core::PlatformId;
use reqwest::Url;

use super::PlatformError;

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
    // The message names neither the base URL nor the path: either may reach a tool error.
    Url::parse(&text).map_err(|e| PlatformError::Config {
        platform,
        detail: format!("cannot form a request URL ({e})"),
    })
}

/// `id` as exactly one path segment of a request URL: refused when it is empty, `.` or
/// `..` (a URL parser resolves those, and their percent-encoded forms, as dot segments,
/// so `entities/..` would ask for the parent path); otherwise percent-encoded
/// ([`encode_segment`]), so `/`, `?`, `#` and `%` stay inside the segment.
///
/// Use it for every id a tool puts into a URL path, before the call is queued: the
/// refusal is [`PlatformError::BadRequest`] with code `invalid_id`, nothing sent.
pub fn path_segment(platform: PlatformId, id: &str) -> Result<String, PlatformError> {
    if matches!(id, "" | "." | "..") {
        return Err(PlatformError::BadRequest {
            sent: false,
            platform,
            code: "invalid_id".to_owned(),
            message: "an id must be a name, not empty, `.` or `..`".to_owned(),
        });
    }
    Ok(encode_segment(id))
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

/// `url` with `pairs` appended to its query, each name and value form-encoded.
///
/// Never concatenate query strings by hand: this is the one way a client adds
/// parameters. No pair leaves `url` as it was (no stray `?`).
pub fn with_query<K: AsRef<str>, V: AsRef<str>>(mut url: Url, pairs: impl IntoIterator<Item = (K, V)>) -> Url {
    let mut pairs = pairs.into_iter().peekable();
    if pairs.peek().is_some() {
        let mut query = url.query_pairs_mut();
        for (name, value) in pairs {
            query.append_pair(name.as_ref(), value.as_ref());
        }
    }
    url
}

/// Accepts a link a platform sent (or an assistant handed back) only when it lies on
/// `base`: the same scheme, host and port, no credentials or fragment, and a path
/// equal to the base's path or below it (whole segments: `/v4/2.0x` is not under
/// `/v4/2.0`). Dot segments are resolved by parsing, so `..` cannot climb out.
///
/// Returns the parsed link, or [`PlatformError::ForeignLink`] saying why it was
/// refused; nothing is sent either way. A client may narrow the path further.
pub fn link_on_base(platform: PlatformId, base: &Url, link: &str) -> Result<Url, PlatformError> {
    let refuse = |detail: String| PlatformError::ForeignLink { platform, detail };
    // The reasons name neither the link nor the base: a refusal may reach a tool error,
    // which never carries the platform's configured address or an assistant's input.
    let url = Url::parse(link).map_err(|e| refuse(format!("not a URL: {e}")))?;
    if url.scheme() != base.scheme()
        || url.host_str() != base.host_str()
        || url.port_or_known_default() != base.port_or_known_default()
    {
        return Err(refuse("the link points at another host".to_owned()));
    }
    if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
        return Err(refuse("the link carries credentials or a fragment".to_owned()));
    }
    let root = base.path().trim_end_matches('/');
    let under = url.path() == root || url.path().strip_prefix(root).is_some_and(|rest| rest.starts_with('/'));
    if !under {
        return Err(refuse("the link's path is not the platform's".to_owned()));
    }
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_are_percent_encoded() {
        assert_eq!(
            encode_segment("document:notubiz:gemeente:soest:1"),
            "document%3Anotubiz%3Agemeente%3Asoest%3A1"
        );
        assert_eq!(encode_segment("a/b c"), "a%2Fb%20c");
    }

    #[test]
    fn an_id_is_exactly_one_path_segment() {
        let base = parse_base_url(crate::platforms::obv::PLATFORM, "http://127.0.0.1:9/obv").unwrap();
        for id in ["", ".", ".."] {
            assert!(
                matches!(path_segment(crate::platforms::obv::PLATFORM, id), Err(PlatformError::BadRequest { code, .. }) if code == "invalid_id"),
                "`{id}` is refused"
            );
        }
        for (id, path) in [
            ("...", "/obv/api/entities/..."),
            ("a/../b", "/obv/api/entities/a%2F..%2Fb"),
            ("%2e%2e", "/obv/api/entities/%252e%252e"),
            ("x?y#z", "/obv/api/entities/x%3Fy%23z"),
            (".hidden", "/obv/api/entities/.hidden"),
        ] {
            let segment = path_segment(crate::platforms::obv::PLATFORM, id).unwrap();
            let url = join(
                crate::platforms::obv::PLATFORM,
                &base,
                &format!("api/entities/{segment}"),
            )
            .unwrap();
            assert_eq!((url.path(), url.query()), (path, None), "`{id}`");
        }
    }

    #[test]
    fn base_urls_are_checked_and_joined() {
        let base = parse_base_url(crate::platforms::tk::PLATFORM, "http://127.0.0.1:9/OData/v4/2.0/").unwrap();
        assert_eq!(
            join(crate::platforms::tk::PLATFORM, &base, "Document")
                .unwrap()
                .as_str(),
            "http://127.0.0.1:9/OData/v4/2.0/Document"
        );
        assert!(parse_base_url(crate::platforms::tk::PLATFORM, "ftp://x").is_err());
        assert!(parse_base_url(crate::platforms::tk::PLATFORM, "http://x/?a=1").is_err());
    }

    #[test]
    fn query_values_are_encoded_and_no_pair_adds_nothing() {
        let base = Url::parse("http://127.0.0.1:9/uitspraken/zoeken").unwrap();
        assert_eq!(with_query(base.clone(), [("x", ""); 0]).as_str(), base.as_str());
        let url = with_query(
            base,
            [
                ("subject", "http://psi.rechtspraak.nl/rechtsgebied#strafrecht"),
                ("q", "a&b=c d"),
            ],
        );
        assert_eq!(
            url.query(),
            Some("subject=http%3A%2F%2Fpsi.rechtspraak.nl%2Frechtsgebied%23strafrecht&q=a%26b%3Dc+d")
        );
        let more = with_query(url, [("max", "10")]);
        assert!(more.as_str().ends_with("&max=10"), "{more}");
    }

    #[test]
    fn links_must_lie_on_the_base_url() {
        let base = parse_base_url(crate::platforms::tk::PLATFORM, "http://127.0.0.1:9/OData/v4/2.0").unwrap();
        for ok in [
            "http://127.0.0.1:9/OData/v4/2.0",
            "http://127.0.0.1:9/OData/v4/2.0/Document?$skip=250",
            "http://127.0.0.1:9/OData/v4/2.0/Document(1)/resource",
        ] {
            assert_eq!(
                link_on_base(crate::platforms::tk::PLATFORM, &base, ok)
                    .unwrap()
                    .as_str(),
                ok
            );
        }
        for foreign in [
            "http://example.org/OData/v4/2.0/Document",
            "https://127.0.0.1:9/OData/v4/2.0/Document",
            "http://127.0.0.1:10/OData/v4/2.0/Document",
            "http://localhost:9/OData/v4/2.0/Document",
            "http://127.0.0.1:9/OData/v4/2.0x/Document",
            "http://127.0.0.1:9/OData/v4/2.0/../../elsewhere",
            "http://127.0.0.1:9/OData/v4/2.0/%2e%2e/x",
            "http://127.0.0.1:9/elsewhere/Document",
            "http://user:pw@127.0.0.1:9/OData/v4/2.0/Document",
            "http://127.0.0.1:9/OData/v4/2.0/Document#x",
            "/OData/v4/2.0/Document",
            "not a url",
        ] {
            assert!(
                matches!(
                    link_on_base(crate::platforms::tk::PLATFORM, &base, foreign),
                    Err(PlatformError::ForeignLink {
                        platform,
                        ..
                    }) if platform == crate::platforms::tk::PLATFORM
                ),
                "{foreign} must be refused"
            );
        }
        let root = parse_base_url(crate::platforms::obv::PLATFORM, "https://openbesluitvorming.nl/").unwrap();
        assert!(
            link_on_base(
                crate::platforms::obv::PLATFORM,
                &root,
                "https://openbesluitvorming.nl:443/api/search?offset=24"
            )
            .is_ok()
        );
        assert!(
            link_on_base(
                crate::platforms::obv::PLATFORM,
                &root,
                "http://openbesluitvorming.nl/api/search"
            )
            .is_err()
        );
    }
}
