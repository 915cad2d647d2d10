//! The shared HTTP layer against a small axum server on loopback: how one attempt is
//! classified, which requests are retried, what a request puts on the wire, and the
//! body cap (a body over it is refused, and the read stops: the server sees the
//! connection closed long before it finished sending).
//!
//! Each test starts its own server on `127.0.0.1:0`; nothing else is contacted (a
//! redirect to another host is not followed, so it is never connected to).

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method as HttpMethod, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use besluitbron_core::PlatformId;
use besluitbron_server::platforms::http::{
    Fetched, HttpConfig, PlatformError, PlatformHttp, PlatformRequest, Retry, with_query,
};
use http_body_util::channel::Channel;
use reqwest::Url;
use tokio::net::TcpListener;
use tokio::sync::mpsc;

const PLATFORM: PlatformId = besluitbron_server::platforms::opentk::PLATFORM;
/// The cap of the tests' client: small, so bodies around it are cheap to send.
const CAP: u64 = 64 * 1024;

/// How the server's side of a streamed body ended.
#[derive(Debug, PartialEq, Eq)]
enum StreamEnd {
    /// The client went away after `sent_bytes` were handed to the connection.
    Closed { sent_bytes: u64 },
    /// Everything was handed over.
    Completed { sent_bytes: u64 },
}

struct Shared {
    hits: AtomicU64,
    ends: mpsc::UnboundedSender<StreamEnd>,
    base: Url,
}

struct TestServer {
    shared: Arc<Shared>,
    ends: mpsc::UnboundedReceiver<StreamEnd>,
}

impl TestServer {
    async fn start() -> TestServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = Url::parse(&format!("http://{}/", listener.local_addr().unwrap())).unwrap();
        let (tx, ends) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            hits: AtomicU64::new(0),
            ends: tx,
            base,
        });
        let app = Router::new()
            .route("/bytes/{n}", get(sized))
            .route("/chunked/{n}", get(chunked))
            .route("/endless", get(endless))
            .route("/announced", get(announced))
            .route("/status/{code}", any(status))
            .route("/challenge/{kind}", any(challenge))
            .route("/slow", get(slow))
            .route("/echo", any(echo))
            .route("/redirect/{to}", get(redirect))
            .with_state(shared.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        TestServer { shared, ends }
    }

    fn url(&self, path: &str) -> Url {
        self.shared.base.join(path).unwrap()
    }

    fn hits(&self) -> u64 {
        self.shared.hits.load(Ordering::SeqCst)
    }

    /// How the next streamed body ended, waiting at most five seconds.
    async fn stream_end(&mut self) -> StreamEnd {
        tokio::time::timeout(Duration::from_secs(5), self.ends.recv())
            .await
            .expect("the server's stream ends within five seconds")
            .expect("the server is running")
    }
}

fn config() -> HttpConfig {
    HttpConfig {
        contact: "tests@besluitbron.invalid".into(),
        connect_timeout_ms: 500,
        request_timeout_ms: 2_000,
        max_body_bytes: CAP,
        ..HttpConfig::default()
    }
}

fn client() -> PlatformHttp {
    PlatformHttp::new(PLATFORM, &config(), "application/json").unwrap()
}

// ---- the server's routes ----

async fn sized(State(s): State<Arc<Shared>>, Path(n): Path<usize>) -> Vec<u8> {
    s.hits.fetch_add(1, Ordering::SeqCst);
    vec![b'a'; n]
}

/// Streams `total` bytes in `chunk`-byte pieces and reports how the stream ended.
fn stream(s: &Shared, total: u64, chunk: usize) -> Body {
    let (mut tx, body) = Channel::<Bytes>::new(1);
    let ends = s.ends.clone();
    tokio::spawn(async move {
        let mut sent_bytes = 0;
        while sent_bytes < total {
            let n = (total - sent_bytes).min(chunk as u64);
            if tx.send_data(Bytes::from(vec![b'z'; n as usize])).await.is_err() {
                let _ = ends.send(StreamEnd::Closed { sent_bytes });
                return;
            }
            sent_bytes += n;
        }
        let _ = ends.send(StreamEnd::Completed { sent_bytes });
    });
    Body::new(body)
}

