//! The search page in a real headless Chromium (Debian's `chromium` and `chromedriver`,
//! installed by `scripts/browser-deps`), driven over WebDriver with fantoccini: load `/`,
//! search, see results of at least two platforms (one of them filled in by the page's
//! script after it was still searching), open a result, page its text, load `/status`.
//! Screenshots go to `target/browser/`. Every step waits on a condition, never a sleep.

use crate::support;

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use fantoccini::{Client, ClientBuilder, Locator};
use support::{Server, config, fakes, temp_dir};

/// How long any one condition may take.
const WAIT: Duration = Duration::from_secs(30);

pub struct Driver {
    child: std::process::Child,
    url: String,
}

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Driver {
    /// Starts chromedriver on a free loopback port and waits until it answers.
    pub async fn start() -> Driver {
        let port = support::free_port();
        let child = std::process::Command::new("chromedriver")
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("chromedriver runs (scripts/browser-deps installs Debian's chromium-driver)");
        let url = format!("http://127.0.0.1:{port}");
        let status = format!("{url}/status");
        let deadline = tokio::time::Instant::now() + WAIT;
        let http = reqwest::Client::new();
        // Ready when its status says so; each try is a request, not a sleep.
        loop {
            if let Ok(r) = http.get(&status).timeout(Duration::from_secs(2)).send().await
                && let Ok(text) = r.text().await
                && let Ok(v) = serde_json::from_str::<serde_json::Value>(&text)
                && v["value"]["ready"] == true
            {
                break;
            }
            assert!(tokio::time::Instant::now() < deadline, "chromedriver did not start");
            tokio::task::yield_now().await;
        }
        Driver { child, url }
    }

    pub async fn browser(&self) -> Client {
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            serde_json::json!({
                "binary": "/usr/bin/chromium",
                "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                         "--window-size=1280,1600", "--no-proxy-server"]
            }),
        );
        ClientBuilder::new(hyper_util::client::legacy::connect::HttpConnector::new())
            .capabilities(caps)
            .connect(&self.url)
            .await
            .expect("a Chromium session")
    }
}

pub fn shots() -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/browser");
    std::fs::create_dir_all(&dir).expect("screenshot dir");
    dir
}

/// Writes a simulator report to `target/browser/NAME` and opens it in a browser (the
/// driver lives as long as the returned value).
async fn open_report(name: &str, page: String) -> (Driver, Client) {
    let file = shots().join(name);
    std::fs::write(&file, page).expect("write the report");
    let driver = Driver::start().await;
    let c = driver.browser().await;
    let url = format!("file://{}", file.canonicalize().expect("the report's path").display());
    c.goto(&url).await.expect("load the report");
    (driver, c)
}

async fn shot(c: &Client, name: &str) {
    let png = c.screenshot().await.expect("screenshot");
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    std::fs::write(shots().join(name), png).expect("write screenshot");
}

#[tokio::test]
async fn the_search_page_works_in_a_real_browser() {
    let fakes = fakes().await;
    // Officiële Bekendmakingen is slow: the page shows it as still searching and its
    // script fills it in.
    let ob = fakes
        .all
        .get(besluitbron_server::platforms::ob::PLATFORM)
        .expect("ob")
        .clone();
    ob.set_latency(Duration::from_secs(4));
    let dir = temp_dir("browser");
    let server = Server::start(config(&fakes, &dir)).await;
    let driver = Driver::start().await;
    let c = driver.browser().await;

    search_and_see_every_platform(&c, &server).await;
    open_a_result_and_read_on(&c, &server).await;
    status_page_has_its_chart_and_the_laadstatus(&c, &server).await;

    c.close().await.expect("close the browser");
    drop(driver);
    server.stop().await;
}

