//! The platform clients against the fake platforms (`besluitbron-fakes`) over loopback HTTP.
//!
//! Every test starts its own fakes on `127.0.0.1:0` (fresh rate-limit buckets and
//! counters) and compares the clients' answers with the fakes' generated data, computed
//! independently here. Nothing is contacted beyond loopback: links to other hosts are
//! refused before any request is made. Time-outs are short, so the whole file sleeps
//! well under a second in total.

use std::collections::BTreeSet;
use std::time::Duration;

use besluitbron_core::{PlatformId, Units};
use besluitbron_fakes::{self as fakes, FakeConfig, FakeHandle, ObvCost, ObvSettings, obv_corpus, tk_corpus};
use besluitbron_server::platforms::http::{HttpConfig, PlatformError};
use besluitbron_server::platforms::obv::{self, EntityType, ObvClient, SearchParams, SortOrder};
use besluitbron_server::platforms::tk::{Continuation, TkClient, TkSearch};
use serde_json::Value;
use tokio::net::TcpListener;

/// Short time-outs, so failure tests finish quickly. The clients make one attempt per
/// call: another attempt is the platform path's decision (see `server/tests/driver.rs`).
fn test_http() -> HttpConfig {
    HttpConfig {
        contact: "tests@besluitbron.invalid".into(),
        connect_timeout_ms: 500,
        request_timeout_ms: 2_000,
        ..HttpConfig::default()
    }
}

async fn loopback() -> TcpListener {
    TcpListener::bind("127.0.0.1:0").await.expect("bind loopback")
}

async fn obv_fake(config: FakeConfig) -> (FakeHandle, ObvClient) {
    let fake = fakes::serve_obv(loopback().await, config).await.unwrap();
    let client = ObvClient::new(fake.base_url(), &test_http()).unwrap();
    (fake, client)
}

async fn tk_fake() -> (FakeHandle, TkClient) {
    let fake = fakes::serve_tk(loopback().await, FakeConfig::default()).await.unwrap();
    let client = TkClient::new(fake.base_url(), &test_http()).unwrap();
    (fake, client)
}

fn code_of<T: std::fmt::Debug>(result: Result<T, PlatformError>) -> String {
    match result {
        Err(PlatformError::BadRequest { code, .. }) => code,
        other => panic!("expected BadRequest, got {other:?}"),
    }
}

// ---- OpenBesluitvorming ----

#[tokio::test]
async fn obv_search_by_organization_and_word_matches_the_fake_corpus() {
    let (_fake, client) = obv_fake(FakeConfig::default()).await;
    let corpus = obv_corpus();
    let first = corpus.entities().iter().find(|e| e.entity_type == "Document").unwrap();
    let source = corpus.source_of(first);
    let word = first
        .title
        .split_whitespace()
        .nth(1)
        .unwrap()
        .trim_end_matches(':')
        .to_lowercase();

    let params = SearchParams {
        organization: Some(source.key.clone()),
        limit: 100,
        ..SearchParams::query(word.clone())
    };
    let (page, _) = client.search(&params).await.unwrap();

    let mut expected: Vec<_> = corpus
        .entities()
        .iter()
        .filter(|e| e.source == first.source)
        .filter(|e| format!(" {} ", e.searchable_text()).contains(&format!(" {word} ")))
        .collect();
    expected.sort_by(|a, b| b.sort_date.cmp(&a.sort_date).then(a.entity_id.cmp(&b.entity_id)));
    let got: Vec<&str> = page.results.iter().map(|h| h.entity_id.as_str()).collect();
    let want: Vec<&str> = expected.iter().map(|e| e.entity_id.as_str()).collect();
    assert!(!want.is_empty());
    assert_eq!(got, want);
    assert_eq!(page.total_count, want.len() as u64);
    assert!(!page.has_more);
    let hit = &page.results[0];
    assert_eq!(hit.organization, source.label);
    assert!(hit.summary_html.as_deref().unwrap_or("").contains("<b>"), "{hit:?}");
}

