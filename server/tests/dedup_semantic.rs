//! Semantic deduplication (R-D5). Level 1: requests the platform answers
//! identically share one canonical form — the buffer, coalescing and replay key — and
//! requests it may answer differently never do.
//!
//! Each rule is held against the fake that behaves as the platform: for generated
//! variants (case, punctuation, whitespace, word order, repeated words) whose canonical
//! forms are equal, the fake answers every variant byte-identically; and through the
//! server, two variants asked in different sessions reach the fake once, while a phrase,
//! another offset or another organisation reaches it again.
//!
//! Level 2: a near-duplicate (stop words, plurals, diacritics, a typo) in the same
//! session reaches the platform again and is counted; in another session it is not one.

use crate::support;

use besluitbron_core::dedup::Fold;
use besluitbron_fakes::ob::{ObPublication, parse_cql};
use besluitbron_fakes::{ObvSettings, ob_corpus};
use besluitbron_server::platforms::ob::{ObSearch, Term, cql};
use serde_json::json;
use support::{Mcp, Server, config, fakes, structured, temp_dir};

/// A small seeded generator (xorshift64*): each case is reproducible from its seed.
struct Pick(u64);

impl Pick {
    fn seeded(seed: u64) -> Pick {
        Pick(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
    /// `n` different items of `from`.
    fn some<T: Clone>(&mut self, from: &[T], n: usize) -> Vec<T> {
        let mut all = from.to_vec();
        self.shuffle(&mut all);
        all.truncate(n);
        all
    }
}

/// Words the fake's OpenBesluitvorming data holds, and some it does not.
const OBV_WORDS: [&str; 10] = [
    "stikstof",
    "begroting",
    "woningbouw",
    "fietspad",
    "jeugdzorg",
    "natuurherstel",
    "kernen",
    "voorjaarsnota",
    "raad",
    "nergenswoord",
];

/// A variant of `words` the platform reads alike: words shuffled, one repeated, case
/// changed, punctuation and whitespace around them.
fn obv_variant(words: &[&str], rng: &mut Pick) -> String {
    let mut w: Vec<String> = words.iter().map(|s| (*s).to_owned()).collect();
    if rng.chance(50) {
        let again = w[rng.below(w.len())].clone();
        w.push(again);
    }
    rng.shuffle(&mut w);
    let parts: Vec<String> = w
        .into_iter()
        .map(|word| {
            let cased: String = word
                .chars()
                .map(|c| if rng.chance(30) { c.to_ascii_uppercase() } else { c })
                .collect();
            let before = [" ", "", "(", "  "][rng.below(4)];
            let after = ["", ",", "!", ":", " ;"][rng.below(5)];
            format!("{before}{cased}{after}")
        })
        .collect();
    parts.join(["  ", " ", "\t", " - "][rng.below(4)])
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn obv_variants_that_fold_alike_get_the_same_answer_from_the_fake() {
    let f = fakes().await;
    f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 100_000);
    let http = reqwest::Client::new();
    let search = |query: String, sort: &'static str| {
        let http = http.clone();
        let url = format!("{}/api/search", f.obv.base_url());
        async move {
            let r = http
                .get(url)
                .query(&[("query", query.as_str()), ("sort", sort), ("limit", "24")])
                .send()
                .await
                .expect("the fake answers");
            assert_eq!(r.status(), 200, "{query}");
            r.bytes().await.expect("a body")
        }
    };
    for case in 0..40 {
        let mut rng = Pick::seeded(case);
        let n = 1 + rng.below(3);
        let words: Vec<&str> = rng.some(&OBV_WORDS, n);
        let asked = words.join(" ");
        let canonical = Fold::AndWordsCaseless.apply(&asked);
        for sort in ["date_desc", "date_asc", "title_asc"] {
            let want = search(canonical.clone(), sort).await;
            for _ in 0..3 {
                let variant = obv_variant(&words, &mut rng);
                assert_eq!(
                    Fold::AndWordsCaseless.apply(&variant),
                    canonical,
                    "case {case}: `{variant}` folds to `{asked}`'s form"
                );
                assert_eq!(
                    search(variant.clone(), sort).await,
                    want,
                    "case {case}, {sort}: the fake answers `{variant}` as `{canonical}`"
                );
            }
        }
    }
}

/// The fake's Officiële Bekendmakingen answer to `search`, as the fake orders it.
fn ob_answer(search: &ObSearch) -> Vec<&'static ObPublication> {
    let query = parse_cql(&search.cql().expect("cql")).expect("the fake reads the CQL");
    let mut hits: Vec<&ObPublication> = ob_corpus().publications.iter().filter(|p| query.matches(p)).collect();
    if !query.sort.is_empty() {
        hits.sort_by(|a, b| b.available.cmp(&a.available));
    }
    hits
}

