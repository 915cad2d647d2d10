//! The search page, its document view and the status page over loopback against the
//! fakes: results per platform, a slow and a failing platform, hostile queries and
//! hostile platform data, the document view's paging, the client limits, the status.

use crate::support;

use std::time::Duration;

use besluitbron_core::limits::RateLimit;
use besluitbron_fakes::ObvSettings;
use support::{Server, config, fakes, temp_dir};

async fn get(url: &str) -> (u16, reqwest::header::HeaderMap, String) {
    let r = reqwest::Client::new().get(url).send().await.expect("get");
    let status = r.status().as_u16();
    let headers = r.headers().clone();
    (status, headers, r.text().await.expect("body"))
}

/// The `<section>` of `connector` in a page.
fn section<'a>(page: &'a str, connector: &str) -> &'a str {
    let start = page
        .find(&format!("id=\"p-{connector}\""))
        .unwrap_or_else(|| panic!("no section {connector} in {page}"));
    let rest = &page[start..];
    &rest[..rest.find("</section>").unwrap_or(rest.len())]
}

fn hit_count(section: &str) -> usize {
    section.matches("<li>").count()
}

/// The document links of a section.
fn documents(section: &str) -> Vec<String> {
    section
        .split("href=\"/document/")
        .skip(1)
        .map(|rest| format!("/document/{}", &rest[..rest.find('"').expect("end")]).replace("&amp;", "&"))
        .collect()
}

#[tokio::test]
async fn a_search_shows_each_platform_with_escaped_hostile_data() {
    let fakes = fakes().await;
    fakes.obv.update_own::<ObvSettings>(|s| s.hostile_titles = true);
    let dir = temp_dir("page-search");
    let server = Server::start(config(&fakes, &dir)).await;

    let (status, headers, page) = get(&server.url("/?q=stikstof")).await;
    assert_eq!(status, 200, "{page}");
    let csp = headers["content-security-policy"].to_str().unwrap();
    assert!(
        csp.contains("default-src 'none'") && csp.contains("script-src 'self'"),
        "{csp}"
    );
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!(headers["x-content-type-options"], "nosniff");
    assert!(page.starts_with("<!DOCTYPE html><html lang=\"nl\">"), "{page}");
    for connector in ["obv", "tk", "opentk", "ob"] {
        let s = section(&page, connector);
        assert!(hit_count(s) > 0, "{connector} shows hits: {s}");
    }
    // Hostile titles from the platform are text, and a `javascript:` link is no link.
    let obv = section(&page, "obv");
    assert!(obv.contains("&lt;script&gt;alert("), "{obv}");
    assert!(
        !page.contains("<script>alert") && !page.contains("<img src=x"),
        "{page}"
    );
    assert!(!page.contains("javascript:"), "{page}");
    // Connectors without a keyword search say so.
    assert!(section(&page, "rechtspraak").contains("geen zoekfunctie"), "{page}");
    assert!(section(&page, "ori").contains("uitgezet"), "{page}");
    // The only script is ours, from our own address.
    assert_eq!(page.matches("<script").count(), 1, "{page}");
    assert!(page.contains("<script src=\"/assets/page.js\" defer>"), "{page}");

    // A repeat is answered from the buffer: no platform is asked again.
    let before = fakes.obv.requests();
    let (status, _, again) = get(&server.url("/?q=stikstof")).await;
    assert_eq!(status, 200);
    assert_eq!(fakes.obv.requests(), before, "the repeat came from the buffer");
    assert_eq!(hit_count(section(&again, "obv")), hit_count(obv));

    // The page's weight: HTML and the style sheet under 50 KB (benches/README.md).
    let (_, _, css) = get(&server.url("/assets/page.css")).await;
    assert!(page.len() + css.len() < 50_000, "{} + {} bytes", page.len(), css.len());

    // English labels.
    let (_, _, en) = get(&server.url("/?q=stikstof&lang=en")).await;
    assert!(en.contains("lang=\"en\"") && en.contains("Search words") && en.contains("no keyword search"));
    server.stop().await;
}