#[tokio::test]
async fn obv_search_filters_type_dates_and_pages_with_offset() {
    let (_fake, client) = obv_fake(FakeConfig::default()).await;
    let params = SearchParams {
        entity_type: Some(EntityType::Motion),
        date_from: Some("2024-01-01".into()),
        date_to: Some("2024-12-31".into()),
        sort: SortOrder::DateAsc,
        limit: 10,
        offset: 5,
        ..SearchParams::query("motie")
    };
    let (page, _) = client.search(&params).await.unwrap();
    let mut want: Vec<_> = obv_corpus()
        .entities()
        .iter()
        .filter(|e| e.entity_type == "Motion" && ("2024-01-01".."2025-01-01").contains(&e.day()))
        .collect();
    want.sort_by(|a, b| a.sort_date.cmp(&b.sort_date).then(a.entity_id.cmp(&b.entity_id)));
    let want: Vec<&str> = want.iter().skip(5).take(10).map(|e| e.entity_id.as_str()).collect();
    let got: Vec<&str> = page.results.iter().map(|h| h.entity_id.as_str()).collect();
    assert_eq!(got, want);
    assert!(page.has_more);
}

#[tokio::test]
async fn obv_entity_returns_the_full_text_of_a_long_document() {
    let (_fake, client) = obv_fake(FakeConfig::default()).await;
    let corpus = obv_corpus();
    let long = corpus.entities().iter().find(|e| e.long).unwrap();
    let (entity, rate) = client.entity(&long.entity_id).await.unwrap();
    assert_eq!(entity.entity_id, long.entity_id);
    assert_eq!(entity.title, long.title);
    let text = entity.markdown_text.unwrap();
    assert!(text.len() >= fakes::obv::LONG_DOCUMENT_BYTES, "{}", text.len());
    assert_eq!(text, long.markdown_text(corpus));
    assert_eq!(rate.limit, Some(Units::whole(60)));
}

#[tokio::test]
async fn obv_meeting_detail_lists_agenda_and_motions() {
    let (_fake, client) = obv_fake(FakeConfig::default()).await;
    let corpus = obv_corpus();
    let meeting = corpus.entities().iter().find(|e| e.entity_type == "Meeting").unwrap();
    let (entity, _) = client.entity(&meeting.entity_id).await.unwrap();
    assert_eq!(entity.agenda.len(), meeting.attachments.len());
    let documents: Vec<&str> = entity
        .agenda
        .iter()
        .flat_map(|item| item.documents.iter().map(|d| d.id.as_str()))
        .collect();
    let want: Vec<&str> = meeting
        .attachments
        .iter()
        .filter(|id| id.starts_with("document:"))
        .map(String::as_str)
        .collect();
    assert_eq!(documents, want);
    assert_eq!(entity.motions.len(), 1);
    let motion = corpus.entity(&entity.motions[0].id).unwrap();
    let (result, in_favour, against) = corpus.motion_outcome(motion);
    assert_eq!(entity.motions[0].result, result);
    assert_eq!(
        (entity.motions[0].tally.in_favour, entity.motions[0].tally.against),
        (in_favour, against)
    );
}

#[tokio::test]
async fn obv_sources_and_status_cover_all_331_sources() {
    let (_fake, client) = obv_fake(FakeConfig::default()).await;
    let (sources, _) = client.sources().await.unwrap();
    let keys: Vec<&str> = sources.iter().map(|s| s.key.as_str()).collect();
    let want: Vec<&str> = obv_corpus().sources().iter().map(|s| s.key.as_str()).collect();
    assert_eq!(keys.len(), 331);
    assert_eq!(keys, want);
    let (status, _) = client.status().await.unwrap();
    assert_eq!(status.generated_at, fakes::obv::STATUS_GENERATED_AT);
    assert_eq!(status.window_hours, 36);
    assert_eq!(status.sources.len(), 331);
    let ibabs = status.suppliers.iter().find(|s| s.supplier == "ibabs").unwrap();
    assert_eq!(ibabs.state, "down");
    assert!(status.sources.iter().any(|s| s.state == "not_implemented"));
}

