//! A session-era client resuming an event stream (`GET` with `Last-Event-ID`), answered
//! as the SSE specification and the SDKs expect.
//!
//! Two things rmcp (3.11) does that clients do not expect, corrected here:
//! - **It replays the event the client last received.** `Last-Event-ID` names the last
//!   event the client has; the stream resumes *after* it. rmcp's replay starts *at* it,
//!   so a resumed stream repeats one event (a progress notification the client already
//!   had, or one it has forgotten because it cancelled the request: the TypeScript SDK
//!   reports "progress for an unknown token"). The event index the client names is
//!   advanced by one before rmcp reads it: the replay then starts after it.
//! - **An ended stream is resumed as an empty stream.** When the request's stream has
//!   ended (its answer sent, the request cancelled, or answered with a JSON-RPC error,
//!   after which the TypeScript SDK 1.32 still resumes), rmcp answers `200` with a stream
//!   that ends at once; the SDKs take an ended stream as a reason to resume again, every
//!   retry interval, without end. Such an answer becomes `204 No Content`: nothing is
//!   left to send, and both SDKs stop quietly.
//!
//! What this module does not do: keep events (rmcp's event cache does) or decide which
//! client may resume which stream (rmcp checks the session; the guard its owner).

use std::time::Duration;

use axum::body::{Body, Bytes, HttpBody};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, HeaderName, HeaderValue, Method, Response, StatusCode};
use axum::response::IntoResponse;
use futures::StreamExt;

/// The header a resuming client names its last event in.
const LAST_EVENT_ID: HeaderName = HeaderName::from_static("last-event-id");

/// How long a resumed stream's first event is waited for, to tell an ended stream from a
/// live one: rmcp sends what it replays, or ends the stream, at once.
const FIRST_EVENT_WITHIN: Duration = Duration::from_millis(250);

/// The event id after `id`, in rmcp's form (`INDEX` or `INDEX/STREAM`); `None` for an id
/// of another form, passed on as sent.
pub fn next_event_id(id: &str) -> Option<String> {
    let (index, stream) = match id.split_once('/') {
        Some((index, stream)) => (index, Some(stream)),
        None => (id, None),
    };
    let next = index.parse::<u64>().ok()?.checked_add(1)?;
    Some(match stream {
        Some(stream) => format!("{next}/{stream}"),
        None => next.to_string(),
    })
}

/// Whether `method` and `headers` resume a stream; if so, its last event id is advanced
/// to the event after it (see the module's text).
pub fn advance(method: &Method, headers: &mut HeaderMap) -> bool {
    if method != Method::GET {
        return false;
    }
    let Some(next) = headers
        .get(&LAST_EVENT_ID)
        .and_then(|v| v.to_str().ok())
        .and_then(next_event_id)
        .and_then(|next| HeaderValue::from_str(&next).ok())
    else {
        return headers.contains_key(&LAST_EVENT_ID);
    };
    headers.insert(LAST_EVENT_ID, next);
    true
}

/// rmcp's answer to a resumption, with an ended stream answered `204 No Content`.
pub async fn answered<B>(response: Response<B>) -> Response<Body>
where
    B: HttpBody<Data = Bytes> + Send + Unpin + 'static,
    B::Error: Into<axum::BoxError>,
{
    let is_stream = response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    if !response.status().is_success() || !is_stream {
        return response.map(Body::new);
    }
    let (parts, body) = response.into_parts();
    // An SSE stream has no trailers: its data is all of it.
    let mut data = Body::new(body).into_data_stream();
    match tokio::time::timeout(FIRST_EVENT_WITHIN, data.next()).await {
        // Ended before any event: nothing is left to resume.
        Ok(None) => StatusCode::NO_CONTENT.into_response(),
        // An event (or a failure): sent first, then the rest as it comes.
        Ok(Some(first)) => {
            let frames = futures::stream::once(async move { first }).chain(data);
            Response::from_parts(parts, Body::from_stream(frames))
        }
        // Live and quiet: the stream as it is (dropping the wait lost nothing).
        Err(_) => Response::from_parts(parts, Body::from_stream(data)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_next_event_id_keeps_its_stream() {
        assert_eq!(next_event_id("1/0").as_deref(), Some("2/0"));
        assert_eq!(next_event_id("0/17").as_deref(), Some("1/17"));
        assert_eq!(next_event_id("41").as_deref(), Some("42"));
        assert_eq!(next_event_id("x/1"), None);
        assert_eq!(next_event_id(""), None);
        assert_eq!(next_event_id(&u64::MAX.to_string()), None);
    }

    #[test]
    fn only_a_get_naming_an_event_resumes() {
        let mut h = HeaderMap::new();
        assert!(!advance(&Method::GET, &mut h));
        h.insert(LAST_EVENT_ID, HeaderValue::from_static("3/1"));
        assert!(!advance(&Method::POST, &mut h));
        assert_eq!(h[&LAST_EVENT_ID], "3/1");
        assert!(advance(&Method::GET, &mut h));
        assert_eq!(h[&LAST_EVENT_ID], "4/1");
        h.insert(LAST_EVENT_ID, HeaderValue::from_static("not-ours"));
        assert!(advance(&Method::GET, &mut h), "resuming, with an id passed on as sent");
        assert_eq!(h[&LAST_EVENT_ID], "not-ours");
    }

    #[tokio::test]
    async fn an_ended_stream_is_no_content_and_a_live_one_passes_whole() {
        let sse = |body: Body| {
            Response::builder()
                .header(CONTENT_TYPE, "text/event-stream")
                .body(body)
                .expect("response")
        };
        let ended = answered(sse(Body::empty())).await;
        assert_eq!(ended.status(), StatusCode::NO_CONTENT);

        let events = "data: {}\nid: 2/0\n\ndata: {}\nid: 3/0\n\n";
        let live = answered(sse(Body::from(events))).await;
        assert_eq!(live.status(), StatusCode::OK);
        let got = axum::body::to_bytes(live.into_body(), usize::MAX).await.expect("body");
        assert_eq!(got, events.as_bytes());

        let (tx, rx) = futures::channel::mpsc::channel::<Result<Bytes, std::convert::Infallible>>(1);
        let quiet = answered(sse(Body::from_stream(rx))).await;
        assert_eq!(quiet.status(), StatusCode::OK, "a live stream with nothing yet");
        let mut tx = tx;
        futures::SinkExt::send(&mut tx, Ok(Bytes::from_static(b"data: late\n\n")))
            .await
            .expect("send");
        drop(tx);
        let got = axum::body::to_bytes(quiet.into_body(), usize::MAX).await.expect("body");
        assert_eq!(got, "data: late\n\n".as_bytes(), "nothing lost by the wait");
    }
}