#[tokio::test]
async fn a_slow_platform_is_still_searching_and_a_failing_one_says_why() {
    let fakes = fakes().await;
    let ob = fakes
        .all
        .get(besluitbron_server::platforms::ob::PLATFORM)
        .expect("ob")
        .clone();
    ob.set_latency(Duration::from_secs(4));
    fakes.tk.set_fail_every(Some(1));
    let dir = temp_dir("page-slow");
    let server = Server::start(config(&fakes, &dir)).await;

    let started = std::time::Instant::now();
    let (status, _, page) = get(&server.url("/?q=stikstof")).await;
    assert_eq!(status, 200);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the slow platform did not hold the page"
    );
    let slow = section(&page, "ob");
    assert!(
        slow.contains("aria-busy=\"true\"") && slow.contains("Nog bezig"),
        "{slow}"
    );
    assert!(hit_count(section(&page, "obv")) > 0, "the others are shown");
    let failed = section(&page, "tk");
    assert!(
        failed.contains("class=\"error\"") && failed.contains("Tweede Kamer"),
        "{failed}"
    );
    assert!(
        !failed.contains("127.0.0.1"),
        "no internal address in the reason: {failed}"
    );

    // The slow group's own address answers once the platform has.
    let at = slow.find("data-group=\"").expect("group link") + "data-group=\"".len();
    let link = slow[at..][..slow[at..].find('"').unwrap()].replace("&amp;", "&");
    let (status, _, group) = get(&server.url(&link)).await;
    assert_eq!(status, 200, "{group}");
    assert!(
        hit_count(&group) > 0 && group.contains("aria-busy=\"false\""),
        "{group}"
    );
    server.stop().await;
}

#[tokio::test]
async fn hostile_queries_are_refused_or_escaped() {
    let fakes = fakes().await;
    let dir = temp_dir("page-hostile");
    let server = Server::start(config(&fakes, &dir)).await;
    let (status, _, page) = get(&server.url("/?q=%22%3E%3Cscript%3Ealert(1)%3C/script%3E")).await;
    assert_eq!(status, 200);
    assert!(!page.contains("<script>alert"), "{page}");
    assert!(
        page.contains("value=\"&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;\""),
        "{page}"
    );

    let long = "a".repeat(201);
    let (status, _, page) = get(&server.url(&format!("/?q={long}"))).await;
    assert_eq!(status, 400);
    assert!(page.contains("200 tekens") && !page.contains(&long), "{page}");
    let (status, _, _) = get(&server.url(&format!("/?q={}", "b".repeat(3000)))).await;
    assert_eq!(status, 414);
    let (status, _, _) = get(&server.url("/?q=x&from=gisteren")).await;
    assert_eq!(status, 400);
    let post = reqwest::Client::new().post(server.url("/?q=x")).send().await.unwrap();
    assert_eq!(post.status().as_u16(), 405, "no state-changing methods");
    // A next-page token BesluitBron did not issue is said, not followed.
    let (status, _, page) = get(&server.url("/?q=stikstof&n_obv=..%2F..%2Fetc")).await;
    assert_eq!(status, 200);
    assert!(section(&page, "obv").contains("not made by BesluitBron"), "{page}");
    let (status, _, _) = get(&server.url("/document/obv/..")).await;
    assert_ne!(status, 200);
    let (status, _, _) = get(&server.url("/document/nope/x")).await;
    assert_eq!(status, 404);
    server.stop().await;
}

