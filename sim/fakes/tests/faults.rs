//! The faults of arrival — a dropped connection, a stall, a rate-limit storm — against
//! every fake of the registry over loopback, with a real HTTP client: what the client
//! observes and what the fake's counters say.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use besluitbron_core::Units;
use besluitbron_fakes::{FakeConfig, FakeEntry, FakeHandle, Fakes, ObvSettings, REGISTRY, serve_registry_on};
use serde_json::Value;
use tokio::net::TcpListener;

async fn fakes() -> Fakes {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    serve_registry_on(listener).await.expect("serve the fakes")
}

/// Every registry entry with its running fake.
fn each(fakes: &Fakes) -> impl Iterator<Item = (&'static FakeEntry, &FakeHandle)> {
    REGISTRY.iter().zip(fakes)
}

fn probe_url(entry: &FakeEntry, fake: &FakeHandle) -> String {
    format!("{}{}", fake.base_url(), entry.probe_path())
}

/// A reqwest error with its whole chain of causes, in one line.
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

#[tokio::test]
async fn reset_every_drops_every_nth_connection_and_reqwest_reports_an_error() {
    let fakes = fakes().await;
    let client = reqwest::Client::new();
    for (entry, fake) in each(&fakes) {
        fake.set_reset_every(Some(2));
        let mut outcomes = Vec::new();
        for _ in 0..4 {
            match client.get(probe_url(entry, fake)).send().await {
                Ok(response) => outcomes.push(Ok(response.status().as_u16())),
                Err(e) => {
                    assert!(
                        e.status().is_none() && !e.is_timeout(),
                        "{}: {}",
                        entry.platform(),
                        describe(&e)
                    );
                    assert!(
                        describe(&e).contains("connection closed before message completed"),
                        "{}: {}",
                        entry.platform(),
                        describe(&e)
                    );
                    outcomes.push(Err(()));
                }
            }
        }
        assert_eq!(outcomes, [Ok(200), Err(()), Ok(200), Err(())], "{}", entry.platform());
        assert_eq!(fake.requests(), 4, "{}", entry.platform());
        assert_eq!(fake.connections_reset(), 2, "{}", entry.platform());
        assert_eq!(fake.failures_injected(), 0, "{}", entry.platform());
        let charged = if entry.platform() == besluitbron_fakes::obv::PLATFORM {
            Units::whole(2)
        } else {
            Units::ZERO
        };
        assert_eq!(
            fake.units_charged(),
            charged,
            "{}: a dropped request is not charged",
            entry.platform()
        );
        fake.set_reset_every(None);
        let response = client.get(probe_url(entry, fake)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{}: back up", entry.platform());
        assert_eq!(fake.connections_reset(), 2);
    }
}

#[tokio::test]
async fn a_reset_request_gets_not_a_single_byte_back() {
    let fakes = fakes().await;
    for (entry, fake) in each(&fakes) {
        fake.set_reset_every(Some(1));
        let addr = fake.local_addr();
        let path = probe_url(entry, fake).replacen(&format!("http://{addr}"), "", 1);
        let received = tokio::task::spawn_blocking(move || {
            let mut stream = std::net::TcpStream::connect(addr).unwrap();
            stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            write!(stream, "GET {path} HTTP/1.1\r\nHost: {addr}\r\n\r\n").unwrap();
            let mut received = Vec::new();
            // The server closes the connection: the read ends (EOF or a reset), it does not time out.
            match stream.read_to_end(&mut received) {
                Ok(_) => {}
                Err(e) => assert_eq!(e.kind(), std::io::ErrorKind::ConnectionReset, "{e}"),
            }
            received
        })
        .await
        .unwrap();
        assert!(
            received.is_empty(),
            "{}: {:?}",
            entry.platform(),
            String::from_utf8_lossy(&received)
        );
        assert_eq!(fake.connections_reset(), 1);
    }
}

#[tokio::test]
async fn a_stall_holds_requests_until_the_client_times_out() {
    let stall = Duration::from_millis(400);
    let fakes = fakes().await;
    for (entry, fake) in each(&fakes) {
        fake.set_stall(Some(stall));
        assert_eq!(fake.config().latency, Duration::ZERO, "a stall is not latency");
        let impatient = reqwest::Client::builder()
            .timeout(Duration::from_millis(100))
            .build()
            .unwrap();
        let started = Instant::now();
        let error = impatient.get(probe_url(entry, fake)).send().await.unwrap_err();
        assert!(error.is_timeout(), "{}: {}", entry.platform(), describe(&error));
        assert!(started.elapsed() < stall, "gave up at the client's time-out");
        assert_eq!(fake.stalled(), 1, "{}", entry.platform());

        let patient = reqwest::Client::builder()
            .timeout(Duration::from_secs(10))
            .build()
            .unwrap();
        let started = Instant::now();
        let response = patient.get(probe_url(entry, fake)).send().await.unwrap();
        assert_eq!(
            response.status(),
            200,
            "{}: a stalled request is then answered",
            entry.platform()
        );
        assert!(started.elapsed() >= stall, "{:?}", started.elapsed());
        assert_eq!(fake.stalled(), 2, "{}", entry.platform());

        fake.set_stall(None);
        let started = Instant::now();
        assert_eq!(patient.get(probe_url(entry, fake)).send().await.unwrap().status(), 200);
        assert!(started.elapsed() < stall, "no stall once it is off");
        assert_eq!(fake.stalled(), 2);
        assert_eq!(fake.requests(), 3, "{}", entry.platform());
    }
}

#[tokio::test]
async fn a_rate_limit_storm_refuses_everything_with_retry_after_1_and_charges_nothing() {
    let fakes = fakes().await;
    let client = reqwest::Client::new();
    for (entry, fake) in each(&fakes) {
        fake.set_rate_limit_storm(true);
        for _ in 0..3 {
            let response = client.get(probe_url(entry, fake)).send().await.unwrap();
            assert_eq!(response.status(), 429, "{}", entry.platform());
            assert_eq!(response.headers()["retry-after"], "1", "{}", entry.platform());
            if entry.platform() == besluitbron_fakes::rechtspraak::PLATFORM {
                // Rechtspraak answers in XML and HTML; its 429 is an HTML page.
                let text = response.text().await.unwrap();
                assert!(text.contains("<html"), "{}: {text}", entry.platform());
            } else {
                let body = json(response).await;
                assert!(body.get("error").is_some(), "{}: {body}", entry.platform());
            }
        }
        assert_eq!(fake.rate_limited(), 3, "{}", entry.platform());
        assert_eq!(
            fake.storm_rate_limited(),
            3,
            "{}: each counted as the storm's",
            entry.platform()
        );
        assert_eq!(fake.units_charged(), Units::ZERO, "{}", entry.platform());
        fake.set_rate_limit_storm(false);
        let response = client.get(probe_url(entry, fake)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{}: the storm is over", entry.platform());
        assert_eq!(fake.rate_limited(), 3);
        assert_eq!(fake.requests(), 4);
    }
}

/// The body as JSON (panics with the body otherwise).
async fn json(response: reqwest::Response) -> Value {
    let text = response.text().await.expect("a body");
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

/// The keys of a JSON object, sorted.
fn keys(body: &Value) -> BTreeSet<String> {
    body.as_object().expect("a JSON object").keys().cloned().collect()
}

#[tokio::test]
async fn an_obv_storm_429_has_the_shape_of_its_real_429_and_leaves_the_bucket_alone() {
    let fakes = fakes().await;
    let obv = fakes.get(besluitbron_fakes::obv::PLATFORM).unwrap();
    let url = format!("{}/api/sources", obv.base_url());
    let client = reqwest::Client::new();

    // A real 429 from a fake whose bucket holds one unit.
    let tight = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tight = besluitbron_fakes::serve_obv(tight, FakeConfig::default())
        .await
        .unwrap();
    tight.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 1);
    let tight_url = format!("{}/api/sources", tight.base_url());
    assert_eq!(client.get(&tight_url).send().await.unwrap().status(), 200);
    let real = client.get(&tight_url).send().await.unwrap();
    assert_eq!(real.status(), 429);
    assert_eq!(
        (tight.rate_limited(), tight.storm_rate_limited()),
        (1, 0),
        "the bucket's 429, not a storm's"
    );
    let real = json(real).await;

    obv.set_rate_limit_storm(true);
    let storm = client.get(&url).send().await.unwrap();
    assert_eq!(storm.status(), 429);
    let headers = storm.headers().clone();
    let storm = json(storm).await;
    assert_eq!(keys(&storm), keys(&real), "storm {storm} vs real {real}");
    assert_eq!(storm["retry_after_seconds"], 1);
    assert_eq!(storm["limit_per_minute"], 60);
    assert_eq!(headers["ratelimit-limit"], "60");
    assert_eq!(headers["ratelimit-remaining"], "0");
    assert_eq!(headers["ratelimit-reset"], "1");

    // The storm charged nothing: the bucket is still full when it is over.
    obv.set_rate_limit_storm(false);
    let after = client.get(&url).send().await.unwrap();
    assert_eq!(after.status(), 200);
    assert_eq!(after.headers()["ratelimit-remaining"], "59");
    assert_eq!(obv.units_charged(), Units::ONE);
    assert_eq!((obv.rate_limited(), obv.storm_rate_limited()), (1, 1));
}

#[tokio::test]
async fn arrival_faults_come_in_order_stall_then_reset_then_storm() {
    let fakes = fakes().await;
    let obv = fakes.get(besluitbron_fakes::obv::PLATFORM).unwrap();
    let url = format!("{}/api/status", obv.base_url());
    obv.update(|c| {
        c.stall = Some(Duration::from_millis(50));
        c.reset_every = Some(2);
        c.rate_limit_storm = true;
    });
    let client = reqwest::Client::new();
    let first = client.get(&url).send().await.unwrap();
    assert_eq!(first.status(), 429, "not reset: refused by the storm");
    let started = Instant::now();
    assert!(client.get(&url).send().await.is_err(), "reset before the storm answers");
    assert!(
        started.elapsed() >= Duration::from_millis(50),
        "stalled before the reset"
    );
    assert_eq!((obv.stalled(), obv.connections_reset(), obv.rate_limited()), (2, 1, 1));
}