#[tokio::test]
async fn obv_rate_headers_are_parsed_and_a_limit_100_search_costs_5() {
    let (fake, client) = obv_fake(FakeConfig::default()).await;
    assert_eq!(obv::search_cost(100), Units::whole(5));
    let params = SearchParams {
        limit: 100,
        ..SearchParams::query("stikstof")
    };
    let (_, rate) = client.search(&params).await.unwrap();
    assert_eq!(fake.units_charged(), Units::whole(5));
    assert_eq!(rate.limit, Some(Units::whole(60)));
    assert_eq!(rate.remaining, Some(Units::whole(55)));
    assert_eq!(rate.reset, Some(Duration::from_secs(5)));
    let (_, rate) = client.sources().await.unwrap();
    assert_eq!(fake.units_charged(), Units::whole(6));
    assert_eq!(rate.remaining, Some(Units::whole(54)));
}

#[tokio::test]
async fn obv_documented_cost_formula_charges_fractions_when_selected() {
    let (fake, client) = obv_fake(FakeConfig::default()).await;
    fake.update_own::<ObvSettings>(|s| s.cost = ObvCost::Doc);
    let params = SearchParams {
        limit: 100,
        ..SearchParams::query("stikstof")
    };
    let (_, rate) = client.search(&params).await.unwrap();
    assert_eq!(fake.units_charged(), Units::from_milli(1_304));
    assert_eq!(rate.remaining, Some(Units::whole(58)));
}

#[tokio::test]
async fn obv_429_after_60_units_surfaces_as_rate_limited_with_retry_after() {
    let (fake, client) = obv_fake(FakeConfig::default()).await;
    let params = SearchParams {
        limit: 100,
        ..SearchParams::query("woningbouw")
    };
    for _ in 0..12 {
        client.search(&params).await.unwrap();
    }
    assert_eq!(fake.units_charged(), Units::whole(60));
    assert_eq!(fake.rate_limited(), 0);
    match client.search(&params).await {
        Err(PlatformError::RateLimited { platform, retry_after }) => {
            assert_eq!(platform, besluitbron_server::platforms::obv::PLATFORM);
            assert!(
                (Duration::from_secs(1)..=Duration::from_secs(5)).contains(&retry_after),
                "{retry_after:?}"
            );
        }
        other => panic!("expected RateLimited, got {other:?}"),
    }
    assert_eq!(fake.rate_limited(), 1);
    assert_eq!(fake.requests(), 13, "a 429 is not retried by the client");
    assert_eq!(fake.units_charged(), Units::whole(60), "a refused call is not charged");
}

#[tokio::test]
async fn obv_error_codes_are_mapped_and_invalid_params_never_leave_the_client() {
    let (fake, client) = obv_fake(FakeConfig::default()).await;
    let unknown = SearchParams {
        organization: Some("gemeente-nergenshuizen".into()),
        ..SearchParams::query("stikstof")
    };
    assert_eq!(code_of(client.search(&unknown).await), "unknown_organization");
    match client.entity("document:notubiz:gemeente:nergens:1").await {
        Err(PlatformError::NotFound { platform, .. }) => {
            assert_eq!(platform, besluitbron_server::platforms::obv::PLATFORM)
        }
        other => panic!("expected NotFound, got {other:?}"),
    }
    let sent = fake.requests();
    let too_many = SearchParams {
        limit: 101,
        ..SearchParams::query("stikstof")
    };
    assert_eq!(code_of(client.search(&too_many).await), "invalid_limit");
    assert_eq!(
        code_of(client.search(&SearchParams::query("\"a b\"~3")).await),
        "unsupported_phrase_slop"
    );
    let bad_date = SearchParams {
        date_to: Some("31-12-2024".into()),
        ..SearchParams::query("stikstof")
    };
    assert_eq!(code_of(client.search(&bad_date).await), "invalid_date");
    assert_eq!(fake.requests(), sent, "refused client-side, nothing sent");
}

// ---- Tweede Kamer ----