#[test]
fn ob_terms_in_any_order_or_repeated_get_the_same_answer_from_the_fake() {
    let vocabulary: Vec<Term> = [
        "subsidie",
        "omgevingsvisie",
        "verordening",
        "gemeente",
        "parkeren",
        "nergens",
    ]
    .into_iter()
    .map(|w| Term::Word(w.to_owned()))
    .chain(["sluitingsdatum subsidie", "omgevingsvisie 2040"].map(|p| Term::Phrase(p.to_owned())))
    .collect();
    for case in 0..200 {
        let mut rng = Pick::seeded(case);
        let n = 1 + rng.below(3);
        let mut terms: Vec<Term> = rng.some(&vocabulary, n);
        if rng.chance(50) {
            let again = terms[0].clone();
            terms.push(again);
        }
        rng.shuffle(&mut terms);
        let asked = ObSearch {
            terms: terms.clone(),
            ..ObSearch::default()
        };
        let folded = ObSearch {
            terms: cql::and_set(terms.clone()),
            ..ObSearch::default()
        };
        let mut reordered = terms.clone();
        reordered.reverse();
        assert_eq!(cql::and_set(reordered), folded.terms, "case {case}: one canonical form");
        let (a, b) = (ob_answer(&asked), ob_answer(&folded));
        assert_eq!(
            a.iter().map(|p| &p.identifier).collect::<Vec<_>>(),
            b.iter().map(|p| &p.identifier).collect::<Vec<_>>(),
            "case {case}: {terms:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn variants_of_one_search_in_two_sessions_reach_the_platform_once() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("dedup-level1"))).await;
    let mut a = Mcp::initialize(server.url("/mcp/obv")).await;
    let mut b = Mcp::initialize(server.url("/mcp/obv")).await;
    let before = f.obv.requests();
    let first = structured(
        &a.call("obv_search", json!({"query": "Begroting  Utrecht", "limit": 5}))
            .await,
    );
    assert_eq!(f.obv.requests(), before + 1);
    let second = structured(
        &b.call("obv_search", json!({"query": "utrecht, begroting", "limit": 5}))
            .await,
    );
    assert_eq!(f.obv.requests(), before + 1, "the variant came from the buffer");
    assert_eq!(first["results"], second["results"]);
    assert_eq!(
        second["searched"]["query"], "begroting utrecht",
        "the form sent and kept"
    );
    // What the platform may answer differently is asked again: a phrase, another page,
    // another organisation, a repeated word by relevance. (The source list, which
    // resolves `organization`, is read first.)
    structured(&b.call("obv_sources", json!({})).await);
    for (n, arguments) in [
        json!({"query": "\"begroting utrecht\"", "limit": 5}),
        json!({"query": "Begroting Utrecht", "limit": 5, "offset": 5}),
        json!({"query": "Begroting Utrecht", "limit": 5, "organization": "gemeente-soest"}),
        json!({"query": "begroting utrecht", "limit": 5, "sort": "relevance"}),
        json!({"query": "begroting begroting utrecht", "limit": 5, "sort": "relevance"}),
    ]
    .into_iter()
    .enumerate()
    {
        let asked = f.obv.requests();
        let r = b.call("obv_search", arguments.clone()).await;
        assert!(r.message.is_some(), "{arguments}");
        assert_eq!(f.obv.requests(), asked + 1, "{n}: {arguments} is another question");
    }
    // Officiële Bekendmakingen: the same terms in another order, newest first.
    let ob = f.all.get(besluitbron_server::platforms::ob::PLATFORM).expect("ob fake");
    let mut c = Mcp::initialize(server.url("/mcp/ob")).await;
    let asked = ob.requests();
    let x = structured(&c.call("ob_search", json!({"query": "subsidie verordening"})).await);
    let mut d = Mcp::initialize(server.url("/mcp/ob")).await;
    let y = structured(
        &d.call("ob_search", json!({"query": "verordening subsidie subsidie"}))
            .await,
    );
    assert_eq!(ob.requests(), asked + 1, "one platform request for both orders");
    assert_eq!(x["results"], y["results"]);
    server.stop().await;
}

/// Regression: an answer shared through a canonical form was rendered once and served to
/// the next asker in the first asker's words ("for the words `subsidie*`" to a client
/// that asked `subsidie?`, advice to change a `date_field` it never gave). Each asker
/// reads what it asked, the first time from the buffer and again from the kept render.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_issue_46_a_shared_answer_is_described_in_each_askers_own_words() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("dedup-words"))).await;
    let ob = f.all.get(besluitbron_server::platforms::ob::PLATFORM).expect("ob fake");
    let mut a = Mcp::initialize(server.url("/mcp/ob")).await;
    let mut b = Mcp::initialize(server.url("/mcp/ob")).await;
    let asked = ob.requests();
    // `*` and `?` are masks the search drops: one canonical search, two wordings.
    for round in ["fetched or first hit", "the kept render"] {
        for (mcp, query) in [(&mut a, "subsidie*"), (&mut b, "subsidie?")] {
            let reply = mcp.call("ob_search", json!({"query": query})).await;
            let words = format!("the words `{query}`");
            assert_eq!(structured(&reply)["searched"], json!(words), "{round}");
            let text = text(&reply);
            assert!(text.contains(&format!(" publications for {words}")), "{round}: {text}");
        }
    }
    assert_eq!(ob.requests(), asked + 1, "one platform request for both wordings");
    // Nothing found: the advice names the arguments this asker gave, not the first's
    // (`date_field` without dates changes no search).
    let asked = ob.requests();
    let given = text(
        &a.call("ob_search", json!({"query": "xyzzyq", "date_field": "document"}))
            .await,
    );
    assert!(given.contains("`date_field` `published`"), "{given}");
    let not_given = text(&b.call("ob_search", json!({"query": "xyzzyq"})).await);
    assert_eq!(ob.requests(), asked + 1, "one platform request for both");
    assert!(not_given.contains("from BesluitBron's buffer"), "{not_given}");
    assert!(!not_given.contains("date_field"), "{not_given}");
    server.stop().await;
}

/// The text of a successful tool call.
fn text(r: &support::Reply) -> String {
    structured(r);
    r.message.as_ref().expect("a message")["result"]["content"][0]["text"]
        .as_str()
        .expect("a text")
        .to_owned()
}

/// A variant answered from the buffer is counted `canonical`; an exact repeat, and an entry
/// the buffer kept across a restart (whose forms this process never saw), `cache_hit`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn regression_an_entry_kept_across_a_restart_is_no_canonical_duplicate() {
    let f = fakes().await;
    let dir = temp_dir("dedup-kinds");
    let series =
        |kind: &str| format!("besluitbron_requests_total{{platform=\"obv\",tool=\"obv_search\",kind=\"{kind}\"}} ");
    let server = Server::start(config(&f, &dir)).await;
    let mut a = Mcp::initialize(server.url("/mcp/obv")).await;
    for query in ["Begroting  Utrecht", "Begroting  Utrecht", "utrecht begroting"] {
        structured(&a.call("obv_search", json!({"query": query, "limit": 5})).await);
    }
    assert_eq!(metric(&server, &series("fresh")).await, 1.0);
    assert_eq!(metric(&server, &series("cache_hit")).await, 1.0, "the exact repeat");
    assert_eq!(metric(&server, &series("canonical")).await, 1.0, "the variant");
    server.stop().await;
    // The soak found every first hit of a kept entry counted as canonical after its kill.
    let server = Server::start(config(&f, &dir)).await;
    let asked = f.obv.requests();
    let mut b = Mcp::initialize(server.url("/mcp/obv")).await;
    structured(
        &b.call("obv_search", json!({"query": "Begroting  Utrecht", "limit": 5}))
            .await,
    );
    assert_eq!(f.obv.requests(), asked, "kept across the restart");
    assert_eq!(metric(&server, &series("cache_hit")).await, 1.0);
    assert_eq!(
        metric(&server, &series("canonical")).await,
        0.0,
        "nothing known to credit folding with"
    );
    server.stop().await;
}