async fn chunked(State(s): State<Arc<Shared>>, Path(n): Path<u64>) -> Body {
    s.hits.fetch_add(1, Ordering::SeqCst);
    stream(&s, n, 16 * 1024)
}

/// 256 MiB, chunked, as fast as the client takes it.
async fn endless(State(s): State<Arc<Shared>>) -> Body {
    s.hits.fetch_add(1, Ordering::SeqCst);
    stream(&s, 256 * 1024 * 1024, 64 * 1024)
}

/// Announces 1 GiB and sends nothing until the client leaves: a client that waited for
/// the body would run into its time-out instead of refusing at once.
async fn announced(State(s): State<Arc<Shared>>) -> Response {
    s.hits.fetch_add(1, Ordering::SeqCst);
    let (mut tx, body) = Channel::<Bytes>::new(1);
    let ends = s.ends.clone();
    tokio::spawn(async move {
        for _ in 0..1_000 {
            tokio::time::sleep(Duration::from_millis(5)).await;
            if tx.send_data(Bytes::new()).await.is_err() {
                let _ = ends.send(StreamEnd::Closed { sent_bytes: 0 });
                return;
            }
        }
        let _ = ends.send(StreamEnd::Completed { sent_bytes: 0 });
    });
    ([(header::CONTENT_LENGTH, "1073741824")], Body::new(body)).into_response()
}

async fn status(State(s): State<Arc<Shared>>, Path(code): Path<u16>) -> Response {
    s.hits.fetch_add(1, Ordering::SeqCst);
    let status = StatusCode::from_u16(code).unwrap();
    match code {
        429 => (status, [(header::RETRY_AFTER, "7")], "slow down").into_response(),
        503 => (status, [(header::RETRY_AFTER, "0")], "later").into_response(),
        _ => (status, format!("status {code}")).into_response(),
    }
}

async fn challenge(State(s): State<Arc<Shared>>, Path(kind): Path<String>) -> Response {
    s.hits.fetch_add(1, Ordering::SeqCst);
    let page = "<!DOCTYPE html><html><body>Just a moment...</body></html>";
    match kind.as_str() {
        "cf" => (StatusCode::FORBIDDEN, [("cf-mitigated", "challenge")], page).into_response(),
        _ => (StatusCode::ACCEPTED, [("x-amzn-waf-action", "challenge")], page).into_response(),
    }
}

async fn slow(State(s): State<Arc<Shared>>) -> &'static str {
    s.hits.fetch_add(1, Ordering::SeqCst);
    tokio::time::sleep(Duration::from_secs(2)).await;
    "late"
}

/// What arrived: method, content type, accept and body, as JSON.
async fn echo(State(s): State<Arc<Shared>>, method: HttpMethod, headers: HeaderMap, body: Bytes) -> Response {
    s.hits.fetch_add(1, Ordering::SeqCst);
    let text = |name: header::HeaderName| headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_owned();
    let value = serde_json::json!({
        "method": method.as_str(),
        "content_type": text(header::CONTENT_TYPE),
        "accept": text(header::ACCEPT),
        "user_agent": text(header::USER_AGENT),
        "body": String::from_utf8_lossy(&body),
    });
    ([(header::CONTENT_TYPE, "application/json")], value.to_string()).into_response()
}

async fn redirect(State(s): State<Arc<Shared>>, Path(to): Path<String>) -> Response {
    s.hits.fetch_add(1, Ordering::SeqCst);
    let port = s.base.port().unwrap();
    let location = match to.as_str() {
        "same" => "/echo".to_owned(),
        // Same address, another host name: not followed, so never connected to.
        _ => format!("http://localhost:{port}/echo"),
    };
    (StatusCode::FOUND, [(header::LOCATION, location)]).into_response()
}

// ---- the body cap ----