fn contains_ci(record: &serde_json::Map<String, Value>, field: &str, word: &str) -> bool {
    record[field]
        .as_str()
        .is_some_and(|s| s.to_lowercase().contains(&word.to_lowercase()))
}

#[tokio::test]
async fn tk_paging_via_next_link_returns_exactly_the_filtered_set() {
    let (fake, client) = tk_fake().await;
    let search = TkSearch {
        count: true,
        ..TkSearch::words(["stikstof"])
    };
    let mut page = client.search_documents(&search).await.unwrap();
    let want: BTreeSet<&str> = tk_corpus()
        .documents()
        .iter()
        .filter(|d| d["Verwijderd"] == false)
        .filter(|d| contains_ci(d, "Titel", "stikstof") || contains_ci(d, "Onderwerp", "stikstof"))
        .map(|d| d["Id"].as_str().unwrap())
        .collect();
    assert!(
        want.len() > 250,
        "the test needs more than one page, has {}",
        want.len()
    );
    assert_eq!(page.count, Some(want.len() as u64));
    assert_eq!(page.items.len(), 250);
    let mut all = Vec::new();
    let mut pages = 1;
    loop {
        all.extend(page.items);
        let Some(next) = page.next else { break };
        page = client.next_documents(&next).await.unwrap();
        pages += 1;
    }
    assert_eq!(pages, want.len().div_ceil(250));
    assert_eq!(fake.requests(), pages as u64);
    let got: BTreeSet<&str> = all.iter().map(|d| d.id.as_str()).collect();
    assert_eq!(got.len(), all.len(), "no record twice");
    assert_eq!(got, want);
    let dates: Vec<&str> = all.iter().map(|d| d.datum.as_deref().unwrap()).collect();
    assert!(dates.windows(2).all(|w| w[0] >= w[1]), "newest first across pages");
}

#[tokio::test]
async fn tk_search_cases_applies_soort_dates_and_escaped_words() {
    let (_fake, client) = tk_fake().await;
    let search = TkSearch {
        soort: Some("Motie".into()),
        date_from: Some("2023-01-01".into()),
        date_to: Some("2024-06-30".into()),
        ..TkSearch::words(["klimaat"])
    };
    let page = client.search_cases(&search).await.unwrap();
    let want: BTreeSet<&str> = tk_corpus()
        .zaken()
        .iter()
        .filter(|z| z["Verwijderd"] == false && z["Soort"] == "Motie")
        .filter(|z| ("2023-01-01".."2024-07-01").contains(&&z["GestartOp"].as_str().unwrap()[..10]))
        .filter(|z| contains_ci(z, "Titel", "klimaat") || contains_ci(z, "Onderwerp", "klimaat"))
        .map(|z| z["Id"].as_str().unwrap())
        .collect();
    assert!(!want.is_empty());
    assert_eq!(page.items.iter().map(|z| z.id.as_str()).collect::<BTreeSet<_>>(), want);
    assert!(page.next.is_none());

    let quoted = client
        .search_documents(&TkSearch::words(["'s-Hertogenbosch"]))
        .await
        .unwrap();
    let want = tk_corpus()
        .documents()
        .iter()
        .filter(|d| d["Verwijderd"] == false && contains_ci(d, "Onderwerp", "'s-Hertogenbosch"))
        .count();
    assert!(want > 0);
    assert_eq!(quoted.items.len(), want);
}

#[tokio::test]
async fn tk_top_suppresses_the_next_link_as_the_platform_does() {
    let (fake, _client) = tk_fake().await;
    let http = reqwest::Client::new();
    let get = |query: &'static str| {
        let url = format!("{}/Document?{query}", fake.base_url());
        let http = http.clone();
        async move { serde_json::from_slice::<Value>(&http.get(url).send().await.unwrap().bytes().await.unwrap()).unwrap() }
    };
    let with_top = get("$filter=Verwijderd%20eq%20false&$top=10&$count=true").await;
    assert_eq!(with_top["value"].as_array().unwrap().len(), 10);
    assert!(with_top["@odata.count"].as_u64().unwrap() > 10);
    assert!(with_top.get("@odata.nextLink").is_none());
    let big_top = get("$top=300").await;
    assert_eq!(big_top["value"].as_array().unwrap().len(), 250);
    assert!(big_top.get("@odata.nextLink").is_none());
    let without = get("$count=true").await;
    let next = without["@odata.nextLink"].as_str().unwrap();
    assert!(next.starts_with(fake.base_url()), "{next}");
}