#[tokio::test]
async fn a_result_opens_a_paged_document_view() {
    let fakes = fakes().await;
    let dir = temp_dir("page-document");
    let server = Server::start(config(&fakes, &dir)).await;
    let (_, _, page) = get(&server.url("/?q=stikstof")).await;
    for connector in ["obv", "ob", "tk", "opentk"] {
        // Some documents have no text BesluitBron can give (a scanned PDF): that is said
        // (and is no success); at least one of each platform's hits opens.
        let mut opened = 0;
        for link in documents(section(&page, connector)) {
            let (status, _, doc) = get(&server.url(&link)).await;
            if status != 200 {
                assert!(doc.contains("class=\"error\""), "{connector} {link}: {doc}");
                continue;
            }
            assert!(
                doc.contains("<dl class=\"meta\">") && doc.contains("<div class=\"text\">"),
                "{doc}"
            );
            assert!(
                doc.contains("origineel"),
                "{connector}: the link to the original: {doc}"
            );
            opened += 1;
            break;
        }
        assert_eq!(opened, 1, "{connector}: a document opens");
    }
    // Paging: OpenBesluitvorming's documents are long enough for a second page.
    let mut paged = false;
    for connector in ["obv", "ob", "tk", "opentk"] {
        for link in documents(section(&page, connector)) {
            let (_, _, doc) = get(&server.url(&link)).await;
            let Some(at) = doc.find("class=\"next\" href=\"") else {
                continue;
            };
            let rest = &doc[at + "class=\"next\" href=\"".len()..];
            let next = rest[..rest.find('"').unwrap()].replace("&amp;", "&");
            assert!(next.contains("offset=6000"), "{next}");
            let (status, _, second) = get(&server.url(&next)).await;
            assert_eq!(status, 200);
            assert!(second.contains("Tekens 6000–"), "{second}");
            paged = true;
            break;
        }
    }
    assert!(paged, "some document of the search has a second page of text");
    server.stop().await;
}

#[tokio::test]
async fn the_status_page_shows_each_platform_and_the_laadstatus() {
    let fakes = fakes().await;
    let dir = temp_dir("page-status");
    let server = Server::start(config(&fakes, &dir)).await;
    let _ = get(&server.url("/?q=stikstof")).await;
    let _ = get(&server.url("/?q=stikstof")).await;
    let (status, _, json) = get(&server.url("/status.json")).await;
    assert_eq!(status, 200, "{json}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let obv = v["platforms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["id"] == "obv")
        .expect("obv")
        .clone();
    assert_eq!(obv["limited"], true, "{obv}");
    assert_eq!(obv["reachable"], true, "{obv}");
    assert!(
        obv["latency_median_ms"].is_u64() && obv["latency_p95_ms"].is_u64(),
        "{obv}"
    );
    assert!(
        obv["hit_rate"].as_f64().unwrap() > 0.0,
        "the repeat was a buffer hit: {obv}"
    );
    assert!(
        obv["limit_units"].as_f64().unwrap() > 0.0 && obv["bucket_units"].is_f64(),
        "{obv}"
    );
    assert!(obv["last_success_ms"].is_u64(), "{obv}");
    let sources = v["obv_sources"]["Ok"].as_array().expect("the Laadstatus");
    assert!(!sources.is_empty());
    assert!(
        v["opentk_harvesters"]["Ok"].as_array().is_some_and(|h| !h.is_empty()),
        "{v}"
    );

    let (status, headers, page) = get(&server.url("/status")).await;
    assert_eq!(status, 200);
    assert!(headers.contains_key("content-security-policy"));
    assert!(
        page.contains("<svg class=\"chart\"") && page.contains("Laadstatus"),
        "{page}"
    );
    let state = sources[0]["state"].as_str().unwrap();
    let (_, _, filtered) = get(&server.url(&format!("/status?state={state}"))).await;
    let all = page.matches("<tr>").count();
    assert!(filtered.matches("<tr>").count() <= all, "the filter narrows");
    server.stop().await;
}