/// The home page: the search box with its label; a search shows the hits of the
/// platforms, the slow one filled in by the page's script, and is a link.
async fn search_and_see_every_platform(c: &Client, server: &Server) {
    c.goto(&server.url("/")).await.expect("load /");
    let q = c
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("input#q"))
        .await
        .expect("the search box");
    // The box has its label.
    let label = c
        .find(Locator::Css("label[for=q]"))
        .await
        .expect("label")
        .text()
        .await
        .unwrap();
    assert_eq!(label, "Zoekwoorden");
    q.send_keys("stikstof").await.expect("type");
    shot(c, "1-home.png").await;
    c.find(Locator::Css("form.search button[type=submit]"))
        .await
        .expect("the button")
        .click()
        .await
        .expect("search");

    // Results of at least two platforms, as sent.
    for id in ["obv", "tk", "opentk"] {
        c.wait()
            .at_most(WAIT)
            .for_element(Locator::Css(&format!("section#p-{id} ol.hits li h3 a")))
            .await
            .unwrap_or_else(|e| panic!("hits of {id}: {e}"));
    }
    // The slow one was still searching, and the script filled it in.
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css("section#p-ob[aria-busy=false] ol.hits li"))
        .await
        .expect("the slow platform's hits, filled in by the script");
    let url = c.current_url().await.unwrap();
    assert!(url.as_str().contains("q=stikstof"), "a search is a link: {url}");
    shot(c, "2-results.png").await;
}

/// Open results until one has a second page of text, and page it.
async fn open_a_result_and_read_on(c: &Client, server: &Server) {
    let links: Vec<String> = {
        let mut v = Vec::new();
        for a in c.find_all(Locator::Css("section.platform ol.hits h3 a")).await.unwrap() {
            if let Some(h) = a.attr("href").await.unwrap() {
                v.push(h);
            }
        }
        v
    };
    assert!(links.len() >= 6, "{links:?}");
    let mut paged = false;
    for href in &links {
        c.goto(&server.url(href)).await.expect("open a result");
        c.wait()
            .at_most(WAIT)
            .for_element(Locator::Css("main h1"))
            .await
            .expect("the document view");
        let next = c.find_all(Locator::Css("a.next")).await.unwrap();
        let Some(next) = next.into_iter().next() else {
            continue;
        };
        assert!(c.find(Locator::Css("dl.meta")).await.is_ok(), "metadata");
        shot(c, "3-document.png").await;
        next.click().await.expect("read on");
        let range = c
            .wait()
            .at_most(WAIT)
            .for_element(Locator::XPath(
                "//p[@class='range'][starts-with(normalize-space(.), 'Tekens 6000')]",
            ))
            .await
            .expect("the second page of text");
        assert!(range.text().await.unwrap().starts_with("Tekens 6000"));
        shot(c, "4-document-page-2.png").await;
        paged = true;
        break;
    }
    assert!(paged, "some result has a second page of text");
}

/// The status page: its chart of waits and the Laadstatus.
async fn status_page_has_its_chart_and_the_laadstatus(c: &Client, server: &Server) {
    c.goto(&server.url("/status")).await.expect("load /status");
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css("svg.chart"))
        .await
        .expect("a chart of waits");
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css("#laadstatus"))
        .await
        .expect("the Laadstatus");
    shot(c, "5-status.png").await;
}

/// The simulator's report (`besluitbron-sim … --policy both --report FILE.html`) in a
/// real browser: the 106-second case, legacy and fair side by side, rendered from a file
/// with nothing loaded from elsewhere. Screenshot: `target/browser/sim-report.png`.
#[tokio::test]
async fn the_simulators_report_renders_side_by_side_in_a_real_browser() {
    use besluitbron_sim::{PolicyKind, run_canonical};
    let legacy = run_canonical("obv-starvation", PolicyKind::Legacy, None).expect("legacy run");
    let fair = run_canonical("obv-starvation", PolicyKind::Fair, None).expect("fair run");
    let page = besluitbron_sim::html::render_report("obv-starvation", &[&legacy, &fair]);
    let (_driver, c) = open_report("sim-report.html", page).await;
    let legacy_lanes = c
        .wait()
        .at_most(WAIT)
        .for_element(Locator::Css("section#obv svg.lanes.legacy"))
        .await
        .expect("the legacy lanes");
    let fair_lanes = c
        .find(Locator::Css("section#obv svg.lanes.fair"))
        .await
        .expect("the fair lanes");
    let (lx, ly, lw, lh) = legacy_lanes.rectangle().await.expect("legacy's box");
    let (fx, fy, fw, _) = fair_lanes.rectangle().await.expect("fair's box");
    assert!(lw > 300.0 && lh > 20.0, "the legacy chart is drawn: {lw}×{lh}");
    assert!(
        (ly - fy).abs() < 1.0 && fx >= lx + lw,
        "side by side: legacy at {lx},{ly}, fair at {fx},{fy}"
    );
    assert!(fw > 300.0);
    // The session-era case at a glance: a turn past the bound under legacy, none under fair.
    let over = |policy: &'static str| {
        let c = c.clone();
        async move {
            c.find_all(Locator::Css(&format!("svg.lanes.{policy} line.wait.over")))
                .await
                .expect("find")
                .len()
        }
    };
    assert_eq!(over("legacy").await, 1);
    assert_eq!(over("fair").await, 0);
    shot(&c, "sim-report.png").await;
    c.close().await.expect("close the browser");
}

