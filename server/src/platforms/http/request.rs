//! What a platform client asks: [`PlatformRequest`], a method, a URL, a body and
//! whether the request may be repeated.
//!
//! Invariants: a GET has no body and is always idempotent; a POST is non-idempotent
//! unless its connector marks it ([`PlatformRequest::idempotent`]), because only the
//! connector knows that a POST is a read (OpenTK's multipart search is). The request
//! is plain data, so one value can be sent any number of times: the multipart form,
//! which reqwest consumes, is built anew for every attempt.
//!
//! What this module does not do: build URLs (see [`super::with_query`]) or send.

use reqwest::Url;
use reqwest::header::{self, HeaderValue};

/// The HTTP methods BesluitBron sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Method {
    /// A read without a body.
    Get,
    /// A request with a body: a write, or a read the platform only takes this way.
    Post,
}

impl Method {
    /// The method's name on the wire.
    pub const fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
        }
    }
}

/// The body of a POST.
#[derive(Clone, Debug, PartialEq)]
pub enum RequestBody {
    /// No body (every GET).
    None,
    /// `application/x-www-form-urlencoded` pairs, in this order.
    Form(Vec<(String, String)>),
    /// `multipart/form-data` text parts (name, value), in this order.
    Multipart(Vec<(String, String)>),
    /// `application/json`.
    Json(serde_json::Value),
}

/// One request to a platform, as plain data.
#[derive(Clone, Debug, PartialEq)]
pub struct PlatformRequest {
    method: Method,
    url: Url,
    body: RequestBody,
    idempotent: bool,
    accept: Option<&'static str>,
    if_none_match: Option<String>,
}

impl PlatformRequest {
    /// A GET of `url` (idempotent, no body).
    pub fn get(url: Url) -> PlatformRequest {
        PlatformRequest {
            method: Method::Get,
            url,
            body: RequestBody::None,
            idempotent: true,
            accept: None,
            if_none_match: None,
        }
    }

    /// A POST of urlencoded `pairs` to `url`; not idempotent until marked.
    pub fn post_form<K: Into<String>, V: Into<String>>(
        url: Url,
        pairs: impl IntoIterator<Item = (K, V)>,
    ) -> PlatformRequest {
        PlatformRequest::post(url, RequestBody::Form(owned_pairs(pairs)))
    }

    /// A POST of `multipart/form-data` text `parts` to `url`; not idempotent until marked.
    pub fn post_multipart<K: Into<String>, V: Into<String>>(
        url: Url,
        parts: impl IntoIterator<Item = (K, V)>,
    ) -> PlatformRequest {
        PlatformRequest::post(url, RequestBody::Multipart(owned_pairs(parts)))
    }

    /// A POST of a JSON `value` to `url`; not idempotent until marked.
    pub fn post_json(url: Url, value: serde_json::Value) -> PlatformRequest {
        PlatformRequest::post(url, RequestBody::Json(value))
    }

    fn post(url: Url, body: RequestBody) -> PlatformRequest {
        PlatformRequest {
            method: Method::Post,
            url,
            body,
            idempotent: false,
            accept: None,
            if_none_match: None,
        }
    }

    /// Marks the request idempotent: sending it twice has the effect of sending it once
    /// (a search sent as a POST), so a failed attempt may be repeated. A no-op on a GET.
    pub fn idempotent(mut self) -> PlatformRequest {
        self.idempotent = true;
        self
    }

    /// Sends `media_type` as `Accept` instead of the client's default (e.g.
    /// `application/pdf` for a download from a JSON API).
    pub fn with_accept(mut self, media_type: &'static str) -> PlatformRequest {
        self.accept = Some(media_type);
        self
    }

    /// Makes the request conditional: `If-None-Match` with the `etag` of the copy
    /// BesluitBron keeps, so an unchanged answer comes back as a bodiless 304. A value
    /// that cannot be a header (a platform sent garbage as its ETag) is left out.
    pub fn if_none_match(mut self, etag: impl Into<String>) -> PlatformRequest {
        let etag = etag.into();
        if HeaderValue::from_str(&etag).is_ok() {
            self.if_none_match = Some(etag);
        }
        self
    }