#[tokio::test]
async fn tk_continuations_are_only_those_besluitbron_issued() {
    let (fake, _client) = tk_fake().await;
    let port = fake.local_addr().port();
    let base = fake.base_url().to_owned();
    for link in [
        "http://example.org/OData/v4/2.0/Document?$skip=250".to_owned(),
        format!(
            "http://127.0.0.1:{}/OData/v4/2.0/Document?$skip=250",
            port.wrapping_add(1)
        ),
        format!("{base}/Zaak?$skip=250"),
        format!("{base}/Document?$skip=250"),
        format!("{base}/Document?$filter=true&$top=100000"),
        format!("{base}/Document?$expand=*"),
        "tk1.".to_owned(),
        "tk1.e30".to_owned(),
        "Document?$skip=250".to_owned(),
    ] {
        match Continuation::parse(&link) {
            Err(PlatformError::ForeignLink { platform, .. }) => {
                assert_eq!(platform, besluitbron_server::platforms::tk::PLATFORM)
            }
            other => panic!("{link}: expected ForeignLink, got {other:?}"),
        }
    }
    assert_eq!(fake.requests(), 0);
}

#[tokio::test]
async fn tk_next_page_is_asked_from_the_typed_search_and_skip_only() {
    let (fake, client) = tk_fake().await;
    let first = client.search_documents(&TkSearch::words(["stikstof"])).await.unwrap();
    let next = first.next.expect("a second page");
    let again = Continuation::parse(next.as_str()).expect("an issued token reads back");
    assert_eq!(again, next);
    assert_eq!(again.entity_set(), "Document");
    client.next_documents(&again).await.unwrap();
    let asked = fake.recent_paths().pop().expect("a request");
    let url = reqwest::Url::parse(&format!("http://x{asked}")).unwrap();
    let names: Vec<String> = url.query_pairs().map(|(k, _)| k.into_owned()).collect();
    assert_eq!(names, ["$filter", "$orderby", "$skip"], "{asked}");
    assert!(asked.ends_with("&%24skip=250"), "{asked}");
    assert!(matches!(
        client.next_cases(&again).await,
        Err(PlatformError::ForeignLink { .. })
    ));
}

#[tokio::test]
async fn tk_document_by_guid_with_its_resource_link() {
    let (fake, client) = tk_fake().await;
    let record = &tk_corpus().documents()[3];
    let id = record["Id"].as_str().unwrap();
    let doc = client.document(id).await.unwrap();
    assert_eq!(doc.document.id, id);
    assert_eq!(doc.document.onderwerp.as_deref(), record["Onderwerp"].as_str());
    assert_eq!(
        doc.document.document_nummer.as_deref(),
        record["DocumentNummer"].as_str()
    );
    assert_eq!(
        doc.links.resource_url,
        format!("{}/Document({id})/resource", fake.base_url())
    );
    let file = reqwest::get(&doc.links.resource_url).await.unwrap();
    assert_eq!(file.status(), 200);
    assert_eq!(file.headers()["content-type"], "application/pdf");
    match client.document("00000000-0000-4000-8000-000000000000").await {
        Err(PlatformError::NotFound { .. }) => {}
        other => panic!("expected NotFound, got {other:?}"),
    }
}