/// The soak's recording (`sim/traces/soak.jsonl`, every platform under faults) replayed
/// as `besluitbron-sim replay sim/traces/soak.jsonl --limit obv=30/60s --policy both
/// --report FILE.html` does: for each limited service, legacy and fair side by side, the
/// waits per policy with the starvation bound drawn in, and the budget over time.
/// Screenshot: `target/browser/sim-report-soak.png`.
#[tokio::test]
async fn the_soaks_recording_replayed_with_a_halved_limit_renders_in_a_real_browser() {
    use besluitbron_sim::scenario::{LimitOverride, load_trace};
    use besluitbron_sim::{PolicyKind, RunOptions, run};
    let mut workload = load_trace(&besluitbron_sim::soak_trace_path()).expect("the soak's recording");
    workload
        .set_limit("obv=30/60s".parse::<LimitOverride>().expect("a limit"))
        .expect("obv is in the recording");
    let replay = |policy| {
        let opts = RunOptions {
            policy,
            seed: 1,
            keep_trace: false,
            progress: false,
        };
        run("soak.jsonl", &workload, opts).unwrap_or_else(|f| panic!("{f}"))
    };
    let (legacy, fair) = (replay(PolicyKind::Legacy), replay(PolicyKind::Fair));
    let page = besluitbron_sim::html::render_report("soak.jsonl", &[&legacy, &fair]);
    let (_driver, c) = open_report("sim-report-soak.html", page).await;
    c.wait()
        .at_most(WAIT)
        .for_element(Locator::Css("section#obv svg.lanes.fair"))
        .await
        .expect("obv's fair lanes");
    // Every limited service of the recording has its section (the budget, whichever
    // platforms spent it), both policies side by side.
    for id in [
        "obv",
        "koop-sru",
        "rechtspraak",
        "koop-zoekservice",
        "koop-publications",
        "koop-repository",
    ] {
        let lanes = |policy: &'static str| {
            let c = c.clone();
            async move {
                c.find(Locator::Css(&format!("section#{id} svg.lanes.{policy}")))
                    .await
                    .unwrap_or_else(|e| panic!("{id}'s {policy} lanes: {e}"))
                    .rectangle()
                    .await
                    .expect("a box")
            }
        };
        let ((lx, ly, lw, lh), (fx, fy, fw, _)) = (lanes("legacy").await, lanes("fair").await);
        assert!(lw > 300.0 && lh > 20.0 && fw > 300.0, "{id}: drawn {lw}×{lh}, {fw}");
        assert!(
            (ly - fy).abs() < 1.0 && fx >= lx + lw,
            "{id} side by side: legacy at {lx},{ly}, fair at {fx},{fy}"
        );
        let budgets = c
            .find_all(Locator::Css(&format!("section#{id} svg.budget-chart polyline.budget")))
            .await
            .expect("find");
        assert_eq!(budgets.len(), 2, "{id}: the budget under each policy");
    }
    // At half obv's limit the legacy model keeps sessions waiting past the bound, turn
    // after turn; the fair queue all but never (its bound holds while the waiting
    // sessions' next calls fit in the budget and no Retry-After runs, which the soak's
    // 429 storms and this limit break for a while: the simulator checks the rest).
    let over = |policy: &'static str| {
        let c = c.clone();
        async move {
            c.find_all(Locator::Css(&format!("section#obv svg.lanes.{policy} line.wait.over")))
                .await
                .expect("find")
                .len()
        }
    };
    let (legacy_over, fair_over) = (over("legacy").await, over("fair").await);
    assert!(
        legacy_over >= 10 * fair_over.max(1),
        "turns past the bound at obv: legacy {legacy_over}, fair {fair_over}"
    );
    c.find(Locator::Css("section#obv line.bound"))
        .await
        .expect("the starvation bound drawn in");
    shot(&c, "sim-report-soak.png").await;
    c.close().await.expect("close the browser");
}