    /// The `If-None-Match` this request sends, if any.
    pub fn etag(&self) -> Option<&str> {
        self.if_none_match.as_deref()
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// The URL, query included.
    pub fn url(&self) -> &Url {
        &self.url
    }

    /// The body ([`RequestBody::None`] for a GET).
    pub fn body(&self) -> &RequestBody {
        &self.body
    }

    /// True when a failed attempt may be repeated (every GET; a POST only when marked).
    pub fn is_idempotent(&self) -> bool {
        self.idempotent
    }

    /// The `Accept` this request sends instead of the client's default, if any.
    pub fn accept(&self) -> Option<&'static str> {
        self.accept
    }

    /// The reqwest request for one attempt (a fresh multipart form each time).
    pub(super) fn builder(&self, client: &reqwest::Client) -> reqwest::RequestBuilder {
        let builder = match self.method {
            Method::Get => client.get(self.url.clone()),
            Method::Post => client.post(self.url.clone()),
        };
        let builder = match self.accept {
            Some(accept) => builder.header(header::ACCEPT, HeaderValue::from_static(accept)),
            None => builder,
        };
        // Checked when it was set.
        let builder = match self
            .if_none_match
            .as_deref()
            .and_then(|e| HeaderValue::from_str(e).ok())
        {
            Some(etag) => builder.header(header::IF_NONE_MATCH, etag),
            None => builder,
        };
        match &self.body {
            RequestBody::None => builder,
            RequestBody::Form(pairs) => builder.form(pairs),
            RequestBody::Multipart(parts) => {
                let form = parts
                    .iter()
                    .fold(reqwest::multipart::Form::new(), |form, (name, value)| {
                        form.text(name.clone(), value.clone())
                    });
                builder.multipart(form)
            }
            RequestBody::Json(value) => builder
                .header(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))
                // Display of a `Value` is its compact JSON and cannot fail.
                .body(value.to_string()),
        }
    }
}

fn owned_pairs<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Vec<(String, String)> {
    pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url() -> Url {
        Url::parse("http://127.0.0.1:9/search").unwrap()
    }

    #[test]
    fn a_get_is_idempotent_and_a_post_only_when_marked() {
        let get = PlatformRequest::get(url());
        assert_eq!(
            (get.method(), get.is_idempotent(), get.body()),
            (Method::Get, true, &RequestBody::None)
        );
        let post = PlatformRequest::post_multipart(url(), [("q", "stikstof")]);
        assert_eq!(post.method(), Method::Post);
        assert!(!post.is_idempotent(), "a POST is not idempotent by default");
        assert!(post.clone().idempotent().is_idempotent());
        assert_eq!(
            post.body(),
            &RequestBody::Multipart(vec![("q".to_owned(), "stikstof".to_owned())])
        );
        assert!(!PlatformRequest::post_form(url(), [("a", "1")]).is_idempotent());
        assert!(!PlatformRequest::post_json(url(), serde_json::json!({})).is_idempotent());
    }

    #[test]
    fn accept_overrides_only_when_set() {
        assert_eq!(PlatformRequest::get(url()).accept(), None);
        let pdf = PlatformRequest::get(url()).with_accept("application/pdf");
        assert_eq!(pdf.accept(), Some("application/pdf"));
        let built = pdf.builder(&reqwest::Client::new()).build().unwrap();
        assert_eq!(built.headers()[header::ACCEPT], "application/pdf");
        assert_eq!(built.method(), reqwest::Method::GET);
    }

    #[test]
    fn bodies_are_encoded_with_their_content_type() {
        let client = reqwest::Client::new();
        let form = PlatformRequest::post_form(url(), [("a", "1"), ("b", "x y&z")])
            .builder(&client)
            .build()
            .unwrap();
        assert_eq!(
            form.headers()[header::CONTENT_TYPE],
            "application/x-www-form-urlencoded"
        );
        assert_eq!(form.body().and_then(|b| b.as_bytes()), Some(&b"a=1&b=x+y%26z"[..]));
        let json = PlatformRequest::post_json(url(), serde_json::json!({"q": "wet"}))
            .builder(&client)
            .build()
            .unwrap();
        assert_eq!(json.headers()[header::CONTENT_TYPE], "application/json");
        assert_eq!(json.body().and_then(|b| b.as_bytes()), Some(&br#"{"q":"wet"}"#[..]));
        let multipart = PlatformRequest::post_multipart(url(), [("q", "wet")])
            .builder(&client)
            .build()
            .unwrap();
        let content_type = multipart.headers()[header::CONTENT_TYPE].to_str().unwrap();
        assert!(
            content_type.starts_with("multipart/form-data; boundary="),
            "{content_type}"
        );
    }
}
