//! Every fake of the registry answers on its base URL — on the shared listener and alone —
//! and the `Fakes` type finds, orders and names them as the table does.

use besluitbron_core::PlatformId;
use besluitbron_fakes::{FakeConfig, ObvSettings, REGISTRY, serve_all, serve_all_on, serve_registry_on};
use tokio::net::TcpListener;

async fn loopback() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.expect("bind loopback")
}

/// GETs `url` and returns the status.
async fn status_of(url: &str) -> u16 {
    let response = reqwest::get(url).await.unwrap_or_else(|e| panic!("GET {url}: {e}"));
    response.status().as_u16()
}

#[tokio::test]
async fn every_registry_entry_answers_on_its_base_url_and_counts_the_request() {
    let fakes = serve_registry_on(loopback().await).await.unwrap();
    let addr = fakes.local_addr();
    assert_eq!(fakes.iter().count(), REGISTRY.len());
    for (entry, handle) in REGISTRY.iter().zip(&fakes) {
        assert_eq!(handle.platform(), entry.platform(), "registry order");
        assert_eq!(
            handle.base_url(),
            format!("http://{addr}{}{}", entry.prefix(), entry.base_suffix())
        );
        let before = handle.requests();
        let url = format!("{}{}", handle.base_url(), entry.probe_path());
        assert_eq!(status_of(&url).await, 200, "{url}");
        assert_eq!(
            handle.requests(),
            before + 1,
            "{}: counted by its own handle",
            entry.platform()
        );
    }
    // Each fake counted only its own request.
    for handle in &fakes {
        assert_eq!(handle.requests(), 1, "{}", handle.platform());
    }
}

#[tokio::test]
async fn every_registry_entry_answers_when_served_alone() {
    for entry in REGISTRY {
        let handle = entry
            .serve_alone_on(loopback().await, FakeConfig::default())
            .await
            .unwrap();
        assert_eq!(handle.platform(), entry.platform());
        assert_eq!(
            handle.base_url(),
            format!("http://{}{}", handle.local_addr(), entry.base_suffix())
        );
        let url = format!("{}{}", handle.base_url(), entry.probe_path());
        assert_eq!(status_of(&url).await, 200, "{url}");
        assert_eq!(handle.requests(), 1);
        handle.stop();
    }
}

#[tokio::test]
async fn fakes_are_found_by_platform_and_listed_in_registry_order() {
    let fakes = serve_registry_on(loopback().await).await.unwrap();
    for entry in REGISTRY {
        let handle = fakes.get(entry.platform()).expect("a handle for every entry");
        assert_eq!(handle.platform(), entry.platform());
    }
    static OA: besluitbron_core::Platform = besluitbron_core::Platform {
        id: "oa",
        name: "Open Archivaris",
    };
    assert!(fakes.get(PlatformId::of(&OA)).is_none(), "no fake for Open Archivaris");
    let urls = fakes.base_urls();
    let platforms: Vec<PlatformId> = urls.iter().map(|(p, _)| *p).collect();
    let registered: Vec<PlatformId> = REGISTRY.iter().map(|e| e.platform()).collect();
    assert_eq!(platforms, registered, "registry order");
    let addr = fakes.local_addr();
    assert_eq!(urls[0].1, format!("http://{addr}/obv"));
    assert_eq!(urls[1].1, format!("http://{addr}/tk/OData/v4/2.0"));
    for (entry, (_, url)) in REGISTRY.iter().zip(&urls) {
        assert_eq!(url, &format!("http://{addr}{}{}", entry.prefix(), entry.base_suffix()));
    }
}

#[tokio::test]
async fn serve_all_on_and_serve_all_keep_the_registry_layout() {
    let handles = serve_all_on(loopback().await).await.unwrap();
    let platforms: Vec<PlatformId> = handles.iter().map(|h| h.platform()).collect();
    let registered: Vec<PlatformId> = REGISTRY.iter().map(|e| e.platform()).collect();
    assert_eq!(platforms, registered);

    let free = loopback().await;
    let addr = free.local_addr().unwrap();
    drop(free);
    let urls = serve_all(addr).await.unwrap();
    let expected: Vec<(PlatformId, String)> = REGISTRY
        .iter()
        .map(|e| (e.platform(), format!("http://{addr}{}{}", e.prefix(), e.base_suffix())))
        .collect();
    assert_eq!(urls, expected);
    assert_eq!(urls[0].1, format!("http://{addr}/obv"));
    assert_eq!(urls[1].1, format!("http://{addr}/tk/OData/v4/2.0"));
    assert_eq!(status_of(&format!("{}/api/sources", urls[0].1)).await, 200);
}

#[tokio::test]
async fn stopping_the_fakes_refuses_new_connections() {
    let fakes = serve_registry_on(loopback().await).await.unwrap();
    let url = format!("{}/api/status", fakes.base_urls()[0].1);
    assert_eq!(status_of(&url).await, 200);
    fakes.stop();
    // The abort takes effect at the task's next await; give it a moment.
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let fresh = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    assert!(fresh.get(&url).send().await.is_err(), "nothing answers after stop");
}

#[tokio::test]
async fn own_settings_change_through_the_handle_and_are_typed_by_their_fake() {
    let fakes = serve_registry_on(loopback().await).await.unwrap();
    let obv = fakes.get(besluitbron_fakes::obv::PLATFORM).unwrap();
    assert_eq!(obv.own::<ObvSettings>(), ObvSettings::default());
    obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 6);
    assert_eq!(obv.own::<ObvSettings>().rate_limit_per_min, 6);
    let tk = fakes.get(besluitbron_fakes::tk::PLATFORM).unwrap();
    let asked_wrongly = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| tk.own::<ObvSettings>()));
    let message = asked_wrongly.expect_err("the Tweede Kamer has no ObvSettings");
    let message = message.downcast_ref::<String>().expect("a formatted panic message");
    assert!(
        message.contains(
            "the tk fake's own settings are `besluitbron_fakes::tk_debates::TkSettings`, not \
             `besluitbron_fakes::obv::ObvSettings`"
        ),
        "{message}"
    );
}