/// Identifiers the platforms read in any case are one request in any case: an ECLI, an
/// OpenTK document number, a Kamer GUID, a BWB id, a CVDR id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identifier_in_another_case_is_the_same_request() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("dedup-ids"))).await;
    let mut mcp = Mcp::initialize(server.url("/mcp")).await;
    for (platform, tool, upper, lower) in [
        (
            besluitbron_server::platforms::rechtspraak::PLATFORM,
            "rechtspraak_ruling",
            "ECLI:NL:PHR:2026:400",
            "ecli:nl:phr:2026:400",
        ),
        (
            besluitbron_server::platforms::opentk::PLATFORM,
            "opentk_document",
            "2026D10005",
            "2026d10005",
        ),
        (
            besluitbron_server::platforms::cvdr::PLATFORM,
            "cvdr_read",
            "CVDR700001_2",
            "cvdr700001_2",
        ),
    ] {
        let fake = f.all.get(platform).expect("fake");
        let first = structured(&mcp.call(tool, json!({"id": upper})).await);
        let asked = fake.requests();
        let second = structured(&mcp.call(tool, json!({"id": lower})).await);
        assert_eq!(fake.requests(), asked, "{tool}: `{lower}` is `{upper}`");
        assert_eq!(first["id"], second["id"]);
    }
    server.stop().await;
}

