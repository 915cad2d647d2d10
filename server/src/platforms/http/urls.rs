//! Base URLs, paths and query strings of platform requests.

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
    fn base_urls_are_checked_and_joined() {
        let base = parse_base_url(PlatformId::Tk, "http://127.0.0.1:9/OData/v4/2.0/").unwrap();
        assert_eq!(
            join(PlatformId::Tk, &base, "Document").unwrap().as_str(),
            "http://127.0.0.1:9/OData/v4/2.0/Document"
        );
        assert!(parse_base_url(PlatformId::Tk, "ftp://x").is_err());
        assert!(parse_base_url(PlatformId::Tk, "http://x/?a=1").is_err());
    }
}
