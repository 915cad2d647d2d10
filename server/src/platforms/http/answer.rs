//! A platform's answer and how to read it.

use besluitbron_core::PlatformId;
use reqwest::StatusCode;
use reqwest::header::{self, HeaderMap};
use serde::de::DeserializeOwned;

use super::PlatformError;

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
