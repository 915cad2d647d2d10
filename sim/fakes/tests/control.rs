//! The control route of the shared listener over loopback: faults switched from outside
//! the process take effect on the next request, a bad setting changes nothing, and the
//! route itself is never counted by a fake.

use besluitbron_core::PlatformId;
use besluitbron_fakes::{CONTROL_PREFIX, Fakes, OpenTkSettings, OriSettings, REGISTRY, Retired, serve_registry_on};
use serde_json::Value;
use tokio::net::TcpListener;

async fn fakes() -> Fakes {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind loopback");
    serve_registry_on(listener).await.expect("serve the fakes")
}

fn control_url(fakes: &Fakes, route: &str) -> String {
    format!("http://{}{CONTROL_PREFIX}{route}", fakes.local_addr())
}

async fn state(client: &reqwest::Client, fakes: &Fakes) -> Value {
    let response = client.get(control_url(fakes, "/state")).send().await.unwrap();
    assert_eq!(response.status(), 200);
    json(response).await
}

async fn json(response: reqwest::Response) -> Value {
    let text = response.text().await.unwrap();
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("not JSON ({e}): {text}"))
}

async fn set(client: &reqwest::Client, fakes: &Fakes, body: &str) -> reqwest::Response {
    client
        .post(control_url(fakes, "/faults"))
        .body(body.to_owned())
        .send()
        .await
        .unwrap()
}

fn probe(fakes: &Fakes, platform: PlatformId) -> String {
    let entry = REGISTRY.iter().find(|e| e.platform() == platform).unwrap();
    format!("{}{}", fakes.get(platform).unwrap().base_url(), entry.probe_path())
}

#[tokio::test]
async fn state_lists_every_fake_healthy_and_is_not_counted() {
    let fakes = fakes().await;
    let client = reqwest::Client::new();
    let first = state(&client, &fakes).await;
    for entry in REGISTRY {
        let fake = &first[entry.platform().as_str()];
        assert_eq!(fake["requests"], 0, "{fake}");
        assert_eq!(fake["config"]["fail_every"], 0, "{fake}");
        assert_eq!(fake["config"]["rate_limit_storm"], false, "{fake}");
    }
    let again = state(&client, &fakes).await;
    assert_eq!(again, first, "reading the state counts nothing");
    assert!(fakes.iter().all(|f| f.requests() == 0));
}

#[tokio::test]
async fn faults_set_over_http_strike_the_next_request_and_are_counted_apart() {
    let fakes = fakes().await;
    let client = reqwest::Client::new();
    let response = set(&client, &fakes, "obv:fail-every=1\ntk:rate-limit-storm=true").await;
    assert_eq!(response.status(), 200);
    let after = json(response).await;
    assert_eq!(after["obv"]["config"]["fail_every"], 1);
    assert_eq!(after["tk"]["config"]["rate_limit_storm"], true);
    assert_eq!(
        after["obv"]["config"]["rate_limit_storm"], false,
        "tk's setting only for tk"
    );

    let obv = client
        .get(probe(&fakes, besluitbron_fakes::obv::PLATFORM))
        .send()
        .await
        .unwrap();
    assert_eq!(obv.status(), 500);
    let tk = client
        .get(probe(&fakes, besluitbron_fakes::tk::PLATFORM))
        .send()
        .await
        .unwrap();
    assert_eq!(tk.status(), 429);

    let counted = state(&client, &fakes).await;
    assert_eq!(counted["obv"]["requests"], 1);
    assert_eq!(counted["obv"]["failures_injected"], 1);
    assert_eq!(counted["obv"]["rate_limited"], 0);
    assert_eq!(counted["tk"]["rate_limited"], 1);
    assert_eq!(counted["tk"]["storm_rate_limited"], 1);
    let tk_handle = fakes.get(besluitbron_fakes::tk::PLATFORM).unwrap();
    assert_eq!(tk_handle.storm_rate_limited(), 1, "the handle and the route agree");

    let healed = set(&client, &fakes, "obv:fail-every=0 tk:rate-limit-storm=false").await;
    assert_eq!(healed.status(), 200);
    assert_eq!(
        client
            .get(probe(&fakes, besluitbron_fakes::obv::PLATFORM))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
    assert_eq!(
        client
            .get(probe(&fakes, besluitbron_fakes::tk::PLATFORM))
            .send()
            .await
            .unwrap()
            .status(),
        200
    );
}

#[tokio::test]
async fn one_bad_setting_changes_nothing_and_says_why() {
    let fakes = fakes().await;
    let client = reqwest::Client::new();
    let before = state(&client, &fakes).await;
    let response = set(&client, &fakes, "obv:garbage=true tk:slow=1").await;
    assert_eq!(response.status(), 400);
    let reason = response.text().await.unwrap();
    assert!(reason.contains("unknown fault `slow`"), "{reason}");
    assert_eq!(
        state(&client, &fakes).await,
        before,
        "obv's good setting was not applied either"
    );
    assert!(!fakes.get(besluitbron_fakes::obv::PLATFORM).unwrap().config().garbage);
}

#[tokio::test]
async fn a_fakes_own_settings_are_switched_by_their_own_names() {
    let fakes = fakes().await;
    let client = reqwest::Client::new();
    let ori = fakes.get(besluitbron_fakes::ori::PLATFORM).unwrap();
    let status = |url: String| {
        let client = client.clone();
        async move { client.get(url).send().await.unwrap().status() }
    };
    assert_eq!(status(probe(&fakes, besluitbron_fakes::ori::PLATFORM)).await, 200);

    let response = set(&client, &fakes, "ori:retired=410 opentk:busy=true").await;
    assert_eq!(response.status(), 200);
    assert_eq!(ori.own::<OriSettings>().retired, Some(Retired::Gone));
    let opentk = fakes.get(besluitbron_fakes::opentk::PLATFORM).unwrap();
    assert!(opentk.own::<OpenTkSettings>().busy);
    assert_eq!(status(probe(&fakes, besluitbron_fakes::ori::PLATFORM)).await, 410);

    // Another fake does not take them, and says what it does take.
    let before = state(&client, &fakes).await;
    let refused = set(&client, &fakes, "ori:retired=off tk:retired=off").await;
    assert_eq!(refused.status(), 400);
    let reason = refused.text().await.unwrap();
    assert!(
        reason.contains("unknown fault `retired`; one of latency-ms") && !reason.contains("busy"),
        "{reason}"
    );
    assert_eq!(state(&client, &fakes).await, before);
    assert_eq!(ori.own::<OriSettings>().retired, Some(Retired::Gone), "nothing applied");

    assert_eq!(set(&client, &fakes, "ori:retired=off").await.status(), 200);
    assert_eq!(status(probe(&fakes, besluitbron_fakes::ori::PLATFORM)).await, 200);
    assert_eq!(ori.requests(), 3, "every request counted, retired or not");
}