/// The value of the metric series `series` (name and labels) in `/metrics`, 0 if absent.
async fn metric(server: &Server, series: &str) -> f64 {
    let text = reqwest::get(server.url("/metrics"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(series))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_near_duplicate_in_one_session_is_asked_again_and_counted() {
    let f = fakes().await;
    let server = Server::start(config(&f, &temp_dir("dedup-near"))).await;
    let near = "besluitbron_near_duplicates_total{platform=\"obv\",tool=\"obv_search\"} ";
    let mut a = Mcp::initialize(server.url("/mcp/obv")).await;
    let before = f.obv.requests();
    structured(
        &a.call("obv_search", json!({"query": "begroting utrecht", "limit": 3}))
            .await,
    );
    structured(
        &a.call("obv_search", json!({"query": "de begrotingen van Utrecht", "limit": 3}))
            .await,
    );
    assert_eq!(
        f.obv.requests(),
        before + 2,
        "a near-duplicate is asked, never answered from the other"
    );
    assert_eq!(metric(&server, near).await, 1.0);
    // Another session asking the same is not a near-duplicate of the first one's.
    let mut b = Mcp::initialize(server.url("/mcp/obv")).await;
    structured(
        &b.call(
            "obv_search",
            json!({"query": "begrotingen utrecht provincie", "limit": 3}),
        )
        .await,
    );
    assert_eq!(metric(&server, near).await, 1.0, "sessions are apart");
    // A typo of a long word in the same session is one too; another subject is not.
    structured(
        &a.call("obv_search", json!({"query": "klimaatadaptatie", "limit": 3}))
            .await,
    );
    structured(
        &a.call("obv_search", json!({"query": "klimaatadaptatei", "limit": 3}))
            .await,
    );
    structured(&a.call("obv_search", json!({"query": "woningbouw", "limit": 3})).await);
    assert_eq!(metric(&server, near).await, 2.0);
    server.stop().await;
}

/// The metric series `series` of `router`'s `/metrics`, 0 if absent.
async fn get_in(router: &axum::Router, path: &str) -> String {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let request = axum::http::Request::get(path)
        .header("host", "127.0.0.1")
        .body(axum::body::Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap()
}

async fn metric_in(router: &axum::Router, series: &str) -> f64 {
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let request = axum::http::Request::get("/metrics")
        .header("host", "127.0.0.1")
        .body(axum::body::Body::empty())
        .unwrap();
    let response = router.clone().oneshot(request).await.unwrap();
    let text = String::from_utf8(response.into_body().collect().await.unwrap().to_bytes().to_vec()).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(series))
        .map_or(0.0, |n| n.trim().parse::<f64>().unwrap())
}

/// One `obv_search` with this `Idempotency-Key` straight into `router`.
async fn keyed_search(router: &axum::Router, id: usize, key: &str, query: &str) {
    use tower::ServiceExt;
    let request = support::stateless_call(
        "/mcp/obv",
        id,
        "obv_search",
        json!({"query": query, "limit": 3}),
        &[("idempotency-key", key)],
    );
    let response = router.clone().oneshot(request).await.expect("the router answers");
    assert!(response.status().is_success(), "{}", response.status());
}

/// A client whose repeats come within seconds is a retry loop; one whose repeats come
/// at one fixed interval after the first is a time-out below the platform's latency:
/// each spike is named by its cause on `/metrics`. Virtual time.
#[tokio::test(start_paused = true)]
async fn a_retry_loop_and_a_short_time_out_are_each_recognised() {
    for (cause, gap, resends) in [
        ("retry_loop", std::time::Duration::from_millis(300), 2),
        ("short_timeout", std::time::Duration::from_secs(10), 1),
    ] {
        let f = fakes().await;
        f.obv.update_own::<ObvSettings>(|s| s.rate_limit_per_min = 100_000);
        let mut cfg = config(&f, &temp_dir(&format!("spike-{cause}")));
        cfg.request_timeout_secs = 3_600;
        for p in cfg.platforms.values_mut() {
            p.timeout_ms = 600_000;
        }
        let app = besluitbron_server::app::App::build(cfg).expect("build app");
        let router = app.router.clone();
        let series = format!("besluitbron_duplicate_spikes_total{{cause=\"{cause}\"}} ");
        let searches = 12;
        if cause == "retry_loop" {
            // Each request, then the same again twice, 0.3 s apart.
            for i in 0..searches {
                for _ in 0..=resends {
                    keyed_search(&router, i, &format!("loop-{i}"), &format!("stikstof {i}")).await;
                    tokio::time::sleep(gap).await;
                }
            }
        } else {
            // Every request, then all of them again 10 s after each was first sent.
            for i in 0..searches {
                keyed_search(&router, i, &format!("late-{i}"), &format!("stikstof {i}")).await;
            }
            tokio::time::sleep(gap).await;
            for i in 0..searches {
                keyed_search(&router, i, &format!("late-{i}"), &format!("stikstof {i}")).await;
            }
        }
        assert_eq!(metric_in(&router, &series).await, 1.0, "{cause}");
        // /status says it too: by cause, and the last one (never the client's address).
        let status: serde_json::Value = serde_json::from_str(&get_in(&router, "/status.json").await).unwrap();
        let spikes = &status["duplicate_spikes"];
        assert_eq!(spikes["by_cause"][cause], 1, "{spikes}");
        assert_eq!(spikes["last"]["cause"], cause, "{spikes}");
        assert!(spikes["last"]["duplicates"].as_u64().unwrap() > 0, "{spikes}");
        assert!(!spikes.to_string().contains("127.0.0.1"), "no address: {spikes}");
        let page = get_in(&router, "/status?lang=en").await;
        let words = if cause == "retry_loop" {
            "a retry loop"
        } else {
            "a time-out shorter than the wait"
        };
        assert!(
            page.contains("Duplicate-rate spikes") && page.contains(words),
            "the status page names it"
        );
        for other in ["retry_loop", "short_timeout", "unknown"]
            .iter()
            .filter(|c| **c != cause)
        {
            let series = format!("besluitbron_duplicate_spikes_total{{cause=\"{other}\"}} ");
            assert_eq!(metric_in(&router, &series).await, 0.0, "{cause}: not {other}");
        }
    }
}