#[tokio::test]
async fn the_client_limits_per_address_apply_to_the_page() {
    let fakes = fakes().await;
    let dir = temp_dir("page-limits");
    let mut c = config(&fakes, &dir);
    c.mcp_rate_limit.per_address = RateLimit {
        requests_per_minute: 6,
        burst: 3,
    };
    let server = Server::start(c).await;
    let mut codes = Vec::new();
    for _ in 0..5 {
        let (status, headers, _) = get(&server.url("/status")).await;
        if status == 429 {
            assert!(headers.contains_key("retry-after"));
        }
        codes.push(status);
    }
    assert_eq!(&codes[..3], &[200, 200, 200], "{codes:?}");
    assert_eq!(codes[4], 429, "{codes:?}");
    // Our assets are not counted.
    let (status, headers, css) = get(&server.url("/assets/page.css")).await;
    assert_eq!(status, 200);
    assert!(headers["content-type"].to_str().unwrap().starts_with("text/css") && css.len() > 100);
    server.stop().await;
}

/// A flood of page searches from many addresses while an MCP session searches the same
/// platform: the page asks as the one system session (weight 1, R-L7), so the MCP
/// session's wait stays within the starvation bound `W + c × W / C` (R-L4), it goes ahead
/// of the flood's queue after the flood had the whole burst, and the platform never
/// answers 429.
#[tokio::test]
async fn a_flood_of_page_searches_does_not_starve_an_mcp_session() {
    use besluitbron_server::config::LimitSetting;
    let fakes = fakes().await;
    let dir = temp_dir("page-fair");
    let mut c = config(&fakes, &dir);
    c.trusted_proxies = vec!["127.0.0.1".parse().unwrap()];
    // A small window keeps the bound short: 10 units per 10 s (the fake allows 60 a minute
    // with a burst of 60, so BesluitBron's bucket is the tighter one).
    let (capacity, window) = (10u32, 10.0f64);
    c.services.get_mut("obv").expect("obv").limit = Some(LimitSetting {
        capacity: besluitbron_core::Units::whole(u64::from(capacity)),
        window_secs: window,
        margin_secs: 1.0,
    });
    // The burst BesluitBron allows itself: the bucket less its travel margin
    // (`C - C × MarginSecs / W`, here 9 units), at the same rate.
    let burst = c
        .scheduler(besluitbron_server::platforms::obv::SERVICE)
        .expect("obv keeps a limit")
        .limit
        .capacity;
    let server = Server::start(c).await;

    // 40 searches from 20 addresses, each a query of its own (no buffer hit).
    let http = reqwest::Client::new();
    let mut flood = Vec::new();
    for i in 0..40u32 {
        let url = server.url(&format!("/?q=stikstof+flood{i}"));
        let request = http
            .get(url)
            .header("x-forwarded-for", format!("127.0.0.{}", 10 + i % 20));
        flood.push(tokio::spawn(async move {
            request.send().await.map(|r| r.status().as_u16())
        }));
    }
    // Wait until the flood has emptied the bucket and queues at the platform.
    let handle = server
        .state
        .platforms()
        .get(besluitbron_server::platforms::obv::PLATFORM)
        .expect("obv task")
        .clone();
    let flooded = first_queued_lane(&handle).await;
    // A call queues only when the bucket has no room (R-L2): the flood has had the burst.
    assert!(
        flooded.admitted_units >= burst,
        "the flood queued before it used the whole bucket: {flooded:?}"
    );

    let mut mcp = support::Mcp::initialize(server.url("/mcp/obv")).await;
    let started = std::time::Instant::now();
    let reply = mcp
        .call("obv_search", serde_json::json!({"query": "woningbouw", "limit": 10}))
        .await;
    let waited = started.elapsed();
    assert_eq!(reply.status, 200, "{}", reply.text);
    assert!(!support::structured(&reply)["results"].is_null(), "{}", reply.text);
    // The bound for a head call of cost 1, plus a second for HTTP and the margin.
    let bound = Duration::from_secs_f64(window + window / f64::from(capacity) + 1.0);
    assert!(
        waited <= bound,
        "the MCP session waited {waited:?}, more than {bound:?}"
    );

    // The session went ahead of the flood's queue; it did not wait for the flood to drain.
    let after = handle.snapshot(false).await.expect("snapshot").lanes[0].clone();
    assert!(after.queued > 0, "the flood was still queued: {after:?}");

    for f in flood {
        let status = f.await.expect("flood task").expect("page answered");
        assert!(status == 200 || status == 429, "{status}");
    }
    // An admitted call reaches the fake a moment later: wait until every call admitted by
    // the end of the session's call has arrived (R-L8: each one was counted).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while fakes.obv.requests() < after.admitted_calls {
        assert!(
            tokio::time::Instant::now() < deadline,
            "{} calls admitted, {} reached the platform",
            after.admitted_calls,
            fakes.obv.requests()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // The whole burst went to the flood, and the session's search came on top.
    let burst_calls = burst.as_milli() / besluitbron_core::Units::ONE.as_milli();
    assert!(
        fakes.obv.requests() > burst_calls,
        "the platform saw {} searches, not the flood's burst of {burst_calls} and the session's",
        fakes.obv.requests()
    );
    assert_eq!(fakes.obv.rate_limited(), 0, "the platform never answered 429");
    server.stop().await;
}

/// The platform's lane as first seen with a call queued (within 20 s).
async fn first_queued_lane(
    handle: &besluitbron_server::driver::PlatformHandle,
) -> besluitbron_server::driver::LaneSnapshot {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let snap = handle.snapshot(false).await.expect("snapshot");
        if snap.lanes[0].queued > 0 {
            return snap.lanes[0].clone();
        }
        assert!(tokio::time::Instant::now() < deadline, "the flood never queued");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Hostile platform data — a `<script>` and an attribute
/// break-out (`"><img onerror=…>`) in titles, a document's text, the load status's source
/// names and error messages — is text on `/`, `/document/…` and `/status`, under the
/// strict CSP; `/status.json` carries it as JSON strings.
#[tokio::test]
async fn regression_issue_31_hostile_platform_data_is_escaped_on_every_page() {
    let fakes = fakes().await;
    fakes.obv.update_own::<ObvSettings>(|s| s.hostile_titles = true);
    let dir = temp_dir("page-hostile");
    let server = Server::start(config(&fakes, &dir)).await;
    let escaped = |what: &str, page: &str| {
        assert!(
            !page.contains("<script>alert") && !page.contains("<img src=x") && !page.contains("\"><img"),
            "{what}: markup from the platform is text: {page}"
        );
        assert!(page.contains("&lt;script&gt;alert("), "{what}: shown escaped: {page}");
        assert_eq!(page.matches("<script").count(), 1, "{what}: only our script: {page}");
    };
    let strict = |what: &str, headers: &reqwest::header::HeaderMap| {
        let csp = headers["content-security-policy"].to_str().unwrap();
        assert!(
            csp.contains("default-src 'none'") && csp.contains("script-src 'self'") && !csp.contains("unsafe-inline"),
            "{what}: {csp}"
        );
    };

    let (status, headers, page) = get(&server.url("/?q=stikstof")).await;
    assert_eq!(status, 200, "{page}");
    strict("/", &headers);
    escaped("/", &page);

    let link = documents(section(&page, "obv"))
        .into_iter()
        .next()
        .expect("an obv result");
    let (status, headers, doc) = get(&server.url(&link)).await;
    assert_eq!(status, 200, "{link}: {doc}");
    strict(&link, &headers);
    escaped(&link, &doc);

    let (status, headers, page) = get(&server.url("/status")).await;
    assert_eq!(status, 200, "{page}");
    strict("/status", &headers);
    escaped("/status", &page);

    let (status, headers, json) = get(&server.url("/status.json")).await;
    assert_eq!(status, 200, "{json}");
    assert!(
        headers["content-type"]
            .to_str()
            .unwrap()
            .starts_with("application/json"),
        "{headers:?}"
    );
    let v: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let label = v["obv_sources"]["Ok"][0]["label"].as_str().unwrap_or("");
    assert!(
        label.contains("<script>"),
        "the label as the platform gave it, in a JSON string: {v}"
    );
    server.stop().await;
}