/// An attempt for a failure message: an answer by its status and size (a body can be
/// hundreds of MiB when the cap is broken), an error as it is.
fn summary(attempt: &Result<Fetched, PlatformError>) -> String {
    match attempt {
        Ok(f) => format!("Answer({}, {} bytes from {})", f.status, f.body.len(), f.url),
        Err(e) => format!("{e:?}"),
    }
}

fn too_large(attempt: Result<Fetched, PlatformError>) {
    match attempt {
        Err(PlatformError::TooLarge {
            platform, limit_bytes, ..
        }) => {
            assert_eq!((platform, limit_bytes), (PLATFORM, CAP));
        }
        other => panic!("expected TooLarge, got {}", summary(&other)),
    }
}

fn answer(attempt: Result<Fetched, PlatformError>) -> Fetched {
    match attempt {
        Ok(fetched) => fetched,
        other => panic!("expected an answer, got {}", summary(&other)),
    }
}

#[tokio::test]
async fn bodies_up_to_the_cap_are_read_and_one_byte_more_is_refused() {
    let mut server = TestServer::start().await;
    let http = client();
    for n in [CAP - 1, CAP] {
        let sized = answer(
            http.send(&PlatformRequest::get(server.url(&format!("bytes/{n}"))))
                .await,
        );
        assert_eq!(sized.headers[header::CONTENT_LENGTH], n.to_string().as_str());
        assert_eq!(sized.body.len() as u64, n);
        let chunked = answer(
            http.send(&PlatformRequest::get(server.url(&format!("chunked/{n}"))))
                .await,
        );
        assert!(!chunked.headers.contains_key(header::CONTENT_LENGTH), "sent chunked");
        assert_eq!(chunked.body.len() as u64, n);
        assert_eq!(server.stream_end().await, StreamEnd::Completed { sent_bytes: n });
    }
    too_large(
        http.send(&PlatformRequest::get(server.url(&format!("bytes/{}", CAP + 1))))
            .await,
    );
    too_large(
        http.send(&PlatformRequest::get(server.url(&format!("chunked/{}", CAP + 1))))
            .await,
    );
}

#[tokio::test]
async fn a_too_large_content_length_is_refused_before_the_body_is_read() {
    let mut server = TestServer::start().await;
    let http = client();
    let started = std::time::Instant::now();
    too_large(http.send(&PlatformRequest::get(server.url("announced"))).await);
    assert!(
        started.elapsed() < Duration::from_millis(1_000),
        "refused at once, not after waiting for the body ({:?})",
        started.elapsed()
    );
    assert_eq!(server.stream_end().await, StreamEnd::Closed { sent_bytes: 0 });
}

#[tokio::test]
async fn reading_a_huge_chunked_body_stops_at_the_cap_and_closes_the_connection() {
    let mut server = TestServer::start().await;
    let http = client();
    too_large(http.send(&PlatformRequest::get(server.url("endless"))).await);
    match server.stream_end().await {
        StreamEnd::Closed { sent_bytes } => assert!(
            sent_bytes < 32 * 1024 * 1024,
            "the server handed over {sent_bytes} of 256 MiB before it saw the connection closed"
        ),
        other => panic!("the client read the whole body: {other:?}"),
    }
    // The retrying path refuses it the same way, once.
    assert!(matches!(
        http.get(server.url("endless")).await,
        Err(PlatformError::TooLarge { .. })
    ));
    assert!(matches!(server.stream_end().await, StreamEnd::Closed { .. }));
    assert_eq!(server.hits(), 2, "a body over the cap is not retried");
}

// ---- one attempt, classified ----