#[tokio::test]
async fn tk_reference_lists_follow_every_page() {
    let (fake, client) = tk_fake().await;
    let factions = client.factions().await.unwrap();
    let want: Vec<&str> = tk_corpus()
        .fracties()
        .iter()
        .map(|f| f["NaamNL"].as_str().unwrap())
        .collect();
    let got: Vec<&str> = factions.iter().map(|f| f.naam_nl.as_deref().unwrap()).collect();
    assert_eq!(got, want);
    let before = fake.requests();
    let committees = client.committees().await.unwrap();
    let want: Vec<&str> = tk_corpus()
        .commissies()
        .iter()
        .filter(|c| c["Verwijderd"] == false)
        .map(|c| c["Id"].as_str().unwrap())
        .collect();
    assert!(want.len() > 250);
    assert_eq!(committees.iter().map(|c| c.id.as_str()).collect::<Vec<_>>(), want);
    assert_eq!(fake.requests() - before, 2, "two pages followed");
}

// ---- both platforms: failures ----

/// Runs one cheap call against whichever platform the fake imitates.
async fn call(fake: &FakeHandle, config: &HttpConfig) -> Result<(), PlatformError> {
    if fake.platform() == besluitbron_server::platforms::obv::PLATFORM {
        ObvClient::new(fake.base_url(), config)?.sources().await.map(drop)
    } else {
        TkClient::new(fake.base_url(), config)?.factions().await.map(drop)
    }
}

async fn both_fakes() -> [FakeHandle; 2] {
    [
        fakes::serve_obv(loopback().await, FakeConfig::default()).await.unwrap(),
        fakes::serve_tk(loopback().await, FakeConfig::default()).await.unwrap(),
    ]
}

#[tokio::test]
async fn garbage_from_either_platform_is_a_garbage_error() {
    for fake in both_fakes().await {
        fake.set_garbage(true);
        match call(&fake, &test_http()).await {
            Err(PlatformError::Garbage { platform, detail }) => {
                assert_eq!(platform, fake.platform());
                assert!(detail.contains("text/html"), "{detail}");
            }
            other => panic!("{}: expected Garbage, got {other:?}", fake.platform()),
        }
        assert_eq!(fake.requests(), 1, "garbage is not retried");
    }
}

#[tokio::test]
async fn a_500_is_one_attempt_reported_as_a_retryable_upstream_error() {
    for fake in both_fakes().await {
        fake.set_fail_every(Some(1));
        match call(&fake, &test_http()).await {
            Err(e @ PlatformError::Upstream { .. }) => {
                assert!(
                    matches!(e, PlatformError::Upstream { platform, status: 500, .. } if platform == fake.platform())
                );
                assert!(
                    matches!(e.retry(), besluitbron_server::platforms::http::Retry::Yes { .. }),
                    "the path may try it again"
                );
            }
            other => panic!("{}: expected Upstream, got {other:?}", fake.platform()),
        }
        assert_eq!(
            fake.failures_injected(),
            1,
            "{}: one attempt: the client does not retry",
            fake.platform()
        );
    }
}

#[tokio::test]
async fn a_slow_platform_hits_the_time_out() {
    let config = HttpConfig {
        request_timeout_ms: 150,
        ..test_http()
    };
    for fake in both_fakes().await {
        fake.set_latency(Duration::from_millis(1_500));
        let started = std::time::Instant::now();
        match call(&fake, &config).await {
            Err(PlatformError::Timeout { platform, after_ms }) => {
                assert_eq!((platform, after_ms), (fake.platform(), 150));
            }
            other => panic!("{}: expected Timeout, got {other:?}", fake.platform()),
        }
        assert!(
            started.elapsed() < Duration::from_millis(1_000),
            "gave up at the time-out"
        );
        assert_eq!(fake.requests(), 1, "a time-out is not retried");
    }
}

#[tokio::test]
async fn a_stalled_platform_hits_the_time_out() {
    let config = HttpConfig {
        request_timeout_ms: 150,
        ..test_http()
    };
    for fake in both_fakes().await {
        fake.set_stall(Some(Duration::from_millis(1_500)));
        match call(&fake, &config).await {
            Err(PlatformError::Timeout { platform, after_ms }) => {
                assert_eq!((platform, after_ms), (fake.platform(), 150));
            }
            other => panic!("{}: expected Timeout, got {other:?}", fake.platform()),
        }
        assert_eq!(fake.stalled(), 1, "a time-out is not retried");
    }
}