#[tokio::test]
async fn one_attempt_is_classified_by_status() {
    let server = TestServer::start().await;
    let http = client();
    let once = |path: &str| {
        let request = PlatformRequest::get(server.url(path));
        let http = &http;
        async move { http.send(&request).await }
    };
    assert_eq!(answer(once("status/200").await).status, 200);
    assert_eq!(answer(once("status/404").await).status, 404);
    assert_eq!(answer(once("status/400").await).body, b"status 400");
    match once("status/429").await {
        Err(e @ PlatformError::RateLimited { .. }) => assert_eq!(
            e.retry(),
            Retry::Wait {
                after: Duration::from_secs(7)
            }
        ),
        other => panic!("expected RateLimited, got {}", summary(&other)),
    }
    match once("status/503").await {
        Err(PlatformError::Overloaded {
            platform,
            signal,
            retry_after,
            retry,
        }) => {
            assert_eq!(
                (platform, signal.as_str(), retry_after),
                (PLATFORM, "HTTP 503", Duration::ZERO)
            );
            assert_eq!(
                retry,
                Retry::Yes {
                    after: Some(Duration::ZERO)
                }
            );
        }
        other => panic!("expected Overloaded, got {}", summary(&other)),
    }
    match once("status/500").await {
        Err(error) => assert_eq!(
            error,
            PlatformError::Upstream {
                platform: PLATFORM,
                status: 500,
                retry: Retry::Yes { after: None }
            }
        ),
        other => panic!("expected Upstream, got {}", summary(&other)),
    }
    assert_eq!(server.hits(), 6, "send never retries");
}

#[tokio::test]
async fn a_failing_post_is_retryable_only_when_marked_idempotent() {
    let server = TestServer::start().await;
    let http = client();
    let post = PlatformRequest::post_multipart(server.url("status/500"), [("q", "stikstof")]);
    assert!(matches!(
        http.send(&post).await,
        Err(PlatformError::Upstream {
            status: 500,
            retry: Retry::No,
            ..
        })
    ));
    assert!(matches!(
        http.send(&post.clone().idempotent()).await,
        Err(PlatformError::Upstream {
            status: 500,
            retry: Retry::Yes { .. },
            ..
        })
    ));

    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        Url::parse(&format!("http://{}/search", listener.local_addr().unwrap())).unwrap()
    };
    match http.send(&PlatformRequest::get(refused.clone())).await {
        Err(PlatformError::Unreachable {
            retry: Retry::Yes { after: None },
            ..
        }) => {}
        other => panic!("expected a retryable Unreachable, got {}", summary(&other)),
    }
    match http.send(&PlatformRequest::post_form(refused, [("q", "x")])).await {
        Err(PlatformError::Unreachable { retry: Retry::No, .. }) => {}
        other => panic!("expected a final Unreachable, got {}", summary(&other)),
    }
}

#[tokio::test]
async fn a_time_out_fails_without_retry() {
    let server = TestServer::start().await;
    let http = PlatformHttp::new(
        PLATFORM,
        &HttpConfig {
            request_timeout_ms: 100,
            ..config()
        },
        "application/json",
    )
    .unwrap();
    match http.send(&PlatformRequest::get(server.url("slow"))).await {
        Err(PlatformError::Timeout { platform, after_ms }) => {
            assert_eq!((platform, after_ms), (PLATFORM, 100))
        }
        other => panic!("expected Timeout, got {}", summary(&other)),
    }
    assert!(matches!(
        http.get(server.url("slow")).await,
        Err(PlatformError::Timeout { .. })
    ));
    assert_eq!(server.hits(), 2, "a time-out is not retried");
}

#[tokio::test]
async fn bot_challenges_stop_at_once_and_are_never_retried() {
    let server = TestServer::start().await;
    let http = client();
    for (kind, signal) in [
        ("cf", "cf-mitigated: challenge"),
        ("aws", "x-amzn-waf-action: challenge"),
    ] {
        let url = server.url(&format!("challenge/{kind}"));
        match http.send(&PlatformRequest::get(url.clone())).await {
            Err(PlatformError::Challenge { platform, signal: got }) => {
                assert_eq!((platform, got), (PLATFORM, signal));
            }
            other => panic!("{kind}: expected Challenge, got {}", summary(&other)),
        }
        let error = http.get(url).await.unwrap_err();
        assert!(error.to_string().contains("does not impersonate a browser"), "{error}");
    }
    assert_eq!(server.hits(), 4, "one request per call");
}

// ---- one attempt per call: retries are the platform path's ----

#[tokio::test]
async fn send_makes_one_attempt_and_says_whether_another_may_mend_it() {
    let server = TestServer::start().await;
    let http = client();
    let url = server.url("status/503");
    let error = http
        .send(&PlatformRequest::post_json(url.clone(), serde_json::json!({"q": 1})))
        .await
        .unwrap_err();
    assert!(
        matches!(error, PlatformError::Overloaded { retry: Retry::No, .. }),
        "a non-idempotent POST is never retried, even when the platform asks to wait: {error:?}"
    );
    assert_eq!(server.hits(), 1, "a non-idempotent POST is sent once");
    let error = http
        .send(&PlatformRequest::post_multipart(url.clone(), [("q", "wet")]).idempotent())
        .await
        .unwrap_err();
    assert_eq!(
        server.hits(),
        2,
        "an idempotent POST is sent once too: the path retries"
    );
    assert!(matches!(error.retry(), Retry::Yes { .. }), "{error:?}");
    let error = http.get(url).await.unwrap_err();
    assert_eq!(server.hits(), 3, "so is a GET");
    assert!(
        matches!(error.retry(), Retry::Yes { after: Some(_) }),
        "the 503's Retry-After travels: {error:?}"
    );
    match http.get(server.url("status/429")).await {
        Err(PlatformError::RateLimited { platform, retry_after }) => {
            assert_eq!((platform, retry_after), (PLATFORM, Duration::from_secs(7)));
        }
        other => panic!("expected RateLimited, got {other:?}"),
    }
    assert_eq!(server.hits(), 4, "a 429 is not retried");
}

/// The platform's task for `PLATFORM` with three attempts per call and short backoffs,
/// over a buffer of its own in memory.
fn retrying_task() -> besluitbron_server::driver::PlatformHandle {
    use besluitbron_core::cache::CachePolicy;
    use besluitbron_core::path::{PathConfig, RetryPolicy};
    use besluitbron_server::driver::{self, DriverOptions, ServerBuffer};
    let policy = CachePolicy::default().for_platform(PLATFORM);
    let mut config = PathConfig::single(PLATFORM.as_str(), None);
    config.retry = RetryPolicy {
        max_attempts: 3,
        backoff_base_ms: 10,
        backoff_max_ms: 20,
        ..RetryPolicy::default()
    };
    let options = DriverOptions {
        clock: besluitbron_server::clock::Clock::start(),
        metrics: Arc::new(besluitbron_server::metrics::Metrics::new()),
        attempt_timeout: Duration::from_secs(30),
        observer: None,
        cancel: tokio_util::sync::CancellationToken::new(),
        recorder: None,
    };
    driver::task::spawn_one(config, ServerBuffer::new(PLATFORM, None, policy), options, None)
        .expect("a valid path")
        .0
}

/// The HTTP layer knows whether a request may be sent twice, and its
/// classification reaches the platform path unchanged. Before, the path guessed again
/// from the status (any 5xx retryable) and would have sent a POST that is not
/// idempotent three times.
#[tokio::test]
async fn regression_issue_26_a_5xx_to_a_request_that_is_not_idempotent_is_not_retried() {
    use besluitbron_core::cache::{CacheKey, DataClass};
    use besluitbron_core::path::Outcome;
    use besluitbron_core::{SessionKey, Units};
    use besluitbron_server::driver::{CallError, CallRequest, Payload, Upstream};
    let server = TestServer::start().await;
    let task = retrying_task();
    let http = Arc::new(client());
    let ask = |post: PlatformRequest, n: u32| {
        let (task, http) = (task.clone(), Arc::clone(&http));
        async move {
            let upstream: Upstream = Arc::new(move |_previous| {
                let (http, post) = (Arc::clone(&http), post.clone());
                Box::pin(async move {
                    match http.send(&post).await {
                        Ok(fetched) => Outcome::Success {
                            payload: Payload::from_bytes(fetched.body),
                            feedback: Default::default(),
                        },
                        Err(error) => besluitbron_server::call::classify(error),
                    }
                })
            });
            let request = CallRequest {
                key: CacheKey::new(PLATFORM, DataClass::Search, "search").param("n", n.to_string()),
                session: SessionKey::client("a"),
                cost: Units::ONE,
                service: None,
            };
            task.call(request, move || upstream, None).await
        }
    };
    let post = PlatformRequest::post_multipart(server.url("status/500"), [("q", "stikstof")]);
    let answer = ask(post.clone(), 1).await;
    assert!(
        matches!(
            answer,
            Err(CallError::Platform(PlatformError::Upstream { status: 500, .. }))
        ),
        "{answer:?}"
    );
    assert_eq!(server.hits(), 1, "a POST that is not idempotent is sent once");
    let answer = ask(post.idempotent(), 2).await;
    assert!(answer.is_err(), "{answer:?}");
    assert_eq!(server.hits(), 4, "an idempotent one is tried three times");
}