#[tokio::test]
async fn a_dropped_connection_is_one_attempt_reported_unreachable() {
    for fake in both_fakes().await {
        fake.set_reset_every(Some(1));
        match call(&fake, &test_http()).await {
            Err(PlatformError::Unreachable { platform, detail, .. }) => {
                assert_eq!(platform, fake.platform());
                assert!(detail.contains("connection closed"), "{detail}");
                // Found by the soak: the detail reaches the assistant, and reqwest's text
                // carried the whole request URL, BesluitBron's internal base included.
                let host = fake.base_url().trim_start_matches("http://").split('/').next().unwrap();
                assert!(!detail.contains(host), "the detail echoes the URL: {detail}");
            }
            other => panic!("{}: expected Unreachable, got {other:?}", fake.platform()),
        }
        assert_eq!(
            fake.connections_reset(),
            1,
            "{}: one attempt: the client does not retry",
            fake.platform()
        );
    }
}

#[tokio::test]
async fn a_rate_limit_storm_is_rate_limited_for_the_storm_retry_after() {
    for fake in both_fakes().await {
        fake.set_rate_limit_storm(true);
        match call(&fake, &test_http()).await {
            Err(PlatformError::RateLimited { platform, retry_after }) => {
                assert_eq!((platform, retry_after), (fake.platform(), Duration::from_secs(1)));
            }
            other => panic!("{}: expected RateLimited, got {other:?}", fake.platform()),
        }
        assert_eq!(fake.rate_limited(), 1, "{}: a 429 is not retried", fake.platform());
    }
}

#[tokio::test]
async fn a_refused_connection_is_unreachable() {
    let listener = loopback().await;
    let addr = listener.local_addr().unwrap();
    drop(listener);
    let obv = ObvClient::new(&format!("http://{addr}"), &test_http()).unwrap();
    match obv.status().await {
        Err(PlatformError::Unreachable { platform, .. }) => {
            assert_eq!(platform, besluitbron_server::platforms::obv::PLATFORM)
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
    let tk = TkClient::new(&format!("http://{addr}/OData/v4/2.0"), &test_http()).unwrap();
    match tk.search_documents(&TkSearch::words(["zorg"])).await {
        Err(PlatformError::Unreachable { platform, .. }) => {
            assert_eq!(platform, besluitbron_server::platforms::tk::PLATFORM)
        }
        other => panic!("expected Unreachable, got {other:?}"),
    }
}

#[tokio::test]
async fn a_fake_can_be_taken_down_and_up_at_run_time() {
    let [obv_fake, _] = both_fakes().await;
    call(&obv_fake, &test_http()).await.unwrap();
    obv_fake.set_fail_every(Some(1));
    assert!(matches!(
        call(&obv_fake, &test_http()).await,
        Err(PlatformError::Upstream { .. })
    ));
    obv_fake.set_fail_every(None);
    call(&obv_fake, &test_http()).await.unwrap();
}

#[tokio::test]
async fn serve_all_puts_both_platforms_on_one_listener() {
    let handles = fakes::serve_all_on(loopback().await).await.unwrap();
    let bases: Vec<(PlatformId, &str)> = handles.iter().map(|h| (h.platform(), h.base_url())).collect();
    assert_eq!(bases[0].0, besluitbron_server::platforms::obv::PLATFORM);
    assert!(bases[0].1.ends_with("/obv"));
    assert!(bases[1].1.ends_with("/tk/OData/v4/2.0"));
    let obv = ObvClient::new(bases[0].1, &test_http()).unwrap();
    assert_eq!(obv.sources().await.unwrap().0.len(), 331);
    let tk = TkClient::new(bases[1].1, &test_http()).unwrap();
    let page = tk.search_documents(&TkSearch::words(["stikstof"])).await.unwrap();
    assert!(page.next.unwrap().as_str().starts_with("tk1."));
    assert_eq!(tk.factions().await.unwrap().len(), tk_corpus().fracties().len());
}