// ---- what goes on the wire ----

async fn echoed(http: &PlatformHttp, request: PlatformRequest) -> serde_json::Value {
    let fetched = answer(http.send(&request).await);
    serde_json::from_slice(&fetched.body).unwrap()
}

#[tokio::test]
async fn requests_carry_their_method_body_and_accept() {
    let server = TestServer::start().await;
    let http = client();
    let url = with_query(server.url("echo"), [("subject", "rechtsgebied#strafrecht")]);
    assert_eq!(url.query(), Some("subject=rechtsgebied%23strafrecht"));

    let got = echoed(&http, PlatformRequest::get(url.clone())).await;
    assert_eq!(
        (got["method"].as_str(), got["accept"].as_str()),
        (Some("GET"), Some("application/json"))
    );
    assert!(got["user_agent"].as_str().unwrap().starts_with("BesluitBron/"), "{got}");

    let got = echoed(&http, PlatformRequest::get(url.clone()).with_accept("application/xml")).await;
    assert_eq!(got["accept"], "application/xml");

    let got = echoed(
        &http,
        PlatformRequest::post_form(url.clone(), [("q", "a b"), ("n", "1")]),
    )
    .await;
    assert_eq!(
        (
            got["method"].as_str(),
            got["content_type"].as_str(),
            got["body"].as_str()
        ),
        (
            Some("POST"),
            Some("application/x-www-form-urlencoded"),
            Some("q=a+b&n=1")
        )
    );

    let got = echoed(
        &http,
        PlatformRequest::post_json(url.clone(), serde_json::json!({"q": "wet"})),
    )
    .await;
    assert_eq!(
        (got["content_type"].as_str(), got["body"].as_str()),
        (Some("application/json"), Some(r#"{"q":"wet"}"#))
    );

    let got = echoed(
        &http,
        PlatformRequest::post_multipart(url, [("q", "stikstof"), ("soorten", "moties")]).idempotent(),
    )
    .await;
    let content_type = got["content_type"].as_str().unwrap();
    let boundary = content_type
        .strip_prefix("multipart/form-data; boundary=")
        .unwrap_or_else(|| panic!("{content_type}"));
    let body = got["body"].as_str().unwrap();
    for (name, value) in [("q", "stikstof"), ("soorten", "moties")] {
        assert!(
            body.contains(&format!(
                "Content-Disposition: form-data; name=\"{name}\"\r\n\r\n{value}\r\n--{boundary}"
            )),
            "{body}"
        );
    }
}

#[tokio::test]
async fn the_answer_says_where_same_host_redirects_led_and_other_hosts_are_not_followed() {
    let server = TestServer::start().await;
    let http = client();
    let followed = answer(http.send(&PlatformRequest::get(server.url("redirect/same"))).await);
    assert_eq!((followed.status.as_u16(), followed.url.path()), (200, "/echo"));
    let stopped = answer(http.send(&PlatformRequest::get(server.url("redirect/other"))).await);
    assert_eq!((stopped.status.as_u16(), stopped.url.path()), (302, "/redirect/other"));
    assert_eq!(server.hits(), 3, "the other host's echo was never asked");
}
